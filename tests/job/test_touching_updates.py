"""Two optimizer steps that touch -- one ends where the next begins -- are two updates, so two iterations; only
calls that overlap (a step nested in another, as ``Optimizer.step#SGD.step`` around the optimizer's own ``step``) are
one call (issue #37, h37-left13).  On main the step-end events were merged as a time union, which joins touching
intervals: a benchmark of the optimizer alone (HPMLProj @08e10fd5 profiles only ``optimizer.step()``) read its back to
back updates as one.  The trace is ``synthetic.torchtrace.back_to_back_updates``'s, its updates known by
construction."""

from __future__ import annotations

import pytest

from synthetic.torchtrace import Scenario, back_to_back_updates, write_run
from tb_gpu_advisor.discover.logdir import discover
from tests.support.report_store import session_report


def _steps(tmp_path, updates: int, nested: bool = False) -> dict:
    write_run(str(tmp_path), Scenario(1, back_to_back_updates(updates, nested=nested), [], [], "back-to-back updates"),
              run="opt")
    (s,) = discover(str(tmp_path))
    host = session_report(s).to_dict()["hosts"][0]
    return host["steps"]


@pytest.mark.parametrize("updates", [3, 6])
def test_back_to_back_updates_are_as_many_iterations(tmp_path, updates):
    steps = _steps(tmp_path, updates)
    assert (steps["source"], steps["found"]) == ("step_end_events", updates), steps


def test_a_nested_update_is_still_one_update(tmp_path):
    """Control: an update recorded twice, one event inside the other, is one call (both on main and here)."""
    steps = _steps(tmp_path, 4, nested=True)
    assert (steps["source"], steps["found"]) == ("step_end_events", 4), steps
