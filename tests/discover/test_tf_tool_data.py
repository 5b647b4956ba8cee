"""TensorFlow's and JAX's profiler tool data -- the files the stock Profile tab reads, converted from a session's
XPlane -- are named for what they are, never "no GPU profiles found" nor "not a profile", and are no left-out
profile beside the XPlane they came from (survey h37-survey18: aoberai/chess-engine's Keras logdirs of 2021 hold,
per session, ``<host>.xplane.pb`` beside ``.trace.json.gz``, ``.overview_page.pb``, ``.input_pipeline.pb``,
``.tensorflow_stats.pb``, ``.kernel_stats.pb`` and ``.memory_profile.json.gz``; the repository has no licence, so
the files here are built as TensorFlow lays them out).  TensorFlow 1.x's timeline and the trace viewer's JSON given
alone are named too, each with what to give instead."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from tb_gpu_advisor.cli.main import main as cli
from tb_gpu_advisor.discover.logdir import discover, skipped
from tests.support.paths import FIXTURES

XPLANE = FIXTURES / "real" / "tf221_cpu_custom_loop.xplane.pb"
SESSION = Path("train") / "plugins" / "profile" / "2021_06_16_00_30_02"
TOOL_DATA = ("aoberai.trace.json.gz", "aoberai.overview_page.pb", "aoberai.input_pipeline.pb",
             "aoberai.tensorflow_stats.pb", "aoberai.kernel_stats.pb", "aoberai.memory_profile.json.gz")
#: The tool data no reader reads: a session of these alone has lost its XPlane (and its trace viewer JSON).
UNREAD = tuple(n for n in TOOL_DATA if ".trace." not in n)


def _trace_viewer_json() -> bytes:
    """The trace viewer's JSON as TensorFlow 2.4 writes it: its processes are the XPlane's planes."""
    return json.dumps({"displayTimeUnit": "ns", "metadata": {"highres-ticks": True}, "traceEvents": [
        {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:GPU:0"}},
        {"ph": "M", "pid": 1, "tid": 13, "name": "thread_name", "args": {"name": "Stream #13(Compute)"}},
        {"ph": "M", "pid": 501, "name": "process_name", "args": {"name": "/host:CPU"}},
        {"ph": "X", "pid": 1, "tid": 13, "ts": 10.0, "dur": 4.0, "name": "volta_sgemm_64x64_nt"},
        {"ph": "X", "pid": 501, "tid": 7, "ts": 1.0, "dur": 20.0, "name": "train_function"}]}).encode()


def _tf1_timeline() -> bytes:
    """``timeline.Timeline(run_metadata.step_stats).generate_chrome_trace_format()`` of a TF 1.x session run."""
    return json.dumps({"traceEvents": [
        {"name": "process_name", "ph": "M", "pid": 0,
         "args": {"name": "/job:localhost/replica:0/task:0/device:GPU:0 Compute"}},
        {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "/device:GPU:0/stream:all Compute"}},
        {"ph": "X", "cat": "Op", "name": "MatMul", "pid": 1, "tid": 0, "ts": 5, "dur": 40,
         "args": {"name": "dense/MatMul", "op": "MatMul"}}]}).encode()


def _session(root: Path, with_xplane: bool, with_trace: bool = True) -> Path:
    """A session folder of tool data; ``with_trace=False``: without the trace viewer JSON, which is read where no
    XPlane is beside it (TensorFlow 2.2 wrote none: ``tests/formats/test_xplane_viewer_json.py``)."""
    folder = root / SESSION
    folder.mkdir(parents=True)
    for name in TOOL_DATA if with_trace else UNREAD:
        data = _trace_viewer_json() if "trace" in name else b"\n\x02\x08\x01"
        (folder / name).write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    if with_xplane:
        shutil.copy(XPLANE, folder / "aoberai.xplane.pb")
    return folder


def test_a_session_of_tool_data_without_its_xplane_is_named(tmp_path):
    _session(tmp_path, with_xplane=False, with_trace=False)
    skips = dict(skipped(str(tmp_path)))
    assert set(skips) == {str(SESSION / n) for n in UNREAD}
    assert all("tool data" in why and ".xplane.pb" in why for why in skips.values())
    assert discover(str(tmp_path)) == []


def test_the_cli_says_what_the_session_holds(tmp_path, capsys):
    _session(tmp_path, with_xplane=False, with_trace=False)
    assert cli(["report", str(tmp_path), "--cache-dir", "off"]) == 2
    err = capsys.readouterr().err
    assert "No GPU profiles read" in err and "tool data" in err and "no GPU profiles found" not in err


def test_beside_its_xplane_the_tool_data_is_no_profile_left_out(tmp_path):
    _session(tmp_path, with_xplane=True)
    assert [(s.run, s.session) for s in discover(str(tmp_path))] == [("train", SESSION.name)]
    assert skipped(str(tmp_path)) == []


def test_one_tool_data_file_given_alone_is_named_with_the_xplane_to_give(tmp_path, capsys):
    folder = _session(tmp_path, with_xplane=True)
    assert cli(["report", str(folder / "aoberai.overview_page.pb"), "--cache-dir", "off"]) == 2
    err = capsys.readouterr().err
    assert "tool data" in err and "aoberai.xplane.pb" not in err and "<host>.xplane.pb" in err
    assert "not a profile this tool reads" not in err and "not PyTorch's" not in err
    # the trace viewer JSON is read as the XPlane it was made from, beside it (h37-wild55x)
    assert cli(["report", str(folder / "aoberai.trace.json.gz"), "--cache-dir", "off", "--format", "json"]) != 2
    (rep,) = json.loads(capsys.readouterr().out)["reports"]
    assert Path(rep["hosts"][0]["path"]).name == "aoberai.xplane.pb"


def test_trace_json_out_of_its_session_is_named_by_its_content(tmp_path, capsys):
    cases = {"trace_viewer.json": (_trace_viewer_json(), "trace viewer JSON"),
             "timeline.json": (_tf1_timeline(), "TensorFlow 1.x timeline"),
             "memory_profile.json": (json.dumps({"memoryProfilePerAllocator": {"GPU_0_bfc": {}}}).encode(),
                                     "memory profile tool data")}
    for name, (data, words) in cases.items():
        (tmp_path / name).write_bytes(data)
        assert cli(["report", str(tmp_path / name), "--cache-dir", "off"]) == 2
        err = capsys.readouterr().err
        assert words in err and ".xplane.pb" in err, name


def test_a_real_tf1_timeline_is_named_with_what_to_profile_instead(tmp_path, capsys):
    """ikhlestov/tensorflow_profiling's 2017 GPU timeline (MIT, ``tests/fixtures/foreign/PROVENANCE.md``): one
    ``sess.run`` whose 38 GPU op executions carry op names only -- no kernel, launch call or step mark to analyse."""
    real = FIXTURES / "foreign" / "tf1_timeline_gpu" / "timeline_02_step_1.json"
    assert cli(["report", str(real), "--cache-dir", "off"]) == 2
    err = capsys.readouterr().err
    assert "TensorFlow 1.x timeline" in err and "tf.profiler.experimental.start" in err and "nsys" in err
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(real, run / real.name)  # in a logdir: left out with the same words, never "no GPU profiles found"
    assert [why for _, why in skipped(str(tmp_path)) if "TensorFlow 1.x timeline" in why]


def test_a_session_of_tool_data_says_its_reason_once_and_lists_its_files(tmp_path, capsys):
    """h37-survey65's ECBM4040 logdirs: six tool-data files in one session folder, no XPlane.  Main repeated the same
    reason (about 400 characters) once per file -- in text, in JSON and on the tab's error line, which share
    ``discover.nothing_found``; now once per folder, with the folder's files listed."""
    _session(tmp_path, with_xplane=False, with_trace=False)
    for fmt in ("text", "json"):
        assert cli(["report", str(tmp_path), "--cache-dir", "off", "--format", fmt]) == 2
        err = capsys.readouterr().err
        assert err.count("converted from the session's XPlane") == 1, err
        assert str(SESSION) + "/" in err and all(n in err for n in UNREAD), err
    _, text = discovery_why(tmp_path)
    assert text.count("converted from the session's XPlane") == 1 and all(n in text for n in UNREAD), text


def test_files_of_one_folder_left_out_for_two_reasons_say_each_once(tmp_path):
    """A legacy ``local.trace`` beside tool data: two reasons, each said once, each with its own files."""
    folder = _session(tmp_path, with_xplane=False, with_trace=False)
    (folder / "local.trace").write_bytes(b"\n\x00")
    _, text = discovery_why(tmp_path)
    assert text.count("converted from the session's XPlane") == 1 and text.count("legacy profiler") == 1, text
    assert "local.trace (TensorFlow's legacy" in text, text


def discovery_why(root: Path) -> tuple[str, str]:
    """The tab's error line for ``root``: ``/runs``' ``empty`` (title, text), as the plugin serves it."""
    import argparse

    from tensorboard.backend import application
    from tensorboard.plugins import base_plugin
    from werkzeug import test as werkzeug_test
    from werkzeug import wrappers

    from tb_gpu_advisor.serve import plugin as plugin_mod
    from tb_gpu_advisor.serve.service import ReportService

    ctx = base_plugin.TBContext(logdir=str(root), flags=argparse.Namespace(gpu_advisor_cache_dir="off"))
    plugin = plugin_mod.GpuAdvisorPlugin(ctx, service=ReportService(wait_s=0.05), settle_s=0)
    client = werkzeug_test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)
    r = client.get(f"/data/plugin/{plugin_mod.PLUGIN_NAME}/runs")
    assert r.status_code == 200
    empty = json.loads(r.get_data(as_text=True))["empty"]
    return empty["title"], empty["text"]


def test_tool_data_alone_names_the_trace_viewer_json_tensorflow_2_2_left_instead_of_an_xplane(tmp_path):
    """h37-wild55x: TensorFlow 2.2 wrote the four tool ``.pb`` and ``<host>.trace.json.gz``, no XPlane (a TF 2.2 log
    "Dumped gzipped tool data for trace.json.gz" then the four; TF 2.3 on, "Dumped tool data for xplane.pb"): asking
    only for "the `<host>.xplane.pb` the profiler wrote beside it" asked for a file that never was."""
    _session(tmp_path, with_xplane=False, with_trace=False)
    (why,) = set(dict(skipped(str(tmp_path))).values())
    assert "TensorFlow 2.2, which wrote no XPlane" in why and "<host>.trace.json.gz" in why
