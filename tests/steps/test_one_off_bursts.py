"""GPU bursts whose start-up burst runs work no later burst runs again are no warm-up iterations (h37-rpd, issue #37).

A program traced from its start that runs its work once -- ROCm/rocmProfileData's blog example (MIT, kept in
``tests/fixtures/foreign/rocm_rpd_matmul``): a 2 GB upload, one Tensile GEMM of 26.2 ms, then the ``print`` of the
result in a dozen small bursts -- was cut into 11 GPU-burst "steps"; the 7 holding the start-up's one-time costs
(module loading, first launches) were dropped as warm-up, and the report averaged the ``print``'s two 3.7 ms bursts
as the "steady state": its top finding a cold start of the 3.71 ms "step", the upload and the GEMM read nowhere.
The assumption was that a burst holding one-time costs is an earlier iteration of the loop the later bursts run; it
is only where the later bursts run its work again.  The same program by construction (``synthetic.rpdtrace``) and a
loop whose first iteration pays the start-up (the control) are read both ways."""

from __future__ import annotations

from pathlib import Path

from synthetic.rpdtrace import write
from tests.support.cli_report import first_host

MATMUL = Path(__file__).resolve().parents[1] / "fixtures" / "foreign" / "rocm_rpd_matmul" / "matmul_result.rpd"
GEMM = "Cijk_Ailk_Bljk_SB_MT128x64x16_MI32x32x2x1_ISA90a"
SMALL = "void at::native::modern::elementwise_kernel<at::native::AbsFunctor<float>>(int)"
#: the host's pauses after each burst: a long one after the work (its libraries loading), then the print's
GAPS = [300.0, 3.0, 7.0, 4.0, 9.0, 5.0, 6.0, 3.0, 8.0]


def test_the_real_matmul_is_one_pass_holding_its_upload_and_gemm():
    host = first_host(MATMUL)
    steps = host["steps"]
    assert (steps["source"], steps["count"]) == ("whole_capture", 1), steps
    assert "no later burst runs again" in steps["note"] and "ran its work once" in steps["note"], steps["note"]
    (gpu,) = host["gpus"]
    assert gpu["step_ms"] > 2000  # the pass: the upload's copy at its start to the print's last read


def test_a_program_that_runs_its_gemm_once_is_one_pass(tmp_path: Path):
    path = tmp_path / "once.rpd"
    truth = write(str(path), [[(GEMM, 20000.0)]] + [[(SMALL, 2.0)] * 4 for _ in range(8)], gap_ms=GAPS,
                  upload_bytes=200_000_000)
    steps = first_host(path)["steps"]
    assert (steps["source"], steps["count"]) == ("whole_capture", 1), steps
    assert f"run {truth['gpu_ns'][GEMM] / 1e6:,.1f} ms of kernels no later burst runs again" in steps["note"]


def test_control_a_loop_whose_first_iteration_pays_the_start_up_keeps_its_iterations(tmp_path: Path):
    path = tmp_path / "loop.rpd"
    write(str(path), [[(GEMM, 20000.0), (SMALL, 2.0)] for _ in range(9)], gap_ms=GAPS, upload_bytes=200_000_000)
    steps = first_host(path)["steps"]
    assert steps["source"] != "whole_capture" and steps["count"] >= 5, steps
    assert "no later burst runs again" not in steps["note"]
