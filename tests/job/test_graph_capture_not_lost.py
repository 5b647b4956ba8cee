"""Launches made inside a graph capture are recorded into the graph, not run: no kernel record is lost (h37-survey50).

SGLang's start-up capture of its batch-32 decode graph (AMD-AGI/TraceLens ``inference/sglang_decode/capture_traces``,
kept as ``wild/sglang_mi300x_capture``; read by hand in ``SURVEY.md``): Qwen3-8B on an MI300X, 546 kernel launches,
all but the 2 fills inside ``hipStreamBeginCapture`` ... ``hipStreamEndCapture`` on the scheduler's thread, then
``hipGraphInstantiateWithFlags`` and a ``hipDeviceSynchronize``; the graph is never replayed.  Main read the 544
captured launches as kernels that ran without their records ("The capture lost part of its GPU records"), beside its
own cold-start finding saying "kernels launched while a graph is captured are recorded, not run".
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from tb_gpu_advisor.discover.logdir import discover
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report

RUN = FIXTURES / "wild" / "sglang_mi300x_capture"
LAUNCHES = ("hipLaunchKernel", "hipExtModuleLaunchKernel", "hipModuleLaunchKernel")


def _events(path: Path) -> list[dict]:
    return json.loads(gzip.open(path).read())["traceEvents"]


def _report(root: Path) -> dict:
    s = [s for s in discover(str(root))][0]
    return session_report(s).to_dict()


def _lost(rep: dict) -> list[dict]:
    return [f for f in rep["findings"] if "lost" in f["title"].lower()]


def test_the_files_own_truth_every_launch_without_a_kernel_is_inside_the_capture():
    """By hand: the launches no kernel record carries are exactly those made between the capture's begin and end."""
    ev = _events(next(RUN.glob("*.json.gz")))
    begin = [e for e in ev if e.get("name") == "hipStreamBeginCapture"]
    end = [e for e in ev if e.get("name") == "hipStreamEndCapture"]
    assert len(begin) == len(end) == 1 and begin[0]["tid"] == end[0]["tid"]
    lo, hi = begin[0]["ts"], end[0]["ts"] + end[0]["dur"]
    ran = {e["args"]["correlation"] for e in ev if e.get("cat") == "kernel"}
    launches = [e for e in ev if e.get("cat") == "cuda_runtime" and e["name"] in LAUNCHES]
    unrecorded = [e for e in launches if e["args"]["correlation"] not in ran]
    assert len(launches) == 546 and len(ran) == 2 and len(unrecorded) == 544
    assert all(lo <= e["ts"] <= hi and e["tid"] == begin[0]["tid"] for e in unrecorded)
    assert not [e for e in ev if "GraphLaunch" in e.get("name", "")]  # the graph is never replayed


def test_launches_recorded_into_a_graph_are_not_lost_records():
    """The capture is a start-up window: the cold start leads, and no finding says the GPU's records were lost."""
    rep = _report(RUN.parent / RUN.name)
    assert not _lost(rep), [f["title"] for f in _lost(rep)]
    assert rep["findings"][0]["rule"] == "cold_start"
    assert "graph capture" in rep["findings"][0]["summary"]


def test_control_the_same_launches_outside_a_capture_are_lost(tmp_path):
    """Control: the same file with its two capture calls removed -- the 544 launches then ran on the GPU with no
    record, and the accounting still says so."""
    src = next(RUN.glob("*.json.gz"))
    doc = json.loads(gzip.open(src).read())
    doc["traceEvents"] = [e for e in doc["traceEvents"]
                          if e.get("name") not in ("hipStreamBeginCapture", "hipStreamEndCapture")]
    run = tmp_path / "uncaptured"
    run.mkdir()
    with gzip.open(run / src.name, "wt") as f:
        json.dump(doc, f)
    rep = _report(run)
    lost = _lost(rep)
    assert lost and "544 of the 546" in lost[0]["summary"], [f["title"] for f in rep["findings"]]


def test_ops_called_inside_the_capture_give_no_model_flops():
    """The 145 GEMMs of the captured forward (484 GFLOP by their shapes) launched nothing: no MFU is measured from
    them (main said 1.1%, "14.4 TFLOP/s", for a window whose GPU ran 11 us of fills), and the note says why."""
    rep = _report(RUN.parent / RUN.name)
    mfu = [m for m in rep["hosts"][0]["headline"] if m["id"] == "mfu"][0]
    assert mfu["value"] is None, mfu
    assert "recorded into the graph, not run" in mfu["detail"].get("not_available", ""), mfu
