"""A werkzeug client on a real GpuAdvisorPlugin inside TensorBoard's WSGI app, and what backend tests share.

Used by tests/serve/test_plugin_backend.py and tests/serve/test_plugin_diff.py (test modules never import each other).
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time

from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug import test as werkzeug_test
from werkzeug import wrappers

from tb_gpu_advisor.serve import plugin as plugin_mod
from tb_gpu_advisor.serve.service import ReportService
from tests.support import plugin_fixtures

PREFIX = "/data/plugin/gpu_advisor"


class CountingAnalyzer:
    """Stands in for analyze_session: counts calls, can block until released."""

    def __init__(self, block: bool = False, fail: bool = False) -> None:
        self.calls: list[tuple] = []
        self.release = threading.Event()
        self._block = block
        self._fail = fail
        self._lock = threading.Lock()

    def __call__(self, run, session, host_files, progress=None):
        with self._lock:
            self.calls.append((run, session, tuple(h.host for h in host_files)))
        if progress:
            progress("reading worker0", 0.4)
        if self._block:
            assert self.release.wait(10), "test never released the analyzer"
        if self._fail:
            raise RuntimeError("corrupt profile")
        return plugin_fixtures.report(run, session, tuple(h.host for h in host_files))


def write_profile(logdir, run: str, session: str, host: str, data: bytes = b"\x00" * 16) -> str:
    d = os.path.join(logdir, run, "plugins", "profile", session)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, f"{host}.xplane.pb")
    with open(path, "wb") as f:
        f.write(data)
    return path


def make_client(logdir: str, analyzer=None, path_prefix: str = "", wait_s: float = 0.3):
    flags = argparse.Namespace(gpu_advisor_cache_dir=None)
    ctx = base_plugin.TBContext(logdir=logdir, flags=flags)
    service = ReportService(wait_s=wait_s)
    plugin = plugin_mod.GpuAdvisorPlugin(ctx, analyzer=analyzer, service=service)
    app = application.TensorBoardWSGI([plugin], path_prefix=path_prefix)
    return werkzeug_test.Client(app, wrappers.Response), plugin, service


def get_json(client, url: str, code: int = 200):
    r = client.get(url)
    assert r.status_code == code, (url, r.status_code, r.get_data(as_text=True)[:500])
    assert r.headers["Content-Type"].startswith("application/json")
    return json.loads(r.get_data(as_text=True))


def poll_report(client, url: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = client.get(url)
        if r.status_code != 202:
            return r
        time.sleep(0.05)
    raise AssertionError(f"{url} still computing after {timeout}s")


def poll_outcome(backend, run: str, timeout: float = 60.0):
    """The MCP tool backend's outcome for ``run``'s report once it is no longer computing (or after ``timeout``)."""
    s = backend.select(run)
    deadline = time.monotonic() + timeout
    out = backend.outcome(s)
    while out.state == "computing" and time.monotonic() < deadline:
        out = backend.outcome(s)
    return out
