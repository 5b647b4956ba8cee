"""An 8-bit integer type names a precision only in the kernels that compute in it (issue #37, h37-int8share).

h37-survey44 found main reading the ``unsigned char`` of ATen's byte kernels (``aten::random_`` of a uint8 tensor, a
uint8 fill, an index copy's ``char*`` arguments) as int8, so a model with no 8-bit arithmetic said "x% 8-bit" beside its
16-bit share.  The wrong assumption: a dtype in a kernel's name is the precision of its arithmetic, whatever the kernel
does.  An 8-bit integer type is that only in int8 GEMMs / convolutions / attention (every vendor's), a kernel whose
own function names a matrix product (llama.cpp's ``mul_mat_q``), a quantizer making their operands and a collective
(what it reduces); elsewhere it is bytes moved, and the kernel's precision is unknown.  The byte kernels read
unknown in ``tests/fixtures/kernel_names/corpus.tsv`` (group ``bytes``); these are the controls that keep int8 and
fp8, and the one home's answer itself.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor import devices

#: Kernels that compute in int8, read int8 before and after (controls), each from a real capture or library.
INT8_ARITHMETIC = [
    # llama.cpp's quantized GEMM (Q4_0 weights x q8_1 activations, int8 dot products): the kept
    # wild/llamacpp_rocprof_r9700's 90% kernel, hipified on an RDNA 4 GPU -- no library family names it
    "void mul_mat_q<(ggml_type)2, 128, false>(char const*, int const*, int const*, int const*, float*, float*, int, "
    "int, int, int, int, int, int, int, int, int, int, int, int, int, int, int, int) [clone .kd]",
    # hipBLASLt/Tensile's int8 GEMM (``I8II``: int8 in, int32 out) as a public rocprofv3 kernel trace names it
    "Cijk_Ailk_Bljk_I8II_BH_MT64x64x64_MI32x32x1",
    # aiter's paged attention with an int8 KV cache (int8 MFMAs only: corpus group aiterpa)
    "_ZN5aiter33pa_bf16_pertokenInt8_gqa16_2tg_4wE",
    # SageAttention 2: int8 QK^T on mma.sync s8 (corpus group sage)
    "void qk_int_sv_f8_attn_kernel<128u, 64u, 32u, 64u, 128u, (DataType)1>",
    # SageAttention's quantizer: its int8 output is the attention's operand
    "quant_per_block_int8_kernel",
    # NCCL moving int8 (kept wild/torchrec_shampoo_128, d2d_v100, dlrm_*): a collective's type is what it carries
    "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
]

#: fp8 kernels over ``unsigned char`` storage keep fp8 (controls): an fp8 word is only ever a low-precision float.
FP8_OVER_BYTES = [
    # FBGEMM's fp8 row-wise codec of the kept wild/torchrec_shampoo_128 (its 11.5% "8-bit")
    "void fbgemm_gpu::(anonymous namespace)::_compute_FP8_quantize_cuda_kernel<float>(float const*, float const*, int, "
    "int, unsigned char*, bool)",
    "void fbgemm_gpu::(anonymous namespace)::_FP8rowwise_to_float_cuda_kernel<float>(unsigned char const*, int, int, "
    "float*, bool)",
    # vLLM's write into an fp8 KV cache (kept wild/vllm_b200_tp8)
    "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char, (vllm::Fp8KVCacheDataType)1>"
    "(__nv_bfloat16 const*, __nv_bfloat16 const*, unsigned char*, unsigned char*, long const*, long, long, long, "
    "long, long, int, int, int, float const*, float const*)",
]


@pytest.mark.parametrize("name", INT8_ARITHMETIC, ids=lambda n: n[:40])
def test_kernels_computing_in_int8_keep_int8(name):
    assert devices.integer_arithmetic_one(name)
    assert devices.PRECISIONS[devices.precision_one(name)] == "int8"


@pytest.mark.parametrize("name", FP8_OVER_BYTES, ids=lambda n: n[:40])
def test_fp8_kernels_over_bytes_keep_fp8(name):
    assert devices.PRECISIONS[devices.precision_one(name)] == "fp8"


@pytest.mark.parametrize("name, integer_arithmetic", [
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<unsigned char>, std::array<char*, 1ul> >"
     "(int, at::native::FillFunctor<unsigned char>, std::array<char*, 1ul>)", False),
    # a cast whose own name holds ``conv`` inside a word is no convolution
    ("void convert_kernel<signed char>(signed char const*, float*, int)", False),
    ("void my_int8_conv2d_kernel<signed char>(signed char const*, signed char const*, int*, int)", True),
])
def test_the_own_functions_product_word_is_a_word(name, integer_arithmetic):
    """The own-function reading (``nvidia.own_product_one``) takes ``conv`` as a word (``conv2d``), never inside
    ``convert``; and a fill names no product."""
    assert devices.integer_arithmetic_one(name) is integer_arithmetic
    assert devices.PRECISIONS[devices.precision_one(name)] == ("int8" if integer_arithmetic else "unknown")
