"""Classify GPU kernel and TF op names: Tensor Cores, precision, collectives, elementwise, copies.

Every classifier takes a list of *distinct* names (a plane's interned
``event_names``) and returns one numpy array entry per name; callers index
the result with the events' ``name_id`` column, so each distinct name is
classified once however many events use it.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

#: Tensor Core kernel name fragments.  The first block is the stock tool's list
#: (xprof gpu_utils.cc, pre-Hopper); the second block adds what it misses.
#: Each entry: fragment -> why it means Tensor Cores.
TENSOR_CORE_PATTERNS: dict[str, str] = {
    # --- stock list (xprof 2.24) ---
    "16816": "mma.m16n8k16 tile (Ampere+ HMMA/IMMA)",
    "c1688": "complex/tf32 m16n8k8 HMMA tile",
    "conv1x1": "cuDNN 1x1 conv kernel family that uses HMMA",
    "conv2d_c1_k1": "cuDNN 1x1 conv (HMMA)",
    "dgrad_1x1_stride_2x2": "cuDNN dgrad 1x1 stride-2 HMMA kernel",
    "direct_group": "cuDNN grouped direct conv (HMMA)",
    "first_layer_wgrad_kernel": "cuDNN first-layer wgrad (HMMA)",
    "h1688": "fp16 m16n8k8 HMMA (Turing/Ampere cuBLAS/cuDNN)",
    "h884": "fp16 m8n8k4 HMMA (Volta cuBLAS/cuDNN)",
    "hmma": "explicit HMMA instruction family",
    "i16832": "int8 m16n8k32 IMMA",
    "i8816": "int8 m8n8k16 IMMA",
    "s884": "fp32-accumulate m8n8k4 HMMA (Volta)",
    "s1688": "fp32-accumulate m16n8k8 HMMA (Turing/Ampere)",
    "xmma_gemm": "NVIDIA xMMA GEMM library (Tensor Core only)",
    "xmma_implicit_gemm": "xMMA implicit-GEMM convolution",
    "xmma_sparse_conv": "xMMA sparse conv (Ampere sparsity)",
    "xmma_sparse_gemm": "xMMA sparse GEMM",
    "xmma_warp_specialized_implicit_gemm": "xMMA warp-specialized conv",
    # --- added: Ampere / Ada / Hopper / Blackwell names the stock list misses ---
    "wgmma": "Hopper warpgroup MMA instruction (sm90)",
    "gmma": "Hopper GMMA kernels (cutlass 'gmma' collective mainloops)",
    "sm90_xmma": "cuBLAS/cuDNN Hopper xMMA kernels",
    "sm80_xmma": "cuBLAS/cuDNN Ampere xMMA kernels",
    "sm86_xmma": "Ampere GA10x xMMA kernels",
    "sm89_xmma": "Ada xMMA kernels",
    "sm100_xmma": "Blackwell xMMA kernels",
    "tensorop": "CUTLASS Tensor Core op class (e.g. cutlass_80_tensorop_s16816gemm)",
    "s16816": "fp32-accumulate m16n8k16 MMA (Ampere cuBLAS, e.g. ampere_fp16_s16816gemm)",
    "h16816": "fp16-accumulate m16n8k16 MMA",
    "bf16816": "bf16 m16n8k16 MMA",
    "s1688gemm": "tf32/fp16 m16n8k8 GEMM (Ampere tf32)",
    "i8816gemm": "int8 IMMA GEMM",
    "tf32": "tf32 math only exists on Tensor Cores",
    "hopper": "cuDNN/cuBLAS 'hopper' kernel families (sm90 MMA)",
    "_hmma_": "HMMA kernels by instruction name",
    "imma": "int8 IMMA kernels",
    "cutlass3x_sm90": "CUTLASS 3 sm90 kernels (wgmma)",
    "nvjet": "cuBLASLt Hopper/Blackwell 'nvjet' GEMM kernels (Tensor Core)",
    "flash_fwd": "FlashAttention kernels (mma.sync/wgmma)",
    "flash_bwd": "FlashAttention backward (mma.sync/wgmma)",
}

#: CUDA-core GEMMs whatever library prefix they carry: SIMT kernels, FFMA (fp32 fused multiply-add) math, and
#: xMMA GEMMs whose inputs *and* math are fp32 (``sm80_xmma_gemm_f32f32_f32f32_f32_..._ffma``; the TF32 variant
#: reads ``f32f32_tf32f32``).  Seen in the real H100 JAX captures with ``precision=HIGHEST``.
#: (``sgemm_`` names that also say ``tensorop`` are Tensor Core GEMMs: :func:`_tc_one` checks that in linear
#: time; the old ``sgemm_(?!.*tensorop)`` scanned to the end of the name from every ``sgemm_``, quadratic.)
_TC_EXCLUDE = re.compile(r"simt|ffma|f32f32_f32f32|sgemm_", re.I)

#: Names are classified by their first ``MAX_CLASSIFIED_CHARS`` characters only (real kernel names are a few
#: hundred characters; the longest in the real captures is 523).  With every regex here linear, this bounds
#: the work per distinct name whatever a file holds: an 80 kB ``hlo_op`` or kernel name costs what 4 kB do.
MAX_CLASSIFIED_CHARS = 4096


def _head(name: str) -> str:
    """The part of a name the classifiers look at (see ``MAX_CLASSIFIED_CHARS``)."""
    return name if len(name) <= MAX_CLASSIFIED_CHARS else name[:MAX_CLASSIFIED_CHARS]

#: Op types whose work Tensor Cores can do (stock list + Einsum, which lowers to BatchMatMul).
TC_ELIGIBLE_OP_PREFIXES: tuple[str, ...] = (
    "Conv2D",  # Conv2D, Conv2DBackpropInput/Filter
    "Conv3D",
    "DepthwiseConv2dNative",
    "MatMul",
    "FusedMatMul",
    "_FusedMatMul",
    "_FusedConv2D",
    "XlaDot",  # XlaDot, XlaDotV2
    "XlaConv",  # XlaConv, XlaConvV2
    "XlaEinsum",
    "CudnnRNN",
    "BatchMatMul",
    "Einsum",
)

_FP16 = re.compile(r"half|fp16|f16(?!\d)|__half|h884|h1688|h16816|hgemm|hmma|float16", re.I)
_BF16 = re.compile(r"bf16|bfloat16|__nv_bfloat16", re.I)
_INT8 = re.compile(r"int8|i8816|i16832|imma|s8s8|u8s8|\bchar\b", re.I)
_FP8 = re.compile(r"fp8|e4m3|e5m2", re.I)
_TF32 = re.compile(r"tf32", re.I)
_FP64 = re.compile(r"\bdouble\b|dgemm|fp64|f64", re.I)

_COLLECTIVE = re.compile(r"^nccl|nccl|allreduce|all_reduce|reducescatter|reduce_scatter|allgather|all_gather|alltoall|collective-permute", re.I)

#: Elementwise kernels: Eigen's elementwise evaluators, TF's generic
#: elementwise functors, XLA loop fusions of one op, cuDNN/cutlass excluded.
_ELEMENTWISE = re.compile(
    r"EigenMetaKernel|scalar_\w{1,64}?_op|TensorCwise|cwise|elementwise|vectorized_elementwise|"
    r"BinaryFunctor|UnaryFunctor|_add_|_mul_|loop_(add|multiply|subtract|divide|convert|exp|tanh|select)",
    re.I,
)
_REDUCTION = re.compile(r"Reduc|reduce|TensorReductionOp|ColumnReduce|RowReduce|BlockReduce", re.I)

MEMCPY_NAMES = {
    "MemcpyH2D": "h2d",
    "MemcpyD2H": "d2h",
    "MemcpyD2D": "d2d",
    "MemcpyP2P": "p2p",
    "MemcpyOther": "other",
    "Memset": "memset",
    # CUPTI activity names as PyTorch's profiler (Kineto) writes them: "Memcpy HtoD (Pinned -> Device)"
    "Memcpy HtoD": "h2d",
    "Memcpy DtoH": "d2h",
    "Memcpy DtoD": "d2d",
    "Memcpy PtoP": "p2p",
}
#: Kineto names carry the memory kinds after the direction: "Memcpy DtoH (Device -> Pageable)"
_KINETO_COPY = re.compile(r"^(Memcpy [HDP]to[HDP])\b")

#: Kernel kind codes (int8 arrays).
KIND_KERNEL, KIND_H2D, KIND_D2H, KIND_D2D, KIND_COLLECTIVE, KIND_OTHER_COPY = 0, 1, 2, 3, 4, 5
_COPY_KIND = {"h2d": KIND_H2D, "d2h": KIND_D2H, "d2d": KIND_D2D, "p2p": KIND_D2D, "memset": KIND_D2D, "other": KIND_OTHER_COPY}

#: ``unknown``: the name carries no dtype (XLA fusions, Triton GEMMs, ``Memset``): a value of its own, never fp32.
PRECISIONS = ("fp32", "fp16", "bf16", "int8", "fp8", "tf32", "fp64", "other", "unknown")
P_FP32, P_FP16, P_BF16, P_INT8, P_FP8, P_TF32, P_FP64, P_OTHER, P_UNKNOWN = range(9)
#: Precisions of 16 bits or fewer (what mixed precision aims for).
LOW_PRECISIONS = ("fp16", "bf16", "int8", "fp8")

_TC_RE = re.compile("|".join(re.escape(p) for p in TENSOR_CORE_PATTERNS), re.I)


@lru_cache(maxsize=65536)
def _tc_one(name: str) -> bool:
    """The kernel uses Tensor Cores, by name (a Tensor Core family, not a CUDA-core variant of one)."""
    name = _head(name)
    if not _TC_RE.search(name):
        return False
    return not _TC_EXCLUDE.search(name) or "tensorop" in name.lower()


def tensor_core(names: list[str]) -> np.ndarray:
    """Bool per name: the kernel uses Tensor Cores (by name)."""
    return np.fromiter((_tc_one(n) for n in names), dtype=bool, count=len(names))


#: Explicit fp32 evidence in a kernel name: cuBLAS/CUTLASS SGEMMs, FFMA math, fp32 xMMA operands, C++ ``float``
#: template arguments (Eigen, TF functors, NCCL ``_float``), ``fp32``/``f32``.  ``tf32`` is tested before.
_FP32 = re.compile(r"sgemm|ffma|f32f32_f32f32|\bfloat\b|_float\b|<float|fp32|(?<![a-z0-9])f32(?!\d)|single", re.I)
#: cuBLASLt Hopper/Blackwell GEMMs: ``nvjet_[smXX_]<types>_...``; the first letter is the input type
#: (``hsh`` fp16, ``tst``/``tss`` bf16, ``sss`` fp32 or TF32 with a ``_tf32`` suffix, ``qqtst`` fp8).
_NVJET = re.compile(r"nvjet_(?:sm\d+_)?([a-z]{3,6})_", re.I)
_NVJET_INPUT = {"h": P_FP16, "t": P_BF16, "s": P_FP32, "q": P_FP8, "e": P_FP8, "d": P_FP64, "i": P_INT8}


@lru_cache(maxsize=65536)
def precision_one(name: str) -> int:
    """Precision code of one kernel name or shape string (P_* constants); bf16 before fp16.

    Only what the name says: a name with no dtype in it (XLA ``fusion_N``, Triton ``gemm_fusion_dot``,
    ``Memset``) is ``P_UNKNOWN``, never fp32 -- counting it as fp32 raised false "mixed precision is off"
    alarms on bf16 JAX captures.
    """
    name = _head(name)
    if _BF16.search(name):
        return P_BF16
    if _FP8.search(name):
        return P_FP8
    if _FP16.search(name):
        return P_FP16
    if _INT8.search(name):
        return P_INT8
    if _TF32.search(name):
        return P_TF32
    if _FP64.search(name):
        return P_FP64
    m = _NVJET.search(name)
    if m:
        return _NVJET_INPUT.get(m.group(1)[0].lower(), P_UNKNOWN)
    if _FP32.search(name):
        return P_FP32
    return P_UNKNOWN


def precision(names: list[str]) -> np.ndarray:
    """int8 precision code per name (see PRECISIONS)."""
    return np.fromiter((precision_one(n) for n in names), dtype=np.int8, count=len(names))


def _copy_name(name: str) -> str:
    """A copy's name without what Kineto appends to it (``Memcpy HtoD (Pinned -> Device)`` -> ``Memcpy HtoD``)."""
    m = _KINETO_COPY.match(name)
    return m.group(1) if m else name


def device_kind(names: list[str]) -> np.ndarray:
    """int8 kind per device event name: kernel, each copy kind, collective."""
    out = np.empty(len(names), dtype=np.int8)
    for i, n in enumerate(names):
        n = _copy_name(_head(n))
        if n in MEMCPY_NAMES:
            out[i] = _COPY_KIND[MEMCPY_NAMES[n]]
        elif n.startswith("Memcpy") or n.startswith("Memset"):
            out[i] = KIND_OTHER_COPY if "Memcpy" in n else KIND_D2D
        elif _COLLECTIVE.search(n):
            out[i] = KIND_COLLECTIVE
        else:
            out[i] = KIND_KERNEL
    return out


def copy_direction(name: str) -> str | None:
    """"h2d", "d2h", ... for a memcpy event name, else None."""
    name = _copy_name(name)
    if name in MEMCPY_NAMES:
        return MEMCPY_NAMES[name]
    if name.startswith("Memcpy"):
        return "other"
    if name.startswith("Memset"):
        return "memset"
    return None


def collective(names: list[str]) -> np.ndarray:
    """Bool per name: a collective (NCCL) kernel."""
    return np.fromiter((bool(_COLLECTIVE.search(_head(n))) for n in names), dtype=bool, count=len(names))


def _elementwise_one(name: str) -> bool:
    """An elementwise kernel name that is neither a reduction nor a Tensor Core kernel."""
    return bool(_ELEMENTWISE.search(name)) and not _REDUCTION.search(name) and not _tc_one(name)


#: kernel classes of a report's ``kernel_classes`` summary (and the diff's kernel-class changes)
KERNEL_CLASSES = ("matmul/conv", "elementwise", "reduction", "collective", "other")


def kernel_class(name: str, *, tensor_core: bool, tc_eligible: bool, elementwise: bool, collective: bool) -> str:
    """One class per kernel: collectives first (NCCL kernels can match other patterns), then MatMul/Conv (a
    Tensor Core kernel or a kernel of a Tensor-Core-eligible op), then element-wise, reduction, other."""
    if collective:
        return "collective"
    if tensor_core or tc_eligible:
        return "matmul/conv"
    if elementwise:
        return "elementwise"
    if _REDUCTION.search(_head(name)):
        return "reduction"
    return "other"


def elementwise(names: list[str]) -> np.ndarray:
    """Bool per kernel name: an elementwise kernel (fusion candidate); reductions excluded."""
    return np.fromiter(
        (_elementwise_one(_head(n)) for n in names),
        dtype=bool,
        count=len(names),
    )


#: GEMM / convolution kernels by name: work Tensor Cores can do, whatever op (if any) launched it.  XLA's
#: Triton GEMMs (``gemm_fusion_dot*``), cuBLAS(Lt) (``*gemm*``, ``nvjet``, ``xmma``), CUTLASS, cuDNN convolutions
#: and fused attention.  ``convert`` fusions are not convolutions.
_GEMM_KERNEL = re.compile(r"gemm|nvjet|xmma|s884|h884|s1688|h1688|16816|hmma|wgmma|implicit_convolve|conv2d|conv3d|"
                          r"_conv_|convolution|fprop|dgrad|wgrad|flash_fwd|flash_bwd|fmha", re.I)


def _cudnn_attention(lower: str) -> bool:
    """``cudnn`` followed anywhere later by ``attn``/``attention``, in linear time (was ``cudnn.*(attn|attention)``,
    which rescans the rest of the name from every ``cudnn``: quadratic)."""
    i = lower.find("cudnn")
    if i < 0:
        return False
    return lower.find("attn", i + 5) >= 0 or lower.find("attention", i + 5) >= 0


@lru_cache(maxsize=65536)
def gemm_kernel_one(name: str) -> bool:
    """A matmul/convolution kernel by name (Tensor-Core-eligible work)."""
    name = _head(name)
    gemm = bool(_GEMM_KERNEL.search(name)) or _cudnn_attention(name.lower())
    return gemm and not _COLLECTIVE.search(name)


def gemm_kernel(names: list[str]) -> np.ndarray:
    return np.fromiter((gemm_kernel_one(n) for n in names), dtype=bool, count=len(names))


def op_type(tf_op: str) -> str:
    """Type of a TF op event name ``scope/name:Type`` (or the name itself)."""
    if not tf_op:
        return ""
    t = tf_op.rsplit(":", 1)[-1] if ":" in tf_op else tf_op.rsplit("/", 1)[-1]
    return t.split("#", 1)[0].strip()


def op_name(tf_op: str) -> str:
    return tf_op.rsplit(":", 1)[0] if ":" in tf_op else tf_op


#: HLO op types (an HLO instruction name without its ``.N`` suffix, see :func:`hlo_op_type`) whose work
#: Tensor Cores can do: matmuls and convolutions, as XLA GPU names them.  ``custom-call`` is the HLO
#: opcode of library calls (cuBLAS GEMMs, cuDNN convolutions) when the thunk keeps the opcode as its name.
_HLO_MATMUL = re.compile(r"^dot$|^dot_|gemm|matmul|cublas", re.I)  # dot, cublas-gemm, gemm_fusion, triton_gemm, cublas-lt-matmul
_HLO_CONV = re.compile(r"convolution|cudnn-conv|cudnn_conv|conv_fusion", re.I)  # not loop_convert_fusion
HLO_CUSTOM_CALL = "custom-call"
#: Prefix of the ``tf_op`` stat XLA GPU kernels carry: the outermost annotation, the module
#: (``XlaModule:#prefix=..,hlo_module=..,program_id=..#`` parsed down to its name ``XlaModule:``).
XLA_MODULE_ANNOTATION = "XlaModule"
#: The ``.N`` suffixes ``hlo_op_type`` removes.  Not ``re.sub(r"(\.\d+)+$")``: that regex retries from every
#: position, quadratic in the name (an 80 kB hlo_op took 35 s holding the GIL); ``_strip_hlo_suffix`` is linear.
_HLO_SUFFIX_DIGITS = re.compile(r"\d+")


def _strip_hlo_suffix(t: str) -> str:
    """``t`` without its trailing ``(.<digits>)+``, scanning from the end once (linear)."""
    end = len(t)
    while True:
        dot = t.rfind(".", 0, end)
        if dot < 0 or not _HLO_SUFFIX_DIGITS.fullmatch(t, dot + 1, end):
            return t[:end]
        end = dot


def is_xla_module_annotation(tf_op: str | None) -> bool:
    """The ``tf_op`` text is XLA's module annotation (no framework op behind the kernel)."""
    return bool(tf_op) and tf_op.split(":", 1)[0].split("#", 1)[0].strip() == XLA_MODULE_ANNOTATION


def hlo_op_type(hlo_op: str) -> str:
    """Op type of an HLO instruction name: the name without its numeric suffix.

    ``cublas-gemm.3`` -> ``cublas-gemm``; ``loop_add_fusion.2`` -> ``loop_add_fusion``; ``%dot.1`` -> ``dot``.
    XLA names instructions after their opcode (``dot``, ``convolution``, ``custom-call``) or fusion kind.
    """
    t = _head(hlo_op).strip().lstrip("%")
    return _strip_hlo_suffix(t) or t


def hlo_op_class(op_type_: str) -> str:
    """What an HLO op type does: matmul, conv, elementwise fusion, reduction fusion, fusion, or other."""
    t = _head(op_type_).lower()
    if _HLO_CONV.search(t):
        return "conv"
    if _HLO_MATMUL.search(t) or t == HLO_CUSTOM_CALL:
        return "matmul"
    if t.startswith("loop_") and t.endswith("fusion"):
        return "elementwise fusion"
    if "reduce" in t or "reduction" in t:
        return "reduction fusion" if "fusion" in t else "reduction"
    if t == "fusion" or t.endswith("fusion"):
        return "fusion"
    return "other"


def hlo_tc_eligible_type(op_type_: str) -> bool:
    """HLO op type whose work Tensor Cores can do (dot / GEMM / convolution / custom-call library call)."""
    return hlo_op_class(op_type_) in ("matmul", "conv")


#: ATen ops (PyTorch; the op type is the name after ``aten::``) whose work Tensor Cores can do: matmuls,
#: convolutions and attention.
ATEN_TC_OPS = frozenset({
    "mm", "addmm", "bmm", "baddbmm", "addbmm", "matmul", "linear", "_scaled_mm", "einsum",
    "convolution", "_convolution", "cudnn_convolution", "cudnn_convolution_transpose", "conv1d", "conv2d", "conv3d",
    "convolution_backward", "scaled_dot_product_attention", "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention", "_flash_attention_forward",
    "_flash_attention_backward", "_efficient_attention_forward", "_efficient_attention_backward",
})


def tc_eligible_type(op_type_: str) -> bool:
    """TF op type (``MatMul``, ``Conv2D``, ``XlaDot``, ...), ATen op (``addmm``) or HLO op type (``dot``,
    ``cublas-gemm``, ...) whose work Tensor Cores can do.  HLO and ATen op types are lower case, so they
    never match a TF prefix and vice versa."""
    if op_type_.startswith(TC_ELIGIBLE_OP_PREFIXES) or op_type_ in ATEN_TC_OPS:
        return True
    return bool(op_type_) and op_type_[0].islower() and hlo_tc_eligible_type(op_type_)


def tc_eligible(op_types: list[str]) -> np.ndarray:
    return np.fromiter((tc_eligible_type(t) for t in op_types), dtype=bool, count=len(op_types))


def short_kernel_name(name: str, width: int = 80) -> str:
    """Readable kernel name: template arguments collapsed, cut to ``width``."""
    s = name
    if s.startswith("void "):
        s = s[5:]
    depth, out = 0, []
    for ch in s:
        if ch == "<":
            if depth == 0:
                out.append("<…>")
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif ch == "(" and depth == 0:
            break
        elif depth == 0:
            out.append(ch)
    s = "".join(out).strip() or name
    return s if len(s) <= width else s[: width - 1] + "…"


#: CUDA runtime and driver calls that block the host until the GPU (a stream, an event, the device) is done.
SYNC_CALLS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cuStreamSynchronize",
              "cuCtxSynchronize", "cuEventSynchronize")


def is_sync_call(name: str) -> bool:
    """A host call that waits for the GPU: while inside it, the host is not what the GPU waits for."""
    return name.startswith(SYNC_CALLS)
