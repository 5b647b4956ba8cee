"""A 32-bit kernel moved to 16 bit gains at most the ratio of the GPU's own peaks (h37-review2: "no kernel beats
peak").  ``compiled_graphs_rtx3060`` (a GeForce RTX 3060, fp32 training) was told its fp32 matmuls "run 6x faster in 16
bit on Tensor Cores": the fixed Ampere factor, while NVIDIA's GA102/GA106 figures give a GeForce Ampere card 2x (FP32
12.74 TFLOP/s; FP16/BF16 Tensor with FP32 accumulate 25.5 TFLOP/s dense on the RTX 3060, half the FP16-accumulate
rate, the same ratio as the whitepaper's RTX 3090: 35.6 vs 71)."""

from __future__ import annotations

import re

import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.discover.logdir import discover
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report

#: NVIDIA's published dense figures for the GeForce RTX 3060 (GA106): FP32 and 16-bit Tensor with FP32 accumulate.
RTX3060_FP32, RTX3060_TC16_FP32_ACC = 12.74, 25.5
#: The kernel gains the saving's words assume: "run 2x faster in 16 bit", "run 2x faster on Tensor Cores".
_GAIN = re.compile(r"run ([\d.]+)x faster (?:in 16 bit|on Tensor Cores)")


def test_the_bound_is_the_ratio_of_the_peaks():
    """Tabled GPUs: their datasheets' ratio; a GeForce Ampere / Ada card: its generation's per-SM ratio halved (fp32
    accumulation at half rate); a data-center one of the same generation: not halved; an unknown GPU: none."""
    assert devices.sixteen_bit_gain_bound("NVIDIA H100 80GB HBM3", (9, 0), devices.P_BF16) == pytest.approx(989 / 67, 0.02)
    assert devices.sixteen_bit_gain_bound("NVIDIA GeForce RTX 3060", (8, 6), devices.P_BF16) == pytest.approx(
        RTX3060_TC16_FP32_ACC / RTX3060_FP32, 0.02)
    assert devices.sixteen_bit_gain_bound("NVIDIA GeForce RTX 4090", (8, 9), devices.P_BF16) == pytest.approx(2.0)
    assert devices.sixteen_bit_gain_bound("NVIDIA RTX A6000", (8, 6), devices.P_BF16) == pytest.approx(4.0)
    assert devices.sixteen_bit_gain_bound("GPU:0", None, devices.P_FP16) is None


def test_rtx3060_is_promised_no_more_than_its_peaks_allow():
    (s,) = discover(str(FIXTURES / "wild" / "compiled_graphs_rtx3060"))
    report = session_report(s)
    gains = [float(g) for f in report.hosts[0].findings if f.saving is not None
             for g in _GAIN.findall(f.saving.assumption)]
    assert gains, "the mixed-precision and Tensor Core findings state the gain they assume"
    assert max(gains) <= RTX3060_TC16_FP32_ACC / RTX3060_FP32 * 1.01
    mp = next(f for f in report.hosts[0].findings if f.rule == "mixed_precision_off")
    assert mp.severity == "critical"  # the fp32 matmuls are still most of the step: the finding stays
