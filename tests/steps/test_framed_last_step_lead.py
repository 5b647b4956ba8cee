"""A framed loop's last step reads alike on one rank and on several: its work's end and the loop's least turn, not
the frame's host end (issue #37 class 1/2, h37-probe47g *Left* 3).

The wrong assumptions: *the frame's end is where the last burst's step ends*, and *a last range ends its step*.  ``steps.framed._framed_bursts`` ran the
last framed burst to its frame's end, a host time (where the host would launch the next pass), while every burst's
step runs from its first kernel to the next one's, a device time a launch later: one rank read its last timed pass
20.21 ms of a 20.23 ms iteration, where each of two ranks' GPUs read 20.23 (their own windows: work's end + the least
gap, ``steps.place._last_device_end``).  Now ``steps.framed._last_to_frame_end`` reads the last one so too, not
before the frame's end.  A ``pass N`` range around each pass and its sync ended the last step at its range's end
(20.03 ms on one rank); ranges that span their steps but the loop's turn now give the last its turn
(``steps.ends._ranges_span_turns`` -> ``_last_marker_turn``).

Truth by construction: ``synthetic.nsysexport.write_framed_passes(vary=True)`` -- a kernel that differs per pass, so
no launch period is read and the steps are the GPU's bursts inside ``resnet50_inference``; each pass's period
(``period_ms``: the pass, its sync's 10 us, the timing loop's 200 us, the next launch's 20 us lead) is every step's;
``ranged_passes=True`` the same passes, each in its own ``pass N`` range.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as N
from tests.support.cli_report import first_host


@pytest.mark.parametrize("ranks,lag_us", [(1, 0.0), (2, 3000.0)])
def test_a_framed_burst_loops_last_step_holds_its_launch_lead(tmp_path, ranks: int, lag_us: float) -> None:  # noqa: ANN001
    """4 timed passes, each burst a step: every step, the last too, 20.23 ms on every GPU.
    BASE: 1 rank the last 20.21 ms (its first kernel to the frame's end), the GPU's mean 20.225; 2 ranks 20.23 (the
    control: each GPU's own windows)."""
    _check_every_step_is_the_period(str(tmp_path / f"vary_{ranks}.sqlite"), "gpu_busy_clusters", ranks, lag_us,
                                    vary=True)


@pytest.mark.parametrize("ranks,lag_us", [(1, 0.0), (2, 3000.0)])
def test_a_ranged_passs_last_step_holds_the_loops_turn(tmp_path, ranks: int, lag_us: float) -> None:  # noqa: ANN001
    """A ``pass N`` range around each timed pass and its sync (``ranged_passes``), the timing loop's 200 us after it:
    every step, the last too, 20.23 ms on every GPU (``steps.ends._ranges_span_turns``: the last range's end and the
    loop's turn).  BASE: 1 rank the last 20.03 ms (its range's end), the GPU's mean 20.18; 2 ranks 20.23 (the
    control: each GPU's own windows)."""
    _check_every_step_is_the_period(str(tmp_path / f"ranged_{ranks}.sqlite"), "nvtx_top_range", ranks, lag_us,
                                    ranged_passes=True)


def _check_every_step_is_the_period(path: str, source: str, ranks: int, lag_us: float, **kw: bool) -> None:
    """4 timed passes after 2 warm-ups (``write_framed_passes(**kw)``) read by ``source``: as many steps, each (the
    first GPU's rows) and every GPU's mean the pass's period -- the last step too."""
    truth = N.write_framed_passes(path, warmup=2, measured=4, ranks=ranks, rank_lag_us=lag_us, **kw)
    host = first_host(path)
    assert (host["steps"]["source"], host["steps"]["count"]) == (source, truth["measured"])
    rows = [r["step_ms"] for r in host["step_rows"] if r.get("gpu", 0) == 0]
    assert rows == pytest.approx([truth["period_ms"]] * truth["measured"], abs=1e-4)
    assert [g["step_ms"] for g in host["gpus"]] == pytest.approx([truth["period_ms"]] * ranks, abs=1e-4)
