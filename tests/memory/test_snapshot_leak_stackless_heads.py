"""A stackless loop's head read whole: a `graph` leak under 2-3 micro-batches with the gradients freed at
``zero_grad(set_to_none=True)``, and a leak begun after the head (``leak_from=2``) -- issue #37 class 5,
h37-probe50m (probe49m's *Left* 1 and 2, probe48a2's *Left* 3).

Truth by construction (``synthetic.memsnapshot.training_iterations``, its ``iterations`` and ``leak`` truth),
recorded without stacks (``as_recorded(context=None)``), no optimizer temporary.
1. ``set_to_none=True``: the first micro-batch's gradients, freed at ``zero_grad()`` after the step, nest around the
   later micro-batch's walk back by their lifetimes alone; taken as its deepest block the walk "ended" after the first
   step's moments and the head's first iteration was no repeat's like (n-1 read, ``hold_loss``), or the freed
   blocks' micro-batches, repeating from the first one on, outnumbered every allocation's iterations and won (none
   read).  ``job.iterations._older_pass_trimmed`` / ``_parts_read``.
2. ``leak_from=2``: the first two iterations keep nothing, the later four 4 blocks each; counted in, the head's two
   were no later one's like and only the leaking 4 were read.  ``job.iterations._kept_again``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_reports import leaks, report, written

MiB = 1 << 20
LOOP = {"optimizer_temp": False, "leak": "graph"}
EVAL = 3 * 16 * MiB + 512  # the kept graph: 3 activations of leak_mib and its 512-B loss


def _stackless(**kw) -> ms.Scenario:
    sc = ms.training_iterations(**{**LOOP, **kw})
    return ms.Scenario(ms.as_recorded(sc.doc, context=None), sc.truth)


def _read(tmp_path: Path, sc: ms.Scenario) -> tuple[tuple[str, int], list]:
    rep = report(written(tmp_path, sc))
    return (rep.steps["source"], rep.steps["found"]), leaks(rep)


def _leak_is_truth(found: list, sc: ms.Scenario, iterations: int) -> None:
    (f,) = found
    d = f.metric.detail
    truth = sc.truth["leak"]
    assert (d["iterations"], d["blocks_per_iteration"], d["per_iteration_bytes"]) == (iterations, 4, EVAL)
    assert d["leak_end_bytes"] == truth["bytes_at_end"] == iterations * EVAL


#: (iterations, layers, activation MiB, micro-batches)
SIZES = [(3, 2, 8, 2), (3, 6, 32, 3), (6, 2, 32, 3), (6, 6, 8, 2)]


@pytest.mark.parametrize("hold_loss", [True, False])
@pytest.mark.parametrize(("iterations", "layers", "mib", "micro"), SIZES)
def test_gradients_set_to_none_read_every_iteration(tmp_path: Path, iterations: int, layers: int, mib: int,
                                                    micro: int, hold_loss: bool) -> None:
    # BASE: n-1 (hold_loss) or none (the whole capture); the leak right on both
    sc = _stackless(iterations=iterations, layers=layers, mib=mib, micro_batches=micro, set_to_none=True,
                    hold_loss=hold_loss)
    steps, found = _read(tmp_path, sc)
    assert sc.truth["iterations"] == iterations
    assert steps == ("memory_iterations", iterations)
    _leak_is_truth(found, sc, iterations)


@pytest.mark.parametrize("hold_loss", [True, False])
@pytest.mark.parametrize("micro", [2, 3])
@pytest.mark.parametrize("layers", [2, 6])
def test_a_leak_begun_after_the_head_reads_every_iteration(tmp_path: Path, layers: int, micro: int,
                                                           hold_loss: bool) -> None:
    # BASE: the 4 leaking iterations, or none (2 layers, 2 micro-batches, hold_loss=False: and no leak)
    sc = _stackless(iterations=6, layers=layers, mib=8, micro_batches=micro, set_to_none=False, hold_loss=hold_loss,
                    leak_from=2)
    assert (sc.truth["iterations"], sc.truth["leak_iterations"]) == (6, 4)
    steps, found = _read(tmp_path, sc)
    assert steps == ("memory_iterations", 6)
    _leak_is_truth(found, sc, 4)


@pytest.mark.parametrize("set_to_none", [True, False])
def test_control_without_the_leak_reads_its_iterations_and_no_leak(tmp_path: Path, set_to_none: bool) -> None:
    sc = _stackless(iterations=6, layers=2, mib=8, micro_batches=2, set_to_none=set_to_none, leak="")
    steps, found = _read(tmp_path, sc)
    assert steps == ("memory_iterations", 6)
    assert found == []


def test_control_with_an_optimizer_temporary_reads_as_before(tmp_path: Path) -> None:
    # the step's temporary opens each iteration at its level: read whole on BASE too
    sc = _stackless(iterations=6, layers=2, mib=8, micro_batches=2, set_to_none=True, optimizer_temp=True)
    steps, found = _read(tmp_path, sc)
    assert steps == ("memory_iterations", 6)
    _leak_is_truth(found, sc, 6)


def test_control_an_oom_turns_live_blocks_are_no_iterations_keep(tmp_path: Path) -> None:
    # the failing turn's activations, never freed, sit after the last whole iteration's walk: the one round keeping
    # them, no leak kept again (``_kept_again``), so the reading is BASE's
    sc = ms.oom_later_turn()
    path = Path(ms.write(str(tmp_path / "oom.pickle"), ms.as_recorded(sc.doc, context=None)))
    rep = report(path)
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", 2), rep.steps
