"""Kernel families h37-kernfam4 left, read by what their names' parts say (issue #37, h37-kernfam5).

The assumptions that were wrong on main:

* a dtype word anywhere in a name is the kernel's: vLLM's CUDA paged attention on fp16 is
  ``vllm::paged_attention_v2_kernel<unsigned short, ...>(float*, ...)`` -- vLLM instantiates its KV-cache kernels
  with ``uint16_t`` for ``at::Half`` (``DISPATCH_BY_KV_CACHE_DTYPE``, csrc/quantization/fp8/nvidia/quant_utils.cuh),
  so its first template argument, ``scalar_t``, is fp16; main read fp32 from the fp32 partial sums of its parameters
  (and an attention reading an fp8 cache as fp8, though it widens the cache to ``scalar_t`` before its dot products);
* a quantizer is no family: SageAttention's ``sage_quant_kernel`` (block absmax, scale, cast Q/K to int8 and V to
  fp8) and vLLM's fp8/int8 quant kernels read "other" -- they are element-wise traffic;
* aiter's paged-attention assembly has no source, so its matrix-unit use is unknown: its code objects, disassembled,
  hold MFMAs in every one (``devices.amd``, h37-kernfam5), in the cache's type where the cache is quantized.

The vLLM names are composed from vLLM's source as the CUDA demangler prints them (``uint16_t`` is ``unsigned short``):
the template order of csrc/attention/paged_attention_v1.cu / _v2.cu (``<T, CACHE_T, HEAD_SIZE, BLOCK_SIZE,
NUM_THREADS, KV_DTYPE, IS_BLOCK_SPARSE[, PARTITION_SIZE]>``), the reduce kernel's ``<scalar_t, HEAD_SIZE, NUM_THREADS,
PARTITION_SIZE>`` and its parameters (csrc/attention/attention_kernels.cuh); no public trace holding them was found.
The aiter symbols are ROCm/aiter hsa/gfx942/pa/pa_asm.csv's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tb_gpu_advisor import devices
from tests.support.kernel_reading import reading
from tests.support.kineto_doc import session_report

#: vLLM's fp16 decode attention, its v2 reduce, the fp16 cache write, and one attention over an fp8 cache.
V1_FP16 = ("void vllm::paged_attention_v1_kernel<unsigned short, unsigned short, 128, 16, 128, "
           "(vllm::Fp8KVCacheDataType)0, false>(unsigned short*, unsigned short const*, unsigned short const*, "
           "unsigned short const*, int, float, int const*, int const*, int, float const*, int, int, int, float const*, "
           "float const*, int, int, int, int, int)")
V2_FP16 = ("void vllm::paged_attention_v2_kernel<unsigned short, unsigned short, 128, 16, 128, "
           "(vllm::Fp8KVCacheDataType)0, false, 512>(float*, float*, unsigned short*, unsigned short const*, "
           "unsigned short const*, unsigned short const*, int, float, int const*, int const*, int, float const*, int, "
           "int, int, float const*, float const*, int, int, int, int, int)")
V2_REDUCE = ("void vllm::paged_attention_v2_reduce_kernel<unsigned short, 128, 128, 512>(unsigned short*, float const*, "
             "float const*, unsigned short const*, int const*, int)")
CACHE_WRITE = ("void vllm::reshape_and_cache_kernel<unsigned short, unsigned short, (vllm::Fp8KVCacheDataType)0>"
               "(unsigned short const*, unsigned short const*, unsigned short*, unsigned short*, long const*, int, int, "
               "int, int, int, int, float const*, float const*)")
V1_FP8_CACHE = ("void vllm::paged_attention_v1_kernel<unsigned short, unsigned char, 128, 16, 128, "
                "(vllm::Fp8KVCacheDataType)1, false>(unsigned short*, unsigned short const*, unsigned char const*, "
                "unsigned char const*, int, float, int const*, int const*, int, float const*, int, int, int, "
                "float const*, float const*, int, int, int, int, int)")


@pytest.mark.parametrize("name", [V1_FP16, V2_FP16, V2_REDUCE, CACHE_WRITE, V1_FP8_CACHE])
def test_vllm_s_sixteen_bit_integer_element_type_is_fp16(name):
    """main: fp32, fp32, fp32, unknown, fp8."""
    assert devices.PRECISIONS[devices.precision_one(name)] == "fp16"


def test_an_attention_over_an_fp8_cache_computes_in_its_scalar_type():
    """fp32 queries over an fp8 cache: fp32 dot products (main: fp8, the enum's)."""
    name = V1_FP8_CACHE.replace("<unsigned short, unsigned char", "<float, unsigned char")
    assert devices.PRECISIONS[devices.precision_one(name)] == "fp32"


@pytest.mark.parametrize("name, precision", [
    (V1_FP16.replace("unsigned short", "__nv_bfloat16"), "bf16"),
    (V1_FP16.replace("unsigned short", "float"), "fp32"),
    # the cache write into an fp8 cache stores fp8 (its enum is its type)
    ("void vllm::reshape_and_cache_kernel<unsigned short, unsigned char, (vllm::Fp8KVCacheDataType)1>"
     "(unsigned short const*, unsigned short const*, unsigned char*, unsigned char*, long const*, int, int, int, int, "
     "int, int, float const*, float const*)", "fp8"),
    # outside vLLM an unsigned short is an integer tensor's (torch.uint16 fill): no fp16 read into it
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<unsigned short>, std::array<char*, 1ul> >"
     "(int, at::native::FillFunctor<unsigned short>, std::array<char*, 1ul>)", "unknown"),
])
def test_control_other_element_types_and_libraries_keep_their_reading(name, precision):
    assert devices.PRECISIONS[devices.precision_one(name)] == precision


def test_control_vllm_s_cuda_paged_attention_stays_off_the_tensor_cores():
    """One query row per head against the keys: matrix-vector work on the CUDA cores (no MMA in
    attention_kernels.cuh), whatever its element type."""
    assert reading(V2_FP16) == ("other", "fp16", False)
    assert reading(V2_REDUCE)[0] == "reduction"


@pytest.mark.parametrize("name", [
    "sage_quant_kernel",  # aiter fav3_sage_attention.py; the kept wild/xdit_flux_mi300x_denoise
    "quant_per_block_int8_kernel",  # thu-ml/SageAttention sageattention/triton/quant_per_block.py
    "void vllm::scaled_fp8_quant_kernel<c10::BFloat16, c10::Float8_e4m3fn>(c10::Float8_e4m3fn*, c10::BFloat16 const*, "
    "float const*, long)",
    "per_token_group_quant_8bit_kernel",
    # its unnamed namespace's parenthesis is no argument list (the kept torchrec_shampoo_128)
    "void fbgemm_gpu::(anonymous namespace)::_compute_FP8_quantize_cuda_kernel<float>(float const*, float const*, int, "
    "int, unsigned char*, bool)",
])
def test_a_quantizer_is_elementwise(name):
    """main: "other"."""
    assert reading(name)[0] == "elementwise"


@pytest.mark.parametrize("name, cls", [
    ("void aiter::add_rmsnorm_quant_kernel<c10::BFloat16>(c10::BFloat16*)", "reduction"),  # a norm reduces its rows
    ("void vllm::rms_norm_dynamic_per_token_quant_kernel<c10::BFloat16, c10::Float8_e4m3fn, false>(c10::Float8_e4m3fn*)",
     "reduction"),
    ("void vllm::gptq::gemm_half_q_half_gptq_4bit_kernel<true, 1>(__half const*, unsigned int const*)", "matmul/conv"),
    ("dequant_kernel", "other"),
])
def test_control_a_fused_norm_a_gemm_and_a_dequantizer_are_no_quantizer(name, cls):
    assert reading(name)[0] == cls


@pytest.mark.parametrize("name, precision", [
    ("_ZN5aiter31pa_bf16_pertokenFp8_gqa8_2tg_4wE", "fp8"),  # only fp8 MFMAs in its code object
    ("_ZN5aiter33pa_bf16_pertokenInt8_gqa16_2tg_4wE", "int8"),  # only int8 MFMAs
    ("_ZN5aiter36pa_fp16_noquant_gqa8_1tg_4w_mtp_msk0E", "fp16"),  # v_mfma_f32_16x16x16_f16
    ("_ZN5aiter27pa_bf16_noquant_gqa8_1tg_4wE", "bf16"),  # v_mfma_f32_16x16x16_bf16
])
def test_aiter_paged_attention_runs_on_mfma_in_the_type_it_multiplies(name, precision):
    """main: matrix units unknown ('?'), and bf16 for the fp8/int8-cache kernels (their query's type)."""
    assert reading(name) == ("matmul/conv", precision, True)


def _decode_step(step: int, corr: int) -> list[dict]:
    """One decode step of vLLM on an A100 in fp16: an fp16 GEMM, the v2 attention and its reduce, 650 us of kernels."""
    t, host, gpu = step * 1000.0, {"ph": "X", "pid": 1, "tid": 1}, {"ph": "X", "pid": 0, "tid": 7}
    events = [{**host, "cat": "user_annotation", "name": f"ProfilerStep#{step}", "ts": t, "dur": 1000}]
    at = t + 20
    for i, (name, us, op) in enumerate((("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn", 200, "aten::mm"),
                                        (V2_FP16, 400, "_C::paged_attention_v2"),
                                        (V2_REDUCE, 50, "_C::paged_attention_v2"))):
        c = corr + i
        events += [{**host, "cat": "cpu_op", "name": op, "ts": t + 1 + 12 * i, "dur": 10},
                   {**host, "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": t + 2 + 12 * i, "dur": 5,
                    "args": {"correlation": c}},
                   {**gpu, "cat": "kernel", "name": name, "ts": at, "dur": us,
                    "args": {"correlation": c, "device": 0, "stream": 7, "grid": [64, 32, 1], "block": [128, 1, 1]}}]
        at += us + 2
    return events


def test_a_vllm_fp16_decode_reads_all_sixteen_bit(tmp_path: Path):
    """Every kernel of the generated capture computes in fp16 (truth by construction): main counted the attention's
    450 us of every 650 as fp32 (fp16 share 0.31) and so its step as two-thirds full precision."""
    events = [e for step in range(6) for e in _decode_step(step, 1 + 3 * step)]
    host = session_report(tmp_path, events)["hosts"][0]
    (card,) = [c for c in host["headline"] if c["id"] == "sixteen_bit_share"]
    assert card["detail"]["fp16_share"] == 1.0
    cols = host["kernels"]["columns"]
    precisions = {row[0]: row[cols.index("precision")] for row in host["kernels"]["rows"]}
    assert precisions[V2_FP16] == precisions[V2_REDUCE] == "fp16"


#: vLLM's kernels as its ``_C`` library exports them (Itanium-mangled: a tool that does not demangle keeps these), the
#: first two as they appear in public code listing vLLM's symbols, the third composed by the C++ ABI's rules from the
#: demangled fp8-cache write above (``h`` unsigned char, the enum's scope the substitution ``S_``).
MANGLED_FP16_WRITE = "_ZN4vllm24reshape_and_cache_kernelIttLb0EEEvPKT_S3_PT0_S5_PKliiiiii"
MANGLED_BF16_WRITE = ("_ZN4vllm24reshape_and_cache_kernelI13__nv_bfloat16S1_LNS_18Fp8KVCacheDataTypeE0EEEvPKT_S5_PT0_"
                      "S7_PKliiiiiiPKfSB_")
MANGLED_FP8_WRITE = "_ZN4vllm24reshape_and_cache_kernelIthLNS_18Fp8KVCacheDataTypeE1EEEvPKT_S3_PT0_S5_PKliiiiiiPKfS9_"


@pytest.mark.parametrize("name, precision", [
    (MANGLED_FP16_WRITE, "fp16"),  # main: unknown (a mangled name's template was not read)
    (MANGLED_FP8_WRITE, "fp8"),  # control (fp8 on main too, by the enum's word): the template read keeps it
    (MANGLED_BF16_WRITE, "bf16"),  # control: its enum is 0 (the model's own type), its element bf16
])
def test_a_mangled_vllm_kernel_reads_as_its_demangled_twin(name, precision):
    assert devices.PRECISIONS[devices.precision_one(name)] == precision


def test_a_cache_write_into_an_fp8_cache_stores_fp8_whatever_it_reads():
    """``reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char, (vllm::Fp8KVCacheDataType)1>`` (the template
    order of csrc/cache_kernels.cu: ``<scalar_t, cache_t, kv_dt>``): main read bf16, its input's word, first."""
    name = ("void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char, (vllm::Fp8KVCacheDataType)1>"
            "(__nv_bfloat16 const*, __nv_bfloat16 const*, unsigned char*, unsigned char*, long const*, long, long, long, "
            "long, int, int, int, float const*, float const*)")
    assert devices.PRECISIONS[devices.precision_one(name)] == "fp8"
