"""Where the GPU memory goes: per GPU, allocated and reserved over the capture, the peak and when in its step it
falls, what holds the bytes at the peak, the allocator's reserve beyond the allocated peak (cache the peak never used at once: split blocks, rounding), its
driver calls per step, and capacity.

From the trace's allocator events (:class:`~tb_gpu_advisor.model.trace.MemoryEvents`); a capture without them keeps
the allocator's peak statistic alone (``Trace.allocator``), as before.

At the peak: an allocation is live when it is allocated at or before the peak's event and freed after it (its free
found by its address).  Live bytes are *held* when allocated before the peak's step started (parameters, optimizer
state, caches -- and everything the capture saw no allocation of: the allocator's total less the live allocations
it did see), else booked to the phase of the op that allocated them (``MEMORY_PHASES``: the forward pass's are
activations) -- but for the same forward's earlier pass, still held at the peak, whose blocks the capture saw only
freed: activations (its casts, casts) too (:func:`_earlier_pass_booked`).  Without addresses (PyTorch 1.8-1.10)
nothing is paired and the breakdown is left empty.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from tb_gpu_advisor.common.fmt import gb, plural
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.job.iterations import (backward_allocations, earlier_pass_held, pattern_phases, released_together,
                                          size_repeats, teardown_start)
from tb_gpu_advisor.metrics.context import PS_PER_MS, Context
from tb_gpu_advisor.metrics.types import MEMORY_CATEGORIES, GpuMemory, Memory, MemoryHolder, OomReport
from tb_gpu_advisor.model.trace import HOLDERS, MEMORY_PHASES, MemoryEvents, OutOfMemory, rounded_blocks

#: Phase of an allocation (``MEMORY_PHASES``) -> the category its live bytes are booked to when made in the peak's step.
_CATEGORY_OF_PHASE = {"forward": "activations", "backward": "gradients", "optimizer": "optimizer", "other": "other",
                      "parameters": "held"}
#: Ops listed as holding the most at a peak.
TOP_HOLDERS = 10


def memory(ctx: Context) -> Memory:
    """Every GPU's memory (:class:`GpuMemory`), and the host's peak vs capacity as the headroom finding reads it."""
    tr = ctx.trace
    gpus = [gpu_memory(ctx, me) for _, me in sorted(tr.memory.items())]
    snap = tr.snapshot
    ooms = [_oom(ctx, o) for o in snap.ooms] if snap is not None else []
    if snap is not None:
        gpus += [_at_dump(ctx, g, st) for g, st in sorted(snap.state.items()) if g not in tr.memory]
        _capacity_from_ooms(gpus, ooms)
        _capacity_from_retries(ctx, gpus, snap.retries)
    absolute = [g for g in gpus if g.baseline != "capture_start"]
    if absolute:
        top = max(absolute, key=lambda g: (g.capacity_bytes and g.peak_allocated_bytes / g.capacity_bytes) or 0.0)
        cap, peak = top.capacity_bytes, top.peak_allocated_bytes
        # an allocator's retry bounds the capacity from above only: no headroom is claimed from it
        room = (1.0 - peak / cap) if cap and top.capacity_source != RETRY_CAPACITY else None
        return Memory(True, peak, cap, room,
                      f"peak allocated bytes of GPU {top.gpu} ({top.source}) vs its {top.capacity_source or 'capacity'}",
                      gpus=gpus, ooms=ooms, settings=dict(snap.settings) if snap else {}, snapshot=snap is not None,
                      history_cut=snap.history_cut if snap else None,
                      snapshot_layout=str(tr.producer.get("layout") or "") if snap else "",
                      stackless=snap.stackless if snap else False,
                      dump_stacks=snap.dump_stacks if snap else False, vendor=snap.vendor if snap else None,
                      platform=snap.platform if snap else None, data_parallel=snap.data_parallel if snap else False)
    legacy = _allocator_peak(ctx)
    legacy.gpus, legacy.ooms, legacy.snapshot = gpus, ooms, snap is not None
    legacy.vendor = snap.vendor if snap else None
    legacy.platform = snap.platform if snap else None
    legacy.data_parallel = snap.data_parallel if snap else False
    legacy.history_cut = snap.history_cut if snap else None
    if gpus and not legacy.available:
        legacy.note = ("the trace records allocations as deltas only (PyTorch 1.8-1.10): bytes above the capture's "
                       "start are known, not the total")
    return legacy


def _allocator_peak(ctx: Context) -> Memory:
    """Peak GPU allocator use vs the allocator's limit, else the GPU's memory size (a capture without events)."""
    alloc = ctx.trace.allocator
    cap = alloc.limit_bytes
    if cap is None:
        sizes = [g.d.info.memory_bytes for g in ctx.active if g.d.info.memory_bytes]
        cap = int(max(sizes)) if sizes else None
    peak = alloc.peak_bytes
    if peak is None:
        return Memory(False, None, cap, None, "no allocator peak statistics in this capture")
    return Memory(True, peak, cap, (1.0 - peak / cap) if cap else None,
                  "peak of `peak_bytes_in_use` over GPU allocators vs allocator limit (`buffer_limit`) or device memory")


def gpu_memory(ctx: Context, me: MemoryEvents) -> GpuMemory:
    """One GPU's numbers from its allocator events."""
    n = len(me)
    cap, cap_source = _capacity(ctx, me)
    out = GpuMemory(gpu=me.gpu, source=me.source, baseline=me.baseline, events=n, peak_allocated_bytes=0,
                    capacity_bytes=cap, capacity_source=cap_source, device_bytes=_device_memory(ctx, me.gpu),
                    outside_bytes=_outside(ctx, me.gpu, cap_source))
    _gradients_moved(ctx, out)
    if not n:
        return out
    alloc, res = me.allocated, me.reserved
    win = _windows(ctx, me)
    p = _peak_event(me, win)
    has_res = bool((res >= 0).any())
    if has_res:  # beyond the most ever allocated at once: the warm-up's peak too (its cache stays reserved)
        out.peak_reserved_bytes = int(res.max())
        out.gap_bytes = max(out.peak_reserved_bytes - int(alloc[p]), 0)
        if me.cached is not None:
            out.peak_reserved_in_use_bytes = int((res - me.cached).max())
        out.reserve_floor_bytes = _least_reserve(ctx, me, p)
    steady = _steady_peak(ctx, me, win, p)
    if steady is not None:
        out.warmup_peak_bytes, out.warmup_peak_step = int(alloc[p]), steady[1]
        out.warmup_peak_ms = _ms(ctx, int(me.t[p])) if _timed(ctx) else None
        p = steady[0]
    out.peak_allocated_bytes = int(alloc[p])
    if _timed(ctx):
        out.peak_ms = _ms(ctx, int(me.t[p]))
    else:
        out.peak_place = _order_place(ctx, me, p)
    if me.baseline == "absolute":
        out.start_bytes = int(me.before(np.zeros(1, np.int64))[0])
    step_i = _step_of(win, int(me.t[p]))
    step_start = None
    if step_i is not None:
        step_start = int(win[step_i, 0])
        out.peak_step = int(ctx.steps.ids[step_i])
        out.peak_step_offset_ms = (int(me.t[p]) - step_start) / PS_PER_MS
        dur = int(win[step_i, 1] - win[step_i, 0])
        out.peak_step_share = (int(me.t[p]) - step_start) / dur if dur > 0 else None
    else:
        step_start = _iteration_start(ctx, me, p)
    if (me.addr >= 0).any():
        leaked = _leak(me, p, out, _unseen_live(ctx, me.gpu), _iteration_starts(ctx))
        phased = _pattern_phased(ctx, me)
        out.breakdown, out.top = _at_peak(phased or me, p, step_start, leaked, framed=phased is None)
        out.parts_from_pattern = phased is not None and bool({"activations", "gradients"} & set(out.breakdown))
        _forward_kept(ctx, me, p, out)
        _kept_climb_booked(ctx, phased, out)
        _earlier_pass_booked(out)
        _unseen_holders_booked(ctx, me, out)
        _cast_cache(me, p, out)
        out.held_by_lifetime_bytes = _lifetime_only(ctx, me, p, out)
    out.step_peaks, out.reserved_changes_per_step = _per_step(me, win, ctx.steps.ids, has_res)
    out.timeline = _timeline(ctx, me, win)
    if me.baseline == "capture_start":
        out.note = ("deltas only (PyTorch 1.8-1.10 traces): bytes allocated above the capture's start, not the "
                    "allocator's total")
    out.note = "; ".join(n for n in (out.note or _begun_late(ctx, me.gpu),
                                     PATTERN_PARTS if out.parts_from_pattern else "") if n)
    return out


#: The words a GPU's memory note says where its peak's parts were read from the allocation pattern
#: (:func:`_pattern_phased`).
PATTERN_PARTS = ("the peak's activations and gradients read from the allocation pattern, the snapshot recording no "
                 "stacks (low confidence: no frame says which pass made a block)")


def _pattern_phased(ctx: Context, me: MemoryEvents) -> MemoryEvents | None:
    """A history recorded without stacks (``MemorySnapshot.stackless``) with the phases its allocation pattern shows
    at each backward's walk back (``job.iterations.pattern_phases``, the job stage's own reading of its iterations:
    ``Pattern.walks``); None where it is framed or shows no training iteration (an inference loop, a forward
    benchmark: nothing made there is a gradient).

    Why: with no frame every allocation is "other", so a stackless training loop's peak booked its activations and
    gradients "other" whole while the job read the same loop's forwards and backwards from its pattern (h37-snap64
    *Left* 2: ``as_recorded(training_iterations(), context=None)``, 369 MB "other" of 96 MiB of activations, 256 MiB of
    gradients and a 512-byte loss).  Read off the walk, as a frame would say it: the blocks it frees are what the
    forward saved (activations, :func:`_walked`); what is made while it walks back, and what its first op made
    before its first free and ``zero_grad()`` frees (:func:`_backward_before_walk`), the backward's (gradients); the
    first step's state the optimizer's.  The rest stays "other": a loss a variable keeps to the next iteration, and
    what is made after the walk -- an optimizer's temporaries and a last layer's gradient alike, which no pattern
    tells apart -- so a part read is read right, never guessed (lower confidence: the GPU's note says so)."""
    snap = ctx.trace.snapshot
    if snap is None or not snap.stackless or me.baseline != "absolute":
        return None
    pattern = pattern_phases(me)
    if pattern is None or not pattern.walks:
        return None
    phase = me.phase.copy()
    optimizer = MEMORY_PHASES.index("optimizer")
    phase[(pattern.phase == optimizer) & (me.delta > 0)] = optimizer
    frees = me.frees()  # pairing every block with its free: once for the three readings below
    freed = _freed_by(me, frees)
    phase[_walked(freed, pattern.walks)] = MEMORY_PHASES.index("forward")
    phase[_made_in_walk(me, pattern.walks)] = MEMORY_PHASES.index("backward")
    phase[_backward_before_walk(me, pattern.walks, frees, freed)] = MEMORY_PHASES.index("backward")
    return dataclasses.replace(me, phase=phase)


def _made_in_walk(me: MemoryEvents, walks: tuple[tuple[int, int, int], ...]) -> np.ndarray:
    """Event indices of the allocations made while a backward walks back (``walks``: per round, its first and last
    free): the backward's -- each op's gradients, made between the frees of what its forward saved."""
    out = [first + np.flatnonzero(me.delta[first:last + 1] > 0) for first, last, _hi in walks]
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def _walked(freed: np.ndarray, walks: tuple[tuple[int, int, int], ...]) -> np.ndarray:
    """Event indices of the allocations a backward's walk back (``walks``: per round, its first and last free) frees
    that were made by the block its first free releases (the forward's last saved tensor) or before: what the forward
    saved for the backward -- activations, as framed (:func:`_freed_by_backward`), but bounded by the walk: the
    optimizer's step and ``zero_grad()`` after it free gradients, not activations; and a block made after the
    forward's last saved one and freed in the walk is the backward's own temporary (:func:`_backward_before_walk`).
    Its limit: a backward whose first ops allocate and free before the nest the pattern reads as its walk begins (a
    hand-written loss's backward) has their blocks read here (wild ``snapshot_sync_after_step`` with its frames
    dropped: 205 MB of its 1.28 GB; h37-stackless65 *Left* 1).  ``freed``: :func:`_freed_by`."""
    out = [f[(f >= 0) & (f <= freed[first])] for first, last, _hi in walks for f in (freed[first:last + 1],)]
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def _freed_by(me: MemoryEvents, frees: np.ndarray) -> np.ndarray:
    """Per event: for a free, the allocation whose block it frees; -1 elsewhere (and for a free of a block made before
    the history).  ``frees``: ``me.frees()``."""
    made = np.flatnonzero((me.delta > 0) & (frees < len(me)))
    freed = np.full(len(me), -1, np.int64)
    freed[frees[made]] = made
    return freed


def _backward_before_walk(me: MemoryEvents, walks: tuple[tuple[int, int, int], ...], frees: np.ndarray,
                          freed: np.ndarray) -> np.ndarray:
    """Event indices of the allocations a backward made before its walk back's first free (``walks``: per round, that
    free, the walk's last free, the round's last event): made after the block that first free releases (the forward's
    last saved tensor), freed after that free and by the round's end -- in the walk (a gradient of an intermediate,
    passed on) or after it (``zero_grad()``).  Why: an autograd op allocates its gradients before it releases what its
    forward saved; a block the forward made after its last saved one -- the loss a variable keeps -- is freed in the
    next round, or never (:func:`_pattern_phased`).  ``frees``: ``me.frees()``; ``freed``: :func:`_freed_by`."""
    out: list[np.ndarray] = []
    for first, last, hi in walks:
        if freed[first] < 0:
            continue
        ev = np.arange(int(freed[first]) + 1, first)
        out.append(ev[(me.delta[ev] > 0) & (frees[ev] > first) & (frees[ev] <= hi)])
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def _unseen_live(ctx: Context, gpu: int) -> dict[tuple[str, int], int]:
    """GPU ``gpu``'s blocks live at the dump that its late-begun history never touches, by line and bytes
    (``MemorySnapshot.unseen_live``), {} elsewhere."""
    snap = ctx.trace.snapshot
    return snap.unseen_live.get(gpu, {}) if snap is not None else {}


def _iteration_starts(ctx: Context) -> np.ndarray | None:
    """Where each of the job's iterations begins (ps, the snapshot's events' clock) where the job read them off this
    snapshot (``job.iterations.snapshot_iterations``: its annotations, or its allocations' pattern -- a group of
    micro-batches told by the gradients they hold); None elsewhere.  Steps own step-finding: :func:`_rounds` asks them
    where an iteration ends once the optimizer's own allocations mark too few ends.

    The last iteration's end opens one more where the history runs on after it: the job keeps whole iterations alike
    only, so the loop's last -- holding the loss its variable keeps at the dump, or cut by it -- is no iteration of
    its own, yet it begins where the one before ends.  Without that start the leak's last two rounds read as one:
    a stackless loop of 3 iterations each keeping a 16 MiB output, whose job read 2, held rounds of 1 and 2 blocks
    and read no leak (h37-probe47b: ``as_recorded(training_iterations(3, layers=4, mib=64, optimizer_temp=False,
    leak="list"), context=None)``)."""
    own = ctx.job.structure if ctx.job is not None else None
    if own is None or own.source != "memory_iterations" or own.start.size < 2:
        return None
    starts = np.asarray(own.start, dtype=np.int64)
    if _runs_on_past(ctx, starts, np.asarray(own.end, dtype=np.int64)):
        return None
    return np.append(starts, _next_opened(ctx, int(own.end[-1])))


def _runs_on_past(ctx: Context, start: np.ndarray, end: np.ndarray) -> bool:
    """Whether the history runs on after the job's last iteration for longer than its longest: the job's iterations
    are then the head of a loop that changed after them, and their starts tell nothing of where the rest's end.

    Why: an evaluation begun after the second of 6 iterations (``val_total += loss`` from then on) breaks the
    allocations' repeats there, so a stackless job of 2 micro-batches an iteration read the first 2 only; the leak's
    rounds, ended at those starts alone, were one round -- no leak, 201,328,640 B kept over 4 iterations (h37-probe47m:
    ``as_recorded(training_iterations(6, micro_batches=2, optimizer_temp=False, leak="graph", leak_from=2),
    context=None)``).  Its own marks (a backward beside a forward) read the rounds."""
    last = max((int(me.t[-1]) for me in ctx.trace.memory.values() if len(me)), default=int(end[-1]))
    return last - int(end[-1]) > int(np.max(end - start))


def _next_opened(ctx: Context, end: int) -> list[int]:
    """[``end``] where a history the job read its iterations from runs on after it (an event later: the next
    iteration, whole or cut, begins there), else []."""
    last = max((int(me.t[-1]) for me in ctx.trace.memory.values() if len(me)), default=end)
    return [end] if end < last else []


def _leak(me: MemoryEvents, p: int, out: GpuMemory, before: dict[tuple[str, int], int] | None = None,
          starts: np.ndarray | None = None) -> np.ndarray:
    """A leak: passes of the same work that each keep the same blocks for good.  Why: a loop's level between its
    iterations is flat -- each iteration frees what it made (its optimizer's state, a cache, made once, are one pass)
    -- but a tensor kept past its iteration (``outputs.append(out)``; ``total += loss`` without ``.item()``, whose
    sum holds each iteration's graph) raises it by the same bytes every iteration until the GPU runs out.  Read from
    the blocks the history allocates and never frees (weights and blocks held by their lifetime aside), by site and
    size: those of one site and size split into rounds where, between two of them, a backward or an optimizer step
    runs beside a forward (an iteration ended and the next one's forward ran: a forward's layers, each keeping its
    graph's share, run no backward between them, an optimizer's first step making its state no forward, and each is
    one round), or an allocation outside every module's forward runs and the history frees a block made before
    the earlier (a forward-only loop's next pass: its other blocks came and went); a site leaks where
    ``memory.leak.min_iterations`` rounds or more each keep as many blocks while the lowest level between rounds
    rises by at least their bytes each time, and the leak is every such site's, ``memory.leak.min_bytes`` or more a
    round.  Its saving is the kept bytes live at the allocated peak ``p``.  A line whose kept blocks grow each pass
    (:func:`_growing_sites`) leaks too: its per-round bytes are its last round's, its first round's said beside them.

    ``before``: the blocks live at the dump that a history begun late never touches, by line and bytes
    (``MemorySnapshot.unseen_live``).  A full ring buffer keeps a leak's last passes only, while every earlier pass's
    blocks are still live at the dump (a leak frees none): those made at a leaking site's line with its bytes are its
    earlier passes' (whole passes of as many blocks as each seen one keeps), live at every event -- the peak too.
    Counted from the history alone, a loop that kept 128 MiB over 8 iterations read 5 iterations and 80 MiB.

    ``starts``: where the job's own iterations begin (:func:`_iteration_starts`), the ends :func:`_rounds` falls back
    to where the optimizer allocates too seldom to mark them (a fused or foreach optimizer under gradient
    accumulation).

    Returns the event indices of the leak's allocations (none where nothing leaks): held across iterations at the
    peak (:func:`_at_peak`), whichever phase made them."""
    sites = _leak_sites(me, starts, before)
    per_round = sum(int(me.blocks(r[-1]).sum()) for r in sites)
    if not sites or per_round < T("memory.leak.min_bytes"):
        return np.zeros(0, dtype=np.int64)
    every = np.concatenate([np.concatenate(r) for r in sites])
    if released_together(me, every):  # a forward's graph its output keeps, the previous one dropped: no leak
        return np.zeros(0, dtype=np.int64)
    earlier, earlier_bytes, earliest = _earlier_rounds(me, sites, before or {})
    out.leak_iterations = max(len(r) for r in sites) + earlier
    out.leak_earlier_iterations = earlier
    out.leak_per_iteration_bytes = per_round
    out.leak_first_iteration_bytes = earliest if earlier else sum(int(me.blocks(_whole(me, r)[0]).sum()) for r in sites)
    out.leak_blocks = sum(len(r[-1]) for r in sites)
    out.leak_bytes = int(me.blocks(every[every <= p]).sum()) + earlier_bytes
    out.leak_end_bytes = int(me.blocks(every).sum()) + earlier_bytes
    out.leak_sites = sorted({me.op_names[int(me.op[r[0][0]])] for r in sites  # a line no frame names is none
                             if 0 <= me.op[r[0][0]] < len(me.op_names)} - {"", "?"})
    return every


def _earlier_rounds(me: MemoryEvents, sites: list[list[np.ndarray]], before: dict[tuple[str, int], int]
                    ) -> tuple[int, int, int]:
    """(whole rounds, bytes, the first round's bytes) of a leak kept before a late-begun history (:func:`_leak`'s
    ``before``): per leaking site, its live unseen blocks (:func:`_unseen_of`), with the seen ones in whole rounds of
    as many blocks as its last round keeps (a first round the history cut holds the rest of its blocks among them);
    the leak's earlier rounds are those every site has (the fewest), its bytes every site's unseen blocks, and its
    first round's the least of each site's unseen blocks, one round's count of them (a leak keeps no fewer bytes
    a round as it goes on)."""
    if not before:
        return 0, 0, 0
    rounds, total, first = [], 0, 0
    for r in sites:
        sizes = _unseen_of(me, r, before)
        seen = sum(len(x) for x in r)
        rounds.append((seen + len(sizes)) // len(r[-1]) - len(r))  # whole rounds; a first one the history cut is one
        total += sum(sizes)
        first += sum(sorted(sizes)[:len(r[-1])])
    return max(min(rounds), 0), total, first


def _unseen_of(me: MemoryEvents, r: list[np.ndarray], before: dict[tuple[str, int], int]) -> list[int]:
    """The sizes of the blocks live at the dump, never touched by the late-begun history (``before``: by line and
    bytes), that leaking site ``r``'s earlier rounds kept: those made at its line with its bytes -- or, for a site
    whose rounds keep more bytes each time (:func:`_growing_sites`), with bytes no more than its first seen whole
    round's largest block.

    Why by line alone for a growing leak: each earlier round kept fewer bytes than the first one the history holds,
    so none has a seen round's size; matched by size, a ring buffer that kept 5 of 8 iterations of a leak growing
    by 16 MiB each read 5 iterations and 480 MiB, not 8 and 576 MiB -- the segments still hold the other 96 MiB
    (h37-probe45k)."""
    last = int(r[-1][0])
    name = me.op_names[int(me.op[last])] if 0 <= me.op[last] < len(me.op_names) else ""
    sizes = np.unique(me.blocks(np.concatenate(r)))  # blocks: the unit of the dump's, as ``before`` counts them
    if sizes.size == 1:
        return [int(sizes[0])] * before.get((name, int(sizes[0])), 0)
    top = int(me.blocks(_whole(me, r)[0]).max())
    return [size for (line, size), n in sorted(before.items()) if line == name and size <= top for _ in range(n)]


def _leak_sites(me: MemoryEvents, starts: np.ndarray | None = None, before: dict[tuple[str, int], int] | None = None
                ) -> list[list[np.ndarray]]:
    """Per leaking site and size (:func:`_leak`), its rounds: each the indices of the round's allocations.  Then, per
    user line none of those holds, the line's kept blocks whatever their sizes (:func:`_growing_sites`).  ``before``:
    :func:`_leak`'s, the blocks a late-begun history never touches (:func:`_line_round_numbers`)."""
    fr = me.frees()
    keep = (me.delta > 0) & (fr == len(me)) & (me.addr >= 0) & (me.phase != MEMORY_PHASES.index("parameters"))
    for extra in (me.cast_copy, me.by_lifetime):
        if extra is not None:
            keep &= ~extra
    cand = np.flatnonzero(keep)
    least = int(T("memory.leak.min_iterations"))
    if cand.size < least:
        return []
    marks = _round_marks(me, fr, starts)
    out = []
    keys = me.op[cand].astype(np.int64) * (1 << 40) + me.delta[cand]
    cand_all = np.flatnonzero(me.delta > 0)  # every allocation, freed or kept: a kept block's place among its site's
    keys_all = me.op[cand_all].astype(np.int64) * (1 << 40) + me.delta[cand_all]
    number = _line_round_numbers(me, cand, marks, before or {})
    grown = _unnamed_growth(me, cand, marks)
    for key in np.unique(keys):
        at = cand[keys == key]
        if at.size < least or np.isin(at, grown).all():
            continue
        rounds, rises = _rounds(at, marks, number[keys == key])
        rounds, rises = _without_held_round(rounds, rises, cand_all[keys_all == key], marks[0])
        whole = _whole(me, rounds)
        if (len(rounds) >= least and (len({len(r) for r in whole}) == 1 or _varied_micro_batches(at, marks, whole))
                and (rises >= 0.9 * me.blocks(rounds[0]).sum()).all()):
            out.append(rounds)
    return out + _growing_sites(me, cand[~np.isin(me.op[cand], [me.op[r[0][0]] for r in out])], marks)


def _unnamed_growth(me: MemoryEvents, cand: np.ndarray, marks: tuple[np.ndarray, ...]) -> np.ndarray:
    """The kept blocks (of ``cand``) of a growing leak no line names (:func:`_size_rounds`): each of its sizes one
    iteration's round, never a leak of its own.

    Why: a size of a leak growing each iteration is kept only in that iteration, once per micro-batch under gradient
    accumulation -- three blocks where ``memory.leak.min_iterations`` is three -- and with no line to tell the sizes
    apart, each size read as a leak of its own whose micro-batches were its rounds: a loop of 8 iterations of 3
    micro-batches read 3 "iterations" of 8 blocks, one of each size (h37-probe47b: ``as_recorded(
    training_iterations(8, layers=6, mib=8, micro_batches=3, optimizer_temp=False, leak="grow", leak_mib=4),
    context=None)``).  A leak of one size keeps its blocks over the whole loop, not in one iteration's stretch."""
    unnamed = np.array([name in ("", "?") for name in me.op_names] + [True], bool)  # the last: op -1, no frame
    bare = cand[unnamed[np.where((me.op[cand] >= 0) & (me.op[cand] < len(me.op_names)), me.op[cand], -1)]]
    runs = _size_rounds(me, bare, marks) if bare.size else []
    return np.concatenate([np.concatenate(r) for r in runs]) if runs else np.zeros(0, np.int64)


def _without_held_round(rounds: list[np.ndarray], rises: np.ndarray, made: np.ndarray, level: np.ndarray
                        ) -> tuple[list[np.ndarray], np.ndarray]:
    """(``rounds``, ``rises``) less the loop variable's block held at the dump (:func:`_without_held_last`) -- also
    where it is a round of its own before the last: the last two rounds taken as one, that block out, the other
    round's kept whole, or in the round before the last (:func:`_without_held_before_last`) -- with the rise across
    the rounds read again (:func:`_rounds`).

    Why: rounds end where a micro-batch's backward runs beside a forward while no optimizer allocation marks the
    iterations (a fused one, gradients zeroed in place), so the last micro-batch's loss, made in the last iteration's
    forward and held at the dump, fell between its iteration's start and the evaluation's loss it kept after the step:
    a round of one 512-B block at the rise of none, and the site of the evaluation's losses read no leak -- 2,048 B
    short of the loop's 201,328,640 (h37-probe47b: ``as_recorded(training_iterations(6, micro_batches=2,
    optimizer_temp=False, set_to_none=False, leak="graph", leak_from=2), context=None)``)."""
    cut = _without_held_last(rounds, made)
    if cut is not rounds or len(rounds) < 3:
        return cut, rises
    merged = _without_held_last([*rounds[:-2], np.concatenate(rounds[-2:])], made) if len(rounds) >= 4 else rounds
    if merged is rounds or len(merged[-1]) != len(rounds[-1]) or (merged[-1] != rounds[-1]).any():
        before = _without_held_before_last(rounds, made)
        return (rounds, rises) if before is rounds else (before, _rises(before, level))
    return merged, _rises(merged, level)


def _without_held_before_last(rounds: list[np.ndarray], made: np.ndarray) -> list[np.ndarray]:
    """``rounds`` less the block of the round before the last made at a place in the period no other round's kept
    block is (a place: its count among its site's allocations, freed or not -- ``made`` -- since the round before's
    first kept block), where that round alone keeps more blocks than the others, all alike, and without it keeps as
    many; else ``rounds`` itself.

    Why: with one micro-batch a round ends where the backward runs beside a forward, so the evaluation's loss kept
    after a step and the next iteration's training loss, made before its backward, fall in one round; the loop's
    variable holds the last iteration's training loss at the dump, freed by no later one, so the round before the
    last kept 2 blocks, the others 1, and the site of the evaluation's 512-B losses read no leak -- 2,048 B short of
    the loop's 201,328,640 (h37-probe47m: ``as_recorded(training_iterations(6, optimizer_temp=False,
    set_to_none=False, leak="graph", leak_from=2), context=None)``; with 3 iterations of 64-MiB blocks, a graph kept
    every iteration, rounds [1, 2, 1]: 1,536 B short).  Counted from each round's first kept block, a leak's block is
    at one place every period; the held block at another."""
    inner = [len(r) for r in rounds[1:-2]] + [len(rounds[-1])]
    if len(set(inner)) != 1 or len(rounds[-2]) <= inner[0]:
        return rounds
    place = [np.searchsorted(made, r, "right") - int(np.searchsorted(made, int(prev[0]), "right"))
             for prev, r in zip(rounds[:-1], rounds[1:])]  # each round after the first, from the one before's first
    others = np.unique(np.concatenate(place[:-2] + place[-1:]))
    keep = np.isin(place[-2], others)
    if int(keep.sum()) != inner[0]:
        return rounds
    return [*rounds[:-2], rounds[-2][keep], rounds[-1]]


def _rises(rounds: list[np.ndarray], level: np.ndarray) -> np.ndarray:
    """The rise of the lowest level between rounds across each round after the first (:func:`_rounds`'): ``level``
    per event, one past the end."""
    lows = [int(level[int(a[-1]) + 1:int(b[0]) + 1].min()) for a, b in zip(rounds[:-1], rounds[1:])]
    return np.diff(np.array(lows, dtype=np.int64))


def _without_held_last(rounds: list[np.ndarray], made: np.ndarray) -> list[np.ndarray]:
    """``rounds`` (one site's kept blocks by round) less the last round's blocks at a place in their round where every
    earlier round allocates a block it frees: a block's place is its count among every allocation of its site
    (``made``: line and bytes, freed or not) since the round before's last kept block (the history's start for the
    first).

    Why: each iteration runs the same code, so a leak's block is made at the same place among its site's allocations
    every iteration; a block the loop's variable still holds at the dump (the last iteration's loss, freed when the
    next one's is assigned) is made at another place, and only the last iteration keeps it.  Recorded without
    stacks, every allocation has one line, and the 512-byte losses an evaluation leaks (``val_total += loss``) share
    a site with the training loss: the last round kept 2 blocks, the others 1, and the site read as no leak -- 3
    blocks and 3,072 B short of the loop's (h37-probe46k: ``as_recorded(training_iterations(6, leak="graph"),
    context=None)``)."""
    if len(rounds) < 3:
        return rounds
    since = [int(np.searchsorted(made, int(prev[-1]) if prev is not None else -1, "right"))
             for prev in [None, *rounds[:-1]]]
    place = [np.searchsorted(made, r, "right") - s for s, r in zip(since, rounds)]
    earlier = np.unique(np.concatenate(place[:-1]))
    # the places every earlier round allocates at, up to its last kept block: a place past them is no freed block's
    made_at = min(len(p) and int(p[-1]) for p in place[:-1])
    keep = np.isin(place[-1], earlier) | (place[-1] > made_at)
    if keep.all() or not keep.any():
        return rounds
    return [*rounds[:-1], rounds[-1][keep]]


def _growing_sites(me: MemoryEvents, cand: np.ndarray, marks: tuple[np.ndarray, ...]) -> list[list[np.ndarray]]:
    """A leak whose bytes grow each pass: per user line, its kept blocks (``cand``) in rounds as
    :func:`_leak_sites` splits them, sizes free to differ.  Why: a list of outputs whose sequence or batch grows, or a
    cache keyed by shape that keeps each new shape's entry, keeps 16, 32, ... 96 MiB at one line -- each size a site
    of one block, so a match by size finds no round.  The line leaks where ``memory.leak.min_iterations`` rounds or
    more each keep as many blocks, a later round never fewer bytes than an earlier, and the level between rounds
    rises by at least each round's own bytes.  A line the history names: a history recorded without stacks gives
    every allocation one site, and its kept blocks of every kind would read as one line -- there each size is the
    site's round (:func:`_size_rounds`)."""
    least = int(T("memory.leak.min_iterations"))
    out = []
    for op in np.unique(me.op[cand]):
        if not 0 <= op < len(me.op_names) or me.op_names[int(op)] in ("", "?"):
            out.extend(_size_rounds(me, cand[me.op[cand] == op], marks))
            continue
        at = cand[me.op[cand] == op]
        if at.size < least:
            continue
        rounds, rises = _rounds(at, marks)
        whole = _whole(me, rounds)
        made = np.array([int(me.blocks(r).sum()) for r in rounds])
        if (len(rounds) >= least and len({len(r) for r in whole}) == 1 and (np.diff(made[-len(whole):]) >= 0).all()
                and (rises >= 0.9 * made[1:-1]).all()):
            out.append(rounds)
    return out


def _size_rounds(me: MemoryEvents, cand: np.ndarray, marks: tuple[np.ndarray, ...]) -> list[list[np.ndarray]]:
    """A growing leak among kept blocks no line names (``cand``: a history recorded without stacks), in rounds: a run
    of sizes, each kept in as many blocks, each larger than the one before and made wholly after it, an iteration's
    end (:func:`_gap_ends`) between each two, and the lowest level between them rising by at least each size's
    bytes -- ``memory.leak.min_iterations`` sizes or more.

    Why by size: without a line, a leak whose bytes grow each iteration (a list of outputs whose sequence grows: 16,
    32, ... 96 MiB) has no site its blocks share -- each size is one iteration's blocks and no other's, so a size is
    the round.  Skipped as a line no frame names, it read as no leak at all (h37-probe46g:
    ``as_recorded(training_iterations(3, leak="grow", leak_mib=4), context=None)``, 24 MiB kept).  The blocks a loop
    keeps otherwise are no such run: weights and an optimizer's state are made in one stretch, one size many times;
    the loss held at the dump is one block, smaller.  A round's size may be theirs too (a 64 MiB output beside 64 MiB
    weights): a round is its size's blocks made after the round before, the sizes taken in order of their last."""
    least = int(T("memory.leak.min_iterations"))
    sizes = np.unique(me.delta[cand])
    groups = sorted((cand[me.delta[cand] == size] for size in sizes), key=lambda g: int(g[-1]))
    runs: list[list[np.ndarray]] = []
    for g in groups:  # by their last block's event: each the next round of the first run it fits, else a run's first
        for run in runs:
            mine = g[g > run[-1][-1]]  # blocks of its size made before the round before are others'
            if len(mine) == len(run[-1]) and me.delta[g[0]] > me.delta[run[-1][0]]:
                run.append(mine)
                break
        else:
            runs.append([g])
    out = []
    for run in runs:
        if len(run) < least:
            continue
        at = np.concatenate(run)
        number = np.repeat(np.arange(len(run)), [len(g) for g in run])
        new, _step = _gap_ends(at, marks)
        rounds, rises = _rounds(at, marks, number)
        made = np.array([int(me.blocks(r).sum()) for r in rounds])
        if new[np.diff(number) > 0].all() and (rises >= 0.9 * made[1:-1]).all():
            out.append(rounds)
    return out


def _round_marks(me: MemoryEvents, fr: np.ndarray, starts: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """What :func:`_rounds` reads between two kept blocks, per event (one past the end for ``reduceat``): the
    allocated level, the index of each free's block's allocation (-1 where made before the history), a backward or
    optimizer event, such an event or an allocation outside every module's forward, a forward event, an optimizer
    event, the first event of one of the job's iterations (``starts``, ps; none where None) -- the last two
    :func:`_at_iteration_ends`'s."""
    big = np.iinfo(np.int64).max
    alloc = np.append(me.allocated, big)
    made = np.full(len(me) + 1, big, dtype=np.int64)  # per free: the index of its block's allocation
    paired = np.flatnonzero((fr >= 0) & (fr < len(me)))
    made[fr[paired]] = paired
    made[me.unseen_frees()] = -1  # a block the history frees but never allocated was made before all of it
    trained = np.append(np.isin(me.phase, [MEMORY_PHASES.index("backward"), MEMORY_PHASES.index("optimizer")]), False)
    # an allocation outside every module's forward and every backward or optimizer step (the input of a forward-only
    # loop's next pass): a backward or a step ends a round only beside a forward (:func:`_gap_ends`)
    stepped = np.append((me.phase == MEMORY_PHASES.index("other")) & (me.delta > 0), False)
    forward = np.append(me.phase == MEMORY_PHASES.index("forward"), False)
    stepper = np.append(me.phase == MEMORY_PHASES.index("optimizer"), False)
    opened = np.zeros(len(me) + 1, bool)
    if starts is not None and len(me):
        opened[np.searchsorted(me.t, starts, side="left")] = True  # one past the end where it begins after them
        opened[-1] = False
    return alloc, made, trained, stepped, forward, stepper, opened


def _line_round_numbers(me: MemoryEvents, cand: np.ndarray, marks: tuple[np.ndarray, ...],
                        before: dict[tuple[str, int], int] | None = None) -> np.ndarray:
    """Per kept block of ``cand``, the number of its round among its user line's kept blocks (:func:`_round_numbers`
    over each line's blocks, whatever their sizes, with the line's blocks of those sizes live at the dump that a
    late-begun history never touches: ``before``, :func:`_leak`'s).

    Why by line, not by line and size: where a round ends is the loop's iteration's end, which a site of one size
    cannot see when all its blocks fall in one iteration.  A leak growing each iteration under gradient accumulation
    (3 micro-batches each keeping the head's output, 4 MiB in the first iteration, 8 in the second ...) keeps each
    size in one iteration only: its own gaps hold no optimizer step, so the micro-batches' backward-beside-forward
    ends read each size as 3 "iterations" of one block -- a leak of 3 iterations whatever the loop ran (8 here,
    h37-probe45g: ``training_iterations(8, micro_batches=3, leak="grow")``).  The line's gaps hold the steps."""
    number = np.zeros(cand.size, dtype=np.int64)
    lines = me.op[cand]
    for op in np.unique(lines):
        on = lines == op
        name = me.op_names[int(op)] if 0 <= op < len(me.op_names) else ""
        sizes = set(me.delta[cand[on]].tolist())
        unseen = sum(n for (line, size), n in (before or {}).items() if line == name and size in sizes)
        number[on] = _round_numbers(cand[on], marks, unseen)
    return number


def _gap_ends(at: np.ndarray, marks: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Per gap between the kept blocks ``at`` (in order, two or more): whether a round ends there by the blocks' own
    gaps (:func:`_leak`'s rule: a backward or a step beside a forward, or an allocation outside the forwards, the
    backward and the steps with a block made before the earlier freed), and whether the optimizer allocates in it.

    Why not a backward's or a step's allocation beside such a free: one optimizer step's loop over its parameters
    frees each parameter's old block (an update out of place) and makes its next one's state, and one backward frees
    the forward's saved tensors between the gradients it keeps -- no iteration ends there.  Counted so, the first
    AdamW step of a one-step history (its m and v made once per parameter, kept for the next step) read as a leak of
    128 "iterations" of one block each, the backward's norm gradients as 65 (kkaitlyn111/cs336-a2-systems
    ``memory_ctx128_fullstep_.pickle``, h37-snap58)."""
    _alloc, made, trained, stepped, forward, stepper, _opened = marks
    gaps = np.append(at[:-1] + 1, at[-1] + 1)
    new = (at[1:] > at[:-1] + 1) & (((np.minimum.reduceat(made, gaps)[:-1] < at[:-1])
                                     & (np.add.reduceat(stepped, gaps)[:-1] > 0))
                                    | ((np.add.reduceat(trained, gaps)[:-1] > 0)
                                       & (np.add.reduceat(forward, gaps)[:-1] > 0)))
    return new, np.add.reduceat(stepper, gaps)[:-1] > 0


def _varied_micro_batches(at: np.ndarray, marks: tuple[np.ndarray, ...], whole: list[np.ndarray]) -> bool:
    """Whether the rounds ``whole`` of a site's kept blocks ``at`` hold different counts only as an accumulation
    schedule does: the optimizer's own steps end ``memory.leak.min_iterations`` - 1 of its gaps or more, and every
    micro-batch (a round by its own gaps, :func:`_gap_ends`) keeps the same count b, every round a multiple of it.

    Why: a loop whose micro-batches per step vary (a schedule that grows the accumulation, an epoch's short last
    group) keeps, with each micro-batch's output, 2, 2, 3, 3 ... blocks an iteration; the rule of as many blocks
    each round read it as no leak, though each step its optimizer marks held more (h37-probe46k:
    ``training_iterations(micro_schedule=[2, 2, 3, 3, 3, 3], leak="list")``)."""
    if at.size < 2:
        return False
    new, step = _gap_ends(at, marks)
    if int((new & step).sum()) < int(T("memory.leak.min_iterations")) - 1:
        return False
    micro = np.diff(np.concatenate([[0], np.flatnonzero(new) + 1, [at.size]]))
    b = int(micro[-1])
    return bool((micro == b).all() and all(len(r) % b == 0 for r in whole))


def _round_numbers(at: np.ndarray, marks: tuple[np.ndarray, ...], unseen: int = 0) -> np.ndarray:
    """Per kept block of ``at`` (in order), the number of its round by :func:`_leak`'s rule: a new round where, in the
    gap before the block, an iteration ends (:func:`_at_iteration_ends`, then :func:`_first_step_cadence` with the
    ``unseen`` blocks of the line a late-begun history kept before it)."""
    if at.size < 2:
        return np.zeros(at.size, dtype=np.int64)
    stepper, opened = marks[5], marks[6]
    gaps = np.append(at[:-1] + 1, at[-1] + 1)
    new, step = _gap_ends(at, marks)
    least = int(T("memory.leak.min_iterations"))
    ends = _at_iteration_ends(new, [new & step, np.add.reduceat(opened, gaps)[:-1] > 0], least)
    if int((new & step).sum()) < least - 1:  # the optimizer's own steps mark too few ends: its first sets a cadence
        grouped = _first_step_cadence(ends, step, unseen, bool(stepper[:at[0]].any()))
        ends = grouped if int(grouped.sum()) >= least - 1 else ends
    return np.concatenate([[0], np.cumsum(ends)])


def _rounds(at: np.ndarray, marks: tuple[np.ndarray, ...], number: np.ndarray | None = None
            ) -> tuple[list[np.ndarray], np.ndarray]:
    """The kept blocks ``at`` split into rounds -- by their own gaps (:func:`_round_numbers`), or by ``number``, each
    block's round among its line's (:func:`_line_round_numbers`) -- and the rise of the lowest level between rounds
    across each round after the first."""
    if number is None:
        number = _round_numbers(at, marks)
    gaps = np.append(at[:-1] + 1, at[-1] + 1)
    lows = np.minimum.reduceat(marks[0], gaps)[:-1]  # the lowest level between two
    new = np.diff(number) > 0
    return np.split(at, np.flatnonzero(new) + 1), np.diff(lows[new])


def _whole(me: MemoryEvents, rounds: list[np.ndarray]) -> list[np.ndarray]:
    """``rounds`` less a first one a late-begun history cut (fewer blocks than the next: its earlier ones are not
    in it)."""
    if me.unseen_frees().size > 0 and len(rounds) > 1 and len(rounds[0]) < len(rounds[1]):
        return rounds[1:]
    return rounds


def _at_iteration_ends(new: np.ndarray, ends: list[np.ndarray], least: int) -> np.ndarray:
    """The round ends of one site's kept blocks: per gap between two of them, whether an iteration ends there -- by
    the first of ``ends`` that marks at least ``least - 1`` gaps (the ends ``new`` reads where an optimizer step runs
    in the gap; the gaps one of the job's iterations begins in), else ``new`` (a backward or a step beside a forward,
    :func:`_rounds`) -- which :func:`_round_numbers` then regroups by the optimizer's first step's cadence.

    Why: an iteration is one optimizer step.  With gradient accumulation it runs several forwards and backwards
    before its step, and a backward beside the next forward ends no iteration: a loop of 6 iterations of 2
    micro-batches, each keeping its forward's output (``outputs.append(out)``), read as 12 "iterations" of one block
    where gradients stay allocated (``zero_grad(set_to_none=False)``), and as no leak at all where ``zero_grad()``
    frees them -- the level between micro-batches then holds the gradients, between iterations not, and no rise
    showed (h37-review44: ``synthetic.memsnapshot.training_iterations(micro_batches=2, leak="list")``).  An optimizer
    that allocates nothing after its first step (a fused or foreach one, updating in place) marks no later end: the
    job's iterations do (``job.iterations``: the gradients an iteration's first backward makes, held through its
    micro-batches and freed by ``zero_grad()``) -- without them a loop of 6 iterations of 2 micro-batches under
    ``AdamW(fused=True)`` read as no leak at all (h37-probe45k: ``training_iterations(micro_batches=2,
    optimizer_temp=False, leak="list")``) -- and, where the job found no iterations either (gradients zeroed in
    place: nothing freed between iterations), the optimizer's first step sets the cadence
    (:func:`_first_step_cadence`).  The job's iterations are ends on their own: a history recorded without stacks
    has no phase, so no backward beside a forward ends a round, yet the job reads its passes from the level's climbs
    and falls (``job.iterations``) -- a loop keeping 16 MiB after each of 6 iterations read as no leak (h37-probe45k:
    ``as_recorded(cache_twin(leak_mib=16), context=None)``)."""
    for at in ends:
        if int(at.sum()) >= least - 1:
            return at
    return new


def _first_step_cadence(ends: np.ndarray, stepped: np.ndarray, unseen: int = 0, lead: bool = False) -> np.ndarray:
    """Per gap between a line's kept blocks, an iteration's end by the optimizer's first step: where it allocates in
    one gap only, or only before the first block (``lead``) -- its state, made on its first step; a fused or foreach
    optimizer updates in place after -- that step ends the first iteration, whose kept blocks are those up to it and
    the ``unseen`` ones a late-begun history never touches (all made before it: the history holds that step); where
    they are k >= 2 times the blocks each round of ``ends`` keeps after it, a round is a micro-batch, and every k-th
    end after the step ends an iteration.  Else ``ends``.

    Why: gradient accumulation runs as many micro-batches before every optimizer step (its setting), and where
    ``zero_grad(set_to_none=False)`` keeps the gradients allocated nothing in the history tells a micro-batch's end
    from an iteration's but that first step: a loop of 6 iterations of 2 micro-batches, each keeping its output,
    read as 12 "iterations" of 16 MiB, not 6 of 32 MiB (h37-probe45k).  Counted from the history's first entries,
    the first iteration lost the micro-batches a ring buffer (``max_entries``) dropped, and the job's iterations,
    read off the same micro-batches, were taken as they came: the same loop cut after its first backward read 12
    iterations of 16 MiB, with 3 micro-batches no leak at all (h37-probe46k)."""
    hit = np.flatnonzero(stepped)
    if hit.size + lead != 1 or (hit.size and not ends[hit[0]]):
        return ends
    j = int(hit[0]) if hit.size else -1  # the gap the step runs in; -1: before the first block
    after = np.flatnonzero(ends[j + 1:]) + j + 1
    sizes = np.diff(np.concatenate([[j], after, [ends.size]]))  # blocks per round after the step; the last may be cut
    b = int(sizes[0])
    first = unseen + j + 1
    if sizes.size < 2 or (sizes[:-1] != b).any() or sizes[-1] > b or first % b or first // b < 2:
        return ends
    k = first // b
    out = np.zeros_like(ends)
    out[after[k - 1::k]] = True
    if j >= 0:
        out[j] = True
    return out


def _round_entries(n: int) -> bool:
    """``n`` is a number a user passes as ``max_entries`` (two significant digits at most, 100 or more: 10,000,
    25,000, 1,000,000): a full ring buffer holds exactly that many, while a history cut by nothing ends at any count
    (one in a hundred five-digit counts is so round)."""
    return n >= 100 and n % 10 ** (len(str(n)) - 2) == 0


def _begun_late(ctx: Context, gpu: int) -> str:
    """The memory section's words on a snapshot GPU whose history frees blocks it never allocated
    (``MemorySnapshot.begun_late``), "" elsewhere.  Why: its peak and what held it are those of the events it kept;
    a ring buffer cut (``max_entries`` reached) or a recording begun mid-run was reported as the job's whole history.
    The two leave the same mark; a count of entries that is a round ``max_entries`` tells the ring buffer."""
    snap = ctx.trace.snapshot
    late = snap.begun_late.get(gpu) if snap is not None else None
    if late is None:
        return ""
    blocks, size, entries = late
    # one event: enabled="state"'s ring buffer of one, not a round max_entries nor a late start (h37-snap69)
    key = "snapshot_begun:state" if entries == 1 else \
        "snapshot_begun:ring" if _round_entries(entries) else "snapshot_begun:either"
    return ctx.fw.label(key, blocks=plural(blocks, "block"), size=gb(size), entries=plural(entries, "entry", "entries"),
                        n=entries, made="it was made" if blocks == 1 else "they were made")


def _gradients_moved(ctx: Context, out: GpuMemory) -> None:
    """The live blocks of a snapshot that ``Module._apply`` moved as parameters' gradients (``out.grads_moved_*``).

    Why: a model moved to the GPU with its ``.grad`` tensors set (loaded from a training checkpoint or object) carries
    them into a process that never runs a backward (BlockZero's evaluator: ~14.8 GiB of a 29.6 GiB Qwen3 model,
    issue #37).  ``_apply`` moves each parameter, then its gradient from a later line of the same function; the two
    allocations have the same size and the same stack but for that line.  So the stacks that differ only in their
    innermost ``_apply`` frame (the framework's ``module_apply_line``), in exactly two lines with equal bytes and
    block counts, are parameters (the earlier line) and gradients (the later) -- whatever the PyTorch version's line
    numbers."""
    snap = ctx.trace.snapshot
    stacks = snap.stacks.get(out.gpu, []) if snap is not None and snap.stacks else []
    groups: dict[tuple, dict[int, list[int]]] = {}
    users: dict[tuple, str] = {}
    for st in stacks:
        at = next(((i, ln) for i, f in enumerate(st.frames) if (ln := ctx.fw.module_apply_line(f)) is not None), None)
        if at is None:
            continue
        i, line = at
        key = (*st.frames[:i], "_apply", *st.frames[i + 1:])
        size_blocks = groups.setdefault(key, {}).setdefault(line, [0, 0])
        size_blocks[0] += st.size
        size_blocks[1] += st.blocks
        users.setdefault(key, st.label)
    out.grads_moved_of = sum(st.size for st in stacks)
    for key, lines in groups.items():
        if len(lines) != 2:
            continue
        (_, a), (_, b) = sorted(lines.items())
        if a == b:  # the parameters and their gradients: the same bytes in the same blocks
            out.grads_moved_bytes += b[0]
            out.grads_moved_blocks += b[1]
            out.grads_moved_by = out.grads_moved_by or users[key]


def _windows(ctx: Context, me: MemoryEvents) -> np.ndarray:
    """The step windows a GPU's allocator events are placed in: the GPU's own steps, but for host-clock events of
    steps the host marks and dispatches ahead (PyTorch: the GPU's window is the host step moved to where its work
    ran, so an allocation made in host step N would fall in GPU step N-1).  Where the steps are the GPU's own (a
    grouped capture's per-GPU ``Steps`` line), the host-wide window only spans every GPU's: one process driving GPUs
    in turn gave a step 0 of 669 ms around GPU 6's 21 ms one, and its peak "665.9 ms into" it (h37-left20)."""
    if me.clock == "gpu" or ctx.steps.detection.mapped_via != "correlation_id":
        return ctx.steps.window(me.gpu)
    return ctx.steps.host_windows


def _peak_event(me: MemoryEvents, win: np.ndarray) -> int:
    """The event at the allocated peak: where every step peaks alike, the last such event inside a kept step (a
    dropped warm-up or closing step says less of the steady state), else the last one (the stock Memory Profile's
    choice on ties)."""
    at = np.flatnonzero(me.allocated == me.allocated.max())
    if win.shape[0]:
        i = np.searchsorted(win[:, 0], me.t[at], side="right") - 1
        kept = (i >= 0) & (me.t[at] < win[np.maximum(i, 0), 1])  # a window's end is the next one's start
        if kept.any():
            return int(at[kept][-1])
    return int(at[-1])


def _steady_peak(ctx: Context, me: MemoryEvents, win: np.ndarray, p: int) -> tuple[int, int] | None:
    """(the peak event of the steady iterations, the warm-up step's number) where the capture's peak ``p`` falls
    before the first kept step, in steps the step detection dropped as warm-up; None otherwise.

    Why: a loop's first call does work no later one does (an autotuner's trial buffers, a library's first-call
    workspace, ``job.iterations.first_call_work``), and its peak may stand above every steady iteration's.  That
    peak is not what a fix to the loop acts on -- recomputation, a smaller batch, freeing a tensor earlier change the
    steady iterations -- so the table and the rules judge the peak from the first kept step on (the rest of the
    capture: a partial last iteration is steady work too), and the warm-up's is said apart.  A memory snapshot's
    iterations (h37-left35) and a profiler trace's ``[memory]`` events (``profile_memory=True``, its first step
    dropped by the stock rule or as cold, h37-left39) alike."""
    if not win.shape[0]:
        return None
    first = int(win[0, 0])
    warm = [d for d in ctx.steps.detection.dropped
            if d.reason.startswith("warm-up") and ctx.steps.ids.size and d.step < int(ctx.steps.ids[0])]
    if not warm or int(me.t[p]) >= first:
        return None
    lo = int(np.searchsorted(me.t, first, side="left"))
    if lo >= len(me):
        return None
    rest = me.allocated[lo:]
    if int(rest.max()) >= int(me.allocated[p]):
        return None  # the steady iterations reach it too: it is theirs
    at = np.flatnonzero(rest == rest.max()) + lo
    inside = np.array([_step_of(win, int(me.t[i])) is not None for i in at.tolist()])
    return int(at[inside][-1] if inside.any() else at[-1]), _warm_step(ctx, me, warm, int(me.t[p]))


def _warm_step(ctx: Context, me: MemoryEvents, warm: list, t: int) -> int:
    """The dropped warm-up step whose window holds time ``t`` (the warm-up's peak), placed as the kept steps are
    (:func:`_windows`: the GPU's own windows, or the host's for host-clock events of a host-marked job); the latest
    where none holds it (a peak before the first step's start).

    Why: several leading steps may be dropped (the stock rule's first, cold ones, those in a program's own warm-up
    range), and the peak lies in one of them -- the first call's one-time buffer is the first step's -- not
    necessarily the last dropped (h37-left35 named the latest)."""
    host = me.clock != "gpu" and ctx.steps.detection.mapped_via == "correlation_id"
    for d in warm:
        w = d.window if host else d.gpu_windows.get(me.gpu, d.window)
        if w is not None and w[0] <= t < w[1]:
            return int(d.step)
    return int(max(d.step for d in warm))


def _timed(ctx: Context) -> bool:
    """Whether the capture records when its events happened: a PyTorch 2.0 snapshot's history (and its drawn page)
    keeps their order only -- the reader places one entry a microsecond, a clock the file does not hold."""
    return not (ctx.trace.snapshot is not None and ctx.trace.span_ps is None)


def _order_place(ctx: Context, me: MemoryEvents, p: int) -> str:
    """Where event ``p`` falls in a history without times, in words: its iteration (or pass) by the order the job's
    structure cut (``job.iterations``) and its place among the GPU's events -- never a time."""
    where = f"event {p + 1:,} of {len(me):,}"
    own = ctx.job.structure if ctx.job is not None else None
    if own is None or own.source != "memory_iterations" or not own.start.size:
        return where
    t = int(me.t[p])
    k = np.flatnonzero((own.start <= t) & (t <= own.end))
    n = int(own.start.size)
    if not k.size:
        return f"{where}, outside every {own.name}"
    return f"{own.name} {int(k[-1]) + 1} of {n}, {where}"


def _capacity(ctx: Context, me: MemoryEvents) -> tuple[int | None, str]:
    """The GPU's memory as its allocator can use it, and where that comes from.  An allocator limit under the (XLA takes 75% of an 80 GB H100 by default: 59.4 of 79.2 GiB, issue #36)."""
    device = _device_memory(ctx, me.gpu)
    if me.limit_bytes:
        return int(me.limit_bytes), "allocator limit"
    return (int(device), "device memory") if device else (None, "")


def _outside(ctx: Context, gpu: int, cap_source: str) -> int | None:
    """Bytes of the GPU in use outside the process's caching allocator (``MemorySnapshot.outside``: a snapshot's
    capacity record), where the capacity judged against is the GPU's whole memory that record gives; None else (an
    allocator's limit is already what the allocator may take)."""
    snap = ctx.trace.snapshot
    if snap is None or cap_source != "device memory":
        return None
    return snap.outside.get(gpu)


def _device_memory(ctx: Context, gpu: int) -> int | None:
    d = ctx.trace.device(gpu)
    info = d.info if d is not None else ctx.trace.memory_devices.get(gpu)  # a GPU known only by its memory: its own size
    if info is not None and info.memory_bytes:
        return int(info.memory_bytes)
    sizes = [x.info.memory_bytes for x in ctx.trace.devices if x.info.memory_bytes]
    if sizes and len(set(sizes)) == 1:  # every GPU of the process alike: this one too
        return int(sizes[0])
    return None


def _ms(ctx: Context, t_ps: int) -> float:
    return (t_ps - ctx.steps.origin_ps) / PS_PER_MS


def _step_of(win: np.ndarray, t: int) -> int | None:
    if not win.shape[0]:
        return None
    i = int(np.searchsorted(win[:, 0], t, side="right")) - 1
    return i if i >= 0 and t < int(win[i, 1]) else None  # [start, end): the end is the next window's start


def _iteration_start(ctx: Context, me: MemoryEvents, p: int) -> int | None:
    """Where no step holds the peak, the end of the last optimizer step before it in a snapshot that marks them, else
    the start of the job's own iteration that holds it (:func:`_iteration_starts`: one the step detection dropped --
    the last, possibly partial), else in a snapshot the start of the peak's forward pass (:func:`_forward_start`):
    what is live at the peak and older was made by an earlier iteration (the weights, the optimizer's state, a
    library's workspace) -- held across steps, whichever phase made it.

    Why the job's iterations before the forward's start: that start is bounded by the optimizer's allocations, and a
    fused optimizer allocates on its first step only -- every iteration after the first then read as the peak's one,
    their leaked outputs (1.6 GiB over 7 iterations) as its activations (h37-probe45g: ``training_iterations(8,
    micro_batches=3, optimizer_temp=False, leak="grow")``, its peak in the last iteration, dropped as partial)."""
    snap = ctx.trace.snapshot
    if snap is None:
        return None
    t = int(me.t[p])
    ends = [e for e in snap.iteration_ends_ps if e <= t]
    if ends:
        return max(ends)
    own = _iteration_starts(ctx)
    if own is not None and own[0] <= t:
        return int(own[own <= t][-1])
    return _forward_start(me, p)


def _forward_start(me: MemoryEvents, p: int) -> int | None:
    """The start of the forward pass the peak at event ``p`` belongs to, read off the phases of the allocations: the
    first forward allocation after the last optimizer allocation that comes before the peak's last forward one --
    or, in a capture with no optimizer allocation at all (plain SGD allocates none), the last backward one; None in
    the first iteration (nothing before it is an earlier iteration's).

    Why: activations are freed by the backward that reads them, so a forward-made block live at the peak that an
    earlier iteration allocated -- it outlived that iteration's backward -- is no activation: cuBLAS's workspace, made
    in the first ``linear`` forward and kept by its handle (Da1sypetals/tomi's snapshot of a 10-20-1 MLP: 8.1 MiB of
    its 17.3 MiB peak, read as "activations" and as what recomputation would free).  The optimizer bounds iterations
    where it allocates: a compiled backward's allocations carry the compiled graph's forward frames, so backward and
    forward interleave inside one iteration (wild/snapshot_compiled_gpt2)."""
    i = np.flatnonzero(me.delta[:p + 1] > 0)
    phase = me.phase[i]
    forward = i[phase == MEMORY_PHASES.index("forward")]
    if not forward.size:
        return None
    optimizer = MEMORY_PHASES.index("optimizer")
    bound = optimizer if (me.phase[me.delta > 0] == optimizer).any() else MEMORY_PHASES.index("backward")
    before = i[(phase == bound) & (i < forward[-1])]
    if not before.size:
        return None
    return int(me.t[int(forward[forward > before[-1]][0])])


def _least_reserve(ctx: Context, me: MemoryEvents, p: int) -> int | None:
    """The least the framework's allocator reserves for the blocks live at event ``p``, never below the bytes
    allocated then (blocks from before the history, whose sizes it does not show, are counted as their bytes).  Why:
    reserve beyond the peak that the allocator's own segment sizes require is rounding, not fragmentation."""
    if ctx.fw.least_reserve is None or not (me.addr >= 0).any() or me.baseline != "absolute":
        return None
    i = np.arange(len(me))
    live = (me.delta > 0) & (i <= p) & (me.frees() > p)
    largest = int(me.delta[: p + 1].max(initial=0))
    return max(ctx.fw.least_reserve(me.blocks(live), largest), int(me.allocated[p]))


def _at_peak(me: MemoryEvents, p: int, step_start: int | None, leaked: np.ndarray | None = None,
             framed: bool = True) -> tuple[dict[str, int], list[MemoryHolder]]:
    """Live bytes at event ``p`` by category, and the ops holding the most.  Autocast's cached copies of the weights
    made in the peak's own pass are ``casts``, not ``held``: the cache is emptied when the autocast region exits, so
    they live one pass (CTKnight's CS336 bf16 forward: 6.3 of the 19.1 GiB read as held across steps; h37-snapleft);
    one made before the pass -- a region around several passes, whose cache they share -- is held.

    A leak's blocks (``leaked``, :func:`_leak`'s) are held too, those of the peak's own iteration among them: the loop
    keeps them past every iteration, so they are no activation a backward reads, and recomputation frees none of
    them.  Booked by phase, a growing leak's last iteration's outputs (3 x 128 MiB, made in its forward) read as
    activations beside the leak's finding that counts them too: the two savings over the peak (h37-probe45g).

    A block of no phase that the job reads as the backward's (``job.iterations.backward_allocations``: a history with
    Python frames only, where the backward runs on autograd's thread with no frame, and an optimizer stepped) is a
    gradient: an Adam loop recorded so (Windows records nothing else) booked its 256 MiB of gradients "other" while the
    job read the same allocations as its backward (h37-snap64).  Neither applies where the phases are the allocation
    pattern's (``framed`` False, :func:`_pattern_phased`): it tells the forward's and the backward's blocks itself, and
    its backward runs on through the optimizer's step, so every block ``zero_grad()`` frees read as an activation."""
    free_at = me.frees()
    i = np.arange(len(me))
    live = (me.delta > 0) & (i <= p) & (free_at > p)
    size = me.blocks(live)  # the unit ``allocated`` counts: each part of the level a part of it
    phase = me.phase[live].copy()
    other = phase == MEMORY_PHASES.index("other")
    if framed:
        phase[_freed_by_backward(me)[live] & other] = MEMORY_PHASES.index("forward")
        phase[backward_allocations(me)[live] & other] = MEMORY_PHASES.index("backward")
    earlier = me.t[live] < step_start if step_start is not None else np.zeros(size.shape, bool)
    if leaked is not None and leaked.size:
        earlier |= np.isin(np.flatnonzero(live), leaked)
    made_by = _holders(me)[live]
    cats = np.array([_kind(MEMORY_PHASES[k] if 0 <= k < len(MEMORY_PHASES) else "other", h, e)
                     for k, h, e in zip(phase.tolist(), made_by.tolist(), earlier.tolist())], dtype=object)
    cats[_cast(me)[live] & ~earlier & (made_by == "")] = "casts"
    by_cat = {c: int(size[cats == c].sum()) for c in MEMORY_CATEGORIES}
    if me.baseline == "absolute":  # what the capture saw no allocation of is older than it
        by_cat["held"] += max(int(me.allocated[p]) - int(size.sum()), 0)
    ops = me.op[live]
    holders: dict[tuple[int, str], list[int]] = {}
    for o, c, b in zip(ops.tolist(), cats.tolist(), size.tolist()):
        h = holders.setdefault((o, c), [0, 0])
        h[0] += b
        h[1] += 1
    top = sorted(holders.items(), key=lambda kv: -kv[1][0])[:TOP_HOLDERS]
    return ({c: v for c, v in by_cat.items() if v},
            [MemoryHolder(me.op_names[o] if 0 <= o < len(me.op_names) else "(no op)", c, b, k) for (o, c), (b, k) in top])


def _kind(phase: str, holder: str = "", held: bool = False) -> str:
    """A live block's kind, at the peak (:func:`_at_peak`) and at an OOM (:func:`_oom`) alike: the maker its stack
    names (``model.trace.HOLDERS``) first, else held across steps where it was made before the step (or turn) began,
    else the category its phase gives.

    Why the maker first: its own fix frees it whatever phase made it and however long it lives -- a fused attention
    backend never writes the math backend's score matrices (checkpointing would recompute them, a smaller batch shrink
    them), and a KV cache is sized by the tokens it keeps (a static one made before the first forward lived as long
    as the weights and was booked with them, and sharding was prescribed).  The peak booked by phase and time while
    the OOM booked by maker: one block, two kinds, and the memory rules prescribed the phase's fix at a peak."""
    return holder or ("held" if held else _CATEGORY_OF_PHASE.get(phase, "other"))


def _holders(me: MemoryEvents) -> np.ndarray:
    """Per event, the maker its stack names (``HOLDERS``), "" for none (and everywhere in a format that cannot tell)."""
    names = np.array([*HOLDERS, ""], dtype=object)
    if me.holder is None:
        return np.full(len(me), "", dtype=object)
    return names[np.where(me.holder >= 0, me.holder, len(HOLDERS))]


def _lifetime_only(ctx: Context, me: MemoryEvents, p: int, out: GpuMemory) -> int:
    """Bytes live at the peak event ``p`` booked held by their lifetime alone (``MemoryEvents.by_lifetime``) where the
    history holds fewer than two whole loop turns (no steps read from its pattern), never more than ``held``; 0 else.

    Why: the reader books a block no frame names, made before the first forward and never freed, with the
    parameters -- the weights a loader placed live so (h37-heldlife31).  Where two turns or more are recorded, a
    block that outlived them is held across steps whatever it is; in one turn, the input that turn reads lives the
    same way (a benchmark's q, k, v made once before its only call: mini_snapshot_cut's 128 MiB), and nothing shows
    it is held across steps -- the report says so rather than count it silently with the weights."""
    if me.by_lifetime is None or not me.by_lifetime.any():
        return 0
    if ctx.steps.detection.source == "memory_iterations" and ctx.steps.ids.size >= 2:
        return 0
    i = np.arange(len(me))
    live = me.by_lifetime & (me.delta > 0) & (i <= p) & (me.frees() > p)
    if me.holder is not None:  # a KV cache's blocks: its code names what they are
        live &= me.holder < 0
    return min(int(me.blocks(live).sum()), out.breakdown.get("held", 0))


def _freed_by_backward(me: MemoryEvents) -> np.ndarray:
    """Per event: an allocation made before a backward pass began and freed inside it, before the next allocation
    that is not the backward's.

    Why: a tensor the backward frees is one autograd kept for it -- an activation by what it does, whatever code made
    it.  The stack names a module's ``forward`` only when the op ran inside one; a loss or any op called from the
    script itself (``F.cross_entropy(logits, y)``: its 250 MiB log-softmax kept for the backward, in the
    efficient-dl-systems course's cross-entropy snapshot) has no such frame and was booked "other".  A block the
    backward does not free (the model's input, the logits) and one freed only after the next step began (last
    step's batch) stay where their stacks put them."""
    n = len(me)
    out = np.zeros(n, dtype=bool)
    bwd, other = MEMORY_PHASES.index("backward"), MEMORY_PHASES.index("other")
    allocs = np.flatnonzero(me.delta > 0)
    if not allocs.size or not (me.phase[allocs] == bwd).any():
        return out
    is_bwd = me.phase[allocs] == bwd
    # each allocation's backward run: the index (in ``allocs``) where its run of backward allocations began, -1 if none
    run_start = np.full(allocs.size, -1, dtype=np.int64)
    start = -1
    for k in range(allocs.size):
        start = (start if start >= 0 else k) if is_bwd[k] else -1
        run_start[k] = start
    free_at = me.frees()
    cand = allocs[(me.phase[allocs] == other) & (free_at[allocs] < n)]
    if not cand.size:
        return out
    last = np.searchsorted(allocs, free_at[cand]) - 1  # the last allocation before each free, in ``allocs``
    ok = last >= 0
    began = np.where(ok, run_start[np.maximum(last, 0)], -1)
    hit = ok & (began >= 0) & (allocs[np.maximum(began, 0)] > cand)
    out[cand[hit]] = True
    return out


def _forward_kept(ctx: Context, me: MemoryEvents, p: int, out: GpuMemory) -> None:
    """The forward pass's blocks live at the peak (``out.forward_kept_*``): how many, their bytes, the largest, and
    what became of them -- still held at the end of the capture, freed together (one run of frees with no allocation
    between), or freed over a span.  A forward run with autograd on keeps every layer's tensors for a backward; one
    under ``no_grad`` keeps only the tensors in use (a few times its largest)."""
    n = len(me)
    snap = ctx.trace.snapshot
    if _forward_kept_at_dump(ctx, me, p, out):
        return
    made = _climb(me, p) & ~_cast(me) if snap is not None and snap.stackless else \
        me.phase == MEMORY_PHASES.index("forward")
    made &= _holders(me) != "kv_cache"  # a cache made in the forward is kept on purpose, not by autograd
    free_at = me.frees()
    i = np.arange(n)
    kept = (me.delta > 0) & (i <= p) & (free_at > p) & made
    if not kept.any():
        return
    size, fr = me.blocks(kept), free_at[kept]  # bytes in blocks, a part of the peak; sizes matched by request
    out.forward_kept_bytes, out.forward_kept_blocks = int(size.sum()), int(kept.sum())
    out.forward_kept_largest = int(size.max())
    out.forward_kept_sites = int(np.unique(me.op[kept]).size)
    _earlier_pass_kept(me, p, me.delta[kept], out)
    if int(size[fr >= n].sum()) >= T("memory.forward_kept.together") * out.forward_kept_bytes:
        out.forward_kept_release = "still held at the end of the capture"
        return
    freed = fr < n
    runs = np.searchsorted(np.flatnonzero(me.delta > 0), fr[freed])  # allocations before each free: its run
    ids, inv = np.unique(runs, return_inverse=True)
    per_run = np.bincount(inv, weights=size[freed].astype(np.float64))
    best = int(np.argmax(per_run))
    if per_run[best] >= T("memory.forward_kept.together") * out.forward_kept_bytes:
        first = int(fr[freed][inv == best].min())
        out.forward_kept_release = (f"freed together at {_ms(ctx, int(me.t[first])):.1f} ms" if _timed(ctx) else
                                    f"freed together (at event {first + 1:,} of {n:,} in the history's order)")
    elif _timed(ctx):
        span = (int(me.t[int(fr[freed].max())]) - int(me.t[int(fr[freed].min())])) / PS_PER_MS
        out.forward_kept_release = f"freed over {span:.1f} ms"
    else:
        out.forward_kept_release = f"freed over {int(fr[freed].max()) - int(fr[freed].min()) + 1:,} events"


def _forward_kept_at_dump(ctx: Context, me: MemoryEvents, p: int, out: GpuMemory) -> bool:
    """:func:`_forward_kept` of a history recorded without stacks whose blocks live at the dump keep theirs
    (``MemorySnapshot.dump_stacks``: ``_record_memory_history(context="state")``), where the peak ``p`` is the dump's
    state: the level never falls below it after ``p`` and no block live at ``p`` is freed later -- so the blocks live
    at the dump are the peak's, and their stacks say which the modules' forward made.  Sets ``out.forward_kept_*``
    from those stacks (their blocks, bytes, the largest, the distinct stacks as sites) and returns True; False
    elsewhere (the climb is read instead).

    Why: a history that never falls back has its floor at its peak (:func:`_climb`), so a first forward that ran out
    of memory, recorded ``context="state"``, read one kept block of its 64 (``synthetic.memsnapshot.oom_first_forward``
    as recorded so): its peak's 12 GiB were "other", and the OOM's words, which read the forward's kept tensors, said
    "checkpointing frees 8.40 GiB" of a forward whose backward never ran and nothing of the choice the framed reading
    names (session 71 snap71: snap70's *Left* 2)."""
    snap = ctx.trace.snapshot
    if snap is None or not snap.stackless or not snap.dump_stacks:
        return False
    fwd = [st for st in snap.stacks.get(me.gpu, ()) if st.phase == "forward"]
    n = len(me)
    if not fwd or not n or int(me.allocated[p:].min()) < int(me.allocated[p]):
        return False
    free_at = me.frees()
    live = (me.delta > 0) & (np.arange(n) <= p) & (free_at > p)
    if (free_at[live] < n).any():
        return False
    largest = [b.size for b in snap.blocks.get(me.gpu, ()) if b.phase == "forward"]
    out.forward_kept_bytes = sum(st.size for st in fwd)
    out.forward_kept_blocks = sum(st.blocks for st in fwd)
    out.forward_kept_largest = max(largest or [max(st.size // max(st.blocks, 1) for st in fwd)])
    out.forward_kept_sites = len({st.frames for st in fwd})
    out.forward_kept_release = "still held at the end of the capture"
    return True


def _earlier_pass_kept(me: MemoryEvents, p: int, kept: np.ndarray, out: GpuMemory) -> None:
    """The same forward's earlier pass, still held at the peak (``out.forward_kept_earlier_*``): blocks made before
    the history began (the first event at their address frees them), freed after the peak, whose sizes repeat the
    sizes of the pass's own kept blocks (``kept``) -- the repeat counted only where it covers
    ``memory.forward_kept.together`` of those bytes; where none is freed so, blocks made before the history and still
    live at the dump that repeat them (``job.iterations.earlier_pass_held``; ``out.forward_kept_earlier_held``): a
    snapshot dumped before the new output replaced the old.

    Why: a forward-only loop with autograd on (``out = model(x)`` again and again) rebinds its output only once the
    next forward has returned, so the previous pass's graph is held through the next pass, to its peak; a recording
    begun between two passes shows those blocks only by their frees, and they were read as the weights held across
    steps.  Hyperion-shuo's CS336 forward benchmark (survey h37-survey52): an 11.9 GiB peak held 4.09 GiB of the pass
    and 4.09 GiB of the pass before it, 869 blocks of the same sizes freed when the new output replaced the old;
    under ``no_grad`` the same loop peaks at 3.8 GiB.  A repeat of the pass's own sizes, not any block held from
    before: weights and caches are not freed at a pass's end, nor made in the sizes of its activations."""
    if not kept.size:
        return
    unseen = me.unseen_frees()
    earlier = -me.delta[unseen[unseen > p]]
    if earlier.size:
        left, matched, blocks = size_repeats(earlier, kept, me.block_unit)
        if matched >= T("memory.forward_kept.together") * int(rounded_blocks(kept, me.block_unit).sum()):
            out.forward_kept_earlier_bytes, out.forward_kept_earlier_blocks = matched, blocks
            _earlier_pass_casts(me, p, left, out)
            return
    if (held := earlier_pass_held(me, kept)) is not None:
        left, out.forward_kept_earlier_bytes, out.forward_kept_earlier_blocks = held
        out.forward_kept_earlier_held = True
        _earlier_pass_casts(me, p, left, out)


def _earlier_pass_casts(me: MemoryEvents, p: int, left: np.ndarray, out: GpuMemory) -> None:
    """Of the earlier pass's blocks not matched to the pass's kept ones (``left``), those whose sizes repeat the
    pass's own autocast casts live at the peak (``out.forward_kept_earlier_cast_*``).

    Why: under autocast with autograd on, each matmul saves its 16-bit inputs -- the weight's cast copy among them --
    for the backward, so the previous pass's graph holds its pass's casts as well as its activations; they are not
    the forward's blocks (the reader books them as casts), so :func:`_earlier_pass_kept` left them with the weights.
    Hyperion-shuo's CS336 forward with autograd under bf16 (h37-survey52's *Left* 2): at context 128 the 1,233 blocks
    from before the recording freed after the peak are 688 in the kept activations' sizes (0.38 GiB) and 545 in the
    sizes of the 543 casts live at the peak (1.89 GiB); the no_grad twin peaks 2.8 GiB lower, not 0.8.  Counted only
    once the earlier graph is proven by its activations: a cache of casts from before the recording (a region around
    several passes) repeats the casts' sizes too, but holds no activations."""
    if not left.size:
        return
    live = _cast(me) & (np.arange(len(me)) <= p) & (me.frees() > p) & (me.delta > 0)
    if not live.any():
        return
    _, matched, blocks = size_repeats(left, me.delta[live], me.block_unit)
    out.forward_kept_earlier_cast_bytes, out.forward_kept_earlier_cast_blocks = matched, blocks


def _kept_climb_booked(ctx: Context, phased: MemoryEvents | None, out: GpuMemory) -> None:
    """Books a stackless history's forward blocks kept at the peak (``out.forward_kept_bytes``, read by
    :func:`_forward_kept` from the climb since the level's floor) as activations, out of ``other``, where no backward's
    walk gave the peak its parts (``phased`` None: a loop of forward passes) and they have a kept graph's shape
    (``memory.forward_kept.ratio`` times the largest: every layer's tensors, not an input and the block in use) -- and
    says the parts were read from the pattern.

    Why: a forward-only loop with autograd on recorded without stacks read "A forward pass keeps ... 9.00 GiB that the
    forward pass allocated (read from the allocation pattern ...)" above a memory table whose activations column read
    "-", all 9 GiB booked "other" (h37-snap69: ``as_recorded(forward_only(), context=None)``; with stacks the column
    reads 9.00 GiB): one quantity, two values.  Never more is moved than ``other`` has."""
    snap = ctx.trace.snapshot
    if phased is not None or snap is None or not snap.stackless or out.forward_kept_bytes <= 0 or \
            out.forward_kept_bytes < T("memory.forward_kept.ratio") * out.forward_kept_largest:
        return
    other = out.breakdown.get("other", 0)
    kept = min(out.forward_kept_bytes, other)
    if kept <= 0:
        return
    bd = {**out.breakdown, "other": other - kept, "activations": out.breakdown.get("activations", 0) + kept}
    out.breakdown = {c: bd[c] for c in MEMORY_CATEGORIES if bd.get(c)}  # the categories' order, as _at_peak gives it
    out.parts_from_pattern = True


def _earlier_pass_booked(out: GpuMemory) -> None:
    """Books the same forward's earlier pass held at the peak in ``out.breakdown``, out of ``held``: its kept blocks
    (``out.forward_kept_earlier_bytes``) as activations, its autocast casts (``out.forward_kept_earlier_cast_bytes``)
    as casts.

    Why: :func:`_at_peak` books every byte live at the peak that the history never saw allocated as held across
    steps -- the weights, the state.  A graph the previous pass kept for a backward (a forward-only loop with autograd
    on, recorded from between two passes) is no state: it is freed once the next output replaces it, and
    ``inference_mode`` frees it with the pass's own.  The table's "held across steps" read 7.82 GiB on Hyperion-shuo's
    CS336 forward (h37-survey52) where the finding said 4.09 GiB of it was that graph: one quantity, two values.  Those
    blocks are in the unseen remainder ``held`` holds (made before the history, live to after the peak); never more is
    moved than ``held`` has."""
    held = out.breakdown.get("held", 0)
    earlier = min(out.forward_kept_earlier_bytes, held)
    casts = min(out.forward_kept_earlier_cast_bytes, held - earlier)
    if earlier <= 0:
        return
    bd = {**out.breakdown, "held": held - earlier - casts, "activations": out.breakdown.get("activations", 0) + earlier,
          "casts": out.breakdown.get("casts", 0) + casts}
    out.breakdown = {c: bd[c] for c in MEMORY_CATEGORIES if bd.get(c)}  # the categories' order, as _at_peak gives it


def _unseen_holders_booked(ctx: Context, me: MemoryEvents, out: GpuMemory) -> None:
    """Books the blocks a maker's stack names that the history never saw (``MemorySnapshot.unseen_by_holder``: live
    at the dump, their address touched by no event, so live at the peak) to their maker, out of ``held``.

    Why: :func:`_at_peak` books every byte live at the peak that the history never saw allocated as held across
    steps -- the remainder of the allocator's total.  A KV cache made before the recording began is in it, and was
    read as the weights (SketchKV's cache, 2.7 GiB of a 15.3 GiB state: tests/fixtures/wild/
    snapshot_llama_kvcache_state); booked by its maker as :func:`_kind` books a block the history saw.  Never more is
    moved than ``held`` has."""
    snap = ctx.trace.snapshot
    unseen = snap.unseen_by_holder.get(me.gpu, {}) if snap is not None else {}
    if not unseen or me.baseline != "absolute":
        return
    bd = dict(out.breakdown)
    for holder, size in unseen.items():
        moved = min(size, bd.get("held", 0))
        bd["held"] = bd.get("held", 0) - moved
        bd[holder] = bd.get(holder, 0) + moved
    out.breakdown = {c: bd[c] for c in MEMORY_CATEGORIES if bd.get(c)}


def _cast_cache(me: MemoryEvents, p: int, out: GpuMemory) -> None:
    """Autocast's cached 16-bit copies of the parameters live at the peak (``out.cast_cache_*``).  Why apart from the
    weights they are booked with: the cache lives only as long as the autocast region, and a run that never trains
    need not keep it at all (``rules.activation_memory``'s cast-cache check)."""
    if me.cast_copy is None or not me.cast_copy.any():
        return
    free_at = me.frees()
    live = me.cast_copy & (np.arange(len(me)) <= p) & (free_at > p)
    if live.any():
        size = me.blocks(live)
        out.cast_cache_bytes, out.cast_cache_blocks = int(size.sum()), int(live.sum())
        out.cast_cache_largest = int(size.max())


def _cast(me: MemoryEvents) -> np.ndarray:
    """Per event, whether the reader booked it as autocast's cached copy of a weight (none where it booked nothing).
    Why apart from the climb: the cache climbs with the forward but is held by the autocast region, not for a
    backward (the reader tells it without stacks from the weights held before the history: ``_bare_cast_copies``)."""
    return me.cast_copy if me.cast_copy is not None else np.zeros(len(me), bool)


def _climb(me: MemoryEvents, p: int) -> np.ndarray:
    """Per event, whether it lies in the climb to the peak ``p``: from the last event before it at which the level
    stood at the floor the history falls back to after it (the level held between passes: weights, state) to ``p``.
    The forward's blocks of a history recorded without stacks (``MemorySnapshot.stackless``: no phase to read): a
    forward climbs from that floor and its blocks live at the peak are what it kept; what was live at the floor (the
    weights, made before) is not.  A history that never falls back (held to the dump) has its floor at the peak:
    nothing is told apart from the weights there.  The floor is read before the script's teardown (``del model,
    optimizer`` after the loop: :func:`job.iterations.teardown_start`), which falls below every level the history
    stood at -- a history begun after the weights were made had none to climb from, and failed (a real Adam loop's,
    ``wild/snapshot_adam_iterations`` recorded without stacks and torn down: IndexError); one that never stood at its
    floor before the peak climbs from its start."""
    before = me.before(np.arange(p + 1))
    end = teardown_start(me)
    below = np.flatnonzero(before <= int(me.allocated[p:end if end is not None and end > p else None].min()))
    floor = int(below[-1]) if below.size else 0
    out = np.zeros(len(me), bool)
    out[floor: p + 1] = True
    return out


def _per_step(me: MemoryEvents, win: np.ndarray, ids: np.ndarray, has_res: bool) -> tuple[list[list], float | None]:
    """Per kept step: [step, peak allocated, peak reserved, allocated at its start]; reserved changes per step.  A
    step's peaks count the level it starts at, held until its first event (a step whose first event frees: the
    level before it is the step's own -- a JAX step's peak read 256 B under the bytes it began with, h37-snap64)."""
    if not win.shape[0]:
        return [], None
    lo = np.searchsorted(me.t, win[:, 0], side="left")
    hi = np.searchsorted(me.t, win[:, 1], side="right")
    rows, changes = [], 0
    changed = np.zeros(len(me), bool)
    if has_res and len(me) > 1:
        changed[1:] = (me.reserved[1:] != me.reserved[:-1]) & (me.reserved[1:] >= 0) & (me.reserved[:-1] >= 0)
    for k in range(win.shape[0]):
        a, b = int(lo[k]), int(hi[k])
        start = int(me.allocated[a - 1]) if a > 0 else (int(me.before(np.zeros(1, np.int64))[0]) if len(me) else 0)
        if b <= a:
            rows.append([int(ids[k]), start, int(me.reserved[a - 1]) if has_res and a > 0 else None, start])
            continue
        held = int(me.reserved[a - 1]) if has_res and a > 0 else -1
        rows.append([int(ids[k]), max(int(me.allocated[a:b].max()), start),
                     max(int(me.reserved[a:b].max()), held) if has_res else None, start])
        changes += int(changed[a:b].sum())
    return rows, (changes / win.shape[0]) if has_res else None


def _timeline(ctx: Context, me: MemoryEvents, win: np.ndarray) -> dict[str, list | str]:
    """At most ``memory.timeline_points`` points: in each of as many equal time buckets, the event of the highest
    allocated bytes (so no peak is lost), with the first and last events.  ``axis``: what the points are placed by --
    ``ms`` (``t_ms``, the report's time base), or, where the history records no times (a PyTorch 2.0 snapshot, its
    drawn page), ``allocation events`` (``event``: each point's place in the history's order, from 1): the reader's
    one microsecond an entry is an order, and drawn as milliseconds it was a time axis the file never held."""
    n = len(me)
    k = int(T("memory.timeline_points"))
    if n <= k:
        pick = np.arange(n)
    else:
        t0, t1 = int(me.t[0]), int(me.t[-1])
        edges = np.linspace(t0, t1, k - 1)
        bucket = np.clip(np.searchsorted(edges, me.t, side="right") - 1, 0, k - 2)
        order = np.lexsort((-me.allocated, bucket))
        first = np.ones(n, bool)
        first[1:] = bucket[order[1:]] != bucket[order[:-1]]
        pick = np.unique(np.concatenate([order[first], [0, n - 1]]))
        r = int(np.argmax(me.reserved)) if (me.reserved >= 0).any() else 0
        pick = np.unique(np.concatenate([pick, [r]]))
    if _timed(ctx):
        out: dict[str, list | str] = {"axis": "ms", "t_ms": ((me.t[pick] - ctx.steps.origin_ps) / PS_PER_MS).round(4).tolist()}
    else:  # the history's order only (a PyTorch 2.0 snapshot): the reader's microsecond an entry is no time to draw
        out = {"axis": "allocation events", "event": (pick + 1).tolist()}
    out["allocated"] = me.allocated[pick].tolist()
    if (me.reserved >= 0).any():
        out["reserved"] = [int(v) if v >= 0 else None for v in me.reserved[pick].tolist()]
    return out


#: The source of a snapshot GPU without history (``_at_dump``): its numbers are the state at the dump, not a peak --
#: the rules word them so by this name.
AT_DUMP_SOURCE = "PyTorch memory snapshot (state at the dump; no history recorded)"


def _at_dump(ctx: Context, gpu: int, state: tuple[int, int, int, int]) -> GpuMemory:
    """A snapshot GPU without history: its state at the dump is all there is."""
    reserved, allocated, segments, _largest_free = state
    snap = ctx.trace.snapshot
    blocks = snap.blocks.get(gpu, []) if snap is not None else []
    # the capacity recorded beside the dump (``pytorch.RECORD_CAPACITY``'s file) is the GPU's as with history: the
    # state alone is what an out-of-memory observer dumps, and how near the capacity it was is its one question
    device = _device_memory(ctx, gpu)
    src = "device memory" if device else ""
    out = GpuMemory(gpu=gpu, source=AT_DUMP_SOURCE,
                    capacity_bytes=device, capacity_source=src, device_bytes=device,
                    outside_bytes=_outside(ctx, gpu, src),
                    baseline="absolute", events=0, peak_allocated_bytes=allocated, peak_reserved_bytes=reserved,
                    gap_bytes=max(reserved - allocated, 0),
                    peak_reserved_in_use_bytes=(reserved - snap.cached[gpu] if snap is not None and gpu in snap.cached
                                                else None),
                    top=[MemoryHolder(b.label, _kind(b.phase, b.holder), b.size, 1)
                         for b in blocks[:TOP_HOLDERS]],
                    note=f"{segments} segments at the dump; no history: "
                         f"{ctx.fw.record_history(str(ctx.trace.producer.get('layout') or ''))}")
    # what the live blocks' stacks say is the state's alone: a dump with no history entry at all (PyTorch 1.13's
    # ``_snapshot()``, ``torch.cuda.memory_snapshot()``, ``enabled="state"``) holds it as one with a few does
    _gradients_moved(ctx, out)
    return out


def _oom(ctx: Context, o: OutOfMemory) -> OomReport:
    """An OOM's request and what was live then, by kind: the category each block's phase gives, but the makers the
    stacks name apart (``model.trace.HOLDERS``: their own fixes free them, not their phase's -- a KV cache made before
    the first forward lived as long as the weights and was booked with them), and a block of no known phase made
    before the OOM's loop turn held across steps (:func:`_oom_turn_start`)."""
    start = _oom_turn_start(ctx, o)
    live = [[b.size, _kind(b.phase, b.holder, _before_turn(b.phase, b.time_ps, start)), b.frames[:8]] for b in o.live]
    by_cat: dict[str, int] = {}
    for phase, size in o.live_by_phase.items():
        cat = _CATEGORY_OF_PHASE.get(phase, "other")
        by_cat[cat] = by_cat.get(cat, 0) + size
    for holder, by_phase in o.live_by_holder.items():
        for phase, size in by_phase.items():
            cat = _CATEGORY_OF_PHASE.get(phase, "other")
            moved = min(size, by_cat.get(cat, 0))
            by_cat[cat] = by_cat.get(cat, 0) - moved
            by_cat[holder] = by_cat.get(holder, 0) + moved
    earlier = min(_other_before_turn(ctx, o, start), by_cat.get("other", 0)) if start is not None else 0
    by_cat["held"] = by_cat.get("held", 0) + earlier
    by_cat["other"] = by_cat.get("other", 0) - earlier
    by_cat = {c: b for c, b in by_cat.items() if b}
    return OomReport(gpu=o.gpu, requested_bytes=o.requested, device_free_bytes=o.device_free,
                     allocated_bytes=o.allocated, reserved_bytes=o.reserved, frames=o.frames[:12],
                     at_ms=_ms(ctx, o.time_ps) if _timed(ctx) else None, label=o.label, live=live, by_category=by_cat)


def _oom_turn_start(ctx: Context, o: OutOfMemory) -> int | None:
    """When the loop turn an OOM struck in began (ps), read off the steps the history's allocation pattern gave
    (``job.iterations``): the start of the step holding it, else the end of the last whole step before it (the turn
    the OOM cut short is no step); None where no whole turn precedes it.

    Why: a block of no known phase (``context=None``, Python frames without a model's call, no forward in the
    history: ``formats.snapshot.reader._held_by_lifetime`` has no first pass to read) that was made in an earlier
    turn and is still live is held across steps -- as the peak's breakdown books it (:func:`_at_peak`) -- so the
    weights a loader placed and an optimizer's state made on its first step were "other", and "other" is no kind
    an OOM's fix frees: the finding said "allocations of no known phase, about 0 B" for a GPU two fifths full of
    weights and state (``synthetic.memsnapshot.oom_later_turn``)."""
    me = ctx.trace.memory.get(o.gpu)
    if me is None or not len(me):
        return None
    win = _windows(ctx, me)
    if not win.shape[0]:
        return None
    i = int(np.searchsorted(win[:, 0], o.time_ps, side="right")) - 1
    if i < 0:
        return None
    return int(win[i, 0]) if o.time_ps < int(win[i, 1]) else int(win[i, 1])


def _before_turn(phase: str, time_ps: int | None, start: int | None) -> bool:
    """A live block of no known phase made before the OOM's turn began (:func:`_oom_turn_start`)."""
    return start is not None and phase == "other" and time_ps is not None and time_ps < start


def _other_before_turn(ctx: Context, o: OutOfMemory, start: int) -> int:
    """Bytes of the allocations of no known phase live at the OOM ``o`` that were made before its turn began
    (``start``, ps): made before it, freed after it or never (:func:`_oom_turn_start`)."""
    me = ctx.trace.memory[o.gpu]
    n = len(me)
    before = int(np.searchsorted(me.t, o.time_ps, side="right"))  # the events the OOM came after
    free_at = me.frees()
    i = np.arange(n)
    live = (me.delta > 0) & (i < before) & ((free_at >= before) | (free_at == n)) & (me.t < start)
    live &= me.phase == MEMORY_PHASES.index("other")
    if me.holder is not None:  # a named maker's blocks are its kind (``OutOfMemory.live_by_holder``), not held
        live &= me.holder < 0
    return int(me.blocks(live).sum())


def _capacity_from_ooms(gpus: list[GpuMemory], ooms: list[OomReport]) -> None:
    """A snapshot says nothing of the GPU's size; at an OOM, what the process held plus what the driver had free is
    what it could reach."""
    for g in gpus:
        seen = [o.reserved_bytes + o.device_free_bytes for o in ooms if o.gpu == g.gpu and o.device_free_bytes >= 0]
        if g.capacity_bytes is None and seen:
            g.capacity_bytes, g.capacity_source = max(seen), "reserved + free at the OOM"


#: ``GpuMemory.capacity_source`` of a capacity read off the allocator's retries (:func:`_capacity_from_retries`)
RETRY_CAPACITY = "reserved when the driver refused more"


def _capacity_from_retries(ctx: Context, gpus: list[GpuMemory], retries: list) -> None:
    """A snapshot says nothing of the GPU's size, but where the caching allocator gave its cache back from inside an
    allocation (``AllocRetry``) the driver had refused it a segment: the process could not reserve what it then held
    plus that segment.  That sum is the most it could reach -- an upper bound, so the share of it in use is never
    overstated (a large request refused well below the peak: ``snapshot_nca3d_inference``'s 4.85 GiB at 18.6 GiB,
    its peak 20.7 GiB).  Only where nothing better is known (a capacity record, an OOM's free bytes), and only from a
    retry whose request is seen; the bytes outside the allocator (the CUDA context, other processes) are not in it."""
    for g in gpus:
        mine = [r for r in retries if r.gpu == g.gpu and r.requested]
        if g.capacity_bytes is not None or not mine:
            continue
        top = min(mine, key=lambda r: r.reserved + r.requested)
        g.capacity_bytes, g.capacity_source = top.reserved + top.requested, RETRY_CAPACITY
        when = f"at {_ms(ctx, top.time_ps):.1f} ms " if _timed(ctx) else ""
        g.retry_words = (f"{when}the driver refused it {gb(top.requested)} more with {gb(top.reserved)} reserved: its "
                         f"caching allocator gave back {gb(top.released)} of cache ({plural(top.segments, 'segment')}, "
                         f"each cudaFree synchronizing the device: {top.span_ps / PS_PER_MS:.1f} ms from the first to "
                         "the last) and asked again")
