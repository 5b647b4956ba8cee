"""A step is bounded by what the capture recorded, and a window over a whole capture holds the calls that launched
its work.

Two accounting facts, each on a small hand-written PyTorch trace (truth by construction) and on the real trace of
someone else's job where it was missed (``tests/fixtures/wild``, SURVEY.md):

- no step outlasts the capture: an annotation Kineto closed after the profiler stopped (``ProfilerStep#1`` of 13.3 s
  in a 355 ms capture, ``compiled_a100_triton``) ends where the recording ends;
- a window over a whole capture or one pass starts at the host call that launched its first kernel, so that call's
  FLOPs are counted with its kernel's time (``compiled_mi300x_attn``: the first ``aten::mm`` starts 1.7 us before the
  first kernel).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.steps.detect import detect_steps
from tb_gpu_advisor.steps.types import PS_PER_MS
from tests.support import kineto_doc
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report

WILD = FIXTURES / "wild"
GPU = {"ph": "X", "pid": 0, "tid": 7}
HOST = {"ph": "X", "pid": 1, "tid": 1}


def _write(tmp_path: Path, events: list[dict]) -> str:
    return str(kineto_doc.write(tmp_path / "w.1.pt.trace.json", events))


def _launch(op: str, at: float, kernel_at: float, corr: int, dur: float = 5.0) -> list[dict]:
    """One host op at ``at`` (us) launching one kernel at ``kernel_at``."""
    return [{**HOST, "cat": "cpu_op", "name": op, "ts": at, "dur": 20},
            {**HOST, "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": at + 5, "dur": 5,
             "args": {"correlation": corr}},
            {**GPU, "cat": "kernel", "name": f"kernel_{corr}", "ts": kernel_at, "dur": dur,
             "args": {"correlation": corr, "device": 0, "stream": 7}}]


def _span(start: float, dur: float) -> dict:
    """The profiler's own span (``PyTorch Profiler (0)``, category ``Trace``): the capture window."""
    return {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler",
            "ts": start, "dur": dur}


def _step_ms(path: str) -> list[float]:
    return [w.duration_ms for w in detect_steps(read_trace(path)).detection.windows]


def test_a_step_closed_after_the_capture_stopped_ends_where_the_recording_ends(tmp_path):
    # the capture records 0-1000 us; ProfilerStep#1 was closed 50 s later, after the profiler had stopped
    ev = [_span(0, 1000), {**HOST, "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 100, "dur": 50e6},
          *_launch("aten::add", 110, 200, 1)]
    assert _step_ms(_write(tmp_path, ev)) == pytest.approx([0.9])  # 100 -> 1000 us: never longer than the capture


def test_a_step_inside_the_capture_keeps_its_marks(tmp_path):
    ev = [_span(0, 1000), {**HOST, "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 100, "dur": 400},
          *_launch("aten::add", 110, 200, 1)]
    assert _step_ms(_write(tmp_path, ev)) == pytest.approx([0.4])


def test_work_recorded_past_the_profilers_span_still_bounds_the_step(tmp_path):
    # kernels are written past the profiler's span in real traces (up to 17 ms): the recording ends with them
    ev = [_span(0, 1000), {**HOST, "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 100, "dur": 50e6},
          *_launch("aten::add", 110, 1400, 1, dur=100)]
    assert _step_ms(_write(tmp_path, ev)) == pytest.approx([1.4])  # 100 -> 1500 us, the kernel's end


def test_a_whole_capture_window_starts_at_the_call_that_launched_its_first_kernel(tmp_path):
    # no step marks: one window; the first op is called 30 us before its kernel starts
    ev = [_span(0, 1000), *_launch("aten::mm", 100, 130, 1), *_launch("aten::mm", 140, 150, 2, dur=100)]
    st = detect_steps(read_trace(_write(tmp_path, ev)))
    assert st.count == 1
    (s, e), = st.host_windows.tolist()
    assert s == 0  # the trace's clock starts at its first op, which the window now holds
    assert (e - s) / PS_PER_MS == pytest.approx(0.15)  # 100 -> 250 us: from the first call to the last kernel's end


@cache
def _report(run: str) -> dict:
    s = next(s for s in discover(str(WILD)) if s.run == run)
    return session_report(s).to_dict()


def _host(rep: dict) -> dict:
    return rep["hosts"][0]


def test_compiled_a100_step_is_clipped_to_its_355_ms_capture():
    """``ProfilerStep#1`` claims 13.34 s; the profiler's span ends 1.67 ms after the step starts (truth 1.7 ms)."""
    rows = _host(_report("compiled_a100_triton"))["step_rows"]
    assert rows and all(1.5 <= r["step_ms"] <= 1.8 for r in rows)


def test_compiled_mi300x_block_counts_its_first_gemm():
    """Truth read by hand: four [32768,2048]x[2048,2048] GEMMs a pass, 5.50 TFLOP in all (4 x 0.275 + 3 x 1.10 + the
    attention's 1.10); the first GEMM's op starts on the host 1.7 us before the first kernel."""
    h = _host(_report("compiled_mi300x_attn"))
    mfu = next(c for c in h["headline"] if c["id"] == "mfu")
    assert mfu["detail"]["trace_flops_per_step"] == pytest.approx(5.50e12, rel=0.01)
    calls = [r[3] for r in h["roofline"]["rows"] if "[32768,2048]x[2048,2048]" in r[0]]
    assert calls == [4]
