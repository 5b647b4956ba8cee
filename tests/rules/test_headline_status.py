"""One grading (rules/headline.py): numbers graded by one function, cards graded by the rule that owns them.

The consistency tests walk every demo report and every real H100 capture and
fail on any card/finding disagreement (issue #12, deliverable 1) or on savings
that do not add up (deliverable 3, tests/support/savings_checks.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tb_gpu_advisor.common.thresholds import T, override
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.schema import Finding, Metric
from tb_gpu_advisor.rules.headline import disagreements, grade, grade_card, value_status
from tests.support.paths import REPO
from tests.support.contradictions import finding_problems, report_problems
from tests.support.savings_checks import report_savings_problems
from tests.support.report_store import session_report

ROOT = REPO
REAL = ROOT.parent / "shared" / "profiles" / "real-h100-jax"
#: the other real sets the contradiction walk reads (PyTorch on the H100, the tutorial's V100 samples)
OTHER_REAL = [ROOT.parent / "shared" / "profiles" / s for s in ("real-h100-torch", "wild-torch")]


@pytest.mark.parametrize(
    "card, value, want",
    [
        ("input_wait_share", 0.0, "good"),
        ("input_wait_share", T("input_bound.warning"), "warning"),  # at the threshold: fires, as the rule does
        ("input_wait_share", T("input_bound.critical"), "critical"),
        ("device_step_share", 0.9, "good"),
        ("device_step_share", T("headline.device_step_share.warning"), "warning"),  # "below" side inclusive too
        ("device_step_share", 0.1, "critical"),
        ("sixteen_bit_share", T("mixed_precision_off.warning"), "warning"),
        ("sixteen_bit_share", 0.95, "good"),
        ("launch_wait_share", 0.5, "critical"),
        ("host_op_share", None, "unknown"),
        ("no_such_card", 0.5, "unknown"),
    ],
)
def test_value_status_uses_the_rule_comparison(card, value, want):
    assert value_status(card, value) == want


def test_rules_and_cards_compare_alike_at_the_threshold():
    """The card once graded with `<` while the rule fired with `<=`: both now call grade()."""
    t = T("mixed_precision_off.warning")
    assert grade(t, "mixed_precision_off.warning") == "warning" and value_status("sixteen_bit_share", t) == "warning"
    with override(**{"input_bound.warning": 0.5, "input_bound.critical": 0.9}):
        assert value_status("input_wait_share", 0.3) == "good"


def _card(id_: str, value: float) -> Metric:
    return Metric(id_, id_, value, "share", f"{value:.1%}", "lower")


def _finding(rule: str, severity: str, display: str = "68.4%") -> Finding:
    return Finding(id=f"{rule}:h", rule=rule, severity=severity, title="t", summary="s", guide_section="§",
                   metric=Metric("m", "Host op time share of step", 0.684, "share", display, "lower"))


def test_owned_card_takes_its_findings_severity_and_names_it():
    card = grade_card(_card("host_op_share", 0.087), [_finding("host_op_placement", "critical")], True)
    assert card.status == "critical"
    assert card.detail["graded_by"]["rule"] == "host_op_placement" and card.detail["graded_by"]["display"] == "68.4%"


def test_owned_card_without_finding_is_grey_past_its_threshold_and_says_why_the_rule_held_back():
    """Issue #27 item 3: an MFU of 8.5% under its printed 30% was a green "good": past its own threshold a card the
    check held back on is not graded (grey), with the reason -- never green beside its threshold."""
    card = grade_card(_card("sixteen_bit_share", 0.0), [], True, "MatMul/Conv kernels are 2% of the kernel time")
    assert card.status == "unknown" and "2%" in card.detail["not_flagged"]
    mfu = grade_card(_card("mfu", 0.085), [], True, "the GEMMs reach their roofline")
    assert mfu.status == "unknown" and mfu.detail["not_flagged"]
    plain = grade_card(_card("sixteen_bit_share", 0.9), [], True)
    assert plain.status == "good" and "not_flagged" not in plain.detail


def test_no_gpu_cards_are_not_graded():
    card = grade_card(_card("host_op_share", 1.0), [], False)
    assert card.status == "unknown" and "no GPU activity" in card.detail["not_graded"]


def test_disagreements_sees_each_contradiction():
    red = _card("host_op_share", 0.9)
    red.status = "critical"
    assert disagreements([red], []) and disagreements([red], [_finding("host_op_placement", "warning")])
    assert not disagreements([red], [_finding("host_op_placement", "critical")])
    dev = _card("device_step_share", 0.1)
    dev.status = "critical"
    healthy = Finding(id="healthy:h", rule="healthy", severity="ok", title="t", summary="s", guide_section="§")
    assert disagreements([dev], [healthy])  # red card beside a healthy verdict
    assert disagreements([], [healthy, _finding("input_bound", "warning")])


def _sessions(logdir: Path):
    return discover(str(logdir))


def _check(report) -> list[str]:
    """Cards vs findings, and savings that add up (tests/support/savings_checks.py)."""
    problems = [f"session: {p}" for p in disagreements(report.headline, report.findings)]
    problems += report_savings_problems(report)
    problems += report_problems(report)  # findings against their own numbers, the run, the GPU (issue #21 item 3)
    for h in report.hosts:
        if h.error is None:
            problems += [f"{h.host}: {p}" for p in disagreements(h.headline, h.findings)]
    if report.healthy:
        problems += [f"healthy report with a {c.status} card {c.id}" for c in report.headline
                     if c.status in ("warning", "critical")]
    return problems


def test_demo_reports_never_contradict_themselves():
    checked = 0
    for s in _sessions(ROOT / "demo_logs"):
        report = session_report(s)
        assert not _check(report), (s.run, _check(report))
        checked += 1
    assert checked >= 9


def test_real_h100_reports_never_contradict_themselves():
    if not REAL.is_dir():
        pytest.skip(f"real captures not here ({REAL})")
    checked = 0
    for s in _sessions(REAL):
        report = session_report(s)
        assert not _check(report), (s.run, _check(report))
        checked += 1
    assert checked == 11


def test_other_real_reports_never_contradict_themselves():
    """The PyTorch H100 set and the tutorial's V100 samples, walked like the JAX set (issue #21 item 3)."""
    sets = [d for d in OTHER_REAL if d.is_dir()]
    if not sets:
        pytest.skip("real PyTorch sets not here")
    checked = 0
    for d in sets:
        for s in _sessions(d):
            report = session_report(s)
            assert not _check(report), (s.run, _check(report))
            checked += 1
    assert checked >= 5


def test_contradiction_checker_sees_each_pattern():
    """The checker fails on each contradiction it was grown from (it must be able to fail)."""
    from tb_gpu_advisor.frameworks import pytorch
    from tb_gpu_advisor.model.schema import GpuSummary, HostReport

    host = HostReport(host="h", path="p", size_bytes=1, capture={"framework": "pytorch", "applied": {
        "compiled": "torch.compile (Inductor's Triton kernels in the trace)"}},
        gpus=[GpuSummary(gpu=0, name="NVIDIA H100 80GB HBM3", compute_capability="9.0", step_ms=1.0, busy_share=1.0,
                         kernel_count=1)])
    bad = [
        Finding(id="a", rule="launch_bound", severity="info", title="t", summary="s", guide_section="§",
                actions=[pytorch.COMPILE]),
        Finding(id="b", rule="launch_bound", severity="info", title="t", guide_section="§",
                summary="~1.2 us each -- about the 20-40 us launch latency itself"),
        Finding(id="c", rule="xla_not_used", severity="info", title="t", summary="1 recurring chains", guide_section="§"),
        Finding(id="d", rule="tensor_core_unused", severity="warning", title="t", guide_section="§",
                summary="enable mixed precision (fp16) so they can use Tensor Cores"),
        Finding(id="e", rule="launch_bound", severity="info", title="Launch-bound: many small kernels",
                summary="... not small kernels: worth a look", guide_section="§"),
    ]
    for f in bad:
        assert finding_problems(f, host), f.id
    ok = Finding(id="ok", rule="launch_bound", severity="info", title="t", guide_section="§",
                 summary="~34.8 us each -- about the 20-40 us launch latency itself; 2 recurring chains",
                 actions=[pytorch.CUDA_GRAPHS])
    assert finding_problems(ok, host) == []


def test_demo_cards_follow_their_findings():
    from tb_gpu_advisor.discover.logdir import find_session

    s = find_session(discover(str(ROOT / "demo_logs")), "host_placement", "2026_01_01_00_00_00")
    report = session_report(s)
    cards = {m.id: m for m in report.headline}
    top = next(f for f in report.findings if f.rule == "host_op_placement")
    assert cards["host_op_share"].status == top.severity == "critical"
    assert cards["host_op_share"].detail["graded_by"]["display"] == top.metric.display


def test_overlapping_savings_count_once():
    """fp32_no_tensor_cores' two findings speed up the same kernels: the achievable step counts their shared time
    once.  launch_bound and xla_not_used claim different time -- the launch gaps, and the kernel time fusing the
    chains saves -- so both count in full and neither names the other as an overlap."""
    from tb_gpu_advisor.discover.logdir import find_session

    s = find_session(discover(str(ROOT / "demo_logs")), "launch_bound", "2026_01_01_00_00_00")
    report = session_report(s)
    fs = {f.rule: f for f in report.findings if f.rule in ("launch_bound", "xla_not_used")}
    assert set(fs) == {"launch_bound", "xla_not_used"}
    assert report.achievable["recoverable_ms"] == pytest.approx(sum(f.saving.ms_per_step for f in fs.values()), abs=0.01)
    assert not any(o.startswith("launch_bound") for o in fs["xla_not_used"].saving.overlaps or [])
    for run, pair in (("fp32_no_tensor_cores", {"mixed_precision_off", "tensor_core_unused"}),):
        s = find_session(discover(str(ROOT / "demo_logs")), run, "2026_01_01_00_00_00")
        report = session_report(s)
        a = report.achievable
        fs = {f.rule: f for f in report.findings if f.rule in pair}
        assert set(fs) == pair
        claimed = sum(f.saving.ms_per_step for f in fs.values())
        assert a["recoverable_ms"] < claimed and a["achievable_step_ms"] > a["step_ms"] - claimed
        assert a["achievable_step_ms"] >= a["floor_ms"] > 0
        for f in fs.values():
            assert f.saving.overlaps and {o.split(":")[0] for o in f.saving.overlaps} & (pair - {f.rule})
