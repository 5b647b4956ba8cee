"""A lookup the runtime makes inside a launching op is that op's host dispatch, once (h37-copy70, issue #37 class 3:
each wait to its cause, every microsecond once): ``cudaGetDevice``, ``cudaPointerGetAttributes``,
``cudaStreamIsCapturing``, ``cudaDeviceGetAttribute``, ``cudaFuncGetAttributes`` -- and ROCm's ``hip...`` names of the
same lookups -- inside ``aten::mm`` before its launch leave the ledger and the findings exactly as the same op taking
the same time with no call in it: not booked again as a recorded runtime call outside ops (h37-ledger69's
``bare_runtime_calls``), not as time the capture did not record, and not as a cold start when slow every step.
Outside any op, the same calls are the program's own recorded calls (ledger69's reading, now for these names too).

Truth by construction (hand-written Kineto traces as ``torch.profiler`` records them, an A100 and an MI300X).  A
control: these pass on base dbf6cf15 as on this branch (the check the brief asked for found no double count)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import kineto_doc

HOST = {"ph": "X", "pid": 1, "tid": 1}
GPU = {"ph": "X", "pid": 0, "tid": 7}
MI300X = {"id": 0, "name": "AMD Instinct MI300X", "computeMajor": 9, "computeMinor": 4, "totalGlobalMem": 206e9,
          "numSms": 304}
VENDORS = {"cuda": ("cuda", "cudaLaunchKernel", "ampere_sgemm_128x64_nn"),
           "hip": ("hip", "hipLaunchKernel", "Cijk_Ailk_Bljk_SB_MT64x64x16")}
LOOKUPS = ("GetDevice", "PointerGetAttributes", "StreamIsCapturing", "DeviceGetAttribute", "FuncGetAttributes")


def _steps(vendor: str, call: str | None, inside: bool, n: int = 8, call_us: float = 400.0) -> list[dict]:
    """``n`` 1 ms ProfilerSteps, each one ``aten::mm`` of 430 us launching a 100 us GEMM at its end; ``call`` (a
    lookup of ``call_us``) inside the op before its launch, or (``inside`` false) after the op with none around it."""
    prefix, launch, kernel = VENDORS[vendor]
    ev: list[dict] = []
    t, corr = 100.0, 0
    for s in range(n):
        ev.append({**HOST, "cat": "user_annotation", "name": f"ProfilerStep#{s + 1}", "ts": t, "dur": 1000})
        at, op = t + 10, 30 + (call_us if inside else 0)
        ev.append({**HOST, "cat": "cpu_op", "name": "aten::mm", "ts": at, "dur": op})
        if call:
            corr += 1
            ev.append({**HOST, "cat": "cuda_runtime", "name": prefix + call, "ts": at + 2 if inside else at + op + 100,
                       "dur": call_us, "args": {"correlation": corr}})
        corr += 1
        ev += [{**HOST, "cat": "cuda_runtime", "name": launch, "ts": at + op - 15, "dur": 10,
                "args": {"correlation": corr}},
               {**GPU, "cat": "kernel", "name": kernel, "ts": at + op, "dur": 100,
                "args": {"correlation": corr, "device": 0, "stream": 7}}]
        t += 1000
    return ev


def _report(tmp_path: Path, vendor: str, events: list[dict]) -> dict:
    return kineto_doc.session_report(tmp_path, events, None if vendor == "cuda" else MI300X)


def _reading(rep: dict) -> tuple:
    h = rep["hosts"][0]
    bd = {k: round(v, 4) for k, v in h["breakdown_ms"].items() if isinstance(v, (int, float)) and v}
    return bd, sorted((f["id"], f["severity"], (f.get("saving") or {}).get("ms_per_step")) for f in rep["findings"])


@pytest.mark.parametrize("vendor", ["cuda", "hip"])
@pytest.mark.parametrize("call", LOOKUPS)
def test_a_lookup_inside_a_launching_op_is_its_dispatch_once(tmp_path, vendor, call) -> None:
    got = _report(tmp_path / "a", vendor, _steps(vendor, call, inside=True))
    bare = _report(tmp_path / "b", vendor, _steps(vendor, None, inside=True))  # the same op, no call in it
    assert _reading(got) == _reading(bare)
    bd, found = _reading(got)
    assert bd.get("launch_wait", 0) >= 0.4  # the op's dispatch holds the GPU's next kernel
    assert not any(f[0].startswith("cold_start") for f in found)


@pytest.mark.parametrize("vendor", ["cuda", "hip"])
@pytest.mark.parametrize("call", ["GetDevice", "PointerGetAttributes", "StreamIsCapturing"])
def test_the_same_lookup_outside_any_op_is_the_programs_recorded_call(tmp_path, vendor, call) -> None:
    """After the op, with no op around it, the 400 us call is recorded host work (the call's own time), never time
    the capture did not record."""
    got = _report(tmp_path, vendor, _steps(vendor, call, inside=False))
    bd, _ = _reading(got)
    assert bd.get("host_compute", 0) == pytest.approx(0.4, abs=0.01)
