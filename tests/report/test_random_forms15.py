"""A window at either end of a queue, drawn as random jobs with truth by construction (h37-loopstart,
``scripts/randjobs.py --forms15``; #37 class 1): ``torchtrace.write_loop_ended`` -- the loop's end whose GPU drains the
last step's queue (h37-loopend2, kept real as ``wild/loop_ended_backlog_a100_gnn``) or, as the control, a step
launching its own work -- and its twin ``torchtrace.write_loop_opened``, a window opening mid-loop on the step before's
queue (``wild/hf_qwen_h100``'s first step).  Every report law runs over both; the truth: the loop's end is its window
(``tests.support.random_jobs.window_problems``) with capture quality its one finding, and a window opened on a queue
times its first step without it (``_first_step_problems``).
"""

from __future__ import annotations

from synthetic.randjobs import FORMS15, form15_job, random_form15_job
from tests.support.random_jobs import _first_step_problems, report_of, walk

#: the loop's end: a step launching its own work behind 598 queued kernels (0, the control), no queue (4), one
#: kernel (8), 1,972 and 311 (20, 22); mid-loop: a queue of 1 kernel drained before the first step (1), 7 and 551
#: waited for by torch.cuda.synchronize() (3, 21), 452 and 1,798 the first step's launches queue behind (7, 12), no
#: queue (34, 57)
SEEDS = (0, 1, 3, 4, 7, 8, 12, 20, 21, 22, 34, 57)


def test_random_form15_jobs_hold_every_law_and_their_truth():
    drawn = [random_form15_job(s) for s in SEEDS]
    assert {(j.fmt, j.params["backlog"] > 1) for j in drawn} == {(f, q) for f in FORMS15 for q in (False, True)}
    assert walk(SEEDS, random_form15_job) == set(FORMS15)


def test_the_first_step_check_fails_a_step_that_books_the_queue(tmp_path):
    """The truth check can fail: the first step read with the queue in it is a problem it names."""
    job = form15_job("kineto_loop_opened", 1, backlog=40, steps=3, sync_first=True, first=6)
    rows = report_of(job, str(tmp_path)).hosts[0].step_rows
    first = min((r for r in rows if r.gpu is not None), key=lambda r: r.step)
    assert _first_step_problems({"first_step_ms": first.step_ms}, rows) == []
    assert _first_step_problems({"first_step_ms": first.step_ms - 2.0}, rows), first  # the 40 kernels' 2 ms
