"""A training loop recorded with Python frames only books its gradients as gradients at the peak, as the job reads
them (h37-snap64; issue #37 class 5: the kind from Python frames where C++ frames are absent).

Why: ``stacks="python"`` -- and every snapshot taken on Windows, where PyTorch unwinds no C++ -- keeps no frame for
an allocation made on autograd's engine thread, so the backward's allocations hold an empty stack.  The job stage reads
them as the backward's where the history shows an optimizer step (``job.iterations.backward_allocations``); the
peak's breakdown booked the same blocks "other", beside a training job: a finding on the gradients (their sharding,
``set_to_none``) had nothing to read.  Truth by construction (``training_iterations``: 4 parameters of 64 MiB, the
first backward's gradients held at the peak, a 512-byte loss of no phase).  The first two tests fail on base (256 MiB
"other"); the last is a control (the loop with its C++ frames reads the same)."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_reports import report, written

GRADIENTS = 4 * 64 * ms.MiB


def _breakdown(tmp_path: Path, doc: dict) -> dict:
    return report(written(tmp_path, ms.Scenario(doc, {}))).gpus[0].memory["breakdown"]


@pytest.mark.parametrize("form", ["python", "windows"])
def test_the_backwards_frameless_blocks_are_gradients(tmp_path: Path, form: str):
    doc = ms.as_recorded(ms.training_iterations().doc, stacks="python")
    bd = _breakdown(tmp_path, ms.as_windows(doc) if form == "windows" else doc)
    assert bd.get("gradients") == GRADIENTS  # base: none, 256 MiB + 512 B "other"
    assert bd.get("other") == 512  # the loss: no phase, as with every frame


def test_control_the_framed_loop_reads_the_same(tmp_path: Path):
    sc = ms.training_iterations()
    bd = _breakdown(tmp_path, sc.doc)
    assert (bd.get("gradients"), bd.get("other"), bd.get("held")) == (GRADIENTS, 512, sc.truth["held"])
