"""Autocast's cache of the weights' 16-bit copies, held through a forward that never trains, is a finding of its own
(issue #37, h37-cachefind; h37-autocast's left).

``at::autocast::cached_cast`` caches its cast of an fp32 parameter when the parameter requires grad -- a tensor's flag,
which ``torch.no_grad()`` leaves on -- until the outermost autocast region exits (``aten/src/ATen/autocast_mode.cpp``).
QR-0W/Stanford-CS336's 2.7B forward under ``torch.no_grad()`` and bf16 autocast (kept:
``tests/fixtures/wild/snapshot_autocast_cache_ctx*``) holds 225 copies at the end of its forward -- 128 x 12.5 MiB,
96 x 50 MiB and the LM head's 48.8 MiB, 6.30 GiB, read by hand -- about a third of its 19.1-19.4 GiB peak; main said
nothing of it.  ``snapshot_nograd_bf16`` (a ``stacks="all"`` record: the cache named in its C++ frames) holds 231 MiB of
its 745 MiB peak the same way.  The snapshots record no capacity: info, with the capacity's caveat."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"
GiB, MiB = 2**30, 2**20
CACHE = "cast_cache_share"


def _analyze(path: Path):
    rep = analyze_host(HostFile(path.stem, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def _cache(rep) -> list:
    return [f for f in rep.findings if f.metric is not None and f.metric.id == CACHE]


def _synthetic(tmp_path: Path, sc: ms.Scenario):
    return _analyze(Path(ms.write(str(tmp_path / "s.pickle"), sc.doc)))


@pytest.mark.parametrize("ctx", [128, 256, 512])
def test_cs336_forward_says_what_the_cache_holds(ctx: int) -> None:
    """Bytes at the peak: 6.09-6.30 GiB (the copies made before it; at 512 the peak falls before the last 5); a third
    of the peak; info, as the capacity is unknown; the fix names cache_enabled=False and the one cast of the model."""
    rep = _analyze(next((WILD / f"snapshot_autocast_cache_ctx{ctx}").glob("*.pickle.gz")))
    got = _cache(rep)
    assert len(got) == 1, [f.id for f in rep.findings]
    f = got[0]
    d = f.metric.detail
    assert 6.0 * GiB <= d["cache_bytes"] <= 6.30 * GiB + MiB
    assert d["largest_bytes"] == 50 * MiB
    assert 0.30 <= f.metric.value <= 0.34
    assert f.severity == "info" and d["capacity_bytes"] is None
    assert "capacity is unknown" in f.summary
    fixes = " ".join((a.text or "") + (a.snippet or "") for a in f.actions)
    assert "cache_enabled=False" in fixes and "model.to(torch.bfloat16)" in fixes
    assert f.saving_bytes == d["cache_bytes"] - d["largest_bytes"]


def test_stacks_all_record_names_the_cache(tmp_path: Path) -> None:
    """``forward_only(cast_mib=)``: the casts allocated under ``at::autocast::cached_cast`` (a Linux record's C++
    frames) under no_grad: truth by construction, every layer's copy live at the peak."""
    sc = ms.forward_only(grad=False, layers=24, mib=8, passes=1, cast_mib=32)
    got = _cache(_synthetic(tmp_path, sc))
    assert len(got) == 1 and got[0].metric.detail["cache_bytes"] == sc.truth["cast_bytes"]


def test_python_frames_only_record(tmp_path: Path) -> None:
    """Windows (Python frames only): the copies the reader books by their sizes (``windows_autocast_forward``):
    24 copies of 8 MiB live at the peak, beside 384 MiB of weights."""
    sc = ms.windows_autocast_forward()
    got = _cache(_synthetic(tmp_path, sc))
    assert len(got) == 1
    assert got[0].metric.detail["cache_bytes"] == sc.truth["cast_bytes"] == 24 * 8 * MiB


def test_no_cast_no_finding(tmp_path: Path) -> None:
    """Control: the same forward without autocast (outputs half a weight's bytes, freed as they go)."""
    assert not _cache(_synthetic(tmp_path, ms.windows_autocast_forward(cast=False, act_mib=8)))


def test_a_training_step_says_nothing_of_the_cache(tmp_path: Path) -> None:
    """Control: a training run needs the cache (its backward reuses the copies): the check is for runs with no
    backward, and a training snapshot never gets it."""
    sc = ms.training_iterations()
    rep = _synthetic(tmp_path, sc)
    assert rep.job["kind"] == "training"
    assert not _cache(rep)


def test_real_snapshots_read_as_training_say_nothing_of_the_cache() -> None:
    """Control: CS336's ``forward_autograd_cs336`` (a ``stacks="all"`` record with 770 allocations under
    ``cached_cast``) is read as training steps, whose backward reuses the copies: no cache finding."""
    rep = _analyze(WILD.parent / "snapshots_wild" / "forward_autograd_cs336.pickle.gz")
    assert rep.job["kind"] == "training"
    assert not _cache(rep)


@pytest.mark.parametrize("tight", [True, False])
def test_severity_follows_the_gpus_use_where_its_capacity_is_known(tmp_path: Path, monkeypatch, tight: bool) -> None:
    """A snapshot records no capacity; where one is known (a profiler trace's device, an OOM's free bytes), the cache
    is a warning when the peak uses ``memory.pressure.warning`` of the GPU (it is what stands between the run and an
    OOM), info on a GPU mostly free -- and then without the unknown capacity's caveat."""
    from tb_gpu_advisor.metrics import memory as metrics_memory

    sc = ms.windows_autocast_forward()
    first = _cache(_synthetic(tmp_path, sc))[0].metric.detail
    cap = int(first["peak_allocated_bytes"] / 0.9) if tight else 80 * GiB
    monkeypatch.setattr(metrics_memory, "_capacity", lambda ctx, me: (cap, "device memory"))
    (f,) = _cache(_synthetic(tmp_path, sc))
    assert f.metric.detail["capacity_bytes"] == cap
    assert f.severity == ("warning" if tight else "info")
    assert "capacity is unknown" not in f.summary
