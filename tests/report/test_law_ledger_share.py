"""The law ``one-value`` for a finding that grades one category of the step's ledger (h37-handoff32): the handoff
finding grades and prints the ledger's ``stream_handoff``, and the law notices a finding that says another value.

Generator: :func:`synthetic.torchtrace.write_stream_handoff` (the GRU step of h37-survey66: 28 us a step at the
handoff from stream 13 to stream 7), truth by construction."""

from __future__ import annotations

import dataclasses
import os
from types import SimpleNamespace

from synthetic.torchtrace import write_stream_handoff
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.properties import ledger_share_problems, report_violations


def _report(tmp_path):
    path = tmp_path / "handoff.pt.trace.json"
    write_stream_handoff(str(path))
    hosts = [SimpleNamespace(host="h0", path=str(path), format="kineto", size=os.path.getsize(path))]
    return analyze_session("w", "s", hosts)


def test_the_handoff_finding_holds_the_law(tmp_path):
    rep = _report(tmp_path)
    (h,) = rep.hosts
    assert h.breakdown_ms["stream_handoff"] > 0
    assert any(f.metric is not None and f.metric.id == "handoff_share" for f in h.findings)
    assert ledger_share_problems(h) == []
    assert not [v for v in report_violations(rep) if "stream_handoff" in v or "handoff" in v]


def test_the_law_notices_a_finding_that_grades_another_value(tmp_path):
    rep = _report(tmp_path)
    (h,) = rep.hosts
    (f,) = [f for f in h.findings if f.metric is not None and f.metric.id == "handoff_share"]
    # the finding as main's held-work words read it: the held time's share, not the ledger's category
    bad = dataclasses.replace(f, metric=dataclasses.replace(f.metric, value=f.metric.value + 0.05),
                              summary=f.summary.replace("28 us of each", "33 us of each"))
    h.findings = [bad if g is f else g for g in h.findings]
    problems = ledger_share_problems(h)
    assert any("grades" in p and "stream_handoff" in p for p in problems), problems
    assert any("says 33 us of each" in p for p in problems), problems
