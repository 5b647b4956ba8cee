"""Where the host waited for the GPU: the one home of that reading, which the steps (a loop's iteration ends where its
host waits) and the metrics (a wait's idle is host_sync's) both ask.

A host waits for the GPU in a sync call (``cudaStreamSynchronize``, ``hipDeviceSynchronize``: ``devices.SYNC_CALLS``)
or by polling: asking an event or a stream "done yet?" (``devices.POLL_CALLS``) until the GPU says so
(``while (hipEventQuery(ev) == hipErrorNotReady)``).  The two are one wait by other calls: the host launches nothing
until it returns, and the GPU idles after it until the host launches again.  Read apart, a loop that polled after each
burst read its steps from the launches alone and split each burst in halves (``rpdtrace.write(poll=)``: 58 steps of
half a burst, "0.5 times per step", where its ``hipDeviceSynchronize`` twin reads 28 bursts, h37-probe45s).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.frameworks import Framework
from tb_gpu_advisor.model.columns import sorted_unique
from tb_gpu_advisor.model.enclosing import Encloser
from tb_gpu_advisor.model.trace import DeviceEvents, HostEvents, Trace, line_processes

_NONE = np.zeros(0, np.int64)


@dataclass
class Waits:
    """The host's waits for the GPU, by start: each a sync call or a poll (its queries, the first to the one that said
    done)."""

    idx: np.ndarray  # host event of each wait: the sync call, or the poll's query that said done
    start: np.ndarray  # int64 ps: the call's start, or the poll's first query's
    end: np.ndarray  # int64 ps: when it returned
    poll: np.ndarray  # bool per wait: a poll

    def polls(self) -> tuple[np.ndarray, np.ndarray]:
        """(the query that said "done" of each poll, ascending, the poll's first query's start in ps): the polls alone,
        as the metrics ask them (a poll's wait runs from its first query to the query that said done)."""
        done, begin = self.idx[self.poll], self.start[self.poll]
        order = np.argsort(done, kind="stable")
        return done[order], begin[order]

    def where(self, keep: np.ndarray) -> "Waits":
        """The waits ``keep`` (a bool per wait) says, in their order."""
        return Waits(self.idx[keep], self.start[keep], self.end[keep], self.poll[keep])


def host_waits(trace: Trace, launches: list[np.ndarray], fw: Framework | None = None) -> Waits:
    """Every wait of the host for the GPU in ``trace`` (``launches``: per GPU, each device event's launch record):
    its sync calls and, where ``fw`` is given, its polls outside the framework's ops (:func:`polls`)."""
    h = trace.h
    sync = np.flatnonzero(h.name_mask(devices.is_sync_call)) if len(h) else _NONE
    done, begin = polls(h, trace.devices, launches, framework_ops(trace, fw)) if fw is not None and len(h) else \
        (_NONE, _NONE)
    idx = np.concatenate([sync.astype(np.int64), done])
    start = np.concatenate([h.start[sync].astype(np.int64), begin]) if len(h) else _NONE
    end = h.end[idx].astype(np.int64) if idx.size else _NONE
    poll = np.r_[np.zeros(sync.size, bool), np.ones(done.size, bool)]
    order = np.argsort(start, kind="stable")
    return Waits(idx[order], start[order], end[order], poll[order])


def process_waits(trace: Trace, waits: Waits, gpu: int) -> Waits:
    """The waits of the process that drives ``gpu`` (on its host lines: ``model.trace.line_processes``); all of them
    where the trace names no process per GPU (one process).

    Why: ranks that run one loop a little apart each wait for their own GPU at their own iterations' ends; read beside
    another rank's, a rank's launch sequence is "waited on" in the middle of its every repeat too, so no boundary is
    its loop's alone (h37-probe47f: two ranks 50 us apart read as one pass, each rank alone as 2 iterations)."""
    proc = line_processes(trace)
    lines = trace.gpu_host_lines.get(gpu)
    if proc is None or lines is None or not len(lines) or not waits.idx.size:
        return waits
    return waits.where(proc[trace.h.line[waits.idx]] == proc[int(np.asarray(lines)[0])])


def managed_reads(trace: Trace, gpu: int) -> np.ndarray:
    """Start (ps, ascending) of each Unified Memory page migration from ``gpu`` to the host that no call asked for
    (``devices.page_migration``, device to host): a host thread touched managed memory the GPU last held and waited in
    its page fault while the driver moved the page -- the program reading a value its kernels wrote (a stop flag, a
    count) without a copy call of its own.

    Why: a native loop that keeps its flag in managed memory (``cudaMallocManaged``) reads it with a plain load, no
    sync or copy call between its turns -- its runtime trace records nothing there, and only the migration's own
    record shows the host waited for the GPU's result: cestwc/balinski-and-gomory-cuda ``report7`` (h37-nsys60)."""
    d = next((x for x in trace.devices if x.gpu == gpu), None)
    if d is None or not len(d):
        return _NONE
    paged = devices.page_migration(d.names)[d.name] if d.names else np.zeros(len(d), bool)
    read = paged & (devices.event_copy_directions(d.names, d.name, d.kind) == "d2h")
    return np.sort(d.start[read].astype(np.int64))


def sync_waits(h: HostEvents) -> Waits:
    """The sync calls alone as waits: where no launches or framework are known (a reader called on its own)."""
    sync = np.flatnonzero(h.name_mask(devices.is_sync_call)) if len(h) else _NONE
    start = h.start[sync].astype(np.int64)
    order = np.argsort(start, kind="stable")
    sync = sync[order].astype(np.int64)
    return Waits(sync, start[order], h.end[sync].astype(np.int64), np.zeros(sync.size, bool))


def framework_ops(trace: Trace, fw: Framework) -> np.ndarray:
    """Bool per host event: a framework's op (its ops and dispatch events, and ranges the reader read as ops: autograd
    NVTX, roctx ``aten::`` markers) -- what a query inside is the framework's own, no poll of the program's."""
    h = trace.h
    op = h.name_mask(fw.host_op_event) | h.name_mask(fw.dispatch_event)
    r = trace.ranges
    if r is not None and r.idx.size:
        op[r.idx[r.op]] = True
    return op


def polls(h: HostEvents, devs: list[DeviceEvents], launches: list[np.ndarray], ops: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray]:
    """(the query that said "done" of each poll, the poll's first query's start in ps): event or stream queries
    (``devices.POLL_CALLS``) in a row among a launching thread's runtime calls, outside every ``ops`` event, two or more
    asked until one returned after the GPU work launched before them had drained -- the program asking "done yet?"
    until the GPU said so (``while not ev.query()``).  A poll ends at that query: the queries after it ask anew (the
    next iteration's ``if ev.query()``, another event) -- a run of queries is cut after each one that found the GPU
    done (:func:`said_done`), and a launch between two queries ends the run (the host was queueing work, not waiting).

    Why: such a loop is the program's own wait for the GPU, as ``ev.synchronize()`` would be, and the GPU idles
    after it until the host launches again; unread, that idle was taken for launch overhead a CUDA graph removes
    (``torchtrace.write_poll_then_host_work``: "Launch-bound, critical, 308 us", h37-probe44s).  A loop that launches
    between its queries (query, launch, query ... then queries until done: ``torchtrace.write_launches_while_polling``)
    asks its next step's first query after the host's work on the result with no runtime call between: read as one
    run, its last query began after the drain and no poll was read (h37-probe45p: launch_bound critical, 308 us).
    The caching allocator's queries of freed blocks' events lie inside the ops that allocate (``aten::empty*``: d2d_v100
    8,602, torchrec_a100_stalls 25,773, hta_v100 2,413) and ask once per event, not until the GPU drains: none is a
    poll.  "Inside" is by nesting (``Encloser(nested=True)``): an op's queries after an op inside it returned
    (``aten::empty``) read as outside every op, a poll of 1 a step and 130 us of its idle where the twin without the
    inner op reads none (h37-probe47e)."""
    none = (_NONE, _NONE)
    q = h.name_mask(devices.is_poll_call)
    if q.sum() < 2:
        return none
    rec = np.concatenate([ln[ln >= 0] for ln in launches]).astype(np.int64) if launches else _NONE
    launch = h.name_mask(devices.is_launch_call)
    mine = _launching_lines(h, launch, rec)
    calls = np.flatnonzero(h.name_mask(devices.is_runtime_call) & np.isin(h.line, mine))
    if not calls.size:
        return none
    calls = calls[np.lexsort((h.start[calls], h.line[calls]))]
    # by nesting: an op's query after an op inside it returned is still the op's (h37-probe47e)
    isq = q[calls] & (Encloser(h, ops, nested=True).find(calls) < 0)
    same = np.concatenate([[False], h.line[calls][1:] == h.line[calls][:-1]])
    first = isq & ~(same & np.concatenate([[False], isq[:-1]]))  # a run's first query
    at = np.flatnonzero(isq)
    if at.size < 2:
        return none
    qc = calls[at]
    run = np.cumsum(first)[at]
    blind = _after_lost_launch(h, launch[calls], calls, rec)[at]
    done = said_done(h, devs, launches, qc) & ~blind
    done[blind] = _runs_last(run)[blind]  # no record to judge by: the run's shape, asked until the host went on
    opens = first[at] | np.concatenate([[False], done[:-1] & (run[1:] == run[:-1])])  # a poll's first query
    begin = np.flatnonzero(opens)[np.cumsum(opens) - 1]  # per query, its poll's first query
    poll = done & ~opens  # the query that said done, after one at least that did not
    return qc[poll].astype(np.int64), h.start[qc[begin[poll]]].astype(np.int64)


def _launching_lines(h: HostEvents, launch: np.ndarray, rec: np.ndarray) -> np.ndarray:
    """The host lines (sorted) that launch onto the GPU: those with a recorded launch (``rec``) and those whose launch
    calls (``launch``: per host event, a launch call) all lost their device records.  Why: a thread whose every kernel record was lost still polls for its own
    work; asked only of lines with a recorded launch, its polls were no waits and its last lost launch was not read as
    one the GPU was shown done with (h37-probe47e: ``write_lost_kernel_records(poll=, side_us=)`` 49 of 170 lost, its
    sync twin 50)."""
    lines = h.line[np.flatnonzero(launch)]
    return sorted_unique(np.concatenate([h.line[rec], lines]).astype(np.int64))


def _after_lost_launch(h: HostEvents, launch: np.ndarray, calls: np.ndarray, rec: np.ndarray) -> np.ndarray:
    """Bool per runtime call of ``calls`` (sorted by line, then start; ``launch``: per call, a launch call): the last
    launch call before it on its line has no device record (its kernel's record was lost: ``job.kind.lost_launches``).  Why: a query's answer is read from
    the recorded work it could wait for, and after a lost launch the records show the GPU done before the host's first
    query -- each query of the loop read as its own poll that said done at once, so none was a wait
    (``nsysexport.write_lost_kernel_records(poll=)`` read nothing lost where its sync twin reads half the launches,
    h37-debt46's Left 1)."""
    lost = launch & ~np.isin(calls, rec)
    pos = np.where(launch, np.arange(calls.size), -1)
    last = np.maximum.accumulate(pos)  # per call, the latest launch at or before it in the order
    line = h.line[calls]
    ok = last >= 0
    ok[ok] = line[last[ok]] == line[ok]  # on its own line
    return ok & lost[np.maximum(last, 0)]


def _runs_last(run: np.ndarray) -> np.ndarray:
    """Bool per query (``run``: its run's number, ascending): the last query of a run of two or more -- a poll by its
    shape, the host asking in a row until it went on with something else (a launch, its own code's next call)."""
    last = np.r_[run[1:] != run[:-1], True]
    return last & np.r_[False, run[1:] == run[:-1]]


def said_done(h: HostEvents, devs: list[DeviceEvents], launches: list[np.ndarray], qc: np.ndarray) -> np.ndarray:
    """Bool per query ``qc``: it returned once the GPU work launched before it had drained, on the GPUs its thread
    launched onto (another process's work is not its wait) -- the query that found the GPU done."""
    t = h.start[qc].astype(np.int64)
    least = np.iinfo(np.int64).min
    drained = np.full(t.shape, least)
    line = h.line[qc]
    for d, launch in zip(devs, launches):
        rec = launch[launch >= 0].astype(np.int64)
        mine = np.isin(line, h.line[rec])
        if mine.any():
            drained[mine] = np.maximum(drained[mine], drain(d, launch, h, t[mine]))
    return (drained > least) & (h.end[qc].astype(np.int64) >= drained)


def drain(d: DeviceEvents, launch: np.ndarray, h: HostEvents, t: np.ndarray) -> np.ndarray:
    """Per time ``t`` (ps): the end of the GPU's work launched before it (a device event without a launch record,
    by its start) -- when the queue a wait begun at ``t`` waits for has drained.  Work launched during the wait
    (a read's own copy of its value) is no part of that queue."""
    launch = launch.astype(np.int64, copy=False)
    at = np.where(launch >= 0, h.start[np.maximum(launch, 0)].astype(np.int64), d.start.astype(np.int64))
    order = np.argsort(at, kind="stable")
    ends = np.maximum.accumulate(d.end[order].astype(np.int64))
    k = np.searchsorted(at[order], t, side="left") - 1
    return np.where(k >= 0, ends[np.maximum(k, 0)], np.iinfo(np.int64).min)
