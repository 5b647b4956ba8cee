"""Another tool's Chrome trace that borrows Kineto's ``"schemaVersion"`` key is named as not PyTorch's.

Survey h37-survey21: 99change/Triton_insrt (no licence) instruments a Triton matmul's PTX and writes
``output/trace.json``: ``{"schemaVersion": 1, "traceEvents": [...], "displayTimeUnit": ...}`` with 9,600 ``X`` events,
one per warp (``tid``) and source line (``"cat": "Line 21"`` ... ``"Line 60"``), timed by the GPU's global timer.  The
key made the file pass the Kineto sniff, and main said "nothing recorded ... the profiled code ran no PyTorch work in
it" -- blaming the program for a file the PyTorch profiler never wrote.  The test builds that shape.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.formats.kineto.parse import KinetoReadError
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host

T0 = 1869944675885


def _instrumented(warps: int = 8, lines: tuple[int, ...] = (21, 38, 55, 56, 57, 60)) -> dict:
    """Per-warp spans of an instrumented kernel, one per source line, as the tool lays them out."""
    events = [{"name": f"Line {ln}", "cat": f"Line {ln}", "ph": "X", "ts": T0 + 3 * k, "dur": 2, "pid": 0, "tid": w,
               "args": {"start_index": k, "end_index": k + 1}}
              for w in range(warps) for k, ln in enumerate(lines)]
    return {"schemaVersion": 1, "traceEvents": events, "displayTimeUnit": "ns"}


def _write(tmp_path: Path, doc: dict) -> Path:
    p = tmp_path / "trace.json"
    p.write_text(json.dumps(doc))
    return p


def test_another_tools_trace_with_kinetos_key_is_not_pytorchs(tmp_path: Path):
    path = _write(tmp_path, _instrumented())
    with pytest.raises(KinetoReadError, match=r"a trace, but not PyTorch's: its 48 timed events are of categories "
                                              r"the PyTorch profiler never writes \(`Line 21`, .* and 2 more\)"):
        read_trace(str(path))
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "kineto"))
    assert rep.error and "not PyTorch's" in rep.error and "nothing recorded" not in rep.error and not rep.findings


def test_the_profilers_own_window_keeps_nothing_recorded(tmp_path: Path):
    """The control: with Kineto's own window in it, an unread category does not make the file another tool's."""
    doc = _instrumented(warps=1, lines=(21,))
    doc["traceEvents"].append({"ph": "X", "cat": "Trace", "ts": T0, "dur": 1000, "pid": "Spans",
                               "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", "args": {"Op count": 0}})
    path = _write(tmp_path, doc)
    with pytest.raises(KinetoReadError, match="nothing recorded"):
        read_trace(str(path))
