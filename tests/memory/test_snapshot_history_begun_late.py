"""A memory snapshot whose history frees blocks it never allocated says its history began late (h37-snap22).

Every block an allocator frees it allocated first, so a history that frees one it never allocated began after that
block was made: either ``_record_memory_history(max_entries=N)``'s ring buffer was full and dropped its oldest
events, or the recording began with the run under way.  Both leave that mark; a full ring buffer also holds exactly
N entries, a number a user types (10,000, 100,000), while a late start ends at any count.  On main neither was said
(without the profiler's annotations, ``capture_quality``'s history-cut warning cannot fire): the kept window's peak
read as the job's.  The reader keeps the count (``MemorySnapshot.begun_late``); the memory section's note says it.

Truth by construction: ``synthetic.memsnapshot.ring_buffer_training`` with ``max_entries=100`` (a full ring of a
round size) and a ``training_iterations`` history whose first entries are left out (a recording begun after them, 73
entries kept).  Real: ``wild/snapshot_compiled_gpt2`` (CS336: ``_record_memory_history`` started after 10 warm-up
steps, around one step that frees the last step's optimizer temporaries: 222 blocks, 1.42 GiB).  Controls: the whole
history (every event kept) and the kept snapshots whose history frees only what it allocated."""

from __future__ import annotations

from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
COMPILED_GPT2 = FIXTURES / "wild" / "snapshot_compiled_gpt2" / "memory_snapshot.pickle"
WHOLE = (FIXTURES / "h200_memory" / "torch_oom_snapshot" / "oom_snapshot.pickle",
         FIXTURES / "wild" / "snapshot_adam_iterations" / "forward_and_backward_memory_snapshot_200.pickle")


def _note(path: str) -> str:
    return host_metrics(read_trace(path)).memory.gpus[0].note


def test_a_full_ring_buffer_of_a_round_size_is_named(tmp_path: Path) -> None:
    sc = ms.ring_buffer_training(iterations=6, max_entries=100)
    assert sc.truth["cut"] and sc.truth["kept"] == 100
    path = ms.write(str(tmp_path / "ring.pickle"), sc.doc)
    blocks, size, entries = read_trace(path).snapshot.begun_late[0]
    assert entries == 100 and blocks >= 1 and size >= 64 << 20
    note = _note(path)
    assert "holds exactly 100 entries" in note and "_record_memory_history(max_entries=100)" in note


def test_a_recording_begun_late_says_both_causes(tmp_path: Path) -> None:
    doc = ms.training_iterations().doc
    doc["device_traces"][0] = doc["device_traces"][0][-73:]
    path = ms.write(str(tmp_path / "late.pickle"), doc)
    assert read_trace(path).snapshot.begun_late[0][2] == 73
    note = _note(path)
    assert "it never allocated" in note and "called with the run under way" in note and "ring buffer" in note
    assert "max_entries=" not in note


def test_a_real_history_begun_after_warm_up_says_so() -> None:
    blocks, size, entries = read_trace(str(COMPILED_GPT2)).snapshot.begun_late[0]
    assert (blocks, entries) == (222, 6486) and abs(size / 2**30 - 1.42) < 0.01
    assert "frees 222 blocks it never allocated (1.42 GiB)" in _note(str(COMPILED_GPT2))


def test_a_whole_history_says_nothing(tmp_path: Path) -> None:
    """The controls (the same on main): every event kept; real histories that free only what they allocated."""
    sc = ms.ring_buffer_training(iterations=6, max_entries=None)
    path = ms.write(str(tmp_path / "whole.pickle"), sc.doc)
    assert not getattr(read_trace(path).snapshot, "begun_late", {}) and _note(path) == ""
    for p in WHOLE:
        assert _note(str(p)) == "", p
