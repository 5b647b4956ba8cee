"""One account in words: a window without GPU work that marks its loop says the loop's count and time on the CPU,
booking no GPU step; and the report gives why a host times no GPU step, which the tab reads (issue #37, h37-tidy30).

Wrong assumptions on main (8e587ba8):
1. *A host that times no GPU step has no loop to time*: ``h200_jobs/torch_cpu_only`` (a small CNN trained on the CPU
   of an H200 host) keeps 4 of its 6 ``ProfilerStep`` marks, each ~88 ms -- by hand, ``ProfilerStep#3`` starts
   351.965 ms before ``ProfilerStep#7`` (87.991 ms a step, start to start; the marks' own lengths 87.92-87.97 ms) --
   but its job line said "no GPU work" and nothing of the loop: only the steps' note and the evidence named it.
2. *The tab can tell a host that times no GPU step from the job's keys*: ``views.js`` ``noStepTimed`` re-derived
   ``report.verdict.no_gpu_step`` (a third reason meant two edits); the report now says why (``job.no_gpu_step``).
"""

from __future__ import annotations

import os
from types import SimpleNamespace

from synthetic import randjobs
from tb_gpu_advisor.job.kind import NO_GPU_STEP
from tb_gpu_advisor.report import render
from tb_gpu_advisor.report.verdict import NO_STEP_WHY, no_gpu_step_reason
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.cli_report import first_report
from tests.support.paths import FIXTURES
from tests.support.random_jobs import host_loop_problems, report_of

CPU_ONLY = FIXTURES / "h200_jobs" / "torch_cpu_only"
TRACE = CPU_ONLY / "vm_454.1795791256050204608.pt.trace.json.gz"
TRACING_OFF = FIXTURES / "wild" / "tracing_off_nvtx_a10_train" / "nvtx_result.sqlite"
LOOP_END = FIXTURES / "wild" / "loop_ended_a100_gnn"
LOOP_WORDS = "its loop on the CPU: 4 marked steps of 88.0 ms on average, no GPU step"


def _cpu_only_report():
    return analyze_session("torch_cpu_only", "s", [SimpleNamespace(host="vm_454", path=str(TRACE), format="kineto",
                                                                   size=os.path.getsize(TRACE))])


def test_the_cpu_loop_is_timed_in_the_json_and_books_no_gpu_step():
    rep = first_report(CPU_ONLY)
    (host,) = rep["hosts"]
    job = host["job"]
    assert job["host_loop"] == {"steps": 4, "step_ms": 87.991}, job.get("host_loop")
    assert job["no_gpu_step"] == "the window holds no GPU work"
    assert host["step_rows"] == [] and not host["achievable"]  # still no GPU step, no ledger
    assert rep["display"]["hosts"][0]["host_loop"] == "4 marked steps of 88.0 ms on average"


def test_the_job_line_says_the_loop_in_text_and_markdown():
    report = _cpu_only_report()
    (host,) = report.hosts
    assert host.job["summary"].endswith(LOOP_WORDS + "."), host.job["summary"]
    for text in (render.to_text(report, top=None), render.to_markdown(report, top=None)):
        assert LOOP_WORDS in " ".join(text.split()), text[:600]
        assert "no step: the window holds no GPU work" in text  # the title as before


def test_a_generated_cpu_loop_reads_its_period_by_construction():
    """A Kineto job of host ops only (``no_gpu``), 4 marked steps alike: ``host_loop`` is their period, the writer's
    start to start; the law reads it, and fails where the job block does not time the loop (main's)."""
    job = randjobs.kineto_job(seed=31, no_gpu=True, steps=4, layers=2, loader_us=300.0)
    randjobs.TRUTH.pop(job.seed, None)
    report = report_of(job)
    truth = randjobs.TRUTH[job.seed]
    (host,) = report.hosts
    assert host.job["host_loop"]["steps"] == 4 and abs(host.job["host_loop"]["step_ms"] - truth["host_step_ms"]) < 1e-3
    assert host_loop_problems(truth, host.job) == []
    assert host_loop_problems(truth, {**host.job, "host_loop": None}) == [
        f"truth: a loop on the CPU of {truth['host_step_ms']:.4g} ms a step, which the job block does not time"]


def test_hosts_that_time_a_gpu_step_or_whose_gpu_went_unrecorded_get_no_loop():
    """Controls: a GPU job says no reason and no loop; the tracing-off export says why it times no GPU step (the
    capture did not record the GPU's work) and times no loop on the CPU -- its iterations ran the GPU, unseen; the
    loop's end (``wild/loop_ended_a100_gnn``: kind ``no_gpu``, 1 mark of 0.54 ms) has no loop either."""
    (gpu,) = report_of(randjobs.kineto_job(seed=32)).hosts
    assert "no_gpu_step" not in gpu.job and "host_loop" not in gpu.job
    (off,) = first_report(TRACING_OFF)["hosts"]
    assert off["job"]["no_gpu_step"] == "the capture did not record the GPU's work" and "host_loop" not in off["job"]
    # the loop's end (kind no_gpu): its one mark holds the fetch that found the input exhausted -- no loop to time
    (end,) = first_report(LOOP_END)["hosts"]
    assert end["job"]["kind"] == "no_gpu" and end["job"]["marks_no_job_step"] and "host_loop" not in end["job"], end["job"]


def test_every_reason_a_window_times_no_gpu_step_has_its_words():
    """One table of reasons: each key ``job.kind.NO_GPU_STEP`` can set (and the kind ``no_gpu``) reads as words."""
    for key in NO_GPU_STEP.values():
        assert no_gpu_step_reason({"kind": "training", key: True}) == NO_STEP_WHY[key]
    assert no_gpu_step_reason({"kind": "no_gpu"}) == NO_STEP_WHY["no_gpu"]
    assert no_gpu_step_reason({"kind": "no_gpu", "gpu_unrecorded": True}) == NO_STEP_WHY["gpu_unrecorded"]
    assert no_gpu_step_reason({"kind": "training"}) == ""
