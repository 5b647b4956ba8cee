"""A snapshot of the allocator's state alone says that the GPU's capacity is unknown too (issue #37 class 5, h37-hunts67b).

A state without history is what an out-of-memory observer dumps (``torch._C._cuda_attach_out_of_memory_observer``
calling ``_snapshot()`` / ``_dump_snapshot`` without ``_record_memory_history``): the real one kept here is a weather
model's on a Berzelius node, A100s (hlinander/equivariant-posteriors ``oom_snapshot_new.pickle``, MIT): 36.6 GiB
allocated and 37.9 GiB reserved when an allocation failed.  The one question such a file can answer is how near the GPU's
capacity its state was, and a snapshot does not record the capacity.  Main's note said what the missing history hides
and offered only the history's fix, so "No check fired on the snapshot's state" read as a state judged fine where no
check could judge it.  Now the note says the capacity is unknown and adds the fix that records it
(``pytorch.RECORD_CAPACITY``); with a capacity record beside the dump it says neither.
"""

from __future__ import annotations

from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES

OOM_STATE = FIXTURES / "wild" / "snapshot_oom_observer_state" / "oom_snapshot_new.pickle.gz"
GiB = 1 << 30


def _note(path: Path):
    rep = analyze_host(HostFile(path.name.split(".")[0], str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    (f,) = [f for f in rep.findings if f.rule == "capture_quality" and f.metric and f.metric.id == "history_events"]
    return rep, f


def _says_capacity_unknown(f) -> bool:
    return "capacity" in f.summary and pytorch.RECORD_CAPACITY in f.actions


def test_the_real_oom_observer_state_says_its_capacity_is_unknown():
    """Truth read by hand: 62 segments on GPU 0, 37.90 GiB reserved, 36.60 GiB allocated (155 live
    blocks, 41 cached free), no ``device_traces`` entry, no frames, no capacity.  Main: the history note alone."""
    rep, f = _note(OOM_STATE)
    g = rep.gpus[0].memory
    assert round(g["peak_reserved_bytes"] / GiB, 1) == 37.9 and round(g["peak_allocated_bytes"] / GiB, 1) == 36.6
    assert g["capacity_bytes"] is None
    assert _says_capacity_unknown(f), (f.summary, [a.text[:60] for a in f.actions])


def test_a_generated_state_says_its_capacity_is_unknown(tmp_path: Path):
    """By construction: a state of weights and Adam's moments, no history, no capacity record."""
    path = Path(ms.write(str(tmp_path / "state.pickle"), ms.state_only({"weights": 8 * GiB, "adam": 16 * GiB}).doc))
    _, f = _note(path)
    assert _says_capacity_unknown(f)


def test_a_state_with_its_capacity_beside_it_does_not(tmp_path: Path):
    """Control: the same state with ``mem_get_info``'s record beside it (the fix's own file): capacity known."""
    path = ms.write(str(tmp_path / "state.pickle"), ms.state_only({"weights": 8 * GiB, "adam": 16 * GiB}).doc)
    ms.write_capacity(path, 80 * GiB, 50 * GiB)
    rep, f = _note(Path(path))
    assert rep.gpus[0].memory["capacity_bytes"] == 80 * GiB
    assert not _says_capacity_unknown(f) and "capacity" not in f.summary
    assert not [f for f in rep.findings if f.rule == "memory_near_capacity"]  # 24 of 80 GiB: far from it


def test_a_state_near_its_recorded_capacity_is_judged_against_it(tmp_path: Path):
    """By construction: 74 GiB of weights and Adam's moments at the dump of an 80 GiB GPU with 4 GiB free (2 GiB in
    use outside the allocator).  Main read no capacity for a GPU without history -- the file the note's own fix
    writes was ignored -- so the state was never judged; now it is near capacity (95%), as an out-of-memory
    observer's dump would be -- as what it holds at the dump, a floor of its peak, not "peaks at"."""
    path = ms.write(str(tmp_path / "state.pickle"), ms.state_only({"weights": 30 * GiB, "adam": 44 * GiB}).doc)
    ms.write_capacity(path, 80 * GiB, 4 * GiB)
    rep, _ = _note(Path(path))
    (near,) = [f for f in rep.findings if f.rule == "memory_near_capacity"]
    assert "holds 74.0 GiB reserved" in near.summary and "95.0%, at the dump; no history recorded" in near.summary
