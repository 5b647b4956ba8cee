"""``GpuSummary.calls`` is bounded (h37-left54): columns, not one JSON row per call, and past a cap only a count.

Before, a job of many layers x FSDP carried one ``[group, step, bytes, ms]`` row per collective call per GPU: 500
layers (1,000 calls a step) over 8 kept steps made 16,000 rows, 386 kB -- 80% of its two host reports.  Now a GPU
carries at most ``CALL_ROWS_CAP`` calls of a type, as columns (runs of one group and step, then bytes and ms); past
it the session reads the least host's total and says the cap cut the calls.  Matching stays exact where the calls
are carried (tests/metrics/test_collectives_across_hosts.py, on the real ``wild/dlrm_v100`` too).

Truth by construction: ``synthetic.torchtrace._fsdp`` over ``FSDP_LAYERS`` layers, 2 machines of 1 GPU each: each
layer all-gathers its parameters and reduce-scatters its gradients once a step.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.metrics.job import job_view
from tb_gpu_advisor.model import callrows
from tb_gpu_advisor.runtime.pipeline import analyze_session


def _fsdp_job(tmp_path: Path, layers: int, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN202
    monkeypatch.setattr(tt, "FSDP_LAYERS", layers)
    sc = tt.Scenario(2, tt._each(tt._fsdp(prefetch=True)), [], [], "2 hosts, FSDP", nodes=2)
    tt.write_run(str(tmp_path), sc, steps=10, run="job")
    (s,) = discover(str(tmp_path / "job"))
    assert len(s.hosts) == 2
    rep = analyze_session(s.run, s.session, s.hosts)
    return rep, job_view(rep.hosts)


def test_thousands_of_calls_a_step_are_cut_to_a_count_and_said(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    rep, job = _fsdp_job(tmp_path, 500, monkeypatch)
    kept = rep.hosts[0].steps["count"]
    for h in rep.hosts:
        for g in h.gpus:
            for typ in ("AllGather", "ReduceScatter"):
                c = g.calls[typ]
                assert c["count"] == 500 * kept > callrows.CALL_ROWS_CAP  # truth: one call per layer per step
                assert callrows.calls_cut(c) and "ms" not in c
            assert len(json.dumps(g.calls)) < 200  # main: 193 kB of rows per GPU
    assert job.matched_transfer_ms("AllGather") is None
    words = job.transfer_matching("AllGather")
    assert f"{500 * kept:,} calls" in words and f"{callrows.CALL_ROWS_CAP:,}" in words


def test_calls_under_the_cap_are_columns_that_read_back_as_their_rows(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """Control: under the cap every call is carried, a column entry per call, and reads back as the rows it was made
    of, so the matching across host files is the same; the columns take at most 2/3 of the rows' bytes."""
    monkeypatch.setattr(callrows, "CALL_ROWS_CAP", 10**6)
    monkeypatch.setattr("tb_gpu_advisor.report.build.call_columns",
                        lambda rows, steps, times=None: callrows.call_columns(rows, steps, cap=10**6, times=times))
    rep, job = _fsdp_job(tmp_path, 100, monkeypatch)
    kept = rep.hosts[0].steps["count"]
    for h in rep.hosts:
        for g in h.gpus:
            c = g.calls["AllGather"]
            rows = callrows.call_rows(c)
            assert len(rows) == c["count"] == 100 * kept
            assert len({(grp, st) for grp, st, _, _ in rows}) == kept  # one group: a run per step
            own = {k: v for k, v in c.items() if k not in ("arrive", "ready", "at")}  # the rows' own columns
            assert len(json.dumps(own)) < 2 / 3 * len(json.dumps([list(r) for r in rows]))
            assert len(callrows.call_times(c)) == len(rows)  # each call's times beside it (a89)
    assert job.matched_transfer_ms("AllGather") is not None
    assert job.transfer_matching("AllGather") is None


def test_columns_that_disagree_with_their_count_are_not_read() -> None:
    """A damaged or foreign cache entry is never matched: columns that disagree with their count read as none."""
    c = callrows.call_columns([("", 1, 8, 0.1), ("", 1, 8, 0.2), ("pg 1", 2, 4, 0.3)], 2)
    assert callrows.call_rows(c) == [("", 1, 8, 0.1), ("", 1, 8, 0.2), ("pg 1", 2, 4, 0.3)]
    assert callrows.call_rows({**c, "ms": c["ms"][:-1]}) is None
    assert callrows.call_rows({**c, "count": 4}) is None
