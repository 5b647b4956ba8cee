"""A launch period must tile the loop it claims, and a burst loop's last step is judged against its steady steps
(issue #37 class 2; h37-probe47n *Left* 1-2).

1. A native loop queues a GEMM and 2, 3, then 4 elementwise kernels an iteration (no op, no sync, no ``prof.step()``):
   ``GEMM + 3`` occurs once, but the last iteration's first four launches match the one before, so
   ``job.period.repeated_launches`` read "2 repeats of the same 4-kernel launch sequence" -- one kept step of three
   iterations.  The last iteration runs on past the region with no boundary before its fifth launch: the repeat is
   no whole iteration (``period._runs_on``), and the bursts read each iteration.
2. A set-up upload queued into the first burst makes the first step 6.48 ms among steps of 3.11-3.21 ms; the spread
   it widened (``steps.ends._chance``) kept the 5-iteration loop's last burst, cut at its own work (1.10 ms), as a
   step.  ``steps.ends._steady`` judges the last step against the steady steps.
Truth by construction: ``synthetic.torchtrace.write_native_queued_loop`` and ``synthetic.rocproftrace.write``.
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


@pytest.mark.parametrize("extra", [[2, 3, 4], [2, 3, 4, 2], [1, 2, 3], [2, 3, 4, 5], [2, 3, 3, 3, 4]])
def test_growing_iterations_read_as_their_bursts(tmp_path: Path, extra: list[int]) -> None:
    """BASE: ``repeated_launches``, 2 found, 1 kept (one 3.07-3.23 ms step of 3-4 iterations); [2, 3, 3, 3, 4]: 4
    found, 3 kept -- the three alike iterations, the first (GEMM + 2, before the repeats with no boundary between:
    the head's iteration is no cut repeat) in no step.  Now every iteration is a burst; each but the last runs start
    to start (the last to the window's end, after its pause)."""
    truth = torchtrace.write_native_queued_loop(str(tmp_path / "w.1.pt.trace.json"), extra)
    host = first_host(tmp_path)
    steps = host["steps"]
    assert (steps["source"], steps["found"], steps["count"]) == ("gpu_busy_clusters", len(extra), len(extra)), steps
    assert _rows(host)[:-1] == pytest.approx(truth["step_ms"], abs=1e-5)
    assert _rows(host)[-1] == pytest.approx((900.0 + 80.0 * extra[-1] + 2000.0) / 1000.0, abs=1e-5)


def test_equal_iterations_still_read_as_repeats(tmp_path: Path) -> None:
    """Control: every iteration the same (GEMM + 3): the period tiles the loop -- 4 repeats, the last dropped as the
    rest of the loop's last iteration, as on BASE."""
    truth = torchtrace.write_native_queued_loop(str(tmp_path / "w.1.pt.trace.json"), [3, 3, 3, 3])
    host = first_host(tmp_path)
    steps = host["steps"]
    assert (steps["source"], steps["found"], steps["count"]) == ("repeated_launches", 4, 3), steps
    assert _rows(host) == pytest.approx(truth["step_ms"], abs=1e-5)  # 3.148 ms x 3


@pytest.mark.parametrize("n", [5])
def test_a_set_up_upload_does_not_keep_the_partial_last_burst(tmp_path: Path, n: int) -> None:
    """BASE (5): 5 found, 5 kept, the last 1.10 ms (its own work alone).  Now the partial last is dropped: the first
    step holds the upload (6.477 ms), the others are the truth's start-to-start times.  (4 iterations, ``[0, 1, 0,
    2]``, now read their own loop's host pauses: ``tests/steps/test_alternating_own_loop.py``.)"""
    extra = [0, 1, 0, 2, 0][:n]
    truth = rocproftrace.write(str(tmp_path / "results.json"), [LOOP + [AXPY] * e for e in extra],
                               step_range=None, step_sync=None, gap_ms=2.0)
    starts = truth["step_starts"]
    tiles = [(b - a) / 1e6 for a, b in zip(starts, starts[1:])]
    host = first_host(tmp_path)
    steps = host["steps"]
    assert (steps["source"], steps["found"], steps["count"]) == ("gpu_busy_clusters", n, n - 1), steps
    assert [d["step"] for d in steps["dropped"]] == [n - 1], steps["dropped"]
    assert _rows(host)[0] == pytest.approx(6.477, abs=1e-3)  # the upload queued ahead of the first iteration
    assert _rows(host)[1:] == pytest.approx(tiles[1:], abs=1e-6)
