"""A window in which no GPU ran work speaks the vendor its runtime calls name; NCCL's names alone name no vendor
(issue #37 class 1; h37-vendor66's *Left* 1 and 2, h37-hipwin66).

Truth by construction (``synthetic.torchtrace.write_vendor_windows``): the ``rocm_unnamed`` form is ROCm's PyTorch
with neither ``deviceProperties`` nor ROCm's version keys -- what is left to say AMD is HIP's calls
(``hipGetDeviceCount``, ``hipDeviceSynchronize``); the ``cuda_unnamed`` form CUDA's the same way.  On base
(f2224339) a window whose GPUs ran nothing (the profiler's calls only, the loop's end: kind ``no_gpu``) kept
``capture.vendor`` None and its words NVIDIA's, the default: the legend's allocator row said ``cudaMalloc`` /
``cudaFree`` beside HIP's calls.  ``devices.vendor_known`` read ``nccl`` (a backend, c10d's ``nccl:all_reduce``,
``ncclDevKernel_*``) alone as NVIDIA's, though ROCm's PyTorch names its backend ``nccl`` and RCCL keeps NCCL's
kernel names: the ROCm window that lost its GPU side was told CUDA and CUPTI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor import devices
from tb_gpu_advisor.report.render import to_markdown, to_text
from tb_gpu_advisor.serve.mcp_server import capture_advice_text, report_text
from tests.support.contradictions import vendor_words_problems
from tests.support.json_fields import vendor_problems
from tests.support.run_report import doc_host, fresh_report

#: The windows in which no GPU ran work but the host's runtime calls stand (kind ``no_gpu``).
_NO_GPU_WINDOWS = ("write_profiler_calls_only", "write_loop_ended")


def _window(tmp_path: Path, writer: str, form: str):
    (run,) = tt.write_vendor_windows(str(tmp_path / "logs"), writers=(writer,), forms=(form,))
    return fresh_report(tmp_path / "logs" / run)


def _every_text(r) -> str:
    """The CLI's text and markdown and the MCP's report and capture advice, one string."""
    return "\n".join([to_text(r), to_markdown(r), report_text(r, "text", 10), capture_advice_text(r)])


@pytest.mark.parametrize("writer", _NO_GPU_WINDOWS)
def test_a_hip_window_with_no_gpu_work_speaks_amds_words(tmp_path: Path, writer: str) -> None:
    """HIP's calls alone: AMD is the runtime's vendor and the capture's words (base: ``capture.vendor`` None,
    ``cudaMalloc`` / ``cudaFree`` in the legend); the JSON law holds (the vendor claimed is the runtime's)."""
    r = _window(tmp_path, writer, "rocm_unnamed")
    (h,) = r.hosts
    assert (h.job or {}).get("kind") == "no_gpu"
    assert h.capture["vendor"] == "AMD" and h.job["runtime_vendor"] == "AMD"
    assert vendor_problems(r.to_dict()["hosts"][0]) == []
    assert vendor_words_problems(r, truth="AMD") == []
    text = _every_text(r)
    # ROCm's PyTorch keeps `torch.cuda`'s API: the code may say it; the words are HIP's
    assert "cudaMalloc" not in text and "CUDA call" not in text and "CUPTI" not in text
    assert "HIP calls" in text


@pytest.mark.parametrize("writer", _NO_GPU_WINDOWS)
def test_a_cuda_window_with_no_gpu_work_names_nvidia(tmp_path: Path, writer: str) -> None:
    """The twin of CUDA's calls alone: NVIDIA, by its calls (base: None; its words NVIDIA's by default)."""
    r = _window(tmp_path, writer, "cuda_unnamed")
    (h,) = r.hosts
    assert h.capture["vendor"] == "NVIDIA" and h.job["runtime_vendor"] == "NVIDIA"
    assert vendor_problems(r.to_dict()["hosts"][0]) == []
    assert vendor_words_problems(r, truth="NVIDIA") == []


def test_a_cpu_window_with_no_runtime_call_claims_no_runtime(tmp_path: Path) -> None:
    """Control: the same window written for a runtime nobody's table knows (``xrt*`` calls) claims no vendor's runtime
    (``unknown`` as on base)."""
    r = _window(tmp_path, "write_profiler_calls_only", "unknown")
    (h,) = r.hosts
    assert (h.job or {}).get("runtime_vendor") in (None, devices.UNKNOWN)
    assert h.capture["vendor"] in (None, devices.UNKNOWN)


def test_a_rocm_window_whose_only_library_word_is_nccl_speaks_no_cuda(tmp_path: Path) -> None:
    """ROCm's data-parallel window that lost its GPU side, whose one vendor-like word is c10d's ``nccl:all_reduce``:
    NCCL's name is RCCL's too, so no vendor is claimed and no CUDA word is said (base: NVIDIA, "CUDA", "CUPTI")."""
    r = _window(tmp_path, "write_unrecorded_gpu_steps", "rocm_unnamed")
    (h,) = r.hosts
    assert h.capture["vendor"] == devices.NCCL_GPU  # NVIDIA's or AMD's, not known which (h37-late67)
    assert vendor_words_problems(r, truth="AMD") == []
    assert vendor_words_problems(r, truth=devices.NCCL_GPU) == []


@pytest.mark.parametrize(("calls", "kernels", "libraries", "vendor"), [
    # NCCL's names alone: NVIDIA's or AMD's, not known which (h37-late67)
    ((), (), ("nccl",), devices.NCCL_GPU),
    ((), ("ncclDevKernel_Generic",), (), devices.NCCL_GPU),
    ((), (), ("NCCL",), devices.NCCL_GPU),
    (("hipLaunchKernel",), ("ncclDevKernel_Generic",), ("nccl",), "AMD"),  # other evidence decides
    (("cudaLaunchKernel",), ("ncclDevKernel_Generic",), ("nccl",), "NVIDIA"),
    ((), (), ("rccl",), "AMD"),
])
def test_nccl_alone_is_no_vendor_evidence(calls, kernels, libraries, vendor) -> None:
    """``devices.vendor_known``: NCCL's names say nothing on their own (base: NVIDIA for the first three)."""
    assert devices.vendor_known(calls, kernels, libraries) == vendor


def test_a_lost_window_named_only_by_nccl_is_nobodys(tmp_path: Path) -> None:
    """A window that lost its GPU side in a file naming no vendor, one c10d ``nccl:all_reduce`` a step: no vendor
    (base: NVIDIA, h37-vendor66's rule)."""
    path = tmp_path / ".w.json"
    tt.write_cuda_activity_off(str(path))
    doc = tt.as_unknown_vendor(json.loads(path.read_text()))
    step = next(e for e in doc["traceEvents"] if e.get("name", "").startswith("ProfilerStep#"))
    doc["traceEvents"].append({"ph": "X", "cat": "cpu_op", "name": "nccl:all_reduce", "pid": step["pid"],
                               "tid": step["tid"], "ts": step["ts"] + 1, "dur": 2, "args": {}})
    host = doc_host(tmp_path, doc, "node0_4500.1.pt.trace.json")
    assert host["capture"]["vendor"] == devices.NCCL_GPU  # NVIDIA's or AMD's, not known which (h37-late67)
    assert host["job"]["runtime_vendor"] == devices.NCCL_GPU
