"""The verdict's "top:" and the findings list are one order (issue #37, "an order is the one stated").

The list is ranked by ``rules.rank`` (what the capture is, then by saving, whatever the grade: issue #36), so a note
that saves more than every warning is listed first.  Main's verdict named the first warning instead:
``compiled_a100_triton`` (a one-pass Triton kernel, A100) read "top: Too few steps in the capture" over a list whose
#1 is the host-bound note saving 75% of the step.  The property (``tests/support/properties.agree_problems``) runs
over every report in ``tests/report/test_properties.py``; here it is shown on the kept real files and on a report
built by hand."""

from __future__ import annotations

import copy

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.schema import Finding, HostReport, Report, Saving
from tb_gpu_advisor.report.verdict import verdict
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import FIXTURES
from tests.support.properties import agree_problems


def _report(name: str) -> Report:
    s = discover(str(FIXTURES / "wild" / name))[0]
    return analyze_session(s.run, s.session, s.hosts)


@pytest.mark.parametrize("name", ["compiled_a100_triton", "mi210_gpu_only"])
def test_the_verdict_names_the_lists_first_finding_on_the_kept_files(name):
    """Both list a note above their one warning (a capture of one pass): the verdict's top is that note, said so."""
    r = _report(name)
    listed = [f for f in r.findings if f.severity != "ok"]
    assert listed[0].severity == "info" and any(f.severity == "warning" for f in listed[1:])  # the case itself
    assert f" — top: a note, {listed[0].title}" in r.verdict
    assert f"{listed[0].saving.percent_of_step:.0f}%" in r.verdict
    assert not agree_problems(r)


def _f(fid: str, severity: str, saving_ms: float | None) -> Finding:
    s = Saving(ms_per_step=saving_ms, percent_of_step=saving_ms * 10, assumption="a") if saving_ms else None
    return Finding(id=fid, rule=fid, severity=severity, title=f"Title {fid}", summary="s", guide_section="§1",
                   saving=s)


def test_the_checker_catches_a_top_that_is_not_first():
    """A verdict naming the first warning under a note listed above it is caught; the list's first passes; a list
    led by a problem keeps the plain words."""
    r = Report(run="r", session="s", hosts=[], findings=[_f("a", "info", 1.2), _f("b", "warning", None)],
               headline=[], healthy=False, analyzer_version="t", generated_at="t")
    wrong = copy.deepcopy(r)
    wrong.verdict = "1 warning, 1 info — top: Title b"
    assert agree_problems(wrong)
    r.hosts = [HostReport(host="h", path="p", size_bytes=1)]  # analysed: the verdict speaks of the findings
    r.verdict = verdict(r)
    assert r.verdict.endswith("— top: a note, Title a (saves ~1.20 ms/step, 12%)") and not agree_problems(r)
    r.findings = [_f("c", "critical", 2.0), _f("a", "info", 1.2)]
    assert verdict(r).endswith("— top: Title c (saves ~2.00 ms/step, 20%)")
