"""The one-pass finding in the job's words (h37-left43): a window of GPU work with no step marker and nothing
repeating is "one pass of the program", and a program that runs once is read whole -- but a training step runs in a
loop by what it is.  nvfuser_h200_first_call (training at medium confidence: nll_loss's backward kernels) and
vit_a4000_avg_batch (training at high confidence) were told "A program that runs once is read whole; if it loops,
record at least 5 of its iterations"; the CUDA programs cuda_reduce_baseline and mcts_rtx3080_one_pass (no framework,
no kind known: they may well run once) keep that sentence."""

from __future__ import annotations

import pytest

from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions

ONE_PASS = "The capture holds one pass of the program: no step repeats"


def _one_pass(run: str):
    (s,) = [s for s in wild_sessions() if s.run == run]
    (h,) = session_report(s).hosts
    (f,) = [f for f in h.findings if f.title == ONE_PASS]
    return h.job, f


@pytest.mark.parametrize("run", ["nvfuser_h200_first_call", "vit_a4000_avg_batch"])
def test_a_training_jobs_one_pass_is_not_asked_whether_it_loops(run):
    job, f = _one_pass(run)
    assert job["kind"] == "training"
    assert "A training job runs its step in a loop: record at least 5 of its iterations." in f.summary
    assert "if it loops" not in f.summary


@pytest.mark.parametrize("run", ["cuda_reduce_baseline", "mcts_rtx3080_one_pass"])
def test_a_program_of_no_known_kind_may_run_once(run):
    """Control (as on main): a program whose kind nothing names is read whole, or told to record its iterations."""
    job, f = _one_pass(run)
    assert job["kind"] != "training"
    assert "A program that runs once is read whole; if it loops, record at least 5 of its iterations." in f.summary
