"""Copies that run while the launching thread is in one-time host work are start-up, not copies that block the GPU
(issue #37 class 1, h37-memsetctx31).

ntua-el20062/gemm_spmm_a100's pipelined GEMMs (A100-PCIE-40GB, Nsight 2024.2, no licence: read locally, not kept)
queue pinned ``cudaMemcpyAsync`` uploads on a copy stream, then make their first ``cublasDgemm``, whose
``cuKernelGetFunction`` loads the DGEMM module: 726 ms (``db``), the uploads running beneath it (726 of their 745 ms),
the first GEMM launched 0.1 ms after the load.  The report said "Memory copies block the GPU 438 ms/step" with the
pin + async fix the program already applies.  ASSUMPTION that was wrong: a copy no kernel overlaps blocks compute the
GPU could have run; while the only launching thread is inside a one-time call it has launched no compute, and no
change to the copies gives that time back -- the load does.

The exports by construction are ``synthetic.nsysexport.write_library_kernel_fetch``'s (10 pinned uploads of 40 ms
under a 423.3 ms first fetch)."""

from __future__ import annotations

from synthetic.nsysexport import write_library_kernel_fetch
from tests.support.cli_report import first_host

UPLOADS, UPLOAD_MS = 10, 40.0


def test_uploads_under_a_module_load_are_start_up_not_blocking_copies(tmp_path):
    truth = write_library_kernel_fetch(str(tmp_path / "fo.sqlite"), uploads=UPLOADS, upload_ms=UPLOAD_MS)
    assert UPLOADS * UPLOAD_MS < truth["fetch_ms"]  # by construction every upload runs under the load
    host = first_host(tmp_path / "fo.sqlite")
    bd = host["breakdown_ms"]  # one pass: the pass's ledger
    # the uploads before the load began (while the host queued them) are copies still
    before_load = (truth["fetch_ns"][0] - truth["uploads_ns"][0]) / 1e6
    assert abs(bd["memcpy_h2d"] - before_load) < 0.01, bd
    # the load's whole length holds no compute: the uploads beneath it and the GPU's idle after them
    assert abs(bd["startup"] - truth["fetch_ms"]) < 0.1, bd
    assert not [f for f in host["findings"] if f["rule"] == "excessive_memcpy"], host["findings"]


def test_control_uploads_with_no_one_time_call_over_them_still_block(tmp_path):
    """Control: with the module loaded before the window (every fetch a few microseconds), the same uploads hold
    the GPU with nothing of the host's start-up over them: copies, as before."""
    write_library_kernel_fetch(str(tmp_path / "warm.sqlite"), fetch_ms=0.005, uploads=UPLOADS, upload_ms=UPLOAD_MS)
    host = first_host(tmp_path / "warm.sqlite")
    # the first upload, which the first GEMM waits for (the later ones run under the GEMMs)
    assert host["breakdown_ms"]["memcpy_h2d"] >= UPLOAD_MS - 0.01, host["breakdown_ms"]
