"""A memory snapshot dumped by a ROCm build of PyTorch gets ROCm's words (issue #37, "no CUDA words on AMD";
h37-snaprocm).

A snapshot records no GPU by name and no GPU work, so its GPUs are never "active" and ``rules.base.Ctx`` took every
snapshot for NVIDIA's: an AMD GPU's fragmented or out-of-memory snapshot was told ``export
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True``.  Its own frames say whose build recorded it: under
``stacks="all"`` (the default) every allocation runs through the caching allocator's C++ frames, which a ROCm build
names ``c10::hip::HIPCachingAllocator`` (hipified sources) and a CUDA build ``c10::cuda::CUDACachingAllocator``.  The
reader keeps that as ``MemorySnapshot.vendor``; where no frame names one (``stacks="python"``, ``context=None``) the
vendor is unknown and the report says what every build reads, as before.

ROCm's allocator reads ``PYTORCH_CUDA_ALLOC_CONF`` first and its own ``PYTORCH_HIP_ALLOC_CONF`` where that is unset
(``c10/cuda/CUDAAllocatorConfig.h``), and honours expandable segments from PyTorch 2.12 on ROCm 7.0+ (pytorch/pytorch
#177974, #179930; an older ROCm build warns "expandable_segments not supported on this platform" and ignores it).

The snapshots are ``synthetic.memsnapshot``'s scenarios rewritten as a ROCm build writes them (``as_rocm``: truth by
construction), the kept H200 OOM snapshot so rewritten, and a real MI300X Kineto trace (``wild/ddp_mi300x_nopool``,
whose allocator fix said CUDA's variable on main).  Controls: the same files as a CUDA build writes them, and the
Python-only records, which name no vendor."""

from __future__ import annotations

import gzip
import pickle
import re
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.model.schema import Finding, HostReport
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.report_store import session_report

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
H200_OOM = FIXTURES / "h200_memory" / "torch_oom_snapshot" / "oom_snapshot.pickle"
MI300X = FIXTURES / "wild" / "ddp_mi300x_nopool"

#: What only an NVIDIA GPU's user reads right: CUDA's allocator variable as the fix's export, CUDA's runtime calls,
#: libraries and units (``torch.cuda`` and ``ProfilerActivity.CUDA`` are ROCm's PyTorch's own names, so not these).
CUDA_ONLY = re.compile(r"export PYTORCH_CUDA_ALLOC_CONF|\bcuda(?:Malloc|Free)\b|\bCUDA (?:graphs?|cores?|memory|runtime)\b"
                       r"|NVIDIA|nvidia-smi|\bNVTX\b|Tensor Cores?|cuDNN|cuBLAS|\bNCCL\b|CUPTI")
#: Every scenario the generator builds whose report has findings or capture advice.
SCENARIOS = ("oom_activations", "fragmented", "cache_twin", "memory_cap", "forward_only", "windows_training",
             "ring_buffer_training", "training_with_workspace", "moved_with_grads", "training_iterations",
             "inference_loop", "windows_autocast_forward")


def _report(tmp_path: Path, doc: dict, name: str = "snap") -> HostReport:
    path = Path(ms.write(str(tmp_path / f"{name}.pickle"), doc))
    rep = analyze_host(HostFile(path.stem, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def _words(f: Finding) -> list[str]:
    """Everything a finding says: its title, summary, fixes (prose and code), metric and evidence."""
    out = [f.title, f.summary]
    out += [x for a in f.actions for x in (a.text, a.snippet or "")]
    if f.metric is not None:
        out += [f.metric.label, f.metric.meaning]
    out += [str(cell) for t in f.evidence for row in [[t.title], t.columns, *t.rows] for cell in row]
    return out


def _said(rep: HostReport) -> str:
    return "\n".join([w for f in rep.findings for w in _words(f)]
                     + [str(rep.job.get("capture_advice") or ""), str(rep.job.get("summary") or "")])


def _vendor(tmp_path: Path, doc: dict) -> str | None:
    path = ms.write(str(tmp_path / "v.pickle"), doc)
    return read_trace(path).snapshot.vendor


def _expandable_fix(rep: HostReport) -> str:
    """The snippet of the report's expandable-segments fix ("" where none is given)."""
    return next((a.snippet for f in rep.findings for a in f.actions if "expandable_segments" in (a.snippet or "")), "")


def test_the_vendor_is_read_from_the_allocators_frames(tmp_path: Path) -> None:
    doc = ms.training_iterations().doc
    assert _vendor(tmp_path, ms.as_rocm(doc)) == "AMD"
    assert _vendor(tmp_path, doc) == "NVIDIA"
    # a record with no C++ frame names no build: unknown, not NVIDIA
    assert _vendor(tmp_path, ms.as_recorded(ms.as_rocm(doc), stacks="python")) is None
    assert _vendor(tmp_path, ms.as_recorded(ms.as_rocm(doc), context=None)) is None


def test_a_real_snapshot_is_read_as_its_build_wrote_it(tmp_path: Path) -> None:
    """The H200's OOM snapshot names CUDA's allocator; the same history as a ROCm build writes it, HIP's."""
    doc = pickle.loads(H200_OOM.read_bytes())
    assert read_trace(str(H200_OOM)).snapshot.vendor == "NVIDIA"
    assert _vendor(tmp_path, ms.as_rocm(doc)) == "AMD"


def _kept() -> list[Path]:
    return sorted((FIXTURES / "snapshots_wild").glob("*.pickle*")) + [H200_OOM]


@pytest.mark.parametrize("path", _kept(), ids=lambda p: p.name)
def test_the_kept_snapshots_as_rocm_writes_them_say_no_cuda_only_word(tmp_path: Path, path: Path) -> None:
    """The property over the kept real snapshots, each rewritten as a ROCm build records the same history."""
    raw = path.read_bytes()
    doc = pickle.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)
    said = _said(_report(tmp_path, ms.as_rocm(doc), path.name.split(".")[0]))
    assert not CUDA_ONLY.findall(said), CUDA_ONLY.findall(said)


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_rocm_snapshot_says_no_cuda_only_word(tmp_path: Path, name: str) -> None:
    rep = _report(tmp_path, ms.as_rocm(getattr(ms, name)().doc), name)
    assert not CUDA_ONLY.findall(_said(rep)), CUDA_ONLY.findall(_said(rep))


def test_a_rocm_snapshot_is_told_rocms_allocator_setting(tmp_path: Path) -> None:
    """The fix the property above reads (an OOM of fragmentation): ROCm's variable, with the releases that honour it."""
    fix = _expandable_fix(_report(tmp_path, ms.as_rocm(ms.fragmented().doc)))
    assert "export PYTORCH_HIP_ALLOC_CONF=expandable_segments:True" in fix
    assert "PyTorch 2.12+ on ROCm 7.0+" in fix and "not supported on this platform" in fix


def test_a_cuda_snapshot_keeps_cudas_setting(tmp_path: Path) -> None:
    """Control: the same history from a CUDA build."""
    fix = _expandable_fix(_report(tmp_path, ms.fragmented().doc))
    assert fix == "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"


def test_a_snapshot_naming_no_vendor_is_told_what_every_build_reads(tmp_path: Path) -> None:
    """Control: a Python-only record of a ROCm build and of a CUDA build hold the same bytes, so their reports say the
    same -- ``PYTORCH_CUDA_ALLOC_CONF``, which ROCm's allocator reads first -- and claim no vendor's words."""
    doc = ms.fragmented().doc
    rocm = _report(tmp_path, ms.as_recorded(ms.as_rocm(doc), stacks="python"), "rocm")
    cuda = _report(tmp_path, ms.as_recorded(doc, stacks="python"), "cuda")
    assert [_words(f) for f in rocm.findings] == [_words(f) for f in cuda.findings]
    assert _expandable_fix(rocm) == "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
    assert "HIP" not in _said(rocm)


def test_a_real_mi300x_trace_is_told_rocms_allocator_settings() -> None:
    """The MI300X's DDP run with the cache off (``allocator_churn``): its fix turned the cache back on with CUDA's
    variables on main."""
    s, = discover(str(MI300X))
    rep = session_report(s)
    fix = next(a.snippet for f in rep.findings if f.rule == "allocator_churn" for a in f.actions
               if "ALLOC_CONF" in (a.snippet or ""))
    assert "export PYTORCH_HIP_ALLOC_CONF=expandable_segments:True" in fix and "export PYTORCH_CUDA" not in fix
    assert "unset PYTORCH_NO_HIP_MEMORY_CACHING PYTORCH_NO_CUDA_MEMORY_CACHING" in fix
