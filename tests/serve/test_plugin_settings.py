"""The tab's settings (issue #21 item 5, the tab fields of #19 and #20): ``params``, ``net_gbps`` and ``model_flops``
per request on every route that answers with an analysed report, over TensorBoard's ``--gpu_advisor_*`` flags.

A stand-in analyzer pins the serving side (400s, one report per setting, the flags as defaults); the real analysis,
in its limited child processes as TensorBoard runs it, pins that each request's settings reach its own analysis --
two settings requested at once included -- and that each is stored under its own cache key.
"""

from __future__ import annotations

import argparse
import json
import os
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlencode

import pytest
from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug import test as werkzeug_test
from werkzeug import wrappers

from synthetic import torchtrace as tt
from tb_gpu_advisor.common.options import UserOptions
from tb_gpu_advisor.common.thresholds import ENV_MODEL_FLOPS, ENV_NET_GBPS
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.runtime.cache import ReportCache
from tb_gpu_advisor.serve import plugin as plugin_mod
from tb_gpu_advisor.serve.plugin_entry import GpuAdvisorLoader
from tests.support.plugin_client import PREFIX, CountingAnalyzer, get_json, make_client, poll_report, write_profile

SESSION = "2024_01_01_00_00_00"


@pytest.fixture
def logdir(tmp_path):
    write_profile(tmp_path, "a", SESSION, "worker0")
    write_profile(tmp_path, "b", SESSION, "worker0")
    return str(tmp_path)


def _report_url(run: str = "a", route: str = "report", **settings: str) -> str:
    return f"{PREFIX}/{route}?{urlencode({'run': run, 'session': SESSION, **settings})}"


def _diff_url(route: str = "diff", **settings: str) -> str:
    query = {"base_run": "a", "base_session": SESSION, "new_run": "b", "new_session": SESSION, **settings}
    return f"{PREFIX}/{route}?{urlencode(query)}"


@pytest.mark.parametrize("name,value", [
    ("params", "abc"), ("params", "1.5"), ("params", "0"), ("params", "-100"), ("params", "1e400"),
    ("net_gbps", "-1"), ("net_gbps", "nan"), ("net_gbps", "inf"), ("net_gbps", "0"),
    ("model_flops", "1e12x"), ("model_flops", "-3e12"),
])
def test_a_bad_setting_is_a_400_naming_it_on_every_route_and_the_server_keeps_serving(logdir, name, value):
    analyzer = CountingAnalyzer()
    client, _, service = make_client(logdir, analyzer)
    for url in (_report_url(**{name: value}), _report_url(route="report.md", **{name: value}),
                _diff_url(**{name: value}), _diff_url(route="diff.md", **{name: value})):
        r = client.get(url)
        assert r.status_code == 400, (url, r.status_code)
        assert f"{name}: must be a positive" in r.get_data(as_text=True), r.get_data(as_text=True)
    assert analyzer.calls == [] and service.computations == 0  # nothing analysed with a setting the user did not mean
    assert poll_report(client, _report_url()).status_code == 200  # and the next request is served


def test_each_setting_is_its_own_report_and_spellings_of_one_value_share_it(logdir):
    analyzer = CountingAnalyzer()
    client, _, service = make_client(logdir, analyzer)
    for settings in ({}, {"params": "110000000"}, {"params": "1.1e8"}, {"params": "110_000_000"},
                     {"params": "110000000", "net_gbps": "6"}, {"net_gbps": "6.0", "params": "110000000"},
                     {"model_flops": "2e12"}, {"params": ""}):
        assert poll_report(client, _report_url(**settings)).status_code == 200, settings
    # the defaults, 110M params, 110M params + 6 GB/s, 2 TFLOPs: an empty value is no setting
    assert service.computations == 4
    # /diff analyses both sides with the request's settings: the new ones are computed, the cached one reused
    assert poll_report(client, _diff_url(params="110000000")).status_code == 200
    assert service.computations == 5  # side "b" with 110M params; side "a" with them was stored above


def test_flags_are_the_defaults_listed_by_runs_and_a_request_overrides_them(logdir, monkeypatch):
    monkeypatch.setenv(ENV_NET_GBPS, "12")  # the environment counts below the flags
    flags = argparse.Namespace(gpu_advisor_cache_dir=None, gpu_advisor_params=110_000_000,
                               gpu_advisor_net_gbps=None, gpu_advisor_model_flops_per_step=-5.0)
    plugin = plugin_mod.GpuAdvisorPlugin(base_plugin.TBContext(logdir=logdir, flags=flags), analyzer=CountingAnalyzer())
    client = werkzeug_test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)
    settings = get_json(client, f"{PREFIX}/runs")["settings"]
    # a flag that is not positive (built outside the loader's parser) is ignored, not used
    assert settings == {"params": 110_000_000, "net_gbps": 12.0, "model_flops": None, "net_gbps_default": 25.0}
    assert plugin.options_for({}) == UserOptions(110_000_000, 12.0, None)
    assert plugin.options_for({"params": "7e6", "model_flops": "1e12"}) == UserOptions(7_000_000, 12.0, 1e12)


def test_loader_flags_take_the_clis_spellings_refuse_bad_values_and_leave_the_environment_alone(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV_NET_GBPS, raising=False)
    monkeypatch.delenv(ENV_MODEL_FLOPS, raising=False)
    parser = argparse.ArgumentParser()
    GpuAdvisorLoader().define_flags(parser)
    flags = parser.parse_args(["--gpu_advisor_params", "1.1e8", "--gpu_advisor_net_gbps", "6",
                               "--gpu_advisor_model_flops_per_step", "2e12", "--gpu_advisor_cache_dir", "off"])
    assert (flags.gpu_advisor_params, flags.gpu_advisor_net_gbps, flags.gpu_advisor_model_flops_per_step) == \
        (110_000_000, 6.0, 2e12)
    for bad in (["--gpu_advisor_params", "1.5"], ["--gpu_advisor_net_gbps", "-1"],
                ["--gpu_advisor_model_flops_per_step", "nan"]):
        with pytest.raises(SystemExit):
            parser.parse_args(bad)
    plugin = GpuAdvisorLoader().load(base_plugin.TBContext(logdir=str(tmp_path), flags=flags))
    assert plugin.options_for({}) == UserOptions(110_000_000, 6.0, 2e12)
    assert ENV_NET_GBPS not in os.environ and ENV_MODEL_FLOPS not in os.environ  # handed to analyses, not set here


# -- the real analysis, in worker processes ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def ddp_logdir(tmp_path_factory):
    """A 4-GPU DDP run whose AllReduce is slow (one host file) and a 2-node job whose link between hosts runs at
    5.2 GB/s of bus bandwidth (two host files, analysed in two worker processes)."""
    logdir = str(tmp_path_factory.mktemp("ddp"))
    tt.write_run(logdir, "ddp_slow_allreduce", steps=6)
    tt.write_run(logdir, "ddp_2x8_slow_link", steps=6)
    return logdir


def _real_client(logdir: str, cache_dir: str):
    flags = argparse.Namespace(gpu_advisor_cache_dir=cache_dir)
    plugin = plugin_mod.GpuAdvisorPlugin(base_plugin.TBContext(logdir=logdir, flags=flags), settle_s=0.0)
    assert plugin._isolate  # the analysis runs in limited child processes, as under TensorBoard
    return werkzeug_test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response), plugin


def _served(client, run: str, session: str, **settings: str) -> dict:
    r = poll_report(client, f"{PREFIX}/report?{urlencode({'run': run, 'session': session, **settings})}", timeout=180)
    assert r.status_code == 200, r.get_data(as_text=True)[:500]
    return json.loads(r.get_data(as_text=True))


def _finding(doc: dict, rule: str) -> dict | None:
    return next((f for f in doc["findings"] if f["rule"] == rule), None)


def test_concurrent_requests_with_different_settings_each_get_their_own_analysis_and_cache_entry(ddp_logdir, tmp_path):
    """Four requests at once, in TensorBoard's threads and the analysis' child processes: each report shows its own
    settings, none leaks into another, and each is stored under its own key (the next server answers from the
    cache, analysing nothing)."""
    sessions = {s.run: s.session for s in discover(ddp_logdir)}
    link, slow = sessions["ddp_2x8_slow_link"], sessions["ddp_slow_allreduce"]
    asks = [("ddp_2x8_slow_link", link, {}), ("ddp_2x8_slow_link", link, {"net_gbps": "6"}),
            ("ddp_slow_allreduce", slow, {"params": "25000000"}), ("ddp_slow_allreduce", slow, {"model_flops": "1e12"})]
    cache_dir = str(tmp_path / "cache")
    client, plugin = _real_client(ddp_logdir, cache_dir)
    with ThreadPoolExecutor(len(asks)) as pool:
        docs = list(pool.map(lambda a: _served(client, a[0], a[1], **a[2]), asks))
    default_link, six, params, flops = docs
    # the network between hosts: 5.2 GB/s of bus bandwidth is slow against 25 GB/s per GPU, fine against 6
    assert "25 GB/s per GPU between hosts (default comm.net_GBps)" in _finding(default_link, "comm_bandwidth_low")["summary"]
    assert _finding(six, "comm_bandwidth_low") is None
    # the parameter count: the AllReduce judged against 25M x 4 B over the link, and no longer "not judged"
    ar = _finding(params, "allreduce_slow")
    detail = ar["metric"]["detail"]
    assert ar["severity"] == "critical" and detail["params"] == 25_000_000
    assert detail["expected_ms"] == pytest.approx(25e6 * 4 / detail["bandwidth_bytes_per_s"] * 1e3)
    assert _finding(flops, "allreduce_slow")["title"].startswith("AllReduce time measured, not judged")
    # the model's FLOPs: MFU from them, where the trace's own FLOPs give another
    mfu = [next(c for c in d["headline"] if c["id"] == "mfu") for d in (params, flops)]
    assert mfu[0]["value"] and mfu[1]["value"] and mfu[1]["value"] != pytest.approx(mfu[0]["value"])
    assert plugin._service.computations == 4
    assert len(ReportCache(cache_dir).entries()) == 4
    assert ENV_NET_GBPS not in os.environ and ENV_MODEL_FLOPS not in os.environ
    fresh, again = _real_client(ddp_logdir, cache_dir)
    for (run, session, settings), doc in zip(asks, docs):
        stored = _served(fresh, run, session, **settings)
        assert [f["id"] for f in stored["findings"]] == [f["id"] for f in doc["findings"]], settings
    assert again._service.computations == 0  # every report came from the persistent cache
    assert len(ReportCache(cache_dir).entries()) == 4


def test_a_windows_request_with_the_tabs_settings_reads_every_window_of_the_report_on_screen(tmp_path):
    """The step timelines (``/window``) take the settings too: they name the report on screen -- made with them --
    whose other windows of the host are read along with the first (asking for them then reads nothing)."""
    import shutil

    from tests.support.paths import REPO

    demo = os.path.join(str(REPO), "demo_logs", "pytorch_input_bound")
    if not os.path.isdir(demo):
        pytest.skip("demo_logs/ missing")
    logdir = str(tmp_path / "logs")
    shutil.copytree(demo, os.path.join(logdir, "pytorch_input_bound"))
    flags = argparse.Namespace(gpu_advisor_cache_dir="off")
    plugin = plugin_mod.GpuAdvisorPlugin(base_plugin.TBContext(logdir=logdir, flags=flags), settle_s=0, isolate=False)
    client = werkzeug_test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)
    (session,) = discover(logdir)
    settings = {"params": "110000000", "model_flops": "1e12"}
    doc = _served(client, session.run, session.session, **settings)
    windows = [w for f in doc["findings"] for w in f["windows"]]
    assert len({(w["start_ms"], w["end_ms"]) for w in windows}) >= 3
    for w in windows:
        query = {"run": session.run, "session": session.session, "host": w["host"], "start_ms": w["start_ms"],
                 "end_ms": w["end_ms"], **settings}
        assert poll_report(client, f"{PREFIX}/window?{urlencode(query)}").status_code == 200
    assert plugin._windows.computations == 1
    assert client.get(f"{PREFIX}/window?{urlencode({**query, 'net_gbps': '-1'})}").status_code == 400
