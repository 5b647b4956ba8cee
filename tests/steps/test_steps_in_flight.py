"""Steps that overlap on the GPU: the last holds its predecessor's spill once, not its own too (h37-prewindow30,
issue #37 class 1 "windows that inherit work").

The wrong assumption (``steps.place._last_device_end``): *a GPU step ends with its own work*.  Under asynchronous
placement each GPU step runs from its first kernel to the next step's first kernel.  Where one stream runs a step
behind the host while side streams run at once, every step's work runs on past the next step's first kernel: each
window holds its predecessor's spill (the first holds the queue the window opened on -- the events "from before the
window in mid-capture" h37-loopstart left unread).  The last, ended at its own work's end, held that spill and its own.
``torchrec_a100_stalls`` (TorchRec DDP, A100): its compute stream runs 157 ms behind the all-to-all streams, the
window opens on 867 events launched before it (ids below every call of the window) that drain 8.8-163.2 ms while the
side streams' own kernels start at 11.2 ms; main read the last of 5 steps 370.3 ms (the host's 216.2), the mean
245.4 ms.  Now the last ends the least spill every earlier step carried before its work's end, as
``steps.place._carried_spill`` does for host windows.

Generator: :func:`synthetic.torchtrace.write_step_in_flight`, truth by construction.
"""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from synthetic.torchtrace import write_step_in_flight
from tests.support.paths import FIXTURES
from tests.support.run_report import one_file_host

TORCHREC = FIXTURES / "wild" / "torchrec_a100_stalls" / "rank0.1.pt.trace.json.gz"


def _by_hand(path) -> dict:
    """The raw file read without the Advisor (us): each ``ProfilerStep``'s host window (tiled to the next mark), the
    first kernel and the last device end of the work launched in it (by correlation id), and the device events no
    call of the window launched."""
    with gzip.open(path, "rt") as f:
        ev = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    calls = {e["args"]["correlation"]: e["ts"] for e in ev
             if e.get("cat") == "cuda_runtime" and "correlation" in e["args"]}
    marks = sorted((e for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")),
                   key=lambda e: e["ts"])
    hs = np.array([m["ts"] for m in marks], float)
    he = np.append(hs[1:], marks[-1]["ts"] + marks[-1]["dur"])
    first, last = np.full(hs.size, np.inf), np.full(hs.size, -np.inf)
    queued = []
    for e in ev:
        if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        at = calls.get(e["args"].get("correlation"))
        if at is None:
            queued.append(e)
            continue
        k = int(np.searchsorted(hs, at, "right")) - 1
        if k < 0 or at >= he[k]:
            continue
        last[k] = max(last[k], e["ts"] + e["dur"])
        if e["cat"] == "kernel":
            first[k] = min(first[k], e["ts"])
    return {"host_ms": (he - hs) / 1000, "first": first, "last": last, "queued": queued}


def _gpu_steps(host: dict) -> list[float]:
    return [r["step_ms"] for r in sorted((r for r in host["step_rows"] if r["gpu"] is not None),
                                         key=lambda r: r["step"])]


def test_the_last_of_steps_overlapping_on_the_gpu_holds_one_spill():
    raw = _by_hand(TORCHREC)
    spill = raw["last"][:-1] - raw["first"][1:]  # each step's work past the next step's first kernel
    assert (spill > 150_000).all(), spill  # 156.8-157.8 ms: the compute stream runs a step behind
    assert len(raw["queued"]) == 872 and min(e["ts"] for e in raw["queued"]) < raw["first"][0], len(raw["queued"])
    want = (raw["last"][-1] - spill.min() - raw["first"][-1]) / 1000  # the last's tile: its work less one spill
    host = one_file_host(str(TORCHREC), "kineto")
    steps = _gpu_steps(host)
    assert len(steps) == 5 and host["steps"]["source"] == "profiler_step", host["steps"]
    assert steps[-1] == pytest.approx(want, abs=0.05), (steps, want)  # main: 370.3 ms, by hand 213.54
    periods = raw["host_ms"]  # the host's steps, 209.8-216.5 ms: the loop's period, the GPU keeping pace
    assert np.mean(steps) == pytest.approx(float(np.mean(periods)), rel=0.01), (steps, periods)  # main: 245.4 ms


@pytest.mark.parametrize("steps", [3, 5])
def test_a_generated_step_in_flight_times_every_step_at_the_period(tmp_path, steps):
    """Truth by construction (``write_step_in_flight``): main read the last step ``step_ms`` + ``spill_ms`` (7.95 of
    4.0 ms); 8 steps (the stock rule drops the first and last) is the control."""
    path = tmp_path / "w.pt.trace.json"
    truth = write_step_in_flight(str(path), steps=steps)
    assert truth["spill_ms"] > truth["step_ms"] / 2, truth  # the steps overlap on the GPU
    found = _gpu_steps(one_file_host(str(path), "kineto"))
    assert len(found) == steps, found
    assert found[0] == pytest.approx(truth["first_step_ms"], abs=0.002), (found, truth)
    assert found[1:] == pytest.approx([truth["step_ms"]] * (steps - 1), abs=0.002), (found, truth)


def test_control_eight_steps_in_flight_read_alike(tmp_path):
    path = tmp_path / "w.pt.trace.json"
    truth = write_step_in_flight(str(path), steps=8)
    found = _gpu_steps(one_file_host(str(path), "kineto"))
    assert found == pytest.approx([truth["step_ms"]] * 6, abs=0.002), (found, truth)


def test_control_a_queue_in_a_dropped_warm_up_step_moves_no_kept_step():
    """``d2d_v100`` opens on 614 events launched before the window (ids below every call of it; 610 on the compute
    stream, draining 24.6-63.9 ms while the window's own work starts at 25.4 ms on a side stream), all inside
    ``ProfilerStep#1009``, which the stock rule drops as warm-up: no kept step reads them, so none moves (host windows
    here: the launched work ends inside its step)."""
    path = FIXTURES / "wild" / "d2d_v100" / "test.1.pt.trace.json.gz"
    raw = _by_hand(path)
    queued_end = max(e["ts"] + e["dur"] for e in raw["queued"]) / 1000
    with gzip.open(path, "rt") as f:
        zero = min(e["ts"] for e in json.load(f)["traceEvents"] if e.get("ph") == "X") / 1000
    host = one_file_host(str(path), "kineto")
    assert [(d["step"], d["reason"].split(":")[0]) for d in host["steps"]["dropped"]] == [
        (1009, "warm-up"), (1014, "possibly partial")], host["steps"]["dropped"]
    rows = [r for r in host["step_rows"] if r["gpu"] is not None]
    assert min(r["start_ms"] for r in rows) > queued_end - zero, (rows, queued_end - zero)
    kept = raw["host_ms"][1:5]  # the kept steps read their host marks, as on main
    assert [r["step_ms"] for r in rows] == pytest.approx(list(kept), abs=0.1), (rows, kept)
