"""A start-up-only window promises no step time (issue #37 class 1, h37-startonly).

SGLang's decode-graph capture at start-up (``wild/sglang_mi300x_capture``, MI300X: one `ProfilerStep#134` of 33.7 ms,
95% of it the graph capture and its instantiation) read "If every fix lands: step ~1.55 ms instead of 33.7 ms"; vLLM's
(``wild/vllm_mi300x_capture``) "pass ~2.00 ms instead of 55.2 ms".  The cold start's saving was subtracted from a
window that holds no steady step, so the line promised a step time nothing measured.  The wrong assumption: that the
kept step is a step of the job whatever it holds; the title already knew it was not ("start-up only: one pass, no
steady step").  Both now ask one account, ``report.verdict.start_up_only``; the property ``no-promise``
(tests/support/properties.py) walks every report.  Control: a capture of one steady engine step
(``wild/vllm_mi300x_decode``) keeps its promise.

h37-startjson: the JSON report itself still held the number (``achievable.achievable_step_ms`` 1.554 on SGLang's),
made by ``rules.savings.achievable`` and hidden again by each reader.  Now the report's assembly decides once
(``report.verdict.no_promise_reason``, asked by ``report.build`` per host and ``report.merge`` per session): the
account holds no achievable step and says why (``achievable.reason`` "start_up_only"), and the text, the tab and the
MCP summary follow that value.
"""

from __future__ import annotations

import json

import pytest

from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.report import render
from tb_gpu_advisor.serve.mcp_server import summary_json
from tests.support.cli_report import cli_report
from tests.support.paths import FIXTURES
from tests.support.properties import start_up_promise_problems

WILD = FIXTURES / "wild"


def _report(name: str) -> Report:
    if not (WILD / name).is_dir():
        pytest.skip("wild fixture absent")
    return Report.from_dict(cli_report(WILD / name))


@pytest.mark.parametrize("name", ["sglang_mi300x_capture", "vllm_mi300x_capture"])
def test_start_up_window_promises_no_step(name: str) -> None:
    r = _report(name)
    text = render.to_text(r, top=None)
    assert "start-up only: one pass of" in text.splitlines()[0]
    line = render.achievable_text(r)
    assert line.startswith("If every fix lands: no step time to promise") and " ~" not in line, line
    assert "instead of" not in text and "instead of" not in render.to_markdown(r, top=None)
    assert json.loads(summary_json(r))["achievable_step_ms"] is None
    assert start_up_promise_problems(r) == []


@pytest.mark.parametrize("name", ["sglang_mi300x_capture", "vllm_mi300x_capture"])
def test_start_up_window_json_holds_no_step(name: str) -> None:
    """The JSON a user's client reads holds no achievable step either, and says why: the session's and the host's
    account (main: 1.554 ms on SGLang's 33.7 ms graph capture, 9.05 ms on vLLM's 55.2 ms pass)."""
    if not (WILD / name).is_dir():
        pytest.skip("wild fixture absent")
    d = cli_report(WILD / name)
    for a in [d["achievable"]] + [h["achievable"] for h in d["hosts"]]:
        assert a["step_ms"] > 0 and a["findings"], a  # the window was timed and its findings counted
        assert a["achievable_step_ms"] is None and a["reason"] == "start_up_only", a
        assert 0 < a["recoverable_ms"] <= a["step_ms"], a  # what the fixes recover of the pass is measured: kept


def test_the_capture_advice_is_said_once() -> None:
    """"Too few engine steps" beside the cold start gives no second advice: its fix points to the cold start's."""
    r = _report("sglang_mi300x_capture")
    few = [f for f in r.findings if f.title.startswith("Too few")]
    cold = [f for f in r.findings if f.rule == "cold_start"]
    assert cold and cold[0].actions
    assert all(f.actions and f"under \"{cold[0].title}\"" in f.actions[0].text for f in few)


def test_steady_step_keeps_its_promise() -> None:
    """Control: one engine step of steady decode (SGLang on a B300, the step its graph replays) keeps its line."""
    r = _report("sglang_b300_decode")
    assert "start-up only" not in render.to_text(r, top=None).splitlines()[0]
    line = render.achievable_text(r)
    assert " ~" in line and "instead of" in line, line
    assert json.loads(summary_json(r))["achievable_step_ms"] is not None
    for a in [r.achievable] + [h.achievable for h in r.hosts]:
        assert a["achievable_step_ms"] is not None and "reason" not in a, a


def test_the_law_catches_a_promise() -> None:
    """The property fails on what main's JSON held: the start-up window's account with its number and no reason --
    every surface then follows it and promises the step, the JSON first."""
    r = _report("sglang_mi300x_capture")
    for h in [r] + list(r.hosts):
        h.achievable = {k: v for k, v in h.achievable.items() if k != "reason"} | {"achievable_step_ms": 1.554}
    got = start_up_promise_problems(r)
    assert {p.split(":")[1].strip() for p in got} == {"text", "markdown", "tab", "mcp summary", "json",
                                                       "json host " + r.hosts[0].host}, got


def test_the_law_catches_a_withheld_steady_step() -> None:
    """The converse: an account that withholds the step of a steady window (the header reads its step) breaks it."""
    r = _report("sglang_b300_decode")
    r.achievable = dict(r.achievable, achievable_step_ms=None, reason="start_up_only")
    assert [p for p in start_up_promise_problems(r) if p.startswith("no-promise: json:")], r.achievable


def test_a_first_call_in_a_diluted_window_is_start_up_only() -> None:
    """Thunder's first call of a loss forward + backward (``wild/nvfuser_h200_first_call``): at most one iteration,
    27% of its one 3.19 s pass nvFuser's compilation and module loading, the rest Thunder's unrecorded first-call host
    work -- a cold start by its truth.  The window's phase read "mixed" (12%: 5.8 s of imports before the first
    kernel fill it), so main titled it "one pass of 3.19 s, no step marked" and promised "pass ~2.32 s instead of
    3.19 s".  The wrong assumption: that the window's phase alone tells whether the one pass kept is the start-up; the
    phase's bar (``job.warmup_share``) now applies to the pass too (``rules.cold_start.pass_is_start_up``,
    ``report.verdict.start_up_window``)."""
    r = _report("nvfuser_h200_first_call")
    assert (r.hosts[0].job or {}).get("phase") == "mixed"  # the window's reading is unchanged
    assert "start-up only: one pass of 3.19 s, no steady step" in render.to_text(r, top=None).splitlines()[0]
    assert r.achievable["achievable_step_ms"] is None and r.achievable["reason"] == "start_up_only", r.achievable
    (cold,) = [f for f in r.findings if f.rule == "cold_start"]
    assert "No steady step is left to analyse" in " ".join(cold.summary.split())
    assert start_up_promise_problems(r) == []


@pytest.mark.parametrize("name, line", [
    # a pass its ranges bound after the start-up (~3.43 ms until h37-idle64 capped its GPU-side savings by the
    # critical path: what the pass promises moved, not that it promises)
    ("cold_a100_alexnet", "pass ~4.50 ms instead of 79.7 ms"),
    ("cuda_reduce_baseline", "pass ~45.9 ms instead of 1.05 s"),  # a mixed window, its one pass holding no start-up
])
def test_a_pass_after_the_start_up_keeps_its_promise(name: str, line: str) -> None:
    """Controls: one pass whose own ledger holds no one-time cost is measured work, whatever the window holds."""
    r = _report(name)
    assert "start-up only" not in render.to_text(r, top=None).splitlines()[0]
    assert line in render.achievable_text(r)
    assert r.achievable["achievable_step_ms"] is not None and "reason" not in r.achievable


def test_a_diff_side_follows_the_account() -> None:
    """``report diff``'s side reads the host's account: a start-up-only capture's side holds no achievable step
    (main: 1.554 ms on SGLang's graph capture), a steady one's keeps its number (control)."""
    from tb_gpu_advisor.report.diff import diff_reports

    cold, steady = _report("sglang_mi300x_capture"), _report("sglang_b300_decode")
    d = diff_reports(cold, steady)
    assert d.base.achievable_step_ms is None
    assert d.new.achievable_step_ms == steady.hosts[0].achievable["achievable_step_ms"] is not None
