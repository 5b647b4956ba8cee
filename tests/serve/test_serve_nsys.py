"""An Nsight Systems run in the tab's routes (``/runs``, ``/report``, ``/window``, ``/trace``) and in the MCP server's
answers, beside a PyTorch run: a synthetic input-bound loop with NVTX step ranges, whose input wait is known."""

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

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor.runtime.advisor import Advisor
from tb_gpu_advisor.runtime.cache import ReportCache
from tb_gpu_advisor.serve import mcp_server
from tb_gpu_advisor.serve import plugin as plugin_mod
from tb_gpu_advisor.serve.service import ReportService
from tests.support.paths import DEMO_LOGS
from tests.support.plugin_client import PREFIX, poll_outcome, poll_report

INPUT_MS = 4.0


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("nsys-logdir")
    os.makedirs(root / "nsight")
    write(str(root / "nsight" / "train.sqlite"), NsysJob(steps=8, input_ms=INPUT_MS))
    if (DEMO_LOGS / "pytorch_input_bound").is_dir():
        shutil.copytree(DEMO_LOGS / "pytorch_input_bound", root / "torch")
    return str(root)


def _client(logdir: str):
    ctx = base_plugin.TBContext(logdir=logdir, flags=argparse.Namespace(gpu_advisor_cache_dir="off"))
    plugin = plugin_mod.GpuAdvisorPlugin(ctx, service=ReportService(wait_s=0.3), settle_s=0, isolate=False)
    return werkzeug_test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)


def _json(client, url: str) -> dict:
    r = poll_report(client, url)
    assert r.status_code == 200, (url, r.status_code, r.get_data(as_text=True)[:300])
    return json.loads(r.get_data(as_text=True))


def test_runs_report_window_and_trace(logdir):
    client = _client(logdir)
    runs = {r["run"]: r for r in _json(client, f"{PREFIX}/runs")["runs"]}
    s = runs["nsight"]["sessions"][0]
    assert (s["format"], s["format_name"], s["stock_tool"]) == ("nsys", "Nsight Systems", False)
    q = {"run": "nsight", "session": s["session"]}
    report = _json(client, f"{PREFIX}/report?{urlencode(q)}")
    top = report["findings"][0]
    assert top["rule"] == "input_bound"
    host = report["hosts"][0]
    assert host["steps"]["source"] == "nvtx_range"
    assert "Nsight Systems timeline" in host["capture"]["time_base"]
    w = top["windows"][0]
    t = _json(client, f"{PREFIX}/window?{urlencode({**q, 'host': w['host'], 'start_ms': w['start_ms'], 'end_ms': w['end_ms']})}")
    assert t["format"] == "nsys" and {lane["kind"] for lane in t["lanes"]} == {"gpu", "host"}
    waits = [x for x in t["idle"] if x["category"] == "input_wait"]
    assert waits and max(x["end_ms"] - x["start_ms"] for x in waits) == pytest.approx(INPUT_MS, abs=0.1)
    # the DataLoader range the loop waited in is drawn on its thread
    assert any("DataLoader" in name for lane in t["lanes"] if lane["kind"] == "host" for _, _, name, *_ in lane["events"])
    r = client.get(f"{PREFIX}/trace?{urlencode({**q, 'host': w['host']})}")
    assert r.status_code == 200 and r.get_data()[:16] == b"SQLite format 3\x00"


def test_mcp_lists_and_reports_the_nsight_run(logdir, tmp_path):
    advisor = mcp_server.ToolBackend(Advisor(str(logdir), cache=ReportCache(str(tmp_path / "cache"))), isolate=False)
    try:
        runs = json.loads(advisor.runs_json())
        assert "nsight" in {r["run"] for r in runs["runs"]}
        out = poll_outcome(advisor, "nsight")
        assert out.state == "ready", out
        report = json.loads(out.body)
        assert report["findings"][0]["rule"] == "input_bound"
    finally:
        advisor.shutdown()
