"""A training snapshot recorded with Python frames only (``stacks="python"``, the only kind on Windows) has its
iterations read as the same history with C++ frames does (issue #37 class 5, h37-snapforms).

The backward runs on autograd's engine thread, which has no Python frame: under ``stacks="python"`` its allocations
hold an empty stack, so no allocation reads "backward".  The iteration finder took that as no training (an inference
history of passes), found none, and the snapshot was one unmarked whole: no step peaks, no activations at the peak,
"held across steps" wrong.  An optimizer that stepped had gradients, so a backward ran: where the history shows the
optimizer and no backward frame, the frameless allocations are the backward's.  Truth by construction
(``synthetic.memsnapshot.training_iterations`` recorded both ways, ``as_recorded``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_report import report as snapshot_report
from tests.support.snapshot_report import step_starts_us


@pytest.mark.parametrize("kw", [{}, {"micro_batches": 2}, {"optimizer_temp": False}, {"iterations": 4}])
def test_python_only_stacks_find_the_iterations_the_full_stacks_find(tmp_path: Path, kw: dict) -> None:
    sc = ms.training_iterations(mib=24, **kw)  # activations not half a weight: no cast copy's size
    rep = snapshot_report(tmp_path, ms.as_recorded(sc.doc, stacks="python"))
    assert rep.job["kind"] == "training"
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", sc.truth["iterations"]), rep.steps
    full = snapshot_report(tmp_path / "full", sc.doc)
    assert step_starts_us(rep, sc.doc) == step_starts_us(full, sc.doc)
    assert rep.gpus[0].memory["step_peaks"] == full.gpus[0].memory["step_peaks"]
    kept = sc.truth["peaks"][len(sc.truth["peaks"]) - len(rep.gpus[0].memory["step_peaks"]):]
    assert [row[1] for row in rep.gpus[0].memory["step_peaks"]] == kept


def test_an_inference_loop_recorded_with_python_frames_keeps_its_passes(tmp_path: Path) -> None:
    """Control (passes on main too): no optimizer, so no frameless allocation is read as a backward; the passes are
    the forward's as before."""
    sc = ms.inference_loop(passes=4)
    rep = snapshot_report(tmp_path, ms.as_recorded(sc.doc, stacks="python"))
    assert rep.job["kind"] == "inference"
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", 4), rep.steps
    assert "forward pass" in rep.steps["note"]
