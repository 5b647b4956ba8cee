"""Iterations read from a kernel sequence's repeats where two, or three, are all a capture holds (h37-rocsteps).  Truth
by construction: the generators' ``Truth`` (``rocprofv3trace.write_kernel_trace``, ``rocproftrace.write``).

* A rocprofv3 kernel trace with no host and two training iterations (h37-randjobs11's walk, ``--forms11`` seeds 503,
  588, 623): ``job.period.device_iterations`` asked for three repeats, so the GPU's bursts were read instead -- the
  last burst ending at its own work (the mean 4-11% short) or a set-up burst read as a third step.  Two repeats of
  the same kernel sequence, each running a backward, are two iterations where they tile the stream's work
  (``_two_repeats_tile``: nothing outside them but a window's cut ends); their boundary rests on one pair of idles,
  so the reading says so (low confidence).  One iteration of two alike layers repeats its backward twice too: its
  forward and update lie outside the repeats, and it stays one pass.
* A native rocprof loop with no sync and no range, 3 iterations: the period's probe looked one period ahead of the
  middle only, where the read-back after the last iteration ends the repeats, so no period was checked and the
  window read as one pass; 2 and 6 iterations were read.  The probe now looks back as well.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import rocproftrace, rocprofv3trace
from synthetic.randjobs import random_form11_job
from tests.support.cli_report import first_host
from tests.support.random_jobs import check

LOOP = [("gemm_kernel(float*)", 900.0), ("relu(float*)", 80.0), ("softmax(float*)", 120.0)]


@pytest.mark.parametrize("seed", [503, 588, 623])
def test_two_iterations_of_a_kernel_trace_are_two_steps_of_their_period(seed: int) -> None:
    """503 (mean 49.42 ms of a 51.70 ms period), 588 (8.13 of 9.18), 623 (3 steps of 2) on main: the walk's laws."""
    assert random_form11_job(seed).params["iterations"] == 2
    assert not check(random_form11_job(seed))


def test_two_repeats_are_read_at_low_confidence_and_said(tmp_path: Path) -> None:
    truth = rocprofv3trace.write_kernel_trace(str(tmp_path / "908_results.json"), iterations=2, layers=3,
                                              comm_calls=0, setup_bursts=2, warmup_ms=0.0, gap_ms=2.0)
    steps = first_host(tmp_path)["steps"]
    assert (steps["source"], steps["found"], steps["confidence"]) == ("device_period", 2, "low"), steps
    assert "only two repeats" in steps["note"]
    assert truth["steps"] == 2


def test_one_iteration_of_two_alike_layers_is_no_two_iterations(tmp_path: Path) -> None:
    """Control: one iteration whose two layers' backward repeats (a one-kernel forward, two update kernels: the
    repeats hold most of the stream's kernels); what lies outside them -- the forward, the update -- runs nothing a
    repeat runs, so they tile no loop.  Without ``_two_repeats_tile`` this read 2 steps."""
    rocprofv3trace.write_kernel_trace(str(tmp_path / "908_results.json"), iterations=1, layers=2, comm_calls=0,
                                      setup_bursts=2, warmup_ms=0.0, forward_kernels=1, update_kernels=2)
    steps = first_host(tmp_path)["steps"]
    assert steps["source"] != "device_period" and steps["found"] == 0, steps


@pytest.mark.parametrize("n", [2, 3, 6])
def test_a_native_loop_with_no_sync_nor_range_reads_its_iterations(n: int, tmp_path: Path) -> None:
    """rocprof v1's trace of a HIP loop launching the same 3 kernels ``n`` times, 2 ms apart, never syncing (the
    result read back once after the loop): ``n`` steps from the launches' period (main: 3 read as one pass)."""
    rocproftrace.write(str(tmp_path / "results.json"), [LOOP] * n, step_range=None, step_sync=None, gap_ms=2.0)
    steps = first_host(tmp_path)["steps"]
    assert (steps["source"], steps["found"]) == ("repeated_launches", n), steps


def test_a_native_pass_stays_one_pass(tmp_path: Path) -> None:
    """Control: the same program run once is one pass, no period."""
    rocproftrace.write(str(tmp_path / "results.json"), [LOOP], step_range=None, step_sync=None)
    steps = first_host(tmp_path)["steps"]
    assert steps["found"] == 0 and steps["count"] == 1, steps
