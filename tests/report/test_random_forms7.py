"""The forms h37-survey35..37 and their fixes read, drawn as random jobs with truth by construction (issue #37 item 6,
h37-randjobs7): rocprofv3 kernel traces with no host (``synthetic.rocprofv3trace.write_kernel_trace``), serving
engines under layer-wise hook markers, torch.compile's own ranges, a diffusion pipeline's models under
``with_modules``.  Each fix on the smallest job that breaks it on main, with its control; the truth of construction
(``randjobs.TRUTH``) is the answer:

* a kernel trace's iterations: main read none where parameter init's fills outnumber a short run's kernels on their own
  stream (the busiest stream only was read), none where the iteration's kernel count is a multiple of a layer's
  (a multiple of a period found was skipped), and one fewer than ran (the last boundary's iteration had no end);
* two engine steps under layer-wise markers: main read each decoder layer's hook range as a step;
* a pipeline's ``Module._call_impl`` frames around its encoders, 5 denoiser calls and its VAE: main read 8 steps;
* a GPU-bound pipeline's last denoiser call: main's GPU window held the VAE launched after it.
"""

from __future__ import annotations


from synthetic.randjobs import TRUTH, form7_job, random_form7_job
from tests.support.random_jobs import laws_broken, reports_of, truth_problems, walk

_KT = {"layers": 2, "kernel_us": 200.0, "comm_calls": 0, "setup_bursts": 0, "setup_idle_ms": 50.0, "warmup_ms": 0.0,
       "gap_ms": 1.0, "gpus": 1}


def _one(job):
    (r,) = reports_of(job)
    return r


def _near(a: float, b: float) -> bool:
    return abs(a - b) <= 0.02 * b


def test_a_kernel_trace_whose_set_up_outnumbers_its_iterations_is_read_on_the_loops_stream():
    """5 iterations after 69 bursts of HIP's fills and copies on a stream of their own (walk seed 667): the set-up
    stream is the busiest by count and runs no training period -- main read one pass."""
    job = form7_job("rocprof_kernels", **{**_KT, "iterations": 5, "setup_bursts": 69, "layers": 4})
    h = _one(job).hosts[0]
    assert h.steps["source"] == "device_period" and h.steps["found"] == 5, h.steps["note"]  # main: 0, one pass


def test_an_iteration_whose_kernel_count_is_a_multiple_of_a_layers_is_read_whole():
    """6 layers of 5 forward kernels, 24 backward and Adam: 55 kernels an iteration, 11 times the layer's 5 (walk seed
    662) -- main skipped the period 55 as "a multiple of a period found" (the layer's, over 30 kernels)."""
    job = form7_job("rocprof_kernels", **{**_KT, "iterations": 8, "layers": 6})
    r = _one(job)
    h = r.hosts[0]
    assert h.steps["source"] == "device_period" and h.steps["found"] == 8, h.steps["note"]  # main: 0
    assert _near(h.mean_step_ms(), TRUTH[0]["step_ms"]) and not truth_problems(job, r)


def test_the_last_whole_iteration_of_a_kernel_trace_is_a_step():
    """10 iterations: main read 9 (boundary to boundary; the last boundary's iteration, whole in the capture, had
    none).  Its window ends at its own work's end; of more than five steps the stock rule drops it for the mean."""
    job = form7_job("rocprof_kernels", **{**_KT, "iterations": 10, "comm_calls": 2, "comm_us": 1000.0})
    r = _one(job)
    h = r.hosts[0]
    assert h.steps["found"] == 10, h.steps["note"]  # main: 9
    assert _near(h.mean_step_ms(), TRUTH[0]["step_ms"]) and not laws_broken(r) and not truth_problems(job, r)


def test_the_last_of_few_kernel_trace_iterations_is_partial_for_the_mean():
    # 4 iterations, 3 ms of idle between them: the last window ends at its work, short of the others by that idle
    job = form7_job("rocprof_kernels", **{**_KT, "iterations": 4, "gap_ms": 3.0})
    h = _one(job).hosts[0]
    assert h.steps["found"] == 4 and h.steps["count"] == 3, h.steps  # main: 3 found, all kept
    assert _near(h.mean_step_ms(), TRUTH[0]["step_ms"])
    assert any("its own work's end" in d["reason"] for d in h.steps["dropped"])


def test_two_engine_steps_under_layerwise_markers_are_no_layer_steps():
    """A prefill and one decode step, each the model's hook range around 3 decoder layers' (walk seed 38): the model's
    range runs twice, under the 3 a top-level range needs, so main read the 6 layers' ranges -- inside no range
    repeated 3 times -- as 6 steps.  A submodule's hook range is part of its parent's call."""
    job = form7_job("layerwise", steps=2, layers=3, layer_ms=0.661, kernels=7, sched_ms=1.494, thread="python")
    r = _one(job)
    assert r.hosts[0].steps["found"] in (0, 2), r.hosts[0].steps["note"]  # main: 6
    assert not truth_problems(job, r)


def test_engine_steps_under_layerwise_markers_read_as_before_control():
    job = form7_job("layerwise", steps=6, layers=3, layer_ms=0.661, kernels=7, sched_ms=1.494, thread="python")
    h = _one(job).hosts[0]
    assert h.steps["found"] == 6 and "`model`" in h.steps["note"], h.steps["note"]


def _pipeline(**over):
    return form7_job("pipeline", **{"calls": 5, "models": 2, "kernels": 12, "kernel_us": 50.0, "loop_scale": 2.0,
                                    "launch_us": 10.0, "between_us": 500.0, "step_marker": False, "read": True, **over})


def test_a_pipelines_call_frames_around_different_models_mark_no_loop():
    """CLIP, T5, 5 denoiser calls, the VAE, each in ``Module._call_impl``'s frame (walk seed 347): most frames run the
    denoiser, so main took all 8 for iterations.  Three run none of its programs: the frame is no loop's; the
    denoiser's own ``nn.Module:`` span is."""
    job = _pipeline()
    r = _one(job)
    h = r.hosts[0]
    assert h.steps["found"] == 5, h.steps["note"]  # main: 8
    assert "_call_impl" not in h.steps["note"]
    assert not laws_broken(r) and not truth_problems(job, r)


def test_a_gpu_bound_pipelines_last_denoiser_step_holds_no_vae():
    """3 denoiser calls queued on a GPU-bound device, the VAE launched right after with no read between (walk seed 498):
    main stretched the last host window to its GPU work's end, a device time that held the VAE's launches, so the last
    GPU step ran through the VAE (28.2 ms of a 12.7 ms period)."""
    job = _pipeline(calls=3, models=1, kernels=13, kernel_us=1254.7, loop_scale=0.85, launch_us=15.2,
                    between_us=1344.3, read=False)
    r = _one(job)
    h = r.hosts[0]
    assert h.steps["found"] == 3, h.steps["note"]
    assert _near(h.mean_step_ms(), TRUTH[0]["step_ms"]), (h.mean_step_ms(), TRUTH[0]["step_ms"])  # main: 17.86 of 12.67


def test_a_pipeline_calling_each_model_once_is_one_pass_control():
    job = _pipeline(calls=1)
    h = _one(job).hosts[0]
    assert h.steps["found"] in (0, 1), h.steps["note"]


def test_each_form_walks_clean_under_every_law():
    """One seed of each form (the walk's, ``scripts/randjobs.py --forms7``), every law and the truth of construction."""
    seeds = {"rocprof_kernels": 2, "layerwise": 5, "compiled": 3, "pipeline": 11}
    drawn = {f: random_form7_job(s).fmt for f, s in seeds.items()}
    assert drawn == {f: f for f in seeds}, drawn
    assert walk(seeds.values(), random_form7_job) == set(seeds)
