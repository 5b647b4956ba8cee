"""The ``--forms16`` walk's leaks that broke after h37-probe45k (issue #37 class 5, h37-probe45g), as reduced jobs
(``synthetic.randjobs.form16_job("snapshot_leak", ...)``: ``memsnapshot.training_iterations``, truth by construction).

* A leak growing each iteration under gradient accumulation of 3 micro-batches (seeds 102, 337): each size is one
  iteration's, and its own gaps hold no optimizer step -- base (850d3394) read 3 "iterations" (the micro-batches)
  whatever the loop ran.  The rounds now end where the line's iterations end (``memory._line_round_numbers``).
* The same growing leak under a fused optimizer (seeds 751, 679): its peak lies in the last iteration, dropped as
  partial, whose start was read off the optimizer's allocations (its first step only): every later iteration's leaked
  outputs read as the peak's activations, and the two savings together exceeded the peak.  Now the job's own
  iteration starts the peak's (``memory._iteration_start``) and a leak's blocks are held (``memory._at_peak``).
* An evaluation's graph kept each iteration under 2 micro-batches and a fused optimizer (seed 1021): 48 MiB a 448 MiB
  climb failed the job's "comes back down" at the forward's start; the job cut at the evaluation and read 5
  iterations, the leak none.  The return now leaves out the bytes the history never frees (``job.iterations._segment``).
* A growing leak under 2 micro-batches, gradients zeroed in place and a fused optimizer, 3 layers for 4 parameters
  (seed 5188, the walk from 5000 after the above): the first backward makes 3 gradients, the second the 4th, so the
  held gradients at the rounds' starts rise (0, 192, 256 MiB ...) before they stay level, and the job gave up their
  grouping -- with the leak's bytes left out of the return its micro-batches read as 5 iterations, the leak as 6.
  The grouping now takes a rise over the first iteration's rounds (``job.iterations._held_from``).
"""

from __future__ import annotations

import pytest

from synthetic import memsnapshot as ms
from synthetic.randjobs import form16_job
from tests.support.properties import memory_savings_problems
from tests.support.random_jobs import leak_problems, report_of

MiB = 1 << 20

#: the walk's jobs, by seed (``scripts/randjobs.py --forms16 --seed N``)
JOBS = {
    102: dict(iterations=8, layers=5, mib=8, micro_batches=3, set_to_none=True, optimizer_temp=True, hold_loss=False,
              leak="grow", leak_mib=4),
    337: dict(iterations=4, layers=3, mib=8, micro_batches=3, set_to_none=True, optimizer_temp=False, hold_loss=True,
              leak="grow", leak_mib=48),
    751: dict(iterations=8, layers=3, mib=32, micro_batches=3, set_to_none=True, optimizer_temp=False,
              hold_loss=False, leak="grow", leak_mib=16),
    679: dict(iterations=7, layers=8, mib=32, micro_batches=2, set_to_none=True, optimizer_temp=False, hold_loss=True,
              leak="grow", leak_mib=48),
    5188: dict(iterations=3, layers=3, mib=64, micro_batches=2, set_to_none=False, optimizer_temp=False,
               hold_loss=True, leak="grow", leak_mib=16),
    1021: dict(iterations=6, layers=6, mib=64, micro_batches=2, set_to_none=False, optimizer_temp=False,
               hold_loss=False, leak="graph", leak_mib=16),
}


def _leak(rep):
    (f,) = [f for h in rep.hosts for f in h.findings if f.rule == "memory_leak"]
    return f


@pytest.mark.parametrize("seed", sorted(JOBS))
def test_the_walks_leak_reads_its_iterations_and_bytes(seed):
    job = form16_job("snapshot_leak", seed, **JOBS[seed])
    truth = ms.training_iterations(**job.params).truth["leak"]
    rep = report_of(job)
    assert leak_problems({"leak": truth, "iterations": job.params["iterations"]}, rep) == []
    d = _leak(rep).metric.detail
    assert (d["iterations"], d["leak_end_bytes"]) == (job.params["iterations"], truth["bytes_at_end"])
    # a growing list keeps each micro-batch's output; an evaluation's graph its 3 activations and its loss
    assert d["blocks_per_iteration"] == truth["blocks_per_iteration"] == (
        job.params["micro_batches"] if job.params["leak"] == "grow" else 4)
    if job.params["leak"] == "grow":
        assert d["first_iteration_bytes"] == truth["bytes_per_iteration"]
        assert d["per_iteration_bytes"] == truth["bytes_last_iteration"]


@pytest.mark.parametrize("seed", [751, 679])
def test_a_leaks_blocks_are_no_activations_at_the_peak(seed):
    """At the peak (the last iteration's last micro-batch's backward) the activations are that micro-batch's layers
    alone; the leak's blocks, every iteration's, are held -- and the two findings' savings fit in the peak."""
    p = JOBS[seed]
    rep = report_of(form16_job("snapshot_leak", seed, **p))
    (g,) = [g.memory for g in rep.hosts[0].gpus]
    truth = ms.training_iterations(**p).truth["leak"]
    assert g["breakdown"]["activations"] == p["layers"] * p["mib"] * MiB
    weights_state = 4 * 64 * MiB + 8 * 64 * MiB  # 4 parameters and Adam's two moments each, 64 MiB apiece
    assert g["breakdown"]["held"] == weights_state + truth["bytes_at_peak"]
    assert memory_savings_problems(rep.hosts[0]) == []
