"""The GPU's clock from XPlane's device plane: ``clock_rate`` is kHz (CUDA's ``clockRate``), read as Hz.

Real captures: the H100 SXM (JAX) reports 1980000 kHz, its 1.98 GHz maximum boost; the TF 2.4 V100 SXM2 1530000
(1.53 GHz); the ROCm MI300X (JAX, a fixture) 2100000 (2.1 GHz, its peak engine clock).  The peaks' estimate for an
unknown model multiplies SMs by this clock, so a unit slip (MHz, kHz) is a factor of 1000 in every finding.
"""

from __future__ import annotations

import glob

import pytest

from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tests.support.paths import FIXTURES, SHARED_PROFILES

MI300X = glob.glob(str(FIXTURES / "wild" / "jax_mi300x" / "plugins" / "profile" / "*" / "*.xplane.pb"))
H100 = sorted(glob.glob(str(SHARED_PROFILES / "real-h100-jax" / "*" / "plugins" / "profile" / "*" / "*.xplane.pb")))
V100 = SHARED_PROFILES / "v100_bert_8gpu_tf24.xplane.pb"


def _info(path: str):
    return read_trace(path).devices[0].info


def test_mi300x_fixture_clock_is_2_1_ghz():
    info = _info(MI300X[0])
    assert info.clock_hz == pytest.approx(2.1e9)
    assert (info.sm_count, info.compute_capability) == (304, (9, 4))


@pytest.mark.skipif(not H100, reason="real H100 captures not found (CI has ../shared)")
def test_h100_clock_is_its_1_98_ghz_boost():
    info = _info(H100[0])
    assert info.name == "NVIDIA H100 80GB HBM3"
    assert info.clock_hz == pytest.approx(1.98e9)
    assert info.memory_bandwidth == pytest.approx(3.35e12, rel=0.01)  # bytes/s: the datasheet's 3.35 TB/s


@pytest.mark.skipif(not V100.exists(), reason="real V100 capture not found (CI has ../shared)")
def test_v100_clock_is_its_1_53_ghz_boost():
    info = _info(str(V100))
    assert info.clock_hz == pytest.approx(1.53e9)
    assert info.memory_bandwidth == pytest.approx(900e9, rel=0.01)
