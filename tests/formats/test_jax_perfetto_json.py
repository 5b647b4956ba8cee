"""JAX's ``perfetto_trace.json.gz`` (``jax.profiler.trace(logdir, create_perfetto_trace=True)``) read as the session's
trace viewer JSON where nothing fuller sits beside it, and never beside it.

JAX writes it into ``plugins/profile/<session>/`` beside ``<host>.xplane.pb`` and ``<host>.trace.json.gz``: that JSON
re-written with its ``metadata`` entry deleted (jax ``_src/profiler.py`` ``_write_perfetto_trace_file``).  It is the
file people keep, upload and attach (ui.perfetto.dev opens it; jax-ml/jax #21295, google/perfetto #6251); a session
folder holding it alone read "tool data ... give the `<host>.xplane.pb`" (exit 2) although it holds every event of the
``<host>.trace.json.gz`` the Advisor reads where TensorFlow 2.2 kept no XPlane (h37-wild59 *Left* 1).

Truth: (1) a real JAX session (``tests/fixtures/h200_jobs/jax_jit_inference``: JAX's own XPlane and
``vm.trace.json.gz``), its Perfetto JSON made by JAX's own transformation -- read alone it gives the XPlane's steps and
step time; (2) by construction, ``synthetic.jaxcapture.write_perfetto_json`` of ``jax_step_annotation`` (8 annotated
steps)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from synthetic.jaxcapture import jax_step_annotation, write_perfetto_json
from tb_gpu_advisor.cli.main import main as cli
from tb_gpu_advisor.discover.logdir import discover, skipped
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "h200_jobs" / "jax_jit_inference" / "plugins" / "profile" \
    / "2026_11_27_14_54_27"
PERFETTO = "perfetto_trace.json.gz"


def _jax_perfetto(viewer_json: Path, out: Path) -> None:
    """What JAX writes from the session's ``<host>.trace.json.gz``: the same JSON less its ``metadata``."""
    with gzip.open(viewer_json, "rb") as fp:
        trace = json.load(fp)
    del trace["metadata"]
    with gzip.open(out, "w") as fp:
        fp.write(json.dumps(trace).encode("utf-8"))


def _step_ms(hm) -> float:
    (gpu,) = [g for g in hm.gpus if g.step_ms]
    return gpu.step_ms


def _session(root: Path, *names: str) -> Path:
    """A copy of the real JAX session holding ``names`` of its files, plus JAX's ``perfetto_trace.json.gz``."""
    folder = root / "run" / "plugins" / "profile" / REAL.name
    folder.mkdir(parents=True)
    for name in names:
        shutil.copy(REAL / name, folder / name)
    _jax_perfetto(REAL / "vm.trace.json.gz", folder / PERFETTO)
    return folder


def test_a_session_kept_as_its_perfetto_json_alone_is_read_as_the_xplane_reads(tmp_path):
    """Fails on base: "No GPU profiles read ... tool data" (exit 2).  The real XPlane's steps and step time, to the
    nanosecond's printing."""
    folder = _session(tmp_path)
    (session,) = discover(str(tmp_path))
    assert [(h.host, Path(h.path).name) for h in session.hosts] == [("perfetto_trace", PERFETTO)]
    assert skipped(str(tmp_path)) == []
    from_json = host_metrics(read_trace(str(folder / PERFETTO)))
    from_xplane = host_metrics(read_trace(str(REAL / "vm.xplane.pb")))
    assert from_json.steps.count == from_xplane.steps.count == 8
    assert _step_ms(from_json) == pytest.approx(_step_ms(from_xplane), abs=1e-3)


def test_read_alone_the_report_says_what_the_json_left_out_with_jaxs_fix(tmp_path, capsys):
    """Fails on base (exit 2).  JAX's words: its file, its losses (the GPU's properties, the allocator, XLA's HLO,
    so the job's kind is unknown) and the XPlane written beside it -- no TensorFlow 2.2 words."""
    folder = _session(tmp_path)
    assert cli(["report", str(folder / PERFETTO), "--format", "json"]) == 0
    (report,) = json.loads(capsys.readouterr().out)["reports"]
    (note,) = [f for f in report["findings"] if f["metric"] and f["metric"]["id"] == "records_not_kept"]
    assert "JAX's perfetto_trace.json.gz" in note["summary"] and "TensorFlow 2.2" not in note["summary"]
    assert "XLA's HLO modules" in note["summary"]
    assert "jax.profiler.trace wrote beside this JSON" in note["actions"][0]["text"]


@pytest.mark.parametrize("beside", [("vm.xplane.pb", "vm.trace.json.gz"), ("vm.xplane.pb",), ("vm.trace.json.gz",)])
def test_beside_a_fuller_file_of_its_session_it_is_never_read_twice(tmp_path, beside):
    """Control (one host on base too): beside the XPlane, the XPlane is read; beside ``<host>.trace.json.gz`` alone,
    that JSON (its host's name kept), never both."""
    _session(tmp_path, *beside)
    (session,) = discover(str(tmp_path))
    assert [Path(h.path).name for h in session.hosts] == [beside[0]]
    assert skipped(str(tmp_path)) == []


def test_given_by_path_beside_its_xplane_the_xplane_is_read(tmp_path, capsys):
    """Fails on base ("tool data ... give the `<host>.xplane.pb`", exit 2, with the XPlane right there)."""
    folder = _session(tmp_path, "vm.xplane.pb", "vm.trace.json.gz")
    assert cli(["report", str(folder / PERFETTO), "--format", "json"]) == 0
    (report,) = json.loads(capsys.readouterr().out)["reports"]
    assert [h["host"] for h in report["hosts"]] == ["vm"]
    assert not any(f["metric"] and f["metric"]["id"] == "records_not_kept" for f in report["findings"])


def test_a_generated_session_by_construction(tmp_path):
    """Fails on base (no session).  ``jax_step_annotation``: 8 annotated steps, 6 kept, the step time its truth."""
    sc = jax_step_annotation()
    (xplane,) = sc.write(tmp_path)
    write_perfetto_json(xplane, xplane.parent / PERFETTO)
    xplane.unlink()
    (session,) = discover(str(tmp_path))
    (host,) = session.hosts
    hm = host_metrics(read_trace(host.path))
    assert hm.steps.count == sc.truth.steady_steps
    assert _step_ms(hm) == pytest.approx(sc.truth.step_time_ps / 1e9, rel=1e-6)


def test_a_perfetto_protobuf_under_jaxs_name_in_a_session_is_named_by_its_bytes(tmp_path, capsys):
    """Fails on base (the tool-data words).  rocprofv3's pftrace (``tests/fixtures/foreign``) saved as
    ``perfetto_trace.json.gz`` in a session folder: a Perfetto protobuf, never "not JSON"."""
    pftrace = next((Path(__file__).resolve().parents[1] / "fixtures" / "foreign" / "perfetto_rocprofv3_pftrace")
                   .glob("*.pftrace"))
    folder = tmp_path / "run" / "plugins" / "profile" / "s1"
    folder.mkdir(parents=True)
    (folder / PERFETTO).write_bytes(gzip.compress(pftrace.read_bytes()))
    assert cli(["report", str(folder / PERFETTO)]) == 2
    err = capsys.readouterr().err
    assert "Perfetto protobuf" in err and "not JSON" not in err
