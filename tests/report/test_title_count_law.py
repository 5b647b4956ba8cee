"""``title-count`` (h37-words32; ``tests/support/properties.py``): a launch-bound title's count is the count its
finding cites.  h37-auditleft31 titled a step of a few kernels "the GPU waits for the host before each of its few
kernels" with no law over every report to keep "few" and "many" to the numbers; this one reads the summary's count
(else the metric's) against ``launch_bound.step_calls``, the count the step-level diagnosis calls a few.  It holds on
the real captures of both titles and fails on each title put beside the other's count.
"""

from __future__ import annotations

import copy

import pytest

from tb_gpu_advisor.model.schema import Finding, Report
from tests.support.paths import FIXTURES
from tests.support.properties import report_violations, title_count_problems
from tests.support.run_report import run_report

_MANY = "Launch-bound: many small kernels, the GPU waits for the host to launch them"
_FEW = "Launch-bound: the GPU waits for the host before each of its few kernels"
#: real captures of a few kernels a step (3 and 4, read by hand in h37-auditleft31) and of many (14 and 60)
_FEW_RUNS = [(FIXTURES / "wild", "lazy_first_launch_t4"), (FIXTURES / "waits", "event_sync_a100")]
_MANY_RUNS = [(FIXTURES / "wild", "amd_mi250"), (FIXTURES / "wild", "amd_mi300x")]


def _launch(r: Report) -> tuple[str, Finding]:
    ((host, f),) = [(h.host, f) for h in r.hosts for f in h.findings if f.rule == "launch_bound"]
    return host, f


@pytest.mark.parametrize("where, run", _FEW_RUNS + _MANY_RUNS)
def test_the_law_holds_on_real_titles(where, run):
    host, f = _launch(run_report(where, run))
    assert f.title in (_FEW, _MANY), f.title
    assert title_count_problems(host, [f]) == []


@pytest.mark.parametrize("where, run, other",
                         [(w, r, _MANY) for w, r in _FEW_RUNS] + [(w, r, _FEW) for w, r in _MANY_RUNS])
def test_the_other_titles_count_is_caught(where, run, other):
    """Each title put beside the other's count breaks it: "many small kernels" over 3 and 4 kernels a step (the
    title main printed before h37-auditleft31), "its few kernels" over 14 and 60 -- in the law and in the walk over
    the whole report."""
    r = copy.deepcopy(run_report(where, run))
    host, f = _launch(r)
    f.title = other
    assert any(v.startswith("title-count") for v in title_count_problems(host, [f]))
    assert any(v.startswith("title-count") for v in report_violations(r))
