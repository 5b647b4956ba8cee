"""A memory snapshot dumped on a Huawei Ascend NPU (``torch_npu``) gets the NPU's words, never CUDA's (issue #37, "a
finding never contradicts the hardware"; h37-wild55v).

``torch_npu`` writes PyTorch's snapshot layout (``torch.npu.memory._dump_snapshot``) and names no device in it, so
``devices.vendor_of_frames``, which knew CUDA's, ROCm's, Intel's and Apple's allocators only, read such a snapshot as
no vendor's and the report spoke CUDA's: "what held the GPU", ``export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True``
(an allocator torch_npu does not read: its own is ``PYTORCH_NPU_ALLOC_CONF``), ``torch.cuda.empty_cache()``, a capture
with ``ProfilerActivity.CUDA``.  Real ones (codeasier/MemSnapDump, no licence: read locally, not kept) name the
plug-in in their stacks -- ``segment_free`` frames through ``torch_npu/npu/memory.py: empty_cache`` -- and its C++
allocator is ``c10_npu::NPUCachingAllocator``: ``devices.ascend.ALLOCATOR_FRAMES``.

The snapshots are ``synthetic.memsnapshot``'s scenarios as torch_npu writes them (``as_npu``: truth by construction)
and the kept real snapshots so rewritten.  Controls: the same histories as CUDA writes them keep CUDA's words."""

from __future__ import annotations

import gzip
import pickle
import re
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.model.schema import Finding, HostReport
from tb_gpu_advisor.runtime.pipeline import analyze_host

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
H200_OOM = FIXTURES / "h200_memory" / "torch_oom_snapshot" / "oom_snapshot.pickle"

#: What only a CUDA device's user reads right: CUDA's allocator variables, PyTorch's CUDA device in code, CUDA's
#: runtime calls, libraries, units and tools, and the GPU itself (an NPU is none).
NOT_NPU = re.compile(r"PYTORCH_(?:NO_)?CUDA_|torch\.cuda\b|ProfilerActivity\.CUDA|['\"]cuda['\"]|\.cuda\(\)"
                     r"|\bcuda(?:Malloc|Free|Memcpy)\w*|\bCUDA\b|NVIDIA|nvidia-smi|\bNVTX\b|Nsight|Tensor Cores?"
                     r"|cuDNN|cuBLAS|\bNCCL\b|CUPTI|\bGPUs?\b")
#: Every scenario the generator builds whose report has findings or capture advice and whose stacks hold C++ frames
#: (the Windows ones are Python-only, PyTorch unwinds no C++ there: nothing in them names a device, and torch_npu has
#: no Windows build).
#: A frame of torch_npu's, as :func:`synthetic.memsnapshot.as_npu` writes it: its C++ allocator or its package.
_NAMES_NPU = re.compile(r"c10_npu::|torch_npu[/\\]")
SCENARIOS = ("oom_activations", "fragmented", "cache_twin", "memory_cap", "forward_only", "ring_buffer_training",
             "training_with_workspace", "moved_with_grads", "training_iterations", "inference_loop")


def _report(tmp_path: Path, doc: dict, name: str = "snap") -> HostReport:
    path = Path(ms.write(str(tmp_path / f"{name}.pickle"), doc))
    rep = analyze_host(HostFile(path.stem, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def _words(f: Finding) -> list[str]:
    out = [f.title, f.summary]
    out += [x for a in f.actions for x in (a.text, a.snippet or "")]
    if f.metric is not None:
        out += [f.metric.label, f.metric.meaning]
    out += [str(cell) for t in f.evidence for row in [[t.title], t.columns, *t.rows] for cell in row]
    return out


def _findings_said(rep: HostReport) -> str:
    """What the findings and the capture advice say (the job's own summary is the job stage's, not a vendor's)."""
    return "\n".join([w for f in rep.findings for w in _words(f)] + [str(rep.job.get("capture_advice") or "")])


def _vendor(tmp_path: Path, doc: dict) -> str | None:
    return read_trace(ms.write(str(tmp_path / "v.pickle"), doc)).snapshot.vendor


def _fix(rep: HostReport, word: str) -> str:
    return next((a.snippet for f in rep.findings for a in f.actions if word in (a.snippet or "")), "")


def test_the_npu_is_read_from_torch_npus_frames(tmp_path: Path) -> None:
    """Its C++ allocator's frames, or -- a Python-only record -- the ``torch_npu`` package's own Python frames
    (``torch.npu.empty_cache()`` under ``cache_twin``'s loop)."""
    assert _vendor(tmp_path, ms.as_npu(ms.training_iterations().doc)) == "Huawei"
    python_only = ms.as_recorded(ms.as_npu(ms.cache_twin(empty_cache=True).doc), stacks="python")
    assert _vendor(tmp_path, python_only) == "Huawei"


def test_controls_cuda_and_unnamed_records_stay_as_they_were(tmp_path: Path) -> None:
    """Control: the same histories from CUDA read NVIDIA; a Python-only NPU record with no ``torch_npu`` frame names
    no vendor (nothing in it says one)."""
    assert _vendor(tmp_path, ms.training_iterations().doc) == "NVIDIA"
    assert _vendor(tmp_path, ms.as_recorded(ms.as_npu(ms.training_iterations().doc), stacks="python")) is None


def test_an_npu_snapshot_is_told_its_own_allocator_setting(tmp_path: Path) -> None:
    """A fragmented OOM: torch_npu's allocator reads ``PYTORCH_NPU_ALLOC_CONF``, never CUDA's variable; its expandable
    segments need Ascend HDK 23.0.0+ and the other two settings at their defaults (Ascend's reference), said beside."""
    rep = _report(tmp_path, ms.as_npu(ms.fragmented().doc))
    assert _fix(rep, "expandable_segments").split("\n") == [
        ("# Ascend: needs Ascend HDK 23.0.0+, and max_split_size_mb / garbage_collection_threshold left at their "
         "defaults"), "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True"]
    oom = next(f for f in rep.findings if f.rule == "oom_snapshot")
    assert "NPU 0" in oom.summary and "held the NPU" in oom.title


def test_an_npu_snapshot_is_told_the_npus_own_profiler(tmp_path: Path) -> None:
    """The capture advice: torch.profiler records no NPU activity; the Ascend PyTorch Profiler does."""
    advice = str(_report(tmp_path, ms.as_npu(ms.training_iterations().doc)).job.get("capture_advice"))
    assert "torch_npu.profiler.ProfilerActivity.NPU" in advice and "ProfilerActivity.CUDA" not in advice


@pytest.mark.parametrize("name", SCENARIOS)
def test_an_npu_snapshot_says_no_cuda_word(tmp_path: Path, name: str) -> None:
    said = _findings_said(_report(tmp_path, ms.as_npu(getattr(ms, name)().doc), name))
    assert not NOT_NPU.findall(said), sorted(set(NOT_NPU.findall(said)))


def _kept() -> list[Path]:
    return sorted((FIXTURES / "snapshots_wild").glob("*.pickle*")) + [H200_OOM]


@pytest.mark.parametrize("path", _kept(), ids=lambda p: p.name)
def test_the_kept_snapshots_as_torch_npu_writes_them_say_no_cuda_word(tmp_path: Path, path: Path) -> None:
    """Each kept real snapshot rewritten as torch_npu records the same history; a Python-only one with no frame of
    ``torch.npu`` (the Windows CS336 run) names no device and is read as before (a control)."""
    raw = path.read_bytes()
    doc = ms.as_npu(pickle.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw))
    if not any(_NAMES_NPU.search(f"{f.get('name')} {f.get('filename')}") for frames in ms._frame_lists(doc)
               for f in frames):
        assert _vendor(tmp_path, doc) is None
        return
    assert _vendor(tmp_path, doc) == "Huawei"
    said = _findings_said(_report(tmp_path, doc, path.name.split(".")[0]))
    assert not NOT_NPU.findall(said), sorted(set(NOT_NPU.findall(said)))


def test_control_a_cuda_snapshot_keeps_cudas_words(tmp_path: Path) -> None:
    rep = _report(tmp_path, ms.fragmented().doc)
    assert _fix(rep, "expandable_segments") == "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
    assert "ProfilerActivity.CUDA" in str(rep.job.get("capture_advice"))


def test_an_npu_snapshots_job_line_and_source_name_the_npu(tmp_path: Path) -> None:
    """Beside the findings: the job's line ("no NPU step is timed") and the memory's source, the dump call as
    torch_npu spells it (``torch.npu.memory._dump_snapshot``)."""
    rep = _report(tmp_path, ms.as_npu(ms.training_iterations().doc))
    assert not NOT_NPU.findall(str(rep.job.get("summary"))), rep.job.get("summary")
    assert {g.memory["source"] for g in rep.gpus if g.memory} == {
        "PyTorch memory snapshot (torch.npu.memory._dump_snapshot)"}
