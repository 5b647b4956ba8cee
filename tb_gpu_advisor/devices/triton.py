"""Kernels the Triton compiler builds for the serving and attention libraries, on any vendor's GPU.

A Triton kernel is named for its Python function (``@triton.jit def _attn_fwd(...)``), with no library prefix, no
template arguments and, mostly, no dtype.  What it computes is what the name's structure says, and whether it runs on
the matrix units follows from how Triton compiles it: ``tl.dot`` lowers to the Tensor Cores' ``mma``/``wgmma`` and to
AMD's MFMA for every 16-bit, 8-bit and fp8 operand; only an fp32 ``tl.dot`` may stay on the CUDA cores (its
``input_precision="ieee"``; the default is TF32 on NVIDIA).  So a ``tl.dot`` kernel whose name gives a 16-bit or
narrower dtype (``_matmul_ogs_NNT_bf16xbf16xmxfp4_...``) is matrix-unit work, and one whose name gives none
(``attn_fwd``, ``fused_moe_kernel``) is GEMM work whose matrix-unit use the name cannot tell (never counted as a miss).

The families (h37-kernfam3; truth from each library's source, ``tests/fixtures/kernel_names/corpus.tsv``):

* attention passes built on ``tl.dot`` (QK^T, then PV, a tile of queries at a time): Triton's fused-attention
  tutorial and the AMD flash-attention Triton backend (``attn_fwd``, ``_attn_fwd``, ``_attn_bwd_dkdv``,
  ``_attn_bwd_dq``), LightLLM's and SGLang's prefill/extend attention (``_fwd_kernel``), SGLang's *grouped* decode
  (``_fwd_grouped_kernel_stage1``: the query heads sharing a KV head are the tile's rows), vLLM's unified attention
  (``kernel_unified_attention_2d`` / ``_3d``: the query tokens times the heads of a KV group);
* their helpers: the backward's row-wise dot of dO and O (``_attn_bwd_preprocess``, ``_bwd_preprocess``), a reduction;
* the decode passes that multiply one query row by the keys (SGLang's non-grouped ``_fwd_kernel_stage1``) are
  matrix-vector work, none of these (their class stays what their other words say);
* Mixture-of-Experts GEMMs: vLLM's and SGLang's ``fused_moe_kernel`` (and its GPTQ/AWQ variant, whose int4 weights are
  widened before the ``tl.dot``), the ``triton_kernels`` package's ``_matmul_ogs_<layout>_<a>x<b>x<w>_...`` and its
  persistent ``_p_matmul_ogs_...`` (gpt-oss in vLLM: bf16 activations times mxfp4 weights).
"""

from __future__ import annotations

import re
from functools import lru_cache

from tb_gpu_advisor.devices.codes import head

#: A Triton kernel's own name: a bare identifier (a C++ kernel has a namespace, template arguments or parameters).
_BARE = re.compile(r"[A-Za-z_]\w*")
#: Attention passes on ``tl.dot`` (see the module's docstring); the backward's ``preprocess`` is its helper.
_ATTENTION = re.compile(r"_?attn_(?:fwd|bwd)(?!_preprocess)(?:_\w*)?|_fwd_kernel|_fwd_grouped_kernel_stage1|"
                        r"kernel_unified_attention_[23]d")
_ATTENTION_HELPER = re.compile(r"_?(?:attn_)?bwd_preprocess\w*")
#: Quantized attention: aiter's Triton SageAttention (ROCm/aiter aiter/ops/triton/_triton_kernels/attention/
#: fav3_sage_attention.py @12d5bf9c, ``sage_fwd``; ``sage_fwd_v3``, ``sage_fwd_mxfp4``, ``sage_fwd_vfa`` beside it):
#: ``tl.dot`` of int8 Q and K (quantized per block by ``sage_quant_kernel`` first), then of P and an fp8 (or mxfp4) V --
#: operands every matrix unit takes, so on them whatever dtype the name leaves out (xDiT's Flux on an MI300X: the
#: kept ``wild/xdit_flux_mi300x_denoise``, 10 ms a capture).
_QUANTIZED_ATTENTION = re.compile(r"sage_fwd(?:_\w*)?")
#: Mixture-of-Experts GEMMs on ``tl.dot``.
_MOE_GEMM = re.compile(r"fused_moe_kernel\w*|_(?:p_)?matmul_ogs\w*")


def _bare(name: str) -> str:
    """The name when it is a bare identifier (a Triton kernel's form), else ""."""
    name = head(name).strip()
    return name if _BARE.fullmatch(name) else ""


@lru_cache(maxsize=65536)
def dot_kernel_one(name: str) -> bool:
    """A library's Triton kernel whose work is ``tl.dot`` tiles: an attention pass or a MoE GEMM."""
    own = _bare(name)
    return bool(own) and bool(_ATTENTION.fullmatch(own) or _MOE_GEMM.fullmatch(own)) or quantized_dot_one(name)


def quantized_dot_one(name: str) -> bool:
    """A Triton ``tl.dot`` kernel whose operands its own algorithm quantizes to 8 bits or fewer (``_QUANTIZED_ATTENTION``):
    on the matrix units, though its name gives no dtype."""
    own = _bare(name)
    return bool(own) and bool(_QUANTIZED_ATTENTION.fullmatch(own))


def attention_helper_one(name: str) -> bool:
    """A Triton attention backward's helper (the row-wise dot of dO and O): attention's family, no matmul."""
    own = _bare(name)
    return bool(own) and bool(_ATTENTION_HELPER.fullmatch(own))


#: The ``triton_kernels`` package's Mixture-of-Experts routing and combine kernels (triton-lang/triton
#: python/triton_kernels: ``topk.py``, ``bitmatrix.py``, ``routing.py``, ``matmul_ogs``'s ``reduce``; gpt-oss's MoE in
#: vLLM): ``_topk_forward`` picks each token's top-k experts from its logits (a selection over the row);
#: ``_sum_bitmatrix_rows`` counts the tokens per expert from the top-k bitmatrix (population counts summed);
#: ``_combined_routing_memset`` prefix-sums that histogram into the experts' token and tile offsets (its other blocks
#: fill the index buffers); ``_combined_routing_compute`` sorts a block's (expert, slot) pairs and scans their run
#: lengths into each pair's gather and scatter index; ``_finalize_matmul[_scatter]_<dtype>`` sums each token's k
#: expert outputs (its ``EXPT_PER_TOK``-way reduction) -- reductions; ``_sum_bitmatrix_memset`` and
#: ``_routing_clear_bitmatrix`` zero their outputs (element-wise).  They were "other" (h37-kernelfam3): 7.1% of a
#: gpt-oss decode step on an MI300X.
_MOE_ROUTING_REDUCE = re.compile(r"_topk_forward|_sum_bitmatrix_rows|_combined_routing_(?:memset|compute)\w*|"
                                 r"_finalize_matmul(?:_scatter)?_\w+")
_MOE_ROUTING_FILL = re.compile(r"_sum_bitmatrix_memset|_routing_clear_bitmatrix")


def moe_routing_kind(name: str) -> str | None:
    """The class of a ``triton_kernels`` MoE routing or combine kernel (``_MOE_ROUTING_REDUCE``,
    ``_MOE_ROUTING_FILL``) by its bare name; None for any other kernel."""
    own = _bare(name)
    if own and _MOE_ROUTING_REDUCE.fullmatch(own):
        return "reduction"
    if own and _MOE_ROUTING_FILL.fullmatch(own):
        return "elementwise"
    return None
