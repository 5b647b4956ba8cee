"""The Advisor plugin's HTTP surface, through TensorBoard's real WSGI app.

The analysis itself is injected (a counting function returning a schema
Report) so these tests pin the serving behaviour: routes, errors,
traversal, one computation per profile under concurrency, invalidation on
file change, and ``is_active``. ``test_real_analyzer_*`` runs the real
``analyze_session`` when it is present.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug import test as werkzeug_test
from werkzeug import wrappers

from tb_gpu_advisor.discover import logdir as discovery
from tb_gpu_advisor.serve import plugin as plugin_mod
from tb_gpu_advisor.serve.plugin_entry import GpuAdvisorLoader
from tb_gpu_advisor.serve.service import ReportService
from tests.support import plugin_fixtures
from tests.support.paths import REPO
from tests.support.plugin_client import PREFIX, CountingAnalyzer, get_json, make_client, poll_report, write_profile

REPO = str(REPO)


@pytest.fixture
def logdir(tmp_path):
    write_profile(tmp_path, "run1", "2024_01_01_00_00_00", "worker0")
    write_profile(tmp_path, "run1", "2024_01_01_00_00_00", "worker1")
    write_profile(tmp_path, "run1", "2024_02_01_00_00_00", "worker0")
    write_profile(tmp_path, "nested/job", "2024_03_01_00_00_00", "host")
    return str(tmp_path)


# -- runs ------------------------------------------------------------------------


def test_runs_lists_profile_only_runs_with_stock_names(logdir):
    client, _, _ = make_client(logdir)
    body = get_json(client, f"{PREFIX}/runs")
    assert body["logdir_set"] is True
    runs = {r["run"]: r for r in body["runs"]}
    assert set(runs) == {"run1", "nested/job"}
    sessions = [s["session"] for s in runs["run1"]["sessions"]]
    assert sessions == ["2024_02_01_00_00_00", "2024_01_01_00_00_00"]  # newest first
    s = runs["run1"]["sessions"][1]
    assert s["stock_run"] == "run1/2024_01_01_00_00_00"
    assert [h["host"] for h in s["hosts"]] == ["worker0", "worker1"]
    assert "path" not in json.dumps(body)  # no server paths leak into the listing


def test_logdir_spec_gives_clear_empty_state():
    client, plugin, _ = make_client("")
    body = get_json(client, f"{PREFIX}/runs")
    assert (body["logdir_set"], body["runs"]) == (False, [])
    assert plugin.is_active() is False


def test_runs_list_the_frameworks_with_capture_snippets(tmp_path):
    """The tab's "no profiles yet" state shows how to capture in each framework the analyzer reads: the list is
    the framework registry's, so a new framework module shows up without a frontend change."""
    from tb_gpu_advisor import frameworks

    client, _, _ = make_client(str(tmp_path))
    listed = get_json(client, f"{PREFIX}/runs")["frameworks"]
    assert [f["name"] for f in listed] == [f.name for f in frameworks.REGISTRY.values()]
    by = {f["id"]: f["capture"] for f in listed}
    assert "tf.keras.callbacks.TensorBoard" in by["tensorflow"] and "jax.profiler.trace" in by["jax"]


def test_missing_logdir_lists_nothing(tmp_path):
    client, plugin, _ = make_client(str(tmp_path / "not-there"))
    assert get_json(client, f"{PREFIX}/runs")["runs"] == []
    assert plugin.is_active() is False


# -- report ------------------------------------------------------------------------


def test_report_all_hosts_and_one_host(logdir):
    analyzer = CountingAnalyzer()
    client, _, _ = make_client(logdir, analyzer)
    url = f"{PREFIX}/report?run=run1&session=2024_01_01_00_00_00"
    body = json.loads(poll_report(client, url).get_data(as_text=True))
    assert body["run"] == "run1" and [h["host"] for h in body["hosts"]] == ["worker0", "worker1"]
    assert body["schema_version"] and body["findings"][0]["saving"]["ms_per_step"] > 0
    body = json.loads(poll_report(client, url + "&host=worker1").get_data(as_text=True))
    assert [h["host"] for h in body["hosts"]] == ["worker1"]
    assert analyzer.calls == [("run1", "2024_01_01_00_00_00", ("worker0", "worker1")),
                              ("run1", "2024_01_01_00_00_00", ("worker1",))]


def test_report_hostile_text_stays_json(logdir):
    client, _, _ = make_client(logdir, CountingAnalyzer())
    r = poll_report(client, f"{PREFIX}/report?run=nested/job&session=2024_03_01_00_00_00")
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("application/json")
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert plugin_fixtures.HOSTILE in json.loads(r.get_data(as_text=True))["notes"][0]


@pytest.mark.parametrize("query", ["", "run=run1", "session=2024_01_01_00_00_00", "run=&session=x"])
def test_report_missing_params_is_400(logdir, query):
    client, _, _ = make_client(logdir, CountingAnalyzer())
    r = client.get(f"{PREFIX}/report?{query}")
    assert r.status_code == 400


@pytest.mark.parametrize(
    "query",
    [
        "run=nope&session=2024_01_01_00_00_00",
        "run=run1&session=nope",
        "run=run1&session=2024_01_01_00_00_00&host=nope",
        "run=../run1&session=2024_01_01_00_00_00",
        "run=run1/..&session=2024_01_01_00_00_00",
        "run=%2e%2e&session=2024_01_01_00_00_00",
        "run=run1&session=..%2f2024_01_01_00_00_00",
        "run=run1&session=2024_01_01_00_00_00&host=..%2f..%2f..%2fetc%2fpasswd",
        "run=run1&session=2024_01_01_00_00_00&host=%2fetc%2fpasswd",
        "run=%2Ftmp&session=x",
    ],
)
def test_report_unknown_or_traversal_is_404(logdir, query):
    analyzer = CountingAnalyzer()
    client, _, _ = make_client(logdir, analyzer)
    r = client.get(f"{PREFIX}/report?{query}")
    assert r.status_code == 404, r.get_data(as_text=True)
    assert analyzer.calls == []


def test_analysis_error_is_json_500(logdir):
    client, _, _ = make_client(logdir, CountingAnalyzer(fail=True))
    r = poll_report(client, f"{PREFIX}/report?run=run1&session=2024_02_01_00_00_00")
    assert r.status_code == 500
    body = json.loads(r.get_data(as_text=True))
    assert body["state"] == "error" and "corrupt profile" in body["error"]


# -- concurrency and caching ---------------------------------------------------------


def test_parallel_requests_share_one_computation(logdir):
    analyzer = CountingAnalyzer(block=True)
    client, _, service = make_client(logdir, analyzer, wait_s=0.05)
    url = f"{PREFIX}/report?run=run1&session=2024_01_01_00_00_00"

    def fetch(_):
        # one client per thread: werkzeug's test client keeps per-client cookie state
        c = werkzeug_test.Client(client.application, wrappers.Response)
        r = c.get(url)
        return r.status_code, json.loads(r.get_data(as_text=True))

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(fetch, range(16)))
    assert {code for code, _ in results} == {202}
    assert all(b["state"] == "computing" for _, b in results)
    assert any(b["progress"] == 0.4 and b["message"] == "reading worker0" for _, b in results)
    analyzer.release.set()
    assert poll_report(client, url).status_code == 200
    with ThreadPoolExecutor(8) as pool:
        codes = [c for c, _ in pool.map(fetch, range(16))]
    assert codes == [200] * 16
    assert len(analyzer.calls) == 1 and service.computations == 1


def test_changed_capture_is_recomputed(logdir):
    analyzer = CountingAnalyzer()
    client, _, _ = make_client(logdir, analyzer)
    url = f"{PREFIX}/report?run=run1&session=2024_02_01_00_00_00"
    assert poll_report(client, url).status_code == 200
    assert poll_report(client, url).status_code == 200
    assert len(analyzer.calls) == 1  # unchanged file: served from memory
    path = write_profile(logdir, "run1", "2024_02_01_00_00_00", "worker0", b"\x01" * 32)
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert poll_report(client, url).status_code == 200
    assert len(analyzer.calls) == 2
    write_profile(logdir, "run1", "2024_02_01_00_00_00", "worker9")  # a new host file appears
    body = json.loads(poll_report(client, url).get_data(as_text=True))
    assert [h["host"] for h in body["hosts"]] == ["worker0", "worker9"]
    assert len(analyzer.calls) == 3


def test_persistent_cache_survives_restart(logdir, tmp_path_factory):
    """A second TensorBoard (new plugin, new memory) finds the report on disk."""
    cache_dir = str(tmp_path_factory.mktemp("cache"))
    url = f"{PREFIX}/report?run=run1&session=2024_02_01_00_00_00"
    bodies, calls = [], []
    for _ in range(2):
        analyzer = CountingAnalyzer()
        flags = argparse.Namespace(gpu_advisor_cache_dir=cache_dir)
        plugin = plugin_mod.GpuAdvisorPlugin(base_plugin.TBContext(logdir=logdir, flags=flags), analyzer=analyzer)
        client = werkzeug_test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)
        r = poll_report(client, url)
        assert r.status_code == 200, r.get_data(as_text=True)[:300]
        bodies.append(r.get_data(as_text=True))
        calls.append(len(analyzer.calls))
    # the first TensorBoard analysed, the second did not (was: only the last count kept, a loop overwrote it)
    assert calls == [1, 0] and bodies[0] == bodies[1] and os.listdir(cache_dir)
    assert json.loads(bodies[0])["run"] == "run1"


def test_a_cache_entry_whose_body_is_not_a_report_is_analysed_again(logdir, tmp_path_factory):
    """Issue 27 item 14: an entry with a valid header and ``{}`` as its body was served as the report (200 ``{}``,
    and ``/report.md`` a 500); it is now a miss: analysed again, and the entry overwritten."""
    import gzip

    cache_dir = str(tmp_path_factory.mktemp("cache"))
    url = f"{PREFIX}/report?run=run1&session=2024_02_01_00_00_00"
    answers = []
    for restart in range(2):
        analyzer = CountingAnalyzer()
        flags = argparse.Namespace(gpu_advisor_cache_dir=cache_dir)
        plugin = plugin_mod.GpuAdvisorPlugin(base_plugin.TBContext(logdir=logdir, flags=flags), analyzer=analyzer)
        client = werkzeug_test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)
        if restart:
            (entry,) = [os.path.join(cache_dir, n) for n in os.listdir(cache_dir)]
            header = gzip.decompress(open(entry, "rb").read()).decode().partition("\n")[0]
            with open(entry, "wb") as f:
                f.write(gzip.compress(f"{header}\n{{}}".encode()))
        r = poll_report(client, url)
        assert r.status_code == 200
        answers.append((json.loads(r.get_data(as_text=True)).get("run"), len(analyzer.calls)))
        assert poll_report(client, url.replace("/report?", "/report.md?")).status_code == 200
    assert answers == [("run1", 1), ("run1", 1)]


# -- markdown export ---------------------------------------------------------------------


def test_report_markdown_is_render_to_markdown_of_the_json_report(logdir):
    from tb_gpu_advisor.model.schema import Report
    from tb_gpu_advisor.report import render

    analyzer = CountingAnalyzer(block=True)
    client, _, service = make_client(logdir, analyzer, wait_s=0.05)
    query = "run=run1&session=2024_01_01_00_00_00"
    computing = get_json(client, f"{PREFIX}/report.md?{query}", code=202)  # same progress answer as /report
    assert computing["state"] == "computing"
    analyzer.release.set()
    r = poll_report(client, f"{PREFIX}/report.md?{query}")
    assert r.status_code == 200 and r.headers["Content-Type"] == "text/markdown; charset=utf-8"
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    report_json = poll_report(client, f"{PREFIX}/report?{query}").get_data(as_text=True)
    assert r.get_data(as_text=True) == render.to_markdown(Report.from_json(report_json))
    assert "## GPU Advisor: run `run1`" in r.get_data(as_text=True)
    assert service.computations == 1  # the markdown is rendered from the same cached report
    one_host = poll_report(client, f"{PREFIX}/report.md?{query}&host=worker1").get_data(as_text=True)
    assert "worker1" in one_host and "worker0" not in one_host


def test_report_markdown_errors_match_report(logdir):
    client, _, _ = make_client(logdir, CountingAnalyzer(fail=True))
    assert client.get(f"{PREFIX}/report.md?run=run1").status_code == 400
    assert client.get(f"{PREFIX}/report.md?run=run1&session=../x").status_code == 404
    r = poll_report(client, f"{PREFIX}/report.md?run=run1&session=2024_02_01_00_00_00")
    assert r.status_code == 500 and json.loads(r.get_data(as_text=True))["state"] == "error"


def test_report_from_dict_round_trips_the_fixture():
    from tb_gpu_advisor.model.schema import Report

    doc = json.loads(plugin_fixtures.fixture_json())
    assert Report.from_dict(doc).to_dict() == doc


# -- remote discovery TTL ----------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _counting_discover(monkeypatch, real_logdir: str) -> list[str]:
    """discovery.discover answering with ``real_logdir``'s sessions whatever it is asked, counting calls."""
    calls: list[str] = []
    real = discovery.discover
    sessions = real(real_logdir)
    monkeypatch.setattr(discovery, "discover", lambda d: calls.append(d) or list(sessions))
    return calls


def test_remote_discovery_is_cached_for_a_few_seconds(logdir, monkeypatch):
    calls = _counting_discover(monkeypatch, logdir)
    clock = FakeClock()
    ctx = base_plugin.TBContext(logdir="s3://bucket/logs", flags=argparse.Namespace(gpu_advisor_cache_dir=None))
    plugin = plugin_mod.GpuAdvisorPlugin(ctx, analyzer=CountingAnalyzer(), service=ReportService(), clock=clock)
    client = werkzeug_test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)
    assert get_json(client, f"{PREFIX}/runs")["runs"]
    for _ in range(5):  # the page's 400 ms polls
        poll_report(client, f"{PREFIX}/report?run=run1&session=2024_02_01_00_00_00")
        get_json(client, f"{PREFIX}/runs")
        clock.now += 0.4
    assert calls == ["s3://bucket/logs"]  # one listing for all of them
    clock.now += plugin_mod.DEFAULT_DISCOVERY_TTL_S
    get_json(client, f"{PREFIX}/runs")
    assert len(calls) == 2  # expired: listed again


def test_remote_discovery_ttl_flag_and_local_never_cached(logdir, monkeypatch):
    calls = _counting_discover(monkeypatch, logdir)
    for flag, remote, expected in [(0.0, "s3://b/l", 3), (60.0, "s3://b/l", 1), (60.0, logdir, 3)]:
        calls.clear()
        ctx = base_plugin.TBContext(logdir=remote, flags=argparse.Namespace(gpu_advisor_cache_dir=None,
                                                                            gpu_advisor_discovery_ttl=flag))
        client = werkzeug_test.Client(application.TensorBoardWSGI([plugin_mod.GpuAdvisorPlugin(ctx, service=ReportService())]),
                                      wrappers.Response)
        for _ in range(3):
            get_json(client, f"{PREFIX}/runs")
        assert len(calls) == expected, (flag, remote)


def test_loader_defines_discovery_ttl_flag():
    parser = argparse.ArgumentParser()
    GpuAdvisorLoader().define_flags(parser)
    assert parser.parse_args([]).gpu_advisor_discovery_ttl is None
    assert parser.parse_args(["--gpu_advisor_discovery_ttl", "2.5"]).gpu_advisor_discovery_ttl == 2.5


def test_new_session_shows_on_reload(logdir):
    client, _, _ = make_client(logdir, CountingAnalyzer())
    before = get_json(client, f"{PREFIX}/runs")
    write_profile(logdir, "run2", "2024_05_01_00_00_00", "h")
    after = get_json(client, f"{PREFIX}/runs")
    assert {r["run"] for r in after["runs"]} - {r["run"] for r in before["runs"]} == {"run2"}


# -- is_active --------------------------------------------------------------------------


def test_is_active_is_cheap_and_caches_yes(logdir, tmp_path_factory, monkeypatch):
    empty = str(tmp_path_factory.mktemp("empty"))
    _, plugin, _ = make_client(empty)
    assert plugin.is_active() is False
    write_profile(empty, "r", "s", "h")
    assert plugin.is_active() is True  # a "no" is not cached: a capture can appear later

    calls = []
    monkeypatch.setattr(discovery, "has_profiles", lambda d: calls.append(d) or True)
    monkeypatch.setattr(discovery, "discover", lambda d: pytest.fail("is_active must not list everything"))
    _, plugin, _ = make_client(logdir)
    assert plugin.is_active() and plugin.is_active() and plugin.is_active()
    assert len(calls) == 1  # a "yes" is cached


def test_plugins_listing_marks_tab(logdir):
    client, _, _ = make_client(logdir)
    listing = get_json(client, "/data/plugins_listing")
    entry = listing["gpu_advisor"]
    assert entry["enabled"] is True and entry["tab_name"] == "Advisor"
    assert entry["loading_mechanism"] == {"type": "IFRAME", "module_path": "/data/plugin/gpu_advisor/index.js"}


# -- static files and entry -----------------------------------------------------------------


def test_index_js_and_static_assets(logdir):
    client, _, _ = make_client(logdir)
    r = client.get(f"{PREFIX}/index.js")
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/javascript")
    assert b"export" in r.get_data() and b"render" in r.get_data()
    for name, ctype in [("style.css", "text/css"), ("views.js", "text/javascript"), ("model.js", "text/javascript")]:
        r = client.get(f"{PREFIX}/static/{name}")
        assert r.status_code == 200 and r.headers["Content-Type"].startswith(ctype), name
    entry = client.get("/data/plugin_entry.html?name=gpu_advisor")
    assert entry.status_code == 200 and b'import("./index.js")' in entry.get_data()


@pytest.mark.parametrize(
    "path",
    [
        "/static/../plugin.py",
        "/static/..%2fplugin.py",
        "/static/%2e%2e/plugin.py",
        "/static/%2e%2e%2f%2e%2e%2fsetup.py",
        "/static//etc/passwd",
        "/static/%2fetc%2fpasswd",
        "/static/",
        "/static/nope.js",
        "/static/../../tests/test_plugin_backend.py",
    ],
)
def test_static_traversal_is_404(logdir, path):
    client, _, _ = make_client(logdir)
    r = client.get(PREFIX + path)
    assert r.status_code == 404, (path, r.get_data()[:200])


def test_path_prefix(logdir):
    client, _, _ = make_client(logdir, CountingAnalyzer(), path_prefix="/tb")
    assert client.get(f"/tb{PREFIX}/index.js").status_code == 200
    assert get_json(client, f"/tb{PREFIX}/runs")["runs"]
    assert poll_report(client, f"/tb{PREFIX}/report?run=run1&session=2024_02_01_00_00_00").status_code == 200


# -- loader ---------------------------------------------------------------------------------


def test_loader_defines_cache_flag_and_builds_plugin(tmp_path):
    parser = argparse.ArgumentParser()
    GpuAdvisorLoader().define_flags(parser)
    flags = parser.parse_args(["--gpu_advisor_cache_dir", str(tmp_path)])
    assert flags.gpu_advisor_cache_dir == str(tmp_path)
    plugin = GpuAdvisorLoader().load(base_plugin.TBContext(logdir=str(tmp_path), flags=flags))
    assert plugin.plugin_name == "gpu_advisor"
    md = plugin.frontend_metadata()
    assert md.es_module_path == "/index.js" and md.tab_name == "Advisor"


def test_entry_module_import_is_light():
    code = (
        "import sys; import tb_gpu_advisor.serve.plugin_entry; "
        "heavy = [m for m in ('numpy', 'tb_gpu_advisor.serve.plugin', 'tb_gpu_advisor.report.build') if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_frontend_fixture_matches_schema():
    """frontend/test/fixtures/report.json is generated from the schema (python -m tests.plugin_fixtures)."""
    with open(plugin_fixtures.FIXTURE_PATH, encoding="utf-8") as f:
        assert f.read() == plugin_fixtures.fixture_json()


# -- the real analyzer -------------------------------------------------------------------------


def _real_sessions():
    demo = os.path.join(REPO, "demo_logs")
    return [s for s in discovery.discover(demo)] if os.path.isdir(demo) else []


def test_multi_host_session_is_analysed_in_parallel_like_serial(monkeypatch):
    """The 2-host demo: worker processes (off the request thread), progress, the same report as serial."""
    from tb_gpu_advisor.runtime import pipeline
    from tb_gpu_advisor.runtime import session as analysis

    demo = os.path.join(REPO, "demo_logs")
    session = next((s for s in _real_sessions() if s.run == "multi_host"), None)
    assert session is not None, "demo_logs/multi_host is in the repository"  # was: skipped when missing
    assert len(session.hosts) == 2
    seen: list[dict] = []
    real = analysis.analyze_session_parallel

    def spy(sess, jobs=None, progress=None, **kw):
        notes: list[tuple] = []
        seen.append({"hosts": [h.host for h in sess.hosts], "jobs": jobs, "thread": threading.current_thread().name,
                     "notes": notes})
        return real(sess, jobs=jobs, progress=lambda m, f: (notes.append((m, f)), progress(m, f)), **kw)

    monkeypatch.setattr(analysis, "analyze_session_parallel", spy)
    client, _, service = make_client(demo, wait_s=0.01)
    first = client.get(f"{PREFIX}/report?run=multi_host&session={session.session}")
    assert first.status_code == 202 and json.loads(first.get_data(as_text=True))["state"] == "computing"
    r = poll_report(client, f"{PREFIX}/report?run=multi_host&session={session.session}", timeout=120)
    assert r.status_code == 200, r.get_data(as_text=True)[:500]
    assert len(seen) == 1 and service.computations == 1
    assert seen[0]["hosts"] == ["worker0", "worker1"] and seen[0]["jobs"] == min(2, analysis.available_cores())
    assert seen[0]["thread"].startswith("gpu-advisor")  # a ReportService worker, not a request thread
    assert [f for _, f in seen[0]["notes"]] == [0.5, 1.0]
    parallel = json.loads(r.get_data(as_text=True))
    serial = pipeline.analyze_session(session.run, session.session, session.hosts).to_dict()
    for doc in (parallel, serial):
        doc.pop("generated_at")
    assert parallel == json.loads(json.dumps(serial))
    # one host asked for: no process pool
    r = poll_report(client, f"{PREFIX}/report?run=multi_host&session={session.session}&host=worker1", timeout=120)
    assert r.status_code == 200 and len(seen) == 1


def test_real_analyzer_on_demo_logs():
    sessions = _real_sessions()
    assert len(sessions) >= 9, "demo_logs/ is in the repository"  # was: skipped when empty or analyze.py missing
    demo = os.path.join(REPO, "demo_logs")
    client, _, service = make_client(demo)
    s = min(sessions, key=lambda s: s.size)
    r = poll_report(client, f"{PREFIX}/report?run={s.run}&session={s.session}", timeout=120)
    assert r.status_code == 200, r.get_data(as_text=True)[:500]
    body = json.loads(r.get_data(as_text=True))
    assert body["run"] == s.run and body["hosts"] and body["headline"]
    assert service.computations == 1
