"""An inference-only runtime says what the job is by its own NVTX ranges: TensorRT opens ``ExecutionContext::execute``
/ ``enqueue`` around each run of a built engine (in its ``TensorRT`` domain, one range per layer inside), and it runs
nothing but inference.

Read off a real export in the h37-survey-nsys survey (LeiWang1999/memfusion_artifact, no licence: described in
``tests/fixtures/wild/SURVEY.md``, not kept): a TensorRT fp16 conv net on an RTX 3090, one ``ExecutionContext::execute``
of 6.84 ms around 36 kernels, was "GPU work of an unknown kind".  Here the same shape by construction
(``synthetic.nsysexport``: a native loop, no framework, each step inside TensorRT's range)."""

from __future__ import annotations

import os
from types import SimpleNamespace

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor.runtime.pipeline import analyze_session


def _job(tmp_path, ranges: tuple[str, ...]) -> dict:
    p = str(tmp_path / f"trt{len(ranges)}.sqlite")
    write(p, NsysJob(steps=8, ops=6, step_range=None, autograd_nvtx=False, extra_ranges=ranges))
    host = SimpleNamespace(host="h0", path=p, format="nsys", size=os.path.getsize(p))
    return analyze_session("trt", "s", [host]).to_dict()["hosts"][0]["job"]


def test_tensorrt_running_its_engine_is_inference(tmp_path):
    job = _job(tmp_path, ("ExecutionContext::enqueueV3",))
    assert job["kind"] == "inference" and job["kind_confidence"] == "high"
    assert "TensorRT" in job["kind_evidence"] and "`ExecutionContext::enqueueV3` ×8" in job["kind_evidence"]


def test_the_same_loop_without_it_names_no_kind(tmp_path):
    # the control: nothing else in the export names the work -- its loop of GEMMs with no gradient kernel reads
    # forward passes at medium confidence at most (``job.kind.forward_loop_kind``), never TensorRT's high
    job = _job(tmp_path, ())
    assert job["kind_confidence"] != "high" and "TensorRT" not in job["kind_evidence"]
