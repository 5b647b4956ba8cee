"""The span a program's steps were read from names no place of the host's work (h37-survey66, issue #37 class 2: the
user's own structure).

The wrong assumption (``metrics.breakdown._around_a_step``): *a call that is the step encloses the step's window*.
Steps read from the program's own repeated spans (``annotation_spans``) run from each span's start to the next one's,
so only the last span -- whose window ends at its own end -- enclosed its window.  That left the other spans of the
step's name in ``frames_in_host_work``, shorter in total than the call inside them that held the host's work, and
``deepest_frame`` named the step itself: a Mamba-3 decode loop's Triton variant on an A100
(michaelYZh/mamba3-fused-triton-kernel, no licence: read in place, not kept) read "1.06 ms of this time lies inside the
Python call `src/models/inference.py(117): step`" -- the decoder's step, 4 of its 5 spans -- where
`inference.py(239): _step_triton` inside it held 97% of the host's work.  A call beginning exactly where a kept step
begins is now the call the step was read from, and names no place.

Generator: :func:`synthetic.torchtrace.write_decode_spans`, truth by construction.
"""

from __future__ import annotations

from synthetic.torchtrace import DECODE_INNER_CALL, DECODE_STEP_SPAN, write_decode_spans
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics


def test_the_host_work_is_placed_in_the_call_inside_the_step_span(tmp_path):
    path = tmp_path / "decode.pt.trace.json"
    truth = write_decode_spans(str(path))
    m = host_metrics(read_trace(str(path)))
    m = m[0] if isinstance(m, tuple) else m
    assert m.steps.source == "annotation_spans" and m.steps.count == truth["steps"], m.steps
    assert m.host_work_frame is not None
    name, held = m.host_work_frame
    assert name != DECODE_STEP_SPAN, m.host_work_frame  # main: the step span, 538 us of its 4 unenclosing calls
    assert name == DECODE_INNER_CALL, m.host_work_frame
    assert 0.5 * truth["host_work_ms"] <= held <= truth["host_work_ms"], (held, truth)


def test_a_call_opening_a_marked_step_still_names_its_place(tmp_path):
    """h37-review31: main's second clause (a call beginning where a kept step begins is the step's own span) held for
    every step source, so where the steps are the profiler's marks -- no call was read as a step -- a call that opens
    a marked step at the mark's microsecond (a whole-us clock, the call after ``prof.step()``) was dropped with its
    host work, and the report named no place for it.  Only steps read from the program's spans are calls."""
    from synthetic.torchtrace import write_marked_decode

    path = tmp_path / "marked.pt.trace.json"
    truth = write_marked_decode(str(path))
    m = host_metrics(read_trace(str(path)))
    m = m[0] if isinstance(m, tuple) else m
    assert m.steps.source == "profiler_step" and m.steps.count >= truth["steps"] - 2, m.steps
    assert m.host_work_frame is not None  # main: None, the call dropped as "the step's own span"
    name, held = m.host_work_frame
    assert name == truth["host_call"] and 0.5 * truth["host_work_ms"] <= held <= truth["host_work_ms"], (m.host_work_frame, truth)
