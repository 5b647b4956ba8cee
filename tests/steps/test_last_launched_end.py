"""The last step's stretch to its work's end reads the launches placement reads (h37-lastend, issue #37 "one account").

The wrong assumption (``steps.place._place_windows``): *the work launched in the last host window is every device
event whose correlation id a host event in the closed ``[s, e]`` carries*.  Placement
(``steps.place._launched_per_step``) reads each event's launch record in the half-open ``[s, e)``: every window but
the last ends where the next starts, so a launch at a bound is the step's it opens.  A launch at the last window's very
end (the next range's, or the work after the loop, launched the instant the last mark closed) was the last step's
for the stretch and no step's for placement.  Now both ask ``steps.place._last_launched_end``.

Truth by construction (``synthetic.torchtrace.Rank``): a ``ProfilerStep`` loop of 4 x 1 ms kernels and a read-back
each step, then a 20 ms evaluation kernel launched at the instant the last ``ProfilerStep`` closes.  Every step is the
loop's period (4.03 ms); main stretched the last to the evaluation's end (24.04 ms).  Controls: the same launch 1 us
later (outside on both readings) and no launch after the loop."""

from __future__ import annotations

import os

import pytest

from synthetic import torchtrace as tt
from tests.support.cli_report import first_host


def _loop(r: tt.Rank) -> None:
    for i in range(4):
        r.kernel(None, f"gemm_{i}", 1000.0)
    r.sync()


def _rows(folder: str, steps: int, after_us: float | None) -> list[float]:
    """The step rows' lengths (ms) of the loop, with the evaluation launched ``after_us`` after the last mark's end
    (None: nothing after the loop)."""
    r = tt.Rank(rank=0, pid=4100, device=0)
    for n in range(steps):
        r.step(n + 1, _loop)
    if after_us is not None:
        r.host_us += after_us - 3.0  # ``Rank.kernel`` calls the launch 3 us after its host clock
        r.kernel(None, "eval_kernel", 20000.0)
    run = os.path.join(folder, "run")
    os.makedirs(run)
    tt.write_doc(os.path.join(run, "node0_4100.1.pt.trace.json"), tt.trace_doc(r, 1))
    h = first_host(folder)
    assert h["steps"]["source"] == "profiler_step" and h["steps"]["count"] == steps, h["steps"]
    return [row["step_ms"] for row in h["step_rows"]]


@pytest.mark.parametrize("steps", [2, 3])
def test_a_launch_at_the_last_marks_end_is_not_the_last_steps(tmp_path, steps: int) -> None:
    """Every step the period (main: the last 24.04 ms, the evaluation's 20 ms in it)."""
    ms = _rows(str(tmp_path), steps, 0.0)
    assert max(ms) < 4.1 and max(ms) == pytest.approx(min(ms), rel=0.001), ms


@pytest.mark.parametrize("after_us", [1.0, None])
def test_controls_a_later_launch_or_none(tmp_path, after_us: float | None) -> None:
    """1 us after the mark's end, or no launch at all: outside the last step on both readings."""
    ms = _rows(str(tmp_path), 2, after_us)
    assert max(ms) < 4.1, ms
