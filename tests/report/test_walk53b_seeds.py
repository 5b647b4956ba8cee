"""The streams' jobs that broke the report's laws in session 53's walk at seed 310000 (e6613cff), each held to what
it read wrong, not only to the laws:

* ``--forms`` seed 310201, an Nsight export of 4 ranks each marking its two passes with an NVTX ``generate`` range, no
  step markers, the ranks 22 ms apart: the steps' note said the ranges were "enclosing 125% of the GPU work's
  launches" (``part<=whole``).  ``steps.nvtx_ranges._span_lines`` counted the launches inside the union of every
  rank's spans, merged as calls are told apart (``merge_touching=False``): one rank's span lying mostly past another
  rank's is a call of its own (``model.columns.held``), so the two overlapped and a launch in both counted twice.
  The share is time accounting: the ranks' spans are merged where they overlap.
"""

from __future__ import annotations

import re

from synthetic.randjobs import random_form_job
from tests.support.random_jobs import report_of


def test_ranks_spans_enclose_each_launch_once() -> None:
    """4 ranks' overlapping `generate` spans enclose every launch once: 100%, never more."""
    job = random_form_job(310201)
    assert job.params["ranks"] == 4 and job.params["step_range"] == "generate"
    (host,) = report_of(job).hosts
    m = re.search(r"enclosing (\d+)% of the GPU work's launches", host.steps["note"])
    assert m, host.steps["note"]
    assert int(m.group(1)) == 100, host.steps["note"]
    assert host.steps["found"] == job.params["steps"], host.steps["note"]
