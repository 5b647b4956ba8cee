"""Copies that already come from pinned memory, asynchronously, are not told to (issue #37 survey h37-survey3).

A real CUDA program (0x822a5b87/test-cuda, kept as wild/streams_pinned_copies) allocates its host buffers with
cudaHostAlloc and copies 800 MB in and 400 MB out with cudaMemcpyAsync on four streams around a 0.5 ms vector add:
main's only fix was "Copy from pinned host memory ... with cudaMemcpyAsync on a stream other than the kernels'" --
what the program does.  The bytes themselves are the cost: the fix is to move fewer of them.  Truth by construction:
the Nsight generator's loop with pinned and with pageable batches."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor.discover.logdir import discover
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report

REAL = FIXTURES / "wild" / "streams_pinned_copies"


def _memcpy(root: Path, run: str) -> dict:
    (s,) = [s for s in discover(str(root)) if s.run == run]
    (f,) = [f for f in session_report(s).to_dict()["findings"]
            if f["rule"] == "excessive_memcpy"]
    return f


@pytest.mark.skipif(not REAL.is_dir(), reason="wild fixture missing")
def test_a_real_program_copying_pinned_async_is_told_to_move_fewer_bytes():
    f = _memcpy(FIXTURES / "wild", "streams_pinned_copies")
    assert "already come from pinned memory" in f["summary"]
    assert f["actions"][0]["text"].startswith("Move fewer bytes")
    assert not any("pinned host memory (cudaMallocHost" in a["text"] for a in f["actions"])


def test_pinned_copies_shorter_than_the_compute_keep_the_overlap_fix(tmp_path: Path):
    """A 2 ms pinned batch copy before 6 ms of compute: prefetching it behind the previous step's compute is the fix."""
    run = tmp_path / "logs" / "run1"
    run.mkdir(parents=True)
    write(str(run / "report.sqlite"), NsysJob(steps=8, pinned=True))
    (s,) = [s for s in discover(str(tmp_path / "logs")) if s.run == "run1"]
    found = [f for f in session_report(s).to_dict()["findings"]
             if f["rule"] == "excessive_memcpy"]
    assert all("already come from pinned" not in f["summary"] for f in found)


@pytest.mark.parametrize("pinned", [True, False])
def test_pinned_batches_get_the_fewer_bytes_fix_and_pageable_ones_pinning(tmp_path: Path, pinned: bool):
    run = tmp_path / "logs" / "run1"
    run.mkdir(parents=True)
    # a 256 MB batch copied in 8 ms before 6 ms of compute: longer than all the compute it could hide behind
    write(str(run / "report.sqlite"), NsysJob(steps=8, pinned=pinned, h2d_bytes=256 << 20, h2d_us=8000.0))
    f = _memcpy(tmp_path / "logs", "run1")
    texts = [a["text"] for a in f["actions"]]
    if pinned:
        assert "already come from pinned memory" in f["summary"] and texts[0].startswith("Move fewer bytes")
    else:
        assert "already come from pinned" not in f["summary"] and "pinned" in texts[0].lower()
