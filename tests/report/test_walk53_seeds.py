"""Jobs session 53's lead found read wrong (base d4d3db12), each held to what it read wrong:

* default stream seed 35, a single-process CUDA-graph inference loop marking each pass with
  ``record_function("generate")`` back to back: Kineto's three-decimal microseconds overlap each range's end with
  the next start by up to 1 ns at a PyTorch 2.x trace's clock, and the program's repeated spans merged overlapping
  instances as one call -- 10 ranges read as 7 spans and 5 kept steps (its PyTorch 1.8 twin, whose whole
  microseconds touch exactly, read 10 and 8: h37-probe52x *Left* 3);
* the same with ``eval_step`` ranges of an inference loop (h37-nest53's reverted case): 10 ranges read as 7 spans,
  three of them two passes long.  ``model.columns.union_intervals``' calls now ask the one nesting rule
  (``model.columns.held``: held only where mostly inside).
"""

from __future__ import annotations

from synthetic.randjobs import kineto_job, random_job
from tests.support.random_jobs import check, stepped_host


def test_back_to_back_repeated_spans_are_each_an_iteration() -> None:
    job = random_job(35)
    assert job.fmt == "kineto" and job.params["marker"] == "range" and job.params["loop_us"] == 0.0
    _, host = stepped_host(job, "annotation_spans")
    assert f"{job.params['steps']} `{job.params['range_name']}`" in host.steps["note"], host.steps["note"]
    assert host.steps["count"] == job.params["steps"] - 2  # the first and last, cut by the window, dropped
    assert not check(job)


def test_back_to_back_eval_step_ranges_are_each_a_pass() -> None:
    job = kineto_job(1, marker="range", range_name="eval_step", train=False, steps=10, loop_us=0.0, python_us=3.3)
    _, host = stepped_host(job, "annotation_spans")
    assert "10 `eval_step`" in host.steps["note"], host.steps["note"]
    assert host.steps["count"] == 8
    assert not check(job)
