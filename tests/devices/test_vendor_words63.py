"""Every text fits the GPU's vendor, whatever evidence of it the capture keeps (issue #37 class 1, h37-words63).

Truth by construction (``synthetic.torchtrace``): the same PyTorch job written as CUDA's PyTorch writes it, as ROCm's
(``as_rocm``) -- also with neither ``deviceProperties`` nor ROCm's version keys, its ``hipLaunchKernel`` calls the only
word of AMD -- and as an Intel GPU's (``as_xpu``).  On base (908b90cb):

- a ROCm trace without ``deviceProperties`` read as NVIDIA's ("NCCL", "Tensor Cores", "Nsight Systems" beside its HIP
  calls): the unnamed GPU's vendor came from ROCm's header keys alone (``formats.kineto.adapter._unnamed_gpu``);
- ROCm was told "the CUDA sync debug mode" (PyTorch's ``torch.cuda.set_sync_debug_mode``: torch.cuda's API, which
  ROCm's PyTorch keeps -- its c10/cuda sources are hipified, so the mode warns at each sync there too);
- an Intel GPU was told "with CUDA activity on" by PyTorch's window fixes and ``ProfilerActivity.CUDA`` by a first
  call's steady-window fix added after its finding was made (``rules._steady_first``: not in the vendor's code).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor import devices
from tests.support.run_report import doc_host

#: NVIDIA's own words and tools that an AMD GPU's report never names in its prose (``devices.amd.WORDS``'s keys)
_NVIDIA_WORDS = re.compile(r"\bNCCL\b|Tensor Cores?|Nsight|\bCUPTI\b|CUDA graphs?|cuDNN|cuBLAS|CUDA sync debug")


def _host(tmp_path: Path, doc: dict) -> dict:
    return doc_host(tmp_path, doc, "node0_4100.1.pt.trace.json")


def _prose(host: dict) -> str:
    """Every finding's words a user reads (code apart)."""
    return " ".join([f["title"] + " " + f["summary"] + " " + " ".join(a["text"] for a in f["actions"])
                     for f in host["findings"]])


def _code(host: dict) -> str:
    return "\n".join((a.get("snippet") or "") for f in host["findings"] for a in f["actions"])


def _job_doc(name: str) -> dict:
    (r,) = tt.simulate(name, 8)
    return tt.trace_doc(r, 1)


@pytest.mark.parametrize("name", ["tiny_mlp", "sync_item"])
def test_a_rocm_trace_without_its_gpus_properties_is_amds_by_its_hip_calls(tmp_path: Path, name: str) -> None:
    """No ``deviceProperties``, no ``roctracer_version``: the trace's ``hipLaunchKernel`` / ``hipStreamSynchronize``
    say AMD -- base: ``capture.vendor`` NVIDIA, "Tensor Cores", "CUDA graphs", "NCCL"."""
    doc = tt.as_vendor(_job_doc(name), "rocm_unnamed")
    assert "deviceProperties" not in doc and not any(k.startswith(("roctracer", "hip_")) for k in doc)
    host = _host(tmp_path, doc)
    assert host["capture"]["vendor"] == "AMD"
    assert [g["name"] for g in host["gpus"]] == ["AMD GPU"]
    assert not _NVIDIA_WORDS.search(_prose(host)), _NVIDIA_WORDS.findall(_prose(host))


def test_control_a_trace_that_says_no_vendor_stays_nvidias(tmp_path: Path) -> None:
    """The same job with CUDA's calls and no ``deviceProperties``: NVIDIA, the profilers' default, as before."""
    doc = _job_doc("tiny_mlp")
    doc.pop("deviceProperties", None)
    host = _host(tmp_path, doc)
    assert host["capture"]["vendor"] == "NVIDIA"


def test_the_vendor_a_captures_evidence_shows() -> None:
    """``devices.vendor_shown``: runtime calls by their vendor's prefix, kernels only one vendor's software names, a
    collective library's own name; none where nothing or two vendors show (ROCm's PyTorch names its backend ``nccl``:
    no evidence)."""
    assert devices.vendor_shown(["hipLaunchKernel", "aten::mm"]) == "AMD"
    assert devices.vendor_shown([], ["__amd_rocclr_copyBuffer.kd"]) == "AMD"
    assert devices.vendor_shown([], ["Cijk_Ailk_Bljk_HHS_BH_MT128x128x32"]) == "AMD"
    assert devices.vendor_shown([], [], ["rccl"]) == "AMD"
    assert devices.vendor_shown(["urEnqueueKernelLaunch"], [], ["xccl"]) == "Intel"
    assert devices.vendor_shown(["cudaLaunchKernel"]) == "NVIDIA"
    assert devices.vendor_shown([], [], ["nccl"]) is None
    assert devices.vendor_shown(["hipFree", "cudaFree"]) is None
    # h37-vendor64: cuBLAS's generation-named family is NVIDIA's software's alone (``nvidia.OWN_KERNELS``; words63
    # read it as no evidence, when ``as_rocm`` still wrote it on ROCm)
    assert devices.vendor_shown(["aten::mm"], ["ampere_sgemm_128x64_tn"]) == "NVIDIA"


def test_rocm_is_told_the_sync_debug_mode_without_cudas_name(tmp_path: Path) -> None:
    """``torch.cuda.set_sync_debug_mode`` runs on ROCm's PyTorch: the code stays, the words say no CUDA."""
    host = _host(tmp_path, tt.as_vendor(_job_doc("sync_item"), "rocm"))
    assert host["capture"]["vendor"] == "AMD"
    prose, code = _prose(host), _code(host)
    assert "sync debug mode" in prose and "CUDA sync debug mode" not in prose, prose
    assert "torch.cuda.set_sync_debug_mode('warn')" in code


def test_control_cuda_keeps_the_cuda_sync_debug_mode(tmp_path: Path) -> None:
    host = _host(tmp_path, _job_doc("sync_item"))
    assert "the CUDA sync debug mode" in _prose(host)


def _window(tmp_path: Path, writer: str, form: str) -> dict:
    path = tmp_path / "w.json"
    getattr(tt, writer)(str(path))
    doc = tt.as_vendor(json.loads(path.read_text()), form)
    path.unlink()
    return _host(tmp_path, doc)


@pytest.mark.parametrize("writer", ["write_loop_ended", "write_profiler_calls_only"])
def test_an_intel_gpus_window_fix_names_its_own_profiler_activity(tmp_path: Path, writer: str) -> None:
    """A window before the steps on an Intel GPU: torch.profiler's schedule "with ProfilerActivity.XPU on" -- base:
    "with CUDA activity on"."""
    host = _window(tmp_path, writer, "xpu")
    assert host["capture"]["vendor"] == "Intel"
    prose = _prose(host)
    assert "ProfilerActivity.XPU" in prose and "CUDA" not in prose, prose


def test_an_intel_gpus_steady_window_fix_is_in_xpus_code(tmp_path: Path) -> None:
    """A first call of no framework on an Intel GPU: the fix that records steady steps (added after the finding, a first
    call's note) records ``ProfilerActivity.XPU`` -- base: ``ProfilerActivity.CUDA``."""
    host = _window(tmp_path, "write_start_up_of_no_framework", "xpu")
    code = _code(host)
    assert "ProfilerActivity.XPU" in code and "ProfilerActivity.CUDA" not in code, code


def test_control_rocm_keeps_pytorchs_cuda_activity(tmp_path: Path) -> None:
    """ROCm's PyTorch names the GPU's activity ``ProfilerActivity.CUDA``: its code keeps it."""
    host = _window(tmp_path, "write_start_up_of_no_framework", "rocm")
    assert "ProfilerActivity.CUDA" in _code(host)


def test_the_vendor_law_reads_another_vendors_tools_in_what_a_host_is_told(tmp_path: Path) -> None:
    """The law (``contradictions.vendor_words_problems``) can fail: CUDA's device code in an Intel GPU's fix, HIP's call
    on an NVIDIA GPU's, Intel's device on an NVIDIA GPU's (base read only CUDA's tools on AMD and ROCm's off it)."""
    import copy

    from tb_gpu_advisor.discover.logdir import discover
    from tb_gpu_advisor.model.schema import Action
    from tb_gpu_advisor.runtime.pipeline import analyze_session
    from tests.support.contradictions import vendor_words_problems

    written = tt.write_vendor_windows(str(tmp_path), ("write_loop_ended",), ("cuda", "xpu"))
    reports = {s.run: analyze_session(s.run, s.session, s.hosts) for s in discover(str(tmp_path))}
    assert set(reports) == set(written) and not any(vendor_words_problems(r) for r in reports.values())
    for run, snippet, word in (("xpu_loop_ended", "with profile(activities=[ProfilerActivity.CUDA]):", "ProfilerActivity.CUDA"),
                               ("cuda_loop_ended", "hipDeviceSynchronize()", "hipDeviceSynchronize"),
                               ("cuda_loop_ended", "torch.xpu.synchronize()", "torch.xpu")):
        r = copy.deepcopy(reports[run])
        f = next(f for h in r.hosts for f in h.findings if f.actions)
        f.actions.append(Action(text="Record the steps.", snippet=snippet))
        assert any(f"'{word}'" in p for p in vendor_words_problems(r)), (run, vendor_words_problems(r))


def test_capture_vendor_agrees_with_the_gpus_the_report_names() -> None:
    """``json_fields.vendor_problems``: a vendor claimed against the GPUs the report names is caught (base: not read)."""
    from tests.support.json_fields import shown_vendor, vendor_problems

    host = {"host": "h", "capture": {"vendor": "NVIDIA"}, "gpus": [{"name": "AMD GPU", "kernel_count": 3}], "job": {}}
    assert shown_vendor(host) == "AMD" and vendor_problems(host)
    assert not vendor_problems({**host, "capture": {"vendor": "AMD"}})
    intel = {**host, "gpus": [{"name": "Intel(R) Data Center GPU Max 1550", "kernel_count": 3}]}
    assert shown_vendor(intel) == "Intel" and vendor_problems(intel)
    assert shown_vendor({**host, "gpus": [{"name": "GPU of unknown model"}]}) is None
