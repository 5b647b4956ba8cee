"""A window whose only CUDA calls are the profiler's own ran its code on the CPU (h37-windows2, issue #37 class 4).

The course's A10G capture ``baseline_trace.json`` v1 (Aldo-Zhang/CS521-mp2-private @9fa3c0d; no licence, read in
place, not kept): CUDA activity only, the model and its input left on the CPU (``x = torch.randn(N, C, H, W)``, no
``.cuda()``).  Its 154 ms window holds 4 CUDA calls: ``cudaGetDeviceCount`` x2 and ``cudaGetDeviceProperties_v2``
(the profiler's start), then ``cudaDeviceSynchronize`` of 115.9 ms ending 0.05 ms before the window's end --
``torch.profiler``'s exit sync, which created the context.  Main said "The capture window ended during start-up ...
a capture of the wrong window ... Record the window where PyTorch runs its steps".

The wrong assumption: CUDA calls without a kernel are the program's start-up.  Device queries and a whole-device sync
at the window's end are the profiler's; no call of the profiled code touched the GPU.  Built by
``synthetic.torchtrace.write_profiler_calls_only`` (the real file's calls and times, truth by construction); the
control makes one program call (``cudaMalloc``, which then creates the context) before the profiler's sync: a start-up
window cut short, read as before."""

from __future__ import annotations

from pathlib import Path

from synthetic.torchtrace import write_profiler_calls_only
from tests.support.cli_report import first_report


def _report(tmp_path: Path, program_call: str | None = None, **kw) -> dict:
    path = tmp_path / "run" / "a10g.pt.trace.json"
    path.parent.mkdir(parents=True)
    write_profiler_calls_only(str(path), program_call, **kw)
    return first_report(path)


def _window(rep: dict) -> dict:
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality"]
    return f


def test_the_profilers_own_calls_say_the_code_ran_on_the_cpu(tmp_path: Path):
    rep = _report(tmp_path)
    job = rep["hosts"][0]["job"]
    assert job["kind"] == "no_gpu" and job["gpus_listed"] == "NVIDIA A10G", job
    evidence = job["kind_evidence"]
    assert "the profiler's calls only" in evidence and "so it ran on the CPU" in evidence, evidence
    f = _window(rep)
    assert "wrong window" not in f["summary"] and "start-up" not in f["title"], (f["title"], f["summary"])
    assert "the work ran on the CPU" in f["summary"], f["summary"]


def test_the_fix_says_how_to_check_where_the_model_is(tmp_path: Path):
    snippet = " ".join(a["snippet"] or "" for a in _window(_report(tmp_path))["actions"])
    assert "next(model.parameters()).device" in snippet and "model.to(device)" in snippet, snippet


def test_control_a_program_call_before_the_sync_is_a_start_up_window(tmp_path: Path):
    rep = _report(tmp_path, program_call="cudaMalloc")
    job = rep["hosts"][0]["job"]
    assert job["kind"] == "no_gpu" and job["kind_evidence"].startswith("start-up only"), job
    assert "start-up" in _window(rep)["title"]


def test_the_exit_sync_that_created_the_context_is_said_to(tmp_path: Path):
    """h37-nogpu2: the A10G's 115.9 ms exit sync, the window's first call that needs a context (every call before it
    a device query), is named the context's creation; a sync of 2 ms on the same window is none (control)."""
    assert "which created the context" in _report(tmp_path)["hosts"][0]["job"]["kind_evidence"]
    quick = _report(tmp_path / "quick", sync_us=2_000.0)["hosts"][0]["job"]["kind_evidence"]
    assert "the profiler's calls only" in quick and "created the context" not in quick, quick


def test_a_window_that_records_the_runtimes_start_names_the_sync_from_the_phase(tmp_path: Path):
    """h37-nogpu2: the same window with the runtime's own start recorded before its first query (as an Nsight export
    records ``cuModuleGetLoadingMode``).  Main read it "start-up only: 5 CUDA calls: `cudaDeviceSynchronize` ×1
    (115.9 ms), ..." -- the start taken for a call of the program's, and ``job.phase.context_start`` naming no creating
    call (it took the quick query after the start for it; a query needs no context).  Now the phase names the sync,
    the first call that needs a context, and the profiler's-calls reading asks it."""
    from tb_gpu_advisor.formats.kineto.adapter import read_trace
    from tb_gpu_advisor.job.phase import context_start

    path = tmp_path / "run" / "a10g.pt.trace.json"
    path.parent.mkdir(parents=True)
    write_profiler_calls_only(str(path), runtime_start=True)
    trace = read_trace(str(path))
    created = [trace.h.names[int(trace.h.name[i])] for i in context_start(trace).calls.nonzero()[0]]
    assert created == ["cudaDeviceSynchronize"], created  # main: []
    evidence = first_report(path)["hosts"][0]["job"]["kind_evidence"]
    assert evidence.startswith("the profiler's calls only") and "which created the context" in evidence, evidence


def test_control_the_runtimes_start_then_a_quick_sync_names_no_creation(tmp_path: Path):
    """Control: the runtime's start recorded and a 0.5 ms exit sync -- the phase names no call (under
    ``job.one_time_launch_ms``), and the words say no creation."""
    evidence = _report(tmp_path, runtime_start=True, sync_us=500.0)["hosts"][0]["job"]["kind_evidence"]
    assert evidence.startswith("the profiler's calls only") and "created the context" not in evidence, evidence
