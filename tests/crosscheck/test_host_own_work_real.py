"""Idle behind the host's own work is not launch wait, and a step fed nothing waits for no input (issue #37 survey,
miss 6), on a real trace.

``fixtures/waits/event_sync_a100`` (HTA's event-sync test, SOURCE.md): one 3.15 ms ``ProfilerStep``; 570 us with no
event, then ``aten::ones`` whose ``aten::empty`` runs 2.19 ms on the host with no runtime call, then 4 small kernels,
a ``.item()`` and two syncs.  Read straight from its JSON here.  Main read "critical: 74.8% launch wait" for 4
kernels (the allocation counted as launching them) and "input-bound 18%" for the time before the first op, though
nothing is copied to the GPU in the whole capture.
"""

from __future__ import annotations

import gzip
import json

from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.discover.logdir import discover
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report

RUN = FIXTURES / "waits"


def _events() -> list[dict]:
    (path,) = (RUN / "event_sync_a100").glob("*.pt.trace.json.gz")
    return [e for e in json.loads(gzip.decompress(path.read_bytes()))["traceEvents"] if e.get("ph") == "X"]


def _host_work_without_runtime_calls_ms(ev: list[dict]) -> float:
    """The longest op that made no runtime call while it ran, on its thread (ms): the host's own work."""
    calls = [(e["ts"], e["tid"]) for e in ev if e.get("cat") == "cuda_runtime"]
    own = [e["dur"] for e in ev if e.get("cat") == "cpu_op" and e["dur"] >= T("metrics.cpu_op_ms") * 1e3
           and not any(e["ts"] <= t < e["ts"] + e["dur"] and tid == e["tid"] for t, tid in calls)]
    return max(own, default=0.0) / 1e3


def _report() -> dict:
    (s,) = [s for s in discover(str(RUN)) if s.run == "event_sync_a100"]
    return session_report(s).to_dict()


def test_an_op_that_runs_on_the_host_without_a_launch_is_host_work_not_launch_wait():
    ev = _events()
    own_ms = _host_work_without_runtime_calls_ms(ev)
    assert 2.1 < own_ms < 2.3, own_ms  # the file's aten::empty
    rep = _report()
    host = rep["hosts"][0]
    bd, step = host["breakdown_ms"], host["gpus"][0]["step_ms"]
    assert bd["launch_wait"] <= step - own_ms, bd  # main: 2.36 ms of a 3.15 ms step
    assert bd["host_compute"] >= 0.95 * own_ms, bd
    lb = [f for f in rep["findings"] if f["rule"] == "launch_bound"]
    assert not lb or lb[0]["severity"] != "critical", lb[0]["summary"]
    top = rep["findings"][0]
    assert top["rule"] == "unexplained_idle" and top["saving"]["ms_per_step"] >= 0.95 * own_ms, top["summary"]


def test_a_capture_that_copies_nothing_to_the_gpu_waits_for_no_input():
    ev = _events()
    assert not [e for e in ev if e.get("cat") == "gpu_memcpy" and "HtoD" in e["name"]]  # nothing is fed to the GPU
    rep = _report()
    host = rep["hosts"][0]
    assert host["breakdown_ms"]["input_wait"] == 0.0, host["breakdown_ms"]
    assert "input_bound" not in [f["rule"] for f in rep["findings"]]


def test_a_millisecond_without_a_runtime_call_inside_a_dispatch_is_host_work():
    """wild/compiled_a100_triton: one torch.compile'd call whose ``Torch-Compiled Region`` runs 1.2 ms on the host
    (guards, wrappers; no child event) before the only runtime call of the step launches one 2 us kernel.  Read from
    the JSON: the longest stretch inside the region with no runtime call on any thread.  Main booked it as launch
    wait: "launch-bound 82.9%" for one kernel."""
    (path,) = (FIXTURES / "wild" / "compiled_a100_triton").glob("*.json.gz")
    ev = [e for e in json.loads(gzip.decompress(path.read_bytes()))["traceEvents"] if e.get("ph") == "X"]
    (region,) = [e for e in ev if e["name"].startswith("Torch-Compiled Region")]
    calls = sorted(e["ts"] for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver")
                   and region["ts"] <= e["ts"] < region["ts"] + region["dur"])
    stretch_ms = ((calls[0] if calls else region["ts"] + region["dur"]) - region["ts"]) / 1e3
    assert stretch_ms > T("metrics.cpu_op_ms"), stretch_ms  # ~1.26 ms with no runtime call
    (s,) = [s for s in discover(str(FIXTURES / "wild")) if s.run == "compiled_a100_triton"]
    host = session_report(s).to_dict()["hosts"][0]
    bd, step = host["breakdown_ms"], host["gpus"][0]["step_ms"]
    assert bd["launch_wait"] <= step - stretch_ms, bd  # main: 1.39 ms of a 1.67 ms step
    assert bd["host_compute"] >= 0.95 * stretch_ms, bd
