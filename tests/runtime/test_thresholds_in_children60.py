"""A worker child of the parallel paths analyses at its parent's thresholds (h37-speed60).

A forkserver or spawn child imports ``common.thresholds`` afresh: an ``override`` in force in the parent was lost
there, while the report cache keyed the report on it (``thresholds.tuned``, h37-speed59) -- so a pool of workers or a
limited child stored the table's report under the changed threshold's key.

Truth by construction: ``severity.critical_min_saving`` is the share of the step under which a finding is at most a
warning; at 0.99 no finding of a job whose step is mostly its own work can stay critical, and in this process
(``jobs=1``) none does.  Every parallel path must give the same report as this process."""

from __future__ import annotations

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.common import thresholds
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.runtime import isolation
from tb_gpu_advisor.runtime.session import analyze_session_parallel, compute_json

CHANGE = {"severity.critical_min_saving": 0.99}


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    """2 nodes x 8 GPUs whose all-reduce is slow: two host files, so the pool and the limited children run."""
    logdir = str(tmp_path_factory.mktemp("job"))
    tt.write_run(logdir, "ddp_2x8_slow_link", steps=6)
    (session,) = discover(logdir)
    return session


def _severities(report) -> list[tuple[str, str]]:
    return sorted((f.rule, f.severity) for f in report.findings)


def test_an_override_that_changes_a_severity_reaches_every_parallel_path(job):
    table = analyze_session_parallel(job, jobs=1)
    assert any(s == "critical" for _, s in _severities(table))  # the control: at the table's values, criticals
    with thresholds.override(**CHANGE):
        here = analyze_session_parallel(job, jobs=1)
        pool = analyze_session_parallel(job, jobs=2)  # BASE: the table's criticals
        limited = analyze_session_parallel(job, jobs=2, limits=isolation.Limits(None, 120))  # BASE: the same
        tab = Report.from_json(compute_json(job, list(job.hosts), progress=lambda *a: None, isolate=True))
    assert not any(s == "critical" for _, s in _severities(here))
    for report in (pool, limited, tab):
        assert _severities(report) == _severities(here)


def test_adopt_takes_the_table_changed_by_the_values_only():
    name = "severity.critical_min_saving"
    table = thresholds.THRESHOLDS[name].value
    try:
        with thresholds.override(**{"severity.warning_min_saving": 0.5}):
            thresholds.adopt(CHANGE)  # what a child does: the table, changed by the parent's values alone
            assert thresholds.tuned() == CHANGE
        thresholds.adopt({})
        assert thresholds.tuned() == {} and thresholds.T(name) == table
        with pytest.raises(KeyError, match="no.such"):
            thresholds.adopt({"no.such": 1.0})
    finally:
        thresholds.adopt({})
