"""docs/rules.md is generated from the rules and thresholds; it must match the code."""


from tb_gpu_advisor import frameworks
from tb_gpu_advisor.rules import REGISTRY
from tb_gpu_advisor.rules.docs import framework_fixes, render
from tests.support.paths import REPO

DOC = REPO / "docs" / "rules.md"


def test_rules_md_is_up_to_date():
    assert DOC.read_text(encoding="utf-8") == render(), \
        "docs/rules.md is stale: python -m tb_gpu_advisor.rules.docs > docs/rules.md"


def test_framework_fix_keys_name_rules():
    """A fix keyed by a misspelt rule id would never be shown: every key is ``<rule>`` or ``<rule>:<variant>``, for
    one kind of job ``...@<tag>``."""
    for fw in frameworks.REGISTRY.values():
        bad = [k for k in fw.fixes if frameworks.fix_rule(k) not in REGISTRY]
        assert not bad, (fw.id, bad)


def test_rules_with_framework_fixes_document_them():
    documented = {rid for rid in REGISTRY if framework_fixes(rid)}
    spelled = {frameworks.fix_rule(k) for fw in frameworks.REGISTRY.values() for k in fw.fixes}
    assert documented == spelled and "input_bound" in documented
