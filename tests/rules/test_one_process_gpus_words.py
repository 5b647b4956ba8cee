"""A job whose GPUs are driven by one process per host (TensorFlow's MultiWorkerMirroredStrategy, a JAX process's
devices) is counted in GPUs, not ranks (``JobView.unit``, h37-left20); the job rules' sentences, titles, tables,
assumptions and metrics now ask it too (h37-left26).

Truth by construction (``synthetic.tfcapture``): two hosts, one process each driving two GPUs; GPU0 of worker1
runs three more dense layers each step, and worker0's GPUs wait for worker1 in their AllReduce (its NCCL kernels
spin the extra time, as a real collective does).  worker1 is then the slow node and GPU0 its heavy GPU: the job's
findings name them, and no word of the report calls a GPU a rank."""

from __future__ import annotations

import re

import pytest

from synthetic.scenarios import Capture, K, Scenario, _dense_layers, _replica_ops
from synthetic.tfcapture import A100
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.schema import Finding, GpuSummary, HostReport, Report, Table
from tests.support.contradictions import context_problems
from tests.support.report_store import session_report

EXTRA_WAIT_US = 1900.0  # worker0's wait in the AllReduce for worker1's heavy GPU, ~ its three extra layers


def _report(tmp) -> Report:
    caps = []
    for h in range(2):
        cap = Capture(2, A100, hostname=f"worker{h}", seed=h, marker="keras3", thread_mode="gpu_private",
                      gpu_id_base=100 * h)
        ops = [_replica_ops(2 * h + g, 6) for g in range(2)]
        if h == 1:
            ops[0] = ops[0] + _dense_layers(3, K.GEMM_FP16_TC, K.EW_ADD_HALF, prefix="extra/metrics_model", gemm_us=200)
        ar = [K.sized(K.NCCL_ALLREDUCE, 150 + (EXTRA_WAIT_US if h == 0 else 0.0))]
        for _ in range(8):
            cap.step(ops, input_wait_us=25, allreduce=ar)
        caps.append(cap)
    Scenario("multi_worker", {c.space.hostname: c.finish() for c in caps}, None).write(tmp)  # type: ignore[arg-type]
    s = discover(str(tmp))[0]
    return session_report(s)


def _words(f: Finding) -> str:
    return " ".join([f.title, f.summary] + [a.text for a in f.actions] + ([f.saving.assumption] if f.saving else [])
                    + ([f.metric.label, f.metric.meaning] if f.metric else [])
                    + [t.title + " " + " ".join(map(str, t.columns)) for t in f.evidence])


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Report:
    return _report(tmp_path_factory.mktemp("mw"))


def test_the_slow_node_is_found_and_its_gpus_are_not_called_ranks(report):
    assert [h.capture.get("processes") for h in report.hosts] == [1, 1]
    job = {f.rule: f for f in report.findings}
    assert "node_straggler" in job and job["node_straggler"].host == "worker1"
    heavy = [f for h in report.hosts for f in h.findings if f.rule == "gpu_imbalance"]
    assert heavy and heavy[0].host == "worker1" and heavy[0].gpu == 0
    said = {f.id: re.findall(r"[^.]*\branks?\b[^.]*", _words(f), re.I)
            for f in list(report.findings) + [f for h in report.hosts for f in h.findings]}
    assert not any(said.values()), said
    assert "GPUs" in job["node_straggler"].summary  # the same sentence, in the job's unit
    assert not context_problems(report)


def _host(processes: int, gpus: int, summary: str, table: Table | None = None) -> HostReport:
    f = Finding(id="rank_straggler", rule="rank_straggler", severity="warning", title="t", summary=summary,
                guide_section="§2", evidence=[table] if table else [])
    return HostReport(host="h", path="p", size_bytes=1, job={"kind": "training"}, findings=[f],
                      capture={"processes": processes},
                      gpus=[GpuSummary(gpu=g, name="NVIDIA A100-SXM4-40GB", compute_capability="8.0", step_ms=1.0,
                                       busy_share=1.0, kernel_count=1) for g in range(gpus)])


def _problems(host: HostReport) -> list[str]:
    return context_problems(Report(run="r", session="s", hosts=[host], findings=[], headline=[], healthy=False,
                                   analyzer_version="t", generated_at="t"))


def test_the_checker_sees_a_rank_said_of_one_process_gpus():
    """The property fails on each way a rank can be said (a sentence, a table's column), and passes where each GPU is
    a process of its own, where one GPU has no peers, and on a label naming the trace's own rank."""
    assert _problems(_host(1, 2, "The other 3 ranks wait 2.06 ms per step"))
    assert _problems(_host(1, 4, "s", Table("GPUs (mean per step)", ["rank", "step ms"], [])))
    assert not _problems(_host(2, 2, "The other 3 ranks wait 2.06 ms per step"))
    assert not _problems(_host(1, 1, "this rank"))
    assert not _problems(_host(1, 2, "rank 11 (node1/GPU3) enters last"))
