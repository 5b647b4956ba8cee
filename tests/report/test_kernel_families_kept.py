"""Kernel families h37-kernfam3 left, on the kept captures that run them (issue #37, h37-kernfam4).

* ``wild/vllm_rpd_fp8`` (vLLM V0 on an MI300X, fp8 KV cache): vLLM's ROCm ``paged_attention_ll4mi_QKV_kernel`` runs
  QK^T and PV on MFMA in fp16 (the cache widened first); main read it "other", fp8 (by its KV-cache enum), off the
  Matrix Cores, and so counted its 14 ms as 8-bit work.
* ``wild/xdit_flux_mi300x_denoise`` (xDiT Flux on an MI300X): aiter's Triton SageAttention ``sage_fwd`` (int8 QK^T,
  fp8 PV on ``tl.dot``) is matmul time on the Matrix Cores; main read it "other".
* ``wild/ddp_mi300x_nopool``: ATen's ``batch_norm_transform_input_kernel`` applies given statistics per element:
  element-wise time, not "other".
Each fails on main (``d5132f8e``); the findings of all three are unchanged (SURVEY.md, h37-kernfam4).
"""

from __future__ import annotations

from tests.support.paths import FIXTURES
from tests.support.run_report import run_report

WILD = FIXTURES / "wild"


def _row(host, word: str) -> dict:
    cols = host.kernels.columns
    (row,) = [r for r in host.kernels.rows if word in r[0]]
    return dict(zip(cols, row))


def _class_us(host, cls: str) -> float:
    return sum(c["us_per_step"] for c in host.kernel_classes if c["class"] == cls)


def test_vllm_rocm_attention_is_fp16_matrix_core_work():
    (h,) = run_report(WILD, "vllm_rpd_fp8").hosts[:1]
    row = _row(h, "paged_attention_ll4mi_QKV_kernel")
    assert row["matrix core"] and row["precision"] == "fp16"
    (card,) = [c for c in h.headline if c.id == "sixteen_bit_share"]
    assert card.detail["eight_bit_share"] < 0.78  # the attention's 14 ms is no longer 8-bit time (main: 0.809)


def test_control_its_reduce_kernel_stays_a_reduction_off_the_matrix_cores():
    (h,) = run_report(WILD, "vllm_rpd_fp8").hosts[:1]
    row = _row(h, "paged_attention_ll4mi_reduce_kernel")
    assert not row["matrix core"] and not row["matrix core eligible"]


def test_sage_attention_is_matmul_time_on_the_matrix_cores():
    (h,) = run_report(WILD, "xdit_flux_mi300x_denoise").hosts[:1]
    row = _row(h, "sage_fwd")
    assert row["matrix core"] and row["matrix core eligible"]
    assert not _row(h, "sage_quant_kernel")["matrix core"]  # control: the quantizer multiplies nothing


def test_batch_norm_s_apply_step_is_elementwise_time():
    (h,) = run_report(WILD, "ddp_mi300x_nopool").hosts[:1]
    assert _class_us(h, "elementwise") > 6000  # main: 4073 us a step, the 2.2 ms of transform_input "other"
