"""A JAX session's ``<host>.trace.json.gz`` read alone is JAX's file, in JAX's words, by what its events hold.

TensorFlow and JAX both write ``<host>.trace.json.gz`` (the XPlane printed event by event, ``formats/xplane/
viewer_json``).  Base said what the file is from its name alone: every ``<host>.trace.json.gz`` was "TensorFlow's trace
viewer JSON ... what TensorFlow 2.2 saved instead of an XPlane", and only ``perfetto_trace.json.gz`` was JAX's -- so a
JAX session kept as its viewer JSON alone (``PjitFunction(train_step)`` on its host, ``jit_train_step`` modules on its
kernels, its framework read as JAX and its fix JAX's) was told it was TensorFlow 2.2's, and what it lost left out XLA's
HLO modules (h37-wild60 *Left* 3).

Truth: the real JAX sessions -- the project's H200 ``jax_jit_inference`` and ``jax_mem_mlp`` (kept), and the 11 H100
sessions of ``../shared/profiles/real-h100-jax`` (skipped where absent) -- each a folder holding only the
``vm.trace.json.gz`` JAX wrote beside its XPlane, whose events are JAX's by hand (``PjitFunction(...)``,
``CommonPjRtLoadedExecutable::Execute (jit_...)``, kernels' ``hlo_module`` ``jit_...``); the XPlane's ``jax_version``
says JAX too.  TensorFlow's own JSON keeps TensorFlow's words (``test_xplane_viewer_json``, a control)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tb_gpu_advisor.cli.main import main as cli
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.frameworks import detect_trace
from tests.support.paths import FIXTURES, SHARED_PROFILES

KEPT = [FIXTURES / "h200_jobs" / "jax_jit_inference", FIXTURES / "h200_memory" / "jax_mem_mlp"]
SHARED = sorted(p for p in (SHARED_PROFILES / "real-h100-jax").glob("*") if p.is_dir())


def _json_alone(run: Path, root: Path) -> Path:
    """A copy of ``run``'s session folder holding its ``vm.trace.json.gz`` only."""
    (src,) = run.glob("plugins/profile/*/vm.trace.json.gz")
    folder = root / run.name / "plugins" / "profile" / src.parent.name
    folder.mkdir(parents=True)
    shutil.copy(src, folder / src.name)
    return folder / src.name


def _note(path: Path, capsys) -> dict:
    assert cli(["report", str(path), "--format", "json"]) == 0
    (report,) = json.loads(capsys.readouterr().out)["reports"]
    (note,) = [f for f in report["findings"] if f["metric"] and f["metric"]["id"] == "records_not_kept"]
    return note


@pytest.mark.parametrize("run", KEPT, ids=lambda p: p.name)
def test_a_jax_sessions_viewer_json_alone_is_said_to_be_jaxs(run, tmp_path, capsys):
    """Fails on base: "TensorFlow's trace viewer JSON ... what TensorFlow 2.2 saved instead of an XPlane", and no word
    of XLA's HLO.  The framework read from its events is JAX's; so are the file's words and what it lost."""
    path = _json_alone(run, tmp_path)
    trace = read_trace(str(path))
    assert detect_trace(trace).id == "jax"
    assert trace.printed_from.startswith("JAX's trace viewer JSON")
    note = _note(path, capsys)
    assert "TensorFlow" not in note["summary"], note["summary"]
    assert "JAX's trace viewer JSON" in note["summary"] and "XLA's HLO modules" in note["summary"]
    assert "jax.profiler.trace" in note["actions"][0]["text"]


@pytest.mark.skipif(not SHARED, reason="../shared/profiles/real-h100-jax (the real H100 JAX sessions) is absent")
def test_every_real_h100_jax_session_kept_as_its_viewer_json_speaks_jax(tmp_path, capsys):
    """Fails on base (11 of 11 said TensorFlow 2.2's file).  Every session: JAX's words, XLA's HLO said lost."""
    said = {}
    for run in SHARED:
        note = _note(_json_alone(run, tmp_path), capsys)
        said[run.name] = ("TensorFlow" not in note["summary"] and "JAX's trace viewer JSON" in note["summary"]
                          and "XLA's HLO modules" in note["summary"])
    assert len(said) == 11 and all(said.values()), said


def _device_only(tmp_path: Path, strip_ops: bool = False) -> Path:
    """The real H200 JSON with its host's planes taken out (a device plane alone, as a trimmed copy keeps it), and
    where asked its kernels' op stats too (``hlo_module``, ``hlo_op``, ``tf_op``)."""
    import gzip

    src = _json_alone(KEPT[0], tmp_path / "src")
    with gzip.open(src, "rb") as fp:
        doc = json.load(fp)
    host = {e["pid"] for e in doc["traceEvents"]
            if e.get("ph") == "M" and e.get("name") == "process_name" and e["args"]["name"].startswith("/host:")}
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("pid") not in host]
    for e in doc["traceEvents"]:
        if strip_ops and isinstance(e.get("args"), dict):
            for key in ("hlo_module", "hlo_op", "tf_op"):
                e["args"].pop(key, None)
    out = tmp_path / "run" / "plugins" / "profile" / "s" / "vm.trace.json.gz"
    out.parent.mkdir(parents=True)
    with gzip.open(out, "w") as fp:
        fp.write(json.dumps(doc).encode("utf-8"))
    return out


def test_a_device_plane_alone_is_jaxs_by_its_kernels_modules(tmp_path):
    """Fails on base (TensorFlow 2.2's words; the framework unknown).  No host event and no metadata are left, but
    every kernel of the 240 runs in the XLA module ``jit_forward`` (``hlo_module``): JAX's name for what it compiles."""
    trace = read_trace(str(_device_only(tmp_path)))
    assert detect_trace(trace).id == "jax"
    assert trace.printed_from.startswith("JAX's trace viewer JSON")


def test_a_json_whose_events_name_no_framework_claims_neither(tmp_path):
    """Fails on base (TensorFlow 2.2's words).  The device plane alone with its kernels' op stats taken out too: nothing
    in it says who wrote it, so neither framework is named."""
    trace = read_trace(str(_device_only(tmp_path, strip_ops=True)))
    assert detect_trace(trace).id == "unknown"
    assert "TensorFlow 2.2" not in trace.printed_from and "jax.profiler.trace" not in trace.printed_from
    assert trace.printed_from.startswith("a trace viewer JSON")
