"""A memory snapshot dumped on Windows is never told to turn on expandable segments (h37-snap22).

PyTorch builds expandable segments on the CUDA driver API, which its Windows builds leave out
(``c10/cuda/CMakeLists.txt`` defines ``PYTORCH_C10_DRIVER_API_SUPPORTED`` only ``if(NOT WIN32)``; without it
``CUDAAllocatorConfig::expandable_segments()`` warns "expandable_segments not supported on this platform" and returns
false).  A Windows snapshot shows its platform in its own Python frames' paths (a drive letter, backslashes): the
reader keeps it as ``MemorySnapshot.platform``, and the fixes a Windows build cannot follow are refitted
(``frameworks.pytorch.PLATFORM_FEATURES``): fragmentation is answered with ``max_split_size_mb``.

Truth by construction: ``synthetic.memsnapshot.fragmented()`` (an OOM of fragmentation whose fix on Linux is
expandable segments) as Windows writes it (``as_windows``).  Real: the kept Windows snapshot
(``snapshots_wild/windows_training_cs336``, ``C:\\`` paths) reads as Windows, the H200's OOM snapshot as no platform.
Controls: the same history with Python frames only and Linux paths keeps the expandable-segments fix."""

from __future__ import annotations

from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.model.schema import HostReport
from tb_gpu_advisor.runtime.pipeline import analyze_host

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
WINDOWS = FIXTURES / "snapshots_wild" / "windows_training_cs336.pickle.gz"
H200_OOM = FIXTURES / "h200_memory" / "torch_oom_snapshot" / "oom_snapshot.pickle"


def _report(tmp_path: Path, doc: dict) -> HostReport:
    path = Path(ms.write(str(tmp_path / "snap.pickle"), doc))
    rep = analyze_host(HostFile(path.stem, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def _fixes(rep: HostReport, rule: str) -> list[str]:
    return [a.snippet or "" for f in rep.findings if f.rule == rule for a in f.actions]


def test_the_platform_is_read_from_the_frames_paths(tmp_path: Path) -> None:
    assert read_trace(str(WINDOWS)).snapshot.platform == "Windows"
    assert read_trace(str(H200_OOM)).snapshot.platform is None
    doc = ms.fragmented().doc
    assert read_trace(ms.write(str(tmp_path / "w.pickle"), ms.as_windows(doc))).snapshot.platform == "Windows"
    assert read_trace(ms.write(str(tmp_path / "p.pickle"), ms.as_recorded(doc, stacks="python"))).snapshot.platform \
        is None


def test_a_windows_fragmentation_oom_is_told_what_its_build_honours(tmp_path: Path) -> None:
    fixes = _fixes(_report(tmp_path, ms.as_windows(ms.fragmented().doc)), "oom_snapshot")
    assert fixes, "the fragmented OOM is found"
    assert not any("expandable_segments" in s for s in fixes)
    assert any("max_split_size_mb" in s for s in fixes)


def test_the_same_history_off_windows_keeps_expandable_segments(tmp_path: Path) -> None:
    """The control (the same on main): Python frames only, Linux paths -- expandable segments, no split size."""
    fixes = _fixes(_report(tmp_path, ms.as_recorded(ms.fragmented().doc, stacks="python")), "oom_snapshot")
    assert any("expandable_segments:True" in s for s in fixes)
    assert not any("max_split_size_mb" in s for s in fixes)
