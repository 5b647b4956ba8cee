"""The Ascend PyTorch Profiler's trace (``torch_npu.profiler``: ``ASCEND_PROFILER_OUTPUT/trace_view.json``) is named as
a job on a Huawei Ascend NPU, with the vendor's tools, not as "another tool's trace ... profile the job with
torch.profiler" -- torch.profiler, through torch_npu, wrote it (survey h37-survey30).

The real file read (Ascend's msprof-analyze test data, `profiler/msprof_analyze/test/ut/advisor/timeline_advice/
trace_view.json`, Mulan PSL v2: read, not kept) is a bare JSON list of 3,670 events: 711 Kineto ``cpu_op`` events of a
small conv net's training step with Adam (``aten::*`` and ``aclnn*`` ops, string times), ``Enqueue``/``Dequeue`` task
queue events, then -- 225 kB into the 635 kB file -- the metadata naming the processes ``Python``, ``Ascend Hardware``
(276 NPU tasks on ``Stream 3``, 1.79 ms busy in an 11.3 ms span), ``CANN`` (382 ``AscendCL@...`` calls) and ``Overlap
Analysis``.  Main said "a trace in Chrome's JSON array form ... written by another tool, not PyTorch's profiler ...
profile the job with torch.profiler ... Nsight Systems", advice that cannot apply to an NPU.  Truth by construction
here: the same shapes, a few events each.
"""

from __future__ import annotations

import json
from pathlib import Path

from tb_gpu_advisor.cli.main import main as cli
from tb_gpu_advisor.discover.logdir import discover, skipped
from tb_gpu_advisor.formats.kineto.layout import sniff

NAMED = "Huawei Ascend NPU"


def _op(name: str, ts: float, dur: float) -> dict:
    return {"ph": "X", "name": name, "pid": 437675, "tid": 437675, "ts": f"{ts:.3f}", "dur": dur, "cat": "cpu_op",
            "args": {"Sequence number": -1, "Fwd thread id": 0}}


def _npu_trace(padding_ops: int = 0, launch_op: bool = True) -> list[dict]:
    """torch_npu's order: the host's ops first, then the processes' names, then the NPU's tasks and AscendCL calls."""
    t0 = 1704161511420306.491
    events = [_op("aten::to", t0 + 170.0, 184.1)]
    if launch_op:  # the host records each operator it launches, among its ATen ops (the real file's first: at 32 kB)
        events.append(_op("aclnnInplaceZero", t0 + 548.6, 16.9))
    events += [_op("aten::empty", t0 + 600.0 + i * 5.0, 3.0) for i in range(padding_ops)]
    events += [
        {"ph": "X", "name": "Enqueue", "pid": 437675, "tid": 437675, "ts": f"{t0 + 2550.4:.3f}", "dur": 13.3,
         "cat": "enqueue", "args": {"correlation_id": 148}},
        {"name": "process_name", "pid": 437675, "tid": 0, "args": {"name": "Python"}, "ph": "M"},
        {"name": "process_name", "pid": 800, "tid": 0, "args": {"name": "Ascend Hardware"}, "ph": "M"},
        {"name": "thread_name", "pid": 800, "tid": 3, "args": {"name": "Stream 3"}, "ph": "M"},
        {"name": "process_name", "pid": 43767502, "tid": 0, "args": {"name": "CANN"}, "ph": "M"},
        {"name": "aclnnInplaceZero_ZerosLikeAiCore_ZerosLike", "pid": 800, "tid": 3, "ts": f"{t0 + 2597.7:.3f}",
         "dur": 1.35, "args": {"Task Type": "AI_CORE", "Stream Id": 3, "Task Id": 279}, "ph": "X"},
        {"name": "AscendCL@aclrtSynchronizeStream", "pid": 43767502, "tid": 437675, "ts": f"{t0 + 282.6:.3f}",
         "dur": 12.8, "args": {"Mode": "ACL_RTS", "level": "acl"}, "ph": "X"},
    ]
    return events


def _write(path: Path, events: list[dict]) -> Path:
    path.write_text("[" + ", ".join(json.dumps(e) for e in events) + "]")
    return path


def test_the_trace_view_given_alone_is_named_as_an_ascend_npu_job(tmp_path: Path, capsys):
    path = _write(tmp_path / "trace_view.json", _npu_trace())
    assert cli(["report", str(path), "--cache-dir", "off"]) == 2
    err = capsys.readouterr().err
    assert NAMED in err and "MindStudio Insight" in err
    assert "written by another tool" not in err and "Nsight Systems (nsys export" not in err


def test_named_when_the_process_names_lie_beyond_the_sniffed_head(tmp_path: Path):
    """The host's ops fill the first 64 kB (torch_npu writes them first); its Ascend operator launch names the job."""
    path = _write(tmp_path / "trace_view.json", _npu_trace(padding_ops=1500))
    assert path.read_text().find('"Ascend Hardware"') > 64 << 10
    why = sniff(str(path))
    assert why is not None and NAMED in why, why


def test_named_by_its_processes_alone(tmp_path: Path):
    path = _write(tmp_path / "trace_view.json", _npu_trace(launch_op=False))
    why = sniff(str(path))
    assert why is not None and NAMED in why, why
    wrapped = tmp_path / "export.json"
    wrapped.write_text(json.dumps({"traceEvents": _npu_trace(launch_op=False)}))
    assert NAMED in (sniff(str(wrapped)) or "")


def test_in_a_logdir_it_is_left_out_by_name(tmp_path: Path):
    out = tmp_path / "worker0_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    _write(out / "trace_view.json", _npu_trace())
    skips = dict(skipped(str(tmp_path)))
    assert any(NAMED in why for why in skips.values()), skips
    assert discover(str(tmp_path)) == []


def test_controls_gpu_traces_and_other_arrays_are_unchanged(tmp_path: Path):
    wild = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "hf_qwen_h100"
    (kept,) = wild.glob("*.pt.trace.json.gz")
    assert sniff(str(kept)) is None
    other = _write(tmp_path / "gpu_trace.json", [{"name": "[MEMCPY] HtoD", "ph": "X", "ts": 1.0, "dur": 8.0,
                                                  "pid": 1, "tid": 7}])
    why = sniff(str(other))
    assert why is not None and "Chrome's JSON array form" in why and NAMED not in why
