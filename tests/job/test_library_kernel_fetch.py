"""A library's first fetch of a kernel under CUDA 12's library API is the kernel's module loading: a one-time cost
(issue #37 classes 1 and 3, h37-survey67).

ntua-el20062/gemm_spmm_a100's pipelined GEMM exports (A100-PCIE-40GB, Nsight 2024.2, no licence: read locally, not
kept) queue their pinned uploads on a copy stream, then make their first ``cublasDgemm``: cuBLAS 12 fetches its
kernel through ``cuLibraryGetKernel`` and ``cuKernelGetFunction``, and under lazy loading the first
``cuKernelGetFunction`` loads the kernel's module into the context -- 726 ms (double buffering), 423 ms (full
overlap), 395 ms, 107 ms (tiled) of host time, the uploads running beneath it; the next 19 fetches take 1 us.  The
report named the uploads as the start-up ("10 copies to the device before the first kernel: the program's first
inputs uploaded once") and not the load.  ASSUMPTION that was wrong: a kernel's module is loaded by the calls that
name a module (``cuModuleLoad*``, ``cuLibraryLoad*``, ``cuModuleGetFunction``) or inside the first launch; CUDA 12's
library API loads it in ``cuKernelGetFunction``, which counted nowhere unless the GPU idled through it.

The exports by construction are ``synthetic.nsysexport.write_library_kernel_fetch``'s."""

from __future__ import annotations

from synthetic.nsysexport import write_library_kernel_fetch
from tests.support.cli_report import first_host

CONTEXT_MS = 190.0  # the generator's context, in its first cudaMalloc


def _cold(host: dict) -> dict:
    return next(f for f in host["findings"] if f["rule"] == "cold_start")


def test_a_library_kernels_first_fetch_is_a_module_load(tmp_path):
    truth = write_library_kernel_fetch(str(tmp_path / "fo.sqlite"))
    host = first_host(tmp_path / "fo.sqlite")
    cold = _cold(host)
    assert "`cuKernelGetFunction`" in cold["summary"], cold["summary"]
    # the context and the fetch are disjoint one-time spans of the host: the one-time costs hold both
    assert host["job"]["one_time_ms"] >= CONTEXT_MS + truth["fetch_ms"] - 0.01, host["job"]
    # 3 cuLibraryLoadData, cublasCreate and the one slow fetch; the 9 fetches of a microsecond after it are no cost
    assert "5 library start-up / module loading calls" in cold["summary"], cold["summary"]


def test_control_fetches_of_microseconds_are_no_one_time_cost(tmp_path):
    """Control: with the module loaded before the window (every fetch a few microseconds, under
    ``job.one_time_call_ms``), no fetch is a start-up cost -- ``cuKernelGetFunction`` is made before every cuBLAS
    launch, so its name alone says nothing."""
    write_library_kernel_fetch(str(tmp_path / "warm.sqlite"), fetch_ms=0.005)
    cold = _cold(first_host(tmp_path / "warm.sqlite"))
    assert "cuKernelGetFunction" not in cold["summary"], cold["summary"]
    assert "4 library start-up / module loading calls" in cold["summary"], cold["summary"]
