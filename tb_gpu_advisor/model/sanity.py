"""Times that make no physical sense, in any format: what the neutral trace model can check of every reader.

A capture's clock runs forward, its events last a non-negative time and a capture lasts far less than a day.  A file
whose every event starts at the same instant or lasts no time, or whose events end before they start or lie days
apart, was not
written by a profiler's clock: its numbers would be computed on nothing and could read as "healthy".  Each such
finding is damage (``Trace.problems``): the report is partial and never healthy.  The readers check what their own
encoding can get wrong (a Kineto ``ts`` of 1e308, a string ``dur``); this module checks what is left, on the columns
every reader produces, without copying them (a 1 GB capture's columns are hundreds of MB).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tb_gpu_advisor.model.damage import Damage, contradiction

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import Trace

#: No profiler capture lasts a day (ps).
MAX_CAPTURE_PS = 86_400 * 10**12
#: Fewer events than this that share one start are no evidence of a broken clock (a kernel and its launch can).
MIN_EVENTS_SAME_START = 3


def time_problems(trace: Trace) -> list[Damage]:
    """The damage the trace's times show (empty for a sane clock): each a ``contradiction`` record -- the events were
    read, and their times contradict each other or any clock, whatever was cut."""
    tables = [t for t in (trace.h, *trace.devices) if t is not None and len(t)]
    if not tables:
        return []
    out = []
    n = sum(len(t) for t in tables)
    lo = min(int(t.start.min()) for t in tables)
    hi = max(int(t.start.max()) for t in tables)
    if n >= MIN_EVENTS_SAME_START and lo == hi:
        out.append(contradiction("same_start", f"all {n:,} events start at the same instant: the file's times are "
                                 "not a profiler clock's"))
    elif n >= MIN_EVENTS_SAME_START and not any(bool((t.end > t.start).any()) for t in tables):
        out.append(contradiction("no_durations", f"all {n:,} events last no time: the file's durations are not a "
                                 "profiler clock's"))
    backwards = sum(int(np.count_nonzero(t.end < t.start)) for t in tables)
    if backwards:
        out.append(contradiction("ends_before_start", f"events that end before they start: {backwards:,}"))
    if hi - lo > MAX_CAPTURE_PS:
        far = _far_from_middle(tables)
        if far:
            out.append(contradiction("far_start", f"events that start more than a day from the capture's other "
                                     f"events: {far:,}"))
    return out


def _far_from_middle(tables: list) -> int:
    """Events more than a day from the median start of the largest table (the bulk of the capture)."""
    ref = max(tables, key=len)
    mid = int(np.median(ref.start))
    return sum(int(np.count_nonzero(np.abs(t.start - mid) > MAX_CAPTURE_PS)) for t in tables)


#: The longest name kept whole.  Real names stay far below it (the longest templated CUDA kernel names we hold are a
#: few kB); past it a name is hostile or broken, and every pass that matches names (op kinds, markers, frameworks:
#: hundreds of patterns) would cost its length each time.
MAX_NAME_CHARS = 1 << 16


def cut_long_names(trace: Trace) -> int:
    """Cut every name of the trace's tables longer than :data:`MAX_NAME_CHARS` (in place); how many were cut.

    A cut name keeps its head and says how long it was, with its index so two cut names stay two names."""
    cut = 0
    lists = [trace.h.names, trace.h.line_names] if trace.h is not None else []
    for d in trace.devices:
        lists += [d.names, d.strings, d.op_text, d.stream_names]
    for names in lists:
        for i, s in enumerate(names):
            if isinstance(s, str) and len(s) > MAX_NAME_CHARS:
                names[i] = f"{s[:MAX_NAME_CHARS]}... [#{i}, cut from {len(s):,} characters]"
                cut += 1
    return cut
