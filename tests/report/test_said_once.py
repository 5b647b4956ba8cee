"""One stretch of the step said by one finding (h37-review5: today's reports read as their user reads them).

``wild/vit_a4000_avg_batch`` (a training iteration on an RTX A4000, read whole as one guessed iteration) printed
the GPU's unrecorded idle twice: the unrecorded-idle warning's "for 19.0 ms of it no runtime call, op, range or OS
call of the capture covers the host's time", and host_sync's note "After the host's syncs and blocking copies the GPU
idles 15.4 ms ... while the host runs code the profiler did not record" -- a part of the same time, under the same
trace window "unrecorded host time, step 0 (19.0 ms)".  The property ``window-once``
(``tests/support/properties.window_once_problems``, run over every report by ``tests/report/test_properties.py``)
catches a window shown by two findings; the rules say the part inside its whole."""

from __future__ import annotations

import copy

import pytest

from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.serve.mcp_server import capture_advice_text
from tests.support.properties import (
    loop_once_problems,
    profiled_loops,
    report_violations,
    surface_loop_problems,
    surfaces_loop_problems,
    window_once_problems,
)
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions


@pytest.fixture(scope="module")
def vit() -> Report:
    """The kept ViT iteration's report (analysed once per test run: ``tests/support/report_store.py``)."""
    (s,) = [s for s in wild_sessions() if s.run == "vit_a4000_avg_batch"]
    return session_report(s)


def test_the_unrecorded_idle_after_syncs_is_said_inside_its_whole(vit):
    """The note's 15.4 ms is part of the warning's 18.9 ms (19.0 before h37-ledger69 booked the recorded runtime calls
    outside any op as the host's own work): one finding says both, and no window is shown twice."""
    (h,) = vit.hosts
    (whole,) = [f for f in h.findings if f.id.endswith("#unrecorded") and f.rule == "unexplained_idle"]
    assert not [f for f in h.findings if f.id.endswith("#unrecorded_host_share")]
    part_ms, whole_ms = 15.4, whole.metric.detail["unrecorded_ms"]
    assert whole_ms == pytest.approx(18.91, abs=0.05)
    assert f"{part_ms} ms of it follows the host's syncs and blocking copies" in " ".join(whole.summary.split())
    assert window_once_problems(h.host, h.findings) == []
    assert not [v for v in report_violations(vit) if v.startswith("window-once")]


def test_the_checker_sees_a_window_shown_by_two_findings(vit):
    """A second finding carrying the first's window is caught; its own window is not."""
    r = copy.deepcopy(vit)
    (h,) = r.hosts
    first, second = [f for f in h.findings if f.windows][:2]
    assert window_once_problems(h.host, h.findings) == []
    second.windows = second.windows + [copy.deepcopy(first.windows[0])]
    (problem,) = window_once_problems(h.host, h.findings)
    assert problem.startswith("window-once") and second.id in problem and first.id in problem


@pytest.mark.parametrize("run", ["torchrec_shampoo_128", "torchrec_a100_stalls"])
def test_the_held_works_window_is_named_as_its_finding(run):
    """The finding "The GPU holds work it was given, idle" says the host is not what the GPU waits for; its trace
    window read "waiting for unseen GPU work" (the host's wait, the other finding's words): it now names the GPU's
    hold."""
    (s,) = [s for s in wild_sessions() if s.run == run]
    (h,) = session_report(s).hosts
    (held,) = [f for f in h.findings if f.title == "The GPU holds work it was given, idle"]
    assert held.windows and all(w.label.startswith("GPU holding launched work") for w in held.windows)


@pytest.mark.parametrize(("run", "step"), [("cold_a100_alexnet", "model(batch)"),
                                           ("tp_rtx4090_cold_forward", "model(batch)")])
def test_a_cold_starts_capture_fix_loops_the_jobs_own_step(run, step):
    """A cold start's "Skip the first calls" looped ``run_one_step()  # a training step or a forward pass`` whatever the
    job, beside the job's own loop in its other capture fixes: it now loops the job's step (a forward pass's
    ``model(batch)``), and property ``loop-once`` holds."""
    (s,) = [s for s in wild_sessions() if s.run == run]
    (h,) = session_report(s).hosts
    (cold,) = [a for f in h.findings for a in f.actions if a.text.startswith("Skip the first calls")]
    assert step in cold.snippet and "run_one_step" not in cold.snippet
    assert loop_once_problems(h.host, h.findings) == []


def test_the_checker_sees_two_loops_in_one_report(vit):
    """Two capture fixes of one host looping different steps are caught."""
    r = copy.deepcopy(vit)
    (h,) = r.hosts
    looped = [a for f in h.findings for a in f.actions if "prof.step()" in (a.snippet or "")]
    assert looped and loop_once_problems(h.host, h.findings) == []
    other = copy.deepcopy(looped[0])
    other.snippet = other.snippet.replace("train_step(x, y)", "run_one_step()")
    h.findings[0].actions.append(other)
    (problem,) = loop_once_problems(h.host, h.findings)
    assert problem.startswith("loop-once") and "run_one_step()" in problem


def _wild(run: str) -> Report:
    (s,) = [s for s in wild_sessions() if s.run == run]
    return session_report(s)


@pytest.mark.parametrize("run", ["cold_a100_alexnet", "tp_rtx4090_cold_forward", "tp_rtx4090_two_ranks"])
def test_the_capture_advice_of_a_cold_forward_loops_its_forward_pass(run):
    """The capture advice of a job (what the MCP server's capture_advice and the tab show) was a text written for
    another loop: the MCP server printed the general ``train_step(x, y)`` loop under fixes looping ``model(batch)``,
    and the framework's own advice for a cold job looped ``run_one_step()``.  The report now carries the job's advice
    (``job.capture_advice``, composed for its tags), every surface prints it, and ``loop-once`` holds on each."""
    r = _wild(run)
    for h in r.hosts:
        assert set(profiled_loops(h.job["capture_advice"])) == {"model(batch)"}
        assert loop_once_problems(h.host, h.findings, h.job["capture_advice"]) == []
    assert set(profiled_loops(capture_advice_text(r))) == {"model(batch)"}
    assert surfaces_loop_problems(r) == []


def test_a_training_jobs_capture_advice_keeps_its_training_loop(vit):
    """Control: a training iteration's advice and the MCP server's loop its training step (warm: the steady
    schedule), as before."""
    (h,) = vit.hosts
    assert set(profiled_loops(h.job["capture_advice"])) == {"train_step(x, y)"}
    assert "schedule(wait=5, warmup=2, active=10" in h.job["capture_advice"]
    assert set(profiled_loops(capture_advice_text(vit))) == {"train_step(x, y)"}
    assert surfaces_loop_problems(vit) == []


def test_the_checker_sees_a_surface_that_loops_another_step(vit):
    """A surface (the text report, the MCP server's advice, the tab's payload) printing a loop the job's own fixes
    and advice do not run is caught; the same text with the job's loop is not."""
    text = capture_advice_text(vit)
    assert surface_loop_problems("mcp", text, vit) == []
    (problem,) = surface_loop_problems("mcp", text.replace("train_step(x, y)", "run_one_step()"), vit)
    assert problem.startswith("loop-once: mcp") and "run_one_step()" in problem
    r = copy.deepcopy(vit)
    r.hosts[0].job["capture_advice"] = r.hosts[0].job["capture_advice"].replace("train_step(x, y)", "model(batch)")
    (problem,) = loop_once_problems(r.hosts[0].host, r.hosts[0].findings, r.hosts[0].job["capture_advice"])
    assert "the job's capture advice" in problem
