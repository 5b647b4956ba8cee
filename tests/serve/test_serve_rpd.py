"""rocmProfileData runs in the tab's routes (``/runs``, ``/report``, ``/window``) and in the MCP server's answers
(h37-rpd): the kept blog example (``foreign/rocm_rpd_matmul``, MIT) and a gzipped copy of it, as a logdir holds them.
Main listed neither run: the ``.rpd`` was left out by name, ``/runs`` and the MCP server held no rocmProfileData run."""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
from urllib.parse import urlencode

import pytest
from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug import test as werkzeug_test
from werkzeug import wrappers

from tb_gpu_advisor.runtime.advisor import Advisor
from tb_gpu_advisor.runtime.cache import ReportCache
from tb_gpu_advisor.serve import mcp_server
from tb_gpu_advisor.serve import plugin as plugin_mod
from tb_gpu_advisor.serve.service import ReportService
from tests.support.paths import FIXTURES
from tests.support.plugin_client import PREFIX, poll_outcome, poll_report

RPD = FIXTURES / "foreign" / "rocm_rpd_matmul" / "matmul_result.rpd"


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("rpd-logdir")
    (root / "matmul").mkdir()
    shutil.copyfile(RPD, root / "matmul" / RPD.name)
    (root / "packed").mkdir()
    (root / "packed" / "mytrace.rpd.gz").write_bytes(gzip.compress(RPD.read_bytes()))
    return str(root)


def _json(client, url: str) -> dict:
    r = poll_report(client, url)
    assert r.status_code == 200, (url, r.status_code, r.get_data(as_text=True)[:300])
    return json.loads(r.get_data(as_text=True))


def test_runs_report_and_window(logdir):
    ctx = base_plugin.TBContext(logdir=logdir, flags=argparse.Namespace(gpu_advisor_cache_dir="off"))
    plugin = plugin_mod.GpuAdvisorPlugin(ctx, service=ReportService(wait_s=0.3), settle_s=0, isolate=False)
    client = werkzeug_test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)
    runs = {r["run"]: r for r in _json(client, f"{PREFIX}/runs")["runs"]}
    assert set(runs) >= {"matmul", "packed"}, sorted(runs)
    s = runs["matmul"]["sessions"][0]
    assert (s["format"], s["format_name"], s["has_gpu"]) == ("rpd", "rocmProfileData", True)
    q = {"run": "matmul", "session": s["session"]}
    report = _json(client, f"{PREFIX}/report?{urlencode(q)}")
    assert report["hosts"][0]["capture"]["vendor"] == "AMD"
    top = [f for f in report["findings"] if f["severity"] in ("warning", "critical")][0]
    assert top["rule"] == "excessive_memcpy"
    w = top["windows"][0]
    t = _json(client, f"{PREFIX}/window?{urlencode({**q, 'host': w['host'], 'start_ms': w['start_ms'], 'end_ms': w['end_ms']})}")
    assert t["format"] == "rpd" and {lane["kind"] for lane in t["lanes"]} >= {"gpu", "host"}


def test_mcp_lists_and_reports_the_rpd_runs(logdir, tmp_path):
    advisor = mcp_server.ToolBackend(Advisor(str(logdir), cache=ReportCache(str(tmp_path / "cache"))), isolate=False)
    try:
        runs = json.loads(advisor.runs_json())
        assert {"matmul", "packed"} <= {r["run"] for r in runs["runs"]}
        for run in ("matmul", "packed"):
            out = poll_outcome(advisor, run)
            assert out.state == "ready", out
            assert json.loads(out.body)["hosts"][0]["capture"]["vendor"] == "AMD"
    finally:
        advisor.shutdown()
