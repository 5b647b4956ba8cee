"""A step too small for its host time, where that step may be nothing but first calls (h37-walk23).

``launch_bound``'s step-level clause said "costing X of host dispatch ... too small for its dispatch cost" while the
note ``rules._one_early_call`` appends to the same summary says the host time may be the first call's one-time cost
(kernels loaded on their first launch): a finding claiming the per-call cost it doubts (the words law
``contradictions.window_words_problems``).  The host-bound clause already names that time "the host's time in".
Walk ``--forms`` seed 6053 (truth by construction: one Kineto step kept, 3 kernels of 3.3 us, the 14 later steps'
GPU records lost) broke it on main before and after session 23's merges.
"""

from __future__ import annotations

from synthetic.randjobs import random_form_job
from tests.support.cli_report import first_report
from tests.support.contradictions import window_words_problems
from tests.support.paths import FIXTURES
from tests.support.random_jobs import report_of


def _launch_summary(findings) -> str:
    (f,) = [f for f in findings if f.rule == "launch_bound"]
    return f.summary


def test_a_first_calls_step_is_too_small_for_its_host_time_not_its_dispatch(tmp_path):
    r = report_of(random_form_job(6053), str(tmp_path))
    s = _launch_summary(r.hosts[0].findings)
    assert "the first call's one-time cost" in s, s  # the note: the one step may be first calls
    assert "of host time, more than its" in s and "too small for its host time." in s, s
    assert "dispatch" not in s, s
    assert not window_words_problems(r), window_words_problems(r)


def test_control_a_steady_step_keeps_its_dispatch_words():
    """A real compiled inference loop on an H200 (kept ``h200_jobs``), its steps steady: "dispatch" as before."""
    report = first_report(FIXTURES / "h200_jobs" / "torch_compile_cudagraphs_inference")
    (s,) = [f["summary"] for h in report["hosts"] for f in h["findings"] if f["rule"] == "launch_bound"]
    assert "costing 170 us of host dispatch" in s and "too small for its dispatch cost." in s, s
    assert "one-time cost" not in s, s
