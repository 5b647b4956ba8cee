"""Kernel families main still called "other", on the kept captures whose reports they change (issue #37, h37-kernfam3).

* ``wild/amd_mi300x``: a BERT step on an MI300X whose attention is the ROCm flash-attention Triton backend's
  ``attn_fwd`` -- ``tl.dot`` tiles of QK^T and PV, GEMM work -- was an "other" kernel, outside the matmul/conv class;
  its name gives no dtype, so whether it ran on the Matrix Cores is unknown (never counted as a miss).
* ``wild/vllm_mi300x_prefill``: gpt-oss's MoE GEMMs from the ``triton_kernels`` package
  (``_matmul_ogs_NNT_bf16xbf16xmxfp4_...``: bf16 activations, mxfp4 weights widened to bf16 before ``tl.dot``) were
  "other" and off the Matrix Cores.
* ``wild/cold_mi300x_norm``: ATen's layer-norm and batch-norm kernels (``vectorized_layer_norm_kernel``,
  ``batch_norm_collect_statistics_kernel``) and MIOpen's batch norm reduce rows or channels to their statistics:
  "other" on main.
* ``wild/vllm_b200_tp8``: vLLM's ``fused_add_rms_norm_kernel`` was element-wise by the ``_add_`` in its name.

Controls: the element-wise kernels ATen wraps around a norm's apply step (``GroupNormBackwardKernelImplInternal`` inside
``elementwise_kernel_manual_unroll``) stay element-wise; the MI300X captures' library GEMMs keep their Matrix Core
reading; no finding of these reports changes.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor import devices, frameworks
from tests.support.paths import FIXTURES
from tests.support.run_report import run_report

WILD = FIXTURES / "wild"


def _host(run):
    (h,) = run_report(WILD, run).hosts
    return h


def _rows(h) -> list[dict]:
    cols = h.kernels.columns
    return [dict(zip(cols, r)) for r in h.kernels.rows]


def _units(row: dict):
    return row.get("tensor core", row.get("matrix core"))


def _eligible(row: dict) -> bool:
    return bool(row.get("TC eligible", row.get("matrix core eligible")))


def _class(row: dict) -> str:
    """A kernel row's class as the report's ``kernel_classes`` reads it."""
    name = row["kernel"]
    return devices.kernel_class(name, tensor_core=bool(_units(row)), tc_eligible=_eligible(row),
                                elementwise=frameworks.elementwise_one(name), collective=False,
                                kind=frameworks.kernel_kind_one(name))


def _class_us(h, cls: str) -> float:
    return next((c["us_per_step"] for c in h.kernel_classes if c["class"] == cls), 0.0)


def test_a_triton_attention_pass_is_matmul_work_of_unknown_matrix_unit_use():
    h = _host("amd_mi300x")
    attn = [r for r in _rows(h) if r["kernel"] == "attn_fwd"]
    assert attn and all(_eligible(r) for r in attn)  # main: not eligible, class "other"
    assert all(_units(r) is None for r in attn)  # unknown: neither on nor off the Matrix Cores (main: False)
    assert {_class(r) for r in attn} == {"matmul/conv"}
    # the matmul/conv class is its eligible kernels' time, the attention's included (main: 174 us of a 288 us
    # matmul/conv step, the attention in "other")
    eligible_us = sum(r["total us"] for r in _rows(h) if _eligible(r)) / h.steps["count"]
    assert _class_us(h, "matmul/conv") == pytest.approx(eligible_us, rel=1e-3)
    assert sum(r["total us"] for r in attn) / h.steps["count"] > 0.3 * eligible_us
    # never a Tensor Core miss: no finding cites it as a kernel off the matrix units
    assert not any(f.rule in ("tensor_core_unused", "misaligned_dims") for f in h.findings)


def test_triton_moe_gemms_of_a_16_bit_dtype_run_on_the_matrix_units():
    h = _host("vllm_mi300x_prefill")
    moe = [r for r in _rows(h) if r["kernel"].startswith("_matmul_ogs_")]
    assert moe and all(_units(r) is True and _eligible(r) and r["precision"] == "bf16" for r in moe)  # main: False
    assert {_class(r) for r in moe} == {"matmul/conv"}  # main: "other"


def test_normalization_kernels_are_reductions():
    h = _host("cold_mi300x_norm")
    rows = _rows(h)
    norms = [r for r in rows if devices.short_kernel_name(r["kernel"]).split("<")[0].rsplit("::", 1)[-1] in (
        "vectorized_layer_norm_kernel", "batch_norm_collect_statistics_kernel", "layer_norm_grad_input_kernel",
        "batch_norm_backward_kernel")]
    assert len({r["kernel"] for r in norms}) >= 4
    assert {_class(r) for r in norms} == {"reduction"}  # main: "other"
    # control: ATen's element-wise wrappers around a norm's apply step stay element-wise
    applies = [r for r in rows if "GroupNorm" in r["kernel"] and "elementwise_kernel" in r["kernel"]]
    assert applies and {_class(r) for r in applies} == {"elementwise"}


def test_a_fused_add_rms_norm_is_no_element_wise_kernel():
    h = _host("vllm_b200_tp8")
    fused = [r for r in _rows(h) if "fused_add_rms_norm_kernel" in r["kernel"]]
    assert fused and {_class(r) for r in fused} == {"reduction"}  # main: "elementwise" by its "_add_"
    assert not any(frameworks.elementwise_one(r["kernel"]) for r in fused)
