"""A window that times no GPU step shows no steady state: the report's phase says "not timed", not "steady".

"steady" is a claim about the GPU steps a window times -- that they are the program's steady state, not its start.
A window with no GPU work (a model left on the CPU, a gloo-only run) or whose GPU side went unrecorded times none:
no one-time cost read there is no steady state shown.  h37-steady35's *Left* 1: ``wild/cpu_only_gloo``,
``wild/lightning_cpu_fit`` and ``wild/llm_startup_window`` read phase "steady".  A one-time cost read keeps its
phase; the rules keep the job stage's own reading.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.job.phase import NOT_TIMED, OneTime, untimed_phase
from tb_gpu_advisor.runtime.pipeline import analyze_session, host_metrics, host_report
from tests.support.paths import REPO
from tests.support.wild_hosts import wild_host as _host


@pytest.mark.parametrize("run", ["cpu_only_gloo"])
def test_a_real_window_of_no_gpu_step_claims_no_steady_state(run):
    """Before steady36: phase "steady" (no GPU work in the window, one kept ``ProfilerStep`` of 210 ms: nothing
    repeats).  Here "not timed", said in the evidence and on the job line; the job stage's own reading stays
    "steady" (no cold-start finding)."""
    h = _host(run)
    job = h["job"]
    assert job["no_gpu_step"] == "the window holds no GPU work"
    assert job["phase"] == NOT_TIMED, job["phase"]
    assert "times no GPU step" in job["phase_evidence"]
    assert f"phase {NOT_TIMED}" in job["summary"]
    assert not any(f["rule"] == "cold_start" for f in h["findings"])


def test_by_construction_a_window_of_no_gpu_step_is_not_timed(tmp_path):
    """The generator's loop's end (``write_loop_ended``: one marked step holding the fetch that found the input
    exhausted, no GPU work, no one-time cost by construction) reads "not timed" (main: "steady"); the generator's
    healthy bf16 loop, its GPU steps timed, keeps "steady"."""
    path = tmp_path / "loop_ended.json"
    tt.write_loop_ended(str(path))
    job = host_report(host_metrics(read_trace(str(path))), 0).job
    assert job["one_time_ms"] == 0.0 and job.get("no_gpu_step")
    assert job["phase"] == NOT_TIMED
    path = tt.write_run(str(tmp_path), "healthy_bf16", steps=6)[0]
    job = host_report(host_metrics(read_trace(path)), 0).job
    assert "no_gpu_step" not in job and job["phase"] == "steady"


@pytest.mark.parametrize("program_call,phase", [(None, "mixed"), ("cudaMalloc", "warm-up")])
def test_by_construction_a_one_time_cost_read_keeps_its_phase(tmp_path, program_call, phase):
    """The control: a window of the profiler's own CUDA calls (``write_profiler_calls_only``), no GPU work, whose
    host calls show one-time costs (the device query 3.2 ms; a model's first ``cudaMalloc`` 110 ms creating the
    context) keeps the phase those costs give: they are read from the host, GPU records or not."""
    path = tmp_path / "calls.json"
    tt.write_profiler_calls_only(str(path), program_call)
    job = host_report(host_metrics(read_trace(str(path))), 0).job
    assert job.get("no_gpu_step") and job["one_time_ms"] > 0
    assert job["phase"] == phase


def _nsys_host(name: str) -> dict:
    """The report's host block of one ``tests/fixtures/nsys_windows`` export, with the report's findings in it."""
    path = os.path.join(REPO, "tests", "fixtures", "nsys_windows", name)
    hosts = [SimpleNamespace(host="h0", path=path, format="nsys", size=os.path.getsize(path))]
    rep = analyze_session("w", "s", hosts).to_dict()
    (host,) = rep["hosts"]
    return {**host, "findings": rep["findings"]}


def test_a_real_cpu_loop_whose_steps_repeat_is_steady():
    """``nsys_windows/nvtx_only_centerformer``: NVTX ranges only, no GPU work, but 71 kept iterations of a repeated
    NVTX range (98.6-142.0 ms each) -- the loop's steady state, timed on the CPU.  Main d78f7d52: phase "not timed".
    Here "steady", the evidence naming the 71 CPU-timed steps and what marked them, the job line saying the loop's
    steps were timed on the CPU."""
    job = _nsys_host("nvtx_only_centerformer.sqlite")["job"]
    assert job["no_gpu_step"] == "the window holds no GPU work"
    assert job["phase"] == "steady", job["phase"]
    assert "the loop's 71 steps, timed on the CPU by a repeated NVTX range, repeat" in job["phase_evidence"]
    assert "phase steady: no GPU step is timed, but the loop's steps, timed on the CPU, repeat" in job["summary"]


def test_a_real_short_cpu_loop_whose_steps_repeat_is_steady():
    """``wild/lightning_cpu_fit``: 3 kept iterations of 21.0-22.8 ms on the CPU, no GPU work.  Main d78f7d52: "not
    timed" (steady36 asked only whether a GPU step was timed).  Here "steady", the evidence the 3 CPU-timed steps."""
    h = _host("lightning_cpu_fit")
    job = h["job"]
    assert job["phase"] == "steady", job["phase"]
    assert "the loop's 3 steps, timed on the CPU by the training loop's iteration ranges, repeat" in job["phase_evidence"]
    assert not any(f["rule"] == "cold_start" for f in h["findings"])


@pytest.mark.parametrize("lengths,steady", [([], False), ([120.0], False), ([100.0, 110.0, 98.0], True),
                                            ([1.0, 4000.0], False), ([0.0, 5.0], False)])
def test_by_construction_only_repeating_cpu_turns_show_a_steady_state(lengths, steady):
    """Truth by construction: no turn or one turn shows nothing repeating; turns within ``job.uneven_turns_ratio``
    repeat; 0-4 s sleeps do not.  Main d78f7d52: ``untimed_phase`` takes no loop (TypeError)."""
    phase = OneTime("steady", "no one-time costs")
    got, evidence = untimed_phase(phase, lengths, "by their marks")
    assert got == ("steady" if steady else NOT_TIMED)
    assert ("repeat (" in evidence) == steady


def test_a_real_snapshot_that_keeps_no_iteration_is_not_timed():
    """``wild/snapshot_inference_gpt``: a memory snapshot (no host call: no one-time cost can be read) whose history
    keeps no step.  Main d78f7d52: phase "steady", evidence "no host events".  Here "not timed", the evidence saying
    why: no host call to read, no two steps to show one repeating."""
    job = _host("snapshot_inference_gpt")["job"]
    assert job["phase"] == NOT_TIMED, job["phase"]
    assert "no two steps kept to show one repeating" in job["phase_evidence"]


def test_a_real_snapshot_whose_iterations_repeat_is_steady_with_that_evidence():
    """``wild/snapshot_adam_iterations``: 3 optimizer steps in the allocation history, 2 kept.  Main d78f7d52:
    "steady" on the evidence "no host events" alone.  Here "steady", the evidence the kept steps that repeat."""
    job = _host("snapshot_adam_iterations")["job"]
    assert job["phase"] == "steady"
    assert job["phase_evidence"].endswith("but 2 steps kept of 3 found repeat"), job["phase_evidence"]
