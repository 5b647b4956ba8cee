"""Non-overlapping step-time breakdown per GPU and step, and the gaps between steps.

Every instant of a step window is given exactly one category, the first of
``PRIORITY`` that is active at that instant on that GPU (see docs/metrics.md).
Vectorized: all interval boundaries of one GPU form elementary segments;
each category's coverage of the segment midpoints is a searchsorted count.
"""

from __future__ import annotations

import dataclasses
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.devices.codes import mangled_template_head
from tb_gpu_advisor.frameworks import user_ranges, xla
from tb_gpu_advisor.job.waits import managed_reads
from tb_gpu_advisor.metrics.context import (DISPATCH_BIT, HOST_WORK_BIT, PS_PER_MS, PS_PER_US, Context, GpuCtx, distinct_ids,
                                            frames_named, last_starts, lead_frames, loop_frames)
from tb_gpu_advisor.metrics.flops import gemm_events
from tb_gpu_advisor.metrics.types import (BREAKDOWN_CATEGORIES, MANAGED_READ, Breakdown, Gaps, Handoff, StepGap, StepMetrics,
                                          Submission, per_step)
from tb_gpu_advisor.model.columns import add_intervals, count_between, coverage, intersect_intervals, reduce_at, sorted_unique, subtract_intervals, time_within, union_intervals
from tb_gpu_advisor.model.trace import OFF_CPU

#: Highest first.  GPU activity beats host activity; exposed copies are copies no kernel overlaps.
PRIORITY: tuple[str, ...] = (
    "device_compute",
    "collectives",
    "memcpy_d2d",
    "memset",
    "copy_startup",
    "memcpy_d2h",
    "memcpy_h2d",
    "kernel_switch",
    "startup",
    "stream_handoff",
    "unseen",
    "comm_launch",
    "comm_wait",
    "profiler",
    "allocator",
    "input_wait",
    "async_stall",
    "managed_read",
    "host_compute",
    "launch_wait",
    "runtime_call",
    "host_python",
)
#: Painted categories booked as another (the host running Python outside any op is host work too, but below launch
#: wait: a Python span encloses the launches it makes; the host stalled in an asynchronous call that waits for nothing
#: is its own time in the runtime, above launch wait: no dispatch cost, see :func:`category_intervals`).
_BOOKED_AS = {"host_python": "host_compute", "comm_launch": "collectives", "comm_wait": "collectives",
              "copy_startup": "startup", "async_stall": "host_compute", "runtime_call": "host_compute"}
_CAT_INDEX = {c: i for i, c in enumerate(BREAKDOWN_CATEGORIES)}
_CAT_INDEX.update({c: _CAT_INDEX[b] for c, b in _BOOKED_AS.items()})


def launch_ends(ctx: Context, g: GpuCtx) -> np.ndarray | None:
    """Per device event of ``g``: the end of its host launch call (meaningful where ``g.launch >= 0``); None without
    host events.  A gather through 2 M host events that :func:`category_intervals` and :func:`gpu_critical_ms` both
    read: :func:`gpu_step_arrays` makes it once for the two."""
    h = ctx.h
    return h.end[np.clip(g.launch, 0, None)] if h.end.size else None


def category_intervals(ctx: Context, g: GpuCtx, lend_all: np.ndarray | None = None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``lend_all``: :func:`launch_ends` of ``g`` where the caller has it."""
    d, h = g.d, ctx.h
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    present = set(distinct_ids(d.kind).tolist())
    for c, kinds in _DEVICE_KINDS.items():
        out[c] = _of_kinds(d, kinds, present)
    for c, iv in copies_holding_launcher(ctx, g).items():  # a copy-only GPU's copies that held this GPU's launcher
        out[c] = _cat2(out[c], iv)
    anyway = off_path_uploads(ctx, g)
    if anyway[0].size:  # an upload run while the GPU waited for the host anyway is the host's idle, not copy time
        out["memcpy_h2d"] = subtract_intervals(*(x.astype(np.int64, copy=False) for x in out["memcpy_h2d"]), *anyway)
    out["startup"] = ctx.one_time_spans(g) or (d.start[:0], d.start[:0])
    held = ctx.waited_start_up(g) if out["collectives"][0].size else None
    if held is not None:
        # a collective running while its own process is inside a one-time cost waits through that start-up (every
        # rank loads the same modules at the same moment): the job stage reads it so (``job.phase``: a collective
        # through a slow launch is no work filling the queue), and so does the ledger -- booked once, as the start-up,
        # never also as communication that overlap could hide (``metrics.comm`` reads its exposed time so;
        # h37-ranks57); so is one running while a peer process of the trace is inside its one-time cost: it waits for
        # that peer's start-up, the job's (h37-ranks58)
        coll = tuple(x.astype(np.int64, copy=False) for x in out["collectives"])
        waits = intersect_intervals(*coll, *held)
        if waits[0].size:
            out["startup"] = union_intervals(np.concatenate([out["startup"][0].astype(np.int64), waits[0]]),
                                             np.concatenate([out["startup"][1].astype(np.int64), waits[1]]))
            out["collectives"] = subtract_intervals(*coll, *held)
    out["copy_startup"] = copies_under_one_time_calls(ctx, g)
    unseen = ctx.unseen_spans(g)
    out["unseen"] = unseen or (d.start[:0], d.start[:0])
    out["allocator"] = ctx.alloc_spans(g) or (d.start[:0], d.start[:0])
    # the host stalled for milliseconds in an asynchronous call that waits for no GPU work (a fill, a pinned copy;
    # ``job.phase.async_stalls``): its own time in the runtime -- no unseen work, and no launch's dispatch cost, which
    # the same call pays in microseconds elsewhere: booked as host work, above the launch wait its fill would read
    out["async_stall"] = ctx.stall_spans(g) or (d.start[:0], d.start[:0])
    hm = g.host_mask  # a GPU of its own process: only that process's host events explain its idle time
    out["input_wait"] = ctx.input_wait_parts(g)
    # the program's thread waiting for the profiler's own work (a buffer request inside an op, a fetch, an allocator
    # call): the capture's cost, booked once here above every host category, so no finding claims it
    out["profiler"] = profiler_spans(ctx, g)
    # the launching thread asleep in a read of managed memory the GPU wrote (its page fault): the reads' own category,
    # above the host's work and launches -- a thread off its CPU runs no code, whatever op or range spans it
    out["managed_read"] = managed_read_spans(ctx, g)
    # launch wait (idle waiting for launch): the GPU idle gap before a device event, from the end of
    # everything earlier on this GPU to the event's start, when the event's host launch record ended
    # after that earlier work had finished (the GPU drained its queue and waited for the host), and
    # both belong to the same step.  Input wait, higher in PRIORITY, takes precedence.
    # Frameworks whose dispatch the capture names (JAX) measure it directly below: there an idle gap
    # before a kernel is only launch wait while the host is inside the dispatch.
    # a launch's return read against its work's start says what the GPU held -- only where the two clocks agree
    returns_read = bool(h.end.size) and not clocks_disagree(ctx, g)
    out["launch_wait"] = out["kernel_switch"] = (d.start[:0], d.start[:0])
    out["stream_handoff"] = _no_handoffs(d)
    if len(d) and (returns_read or not ctx.fw.has_dispatch):
        if lend_all is None and h.end.size:
            lend_all = launch_ends(ctx, g)
        lw, held, lead, first = _idle_before(d, g.step, g.launch, lend_all if h.end.size else None, g.windows,
                                             returns_read, _process_opened(ctx, g))
        sub = submission(ctx, g, lend_all) if returns_read and lend_all is not None else None
        if sub is not None and sub.latency:  # holds within the driver's submission latency are the host's pace
            held, lead, out["submission"] = _past_submission(d, lend_all, held, lead, sub.cap_us * PS_PER_US)
        if not ctx.fw.has_dispatch:  # a framework whose dispatch the capture names measures the launch wait itself
            out["launch_wait"] = _cat2(lw, _lead_in_own_call(ctx, g, lend_all) if h.end.size and returns_read else None)
        # the idle the GPU holds work in: its own switching where short, held work where long -- one rule whatever
        # measures the launch wait, between kernels and before a step's first work alike
        graph_us = devices.graph_switch_us(d.info.name, d.info.compute_capability)
        held, switch = split_switches(*held[:2], _switch_floors(d, g.launch, held[2], graph_us))
        lead, lead_switch = split_switches(*lead[:2], _switch_floors(d, g.launch, lead[2], graph_us))
        if unseen:  # before a step's first work, the host waiting in a sync on GPU work the file lacks says
            lead = subtract_intervals(*(x.astype(np.int64, copy=False) for x in lead), *unseen)  # more
        held = _cat2(held, lead)
        if held[0].size:  # while a GPU of the same process runs, the GPU may wait on that work: the turn-taking's
            held = _off_peers(ctx, g, held)
        out["held"], out["kernel_switch"] = held, _cat2(switch, lead_switch)
        out["stream_handoff"] = handoff_spans(g, held, lend_all) if returns_read else _no_handoffs(d)
        out["queued_first"] = first if not _fresh_gpu(ctx, g) else (d.start[:0], d.start[:0])
    for k in ("held", "queued_first"):
        if k in out and out[k][0].size:
            # the GPU idle while holding work launched and submitted: work it could run, outside the capture's
            out["unseen"] = _cat2(out["unseen"], out[k])  # no category of PRIORITY: painted as unseen, measured apart
    # the launching thread waiting in the OS (off the CPU, or blocked in a read or a poll) dispatches nothing: that
    # stretch of a late launch is a wait for something outside the capture, not launch overhead (h37-paced)
    waiting = _launchers_waits(ctx, g)
    if waiting is not None and out["launch_wait"][0].size:
        out["launch_wait"] = subtract_intervals(out["launch_wait"][0].astype(np.int64, copy=False),
                                                out["launch_wait"][1].astype(np.int64, copy=False), *waiting)
    # nor is a millisecond of it in which the launching threads record nothing: they run code the profiler did not see
    silent = _launchers_silent(ctx, g) if out["launch_wait"][0].size else None
    if silent is not None:
        lw_s, lw_e = (x.astype(np.int64, copy=False) for x in out["launch_wait"])
        out["launch_wait"] = subtract_intervals(lw_s, lw_e, *_long_overlaps(lw_s, lw_e, *silent))
        # and the shorter silences outside the launch calls: the host's own code before a late launch -- a program's
        # own computation where no framework dispatches its ops, booked as the host's unrecorded time (``other``)
        out["own_code"] = own_code_spans(ctx, g, out["launch_wait"], silent, lend_all)
        if ctx.fw.own_code_between_launches and out["own_code"][0].size:
            out["launch_wait"] = subtract_intervals(*(x.astype(np.int64, copy=False) for x in out["launch_wait"]),
                                                    *out["own_code"])
    # and the GPU idle while the host is inside the graph launch of the GPU's next kernels: whatever else the host
    # is in (an op, a Python frame), it is submitting the GPU's next work then
    under = _under_launch_calls(ctx, g, lend_all) if returns_read else None
    if under is not None:
        out["launch_wait"] = _cat2(out["launch_wait"], under)
    # and the host inside the framework's dispatch (JAX: the GPU idles while Python dispatches the next call)
    out["launch_wait"] = _cat2(out["launch_wait"], ctx.dispatch_spans if g.dispatch_spans is None else g.dispatch_spans)
    # but the GPU idle between the calls of a run of small collectives launched one by one is the collectives' own
    # cost (their number: each call pays a launch and the library's latency), booked with them whatever the host ran
    # meanwhile -- the launching op, the loop's Python --, below only what the GPU itself holds or one-time costs
    # (:func:`paced_collective_gaps`)
    out["comm_launch"] = (d.start[:0], d.start[:0])
    paced = paced_collective_gaps(g)
    if paced is not None:
        for c in _IDLE_ABOVE_PACED:  # painted above it: its measure is what the ledger books
            if paced[0].size and out[c][0].size:
                paced = subtract_intervals(*paced, *(x.astype(np.int64, copy=False) for x in out[c]))
        out["comm_launch"] = paced
        if out["launch_wait"][0].size:
            lw_s, lw_e = (x.astype(np.int64, copy=False) for x in out["launch_wait"])
            out["launch_wait"] = subtract_intervals(lw_s, lw_e, *paced)
    # and the GPU idle inside a step while the host is in a communication library's call (``MPI_Wait`` of an
    # ``MPI_Iallreduce``, a blocking ``MPI_Allreduce``) is the step waiting for its peers: communication, whatever
    # op or range encloses the call (:func:`comm_call_spans`)
    out["comm_wait"] = comm_call_spans(ctx, g)
    out["host_python"] = _python_spans(ctx, g)
    # the host in a runtime call no op encloses (a query, an event's record, a stream's wait): recorded time, the
    # call's own -- host work, below the launch wait it may sit in (h37-ledger69)
    out["runtime_call"] = _bare_call_spans(ctx, g)
    work = ctx.role_rows(HOST_WORK_BIT, hm)
    # an op blocked in a copy or a sync (``.item()``, a D2H to pageable memory waiting for NCCL) is waiting, not work
    # and the host's own work inside a dispatch (a millisecond without a runtime call: context.no_call_stretches)
    work_s, work_e = _cat2((h.start[work], h.end[work]), ctx.own_spans if g.own_spans is None else g.own_spans)
    out["host_compute"] = subtract_intervals(work_s.astype(np.int64), work_e.astype(np.int64),
                                             *ctx.blocked_spans) if ctx.blocked_spans else (work_s, work_e)
    if under is not None:  # painted above host work: the host's op is submitting the GPU's next work then
        out["host_compute"] = subtract_intervals(*(x.astype(np.int64, copy=False) for x in out["host_compute"]), *under)
    return out


def copies_under_one_time_calls(ctx: Context, g: GpuCtx) -> tuple[np.ndarray, np.ndarray]:
    """The time (ps, disjoint sorted) of ``g``'s copies between the host and the device that ran while the thread that
    launched each was inside a one-time call other than the copy's own (``Context.one_time_calls``: a module load, a
    library's start-up, the context's creation) -- booked as start-up (``copy_startup``), above the copies.

    Why: the ledger paints a copy no kernel overlaps as copy time that blocks the GPU, assuming the GPU had compute
    it could have run instead.  While the thread that launches the work is in one-time host work, it has launched
    none: the copy overlaps the start-up, and neither pinning it nor moving it to another stream gives any of that
    time back.  ntua-el20062/gemm_spmm_a100's pipelined GEMMs (A100, Nsight 2024.2) queue 16 GB of pinned
    asynchronous uploads on a copy stream and then load cuBLAS's DGEMM module in a 726 ms ``cuKernelGetFunction``:
    726 of the uploads' 745 ms ran beneath the load, the first GEMM launched 0.1 ms after it, and the report said
    "Memory copies block the GPU 438 ms/step" with the pin + async fix the program already applies
    (h37-memsetctx31).  A copy under its own call (the context created in a ``cudaMemcpy``) stays a copy; so do the
    copies of a thread whose one-time calls hold none of them, and every copy where the clocks disagree.

    A copy that the first kernel after the call's start needs (:func:`_needed_by_next_kernel`, where the trace
    records the streams' event links) stays a copy too: that kernel would wait for it with no load at all, so it is
    the job's own upload, not start-up (h37-onepass32: of db's 726 ms load, the 388 ms of batch 0's upload beneath it
    that its first GEMM waits for; all 395 ms of ia's)."""
    empty = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    calls, d, h = ctx.one_time_calls, g.d, ctx.h
    if calls is None or not len(d) or not h.end.size or clocks_disagree(ctx, g):
        return empty
    cp = np.flatnonzero(((d.kind == devices.KIND_H2D) | (d.kind == devices.KIND_D2H)) & (g.launch >= 0))
    if not cp.size:
        return empty
    rec = g.launch[cp].astype(np.int64)
    calls = calls[~np.isin(calls, rec)]  # a copy under its own call is that call's transfer
    starts, ends = [], []
    for ln in np.intersect1d(h.line[rec], h.line[calls]).tolist():
        c = calls[h.line[calls] == ln]
        mine = cp[h.line[rec] == ln]
        cs, ce = union_intervals(h.start[c].astype(np.int64), h.end[c].astype(np.int64))
        at = np.searchsorted(ce, d.start[mine], side="right")  # the copies under some call: a few, read one by one
        under = at < ce.size
        under[under] = cs[at[under]] < d.end[mine][under]
        mine = mine[under]
        mine = mine[~_needed_by_next_kernel(ctx, g, mine, c)]
        us, ue = union_intervals(d.start[mine].astype(np.int64), d.end[mine].astype(np.int64))
        s, e = intersect_intervals(us, ue, cs, ce)
        starts.append(s)
        ends.append(e)
    if not starts:
        return empty
    return union_intervals(np.concatenate(starts), np.concatenate(ends))


def _needed_by_next_kernel(ctx: Context, g: GpuCtx, copies: np.ndarray, calls: np.ndarray) -> np.ndarray:
    """Bool per copy of ``copies`` (``g``'s event indices): whether the first kernel ``g`` runs after the start of a
    one-time call of ``calls`` that the copy ran under needs the copy -- the kernel queued after it on its stream, or
    on a stream that waits (``Trace.stream_waits``) for an event recorded on the copy's stream after it ("after": the
    call that queued it started later).  All False
    where the trace records no event links: then nothing tells a copy the kernel waits for from one that merely ran
    beneath the call (Kineto, older exports), and the copies keep today's reading, start-up.

    Why: a copy the next kernel needs blocks that kernel whether or not the host is loading a module meanwhile: the
    job's own upload (ntua-el20062/gemm_spmm_a100, A100, Nsight 2024.2: ``db``'s first GEMM waits through event 19
    for batch 0's upload, 388.4 ms of it under the 726 ms load; batch 1's, also under it, only 1.8 s later; ``fo``'s
    first GEMM the first of its 10 uploads, 21 ms of 402; ``ia``'s its one upload, all 395 ms).  The waits are
    followed along their chain (``StreamWaits.awaited``: a stream that waited on the copy's, then recorded the event
    the kernel's stream waits for); the legacy default stream's implicit order is not."""
    need = np.zeros(copies.size, bool)
    waits = ctx.trace.stream_waits
    d, h = g.d, ctx.h
    if waits is None or not copies.size:
        return need
    w = waits.get(d.gpu)
    kernels = np.flatnonzero(d.kind == devices.KIND_KERNEL)
    if not kernels.size:
        return need
    ks = d.start[kernels]
    for j, i in enumerate(copies.tolist()):
        under = calls[(h.start[calls] < d.end[i]) & (h.end[calls] > d.start[i])]
        if not under.size:
            continue
        at = int(np.searchsorted(ks, h.start[under].min()))
        if at >= kernels.size:
            continue
        k = int(kernels[at])
        if g.launch[k] < 0 or g.launch[k] == g.launch[i]:
            continue
        tk, ti = int(h.start[g.launch[k]]), int(h.start[g.launch[i]])  # when each was queued
        if ti >= tk:
            continue
        due = w.awaited(int(d.stream[k]), tk, h.start) if w is not None else {int(d.stream[k]): tk}
        need[j] = due.get(int(d.stream[i]), ti) > ti
    return need


def comm_call_spans(ctx: Context, g: GpuCtx) -> tuple[np.ndarray, np.ndarray]:
    """The host inside a communication library's calls (the ranges of its NVTX domain, Nsight's MPI trace's calls)
    on ``g``'s process, within each kept step between its first device event and its last kernel, as disjoint
    (starts, ends) ps.

    Why: a process that waits for its peers in ``MPI_Wait`` or a blocking ``MPI_Allreduce`` leaves its GPU idle, and
    no collective kernel runs to say so: the ledger booked that idle the host's own work ("host-bound", Stanford
    CME 213's ``train_mpi``, h37-survey54: 2.27 ms of each ~4 ms step in ``MPI_Wait``).  The call is the host waiting
    on other processes: booked with the collectives, the step's communication.  Why between the step's first work and
    its last kernel: the idle after the last kernel is the gap between steps, which the gap check reads with the same
    ranges (``step_gaps``: "... of it is communication"); each instant is told once.  Only a library whose calls may
    wait for the peers (``frameworks.user_ranges.waiting_communication_ranges``: MPI's): an NCCL call enqueues its
    collective and returns, so the host inside it is launching (CS336's DDP: ``ncclAllReduce`` 28 us a call in its
    backward, half of it the runtime calls that launch its kernel and order its streams; h37-mpithread).  The calls
    of the thread that launches ``g``'s work, and of another thread while every launching thread is blocked on it
    (:func:`_calls_waited_on`)."""
    empty = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    comm = waiting_calls_of(ctx, g)
    n = ctx.steps.count
    if n < 1 or not len(g.d) or not (comm.size or off_launcher_calls_of(ctx, g).size):
        return empty
    last, first = _step_edges(g, n)
    ok = (first >= 0) & (last > first)
    if not ok.any():
        return empty
    first, last = first[ok].astype(np.int64), last[ok].astype(np.int64)
    h = ctx.h
    ws, we = _calls_waited_on(ctx, g, first, last)  # a communication thread's, while the launchers block on it
    s, e = union_intervals(np.concatenate([h.start[comm].astype(np.int64), ws]),
                           np.concatenate([h.end[comm].astype(np.int64), we]))
    return intersect_intervals(s, e, first, last)


def paced_collective_gaps(g: GpuCtx) -> tuple[np.ndarray, np.ndarray] | None:
    """The GPU idle between consecutive calls of a run of small collectives launched one by one, as (starts, ends);
    None where the GPU has no such run.

    A run: consecutive collectives of one step (by start) with no compute between two of them -- at most
    ``comm.paced_kernels_between`` kernels (a loop's own scaling of each gradient), filling less of the gap than the GPU
    idles --, at least ``comm.paced_run_calls`` of them, whose median call is shorter than their median gap: the host's
    pace between the calls, not their transfers, sets the run's length.  Calls launched from the backward's hooks
    between its layers' kernels are no run: the idle there waits for the backward's launches.

    Why: a per-parameter gradient all-reduce (HTA's compiled V100 trace, ``wild/compiled_v100_param_allreduce``: 404
    one-parameter all-reduces a step after the backward, ~5 us of NCCL each, ~140 us apart) pays a launch and the
    library's latency per call; the ~60 ms a step between them was launch wait whose fixes (fusing kernels, CUDA
    graphs) do not touch it.  Its cause is the number of collectives, its fix bucketing them: booked with the
    collectives it is counted once, where communication is.  Bucketed all-reduces overlapping the backward (compute
    between them) or a few large ones back to back (each longer than the gaps) are no such run."""
    d = g.d
    need = int(T("comm.paced_run_calls"))
    coll = np.flatnonzero((d.kind == devices.KIND_COLLECTIVE) & (g.step >= 0))
    if coll.size < need:
        return None
    o = coll[np.argsort(d.start[coll], kind="stable")]
    s, e, st = d.start[o].astype(np.int64), d.end[o].astype(np.int64), g.step[o]
    gs, ge = np.maximum.accumulate(e)[:-1], s[1:]
    comp = d.kind == devices.KIND_KERNEL
    cs, ce = union_intervals(d.start[comp].astype(np.int64), d.end[comp].astype(np.int64))
    open_ = ge > gs
    busy = time_within(cs, ce, gs, np.maximum(ge, gs)) if cs.size else np.zeros(gs.shape)
    k_starts = np.sort(d.start[comp].astype(np.int64))
    between = count_between(k_starts, s[:-1], s[1:])
    linked = ((st[1:] == st[:-1]) & (between <= int(T("comm.paced_kernels_between")))
              & (~open_ | (2 * busy < ge - gs)))
    keep_s: list[np.ndarray] = []
    keep_e: list[np.ndarray] = []
    for a, b in _runs_of(linked):  # pairs a..b-1 linked: calls a..b
        if b - a + 1 < need:
            continue
        gap = open_[a:b]
        idle = (ge[a:b] - gs[a:b] - busy[a:b])[gap]
        if not idle.size or np.median(e[a:b + 1] - s[a:b + 1]) >= np.median(idle):
            continue
        keep_s.append(gs[a:b][gap])
        keep_e.append(ge[a:b][gap])
    if not keep_s:
        return None
    # the GPU's idle in them: a copy or a kernel between two calls is its own time
    return subtract_intervals(np.concatenate(keep_s), np.concatenate(keep_e), d.start.astype(np.int64, copy=False),
                              d.end.astype(np.int64, copy=False))


def _runs_of(flags: np.ndarray) -> list[tuple[int, int]]:
    """(first, end) of each maximal run of True in ``flags``."""
    if not flags.size:
        return []
    x = np.concatenate([[False], flags.astype(bool), [False]])
    edges = np.flatnonzero(x[1:] != x[:-1])
    return [(int(edges[i]), int(edges[i + 1])) for i in range(0, edges.size, 2)]


def _under_launch_calls(ctx: Context, g: GpuCtx, lend_all: np.ndarray | None) -> tuple[np.ndarray, np.ndarray] | None:
    """The GPU idle before a kernel of a kept step -- from the end of every kernel before it, or before the step's
    first, from no earlier kernel at all -- while the host is inside the CUDA graph launch (``devices.is_graph_launch``)
    that launches it, up to its return and the driver's submission (:func:`launch_wait_end`), as (starts, ends); None
    where there is none.  Painting keeps each instant to its step's window and below one-time costs (a graph's first
    launch uploading it, where ``job.phase`` reads it as one) and the work the capture does not hold.

    Why: the host is then submitting the graph's nodes, the GPU's next work, whatever op or Python frame encloses
    the call -- launch wait by what the call is.  Painted below the host's work, a graph launch's submission read
    as host compute: TriForce's decode step (survey h37-survey26), 1.59 ms of GPU idle under ``cudaGraphLaunch``
    submitting its 1,387 kernels.  One kernel's launch call is left to the framework's reading of its dispatch
    (the op around it): booked as launch wait too, an eager loop's ~10 us calls made the host-bound GPT-2 step of
    ``wild/gpt2_b200_one_step`` (8.9 ms of the host's own code) a critical launch_bound at 16%.  Before a step's
    first kernel as between two (h37-left56): the same decode step with no fill before its graph booked the 1.6 ms
    under the launch as host compute, the same call's idle read by where the step's first kernel fell."""
    d, h = g.d, ctx.h
    if not h.end.size or len(d) < 2:
        return None
    if lend_all is None:
        lend_all = launch_ends(ctx, g)
    kern = np.flatnonzero((d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE))
    if kern.size < 2:
        return None
    k_start = d.start[kern].astype(np.int64, copy=False)
    # the end of every kernel before each (none before the first: the call's start bounds it alone)
    prev_end = np.concatenate([[np.iinfo(np.int64).min], np.maximum.accumulate(d.end[kern].astype(np.int64))[:-1]])
    gap = np.flatnonzero(k_start > prev_end)
    if not gap.size:
        return None
    nxt = kern[gap]
    call = g.launch[nxt]
    ok = (call >= 0) & (d.kind[nxt] == devices.KIND_KERNEL) & (g.step[nxt] >= 0)
    if not ok.any():
        return None
    launching = h.name_mask(devices.is_graph_launch)
    c = np.clip(call, 0, None)
    ok &= launching[c]
    s = np.maximum(prev_end[gap], h.start[c].astype(np.int64))
    e = launch_wait_end(k_start[gap], lend_all[nxt].astype(np.int64))
    ok &= e > s
    if not ok.any():
        return None
    return s[ok].astype(np.int64), e[ok].astype(np.int64)


#: The most a kernel takes to start on an idle GPU once its launch call has returned (ps): the driver's submission.
#: Kernels launched onto a drained A100 start 0-10 us after the call returns (casio's nerf export: 5% of them 1 us
#: early, a fifth within 50 us).
LAUNCH_START_PS = int(50 * PS_PER_US)


def submission(ctx: Context, g: GpuCtx, lend_all: np.ndarray) -> Submission:
    """GPU ``g``'s wait from each launch call's return to its work's start, where the work started on an idle GPU
    (after every earlier work ended, past the GPU's own switch) and is its launch's first: whether those waits are one
    submission latency -- nearly every launch waits (``launch.submit_share`` of them ``launch.submit_floor_us`` or
    more), about as long (p90 at most ``launch.submit_spread`` times the median) and tens of microseconds (median up
    to ``launch.submit_max_us``) -- and the longest hold that latency explains (``launch.submit_hold_factor`` times
    its median).  Made once per GPU and analysis (``ctx.memo``).

    Why: a driver that submits in batches (Windows' WDDM, WSL2) starts every launch late on an idle GPU, whatever the
    GPU ran before: duoan/playground-cuda's RTX 5080 started 99% of 1,107 launches 23-71 us (p5-p90) after their
    calls returned, so each wait past ``LAUNCH_START_PS`` was held work, "another process's context ... takes turns"
    (881 us of each 8.87 ms step).  Another context's turns delay some launches by up to a timeslice (milliseconds),
    clustered, and leave the rest prompt: those holds stay held (h37-idle67)."""
    key = ("submission", g.d.gpu)
    if key in ctx.memo:
        return ctx.memo[key]
    out = Submission()
    d = g.d
    n = len(d)
    if n >= 2 and lend_all is not None:
        start = d.start.astype(np.int64, copy=False)
        prev_end = np.maximum.accumulate(d.end.astype(np.int64, copy=False))
        i = np.arange(1, n)
        sw = T("launch.kernel_switch_us") * PS_PER_US
        ok = ((start[i] > prev_end[:-1] + sw) & (g.launch[i] >= 0) & (g.launch[i] != g.launch[:-1])
              & (d.kind[i] != devices.KIND_COLLECTIVE))
        i = i[ok]
        wait = (start[i] - lend_all[i].astype(np.int64)) / PS_PER_US
        out = _submission_reading(wait)
        kept = g.step >= 0
        steps = int(g.windows.shape[0]) if g.windows is not None else 0
        out.launches_per_step = float(np.unique(g.launch[kept & (g.launch >= 0)]).size) / steps if steps else 0.0
        if "os_hint" not in ctx.memo:  # once per analysis, "" included: a scan of every recorded name
            ctx.memo["os_hint"] = _os_hint(ctx)
        out.os_hint = ctx.memo["os_hint"]
    ctx.memo[key] = out
    return out


def _submission_reading(wait_us: np.ndarray) -> Submission:
    """:func:`submission`'s reading of the waits (us) of the launches onto an idle GPU."""
    if wait_us.size < T("launch.submit_min_launches"):
        return Submission(launches=int(wait_us.size))
    med, p90 = (float(x) for x in np.percentile(wait_us, [50, 90]))
    share = float((wait_us >= T("launch.submit_floor_us")).mean())
    latency = (share >= T("launch.submit_share") and med <= T("launch.submit_max_us")
               and p90 <= T("launch.submit_spread") * med)
    return Submission(launches=int(wait_us.size), median_us=med, p90_us=p90, delayed_share=share, latency=latency,
                      cap_us=T("launch.submit_hold_factor") * med if latency else 0.0)


#: Paths the host's recorded names may hold that say its OS: a Windows drive (``C:\``), or a Windows drive mounted
#: into WSL2 (``/mnt/c/``).
_WINDOWS_PATH = re.compile(r"(?<![A-Za-z])[A-Za-z]:\\")
_WSL_PATH = re.compile(r"(?<![\w])/mnt/[a-z]/")


def _os_hint(ctx: Context) -> str:
    """What the host's recorded names (Python frames, ranges) say of its OS: "WSL2 paths" where one names a Windows
    drive mounted into WSL2, "Windows paths" where one names a Windows drive, "" where none does.  Why: the
    submission latency's finding names the driver model that causes it only where the capture shows the OS; a Kineto
    trace records no OS of its own (its ``deviceProperties`` say the GPU, not the host)."""
    text = "\n".join(getattr(ctx.h, "names", None) or [])  # one regex pass over every name, not one per name
    if _WSL_PATH.search(text):
        return "WSL2 paths"
    if _WINDOWS_PATH.search(text):
        return "Windows paths"
    return ""


def _past_submission(d, lend_all: np.ndarray, held: tuple, lead: tuple, cap_ps: float  # noqa: ANN001 - DeviceEvents
                     ) -> tuple[tuple, tuple, tuple[np.ndarray, np.ndarray]]:
    """``(held, lead, within)``: :func:`_idle_before`'s ``held`` and ``held_first`` (each (starts, ends, the work each
    stretch precedes)) less the stretches before works that started at most ``cap_ps`` after their launch call
    returned, and those stretches as (starts, ends).  Why: within the GPU's submission latency (:func:`submission`)
    the work had not reached the GPU: the GPU waits for the host's launches, delayed, so the host's time at that
    instant is what the ledger paints there -- not work held for a cause outside the capture."""
    out, within_s, within_e = [], [], []
    start = d.start.astype(np.int64, copy=False)
    for s, e, at in (held, lead):
        w = (start[at] - lend_all[at].astype(np.int64)) <= cap_ps if at.size else np.zeros(0, bool)
        out.append((s[~w], e[~w], at[~w]))
        within_s.append(s[w].astype(np.int64))
        within_e.append(e[w].astype(np.int64))
    return out[0], out[1], (np.concatenate(within_s), np.concatenate(within_e))


def submission_ms(g: GpuCtx, iv: dict) -> float:
    """ms of GPU ``g``'s idle inside its kept steps that its submission latency explains (``iv["submission"]`` of
    :func:`category_intervals`): holds the ledger paints as the host's time, not as held work."""
    sub = iv.get("submission")
    if sub is None or not sub[0].size:
        return 0.0
    s, e = union_intervals(sub[0], sub[1])
    a, b = _inside_steps(g, np.asarray(s, np.int64), np.asarray(e, np.int64))
    return float((b - a).sum()) / PS_PER_MS


def submission_critical(ctx: Context, g: GpuCtx, iv: dict) -> np.ndarray:
    """ps per BREAKDOWN_CATEGORIES category of GPU ``g``'s idle within its submission latency (``iv["submission"]``)
    while its process's host waits for the GPU in a sync call (``devices.is_sync_call``), inside its kept steps, as the
    ledger books it.

    Why: a launch that reaches an idle GPU late delays only the GPU's work; the host goes on to its next launch, so the
    step is no longer for it unless the host then waits for that work.  Only where the host sits in a sync while the
    work it waits for has not reached the GPU does the latency lengthen the step -- at most once per wait, the last
    late launch before it (the GPU catches up with the host between two idles).  That is the most any fix of the
    latency recovers, a part of the idle the finding names (h37-dispatch68: the submission finding stated no
    saving)."""
    out = np.zeros(len(BREAKDOWN_CATEGORIES), dtype=np.float64)
    sub, h = iv.get("submission"), ctx.h
    if sub is None or not sub[0].size or not h.end.size:
        return out
    waits = h.name_mask(devices.is_sync_call)
    if g.host_mask is not None:
        waits &= g.host_mask
    idx = np.flatnonzero(waits)
    if not idx.size:
        return out
    s, e = intersect_intervals(sub[0].astype(np.int64), sub[1].astype(np.int64),
                               h.start[idx].astype(np.int64), h.end[idx].astype(np.int64))
    return ledger_of(ctx, g, np.asarray(s, np.int64), np.asarray(e, np.int64), iv) if len(s) else out


#: The longest idle a handoff between streams takes (ps): once the work a queued kernel waits on has ended, the GPU
#: starts it within the driver's submission (:data:`LAUNCH_START_PS`).  The GRU of h37-survey66 (an RTX 5070 Ti
#: Laptop GPU, a Windows driver) took 28 us; every handoff-shaped idle of the kept Kineto traces (18 captures: A100,
#: V100, MI300X, RTX 4090) takes at most 50 us (1,282 of them), but for torchrec_a100_stalls' and
#: torchrec_shampoo_128's: 16 and 4 idles of 54 us to 12.6 ms, after NCCL's SendRecv, by hand (h37-handoff32).  A
#: kernel queued 176 ms earlier that starts 12.6 ms after the other stream's work ends did not wait on that work
#: alone: what it waited on the capture does not show, and the idle stays ``unseen``.
HANDOFF_MAX_PS = LAUNCH_START_PS


def held_ms(g: GpuCtx, iv: dict) -> float:
    """ms of GPU ``g``'s idle inside its kept steps while it held a kernel already launched and submitted, not at a
    handoff between streams (the ``held`` spans of :func:`category_intervals`' ``iv`` less its ``stream_handoff``:
    what the ledger books as ``unseen`` for held work): the GPU had work it did not run -- another process's context
    on the same GPU (time-slicing), or a dependency the capture does not hold."""
    held = iv.get("held")
    if held is None or not held[0].size:
        return 0.0
    s, e = union_intervals(held[0].astype(np.int64), held[1].astype(np.int64))
    hand = iv.get("stream_handoff")
    if hand is not None and hand[0].size:
        s, e = subtract_intervals(np.asarray(s, np.int64), np.asarray(e, np.int64),
                                  *(x.astype(np.int64, copy=False) for x in hand))
    a, b = _inside_steps(g, np.asarray(s, np.int64), np.asarray(e, np.int64))
    return float((b - a).sum()) / PS_PER_MS


def _no_handoffs(d) -> tuple[np.ndarray, np.ndarray]:  # d: DeviceEvents
    """No idle at handoffs between streams (empty spans of ``d``'s time type)."""
    return d.start[:0].astype(np.int64), d.start[:0].astype(np.int64)


def handoff_spans(g: GpuCtx, held: tuple[np.ndarray, np.ndarray], lend_all: np.ndarray | None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The GPU ``g``'s held idle (``held``: :func:`category_intervals`' spans of the GPU idle holding launched work)
    at handoffs between streams, as disjoint sorted (starts, ends) ps: the stretches that follow the GPU's work on one
    stream and precede work on another that was already queued while the first ran (:func:`_handoffs`).  The ledger
    books them ``stream_handoff``, painted above ``unseen``.

    Why: a kernel queued on a stream while the GPU runs another stream's work, and started only after that work ends,
    waited on it -- an event wait between the streams (``cudaStreamWaitEvent``, PyTorch's ``wait_stream``; a
    library's side stream, as cuDNN's persistent RNN kernels run on) -- so the idle after that work's end is the
    dependency's handoff, which the capture holds.  Booked as ``unseen`` ("Unseen GPU work", "waiting on work not in
    the capture"), the ledger named it what the finding's words denied (h37-review31's *Left* 1): a GRU's forward on
    an RTX 5070 Ti Laptop GPU (HDAI cuDNN profiling, survey h37-survey66) held 28 us of each 442 us step, every step,
    only at the handoff from cuDNN's RNN stream back to the compute stream; wild/torchrec_a100_stalls holds 13.2 ms
    of each 214 ms step at handoffs."""
    d = g.d
    if lend_all is None or not held[0].size:
        return _no_handoffs(d)
    hs, he, _, _ = _handoffs(d, g.step, g.launch, lend_all)
    if not hs.size:
        return _no_handoffs(d)
    s, e = union_intervals(held[0].astype(np.int64), held[1].astype(np.int64))
    a, b = intersect_intervals(np.asarray(s, np.int64), np.asarray(e, np.int64), *union_intervals(hs, he))
    keep = b > a
    return a[keep].astype(np.int64), b[keep].astype(np.int64)


#: A device event's kind as the handoff finding names the work waited on.
_HANDOFF_KIND = {devices.KIND_KERNEL: "kernel", devices.KIND_COLLECTIVE: "collective", devices.KIND_H2D: "copy",
                 devices.KIND_D2H: "copy", devices.KIND_D2D: "copy", devices.KIND_OTHER_COPY: "copy",
                 devices.KIND_MEMSET: "fill"}


def handoff_reading(ctx: Context, g: GpuCtx, iv: dict) -> tuple[float, Handoff]:
    """(ms of GPU ``g``'s ``stream_handoff`` idle inside its kept steps, the handoffs that hold most of it): their
    streams ("A to B"), what ran on each side, and whether the launching thread recorded a stream's wait for another's
    event between the two launches.

    Why: the ledger's number says what the handoffs cost; a reader acts on their cause -- the work waited on (a
    library's kernel on its side stream, a collective on the communication stream, a copy on a copy stream), the work
    that waited, and whether the program's own event wait (``wait_stream``) ordered them -- which the capture names
    where it recorded them (h37-handoff32)."""
    hand = iv.get("stream_handoff")
    if hand is None or not hand[0].size:
        return 0.0, Handoff()
    a, b = _inside_steps(g, *(x.astype(np.int64, copy=False) for x in hand))
    total = float((b - a).sum()) / PS_PER_MS
    lend = launch_ends(ctx, g) if total > 0 else None
    if lend is None:
        return total, Handoff()
    hs, he, src, dst, before, nxt = _handoffs(g.d, g.step, g.launch, lend, with_events=True)
    got = np.asarray(time_within(a, b, hs, he)) if hs.size else np.zeros(0)
    if not got.size or got.max() <= 0:
        return total, Handoff()
    pair: dict[tuple[int, int], float] = {}
    for i, j, t in zip(src.tolist(), dst.tolist(), got.tolist()):
        pair[(i, j)] = pair.get((i, j), 0.0) + t
    i, j = max(pair, key=pair.__getitem__)
    mine = (src == i) & (dst == j) & (got > 0)
    d = g.d
    waited_kind = _weighted_most(d.kind[before[mine]].tolist(), got[mine])
    return total, Handoff(
        streams=f"{_stream_label(d.stream_names, i)} to {_stream_label(d.stream_names, j)}",
        waited_kind=_HANDOFF_KIND.get(int(waited_kind), "kernel"),
        waited=_work_name(d.names[_weighted_most(d.name[before[mine]].tolist(), got[mine])]),
        waiting=_work_name(d.names[_weighted_most(d.name[nxt[mine]].tolist(), got[mine])]),
        event_wait=_waited_on_event(ctx, g, before[mine], nxt[mine], got[mine]), legacy=d.legacy_ordered(i, j))


def _work_name(name: str) -> str:
    """A device event's name as a finding says it: short, and a mangled template's qualified name with its first
    argument (``cutlass::Kernel2<cutlass_80_simt_sgemm_32x128_8x5_tn_align1, …>`` for ``_ZN7cutlass7Kernel2I42...``:
    the HDAI GRU's Windows trace keeps its kernels' mangled names)."""
    mangled = mangled_template_head(name)
    if mangled is None:
        return devices.short_kernel_name(name, 100)
    said = f"{mangled[0]}<{mangled[1]}, …>"
    return said if len(said) <= 100 else said[:99] + "…"


def _weighted_most(keys: list, w: np.ndarray):
    """The key holding most weight."""
    acc: dict = {}
    for k, t in zip(keys, w.tolist()):
        acc[k] = acc.get(k, 0.0) + t
    return max(acc, key=acc.__getitem__)


def _waited_on_event(ctx: Context, g: GpuCtx, before: np.ndarray, nxt: np.ndarray, w: np.ndarray) -> str:
    """The name of the call by which, for most of the weight ``w``, the thread that launched each waiting event
    ``nxt`` made a stream wait for another's event (``devices.is_stream_wait``) after the launch of the work it
    followed (``before``; any time before, where that launch is not recorded) and before its own launch; "" where it
    recorded none for most of the weight.  The call as the capture names it (``cudaStreamWaitEvent``, the driver's
    ``cuStreamWaitEvent`` that XLA calls, HIP's ``hipStreamWaitEvent``): the finding says what the capture shows."""
    h = ctx.h
    waits = np.flatnonzero(h.name_mask(devices.is_stream_wait))
    if not waits.size:
        return ""
    ln, ws = h.line[waits], h.start[waits].astype(np.int64)
    by_call: dict[int, float] = {}
    yes = 0.0
    for b, n, t in zip(before.tolist(), nxt.tolist(), w.tolist()):
        call = int(g.launch[n])
        lo = int(h.start[int(g.launch[b])]) if g.launch[b] >= 0 else np.iinfo(np.int64).min
        on = np.flatnonzero((ln == h.line[call]) & (ws >= lo) & (ws <= int(h.start[call])))
        if on.size:
            yes += t
            nid = int(h.name[waits[on[-1]]])  # the wait nearest the launch it orders
            by_call[nid] = by_call.get(nid, 0.0) + t
    if yes < 0.5 * float(w.sum()):
        return ""
    return str(h.names[max(by_call, key=by_call.__getitem__)])


def _stream_label(names: list[str], i: int) -> str:
    """A stream's name as a report says it ("stream 7"), from the device events' stream table."""
    n = str(names[i]) if 0 <= i < len(names) else str(i)
    return n if n.lower().startswith("stream") else f"stream {n}"


def _handoffs(d, step: np.ndarray, launch: np.ndarray, lend_all: np.ndarray,  # d: DeviceEvents
              with_events: bool = False) -> tuple[np.ndarray, ...]:
    """The GPU's idle stretches between two works of a step where the later work runs on another stream than the work
    that ended last before it, and was queued (its launch call returned and submitted: :data:`LAUNCH_START_PS`) by the
    time that work ended, and started within :data:`HANDOFF_MAX_PS` of that end: (starts, ends, stream before, stream
    after; with ``with_events``, also the device events before and after).  Such work did not run beside the other
    stream's; it waited for it to end, so the idle after that end is the handoff's."""
    n = d.start.shape[0]
    empty = np.zeros(0, np.int64)
    if n < 2:
        return (empty,) * (6 if with_events else 4)
    start = d.start.astype(np.int64, copy=False)
    end = d.end.astype(np.int64, copy=False)
    prev_end = np.maximum.accumulate(end)
    last = np.maximum.accumulate(np.where(end >= prev_end, np.arange(n), 0))  # the work ending last so far
    nxt = np.flatnonzero(start[1:] > prev_end[:-1]) + 1
    nxt = nxt[(launch[nxt] >= 0) & (d.kind[nxt] != devices.KIND_COLLECTIVE) & (step[nxt] >= 0)
              & (step[nxt] == step[nxt - 1])]
    before = last[nxt - 1]
    idle_s = prev_end[nxt - 1]
    keep = ((d.stream[before] != d.stream[nxt]) & (lend_all[nxt].astype(np.int64) + LAUNCH_START_PS <= idle_s)
            & (start[nxt] - idle_s <= HANDOFF_MAX_PS))
    out = (idle_s[keep], start[nxt][keep], d.stream[before][keep], d.stream[nxt][keep])
    return out + (before[keep], nxt[keep]) if with_events else out


def replay_wait(ctx: Context, g: GpuCtx, iv: dict) -> tuple[float, float]:
    """(ms of launch wait before work replayed from a graph, kernels not replayed from one) in GPU ``g``'s kept steps.
    The wait is each idle stretch that ends at a kernel of a graph (``DeviceEvents.graph_id``: a CUDA or HIP graph's
    node, an XLA command buffer's), from the end of all work before it, as the ledger books it (:func:`ledger_of`):
    only its launch-wait part.

    Why: a graph's kernels are one launch already, so the GPU's wait before a replay is the host preparing it -- the
    replay's inputs, the program's code before its one launch -- not a launch per kernel; only the kernels launched
    one by one are left for a graph to batch (h37-left60: sglang_b300_decode, 98% of its kernel time replayed from
    CUDA graphs, read a saving of 349 us from capturing a graph it already has)."""
    d = g.d
    if not len(d) or d.graph_id is None:
        return 0.0, 0.0
    kern = (d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)
    graph = kern & (d.graph_id >= 0)
    outside = float(np.count_nonzero(kern & ~graph & (g.step >= 0)))
    if not graph.any() or g.windows is None or not g.windows.shape[0]:
        return 0.0, outside
    k_start = d.start.astype(np.int64)
    lo = int(g.windows[:, 0].min())
    # the end of all the GPU's work before each event (events by start): the idle before it starts there
    prev_end = np.maximum(np.concatenate([[lo], np.maximum.accumulate(d.end.astype(np.int64))[:-1]]), lo)
    gap = graph & (k_start > prev_end)
    if not gap.any():
        return 0.0, outside
    s, e = union_intervals(np.maximum(prev_end[gap], lo), k_start[gap])
    led = ledger_of(ctx, g, np.asarray(s, np.int64), np.asarray(e, np.int64), iv)
    return float(led[_CAT_INDEX["launch_wait"]]) / PS_PER_MS, outside


def loop_idle(ctx: Context, g: GpuCtx, iv: dict) -> tuple[float, float]:
    """(ms, ms) the GPU ``g`` idled in its kept steps while the host ran iterations of the compiled programs' loops
    (XLA's ``[iter=N]`` spans or its loop thunk NVTX ranges, ``xla.is_host_loop``), as the ledger books it: in the
    host's own time (``host_compute``, ``other``: the host-bound time that lies inside those loops), and waiting for
    the loops' launches (``launch_wait``: the launch-bound time that lies inside them).

    Why: a jitted solver whose ``while`` loops XLA runs from the host, iteration by iteration (wrf_gpu's Thomas kernel:
    176 iterations in a pass of 3.88 ms), is host-bound inside its compiled program -- "jit the whole step" does not
    reach it, and only the idle inside the loops says that the loops are what the GPU waits for."""
    m = ctx.h.name_mask(xla.is_host_loop)  # XPlane's [iter=N] or Nsight's loop thunk ranges (h37-loops2)
    if not m.any():
        return 0.0, 0.0
    s, e = union_intervals(ctx.h.start[m].astype(np.int64), ctx.h.end[m].astype(np.int64))
    led = ledger_of(ctx, g, np.asarray(s, np.int64), np.asarray(e, np.int64), iv)
    return (float(led[_CAT_INDEX["host_compute"]] + led[_CAT_INDEX["other"]]) / PS_PER_MS,
            float(led[_CAT_INDEX["launch_wait"]]) / PS_PER_MS)


def launch_gaps_in_collectives(ctx: Context, g: GpuCtx, iv: dict) -> float:
    """ms of GPU ``g``'s collective time in its kept steps (as the ledger books it, :func:`ledger_of`) during which its
    other work waited for the host to launch it: each gap between two of its non-collective works (same step) where
    the later one's launch call returned after the earlier one ended, up to :func:`launch_wait_end`, and the later one
    started while a collective still ran (it did not wait for that collective); 0 without host events.

    Why: the ledger paints a collective above the launch wait, so a launch-bound GPU's gaps while its own all-reduce
    runs read as communication -- yet with its launches ahead of its kernels that stretch holds its next work, and the
    collective hides behind it.  A late rank's launches during its own first all-reduce were 0.2 ms a step of the
    2.77 the launch fix on every rank gives back (``write_late_rank_fused`` at 30/60 us: the fix's claims 2.47, h37-late67
    *Left*).  Work that starts only once the collective ends (a tensor-parallel GEMM consuming its result) waited for
    it, not for the host: not counted."""
    d, h = g.d, ctx.h
    if not h.end.size or not len(d) or g.windows is None or not g.windows.shape[0]:
        return 0.0
    coll = d.kind == devices.KIND_COLLECTIVE
    if not coll.any():
        return 0.0
    work = np.flatnonzero(~coll & (g.launch >= 0) & (g.step >= 0))
    if work.size < 2:
        return 0.0
    start, end = d.start[work].astype(np.int64), d.end[work].astype(np.int64)
    prev_end = np.maximum.accumulate(end)[:-1]
    lend = ctx.h.end[g.launch[work[1:]]].astype(np.int64)
    nxt = start[1:]
    late = (nxt > prev_end) & (lend > prev_end) & (g.step[work[1:]] == g.step[work[:-1]])
    if not late.any():
        return 0.0
    cs, ce = union_intervals(d.start[coll].astype(np.int64), d.end[coll].astype(np.int64))
    i = np.searchsorted(cs, nxt, side="right") - 1
    inside = (i >= 0) & (nxt < ce[np.clip(i, 0, None)])  # the later work started while a collective ran
    keep = late & inside
    if not keep.any():
        return 0.0
    s, e = union_intervals(prev_end[keep], launch_wait_end(nxt[keep], lend[keep]))
    return float(ledger_of(ctx, g, np.asarray(s, np.int64), np.asarray(e, np.int64), iv)[_CAT_INDEX["collectives"]]) / PS_PER_MS


def launch_split(ctx: Context, g: GpuCtx, iv: dict) -> tuple[float, float]:
    """(ms, ms) of GPU ``g``'s idle before late launches in its kept steps, as the ledger books it (:func:`ledger_of`):
    with the host inside the kernel launch calls or the GPU about to start what they submitted (:func:`launch_call_spans`:
    the ledger's ``launch_wait`` there), and in the launching threads' shorter silences outside those (``own_code``
    of :func:`category_intervals`, :func:`own_code_spans`: the host's own code between its launches, booked
    ``launch_wait`` for a framework -- its dispatch -- and ``other`` for a program that dispatches its own launches,
    ``Framework.own_code_between_launches``).  (0, 0) without host events.

    Why: the launch wait is the GPU idle before a launch that came late -- late for whatever the host did before the
    call, not only for the call.  A CUDA graph or fewer kernels cut the calls and their submission; the program's own
    code between them runs as before.  PEXSI's selected inversion on an A100 (``wild/pexsi_a100_pageable_sync``,
    849 launch calls of 5.7 ms in all) idles 2.03 ms with the host in its calls and their submission, and 20.9 ms in
    the host's unrecorded code between them, which main's ledger booked as launch wait and priced as launch
    overhead."""
    d, h = g.d, ctx.h
    own_iv = iv.get("own_code")
    if not h.end.size or not len(d) or not (iv["launch_wait"][0].size or (own_iv is not None and own_iv[0].size)):
        return 0.0, 0.0
    ps, pe = launch_calls_of(ctx, g)
    lw = _CAT_INDEX["launch_wait"]
    in_calls = float(ledger_of(ctx, g, ps, pe, iv)[lw]) if ps.size else 0.0
    own = 0.0
    if own_iv is not None and own_iv[0].size:
        led = ledger_of(ctx, g, *(np.asarray(x, np.int64) for x in own_iv), iv)
        own = float(led[lw] + led[_CAT_INDEX["other"]])  # launch wait of a framework's, the host's own of a program's
    return in_calls / PS_PER_MS, own / PS_PER_MS


def launch_call_spans(ctx: Context, g: GpuCtx, lend_all: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The host inside the launch calls of ``g``'s kernels and collectives (a kernel launch or a graph launch), each
    from its start to :func:`launch_wait_end` (its return and the driver's submission, or the work's start where
    earlier), as disjoint sorted (starts, ends) ps.  Why: a graph or fewer kernels cut exactly this time -- the
    launches' own cost --, whatever the host did before each call.  ``lend_all``: :func:`launch_ends` of ``g``."""
    d, h = g.d, ctx.h
    kern = np.flatnonzero(((d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)) & (g.launch >= 0))
    calls = g.launch[kern]
    launching = h.name_mask(devices.is_launch_call) | h.name_mask(devices.is_graph_launch)
    kern, calls = kern[launching[calls]], calls[launching[calls]]
    lend = h.end[calls] if lend_all is None else lend_all[kern]
    ps, pe = union_intervals(h.start[calls].astype(np.int64),
                             launch_wait_end(d.start[kern].astype(np.int64), lend.astype(np.int64)))
    ps, pe = np.asarray(ps, np.int64), np.asarray(pe, np.int64)
    ok = pe > ps
    return ps[ok], pe[ok]


def launch_calls_of(ctx: Context, g: GpuCtx, lend_all: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`launch_call_spans` of ``g``, read once and kept beside its waiting calls (``GpuCtx.waiting_memo``) while
    its launches, the capture's ranges and its host events are the ones read (``lend_all`` is their gather,
    :func:`launch_ends`: the same spans with it or without).  Why: :func:`own_code_spans` asks it each time the GPU's
    ledger is painted (three times a GPU) and :func:`launch_split` once more, each a pass over every launch."""
    kept = _waiting_memo(ctx, g)
    memo = kept.get("launch_calls")
    if memo is None or memo[0] is not ctx.h:
        memo = kept["launch_calls"] = (ctx.h, launch_call_spans(ctx, g, lend_all))
    return memo[1]


def own_code_spans(ctx: Context, g: GpuCtx, wait: tuple[np.ndarray, np.ndarray],
                   silent: tuple[np.ndarray, np.ndarray], lend_all: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The parts of the launch wait ``wait`` (starts, ends) in which the launching threads record nothing
    (``silent``: :func:`_launchers_silent`) and the host is in no launch call nor its submission
    (:func:`launch_call_spans`), as disjoint sorted (starts, ends) ps.

    Why: the GPU idles there because the host was not launching yet -- it ran code of its own between two calls.
    For a program that calls the runtime itself (``Framework.own_code_between_launches``) that is its computation,
    the host's own time which no event records, as the longer silences are (``other``): PEXSI's selected inversion on
    an A100 (``wild/pexsi_a100_pageable_sync``) idles 20.9 ms so between its 849 launches, booked as launch wait on
    main (the step card "Idle waiting for launch 22.2%") while its launch calls and their submission held 2.03 ms
    of it.  A graph of the launches runs none of that code away.  Empty where the threads record nothing at all."""
    empty = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    if not wait[0].size or not silent[0].size:
        return empty
    ws, we = union_intervals(*(np.asarray(x, np.int64) for x in wait))
    ss, se = (np.asarray(x, np.int64) for x in silent)
    keep = se > ss
    ss, se = intersect_intervals(np.asarray(ws, np.int64), np.asarray(we, np.int64), ss[keep], se[keep])
    ps, pe = launch_calls_of(ctx, g, lend_all)
    if ps.size and ss.size:
        ss, se = subtract_intervals(np.asarray(ss, np.int64), np.asarray(se, np.int64), ps, pe)
    ss, se = np.asarray(ss, np.int64), np.asarray(se, np.int64)
    keep = se > ss
    return ss[keep], se[keep]


def split_switches(s: np.ndarray, e: np.ndarray, floor_ps: np.ndarray | float | None = None
                   ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``(held, kernel_switch)`` of the stretches (s, e) a GPU idled before work it already held
    (:func:`_idle_before`'s held): each stretch shorter than its floor (``floor_ps``, per stretch or one for all;
    ``launch.kernel_switch_us`` where None: :func:`_switch_floors`) is the GPU's switch between queued works, a longer
    one held work.

    Why: a GPU needs 1-5 us to start a kernel it holds once the one before it ends.  A CUDA graph of 300 kernels of
    2.5 us, replayed by one ``cudaGraphLaunch`` while the host waits in ``cudaStreamSynchronize``, idles 0.8 us
    between each (synthetic ``cuda_graph_tiny``: ~240 us of a 1.04 ms step): no host time the capture missed (where
    the framework's dispatch measures the launch wait it fell to ``other``), nor work the GPU held and did not run
    (elsewhere it was ``unseen``, "The GPU holds work it was given, idle").  A hold of milliseconds is that."""
    if floor_ps is None:
        floor_ps = T("launch.kernel_switch_us") * PS_PER_US
    short = (e - s) < floor_ps
    return (s[~short], e[~short]), (s[short], e[short])


def _switch_floors(d, launch: np.ndarray, at: np.ndarray, graph_us: tuple[float, str] | None  # noqa: ANN001
                   ) -> np.ndarray | float:
    """The longest the GPU's own switch takes before each work of ``at`` (device event indices), in ps:
    ``launch.kernel_switch_us``, or the GPU's graph switch (``graph_us``: :func:`devices.graph_switch_us`) where the
    work enters or leaves a graph -- its launch differs from the work's before it (by start), and one of the two
    launched several works (a graph replay, a command buffer).

    Why: an MI300X holding a HIP graph idles 10-14 us entering or leaving it, where it switches between other queued
    kernels in 0-3.5 us: vllm_mi300x_decode's two 10.1 and 11.7 us stretches at its graph's ends were held work (a
    dependency or another process) where they are that GPU's switch (h37-left44).  A floor read off each capture's
    own queued transitions is no sounder: where the GPU holds work at most of them (``torchrec_shampoo_128``, a sampled
    trace: median 42 us over 639) their typical gap is the hold."""
    base = T("launch.kernel_switch_us") * PS_PER_US
    if graph_us is None or not at.size:
        return base
    ids, counts = np.unique(launch[launch >= 0], return_counts=True)
    shared = ids[counts > 1]  # the launches of several works (sorted)
    prev = np.maximum(at - 1, 0)
    edge = (at > 0) & (launch[at] != launch[prev]) & (_member(launch[at], shared) | _member(launch[prev], shared))
    return np.where(edge, max(base, graph_us[0] * PS_PER_US), base)


def _member(x: np.ndarray, sorted_ids: np.ndarray) -> np.ndarray:
    """Per value of ``x``: whether ``sorted_ids`` holds it."""
    if not sorted_ids.size:
        return np.zeros(x.shape, bool)
    k = np.minimum(np.searchsorted(sorted_ids, x), sorted_ids.size - 1)
    return sorted_ids[k] == x


def _fresh_gpu(ctx: Context, g: GpuCtx) -> bool:
    """Whether GPU ``g``'s first work in the capture was launched by a process after it started its runtime in the
    window (``OneTime.fresh_gpus``): no work of it was launched before the capture, so none can be queued ahead.

    Why: the idle before the capture's first work, that work launched, was read as work from before the capture
    (``queued_first``) from the window's start -- in a process whose context the window created.  max-zhao0's
    TAC-HEP `mm_cuda` (a T4 shared with other jobs; `nsys` started the program) read "The capture opens while the
    GPU still runs earlier work" for 915 us: its first launch call (516 us, the module loaded in it) and the 400 us
    the kernel started after it returned -- those 400 us the cold-start finding booked as the first use of what the
    call set up, "with nothing launched before the start-up to wait on": one stretch, two contrary causes."""
    job = ctx.job
    return job is not None and int(g.d.gpu) in job.phase.fresh_gpus


def queued_first_ms(g: GpuCtx, iv: dict) -> float:
    """ms of GPU ``g``'s idle inside its kept steps before the capture's first GPU work, that work already launched
    (``queued_first`` of :func:`category_intervals`, booked as ``unseen``): the GPU may have run work the capture
    began too late to hold, so no finding says it held its work idle."""
    q = iv.get("queued_first")
    if q is None or not q[0].size:
        return 0.0
    a, b = _inside_steps(g, q[0].astype(np.int64), q[1].astype(np.int64))
    return float((b - a).sum()) / PS_PER_MS


def queued_first_blocked_ms(ctx: Context, g: GpuCtx, iv: dict) -> float:
    """The part of :func:`queued_first_ms` the host spent blocked in a runtime call (a sync, a blocking copy:
    ``MetricsContext.blocked_spans``): waiting for the work from before the capture, not launching the step's own.

    Why: ``wild`` VGG16 on a T4 (haraldger/High-Performance-Deep-Learning, read locally) opens 5.4 ms before its
    GPU starts, the host launching the forward meanwhile; burcukoglu/safe_dynaviseon's pass opens with the host
    42.6 ms in a pageable copy's sync.  Both idles are work from before the window; only the second is the host
    waiting for it."""
    q = iv.get("queued_first")
    if q is None or not q[0].size or not ctx.blocked_spans or not ctx.blocked_spans[0].size:
        return 0.0
    qs, qe = (x.astype(np.int64, copy=False) for x in q)
    bs, be = union_intervals(*(x.astype(np.int64, copy=False) for x in ctx.blocked_spans))
    rs, re_ = subtract_intervals(qs, qe, np.asarray(bs, np.int64), np.asarray(be, np.int64))
    a, b = _inside_steps(g, qs, qe)
    ra, rb = _inside_steps(g, np.asarray(rs, np.int64), np.asarray(re_, np.int64))
    return max(0.0, float((b - a).sum() - (rb - ra).sum()) / PS_PER_MS)


def launch_wait_end(k_start: np.ndarray, lend: np.ndarray) -> np.ndarray:
    """Where the GPU's wait for a late launch ends: the kernel's start, or its launch call's return and the driver's
    submission (:data:`LAUNCH_START_PS`) where the kernel starts later than that.

    Why: once the call has returned the work is queued, and an idle GPU holding queued work is not waiting for the
    host to launch it (casio's TF 1.15 NeRF: each burst's first kernel launched 0.1-0.3 ms into a 2.7 ms idle, then
    held 2.45 ms with the launching thread idle -- 225 ms booked as launch wait, a critical launch_bound).  That
    rest is left to what else covers it, or to no cause."""
    return np.minimum(k_start, np.maximum(lend, 0) + LAUNCH_START_PS)


def _lead_in_own_call(ctx: Context, g: GpuCtx, lend_all: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The GPU idle before each kept step's first work (not a collective) while the host is inside that work's own
    launch call: from the call's start, or the end of the GPU's earlier work where later, to the call's return and
    the driver's submission (:func:`launch_wait_end`), as (starts, ends); None where there is none.

    Why: :func:`_idle_before` reads launch wait between two works of a step only -- before a step's first, the idle
    from the last step holds the host's code between steps too.  But the stretch inside the first work's launch call
    is that call's own time: a native CUDA loop that syncs every turn (``synthetic.nsysexport.write_synced_tiny_loop``)
    had each turn's first launch booked as host time no event records, though its ``cudaLaunchKernel`` spans it
    (h37-dispatch68).  Asked only where the framework names no dispatch of its own (a framework that does measures
    launch wait by it, the op around the call)."""
    d = g.d
    if g.windows is None or not len(d):
        return None
    ok = np.flatnonzero((g.step >= 0) & (g.launch >= 0) & (d.kind != devices.KIND_COLLECTIVE))
    if not ok.size:
        return None
    first = ok[np.unique(g.step[ok], return_index=True)[1]]  # device events are sorted by start
    start = d.start.astype(np.int64, copy=False)
    prev_end = np.maximum.accumulate(d.end.astype(np.int64, copy=False))
    before = np.where(first > 0, prev_end[np.maximum(first - 1, 0)], np.iinfo(np.int64).min)
    s = np.maximum(before, ctx.h.start[g.launch[first]].astype(np.int64))
    e = launch_wait_end(start[first], lend_all[first].astype(np.int64))
    k = e > s
    return (s[k], e[k]) if k.any() else None


def _process_opened(ctx: Context, g: GpuCtx) -> int | None:
    """ps: where the capture of GPU ``g``'s own process opens -- its earliest host event, where the GPU has a process
    of its own among several (``GpuCtx.host_mask``); None where the window's start is its process's too.

    Why: ranks' files merged into one window open it at the earliest rank's start.  Megatron-LM's tensor-parallel
    pair (``wild/megatron_tp2_v100_turns``) opens rank 1's step 11.6 ms before rank 0's profiler starts; GPU0's idle
    from the window's start to its first work (12.9 ms) was read as work from before the capture ("The capture opens
    while the GPU still runs earlier work", 6.43 ms a GPU), though rank 0's process had recorded nothing yet: the
    launch skew's time, told there."""
    hm = g.host_mask
    if hm is None or not hm.any():
        return None
    return int(ctx.h.start[hm].min())


def _idle_before(d, step: np.ndarray, launch: np.ndarray, lend_all: np.ndarray | None,  # noqa: ANN001 - DeviceEvents
                 windows: np.ndarray | None, returns_read: bool = True, opened: int | None = None
                 ) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The GPU idle before each of its device works (kernels, copies, memsets; not a collective, which waits for its
    peers; of a known launch, inside a kept step), from the end of everything the GPU ran before it on any stream,
    split by what it waited for: ``(launch_wait, held, held_first, queued_first)``, each (starts, ends) --
``held_first`` the held idle before a step's first work; the two held parts also give the index of the work each
stretch precedes.  One rule for the idle
    between two works of a step and for the idle before a step's first work (from its window's start).

    Launch wait (between two works of one step only): the work's launch call (ending at ``lend_all``; None: no host
    events, read as 0) ended after the GPU had finished everything before it; it ends at :func:`launch_wait_end`.
    Held: the rest of the idle after the call returned and the driver submitted (:data:`LAUNCH_START_PS`): the GPU
    held work it could run.  ``queued_first``: held before the capture's first GPU work, where the GPU may still run
    work launched before the capture began (vLLM's engine launches step N+1 while the GPU runs step N), which no
    event shows -- booked apart from the host's time all the same.

    Why one rule: the idle before a step's first work was read apart (``_leading_held``) from the idle between
    kernels, which was read off kernels alone and then mended -- by the latest launch of every work that ran before
    the kernel (a kernel waiting on a copy the host issued 5 ms later was 150.5 ms held, h37-left41) and by
    subtracting the copies run in the gap.  Read over every work the GPU ran, both mends are the rule itself: the
    idle begins where the GPU's earlier work ended, and the works that started before it were launched by their
    starts.  And the idle before a copy the GPU held (launched, returned) inside a step is held too: read off kernels
    alone it was the next kernel's launch wait where that kernel was launched late (h37-left44).  A collective that
    waits for its peers, or any work that ran late, keeps the GPU busy until it ends: only the idle after it can be
    held.

    ``opened`` (ps; None: the window's start): where the capture of the GPU's own process opens
    (:func:`_process_opened`), the earliest the capture's first work can have waited on work from before it.

    ``returns_read`` False (the GPU's and the host's clocks disagree: :func:`clocks_disagree`): no call's return is
    read against its work's start, so nothing is held and a late launch's wait runs to its work's start.  A GPU clock
    that drifts later than the host's put the kernels hundreds of microseconds after calls they followed by 10 us:
    read as held, it was host time booked as the GPU's (h37-left31's left).

    Only where the GPU idled before a work (few places on a busy GPU) are its launch and step read: each test over
    every pair of works was a gather or a pass over the 220 k events of a GPU of the dense 100 MB capture."""
    empty = (d.start[:0].astype(np.int64), d.start[:0].astype(np.int64))
    none = (*empty, np.zeros(0, np.int64))
    if not d.start.shape[0]:
        return empty, none, none, empty
    start = d.start.astype(np.int64, copy=False)
    prev_end = np.maximum.accumulate(d.end.astype(np.int64, copy=False))
    # between two works of a step: the GPU idle before the work, after everything that started before it
    nxt = np.flatnonzero(start[1:] > prev_end[:-1]) + 1
    nxt = nxt[(launch[nxt] >= 0) & (d.kind[nxt] != devices.KIND_COLLECTIVE) & (step[nxt] >= 0)
              & (step[nxt] == step[nxt - 1])]
    idle_s, idle_e = prev_end[nxt - 1], start[nxt]
    lend = lend_all[nxt].astype(np.int64) if lend_all is not None else np.zeros(nxt.size, np.int64)
    keep = lend > idle_s
    lw = (idle_s[keep], idle_e[keep] if not returns_read else launch_wait_end(idle_e[keep], lend[keep]))
    if not returns_read or lend_all is None:
        return lw, none, none, empty
    held_s = np.maximum(idle_s, lend + LAUNCH_START_PS)
    late = idle_e > held_s
    # before each step's first work: from the end of everything before it, or the window's start where later
    lead_s, lead_e, lone, at = empty[0], empty[1], np.zeros(0, bool), np.zeros(0, np.int64)
    if windows is not None and windows.shape[0]:
        ok = np.flatnonzero((step >= 0) & (launch >= 0) & (d.kind != devices.KIND_COLLECTIVE))
        if ok.size:
            _, at = np.unique(step[ok], return_index=True)
            first = ok[at]  # the earliest such work of each step (device events are sorted by start)
            first = first[(first == 0) | (step[first] != step[np.maximum(first - 1, 0)])]  # the rest: read above
            before = np.where(first > 0, prev_end[np.maximum(first - 1, 0)], np.iinfo(np.int64).min)
            w0 = windows[np.clip(step[first], 0, windows.shape[0] - 1), 0].astype(np.int64)
            lead_s = np.maximum(np.maximum(before, w0), lend_all[first].astype(np.int64) + LAUNCH_START_PS)
            lead_e = start[first]
            k = lead_e > lead_s
            own = _own_lead_ps(first, lead_e - lead_s, k)
            lead_s, lead_e, lone, at, w0 = lead_s[k], lead_e[k], (first == 0)[k], first[k], w0[k]  # lone: no GPU
            # work before it.  Held past the GPU's switch beyond the hold every later step opens with (``own``), the
            # capture's first work waited on earlier work the GPU ran: queues drain in order, so the GPU ran that work
            # since the window opened, not only since the launch
            on = lone & ((lead_e - own - lead_s) >= T("launch.kernel_switch_us") * PS_PER_US)
            # since the window opened for the GPU's own process (``opened``): a merged window of several processes
            # opens at the earliest one's start, before this one's queue held anything the capture could show
            lead_s = np.where(on, np.minimum(lead_s, w0 if opened is None else np.maximum(w0, opened)), lead_s)
            if own and lone.any():  # the part of the capture's first lead every later step's lead holds too is held
                i = np.flatnonzero(lone)
                cut = np.maximum(lead_s[i], lead_e[i] - own)
                lead_s, lead_e, at = (np.concatenate((lead_s, cut)), np.concatenate((lead_e, lead_e[i])),
                                      np.concatenate((at, at[i])))
                lead_e[i] = cut
                lone = np.concatenate((lone, np.zeros(i.size, bool)))
                k = lead_e > lead_s
                lead_s, lead_e, lone, at = lead_s[k], lead_e[k], lone[k], at[k]
    return lw, (held_s[late], idle_e[late], nxt[late]), (lead_s[~lone], lead_e[~lone], at[~lone]), \
        (lead_s[lone], lead_e[lone])


def _own_lead_ps(first: np.ndarray, lead_ps: np.ndarray, idle: np.ndarray) -> int:
    """ps of held idle that every kept step but the capture's first opens with (``first``: each step's first work;
    ``lead_ps``: the idle before it, held where ``idle``): the least of them, 0 where a later step opens with none
    or there is no later step.  The same stretch before the capture's first work is that step's own hold, not work
    from before the capture.

    Why: the idle before the capture's first work, that work launched, may be work launched before the capture began
    (vllm_mi300x_decode: the engine queues step N+1 while the GPU runs step N, so its later steps open busy, with no
    held idle).  Where every later step opens holding its own launched work idle for at least as long, work from
    before the capture lasting just that long is the lesser reading: h37-randjobs4's 3 steps of an equal 1.02 ms hold
    each read 682 us a step held and 341 us "from before the capture"."""
    later = first > 0
    if not later.any():
        return 0
    return int(max(0, np.where(idle[later], lead_ps[later], 0).min()))


def _off_peers(ctx: Context, g: GpuCtx, held: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """``held`` less the time another active GPU of ``g``'s process ran work other than a collective: there the GPU
    may wait on that GPU's work (a control dependency from one replica to another), a wait the capture shows
    (``sequential_gpus`` and its peer waits: ``metrics.multigpu.peer_waits``), not work held for a cause outside it.

    Why: read over every work, the idle before a replica's first kernel after its batch copy is held too -- in
    synthetic ``multi_gpu_sequential`` (four GPUs of one TensorFlow process taking turns) 3.0 ms of each GPU's 8.35 ms
    step became "The GPU holds work it was given", halving the turn-taking's saving (6.04 -> 3.02 ms).  GPUs of
    processes of their own wait on each other through collectives only, which keep the GPU busy."""
    lines = ctx.trace.gpu_host_lines
    own = set(np.unique(lines.get(g.d.gpu, np.zeros(0, np.int64))).tolist()) if lines else set()
    peers = [p for p in ctx.active if p.d.gpu != g.d.gpu
             and (not lines or own & set(np.unique(lines.get(p.d.gpu, np.zeros(0, np.int64))).tolist()))]
    s, e = (x.astype(np.int64, copy=False) for x in held)
    for p in peers:
        s, e = subtract_intervals(s, e, *busy_not_collective(ctx, p))
    return s, e


def busy_not_collective(ctx: Context, g: GpuCtx) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends), int64 ps: the stretches GPU ``g`` runs work other than a collective, made once per GPU and
    analysis.  Why apart from ``DeviceEvents.busy``: a collective waits for every peer, so it says nothing of one GPU
    waiting on another's own work (turn-taking, a replica's control dependency); where the GPU runs no collective the
    two are one union and this is ``busy`` itself."""
    key = ("busy_not_collective", g.d.gpu)
    if key not in ctx.memo:
        d = g.d
        m = d.kind != devices.KIND_COLLECTIVE
        ctx.memo[key] = (d.busy() if m.all() else
                         union_intervals(d.start[m].astype(np.int64, copy=False), d.end[m].astype(np.int64, copy=False)))
    return ctx.memo[key]


def off_path_uploads(ctx: Context, g: GpuCtx) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends), int64 ps, sorted and disjoint: the stretches of GPU ``g``'s uploads from pinned memory that did
    not hold the host, where no other work of the GPU runs (a kernel, a collective, another copy or a fill) and that
    delayed no GPU work -- each ended before
    the host began the launch call of the GPU's next kernel, so without the copy the GPU would have idled there as
    well, waiting for the host.  The part of a stretch after that launch call began delayed the kernel and stays the
    copy's; so does a stretch with no kernel after it, or whose next kernel's launch the capture lacks, every
    stretch where the clocks disagree, the host's time blocked in a runtime call (a sync waiting for the copy), and
    the time the host spent inside a one-time call (start-up is no steady-state idle to run the copy in).

    Why one home: the ledger books these stretches as the host's idle (what the host did then: its ops, its input
    wait, its launches), not as ``memcpy_h2d``, and the copies' metric (``MemcpyStat.idle_anyway_ms_per_step``) says
    the same stretches -- one account, each microsecond to its cause.  h37-copystream61 measured them in the copies'
    metric only, so the ledger still booked a host-paced loop's pinned 400 us upload as copy time: ``unexplained_idle``
    claimed 2.28 ms of host code in that loop against 2.68 ms in the same loop with no copy, which by construction runs
    as long (``synthetic.torchtrace.write_pageable_upload_bound``: 3.084 ms each; h37-copystream61's Left 4)."""
    d, h = g.d, ctx.h
    none = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    up = d.kind == devices.KIND_H2D
    if not up.any() or not h.start.size:
        return none
    busy = np.flatnonzero((d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE))
    if not busy.size:  # no kernel follows any copy: none is known to have run in idle time
        return none
    # known pinned (another host memory than pageable), asynchronous: none held the host
    up &= (devices.event_host_memory(d.names, d.name, d.mem_host) == 0) & (d.mem_sync != 1)
    if not up.any() or clocks_disagree(ctx, g):
        return none
    ks = d.start[busy].astype(np.int64)
    # where any other work of the GPU runs beside them (a kernel, a read-back, a fill) the GPU is not idle: that time
    # is that work's, as the ledger paints it
    other = d.kind != devices.KIND_H2D
    xs, xe = subtract_intervals(d.start[up].astype(np.int64), d.end[up].astype(np.int64),
                                *union_intervals(d.start[other].astype(np.int64), d.end[other].astype(np.int64)))
    if not xs.size:
        return none
    xs, xe = union_intervals(xs, xe)
    at = np.searchsorted(ks, xe, side="left")  # the first kernel starting at or after each stretch's end (sorted)
    has = at < busy.size
    call = g.launch[busy[np.minimum(at, busy.size - 1)]].astype(np.int64)
    has &= call >= 0
    ready = np.where(has, h.start[np.clip(call, 0, None)].astype(np.int64), np.iinfo(np.int64).min)
    off_s, off_e = xs[has], np.minimum(xe, ready)[has]
    keep = off_e > off_s
    off_s, off_e = off_s[keep], off_e[keep]
    if off_s.size and ctx.blocked_spans is not None and ctx.blocked_spans[0].size:
        off_s, off_e = subtract_intervals(off_s, off_e, *union_intervals(*ctx.blocked_spans))
    # -- and never under a one-time call (a module load): that idle is the cold capture's, gone in the steady state,
    # where the kernel waits for its upload (h37-onepass32: the first GEMM's upload under cuBLAS's module fetch)
    once = ctx.one_time_spans(g)
    if off_s.size and once is not None and once[0].size:
        off_s, off_e = subtract_intervals(off_s, off_e, *(x.astype(np.int64, copy=False) for x in once))
    return off_s, off_e


def clocks_disagree(ctx: Context, g: GpuCtx) -> bool:
    """Whether some of GPU ``g``'s work starts before the host call that launched it by more than
    ``capture.clock_skew_us``: the two clocks disagree (``metrics.capture._clock_skew``), so a launch's return read
    against its work's start says nothing of what the GPU held (gpt2_b200_clock_skew: the step's first 30 kernels
    launched over 4 ms all start at 5.1 ms, later ones up to 200 us before their calls)."""
    has = np.flatnonzero(g.launch >= 0)
    if not has.size or not ctx.h.start.size:
        return False
    lead = ctx.h.start[g.launch[has]].astype(np.int64) - g.d.start[has].astype(np.int64)
    return bool(lead.max() > T("capture.clock_skew_us") * PS_PER_US)


def copies_holding_launcher(ctx: Context, g: GpuCtx) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per copy category: the copies of GPUs on which the process ran no kernel (copy-only GPUs), issued by a thread
    that launches GPU ``g``'s work, in the part of each transfer that ran while its own call still held that thread (a
    staged copy's lead before its transfer is left to the ledger's launch wait, as for the GPU's own copies, whose
    leads ``metrics.syncs.copy_leads`` claims).

    Why: the GPU idle while the thread that feeds it is blocked in a copy call waits on that copy, not on dispatch --
    whichever GPU the copy's record names.  A pageable upload's record naming another GPU of the machine than the
    kernels that use its bytes (Abenich7/CPU-GPU-inference-2024---V2: 21 MB ``x.to('cuda')`` on "GPU 2", the two
    multiplies on GPU 0 in a process that ran nothing on GPU 2) left the copy-only GPU out of the ledger, and its
    4.33 ms held in ``cudaMemcpyAsync`` read "launch-bound: the GPU waits for the host to dispatch each op ... CUDA
    graphs" with "copies block the GPU for 0 us".  Only a copy-only GPU's: an active GPU's copies are its own
    ledger's, and a copy whose call returned before it ran (pinned, asynchronous) held no launcher."""
    h = ctx.h
    out: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    for p, idx in launcher_copy_peers(ctx, g):
        calls = p.launch[idx]
        s = np.maximum(p.d.start[idx].astype(np.int64), h.start[calls].astype(np.int64))
        e = np.minimum(p.d.end[idx].astype(np.int64), h.end[calls].astype(np.int64))
        held = e > s  # a call that returned before its transfer began (pinned, asynchronous) held nothing
        for c, kinds in _DEVICE_KINDS.items():
            if c in ("device_compute", "collectives"):
                continue
            m = held & np.isin(p.d.kind[idx], list(kinds))
            if m.any():
                out.setdefault(c, []).append((s[m], e[m]))
    return {c: (np.concatenate([a for a, _ in v]), np.concatenate([b for _, b in v])) for c, v in out.items()}


def launcher_copy_peers(ctx: Context, g: GpuCtx) -> list[tuple[GpuCtx, np.ndarray]]:
    """The copy-only GPUs of the capture (no kernel or collective there) beside the active GPU ``g``, each with the
    indices of its device events whose launch call ran on a thread that launches ``g``'s work: the copies whose calls
    can hold ``g``'s launcher (:func:`copies_holding_launcher`; ``metrics.syncs.copy_leads``).  Empty where the
    GPU's and the host's clocks disagree on a peer (a call's bounds read against a transfer's mean nothing then)."""
    h = ctx.h
    peers = [p for p in ctx.gpus if p is not g and not p.active and len(p.d)] if g.active and h.end.size else []
    own = g.launch[g.launch >= 0] if peers else g.launch[:0]
    if not own.size:
        return []
    feeders = np.unique(h.line[own])
    out = []
    for p in peers:
        if clocks_disagree(ctx, p):
            continue
        idx = np.flatnonzero(p.launch >= 0)
        idx = idx[np.isin(h.line[p.launch[idx]], feeders)]
        if idx.size:
            out.append((p, idx))
    return out


#: The device categories of :data:`PRIORITY` and the event kinds each paints.
_DEVICE_KINDS: dict[str, frozenset[int]] = {
    "device_compute": frozenset({devices.KIND_KERNEL}),
    "collectives": frozenset({devices.KIND_COLLECTIVE}),
    "memcpy_d2d": frozenset({devices.KIND_D2D, devices.KIND_OTHER_COPY}),
    "memset": frozenset({devices.KIND_MEMSET}),
    "memcpy_d2h": frozenset({devices.KIND_D2H}),
    "memcpy_h2d": frozenset({devices.KIND_H2D}),
}
#: The GPU's idle categories painted above the idle between small collectives launched one by one (``comm_launch``):
#: read off :data:`PRIORITY`, the one statement of precedence, so that a category added above it is subtracted from
#: that idle's measure too (``stream_handoff`` had to be added to a list of its own here).  The GPU's own work above it
#: -- its kinds, and its copies under one-time calls (``copy_startup``, booked as start-up) -- is no idle.
_IDLE_ABOVE_PACED: tuple[str, ...] = tuple(c for c in PRIORITY[:PRIORITY.index("comm_launch")]
                                           if c not in _DEVICE_KINDS and c != "copy_startup")


def _of_kinds(d, kinds: frozenset[int], present: set[int]) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    """(starts, ends) of the device events of ``kinds`` (``present``: the kinds the GPU has): no pass over the events
    for a kind it lacks, and its whole columns (read-only users: every reader of the intervals copies what it keeps)
    where it has no other kind -- a dense capture's GPUs hold kernels only, and five masks and gathers of 220 k events
    per GPU were a fifth of the per-GPU steps' time."""
    if not kinds & present:
        return d.start[:0], d.end[:0]
    if present <= kinds:
        return d.start, d.end
    m = d.kind == next(iter(kinds)) if len(kinds) == 1 else np.isin(d.kind, list(kinds))
    return d.start[m], d.end[m]


def _python_spans(ctx: Context, g: GpuCtx) -> tuple[np.ndarray, np.ndarray]:
    """The host inside Python (``with_stack`` spans) of this GPU's process, less its blocked calls: host work the
    GPU waits for when no op or launch is running (an eager serving engine's Python between kernels)."""
    sp = ctx.trace.spans
    empty = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    if sp is None or not len(sp):
        return empty
    own = ctx.trace.gpu_host_lines.get(g.d.gpu)
    m = sp.line >= 0 if own is None else np.isin(sp.line, own)
    if not m.any():
        return empty
    s0, e0 = sp.start[m].astype(np.int64, copy=False), sp.end[m].astype(np.int64, copy=False)
    # less the loop's own frames (``<module>``, ``main``: each holds two steps or more), which say that the loop runs, not
    # what the host does in it: the host there inside no call is code nothing recorded (``other``), as a step's range
    # is no host work (h37-huntkin63: 2 ms a step after a batch's upload, inside no call, read as Python work)
    h = ctx.h
    on = h.line >= 0 if own is None else np.isin(h.line, own)
    on &= ~h.name_mask(ctx.fw.step_marker)
    w = ctx.steps.host_windows
    keep = ~loop_frames(w, last_starts(w, h.start[on]), s0, e0)
    if not keep.any():
        return empty
    s, e = union_intervals(s0[keep], e0[keep])
    return subtract_intervals(s, e, *ctx.blocked_spans) if ctx.blocked_spans else (s, e)


def bare_runtime_calls(ctx: Context, g: GpuCtx) -> np.ndarray:
    """Host event indices of the runtime calls of GPU ``g``'s process that hold the host in the runtime and no more
    (``devices.is_own_time_call``: a query, an event's record, a stream's wait) with no op, range or other event of
    its thread around them but a step's marker: the host's own recorded time, the call's.

    Why: the ledger's host work is the events that launch nothing -- an op, a range -- and a runtime call has a
    correlation id, so one made between the steps (``torch.cuda.mem_get_info()`` logging, an event timed by hand)
    was time no event records: "no runtime call ... covers it" of an 800 us ``cudaMemGetInfo`` (h37-ledger69).  One
    inside an op is that op's time (its dispatch), as it was.  Read once a GPU (the ledger paints it several times)."""
    key = ("bare_calls", g.d.gpu)
    got = ctx.memo.get(key)
    if got is None:
        got = ctx.memo[key] = _bare_runtime_calls(ctx, g)
    return got


def _bare_runtime_calls(ctx: Context, g: GpuCtx) -> np.ndarray:
    h = ctx.h
    if not len(h):
        return np.zeros(0, np.int64)
    own = h.name_mask(devices.is_own_time_call)
    if g.host_mask is not None:
        own &= g.host_mask
    idx = np.flatnonzero(own)
    if not idx.size:
        return idx.astype(np.int64)
    around = ctx.memo.get("bare_around")  # the events that can enclose a call: the same for every GPU
    if around is None:
        around = ctx.memo["bare_around"] = (~h.name_mask(devices.is_runtime_call) & ~ctx.step_marks
                                            & ~h.name_mask(ctx.fw.step_marker))
    bare = np.ones(idx.size, bool)
    for ln in np.unique(h.line[idx]).tolist():
        mine = h.line[idx] == ln
        enc = np.flatnonzero(around & (h.line == ln))
        if not enc.size:
            continue
        o = np.argsort(h.start[enc], kind="stable")
        es = h.start[enc][o].astype(np.int64, copy=False)
        reach = np.maximum.accumulate(h.end[enc][o].astype(np.int64, copy=False))
        j = np.searchsorted(es, h.start[idx[mine]].astype(np.int64), side="right") - 1
        inside = (j >= 0) & (reach[np.maximum(j, 0)] >= h.end[idx[mine]])
        bare[np.flatnonzero(mine)[inside]] = False
    keep = idx[bare]
    return keep[~spans_any_step(ctx, _step_windows(g), h.start[keep].astype(np.int64), h.end[keep].astype(np.int64))]


def _bare_call_spans(ctx: Context, g: GpuCtx) -> tuple[np.ndarray, np.ndarray]:
    """The host inside :func:`bare_runtime_calls` of ``g``, less the waits the job read (a poll the program loops
    on is a wait on the GPU, the sync's finding's) and its blocked calls: disjoint (starts, ends)."""
    i = bare_runtime_calls(ctx, g)
    if not i.size:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    h = ctx.h
    s, e = union_intervals(h.start[i].astype(np.int64), h.end[i].astype(np.int64))
    w = ctx.waits
    if w.start.size:
        s, e = subtract_intervals(s, e, w.start.astype(np.int64, copy=False), w.end.astype(np.int64, copy=False))
    if ctx.blocked_spans is not None and ctx.blocked_spans[0].size:
        s, e = subtract_intervals(s, e, *ctx.blocked_spans)
    return s, e


def _cat2(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray]:
    """Two interval sets as one (starts, ends) pair; ``b`` may be None or empty."""
    if b is None or not b[0].size:
        return a
    return (np.concatenate([a[0].astype(np.int64), b[0].astype(np.int64)]),
            np.concatenate([a[1].astype(np.int64), b[1].astype(np.int64)]))


class _Cover:
    """Disjoint sorted intervals and their cumulative length: the covered measure up to any time."""

    __slots__ = ("s", "e", "c")

    def __init__(self, s: np.ndarray, e: np.ndarray) -> None:
        self.s, self.e = s, e
        self.c = np.zeros(s.size + 1, dtype=np.int64)
        np.cumsum(e - s, out=self.c[1:])

    def upto(self, t: np.ndarray) -> np.ndarray:
        """ps of the set before each time in ``t`` (int64)."""
        if self.s.size == 0:
            return np.zeros(t.shape, dtype=np.int64)
        j = np.searchsorted(self.s, t, side="right") - 1
        jj = np.maximum(j, 0)
        v = self.c[jj] + (np.minimum(t, self.e[jj]) - self.s[jj])
        v[j < 0] = 0
        return v


class Attribution:
    """The priority painting of one GPU's category intervals, evaluated for any sorted windows.

    Exactly :func:`attribute`'s answer, in O((intervals + windows) log): the time of category ``c``
    in a window is |window ∩ (c ∪ higher)| - |window ∩ higher|, each a difference of two lookups in
    the cumulative measure of the prefix unions of ``PRIORITY``.  Windows are used as
    :func:`attribute` uses them: sorted by start, an instant belonging to the last window that
    starts at or before it.  ``lo``/``hi`` bound the windows that will be asked (intervals outside
    are dropped early).  ``ok`` is False when some interval ends before it starts: the segment
    method counts those as negative coverage, so :func:`attribute` falls back to it.
    """

    def __init__(self, intervals: dict[str, tuple[np.ndarray, np.ndarray]], lo: int | None = None, hi: int | None = None) -> None:
        self.ok = all(not (e < s).any() for s, e in intervals.values())
        self.bounds = (lo if lo is not None else np.iinfo(np.int64).min, hi if hi is not None else np.iinfo(np.int64).max)
        self.covers: list[_Cover] = []
        if not self.ok:
            return
        us = ue = np.zeros(0, dtype=np.int64)
        cov = None
        for c in PRIORITY:
            s, e = intervals[c]
            if lo is not None and s.size:
                m = (e > lo) & (s < hi)
                s, e = s[m], e[m]
            if s.size:
                s = s.astype(np.int64, copy=False)
                e = e.astype(np.int64, copy=False)
                us, ue = add_intervals(us, ue, s, e) if us.size else union_intervals(s, e)
                cov = None
            # a category with no intervals leaves the prefix union as it was: the same cover, not a new running sum
            # of it (most of a GPU's 12 categories are empty: 11 cumsums of its ~100 k merged kernels, 8 GPUs)
            if cov is None:
                cov = _Cover(us, ue)
            self.covers.append(cov)

    def matrix(self, windows: np.ndarray) -> np.ndarray | None:
        """(n_windows, n_categories) int64 ps, or None when the windows are not sorted by start."""
        n = windows.shape[0]
        res = np.zeros((n, len(BREAKDOWN_CATEGORIES)), dtype=np.int64)
        if n == 0:
            return res
        a = windows[:, 0].astype(np.int64)
        if n > 1 and (a[1:] < a[:-1]).any():
            return None
        # an instant belongs to the last window starting at or before it, if it lies before that window's end
        b = windows[:, 1].astype(np.int64).copy()
        np.minimum(b[:-1], a[1:], out=b[:-1])
        np.maximum(b, a, out=b)
        prev = np.zeros(n, dtype=np.int64)
        last = None
        for c, cov in zip(PRIORITY, self.covers):
            if cov is last:  # the prefix union did not grow: the category holds nothing (m - prev is 0)
                continue
            m = cov.upto(b) - cov.upto(a)
            res[:, _CAT_INDEX[c]] += m - prev  # += : a painted category may be booked as another (_BOOKED_AS)
            prev, last = m, cov
        res[:, _CAT_INDEX["other"]] = (b - a) - prev
        return res


def attribute(intervals: dict[str, tuple[np.ndarray, np.ndarray]], windows: np.ndarray,
              painted: Attribution | None = None) -> np.ndarray:
    """(n_windows, n_categories) ps per window and BREAKDOWN_CATEGORIES category.

    ``painted``: an :class:`Attribution` of these same ``intervals`` (reused across window sets).
    """
    n = windows.shape[0]
    if n == 0:
        return np.zeros((0, len(BREAKDOWN_CATEGORIES)), dtype=np.float64)
    if painted is None:
        painted = Attribution(intervals, int(windows[:, 0].min()), int(windows[:, 1].max()))
    mat = painted.matrix(windows) if painted.ok else None
    if mat is not None:
        return mat.astype(np.float64)  # exact: ps totals are integers far below 2**53
    return _attribute_segments(intervals, windows)


def _attribute_segments(intervals: dict[str, tuple[np.ndarray, np.ndarray]], windows: np.ndarray) -> np.ndarray:
    """Reference method (unsorted windows, negative intervals): elementary segments, midpoint coverage."""
    n = windows.shape[0]
    res = np.zeros((n, len(BREAKDOWN_CATEGORIES)), dtype=np.float64)
    if n == 0:
        return res
    lo, hi = int(windows[:, 0].min()), int(windows[:, 1].max())
    pts = [windows.ravel()]
    for s, e in intervals.values():
        m = (e > lo) & (s < hi)
        pts.append(np.clip(s[m], lo, hi))
        pts.append(np.clip(e[m], lo, hi))
    p = sorted_unique(np.concatenate(pts))
    if p.size < 2:
        return res
    a, b = p[:-1], p[1:]
    mid = a + (b - a) / 2.0
    length = (b - a).astype(np.float64)
    cat = np.full(mid.shape, _CAT_INDEX["other"], dtype=np.int64)
    unset = np.ones(mid.shape, dtype=bool)
    for c in PRIORITY:
        s, e = intervals[c]
        cov = coverage(mid, s, e) & unset
        cat[cov] = _CAT_INDEX[c]
        unset &= ~cov
    w = np.searchsorted(windows[:, 0], mid, side="right") - 1
    ok = (w >= 0) & (mid < windows[np.clip(w, 0, None), 1])
    flat = w[ok] * len(BREAKDOWN_CATEGORIES) + cat[ok]
    res += np.bincount(flat, weights=length[ok], minlength=res.size).reshape(res.shape)
    return res


def painted_segments(intervals: dict[str, tuple[np.ndarray, np.ndarray]], lo: int, hi: int
                     ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The instants of [lo, hi) as (starts, ends, category) runs, each instant painted with the first category of
    ``PRIORITY`` active there ("other" where none is).

    :func:`attribute` sums exactly this painting per window; the tab's step timeline draws it, so the waits it
    highlights add up to the breakdown's numbers.  Adjacent runs of one category are merged.
    """
    if hi <= lo:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), []
    pts = [np.array([lo, hi], dtype=np.int64)]
    for s, e in intervals.values():
        m = (e > lo) & (s < hi)
        pts.append(np.clip(s[m].astype(np.int64, copy=False), lo, hi))
        pts.append(np.clip(e[m].astype(np.int64, copy=False), lo, hi))
    p = sorted_unique(np.concatenate(pts))
    a, b = p[:-1], p[1:]
    mid = a + (b - a) / 2.0
    cat = np.full(mid.shape, len(PRIORITY), dtype=np.int64)  # len(PRIORITY): "other"
    unset = np.ones(mid.shape, dtype=bool)
    for i, c in enumerate(PRIORITY):
        s, e = intervals[c]
        m = (e > lo) & (s < hi)
        cov = coverage(mid, s[m], e[m]) & unset
        cat[cov] = i
        unset &= ~cov
    # merge runs: a new run starts where the category changes
    new = np.ones(cat.shape, dtype=bool)
    new[1:] = cat[1:] != cat[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:], cat.size) - 1
    names = [_BOOKED_AS.get(c, c) for c in (*PRIORITY, "other")]
    return a[first], b[last], [names[int(c)] for c in cat[first]]


#: The ledger's categories of GPU idle the host causes (it waits for input, launches, computes, allocates, starts up or
#: runs code no event names): what a fix on the host side can give back.  ``unseen`` is not among them: there the GPU
#: runs work the capture does not hold.
HOST_IDLE: tuple[str, ...] = ("input_wait", "launch_wait", "host_compute", "allocator", "startup", "managed_read",
                               "other")
#: The ledger's categories of the host's own time: its recorded work and the idle nothing recorded covers -- the share
#: of the idle the host-bound and outside-wait findings draw on (``rules._unclaimed_other_ms``).
HOST_OWN: tuple[str, ...] = ("host_compute", "host_python", "runtime_call", "managed_read", "other")


def ledger_of(ctx: Context, g: GpuCtx, s: np.ndarray, e: np.ndarray, iv: dict | None = None) -> np.ndarray:
    """ps per BREAKDOWN_CATEGORIES category of the disjoint intervals (s, e) of GPU ``g``, as its step ledger books
    them: only the instants inside its kept step windows, painted as :func:`gpu_step_arrays` paints them.

    Why: a rule that measures its own stretch of time (the idle after a sync, a gap between steps) must recover only
    time the step's breakdown holds, in the category the breakdown puts it in (issue #36 deliverable 1).  ``iv``:
    :func:`category_intervals` of ``g`` when the caller has them."""
    out = np.zeros(len(BREAKDOWN_CATEGORIES), dtype=np.float64)
    a, b = _inside_steps(g, s, e)
    if not a.size:
        return out
    return attribute(iv if iv is not None else category_intervals(ctx, g), np.stack([a, b], axis=1)).sum(axis=0)


def _inside_steps(g: GpuCtx, s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The parts of the intervals (s, e) inside GPU ``g``'s kept step windows, disjoint and sorted (none empty).

    One subtraction of the windows' complement, not ``model.columns.intersect_intervals`` (two subtractions): measured
    (h37-tidy27, best of 5) 79 vs 209 ms on 200,000 intervals and 1,000 windows, 0.40 vs 1.05 s on 2 M and 50 -- the
    ledger asks this per category and GPU.  Same answer on 20,000 drawn sets (with a reversed interval among them too),
    once ``intersect_intervals``' empty pieces are dropped as here; only reversed windows (none a step reader makes)
    read otherwise."""
    w = g.windows
    if not s.size or w is None or not w.shape[0]:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    ws, we = union_intervals(w[:, 0].astype(np.int64), w[:, 1].astype(np.int64))
    lo, hi = min(int(s.min()), int(ws[0])) - 1, max(int(e.max()), int(we[-1])) + 1
    outside = (np.concatenate([[lo], we]).astype(np.int64), np.concatenate([ws, [hi]]).astype(np.int64))
    a, b = subtract_intervals(s.astype(np.int64), e.astype(np.int64), *outside)
    keep = b > a
    return a[keep], b[keep]


#: Breakdown's fields are BREAKDOWN_CATEGORIES in order: rows are built positionally (checked here).
_BD_POSITIONAL = tuple(f.name for f in dataclasses.fields(Breakdown)) == BREAKDOWN_CATEGORIES
_BD_GET = operator.attrgetter(*BREAKDOWN_CATEGORIES)
NONE_MS = np.inf  # "no such event" in the float arrays below (real times are finite)


def _breakdown(vals) -> Breakdown:
    return Breakdown(*vals) if _BD_POSITIONAL else Breakdown(**dict(zip(BREAKDOWN_CATEGORIES, vals)))


@dataclass
class StepArrays:
    """One GPU's per-step numbers as columns (what its StepMetrics rows hold), for vectorized aggregates."""

    gpu: int
    step: np.ndarray  # int64 step ids
    start_ms: np.ndarray
    step_ms: np.ndarray
    mat: np.ndarray  # (n, categories) ms
    busy: np.ndarray  # device busy ms
    kernels: np.ndarray  # int64 counts
    collectives: np.ndarray
    memcpys: np.ndarray
    first_kernel_ms: np.ndarray  # inf = none
    first_launch_ms: np.ndarray  # inf = none
    #: ms of kernel time per step the GPU's next work waited for (:func:`gpu_critical_ms`); None: not measured
    critical: np.ndarray | None = None
    #: per kernel class (:data:`CRITICAL_CLASSES`): (its critical ms, its kernel ms), summed over the kept steps
    critical_classes: dict[str, tuple[float, float]] = field(default_factory=dict)

    def take(self, idx: np.ndarray) -> "StepArrays":
        """The rows at ``idx`` (in that order) as columns: a rule that shows a few rows makes only those
        (``rules.base.step_windows``)."""
        per_row = {f.name: getattr(self, f.name)[idx] for f in dataclasses.fields(self)
                   if isinstance(getattr(self, f.name), np.ndarray)}
        return dataclasses.replace(self, **per_row)

    def rows(self) -> list[StepMetrics]:
        fk = [None if x == NONE_MS else x for x in self.first_kernel_ms.tolist()]
        fl = [None if x == NONE_MS else x for x in self.first_launch_ms.tolist()]
        gpu = self.gpu
        return [StepMetrics(step=s, gpu=gpu, start_ms=st, step_ms=sm, breakdown=_breakdown(bd), device_busy_ms=bu, kernel_count=kn,
                            first_kernel_ms=k, first_launch_ms=la, collective_calls=cc, memcpy_count=mc)
                for s, st, sm, bd, bu, kn, k, la, cc, mc in zip(
                    self.step.tolist(), self.start_ms.tolist(), self.step_ms.tolist(), self.mat.tolist(), self.busy.tolist(),
                    self.kernels.tolist(), fk, fl, self.collectives.tolist(), self.memcpys.tolist())]


def _first_per_step(step: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Per step index in [0, n): the minimum of ``values`` (int64 max where the step has none)."""
    out = np.full(n, np.iinfo(np.int64).max, np.int64)
    reduce_at(np.minimum, out, step, values)
    return out


def gpu_step_arrays(ctx: Context, g: GpuCtx) -> tuple[StepArrays, dict, Attribution | None]:
    """Per-step columns of one GPU, its category intervals and their painting (both reused for its gaps:
    :func:`step_gaps`)."""
    lend = launch_ends(ctx, g)
    iv = category_intervals(ctx, g, lend)
    w = g.windows
    n = w.shape[0]
    painted = Attribution(iv, int(w[:, 0].min()), int(w[:, 1].max())) if n else None
    mat = attribute(iv, w, painted) / PS_PER_MS
    d = g.d
    kind = d.kind
    inside = g.step >= 0
    st_in = g.step[inside]
    k_in = kind[inside]
    is_k = k_in == devices.KIND_KERNEL
    is_c = k_in == devices.KIND_COLLECTIVE
    kcount = np.bincount(st_in[is_k], minlength=n)[:n] if n else np.zeros(0, np.int64)
    ccount = np.bincount(st_in[is_c], minlength=n)[:n] if n else np.zeros(0, np.int64)
    mcount = np.bincount(st_in[~is_k & ~is_c], minlength=n)[:n] if n else np.zeros(0, np.int64)
    del k_in, is_k, is_c
    first_k = _first_per_step(st_in, d.start[inside], n)
    launch_in = g.launch[inside]
    hl = launch_in >= 0
    first_l = _first_per_step(st_in[hl], ctx.h.start[launch_in[hl]], n)
    del st_in, launch_in, hl
    # busy = union of all device activity within the window
    us, ue = d.busy()
    if n:
        busy_cov = _Cover(us.astype(np.int64, copy=False), ue.astype(np.int64, copy=False))
        busy_iv = {c: (np.zeros(0, np.int64),) * 2 for c in PRIORITY}
        busy_iv["device_compute"] = (us, ue)
        busy = attribute(busy_iv, w, _single(busy_cov))[:, _CAT_INDEX["device_compute"]] / PS_PER_MS
    else:
        busy = np.zeros(0)
    big = np.iinfo(np.int64).max
    origin = ctx.steps.origin_ps
    fk = np.where(first_k == big, NONE_MS, (first_k - origin) / PS_PER_MS)
    fl = np.where(first_l == big, NONE_MS, (first_l - origin) / PS_PER_MS)
    classes: dict[str, tuple[float, float]] = {}
    arr = StepArrays(gpu=d.gpu, step=ctx.steps.ids[:n].astype(np.int64), start_ms=(w[:, 0] - origin) / PS_PER_MS,
                     step_ms=(w[:, 1] - w[:, 0]).astype(np.float64) / PS_PER_MS, mat=mat, busy=busy, kernels=kcount.astype(np.int64),
                     collectives=ccount.astype(np.int64), memcpys=mcount.astype(np.int64), first_kernel_ms=fk, first_launch_ms=fl,
                     critical=gpu_critical_ms(ctx, g, n, classes, lend=lend, busy=recorded_host_work(ctx, g, iv),
                                              calls=host_thread_calls(ctx, g)))
    arr.critical_classes = classes
    return arr, iv, painted


def critical_time(start: np.ndarray, end: np.ndarray, ready: np.ndarray, known: np.ndarray,
                  waited: np.ndarray) -> np.ndarray:
    """Per device event (one GPU's, by start): the part of its duration the GPU's next work waited for (issue #37).

    A kernel that ends sooner shortens the step only if the next work on its GPU was already ready to run: then
    the GPU, not the host, is the bottleneck.  Event ``i`` is followed by event ``i + 1``, ready at ``ready[i + 1]``
    (its launch call's end on the host); the critical part of ``i`` is ``min(duration, max(0, end - that ready
    time))``: where the next launch came after ``i`` ended, the GPU idled and a faster ``i`` only lengthens the
    idle.  The whole duration counts where nothing caps it: the last event, a next event with no known launch
    (``known`` false), or an end the host was blocked waiting for (``waited``: a sync or a blocking copy returns
    when the GPU's queue drains, so the next launch follows the GPU, not the host's own pace)."""
    return _critical_and_durations(start, end, ready, known, waited)[0]


def _critical_and_durations(start: np.ndarray, end: np.ndarray, ready: np.ndarray, known: np.ndarray,
                            waited: np.ndarray | None, unrecorded: np.ndarray | None = None
                            ) -> tuple[np.ndarray, np.ndarray]:
    """(:func:`critical_time`, the events' durations in ps as float64, at least 0) -- the durations it starts from,
    which :func:`gpu_critical_ms` weighs the kernel classes by: made once, not twice a GPU (2.7 ms over the dense
    100 MB capture's 8 GPUs).  ``waited`` None: no end the host waited for.  ``unrecorded`` (:func:`_unrecorded_before`,
    ps per event; None: not measured, every late launch the host's pace): how long before the GPU's frontier at each
    event's end the host had last been seen at its own work -- a wait no event records can have lasted that long, and
    a gain at the frontier reaches the host by up to as much."""
    dur = np.maximum(end - start, 0).astype(np.float64)
    if start.size < 2:
        return dur.copy(), dur
    slack = (end[:-1] - ready[1:]).astype(np.float64)
    if unrecorded is not None:  # the GPU's last work before an idle the host may have waited through unrecorded
        last = end[:-1] >= np.maximum.accumulate(end)[:-1]
        slack = np.maximum(slack, np.where(last, unrecorded[:-1], 0.0))
    capped = np.minimum(dur[:-1], np.maximum(slack, 0.0))
    out = dur.copy()
    cap = known[1:] if waited is None else known[1:] & ~waited[:-1]
    out[:-1] = np.where(cap, capped, dur[:-1])
    np.minimum(out, _carried(start, end, ready, cap, waited, unrecorded), out=out)
    return out, dur


def _unrecorded_before(start: np.ndarray, end: np.ndarray, busy: tuple[np.ndarray, np.ndarray] | None,
                       calls: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray | None:
    """Per device event (by start): ps from the host's last recorded own work (``busy``: :func:`recorded_host_work`,
    disjoint and sorted) up to the GPU's frontier at the event's end (the latest end so far) -- 0 where that work runs
    through the frontier or the host is back at it within ``metrics.unrecorded_wake_us`` of it (a wait the runtime's
    callback ends wakes its thread later), inf where the host recorded none before it; None where ``busy`` is None.

    Why (issue #37 class 4, h37-idle64): a late next launch is no proof that the host paced the GPU.  A JAX host
    blocked until its step's result is ready (``block_until_ready``, a donated buffer: a wait on a future the
    runtime's callback thread sets) and a TensorFlow host fetching its step's outputs record nothing while they wait:
    their next launch follows the GPU's drain by their own latency, and a faster GPU moves it.  Only the host busy
    with its own recorded work (an op, a runtime call, Python) at the moment the GPU drained was provably not
    waiting for it; an unrecorded stretch before the drain is time the host may have waited, and the GPU's gain
    reaches it by as much (the demo's fp32 V100 MatMuls, h37-idle63's cap read as saving ~0).

    ``calls`` (:func:`host_thread_calls`, sorted by end): the host back at its work within a wake-up says it ran
    through the drain only where it left no recorded call in between -- a call that spans the drain and returns
    after it, before the host's next work (a TensorFlow ``FunctionRun`` whose outputs the host fetches, a step's
    range), is the host released by the GPU, however soon its next work follows (h37-rev64a: the demo's fp32 loop
    with a 300 us Keras callback after each step read its 6.4 ms mixed-precision saving as 0)."""
    if busy is None:
        return None
    front = np.maximum.accumulate(end).astype(np.int64, copy=False)
    bs, be = busy
    if not bs.size:
        return np.full(front.shape, np.inf)
    j = np.searchsorted(bs, front, side="right") - 1
    before = np.where(j >= 0, (front - be[np.maximum(j, 0)]).astype(np.float64), np.inf)
    # the host back at its work within a wake-up of the drain was running through it, not woken by it
    after = np.where(j + 1 < bs.size, (bs[np.minimum(j + 1, bs.size - 1)] - front).astype(np.float64), np.inf)
    wake = T("metrics.unrecorded_wake_us") * PS_PER_US
    woke = after >= wake
    if calls is not None:  # back within a wake-up (``after`` below it) yet out of a call that held it through the drain
        woke |= _returned_between(front, front + np.minimum(after, wake).astype(np.int64), calls)
    return np.where((before > 0) & woke, before, 0.0)


def _returned_between(lo: np.ndarray, hi: np.ndarray, calls: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Bool per ``lo``: a call of ``calls`` ((starts, ends), sorted by end) began at or before ``lo`` and ended in
    ``(lo, hi]`` -- the host returned from a call that held it through ``lo``."""
    cs, ce = calls
    a = np.searchsorted(ce, lo, side="right")
    b = np.searchsorted(ce, hi, side="right")
    out = np.zeros(lo.shape, bool)
    some = np.flatnonzero(b > a)
    if some.size:  # the earliest start among the calls ending in the window
        first = np.minimum.reduceat(np.r_[cs, cs[-1]], np.ravel(np.column_stack([a[some], b[some]])))[::2]
        out[some] = first <= lo[some]
    return out


def host_thread_calls(ctx: Context, g: GpuCtx) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) int64, sorted by end, of every recorded event on the host's threads that run GPU ``g``'s
    program -- those that launch its work and those that open its steps (its marker's thread): where the host returns
    from a call, a wait inside it may have ended (:func:`_unrecorded_before`)."""
    h = ctx.h
    lau = g.launch[g.launch >= 0]
    if not lau.size or not h.end.size:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    rows = np.flatnonzero(np.isin(h.line, np.union1d(h.line[lau], _step_lines(ctx))))
    cs, ce = h.start[rows].astype(np.int64, copy=False), h.end[rows].astype(np.int64, copy=False)
    o = np.argsort(ce, kind="stable")
    return cs[o], ce[o]


def _step_lines(ctx: Context) -> np.ndarray:
    """The host's lines holding an event that opens a kept step's window to the ps, or marks a step
    (``Context.step_marks``): the threads of the steps' markers, read once per context (a search per event, not a
    sort of every event per GPU: ``np.isin`` took 0.32 of a 30 MB dense capture's 3.0 s over its 8 GPUs)."""
    got = ctx.memo.get("step_lines")
    if got is None:
        h = ctx.h
        ws = np.sort(ctx.steps.host_windows[:, 0].astype(np.int64))
        opens = ctx.step_marks.copy()
        if ws.size:
            st = h.start.astype(np.int64, copy=False)
            opens |= ws[np.minimum(np.searchsorted(ws, st), ws.size - 1)] == st
        got = ctx.memo["step_lines"] = sorted_unique(h.line[opens])
    return got


def recorded_host_work(ctx: Context, g: GpuCtx, iv: dict[str, tuple[np.ndarray, np.ndarray]]
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint sorted (starts, ends) int64 of the host's own recorded work for GPU ``g``: the ledger's host work
    (``iv``: ops that launch nothing, the program's Python less the loop's frames, an asynchronous call's stall) and
    every event on the threads that launch ``g``'s work (an op launching kernels, a view's bookkeeping, a runtime
    call: the host running the program) -- less what says nothing of where the host is (a step's marker or range, an
    event spanning a whole step, the device allocator's calls:
    ``cudaFree`` waits for the device) and less every wait it records (syncs, blocking copies, polls, the
    framework's reads of device values).  What is not in it -- a gap no event records -- is no evidence of the host's
    pace (:func:`_unrecorded_before`)."""
    h = ctx.h
    parts = [tuple(x.astype(np.int64, copy=False) for x in iv[c]) for c in ("host_compute", "host_python", "async_stall")
             if c in iv and iv[c][0].size]
    lau = g.launch[g.launch >= 0]
    if lau.size and h.end.size:
        on = np.isin(h.line, sorted_unique(h.line[lau]))
        on &= ~(ctx.step_marks | h.name_mask(ctx.fw.step_marker))
        if ctx.alloc_calls is not None and ctx.alloc_calls.size:
            on[ctx.alloc_calls] = False
        rows = np.flatnonzero(on)
        cs, ce = h.start[rows].astype(np.int64, copy=False), h.end[rows].astype(np.int64, copy=False)
        keep = ~spans_any_step(ctx, _step_windows(g), cs, ce)
        parts.append((cs[keep], ce[keep]))
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    bs, be = union_intervals(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))
    w = ctx.waits
    cut = [(w.start, w.end)]
    if ctx.blocked_spans is not None:
        cut.append(ctx.blocked_spans)
    reads = np.flatnonzero(h.name_mask(ctx.fw.blocking_read_event)) if h.end.size else np.zeros(0, np.int64)
    cut.append((h.start[reads], h.end[reads]))
    cs = np.concatenate([c[0].astype(np.int64, copy=False) for c in cut])
    ce = np.concatenate([c[1].astype(np.int64, copy=False) for c in cut])
    return subtract_intervals(bs, be, cs, ce) if cs.size else (bs, be)


def _carried(start: np.ndarray, end: np.ndarray, ready: np.ndarray, cap: np.ndarray, waited: np.ndarray | None,
             unrecorded: np.ndarray | None = None) -> np.ndarray:
    """Per event (by start): the most of a gain at its end that reaches the host -- the least slack of the GPU's
    frontier (the latest end so far) over the next event's ready time where the GPU idled before that event, over
    every later event up to the first end the host waited for (a sync, a blocking copy: the host then takes the gain),
    or may have (an idle the host drained into unrecorded: :func:`_unrecorded_before`, that idle's slack as long), or
    the capture's end; ps as float64.

    Why: an event ending sooner lets the next start sooner only by that slack, and the next passes on no more than
    its own: a chain of GEMMs back to back, each critical to the next, still ends in the GPU's idle wait for the
    host's next launch, which a faster chain only lengthens.  Kernel by kernel (the next one ready) the slack read
    87% of a host-paced loop's GEMM time as critical, a 3.3% mixed-precision saving the loop could not get
    (h37-idle63: JonathanHourany/pytorch-sandbox's batch-2056 MLP on an RTX 3080)."""
    n = end.size
    dmax = float(np.max(end - np.minimum(end, ready))) if n else 0.0  # no slack exceeds this: it bounds nothing above
    front = np.maximum.accumulate(end)[:-1]
    slack = np.full(n, dmax)
    # only where the GPU idled before the next event: one that starts at the frontier ran back to back, and its launch
    # call ending after the frontier says when the call returned, not that the GPU waited for it
    idle = cap & (start[1:] > front)
    at_idle = (front - ready[1:]).astype(np.float64)
    ends = np.zeros(n, bool) if waited is None else waited.copy()
    if unrecorded is not None:
        # the host unrecorded before the drain may have waited there that long (h37-idle64): a gain up to that takes
        # the host's whole later timeline with it -- the idle is an end the host may have waited for, as a sync is
        maybe = idle & (unrecorded[:-1] > 0)
        at_idle = np.where(maybe, np.maximum(at_idle, unrecorded[:-1]), at_idle)
        ends[:-1] |= maybe
    slack[:-1] = np.where(idle, np.clip(at_idle, 0.0, dmax), dmax)
    if not ends.any():
        return np.minimum.accumulate(slack[::-1])[::-1]
    # the least slack from each event to its run's end, a run closing at an end the host waited for: offset each run
    # above all earlier ones so a suffix minimum never reaches back across a run's end
    run = np.cumsum(ends) - ends
    big = (dmax + 1.0) * run.astype(np.float64)
    return np.minimum.accumulate((slack + big)[::-1])[::-1] - big


#: Kernel classes whose critical share a saving is scaled by (``HostMetrics.compute_critical_share``): the matrix
#: kernels (GEMMs, convolutions, attention: what Tensor Core and GEMM-efficiency fixes speed up) and the others
#: (element-wise, reductions, copies as kernels: what fusion speeds up).
CRITICAL_CLASSES = ("matmul", "other")


def gpu_critical_ms(ctx: Context, g: GpuCtx, n: int, classes: dict[str, tuple[float, float]] | None = None,
                    lend: np.ndarray | None = None, busy: tuple[np.ndarray, np.ndarray] | None = None,
                    calls: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Per kept step of one GPU: ms of its kernel time (``device_compute`` kernels) the GPU's next work waited for
    (:func:`critical_time`): the most a faster kernel can take off the step while the host paces the GPU.  The
    next work is ready at its launch call's end (the correlation every format records); the host blocked in a
    runtime call (``blocked_spans``) at a kernel's end waits for the GPU, so that kernel counts whole.

    ``classes`` (filled when given): per :data:`CRITICAL_CLASSES`, (critical ms, kernel ms) over the kept steps -- a
    fix speeds up the kernels it touches, and only their critical part shortens the step."""
    d, h = g.d, ctx.h
    if not n or not len(d):
        return np.zeros(n)
    known = (g.launch >= 0) if h.end.size else np.zeros(len(d), bool)
    if lend is None and h.end.size:
        lend = launch_ends(ctx, g)
    ready = np.where(known, lend, d.start) if h.end.size else d.start
    waited = None  # no end the host waited for
    if ctx.blocked_spans is not None and ctx.blocked_spans[0].size:
        bs, be = union_intervals(*ctx.blocked_spans)
        j = np.searchsorted(bs, d.end, side="right") - 1
        waited = (j >= 0) & (d.end <= be[np.maximum(j, 0)])
    crit, dur = _critical_and_durations(d.start, d.end, ready, known, waited,
                                        _unrecorded_before(d.start, d.end, busy, calls))
    m = (g.step >= 0) & (d.kind == devices.KIND_KERNEL) & (g.step < n)
    if classes is not None:
        mat = gemm_events(d, ctx)  # by name, as the FLOP count reads them
        for cls, sel in zip(CRITICAL_CLASSES, (m & mat, m & ~mat)):
            classes[cls] = (float(crit[sel].sum()) / PS_PER_MS, float(dur[sel].sum()) / PS_PER_MS)
    return np.bincount(g.step[m].astype(np.int64, copy=False), weights=crit[m], minlength=n)[:n] / PS_PER_MS


def _single(cov: "_Cover") -> Attribution:
    """An Attribution whose every prefix union is ``cov`` (one category, device_compute)."""
    att = Attribution.__new__(Attribution)
    att.ok = True
    att.covers = [cov] * len(PRIORITY)
    return att


def in_lockstep(cols: list[StepArrays]) -> bool:
    """Whether the GPUs' steps (each GPU's kept steps, in one order) keep in step: every GPU's step k starts before any
    GPU's next kept step starts.  Ranks that a collective binds each step do (no rank starts step k+1 before the
    collective of step k, which waits for the last rank's step k); ranks bound by none drift apart, a slower one's step
    k ever later, until it starts after another's k+1 -- then step k is no one host-wide step, and the spread of the
    GPUs' starts is the drift the slower rank's own steps make (``gpu_imbalance``), not a delay each step
    (``launch_skew``) (h37-randjobs3: 2 ranks, one 1.3x slower, read as launch skew of 252% of the step)."""
    if len(cols) < 2 or any(c.start_ms.shape != cols[0].start_ms.shape for c in cols) or cols[0].start_ms.size < 2:
        return True
    st = np.stack([c.start_ms for c in cols])
    return bool((st[:, :-1].max(axis=0) <= st[:, 1:].min(axis=0)).all())


def host_arrays(ctx: Context, per_gpu: dict[int, StepArrays]) -> StepArrays | None:
    """Host-wide columns per step: mean over the GPUs the per-step numbers are shared among (``Context.sharing``: the
    active ones; where none is, those that copied in the steps), counts summed; None when :func:`host_rows` must
    decide."""
    act = [g.d.gpu for g in ctx.sharing if g.d.gpu in per_gpu]  # the GPUs every per-step number is shared among
    if not act:
        act = list(per_gpu)[:1]
    n = ctx.steps.count
    if not act or any(per_gpu[gid].step.shape[0] != n for gid in act):
        return None
    k = len(act)
    cols = [per_gpu[gid] for gid in act]

    def mean(get):  # sequential sum over GPUs in `act` order, as sum() over the rows did
        acc = get(cols[0]).copy()
        for c in cols[1:]:
            acc = acc + get(c)
        return acc / k

    def total(get):
        acc = get(cols[0]).copy()
        for c in cols[1:]:
            acc = acc + get(c)
        return acc

    # the row is the GPUs' mean step (the ledger's), so it stands where their mean start is: each GPU's windows tile,
    # so the mean start plus the mean step is the next row's mean start, and the rows tile as each GPU's do.  The first
    # GPU's start with the mean step is a window of no GPU: where the GPUs' skew changes from step to step it reaches
    # past the next row's start (h37-randjobs3: ranks drifting apart; h37-zero12law: 2 ranks in step, 330 then 457 us
    # apart, rows overlapping by 63 us).  The trace windows are the detected ones (``rules.base.step_windows``).
    start = mean(lambda c: c.start_ms)
    fk = cols[0].first_kernel_ms.copy()
    fl = cols[0].first_launch_ms.copy()
    for c in cols[1:]:
        np.minimum(fk, c.first_kernel_ms, out=fk)
        np.minimum(fl, c.first_launch_ms, out=fl)
    crit = mean(lambda c: c.critical) if all(c.critical is not None for c in cols) else None
    return StepArrays(gpu=None, step=cols[0].step, start_ms=start, step_ms=mean(lambda c: c.step_ms), mat=mean(lambda c: c.mat),
                      busy=mean(lambda c: c.busy), kernels=total(lambda c: c.kernels), collectives=total(lambda c: c.collectives),
                      memcpys=total(lambda c: c.memcpys), first_kernel_ms=fk, first_launch_ms=fl, critical=crit)


def mean_critical(host_arr: StepArrays | None, per_gpu: dict[int, StepArrays], ctx: Context) -> float | None:
    """The GPU-critical kernel time per step and GPU (:func:`gpu_critical_ms`), averaged as the ledger is: the host's
    per-step mean over its active GPUs, then over the steps; None without steps or measurements."""
    if host_arr is not None and host_arr.critical is not None:
        return float(host_arr.critical.mean()) if host_arr.critical.size else None
    cols = [per_gpu[g.d.gpu].critical for g in ctx.active if g.d.gpu in per_gpu]
    cols = [c for c in cols if c is not None and c.size]
    return float(np.mean([c.mean() for c in cols])) if cols else None


def critical_shares(per_gpu: dict[int, StepArrays], ctx: Context) -> dict[str, float]:
    """Per kernel class (:data:`CRITICAL_CLASSES`): the share of its kernel time, over the kept steps of the active
    GPUs, that the GPU's next work waited for (:func:`gpu_critical_ms`); a class with no kernel time is left out."""
    crit = dict.fromkeys(CRITICAL_CLASSES, 0.0)
    tot = dict.fromkeys(CRITICAL_CLASSES, 0.0)
    for g in ctx.active:
        arr = per_gpu.get(g.d.gpu)
        for cls, (c, t) in (arr.critical_classes.items() if arr is not None else ()):
            crit[cls] += c
            tot[cls] += t
    return {cls: min(1.0, crit[cls] / tot[cls]) for cls in CRITICAL_CLASSES if tot[cls] > 0}


def host_rows(ctx: Context, per_gpu: dict[int, list[StepMetrics]]) -> list[StepMetrics]:
    """Host-wide row per step: mean over the GPUs the per-step numbers are shared among (``Context.sharing``),
    counts summed."""
    act = [g.d.gpu for g in ctx.sharing if g.d.gpu in per_gpu]  # the GPUs every per-step number is shared among
    if not act:
        act = list(per_gpu)[:1]
    out = []
    n = ctx.steps.count
    for i in range(n):
        rs = [per_gpu[gid][i] for gid in act if i < len(per_gpu[gid])]
        if not rs:
            w = ctx.steps.host_windows[i]
            out.append(StepMetrics(int(ctx.steps.ids[i]), None, (int(w[0]) - ctx.steps.origin_ps) / PS_PER_MS,
                                   float(w[1] - w[0]) / PS_PER_MS, Breakdown(other=float(w[1] - w[0]) / PS_PER_MS), 0.0, 0))
            continue
        k = len(rs)
        bd = Breakdown(**{c: sum(getattr(r.breakdown, c) for r in rs) / k for c in BREAKDOWN_CATEGORIES})
        fk = [r.first_kernel_ms for r in rs if r.first_kernel_ms is not None]
        fl = [r.first_launch_ms for r in rs if r.first_launch_ms is not None]
        out.append(StepMetrics(
            step=rs[0].step, gpu=None, start_ms=sum(r.start_ms for r in rs) / k, step_ms=sum(r.step_ms for r in rs) / k,
            breakdown=bd, device_busy_ms=sum(r.device_busy_ms for r in rs) / k, kernel_count=sum(r.kernel_count for r in rs),
            first_kernel_ms=min(fk) if fk else None, first_launch_ms=min(fl) if fl else None,
            collective_calls=sum(r.collective_calls for r in rs), memcpy_count=sum(r.memcpy_count for r in rs),
        ))
    return out


def average(rows: list[StepMetrics]) -> Breakdown:
    """Mean breakdown over rows (summed in row order, as a running Python sum would)."""
    if not rows:
        return Breakdown()
    return average_matrix(np.array([_BD_GET(r.breakdown) for r in rows], dtype=np.float64))


def average_matrix(mat_ms: np.ndarray) -> Breakdown:
    """:func:`average` of rows given as an (n, categories) matrix: a sequential (cumsum) sum per category, / n."""
    k = mat_ms.shape[0]
    if k == 0:
        return Breakdown()
    tot = np.cumsum(mat_ms, axis=0)[-1]
    return _breakdown((tot / k).tolist())


def step_gaps(ctx: Context, g: GpuCtx, iv: dict, painted: Attribution | None = None,
              marked: np.ndarray | None = None, comm: np.ndarray | None = None) -> GapColumns | None:
    """GPU idle after each kept step: the longest idle stretch from step k's last kernel to the first device event of
    the step after it in the capture (``GpuCtx.next_start``: kept or dropped -- a warm-up step, the stock rule's
    last).  One gap per kept step that a step follows, so the gaps and their periods (step k's start to the next
    step's) are counted over the same steps as the step they are compared with; a gap never spans a dropped step
    (h37-left46: a benchmark's six kept GPU bursts had five gaps, one running over a dropped warm-up burst, the mean gap
    957.9 ms beside a mean step of 877.5 ms that held it).

    Step k's end is anchored on its last kernel (collectives count), not its last copy: with device-defined steps
    (``xla_modules``: a module event spans only its kernels) the next step's input copy (H2D) lies before the next
    module's first kernel, i.e. at the end of step k's window, and "last device end of k -> first device start of
    k+1" would measure the few us between that copy and the next kernel instead of the idle time between the
    steps.  Between the two anchors the gap is the longest stretch without any device activity (copies
    included), so one capture gives the same gaps whatever source defined its steps; with host-defined steps
    (copies of step k+1 inside its window) it is the old "last device end -> first device start" gap.  A step
    without kernels falls back to its last copy.

    Columns, not a :class:`StepGap` per gap: a 100 MB capture has ~9,000 gaps, of which the report keeps 50
    (:func:`summarize_gaps`); None where there are none.  ``marked``: the user's ranges (``frameworks.user_ranges.program_ranges``),
    whose time in the gaps is named (:func:`range_time`); ``comm``: a communication library's ranges
    (``frameworks.user_ranges.communication_ranges``), named apart.
    """
    d = g.d
    n = ctx.steps.count
    if n < 1 or not len(d):
        return None
    last, first = _step_edges(g, n)
    # the gap after step k ends at the first device event at or after the next step's start (that step's first
    # event, kept or not); a kept next step that holds none on this GPU leaves no gap here, as before
    nxt = g.next_start if g.next_start is not None else np.append(g.windows[1:, 0], -1)
    nxt = nxt.astype(np.int64, copy=False)
    b, kept_next = _gap_ends(g, nxt, first)
    # idle stretches of this GPU (complement of the union of all its device activity), sorted and disjoint;
    # a (a device event's end) and b (one's start) lie inside busy stretches, so the idle stretches between
    # them are exactly those with start >= a and end <= b
    us, ue = d.busy()
    gs, ge = ue[:-1].astype(np.int64, copy=False), us[1:].astype(np.int64, copy=False)
    found = _gap_windows(ctx, g, gs, ge, (last, first, b), nxt, kept_next)
    if found is None:
        return None
    win, owner, after_step, partial = found
    if painted is not None and painted.ok:
        lo, hi = painted.bounds
        if int(win[:, 0].min()) < lo or int(win[:, 1].max()) > hi:
            painted = None
    return _gap_columns(ctx, g, iv, painted, win, owner, after_step, partial, nxt, marked, comm)


def _step_edges(g: GpuCtx, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per kept step (ps): the end of its last kernel (collectives count; its last device event where it ran no
    kernel) and the start of its first device event.  Why the last kernel, not the last copy: with device-defined
    steps the next step's input copy lies at the end of this step's window (see :func:`step_gaps`)."""
    d = g.d
    inside = g.step >= 0
    st_in = g.step[inside]
    st_end, st_start = d.end[inside], d.start[inside]
    is_k = (d.kind[inside] == devices.KIND_KERNEL) | (d.kind[inside] == devices.KIND_COLLECTIVE)
    last = np.full(n, -1, np.int64)
    reduce_at(np.maximum, last, st_in[is_k], st_end[is_k])
    last_any = np.full(n, -1, np.int64)
    reduce_at(np.maximum, last_any, st_in, st_end)
    last = np.where(last >= 0, last, last_any)
    return last, _first_per_step(st_in, st_start, n)


def _gap_ends(g: GpuCtx, nxt: np.ndarray, first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per kept step: where the gap after it may end (ps; int64 max: nowhere) -- the next kept step's first device
    event, else the first device event at or after the next step's start -- and whether that next step is kept.
    Why both: a gap into a dropped step is cut at that step's start (:func:`_gap_windows`)."""
    d = g.d
    n = first.size
    big = np.iinfo(np.int64).max
    starts = np.sort(d.start.astype(np.int64, copy=False))
    pos = np.searchsorted(starts, np.maximum(nxt, 0), side="left")
    b = np.where((nxt >= 0) & (pos < starts.size), starts[np.minimum(pos, starts.size - 1)], big)
    w_all = g.windows.astype(np.int64, copy=False)
    kept_next = np.zeros(n, dtype=bool)
    kept_next[:-1] = nxt[:-1] == w_all[1:, 0]  # the next step is kept: its first event is the one its window holds
    b[:-1] = np.where(kept_next[:-1], first[1:], b[:-1])
    return b, kept_next


def _gap_windows(ctx: Context, g: GpuCtx, gs: np.ndarray, ge: np.ndarray,
                 edges: tuple[np.ndarray, np.ndarray, np.ndarray], nxt: np.ndarray, kept_next: np.ndarray,
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The gaps as (window ps, owning step index, the step each follows, partial), sorted by start; None where there
    are none.  Each is the longest idle stretch after a kept step's last work (``edges``: the steps' last kernel end,
    first device start, and where each gap may end); a gap into a dropped step is cut at that step's start, and a
    kept step after a dropped one adds the part of the gap that lies in it (its start to its first work).  Why both
    pieces: no gap spans a dropped step, and no part of one is lost where a warm-up step sits between two kept ones."""
    n = ctx.steps.count
    last, first, b = edges
    after = _longest_idle(gs, ge, last, b)
    # a gap into a dropped step ends where that step begins: its time is no kept step's, and no ledger holds it (a
    # gap into a kept step runs on to its first work, that step's leading idle)
    drop_next = ~kept_next & (nxt >= 0)
    after[drop_next, 1] = np.minimum(after[drop_next, 1], np.maximum(nxt[drop_next], after[drop_next, 0]))
    # a kept step after a dropped one: the end of the gap between them lies in it, from its start to its first work
    prev = g.prev_id if g.prev_id is not None and g.prev_id.size == n else np.full(n, -1, np.int64)
    prev_kept = np.zeros(n, dtype=bool)
    prev_kept[1:] = kept_next[:-1]
    lead = _longest_idle(gs, ge, g.windows.astype(np.int64, copy=False)[:, 0], first, clip=True)
    lead[(prev < 0) | prev_kept] = -1
    pieces = [(after, ctx.steps.ids), (lead, prev)]
    win = np.concatenate([p for p, _ in pieces])
    owner = np.concatenate([np.arange(n), np.arange(n)])
    after_step = np.concatenate([ids for _, ids in pieces]).astype(np.int64)
    partial = np.concatenate([drop_next, np.ones(n, dtype=bool)])
    ok = (win[:, 0] >= 0) & (win[:, 1] > win[:, 0])
    win, owner, after_step, partial = win[ok], owner[ok], after_step[ok], partial[ok]
    if not win.shape[0]:
        return None
    o = np.argsort(win[:, 0], kind="stable")
    return win[o], owner[o], after_step[o], partial[o]


def _gap_columns(ctx: Context, g: GpuCtx, iv: dict, painted: Attribution | None, win: np.ndarray, owner: np.ndarray,
                 after_step: np.ndarray, partial: np.ndarray, nxt: np.ndarray, marked: np.ndarray | None,
                 comm: np.ndarray | None) -> GapColumns:
    """What fills each gap -- the ledger's categories, the host's ops, the user's and communication ranges, OS waits,
    held work -- beside each gap's step and period.  Why the period: a gap's share is of the time it sits in, the
    step's start to the next step's, never of the mean step alone."""
    mat = attribute(iv, win, painted) / PS_PER_MS
    ci = _CAT_INDEX
    gap = (win[:, 1] - win[:, 0]).astype(np.float64) / PS_PER_MS
    # each kept step's period: its start to the next step's in the capture (kept or not), its own window where none
    # follows; the mean step plus the mean time between a step's end and the next's start, over the same steps
    w_all = g.windows.astype(np.int64, copy=False)
    w_all0 = w_all[:, 0]
    step_ms = (w_all[:, 1] - w_all0).astype(np.float64) / PS_PER_MS
    period = np.where(nxt >= 0, (nxt - w_all0).astype(np.float64) / PS_PER_MS, step_ms)
    period = np.maximum(period, step_ms)
    cycle = period[owner]
    return GapColumns(gpu=g.d.gpu, after_step=after_step, gap_ms=gap, input_wait_ms=mat[:, ci["input_wait"]],
                      step_ms=step_ms, period_ms=period, partial=partial,
                      launch_ms=mat[:, ci["launch_wait"]], host_other_ms=mat[:, ci["host_compute"]],
                      booked_ms=_booked_in_steps(g, iv, win, painted), cycle_ms=cycle, ops_ms=ops_in_gaps(ctx, g, win),
                      frames_ms=frames_in_gaps(ctx, g, win),
                      ranges_ms=_ranges_in_gaps(ctx, g, iv, win, marked) if marked is not None and marked.size else {},
                      comm_ms=range_time(ctx, g, win[:, 0], win[:, 1], comm, _step_windows(g))
                      if comm is not None and comm.size else {},
                      **dict(zip(("os_ms", "os_max_ms"), os_waits_in(ctx, g, win[:, 0], win[:, 1]))),
                      held_ms=_held_in(iv, win), profiler_ms=mat[:, ci["profiler"]], windows=win,
                      in_period_ms=_in_periods(win, w_all0), dispatch_ms=_dispatch_in(ctx, g, win))


def _ranges_in_gaps(ctx: Context, g: GpuCtx, iv: dict, win: np.ndarray, cand: np.ndarray) -> dict[str, float]:
    """Range name -> ms of the gaps ``win`` that the user's ranges ``cand`` span (:func:`range_time`), outside the
    ledger's input wait there (painted as :func:`attribute` paints the gaps).

    Why: a range the program names for fetching its batch (``get_batch``, read as the input pipeline's own event) is
    the input wait's, which the gap's input column and the input-bound finding tell; counted again among the ranges
    "in the gaps", the step-gap finding named it as host work beside "1.51 ms of it input wait" (h37-review19: a TF
    loop's ``get_batch``).  One instant is told once: the ranges hold the gaps' other time."""
    s, e = win[:, 0].astype(np.int64, copy=False), win[:, 1].astype(np.int64, copy=False)
    a, b, cats = painted_segments(iv, int(s.min()), int(e.max()))
    waits = np.asarray(cats, dtype=object) == "input_wait"
    if waits.any():
        s, e = subtract_intervals(s, e, a[waits].astype(np.int64), b[waits].astype(np.int64))
    return range_time(ctx, g, np.asarray(s, np.int64), np.asarray(e, np.int64), cand, _step_windows(g))


def _longest_idle(gs: np.ndarray, ge: np.ndarray, a: np.ndarray, b: np.ndarray, clip: bool = False) -> np.ndarray:
    """(n, 2) ps: per pair (``a``, ``b``) the longest of the idle stretches (``gs``, ``ge``: sorted, disjoint) from ``a``
    to ``b`` (the first of equal ones); (-1, -1) where none.  ``a`` is a device event's end, so the stretches are
    those starting at or after it; ``clip``: ``a`` is any instant (a step's start), and a stretch across it counts
    from it.  ``b`` a device event's start (int64 max: none)."""
    out = np.full((a.size, 2), -1, np.int64)
    big = np.iinfo(np.int64).max
    ok = (a >= 0) & (b < big) & (b > a)
    if not ok.any() or not gs.size:
        return out
    idx = np.flatnonzero(ok)
    j0 = np.searchsorted(ge, a[idx], side="right") if clip else np.searchsorted(gs, a[idx], side="left")
    j1 = np.searchsorted(ge, b[idx], side="right")
    has = j1 > j0
    idx, j0, j1 = idx[has], j0[has], j1[has]
    if not idx.size:
        return out
    lo = np.maximum(gs[j0], a[idx]) if clip else gs[j0]
    best, bs, be = j0.copy(), lo, ge[j0].copy()
    # the usual case is one stretch; a Python loop only where there are several
    for k in np.flatnonzero(j1 - j0 > 1).tolist():
        s_ = gs[j0[k]:j1[k]].copy()
        if clip:
            s_[0] = max(int(s_[0]), int(a[idx[k]]))
        m = int(np.argmax(ge[j0[k]:j1[k]] - s_))
        best[k], bs[k], be[k] = j0[k] + m, s_[m], ge[j0[k] + m]
    out[idx, 0], out[idx, 1] = bs, be
    return out


def _dispatch_in(ctx: Context, g: GpuCtx, win: np.ndarray) -> np.ndarray:
    """ms of each gap of ``win`` (disjoint, sorted) the host spends inside the framework's calls of its compiled
    functions (the outermost dispatch events of the GPU's process, ``Context.dispatch_calls``: JAX's
    ``PjitFunction``), where the framework names them (``Framework.has_dispatch``); zeros elsewhere -- a PyTorch step's
    top-level ops are its own work, not a compiled call's dispatch.

    Why: a loop of tiny jitted calls (wild ``jax_mi300x``: a ``jnp.dot`` a turn on an MI300X, Python traced) spends
    its gaps between steps in the next call's dispatch before its launch (958 of the 1,364 us of its 15 gaps, read by
    hand) and in the loop's frame between the calls; the ledger books both as host work, and only this measure tells
    the gaps' finding that its host work is the calls' dispatch (``step_gaps.call_gaps``)."""
    zero = np.zeros(win.shape[0])
    if not ctx.fw.has_dispatch or not win.size:
        return zero
    rows = ctx.role_rows(DISPATCH_BIT, g.host_mask)
    if not rows.size:
        return zero
    h = ctx.h
    s, e = union_intervals(h.start[rows].astype(np.int64), h.end[rows].astype(np.int64))
    s, e = np.asarray(s, np.int64), np.asarray(e, np.int64)
    return time_within(s, e, win[:, 0].astype(np.int64), win[:, 1].astype(np.int64)) / PS_PER_MS


def _held_in(iv: dict, win: np.ndarray) -> np.ndarray:
    """ms of each window of ``win`` (disjoint, sorted) in which the GPU held work already launched (``held`` and
    ``queued_first`` of :func:`category_intervals`): not the host's time, whatever the host ran meanwhile."""
    parts = [iv[k] for k in ("held", "queued_first") if k in iv and iv[k][0].size]
    if not parts or not win.size:
        return np.zeros(win.shape[0])
    s, e = union_intervals(np.concatenate([p[0] for p in parts]).astype(np.int64),
                           np.concatenate([p[1] for p in parts]).astype(np.int64))
    s, e = np.asarray(s, np.int64), np.asarray(e, np.int64)
    return time_within(s, e, win[:, 0].astype(np.int64), win[:, 1].astype(np.int64)) / PS_PER_MS


def ops_in_gaps(ctx: Context, g: GpuCtx, win: np.ndarray) -> dict[str, float]:
    """Host op name -> ms of the gaps (rows of ``win``: disjoint, sorted) its events fill, counting only the outermost
    of the host's work events (an op and the ops it calls fill the same time once) on the thread whose ops fill the
    most of the gaps: what the step_gaps finding names as where to look (issue #37 surveys: a gap filled by
    ``aten::randn`` on the CPU was reported as "other host work" with no name).  The work events are the ones the
    ledger books as host work for this GPU."""
    h = ctx.h
    if not win.size or not h.start.size:
        return {}
    # and the runtime calls no op encloses, which the ledger books as host work too (:func:`bare_runtime_calls`)
    work = np.union1d(ctx.role_rows(HOST_WORK_BIT, g.host_mask), bare_runtime_calls(ctx, g))
    lo, hi = int(win[0, 0]), int(win[-1, 1])
    cand = work[(h.start[work] < hi) & (h.end[work] > lo)]
    # an event around a whole step (a ``record_function`` over the step's body) is outermost over every op in its
    # gap and names none of them: the ops inside it are named (survey h37-survey11: a 654 ms CPU ``aten::randn``
    # under ``model_inference`` was reported as "`model_inference` 654 ms")
    cand = cand[~around_step_work(ctx, _step_windows(g), cand)]
    if not cand.size:
        return {}
    # which gap each event may overlap: the last gap starting before its end; it overlaps it only if it ends after
    # that gap's start and starts before its end (an event across two gaps is rare: counted in the later one)
    k = np.searchsorted(win[:, 0], h.end[cand], side="left") - 1
    ok = k >= 0
    cand, k = cand[ok], k[ok]
    s = np.maximum(h.start[cand], win[k, 0])
    e = np.minimum(h.end[cand], win[k, 1])
    ok = e > s
    cand, s, e = cand[ok], s[ok], e[ok]
    if not cand.size:
        return {}
    # outermost per thread: sorted by (line, start, longest first), an event inside the running end of the events
    # before it on its line is nested in one of them
    order = np.lexsort((-(h.end[cand] - h.start[cand]), h.start[cand], h.line[cand]))
    cand, s, e = cand[order], s[order], e[order]
    line, st, en = h.line[cand], h.start[cand], h.end[cand]
    run_end = np.empty_like(en)
    outer = np.ones(cand.size, bool)
    for a, b in _runs(line):
        run_end[a:b] = np.maximum.accumulate(en[a:b])
        outer[a + 1:b] = st[a + 1:b] >= run_end[a:b - 1]
    ms_each = (e[outer] - s[outer]).astype(np.float64) / PS_PER_MS
    # one thread's: the one whose ops fill the most gap time (the thread the GPU waits on).  Its outermost events
    # are disjoint, so its ops never add up to more than the gaps; threads running side by side would.
    lines = line[outer].astype(np.int64, copy=False)
    busiest = int(np.argmax(np.bincount(lines - lines.min(), weights=ms_each))) + int(lines.min())
    mine = lines == busiest
    ids = h.name[cand[outer][mine]].astype(np.int64)
    totals = np.bincount(ids, weights=ms_each[mine])
    return {h.names[i]: float(totals[i]) for i in np.flatnonzero(totals > 0).tolist()}


def frames_in_gaps(ctx: Context, g: GpuCtx, win: np.ndarray) -> dict[str, float]:
    """Python frame name -> ms of the gaps (rows of ``win``: disjoint, sorted) that the program's recorded Python
    frames (``Trace.spans``: ``with_stack``'s ``python_function`` events) hold where no host work event of the ledger
    does: the outermost frames with only host work inside (``context.lead_frames``: no runtime call, so no frame
    around the step's launches) on the thread they fill the most of.  Why: the host time the profiler recorded only as
    a Python call is recorded time, and says where the host was -- a loop's ``time.sleep`` between its steps, 10 ms a
    step, read "host work between steps (Python, .item() and other syncs)", no call named, the fix a sync's
    (h37-host71: ``synthetic.torchtrace`` with ``<built-in function sleep>`` recorded, issue #37 classes 3 and 4).
    The ops' own time stays theirs (:func:`ops_in_gaps`): a frame counts only where no op covers it."""
    fr = ctx.trace.spans
    if fr is None or not len(fr) or not win.size:
        return {}
    h = ctx.h
    rows = lead_frames(h, fr, (win[:, 0], win[:, 1]))
    if rows.size:  # the profiler's own frames (``prof.step()``) are its work, no call of the program's
        rows = rows[~frames_named(h, fr, rows, ctx.fw.profiler_frame)]
    if not rows.size:
        return {}
    work = (np.union1d(ctx.role_rows(HOST_WORK_BIT, g.host_mask), bare_runtime_calls(ctx, g)) if len(h)
            else np.zeros(0, np.int64))
    ws, we = win[:, 0].astype(np.int64), win[:, 1].astype(np.int64)
    if work.size:  # the gaps less the host work events': a frame names only the time no op holds
        os_, oe = union_intervals(h.start[work].astype(np.int64), h.end[work].astype(np.int64))
        ws, we = subtract_intervals(ws, we, os_, oe)
    if not ws.size:
        return {}
    s, e = fr.start[rows].astype(np.int64), fr.end[rows].astype(np.int64)
    inside = time_within(ws, we, s, e).astype(np.float64) / PS_PER_MS
    line = fr.line[rows].astype(np.int64)
    if not (inside > 0).any():
        return {}
    busiest = int(np.argmax(np.bincount(line - line.min(), weights=inside))) + int(line.min())
    mine = (line == busiest) & (inside > 0)
    totals = np.bincount(fr.name[rows[mine]].astype(np.int64), weights=inside[mine])
    return {h.names[i]: float(totals[i]) for i in np.flatnonzero(totals > 0).tolist()}


def ranges_in_idle(ctx: Context, g: GpuCtx, cand: np.ndarray) -> dict[str, float]:
    """Range name -> ms of this GPU's idle time inside its kept steps that the range spans (issue #37: a host-bound
    finding said "the host's own work" and not where in the user's code it runs).

    ``cand``: host event indices of the user's ranges (``frameworks.user_ranges.program_ranges``).  A range that spans a whole step
    (the step's own marker, ``ProfilerStep#N``, or a range around the loop) says nothing of where inside the step the
    time goes, and is left out; of the rest only the outermost on their thread count (ranges nest), on the one thread
    whose ranges span the most idle time, so the names never add up to more than the idle time they share."""
    w = _step_windows(g)
    if not cand.size or not w.size:
        return {}
    us, ue = g.d.busy()
    # the GPU's idle stretches (the complement of its activity) clipped to the kept steps' windows, sorted, disjoint
    idle = subtract_intervals(w[:, 0], w[:, 1], us.astype(np.int64, copy=False), ue.astype(np.int64, copy=False))
    return range_time(ctx, g, np.asarray(idle[0], np.int64), np.asarray(idle[1], np.int64), cand, w)


def _waiting_calls(ctx: Context, g: GpuCtx) -> np.ndarray:
    """Host event indices of the communication calls the host may wait for its peers in
    (``frameworks.user_ranges.waiting_communication_ranges``) made by a thread that launches ``g``'s work.

    Why only those: a thread inside a blocking call launches nothing, so the GPU's idle then waits on the call.  A
    call on another thread (an MPI progress or communication thread, a listener parked in ``MPI_Recv``) says nothing
    of what the launching thread does meanwhile -- it may be launching, late -- and is left to the other categories,
    unless every launching thread is blocked on it (:func:`_calls_waited_on`)."""
    comm, on = _calls_on_launchers(ctx, g)
    return comm[on]


def _off_launcher_calls(ctx: Context, g: GpuCtx) -> np.ndarray:
    """Host event indices of the communication calls the host may wait for its peers in, made on ``g``'s process by a
    thread that launches none of ``g``'s work (an OpenMP communication thread, an MPI progress thread); empty where
    none is."""
    comm, on = _calls_on_launchers(ctx, g)
    off = comm[~on]
    return off[g.host_mask[off]] if g.host_mask is not None else off


def _calls_on_launchers(ctx: Context, g: GpuCtx) -> tuple[np.ndarray, np.ndarray]:
    """The capture's waiting communication calls (``frameworks.user_ranges.waiting_communication_ranges``) and, for
    each, whether a thread that launches ``g``'s work made it; none where ``g`` launched nothing."""
    comm = user_ranges.waiting_communication_ranges(ctx.trace.ranges)
    launched = g.launch[g.launch >= 0]
    if not comm.size or not launched.size:
        return comm[:0], np.zeros(0, bool)
    return comm, np.isin(ctx.h.line[comm], np.unique(ctx.h.line[launched]))


def _launchers_blocked(ctx: Context, g: GpuCtx) -> tuple[np.ndarray, np.ndarray] | None:
    """Disjoint sorted (starts, ends) of the stretches in which every thread that launches ``g``'s work is blocked in
    the OS between its runtime calls (:func:`_waits_between_calls`); None where some launching thread has no traced
    wait.  Every one: a launching thread that runs meanwhile may be the late launch itself."""
    launched = g.launch[g.launch >= 0]
    out = None
    for line in np.unique(ctx.h.line[launched]).astype(np.int64) if launched.size else ():
        w = _waits_between_calls(ctx, np.asarray([line], np.int64))
        if w is None:
            return None
        out = w if out is None else intersect_intervals(*out, *w)
    return out


def _calls_waited_on(ctx: Context, g: GpuCtx, first: np.ndarray, last: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The parts of the communication calls of a thread that launches none of ``g``'s work (:func:`_off_launcher_calls`)
    begun inside a kept step's work (between ``first`` and ``last``, per step) during which every launching thread is
    blocked in the OS (:func:`_launchers_blocked`), as disjoint (starts, ends) ps.

    Why: a process whose main thread hands its gradients to a communication thread and blocks until that thread's
    ``MPI_Allreduce`` returns (Stanford CME 213's ``train_mpi``, OpenMP variant: the main thread in
    ``pthread_cond_wait`` 227 ms while the comm thread ran 80 ``MPI_Allreduce``) leaves its GPU idle for the call's
    length: the launcher runs no code and the one thing the process is doing is the call -- communication, not "the
    host waits for something outside the capture".  A launcher that runs meanwhile is host work (its own code may be
    the late launch), and a call begun before the step's work (a listener parked in ``MPI_Recv`` across steps) was
    handed nothing by this step: both stay out."""
    none = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    off = off_launcher_calls_of(ctx, g)
    if not off.size:
        return none
    h = ctx.h
    a = h.start[off].astype(np.int64)
    o = np.argsort(first, kind="stable")
    k = np.searchsorted(first[o], a, side="right") - 1  # the step whose work began last before each call
    inside = (k >= 0) & (a < last[o][np.clip(k, 0, None)])
    blocked = _launchers_blocked(ctx, g) if inside.any() else None
    if blocked is None:
        return none
    s, e = union_intervals(a[inside], h.end[off][inside].astype(np.int64))
    return intersect_intervals(s, e, *blocked)


def waiting_calls_of(ctx: Context, g: GpuCtx) -> np.ndarray:
    """:func:`_waiting_calls` of ``g``, read once and kept on it (``GpuCtx.waiting_memo``) while its launches and the
    capture's ranges are the ones read.  Why: each GPU's ledger is painted three times (its step arrays, the host
    syncs' ledger, the gaps' ledger: :func:`comm_call_spans` each time) and its calls named once more
    (:func:`comm_calls_in_idle`), each a pass over every range of the capture (5.4 ms on a 5,000-step MPI job)."""
    kept = _waiting_memo(ctx, g)
    if "on" not in kept:
        kept["on"] = _waiting_calls(ctx, g)
    return kept["on"]


def off_launcher_calls_of(ctx: Context, g: GpuCtx) -> np.ndarray:
    """:func:`_off_launcher_calls` of ``g``, read once and kept beside :func:`waiting_calls_of`'s answer: the ledger's
    communication spans ask it each time they are painted (three times a GPU), as they ask for the launchers' own."""
    kept = _waiting_memo(ctx, g)
    if "off" not in kept:
        kept["off"] = _off_launcher_calls(ctx, g)
    return kept["off"]


def _waiting_memo(ctx: Context, g: GpuCtx) -> dict:
    """The answers kept on ``g`` (``GpuCtx.waiting_memo``) while its launches and the capture's ranges are the ones
    they were read from; a fresh, empty one otherwise."""
    memo, ranges = g.waiting_memo, ctx.trace.ranges
    if memo is None or memo[0] is not g.launch or memo[1] is not ranges:
        memo = g.waiting_memo = (g.launch, ranges, {})
    return memo[2]


def comm_calls_in_idle(ctx: Context, g: GpuCtx, iv: dict) -> dict[str, float]:
    """Communication call name -> ms of this GPU's idle in its kept steps that the ledger books to the host's
    communication calls (``iv["comm_wait"]``, :func:`comm_call_spans`), as painted: what the step pays waiting for its
    peers with no collective kernel to show it (``MPI_Wait`` 2.0 ms).  Empty where the host made no such call inside a
    step."""
    s, e = iv.get("comm_wait", (np.zeros(0, np.int64), np.zeros(0, np.int64)))
    if not s.size:
        return {}
    a, b, cats = painted_segments(iv, int(s.min()), int(e.max()))
    booked = np.asarray(cats, dtype=object) == _BOOKED_AS["comm_wait"]  # painted under the category it is booked as
    if not booked.any():
        return {}
    a, b = intersect_intervals(a[booked].astype(np.int64), b[booked].astype(np.int64), s.astype(np.int64),
                               e.astype(np.int64))
    for c in ("collectives", "comm_launch"):  # the GPU's own collectives above it: theirs, not the calls'
        if a.size and iv[c][0].size:
            a, b = subtract_intervals(a, b, *(x.astype(np.int64, copy=False) for x in iv[c]))
    calls = np.concatenate([waiting_calls_of(ctx, g), off_launcher_calls_of(ctx, g)])  # painted only where waited on
    return range_time(ctx, g, np.asarray(a, np.int64), np.asarray(b, np.int64), calls, _step_windows(g))


def ranges_in_host_idle(ctx: Context, g: GpuCtx, iv: dict, cand: np.ndarray) -> dict[str, dict[str, float]]:
    """Range name -> ledger category of :data:`HOST_IDLE` -> ms of this GPU's idle inside its kept steps that the
    range spans and the step ledger books in that category (painted as :func:`attribute` paints the steps).

    Why: a finding that claims one category of the idle (the host's own work, the launch wait) names the ranges
    holding *its* time, not the whole idle -- cold_a100_alexnet's host-bound finding (42.8 ms) placed "the GPU's idle
    time" in ``clear_cache`` 43.1 ms and the forward 31.1 ms, the whole 74.2 ms idle with the allocator finding's
    31.5 ms in it (h37-review3), so one microsecond was said twice.  The categories are disjoint (one per instant), so a range's parts add up to its idle."""
    w = _step_windows(g)
    if not cand.size or not w.size:
        return {}
    a, b, cats = painted_segments(iv, int(w[0, 0]), int(w[:, 1].max()))
    if not a.size:
        return {}
    names = np.asarray(cats, dtype=object)
    parts = {}
    for c in HOST_IDLE:
        m = names == c
        if m.any():
            parts[c] = _inside_steps(g, a[m].astype(np.int64), b[m].astype(np.int64))
    return range_time_by(ctx, g, parts, cand, w) if parts else {}


def frames_in_host_work(ctx: Context, g: GpuCtx, iv: dict) -> dict[str, tuple[float, float]]:
    """Python call name -> (ms of this GPU's idle in its kept steps that the step ledger books as the host's own work
    (``host_compute``) and calls of that name span, ms those calls last inside the steps), over this GPU's process's
    recorded Python calls (``with_stack``'s spans); {} where none was recorded.  Each name's outermost calls only: a
    call inside one of the same name (``_call_impl`` in ``_call_impl``) is the same stretch of time.

    Why: the host-bound finding said the GPU waits for "the host's own code" and no more, and the serving engine's fix
    named its scheduler and sampler -- on vLLM's MI300X decode (h37-survey62) 26.6 ms of the 45.6 ms step were spent
    inside the model's compiled call before its first graph launch, 1,207 recorded dict lookups 22 us apart (the
    compiled code's guard checks), none of it scheduling.  Where Python was traced, the calls holding the time say
    where it is: each instant of host work lies inside every enclosing call, so the deepest call holding most of it is
    its place (:func:`deepest_frame`)."""
    sp = ctx.trace.spans
    w = _step_windows(g)
    if sp is None or not len(sp) or not w.size:
        return {}
    a, b, cats = painted_segments(iv, int(w[0, 0]), int(w[:, 1].max()))
    mine = np.asarray(cats, dtype=object) == "host_compute"
    if not mine.any():
        return {}
    hs, he = _inside_steps(g, a[mine].astype(np.int64), b[mine].astype(np.int64))
    own = ctx.trace.gpu_host_lines.get(g.d.gpu)
    m = (sp.line >= 0) if own is None else np.isin(sp.line, own)
    m &= (sp.end > w[0, 0]) & (sp.start < w[:, 1].max())
    if not hs.size or not m.any():
        return {}
    s, e, name = (sp.start[m].astype(np.int64), sp.end[m].astype(np.int64), sp.name[m].astype(np.int64))
    inner = ~_around_a_step(w, s, e, ctx.steps.detection.source == SPAN_STEPS)
    s, e, name = s[inner], e[inner], name[inner]
    if not s.size:
        return {}
    o = np.lexsort((-e, s, name))  # of calls starting together the longest first: it holds the others
    s, e, name = s[o], e[o], name[o]
    s, e, name = _outermost_by_name(s, e, name)
    host, work = _Cover(hs, he), _Cover(*_inside_steps(g, w[:, 0], w[:, 1]))
    held = (host.upto(e) - host.upto(s)).astype(np.float64) / PS_PER_MS
    span = (work.upto(e) - work.upto(s)).astype(np.float64) / PS_PER_MS
    first = np.flatnonzero(np.concatenate([[True], name[1:] != name[:-1]]))
    held, span = np.add.reduceat(held, first), np.add.reduceat(span, first)
    return {ctx.h.names[int(name[i])]: (float(t), float(v)) for i, t, v in zip(first, held, span) if t > 0}


#: The step source of steps read from the program's own repeated calls (``job.structure``): only then is a call a step.
SPAN_STEPS = "annotation_spans"


def _around_a_step(w: np.ndarray, s: np.ndarray, e: np.ndarray, spans_are_steps: bool = False) -> np.ndarray:
    """Per call (``s``, ``e``): it encloses a whole kept step (``w``: the steps' windows by start) -- the program's
    ``main``, its loop, the engine's ``execute_model`` that is the step: a call around the step holds all of its host
    work and names no place in it (gpt2_b200's 12.8 ms "inside" ``train_deepseek_v3.py(76): main``) -- or it begins
    exactly where a kept step begins: the call the step was read from.

    Why the second: steps read from the program's own repeated spans (``annotation_spans``) run from each span's start
    to the next one's, so the span that is the step ends before its window does, and no call of it encloses one.
    A Mamba-3 decode loop's Triton variant on an A100 (h37-survey66) read "1.06 ms of this time lies inside the Python
    call `src/models/inference.py(117): step`": the decoder's step, the very span its 5 steps were read from.
    Only where the steps were read from spans (``spans_are_steps``): a step the profiler marks is no call, and a call
    opening it at the mark's microsecond (the call after ``prof.step()`` on a whole-us clock) is a place in it
    (h37-review31)."""
    j = np.searchsorted(w[:, 0], s, side="left")  # the first step starting at or after the call
    ok = j < w.shape[0]
    out = np.zeros(s.size, dtype=bool)
    out[ok] = (e[ok] >= w[j[ok], 1]) | (spans_are_steps & (s[ok] == w[j[ok], 0]))
    return out


def _outermost_by_name(s: np.ndarray, e: np.ndarray, name: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Of calls sorted by (name, start, longest first), those not inside an earlier call of their name: a call that starts before
    the furthest end of the earlier ones of its name lies inside one of them.  Each name's ends are shifted by its
    rank times the whole span, so one running maximum serves every name (no name's reach leaks into the next)."""
    if s.size < 2:
        return s, e, name
    lo, width = int(s.min()), int(e.max()) - int(s.min()) + 1
    rank = np.cumsum(np.concatenate([[0], name[1:] != name[:-1]])).astype(np.int64)
    if width * (int(rank[-1]) + 1) >= 2 ** 62:  # beyond int64 at this span: one name at a time
        keep = np.ones(s.size, dtype=bool)
        for a, b in _runs(name):
            reach = np.maximum.accumulate(e[a:b])
            keep[a + 1:b] = s[a + 1:b] >= reach[:-1]
        return s[keep], e[keep], name[keep]
    off = rank * width
    reach = np.maximum.accumulate(e - lo + off)
    keep = np.ones(s.size, dtype=bool)
    keep[1:] = (s[1:] - lo + off[1:]) >= reach[:-1]
    return s[keep], e[keep], name[keep]


def deepest_frame(per_gpu: list[dict[str, tuple[float, float]]], steps: int, host_ms: float
                  ) -> tuple[str, float] | None:
    """(Python call, ms per step and active GPU) of :func:`frames_in_host_work` over every GPU: the call holding at
    least ``host_frame.share`` of ``host_ms`` (the ledger's host work per step) that lasts the least -- the deepest
    such call, since a call lies inside every call that encloses it and holds no more than they do; None where
    Python was not traced or no call holds that much."""
    if not per_gpu or steps <= 0 or host_ms <= 0:
        return None
    total = _frame_totals(per_gpu)
    need = T("host_frame.share") * host_ms
    held = [(span, n, per_step(t, steps, len(per_gpu))) for n, (t, span) in total.items()
            if per_step(t, steps, len(per_gpu)) >= need]
    if not held:
        return None
    _, n, v = min(held)
    return n, round(v, 4)


def held_by(per_gpu: list[dict[str, tuple[float, float]]], steps: int, calls: Callable[[str], bool]) -> float:
    """Ms per step and active GPU of the host's own work (:func:`frames_in_host_work`) that lies inside the recorded
    Python calls ``calls`` picks (the framework's model calls: ``nn.Module`` spans, ``_call_impl``): the most any one
    such name holds, its outermost calls only -- a lower bound of their union, so never more than the host's work.

    Why: the deepest call holding the host's work (:func:`deepest_frame`) says where it lies, not whose code that is;
    a serving engine's host-bound fix named its scheduler and sampler while vLLM's decodes spent the time inside the
    model's own forward (h37-wordsfit30: ``gpt_oss.py(221): forward`` on a B200, ``llama.py(374): forward`` on an
    MI300X).  Whether the place is inside the model's call is read off the calls that enclose it, not its name."""
    if not per_gpu or steps <= 0:
        return 0.0
    held = [t for n, (t, _span) in _frame_totals(per_gpu).items() if calls(n)]
    return round(max((per_step(t, steps, len(per_gpu)) for t in held), default=0.0), 4)


def _frame_totals(per_gpu: list[dict[str, tuple[float, float]]]) -> dict[str, list[float]]:
    """Python call name -> [ms of host work it holds, ms it lasts], summed over the GPUs' :func:`frames_in_host_work`:
    the one sum both readers of the calls (:func:`deepest_frame`, :func:`held_by`) take."""
    total: dict[str, list[float]] = {}
    for d in per_gpu:
        for n, (t, span) in d.items():
            v = total.setdefault(n, [0.0, 0.0])
            v[0] += t
            v[1] += span
    return total


def ranges_launching(ctx: Context, g: GpuCtx, names: list[str], cand: np.ndarray,
                     kinds: tuple[int, ...] | None = None) -> list[str]:
    """Of the range ``names``, those inside which the host launched some of this GPU's work in its kept steps (of the
    device event ``kinds`` only, where given: the steps' kernels, not their copies).

    Why: a fix that cuts launch overhead (CUDA graphs, compiling) fits the host time in ranges that launch kernels;
    time in a range that launches nothing (a cache release, a host-side loop) is no launch's and no graph removes it.
    Why ``kinds``: a range that launches the steps' kernels is the step's own compute (a model's forward), its host
    time before them the dispatch of its ops; one that only copies (an ``h2d`` phase) may be the batch's preparation."""
    h = ctx.h
    inside = (g.step >= 0) & (g.launch >= 0)
    if kinds is not None:
        inside &= np.isin(g.d.kind, np.asarray(kinds))
    if not names or not inside.any() or not cand.size:
        return []
    if g.host_mask is not None:
        cand = cand[g.host_mask[cand]]
    ls = np.sort(h.start[g.launch[inside]].astype(np.int64, copy=False))
    named = set(names)
    want = np.array([i for i, n in enumerate(h.names) if n in named], dtype=np.int64)
    cand = cand[np.isin(h.name[cand], want)]
    lo = np.searchsorted(ls, h.start[cand].astype(np.int64, copy=False))
    hi = np.searchsorted(ls, h.end[cand].astype(np.int64, copy=False))
    out = {h.names[int(i)] for i in h.name[cand[hi > lo]].tolist()}
    return [n for n in names if n in out]


def _step_windows(g: GpuCtx) -> np.ndarray:
    """This GPU's kept steps' windows (ps, int64), non-empty ones, by start."""
    w = g.windows[g.windows[:, 1] > g.windows[:, 0]].astype(np.int64)
    return w[np.argsort(w[:, 0], kind="stable")]


def around_step_work(ctx: Context, w: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Bool per host event of ``idx``: it spans a whole step (:func:`spans_any_step`) and hands work to the GPU inside
    (a runtime call on its thread within it) -- a range around the step's body (``record_function("model_inference")``
    over a CPU ``randn``, its copy and its kernel), which names none of the host work inside it.  A range that only
    fills the GPU's idle (NVTX ``cpu_reference`` around 2 s of CPU code between two GPU bursts) is that work's name."""
    h = ctx.h
    s, e = h.start[idx].astype(np.int64), h.end[idx].astype(np.int64)
    out = spans_any_step(ctx, w, s, e)
    if not out.any():
        return out
    calls = h.name_mask(devices.is_runtime_call)
    for k in np.flatnonzero(out).tolist():
        line = h.line[idx[k]]
        mine = calls & (h.line == line)
        out[k] = bool(((h.start[mine] >= s[k]) & (h.start[mine] < e[k])).any())
    return out


def spans_any_step(ctx: Context, w: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Bool per host event ``[s, e)``: it spans a whole step window, this GPU's (``w``, sorted) or the host's -- the
    step's own marker, a range around the step's body (``record_function("model_inference")``) or the loop: it says
    nothing of where inside a step the time goes."""
    hw = ctx.steps.host_windows.astype(np.int64)
    return _spans_a_step(s, e, w) | _spans_a_step(s, e, hw[np.argsort(hw[:, 0], kind="stable")])


def _spans_a_step(s: np.ndarray, e: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Bool per range ``[s, e)``: it spans a whole window of ``w`` (sorted by start), within 2% of the window's length
    at either end (a ``ProfilerStep`` and the window it made differ by the clocks' rounding)."""
    if not w.size:
        return np.zeros(s.shape, bool)
    tol = (w[:, 1] - w[:, 0]) // 50
    j = np.minimum(np.searchsorted(w[:, 0] + tol, s, side="left"), len(w) - 1)
    return (s <= w[j, 0] + tol[j]) & (e >= w[j, 1] - tol[j])


#: the step readings whose each step is one of the program's own ranges, whole and outermost at its start: a
#: step-named NVTX range, the top repeated range.  Not ``annotation_spans``, whose step runs from its first phase's
#: range through its last (tiny_steps_rtx5070ti_gnn's `GNN_forward` opens each step and is a place in it); nor steps
#: read from a framework's or engine's own event (``engine_steps``' ``execute_model``, ``iteration_range``), which is
#: no program range: the first program range opening such a step is a place in it (the ``serving_decode``
#: scenario's `prepare inputs`); nor the format's own markers, ``Trace.host_steps``, left out before.
_RANGE_STEPS = ("nvtx_range", "nvtx_top_range")


def _step_own_ranges(ctx: Context, w: np.ndarray, s: np.ndarray, e: np.ndarray, line: np.ndarray,
                     gone: np.ndarray) -> np.ndarray:
    """Bool per range ``[s, e)`` on host line ``line``: it is the range a kept step was read from -- where each step
    is one of the program's own ranges (:data:`_RANGE_STEPS`), the longest range of its thread opening exactly where
    a step's window opens, among ranges spanning no whole step; none at a step whose own range was already left out
    (``gone``: where the ranges left out open -- a step's range spanning its window, the usual case).

    Why: such a step's window runs from its range's start to the next step's, so the range ends before its window by
    the host's time between the ranges (the loop's own Python, a few us), and :func:`spans_any_step`'s 2% of the
    window misses it on steps shorter than ~0.2 ms: an Nsight export of three 90 us tiny steps (ranges 89 us, 2 us
    apart) read "the wait lies in the program's own ranges `train_step 0` 12 us, `train_step 1` 12 us" -- the steps
    themselves (h37-tiny70).  A range nested in the step's and opening at its very start stays a place in it."""
    out = np.zeros(s.size, bool)
    if ctx.steps.detection.source not in _RANGE_STEPS or not s.size:
        return out
    opens = np.unique(np.concatenate([w[:, 0], ctx.steps.host_windows[:, 0]]).astype(np.int64))
    opens = opens[~np.isin(opens, gone)]
    if not opens.size:
        return out
    j = np.minimum(np.searchsorted(opens, s), opens.size - 1)
    at = np.flatnonzero(opens[j] == s)
    if not at.size:
        return out
    at = at[np.lexsort((-(e[at] - s[at]), s[at], line[at]))]  # per (thread, start): the longest first
    first = np.concatenate([[True], (line[at][1:] != line[at][:-1]) | (s[at][1:] != s[at][:-1])])
    out[at[first]] = True
    return out


def range_time(ctx: Context, g: GpuCtx, i0: np.ndarray, i1: np.ndarray, cand: np.ndarray,
               w: np.ndarray) -> dict[str, float]:
    """Range name -> ms of the stretches ``(i0, i1)`` (sorted, disjoint: the GPU's idle in its steps, or its gaps
    between steps) that the user's ranges ``cand`` span, the outermost ranges on the one thread spanning the most,
    leaving out ranges that span a whole step window of ``w`` (see :func:`ranges_in_idle`)."""
    if not i0.size:
        return {}
    by = range_time_by(ctx, g, {"idle": (i0, i1)}, cand, w)
    return {name: parts["idle"] for name, parts in by.items()}


def range_time_by(ctx: Context, g: GpuCtx, parts: dict[str, tuple[np.ndarray, np.ndarray]], cand: np.ndarray,
                  w: np.ndarray) -> dict[str, dict[str, float]]:
    """Range name -> part -> ms of each set of stretches in ``parts`` (each sorted and disjoint, the sets disjoint
    from one another) that the user's ranges ``cand`` span, as :func:`range_time` counts one set: the outermost
    ranges of the one thread spanning the most of all the parts, so a range's parts add up to what it spans."""
    h = ctx.h
    if g.host_mask is not None:
        cand = cand[g.host_mask[cand]]
    if not cand.size or not w.size or not any(a.size for a, _ in parts.values()):
        return {}
    s, e = h.start[cand].astype(np.int64, copy=False), h.end[cand].astype(np.int64, copy=False)
    # a range spanning a whole step, on the host or on this GPU, is the step's (its marker) or the loop's, not a part
    keep = ~spans_any_step(ctx, w, s, e) & (e > s)
    marks = ctx.trace.host_steps  # the format's own step markers, kept or not (the last one's GPU work runs past it)
    if marks is not None and marks.start.size:
        o = np.lexsort((marks.end, marks.start))
        ms_, me_ = marks.start[o].astype(np.int64, copy=False), marks.end[o].astype(np.int64, copy=False)
        j = np.minimum(np.searchsorted(ms_, s, side="left"), ms_.size - 1)
        keep &= ~((ms_[j] == s) & (me_[j] == e))
    gone = s[~keep]  # where a range already left out (the step's own, spanning its window) opens
    cand, s, e = cand[keep], s[keep], e[keep]
    keep = ~_step_own_ranges(ctx, w, s, e, h.line[cand].astype(np.int64, copy=False), gone)
    cand, s, e = cand[keep], s[keep], e[keep]
    if not cand.size:
        return {}
    # outermost per thread: sorted by (line, start, longest first), a range inside the running end of the ranges
    # before it on its line is nested in one of them
    order = np.lexsort((-(e - s), s, h.line[cand]))
    cand, s, e = cand[order], s[order], e[order]
    line = h.line[cand].astype(np.int64, copy=False)
    outer = np.ones(cand.size, bool)
    for a, b in _runs(line):
        run_end = np.maximum.accumulate(e[a:b])
        outer[a + 1:b] = s[a + 1:b] >= run_end[:-1]
    cand, s, e, line = cand[outer], s[outer], e[outer], line[outer]
    each = {k: (time_within(a, b, s, e) / PS_PER_MS if a.size else np.zeros(s.size)) for k, (a, b) in parts.items()}
    ms_each = sum(each.values())
    if not (ms_each > 0).any():
        return {}
    busiest = int(np.argmax(np.bincount(line - line.min(), weights=ms_each))) + int(line.min())
    mine = (line == busiest) & (ms_each > 0)
    names = h.name[cand[mine]].astype(np.int64, copy=False)
    totals = np.bincount(names, weights=ms_each[mine])
    per = {k: np.bincount(names, weights=v[mine], minlength=totals.size) for k, v in each.items()}
    return {h.names[i]: {k: float(v[i]) for k, v in per.items()} for i in np.flatnonzero(totals > 0).tolist()}




def _outer_waits(ctx: Context) -> np.ndarray:
    """Indices into ``Trace.host_waits`` of the outermost OS calls of each thread (calls nest: ``fread`` calls
    ``read``), which are disjoint on their thread; kept for the analysis."""
    got = ctx.memo.get("outer_waits")
    if got is None:
        w = ctx.trace.host_waits
        s, e, line = w.start, w.end, w.line.astype(np.int64)
        order = np.lexsort((-(e - s), s, line))
        s, e, line = s[order], e[order], line[order]
        outer = (e > s) & (line >= 0)
        for a, b in _runs(line):
            run_end = np.maximum.accumulate(e[a:b])
            outer[a + 1:b] &= s[a + 1:b] >= run_end[:-1]
        got = ctx.memo["outer_waits"] = order[outer]
    return got


def threads_waits(ctx: Context, lines: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint sorted (starts, ends), ps, of the OS waits the capture traced on the threads ``lines`` (their
    outermost calls, :func:`_outer_waits`: an OS runtime call, a stretch off the CPU); empty where it traced none
    there.  The one reader of a thread's traced waits: the ledger's launchers (:func:`_launchers_waits`) and the
    launcher's silences (``metrics.syncs.launcher_silence``) each take their own part of it."""
    w = ctx.trace.host_waits
    none = np.zeros(0, np.int64)
    if w is None or not len(w):
        return none, none
    outer = _outer_waits(ctx)
    mine = outer[np.isin(w.line[outer].astype(np.int64), np.asarray(lines, np.int64))]
    return union_intervals(w.start[mine].astype(np.int64), w.end[mine].astype(np.int64)) if mine.size else (none, none)


def _launchers_waits(ctx: Context, g: GpuCtx) -> tuple[np.ndarray, np.ndarray] | None:
    """Disjoint sorted (starts, ends) of the outermost OS waits of the threads that launch ``g``'s work; None where the
    capture traced no OS wait or no launch of them.  Why: a camera loop's thread asleep until its next frame, mid-step,
    left the GPU idle before its next launch, which the ledger booked as launch wait (``write_paced_loop(mid_wait_ms=)``:
    13 ms of each 40 ms frame, critical launch-bound for 3 kernels a frame)."""
    w = ctx.trace.host_waits
    if w is None or not len(w):
        return None
    launched = g.launch[g.launch >= 0]
    if not launched.size:
        return None
    return _waits_between_calls(ctx, np.unique(ctx.h.line[launched]).astype(np.int64))


def _waits_between_calls(ctx: Context, lines: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Disjoint sorted (starts, ends) of the threads ``lines``' outermost OS waits outside their runtime calls; None
    where the capture traced none there."""
    ws, we = threads_waits(ctx, lines)
    if not ws.size:
        return None
    # a wait inside a runtime call is the call's own (the driver's ioctl in a launch, a sync's sleep): launch wait
    # stays launch wait there; only the thread's waits between its calls are waits for something else
    cs, ce = _threads_calls(ctx, lines)
    return subtract_intervals(ws, we, cs, ce) if cs.size else (ws, we)


def _threads_calls(ctx: Context, lines: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint sorted (starts, ends) of the runtime calls of the threads ``lines``, read once for every GPU they
    launch on."""
    key = ("launchers_calls", lines.tobytes())  # the same threads launch on every GPU of a process: once for all
    if key not in ctx.memo:
        calls = ctx.h.name_mask(devices.is_runtime_call) & np.isin(ctx.h.line.astype(np.int64), lines)
        ctx.memo[key] = union_intervals(ctx.h.start[calls].astype(np.int64), ctx.h.end[calls].astype(np.int64))
    return ctx.memo[key]


def _managed_read_stretches(ctx: Context, g: GpuCtx) -> tuple[np.ndarray, np.ndarray] | None:
    """(starts, ends), ps, of the stretches between two runtime calls of the threads launching ``g``'s work in which
    the host read managed memory the GPU held (``job.waits.managed_reads``: a page migration to the host that no call
    asked for); None where there is none."""
    key = ("managed_reads", g.d.gpu)
    if key not in ctx.memo:
        ctx.memo[key] = managed_reads(ctx.trace, g.d.gpu)
    reads = ctx.memo[key]
    launched = g.launch[g.launch >= 0]
    if not reads.size or not launched.size:
        return None
    cs, ce = _threads_calls(ctx, np.unique(ctx.h.line[launched]).astype(np.int64))
    if cs.size < 2:
        return None
    hs, he = ce[:-1], cs[1:]  # between one call's return and the next call
    k = np.unique(np.searchsorted(hs, reads, side="right")[_in_stretches(reads, (hs, he))] - 1)
    return (hs[k], he[k]) if k.size else None


def managed_read_spans(ctx: Context, g: GpuCtx) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) ps, disjoint and sorted, of the time the threads launching ``g``'s work slept in their reads of
    managed memory the GPU wrote: their outermost off-CPU waits (the scheduler's trace) whose middle lies in a
    stretch between two of their runtime calls that holds a page migration to the host no call asked for
    (:func:`_managed_read_stretches`) -- what :func:`os_waits_in` names :data:`MANAGED_READ`.  The ledger's
    ``managed_read``; empty where the capture traced no context switch or holds no such read."""
    none = (g.d.start[:0].astype(np.int64), g.d.start[:0].astype(np.int64))
    w = ctx.trace.host_waits
    if w is None or not len(w) or OFF_CPU not in w.names:
        return none
    reads = _managed_read_stretches(ctx, g)
    if reads is None:
        return none
    lines = np.unique(ctx.h.line[g.launch[g.launch >= 0]]).astype(np.int64)
    outer = _outer_waits(ctx)
    mine = outer[np.isin(w.line[outer].astype(np.int64), lines)
                 & (w.name[outer].astype(np.int64) == w.names.index(OFF_CPU))]
    s, e = w.start[mine].astype(np.int64), w.end[mine].astype(np.int64)
    hit = _in_stretches((s + e) // 2, reads)
    if not hit.any():
        return none
    a, b = union_intervals(s[hit], e[hit])
    return np.asarray(a, np.int64), np.asarray(b, np.int64)


def _launchers_silent(ctx: Context, g: GpuCtx) -> tuple[np.ndarray, np.ndarray] | None:
    """Disjoint sorted (starts, ends) of the stretches in which none of the threads that launch ``g``'s work records
    anything (no op, runtime call, range or Python span; the step markers, which span the whole step, do not count --
    a profiler's by name, the user's iteration ranges by what they are: ``Context.step_marks``);
    None where they record nothing at all.

    Why (physics, as :func:`context.no_call_stretches`): handing a kernel to the GPU takes microseconds, so a
    millisecond of a late launch in which the launching threads record nothing is code the profiler did not see, not
    launching -- the ledger's ``other``, named by the unrecorded-idle finding (survey h37-survey18: Keras ``fit`` on
    TF 2.3, 50 ms of the fit loop's untraced Python between the step's last kernel and the next eager op, booked as a
    critical launch-bound wait of 56% of the step; the stock overview's "kernel launch" was 1.6%)."""
    launched = g.launch[g.launch >= 0]
    if not launched.size:
        return None
    h = ctx.h
    lines = np.unique(h.line[launched]).astype(np.int64)
    key = ("launchers_recorded", lines.tobytes())  # the same threads launch on every GPU of a process: once for all
    if key not in ctx.memo:
        mine = np.isin(h.line.astype(np.int64), lines) & ~h.name_mask(ctx.fw.step_marker)
        mine &= ~ctx.step_marks  # the user's iteration ranges mark the step as those do
        s, e = h.start[mine].astype(np.int64), h.end[mine].astype(np.int64)
        sp = ctx.trace.spans
        if sp is not None and len(sp):
            on = np.isin(sp.line.astype(np.int64), lines)
            s = np.concatenate([s, sp.start[on].astype(np.int64)])
            e = np.concatenate([e, sp.end[on].astype(np.int64)])
        ctx.memo[key] = union_intervals(s, e)
    rs, re = ctx.memo[key]
    return (re[:-1], rs[1:]) if rs.size >= 2 else None


def _long_overlaps(s: np.ndarray, e: np.ndarray, hs: np.ndarray, he: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pieces of the disjoint sorted intervals (s, e) inside the disjoint sorted holes (hs, he) that last
    ``metrics.cpu_op_ms`` or longer: only there is a launch's wait the host's unrecorded code (a short silence before
    a launch -- a pause of 0.3 ms, the launch's own preparation -- stays launch wait)."""
    in_s, in_e = intersect_intervals(s, e, hs, he)
    keep = (in_e - in_s) >= T("metrics.cpu_op_ms") * PS_PER_MS
    return in_s[keep], in_e[keep]


def os_waits_in(ctx: Context, g: GpuCtx, i0: np.ndarray, i1: np.ndarray) -> tuple[dict[str, float], dict[str, float]]:
    """(OS call -> ms of the stretches, OS call -> the most ms in one stretch) of the stretches ``(i0, i1)`` (sorted,
    disjoint: this GPU's idle in its steps, or its gaps) that the thread launching the GPU's next work after each
    stretch spent blocked in that call (Nsight's OS runtime trace: ``getc``, ``read``, ``pthread_cond_wait`` ...).

    Why: a GPU idle while the host "works" may be a host that waits -- on a file, the terminal, another thread -- and
    the finding should say so (issue #37: a CUDA hash join's 4.65 s gap was its main thread in ``getc``).  Only the
    launching thread counts (another thread's waits hold nothing up) and only its outermost calls, which are
    disjoint, so the named time never exceeds the idle stretch it lies in."""
    w = ctx.trace.host_waits
    if w is None or not len(w) or not i0.size:
        return {}, {}
    launched = np.flatnonzero(g.launch >= 0)
    if not launched.size:
        return {}, {}
    # the thread that launches the first device event at or after each stretch's end; for a stretch no launch
    # follows (the end of a one-pass program: it writes its results), the thread that launched the last device event
    # before it -- the GPU's work is that thread's, so is the time after it (a program writing its output in
    # ``pwrite64`` was "the host's own code, which the profiler did not record")
    starts = g.d.start[launched]
    k = np.searchsorted(starts, i1, side="left")
    ok = k < launched.size
    line = np.full(i0.size, -1, np.int64)
    line[ok] = ctx.h.line[g.launch[launched[k[ok]]]]
    before = np.searchsorted(starts, i0, side="right") - 1
    last = ~ok & (before >= 0)
    line[last] = ctx.h.line[g.launch[launched[before[last]]]]
    outer = _outer_waits(ctx)
    wline = w.line[outer].astype(np.int64)
    names = [*w.names, MANAGED_READ]  # the thread asleep in its loads of managed memory: named apart
    total = np.zeros(len(names))
    most = np.zeros(len(names))
    reads = _managed_read_stretches(ctx, g)
    for ln in np.unique(line[line >= 0]).tolist():
        mine = np.flatnonzero(line == ln)
        calls = outer[wline == ln]
        if not calls.size:
            continue
        a0, a1 = i0[mine].astype(np.int64), i1[mine].astype(np.int64)
        s, e = w.start[calls].astype(np.int64), w.end[calls].astype(np.int64)
        ms = time_within(a0, a1, s, e) / PS_PER_MS
        hit = ms > 0
        if not hit.any():
            continue
        name = w.name[calls[hit]].astype(np.int64)
        if reads is not None and OFF_CPU in w.names:
            name[_in_stretches((s[hit] + e[hit]) // 2, reads) & (name == w.names.index(OFF_CPU))] = len(w.names)
        np.add.at(total, name, ms[hit])
        # per stretch: the stretch each call overlaps, by where it ends (a call that starts in a step and ends in
        # the gap after it is that gap's; by its start it was the previous gap's, which then held more than its
        # length: many short waits of the scheduler's trace).  A call across two stretches is booked to the later
        j = np.maximum(np.searchsorted(a0, e[hit], side="left") - 1, 0)
        key = j * len(names) + name
        u, inv = np.unique(key, return_inverse=True)
        per = np.bincount(inv, weights=ms[hit])
        np.maximum.at(most, u % len(names), per)
    named = np.flatnonzero(total > 0).tolist()
    return {names[i]: float(total[i]) for i in named}, {names[i]: float(most[i]) for i in named}


def _in_stretches(t: np.ndarray, spans: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Bool per time of ``t``: inside one of the disjoint sorted stretches ``spans``."""
    k = np.searchsorted(spans[0], t, side="right") - 1
    ok = k >= 0
    ok[ok] = t[ok] < spans[1][k[ok]]
    return ok


def os_waits_in_idle(ctx: Context, g: GpuCtx, iv: dict | None = None) -> dict[str, float]:
    """OS call -> ms of this GPU's idle time inside its kept steps that the launching thread spent in it
    (:func:`os_waits_in`); {} where the capture traced no OS calls.  With ``iv`` (this GPU's category intervals), only
    the idle the step ledger books to the host's own time (:data:`HOST_OWN`) counts.

    Why: these waits are a part of the host's share of the idle (``rules.unclaimed_wait_ms`` bounds them by it), so
    they are measured where the ledger books that share, never in time it books to another category -- a first
    launch's module loading is the driver's ``ioctl`` inside the launch, start-up time the cold-start finding claims
    (yyhtbs-yye/mmagic_vsr_v2's one forward pass: 885 ms of the 900 ms first ``cudaLaunchKernel`` in ``ioctl``, booked
    as start-up and again as "the host waits for something outside the capture", 1.93 s of a 3.00 s pass beside the
    start-up's 981.5 ms; survey h37-survey39)."""
    w = _step_windows(g)
    if ctx.trace.host_waits is None or not w.size:
        return {}
    i0, i1 = _idle_in_steps(g, w)
    if iv is not None and i0.size:
        a, b, cats = painted_segments(iv, int(w[0, 0]), int(w[:, 1].max()))
        own = np.isin(np.asarray(cats, dtype=object), HOST_OWN) if a.size else np.zeros(0, bool)
        if not own.any():
            return {}
        own_spans = intersect_intervals(i0, i1, a[own].astype(np.int64), b[own].astype(np.int64))
        i0, i1 = (np.asarray(x, np.int64) for x in own_spans)
        keep = i1 > i0
        i0, i1 = i0[keep], i1[keep]
    return os_waits_in(ctx, g, i0, i1)[0]


def async_stalls_in_idle(ctx: Context, g: GpuCtx, iv: dict | None,
                         within: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, float]:
    """Call name -> ms of this GPU's idle inside its kept steps that the ledger books to the host stalled in its slow
    asynchronous calls (``async_stall`` of :func:`category_intervals`, booked ``host_compute``: :func:`ledger_of` of
    the calls' spans, whose idle no higher category claims); {} where there are none.  ``within`` (disjoint sorted
    starts, ends, ps): only that part of the calls' spans -- the idle a finding measures for itself (the idle after
    the program's syncs, ``metrics.syncs``), so that what it says of the stalls is a part of its own time.

    Why: the host-bound findings read the ledger's host work as the program's own code; the part inside a
    ``cudaMemsetAsync`` that lasts milliseconds is the runtime's (the driver, a lock, the OS), and the finding says so
    (h37-asyncslow32).  The step's whole stall time said as "of" the idle after syncs claimed for the syncs' idle a
    stall that lay elsewhere in the step (h37-review32)."""
    calls = ctx.stall_calls(g)
    if not calls.size or not g.windows.size or (within is not None and not within[0].size):
        return {}
    h, out = ctx.h, {}
    col = _CAT_INDEX["host_compute"]
    for nid in np.unique(h.name[calls]).tolist():
        mine = calls[h.name[calls] == nid]
        s, e = union_intervals(h.start[mine].astype(np.int64), h.end[mine].astype(np.int64))
        s, e = np.asarray(s, np.int64), np.asarray(e, np.int64)
        if within is not None:
            s, e = intersect_intervals(s, e, *(x.astype(np.int64, copy=False) for x in within))
            if not s.size:
                continue
        v = float(ledger_of(ctx, g, s, e, iv)[col]) / PS_PER_MS
        if v > 0:
            out[h.names[int(nid)]] = v
    return out


def profiler_spans(ctx: Context, g: GpuCtx) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) ps, disjoint and sorted, of its own process's profiler work (``Trace.profiler_overhead``:
    CUPTI's activity buffer requests, Kineto's ``overhead`` events) that GPU ``g``'s idle can wait through: the
    ledger's ``profiler`` category, painted above every host category; empty where the file records none or the
    host's clock is not the GPU's.

    Why: the ledger paints the GPU's idle by what the program's thread is in, and a launch that waits for the
    profiler's buffer request waits inside the program's op (wild58 torch58: torchprof-XDU's ResNet-50 pass on an
    RTX 5070 Ti Laptop GPU, a 0.88 ms request inside the input's ``aten::copy_`` before its ``cudaMemcpyAsync``), so
    that time read as the host's own code.  Session 58 left it out of the host-bound and launch-bound findings one
    by one while the ledger still booked it as host work: the finding said 3.62 ms beside its window's 4.52 ms
    (h37-ledger59).  Booked once here, every card, finding and total reads one account."""
    empty = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    spans = ctx.trace.profiler_overhead
    if spans is None or not g.windows.size or clocks_disagree(ctx, g):
        return empty
    s, e = spans
    mine = ctx.trace.profiler_overhead_gpus.get(g.d.gpu)
    if ctx.trace.profiler_overhead_gpus and mine is not None:
        s, e = s[mine], e[mine]
    if not s.size:
        return empty
    return tuple(np.asarray(x, np.int64) for x in union_intervals(s.astype(np.int64), e.astype(np.int64)))


def os_waits_after_work(ctx: Context, g: GpuCtx) -> float:
    """ms, over the kept steps, of this GPU's idle after each step's last kernel that the launching thread spent in
    OS calls (:func:`os_waits_in`); 0 where the capture traced no OS calls.

    Why: a one-pass program's wait after its last kernel is its tail -- the results written (``pwrite64``) once the
    GPU's computing is done, the managed pages it reads migrating back meanwhile -- not a source pacing a loop, and
    its finding says so (ISC25-ICON-C's stdpar program).  Copies after the last kernel are no work of the GPU's own:
    the host pulling its results."""
    if ctx.trace.host_waits is None or not g.windows.size:
        return 0.0
    kern, _ = g.kernels_in_steps()
    steps, ends = g.step[kern].astype(np.int64), g.d.end[kern].astype(np.int64)
    cut = g.windows[:, 1].astype(np.int64).copy()  # a step with no kernel has no tail after one
    if steps.size:
        last = np.full(len(cut), np.iinfo(np.int64).min)
        np.maximum.at(last, steps, ends)
        cut = np.where(last > np.iinfo(np.int64).min, last, cut)
    keep = g.windows[:, 1] > g.windows[:, 0]
    order = np.argsort(g.windows[keep, 0], kind="stable")
    w, cut = g.windows[keep].astype(np.int64)[order], cut[keep][order]
    i0, i1 = _idle_in_steps(g, w)
    j = np.searchsorted(w[:, 0], i0, side="right") - 1  # the window each idle stretch lies in
    t0 = np.maximum(i0, cut[j])
    tail = t0 < i1
    return float(sum(os_waits_in(ctx, g, t0[tail], i1[tail])[0].values())) if tail.any() else 0.0


def _idle_in_steps(g: GpuCtx, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends), ps, of this GPU's idle stretches inside the step windows ``w``."""
    us, ue = g.d.busy()
    idle = subtract_intervals(w[:, 0], w[:, 1], us.astype(np.int64, copy=False), ue.astype(np.int64, copy=False))
    return np.asarray(idle[0], np.int64), np.asarray(idle[1], np.int64)


#: user ranges a report names (the longest, by their GPU idle time per step)
RANGE_NAMES = 3


def top_ranges(per_gpu: list[dict[str, float]], steps: int) -> list[tuple[str, float]]:
    """(range, ms of GPU idle per step and active GPU it spans) of the :data:`RANGE_NAMES` ranges spanning the most
    idle time over every GPU, longest first (ties by name)."""
    if not per_gpu or steps <= 0:
        return []
    total: dict[str, float] = {}
    for d in per_gpu:
        for name, v in d.items():
            total[name] = total.get(name, 0.0) + v
    top = sorted(total.items(), key=lambda kv: (-kv[1], kv[0]))[:RANGE_NAMES]
    return [(name, round(per_step(v, steps, len(per_gpu)), 4)) for name, v in top]


def top_ranges_by(per_gpu: list[dict[str, dict[str, float]]], steps: int) -> dict[str, dict[str, float]]:
    """Range -> ledger category -> ms per step and active GPU (:func:`ranges_in_host_idle` over every GPU), for the
    :data:`RANGE_NAMES` ranges holding the most of each category."""
    if not per_gpu or steps <= 0:
        return {}
    total: dict[str, dict[str, float]] = {}
    for d in per_gpu:
        for name, parts in d.items():
            mine = total.setdefault(name, {})
            for c, v in parts.items():
                mine[c] = mine.get(c, 0.0) + v
    keep: set[str] = set()
    for c in HOST_IDLE:
        ranked = sorted(((-p.get(c, 0.0), n) for n, p in total.items() if p.get(c, 0.0) > 0))
        keep.update(n for _, n in ranked[:RANGE_NAMES])
    return {n: {c: round(per_step(v, steps, len(per_gpu)), 4) for c, v in total[n].items() if v > 0} for n in sorted(keep)}


def _runs(keys: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) of each run of equal values of a sorted ``keys``."""
    if not keys.size:
        return []
    cut = np.flatnonzero(keys[1:] != keys[:-1]) + 1
    edges = np.concatenate([[0], cut, [keys.size]]).tolist()
    return list(zip(edges[:-1], edges[1:]))


@dataclass
class GapColumns:
    """One GPU's gaps between steps as columns (what its :class:`StepGap` rows would hold): the summary is their sums
    and maxima, and only the report's first gaps are made rows (:meth:`rows`)."""

    gpu: int | None
    after_step: np.ndarray
    gap_ms: np.ndarray
    input_wait_ms: np.ndarray
    launch_ms: np.ndarray
    host_other_ms: np.ndarray
    booked_ms: np.ndarray  # (gaps, HOST_IDLE) ms
    cycle_ms: np.ndarray
    #: host op name -> ms of the gaps it fills, summed over this GPU's gaps (:func:`ops_in_gaps`)
    ops_ms: dict[str, float] = field(default_factory=dict)
    #: the user's range name -> ms of the gaps it spans, summed over this GPU's gaps (:func:`range_time`)
    ranges_ms: dict[str, float] = field(default_factory=dict)
    #: Python frame name -> ms of the gaps its recorded frames hold where no host work event does
    #: (:func:`frames_in_gaps`)
    frames_ms: dict[str, float] = field(default_factory=dict)
    #: a communication library's range name -> ms of the gaps it spans, summed (``frameworks.user_ranges.communication_ranges``)
    comm_ms: dict[str, float] = field(default_factory=dict)
    #: OS call -> ms of the gaps the launching thread spent in it, summed over this GPU's gaps, and the most in one
    #: gap (:func:`os_waits_in`)
    os_ms: dict[str, float] = field(default_factory=dict)
    os_max_ms: dict[str, float] = field(default_factory=dict)
    #: per gap, ms the GPU idled holding the next step's work already launched (booked ``unseen``: no host's time;
    #: :func:`_held_in`)
    held_ms: np.ndarray | None = None
    #: per gap, ms the GPU idled while the program waited for the profiler's own work (the ledger's ``profiler``: no
    #: host's time to move out of the step either)
    profiler_ms: np.ndarray | None = None
    #: per kept step of this GPU (not per gap): its length and its period (its start to the next step's in the
    #: capture, its own length where none follows) -- the steps the gaps are averaged over, one gap's time a step
    step_ms: np.ndarray | None = None
    period_ms: np.ndarray | None = None
    #: per gap: only the part a kept step holds, the rest in a dropped step beside it (``StepGap.partial``)
    partial: np.ndarray | None = None
    #: (gaps, 2) ps: each gap's window on this GPU's clock, for other measures of idle to find their part in the gaps
    windows: np.ndarray | None = None
    #: per kept step of this GPU: the gaps' time inside its period (its start to the next step's), each gap split at
    #: the kept steps' starts -- what the mean averages, one step at a time (:func:`_in_periods`)
    in_period_ms: np.ndarray | None = None
    #: per gap, ms the host spent inside the framework's dispatch calls (:func:`_dispatch_in`)
    dispatch_ms: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.gap_ms.size)

    def rows(self, n: int) -> list[StepGap]:
        """The first ``n`` gaps as :class:`StepGap` rows (``unexplained_ms``, never negative, and the booked
        categories above zero computed per row in Python floats)."""
        gpu = self.gpu
        booked = [{c: v for c, v in zip(HOST_IDLE, row) if v > 0} for row in self.booked_ms[:n].tolist()]
        part = self.partial[:n].tolist() if self.partial is not None else [False] * min(n, len(self))
        return [StepGap(after_step=s, gpu=gpu, gap_ms=gp, input_wait_ms=i_, launch_ms=l_, host_other_ms=h_,
                        unexplained_ms=float(max(0.0, gp - i_ - l_ - h_)), booked_ms=bk, cycle_ms=cy, partial=pt)
                for s, gp, i_, l_, h_, bk, cy, pt in zip(self.after_step[:n].tolist(), self.gap_ms[:n].tolist(),
                                                         self.input_wait_ms[:n].tolist(), self.launch_ms[:n].tolist(),
                                                         self.host_other_ms[:n].tolist(), booked,
                                                         self.cycle_ms[:n].tolist(), part)]


def _booked_in_steps(g: GpuCtx, iv: dict, win: np.ndarray, painted: Attribution | None = None) -> np.ndarray:
    """(gaps, :data:`HOST_IDLE`) ms: per gap (rows of ``win``, disjoint and sorted) its host-caused idle that lies inside
    the kept steps' windows, as the ledger books it: a gap between steps may lie outside every step (device-defined
    steps), and there no step's breakdown holds it.  ``painted``: the painting of ``iv`` over the step windows
    (:func:`gpu_step_arrays`'): the pieces lie inside them, so it answers for them exactly, without painting again."""
    out = np.zeros((win.shape[0], len(HOST_IDLE)))
    a, b = _inside_steps(g, win[:, 0], win[:, 1])
    if not a.size:
        return out
    mat = attribute(iv, np.stack([a, b], axis=1), painted) / PS_PER_MS
    cols = [_CAT_INDEX[c] for c in HOST_IDLE]
    owner = np.searchsorted(win[:, 0].astype(np.int64), a, side="right") - 1
    np.add.at(out, owner, mat[:, cols])
    return out


#: Gaps a summary keeps as rows (the report's table of gaps).
GAP_ROWS = 50


def _running_sum(x: np.ndarray) -> float:
    """``sum(x)`` as Python's left-to-right float sum gives it (``np.sum`` adds pairwise: other last bits)."""
    return float(np.cumsum(x)[-1]) if x.size else 0.0


def summarize_gaps(gaps: list[GapColumns | None], avg_step_ms: float | None, ledger: Breakdown | None = None) -> Gaps:
    """The gaps' averages per gap, and their idle as the step ledger books it per step and GPU: one gap a step (the
    mean gap's booking: each kept step that a step follows has its gap, :func:`step_gaps`; a last step that ends the
    capture has none), never more of a category than the host's ``ledger`` (mean per step and GPU) holds there.

    ``gaps``: each GPU's :func:`step_gaps` (None: no gaps), in GPU order.  Sums run left to right over the gaps in
    that order, as a Python sum over the rows did, so every average is the same float."""
    gaps = [c for c in gaps if c is not None and len(c)]
    if not gaps:
        return Gaps(0, None, None, None, None, None, None, [])

    def col(name: str) -> np.ndarray:
        return np.concatenate([getattr(c, name) for c in gaps])

    gap = col("gap_ms")
    # one gap's time a kept step: the gaps' time over the steps that hold it (each kept step's trailing idle and a
    # kept step's leading idle after a dropped one), so the mean gap is a part of the mean step and the mean period
    # is the mean step plus the time between steps, over the same steps (h37-left46)
    periods = [c.period_ms for c in gaps]
    per_step = all(x is not None for x in periods)
    k = sum(int(x.size) for x in periods) if per_step else int(gap.size)
    k = max(k, 1)
    avg = _running_sum(gap) / k
    booked: dict[str, float] = {}
    if ledger is not None:
        bk = np.concatenate([c.booked_ms for c in gaps])
        pos = bk > 0
        share = np.where(pos, bk / k, 0.0)  # a category a gap does not book adds nothing (the rows left it out)
        # a category enters the summary in the order the rows first booked it: by first gap, then HOST_IDLE's order
        first = [(int(np.argmax(pos[:, j])), j) for j in range(len(HOST_IDLE)) if pos[:, j].any()]
        for _, j in sorted(first):
            booked[HOST_IDLE[j]] = _running_sum(share[:, j])
        booked = {c: min(v, float(getattr(ledger, c))) for c, v in booked.items()}
    cycle = _running_sum(np.concatenate(periods)) / k if per_step else _running_sum(col("cycle_ms")) / k
    gap_steps = _running_sum(np.concatenate([c.step_ms for c in gaps])) / k if per_step else None
    rows: list[StepGap] = []
    for c in gaps:
        if len(rows) >= GAP_ROWS:
            break
        rows += c.rows(GAP_ROWS - len(rows))
    return Gaps(
        count=k, avg_gap_ms=avg, max_gap_ms=_most_in_one_step(gaps, float(gap.max())) if per_step else float(gap.max()),
        share_of_step=(avg / cycle) if cycle > 0 else None, avg_cycle_ms=cycle if cycle > 0 else None,
        avg_step_ms=gap_steps,
        avg_input_wait_ms=_running_sum(col("input_wait_ms")) / k, avg_launch_ms=_running_sum(col("launch_ms")) / k,
        avg_host_other_ms=_running_sum(col("host_other_ms")) / k, gaps=rows, ledger_ms_per_step=booked,
        avg_held_ms=_running_sum(np.concatenate([c.held_ms if c.held_ms is not None else np.zeros(len(c))
                                                 for c in gaps])) / k,
        avg_profiler_ms=_running_sum(np.concatenate([c.profiler_ms if c.profiler_ms is not None else np.zeros(len(c))
                                                     for c in gaps])) / k,
        avg_dispatch_ms=_running_sum(np.concatenate([c.dispatch_ms if c.dispatch_ms is not None else np.zeros(len(c))
                                                     for c in gaps])) / k,
        top_ops=_top_ops(gaps, k), top_ranges=_top_ops(gaps, k, "ranges_ms"), top_frames=_top_ops(gaps, k, "frames_ms"),
        top_comm_ranges=_top_ops(gaps, k, "comm_ms"), top_os_waits=_top_waits(gaps, k),
    )


def _in_periods(win: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """ms per kept step: the gaps' time (``win``, ps, disjoint) inside each step's period, from its start (``starts``,
    ps, in step order) to the next kept step's start, the last's open-ended.  A gap lies in the periods it spans:
    the idle after a step's last kernel runs on into the next step's window up to its first work, and a kept step
    after a dropped one also holds the end of the gap before it -- each instant in one period, so the periods' sum
    is the gaps' sum, the mean's numerator."""
    n = starts.size
    out = np.zeros(n)
    if not n or not win.shape[0]:
        return out
    st = np.asarray(starts, np.int64)
    a, b = win[:, 0].astype(np.int64), win[:, 1].astype(np.int64)
    ja = np.clip(np.searchsorted(st, a, side="right") - 1, 0, n - 1)
    jb = np.clip(np.searchsorted(st, b - 1, side="right") - 1, 0, n - 1)
    one = ja >= jb
    np.add.at(out, ja[one], (b[one] - a[one]).astype(np.float64))
    # a gap over a step's start: its head in the period it starts in, the rest from each later start on (rare: a
    # Python loop only there)
    for k in np.flatnonzero(~one).tolist():
        cuts = np.concatenate([[a[k]], st[ja[k] + 1:jb[k] + 1], [b[k]]])
        np.add.at(out, np.arange(ja[k], jb[k] + 1), np.diff(cuts).astype(np.float64))
    return out / PS_PER_MS


def _most_in_one_step(gaps: list[GapColumns], longest: float) -> float:
    """The gaps' maximum beside their mean: the longest gap, or the most gap time one kept step's period holds where
    that is more -- never under the mean, which books the gaps' sum per kept step (:func:`_in_periods`).

    ASSUMPTION this replaces: each kept step holds one gap, so the longest gap bounds what one step holds.  A kept
    step after a dropped one holds two pieces -- the end of the gap before it and its own trailing gap -- and the
    mean counts both: on three iterations whose first held the profiler's buffer request (SURVEY h37-survey45,
    moe_01) the one kept step read "idle 62 us between steps on average (max 40 us)", an average above its maximum."""
    held = [float(c.in_period_ms.max()) for c in gaps if c.in_period_ms is not None and c.in_period_ms.size]
    return max([longest, *held])


#: host ops a summary of the gaps names (the longest, by their average time in a gap)
GAP_OPS = 3


def _top_waits(gaps: list[GapColumns], k: int) -> list[tuple[str, float, float]]:
    """(OS call, average ms of a gap the launching thread spent in it, the most in one gap) of the :data:`GAP_OPS`
    calls holding the most gap time over every GPU's gaps, longest first (ties by name)."""
    return [(name, avg, round(max(c.os_max_ms.get(name, 0.0) for c in gaps), 4))
            for name, avg in _top_ops(gaps, k, "os_ms")]


def _top_ops(gaps: list[GapColumns], k: int, column: str = "ops_ms") -> list[tuple[str, float]]:
    """(host op, average ms of a gap it fills) of the :data:`GAP_OPS` ops filling the most gap time over every GPU's
    gaps, longest first (ties by name, so the order is one); ``column="ranges_ms"``: the user's ranges instead."""
    total: dict[str, float] = {}
    for c in gaps:
        for name, v in getattr(c, column).items():
            total[name] = total.get(name, 0.0) + v
    top = sorted(total.items(), key=lambda kv: (-kv[1], kv[0]))[:GAP_OPS]
    return [(name, round(v / k, 4)) for name, v in top]
