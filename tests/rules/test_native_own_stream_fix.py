"""A native program's pageable copies already on a stream of their own are not told to copy "on a stream other than the
kernels'" (issue #37 class 3; h37-copystream61's Left 1: only PyTorch had the own-stream fix).

Truth by construction: ``synthetic.nsysexport.write_pageable_copy_loop`` (PEXSI's selected inversion on an A100: a
synchronous ``cudaMemcpy`` from pageable memory, 4 kernels, a read-back, every iteration) on the kernels' stream 7,
and the same export with every copy moved to stream 13, on which no kernel runs -- a stream of their own, which the
export records (``streamId``).  The pinning fix is the same; only the stream words differ: the copies keep theirs and
are issued ahead of the kernels that need them.  The own-stream case fails on base; the one-stream case is a control.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from synthetic import nsysexport
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host


def _fixes(tmp_path: Path, own: bool) -> list[str]:
    p = tmp_path / "report1.sqlite"
    nsysexport.write_pageable_copy_loop(str(p), iterations=40)
    if own:
        with sqlite3.connect(p) as con:
            con.execute("UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET streamId = 13")
    rep = analyze_host(HostFile(p.name, str(p), p.stat().st_size, 0, "nsys"))
    f = next(f for f in rep.findings if f.rule == "excessive_memcpy")
    return [a.text for a in f.actions]


@pytest.mark.parametrize("own", [True, False])
def test_the_pinning_fix_keeps_a_stream_the_copies_already_have(tmp_path: Path, own: bool) -> None:
    texts = _fixes(tmp_path, own)
    assert texts[0].startswith("Copy from pinned host memory"), texts
    said = " ".join(texts)
    if own:
        assert "on a stream other than the kernels'" not in said, said
        assert "the stream of their own they already run on" in texts[0], texts
    else:
        assert "cudaMemcpyAsync on a stream other than the kernels'" in texts[0], texts
