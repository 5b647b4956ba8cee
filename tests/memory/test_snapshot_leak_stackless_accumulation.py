"""Stackless leaks under gradient accumulation and in 2-layer models, as the ``--forms18`` walk drew them (issue #37
class 5, h37-probe47a).

Truth by construction (``synthetic.memsnapshot.training_iterations``, its ``leak`` truth, written as
``_record_memory_history(context=None)`` records it: ``as_recorded(context=None)``), each the reduction of a walk seed
(``scripts/randjobs.py --forms18``, form ``snapshot_stackless``) that broke ``random_jobs.leak_problems`` on 3b05c8b4:

* a ``list`` leak under 2 micro-batches with a fused optimizer or gradients zeroed in place (seeds 116138, 116292,
  116770): the optimizer's first step made its state after the backward, read as the backward's (no frame names an
  optimizer), so nothing told a micro-batch from an iteration -- each micro-batch read as one (10 iterations of 1
  block where 5 of 2 ran), or none; and the job's first micro-batch, whose backward keeps the gradients it makes,
  fell before the repeats (``job.iterations._first_step_state``, ``_head_openings``);
* 2-layer models (116161, 116357, 116719, 116782; 125018 of the walk from 125000, its last layer's gradient made
  before the walk's first free): a backward that walks back 2 saved blocks was no walk of ``_MIN_NEST`` (4) -- no
  training iteration, the leak read per micro-batch, by one too many, or not at all (``_LEAST_NEST``: a short walk
  that frees every block it holds in reverse order).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_reports import leaks, python_frames_leak, report, stackless_leaks_without_leak, written

MiB = 1 << 20

#: the walk's seeds, reduced: the writer's parameters (forms18 ``snapshot_stackless``, ``stacks="none"``)
SEEDS = {
    116138: dict(iterations=7, layers=7, mib=32, micro_batches=2, set_to_none=True, optimizer_temp=False,
                 hold_loss=False, leak="list", leak_mib=4),
    116292: dict(iterations=5, layers=4, mib=64, micro_batches=2, set_to_none=False, optimizer_temp=False,
                 hold_loss=False, leak="list", leak_mib=4),
    116770: dict(iterations=4, layers=6, mib=32, micro_batches=2, set_to_none=False, optimizer_temp=False,
                 hold_loss=True, leak="list", leak_mib=16),
    116161: dict(iterations=6, layers=2, mib=64, micro_batches=2, set_to_none=False, optimizer_temp=False,
                 hold_loss=False, leak="list", leak_mib=48),
    116357: dict(iterations=8, layers=2, mib=64, micro_batches=2, set_to_none=False, optimizer_temp=True,
                 hold_loss=True, leak="list", leak_mib=48),
    116719: dict(iterations=6, layers=2, mib=64, micro_batches=2, set_to_none=False, optimizer_temp=True,
                 hold_loss=True, leak="list", leak_mib=4),
    116782: dict(iterations=6, layers=2, mib=64, micro_batches=3, set_to_none=False, optimizer_temp=True,
                 hold_loss=True, leak="graph", leak_mib=4),
    125018: dict(iterations=7, layers=2, mib=32, micro_batches=1, set_to_none=True, optimizer_temp=False,
                 hold_loss=True, leak="graph", leak_mib=48),
    # a sweep's, not a seed: 3 layers, whose first micro-batch's 3-block walk makes gradients (64 MiB) that outweigh
    # the activations it frees (32 MiB) and that it keeps for good
    "sweep_2x3": dict(iterations=6, layers=3, micro_batches=2, set_to_none=False, optimizer_temp=False, leak="list"),
    "sweep_3x3": dict(iterations=4, layers=3, micro_batches=3, set_to_none=False, optimizer_temp=False, leak="list"),
}

#: per seed: (iterations, blocks an iteration, an iteration's bytes, bytes at the end, the saving at the peak)
READ = {
    116138: (7, 2, 2 * 4 * MiB, 7 * 2 * 4 * MiB, 7 * 2 * 4 * MiB),
    116292: (5, 2, 2 * 4 * MiB, 5 * 2 * 4 * MiB, 5 * 2 * 4 * MiB),
    116770: (4, 2, 2 * 16 * MiB, 4 * 2 * 16 * MiB, 4 * 2 * 16 * MiB),
    116161: (6, 2, 2 * 48 * MiB, 6 * 2 * 48 * MiB, 6 * 2 * 48 * MiB),
    116357: (8, 2, 2 * 48 * MiB, 8 * 2 * 48 * MiB, 8 * 2 * 48 * MiB),
    116719: (6, 2, 2 * 4 * MiB, 6 * 2 * 4 * MiB, 6 * 2 * 4 * MiB),
    116782: (6, 4, 3 * 4 * MiB + 512, 6 * (3 * 4 * MiB + 512), 5 * (3 * 4 * MiB + 512)),
    125018: (7, 4, 3 * 48 * MiB + 512, 7 * (3 * 48 * MiB + 512), 7 * (3 * 48 * MiB + 512)),
    "sweep_2x3": (6, 2, 2 * 16 * MiB, 6 * 2 * 16 * MiB, 6 * 2 * 16 * MiB),
    "sweep_3x3": (4, 3, 3 * 16 * MiB, 4 * 3 * 16 * MiB, 4 * 3 * 16 * MiB),
}

#: per seed: the job's iterations read -- all: where the first is one round of forward and backward like the
#: repeats, and where the repeats are whole iterations and the first's micro-batches fall before them, read together
#: (h37-probe48a2, ``job.iterations._alike_rounds``: 116357/116719/116782 read 7/5/5 before)
FOUND = {116138: 7, 116292: 5, 116770: 4, 116161: 6, 116357: 8, 116719: 6, 116782: 6, 125018: 7,
         "sweep_2x3": 6, "sweep_3x3": 4}


def _stackless(seed: int | str) -> tuple[ms.Scenario, ms.Scenario]:
    """The seed's loop as recorded with stacks and without."""
    sc = ms.training_iterations(**SEEDS[seed])
    return sc, ms.Scenario(ms.as_recorded(sc.doc, context=None), sc.truth)


@pytest.mark.parametrize("seed", list(SEEDS))
def test_a_stackless_leak_under_accumulation_reads_its_iterations_and_bytes(tmp_path: Path, seed: int | str) -> None:
    sc, bare = _stackless(seed)
    truth = sc.truth["leak"]
    want = READ[seed]
    assert (sc.truth["iterations"], truth["blocks_per_iteration"], truth["bytes_per_iteration"],
            truth["bytes_at_end"], truth["bytes_at_peak"]) == want, truth
    (f,) = leaks(report(written(tmp_path, bare)))
    d = f.metric.detail
    assert (d["iterations"], d["blocks_per_iteration"], d["per_iteration_bytes"]) == want[:3]
    assert d["leak_end_bytes"] == want[3] and f.saving_bytes == want[4]


@pytest.mark.parametrize("seed", list(SEEDS))
def test_the_stackless_job_reads_its_iterations_not_its_micro_batches(tmp_path: Path, seed: int | str) -> None:
    """Each iteration the job reads opens where the loop's does (the writer's starts): iterations, not micro-batches
    (base: 116292 read 9, 116161 10, 116770 7; the 2-layer loops none)."""
    sc, bare = _stackless(seed)
    rep = report(written(tmp_path, bare))
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", FOUND[seed]), rep.steps
    first_us = min(e["time_us"] for e in sc.doc["device_traces"][0])
    starts = [round(r.start_ms * 1000) + first_us for r in rep.step_rows.rows()]
    assert starts and set(starts) <= set(sc.truth["starts_us"]), (starts, sc.truth["starts_us"])


@pytest.mark.parametrize("seed", list(SEEDS))
def test_control_the_same_leaks_with_python_frames(tmp_path: Path, seed: int | str) -> None:
    """With Python's frames the leak's line names it: the same reading."""
    assert python_frames_leak(tmp_path, SEEDS[seed]) == (READ[seed][0], READ[seed][3])


def test_control_the_same_loops_without_a_leak_read_none(tmp_path: Path) -> None:
    """The optimizer's state, gradients zeroed in place and the loss held at the dump are kept blocks too: no leak."""
    for kw in SEEDS.values():
        assert not stackless_leaks_without_leak(tmp_path, kw)
