"""Kernels of other people's libraries in the class of their work (issue #37, h37-kernelfam2).

h37-kernelfam left two library families "other" (no family knows the kernel), each a fact of its library's source:

* FBGEMM's table-batched embeddings (``split_embedding_codegen_forward_*``, ``split_embedding_backward_codegen_*``:
  TorchRec, DLRM) gather table rows and sum them per bag, or sum each row's gradient over its occurrences and apply
  the fused optimizer -- reductions, and the index checks around them element-wise.  They held 15-18% of a recommender
  step's kernel time as "other" (``wild/dlrm_a100_alltoall``, ``wild/d2d_v100``, ``wild/torchrec_shampoo_128``).
* Matrix x vector products -- cuBLAS's ``gemv``/``gemvx``, vLLM's ROCm skinny GEMMs (``wvSpltK``), ggml's
  ``mul_mat_vec_*`` -- are matmuls by their math, but each weight is read once and used once (about 1 FLOP per byte
  in 16 bits, below every GPU's ridge point): the memory's time.  They are a dot product per output row -- a
  reduction -- and stay out of the Tensor-Core-eligible work and the savings' matmul pool, as they already were: no
  Tensor Core or mixed-precision saving is claimed for them as matrix-unit work.  cuBLAS's complex ``gemvx`` held 7.4%
  of an mmagic forward (``wild/mmagic_a100_pyprof_forward``).

* cuBLAS's ``gemmk1_kernel`` (k = 1: an outer product) accumulates nothing, so no Tensor Core tile can speed it:
  element-wise work, out of the GEMM work -- an fp16 one was told to pad its dims to 8 and to run under autocast
  (``gaps/inference_rank_1``).

The wrong assumption: that a library kernel's work is known only where a vendor's GEMM, attention or collective family
claims it, and that every kernel a GEMM library names GEMM is matrix-unit work.  For the first two families only the
classes table moves: matmul/conv and collective time per step are main's to the microsecond, and the savings of the
precision checks are unchanged (the controls below); the outer product leaves the GEMM work and its advice.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor import devices
from tests.support.kernel_reading import reading
from tests.support.paths import FIXTURES
from tests.support.run_report import run_report

WILD = FIXTURES / "wild"


def _classes(run: str) -> dict[str, float]:
    """The first host's kernel time per class, us per step (the report's ``kernel_classes``)."""
    h = run_report(WILD, run).hosts[0]
    return {c["class"]: c["kernel_us_per_step"] for c in h.kernel_classes}


def _share(classes: dict[str, float], cls: str) -> float:
    return classes.get(cls, 0.0) / sum(classes.values())


def _class_of(name: str) -> str:
    """A kernel name's class as the report reads it (``tests.support.kernel_reading``)."""
    return reading(name)[0]


@pytest.mark.parametrize("run, main_other, at_most, main_reduction, at_least, matmul_us, outer_us", [
    # capture, main's "other" share, its bound now, main's reduction share, the reduction share now at least, main's
    # matmul/conv us per step, and the us per step of cuBLAS's k = 1 GEMMs among them (``gemmk1_kernel``, read off the
    # kernels table: the only kernels that leave GEMM work -- a control: none joins it, no other leaves it)
    ("dlrm_a100_alltoall", 0.1762, 0.04, 0.0528, 0.18, 13012.0, 8.5),  # FBGEMM embeddings
    # (d2d_v100 writes whole microseconds since 1970: 33720.482 was read off the times' rounding before h37-probe52x)
    ("d2d_v100", 0.1845, 0.05, 0.0341, 0.16, 33720.5, 6.75),           # FBGEMM embeddings
    ("torchrec_shampoo_128", 0.1507, 0.03, 0.0102, 0.12, 33647.0, 35.0),  # FBGEMM embeddings
    ("mmagic_a100_pyprof_forward", 0.2964, 0.23, 0.1825, 0.25, 1542.002, 0.0),  # cuBLAS complex gemvx
    ("vllm_rpd_fp8", 0.0649, 0.045, 0.0829, 0.10, 9647.418, 0.0),      # vLLM's ROCm wvSpltK
    ("gpt2_b200_one_step", 0.0405, 0.01, 0.235, 0.26, 115.648, 0.0),   # cuBLAS bf16 gemvx
])
def test_library_kernels_leave_other_for_their_work(run, main_other, at_most, main_reduction, at_least, matmul_us,
                                                    outer_us):
    classes = _classes(run)
    assert _share(classes, "other") <= at_most < main_other
    assert _share(classes, "reduction") >= at_least > main_reduction
    assert classes["matmul/conv"] == pytest.approx(matmul_us - outer_us, abs=0.01)


@pytest.mark.parametrize("name, cls", [
    # cuBLAS's gemvx, demangled (wild/gpt2_b200_one_step) and mangled (wild/held_pass_rtx5070ti)
    ("std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, __nv_bfloat16, __nv_bfloat16, "
     "__nv_bfloat16, float, false, true, true, false, 7, false, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched"
     "<__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16 const>, cublasGemvTensorStridedBatched"
     "<__nv_bfloat16>, float> >(cublasGemvParamsEx<int, ...>)", "reduction"),
    ("_ZN8internal5gemvx6kernelIiiffffLb0ELb1ELb1ELb0ELi6ELb0E18cublasGemvParamsExIi30cublasGemvTensorStridedBatched"
     "IKfES5_S3_IfEfEEENSt9enable_ifIXntT5_EvE4typeET11_", "reduction"),
    ("void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false, "
     "cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, "
     "cublasGemvTensorStridedBatched<float>, float> >(...)", "reduction"),  # wild/d2d_v100
    ("void gemvNSP_kernel<float, float, float, float, 1, 16, 4, 1024, cublasGemvParamsEx<int, ...> >(...)",
     "reduction"),  # wild/dlrm_v100
    # ggml's float matrix x vector product, as its quantized one (the corpus's mul_mat_vec_q rows)
    ("void mul_mat_vec_f<float, float, 1, 128, false>(float const*, float const*, int const*, float*, int)",
     "reduction"),
    # FBGEMM: an unpooled (sequence) forward copies one row per index; the dense backward sums rows' gradients
    ("void split_embedding_nobag_codegen_forward_unweighted_kernel<float, float, float, long>(...)", "elementwise"),
    ("void split_embedding_backward_codegen_dense_unweighted_kernel_warp_per_row_1<float, float, float, 1ul, 8>(...)",
     "reduction"),
    # cuBLAS's k = 1 GEMM: an outer product, one product per output element (tests/fixtures/gaps/inference_rank_1)
    ("void gemmk1_kernel<float, 256, 5, false, false, false, false, cublasGemvTensorStridedBatched<__half const>, "
     "cublasGemvTensorStridedBatched<__half const>, cublasGemvTensorStridedBatched<__half>, float, true, true>(...)",
     "elementwise"),
    ("void linearize_index_kernel<long>(at::GenericPackedTensorAccessor<long, 1ul, at::RestrictPtrTraits, int>, ...)",
     "elementwise"),
])
def test_kernel_names_of_the_new_families(name, cls):
    assert _class_of(name) == cls


@pytest.mark.parametrize("name", [
    # cuBLAS's small-N GEMMs name ``cublasGemvTensorStridedBatched`` only in their template arguments
    "void gemmSN_TN_kernel<float, 128, 16, 2, 4, 8, 9, false, cublasGemvTensorStridedBatched<float const>, "
    "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float> >(cublasGemmSmallNParams<...>)",
    "_Z16gemmSN_TN_kernelIfLi128ELi16ELi2ELi4ELi8ELi9ELb0E30cublasGemvTensorStridedBatchedIKfES2_S0_IfEEv22cublasGemm"
    "SmallNParamsIT7_T8_T9_T_E",
    # ggml's tiled matrix x matrix product (wild/llamacpp_rocprof_r9700: 90% of its kernel time)
    "void mul_mat_q<(ggml_type)2, 128, false>(char const*, int const*, int const*, int const*, float*, float*, int)",
])
def test_control_gemms_beside_them_stay_gemms(name):
    assert _class_of(name) == "matmul/conv"
    assert devices.named_work_kind(name) is None  # the matrix x vector readers claim none of them


def test_control_a_matrix_vector_product_is_no_tensor_core_work_nor_its_saving():
    """The mmagic forward's complex ``gemvx`` (7.4% of its kernel time): not Tensor-Core-eligible, never in the Tensor
    Core finding's evidence, and its fp32 time is counted with the other kernels' (half the bytes), never as a matrix
    unit's 16x: the Tensor Core finding's saving is the precision finding's matrix pool, no more.  (The savings were
    0.32 and 0.859 ms before h37-idle64 capped a kernel's gain by the part of it the pass's next work waited for:
    this host-paced forward's GEMMs are 12.7% critical -- 0.06 and 0.145 ms now.)"""
    rep = run_report(WILD, "mmagic_a100_pyprof_forward")
    by = {f.rule: f for f in rep.findings}
    tc, mp = by["tensor_core_unused"].saving, by["mixed_precision_off"].saving
    rows = [r[0] for e in by["tensor_core_unused"].evidence for r in e.rows]
    assert rows and not any("gemv" in r for r in rows)
    pools = {p["pool"]: p["ms"] for p in mp.recovers}
    assert set(pools) == {"tc_eligible_kernels", "non_matmul_kernels"}
    assert tc.ms_per_step <= pools["tc_eligible_kernels"] and 0 < mp.ms_per_step == pytest.approx(sum(pools.values()))


def test_an_outer_product_is_told_nothing_of_tensor_cores():
    """HTA's inference_rank_1 (PyTorch 1.8-1.10, an fp16 inference excerpt): its one 16-bit "GEMM off the Tensor Cores"
    is cuBLAS's ``gemmk1_kernel`` -- k = 1, an outer product with nothing to accumulate, which cuBLAS picks for k = 1
    whatever the other dims.  main told it "fp16 dims must be multiples of 8 elements for Tensor Cores" (misaligned_dims)
    and to run under autocast in float16 (tensor_core_unused) -- advice its arithmetic cannot use, for a kernel already
    in fp16.  Its 6 us are element-wise work now; the other GEMM stays matrix work."""
    rep = run_report(FIXTURES / "gaps", "inference_rank_1")
    assert not {f.rule for f in rep.findings} & {"tensor_core_unused", "misaligned_dims"}
    classes = {c["class"]: c["us_per_step"] for c in rep.hosts[0].kernel_classes}
    assert classes["elementwise"] == pytest.approx(9.0 + 6.0, abs=0.01)  # main: 9.0 (2 kernels); + gemmk1's 6 us
    assert classes["matmul/conv"] == pytest.approx(21.0 - 6.0, abs=0.01)  # main: 21.0 (gemmk1 and one GEMM)


@pytest.mark.parametrize("name", [
    # vLLM's ROCm LLMM1 op (csrc/rocm/skinny_gemms.cu: ``template <typename scalar_t, int NUM_A_ROWS_PER_BLOCK>
    # __global__ void LLGemm1_kernel(const scalar_t* in_a, const scalar_t* in_b, scalar_t* out_c, const int K)``: one
    # column of B, each row's dot product reduced across the warps in shared memory), as a demangler prints it
    "void LLGemm1_kernel<__half, 4>(__half const*, __half const*, __half*, int)",
    "void LLGemm1_kernel<__hip_bfloat16, 2>(__hip_bfloat16 const*, __hip_bfloat16 const*, __hip_bfloat16*, int)",
])
def test_a_matrix_vector_product_named_gemm_is_no_gemm(name):
    """``devices.matrix_vector_one`` claims ``LLGemm1_kernel`` (``amd._MATRIX_VECTOR``) and says the GEMM readers
    claim none of its kernels -- but ROCm's GEMM pattern matched "Gemm" in its name, so main read it as matrix-unit
    GEMM work (Tensor-Core-eligible, class matmul/conv: precision and Matrix Core advice for a memory-bound dot
    product).  One reading now: a matrix x vector product is no GEMM, whatever its name says (h37-review26)."""
    assert devices.matrix_vector_one(name)
    assert not devices.gemm_kernel_one(name)
    assert _class_of(name) == "reduction"
