"""A burst loop's last step runs to the profiler window's end only where that falls a steady step after its start
(issue #37 class 2; h37-probe47s *Left* 3).

A native queued loop (no op, no sync: GPU bursts) whose first iteration does one-time work (a GEMM and 40
elementwise kernels: 6.108 ms before steps of 3.148-3.308 ms), then 2.5 ms of the host's own work after the loop (a
checkpoint saved) before the profiler's window closes.  ``steps.ends._last_burst_to_window_end`` judged the window's
end against the chance of every start-to-start time; the first widened it to 2.96 ms, so the window's end 5.80 ms
after the last burst's start read as a step: the last step held the work after the loop.  It now reads the steady
steps (``steps.ends._steady``): the window's end is no step's, the last ends at its own work and is dropped as
partial.  Truth by construction: ``synthetic.torchtrace.write_native_queued_loop``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import torchtrace
from tests.support.cli_report import first_host


def _rows(host: dict) -> list[float]:
    return [r["step_ms"] for r in host["step_rows"] if r.get("gpu") is None]


@pytest.mark.parametrize("extra", [[40, 3, 4, 5], [40, 3, 4, 5, 6]])
def test_work_after_the_loop_is_no_last_step(tmp_path: Path, extra: list[int]) -> None:
    """BASE: every burst kept, the last 5.80 (5.88) ms -- its work, its 2 ms pause and 2.5 ms after the loop.  Now the
    last (its own work, 1.30 / 1.38 ms) is dropped and the kept steps are the truth's start-to-start times."""
    truth = torchtrace.write_native_queued_loop(str(tmp_path / "w.1.pt.trace.json"), extra, after_us=2500.0)
    host = first_host(tmp_path)
    steps = host["steps"]
    n = len(extra)
    assert (steps["source"], steps["found"], steps["count"]) == ("gpu_busy_clusters", n, n - 1), steps
    own = (900.0 + 80.0 * extra[-1]) / 1000.0
    assert [(d["step"], d["ms"]) for d in steps["dropped"]] == [(n - 1, pytest.approx(own, abs=1e-3))]
    assert _rows(host) == pytest.approx(truth["step_ms"], abs=1e-5)


@pytest.mark.parametrize("extra", [[40, 3, 4, 5], [40, 3, 4, 5, 6]])
def test_a_window_closing_a_step_after_still_ends_the_last(tmp_path: Path, extra: list[int]) -> None:
    """Control: the window closes after the last iteration's own 2 ms pause (a steady step after its start): the last
    step runs to it, its work + pause (3.30 / 3.38 ms), on BASE too."""
    truth = torchtrace.write_native_queued_loop(str(tmp_path / "w.1.pt.trace.json"), extra)
    host = first_host(tmp_path)
    steps = host["steps"]
    n = len(extra)
    assert (steps["source"], steps["found"], steps["count"]) == ("gpu_busy_clusters", n, n), steps
    assert _rows(host) == pytest.approx(truth["step_ms"] + [(900.0 + 80.0 * extra[-1] + 2000.0) / 1000.0], abs=1e-5)
