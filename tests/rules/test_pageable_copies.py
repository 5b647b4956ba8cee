"""Copies from pageable host memory (Nsight Systems' expert rule "CUDA Async Memcpy with Pageable Memory"): the
copy finding says so and leads with pinned memory, where the copies' names give their host memory (CUPTI's
``Memcpy HtoD (Pageable -> Device)``, in Nsight exports and PyTorch traces alike); pinned copies get no such word."""

from __future__ import annotations

import pytest

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.metrics import memcpy
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host, host_metrics


def _finding(tmp_path, pinned: bool):
    p = tmp_path / f"{'pinned' if pinned else 'pageable'}.sqlite"
    write(str(p), NsysJob(steps=8, pinned=pinned, h2d_us=4000, ops=10))
    rep = analyze_host(HostFile(p.stem, str(p), p.stat().st_size, 0, "nsys"))
    return next(f for f in rep.findings if f.rule == "excessive_memcpy"), host_metrics(read_trace(str(p)))


def test_pageable_copies_lead_with_pinned_memory(tmp_path):
    f, m = _finding(tmp_path, pinned=False)
    h2d = next(c for c in m.memcpy if c.direction == "h2d")
    assert h2d.pageable_share == pytest.approx(1.0)
    assert "100.0% of the H2D copy time is from pageable host memory" in f.summary
    # the fix names the copy it asks to pin: its direction and size (h37-fwnvtx2); it follows the copy on a stream of
    # its own, which this loop needs first -- the GPU paces it (27 us of idle in a 7.03 ms step), so pinning frees the
    # host but the copy still runs between the kernels (h37-fixorder61)
    assert "stream of its own" in f.actions[0].text and "pinned memory" in f.actions[0].text
    pin = f.actions[1]
    assert pin.text.startswith(pytorch.PIN_MEMORY.text.split("{")[0]) and "pin_memory=True" in pin.snippet
    assert "(the H2D copy of 67.1 MB per step)" in pin.text and "the H2D copy of 67.1 MB per step" in f.summary


def test_pinned_copies_get_no_pageable_word(tmp_path):
    f, m = _finding(tmp_path, pinned=True)
    assert next(c for c in m.memcpy if c.direction == "h2d").pageable_share == 0.0
    assert "pageable" not in f.summary and not [a for a in f.actions if a.snippet == pytorch.PIN_MEMORY.snippet]


def test_host_memory_from_the_copy_name():
    assert memcpy._host_memory("Memcpy HtoD (Pageable -> Device)") == 1
    assert memcpy._host_memory("Memcpy DtoH (Device -> Pinned)") == 0
    assert memcpy._host_memory("MemcpyH2D") == -1
