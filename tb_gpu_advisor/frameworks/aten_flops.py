"""FLOPs and bytes of ATen's matmul, convolution and attention ops, from the shapes ``record_shapes`` writes.

Current PyTorch exports no ``flops`` into its traces, even with ``with_flops=True``; what it does export, with
``record_shapes=True``, is each op's ``Input Dims``, ``Input type`` and ``Concrete Inputs`` (the scalars and int
lists: strides, paddings, ``is_causal``).  That is enough for the ops that do nearly all of a model's
arithmetic.  Conventions (the usual MFU ones):

* a multiply-add is 2 FLOPs; a matmul ``[M,K] x [K,N]`` is ``2·M·K·N``; bias adds and epilogues are not counted;
* a convolution is ``2 · N · C_out · prod(out spatial) · C_in/groups · prod(kernel)`` per pass; a depthwise one
  (one input channel per group) is a kind of its own, vector work (:func:`_conv_kind`);
* attention is its two matmuls, ``Q·Kᵀ`` and ``P·V``: ``4 · B · H · S_q · S_k · D`` forward, halved when the call
  says ``is_causal`` (the kernels skip the masked half); its backward is the four matmuls autograd needs
  (``dQ, dK, dV, dP``), twice the forward -- flash kernels also recompute ``Q·Kᵀ``, which is not counted;
* bytes are every tensor input and the result, each moved once: the least traffic, the roofline's denominator.

Which call counts: the *outermost* op of these families on a thread.  ``aten::linear`` encloses the
``aten::addmm`` it runs, ``aten::conv2d`` the ``aten::cudnn_convolution``: counting either one, never both, is
what the outermost rule does, and the outer op's schema (``linear(input, weight, bias)``) is stable across
versions where the backends' are not.  Backward matmuls run under ``MmBackward0`` and friends, which are no
FLOP op, so their ``aten::mm`` calls count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tb_gpu_advisor.devices.codes import P_BF16, P_FP8, P_FP16, P_FP32, P_FP64, P_INT8, P_UNKNOWN

#: ``Input type`` spellings -> (precision code, bytes per element).  Old traces write ``float``/``c10::Half``, new
#: ones the same; a few builds write the ScalarType names.
DTYPES: dict[str, tuple[int, int]] = {
    "float": (P_FP32, 4), "Float": (P_FP32, 4), "double": (P_FP64, 8), "Double": (P_FP64, 8),
    "c10::Half": (P_FP16, 2), "Half": (P_FP16, 2), "c10::BFloat16": (P_BF16, 2), "BFloat16": (P_BF16, 2),
    "c10::Float8_e4m3fn": (P_FP8, 1), "c10::Float8_e5m2": (P_FP8, 1), "Float8_e4m3fn": (P_FP8, 1),
    "Float8_e5m2": (P_FP8, 1), "c10::Float8_e4m3fnuz": (P_FP8, 1), "c10::Float8_e5m2fnuz": (P_FP8, 1),
    "signed char": (P_INT8, 1), "Char": (P_INT8, 1),
}

MATMUL, CONV, ATTENTION, DEPTHWISE = 0, 1, 2, 3  # model.trace.FLOP_KINDS


@dataclass(frozen=True)
class OpWork:
    """What one op call computes and moves."""

    flops: float
    bytes: float
    precision: int
    kind: int
    label: str
    out_bytes: float = 0.0  # the result's bytes (a matmul's output: attention's score matrix for Q @ K^T)
    #: the sizes the matrix units tile the call's GEMM over, as its shapes give them: a matmul's M, K and N, a
    #: convolution's input and output channels (per group; its batch and spatial sizes are the implicit GEMM's M,
    #: which a library tiles at any size).  What the matrix units ask to be multiples of 16 bytes
    #: (``devices.tc_align_elements``); empty where not read (attention: its head size and lengths).
    tile_dims: tuple[int, ...] = ()


_MM = frozenset({"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear",
                 "aten::_scaled_mm", "aten::addbmm", "aten::_addmm_activation"})
_CONV = frozenset({"aten::conv1d", "aten::conv2d", "aten::conv3d", "aten::convolution", "aten::_convolution",
                   "aten::cudnn_convolution", "aten::miopen_convolution", "aten::conv_transpose1d",
                   "aten::conv_transpose2d", "aten::conv_transpose3d", "aten::convolution_backward",
                   "aten::cudnn_convolution_transpose", "aten::_conv_depthwise2d"})
_ATTN_FWD = ("aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention",
             "aten::_scaled_dot_product_efficient_attention", "aten::_scaled_dot_product_cudnn_attention",
             "aten::_flash_attention_forward", "aten::_efficient_attention_forward")
_ATTN_BWD = ("aten::_scaled_dot_product_flash_attention_backward",
             "aten::_scaled_dot_product_efficient_attention_backward",
             "aten::_scaled_dot_product_cudnn_attention_backward", "aten::_flash_attention_backward",
             "aten::_efficient_attention_backward")


def is_flop_op(name: str) -> bool:
    """An op whose FLOPs its recorded shapes give (the reader keeps its ``args`` for :func:`op_work`)."""
    return name in _MM or name in _CONV or name in _ATTN_FWD or name in _ATTN_BWD


def op_work(name: str, args: dict[str, Any]) -> OpWork | None:
    """FLOPs, bytes, input precision and kind of one call, None where its shapes were not recorded or do not fit."""
    dims, types = args.get("Input Dims"), args.get("Input type")
    if not isinstance(dims, list) or not isinstance(types, list):
        return None
    concrete = args.get("Concrete Inputs")
    concrete = concrete if isinstance(concrete, list) else []
    try:
        if name in _MM:
            return _matmul(name, dims, types)
        if name in _CONV:
            return _conv(name, dims, types, concrete)
        if name in _ATTN_FWD or name in _ATTN_BWD:
            return _attention(name, dims, types, concrete)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None  # shapes of another schema than the one read: no number rather than a wrong one
    return None


# ---------------------------------------------------------------------------------------------- helpers

def _shape(d: Any) -> list[int] | None:
    return d if isinstance(d, list) and all(type(x) is int and x >= 0 for x in d) else None


def _numel(shape: list[int]) -> int:
    return math.prod(shape) if shape else 1


def _dtype(types: list[Any], i: int) -> tuple[int, int]:
    t = types[i] if i < len(types) else None
    return DTYPES.get(t, (P_UNKNOWN, 2)) if isinstance(t, str) else (P_UNKNOWN, 2)


def moved_bytes(args: dict[str, Any]) -> int | None:
    """Bytes an op that only moves data (a copy: ``aten::to``, ``aten::copy_``) reads and writes, from its recorded
    shapes: its largest tensor input read once and written once -- the least a copy of it moves.  None where the
    shapes are not recorded or name no tensor (a size not recorded: a ``GenericList``)."""
    dims, types = args.get("Input Dims"), args.get("Input type")
    if not isinstance(dims, list) or not isinstance(types, list):
        return None
    sizes = [_numel(s) * _dtype(types, i)[1] for i, d in enumerate(dims) if (s := _shape(d))]
    return 2 * max(sizes) if sizes else None


def _tensor_bytes(dims: list[Any], types: list[Any]) -> int:
    """Bytes of every tensor input (a list of ints; scalars and tensor lists are skipped)."""
    total = 0
    for i, d in enumerate(dims):
        s = _shape(d)
        if s:  # an empty list is a scalar or a non-tensor argument
            total += _numel(s) * _dtype(types, i)[1]
    return total


def _label(name: str, prec: int, shapes: list[list[int]]) -> str:
    from tb_gpu_advisor.devices.codes import PRECISIONS

    return f"{name} {PRECISIONS[prec]} " + "x".join("[" + ",".join(map(str, s)) + "]" for s in shapes)


def _work(name: str, flops: float, dims: list, types: list, main: int, out_numel: int, kind: int,
          shapes: list[list[int]], tile: tuple[int, ...] = ()) -> OpWork | None:
    if flops <= 0:
        return None
    prec, size = _dtype(types, main)
    return OpWork(float(flops), float(_tensor_bytes(dims, types) + out_numel * size), prec, kind,
                  _label(name, prec, shapes), float(out_numel * size), tuple(tile))


# ---------------------------------------------------------------------------------------------- matmuls

#: Where the two matrix operands sit in each schema (``addmm(bias, a, b)``; ``linear(input, weight, bias)``).
_MM_OPERANDS = {"aten::addmm": (1, 2), "aten::baddbmm": (1, 2), "aten::addbmm": (1, 2),
                "aten::_addmm_activation": (1, 2)}


#: Operand rank each schema requires (``matmul`` broadcasts any rank).
_MM_RANK = {"aten::mm": 2, "aten::addmm": 2, "aten::_scaled_mm": 2, "aten::_addmm_activation": 2, "aten::bmm": 3,
            "aten::baddbmm": 3, "aten::addbmm": 3}


def _matmul(name: str, dims: list, types: list) -> OpWork | None:
    ia, ib = _MM_OPERANDS.get(name, (0, 1))
    a, b = _shape(dims[ia]), _shape(dims[ib])
    if not a or not b:
        return None
    if name == "aten::linear":  # weight is [out, in]: input [..., K] x weight^T [K, N]
        if len(b) != 2 or a[-1] != b[1]:
            return None
        m, k, n = _numel(a[:-1]), a[-1], b[0]
        return _work(name, 2.0 * m * k * n, dims, types, ia, m * n, MATMUL, [a, b], (m, k, n))
    rank = _MM_RANK.get(name)
    if rank is not None and (len(a) != rank or len(b) != rank):
        return None  # not the schema's operands
    batch, m, k, n = _mm_dims(a, b)
    if name == "aten::addbmm":  # sums the batch into one [M, N] result
        return _work(name, 2.0 * batch * m * k * n, dims, types, ia, m * n, MATMUL, [a, b], (m, k, n))
    return _work(name, 2.0 * batch * m * k * n, dims, types, ia, batch * m * n, MATMUL, [a, b], (m, k, n))


def _mm_dims(a: list[int], b: list[int]) -> tuple[int, int, int, int]:
    """(batch, M, K, N) of ``a @ b`` with numpy's broadcasting and 1-d rules."""
    a2 = [1] + a if len(a) == 1 else a
    b2 = b + [1] if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ValueError("inner dimensions differ")
    ba, bb = a2[:-2], b2[:-2]
    width = max(len(ba), len(bb))
    ba, bb = [1] * (width - len(ba)) + ba, [1] * (width - len(bb)) + bb
    batch = math.prod(max(x, y) for x, y in zip(ba, bb)) if width else 1
    return batch, a2[-2], a2[-1], b2[-1]


# ---------------------------------------------------------------------------------------------- convolutions

#: Index of (stride, padding, dilation, transposed, groups) in each schema's arguments; None: not in it.
_CONV_ARGS = {
    "aten::conv1d": (3, 4, 5, None, 6), "aten::conv2d": (3, 4, 5, None, 6), "aten::conv3d": (3, 4, 5, None, 6),
    "aten::convolution": (3, 4, 5, 6, 8), "aten::_convolution": (3, 4, 5, 6, 8),
    "aten::cudnn_convolution": (3, 2, 4, None, 5), "aten::miopen_convolution": (4, 3, 5, None, 6),
    "aten::_conv_depthwise2d": (4, 5, 6, None, None),
    "aten::conv_transpose1d": (3, 4, 7, None, 6), "aten::conv_transpose2d": (3, 4, 7, None, 6),
    "aten::conv_transpose3d": (3, 4, 7, None, 6), "aten::cudnn_convolution_transpose": (4, 2, 5, None, 6),
}


def _ints(text: Any, n: int, default: int) -> list[int]:
    """A ``Concrete Inputs`` int list (``"[2, 2]"``) or int (``"2"``), as ``n`` ints."""
    if not isinstance(text, str) or not text.strip():
        return [default] * n
    vals = [int(x) for x in text.strip("[] ").split(",") if x.strip()]
    return (vals * n)[:n] if len(vals) == 1 else vals if len(vals) == n else [default] * n


def _conv(name: str, dims: list, types: list, concrete: list) -> OpWork | None:
    if name == "aten::convolution_backward":
        return _conv_backward(name, dims, types, concrete)
    x, w = _shape(dims[0]), _shape(dims[1])
    if not x or not w or len(x) < 3 or len(w) != len(x):
        return None
    nsp = len(x) - 2
    kernel = w[2:]
    where = _CONV_ARGS.get(name)
    get = lambda i: concrete[i] if i is not None and i < len(concrete) else None  # noqa: E731
    if where is None or not isinstance(get(where[0]), str) or not get(where[0]).strip():
        # no recorded stride (PyTorch < 1.10 writes no ``Concrete Inputs``): a stride-2 convolution would count 4x
        return None
    stride, pad, dil = _ints(get(where[0]), nsp, 1), _ints(get(where[1]), nsp, 0), _ints(get(where[2]), nsp, 1)
    groups = _ints(get(where[4]), 1, 1)[0] or 1
    transposed = "transpose" in name or str(get(where[3])).strip().lower() == "true"
    if transposed:  # the arithmetic of the convolution it is the gradient of: input positions x kernel
        positions, c_in, c_out = _numel(x[2:]), w[0], w[1] * groups
        out_numel = x[0] * c_out * math.prod((x[2 + i] - 1) * stride[i] - 2 * pad[i] + dil[i] * (kernel[i] - 1) + 1
                                             for i in range(nsp))
        flops = 2.0 * x[0] * c_in * positions * (c_out // groups) * _numel(kernel)
    else:
        out = [(x[2 + i] + 2 * pad[i] - dil[i] * (kernel[i] - 1) - 1) // stride[i] + 1 for i in range(nsp)]
        if any(o <= 0 for o in out):
            return None
        out_numel = x[0] * w[0] * _numel(out)
        flops = 2.0 * x[0] * w[0] * _numel(out) * w[1] * _numel(kernel)
    return _work(name, flops, dims, types, 0, out_numel, _conv_kind(name, groups, w), [x, w], (w[1], w[0]))


def _conv_kind(name: str, groups: int, w: list[int]) -> int:
    """:data:`DEPTHWISE` for a convolution each of whose outputs sums one input channel's window -- several groups of
    one input channel each (``groups == C_in``; ATen's ``_conv_depthwise2d`` is that by its schema) --, :data:`CONV`
    for any other.  Why apart: a depthwise convolution's GEMM has no channel sum to give a matrix tile its inner
    dimension (``devices.depthwise_one``), so its FLOPs run on the vector units, and counting them against the matrix
    units' peak made MFU a rate of work those units never do (h37-flops68)."""
    depthwise = name == "aten::_conv_depthwise2d" or (groups > 1 and w[1] == 1)
    return DEPTHWISE if depthwise else CONV


def _conv_backward(name: str, dims: list, types: list, concrete: list) -> OpWork | None:
    """``convolution_backward(grad_output, input, weight, ..., output_mask)``: the grad output gives the output
    positions; each of grad input and grad weight costs one forward pass, as ``output_mask`` asks."""
    gy, x, w = _shape(dims[0]), _shape(dims[1]), _shape(dims[2])
    if not gy or not x or not w or len(w) < 3:
        return None
    mask = concrete[-1] if concrete else None
    wanted = [s.strip().lower() == "true" for s in mask.strip("[] ").split(",")] if isinstance(mask, str) and \
        mask.strip() else [True, True, True]
    passes = int(wanted[0]) + int(len(wanted) > 1 and wanted[1])
    one = 2.0 * _numel(gy) * w[1] * _numel(w[2:])  # N·C_out·positions x C_in/groups·kernel
    out_numel = (_numel(x) if wanted[0] else 0) + (_numel(w) if len(wanted) > 1 and wanted[1] else 0)
    groups = _ints(concrete[_BACKWARD_GROUPS], 1, 1)[0] if len(concrete) > _BACKWARD_GROUPS else 1
    return _work(name, passes * one, dims, types, 0, out_numel, _conv_kind(name, groups or 1, w), [gy, x, w],
                 (w[1], w[0]))


#: ``groups`` in ``convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
#: transposed, output_padding, groups, output_mask)``
_BACKWARD_GROUPS = 9


# ---------------------------------------------------------------------------------------------- attention

def _causal(name: str, concrete: list) -> bool:
    """The call's ``is_causal`` flag, where its schema has one at a fixed place."""
    at = {"aten::scaled_dot_product_attention": 5, "aten::_scaled_dot_product_flash_attention": 4,
          "aten::_scaled_dot_product_efficient_attention": 6, "aten::_scaled_dot_product_cudnn_attention": 6,
          "aten::_scaled_dot_product_flash_attention_backward": 11,
          "aten::_scaled_dot_product_efficient_attention_backward": 11,
          "aten::_scaled_dot_product_cudnn_attention_backward": 14}.get(name)
    if at is None or at >= len(concrete):
        return False
    return str(concrete[at]).strip().lower() == "true"


def _attention(name: str, dims: list, types: list, concrete: list) -> OpWork | None:
    backward = name in _ATTN_BWD
    first = 1 if backward else 0  # the backward's first input is the output's gradient
    q, k, v = (_shape(dims[first + i]) for i in range(3))
    if not q or not k or not v or len(q) != 4 or len(k) != 4:
        return None
    if name.startswith("aten::_flash_attention") or name.startswith("aten::_efficient_attention"):
        b, sq, h, d = q  # these take [B, S, H, D]
        sk = k[1]
    else:
        b, h, sq, d = q  # [B, H, S, D]
        sk = k[2]
    flops = 4.0 * b * h * sq * sk * d * (2 if backward else 1) * (0.5 if _causal(name, concrete) else 1)
    return _work(name, flops, dims, types, first, _numel(q), ATTENTION, [q, k, v])
