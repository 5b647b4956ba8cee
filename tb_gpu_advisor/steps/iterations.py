"""A framework's own iterations from the ranges that close each one (DeepSpeed's ZeRO optimizer
``step``, ``frameworks.nvtx``): each step runs from the end of one iteration-closing range to the end of the next,
per rank's thread, the first from that thread's first framework range less the lead every later iteration shows
before its own (never before the capture window's start).

Why: such a framework marks no step, only the update that ends it; read as ranges alone, the update would be taken
for the step.  Part of the ``nvtx_range`` source, asked where no step-named range exists.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.frameworks import nvtx, user_ranges
from tb_gpu_advisor.job import structure as job_structure
from tb_gpu_advisor.job.structure import SpanSteps
from tb_gpu_advisor.model.trace import Trace
from tb_gpu_advisor.steps.ranges import _ranges_word
from tb_gpu_advisor.steps.windows import _aligned_line_windows, _group_windows


def _framework_iterations(trace: Trace, user: np.ndarray) -> tuple | None:
    """Steps of a training job marked by its framework's own ranges (``user_ranges.framework_written_mask``), where one
    of them closes each iteration (``nvtx.is_framework_step_end``: DeepSpeed's ZeRO optimizer's ``step``), at least
    twice on a thread: each iteration from the end of one such range to the end of the next, the first from the
    thread's first framework range -- the micro-batches' ``forward`` / ``backward`` inside.  ``user``: bool per range
    of ``trace.ranges``, the ranges that may mark steps.  None elsewhere.

    Why: the framework's ranges are its calls, not the iteration; its engine's ``forward``, the most repeated of them,
    is once a micro-batch, and under gradient accumulation a step read from it was a quarter of an iteration with the
    optimizer's step in one of four (h37-nvtx22).  Each rank's thread keeps its own windows
    (:func:`_aligned_line_windows`): the ranks' windows of one iteration merged run from the first rank's start to the
    last's end, and every GPU's last step spanned the ranks' lag -- 4 ranks 50 us apart, the last 3.12 of 2.97 ms
    (h37-ranksteps, ``--forms12`` walk seed 494)."""
    r, h = trace.ranges, trace.h
    written = user & user_ranges.framework_written_mask(h, r)
    ends = written & _framework_step_ends(trace)
    if int(ends.sum()) < 2:
        return None
    parts: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for ln in np.unique(h.line[r.idx[ends]]).tolist():
        sel = r.idx[ends & (h.line[r.idx] == ln)]
        if sel.size < 2:
            continue
        e = np.sort(h.end[sel].astype(np.int64))
        starts = np.sort(h.start[r.idx[written & (h.line[r.idx] == ln)]].astype(np.int64))
        parts[int(ln)] = (np.arange(e.size, dtype=np.int64),
                          np.r_[_first_iteration_start(starts, e, _window_start_ps(trace)), e[:-1]], e)
    if not parts:
        return None
    ids, s, e = (np.concatenate([p[i] for p in parts.values()]) for i in range(3))
    u, s, e = _group_windows(ids, s, e)
    name = h.names[int(h.name[r.idx[ends][0]])]
    note = (f"{_ranges_word(trace)} `{name}`, the framework's own range closing each iteration ({int(ends.sum())} on "
            f"{len(parts)} thread{'s' if len(parts) > 1 else ''}): each step runs from the end of one to the end of the "
            f"next, its micro-batches' forward and backward inside")
    return "nvtx_range", note, u, s, e, _aligned_line_windows(parts, u)


def _framework_step_ends(trace: Trace) -> np.ndarray:
    """Per range of ``trace.ranges``, whether it is a framework's own range closing each iteration
    (``nvtx.is_framework_step_end``: DeepSpeed's ZeRO optimizer's ``step``), written by the framework."""
    r, h = trace.ranges, trace.h
    return user_ranges.framework_written_mask(h, r) & h.per_name(nvtx.is_framework_step_end)[h.name[r.idx]]


def _spans_inside_iterations(trace: Trace, own: SpanSteps) -> str:
    """Why the program's repeated spans (``job.structure``, on one thread) are no steps, in the note's words, where they
    recur inside the framework's iterations: some thread runs the framework's range closing each iteration
    (:func:`_framework_step_ends`) and the spans number at least twice its most on one thread -- the rule a repeated
    NVTX range takes against the optimizer's updates (:func:`_within_iterations`); "" else.

    Why: an iteration closes once; a span that repeats between its closes is a micro-batch's (DeepSpeed's engine
    ``forward`` under gradient accumulation) or a layer's.  One iteration of 2 micro-batches on 4 ranks read as 2 steps
    from one rank's 2 ``DeepSpeedEngine.forward`` spans, the second dropped, the first 0.137 ms lent to the GPUs that
    launched nothing in it (h37-seeds23, ``--forms12`` walk seed 3954: an iteration of 11.2 ms)."""
    r = trace.ranges
    if own.source != "annotation_spans" or r is None or not r.idx.size:
        return ""
    ends = r.idx[_framework_step_ends(trace)]
    if not ends.size:
        return ""
    closes = int(np.bincount(trace.h.line[ends].astype(np.int64)).max())
    if own.start.size < 2 * closes:
        return ""
    name = trace.h.names[int(trace.h.name[ends[0]])]
    return (f"; the program's {own.start.size} `{own.name}` spans are no steps: they recur inside its iterations, "
            f"which `{name}` closes {'once' if closes == 1 else f'{closes} times'} a thread")


def _first_iteration_start(starts: np.ndarray, ends: np.ndarray, floor: int) -> int:
    """The first iteration's start of a thread's framework ranges: ``job.structure.first_iteration_start`` (the
    lead every later iteration shows before its first range, h37-randjobs12's walk seed 84), one home for both
    readings of a step from its ends."""
    return job_structure.first_iteration_start(starts, ends, floor)


def _window_start_ps(trace: Trace) -> int:
    """Where the profiler's own window starts on the trace's clock (``Trace.window_start_ps``): no step reaches
    before it."""
    return trace.window_start_ps()
