"""A GPU of no known vendor speaks no vendor's words (issue #37 class 1, h37-vendor64; h37-words63's *Left* 4).

Truth by construction (``synthetic.torchtrace.as_unknown_vendor``): the same PyTorch job as a build for a GPU nothing
here knows writes it -- no ``deviceProperties`` (or one GPU named ``Accel X1``, a model no vendor's table claims), no
CUDA version keys, its runtime's own calls (``xrtLaunchKernel``), no kernel only one vendor's library names, no
``nccl`` backend.  Nothing in the file names a vendor.  On base (53f2cbc8) such a GPU was NVIDIA's, the profilers'
default (``devices.vendor_of``; ``formats.kineto.adapter._unnamed_gpu`` named only AMD and Intel): ``capture.vendor``
NVIDIA, and "Tensor Cores", "CUDA graphs", ``torch.cuda`` in its fixes.  Where the file does show NVIDIA (its CUDA
calls, cuBLAS's ``ampere_sgemm_*``, NCCL alone) NVIDIA's words stay (controls).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor import devices
from tests.support.run_report import doc_host

#: Any vendor's own words and tools in prose: NVIDIA's, ROCm's, Intel's.
_VENDOR_WORDS = re.compile(r"\bNCCL\b|\bRCCL\b|Tensor[ -]Cores?|Matrix Cores?|\bXMX\b|Nsight|\bnsys\b|\bCUPTI\b|"
                           r"CUDA|\bHIP\b|\bROCm\b|cuDNN|cuBLAS|MIOpen|rocBLAS|oneDNN|\bSMs\b|NVIDIA")


def _host(tmp_path: Path, doc: dict) -> dict:
    return doc_host(tmp_path, doc, "node0_4100.1.pt.trace.json")


def _prose(host: dict) -> str:
    return " ".join([f["title"] + " " + f["summary"] + " " + " ".join(a["text"] for a in f["actions"])
                     + " " + ((f.get("saving") or {}).get("assumption") or "") for f in host["findings"]])


def _code(host: dict) -> str:
    return "\n".join((a.get("snippet") or "") for f in host["findings"] for a in f["actions"])


def _job_doc(name: str) -> dict:
    (r,) = tt.simulate(name, 8)
    return tt.trace_doc(r, 1)


@pytest.mark.parametrize(("form", "gpu"), [("unknown", "GPU of unknown vendor"),
                                           ("unknown_named", "Accel X1 (vendor unknown)")])
def test_a_gpu_of_no_known_vendor_speaks_no_vendors_words(tmp_path: Path, form: str, gpu: str) -> None:
    """fp32 GEMMs of a small MLP on a GPU nothing names: "matrix units", no claim of the GPU's units; base: vendor
    NVIDIA, GPU "GPU:0" / "Accel X1", "Tensor Cores", "CUDA graphs", ``torch.cuda``."""
    host = _host(tmp_path, tt.as_vendor(_job_doc("host_bound_fp32"), form))
    assert host["capture"]["vendor"] == "unknown"
    assert [g["name"] for g in host["gpus"]] == [gpu]
    prose = _prose(host)
    assert host["findings"] and not _VENDOR_WORDS.findall(prose), _VENDOR_WORDS.findall(prose)
    assert "matrix units" in prose, prose
    assert not re.search(r"torch\.cuda\b|ProfilerActivity\.CUDA|\bnsys\b|\bhip[A-Z]", _code(host)), _code(host)


def test_no_unit_or_peak_is_claimed_for_a_gpu_of_no_known_vendor(tmp_path: Path) -> None:
    """The GPU's model is not known: no peak, no matrix units claimed or denied (base: read as NVIDIA's)."""
    host = _host(tmp_path, tt.as_vendor(_job_doc("host_bound_fp32"), "unknown_named"))
    (g,) = host["gpus"]
    assert host["capture"]["vendor"] == "unknown" and g["name"] == "Accel X1 (vendor unknown)"
    assert devices.vendor(g["name"]).VENDOR == "unknown"
    assert devices.has_matrix_units(g["name"], None) is None
    assert devices.peak_flops(g["name"], None, devices.P_FP16) is None
    assert devices.memory_bandwidth(g["name"], None) is None
    assert "Accel X1 has" not in _prose(host) and "Tensor Cores of" not in _prose(host)


@pytest.mark.parametrize("evidence", ["calls", "kernels", "header"])
def test_control_a_file_that_shows_nvidia_keeps_nvidias_words(tmp_path: Path, evidence: str) -> None:
    """No ``deviceProperties``, but the file says NVIDIA: its CUDA calls, cuBLAS's ``ampere_sgemm_*`` kernels, CUDA's
    version keys -- NVIDIA's words stay (control: passes on base too).  NCCL as the only collective word was one
    until h37-hipwin66: ROCm's PyTorch names its backend ``nccl`` too (:func:`test_nccl_alone_names_no_vendor`)."""
    doc = _job_doc("host_bound_fp32")
    if evidence == "calls":
        doc = tt.as_vendor(doc, "cuda_unnamed")
    else:
        tt.as_unknown_vendor(doc)
        if evidence == "kernels":  # cuBLAS's generation prefix on the GEMM (``sm80_``), nothing else of NVIDIA's
            gemms = [e for e in doc["traceEvents"] if e.get("cat") == "kernel" and "gemm" in e["name"]]
            assert gemms
            for e in gemms:
                e["name"] = "sm80_" + e["name"]
        else:
            doc["cuda_runtime_version"] = 12040
    host = _host(tmp_path, doc)
    assert host["capture"]["vendor"] == "NVIDIA"
    assert "Tensor Cores" in _prose(host)


def test_nccl_alone_names_no_vendor(tmp_path: Path) -> None:
    """The backend ``nccl`` the only vendor-like word of a file naming no vendor: ROCm's PyTorch writes it too (RCCL
    keeps NCCL's names), so no vendor is claimed and no Tensor Core is said (h37-hipwin66; NVIDIA before)."""
    doc = tt.as_unknown_vendor(_job_doc("host_bound_fp32"))
    doc["distributedInfo"] = {"backend": "nccl", "rank": 0, "world_size": 1}
    host = _host(tmp_path, doc)
    assert host["capture"]["vendor"] == devices.NCCL_GPU  # NVIDIA's or AMD's, not known which (h37-late67)
    assert "Tensor Cores" not in _prose(host)


def test_vendor_known_reads_every_piece_of_evidence() -> None:
    """``devices.vendor_known``: a runtime's calls, one vendor's kernels, a collective library; NCCL alone nobody's
    (both vendors' name: h37-hipwin66, NVIDIA's before); nothing: unknown; two vendors: None (base: no such question
    -- an unnamed GPU was NVIDIA's)."""
    assert devices.vendor_known(["hipLaunchKernel"]) == "AMD"
    assert devices.vendor_known(["xrtLaunchKernel"], ["ampere_sgemm_128x64_tn"]) == "NVIDIA"
    assert devices.vendor_known([], ["ncclDevKernel_AllReduce_Sum_f32_RING_LL"]) == devices.NCCL_GPU  # h37-late67
    assert devices.vendor_known([], ["ncclDevKernel_AllReduce_Sum_f32_RING_LL"], ["rccl"]) == "AMD"
    assert devices.vendor_known(["hipLaunchKernel"], [], ["nccl"]) == "AMD"  # ROCm's PyTorch names its backend nccl
    assert devices.vendor_known(["xrtLaunchKernel"], ["sgemm_128x64_tn"], ["gloo"]) == devices.UNKNOWN
    assert devices.vendor_known(["cudaLaunchKernel", "hipLaunchKernel"]) is None


def test_control_a_window_with_no_gpu_record_keeps_its_runtimes_vendor() -> None:
    """A real window whose GPU side went unrecorded (wild ``cuda_unrecorded_cifar_cnn``: allocator events on device 0,
    no ``deviceProperties``, no kernel): its GPU is named as the job's words are, from the runtime (``GPU:0``,
    ``capture.vendor`` NVIDIA), never "GPU of unknown vendor" beside NVIDIA's words (the branch's first control run
    named it so; control: base alike)."""
    from tb_gpu_advisor.discover.logdir import discover
    from tests.support.paths import FIXTURES
    from tests.support.report_store import session_report

    (s,) = discover(str(FIXTURES / "wild" / "cuda_unrecorded_cifar_cnn"))
    (h,) = session_report(s).hosts
    assert h.capture["vendor"] == "NVIDIA"
    assert [g.name for g in h.gpus] in ([None], ["GPU:0"], [""])
