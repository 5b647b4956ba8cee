"""A mangled kernel's precision read from its template arguments, as its demangled twin's is (issue #37, h37-kernelfam4).

The assumption that was wrong on main: that a kernel name's dtype is spelled in words (``float``, ``__half``,
``c10::Half``).  A trace that keeps symbols as the binary has them (Itanium-mangled: the kept
wild/held_pass_rtx5070ti) spells a template's element types as builtin letters (``f``: float, ``d``: double,
``Dh``: half) and length-prefixed names (``6__half``, ``13__nv_bfloat16``, ``N3c104HalfE``): cuBLAS's
``_ZN8internal5gemvx6kernelIiiffff...`` -- ``internal::gemvx::kernel<int, int, float, float, float, float, ...>``
demangled, fp32 -- read "unknown" (h37-kernelfam3 *Left*).  ``devices.codes.mangled_template_text`` reads the
template arguments the way a demangler prints them; the precision reading then reads that text, only where the
mangled name itself told nothing.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.devices import codes
from tests.support.paths import FIXTURES
from tests.support.run_report import run_report

#: cuBLAS's fp32 matrix x vector product as the kept wild/held_pass_rtx5070ti recorded it (mangled).
GEMVX_FP32 = ("_ZN8internal5gemvx6kernelIiiffffLb0ELb1ELb1ELb0ELi6ELb0E18cublasGemvParamsExIi30cublasGemvTensorStrided"
              "BatchedIKfES5_S3_IfEfEEENSt9enable_ifIXntT5_EvE4typeET11_")
#: cuBLASLt's split-K reduction and epilogue of the same capture (``<32, 16, int, float, float, float, float, ...>``).
SPLITK_FP32 = ("_ZN8cublasLt19splitKreduce_kernelILi32ELi16EiffffLb0EfffLb1ELb0ELb0EEEvNS_18cublasSplitKParamsIT4_EEPKT2_"
               "PKT8_PT7_PT3_PKS2_SF_PKT9_S6_PSG_PvxPS2_PiSL_")


def test_the_reader_spells_a_template_as_a_demangler_does():
    """Builtin letters, literals, a const-qualified template type, a substitution it cannot resolve alone."""
    text = codes.mangled_template_text(GEMVX_FP32)
    assert text.startswith("internal::gemvx::kernel<int, int, float, float, float, float, literal, ")
    assert "cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>, ?" in text
    assert codes.mangled_template_text("_ZN2at6native6kernelIN3c104HalfEEEvv") == "at::native::kernel<c10::Half>"
    assert codes.mangled_template_text("_ZN1a1kIDhEEvv") == "a::k<half>"


@pytest.mark.parametrize("name", [
    "void internal::gemvx::kernel<int, int, float, float>(float)",  # not mangled
    "_ZN8internal5gemvx6kernelEv",  # no template
    "_Z15my_plain_kernelPfi",  # a plain function: its parameters are no template
])
def test_a_name_that_is_no_mangled_template_reads_no_text(name):
    assert codes.mangled_template_text(name) == ""


def test_an_expression_ends_the_reading_keeping_what_came_before():
    """``X...E`` (an expression as an argument) is not read: the arguments before it are kept."""
    assert codes.mangled_template_text("_ZN1a1kIfXplLi1ELi2EEEEvv") == "a::k<float>"


def test_deep_nesting_is_bounded():
    """Templates nested deeper than the reader reads end the reading, whatever the name's length (linear)."""
    name = "_ZN1a1kI" + "N1b1cI" * 50 + "f" + "EE" * 50 + "EEvv"
    assert codes.mangled_template_text(name) == ""


@pytest.mark.parametrize(("name", "expected"), [
    (GEMVX_FP32, "fp32"),
    (SPLITK_FP32, "fp32"),
    ("_ZN8internal5gemvx6kernelIiiddddLb0ELb1ELb1ELb0ELi6ELb0EEEvv", "fp64"),
    ("_ZN1a1kIDhEEvv", "fp16"),
])
def test_a_mangled_kernel_reads_its_template_s_element_type(name, expected):
    """main: unknown for each."""
    assert devices.PRECISIONS[devices.precision_one(name)] == expected


@pytest.mark.parametrize("name", [
    "_ZN1a1kIiEEvv",  # an int index type: no element type of a precision
    "_ZN1a1kILi4ELb1EEEvv",  # literals only
    "_Z15my_plain_kernelPfi",  # a float* parameter of a plain function (no template): not read, as before
])
def test_a_mangled_template_of_no_element_type_stays_unknown(name):
    """Control (passes on main too)."""
    assert devices.PRECISIONS[devices.precision_one(name)] == "unknown"


def test_a_mangled_name_read_before_keeps_its_reading():
    """Control: vLLM's mangled cache write is fp16 by its ``uint16_t`` (``nvidia.vllm_element_precision``), not the
    template text's ``unsigned short``; a mangled name whose own words say bf16 or fp16 (``13__nv_bfloat16``,
    ``N3c104HalfE``) stays so."""
    assert devices.PRECISIONS[devices.precision_one("_ZN4vllm24reshape_and_cache_kernelIttLb0EEEvv")] == "fp16"
    assert devices.PRECISIONS[devices.precision_one("_ZN8internal5gemvx6kernelIii13__nv_bfloat16S1_S1_fEEvv")] == "bf16"
    fill = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIN3c10{}EEESt5arrayIPcLm1EEEEviT0_T1_"
    assert devices.PRECISIONS[devices.precision_one(fill.format("4Half"))] == "fp16"
    assert devices.PRECISIONS[devices.precision_one(fill.format("8BFloat16"))] == "bf16"


def test_the_kept_rtx5070ti_capture_knows_its_gemv_s_precision():
    """wild/held_pass_rtx5070ti (ViT-B/16 fp32, symbols kept mangled): the share of kernel time of no known precision
    was 2.74% on main (cuBLAS's ``gemvx`` and cuBLASLt's split-K reduction and epilogue among it); now 0.73%, what is
    left of no template element type.  The finding stays: the run is fp32, 0% 16-bit."""
    r = run_report(FIXTURES / "wild", "held_pass_rtx5070ti").to_dict()
    detail = r["headline"][2]["detail"]
    assert detail["unknown_precision_share"] < 0.01
    assert detail["fp16_share"] == detail["bf16_share"] == 0.0
    assert r["findings"][0]["id"].startswith("mixed_precision_off:")


def test_the_kept_rtx5070ti_resnet_knows_its_cudnn_kernels_precision():
    """wild/loader_pass_rtx5070ti (ResNet-50 fp32, mangled): cuDNN's batch norm, layout transforms and non-fused
    Winograd convolution (``winogradForwardData4x4IffEE``: ``<float, float>``) read fp32, not unknown -- the unknown
    share 50.8% on main, now 25.9% (cuDNN's ``cutlass__5x_cudnn`` kernels name no element type).  The Winograd
    convolutions, fp32 and eligible, join the Tensor-Core-unused pool: 5 -> 8 kernels, 3.49 -> 3.72 ms."""
    r = run_report(FIXTURES / "wild", "loader_pass_rtx5070ti").to_dict()
    assert r["headline"][2]["detail"]["unknown_precision_share"] < 0.3
    unused = next(f for f in r["findings"] if f["id"].startswith("tensor_core_unused:"))
    assert unused["metric"]["detail"]["unused_32bit_ms_per_step"] > 3.6
