"""One jitted function compiled into two programs, under Nsight: its XLA NVTX ranges name each program, and the
steps are read program by program (h37-xla68, issue #37).

XLA pushes ``XlaModule:#hlo_module=<module>,program_id=<id>#`` around each execution (the real wrf-gpu/wrf_gpu
bake-off export carries it so: ``jit__thomas_kernel``, ``program_id=186``; AGPL, read locally, numbers in SURVEY.md).
JAX compiles one module name into a program per input shape.  A solver called each iteration on its input and then
once more on a smaller one is two programs of ``jit_solve`` an iteration; read by name, every execution was a step:
twice the steps, each half an iteration.

Truth by construction (``synthetic.nsysexport.write_xla_host_loop(eval_program=9)``): 10 iterations, each one
execution of program 7 (a host-run loop) and one of program 9 (one pass of the body).  The control: program 7
alone, 10 steps, as before.  The first test fails on 225b624d (20 steps).

A name's programs are read apart only where their executions interleave, each running between runs of the other
(h37-xla68b).  A name recompiled mid-window -- program 7 for four calls, then a new input shape's program 9 for six
-- or a shape that comes back after a while (7, 9, then 7 again), or a last partial batch's own program run once
at the end is one step per call, as one module was before
9a41540f: read program by program, the recompiled window was 6 steps of program 9 (its first four iterations in no
step) and the partial batch's iteration was in none (10 steps of 11).  Both fail on 9a41540f; the interleaved
train + eval case keeps its 10.  Each step must hold one iteration: its start at a call's, one step per call.

Programs that interleave are read apart only where they run in a fixed cycle (h37-xla68c): bucketed input shapes
(each padding length a program) called in data order interleave in no cycle, and each call is a step -- (d), 30
calls of 3 buckets in seeded random order, read as 12 steps (the most-run bucket's) on 9529b074.  Round-robin
buckets (e) are a fixed cycle and pinned as one iteration a cycle (ambiguous; see its docstring); an evaluation
every fifth training call (f) is a cycle of six, each training call a step with the evaluation inside it.
"""

from __future__ import annotations

import numpy as np
import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.formats.nsys import reader
from tb_gpu_advisor.job.structure import module_executions
from tb_gpu_advisor.model.trace import HostEvents
from tb_gpu_advisor.runtime.pipeline import host_metrics


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    root = tmp_path_factory.mktemp("xlaprograms")
    two, one = str(root / "two.sqlite"), str(root / "one.sqlite")
    return {"two": (two, nx.write_xla_host_loop(two, iterations=8, eval_program=9)),
            "one": (one, nx.write_xla_host_loop(one, iterations=8))}


@pytest.fixture(scope="module")
def recompiled(tmp_path_factory):
    root = tmp_path_factory.mktemp("xlarecompiled")
    mid, back, last = str(root / "mid.sqlite"), str(root / "back.sqlite"), str(root / "last.sqlite")
    return {"mid": (mid, nx.write_xla_host_loop(mid, iterations=8, programs=[7] * 4 + [9] * 6)),
            "back": (back, nx.write_xla_host_loop(back, iterations=8, programs=[7] * 4 + [9] * 3 + [7] * 3)),
            "last": (last, nx.write_xla_host_loop(last, steps=11, iterations=8, programs=[7] * 10 + [11]))}


def _one_iteration_each(det, truth) -> None:
    """Every kept step starts where the truth's call of its number starts (to 5 us, from the first kept step's):
    each step is one iteration, none half of one or two."""
    assert det.windows and det.found == truth["steps"]
    w0, t = det.windows[0], truth["step_starts_ns"]
    for w in det.windows:
        got_us = (w.start_ms - w0.start_ms) * 1000.0
        want_us = (t[w.step] - t[w0.step]) / 1000.0
        assert abs(got_us - want_us) < 5.0, (w.step, got_us, want_us)


def test_two_programs_of_one_name_are_one_iteration_not_two_steps(exports) -> None:
    path, truth = exports["two"]
    det = host_metrics(reader.read_trace(path)).steps
    assert det.source == "xla_module_launches"
    assert det.found == truth["steps"]  # 10 iterations, not 20 executions
    assert "`jit_solve(7)`" in det.note and "`jit_solve(9)`" in det.note  # the step's program, and the one folded in
    _one_iteration_each(det, truth)


@pytest.mark.parametrize("case", ["mid", "back"])
def test_name_recompiled_mid_window_is_one_step_per_call(recompiled, case) -> None:
    """``mid``: program 9 from the fifth call on; ``back``: program 9 for three calls, then program 7 again (the
    first input shape back) -- 9 runs between runs of 7, but no 7 between runs of 9: no interleaving."""
    path, truth = recompiled[case]
    det = host_metrics(reader.read_trace(path)).steps
    assert det.source == "xla_module_launches"
    assert det.found == truth["steps"]  # 10 calls, not program 9's 6 (mid) or program 7's 7 (back)
    assert "`jit_solve`" in det.note  # one module: its programs ran one after the other
    _one_iteration_each(det, truth)


def test_last_partial_batch_program_is_its_own_step(recompiled) -> None:
    path, truth = recompiled["last"]
    det = host_metrics(reader.read_trace(path)).steps
    assert det.source == "xla_module_launches"
    assert det.found == truth["steps"]  # 11 calls: the partial batch's is an iteration too
    _one_iteration_each(det, truth)


def test_control_one_program_keeps_its_executions_as_steps(exports) -> None:
    path, truth = exports["one"]
    det = host_metrics(reader.read_trace(path)).steps
    assert det.source == "xla_module_launches" and det.found == truth["steps"]
    assert "`jit_solve`" in det.note  # one program: the module's name, as before


def _ranks_host(ids: list[int], lines: list[int]) -> HostEvents:
    """One ``XlaModule`` range of ``jit_step`` per entry, 10 us apart: program ``ids[k]`` on host line ``lines[k]``."""
    n = len(ids)
    names = sorted({f"XlaModule:#hlo_module=jit_step,program_id={p}#" for p in ids})
    none = np.full(n, -1, np.int32)
    start = np.arange(n, dtype=np.int64) * 10_000_000
    return HostEvents(start=start, end=start + 5_000_000,
                      name=np.array([names.index(f"XlaModule:#hlo_module=jit_step,program_id={p}#") for p in ids],
                                    np.int32),
                      line=np.array(lines, np.int32), corr=none, group_id=none, step_num=none, iter_num=none,
                      root=none, is_eager=none.astype(np.int8), names=names, line_names=["rank0", "rank1"])


def test_two_ranks_programs_interleave_only_across_processes() -> None:
    """Two ranks of one Nsight export running one step each, in turn: rank 0's ``jit_step`` is program 7, rank 1's
    program 8 (program ids are each process's own count).  Each process runs one program: one module, not two
    programs.  The control: the same ranges on one process's lines interleave and are read apart."""
    h = _ranks_host([7, 8] * 5, [0, 1] * 5)
    ev, modules = module_executions(h, np.array([0, 1]))
    assert modules == ["jit_step"] and (ev == 0).all()
    ev, modules = module_executions(h, np.array([0, 0]))
    assert sorted(modules) == ["jit_step(7)", "jit_step(8)"]


BUCKETS = [int(p) for p in np.random.default_rng(6801).choice([7, 8, 9], size=30)]  # seeded data order


@pytest.fixture(scope="module")
def shapes(tmp_path_factory):
    """(d) three bucketed input shapes in seeded random order, (e) the same three round-robin, (f) an evaluation
    program after every fifth training call (30 training calls each); (g) train + eval, then a last batch."""
    root = tmp_path_factory.mktemp("xlashapes")
    d, e, f, g = (str(root / f"{k}.sqlite") for k in "defg")
    return {"d": (d, nx.write_xla_host_loop(d, steps=30, iterations=4, programs=BUCKETS)),
            "e": (e, nx.write_xla_host_loop(e, steps=30, iterations=4, programs=[7, 8, 9] * 10)),
            "f": (f, nx.write_xla_host_loop(f, steps=30, iterations=4, eval_program=11, eval_every=5)),
            "g": (g, nx.write_xla_host_loop(g, steps=11, iterations=4, programs=[7] * 10 + [12], eval_program=9))}


def test_bucketed_shapes_in_data_order_are_one_step_per_call(shapes) -> None:
    """(d) Sequences padded to one of three lengths, each its own program, called in data order: the programs
    interleave but repeat in no cycle -- one function's calls, each a step (30), not the most-run bucket's ~10."""
    path, truth = shapes["d"]
    assert len(set(BUCKETS)) == 3
    det = host_metrics(reader.read_trace(path)).steps
    assert det.source == "xla_module_launches"
    assert det.found == truth["steps"]
    assert "`jit_solve`" in det.note  # one module
    _one_iteration_each(det, truth)


def test_round_robin_buckets_read_as_one_cycle_an_iteration(shapes) -> None:
    """(e) Ambiguous by construction: three programs of one name always in the order 7, 8, 9 are what a loop that
    calls three input shapes each iteration writes, and what round-robin buckets write.  We read the fixed cycle as
    one iteration (10 steps of the 30 calls): a loop's fixed order is the common cause, and data-ordered buckets
    repeat in no cycle (test above).  This pins the reading; it is not the truth of round-robin buckets (30)."""
    path, truth = shapes["e"]
    det = host_metrics(reader.read_trace(path)).steps
    assert det.source == "xla_module_launches"
    assert det.found == truth["steps"] // 3
    assert "one iteration" in det.note  # the cycle's other programs folded into each step


def test_periodic_evaluation_is_in_the_training_step_it_follows(shapes) -> None:
    """(f) An evaluation program after every fifth training call: a fixed cycle of six calls.  Each training call is
    a step (30, not 36 executions), and each evaluation runs inside the step it follows -- that step is longer by
    the evaluation's call, the steps between are not (steps/ reads extra work inside a step as the step's)."""
    path, truth = shapes["f"]
    det = host_metrics(reader.read_trace(path)).steps
    assert det.source == "xla_module_launches"
    assert "`jit_solve(7)`" in det.note
    _one_iteration_each(det, truth)
    t = np.diff(np.asarray(truth["step_starts_ns"], np.float64)) / 1e6  # each step's time to the next's start, ms
    dur = {w.step: w.end_ms - w.start_ms for w in det.windows}
    for k in range(len(t)):
        if k in dur:
            assert abs(dur[k] - t[k]) < 0.01, (k, dur[k], t[k])
    with_eval = [dur[k] for k in range(4, len(t), 5) if k in dur]
    without = [dur[k] for k in range(len(t)) if k % 5 != 4 and k in dur]
    assert with_eval and min(with_eval) > max(without)


def test_train_eval_cycle_then_a_last_batch_program_stays_the_cycle(shapes) -> None:
    """(g) Train (7) + eval (9) in turn for 10 iterations, then a last partial batch's own program (12) with its eval:
    one stray call breaks no cycle, so the name is still read program by program, not 22 calls read as steps.  The
    eval program runs in all 11 iterations (the last batch's too): its calls are the steps, 11, each one iteration
    (from one eval call to the next)."""
    path, truth = shapes["g"]
    det = host_metrics(reader.read_trace(path)).steps
    assert det.source == "xla_module_launches"
    assert "`jit_solve(9)`" in det.note  # read program by program
    assert det.found == truth["steps"]


def test_an_evaluation_rarer_than_one_call_in_ten_is_in_the_step_it_follows(tmp_path) -> None:
    """(h) An evaluation after every 20th of 40 training calls: one call in 21, within the slack a fixed cycle allows
    for stray calls, so the name read as one module and each evaluation was a step too (42 on b2a0d583).  The
    evaluation recurs in a period of its own (h37-xla69): 40 steps, each at its training call, the evaluation inside
    the step it follows, as (f).  The controls (a last batch's own program, run once; a recompile) stay one step per
    call (``test_last_partial_batch_program_is_its_own_step``, ``test_name_recompiled_mid_window_...``)."""
    path = str(tmp_path / "h.sqlite")
    truth = nx.write_xla_host_loop(path, steps=40, iterations=4, eval_program=11, eval_every=20)
    det = host_metrics(reader.read_trace(path)).steps
    assert det.source == "xla_module_launches" and "`jit_solve(7)`" in det.note
    _one_iteration_each(det, truth)


def test_train_and_eval_both_recompiled_mid_window_stay_one_iteration_a_cycle(tmp_path) -> None:
    """(i) Train (7) + eval (9) in turn, both recompiled for a new batch shape after the fourth iteration (11 + 13,
    six more): the slack let the calls cycle program by program, and the most-run program's were the steps -- 6 of
    10 on b2a0d583, the first four iterations in none (in a shorter window, 5 iterations: no cycle, each call a
    step, 10).  Each recompiled program takes its predecessor's place in the cycle (h37-xla69): 10 steps, each one
    iteration, keyed by the place's programs (``jit_solve(7, 11)``)."""
    path = str(tmp_path / "i.sqlite")
    truth = nx.write_xla_host_loop(path, steps=10, iterations=4, programs=[7] * 4 + [11] * 6,
                                   eval_program=[9] * 4 + [13] * 6)
    det = host_metrics(reader.read_trace(path)).steps
    assert det.source == "xla_module_launches" and "`jit_solve(7, 11)`" in det.note
    _one_iteration_each(det, truth)
