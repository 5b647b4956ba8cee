"""The job's other processes seen from one trace: where they paid one-time costs, on this trace's clock.

A job that writes each rank into its own folder (``tensorboard_trace_handler(f"{logdir}/rank{rank}")``) is read one
rank at a time; a collective of this rank that runs while a peer loads a module or compiles waits for that peer's
start-up (``metrics.context.Context.peer_one_time_spans``).  Where the peers' files count on this trace's clock (one
machine's processes, ``Layout.same_clock``), their one-time spans are carried here as ns on that clock
(:func:`one_time_ns`) and placed on this trace's timeline (:func:`placed`), with the peers' collective calls
(:func:`of_peer`, :func:`placed_calls`): a rank that entered a collective a peer had not entered waits for that
peer, whatever its own host does meanwhile (:func:`own_not_entered`).  Both come from the one read of each peer's file
that gives its one-time spans.  Two machines' clocks are not one, so nothing is placed across them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import numpy as np

from tb_gpu_advisor.common.fmt import ms, pct
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.devices.codes import KIND_COLLECTIVE
from tb_gpu_advisor.job.phase import PS_PER_MS, STARTING, TEAR_DOWN, OneTime
from tb_gpu_advisor.model.columns import intersect_intervals, subtract_intervals, union_intervals
from tb_gpu_advisor.model.trace import Trace


#: At most this many one-time spans of the peers are carried (the longest first): a start-up is a few spans a process
#: (module loads, compiles, the context's creation); a capture of thousands is held by its longest.
MAX_SPANS = 4096

_NONE = (np.zeros(0, np.int64), np.zeros(0, np.int64))


def not_entered(spans: tuple[np.ndarray, np.ndarray], tables: Iterable) -> tuple[np.ndarray, np.ndarray]:
    """A peer's one-time ``spans`` (ps) that another rank's collective can wait through: those less the times the
    peer's own GPUs (``tables``: its ``DeviceEvents``) run a collective -- it had entered it.  The ranks of a group
    leave a collective together, so one whose GPU is already inside it is not what the others wait for: a rank that
    enters after it waits for whoever enters last, though the peer's host meanwhile loads a module (the peer launched
    its side, then paid its one-time cost; ``synthetic.torchtrace.write_late_peer_through_load``, h37-ranks60)."""
    if not spans[0].size:
        return spans
    cs, ce = inside_collectives(tables)
    if not cs.size:
        return spans
    return subtract_intervals(spans[0].astype(np.int64), spans[1].astype(np.int64), cs, ce)


def inside_collectives(tables: Iterable) -> tuple[np.ndarray, np.ndarray]:
    """The times (ps, disjoint) any of ``tables`` (``DeviceEvents``) runs a collective."""
    cs, ce = [], []
    for d in tables:
        sel = d.kind == KIND_COLLECTIVE
        if sel.any():
            cs.append(d.start[sel].astype(np.int64))
            ce.append(d.end[sel].astype(np.int64))
    if not cs:
        return _NONE
    return union_intervals(np.concatenate(cs), np.concatenate(ce))


def own_not_entered(spans: tuple[np.ndarray, np.ndarray], own: Iterable,
                    all_in: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """A rank's OWN one-time ``spans`` (ps) that its collectives can wait through, where its peers' entries are known
    (``all_in``: the times every peer in the rank's call is inside that same call, :func:`entered_with`, ps on this
    trace's timeline; ``own``: the rank's ``DeviceEvents`` tables): those less the times its own GPU runs a collective
    the peers have not all entered -- it had entered, and waits for that peer (whose own spans, :func:`not_entered`, say
    whether it was starting), not for its own host.  Where every peer is inside the collective too, nobody is late:
    the ranks' hosts loading at once hold it (a module load stalls the process's runtime; ykcai-daniel/torch-compile-
    moe's ranks both load while both run their all-to-all, h37-ranks57), so that time stays the own span's.  Why
    (h37-phase60b): rank 0 of ``synthetic.torchtrace.write_late_peer_through_load`` entered its all-to-all, then loaded
    for 12 ms; its 4.5 ms wait for ranks 1 and 2's compute read as its start-up.  The peers' entries are the same
    whether their GPUs are in this trace (``Context.waited_start_up``) or read from their own files on its clock
    (:func:`of_peer`, ``Job.peer_calls``), so one capture and rank folders read a rank alike (h37-phase61)."""
    if not spans[0].size:
        return spans
    cs, ce = inside_collectives(own)
    if not cs.size:
        return spans
    s, e = spans[0].astype(np.int64), spans[1].astype(np.int64)
    both = intersect_intervals(cs, ce, all_in[0].astype(np.int64), all_in[1].astype(np.int64))
    held = intersect_intervals(s, e, *both)
    rest = not_entered(spans, own)
    return union_intervals(np.concatenate([rest[0].astype(np.int64), held[0]]),
                           np.concatenate([rest[1].astype(np.int64), held[1]]))


def calls_of(tables: Iterable) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each of ``tables`` (``DeviceEvents``) that runs collectives: its collective kernels' (starts, ends), ps, in
    start order -- each call apart, for :func:`entered_with` to match."""
    out = []
    for d in tables:
        sel = d.kind == KIND_COLLECTIVE
        if sel.any():
            s, e = d.start[sel].astype(np.int64), d.end[sel].astype(np.int64)
            o = np.argsort(s, kind="stable")
            out.append((s[o], e[o]))
    return out


def entered_with(own: tuple[np.ndarray, np.ndarray],
                 peers: Iterable[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray] | None:
    """The times (disjoint, ps) each of the rank's collective calls (``own``: :func:`calls_of` of its GPU) runs while
    every peer in that call (``peers``: each a GPU's calls, on the same timeline) is inside the SAME call: a peer's
    call is the rank's where the two end together -- the ranks of a group leave a collective together, so their ends
    differ by less than the shorter call lasts (the collectives matcher's test, ``metrics.comm.paired_calls``).  A
    peer with no such call is in no group of that call and is left out of it; a call no peer matches is held whole
    (its entries not known).  None where no peer runs a collective.

    Why not "inside any collective" (h37-phase61 *Left* 1): ``tp_rtx4090_two_ranks``' rank 0 entered its AllGather
    at 97.74 ms (its shared clock) while rank 1 was still finishing its ReduceScatter, until 97.98, and entered the
    AllGather at 98.07: 0.33 ms of waiting for rank 1, of which "any collective" read 0.09."""
    peers = [p for p in peers if p[0].size]
    if not peers:
        return None
    s, e = own[0].astype(np.int64), own[1].astype(np.int64)
    lo, hi = s.copy(), e.copy()
    for ps_, pe in peers:
        order = np.argsort(pe, kind="stable")
        ps_, pe = ps_[order].astype(np.int64), pe[order].astype(np.int64)
        j = np.clip(np.searchsorted(pe, e), 1, pe.size) - 1  # the peer's calls ending just before and after each
        k = np.minimum(j + 1, pe.size - 1)
        j = np.where(np.abs(pe[k] - e) < np.abs(pe[j] - e), k, j)
        shortest = np.minimum(e - s, pe[j] - ps_[j])
        same = np.abs(pe[j] - e) <= shortest
        lo = np.where(same, np.maximum(lo, ps_[j]), lo)
        hi = np.where(same, np.minimum(hi, pe[j]), hi)
    keep = hi > lo
    if not keep.any():
        return _NONE
    return union_intervals(lo[keep], hi[keep])


@dataclasses.dataclass(frozen=True)
class PeerView:
    """What one peer's file tells a rank analysed from its own folder, ns on the clock the file counts on:
    ``one_time``, its one-time spans a collective can wait through (:func:`not_entered`); ``calls``, each of its GPUs'
    collective calls (:func:`calls_of`), which :func:`entered_with` matches to the rank's own."""

    one_time: tuple[np.ndarray, np.ndarray]
    calls: tuple[tuple[np.ndarray, np.ndarray], ...] = ()


def of_peer(trace: Trace, spans: tuple[np.ndarray, np.ndarray]) -> PeerView:
    """A peer's trace with its one-time ``spans`` (``OneTime.spans``, ps) as the others read it (:class:`PeerView`,
    ns on ``trace.clock_ns``): both from the one read of its file that gives its spans; nothing where the trace
    states no clock."""
    if trace.clock_ns is None:
        return PeerView(_NONE)
    return PeerView(one_time_ns(trace, spans), tuple(_ns(trace, c) for c in calls_of(trace.devices)))


def _ns(trace: Trace, spans: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """ps on ``trace``'s timeline as ns on its clock (starts down, ends up)."""
    return (spans[0].astype(np.int64) // 1000 + int(trace.clock_ns),
            -(-spans[1].astype(np.int64) // 1000) + int(trace.clock_ns))


def one_time_ns(trace: Trace, spans: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """``spans`` (a peer trace's one-time costs, ``OneTime.spans``: ps on its timeline) as ns on the clock its file
    counts on (``Trace.clock_ns``), less the times the peer was inside a collective (:func:`not_entered`); none where
    the trace states no clock."""
    if trace.clock_ns is None or not spans[0].size:
        return _NONE
    spans = not_entered(spans, trace.devices)
    return _ns(trace, spans) if spans[0].size else _NONE


def joined(parts: list[PeerView]) -> PeerView | None:
    """Several peers' readings (:func:`of_peer`) as one: their one-time spans (ns) as one disjoint set, the
    :data:`MAX_SPANS` longest kept, and every peer GPU's collective calls; None where no peer has either."""
    spans = [p.one_time for p in parts if p.one_time[0].size]
    calls = tuple(c for p in parts for c in p.calls)
    if not spans and not calls:
        return None
    s, e = _NONE
    if spans:
        s, e = union_intervals(np.concatenate([p[0] for p in spans]), np.concatenate([p[1] for p in spans]))
    if s.size > MAX_SPANS:
        keep = np.sort(np.argsort(s - e, kind="stable")[:MAX_SPANS])
        s, e = s[keep], e[keep]
    return PeerView((s, e), calls)


def placed(trace: Trace, spans_ns: tuple[np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray] | None:
    """The peers' one-time spans (ns on the shared clock, :func:`one_time_ns`) on ``trace``'s timeline (ps), cut to
    its events' span; None where ``trace`` states no clock or none falls inside it."""
    if spans_ns is None or not spans_ns[0].size or trace.clock_ns is None or trace.span_ps is None:
        return None
    s, e = _ps(trace, spans_ns)
    lo, hi = trace.span_ps
    s, e = np.maximum(s, lo), np.minimum(e, hi)
    keep = e > s
    return (s[keep], e[keep]) if keep.any() else None


def placed_calls(trace: Trace, view: PeerView | None) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The peers' GPUs' collective calls (``PeerView.calls``, ns on the shared clock) on ``trace``'s timeline (ps),
    uncut; none where no peer runs a collective or ``trace`` states no clock -- their entries are not known."""
    if view is None or trace.clock_ns is None:
        return ()
    return tuple(_ps(trace, c) for c in view.calls)


def _ps(trace: Trace, spans_ns: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """ns on the shared clock as ps on ``trace``'s timeline."""
    return ((spans_ns[0].astype(np.int64) - int(trace.clock_ns)) * 1000,
            (spans_ns[1].astype(np.int64) - int(trace.clock_ns)) * 1000)


def with_peers(phase: OneTime, peers: tuple[np.ndarray, np.ndarray] | None, trace: Trace) -> OneTime:
    """``phase`` (this process's one-time costs, ``job.phase``) as the job's window has it once the peers' one-time
    spans placed on this trace (:func:`placed`) are counted with its own: a window in which a peer loads or compiles
    is a cold start of the job, though this process paid none itself (its collectives wait through them).  Only a
    phase that reads less starting than that changes; its own costs (``calls``, ``start``, ``total_ms``) stay its own.
    A tear-down window stays the exit's."""
    if peers is None or phase.phase == TEAR_DOWN or trace.span_ps is None:
        return phase
    s, e = union_intervals(np.concatenate([phase.start.astype(np.int64), peers[0]]),
                           np.concatenate([phase.end.astype(np.int64), peers[1]]))
    total = float((e - s).sum()) / PS_PER_MS
    window = float(trace.span_ps[1] - trace.span_ps[0]) / PS_PER_MS
    share = total / window if window > 0 else 0.0
    said = ("warm-up" if share >= T("job.warmup_share") else
            "mixed" if share >= T("job.one_time_min_share") else "steady")
    order = ("steady", *reversed(STARTING))
    if said not in order or phase.phase not in order or order.index(said) <= order.index(phase.phase):
        return phase
    peer_ms = float((peers[1] - peers[0]).sum()) / PS_PER_MS
    lead = "a cold start" if said == "warm-up" else "some one-time costs"
    own = f"; its own: {phase.evidence}" if phase.phase in STARTING else ""
    return dataclasses.replace(phase, phase=said, evidence=(
        f"{lead} of the job: its other processes on this machine (their own files, on this trace's clock) are inside "
        f"their one-time costs for {ms(peer_ms)} of this window{own}; {ms(total)}, {pct(share, 0)} of the "
        f"{ms(window)} window"))
