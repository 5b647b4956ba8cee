"""Control (passes on base too): a CUDA job recorded with Python frames only on a side stream reads its job kind from
those frames, as on the null stream (h37-snap59, item 1 of session 58's *Left*: the "unnamed" such a job reads is its
vendor -- no stream 0, no frame naming a build -- not its kind).

By construction: ``training_iterations`` (forward, backward, optimizer step) and ``forward_only(grad=False)`` recorded
``stacks="python"`` (Windows, ``record_context_cpp=False``), their segments and entries moved to one side stream's
handle (``on_stream``)."""

from __future__ import annotations

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_reports import report, written

SIDE = 94_000_000_000_000  # a side stream's handle (``torch.cuda.Stream()``), never the null stream's 0


@pytest.mark.parametrize("make,kind", [(lambda: ms.training_iterations(iterations=3), "training"),
                                       (lambda: ms.forward_only(grad=False), "inference")])
def test_control_python_frames_on_a_side_stream_read_the_kind(tmp_path, make, kind):
    sc = make()
    doc = ms.on_stream(ms.as_recorded(sc.doc, stacks="python"), SIDE)
    rep = report(written(tmp_path, ms.Scenario(doc, sc.truth)))
    assert rep.job["kind"] == kind
    assert rep.capture["vendor"] == "unnamed"  # the vendor is what such a file cannot tell (SURVEY, h37-snap59)
