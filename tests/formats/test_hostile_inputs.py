"""The inputs the readers gained in sessions 36-37, hostile or damaged (``synthetic/hostile_inputs.py``): PyTorch's
memory viewer page with a snapshot in it, a snapshot's values, Git LFS pointers, memory timelines.  Each file is
reported by the CLI in a forked child under a time and memory limit, and ends in a clear error or a damaged report
that says why -- never a traceback, a hang or "healthy".

On main (before h37-hostile): an LFS pointer whose ``size`` has 400 digits ended ``report`` with an OverflowError
traceback (exit 1); a snapshot with sizes of 2**63 or 2**100, or times years apart, was "could not be analysed:
Python int too large to convert to C long"; a snapshot whose blocks overlap (2 MiB live in a 1 MiB segment), whose
device is 10**18, whose time is NaN, whose shared blocks add up past any address space, whose history's totals wrap
int64, or whose history (put first) allocates 1 GiB the dump does not hold, was "healthy"; a viewer page cost four
times its size in memory (decoded to text, parsed as JSON).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from synthetic import hostile_inputs as hi
from synthetic import hostile_pickles as hp
from tb_gpu_advisor.formats.snapshot.layout import embedded_snapshot  # before a fork: the child imports nothing

INPUTS = sorted({inp for inp, *_ in hi.KINDS.values()})


@pytest.mark.parametrize("inp", INPUTS)
def test_every_hostile_variant_ends_in_its_clear_outcome(inp: str, tmp_path: Path):
    for name, (kind, file_name, make, outcomes, words) in hi.KINDS.items():
        if kind != inp:
            continue
        (tmp_path / name).mkdir()
        got = hi.run_bounded(make(), str(tmp_path / name / file_name), seconds=20, memory_mb=1024)
        assert got["outcome"] in outcomes, (name, got)
        assert any(w in got["message"] for w in words), (name, got["message"])
        assert got["cpu_seconds"] < 20, (name, got)  # of CPU: the wall is the machine's load


def test_the_corpus_covers_every_new_input():
    assert set(INPUTS) == {"viewer page", "snapshot values", "LFS pointer", "memory timeline", "gzipped snapshot",
                           "nested JSON"}


def _page_stage(data: bytes, path: str) -> str:
    """What the reader does to a page before the unpickler: the pickle it embeds."""
    got = embedded_snapshot(data)
    return f"error: {got}" if isinstance(got, str) else f"report: {len(got)} bytes"


def test_a_viewer_page_costs_its_pickle_in_memory_and_no_more(tmp_path: Path):
    """A 48 MB page (a valid snapshot with a 36 MB string beside it) yields its pickle under 1.5 times the page's
    size of address space (the pickle is 0.75 of it): its base64 is decoded in place.  Main decoded the page to text,
    parsed it as JSON and copied the base64 out twice more (3.75 times the page: this limit was a MemoryError)."""
    data = hi.page(hi.padded_snapshot(36 << 20))
    got = hp.run_bounded(data, str(tmp_path / "snapshot.html"), seconds=60, memory_mb=int(1.5 * len(data)) >> 20,
                         analyse=_page_stage)
    assert got["outcome"] == "report", got
    assert got["message"] == f"report: {len(hi.padded_snapshot(36 << 20))} bytes"


def test_a_snapshot_file_is_read_into_memory_once(tmp_path: Path):
    """An 80 MB snapshot file is read under 1.5 times its size of address space: one read of its own size.  Main read
    it in 64 MB chunks and joined them, holding it twice (this limit was a MemoryError)."""
    from tb_gpu_advisor.formats.snapshot import reader

    path = tmp_path / "big.pickle"
    path.write_bytes(hi.padded_snapshot(80 << 20))
    size = path.stat().st_size

    def read(_data: bytes, name: str) -> str:
        return f"report: {len(reader._read_bytes(name))} bytes"

    got = hp.run_bounded(b"", str(path), seconds=60, memory_mb=int(1.5 * size) >> 20, analyse=read)
    assert got["message"] == f"report: {size} bytes", got


def test_a_page_or_pointer_naming_a_path_never_opens_it(tmp_path: Path, monkeypatch):
    """A real snapshot planted outside the logdir, at the path a page's ``local_files`` and an LFS pointer's ``oid``
    name: the report of the logdir never opens it (both files are errors of their own)."""
    import builtins

    from tb_gpu_advisor.cli.main import main as cli

    outside = tmp_path / "outside" / "snapshot.pickle"
    outside.parent.mkdir()
    outside.write_bytes(hi.small_snapshot())
    logdir = tmp_path / "logdir"
    (logdir / "page").mkdir(parents=True)
    (logdir / "page" / "snapshot.html").write_bytes(hi.page_with(
        f'[{{"name": "{outside}", "url": "file://{outside}"}}]'))
    (logdir / "lfs").mkdir()
    (logdir / "lfs" / "snapshot.pickle").write_bytes(hi.lfs(oid=str(outside), size="10"))
    opened: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def spy_open(file, *a, **k):
        opened.append(os.fspath(file) if not isinstance(file, int) else "")
        return real_open(file, *a, **k)

    def spy_os_open(path, *a, **k):
        opened.append(os.fspath(path))
        return real_os_open(path, *a, **k)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(os, "open", spy_os_open)
    assert cli(["report", str(logdir), "--cache-dir", "off", "--format", "json"]) == 2
    assert any(p.startswith(str(logdir)) for p in opened)  # the spies saw the logdir's files read
    assert not [p for p in opened if p.startswith(str(outside.parent))]


def test_a_real_snapshot_is_inside_every_range():
    """The ranges are an allocator's: a real snapshot (PyTorch 2.x on Windows, GPT training) has no field out of
    them, so no value of a real file is left out."""
    from tb_gpu_advisor.formats.snapshot.reader import read_trace
    from tests.support.paths import FIXTURES

    trace = read_trace(str(FIXTURES / "wild" / "snapshot_windows_gpt" / "memory_snapshot.pickle"))
    assert not [p for p in map(str, trace.problems) if "out of range" in p or "overlap" in p]



def test_a_rank_export_cut_short_is_a_damaged_host_of_its_job(tmp_path: Path):
    """Two ranks' Nsight exports of one job (``report_rank0``, ``report_rank1``, as ``nsys profile -o
    report_rank%q{RANK}`` names them), rank 1's copy cut in half.  Its SQLite header still says how long it is, so it
    is damaged, not foreign: a host of the job that could not be analysed (exit 2) beside rank 0's analysis.  On main
    it was skipped as "an SQLite file that cannot be read" and the job reported as rank 0 alone, exit 0."""
    import json
    import sqlite3
    import subprocess
    import sys

    from synthetic import hostile
    from synthetic.nsysexport import NsysJob, write
    from tb_gpu_advisor.formats import sqlite
    from tests.support.paths import REPO

    run = tmp_path / "logdir" / "job"
    run.mkdir(parents=True)
    write(str(run / "report_rank0.sqlite"), NsysJob(steps=6, ops=4))
    cut = hostile.sqlite_truncated(str(run / "report_rank1.sqlite"))
    with sqlite3.connect(str(run / "report_rank0.sqlite")) as con:
        start_s = con.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()[0] / 1e9
    os.utime(cut, (start_s + 20, start_s + 20))  # written as the capture ended, as a rank's file is
    env = {**os.environ, "TB_GPU_ADVISOR_CACHE_DIR": "off", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "tb_gpu_advisor.cli", "report", str(run.parent), "--format", "json"],
                          capture_output=True, text=True, timeout=240, env=env, check=False)
    assert done.returncode == 2, done.stderr[-2000:]
    hosts = {h["host"]: h for r in json.loads(done.stdout)["reports"] for h in r["hosts"]}
    assert hosts["report_rank1"]["error"] and "damaged" in hosts["report_rank1"]["error"]
    assert [h for name, h in hosts.items() if name != "report_rank1" and h["error"] is None and h["steps"]["count"] > 0]
    want, have = sqlite.cut_short(cut)  # the cause, from the file's own header
    assert have < want and sqlite.cut_short(str(run / "report_rank0.sqlite")) is None


def test_a_snapshots_values_fuzzed_end_in_a_report_or_a_read_error(tmp_path: Path):
    """120 snapshots of ``synthetic/memsnapshot``'s scenarios, each with one to four fields set to extremes, NaN or the
    wrong type, an action renamed, a dict repeated or a field dropped (``hostile_inputs.mutate_values``): each is read
    and analysed to a report (JSON and Markdown) or refused in words -- nothing else escapes.  On main, sizes or
    times past int64 escaped as OverflowError."""
    counts, escaped = hi.fuzz_values(120, 37, str(tmp_path / "fuzzed.pickle"))
    assert not escaped, escaped[:5]
    assert counts.get("refused", 0) + counts.get("report", 0) + counts.get("healthy", 0) == 120
