"""A short native loop whose every iteration launches one sequence -- its batch's ``hipMemcpy``, then its kernel --
the host waiting in ``hipDeviceSynchronize`` after each (h37-probe45m; randjobs ``--forms5`` seed 92463: 3
iterations after a 64 MiB set-up upload, read as one pass, "0 steps found, the job ran 3").

Truth by construction (``synthetic.rocproftrace.write``): the iterations' count, and each iteration's length, from its
first call (the batch's copy) to the next one's (``truth["step_starts"]``).  ``job.period`` reads a period from 8
launches or more and, from fewer, only a loop of one kernel between the host's waits; the loop's 7 launches (the
set-up's upload, then a copy and a GEMM three times) were neither, and its bursts, 0.8 ms apart, were too close for
the GPU's idle to cut.  ``job.period._alike_runs`` reads the runs between the waits where each launches the same
sequence, the set-up's launches before the first left out.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import rocproftrace
from synthetic.randjobs import random_form5_job
from tests.support.cli_report import first_host
from tests.support.random_jobs import check

GEMM = [("Cijk_Alik_Bljk_SB_MT64x64x16_MI16x16x4x1_SN_GRVW4_K1_WG16_16_1", 38.159)]
#: seed 92463's program, but its steps' count
LOOP = dict(upload_bytes=64 << 20, read_bytes=0, step_range=None, gap_ms=0.535, hsa_calls=3,
            step_upload_bytes=1 << 20, step_staging_ms=0.269, step_copy_call="hipMemcpy",
            step_sync="hipDeviceSynchronize")


def _steps(tmp_path: Path, kernels: list[list[tuple[str, float]]], **over: object) -> tuple[dict, dict]:
    truth = rocproftrace.write(str(tmp_path / "results.json"), kernels, **{**LOOP, **over})
    return first_host(tmp_path), truth


def test_seed_92463_reads_its_three_iterations() -> None:
    assert random_form5_job(92463).params["steps"] == 3
    assert not check(random_form5_job(92463))  # main: "step-truth: 0 steps found, the job ran 3"


@pytest.mark.parametrize("upload", [64 << 20, 0])
def test_runs_between_waits_of_one_sequence_are_the_iterations(upload: int, tmp_path: Path) -> None:
    """Each step runs from its batch's copy call to the next one's (0.917 ms: 0.269 ms of staging, the copy, the GEMM,
    the sync and the loop's 0.535 ms); the set-up's upload is in none."""
    host, truth = _steps(tmp_path, [GEMM] * 3, upload_bytes=upload)
    steps = host["steps"]
    assert (steps["source"], steps["found"], steps["confidence"]) == ("repeated_launches", 3, "low"), steps
    assert "3 runs of the same launch sequence of 1 kernel and 1 copy" in steps["note"]
    assert ("the 1 launch before the first, the program's set-up, left out" in steps["note"]) == bool(upload)
    starts = truth["step_starts"]
    period_ms = (starts[1] - starts[0]) / 1e6
    assert starts[2] - starts[1] == starts[1] - starts[0]
    rows = [r["step_ms"] for r in host["step_rows"]]
    assert rows[:2] == pytest.approx([period_ms] * 2, rel=1e-3), (rows, period_ms)


def test_a_read_back_after_the_loop_is_no_iteration(tmp_path: Path) -> None:
    """The results read back once after the last wait (a ``hipMemcpy`` from the device, a run of its own): no step,
    and no part of the last one's launches."""
    host, truth = _steps(tmp_path, [GEMM] * 3, upload_bytes=0, read_bytes=1 << 20)
    assert (host["steps"]["source"], host["steps"]["found"]) == ("repeated_launches", 3), host["steps"]
    assert truth["copies"][-1]["direction"] == "d2h"


def test_runs_of_different_work_stay_one_pass_control(tmp_path: Path) -> None:
    """Control: three synced runs that each launch other kernels (a program's phases, each waited on) are no loop."""
    phases = [[(f"phase{i}_kernel(float*)", 38.159)] for i in range(3)]
    host, _ = _steps(tmp_path, phases, upload_bytes=0)
    assert host["steps"]["found"] == 0 and host["steps"]["source"] != "repeated_launches", host["steps"]


@pytest.mark.parametrize("upload", [64 << 20, 0])
def test_two_waited_calls_read_two_iterations_unless_after_a_set_up(upload: int, tmp_path: Path) -> None:
    """Two runs of the sequence, one wait between them, are two iterations -- the walk's law reads two iterations as
    two steps or none, never one pass of both (h37-probe45w's reading, merged with this one: ``_ALIKE_LEAST`` 2) --
    but after a set-up upload they may be a program's warm-up call and its timed one: no reading of the waits alone
    (the control probe45m wrote, none found: the law allows it for two)."""
    host, _ = _steps(tmp_path, [GEMM] * 2, upload_bytes=upload)
    if upload:
        assert host["steps"]["source"] != "repeated_launches", host["steps"]
    else:
        assert host["steps"]["source"] == "repeated_launches" and host["steps"]["found"] == 2, host["steps"]
