"""Source 10's ``nvtx_top_range`` of a training range or a serving engine's step range
(TensorRT-LLM's ``_forward_step``), each iteration opened by the phase before it (:func:`_iteration_opening`).

Why: a training loop or serving engine may mark only a phase of each iteration (the forward, the engine's forward
step); the iteration runs from the phase that opens it to the next one's opening, so the host's time between phases
is in the step.  Tried after NVTX step ranges and the program's own spans, before bursts inside the job's frame.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import frameworks
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.frameworks import engines, nvtx, user_ranges
from tb_gpu_advisor.job import Job
from tb_gpu_advisor.model.columns import union_intervals
from tb_gpu_advisor.model.trace import HostEvents, Trace
from tb_gpu_advisor.steps.ranges import _max_per_line, _range_step_ids, _top_level
from tb_gpu_advisor.steps.windows import MarkedSteps, _group_windows, _windows_by_line


def _training_range_steps(trace: Trace, job: Job | None) -> MarkedSteps | None:
    """Steps of a training job known by its own NVTX ranges (``Kind.from_ranges``): the training range that lasts
    longest on average (the backward pass holds the gradient all-reduces it launches, so it outlasts them), where it
    repeats on a thread -- each repeat starts an iteration.  None where it does not repeat (one iteration).  Each
    rank's thread keeps its own windows (:func:`_windows_by_line`), as every NVTX reading's (h37-ranksteps)."""
    r = trace.ranges
    if job is None or not job.kind.from_ranges or job.kind.kind != "training" or r is None or not r.idx.size:
        return None
    h = trace.h
    idx = user_ranges.marked_ranges(r)
    is_training = np.fromiter((nvtx.is_training_range(n) for n in h.names), bool, len(h.names))
    sel = idx[is_training[h.name[idx]]]
    if not sel.size:
        return None
    names, inv = np.unique(h.name[sel], return_inverse=True)
    dur = (h.end[sel] - h.start[sel]).astype(np.float64)
    best = int(names[int(np.argmax(np.bincount(inv, weights=dur) / np.bincount(inv)))])
    pick = sel[h.name[sel] == best]
    if _max_per_line(h, pick) < 2:
        return None
    pick = pick[np.lexsort((h.start[pick], h.line[pick]))]
    lines = np.unique(h.line[pick]).size
    note = (f"{frameworks.ranges_word(trace)} `{h.names[best]}`, the training iteration's own range ({pick.size} on {lines} "
            f"thread{'s' if lines > 1 else ''}): each repeat starts a step")
    start, end = h.start[pick].astype(np.int64, copy=False), h.end[pick].astype(np.int64, copy=False)
    opening = _iteration_opening(h, idx, pick)
    if opening is not None:  # the range is a phase of the iteration: the iteration opens with the phase before it
        first, start, end = opening
        note += f", from the iteration's first phase `{h.names[int(h.name[first])]}`, which precedes it every time"
    ids = _range_step_ids(h, pick)
    u, s, e = _group_windows(ids, start, end)
    return MarkedSteps("nvtx_top_range", note, u, s, e, _windows_by_line(h.line[pick], ids, start, end, u))


def _engine_range_steps(trace: Trace, job: Job | None, launches: list[np.ndarray]) -> MarkedSteps | None:
    """Steps of a serving engine's loop from its own NVTX ranges: its step range (``Engine.step_span``, run once an
    iteration: TensorRT-LLM's ``_forward_step``) repeated on a thread, one phase of an iteration the earlier phase
    before it opens every time (:func:`_iteration_opening`: ``_fetch_new_requests``), where the iterations so read
    hold at least ``job.span_step_coverage`` of the GPU work; None otherwise.

    Why: the step range alone holds only its phase's work (the forward's kernels, not the sampling's or the batch's
    upload), so as a span of the program's own it holds too little of the work to be read as the step, and repeated
    fewer than ``steps.nvtx_min_repeats`` times it marks none as a top-level range; the capture then read as one
    serving pass -- 2 ranks of 2 TensorRT-LLM iterations, one pass of 77.3 ms (h37-nsyslast).  The engine names its
    iteration's phase, and its repeats count the iterations; each rank's thread keeps its own windows (its GPU's last
    step spanned the ranks' lag without them, h37-ranksteps)."""
    rg = trace.ranges
    engine = engines.by_id(job.kind.engine) if job is not None else None
    if engine is None or not engine.step_span or rg is None or not rg.idx.size:
        return None
    h = trace.h
    idx = user_ranges.marked_ranges(rg)
    idx = idx[np.lexsort((h.start[idx], h.line[idx]))]
    for pattern in engine.step_span:
        hit = np.fromiter((bool(pattern.search(n)) for n in h.names), bool, len(h.names))
        pick = idx[hit[h.name[idx]]]
        if _max_per_line(h, pick) < 2:
            continue
        opening = _iteration_opening(h, idx, pick)
        if opening is None or not _windows_hold_work(h, launches, *opening[1:]):
            continue
        first, start, end = opening
        lines = np.unique(h.line[pick]).size
        note = (f"{frameworks.ranges_word(trace)} `{h.names[int(h.name[pick[0]])]}`, {engine.name}'s step range ({pick.size} "
                f"on {lines} thread{'s' if lines > 1 else ''}), each iteration from its first phase "
                f"`{h.names[int(h.name[first])]}`, which precedes it every time")
        ids = _range_step_ids(h, pick)
        u, s_, e_ = _group_windows(ids, start, end)
        return MarkedSteps("nvtx_top_range", note, u, s_, e_, _windows_by_line(h.line[pick], ids, start, end, u))
    return None


def _windows_hold_work(h: HostEvents, launches: list[np.ndarray], start: np.ndarray, end: np.ndarray) -> bool:
    """Whether the windows (``start``, ``end``, ps) enclose at least ``job.span_step_coverage`` of the launches of the
    capture's device events: the share a span must hold to be the step (as :func:`_hold_the_work`)."""
    rec = np.concatenate([a[a >= 0] for a in launches]) if launches else np.zeros(0, np.int64)
    if not rec.size:
        return False
    rs, re_ = union_intervals(start.astype(np.int64, copy=False), end.astype(np.int64, copy=False))
    t = h.start[rec].astype(np.int64, copy=False)
    j = np.searchsorted(rs, t, side="right") - 1
    return float(((j >= 0) & (t <= re_[np.maximum(j, 0)])).mean()) >= T("job.span_step_coverage")


def _iteration_opening(h: HostEvents, marked: np.ndarray, pick: np.ndarray) -> tuple[int, np.ndarray, np.ndarray] | None:
    """Where each iteration opens and ends, per repeat of the training range ``pick`` (sorted by line, start), where
    that range is one phase of it: the repeats of a top-level range on the same thread that starts before the first
    repeat of ``pick`` and once between every two (``data``, ``fwd`` before ``bwd``, ``opt``) -- the earliest such
    name is the iteration's first phase -- each iteration ending with the last top-level range before the next opens.
    (One opening range, starts, ends); None where none precedes it so (the training range opens each iteration, or
    the order varies).

    Why: a backward range repeats once an iteration, but starts mid-way through it; its repeats as step starts put each
    iteration's forward in the step before and cut the last step to its backward and optimizer (walk seed 132 of
    ``--forms11``: ``data``/``fwd``/``bwd``/``opt``, the last of 2 steps 1.75 ms of the 7.06 ms period)."""
    starts, ends = [], []
    for ln in np.unique(h.line[pick]).tolist():
        mine = pick[h.line[pick] == ln]
        top = marked[h.line[marked] == ln]
        top = top[np.lexsort((-(h.end[top] - h.start[top]).astype(np.int64), h.start[top]))]
        top = top[_top_level(h, top)]
        opening = next((same for same in (top[h.name[top] == h.name[i]] for i in top[h.start[top] < h.start[mine[0]]])
                        if _interleaves(h, same, mine)), None)
        if opening is None:
            return None
        s = h.start[opening].astype(np.int64)
        k = np.searchsorted(s, h.start[top].astype(np.int64), side="right") - 1
        e = s.copy()
        np.maximum.at(e, k[k >= 0], h.end[top[k >= 0]].astype(np.int64))
        starts.append(s)
        ends.append(e)
    return int(opening[0]), np.concatenate(starts), np.concatenate(ends)


def _interleaves(h: HostEvents, first: np.ndarray, then: np.ndarray) -> bool:
    """``first`` (a name's repeats, by start) starts once before each of ``then`` and after the one before it."""
    if first.size != then.size or h.name[first[0]] == h.name[then[0]]:
        return False
    fs, ts, te = h.start[first], h.start[then], h.end[then]
    return bool((fs <= ts).all() and (fs[1:] >= te[:-1]).all())
