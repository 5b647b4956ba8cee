"""A runtime call the program makes itself between its steps is recorded time, the call's own; a lookup made every
step is no first call (h37-ledger69, issue #37 classes 3/4: each wait to its cause, every microsecond attributed once).

Truth by construction (hand-written Kineto traces, CUDA on an A100 and HIP on an MI300X, as ``torch.profiler`` records
them: ``ProfilerStep#N`` ranges, ``cpu_op``s launching their kernels, a ``cuda_runtime`` call with its correlation id
and no op around it):

- ``torch.cuda.mem_get_info()`` logged each step is one 700 us ``cudaMemGetInfo`` (``hipMemGetInfo``) with no op around
  it after the step's kernels: the ledger books it as the host's recorded work, and the gaps' finding names the call
  and asks it less often.  On base the gaps read "no runtime call, op, range or OS call covers it" and were told to
  record the host's code.
- a ``cudaFuncGetAttributes`` of 150 us every step is the program's steady cost: on base it read as "8 library
  start-up / module loading calls", a cold start.  The window's one slow first call of it, 1-2 us after (as the real
  ``wild/cold_loop_a4000_swin`` records it: 117 us, then 1-2 us), stays a one-time cost.
"""

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


def _steps(vendor: str, call: str, dur: list[float], n: int = 8) -> list[dict]:
    """``n`` 1 ms ProfilerSteps: two ``aten::mm`` each launching a 100 us GEMM, then ``call`` (``dur[s]`` us in step
    ``s``) with no op around it, the GPU idle until the next step."""
    prefix, launch, kernel = VENDORS[vendor]
    ev: list[dict] = []
    t, corr = 100.0, 0
    for s in range(n):
        ev.append({**HOST, "cat": "user_annotation", "name": f"ProfilerStep#{s + 1}", "ts": t, "dur": 1000})
        for at in (t + 10, t + 50):
            corr += 1
            ev += [{**HOST, "cat": "cpu_op", "name": "aten::mm", "ts": at, "dur": 30},
                   {**HOST, "cat": "cuda_runtime", "name": launch, "ts": at + 5, "dur": 10,
                    "args": {"correlation": corr}},
                   {**GPU, "cat": "kernel", "name": kernel, "ts": at + 20, "dur": 100,
                    "args": {"correlation": corr, "device": 0, "stream": 7}}]
        corr += 1
        ev.append({**HOST, "cat": "cuda_runtime", "name": prefix + call, "ts": t + 190, "dur": dur[s],
                   "args": {"correlation": corr}})
        t += 1000
    return ev


def _report(tmp_path: Path, vendor: str, call: str, dur: list[float]) -> dict:
    return kineto_doc.session_report(tmp_path, _steps(vendor, call, dur), MI300X if vendor == "hip" else None)


def _finding(rep: dict, rule: str) -> dict | None:
    found = [f for f in rep["findings"] if f["id"].split(":")[0] == rule]
    return found[0] if found else None


@pytest.mark.parametrize("vendor", ["cuda", "hip"])
def test_a_query_between_steps_is_the_calls_time(tmp_path, vendor):
    rep = _report(tmp_path, vendor, "MemGetInfo", [700.0] * 8)
    f = _finding(rep, "step_gaps")
    assert f is not None, [x["id"] for x in rep["findings"]]
    name = f"{VENDORS[vendor][0]}MemGetInfo"
    assert "no runtime call" not in f["summary"] and "did not record" not in f["summary"]
    assert "runtime calls" in f["summary"] and f"`{name}` 700 us" in f["summary"]
    first = f["actions"][0]["text"]
    assert first.startswith("Make these runtime calls less often") and name in first
    assert not any("Record what the host does" in a["text"] for a in f["actions"])
    if vendor == "hip":  # no CUDA words on AMD
        text = f["summary"] + " ".join(a["text"] for a in f["actions"])
        assert "cuda" not in text.lower(), text


def test_a_lookup_slow_every_step_is_no_cold_start(tmp_path):
    rep = _report(tmp_path, "cuda", "FuncGetAttributes", [150.0] * 8)
    assert _finding(rep, "cold_start") is None, _finding(rep, "cold_start")["summary"]


def test_a_lookups_slow_first_call_stays_one_time(tmp_path):
    rep = _report(tmp_path, "cuda", "FuncGetAttributes", [700.0] + [2.0] * 7)
    f = _finding(rep, "cold_start")
    assert f is not None and "cudaFuncGetAttributes" in f["summary"], [x["id"] for x in rep["findings"]]


def test_nsight_a_query_in_the_iterations_tail_is_the_calls_time(tmp_path) -> None:
    """An Nsight export of a program with no ML framework (``synthetic.nsysexport.write_untraced_iteration_tail``):
    each iteration range's tail is one ``cudaMemGetInfo`` (``CUPTI_ACTIVITY_KIND_RUNTIME``, 0.5 ms +/- 20%), the GPU
    idle.  The ledger books it as host work, and the gaps name the call; on base it was "not recorded"."""
    from synthetic import nsysexport as nx
    from tests.support.generated_host import nsys_host

    host = nsys_host(tmp_path, nx.write_untraced_iteration_tail, "loop.sqlite", tail_call="cudaMemGetInfo_v3020")
    assert host["breakdown_ms"]["host_compute"] >= 0.95 * host["truth"]["tail_ms"], host["breakdown_ms"]
    (f,) = [f for f in host["findings"] if f["rule"] == "step_gaps"]
    assert "did not record" not in f["summary"] and "`cudaMemGetInfo" in f["summary"], f["summary"]
    assert f["actions"][0]["text"].startswith("Make these runtime calls less often")
