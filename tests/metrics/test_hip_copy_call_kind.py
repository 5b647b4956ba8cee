"""HIP's copy calls answer "did this call hold the host?" as CUDA's do -- the same question, with the same arguments
(the call, the copy's kind) -- and by what ROCm records (issue #37 class 3, h37-words32; h37-copydir31 and
h37-review31 left it).

Wrong assumption: *a HIP copy or fill call not named ``...Async`` holds the host whatever the capture shows*.  ROCm's
runtime (clr ``hipamd/src/hip_memory.cpp`` / ``hip_peer.cpp`` at f9f995c6; no HIP API page states it) queues a copy
between two device buffers of one GPU, ``hipMemcpyPeer`` and a ``hipMemset`` of device memory from the start of its
allocation without the host's wait -- but its tracers record a copy to pinned host memory device-to-device too, and
that one the runtime waits for: 11 of 11 ``hipMemcpyWithStream`` copies recorded ``Memcpy DtoD (Device -> Device)``
in the kept MI300X Kineto traces ended before their calls did (read by hand off the raw events).  So no recorded kind
says a HIP call returned at once (``amd.HOST_FREE_KINDS`` is empty); the call's own end does, where the AMD tracers
record it (``formats.hip_ops.copies_host_side``: a call that returned before its copy began did not wait for it).

Truth by construction: ``synthetic.rocproftrace`` writes each step's device-to-device ``hipMemcpy`` and ``hipMemset``
with their calls returning 5 us after they start, before their copies begin on the busy GPU; the control, a
``hipMemcpy`` read back to the host, holds its call until the copy is done.
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
from tests.support.paths import FIXTURES
from tests.support.run_report import run_report

LOOP = [("gemm_kernel(float*)", 900.0), ("relu(float*)", 80.0), ("softmax(float*)", 120.0)]


def _copies(tmp_path: Path, **kw) -> dict:
    path = tmp_path / "results.json"
    truth = rocproftrace.write(str(path), [LOOP] * 8, **kw)
    m = host_metrics(formats.read(types.SimpleNamespace(host="h", path=str(path), format="rocprof", size=0)))
    return {"truth": truth, "stats": {c.direction: c for c in m.memcpy}}


def test_a_hip_call_that_returned_before_its_copy_began_did_not_hold_the_host(tmp_path):
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


@pytest.mark.parametrize("run", ["amd_mi300x", "sglang_mi300x_prefill"])
def test_a_rocm_copy_recorded_device_to_device_that_held_the_host_stays_held(run):
    """Real: ``.item()``'s ``hipMemcpyWithStream`` into pinned host memory, recorded ``Memcpy DtoD`` by ROCm's
    tracer, ended before its call returned in every case (read by hand): the kind alone never frees it."""
    (h,) = run_report(FIXTURES / "wild", run).hosts
    t = h.memcpy
    row = next(r for r in t.rows if r[0] == "d2d")
    assert row[t.columns.index("sync share")] == 1.0, row


def test_the_two_vendors_answer_the_same_question_alike():
    """One question, one signature: ``copy_call_sync(name, kind)`` of each vendor.  The twin calls agree where both
    vendors' records say the same (an ``...Async`` call returns at once; a copy to or from the host holds it); a
    synchronous device-to-device copy or fill returns at once by CUDA's documented rule, and by no HIP record."""
    assert list(inspect.signature(amd.copy_call_sync).parameters) == list(
        inspect.signature(nvidia.copy_call_sync).parameters)
    twins = [("cudaMemcpy", "hipMemcpy"), ("cudaMemset", "hipMemset"), ("cudaMemcpyAsync", "hipMemcpyAsync"),
             ("cudaMemcpyPeer", "hipMemcpyPeer"), ("cuMemcpyDtoD_v2", "hipMemcpyDtoD")]
    for cuda, hip in twins:
        for kind in (None, KIND_H2D, KIND_D2H):
            assert nvidia.copy_call_sync(cuda, kind) == amd.copy_call_sync(hip, kind), (cuda, hip, kind)
        for kind in (KIND_D2D, KIND_MEMSET):
            assert nvidia.copy_call_sync(cuda, kind) == 0 and amd.copy_call_sync(hip, kind) == ("Async" not in hip)
        assert devices.copy_call_sync(hip, KIND_D2D) == amd.copy_call_sync(hip, KIND_D2D)
    assert amd.copy_call_sync("hipLaunchKernel") == -1 and nvidia.copy_call_sync("cudaLaunchKernel") == -1
