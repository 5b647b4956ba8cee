"""A 16-bit depthwise convolution's roof is its vector units' own 16-bit peak where the vendor publishes it
(h37-conv69; h37-flops68's *Left*: "16-bit no roof rather than a wrong one").

On base the vector units had one tabled rate, fp32's, and a 16-bit depthwise row was rated against it as a floor:
no roof at all where the bandwidth's was above it (a 7x7 or 11x11 depthwise layer, ConvNeXt's), and the ``mfu``
card's ``vector_peak_flops`` was the fp32 figure beside fp16 rows.  Now ``devices.vector_peak_16`` gives the
"Peak FP16/BF16 TFLOPS (non-Tensor)" of NVIDIA's whitepapers (GA100: fp16 4x and bf16 2x fp32; Hopper 2x; GA10x
and Ada 1x; Volta and Turing fp16 2x) and nothing where none is published (Blackwell, AMD CDNA, Intel Xe-HPC).

Truth by construction: ``synthetic.torchtrace.write_depthwise_block`` with a ``k x k`` depthwise layer in fp16 on an
A100-SXM4-40GB (1,555 GB/s, fp16 non-Tensor 78 TFLOP/s, A100 whitepaper Table 1).
"""

from __future__ import annotations

import pytest

from synthetic import torchtrace as t
from tb_gpu_advisor import devices
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics

A100_FP16_VECTOR = 78e12
A100_BW = 1.555e12


@pytest.mark.parametrize("name, cc, prec, tflops", [
    ("NVIDIA A100-SXM4-40GB", (8, 0), devices.P_FP16, 78.0),  # A100 whitepaper: FP16 (non-Tensor) 78
    ("NVIDIA A100-SXM4-40GB", (8, 0), devices.P_BF16, 39.0),  # BF16 (non-Tensor) 39
    ("NVIDIA H100 80GB HBM3", (9, 0), devices.P_BF16, 133.8),  # H100 whitepaper: 2 x FP32 66.9
    ("Tesla V100-SXM2-16GB", (7, 0), devices.P_FP16, 31.4),
    ("Tesla V100-SXM2-16GB", (7, 0), devices.P_BF16, None),  # no bf16 arithmetic
    ("NVIDIA B200", (10, 0), devices.P_FP16, None),  # not published: unknown, never guessed
    ("AMD Instinct MI300X", None, devices.P_FP16, None),  # CDNA 3: no vector FP16 figure published
])
def test_the_published_vector_rates_and_no_others(name, cc, prec, tflops):
    got = devices.vector_peak_16(name, cc, prec)
    assert (got.value / 1e12 if got else None) == (pytest.approx(tflops) if tflops else None)


@pytest.mark.parametrize("k, bound", [(7, "memory"), (11, "compute")])
def test_a_16_bit_depthwise_row_has_its_own_roof(tmp_path, k, bound):
    """7x7: intensity 24.5 FLOP/byte x 1,555 GB/s = 38 TFLOP/s, above fp32's 19.5 and under fp16's 78: memory-bound
    (base: no roof); 11x11: 60.5 x 1,555 = 94, above 78: compute-bound at the fp16 vector peak (base: no roof)."""
    path = tmp_path / "dw.pt.trace.json"
    truth = t.write_depthwise_block(str(path), k=k)
    f = host_metrics(read_trace(str(path))).flops
    (dw,) = [r for r in f.top if r.kind == "depthwise"]
    intensity = truth["depthwise_flops"] / truth["depthwise_bytes"]
    assert dw.bound == bound
    assert dw.attainable_tflops_per_s * 1e12 == pytest.approx(min(A100_FP16_VECTOR, intensity * A100_BW), rel=1e-3)
    assert dw.tflops_per_s <= dw.attainable_tflops_per_s  # physics: no kernel beats its units' peak
    assert f.vector_peak_flops == pytest.approx(A100_FP16_VECTOR)  # the card says the roof the row was rated against
