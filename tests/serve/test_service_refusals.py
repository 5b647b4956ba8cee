"""A refusal (404: the file gone or swapped for a link out since it was listed) reaches the polls of the request
that found it.

Refusals are not kept as failures, because the file may come back as listed.  They used to be dropped at once, so a
request whose analysis outlasted its short wait (a 202) polled into nothing: the poll found neither an outcome nor a
job, started the analysis again, and under load (each analysis longer than the wait) never saw the 404 -- the
``test_plugin_strict`` window test saw the refusal's warning twice when the machine was busy.  Here the wait is 0,
so every first request answers "computing" whatever the load: the order of events is fixed, not raced.
"""

from __future__ import annotations

import threading
import time

from tb_gpu_advisor.serve.service import ReportService


def _refusing(calls: list[int], release: threading.Event):
    def compute(progress):
        calls.append(1)
        release.wait(5)
        raise FileNotFoundError("worker0.xplane.pb: no longer there")
    return compute


def _until_done(service: ReportService, key: str, compute, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        outcome = service.get(key, compute)
        if outcome.state != "computing":
            return outcome
        time.sleep(0.01)
    raise AssertionError("still computing")


def test_the_polls_of_a_request_read_its_refusal_without_analysing_again():
    service = ReportService(workers=1, wait_s=0.0, refusal_s=60.0)
    calls: list[int] = []
    release = threading.Event()
    compute = _refusing(calls, release)
    try:
        assert service.get("k", compute).state == "computing"  # the request's own answer: a 202
        release.set()
        outcome = _until_done(service, "k", compute)
        assert (outcome.state, outcome.code) == ("error", 404)
        assert calls == [1] and service.computations == 1
    finally:
        service.shutdown()


def test_a_refusal_read_once_is_tried_again_at_the_next_request():
    service = ReportService(workers=1, wait_s=0.0, refusal_s=60.0)
    calls: list[int] = []
    release = threading.Event()
    release.set()
    try:
        assert _until_done(service, "k", _refusing(calls, release)).code == 404

        def back(progress):
            return "{}"
        outcome = _until_done(service, "k", back)  # the file is back as listed: analysed again, and it reads
        assert outcome.state == "ready" and outcome.body == "{}" and service.computations == 2
    finally:
        service.shutdown()


def test_a_refusal_nobody_read_is_not_kept_past_its_seconds(monkeypatch):
    """The service's clock is the test's: a refusal no request read within ``refusal_s`` is dropped."""
    from types import SimpleNamespace

    from tb_gpu_advisor.serve import service as service_mod

    now = [1000.0]
    monkeypatch.setattr(service_mod, "time", SimpleNamespace(monotonic=lambda: now[0]))
    service = ReportService(workers=1, wait_s=0.0, refusal_s=5.0)
    calls: list[int] = []
    release = threading.Event()
    release.set()
    try:
        assert service.get("k", _refusing(calls, release)).state == "computing"
        deadline = time.perf_counter() + 30
        while service._jobs and time.perf_counter() < deadline:  # the refusal is found, and nobody asks
            time.sleep(0.01)
        now[0] += 5.1
        outcome = _until_done(service, "k", lambda progress: "{}")
        assert outcome.state == "ready" and calls == [1] and service.computations == 2
    finally:
        service.shutdown()
