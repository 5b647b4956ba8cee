"""A native program's uploads, pinned and asynchronous already on a stream of their own, are told to be issued ahead
of the kernels that need them -- never "on a stream other than the kernels'", the stream they have (issue #37 class
3; h37-copy62 *Left* 3: the own-stream words were the pageable copies' only).

Truth by construction: ``synthetic.nsysexport.write_pageable_copy_loop(pinned=True, async_calls=True, kernel_us=60)``
(PEXSI's selected inversion on an A100, its buffers pinned, its copies ``cudaMemcpyAsync``: the uploads 120 us of
each 399 us iteration, shorter than its 240 us of kernels, so overlap can hide them) with the uploads on stream 13,
on which no kernel runs -- a stream of their own the export records (``streamId``) -- and, as a control, on the
kernels' stream 7.  The own-stream case fails on base (its first fix the generic overlap fix less its pinning: "Issue
the copies on a stream other than the kernels'"); the kernels'-stream case is a control (that fix, the same on base).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import nsysexport
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host


def _copies_fixes(tmp_path: Path, stream: int) -> list:
    p = tmp_path / "report1.sqlite"
    nsysexport.write_pageable_copy_loop(str(p), iterations=40, pinned=True, async_calls=True, kernel_us=60.0,
                                        upload_stream=stream)
    rep = analyze_host(HostFile(p.name, str(p), p.stat().st_size, 0, "nsys"))
    assert "pinned_async_h2d" in (rep.capture.get("applied") or {})
    (f,) = [f for f in rep.findings if f.rule == "excessive_memcpy"]
    return f.actions


def test_pinned_uploads_on_their_own_stream_are_issued_ahead(tmp_path: Path) -> None:
    acts = _copies_fixes(tmp_path, 13)
    said = " ".join(a.text for a in acts)
    assert "on a stream other than the kernels'" not in said, said
    first = acts[0]
    assert "ahead of the kernels that need it" in first.text and "cudaStreamWaitEvent" in first.text, first.text
    assert "cudaEventRecord" in (first.snippet or "") and "cudaStreamWaitEvent" in (first.snippet or "")


@pytest.mark.parametrize("stream", [7])
def test_control_pinned_uploads_on_the_kernels_stream_get_a_stream_of_their_own(tmp_path: Path, stream: int) -> None:
    acts = _copies_fixes(tmp_path, stream)
    assert acts[0].text.startswith("Issue the copies on a stream other than the kernels'"), acts[0].text
