"""Compiled graphs that ran with none of their ops recorded: where the work ran is not shown (h37-hunt70d, issue #37
class 1: a window with no GPU work).

The real capture, kept (Apache-2.0): awslabs/sagemaker-debugger's TensorFlow trace viewer JSON of a SageMaker host
listing 8 GPUs (``wild/tf_keras_ops_unrecorded_8gpu``): one Keras ``train_function`` call of 63.9 ms whose first
1.05 ms hold the function's input handling and then nothing -- none of the graph's ops on any thread (31
``tf_Compute`` threads named, all empty), no line on any GPU plane.  Base dbf6cf15 read it "high confidence: ... the
host made no GPU runtime call: the work ran on the CPU ... move the model and its inputs there".  A graph's executor
records each op it runs on the host's threads, a CPU op's compute and a GPU op's launch alike, so a graph that ran
with none of its ops recorded says nothing of where they ran.  Controls: the same team's CPU-only Keras capture
(``wild/tf_keras_fit_cpu_mac``, its ops on ``tf_Compute``) and the 8-GPU file with one op put on an executor thread
keep "the work ran on the CPU"."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support.cli_report import cli_report
from tests.support.tf_trace_edits import with_graph_op

_WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"
_SESSION = "plugins/profile/2020_08_05_13_37_44"
_GPU8 = _WILD / "tf_keras_ops_unrecorded_8gpu"


def _job_and_finding(path: Path) -> tuple[dict, dict]:
    host = cli_report(path)["hosts"][0]
    (f,) = [f for f in host["findings"] if f["rule"] == "capture_quality" and f["severity"] == "warning"]
    return host["job"], f


def test_a_graph_run_with_none_of_its_ops_recorded_is_no_proof_of_work_on_the_cpu():
    job, f = _job_and_finding(_GPU8)
    assert job["kind"] == "unknown" and job["kind_confidence"] == "low", job
    assert "ran on the CPU" not in job["kind_evidence"] and "__inference_train_function_7724" in job["kind_evidence"]
    assert "not recorded" in f["summary"] and "move the model" not in f["summary"], f["summary"]
    fixes = " ".join((a["text"] or "") + (a["snippet"] or "") for a in f["actions"])
    assert "host_tracer_level=2" in fixes and "set_log_device_placement" not in fixes, fixes


def test_control_the_same_graph_run_with_an_op_on_an_executor_thread_reads_as_work_on_the_cpu(tmp_path: Path):
    with_graph_op(_GPU8 / _SESSION / "ip-172-31-19-241.trace.json.gz", tmp_path / "run" / _SESSION, 2000,
                  {"name": "dense/MatMul:MatMul"})
    job, _ = _job_and_finding(tmp_path / "run")
    assert job["kind"] == "no_gpu" and "ran on the CPU" in job["kind_evidence"], job


def test_control_a_cpu_only_keras_capture_still_ran_on_the_cpu(tmp_path: Path):
    shutil.copytree(_WILD / "tf_keras_fit_cpu_mac", tmp_path / "run")
    job, _ = _job_and_finding(tmp_path / "run")
    assert job["kind"] == "no_gpu" and "the work ran on the CPU" in job["kind_evidence"], job
