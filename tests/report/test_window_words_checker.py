"""The checker of the words a report says of its window (``tests/support/contradictions.window_words_problems``,
h37-words20) can fail: it still matches the words it was written against (h37-review21).

The property test runs it over every report of the walk and asserts it finds nothing; a checker whose patterns
stopped matching after the report's words changed would pass that test forever.  Here, on a real capture that is both
one unmarked pass and hostless (``wild/rocprof_aiter_mi355x``: a rocprof kernel trace of aiter's kernels on an
MI355X, read as one pass), the report as it is holds none of the problems, and each wording main printed -- planted
back into a copy of the same report -- is caught by the part of the checker written for it.  The walk's own premise
(it holds a one-pass and a hostless host at all) is asserted beside the property in ``test_properties``' spirit."""

from __future__ import annotations

import copy

import pytest

from tb_gpu_advisor.model.schema import Report
from tests.support.contradictions import _hostless, _one_unmarked_pass, window_words_problems
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions

RUN = "rocprof_aiter_mi355x"


@pytest.fixture(scope="module")
def aiter() -> Report:
    (s,) = [s for s in wild_sessions() if s.run == RUN]
    return session_report(s)


def _planted(report: Report, plant) -> list[str]:  # noqa: ANN001 - a callable on the copy's first host
    r = copy.deepcopy(report)
    plant(r.hosts[0])
    return window_words_problems(r)


def test_the_capture_is_the_checkers_case_and_reads_clean(aiter: Report) -> None:
    (h,) = aiter.hosts
    assert _one_unmarked_pass(h) and _hostless(h), "premise: one unmarked pass, nothing of the host recorded"
    assert any(f.windows for f in h.findings), "premise: a finding shows trace windows to check"
    assert window_words_problems(aiter) == []


def test_a_numbered_step_in_a_one_pass_window_is_caught(aiter: Report) -> None:
    def plant(h) -> None:  # noqa: ANN001
        w = next(w for f in h.findings for w in f.windows)
        w.label = w.label.replace("the pass", "step 0")  # main's "unrecorded host time, step 0"
    assert any("a numbered step in a one-pass window" in p for p in _planted(aiter, plant))


def test_a_step_in_a_one_pass_title_is_caught(aiter: Report) -> None:
    def plant(h) -> None:  # noqa: ANN001
        h.findings[0].title = "Host-bound: the GPU waits for the host's own work inside the step"
    got = _planted(aiter, plant)
    assert any("a step in a one-pass finding's title" in p for p in got)
    assert any("host time claimed with no host recorded" in p for p in got)  # the title claims host work too


def test_host_time_in_a_hostless_window_is_caught(aiter: Report) -> None:
    def plant(h) -> None:  # noqa: ANN001
        w = next(w for f in h.findings for w in f.windows)
        w.label = "unrecorded host time, the pass"
    assert any("host time claimed with no host recorded" in p for p in _planted(aiter, plant))


def test_a_pass_share_said_again_of_the_window_is_caught(aiter: Report) -> None:
    def plant(h) -> None:  # noqa: ANN001
        h.findings[0].summary += " 99.9% of the 432.6 ms pass. That is 99.9% of the 432.6 ms capture window."
    assert any("the pass's share said again of the capture window" in p for p in _planted(aiter, plant))


def test_per_step_in_a_one_pass_card_is_caught(aiter: Report) -> None:
    def plant(h) -> None:  # noqa: ANN001
        card = next(m for m in h.headline if m.meaning)
        card.meaning = "3 matmul/conv kernels ran per step and GPU (1.2 ms) but no op recorded their shapes"
    assert any("'per step' in a one-pass card" in p for p in _planted(aiter, plant))


def test_dispatch_beside_a_possible_first_call_is_caught(aiter: Report) -> None:
    def plant(h) -> None:  # noqa: ANN001
        h.findings[0].summary += (" (the dispatch of its 2 top-level op calls: 1.39 ms on the host) A note, not a "
                                  "problem: this host time may be the first call's one-time cost.")
    assert any("'dispatch' for the host time of what may be a first call" in p for p in _planted(aiter, plant))
