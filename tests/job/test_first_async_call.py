"""A process's first asynchronous call that lasts seconds is its start-up, not a wait for GPU work (issue #37 class 1,
h37-memsetctx31).

quasiben/nvtx-examples' ``cudf.sqlite`` and ``cudf-groupby.sqlite`` (Nsight 2020, CUDA 11.0, no licence: read locally,
not kept): the process's first CUDA call, a ``cudaMemsetAsync``, lasts 2,157.6 / 2,028.7 ms -- 79% / 90% of the
window, the GPU idle -- while cuDF creates its context and loads its modules (CUDA 11.0 writes no
``cuModuleGetLoadingMode`` to mark the runtime's start).  The report read "negligible one-time costs" and booked the
2.16 s as GPU work the capture does not hold.  ASSUMPTION that was wrong: every copy or memset call may be waiting for
the GPU (for work launched before the window), so a slow one is never a first-time cost.  An ``Async`` memset is
always asynchronous to the host, and an ``Async`` copy between the device and pinned memory too: they wait for
nothing, and their time is the host's own: a thread's first such call that lasts is the runtime's start-up (the
context, the libraries' modules).  Later slow calls keep their reading (``job.phase._first_async_calls``).

The exports by construction are ``synthetic.nsysexport.write_first_async_context``'s."""

from __future__ import annotations

import pytest

from synthetic.nsysexport import write_first_async_context
from tb_gpu_advisor import devices
from tests.support.cli_report import first_host


def _cold(host: dict) -> dict | None:
    return next((f for f in host["findings"] if f["rule"] == "cold_start"), None)


def test_a_first_async_memset_that_creates_the_context_is_a_one_time_cost(tmp_path):
    truth = write_first_async_context(str(tmp_path / "cudf.sqlite"))
    host = first_host(tmp_path / "cudf.sqlite")
    job = host["job"]
    assert job["one_time_ms"] >= truth["first_ms"], job
    assert job["phase"] == "warm-up", job  # most of the window
    assert job["unseen_gpu_ms"] < 1.0, job  # it waited for no GPU work, seen or not
    cold = _cold(host)
    assert cold is not None and "`cudaMemsetAsync`" in cold["summary"], host["findings"]


def test_a_first_async_copy_from_pinned_memory_is_a_one_time_cost(tmp_path):
    truth = write_first_async_context(str(tmp_path / "p.sqlite"), first_call="cudaMemcpyAsync_v3020",
                                      first_copy="pinned")
    job = first_host(tmp_path / "p.sqlite")["job"]
    assert job["one_time_ms"] >= truth["first_ms"], job
    assert job["unseen_gpu_ms"] < 1.0, job


@pytest.mark.parametrize("first_call,first_copy", [("cudaMemcpyAsync_v3020", "pageable"),
                                                   ("cudaStreamSynchronize_v3020", ""),
                                                   ("cudaMemset_v3020", "")])
def test_control_a_call_that_may_wait_is_still_no_first_time_cost(tmp_path, first_call, first_copy):
    """Control: a pageable async copy (the driver stages it, and may wait for its stream), a sync and a synchronous
    memset may each wait for GPU work launched before the window: the reading of them is unchanged."""
    truth = write_first_async_context(str(tmp_path / "w.sqlite"), first_call=first_call, first_copy=first_copy)
    job = first_host(tmp_path / "w.sqlite")["job"]
    assert job["one_time_ms"] < truth["first_ms"], job
    assert job["unseen_gpu_ms"] >= truth["first_ms"] - 1.0, job


@pytest.mark.parametrize("name,fill,copy", [("cudaMemsetAsync_v3020", True, False), ("cuMemsetD32Async", True, False),
                                            ("hipMemsetAsync", True, False), ("hipMemsetD32Async", True, False),
                                            ("cudaMemset_v3020", False, False), ("hipMemset", False, False),
                                            ("cudaMemcpyAsync_v3020", False, True), ("hipMemcpyAsync", False, True),
                                            ("cuMemcpyHtoDAsync_v2", False, True), ("cudaMemcpy_v3020", False, False),
                                            ("cudaLaunchKernel_v7000", False, False)])
def test_async_fills_and_copies_by_name_for_each_vendor(name, fill, copy):
    assert devices.is_async_fill(name) is fill
    assert devices.is_async_copy(name) is copy
