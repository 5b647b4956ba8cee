"""A range that bounds a step records no host work of its own (h37-left52).

Truth by construction: ``synthetic.nsysexport.NsysJob(sync=True, untraced_ms=3)`` -- a user NVTX range per step (the
step source), an ``.item()`` sync in each, then 3 ms of host code no event records, the GPU idle.  On main the step's
own NVTX range counted as recorded host time, so ``host_sync`` claimed the untraced 3 ms as its drained queue (2.72 ms
of each step) while ``step_gaps`` called the same stretch unrecorded (3.02 ms): one stretch claimed twice.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.properties import claims_once_problems
from tests.support.report_store import session_report

UNTRACED_MS = 3.0


def _run(tmp_path, untraced_ms: float):
    path = tmp_path / "untraced.sqlite"
    nx.write(str(path), nx.NsysJob(sync=True, untraced_ms=untraced_ms))
    m = host_metrics(read(SimpleNamespace(host="h", path=str(path), format="nsys")))
    return m, evaluate(m)


def test_untraced_code_inside_a_step_range_is_unrecorded_not_the_syncs(tmp_path):
    """Fails on main: host_sync's idle 2.72 ms (critical), the unrecorded part 0.002 ms."""
    m, findings = _run(tmp_path, UNTRACED_MS)
    assert m.steps.source == "nvtx_range"
    assert m.syncs.gpu_idle_ms_per_step < 0.1 * UNTRACED_MS
    assert m.syncs.unrecorded_ms_per_step > 0.85 * UNTRACED_MS
    assert not [f for f in findings if f.rule == "host_sync" and f.severity != "info"], \
        [(f.rule, f.severity, f.summary) for f in findings]


def test_without_untraced_code_the_sync_keeps_its_idle(tmp_path):
    """Control: no untraced stretch -- the sync's own idle (the host's launch after it) is still the sync's; unrecorded
    is only the writer's fixed 10 us of host after each step's ``aten::item`` (``nsysexport``: ``t += 10 * us``), every
    step's -- BASE read 9 us, the last kept step's tail into the unkept step dropped (h37-probe47e)."""
    m, _ = _run(tmp_path, 0.0)
    assert m.syncs.calls_per_step == 1.0
    assert m.syncs.unrecorded_ms_per_step == pytest.approx(0.010, abs=1e-4)


def test_no_two_findings_claim_the_untraced_stretch(tmp_path):
    """Fails on main: step_gaps recovered 3.02 ms of host time and host_sync 2.71 ms of it, one stretch of ~3 ms the
    ledger holds once (their overlap note said they overlap, not that both claimed the same time).  Built so that no
    two causes share a stretch: no overlap note excuses a double claim."""
    _run(tmp_path, UNTRACED_MS)
    (s,) = discover(str(tmp_path))
    r = session_report(s)
    (h,) = [h for h in r.hosts if h.error is None]
    assert [f for f in h.findings if f.saving is not None], "nothing claimed: the property would hold vacuously"
    assert not claims_once_problems(h.host, h.findings, h.breakdown_ms, noted=False)
