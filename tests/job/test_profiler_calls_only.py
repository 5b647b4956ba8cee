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


def _report(tmp_path: Path, program_call: str | None = None) -> dict:
    path = tmp_path / "run" / "a10g.pt.trace.json"
    path.parent.mkdir(parents=True)
    write_profiler_calls_only(str(path), program_call)
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
