"""Placing the windows read onto time and onto each GPU: host marks tile time (step k to the next
mark's start), each GPU's steps from its own process's marks or, under asynchronous dispatch, from the work each
step launched (correlation ids), and steps cut at stretches where nothing was recorded.

Why: a host mark bounds the host's step; the GPU runs the step's work later (launch lag), so per-GPU windows come
from the launches, not from the host's times.  Applied to every reading except the format's own per-GPU step line.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.fmt import plural
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.model.columns import (reduce_at, rising_runs, searchsorted_right, union_intervals,
                                          window_index_by_runs)
from tb_gpu_advisor.model.trace import DeviceEvents, HostEvents, Trace, queued_before
from tb_gpu_advisor.steps.apart import (_OWN_MARKS, _cut_before_passes, _cut_gpu, _cut_own, _start_after_heads,
                                        _unnamed_passes, own_unnamed_cut)
from tb_gpu_advisor.steps.ends import _last_burst_to_window_end, _last_marker_turn
from tb_gpu_advisor.steps.framed import _inside_frame
from tb_gpu_advisor.steps.windows import MISSING, own_time, unrecorded
from tb_gpu_advisor.steps.reading import _Reading
from tb_gpu_advisor.steps.types import _HOST_SOURCES, _PART_MARKS, _TILED, PS_PER_MS


def _place_windows(r: _Reading) -> None:
    """Shape the windows read into steps that cover the time: marks that hold part of an iteration kept inside the
    job's frame; host and burst windows tiled (each to the next's start, the last to its work's end), bursts cut
    where the capture recorded nothing; and host steps placed on each GPU where the work they launch runs (the host
    runs ahead of an asynchronous GPU)."""
    h = r.trace.h
    if r.source in _PART_MARKS and r.ids.size > 2:
        kept = _inside_frame(r.trace, r.ids, r.hs, r.he, r.note, r.per_line)
        r.ids, r.hs, r.he, r.note, r.per_line = kept.ids, kept.starts, kept.ends, kept.note, kept.per_line
    if r.source not in _HOST_SOURCES + ("gpu_busy_clusters", "xla_modules") or not r.ids.size:
        return
    r.read_end = r.he.astype(np.int64)
    r.hs, r.he = _tile(r.hs, r.he)
    r.apart = np.full(r.hs.size, -1, np.int64)
    if r.source in _HOST_SOURCES and r.training:  # a training job's evaluation between two steps is neither's
        marks = r.launched() if r.source in _OWN_MARKS else None  # an evaluation at a mark's tail: cut off it too
        r.apart, r.he, said = _cut_before_passes(r.trace, r.hs, r.he, r.read_end, r.per_line, marks)
        r.note += said
        if marks is not None:  # an evaluation at a mark's head: the step starts where it ends
            r.note += _start_after_heads(r.trace, r.hs, r.he, r.read_end, r.per_line, marks, r.apart)
        unnamed, said = _unnamed_passes(r.trace, r.hs, r.he, r.launched(), r.apart)
        if (unnamed >= 0).any():  # forwards no range names after the training: an evaluation's too
            k = unnamed >= 0
            r.apart[k] = unnamed[k]
            r.he[k] = np.maximum(unnamed[k], r.hs[k].astype(np.int64))
            r.note += said
    host_he = r.he.copy()  # the host's own windows: which launches each step made (the last's not stretched)
    end = _last_launched_end(r, int(r.hs[-1]), int(r.he[-1]))
    if r.source in _TILED or r.tiled_by_updates:
        end -= _carried_spill(r, host_he)
    r.he[-1] = max(int(r.he[-1]), end, _last_marker_turn(r))
    if r.own is not None and r.source == r.own.source == "step_end_events" and r.own.tail_from:
        r.untailed_last = min(max(r.own.tail_from, end), int(r.he[-1]))
    if r.source == "gpu_busy_clusters":
        r.hs, r.he, cut_note = _cut_unrecorded(r.trace, r.hs, r.he)
        r.note += cut_note
        end = _last_burst_to_window_end(r.trace, r.hs, r.he)
        if end != int(r.he[-1]):
            r.he[-1] = end
            r.note += ("; the last burst's step runs to the profiler's window's end, a step after its start: no next "
                       "burst began, and the window recorded its time after its work")
        elif (end := _last_burst_end(r.hs, r.he, r.read_end)) != int(r.he[-1]):
            r.he[-1] = end
            r.note += ("; the last burst's step runs past its work by the time the first held after its burst: no "
                       "next burst began in the capture")
        _own_gpu_windows(r)
    if r.source in _HOST_SOURCES:
        r.mapped = "correlation_id"
        own = _own_host_windows(r)
        r.host_own = {g: np.stack(w, axis=1).astype(np.int64) for g, w in own.items()}
        marks = "numbers its own updates" if r.source == "step_end_events" else "marks its own steps (ranges)"
        # (the last host window stretched to its GPU work's end is a device time: on a host running ahead it holds
        # the launches made after the step -- a pipeline's VAE after its last denoising call (h37-randjobs7))
        dev_w, ahead = _async_device_windows(r.hs, host_he, h, r.trace.devices, r.launched(), own)
        dev_w = {d.gpu: _cut_gpu(r.trace, dev_w[d.gpu], d, la, r.apart, r.hs)
                 for d, la in zip(r.trace.devices, r.launched()) if d.gpu in dev_w}
        if dev_w:
            r.gpu_windows = dev_w
            _holds_unrecorded_head(r)
            if ahead:
                r.note += ("; asynchronous dispatch: the host runs ahead of the GPU, so each GPU step is placed where "
                           "the work launched inside that host step runs (first kernel to the next step's first kernel)")
                if own:
                    r.note += (", each GPU's step k the work its own process launched in its kth step (its own "
                               f"{'updates' if r.source == 'step_end_events' else 'ranges'})")
            else:
                r.note += (f"; each rank {marks}: each GPU's step k is placed where the work its own "
                           "process launched in its kth step runs (first kernel to the next step's first kernel)")
        else:
            _start_after_inherited_queue(r)


def _own_gpu_windows(r: _Reading) -> None:
    """Each GPU's windows from its own process's bursts (``r.gpu_own``) where it has one per step: tiled as the steps
    are, its last running past its own work by as much as its first step ran past its first burst.

    Why: ranks a little apart each run step k on their own GPU at their own time; the steps' windows, from the
    earliest rank's start to the next, cut a later rank's pass in two -- its last step stretched by the ranks' lag
    (a 2-rank benchmark 3 ms apart: 20.97 ms "steps" for passes of 20.2, h37-probe47f)."""
    for g, (s, e) in r.gpu_own.items():
        if s.size != r.hs.size or not s.size:
            continue
        ws, we = _tile(s, e)
        if s.size > 1:
            we[-1] = max(int(we[-1]), int(e[-1]) + int(we[0] - e[0]))
        r.gpu_windows[g] = np.stack([ws, we], axis=1)


def _holds_unrecorded_head(r: _Reading) -> None:
    """Add to ``r.closed`` each GPU's step just before the first its rank's capture had closed before, where each GPU's
    steps run from their first kernel to the next step's first kernel (:func:`_async_device_windows`): that step's
    window ends at a step its capture did not record, so it holds that step's head -- the input copy and launches the
    next step makes before its first kernel -- unrecorded.

    Why: the step's GPU window is whole only where the next step's head is in the capture; a rank closed 2 steps early
    read its last recorded step 8.016 of 10.027 ms on its GPU, its next step's 2 ms input copy absent (h37-probe45c).
    A GPU whose steps are its own step line's spans (Kineto's) holds only its own work in each: none is added there."""
    for g, gone in r.closed.items():
        at = np.flatnonzero(np.isin(r.ids, gone))
        if g in r.gpu_windows and at.size and at[0] > 0:
            r.closed[g] = np.append(r.ids[at[0] - 1], gone)


def _start_after_inherited_queue(r: _Reading) -> None:
    """Where host windows stand for every GPU's steps (the launched work runs inside its step): each GPU whose first
    step opens on work queued before the window gets a window of its own, its first step starting where that work
    ends (:func:`_inherited_end`); the note says how much.

    Why: the wrong assumption is *a step's GPU time is all its own work*.  A GPU runs only what was launched to it,
    and a device event whose correlation id no call of the window carries was launched before the window opened --
    the steps before it, which the host ran ahead of their GPU work.  The window inherits that queue; the first step
    only waits for it.  ``hf_qwen_h100``: ``ProfilerStep#6``'s first call is a 14.1 ms ``cudaDeviceSynchronize``
    waiting for 509 kernels and memsets (13.7 ms; ids 675771-682741, the step's own from 682764) of the step before;
    Kineto's own GPU mark of the step runs 34.9 ms, the host window 49.4 (h37-loopstart)."""
    hs = r.hs
    if not hs.size:
        return
    host_w = np.stack([hs, r.he], axis=1).astype(np.int64)
    said: list[str] = []
    for d, launch in zip(r.trace.devices, r.launched()):
        end, n, busy = _inherited_end(d, launch, int(hs[0]))
        if n and int(hs[0]) < end < int(r.he[0]):  # a queue drained before the step opened is none of its time
            w = host_w.copy()
            w[0, 0] = end
            r.gpu_windows[d.gpu] = w
            said.append(f"{plural(n, 'kernel, copy or memset', 'kernels, copies or memsets')} of "
                        f"{busy / PS_PER_MS:.1f} ms" + (f" on GPU {d.gpu}" if len(r.trace.devices) > 1 else ""))
    if said:
        r.inherited = ("; the first step's GPU time starts after the work queued before the window ("
                   + ", ".join(said) + "): no call in the window carries their correlation ids, so the steps before "
                   "it launched them -- the window's inheritance, not the step's")


def _inherited_end(d: DeviceEvents, launch: np.ndarray, opens: int) -> tuple[int, int, int]:
    """(where it ends, ps; how many; their summed time, ps) of a GPU's work queued before the window and still
    running when its first step opens (at ``opens``, ps): the device events that start before the first one launched
    in the window and carry a correlation id no call of the window carries, the first of them by ``opens``; (0, 0, 0)
    otherwise, or where the window launched nothing here (a window that only drains a queue:
    ``job.kind._queued_before`` reads it).  The end is capped at the first own event's start: work of the window's
    own from there on, whatever still runs beside it.

    Why only a queue running as the step opens: then the GPU is busy with it from the step's first instant, and the
    step's own work waits behind it.  Such work that starts only after the GPU idled inside the step
    (``dlrm_v100`` worker1: 61 element-wise kernels 1.0 ms into a 19.9 ms step, 17 us apart) is no queue draining:
    the idle before it is the step's own, and moving the step's start past it would drop that idle."""
    if not len(d) or not (launch >= 0).any():
        return 0, 0, 0
    first_own = int(d.start[launch >= 0].min())
    queued = queued_before(d, launch) & (d.start < first_own)
    if not queued.any() or int(d.start[queued].min()) > opens:
        return 0, 0, 0
    end = min(int(d.end[queued].max()), first_own)
    return end, int(queued.sum()), int((d.end[queued] - d.start[queued]).sum())


def _carried_spill(r: _Reading, he: np.ndarray) -> int:
    """The least time (ps) the GPU work launched in each earlier tiled step (``r.hs``, ``he``: host windows) ran past
    its window's end, into the next step; 0 with no earlier step or where one spilled none.

    Why: a step tiled start to next start (the job's own readings, :data:`_TILED`: one update's end to the next's, a
    launch sequence's repeats) holds at its start the GPU work the step before launched and the GPU ran after it --
    each tile is one period, the spill in it its predecessor's.  The last step holds its predecessor's spill too, so
    stretched to its own work's end it counts one spill twice: a Megatron loop whose optimizer step launches its 4 fused
    Adam kernels (0.24 ms) after its found-inf ``.item()`` read its last step 3.550 ms of 3.343, the mean 3.412
    (``--forms5`` seed 6128).  Only the least spill every earlier step carried is the last's already: a last step whose
    work ran longer (a GPU falling behind) keeps the rest.  A framework's iterations, each from one update's end to the
    next's (``_Reading.tiled_by_updates``), are tiled alike: ZeRO-2's last of 3 iterations, its update's kernels run
    after their launches, read 0.366 of 0.282 ms (h37-zero12lead, ``--zero12`` walk seed 294)."""
    if r.hs.size < 2:
        return 0
    carried = np.zeros(r.hs.size - 1, np.float64)
    for d, launch in zip(r.trace.devices, r.launched()):
        if len(d):  # a step that launched nothing here carried nothing here
            carried = np.fmax(carried, _spill(_launched_per_step(r.hs, he, r.trace.h, d, launch)[2], he))
    return max(int(carried.min()), 0)


def _last_launched_end(r: _Reading, s: int, e: int) -> int:
    """Where (ps) the work launched in the last host window ``[s, e)`` ends on any GPU: the end
    :func:`_launched_per_step` reads for that window (each device event's launch record, the window half-open); ``e``
    where it launched nothing, or nothing that ends later.

    Why this one measure: the last step is stretched to its work's end here and placed on each GPU from the same
    launches by :func:`_launched_per_step`; read apart (the stretch from every host event carrying a correlation id in
    the closed ``[s, e]``), a launch at the window's very end counted for the stretch and not for the placement.  Such
    a launch is the next range's, not this one's: every window but the last is tiled ``[s, next start)``, so a
    launch at a bound belongs to the step it opens -- a benchmark's ``forward`` range ending at the instant its
    ``backward`` range opens with a launch stretched the last ``forward`` step to the end of ``backward``'s first
    kernel (``--forms12`` seeds 60002, 60009, 60040: 134, 210 and 567 us; h37-lastend)."""
    ends = [int(_launched_per_step(np.array([s]), np.array([e]), r.trace.h, d, launch)[2][0])
            for d, launch in zip(r.trace.devices, r.launched()) if len(d)]
    return max([e, *ends])


def _spill(last: np.ndarray, he: np.ndarray) -> np.ndarray:
    """The one measure of spill: how far (ps) the work each step launched on one GPU (``last``: its end, int64 min
    where it launched none) ran past its host window's end (``he``), for every step with a next one; NaN where the
    step launched nothing here.  :func:`_carried_spill`, :func:`_spill_median` and :func:`_spill_grows` each ask it
    their own question (the least every step carried, the typical, whether it grows).

    Why the last is left out: every tiled step but the last ends where the next starts, so its spill is the time its
    work ran while the host had moved on; the last ends where its own reading ends it -- a loop read from its updates
    at its read-back's end, which waited for the GPU (``job.structure``'s last tail); a rank's own last step, or one
    read from a lagging thread, at a reach stretched to its work's end (:func:`_own_last_reach`, :func:`_launch_lags`)
    -- so its "spill" is zero or less whatever the host's lead, and a different measure of another window.  Of two
    steps the median took the mean of the first's spill and the last's zero, under the bar: an ``emit_nvtx`` loop of 2
    iterations whose update's kernels run through its ``.item()`` kept the host windows, 3.095 ms of 3.17 (h37-forms12b);
    a GPU falling behind its host step by step grew its spill every step but the last, whose read-back waited."""
    has = last[:-1] > np.iinfo(np.int64).min
    return np.where(has, (np.where(has, last[:-1], 0) - he[:-1]).astype(np.float64), np.nan)


def _launched_per_step(hs: np.ndarray, he: np.ndarray, h: HostEvents, d: DeviceEvents,
                       launch: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per host step: (first kernel start, first device event start, last device end) of the work launched
    inside it; int64 max / min where the step launched nothing on this GPU."""
    n = hs.size
    big, small = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    first_k = np.full(n, big, np.int64)
    first_any = np.full(n, big, np.int64)
    last = np.full(n, small, np.int64)
    m = _where(launch >= 0)
    if _size(m, launch.size) == 0 or n == 0:
        return first_k, first_any, last
    t = h.start[launch[m]]
    runs = rising_runs(t)
    bounds = np.stack([hs, he], axis=1).reshape(-1)
    if runs is not None and bool((bounds[1:] >= bounds[:-1]).all()):
        # disjoint steps and launch times in a few rising runs (one per launching thread): each step bound placed
        # among the times, not a search and a gather per launch (8 GPUs x 220 k launches on the dense 100 MB capture)
        k = window_index_by_runs(t, bounds, runs, np.intp)
        ok = k >= 0
    else:
        k = searchsorted_right(hs, t) - 1  # launch times come in order: merged, not searched one by one
        ok = k >= 0
        ok &= t < he[np.clip(k, 0, None)]
    del t
    # every event launched inside a step (the usual GPU): its columns as they are, no gathers
    if not ok.all():
        m = (np.flatnonzero(ok) if isinstance(m, slice) else m[ok])
        k = k[ok]
    start, end, kind = d.start[m], d.end[m], d.kind[m]
    reduce_at(np.minimum, first_any, k, start)
    reduce_at(np.maximum, last, k, end)
    kern = (kind == devices.KIND_KERNEL) | (kind == devices.KIND_COLLECTIVE)
    if kern.all():
        reduce_at(np.minimum, first_k, k, start)
    else:
        reduce_at(np.minimum, first_k, k[kern], start[kern])
    return first_k, first_any, last


def _where(mask: np.ndarray) -> np.ndarray | slice:
    """The positions ``mask`` holds: every position as a slice (views, no gathers) where it holds them all."""
    return slice(None) if bool(mask.all()) else np.flatnonzero(mask)


def _size(sel: np.ndarray | slice, n: int) -> int:
    """How many positions :func:`_where`'s answer holds, of ``n``."""
    return n if isinstance(sel, slice) else int(sel.size)


def _own_host_windows(r: _Reading) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """GPU -> the host windows of its own process's steps, where each rank numbers its steps on its own
    (``SpanSteps.per_line``: each rank's updates; ``_Reading.per_line``: each rank's thread's step ranges) and the
    format names the lines of each GPU's process; {} otherwise.

    Why: the host's step k runs from the first rank's (k-1)th update to the last's kth, tiled by the first rank's.  A
    rank 1.5 ms behind launches the end of its step k-1 (its backward, its all-reduce) inside that window, so its GPU's
    step k was placed at work a step earlier than the first rank's GPU's -- 4 ranks 1.5 ms apart whose host runs a step
    ahead read as GPUs starting "each step" 15 ms apart in a 14.7 ms step (h37-left62).  Each GPU's step k is where
    the work its own process launched in its own kth step runs."""
    own = r.own.per_line if r.own is not None and r.source == "step_end_events" else r.per_line
    lines = r.trace.gpu_host_lines
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    if not own or not lines:
        return out
    for gpu, ls in lines.items():
        ws = [w for w in (own.get(int(ln)) for ln in np.asarray(ls).tolist()) if w is not None]
        fill = _unrecorded_on(r, int(gpu), ls, ws)
        ws = [_filled(w, *fill) for w in ws]
        if not ws or any(w[0].size != r.hs.size for w in ws):
            continue  # a process that ran fewer updates than the host's steps: the host's windows stand
        s = np.min(np.stack([w[0] for w in ws]), axis=0)
        e = np.max(np.stack([w[1] for w in ws]), axis=0)
        read_end = e
        s, e = _tile(s, e)
        if (r.apart >= 0).any():  # the evaluations the host's steps leave out, each rank's too
            marks = {int(ln): own[int(ln)] for ln in np.asarray(ls).tolist() if int(ln) in own}
            s, e = _cut_own(r.trace, ls, s, e, read_end, marks, r.launched() if r.source in _OWN_MARKS else None)
            e = own_unnamed_cut(r.trace, int(gpu), s, e, r.launched(), r.apart)  # and its unnamed evaluation forwards
        e[-1] = max(int(e[-1]), _own_last_reach(r, int(s[-1])))
        out[int(gpu)] = (s, e)
    return out


def _unrecorded_on(r: _Reading, gpu: int, lines: np.ndarray, ws: list[tuple[np.ndarray, np.ndarray]]
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Note in ``r.unopened`` / ``r.closed`` the ids of the steps a GPU's process's capture had not opened for or had
    closed before (:func:`~tb_gpu_advisor.steps.windows.unrecorded`: its lines, ``lines``, their own windows ``ws``,
    mark none of them, and it recorded nothing on them before, or after, the step); return the windows its unmarked
    steps take: the host's (``r.hs``, ``r.he``), those two kinds moved into the rank's own time
    (:func:`~tb_gpu_advisor.steps.windows.own_time`).

    Why: the steps it never recorded kept the host's windows with no kernel in them -- GPU 1's compute 5.4 ms a step
    where every step runs 6.0 ms (opened 2 steps late; h37-probe44r *Left* 1), 4.667 ms (closed 2 steps early); and a
    rank running 30 ms behind the others had its closed steps' windows 30 ms before its own last, so its last recorded
    step ended before it began (h37-probe45c).  A step its capture held but it did not mark is no such step."""
    fill = (r.hs, r.he)
    if not ws or any(w[0].size != r.hs.size for w in ws):
        return fill
    st = np.stack([np.where(w[0] == MISSING, np.iinfo(np.int64).max, w[0]) for w in ws])
    own_s = np.min(st, axis=0)
    own_s[own_s == np.iinfo(np.int64).max] = MISSING
    h = r.trace.h
    on = np.isin(h.line, np.asarray(lines, dtype=np.int64))
    if not on.any():
        return fill
    before, after = unrecorded(r.ids, r.hs, r.he, own_s, int(h.start[on].min()), int(h.end[on].max()))
    for edge, got in ((r.unopened, before), (r.closed, after)):
        if got.size:
            edge[gpu] = got
    moved = np.isin(r.ids, np.concatenate([before, after]))
    if not moved.any():
        return fill
    ts, te = own_time(r.hs, r.he, own_s)
    return np.where(moved, ts, r.hs), np.where(moved, te, r.he)


def _filled(w: tuple[np.ndarray, np.ndarray], hs: np.ndarray, he: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A thread's own windows with the steps it does not mark (``steps.windows.MISSING``) taken from ``hs``, ``he``
    (aligned: the host's, those its rank's capture did not hold moved into its own time, :func:`_unrecorded_on`), as a
    GPU that saw no step of a number gets the host-wide window (``steps.markers._gpu_step_line_windows``); unchanged
    where it marks them all or is not aligned with the host's."""
    s, e = w
    gone = s == MISSING
    if not gone.any() or s.size != hs.size:
        return w
    s, e = s.copy(), e.copy()
    s[gone], e[gone] = hs[gone], he[gone]
    return s, e


def _own_last_reach(r: _Reading, own_start: int) -> int:
    """How far (ps) a rank's own last step reaches for the launches it made: the host-wide last step's reach
    (``r.he[-1]``: its mark's end stretched to its launched work's end) moved by how much later the rank's own last
    step starts (``own_start``) than the host-wide one.

    Why: the host-wide last window starts at the first rank's last mark, so its reach is that rank's; a rank whose own
    last step starts later launches its work later by as much.  Cut at the first rank's reach, its last step lost the
    launches after it -- a program's ``data`` ranges (each mark the batch's load, its ``eval_step`` after it) on 4
    ranks 50 us apart read each GPU's last step 0.372, 0.356, 0.306 and 0.257 ms of a 0.372 ms iteration, the last
    rank's 4 last kernels in no step (``--forms12`` seed 6593).  Every other step reaches the next one's start.

    Why the stretched end here and the mark's own end for a GPU read from the host-wide windows
    (:func:`_async_device_windows`, moved by :func:`_launch_lags`): no host time says where a last step's launches
    stop, and each base is wrong for the other decision (h37-lastend).  The stretched end is a device time: on a host
    running ahead it holds the work launched after the loop, so a host-wide reach from it took a pipeline's VAE into
    its last denoiser step (``test_random_forms7``'s seed 498 fails) and would move 5 kept captures' last steps
    (``mpi_saxpy_a100_rank0``, ``resnet_rtx2080ti_slow_workers``, the three ``sglang_*``: 1, 1, 29, 4, 5 more
    launches).  The mark's end holds only the marked part of an iteration, so an own reach from it lost a rank's last launches
    (``--forms12`` seed 60023: 24 of the 38 launches of one iteration; 60028: 9 of 11).  One measure needs the
    host's own end of the last iteration, which the capture does not record."""
    return int(r.he[-1]) + max(own_start - int(r.hs[-1]), 0)


def _async_device_windows(hs: np.ndarray, he: np.ndarray, h: HostEvents, devs: list[DeviceEvents],
                          launches: list[np.ndarray],
                          own: dict[int, tuple[np.ndarray, np.ndarray]] | None = None
                          ) -> tuple[dict[int, np.ndarray], bool]:
    """Per GPU step windows placed on the device, when dispatch is asynchronous or each rank's own steps are known
    (``own``); ({}, False) otherwise.  The flag: the host runs ahead of the GPU (the spill test below).

    With asynchronous dispatch (JAX: a jitted call returns before its kernels run; the host runs up to
    dozens of steps ahead) a host step window says nothing about the GPU: the device step k is where the
    work launched inside host step k runs, found through the launches' correlation ids (a CUDA graph
    launch covers all its kernels).  Step k then runs from its first kernel to the next step's first
    kernel (idle time before a step belongs to the one before, as with host windows).  Where the launched
    work ends inside (or shortly after) its host window -- a synchronous step, TensorFlow's usual -- the
    host windows are kept: they contain the device work and the host's input wait before it.  ``own``: GPU -> the
    host windows of its own process's steps (:func:`_own_host_windows`), read instead of the host's for that GPU.
    """
    out: dict[int, np.ndarray] = {}
    spills, lengths = [], he - hs
    per: list[tuple[DeviceEvents, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    lags = _launch_lags(hs, h, devs, launches)
    for d, launch in zip(devs, launches):
        if not len(d):
            continue
        hs_d, he_d = (own or {}).get(d.gpu, (hs, he))
        reach = he_d
        if d.gpu not in (own or {}) and lags.get(d.gpu, 0) > 0:
            reach = he_d.copy()
            reach[-1] += lags[d.gpu]
        first_k, first_any, last = _launched_per_step(hs_d, reach, h, d, launch)
        has = last > np.iinfo(np.int64).min
        if has.sum() < 2:
            continue
        spill = _spill(last, he_d)
        spills.append(spill[~np.isnan(spill)])
        per.append((d, first_k, first_any, last, hs_d))
    if not per or not lengths.size:
        return out, False
    # each rank's own steps (``own``, every placed GPU's): the host-wide windows are tiled by the first rank's updates,
    # so they hold none of a late rank's step whether or not its host runs ahead -- a rank 4.5 ms late whose GPU waits
    # for it read its first GPU "starting last" at work of the step before (h37-randjobs3)
    mine = bool(own) and all(d.gpu in own for d, *_ in per)
    ahead = _spill_median(spills, mine) > T("steps.async_spill_steps") * float(np.median(lengths))
    ahead = ahead or any(_spill_grows(sp, float(np.median(lengths))) for sp in spills)
    if not (ahead or mine):
        return out, False
    for d, first_k, first_any, last, hs_d in per:
        big = np.iinfo(np.int64).max
        start = np.where(first_k < big, first_k, first_any)
        start = np.where(start < big, start, hs_d)  # a step that launched nothing here: its host start
        start = np.maximum.accumulate(start)
        end = np.empty_like(start)
        end[:-1] = start[1:]
        end[-1] = max(int(start[-1]), _last_device_end(start, last, int(he[-1])))
        out[d.gpu] = np.stack([start, end], axis=1)
    return out, ahead


def _spill_median(spills: list[np.ndarray], mine: bool) -> float:
    """The spill (ps) that says whether the host runs ahead of its GPU: the median of every placed GPU's steps, or,
    where each GPU is read against its own rank's windows (``mine``), the least of the GPUs' own medians.

    Why: an early rank's GPU waits in the all-reduce for the last rank, so its work ends long after its own host's
    window closed -- the wait for another rank, not its host's lead -- while the last rank's work ends with its
    window: the rank that paces the job says whether hosts outrun their GPUs.  4 ranks 1.5 ms apart spilled 4.6,
    3.1, 1.6 and 0.08 ms of 4.63 ms steps; the pooled median (2.35 ms) read "the host runs ahead" (test_random_jobs)."""
    if mine:
        return min(float(np.median(t)) for t in spills)
    return float(np.median(np.concatenate(spills)))


def _launch_lags(hs: np.ndarray, h: HostEvents, devs: list[DeviceEvents], launches: list[np.ndarray]
                 ) -> dict[int, int]:
    """GPU -> how much later (ps) its launches of each host-wide step begin than the earliest GPU's (the median over
    the steps with a next one); {} where fewer than two GPUs launched in them.

    Why: host-wide windows read from one thread (a launch sequence's repeats) end the last step at that thread's last
    launch; every other step runs to the next one's start, so it holds the other ranks' launches made a little later,
    but the last holds none of a lagging rank's launches after its reading thread's -- 4 ranks 50 us apart read their
    last steps 37.9, 33.1, 29.0 and 24.9 ms of a 37.9 ms step (h37-nsyslast).  The lag each rank shows in the steps
    before is where its own last step's launches end.  Only of ranks that launch from threads of their own: one
    thread launching to every GPU in turn makes its sequence of them all, its last launch every GPU's."""
    if hs.size < 2:
        return {}
    firsts: dict[int, np.ndarray] = {}
    seen: set[int] = set()
    for d, launch in zip(devs, launches):
        ev = launch[launch >= 0] if len(d) else launch[:0]
        if not ev.size:
            continue
        lines = set(np.unique(h.line[ev]).tolist())
        if lines & seen:
            return {}
        seen |= lines
        t = np.sort(h.start[ev].astype(np.int64))
        i = np.searchsorted(t, hs[:-1])  # each step's first launch here, where it lies before the next step's start
        at = t[np.minimum(i, t.size - 1)]
        firsts[d.gpu] = np.where((i < t.size) & (at < hs[1:]), at - hs[:-1], -1)
    if len(firsts) < 2:
        return {}
    both = np.all(np.stack(list(firsts.values())) >= 0, axis=0)
    if not both.any():
        return {}
    lead = {g: float(np.median(f[both])) for g, f in firsts.items()}
    least = min(lead.values())
    return {g: int(v - least) for g, v in lead.items()}


def _last_device_end(start: np.ndarray, last: np.ndarray, host_end: int) -> int:
    """Where a GPU's last step ends (ps), its steps placed from first kernel to the next step's first kernel
    (``start``; ``last``: the end of each step's launched work, int64 min where it launched none here): its own work's
    end and after it the GPU's idle time before a next step that every step before it shows (the least of their
    times from their work's end to the next step's first kernel); the host's end (``host_end``) where it launched none.

    Why: every other step runs to the next one's first kernel, so it holds the host's time between its work and that
    kernel (the next batch's wait, the untraced Python); the last has no next kernel in the capture, and ended at its
    own work it lacks that time -- a 3-step job of 8.91 ms steps (4.5 ms of them the host's between the work) read its
    last 4.41 ms on each rank, its mean 7.41 ms (h37-nsyslast).  A step's length is never shorter than the work it
    holds and the gap every other step shows; the least, not a typical one: a step whose gap held a one-time cost (a
    recompilation before the next step) stretches no last step.

    Where every step before it ran its work on past the next step's first kernel (steps overlapping on the GPU: a
    stream the host keeps a step's work ahead of, behind side streams whose kernels run at once), the last ends that
    much before its own work's end, the least such spill: each step's window holds its predecessor's spill, so the
    last holds one spill, not its own as well -- :func:`_carried_spill`'s rule for host windows, here on the device.
    Wrong assumption fixed: *a GPU step ends with its own work*.  ``torchrec_a100_stalls``: the main stream runs
    157 ms behind the all-to-all streams (a queue of 867 events launched before the window drains 8.8-163.2 ms),
    every step's work ends 156.8-157.8 ms past the next one's first kernel, and the last step read 370.3 ms of a
    ~216 ms period (the mean 245.4 ms); now 213.5 (h37-prewindow30)."""
    small = np.iinfo(np.int64).min
    if last[-1] <= small:
        return host_end
    k = np.flatnonzero(last[:-1] > small)  # the steps with work here whose next step starts in the capture
    if not k.size:
        return int(last[-1])
    gaps = start[k + 1] - last[k]
    if bool((gaps < 0).all()):  # every step's work ran on into the next one's: less the least spill
        return int(last[-1]) + int(gaps.max())
    return int(last[-1]) + int(np.maximum(gaps, 0).min())


def _spill_grows(spill: np.ndarray, length: float) -> bool:
    """Whether the launched work's spill past its host window (``spill``, ps: :func:`_spill`'s, one a step with a next
    one) grows every step, by more than chance moves a window's edge (``steps.short_last_share`` of the median step
    ``length``) on average, and past the first step's work always ends outside its window.

    Why: a host that waits for its GPU each step (a read, a sync) leaves no spill to grow -- its next window starts
    after the work ends; a GPU a little slower than its host falls further behind each step, its spill growing by the
    difference of the periods while its median stays small against the step.  The host windows then stand for the
    host's period, not the GPU's (h37-randjobs8: 9 calls of 3.62 ms on the host, 3.96 ms on the GPU, the lag growing
    0.33 ms a call: the mean read 8.5% low).  Two spills are one growth: the last step's is no spill
    (:func:`_spill`), so a reading of 3 steps has 2 -- the 2 growths it was judged on before counted the last's, whose
    window ends at its reading's own end (its read-back, its reach), not at a next step's start (h37-spill4)."""
    if spill.size < 2 or not (spill[1:] > 0).all():
        return False
    grow = np.diff(spill)
    return bool((grow > 0).all()) and float(grow.mean()) > T("steps.short_last_share") * length


def _tile(s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Step k ends where step k+1 starts (gaps belong to the earlier step); last keeps its end."""
    s = s.astype(np.int64).copy()
    e = e.astype(np.int64).copy()
    if s.size > 1:
        e[:-1] = np.maximum(s[1:], np.minimum(e[:-1], s[1:]))
    return s, e


def _recorded(trace: Trace) -> tuple[np.ndarray, np.ndarray]:
    """The union (sorted, disjoint ps intervals) of everything the capture recorded: every thread's host events, its
    Python spans, its OS calls and every GPU's records."""
    parts = [(trace.h.start, trace.h.end)] + [(d.start, d.end) for d in trace.devices if len(d)]
    for extra in (trace.spans, trace.host_waits):
        if extra is not None and len(extra):
            parts.append((extra.start, extra.end))
    return union_intervals(np.concatenate([p[0] for p in parts]).astype(np.int64, copy=False),
                           np.concatenate([p[1] for p in parts]).astype(np.int64, copy=False))


def _cut_unrecorded(trace: Trace, hs: np.ndarray, he: np.ndarray) -> tuple[np.ndarray, np.ndarray, str]:
    """GPU-burst steps (tiled ``hs``, ``he``, ps) each cut at the longest stretch inside it with nothing recorded
    (:func:`_recorded`) where that stretch is at least half its window and longer than any other step; the stretch is
    then between steps: the step ends where it starts and the next starts where it ends.  Returns the windows and the
    note's words ("" if none).

    Why: a burst step runs from its burst to the next, on the guess that the host's time between them serves the
    iteration.  Where nothing at all was recorded there -- no host event, OS call or GPU record -- nothing says so:
    the stretch may be any code or wait outside the loop, and a step made mostly of it is the stretch's length, not
    the iteration's (a ViT's 3.78 s unrecorded stretch made a 1.94 s mean step of an ~84 ms iteration, and every
    per-step share a fraction of its truth).  The host's own unrecorded code in each iteration (a capture of CUDA
    calls only, a GPU-only one) recurs in every step, so a stretch no longer than another whole step may be that, and
    stays; a stretch the thread spent in a recorded OS wait (a benchmark's 4.65 s in ``getc``) is recorded, and a
    shorter one leaves the step mostly known: all stay in the step."""
    us, ue = _recorded(trace)
    gs, ge = ue[:-1], us[1:]  # the stretches nothing covers, sorted
    span = (he - hs).astype(np.int64)
    hs, he = hs.copy(), he.copy()
    cuts: list[str] = []
    for k in range(hs.size):
        lo, hi = np.searchsorted(gs, hs[k], side="left"), np.searchsorted(ge, he[k], side="right")
        if hi <= lo:
            continue
        j = lo + int(np.argmax(ge[lo:hi] - gs[lo:hi]))
        length = int(ge[j] - gs[j])
        if 2 * length < int(span[k]) or length <= int(np.delete(span, k).max(initial=0)):
            continue
        he[k] = gs[j]
        if k + 1 < hs.size:
            hs[k + 1] = ge[j]
        cuts.append(f"step {k} at a {length / PS_PER_MS:,.1f} ms stretch")
    if not cuts:
        return hs, he, ""
    return hs, he, (f"; cut {', '.join(cuts)} with nothing recorded (no host event, OS call or GPU record) and "
                    f"longer than any other step: a stretch between steps, not in one")


def _last_burst_end(hs: np.ndarray, he: np.ndarray, work_end: np.ndarray) -> int:
    """Where the last of two GPU-burst steps (``hs``, ``he``: tiled, ps; ``work_end``: each burst's own end) ends:
    past its work by the time the first held after its burst (:func:`_last_device_end`, the host-window reading's
    rule), where it is shorter than the first's start-to-start time; else at its own end.  Of :data:`_BURSTS_TILED`
    or more, a last step that short is dropped as partial (:func:`_last_ends_at_own_work`); of two, dropping it leaves
    one step, and the first's gap is the time it lacks.

    Why: each burst's step runs to the next burst's start, so it holds the host's time between its work and the next
    (the untraced host code, the next batch's wait); the last has no next burst and, ended at its work, lacks that time
    -- 2 ranks' node-mode CUDA graphs with 8.46 ms of untraced host time a step read 8.92 and 7.11 ms, the mean 8.02 of
    the 8.92 ms period (h37-seeds23).  A last step already as long as another's tile lacks nothing the steps show: a
    last burst of other work (a benchmark's 77 ms of copies after a 24 ms step) is not stretched."""
    last = int(he[-1])
    if hs.size != 2 or last - int(hs[-1]) >= int(hs[1] - hs[0]):
        return last
    ends = np.minimum(work_end[:-1], he[:-1])  # a step cut at an unrecorded stretch: its time after work ends there
    nxt = np.concatenate([hs[:1], he[:-1]])  # each step's next start as its own end (the cut's, or the next's start)
    return max(last, _last_device_end(nxt, np.append(ends, last), last))
