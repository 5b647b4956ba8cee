"""A snapshot's last iteration read from its allocations ends at the history's end, without the loop's time after it
(h37-survey60, issue #37 class 5).

An unmarked history's iterations are cut at each one's first allocation, so each runs to the next one's and holds the
loop's time after its last free: a wait for the GPU, the next batch, ``torch.profiler``'s ``prof.step()``.  The last
has no next one in the history; main ended it at the history's last event and averaged it with the whole ones.
rishabh-ranjan/cs336-a2 ``memory_snapshot__inference_only=1.pickle`` (@d9e05141, no licence: measured, not kept): three
``no_grad`` passes of CS336's 2.7B LM under ``torch.profiler``, whose ``prof.step()`` ran 1.06-1.27 s after each pass;
by hand the passes open at 1,866.7 / 3,407.0 / 4,612.1 ms and return to the weights' level at 2,138.4 / 3,552.1 /
4,757.3 ms (the history's last event).  Main: steps of 1.21 s and 0.15 s, a 676 ms mean for a loop that turns every
1.2-1.5 s.  ASSUMPTION that was wrong: the history's last event ends the last iteration as the next iteration's first
allocation ends the others.  Now, where every earlier iteration ran on after its own last event for longer than chance
moves a step's end, the last is dropped as partial (``SpanSteps.partial_last``, from three iterations on).

No kept real snapshot holds such a loop (the 29 kept ones read the same steps: SURVEY h37-survey60), so the truth here is
the generator's, by construction: ``synthetic.memsnapshot.inference_loop(between_us=)``.  Control: the same loop whose
next pass begins at once (one event's tick after the last free) keeps its last pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_report import report as snapshot_report
from tests.support.snapshot_report import step_starts_us


@pytest.mark.parametrize("passes", [3, 4])
def test_the_last_pass_without_the_loops_time_after_it_is_partial(tmp_path: Path, passes: int):
    """20 ms of the loop's own time after each 0.2 ms pass: every kept step is one pass's period, start to next
    start, by construction; the last pass, which the history ends at its last free, is dropped as partial."""
    sc = ms.inference_loop(passes=passes, between_us=20_000)
    rep = snapshot_report(tmp_path, sc.doc)
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", passes), rep.steps
    assert rep.steps["count"] == passes - 1, rep.steps
    assert rep.steps["dropped"][-1]["reason"].startswith("partial"), rep.steps["dropped"]
    rows = rep.step_rows.rows()
    assert step_starts_us(rep, sc.doc) == sc.truth["starts_us"][:-1]
    assert [round(r.step_ms * 1000) for r in rows] == sc.truth["periods_us"]


def test_control_a_loop_whose_next_pass_begins_at_once_keeps_its_last(tmp_path: Path):
    """No time between passes but the generator's tick (7 us of a 0.2 ms pass): the last pass lacks nothing a mean
    would miss, and every pass stays a step."""
    sc = ms.inference_loop(passes=4)
    rep = snapshot_report(tmp_path, sc.doc)
    assert (rep.steps["found"], rep.steps["count"]) == (4, 4), rep.steps
    assert step_starts_us(rep, sc.doc) == sc.truth["starts_us"]
