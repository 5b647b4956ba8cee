"""The MFU card points at the FLOPs setting only where a setting could give an MFU: where GPU work was timed
(h37-ui11).

Real exports: ``tests/fixtures/nsys_windows/tracing_off_julia.sqlite`` (a 2.2 s Nsight window with CUDA tracing off: no
kernel; SOURCE.md) and, the control, ``tests/fixtures/wild/mcts_rtx3080_one_pass`` (a one-pass CUDA program whose
kernels give no FLOPs; PROVENANCE.md).  On main the first's card said "no GPU kernels in kept steps" and still asked
for the model's FLOPs ("Set Model FLOPs per step and GPU in Settings" on the tab, ``--model-flops-per-step`` in the
CLI): no FLOPs over no kernel make an MFU."""

from __future__ import annotations

import os
from types import SimpleNamespace

from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import REPO

FIXTURES = os.path.join(REPO, "tests", "fixtures")


def _mfu(path: str) -> dict:
    hosts = [SimpleNamespace(host="h0", path=path, format="nsys", size=os.path.getsize(path))]
    (card,) = [m for m in analyze_session("r", "s", hosts).hosts[0].headline if m.id == "mfu"]
    return card.to_dict() if hasattr(card, "to_dict") else vars(card)


def test_a_window_with_no_gpu_work_is_not_asked_for_the_models_flops():
    card = _mfu(os.path.join(FIXTURES, "nsys_windows", "tracing_off_julia.sqlite"))
    # CUDA tracing off: the card says why no kernel is there (h37-tracingoff3; "no GPU kernels in kept steps" before)
    assert card["display"] == "n/a" and "CUDA tracing was off" in card["meaning"]
    assert "needs_setting" not in card["detail"]


def test_a_capture_whose_kernels_give_no_flops_still_points_at_the_setting():
    card = _mfu(os.path.join(FIXTURES, "wild", "mcts_rtx3080_one_pass", "profile_report.sqlite"))
    assert card["display"] == "n/a"
    assert card["detail"]["needs_setting"] == "model_flops"
