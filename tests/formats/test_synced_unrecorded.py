"""Kernels the program waited for, whose records the profiler dropped: no "let the GPU finish" fix (issue #37
class 1; h37-survey73).

A Kineto trace whose CUDA calls launched kernels but that holds no kernel record was told, whatever the file
showed, "let the GPU finish its work before the profiler stops" with a ``torch.cuda.synchronize()`` before the end.
Where the program's own ``cudaDeviceSynchronize`` begins after its last launch, every kernel ran inside the window:
the profiler's GPU tracer (CUPTI) recorded the calls and none of their kernels, and the fix asked for what the
program already does (``formats.kineto.adapter._synced_unrecorded``).

- real: ``wild/lost_kernels_synced_a40`` (jacobcd52/dictionary_learning, MIT: an A40's analysis call, 9 launches,
  ``cudaDeviceSynchronize`` 8.72 ms after the last; no kernel record);
- generator: ``synthetic.torchtrace.write_synced_unrecorded`` (truth by construction: the final sync's wait);
  control: the same launches with no sync at the end keep the general fix.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.report_store import session_report

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "lost_kernels_synced_a40"
GENERAL = "let the GPU finish its work before the profiler stops"


def _words(path: Path) -> str:
    """The lost-records finding's summary and fixes, in words."""
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "kineto"))
    assert rep.error is None, rep.error
    (f,) = [f for f in rep.findings if f.title == "The capture lost its GPU records"]
    return " ".join([f.summary, *(f"{a.text} {a.snippet}" for a in f.actions)])


def test_a_real_capture_that_synced_is_not_told_to_sync():
    """Main: "let the GPU finish its work before the profiler stops" and `torch.cuda.synchronize()` as the fix."""
    (trace,) = WILD.glob("*.pt.trace.json.gz")
    words = _words(trace)
    assert GENERAL not in words, words
    assert "`cudaDeviceSynchronize`, 8.72 ms, before the profiler stopped" in words, words
    assert "already waits for the GPU" in words


@pytest.mark.parametrize("steps", [2, 4])
def test_a_generated_synced_window_names_its_wait(tmp_path, steps):
    p = tmp_path / "synced.1.pt.trace.json"
    truth = tt.write_synced_unrecorded(str(p), steps=steps)
    words = _words(p)
    assert GENERAL not in words, words
    assert f"`cudaDeviceSynchronize`, {truth['wait_ms']:.2f} ms, before the profiler stopped" in words, words


def test_a_window_cut_with_kernels_queued_keeps_the_general_fix(tmp_path):
    """Control: no sync after the last launch -- the kernels may still have run at the stop: wait for the GPU."""
    p = tmp_path / "cut.1.pt.trace.json"
    tt.write_synced_unrecorded(str(p), final_sync=False)
    words = _words(p)
    assert GENERAL in words and "already waits" not in words, words


def test_generated_lost_records_with_memory_give_the_gpu_its_row_and_no_time(tmp_path):
    """By construction (``held_bytes``/``step_bytes``): the allocator's events of a capture that lost every kernel record
    give GPU 0 its row -- the header's name and memory, the allocator's peak -- and no GPU time; the lost records
    lead.  Main: no GPU row (the memory without a GPU)."""
    path = tmp_path / "w.pt.trace.json"
    truth = tt.write_synced_unrecorded(str(path), held_bytes=60 << 30, step_bytes=8 << 30)
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "kineto"))
    assert rep.error is None, rep.error
    (g,) = rep.gpus
    assert g.name == tt.H100["name"] and g.kernel_count == 0 and g.step_ms is None and g.busy_share is None
    assert g.memory["peak_allocated_bytes"] == truth["peak_allocated_bytes"] == (60 << 30) + (8 << 30)
    assert g.memory["capacity_bytes"] == truth["device_bytes"]
    assert rep.findings[0].title == "The capture lost its GPU records"


def test_a_hip_window_that_synced_is_read_in_hips_words(tmp_path):
    """ROCm's PyTorch: the same window with HIP's calls (``hipDeviceSynchronize`` after the last ``hipLaunchKernel``).
    Main read only ``cudaDeviceSynchronize``, so it told the HIP program "let the GPU finish" (h37-amdmps35)."""
    p = tmp_path / "synced_hip.1.pt.trace.json"
    truth = tt.write_synced_unrecorded(str(p), hip=True)
    words = _words(p)
    assert GENERAL not in words, words
    assert f"`hipDeviceSynchronize`, {truth['wait_ms']:.2f} ms, before the profiler stopped" in words, words
    assert "recorded the HIP calls" in words and "CUPTI" not in words, words


def _session(path: Path):  # noqa: ANN202 - a Report
    """The one session's report of the capture in ``path``'s folder, analysed in this process."""
    from tb_gpu_advisor.discover.logdir import discover
    
    (s,) = discover(str(path.parent))
    return session_report(s)


def test_a_hip_window_that_synced_is_told_rocms_build_and_profiler(tmp_path):
    """ROCm's PyTorch, its kernel records dropped after its own ``hipDeviceSynchronize``: the fix names the ROCm build
    and rocprofv3 (``devices.amd.TERMS``), chosen by the calls' vendor -- the window names no GPU.  Main: "with a
    PyTorch build made for the installed driver's CUDA, or record the same steps with Nsight Systems" (h37-hiprocm36);
    the report's own words law (``vendor_words_problems``, which now reads Nsight and a CUDA build as CUDA's tools on
    an AMD host) holds, the host's vendor its runtime's (``job.runtime_vendor``: ``capture.vendor`` AMD, so the legend
    and tables say hipMalloc and Matrix Cores, not cudaFree and Tensor Cores)."""
    from tests.support.contradictions import vendor_words_problems
    from tests.support.json_fields import json_field_problems

    p = tmp_path / "synced_hip.1.pt.trace.json"
    tt.write_synced_unrecorded(str(p), hip=True)
    words = _words(p)
    assert "a ROCm build of PyTorch made for the installed ROCm" in words and "rocprofv3" in words, words
    assert "Nsight" not in words and "driver's CUDA" not in words, words
    report = _session(p)
    (h,) = report.hosts
    assert h.job["runtime_vendor"] == h.capture["vendor"] == "AMD"  # the legend's and tables' words too
    assert not vendor_words_problems(report), vendor_words_problems(report)
    assert not json_field_problems(report.to_dict()), json_field_problems(report.to_dict())


def test_a_cuda_window_that_synced_keeps_cudas_build_and_nsight(tmp_path):
    """Control: the same window of CUDA's calls is told CUDA's build and Nsight Systems, as before."""
    p = tmp_path / "synced.1.pt.trace.json"
    tt.write_synced_unrecorded(str(p))
    words = _words(p)
    assert "a PyTorch build made for the installed driver's CUDA" in words and "Nsight Systems" in words, words


def test_the_first_wait_is_read_by_time_not_by_row(tmp_path):
    """Kineto writes its rows out of time order (real traces are not sorted by ``ts``): where a later, short
    ``cudaDeviceSynchronize`` stands in an earlier row than the one that drained the GPU, the wait told is the
    drain's, the first by time.  Main read the first by row: the later sync's 0.05 ms."""
    p = tmp_path / "synced.1.pt.trace.json"
    truth = tt.write_synced_unrecorded(str(p))
    doc = json.loads(p.read_text())
    evs = doc["traceEvents"]
    (drain,) = [e for e in evs if e.get("name") == "cudaDeviceSynchronize"]
    later = {**drain, "ts": round(drain["ts"] + drain["dur"] + 5.0, 3), "dur": 50.0,
             "args": {**drain["args"], "correlation": drain["args"]["correlation"] + 1}}
    doc["traceEvents"] = [later, *evs]
    p.write_text(json.dumps(doc))
    words = _words(p)
    assert f"`cudaDeviceSynchronize`, {truth['wait_ms']:.2f} ms, before the profiler stopped" in words, words
