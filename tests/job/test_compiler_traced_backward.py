"""A backward the compiler traces is no training (survey h37-survey40).

Aryan-Bahl/CS521-mp2's ``gpu/traces/myconv_inductor_trace.json`` (no licence: read in place, not kept) is the first
call of a ``torch.compile``d convolution on an NVIDIA A10G, forward only, profiled with CPU and CUDA activity: 1.04 s
in ``inductor_conv``, 0.96 s of it Dynamo compiling.  Its parameters require grad, so AOTAutograd traced the joint
forward + backward graph inside ``create_aot_dispatcher_function (dynamo_timed)``: 22 backward nodes
(``autograd::engine::evaluate_function: ViewBackward0`` ...), every one inside that span, on fake tensors, no
backward kernel anywhere.  Main read "a training step [high confidence]".  The wrong assumption: a backward node in the
trace is a backward the job ran.  Here by construction (``synthetic.torchtrace.write_compiled_first_call``)."""

from __future__ import annotations

import gzip
import json

from synthetic.torchtrace import TRACED_BACKWARD, write_compiled_first_call
from tests.support.cli_report import cli_report


def _events(path) -> list[dict]:
    raw = open(path, "rb").read()
    doc = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    return [e for e in doc["traceEvents"] if e.get("ph") == "X"]


def test_the_traced_backward_lies_inside_the_compile_spans(tmp_path):
    """Premise, off the written file: every backward node lies inside ``create_aot_dispatcher_function``."""
    p = tmp_path / "first.pt.trace.json"
    write_compiled_first_call(str(p))
    ev = _events(p)
    (aot,) = [e for e in ev if e["name"].startswith("create_aot_dispatcher_function")]
    nodes = [e for e in ev if "Backward" in e["name"]]
    assert len(nodes) == 2 * len(TRACED_BACKWARD)
    assert all(aot["ts"] <= e["ts"] and e["ts"] + e["dur"] <= aot["ts"] + aot["dur"] for e in nodes)


def test_a_compiled_forward_whose_compile_traced_a_backward_is_a_forward_pass(tmp_path):
    p = tmp_path / "first.pt.trace.json"
    truth = write_compiled_first_call(str(p))
    job = cli_report(p)["hosts"][0]["job"]
    assert job["kind"] == truth["kind"] == "inference", job
    assert "compiler tracing a backward graph" in job["kind_evidence"], job


def test_control_the_same_call_with_its_backward_run_is_training(tmp_path):
    """Control: the caller runs the backward after the compiled forward (autograd's thread, its own kernels)."""
    p = tmp_path / "train.pt.trace.json"
    truth = write_compiled_first_call(str(p), backward_after=True)
    job = cli_report(p)["hosts"][0]["job"]
    assert job["kind"] == truth["kind"] == "training", job


def test_a_training_job_is_named_by_the_backward_it_ran(tmp_path):
    """The evidence of training is the backward the job ran (``CompiledFunctionBackward``), not one the compiler traced
    (main named ``autograd::engine::evaluate_function: ViewBackward0``, from inside the compile spans)."""
    p = tmp_path / "train.pt.trace.json"
    write_compiled_first_call(str(p), backward_after=True)
    evidence = cli_report(p)["hosts"][0]["job"]["kind_evidence"]
    assert "CompiledFunctionBackward" in evidence and "ViewBackward0" not in evidence, evidence
