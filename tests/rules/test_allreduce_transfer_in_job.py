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

from synthetic.scenarios import multi_host_slow_gpu
from tb_gpu_advisor.common.thresholds import THRESHOLDS
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.schema import Finding, Metric, Saving
from tb_gpu_advisor.rules import allreduce_slow
from tb_gpu_advisor.runtime.pipeline import analyze_session


def test_a_hosts_wait_for_another_hosts_straggler_is_not_a_slow_allreduce(tmp_path: Path) -> None:
    sc = multi_host_slow_gpu(gpus_per_host=2)
    transfer_ms = sc.truth.collective_ps[100] / 1e9  # the slow GPU (worker1/GPU0) enters last: it waits for no one
    waits_ms = [v / 1e9 - transfer_ms for g, v in sc.truth.collective_ps.items() if g != 100]
    assert min(waits_ms) > 10 * transfer_ms  # worker0's AllReduce time is nearly all waiting, by construction
    sc.write(tmp_path)
    (s,) = discover(str(tmp_path))
    report = analyze_session(s.run, s.session, s.hosts)
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
