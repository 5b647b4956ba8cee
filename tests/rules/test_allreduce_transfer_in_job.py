"""``allreduce_slow`` judges the job's AllReduce transfer, not a host's wait for another host's GPU (issue #37 class 3,
"each wait to its cause"; h37-left33's left).

A collective's time on a GPU is its transfer plus the wait for the last participant to join: NCCL's kernels spin
until every rank has entered, and every rank leaves together.  The least time any rank of the job spends in it is the
transfer; a host whose GPUs all wait for a straggler on another host measured that wait as its own AllReduce time.
Truth by construction (``synthetic.scenarios.multi_host_slow_gpu``, 2 hosts x 2 GPUs): the slow GPU's collective
time is the transfer, every other GPU's is the transfer plus its wait (``peer_wait_us``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import ast

from synthetic.scenarios import multi_host_slow_gpu
from tb_gpu_advisor import rules
from tb_gpu_advisor.common.thresholds import THRESHOLDS
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.metrics.job import job_view
from tb_gpu_advisor.model.schema import Finding, Metric, Saving
from tb_gpu_advisor.report import merge
from tb_gpu_advisor.report.merge import merge_findings
from tb_gpu_advisor.rules import allreduce_slow
from tests.support.paths import DEMO_LOGS
from tests.support.report_store import session_report


def test_a_hosts_wait_for_another_hosts_straggler_is_not_a_slow_allreduce(tmp_path: Path) -> None:
    sc = multi_host_slow_gpu(gpus_per_host=2)
    transfer_ms = sc.truth.collective_ps[100] / 1e9  # the slow GPU (worker1/GPU0) enters last: it waits for no one
    waits_ms = [v / 1e9 - transfer_ms for g, v in sc.truth.collective_ps.items() if g != 100]
    assert min(waits_ms) > 10 * transfer_ms  # worker0's AllReduce time is nearly all waiting, by construction
    sc.write(tmp_path)
    (s,) = discover(str(tmp_path))
    report = session_report(s)
    found = {f.rule: f for f in report.findings}
    assert "rank_straggler" in found  # the wait has its finding, on the GPU it waits for
    step_ms = report.achievable["step_ms"]
    # the transfer alone is under the rule's share: the wait is not claimed twice
    assert transfer_ms / step_ms < THRESHOLDS["allreduce_slow.share_info"].value
    assert "allreduce_slow" not in found


def _host_finding(ar_ms: float, expected_ms: float | None) -> Finding:
    detail = {"allreduce_ms": ar_ms}
    if expected_ms is not None:
        detail |= {"expected_ms": expected_ms, "params": 1e6, "bandwidth_bytes_per_s": 100e9}
    saving = (Saving(ar_ms - expected_ms, 0.0, "", [{"group": "collectives", "pool": "allreduce",
                                                     "ms": ar_ms - expected_ms}]) if expected_ms else None)
    return Finding("allreduce_slow", "allreduce_slow", "critical", "t", "s", "§2.1",
                   metric=Metric("m", "m", 0.0, "ratio", "", detail=detail), saving=saving, host="worker0")


@pytest.mark.parametrize("expected_ms", [None, 0.1])
def test_the_job_transfer_replaces_the_hosts_time_and_its_wait_is_left_to_the_straggler(expected_ms) -> None:
    """By construction: a host measured 2.0 ms, the job's least is 0.6 ms of a 4 ms step."""
    f = allreduce_slow.in_job(_host_finding(2.0, expected_ms), 0.6, 4.0, "GPU")
    assert f is not None and f.metric is not None
    assert f.metric.detail["allreduce_ms"] == 0.6 and f.metric.detail["host_allreduce_ms"] == 2.0
    assert f.summary.startswith("AllReduce takes 600 us per step")
    assert "1.40 ms more per step" in f.summary  # the wait, pointed to the straggler findings
    if expected_ms:
        assert f.metric.value == pytest.approx(6.0)
        assert f.saving is not None and f.saving.ms_per_step == pytest.approx(0.5)  # transfer - expected
        assert sum(r["ms"] for r in f.saving.recovers) == pytest.approx(0.5)
    else:
        assert f.metric.value == pytest.approx(0.15)


def test_a_host_whose_time_is_the_jobs_transfer_keeps_its_finding() -> None:
    f = _host_finding(0.6, None)
    assert allreduce_slow.in_job(f, 0.6, 4.0, "GPU") is f


def _hosts(path: Path) -> list:
    (s,) = discover(str(path))
    return session_report(s).hosts


def test_the_rules_job_step_judges_the_sessions_findings_once(tmp_path: Path) -> None:
    """The 2x2 straggler job (by construction): worker0's host rule measured its GPUs' wait for worker1/GPU0 as its
    own AllReduce (2.17 ms against the job's 0.15 ms transfer), and worker1's host rule saw its own GPUs unequal.
    The rules' job step over the merged host findings -- not the report's merge -- judges both across the job: the
    AllReduce on the job's transfer (under the rule's share: no finding), the imbalance given way to the straggler
    finding that names the same GPU."""
    sc = multi_host_slow_gpu(gpus_per_host=2)
    sc.write(tmp_path)
    hosts = _hosts(tmp_path)
    found = {(h.host, f.rule): f for h in hosts for f in h.findings}
    transfer_ms = sc.truth.collective_ps[100] / 1e9
    assert found[("worker0", "allreduce_slow")].metric.detail["allreduce_ms"] > 10 * transfer_ms
    assert ("worker1", "gpu_imbalance") in found
    job = job_view(hosts)
    assert job.transfer_ms("AllReduce") == pytest.approx(transfer_ms, rel=0.01)
    session = rules.evaluate_session(job, merge_findings(hosts))
    by_rule = {f.rule: f for f in session}
    assert "allreduce_slow" not in by_rule and "gpu_imbalance" not in by_rule
    assert (by_rule["rank_straggler"].host, by_rule["rank_straggler"].gpu) == ("worker1", 0)


def test_one_hosts_findings_stand_as_the_host_found_them() -> None:
    """Control: one host of 4 GPUs (``demo_logs/pytorch_ddp_straggler``): the host saw every rank, so the job step keeps
    its AllReduce and imbalance findings as they are (the same objects)."""
    hosts = _hosts(DEMO_LOGS / "pytorch_ddp_straggler")
    merged = merge_findings(hosts)
    mine = [f for f in merged if f.rule in ("allreduce_slow", "gpu_imbalance")]
    assert len(mine) == 2
    session = rules.evaluate_session(job_view(hosts), merged)
    assert all(any(g is f for g in session) for f in mine)


def test_the_report_stage_merges_and_judges_nothing() -> None:
    """``report.merge`` imports no rule module: every judgement of a finding (a host's or the job's) is the rules
    stage's, asked through ``rules``' own API."""
    tree = ast.parse(Path(merge.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    imported |= {f"{n.module}.{a.name}" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
                 for a in n.names}  # ``from tb_gpu_advisor.rules import allreduce_slow``
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not {m for m in imported if m.rpartition(".")[2] in rules.RULE_IDS}
