"""Issue #37 item 5: the capacity a user records beside a memory snapshot, as the Advisor's own fix says
(``pytorch.RECORD_CAPACITY``: ``torch.cuda.mem_get_info()`` in ``<snapshot name>.capacity.json``), is read with it.

Wrong assumption corrected (h37-capfile33): a snapshot's capacity can only come from the snapshot.  On main nothing
read the file, so following the advice changed nothing: the real Windows CS336 snapshot kept "capacity is unknown" and
its fix, and no memory_near_capacity finding.  The file is the user's: hostile ones are left out with a note, never
an error, and never read through a link out of the logdir; discovery never takes it for a profile.
"""

from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.discover.logdir import discover, skipped
from tb_gpu_advisor.formats.snapshot.capacity import MAX_FILE_BYTES
from tb_gpu_advisor.formats.snapshot.layout import capacity_name
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.frameworks.pytorch import RECORD_CAPACITY
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import REPO

WILD = REPO / "tests" / "fixtures" / "snapshots_wild"
GiB = 1 << 30
#: ``torch.cuda.mem_get_info()``'s total on a 16 GB consumer card (an RTX 4080's 17,170,956,288 bytes).
CARD_16GB = 17_170_956_288


def _windows(tmp_path: Path, gz: bool = False) -> Path:
    """The real Windows CS336 training snapshot (SOURCE.md), in a run folder of its own."""
    run = tmp_path / "logs" / "run"
    run.mkdir(parents=True)
    if gz:
        path = run / "memory_snapshot.pickle.gz"
        shutil.copy(WILD / "windows_training_cs336.pickle.gz", path)
    else:
        path = run / "memory_snapshot.pickle"
        path.write_bytes(gzip.decompress((WILD / "windows_training_cs336.pickle.gz").read_bytes()))
    return path


def _report(path: Path):
    rep = analyze_host(HostFile(path.name.split(".")[0], str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def _gpu0(rep) -> dict:
    return rep.gpus[0].memory


@pytest.mark.parametrize("gz", [False, True])
def test_the_real_windows_snapshot_with_its_capacity_beside_it_is_judged_against_the_gpu(tmp_path: Path, gz: bool):
    """Main: capacity None, activation_memory an info that says "capacity is unknown" with the RECORD_CAPACITY fix.
    Here: the 16 GB card's total is the GPU's capacity (source "device memory"), the 13.2 GiB reserved peak is 82.6%
    of it, so the kept activations are a warning (past memory.pressure.warning, 75%) that gives the share in use, and
    the unknown-capacity words and fix are gone (``.pickle`` and ``.pickle.gz`` alike: one name rule)."""
    path = _windows(tmp_path, gz)
    before = _report(path)
    assert _gpu0(before)["capacity_bytes"] is None
    (f,) = [f for f in before.findings if f.rule == "activation_memory" and "#" not in f.id]
    assert f.severity == "info" and "capacity is unknown" in f.summary
    ms.write_capacity(str(path), CARD_16GB, 2 * GiB)
    assert (path.parent / "memory_snapshot.capacity.json").exists()
    rep = _report(path)
    g = _gpu0(rep)
    assert (g["capacity_bytes"], g["capacity_source"]) == (CARD_16GB, "device memory")
    assert g["peak_reserved_bytes"] / CARD_16GB == pytest.approx(0.826, abs=0.001)
    (f,) = [f for f in rep.findings if f.rule == "activation_memory" and "#" not in f.id]
    # the record's 2 GiB free beside the 13.2 GiB reserved at the dump leave 804 MiB in use outside the allocator
    # (h37-capcache34: the CUDA context's and libraries' share, counted in use): 87.5%, not the peak's own 82.6%
    assert g["outside_bytes"] == CARD_16GB - 2 * GiB - g["peak_reserved_bytes"]
    assert f.severity == "warning" and "87.5% of the GPU's 16.0 GiB in use (804 MiB of it outside the allocator)" \
        in f.summary, f.summary
    for f in rep.findings:
        assert "capacity is unknown" not in f.summary, f.summary
        assert all("mem_get_info" not in a.snippet for a in f.actions), f.rule


def test_a_generated_forward_with_its_capacity_says_the_share_of_the_gpu(tmp_path: Path):
    """By construction: the forward-only scenario's finding said "capacity is unknown" with the fix to record it; with
    the file beside it the finding gives the GPU's share in use, from the truth's total."""
    sc = ms.SCENARIOS["forward_autograd"]()
    path = Path(ms.write(str(tmp_path / "fwd.pickle"), sc.doc))
    total = 24 * GiB
    ms.write_capacity(str(path), total, 20 * GiB)
    rep = _report(path)
    assert _gpu0(rep)["capacity_bytes"] == total
    (f,) = [f for f in rep.findings if f.rule == "activation_memory" and "#" not in f.id]
    assert "capacity is unknown" not in f.summary and "of the GPU's 24.0 GiB" in f.summary, f.summary
    assert all("mem_get_info" not in a.snippet for a in f.actions)


def test_a_generated_peak_at_the_recorded_capacity_is_near_capacity(tmp_path: Path):
    """By construction: a capacity file whose total the peak fills to 95% makes memory_near_capacity fire as it does
    for a Kineto trace that records the device's memory (main: no capacity, so never)."""
    sc = ms.SCENARIOS["forward_autograd"]()
    path = Path(ms.write(str(tmp_path / "fwd.pickle"), sc.doc))
    assert "memory_near_capacity" not in {f.rule for f in _report(path).findings}
    peak = int(read_trace(str(path)).memory[0].reserved.max())
    total = int(peak / 0.95)
    ms.write_capacity(str(path), total, ms.free_beside(sc.doc, total, 0))  # nothing outside the allocator
    (f,) = [f for f in _report(path).findings if f.rule == "memory_near_capacity"]
    assert f.metric.value == pytest.approx(0.95, abs=0.005)


def test_the_fix_and_the_reader_name_the_same_file():
    """One name rule: the file the fix's snippet writes for ``snapshot.pickle`` is the one read beside it (main: the
    reader read none)."""
    assert f'open("{capacity_name("snapshot.pickle")}"' in RECORD_CAPACITY.snippet
    assert "total_bytes" in RECORD_CAPACITY.snippet and "free_bytes" in RECORD_CAPACITY.snippet
    assert capacity_name("snapshot.pickle.gz") == capacity_name("snapshot.pkl") == "snapshot.capacity.json"
    assert capacity_name("snapshot.pickle") in RECORD_CAPACITY.text.replace("<snapshot name>", "snapshot")


HOSTILE = {
    "not json": b"{total_bytes: 1",
    "a list": b"[1, 2]",
    "strings": b'{"total_bytes": "17170956288", "free_bytes": "1"}',
    "bools": b'{"total_bytes": true, "free_bytes": false}',
    "floats": b'{"total_bytes": 1.7e10, "free_bytes": 1e9}',
    "negative": b'{"total_bytes": -5, "free_bytes": 0}',
    "huge": b'{"total_bytes": 1' + b"0" * 30 + b', "free_bytes": 0}',
    "nan": b'{"total_bytes": NaN, "free_bytes": 0}',
    "free over total": b'{"total_bytes": 100, "free_bytes": 200}',
    "under the peak": b'{"total_bytes": 1073741824, "free_bytes": 0}',  # 1 GiB under a 13 GiB peak: another GPU's
    "deep": b"[" * 100_000 + b"]" * 100_000,
    "over the size bound": b'{"total_bytes": 17170956288, "free_bytes": 0, "pad": "' + b"x" * MAX_FILE_BYTES + b'"}',
    "not utf-8": b'{"total_bytes": \xff}',
}


@pytest.mark.parametrize("what", sorted(HOSTILE))
def test_a_hostile_capacity_file_is_left_out_with_a_note(tmp_path: Path, what: str):
    """Each is ignored (capacity stays unknown), said in the trace's problems, and the snapshot is still read."""
    path = _windows(tmp_path)
    (path.parent / "memory_snapshot.capacity.json").write_bytes(HOSTILE[what])
    tr = read_trace(str(path))
    assert all(d.info.memory_bytes is None for d in tr.devices)
    assert any("memory_snapshot.capacity.json" in str(p) for p in tr.problems), tr.problems


def test_a_capacity_file_linked_out_of_the_logdir_is_never_read(tmp_path: Path):
    """A symlink named as the capacity file, pointing outside the logdir: not followed (nothing outside the logdir is
    read), said so; the same file copied in is read."""
    path = _windows(tmp_path)
    outside = tmp_path / "outside.json"
    outside.write_text('{"total_bytes": 17170956288, "free_bytes": 0}')
    os.symlink(outside, path.parent / "memory_snapshot.capacity.json")
    (session,) = discover(str(tmp_path / "logs"), follow_symlinks=True)
    tr = read_trace(session.hosts[0].path)
    assert all(d.info.memory_bytes is None for d in tr.devices)
    assert any("memory_snapshot.capacity.json" in str(p) for p in tr.problems), tr.problems
    os.unlink(path.parent / "memory_snapshot.capacity.json")
    shutil.copy(outside, path.parent / "memory_snapshot.capacity.json")
    (session,) = discover(str(tmp_path / "logs"))
    assert read_trace(session.hosts[0].path).devices[0].info.memory_bytes == CARD_16GB


def test_discovery_never_takes_the_capacity_file_for_a_profile(tmp_path: Path):
    """Beside its snapshot: one session (the snapshot's), nothing said left out.  Alone: named for what it is, not
    "JSON without traceEvents: not a trace"."""
    path = _windows(tmp_path)
    ms.write_capacity(str(path), CARD_16GB, 0)
    logs = str(tmp_path / "logs")
    sessions = discover(logs)
    assert [h.path for s in sessions for h in s.hosts] == [str(path)]
    assert skipped(logs) == []
    path.unlink()
    assert discover(logs) == []
    ((rel, why),) = skipped(logs)
    assert rel == "run/memory_snapshot.capacity.json" and "capacity" in why and "not a trace" not in why


# ----------------------------------------------------------------------------- one record per GPU (a list)

def _records(*entries: dict) -> bytes:
    import json

    return json.dumps(list(entries)).encode()


def _gpu_record(device: int, total: int, free: int) -> dict:
    return {"device": device, "total_bytes": total, "free_bytes": free}


@pytest.mark.parametrize("order", ["own first", "own last"])
def test_a_list_of_records_gives_the_snapshots_gpu_its_own(tmp_path: Path, order: str):
    """``[mem_get_info(i) for each GPU]`` written as a list: the real Windows CS336 snapshot (GPU 0) takes its own
    entry's 16 GB whatever the order, never the other GPU's 24 GiB, and its free bytes give what lies outside the
    allocator as a lone record does.  Main: "not a JSON object", capacity unknown."""
    path = _windows(tmp_path)
    own, other = _gpu_record(0, CARD_16GB, 2 * GiB), _gpu_record(1, 24 * GiB, 20 * GiB)
    (path.parent / "memory_snapshot.capacity.json").write_bytes(
        _records(own, other) if order == "own first" else _records(other, own))
    tr = read_trace(str(path))
    assert [d.info.memory_bytes for d in tr.devices] == [CARD_16GB] and not tr.problems, tr.problems
    g = _gpu0(_report(path))
    assert (g["capacity_bytes"], g["capacity_source"]) == (CARD_16GB, "device memory")
    assert g["outside_bytes"] == CARD_16GB - 2 * GiB - g["peak_reserved_bytes"]


LISTS = {
    "an entry of no object": [_gpu_record(0, CARD_16GB, 0), 5],
    "an entry without its device": [_gpu_record(0, CARD_16GB, 0), {"total_bytes": CARD_16GB, "free_bytes": 0}],
    "a GPU twice": [_gpu_record(0, CARD_16GB, 0), _gpu_record(0, 24 * GiB, 0)],
    "a bad number in another GPU's": [_gpu_record(0, CARD_16GB, 0), _gpu_record(1, -1, 0)],
    "empty": [],
}


@pytest.mark.parametrize("what", sorted(LISTS))
def test_a_malformed_list_of_records_is_left_out_with_a_note_naming_its_entry(tmp_path: Path, what: str):
    """One bad entry leaves the whole record out (no capacity taken from a file wrong elsewhere), said in the trace's
    problems with the entry's number; the snapshot is still read."""
    path = _windows(tmp_path)
    (path.parent / "memory_snapshot.capacity.json").write_bytes(_records(*LISTS[what]))
    tr = read_trace(str(path))
    assert all(d.info.memory_bytes is None for d in tr.devices)
    (note,) = [str(p) for p in tr.problems if "memory_snapshot.capacity.json" in str(p)]
    assert ("entry 2 of 2" in note) if LISTS[what] else "nor a list" in note, note


def test_a_list_of_other_gpus_records_is_said_and_left_out(tmp_path: Path):
    """Records of GPUs 2 and 3 beside a snapshot of GPU 0: none is its, and the note says which it holds."""
    path = _windows(tmp_path)
    (path.parent / "memory_snapshot.capacity.json").write_bytes(
        _records(_gpu_record(2, CARD_16GB, 0), _gpu_record(3, CARD_16GB, 0)))
    tr = read_trace(str(path))
    assert all(d.info.memory_bytes is None for d in tr.devices)
    assert "it names GPUs 2, 3, none of which the snapshot holds (it holds GPU 0)" in " ".join(map(str, tr.problems))


def test_a_list_of_other_gpus_records_beside_a_two_gpu_snapshot_names_its_gpus_in_the_plural(tmp_path: Path):
    """By construction (one process's allocators on GPUs 0 and 1, records of GPUs 2 and 3): the note's count word
    fits the ids it lists, for the GPUs the record names and those the snapshot holds alike (h37-review36).  On main:
    "(it holds GPU 0, 1)"."""
    allocs = [ms.Allocator(capacity=CARD_16GB, device=d) for d in (0, 1)]
    for a in allocs:
        a.malloc(64 << 20)
    path = tmp_path / "logs" / "run" / "memory_snapshot.pickle"
    path.parent.mkdir(parents=True)
    ms.write(str(path), ms.snapshot(allocs))
    (path.parent / "memory_snapshot.capacity.json").write_bytes(
        _records(_gpu_record(2, CARD_16GB, 0), _gpu_record(3, CARD_16GB, 0)))
    tr = read_trace(str(path))
    assert "it names GPUs 2, 3, none of which the snapshot holds (it holds GPUs 0, 1)" in " ".join(map(str, tr.problems)), \
        tr.problems
