"""A snapshot's marked turns are read between like marks, with no guess about the loop's order (h37-snapturn, issue
#37 class 5).

``synthetic.memsnapshot.synced_training``: a GPU-bound loop that synchronizes after each AdamW step, recorded after its
warm-up, whose first turn enqueues longer than the others (its forward makes the segments an ``empty_cache()``
returned).  Truth by construction: every turn lasts the loop's period from its ``zero_grad`` to the next, the host's
enqueue and its wait for the GPU together.  h37-survey56 read each turn from the optimizer step's end before it: the
second "turn" held the first's shortened wait and the second's enqueue (period - (first enqueue - enqueue)), and the
first -- its enqueue alone, from the history's start -- was dropped as partial.  ASSUMPTION that was wrong: a turn
begins where the optimizer step before it ends.  Read from one turn's first allocation to the next, each is the period
and the last (the history ends at its step: its wait unrecorded) is partial.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_report import report as snapshot_report

#: the synthetic allocator spaces its entries 7 us apart: a turn's first allocation sits one entry after its
#: ``zero_grad`` (two in the first, whose forward asks the driver for a segment first)
_ENTRY_MS = 0.007


@pytest.mark.parametrize(("turns", "first_enqueue_us"), [(5, 20_000), (4, 35_000), (3, 30_000)])
def test_each_turn_lasts_the_period_whatever_its_enqueue(tmp_path: Path, turns: int, first_enqueue_us: int) -> None:
    """Every kept step is the loop's period, the first turn's included (main: the second step 50 - (20 - 9) = 39 ms,
    the first dropped)."""
    sc = ms.synced_training(turns=turns, first_enqueue_us=first_enqueue_us)
    rep = snapshot_report(tmp_path, sc.doc)
    period_ms = sc.truth["period_us"] / 1000
    rows = rep.step_rows.rows()
    assert len(rows) == turns - 1, rep.steps
    assert all(abs(r.step_ms - period_ms) <= 2 * _ENTRY_MS for r in rows), [r.step_ms for r in rows]
    assert abs(rep.gpus[0].step_ms - period_ms) <= _ENTRY_MS, rep.gpus[0].step_ms


def test_the_last_turn_whose_wait_the_history_ends_before_is_partial(tmp_path: Path) -> None:
    """The history ends at the last step's end: the last turn holds its enqueue only (9 ms of 50), dropped as partial;
    the first, begun with the recording, is whole and kept."""
    sc = ms.synced_training(turns=5)
    rep = snapshot_report(tmp_path, sc.doc)
    assert (rep.steps["found"], rep.steps["count"]) == (5, 4), rep.steps
    (drop,) = rep.steps["dropped"]
    assert drop["step"] == 4 and drop["reason"].startswith("partial:"), drop
    assert rep.step_rows.rows()[0].start_ms < 2 * _ENTRY_MS  # the first turn, from the history's start


def test_control_turns_of_equal_enqueue_read_the_period_either_way(tmp_path: Path) -> None:
    """Control: where every turn enqueues alike (the warm-up's segments still cached), a turn read from a step's end
    and one read from a first allocation are the same length: the period, on main too."""
    sc = ms.synced_training(turns=5, first_enqueue_us=9_000, empty_cache=False)
    rep = snapshot_report(tmp_path, sc.doc)
    period_ms = sc.truth["period_us"] / 1000
    assert rep.steps["count"] == 4, rep.steps
    assert all(abs(r.step_ms - period_ms) <= 2 * _ENTRY_MS for r in rep.step_rows.rows())
    assert abs(rep.gpus[0].step_ms - period_ms) <= _ENTRY_MS, rep.gpus[0].step_ms
