"""An unmarked host-bound loop whose calls read back at the repeats' opening: its steps are its calls, however long the
gaps inside a call (h37-usercopies13, issue #37 class 3: the copies users write in a step).

The wrong assumption (``job.period._region_steps``): *a host slower than its GPU pauses longest at its loop's
boundary* (``_turns_longest``; with several reads, the boundary's pause above every gap without one).  A call whose
Python between ops outlasts the loop's turn, or whose pageable ``non_blocking`` upload blocks the host inside the copy
call, holds longer gaps than the turn; the copies' launches also take the last op's Python off the boundary's gap.
``--forms13`` walk seeds 21671 (9 calls, 106 us of Python after each op, two pageable uploads, one ``.item()`` and a
3.5 us turn), 6016 (14 calls, two ``torch.tensor(pylist, device="cuda")``), 22655 (16 calls, a 56 MB pageable upload
blocking 4.7 ms): main read each as one pass.  Where the host waited before every repeat's first launch -- the
launches begin repeating there -- that wait is the boundary (``_opens_at_wait``).

Truth by construction: ``synthetic.randjobs`` (``TRUTH``: the calls the job ran).  Controls: the same loops without
their copies (the longest pause at the boundary: main's reading, unchanged)."""

from __future__ import annotations

import pytest

from synthetic import randjobs
from tests.support.random_jobs import report_of


def _found(tmp_path, job: randjobs.Job) -> tuple[dict, int]:  # noqa: ANN001 - pytest's tmp_path
    h = report_of(job, str(tmp_path)).hosts[0]
    return h.steps, randjobs.TRUTH[job.seed]["steps"]


@pytest.mark.parametrize("seed", [21671, 6016, 22655])
def test_each_call_is_a_step(tmp_path, seed):
    steps, ran = _found(tmp_path, randjobs.random_form13_job(seed))
    assert (steps["source"], steps["found"]) == ("repeated_launches", ran), steps


@pytest.mark.parametrize("seed", [21671, 6016, 22655])
def test_without_the_copies_unchanged(tmp_path, seed):
    """Control: the same loop, no user copy -- its boundary pauses longest (read on main as here)."""
    job = randjobs.random_form13_job(seed)
    job.params["user_copies"] = []
    steps, ran = _found(tmp_path, job)
    assert (steps["source"], steps["found"]) == ("repeated_launches", ran), steps


@pytest.mark.parametrize("python_us", [0.0, 120.0])
def test_uploads_before_the_read(tmp_path, python_us):
    """A reduced job: 8 unmarked fp32 inference calls of 2 layers, two pageable uploads then ``.item()`` each, a 3 us
    turn, with no Python between ops or 120 us after each: main read one pass of both (the gaps the uploads block
    outlast the turn; so does the Python)."""
    job = randjobs.form13_job("kineto_user_copies", 7, steps=8, train=False, dtype="fp32", layers=2, batch=8,
                              width=128, marker="none", loop_us=3.0, python_us=python_us,
                              user_copies=[("nonblocking_pageable", 0.5), ("nonblocking_pageable", 0.03)])
    steps, ran = _found(tmp_path, job)
    assert (steps["source"], steps["found"]) == ("repeated_launches", ran), steps
