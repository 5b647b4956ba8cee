"""HIP's copy calls answer "did this call hold the host?" as CUDA's do: by the call and the copy's kind (issue #37
class 3, h37-words32; h37-copydir31 and h37-review31 left it).

Wrong assumption: *a HIP copy or fill call not named ``...Async`` holds the host whatever it moves*.
``amd.copy_call_sync`` took the call's name alone, where CUDA's side asked with the copy's kind.  No HIP API page
states it; ROCm's runtime implements it (clr ``hipamd/src/hip_memory.cpp`` / ``hip_peer.cpp`` at f9f995c6): a copy
between two device buffers (since clr SWDEV-384658, March 2023), ``hipMemcpyPeer`` and a ``hipMemset`` of device memory
from the start of its allocation are queued without the host's wait; a copy to or from the host waits.  Truth by
construction: ``synthetic.rocproftrace`` writes each step's ``hipMemcpy`` device-to-device copy and ``hipMemset``
with their calls returning 5 us after they start, before the GPU runs the copy; the control, a ``hipMemcpy`` read back
to the host, holds its call until the copy is done.
"""

from __future__ import annotations

import inspect
import types
from pathlib import Path

import pytest

from synthetic import rocproftrace
from tb_gpu_advisor import devices, formats
from tb_gpu_advisor.devices import amd, nvidia
from tb_gpu_advisor.devices.codes import KIND_D2D, KIND_D2H, KIND_H2D, KIND_MEMSET
from tb_gpu_advisor.runtime.pipeline import host_metrics

LOOP = [("gemm_kernel(float*)", 900.0), ("relu(float*)", 80.0), ("softmax(float*)", 120.0)]


def _copies(tmp_path: Path, **kw) -> dict:
    path = tmp_path / "results.json"
    truth = rocproftrace.write(str(path), [LOOP] * 8, **kw)
    m = host_metrics(formats.read(types.SimpleNamespace(host="h", path=str(path), format="rocprof", size=0)))
    return {"truth": truth, "stats": {c.direction: c for c in m.memcpy}}


def test_a_hip_device_copy_and_fill_do_not_hold_the_host(tmp_path):
    got = _copies(tmp_path, step_device_copies=("d2d", "memset"))
    for direction, call, call_ns, copy_ns in got["truth"]["device_copies"]:
        assert call_ns < copy_ns  # by construction: the call returned before its copy could have run
    for direction in ("d2d", "memset"):
        c = got["stats"][direction]
        assert c.count_per_step == pytest.approx(1.0)
        assert c.sync_count_per_step == 0 and c.sync_share == 0, direction  # main: 1.0 and 1.0


def test_a_hip_read_back_still_holds_the_host(tmp_path):
    """Control: a ``hipMemcpy`` to the host each step waits for its copy (the call ends after it)."""
    c = _copies(tmp_path, step_read_bytes=4096)["stats"]["d2h"]
    assert c.sync_count_per_step == pytest.approx(1.0) and c.sync_share == 1


def test_the_two_vendors_answer_the_same_question_alike():
    """One question, one signature: ``copy_call_sync(name, kind)`` of each vendor, and the same answer for the twin
    calls of each kind (a copy that moves no host memory returns at once from a call not named ``...Async``)."""
    assert list(inspect.signature(amd.copy_call_sync).parameters) == list(
        inspect.signature(nvidia.copy_call_sync).parameters)
    twins = [("cudaMemcpy", "hipMemcpy"), ("cudaMemset", "hipMemset"), ("cudaMemcpyAsync", "hipMemcpyAsync"),
             ("cudaMemcpyPeer", "hipMemcpyPeer"), ("cuMemcpyDtoD_v2", "hipMemcpyDtoD")]
    for cuda, hip in twins:
        for kind in (None, KIND_H2D, KIND_D2H, KIND_D2D, KIND_MEMSET):
            assert nvidia.copy_call_sync(cuda, kind) == amd.copy_call_sync(hip, kind), (cuda, hip, kind)
            assert devices.copy_call_sync(hip, kind) == amd.copy_call_sync(hip, kind)
    assert amd.copy_call_sync("hipMemcpy", KIND_D2D) == 0  # main: 1, the name alone
    assert amd.copy_call_sync("hipMemset", KIND_MEMSET) == 0  # main: 1
    assert amd.copy_call_sync("hipMemcpy", KIND_D2H) == 1 and amd.copy_call_sync("hipLaunchKernel") == -1
