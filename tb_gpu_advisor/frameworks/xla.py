"""XLA, the compiler behind JAX and TensorFlow's jit_compile: its HLO op names, module annotations and fusion kernels.

Shared vocabulary of the two frameworks that compile with XLA (``jax.py``, ``tensorflow.py``) and of the XPlane
reader; XLA names HLO instructions after their opcode (``dot``, ``convolution``, ``custom-call``) or fusion kind,
in lower case, with a ``.N`` suffix.
"""

from __future__ import annotations

import re

from tb_gpu_advisor.devices import head

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
    t = head(hlo_op).strip().lstrip("%")
    return _strip_hlo_suffix(t) or t


def hlo_op_class(op_type_: str) -> str:
    """What an HLO op type does: matmul, conv, elementwise fusion, reduction fusion, fusion, or other."""
    t = head(op_type_).lower()
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
    """HLO op type whose work Tensor Cores can do (dot / GEMM / convolution / custom-call library call).  HLO op
    types are lower case: a capitalised name is another framework's op."""
    return bool(op_type_) and op_type_[0].islower() and hlo_op_class(op_type_) in ("matmul", "conv")



def module_op(op_text: str) -> str:
    """``<module>/<hlo op>`` of an XLA kernel's op text (``jit_step/dot.3:dot`` -> ``jit_step/dot.3``): the key
    a module's HLO instructions are found by."""
    return op_text.rsplit(":", 1)[0] if "/" in op_text else ""


#: The host event suffix of a raw JAX/XLA GPU module execution (``<module>:XLA GPU module``): one per step.
GPU_MODULE_SUFFIX = ":XLA GPU module"
#: Element-wise kernels XLA emits: loop fusions of one element-wise op.
#: XLA's element-wise kernels: loop fusions (``loop_<root op>_fusion``, XLA's kLoop emitter: element-wise,
#: broadcast and data-movement work, never a matmul; a reduction root is excluded by the reduction names), and
#: single element-wise instructions XLA wraps into a fusion of their own (``wrapped_tanh``), as un-jitted ops run.
ELEMENTWISE_KERNELS = (r"^loop_\w*fusion", r"^wrapped_(add|multiply|subtract|divide|convert|exp|log|tanh|logistic|"
                       r"select|negate|maximum|minimum|sqrt|rsqrt|power|abs|compare|sine|cosine)\b", r"_add_", r"_mul_")
