"""A window without GPU work times no GPU step, marked or not: one quantity, one value (issue #37, h37-tidy29).

``tests/fixtures/h200_jobs/torch_cpu_only`` (our own capture: a small CNN trained on the CPU of an H200 host,
``ProfilerActivity.CPU`` only).  Read by hand off the raw events: 774 ``cpu_op`` and 84 ``fwdbwd`` events, 18 user
annotations, no kernel, copy, memset or CUDA runtime call; 6 ``ProfilerStep#2..7`` of 87.80, 87.92, 87.96, 87.96,
87.97 and 92.01 ms; ``deviceProperties`` lists the unused NVIDIA H200.  So the window holds no GPU work, and its marks
time the host's loop: no GPU step.

Main said it two ways at once: every surface's title "no step: the window holds no GPU work", while its JSON held 4 step
rows of ~88 ms (host compute 86.05 ms, other 1.94), a ledger of them and the cards' ``avg_step_ms`` 87.99 -- the
step ``metrics.compute.gpu_step_timed`` kept for a marked window of kind ``no_gpu``.  Now the metrics stage asks the
one property (``job.kind.Kind.times_gpu_step``) and the report's readers its one JSON reader
(``report.verdict.no_gpu_step``); the steps block still says how the window was read (4 of 6 ``ProfilerStep`` marks).
"""

from __future__ import annotations

import dataclasses
import os
from types import SimpleNamespace

from tb_gpu_advisor.report import render
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import FIXTURES
from tests.support.properties import no_gpu_session_step_problems, no_gpu_step_problems

TRACE = FIXTURES / "h200_jobs" / "torch_cpu_only" / "vm_454.1795791256050204608.pt.trace.json.gz"
NO_STEP = "no step: the window holds no GPU work"


def _report():
    return analyze_session("torch_cpu_only", "s", [SimpleNamespace(host="vm_454", path=str(TRACE), format="kineto",
                                                                   size=os.path.getsize(TRACE))])


def test_a_cpu_only_window_with_marked_steps_times_no_gpu_step_anywhere():
    report = _report()
    (host,) = report.hosts
    assert host.job["kind"] == "no_gpu", host.job
    # main: 4 step rows of ~88 ms, a mean step of 87.99 ms and the cards' avg_step_ms under the title "no step"
    assert len(host.step_rows) == 0 and host.mean_step_ms() is None, (len(host.step_rows), host.mean_step_ms())
    assert not host.achievable and not report.achievable, (host.achievable, report.achievable)
    assert all(c.detail.get("avg_step_ms") is None for c in host.headline if isinstance(c.detail, dict))
    assert no_gpu_step_problems("vm_454", host) == [] and no_gpu_session_step_problems(report) == []
    # how the window was read stays: the host's loop, 4 of its 6 `ProfilerStep` marks kept
    assert (host.steps["source"], host.steps["count"], host.steps["found"]) == ("profiler_step", 4, 6), host.steps


def test_every_surface_says_no_step():
    report = _report()
    for name, text in (("text", render.to_text(report, top=None)), ("markdown", render.to_markdown(report, top=None))):
        head = text.splitlines()[0] if name == "text" else text.split("\n\n")[1]
        assert NO_STEP in head and "step 8" not in head, (name, head)


def test_the_law_holds_a_marked_cpu_only_window_to_no_step():
    """The law can fail here: the same host with main's step put back in the account."""
    (host,) = _report().hosts
    kept = dataclasses.replace(host, achievable={"step_ms": 87.991, "achievable_step_ms": 87.991})
    assert no_gpu_step_problems("vm_454", kept) == [
        "no-gpu-step: vm_454: a mean step of 87.99 ms in a window without GPU work",
        "no-gpu-step: vm_454: the account holds a step of 87.99 ms in a window without GPU work"]
