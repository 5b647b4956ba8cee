"""A stackless loop whose leak keeps an output from the forward (``outputs.append(out)``: ``list``, or ``grow``, its
size growing each iteration) from after its head on (``leak_from=2``) reads every iteration and its leak -- issue #37
class 5, h37-probe51m (probe50m's *Left* 1 and 2).

Truth by construction (``synthetic.memsnapshot.training_iterations``, its ``iterations`` and ``leak`` truth),
recorded without stacks (``as_recorded(context=None)``), 2 layers.  The kept output is made in the forward, before
the backward's walk back, where the gradients ``zero_grad(set_to_none=False)`` holds for good are made too; each
leaking round made one allocation more than the head's.  BASE (cc7d1832) read the 4 leaking iterations of 6, or none
(and then, under 2-3 micro-batches with ``set_to_none=True``, no leak): ``_kept_again`` left out only the blocks kept
after the walk, and the head's rounds, one allocation short of every repeat, were no repeat's like
(``_head_openings``).  Now a block never freed that two rounds make at the same place in their allocations is kept
again (``job.iterations._kept_places``): left out of what makes the iterations alike and of the rounds' sizes.
And (probe50m's *Left* 3 in part): 3 iterations of 3 micro-batches under ``hold_loss``, ``set_to_none=True`` and no
optimizer temporary read no iteration on BASE, with or without a leak -- ``_troughs`` averaged the first places of the
period over the part repeat the held loss leaves after the whole ones, one sample more than the rest, and opened every
round at its first gradient; now each place is averaged over the whole repeats alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_reports import leaks, report, written

MiB = 1 << 20


def _stackless(**kw) -> ms.Scenario:
    sc = ms.training_iterations(**{"iterations": 6, "layers": 2, "mib": 8, **kw})
    return ms.Scenario(ms.as_recorded(sc.doc, context=None), sc.truth)


def _read(tmp_path: Path, sc: ms.Scenario) -> tuple[tuple[str, int], list]:
    rep = report(written(tmp_path, sc))
    return (rep.steps["source"], rep.steps["found"]), leaks(rep)


def _leak_is_truth(found: list, sc: ms.Scenario, iterations: int, micro: int) -> None:
    (f,) = found
    d = f.metric.detail
    truth = sc.truth["leak"]
    # a growing leak states its last iteration's bytes (``test_snapshot_leak_grows``)
    per = truth["bytes_last_iteration"] if truth["cause"] == "grow" else truth["bytes_per_iteration"]
    assert (d["iterations"], d["blocks_per_iteration"], d["per_iteration_bytes"]) == (iterations, micro, per)
    assert d["leak_end_bytes"] == truth["bytes_at_end"]


@pytest.mark.parametrize("set_to_none", [True, False])
@pytest.mark.parametrize("micro", [1, 2, 3])
@pytest.mark.parametrize("leak", ["list", "grow"])
def test_an_output_kept_from_after_the_head_reads_every_iteration(tmp_path: Path, leak: str, micro: int,
                                                                  set_to_none: bool) -> None:
    # BASE: 4 (set_to_none=False) or none (True; under 2-3 micro-batches no leak either)
    sc = _stackless(micro_batches=micro, set_to_none=set_to_none, leak=leak, leak_from=2)
    assert (sc.truth["iterations"], sc.truth["leak_iterations"]) == (6, 4)
    steps, found = _read(tmp_path, sc)
    assert steps == ("memory_iterations", 6)
    _leak_is_truth(found, sc, 4, micro)


#: (activation MiB, micro-batches, set_to_none, optimizer_temp, hold_loss): fused optimizers, no loss held
OTHERS = [(32, 1, True, False, False), (32, 2, False, False, True), (8, 2, True, False, False),
          (32, 3, True, True, False)]


@pytest.mark.parametrize("leak", ["list", "grow"])
@pytest.mark.parametrize(("mib", "micro", "set_to_none", "optimizer_temp", "hold_loss"), OTHERS)
def test_without_a_temporary_or_a_held_loss_too(tmp_path: Path, leak: str, mib: int, micro: int, set_to_none: bool,
                                                optimizer_temp: bool, hold_loss: bool) -> None:
    # BASE: 4 or none, as above
    sc = _stackless(mib=mib, micro_batches=micro, set_to_none=set_to_none, optimizer_temp=optimizer_temp,
                    hold_loss=hold_loss, leak=leak, leak_from=2)
    steps, found = _read(tmp_path, sc)
    assert steps == ("memory_iterations", 6)
    _leak_is_truth(found, sc, 4, micro)


@pytest.mark.parametrize("leak", ["list", "grow"])
def test_control_a_deeper_model_reads_as_before(tmp_path: Path, leak: str) -> None:
    # 6 layers: the head's rounds were read on BASE too
    sc = _stackless(layers=6, micro_batches=2, set_to_none=False, leak=leak, leak_from=2)
    steps, found = _read(tmp_path, sc)
    assert steps == ("memory_iterations", 6)
    _leak_is_truth(found, sc, 4, 2)


@pytest.mark.parametrize("leak", ["list", "grow"])
def test_control_the_loss_held_at_the_dump_stays_counted(tmp_path: Path, leak: str) -> None:
    # the last round alone keeps its loss, at the place every other round frees theirs: no block kept again (a count
    # of kept blocks per round, not their place, read 5 of 6 here)
    sc = _stackless(micro_batches=1, set_to_none=True, hold_loss=True, leak=leak)
    steps, found = _read(tmp_path, sc)
    assert steps == ("memory_iterations", 6)
    _leak_is_truth(found, sc, 6, 1)


@pytest.mark.parametrize("micro", [2, 3])
def test_control_the_heads_gradients_held_for_good_stay_counted(tmp_path: Path, micro: int) -> None:
    # zero_grad(set_to_none=False): the first backward's gradients, made before its walk back ends and never freed,
    # are the head's own -- at no place two repeats keep a block (every block kept from the forward left out of the
    # rounds' sizes read 2 of 3 here)
    sc = _stackless(iterations=3, micro_batches=micro, set_to_none=False, hold_loss=False, leak="")
    steps, found = _read(tmp_path, sc)
    assert steps == ("memory_iterations", 3)
    assert found == []


@pytest.mark.parametrize("leak", ["", "list", "grow"])
def test_three_iterations_of_micro_batches_holding_the_loss_read_every_iteration(tmp_path: Path, leak: str) -> None:
    # BASE: none (the whole capture), and no leak
    sc = _stackless(iterations=3, micro_batches=3, set_to_none=True, optimizer_temp=False, hold_loss=True, leak=leak)
    steps, found = _read(tmp_path, sc)
    assert steps == ("memory_iterations", 3)
    if leak:
        _leak_is_truth(found, sc, 3, 3)
    else:
        assert found == []


def test_control_the_same_loop_without_the_held_loss_reads_as_before(tmp_path: Path) -> None:
    # no part repeat after the whole ones: every place averaged over the same repeats on BASE too
    sc = _stackless(iterations=3, micro_batches=3, set_to_none=True, optimizer_temp=False, hold_loss=False,
                    leak="list")
    steps, found = _read(tmp_path, sc)
    assert steps == ("memory_iterations", 3)
    _leak_is_truth(found, sc, 3, 3)
