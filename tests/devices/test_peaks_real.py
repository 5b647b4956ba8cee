"""Peaks of the GPUs in real captures, from what their readers put in ``DeviceInfo`` (name, compute capability,
SMs, clock, bandwidth): the names and numbers as the profilers wrote them, not as we would have typed them."""

from __future__ import annotations

import glob

import pytest

from tb_gpu_advisor.devices.codes import P_BF16, P_FP16, P_FP32
from tb_gpu_advisor.devices.peaks import memory_bandwidth, peak_flops
from tb_gpu_advisor.formats.kineto.adapter import read_trace as read_kineto
from tb_gpu_advisor.formats.xplane.adapter import read_trace as read_xplane
from tests.support.paths import FIXTURES, SHARED_PROFILES

WILD = FIXTURES / "wild"
T = 1e12
H100_JAX = sorted(glob.glob(str(SHARED_PROFILES / "real-h100-jax" / "*" / "plugins" / "profile" / "*" / "*.xplane.pb")))
H100_TORCH = sorted(glob.glob(str(SHARED_PROFILES / "real-h100-torch" / "*" / "*.pt.trace.json*")))
V100_TF = SHARED_PROFILES / "v100_bert_8gpu_tf24.xplane.pb"


def _peaks(info, precision):
    flops = peak_flops(info.name, info.compute_capability, precision, sm_count=info.sm_count, clock_hz=info.clock_hz)
    bw = memory_bandwidth(info.name, info.compute_capability, measured=info.memory_bandwidth,
                          sm_count=info.sm_count, clock_hz=info.clock_hz)
    return flops, bw


def _infos(trace):
    return [d.info for d in trace.devices]


def test_rocm_mi250_named_amd_radeon_graphics_gets_a_gcd_s_datasheet_peak():
    infos = _infos(read_kineto(glob.glob(str(WILD / "amd_mi250" / "*.json.gz"))[0]))
    for info in infos:
        flops, bw = _peaks(info, P_FP16)
        assert flops.value == pytest.approx(181.0 * T, rel=0.001) and "gfx90a" in flops.source
        assert bw.value == pytest.approx(1.6384e12)


def test_mi300x_vf_kineto():
    (info,) = _infos(read_kineto(glob.glob(str(WILD / "amd_mi300x" / "*.json.gz"))[0]))
    flops, bw = _peaks(info, P_BF16)
    assert (flops.model, flops.value, bw.value) == ("MI300X", pytest.approx(1307.4 * T), pytest.approx(5.3e12))


def test_mi300x_xplane_named_amd_is_identified_and_its_bandwidth_is_the_datasheet_s():
    info = _infos(read_xplane(glob.glob(str(WILD / "jax_mi300x" / "**" / "*.xplane.pb"), recursive=True)[0]))[0]
    flops, bw = _peaks(info, P_FP16)
    assert flops.model == "MI300X" and flops.value == pytest.approx(1307.4 * T)
    assert bw.value == pytest.approx(5.3e12) and "the trace reports 2,662 GB/s" in bw.source


def test_dlrm_v100_sxm2_kineto():
    infos = _infos(read_kineto(sorted(glob.glob(str(WILD / "dlrm_v100" / "*.json.gz")))[0]))
    flops, bw = _peaks(infos[0], P_FP16)
    assert (flops.model, flops.value, bw.value) == ("V100 SXM2", pytest.approx(125 * T), pytest.approx(900e9))
    assert peak_flops(infos[0].name, infos[0].compute_capability, P_BF16) is None


@pytest.mark.skipif(not H100_JAX, reason="real H100 captures not found (CI has ../shared)")
def test_h100_jax_xplane():
    info = _infos(read_xplane(H100_JAX[0]))[0]
    flops, bw = _peaks(info, P_BF16)
    assert (flops.model, flops.value) == ("H100 SXM", pytest.approx(989.4 * T))
    assert bw.value == pytest.approx(3.35e12) and "trace reports" not in bw.source  # 3,352 GB/s: the same
    assert _peaks(info, P_FP32)[0].value == pytest.approx(66.9 * T)


@pytest.mark.skipif(not H100_TORCH, reason="real H100 captures not found (CI has ../shared)")
def test_h100_torch_kineto():
    info = _infos(read_kineto(H100_TORCH[0]))[0]
    assert _peaks(info, P_BF16)[0].model == "H100 SXM"


@pytest.mark.skipif(not V100_TF.exists(), reason="real V100 capture not found (CI has ../shared)")
def test_nameless_tf24_v100_is_estimated_close_to_its_datasheet():
    info = _infos(read_xplane(str(V100_TF)))[0]
    assert info.name is None
    flops, bw = _peaks(info, P_FP16)
    assert flops.source.startswith("estimated: 80 SMs x 1.53 GHz") and flops.value == pytest.approx(125 * T, rel=0.01)
    assert bw.source.startswith("from the trace") and bw.value == pytest.approx(898.048e9)
