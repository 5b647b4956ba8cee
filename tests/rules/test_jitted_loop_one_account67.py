"""A loop of tiny jitted calls: every microsecond of the step's idle told by one finding, its diagnosis made once
(issue #37 class 4, "one account"; h37-calls67, SURVEY h37-turn66's *Left* 1).

Truth by construction: :func:`synthetic.jaxcapture.write_tiny_jitted_calls` -- a 5 us ``jit(dot)`` a call, waited
for, 15 us of the loop's Python before the next call, the call's ~110 us dispatch chain; nothing else runs.  The whole
idle of each step (the ledger's launch wait, host work and unrecorded time) is that one cost: the dispatch of a call
too small for it and the loop that drives one call at a time.  Four shapes of the same loop: with and without the
loop's traced frame (which makes the ledger book the dispatch as host work, not launch wait), with and without fresh
inputs made every fourth call (host work inside the steps).

Main (15b35816): with no inputs the gaps' finding told the whole cost as "Python between jitted calls" and the
host-bound finding was never weighed without it; with no frame and no inputs 110 us a step of dispatch (77% of the
143 us step) were told by no finding -- the launch check quiet ("one kernel a step"); with no frame and inputs the
ledger's 28 us of unrecorded loop code were claimed by none and the launch check saved 39 of its 110 us as if a graph
were the fix.  And the gaps' diagnosis was made twice per evaluation (``rules.calls_told_whole`` built the gaps'
finding again).
"""

from __future__ import annotations

import pytest

from synthetic.jaxcapture import write_tiny_jitted_calls
from tb_gpu_advisor import formats, rules
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.rules import step_gaps
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.run_report import fresh_run_report

_SHAPES = {"frame_inputs": {}, "frame": {"inputs_every": 0}, "bare": {"loop_frame": False, "inputs_every": 0},
           "bare_inputs": {"loop_frame": False}}
#: The ledger's categories of the host's cost of the turn: each one of them this loop's, by construction.
_IDLE = ("launch_wait", "host_compute", "other")


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    root = tmp_path_factory.mktemp("loops")
    for run, kw in _SHAPES.items():
        write_tiny_jitted_calls(str(root), run=run, **kw)
    return {run: fresh_run_report(str(root), run) for run in _SHAPES}


def _claims(report) -> dict:
    """(finding id) -> ms per step it saves of the host's and the launches' pools."""
    return {f.id: sum(r["ms"] for r in f.saving.recovers if r["group"] in ("host", "launch"))
            for f in report.findings if f.saving is not None}


@pytest.mark.parametrize("run", list(_SHAPES))
def test_every_microsecond_of_the_turn_is_claimed_once(reports, run):
    """The findings' claims on the host's and the launches' pools sum to the ledger's idle of the turn, never past it
    (to the printed microsecond per finding), less only the ~1 us each kernel still pays once its dispatch is paid
    once for many steps (1-1.6 kernels a step).  Fails on main for ``bare`` (28 of 138 us claimed) and
    ``bare_inputs`` (195 of 294 us)."""
    report = reports[run]
    b = report.hosts[0].breakdown_ms
    idle = sum(b.get(c, 0.0) for c in _IDLE)
    claims = sum(_claims(report).values())
    rounding = 5e-4 * len(report.findings)
    assert claims <= idle + rounding, (claims, b)
    assert claims >= idle - 2e-3 - rounding, (_claims(report), b)


def test_no_host_work_in_the_steps_is_still_the_calls_dispatch(reports):
    """No inputs made inside the steps: all the host's work lies in the gaps.  Main: the gaps' finding, critical, 138
    us "Python between jitted calls", and no host-bound finding.  Now the host-bound finding weighed without the gaps'
    claim holds them, in its step-level words (the dispatch of a jitted call too small for it)."""
    got = {f.rule: f for f in reports["frame"].findings}
    assert "step_gaps" not in got
    hb = got["unexplained_idle"]
    assert hb.severity == "critical" and "dispatch of its 1 jitted call" in hb.summary
    assert "lies between the steps' GPU work" in hb.summary
    assert hb.saving.ms_per_step == pytest.approx(reports["frame"].hosts[0].breakdown_ms["host_compute"], abs=6e-4)


def test_a_bare_loops_dispatch_is_told_by_the_step_level_verdict(reports):
    """No traced frame: the ledger books the next call's dispatch as launch wait (110 us) and the loop's Python as
    unrecorded (27 us).  Main: the launch check quiet ("one kernel a step: ... no launch to save"), the gaps' finding
    27 us.  Now the launch check's step-level verdict holds both -- its fix runs several steps per jitted call, which
    pays the dispatch once for many steps -- and no gaps' finding is left."""
    got = {f.rule: f for f in reports["bare"].findings}
    assert "step_gaps" not in got
    lf = got["launch_bound"]
    assert lf.severity == "critical" and "too small for its dispatch cost" in lf.summary
    b = reports["bare"].hosts[0].breakdown_ms
    pools = {r["pool"]: r["ms"] for r in lf.saving.recovers}
    assert pools["launch"] == pytest.approx(b["launch_wait"], abs=2e-3)  # less the ~1 us its kernel still pays
    assert pools["host_work"] == pytest.approx(b["other"], abs=1e-3)
    assert any("jax.lax.scan" in (a.snippet or "") for a in lf.actions)


def test_the_gaps_diagnosis_is_made_once(tmp_path, monkeypatch):
    """One evaluation diagnoses the gaps once: the host-bound fold reads the gaps' finding the evaluator holds (its
    detail ``next_call_dispatch_ms``).  Fails on main: ``calls_told_whole`` asked ``step_gaps.call_gaps(metrics)``,
    which built the gaps' finding again (two diagnoses; ~1.4 of the 9.5 ms of analysis on wild ``jax_mi300x``)."""
    write_tiny_jitted_calls(str(tmp_path), run="loop")
    (s,) = [s for s in discover(str(tmp_path)) if s.run == "loop"]
    m = host_metrics(formats.read(s.hosts[0]))
    calls = []
    real = step_gaps._diagnose

    def counted(*a, **k):  # noqa: ANN002, ANN003, ANN202
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(step_gaps, "_diagnose", counted)
    got = {f.rule: f for f in rules.evaluate(m)}
    assert "step_gaps" not in got and "lies between the steps' GPU work" in got["unexplained_idle"].summary
    assert len(calls) == 1


def test_the_real_gemm_loops_launch_wait_is_told_by_its_host_bound_finding():
    """wild ``jax_mi300x``: main told its 18 us launch wait as a launch note in the host-bound finding's step-level words
    ("the whole step is too small for its dispatch cost"), saving 6 us as if a graph were the fix.  Now the host-bound
    finding holds it (17 us: the step-level fix pays the dispatch once for many steps) and the launch card says where
    its check's finding went; the step and the host's 306 us as before."""
    from pathlib import Path

    report = fresh_run_report(str(Path(__file__).resolve().parents[1] / "fixtures" / "wild"), "jax_mi300x")
    assert not [f for f in report.findings if f.rule == "launch_bound"]
    hb = next(f for f in report.findings if f.rule == "unexplained_idle")
    pools = {r["pool"]: r["ms"] for r in hb.saving.recovers}
    assert pools["host_own"] == pytest.approx(0.306, abs=0.002) and pools["launch"] == pytest.approx(0.017, abs=0.002)
    card = next(c for c in report.hosts[0].headline if c.id == "launch_wait_share")
    assert "told inside another" in card.detail["not_flagged"] and hb.title in card.detail["not_flagged"]
