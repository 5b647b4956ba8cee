"""A profiler trace's memory peak as its kept steps hold it, the dropped warm-up step's said apart (h37-left39).

h37-left35 made a memory snapshot's peak the steady iterations' where its dropped warm-up iteration holds a higher
one (an autotuner's trial buffer, a first call's workspace).  A Kineto trace recorded with ``profile_memory=True``
kept the whole capture's peak: with step 0 dropped as warm-up (the stock rule, more than 5 steps) its "peak at" was a
time inside no kept step and the rules judged what was live then.  One home for that logic
(``metrics/memory._steady_peak``), now for any capture with allocator events.

Truth by construction (``synthetic.torchtrace.memory_training``): the same loop with and without a one-time buffer in
its first profiled step; the simulated caching allocator's own maxima give the steady peak (the loop without it: every
step peaks alike) and the warm-up's (the loop with it).
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from synthetic import torchtrace as tt
from synthetic.memsnapshot import GiB, MiB
from tb_gpu_advisor.common.fmt import gb
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.report.render import memory_notes
from tb_gpu_advisor.runtime.pipeline import analyze_host

HELD, LAYERS, ACT, GRAD, TRIAL = 8 * GiB, 8, GiB // 2, 100 * MiB, 2 * GiB
STEPS = 8  # more than 5: the stock rule drops the first (ProfilerStep#2) and the last


def _scenario(trial: int) -> tt.Scenario:
    return tt.Scenario(1, tt._single(tt.memory_training(lambda n, i: ACT, LAYERS, GRAD, trial_bytes=trial)),
                       ["activation_memory"], [], "a training loop whose first step makes a one-time buffer",
                       memory_held=HELD)


def _run(tmp_path, trial: int):
    (path,) = tt.write_run(str(tmp_path), _scenario(trial), steps=STEPS, run=f"trial_{trial}")
    rep = analyze_host(HostFile(f"trial_{trial}", path, os.path.getsize(path), 0, "kineto"))
    assert rep.error is None, rep.error
    sim = tt.simulate(_scenario(trial), STEPS)[0].mem
    return rep, sim


def test_a_warm_up_steps_one_time_buffer_is_said_apart_from_the_kept_steps_peak(tmp_path):
    """With the 2 GiB buffer in ProfilerStep#2 (dropped as warm-up): the table's peak is the kept steps' -- the loop
    without the buffer's peak, to the byte, in a kept step --, the warm-up's said apart; reserved stays the whole
    capture's (the reserve held the buffer).  On main: the peak was the warm-up's, outside every kept step."""
    rep, sim = _run(tmp_path, TRIAL)
    _, steady = _run(tmp_path, 0)
    assert rep.steps["source"] == "profiler_step" and rep.steps["dropped"][0]["step"] == 2
    mem = rep.gpus[0].memory
    assert sim.peak_allocated > steady.peak_allocated  # the construction: the buffer tops the first step
    assert mem["peak_allocated_bytes"] == steady.peak_allocated
    dropped = {d["step"] for d in rep.steps["dropped"]}
    assert mem["peak_step"] not in dropped and {r.step for r in rep.step_rows} >= {mem["peak_step"]}
    assert mem["warmup_peak_bytes"] == sim.peak_allocated and mem["warmup_peak_step"] == 2
    assert mem["warmup_peak_ms"] is not None and mem["warmup_peak_ms"] < mem["peak_ms"]
    assert mem["peak_reserved_bytes"] == sim.peak_reserved
    assert mem["breakdown"]["held"] == HELD  # what the loop held before the capture, no warm-up buffer in it
    (line,) = memory_notes(SimpleNamespace(hosts=[rep]))
    assert f"step 2, dropped as warm-up) peak at {gb(sim.peak_allocated)}" in line
    assert f"at {gb(steady.peak_allocated)} (the table's peak)" in line


def test_a_loop_with_no_one_time_buffer_keeps_its_peak_and_says_no_warm_up(tmp_path):
    """Control: every step peaks alike -- the peak is the allocator's, in a kept step, nothing said apart (on main
    and here)."""
    rep, sim = _run(tmp_path, 0)
    mem = rep.gpus[0].memory
    assert mem["peak_allocated_bytes"] == sim.peak_allocated and mem["warmup_peak_bytes"] is None
    assert mem["peak_step"] is not None and not memory_notes(SimpleNamespace(hosts=[rep]))


def _compiling_second_step(trial_step: int) -> tt.Scenario:
    """The loop with the one-time buffer in ``trial_step``, and ProfilerStep#3 compiling (torch.compile's nested
    spans on the host): the stock rule drops step 2, the step detection step 3 as cold -- two leading warm-up steps."""
    inner = tt.memory_training(lambda n, i: ACT, LAYERS, GRAD, trial_bytes=TRIAL, trial_step=trial_step)

    def body(r: tt.Rank) -> None:
        if r.mem.step == 3:
            start = r.host_us
            for name, ms_ in tt.COMPILE_NEST_MS:
                r.cpu(name, ms_ * 1000, advance=False)
                r.host_us += 1.0
            r.host_us = start + tt.COMPILE_NEST_MS[0][1] * 1000
        inner(r)
    return tt.Scenario(1, tt._single(body), ["activation_memory"], [], "a compiled loop with a one-time buffer",
                       memory_held=HELD)


@pytest.mark.parametrize("trial_step", [2, 3])
def test_the_warm_up_peak_names_the_dropped_step_that_holds_it(tmp_path, trial_step: int):
    """h37-left45: ``warmup_peak_step`` was the latest dropped warm-up step (3, the compiling one), whichever held the
    peak; it is now the dropped step whose window holds it -- by construction the step that made the buffer (2: failed
    on main; 3: the control, main too)."""
    sc = _compiling_second_step(trial_step)
    (path,) = tt.write_run(str(tmp_path), sc, steps=STEPS, run=f"compiled_{trial_step}")
    rep = analyze_host(HostFile("compiled", path, os.path.getsize(path), 0, "kineto"))
    assert rep.error is None, rep.error
    warm = sorted(d["step"] for d in rep.steps["dropped"] if d["reason"].startswith("warm-up"))
    assert warm == [2, 3], rep.steps["dropped"]  # the construction: two leading warm-up steps
    sim = tt.simulate(sc, STEPS)[0].mem
    mem = rep.gpus[0].memory
    assert (mem["warmup_peak_bytes"], mem["warmup_peak_step"]) == (sim.peak_allocated, trial_step), mem
    (line,) = memory_notes(SimpleNamespace(hosts=[rep]))
    assert f"step {trial_step}, dropped as warm-up) peak at {gb(sim.peak_allocated)}" in line
