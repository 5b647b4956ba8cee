"""A stackless loop of 3 iterations that holds its loss at the dump under ``zero_grad(set_to_none=False)`` reads every
iteration and its leak -- issue #37 class 5, h37-probe52m (probe51m's *Left* 1 and 2).

Truth by construction (``synthetic.memsnapshot.training_iterations``, its ``iterations`` and ``leak`` truth),
recorded without stacks (``as_recorded(context=None)``).  Such a history repeats once at most in the blocks it frees
(its first iteration keeps its gradients, the loss held at the dump cuts the last), so only every allocation's reading
holds two repeats -- where the blocks never freed (weights, Adam's moments, the gradients held in place, a leak) are
read by place (``job.iterations._kept_read``): the head's blocks made once outweighed a 2-layer model's loop and held
the middle of the history, so no period between two iterations was tried, and a ``grow`` leak broke every repeat.
BASE (4ae93328) read 2 iterations of 3, or none; a ``list`` leak under 1 micro-batch went unread, under 2 it read as
6 x 1 block where 3 x 2 ran.  The controls pass on both: the same loops without the held loss or with the gradients
set to None, 6 iterations, and a model of 24 weights whose moments, made in a row at one size, must not be read as
the repeats (kept blocks read as alike by place, a repeat of kept blocks alone would be: no iteration).  And a
5-layer loop of 2 weights under ``set_to_none=False`` read none on BASE, held loss or not: the periods were measured
from the head's loss alone (the rarest size near the middle, its first allocation there); its last there too now.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_reports import leaks, report, written


def _stackless(**kw) -> ms.Scenario:
    sc = ms.training_iterations(**{"iterations": 3, "layers": 2, "mib": 8, "set_to_none": False, "hold_loss": True,
                                   **kw})
    return ms.Scenario(ms.as_recorded(sc.doc, context=None), sc.truth)


def _read(tmp_path: Path, sc: ms.Scenario) -> tuple[tuple[str, int], list]:
    rep = report(written(tmp_path, sc))
    return (rep.steps["source"], rep.steps["found"]), leaks(rep)


def _leak_is_truth(found: list, sc: ms.Scenario, micro: int) -> None:
    truth = sc.truth["leak"]
    if truth is None:
        assert found == []
        return
    (f,) = found
    d = f.metric.detail
    # a growing leak states its last iteration's bytes (``test_snapshot_leak_grows``)
    per = truth["bytes_last_iteration"] if truth["cause"] == "grow" else truth["bytes_per_iteration"]
    assert (d["iterations"], d["blocks_per_iteration"], d["per_iteration_bytes"]) == (sc.truth["iterations"], micro,
                                                                                      per)
    assert d["leak_end_bytes"] == truth["bytes_at_end"]


@pytest.mark.parametrize("mib", [8, 32])
@pytest.mark.parametrize("leak", ["", "list", "grow"])
def test_one_micro_batch_reads_every_iteration(tmp_path: Path, leak: str, mib: int) -> None:
    # BASE: 2 of 3 ('' and list: the freed blocks' [8, 8, loss] twice; a list leak unread)
    sc = _stackless(mib=mib, micro_batches=1, optimizer_temp=False, leak=leak)
    assert sc.truth["iterations"] == 3
    steps, found = _read(tmp_path, sc)
    assert steps == ("memory_iterations", 3)
    _leak_is_truth(found, sc, 1)


@pytest.mark.parametrize("layers", [2, 6])
def test_a_growing_leak_reads_every_iteration(tmp_path: Path, layers: int) -> None:
    # BASE: 2 (2 layers) or none (6): each iteration keeps a larger block, so no two repeat by size
    sc = _stackless(layers=layers, micro_batches=1, optimizer_temp=True, leak="grow")
    steps, found = _read(tmp_path, sc)
    assert steps == ("memory_iterations", 3)
    _leak_is_truth(found, sc, 1)


@pytest.mark.parametrize("mib", [8, 32])
@pytest.mark.parametrize("leak", ["", "list", "grow"])
def test_two_micro_batches_with_a_temporary_read_every_iteration(tmp_path: Path, leak: str, mib: int) -> None:
    # BASE: none (the weights and Adam's moments made once outweigh the loop); a list leak as 6 x 1 block
    sc = _stackless(mib=mib, micro_batches=2, optimizer_temp=True, leak=leak)
    steps, found = _read(tmp_path, sc)
    assert steps == ("memory_iterations", 3)
    _leak_is_truth(found, sc, 2)


@pytest.mark.parametrize(("micro", "set_to_none", "hold_loss"), [(1, False, False), (2, False, False),
                                                                 (1, True, True), (2, True, True)])
@pytest.mark.parametrize("leak", ["", "list", "grow"])
def test_control_the_twins_read_as_before(tmp_path: Path, leak: str, micro: int, set_to_none: bool,
                                          hold_loss: bool) -> None:
    # without the held loss, or with the gradients freed, the freed blocks repeat twice: read on BASE too
    sc = _stackless(micro_batches=micro, optimizer_temp=True, set_to_none=set_to_none, hold_loss=hold_loss,
                    leak=leak)
    steps, found = _read(tmp_path, sc)
    assert steps == ("memory_iterations", 3)
    _leak_is_truth(found, sc, micro)


@pytest.mark.parametrize("leak", ["list", "grow"])
def test_control_six_iterations_read_as_before(tmp_path: Path, leak: str) -> None:
    sc = _stackless(iterations=6, micro_batches=1, optimizer_temp=False, leak=leak)
    steps, found = _read(tmp_path, sc)
    assert steps == ("memory_iterations", 6)
    _leak_is_truth(found, sc, 1)


@pytest.mark.parametrize("hold_loss", [True, False])
def test_control_moments_made_in_a_row_are_no_repeat(tmp_path: Path, hold_loss: bool) -> None:
    # 24 weights of 16 MiB: Adam's 48 moments, kept in a row at one size, repeat at any shorter period; read as the
    # loop's (kept matching kept, no repeat required to free a block) they outcovered it and no iteration was read
    sc = _stackless(params=24, param_mib=16, micro_batches=1, set_to_none=True, optimizer_temp=True,
                    hold_loss=hold_loss)
    steps, found = _read(tmp_path, sc)
    assert steps == ("memory_iterations", 3)
    assert found == []


@pytest.mark.parametrize("hold_loss", [True, False])
@pytest.mark.parametrize("leak", ["", "list", "grow"])
def test_a_head_unlike_the_loop_is_no_anchor(tmp_path: Path, leak: str, hold_loss: bool) -> None:
    # BASE: none.  5 layers, 2 weights: the first iteration keeps its 2 gradients and frees fewer blocks, so the loss
    # the periods were measured from (the rarest size near the middle, its first allocation there) was the head's,
    # 12 and 20 allocations from the others where the loop repeats every 8
    sc = _stackless(layers=5, params=2, micro_batches=1, optimizer_temp=False, hold_loss=hold_loss, leak=leak)
    steps, found = _read(tmp_path, sc)
    assert steps == ("memory_iterations", 3)
    _leak_is_truth(found, sc, 1)
