"""Kernel families by what a kernel does, over a corpus of real kernel names (issue #37, h37-kernfam2).

``tests/fixtures/kernel_names/corpus.tsv`` holds real names -- from the kept captures and from public profiles of
FlashAttention 2/3/4, FlashInfer, cuDNN's SDPA, Composable Kernel, aiter, DeepGEMM, CUTLASS 3, the 4-bit weight GEMMs,
Inductor's Triton kernels and the communication libraries -- each with its class, precision and matrix-unit use read
by hand from the library's source (its provenance is in the file).  The assumptions these rows caught on main:

* a fused attention kernel says ``flash_fwd``/``flash_bwd``/``fmha``: FlashAttention 3's ``FlashAttnFwdSm90`` and
  ``FlashAttnBwdSm90``, FlashInfer's ``BatchPrefillWithPagedKVCacheKernel`` were "other" kernels off the Tensor Cores,
  while FlashAttention 2's split-KV *combine* (an LSE-weighted sum) was a Tensor Core matmul by its ``flash_fwd``;
* a kernel's precision is the first dtype word in its whole name, bf16 before fp16 and fp8: FlashAttention 3 on fp16
  read bf16 (its output type), DeepGEMM's ``fp8_gemm_kernel<...>(__nv_bfloat16*, ...)`` bf16, a CUTLASS fp8 GEMM bf16,
  and the Itanium mangling ``DF16b`` (bf16) fp16;
* Tensor Cores are named by a library's fragment list: CuTe's MMA atoms (``SM100_MMA_F16BF16_SS``), Blackwell's UMMA
  mainloop, cuDNN's sm80/sm100 flash engines, an fp8 GEMM (no CUDA core computes fp8) and a GEMM naming its
  ``mma.sync`` shape (AWQ's ``m16nXk32``) were CUDA-core work;
* attention helpers and compiler-generated kernels are what their other words say: Composable Kernel's ``OGradDotO``
  (a row-wise dot) and ``ConvertQGrad`` (a cast) "other", Inductor's ``triton_per_`` reductions and ``triton_poi_``
  pointwise kernels "other", its ``triton_red_fused_add_mean_mul_pow_rsqrt_0`` "elementwise" by the ``_add_`` of its
  fused ops; and a Triton fp8 matmul (``_w8a8_block_fp8_matmul``) no matmul at all.
"""

from __future__ import annotations

import pytest

from tests.support.kernel_reading import reading
from tests.support.paths import FIXTURES

CORPUS = FIXTURES / "kernel_names" / "corpus.tsv"


#: The matrix-unit column: 1 runs on them, 0 does not, ? its name cannot tell (``frameworks.matrix_unit_unknown_one``).
_UNITS = {"1": True, "0": False, "?": "?"}


def _rows() -> list[tuple[str, str, bool | str, str]]:
    out = []
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        cls, prec, tc, name = line.split("\t", 3)
        out.append((cls, prec, _UNITS[tc], name))
    return out


ROWS = _rows()


def test_the_corpus_covers_every_family_it_names():
    groups = [ln.split(":", 1)[0][len("# group "):] for ln in CORPUS.read_text(encoding="utf-8").splitlines()
              if ln.startswith("# group ")]
    assert {"fa3", "fa4", "fa2", "flashinfer", "cudnn", "ck", "aiter", "deepgemm", "cutlass3", "quant", "inductor", "tritonlib",
            "comm", "tritonattn", "tritonmoe", "norm", "aiterasm", "rocmskinny", "datamove", "vllmrocm", "aiterpa", "sage",
            "cutedsl", "normapply", "bytes", "blasgemv", "fbgemm", "moerouting", "enginekv", "resample", "primitives"} <= set(groups)
    assert len(ROWS) >= 70


@pytest.mark.parametrize("cls, prec, tc, name", ROWS, ids=[f"{i}:{r[3][:48]}" for i, r in enumerate(ROWS)])
def test_each_real_name_reads_as_what_it_does(cls, prec, tc, name):
    assert reading(name) == (cls, prec, tc)
