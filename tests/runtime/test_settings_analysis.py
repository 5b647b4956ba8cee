"""The analysis takes the user's settings as a value (``UserOptions``) through every path -- in process, a pool of
worker processes, limited child processes, the per-host and session caches -- never from process-wide state, and
keys each cached report by the settings it was made with."""

from __future__ import annotations

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.common.options import UserOptions
from tb_gpu_advisor.common.thresholds import ENV_NET_GBPS
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.runtime import isolation
from tb_gpu_advisor.runtime.cache import ReportCache, session_key
from tb_gpu_advisor.runtime.session import analyze_session_parallel, compute_json, session_report
from tb_gpu_advisor.model.schema import Report


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    """2 nodes x 8 GPUs whose all-reduce runs at 5.2 GB/s of bus bandwidth: slow against the default 25 GB/s per
    GPU between hosts, fine against a 6 GB/s network."""
    logdir = str(tmp_path_factory.mktemp("job"))
    tt.write_run(logdir, "ddp_2x8_slow_link", steps=6)
    (session,) = discover(logdir)
    return session


def _rules(report) -> set[str]:
    return {f.rule for f in report.findings}


def test_one_session_two_networks_two_cache_entries_two_reports(job, tmp_path):
    cache = ReportCache(str(tmp_path / "cache"))
    slow = session_report(job, cache=cache, options=UserOptions(net_gbps=25.0))
    fine = session_report(job, cache=cache, options=UserOptions(net_gbps=6.0))
    assert "comm_bandwidth_low" in _rules(slow.report) and "comm_bandwidth_low" not in _rules(fine.report)
    keys = {session_key(job, options=UserOptions(net_gbps=g)).digest for g in (25.0, 6.0)}
    assert len(keys) == 2 and all(cache.get_dict(session_key(job, options=UserOptions(net_gbps=g))) for g in (25.0, 6.0))
    # asked again, each setting is answered from its own entry
    again = session_report(job, cache=cache, options=UserOptions(net_gbps=6.0))
    assert again.from_cache and _rules(again.report) == _rules(fine.report)
    # the default (no setting) is a third report: its wording names the default it compared with
    default = session_report(job, cache=cache, options=UserOptions())
    assert not default.from_cache and "(default comm.net_GBps)" in next(
        f.summary for f in default.report.findings if f.rule == "comm_bandwidth_low")


def test_worker_processes_and_limited_children_analyse_with_the_callers_options(job, monkeypatch):
    """The environment says 6 GB/s; explicit options (what the tab hands down per request) say the default: every
    path analyses with the options, in this process and in its workers."""
    monkeypatch.setenv(ENV_NET_GBPS, "6")
    explicit = UserOptions()
    pool = analyze_session_parallel(job, jobs=2, options=explicit)
    limited = analyze_session_parallel(job, jobs=2, options=explicit, limits=isolation.Limits(None, 120))
    tab = Report.from_json(compute_json(job, list(job.hosts), progress=lambda *a: None, jobs=2, isolate=True,
                                        options=explicit))
    for report in (pool, limited, tab):
        assert "comm_bandwidth_low" in _rules(report)
    # no options at all: the command line's, as the environment carries them
    assert "comm_bandwidth_low" not in _rules(analyze_session_parallel(job, jobs=2))


def test_a_parameter_count_reaches_a_one_host_analysis_in_its_child(tmp_path):
    tt.write_run(str(tmp_path), "ddp_slow_allreduce", steps=6)
    (session,) = discover(str(tmp_path))
    doc = Report.from_json(compute_json(session, list(session.hosts), progress=lambda *a: None, isolate=True,
                                        options=UserOptions(params=25_000_000)))
    ar = next(f for f in doc.findings if f.rule == "allreduce_slow")
    assert ar.metric.detail["params"] == 25_000_000 and ar.severity == "critical"
