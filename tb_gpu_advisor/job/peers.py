"""The job's other processes seen from one trace: where they paid one-time costs, on this trace's clock.

A job that writes each rank into its own folder (``tensorboard_trace_handler(f"{logdir}/rank{rank}")``) is read one
rank at a time; a collective of this rank that runs while a peer loads a module or compiles waits for that peer's
start-up (``metrics.context.Context.peer_one_time_spans``).  Where the peers' files count on this trace's clock (one
machine's processes, ``Layout.same_clock``), their one-time spans are carried here as ns on that clock
(:func:`one_time_ns`) and placed on this trace's timeline (:func:`placed`).  Two machines' clocks are not one, so
nothing is placed across them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import numpy as np

from tb_gpu_advisor.common.fmt import ms, pct
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.devices.codes import KIND_COLLECTIVE
from tb_gpu_advisor.job.phase import PS_PER_MS, STARTING, TEAR_DOWN, OneTime
from tb_gpu_advisor.model.columns import subtract_intervals, union_intervals
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
    cs, ce = [], []
    for d in tables:
        sel = d.kind == KIND_COLLECTIVE
        if sel.any():
            cs.append(d.start[sel].astype(np.int64))
            ce.append(d.end[sel].astype(np.int64))
    if not cs:
        return spans
    return subtract_intervals(spans[0].astype(np.int64), spans[1].astype(np.int64), np.concatenate(cs),
                              np.concatenate(ce))


def one_time_ns(trace: Trace, spans: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """``spans`` (a peer trace's one-time costs, ``OneTime.spans``: ps on its timeline) as ns on the clock its file
    counts on (``Trace.clock_ns``), less the times the peer was inside a collective (:func:`not_entered`); none where
    the trace states no clock."""
    if trace.clock_ns is None or not spans[0].size:
        return _NONE
    spans = not_entered(spans, trace.devices)
    if not spans[0].size:
        return _NONE
    s = spans[0].astype(np.int64) // 1000 + int(trace.clock_ns)
    e = -(-spans[1].astype(np.int64) // 1000) + int(trace.clock_ns)
    return s, e


def joined(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Several peers' spans (ns) as one disjoint set, the :data:`MAX_SPANS` longest kept."""
    parts = [p for p in parts if p[0].size]
    if not parts:
        return _NONE
    s, e = union_intervals(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))
    if s.size > MAX_SPANS:
        keep = np.sort(np.argsort(s - e, kind="stable")[:MAX_SPANS])
        s, e = s[keep], e[keep]
    return s, e


def placed(trace: Trace, spans_ns: tuple[np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray] | None:
    """The peers' one-time spans (ns on the shared clock, :func:`one_time_ns`) on ``trace``'s timeline (ps), cut to
    its events' span; None where ``trace`` states no clock or none falls inside it."""
    if spans_ns is None or not spans_ns[0].size or trace.clock_ns is None or trace.span_ps is None:
        return None
    s = (spans_ns[0].astype(np.int64) - int(trace.clock_ns)) * 1000
    e = (spans_ns[1].astype(np.int64) - int(trace.clock_ns)) * 1000
    lo, hi = trace.span_ps
    s, e = np.maximum(s, lo), np.minimum(e, hi)
    keep = e > s
    return (s[keep], e[keep]) if keep.any() else None


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
