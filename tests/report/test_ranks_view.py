"""The ranks view of the text and markdown reports (issue #19): every rank up to 64, beyond that the distribution
of each column with the ranks at its extremes named."""

from __future__ import annotations

import pytest

from tb_gpu_advisor.model.schema import Report, Table
from tb_gpu_advisor.report.render import RANKS_LISTED, ranks_view, to_markdown, to_text
from tb_gpu_advisor.rules._job import RANK_COLUMNS
from tests.support.report_store import session_report


def _report(n: int) -> Report:
    rows = [[f"node{k // 8}/GPU{k % 8}", 10.0, 6.0 + (3.0 if k == 77 else 0.0), 2.0 - (1.5 if k == 77 else 0.0), 2.0,
             8.0 + (3.0 if k == 77 else 0.0)] for k in range(n)]
    return Report(run="r", session="s", hosts=[], findings=[], headline=[], healthy=True, analyzer_version="x",
                  generated_at="t", ranks=Table("Ranks", list(RANK_COLUMNS), rows))


def test_up_to_64_ranks_are_listed():
    title, cols, rows = ranks_view(_report(RANKS_LISTED))
    assert len(rows) == RANKS_LISTED and cols == RANK_COLUMNS and title.startswith(f"Ranks ({RANKS_LISTED}")


def test_a_large_job_is_a_distribution_with_the_outliers_named():
    title, cols, rows = ranks_view(_report(1024))
    assert "1024" in title and cols[:5] == ["", "min", "median", "p90", "max"] and len(rows) == len(RANK_COLUMNS) - 1
    comm = next(r for r in rows if r[0] == "exposed comm ms")
    assert comm[1] == "0.50" and float(comm[4]) == 2.0 and "node9/GPU5 (min)" in comm[5]  # rank 77 waits least
    for render in (to_text, to_markdown):
        out = render(_report(1024))
        assert "node9/GPU5" in out and out.count("node1/GPU0") == 0  # no row per rank


def test_one_rank_has_no_ranks_view():
    assert ranks_view(_report(1)) is None


def test_the_job_collectives_table_is_in_every_rendering(tmp_path):
    """Issue #19's per-collective table: type, calls, bytes, time, exposed, transfer, bus bandwidth and exposed
    share, once per session, in JSON, text and markdown."""
    from synthetic import torchtrace as tt
    from tb_gpu_advisor.discover.logdir import discover
    
    tt.write_run(str(tmp_path), "moe_alltoall_skew", steps=6)
    (s,) = discover(str(tmp_path))
    rep = session_report(s)
    t = rep.collectives
    assert t.columns == ["collective", "calls", "bytes per call", "ms", "exposed ms", "transfer ms", "bus GB/s",
                         "exposed share"]
    (row,) = t.rows
    assert row[0] == "AllToAll" and row[2] == tt.MOE_BASE_NELEMS * 2  # the median rank's message
    assert row[5] == pytest.approx(tt.MOE_A2A_US / 1000, rel=0.05)
    for text in (to_text(rep), to_markdown(rep)):
        assert "Collectives per step (median rank)" in text and "AllToAll" in text
    assert rep.to_dict()["collectives"]["rows"][0][0] == "AllToAll"


@pytest.mark.parametrize("run", ["ideal", "input_bound", "launch_bound"])
def test_the_verdict_is_the_same_words_in_json_text_and_markdown(run):
    """Issue #21 item 2: one verdict line -- healthy, or the findings by severity with the top one's title and
    saving -- computed once (Report.verdict, which the tab shows) and printed as it is by the CLI."""
    from tb_gpu_advisor.discover.logdir import discover, find_session
    from tests.support.paths import REPO

    s = find_session(discover(str(REPO / "demo_logs")), run, "2026_01_01_00_00_00")
    rep = session_report(s)
    v = rep.verdict
    assert v and f"FINDINGS: {v}" in to_text(rep)
    assert f"**{v}**" in to_markdown(rep).replace("\\", "")  # markdown escapes, nothing else
    assert Report.from_json(rep.to_json()).verdict == v
    if rep.healthy:
        assert v == "Healthy: no check of the guide fired"
    else:
        top = next(f for f in rep.findings if f.severity in ("critical", "warning"))
        assert f"top: {top.title}" in v and f"{top.saving.percent_of_step:.0f}%" in v
