"""Every corpus scenario through the whole pipeline: the intended finding, its severity, its rank, and a golden report.

Golden files ``tests/golden/<scenario>.json`` hold the stable parts of the
report (rule ids, severities, order, rounded key numbers).  After an
intended change (a retuned threshold, a better metric) regenerate them::

    UPDATE_GOLDEN=1 python -m pytest tests/rules/test_rules_scenarios.py

and review the diff (``git diff tests/golden``) before committing.
"""

from __future__ import annotations

import json
import os

import pytest

from tb_gpu_advisor.discover import logdir as discovery
from tb_gpu_advisor.model.schema import SEVERITY_ORDER
from tb_gpu_advisor.runtime import pipeline
from tests.support.paths import GOLDEN

scenarios = pytest.importorskip("synthetic.scenarios")
NAMES = sorted(scenarios.SCENARIOS)
GOLDEN = GOLDEN
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"

#: Scenarios whose intended finding needs a metrics fix (strict xfail: an XPASS tells you to remove the entry).
KNOWN_METRICS_GAPS: dict[str, str] = {}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Scenario name -> (truth, Report), generated and analysed once per module."""
    cache: dict = {}

    def get(name):
        if name not in cache:
            sc = scenarios.SCENARIOS[name]()
            logdir = tmp_path_factory.mktemp(name)
            sc.write(logdir)
            (session,) = discovery.discover(str(logdir))
            cache[name] = (sc.truth, pipeline.analyze_session(session.run, session.session, session.hosts))
        return cache[name]

    return get


@pytest.mark.parametrize("name", NAMES)
def test_savings_add_up(name, reports):
    """Each saving names what it recovers, overlaps are stated, the achievable step stays within [device work, step]."""
    from tests.support.savings_checks import report_savings_problems

    _, report = reports(name)
    assert not report_savings_problems(report)


def _xfail_known(name, request):
    if name in KNOWN_METRICS_GAPS:
        request.applymarker(pytest.mark.xfail(reason=KNOWN_METRICS_GAPS[name], strict=True))


@pytest.mark.parametrize("name", NAMES)
def test_intended_findings_fire_at_intended_severity(name, reports, request):
    _xfail_known(name, request)
    truth, report = reports(name)
    assert not [h.error for h in report.hosts if h.error]
    got: dict[str, str] = {}
    for f in report.findings:  # strongest severity per rule over hosts/GPUs
        if f.rule not in got or SEVERITY_ORDER[f.severity] < SEVERITY_ORDER[got[f.rule]]:
            got[f.rule] = f.severity
    for rule, sev in truth.findings.items():
        assert got.get(rule) == sev, f"{rule}: expected {sev}, got {got.get(rule)}; all: {got}"
    unexpected = {r: s for r, s in got.items() if s in ("critical", "warning") and r not in truth.findings}
    assert not unexpected, f"unexpected findings {unexpected}"


@pytest.mark.parametrize("name", NAMES)
def test_dominant_problem_ranks_first(name, reports, request):
    _xfail_known(name, request)
    truth, report = reports(name)
    if truth.dominant is None:
        assert report.healthy
        assert all(f.severity in ("info", "ok") for f in report.findings)
        return
    assert report.findings[0].rule == truth.dominant, [f.rule for f in report.findings]
    assert not report.healthy


@pytest.mark.parametrize("name", NAMES)
def test_findings_carry_numbers_savings_and_actions(name, reports):
    _, report = reports(name)
    for f in report.findings:
        if f.severity in ("critical", "warning"):
            assert any(c.isdigit() for c in f.summary), f.id
            assert f.metric is not None and f.metric.threshold is not None, f.id
            assert f.actions and any(a.snippet for a in f.actions), f.id
            if f.saving is not None:
                assert f.saving.assumption and 0 <= f.saving.percent_of_step <= 100
    report.to_json()  # strict JSON (no NaN)


def stable(report) -> dict:
    """The parts of a report that must not drift: ids, severities, order, rounded key numbers."""
    return {
        "healthy": report.healthy,
        "findings": [
            {
                "id": f.id,
                "rule": f.rule,
                "severity": f.severity,
                "guide_section": f.guide_section,
                "metric": None if f.metric is None else {"id": f.metric.id, "value": _round(f.metric.value, 2),
                                                         "threshold": f.metric.threshold},
                "saving_percent": None if f.saving is None else round(f.saving.percent_of_step),
                "gpu": f.gpu,
                **({"hosts": f.hosts} if f.hosts else {}),  # merged over hosts (merge.merge_findings)
            }
            for f in report.findings
        ],
    }


def _round(v, nd):
    return None if v is None else round(float(v), nd)


@pytest.mark.parametrize("name", NAMES)
def test_golden_report(name, reports):
    _, report = reports(name)
    got = stable(report)
    path = GOLDEN / f"{name}.json"
    if UPDATE or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(encoding="utf-8", data=json.dumps(got, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
        if not UPDATE:
            pytest.fail(f"golden file {path.name} was missing and has been written; review and commit it")
        return
    want = json.loads(path.read_text(encoding="utf-8"))
    assert got == want, (f"report of {name} differs from {path}; if the change is intended run "
                         f"UPDATE_GOLDEN=1 python -m pytest tests/rules/test_rules_scenarios.py and review git diff")
