"""The host's silence after a DeepSpeed iteration's update is that iteration's own tail where the first iteration
cannot hold it as its lead, and the last of iterations tiled from one update to the next holds its predecessor's GPU
spill already (issue #37 class 2, h37-zero12lead; ``scripts/randjobs.py --zero12`` walk seeds 1257, 1377, 1535, 294).

The wrong assumption: where the host records nothing between an iteration's end (its update's sync) and the next
iteration's first ``DeepSpeedEngine.forward``, the silence is the next iteration's lead (waiting for its batch), so
the first iteration starts that far before its first range -- but never before the capture's window.  When the window
opened closer to the first range than that silence (untraced Python after each ``.item()``: logging, a scheduler's
step), the first iteration could not hold it and read short.  Nsight exports by construction
(``synthetic.nsysexport.NsysJob``: only DeepSpeed's ranges, the first iteration 5 ms into the window; ``""`` in
``extra_ranges`` is ZeRO-1/2's update, launched outside DeepSpeed's ranges), every iteration the period long.
"""

from __future__ import annotations

import numpy as np
import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.steps.iterations import _silent_tail
from tests.support.cli_report import first_host

_MICRO = ("DeepSpeedEngine.forward", "DeepSpeedEngine.backward")
_ZERO3_STEP = "DeepSpeedZeroOptimizer_Stage3.step"


def _rows(tmp_path, extra: tuple[str, ...], **kw) -> tuple[list[float], nx.Truth, dict]:  # noqa: ANN001
    path = tmp_path / "ds.sqlite"
    truth = nx.write(str(path), nx.NsysJob(**{"step_range": None, "autograd_nvtx": False, "extra_ranges": extra,
                                              **kw}))
    host = first_host(path)
    return [r["step_ms"] for r in host["step_rows"]], truth, host


@pytest.mark.parametrize(("gas", "ranks", "untraced_ms", "steps"), [(4, 1, 24.726, 2), (2, 1, 53.87, 5),
                                                                    (4, 1, 14.814, 4), (4, 2, 14.814, 4)])
def test_untraced_time_after_the_updates_sync_is_its_iterations_own(tmp_path, gas, ranks, untraced_ms, steps):  # noqa: ANN001
    """ZeRO-2, the update's sync then untraced Python longer than the 5 ms the window holds before the first
    iteration (the walk's seeds 1257, 1377 and 1535 alike): main read the first step 9.72 of 29.45 ms, 8.64 of 57.52,
    9.72 of 19.54 on one rank; every step is the period.  (On 2 ranks each GPU's steps were already placed at its own
    work, first kernel to first kernel: a control, as on main.)"""
    rows, truth, host = _rows(tmp_path, _MICRO * gas + ("",), steps=steps, ranks=ranks, ops=4 * gas + 4,
                              kernel_us=135.0, untraced_ms=untraced_ms)
    assert host["steps"]["found"] == truth.steps
    assert rows and all(abs(ms - truth.step_ms) < 0.01 for ms in rows), (rows, truth.step_ms)


def test_zero3_read_back_after_its_optimizers_step(tmp_path):  # noqa: ANN001
    """ZeRO-3 whose loop reads its loss back after the optimizer's ``step`` range, then runs 20 ms of untraced Python:
    the same silence after the range that closes each iteration (main: 5.11, 25.03 and 29.93 ms of 25.03)."""
    rows, truth, host = _rows(tmp_path, _MICRO * 2 + (_ZERO3_STEP, ""), steps=3, ops=10, range_starts=(3, 5, 7, 9, 10),
                              untraced_ms=20.0)
    assert _ZERO3_STEP in host["steps"]["note"]
    assert host["steps"]["found"] == truth.steps
    assert rows and all(abs(ms - truth.step_ms) < 0.01 for ms in rows), (rows, truth.step_ms)


def test_the_last_iteration_holds_its_predecessors_spill_once(tmp_path):  # noqa: ANN001
    """ZeRO-2 with no sync: each update's kernels run after its launches, into the next iteration; the last stretched
    to its own work's end counted that spill twice: main read 0.2816, 0.2816, 0.3662 ms of 0.2816 (seed 294's job)."""
    rows, truth, host = _rows(tmp_path, _MICRO * 2 + ("",), steps=3, ops=6, kernel_us=25.072, launch_us=11.77,
                              h2d_bytes=1431, h2d_us=1.0, copies_block=True, sync=False, untraced_ms=0.182)
    assert host["steps"]["found"] == truth.steps
    assert rows and all(abs(ms - truth.step_ms) < 0.01 for ms in rows), (rows, truth.step_ms)


@pytest.mark.parametrize("extra", [_MICRO * 2 + ("",), _MICRO * 2 + (_ZERO3_STEP,)])
def test_control_a_batch_wait_the_window_holds_stays_the_lead(tmp_path, extra):  # noqa: ANN001
    """The loop waits 2 ms for its batch before each iteration, the window opened 5 ms before the first: the first
    iteration holds its own wait, as on main (h37-randjobs12's seed 84)."""
    rows, truth, _ = _rows(tmp_path, extra, steps=3, ops=8, input_ms=2.0, untraced_ms=1.0)
    assert rows and all(abs(ms - truth.step_ms) < 0.01 for ms in rows), (rows, truth.step_ms)


def test_silent_tail_is_the_silence_the_first_iteration_has_no_room_for():
    """Iterations ending at 100 and 200 (ps), the next ones' first ranges at 130 and 230: 30 of silence each."""
    starts, ends = np.array([50, 130, 230], np.int64), np.array([100, 200, 300], np.int64)
    assert _silent_tail(starts, ends, floor=0) == 0  # 50 of room before the first: all of it may be lead
    assert _silent_tail(starts, ends, floor=40) == 20  # 10 of room: 20 of each silence is the tail
    assert _silent_tail(starts, ends, floor=50) == 30  # the window opens at the first range: all of it
    assert _silent_tail(starts[:1], ends, floor=50) == 0  # no next iteration's range: no silence measured
