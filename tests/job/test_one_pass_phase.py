"""A capture of one pass with no one-time cost read shows no steady state: the report's phase says "one-pass".

"steady" says the capture shows the program's steady state, and a steady state is what repeats: one pass holds nothing
to compare it with (its first call may pay what no later call would, host-side warm-up the job stage cannot see).
h37-lostmark34's *Left* 1: ``wild/gpt2_b200_one_step`` (one training iteration of 11.3 ms, no step marked, one
optimizer step) and ``wild/part_forward_a100`` (one forward pass) read phase "steady".  The rules keep the job stage's
reading (no one-time cost: no cold-start finding); a capture whose steps repeat keeps "steady", and a pass with
one-time costs keeps its warm-up or mixed phase.
"""

from __future__ import annotations

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.job.phase import ONE_PASS
from tb_gpu_advisor.runtime.pipeline import host_metrics, host_report
from tests.support.wild_hosts import wild_host as _host


@pytest.mark.parametrize("run", ["gpt2_b200_one_step", "part_forward_a100"])
def test_a_real_single_pass_with_no_one_time_cost_is_no_steady_state(run):
    """Main: phase "steady" (the line said no phase).  Here "one-pass", said on the job line and in the evidence; the
    capture holds one step and no one-time cost (the truth of both files, read by hand in SURVEY.md)."""
    h = _host(run)
    job, cap = h["job"], h["capture"]
    assert (cap["steps_captured"], cap["steps_kept"], job["one_time_ms"]) in ((0, 1, 0.0), (1, 1, 0.0))
    assert job["phase"] == ONE_PASS, job["phase"]
    assert "the steady state is not shown" in job["summary"]
    assert "nothing in it repeats" in job["phase_evidence"]
    assert cap["steady_state"] is None  # the capture's own check agrees: fewer than two steps, no steadiness told
    assert not any(f["rule"] == "cold_start" for f in h["findings"])  # the rules read the job stage's phase


def test_real_repeated_steps_keep_the_steady_phase():
    """The control: ``wild/tiny_block_h100_infer``'s marked steps repeat, no one-time cost: "steady" on both."""
    h = _host("tiny_block_h100_infer")
    assert h["capture"]["steps_captured"] >= 2
    assert h["job"]["phase"] == "steady"


def test_a_real_cold_pass_keeps_its_warm_up_phase():
    """The other control: ``wild/mcts_rtx3080_one_pass``
    (a 4.6 ms first launch and an 86 ms first cudaMalloc, 44% of the window) -- keeps "warm-up": its phase says what
    the one-time costs do."""
    h = _host("mcts_rtx3080_one_pass")
    assert h["job"]["phase"] == "warm-up"


@pytest.mark.parametrize("steps,found,phase", [(1, 1, ONE_PASS), (2, 2, "steady"), (6, 6, "steady")])
def test_by_construction_one_marked_step_shows_no_steady_state(tmp_path, steps, found, phase):
    """The generator's healthy bf16 step (no one-time cost by construction), marked ``steps`` times: one step is
    "one-pass", two or more "steady" -- the job stage's own reading "steady" each time."""
    path = tt.write_run(str(tmp_path), "healthy_bf16", steps=steps)[0]
    m = host_metrics(read_trace(path))
    assert m.job.phase.phase == "steady" and m.job.phase.total_ms == 0.0
    assert m.steps.found == found
    job = host_report(m, 0).job
    assert job["phase"] == phase
    assert ("phase one-pass" in job["summary"]) == (phase == ONE_PASS)
