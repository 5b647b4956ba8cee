"""A no-sync loop whose iterations alternate reads each iteration, not a period of two (issue #37 class 2/4;
h37-probe47s *Left* 1).

A native loop (no op, no sync, no ``prof.step()``) queues a GEMM then 2, then 3 elementwise kernels, alternating; the
host runs its own untraced code between iterations, the GPU idle through it.  The launch sequence repeats every two
iterations (3 + 4 launches), and ``job.period._iterations_per_period`` split a period only where the host waited, so
the loop read one "step" of two iterations (6.216 ms of 3.068 + 3.148).  The host's pause ends each iteration of an
own loop (``period._own_cuts``): every iteration is a step.  Truth by construction:
``synthetic.torchtrace.write_native_queued_loop`` and ``synthetic.rocproftrace.write``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import rocproftrace, torchtrace
from tests.support.cli_report import first_host

LOOP = [("gemm_kernel(float*)", 900.0), ("relu(float*)", 80.0), ("softmax(float*)", 120.0)]
AXPY = ("axpy(float*)", 50.0)


def _rows(host: dict) -> list[float]:
    return [r["step_ms"] for r in host["step_rows"] if r.get("gpu") is None]


def _rocprof_loop(tmp_path: Path, extra: list[int]) -> tuple[dict, list[float]]:
    """The report's first host of a rocprof loop of ``LOOP`` plus ``extra[k]`` AXPYs in iteration k, 2 ms of host time
    between iterations, and the truth's start-to-start times (ms)."""
    truth = rocproftrace.write(str(tmp_path / "results.json"), [LOOP + [AXPY] * e for e in extra],
                               step_range=None, step_sync=None, gap_ms=2.0)
    starts = truth["step_starts"]
    return first_host(tmp_path), [(b - a) / 1e6 for a, b in zip(starts, starts[1:])]


@pytest.mark.parametrize("extra", [[2, 3, 2, 3], [2, 3, 2, 3, 2]])
def test_alternating_queued_loop_reads_each_iteration(tmp_path: Path, extra: list[int]) -> None:
    """BASE: ``repeated_launches`` 2 (3) found, 1 (2) kept, each 6.2158 ms (two iterations).  Now one step an
    iteration, each its truth's start-to-start time (3.0679 / 3.1479 ms), the last (its iteration cut at its own
    work) dropped."""
    truth = torchtrace.write_native_queued_loop(str(tmp_path / "w.1.pt.trace.json"), extra)
    host = first_host(tmp_path)
    steps = host["steps"]
    assert (steps["source"], steps["found"], steps["count"]) == ("repeated_launches", len(extra), len(extra) - 1), steps
    assert _rows(host) == pytest.approx(truth["step_ms"], abs=1e-5)


def test_alternating_rocprof_loop_reads_each_iteration(tmp_path: Path) -> None:
    """rocprof ``[0, 1, 0, 1]`` extra kernels, 2 ms of host time between iterations.  BASE: 2 found, 1 kept, one 6.27
    ms "step".  Now 4 found, 3 kept: 3.11, 3.16, 3.11 ms (the truth's start-to-start times)."""
    host, truth_ms = _rocprof_loop(tmp_path, [0, 1, 0, 1])
    steps = host["steps"]
    assert (steps["source"], steps["found"], steps["count"]) == ("repeated_launches", 4, 3), steps
    assert _rows(host) == pytest.approx(truth_ms, abs=1e-6)


def test_a_set_up_upload_stays_out_of_the_first_iteration(tmp_path: Path) -> None:
    """rocprof ``[0, 1, 0, 2]`` after a set-up upload queued into the first burst.  BASE: ``repeated_launches`` 2
    found, 1 kept (6.27 ms); h37-probe47s: the bursts, 4 found, 3 kept, the first 6.477 ms (the upload with it).  Now
    the own loop's pauses cut the 7-launch repeat into its 3- and 4-launch iterations: 3.11, 3.16, 3.11 ms -- the
    truth's start-to-start times, the upload before the loop's first launch in none -- the last (1.158 ms, its own
    work) dropped."""
    host, truth_ms = _rocprof_loop(tmp_path, [0, 1, 0, 2])
    steps = host["steps"]
    assert (steps["source"], steps["found"], steps["count"]) == ("repeated_launches", 4, 3), steps
    assert [(d["step"], d["ms"]) for d in steps["dropped"]] == [(3, pytest.approx(1.158, abs=1e-3))]
    assert _rows(host) == pytest.approx(truth_ms, abs=1e-6)
    assert "4 iterations of 3 and 4 kernels" in steps["note"], steps["note"]


def test_equal_own_loop_still_one_iteration_a_repeat(tmp_path: Path) -> None:
    """Control: every iteration alike (GEMM + 3): the period is one iteration, 4 found, 3 kept, 3.1479 ms each."""
    truth = torchtrace.write_native_queued_loop(str(tmp_path / "w.1.pt.trace.json"), [3, 3, 3, 3])
    host = first_host(tmp_path)
    steps = host["steps"]
    assert (steps["source"], steps["found"], steps["count"]) == ("repeated_launches", 4, 3), steps
    assert _rows(host) == pytest.approx(truth["step_ms"], abs=1e-5)
