"""Issue #39, deliverable 8 (the tab's part): quiet and strict.

* every route answers GET and HEAD only: PUT, POST, DELETE, TRACE... are a 405 naming what is allowed (they were 200);
* an expected refusal -- a file swapped for a link out of the logdir after it was listed, an analysis stopped by its
  worker's limit -- is a 4xx and one WARNING line without a traceback (``/window`` answered 500 with an ERROR
  traceback for a refused link).
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil

import pytest
from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug import test as werkzeug_test
from werkzeug import wrappers

from tb_gpu_advisor.runtime import isolation
from tb_gpu_advisor.serve import plugin as plugin_mod
from tb_gpu_advisor.serve.service import ReportService
from tests.support.paths import REPO
from tests.support.plugin_client import PREFIX, poll_report

DEMO = REPO / "demo_logs" / "input_bound"
pytestmark = pytest.mark.skipif(not DEMO.is_dir(), reason="demo_logs/ missing")
ROUTES = ("/index.js", "/static/style.css", "/runs", "/report", "/report.md", "/diff", "/diff.md", "/window", "/trace")


@pytest.fixture
def logdir(tmp_path):
    shutil.copytree(DEMO, tmp_path / "logs" / "input_bound")
    return tmp_path / "logs"


def _client(logdir, isolate: bool = False):
    ctx = base_plugin.TBContext(logdir=str(logdir), flags=argparse.Namespace(gpu_advisor_cache_dir="off"))
    plugin = plugin_mod.GpuAdvisorPlugin(ctx, service=ReportService(wait_s=0.3), settle_s=0, isolate=isolate)
    return werkzeug_test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response), plugin


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("method", ["PUT", "POST", "DELETE", "TRACE", "PATCH", "OPTIONS"])
def test_routes_answer_only_get_and_head(logdir, route, method):
    client, _ = _client(logdir)
    r = client.open(PREFIX + route, method=method)
    assert r.status_code == 405, (route, method, r.status_code)
    assert r.headers["Allow"] == "GET, HEAD"


def test_get_and_head_still_answer(logdir):
    client, _ = _client(logdir)
    assert client.get(f"{PREFIX}/runs").status_code == 200
    assert client.head(f"{PREFIX}/runs").status_code == 200


def _gpu_advisor_records(caplog):
    return [r for r in caplog.records if r.name.startswith("tb_gpu_advisor") and r.levelno >= logging.WARNING]


@pytest.mark.parametrize("isolate", [False, True])
def test_window_of_a_file_swapped_for_a_link_out_is_a_404_and_one_warning(logdir, tmp_path, caplog, isolate):
    client, plugin = _client(logdir, isolate=isolate)
    listed = plugin._sessions()  # the listing a request saw, before the swap
    host = listed[0].hosts[0]
    outside = tmp_path / "secret.xplane.pb"
    shutil.copy(host.path, outside)
    os.unlink(host.path)
    os.symlink(outside, host.path)
    plugin._sessions = lambda: list(listed)
    caplog.set_level(logging.INFO)
    url = (f"{PREFIX}/window?run=input_bound&session={listed[0].session}&host={host.host}"
           f"&start_ms=0&end_ms=10")
    r = poll_report(client, url)
    assert r.status_code == 404, r.get_data(as_text=True)[:300]
    records = _gpu_advisor_records(caplog)
    assert [r.levelname for r in records] == ["WARNING"], [(r.levelname, r.getMessage()) for r in records]
    assert records[0].exc_info is None and "Traceback" not in records[0].getMessage()


def test_a_report_stopped_by_its_worker_limit_is_a_422_and_one_warning(logdir, caplog, monkeypatch):
    monkeypatch.setenv(isolation.ENV_TIMEOUT, "0.001")
    client, plugin = _client(logdir, isolate=True)
    session = plugin._sessions()[0]
    caplog.set_level(logging.INFO)
    r = poll_report(client, f"{PREFIX}/report?run=input_bound&session={session.session}")
    assert r.status_code == 422, r.get_data(as_text=True)[:300]
    assert "wall-clock limit" in r.get_json()["error"] and isolation.ENV_TIMEOUT in r.get_json()["error"]
    records = _gpu_advisor_records(caplog)
    assert [r.levelname for r in records] == ["WARNING"] and records[0].exc_info is None


def test_concurrent_runs_requests_share_one_listing_and_a_new_capture_still_shows(logdir):
    """Under 50 clients ``/runs`` p95 was 1.4 s: each request walked the logdir twice, the second walk under a lock,
    so requests queued one behind another.  Now the requests that arrive while a listing is made share it."""
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    client, plugin = _client(logdir)
    walks = {"sessions": 0, "skipped": 0}
    lock = threading.Lock()
    real_sessions, real_skipped = plugin._advisor.sessions, plugin._advisor.skipped

    def counted(name, fn):
        def wrapper(*a, **kw):
            with lock:
                walks[name] += 1
            time.sleep(0.2)  # a logdir that takes a while to list
            return fn(*a, **kw)
        return wrapper

    plugin._advisor.sessions = counted("sessions", real_sessions)
    plugin._advisor.skipped = counted("skipped", real_skipped)
    with ThreadPoolExecutor(20) as pool:
        codes = list(pool.map(lambda _: client.get(f"{PREFIX}/runs").status_code, range(20)))
    assert codes == [200] * 20
    assert walks["sessions"] <= 4 and walks["skipped"] <= 4, walks  # were 20 each
    shutil.copytree(DEMO, logdir / "added_later")
    runs = {r["run"] for r in client.get(f"{PREFIX}/runs").get_json()["runs"]}
    assert runs == {"input_bound", "added_later"}
