"""An Intel GPU's job is told its own caching allocator's variable, ``PYTORCH_XPU_ALLOC_CONF``, never CUDA's (issue #37,
"no CUDA words on another vendor"; h37-wild55v).

An XPU build of PyTorch reads ``PYTORCH_XPU_ALLOC_CONF`` (``c10/xpu/XPUCachingAllocator.h``: ``XPUAllocatorConfig::
instance`` parses ``c10::utils::get_env("PYTORCH_XPU_ALLOC_CONF")``) and honours ``expandable_segments`` only where it
was built with the XPU's virtual memory (pytorch/pytorch#166292; otherwise "expandable_segments not supported on this
platform", ignored).  Fragmentation's fix said ``export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`` to an Intel
GPU's Kineto trace and to its memory snapshot -- a variable its allocator does not read.

The jobs are ``synthetic.torchtrace``'s and ``synthetic.memsnapshot``'s as an XPU build writes them (``as_xpu``: truth
by construction).  Controls: the same jobs on CUDA keep CUDA's variable."""

from __future__ import annotations

from pathlib import Path

from synthetic import memsnapshot as ms
from synthetic.torchtrace import as_xpu
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.kineto_report import job_doc, report

XPU_FIX = [("# XPU: only a PyTorch XPU build with expandable segments (pytorch/pytorch#166292) honours it; an older one "
            "warns \"expandable_segments not supported on this platform\" and ignores it"),
           "export PYTORCH_XPU_ALLOC_CONF=expandable_segments:True"]


def _expandable_fix(rep) -> list[str]:
    return next((a.snippet.split("\n") for f in rep.findings for a in f.actions
                 if "expandable_segments" in (a.snippet or "")), [])


def _kineto(tmp_path: Path, xpu: bool):
    doc = job_doc("memory_fragmented")
    if xpu:
        as_xpu(doc)
    return report(tmp_path / f"frag-{xpu}", doc, "memory_fragmented")


def _snapshot(tmp_path: Path, doc: dict):
    path = Path(ms.write(str(tmp_path / "frag.pickle"), doc))
    rep = analyze_host(HostFile(path.stem, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def test_an_xpu_trace_is_told_the_xpu_allocators_variable(tmp_path: Path) -> None:
    assert _expandable_fix(_kineto(tmp_path, True)) == XPU_FIX


def test_an_xpu_snapshot_is_told_the_xpu_allocators_variable(tmp_path: Path) -> None:
    doc = ms.as_xpu(ms.fragmented().doc)
    assert read_trace(ms.write(str(tmp_path / "v.pickle"), doc)).snapshot.vendor == "Intel"
    assert _expandable_fix(_snapshot(tmp_path, doc)) == XPU_FIX


def test_control_cuda_keeps_cudas_variable(tmp_path: Path) -> None:
    assert _expandable_fix(_kineto(tmp_path, False)) == ["export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"]
    assert _expandable_fix(_snapshot(tmp_path, ms.fragmented().doc)) == [
        "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"]
