"""A framework's own iterations from the ranges that close each one (DeepSpeed's ZeRO optimizer
``step``, ``frameworks.nvtx``): each step runs from the end of one iteration-closing range to the end of the next,
per rank's thread, the first from that thread's first framework range less the lead every later iteration shows
before its own (never before the capture window's start; the silence the first has no room for is the tail of the
iteration before, :func:`_with_silent_tails`).

Why: such a framework marks no step, only the update that ends it; read as ranges alone, the update would be taken
for the step.  Part of the ``nvtx_range`` source, asked where no step-named range exists.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices, frameworks
from tb_gpu_advisor.frameworks import nvtx, user_ranges
from tb_gpu_advisor.job import Job
from tb_gpu_advisor.job import structure as job_structure
from tb_gpu_advisor.job.structure import SpanSteps
from tb_gpu_advisor.model.columns import loop_turn
from tb_gpu_advisor.model.trace import HostEvents, Trace
from tb_gpu_advisor.steps.windows import MarkedSteps, _aligned_line_windows, _group_windows


def _framework_iterations(trace: Trace, user: np.ndarray) -> MarkedSteps | None:
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
        starts = np.sort(h.start[r.idx[written & (h.line[r.idx] == ln)]].astype(np.int64))
        e = _with_silent_tails(trace, starts, np.sort(h.end[sel].astype(np.int64)))
        parts[int(ln)] = (np.arange(e.size, dtype=np.int64),
                          np.r_[_first_iteration_start(starts, e, _window_start_ps(trace)), e[:-1]], e)
    if not parts:
        return None
    name = h.names[int(h.name[r.idx[ends][0]])]
    note = (f"{frameworks.ranges_word(trace)} `{name}`, the framework's own range closing each iteration ({int(ends.sum())} on "
            f"{len(parts)} thread{'s' if len(parts) > 1 else ''}): each step runs from the end of one to the end of the "
            f"next, its micro-batches' forward and backward inside")
    return _iteration_windows(parts, note)


def _iteration_windows(parts: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]], note: str) -> MarkedSteps:
    """The ``nvtx_range`` reading of each thread's (iteration numbers, starts, ends) in ``parts``: the ranks' windows
    of one number grouped, each thread's own kept (:func:`_aligned_line_windows`), marked tiled from one update's end
    to the next's (``_Reading.tiled_by_updates``: the last step stretched to its work holds its predecessor's spill,
    ``steps.place._carried_spill``)."""
    ids, s, e = (np.concatenate([p[i] for p in parts.values()]) for i in range(3))
    u, s, e = _group_windows(ids, s, e)
    return MarkedSteps("nvtx_range", note, u, s, e, _aligned_line_windows(parts, u), tiled_by_updates=True)


def _update_iterations(trace: Trace, user: np.ndarray, launches: list[np.ndarray]) -> MarkedSteps | None:
    """Steps of a training job whose framework marks its micro-batches (``nvtx.is_framework_micro_batch``:
    DeepSpeed's engine ``forward``) and no iteration's end (no :func:`_framework_step_ends`): on each thread, the GPU
    work it launches outside the framework's ranges after every k-th micro-batch (k >= 2, the same k throughout),
    beyond what every micro-batch launches there, is the optimizer's update closing the iteration; each step runs from
    the end of one update's launches to the end of the next, the first from the thread's first framework range less
    the lead the later ones show (:func:`_first_iteration_start`).  ``user``: as :func:`_framework_iterations`';
    ``launches``: ``device_launches``.  None where no thread shows such updates twice.

    Why: ZeRO-1/2 decorate no optimizer ``step`` and ``DeepSpeedEngine.step`` is not decorated; it updates only at the
    accumulation boundary, outside DeepSpeed's ranges (deepspeedai/DeepSpeed @edaa7221 ``runtime/engine.py``).  The
    most repeated range, ``forward``, then made one step per micro-batch: 8 steps of 5.13 and 1.5 ms for 4 iterations
    of 6.63 ms at accumulation 2 (h37-zero12).  Without accumulation every micro-batch updates: no k >= 2, None --
    each ``forward`` is an iteration, as read before."""
    r, h = trace.ranges, trace.h
    written = user & user_ranges.framework_written_mask(h, r)
    micro = written & h.per_name(nvtx.is_framework_micro_batch)[h.name[r.idx]]
    if int(micro.sum()) < 4 or _framework_step_ends(trace).any():
        return None
    rec = np.concatenate([a[(a >= 0) & ((d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE))]
                          for a, d in zip(launches, trace.devices)] or [np.zeros(0, np.int64)])
    rec = np.unique(rec)
    parts: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    counts: list[int] = []
    for ln in np.unique(h.line[r.idx[micro]]).tolist():
        mine = r.idx[written & (h.line[r.idx] == ln)]
        on = h.line == ln
        got = _thread_updates(np.sort(h.start[r.idx[micro & (h.line[r.idx] == ln)]].astype(np.int64)),
                              h.start[mine].astype(np.int64), h.end[mine].astype(np.int64),
                              np.sort(h.end[rec[h.line[rec] == ln]].astype(np.int64)),
                              (h.start[on].astype(np.int64), h.end[on].astype(np.int64)))
        if got is None:
            continue
        k, ends, whole_first = got
        if _add_thread_windows(parts, int(ln), trace, np.sort(h.start[mine].astype(np.int64)), ends, whole_first):
            counts.append(k)
    if not parts:
        return None
    k = counts[0]
    note = (f"{frameworks.ranges_word(trace)} `{h.names[int(h.name[r.idx[micro][0]])]}`, the framework's own range once a "
            f"micro-batch ({int(micro.sum())} on {len(parts)} thread{'s' if len(parts) > 1 else ''}): the GPU work "
            f"launched outside its ranges after every {k}th -- the optimizer's update at the gradient-accumulation "
            f"boundary -- closes each iteration; each step runs from the end of one update to the end of the next")
    return _iteration_windows(parts, note)


def _user_update_iterations(trace: Trace, sel: np.ndarray, launches: list[np.ndarray], job: Job | None,
                             shown: str, how: str = "the most repeated top-level range") -> MarkedSteps | None:
    """Steps of a training job whose own repeated ranges ``sel`` (the most repeated top-level range, on its threads)
    mark its micro-steps under gradient accumulation: on each thread, the GPU work launched after every k-th (k >= 2)
    outside them, beyond what every micro-step's tail launches, is the optimizer's update (:func:`_update_tails`), where
    the capture says so -- a range or call named after the update in those tails only (``nvtx.is_update_range``:
    ``optimizer_step``, ``Optimizer.step#AdamW.step``), or the gradients' collective launched in those micro-steps only
    (DDP's ``no_sync`` ends with the last micro-step's all-reduce).  Each step is one optimizer step, from the end of
    one update to the end of the next (as :func:`_update_iterations`).  ``shown``: the range as the note shows it.
    None elsewhere.

    Why: what a user of PyTorch, DeepSpeed or the HF Trainer (``gradient_accumulation_steps``) calls a step is the
    optimizer's: public loops mark only their micro-steps (``record_function(f"microstep_{i}")`` then
    ``record_function("optimizer_step")``; ``nvtx.range_push(f"micro_{i}")``; verl's ``micro_batch{i}``), and the most
    repeated range then read as the step -- 32 "steps" of a micro-step for 8 optimizer steps of 4 (h37-accum32).  The
    beat alone is no update (a loop that evaluates or logs every k-th step launches more after it too): the update's
    name, or the gradients' all-reduce at the beat, says the extra work is the optimizer's; and each micro-step runs a
    backward pass -- Megatron-core's per-layer range (once a layer, the update after every 6th) launches the backward
    in its last layer's window only (:func:`_windows_holding_backward`; where no kernel's name shows a gradient, as
    cuBLAS's GEMMs do not, the windows cannot tell and are not asked).  ``how``: why the ranges were read, for the
    note ("named like a step" where their name is a step's: ``batch {n}``, ``train_step {n}``)."""
    if job is None or job.kind.kind != "training" or sel.size < 4:
        return None
    h = trace.h
    kinds = [(a, d) for a, d in zip(launches, trace.devices) if a is not None and a.size == len(d)]
    rec = np.unique(np.concatenate([a[(a >= 0) & ((d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE))]
                                    for a, d in kinds] or [np.zeros(0, np.int64)]))
    coll = np.unique(np.concatenate([a[(a >= 0) & (d.kind == devices.KIND_COLLECTIVE)] for a, d in kinds]
                                    or [np.zeros(0, np.int64)]))
    opt = _optimizer_launches(kinds)
    named = np.flatnonzero(h.name_mask(nvtx.is_update_range))
    parts: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    counts: list[int] = []
    shows: list[str] = []
    for ln in np.unique(h.line[sel]).tolist():
        mine = sel[h.line[sel] == ln]
        micro = np.sort(h.start[mine].astype(np.int64))
        launched = np.sort(h.end[rec[h.line[rec] == ln]].astype(np.int64))
        got = _update_tails(micro, h.start[mine].astype(np.int64), h.end[mine].astype(np.int64), launched)
        if got is None:
            continue
        k, at, tail, nxt, hi = got
        held = _windows_holding_backward(h, trace.devices, launches, micro)
        if held.any() and not held.all():
            continue  # a micro-step runs a backward pass: a range some of whose windows launch none is a layer's
        shown_by = _update_shown(h, named[h.line[named] == ln], coll[h.line[coll] == ln], micro, at, tail,
                                 opt[h.line[opt] == ln])
        if not shown_by:
            continue
        on = h.line == ln
        ends = _after_updates((h.start[on].astype(np.int64), h.end[on].astype(np.int64)), tail[at], nxt[at],
                              launched[hi[at] - 1])
        if _add_thread_windows(parts, int(ln), trace, micro, ends, bool(at[0] == k - 1)):
            counts.append(k)
            shows.append(shown_by)
    if not parts:
        return None
    n = int(sum(p[0].size for p in parts.values()))
    note = (f"{frameworks.ranges_word(trace)} {shown}, {how} ({sel.size} on {len(parts)} "
            f"thread{'s' if len(parts) > 1 else ''}), each a micro-step of gradient accumulation: the optimizer's "
            f"update after every {_ordinal(counts[0])} ({shows[0]}) closes each step -- a step is one optimizer step ({n}, of "
            f"{counts[0]} micro-steps each), from the end of one update to the end of the next")
    return _iteration_windows(parts, note)


def _add_thread_windows(parts: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]], ln: int, trace: Trace,
                        starts: np.ndarray, ends: np.ndarray, whole_first: bool) -> bool:
    """Add one thread's steps to ``parts`` (thread -> (numbers, starts, ends)), each from the end of one update to the
    end of the next (``ends``: where each update's iteration ends; ``starts``: its micro-batches' starts, sorted), the
    first from its first micro-batch less the lead the later ones show where it is whole (``whole_first``), else left
    out; True where two steps or more were added.  The one reading of :func:`_update_iterations` (a framework's
    micro-batches) and :func:`_user_update_iterations` (the program's micro-steps)."""
    if whole_first:
        ends = _with_silent_tails(trace, starts, ends)
    first = _first_iteration_start(starts, ends, _window_start_ps(trace)) if whole_first else None
    s = np.r_[[first] if whole_first else [], ends[:-1]].astype(np.int64)
    e = ends if whole_first else ends[1:]
    if e.size < 2:
        return False
    parts[ln] = (np.arange(e.size, dtype=np.int64), s, e)
    return True


def _windows_holding_backward(h: HostEvents, devs: list, launches: list[np.ndarray], starts: np.ndarray) -> np.ndarray:
    """Bool per host window of ``starts`` (sorted; each to the next start, the last open): whether it launches a
    gradient kernel (``devices.gradient_kernel_one``) on some GPU -- placed by its launch's host time, else its own
    start.  Every training iteration runs a backward pass, and so does every micro-step of one: a range whose
    windows do not all hold one repeats inside the passes (a layer's), not once a pass."""
    held = np.zeros(starts.size, bool)
    for d, la in zip(devs, launches):
        if not len(d):
            continue
        grad = np.fromiter((devices.gradient_kernel_one(n) for n in d.names), bool, len(d.names))[d.name]
        t = d.start[grad].astype(np.int64)
        if la is not None and la.size == len(d):
            rec = la[grad]
            t = np.where(rec >= 0, h.start[np.maximum(rec, 0)].astype(np.int64), t)
        k = np.searchsorted(starts, t, side="right") - 1
        held[k[k >= 0]] = True
    return held


def _ordinal(k: int) -> str:
    """``2nd``, ``3rd``, ``4th``, ``11th``, ``22nd``."""
    tail = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{tail}"


def _optimizer_launches(kinds: list) -> np.ndarray:
    """The host launches (indices, sorted) of kernels only an optimizer's update runs (``devices.update_kernel_one``
    less ``devices.gradient_kernel_one``: the multi-tensor kernels of a fused or foreach optimizer, ``multi_tensor_
    apply_kernel``), of ``kinds`` ((launch index per device event, device events) pairs)."""
    out = []
    for a, d in kinds:
        names = d.names
        mask = np.fromiter((devices.update_kernel_one(n) and not devices.gradient_kernel_one(n) for n in names), bool,
                           len(names))
        if mask.any():
            ok = d.name < mask.size
            out.append(a[(a >= 0) & (d.kind == devices.KIND_KERNEL) & ok & mask[np.where(ok, d.name, 0)]])
    return np.unique(np.concatenate(out)) if out else np.zeros(0, np.int64)


def _update_shown(h: HostEvents, named: np.ndarray, coll: np.ndarray, micro: np.ndarray, at: np.ndarray,
                  tail: np.ndarray, opt: np.ndarray | None = None) -> str:
    """What in one thread's capture names the work in the tails ``at`` (of micro-steps starting at ``micro``, tails
    from ``tail``) as the optimizer's update, in words for the steps' note; "" where nothing does.  Its update-named
    events (``named``, host events) lie in tails and only in those, or its collectives' launches (``coll``, host
    events) lie in the micro-steps ``at`` and only in those, or its optimizer kernels' launches (``opt``:
    :func:`_optimizer_launches`) lie in the tails ``at`` and only in those (h37-names70: an update left unnamed still
    runs the optimizer's own kernels, once every k micro-steps)."""
    beat = set(at.tolist())
    if named.size:
        t = h.start[named].astype(np.int64)
        j = np.searchsorted(micro, t, side="right") - 1
        inside = (j >= 0) & (t >= tail[np.maximum(j, 0)])
        if inside.any() and set(j[inside].tolist()) <= beat:
            first = int(named[np.flatnonzero(inside)[0]])
            return f"its `{h.names[int(h.name[first])]}`"
    if coll.size:
        j = np.searchsorted(micro, h.start[coll].astype(np.int64), side="right") - 1
        if (j >= 0).all() and set(j.tolist()) <= beat:
            return "the gradients' all-reduce, launched in those micro-steps alone"
    if opt is not None and opt.size:
        t = h.start[opt].astype(np.int64)
        j = np.searchsorted(micro, t, side="right") - 1
        if (j >= 0).all() and (t >= tail[j]).all() and set(j.tolist()) <= beat:
            return "the optimizer's own kernels, launched there alone"
    return ""


def _thread_updates(micro: np.ndarray, starts: np.ndarray, ends: np.ndarray, launched: np.ndarray,
                    host: tuple[np.ndarray, np.ndarray]) -> tuple[int, np.ndarray, bool] | None:
    """On one thread: (k, where each update's iteration ends -- :func:`_after_updates` --, whether the first iteration
    is whole) from its micro-batches' starts ``micro`` (sorted), its framework ranges' ``starts`` / ``ends``, the ends
    of its kernel launches ``launched`` (sorted) and its host events' (starts, ends) ``host``.  A micro-batch's tail runs from the end of its last framework range to the next
    micro-batch's start (the last's to the end of the capture); the tails that launch more than the fewest any tail
    but the last launches hold the updates.  None unless they recur every k >= 2 micro-batches, at least twice, with
    fewer than k micro-batches before the first and after the last -- else no accumulation boundary is shown."""
    got = _update_tails(micro, starts, ends, launched)
    if got is None:
        return None
    k, at, tail, nxt, hi = got
    return k, _after_updates(host, tail[at], nxt[at], launched[hi[at] - 1]), bool(at[0] == k - 1)


def _update_tails(micro: np.ndarray, starts: np.ndarray, ends: np.ndarray, launched: np.ndarray
                  ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`_thread_updates`' beat: (k, the micro-batches whose tails hold the updates, every tail's start, the next
    micro-batch's start, the index past each tail's last launch in ``launched``), or None."""
    n = micro.size
    if n < 4:  # two updates k >= 2 apart need four micro-batches
        return None
    nxt = np.r_[micro[1:], np.iinfo(np.int64).max]
    owner = np.searchsorted(micro, starts, side="right") - 1
    ok = owner >= 0
    tail = np.full(n, np.iinfo(np.int64).min, np.int64)
    np.maximum.at(tail, owner[ok], ends[ok])
    lo, hi = np.searchsorted(launched, tail, side="right"), np.searchsorted(launched, nxt, side="left")
    count = hi - lo
    base = int(count[:-1].min())
    at = np.flatnonzero(count > base)
    if not _beat(at):  # the last tail runs to the capture's end: an update there only where it keeps the beat
        at = at[at < n - 1]
    k = _beat(at)
    if not k or at[0] >= k or n - 1 - at[-1] >= k:
        return None
    return k, at, tail, nxt, hi


def _after_updates(host: tuple[np.ndarray, np.ndarray], tail: np.ndarray, nxt: np.ndarray, done: np.ndarray
                   ) -> np.ndarray:
    """Where each update's iteration ends on its thread: after the update's launches (``done``) the host's own calls
    in its tail (``host``: the thread's events' starts and ends; a tail from ``tail`` to the next micro-batch's start
    ``nxt``) that end before the next micro-batch -- the loop's read of the loss, its sync.  The last tail, open to the
    capture's end, holds them for no longer after its update than an earlier tail did.

    Why: the GPU runs the update after its launch; a step ended at the launch leaves the sync that waits for it to the
    next step, and the last step, with no next, was stretched to its work's end: 0.78 of 0.58 ms (h37-zero12,
    ``--zero12`` walk seed 611)."""
    hs, he = host
    out = done.copy()
    bounded = nxt < np.iinfo(np.int64).max
    for i in np.flatnonzero(bounded).tolist():
        m = (hs > tail[i]) & (hs < nxt[i]) & (he <= nxt[i])
        out[i] = max(int(out[i]), int(he[m].max())) if m.any() else out[i]
    if not bounded[-1] and bounded.any():
        m = (hs > tail[-1]) & (he <= done[-1] + int((out - done)[bounded].max()))
        out[-1] = max(int(out[-1]), int(he[m].max())) if m.any() else out[-1]
    return out


def _beat(at: np.ndarray) -> int:
    """k where the micro-batch numbers ``at`` (ascending, at least two) recur every k >= 2; else 0."""
    if at.size < 2:
        return 0
    k = int(at[1] - at[0])
    return k if k >= 2 and bool((np.diff(at) == k).all()) else 0


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


def _with_silent_tails(trace: Trace, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Each iteration's end on a thread (``ends``: sorted, where its host's last recorded call after the update ends;
    ``starts``: its framework ranges' starts, sorted) moved later by the part of the silence before every next
    iteration that the first iteration cannot show as its own lead (:func:`_silent_tail`), never past the next
    iteration's first range (a silence shorter than the loop's: that iteration's turn was cut), the last no later
    than the profiler's window's end.  ``ends`` itself where the first shows it all.

    Why: an iteration's silence before its next one's first range is read as that one's lead (waiting for its batch,
    :func:`_first_iteration_start`), so the first iteration holds the same lead before its first range -- but never
    before the capture's window.  Where the window opened closer to the first range than the silence every later
    iteration shows, the silence is not (all) lead: it is the host's untraced time after the update's sync (logging,
    the scheduler's step in Python), the end of the iteration that synced.  Read as the next one's lead, the first
    iteration could not hold it: 2 iterations of 44.35 ms, 24.73 ms of untraced Python after each sync, read 24.61
    and 44.35 ms (h37-zero12lead, ``--zero12`` walk seed 1257; 1377 and 1535 alike)."""
    tail = _silent_tail(starts, ends, _window_start_ps(trace))
    if not tail:
        return ends
    out = ends + tail
    nxt = _next_first_range(starts, ends)
    out[:-1] = np.where(nxt >= 0, np.minimum(out[:-1], nxt), out[:-1])
    stop = trace.window_end_ps()
    if stop is not None:
        out[-1] = max(min(int(out[-1]), stop), int(ends[-1]))
    return out


def _silent_tail(starts: np.ndarray, ends: np.ndarray, floor: int) -> int:
    """How much (ps) of the loop's silence between an iteration's end (``ends``, sorted) and the next one's first
    range (``starts``, sorted) -- ``model.columns.loop_turn`` of the silences, the one reading of a loop's turn --
    exceeds the room the capture's window (from ``floor``) leaves before the first range: the part no iteration's
    lead can be, since the first could not hold it; 0 where the first has room for it all.

    Why the loop's turn and not the least silence: the untraced Python after each sync is the loop's own, the same
    each iteration; one iteration that skipped some of it (a cut turn) made every iteration's end, the last's too,
    fall short of the rest (h37-lastturn)."""
    nxt = _next_first_range(starts, ends)
    ok = nxt >= 0
    if not ok.any():
        return 0
    return max(loop_turn(nxt[ok] - ends[:-1][ok]) - max(int(starts[0]) - int(floor), 0), 0)


def _next_first_range(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Where the iteration after each of ``ends[:-1]`` (sorted) opens its first range (the first of the sorted
    ``starts`` at or after that end), ps; -1 where no range opens after it."""
    if not starts.size:
        return np.full(max(ends.size - 1, 0), -1, np.int64)
    after = np.searchsorted(starts, ends[:-1], side="left")
    return np.where(after < starts.size, starts[np.minimum(after, starts.size - 1)], -1).astype(np.int64)


def _first_iteration_start(starts: np.ndarray, ends: np.ndarray, floor: int) -> int:
    """The first iteration's start of a thread's framework ranges: ``job.structure.first_iteration_start`` (the
    lead every later iteration shows before its first range, h37-randjobs12's walk seed 84), one home for both
    readings of a step from its ends."""
    return job_structure.first_iteration_start(starts, ends, floor)


def _window_start_ps(trace: Trace) -> int:
    """Where the profiler's own window starts on the trace's clock (``Trace.window_start_ps``): no step reaches
    before it."""
    return trace.window_start_ps()
