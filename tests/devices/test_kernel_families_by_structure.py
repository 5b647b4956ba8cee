"""Kernel families h37-kernfam3 left, read by the structure of their names (issue #37, h37-kernfam4).

The corpus (``tests/fixtures/kernel_names/corpus.tsv``, groups ``datamove``, ``vllmrocm``, ``aiterpa``, ``sage``,
``cutedsl``, ``normapply``) holds the real names and what each computes; these tests hold the rules' edges, each
against a control the rule must leave alone.  The assumptions that were wrong on main:

* a GEMM library's namespace makes its kernels GEMMs: ``dpsk::grouped_gemm::cuda::utils::transpose`` (fp8 bytes moved
  for the GEMM after it) was an int8 GEMM off the Tensor Cores -- a kernel whose own function names a data movement
  is none, wherever it lives;
* ``dgemm`` / ``hgemm`` anywhere in a name are cuBLAS's fp64 / fp16 GEMMs: CuTe DSL's ``GroupedGemmKernel`` read fp64
  by its ``dGemm``;
* vLLM's KV-cache enum names the kernel's type: ``(vllm::Fp8KVCacheDataType)0`` is ``kAuto`` (no fp8 anywhere), and
  with an fp8 cache the ROCm attention computes in the query's type (the cache is widened before the MFMAs);
* a kernel's matrix-unit use needs a library's fragment name: the CuTe DSL spells its MMA atom in its arguments, and
  SageAttention's quantized operands are matrix-unit types whatever the name leaves out.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor import devices, frameworks
from tests.support.kernel_reading import reading

#: The DeepSeek transpose (h37-survey35, an H800) and its GEMM library's real GEMM beside it (the same namespace).
DPSK_TRANSPOSE = "void dpsk::grouped_gemm::cuda::utils::transpose<512, 128, 4, 4>(unsigned char const*, unsigned char*, int)"
DPSK_GEMM = "void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel>(dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel::Params)"


def test_a_transpose_in_a_gemm_namespace_is_no_gemm():
    assert not devices.gemm_kernel_one(DPSK_TRANSPOSE) and not frameworks.gemm_kernel_one(DPSK_TRANSPOSE)
    assert not devices.tensor_core_one(DPSK_TRANSPOSE)
    assert reading(DPSK_TRANSPOSE)[0] == "elementwise"  # each element moved once (h37-kernelfam; "other" before)


def test_control_the_gemm_of_that_namespace_stays_an_fp8_tensor_core_gemm():
    assert reading(DPSK_GEMM) == ("matmul/conv", "fp8", True)


@pytest.mark.parametrize("name", [
    "void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 2, 128, 1>(float*)",
    "void vllm::gptq::gemm_half_q_half_gptq_4bit_kernel<true, 1>(__half const*, unsigned int const*)",
    "gather_gemm_kernel",
])
def test_control_a_data_movement_word_is_read_only_as_the_function_s_own_first_word(name):
    """``CatArrayBatchedCopy`` is a concatenation (its first word ``Cat``); a function whose own name says GEMM stays one
    whatever verb it carries."""
    assert devices.gemm_kernel_one(name) == ("gemm" in name)


@pytest.mark.parametrize("name, precision", [
    ("kernel_cutlass_kernel___main__GroupedGemmKernel_object_at__TiledMMA_ThrLayoutVMNK11110000_PermutationMNK____"
     "MMAAtom_ThrID10_ShapeMNK12812816_TVLayoutA1128161281128_TVLayoutB1128161281128__0", "unknown"),
    ("ampere_dgemm_64x64_nn", "fp64"),  # controls: cuBLAS's own words (public nsys summaries)
    ("ampere_hgemm_256x128_nt_v0", "fp16"),
])
def test_dgemm_and_hgemm_are_cublas_words_not_a_word_s_tail(name, precision):
    assert devices.PRECISIONS[devices.precision_one(name)] == precision


#: vLLM's ROCm attention with an fp8 cache (the kept wild/vllm_rpd_fp8) and with kAuto (the kept sglang_mi300x_decode).
LL4MI_FP8_CACHE = ("_Z32paged_attention_ll4mi_QKV_kernelIDF16_hLN4vllm18Fp8KVCacheDataTypeE1ELi16ELi128ELi512ELi4EEvPKT"
                   "_PKT0_S7_ifPKiS9_iPKfiiiPfSC_PS2_SD_iff")


def test_vllm_rocm_attention_computes_in_the_query_s_type_on_mfma():
    assert reading(LL4MI_FP8_CACHE) == ("matmul/conv", "fp16", True)


def test_an_auto_kv_cache_is_no_fp8_evidence():
    """``kAuto`` (0): the cache keeps the model's type.  vLLM's CUDA paged attention on uint16 fp16 names no other
    dtype than its fp32 partial sums, never fp8."""
    name = ("void vllm::paged_attention_v2_kernel<unsigned short, unsigned short, 128, 16, 128, "
            "(vllm::Fp8KVCacheDataType)0, false, 512>(float*, float*, unsigned short*)")
    assert devices.PRECISIONS[devices.precision_one(name)] != "fp8"
    assert not devices.tensor_core_one(name)  # control: CUDA-core matrix-vector decode, no MMA


def test_control_a_cache_write_with_an_fp8_cache_stays_fp8():
    """The kernel that writes K and V into an fp8 cache (the kept vllm_rpd_fp8) stores fp8: its enum is its type."""
    name = ("void vllm::reshape_and_cache_kernel<unsigned short, unsigned char, (vllm::Fp8KVCacheDataType)1>"
            "(unsigned short const*, unsigned short const*, unsigned char*, unsigned char*, long const*, int, int, int,"
            " int, int, int, float const*, float const*)")
    assert devices.PRECISIONS[devices.precision_one(name)] == "fp8"


def test_a_cute_dsl_kernel_on_the_cuda_core_atom_is_no_tensor_core_kernel():
    """CuTe's CUDA-core MMA atom is 1x1x1 (``MmaUniversalOp``): a DSL name whose atom says so claims no Tensor Core
    (constructed from the DSL's naming of ``ShapeMNK`` -- the real names read in the corpus carry 128x128x16 / x8)."""
    name = ("kernel_cutlass_kernel___main__SGemm_object_at__TiledMMA_ThrLayoutVMNK1616100_PermutationMNK____"
            "MMAAtom_ThrID10_ShapeMNK111_TVLayoutA1111_0")
    assert not devices.tensor_core_one(name)


def test_sage_attention_is_matrix_work_on_the_matrix_units_and_its_quantizer_is_not():
    assert devices.tensor_core_one("sage_fwd") and devices.gemm_kernel_one("sage_fwd")
    assert not devices.matrix_unit_unknown_one("sage_fwd")
    assert not devices.gemm_kernel_one("sage_quant_kernel")


def test_aiter_paged_attention_is_matmul_time_on_the_matrix_cores():
    """h37-kernfam5: its code objects, disassembled, hold fp8 MFMAs for an fp8 cache (the query quantized to it), so
    it uses the Matrix Cores and computes in fp8 (h37-kernfam4 read the query's bf16, matrix units unknown)."""
    name = "_ZN5aiter31pa_bf16_pertokenFp8_gqa8_2tg_4wE"
    assert devices.gemm_kernel_one(name) and devices.tensor_core_one(name)
    assert not devices.matrix_unit_unknown_one(name)
    assert devices.PRECISIONS[devices.precision_one(name)] == "fp8"


def test_a_norm_s_apply_step_is_elementwise_and_its_statistics_a_reduction():
    apply = "void at::native::batch_norm_transform_input_kernel<float, float, float, true, int>(float*)"
    stats = "void at::native::batch_norm_collect_statistics_kernel<at::native::Var, float, float, float, int>(float*)"
    assert reading(apply)[0] == "elementwise" and reading(stats)[0] == "reduction"
