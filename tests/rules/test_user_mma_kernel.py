"""A program's own GEMM named for the Tensor Cores: whether it used them is unknown, so neither Tensor Core rule may
count it as a fallback (issue #37, survey h37-survey12; h37-left13).

Seen in Promisewjx/cuda-gemm's ``report_nsys.sqlite`` (an A100, read locally, no licence: not kept): its WMMA kernel
``gemm_tensorcore(const __half *, ...)`` multiplied 4096 x 4096 fp16 matrices in 0.46 ms -- 299 TFLOP/s, four times
the A100's 78 TFLOP/s CUDA-core fp16 peak, so it ran on Tensor Cores.  An Nsight export holds no shapes, so the
Advisor cannot run that check; the kernel's name matched no library's Tensor Core family, and on main
``misaligned_dims`` said "100% of 16-bit MatMul/Conv time runs on non-Tensor-Core kernels: fp16 dims must be
multiples of 8" (the program's N is 4096) and ``tensor_core_unused`` counted it with the fp32 GEMMs.  The export
here is ``synthetic.nsysexport.write_user_mma_gemms``'s, so every kernel's time is known by construction."""

from __future__ import annotations

import pytest

from synthetic.nsysexport import write_user_mma_gemms
from tb_gpu_advisor import devices
from tests.support.cli_report import cli_report


def _findings(path) -> dict:
    report = cli_report(path)
    return {f["rule"]: f for f in report["findings"]}


def test_a_user_wmma_gemm_is_no_fp16_fallback_and_not_counted_as_unused(tmp_path):
    p = tmp_path / "gemm.sqlite"
    truth = write_user_mma_gemms(str(p))
    found = _findings(p)
    assert "misaligned_dims" not in found  # nothing shows its dims or its instructions
    tc = found["tensor_core_unused"]  # the fp32 CUDA-core GEMMs still miss the Tensor Cores
    detail = tc["metric"]["detail"]
    assert detail["unused_32bit_ms_per_step"] == pytest.approx(truth["fp32_ms"], rel=0.01)
    assert detail["unused_16bit_ms_per_step"] == 0
    assert f"{truth['fp32_kernels']} kernels)" in tc["summary"]
    assert "Not counted: 1 kernel named for the Tensor Cores (`gemm_tensorcore`)" in tc["summary"]
    assert not any("gemm_tensorcore" in row[0] for row in tc["evidence"][0]["rows"])


def test_a_user_fp16_gemm_not_named_for_tensor_cores_is_still_a_fallback(tmp_path):
    p = tmp_path / "half.sqlite"
    truth = write_user_mma_gemms(str(p), mma_name="gemm_half(const __half *, const __half *, float *, int)")
    found = _findings(p)
    assert found["misaligned_dims"]["metric"]["value"] == 1.0
    assert found["tensor_core_unused"]["metric"]["detail"]["unused_16bit_ms_per_step"] == pytest.approx(
        truth["mma_ms"], rel=0.02)
    assert "Not counted" not in found["tensor_core_unused"]["summary"]


@pytest.mark.parametrize("name, unknown", [
    ("gemm_tensorcore(const __half *, const __half *, float *, int)", True),
    ("wmma_gemm_kernel(half const*, half const*, float*)", True),
    ("mma_sync_matmul<128>(...)", True),
    ("my_tensor_core_matmul", True),
    ("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", False),  # a library family: known to use them
    ("cutlass_80_tensorop_s16816gemm_f16_256x128_32x3_nn_align8", False),
    ("gemma_rms_norm_kernel", False),  # "mma" inside a word is no claim
    ("gemm_naive(const float *, const float *, float *, int)", False),
])
def test_a_name_claiming_tensor_cores_outside_the_libraries_is_unknown(name, unknown):
    assert devices.matrix_unit_unknown_one(name) is unknown
