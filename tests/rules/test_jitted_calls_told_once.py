"""A loop of compiled calls too small for their dispatch is told once: the host-bound finding that reads the step's
host time as those calls' dispatch holds the gaps between steps too, where the gaps are the next call's dispatch and
the loop between the calls (issue #37 class 4, "one account"; h37-turn66, SURVEY h37-turn65's *Left* 2).

The case: wild ``jax_mi300x`` (TraceLens' ``jax08_gemm``: ``for n in sizes: a = jnp.ones(..); b = jnp.ones(..); for _
in range(3): jnp.dot(a, b)`` on an MI300X, Python traced).  Read by hand (h37-turn66): its 15 gaps between steps hold
1,364 us, 958 us of it inside the next ``PjitFunction(dot)`` before its launch, most of the rest covered only by the
loop's own frame (``$generate_gemm_trace.py:31 run_gemms``), a few us JAX's runtime callbacks -- no function of the
program's own.  Main told that time twice: host-bound critical (215 us: "the dispatch of its 2.2 jitted calls ... for
199 us of GPU compute") and gaps between steps critical (91 us: "Python between jitted calls").  The ledger books both
as the host's work (``host_compute`` 305.6 us a step); now one finding holds 306 us.

Truth by construction: :func:`synthetic.jaxcapture.write_tiny_jitted_calls` (the same loop: a 5 us ``jit(dot)`` a
call, waited for, the loop's frame around all, two ``jnp.ones`` every fourth call).  Control: ``own_us`` -- a
function of the program's own traced between the calls: the gaps are its work, a cause of their own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic.jaxcapture import write_tiny_jitted_calls
from tests.support.run_report import fresh_run_report

_WILD = str(Path(__file__).resolve().parents[1] / "fixtures" / "wild")


def _rules(report) -> dict:
    return {f.rule: f for f in report.findings}


@pytest.fixture(scope="module")
def tiny_calls(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny_calls")
    write_tiny_jitted_calls(str(root), run="tiny_calls")
    return fresh_run_report(str(root), "tiny_calls")


def test_the_generated_loop_is_told_by_the_host_bound_finding_alone(tiny_calls):
    """Main: host-bound critical 160 us beside gaps critical 134 us, one cost.  Now the host-bound finding holds the
    ledger's host work whole (294 us), critical, and says the gaps' part; no gaps finding."""
    got = _rules(tiny_calls)
    assert "step_gaps" not in got, [(f.id, f.severity) for f in tiny_calls.findings]
    hb = got["unexplained_idle"]
    assert hb.severity == "critical"
    b = tiny_calls.hosts[0].breakdown_ms
    assert hb.saving.ms_per_step == pytest.approx(b["host_compute"], abs=6e-4)
    assert "lies between the steps' GPU work" in hb.summary and "jitted call's dispatch" in hb.summary
    assert hb.metric.detail["between_step_host_ms"] > 0


def test_the_savings_are_the_same_whole(tiny_calls):
    """The fold moves no time: what every fix gives back is the host's work as before, claimed once."""
    claims = sum(r["ms"] for f in tiny_calls.findings if f.saving is not None for r in f.saving.recovers
                 if r["group"] == "host")
    assert claims <= tiny_calls.hosts[0].breakdown_ms["host_compute"] + 6e-4


def test_gaps_of_the_programs_own_work_keep_their_finding(tmp_path):
    """Control: a traced function of the program's own between the calls (``$bench.py:30 prepare``) is work of its
    own, named by the gaps' finding as on main."""
    write_tiny_jitted_calls(str(tmp_path), run="own", own_us=200.0)
    got = _rules(fresh_run_report(str(tmp_path), "own"))
    assert "step_gaps" in got and "prepare" in got["step_gaps"].summary


def test_the_real_gemm_loop_is_told_once():
    """wild ``jax_mi300x``: main -- host-bound critical 215 us and gaps critical 91 us; now the host-bound finding
    alone, critical, 306 us (the ledger's 305.6 us of host work), the gaps' 91 us said as its part; the step (527 us,
    16 kept) as before.  Since h37-calls67 it holds the launch wait too (17 of its 18 us: the step-level fix runs several
    steps per call, so no graph's one launch stays), where a note of the launch check told it in the same step-level
    words: 323 us, one finding."""
    report = fresh_run_report(_WILD, "jax_mi300x")
    host = report.hosts[0]
    assert host.steps["count"] == 16
    got = _rules(report)
    assert "step_gaps" not in got
    hb = got["unexplained_idle"]
    assert hb.severity == "critical"
    assert hb.saving.ms_per_step == pytest.approx(0.323, abs=0.002)
    assert {r["pool"]: r["ms"] for r in hb.saving.recovers}["host_own"] == pytest.approx(0.306, abs=0.002)
    assert hb.metric.detail["between_step_host_ms"] == pytest.approx(0.091, abs=0.002)
    assert report.achievable["step_ms"] == pytest.approx(0.5274, abs=1e-3)
    assert "launch_bound" not in got
