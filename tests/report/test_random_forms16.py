"""Session 44's forms drawn as random jobs with truth by construction (h37-forms16, ``scripts/randjobs.py
--forms16``; #37 classes 1, 3 and 5): 2-4 ranks in one Kineto file each or one Nsight export, one pausing alone in a
module load and one opening its capture late (``torchtrace.write_rank_pause``, ``nsysexport.write_late_rank_pause``:
every rank's steps its own, at the period of a rank that did neither); a loop polling an event or its stream until
its GPU drains (``torchtrace.write_poll_then_host_work``: the host-sync finding names the program's call); and a
training loop's memory snapshot that leaks a list, an evaluation's graph or a growing list, or nothing
(``memsnapshot.training_iterations``: one memory-leak finding holding the bytes kept at the end over the loop's
iterations, or none).  Every report law runs over each.

The stream's first walk (seeds 0-59) found two things main (a3712eb4) got wrong: every poll that waited said
"1 of them polls" (the words law: one takes the singular; seeds 2, 4, 5 ...), and a leak under gradient
accumulation with an optimizer that allocates nothing per step (a fused one) read 14 iterations of 7 or no leak at
all (seeds 0 and 32: left to h37-probe45k's fused-optimizer reading).
"""

from __future__ import annotations

import pytest

from synthetic import memsnapshot as ms
from synthetic.randjobs import FORMS16, form16_job, random_form16_job
from tests.support.random_jobs import leak_problems, report_of, walk

#: a snapshot with no leak under accumulation (1) and leaking a list (17, 25, 26: ``set_to_none=False``), an
#: evaluation's graph (21) or nothing (38); polls with host work after them (2, 11) and none (9); Nsight ranks opening
#: 1 and 2 steps late beside a pausing rank (3, 19); Kineto ranks opening 1 and 3 steps late, one pausing (6, 22) and a
#: rank pausing on time (14)
SEEDS = (1, 2, 3, 6, 9, 11, 14, 17, 19, 21, 22, 25, 26, 38)


def test_random_form16_jobs_hold_every_law_and_their_truth():
    drawn = [random_form16_job(s) for s in SEEDS]
    assert {j.params["leak"] for j in drawn if j.fmt == "snapshot_leak"} == {"", "list", "graph"}
    assert walk(SEEDS, random_form16_job) == set(FORMS16)


def test_a_poll_that_waits_says_one_wait_in_the_singular(tmp_path):
    """The words law the stream found: one poll a step is "1 of them by polling", never "1 of them polls"."""
    job = form16_job("kineto_poll", 1, steps=6, kernels=8, kernel_us=200.0, host_us=300.0, between_us=10.0,
                     call="cudaEventQuery")
    (f,) = [f for f in report_of(job, str(tmp_path)).hosts[0].findings if f.rule == "host_sync" and "#" not in f.id]
    assert "1 of them by polling" in " ".join(f.summary.split()) and "polls," not in f.summary


@pytest.mark.parametrize("leak", ["list", ""])
def test_the_leak_check_can_fail(tmp_path, leak):
    """The truth check names a leak read where none was made, and a leak's bytes or iterations read wrong."""
    job = form16_job("snapshot_leak", 2, iterations=5, layers=4, mib=32, micro_batches=1, set_to_none=True,
                     optimizer_temp=True, hold_loss=False, leak=leak, leak_mib=16)
    rep = report_of(job, str(tmp_path))
    truth = ms.training_iterations(**job.params).truth.get("leak") or False
    assert leak_problems({"leak": truth, "iterations": 5}, rep) == []
    if leak:
        wrong = dict(truth, bytes_at_end=truth["bytes_at_end"] + 1)
        assert leak_problems({"leak": wrong, "iterations": 5}, rep)
        assert leak_problems({"leak": truth, "iterations": 6}, rep)
        assert leak_problems({"leak": False, "iterations": 5}, rep)
    else:
        assert leak_problems({"leak": {"bytes_at_end": 1}, "iterations": 5}, rep)
