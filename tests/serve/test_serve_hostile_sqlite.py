"""One hostile Nsight export in a shared logdir (issue #39): the tab and the MCP server keep serving every other run.

Before: an 8 kB export whose ``TARGET_INFO_SYSTEM_ENV`` is an endless recursive view was evaluated while the logdir
was listed -- TensorBoard grew ~97 MB/s and every request hung.  Here the logdir holds that file, an endless view in
place of the kernel table, a table named with bytes that are no UTF-8, and a schema SQLite cannot parse whose error
quotes bytes that are no UTF-8 (before: the listing raised UnicodeDecodeError and every route returned 500), beside a
good Nsight run."""

from __future__ import annotations

import argparse
import json
import time
from urllib.parse import urlencode

import pytest
from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug import test as werkzeug_test
from werkzeug import wrappers

from synthetic import hostile
from tb_gpu_advisor.runtime.advisor import Advisor
from tb_gpu_advisor.runtime.cache import ReportCache
from tb_gpu_advisor.serve import mcp_server
from tb_gpu_advisor.serve import plugin as plugin_mod
from tb_gpu_advisor.serve.service import ReportService
from tests.support.plugin_client import PREFIX, poll_outcome, poll_report

HOSTILE = ("endless_env_view", "endless_kernel_view", "not_utf8_in_minimal")
#: Left out of the listing, with why (it cannot be read as an export at all).
UNREADABLE = "malformed_schema_not_utf8"


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile-sqlite")
    (root / "good").mkdir()
    hostile.sqlite_export(str(root / "good" / "train.sqlite"), steps=6)
    for kind in (*HOSTILE, UNREADABLE):
        (root / kind).mkdir()
        hostile.SQLITE_KINDS[kind](str(root / kind / "evil.sqlite"))
    return str(root)


def _get(client, url: str):
    r = poll_report(client, url)
    assert r.status_code == 200, (url, r.status_code, r.get_data(as_text=True)[:300])
    return r


def test_the_tab_serves_the_good_run_and_names_each_hostile_files_error(logdir):
    ctx = base_plugin.TBContext(logdir=logdir, flags=argparse.Namespace(gpu_advisor_cache_dir="off"))
    plugin = plugin_mod.GpuAdvisorPlugin(ctx, service=ReportService(wait_s=0.3), settle_s=0, isolate=False)
    client = werkzeug_test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)
    t = time.monotonic()
    listing = json.loads(_get(client, f"{PREFIX}/runs").get_data(as_text=True))
    runs = {r["run"]: r for r in listing["runs"]}
    assert time.monotonic() - t < 30
    assert {"good", *HOSTILE} <= set(runs) and UNREADABLE not in runs
    assert any(s["path"] == f"{UNREADABLE}/evil.sqlite" and "cannot be read" in s["reason"] for s in listing["skipped"])
    for run in ("good", *HOSTILE):
        q = {"run": run, "session": runs[run]["sessions"][0]["session"]}
        report = json.loads(_get(client, f"{PREFIX}/report?{urlencode(q)}").get_data(as_text=True))
        host = report["hosts"][0]
        if run == "good":
            assert host["error"] is None and report["findings"]
            trace = _get(client, f"{PREFIX}/trace?{urlencode({**q, 'host': host['host']})}")
            assert trace.get_data()[:16] == b"SQLite format 3\x00"
        else:  # analysed to the end (no kernel table to read): its own error in words, or a window without GPU work
            error = host["error"] or ""
            assert "codec" not in error and "Traceback" not in error and "budget" not in error, (run, error)
    assert time.monotonic() - t < 120


def test_mcp_lists_and_reports_the_good_run(logdir, tmp_path):
    backend = mcp_server.ToolBackend(Advisor(logdir, cache=ReportCache(str(tmp_path / "cache"))), isolate=False)
    try:
        assert {"good", *HOSTILE} <= {r["run"] for r in json.loads(backend.runs_json())["runs"]}
        out = poll_outcome(backend, "good")
        assert out.state == "ready", out
        assert json.loads(out.body)["hosts"][0]["error"] is None
    finally:
        backend.shutdown()
