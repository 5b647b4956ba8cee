"""Where the capture lost the GPU's records, the host's wait in a scalar read is still the host's, measured on the
host: the host-sync check names it (issue #37, h37-left22).

The real case (kept: ``wild/scattermoe_h200_item_sync``, XAheli/torch-profiler's ScatterMoE forward on an H200, MIT):
ProfilerActivity.CUDA asked for, no CUDA record in the file; each of 3 steps of ~5.1 ms blocks 2.3 ms in
``aten::item`` > ``aten::_local_scalar_dense`` under ``aten::bincount`` (bincount sizing its output from the max).
Main named that read only as the evidence that a GPU was used.  The truth is read here from the file's own events,
not from the Advisor: each ``ProfilerStep#N`` and the reads inside it.
"""

from __future__ import annotations

import gzip
import json
from types import SimpleNamespace

import pytest

from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import FIXTURES

(SCATTER,) = (FIXTURES / "wild" / "scattermoe_h200_item_sync").glob("*.pt.trace.json.gz")
(GEMM,) = (FIXTURES / "wild" / "gemm_h200_cuda_unrecorded").glob("*.pt.trace.json.gz")


def _findings(path: str) -> list[dict]:
    hosts = [SimpleNamespace(host="h0", path=path, format="kineto", size=0)]
    return analyze_session("x", "s", hosts).to_dict()["findings"]


def _read_ms_per_step(doc: dict) -> float:
    """The file's own truth: ``aten::_local_scalar_dense`` time inside the ``ProfilerStep#N`` windows, per step."""
    ev = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in ev if str(e.get("name", "")).startswith("ProfilerStep#")]
    reads = [e for e in ev if e.get("name") == "aten::_local_scalar_dense"]
    inside = sum(e["dur"] for e in reads if any(a <= e["ts"] < b for a, b in steps))
    return inside / 1000.0 / len(steps)


def test_the_hosts_wait_in_a_read_is_named_without_the_gpus_records() -> None:
    truth = _read_ms_per_step(json.loads(gzip.decompress(SCATTER.read_bytes())))
    assert truth == pytest.approx(2.31, abs=0.05)  # the survey's reading, by hand
    found = _findings(str(SCATTER))
    assert found[0]["rule"] == "capture_quality"  # what the capture is comes first
    (sync,) = [f for f in found if f["rule"] == "host_sync"]
    assert sync["metric"]["detail"]["wait_ms_per_step"] == pytest.approx(truth, rel=0.01)
    assert "under `aten::bincount`" in sync["summary"] and "recorded no CUDA activity" in sync["summary"]
    assert sync["saving"] is None  # the GPU's idle behind the wait is not in the capture: nothing is sized
    assert any("scatter_add_" in a["text"] or "scatter_add_" in (a.get("code") or "") for a in sync["actions"])


def test_reads_at_a_hosts_pace_are_no_wait(tmp_path) -> None:  # noqa: ANN001 - pytest's tmp_path
    """Control by construction: the same capture, every read shortened to 3 us (a read of host memory)."""
    doc = json.loads(gzip.decompress(SCATTER.read_bytes()))
    for e in doc["traceEvents"]:
        if e.get("name") in ("aten::item", "aten::_local_scalar_dense"):
            e["dur"] = 3.0
    path = tmp_path / "short_reads.1.pt.trace.json"
    path.write_text(json.dumps(doc))
    assert not [f for f in _findings(str(path)) if f["rule"] == "host_sync"]


def test_lost_records_without_a_waiting_read_name_no_wait() -> None:
    """Control: the GEMM benchmark lost its GPU records too, but no read of it waited."""
    assert not [f for f in _findings(str(GEMM)) if f["rule"] == "host_sync"]
