"""A slow asynchronous call that is not its thread's first is the host's own time, not unseen GPU work (issue #37
classes 1 and 3, h37-asyncslow32).

``nsys/fsdp_mfu_after`` (shared): a rank's ``cudaMemsetAsync`` lasts 5.75 ms 170 ms into the window, its GPU idle,
where the run's other 239 such calls average microseconds; ``wild/cold_loop_a4000_swin`` (kept): one of 1.26 ms in
the loop's step 4 (its thread's 325th runtime call; the 38 ``cudaMemsetAsync`` have a median of 5 us), the GPU idle,
its fill 1.26 ms after the call's start.  Main booked each as a wait for GPU work the capture does not hold.
ASSUMPTION that was wrong: a slow copy or memset call may be waiting for the GPU unless it is the thread's first.  An
``Async`` memset, or an ``Async`` copy between the device and pinned memory, returns without waiting for any GPU
work (h37-memsetctx31's ``job.phase._never_waits``): a millisecond in one is the host's (the driver's work, a lock,
the OS) wherever it falls.  Booked as launch wait instead (the idle before the fill it submits), one stall read as
per-launch cost -- 200 times the same call's median -- and pushed ``cold_loop_a4000_swin``'s launch wait over the
launch-bound line (2.7% -> 3.3% of the step); the ledger books it as the host's own work (``async_stall``, booked
``host_compute``).

The exports by construction are ``synthetic.nsysexport.write_async_stall``'s."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic.nsysexport import write_async_stall
from tests.support.cli_report import first_host

SWIN = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "cold_loop_a4000_swin"


def _host(tmp_path: Path, call: str) -> tuple[dict, dict]:
    path = tmp_path / "run" / "stall.sqlite"
    path.parent.mkdir()
    truth = write_async_stall(str(path), call=call)
    return first_host(path), truth


@pytest.mark.parametrize("call", ["memset", "pinned"])
def test_a_slow_async_call_mid_run_is_the_hosts_time_not_unseen_work(tmp_path, call):
    host, truth = _host(tmp_path, call)
    bd, steps = host["breakdown_ms"], host["steps"]["count"]
    assert 0 < steps <= truth["steps"], host["steps"]
    assert host["job"]["unseen_gpu_ms"] < 0.01, host["job"]  # it waited for no GPU work
    assert bd["unseen"] < 0.001, bd
    per_step = truth["stall_ms"] / steps  # the stall's step is kept (the 6th of 10)
    assert bd["host_compute"] >= 0.99 * per_step, bd
    assert bd["launch_wait"] < 0.1 * per_step, bd  # no launch's dispatch cost either
    assert not any(f["rule"] == "launch_bound" for f in host["findings"]), host["findings"]
    # the finding that reads the idle names the call as the runtime's own time
    said = " ".join(f["summary"] for f in host["findings"])
    name = "cudaMemsetAsync" if call == "memset" else "cudaMemcpyAsync"
    assert f"(`{name}`) that wait for no GPU work" in said, said


@pytest.mark.parametrize("call", ["pageable", "sync"])
def test_control_a_slow_call_that_may_wait_is_still_unseen_work(tmp_path, call):
    """Control: a pageable copy (the driver stages it, and may wait for its stream) and a sync may each wait for GPU
    work the file does not hold: their reading is unchanged."""
    host, truth = _host(tmp_path, call)
    assert host["job"]["unseen_gpu_ms"] >= truth["stall_ms"] - 0.01, host["job"]
    assert host["breakdown_ms"]["unseen"] >= 0.99 * truth["stall_ms"] / host["steps"]["count"], host["breakdown_ms"]


def test_real_swin_loops_memset_stall_is_host_time_not_launch_wait():
    """``wild/cold_loop_a4000_swin`` by hand (the raw events): the ``cudaMemsetAsync`` at 1,670,476,781,194,312 us
    lasts 1,262 us, no GPU event overlaps it, its ``Memset (Device)`` starts 1,264 us after the call's start; the
    thread's 325th runtime call (its first, a 1.95 ms ``cudaMemcpyAsync``, is the start-up).  Ten kept steps: 0.126 ms
    a step.  Main: unseen 0.1262 ms a step."""
    if not SWIN.is_dir():
        pytest.skip(f"{SWIN} absent")
    host = first_host(SWIN)
    bd, steps = host["breakdown_ms"], host["steps"]["count"]
    assert bd["unseen"] < 0.001, bd
    assert bd["host_compute"] >= 0.99 * 1.262 / steps, bd
    # the launch wait is the launches' own: under the launch-bound line, as the hand-read truth says
    assert bd["launch_wait"] / host["gpus"][0]["step_ms"] < 0.03, bd


def test_the_sync_finding_says_only_the_stall_that_lies_in_the_idle_after_its_syncs(tmp_path):
    """The host-sync finding's "X a step of it the host spent inside asynchronous runtime calls" is a part of the idle
    after its syncs, measured there (``HostSyncs.idle_in_async_stalls``): a stall in the middle of a step, after the
    step's first kernels were queued, lies in no idle a sync drained.  By construction (``stall_after=6``,
    ``host_after_sync_us=400``): the idle after each sync is the host's 400 us ``postprocess`` range, the 5.75 ms
    stall comes after 6 of the step's 12 kernels were launched and idles the GPU once they end.  Main said "414 us a
    step of it the host spent inside asynchronous runtime calls of milliseconds (`cudaMemsetAsync`)" of the syncs'
    414 us -- the step's stall time, capped at the syncs' idle, said as a part of it (h37-review32)."""
    path = tmp_path / "run" / "stall.sqlite"
    path.parent.mkdir()
    truth = write_async_stall(str(path), stall_after=6, host_after_sync_us=400.0)
    host = first_host(path)
    (sync,) = [f for f in host["findings"] if f["rule"] == "host_sync"]
    assert "cudaMemsetAsync" not in sync["summary"], sync["summary"]
    # the stall is still the host's own time in the ledger, as the step's (kernels queued before it run first)
    queued_ms = 6 * 0.4
    assert host["breakdown_ms"]["host_compute"] >= 0.99 * (truth["stall_ms"] - queued_ms) / host["steps"]["count"]
    assert host["breakdown_ms"]["unseen"] < 0.001, host["breakdown_ms"]


def test_control_a_stall_right_after_a_sync_is_said_as_the_syncs_idle(tmp_path):
    """Control: the stall at a step's start, the GPU drained by the last step's sync, lies in that sync's idle: the
    host-sync finding names it, as much of it as lies there and never more than its own idle."""
    host, truth = _host(tmp_path, "memset")
    (sync,) = [f for f in host["findings"] if f["rule"] == "host_sync"]
    assert "(`cudaMemsetAsync`) that wait for no GPU work" in sync["summary"], sync["summary"]
