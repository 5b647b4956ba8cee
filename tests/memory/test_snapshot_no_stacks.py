"""A memory snapshot recorded without stacks (``_record_memory_history(context=None)``) is read for what it holds: its
totals and peak, the kind of job where its allocation pattern shows a backward pass, and a note that says what it
lacks and how to record it (issue #37 class 5, h37-snapforms).

PyTorch writes such a history with no ``frames`` on any trace entry and an empty list on every block
(``torch/csrc/cuda/memory_snapshot.cpp``: an entry without context gets no ``frames`` key, a block ``[]``).  Main read
every allocation as "other": the job "GPU work of an unknown kind -- a memory snapshot records allocations, not the
GPU's work", no note, and the verdict "No memory check fired".  The real trace here is ``snapshots_wild``'s Windows
training snapshot (forward, loss, ``loss.backward()``) with its stacks taken away, as ``context=None`` writes it: its
275 blocks held at the peak are freed in reverse order while the backward makes 1,063 blocks between those frees.
Controls: the same file with its stacks (read as before), a real inference pass without stacks (a few blocks at its
peak: no kind claimed), and generated forms with truth by construction (``synthetic.memsnapshot``)."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.rules.capture_quality import NO_STACKS_METRIC
from tb_gpu_advisor.runtime.pipeline import analyze_host

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "snapshots_wild"


def _without_stacks(doc: dict) -> dict:
    """``doc`` as ``_record_memory_history(context=None)`` writes it: no entry's ``frames``, every block's empty."""
    return ms.as_recorded(doc, context=None)


def _real(name: str) -> dict:
    with gzip.open(WILD / name, "rb") as f:
        return pickle.load(f)


def _report(tmp_path: Path, doc: dict):
    path = Path(ms.write(str(tmp_path / "snap.pickle"), doc))
    rep = analyze_host(HostFile(path.stem, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def _note(rep):
    return [f for f in rep.findings if f.metric is not None and f.metric.id == NO_STACKS_METRIC]


def test_a_real_training_snapshot_without_stacks_is_training_by_its_backward(tmp_path: Path) -> None:
    rep = _report(tmp_path, _without_stacks(_real("windows_training_cs336.pickle.gz")))
    assert rep.job["kind"] == "training" and rep.job["kind_confidence"] == "low"
    assert "reverse order" in rep.job["kind_evidence"] and "without stacks" in rep.job["kind_evidence"]
    note, = _note(rep)
    assert note.severity == "info" and "no stack frame" in note.summary and "(training)" in note.summary
    assert 'context="all"' in note.actions[0].snippet and "_dump_snapshot" in note.actions[0].snippet


def test_a_real_inference_snapshot_without_stacks_is_read_from_its_pattern_alone(tmp_path: Path) -> None:
    """GPT-2 medium's forward under ``inference_mode``: 8 blocks at its peak, freed while the next pass allocates --
    too few to be a backward's walk back; since session 71 its pattern reads forward passes (low: never more than
    13 of its 1,280 blocks held at once, none at the dump), and the note still says the stacks are missing."""
    rep = _report(tmp_path, _without_stacks(_real("forward_no_grad_cs336.pickle.gz")))
    assert rep.job["kind"] == "inference" and rep.job["kind_confidence"] == "low"
    assert "without stacks" in rep.job["kind_evidence"]
    note, = _note(rep)
    assert "its kind (inference) rests on what else the file shows" in note.summary
    assert "its iterations could not be read" in note.summary


@pytest.mark.parametrize("name, kind", [("windows_training_cs336.pickle.gz", "training"),
                                        ("forward_no_grad_cs336.pickle.gz", "inference"),
                                        ("forward_autograd_cs336.pickle.gz", "training")])
def test_the_same_real_snapshots_with_their_stacks_get_no_note(tmp_path: Path, name: str, kind: str) -> None:
    """Control (passes on main too): the files as kept (Python frames, or C++ and Python): their stacks are read,
    their kinds as before, no note."""
    rep = _report(tmp_path, _real(name))
    assert rep.job["kind"] == kind and "without stacks" not in rep.job["kind_evidence"]
    assert not _note(rep)


def test_a_python_only_record_is_not_stackless(tmp_path: Path) -> None:
    """``stacks="python"``: the backward's allocations on autograd's thread hold ``frames: []``, the forward's its
    Python frames -- stacks were recorded; no note, the kind from them as before."""
    sc = ms.windows_training(python_backward=False)
    rep = _report(tmp_path, sc.doc)
    assert not _note(rep) and rep.job["kind"] == "training"


@pytest.mark.parametrize("scenario, kind", [
    (lambda: ms.windows_training(python_backward=False), "training"),  # 24 layers' backward walked back
    # the graph dropped unused (freed with nothing made between), passes under no_grad (a few blocks at a peak): no
    # backward; each pass the same sizes in order, all freed by its end -- forward passes (h37-snap23), not training
    (lambda: ms.forward_only(grad=True), "inference"),
    (lambda: ms.inference_loop(), "inference"),
    (lambda: ms.inference_loop(passes=1), "unknown"),  # one pass: nothing repeats, nothing said
])
def test_generated_forms_without_stacks(tmp_path: Path, scenario, kind: str) -> None:
    """Truth by construction: a backward's pattern makes training, a forward repeated and freed each time inference;
    a forward kept for nothing, or passes under ``no_grad``, are never called training without their stacks."""
    rep = _report(tmp_path, _without_stacks(scenario().doc))
    assert rep.job["kind"] == kind
    assert len(_note(rep)) == 1


def test_a_2_0_dump_without_stacks_gets_2_0s_call(tmp_path: Path) -> None:
    """PyTorch 2.0's layout (no ``time_us``, blocks' ``history``): the fix is 2.0's ``trace_alloc_record_context``."""
    doc = ms.as_version(_without_stacks(ms.training_iterations().doc), "2.0")
    note, = _note(_report(tmp_path, doc))
    assert "trace_alloc_record_context=True" in note.actions[0].snippet
