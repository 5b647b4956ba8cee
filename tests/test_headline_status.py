"""Headline cards are graded with the rule thresholds, in the direction that is bad."""

import pytest

from tb_gpu_advisor.rules.headline import card_status
from tb_gpu_advisor.rules.thresholds import T, override


@pytest.mark.parametrize(
    "card, value, want",
    [
        ("input_wait_share", 0.0, "good"),
        ("input_wait_share", T("input_bound.warning"), "warning"),
        ("input_wait_share", T("input_bound.critical"), "critical"),
        ("device_step_share", 0.9, "good"),
        ("device_step_share", 0.4, "warning"),
        ("device_step_share", 0.1, "critical"),
        ("sixteen_bit_share", 0.05, "warning"),
        ("sixteen_bit_share", 0.95, "good"),
        ("launch_wait_share", 0.5, "critical"),
        ("host_op_share", None, "unknown"),
        ("no_such_card", 0.5, "unknown"),
    ],
)
def test_card_status(card, value, want):
    assert card_status(card, value) == want


def test_grading_follows_the_threshold_table():
    with override(**{"input_bound.warning": 0.5, "input_bound.critical": 0.9}):
        assert card_status("input_wait_share", 0.3) == "good"


def test_demo_reports_colour_their_cards():
    from tb_gpu_advisor.analyze import analyze_session
    from tb_gpu_advisor.discovery import discover, find_session
    from pathlib import Path

    demo = Path(__file__).resolve().parents[1] / "demo_logs"
    s = find_session(discover(str(demo)), "input_bound", "2026_01_01_00_00_00")
    report = analyze_session(s.run, s.session, s.hosts)
    status = {m.id: m.status for m in report.headline}
    assert status["input_wait_share"] == "critical" and status["launch_wait_share"] == "good"
