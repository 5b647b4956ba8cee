"""A window with no GPU work is told its fix in the words of the GPUs it lists (issue #37 class 1: never CUDA words
on AMD; h37-window62).

``jax.profiler.trace`` around ``train`` steps whose work stayed on the host, on an MI300X: the capture's
``/device:GPU:0`` plane names the GPU (ROCm's plugin saw it), and nothing ran on it.  The report's vendor was asked
only of GPUs that ran work, so it was none, the words NVIDIA's: "the arrays the step runs on: CudaDevice, not
CpuDevice" -- where ROCm's JAX prints ``RocmDevice(id=0)`` (ROCm's JAX install guide; jax-ml/jax ``device_test.py``'s
ROCm branches).  The wrong assumption: *a GPU that ran nothing says nothing of its vendor*.

Truth by construction: ``synthetic.jaxcapture.write_host_only_window(gpu=..., rocm=True)``.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from synthetic import jaxcapture as jc
from synthetic.tfcapture import Gpu
from tb_gpu_advisor import devices
from tb_gpu_advisor.cli import main as cli

MI300X = Gpu("AMD Instinct MI300X", (9, 4), 304, 2100000, 5300000000000, 205822885888)


def _report(logdir: Path) -> dict:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        assert cli.main(["report", str(logdir), "--format", "json", "--cache-dir", "off"]) == 0
    (rep,) = json.loads(out.getvalue())["reports"]
    return rep


def _window_code(rep: dict) -> str:
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality"]
    return "\n".join(a["snippet"] or "" for a in f["actions"])


def test_an_amd_gpu_that_ran_nothing_gets_rocms_device_words(tmp_path: Path) -> None:
    truth = jc.write_host_only_window(tmp_path, "steps", fetch=None, gpu=MI300X, rocm=True)
    rep = _report(tmp_path / "steps")
    (host,) = rep["hosts"]
    assert host["job"]["gpus_listed"] == truth["gpu"]
    code = _window_code(rep)
    assert "RocmDevice, not CpuDevice" in code, code  # main: "CudaDevice, not CpuDevice"
    assert "CudaDevice" not in code and "cuda" not in code.lower()
    assert host["capture"]["vendor"] == "AMD"  # main: None


def test_control_an_nvidia_gpu_that_ran_nothing_keeps_cudas_words(tmp_path: Path) -> None:
    jc.write_host_only_window(tmp_path, "steps", fetch=None)
    code = _window_code(_report(tmp_path / "steps"))
    assert "CudaDevice, not CpuDevice" in code


def test_a_gpu_no_vendor_names_is_claimed_by_none() -> None:
    """No default: a bare "GPU" (a viewer JSON's unnamed plane) or two vendors' GPUs name no vendor."""
    assert devices.vendor_claimed(["AMD Instinct MI300X"]) == "AMD"
    assert devices.vendor_claimed(["NVIDIA H100 80GB HBM3"]) == "NVIDIA"
    assert devices.vendor_claimed(["GPU"]) is None
    assert devices.vendor_claimed(["NVIDIA A100-SXM4-40GB", "AMD GPU"]) is None


# --- ROCm's PyTorch profiled with ``activities=[ProfilerActivity.CPU]`` on an MI300X: no call, kernel or copy, the
# header's ``deviceProperties`` listing the AMD GPU.  Main: "The capture recorded no CUDA activity", "holds no CUDA
# call", "its GPU tracer (CUPTI) recorded nothing", "use a PyTorch build made for the installed driver's CUDA, or record
# the same steps with Nsight Systems" -- ROCm's PyTorch records HIP through roctracer under the same
# ``ProfilerActivity.CUDA`` (pytorch/kineto ``RocprofActivity_inl.h``), and rocprofv3 is its system profiler.


def _kineto_cpu_only(tmp_path: Path, rocm: bool) -> tuple[dict, str]:
    from synthetic import torchtrace as tt

    run = tmp_path / ("rocm" if rocm else "cuda")
    run.mkdir()
    truth = tt.write_cuda_activity_off(str(run / "node0_4500.1.pt.trace.json"), rocm=rocm)
    assert not truth["cuda_recorded"]
    rep = _report(run)
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality"]
    (host,) = rep["hosts"]
    text = " ".join([f["title"], f["summary"], host["job"]["kind_evidence"]]
                    + [a["text"] + " " + (a["snippet"] or "") for a in f["actions"]])
    return f, text


def test_rocms_pytorch_without_gpu_activity_is_told_in_rocms_words(tmp_path: Path) -> None:
    f, text = _kineto_cpu_only(tmp_path, rocm=True)
    assert f["title"] == "The capture recorded no HIP activity: the GPU's work is not in it", f["title"]
    assert "holds no HIP call, kernel or copy" in text and "rocprofv3" in text
    # the tracer of either Kineto build: roctracer, then rocprofiler-sdk (pytorch/kineto #1249; 2aa60c44: "(roctracer)"
    # alone), as the vendor's words give CUPTI (h37-review62)
    assert "its GPU tracer (roctracer / rocprofiler-sdk) recorded nothing" in text, text
    assert devices.amd.words("CUPTI") == devices.amd.TERMS["gpu_tracer"]
    assert "ProfilerActivity.CUDA" in text  # PyTorch's own enum, the same on ROCm
    for cuda_only in ("CUPTI", "Nsight", "CUDA call", "CUDA activity", "CUDA runtime", "driver's CUDA"):
        assert cuda_only not in text, cuda_only


def test_control_cudas_pytorch_without_gpu_activity_keeps_cudas_words(tmp_path: Path) -> None:
    f, text = _kineto_cpu_only(tmp_path, rocm=False)
    assert f["title"] == "The capture recorded no CUDA activity: the GPU's work is not in it"
    assert "(CUPTI)" in text and "Nsight Systems" in text and "roctracer" not in text
