"""The step readings h37-randjobs7 left and an MoE form h37-survey35 read, drawn as random jobs with truth by
construction (issue #37, h37-randjobs8; ``randjobs.TRUTH`` is the answer):

* a few steps read from the program's own spans (a pipeline's denoiser calls, ``## Call CompiledFxGraph``): each runs
  from its span's start to the next's, the last to its own work's end -- main averaged that partial last one in;
* a GPU a little slower than its host, no read between calls: the launched work spills further past its host window
  each call, yet main kept the host windows (the median spill small against the step);
* DeepEP's all-to-all (20 blocks, a stream of its own) beside fp8 grouped GEMMs (112 blocks), the walk's new form
  (``--forms8``) with its laws: the all-to-all a collective, the fp8 GEMMs no mixed-precision case, the small grid's
  saving within its kernels' time alone; and, h37-a2afix, its exposed exchange told the experts' fix (a law of
  ``truth_problems``: the fix's words fit what the all-to-all exchanges).
"""

from __future__ import annotations


import pytest

from synthetic.randjobs import TRUTH, form7_job, form8_job, random_form8_job
from tests.support.paths import FIXTURES
from tests.support.random_jobs import laws_broken, reports_of, truth_problems, walk
from tests.support.run_report import run_report


def _one(job):
    (r,) = reports_of(job)
    return r


def _near(a: float, b: float) -> bool:
    return abs(a - b) <= 0.02 * b


def _pipeline(**over):
    """walk seed 157 of ``--forms7``: 4 denoiser calls, queued (no read between), 670 us of Python between them"""
    return form7_job("pipeline", **{"calls": 4, "models": 1, "kernels": 25, "kernel_us": 7.613, "loop_scale": 3.25,
                                    "launch_us": 11.212, "between_us": 670.916, "step_marker": False, "read": False,
                                    **over})


def test_the_last_of_few_span_steps_ends_at_its_own_work():
    """4 denoiser calls read from their ``nn.Module:`` spans: the last holds 1.39 ms of the 2.07 ms period (no
    Python of a next call after it) -- main kept it, mean 1.90 ms."""
    job = _pipeline()
    h = _one(job).hosts[0]
    assert h.steps["source"] == "annotation_spans" and h.steps["found"] == 4, h.steps["note"]
    assert _near(h.mean_step_ms(), TRUTH[0]["step_ms"]), (h.mean_step_ms(), TRUTH[0]["step_ms"])  # main: 1.901
    assert any("its own work's end" in d["reason"] for d in h.steps["dropped"])


def test_the_last_of_five_compiled_graph_calls_ends_at_its_own_work():
    """walk seed 377: 5 ``## Call CompiledFxGraph`` spans, the last 0.309 ms of a 0.405 ms period (main: mean 0.386)."""
    job = form7_job("compiled", steps=5, train=False, layers=3, kernel_us=21.546, gemm_us=5.02, launch_us=24.681,
                    graphs=True, marker="none", loader_us=63.593, hash="09dsbb37k4ccvfv61xp0x6yczga45xt2mvai1k3aq5x955yhk79k")
    r = _one(job)
    assert r.hosts[0].steps["found"] == 5 and not truth_problems(job, r), r.hosts[0].steps  # main: mean 4.8% low


def test_span_steps_whose_last_holds_a_whole_step_keep_it_control():
    """``wild/ddp_mi300x_nopool``: 5 steps of the program's spans, the last no shorter than the others' spread -- all
    5 kept, as on main."""
    r = run_report(FIXTURES / "wild", "ddp_mi300x_nopool")
    s = r.hosts[0].steps
    assert s["source"] == "annotation_spans" and s["found"] == 5 and s["count"] == 5, s


def test_a_gpu_lagging_further_each_call_is_read_on_the_gpu():
    """walk seed 612: 9 calls, 3.62 ms each on the host, 3.96 ms on the GPU; the work launched in a call ends 0.33 ms
    further past its window each call.  Main kept the host windows (the median spill small): mean 3.62 ms."""
    job = _pipeline(calls=9, models=3, kernels=40, kernel_us=36.424, loop_scale=3.088, launch_us=23.023,
                    between_us=16.965)
    r = _one(job)
    h = r.hosts[0]
    assert _near(h.mean_step_ms(), TRUTH[0]["step_ms"]), (h.mean_step_ms(), TRUTH[0]["step_ms"])  # main: 3.621
    assert not laws_broken(r)


def test_a_gpu_waited_for_each_call_keeps_its_host_windows_control():
    """The same calls, each read back (``read``): the host waits every call, the spill never grows -- the host
    windows stand for the GPU's, on main and here."""
    job = _pipeline(calls=9, models=3, kernels=40, kernel_us=36.424, loop_scale=3.088, launch_us=23.023,
                    between_us=16.965, read=True)
    h = _one(job).hosts[0]
    assert h.steps["found"] == 9 and _near(h.mean_step_ms(), TRUTH[0]["step_ms"]), h.steps


def _deepep(**over):
    """walk seed 246 of ``--forms8``: 4 training steps of 3 MoE layers, 6.9 ms of input loading before each"""
    return form8_job("deepep", **{"steps": 4, "layers": 3, "micro": 1, "gemm_us": 45.278, "a2a_us": 54.564,
                                  "attn_us": 312.475, "train": True, "internode": True, "own_build": False,
                                  "marker": "none", "loader_us": 6940.266, **over})


def test_the_last_of_few_gpu_bursts_ends_at_its_own_work():
    """Walk seed 246 as it was drawn (no marker): 4 steps read from the GPU's bursts, each running to the next burst's
    start (the next batch's 6.9 ms of loading in it), the last to its own work's end, 2.85 ms of the 9.82 ms period --
    main averaged it in (mean 8.07 ms); dropped as partial, the mean is the period (h37-laststep)."""
    job = _deepep()
    r = _one(job)
    s = r.hosts[0].steps
    assert (s["source"], s["found"], s["count"]) == ("gpu_busy_clusters", 4, 3), s
    assert [d["reason"].startswith("partial") for d in s["dropped"]] == [True], s["dropped"]
    assert not truth_problems(job, r) and not laws_broken(r)  # main: the mean step 8.075 ms, the period 9.818


def test_deepep_steps_under_profiler_steps_control():
    """Walk seed 246's job under ``ProfilerStep`` marks: its steps and period; the all-to-all a collective, the fp8
    GEMMs no mixed-precision case, the small grid's saving within its kernels' time alone (``truth_problems``)."""
    job = _deepep(marker="profiler_step")
    r = _one(job)
    assert r.hosts[0].steps["found"] == 4 and not truth_problems(job, r) and not laws_broken(r)


def test_the_deepep_form_walks_clean_under_every_law():
    """Three seeds of ``scripts/randjobs.py --forms8`` (one with 2 micro-batches overlapping), every law and the truth
    of construction."""
    assert random_form8_job(2).params["micro"] == 2
    assert walk((0, 1, 2), random_form8_job) == {"deepep"}


@pytest.mark.parametrize("train", [True, False])
def test_deepep_all_to_all_is_told_the_experts_fix(train: bool) -> None:
    """Walk seed 246's job with a heavier exchange (0.54 ms per dispatch/combine), exposed: DeepEP's all-to-all is
    an MoE's token exchange, so ``comm_exposed`` says the experts' fix -- micro-batches overlapped, experts balanced in
    training; in a forward pass no training word, DeepEP's low-latency kernels.  Main told TorchRec's pipeline of
    embedding batches and DDP's buckets (training), the tensor-parallel fix beside the forward's (h37-a2afix)."""
    job = _deepep(marker="profiler_step", a2a_us=540.564, loader_us=0.0, train=train)
    r = _one(job)
    (f,) = [f for f in r.findings if f.rule == "comm_exposed"]
    text = " ".join(a.text for a in f.actions)
    assert "micro-batch" in text and "TorchRec" not in text and "DistributedDataParallel" not in text
    assert ("auxiliary loss" in text) == train and ("low-latency" in text) == (not train)
    assert not truth_problems(job, r)
