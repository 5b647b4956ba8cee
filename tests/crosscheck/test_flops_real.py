"""FLOPs per step and MFU on the real H100 runs whose FLOPs are known analytically (issue #20).

``TRUTH.json`` gives each MLP/GPT run two figures: ``model_flops_per_step`` (3 x forward, the MFU convention) and
``executed_matmul_flops_per_step`` (what the program ran: no input gradient for the first layer, causal attention at
half).  Ours come from the trace alone -- PyTorch ``record_shapes`` or XLA's HLO -- and must land within 10% of
either; MFU must be what its own numbers say (FLOPs / step time / peak), and the peak the GPU's dense one.

Read in place from ``../shared``; skipped where a set is absent.
"""

from __future__ import annotations

import pytest

from tests.support.real_checks import REAL_JAX_SET, REAL_TORCH_SET, load_truth, our_report

REL = 0.10
SETS = [s for s in (REAL_TORCH_SET, REAL_JAX_SET) if (s / "TRUTH.json").is_file()]
if not SETS:
    pytest.skip("real H100 sets not found beside the repo (../shared/profiles)", allow_module_level=True)

CASES = [(s, run) for s in SETS for run, t in sorted(load_truth(s).items()) if t.get("model_flops_per_step")]


def _card(rep: dict, card_id: str) -> dict:
    return next(c for c in rep["headline"] if c["id"] == card_id)


@pytest.fixture(scope="module")
def reports() -> dict:
    return {(s.name, run): our_report(s, run) for s, run in CASES}


@pytest.mark.parametrize("set_dir,run", CASES, ids=[f"{s.name}/{r}" for s, r in CASES])
def test_flops_per_step_match_truth(reports, set_dir, run):
    truth = load_truth(set_dir)[run]
    res = reports[(set_dir.name, run)]
    assert res.report is not None, res.error
    mfu = _card(res.report, "mfu")
    flops = mfu["detail"].get("flops_per_step")
    assert flops, f"{run}: no FLOPs ({mfu['detail'].get('not_available')})"
    near = [abs(flops / truth[k] - 1) for k in ("executed_matmul_flops_per_step", "model_flops_per_step")]
    assert min(near) <= REL, f"{run}: {flops:.4g} FLOP/step vs truth executed {truth['executed_matmul_flops_per_step']:.4g}, " \
                             f"model {truth['model_flops_per_step']:.4g}"


@pytest.mark.parametrize("set_dir,run", CASES, ids=[f"{s.name}/{r}" for s, r in CASES])
def test_mfu_is_what_its_numbers_say(reports, set_dir, run):
    """MFU = FLOPs / (step time x dense peak of the run's GEMM dtype); the H100's dense bf16 peak is ~989 TFLOP/s,
    never the 2:4-sparsity figure, and an fp32 run's peak is fp32's (or TF32's where its kernels say so)."""
    rep = reports[(set_dir.name, run)].report
    d = _card(rep, "mfu")["detail"]
    step_ms = _card(rep, "device_step_share")["detail"]["avg_step_ms"]
    mfu = _card(rep, "mfu")["value"]
    assert mfu == pytest.approx(d["flops_per_step"] / (step_ms / 1e3) / d["peak_flops"], rel=0.01)
    assert 0 < mfu < 1
    dtype = load_truth(set_dir)[run]["dtype"]
    want = {"bfloat16": "bf16", "float16": "fp16", "float32": ("fp32", "tf32")}[dtype]
    assert d["dtype"] in (want if isinstance(want, tuple) else (want,))
    if d["dtype"] in ("bf16", "fp16"):
        assert 900e12 < d["peak_flops"] < 1100e12, d["peak_source"]  # dense, not 1979 (sparsity)
    assert "spars" not in d["peak_source"].lower() or "no sparsity" in d["peak_source"].lower()
