"""Per-step counts of a file holding several ranks are each rank's, as its times are (h37-left57).

An Nsight export of two processes (one GPU each) holds both ranks' host calls and kernels in one capture.  Its times
per step were per GPU (the breakdown, the syncs' wait, the copies), but its counts per step the host's over both ranks:
``metrics/syncs.host_syncs`` and ``metrics/kernels.small_kernels`` divided by the steps alone, so the shared
``nsys/fsdp_mfu_before`` read "848 of 1,972 kernels per step" where each GPU runs 986, and a two-rank loop making one
sync a step read two.  Every count per step is now divided as the times are, in one place: ``Context.per_step``
(kept steps x active GPUs; docs/metrics.md, "Per step and rank").

Truth by construction: ``synthetic.nsysexport.NsysJob`` with ``ranks=2`` -- each rank launches ``ops`` kernels, one
``.item()`` sync and one blocking read-back a step.  Control: the same job on one rank, whose counts stay what they
were (and equal the two-rank job's per rank).
"""

from __future__ import annotations

import pytest

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.runtime.pipeline import analyze_session, host_metrics
from tests.support.paths import SHARED_PROFILES
from tests.support.properties import per_rank_problems

OPS = 20


def _metrics(path):
    m = host_metrics(read_trace(str(path)))
    return m[0] if isinstance(m, tuple) else m


def _job(tmp_path, ranks: int):
    p = tmp_path / f"ranks{ranks}.sqlite"
    truth = write(str(p), NsysJob(ranks=ranks, ops=OPS, kernel_us=15.0, d2h_us=500.0))
    return _metrics(p), truth


def test_two_ranks_count_per_rank(tmp_path):
    m, truth = _job(tmp_path, 2)
    assert sorted(truth.kernels) == [0, 1]
    per_rank = truth.kernels[0] / truth.steps  # each rank's kernels a step, by construction
    assert per_rank == OPS
    assert m.small_kernels.kernels_per_step == pytest.approx(per_rank)
    assert m.small_kernels.per_step == pytest.approx(per_rank)  # every kernel is 15 us: all small
    assert m.syncs.calls_per_step == pytest.approx(1.0)  # one .item() a step on each rank
    assert sum(c for _, c in m.syncs.callers) == pytest.approx(m.syncs.calls_per_step)
    d2h = next(c for c in m.memcpy if c.direction == "d2h")
    assert d2h.count_per_step == pytest.approx(1.0)  # the copies were already per rank: one value per quantity


def test_one_rank_control_is_the_two_rank_jobs_rank(tmp_path):
    one, _ = _job(tmp_path, 1)
    two, _ = _job(tmp_path, 2)
    assert one.small_kernels.kernels_per_step == pytest.approx(OPS)
    assert one.syncs.calls_per_step == pytest.approx(1.0)
    for a, b in ((one.small_kernels.per_step, two.small_kernels.per_step),
                 (one.syncs.calls_per_step, two.syncs.calls_per_step),
                 (one.dispatch.calls_per_step, two.dispatch.calls_per_step),
                 (one.dispatch.host_ms_per_step, two.dispatch.host_ms_per_step)):
        assert b == pytest.approx(a, rel=1e-6)


_FSDP = SHARED_PROFILES / "nsys" / "fsdp_mfu_before"


@pytest.mark.skipif(not _FSDP.is_dir(), reason="../shared/profiles absent")
def test_real_two_process_export_says_each_gpus_kernels():
    (s,) = discover(str(_FSDP))
    (h,) = analyze_session(s.run, s.session, s.hosts).hosts
    lb = next(f for f in h.findings if f.id.startswith("launch_bound"))
    steps, kernels = h.steps["count"], h.kernel_durations_us["count"]
    gpus = [g for g in h.gpus if g.kernel_count]
    assert len(gpus) == 2
    assert lb.metric.detail["kernels_per_step"] == pytest.approx(kernels / steps / 2)  # 986, not both GPUs' 1,972
    assert "of 986 kernels per step" in lb.summary
    assert per_rank_problems(h) == []
