"""A GEMM of fp8 inputs runs on Tensor Cores whatever its library names it (h37-survey35).

Why: PTX's fp8 types (e4m3, e5m2) are operands only of conversions and of the matrix instructions; no CUDA-core
instruction multiplies them, and cuBLASLt refuses misaligned fp8 GEMMs rather than running a slower kernel.  DeepSeek's
published H800 training profile (deepseek-ai/profile-data ``train.json``, no licence: read in place, names only here)
runs its grouped fp8 GEMMs as ``cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel>``: no Tensor
Core family in the name, so they were read as 16-bit GEMMs that "fell back" -- critical ``misaligned_dims`` (28% of
the step) and ``tensor_core_unused`` on the Hopper GEMMs of a tuned training job.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor import devices

FP8_GEMMS = [
    "void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel>"
    "(dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel::Params)",
    "void cutlass::device_kernel<dpsk::grouped_gemm::cuda::m_grouped_fp8_ptp128c::GemmKernel>"
    "(dpsk::grouped_gemm::cuda::m_grouped_fp8_ptp128c::GemmKernel::Params)",
    "void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_dptp128c_acc::GemmKernel>"
    "(dpsk::grouped_gemm::cuda::fp8_dptp128c_acc::GemmKernel::Params)",
]


@pytest.mark.parametrize("name", FP8_GEMMS, ids=lambda n: n.split("::")[4])
def test_an_fp8_gemm_is_on_tensor_cores(name):
    assert devices.gemm_kernel_one(name)
    assert devices.precision_one(name) == devices.P_FP8
    assert devices.tensor_core_one(name)


@pytest.mark.parametrize("name", [
    "cutlass_80_simt_fp8gemm_256x128_8x3_nn_align1",  # says CUDA cores
    "void cutlass::device_kernel<my::GemmKernel<cutlass::bfloat16_t>>(my::GemmKernel::Params)",  # 16-bit: no claim
    "void cuda::per_token_cast_to_fp8_with_channels<__nv_bfloat16, 128>(int4 const*, int4*)",  # fp8, no GEMM
])
def test_control_cuda_core_16_bit_and_non_gemm_names_keep_their_reading(name):
    assert not devices.tensor_core_one(name)
