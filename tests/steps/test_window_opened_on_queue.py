"""A window that opens while the GPU still runs work queued before it: that work is the window's inheritance, not its
first step's (issue #37, class 1; h37-loopstart, h37-loopend2's *Left* 2 -- the mirror of the loop's end).

Wrong assumption: *a step's GPU time is all its own work*.  A GPU runs only what was launched to it; a device event
whose correlation id no call of the window carries was launched before the window opened.  Where host windows stand
for the GPU's steps (the launched work runs inside its step), the first step's GPU window began at the host's mark and
booked the queue's drain: ``hf_qwen_h100`` (PyTorch 2.6, H100, ``schedule`` active on ``ProfilerStep#6``) opens with
a 14.1 ms ``cudaDeviceSynchronize`` waiting for 509 kernels and memsets (13.7 ms) whose ids (675771-682741) lie below
every call of the window; main read the one step 49.38 ms, Kineto's own GPU mark of the step says 34.9 ms.
Generator: :func:`synthetic.torchtrace.write_loop_opened`, truth by construction.
"""

from __future__ import annotations

import gzip
import json

import pytest

from synthetic.torchtrace import write_loop_opened
from tests.support.paths import FIXTURES
from tests.support.run_report import one_file_host

QWEN = FIXTURES / "wild" / "hf_qwen_h100" / "Qwen_Qwen1.5-0.5B-Chat.1016005.pt.trace.json.gz"
DLRM = FIXTURES / "wild" / "dlrm_v100" / "worker1_step_12.1694128201556.pt.trace.json.gz"
INHERITED = "the first step's GPU time starts after the work queued before the window"
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def _by_hand(path) -> dict:
    """The raw file read without the Advisor: the device events whose correlation id no runtime call carries, where
    the last of them ends, and Kineto's own GPU-side ``ProfilerStep`` mark (us)."""
    with gzip.open(path, "rt") as f:
        ev = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    runtime = [e for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e["args"]]
    calls = {e["args"]["correlation"] for e in runtime}
    dev = [e for e in ev if e.get("cat") in DEVICE_CATS]
    queued = [e for e in dev if e["args"].get("correlation") not in calls]
    marks = [e for e in ev if e.get("cat") == "gpu_user_annotation" and e["name"].startswith("ProfilerStep#")]
    host = [e for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")]
    return {"queued": queued, "queued_end": max((e["ts"] + e["dur"] for e in queued), default=None),
            "queued_first": min((e["ts"] for e in queued), default=None), "marks": marks, "host": host,
            "own_first": min(e["ts"] for e in dev if e["args"].get("correlation") in calls),
            "first_call": min(e["ts"] for e in runtime)}


def _gpu_rows(host: dict) -> list[dict]:
    return [r for r in host["step_rows"] if r["gpu"] is not None]


def test_the_queue_a_window_opens_on_is_not_its_first_steps_gpu_time():
    raw = _by_hand(QWEN)
    (mark,) = raw["marks"]  # Kineto's own span of the step's GPU work
    assert len(raw["queued"]) == 509 and raw["queued_first"] < raw["host"][0]["ts"] < raw["queued_end"] < raw["own_first"]
    host = one_file_host(str(QWEN), "kineto")
    (row,) = _gpu_rows(host)
    want = (mark["ts"] + mark["dur"] - raw["queued_end"]) / 1000  # from the queue's end to the step's work's end
    assert row["step_ms"] == pytest.approx(want, abs=0.01), (row, want)  # main: 49.38 ms, the queue's 14.2 ms in it
    assert row["step_ms"] < mark["dur"] / 1000 + 0.5, row  # within the launch gap of Kineto's own mark (34.9 ms)
    (gpu,) = host["gpus"]
    assert gpu["step_ms"] == row["step_ms"] and gpu["kernel_count"] < 1707 - 400, gpu  # main: 1459 kernels
    note = host["steps"]["note"]
    assert INHERITED in note and "509 kernels, copies or memsets of 13.7 ms" in note, note


def test_control_work_arriving_after_the_gpu_idled_in_the_step_stays_the_steps():
    """``dlrm_v100`` worker1: 64 kernels of ids below the window's calls (the step before's Adagrad update: ``sqrt``,
    ``addcmul``, ``addcdiv``) start 1.04 ms into the step, 4-8 us apart.  The GPU was not idle before them (read by
    hand, h37-prewindow30): a launch to an idle stream starts 5-7 us after its call in this file, and Kineto keeps no
    activity that starts before its window, so the work their stream ran first is not in the file.  The step stays
    its host mark all the same: its first CUDA call comes after they started (the host loads its batch until 1.25 ms),
    so none of its own work waited for them."""
    raw = _by_hand(DLRM)
    assert raw["queued"] and raw["queued_first"] > raw["host"][0]["ts"] + 500, raw["queued_first"]
    assert raw["queued_first"] < raw["first_call"], (raw["queued_first"], raw["first_call"])
    host = one_file_host(str(DLRM), "kineto")
    (row,) = _gpu_rows(host)
    assert row["step_ms"] == pytest.approx(raw["host"][0]["dur"] / 1000, abs=0.01), row  # the host's mark, as on main
    assert INHERITED not in host["steps"]["note"]


@pytest.mark.parametrize("sync_first", [True, False])
@pytest.mark.parametrize("backlog", [0, 1, 40])
def test_a_generated_window_opened_on_a_queue_times_its_first_step_without_it(tmp_path, backlog, sync_first):
    """Truth by construction (``write_loop_opened``): the first step runs from where the queue ends; 0 and 1 are the
    controls (no queue; a queue drained before the step opened: every step as on main, never stretched back to it).  Main read the first step with the queue's drain in it (40: 4.38 of 2.46 ms)."""
    path = tmp_path / "w.pt.trace.json"
    truth = write_loop_opened(str(path), backlog=backlog, sync_first=sync_first)
    host = one_file_host(str(path), "kineto")
    rows = sorted(_gpu_rows(host), key=lambda r: r["step"])
    assert len(rows) == truth["steps"], rows
    assert rows[0]["step_ms"] == pytest.approx(truth["first_step_ms"], abs=0.002), (rows[0], truth)
    assert rows[1]["step_ms"] == pytest.approx(truth["step_ms"], abs=0.002), (rows[1], truth)
    assert (INHERITED in host["steps"]["note"]) == truth["inherited"], host["steps"]["note"]
    assert truth["inherited"] == (backlog > 1), truth  # 1 kernel drains before the step opens: none of its time
    if truth["inherited"]:
        assert f"of {truth['queued_ms']:.1f} ms" in host["steps"]["note"], host["steps"]["note"]
