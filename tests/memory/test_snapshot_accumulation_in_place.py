"""A snapshot's training iterations where gradient accumulation leaves no freed gradient to cut by, or the ring buffer
cut the history inside an accumulation group (h37-left45, issue #37 class 5).

h37-left32 told an accumulation group's micro-batches apart by the gradients: the group's first backward makes them,
``zero_grad()`` (``set_to_none=True``) frees them.  Two assumptions of that reading were wrong:

* ``zero_grad(set_to_none=False)`` zeroes the gradients in place: made by the job's first backward, they are held at
  every later round's start alike, and with an optimizer that allocates only on its first step (its state; fused or
  in-place updates) no allocation marks a later step.  The first optimizer step still ends the first iteration: the
  rounds before it are one iteration's micro-batches (``job.iterations._group_starts``).  Main found no step (micro
  -batches of 2 and 4), and, where the optimizer allocates every step, the wrong iterations (its ranking preferred a
  site whose level never came back to its start: a "negative dip").
* ``_record_memory_history(max_entries=N)`` keeps the last N events: a history that begins inside a group has its
  first rounds adding to gradients made before it (held 0 as far as it saw), and a site's first repeat inside an
  iteration.  Main found no step; the whole iterations after the cut are the steps.

Truth by construction (``synthetic.memsnapshot.training_iterations``, ``set_to_none``, ``max_entries``): each whole
iteration's first allocation's time and its peak.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_report import report as snapshot_report
from tests.support.snapshot_report import step_starts_us


@pytest.mark.parametrize(("micro", "optimizer_temp"), [(2, False), (4, False), (2, True), (1, True)])
def test_gradients_zeroed_in_place_still_cut_the_iterations(tmp_path: Path, micro: int, optimizer_temp: bool):
    """``zero_grad(set_to_none=False)``: the iterations by construction, the first (Adam's moments: one-time work)
    dropped as warm-up; with an optimizer that allocates once the micro-batches are counted off the first step."""
    sc = ms.training_iterations(iterations=4, micro_batches=micro, optimizer_temp=optimizer_temp, set_to_none=False)
    rep = snapshot_report(tmp_path, sc.doc)
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", 4), rep.steps
    assert [d["step"] for d in rep.steps["dropped"]] == [0], rep.steps
    assert step_starts_us(rep, sc.doc) == sc.truth["starts_us"][1:]
    assert [row[1] for row in rep.gpus[0].memory["step_peaks"]] == sc.truth["peaks"][1:]
    # weights, Adam's moments and the gradients kept allocated: what is held between iterations
    assert rep.gpus[0].memory["breakdown"]["held"] == sc.truth["held"]
    if micro > 1:
        assert f"{micro} micro-batches" in rep.steps["note"], rep.steps["note"]


def test_gradients_zeroed_in_place_without_accumulation_are_one_round_an_iteration(tmp_path: Path):
    """Control (main too): one micro-batch an iteration, the optimizer's state made after the first round: every round
    is an iteration, no micro-batch said."""
    sc = ms.training_iterations(iterations=4, optimizer_temp=False, set_to_none=False)
    rep = snapshot_report(tmp_path, sc.doc)
    assert rep.steps["found"] == 4 and "micro-batch" not in rep.steps["note"], rep.steps
    assert step_starts_us(rep, sc.doc) == sc.truth["starts_us"][1:]


@pytest.mark.parametrize(("micro", "optimizer_temp", "into"), [(3, True, 0.45), (3, True, 0.7), (3, False, 0.45),
                                                               (2, True, 0.7), (4, True, 0.45), (2, False, 0.45)])
def test_a_ring_buffer_cut_inside_an_accumulation_group_keeps_its_whole_iterations(tmp_path: Path, micro: int,
                                                                                    optimizer_temp: bool, into: float):
    """The history begins ``into`` of the way through an iteration's entries (inside one of its micro-batches): the
    whole iterations after it are the steps, by construction; the part before is no step."""
    full = len(ms.training_iterations(iterations=6, micro_batches=micro,
                                      optimizer_temp=optimizer_temp).doc["device_traces"][0])
    sc = ms.training_iterations(iterations=6, micro_batches=micro, optimizer_temp=optimizer_temp,
                                max_entries=int(full - full // 6 * (1 + into)))
    assert sc.truth["cut_in"] is not None and len(sc.truth["starts_us"]) >= 3  # the construction: cut in a group
    rep = snapshot_report(tmp_path, sc.doc)
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", len(sc.truth["starts_us"])), rep.steps
    assert step_starts_us(rep, sc.doc) == sc.truth["starts_us"]
    assert [row[1] for row in rep.gpus[0].memory["step_peaks"]] == sc.truth["peaks"]
    assert "is no step" in rep.steps["note"] and f"{micro} micro-batches" in rep.steps["note"], rep.steps["note"]


@pytest.mark.parametrize("optimizer_temp", [True, False])
def test_a_ring_buffer_cut_at_an_iteration_start_keeps_them_all(tmp_path: Path, optimizer_temp: bool):
    """Control (main too): the buffer's first entry is an iteration's first allocation -- every iteration it holds
    is whole, and every one is a step."""
    full = ms.training_iterations(iterations=6, micro_batches=3, optimizer_temp=optimizer_temp)
    trace = full.doc["device_traces"][0]
    first = next(k for k, e in enumerate(trace) if e["time_us"] == full.truth["starts_us"][2])
    sc = ms.training_iterations(iterations=6, micro_batches=3, optimizer_temp=optimizer_temp,
                                max_entries=len(trace) - first)
    assert sc.truth["cut_in"] is None and len(sc.truth["starts_us"]) == 4
    rep = snapshot_report(tmp_path, sc.doc)
    assert rep.steps["found"] == 4 and step_starts_us(rep, sc.doc) == sc.truth["starts_us"], rep.steps


@pytest.mark.parametrize(("micro", "into"), [(2, 0.45), (3, 0.7), (4, 0.2), (2, 0.2)])
def test_a_ring_buffer_cut_with_gradients_zeroed_in_place_keeps_its_whole_iterations(tmp_path: Path, micro: int,
                                                                                     into: float):
    """Fails on main (h37-left56, h37-left45's left): ``zero_grad(set_to_none=False)`` and a history that begins inside
    an accumulation group.  The optimizer's temporary (made every step) repeats as evenly as the forward's first
    allocation, and with the gradients kept allocated nothing dips between: main took the earlier of the two, each
    "iteration" opening at the optimizer's step -- the right count at the wrong starts, the cut group's step counted
    in the first.  The whole iterations by construction; the cut part is no step."""
    full = len(ms.training_iterations(iterations=6, micro_batches=micro, set_to_none=False).doc["device_traces"][0])
    sc = ms.training_iterations(iterations=6, micro_batches=micro, set_to_none=False,
                                max_entries=int(full - full // 6 * (1 + into)))
    rep = snapshot_report(tmp_path, sc.doc)
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", len(sc.truth["starts_us"])), rep.steps
    assert step_starts_us(rep, sc.doc) == sc.truth["starts_us"]
    assert [row[1] for row in rep.gpus[0].memory["step_peaks"]] == sc.truth["peaks"]
    assert "is no step" in rep.steps["note"] and f"{micro} micro-batches" in rep.steps["note"], rep.steps["note"]
