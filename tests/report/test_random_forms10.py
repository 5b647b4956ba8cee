"""The forms the last surveys kept, drawn as random jobs with truth by construction (issue #37 item 6,
h37-randjobs9, ``scripts/randjobs.py --forms10``; ``randjobs.TRUTH`` is the answer):

* attention computed op by op (bmm -> scale -> softmax -> bmm per layer) or fused (FlashAttention), in training and
  inference (``wild/timesformer_h100_video``'s eager attention): ``unfused_attention`` fires where two layers or more
  are eager and their kernels between the matmuls are worth a mention, never where attention is fused, and saves no
  more than those kernels and the score matrix's round trip;
* a pipeline's ``preprocess`` frame holding the time before the first op (``timesformer_h100_video``), after a
  library's own set-up frame (``xdit_flux_mi300x_denoise``'s ``_execution_device``): the wait is named as the program's
  own preparation.  Main took a frame starting where the set-up frame's *rounded* end lies (1 ns before it) as nested
  in it, and called the wait an untraced loader;
* a JAX program fetching its batch inside its own ``TraceAnnotation("get_batch")``: the wait is its input pipeline's.
  Main read batch-fetch ranges on PyTorch's ranges only, and called it an untraced loader;
* a PyProf-like Nsight export of one forward pass from the process's start (``mmagic_a100_pyprof_forward``): its
  context created in a recorded call or in none, the first launch loading the module, ranges never popped.  Two laws
  were wrong, not the package: a start-up warning over a mixed window ranks by its saving (``rules.leads``), and a
  share printed as a whole per cent is read to that digit.
"""

from __future__ import annotations


import numpy as np
import pytest

from synthetic.randjobs import FORMS10, TRUTH, form10_job, random_form10_job
from tb_gpu_advisor.model.columns import outermost
from tests.support.random_jobs import laws_broken, reports_of, truth_problems, walk


def _one(job):
    (r,) = reports_of(job)
    return r


def _input(r):
    return next((f for f in r.hosts[0].findings if f.rule == "input_bound"), None)


def test_random_form10_jobs_hold_every_law():
    """The new forms' walk, a few dozen seeds: every report law and each form's truth."""
    kinds = walk(range(0, 30), random_form10_job)
    assert set(FORMS10) <= kinds, kinds


def _preprocess(**over):
    """walk seed 829: 7 calls, each 1.61 ms of untraced Python, the set-up frame 10.17 ms, ``preprocess`` 9.10 ms"""
    return form10_job("preprocess", **{"steps": 7, "prep_us": 9101.783, "inner": True, "setup_us": 10170.842,
                                       "untraced_us": 1605.661, "kernels": 21, "kernel_us": 377.232, "upload_mb": 0.5,
                                       "marker": "profiler_step", **over})


def test_a_preprocess_frame_starting_at_its_setup_frames_rounded_end_is_the_input():
    """The ``preprocess`` frame starts 1 ns before the set-up frame's rounded end (Kineto's microseconds to three
    decimals): a sibling, not nested.  Main named the 9.10 ms it holds in 1 call of 5 (1.82 ms a step) and said
    the 10.7 ms wait "stands for an untraced loader"."""
    job = _preprocess()
    r = _one(job)
    f = _input(r)
    assert f is not None and not truth_problems(job, r), truth_problems(job, r)
    assert "`preprocess (video_classification.py:129)` 9.10 ms" in f.summary, f.summary
    assert "`_execution_device (pipeline_utils.py:1135)` 10.2 ms" in f.summary  # the set-up, named apart


def test_a_preprocess_frame_with_no_setup_before_it_control():
    """No set-up frame: the frame follows untraced time, nothing overlaps -- named on main too."""
    job = _preprocess(setup_us=0.0)
    r = _one(job)
    f = _input(r)
    assert f is not None and "`preprocess (video_classification.py:129)` 9.10 ms" in f.summary, f.summary
    assert not truth_problems(job, r)


def test_calls_overlapping_by_a_rounding_are_siblings_and_nested_ones_stay_nested():
    """Times of ``loader_pass_rtx5070ti`` (Windows, 0.1 us): ``_functional_pil.py(238): resize`` (163.2 us) ends 0.5 ns
    after its caller ``functional.py(387): resize`` -- nested still; and two calls back to back, the second starting
    1 ns before the first's rounded end -- both outermost (ps)."""
    parent, child = (0, 170_000_000), (5_000_000, 170_000_500)
    first, second = (200_000_000, 10_170_842_000), (10_170_841_000, 19_272_624_000)
    s, e = np.array([parent[0], child[0], first[0], second[0]]), np.array([parent[1], child[1], first[1], second[1]])
    assert outermost(np.zeros(4, np.int64), s, e).tolist() == [True, False, True, True]


def _jax_fetch(**over):
    """walk seed 2689: 11 steps, each fetching its batch for 29.06 ms inside ``load_batch``, put, run, loss read"""
    return form10_job("jax_fetch", **{"steps": 11, "layers": 1, "scale": 0.0123, "fetch_us": 29056.46,
                                      "range": "load_batch", "put": True, "read": True, "step_annotation": True,
                                      "module_events": True, **over})


def test_a_jax_programs_batch_fetch_range_is_its_input_pipeline():
    """Main: source ``before_first_op``, "stands for an untraced loader" for the program's own ``load_batch``."""
    job = _jax_fetch()
    r = _one(job)
    f = _input(r)
    assert f is not None and f.metric.detail["source"] == "pipeline", f.summary
    assert "the input pipeline's own time" in f.summary
    assert not truth_problems(job, r), truth_problems(job, r)


def test_a_jax_range_named_for_other_work_is_no_input_control():
    """The same work inside ``log_metrics``: no batch word, so no pipeline -- the time before the first op, as main."""
    job = _jax_fetch(range="log_metrics")
    f = _input(_one(job))
    assert f is not None and f.metric.detail["source"] == "before_first_op", f.summary
    TRUTH.pop(job.seed, None)


def _pyprof(**over):
    """walk seed 164: a PyProf forward of 196 ops from process start, the context in a recorded ``cudaFree``"""
    return form10_job("nsys_pyprof", **{"ops": 196, "kernel_us": 465.486, "build_ms": 1110.118, "context_ms": 222.742,
                                        "context_recorded": True, "module_ms": 10.031, "open_ranges": 111,
                                        "tail_ms": 1226.796, **over})


def test_a_start_up_warning_over_a_mixed_window_ranks_by_its_saving():
    """The law was stale: one-time costs 16% of the window (phase ``mixed``), the program's kernels 90% of the pass --
    ``rules.leads`` ranks that start-up warning by its saving (773dfd00), and main's ``order`` law still wanted it
    first.  The pass ends at the process's last call, not at the 111 open ranges' exported end."""
    job = _pyprof()
    r = _one(job)
    f = next(f for f in r.hosts[0].findings if f.rule == "cold_start")
    assert f.severity == "warning" and f.metric.detail["phase"] == "mixed", (f.severity, f.metric.detail)
    assert r.hosts[0].findings[0].rule != "cold_start"
    assert not laws_broken(r) and not truth_problems(job, r), laws_broken(r) + truth_problems(job, r)


def test_a_share_printed_to_its_own_digits_is_read_to_them():
    """walk seed 112: "50.1 ms, 4% of the 1.11 s window" -- 4.49% of it, 4.51% as its part and whole print; main's
    ``share-of`` law held "4%" to 0.42 points of 4.51."""
    job = form10_job("nsys_pyprof", ops=316, kernel_us=7.558, build_ms=441.459, context_ms=1056.696,
                     context_recorded=False, module_ms=50.078, open_ranges=0, tail_ms=2.052)
    r = _one(job)
    f = next(f for f in r.hosts[0].findings if f.rule == "cold_start")
    assert "50.1 ms, 4% of the 1.11 s" in " ".join(f.summary.split()), f.summary
    assert not laws_broken(r), laws_broken(r)


def _tiny(**over):
    """walk seed 10805: 12 unmarked inference calls of one fused-attention layer and a classifier head, 0.105 ms each,
    each ending with ``.item()``; the host (13-14 us between launches) is slower than the GPU"""
    return form10_job("attention", **{"steps": 12, "train": False, "layers": 1, "eager": 0, "tokens": 128, "heads": 96,
                                      "dims": True, "bmm_us": 5.434, "softmax_us": 66.829, "proj_us": 15.757,
                                      "head": True, "marker": "none", "loader_us": 0.0, **over})


def _steps_of(job):
    r = _one(job)
    return r, r.hosts[0].steps


@pytest.mark.parametrize("over", [{}, {"steps": 3, "layers": 8, "eager": 5, "tokens": 512, "heads": 16, "dims": False,
                                       "bmm_us": 12.134, "softmax_us": 3.91, "proj_us": 14.983}],
                         ids=["seed10805", "seed9563"])
def test_tiny_host_bound_iterations_are_steps(over):
    """Each call's sync finds its work done (the host is slower than the GPU), so the boundary's pause is the loop's
    own turn: 37 us against 13-14 us between launches, under ``job.period_boundary_gap`` (4x).  Main read the 12 (3)
    calls as one pass; the one wait per period, at the period's longest pause, marks each call's end."""
    job = _tiny(**over)
    r, steps = _steps_of(job)
    assert not truth_problems(job, r), truth_problems(job, r)
    assert steps["source"] == "repeated_launches" and "slower than the GPU" in steps["note"], steps["note"]


def test_a_host_bound_loop_of_layered_calls_counts_calls_not_layers_control():
    """Eight identical eager layers a call, no head: the layer repeats every 6 launches, the host waits every 48 --
    the calls are the steps (3), never the 24 layers (no wait between two layers)."""
    job = _tiny(steps=3, layers=8, eager=8, head=False)
    r, steps = _steps_of(job)
    assert steps["found"] <= 3 and not truth_problems(job, r), (steps["found"], truth_problems(job, r))
