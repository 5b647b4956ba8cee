"""JAX's jitted calls with none of their work recorded: where the executables' names tell the backend, say it; where
nothing does, where the work ran is not shown (h37-jaxunrec70, issue #37 class 1: a window with no GPU work;
h37-hunt70d's *Left* 2).

Truth by construction (``synthetic.jaxcapture``: what jaxlib 0.11 writes for a jitted call on an H100).  A capture
whose GPU tracer (CUPTI) recorded nothing keeps the host's TraceMes -- ``PjitFunction(train_step)``, PjRt's
``...::Execute`` chain, ``[0] GpuExecutable::ExecuteThunks``, ``jit_train_step:XLA GPU module`` -- and loses every CUDA
API record and kernel (:class:`_NoCupti`).  Base dbf6cf15 read such a loop "high confidence: ... the host made no GPU
runtime call: the work ran on the CPU ... move the model and its inputs there", its GPU plane empty or absent.

* GPU executables named: the GPU's side was not recorded (window ``kernels_unrecorded``), the fix CUPTI's.
* CPU executables named (``TfrtCpuExecutable::Execute``, ``xla/pjrt/cpu/cpu_client.cc``): the work ran on the CPU, with
  the executables as its evidence (control: base said "ran on the CPU" too, without them).
* No executable named (the PjRt C API's ``PjRtCApiLoadedExecutable::Execute`` alone): ``ops_unrecorded``, "where it
  ran is not shown", the fix ``jax.devices()`` and CUPTI's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import jaxcapture as jc
from tests.support.cli_report import cli_report

_SESSION = "plugins/profile/2026_01_01_00_00_00"


class _NoCupti(jc.JaxCapture):
    """The host's TraceMes of each call, and no CUPTI record: the host callbacks' ``cuLaunchHostFunc`` is not written
    (CUPTI records the CUDA API calls, as it records the kernels)."""

    def _callback(self, line, name, at):
        line.add("LocalDeviceState::WaitFor", at + 300_000, 2_500_000)
        end = at + 3_500_000
        line.add(f"ThenExecuteCallback:{name}", at, end - at)
        return end


def _write(root: Path, gpu_plane: bool = True, backend: str = "gpu") -> Path:
    cap = _NoCupti(jitter=0.0, module_events=backend == "gpu")
    for _ in range(6):
        cap.call([], h2d_bytes=0, sync=False, between_us=300.0)
    space = cap.finish()
    if not gpu_plane:
        space.planes = [p for p in space.planes if not p.name.startswith("/device:")]
    names = {"gpu": None, "cpu": "TfrtCpuExecutable::ExecuteHelper", "none": "PjRtCApiLoadedExecutable::Run"}
    if names[backend]:
        _retitle(space, "[0] GpuExecutable::ExecuteThunks", names[backend])
    path = root / "run" / _SESSION / "jaxhost.xplane.pb"
    space.write(path)
    return root / "run"


def _retitle(space, old: str, new: str) -> None:
    """The host events named ``old`` named ``new`` (an event's name is its metadata's)."""
    for plane in space.planes:
        if old in plane._events:
            plane._events[new] = plane._events.pop(old)


def _read(run: Path) -> tuple[dict, dict]:
    host = cli_report(run)["hosts"][0]
    (f,) = [f for f in host["findings"] if f["rule"] == "capture_quality" and f["severity"] == "warning"]
    return host["job"], f


@pytest.mark.parametrize("gpu_plane", [True, False], ids=["gpu_plane_empty", "no_gpu_plane"])
def test_jitted_calls_compiled_for_the_gpu_with_no_kernel_recorded_are_gpu_work_unrecorded(tmp_path, gpu_plane):
    job, f = _read(_write(tmp_path, gpu_plane=gpu_plane))
    assert job["kind"] == "unknown" and job["kind_confidence"] == "low", job
    ev = job["kind_evidence"]
    assert "ran on the CPU" not in ev and "GpuExecutable::ExecuteThunks" in ev and "compiled for the GPU" in ev, ev
    assert "not recorded" in f["title"] and "move the model" not in f["summary"], f
    fixes = " ".join((a["text"] or "") + (a["snippet"] or "") for a in f["actions"])
    # CUPTI where the GPU plane names NVIDIA; the vendor-neutral "device tracer" where no plane names a vendor
    assert ("CUPTI" in fixes or "device tracer" in fixes) and "move the model" not in fixes, fixes


def test_jitted_calls_whose_backend_no_event_names_are_no_proof_of_work_on_the_cpu(tmp_path):
    job, f = _read(_write(tmp_path, backend="none"))
    assert job["kind"] == "unknown" and job["kind_confidence"] == "low", job
    ev = job["kind_evidence"]
    assert "ran on the CPU" not in ev and "jitted call" in ev and "PjitFunction(train_step)" in ev, ev
    assert "where it ran is not shown" in ev and "compiled for the GPU" not in ev, ev
    fixes = " ".join((a["text"] or "") + (a["snippet"] or "") for a in f["actions"])
    assert "jax.devices()" in fixes and ("CUPTI" in fixes or "device tracer" in fixes), fixes


def test_control_jitted_calls_compiled_for_the_cpu_ran_on_the_cpu_and_say_so(tmp_path):
    """Control for the kind (base: "the work ran on the CPU" too); the executables as evidence are new."""
    job, _ = _read(_write(tmp_path, gpu_plane=False, backend="cpu"))
    assert job["kind"] == "no_gpu" and "ran on the CPU" in job["kind_evidence"], job
    assert "compiled for the CPU (`TfrtCpuExecutable::ExecuteHelper`" in job["kind_evidence"], job
