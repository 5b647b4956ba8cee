"""The period a grain-fed JAX loop's writer gives as truth is the mean of the iterations it ran (h37-seeds24).

h37-seeds23 left ``--forms12`` seed 4044 (2 steps, A100, command buffers, 2.27 ms of other Python a step): read from the
program's ``train`` step markers, 2.976 and 2.795 ms, mean 2.885 against "the job's period" 2.976.  Read by hand, the
markers hold the whole iteration -- the batch's take (``ThreadPrefetchDatasetIterator.__next__``) opens each, the
untraced Python and the jitted step lie inside -- and only the loop's 15 us turn after each marker lies outside.  The
second iteration ran 0.16 ms less host work: the writer jitters each step's host work (2% a draw), and its truth
was the first steps' start-to-start, which of two steps is the first's length alone.  The wrong assumption was the
truth's: *every iteration alike*, where each is drawn apart.  Now the truth is the mean over all the iterations run,
from the first marker to the loop's end (``synthetic.randjobs._write_grain``); the reading is unchanged."""

from __future__ import annotations


from synthetic import randjobs
from tests.support.random_jobs import check, report_of


def test_the_walk_s_two_step_grain_loop_holds_every_law() -> None:
    job = randjobs.random_form12_job(4044)
    assert job.fmt == "grain" and job.params["steps"] == 2
    assert check(job) == []


def test_the_truth_lies_between_the_iterations_read() -> None:
    """The period of two unlike iterations lies between their lengths as read (main: the first's, the longer)."""
    job = randjobs.random_form12_job(4044)
    host = report_of(job).to_dict()["hosts"][0]
    rows = [r["step_ms"] for r in host["step_rows"] if r["gpu"] is None] or [r["step_ms"] for r in host["step_rows"]]
    period = randjobs.TRUTH[4044]["step_ms"]
    assert len(rows) == 2 and min(rows) < period < max(rows), (rows, period)
