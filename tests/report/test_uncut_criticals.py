"""A finding that rests on low-confidence steps is never critical (issue #37 deliverable 2), and its exemptions by cause
(h37-lowconf): a critical on such steps must depend on no step cut.

A saving is time per step, a part of the steps as they were cut: where they are a guess (GPU bursts; the window read as
one iteration from its bursts) the part and its whole are a guess, whichever rule claims it -- the capture's own rules
too (``rules.rests_on_the_steps``).  Two criticals stand: a finding that claims no time per step and measures the window
(an OOM, the window's share of one-time costs), and one on a capture read whole as one pass because nothing repeats,
whose per-step time is the pass's total (``rules.steps_are_cut``) -- it says why beside the steps' "low confidence".

Main (105f2e51): the cold start was exempt from the steps' ceiling by its rule's name alone, so nvfuser_h200_gtest's
"saves ~10.3 ms/step (56% of step)" on 6 steps cut from GPU bursts read CRITICAL (kokkos_8361a6b's 40%, locally, too);
cuda_reduce_baseline's critical on a window read whole kept its grade without a word, under a capture finding calling
that pass "itself a guess".
"""

from __future__ import annotations

import copy

import pytest

from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.model.schema import Finding, Report
from tests.support.burst_loops import cold_burst_loop
from tests.support.paths import FIXTURES
from tests.support.properties import uncut_problems
from tests.support.run_report import run_report

WILD = FIXTURES / "wild"
#: why a critical on a pass read whole keeps its grade, and why one per guessed step lost it (the rules' words)
KEPT = "no cut of steps changes it"
LOST = "A warning, not critical: it rests on steps that are a guess (from GPU bursts, low confidence)."
#: the same of a window read as one pass, itself the guess (h37-onepass2: "steps" named what the pass does not hold)
LOST_PASS = "A warning, not critical: it rests on a pass that is a guess (from GPU bursts, low confidence)."
ONE_PASS_GUESS = "The one pass is itself a guess"


def _rule(r: Report, rule: str) -> Finding:
    (f,) = [f for f in r.hosts[0].findings if f.rule == rule]
    return f


def _one_pass(r: Report) -> Finding:
    (f,) = [f for f in r.hosts[0].findings if f.title == "The capture holds one pass of the program: no step repeats"]
    return f


def test_a_cold_start_per_guessed_step_is_a_warning_that_says_why(tmp_path):
    """``COLD_BURST_GAPS``' loop: a cold start of 45.0 ms in each ~144 ms step cut from GPU bursts (low confidence): 31% of such a step -- past
    the critical share, so the steps' ceiling, not the share, makes it a warning.  Main (105f2e51, on
    nvfuser_h200_gtest's 6 burst steps, now one pass: its truth, h37-windows2): CRITICAL, high confidence."""
    r = cold_burst_loop(tmp_path)
    steps = r.hosts[0].steps
    assert (steps["source"], steps["count"], steps["confidence"]) == ("gpu_busy_clusters", 3, "low")
    f = _rule(r, "cold_start")
    assert f.saving.ms_per_step == pytest.approx(45.0, abs=0.1)  # 6 loads of 7.5 ms with the GPU idle, per step
    assert f.saving.percent_of_step >= 100 * T("job.warmup_share")  # its own grade would be critical
    assert (f.severity, f.confidence, f.metric.status) == ("warning", "low", "warning")
    assert LOST in f.summary
    assert not uncut_problems(r.hosts[0])


def test_a_cold_start_per_guessed_iteration_is_a_warning():
    """nvfuser_h200_first_call: the window read as at most one iteration from its bursts (``iteration_guess``); the
    cold start's 27% of that guessed iteration is a warning, as its other per-step findings are (h37-left39).
    Main: CRITICAL, high confidence."""
    r = run_report(WILD, "nvfuser_h200_first_call")
    assert r.hosts[0].steps["iteration_guess"]
    f = _rule(r, "cold_start")
    assert f.saving.percent_of_step >= 100 * T("job.warmup_share")
    assert (f.severity, f.confidence) == ("warning", "low") and LOST_PASS in f.summary
    assert ONE_PASS_GUESS in _one_pass(r).summary  # the pass is a guess here: said so


def test_a_critical_on_a_pass_read_whole_keeps_its_grade_and_says_why():
    """cuda_reduce_baseline: no step, nothing repeats: the window is one pass (steps "low confidence", no iteration
    claimed); small_grid's 1.00 s of the 1.05 s pass is the pass's total however steps were cut: critical, at no
    confidence label, saying why -- and the capture finding no longer calls the pass a guess.  Main: no why, "The one
    pass is itself a guess (low confidence): every per-step number rests on it"."""
    r = run_report(WILD, "cuda_reduce_baseline")
    steps = r.hosts[0].steps
    assert steps["source"] == "whole_capture" and not steps["iteration_guess"] and steps["confidence"] == "low"
    f = _rule(r, "small_grid")
    assert (f.severity, f.confidence) == ("critical", "high")
    assert KEPT in f.summary and f.summary.count(KEPT) == 1  # said once, though the ceiling runs twice
    assert ONE_PASS_GUESS not in _one_pass(r).summary
    assert not uncut_problems(r.hosts[0])


def test_the_uncut_property_catches_mains_criticals(tmp_path):
    """The property ``uncut`` names both of main's readings, rebuilt on today's reports."""
    bursts = copy.deepcopy(cold_burst_loop(tmp_path).hosts[0])
    f = next(f for f in bursts.findings if f.rule == "cold_start")
    f.severity = "critical"  # main's grade
    (v,) = uncut_problems(bursts)
    assert f"{f.id} is critical on steps cut from gpu_busy_clusters" in v
    whole = copy.deepcopy(run_report(WILD, "cuda_reduce_baseline").hosts[0])
    g = next(f for f in whole.findings if f.rule == "small_grid")
    g.summary = g.summary.replace(KEPT, "")  # main's words
    (v,) = uncut_problems(whole)
    assert "does not say why it keeps its grade" in v


# --------------------------------------------------------------------------- controls: what must not change


def test_a_cold_start_on_marked_steps_stays_critical():
    """amd_mi250: ProfilerStep marks (high confidence); its cold start is critical, unlabelled, with no guess words."""
    r = run_report(WILD, "amd_mi250")
    f = _rule(r, "cold_start")
    assert (f.severity, f.confidence) == ("critical", "high") and "guess" not in f.summary


def test_a_cold_start_on_one_pass_of_medium_confidence_stays_critical():
    """tp_rtx4090_cold_forward: one forward pass (``single_pass``, medium): the ceiling is for low confidence alone;
    the cold start keeps its grade (it now carries the steps' medium confidence: its saving is per pass)."""
    r = run_report(WILD, "tp_rtx4090_cold_forward")
    f = _rule(r, "cold_start")
    assert f.severity == "critical" and f.confidence != "low" and "guess" not in f.summary


def test_a_cold_start_on_a_pass_read_whole_is_not_labelled_a_guess():
    """mcts_rtx3080_one_pass: a window read whole as one pass (no iteration claimed); its cold start's 4.0% of the pass
    is the pass's own: a warning by its saving, at no confidence label, with neither the ceiling's words nor a critical's
    why (the window-only cold start on burst steps is kokkos_6f0a1c4's, kept locally: ``test_rocprof_reports``)."""
    r = run_report(WILD, "mcts_rtx3080_one_pass")
    f = _rule(r, "cold_start")
    assert (f.severity, f.confidence) == ("warning", "high")
    assert "guess" not in f.summary and KEPT not in f.summary


def test_a_critical_the_sessions_regrade_raised_on_one_pass_says_why():
    """``--forms11`` seed 200461 (session 50's walk): one Nsight export of 4 ranks' one pass, read whole (889 us, the
    median rank's).  The session regrades the hosts' findings against that pass (``report.merge._of_session_step``), and
    the raise to the savings lifted the launch skew (16.9%) and the pinned H2D copies (14.8%) to critical beside the
    job's exposed AllReduce (10.1%) they out-save -- after the host's own grading had said why its criticals stand, so
    the two new criticals said nothing of the pass (``uncut``).  Now every critical claiming time per step of a pass read
    whole says why, whichever grading made it critical; the session's list and the host's alike."""
    from synthetic.randjobs import random_form11_job
    from tests.support.random_jobs import report_of

    r = report_of(random_form11_job(200461))
    h = r.hosts[0]
    assert (h.steps["source"], h.steps["confidence"], h.steps["iteration_guess"]) == ("whole_capture", "low", False)
    crit = [f for f in r.findings if f.severity == "critical" and f.saving is not None]
    assert {f.rule for f in crit} >= {"launch_skew", "excessive_memcpy", "comm_exposed"}
    assert all(f.summary.count(KEPT) == 1 for f in crit), [f.id for f in crit if KEPT not in f.summary]
    assert not uncut_problems(h)
