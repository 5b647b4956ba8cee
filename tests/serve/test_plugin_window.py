"""``/window`` (a finding's step timeline) and ``/trace`` (the host's file as a download), through TensorBoard's WSGI app.

Real traces: the demo logdir's XPlane ``input_bound`` and PyTorch ``pytorch_input_bound`` and ``pytorch_ddp_straggler``
(copied into a temporary logdir), read by the real readers, so the timeline is checked against the report the same
server computes: the input wait it highlights lies in the finding's window and adds up to the step's breakdown.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from urllib.parse import urlencode

import pytest
from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug import test as werkzeug_test
from werkzeug import wrappers

from tb_gpu_advisor.discover import logdir as discovery
from tb_gpu_advisor.report import timeline
from tb_gpu_advisor.serve import plugin as plugin_mod
from tb_gpu_advisor.serve.service import ReportService
from tests.support.paths import REPO
from tests.support.plugin_client import PREFIX, poll_report

DEMO = os.path.join(str(REPO), "demo_logs")
RUNS = ("input_bound", "pytorch_input_bound", "pytorch_ddp_straggler")

pytestmark = pytest.mark.skipif(not all(os.path.isdir(os.path.join(DEMO, r)) for r in RUNS), reason="demo_logs/ missing")


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("window-logdir")
    for run in RUNS:
        shutil.copytree(os.path.join(DEMO, run), os.path.join(root, run))
    return str(root)


def _client(logdir: str, isolate: bool = False, window_events: int = timeline.MAX_EVENTS):
    ctx = base_plugin.TBContext(logdir=logdir, flags=argparse.Namespace(gpu_advisor_cache_dir="off"))
    service = ReportService(wait_s=0.3)
    plugin = plugin_mod.GpuAdvisorPlugin(ctx, service=service, settle_s=0, isolate=isolate, window_events=window_events)
    return werkzeug_test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response), plugin


def _session(logdir: str, run: str) -> str:
    return discovery.discover(logdir and os.path.join(logdir, run))[0].session


def _report(client, logdir: str, run: str) -> dict:
    r = poll_report(client, f"{PREFIX}/report?{urlencode({'run': run, 'session': _session(logdir, run)})}")
    assert r.status_code == 200, r.get_data(as_text=True)[:300]
    return json.loads(r.get_data(as_text=True))


def _window_url(logdir: str, run: str, **args) -> str:
    return f"{PREFIX}/window?{urlencode({'run': run, 'session': _session(logdir, run), **args})}"


def _timeline(client, url: str) -> dict:
    r = poll_report(client, url)
    assert r.status_code == 200, (url, r.status_code, r.get_data(as_text=True)[:300])
    assert r.headers["Content-Type"].startswith("application/json")
    return json.loads(r.get_data(as_text=True))


def _input_window(report: dict) -> dict:
    top = next(f for f in report["findings"] if f["rule"] == "input_bound")
    return top["windows"][0]


@pytest.mark.parametrize("run", ["input_bound", "pytorch_input_bound"])
def test_the_input_bound_findings_window_shows_gpu_and_host_lanes_and_its_input_wait(logdir, run):
    """XPlane and PyTorch alike: the finding's window has a GPU stream lane and a host thread lane, every event
    overlaps the window, and the highlighted input wait lies inside it and is most of the step's idle time."""
    client, _ = _client(logdir)
    w = _input_window(_report(client, logdir, run))
    t = _timeline(client, _window_url(logdir, run, host=w["host"], start_ms=w["start_ms"], end_ms=w["end_ms"]))
    assert (t["host"], t["start_ms"], t["end_ms"]) == (w["host"], w["start_ms"], w["end_ms"])
    kinds = {lane["kind"] for lane in t["lanes"]}
    assert kinds == {"gpu", "host"}, kinds
    for lane in t["lanes"]:
        assert lane["events"] and lane["rows"] >= 1
        for s, e, name, kind, row in lane["events"]:
            assert s < w["end_ms"] and e > w["start_ms"] and s <= e, (lane["label"], s, e)
            assert isinstance(name, str) and 0 <= row < lane["rows"]
    assert any(k == "kernel" for lane in t["lanes"] for *_, k, _ in lane["events"])
    assert any(k == "input" for lane in t["lanes"] for *_, k, _ in lane["events"])
    waits = [x for x in t["idle"] if x["category"] == "input_wait"]
    assert waits, t["idle"]
    for x in t["idle"]:
        assert w["start_ms"] - 1e-6 <= x["start_ms"] < x["end_ms"] <= w["end_ms"] + 1e-6, x
    biggest = max(x["end_ms"] - x["start_ms"] for x in waits)
    assert biggest > 0.3 * (w["end_ms"] - w["start_ms"])  # the step's input stall, not a sliver
    assert t["events_shown"] == t["events_in_window"] == sum(len(lane["events"]) for lane in t["lanes"])
    assert t["note"] == ""
    assert [s["step"] for s in t["steps"]].count(w["step"]) == 1


def test_the_highlighted_input_wait_adds_up_to_the_steps_breakdown(logdir):
    """The timeline paints idle time as the breakdown counts it: over a GPU's step, its input-wait runs sum to
    that step's ``input_wait`` in the report (same painting, same steps)."""
    client, _ = _client(logdir)
    report = _report(client, logdir, "input_bound")
    host = report["hosts"][0]
    row = next(r for r in host["step_rows"] if r["gpu"] == 0 and r["breakdown"]["input_wait"] > 1)
    start, end = row["start_ms"], row["start_ms"] + row["step_ms"]
    t = _timeline(client, _window_url(logdir, "input_bound", host=host["host"], start_ms=start, end_ms=end))
    painted = sum(x["end_ms"] - x["start_ms"] for x in t["idle"] if x["category"] == "input_wait" and x["gpu"] == 0)
    assert painted == pytest.approx(row["breakdown"]["input_wait"], abs=0.01)


def test_a_window_is_bounded_to_the_longest_events_and_says_so(logdir):
    client, _ = _client(logdir, window_events=20)
    w = _input_window(_report(client, logdir, "input_bound"))
    full = _timeline(_client(logdir)[0], _window_url(logdir, "input_bound", host=w["host"], start_ms=w["start_ms"],
                                                     end_ms=w["end_ms"]))
    t = _timeline(client, _window_url(logdir, "input_bound", host=w["host"], start_ms=w["start_ms"], end_ms=w["end_ms"]))
    shown = [e for lane in t["lanes"] for e in lane["events"]]
    assert t["events_shown"] == len(shown) <= 20 < t["events_in_window"] == full["events_in_window"]
    assert f"{len(shown)} of {t['events_in_window']} events shown" in t["note"] and "shortest" in t["note"]
    # every lane keeps a share (the GPU's kernels are not crowded out by long host calls), and its longest events
    assert [lane["label"] for lane in t["lanes"]] == [lane["label"] for lane in full["lanes"]]
    for bounded, whole in zip(t["lanes"], full["lanes"]):
        kept = sorted((round(e[1] - e[0], 6) for e in bounded["events"]), reverse=True)
        assert kept == sorted((round(e[1] - e[0], 6) for e in whole["events"]), reverse=True)[:len(kept)], bounded["label"]
    assert len(json.dumps(t)) < len(json.dumps(full))


def test_idle_runs_are_bounded_to_the_longest(logdir, monkeypatch):
    client, _ = _client(logdir)
    w = _input_window(_report(client, logdir, "input_bound"))
    url = _window_url(logdir, "input_bound", host=w["host"], start_ms=w["start_ms"], end_ms=w["end_ms"])
    full = _timeline(client, url)
    assert len(full["idle"]) >= 3
    monkeypatch.setattr(timeline, "MAX_IDLE_RUNS", 1)
    one = _timeline(_client(logdir)[0], url)
    longest = max(full["idle"], key=lambda x: x["end_ms"] - x["start_ms"])
    assert one["idle"] == [longest] and longest["category"] == "input_wait"
    assert f"the {len(full['idle']) - 1} shortest GPU idle runs are not drawn" in one["note"]


def test_one_read_serves_every_window_the_report_names(logdir):
    """The first window read also reads the report's other windows of that host: asking for them computes nothing."""
    client, plugin = _client(logdir)
    report = _report(client, logdir, "pytorch_input_bound")
    windows = [w for f in report["findings"] for w in f["windows"]]
    assert len({(w["start_ms"], w["end_ms"]) for w in windows}) >= 3
    first = windows[0]
    _timeline(client, _window_url(logdir, "pytorch_input_bound", host=first["host"], start_ms=first["start_ms"],
                                  end_ms=first["end_ms"]))
    assert plugin._windows.computations == 1
    for w in windows[1:]:
        r = client.get(_window_url(logdir, "pytorch_input_bound", host=w["host"], start_ms=w["start_ms"], end_ms=w["end_ms"]))
        assert r.status_code == 200
    assert plugin._windows.computations == 1


def test_a_window_read_meanwhile_is_not_read_again(logdir, monkeypatch):
    """A request queued while another read of the host was under way finds its window kept by that read."""
    client, plugin = _client(logdir)
    report = _report(client, logdir, "pytorch_input_bound")
    a, b = report["findings"][0]["windows"][:2]
    _timeline(client, _window_url(logdir, "pytorch_input_bound", host=a["host"], start_ms=a["start_ms"], end_ms=a["end_ms"]))
    monkeypatch.setattr(plugin_mod.pipeline, "host_timelines", lambda *a, **k: pytest.fail("read again"))
    session = discovery.find_session(plugin._sessions(), "pytorch_input_bound", _session(logdir, "pytorch_input_bound"))
    body = plugin._timelines(session, session.hosts[0], (b["start_ms"], b["end_ms"]), lambda *_: None)
    assert json.loads(body)["start_ms"] == b["start_ms"]


def test_the_window_is_read_in_a_limited_child_process(logdir):
    """The real path: isolated like the analysis (a bad file cannot take TensorBoard down); same answer."""
    client, _ = _client(logdir, isolate=True)
    w = _input_window(_report(_client(logdir)[0], logdir, "pytorch_input_bound"))
    url = _window_url(logdir, "pytorch_input_bound", host=w["host"], start_ms=w["start_ms"], end_ms=w["end_ms"])
    isolated = _timeline(client, url)
    assert isolated == _timeline(_client(logdir)[0], url)


BAD_WINDOWS = [
    ({"start_ms": "abc", "end_ms": "10"}, "start_ms must be a number"),
    ({"start_ms": "1", "end_ms": "nan"}, "end_ms must be a number of ms"),  # words are no plain decimal (query.py)
    ({"start_ms": "-inf", "end_ms": "1"}, "start_ms must be a number of ms"),
    ({"start_ms": "1e300", "end_ms": "1e301"}, "finite number"),
    ({"start_ms": "10", "end_ms": "10"}, "must be greater than start_ms"),
    ({"start_ms": "20", "end_ms": "10"}, "must be greater than start_ms"),
    ({"start_ms": "0", "end_ms": "10000.5"}, "at most 10000 ms"),
    ({"end_ms": "10"}, "missing query parameter 'start_ms'"),
    ({"start_ms": "0"}, "missing query parameter 'end_ms'"),
]


@pytest.mark.parametrize("args,message", BAD_WINDOWS)
def test_bad_windows_are_400_with_the_reason(logdir, args, message):
    client, plugin = _client(logdir)
    host = discovery.discover(os.path.join(logdir, "input_bound"))[0].hosts[0].host
    r = client.get(_window_url(logdir, "input_bound", host=host, **args))
    assert r.status_code == 400 and message in r.get_data(as_text=True), (r.status_code, r.get_data(as_text=True))
    assert plugin._windows.computations == 0


@pytest.mark.parametrize("route", ["window", "trace"])
@pytest.mark.parametrize("run,session,host,code", [
    ("input_bound", None, "nope", 404),
    ("input_bound", None, "../../../etc/passwd", 404),
    ("input_bound", None, "..%2f..%2fetc", 404),
    ("input_bound", None, "/etc/passwd", 404),
    ("../input_bound", None, "worker0", 404),
    ("input_bound", "../../..", "worker0", 404),
    ("input_bound", None, "", 400),
])
def test_unknown_or_traversing_names_never_reach_a_file(logdir, route, run, session, host, code):
    client, plugin = _client(logdir)
    session = session or _session(logdir, "input_bound")
    query = {"run": run, "session": session, "host": host, "start_ms": "0", "end_ms": "10"}
    r = client.get(f"{PREFIX}/{route}?{urlencode(query)}")
    assert r.status_code == code, (query, r.status_code)
    assert b"root:" not in r.get_data()
    assert plugin._windows.computations == 0


def _trace_url(logdir: str, run: str, host: str, **extra) -> str:
    return f"{PREFIX}/trace?{urlencode({'run': run, 'session': _session(logdir, run), 'host': host, **extra})}"


@pytest.mark.parametrize("run", ["input_bound", "pytorch_input_bound"])
def test_download_serves_the_listed_file_as_an_attachment(logdir, run):
    client, _ = _client(logdir)
    host = discovery.discover(os.path.join(logdir, run))[0].hosts[0]
    r = client.get(_trace_url(logdir, run, host.host))
    assert r.status_code == 200
    with open(host.path, "rb") as f:
        assert r.get_data() == f.read()
    assert r.headers["Content-Type"] == "application/octet-stream"
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert r.headers["Content-Length"] == str(os.path.getsize(host.path))
    disposition = r.headers["Content-Disposition"]
    assert disposition.startswith("attachment;") and os.path.basename(host.path) in disposition


def test_download_picks_one_rank_file_of_a_merged_host(logdir):
    client, _ = _client(logdir)
    host = next(h for h in discovery.discover(os.path.join(logdir, "pytorch_ddp_straggler"))[0].hosts if h.ranks)
    for i, rank in enumerate(host.ranks):
        r = client.get(_trace_url(logdir, "pytorch_ddp_straggler", host.host, file=str(i)))
        assert r.status_code == 200
        with open(rank.path, "rb") as f:
            assert r.get_data() == f.read()
    for bad in (str(len(host.ranks)), "-1", "x", "1.0", "../0"):
        r = client.get(_trace_url(logdir, "pytorch_ddp_straggler", host.host, file=bad))
        assert r.status_code == 400 and "file must be an index" in r.get_data(as_text=True), (bad, r.status_code)


def test_the_frontends_window_fixture_is_current():
    """``frontend/test/fixtures/window.json`` is a real ``/window`` answer: regenerate it with
    ``python -m tests.support.plugin_fixtures`` when the timeline or the analysis changes."""
    from tests.support import plugin_fixtures

    with open(plugin_fixtures.WINDOW_FIXTURE_PATH, encoding="utf-8") as f:
        assert f.read() == plugin_fixtures.window_fixture_json()


def test_routes_are_documented():
    doc = plugin_mod.__doc__
    assert "``/window``" in doc and "``/trace``" in doc
    with open(os.path.join(str(REPO), "docs", "ui.md"), encoding="utf-8") as f:
        ui = f.read()
    assert "`/window?" in ui and "`/trace?" in ui
