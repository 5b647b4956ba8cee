"""Issue #36 deliverable 1: one ledger per step and GPU, read by every screen and never recomputed.

The ledger is the step breakdown (``metrics/breakdown.py``): ``HostReport.breakdown_ms`` (the host's mean step),
``GpuSummary.breakdown`` (each GPU's), ``StepRow.breakdown`` (each step of each GPU, and the host's mean row).  The
screens that show time read it:

* the cards: the device step share, the launch wait and the input wait are the ledger's categories over the step;
* the step timeline (``/window``): over one step of one GPU, each idle category's time is that step's row -- even
  where the drawing leaves out the shortest runs (the real Nsight FSDP window paints 4,627 idle runs; 2,000 are drawn);
* the MCP summary: its step and achievable step are the report's own.

``tests/support/properties.py`` checks the first over every report (``ledger``, ``one-value``); the timeline needs the
trace read again, so it is checked here on the demo logs, two real PyTorch traces of other people's jobs (``tests/fixtures/wild``) and, when
present, ``../shared``'s FSDP window, whose idle runs the drawing cuts.
"""

from __future__ import annotations

import json

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.report.timeline import IDLE_CATEGORIES
from tb_gpu_advisor.runtime.pipeline import analyze_session, host_timelines
from tb_gpu_advisor.serve.mcp_server import summary_json
from tests.support.paths import DEMO_LOGS, SHARED_PROFILES
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions

#: agreement to the row's rounding (StepRow values are rounded to 1e-6 ms; sums of a few hundred runs add that up)
_TOL_MS = 2e-3


def _sessions():
    out = [(s, "demo") for s in discover(str(DEMO_LOGS)) if s.run in {"input_bound", "launch_bound",
                                                                        "pytorch_ddp_straggler", "multi_host"}]
    out += [(s, "wild") for s in wild_sessions() if s.run in {"torchrec_a100_stalls", "hta_v100"}]
    fsdp = SHARED_PROFILES / "nsys"
    if fsdp.is_dir():
        out += [(s, "shared") for s in discover(str(fsdp)) if s.run == "h100_fsdp_window"]
    return out


SESSIONS = _sessions()


@pytest.mark.parametrize("session,where", SESSIONS, ids=[f"{w}/{s.run}" for s, w in SESSIONS])
def test_the_timeline_of_a_step_is_that_steps_row_of_the_ledger(session, where):
    report = analyze_session(session.run, session.session, session.hosts)
    checked = 0
    for hf, h in zip(session.hosts, report.hosts):
        rows = [r for r in h.step_rows if r.gpu is not None][:3]
        if h.error or not rows:
            continue
        for row, tl in zip(rows, host_timelines(hf, [(r.start_ms, r.start_ms + r.step_ms) for r in rows])):
            got = next((g["ms"] for g in tl["idle_ms"] if g["gpu"] == row.gpu), {})
            for c in IDLE_CATEGORIES:
                want = row.breakdown.get(c) or 0.0
                assert got.get(c, 0.0) == pytest.approx(want, abs=_TOL_MS), (h.host, row.step, row.gpu, c, got)
            checked += 1
    if not checked:
        pytest.skip(f"{session.run}: no GPU step rows")


def test_the_timeline_totals_count_the_runs_the_drawing_leaves_out():
    """On a window of more idle runs than are drawn, the drawn runs fall short of the ledger and the totals do not:
    the reason the tab's legend reads the totals (the real FSDP window; a generated one otherwise)."""
    fsdp = [s for s, w in SESSIONS if w == "shared"]
    if not fsdp:
        pytest.skip(f"the real FSDP window (../shared/profiles/nsys) is not here ({SHARED_PROFILES})")
    s = fsdp[0]
    h = session_report(s).hosts[0]
    row = next(r for r in h.step_rows if r.gpu is not None)
    tl = host_timelines(s.hosts[0], [(row.start_ms, row.start_ms + row.step_ms)])[0]
    drawn = sum(r["end_ms"] - r["start_ms"] for r in tl["idle"] if r["gpu"] == row.gpu)
    total = sum(next(g["ms"] for g in tl["idle_ms"] if g["gpu"] == row.gpu).values())
    want = sum(row.breakdown.get(c) or 0.0 for c in IDLE_CATEGORIES)
    assert "not drawn" in tl["note"]
    assert drawn < want - 0.1 and total == pytest.approx(want, abs=_TOL_MS)


def _demo_reports():
    return [session_report(s) for s in discover(str(DEMO_LOGS))]


@pytest.fixture(scope="module")
def demo_reports():
    return _demo_reports()


def test_the_cards_are_the_ledgers_categories_over_the_step(demo_reports):
    pairs = {"device_step_share": "device_compute", "launch_wait_share": "launch_wait", "input_wait_share": "input_wait"}
    seen = 0
    for r in demo_reports:
        for h in r.hosts:
            step = sum(v or 0.0 for v in (h.breakdown_ms or {}).values())
            for c in h.headline or []:
                if c.id in pairs and c.value is not None and step:
                    assert c.value == pytest.approx((h.breakdown_ms.get(pairs[c.id]) or 0.0) / step, abs=1e-3), (r.run, c.id)
                    ms = (c.detail or {}).get("ms_per_step")
                    if ms is not None:
                        assert ms == pytest.approx(h.breakdown_ms.get(pairs[c.id]) or 0.0, abs=1e-3), (r.run, c.id)
                    seen += 1
    assert seen >= 20, seen


def test_the_mcp_summary_reads_the_reports_step_and_savings(demo_reports):
    for r in demo_reports:
        body = json.loads(summary_json(r, top=50))
        a = r.achievable or {}
        assert body["step_ms"] == a.get("step_ms") and body["achievable_step_ms"] == a.get("achievable_step_ms")
        mine = {f.id: f for f in r.findings}
        for f in body["findings"]:
            s = mine[f["id"]].saving
            assert (f["saving"] is None) == (s is None)
            if s is not None:
                assert f["saving"]["ms_per_step"] == pytest.approx(s.ms_per_step, abs=1e-4)
