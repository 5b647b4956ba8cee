"""What a late rank costs is the step time its keeping pace gives back, not the others' wait summed over the calls
(issue #37 deliverable 3, "each wait belongs to its cause"; h37-late67).

The others' wait holds their own next work: the next bucket's compute and their host's launches run inside it, and
come back on the step's path once the late rank is on time.  With every rank launch-bound the launch fix on every GPU
also removes the others' wait for the late rank's launches, which the host ledger (the mean over its GPUs) books as
wait, not launch gaps.

Truth by construction (``synthetic.torchtrace.write_late_rank_fused``): the late rank keeping pace gives back the
step less the step of the same job with its launches at the others' pace; every fix landing (late rank on time, every
rank dispatching ahead of its kernels) the step less the step of the job with every launch at 7 us.
"""

from __future__ import annotations

import pytest

from synthetic.torchtrace import write_late_rank_fused
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.rules.base import Ctx
from tb_gpu_advisor.rules.savings import achievable, mark_overlaps
from tb_gpu_advisor.runtime.pipeline import host_metrics


def _job(tmp_path, name, launch_us, late_launch_us):
    path = tmp_path / name / "merged_all_events.json"
    path.parent.mkdir()
    write_late_rank_fused(str(path), launch_us=launch_us, late_launch_us=late_launch_us)
    return host_metrics(read_trace(str(path)))


def _ledger(m) -> dict[str, float]:
    return {k: v for k, v in vars(m.breakdown).items() if isinstance(v, float)}


def test_the_saving_is_the_step_time_its_keeping_pace_gives_back(tmp_path):
    """Fails on base (claimed 2.57 ms, the others' 2.59 ms of wait summed over the calls, where the step gains 1.80):
    every rank launch-bound at 30 us a launch, rank 3 at 60."""
    m = _job(tmp_path, "late", 30.0, 60.0)
    truth = Ctx(m).step_ms - Ctx(_job(tmp_path, "paced", 30.0, 30.0)).step_ms
    assert truth == pytest.approx(1.80, abs=0.01)
    (f,) = [f for f in evaluate(m) if f.rule == "late_rank"]
    assert f.metric.detail["others_wait_ms"] == pytest.approx(2.59, abs=0.01)  # the wait itself is still told
    assert m.comm.arrivals["gain_ms"] == pytest.approx(truth, abs=0.01)
    assert f.saving.ms_per_step == pytest.approx(truth, abs=0.05)
    assert "their own next work" in f.summary


def test_every_fix_landing_counts_the_others_wait_for_launches(tmp_path):
    """Fails on base (launch_bound 0.42 ms where batching every rank's launches gives back 1.57; late_rank's 1.68 ms
    over its 1.20, and the two together 1.80 over the 1.57 every fix gives): every rank launch-bound at 20 us a launch,
    rank 3 at 40.  The launches rank 3 dispatches while its own all-reduce runs (booked as its collective time) count
    since session 68 (``test_launch_gaps_in_collectives68``): the estimate is some 5% short of the truth, never over."""
    m = _job(tmp_path, "late", 20.0, 40.0)
    step = Ctx(m).step_ms
    late_truth = step - Ctx(_job(tmp_path, "paced", 20.0, 20.0)).step_ms
    all_truth = step - Ctx(_job(tmp_path, "ahead", 7.0, 7.0)).step_ms
    fs = {f.rule: f for f in evaluate(m) if f.rule in ("late_rank", "launch_bound")}
    assert fs["late_rank"].saving.ms_per_step == pytest.approx(late_truth, abs=0.05)
    # the launch fix on every rank takes rank 3's lateness with it: its truth is every fix's
    assert 0.8 * all_truth <= fs["launch_bound"].saving.ms_per_step <= all_truth + 0.01
    mark_overlaps(list(fs.values()), _ledger(m))
    both = achievable(step, _ledger(m), list(fs.values()))["recoverable_ms"]
    assert 0.8 * all_truth <= both <= all_truth + 0.01
