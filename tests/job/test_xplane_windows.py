"""Every window is a report, in XPlane too (issue #37; h37-probe42w): a JAX or TensorFlow capture whose window holds
host work but no GPU work is read for what it holds, with its own profiler's fix.

* A loop that only fetched batches: JAX records no input event of its own -- its fetches are the program's ranges
  (``jax.profiler.TraceAnnotation('load_batch')``) -- and main read such a window "the work ran on the CPU ... move the
  model and its inputs there", with "Check that JAX sees the GPU", where torch.profiler's and TensorFlow's read "the
  input pipeline only".
* A GPU plane with nothing on it: XLA's and TensorFlow's GPU tracer writes a plane for each GPU the process's client
  saw, so the plane answers "was the GPU visible?" -- it was, and nothing ran on it -- where a capture of JAX's CPU
  backend has none.  Main asked the question of both.

Truth by construction: ``synthetic.jaxcapture.write_host_only_window``, ``synthetic.tfcapture.write_data_only_window``
and ``write_cpu_keras_batches(gpu=...)``.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest

from synthetic import jaxcapture as jc
from synthetic import tfcapture as tc
from tb_gpu_advisor.cli import main as cli


def _report(logdir: str) -> tuple[int, dict]:
    """The exit code and the one report of ``logdir`` (json)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(["report", logdir, "--format", "json", "--cache-dir", "off"])
    (rep,) = json.loads(out.getvalue())["reports"]
    return code, rep


def _window(rep: dict) -> tuple[dict, dict, str]:
    """The host's job, its one capture_quality finding, and that finding's words and fix code together."""
    (host,) = rep["hosts"]
    assert host["error"] is None and not host["damage"]
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality"]
    text = " ".join([f["title"], f["summary"]] + [a["text"] + " " + (a["snippet"] or "") for a in f["actions"]])
    return host["job"], f, text


def test_a_jax_trace_of_batch_fetches_alone_is_the_input_pipeline_with_jax_words(tmp_path):
    """Five ``load_batch`` ranges and no jitted call, the H100's plane empty: the input pipeline only, told to call the
    step inside ``jax.profiler.trace`` -- never "the work ran on the CPU", "move the model", or "check that JAX sees
    the GPU"."""
    truth = jc.write_host_only_window(tmp_path, "fetches")
    code, rep = _report(str(tmp_path / "fetches"))
    job, f, text = _window(rep)
    assert code == 0 and f["severity"] == "warning"
    assert job["kind"] == "no_gpu" and job["kind_evidence"].startswith(
        f"the input pipeline only: {truth['turns']} batch fetches (`load_batch`, {truth['fetch_ms']:.1f} ms inside "
        f"them)"), job["kind_evidence"]
    assert "only the input pipeline" in f["title"]
    assert "jax.profiler.trace" in text and "no jitted step ran" in text
    for wrong in ("the work ran on the CPU", "move the model", "sees the GPU", "torch", "prof.step()"):
        assert wrong not in text, wrong


@pytest.mark.parametrize("gpu_plane", [True, False])
def test_an_empty_gpu_plane_says_jax_saw_the_gpu_where_a_cpu_backend_is_asked(tmp_path, gpu_plane):
    """A loop of ``train`` steps whose work stays on the host: with the GPU's plane in the capture JAX saw the GPU (its
    name said) and the fix runs the steps there; without one (the CPU backend), whether JAX sees a GPU is the question,
    with ``print(jax.devices())``."""
    truth = jc.write_host_only_window(tmp_path, "steps", gpu_plane=gpu_plane, fetch=None)
    code, rep = _report(str(tmp_path / "steps"))
    job, f, text = _window(rep)
    assert code == 0 and job["kind"] == "no_gpu" and f["title"] == "No GPU activity in the capture"
    if gpu_plane:
        assert f"JAX saw the GPU -- the capture lists {truth['gpu']} --" in f["summary"], f["summary"]
        assert job["gpus_listed"] == truth["gpu"]
        assert "Run the traced steps on the GPU" in text and "Was the GPU visible" not in text
    else:
        assert "Was the GPU visible to JAX" in f["summary"] and "print(jax.devices())" in text
        assert "gpus_listed" not in job and "saw the GPU" not in text


def test_a_tensorflow_profile_of_tf_data_alone_gets_tensorflows_words(tmp_path):
    """``tf.profiler.experimental.start`` around ``for batch in ds.take(6)``: the input pipeline only (main read that
    already), and its fix says to run the step between the profiler's start and stop -- not the generic "profile a
    short steady-state window instead of the whole run"."""
    session = tmp_path / "data" / "plugins" / "profile" / jc.SESSION
    session.mkdir(parents=True)
    truth = tc.write_data_only_window(str(session / "worker0.xplane.pb"))
    code, rep = _report(str(tmp_path / "data"))
    job, f, text = _window(rep)
    assert code == 0 and job["kind_evidence"].startswith(
        f"the input pipeline only: {truth['batches']} batch fetches (`IteratorGetNextOp::DoCompute`, "
        f"{truth['fetch_ms']:.1f} ms inside them)")
    assert "only iterated the dataset" in text and "tf.profiler.experimental.start" in text
    assert "instead of the whole run" not in text and "move the model" not in text


def test_a_keras_run_on_the_cpu_beside_a_seen_gpu_is_told_where_its_ops_ran(tmp_path):
    """Keras batches whose graph ran on the CPU (``tf.device('/CPU:0')``) beside an A100 TensorFlow saw (its empty
    plane): the GPU went unused, and the fix logs each op's device -- not "check that TensorFlow sees the GPU"."""
    session = tmp_path / "cpu" / "plugins" / "profile" / jc.SESSION
    session.mkdir(parents=True)
    tc.write_cpu_keras_batches(str(session / "macbook.xplane.pb"), step_ms=(80.0, 81.0, 82.0, 80.0), gpu=tc.A100)
    code, rep = _report(str(tmp_path / "cpu"))
    job, f, text = _window(rep)
    assert code == 0 and job["gpus_listed"] == tc.A100.name
    assert f"TensorFlow saw the GPU -- the capture lists {tc.A100.name} --" in f["summary"]
    assert "set_log_device_placement(True)" in text and "sees the GPU" not in text
