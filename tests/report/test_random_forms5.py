"""The forms of real captures ``random_form5_job`` draws (h37-randjobs5, issue #37), held to every law and, where the
writer returns its truth (``randjobs.TRUTH``), to the steps the job ran (``tests/support/random_jobs.truth_problems``):
AMD's rocprof and rocpd traces, NVTX-only Nsight exports of frameworks (``synthetic.autograd_nvtx``) on 1-2 ranks,
Kineto steps blocking on copies, tiny host-bound steps, one GPU slower, a memory snapshot beside a trace.

Below the walk, each law the walk found broken on main, on the smallest job that breaks it, with its control:

* a native loop launching the same layer's kernels four times, then ``hipDeviceSynchronize``: 32 "iterations" of
  0.13 ms for 8 of 0.54 ms -- ``job.period._wait_period``: the host's waits every few repeats make them one iteration;
* Lightning's ``run_training_batch`` ranges on 2 ranks: 12 steps of 2.67 ms for 6 of 5.33 ms --
  ``steps.markers._iteration_range_steps`` numbers each thread's ranges on their own;
* Megatron's ``--nvtx-ranges`` on a 2-layer model: 30 "steps" (a layer's range) for 15 iterations --
  ``steps.nvtx_ranges._ranges_holding_backward``: a range holding the backward in half its windows is a layer's.
"""

from __future__ import annotations

import re

import pytest

from synthetic.randjobs import FORMS5, TRUTH, form5_job, random_form5_job
from tests.support.random_jobs import laws_broken, reports_of, truth_problems, walk

#: the walk kept in the suite: the first seed of each form and a few more (scripts/randjobs.py --forms5 walks hundreds),
#: and the seeds that broke a law on main (h37-lawseeds: 30059, 30099 two-rank collectives, 30392 a 2-step rocpd;
#: session 42: 42123, a one-pass trace's "1 copy a step" of its pageable uploads)
WALK = (0, 1, 2, 3, 4, 6, 7, 18, 30059, 30099, 30392, 42123)


def _one(job):
    (r,) = reports_of(job)
    return r


def test_the_new_forms_hold_every_law():
    kinds = walk(WALK, random_form5_job)
    assert kinds == set(FORMS5), kinds  # the walk draws every form


def test_a_snapshot_beside_a_trace_is_walked_as_its_own_session():
    job = random_form5_job(next(s for s in range(100) if random_form5_job(s).fmt == "kineto_snapshot"))
    reports = reports_of(job)
    assert len(reports) == 2  # the trace's and the snapshot's
    assert not [v for r in reports for v in laws_broken(r)]


_GEMM = "Cijk_Ailk_Bljk_BBS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0_GRVW8_K1_WG32_4_1"
_LAYER = [(_GEMM, 100.0), ("MIOpenBatchNormFwdTrainSpatial", 20.0)]


def _amd(fmt, layers):
    return form5_job(fmt, steps=8, kernels=_LAYER * layers, step_range=None, gap_ms=0.05, upload_bytes=0,
                     read_bytes=0, hsa_calls=0, upload_staging_ms=0.0)


def test_a_loop_that_waits_every_few_repeats_is_stepped_by_its_waits():
    """8 iterations of one layer's two kernels run 4 times, each iteration ended by ``hipDeviceSynchronize`` (rocpd and
    rocprof alike): the launch sequence repeats every 2 kernels, the host waits every 8.  Main read the 2-kernel repeat
    as the program's own loop, the waits ignored: 32 steps of 0.134 ms."""
    for fmt in ("rocpd", "rocprof"):
        r = _one(_amd(fmt, 4))
        h = r.hosts[0]
        assert h.steps["found"] == 8, h.steps["note"]  # main: 32
        assert "8 repeats of the same 8-kernel launch sequence" in h.steps["note"]
        assert abs(h.mean_step_ms() - 0.54) < 0.01, h.mean_step_ms()  # main: 0.134
        assert not laws_broken(r) and not truth_problems(_amd(fmt, 4), r)


def test_a_loop_that_waits_after_each_repeat_reads_as_before_control():
    # the control: one layer an iteration -- the repeat is the iteration, as on main
    r = _one(_amd("rocprof", 1))
    h = r.hosts[0]
    assert h.steps["found"] == 8 and "8 repeats of the same 2-kernel launch sequence" in h.steps["note"]


def test_each_ranks_iteration_ranges_number_its_own_iterations():
    """Lightning's ``[pl][profile]run_training_batch`` around each iteration on 2 ranks 40 us apart: main merged both
    ranks' ranges into one sequence, 12 "iterations" of half the period (2.67 ms of 5.33)."""
    job = form5_job("fwnvtx", form="lightning", steps=6, layers=6, ranks=2)
    r = _one(job)
    h = r.hosts[0]
    assert h.steps["found"] == 6, h.steps["note"]  # main: 12
    assert abs(h.mean_step_ms() - TRUTH[0]["step_ms"]) < 0.01 * TRUTH[0]["step_ms"]  # main: 2.67 ms
    assert "on each of 2 threads" in h.steps["note"]
    assert not laws_broken(r)


def test_one_ranks_iteration_ranges_read_as_before_control():
    h = _one(form5_job("fwnvtx", form="lightning", steps=6, layers=6, ranks=1)).hosts[0]
    assert h.steps["found"] == 6 and "threads" not in h.steps["note"]
    assert abs(h.mean_step_ms() - TRUTH[0]["step_ms"]) < 0.01 * TRUTH[0]["step_ms"]


def test_a_two_layer_models_layer_ranges_are_no_steps():
    """Megatron-core's ``--nvtx-ranges`` on a 2-layer model, 15 iterations: the layer's range holds the backward in
    exactly half its windows (the second layer's), which main's "fewer than half" let through as 30 steps."""
    r = _one(form5_job("fwnvtx", form="megatron", steps=15, layers=2))
    h = r.hosts[0]
    assert h.steps["found"] == 15, h.steps["note"]  # main: 30
    assert abs(h.mean_step_ms() - TRUTH[0]["step_ms"]) < 0.01 * TRUTH[0]["step_ms"]
    assert not laws_broken(r)


def test_a_three_layer_models_layer_ranges_read_as_before_control():
    h = _one(form5_job("fwnvtx", form="megatron", steps=15, layers=3)).hosts[0]
    assert h.steps["found"] == 15 and h.steps["source"] == "repeated_launches"


def test_the_one_count_law_reads_a_graphs_clause_after_a_mean_over_gpus():
    """(the law, not the report) 2 ranks, some kernels in CUDA graphs: launch_bound assumes "28.3 small kernels per step
    on average over its 2 GPUs, not already in graphs" -- the kernels a graph can still batch (its detail's 28.33
    outside graphs).  The ``one-count`` law read the graphs' clause only right after "on average", so it held the
    count to every small kernel (43.3) and broke on a right report (walk seed 60258, also on main).  Since session 52
    each rank's 12 back-to-back ``train_step`` ranges are all read (8 were, h37 walk 250000's 1 ns rounding): the count
    is 17, the same on both GPUs, and the clause follows it without "on average"."""
    from synthetic.randjobs import random_job

    r = _one(random_job(60258))
    (f,) = [f for f in r.hosts[0].findings if f.rule == "launch_bound"]
    m = re.search(r"\(([\d.]+) small kernels per step(?: on average over its 2 GPUs)?, not already in graphs\)",
                  f.saving.assumption)
    assert m, f.saving.assumption
    assert float(m.group(1)) == pytest.approx(f.metric.detail["kernels_outside_graphs_per_step"], abs=0.05)
    assert float(m.group(1)) < f.metric.detail["small_kernels_per_step"]  # the graphs' kernels left out
    assert not laws_broken(r)  # main: one-count


def test_a_set_up_upload_before_the_loop_is_no_step():
    """Seed 75020 (h37-probe44m): a rocprof job of 2 iterations, each a 48 MiB pageable ``hipMemcpy`` then its
    kernels, after a 64 MiB set-up upload that the first iteration's staging sets 5 ms apart.  Main read the set-up's
    copy-only burst as a GPU-burst step: 3 found for the 2 the job ran, the first "step" the set-up alone."""
    job = random_form5_job(75020)
    r = _one(job)
    h = r.hosts[0]
    assert h.steps["found"] == 2, h.steps["note"]  # main: 3
    # the set-up said apart: the bursts' words, or the host's waits' where they read the loop first (h37-probe45m)
    assert "set-up before its loop" in h.steps["note"] or "the program's set-up, left out" in h.steps["note"]
    assert not laws_broken(r) and not truth_problems(job, r)


def test_a_loop_without_a_set_up_upload_reads_as_before_control():
    # the control: the same job without its set-up upload -- the 2 iterations' bursts, as on main
    job = form5_job("rocprof", **{**random_form5_job(75020).params, "upload_bytes": 0})
    h = _one(job).hosts[0]
    assert h.steps["found"] == 2 and "set-up" not in h.steps["note"], h.steps["note"]
