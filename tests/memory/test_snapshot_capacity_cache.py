"""A report is keyed by every file it reads: a memory snapshot's capacity record beside it is one (issue #37 class 5).

Wrong assumption corrected (h37-capcache34): a report depends only on its host files.  The snapshot reader reads the
capacity file beside the snapshot (``<name>.capacity.json``, ``formats.snapshot.capacity``), so a report made before
the user wrote it knows no capacity; the cache's key was the snapshot's (path, size, mtime) alone, so the tab and the
CLI's default cache served that stale report after the user followed the Advisor's own advice.  Each format now names
the files its reader reads beside a host file (``Layout.beside``), discovery stats them with the listing, and the
cache key, the tab's in-memory key and the "files unchanged" check hold them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.runtime.advisor import Advisor
from tests.support.paths import REPO

GiB = 1 << 30


def _capacity(analysis) -> int | None:
    (host,) = analysis.report.hosts
    return host.gpus[0].memory["capacity_bytes"]


def _logdir(tmp_path: Path) -> tuple[Path, Path]:
    run = tmp_path / "logs" / "run"
    run.mkdir(parents=True)
    path = Path(ms.write(str(run / "fwd.pickle"), ms.SCENARIOS["forward_autograd"]().doc))
    return tmp_path / "logs", path


def _read_again_then_cached(advisor: Advisor, capacity: int) -> None:
    """The next look reads the snapshot again (its key moved) and finds ``capacity``; the look after is the cache's."""
    (s,) = advisor.sessions()
    again = advisor.report(s)
    assert not again.from_cache and _capacity(again) == capacity
    (s,) = advisor.sessions()
    third = advisor.report(s)
    assert third.from_cache and _capacity(third) == capacity


def test_a_capacity_file_written_after_a_first_look_is_read_the_second_time(tmp_path: Path):
    """Main: the second report came from the cache (``from_cache``), capacity None -- the file the Advisor's fix asks
    for was never seen until the snapshot changed.  Here: the key holds the file beside it, so the second look is a
    miss, analysed again, and knows the 24 GiB written; a third look with nothing changed is a hit."""
    logdir, path = _logdir(tmp_path)
    advisor = Advisor(str(logdir), cache=str(tmp_path / "cache"))
    (s,) = advisor.sessions()
    first = advisor.report(s)
    assert first.stored and _capacity(first) is None
    ms.write_capacity(str(path), 24 * GiB, 20 * GiB)
    _read_again_then_cached(advisor, 24 * GiB)


def test_a_capacity_file_rewritten_or_removed_moves_the_key(tmp_path: Path):
    """A record rewritten with another total (another GPU's, a fix of a typo) is read again; removed, the report made
    without one is right again (its own entry)."""
    logdir, path = _logdir(tmp_path)
    advisor = Advisor(str(logdir), cache=str(tmp_path / "cache"))
    beside = ms.write_capacity(str(path), 24 * GiB, 20 * GiB)
    (s,) = advisor.sessions()
    assert _capacity(advisor.report(s)) == 24 * GiB
    ms.write_capacity(str(path), 40 * GiB, 30 * GiB)
    os.utime(beside, ns=(os.stat(beside).st_atime_ns, os.stat(beside).st_mtime_ns + 1_000_000_000))
    (s,) = advisor.sessions()
    again = advisor.report(s)
    assert not again.from_cache and _capacity(again) == 40 * GiB
    os.remove(beside)
    (s,) = advisor.sessions()
    assert _capacity(advisor.report(s)) is None


# ----------------------------------------------------------------------------- every file read beside, every format

ROCPROF = REPO / "tests" / "fixtures" / "wild" / "llamacpp_rocprof_r9700"


def _rocprof_logdir(tmp_path: Path) -> Path:
    """JoursBleu/llama.cpp's real rocprof trace (MIT, PROVENANCE.md) in a run folder, without its sysinfo."""
    run = tmp_path / "logs" / "run"
    run.mkdir(parents=True)
    shutil.copy(ROCPROF / "results.json.gz", run / "results.json.gz")
    return tmp_path / "logs"


def _gpu_name(analysis) -> str:
    (host,) = analysis.report.hosts
    return host.gpus[0].name


def test_rocprofs_sysinfo_written_after_a_first_look_names_the_gpu_the_second_time(tmp_path: Path):
    """The other file a reader reads beside its trace: rocprof's ``results.sysinfo.txt`` (rocminfo, the GPU's name
    as AMD spells it).  Main: the report made before it was there came back from the cache with otherData's squeezed
    name ("AMD Radeon AIPROR9700"); here the second look reads it: "AMD Radeon AI PRO R9700"."""
    logdir = _rocprof_logdir(tmp_path)
    advisor = Advisor(str(logdir), cache=str(tmp_path / "cache"))
    (s,) = advisor.sessions()
    assert _gpu_name(advisor.report(s)) == "AMD Radeon AIPROR9700"
    shutil.copy(ROCPROF / "results.sysinfo.txt", logdir / "run" / "results.sysinfo.txt")
    (s,) = advisor.sessions()
    second = advisor.report(s)
    assert not second.from_cache and _gpu_name(second) == "AMD Radeon AI PRO R9700"


def test_rocprofs_sysinfo_is_never_read_through_a_link_out_of_the_logdir(tmp_path: Path):
    """The reader built the sysinfo's path by slicing the trace's, a plain string: a link named ``results.sysinfo.txt``
    pointing out of the logdir was followed and read (main: the outside file's GPU name in the report).  Here it is
    reached as the trace is (``fsio.sibling``): never through a link out, with or without --follow-symlinks."""
    logdir = _rocprof_logdir(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copy(ROCPROF / "results.sysinfo.txt", outside / "secret.txt")
    os.symlink(outside / "secret.txt", logdir / "run" / "results.sysinfo.txt")
    for follow in (False, True):
        advisor = Advisor(str(logdir), cache="off", follow_symlinks=follow)
        (s,) = advisor.sessions()
        assert _gpu_name(advisor.report(s)) == "AMD Radeon AIPROR9700", follow


def test_the_tabs_in_memory_key_and_the_unchanged_check_hold_the_file_beside(tmp_path: Path):
    """The tab keeps reports in memory by the files' identity (``plugin._report_key``) and refuses to store one whose
    files changed while it was made (``files_unchanged``): main's held the snapshot alone, so a capacity record
    written meanwhile was neither a new key nor a change."""
    from tb_gpu_advisor.common.options import UserOptions
    from tb_gpu_advisor.serve.plugin import _report_key

    logdir, path = _logdir(tmp_path)
    advisor = Advisor(str(logdir), cache="off")
    (before,) = advisor.sessions()
    beside = ms.write_capacity(str(path), 24 * GiB, 20 * GiB)
    assert not Advisor.files_unchanged(before.hosts)
    (after,) = advisor.sessions()
    assert Advisor.files_unchanged(after.hosts)
    keys = {_report_key(s, list(s.hosts), UserOptions()) for s in (before, after)}
    assert len(keys) == 2
    os.utime(beside, ns=(0, os.stat(beside).st_mtime_ns + 1_000_000_000))
    assert not Advisor.files_unchanged(after.hosts)


def test_a_record_rewritten_with_the_same_size_and_mtime_is_read_again(tmp_path: Path):
    """The key holds a side file's size and mtime: a record rewritten with other numbers of the same length whose
    mtime is put back (``touch -r``, a copy that keeps times) was served from the cache with the old numbers (main:
    ``from_cache``, 24 GiB).  Here the entry is bound to the record's content too (``cache.binding``), so it is a miss
    and the new 40 GiB is read; nothing changed, the next look is a hit."""
    logdir, path = _logdir(tmp_path)
    advisor = Advisor(str(logdir), cache=str(tmp_path / "cache"))
    beside = ms.write_capacity(str(path), 24 * GiB, 20 * GiB)
    (s,) = advisor.sessions()
    assert _capacity(advisor.report(s)) == 24 * GiB
    st = os.stat(beside)
    ms.write_capacity(str(path), 40 * GiB, 30 * GiB)  # the same number of digits: the same size
    os.utime(beside, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (os.stat(beside).st_size, os.stat(beside).st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    _read_again_then_cached(advisor, 40 * GiB)


def test_the_tabs_in_memory_key_sees_a_record_rewritten_with_the_same_size_and_mtime(tmp_path: Path):
    """The tab's in-memory key (``plugin._report_key``) held a side file's size and mtime only: a record rewritten
    with other numbers of the same length and its mtime put back kept the key, and the tab served the report of the
    old record until the session's files changed otherwise (main: one key).  Here the key holds the record's content
    digest, as the disk cache's binding does (h37-memkind36): another key; the same record again, the same key."""
    from tb_gpu_advisor.common.options import UserOptions
    from tb_gpu_advisor.serve.plugin import _report_key

    logdir, path = _logdir(tmp_path)
    advisor = Advisor(str(logdir), cache="off")
    beside = ms.write_capacity(str(path), 24 * GiB, 20 * GiB)
    (before,) = advisor.sessions()
    key = _report_key(before, list(before.hosts), UserOptions())
    assert key == _report_key(before, list(before.hosts), UserOptions())
    st = os.stat(beside)
    ms.write_capacity(str(path), 40 * GiB, 30 * GiB)  # the same number of digits: the same size
    os.utime(beside, ns=(st.st_atime_ns, st.st_mtime_ns))
    (after,) = advisor.sessions()
    assert Advisor.files_unchanged(before.hosts)  # size and mtime cannot tell: only the content can
    assert _report_key(after, list(after.hosts), UserOptions()) != key
