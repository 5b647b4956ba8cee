"""A leak's rounds at the edges of what the job and the history show (issue #37 class 5, h37-probe47b).

Truth by construction (``synthetic.memsnapshot.training_iterations``, its ``leak`` truth), each the reduction of a
``scripts/randjobs.py --forms18`` seed (form ``snapshot_stackless``) or of probe46k's Left, that read no leak or the
wrong one on 3b05c8b4:

* the job's iterations stop before the loop's last (the last holds the loss its variable keeps at the dump, so it
  repeats no earlier one): the leak took the job's starts for its ends, and its last two rounds read as one -- no
  leak (seeds 116625 stackless, 116094 with Python frames; probe46k's Left 1: an evaluation's graph kept from the
  third iteration under a fused optimizer, gradients zeroed in place) -- ``metrics.memory._iteration_starts`` adds
  the next one's start at the last one's end;
* a leak growing each iteration under 3 micro-batches, recorded without stacks (116006): each size, kept once a
  micro-batch, read as a leak of its own -- 3 "iterations" of 8 blocks (``_unnamed_growth``);
* the loss the loop holds at the dump made in a round of its own, between micro-batch ends, before the evaluation's
  loss of the last iteration (stackless, a fused optimizer): the site of the 512-B losses read no leak or one round
  too many (``_without_held_round``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_reports import leaks, report, written

MiB = 1 << 20
EVAL = 3 * 16 * MiB + 512  # an evaluation's graph: 3 saved 16-MiB activations and its 512-B loss

#: name: (the writer's parameters, how the history was recorded, the job's iterations)
CASES = {
    "116625": (dict(iterations=8, layers=3, mib=64, leak="list", leak_mib=48), "none", 8),
    "116094": (dict(iterations=5, layers=10, mib=8, micro_batches=3, set_to_none=False, optimizer_temp=False,
                    leak="graph", leak_mib=4), "python", 5),
    "116006": (dict(iterations=8, layers=6, mib=8, micro_batches=3, optimizer_temp=False, leak="grow", leak_mib=4),
               "none", None),
    "eval_from_2": (dict(iterations=6, leak="graph", leak_from=2, optimizer_temp=False, set_to_none=False), "all", 3),
    "eval_from_2_micro3": (dict(iterations=6, leak="graph", leak_from=2, optimizer_temp=False, set_to_none=False,
                                micro_batches=3), "all", 3),
    "held_loss_micro2": (dict(iterations=6, leak="graph", leak_from=2, optimizer_temp=False, set_to_none=False,
                              micro_batches=2), "none", None),
    "held_loss_micro3": (dict(iterations=6, leak="graph", optimizer_temp=False, micro_batches=3), "none", None),
}

#: per case: (iterations, blocks an iteration, the last iteration's bytes, bytes at the end, the saving at the peak)
READ = {
    "116625": (8, 1, 48 * MiB, 8 * 48 * MiB, 8 * 48 * MiB),
    "116094": (5, 4, 3 * 4 * MiB + 512, 5 * (3 * 4 * MiB + 512), 4 * (3 * 4 * MiB + 512)),
    "116006": (8, 3, 3 * 32 * MiB, 3 * 4 * MiB * sum(range(1, 9)), 3 * 4 * MiB * sum(range(1, 9))),
    "eval_from_2": (4, 4, EVAL, 4 * EVAL, 3 * EVAL),
    "eval_from_2_micro3": (4, 4, EVAL, 4 * EVAL, 3 * EVAL),
    "held_loss_micro2": (4, 4, EVAL, 4 * EVAL, 3 * EVAL),
    "held_loss_micro3": (6, 4, EVAL, 6 * EVAL, 5 * EVAL),
}


def _recorded(kw: dict, stacks: str, leak: bool = True) -> ms.Scenario:
    """The loop's snapshot as recorded: every frame, Python's only, or none (``context=None``)."""
    sc = ms.training_iterations(**{**kw, **({} if leak else {"leak": ""})})
    doc = {"all": sc.doc, "python": ms.as_recorded(sc.doc, stacks="python")}.get(stacks)
    return ms.Scenario(doc if doc is not None else ms.as_recorded(sc.doc, context=None), sc.truth)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_leak_reads_every_iteration_and_its_bytes(tmp_path: Path, name: str) -> None:
    kw, stacks, _job = CASES[name]
    sc = _recorded(kw, stacks)
    truth, want = sc.truth["leak"], READ[name]
    assert (sc.truth.get("leak_iterations", sc.truth["iterations"]), truth["blocks_per_iteration"]) == want[:2]
    assert (truth["bytes_last_iteration"], truth["bytes_at_end"], truth["bytes_at_peak"]) == want[2:], truth
    (f,) = leaks(report(written(tmp_path, sc)))
    d = f.metric.detail
    assert (d["iterations"], d["blocks_per_iteration"], d["per_iteration_bytes"]) == want[:3]
    assert d["leak_end_bytes"] == want[3] and f.saving_bytes == want[4]


@pytest.mark.parametrize("name", ["116625", "116094", "eval_from_2"])
def test_control_the_job_reads_its_own_iterations(tmp_path: Path, name: str) -> None:
    """The leak reads the loop's iterations where the job's end before its last: the job itself is not moved by
    that (eval_from_2: fewer than the loop's).  116625's job read 6 of its 8 until h37-probe47a's first
    optimizer step as state (``job.iterations._first_step_state``): all 8 now, the loop's own.  116094's read 4 of
    its 5 until h37-walk53 read its frameless allocations (``stacks="python"``: autograd's thread has no Python frame)
    as the gradients held between micro-batches (``job.iterations._backward_held``): all 5 now, 3 micro-batches each."""
    kw, stacks, job = CASES[name]
    rep = report(written(tmp_path, _recorded(kw, stacks)))
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", job), rep.steps


@pytest.mark.parametrize("name", sorted(CASES))
def test_control_the_same_loop_without_a_leak_reads_none(tmp_path: Path, name: str) -> None:
    kw, stacks, _job = CASES[name]
    assert not leaks(report(written(tmp_path, _recorded(kw, stacks, leak=False))))
