"""Session findings merged across hosts (merge.merge_findings / merge_hosts) and how they render."""

from __future__ import annotations

import copy

import pytest

from tb_gpu_advisor.discover import logdir as discovery
from tb_gpu_advisor.model.schema import Action, Finding, HostReport, Metric, Report, Saving, Table, TimeWindow
from tb_gpu_advisor.report import merge, render
from tb_gpu_advisor.runtime import pipeline

scenarios = pytest.importorskip("synthetic.scenarios")


def _finding(host: str, sev: str = "warning", saving_ms: float | None = 2.0, pct: float = 10.0, value: float = 0.2,
             rule: str = "step_gaps", title: str = "Gaps between steps leave the GPU idle", gpu: int | None = None,
             cols=("after step", "gap ms")) -> Finding:
    return Finding(
        id=f"{rule}:{host}" + (f":{gpu}" if gpu is not None else ""), rule=rule, severity=sev, title=title,
        summary=f"The GPU is idle on {host}.", guide_section="§1.2.1",
        metric=Metric("step_gap_share", "gap share", value, "share", f"{value:.0%}", threshold=0.05),
        saving=None if saving_ms is None else Saving(saving_ms, pct, "the gap shrinks"),
        evidence=[Table("Longest gaps", list(cols), [[1, saving_ms or 0.0], [2, 1.0]])],
        windows=[TimeWindow(host=host, label="gap after step 1", start_ms=1.0, end_ms=2.0, gpu=gpu, step=1)],
        actions=[Action("Run callbacks every N steps.", "model.compile(steps_per_execution=32)"), Action(f"only {host}")],
        host=host, gpu=gpu,
    )


def _host(host: str, findings: list[Finding], steps: int = 6) -> HostReport:
    return HostReport(host=host, path=f"/x/{host}.xplane.pb", size_bytes=1, steps={"count": steps}, findings=findings)


def test_same_rule_on_two_hosts_becomes_one_session_finding():
    w0 = _host("worker0", [_finding("worker0", "warning", 2.0, 10.0, 0.1)], steps=6)
    w1 = _host("worker1", [_finding("worker1", "critical", 4.0, 20.0, 0.3)], steps=2)
    before = copy.deepcopy([w0.findings, w1.findings])
    (f,) = merge.merge_findings([w0, w1])
    assert [w0.findings, w1.findings] == before  # HostReport.findings stay per host
    assert f.id == "step_gaps" and f.host is None and f.hosts == ["worker0", "worker1"] and f.gpu is None
    assert f.severity == "critical"  # the worst
    assert f.summary.startswith("The GPU is idle on worker1.")  # the worst host's numbers, and it says so
    assert "Numbers from worker1; the same finding on worker0" in f.summary
    assert f.metric.value == 0.3 and f.metric.detail["per_host"] == {"worker0": 0.1, "worker1": 0.3}
    # saving: mean weighted by kept steps (6 and 2): (6*2 + 2*4) / 8 = 2.5 ms, (6*10 + 2*20) / 8 = 12.5 %
    assert f.saving.ms_per_step == pytest.approx(2.5) and f.saving.percent_of_step == pytest.approx(12.5)
    assert "weighted by their kept steps" in f.saving.assumption and "worker0 2.00 ms" in f.saving.assumption
    (t,) = f.evidence
    assert t.title == "Longest gaps" and t.columns == ["host", "after step", "gap ms"]
    assert t.rows == [["worker0", 1, 2.0], ["worker0", 2, 1.0], ["worker1", 1, 4.0], ["worker1", 2, 1.0]]
    assert [(w.host, w.label) for w in f.windows] == [("worker0", "gap after step 1"), ("worker1", "gap after step 1")]
    # actions: the worst host's first, then the others' new ones, no duplicates
    assert [a.text for a in f.actions] == ["Run callbacks every N steps.", "only worker1", "only worker0"]


def test_what_is_not_merged():
    a = _finding("worker0", rule="gpu_imbalance", title="GPU0 is oversubscribed", gpu=0)
    b = _finding("worker1", rule="gpu_imbalance", title="GPU100 is oversubscribed", gpu=100)  # another problem
    c = _finding("worker0", rule="input_bound", title="Input-bound")  # one host only
    d = _finding("worker1", saving_ms=None)  # different evidence columns and no saving on one host
    e = _finding("worker0", cols=("step", "ms"))
    out = merge.merge_findings([_host("worker0", [a, c, e]), _host("worker1", [b, d])])
    out = sorted(out, key=lambda f: f.id)  # merge_hosts ranks them afterwards
    assert [f.id for f in out] == ["gpu_imbalance:worker0:0", "gpu_imbalance:worker1:100", "input_bound:worker0", "step_gaps"]
    assert all(f.hosts == [] for f in out[:3]) and out[2].host == "worker0"
    m = out[3]
    assert m.hosts == ["worker0", "worker1"]
    # a host without a saving counts 0 in the mean: (6*2 + 6*0) / 12
    assert m.saving.ms_per_step == pytest.approx(1.0) and "worker1 none" in m.saving.assumption
    assert [t.title for t in m.evidence] == ["Longest gaps (worker0)", "Longest gaps (worker1)"]
    assert m.evidence[0].columns == ["step", "ms"]
    # one host alone: the report is what it was
    assert merge.merge_findings([_host("worker0", [a, c])]) == [a, c]


def test_per_gpu_findings_of_the_same_gpu_merge_and_keep_the_gpu():
    out = merge.merge_findings([_host("w0", [_finding("w0", rule="launch_skew", title="late", gpu=1)]),
                                  _host("w1", [_finding("w1", rule="launch_skew", title="late", gpu=1)])])
    assert len(out) == 1 and out[0].gpu == 1 and out[0].hosts == ["w0", "w1"]


@pytest.fixture(scope="module")
def multi_host_report(tmp_path_factory):
    d = tmp_path_factory.mktemp("mh")
    scenarios.SCENARIOS["multi_host"]().write(d)
    (s,) = discovery.discover(str(d))
    return pipeline.analyze_session(s.run, s.session, s.hosts)


def test_multi_host_session_lists_each_problem_once(multi_host_report):
    rep = multi_host_report
    assert [h.host for h in rep.hosts] == ["worker0", "worker1"]
    rules = [f.rule for f in rep.findings]
    assert len(rules) == len(set(rules)), rules  # no rule twice (was: allreduce_slow and healthy once per host)
    ar = next(f for f in rep.findings if f.rule == "allreduce_slow")
    assert ar.hosts == ["worker0", "worker1"] and ar.host is None and ar.severity == "info"
    assert ar.title == "AllReduce time measured, not judged: give the parameter count to compare"
    per_gpu = ar.evidence[0]
    assert per_gpu.columns[0] == "host" and {r[0] for r in per_gpu.rows} == {"worker0", "worker1"}
    # the hosts keep their own findings
    for h in rep.hosts:
        assert [f.host for f in h.findings if f.rule == "allreduce_slow"] == [h.host]
    # round trip through JSON keeps `hosts`
    back = Report.from_json(rep.to_json())
    assert next(f for f in back.findings if f.rule == "allreduce_slow").hosts == ["worker0", "worker1"]


def test_text_and_markdown_say_on_which_hosts(multi_host_report):
    text = render.to_text(multi_host_report)
    assert "on 2 hosts: worker0, worker1" in text
    title = "AllReduce time measured, not judged: give the parameter count to compare"
    # once as the finding, never once per host; an info note is no problem: the verdict says healthy (issue #27
    # item 8), with the note counted
    verdict = "Healthy: no check of the guide fired (1 note)"
    assert text.count(title) == 1 and f"FINDINGS: {verdict}" in text
    md = render.to_markdown(multi_host_report)
    assert md.count(title) == 2  # summary table row + details
    assert multi_host_report.verdict == verdict  # the tab's words: the same
    row = next(line for line in md.splitlines() if line.startswith("| 1 |"))
    assert row.rstrip().endswith("| on 2 hosts: worker0, worker1 |")
