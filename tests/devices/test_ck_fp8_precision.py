"""Composable Kernel names its GEMMs' element types as template arguments, inputs first and the accumulator after:
aiter's fp8 block-scale GEMM on an MI355X (amdpilot-org/aiter ``results.json``, MIT; kept as
``tests/fixtures/wild/rocprof_aiter_mi355x``, survey h37-rocprof2) is
``kernel_gemm_xdl_cshuffle_v3_multi_d_blockscale_b_preshuffle<...ck::f8_fnuz_t, ck::f8_fnuz_t, float, float, ...>``.
Main read the C++ ``float`` (the accumulator) and called it an fp32 GEMM, so "mixed precision is off" told an fp8
job to move to bf16.  Controls: names whose only type is ``float`` stay fp32; the generic dtype words and Tensile's
letters are unchanged."""

from __future__ import annotations

import gzip
import json

import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.devices.codes import P_BF16, P_FP8, P_FP16, P_FP32
from tests.support.paths import REPO

AITER = REPO / "tests" / "fixtures" / "wild" / "rocprof_aiter_mi355x" / "results.json.gz"


def _real_names() -> list[str]:
    events = json.loads(gzip.decompress(AITER.read_bytes()))["traceEvents"]
    return sorted({e["args"]["KernelName"] for e in events if e.get("ph") == "X"})


def test_the_real_ck_fp8_gemm_is_fp8_not_its_float_accumulator():
    gemm = [n for n in _real_names() if "kernel_gemm_xdl" in n]
    assert len(gemm) == 1 and ", float, float," in gemm[0]  # the accumulator types are in the name
    assert devices.precision_one(gemm[0]) == P_FP8
    assert devices.gemm_kernel_one(gemm[0])


@pytest.mark.parametrize("name, code", [
    # ATen's fp32 kernels of the same capture: ``float`` is their only type
    ("void at::native::vectorized_elementwise_kernel<4, at::native::BUnaryFunctor<float, float, float, "
     "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, at::native::BUnaryFunctor<float, "
     "float, float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul>) [clone .kd]", P_FP32),
    # a CK GEMM of fp32 inputs names no CK element type
    ("void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<ck::tensor_layout::gemm::RowMajor, "
     "ck::tensor_layout::gemm::ColumnMajor, ck::tensor_layout::gemm::RowMajor, float, float, float, float>, true>", P_FP32),
    ("void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<ck::tensor_layout::gemm::RowMajor, "
     "ck::tensor_layout::gemm::ColumnMajor, ck::tensor_layout::gemm::RowMajor, ck::half_t, ck::half_t, float, "
     "ck::half_t>, true>", P_FP16),
    ("Cijk_Ailk_Bljk_BBS_BH_MT128x128x32_MI32x32x8x1_SN", P_BF16),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::float8_copy_kernel_cuda(at::TensorIteratorBase&)"
     "::{lambda(c10::Float8_e4m3fn)#1}, std::array<char*, 2ul> >", P_FP8),
])
def test_controls_keep_their_precision(name: str, code: int):
    assert devices.precision_one(name) == code
