"""ggml's own kernels (llama.cpp) as the families they are (issue #37, h37-int8share's "Left" 1): its quantized
matmul ``mul_mat_q`` (90% of the kept wild/llamacpp_rocprof_r9700's kernel time) was in no GEMM family, so the
capture read "MatMul/Conv 1.1%" (hipBLASLt's two attention GEMMs alone), and ``mul_mat_vec_q``'s int8 dot products
read fp32 by their ``float*`` output.  Names from ggml/src/ggml-cuda (mmq.cuh, mmvq.cu, mmf.cuh, fattn-mma-f16.cuh),
in the demangled form rocprof and Nsight write and the mangled one some profilers keep."""

from __future__ import annotations

import pytest

from tb_gpu_advisor import devices
from tests.support.paths import FIXTURES
from tests.support.run_report import run_report

MMQ = ("void mul_mat_q<(ggml_type)2, 128, false>(char const*, int const*, int const*, int const*, float*, float*, int, "
       "int, int, int, int, int, int, int, int, int, int, int, int, int, int, int, int) [clone .kd]")
MMQ_MANGLED = "_Z9mul_mat_qIL9ggml_type12ELi64ELb1EEvPKcPKiS4_S4_PfS5_iiiiiiiiiiiiiiiiii"
MMVQ = ("void mul_mat_vec_q<(ggml_type)14, 1, false, false>(void const*, void const*, int const*, "
        "ggml_cuda_mm_fusion_args_device, float*, unsigned int, HIP_vector_type<unsigned int, 3u>, unsigned int)")
MMF = "void mul_mat_f<__half2, 32, 8, 4, false>(__half2 const*, float const*, int const*, float*, int, int, int)"
MMF_IDS = "void mul_mat_f_ids<nv_bfloat162, 32, 16, 4>(nv_bfloat162 const*, float const*, int const*, float*, int)"
FATTN = ("void flash_attn_ext_f16<128, 128, 8, 1, 4, 2, false, false>(char const*, char const*, char const*, "
         "char const*, char const*, int const*, float*, float2*, float, float, float, float, unsigned int, float)")


@pytest.mark.parametrize("name", [MMQ, MMQ_MANGLED, MMF, MMF_IDS, FATTN])
def test_ggml_matrix_products_are_gemm_work(name):
    assert devices.gemm_kernel_one(name)


@pytest.mark.parametrize("name", [MMQ, MMQ_MANGLED, MMVQ])
def test_ggml_quantized_products_compute_in_int8(name):
    assert devices.PRECISIONS[devices.precision_one(name)] == "int8"


def test_mmq_matrix_units_are_unknown_mmf_and_attention_tiles_are_on_them():
    """``mul_mat_q`` runs MMA / MFMA / WMMA or ``dp4a`` by the build and GPU (never counted as a miss); ``mul_mat_f``
    and ``flash_attn_ext_f16`` only ever run as matrix tiles."""
    assert devices.matrix_unit_unknown_one(MMQ) and not devices.tensor_core_one(MMQ)
    for name in (MMF, MMF_IDS, FATTN):
        assert devices.tensor_core_one(name) and not devices.matrix_unit_unknown_one(name)
    assert devices.PRECISIONS[devices.precision_one(MMF)] == "fp16"
    assert devices.PRECISIONS[devices.precision_one(FATTN)] == "fp16"


@pytest.mark.parametrize("name", [
    MMVQ,  # matrix x vector: a decode's weights read once, no matrix unit to miss
    "void mul_mat_vec_f<float, float, 1, 256, false>(float const*, float const*, int const*, float*, int)",
    "void dequantize_mul_mat_vec<(ggml_type)2>(void const*, float const*, float*, int, int)",
    "void quantize_mmq_q8_1<(mmq_q8_1_ds_layout)1>(float const*, int const*, void*, long, long)",  # a quantizer
    "void flash_attn_tile<128, 128, 32, 1, false>(char const*, char const*)",  # attention on the vector units
    "void ns::mul_mat_q<1>(int const*)",  # ggml's kernels are namespace-free: somebody else's
    "void my_mul_mat_q_kernel(float const*)",
])
def test_not_ggml_matrix_products(name):
    assert not devices.gemm_kernel_one(name) and not devices.tensor_core_one(name)


def test_llamacpp_capture_reads_its_int8_matmuls_as_matmul():
    """wild/llamacpp_rocprof_r9700 (RDNA 4): ``mul_mat_q<Q4_0>`` 4.10 of the 4.55 ms of kernels a step.  main:
    matmul/conv 51 us a step (hipBLASLt's two GEMMs), ``mul_mat_vec_q`` fp32; the matrix units stay unclaimed (no
    Tensor Core finding either way) and the 8-bit share keeps ggml's int8 arithmetic."""
    (h,) = run_report(FIXTURES / "wild", "llamacpp_rocprof_r9700").hosts[:1]
    by_class = {c["class"]: c["us_per_step"] for c in h.kernel_classes}
    total = sum(by_class.values())
    assert by_class["matmul/conv"] > 0.85 * total
    cols = h.kernels.columns
    rows = [dict(zip(cols, r)) for r in h.kernels.rows]
    (mmq,) = [r for r in rows if r["kernel"].startswith("void mul_mat_q<")]
    assert mmq["matrix core eligible"] and not mmq["matrix core"] and mmq["precision"] == "int8"
    mmvq = [r for r in rows if r["kernel"].startswith("void mul_mat_vec_q<")]
    assert mmvq and all(r["precision"] == "int8" and not r["matrix core eligible"] for r in mmvq)
    assert not {f.rule for f in h.findings} & {"tensor_core_unused", "mixed_precision_off", "xla_not_used"}
    (mfu,) = [c for c in h.headline if c.id == "mfu"]
    assert mfu.detail.get("dtype") == "int8"
