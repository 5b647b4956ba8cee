"""Every window is a report with its own tool's way to capture the right one (issue #37 class 1), also where the
capture does not say which framework wrote it (h37-window62).

TensorFlow and JAX both write the XPlane and its trace viewer JSON (``<host>.trace.json.gz``, classic or xprof's
streaming layout).  A JAX window that ran no jitted call -- ``jax.profiler.trace`` stopped during start-up, or around
host-only code -- kept as its JSON holds no ``/host:metadata`` plane (``jax_version``) and no dispatch or XLA module of
JAX's, so nothing in it names JAX.  Main read such a file with TensorFlow's words throughout: "TensorFlow saw the GPU",
"Record the window where TensorFlow runs its steps", Keras's ``profile_batch`` and ``tf.debugging
.set_log_device_placement`` as the only fixes, "Profile again on TensorFlow 2.3 or later" for the JSON's losses.  The
wrong assumption: *a capture whose writer is unknown is TensorFlow's*.  Now each window fix gives both writers' own
ways, each headed by whose it is; a capture that names its writer (the XPlane beside it, TF's own events) keeps that
writer's words alone (controls).

Truth by construction: ``synthetic.jaxcapture.write_startup_window`` / ``write_host_only_window`` printed by
``synthetic.tfcapture.write_trace_viewer_json`` (and ``streaming_viewer_doc``), ``tfcapture.write_data_only_window``.
"""

from __future__ import annotations

import gzip
import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from synthetic import jaxcapture as jc
from synthetic import tfcapture as tc
from tb_gpu_advisor.cli import main as cli


def _report(logdir: Path, *extra: str) -> tuple[int, dict]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(["report", str(logdir), "--format", "json", "--cache-dir", "off", *extra])
    (rep,) = json.loads(out.getvalue())["reports"]
    return code, rep


def _window(rep: dict) -> tuple[dict, dict, list[str], str]:
    """The host's job, its capture_quality warning, that warning's fixes (text + code each), all its words."""
    (host,) = rep["hosts"]
    assert host["error"] is None and not host["damage"]
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality" and f["severity"] == "warning"]
    fixes = [a["text"] + " " + (a["snippet"] or "") for a in f["actions"]]
    return host["job"], f, fixes, " ".join([f["title"], f["summary"], *fixes])


def _as_json(xplane: str, root: Path, layout: str) -> Path:
    """The session of ``xplane`` kept as its trace viewer JSON alone, in ``layout`` (classic or xprof's streaming);
    returns the run's folder."""
    session = root / "json_run" / "plugins" / "profile" / jc.SESSION
    session.mkdir(parents=True)
    printed = root / "printed.json"
    tc.write_trace_viewer_json(xplane, str(printed))
    doc = json.loads(printed.read_text())
    if layout == "streaming":
        doc = tc.streaming_viewer_doc(doc, "jaxhost")
    (session / "jaxhost.trace.json.gz").write_bytes(gzip.compress(json.dumps(doc).encode()))
    return root / "json_run"


@pytest.mark.parametrize("layout", ["classic", "streaming"])
def test_a_start_up_window_kept_as_json_gets_both_writers_ways(tmp_path: Path, layout: str) -> None:
    """CUDA driver calls and no launch: start-up, and the ways to capture the steps are TensorFlow's and JAX's both,
    each said as whose -- main: "where TensorFlow runs its steps" and Keras's ``profile_batch`` alone."""
    truth = jc.write_startup_window(tmp_path, "xplane_run")
    code, rep = _report(_as_json(truth["path"], tmp_path, layout))
    job, f, fixes, text = _window(rep)
    assert code == 0 and job["kind"] == "no_gpu"
    assert job["kind_evidence"].startswith(f"start-up only: {truth['calls']} CUDA calls: `{truth['context_call']}`")
    assert "Record the window where TensorFlow or JAX runs its steps" in f["summary"], f["summary"]
    assert len(fixes) == 2, fixes
    assert fixes[0].startswith("If TensorFlow wrote the capture: ") and "profile_batch" in fixes[0]
    assert fixes[1].startswith("If JAX wrote the capture: ") and "jax.profiler.trace(logdir)" in fixes[1]
    assert "Turn CUDA tracing on" not in text  # the calls show it was on
    # the job's capture advice too: both writers' code, each under its name
    assert "# TensorFlow:\n" in job["capture_advice"] and "# JAX:\n" in job["capture_advice"]
    assert _report(tmp_path / "json_run", "--fail-on", "warning")[0] == 1  # the same exit rule as every format


def test_a_host_only_window_kept_as_json_asks_no_framework_it_cannot_name(tmp_path: Path) -> None:
    """``train`` steps whose work stayed on the host, the H100's plane empty: the GPU was seen by whichever framework
    wrote it -- main: "TensorFlow saw the GPU", its one fix TensorFlow's device placement log; the JSON's losses were
    told "Profile again on TensorFlow 2.3 or later" alone."""
    truth = jc.write_host_only_window(tmp_path, "xplane_run", fetch=None)
    code, rep = _report(_as_json(truth["path"], tmp_path, "classic"))
    job, f, fixes, text = _window(rep)
    assert code == 0 and job["kind"] == "no_gpu" and f["title"] == "No GPU activity in the capture"
    assert "TensorFlow or JAX saw the GPU" in f["summary"], f["summary"]
    assert [x.split(":", 1)[0] for x in fixes] == ["If TensorFlow wrote the capture", "If JAX wrote the capture"]
    assert "set_log_device_placement" in fixes[0] and "jax.devices()" in fixes[1]
    (kept,) = [g for g in rep["findings"] if g["rule"] == "capture_quality" and g["severity"] == "info"]
    said = [a["text"] for a in kept["actions"]]
    assert any("TensorFlow 2.3" in a for a in said) and any("jax.profiler.trace wrote beside" in a for a in said)


def test_control_the_xplane_itself_names_jax_and_gets_its_words_alone(tmp_path: Path) -> None:
    """The same start-up window read from its XPlane (its ``/host:metadata`` names JAX): JAX's words alone, as on main."""
    jc.write_startup_window(tmp_path, "xplane_run")
    code, rep = _report(tmp_path / "xplane_run")
    job, f, fixes, text = _window(rep)
    assert code == 0 and "Record the window where JAX runs its steps" in f["summary"]
    assert len(fixes) == 1 and "jax.profiler.trace(logdir)" in fixes[0]
    assert "TensorFlow" not in text and "wrote the capture" not in text


def test_control_tensorflows_own_events_keep_its_words_alone(tmp_path: Path) -> None:
    """A tf.data-only window printed as its JSON: ``IteratorGetNextOp::DoCompute`` names TensorFlow -- its words alone."""
    session = tmp_path / "x" / "plugins" / "profile" / jc.SESSION
    session.mkdir(parents=True)
    tc.write_data_only_window(str(session / "worker0.xplane.pb"))
    run = _as_json(str(session / "worker0.xplane.pb"), tmp_path, "classic")
    code, rep = _report(run)
    job, f, fixes, text = _window(rep)
    assert code == 0 and "tf.profiler.experimental.start" in text
    assert "JAX" not in text and "wrote the capture" not in text
