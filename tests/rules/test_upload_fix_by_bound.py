"""A pageable upload's first fix follows what the ledger says about the copy: whether the GPU, once the host is freed,
still runs it on its critical path (issue #37 deliverable 3, each wait to its cause).

Pinned memory with ``non_blocking=True`` frees the host, not the GPU: a copy on the kernels' stream still runs between
them.  In a loop the GPU paces (8 GEMMs of 500 us, launched in 13 us each) the step is compute + copy + the idle the
host's wait leaves, and pinning returns only that idle: only a copy on a stream of its own (the next batch prefetched
while the step runs) returns the copy's 400 us.  In a loop the host paces (3 ms of host ops, 0.4 ms of GEMMs) the host
blocked in its pageable copy is the cost, and pinning returns it: the GPU runs the copy in time it idles anyway.
Truth by construction: ``synthetic.torchtrace.write_pageable_upload_bound``.  On main both loops led with pinning,
the side-stream copy third (a colleague's finding with the generator).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.frameworks import pytorch
from tests.support.report_store import session_report

_RETURNS = re.compile(r"returns only (\d+) us per step.*? returns their (\d+) us")


@pytest.fixture(scope="module")
def loops(tmp_path_factory) -> dict:
    out = {}
    for bound in ("gpu", "host"):
        d = tmp_path_factory.mktemp(bound)
        truth = tt.write_pageable_upload_bound(str(d), bound)
        (s,) = discover(str(d))
        rep = session_report(s)
        (f,) = [f for f in rep.findings if f.rule == "excessive_memcpy"]
        out[bound] = (truth, f, rep)
    return out


def _step_ms(rep) -> float:  # noqa: ANN001 - a Report
    (g,) = [g for h in rep.hosts for g in h.gpus]
    return g.step_ms


def test_a_gpu_bound_upload_leads_with_its_own_stream(loops) -> None:
    truth, f, rep = loops["gpu"]
    first = f.actions[0].text
    # main: "Copy from pinned (page-locked) host memory ..." first, the side-stream prefetch third
    assert "stream of its own" in first, [a.text[:60] for a in f.actions]
    assert any(a.text.startswith("Copy from pinned") for a in f.actions[1:])  # pinning still told, after it


def test_a_gpu_bound_upload_says_what_freeing_the_host_returns(loops) -> None:
    """By construction: after pinning the step is compute + copy (the copy still on the kernels' stream); after the
    side stream it is the compute.  The finding's two numbers are those differences."""
    truth, f, rep = loops["gpu"]
    step = _step_ms(rep)
    hit = _RETURNS.search(f.summary)
    assert hit, f.summary
    pin_gain, rest = (int(x) / 1000.0 for x in hit.groups())
    assert pin_gain == pytest.approx(step - truth["compute_ms"] - truth["copy_ms"], abs=0.005)
    assert rest == pytest.approx(truth["copy_ms"], abs=0.005)
    assert pin_gain < rest


def test_a_host_bound_upload_leads_with_pinning(loops) -> None:
    """The host paces the loop: the GPU idles ~2.3 ms a step, room for the 400 us copy -- pinning first, no words
    of a copy on the critical path (a control: main led with pinning here too)."""
    truth, f, rep = loops["host"]
    assert f.actions[0].text.startswith("Copy from pinned"), [a.text[:60] for a in f.actions]
    assert "returns only" not in f.summary
    assert _step_ms(rep) - truth["compute_ms"] - truth["copy_ms"] > truth["copy_ms"]  # the idle the copy can fill


def test_non_blocking_says_what_it_frees() -> None:
    """``non_blocking=True`` frees the host; the copy on the kernels' stream still runs between them, so the fix no
    longer says the copy "overlaps with compute" (main's text)."""
    text = pytorch.NON_BLOCKING.text
    assert "overlaps with compute" not in text and "still runs between them" in text
