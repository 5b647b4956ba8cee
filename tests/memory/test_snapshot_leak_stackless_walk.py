"""Leaks in snapshots recorded without stacks, as the ``--forms18`` walk drew them (issue #37 class 5, h37-probe46g).

Truth by construction (``synthetic.memsnapshot.training_iterations``, its ``leak`` truth, written as
``_record_memory_history(context=None)`` records it: ``as_recorded(context=None)``), each the reduction of a walk seed
(``scripts/randjobs.py --forms18``, form ``snapshot_stackless``) that broke ``random_jobs.leak_problems`` on c6c0c7e9:

* a leak whose bytes grow each iteration (seeds 113024, 113076): no line names its blocks and each size is one
  iteration's, so it read as no leak (``metrics.memory._growing_sites`` skips an unnamed line) -- now each size is
  the leak's round (``_size_rounds``);
* an evaluation's graph kept after the step, gradients zeroed in place (113027): the pattern's troughs sat before the
  leak (it raises the level after them), at the step's temporary, and the job opened each iteration there --
  [step, leak, forward, backward] -- so the leak's last two rounds merged: no leak (``job.iterations._troughs`` less
  the kept bytes, the last of the longest run at the floor; ``_opening_repeats`` opens only at the troughs' site);
* 2 micro-batches, gradients zeroed in place (110338): every micro-batch opens at the same level, and the job opened
  each iteration at its second -- 6 iterations of 7, the leak's rounds [1, 2, 2, 2, 2, 2, 3] blocks, no leak;
* 3 micro-batches with ``zero_grad()`` (110044): the first micro-batch's gradients, live through the later
  backwards, sank the backward's walk below its share, the job read no iteration, and the loss the loop holds at the
  dump merged into the last round: 4 iterations, 512 B too many (``job.iterations._turn``);
* the same evaluation leak, gradients zeroed in place, the loss held (116385, the next walk's, from 116000): the held
  loss is never freed in the last repeat only, so the forward's first place sat 171 B above the step's on average
  and the job opened each iteration at the evaluation's loss: each 512-B round cut off, 12 MiB of 12 MiB + 512 B an
  iteration (``job.iterations._last_at_floor``: the floor is within the period's smallest block).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_reports import leaks, python_frames_leak, report, stackless_leaks_without_leak, written

MiB = 1 << 20

#: the walk's seeds, reduced: the writer's parameters (forms18 ``snapshot_stackless``, ``stacks="none"``)
SEEDS = {
    113024: dict(iterations=3, layers=4, mib=64, micro_batches=1, set_to_none=True, hold_loss=True, leak="grow",
                 leak_mib=4),
    113076: dict(iterations=5, layers=2, mib=8, micro_batches=2, set_to_none=True, hold_loss=True, leak="grow",
                 leak_mib=48),
    113027: dict(iterations=3, layers=7, mib=64, micro_batches=1, set_to_none=False, hold_loss=False, leak="graph",
                 leak_mib=4),
    110338: dict(iterations=7, layers=5, mib=64, micro_batches=2, set_to_none=False, hold_loss=False, leak="list",
                 leak_mib=16),
    110044: dict(iterations=3, layers=5, mib=8, micro_batches=3, set_to_none=True, hold_loss=True, leak="graph",
                 leak_mib=4),
    116385: dict(iterations=3, layers=4, mib=8, micro_batches=1, set_to_none=False, hold_loss=True, leak="graph",
                 leak_mib=4),
}

#: per seed: (iterations, blocks an iteration, the last iteration's bytes, bytes at the end, the saving at the peak)
READ = {
    113024: (3, 1, 12 * MiB, 24 * MiB, 24 * MiB),
    113076: (5, 2, 2 * 240 * MiB, 2 * 720 * MiB, 2 * 720 * MiB),
    113027: (3, 4, 3 * 4 * MiB + 512, 3 * (3 * 4 * MiB + 512), 2 * (3 * 4 * MiB + 512)),
    110338: (7, 2, 2 * 16 * MiB, 7 * 2 * 16 * MiB, 7 * 2 * 16 * MiB),
    110044: (3, 4, 3 * 4 * MiB + 512, 3 * (3 * 4 * MiB + 512), 2 * (3 * 4 * MiB + 512)),
    116385: (3, 4, 3 * 4 * MiB + 512, 3 * (3 * 4 * MiB + 512), 2 * (3 * 4 * MiB + 512)),
}


def _stackless(seed: int) -> tuple[ms.Scenario, ms.Scenario]:
    """The seed's loop as recorded with stacks and without."""
    sc = ms.training_iterations(**SEEDS[seed])
    return sc, ms.Scenario(ms.as_recorded(sc.doc, context=None), sc.truth)


@pytest.mark.parametrize("seed", sorted(SEEDS))
def test_a_stackless_leak_reads_its_iterations_and_bytes(tmp_path: Path, seed: int) -> None:
    sc, bare = _stackless(seed)
    truth = sc.truth["leak"]
    want = READ[seed]
    assert (truth["bytes_last_iteration"], truth["bytes_at_end"], truth["bytes_at_peak"]) == want[2:], truth
    (f,) = leaks(report(written(tmp_path, bare)))
    d = f.metric.detail
    assert (d["iterations"], d["blocks_per_iteration"], d["per_iteration_bytes"]) == want[:3]
    assert d["leak_end_bytes"] == want[3] and f.saving_bytes == want[4]


@pytest.mark.parametrize("seed,found", [(113027, 3), (110338, 7), (110044, 3), (116385, 3)])
def test_the_stackless_job_opens_its_iterations_at_their_forwards(tmp_path: Path, seed: int, found: int) -> None:
    """Each iteration the job reads opens where the loop's does (the writer's starts), not at its step or its second
    micro-batch (base: 113027's at the step, 110338's at the second micro-batch, 110044 none).  The first iteration
    of a loop zeroing its gradients in place repeats no later one (its backward makes them, the others add in place),
    so it falls before the repeats; where it is a repeat's like (one round of forward and backward at their level) it
    is read too: all 3 of 113027's and 116385's (h37-probe47a, ``job.iterations._head_openings``; 2 before).  110338's
    first is 2 micro-batches before repeats of whole iterations: together a repeat's like, all 7 read (h37-probe48a2,
    ``_alike_rounds``; 6 before)."""
    sc, bare = _stackless(seed)
    rep = report(written(tmp_path, bare))
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", found), rep.steps
    first_us = min(e["time_us"] for e in sc.doc["device_traces"][0])
    starts = [round(r.start_ms * 1000) + first_us for r in rep.step_rows.rows()]
    assert starts and set(starts) <= set(sc.truth["starts_us"]), (starts, sc.truth["starts_us"])


@pytest.mark.parametrize("seed", sorted(SEEDS))
def test_control_the_same_leaks_with_python_frames(tmp_path: Path, seed: int) -> None:
    """With Python's frames the leak's line names it: the same reading (base read these right too)."""
    assert python_frames_leak(tmp_path, SEEDS[seed]) == (READ[seed][0], READ[seed][3])


def test_control_a_stackless_loop_without_a_leak_reads_none(tmp_path: Path) -> None:
    """Weights, an optimizer's state and the loss held at the dump are kept blocks too: no run of growing sizes."""
    for kw in SEEDS.values():
        assert not stackless_leaks_without_leak(tmp_path, kw)
