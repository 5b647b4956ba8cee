"""Three law breaks of session 45's walks (h37-probe45w; #37: right readings on captures unlike ours), each a loop whose
iterations the capture shows and the report read otherwise.  Truth by construction: ``synthetic.randjobs.TRUTH``.

* ``--forms13`` seed 97237: 18 unmarked calls, each two ``torch.tensor(pylist, device="cuda")`` of a few bytes, a
  ``.tolist()`` and ``.item()`` -- one pass.  The uploads ended before their own op's sync began, so their waits read
  as the call's reads, while the ``.tolist()``'s wait, followed by ``.item()``'s in the same gap, read as a copy's own:
  three "reads" of five launches, no period (``job.period._copies_own_waits`` / ``_own_waits``).
* ``--forms13`` seed 98767: 2 such calls (6 launches, under the 8 a period is read from; more than one kernel for
  ``_waited_runs``) -- one pass.  ``job.period._waited_repeats``: the runs between the host's waits, one sequence.
* ``--forms12`` seed 98050: 2 turns of ``data`` then ``eval_step`` ranges on 4 ranks -- steps placed at
  ``eval_step``, the last only its half (488.6 and 236.9 ms).  ``steps.nvtx_ranges._turn_opening``: the turn opens at
  ``data``, as three turns or more are read.
"""

from __future__ import annotations

import pytest

from synthetic import randjobs
from tests.support.random_jobs import report_of, walk

#: (the draw, its seeds): each broke a law on main
SEEDS = ((randjobs.random_form13_job, (97237, 98767)), (randjobs.random_form12_job, (98050,)))


@pytest.mark.parametrize(("draw", "seeds"), SEEDS)
def test_the_walk_seeds_hold_every_law(draw, seeds):
    assert walk(seeds, draw)  # every law held (walk asserts each job) over a form it drew


def _calls(steps: int, copies: list[tuple[str, float]], seed: int = 1) -> randjobs.Job:
    """``steps`` unmarked fp32 inference calls of one layer (2 kernels), each making ``copies`` then ``.item()``."""
    return randjobs.form13_job("kineto_user_copies", seed, steps=steps, train=False, dtype="fp32", layers=1, batch=1,
                               width=4096, efficiency=0.25, marker="none", launch_us=6.4, loop_us=14.0,
                               python_us=26.8, loader_us=0.0, end_sync="item", user_copies=copies)


def _steps(job: randjobs.Job) -> tuple[str, int, int]:
    st = report_of(job).hosts[0].steps
    return st["source"], st["found"], randjobs.TRUTH[job.seed]["steps"]


#: seed 97237's copies: two uploads of 170 B and 54 kB, each ended before its own op's sync, then a ``.tolist()``
UPLOADS_THEN_TOLIST = [("tensor_from_list", 0.000163), ("tensor_from_list", 0.051477), ("tolist", 0.000184)]


def test_tiny_uploads_and_a_tolist_then_item_each_call_a_step():
    """A reduced 97237 (6 calls): main read one pass.  Both halves of the cause are needed: with the gap that holds
    the ``.tolist()``'s and ``.item()``'s waits booked as the copy's (its first sync's), it still reads one pass."""
    source, found, ran = _steps(_calls(6, UPLOADS_THEN_TOLIST))
    assert (source, found, ran) == ("repeated_launches", 6, 6)


@pytest.mark.parametrize(("steps", "copies"), [(2, [("tolist", 8.0)]), (2, []), (3, [])])
def test_a_loop_too_short_for_a_period_is_split_by_its_waits(steps, copies):
    """A reduced 98767 (2 calls, a ``.tolist()`` each: 6 launches), and 2 or 3 calls of 2 kernels: fewer than 8
    launches, more than one kernel; main read one pass of each."""
    source, found, ran = _steps(_calls(steps, copies))
    assert (source, found) == ("repeated_launches", ran)


def test_runs_between_waits_that_differ_stay_one_pass():
    """Control: one call reading its result (``.item()``) before its ``.tolist()`` -- its waits split 3 launches into
    runs of other launches (2 kernels, then a copy): no loop, one pass, as on main."""
    job = randjobs.form13_job("kineto_user_copies", 1, steps=1, train=False, batch=64, width=4096, marker="none",
                              reads=1, end_sync="synchronize", user_copies=[("tolist", 0.01)])
    assert report_of(job).hosts[0].steps["source"] == "single_pass"


def _eval(ranks: int, ranges: tuple[str, ...]) -> randjobs.Job:
    """Seed 98050's evaluation job, its GEMMs 1 ms: 2 turns of 33 ops, ``ranges`` splitting each turn's ops."""
    p = {**randjobs.random_form12_job(98050).params, "ranks": ranks, "kernel_us": 1000.0,
         "extra_ranges": ranges}
    return randjobs.form12_job("eval_nvtx", 5, **p)


@pytest.mark.parametrize("ranks", [1, 4])
def test_two_turns_open_at_the_range_before_their_phase(ranks):
    """A reduced 98050: every GPU step kept is the turn's period, read from ``data``; main: 33.0 ms and 16.0 ms (the
    last step only its ``eval_step`` half; on one rank now dropped as partial, its mark holding part of the turn)."""
    job = _eval(ranks, ("data", "eval_step"))
    h = report_of(job).hosts[0]
    period = randjobs.TRUTH[job.seed]["step_ms"]
    rows = [r.step_ms for r in h.step_rows]
    assert h.steps["found"] == 2 and "`data`, the top-level range opening each turn" in h.steps["note"], h.steps
    assert rows and all(abs(ms - period) < 0.01 * period for ms in rows), (rows, period)


def test_a_phase_that_opens_its_turn_reads_as_before():
    """Control: ``validation_step`` alone marks each turn: read from it, as on main."""
    h = report_of(_eval(4, ("validation_step",))).hosts[0]
    assert "`validation_step`, the top-level range named after the loop's phase" in h.steps["note"], h.steps["note"]
    assert h.steps["found"] == 2
