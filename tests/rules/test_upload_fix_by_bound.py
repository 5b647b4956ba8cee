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

_RETURNS = re.compile(r"gives back only (\d+) us of idle per step.*? takes their (\d+) us off the step")


def _report(d: Path, bound: str, fix: str | None = None):  # noqa: ANN202 - (truth, Report)
    truth = tt.write_pageable_upload_bound(str(d), bound, fix=fix)
    (s,) = discover(str(d))
    return truth, session_report(s)


def _step_ms(rep) -> float:  # noqa: ANN001 - a Report
    (g,) = [g for h in rep.hosts for g in h.gpus]
    return g.step_ms


@pytest.fixture(scope="module")
def loops(tmp_path_factory) -> dict:
    """Each loop's report, its finding, and the step time each fix gives (the same loop written with it made)."""
    out = {}
    for bound in ("gpu", "host"):
        truth, rep = _report(tmp_path_factory.mktemp(bound), bound)
        (f,) = [f for f in rep.findings if f.rule == "excessive_memcpy"]
        fixed = {fix: _step_ms(_report(tmp_path_factory.mktemp(f"{bound}_{fix}"), bound, fix)[1])
                 for fix in ("pin", "stream")}
        out[bound] = (truth, f, _step_ms(rep), fixed)
    return out


def test_a_gpu_bound_upload_leads_with_its_own_stream(loops) -> None:
    truth, f, step, fixed = loops["gpu"]
    first = f.actions[0].text
    # main: "Copy from pinned (page-locked) host memory ..." first, the side-stream prefetch third
    assert "stream of its own" in first, [a.text[:60] for a in f.actions]
    assert any(a.text.startswith("Copy from pinned") for a in f.actions[1:])  # pinning still told, after it


def test_a_gpu_bound_upload_says_what_each_fix_returns(loops) -> None:
    """By construction: pinned, the step is compute + copy (the copy still on the kernels' stream: 17 us back of
    4.42 ms); on a stream of its own it is the compute (417 us back).  The finding says both, and claims the
    second."""
    truth, f, step, fixed = loops["gpu"]
    hit = _RETURNS.search(f.summary)
    assert hit, f.summary
    pin_gain, more = (int(x) / 1000.0 for x in hit.groups())
    assert pin_gain == pytest.approx(step - fixed["pin"], abs=0.005)
    assert pin_gain + more == pytest.approx(step - fixed["stream"], abs=0.005)
    assert f.saving.ms_per_step == pytest.approx(step - fixed["stream"], abs=0.005)


def test_a_host_bound_upload_leads_with_pinning(loops) -> None:
    """The host paces the loop: pinning returns the host's hold in the copy, as the side stream does -- pinning first,
    no words of a copy on the critical path (a control: main led with pinning here too)."""
    truth, f, step, fixed = loops["host"]
    assert f.actions[0].text.startswith("Copy from pinned"), [a.text[:60] for a in f.actions]
    assert "gives back only" not in f.summary
    assert step - fixed["pin"] == pytest.approx(step - fixed["stream"], abs=0.005)


def test_a_host_bound_upload_claims_the_hold_once(loops) -> None:
    """Pinning returns the host's hold in the copy (its wait for the stream, then the copy: 0.73 ms by construction),
    not the copy's 400 us again on top of it -- the GPU runs the copy in time it idles either way.  main claimed
    1.15 ms: the copy's time and the idle the hold left after it."""
    truth, f, step, fixed = loops["host"]
    truth_gain = step - fixed["pin"]
    assert f.saving.ms_per_step == pytest.approx(truth_gain, rel=0.05), (f.saving.ms_per_step, truth_gain)
    assert not any(r["pool"] == "copies" and r["ms"] > 0 for r in f.saving.recovers)  # the copy is run either way


def test_non_blocking_says_what_it_frees() -> None:
    """``non_blocking=True`` frees the host; the copy on the kernels' stream still runs between them, so the fix no
    longer says the copy "overlaps with compute" (main's text)."""
    text = pytorch.NON_BLOCKING.text
    assert "overlaps with compute" not in text and "still runs between them" in text
