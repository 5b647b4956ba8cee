"""Issue 27 item 9, the words and numbers of the report: each case failed before.

* the 16-bit card led with "100.0% of known (84.0% unknown)" -- a share of the known part read as the whole, and the
  card's value wrapped to three lines at 1024 px: it now leads with the known share, in at most 26 characters;
* CLI text broke paths and commands mid-word ("tb-" / "gpu-advisor", a long path cut anywhere): lines now break at
  spaces only;
* launch_bound's "Top offender: 650 × wrapped_tanh taking 752 us in total" (the whole capture) stood beside per-step
  numbers: it speaks per step now, and the evidence tables that count over the kept steps say so;
* the diff's tables had an unnamed last column.
"""

from __future__ import annotations

import json

import pytest

from tb_gpu_advisor.model.schema import HostReport, Report
from tb_gpu_advisor.report import diff_render, render
from tb_gpu_advisor.report.diff import diff_reports
from tb_gpu_advisor.runtime.advisor import Advisor
from tests.support.paths import DEMO_LOGS
from tests.support.real_checks import REAL_JAX_SET

needs_real = pytest.mark.skipif(not (REAL_JAX_SET / "TRUTH.json").exists(), reason=f"{REAL_JAX_SET} not present")


def _report(logdir, run: str) -> Report:
    advisor = Advisor(str(logdir), cache="off")
    session = next(s for s in advisor.sessions() if s.run == run)
    return advisor.report(session).report


@needs_real
def test_the_16_bit_card_leads_with_the_known_share():
    card = next(m for m in _report(REAL_JAX_SET, "healthy_bf16").headline if m.id == "sixteen_bit_share")
    known = 1.0 - card.detail["unknown_precision_share"]
    assert 0.05 < known < 0.95, known  # an XLA capture: fusions name no dtype
    assert card.display == f"{known * 100:.1f}% known: {card.value * 100:.1f}% 16-bit", card.display
    assert "of known" not in card.display and len(card.display) <= 26


@needs_real
def test_launch_bound_speaks_per_step():
    f = next(f for f in _report(REAL_JAX_SET, "launch_bound_eager").findings if f.rule == "launch_bound")
    assert "Top offender: wrapped_tanh, 50 calls per step taking" in f.summary and "in total" not in f.summary
    assert f.evidence[0].columns[2:4] == ["calls/step", "ms/step"] and f.evidence[0].rows[0][2] == 50


def test_text_lines_break_only_at_spaces():
    path = "/data/shared-cluster/tb-gpu-advisor-runs/experiment-0001/plugins/profile/2026_11_22_20_44_53/" \
           "worker-0.very-long-host-name.xplane.pb"
    r = Report(run="tb-gpu-advisor-run", session="s", hosts=[HostReport(host="w", path=path, size_bytes=1,
               error=f"{path}: cannot read (see tb-gpu-advisor report --debug)")], findings=[], headline=[],
               healthy=False, analyzer_version="t", generated_at="t")
    text = render.to_text(r)
    assert path in text and "tb-gpu-advisor report --debug" in text  # never cut inside
    assert not [ln for ln in text.splitlines() if ln.rstrip().endswith(("tb-", "/data/"))]


def test_every_column_of_the_diff_tables_is_named():
    advisor = Advisor(str(DEMO_LOGS), cache="off")
    sessions = {s.run: s for s in advisor.sessions()}
    d = diff_reports(advisor.report(sessions["input_bound"]).report, advisor.report(sessions["input_bound_fixed"]).report)
    for title, columns, _ in diff_render._sections(d):
        assert all(c.strip() for c in columns), (title, columns)
    md = diff_render.to_markdown(d)
    lines = md.splitlines()
    headers = [ln for ln, below in zip(lines, lines[1:]) if below.startswith("|---")]
    assert len(headers) >= 4 and not [h for h in headers if "|  |" in h]
    assert json.loads(d.to_json())["breakdown"]
