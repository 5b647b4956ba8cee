"""The server's /diff and /diff.md routes (issue #11): the same diff as the CLI, from the /report service's reports.

Real analyses of the demo pair input_bound -> input_bound_fixed (a real tensorboard WSGI app, real profile
files), plus a blocking stand-in analyzer to see the 202 "computing" answers.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil

import pytest
from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug import test as werkzeug_test
from werkzeug import wrappers

from tb_gpu_advisor.cli import main as cli
from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.report import diff_render
from tb_gpu_advisor.report.diff import diff_reports
from tb_gpu_advisor.serve import plugin as plugin_mod
from tests.support.paths import REPO
from tests.support.plugin_client import PREFIX, CountingAnalyzer, get_json, make_client, poll_report, write_profile

REPO = str(REPO)
DEMO = os.path.join(REPO, "demo_logs")
SESSION = "2026_01_01_00_00_00"
PAIR = f"base_run=input_bound&base_session={SESSION}&new_run=input_bound_fixed&new_session={SESSION}"

needs_demo = pytest.mark.skipif(not os.path.isdir(os.path.join(DEMO, "input_bound_fixed")),
                                reason="demo_logs/input_bound_fixed missing")


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch):
    monkeypatch.setenv("TB_GPU_ADVISOR_CACHE_DIR", "off")


def _without_time(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k != "generated_at"}


@needs_demo
def test_diff_is_the_diff_of_the_two_reports_and_reuses_them():
    client, _, service = make_client(DEMO)
    r = poll_report(client, f"{PREFIX}/diff?{PAIR}", timeout=120)
    assert r.status_code == 200, r.get_data(as_text=True)[:500]
    served = json.loads(r.get_data(as_text=True))
    assert service.computations == 2  # one analysis per side
    base = poll_report(client, f"{PREFIX}/report?run=input_bound&session={SESSION}").get_data(as_text=True)
    new = poll_report(client, f"{PREFIX}/report?run=input_bound_fixed&session={SESSION}").get_data(as_text=True)
    assert service.computations == 2  # /report answered from the same cached reports
    expected = diff_reports(Report.from_json(base), Report.from_json(new), base_label=f"input_bound/{SESSION}",
                            new_label=f"input_bound_fixed/{SESSION}")
    assert _without_time(served) == _without_time(json.loads(expected.to_json()))
    assert served["step"]["verdict"] == "faster"
    assert [(f["rule"], f["status"]) for f in served["findings"]] == [("input_bound", "fixed")]
    md = poll_report(client, f"{PREFIX}/diff.md?{PAIR}")
    assert md.status_code == 200 and md.headers["Content-Type"].startswith("text/markdown")
    assert md.get_data(as_text=True) == diff_render.to_markdown(expected)
    again = poll_report(client, f"{PREFIX}/diff?{PAIR}")
    assert again.status_code == 200 and _without_time(json.loads(again.get_data(as_text=True))) == _without_time(served)
    assert service.computations == 2  # a second /diff (and /diff.md) analysed nothing


def test_computing_then_ready(tmp_path):
    write_profile(tmp_path, "a", "2024_01_01_00_00_00", "worker0")
    write_profile(tmp_path, "b", "2024_01_01_00_00_00", "worker0")
    analyzer = CountingAnalyzer(block=True)
    client, _, _ = make_client(str(tmp_path), analyzer=analyzer, wait_s=0.05)
    query = "base_run=a&base_session=2024_01_01_00_00_00&new_run=b&new_session=2024_01_01_00_00_00"
    body = get_json(client, f"{PREFIX}/diff?{query}", code=202)
    assert body["state"] == "computing" and "a/2024_01_01_00_00_00" in body["message"]
    assert 0.0 <= body["progress"] < 1.0
    analyzer.release.set()
    r = poll_report(client, f"{PREFIX}/diff?{query}")
    assert r.status_code == 200 and json.loads(r.get_data(as_text=True))["diff_version"]
    assert len(analyzer.calls) == 2


class OneSideBlocks(CountingAnalyzer):
    """Blocks only while analysing ``run``: the other side is ready at once."""

    def __init__(self, run: str) -> None:
        super().__init__()
        self._run_blocked = run

    def __call__(self, run, session, host_files, progress=None):
        if run == self._run_blocked:
            if progress:
                progress("reading worker0", 0.4)
            assert self.release.wait(10), "test never released the analyzer"
        return super().__call__(run, session, host_files, progress)


def test_computing_says_which_side_and_the_mean_progress(tmp_path):
    s = "2024_01_01_00_00_00"
    write_profile(tmp_path, "a", s, "worker0")
    write_profile(tmp_path, "b", s, "worker0")
    analyzer = OneSideBlocks("b")
    client, _, service = make_client(str(tmp_path), analyzer=analyzer, wait_s=0.05)
    assert poll_report(client, f"{PREFIX}/report?run=a&session={s}").status_code == 200
    query = f"base_run=a&base_session={s}&new_run=b&new_session={s}"
    body = get_json(client, f"{PREFIX}/diff?{query}", code=202)
    assert body["message"] == f"b/{s}: reading worker0"  # only the side still computing is named
    assert body["progress"] == pytest.approx((1.0 + 0.4) / 2)
    md = get_json(client, f"{PREFIX}/diff.md?{query}", code=202)  # the Markdown route answers the same
    assert md["state"] == "computing" and md["message"] == body["message"]
    analyzer.release.set()
    assert poll_report(client, f"{PREFIX}/diff?{query}").status_code == 200
    assert service.computations == 2


@needs_demo
def test_precomputed_reports_are_diffed_without_an_analysis(tmp_path):
    """Reports stored by `tb-gpu-advisor precompute` answer /diff on a fresh server: no profile is analysed."""
    logdir = tmp_path / "logs"
    for run in ("input_bound", "input_bound_fixed"):
        shutil.copytree(os.path.join(DEMO, run), logdir / run)  # copy2 keeps the mtimes: no settle wait
    cache_dir = str(tmp_path / "cache")
    assert cli.main(["precompute", str(logdir), "--jobs", "1", "--cache-dir", cache_dir]) == 0
    flags = argparse.Namespace(gpu_advisor_cache_dir=cache_dir)
    plugin = plugin_mod.GpuAdvisorPlugin(base_plugin.TBContext(logdir=str(logdir), flags=flags))
    client = werkzeug_test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)
    r = poll_report(client, f"{PREFIX}/diff?{PAIR}", timeout=120)
    assert r.status_code == 200, r.get_data(as_text=True)[:500]
    assert json.loads(r.get_data(as_text=True))["step"]["verdict"] == "faster"
    assert plugin._service.computations == 0  # both sides came from the report cache


def test_errors_name_the_side_and_the_server_keeps_serving(tmp_path):
    write_profile(tmp_path, "a", "2024_01_01_00_00_00", "worker0")
    write_profile(tmp_path, "b", "2024_01_01_00_00_00", "worker0")
    client, _, _ = make_client(str(tmp_path), analyzer=CountingAnalyzer(fail=True))
    ok = "base_run=a&base_session=2024_01_01_00_00_00&new_run=b&new_session=2024_01_01_00_00_00"
    r = poll_report(client, f"{PREFIX}/diff?{ok}")
    assert r.status_code == 500 and "a/2024_01_01_00_00_00: RuntimeError: corrupt profile" in r.get_data(as_text=True)
    assert client.get(f"{PREFIX}/diff?base_run=a&base_session=2024_01_01_00_00_00").status_code == 400
    assert client.get(f"{PREFIX}/diff.md?{ok.replace('new_session', 'other')}").status_code == 400
    assert client.get(f"{PREFIX}/diff?{ok.replace('new_run=b', 'new_run=zzz')}").status_code == 404
    assert client.get(f"{PREFIX}/diff.md?{ok.replace('base_session=2024_01_01_00_00_00', 'base_session=x')}").status_code == 404
    assert get_json(client, f"{PREFIX}/runs")["runs"]


def test_unknown_host_is_400(tmp_path):
    write_profile(tmp_path, "a", "2024_01_01_00_00_00", "worker0")
    client, _, _ = make_client(str(tmp_path), analyzer=CountingAnalyzer())
    q = "base_run=a&base_session=2024_01_01_00_00_00&new_run=a&new_session=2024_01_01_00_00_00"
    assert poll_report(client, f"{PREFIX}/diff?{q}").status_code == 200
    r = poll_report(client, f"{PREFIX}/diff?{q}&host=nope")
    assert r.status_code == 400 and "unknown host 'nope'" in r.get_data(as_text=True)


@needs_demo
def test_frontend_diff_fixture_is_current():
    """frontend/test/fixtures/diff.json is a real diff of today's analyzer (``python -m tests.plugin_fixtures``)."""
    from tests.support import plugin_fixtures

    with open(plugin_fixtures.DIFF_FIXTURE_PATH, encoding="utf-8") as f:
        assert f.read() == plugin_fixtures.diff_fixture_json()


def test_frontend_memory_diff_fixture_is_current():
    """frontend/test/fixtures/diff_memory.json is today's diff of two snapshots of one job (issue #37 item 5)."""
    from tests.support import plugin_fixtures

    with open(plugin_fixtures.MEMORY_DIFF_FIXTURE_PATH, encoding="utf-8") as f:
        assert f.read() == plugin_fixtures.memory_diff_fixture_json()
