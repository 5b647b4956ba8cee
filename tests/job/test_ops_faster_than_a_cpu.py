"""An op that returns faster than any CPU computes its FLOPs queued them on a GPU (issue #37, survey h37-survey19).

The real class: XAheli/torch-profiler's bf16 GEMM benchmark on an H200 (kept: ``wild/gemm_h200_cuda_unrecorded``,
MIT).  It asked for ``ProfilerActivity.CUDA``, yet its file holds host events only -- no launch, no runtime call, no
kernel --, so main read it as "the host made no GPU runtime call: the work ran on the CPU" and told the user to move
the model to the GPU.  The shapes say otherwise: each `aten::matmul` bf16 [2048,4096]x[4096,14336] is 240.5 GFLOP
and returned after 85-142 us, 1.7-2.8 PFLOP/s, where the fastest CPU matrix units peak near 0.5 PFLOP/s
(``devices.peaks.CPU_PEAK_FLOPS``).  The work was queued on the GPU; the capture lost its GPU side.

Truth by construction for the control: the same capture with its clock slowed a thousandfold (every op 1,000 times
longer, 2.8 TFLOP/s at most: a rate a CPU reaches) stays CPU work; the kept CPU-only trace (``wild/cpu_model_a100``)
computes far under the ceiling.
"""

from __future__ import annotations

import gzip
import json
from types import SimpleNamespace

import numpy as np

from tb_gpu_advisor.devices.peaks import CPU_PEAK_FLOPS
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import FIXTURES

(GEMM,) = (FIXTURES / "wild" / "gemm_h200_cuda_unrecorded").glob("*.pt.trace.json.gz")


#: host ops alone, as torch.profiler wrote them: CUDA activity not recorded (h37-probe42c)
UNRECORDED = "The capture recorded no CUDA activity: the GPU's work is not in it"


def _analyse(path: str, name: str) -> dict:
    hosts = [SimpleNamespace(host="h0", path=path, format="kineto", size=0)]
    rep = analyze_session(name, "s", hosts).to_dict()
    return {**rep["hosts"][0], "findings": rep["findings"]}


def _slowed(tmp, factor: float) -> str:
    """The kept capture with every time stretched ``factor`` times from its first event: the same ops, slower."""
    doc = json.loads(gzip.decompress(GEMM.read_bytes()))
    t0 = min(float(e["ts"]) for e in doc["traceEvents"] if "ts" in e)
    for e in doc["traceEvents"]:
        if "ts" in e:
            e["ts"] = t0 + (float(e["ts"]) - t0) * factor
        if "dur" in e:
            e["dur"] = float(e["dur"]) * factor
    path = tmp / "slowed.1.pt.trace.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_the_real_gemm_benchmark_is_gpu_work_whose_cuda_activity_was_not_recorded():
    rep = _analyse(str(GEMM), "gemm")
    job = rep["job"]
    assert job["kind"] == "unknown" and "ran on the CPU" not in job["kind_evidence"], job
    assert "aten::matmul bf16 [2048,4096]x[4096,14336]" in job["kind_evidence"], job["kind_evidence"]
    # the op's return time and what its FLOPs take at least, never their quotient as a GPU's rate (h37-peak: main
    # printed "2.84 PFLOP/s", above the H200's own peak)
    ev = " ".join(job["kind_evidence"].split())
    assert "returned after 84.7 us" in ev and "PFLOP/s" not in ev and "CUDA activity was not recorded" in ev, ev
    top = rep["findings"][0]
    assert top["rule"] == "capture_quality" and top["title"] == UNRECORDED, top["title"]
    assert "move the model" not in top["summary"] and "ProfilerActivity.CUDA" in json.dumps(top["actions"])


def test_the_same_ops_at_a_cpus_pace_stay_cpu_work(tmp_path):
    """A thousand times slower, the same matmuls run at 2.8 TFLOP/s at most: a CPU's pace, so the work was the CPU's."""
    job = _analyse(_slowed(tmp_path, 1000.0), "slowed")["job"]
    assert job["kind"] == "no_gpu" and "the work ran on the CPU" in job["kind_evidence"], job


def test_real_cpu_work_computes_far_under_the_ceiling():
    """The ceiling's margin on real CPU work: the kept CPU-only trace's fastest matmul is under 1% of it."""
    (path,) = (FIXTURES / "wild" / "cpu_model_a100").glob("*.json.gz")
    t = read_trace(str(path))
    fo = t.flop_ops
    seconds = (t.h.end[fo.host_idx] - t.h.start[fo.host_idx]) * 1e-12
    fastest = float(np.max(fo.flops[seconds > 0] / seconds[seconds > 0]))
    assert 0 < fastest < CPU_PEAK_FLOPS / 100, fastest


# ------------------------------------------------------------------------------------------ a scalar read that waited

(SCATTER,) = (FIXTURES / "wild" / "scattermoe_h200_item_sync").glob("*.pt.trace.json.gz")


def _reads_shortened(tmp, us: float) -> str:
    """The kept ScatterMoE capture with every ``.item()`` (``aten::item`` > ``aten::_local_scalar_dense``) lasting
    ``us``: what a read of a CPU tensor takes."""
    doc = json.loads(gzip.decompress(SCATTER.read_bytes()))
    for e in doc["traceEvents"]:
        if e.get("name") in ("aten::item", "aten::_local_scalar_dense"):
            e["dur"] = us
    path = tmp / "short_reads.1.pt.trace.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_the_real_scattermoe_forward_whose_item_waited_is_gpu_work_not_recorded():
    """Its matmuls run at a CPU's pace (8.3 TFLOP/s at most: no proof), but each step's `.item()` under
    `aten::bincount` blocked 2.3 ms: a read from host memory takes microseconds, so it waited on the GPU."""
    rep = _analyse(str(SCATTER), "scatter")
    job = rep["job"]
    assert job["kind"] == "unknown" and "ran on the CPU" not in job["kind_evidence"], job
    assert "`aten::_local_scalar_dense` under `aten::bincount` blocked 2.3 ms" in job["kind_evidence"], job
    top = rep["findings"][0]
    assert top["rule"] == "capture_quality" and top["title"] == UNRECORDED, top["title"]
    assert "move the model" not in top["summary"]


def test_the_same_capture_with_host_speed_reads_stays_cpu_work(tmp_path):
    """Truth by construction: its reads shortened to 3 us (a host read), nothing in it is beyond a CPU."""
    job = _analyse(_reads_shortened(tmp_path, 3.0), "short")["job"]
    assert job["kind"] == "no_gpu" and "the work ran on the CPU" in job["kind_evidence"], job


def test_real_cpu_scalar_reads_take_microseconds():
    """The bound's margin: the kept CPU-only trace's `.item()` reads last at most a few us, under 1% of 1 ms."""
    (path,) = (FIXTURES / "wild" / "cpu_model_a100").glob("*.json.gz")
    ev = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    longest_us = max(e["dur"] for e in ev if e.get("name") == "aten::_local_scalar_dense")
    assert 0 < longest_us < 10, longest_us
