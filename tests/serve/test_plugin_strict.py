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


MULTI = REPO / "demo_logs" / "multi_host"


@pytest.mark.skipif(not MULTI.is_dir(), reason="demo_logs/multi_host missing")
def test_compare_with_a_host_the_other_run_lacks_compares_its_slowest_host_and_says_so(tmp_path):
    """The tab's Compare sends the host on screen: a base run without that host failed the whole comparison (400).
    Now that side is compared by its slowest host, and the diff's note says the host was missing; a host neither
    run has is still a 400 naming the hosts there are."""
    logs = tmp_path / "logs"
    shutil.copytree(DEMO, logs / "a")  # worker0 only
    shutil.copytree(MULTI, logs / "b")  # worker0 and worker1
    client, plugin = _client(logs)
    sessions = {s.run: s.session for s in plugin._sessions()}
    q = f"base_run=a&base_session={sessions['a']}&new_run=b&new_session={sessions['b']}"
    r = poll_report(client, f"{PREFIX}/diff?{q}&host=worker1")
    assert r.status_code == 200, r.get_data(as_text=True)[:300]
    d = r.get_json()
    assert (d["base"]["host"], d["new"]["host"]) == ("worker0", "worker1")
    assert any("has no host 'worker1'" in n and "worker0" in n for n in d["notes"]), d["notes"]
    md = poll_report(client, f"{PREFIX}/diff.md?{q}&host=worker1").get_data(as_text=True)
    assert "has no host 'worker1'" in md
    r = poll_report(client, f"{PREFIX}/diff?{q}&host=nope")
    assert r.status_code == 400 and "unknown host 'nope'" in r.get_data(as_text=True)


def test_a_swap_race_on_every_route_gives_4xx_and_warnings_never_500_or_tracebacks(logdir, tmp_path, caplog):
    """The issue's probe: a file swapped for a link out of the logdir and back while every route reads it.  Each
    refusal is a 404 and at most one WARNING line; on main ``/window`` answered 500 with an ERROR traceback (100
    of them in 15 s)."""
    import threading
    import time
    from urllib.parse import urlencode

    (listed,) = list(logdir.rglob("*.xplane.pb"))
    outside, keep = tmp_path / "secret.xplane.pb", tmp_path / "keep"
    shutil.copy(listed, outside)
    os.link(listed, keep)
    stop = threading.Event()
    swaps = [0]

    def loop():
        while not stop.is_set():
            link, back = listed.parent / ".link", listed.parent / ".back"
            os.symlink(outside, link)
            os.replace(link, listed)
            time.sleep(0.001)
            os.link(keep, back)
            os.replace(back, listed)
            swaps[0] += 1
            time.sleep(0.0005)

    caplog.set_level(logging.INFO)
    q = urlencode({"run": "input_bound", "session": "2026_01_01_00_00_00"})
    routes = [f"report?{q}", f"report.md?{q}", f"window?{q}&host=worker0&start_ms=0&end_ms=10",
              f"trace?{q}&host=worker0", f"diff?base_{q.replace('&', '&base_')}&new_{q.replace('&', '&new_')}"]
    codes: dict[int, int] = {}
    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    deadline = time.monotonic() + 4
    try:
        while time.monotonic() < deadline:
            client, _ = _client(logdir)  # a new TensorBoard: nothing kept in memory, each route reads again
            for route in routes:
                r = poll_report(client, f"{PREFIX}/{route}", timeout=20)
                codes[r.status_code] = codes.get(r.status_code, 0) + 1
    finally:
        stop.set()
        thread.join(5)
    assert swaps[0] > 20 and codes.get(404, 0) > 0, (swaps[0], codes)
    assert set(codes) <= {200, 404}, codes
    noisy = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not noisy, [(r.levelname, r.getMessage()[:200]) for r in noisy[:3]]
