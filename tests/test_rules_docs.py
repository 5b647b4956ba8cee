"""docs/rules.md is generated from the rules and thresholds; it must match the code."""

from pathlib import Path

from tb_gpu_advisor.rules import REGISTRY
from tb_gpu_advisor.rules.docs import KNOBS, render

DOC = Path(__file__).resolve().parents[1] / "docs" / "rules.md"


def test_rules_md_is_up_to_date():
    assert DOC.read_text(encoding="utf-8") == render(), \
        "docs/rules.md is stale: python -m tb_gpu_advisor.rules.docs > docs/rules.md"


def test_every_rule_has_documented_knobs():
    assert set(KNOBS) == set(REGISTRY)
