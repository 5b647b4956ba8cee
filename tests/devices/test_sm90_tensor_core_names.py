"""Hopper/Blackwell GEMMs whose names carry no MMA tile are still Tensor Core kernels: a CUTLASS 3 (CuTe) kernel
names its schedule near the start (``KernelTmaWarpSpecialized*``, built only around wgmma/tcgen05 mainloops) and its
MMA atom thousands of characters later; DeepGEMM's ``sm90_``/``sm100_`` kernels are wgmma/tcgen05 kernels.

Survey h37-survey15: a vLLM GH200 decode profile (alint77/jupiter-glm52-vllm-worklog) ran vLLM's Machete W4A16 GEMM
(2,496 calls, 31.8 ms) and DeepGEMM's fp8 paged MQA logits (168 calls, 3.2 ms) on rank 0; main read both as 16-bit
GEMMs "not on Tensor Cores" (warnings ``misaligned_dims`` and ``tensor_core_unused``, 17 ms a window each).  The names
below are those kernels' (the Machete one cut after its schedule and epilogue), the controls a DeepGEMM scheduler
kernel and a CUTLASS 2 SIMT GEMM.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor.devices.nvidia import tensor_core_one

MACHETE = ("void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, "
           "machete::MacheteCollectiveMma<cute::tuple<cutlass::vllm_biased_integer_subbyte<4, 8, false>, "
           "cutlass::bfloat16_t>, machete::PrepackedLayoutBTemplate<cutlass::bfloat16_t, "
           "cutlass::vllm_biased_integer_subbyte<4, 8, false>, cutlass::bfloat16_t, float, cutlass::layout::ColumnMajor, "
           "cutlass::gemm::KernelTmaWarpSpecializedCooperative, machete::IlvBlkLayoutAuto>, 32, cutlass::bfloat16_t, "
           "cutlass::layout::ColumnMajor, 8, float, cute::tuple<cute::C<128>, cute::C<16>, cute::C<64> >, "
           "cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cutlass::gemm::collective::StageCountAutoCarveout<6144>, "
           "cutlass::gemm::KernelTmaWarpSpecializedCooperative>, cutlass::epilogue::collective::CollectiveEpilogue<"
           "cutlass::epilogue::Sm90TmaWarpSpecialized<1, 1, 8, false, true>")
DEEP_GEMM = ("void deep_gemm::sm90_fp8_paged_mqa_logits<1u, 32u, 128u, 64u, true, false, 3u, 3u, 256u, 128u, 512u, 1u, "
             "float>(unsigned int, unsigned int, unsigned int, unsigned int const*, float*, unsigned int const*, "
             "unsigned int const*, unsigned int const*, CUtensorMap_st, CUtensorMap_st, CUtensorMap_st, CUtensorMap_st)")


@pytest.mark.parametrize("name", [MACHETE, DEEP_GEMM, DEEP_GEMM.replace("sm90_", "sm100_")])
def test_sm90_and_later_library_gemms_run_on_tensor_cores(name):
    assert tensor_core_one(name)


@pytest.mark.parametrize("name", [
    "void deep_gemm::sched::smxx_paged_mqa_logits_metadata<32u, 256u, 132u, false>(unsigned int, unsigned int, bool)",
    "void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_nn_align1>(cutlass_80_simt_sgemm_64x64_8x5_nn_align1::Params)",
])
def test_their_helpers_and_simt_gemms_do_not(name):
    assert not tensor_core_one(name)
