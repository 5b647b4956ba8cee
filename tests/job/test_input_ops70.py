"""A compiled graph that ran with only its input pipeline's ops recorded: no loop that fetched batches and ran no
model, and no proof of work on the CPU (h37-hunt70e, issue #37 class 1: a window with no GPU work).

The real capture, kept (Apache-2.0): awslabs/sagemaker-debugger's ``utils/ip-172-31-19-241.trace.json`` @7e7aad69,
the untrimmed original of ``wild/tf_keras_ops_unrecorded_8gpu`` (``wild/tf_keras_input_ops_8gpu``): one Keras
``train_function`` call of 63.9 ms on a SageMaker host listing 8 GPUs, no line on any GPU plane.  Its tf.data
pipeline's ops are on ``tf_Compute`` (``DecodePng``, ``ParseExampleV2``, ``random_flip_left_right/mul:Mul``; the
consumer's ``IteratorGetNextOp::DoCompute`` 13.5 ms, the batch handed to the graph by ``IteratorGetNext/_1:_Send``,
whose ``to`` names a Grappler layout transpose of ``gradient_tape/model/conv2d``); then 49 ms of the graph's run hold
no op; the callbacks' eager ``WriteSummary`` after it.  Base dbf6cf15 read it "the input pipeline only ... no model
op ... the loop fetched its batches on the CPU and ran no model on them", fix "run the step on each batch".
Controls (pass on both): the CPU-only Keras capture (its tf.data ops and its graph's own ops on ``tf_Compute``) still
ran on the CPU; the same file with one model op put inside the graph's run reads as work on the CPU.  The trimmed
capture's reading is tests/job/test_ops_unrecorded70.py's."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support.cli_report import cli_report
from tests.support.tf_trace_edits import with_graph_op

_WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"
_RUN = _WILD / "tf_keras_input_ops_8gpu"
_FILE = "plugins/profile/2020_05_11_14_26_57/ip-172-31-19-241.trace.json.gz"


def _job_and_warning(path: Path) -> tuple[dict, dict]:
    host = cli_report(path)["hosts"][0]
    (f,) = [f for f in host["findings"] if f["rule"] == "capture_quality" and f["severity"] == "warning"]
    return host["job"], f


def test_a_graph_run_with_only_its_input_pipelines_ops_recorded_ran_a_model_where_not_shown():
    job, f = _job_and_warning(_RUN)
    assert job["kind"] == "unknown" and job["kind_confidence"] == "low", job
    ev = job["kind_evidence"]
    assert "__inference_train_function_7724" in ev and "not recorded" in ev, ev
    assert "input pipeline only" not in ev and "ran on the CPU" not in ev, ev
    words = f["summary"] + " ".join((a["text"] or "") + (a["snippet"] or "") for a in f["actions"])
    assert "no model" not in words and "move the model" not in words, words
    assert "host_tracer_level=2" in words, words


def test_control_the_same_run_with_a_model_op_inside_the_graph_reads_as_work_on_the_cpu(tmp_path: Path):
    with_graph_op(_RUN / _FILE, tmp_path / "run" / Path(_FILE).parent, 30000,
                  {"name": "MatMul", "args": {"long_name": "model/dense/MatMul:MatMul"}})
    job, _ = _job_and_warning(tmp_path / "run")
    assert job["kind"] == "no_gpu" and "ran on the CPU" in job["kind_evidence"], job


def test_control_the_cpu_only_keras_capture_with_its_pipelines_ops_still_ran_on_the_cpu(tmp_path: Path):
    shutil.copytree(_WILD / "tf_keras_fit_cpu_mac", tmp_path / "mac")
    job, _ = _job_and_warning(tmp_path / "mac")
    assert job["kind"] == "no_gpu" and "the work ran on the CPU" in job["kind_evidence"], job
