"""A GPU program's copies fix names the copies that are pageable, and is not told where every upload is pinned and
asynchronous already (h37-pinned32).

The native fix "Copy from pinned host memory (cudaMallocHost / cudaHostRegister) with cudaMemcpyAsync on a stream other
than the kernels'" named no copy, and was given whatever the copy records said of their host memory: a program whose
uploads are ``cudaMemcpyAsync`` from pinned buffers and whose read-back is a blocking copy into pageable memory was
told to do what its uploads already do (h37-survey67: ntua-el20062's double-buffered GEMM pipeline, batches pinned and
copied on a stream of their own, X and the result pageable).  Truth by construction: ``synthetic.nsysexport``'s loop
with no autograd ranges (a native program), its upload pinned or pageable, its read-back a blocking ``cudaMemcpy``
into pageable memory.
"""

from __future__ import annotations

from synthetic import nsysexport
from tests.support.properties import in_use_problems
from tests.support.run_report import run_report

_GENERIC = "Copy from pinned host memory (cudaMallocHost / cudaHostRegister)"


def _copies_finding(tmp_path, pinned: bool):
    (tmp_path / "run").mkdir()
    job = nsysexport.NsysJob(pinned=pinned, d2h_us=6000.0, d2h_bytes=96 << 20, autograd_nvtx=False, sync=False,
                             step_range="iteration {k}")
    nsysexport.write(str(tmp_path / "run" / "loop.sqlite"), job)
    (h,) = run_report(tmp_path, "run").hosts
    assert h.capture["framework"] == "native"
    return h, next(f for f in h.findings if f.rule == "excessive_memcpy")


def test_pinned_async_uploads_leave_the_pageable_read_back_named(tmp_path):
    h, f = _copies_finding(tmp_path, pinned=True)
    assert "pinned_async_h2d" in h.capture["applied"]
    words = [" ".join(a.text.split()) for a in f.actions]
    assert not any(_GENERIC in w or w.startswith("Copy from pinned host memory") for w in words), words
    # the overlap fix's other lever, a stream of the copies' own, stays
    assert any(w.startswith("Issue the copies on a stream other than the kernels'") for w in words), words
    assert words[0].startswith("Copy results back into pinned host memory (the D2H copy of 100.7 MB per step)")
    assert "Already in use, so not suggested: pinned, asynchronous copies to the GPU" in " ".join(f.summary.split())
    assert not in_use_problems(h.host, h)


def test_pageable_copies_both_ways_are_named_once(tmp_path):
    """The control: the same loop uploading from pageable memory -- both copies named, pinning told once."""
    h, f = _copies_finding(tmp_path, pinned=False)
    assert "pinned_async_h2d" not in (h.capture.get("applied") or {})
    words = [" ".join(a.text.split()) for a in f.actions]
    assert words[0].startswith("Copy from pinned host memory: pin the host buffers of the D2H copy of 100.7 MB and the "
                               "H2D copy of 67.1 MB per step")
    assert sum("cudaMemcpyAsync on a stream other than the kernels'" in w for w in words) == 1, words
