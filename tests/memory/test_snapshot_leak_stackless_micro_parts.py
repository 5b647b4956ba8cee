"""A stackless `graph` leak under 2-3 micro-batches with the gradients zeroed in place reads its iterations and its
leak (issue #37 class 5, h37-probe49m; the session-48 lead's walks, forms18 170897 / 181298 / 181783).

Truth by construction (``synthetic.memsnapshot.training_iterations``, its ``iterations`` and ``leak`` truth),
recorded without stacks (``as_recorded(context=None)``), no optimizer temporary.  Every micro-batch frees the same
blocks, so the freed blocks repeat once a micro-batch (more whole repeats than the iterations hold), while the graph
each iteration keeps (``val_total += loss``: 3 blocks of ``leak_mib`` and its 512-B loss) falls once every 2-3 of
them: read as iterations the micro-batches were unlike and the job read as the whole capture, no iteration, and its
session no leak.  Every allocation's sizes repeat once an iteration: its repeat frees k of the freed reading's
(``job.iterations._parts_of``), and it is read.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from synthetic import randjobs
from tests.support.random_jobs import check
from tests.support.snapshot_reports import leaks, report, written

MiB = 1 << 20
LOOP = dict(set_to_none=False, optimizer_temp=False, hold_loss=False, leak="graph")
#: forms18 seed -> its loop's size: (iterations, layers, activation MiB, micro-batches, leak MiB)
WALKS = {170897: (5, 9, 8, 3, 48), 181298: (6, 6, 32, 2, 48), 181783: (8, 2, 32, 3, 16)}
#: per seed: the allocations an iteration makes -- each micro-batch's forward (2 a layer, the loss's) and 2 gradients,
#: then the kept graph's 4 blocks
PERIOD = {170897: 3 * 14 + 4, 181298: 2 * 11 + 4, 181783: 3 * 5 + 4}


def _kw(seed: int, **more) -> dict:  # noqa: ANN003 - the writer's parameters
    iterations, layers, mib, micro, leak_mib = WALKS[seed]
    return dict(iterations=iterations, layers=layers, mib=mib, micro_batches=micro, leak_mib=leak_mib,
                **{**LOOP, **more})


def _stackless(**kw) -> ms.Scenario:  # noqa: ANN003 - the writer's parameters
    sc = ms.training_iterations(**kw)
    return ms.Scenario(ms.as_recorded(sc.doc, context=None), sc.truth)


@pytest.mark.parametrize("seed", sorted(WALKS))
def test_the_job_reads_each_iteration_of_its_micro_batches(tmp_path: Path, seed: int) -> None:
    sc = _stackless(**_kw(seed))
    rep = report(written(tmp_path, sc))
    assert sc.truth["iterations"] == WALKS[seed][0]
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", WALKS[seed][0]), rep.steps
    assert f"repeat every {PERIOD[seed]} allocations" in rep.steps["note"], rep.steps["note"]


@pytest.mark.parametrize("seed", sorted(WALKS))
def test_the_leak_reads_every_iteration_of_its_graph(tmp_path: Path, seed: int) -> None:
    sc = _stackless(**_kw(seed))
    truth = sc.truth["leak"]
    per = 3 * WALKS[seed][4] * MiB + 512
    assert (truth["blocks_per_iteration"], truth["bytes_per_iteration"]) == (4, per)
    (f,) = leaks(report(written(tmp_path, sc)))
    d = f.metric.detail
    assert (d["iterations"], d["blocks_per_iteration"], d["per_iteration_bytes"]) == (WALKS[seed][0], 4, per)
    assert d["leak_end_bytes"] == truth["bytes_at_end"] == WALKS[seed][0] * per


def test_the_walks_leak_bytes_are_the_leads() -> None:
    # the truths the lead's walks named, from the writer
    got = {s: _stackless(**_kw(s)).truth["leak"]["bytes_at_end"] for s in WALKS}
    assert got == {170897: 754_977_280, 181298: 905_972_736, 181783: 402_657_280}


@pytest.mark.parametrize("seed", sorted(WALKS))
def test_the_walks_job_holds_its_truth(seed: int) -> None:
    job = randjobs.random_form18_job(seed)
    assert job.fmt == "snapshot_stackless"
    assert job.params == {**_kw(seed), "stacks": "none"}
    assert check(job) == []


@pytest.mark.parametrize("seed", sorted(WALKS))
def test_control_without_the_leak_reads_its_iterations_and_no_leak(tmp_path: Path, seed: int) -> None:
    rep = report(written(tmp_path, _stackless(**_kw(seed, leak=""))))
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", WALKS[seed][0]), rep.steps
    assert leaks(rep) == []


def test_control_with_an_optimizer_temporary_reads_as_before(tmp_path: Path) -> None:
    # the step's temporary opens each iteration at its level: every allocation's reading already won (as on BASE)
    sc = _stackless(**_kw(181783, optimizer_temp=True))
    rep = report(written(tmp_path, sc))
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", 8), rep.steps
    (f,) = leaks(rep)
    assert f.metric.detail["leak_end_bytes"] == sc.truth["leak"]["bytes_at_end"] == 402_657_280
