"""One time window of a trace as the tab's step timeline draws it: lanes of events, and the GPU's idle time painted
with the breakdown's categories.

A finding names step windows (``Finding.windows``); people would rather look at one than read about it.  This
module answers "what happened in [start, end)" for one host: every GPU stream and host thread with events there
is a lane, and each GPU's idle time in the window is split into input wait, host work, launch wait and other,
by :func:`metrics.breakdown.painted_segments` -- the very painting the step breakdown sums, so the gap the
timeline highlights is the number the finding quotes.

Times are ms in the trace viewer's time base (``Trace.viewer_zero_ps``, as ``TimeWindow`` counts them).  The
answer is bounded: at most ``max_events`` events (a fair share per lane, each lane's longest; the answer says how
many were left out), ``MAX_ROWS`` stacked rows per lane and ``MAX_LANES`` lanes, names cut to ``NAME_CHARS``.  Pure: the trace
and its analysis context in, plain JSON-ready data out (``runtime.pipeline.host_timelines`` reads the file).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.common.fmt import gb, ms, ms_span, plural
from tb_gpu_advisor import devices
from tb_gpu_advisor.metrics.breakdown import category_intervals, painted_segments
from tb_gpu_advisor.metrics.context import PS_PER_MS, Context
from tb_gpu_advisor.steps.types import unmarked_pass

#: Events one window answers with at most: about 0.5 MB of JSON, and as many rects as an SVG draws smoothly.
MAX_EVENTS = 5000
#: The widest window served (ms): a step, or a few; wider windows hold more events than a picture can show.
MAX_WINDOW_MS = 10_000.0
#: Stacked rows per lane (call depth on a host thread, overlapping work on a stream); deeper events are left out.
MAX_ROWS = 6
#: Lanes per window (GPU streams first, then host threads with the most events).
MAX_LANES = 48
#: GPU idle runs per window (the longest; a whole capture of short kernels has tens of thousands of slivers).
MAX_IDLE_RUNS = 2000
#: Points of a GPU's memory series per window (the highest event of each of as many time buckets: no peak is lost).
MAX_MEMORY_POINTS = 1000
#: Characters of an event name kept (C++ kernel names run to thousands; the hover shows this much).
NAME_CHARS = 120
#: The GPU's idle categories, as the breakdown paints them (everything it paints but GPU work).
IDLE_CATEGORIES = ("kernel_switch", "startup", "stream_handoff", "unseen", "profiler", "allocator", "input_wait", "host_compute", "launch_wait", "managed_read", "other")

_GPU_KIND = {devices.KIND_KERNEL: "kernel", devices.KIND_H2D: "memcpy_h2d", devices.KIND_D2H: "memcpy_d2h",
             devices.KIND_D2D: "memcpy_d2d", devices.KIND_OTHER_COPY: "memcpy_d2d",
             devices.KIND_MEMSET: "memset",
             devices.KIND_COLLECTIVE: "collectives"}
#: The host threads' kinds of event: waiting for input, launching GPU work, host work, anything else.
_HOST_KINDS = ("input", "launch", "host_compute", "host")
#: Every kind of event a lane holds (the tab names them from ``report.legend``).
EVENT_KINDS = tuple(dict.fromkeys(_GPU_KIND.values())) + _HOST_KINDS


@dataclass
class _Lane:
    """Events of one GPU stream or host thread in the window, before bounding: indices into its table."""

    kind: str  # "gpu" | "host"
    label: str
    gpu: int | None
    start: np.ndarray  # int64 ps
    end: np.ndarray
    names: list[str]  # per event, already cut
    kinds: list[str]  # per event: _GPU_KIND values, or "input" | "launch" | "host_compute" | "host"


def window_timeline(ctx: Context, start_ms: float, end_ms: float, max_events: int = MAX_EVENTS) -> dict:
    """The window [start_ms, end_ms) of ``ctx``'s trace: lanes, GPU idle runs by category, steps; see the module."""
    origin = ctx.trace.viewer_zero_ps
    lo, hi = origin + round(start_ms * PS_PER_MS), origin + round(end_ms * PS_PER_MS)
    lanes = _gpu_lanes(ctx, lo, hi) + _host_lanes(ctx, lo, hi)
    total = sum(len(x.start) for x in lanes)
    lanes, lanes_left = _fewest_lanes(lanes)
    keep, keep_ps = _kept(lanes, max_events)
    idle, idle_left, idle_totals = _idle_runs(ctx, lo, hi, origin)
    out_lanes, shown, too_deep = [], 0, 0
    for lane, kept in zip(lanes, keep):
        drawn, deep = _lane_json(lane, kept, origin)
        too_deep += deep
        if drawn["events"]:
            shown += len(drawn["events"])
            out_lanes.append(drawn)
    doc = {
        "host": ctx.trace.host,
        "format": ctx.trace.format,
        "time_base": ctx.trace.time_base,
        "start_ms": start_ms,
        "end_ms": end_ms,
        "lanes": out_lanes,
        "idle": idle,
        "idle_ms": idle_totals,
        "steps": _steps_in(ctx, lo, hi, origin),
        "memory": _memory_in(ctx, lo, hi, origin),
        "events_in_window": total,
        "events_shown": shown,
        "note": _bound_note(total, shown, (sum(int((~k).sum()) for k in keep), keep_ps), too_deep, lanes_left, idle_left),
    }
    doc["display"] = display(doc, unmarked_pass(ctx.steps.count, ctx.steps.detection.source))
    return doc


def _span(start_ms: float, end_ms: float) -> str:
    return f"{ms(start_ms)}–{ms(end_ms)}"


def _lasting(start_ms: float, end_ms: float) -> str:
    """``1.20 ms (10.5 ms–11.7 ms)``: how long, and from when to when."""
    return f"{ms(end_ms - start_ms)} ({_span(start_ms, end_ms)})"


def step_name(step: int, one_pass: bool) -> str:
    """A kept step as the tab names it: "step 7", or "the pass" where the host's one step is the pass an unmarked
    capture was read as (``steps.types.unmarked_pass``) -- its "step 0" is an index of no step the capture marks."""
    return "the pass" if one_pass else f"step {step}"


def display(doc: dict, one_pass: bool = False) -> dict:
    """Every number the tab's step timeline prints of the window ``doc`` (from 0.1.0+a40), as the CLI writes times and
    bytes (``common.fmt``), aligned with the window's lists: its span, each lane's events, the idle runs, each GPU's idle
    totals, the steps' edges and names (:func:`step_name`; ``one_pass``: the host's one step is an unmarked pass), each
    GPU's memory (the highest allocated and reserved in the window, the capacity).  The tab formats no number of its
    own (``report.view``)."""
    def most(xs: list) -> str:
        xs = [x for x in xs if x is not None]
        return gb(max(xs)) if xs else ""
    return {
        "span": ms_span(doc["start_ms"], doc["end_ms"]),  # as the finding names the window
        "lanes": [[_lasting(e[0], e[1]) for e in lane["events"]] for lane in doc["lanes"]],
        "idle": [_lasting(r["start_ms"], r["end_ms"]) for r in doc["idle"]],
        "idle_ms": [{"gpu": g["gpu"], "ms": {c: ms(v) for c, v in g["ms"].items()}} for g in doc["idle_ms"]],
        "steps": [{"start": ms(st["start_ms"]), "end": ms(st["end_ms"]), "name": step_name(st["step"], one_pass)}
                  for st in doc["steps"]],
        "memory": [{"peak": most(m["allocated"]), "reserved": most(m["reserved"]),
                    "capacity": gb(m["capacity_bytes"]) if m.get("capacity_bytes") else ""} for m in doc["memory"]],
    }


def _ms(ps: int, origin: int) -> float:
    return round((int(ps) - origin) / PS_PER_MS, 6)


def _cut(name: str) -> str:
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…"


def _gpu_lanes(ctx: Context, lo: int, hi: int) -> list[_Lane]:
    """One lane per stream of each GPU with events overlapping [lo, hi)."""
    out = []
    for g in ctx.gpus:
        d = g.d
        m = np.flatnonzero((d.end > lo) & (d.start < hi))
        if not m.size:
            continue
        for sid in np.unique(d.stream[m]).tolist():
            idx = m[d.stream[m] == sid]
            stream = d.stream_names[sid] if 0 <= sid < len(d.stream_names) else f"stream {sid}"
            out.append(_Lane("gpu", f"GPU {d.gpu} · {stream}", d.gpu, d.start[idx].astype(np.int64),
                             d.end[idx].astype(np.int64), [_cut(d.names[i]) for i in d.name[idx].tolist()],
                             [_GPU_KIND.get(int(k), "kernel") for k in d.kind[idx].tolist()]))
    return out


def _host_lanes(ctx: Context, lo: int, hi: int) -> list[_Lane]:
    """One lane per host thread (line) with events overlapping [lo, hi), kinds from the analysis' host roles."""
    h = ctx.h
    if not len(h):
        return []
    m = np.flatnonzero((h.end > lo) & (h.start < hi))
    out = []
    for line in np.unique(h.line[m]).tolist():
        idx = m[h.line[m] == line]
        kinds = np.full(idx.size, "host", dtype=object)
        kinds[ctx.host_work[idx]] = "host_compute"
        kinds[h.corr[idx] >= 0] = "launch"
        kinds[ctx.host_input[idx]] = "input"
        label = h.line_names[line] if 0 <= line < len(h.line_names) else f"thread {line}"
        out.append(_Lane("host", label, None, h.start[idx].astype(np.int64), h.end[idx].astype(np.int64),
                         [_cut(h.names[i]) for i in h.name[idx].tolist()], kinds.tolist()))
    return out


def _fewest_lanes(lanes: list[_Lane]) -> tuple[list[_Lane], int]:
    """At most MAX_LANES: every GPU stream first, then the host threads with the most events."""
    if len(lanes) <= MAX_LANES:
        return lanes, 0
    gpu = [x for x in lanes if x.kind == "gpu"][:MAX_LANES]
    host = sorted((x for x in lanes if x.kind == "host"), key=lambda x: -len(x.start))[: MAX_LANES - len(gpu)]
    kept = {id(x) for x in gpu + host}
    return [x for x in lanes if id(x) in kept], len(lanes) - len(kept)


def _quotas(sizes: list[int], budget: int) -> list[int]:
    """Events each lane may draw: a fair share of ``budget``, what a small lane does not use going to the others.

    A share per lane, not the longest events overall: a host thread's long calls would otherwise push a GPU
    stream's kernels (microseconds each) out of the picture, and with them the GPU the finding is about."""
    quotas = [0] * len(sizes)
    left = max(0, budget)
    for k, i in enumerate(sorted(range(len(sizes)), key=lambda j: sizes[j])):
        quotas[i] = min(sizes[i], left // (len(sizes) - k))
        left -= quotas[i]
    return quotas


def _kept(lanes: list[_Lane], max_events: int) -> tuple[list[np.ndarray], int]:
    """Per lane, which events are drawn: all when every lane fits in ``max_events``, else each lane's longest up to
    its quota (:func:`_quotas`; ties by start).  Also the shortest duration drawn in a lane that left some out, in
    ps (0: nothing left out)."""
    sizes = [x.start.size for x in lanes]
    if sum(sizes) <= max_events:
        return [np.ones(n, dtype=bool) for n in sizes], 0
    keep, shortest = [], None
    for lane, quota in zip(lanes, _quotas(sizes, max_events)):
        dur = lane.end - lane.start
        mask = np.zeros(dur.size, dtype=bool)
        chosen = np.lexsort((lane.start, -dur))[:quota]
        mask[chosen] = True
        keep.append(mask)
        if quota < dur.size:
            low = int(dur[chosen].min()) if chosen.size else int(dur.max()) + 1
            shortest = low if shortest is None else min(shortest, low)
    return keep, max(shortest or 0, 1)


def _lane_json(lane: _Lane, keep: np.ndarray, origin: int) -> tuple[dict, int]:
    """A lane's kept events, each ``[start_ms, end_ms, name, kind, row]``; and how many did not fit in MAX_ROWS.
    Rows: first fit by start, so a call nested in another lands one row below it."""
    order = np.lexsort((-(lane.end - lane.start), lane.start))  # by start, the enclosing (longer) first
    row_end: list[int] = []
    events, deep = [], 0
    for i in order[keep[order]].tolist():
        s, e = int(lane.start[i]), int(lane.end[i])
        row = next((r for r, last in enumerate(row_end) if last <= s), len(row_end))
        if row >= MAX_ROWS:
            deep += 1
            continue
        if row == len(row_end):
            row_end.append(e)
        else:
            row_end[row] = e
        events.append([_ms(s, origin), _ms(e, origin), lane.names[i], lane.kinds[i], row])
    return {"kind": lane.kind, "label": lane.label, "gpu": lane.gpu, "rows": len(row_end), "events": events}, deep


def _idle_runs(ctx: Context, lo: int, hi: int, origin: int) -> tuple[list[dict], int, list[dict]]:
    """Each GPU's idle time in the window, by the category the breakdown gives it (GPUs with no work are left out):
    the MAX_IDLE_RUNS longest runs in time order, how many shorter ones were left out, and each GPU's total per
    category over every run, drawn or not.

    The totals are why the window can be trusted beside the report: over a step's window they are that step's row
    of the ledger (``StepRow.breakdown``), to the microsecond, however many slivers the drawing leaves out."""
    runs: list[tuple[int, int, int, str]] = []
    totals: list[dict] = []
    for g in ctx.gpus:
        if not g.active:
            continue
        starts, ends, cats = painted_segments(category_intervals(ctx, g), lo, hi)
        mine = [(g.d.gpu, s, e, c) for s, e, c in zip(starts.tolist(), ends.tolist(), cats) if c in IDLE_CATEGORIES]
        runs.extend(mine)
        per: dict[str, int] = {}
        for _, s, e, c in mine:
            per[c] = per.get(c, 0) + (e - s)
        totals.append({"gpu": g.d.gpu, "ms": {c: round(per[c] / PS_PER_MS, 6) for c in IDLE_CATEGORIES if c in per}})
    kept = sorted(runs, key=lambda r: (r[1] - r[2], r[1]))[:MAX_IDLE_RUNS] if len(runs) > MAX_IDLE_RUNS else runs
    kept = sorted(kept, key=lambda r: (r[0], r[1]))
    return ([{"gpu": gpu, "start_ms": _ms(s, origin), "end_ms": _ms(e, origin), "category": c} for gpu, s, e, c in kept],
            len(runs) - len(kept), totals)


def _memory_in(ctx: Context, lo: int, hi: int, origin: int) -> list[dict]:
    """Each GPU's allocated and reserved bytes through the window (issue #29: the memory under the lanes): the level
    when the window opens, then every allocator event in it (bucketed to MAX_MEMORY_POINTS, each bucket its highest),
    with the GPU's capacity where known; [] where the trace records no allocator events."""
    out = []
    for gpu, me in sorted(ctx.trace.memory.items()):
        a, b = int(np.searchsorted(me.t, lo, side="left")), int(np.searchsorted(me.t, hi, side="right"))
        idx = np.arange(max(a - 1, 0), b)
        if not idx.size:
            continue
        if idx.size > MAX_MEMORY_POINTS:
            bucket = (me.t[idx] - lo) * MAX_MEMORY_POINTS // max(hi - lo, 1)
            order = np.lexsort((-me.allocated[idx], bucket))
            first = np.ones(idx.size, bool)
            first[1:] = bucket[order[1:]] != bucket[order[:-1]]
            idx = np.unique(np.concatenate([idx[:1], idx[order[first]]]))
        d = ctx.trace.device(gpu)
        cap = me.limit_bytes or (d.info.memory_bytes if d is not None else None)
        out.append({"gpu": gpu, "baseline": me.baseline, "capacity_bytes": cap,
                    "t_ms": [max(_ms(int(t), origin), _ms(lo, origin)) for t in me.t[idx].tolist()],
                    "allocated": me.allocated[idx].tolist(),
                    "reserved": [int(v) if v >= 0 else None for v in me.reserved[idx].tolist()]})
    return out


def _steps_in(ctx: Context, lo: int, hi: int, origin: int) -> list[dict]:
    """The kept steps overlapping the window (host-wide windows, as ``TimeWindow`` names them)."""
    w = ctx.steps.host_windows
    if not ctx.steps.count:
        return []
    m = np.flatnonzero((w[:, 1] > lo) & (w[:, 0] < hi))
    return [{"step": int(ctx.steps.ids[i]), "start_ms": _ms(w[i, 0], origin), "end_ms": _ms(w[i, 1], origin)}
            for i in m.tolist()]


def _bound_note(total: int, shown: int, short: tuple[int, int], too_deep: int, lanes_left: int, idle_left: int = 0) -> str:
    """What the bounds left out, in words ('' when nothing was); ``short``: (events left out for being the shortest,
    the shortest duration kept in ps)."""
    parts = []
    if short[0]:
        parts.append(f"the {short[0]} shortest of the busiest lanes are left out to keep the answer small (each lane "
                     f"keeps its longest; the shortest drawn there lasts {short[1] / 1e6:.3g} us)")
    if too_deep:
        parts.append(f"{plural(too_deep, 'event')} nested deeper than {MAX_ROWS} rows are left out")
    if lanes_left:
        parts.append(f"{plural(lanes_left, 'host thread')} with the fewest events {'is' if lanes_left == 1 else 'are'} left out (at most {MAX_LANES} lanes)")
    if idle_left:
        parts.append(f"the {idle_left} shortest GPU idle runs are not drawn (at most {MAX_IDLE_RUNS})")
    if not parts:
        return ""
    return f"{shown} of {total} events shown: " + "; ".join(parts) + "."
