"""A window mostly start-up says whether the steps left after it are enough, as the too-few-steps check judges them
(survey h37-survey29).  PARAM's linear model (``tests/fixtures/wild/mlp_rtx2080ti_from_start``, PROVENANCE.md): 981 ms
of CUDA context creation fill half the window, then 40 iterations, 38 kept.  Main told its user the averages "rest on
the other 38, which may be too few to be the steady state", while "Too few steps" asks for 5.  A cold first window
with 2 steps left (``cold_mi300x_norm``) still says they may be too few."""

from __future__ import annotations

import pytest

from tb_gpu_advisor.common.thresholds import T
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions


def _cold(run: str) -> tuple[dict, int]:
    (s,) = [s for s in wild_sessions() if s.run == run]
    rep = session_report(s).to_dict()
    (f,) = [f for f in rep["findings"] if f["rule"] == "cold_start"]
    return f, rep["hosts"][0]["steps"]["count"]


def test_enough_steps_after_the_start_up_are_not_called_too_few():
    f, kept = _cold("mlp_rtx2080ti_from_start")
    summary = " ".join(f["summary"].split())
    assert kept >= T("capture.min_steps") and f["severity"] == "warning"  # still a warm-up window, said first
    assert f"rest on the other {kept}" in summary and "too few" not in summary and "enough" in summary


@pytest.mark.parametrize("run", ["cold_mi300x_norm"])
def test_fewer_steps_than_the_steady_state_needs_still_may_be_too_few(run):
    f, kept = _cold(run)
    assert kept < T("capture.min_steps") and "may be too few" in " ".join(f["summary"].split())
