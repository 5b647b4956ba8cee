"""One account (issue #37): the late rank's lateness is counted once where it is its own launch dispatch.

A rank late at the collectives by its slow dispatch shows twice in the host's ledger (the mean over its GPUs): the
others' wait (their collective and idle time) and its own launch gaps beyond theirs (a quarter of them, of 4 GPUs, in
the host's launch wait).  ``late_rank`` saves the wait; ``launch_bound`` claims the host's launch wait, the late rank's
gaps included -- so "if every fix lands" added the late rank's own gaps twice (h37-overlap66: the fused MI300X DDP,
11.8 ms of wait + 10.0 ms of launch gaps, 2.2 ms of them rank 3's).  ``late_rank`` now books that share in the launch
pool (rules/late_rank.wait_claims), and the savings' one mechanism (same pool: the larger counts; ``mark_overlaps``)
counts it once.

Truth by construction (``synthetic.torchtrace.write_late_rank_fused``): what the launch fix adds on top of the late rank
keeping pace is the step of the job where every rank dispatches at the others' pace less the step where every rank
dispatches ahead of its kernels.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from synthetic.torchtrace import write_late_rank_fused
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.rules.base import Ctx
from tb_gpu_advisor.rules.savings import achievable, mark_overlaps
from tb_gpu_advisor.runtime.pipeline import host_metrics

FUSED = Path(os.environ.get("TB_GPU_ADVISOR_FUSED_DDP")
             or "/work/wild66/huntk66/runs/fused/merged_all_events.json.gz")


def _job(tmp_path, name, **kw):
    path = tmp_path / name / "merged_all_events.json"
    path.parent.mkdir()
    write_late_rank_fused(str(path), **kw)
    return host_metrics(read_trace(str(path)))


def _ledger(m) -> dict[str, float]:
    return {k: v for k, v in vars(m.breakdown).items() if isinstance(v, float)}


def _launch_on_top(m):
    """The two findings, marked, and what the launch finding adds to the combined estimate beyond late_rank's."""
    fs = {f.rule: f for f in evaluate(m) if f.rule in ("late_rank", "launch_bound")}
    assert set(fs) == {"late_rank", "launch_bound"}
    mark_overlaps(list(fs.values()), _ledger(m))
    both = achievable(Ctx(m).step_ms, _ledger(m), list(fs.values()))["recoverable_ms"]
    return fs, both - fs["late_rank"].saving.ms_per_step


def _truth_on_top(tmp_path, launch_us: float) -> float:
    """The step every rank dispatching at ``launch_us`` less the step every rank dispatching ahead of its kernels."""
    paced = _job(tmp_path, "paced", launch_us=launch_us, late_launch_us=launch_us)
    ahead = _job(tmp_path, "ahead", launch_us=7.0, late_launch_us=7.0)
    return Ctx(paced).step_ms - Ctx(ahead).step_ms


def test_a_late_ranks_own_dispatch_is_counted_once(tmp_path):
    """Fails on base (launch_bound's 0.57 ms, all of it rank 3's own gaps, was added on top of the wait, and neither
    finding said they overlap): the others launch ahead of their kernels, so fixing the launches gains nothing beyond
    rank 3 keeping pace."""
    fs, on_top = _launch_on_top(_job(tmp_path, "late"))
    assert _truth_on_top(tmp_path, 7.0) == pytest.approx(0.0, abs=1e-3)
    assert on_top == pytest.approx(0.0, abs=0.01)
    assert fs["launch_bound"].id in fs["late_rank"].saving.overlaps
    assert fs["late_rank"].id in fs["launch_bound"].saving.overlaps
    assert "the launch and host-work findings tell that time" in fs["late_rank"].summary


def test_the_others_own_launch_gaps_still_count(tmp_path):
    """Control (passes on base): every rank launch-bound (40 us a launch of 20 us kernels), rank 3 more -- the launch
    fix adds the others' gaps on top of rank 3 keeping pace, and the combined estimate adds some, never more."""
    _, on_top = _launch_on_top(_job(tmp_path, "late", launch_us=40.0))
    truth = _truth_on_top(tmp_path, 40.0)
    assert 0.0 < on_top <= truth + 0.01


def test_the_real_fused_ddp_counts_rank_3s_dispatch_once():
    """Fails on base (late_rank's 11.8 ms and launch_bound's 10.0 ms added up to 21.6 ms of the 46.9 ms step): rank 3's
    own launch gaps beyond its peers' (9.5 ms a step, a quarter of them in the host's ledger) are counted once."""
    if not FUSED.is_file():
        pytest.skip(f"{FUSED} is not here (a 4.2 MB real trace kept out of the repository)")
    m = host_metrics(read_trace(str(FUSED)))
    fs, on_top = _launch_on_top(m)
    late = fs["late_rank"].saving
    launch_share = sum(r["ms"] for r in late.recovers if r["pool"] == "launch")
    # at most one GPU's share of 4 of what rank 3 keeping pace gives back (1.9 ms a step: h37-late67)
    assert 0.0 < launch_share <= late.ms_per_step / 4 + 0.01
    assert fs["launch_bound"].id in late.overlaps
    assert on_top <= fs["launch_bound"].saving.ms_per_step - launch_share + 0.01
