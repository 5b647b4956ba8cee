"""A read-back into pageable memory is pinned at its destination, not by the DataLoader (h37-copyforms, issue #37
class 3: "a copy that blocks the host is the copy's cost, with the copy's fix").

The wrong assumption: every pageable copy worth pinning is a batch going to the device, so its fix was "let the
DataLoader pin its batches and copy them with non_blocking=True" even where the copy was the step's results coming
back (``.cpu()``: a ``cudaMemcpyAsync`` into pageable memory, which returns only once it has completed).  Truth by
construction (``synthetic.nsysexport``): each step reads 24 MiB back into pageable memory in 2 ms, its upload 0.2 ms
from pinned memory.  Control: a pageable upload keeps the DataLoader's fix.
"""

from __future__ import annotations

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host


def _copies_finding(tmp_path, **kw):
    p = tmp_path / "copies.sqlite"
    write(str(p), NsysJob(steps=10, ops=20, kernel_us=100.0, **kw))
    rep = analyze_host(HostFile(p.stem, str(p), p.stat().st_size, 0, "nsys"))
    return next(f for f in rep.findings if f.rule == "excessive_memcpy")


def test_a_pageable_read_back_is_pinned_at_its_destination(tmp_path):
    f = _copies_finding(tmp_path, h2d_us=200.0, d2h_us=2000.0, d2h_bytes=24 << 20, d2h_async=True)
    first = f.actions[0]
    assert "DataLoader" not in first.text + first.snippet, first.text  # main: "Let the DataLoader pin its batches"
    assert "(the D2H copy of 25.2 MB per step)" in first.text
    assert "pin_memory=True" in first.snippet and "non_blocking=True" in first.snippet
    assert first.text.startswith(pytorch.PIN_READBACK.text.split("{")[0]), first.text


def test_a_pageable_upload_keeps_the_dataloaders_pinning(tmp_path):
    f = _copies_finding(tmp_path, pinned=False, h2d_us=2000.0)
    # after the copy on a stream of its own where the GPU paces the loop (27 us of idle a step): h37-fixorder61
    assert "stream of its own" in f.actions[0].text, f.actions[0].text
    assert f.actions[1].text.startswith(pytorch.PIN_MEMORY.text.split("{")[0]), f.actions[1].text
