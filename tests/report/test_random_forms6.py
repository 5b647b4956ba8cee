"""The steps h37-randjobs5's walk left (issue #37, h37-randjobs6), each on the smallest job that breaks it on main, with
its control; the truth of construction (``randjobs.TRUTH``) is the answer:

* a loop launching one kernel over and over, the host waiting after each iteration: no step on main (a launch
  sequence of one kernel has no period) -- ``job.period._waited_runs`` reads the runs between the host's waits;
* two iterations: 6 or 8 "iterations" of a shorter repeat, or one pass of the window, on main -- one wait splitting
  the region in halves is two (``job.period._wait_period``), a region of two repeats has a boundary to read
  (``_region_steps``);
* the mean of five steps or fewer ran low: the capture's last ends at its own work, the others at the next one's
  start -- ``steps.ends._last_ends_at_own_work`` drops it as partial where it is the shortest.
"""

from __future__ import annotations


from synthetic.randjobs import TRUTH, form5_job
from tests.support.random_jobs import laws_broken, reports_of, truth_problems

_GEMM = "Cijk_Ailk_Bljk_BBS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0_GRVW8_K1_WG32_4_1"
_BN = "MIOpenBatchNormFwdTrainSpatial"
_GELU = ("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl, std::array<char*, 2> >"
         "(int, at::native::GeluCUDAKernelImpl, std::array<char*, 2>)")


def _amd(fmt, steps, kernels, seed=0):
    return form5_job(fmt, seed=seed, steps=steps, kernels=kernels, step_range=None, gap_ms=0.05, upload_bytes=0,
                     read_bytes=4096, hsa_calls=0, upload_staging_ms=0.0)


def _one(job):
    (r,) = reports_of(job)
    return r


def test_a_loop_of_one_kernel_is_stepped_by_the_hosts_waits():
    """6 iterations of one GEMM launched 3 times, then ``hipDeviceSynchronize`` (walk seeds 38, 82, 97, 160, 190, 205,
    243, 277, 325 of the form5 walk): main read no step, the whole window one."""
    for fmt in ("rocpd", "rocprof"):
        job = _amd(fmt, 6, [(_GEMM, 100.0)] * 3)
        r = _one(job)
        h = r.hosts[0]
        assert h.steps["found"] == 6, h.steps["note"]  # main: 0
        assert "6 runs of 3 launches of one kernel" in h.steps["note"]
        assert h.steps["confidence"] == "low"  # the waits alone mark them
        assert not laws_broken(r) and not truth_problems(job, r)


def test_a_benchmark_timing_one_kernel_with_a_sync_after_each_call_is_stepped_by_its_syncs():
    # one launch an iteration (a benchmark timing one GEMM): each sync ends one
    h = _one(_amd("rocprof", 10, [(_GELU, 50.0)])).hosts[0]
    assert h.steps["found"] == 10, h.steps["note"]  # main: 0
    assert "10 runs of 1 launch of one kernel" in h.steps["note"]


def test_one_kernel_launched_over_and_over_without_a_wait_between_reads_as_before_control():
    # the control: the same 18 launches with no wait among them (one iteration) -- nothing marks an iteration
    h = _one(_amd("rocprof", 1, [(_GEMM, 100.0)] * 18)).hosts[0]
    assert h.steps["found"] == 0 and h.steps["source"] == "whole_capture"


def test_two_iterations_split_by_one_wait_are_two_steps():
    """2 iterations of 4 kernels launched 3 times each, one ``hipDeviceSynchronize`` between them (walk seeds 48, 74):
    main read the 4-kernel repeat as the program's own loop, 6 "iterations" -- more than the one wait allows."""
    kernels = [(_GEMM, 80.0), (_BN, 20.0), (_GELU, 10.0), ("void ck::kernel_gemm_xdl_cshuffle_v3<ck::half_t, "
                                                          "ck::half_t, float, 256>(ck::GemmArgs)", 40.0)] * 3
    for fmt in ("rocprof", "rocpd"):
        job = _amd(fmt, 2, kernels)
        r = _one(job)
        assert r.hosts[0].steps["found"] == 2, r.hosts[0].steps["note"]  # main: 6
        assert not truth_problems(job, r)
    # the control: three iterations read as three, as on main (the waits every 12 launches)
    job = _amd("rocprof", 3, kernels)
    assert _one(job).hosts[0].steps["found"] == 3


def test_two_iterations_of_an_inference_loop_are_two_steps():
    """``emit_nvtx`` around 2 ``no_grad`` iterations of an 8-layer model, each read back (walk seed 110): main read one
    pass of the window (``single_pass``); the region of two repeats has one boundary, where the host waited."""
    job = form5_job("fwnvtx", form="no_grad", steps=2, layers=8)
    r = _one(job)
    h = r.hosts[0]
    assert h.steps["found"] == 2 and h.steps["source"] == "repeated_launches", h.steps["note"]  # main: 1
    assert abs(h.mean_step_ms() - TRUTH[0]["step_ms"]) < 0.01 * TRUTH[0]["step_ms"]
    assert not laws_broken(r) and not truth_problems(job, r)


def test_the_last_of_five_repeats_ending_at_its_own_work_is_partial_for_the_mean():
    """5 iterations of a loop updating its own parameters (walk seed 281): every repeat runs to the next one's start,
    3.17 ms, the last to its own work's end, 2.61 ms -- main's mean 3.06 ms."""
    job = form5_job("fwnvtx", form="manual_update", steps=5, layers=3)
    r = _one(job)
    h = r.hosts[0]
    assert abs(h.mean_step_ms() - TRUTH[0]["step_ms"]) < 0.01 * TRUTH[0]["step_ms"], h.mean_step_ms()  # main: 3.06
    assert h.steps["found"] == 5 and h.steps["count"] == 4
    assert any(d["reason"].startswith("partial: ") and "its own work's end" in d["reason"]
               for d in h.steps["dropped"]), h.steps["dropped"]
    assert not truth_problems(job, r)


def test_the_last_of_three_updates_ending_at_its_own_work_is_partial_for_the_mean():
    """3 iterations read from the optimizer's step ends (walk seed 58): the last GPU window ends at its work, 4.61 of
    5.33 ms -- main's mean 5.09 ms."""
    job = form5_job("fwnvtx", form="emit_nvtx", steps=3, layers=6)
    h = _one(job).hosts[0]
    assert h.steps["source"] == "step_end_events"
    assert abs(h.mean_step_ms() - TRUTH[0]["step_ms"]) < 0.01 * TRUTH[0]["step_ms"], h.mean_step_ms()  # main: 5.09


def test_the_last_of_many_repeats_is_the_stock_rules_control():
    # the control: of more than five steps the stock rule drops the last, as on main; the mean is the period
    job = form5_job("fwnvtx", form="manual_update", steps=8, layers=3)
    h = _one(job).hosts[0]
    assert h.steps["found"] == 8 and h.steps["count"] == 6
    assert [d["reason"] for d in h.steps["dropped"]][-1].startswith("possibly partial: last of more than")
    assert abs(h.mean_step_ms() - TRUTH[0]["step_ms"]) < 0.01 * TRUTH[0]["step_ms"]


def test_a_few_synced_launches_of_one_kernel_are_stepped_by_their_syncs():
    """5 iterations of one launch each, ``hipDeviceSynchronize`` after each, nothing else launched (walk seed 2237):
    5 launches, under the 8 a period is read from, so main (and this branch's first cut) read no step."""
    job = _amd("rocprof", 5, [(_GELU, 17.0)])
    job.params.update(read_bytes=0, gap_ms=3.0)
    r = _one(job)
    assert r.hosts[0].steps["found"] == 5, r.hosts[0].steps["note"]  # main: 0
    assert not truth_problems(job, r)
