"""A span repeated inside one framework iteration is no step (h37-seeds23; ``scripts/randjobs.py --forms12`` walk
seed 3954, left by h37-smallgrid).

The job: DeepSpeed, 1 iteration under gradient accumulation 2 (``DeepSpeedEngine.forward`` / ``backward`` twice, then
``DeepSpeedZeroOptimizer_Stage3.step``), 4 ranks 50 us apart, no sync.  ``_framework_iterations`` reads DeepSpeed's
iterations from its optimizer's range only where it closes two; with one, the program's repeated spans
(``job.structure``) won: one rank's two ``forward`` spans, read as 2 steps, the second dropped, the first 0.137 ms lent
to the three GPUs that launched nothing in it.  The wrong assumption: *a span the program repeats is an iteration* --
an iteration closes once, so a span repeated twice or more between its closes is a micro-batch's (the rule a
repeated NVTX range takes against the optimizer's updates, ``_within_iterations``).  Now
``steps.iterations._spans_inside_iterations`` refuses them and the capture reads as one training pass.  Controls: the
same job of 2 iterations (the framework's iterations, as on main).
"""

from __future__ import annotations

import dataclasses

from synthetic.randjobs import TRUTH, random_form12_job
from tests.support.random_jobs import gpu_step_rows as _rows, laws_broken, truth_problems


def test_one_iteration_of_two_micro_batches_is_one_step_on_every_gpu():
    """Fails on main (GPUs 0-2 one step of 0.137 ms, GPU 3 4.534 ms, read from one rank's first ``forward``): each
    GPU's one step holds the whole iteration (11.23 ms, and at most the ranks' 150 us of lag more)."""
    job = random_form12_job(3954)
    r, rows = _rows(job)
    assert job.params["gas"] == 2 and job.params["ranks"] == 4 and TRUTH[3954]["steps"] == 1, job.params
    period = TRUTH[3954]["step_ms"]
    assert sorted(rows) == [0, 1, 2, 3] and all(len(ms) == 1 for ms in rows.values()), rows
    assert all(period <= ms[0] <= period + 0.2 for ms in rows.values()), (rows, period)
    note = r.hosts[0].steps["note"]
    assert "2 `DeepSpeedEngine.forward` spans are no steps" in note and "closes once a thread" in note, note
    assert not truth_problems(job, r) and not laws_broken(r), (truth_problems(job, r), laws_broken(r))


def test_two_iterations_read_from_the_optimizers_range_control():
    """Control (as on main): the same job of 2 iterations -- each closed by the optimizer's range -- reads 2 steps of
    the period on every GPU, from DeepSpeed's own range."""
    job = random_form12_job(3954)
    r, rows = _rows(dataclasses.replace(job, params={**job.params, "steps": 2}))
    assert "`DeepSpeedZeroOptimizer_Stage3.step`, the framework's own range" in r.hosts[0].steps["note"], r.hosts[0].steps
    assert all(len(ms) == 2 and all(abs(x - 11.232) < 0.01 for x in ms) for ms in rows.values()), rows
    assert "are no steps" not in r.hosts[0].steps["note"]
