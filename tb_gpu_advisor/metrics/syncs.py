"""Host synchronisations inside the step: the host waits for the GPU, and the GPU then waits for the host.

A sync (``cudaStreamSynchronize`` behind a PyTorch ``.item()``, ``cudaDeviceSynchronize``, an event
wait) returns only once the GPU has drained its queue; until the host launches the next kernel the GPU
sits idle.  Measured per sync: the GPU's idle time from the end of the work the sync waited for to the
next device event, on each active GPU, within kept steps.  Several syncs in one idle gap count the gap
once, for the sync nearest to its end.

Each wait is booked to its cause (issue #37 item 3):

* a sync inside the op that copies to the device (PyTorch's ``aten::copy_`` of a pageable tensor:
  ``cudaMemcpyAsync`` then ``cudaStreamSynchronize``) is that copy's own: the program asked for a copy, and
  pinned memory with ``non_blocking=True`` removes the wait -- the copy check's, not the sync check's;
* a sync inside a one-time cost (the model's upload before its first kernel, cuDNN's algorithm search under
  ``cudnn.benchmark``: ``job.phase``) is start-up's, not the step's;
* the others are the syncs the program asked for (``.item()``, ``.cpu()``, ``torch.cuda.synchronize()``,
  ``.tolist()`` of device values);
* where the runtime records no sync call (JAX's XPlane: the host waits on PjRt's events), the framework's blocking
  reads are those syncs (``Framework.blocking_read_event``: JAX's ``np.asarray(jax.Array)``, which ``float(x)``,
  ``x.item()``, ``np.asarray(x)``, ``jax.device_get`` and ``print(x)`` write), each its own caller -- the instants
  its bytes move (the transfer, the staging copy) are the copy's, the rest of its wait the sync's;
* the idle inside a round trip (data copied out, worked on by the host, copied back: ``trips.trip_windows``) is the
  round trip's, ``host_op_placement``'s, whatever sync or read comes before it -- as the host's input waits are the
  input check's (an implicit transfer's copy among them);
* the part of an idle gap during which the host thread ran nothing the profiler recorded (no op, no runtime
  call, no Python span) is neither: the host ran code the profiler did not see, and it is named as such.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.job.waits import drain
from tb_gpu_advisor.job.kind import read_under, reads_off_a_gpu, waited_scalar_reads
from tb_gpu_advisor.metrics import context as _context
from tb_gpu_advisor.metrics.context import PS_PER_MS, PS_PER_US, Context, Encloser, bounds_a_window, last_starts, loop_frames
from tb_gpu_advisor.metrics import breakdown as bd
from tb_gpu_advisor.metrics import memcpy, trips
from tb_gpu_advisor.metrics.types import BREAKDOWN_CATEGORIES, HostSyncs
from tb_gpu_advisor.model.columns import (coverage, intersect_intervals, outermost_rows, sorted_unique, starts_in_windows,
                                          subtract_intervals, time_within, union_intervals, unique_inverse)

_RUNTIME = ("cuda", "cu")


def host_syncs(ctx: Context, top_n: int = 5, gap_windows: dict | None = None) -> HostSyncs:
    """Sync calls per kept step by cause, the GPU idle each cause leaves, and the host events that made them.
    ``gap_windows``: GPU -> its between-step gaps' windows (ps, ``GapColumns.windows``), for the part of that idle the
    gaps hold (``HostSyncs.in_gaps_ledger_ms``)."""
    h, n = ctx.h, ctx.steps.count
    if not len(h) or not n:
        return HostSyncs()
    lost = _lost_reads(ctx)
    if lost is not None:  # no runtime record: the scalar reads that waited are all the capture shows of its syncs
        return lost
    in_step = (ctx.host_step >= 0) | _ends_in_step(ctx)
    # and the waits of the unkept stretch right before a kept step, for the idle they drain into it alone
    wide = in_step | _before_kept(ctx, in_step)
    sync = np.flatnonzero(h.name_mask(devices.is_sync_call) & wide)
    blocking = np.flatnonzero(_blocking_reads(ctx) & wide)
    encloser = _encloser(ctx) if blocking.size else None
    if blocking.size:
        sync = np.union1d(sync, _framework_reads(ctx, encloser, blocking))
    poll_done, poll_start = _polls(ctx, wide)
    if poll_done.size:  # the program's polls: each run's last query, the run its wait (a query inside none: no clash)
        sync = np.union1d(sync, poll_done)
    reads = not in_step[sync].any()  # no sync call recorded: the framework's blocking reads are the syncs (JAX's np.asarray)
    if reads:
        sync = _outermost(h, np.flatnonzero(h.name_mask(ctx.fw.blocking_read_event) & ((ctx.host_step >= 0) | wide
                                                                                        & ~in_step)))
        sync = sync[~_held(h, sync, h.name_mask(ctx.fw.blocking_read_holder))]
    sync = sync[~_in_own_one_time(ctx, sync)]
    sync = sync[in_step[sync] | _last_before_kept(ctx, sync)]
    mine = in_step[sync]  # the kept steps' own waits: the counts, names and host time are theirs alone
    if not mine.any():
        return _leads_only(ctx, gap_windows)
    # when each wait began: its call, or a poll's first query (the host asked until the GPU was done)
    poll = np.isin(sync, poll_done)
    begins = h.start[sync].astype(np.int64)
    if poll.any():
        begins[poll] = poll_start[np.searchsorted(poll_done, sync[poll])]
    moving, moved = np.zeros(sync.shape, dtype=np.int64), None
    if reads:  # a read is its own caller, the program's read of a value (no copy op around it: a read is no copy in)
        callers = sync.copy()
        moving, moved = _read_moving(ctx, sync)
        copy = moving >= devices.COPY_LATENCY_NS * 1000  # bytes moving beyond a copy's own latency: the copy's part
        moved = _of_reads(moved, copy)
        moving = np.where(copy, moving, 0)
        waited = np.ones(sync.shape, dtype=bool)  # every read drains the queue and waits for its callback: a sync
    else:
        encloser = encloser if encloser is not None else _encloser(ctx)
        callers = encloser.find(sync)
        copy = _copy_waits(ctx, encloser, callers)
        waited = ~copy
    in_op = np.zeros(sync.shape, dtype=bool)  # a sync whose op went on to launch work with the value it read
    returns = h.end[sync].astype(np.int64)  # when the program got control back from each wait
    named = callers
    if not reads:
        outer = _outer_op(ctx, sync, callers)
        in_op = waited & _launched_after(ctx, encloser, sync, callers) & (outer >= 0)
        goes_on = in_op | _copy_goes_on(ctx, sync, callers, outer, copy)
        returns = np.where(goes_on, np.maximum(returns, h.end[np.maximum(outer, 0)]), returns)
        # every wait is named by the op the program called (``x[mask]``: aten::index; ``.tolist()`` and ``.cpu()``:
        # aten::to, not the aten::copy_ inside; ``.item()``: aten::item) -- a blocking copy's too (``x.to('cuda')``:
        # aten::to; h37-probe44p), one rule; the copy op itself (``callers``) still says how long the copy held the host
        named = np.where(outer >= 0, outer, callers)
    recorded = _recorded(ctx, sync, (poll_start, h.end[poll_done].astype(np.int64)) if poll_done.size else None)
    active = ctx.active
    idle = np.zeros(3)  # the program's syncs, the copies' waits, unrecorded host time
    ledger = np.zeros((3, len(BREAKDOWN_CATEGORIES)))  # the program's syncs', the copies' waits', both's in the gaps
    leads = np.zeros(len(BREAKDOWN_CATEGORIES))  # of the copies' waits, their leads (:func:`copy_leads`)
    tails = np.zeros(len(BREAKDOWN_CATEGORIES))  # and their tails (:func:`copy_tails`)
    stalls: dict[str, float] = {}  # slow asynchronous call -> ms of the syncs' idle the host stalled in it
    # how long each wait blocked the host: a sync, its own call; a copy's wait, the copy op around it (a pageable copy
    # blocks in its memcpy call too, and pinned memory with non_blocking frees the host of both)
    held = np.where(copy & (callers >= 0), h.end[np.maximum(callers, 0)] - h.start[np.maximum(callers, 0)],
                    h.end[sync] - begins).astype(np.int64)
    for g in active:
        owned = _owned(ctx, g)
        per, spans = _idle_after(g, h, held, returns, copy & ~waited, owned, recorded, begins)
        if moved is not None:
            _split_reads(spans, moved)
        for row, held_in in zip((leads, tails), _in_copy_calls(ctx, g, spans[0], spans[1])):
            if held_in[0].size:
                row += bd.ledger_of(ctx, g, *held_in)
                spans[1] = union_intervals(np.concatenate([spans[1][0].astype(np.int64), held_in[0]]),
                                           np.concatenate([spans[1][1].astype(np.int64), held_in[1]]))
        idle += per
        for name, v in bd.async_stalls_in_idle(ctx, g, None, within=spans[0]).items():
            stalls[name] = stalls.get(name, 0.0) + v
        for i, (s, e) in enumerate(spans):
            ledger[i] += bd.ledger_of(ctx, g, s, e) if s.size else 0.0
        ledger[2] += _in_gaps(ctx, g, spans, (gap_windows or {}).get(g.d.gpu))
    idle = ctx.per_step(idle, unit=PS_PER_MS)
    ledger = ctx.per_step(ledger, unit=PS_PER_MS)
    # the idle as the step's ledger books it (issue #36): inside the kept steps, in the categories of GPU idle the host
    # causes -- where the host ran start-up or allocator calls meanwhile, that is where the time sits
    booked, copy_booked, in_gaps = (_booked(row) for row in ledger)
    # a read's bytes: the copy's; a poll from its first query
    blocked = (h.end[sync] - np.where(poll, begins, _from_step_start(ctx, sync)) - moving).astype(np.float64)
    # every count per step and rank, as the idle and the wait beside it (``Context.per_step``)
    waited, in_op, poll, copy = waited & mine, in_op & mine, poll & mine, copy & mine
    # each blocking copy's op once (two waits in one op hold the host once)
    _, first = np.unique(np.where(callers >= 0, callers, -1 - np.arange(sync.size))[copy], return_index=True)
    copy_held = float(held[copy][first].sum()) / PS_PER_MS
    copy_ops = callers[copy][first]
    drained = _copy_drain(ctx, copy_ops[copy_ops >= 0])
    copy_drain = None if drained is None else ctx.per_step(drained[0] / PS_PER_MS)
    copy_drained = None if drained is None else ctx.per_step(drained[1])
    return HostSyncs(calls_per_step=ctx.per_step(waited.sum()), calls=int(waited.sum()), gpu_idle_ms_per_step=sum(booked.values()),
                     gpu_idle_ledger_ms=booked,
                     callers=_top(ctx, _named_by(named, sync)[waited], top_n),
                     in_op_calls_per_step=ctx.per_step(in_op.sum()), poll_calls_per_step=ctx.per_step(poll.sum()),
                     wait_ms_per_step=ctx.per_step(blocked[waited].sum() / PS_PER_MS),  # per GPU, as the idle is
                     copy_calls_per_step=ctx.per_step(copy.sum()), copy_idle_ms_per_step=sum(copy_booked.values()), copy_idle_ledger_ms=copy_booked,
                     copy_held_ms_per_step=ctx.per_step(copy_held), copy_drain_ms_per_step=copy_drain,
                     copy_drained_per_step=copy_drained,
                     copy_callers=_top(ctx, named[copy], top_n), unrecorded_ms_per_step=float(idle[2]),
                     copy_lead_ms_per_step=_idle_ms(ctx, leads), copy_tail_ms_per_step=_idle_ms(ctx, tails),
                     in_gaps_ledger_ms=in_gaps,
                     idle_in_async_stalls=sorted(((n, round(float(ctx.per_step(v)), 4)) for n, v in stalls.items()),
                                                 key=lambda kv: (-kv[1], kv[0])))


def _copy_drain(ctx: Context, ops: np.ndarray) -> tuple[float, int] | None:
    """(the host's time (ps, summed) inside the blocking copies' ops ``ops`` while a GPU still ran work launched before
    each op began (``job.waits.drain``: the queue a wait begun then waits for), the longest of the GPUs the op's thread
    launches onto (another rank's GPU is not its queue); how many of the ops waited a copy's own latency or more
    (``devices.COPY_LATENCY_NS``) for it -- in a loop whose uploads sometimes find the GPU busy and sometimes idle,
    only those wait for a drain (h37-huntkin64's Left 1: resnet_rtx2080ti_slow_workers' uploads, half of them)); None where no such GPU can be read (its and the host's clocks
    disagree: ``breakdown.clocks_disagree``) -- unknown, not "no drain".  Why: a pageable copy's call waits for its
    stream before the driver stages it, and only that part is a wait for earlier work -- a call that finds the GPU idle
    holds the host for its own staging and transfer alone (the RTX 3080 loop of h37-huntkin63: each 8.5 MB upload
    began long after the GPU's last kernel), which "waits for its stream to drain" misnamed (h37-huntkin63's Left 4)."""
    h = ctx.h
    if not ops.size:
        return None
    t0, t1 = h.start[ops].astype(np.int64), h.end[ops].astype(np.int64)
    waited, read = np.zeros(ops.size, dtype=np.int64), np.zeros(ops.size, dtype=bool)
    for g in ctx.active:
        if not len(g.d) or bd.clocks_disagree(ctx, g):
            continue
        mine = np.isin(h.line[ops], h.line[g.launch[g.launch >= 0]])
        read |= mine
        # no earlier work (the capture's first): no drain (the time ``drain`` gives then is int64's least)
        each = np.minimum(np.maximum(drain(g.d, g.launch, h, t0), t0) - t0, t1 - t0)
        waited = np.where(mine, np.maximum(waited, each), waited)
    if not read.any():
        return None
    return float(waited.sum()), int(np.count_nonzero(waited >= devices.COPY_LATENCY_NS * (PS_PER_US // 1000)))


def copy_leads(ctx: Context, g, owned: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    """The GPU's idle (ps, sorted) before each of its copies between the device and pageable host memory in a kept
    step whose call held the host until the transfer began: from the call's start (or the end of the GPU's earlier
    work, where later) to the transfer's start, less the stretches another cause owns (``owned``: input waits, round
    trips).  A lead of a copy's own latency at least (``devices.COPY_LATENCY_NS``: shorter, the call's latency, as
    a pinned copy's), not of staging's millisecond (``devices.STAGING_MIN_NS``): where the record names the host
    memory (CUDA's), a 561 kB upload stages in ~100 us, and PEXSI's A100 pass left 946 such leads (92.3 ms) to the next
    launch's wait, whose fix (CUDA graphs, bigger kernels) removes none of it (h37-pexsi); where the tracer records
    none (AMD's), ``formats.staging`` names a copy pageable only from a lead of a millisecond.

    Why the copy's: the host is inside the copy's call all that time, and the GPU has nothing queued -- it waits for
    the call to hand over the data.  An AMD tracer records a pageable copy's transfer only after HIP has staged the
    buffer inside the call (``formats.staging``: 5 ms of staging before a 2.5 ms transfer), so that lead is the pageable
    copy's own cost, which pinned memory removes.  Unbooked, it read as host time no call covers, and the gaps' check
    asked to record the host (h37-copyforms).  A pinned copy's lead is its call's latency, microseconds.  Nothing is
    read where the GPU's and the host's clocks disagree (a return read against a start means nothing then)."""
    d, h = g.d, ctx.h
    prev_end = np.maximum.accumulate(d.end.astype(np.int64)) if len(d) else d.end[:0].astype(np.int64)
    parts = []
    for p, cp in ((g, _pageable_copies(ctx, g)), *_peer_pageable_copies(ctx, g)):
        if not cp.size:
            continue
        call = p.launch[cp].astype(np.int64)
        # to the transfer's start, or where the call returned before it (a pageable upload's call returns once the
        # driver has staged the last chunk), to the return and the driver's submission, as the ledger's launch wait
        # ends; from the call's start, or the end of this GPU's earlier work where later
        start = bd.launch_wait_end(p.d.start[cp].astype(np.int64), h.end[call].astype(np.int64))
        k = (cp - 1 if p is g else np.searchsorted(d.start, p.d.start[cp], side="left") - 1)
        before = np.where(k >= 0, prev_end[np.maximum(k, 0)] if prev_end.size else 0, np.iinfo(np.int64).min)
        s = np.maximum(h.start[call].astype(np.int64), before)
        ok = start - s >= devices.COPY_LATENCY_NS * 1000  # ps: shorter, the call's own latency, a pinned copy's too
        parts.append((s[ok], start[ok]))
    if not parts:
        return (np.zeros(0, np.int64), np.zeros(0, np.int64))
    return _less_owned((np.concatenate([a for a, _ in parts]), np.concatenate([b for _, b in parts])), owned)


def _peer_pageable_copies(ctx: Context, g: _context.GpuCtx) -> list[tuple[_context.GpuCtx, np.ndarray]]:
    """(GPU, indices) of the copies between a device and pageable host memory of the copy-only GPUs whose calls ran on
    a thread launching ``g``'s work (``metrics.breakdown.launcher_copy_peers``): their calls hold ``g``'s launcher, so
    their staging lead is ``g``'s wait on the copy as the ledger books their transfers (h37-survey70)."""
    out = []
    for p, idx in bd.launcher_copy_peers(ctx, g):
        k = p.d.kind[idx]
        cp = idx[((k == devices.KIND_H2D) | (k == devices.KIND_D2H)) & (memcpy.host_kinds(p.d)[idx] == 1)]
        if cp.size:
            out.append((p, cp))
    return out


def _pageable_copies(ctx: Context, g) -> np.ndarray:  # noqa: ANN001 - a context.GpuCtx
    """Indices of ``g``'s copies between the device and pageable host memory in a kept step whose launch call the
    capture holds; none where the GPU's and the host's clocks disagree (a call's bounds read against a transfer's
    then mean nothing)."""
    d, h = g.d, ctx.h
    if not len(d) or not h.end.size or bd.clocks_disagree(ctx, g):
        return np.zeros(0, np.int64)
    return np.flatnonzero(((d.kind == devices.KIND_H2D) | (d.kind == devices.KIND_D2H)) & (g.launch >= 0)
                          & (g.step >= 0) & (memcpy.host_kinds(d) == 1))


def copy_tails(ctx: Context, g, owned: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    """The GPU's idle (ps, sorted) after each of its copies between the device and pageable host memory in a kept
    step whose call held the host past the transfer's end: from the transfer's end to the call's return, less the
    stretches another cause owns (``owned``).

    Why the copy's: a synchronous copy to pageable host memory moves its bytes into the driver's pinned staging
    buffer and then copies them out into the program's memory inside the call (PEXSI's A100 pass: 389 downloads of
    224 kB, 10.0 ms of transfer and 28.3 ms in the calls after it), and the GPU, its queue drained, waits for the
    host to return.  Read as the next kernel's launch wait, a CUDA graph was told to save it; a pinned destination
    (or an asynchronous copy into one) removes it.  A pinned copy returns microseconds after its transfer: a tail
    under a copy's own latency (``devices.COPY_LATENCY_NS``) is that return, not a copy out."""
    d, h = g.d, ctx.h
    cp = _pageable_copies(ctx, g)
    if not cp.size:
        return (np.zeros(0, np.int64), np.zeros(0, np.int64))
    s = d.end[cp].astype(np.int64)
    e = h.end[g.launch[cp].astype(np.int64)].astype(np.int64)
    ok = e - s >= devices.COPY_LATENCY_NS * 1000  # ps: shorter, the call's return after its transfer, not a copy out
    return _less_owned((s[ok], e[ok]), owned)


def _less_owned(spans: tuple[np.ndarray, np.ndarray], owned: tuple[np.ndarray, np.ndarray]
                ) -> tuple[np.ndarray, np.ndarray]:
    """``spans`` less the stretches another cause owns, as disjoint sorted intervals (empty where none is left)."""
    s, e = spans
    if owned[0].size and s.size:
        s, e = subtract_intervals(s, e, *owned)
    return union_intervals(s, e) if s.size else (np.zeros(0, np.int64), np.zeros(0, np.int64))


def _less(leads: tuple[np.ndarray, np.ndarray], syncs: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The copies' leads (:func:`copy_leads`) less what the program's syncs claim already (a sync's idle runs until
    the host launches again, and a copy call right after it may be that launch): each instant booked to one cause."""
    if not leads[0].size or not syncs[0].size:
        return leads
    return subtract_intervals(*leads, *(x.astype(np.int64, copy=False) for x in syncs))


def _booked(row: np.ndarray) -> dict[str, float]:
    """A ledger row (per category, already per kept step) as the waits here book it: the categories of GPU idle the
    host causes (``bd.HOST_IDLE``) that hold any of it.  One reading for the syncs', the copies' and the gaps' rows."""
    return {c: float(row[i]) for i, c in enumerate(BREAKDOWN_CATEGORIES) if c in bd.HOST_IDLE and row[i] > 0}


def _idle_ms(ctx: Context, ledger_ps: np.ndarray) -> float:
    """ms per kept step of a ledger row (ps per category, summed over GPUs), as every wait here is booked."""
    return float(sum(_booked(ctx.per_step(ledger_ps, unit=PS_PER_MS)).values()))


def _leads_only(ctx: Context, gap_windows: dict | None) -> HostSyncs:
    """No sync the program asked for: only the GPU's idle inside the copies' calls (:func:`copy_leads`,
    :func:`copy_tails`) is a wait, the copies' own."""
    rows = np.zeros((3, len(BREAKDOWN_CATEGORIES)))  # leads, tails, both's in the gaps
    for g in ctx.active:
        for i, (s, e) in enumerate(_in_copy_calls(ctx, g)):
            if s.size:
                rows[i] += bd.ledger_of(ctx, g, s, e)
                rows[2] += _in_gaps(ctx, g, [(s, e)], (gap_windows or {}).get(g.d.gpu))
    if not rows[:2].any():
        return HostSyncs()
    lead, tail, gaps = (_booked(row) for row in ctx.per_step(rows, unit=PS_PER_MS))
    booked = {c: lead.get(c, 0.0) + tail.get(c, 0.0) for c in {**lead, **tail}}
    return HostSyncs(copy_idle_ms_per_step=sum(booked.values()), copy_idle_ledger_ms=booked, in_gaps_ledger_ms=gaps,
                     copy_lead_ms_per_step=sum(lead.values()), copy_tail_ms_per_step=sum(tail.values()))


def _in_copy_calls(ctx: Context, g, *claimed: tuple[np.ndarray, np.ndarray]  # noqa: ANN001 - a context.GpuCtx
                   ) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """(leads, tails): the GPU's idle inside its pageable copies' calls before their transfers (:func:`copy_leads`)
    and after them (:func:`copy_tails`), each instant once -- less the host's input waits and what ``claimed`` holds
    already (the program's syncs' idle, the copies' waits after their syncs), the tails less the leads too.

    Not less the round trips (``trips.trip_windows``), which own the rest of their idle: a round trip's window runs
    from a download's transfer to the upload's that brings the data back, so it holds the tail of the one call and
    the lead of the other, and that time is the calls' staging, which pinned memory removes whether or not the
    host's work between them moves to the GPU (PEXSI's A100 pass: its 384 windows held 131 ms of its copy calls'
    idle, booked as launch wait and claimed by no finding; h37-pexsi).

    Less the one-time costs too (``Context.one_time_spans``: the model's upload before its first kernel, a library's
    algorithm search): the ledger books their idle as start-up and the cold start claims it, so a staged upload there
    is start-up's, said once -- as a sync inside them is (:func:`_in_spans`; a cold forward's 11 uploads read both
    as start-up and as "Copies block the GPU for 242 us of the 2.64 ms pass")."""
    own = _input_wait(ctx, g)
    lead, tail = copy_leads(ctx, g, own), copy_tails(ctx, g, own)
    once = ctx.one_time_spans(g)
    for c in (*claimed, *((once,) if once is not None and once[0].size else ())):
        lead, tail = _less(lead, c), _less(tail, c)
    return lead, _less(tail, lead)


def _in_gaps(ctx: Context, g, spans: list[tuple[np.ndarray, np.ndarray]],  # noqa: ANN001 - a context.GpuCtx
             windows: np.ndarray | None) -> np.ndarray | float:
    """ps per ledger category of the syncs' and the copies' idle spans that lie inside the GPU's between-step gaps
    (``windows``): the stretch both the wait and the gap would name, the wait's (it drained the queue the gap then
    idles for).  0 where there are no gaps."""
    if windows is None or not len(windows):
        return 0.0
    s = np.concatenate([x[0] for x in spans]).astype(np.int64, copy=False)
    e = np.concatenate([x[1] for x in spans]).astype(np.int64, copy=False)
    if not s.size:
        return 0.0
    ws, we = windows[:, 0].astype(np.int64, copy=False), windows[:, 1].astype(np.int64, copy=False)
    s, e = intersect_intervals(s, e, ws, we)  # the spans inside the gaps
    return bd.ledger_of(ctx, g, s, e) if s.size else 0.0


def _ends_in_step(ctx: Context) -> np.ndarray:
    """Bool per host event: it began before every kept step's window it overlaps and ends inside one -- a wait begun
    over work from before that step (the GPU work launched before the capture that a first step is trimmed of:
    ``steps.head._trim_launched_before``), whose part inside the step is the step's."""
    h, w = ctx.h, ctx.steps.host_windows
    if not w.shape[0]:
        return np.zeros(len(h), dtype=bool)
    k = np.searchsorted(w[:, 0], h.end, side="left") - 1  # the window whose start lies before the event's end
    ok = k >= 0
    k = np.maximum(k, 0)
    return ok & (ctx.host_step < 0) & (h.start < w[k, 0]) & (h.end <= w[k, 1])


def _before_kept(ctx: Context, in_step: np.ndarray) -> np.ndarray:
    """Bool per host event: outside the kept steps (``in_step`` false) and ending before a kept step's host window
    with no kept window between -- the unkept stretch (a warm-up step, a dropped one) a kept step follows, where the
    wait that drains the GPU before the kept step's first work may lie (:func:`_last_before_kept`)."""
    h, w = ctx.h, ctx.steps.host_windows
    if not w.shape[0]:
        return np.zeros(len(h), dtype=bool)
    k = np.searchsorted(w[:, 0], h.end, side="left")  # the first kept window starting at or after the event's end
    return ~in_step & (k < w.shape[0])


def _last_before_kept(ctx: Context, sync: np.ndarray) -> np.ndarray:
    """Bool per wait of ``sync`` (ascending host events): the last one on its line to end before a kept step's host
    window that lies outside every kept step.  Why (h37-probe46b's Left 2): the wait drained the queue, so the GPU idles
    from the end of the work it waited for until the host launches again -- into the kept step, whose lead idle the
    ledger books (the kept part only; the wait's count, name and host time are its own unkept step's).  Unread, that
    lead went to the next launch's wait: ``write_cpu_index``'s first kept step, 7.9 us launch wait of the copies'."""
    h, w = ctx.h, ctx.steps.host_windows
    out = np.zeros(sync.shape, dtype=bool)
    outside = np.flatnonzero((ctx.host_step[sync] < 0) & ~_ends_in_step(ctx)[sync]) if sync.size else sync
    if not outside.size or not w.shape[0]:
        return out
    end = h.end[sync[outside]].astype(np.int64)
    k = np.searchsorted(w[:, 0], end, side="left")
    ok = k < w.shape[0]
    outside, end, k = outside[ok], end[ok], k[ok]
    key = np.stack([h.line[sync[outside]].astype(np.int64), k])
    order = np.lexsort((end, key[1], key[0]))  # by line, then window, then end: the last of each group decides
    outside, key = outside[order], key[:, order]
    last = np.ones(outside.size, dtype=bool)
    last[:-1] = (key[:, 1:] != key[:, :-1]).any(axis=0)
    out[outside[last]] = True
    return out


def _from_step_start(ctx: Context, idx: np.ndarray) -> np.ndarray:
    """Each host event's start, or the start of the kept step it ends in where it began before it: the host's wait
    counts from the step's start (its part before the step waited on the work before it, said where that work is
    said, ``steps``' before-capture note)."""
    h, w = ctx.h, ctx.steps.host_windows
    st = h.start[idx].astype(np.int64)
    if not w.shape[0] or not idx.size:
        return st
    k = np.maximum(np.searchsorted(w[:, 0], h.end[idx], side="left") - 1, 0)
    return np.where(ctx.host_step[idx] < 0, np.maximum(st, w[k, 0]), st)


def _lost_reads(ctx: Context) -> HostSyncs | None:
    """The host's wait in scalar reads inside kept steps where the capture lost its GPU records, or None where none
    waited.  Why: with no runtime call recorded there is no sync to measure, yet a read lasting milliseconds is the
    host blocked on the GPU (``job.kind.waited_scalar_reads``), measured on the host's own clock; the GPU's idle
    behind it is not known, so only the host's time is kept."""
    h = ctx.h
    reads = waited_scalar_reads(ctx.trace, ctx.fw)
    reads = reads[ctx.host_step[reads] >= 0]
    if not reads.size:
        return None
    dur = (h.end[reads] - h.start[reads]).astype(np.float64) / PS_PER_MS
    per: dict[str, float] = {}
    for i, d in zip(reads.tolist(), dur.tolist()):
        read, under = h.names[int(h.name[i])], read_under(ctx.trace, i)
        name = f"{read} under {under}" if under else read
        per[name] = per.get(name, 0.0) + ctx.per_step(d, shared=False)
    # the host's own time, on its own clock: per kept step, not shared among the GPUs it drove
    return HostSyncs(lost_read_ms_per_step=ctx.per_step(dur.sum(), shared=False),
                     lost_read_callers=sorted(per.items(), key=lambda kv: -kv[1]))


def _held(h, idx: np.ndarray, holder: np.ndarray) -> np.ndarray:  # noqa: ANN001 - HostEvents
    """Bool per host event of ``idx``: a ``holder`` event on its line holds its start (``Framework.blocking_read_holder``:
    TensorFlow's ``MemcpyD2H`` inside its runtime's ops is its own copy, not the program's read)."""
    out = np.zeros(idx.shape, dtype=bool)
    rows = np.flatnonzero(holder)
    if not idx.size or not rows.size:
        return out
    for line in np.unique(h.line[idx]):
        mine, on = h.line[idx] == line, rows[h.line[rows] == line]
        out[mine] = coverage(h.start[idx[mine]], h.start[on], h.end[on])
    return out


def _outermost(h, idx: np.ndarray) -> np.ndarray:  # noqa: ANN001 - HostEvents
    """Of host events ``idx``, those no other of them on their line holds (``model.columns.outermost``: the one rule
    of nesting under rounded times -- a read whose rounded end lands a nanosecond past its frame's is still inside
    it).  Why: a wait's Python frame holds the read inside it (``jax.device_get`` reads each array through
    ``np.asarray(jax.Array)``), one wait, not two."""
    if idx.size < 2:
        return idx
    return np.sort(idx[outermost_rows(h.line[idx], h.start[idx], h.end[idx])])


def _in_own_one_time(ctx: Context, calls: np.ndarray) -> np.ndarray:
    """Bool per host call of ``calls``: it starts inside a one-time cost of its own process (``Context.one_time_spans``
    of the GPU whose process's lines hold it; the capture's where no GPU's do).  Why: a rank's sync while another rank
    loads a module is this rank's steady wait -- the other process's start-up holds none of it (h37-probe42r)."""
    h = ctx.h
    inside, rest = np.zeros(calls.shape, dtype=bool), np.ones(calls.shape, dtype=bool)
    for g in ctx.gpus:
        if g.host_mask is None or not rest.any():
            continue
        on = g.host_mask[calls] & rest
        inside[on] = _in_spans(h.start[calls[on]], ctx.one_time_spans(g))
        rest &= ~on
    inside[rest] = _in_spans(h.start[calls[rest]], ctx.one_time_spans())
    return inside


def _in_spans(t: np.ndarray, spans: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    """Bool per time: inside one of the disjoint sorted spans.  A sync inside a one-time cost (``job.phase``: the
    model's upload before its first kernel, a library's algorithm search) is start-up's, booked there once, not a
    wait the steady step pays."""
    if spans is None or not spans[0].size or not t.size:
        return np.zeros(t.shape, dtype=bool)
    j = np.searchsorted(spans[0], t, side="right") - 1
    return (j >= 0) & (t < spans[1][np.maximum(j, 0)])


def _outer_op(ctx: Context, sync: np.ndarray, callers: np.ndarray) -> np.ndarray:
    """Per sync, the outermost framework op (``_framework_op``) on its line around it: the op the program called
    (``x[mask]`` is ``aten::index`` around the ``aten::nonzero`` that reads); its caller where none is.  Not the
    engine's wrapper around an op (``Framework.engine_wrapper``: autograd's ``autograd::engine::evaluate_function:
    IndexBackward0``), which every backward node wears alike: the node inside (``IndexBackward0``, a custom Function's
    ``ClampScaleBackward``) is the program's code -- main named a backward's wait by the wrapper, cut to
    "autograd::engine::evaluate_function: Cl… ×4" in the finding (``torchtrace.write_backward_read``, h37-probe45p)."""
    h = ctx.h
    out = callers.copy()
    ops = np.flatnonzero(_unwrapped_ops(ctx))
    if not ops.size or not sync.size:
        return out
    for line in sorted_unique(h.line[sync]):
        o = ops[h.line[ops] == line]
        if not o.size:
            continue
        o = o[np.argsort(h.start[o], kind="stable")]
        s, e = h.start[o].astype(np.int64), h.end[o].astype(np.int64)
        reach = np.maximum.accumulate(e)
        top = np.concatenate([[True], s[1:] >= reach[:-1]])  # not inside an earlier op (one ending as it starts: beside)
        o, s, e = o[top], s[top], e[top]
        sel = np.flatnonzero(h.line[sync] == line)
        t = h.start[sync[sel]].astype(np.int64)
        k = np.searchsorted(s, t, side="right") - 1
        hit = (k >= 0) & (e[np.maximum(k, 0)] >= t)
        out[sel[hit]] = o[k[hit]]
    return out


def _unwrapped_ops(ctx: Context) -> np.ndarray:
    """Bool per host event: a framework op (``_framework_op``) or an op an engine's wrapper runs (autograd's node
    ``IndexBackward0`` inside ``autograd::engine::evaluate_function: IndexBackward0``: ``Framework.engine_wrapper``),
    but no wrapper and no step mark -- the ops that can name a wait."""
    h, fw = ctx.h, ctx.fw
    wrapper = h.name_mask(lambda n: bool(fw.engine_wrapper(n)))
    ops = _framework_op(ctx) & ~ctx.step_marks
    if not wrapper.any():
        return ops
    nodes = {fw.engine_wrapper(h.names[int(i)]) for i in sorted_unique(h.name[wrapper])}
    return (ops | h.name_mask(lambda n: n in nodes)) & ~wrapper


def _launched_after(ctx: Context, encloser: Encloser, sync: np.ndarray, callers: np.ndarray) -> np.ndarray:
    """Bool per sync: the op around it (its caller) itself launched device work after the sync returned -- a launch
    no other op inside it makes -- so the op read a value to go on with its own work (``torch.nonzero`` reads the
    count of hits, then writes that many indices; ``torch.unique`` the number of uniques), where a read the program
    asked for (``.item()``, ``.cpu()``) ends with its copy.  Why it matters (issue #37 class 3, h37-probe43s): the GPU
    runs the op's last kernels and idles again until the program launches more, so the wait lasts until the op
    returns, and its fix is the op's (a size known in advance), not "read values every N steps".  A region that only
    holds other ops (a compiled graph's ``## Call CompiledFxGraph``, whose Triton kernels launch inside their own
    ops) launches nothing itself: its syncs stay the program's (xdit_flux_mi300x_capture's cudagraph warm-up).  Only a
    framework op reads a value to go on with: found by nesting (:func:`_encloser`), that region's graph replay after
    its warm-up syncs is its own launch, but the region is Inductor's range, no op of the program's."""
    h = ctx.h
    out = np.zeros(sync.shape, dtype=bool)
    callers = np.where((callers >= 0) & _framework_op(ctx)[np.maximum(callers, 0)], callers, -1)
    launches = [g.launch[g.launch >= 0] for g in ctx.gpus]
    rec = sorted_unique(np.concatenate(launches).astype(np.int64)) if launches else np.zeros(0, np.int64)
    if not rec.size or not (callers >= 0).any():
        return out
    by = encloser.find(rec).astype(np.int64)
    rec, by = rec[by >= 0], by[by >= 0]
    if not rec.size:
        return out
    order = np.lexsort((h.start[rec], by))
    by, starts = by[order], h.start[rec[order]].astype(np.int64)
    ops, first = np.unique(by, return_index=True)
    last = np.maximum.reduceat(starts, first)  # each op's last launch of its own
    k = np.searchsorted(ops, callers)
    hit = (callers >= 0) & (k < ops.size) & (ops[np.minimum(k, ops.size - 1)] == callers)
    out[hit] = last[k[hit]] > h.end[sync[hit]].astype(np.int64)
    return out


def _polls(ctx: Context, in_step: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the query that said "done" of each poll in a step, ascending, the poll's first query's start in ps): the
    program's polls (``Context.waits``: ``Job.waits``, the one reading the steps ask too -- found once, outside every
    framework op, by ``job.waits.polls``)."""
    done, begin = ctx.waits.polls()
    keep = in_step[done]
    return done[keep], begin[keep]


def _copy_goes_on(ctx: Context, sync: np.ndarray, callers: np.ndarray, outer: np.ndarray,
                  copy: np.ndarray) -> np.ndarray:
    """Bool per sync: a blocking copy's wait inside an op the program called that launched its own work after the
    wait returned (``x[idx]`` with a CPU ``idx``: ``aten::index`` uploads the index in ``aten::copy_``, waits for its
    stream, then launches its gather) -- the op goes on with what it copied, as a sync's op goes on with the value it
    read (:func:`_launched_after`).  Why it matters (h37-probe46b): the wait drained the queue, so the GPU runs only
    the op's last kernel and idles again until the program launches more; measured to the copy's return, the wait
    owned the 17 us before the gather and the 95 us after it (the host's work, with nothing queued) went to the next
    launch's wait -- launch_bound critical on a loop whose launches cost nothing beside its GPU work."""
    out = copy & (outer >= 0) & (outer != callers)
    if out.any():
        out[out] = _own_launch_after(ctx, sync[out], outer[out])
    return out


def _own_launch_after(ctx: Context, sync: np.ndarray, outer: np.ndarray) -> np.ndarray:
    """Bool per wait: its op ``outer`` (outermost on the wait's line) launched work of its own after the wait returned
    -- a launch inside ``outer`` that no op inside it holds (a region of other ops launches nothing itself, as
    :func:`_launched_after` reads it).  Read by nesting, not by the latest-starting op (``Encloser.find``): the
    gather's launch after ``aten::index``'s ``aten::to`` is ``aten::index``'s own, though ``aten::to`` started last."""
    h = ctx.h
    out = np.zeros(sync.shape, dtype=bool)
    rec = sorted_unique(np.concatenate([g.launch[g.launch >= 0] for g in ctx.gpus]).astype(np.int64)) if ctx.gpus \
        else np.zeros(0, np.int64)
    runtime = h.name_mask(lambda x: x.startswith(_RUNTIME) or devices.is_runtime_call(x))  # a launch holds itself
    ops = np.flatnonzero(_unwrapped_ops(ctx) & ~runtime)
    for line in sorted_unique(h.line[sync]):
        o = ops[h.line[ops] == line]
        t = np.sort(h.start[rec[h.line[rec] == line]].astype(np.int64))
        if not o.size or not t.size:
            continue
        o = o[np.argsort(h.start[o], kind="stable")]
        s, e = h.start[o].astype(np.int64), h.end[o].astype(np.int64)
        reach = np.maximum.accumulate(e)
        inner = np.concatenate([[False], s[1:] < reach[:-1]])  # inside an earlier op
        inner_reach = np.maximum.accumulate(np.where(inner, e, np.iinfo(np.int64).min))
        k = np.searchsorted(s, t, side="right") - 1
        own = (k < 0) | (inner_reach[np.maximum(k, 0)] < t)  # no inner op started before it still runs
        cum = np.concatenate([[0], np.cumsum(own)])
        sel = np.flatnonzero(h.line[sync] == line)
        lo = np.searchsorted(t, h.end[sync[sel]].astype(np.int64), side="right")
        hi = np.searchsorted(t, h.end[outer[sel]].astype(np.int64), side="right")
        out[sel] = cum[hi] - cum[lo] > 0
    return out


def _named_by(callers: np.ndarray, sync: np.ndarray) -> np.ndarray:
    """Per sync, the host event that names it: the op around it, or where none encloses it, the sync call itself.
    Why: a program with no framework (a CUDA C++ loop timing each kernel with ``cudaEventSynchronize``) calls its
    syncs from code the profiler does not record, and a framework's program may call one outside every op
    (``torch.cuda.synchronize()``); counting only the enclosed ones named fewer syncs than the finding counts, or none
    ("in runtime calls")."""
    return np.where(callers >= 0, callers, sync)


def _top(ctx: Context, callers: np.ndarray, top_n: int) -> list[tuple[str, float]]:
    """The host events that made the syncs, most frequent first, with their count per step and rank."""
    h = ctx.h
    named = callers[callers >= 0]
    if not named.size:
        return []
    u, inv = unique_inverse(h.name[named])
    counts = np.bincount(inv, minlength=u.size)
    return [(h.names[int(u[i])], ctx.per_step(counts[i])) for i in np.argsort(-counts, kind="stable")[:top_n]]


def _encloser(ctx: Context) -> Encloser:
    """The framework op around a wait, never another runtime call (any vendor's: a HIP call would enclose itself),
    nor the range that marks the whole step (``Context.step_marks``: ``decode 3`` says the wait is in the iteration,
    not who made it -- a sync no op encloses is then named by its own call), nor the profiler's own step mark
    (``Framework.step_marker``: ``ProfilerStep#3``, a step mark whatever the steps were read from).  Found by nesting
    (``Encloser(nested=True)``): a sync or launch of an op after an op inside it returned (``aten::nonzero``'s
    ``aten::empty``, then its read, then its select) is that op's, not inside no op (h37-probe47c)."""
    h = ctx.h
    mask = h.name_mask(lambda x: not x.startswith(_RUNTIME) and not devices.is_runtime_call(x))
    return Encloser(h, mask & ~ctx.step_marks & ~h.name_mask(ctx.fw.step_marker), nested=True)


def _blocking_reads(ctx: Context) -> np.ndarray:
    """Bool per host event: a runtime copy call that held the host until its copy to the host ran (a copy call not
    named asynchronous, ``devices.copy_call_sync``, whose device copy is device-to-host) -- the program reading device
    values through a call that is the copy and the wait in one: PyTorch's ``.item()`` / ``.cpu()`` on ROCm
    (``hipMemcpyWithStream``), a native program's ``cudaMemcpy`` to the host.  The runtime records no sync call for
    them, yet the host waits in them for all the work queued before the copy, as in a ``cudaStreamSynchronize``.
    A copy call made inside the framework's read of a scalar (``Framework.scalar_read_event``: ``.item()``'s
    ``aten::_local_scalar_dense``) reads to the host whatever direction its record says: ROCm's tracers record that
    copy ``Memcpy DtoD (Device -> Device)`` (11 of 11 in the kept MI300X traces, ``devices.amd.HOST_FREE_KINDS``;
    its call asked ``hipMemcpyDeviceToHost``), which read as no read, the wait's idle booked as launch wait."""
    out = np.zeros(len(ctx.h), dtype=bool)
    blocking = scalar = None
    for g in ctx.gpus:
        d = g.d
        sel = np.flatnonzero(((d.kind == devices.KIND_D2H) | (d.kind == devices.KIND_D2D)) & (g.launch >= 0))
        if not sel.size:
            continue
        if blocking is None:
            blocking = ctx.h.name_mask(lambda x: devices.copy_call_sync(x) == 1)
            scalar = reads_off_a_gpu(ctx.trace, ctx.fw)
        calls = g.launch[sel]
        to_host = (d.kind[sel] == devices.KIND_D2H) | scalar[calls]
        out[calls[blocking[calls] & to_host]] = True
    return out


def _read_moving(ctx: Context, reads: np.ndarray) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per framework read (JAX's ``np.asarray(jax.Array)``): its bytes moving (ps) -- the D2H transfers that start
    inside it (device time) and, from the first of them to its return, the host's copies out of the runtime's staging
    buffer (``Framework.read_staging_event``) -- and those stretches (start, end, read), for the idle's split.

    Why: a read's wait is two costs.  Reading 4 bytes (``float(loss)``) is the round trip of a wait: the drain, the
    callback, the next dispatch, and fewer reads are the fix.  Reading 64 MiB adds 1.2 ms of transfer and 7.3 ms
    copying out of the staging buffer while the GPU idles (H100 rates): the bytes' cost, which fewer or smaller reads,
    or a transfer started early (``copy_to_host_async``), remove.  Data that leaves in a round trip
    (``trips.trip_windows``) stays the round trip's, ``host_op_placement``'s.  Found by binary search over the
    transfers' and staging events' sorted starts (a loop over reads was one Python pass per read, h37-copies23)."""
    h = ctx.h
    n = reads.size
    never = np.iinfo(np.int64).max
    first = np.full(n, never, dtype=np.int64)
    moving = np.zeros(n, dtype=np.int64)
    none = np.zeros(0, np.int64)
    if not n:
        return moving, (none, none, none)
    rs, re = h.start[reads].astype(np.int64), h.end[reads].astype(np.int64)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for g in ctx.gpus:
        d = g.d
        if not len(d) or bd.clocks_disagree(ctx, g):
            continue
        cp = np.flatnonzero(d.kind == devices.KIND_D2H)
        cs, ce = d.start[cp].astype(np.int64), d.end[cp].astype(np.int64)
        ws, we, _ = trips.trip_windows(g, ctx.steps.count)  # data leaving in a round trip: the round trip's
        if ws.size:
            out_trip = ~_in_spans(ce, (ws.astype(np.int64), we.astype(np.int64)))  # a trip opens at its copy's end
            cs, ce = cs[out_trip], ce[out_trip]
        k, r = starts_in_windows(cs, rs, re)
        np.minimum.at(first, r, cs[k])
        parts.append((cs[k], np.minimum(ce[k], re[r]), r))
    stage = np.flatnonzero(h.name_mask(ctx.fw.read_staging_event))
    ss, se = h.start[stage].astype(np.int64), h.end[stage].astype(np.int64)
    order = np.argsort(ss, kind="stable")
    ss, se = ss[order], se[order]
    k, r = starts_in_windows(ss, np.minimum(first, re), re)  # no transfer inside: an empty range, no staging counted
    parts.append((ss[k], np.minimum(se[k], re[r]), r))
    s, e, r = (np.concatenate(x) for x in zip(*parts))
    np.add.at(moving, r, e - s)
    return moving, (s, e, r)


def _of_reads(moved: tuple[np.ndarray, np.ndarray, np.ndarray], keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The moving stretches (start, end, read: :func:`_read_moving`) of the reads ``keep`` marks, merged."""
    s, e, r = moved
    on = keep[r]
    return union_intervals(s[on], e[on])


def _split_reads(spans: list[tuple[np.ndarray, np.ndarray]], moving: tuple[np.ndarray, np.ndarray]) -> None:
    """The reads' idle (``spans[0]``, measured as the syncs' drained stretch) in two: the instants their bytes move
    (``moving``: the transfers and the staging copies, sorted and disjoint) to the copies' waits (``spans[1]``), the
    rest -- the drain, the callback, the next dispatch -- stays the syncs'.  Each instant is booked once, so the two
    sum to what the read cost as a whole (h37-copies23: a read was one cause or the other, by which half was larger)."""
    s, e = spans[0]
    if not s.size or not moving[0].size:
        return
    s, e = s.astype(np.int64, copy=False), e.astype(np.int64, copy=False)
    rest = subtract_intervals(s, e, *moving)
    part = subtract_intervals(s, e, *rest)
    spans[0] = rest
    if part[0].size:
        spans[1] = union_intervals(np.concatenate([spans[1][0].astype(np.int64), part[0]]),
                                   np.concatenate([spans[1][1].astype(np.int64), part[1]]))


def _framework_reads(ctx: Context, encloser: Encloser, idx: np.ndarray) -> np.ndarray:
    """The blocking reads ``idx`` (:func:`_blocking_reads`) a framework op made: the same read of a device value
    (PyTorch's ``.item()``, ``.cpu()``) is a ``cudaMemcpyAsync`` and a ``cudaStreamSynchronize`` on CUDA and one
    ``hipMemcpyWithStream`` on ROCm, and reads as a sync on both.  A native program's own synchronous copy (a bare
    ``cudaMemcpy`` of its results) stays the copy's, ``excessive_memcpy``'s synchronous copies (issue #37 class 3)."""
    if not idx.size:
        return idx
    callers = encloser.find(idx)
    return idx[(callers >= 0) & _framework_op(ctx)[np.maximum(callers, 0)]]


def _framework_op(ctx: Context) -> np.ndarray:
    """Bool per host event: a framework's op (its ops and dispatch events, and ranges the reader read as ops: autograd
    NVTX, roctx ``aten::`` markers, PyProf / DLProf's ``Tensor.cuda``)."""
    op = ctx.host_op | ctx.h.name_mask(ctx.fw.dispatch_event)
    r = ctx.trace.ranges
    if r is not None and r.idx.size:
        op = op.copy()
        op[r.idx[r.op]] = True
    return op


def _copy_waits(ctx: Context, encloser: Encloser, callers: np.ndarray) -> np.ndarray:
    """Bool per sync: the framework op around it (``aten::copy_``) also launched a copy to the device -- the sync is
    that copy's wait for its stream (a pageable copy in PyTorch), not a value the program reads.  A copy to the host
    is the program reading device values (``.item()``, ``.cpu()``): its wait stays a sync.  Only a framework op
    counts: a user's range (an NVTX ``iteration``) holding a copy and, later, a sync of its own says nothing of why
    the sync was made."""
    launches = [g.launch[(g.d.kind == devices.KIND_H2D) & (g.launch >= 0)] for g in ctx.gpus]
    rec = np.concatenate(launches) if launches else np.zeros(0, np.int64)
    if not rec.size:
        return np.zeros(callers.shape, dtype=bool)
    copy_ops = encloser.find(sorted_unique(rec.astype(np.int64)))
    copy_ops = copy_ops[copy_ops >= 0]
    return (callers >= 0) & np.isin(callers, copy_ops) & _framework_op(ctx)[np.maximum(callers, 0)]


def _recorded(ctx: Context, sync: np.ndarray, poll_spans: tuple[np.ndarray, np.ndarray] | None = None
              ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
    """What the threads that sync spend in anything the profiler recorded: their host events but those that bound a
    step -- ops, runtime calls, the user's ranges -- as a bool mask, and their Python spans.  A range that spans a whole
    kept step (the framework's step marker, a user's NVTX step range, an iteration range, an XLA module's range: any
    step source's own) says only that the step runs, not what the host does inside it: counted as recorded it hid the
    untraced host code after a sync, which the sync's idle then claimed as well as the gap finding (h37-left52).

    ``poll_spans`` (each poll's first query's start, its last query's end: :func:`_polls`) are recorded time too: between
    two queries the host is in the loop that asks them, waiting as surely as inside a sync call, and the profiler
    records the queries, not the loop.  Unread, a native loop polling ``cuStreamQuery`` every 10 us after each kernel
    left 6.7 ms a step of its waits "unrecorded host time" and 3 ms to launch_bound (h37-probe45p), where the same
    loop with ``cuStreamSynchronize`` read host_sync."""
    h = ctx.h
    lines = sorted_unique(h.line[sync])
    m = np.isin(h.line, lines) & ~h.name_mask(ctx.fw.step_marker)
    last = last_starts(ctx.steps.host_windows, h.start[m])
    m &= ~_bounds_a_step(ctx, m, last)
    sp = ctx.trace.spans
    py = None
    if sp is not None and len(sp):
        on = np.flatnonzero(np.isin(sp.line, lines))
        s0, e0 = sp.start[on].astype(np.int64, copy=False), sp.end[on].astype(np.int64, copy=False)
        keep = ~loop_frames(ctx.steps.host_windows, last, s0, e0)  # as a step's range, no host work
        py = (s0[keep], e0[keep])
    if poll_spans is not None and poll_spans[0].size:
        py = poll_spans if py is None else (np.concatenate([py[0], poll_spans[0]]),
                                            np.concatenate([py[1], poll_spans[1]]))
    return m, py


def _bounds_a_step(ctx: Context, m: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Bool per host event (only those ``m`` marks looked at): it bounds a kept step (``context.bounds_a_window``),
    ``last`` being ``context.last_starts`` of the events ``m`` marks."""
    out = np.zeros(m.shape, dtype=bool)
    idx = np.flatnonzero(m)
    if idx.size:
        h = ctx.h
        out[idx] = bounds_a_window(ctx.steps.host_windows, last, h.start[idx].astype(np.int64),
                                   h.end[idx].astype(np.int64))
    return out


def _covered(h, recorded: tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None],  # noqa: ANN001 - HostEvents
             s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The parts of the disjoint sorted gaps (s, e) the recorded host time covers.  Only the events that overlap a
    gap are gathered (the last gap starting before an event's end is the only one it can overlap without covering
    a later one): a thread's every event as interval columns would be 16 bytes an event for a few gaps.  They are
    looked up ``context._CHUNK`` events at a time: the lookup's temporaries over a thread's every event were ~35 bytes
    an event, the analysis' peak on an Nsight export of one thread (issue #38)."""
    if not s.size:
        return s, e
    mask, py = recorded
    cs, ce = [], []
    step = _context._CHUNK
    for a in range(0, mask.size, step):
        idx = np.flatnonzero(mask[a:a + step]) + a
        j = np.searchsorted(s, h.end[idx], side="left") - 1
        ok = j >= 0
        ok[ok] = h.start[idx[ok]] < e[j[ok]]
        idx = idx[ok]
        cs.append(h.start[idx].astype(np.int64, copy=False))
        ce.append(h.end[idx].astype(np.int64, copy=False))
    if py is not None:
        cs.append(py[0])
        ce.append(py[1])
    rs, re = union_intervals(np.concatenate(cs), np.concatenate(ce))
    if not rs.size:
        return s[:0], e[:0]
    return intersect_intervals(s, e, rs, re)


def _owned(ctx: Context, g) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001 - a context.GpuCtx
    """The stretches of this GPU's idle another cause owns, whatever sync or read precedes them: the host's input
    waits (an implicit transfer's copy among them: ``context`` counts copies of array data to the device as input),
    and the round trips ``host_op_placement`` sizes -- data copied out, worked on by the host and copied back
    (``trips.trip_windows``).  A read of the data that leaves in a round trip (JAX's ``np.asarray`` of an
    activation) waits for the GPU, but the idle after it is the round trip's: the fix moves the host's work onto the
    GPU, read and all (h37-left53: real-h100-jax ``host_roundtrip``, 4.2 ms a step in the read, all inside the round
    trip's 19.6 ms)."""
    ws, we, _ = trips.trip_windows(g, ctx.steps.count)
    iw = _input_wait(ctx, g)
    if not ws.size:
        return iw
    return union_intervals(np.concatenate([iw[0], ws]).astype(np.int64), np.concatenate([iw[1], we]).astype(np.int64))


def _input_wait(ctx: Context, g) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001 - a context.GpuCtx
    """The host's input waits that explain this GPU's idle time (its own process's, as the breakdown counts them)."""
    return union_intervals(*ctx.input_wait_parts(g))


def _idle_after(g, h, held: np.ndarray, ends: np.ndarray, copy: np.ndarray,  # noqa: ANN001
                waits: tuple[np.ndarray, np.ndarray], recorded: tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None],
                starts: np.ndarray | None = None) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """GPU idle (ps) after the syncs: [the program's syncs, the copies' waits, unrecorded host time], and the idle
    intervals of the program's syncs and of the copies' waits (for the step's ledger to book).

    Each idle gap runs from the end of the device work the syncs waited for to the GPU's next device event; it is
    the cause's of the last sync in it (the one the host returned from before launching again).  Less the time the
    host spent waiting for input meanwhile (the input check's: a loop that syncs and then waits for its DataLoader
    idles the GPU for the input), and less the time the syncing thread ran nothing recorded (the host's own code the
    profiler did not see: neither the sync's nor the copy's).

    A gap is the syncs' only as far as the host's time blocked in them (``held``, per sync: its call, or for a copy's
    wait the copy op around it; issue #37 item 3): without a sync the host
    runs on by the time it waited, so its next launch comes at most that much sooner, and the GPU idles the rest of the
    gap with or without the sync.  After an ``.item()`` that waited for a long step the whole gap (the host's dispatch
    of the next work) is the sync's; after a sync that returned at once (the GPU had little queued) the GPU idles for
    the host's own work, not for the sync.  The first part of each gap, as long as the host was blocked, is booked.

    The program's syncs (``starts`` given) are measured over their drained stretch (h37-waits2): from the drain (the
    end of the work launched before the sync began) to the first device event after they returned, every instant the
    GPU idles in it.  Why: a loop whose host runs ``H`` a step besides ``W`` blocked in its wait, over ``B`` of GPU
    work, steps at ``H + W``; without the wait it steps at ``max(B, H)``, so the wait costs ``min(H + W - B, W)`` --
    the idle it exposes where the host's own time fits under the GPU's work, else the time it blocked.  A read that
    copies its value out splits that idle with its own copy (JAX's ``np.asarray``: ~250 us of idle before the copy,
    ~460 after), which the gap after the read alone missed; and a kept step's last sync, whose next work is the next
    (unkept) step's, drains its step too (the ledger keeps only the kept steps' part).  The cap stays the host's
    blocked time, so a host-bound loop (its own time over the GPU's work) is given no more than the wait itself."""
    d = g.d
    out = np.zeros(3)
    none = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    if not len(d):
        return out, [none, none]
    run_end = np.maximum.accumulate(d.end)
    j = np.searchsorted(d.start, ends, side="left")  # the first device event starting after the sync returned
    ok = (j > 0) & (j < len(d))
    j, last_end, is_copy = j[ok], ends[ok], copy[ok]
    blocked = held[ok]
    first_start = (starts if starts is not None else ends - held)[ok].astype(np.int64)
    if starts is not None:  # the drain: no earlier than the end of the work launched before the sync began (the GPU
        # idling for that work's launch is not it)
        first_start = np.maximum(first_start, drain(g.d, g.launch, h, first_start))
    if not j.size:
        return out, [none, none]
    order = np.lexsort((last_end, j))  # by gap, then by when the sync returned: the last of each gap decides
    j, is_copy, blocked, first_start = j[order], is_copy[order], blocked[order], first_start[order]
    returned = last_end[order].astype(np.int64)
    last = np.ones(j.size, dtype=bool)
    last[:-1] = j[1:] != j[:-1]
    first = np.flatnonzero(np.concatenate([[True], last[:-1]]))
    blocked = np.add.reduceat(blocked, first)  # the host's time blocked in the syncs of each gap
    first_start = np.minimum.reduceat(first_start, first)  # when the first sync of each gap began
    j, is_copy, returned = j[last], is_copy[last], returned[last]  # each gap's last return: its syncs'
    kept = g.step[j] >= 0  # the work the GPU waited for belongs to a kept step
    if starts is not None:  # the waits lie in kept steps already: a kept step's last one (its next work the next,
        kept = kept | (g.step[j - 1] >= 0)  # unkept step's) drains that step too (the ledger clips)
    a, b, is_copy = run_end[j - 1][kept].astype(np.int64, copy=False), d.start[j][kept].astype(np.int64, copy=False), is_copy[kept]
    blocked, first_start, returned = blocked[kept], first_start[kept], returned[kept]
    pos = b > a
    dr_s, dr_e = _drained(d, first_start, b)
    spans = [none, none]
    for i, sel in enumerate((~is_copy & pos, is_copy & pos)):
        s, e = a[sel], b[sel]
        if waits[0].size:
            s, e = subtract_intervals(s, e, *waits)
        s0, e0 = s, e
        s, e = _covered(h, recorded, s, e)
        # the unrecorded part as the step's ledger holds it: inside the kept steps (a gap's tail past the step's end,
        # a stretch between steps, is no step's -- h37-left63: 9.91 ms "of each 8.29 ms step").  A kept step's last
        # wait's gap, into the unkept step after it, counts its part before the step's end as every step's does
        # (h37-probe47e: the ``.item()`` loop read 9.5 of its 10 us a step, the last kept step's 5 us dropped)
        u0, u1 = subtract_intervals(s0, e0, s, e)
        out[2] += float(np.subtract(*bd._inside_steps(g, u0, u1)[::-1]).sum())
        ga, gb = a[sel], b[sel]
        if starts is not None and ga.size:  # the program's syncs and the copies' waits: their whole drained stretch
            ga, gb = _until_owned(dr_s[sel], dr_e[sel], returned[sel], waits)
            ga, gb = ga[gb > ga], gb[gb > ga]
            s, e = ga, gb
            if s.size:
                s, e = _idle_in(d, s, e)
            if waits[0].size and s.size:
                s, e = subtract_intervals(s, e, *waits)
            s, e = _covered(h, recorded, s, e)
        s, e = _first_of_each(s, e, ga, gb, blocked[sel])
        out[i] = float((e - s).sum())
        spans[i] = (s, e)
    return out, spans


def _drained(d, begin: np.ndarray, first_launch: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    """Per gap of syncs (sorted, every cause's): its drained stretch, from its first sync's start (the drain, where
    later) to the first device event after its syncs returned, no two overlapping: each starts no earlier than the
    previous one's end.  One per gap, in order; an empty one ends where it starts."""
    start = begin.astype(np.int64).copy()
    if start.size > 1:
        start[1:] = np.maximum(start[1:], first_launch[:-1])
    return start, np.maximum(first_launch.astype(np.int64), start)


def _until_owned(s: np.ndarray, e: np.ndarray, returned: np.ndarray, owned: tuple[np.ndarray, np.ndarray]
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The drained stretches (s, e) cut at the first stretch another cause owns that reaches into them (``_owned``: an
    input wait, a round trip): from there the host works for that cause.  Where that stretch begins before the syncs
    ``returned``, they waited inside it -- a read inside a round trip is the round trip's (its fix removes the read
    with the trip) -- and their stretch is empty."""
    os_, oe = owned
    if not os_.size or not s.size:
        return s, e
    k = np.searchsorted(oe, s, side="right")  # the first owned stretch ending after each start (disjoint, sorted)
    hit = k < os_.size
    cut = np.where(hit, os_[np.minimum(k, os_.size - 1)], e)
    cut = np.where(cut < returned, s, cut)
    return s, np.maximum(s, np.minimum(e, cut))


def _idle_in(d, s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    """The parts of the disjoint sorted stretches (s, e) during which the GPU ran no device event: less its busy union
    (``DeviceEvents.busy``, merged once per GPU and analysis; it was merged again here from the events near the
    stretches -- the same answer, since only an event overlapping a stretch covers any of it)."""
    if not len(d):
        return s, e
    bs, be = d.busy()
    return subtract_intervals(s, e, bs, be)


def _first_of_each(s: np.ndarray, e: np.ndarray, ga: np.ndarray, gb: np.ndarray,
                   room: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Of the sorted disjoint intervals (s, e), each inside one of the sorted disjoint gaps (ga, gb), the first
    ``room`` ps of each gap's (the time a gap's syncs blocked the host: all a sync can cost)."""
    if not s.size or not ga.size:
        return s[:0], e[:0]
    gap = np.searchsorted(ga, s, side="right") - 1
    ok = (gap >= 0) & (s < gb[np.maximum(gap, 0)])
    s, e, gap = s[ok], e[ok], gap[ok]
    length = e - s
    before = np.cumsum(length) - length  # total length of the earlier intervals ...
    first = np.searchsorted(gap, gap, side="left")
    before = before - before[first]  # ... of the same gap
    take = np.clip(room[gap] - before, 0, length)
    keep = take > 0
    return s[keep], (s + take)[keep]


#: The ledger's column of the GPU idle nothing recorded covers.
_OTHER = BREAKDOWN_CATEGORIES.index("other")


def launcher_silence(ctx: Context, gap_windows: dict | None = None) -> tuple[float, float, float, float]:
    """(ms, launches), per step and rank: the GPU idle inside the kept steps that the ledger books to nothing
    recorded (``other``) and that lies in the launching thread's silence right before a launch the framework reads as
    a Python launcher's (``Framework.launcher_call``, outside every op and range: :func:`_bare_launcher_calls`) --
    from the end of the thread's last recorded event to the call --, and how many such launches of the GPUs' kept
    work there are.  (0, 0) where the framework names no launcher.  A silence shorter than a Python call's cost
    (``launch.python_launcher_us``) is no Python launcher's: a compiled one (nvFuser's C++ executor on an H200, 0.7 us
    before each of its driver launches) prepares its launch inside the call.

    Why: a Triton kernel called outside ``torch.compile`` (survey h37-survey44, an A10G microbenchmark) is launched
    by ``cuLaunchKernel`` after 25-68 us of Triton's Python launcher, which the profiler records nothing of: ~400 us
    of the 1.21 ms the report could only call "the host's own code".  The time is the ledger's own booking of a
    subset of the steps' time, so it is a part of ``other`` by construction, never above it.

    Then (ms, launches) again, of the same silences, for their part inside the GPUs' between-step gaps
    (``gap_windows``: GPU -> ``GapColumns.windows``, ps; :func:`_in_gaps`) and the launches whose silence reaches
    into a gap: what the gaps' check names of its own unrecorded time.  Why from the same silences: one launcher's
    time is one measure, of which the gaps hold a part (h37-launcher2: a launcher opening each step spends the
    first launch's silence in the gap before it, the rest inside the step).

    A silence is the launcher's only outside the OS waits its thread was traced in (:func:`_ran_in`: Nsight's OS
    runtime trace, context switches): a thread blocked in ``poll`` before its launch runs no launcher, and the floor
    applies to what it ran (h37-launcherhb: a traced 40 us wait before a bare ``cuLaunchKernel`` was counted whole)."""
    h = ctx.h
    if not len(h) or not ctx.steps.count:
        return 0.0, 0.0, 0.0, 0.0
    named = h.name_mask(ctx.fw.launcher_call)
    if not named.any():
        return 0.0, 0.0, 0.0, 0.0
    total_ps, launches, gaps_ps, gap_launches = 0.0, 0, 0.0, 0
    for g in ctx.active:
        calls = _bare_launcher_calls(ctx, g, named)
        if not calls.size:
            continue
        s, e = _silence_before(h, _recorded(ctx, calls), calls)
        lines = h.line[calls].astype(np.int64)
        # shorter: a compiled launcher's own call; a thread's traced OS wait is no launcher's time (h37-launcherhb)
        waits = _waits_of(ctx, lines)  # each thread's traced OS waits, read once for both uses below
        keep = _ran_in(waits, lines, s, e) >= T("launch.python_launcher_us") * PS_PER_US
        launches += int(keep.sum())
        if not keep.any():
            continue
        spans = _out_of_waits(waits, lines[keep], s[keep], e[keep])
        total_ps += float(bd.ledger_of(ctx, g, *spans)[_OTHER])
        windows = (gap_windows or {}).get(g.d.gpu)
        in_gaps = _in_gaps(ctx, g, [spans], windows)
        if isinstance(in_gaps, np.ndarray) and in_gaps[_OTHER] > 0:
            gaps_ps += float(in_gaps[_OTHER])
            gap_launches += int(_reach_into(s[keep], e[keep], windows).sum())
    return (float(ctx.per_step(total_ps, unit=PS_PER_MS)), float(ctx.per_step(launches)),
            float(ctx.per_step(gaps_ps, unit=PS_PER_MS)), float(ctx.per_step(gap_launches)))


def _waits_of(ctx: Context, lines: np.ndarray) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per thread ``lines`` names, its traced OS waits (``breakdown.threads_waits``; disjoint sorted ps), where it has
    any: read once for the per-silence count (:func:`_ran_in`) and the ledger's spans (:func:`_out_of_waits`)."""
    out = {}
    for line in sorted_unique(lines).tolist():
        ws, we = bd.threads_waits(ctx, np.array([line]))
        if ws.size:
            out[int(line)] = (ws, we)
    return out


def _ran_in(waits: dict[int, tuple[np.ndarray, np.ndarray]], lines: np.ndarray, s: np.ndarray, e: np.ndarray
            ) -> np.ndarray:
    """Per silence [``s``, ``e``) (ps) of the thread ``lines`` names: its length less the time that thread spent in
    a traced OS wait inside it (``waits``: :func:`_waits_of`).  Why: where the capture traces the host's waits (Nsight's
    ``-t osrt``, context switches), the silence before a bare driver launch may be the thread blocked in ``poll`` or
    ``read``, which is no launcher's code: only what the thread did outside its traced waits can be the launcher's
    (h37-launcherhb; a 40 us ``poll`` before a launch was named "a Python launcher's own time")."""
    ran = (e - s).astype(np.float64)
    for line, (ws, we) in waits.items():
        mine = lines == line
        if mine.any():
            ran[mine] -= time_within(ws, we, s[mine], e[mine])
    return ran


def _out_of_waits(waits: dict[int, tuple[np.ndarray, np.ndarray]], lines: np.ndarray, s: np.ndarray, e: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The union, disjoint and sorted (ps), of the silences [``s``, ``e``) less each one's thread's traced OS waits
    (``waits``: :func:`_waits_of`): the launcher's time the ledger books, as :func:`_ran_in` counts it per silence."""
    out_s, out_e = [s[:0]], [e[:0]]
    for line in sorted_unique(lines).tolist():
        mine = lines == line
        a, b = s[mine], e[mine]
        if line in waits:
            a, b = subtract_intervals(a, b, *waits[line])
        out_s.append(np.asarray(a, np.int64))
        out_e.append(np.asarray(b, np.int64))
    return union_intervals(np.concatenate(out_s), np.concatenate(out_e))


def _reach_into(s: np.ndarray, e: np.ndarray, windows: np.ndarray) -> np.ndarray:
    """Bool per stretch [``s``, ``e``) (ps): it overlaps one of the disjoint ``windows`` ((n, 2) ps, any order) --
    the last window starting before the stretch's end is the only one that can, and does where it ends after the
    stretch's start."""
    w = windows[np.argsort(windows[:, 0], kind="stable")].astype(np.int64, copy=False)
    j = np.searchsorted(w[:, 0], e, side="left") - 1
    return (j >= 0) & (w[np.maximum(j, 0), 1] > s)


def _bare_launcher_calls(ctx: Context, g, named: np.ndarray) -> np.ndarray:  # noqa: ANN001 - a context.GpuCtx
    """The host calls (sorted indices) that launched GPU ``g``'s work in a kept step, that the framework reads as a
    launcher's (``named``), made outside every op and range of their thread (the step's own bounds aside:
    :func:`_recorded`), on a thread where the capture records the framework's dispatch above the runtime (an op, a
    compiled region) -- where it does not (an Nsight export of PyTorch without ``emit_nvtx``, a Kineto capture with
    CUDA activity only), every launch is outside an op and none is told apart.  The runtime's own calls are no such
    record: a ``torch.compile``d call profiled with ``activities=[ProfilerActivity.CUDA]`` keeps only them, and its
    Inductor launches (``cuLaunchKernel``, ``triton_poi_fused_*``) were read as a Python launcher's, whose fix told
    torch.compile again (Aldo-Zhang/CS521-mp2-private ``induction_trace.json``, h37-inuse63).

    "Outside" is by nesting (``Encloser(nested=True)``): a launch inside the program's ``record_function`` range
    after an op inside it returned (its output's ``aten::empty``) is the range's -- the latest-starting event before
    it had ended, and every such launch read as bare (h37-probe47y: all 24 kept launches of
    ``write_python_launcher(ranged=True)``; only the silence's floor, 0 us inside the open range, kept them out)."""
    h = ctx.h
    launched = g.launch[(g.launch >= 0) & (g.step >= 0)]
    calls = sorted_unique(launched.astype(np.int64))
    calls = calls[named[calls]]
    if not calls.size:
        return calls
    runtime = h.name_mask(devices.is_runtime_call)
    dispatching = sorted_unique(h.line[h.name_mask(ctx.fw.dispatch_event) & ~runtime].astype(np.int64))
    calls = calls[np.isin(h.line[calls].astype(np.int64), dispatching)]
    if not calls.size:
        return calls
    mask, _ = _recorded(ctx, calls)
    outer = mask & ~runtime
    return calls[Encloser(h, outer, nested=True).find(calls) < 0]


def _silence_before(h, recorded: tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None],  # noqa: ANN001
                    calls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per call (host event indices): (the end of the last thing its thread recorded before it -- an event of
    ``recorded`` or a Python span starting earlier --, the call's start), int64 ps; an empty stretch ends where it
    starts.  The thread's first call has no start before it but the earliest time: the ledger keeps only the steps."""
    mask, py = recorded
    at = h.start[calls].astype(np.int64)
    begin = np.full(calls.size, np.iinfo(np.int64).min, dtype=np.int64)
    lines = h.line[calls].astype(np.int64)
    for line in sorted_unique(lines):
        on = np.flatnonzero(mask & (h.line == line))
        s, e = h.start[on].astype(np.int64), h.end[on].astype(np.int64)
        if py is not None:
            s, e = np.concatenate([s, py[0]]), np.concatenate([e, py[1]])
        order = np.argsort(s, kind="stable")
        s, last_end = s[order], np.maximum.accumulate(e[order])
        mine = lines == line
        j = np.searchsorted(s, at[mine], side="left") - 1
        begin[mine] = np.where(j >= 0, last_end[np.maximum(j, 0)], begin[mine])
    return np.minimum(begin, at), at
