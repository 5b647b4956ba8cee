"""``claims-once`` over every report (h37-left54): two findings that recover more of one ledger group together than
the step holds there say so (``Saving.overlaps``), wherever their pools differ.

Before, ``rules.savings.mark_overlaps`` named an overlap only where two findings claimed the same (group, pool).  On
the corpus' ``ddp_launch_skew`` (rank k starts each step k x 0.4 ms late; each step ends in ``.item()``) launch_skew
recovered 0.542 ms of host idle (pool ``gpu_wait``) and host_sync 0.547 ms (pool ``host_work``) of the 0.617 ms the
step's ledger holds there: one stretch of idle -- the late rank's host starting its step after the sync drained the
queue -- that either fix gives back, claimed twice and unsaid.  "If every fix lands" already counted it once (its
group cap); the findings now say they overlap.  Truth by construction: ``synthetic.torchtrace`` ``ddp(late_us=400)``.
"""

from __future__ import annotations


import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.report import render
from tb_gpu_advisor.rules.savings import mark_overlaps
from tests.support.properties import claims_once_problems, report_violations
from tests.support.report_store import session_report


@pytest.fixture(scope="module")
def skew(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    out = tmp_path_factory.mktemp("skew")
    tt.write_run(str(out), "ddp_launch_skew")
    (s,) = discover(str(out / "ddp_launch_skew"))
    return session_report(s)


def _host(rep):  # noqa: ANN001, ANN202
    (h,) = rep.hosts
    return h, {f.rule: f for f in h.findings}


def test_two_pools_of_one_stretch_of_host_idle_say_they_overlap(skew) -> None:  # noqa: ANN001
    h, by = _host(skew)
    held = float(h.breakdown_ms["other"]) + float(h.breakdown_ms["host_compute"])
    host = {r: sum(x["ms"] for x in by[r].saving.recovers if x["group"] == "host") for r in ("launch_skew", "host_sync")}
    assert host["launch_skew"] + host["host_sync"] > held  # truth: more than the step holds, so they share some
    assert by["host_sync"].id in by["launch_skew"].saving.overlaps  # main: [] on both
    assert by["launch_skew"].id in by["host_sync"].saving.overlaps
    assert not claims_once_problems(h.host, h.findings, h.breakdown_ms)
    assert "Overlaps with finding" in render.to_text(skew)
    session = {f.id: f for f in skew.findings}  # the session's list says it too (merge marks again)
    assert by["host_sync"].id in session[by["launch_skew"].id].saving.overlaps


def test_report_violations_catch_a_double_claim_left_unsaid(skew) -> None:  # noqa: ANN001
    """The property runs over every report (``report_violations``; main: not there): with the overlap taken away, the
    double claim is caught."""
    import copy

    rep = copy.deepcopy(skew)
    for f in rep.hosts[0].findings:
        if f.saving:
            f.saving.overlaps = []
    assert any(v.startswith("claims-once: node0") for v in report_violations(rep))
    assert not any(v.startswith("claims-once") for v in report_violations(skew))


def test_claims_within_what_the_step_holds_or_on_two_hosts_are_not_marked(skew) -> None:  # noqa: ANN001
    """Controls: two claims of one group that fit in what the ledger holds share nothing; two hosts' findings never
    share a host's idle."""
    import copy

    h, by = _host(skew)
    a, b = copy.deepcopy(by["launch_skew"]), copy.deepcopy(by["host_sync"])
    big = {**h.breakdown_ms, "other": 10.0}  # room for both claims
    mark_overlaps([a, b], big)
    assert a.saving.overlaps == [] and b.saving.overlaps == []
    b.host = "node1"
    mark_overlaps([a, b], by_host={"node0": h.breakdown_ms, "node1": h.breakdown_ms})
    assert a.saving.overlaps == [] and b.saving.overlaps == []
    b.host = a.host
    mark_overlaps([a, b], by_host={a.host: h.breakdown_ms})
    assert a.saving.overlaps == [b.id]
