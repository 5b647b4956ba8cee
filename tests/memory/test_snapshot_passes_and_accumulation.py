"""A snapshot's inference passes and gradient-accumulation iterations, from its allocations (``job/iterations``).

h37-left16 left two readings wrong.  An inference loop under ``no_grad`` (no backward, no optimizer) was one step
whatever its passes: passes are told from a model's identical blocks by the level they start from -- each pass's
input is copied to the GPU at the level held between passes (weights, a KV cache) and everything the pass made is
freed before the next, while a block starts above it (the pass's input is live).  And gradient accumulation read each
micro-batch as an iteration: an iteration ends where the optimizer runs, so the micro-batches between two optimizer
steps are one iteration.  Truth by construction (``synthetic.memsnapshot.inference_loop``,
``training_iterations(micro_batches=)``): each pass's or iteration's start and peak.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.common.fmt import gb
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.job.iterations import history_iterations
from tests.support.snapshot_report import report as snapshot_report
from tests.support.snapshot_report import step_starts_us


@pytest.mark.parametrize(("passes", "kv_mib"), [(3, 0), (4, 0), (4, 64)])
def test_each_inference_pass_is_a_step_with_its_own_peak(tmp_path: Path, passes: int, kv_mib: int):
    sc = ms.inference_loop(passes=passes, kv_mib=kv_mib)
    rep = snapshot_report(tmp_path, sc.doc)
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", passes), rep.steps
    assert "forward pass" in rep.steps["note"], rep.steps["note"]
    # the first pass makes the KV cache, its one-time work: warm-up, left out where two passes remain (h37-left32)
    kept = slice(1 if sc.truth["first_call_allocs"] and passes >= 3 else 0, None)
    assert step_starts_us(rep, sc.doc) == sc.truth["starts_us"][kept]
    assert [row[1] for row in rep.gpus[0].memory["step_peaks"]] == sc.truth["peaks"][kept]


@pytest.mark.parametrize(("grad", "passes", "cast_mib"), [(False, 2, 0), (False, 4, 0), (True, 3, 0), (False, 3, 8)])
def test_passes_that_reuse_their_input_in_place_are_cut_at_the_forward(tmp_path: Path, grad: bool, passes: int,
                                                                      cast_mib: int):
    """h37-left32: a loop whose passes allocate nothing outside the model's forward (``forward_only``: the input
    reused in place) was one step.  Each pass opens with its first layer's allocation at the level held between
    passes and frees all it made before the next: steps at each pass's first allocation, by construction (with
    autograd on and no backward too).  Control: under autocast a weight's cast (outside the forward's own ops) opens
    each pass, cut before this branch too."""
    sc = ms.forward_only(grad=grad, passes=passes, cast_mib=cast_mib)
    rep = snapshot_report(tmp_path, sc.doc)
    assert (rep.steps["source"], rep.steps["count"]) == ("memory_iterations", passes), rep.steps
    assert "forward passes" in rep.steps["note"], rep.steps["note"]
    assert step_starts_us(rep, sc.doc) == sc.truth["starts_us"]


@pytest.mark.parametrize("dump_in_pass", [False, True])
def test_one_pass_of_identical_blocks_is_not_cut_into_passes(tmp_path: Path, dump_in_pass: bool):
    """A deep model's blocks repeat one allocation as passes would, but each starts above the held level (the input
    is live) -- and, dumped before the pass ends (that level never reached again), inside the model's forward, where
    a pass's input is not made: one pass, no steps found in it."""
    sc = ms.inference_loop(passes=1, blocks=48, dump_in_pass=dump_in_pass)
    assert snapshot_report(tmp_path, sc.doc).steps["source"] == "whole_capture"


@pytest.mark.parametrize("optimizer_temp", [True, False])
@pytest.mark.parametrize(("iterations", "micro"), [(3, 4), (4, 2)])
def test_micro_batches_between_optimizer_steps_are_one_iteration(tmp_path: Path, iterations: int, micro: int,
                                                                  optimizer_temp: bool):
    """``optimizer_temp=False`` (h37-left32): the optimizer allocates on its first step only (its state, then in
    place), so no allocation marks the later steps; the gradients do -- the first backward of an iteration makes
    them, held through its later micro-batches and freed by ``zero_grad()`` before the next iteration's."""
    sc = ms.training_iterations(iterations=iterations, micro_batches=micro, optimizer_temp=optimizer_temp)
    rep = snapshot_report(tmp_path, sc.doc)
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", iterations), rep.steps
    assert f"{micro} micro-batches" in rep.steps["note"], rep.steps["note"]
    # the first makes Adam's moments, its one-time work: warm-up (h37-left32)
    assert [d["step"] for d in rep.steps["dropped"]] == [0], rep.steps
    assert step_starts_us(rep, sc.doc) == sc.truth["starts_us"][1:]
    assert [row[1] for row in rep.gpus[0].memory["step_peaks"]] == sc.truth["peaks"][1:]
    assert rep.gpus[0].memory["breakdown"]["held"] == sc.truth["held"]


@pytest.mark.parametrize("optimizer_temp", [True, False])
def test_a_loop_without_accumulation_says_no_micro_batches(tmp_path: Path, optimizer_temp: bool):
    """Controls: one micro-batch an iteration; and an optimizer that allocates on its first step only (its state,
    then in place) marks no later step, so the iterations are still read from forward and backward alone."""
    rep = snapshot_report(tmp_path, ms.training_iterations(iterations=3, optimizer_temp=optimizer_temp).doc)
    assert rep.steps["found"] == 3 and "micro-batch" not in rep.steps["note"], rep.steps


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_allocations_of_random_sizes_are_no_passes(tmp_path: Path, seed: int):
    """Frees and allocations of random sizes from one forward site: a site and size may recur at a level the history
    later returns to by chance, but the passes such repeats would open neither run the same allocations nor come back
    down at the end."""
    a, rng, live = ms.Allocator(800 * ms.GiB), random.Random(seed), []
    for _ in range(20000):
        if live and rng.random() < 0.5:
            a.free(live.pop(rng.randrange(len(live))))
        else:
            live.append(a.malloc(rng.randrange(1, 256) * 512, ms.ACTIVATION))
    path = ms.write(str(tmp_path / "rnd.pickle"), ms.snapshot([a]))
    assert history_iterations(read_trace(path).memory[0]) is None


@pytest.mark.parametrize("kind", ["training", "inference"])
def test_a_history_without_times_is_cut_by_order_and_timed_never(tmp_path: Path, kind: str):
    """h37-left32: a PyTorch 2.0 snapshot's history keeps no times (the reader places one entry a microsecond) and
    was not cut.  Its iterations are in the events' order as in a timed one's: counted and their peaks said -- by
    construction -- but no step is timed (a window on that clock is a count of events, not a duration)."""
    sc = ms.training_iterations(iterations=4) if kind == "training" else ms.inference_loop(passes=4)
    for e in sc.doc["device_traces"][0]:
        e.pop("time_us")
    rep = snapshot_report(tmp_path, sc.doc)
    assert rep.steps["count"] == 0 and not rep.step_rows.rows() and rep.gpus[0].step_ms is None, rep.steps
    note = rep.steps["note"]
    what = "training iterations" if kind == "training" else "forward passes"
    assert f"{what}, from its allocations" in note and "4 times the allocated bytes climb" in note, note
    assert "records no times" in note and "no step is timed" in note, note
    peaks = [gb(p) for p in sc.truth["peaks"]]
    assert (f"each peaks at {peaks[0]}" if len(set(peaks)) == 1 else "they peak at " + ", ".join(peaks)) in note, note
    assert " ms" not in note, note  # nothing timed
