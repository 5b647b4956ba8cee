"""FLOPs of ATen ops from recorded shapes, each against a count done by hand (issue #20).

The numbers below are worked out from the ops' definitions, not from the code: a matmul [M,K]x[K,N] is 2MKN,
a convolution 2·N·Cout·Hout·Wout·Cin/g·kh·kw with the output size from stride and padding, attention 4·B·H·Sq·Sk·D
(half when causal, twice for the backward).
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor.devices.codes import P_BF16, P_FP16, P_FP32, P_UNKNOWN
from tb_gpu_advisor.frameworks.aten_flops import ATTENTION, CONV, MATMUL, is_flop_op, op_work


def _args(dims, types, concrete=None):
    a = {"Input Dims": dims, "Input type": types}
    if concrete is not None:
        a["Concrete Inputs"] = concrete
    return a


BF = "c10::BFloat16"


def test_mm_addmm_bmm_linear():
    w = op_work("aten::mm", _args([[64, 128], [128, 32]], [BF, BF]))
    assert w.flops == 2 * 64 * 128 * 32 and w.kind == MATMUL and w.precision == P_BF16
    assert w.bytes == (64 * 128 + 128 * 32 + 64 * 32) * 2  # both operands and the result, once each
    w = op_work("aten::addmm", _args([[32], [64, 128], [128, 32], [], []], [BF, BF, BF, "Scalar", "Scalar"]))
    assert w.flops == 2 * 64 * 128 * 32  # the bias add is not counted
    w = op_work("aten::bmm", _args([[8, 64, 128], [8, 128, 32]], ["float", "float"]))
    assert w.flops == 2 * 8 * 64 * 128 * 32 and w.precision == P_FP32
    # linear: input [B, S, in] x weight [out, in]
    w = op_work("aten::linear", _args([[4, 10, 512], [2048, 512], [2048]], ["c10::Half"] * 3))
    assert w.flops == 2 * 40 * 512 * 2048 and w.precision == P_FP16


def test_matmul_broadcasts_and_vectors():
    # [2, 1, 64, 32] @ [3, 32, 16] broadcasts to 2 x 3 batches
    assert op_work("aten::matmul", _args([[2, 1, 64, 32], [3, 32, 16]], [BF, BF])).flops == 2 * 6 * 64 * 32 * 16
    assert op_work("aten::matmul", _args([[32], [32, 16]], [BF, BF])).flops == 2 * 32 * 16  # vector x matrix
    assert op_work("aten::matmul", _args([[8, 32], [16, 16]], [BF, BF])) is None  # inner dims differ: no number


def test_conv2d_uses_stride_and_padding():
    # ResNet-50's first layer: 224x224, 7x7, stride 2, pad 3 -> 112x112
    w = op_work("aten::conv2d", _args([[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], []], [BF, BF, "", "", "", "", ""],
                                      ["", "", "", "[2, 2]", "[3, 3]", "[1, 1]", "1"]))
    assert w.flops == 2 * 32 * 64 * 112 * 112 * 3 * 49 and w.kind == CONV
    # grouped (depthwise): weight [C, 1, 3, 3], groups = C, stride 1, pad 1
    w = op_work("aten::convolution", _args([[8, 32, 56, 56], [32, 1, 3, 3]] + [[]] * 7, [BF, BF] + [""] * 7,
                                           ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "32"]))
    assert w.flops == 2 * 8 * 32 * 56 * 56 * 1 * 9


def test_conv_without_strides_gives_no_number():
    """PyTorch < 1.10 records no Concrete Inputs: a stride-2 layer would count 4x, so no number at all."""
    assert op_work("aten::conv2d", _args([[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], []], [BF] * 7)) is None


def test_conv_backward_counts_the_passes_asked_for():
    dims = [[32, 64, 112, 112], [32, 3, 224, 224], [64, 3, 7, 7]] + [[]] * 8
    one = 2 * 32 * 64 * 112 * 112 * 3 * 49
    both = op_work("aten::convolution_backward", _args(dims, [BF] * 11, [""] * 10 + ["[True, True, True]"]))
    weight_only = op_work("aten::convolution_backward", _args(dims, [BF] * 11, [""] * 10 + ["[False, True, True]"]))
    assert both.flops == 2 * one and weight_only.flops == one


def test_attention_forward_backward_and_causal():
    q = [2, 16, 1024, 64]  # [B, H, S, D]
    base = 4 * 2 * 16 * 1024 * 1024 * 64
    fwd = op_work("aten::scaled_dot_product_attention", _args([q, q, q, [], [], [], []], [BF] * 7,
                                                               ["", "", "", "", "0.", "False", ""]))
    causal = op_work("aten::scaled_dot_product_attention", _args([q, q, q, [], [], [], []], [BF] * 7,
                                                                 ["", "", "", "", "0.", "True", ""]))
    assert fwd.flops == base and fwd.kind == ATTENTION and causal.flops == base / 2
    bwd = op_work("aten::_scaled_dot_product_flash_attention_backward",
                  _args([q, q, q, q, q, [2, 16, 1024]] + [[]] * 9, [BF] * 15, [""] * 11 + ["False"] + [""] * 3))
    assert bwd.flops == 2 * base
    # the flash kernel's own entry point takes [B, S, H, D]
    flash = op_work("aten::_flash_attention_forward", _args([[2, 1024, 16, 64]] * 3, [BF] * 3))
    assert flash.flops == base


@pytest.mark.parametrize("args", [
    {},
    {"Input Dims": "oops", "Input type": []},
    {"Input Dims": [[-1, 4], [4, 4]], "Input type": [BF, BF]},
    {"Input Dims": [["a", 4], [4, 4]], "Input type": [BF, BF]},
    {"Input Dims": [[4]], "Input type": [BF]},
    {"Input Dims": [[4, 4], [4, 4, 4, 4]], "Input type": [BF, BF], "Concrete Inputs": "no list"},
])
def test_foreign_or_hostile_shapes_give_no_number(args):
    assert op_work("aten::mm", args) is None
    assert op_work("aten::conv2d", args) is None
    assert op_work("aten::scaled_dot_product_attention", args) is None


def test_unknown_dtype_is_unknown_not_fp32():
    w = op_work("aten::mm", _args([[4, 4], [4, 4]], ["SomeNewType", "SomeNewType"]))
    assert w.precision == P_UNKNOWN


def test_which_ops_are_flop_ops():
    assert is_flop_op("aten::mm") and is_flop_op("aten::convolution_backward")
    assert is_flop_op("aten::_scaled_dot_product_flash_attention_backward")
    assert not is_flop_op("aten::add") and not is_flop_op("MmBackward0") and not is_flop_op("aten::copy_")
