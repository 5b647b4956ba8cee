"""Several ranks' Kineto traces read per GPU from their ``ProfilerStep#N`` device spans: the last step is the
iteration its rank's host annotation holds, not its kernels alone (issue #37, h37-randjobs13).  Each GPU step but the
last runs from its span's start to the next one's, so it holds the rank's time before its first kernel (Python before
the first op, a batch's fetch); on main the last ended at its own device span's end, without that time: 2 ranks, 3
iterations of 1.48 ms with 1 ms of untraced Python before each forward read as 1.13 ms steps, the last 0.44 ms
(``--forms13`` walk seed 340).  The wrong assumption: a step's device span covers its iteration.  The job is
``synthetic.randjobs``' Kineto loop, its period the host marks' by construction (``randjobs.TRUTH``)."""

from __future__ import annotations

import pytest

from synthetic import randjobs
from tests.support.random_jobs import report_of


def _read(tmp_path, **params) -> tuple[dict, float, float]:
    job = randjobs.form13_job("kineto_user_copies", 0, **{
        "steps": 3, "ranks": 2, "train": False, "layers": 1, "batch": 1, "width": 8192, "marker": "profiler_step",
        "unrecorded_us": 1006.0, "comm_us": 338.0, "user_copies": [("tolist", 0.67)], **params})
    h = report_of(job, str(tmp_path)).hosts[0]
    return h.steps, h.mean_step_ms(), randjobs.TRUTH[0]["step_ms"]


@pytest.mark.parametrize("ranks,steps,lead_us", [(2, 3, 1006.0), (4, 5, 1006.0), (2, 3, 0.0)])
def test_the_last_rank_step_holds_its_host_iteration(tmp_path, ranks, steps, lead_us):
    """(Without the lead the last step still left out the host's tail: its read-back's return, 0.43 of 0.44 ms.)"""
    found, mean, period = _read(tmp_path, ranks=ranks, steps=steps, unrecorded_us=lead_us)
    assert (found["source"], found["found"]) == ("profiler_step", steps), found
    assert mean == pytest.approx(period, rel=0.01), (mean, period)


def test_one_rank_is_unchanged(tmp_path):
    """Control: one rank reads its host marks, never the device spans (both on main and here)."""
    found, mean, period = _read(tmp_path, ranks=1)
    assert (found["source"], found["found"]) == ("profiler_step", 3), found
    assert mean == pytest.approx(period, rel=0.01), (mean, period)


@pytest.mark.parametrize("seed", [20464, 21052, 21678, 22796, 23156])
def test_a_late_ranks_last_step_holds_the_gap_before_its_next_mark(tmp_path, seed):
    """h37-usercopies13: ranks that reach each step late (``late_rank_us``: untraced, before their ``ProfilerStep#``
    opens) close it with the others at the all-reduce's end, so each GPU step but the last holds that gap and every
    rank keeps the job's period.  On main the last step was its host annotation alone: 4 ranks of a 15 ms period read
    14.66 ms (``--forms13`` walk seed 23156; 20464: 1.549 of 1.668 ms).  The wrong assumption: a rank's annotations
    tile its loop, so the last one is a whole period."""
    job = randjobs.random_form13_job(seed)
    h = report_of(job, str(tmp_path)).hosts[0]
    truth = randjobs.TRUTH[seed]
    assert (h.steps["source"], h.steps["found"]) == ("profiler_step", truth["steps"]), h.steps
    assert h.mean_step_ms() == pytest.approx(truth["step_ms"], rel=0.01), (h.mean_step_ms(), truth["step_ms"])


@pytest.mark.parametrize("late_us", [0.0, 700.0])
def test_the_gap_is_read_from_the_ranks_own_marks(tmp_path, late_us):
    """A reduced job: 3 ranks, 4 steps, each rank ``late_us`` later than the one before; with no lateness (marks that
    tile) the reading is main's, with it every rank's mean is the period."""
    found, mean, period = _read(tmp_path, ranks=3, steps=4, late_rank_us=late_us, comm_us=900.0, train=True)
    assert (found["source"], found["found"]) == ("profiler_step", 4), found
    assert mean == pytest.approx(period, rel=0.01), (mean, period)


def test_a_last_step_queued_behind_the_gpus_backlog_ends_with_its_work(tmp_path):
    """Walk seed 55591 (2 ranks, 2 inference steps, a 7.9 ms all-reduce the compute stream waits for): step #3's first
    kernel queued behind #2's all-reduce, 7.87 ms after its host mark opened (#2's: 16 us).  On the GPU's clock that
    delay is #2's window (8.81 ms); the last window is its span, 7.94 ms, the next step's work queued behind it.
    Fails on main: the last step took its own lead for the next one's and ran its host annotation and the loop's turn
    (0.68 ms) past its work -- GPU 0's #3 8.62 ms (h37-lastwin)."""
    h = report_of(randjobs.random_job(55591), str(tmp_path)).hosts[0]
    last = {r.gpu: r.step_ms for r in h.step_rows if r.gpu is not None and r.step == 3}
    assert last == {0: pytest.approx(7.9409, abs=1e-3), 1: pytest.approx(7.9409, abs=1e-3)}, last
