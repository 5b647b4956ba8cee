"""A forward run by ``optimizer.step(closure)`` is the forward's, not the optimizer's (issue #37 class 5).

PyTorch Lightning's automatic optimization calls ``optimizer.step(closure)``; the closure runs the training step's
forward and backward inside the optimizer's ``step`` (LBFGS needs it; Lightning does it for every optimizer).  Every
allocation of that forward has ``torch/optim`` frames *outside* its module's frames.  Reading the first
``torch/optim`` frame of a stack as "the optimizer's" booked a real DiT training step's 21.5 GiB of activations, live
at its OOM, as "the optimizer step's state and temporaries" and prescribed an 8-bit optimizer or CPU offload
(tests/fixtures/wild/SURVEY.md, session 30, h37-survey64: Nesta-gitU/discrete_diffusion).  The innermost phase frame
decides: a module's call below the optimizer's frame is the forward's; the optimizer's own state (made in ``step``
with no module call below it) stays the optimizer's.  Truth by construction: ``synthetic.memsnapshot.oom_activations``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host


def _write(tmp_path: Path, closure: bool) -> tuple[Path, ms.Scenario]:
    sc = ms.oom_activations(closure=closure)
    return Path(ms.write(str(tmp_path / f"closure_{closure}.pickle"), sc.doc)), sc


def test_the_closures_forward_is_the_forwards_at_the_oom(tmp_path: Path):
    path, sc = _write(tmp_path, closure=True)
    assert any("/torch/optim/" in f["filename"] for f in sc.truth["failed_frames"])  # the premise: step outside
    (oom,) = read_trace(str(path)).snapshot.ooms
    assert oom.live_by_phase["forward"] == sc.truth["live_activation_bytes"]
    assert oom.live_by_phase["optimizer"] == sc.truth["optimizer_bytes"]


def test_the_oom_finding_prescribes_for_the_activations_not_the_optimizer(tmp_path: Path):
    path, sc = _write(tmp_path, closure=True)
    rep = analyze_host(HostFile("oom", str(path), path.stat().st_size, 0, "snapshot"))
    f = rep.findings[0]
    assert f.rule == "oom_snapshot" and f.metric.detail["cause"] == sc.truth["largest"]
    assert f.saving_bytes == pytest.approx(0.7 * sc.truth["live_activation_bytes"], rel=0.01)
    assert "checkpoint(" in f.actions[0].snippet


@pytest.mark.parametrize("closure", [False, True])
def test_control_the_same_loop_reads_the_same_with_or_without_the_closure(tmp_path: Path, closure: bool):
    """The closure changes where the frames sit, not what the bytes are: both loops read the same phases."""
    path, sc = _write(tmp_path, closure=closure)
    (oom,) = read_trace(str(path)).snapshot.ooms
    assert oom.live_by_phase["forward"] == sc.truth["live_activation_bytes"]
    assert oom.live_by_phase["parameters"] + oom.live_by_phase["optimizer"] == sc.truth["persistent_bytes"]
