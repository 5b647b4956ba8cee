"""A call whose copies wait for their own transfers reads back at its end: its steps are its calls, however many of
its launches the copies' own syncs follow (h37-copysync, issue #37 classes 2-3: the copies users write in a step).

The wrong assumption (``job.period._read_points``): *every sync the host makes at a fixed offset of the period is a
read of the call's, and where they follow more than half the launches they are a native loop's blocking copies, no
call's reads.*  ``.tolist()`` and ``torch.tensor(pylist, device="cuda")`` each launch a copy and then block in
``cudaStreamSynchronize`` until that transfer ends: the wait is the copy's own, made where the copy is.
``--forms13`` walk seed 6141 (20 calls of 2 kernels, ``.tolist()``, ``torch.tensor(pylist, device="cuda")``, a
pageable upload, then ``.item()``) waits at 3 of its 5 launches, two of them the copies' own: main read one pass.
Those waits now count for no offset (``_copies_own_waits``); the call's read (``.item()``, after an upload that
ended inside its own call) remains, and the repeats open at it.

Truth by construction: ``synthetic.randjobs`` (``TRUTH``: the calls the job ran).  Controls: a period whose every
wait is a copy's own (no read of the call's: the count stays theirs) reads as on main."""

from __future__ import annotations

import pytest

from synthetic import randjobs
from tests.support.random_jobs import report_of


def _found(tmp_path, job: randjobs.Job) -> tuple[dict, int]:  # noqa: ANN001 - pytest's tmp_path
    h = report_of(job, str(tmp_path)).hosts[0]
    return h.steps, randjobs.TRUTH[job.seed]["steps"]


def test_walk_seed_6141_each_call_is_a_step(tmp_path):
    steps, ran = _found(tmp_path, randjobs.random_form13_job(6141))
    assert (steps["source"], steps["found"]) == ("repeated_launches", ran), steps


def _reduced(end_sync: str, copies: list[tuple[str, float]]) -> randjobs.Job:
    """8 unmarked fp32 inference calls of 1 layer (2 kernels), 120 us of Python after each op, a 3 us turn, then
    ``copies`` and ``end_sync``."""
    return randjobs.form13_job("kineto_user_copies", 7, steps=8, train=False, dtype="fp32", layers=1, batch=8,
                               width=128, marker="none", loop_us=3.0, python_us=120.0, end_sync=end_sync,
                               user_copies=copies)


def test_copies_own_syncs_then_a_read(tmp_path):
    """A reduced 6141: ``.tolist()``, ``torch.tensor(pylist, device="cuda")``, a tiny pageable upload, ``.item()``: the
    host waits after 3 of the 5 launches, two of them the copies' own: main read one pass."""
    job = _reduced("item", [("tolist", 0.9), ("tensor_from_list", 3.9), ("nonblocking_pageable", 0.0001)])
    steps, ran = _found(tmp_path, job)
    assert (steps["source"], steps["found"]) == ("repeated_launches", ran), steps


def test_every_wait_a_copys_own_unchanged(tmp_path):
    """Control: three copies each blocking in its own sync and no read of the call's (3 of 5 launches): the count is
    the copies' own, as on main -- the calls are read by their pauses, not as reads."""
    job = _reduced("none", [("tolist", 0.9), ("tensor_from_list", 3.9), ("tolist", 0.5)])
    steps, ran = _found(tmp_path, job)
    assert (steps["source"], steps["found"]) == ("repeated_launches", ran), steps


@pytest.mark.parametrize("seed, said, unsaid", [
    (6141, "2 of them the copies' own waits", "longer than between launches"),
    (6016, "the launches begin repeating at one of them", "longer than between launches"),
    (21671, "where the launches begin repeating", "the period's longest pause"),
])
def test_the_note_says_what_marked_the_boundary(tmp_path, seed, said, unsaid):
    """Where the repeats open at a read, the boundary's pause is shorter than the typical gap between launches (6016:
    73 us against 152 us; 21671: 47 us against 120 us): main's note said the host paused longer there, or that it was
    the period's longest pause, beside those two numbers.  6141 fails on main by its steps."""
    note = _found(tmp_path, randjobs.random_form13_job(seed))[0]["note"]
    assert said in note and unsaid not in note, note


def test_a_boundary_that_pauses_longest_says_so(tmp_path):
    """Control: 22655's boundary pauses 64 us against 23 us between launches: the note says so, as on main."""
    note = _found(tmp_path, randjobs.random_form13_job(22655))[0]["note"]
    assert "the host pauses there (64 us at the boundary) longer than between launches (23 us)" in note, note
