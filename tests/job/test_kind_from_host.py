"""The kind of work from the framework's own host events where no GPU record was kept (issue #37, h37-left34): a
CPU-only capture (``wild/lightning_cpu_fit``: Lightning's ``training_step`` on a laptop, autograd's backward nodes and
``Optimizer.step#Adam.step`` recorded) and one whose GPU side was lost (``wild/gpu_events_stripped``: a TorchRec
step's host events only, DDP's forward, its backward and ``FusedAdam.step`` among them) are training steps, and their fixes loop a
training step.  Control by construction: the same Lightning capture without its training events is work of no known
kind, told to loop its own step.  On main both kept captures got no kind from the host (``run_one_step()`` in the
no-GPU fix; no ``host_kind``).

A training wrapper's own phase ranges name the loop too (h37-left42): the kept Lightning capture with autograd's
nodes and the optimizer's events removed is still a training step by Lightning's ``run_training_batch`` /
``training_step`` ranges, and a validation pass built by construction from its structure (its training step renamed
``validation_step``, its batch fetch ``[_EvaluationLoop].val_next``, every training phase and hook dropped, the CUDA
allocator's events added and no GPU record: the shape of Isaiah1001's EfficientNet-B0 validation on Windows,
h37-survey22) is forward passes -- on main both read as work of no known kind.  The GPU path reads the same ranges
(one kernel added to each): a training phase without backward nodes is training, not "a forward pass"."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from types import SimpleNamespace

from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import FIXTURES

WILD = FIXTURES / "wild"


def _report(path: Path) -> dict:
    hosts = [SimpleNamespace(host="h0", path=str(path), format="kineto", size=path.stat().st_size)]
    return analyze_session("r", "s", hosts).to_dict()


def _trace(name: str) -> Path:
    return next(p for p in (WILD / name).rglob("*.pt.trace.json*"))


def _code(rep: dict) -> str:
    return "\n".join(a["snippet"] or "" for f in rep["findings"] for a in f["actions"])


def test_a_cpu_only_lightning_training_step_is_told_a_training_loop():
    rep = _report(_trace("lightning_cpu_fit"))
    job = rep["hosts"][0]["job"]
    assert (job["kind"], job["host_kind"]) == ("no_gpu", "training")
    assert "Optimizer.step#Adam.step" in job["kind_evidence"]
    code = _code(rep)
    assert "train_step(x, y)" in code and "run_one_step" not in code


def test_a_capture_whose_gpu_records_were_lost_keeps_its_training_kind_from_the_host():
    rep = _report(_trace("gpu_events_stripped"))
    job = rep["hosts"][0]["job"]
    assert (job["kind"], job["host_kind"]) == ("unknown", "training")
    said = job["kind_evidence"].split("its host events name a training step: ")[1]
    assert "zero_grad" not in said  # work only training does, not a zero_grad that a no-grad forward may follow
    assert "run_one_step" not in _code(rep)


def _kept() -> dict:
    with gzip.open(_trace("lightning_cpu_fit")) as f:
        return json.loads(f.read())


def _write(tmp_path: Path, d: dict) -> Path:
    dst = tmp_path / "cut.1.pt.trace.json"
    dst.write_text(json.dumps(d))
    return dst


def _name(e: dict) -> str:
    return str(e.get("name", ""))


def _without_training_events(d: dict) -> dict:
    """The capture without autograd's nodes, the optimizer's events and the backward's flow arrows."""
    d["traceEvents"] = [e for e in d["traceEvents"] if not pytorch.is_training_event(_name(e))
                        and e.get("cat") != "fwdbwd"]
    return d


def _validation_only(d: dict) -> dict:
    """A Lightning validation pass by construction from the kept fit: each ``training_step`` range becomes its
    strategy's ``validation_step``, each batch fetch the evaluation loop's ``val_next``; every other Lightning range
    (the training batch, backward, optimizer step, their hooks) and every training event is dropped."""
    rename = {"[pl][profile][Strategy]SingleDeviceStrategy.training_step":
              "[pl][profile][Strategy]SingleDeviceStrategy.validation_step",
              "[pl][profile][_TrainingEpochLoop].train_dataloader_next": "[pl][profile][_EvaluationLoop].val_next"}
    out = []
    for e in _without_training_events(d)["traceEvents"]:
        n = _name(e)
        if n in rename:
            out.append({**e, "name": rename[n]})
        elif not n.startswith("[pl][profile]"):
            out.append(e)
    d["traceEvents"] = out
    return d


def _cuda_allocator(d: dict, count: int = 40) -> dict:
    """The CUDA allocator's ``[memory]`` events on GPU 0 inside the window, as Kineto writes them: the GPU was used,
    its activity not recorded (no kernel, no runtime call)."""
    host = next(e for e in d["traceEvents"] if e.get("cat") == "cpu_op")
    for k in range(count):
        size = (1 << 20) * (1 if k % 2 == 0 else -1)
        d["traceEvents"].append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]",
                                 "pid": host["pid"], "tid": host["tid"], "ts": host["ts"] + k,
                                 "args": {"Device Type": 1, "Device Id": 0, "Addr": 1 << 30, "Bytes": size,
                                          "Total Allocated": (1 << 20) * (k % 2 == 0),
                                          "Total Reserved": 2 << 20}})
    return d


def _one_kernel(d: dict) -> dict:
    """One kernel on GPU 0 launched by one ``cudaLaunchKernel``, inside the first ATen op: GPU work recorded."""
    op = next(e for e in d["traceEvents"] if e.get("cat") == "cpu_op" and _name(e).startswith("aten::"))
    t = op["ts"]
    d["traceEvents"] += [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": op["pid"], "tid": op["tid"],
         "ts": t, "dur": 1, "args": {"correlation": 999001, "External id": 999001}},
        {"ph": "X", "cat": "kernel", "name": "void gemv_kernel<float>()", "pid": 0, "tid": 7, "ts": t + 5,
         "dur": 20, "args": {"device": 0, "stream": 7, "correlation": 999001, "External id": 999001}}]
    d["deviceProperties"] = [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85899345920,
                              "computeMajor": 8, "computeMinor": 0, "numSms": 108}]
    return d


def test_lightnings_training_phases_alone_name_a_training_step(tmp_path):
    rep = _report(_write(tmp_path, _without_training_events(_kept())))
    job = rep["hosts"][0]["job"]
    assert (job["kind"], job["host_kind"]) == ("no_gpu", "training")
    assert "its training wrapper's own ranges name a training phase: `[pl][profile]" in job["kind_evidence"]
    code = _code(rep)
    assert "train_step(x, y)" in code and "run_one_step" not in code


def test_a_lost_gpu_lightning_validation_pass_is_forward_passes(tmp_path):
    rep = _report(_write(tmp_path, _cuda_allocator(_validation_only(_kept()))))
    job = rep["hosts"][0]["job"]
    assert (job["kind"], job["host_kind"]) == ("unknown", "inference")
    assert "the GPU's activity was not recorded" in job["kind_evidence"]
    assert "an evaluation or prediction phase, forward passes: `[pl][profile][Strategy]SingleDeviceStrategy" \
           ".validation_step`" in job["kind_evidence"]
    code = _code(rep)  # the lost-records finding's capture advice: forward passes, under inference_mode
    assert "torch.inference_mode()" in code and "model(batch)" in code
    assert "train_step" not in code and "run_one_step" not in code


def test_the_gpu_path_reads_the_wrappers_phases(tmp_path):
    train = _report(_write(tmp_path, _one_kernel(_without_training_events(_kept()))))["hosts"][0]["job"]
    assert (train["kind"], train["kind_confidence"]) == ("training", "high")
    assert "training phase" in train["kind_evidence"]
    valid = _report(_write(tmp_path, _one_kernel(_validation_only(_kept()))))["hosts"][0]["job"]
    assert (valid["kind"], valid["kind_confidence"]) == ("inference", "high")
    assert "evaluation or prediction phase" in valid["kind_evidence"]


def test_without_training_events_or_phases_the_cpu_only_capture_is_work_of_no_known_kind(tmp_path):
    d = _without_training_events(_kept())
    d["traceEvents"] = [e for e in d["traceEvents"] if not pytorch.is_training_phase(_name(e))]
    rep = _report(_write(tmp_path, d))
    job = rep["hosts"][0]["job"]
    assert (job["kind"], job["host_kind"]) == ("no_gpu", "")
    code = _code(rep)
    assert "run_one_step" in code and "train_step" not in code
