"""A loop whose every block is one size reads its iterations, not two at a time (issue #37 class 5, h37-probe47m).

Truth by construction (``synthetic.memsnapshot.training_iterations``, its ``leak`` truth), the reduction of the
``scripts/randjobs.py --forms18 --seed 116372`` job (form ``snapshot_stackless``): 3 iterations of a 4-layer model
whose weights, gradients, Adam's state and activations are all 64-MiB blocks, a fused optimizer, a 16-MiB ``list``
leak, recorded without stacks.  Over every allocation the sizes repeat every 2 iterations from the weights' first
(the weights and the first step's state as large as a layer's activations), as many whole repeats as the freed
blocks' true period holds, and the earlier won: the job read 2 iterations and the leak none.  That reading pairs
the first step's state, kept for good, with the next repeat's activations, freed: what a loop keeps it keeps again
each time it makes it (``job.iterations._kept_alike``).  And a graph leak's held loss in the round before the last.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_reports import leaks, report, written

MiB = 1 << 20
SEED_116372 = dict(iterations=3, layers=4, mib=64, micro_batches=1, set_to_none=True, optimizer_temp=False,
                   hold_loss=True, leak="list", leak_mib=16)


def _stackless(**kw) -> ms.Scenario:  # noqa: ANN003 - the writer's parameters
    sc = ms.training_iterations(**kw)
    return ms.Scenario(ms.as_recorded(sc.doc, context=None), sc.truth)


def test_the_job_reads_each_iteration_at_the_freed_blocks_period(tmp_path: Path) -> None:
    rep = report(written(tmp_path, _stackless(**SEED_116372)))
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", 3), rep.steps
    assert "repeat every 9 allocations" in rep.steps["note"], rep.steps["note"]


def test_the_leak_reads_its_three_iterations_and_bytes(tmp_path: Path) -> None:
    sc = _stackless(**SEED_116372)
    truth = sc.truth["leak"]
    assert (truth["bytes_per_iteration"], truth["bytes_at_end"], truth["bytes_at_peak"]) == (16 * MiB, 48 * MiB,
                                                                                               48 * MiB)
    (f,) = leaks(report(written(tmp_path, sc)))
    d = f.metric.detail
    assert (d["iterations"], d["blocks_per_iteration"], d["per_iteration_bytes"]) == (3, 1, 16 * MiB)
    assert d["leak_end_bytes"] == 48 * MiB and f.saving_bytes == 48 * MiB


@pytest.mark.parametrize("mib", [32, 64])
def test_control_without_the_leak_reads_none_and_its_iterations(tmp_path: Path, mib: int) -> None:
    rep = report(written(tmp_path, _stackless(**{**SEED_116372, "leak": "", "mib": mib})))
    assert not leaks(rep)
    assert rep.steps["found"] == 3, rep.steps


#: An evaluation's graph kept from the third of 6 iterations (``val_total += loss``: 3 saved 16-MiB activations and
#: its 512-B loss), a fused optimizer, gradients zeroed in place, one micro-batch, no stacks: the evaluation's loss
#: and the next iteration's training loss fall in one round, and the one the loop holds at the dump (the last
#: iteration's) made the round before the last keep 2 blocks -- the 512-B losses read no leak, 2,048 B short
#: (``metrics.memory._without_held_before_last``).  And with 3 iterations of 64-MiB blocks, a graph kept every
#: iteration (rounds [1, 2, 1], probe47b's *Left* 2): 1,536 B short.
EVAL = 3 * 16 * MiB + 512
HELD_BEFORE_LAST = dict(iterations=6, micro_batches=1, set_to_none=False, optimizer_temp=False, leak="graph",
                        leak_from=2)


@pytest.mark.parametrize("layers", [2, 4])
def test_the_held_loss_before_the_last_round_is_no_leak(tmp_path: Path, layers: int) -> None:
    sc = _stackless(**HELD_BEFORE_LAST, layers=layers)
    truth = sc.truth["leak"]
    assert (sc.truth["leak_iterations"], truth["blocks_per_iteration"], truth["bytes_at_end"]) == (4, 4, 4 * EVAL)
    (f,) = leaks(report(written(tmp_path, sc)))
    d = f.metric.detail
    assert (d["iterations"], d["blocks_per_iteration"], d["per_iteration_bytes"]) == (4, 4, EVAL)
    assert d["leak_end_bytes"] == 4 * EVAL and f.saving_bytes == truth["bytes_at_peak"] == 3 * EVAL


@pytest.mark.parametrize("layers", [2, 4])
def test_three_iterations_the_held_loss_before_the_last_round_is_no_leak(tmp_path: Path, layers: int) -> None:
    sc = _stackless(iterations=3, layers=layers, mib=64, leak_mib=16, micro_batches=1, set_to_none=False,
                    optimizer_temp=False, leak="graph")
    truth, per = sc.truth["leak"], 3 * 16 * MiB + 512
    assert (truth["blocks_per_iteration"], truth["bytes_at_end"], truth["bytes_at_peak"]) == (4, 3 * per, 2 * per)
    (f,) = leaks(report(written(tmp_path, sc)))
    d = f.metric.detail
    assert (d["iterations"], d["blocks_per_iteration"], d["per_iteration_bytes"]) == (3, 4, per)
    assert d["leak_end_bytes"] == 3 * per and f.saving_bytes == 2 * per


@pytest.mark.parametrize("layers", [2, 4])
def test_control_the_held_loss_loop_without_a_leak_reads_none(tmp_path: Path, layers: int) -> None:
    assert not leaks(report(written(tmp_path, _stackless(**{**HELD_BEFORE_LAST, "leak": ""}, layers=layers))))


@pytest.mark.parametrize(("micro_batches", "at_peak"), [(2, 4), (3, 3)])
def test_a_job_read_from_the_head_leaves_the_leak_its_own_rounds(tmp_path: Path, micro_batches: int,
                                                                  at_peak: int) -> None:
    """The evaluation begun after the second of 6 iterations breaks the allocations' repeats: the job read the first
    2 iterations only, and the leak's rounds, ended at their starts alone, were one -- no leak
    (``metrics.memory._runs_on_past``).  Since h37-probe50m the job reads all 6 (the freed blocks' micro-batches no
    longer counted over the first step's state, ``job.iterations._parts_read``; the leak's blocks no part of what
    makes iterations alike, ``_kept_again``); the leak as before."""
    sc = _stackless(iterations=6, micro_batches=micro_batches, set_to_none=True, layers=2, optimizer_temp=False,
                    leak="graph", leak_from=2)
    truth = sc.truth["leak"]
    assert (sc.truth["leak_iterations"], truth["bytes_at_end"], truth["bytes_at_peak"]) == (4, 4 * EVAL, at_peak * EVAL)
    rep = report(written(tmp_path, sc))
    assert rep.steps["found"] == sc.truth["iterations"] == 6, rep.steps
    (f,) = leaks(rep)
    d = f.metric.detail
    assert (d["iterations"], d["blocks_per_iteration"], d["per_iteration_bytes"]) == (4, 4, EVAL)
    assert d["leak_end_bytes"] == 4 * EVAL and f.saving_bytes == at_peak * EVAL
