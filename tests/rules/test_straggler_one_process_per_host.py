"""``rank_straggler`` on a job of one process per host (issue #37, h37-left26's left; h37-left33).

Truth by construction (``synthetic.scenarios.multi_host_slow_gpu``): hosts of one process each -- 2 hosts of 2 GPUs
(TensorFlow's MultiWorkerMirroredStrategy) or 4 hosts of 1 -- whose last host's GPU0 runs three more dense layers.
Every other GPU, its own host's other GPU too, enters the AllReduce when its own work is done and spins in it until
the slow GPU joins, as NCCL's kernels do.  The job then has one straggler GPU, not a slow node: the slow host's other
GPU waits as long as the other hosts' GPUs.  (The generator's default, every GPU of a host entering together after
the host's slowest, made the whole host the straggler: ``node_straggler`` in ``test_one_process_gpus_words.py``.)
The straggler's lead is read from the trace's own collectives: the others' median collective time less its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic.scenarios import Scenario, multi_host, multi_host_slow_gpu
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.metrics.job import med
from tb_gpu_advisor.model.schema import Report
from tests.support.report_store import session_report


def _analyse(scenario: Scenario, tmp: Path) -> Report:
    scenario.write(tmp)
    (s,) = discover(str(tmp))
    return session_report(s)


@pytest.mark.parametrize("gpus_per_host, unit", [(2, "GPUs"), (1, "ranks")])
def test_the_slow_gpu_of_a_one_process_host_is_the_straggler(tmp_path: Path, gpus_per_host: int, unit: str) -> None:
    sc = multi_host_slow_gpu(gpus_per_host=gpus_per_host)
    hosts = 2 if gpus_per_host > 1 else 4
    slow_id = 100 * (hosts - 1)  # the slow host's GPU0, as written
    coll = sc.truth.collective_ps
    lead_ms = (med(v for g, v in coll.items() if g != slow_id) - coll[slow_id]) / 1e9
    assert lead_ms > 1.5  # three layers of 200 us GEMMs: the others wait for it, by construction

    report = _analyse(sc, tmp_path)
    assert all(h.capture.get("processes") == 1 for h in report.hosts)
    found = {f.rule: f for f in report.findings}
    assert "node_straggler" not in found  # the slow host's other GPU waits as the other hosts' do
    f = found["rank_straggler"]
    assert (f.host, f.gpu) == (f"worker{hosts - 1}", 0)
    assert f.metric is not None and f.metric.detail["extra_ms_per_step"] == pytest.approx(lead_ms, rel=0.03)
    assert f.summary.startswith(f"The other 3 {unit} wait")


def test_a_balanced_job_of_one_process_per_host_has_no_straggler(tmp_path: Path) -> None:
    report = _analyse(multi_host(), tmp_path)
    assert not {"rank_straggler", "node_straggler"} & {f.rule for f in report.findings}
