"""A start-up-only window promises no step time (issue #37 class 1, h37-startonly).

SGLang's decode-graph capture at start-up (``wild/sglang_mi300x_capture``, MI300X: one `ProfilerStep#134` of 33.7 ms,
95% of it the graph capture and its instantiation) read "If every fix lands: step ~1.55 ms instead of 33.7 ms"; vLLM's
(``wild/vllm_mi300x_capture``) "pass ~2.00 ms instead of 55.2 ms".  The cold start's saving was subtracted from a
window that holds no steady step, so the line promised a step time nothing measured.  The wrong assumption: that the
kept step is a step of the job whatever it holds; the title already knew it was not ("start-up only: one pass, no
steady step").  Both now ask one account, ``report.verdict.start_up_only``; the property ``no-promise``
(tests/support/properties.py) walks every report.  Control: a capture of one steady engine step
(``wild/vllm_mi300x_decode``) keeps its promise.
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


def test_the_law_catches_a_promise(monkeypatch: pytest.MonkeyPatch) -> None:
    """The property fails on what main printed: the start-up window's line and MCP step restored."""
    import tb_gpu_advisor.serve.mcp_server as mcp

    r = _report("sglang_mi300x_capture")
    monkeypatch.setattr(render, "achievable_text", lambda _r: "If every fix lands: step ~1.55 ms instead of 33.7 ms.")
    monkeypatch.setattr(mcp, "start_up_only", lambda _r: False)
    got = start_up_promise_problems(r)
    assert {p.split(":")[1].strip() for p in got} == {"text", "markdown", "tab", "mcp summary"}, got
