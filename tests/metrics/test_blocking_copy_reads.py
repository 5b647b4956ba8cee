"""A read of device values through a blocking copy call is a sync (h37-rpd2, issue #37 class 3 on ROCm).

The assumption was that the host's waits for the GPU are sync calls (``cudaStreamSynchronize`` behind PyTorch's
``.item()``, which CUDA's PyTorch issues after a ``cudaMemcpyAsync``).  On ROCm, PyTorch reads a device value with
one call that is the copy and the wait together: ``hipMemcpyWithStream`` (a native program's ``cudaMemcpy`` to the
host is the same).  The runtime records no sync call for it, so the syncs' accounting saw nothing, and the HIP call
was the enclosing "op" of any HIP sync (the encloser left out only CUDA's calls).  A blocking copy call to the host
that a framework op made is now a sync, as the same read is on CUDA.

Real trace: ``wild/vllm_rpd_fp8/mytrace.rpd.gz`` (ROCm/rocmProfileData ``raptor/tests``, MIT; survey h37-rpd).  Read
by hand with ``sqlite3``: 22 ``execute_model`` steps, each holding one sampler read (``aten::to`` -> ``aten::copy_``
-> ``hipMemcpyWithStream`` of 16 bytes, ``CopyDeviceToHost``); the two prefill reads hold the host 132.6 and 134.5 ms,
the decodes' 3.4-4.1 ms, the GPU busy with the step's queued work throughout; after each read returns the GPU idles
0.5 ms (decodes; 1.1-1.9 ms after the prefills) before the next step's first operation.  The 20 kept steps (first and
last dropped) hold reads 1-20: 10.478 ms of host wait per step.  What that wait costs is the idle after it, as for any
sync -- under the 5% warning here, so no warning (the accounting's answer: the 268 ms of waiting cost the GPU nothing
while it waited).

On ROCm's Kineto the same read is recorded another way (h37-copy69): the copy of ``.item()``'s
``hipMemcpyWithStream`` (the call asked ``hipMemcpyDeviceToHost``, ``kind`` 2) is a ``Memcpy DtoD (Device -> Device)``
record -- 11 of 11 in the kept MI300X traces -- so the read, kept to device-to-host copies, was no read: the wait's
idle was booked as launch wait, and a loop reading ``.item()`` every step had no sync at all ("CPU ops between steps
..., no sync among it").  A blocking copy call inside the framework's scalar read (``aten::_local_scalar_dense``)
reads to the host whatever its record's direction.  Real: ``wild/amd_mi300x`` ``bert_small`` (an ``if mask:`` in
the forward: ``aten::is_nonzero`` > ``aten::item`` > ``aten::_local_scalar_dense`` > ``hipMemcpyWithStream``, 24.9
us; the GPU drained 0.8 us into it, its 1-byte copy 21.6-24.0 us): main 1 sync (the profiler's own
``hipDeviceSynchronize``), now 2, the read named by the op the program called.  By construction
(``synthetic.torchtrace.as_rocm_scalar_reads``): the ``.item()`` loop written for CUDA and for ROCm reads the same.

Controls: the matmul's ``hipMemcpyWithStream`` uploads (host to device) are the copy's, never a read, and its reads
in no recorded op stay copies (a native program's synchronous ``cudaMemcpy`` likewise: ``test_per_rank_counts``'
synthetic job keeps its one ``.item()`` a step); an asynchronous copy to the host (``hipMemcpyAsync``) is no sync.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor import devices, formats
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.rpd.reader import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics, host_report

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
VLLM = FIXTURES / "wild" / "vllm_rpd_fp8" / "mytrace.rpd.gz"
MATMUL = FIXTURES / "foreign" / "rocm_rpd_matmul" / "matmul_result.rpd"


@pytest.fixture(scope="module")
def vllm_reads(tmp_path_factory) -> list[tuple[int, int]]:
    """(start, end) ns of every ``hipMemcpyWithStream`` of the vLLM database, as sqlite3 reads them."""
    db = tmp_path_factory.mktemp("rpd") / "mytrace.rpd"
    db.write_bytes(gzip.decompress(VLLM.read_bytes()))
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute("SELECT a.start, a.end FROM rocpd_api a JOIN rocpd_string s ON s.id = a.apiName_id "
                           "WHERE s.string = 'hipMemcpyWithStream' ORDER BY a.start").fetchall()
    finally:
        con.close()


@pytest.fixture(scope="module")
def vllm_metrics():
    return host_metrics(read_trace(str(VLLM)))


def test_the_vllm_sampler_reads_are_the_syncs_of_its_steps(vllm_metrics, vllm_reads):
    m = vllm_metrics
    assert m.steps.count == 20 and len(vllm_reads) == 22
    s = m.syncs
    # one read a kept step, each the program's (no copy to the device around it): its wait is the call's whole time
    assert s.calls == 20 and s.calls_per_step == pytest.approx(1.0)
    truth = sum(b - a for a, b in vllm_reads[1:21]) / 20 / 1e6
    assert s.wait_ms_per_step == pytest.approx(truth, rel=1e-6)  # 10.478 ms
    # named by the framework op around the HIP call, never the HIP call itself
    assert s.callers and not any(devices.is_runtime_call(name) for name, _ in s.callers)
    assert s.callers[0][0].startswith("aten::")
    # the cost is the GPU's idle after the reads: more than nothing, less than the idle between each read's return
    # and the next operation (0.52 ms a step on average, read by hand), of which the host's unrecorded time is apart
    assert 0.0 < s.gpu_idle_ms_per_step < 0.6
    assert s.gpu_idle_ms_per_step + s.unrecorded_ms_per_step < 0.6


def test_waits_that_cost_the_gpu_under_the_threshold_are_no_warning(vllm_metrics):
    """268 ms of host waiting while the GPU runs queued work: the idle after (1.5% of the step) is all it costs."""
    m = vllm_metrics
    assert m.syncs.gpu_idle_ms_per_step / m.headline.avg_step_ms < 0.05
    report = host_report(m, VLLM.stat().st_size)
    assert not [f for f in report.findings if f.rule in ("host_sync", "excessive_memcpy")
                and f.severity in ("warning", "critical")]


def test_uploads_and_reads_no_framework_op_made_are_no_sync():
    """Control: the matmul's two ``hipMemcpyWithStream`` uploads (2 GB and 32 MB, host to device) hold the host as
    long, but are the copy's cost; its print's 53 blocking reads (device to host) sit in no op the tracer recorded (no
    ``UserMarker`` range in that capture), as a native program's own synchronous copies would: the copy's, not syncs."""
    m = host_metrics(read_trace(str(MATMUL)))
    assert m.syncs.calls == 0 and m.syncs.copy_calls_per_step == 0


def test_an_asynchronous_copy_to_the_host_is_no_sync():
    assert devices.copy_call_sync("hipMemcpyAsync") == 0 and devices.copy_call_sync("hipMemcpyWithStream") == 1
    assert devices.copy_call_sync("cudaMemcpyAsync") == 0 and devices.copy_call_sync("cudaMemcpy") == 1


def _host_metrics(logdir: Path | str, run: str):  # the pipeline's HostMetrics
    (s,) = [s for s in discover(str(logdir)) if s.run == run]
    (hf,) = s.hosts
    return host_metrics(formats.read(hf))


def test_rocms_item_recorded_device_to_device_is_a_read():
    """wild/amd_mi300x's one ``.item()``: its ``hipMemcpyWithStream`` copy recorded DtoD is the program's read, named
    by the op it called; main read the profiler's own ``hipDeviceSynchronize`` alone (1 sync, no idle)."""
    s = _host_metrics(FIXTURES / "wild", "amd_mi300x").syncs
    assert s.calls == 2 and dict(s.callers).get("aten::is_nonzero") == 1.0
    # the idle the read drained: the call's 24.9 us (the GPU drained 0.8 us into it) -- not the 214 us after it,
    # which the host's next launches hold
    assert 0.015 < s.gpu_idle_ms_per_step < 0.03


def test_an_item_loop_reads_the_same_on_rocm(tmp_path: Path):
    """``.item()`` a step then 500 us of recorded bookkeeping (``write_sync_then_host_work``), written as CUDA's and
    as ROCm's PyTorch record it: the same sync, named ``aten::item``, the same idle.  Main: on ROCm no sync at all."""
    got = {}
    for form in ("cuda", "rocm"):
        paths = tt.write_sync_then_host_work(str(tmp_path / form), run="item")["paths"]
        if form == "rocm":
            for p in paths:
                with open(p, encoding="utf-8") as f:
                    doc = json.load(f)
                tt.write_doc(p, tt.as_rocm_scalar_reads(tt.as_rocm(doc)))
        got[form] = _host_metrics(tmp_path / form, "item").syncs
    cuda, rocm = got["cuda"], got["rocm"]
    assert rocm.calls_per_step == cuda.calls_per_step == pytest.approx(1.0)
    assert dict(rocm.callers) == dict(cuda.callers) == {"aten::item": 1.0}
    assert rocm.gpu_idle_ms_per_step == pytest.approx(cuda.gpu_idle_ms_per_step, abs=0.015)
