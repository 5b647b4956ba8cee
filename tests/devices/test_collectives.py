"""Every communication library's kernels are collectives (issue #26 deliverable 3): the names as each library writes
them, from its sources and the public traces (``tests/fixtures/wild``)."""

from __future__ import annotations

import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.devices import collectives

CASES = [
    ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "NCCL / RCCL", "AllReduce"),
    ("ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)", "NCCL / RCCL", "AllGather"),
    ("ncclDevKernel_Generic", "NCCL / RCCL", None),  # typed by its host op
    ("void vllm::cross_device_reduce_1stage<__hip_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, "
     "__hip_bfloat16*, int, int)", "vLLM / SGLang custom all-reduce", "AllReduce"),
    ("void vllm::cross_device_reduce_2stage<half, 8>(...)", "vLLM / SGLang custom all-reduce", "AllReduce"),
    ("void quickreduce::allreduce_prototype_twoshot<quickreduce::CodecFP>(...)", "ROCm quick all-reduce", "AllReduce"),
    ("void tensorrt_llm::kernels::oneShotAllReduceKernel<__nv_bfloat16, 8>(...)", "TensorRT-LLM all-reduce",
     "AllReduce"),
    ("void deep_ep::intranode::dispatch<8, 768>(...)", "DeepEP", "AllToAll"),
    ("void deep_ep::internode::combine<true>(...)", "DeepEP", "AllToAll"),
    ("void mscclpp::allreduce6<__nv_bfloat16>(...)", "MSCCL++", "AllReduce"),
    ("nvshmemi_proxy_kernel", "NVSHMEM", None),
    ("void c10d::symmetric_memory::multimem_all_reduce_kernel<float, 4>(...)", "PyTorch symmetric memory",
     "AllReduce"),
]


@pytest.mark.parametrize("name,library,typ", CASES, ids=[c[1] + ":" + c[0][:30] for c in CASES])
def test_each_library_s_collectives_are_communication(name, library, typ):
    fam = collectives.family(name)
    assert fam is not None and fam.library == library
    assert devices.kind_one(name) == devices.KIND_COLLECTIVE
    assert devices.collective_type(name) == typ
    assert not devices.gemm_kernel_one(name)


@pytest.mark.parametrize("name", [
    "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<float>, ...>",
    "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16>()",  # vLLM's, but no communication
    "Cijk_Alik_Bljk_BBS_BH_MT256x256x64_MI16x16x1",
])
def test_compute_kernels_are_not(name):
    assert collectives.family(name) is None and devices.kind_one(name) == devices.KIND_KERNEL


#: DeepSeek's own build of DeepEP, as its published H800 training profile names the kernels (deepseek-ai/profile-data
#: ``train.json``, read in place: no licence): ``dpsk::ep::``, not ``deep_ep::``; the count exchanges too.
DEEPSEEK_EP = [
    "void dpsk::ep::internode::combine<false, 8, __nv_bfloat16, 8, 2, 16, 24>(int4*, float*, int4 const*)",
    "void dpsk::ep::internode::dispatch<false, 8, true, 8>(int4*, float*, long*, float*)",
    "void dpsk::ep::internode::cached_notify<false>(int, int, int, int, int, int*, int*)",
    "void dpsk::ep::internode::notify_dispatch<false, 8>(int const*, long*, int)",
    "void deep_ep::intranode::cached_notify_combine<8>(void**, int*, int, int, int, int*, int)",
]


@pytest.mark.parametrize("name", DEEPSEEK_EP, ids=lambda n: n[5:45])
def test_deepep_under_any_outer_namespace_is_its_all_to_all(name):
    assert collectives.family(name).library == "DeepEP"
    assert devices.kind_one(name) == devices.KIND_COLLECTIVE and devices.collective_type(name) == "AllToAll"


@pytest.mark.parametrize("name", [
    "void dpsk::ep::cuda::get_dispatch_layout<256, 32, 8>(long const*, int*, int*, int*, bool*, int, int, int)",
    "void cuda::clean_and_count_expert<512>(int*, int)",
    "void dpsk::grouped_gemm::cuda::utils::transpose<512, 128, 4, 4>(unsigned char const*, unsigned char*, int)",
])
def test_control_the_layout_and_expert_kernels_beside_them_stay_compute(name):
    """The routing layout and expert counting run on one GPU's own data: no communication."""
    assert collectives.family(name) is None and devices.kind_one(name) == devices.KIND_KERNEL
