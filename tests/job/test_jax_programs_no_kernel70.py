"""A JAX window whose GPU tracer recorded the CUDA calls and no kernel, while the host ran executions of programs
compiled for the GPU: the programs launched nothing -- no start-up (h37-jaxunrec70 *Left* 1, issue #37 class 1).

Truth by construction (``synthetic.jaxcapture``: what jaxlib 0.11 writes for a jitted call on an H100): 6 jitted
calls, each ``[0] GpuExecutable::ExecuteThunks`` whose only CUDA call is its host callback's ``cuLaunchHostFunc``,
no kernel.  Base (dbf6cf15 and main 16457fc0) read it "start-up only: 6 CUDA calls ... no kernel was launched in the
window", titled "The capture window ended during start-up".  Control: the same loop with its kernels recorded."""

from __future__ import annotations

from pathlib import Path

from synthetic import jaxcapture as jc
from tests.support.cli_report import cli_report

_SESSION = "plugins/profile/2026_01_01_00_00_00"


def _write(root: Path, kernels: bool) -> Path:
    cap = jc.JaxCapture(jitter=0.0, module_events=True)
    for _ in range(6):
        cap.call(jc.SWEEP_BODY if kernels else [], h2d_bytes=0, sync=False, between_us=300.0)
    cap.finish().write(root / "run" / _SESSION / "jaxhost.xplane.pb")
    return root / "run"


def test_gpu_programs_that_launched_no_kernel_are_no_start_up(tmp_path: Path):
    host = cli_report(_write(tmp_path, kernels=False))["hosts"][0]
    job = host["job"]
    ev = job["kind_evidence"]
    assert "start-up" not in ev and "GpuExecutable::ExecuteThunks" in ev and "launched no kernel" in ev, ev
    assert "cuLaunchHostFunc" in ev, ev
    (f,) = [f for f in host["findings"] if f["rule"] == "capture_quality" and f["severity"] == "warning"]
    assert "start-up" not in f["title"] and "launched no kernel" in f["title"], f["title"]


def test_control_the_same_loop_with_its_kernels_is_gpu_work(tmp_path: Path):
    job = cli_report(_write(tmp_path, kernels=True))["hosts"][0]["job"]
    assert job["kind"] != "no_gpu" and "launched no kernel" not in job["kind_evidence"], job
