"""A memory snapshot's legend names the vendor its allocator's frames name (``capture.vendor``; h37-snap22).

``capture.vendor`` (whose words the tab's legend takes) named the vendor of the GPUs that ran work, and a snapshot's
GPUs run none: it stayed ``null`` for a ROCm build's snapshot whose findings were already in AMD's words (its
``c10::hip::HIPCachingAllocator`` frames, ``MemorySnapshot.vendor``, h37-snaprocm).  Now it names that vendor; a
snapshot whose frames name no build (Python frames only, no stacks) still claims none.  Real: the H200's OOM snapshot
(``c10::cuda::`` frames) as written and as a ROCm build writes it; the Windows snapshot (Python frames only) is the
control."""

from __future__ import annotations

import pickle
from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.common import jsonout
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.json_fields import vendor_problems

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
H200_OOM = FIXTURES / "h200_memory" / "torch_oom_snapshot" / "oom_snapshot.pickle"
WINDOWS = FIXTURES / "snapshots_wild" / "windows_training_cs336.pickle.gz"


def _capture(path: Path) -> dict:
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    host = jsonout.plain(rep)
    assert not vendor_problems(host)
    return host["capture"]


def test_a_real_cuda_snapshot_names_nvidia() -> None:
    assert _capture(H200_OOM)["vendor"] == "NVIDIA"


def test_the_same_history_from_a_rocm_build_names_amd(tmp_path: Path) -> None:
    doc = ms.as_rocm(pickle.loads(H200_OOM.read_bytes()))
    assert _capture(Path(ms.write(str(tmp_path / "rocm.pickle"), doc)))["vendor"] == "AMD"


def test_frames_that_name_no_build_claim_no_vendor(tmp_path: Path) -> None:
    """The controls (null on main too): Python frames only (Windows), and a history recorded without stacks."""
    assert _capture(WINDOWS)["vendor"] is None
    doc = ms.as_recorded(ms.as_rocm(ms.training_iterations().doc), context=None)
    assert _capture(Path(ms.write(str(tmp_path / "bare.pickle"), doc)))["vendor"] is None
