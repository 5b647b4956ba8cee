"""A step's memory peak counts the level it starts at (h37-snap64, found by the ``one-unit`` property of
``tests/support/properties.memory_unit_problems``).

Why: ``metrics.memory._per_step`` took a step's peak over its own events only; the level the step starts at is held
until its first event, so where that event frees, the peak read below the bytes the step began with -- one GPU's
row [step, peak, reserved, start] said a part (its start) above its whole.  The shared H100 JAX capture
``real-h100-jax/implicit_numpy_input`` (read by hand from its report: step 1 starts at 503,394,560 B, its first event
frees 256 B, nothing later in the step climbs back): base gave 503,394,304 B.  The test fails on base; it skips
where the shared profiles are absent."""

from __future__ import annotations

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tests.support.paths import SHARED_PROFILES
from tests.support.report_store import session_report

RUN = SHARED_PROFILES / "real-h100-jax"


def test_each_steps_peak_holds_the_level_it_starts_at():
    if not (RUN / "implicit_numpy_input").is_dir():
        pytest.skip("the shared profiles are not beside this checkout")
    (s,) = [s for s in discover(str(RUN)) if s.run == "implicit_numpy_input"]
    rows = [row for h in session_report(s).hosts for g in h.gpus for row in (g.memory or {}).get("step_peaks") or []]
    assert rows
    assert all(start <= peak for _step, peak, _res, start in rows), rows[:3]
    assert rows[0][1] == 503_394_560  # base: 503,394,304 -- 256 B under its start
