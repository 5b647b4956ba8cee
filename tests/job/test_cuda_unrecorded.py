"""A GPU job profiled without its CUDA activity is not CPU work (issue #37, leftover of survey h37-survey-torch).

Two real traces of this class (solangii/gpu-practice ``profile/trace.json``, 1997MarsRover/cuda-guide
``profiler/trace.json``; no licence, so not kept: ``tests/fixtures/wild/SURVEY.md``) hold ATen ops and nothing of
CUDA's -- no launch, no runtime call, no GPU-only op -- yet the job put tensors on the GPU: the first ``aten::to``'s
``aten::empty_strided`` took 3.77 s (solangii) and 102 ms (cuda-guide).  A host allocation maps pages lazily: the
CPU-only traces read for the survey allocate in at most 1.6 ms.  An allocation of tens of ms or more is the GPU's
(the first creates the CUDA context), so main's "the host made no GPU runtime call: the work ran on the CPU" was
wrong there, and the fix is to record CUDA activity.

Truth by construction: a generated training run with every CUDA record taken out, and one ``.cuda()`` call put at its
start whose allocation lasts as a context's creation (GPU job) or as a host allocation does (CPU job).  Real guards:
the kept CPU-only traces (``wild/cpu_model_a100``, ``h200_jobs/torch_cpu_only``) allocate far under the bound and
stay CPU work.
"""

from __future__ import annotations

import gzip
import json
from types import SimpleNamespace

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.job.kind import _DEVICE_ALLOC_NS
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import FIXTURES

_GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "cuda_driver", "cuda_runtime", "ac2g")


def _cpu_only_looking_run(tmp, name: str, alloc_us: float, host_paced: bool = False) -> str:
    """A generated run with every CUDA record removed (as a capture without ``ProfilerActivity.CUDA`` leaves it) and
    one ``x.cuda()`` before its first op: ``aten::to`` > ``aten::_to_copy`` > ``aten::empty_strided`` lasting
    ``alloc_us``, then ``aten::copy_``.  The generated run is a GPU run: its ops return at a launch's pace, which for
    their FLOPs no CPU reaches, and its ``.item()`` waits milliseconds on the GPU
    (``tests/job/test_ops_faster_than_a_cpu.py``); ``host_paced`` makes it the CPU's in both: no ``Input Dims``
    (``record_shapes`` off: nothing says what an op computes) and each scalar read lasting a host read's 3 us."""
    (path,) = tt.write_run(str(tmp), "healthy_bf16", steps=6, run=name)
    doc = json.loads(open(path).read())
    ev = [e for e in doc["traceEvents"] if e.get("cat") not in _GPU_CATS and e.get("name") != "cudaLaunchKernel"]
    if host_paced:
        for e in ev:
            (e.get("args") or {}).pop("Input Dims", None)
            if e.get("name") in ("aten::item", "aten::_local_scalar_dense"):
                e["dur"] = 3.0
    ops = [e for e in ev if e.get("cat") == "cpu_op"]
    first = min(ops, key=lambda e: e["ts"])
    t0 = first["ts"] - alloc_us - 400.0
    where = {"ph": "X", "cat": "cpu_op", "pid": first["pid"], "tid": first["tid"], "args": {}}
    ev += [dict(where, name="aten::to", ts=t0, dur=alloc_us + 300.0),
           dict(where, name="aten::_to_copy", ts=t0 + 1, dur=alloc_us + 298.0),
           dict(where, name="aten::empty_strided", ts=t0 + 2, dur=alloc_us),
           dict(where, name="aten::copy_", ts=t0 + alloc_us + 5, dur=290.0)]
    doc["traceEvents"] = ev
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def _analyse(path: str, name: str) -> dict:
    hosts = [SimpleNamespace(host="h0", path=path, format="kineto", size=0)]
    rep = analyze_session(name, "s", hosts).to_dict()
    return {**rep["hosts"][0], "findings": rep["findings"]}


def test_by_construction_a_device_allocation_makes_gpu_work_whose_cuda_activity_was_not_recorded(tmp_path):
    gpu = _analyse(_cpu_only_looking_run(tmp_path, "gpu", alloc_us=800_000.0), "gpu")
    job = gpu["job"]
    assert job["kind"] == "unknown" and "ran on the CPU" not in job["kind_evidence"], job
    assert "CUDA activity was not recorded" in job["kind_evidence"] and "aten::empty_strided" in job["kind_evidence"]
    assert "under `aten::_to_copy`" in job["kind_evidence"], job["kind_evidence"]
    (top,) = [f for f in gpu["findings"] if f["rule"] == "capture_quality" and "GPU" in f["title"]]
    assert top["title"] == "The capture recorded no CUDA activity: the GPU's work is not in it", top["title"]
    assert "ProfilerActivity.CUDA" in json.dumps(top["actions"]), top["actions"]
    assert "move the model" not in top["summary"]


def test_rocms_device_allocation_is_told_in_hips_start_up_not_a_cuda_context(tmp_path):
    """The same run as ROCm's PyTorch writes it on an MI300X (``tt.as_rocm``: its header lists the AMD GPU, no CUDA
    version): h37-window62 said "no HIP call ... its HIP activity was not recorded" in the same sentence as "(the first
    one creates the CUDA context)" -- a HIP program creates none.  The start-up is the listed GPUs' runtime's
    (``devices.amd.TERMS["context_creation"]``); fails on 2aa60c44 (h37-review62)."""
    path = _cpu_only_looking_run(tmp_path, "rocm", alloc_us=800_000.0)
    with open(path) as f:
        doc = json.load(f)
    tt.write_doc(path, tt.as_rocm(doc))
    rocm = _analyse(path, "rocm")
    evidence = rocm["job"]["kind_evidence"]
    assert rocm["capture"]["vendor"] == "AMD" and "aten::empty_strided" in evidence, evidence
    assert "the HIP runtime's start-up" in evidence and "HIP activity was not recorded" in evidence, evidence
    assert "CUDA" not in evidence, evidence
    cuda = _analyse(_cpu_only_looking_run(tmp_path, "cuda", alloc_us=800_000.0), "cuda")["job"]["kind_evidence"]
    assert "the CUDA context's creation" in cuda and "HIP" not in cuda, cuda  # control: NVIDIA's words kept


def test_by_construction_a_host_sized_allocation_stays_cpu_work(tmp_path):
    """The same run whose allocation lasts what a large host allocation does (a few ms): the CPU's work, as before."""
    cpu = _analyse(_cpu_only_looking_run(tmp_path, "cpu", alloc_us=3_000.0, host_paced=True), "cpu")
    assert cpu["job"]["kind"] == "no_gpu" and "the work ran on the CPU" in cpu["job"]["kind_evidence"], cpu["job"]


@pytest.mark.parametrize("rel", ["wild/cpu_model_a100", "h200_jobs/torch_cpu_only"])
def test_real_cpu_only_traces_allocate_far_under_the_device_bound(rel):
    """The bound's margin on real CPU work: each kept CPU-only trace's longest ``aten::empty*`` is under 1% of it."""
    (path,) = (FIXTURES / rel).glob("*.json.gz")
    ev = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    longest_us = max(e.get("dur", 0) for e in ev if e.get("name") in ("aten::empty", "aten::empty_strided"))
    assert 0 < longest_us * 1000 < _DEVICE_ALLOC_NS / 100, longest_us


@pytest.mark.parametrize("backend,gpu", [("nccl", True), ("gloo", False)])
def test_by_construction_an_nccl_process_group_is_gpu_use(tmp_path, backend, gpu):
    """The same CPU-looking run with a host-sized allocation, whose header names its process group's backend
    (``distributedInfo``): NCCL moves only GPU tensors, so the job used the GPU and its CUDA activity was not
    recorded; gloo runs on the CPU (the kept ``wild/cpu_only_gloo`` rank), so the run stays CPU work."""
    path = _cpu_only_looking_run(tmp_path, backend, alloc_us=3_000.0, host_paced=True)
    doc = json.loads(open(path).read())
    doc["distributedInfo"] = {"backend": backend, "rank": 0, "world_size": 2}
    with open(path, "w") as f:
        json.dump(doc, f)
    job = _analyse(path, backend)["job"]
    if gpu:
        assert job["kind"] == "unknown" and "NCCL" in job["kind_evidence"], job
        assert "not recorded" in job["kind_evidence"]
    else:
        assert job["kind"] == "no_gpu" and "the work ran on the CPU" in job["kind_evidence"], job


def test_an_nccl_start_up_window_with_its_cuda_calls_stays_a_start_up_window(tmp_path):
    """With CUDA calls recorded (here the run's syncs, moved before its first op: what start-up leaves), NCCL
    changes nothing: the window's own calls say what it holds."""
    (path,) = tt.write_run(str(tmp_path), "healthy_bf16", steps=6, run="startup")
    doc = json.loads(open(path).read())
    ev = [e for e in doc["traceEvents"] if e.get("cat") not in _GPU_CATS[:-2] and e.get("name") != "cudaLaunchKernel"]
    doc["traceEvents"] = ev
    doc["distributedInfo"] = {"backend": "nccl", "rank": 0, "world_size": 2}
    with open(path, "w") as f:
        json.dump(doc, f)
    job = _analyse(path, "startup")["job"]
    assert "NCCL" not in job["kind_evidence"], job
