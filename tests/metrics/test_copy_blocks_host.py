"""A copy that held the host is synchronous whatever its call's name (issue #37 item 3, h37-left48).

The assumption was that a copy is synchronous only when its call is (``cudaMemcpy``, not ``cudaMemcpyAsync``).  CUDA's
API synchronization behaviour says otherwise: an ``...Async`` copy from the device to pageable host memory returns
only once the copy has completed, and one from pageable memory to the device is staged by the driver, the call held
while it stages.  So PyTorch's pageable batch (``cudaMemcpyAsync`` under ``aten::copy_``) and an Nsight export's
pageable read-back by ``cudaMemcpyAsync`` were "0 ms per step synchronous".  And the synchronous time was the count
share times every copy's time, so a 19 MB batch beside a 256-byte label copy was half synchronous.

Truth from each file: the pageable copies whose call was still running when the copy began (read from the trace's
own JSON / the generator's construction).  Controls: copies from pinned memory by ``cudaMemcpyAsync`` (a kept real
Nsight export, and the generator's pinned read-back) stay asynchronous; the small pageable copies the driver stages at
once stay asynchronous.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor.formats.kineto.adapter import read_trace as read_kineto
from tb_gpu_advisor.formats.nsys.reader import read_trace as read_nsys
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.paths import FIXTURES

SHARED = Path(__file__).resolve().parents[3] / "shared" / "profiles"
V100 = SHARED / "wild-torch" / "resnet50_num_workers_0" / "worker0.1623143566756.pt.trace.json.gz"
VIT = FIXTURES / "wild" / "vit_a4000_pageable_batch" / "vit_a4000.1436345.pt.trace.json.gz"
PINNED_NSYS = FIXTURES / "wild" / "streams_pinned_copies" / "report1.sqlite"


def _held_share(path: Path) -> float:
    """Of the pageable H2D copies' time in the file, the share whose ``cudaMemcpyAsync`` was still running when the
    copy began (the host held through it)."""
    ev = [e for e in json.loads(gzip.decompress(path.read_bytes()))["traceEvents"] if e.get("ph") == "X"]
    calls = {e["args"].get("correlation"): e for e in ev if e["name"].startswith("cudaMemcpy")}
    held = total = 0.0
    for e in ev:
        if e["name"] == "Memcpy HtoD (Pageable -> Device)":
            c = calls[e["args"]["correlation"]]
            total += e["dur"]
            held += e["dur"] if c["ts"] + c["dur"] > e["ts"] else 0.0
    return held / total


def _h2d(path: Path):
    return next(c for c in host_metrics(read_kineto(str(path))).memcpy if c.direction == "h2d")


@pytest.mark.parametrize("path", [VIT, V100], ids=["vit_a4000_pageable_batch", "v100_resnet50_num_workers_0"])
def test_a_pageable_batch_copy_by_cudaMemcpyAsync_is_synchronous(path):
    if not path.exists():
        pytest.skip(f"{path} not here (the shared profiles are read in place)")
    truth = _held_share(path)
    assert 0.9 < truth, truth  # the big batch copies hold the host; the V100's 256-byte label copies do not
    c = _h2d(path)
    assert c.sync_count_per_step > 0
    assert c.sync_ms_per_step == pytest.approx(truth * c.ms_per_step, rel=0.05)
    if truth < 1.0:  # the small copies staged at once stay asynchronous: a share of the count, not of the time
        assert c.sync_share < truth


def _nsys_d2h(tmp_path, **kw):
    p = tmp_path / "readback.sqlite"
    job = NsysJob(steps=10, ops=10, kernel_us=300.0, h2d_us=200.0, d2h_us=800.0, d2h_bytes=16 << 20,
                  shuffle=False, **kw)
    write(str(p), job)
    return next(c for c in host_metrics(read_nsys(str(p))).memcpy if c.direction == "d2h"), job


def test_an_async_read_back_into_pageable_memory_is_synchronous(tmp_path):
    c, job = _nsys_d2h(tmp_path, d2h_async=True)
    assert c.pageable_share == pytest.approx(1.0)
    assert c.sync_share == pytest.approx(1.0)
    assert c.sync_ms_per_step == pytest.approx(job.d2h_us / 1000, rel=0.01)


def test_an_async_read_back_into_pinned_memory_stays_asynchronous(tmp_path):
    c, job = _nsys_d2h(tmp_path, d2h_async=True, d2h_pinned=True)
    assert c.ms_per_step == pytest.approx(job.d2h_us / 1000, rel=0.01)
    assert c.sync_share == 0.0 and c.sync_ms_per_step == 0.0


def test_a_blocking_cudaMemcpy_read_back_stays_synchronous(tmp_path):
    c, job = _nsys_d2h(tmp_path)
    assert c.sync_ms_per_step == pytest.approx(job.d2h_us / 1000, rel=0.01)


def test_pinned_async_copies_in_a_real_export_stay_asynchronous():
    """0x822a5b87/test-cuda (Unlicense, kept): 8 H2D and 4 D2H ``cudaMemcpyAsync`` between pinned and device memory."""
    copies = [c for c in host_metrics(read_nsys(str(PINNED_NSYS))).memcpy if c.direction in ("h2d", "d2h")]
    assert copies and all(c.ms_per_step > 0 for c in copies)
    assert all(c.sync_ms_per_step == 0.0 and not c.sync_share for c in copies), copies


# -- XPlane: the host memory kinds are in ``memcpy_details``, not in the copy's name ------------------------------


def _jax_h2d(tmp_path, host_memory: str):
    """``device_put`` of a 32 MiB batch before each of 8 steps (the generator's ``jax_input_bound`` loop), its copies
    written with ``kind_src:<host_memory>`` as XLA's CUPTI collector writes them."""
    from synthetic import jaxcapture as jc
    from tb_gpu_advisor.formats.xplane.adapter import read_trace as read_xplane

    cap = jc.JaxCapture(step_annotation=True, command_buffers=True, host_memory=host_memory)
    kernels = jc.mlp_bf16_step(4, command_buffers=True)
    cap.add_hlo(jc.mlp_hlo(cap.module, kernels))
    jc._async_loop(cap, kernels, 8, host_us=2_000.0, put_bytes=4096 * 4096 * 2)
    sc = jc.JaxScenario("put", cap.finish(), cap.truth("put", "", "trace_train"))
    (path,) = sc.write(tmp_path)
    return next(c for c in host_metrics(read_xplane(str(path))).memcpy if c.direction == "h2d")


def test_an_xplane_copy_from_pageable_memory_is_pageable(tmp_path):
    """Before: XPlane's ``MemcpyH2D`` names no memory, so ``pageable_share`` was None and no finding could say
    pageable; the ``memcpy_details`` stat said ``kind_src:pageable`` all along."""
    assert _jax_h2d(tmp_path, "pageable").pageable_share == pytest.approx(1.0)


def test_an_xplane_copy_from_pinned_memory_is_not(tmp_path):
    assert _jax_h2d(tmp_path, "pinned").pageable_share == 0.0


def test_the_real_jax_round_trip_copies_are_pinned():
    """The shared H100 ``host_roundtrip`` capture: PjRt's copies go through pinned staging buffers
    (``kind_src:pinned`` / ``kind_dst:pinned``, ``async:1``): known pinned, and not synchronous."""
    import glob

    from tb_gpu_advisor.formats.xplane.adapter import read_trace as read_xplane

    found = glob.glob(str(SHARED / "real-h100-jax" / "host_roundtrip" / "plugins" / "profile" / "*" / "*.xplane.pb"))
    if not found:
        pytest.skip("the shared profiles are not here")
    copies = {c.direction: c for c in host_metrics(read_xplane(found[0])).memcpy}
    for d in ("h2d", "d2h"):
        assert copies[d].ms_per_step > 0 and copies[d].pageable_share == 0.0 and not copies[d].sync_share, copies[d]


# -- ROCm: HIP stages a pageable copy inside its call, ``hipMemcpyAsync`` or not (h37-copyforms) -------------------


def _hip_h2d(tmp_path, call: str, staging_ms: float):
    """rocprof v1's ``results.json`` of 6 steps, each copying a 48 MiB batch by ``call`` (staged ``staging_ms`` inside
    the call: a pageable buffer) before 10 kernels and a ``hipStreamSynchronize``."""
    from synthetic import rocproftrace
    from tb_gpu_advisor.formats.rocprof.reader import read_trace as read_rocprof

    p = tmp_path / "results.json"
    kernels = [("Cijk_Ailk_Bljk_BBS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0_GRVW8_K1_WG32_4_1", 150.0),
               ("MIOpenBatchNormFwdTrainSpatial", 40.0)] * 5
    truth = rocproftrace.write(str(p), [kernels] * 6, gap_ms=0.05, step_upload_bytes=48 << 20,
                               step_staging_ms=staging_ms, step_copy_call=call, step_sync="hipStreamSynchronize")
    copy_ms = (48 << 20) // 20 / 1e6  # the generator's transfer: ~20 GB/s
    return next(c for c in host_metrics(read_rocprof(str(p))).memcpy if c.direction == "h2d"), truth, copy_ms


@pytest.mark.parametrize("call", ["hipMemcpyAsync", "hipMemcpy"])
def test_a_staged_hip_copy_is_pageable_and_synchronous_whatever_its_calls_name(tmp_path, call):
    """Truth by construction: each step's batch is staged 5 ms inside its call before its 2.5 ms transfer (the call
    held the host until the transfer ended).  Before: the ``hipMemcpyAsync`` batch read as asynchronous from memory of
    unknown kind (``sync_ms_per_step`` 0, ``pageable_share`` None), so its report asked for no pinned memory; the
    ``hipMemcpy`` one (the control) read pageable and synchronous already."""
    c, truth, copy_ms = _hip_h2d(tmp_path, call, staging_ms=5.0)
    assert all(x["pageable"] for x in truth["copies"][1:-1])  # the steps' batches (first and last: the model's
    # upload and the final read-back, unstaged)
    assert c.pageable_share == pytest.approx(1.0, abs=0.01)
    assert c.sync_ms_per_step == pytest.approx(copy_ms, rel=0.02)


def test_an_unstaged_hip_async_copy_is_not_called_pageable(tmp_path):
    """Control: the same copy with no staging lead (its transfer starts as its call does) says nothing of its host
    memory -- never pageable by a call that held the host for the transfer alone."""
    c, _, _ = _hip_h2d(tmp_path, "hipMemcpyAsync", staging_ms=0.0)
    assert not c.pageable_share
