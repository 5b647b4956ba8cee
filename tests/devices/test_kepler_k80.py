"""A Tesla K80 (Kepler GK210, compute capability 3.7) is named and measured against its own peaks (issue #37 item 6;
h37-huntxla63's left item 1).

The wrong assumption (``devices.peaks``): *every NVIDIA GPU a capture holds is Volta or newer*.  The device tables
started at sm_70, so a K80 -- still the GPU of old Colab sessions and of many cloud images -- was "GPU:0" with no peak:
Pol-Zeimet/Gestenerkennung_Projektarbeit_2's three TF 2.3 Colab sessions on one (its GPU plane: compute capability
3.7, 13 SMs, 11,996,954,624 bytes, 240.48 GB/s, 562 MHz; no name stat) showed no roofline and no GPU name.  A K80
board is two GK210 GPUs, each its own CUDA device; NVIDIA's board specification (BD-07317-001) gives the board's
8.73 TFLOP/s fp32 and 2.91 TFLOP/s fp64 at its 875 MHz boost, 24 GB and 480 GB/s: per device the half, which is
also 13 SMX x 192 CUDA cores x 2 FLOP x 875 MHz = 4.37 TFLOP/s.  No Tensor Cores and no fp16 arithmetic: no 16-bit
peak, and no mixed-precision advice.

Truth: the datasheet's figures, and by construction in the generator (:func:`write_grouped_keras_batch` with the
real session's plane stats); the real sessions themselves where present (no licence: kept in
``/work/wild63/huntxla63/gesten`` only, the test skips elsewhere).
"""

from __future__ import annotations

import glob
import os

import pytest

from synthetic.tfcapture import Gpu, write_grouped_keras_batch
from tb_gpu_advisor import devices
from tb_gpu_advisor.devices.codes import P_BF16, P_FP16, P_FP32, P_FP64, P_TF32
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.runtime.pipeline import analyze_session

#: One GK210 device as the real TF 2.3 XPlane's GPU plane describes it (no name stat).
K80_DIE = Gpu("Tesla K80", (3, 7), 13, 562000, 240480000000, 11996954624)
_REAL = "/work/wild63/huntxla63/gesten"
_K80_SESSIONS = ("normalized_model_1", "normalized_model_2", "normalized_model_3")


def test_a_k80_device_has_half_the_board_s_peaks_and_none_in_16_bit():
    """Main: no table entry and no Kepler generation: every peak None."""
    fp32 = devices.peaks.peak_flops("Tesla K80", (3, 7), P_FP32)
    fp64 = devices.peaks.peak_flops("Tesla K80", (3, 7), P_FP64)
    assert fp32 is not None and fp32.value == pytest.approx(8.73e12 / 2) and "K80" in fp32.source
    assert fp64 is not None and fp64.value == pytest.approx(2.91e12 / 2)
    assert "GPUs is one device" in fp32.source and "GCD" not in fp32.source  # NVIDIA's words, not AMD's
    assert all(devices.peaks.peak_flops("Tesla K80", (3, 7), p) is None for p in (P_FP16, P_BF16, P_TF32))
    assert devices.peaks.sixteen_bit_gain_bound("Tesla K80", (3, 7), P_FP16) is None
    bw = devices.peaks.memory_bandwidth("Tesla K80", (3, 7))
    assert bw is not None and bw.value == pytest.approx(240e9)


def test_an_unnamed_sm37_device_is_estimated_from_the_gk210_s_rates():
    """A sm_37 device with no name is a GK210: 13 SMX x 384 FP32 FLOP/clk at its clock (main: no estimate)."""
    peak = devices.peaks.peak_flops(None, (3, 7), P_FP32, sm_count=13, clock_hz=875e6)
    assert peak is not None and peak.value == pytest.approx(13 * 384 * 875e6) and peak.source.startswith("estimated")
    assert devices.peaks.peak_flops(None, (3, 7), P_FP16, sm_count=13, clock_hz=875e6) is None


def test_sm35_is_not_taken_for_kepler_gk210():
    """Control: sm_35 is both a Tesla K40 (fp64 at a third of fp32) and a GeForce GTX 780 (a twenty-fourth): no
    generation, no estimate."""
    assert devices.peaks.peak_flops(None, (3, 5), P_FP64, sm_count=15, clock_hz=875e6) is None


def _report(tmp_path, props):
    session = tmp_path / "run1" / "plugins" / "profile" / "2020_08_29"
    session.mkdir(parents=True)
    write_grouped_keras_batch(str(session / "2cf9a7db2838.xplane.pb"), gpu_props=props)
    (s,) = discover(str(tmp_path))
    return analyze_session(s.run, s.session, s.hosts)


def test_a_tf_plane_of_a_k80_die_is_named_and_gets_no_16_bit_advice(tmp_path):
    """The generated Keras batch on the real K80 session's plane stats: named "NVIDIA Tesla K80 (inferred ...)" (main:
    "GPU:0"); no mixed-precision or Tensor Core
    finding and no word of fp16/bf16 in any finding (control on main)."""
    report = _report(tmp_path, K80_DIE)
    (gpu,) = report.hosts[0].gpus
    assert gpu.name.startswith("NVIDIA Tesla K80 (inferred from compute capability 3.7, 13 SMs"), gpu.name
    ids = {f.rule for f in report.findings}
    assert not ids & {"mixed_precision_off", "tensor_core_unused"}, ids
    words = " ".join(f"{f.title} {f.summary} {' '.join(a.text for a in f.actions)}" for f in report.findings)
    assert not any(w in words for w in ("fp16", "bf16", "float16", "bfloat16", "Tensor Core")), words


@pytest.mark.skipif(not os.path.isdir(_REAL), reason="real K80 sessions kept locally only (no licence)")
@pytest.mark.parametrize("session", _K80_SESSIONS)
def test_the_real_colab_k80_sessions_are_named_with_the_die_s_peaks(session):
    """Pol-Zeimet/Gestenerkennung_Projektarbeit_2 ``tensorboard_logs.zip`` @0917ed5a, the three sessions on host
    ``2cf9a7db2838``: main "GPU:0", no roofline; now the K80 by its properties and the die's peaks.  Their fp32 step
    stays without mixed-precision advice (a control: right on main too)."""
    (s,) = discover(os.path.join(_REAL, session))
    report = analyze_session(s.run, s.session, s.hosts)
    (gpu,) = report.hosts[0].gpus
    assert "Tesla K80" in gpu.name, gpu.name
    assert not {f.rule for f in report.findings} & {"mixed_precision_off", "tensor_core_unused"}


def test_the_real_session_files_are_where_the_test_expects_them():
    """Guard for the skip above: where the folder exists it holds the three K80 sessions' XPlanes."""
    if not os.path.isdir(_REAL):
        pytest.skip("kept locally only")
    for session in _K80_SESSIONS:
        assert glob.glob(os.path.join(_REAL, session, "train", "plugins", "profile", "*", "2cf9a7db2838.xplane.pb"))
