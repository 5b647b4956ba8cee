"""Communication per collective type: calls, time and the part of it no compute overlaps (exposed), per step.

A collective kernel's type comes from its name (NCCL, RCCL, XLA, TF spellings: ``devices.collective_type``) or,
where the name does not say (NCCL/RCCL ``ncclDevKernel_Generic``), from the host op that launched it
(``nccl:all_reduce``, ``c10d::allreduce_``).  Exposed time is collective time on a GPU during which no compute
kernel of that GPU runs, on any stream: the time the step pays for communication.  Collectives hidden behind
compute (DDP buckets overlapped with the backward pass) cost the step nothing.  On several GPUs of one host, a
type's transfer time is the least any GPU spends in it, call by call (:func:`matched_transfer_ps`): the rest is
waiting for the GPU that enters it last.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.devices.collectives import ROOTED_TYPES
from tb_gpu_advisor.frameworks import xla
from tb_gpu_advisor.metrics.context import PS_PER_MS, Context, Encloser, GpuCtx
from tb_gpu_advisor.metrics.types import CollectiveStat, Communication
from tb_gpu_advisor.model.columns import count_between, subtract_intervals, union_intervals
from tb_gpu_advisor.model.trace import DeviceEvents, HostEvents

UNKNOWN = "collective"  # a collective whose type neither its name nor its host op tells


def communication(ctx: Context, paced: dict | None = None) -> Communication:
    """Each collective type's calls, time, exposed time and transfer per step and GPU, host-wide and per GPU (with
    each GPU's calls, for matching them across host files).  ``paced``: per GPU, the ledger's idle between small
    collectives launched one by one (``iv["comm_launch"]``), booked to the type of the call after each stretch."""
    n = ctx.steps.count
    active = ctx.active
    if not n or not active:
        return Communication()
    h = ctx.h
    enc = _host_collectives(h)
    tally = _Tally(recorded=_recording_ops(ctx))
    for g in active:
        _tally_gpu(ctx, g, tally, enc, (paced or {}).get(g.d.gpu))
    # the transfer: a collective ends on every GPU together, so the GPU that enters it last spends least time in it --
    # call by call where the GPUs' calls pair up, else the least total; the others' extra time is waiting for that GPU
    # (gpu_imbalance, launch_skew)
    every = {t for t, v in tally.per_gpu.items() if len(v) == len(active)}
    paired = {t: paired_calls(tally.seqs[t], rooted=str(t) in ROOTED_TYPES) for t in every}
    matched = {t: (float(p[1].sum()) if p is not None else None) for t, p in paired.items()}
    transfer = {t: (ctx.per_step(matched[t] / PS_PER_MS if matched.get(t) is not None else min(v), shared=False) if t in every else 0.0)
                for t, v in tally.per_gpu.items()}
    # the same over each call's whole time (a rate's time per call), in the same pairing
    whole = {t: (ctx.per_step(whole_least_ps(tally.seqs[t], paired[t][0]) / PS_PER_MS if paired.get(t) is not None
                              else min(v), shared=False) if t in every else 0.0) for t, v in tally.whole_gpu.items()}
    _gpu_calls(ctx, tally, paired, matched, whole)
    # host-wide: per step and rank; a GPU's own row and the transfer (the GPU that enters last): that GPU's, per step
    rows = [CollectiveStat(type=str(t), calls_per_step=ctx.per_step(tally.calls[t]), ms_per_step=ctx.per_step(tally.total[t]),
                           exposed_ms_per_step=ctx.per_step(tally.exposed[t]), transfer_ms_per_step=transfer[t],
                           whole_transfer_ms_per_step=whole[t], groups_per_step=ctx.per_step(tally.groups[t]), **_message(tally.sizes.get(t, []), ctx.trace.world_size),
                           process_groups=sorted(tally.labels.get(str(t), ())), calls_before=tally.before.get(t, 0),
                           paced_ms_per_step=ctx.per_step(tally.paced.get(t, 0.0)),
                           paced_calls_per_step=ctx.per_step(tally.paced_calls.get(t, 0)))
            for t in sorted(tally.total, key=lambda t: -tally.exposed[t])]
    return Communication(ms_per_step=ctx.per_step(sum(tally.total.values())), exposed_ms_per_step=ctx.per_step(tally.all_exposed),
                         by_type=rows, per_gpu=tally.gpu_rows,
                         arrivals=arrivals(ctx, tally, paired, [g.d.gpu for g in active]))


def in_windows(g: GpuCtx, sel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The device events ``sel`` of a GPU (indices) clipped to its kept steps' windows: (starts, ends), ps, one per
    event (an event wholly outside them: start == end).

    Why clipped, as the ledger is (``breakdown.attribute`` paints each window's time): a collective is assigned to
    the step it starts in, but may run long past it -- all-reduces queued on their own stream that nothing waits for
    run behind the steps (2.2 ms each in a step of 0.7 ms): their whole time per step was more than the step.  A
    collective's time per step is its time inside the steps."""
    s = g.d.start[sel].astype(np.int64, copy=False)
    e = g.d.end[sel].astype(np.int64, copy=False)
    w = np.asarray(g.windows, dtype=np.int64).reshape(-1, 2)
    if not s.size or not w.shape[0]:
        return s, np.minimum(e, s) if not w.shape[0] else e
    ws, we = union_intervals(w[:, 0], w[:, 1])
    # the window each event starts in (or the next one): its end is cut at that window's end when the next window
    # does not touch it; the windows are disjoint and sorted after the union
    i = np.clip(np.searchsorted(we, s, side="right"), 0, ws.size - 1)
    cs = np.clip(s, ws[i], we[i])
    ce = np.clip(e, cs, we[i])
    return cs, ce


def ran_into_steps(g: GpuCtx, mask: np.ndarray) -> np.ndarray:
    """The device events ``mask`` of a GPU that start outside its kept steps and run into them (indices): a collective
    queued in a dropped step that runs on into the first kept one.  The ledger paints their time inside the steps
    (``breakdown.attribute``) as it paints the calls' that start there, so every table of their time counts it too:
    a queued all-reduce from the dropped first step read 0.51 ms of exposed communication a step in the ranks table
    and 0.36 ms in the collectives table (h37-randjobs3)."""
    out = np.flatnonzero(mask & (g.step < 0))
    if not out.size:
        return out
    cs, ce = in_windows(g, out)
    return out[ce > cs]


@dataclass
class _Tally:
    """Each collective type's calls and times summed over the host's active GPUs, and what each GPU's calls need to
    be paired across GPUs afterwards.  Why one value: every GPU adds to the same per-type sums, and the process
    groups are one numbering (``codes``) for all the host's GPUs."""
    #: the host ops that recorded a collective's message size or process group (None: none did)
    recorded: Encloser | None
    calls: dict[str, float] = field(default_factory=dict)
    total: dict[str, float] = field(default_factory=dict)
    exposed: dict[str, float] = field(default_factory=dict)
    groups: dict[str, float] = field(default_factory=dict)
    #: calls that started before the kept steps and run into them (:func:`ran_into_steps`): time counted, call not
    before: dict[str, int] = field(default_factory=dict)
    #: the (bytes, group size) of each call whose size is known
    sizes: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    #: the process groups each type ran in
    labels: dict[str, set[str]] = field(default_factory=dict)
    #: each active GPU's time in the type (0 where it runs none)
    per_gpu: dict[str, list[float]] = field(default_factory=dict)
    #: the same over each call's whole time (not clipped to the kept steps' windows)
    whole_gpu: dict[str, list[float]] = field(default_factory=dict)
    #: each GPU's calls: (step, start, end, process group code or -1)
    seqs: dict[str, list[tuple]] = field(default_factory=dict)
    #: process group label -> its code, one numbering for the host's GPUs
    codes: dict[str, int] = field(default_factory=dict)
    #: (GPU, type) -> each call's group label, step, bytes
    keys: dict[tuple[int, str], tuple[list, list, list]] = field(default_factory=dict)
    #: (GPU, type) -> its entry in seqs[type]
    row_at: dict[tuple[int, str], int] = field(default_factory=dict)
    gpu_rows: dict[int, list[CollectiveStat]] = field(default_factory=dict)
    all_exposed: float = 0.0
    #: ms of the ledger's idle between small calls launched one by one, by the type of the call after it
    paced: dict[str, float] = field(default_factory=dict)
    #: the calls those stretches precede
    paced_calls: dict[str, int] = field(default_factory=dict)
    #: per GPU, its other work's launch ends and the latest end of the work launched by then (:func:`ready_ps`), made
    #: once for all its collective types
    done: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)


def _recording_ops(ctx: Context) -> Encloser | None:
    """The encloser of the host ops that recorded a collective's message size or process group (PyTorch's
    ``record_param_comms``), None where none did: a call's bytes and group are read from the op that launched it.

    Asked by nesting (:class:`Encloser`'s ``nested``): an uneven all-gather records its message, then its coalesced
    ``_broadcast_oop`` calls record theirs and return, and the group launches after them -- inside the outer record
    only, which the latest-starting record (an inner one, ended) hid: the call read no bytes and no group
    (h37-probe50c)."""
    h = ctx.h
    with_msg = np.zeros(len(h), dtype=bool)
    for known in (ctx.trace.collective_messages, ctx.trace.collective_groups, ctx.trace.collective_members):
        if known:
            with_msg[list(known)] = True
    return Encloser(h, with_msg, nested=True) if with_msg.any() else None


def _tally_gpu(ctx: Context, g: GpuCtx, tally: _Tally, enc: Callable[[], Encloser | None],
               paced: tuple[np.ndarray, np.ndarray] | None = None) -> None:
    """Add one GPU's collectives in the kept steps to the tally, type by type, measured against the union of its
    compute kernels: a collective's time no kernel of its GPU overlaps is what the step pays for it.  ``paced``: the
    ledger's idle between this GPU's small collectives launched one by one, booked to the call after each stretch."""
    d = g.d
    coll = np.flatnonzero((d.kind == devices.KIND_COLLECTIVE) & (g.step >= 0))
    before = ran_into_steps(g, d.kind == devices.KIND_COLLECTIVE)
    if not coll.size and not before.size:
        return
    comp = (d.kind == devices.KIND_KERNEL) & (g.step >= 0)
    cs, ce = union_intervals(d.start[comp].astype(np.int64, copy=False), d.end[comp].astype(np.int64, copy=False))
    once = ctx.waited_start_up(g)  # its own process's and its peers' one-time costs (h37-ranks57, h37-ranks58)
    if once is not None:
        # the time its process is inside a one-time cost is the start-up's, as the ledger books it
        # (``breakdown.category_intervals``): a collective waits through it, exposing no communication (h37-ranks57)
        cs, ce = union_intervals(np.concatenate([cs, once[0].astype(np.int64)]),
                                 np.concatenate([ce, once[1].astype(np.int64)]))
    comp_starts = np.sort(d.start[comp].astype(np.int64, copy=False), kind="stable")  # by start already: timsort's one pass
    types = _types(d, coll, g.launch, enc, ctx.h)
    early = _types(d, before, g.launch, enc, ctx.h) if before.size else types[:0]
    xla_msg = _xla_messages(d, ctx.trace.xla_collectives)
    es, ee = subtract_intervals(*in_windows(g, np.concatenate([coll, before])), cs, ce)
    tally.all_exposed += float((ee - es).sum()) / PS_PER_MS
    paced_ms: dict[str, float] = {}
    if paced is not None and paced[0].size and coll.size:
        o = np.argsort(d.start[coll], kind="stable")
        nxt = np.clip(np.searchsorted(d.start[coll][o], paced[1], side="left"), 0, coll.size - 1)
        of = types[o][nxt]
        dur = (paced[1] - paced[0]).astype(np.float64) / PS_PER_MS
        for t in np.unique(of):
            paced_ms[str(t)] = float(dur[of == t].sum())
            tally.paced[str(t)] = tally.paced.get(str(t), 0.0) + paced_ms[str(t)]
            tally.paced_calls[str(t)] = tally.paced_calls.get(str(t), 0) + int(np.unique(nxt[of == t]).size)
    for t in np.unique(np.concatenate([types, early])):
        _tally_type(ctx, g, t, coll[types == t], tally, xla_msg, (cs, ce), comp_starts, before[early == t])
        if str(t) in paced_ms:
            row = tally.gpu_rows[d.gpu][-1]
            row.paced_ms_per_step = ctx.per_step(paced_ms[str(t)], shared=False)
            row.paced_calls_per_step = ctx.per_step(int(np.unique(nxt[of == t]).size), shared=False)


def _tally_type(ctx: Context, g: GpuCtx, t: str, sel: np.ndarray, tally: _Tally, xla_msg: list | None,
                compute: tuple[np.ndarray, np.ndarray], comp_starts: np.ndarray,
                before: np.ndarray | None = None) -> None:
    """Add one GPU's calls of one type (``sel``): their count, sizes, groups, runs, time and exposed time, and the
    GPU's row of the type with its calls kept for pairing.  ``before``: calls of the type that started before the kept
    steps and run into them (:func:`ran_into_steps`): their time inside the steps is the type's, as the ledger's; the
    calls are counted where they start."""
    d = g.d
    tally.calls[t] = tally.calls.get(t, 0.0) + sel.size
    n_before = int(before.size) if before is not None else 0
    tally.before[t] = tally.before.get(t, 0) + n_before
    pg, nbytes, found, members = _recorded(ctx, g, t, sel, tally)
    names = {c: lab for lab, c in tally.codes.items()}
    tally.keys[(d.gpu, str(t))] = ([names.get(int(c), "") for c in pg.tolist()],
                                   np.asarray(ctx.steps.ids, dtype=np.int64)[g.step[sel]].tolist(), nbytes.tolist())
    if xla_msg is not None:  # XLA: the kernel's HLO op, sized from the module's HLO (formats/xplane/hlo.py)
        ops = d.op_idx[sel]
        found += [xla_msg[int(i)] for i in ops[ops >= 0].tolist() if xla_msg[int(i)] is not None]
    tally.sizes.setdefault(t, []).extend(found)
    runs = _groups(d.start[sel].astype(np.int64, copy=False), g.step[sel], comp_starts)
    tally.groups[t] = tally.groups.get(t, 0.0) + runs
    clip_s, clip_e = in_windows(g, sel)
    early_s, early_e = in_windows(g, before) if before is not None and before.size else (clip_s[:0], clip_e[:0])
    t_ms = float((clip_e - clip_s).sum() + (early_e - early_s).sum()) / PS_PER_MS
    tally.total[t] = tally.total.get(t, 0.0) + t_ms
    tally.per_gpu.setdefault(t, []).append(t_ms)
    whole_ms = float((d.end[sel] - d.start[sel]).sum()) / PS_PER_MS
    tally.whole_gpu.setdefault(t, []).append(whole_ms)
    tally.seqs.setdefault(t, []).append((g.step[sel], d.start[sel], d.end[sel], pg, clip_e - clip_s,
                                         ready_ps(ctx.h, g, sel, tally.done)))
    tally.row_at[(d.gpu, str(t))] = len(tally.seqs[t]) - 1
    ts, te = subtract_intervals(np.concatenate([clip_s, early_s]), np.concatenate([clip_e, early_e]), *compute)
    e_ms = float((te - ts).sum()) / PS_PER_MS
    tally.exposed[t] = tally.exposed.get(t, 0.0) + e_ms
    tally.gpu_rows.setdefault(d.gpu, []).append(CollectiveStat(type=str(t), calls_per_step=ctx.per_step(sel.size, shared=False),
                                                               ms_per_step=ctx.per_step(t_ms, shared=False),
                                                               exposed_ms_per_step=ctx.per_step(e_ms, shared=False),
                                                               transfer_ms_per_step=ctx.per_step(t_ms, shared=False),
                                                               whole_transfer_ms_per_step=ctx.per_step(whole_ms, shared=False),
                                                               groups_per_step=ctx.per_step(runs, shared=False),
                                                               calls_before=n_before, group_ranks=members,
                                                               **_message(found, ctx.trace.world_size)))


def ready_ps(h: HostEvents, g: GpuCtx, sel: np.ndarray,
             done: dict[int, tuple[np.ndarray, np.ndarray]] | None = None) -> np.ndarray:
    """Per collective call ``sel`` of a GPU: when that GPU was ready to enter it (ps) -- the end of the host call
    that launched it, or later the end of the GPU's other work (compute, copies) launched before that call (the
    stream event the collective waits on), never after the call's own start; its start where no launch is recorded.

    Why: a GPU's arrival at a collective is its kernel's start, but a call queued behind the one before on its
    communicator's stream starts when that one ends -- late by whoever was late there, not by itself.  What a fix of
    the late GPU gives back is what the step keeps once the others enter each call when *they* are ready
    (:func:`step_gain`): their host ran ahead, their GPU still had its own work to do (h37-late67: the others'
    waits summed 1.8 ms a step where the late rank keeping pace gains 1.2 ms -- their next compute ran inside the
    wait and comes back on the path)."""
    start = g.d.start[sel].astype(np.int64, copy=False)
    launch = g.launch[sel]
    out = start.copy()
    has = launch >= 0
    if not has.any():
        return out
    host_end = h.end[launch[has]].astype(np.int64)
    lt, last = _launched_work(h, g, done)
    ready = host_end
    if lt.size:
        i = np.searchsorted(lt, host_end, side="right") - 1
        ready = np.maximum(host_end, np.where(i >= 0, last[np.clip(i, 0, None)], host_end))
    out[has] = np.minimum(start[has], ready)
    return out


def _launched_work(h: HostEvents, g: GpuCtx, done: dict | None) -> tuple[np.ndarray, np.ndarray]:
    """A GPU's work other than collectives by the end of its launching call: (those ends, sorted; the latest end of
    the work launched by each), kept in ``done`` per GPU."""
    if done is not None and g.d.gpu in done:
        return done[g.d.gpu]
    d = g.d
    other = np.flatnonzero((d.kind != devices.KIND_COLLECTIVE) & (g.launch >= 0))
    lt = h.end[g.launch[other]].astype(np.int64)
    o = np.argsort(lt, kind="stable")
    out = (lt[o], np.maximum.accumulate(d.end[other][o].astype(np.int64)) if other.size else lt[:0])
    if done is not None:
        done[d.gpu] = out
    return out


def step_calls(step: np.ndarray) -> list[np.ndarray]:
    """The calls of each step: for each distinct value of ``step`` (ascending) the indices of its calls, ascending --
    what ``np.flatnonzero(step == st)`` reads for each ``st`` of ``np.unique(step)``, from one stable sort.

    Why: the replay (:func:`step_gain`, ``JobView.replay_gain_ms``) walks step by step, and a scan of every call for
    each step costs steps x calls (up to ``CALL_ROWS_CAP`` calls a type, hundreds of steps); a stable sort keeps each
    step's calls in their order, so ties read as the scan read them."""
    step = np.asarray(step)
    order = np.argsort(step, kind="stable")
    cuts = np.flatnonzero(step[order][1:] != step[order][:-1]) + 1
    return np.split(order, cuts) if order.size else []


def step_gain(s: np.ndarray, e: np.ndarray, r: np.ndarray, step: np.ndarray, late: int,
              by_step: list[np.ndarray] | None = None) -> np.ndarray:
    """Per call (paired across the GPUs: rows GPUs, columns calls; ``s`` starts, ``e`` ends, ``r`` readiness by
    :func:`ready_ps`, ``step`` each call's step) the step time given back where GPU ``late`` keeps pace: booked to
    the step's last call, 0 elsewhere (ps).  Each step's calls replayed in their order with the late GPU ready as
    soon as the last of the others: a call starts when the others are ready and the call before it has ended (one
    communicator's stream runs its calls in turn) and lasts its transfer (the least time a GPU spends in it); the
    gain is the step's last end less the replayed one, at most the sum of the least other GPU's wait over the calls.

    Why not the waits' sum: a GPU waiting in a call has its next work (the next bucket's compute, its host's
    launches) run inside that wait, and with the late GPU on time that work is back on the path -- the sum claimed
    2.57 ms of a step that gains 1.80 (h37-late67, ``write_late_rank_fused`` at 30/60 us a launch).  No part exceeds
    its whole: the wait of a call is at most the lateness that reaches the step's end.  ``by_step``: the calls of
    each step as :func:`step_calls` groups ``step``, where the caller has them already."""
    out = np.zeros(s.shape[1], dtype=np.float64)
    others = np.delete(np.arange(s.shape[0]), late)
    if not others.size:
        return out
    last, r_o = s.max(axis=0), r[others].max(axis=0)
    least_wait = np.clip(last - s[others].max(axis=0), 0, None)
    transfer = (e - s).min(axis=0)
    for calls in step_calls(step) if by_step is None else by_step:
        cols = calls[np.argsort(last[calls], kind="stable")]  # the step's calls in the order they ran
        prev = None
        replayed = []
        for c in cols.tolist():
            begin = r_o[c] if prev is None else max(r_o[c], prev)
            prev = begin + transfer[c]
            replayed.append(prev)
        gain = float(e[:, cols].max()) - max(replayed)
        out[cols[-1]] = min(max(0.0, gain), float(least_wait[cols].sum()))
    return out


def _recorded(ctx: Context, g: GpuCtx, t: str, sel: np.ndarray,
              tally: _Tally) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]], list[int] | None]:
    """Per call of one type (``sel``): the code of the process group and the bytes its launching op recorded (-1:
    none), the (bytes, group size) of the calls whose op recorded a message, and the job's global ranks of every
    process group the calls ran in (``Trace.collective_members``), None where a call's op records none (or no call
    is launched by an op): the type's process groups are added to the tally.  Why from the op: the kernel carries
    none of these."""
    msgs, pgs, held = ctx.trace.collective_messages, ctx.trace.collective_groups, ctx.trace.collective_members
    found: list[tuple[int, int]] = []
    pg = np.full(sel.size, -1, np.int64)
    nbytes = np.full(sel.size, -1, np.int64)
    members: list[int] | None = None
    if tally.recorded is not None:
        launch = g.launch[sel]
        has = launch >= 0
        got = tally.recorded.find(launch[has])
        pg[has] = [_group_code(pgs.get(int(o)), tally.codes) if o >= 0 else -1 for o in got.tolist()]
        nbytes[has] = [msgs[int(o)][0] if o >= 0 and int(o) in msgs else -1 for o in got.tolist()]
        ops = [int(o) for o in got if o >= 0]
        found = [msgs[o] for o in ops if o in msgs]
        tally.labels.setdefault(str(t), set()).update(pgs[o][0] for o in ops if o in pgs and pgs[o][0])
        if sel.size and has.all() and len(ops) == sel.size and all(o in held for o in ops):
            members = sorted({x for o in ops for x in held[o]})
    return pg, nbytes, found, members


def _gpu_calls(ctx: Context, tally: _Tally, paired: dict, matched: dict, whole: dict) -> None:
    """Each GPU's transfer and calls: the host's where its calls pair up with the other GPUs', else its own -- so a
    session can match a call across host files by its group, step and bytes."""
    for gpu, rows_ in tally.gpu_rows.items():
        first = _first_ends(tally, gpu, [c.type for c in rows_])
        for c in rows_:
            p = paired.get(c.type)
            if matched.get(c.type) is not None:
                c.transfer_ms_per_step = ctx.per_step(matched[c.type] / PS_PER_MS, shared=False)
                c.whole_transfer_ms_per_step = whole[c.type]
            i = tally.row_at[(gpu, c.type)]
            c.calls = _call_rows(tally.keys[(gpu, c.type)], tally.seqs[c.type][i], p, i)
            c.call_times = _call_times(tally.seqs[c.type][i], _row_order(tally.keys[(gpu, c.type)],
                                                                          tally.seqs[c.type][i], p, i), first)


def _first_ends(tally: _Tally, gpu: int, types: list[str]) -> dict[int, int]:
    """A GPU's first collective end in each step (its step index -> ps), over all its collective types: the instant
    its calls' ends are read after (:func:`_call_times`).  Why the first end: every rank leaves a collective together,
    so that instant is one on every rank that pairs the step's calls -- a clock the host files share."""
    out: dict[int, int] = {}
    for t in types:
        seq = tally.seqs[t][tally.row_at[(gpu, t)]]
        for st, e in zip(np.asarray(seq[0]).tolist(), np.asarray(seq[2], dtype=np.int64).tolist()):
            out[st] = min(out.get(st, e), e)
    return out


def _call_times(own: tuple, order: np.ndarray, first: dict[int, int]) -> list[tuple[float, float, float]]:
    """A GPU's calls of a type in ``order`` as ``CollectiveStat.call_times``: (arrive, ready, at) ms -- its end less
    its start, less its readiness (``ready_ps``), and less the GPU's first collective end of its step."""
    step, start, end, ready = own[0], own[1], own[2], own[5]
    e = np.asarray(end, dtype=np.int64)[order]
    arrive = (e - np.asarray(start, dtype=np.int64)[order]) / PS_PER_MS
    rdy = (e - np.asarray(ready, dtype=np.int64)[order]) / PS_PER_MS
    at = (e - np.array([first[int(x)] for x in np.asarray(step)[order].tolist()], dtype=np.int64)) / PS_PER_MS
    return list(zip(arrive.tolist(), rdy.tolist(), at.tolist()))


def _row_order(keys: tuple[list, list, list], own: tuple, paired: tuple | None, row: int) -> np.ndarray:
    """The order :func:`_call_rows` lists a GPU's calls in: the pairing's where the host's GPUs pair them, else
    (group, step, start)."""
    if paired is not None:
        return paired[0][row]
    labels = keys[0]
    codes = {lab: i for i, lab in enumerate(sorted(set(labels)))}
    return np.lexsort((own[1], own[0], np.array([codes[x] for x in labels], np.int64)))


def arrivals(ctx: Context, tally: _Tally, paired: dict, gpus: list[int]) -> dict | None:
    """Who enters the host's collectives last, call by call: each call paired across the GPUs (:func:`paired_calls`:
    by process group and order within it in each step), each GPU's arrival its kernel's start (one host: one clock),
    the last arrival the call's; each GPU's wait in it the time from its own arrival to the last one, up to its own end
    (a root that leaves a broadcast early waits no longer).  Returns {"gpu": the GPU last in most calls, "calls",
    "last_in": {gpu: calls it entered last}, "wait_ms": {gpu: its wait per step}, "lag_ms": the late GPU's arrival
    behind the median other's, per step, over the calls it entered last, "gain_ms": the step time given back per step
    where that GPU keeps pace (:func:`step_gain`: at most the others' wait, less their own work that ran inside it)};
    None where no type's calls pair up.

    Why: a collective ends on every GPU together, so an early GPU's time in it is waiting for the last one -- its
    cause is the late GPU's own work before the call, not the link (issue #37 class 3: each wait belongs to its cause;
    h37-straggle66: the fused MI300X DDP's ranks 0-2 wait 11-13 ms a step in their all-reduces for rank 3)."""
    starts, ends, ready, steps = [], [], [], []
    for t, p in sorted(paired.items()):
        rows = [tally.row_at.get((g, str(t))) for g in gpus]
        if p is None or any(r is None for r in rows):
            continue
        seq, o = tally.seqs[t], p[0]
        starts.append(np.vstack([seq[r][1][o[r]] for r in rows]).astype(np.int64))
        ends.append(np.vstack([seq[r][2][o[r]] for r in rows]).astype(np.int64))
        ready.append(np.vstack([seq[r][5][o[r]] for r in rows]).astype(np.int64))
        steps.append(np.asarray(seq[rows[0]][0][o[rows[0]]], dtype=np.int64))
    if not starts or len(gpus) < 2:
        return None
    s, e = np.hstack(starts), np.hstack(ends)
    if not s.shape[1]:
        return None
    last = s.max(axis=0)
    # up to its own end; one that left before the last arrived (a broadcast's root, once it has sent) waited for none
    wait = np.where(e < last, 0, np.clip(np.minimum(e, last) - s, 0, None))
    who = s.argmax(axis=0)
    counts = np.bincount(who, minlength=len(gpus))
    late = int(counts.argmax())
    others = np.delete(s, late, axis=0)
    mine = who == late
    lag = float((last[mine] - np.median(others[:, mine], axis=0)).sum()) if mine.any() else 0.0
    def per(ps: float) -> float:  # ps over the kept steps -> ms a step
        return ctx.per_step(ps / PS_PER_MS, shared=False)
    gain = step_gain(s, e, np.hstack(ready), np.hstack(steps), late)
    return {"gpu": gpus[late], "calls": int(s.shape[1]), "last_in": {g: int(c) for g, c in zip(gpus, counts.tolist())},
            "wait_ms": {g: per(float(w)) for g, w in zip(gpus, wait.sum(axis=1).tolist())}, "lag_ms": per(lag),
            "gain_ms": per(float(gain.sum()))}


def transfer_ms(totals: list[float], calls: list[tuple]) -> float:
    """A collective type's transfer on a host's GPUs, ms over the kept steps: the least time any GPU spends in each call,
    summed over the calls (:func:`matched_transfer_ps`); where the calls do not pair up, the least GPU's total."""
    m = matched_transfer_ps(calls)
    return m / PS_PER_MS if m is not None else min(totals)


def _group_code(group: tuple[str | None, int | None] | None, codes: dict[str, int]) -> int:
    """The code of a collective op's process group label (``collective_groups``' first value), -1 where none."""
    label = group[0] if group else None
    return codes.setdefault(label, len(codes)) if label else -1


def call_groups(ctx: Context, g, sel: np.ndarray, codes: dict[str, int]) -> np.ndarray:  # noqa: ANN001 - a GpuCtx
    """Per device event ``sel`` of a GPU: the code of the process group its launching collective op recorded
    (``codes`` numbers the labels for all the host's GPUs), -1 where none is recorded; the op is the innermost one
    still open at the launch, as :func:`_recording_ops` asks."""
    pgs = ctx.trace.collective_groups
    out = np.full(sel.size, -1, np.int64)
    if not pgs or not sel.size:
        return out
    h = ctx.h
    mask = np.zeros(len(h), dtype=bool)
    mask[list(pgs)] = True
    launch = g.launch[sel]
    has = launch >= 0
    got = Encloser(h, mask, nested=True).find(launch[has])
    out[has] = [_group_code(pgs.get(int(o)), codes) if o >= 0 else -1 for o in got.tolist()]
    return out


def matched_transfer_ps(calls: list[tuple]) -> float | None:
    """The sum over one collective type's calls of the least time any GPU spends in that call (ps), the calls matched
    across GPUs by their process group and their order within it in each step; None where they do not pair up.

    ``calls``: per GPU, (step, start, end[, process group code]) of its calls of the type in the kept steps (code -1:
    none recorded).  Why call by call: every GPU of a collective leaves it together, so in each call the GPU that
    enters last spends only the transfer in it and the others wait for it; the least GPU's *total* is the transfer
    only where one GPU is last in every call -- where the last one changes from step to step (data-dependent work, a
    random straggler), each GPU's total holds the waits of the calls it was early for, and the least total counted
    them as transfer.  Every rank of a process group issues that group's collectives in one order (NCCL requires it),
    but two groups' calls may interleave differently on each rank (FSDP's shard and replicate groups, tensor and data
    parallelism, each on its own stream): so where every call names its process group, the k-th call of a group in a
    step is one collective on every GPU; where none does, the k-th call of the step.  The pairing holds where the GPUs
    run as many calls of each group in each step and each pair's ends fall within the call's least time (one
    collective ends together; two calls that end further apart are two collectives).  Otherwise None: the caller
    keeps the least total."""
    p = paired_calls(calls)
    return float(p[1].sum()) if p is not None else None


def paired_calls(calls: list[tuple], rooted: bool = False) -> tuple[list[np.ndarray], np.ndarray] | None:
    """:func:`matched_transfer_ps`'s pairing: (per GPU, the order of its calls that pairs them; the least time in
    each paired call, ps), by process group where every call names one and that pairs them, else by the step's order;
    None where neither pairs them.  ``rooted``: a collective whose ranks leave as their part is done
    (``devices.collectives.ROOTED_TYPES``): paired by order alone, its ends need not fall together."""
    if len(calls) < 2:
        return None
    if all(len(c) > 3 and c[3].size and (c[3] >= 0).all() for c in calls):
        p = _paired(calls, by_group=True, rooted=rooted)
        if p is not None:
            return p
    return _paired(calls, by_group=False, rooted=rooted)


def whole_least_ps(calls: list[tuple], orders: list[np.ndarray]) -> float:
    """The sum over paired calls (``orders``: :func:`paired_calls`' per-GPU orders of ``calls``) of the least whole
    time (end less start, not clipped to the kept steps) any GPU spends in each, ps.  Why from the pairing already
    made: the pairing rests on each call's group, step, start and whole end, none of which clipping changes -- the
    calls were paired a second time over their whole times alone, to the same orders (review, session 68)."""
    whole = np.vstack([(c[2][o] - c[1][o]).astype(np.int64, copy=False) for c, o in zip(calls, orders)])
    return float(whole.min(axis=0).sum())


def _paired(calls: list[tuple], by_group: bool, rooted: bool = False) -> tuple[list[np.ndarray], np.ndarray] | None:
    """The pairing by (group, step, start) order or by (step, start) order, where it holds.  Why ``rooted``: a
    broadcast's root returns once it has sent, and a rank once its data is in and passed on -- a small one reaches
    ranks 1-2 and they leave before rank 3 enters; the ends' test read each broadcast as several collectives, and no
    broadcast was paired (h37-late67: the fused MI300X DDP's 2 a step).  Each rank's wait is then up to its own end
    (:func:`arrivals`): a rank that leaves early waits no longer."""
    keyed, orders = [], []
    for c in calls:
        step, start, end = c[0], c[1], c[2]
        group = c[3] if by_group else np.zeros(step.size, np.int64)
        o = np.lexsort((start, step, group))
        orders.append(o)
        s_, e_ = start[o].astype(np.int64, copy=False), end[o].astype(np.int64, copy=False)
        # a call's time inside the kept steps (``in_windows``) where given, else its whole time
        keyed.append((np.stack([group[o], step[o]]), s_, e_,
                      np.asarray(c[4], dtype=np.int64)[o] if len(c) > 4 else e_ - s_))
    k0 = keyed[0][0]
    if not k0.shape[1] or any(k[0].shape != k0.shape or not np.array_equal(k[0], k0) for k in keyed[1:]):
        return None
    durs = np.vstack([e - b for _, b, e, _ in keyed])
    ends = np.vstack([e for _, _, e, _ in keyed])
    if not rooted and np.any(ends.max(axis=0) - ends.min(axis=0) > durs.min(axis=0)):
        return None
    return orders, np.vstack([k[3] for k in keyed]).min(axis=0)


def _call_rows(keys: tuple[list, list, list], own: tuple, paired: tuple | None,
               row: int) -> list[tuple[str, int, int, float]]:
    """A GPU's calls of a type as ``CollectiveStat.calls``: (group, step, bytes, transfer ms) in (group, step, start)
    order -- the host's least in each call where its GPUs' calls pair up (``row``: the GPU's entry in the pairing),
    else the GPU's own time."""
    labels, steps, nbytes = keys
    start, end = own[1], own[2]
    order = _row_order(keys, own, paired, row)
    if paired is not None:
        ms = (paired[1] / PS_PER_MS).tolist()
    else:
        dur = np.asarray(own[4], dtype=np.int64) if len(own) > 4 else (end - start).astype(np.int64)
        ms = (dur[order] / PS_PER_MS).tolist()
    o = order.tolist()
    return [(labels[i], int(steps[i]), int(nbytes[i]), float(x)) for i, x in zip(o, ms)]


def _xla_messages(d, sized: dict[str, tuple[int, int]]) -> list | None:  # noqa: ANN001 - DeviceEvents
    """Per op text of a GPU: the (bytes, group size) of the XLA collective it names (``<module>/<op>``), else None;
    None for the whole GPU when the capture sized no XLA collective."""
    if not sized:
        return None
    return [sized.get(xla.module_op(t)) for t in d.op_text]


def _message(found: list[tuple[int, int]], world: int | None) -> dict:
    """Mean message bytes per call and the group size (the messages', else the job's world size).

    The mean, not the median: bus bandwidth is these bytes over the transfer time per call, so it must be the bytes
    the calls moved in that time.  A step's two all-reduces of 1.5 MB and 1.8 GB (a real TorchRec rank) have the
    larger as their upper median, which doubled the bandwidth past what the links can carry."""
    if not found:
        return {}
    groups = [x[1] for x in found if x[1] > 0]
    group = max(set(groups), key=groups.count) if groups else world
    return {"bytes_per_call": float(round(sum(x[0] for x in found) / len(found))), "group_size": group}


def _groups(starts: np.ndarray, step: np.ndarray, comp_starts: np.ndarray) -> int:
    """Runs of calls of one type with no compute kernel starting between two of them, within a step: calls of one
    run could be one packed call (DDP buckets issued back to back); a call after compute that consumed the last
    one's result (tensor parallelism's all-reduce after each GEMM) starts a run of its own."""
    o = np.argsort(starts, kind="stable")
    s, st = starts[o], step[o]
    if s.size == 0:
        return 0
    between = count_between(comp_starts, s[:-1], s[1:])
    return 1 + int(((between > 0) | (st[1:] != st[:-1])).sum())


def _host_collectives(h) -> Callable[[], Encloser | None]:  # noqa: ANN001 - HostEvents
    """The encloser of the host's collective ops (None: the host names none), built at the first ask and kept.

    Why lazily: it classifies every distinct host name (17 regex searches each), and only a collective kernel whose
    name does not tell its type asks for it.  An Nsight export names each NVTX step apart (``train_step N``: 235 k
    names on 1 GB), where that classification took 2-3 s of a report with no collective at all (issue #38).

    Nested: the op still open around the launch, not the latest-starting one -- a coalesced group's kernel
    (``ncclDevKernel_Generic``, no type in its name) launches inside ``c10d::allgather_`` after its inner
    ``nccl:_broadcast_oop`` calls returned, and read as no op's: "collective" (h37-probe50c)."""
    built: list[Encloser | None] = []

    def encloser() -> Encloser | None:
        if not built:
            named = h.name_mask(lambda x: devices.collective_type(x) is not None) if len(h) else np.zeros(0, bool)
            built.append(Encloser(h, named, nested=True) if named.any() else None)
        return built[0]
    return encloser


def _types(d, idx: np.ndarray, launch: np.ndarray, encloser: Callable[[], Encloser | None],  # noqa: ANN001
           h) -> np.ndarray:
    """Collective type per device event ``idx``: by kernel name, else by the enclosing host collective op -- which
    also wins over a point-to-point kernel (NCCL before 2.19 runs all-to-all as ``ncclKernel_SendRecv``)."""
    by_name = np.array([devices.collective_type(x) or "" for x in d.names], dtype=object)
    out = by_name[d.name[idx]]
    miss = ((out == "") | (out == "SendRecv")) & (launch[idx] >= 0)
    enc = encloser() if miss.any() else None
    if enc is not None:
        op = enc.find(launch[idx][miss])
        by_op = [devices.collective_type(h.names[int(h.name[o])]) or "" if o >= 0 else "" for o in op]
        where = np.flatnonzero(miss)
        out[where] = [t or out[i] for i, t in zip(where, by_op)]
    _type_inherited_like_peers(d, idx, launch, out, encloser, h)
    _type_by_op_text(d, idx, out)
    out[out == ""] = UNKNOWN
    return out.astype(str)


def _type_by_op_text(d: DeviceEvents, idx: np.ndarray, out: np.ndarray) -> None:
    """Type in place (``out``) each call of ``idx`` still untyped by the op its reader gave it (``op_text``: a
    c10d range drawn on the GPU, ``nccl:broadcast``, where no host op is held; formats/kineto/adapter
    ``_in_collective_ranges``)."""
    miss = np.flatnonzero(out == "")
    if not miss.size or not d.op_text:
        return
    by_op = [devices.collective_type(t) or "" if t else "" for t in d.op_text]
    ops = d.op_idx[idx[miss]]
    out[miss] = [by_op[int(o)] if o >= 0 else "" for o in ops]


def _type_inherited_like_peers(d: DeviceEvents, idx: np.ndarray, launch: np.ndarray, out: np.ndarray,
                               encloser: Callable[[], Encloser | None], h: HostEvents) -> None:
    """Type in place (``out``) each call of ``idx`` launched before the window -- no call of the window carries its
    correlation id, so no op tells its type -- whose name gives none or a point-to-point one, like the calls of the
    same kernel name and launch configuration on the same stream of this GPU that an op did type, where those all
    agree.  Why the configuration too: one NCCL stream runs an all-to-all and an all-reduce as the same
    ``ncclKernel_SendRecv``, told apart by their grids (2-3 blocks and 16 in ``torchrec_a100_stalls``).

    The wrong assumption mended: *a kernel's collective type is known only from its own call*.  NCCL runs an
    all-reduce as ``ncclKernel_SendRecv`` on a stream of its own; the window's first step inherits the step before's
    (``torchrec_a100_stalls``: 23.8 ms, typed SendRecv while every later launch of that kernel on that stream is an
    ``c10d::allreduce_``'s), which moved a fifth of the AllReduce row's time into SendRecv's.  Peers that disagree
    (one stream serving two ops) leave the name's type: nothing says which one it was."""
    orphan = ((out == "") | (out == "SendRecv")) & (launch[idx] < 0)
    if not orphan.any():
        return
    cfg = d.launch_cfg if d.launch_cfg.size == len(d.start) else np.full(len(d.start), -1)

    def key(i: int) -> tuple[int, int, int]:
        return int(d.name[i]), int(d.stream[i]), int(cfg[i])
    keys = {key(i) for i in idx[orphan]}
    peers = np.flatnonzero((d.kind == devices.KIND_COLLECTIVE) & (launch >= 0))
    peers = peers[[key(i) in keys for i in peers]]
    if not peers.size:
        return
    seen: dict[tuple[int, int, int], set[str]] = {}
    for i, t in zip(peers, _types(d, peers, launch, encloser, h)):
        seen.setdefault(key(i), set()).add(str(t))
    for k in np.flatnonzero(orphan):
        told = seen.get(key(idx[k]), set())
        if len(told) == 1 and UNKNOWN not in told:
            out[k] = next(iter(told))
