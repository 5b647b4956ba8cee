"""The turn a capture's last iteration lacks is read one way: the loop's turn, ``model.columns.loop_turn`` (issue #37
class 2/4, "one account"; h37-lastturn).

Each earlier step holds the loop's turn -- its own code between one step's mark and the next one's (bookkeeping, the
iterator's advance, a late rank's untraced lag, the Python after an update's sync) -- and the last, with no next
mark, does not.  Three readings added it back with three statistics: the JAX / TF ``train`` markers' last step
(``steps.ends._last_marker_turn``) the least earlier gap, DeepSpeed's iterations (``steps.iterations._silent_tail``)
the least silence, a rank's last ``ProfilerStep`` on its GPU (``formats.kineto.adapter._host_mark_gap_ps``) the
median.  The wrong assumption: *the loop's turns are all alike, so any statistic of them is its turn*.  They vary: one
turn holds one-time work (an evaluation, a rank held up once), one is cut short.  The least takes the cut turn for
the loop's; the median of two blends the one-time work in.  The loop's turn is the lower median: a turn the loop did
take, one outlier of either kind resisted from three gaps on, the shorter of two.

Truth by construction: loops whose turns vary, each a usual turn after its last step (``jaxcapture.end_step``'s
``turn_us``; ``randjobs``' per-step ``late_rank_us``): the last step is as long as a usual one."""

from __future__ import annotations

import os
import tempfile
from types import SimpleNamespace

import numpy as np
import pytest

from synthetic import jaxcapture as J
from synthetic import randjobs
from synthetic import xla_kernels as X
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.columns import loop_turn
from tb_gpu_advisor.steps.iterations import _silent_tail, _with_silent_tails
from tests.support.random_jobs import gpu_step_rows, laws_broken
from tests.support.report_store import session_report

_US = 10**6  # ps


def test_the_loops_turn_is_the_lower_median_of_its_gaps():
    """Where the old statistics disagree -- the least (3: a cut turn) and the median (207.5: half an evaluation) --
    the loop's turn is the turn it usually took (15)."""
    assert loop_turn(np.array([15, 400, 3, 15])) == 15  # the least: 3
    assert loop_turn(np.array([15, 400])) == 15  # the median: 207.5
    assert loop_turn(np.array([15, 400, 15])) == 15
    assert loop_turn(np.array([-4, 9])) == 0  # marks that overlap: no turn
    assert loop_turn(np.zeros(0, np.int64)) == 0  # no next step: none measured


def _jax_loop(turns_us: tuple[float, ...], last_us: float) -> tuple[list[float], list[float], str]:
    """A JAX loop of ``train``-marked steps, the loop's turn after each step ``turns_us``, then ``last_us`` after the
    last: (each step's length read, ms; its truth, ms -- marker start to the next one's, the last to the loop's end;
    the steps' source)."""
    cap = J.JaxCapture(gpu=X.H100, hostname="node0", seed=3, step_annotation=True, command_buffers=False)
    kernels = X.mlp_bf16_step(2, command_buffers=False)
    for turn in (*turns_us, last_us):
        cap.begin_step()
        cap.host_work(40.0)
        cap.execute(kernels)
        cap.to_host(4)
        cap.end_step(turn_us=turn)
    starts = [s.marker[0] for s in cap.steps] + [cap.t]
    truth = [(b - a) / _US / 1e3 for a, b in zip(starts, starts[1:])]
    with tempfile.TemporaryDirectory(prefix="lastturn") as folder:
        cap.finish().write(os.path.join(folder, "run", "plugins", "profile", J.SESSION, "node0.xplane.pb"))
        (s,) = discover(folder)
        host = session_report(s).hosts[0]
    return [row.step_ms for row in host.step_rows], truth, host.steps["source"]


@pytest.mark.parametrize("turns", [(15.0, 400.0, 3.0, 15.0), (15.0, 400.0)])
def test_a_marked_loops_last_step_holds_the_loops_usual_turn(turns: tuple[float, ...]):
    """5 steps whose turns were 15, 400 (an evaluation), 3 (cut) and 15 us, then 15 after the last: main read the last
    step 12 us short (1.5174 of 1.5294 ms: the least, 3 us).  3 steps of turns 15 and 400 us (the median's trap, the
    least right: passes on main too)."""
    rows, truth, source = _jax_loop(turns, 15.0)
    assert source == "trace_train"
    n = len(truth)
    assert len(rows) % n == 0 and rows, (rows, truth)
    for k in range(0, len(rows), n):  # the host's steps, then each GPU's
        assert rows[k:k + n] == pytest.approx(truth, abs=2e-4), (rows[k:k + n], truth)


@pytest.mark.parametrize("late", [(500.0, 3500.0, 500.0), (500.0, 500.0, 500.0), 500.0])
def test_a_late_ranks_last_step_holds_its_usual_lag(late):  # noqa: ANN001
    """2 ranks, 3 ``ProfilerStep`` steps, the second rank 500 us late to each but held up 3 ms more once, before the
    second step: main read both GPUs' last step 2.408 ms, the 0.908 of every usual step plus half the one-time wait
    (the median of two gaps).  Controls: the same lag each step (per step and as one number) -- the same on main."""
    job = randjobs.kineto_job(7, ranks=2, steps=3, late_rank_us=late, idle_us=300.0)
    report, rows = gpu_step_rows(job)
    assert not laws_broken(report), laws_broken(report)
    assert report.hosts[0].steps["source"] == "profiler_step"
    usual = rows[0][0]
    assert sorted(rows) == [0, 1] and all(len(v) == 3 for v in rows.values()), rows
    assert rows[0][-1] == pytest.approx(usual, abs=1e-3) and rows[1][-1] == pytest.approx(usual, abs=1e-3), rows


def test_an_iterations_silence_is_the_loops_not_its_least():
    """DeepSpeed iterations ending at 100, 200, 300, 400 ps, the next ones' first ranges 30, 5 (one iteration skipped
    its logging: a cut silence), 30 ps later; the window leaves 10 ps before the first range.  The tail every
    iteration holds is 30 - 10 = 20 (main: the least silence, 5, under the room: 0, every iteration and the last 20
    short); the cut iteration's end moves only to the next one's first range."""
    starts = np.array([60, 130, 205, 330], np.int64)
    ends = np.array([100, 200, 300, 400], np.int64)
    assert _silent_tail(starts, ends, floor=50) == 20
    window = SimpleNamespace(window_start_ps=lambda: 50, window_end_ps=lambda: 1000)
    assert _with_silent_tails(window, starts, ends).tolist() == [120, 205, 320, 420]
