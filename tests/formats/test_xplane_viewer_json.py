"""TensorFlow 2.2's profile: a session folder of tool data whose only timeline is the trace viewer JSON
(``<host>.trace.json.gz``) -- TF 2.2 wrote no ``<host>.xplane.pb`` (2.3 on did: a TF 2.2 log's ``save_profile.cc:174
Dumped gzipped tool data for trace.json.gz`` then the four ``.pb``; a TF 2.3 one's ``Dumped tool data for xplane.pb``).
Main named the folder "tool data ... give the `<host>.xplane.pb` the profiler wrote beside it": a file that never was.
The JSON is the XPlane printed event by event (``formats/xplane/viewer_json``), read back into it (survey
h37-wild55x: seven real TF 2.x T4 Keras sessions, ecbme4040/e4040-2023fall-assign2-hd2551 -- no licence, not kept --
read from the JSON alone give the same steps, to the picosecond, and the same findings as from their XPlanes, but for
what the JSON does not keep: the GPU's properties, the kernels' launch configurations, the allocator's records).

Truth by construction: ``synthetic.tfcapture.write_grouped_keras_batch`` (a T4 Keras 2 batch and its callback's op 45
ms later) converted as TensorFlow's ``ConvertXSpaceToTraceEvents`` does (``write_trace_viewer_json``)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from synthetic.tfcapture import write_grouped_keras_batch, write_trace_viewer_json
from tb_gpu_advisor.cli.main import main as cli
from tb_gpu_advisor.discover.logdir import discover, skipped
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.formats.xplane.reader import ProfileReadError
from tb_gpu_advisor.runtime.pipeline import host_metrics

SESSION = Path("train") / "plugins" / "profile" / "2020_12_06_00_36_08"


def _tf22_session(root: Path, with_xplane: bool = False) -> tuple[Path, dict]:
    """A TF 2.2 session folder: the trace viewer JSON and the four tool-data files (with the XPlane TF 2.3 on adds,
    where asked)."""
    folder = root / SESSION
    folder.mkdir(parents=True)
    xplane = folder / "instance-2.xplane.pb"
    truth = write_grouped_keras_batch(str(xplane), callback_gap_ms=45.0)
    write_trace_viewer_json(str(xplane), str(folder / "instance-2.trace.json.gz"))
    if not with_xplane:
        xplane.unlink()
    for tool in ("overview_page", "input_pipeline", "tensorflow_stats", "kernel_stats"):
        (folder / f"instance-2.{tool}.pb").write_bytes(b"\n\x02\x08\x01")
    return folder, truth


def test_a_tf22_session_is_read_from_its_trace_viewer_json(tmp_path):
    _tf22_session(tmp_path)
    (session,) = discover(str(tmp_path))
    assert (session.run, session.session) == ("train", SESSION.name)
    assert [(h.host, Path(h.path).name) for h in session.hosts] == [("instance-2", "instance-2.trace.json.gz")]
    assert skipped(str(tmp_path)) == []  # its tool data goes with the profile read, as beside an XPlane


def test_the_json_s_step_is_the_batch_s_own_gpu_work(tmp_path):
    """The generator's batch: its own GPU work 6.06 ms by construction, the derived ``Steps`` line 51.1 ms to the
    callback's op -- read from the JSON as from the XPlane (h37-survey65's fix holds: the JSON keeps ``group_id``
    as the number it is, and the derived lines by their ids)."""
    folder, truth = _tf22_session(tmp_path)
    hm = host_metrics(read_trace(str(folder / "instance-2.trace.json.gz")))
    assert hm.steps.source == "steps_line" and hm.steps.count == 1
    (gpu,) = [g for g in hm.gpus if g.step_ms]
    assert gpu.step_ms == pytest.approx(truth["step_ms"], abs=0.01)


def test_the_json_reads_as_the_xplane_it_was_converted_from(tmp_path):
    folder, _ = _tf22_session(tmp_path, with_xplane=True)
    a = read_trace(str(folder / "instance-2.xplane.pb"))
    b = read_trace(str(folder / "instance-2.trace.json.gz"))
    assert b.host == a.host == "instance-2"
    assert len(b.h) == len(a.h) and b.span_ps == a.span_ps
    assert [len(d) for d in b.devices] == [len(d) for d in a.devices]
    for da, db in zip(a.devices, b.devices):
        assert db.start.tolist() == da.start.tolist() and db.end.tolist() == da.end.tolist()
        assert db.corr.tolist() == da.corr.tolist() and db.group_id.tolist() == da.group_id.tolist()
        assert [db.names[i] for i in db.name] == [da.names[i] for i in da.name]


def test_beside_its_xplane_the_json_is_no_second_host(tmp_path):
    """Named control (TF 2.3 on, JAX: both written): the XPlane is read, the JSON made from it is not a host."""
    _tf22_session(tmp_path, with_xplane=True)
    (session,) = discover(str(tmp_path))
    assert [Path(h.path).name for h in session.hosts] == ["instance-2.xplane.pb"]


def test_the_cli_reports_the_session_and_the_json_given_by_path(tmp_path, capsys):
    folder, _ = _tf22_session(tmp_path)
    assert cli(["report", str(tmp_path), "--cache-dir", "off", "--format", "json"]) in (0, 1)
    (rep,) = json.loads(capsys.readouterr().out)["reports"]
    assert rep["hosts"][0]["steps"]["source"] == "steps_line"
    assert cli(["report", str(folder / "instance-2.trace.json.gz"), "--cache-dir", "off", "--format", "json"]) in (0, 1)
    (rep,) = json.loads(capsys.readouterr().out)["reports"]
    assert Path(rep["hosts"][0]["path"]).name == "instance-2.trace.json.gz"


def test_a_json_given_by_path_beside_its_xplane_reads_that_xplane(tmp_path, capsys):
    folder, _ = _tf22_session(tmp_path, with_xplane=True)
    assert cli(["report", str(folder / "instance-2.trace.json.gz"), "--cache-dir", "off", "--format", "json"]) in (0, 1)
    (rep,) = json.loads(capsys.readouterr().out)["reports"]
    assert Path(rep["hosts"][0]["path"]).name == "instance-2.xplane.pb"


def _not_kept_findings(rep: dict) -> list[dict]:
    return [f for f in rep["findings"] if f["id"].startswith("capture_quality") and f.get("metric")
            and f["metric"]["id"] == "records_not_kept"]


def test_the_report_says_what_the_json_did_not_keep(tmp_path, capsys):
    """h37-wild55x Left 1: read from the JSON, the report assumed the unnamed GPU's fp16 speed-ups, judged no grid and
    no memory, and said none of it.  By construction the batch's T4 plane states its compute capability, SMs and
    memory, its kernels their launch configurations, the host its allocator's records -- all three dropped by the
    converter -- and it runs no XLA module (no HLO to miss)."""
    _tf22_session(tmp_path)
    assert cli(["report", str(tmp_path), "--cache-dir", "off", "--format", "json"]) in (0, 1)
    (rep,) = json.loads(capsys.readouterr().out)["reports"]
    (f,) = _not_kept_findings(rep)
    assert f["severity"] == "info" and f["metric"]["value"] == 3
    text = f["summary"]
    assert "trace viewer JSON" in text and "TensorFlow 2.2" in text
    assert "name and properties" in text and "launch configurations" in text and "allocator's records" in text
    assert "HLO" not in text  # no XLA module ran: nothing of the HLO is missing
    assert any("tensorflow>=2.3" in (a.get("snippet") or "") for a in f["actions"])


def test_read_from_its_xplane_nothing_is_said_missing(tmp_path, capsys):
    """Named control (passes on base too): the same session with its XPlane reads the XPlane -- no such finding."""
    _tf22_session(tmp_path, with_xplane=True)
    assert cli(["report", str(tmp_path), "--cache-dir", "off", "--format", "json"]) in (0, 1)
    (rep,) = json.loads(capsys.readouterr().out)["reports"]
    assert Path(rep["hosts"][0]["path"]).name == "instance-2.xplane.pb"
    assert _not_kept_findings(rep) == []


def test_a_trace_json_of_another_tool_in_a_session_folder_says_what_it_is(tmp_path):
    folder = tmp_path / SESSION
    folder.mkdir(parents=True)
    path = folder / "host.trace.json.gz"
    path.write_bytes(gzip.compress(json.dumps({"traceEvents": [
        {"ph": "M", "pid": 7, "name": "process_name", "args": {"name": "python3"}},
        {"ph": "X", "pid": 7, "tid": 1, "ts": 1.0, "dur": 2.0, "name": "step"}]}).encode()))
    with pytest.raises(ProfileReadError, match="no planes of a TensorFlow/JAX profile"):
        read_trace(str(path))


@pytest.mark.parametrize(("events", "words"), [
    ("not a list", "without the trace viewer's traceEvents list"),
    ([{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:GPU:0"}},
      {"ph": "X", "pid": 1, "tid": "main", "ts": "abc", "dur": 1, "name": "k"},
      {"ph": "X", "pid": 1, "tid": 1, "ts": 1e300, "dur": float("nan"), "name": "k"}], "recorded nothing"),
])
def test_another_tools_ids_and_times_are_left_out_not_a_crash(tmp_path, events, words):
    """Text ids, times that are no number, NaN, beyond int64: no event an XPlane can hold, left out."""
    folder = tmp_path / SESSION
    folder.mkdir(parents=True)
    path = folder / "host.trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    with pytest.raises(ProfileReadError, match=words):
        read_trace(str(path))


def test_values_beyond_int64_and_lone_surrogates_are_kept_as_text(tmp_path):
    folder = tmp_path / SESSION
    folder.mkdir(parents=True)
    path = folder / "host.trace.json"
    path.write_text(json.dumps({"traceEvents": [
        {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:GPU:0"}},
        {"ph": "M", "pid": 1, "tid": 3, "name": "thread_name", "args": {"name": "Stream #3\ud800"}},
        {"ph": "X", "pid": 1, "tid": 3, "ts": 1.0, "dur": 2.0, "name": "kernel\ud800",
         "args": {"a": 2**80, "b": "\ud800", "c": {"x": 1}, "correlation_id": "99999999999999999999"}}]}))
    (gpu,) = read_trace(str(path)).devices
    assert len(gpu) == 1 and gpu.end.tolist() == [gpu.start[0] + 2_000_000]


def test_a_gzip_bomb_is_refused_and_a_cut_file_is_named(tmp_path, monkeypatch):
    """The JSON is read whole: its decompressed text is held to the size limit a plain file has (through the one
    bounded gzip reader), never inflated past it."""
    folder = tmp_path / SESSION
    folder.mkdir(parents=True)
    monkeypatch.setenv("TB_GPU_ADVISOR_MAX_PROFILE_BYTES", str(1 << 20))
    bomb = folder / "bomb.trace.json.gz"
    bomb.write_bytes(gzip.compress(b" " * (8 << 20)))
    with pytest.raises(ProfileReadError, match="limit decompressed"):
        read_trace(str(bomb))
    cut = folder / "cut.trace.json.gz"
    cut.write_bytes(gzip.compress(b'{"traceEvents": []}')[:-6])
    with pytest.raises(ProfileReadError, match="cut off or corrupt"):
        read_trace(str(cut))
