"""A depthwise convolution's FLOPs are the vector units' work: apart from MFU's, which is over the matrix units' peak
(h37-flops68; h37-huntn67's *Left*: "A depthwise op's FLOPs ... stay model FLOPs in MFU's numerator").

MFU is model FLOPs over the peak the work can use.  A depthwise convolution (``groups == C_in``: each output sums one
input channel's window) has no channel sum to give a matrix tile its inner dimension; cuDNN runs it with its grouped
direct kernel on the CUDA cores, ATen with its own depthwise kernel.  On main its FLOPs were in MFU's numerator over
the 16-bit Tensor Core peak, and its roofline row was read against that peak.  Now:

* ``Flops.trace_flops_per_step`` (MFU's, HFU's) holds the matrix units' kinds only, ``Flops.vector_flops_per_step``
  the depthwise FLOPs; the two sum to the trace's FLOPs, and the card says what is left out;
* a depthwise roofline row is kind ``depthwise``, against the vector units' peak (``devices.vector_peak_flops``); the
  GEMM figures (``gemm_tflops_per_s``, ``gemm_ms_per_step``) are the matrix kinds' alone, as MFU's FLOPs are.

Truth by construction: ``synthetic.torchtrace.write_depthwise_block`` (a MobileNet block in fp16 on an A100: a 3x3
depthwise layer and a 1x1 pointwise layer of known FLOPs and bytes).  The control: a grouped convolution of 64
channels per group is the matrix units' work and stays in MFU.
"""

from __future__ import annotations

import pytest

from synthetic import torchtrace as t
from tb_gpu_advisor import devices
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.frameworks import aten_flops
from tb_gpu_advisor.runtime.pipeline import host_metrics

A100_FP16 = 312e12  # the A100 datasheet's dense fp16 Tensor Core peak
A100_FP32_CUDA_CORES = 19.5e12  # its fp32 CUDA-core peak
A100_FP16_CUDA_CORES = 78e12  # its fp16 non-Tensor peak (A100 whitepaper, Table 1)


@pytest.fixture(scope="module")
def block(tmp_path_factory):
    path = tmp_path_factory.mktemp("dw") / "dw.pt.trace.json"
    truth = t.write_depthwise_block(str(path))
    return truth, host_metrics(read_trace(str(path)))


def test_depthwise_flops_are_left_out_of_mfu_and_said(block):
    truth, m = block
    f = m.flops
    # main: 3.404e9 -- the depthwise layer's 0.116 GFLOP counted against the Tensor Cores' peak
    assert f.trace_flops_per_step == pytest.approx(truth["pointwise_flops"])
    assert f.vector_flops_per_step == pytest.approx(truth["depthwise_flops"])
    assert f.mfu == pytest.approx(truth["pointwise_flops"] / (f.step_ms / 1e3) / A100_FP16)
    assert "depthwise" in f.vector_note and "vector units" in f.vector_note


def test_roofline_rows_agree_with_the_card(block):
    truth, m = block
    f = m.flops
    rows = {r.kind: r for r in f.top}
    dw, pw = rows["depthwise"], rows["conv"]  # main: both "conv"
    assert dw.flops_per_call == pytest.approx(truth["depthwise_flops"])
    # the matrix rows' FLOPs are the card's: a part never exceeds its whole
    matrix = sum(r.flops_per_call * r.calls_per_step for r in f.top if r.kind != "depthwise")
    assert matrix == pytest.approx(f.trace_flops_per_step)
    # the GEMM figures are the pointwise layer's alone (main: its rate diluted by the depthwise kernel's time)
    assert f.gemm_ms_per_step == pytest.approx(truth["pointwise_us"] / 1e3)
    assert f.gemm_tflops_per_s == pytest.approx(truth["pointwise_flops"] / (truth["pointwise_us"] / 1e6) / 1e12)
    assert f.by_kind["depthwise"][0] == pytest.approx(truth["depthwise_us"] / 1e3)
    # the depthwise row against the vector units: memory-bound at its intensity, its roof under their peak
    assert dw.intensity == pytest.approx(truth["depthwise_flops"] / truth["depthwise_bytes"])
    assert dw.bound == "memory"
    assert dw.attainable_tflops_per_s * 1e12 <= A100_FP32_CUDA_CORES
    assert pw.attainable_tflops_per_s * 1e12 <= A100_FP16


def test_no_row_beats_the_peak_of_its_units(block):
    """Physics: each row's achieved rate is under the peak of the units it runs on."""
    _, m = block
    for r in m.flops.top:
        peak = A100_FP16_CUDA_CORES if r.kind == "depthwise" else A100_FP16
        assert r.tflops_per_s * 1e12 <= peak


def test_the_grouped_direct_kernel_is_no_tensor_core_work(block):
    _, m = block
    (k,) = [k for k in m.kernels if "grouped_direct" in k.name]
    assert not k.tc_eligible  # main: True -- "16-bit MatMul/Conv kernels that miss the Tensor Cores"
    assert m.flops.coverage == pytest.approx(1.0)


def test_atens_depthwise_kernel_splits_the_same(tmp_path):
    """The split is the op's shapes', whatever kernel ran it: ATen's own depthwise kernel gives the same FLOPs."""
    path = tmp_path / "aten.pt.trace.json"
    truth = t.write_depthwise_block(str(path), dw_kernel="void at::native::(anonymous namespace)::"
                                    "conv_depthwise2d_forward_kernel<3, c10::Half, int>(at::GenericPackedTensorAccessor"
                                    "<c10::Half const, 4ul, at::DefaultPtrTraits, int>)")
    f = host_metrics(read_trace(str(path))).flops
    assert f.trace_flops_per_step == pytest.approx(truth["pointwise_flops"])
    assert f.vector_flops_per_step == pytest.approx(truth["depthwise_flops"])


def test_control_a_grouped_convolution_is_matrix_work():
    """64 input channels per group: a GEMM with a channel sum -- the matrix units' kind, in MFU."""
    args = t.conv2d_args((32, 256, 28, 28), (256, 64, 3, 3), groups=4)
    w = aten_flops.op_work("aten::conv2d", args)
    assert w.kind == aten_flops.CONV
    assert w.flops == pytest.approx(2.0 * 32 * 256 * 28 * 28 * 64 * 9)


@pytest.mark.parametrize("name, args", [
    ("aten::conv2d", t.conv2d_args((32, 256, 28, 28), (256, 1, 3, 3), groups=256)),
    ("aten::_conv_depthwise2d", {"Input Dims": [[32, 256, 28, 28], [256, 1, 3, 3], [3, 3], [], [], [], []],
                                 "Input type": ["c10::Half", "c10::Half", "ScalarList", "", "ScalarList",
                                                "ScalarList", "ScalarList"],
                                 "Concrete Inputs": ["", "", "[3, 3]", "", "[1, 1]", "[1, 1]", "[1, 1]"]}),
    ("aten::convolution_backward", {**t.conv_backward_args(32, 256, 256), "Input Dims": [
        [32, 256, 8, 8], [32, 256, 8, 8], [256, 1, 3, 3], [], [], [], [], [], [], [], []],
        "Concrete Inputs": ["", "", "", "[0]", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "256",
                            "[True, True, False]"]}),
])
def test_each_depthwise_schema_is_the_depthwise_kind(name, args):
    """``groups == C_in`` in ``conv2d`` and ``convolution_backward`` (its ``groups`` the 10th argument), and ATen's
    ``_conv_depthwise2d`` by its schema; main: all ``conv``."""
    w = aten_flops.op_work(name, args)
    assert w is not None and w.kind == getattr(aten_flops, "DEPTHWISE", -1)


def test_vector_peak_is_the_vector_units():
    """The fp32 figure where the table says it is the CUDA cores' / vector ALUs'; none where it is a Matrix Core's."""
    assert devices.vector_peak_flops("NVIDIA A100-SXM4-40GB", (8, 0)).value == pytest.approx(A100_FP32_CUDA_CORES)
    assert devices.vector_peak_flops("AMD Instinct MI250X", None) is None  # CDNA 2's fp32 95.7 is its Matrix Cores'


def test_a_floor_of_the_peak_gives_a_roof_only_under_it():
    """16-bit work on the vector units: their fp32 peak is only a floor of their 16-bit rate, so a row whose bandwidth
    roof is above it has no roof (not one at the floor, which a kernel may beat); under it, the bandwidth's is the roof."""
    from tb_gpu_advisor.metrics.flops import _roofline

    over = _roofline("dw", aten_flops.DEPTHWISE, devices.P_FP16, 1.0, 40e9, 2e9, 1.0, A100_FP32_CUDA_CORES, 2e12, False)
    assert over.attainable_tflops_per_s is None and over.bound is None
    under = _roofline("dw", aten_flops.DEPTHWISE, devices.P_FP16, 1.0, 9e9, 2e9, 1.0, A100_FP32_CUDA_CORES, 2e12, False)
    assert under.bound == "memory" and under.attainable_tflops_per_s == pytest.approx(9.0)


def test_mfu_low_weighs_the_gemms_alone(block):
    """``mfu_low`` reads GEMM time as the card does: the pointwise layer's 120 us, not the depthwise kernel's 180 us
    beside it (main: "300 us of each 332 us step", ~217 us saved from a GEMM pool that never held the depthwise
    kernel)."""
    from tb_gpu_advisor.rules import mfu_low

    truth, m = block
    (f,) = mfu_low.check(m)
    assert f"({truth['pointwise_us']:.0f} us of each" in f.summary
    assert f.saving.ms_per_step <= truth["pointwise_us"] / 1e3


def test_the_card_says_the_vector_peak_the_rows_were_rated_against(block, tmp_path):
    """The ``mfu`` card's ``vector_peak_flops``: the peak a depthwise row's roof is (the chart draws the vector roof from
    it, where a memory-bound row gives no height for it); null (the card's details leave nulls out) for a GPU no table
    or generation names -- never a claim about unknown units (h37-roof68; main: no such field)."""
    import json

    from tb_gpu_advisor.report.build import mfu_card

    from tb_gpu_advisor.report.view import _roof
    from tb_gpu_advisor.runtime.pipeline import host_report

    _, m = block
    # the block's depthwise layer is fp16: its own vector roof, the A100 whitepaper's non-Tensor FP16 78 TFLOP/s
    # (h37-conv69; was the fp32 19.5, only a floor of it)
    assert mfu_card(m).detail.get("vector_peak_flops") == pytest.approx(A100_FP16_CUDA_CORES)
    assert _roof(host_report(m, 0))["vector_peak"] == "78"  # as the chart labels the vector roof
    path = tmp_path / "unknown.pt.trace.json"
    t.write_depthwise_block(str(path))
    doc = json.loads(path.read_text())
    doc["deviceProperties"] = [{"name": "Acme Matrix Engine X1", "totalGlobalMem": 42505273344}]
    path.write_text(json.dumps(doc))
    um = host_metrics(read_trace(str(path)))
    assert um.flops.vector_flops_per_step  # the depthwise work is there ...
    detail = mfu_card(um).detail
    assert detail.get("vector_peak_flops") is None  # ... its units' peak unknown
