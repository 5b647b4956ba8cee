"""Launch-bound where the small kernels are the optimizer's own: the optimizer's update is the fix, not bigger kernels.

Survey h37-survey13: ASB1127/HPMLProj's ``Lora/profile_trace.json`` (three versions, A100 and RTX 5090) profile a
LoRA fine-tune's optimizer step only: ``Optimizer.step#CustomAdam.step`` launches 224 element-wise kernels (28
parameters x ``mul_``, ``add_``, ``sqrt``, ``div``, ``addcmul_``, ``addcdiv_``), 2 us each, one launch apiece.  Main
said launch-bound (right) with "make each kernel do more work ... or raise the batch size" first and the fused
optimizer fourth -- but a bigger batch leaves a per-parameter update's kernels as they are.  The files have no
licence, so the test builds the case: the bf16 MLP step, then an optimizer step launching 224 tiny kernels
(truth by construction: every small kernel is the optimizer's); the control launches the same 224 kernels from the
model's ops, after a one-kernel fused optimizer.
"""

from __future__ import annotations

import re
from pathlib import Path

from synthetic import torchtrace as tt
from tests.support.cli_report import first_report

PARAMS, PER_PARAM = 28, 8  # a per-parameter Adam: eight element-wise ops on each parameter
LAUNCH_US = 14.0  # each tiny kernel's launch, as the tiny_ops scenario


def _tiny_updates(r: tt.Rank) -> None:
    for _ in range(PARAMS * PER_PARAM):
        r.kernel("aten::mul_", tt.TANH_F32, 2.0, launch_us=LAUNCH_US)


def _per_parameter_optimizer(r: tt.Rank) -> None:
    tt.forward_backward(r)
    span = PARAMS * PER_PARAM * (LAUNCH_US + 6.0) + 10.0  # the annotation covers every launch below
    r.cpu("Optimizer.step#CustomAdam.step", span, cat="user_annotation", advance=False)
    _tiny_updates(r)
    r.sync()


def _model_side_tiny_ops(r: tt.Rank) -> None:
    tt.forward_backward(r)
    _tiny_updates(r)  # the same kernels, launched by the model's own ops
    tt.optimizer(r)  # a fused optimizer: one kernel
    r.sync()


def _launch_bound(tmp_path: Path, body, run: str) -> dict:  # noqa: ANN001 - a Rank body
    sc = tt.Scenario(1, tt._single(body), ["launch_bound"], [], run)
    (path,) = tt.write_run(str(tmp_path), sc, steps=6, run=run)
    rep = first_report(path)
    return next(f for f in rep["findings"] if f["rule"] == "launch_bound")


def test_the_optimizers_own_small_kernels_put_its_update_first(tmp_path: Path) -> None:
    f = _launch_bound(tmp_path, _per_parameter_optimizer, "per_param")
    # by construction: the optimizer's 224, beside the MLP step's 12 short kernels (4 ReLU, 4 ReLU backward, 4 sums)
    share = re.search(r"([0-9.]+)% of the small kernels are launched inside the optimizer's step", f["summary"])
    assert share is not None and float(share.group(1)) == round(100 * 224 / 236, 1)
    texts = [a["text"] for a in f["actions"]]
    assert texts[0].startswith("Use the fused (or foreach) optimizer")
    assert any("torch._foreach_*" in t for t in texts)
    assert not any("raise the batch size" in t for t in texts)


def test_the_same_kernels_from_the_models_ops_keep_the_models_fixes(tmp_path: Path) -> None:
    f = _launch_bound(tmp_path, _model_side_tiny_ops, "model_side")
    assert "inside the optimizer's step" not in f["summary"]
    assert f["actions"][0]["text"].startswith("Make each kernel do more work")
