"""Turing parts without Tensor Cores (``devices.nvidia.NO_TENSOR_CORE_TURING``): the GeForce GTX 16 series, the MX450 /
MX550 and the workstation T400-T2000 are sm_75 like the T4 and the RTX 20 series, but their TU116 / TU117 dies carry
no Tensor Core.  A real capture (owaisahmadlone/ML-DL-Security's torchvision inference on an ``NVIDIA T1000``, 14 SMs,
sm 7.5; survey "Session 69 hunt69c"; no licence, so not kept) was told its fp32 convolutions "do not use the Tensor
Cores of NVIDIA T1000" and to run under autocast on "this GPU's fp16 Tensor Cores" -- two critical findings of a unit
the card lacks.  Truth by construction: ``synthetic.nsysexport.write`` with that export's ``TARGET_INFO_GPU`` row and
its fp32 ``volta_sgemm`` kernels; the same capture on a T4 keeps both findings.  Its 16-bit peak (``devices.peaks``'
generation "Turing TU11x") is its fp16 units' twice the fp32 rate, not Turing's Tensor Core figure."""

from __future__ import annotations

import json
import sqlite3

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor import devices
from tests.support.cli_report import in_process


@pytest.mark.parametrize("name", ["NVIDIA T1000", "NVIDIA T1000 8GB", "NVIDIA T400 4GB", "Quadro T2000 with Max-Q Design",
                                  "NVIDIA T550 Laptop GPU", "NVIDIA GeForce GTX 1650", "NVIDIA GeForce GTX 1660 Ti",
                                  "NVIDIA GeForce GTX 1650 SUPER", "NVIDIA GeForce MX450"])
def test_a_turing_part_without_tensor_cores_has_none(name):
    """Named by its own capture as sm 7.5 (or with no compute capability), it has no Tensor Core (base: True)."""
    assert devices.has_matrix_units(name, 7.5) is False
    assert devices.has_matrix_units(name, None) is False


@pytest.mark.parametrize("name", ["Tesla T4", "NVIDIA T4", "NVIDIA GeForce RTX 2080 Ti", "Quadro RTX 6000",
                                  "NVIDIA TITAN RTX"])
def test_control_the_other_turing_parts_keep_their_tensor_cores(name):
    """Control (passes on base too): the TU102-TU106 parts and the T4 (TU104) have them."""
    assert devices.has_matrix_units(name, 7.5) is True


def test_control_another_recorded_compute_capability_is_the_capture_s_word():
    """Control: the name overrules no other compute capability than Turing's."""
    assert devices.has_matrix_units("NVIDIA T1000", 8.6) is True


def _rules(tmp_path, name: str, sms: int, chip: str) -> set[str]:
    """The rules that fire on a generated fp32 GEMM loop whose one GPU is ``name``."""
    p = tmp_path / f"{chip}.sqlite"
    nx.write(str(p), nx.NsysJob(steps=10, ops=12, kernel_us=400.0, kernel="volta_sgemm_32x128_nn", h2d_us=200.0))
    con = sqlite3.connect(p)
    con.execute("UPDATE TARGET_INFO_GPU SET name = ?, smCount = ?, chipName = ?, computeMajor = 7, computeMinor = 5, "
                "totalMemory = 3899326464", (name, sms, chip))
    con.commit()
    con.close()
    out = in_process("report", str(p), "--format", "json", "--cache-dir", "off")
    return {f["rule"] for f in json.loads(out.stdout)["reports"][0]["findings"]}


def test_fp32_gemms_on_a_t1000_are_not_told_to_use_its_tensor_cores(tmp_path):
    """The T1000 (TU117): no Tensor Core finding and no mixed-precision one (base: both, critical)."""
    fired = _rules(tmp_path, "NVIDIA T1000", 14, "TU117")
    assert not fired & {"tensor_core_unused", "mixed_precision_off"}, fired


def test_control_the_same_gemms_on_a_t4_are(tmp_path):
    """Control (passes on base too): the T4 (TU104) runs them on Tensor Cores in 16 bit."""
    fired = _rules(tmp_path, "Tesla T4", 40, "TU104")
    assert {"tensor_core_unused", "mixed_precision_off"} <= fired, fired


def test_a_t1000_s_fp16_peak_is_its_fp16_units_not_turing_s_tensor_cores():
    """Its 16-bit peak is twice the fp32 one (the TU11x dies' fp16 units), not Turing's Tensor Core 8x (base: 20.0
    TFLOP/s for a 5.0 TFLOP/s card); a T4's stays its datasheet's Tensor Core figure."""
    from tb_gpu_advisor.devices.codes import P_FP16, P_FP32
    from tb_gpu_advisor.devices.peaks import peak_flops
    fp16, fp32 = (peak_flops("NVIDIA T1000", (7, 5), p, sm_count=14, clock_hz=1.395e9) for p in (P_FP16, P_FP32))
    assert fp16.value == pytest.approx(2 * fp32.value) and "Tensor Core" not in fp16.source
    assert peak_flops("Tesla T4", (7, 5), P_FP16, sm_count=40).value > 8 * fp32.value
