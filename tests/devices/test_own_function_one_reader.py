"""One reader of a kernel's own function (``codes.own_function`` over ``codes.function_parts``; h37-review26 *Left* 2
and 3): NVIDIA's tests of what a kernel's own function names (``own_product_one``, ``quantize_one``,
``data_movement_one``) and ggml's kernels read it, so a mangled symbol (a tool that keeps names as the binary has
them) and a return type (``std::enable_if<...>::type``) read as the demangled ``void`` form does.

ASSUMPTION that was wrong on main: *the text before a name's first ``<`` or ``(`` is its function* -- true of
``void f<...>(...)``, false of ``std::enable_if<...>::type f<...>(...)`` (read as ``enable_if``) and of a mangled
template (read as nothing: only a plain nested symbol was read).  Each pair below is a real name (from the kept
captures and the kernel-name corpus) and its ``c++filt`` twin; both must read alike."""

from __future__ import annotations

import pytest

from tb_gpu_advisor.devices import codes, ggml, nvidia, short_kernel_name

#: (mangled, as c++filt prints it): cuBLAS's small-N GEMM, cuDNN's implicit-GEMM convolution, llama.cpp's int8 product
PRODUCTS = [
    ("_Z16gemmSN_TN_kernelIfLi128ELi16ELi2ELi4ELi8ELi9ELb0E30cublasGemvTensorStridedBatchedIKfES2_S0_IfEEv22cublasGemmSmall"
     "NParamsIT7_T8_T9_T_E",
     "void gemmSN_TN_kernel<float, 128, 16, 2, 4, 8, 9, false, cublasGemvTensorStridedBatched<float const>, "
     "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float> >(cublasGemmSmallNParams<"
     "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, "
     "cublasGemvTensorStridedBatched<float>, float>)"),
    ("_Z23implicit_convolve_sgemmIffLi128ELi5ELi5ELi3ELi3ELi3ELi1ELb0ELb0ELb1EEviiiPKT_iPT0_S2_18kernel_conv_paramsyiffiPKS3_"
     "S7_bbii",
     "void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>(int, int, int, float const*, "
     "int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, "
     "float const*, bool, bool, int, int)"),
    ("_Z9mul_mat_qIL9ggml_type12ELi64ELb1EEvPKcPKiS4_S4_PfS5_iiiiiiiiiiiiiiiiii",
     "void mul_mat_q<(ggml_type)12, 64, true>(char const*, int const*, int const*, int const*, float*, float*, int, int, "
     "int, int, int, int, int, int, int, int, int, int, int, int, int, int, int, int)"),
]
#: aiter's fused norm and quantizer (gfx942), mangled and demangled
QUANT = ("_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib",
         "void aiter::add_rmsnorm_quant_kernel<std::bfloat16_t, std::bfloat16_t, 256, 16, false, false, true, 1>("
         "std::bfloat16_t*, std::bfloat16_t*, float*, std::bfloat16_t*, std::bfloat16_t*, std::bfloat16_t*, double, int, "
         "int, int, int, int, int, int, bool)")
#: vLLM's fused norm as the profiler printed it: its function behind an ``enable_if`` return type
ENABLE_IF = ("std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type "
             "vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, c10::BFloat16*, "
             "c10::BFloat16 const*, float, int, int)")


@pytest.mark.parametrize("mangled,demangled", PRODUCTS)
def test_a_mangled_product_reads_as_its_demangled_twin(mangled, demangled):
    assert codes.own_function(mangled) == codes.own_function(demangled) != ""
    assert nvidia.own_product_one(mangled) and nvidia.own_product_one(demangled)


def test_a_mangled_quantizer_reads_as_its_demangled_twin():
    assert codes.own_function(QUANT[0]) == codes.own_function(QUANT[1]) == "add_rmsnorm_quant_kernel"
    assert nvidia.quantize_one(QUANT[0]) and nvidia.quantize_one(QUANT[1])


def test_a_return_type_is_not_the_function():
    assert codes.own_function(ENABLE_IF) == "fused_add_rms_norm_kernel"
    assert short_kernel_name(ENABLE_IF).endswith("vllm::fused_add_rms_norm_kernel<…>")  # main: "std::enable_if<…>"
    assert codes.own_function("void " + ENABLE_IF.split("::type ", 1)[1]) == "fused_add_rms_norm_kernel"
    # a data movement behind a return type is still one (its function, not ``enable_if``, is read)
    moved = ENABLE_IF.replace("fused_add_rms_norm_kernel", "transpose_kernel")
    assert nvidia.data_movement_one(moved) and nvidia.data_movement_one("void " + moved.split("::type ", 1)[1])


def test_ggml_reads_its_own_unqualified_kernels_only():
    assert ggml.matrix_product_one(PRODUCTS[2][0]) and ggml.matrix_product_one(PRODUCTS[2][1])
    assert not ggml.matrix_product_one("void other::mul_mat_q<(ggml_type)2, 128, false>(char const*)")  # not ggml's
    assert ggml.matrix_vector_one("void mul_mat_vec_q<(ggml_type)2, 1>(void const*, void const*, float*) [clone .kd]")


def test_the_short_name_walks_the_same_brackets():
    name = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*)"
    assert short_kernel_name(name) == "at::native::vectorized_layer_norm_kernel<…>"
    # the walk stops at the first parenthesis outside a template: the unnamed namespace's is dropped first
    assert codes.without_templates(name.removeprefix("void "), "<…>", stop_at_arguments=True) == "at::native::"
    assert codes.without_templates(name, stop_at_arguments=True).split()[-1] == "at::native::"
    assert codes.function_parts(name) == ("at", "native", "vectorized_layer_norm_kernel")
