"""A stackless loop whose first step's state pairs by size with the next iteration's gradients reads its iterations
(issue #37 class 5, h37-probe48a2; probe47m's *Left* 1).

Truth by construction (``synthetic.memsnapshot.training_iterations``, its ``leak`` truth), recorded without stacks
(``as_recorded(context=None)``): 3 iterations of a 2-layer model of 8-MiB activations, 64-MiB weights, one
micro-batch, gradients zeroed in place (``set_to_none=False``), an evaluation's graph kept each iteration
(``val_total += loss``: 3 x 16 MiB and its 512-B loss).  The first iteration's gradients are held for good, the later
ones' made and freed, so over every allocation the sizes repeat every 9 from the first step's last 64-MiB moments on
-- the moments, kept, paired by size with the next iteration's gradients, freed.  That reading failed
``_kept_alike`` and a coincidental one of the freed blocks won (2 repeats of [8 MiB, 8 MiB, loss]): the job read 2
iterations, the last two as one, and the leak's rounds no leak.  ``job.iterations._past_made_once`` begins the
repeats after the blocks made once; of readings with as many whole repeats, the one holding more of its allocations
wins (``_repeating``).  And the forms18 seeds whose first iteration's micro-batches fell before the repeats.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_reports import leaks, report, written

MiB = 1 << 20
EVAL = 3 * 16 * MiB + 512
LOOP = dict(iterations=3, layers=2, mib=8, micro_batches=1, set_to_none=False, leak="graph")


def _stackless(**kw) -> ms.Scenario:  # noqa: ANN003 - the writer's parameters
    sc = ms.training_iterations(**kw)
    return ms.Scenario(ms.as_recorded(sc.doc, context=None), sc.truth)


@pytest.mark.parametrize("optimizer_temp", [False, True])
def test_the_job_reads_its_three_iterations(tmp_path: Path, optimizer_temp: bool) -> None:
    sc = _stackless(**LOOP, optimizer_temp=optimizer_temp)
    rep = report(written(tmp_path, sc))
    assert sc.truth["iterations"] == 3
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", 3), rep.steps
    # each iteration's forward, loss, 2 gradients and the kept graph -- and the step's temporary where it makes one
    assert f"repeat every {9 + optimizer_temp} allocations" in rep.steps["note"], rep.steps["note"]


@pytest.mark.parametrize("optimizer_temp", [False, True])
def test_the_graph_leak_reads_three_iterations_of_four_blocks(tmp_path: Path, optimizer_temp: bool) -> None:
    sc = _stackless(**LOOP, optimizer_temp=optimizer_temp)
    truth = sc.truth["leak"]
    assert (truth["blocks_per_iteration"], truth["bytes_at_end"]) == (4, 3 * EVAL)
    (f,) = leaks(report(written(tmp_path, sc)))
    d = f.metric.detail
    assert (d["iterations"], d["blocks_per_iteration"], d["per_iteration_bytes"]) == (3, 4, EVAL)
    assert d["leak_end_bytes"] == 3 * EVAL == 150_996_480


@pytest.mark.parametrize("optimizer_temp", [False, True])
def test_control_without_the_leak_reads_no_leak(tmp_path: Path, optimizer_temp: bool) -> None:
    # its job still reads 2 (as on BASE): without the kept graph the blocks made once are over half the allocations,
    # so no every-allocation reading repeats -- left (SURVEY, h37-probe48a2)
    rep = report(written(tmp_path, _stackless(**{**LOOP, "leak": ""}, optimizer_temp=optimizer_temp)))
    assert not leaks(rep)


def test_control_gradients_set_to_none_read_as_before(tmp_path: Path) -> None:
    (f,) = leaks(report(written(tmp_path, _stackless(**{**LOOP, "set_to_none": True}, optimizer_temp=False))))
    d = f.metric.detail
    assert (d["iterations"], d["blocks_per_iteration"], d["leak_end_bytes"]) == (3, 4, 3 * EVAL)


#: The forms18 seeds 116357, 116719 and 116782 (probe47a's *Left*): 2 layers of 64-MiB activations, 2-3 micro-batches,
#: gradients zeroed in place, an optimizer temporary each step.  The repeats are whole iterations; the first
#: iteration's micro-batches each open at the level an iteration does, and no one of them alone makes what a repeat
#: makes, so that iteration fell to the set-up: the job read 7/5/5 of 8/6/6 (the leak read all).  Together they do
#: (``job.iterations._alike_rounds``).
HEAD_SEEDS = {
    116357: dict(iterations=8, micro_batches=2, leak="list", leak_mib=48),
    116719: dict(iterations=6, micro_batches=2, leak="list", leak_mib=4),
    116782: dict(iterations=6, micro_batches=3, leak="graph", leak_mib=4),
}


@pytest.mark.parametrize("seed", sorted(HEAD_SEEDS))
def test_the_first_iterations_micro_batches_read_as_one_iteration(tmp_path: Path, seed: int) -> None:
    kw = dict(layers=2, mib=64, set_to_none=False, optimizer_temp=True, hold_loss=True, **HEAD_SEEDS[seed])
    sc = _stackless(**kw)
    rep = report(written(tmp_path, sc))
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", kw["iterations"]), rep.steps
    truth = sc.truth["leak"]
    (f,) = leaks(rep)
    d = f.metric.detail
    assert (d["iterations"], d["blocks_per_iteration"], d["leak_end_bytes"]) == (
        kw["iterations"], truth["blocks_per_iteration"], truth["bytes_at_end"])


def test_control_a_loop_that_changes_after_its_head_reads_its_repeats(tmp_path: Path) -> None:
    """An evaluation kept from the third of 6 iterations: the head's first iteration reads as a repeat's like, yet
    each later iteration keeps 4 blocks more than the second, so the iterations it opens were not alike -- the repeats
    alone read the 4 leaking iterations (``_without_heads``), the leak its 4 rounds.  Since h37-probe50m the blocks
    the later rounds keep again after their step are no part of what makes iterations alike
    (``job.iterations._kept_again``): all 6 read (the truth), the leak as before."""
    sc = _stackless(iterations=6, layers=2, mib=8, micro_batches=2, set_to_none=False, optimizer_temp=True,
                    leak="graph", leak_from=2)
    rep = report(written(tmp_path, sc))
    assert rep.steps["found"] == sc.truth["iterations"] == 6, rep.steps
    (f,) = leaks(rep)
    d = f.metric.detail
    assert (d["iterations"], d["blocks_per_iteration"], d["leak_end_bytes"]) == (4, 4, 4 * EVAL)
