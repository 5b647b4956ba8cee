"""Pinned host memory taken and given back is the allocator's cost, with the allocator's fix: pin once and reuse
(h37-hostalloc32).

``devices.is_alloc_call`` knew ``cudaMalloc`` / ``cudaFree`` only, so a program that page-locks its host buffers
where it uses them (``cudaHostAlloc`` / ``cudaMallocHost`` and ``cudaFreeHost``, HIP's ``hipHostMalloc`` /
``hipHostFree``) left the GPU idle in calls booked as "the host's own code", with a CUDA-graph fix.  Page-locking is
the driver's allocator as much as ``cudaMalloc`` is -- the OS pins and maps every page for the GPU -- so the idle is
``allocator_churn``'s, and where the pinned calls hold most of it the finding names them and says to allocate the
pinned buffers once and reuse them (no caching allocator is "off" there).

Truth by construction (``synthetic.nsysexport.write_pinned_loop``: an ``iteration`` loop pinning and freeing its
buffer every pass; the device allocator alone as the control; Kineto steps whose op pins a tensor, CUDA's and HIP's
names) and on the kept real capture where it was found (``wild/extrap_parallel_kernels_gtx1060``, h37-survey71 Left
2: in its one pass ``cudaHostAlloc`` ×10 115.9 ms and ``cudaFreeHost`` ×10 60.0 ms, read with ``sqlite3``).
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from synthetic.nsysexport import write_pinned_loop
from tb_gpu_advisor import devices
from tests.support import kineto_doc
from tests.support.cli_report import first_host

KEPT = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "extrap_parallel_kernels_gtx1060"
HOST = {"ph": "X", "pid": 1, "tid": 1}


def _churn(findings: list[dict]) -> dict:
    found = [f for f in findings if f["rule"] == "allocator_churn"]
    assert len(found) == 1, [(f["rule"], f["title"]) for f in findings]
    return found[0]


def _fix_text(f: dict) -> str:
    return " ".join(a["text"] for a in f["actions"])


def test_a_loop_pinning_its_buffer_every_pass_is_allocator_churn_with_pin_once(tmp_path):
    """By construction: 6 ms ``cudaHostAlloc`` + 3 ms ``cudaFreeHost`` per iteration, the GPU idle through both --
    9 ms of allocator time per step, the pinned calls named, the fix to pin once (main: no allocator_churn at all;
    the 9 ms were the host's own time between steps)."""
    truth = write_pinned_loop(str(tmp_path / "run.sqlite"))
    host = first_host(tmp_path / "run.sqlite")
    f = _churn(host["findings"])
    assert f["metric"]["detail"]["allocator_ms_per_step"] == pytest.approx(truth["alloc_ms"], rel=0.02)
    assert f["title"].startswith("Pinned host memory is allocated and freed"), f["title"]
    # per step, as the GPU's idle beside them is (h37-review33: main summed them over the steps, "×6 ... 54.0 ms")
    calls = ", ".join(f"{name} ×{per_step}" for name, per_step in truth["calls"].items())
    assert f"each step calls {calls}, {truth['pinned_ms']:.2f} ms of the host's time" in f["summary"], f["summary"]
    assert "once" in _fix_text(f) and "cudaHostAlloc" in _fix_text(f), _fix_text(f)


def test_control_the_device_allocator_alone_keeps_its_own_words(tmp_path):
    """Control (the same on main): ``cudaMalloc`` / ``cudaFree`` in the loop and no pinned call -- the device
    allocator's words and fix, no pinned memory said."""
    truth = write_pinned_loop(str(tmp_path / "run.sqlite"), pin_ms=0.0, unpin_ms=0.0, device_ms=4.0)
    f = _churn(first_host(tmp_path / "run.sqlite")["findings"])
    assert f["metric"]["detail"]["allocator_ms_per_step"] == pytest.approx(truth["alloc_ms"], rel=0.02)
    assert "cudaMalloc / cudaFree" in f["title"] and "inned" not in f["summary"], f["summary"]


def test_pinned_calls_holding_most_of_the_allocators_time_lead_the_words(tmp_path):
    """Both kinds in the loop (9 ms pinned, 2 ms device): the whole 11 ms is the allocator's, said as mostly
    page-locking, the device calls' share given beside it."""
    truth = write_pinned_loop(str(tmp_path / "run.sqlite"), device_ms=1.0)
    f = _churn(first_host(tmp_path / "run.sqlite")["findings"])
    assert f["metric"]["detail"]["allocator_ms_per_step"] == pytest.approx(truth["alloc_ms"], rel=0.02)
    assert "most of it page-locking host memory" in f["summary"] and "device memory's own calls" in f["summary"]


def _pinning_steps(alloc: str, free: str, n: int = 5) -> list[dict]:
    """``n`` ProfilerSteps of 1 ms: ``aten::pin_memory`` whose ``alloc`` call takes 300 us (the GPU idle), a GEMM,
    and the pinned buffer's ``free`` (100 us) where the tensor dies."""
    ev: list[dict] = []
    t, corr = 100.0, 0
    for s in range(n):
        ev.append({**HOST, "cat": "user_annotation", "name": f"ProfilerStep#{s + 1}", "ts": t, "dur": 1000})
        corr += 1
        ev += [{**HOST, "cat": "cpu_op", "name": "aten::pin_memory", "ts": t + 10, "dur": 320},
               {**HOST, "cat": "cuda_runtime", "name": alloc, "ts": t + 15, "dur": 300, "args": {"correlation": corr}}]
        corr += 1
        ev += kineto_doc.mm_launch(t + 340, corr, 300)
        corr += 1
        ev += [{**HOST, "cat": "cpu_op", "name": "aten::add", "ts": t + 690, "dur": 120},
               {**HOST, "cat": "cuda_runtime", "name": free, "ts": t + 700, "dur": 100, "args": {"correlation": corr}}]
        t += 1000
    return ev


@pytest.mark.parametrize("alloc, free", [("cudaHostAlloc", "cudaFreeHost"), ("hipHostMalloc", "hipHostFree")])
def test_a_pytorch_step_pinning_a_tensor_is_told_to_pin_once(tmp_path, alloc, free):
    """By construction, PyTorch: each step pins a fresh tensor (CUDA's names, and HIP's on ROCm) -- the allocator's
    churn, the trace's own call names said, the fix a staging tensor pinned before the loop (main: no
    allocator_churn; the 400 us per step were the host's own time)."""
    rep = kineto_doc.session_report(tmp_path, _pinning_steps(alloc, free))
    f = _churn([{**f, "rule": f["id"].split(":")[0].split("#")[0]} for f in rep["findings"]])
    assert f"{alloc} ×" in f["summary"] and f"{free} ×" in f["summary"], f["summary"]
    assert "pin_memory=True" in _fix_text(f) and "PYTORCH_NO_CUDA_MEMORY_CACHING" not in _fix_text(f)


def test_every_vendors_pinned_calls_are_the_allocators():
    """The names, with Nsight's API-version suffix: pinned calls are allocator calls, their frees frees; a copy is
    neither."""
    for name in ("cudaHostAlloc_v3020", "cudaMallocHost", "cuMemHostAlloc", "hipHostMalloc", "cudaHostRegister"):
        assert devices.is_pinned_alloc_call(name) and devices.is_alloc_call(name), name
    for name in ("cudaFreeHost_v3020", "hipHostFree", "cuMemFreeHost", "cudaHostUnregister"):
        assert devices.is_any_free_call(name), name
    assert not devices.is_alloc_call("cudaMemcpyAsync_v3020") and not devices.is_any_free_call("cudaHostAlloc")


def _pinned_ms_by_hand(path: Path) -> dict[str, tuple[int, float]]:
    """(calls, ms) per pinned call whose start lies between the GPU's first and last work, read with ``sqlite3``."""
    with sqlite3.connect(path) as con:
        lo, hi = con.execute("SELECT min(start), max(end) FROM (SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL "
                             "UNION ALL SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY)").fetchone()
        rows = con.execute("SELECT s.value, count(*), sum(r.end - r.start) / 1e6 FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                           "JOIN StringIds s ON s.id = r.nameId WHERE r.start BETWEEN ? AND ? AND s.value IN "
                           "('cudaHostAlloc_v3020', 'cudaFreeHost_v3020') GROUP BY s.value", (lo, hi)).fetchall()
    return {name.split("_v")[0]: (n, ms) for name, n, ms in rows}


def test_extrap_parallel_kernels_pass_is_pinned_allocation_churn():
    """The real capture: three tests run once, each pinning and freeing its buffers; the GPU idles ~204 ms in the
    allocator's calls.  Main: top "Host-bound: the GPU waits for the host's own work ... 207.7 ms" with a CUDA-graph
    fix, no allocator_churn.  Here: allocator_churn leads, naming the pinned calls as counted by hand."""
    host = first_host(KEPT)
    bad = [f for f in host["findings"] if f["severity"] in ("warning", "critical")]
    assert bad and bad[0]["rule"] == "allocator_churn", [(f["rule"], f["title"]) for f in bad]
    f = bad[0]
    hand = _pinned_ms_by_hand(KEPT / "profile16.sqlite")
    for name, (n, _) in hand.items():
        assert f"{name} ×{n}" in f["summary"], f["summary"]
    said = float(re.search(r"take ([\d.]+) ms of the host's time", f["summary"]).group(1))
    assert said == pytest.approx(sum(ms for _, ms in hand.values()), abs=0.1)
    assert "CUDA graph" not in _fix_text(f) and "once" in _fix_text(f)


def test_the_pinned_calls_are_told_per_step_beside_the_step_they_are_a_part_of(tmp_path):
    """h37-review33.  Main (d836206e): "The GPU idles 13.0 ms of each 19.1 ms step ... cudaHostAlloc ×10,
    cudaFreeHost ×10 take 100.0 ms of the host's time in the steps; device memory's own calls 30.0 ms" -- the calls
    summed over the 10 kept steps beside a per-step idle, a part (100 ms) read against a 19.1 ms step.  By construction: 7 + 3 ms of pinned calls and 1.5 ms of device ones
    each iteration; every number of the sentence is one step's, the calls' time within the step's."""
    truth = write_pinned_loop(str(tmp_path / "run.sqlite"), iterations=12, pin_ms=7.0, unpin_ms=3.0, device_ms=1.5)
    host = first_host(tmp_path / "run.sqlite")
    f = _churn(host["findings"])
    said = f["summary"]
    assert host["steps"]["count"] > 1, host["steps"]
    assert "each step calls cudaHostAlloc ×1, cudaFreeHost ×1, 10.0 ms of the host's time" in said, said
    assert "device memory's own calls 3.00 ms." in said, said  # a cudaMalloc and a cudaFree of 1.5 ms each
    (step_ms,) = [float(x) for x in re.findall(r"of each ([\d.]+) ms step", said)]
    (pinned_ms,) = [float(x) for x in re.findall(r"([\d.]+) ms of the host's time", said)]
    assert pinned_ms <= step_ms, (pinned_ms, step_ms)  # main: 100.0 ms of pinned calls beside a 19.1 ms step
    assert truth["pinned_ms"] == pytest.approx(10.0)
