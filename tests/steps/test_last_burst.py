"""The last of a few GPU bursts read as steps holds no whole step where nothing after it says how long its iteration
ran on (issue #37 class "tiny steps", h37-laststep; left by h37-randjobs8).

Each burst's step runs to the next burst's start, so it holds its work and the host's time after it (the next batch's
loading); the capture's last burst has no next one and ends at its own work.  Of more than ``steps.drop_edges_above``
steps the stock rule drops it anyway; of 3-5 main averaged it in: 4 training steps of an MoE model with 6.9 ms of
input loading before each read 8.08 ms for 9.82 (``tests/report/test_random_forms8.py``).  By construction (tiny
XPlane captures, nothing but the bursts): the last is dropped where short by more than chance, and kept whole where
the profiler's own window ends a step after its start (it recorded that time).  Controls: a window that goes on far
past it (nothing says when the next would have begun: dropped, not stretched), a last burst short by less than
chance (kept), two bursts (kept: one other tile cannot tell a short last from a cold first).
"""

from __future__ import annotations

from tests.support.tiny_capture import US, bursts as _bursts, capture_steps as _steps


def test_the_last_of_four_bursts_ending_at_its_work_is_dropped():
    """Fails on main (4 kept, the last 43 us: mean 2.26 ms for bursts 3 ms apart)."""
    st = _steps(_bursts([0, 3000, 6000, 9000]))
    det = st.detection
    assert (det.source, det.found, st.count) == ("gpu_busy_clusters", 4, 3), det.note
    assert st.host_windows.tolist() == [[k * 3000 * US, (k + 1) * 3000 * US] for k in range(3)]
    (d,) = det.dropped
    assert d.reason.startswith("partial") and d.window == (9000 * US, 9043 * US), d
    assert "ends at its own work" in det.note


def test_a_window_that_ends_a_step_after_the_last_burst_keeps_it_whole():
    """Fails on main (the last step 43 us): the window ends 3 ms after the last burst's start, where a fifth would
    start -- it recorded the last step's time after its work."""
    st = _steps(_bursts([0, 3000, 6000, 9000]), window_ms=12.0)
    assert (st.detection.found, st.count, st.detection.dropped) == (4, 4, []), st.detection.note
    assert st.host_windows[-1].tolist() == [9000 * US, 12000 * US]
    assert "runs to the profiler's window's end" in st.detection.note


def test_a_window_that_goes_on_far_past_the_last_burst_stretches_nothing():
    """The stretch's control (main keeps the last, 43 us): 50 ms of window after the last burst's start, far more than
    a step -- nothing says when a next one would have begun (the loop ended, the profiler stopped later), so the last
    is not stretched but dropped as partial."""
    st = _steps(_bursts([0, 3000, 6000, 9000]), window_ms=59.0)
    assert (st.detection.found, st.count) == (4, 3)
    assert st.detection.dropped[0].window == (9000 * US, 9043 * US)
    assert "window's end" not in st.detection.note


def test_a_last_burst_short_by_less_than_chance_is_kept_control():
    """Control: bursts of 100 ms apart by 1.5 ms of idle (a synced pass, then the host's time): the last, 1.5% short
    of the others' 101.5 ms, is within what chance moves a window's edge (``steps.short_last_share``): kept."""
    st = _steps(_bursts([0, 101_500, 203_000, 304_500], kernels=10, kernel_us=9_999.0))
    assert (st.detection.source, st.detection.found, st.count) == ("gpu_busy_clusters", 4, 4), st.detection.note
    assert not st.detection.dropped


def test_two_bursts_keep_both_control():
    """Control: of two bursts, one tile cannot tell a short last from a cold first: both kept, as on main."""
    st = _steps(_bursts([0, 3000]))
    assert (st.detection.source, st.detection.found, st.count) == ("gpu_busy_clusters", 2, 2), st.detection.note
