"""The streams' jobs that broke the report's laws in session 53's walk at seed 320000 (a4882666), each held to what
it read wrong, not only to the laws:

* ``--forms18`` seed 320938, a training snapshot recorded without stacks (6 iterations of 2 micro-batches,
  ``zero_grad(set_to_none=True)``, a list keeping a 48 MiB output each micro-batch): no step and no leak finding.
  ``job.iterations._walk`` reads a repeat's backward from its longest nest of lifetimes, and the longest here ran
  through the second micro-batch's walk and a gradient it made and freed in the middle of it (made after that walk's
  first free): trimmed of the first micro-batch's gradient, too short, and not all the forward held, so no backward.
  A block freed as soon as it is made saves nothing a backward walks back: the nests leave it out.
"""

from __future__ import annotations

from synthetic.randjobs import random_form18_job
from tests.support.random_jobs import check, stepped_host


def test_a_stackless_micro_batch_walk_past_a_threaded_gradient_is_read() -> None:
    """6 iterations of 2 micro-batches read from a stackless history, and the leak growing 96 MiB each."""
    job = random_form18_job(320938)
    assert job.fmt == "snapshot_stackless" and job.params["stacks"] == "none" and job.params["micro_batches"] == 2
    report, host = stepped_host(job, "memory_iterations")
    assert host.steps["found"] == job.params["iterations"], host.steps["note"]
    (leak,) = [f for f in report.findings if f.rule == "memory_leak"]
    assert leak.metric.detail["iterations"] == job.params["iterations"]
    per_step = job.params["micro_batches"] * job.params["leak_mib"] * 2**20
    assert leak.metric.detail["leak_end_bytes"] == per_step * job.params["iterations"]
    assert check(job) == []
