"""A program whose process holds the CUDA driver's own thread initialised CUDA: a window without CUDA records did not
trace it, and is no proof the program ran on the CPU.

YijiaZhao/NVTX-example's ``quickstart.sqlite`` @3351c13 (read locally: no licence; survey h37-survey14) trains a
LeNet with NVTX ranges and no ``.cuda()``; its export holds NVTX and OS-runtime tables, no CUDA table, no capture
options (Nsight 2022.1) -- and a thread ``cuda-EvtHandlr`` in its ``python`` process, running 0.5 s into the training
loop: the CUDA driver initialised there.  Main reported "NVTX ranges only", hedged ("no CUDA table at all is what
tracing NVTX alone leaves"); the report cannot say "no CUDA call at all", and says CUDA was not traced.

Truth by construction (``synthetic.nsysexport.write_window``, ``driver_thread``); controls: the thread in Nsight's own
process (its CLI queries the GPUs), and an export whose options say CUDA tracing was on.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

from synthetic import nsysexport as nx
from tb_gpu_advisor.runtime.pipeline import analyze_session


def _job(path) -> dict:
    hosts = [SimpleNamespace(host="h0", path=str(path), format="nsys", size=os.path.getsize(path))]
    (host,) = analyze_session("w", "s", hosts).to_dict()["hosts"]
    return host["job"]


def test_the_drivers_thread_in_the_program_says_cuda_went_untraced(tmp_path):
    p = tmp_path / "untraced.sqlite"
    nx.write_window(str(p), "nvtx_only", driver_thread="program", options=False)
    job = _job(p)
    assert job["kind_evidence"].startswith("CUDA was not traced: the CUDA driver initialised in the program"), job
    assert "cuda-EvtHandlr" in job["kind_evidence"] and "only NVTX ranges" in job["kind_evidence"]


def test_the_drivers_thread_in_nsys_own_process_says_nothing_of_the_program(tmp_path):
    p = tmp_path / "profiler.sqlite"
    nx.write_window(str(p), "nvtx_only", driver_thread="profiler", options=False)
    job = _job(p)
    assert job["kind_evidence"].startswith("NVTX ranges only"), job
    assert "tracing NVTX alone" in job["kind_evidence"]


def test_options_that_say_cuda_was_traced_are_believed(tmp_path):
    p = tmp_path / "traced.sqlite"
    nx.write_window(str(p), "nvtx_only", driver_thread="program")
    job = _job(p)
    assert job["kind_evidence"].startswith("NVTX ranges only") and "with CUDA tracing on" in job["kind_evidence"], job


def test_ranges_over_untraced_cuda_time_no_gpu_step(tmp_path):
    """h37-tidy29: the window's GPU side went unrecorded (``job.gpu_unrecorded``), so its NVTX ranges time no GPU step
    -- whatever its kind: here ``unknown`` (the driver initialised in the program), where main held 4 step rows of
    7.00 ms (the ranges, booked as the host's time) and a title "4 steps, step 7.00 ms" beside that key.  One property
    (``job.kind.Kind.times_gpu_step``) answers it for both kinds."""
    from tb_gpu_advisor.report import render

    p = tmp_path / "untraced.sqlite"
    nx.write_window(str(p), "nvtx_only", driver_thread="program", options=False)
    hosts = [SimpleNamespace(host="h0", path=str(p), format="nsys", size=os.path.getsize(p))]
    report = analyze_session("w", "s", hosts)
    (host,) = report.to_dict()["hosts"]
    assert host["job"]["kind"] == "unknown" and host["job"]["gpu_unrecorded"] is True, host["job"]
    assert host["steps"]["count"] == 4 and not host["step_rows"] and not report.achievable, report.achievable
    assert "no step: the capture did not record the GPU's work" in render.to_text(report).splitlines()[0]
