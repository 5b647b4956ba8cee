"""A capture whose GPU side was not recorded is not CPU work (issue #37 survey, miss 5), on a real trace.

``wild/gpu_events_stripped`` is the host side of a TorchRec GPU step with every GPU and runtime event removed (HTA's
test data).  Read straight from its JSON here: its ops name work only a GPU does -- the NCCL process group's
``nccl:all_to_all`` and ``aten::record_stream`` -- so "the work ran on the CPU ... move the model" (main) is wrong: the
GPU's records are missing.  ``wild/cpu_only_gloo`` (gloo collectives, no GPU op) stays CPU work.
"""

from __future__ import annotations

import gzip
import json

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.frameworks import pytorch
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report

WILD = FIXTURES / "wild"


def _report(run: str) -> dict:
    (s,) = [s for s in discover(str(WILD)) if s.run == run]
    return session_report(s).to_dict()


def _op_names(run: str) -> set[str]:
    (path,) = (WILD / run).glob("*.json.gz")
    return {e["name"] for e in json.loads(gzip.decompress(path.read_bytes()))["traceEvents"] if e.get("cat") in ("cpu_op", "user_annotation")}


def test_ops_that_only_run_on_a_gpu_make_a_lost_gpu_side_not_cpu_work():
    names = _op_names("gpu_events_stripped")
    assert {"nccl:all_to_all", "aten::record_stream"} <= names  # the file's own evidence
    rep = _report("gpu_events_stripped")
    job = rep["hosts"][0]["job"]
    assert job["kind"] != "no_gpu" and job["kind_confidence"] == "low", job
    assert "nccl:all_to_all" in job["kind_evidence"] and "ran on the CPU" not in job["kind_evidence"]
    top = rep["findings"][0]
    assert top["rule"] == "capture_quality" and top["title"] == "The capture lost its GPU records", top["title"]
    text = top["summary"] + " ".join(a["text"] for a in top["actions"])
    assert "move the model" not in text and "ran on the CPU" not in text, text


def test_a_cpu_job_is_still_cpu_work():
    assert not any(pytorch.is_gpu_only_event(n) for n in _op_names("cpu_only_gloo"))
    job = _report("cpu_only_gloo")["hosts"][0]["job"]
    assert job["kind"] == "no_gpu" and "ran on the CPU" in job["kind_evidence"], job


def test_gpu_only_op_names():
    """The ops PyTorch runs only for GPU tensors, and look-alikes it runs on the CPU."""
    assert all(pytorch.is_gpu_only_event(n) for n in ("nccl:all_reduce", "nccl:all_to_all", "aten::record_stream",
                                                      "aten::cudnn_convolution", "aten::miopen_batch_norm",
                                                      "aten::_cudnn_rnn"))
    assert not any(pytorch.is_gpu_only_event(n) for n in ("gloo:all_reduce", "aten::copy_", "aten::pin_memory",
                                                          "record_param_comms", "aten::conv2d"))


def test_every_lost_gpu_side_is_one_kind_of_report_on_real_traces():
    """One rule for every way the GPU's side goes missing, on the two real captures that lost it: kernel launches with
    no kernel record (``lost_kernels_a100``) and ops that run only for GPU work with no GPU or runtime record
    (``gpu_events_stripped``) are each a report of the same kind -- the file read whole (no damage, the CLI's exit 0,
    1 under ``--fail-on warning``), its first finding "The capture lost its GPU records" -- never CPU work and never
    an input error.  Both were exit 2 ("damaged") while a job whose CUDA activity was not recorded at all was a report."""
    for run, evidence in (("gpu_events_stripped", "nccl:all_to_all"), ("lost_kernels_a100", "launched")):
        rep = _report(run)
        (host,) = rep["hosts"]
        assert host["error"] is None and not host["damage"], (run, host["damage"])
        assert not rep["healthy"]
        top = next(f for f in rep["findings"] if f["severity"] in ("warning", "critical"))
        assert top["rule"] == "capture_quality" and top["title"] == "The capture lost its GPU records", (run, top)
        assert evidence in top["summary"], (run, top["summary"])
