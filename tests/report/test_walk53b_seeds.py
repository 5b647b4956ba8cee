"""The streams' jobs that broke the report's laws in session 53's walk at seed 310000 (e6613cff), each held to what
it read wrong, not only to the laws:

* ``--forms`` seed 310201, an Nsight export of 4 ranks each marking its two passes with an NVTX ``generate`` range, no
  step markers, the ranks 22 ms apart: the steps' note said the ranges were "enclosing 125% of the GPU work's
  launches" (``part<=whole``).  ``steps.nvtx_ranges._span_lines`` counted the launches inside the union of every
  rank's spans, merged as calls are told apart (``merge_touching=False``): one rank's span lying mostly past another
  rank's is a call of its own (``model.columns.held``), so the two overlapped and a launch in both counted twice.
  The share is time accounting: the ranks' spans are merged where they overlap;
* ``--forms12`` seed 310059, a benchmark's 3 warm-up and 4 measured passes, each a ``forward`` and a ``backward``
  range, one ``resnet50_inference`` range framing the measured ones: "enclosing 101% of the GPU work's launches".
  ``job.structure._opening_forwards`` summed each iteration's launches, and the iterations run back to back -- each
  ends where the next forward opens, so the launch at that instant was in both.  Each launch counts once
  (``model.columns.count_within``), as the repeated spans' own coverage (``_candidates``) now counts too;
* ``--forms18`` seed 310387, a training snapshot recorded with ``stacks="python"`` (6 iterations of 2 micro-batches,
  a leak growing 96 MiB each iteration): no leak finding.  The backward runs on autograd's engine thread, which has no
  Python frame, so its gradients carry no backward phase; ``job.iterations._backward_held`` read none held at any
  micro-batch's start, the micro-batches were not told from iterations, and the one site repeating alike -- the leak's
  own size, kept by the last iteration's 2 micro-batches -- opened "2 iterations".  The leak's rounds, ended at those,
  were one.  The gradients held are the backward's allocations as the phases read them: frameless ones where the
  history shows an optimizer and no backward frame.
"""

from __future__ import annotations

import re

from synthetic.randjobs import random_form12_job, random_form18_job, random_form_job
from tests.support.random_jobs import report_of, stepped_host


def test_ranks_spans_enclose_each_launch_once() -> None:
    """4 ranks' overlapping `generate` spans enclose every launch once: 100%, never more."""
    job = random_form_job(310201)
    assert job.params["ranks"] == 4 and job.params["step_range"] == "generate"
    (host,) = report_of(job).hosts
    m = re.search(r"enclosing (\d+)% of the GPU work's launches", host.steps["note"])
    assert m, host.steps["note"]
    assert int(m.group(1)) == 100, host.steps["note"]
    assert host.steps["found"] == job.params["steps"], host.steps["note"]


def test_back_to_back_iterations_enclose_each_launch_once() -> None:
    """Iterations from each forward to the next touch: the launch where they meet is counted once, at most 100%."""
    job = random_form12_job(310059)
    assert job.fmt == "framed_pass" and job.params["phases"]
    (host,) = report_of(job).hosts
    m = re.search(r"(\d+) iterations, each from a `forward`.*?enclosing (\d+)% of the GPU work's launches",
                  host.steps["note"])
    assert m, host.steps["note"]
    assert int(m.group(1)) == job.params["warmup"] + job.params["measured"]
    assert int(m.group(2)) <= 100, host.steps["note"]


def test_a_python_stack_snapshot_tells_micro_batches_from_iterations() -> None:
    """Gradients with no frame are the backward's: 6 iterations of 2 micro-batches, and the leak growing over them."""
    job = random_form18_job(310387)
    assert job.fmt == "snapshot_stackless" and job.params["stacks"] == "python" and job.params["micro_batches"] == 2
    report, host = stepped_host(job, "memory_iterations")
    assert f"{job.params['iterations']} times the allocated bytes climb" in host.steps["note"], host.steps["note"]
    assert "each of 2 micro-batches" in host.steps["note"], host.steps["note"]
    (leak,) = [f for f in report.findings if f.rule == "memory_leak"]
    assert leak.metric.detail["iterations"] == job.params["iterations"]
    per_step = job.params["micro_batches"] * job.params["leak_mib"] * 2**20  # the first iteration's; k times the kth
    assert leak.metric.detail["leak_end_bytes"] == per_step * sum(range(1, job.params["iterations"] + 1))
