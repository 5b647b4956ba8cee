"""ggml's own CUDA kernels (llama.cpp, whisper.cpp), on any vendor's GPU: HIP and MUSA builds compile the same
``ggml/src/ggml-cuda/*.cu`` files, so a ROCm trace names them as a CUDA one does (``[clone .kd]`` aside).

ggml names its matrix products by what they multiply (``ggml/src/ggml-cuda/``; truth from its source):

* ``mul_mat_<q|f>`` -- a tiled matrix x matrix product (a prefill, a batch of tokens): ``q`` (mmq.cuh) multiplies
  quantized weights (``(ggml_type)N``: Q4_0, Q6_K, ...) by activations quantized to ``q8_1`` first
  (``quantize_mmq_q8_1``), in int8 dot products -- int8 MMA on Tensor Cores (Turing on), MFMA on CDNA, WMMA on RDNA 3/4
  where the build and the GPU have them, ``dp4a`` elsewhere; ``f`` (mmf.cuh) multiplies float weights (its ``T``:
  ``float``, ``half2``, ``nv_bfloat162``) with ``mma`` tiles only (ggml picks it only where those run).
  ``_ids`` is the Mixture-of-Experts form (expert ids per row).
* ``mul_mat_vec_<q|f>`` (mmvq.cu, mmvf.cu) and the older ``dequantize_mul_mat_vec`` -- a matrix x vector product (a
  decode's token, a few columns at most): each weight is read once and used once, so no matrix unit helps; ``q``'s dot
  products are int8 ones (``vec_dot_*_q8_1``: ``dp4a``) whatever its ``float*`` output says.
* ``flash_attn_ext_f16`` (fattn-mma-f16.cuh, fattn-wmma-f16.cu) -- the fused attention whose QK^T and PV products
  are ``mma`` / WMMA tiles in fp16; ``flash_attn_tile`` and ``flash_attn_ext_vec`` are its forms on the vector units
  (where the GPU or the head size has no such tile), not claimed here.
"""

from __future__ import annotations

import re
from functools import lru_cache

from tb_gpu_advisor.devices.codes import P_INT8, function_parts

#: ggml's matrix products by its naming (see the module's docstring).  Group 1: ``vec_`` (matrix x vector) or none;
#: group 2: ``q`` (quantized, int8 dot products) or ``f`` (float).
_MUL_MAT = re.compile(r"mul_mat_(vec_)?([qf])(?:_ids)?")
_DEQUANTIZE_VEC = "dequantize_mul_mat_vec"
#: ggml's fused attention on matrix tiles (``mma`` on NVIDIA, WMMA / rocWMMA on AMD), fp16 by its name.
_ATTENTION_TILES = "flash_attn_ext_f16"


def _own(name: str) -> str:
    """The kernel's own function, bare: ``void mul_mat_q<(ggml_type)2, 128, false>(char const*, ...) [clone .kd]`` ->
    ``mul_mat_q``.  ggml's kernels are ``static`` and namespace-free, so a qualified name (``ns::mul_mat_q``) is
    somebody else's kernel ("" here); a mangled one (``_Z9mul_mat_qI...``) reads as its identifier.  Read by
    ``codes.function_parts``, every vendor's reader of a kernel's own function."""
    parts = function_parts(name)
    return parts[0] if len(parts) == 1 else ""


@lru_cache(maxsize=65536)
def _product(name: str) -> tuple[bool, str] | None:
    """(matrix x vector, ``q`` or ``f``) of one of ggml's matrix products, None for any other kernel."""
    own = _own(name)
    if own == _DEQUANTIZE_VEC:
        return True, "f"
    m = _MUL_MAT.fullmatch(own)
    if not m:
        return None
    return bool(m.group(1)), m.group(2)


def matrix_product_one(name: str) -> bool:
    """One of ggml's tiled matrix x matrix products (``mul_mat_q``, ``mul_mat_f``, their ``_ids`` forms) or its fused
    attention on matrix tiles: GEMM work.  Not the matrix x vector products: a decode's weights are each used once, so
    their time is the memory's, never a matrix unit's to miss (as a FlashInfer decode is no GEMM either)."""
    p = _product(name)
    return (p is not None and not p[0]) or _own(name) == _ATTENTION_TILES


def matrix_vector_one(name: str) -> bool:
    """One of ggml's matrix x vector products (``mul_mat_vec_q``, ``mul_mat_vec_f``, ``dequantize_mul_mat_vec``): a
    decode's weights, each read once for one token -- a dot product per output row, the memory's time."""
    p = _product(name)
    return p is not None and p[0]


def matrix_unit_one(name: str) -> bool:
    """On the matrix units by ggml's own choice: ``mul_mat_f`` (only ever ``mma`` tiles) and ``flash_attn_ext_f16``."""
    return _product(name) == (False, "f") or _own(name) == _ATTENTION_TILES


def matrix_unit_unknown_one(name: str) -> bool:
    """``mul_mat_q``: its int8 products run as MMA / MFMA / WMMA where the build and the GPU have them, as ``dp4a``
    elsewhere -- the name does not say which, so no Tensor Core check counts it as using the units or missing them."""
    return _product(name) == (False, "q")


def precision(name: str) -> int | None:
    """int8 for ggml's quantized products (``mul_mat_q``, ``mul_mat_vec_q``: int8 dot products of ``q8_1``
    activations, whatever their ``char const*`` inputs or ``float*`` output say); None where the kernel's own dtype
    words decide (``mul_mat_f<float, ...>``, ``flash_attn_ext_f16``)."""
    p = _product(name)
    return P_INT8 if p is not None and p[1] == "q" else None
