"""One training iteration is one step, however many GPU bursts it runs in (issue #37, survey h37-survey13).

ASB1127/HPMLProj's cold ``Lora/profile_trace.json`` @332ec5eb (an A100 Trainer step, read locally, no licence: not
kept) holds one forward, one backward and one ``Optimizer.step``, with no ``ProfilerStep``; its first calls leave the
GPU idle between 23 bursts, which main read as 23 "steps" (3 of 11 ms kept, 20 dropped as cold).  An optimizer's
update runs once per iteration, so a window with one optimizer step holds one iteration: the bursts are its parts.
The trace is ``synthetic.torchtrace.bursty_iterations``'s, its iterations known by construction."""

from __future__ import annotations

import pytest

from synthetic.torchtrace import BURST_KERNEL_US, BURST_LAYERS, BURST_PAUSE_US, Scenario, bursty_iterations, write_run
from tb_gpu_advisor.discover.logdir import discover
from tests.support.report_store import session_report


def _host(tmp_path, iterations: int) -> dict:
    write_run(str(tmp_path), Scenario(1, bursty_iterations(iterations), [], [], "bursty iterations"), run="train")
    (s,) = discover(str(tmp_path))
    return session_report(s).to_dict()["hosts"][0]


def test_one_optimizer_step_makes_the_bursts_one_iteration(tmp_path):
    host = _host(tmp_path, 1)
    steps = host["steps"]
    assert host["job"]["kind"] == "training"
    assert (steps["source"], steps["found"], steps["count"]) == ("single_pass", 1, 1), steps
    assert "one optimizer step" in steps["note"], steps["note"]
    # the one step holds the whole iteration: every burst's kernels, and the host's pauses between its bursts
    (row,) = [r for r in host["step_rows"] if r["gpu"] is None]
    kernels = BURST_LAYERS * 2 + BURST_LAYERS * 4 + 1
    assert row["breakdown"]["device_compute"] == pytest.approx(kernels * BURST_KERNEL_US / 1000, abs=1e-3), row
    assert row["step_ms"] >= 2 * BURST_LAYERS * BURST_PAUSE_US / 1000, row

@pytest.mark.parametrize("iterations", [2, 3])
def test_iterations_with_an_optimizer_step_each_stay_that_many_steps(tmp_path, iterations):
    """Control: several optimizer steps are several iterations, as before (``step_end_events``)."""
    steps = _host(tmp_path, iterations)["steps"]
    assert (steps["source"], steps["found"]) == ("step_end_events", iterations), steps
