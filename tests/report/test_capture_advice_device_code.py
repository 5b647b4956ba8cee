"""The capture advice is written for the capture's device, as every fix is (issue #37, "a finding never contradicts the
hardware"; h37-wild55v).

``report.build.capture_advice`` -- the snippet the tab, the MCP server and every fix that quotes the capture show --
returned the framework's torch.profiler window as written, for CUDA: an Intel GPU's job, whose fixes already said
``torch.xpu`` (``Ctx.code``), was told to record ``ProfilerActivity.CUDA``, which an XPU build of PyTorch records
nothing with.  It now goes through the vendor's code (``devices.vendor_code``): ``ProfilerActivity.XPU`` on an Intel
GPU (PyTorch 2.4 on, the ``xpupti`` plugin that wrote the trace).  An Ascend NPU's memory snapshot is told its own
profiler, ``torch_npu.profiler`` (``tests/memory/test_snapshot_npu_words.py``).

The jobs are ``synthetic.torchtrace``'s scenarios as PyTorch's ``xpupti`` plugin writes them (``as_xpu``: truth by
construction); controls: the same jobs on CUDA and on ROCm (whose PyTorch records through ``ProfilerActivity.CUDA``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic.torchtrace import as_rocm, as_xpu
from tests.support.kineto_report import job_doc, report

SCENARIOS = ("input_bound", "tiny_ops", "sync_item", "memory_fragmented", "cold_forward")


def _advice(tmp_path: Path, scenario: str, rewrite=None) -> str:
    doc = job_doc(scenario)
    if rewrite is not None:
        rewrite(doc)
    name = getattr(rewrite, "__name__", "cuda")
    return str(report(tmp_path / f"{scenario}-{name}", doc, scenario).job.get("capture_advice") or "")


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_an_intel_gpus_capture_advice_records_the_xpu(tmp_path: Path, scenario: str) -> None:
    advice = _advice(tmp_path, scenario, as_xpu)
    assert "ProfilerActivity.XPU" in advice and "ProfilerActivity.CUDA" not in advice


def test_an_undeclared_intel_gpu_is_told_the_xpu_too(tmp_path: Path) -> None:
    """No ``deviceProperties`` (a trace whose header was cut): the XPU's runtime calls still name the vendor."""
    def unnamed(doc: dict) -> None:
        as_xpu(doc)
        doc.pop("deviceProperties", None)

    advice = _advice(tmp_path, "input_bound", unnamed)
    assert "ProfilerActivity.XPU" in advice and "ProfilerActivity.CUDA" not in advice


@pytest.mark.parametrize("rewrite", (None, as_rocm), ids=("cuda", "rocm"))
def test_control_cuda_and_rocm_keep_the_cuda_activity(tmp_path: Path, rewrite) -> None:
    assert "ProfilerActivity.CUDA" in _advice(tmp_path, "input_bound", rewrite)
