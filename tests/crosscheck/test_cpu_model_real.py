"""A model run on the CPU is CPU work, whatever CUDA calls the window also holds (issue #37 survey h37-survey-torch).

``wild/cpu_model_a100`` (CodingPlatelets/SwitchTransformers, MIT) is a Switch Transformer forward profiled with CUDA
activity on, on a machine with an A100, whose model was never moved to the GPU.  Read straight from its JSON here:
2.27 s of ATen ops, among them 91 ``aten::addmm`` on float [1, 10, 1024] inputs, with no kernel launch anywhere; the
only CUDA calls (device count, properties and one ``cudaDeviceSynchronize`` of 675 ms: the context's creation) start
after the last op ended, when the profiler stopped.  Main called it "start-up only: ... no kernel was launched in the
window" and told the user to record a later window; the window already holds the whole job, on the CPU.
"""

from __future__ import annotations

import gzip
import json

from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.kineto_doc import kept_events
from tests.support.paths import FIXTURES
from tests.support.run_report import run_report

WILD = FIXTURES / "wild"


def _events(run: str) -> list[dict]:
    return kept_events(WILD / run)


def _report(run: str) -> dict:
    return run_report(WILD, run).to_dict()


def test_the_files_own_evidence_a_forward_on_the_cpu_then_the_profilers_stop():
    ev = _events("cpu_model_a100")
    ops = [e for e in ev if e.get("cat") == "cpu_op"]
    calls = [e for e in ev if e.get("cat") == "cuda_runtime"]
    assert not any(e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") for e in ev)
    assert sum(e["name"] == "aten::addmm" for e in ops) == 91
    assert sorted({e["name"] for e in calls}) == ["cudaDeviceSynchronize", "cudaGetDeviceCount",
                                                  "cudaGetDeviceProperties_v2"]
    assert min(e["ts"] for e in calls) > max(e["ts"] + e["dur"] for e in ops)  # every CUDA call after the last op


def test_matmuls_that_launched_nothing_make_cpu_work_not_a_start_up_window():
    rep = _report("cpu_model_a100")
    job = rep["hosts"][0]["job"]
    assert job["kind"] == "no_gpu", job
    assert "the model ran on the CPU" in job["kind_evidence"] and "aten::addmm" in job["kind_evidence"], job
    assert "start-up only" not in job["kind_evidence"], job
    top = rep["findings"][0]
    assert top["rule"] == "capture_quality" and top["title"] == "No GPU activity in the capture", top["title"]
    assert "move the model and its inputs there" in top["summary"], top["summary"]
    assert "ended during start-up" not in json.dumps(rep)


def test_by_construction_calls_after_the_ops_are_cpu_work_calls_among_them_are_not(tmp_path):
    """A generated training run with every GPU event and launch taken out: with its only CUDA call moved after the
    last op (what a CPU model and the profiler's stop leave) it is CPU work; with its ``.item()`` syncs left among the
    ops (a GPU model whose launches are gone) it is not called CPU work."""
    from types import SimpleNamespace

    from synthetic import torchtrace as tt

    def run(name: str, after: bool) -> dict:
        (path,) = tt.write_run(str(tmp_path), "healthy_bf16", steps=6, run=name)
        doc = json.loads(open(path).read())
        gpu = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "cuda_driver")
        ev = [e for e in doc["traceEvents"] if e.get("cat") not in gpu and e.get("name") != "cudaLaunchKernel"]
        calls = [e for e in ev if e.get("cat") == "cuda_runtime"]
        assert calls and all(c["name"] == "cudaStreamSynchronize" for c in calls)
        if after:
            end = max(e["ts"] + e.get("dur", 0) for e in ev if e.get("ph") == "X")
            ev = [e for e in ev if e.get("cat") != "cuda_runtime"]
            ev.append(dict(calls[0], ts=end + 10, dur=5))
        doc["traceEvents"] = ev
        with open(path, "w") as f:
            json.dump(doc, f)
        hosts = [SimpleNamespace(host="h0", path=path, format="kineto", size=0)]
        return analyze_session(name, "s", hosts).to_dict()["hosts"][0]["job"]

    cpu = run("after", True)
    assert cpu["kind"] == "no_gpu" and "the model ran on the CPU" in cpu["kind_evidence"], cpu
    among = run("among", False)
    assert "ran on the CPU" not in among["kind_evidence"], among


def test_a_gpu_the_capture_lists_is_one_the_program_saw_so_the_fix_moves_the_model_not_checks_visibility():
    """The trace's own header answers the question the finding used to ask: Kineto fills ``deviceProperties`` in the
    profiled process from the CUDA runtime's device count, and this one lists the A100 -- PyTorch saw it.  Main asked
    "Was the GPU visible to PyTorch?" and led with ``print(torch.cuda.is_available(), ...)``; the file says it was, and
    the work never reached it: the fix moves the model and its inputs (survey h37-survey33)."""
    with gzip.open(next((WILD / "cpu_model_a100").glob("*.json.gz"))) as f:
        assert [p["name"] for p in json.load(f)["deviceProperties"]] == ["NVIDIA A100 80GB PCIe"]
    rep = _report("cpu_model_a100")
    assert "NVIDIA A100 80GB PCIe" in rep["hosts"][0]["job"]["kind_evidence"]
    top = rep["findings"][0]
    assert top["rule"] == "capture_quality", top["rule"]
    assert "PyTorch saw the GPU" in top["summary"] and "NVIDIA A100 80GB PCIe" in top["summary"], top["summary"]
    assert "Was the GPU visible" not in top["summary"], top["summary"]
    fixes = json.dumps(top["actions"])
    assert "model.to(device)" in fixes and "torch.cuda.is_available()" not in fixes, fixes


def test_control_a_cpu_capture_that_lists_no_gpu_still_asks_whether_one_was_visible():
    """``wild/cpu_only_gloo`` (HTA, a gloo CPU job) has no ``deviceProperties``: nothing says a GPU was there, so the
    question stays, with its check of what PyTorch sees -- on PyTorch's device as the build names it: nothing in the
    file names a GPU vendor either (h37-vendor66; ``torch.cuda.is_available()`` before, the profilers' default)."""
    rep = _report("cpu_only_gloo")
    top = rep["findings"][0]
    assert top["rule"] == "capture_quality" and "Was the GPU visible to PyTorch" in top["summary"], top["summary"]
    assert "torch.<device>.is_available()" in json.dumps(top["actions"]), json.dumps(top["actions"])
    assert rep["hosts"][0]["capture"]["vendor"] == "unknown"
    assert "the program saw" not in rep["hosts"][0]["job"]["kind_evidence"]
