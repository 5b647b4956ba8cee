"""Shared per-host analysis context: events, steps, host<->device links (built once)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tb_gpu_advisor import devices, frameworks
from tb_gpu_advisor.common.memory import release_free_heap
from tb_gpu_advisor.common.options import UserOptions
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.frameworks import Framework, user_ranges, xla
from tb_gpu_advisor.model.columns import (index_dtype, int_dtype, lookup_mask, outermost, rising_runs,
                                          searchsorted_right, sorted_unique, subtract_intervals, union_intervals,
                                          window_index_by_runs)
from tb_gpu_advisor.model.enclosing import Encloser
from tb_gpu_advisor.model.trace import PS_PER_MS as PS_PER_MS, PS_PER_US as PS_PER_US  # the metrics import them here
from tb_gpu_advisor.model.trace import DeviceEvents, HostEvents, Spans, Trace
from tb_gpu_advisor.job import Job
from tb_gpu_advisor.job import peers as job_peers
from tb_gpu_advisor.job.waits import Waits, host_waits
from tb_gpu_advisor.metrics import trips
from tb_gpu_advisor.metrics.types import per_step, sharing_ranks
from tb_gpu_advisor.steps.types import Steps, own_step_rows




@dataclass
class GpuCtx:
    d: DeviceEvents
    launch: np.ndarray  # host event index of each device event's launch record, -1
    step: np.ndarray  # index into steps (kept), -1 outside kept steps (int16 up to 32k steps)
    windows: np.ndarray  # (n, 2) ps
    active: bool  # has kernels (or collectives)
    #: the host's per-step numbers are shared with this GPU (:attr:`Context.ranks`, the host ledger's mean): it is
    #: active, or -- where no GPU is -- it did device work (copies) inside the kept steps
    shares: bool = False
    name_prec: np.ndarray = field(default=None)  # per event precision code
    tc: np.ndarray = field(default=None)  # per event tensor core bool
    int_data: np.ndarray = field(default=None)  # per event: of unknown precision, its name types 8-bit integer data
    #: bool per host event: on a line of the process driving this GPU (``Trace.gpu_host_lines``); None: every line
    host_mask: np.ndarray | None = None
    #: this GPU's own input / dispatch spans when ``host_mask`` is set, or its input spans less its round trips' return
    #: legs (``_less_return_legs``); None: the context's
    input_spans: tuple[np.ndarray, np.ndarray] | None = None
    dispatch_spans: tuple[np.ndarray, np.ndarray] | None = None
    own_spans: tuple[np.ndarray, np.ndarray] | None = None
    #: bool per device event: launched by an op that ran eagerly (:attr:`Context.eager_ops`)
    eager: np.ndarray = field(default=None)
    #: float per device event: the share of its time above the least its work of known FLOPs and bytes needs at the
    #: GPU's peaks (``metrics.flops``: its shape's roofline floor); None, or 1.0 for an event, where none is known.
    #: The one home of a kernel's floor that each saving of kernel time reads (h37-pool36): a fix cannot take off
    #: a kernel more than its time above that floor, whatever else it changes
    above_floor: np.ndarray | None = None
    #: :meth:`kernels_in_steps`' answer with the columns it was made from (step, kind, start, end), compared by identity
    _kernels: tuple | None = field(default=None, repr=False, compare=False)
    #: per kept step, where the step after it in the capture starts on this GPU (ps, kept or dropped; -1: none
    #: follows): the end of the step's period and of the gap after it (``Steps.next_start``)
    next_start: np.ndarray | None = None
    #: per kept step, the id of the step before it in the capture (kept or dropped), -1 where none (``Steps.prev_ids``)
    prev_id: np.ndarray | None = None
    #: ``metrics.breakdown.waiting_calls_of``', ``off_launcher_calls_of``' and ``launch_calls_of``' answers with what
    #: they were read from (the launches, the capture's ranges), compared by identity: kept per GPU, whose ledger is
    #: painted three times and named once
    waiting_memo: tuple | None = field(default=None, repr=False, compare=False)
    #: ``metrics.kernels.shared_in_steps``' answer with the columns it was read from (step, windows), compared by
    #: identity: the kernel tables of the kept steps and of the calls run into them share it
    shared_memo: tuple | None = field(default=None, repr=False, compare=False)

    def kernels_in_steps(self) -> tuple[np.ndarray, np.ndarray]:
        """(bool per device event, durations in ps of those events) of this GPU's compute kernels inside kept steps
        -- ``KIND_KERNEL``, no collectives or copies; the durations are ``d.end - d.start`` in the columns' dtype,
        in event order.

        Made once per GPU: the precision totals, small kernels, fusion, kernel durations and capture checks each
        built this mask and gathered the two time columns again (~0.4 ms a GPU and module on the dense
        100 MB capture's 220 k events a GPU).  A mask, not indices: nearly every event of a GPU is a kernel in a
        step, and numpy gathers through such a mask faster than through int32 indices.  The answer is kept with the
        columns it was read from and made again if any of them is no longer the GPU's (``step`` is assigned after
        the GpuCtx is made), so a stale answer is never handed out.
        """
        d, memo = self.d, self._kernels
        if memo is not None and memo[0] is self.step and memo[1] is d.kind and memo[2] is d.start and memo[3] is d.end:
            return memo[4], memo[5]
        m = (self.step >= 0) & (d.kind == devices.KIND_KERNEL)
        dur = d.end[m] - d.start[m]
        self._kernels = (self.step, d.kind, d.start, d.end, m, dur)
        return m, dur

    def kernel_time_in_steps(self) -> np.ndarray:
        """Per kernel of :meth:`kernels_in_steps`, its time (ps, int64) inside the kept steps: its duration cut where
        the run of back-to-back kept windows its step begins ends (:meth:`kept_reach`).

        A kernel belongs to the step its start falls in (:func:`assign`), but may run past the kept steps: a host
        window lent to a GPU that launched nothing in it (a 4-rank DeepSpeed iteration read on one rank's
        ``forward`` spans cut the other ranks' 1.5 ms kernels at 137 us, and "152.8% of the step" was in small
        grids, walk seed 3954 of ``--forms12``), or the last kept step's end.  A time said as a part of the steps
        is the part inside them, as the ledger counts it; the part past a boundary into the next kept step stays
        in (a sum over the steps holds it once).  A kernel's own length (is it small?) stays
        :meth:`kernels_in_steps`' duration."""
        m, dur = self.kernels_in_steps()
        dur = dur.astype(np.int64)
        if not dur.size:
            return dur
        room = self.kept_reach()[self.step[m]] - self.d.start[m].astype(np.int64)
        return np.minimum(dur, np.maximum(room, 0))

    def ends_in_steps(self, sel: np.ndarray) -> np.ndarray:
        """The ends (int64 ps) of the in-step device events ``sel`` (indices), each cut where the run of kept windows
        its step begins ends (:meth:`kept_reach`), as :meth:`kernel_time_in_steps` cuts a kernel's time.

        Why: a sum of kernels' times said as a part of the step (a fusible chain's kernel time, an attention run's
        matmuls) is their time inside the steps, whichever kernels a module picks out of the GPU's in-step ones;
        its start is the kernel's own."""
        end = self.d.end[sel].astype(np.int64)
        return np.minimum(end, self.kept_reach()[self.step[sel]]) if end.size else end

    def kept_reach(self) -> np.ndarray:
        """Per kept step (int64 ps): the end of the run of kept windows, back to back, that begins with it -- where
        a kernel started in that step leaves the kept steps."""
        w = self.windows.astype(np.int64)
        if not w.shape[0]:
            return np.zeros(0, np.int64)
        run = np.concatenate([[0], np.cumsum(w[1:, 0] > w[:-1, 1])])  # a new run where a window starts after a gap
        return np.maximum.reduceat(w[:, 1], np.flatnonzero(np.diff(run, prepend=-1)))[run]

    def forget_kernels(self) -> None:
        """Drop :meth:`kernels_in_steps`' answer: its durations are 8 bytes a kernel (14 MB on the dense 100 MB
        capture), which must not lie under the later modules' peaks once the kernel modules are done."""
        self._kernels = None


def distinct_ids(a: np.ndarray) -> np.ndarray:
    """``np.unique(a)`` of a column of ids spanning a small range (streams, event kinds), by counting: a GPU's 220 k
    events hold a few streams and kinds, and np.unique sorted them all (1-2 ms a GPU and module on the dense 100 MB
    capture).  Ids spread wider than the column is long take np.unique."""
    if not a.size:
        return np.unique(a)
    few = _few_distinct(a, _FEW_IDS)
    if few is not None:
        return few
    lo, hi = int(a.min()), int(a.max())
    if hi - lo > max(a.size, 1 << 16):
        return np.unique(a)
    present = np.bincount(np.subtract(a, lo, dtype=np.intp), minlength=hi - lo + 1) > 0
    return (np.flatnonzero(present) + lo).astype(a.dtype, copy=False)


#: At most this many distinct values are found by :func:`_few_distinct`'s compares before counting takes over.
_FEW_IDS = 8


def _few_distinct(a: np.ndarray, most: int) -> np.ndarray | None:
    """The distinct values of a non-empty ``a``, ascending, where it holds at most ``most``; else None.

    Why: a GPU holds one to a few streams and event kinds.  Each value found costs a compare and an ``argmax`` over
    the narrow column (the first event not yet told), where counting first widened the column to intp and binned it:
    0.5 ms a GPU and call against 0.02 ms on the dense 100 MB capture's 220 k events a GPU."""
    found = [a[0]]
    rest = a != a[0]
    for _ in range(most):
        i = int(rest.argmax())
        if not rest[i]:
            return np.array(sorted(found), dtype=a.dtype)
        found.append(a[i])
        rest &= a != a[i]
    return None


#: Bits of :attr:`Context.host_flags`, one per role a host event can have.
_HOST_OP, _HOST_INPUT, _HOST_WORK, _OP_ON_DEVICE, _DISPATCH_CALL, _EAGER_OP, _EAGER_CALL, _STEP_MARK = \
    (1 << i for i in range(8))
#: the roles other modules ask :meth:`Context.role_rows` for
HOST_INPUT_BIT, HOST_WORK_BIT, DISPATCH_BIT = _HOST_INPUT, _HOST_WORK, _DISPATCH_CALL


def by_name(memo: dict, classify: Callable[[list[str]], np.ndarray], names: list[str]) -> np.ndarray:
    """``classify(names)`` -- a per-name classifier (``devices.tensor_core``, ``frameworks.elementwise``, ...) -- with
    each distinct name classified once per ``memo`` (the analysis's): every GPU has a name table of its own holding
    mostly the same kernels, and each name costs a few regex searches per classifier and module."""
    if not names:
        return classify(names)
    known = memo.setdefault(("by_name", classify), {})
    new = [n for n in dict.fromkeys(names) if n not in known]
    if new:
        got = classify(new)
        memo[("by_name_dtype", classify)] = got.dtype
        known.update(zip(new, got.tolist()))
    return np.fromiter(map(known.__getitem__, names), dtype=memo[("by_name_dtype", classify)], count=len(names))


def pack_flags(masks: dict[int, np.ndarray], n: int) -> np.ndarray:
    """One uint8 per event holding each bool column of ``masks`` (bit -> column) as its bit.

    Each bool column is read as the uint8 0 / 1 it is stored as, times its bit, ORed in: plain passes over bytes.
    An OR ``where=`` the mask took a masked ufunc loop, 6.6 ms for the six columns of the dense 100 MB capture's
    2.25 M host events against 0.8 ms."""
    flags = np.zeros(n, dtype=np.uint8)
    tmp = np.empty(n, dtype=np.uint8)
    for bit, mask in masks.items():
        np.multiply(np.asarray(mask, dtype=bool).view(np.uint8), np.uint8(bit), out=tmp)
        flags |= tmp
    return flags


@dataclass
class Context:
    trace: Trace
    h: HostEvents
    steps: Steps
    gpus: list[GpuCtx]
    #: the host events' roles, one bit each (read through the properties below): six bool columns were
    #: 6 bytes per host event through the whole analysis, 13 MB on a dense 100 MB capture
    host_flags: np.ndarray
    host_step: np.ndarray  # kept-step index of each host event by start (host windows), -1 (int16 up to 32k steps)
    #: the user's settings of this analysis (parameter count, model FLOPs per step): handed in, never read here
    options: UserOptions = field(default_factory=UserOptions)
    fw: Framework = frameworks.UNKNOWN
    #: host input time that no single event names (JAX: marker time before the dispatch, device_put): disjoint (starts, ends)
    input_spans: tuple[np.ndarray, np.ndarray] = None  # type: ignore[assignment]
    #: the host inside the framework's dispatch of compiled work (JAX ``PjitFunction``): disjoint (starts, ends)
    dispatch_spans: tuple[np.ndarray, np.ndarray] = None  # type: ignore[assignment]
    #: the host's own work inside the dispatch (:func:`no_call_stretches`): host compute, not launch wait; (starts, ends)
    own_spans: tuple[np.ndarray, np.ndarray] | None = None
    #: the host blocked inside runtime calls (syncs, copies): waiting, never host work; (starts, ends)
    blocked_spans: tuple[np.ndarray, np.ndarray] = None  # type: ignore[assignment]
    #: what the capture is (``job/``): its kind, phase and one-time costs; None for a bare reading
    job: Job | None = None
    #: host event indices (ascending) of the device allocator's calls (``cudaMalloc``/``cudaFree``, HIP's); None
    #: where the host never makes one -- read per GPU by :meth:`alloc_spans`
    alloc_calls: np.ndarray | None = None
    #: host time before each step's first op that is not input: a capture that records its input pipeline's own
    #: events (the DataLoader's ``__next__``) says where input is, the rest is other host work; disjoint (starts, ends)
    pre_op_spans: tuple[np.ndarray, np.ndarray] | None = None
    #: whether anything read an input wait (:func:`_input_measured`, ``HostInput.measured``)
    input_measured: bool = True
    #: the untraced leads that stand for a loader end at the batch's put, most of them (:func:`_lead_to_the_put`
    #: split them there): what the input finding's words say the number is (``HostInput.lead_to_put``)
    lead_to_put: bool = False
    #: answers shared by every GPU's modules (:meth:`role_rows`), computed at the first ask
    memo: dict = field(default_factory=dict, repr=False, compare=False)

    def by_name(self, classify: Callable[[list[str]], np.ndarray], names: list[str]) -> np.ndarray:
        """``classify(names)`` with each distinct name classified once per analysis (:func:`by_name`)."""
        return by_name(self.memo, classify, names)

    def role_rows(self, bit: int, mask: np.ndarray | None = None) -> np.ndarray:
        """Indices of the host events with role ``bit`` (a ``_HOST_*`` flag), among ``mask`` (a GPU's process's host
        events; None: all).  Without a mask the answer is the same for every GPU, so it is kept: unpacking the flags
        and scanning the host table (2.25 M events on the dense 100 MB capture) once per GPU and module was a few ms
        each time, for a role that held no event or a thousand."""
        if mask is not None:
            return np.flatnonzero(self._flag(bit) & mask)
        rows = self.memo.get(("role", bit))
        if rows is None:
            rows = self.memo[("role", bit)] = np.flatnonzero(self._flag(bit)).astype(index_dtype(len(self.h)), copy=False)
        return rows

    def gpu_input_spans(self, g: GpuCtx) -> tuple[np.ndarray, np.ndarray] | None:
        """GPU ``g``'s input spans (time that stands for an untraced loader): its own process's
        (``GpuCtx.input_spans``, set where the GPU has a ``host_mask`` or round trips), else the host's (:attr:`input_spans`); None or
        empty where there are none.  Why one home: the ledger, the copies' waits, the syncs' and the input account each
        wrote this choice inline (h37-review26 *Left* 5); a GPU that read the host's spans in one and its own in
        another would book its input wait twice or not at all."""
        return self.input_spans if g.input_spans is None else g.input_spans

    def input_wait_parts(self, g: GpuCtx) -> tuple[np.ndarray, np.ndarray]:
        """(starts, ends) int64, not merged, of the host's input wait that explains GPU ``g``'s idle time: the input
        pipeline's own events on ``g``'s process's lines (role ``HOST_INPUT_BIT`` under ``host_mask``) and
        :meth:`gpu_input_spans`.  Callers merge (``union_intervals``) where they need disjoint intervals."""
        h = self.h
        inp = self.role_rows(HOST_INPUT_BIT, g.host_mask)
        s, e = h.start[inp].astype(np.int64, copy=False), h.end[inp].astype(np.int64, copy=False)
        sp = self.gpu_input_spans(g)
        if sp is None or not sp[0].size:
            return s, e
        return np.concatenate([s, sp[0].astype(np.int64)]), np.concatenate([e, sp[1].astype(np.int64)])

    @property
    def waits(self) -> Waits:
        """Where the host waited for the GPU: its sync calls and its polls (``Job.waits``, read once by the job stage
        for the steps); read here, by the same function, only where the context was built without them (a bare
        reading, a job made by hand)."""
        w = self.job.waits if self.job is not None else None
        if w is None:
            w = self.memo.get("waits")
            if w is None:
                w = self.memo["waits"] = host_waits(self.trace, [g.launch for g in self.gpus], self.fw)
        return w

    def one_time_spans(self, g: GpuCtx | None = None) -> tuple[np.ndarray, np.ndarray] | None:
        """The host inside one-time costs (module loading, library start-up, compilation): disjoint (starts, ends);
        of ``g``'s process where it has its own (``GpuCtx.host_mask``): its own one-time calls and the spans no
        single call is (``OneTime.shared_start``).  Another rank's module load or handle creation runs in its own
        process while this GPU's keeps launching: it holds none of this GPU's idle (h37-probe42r)."""
        if self.job is None or not self.job.phase.start.size:
            return None
        p = self.job.phase
        if g is None or g.host_mask is None:
            return p.spans()
        return self._own_spans(p.calls, g, (p.shared_start, p.shared_end))

    def peer_one_time_spans(self, g: GpuCtx) -> tuple[np.ndarray, np.ndarray] | None:
        """The other processes of the trace inside their one-time costs (:meth:`one_time_spans` of every other GPU
        driven by a process of its own): disjoint (starts, ends); None where none has any.  Why: the ranks of one
        job leave a collective together, so a rank's collective running while a peer loads a module or compiles waits for that peer's start-up -- time the peer's one-time cost holds, not
        communication this rank's overlap could hide (ykcai-daniel/torch-compile-moe rank 1: 2.67 ms "exposed" in
        its all-to-all while rank 0 loaded, before its own load began; h37-ranks57 *Left* 4, h37-ranks58).  With them
        the peers read from their own files on this trace's clock (``Job.peer_one_time``: ranks in sibling run
        folders of one machine, h37-ranks59), for every GPU here: those are other processes.  A peer's span counts
        only where its GPU runs no collective (``job.peers.not_entered``): a peer that entered the collective before
        its one-time cost is not waited for there (h37-ranks60)."""
        spans = [job_peers.not_entered(x, (o.d,)) if x is not None else None
                 for o in self._peers(g) for x in (self.one_time_spans(o),)]
        spans.append(self.job.peer_one_time if self.job is not None else None)
        spans = [x for x in spans if x is not None and x[0].size]
        if not spans:
            return None
        return union_intervals(np.concatenate([x[0].astype(np.int64) for x in spans]),
                               np.concatenate([x[1].astype(np.int64) for x in spans]))

    def _peers(self, g: GpuCtx) -> list[GpuCtx]:
        """The trace's other GPUs driven by processes of their own, not ``g``'s (none where ``g``'s process is not
        known)."""
        if g.host_mask is None:
            return []
        return [o for o in self.gpus
                if o is not g and o.host_mask is not None and not (o.host_mask & g.host_mask).any()]

    def waited_start_up(self, g: GpuCtx) -> tuple[np.ndarray, np.ndarray] | None:
        """The spans a collective on ``g`` waits through a start-up: its own process's one-time costs
        (:meth:`one_time_spans`) and its peers' (:meth:`peer_one_time_spans`), disjoint (starts, ends) as int64;
        None where neither has any.  The ledger (``breakdown.category_intervals``) and the comm table
        (``comm._tally_gpu``) book that time once, as the start-up's.

        Where the peers' entries are known, ``g``'s own spans leave out the times ``g`` had entered a collective that
        a peer had not (``job.peers.own_not_entered``): it waits for that peer, not for its own host's later load
        (h37-phase60b).  They are known from the peers' GPUs in this trace and from the peers' own files on its clock
        (``Job.peer_calls``: rank folders), alike, so one capture and rank folders read ``g`` the same (h37-phase61);
        a peer counts as entered only inside the same call (``job.peers.entered_with``, h37-job62).
        With neither, the own span stands in for the peers' simultaneous loads (h37-ranks57: one rank's file)."""
        own = self.one_time_spans(g)
        if own is not None:
            peers = [c for o in self._peers(g) for c in job_peers.calls_of((o.d,))]
            if self.job is not None:
                peers += self.job.peer_calls
            mine = job_peers.calls_of((g.d,))
            all_in = job_peers.entered_with(mine[0], peers) if mine else None
            if all_in is not None:
                own = job_peers.own_not_entered(own, (g.d,), all_in)
        parts = [x for x in (own, self.peer_one_time_spans(g)) if x is not None and x[0].size]
        if not parts:
            return None
        return union_intervals(np.concatenate([x[0].astype(np.int64) for x in parts]),
                               np.concatenate([x[1].astype(np.int64) for x in parts]))

    def _own_spans(self, calls: np.ndarray, g: GpuCtx,
                   shared: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray] | None:
        """The host inside ``calls`` (host event indices) on ``g``'s process's lines, with ``shared`` spans: disjoint
        (starts, ends); None where there are none."""
        i = calls[g.host_mask[calls]]
        h = self.h
        s, e = h.start[i].astype(np.int64, copy=False), h.end[i].astype(np.int64, copy=False)
        if shared is not None and shared[0].size:
            s, e = np.concatenate([s, shared[0].astype(np.int64)]), np.concatenate([e, shared[1].astype(np.int64)])
        return union_intervals(s, e) if s.size else None

    @property
    def one_time_calls(self) -> np.ndarray | None:
        """Host event indices of the one-time calls (``OneTime.calls``), sorted; None where there are none."""
        if self.job is None or not self.job.phase.calls.size:
            return None
        return self.job.phase.calls

    def unseen_spans(self, g: GpuCtx | None = None) -> tuple[np.ndarray, np.ndarray] | None:
        """The host waiting for GPU work the capture does not hold (``OneTime.unseen_*``): disjoint (starts, ends); of
        ``g``'s process's waits where it has its own (``GpuCtx.host_mask``): a rank blocked in its own sync waits on
        its own GPU, never on another rank's (h37-probe42r)."""
        if self.job is None or not self.job.phase.unseen_start.size:
            return None
        p = self.job.phase
        if g is None or g.host_mask is None:
            return p.unseen_start, p.unseen_end
        return self._own_spans(p.unseen_calls, g)

    def alloc_spans(self, g: GpuCtx | None = None) -> tuple[np.ndarray, np.ndarray] | None:
        """The host inside the allocator's calls (:attr:`alloc_calls`) of ``g``'s process where it has its own
        (``GpuCtx.host_mask``): disjoint (starts, ends); None where there are none.  Another process's ``cudaFree``
        (its context's creation, its own frees) synchronizes its own context, never this GPU's work."""
        i = self.alloc_calls
        if i is not None and g is not None and g.host_mask is not None:
            i = i[g.host_mask[i]]
        if i is None or not i.size:
            return None
        h = self.h
        return union_intervals(h.start[i].astype(np.int64, copy=False), h.end[i].astype(np.int64, copy=False))

    def stall_calls(self, g: GpuCtx | None = None) -> np.ndarray:
        """Host event indices of the slow asynchronous calls that wait for nothing (``OneTime.stalls``,
        ``job.phase.async_stalls``), of ``g``'s process where it has its own (``GpuCtx.host_mask``)."""
        if self.job is None or not self.job.phase.stalls.size:
            return np.zeros(0, np.int64)
        i = self.job.phase.stalls
        return i[g.host_mask[i]] if g is not None and g.host_mask is not None else i

    def stall_spans(self, g: GpuCtx | None = None) -> tuple[np.ndarray, np.ndarray] | None:
        """The host inside :meth:`stall_calls`: disjoint (starts, ends); None where there are none."""
        i = self.stall_calls(g)
        if not i.size:
            return None
        return union_intervals(self.h.start[i].astype(np.int64), self.h.end[i].astype(np.int64))

    def _flag(self, bit: int) -> np.ndarray:
        return (self.host_flags & np.uint8(bit)) != 0

    @property
    def host_op(self) -> np.ndarray:
        """Bool per host event: a TF op event."""
        return self._flag(_HOST_OP)

    @property
    def host_input(self) -> np.ndarray:
        """Bool per host event: input wait (IteratorGetNext*, get_next threads)."""
        return self._flag(_HOST_INPUT)

    @property
    def host_work(self) -> np.ndarray:
        """Bool per host event: host TF op / eager execution work."""
        return self._flag(_HOST_WORK)

    @property
    def step_marks(self) -> np.ndarray:
        """Bool per host event: a range that marks a whole step (:func:`_step_marks`), read once for the ledger's host
        work, the syncs' callers and the launching threads' records."""
        return self._flag(_STEP_MARK)

    @property
    def op_on_device(self) -> np.ndarray:
        """Bool per host event: the op launched a kernel (meaningful where host_op)."""
        return self._flag(_OP_ON_DEVICE)

    @property
    def dispatch_calls(self) -> np.ndarray:
        """Bool per host event: an outermost dispatch event (one call of a compiled function)."""
        return self._flag(_DISPATCH_CALL)

    @property
    def eager_ops(self) -> np.ndarray:
        """Bool per host event: an op run eagerly -- a TF op with ``is_eager``, ``EagerExecute``, or a dispatch
        call that ran a single op (un-jitted JAX: each jnp call its own one-kernel program)."""
        return self._flag(_EAGER_OP)

    @property
    def eager_ops_counted(self) -> np.ndarray:
        """Bool per host event: an eager op, once -- :attr:`eager_ops` less the ``EagerExecute`` calls around an op's
        own event (TensorFlow records both for one op; their time is the op's, so the time reads :attr:`eager_ops`)."""
        return self._flag(_EAGER_OP) & ~self._flag(_EAGER_CALL)

    @property
    def params(self) -> int | None:
        """The user's model parameter count (``--params``, the tab's setting), None when not given."""
        return self.options.params

    @property
    def active(self) -> list[GpuCtx]:
        return [g for g in self.gpus if g.active]

    @property
    def sharing(self) -> list[GpuCtx]:
        """The GPUs a per-step number is shared among and the host's ledger averages (``GpuCtx.shares``)."""
        return [g for g in self.gpus if g.shares]

    @property
    def ranks(self) -> int:
        """The GPUs a per-step number is shared among: the active ones (at least 1); where none ran a kernel or a
        collective, those that copied in the kept steps.  One host's file can hold several ranks (an Nsight export
        of two processes, one GPU each; a process driving several GPUs): every time per step is per GPU, so every
        count per step is too, or "4 copies per step" is two ranks' 2 each (:func:`~tb_gpu_advisor.metrics.types.
        sharing_ranks`, which ``HostMetrics.ranks`` asks too)."""
        return sharing_ranks(g.shares for g in self.gpus)

    def per_step(self, x, *, shared: bool = True, unit: float = 1.0):
        """``x`` -- a count or a time (a number, or a numpy array of them), in ``unit`` -- summed over the kept steps of
        every rank, per kept step and rank: the one division every per-step number of the report makes
        (:func:`tb_gpu_advisor.metrics.types.per_step`; docs/metrics.md, "Per step and rank").  ``shared=False``: ``x``
        is one GPU's own (its row of the GPUs table) or the host's own time (a union of its intervals, each instant
        once), divided by the kept steps alone."""
        return per_step(x, self.steps.count, self.ranks if shared else 1, unit)

    def ms(self, ps) -> float:
        return float(ps) / PS_PER_MS


#: Events per chunk in :func:`assign` and :meth:`Encloser.find`: bounds their int64 temporaries (a few MB each)
#: instead of several full-size copies of a million-event column.
_CHUNK = 1 << 18


def _step_idx_dtype(n: int):
    """Dtype of indices into ``n`` steps (and -1): int16 up to 32k steps, a quarter of int64's memory."""
    return int_dtype(-1, n, floor=np.int16)


def last_starts(windows: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per window of ``windows`` (rows [start, end), disjoint, in time order): the latest of ``starts`` inside it
    (int64 min where none)."""
    last = np.full(windows.shape[0], np.iinfo(np.int64).min, dtype=np.int64)
    if not starts.size or not windows.shape[0]:
        return last
    inside = np.searchsorted(windows[:, 0], starts, side="right") - 1  # the window each start lies in
    ok = (inside >= 0) & (starts < windows[np.maximum(inside, 0), 1])
    np.maximum.at(last, inside[ok], starts[ok].astype(np.int64))
    return last


def bounds_a_window(windows: np.ndarray, last: np.ndarray, s: np.ndarray, e: np.ndarray, steps: int = 1) -> np.ndarray:
    """Bool per interval (s, e): it bounds ``steps`` consecutive step windows of ``windows`` -- starts at or before
    the first and ends after every recorded event that starts inside the last (``last``: :func:`last_starts` of those
    events; a step's window runs on to the next step's start, past its own range's end, so the window's end is no
    test).  The windows are disjoint and in time order: the first one starting at or after the interval's start is
    the first it can bound.

    Why: a span that holds a whole step -- the step's own range -- says that the step runs, not what the host does
    inside it (h37-left52); a Python frame that holds two steps or more is the loop's own (``<module>``, ``main``:
    h37-huntkin63), while a call holding one step is the step's own function, whose lines are a place the host's
    time can be named by (``metrics.breakdown.deepest_frame``)."""
    if not s.size or not windows.shape[0]:
        return np.zeros(s.shape, dtype=bool)
    j = np.searchsorted(windows[:, 0], s, side="left") + (steps - 1)
    jj = np.minimum(j, windows.shape[0] - 1)
    return (j < windows.shape[0]) & (e >= last[jj]) & (last[jj] > np.iinfo(np.int64).min)


def loop_frames(windows: np.ndarray, last: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Bool per span (s, e): a frame of the loop itself (``<module>``, ``main``), one that bounds two kept steps or
    more (:func:`bounds_a_window`, ``last`` its :func:`last_starts`): it says that the loop runs, not what the host
    does in it -- no recorded host work (h37-huntkin63), where a call holding one step is the step's own function."""
    return bounds_a_window(windows, last, s, e, steps=2)


def assign(times: np.ndarray, windows: np.ndarray) -> np.ndarray:
    """Index of the window containing each time ([start, end)), -1 if none. Windows sorted, disjoint."""
    dt = _step_idx_dtype(windows.shape[0])
    if windows.shape[0] == 0:
        return np.full(times.shape, -1, dtype=dt)
    runs = rising_runs(times)
    flat = windows.reshape(-1)
    if runs is not None and bool((flat[1:] >= flat[:-1]).all()):
        return window_index_by_runs(times, flat, runs, dt)
    w_start, w_end = windows[:, 0], windows[:, 1]
    out = np.empty(times.shape, dtype=dt)
    for a in range(0, times.shape[0], _CHUNK):
        t = times[a:a + _CHUNK]
        i = _starts_up_to(w_start, t)
        i -= 1
        ok = i >= 0
        ok &= t < w_end[np.maximum(i, 0)]
        i[~ok] = -1
        out[a:a + _CHUNK] = i
    return out


#: ``np.searchsorted(w_start, t, side="right")``, merged where the times come in sorted runs (model.columns)
_starts_up_to = searchsorted_right




def enclosing(h: HostEvents, mask_outer: np.ndarray, idx_inner: np.ndarray) -> np.ndarray:
    """For host events ``idx_inner``: index of the innermost ``mask_outer`` event on the same line containing its start."""
    if idx_inner.size == 0 or not mask_outer.any():
        return np.full(idx_inner.shape, -1, dtype=index_dtype(len(h)))
    return Encloser(h, mask_outer).find(idx_inner)


def _host_computing_ops(h: HostEvents, dispatch: np.ndarray) -> np.ndarray:
    """Bool per host event: a ``dispatch`` event (an ATen op, or one inside it) that ran ``metrics.cpu_op_ms`` or longer and made no GPU
    runtime call, itself or inside: it computed on the host (``torch.randn`` of CPU tensors), it did not hand work
    to the GPU.  Physics: dispatching an op takes microseconds; a millisecond with no runtime call is the host's own
    work, which CUDA graphs or compilation cannot take away (a real T4 trace's 10 ms CPU ``aten::randn`` per step read
    as a critical launch wait)."""
    if not dispatch.any():  # a capture without the framework's dispatch (TensorFlow's): no float pass over every event
        return np.zeros(len(h), dtype=bool)
    long = dispatch & ((h.end - h.start) >= T("metrics.cpu_op_ms") * 1e9)
    if not long.any():
        return long
    calls = h.name_mask(devices.is_runtime_call)
    ops = np.flatnonzero(long)
    out = np.zeros(len(h), dtype=bool)
    # the runtime's own lines (ROCm's HIP calls in XPlanes) hold the calls of whichever thread ran then: every op's
    api = calls & runtime_lines(h, calls)[h.line]
    for line in sorted_unique(h.line[ops]).tolist():  # per thread: a few threads hold long ops
        mine = ops[h.line[ops] == line]
        starts = np.sort(h.start[calls & ((h.line == line) | api)].astype(np.int64, copy=False))
        # the runtime calls starting inside each op, at any depth below it
        inside = (np.searchsorted(starts, h.end[mine].astype(np.int64, copy=False), side="right")
                  - np.searchsorted(starts, h.start[mine].astype(np.int64, copy=False), side="left"))
        out[mine[inside == 0]] = True
    return out


def runtime_lines(h: HostEvents, calls: np.ndarray | None = None) -> np.ndarray:
    """Bool per host line: a line that holds GPU runtime calls and nothing else (``calls``: the runtime-call mask,
    computed where not given).

    Why: ROCm's tracer writes HIP's API calls on a line of their own (XPlane's ``Host Threads/<tid>``), apart from
    the thread whose op made them (``wild/jax_mi355x``: 150 ``hip*`` launches there, its ``PjitFunction`` calls on
    ``python3``).  Such a line is no thread of the program: a call on it belongs to the op running when it began, on
    whichever line that op lies -- where CUDA's launches lie inside their op on the op's own line."""
    if calls is None:
        calls = h.name_mask(devices.is_runtime_call)
    n = len(h.line_names)
    line = h.line.astype(np.int64, copy=False)
    has = np.bincount(line[calls], minlength=n) > 0
    other = np.bincount(line[~calls], minlength=n) > 0
    return has & ~other


def caller_across_lines(h: HostEvents, calls: np.ndarray, launch: np.ndarray) -> np.ndarray:
    """Per launch record of ``launch`` on a line of runtime calls alone (:func:`runtime_lines`): the ``calls`` event
    (a bool mask over the host's events), on any line, that began last before its start and holds it; -1 for the
    others and where none does.

    Why: ROCm's tracer writes HIP's API calls on a line of their own, not on the ``python3`` line of the
    ``PjitFunction`` that made them, so no call encloses a launch on its own line: a one-pass JAX capture on ROCm
    counted 0 calls, an un-jitted JAX loop on ROCm 0 eager ops.  The call that launched such a launch's work is the
    one running when it began.  A launch on a thread of the program's (CUDA's launches on ``python3``; a copy
    launched on a PjRt worker, whose line holds the transfer's own events) keeps its own line's answer."""
    out = np.full(launch.shape, -1, dtype=np.int64)
    idx = np.flatnonzero(calls)
    own = runtime_lines(h)[h.line[launch]]
    if not idx.size or not own.any():
        return out
    idx = idx[np.argsort(h.start[idx], kind="stable")]
    starts, ends = h.start[idx], h.end[idx]
    reach = np.maximum.accumulate(ends)  # the latest end of the calls begun so far: none holds t past it
    ks = np.flatnonzero(own)
    t = h.start[launch[ks]]
    last = np.searchsorted(starts, t, side="right") - 1  # the call that began last before each launch
    held = (last >= 0) & (reach[np.maximum(last, 0)] > t)
    direct = held & (ends[np.maximum(last, 0)] > t)  # it holds the launch itself: the usual case
    out[ks[direct]] = idx[last[direct]]
    for k, j, tk in zip(ks[held & ~direct].tolist(), last[held & ~direct].tolist(), t[held & ~direct].tolist()):
        holds = np.flatnonzero(ends[: j + 1] > tk)  # a call nested in a longer one ended first: the longer holds it
        out[k] = int(idx[holds[-1]])
    return out


def _enclosing_any(h: HostEvents, mask_outer: np.ndarray, mask_inner: np.ndarray) -> np.ndarray:
    """Bool per host event: a ``mask_outer`` event that is the innermost one enclosing (:class:`Encloser`) at least
    one ``mask_inner`` event.

    The inner events are taken a chunk at a time: every kernel launch record's index and enclosing op as whole
    columns were 8 bytes per launch, and their intp temporaries 16 more, at the context's peak.
    """
    out = np.zeros(len(h), dtype=bool)
    if not len(h) or not mask_outer.any() or not mask_inner.any():
        return out
    fast = _enclosing_any_in_order(h, mask_outer, mask_inner)
    if fast is not None:
        return fast
    encloser = Encloser(h, mask_outer)
    chunk = _CHUNK >> 2  # each query's search temporaries are ~40 bytes an event: 2.6 MB a chunk
    for a in range(0, len(h), chunk):
        inner = np.flatnonzero(mask_inner[a:a + chunk])
        if inner.size:
            inner += a
            enc = encloser.find(inner)
            out[enc[enc >= 0]] = True
    return out


#: Events after each outer event that :func:`_enclosing_any_in_order` looks at, one position at a time.
_NEXT_TRIES = 8


def _enclosing_any_in_order(h: HostEvents, mask_outer: np.ndarray, mask_inner: np.ndarray) -> np.ndarray | None:
    """:func:`_enclosing_any` of a host table whose events come line by line, each line's by strictly rising start
    (as XPlane's do); None for another table, or where an outer event's next inner event lies further than
    :data:`_NEXT_TRIES` positions on.

    Why: in such a table the outer event that encloses an inner one is the last outer event before it, on its line,
    if that one has not ended -- so the outer events that enclose any are those whose first inner event after them
    comes before the next outer event, on their line, no later than their end.  That asks the few positions after
    each outer event, not a search for each inner one: on the dense 100 MB capture (440 k TensorFlow ops, 1.77 M
    launch records among 2.25 M host events) every op's next event is its launch record, and the search per
    record was ~30 ms.  Equal starts on a line (which outer event the search picks among them is its own order's)
    take the search."""
    n = len(h)
    line, start = h.line, h.start
    if not bool((line[1:] >= line[:-1]).all()):
        return None
    rise = start[1:] > start[:-1]
    rise |= line[1:] != line[:-1]
    if not bool(rise.all()):
        return None
    del rise
    it = index_dtype(n + 1)
    outer = np.flatnonzero(mask_outer).astype(it, copy=False)
    out = np.zeros(n, dtype=bool)
    block = _CHUNK >> 2  # a block of outer events at a time: each holds ~30 bytes of temporaries an event
    for a in range(0, outer.size, block):
        o = outer[a : a + block]
        nxt = np.empty_like(o)  # each outer event's next one (n after the last): its inner events lie before it
        nxt[:-1] = o[1:]
        nxt[-1] = outer[a + block] if a + block < outer.size else n
        first = _first_inner_after(o, nxt, mask_inner, n)
        if first is None:
            return None
        ok = first < n
        np.minimum(first, n - 1, out=first)
        ok &= line[first] == line[o]
        ok &= start[first] <= h.end[o]
        out[o[ok]] = True
    return out


def _first_inner_after(outer: np.ndarray, nxt: np.ndarray, mask_inner: np.ndarray, n: int) -> np.ndarray | None:
    """Per outer event (positions ``outer``, the next outer event at ``nxt``): the first inner event after it and
    before the next outer one, ``n`` for none; None where one lies further than :data:`_NEXT_TRIES` positions on."""
    it = outer.dtype.type
    first = np.full(outer.size, n, dtype=outer.dtype)
    rows = None  # the outer events still looked at (None: all)
    at, lim = outer, nxt
    for k in range(1, _NEXT_TRIES + 1):
        p = at + it(k)
        within = p < lim
        hit = within & mask_inner[np.minimum(p, n - 1)]
        if rows is None:
            first[hit] = p[hit]
        else:
            first[rows[hit]] = p[hit]
        more = within & ~hit
        if not more.any():
            return first
        rows = np.flatnonzero(more) if rows is None else rows[more]
        at, lim = outer[rows], nxt[rows]
    return None


def _host_steps(trace: Trace, steps: Steps) -> np.ndarray:
    """Each host event's kept step by its start (-1 outside every kept step): the host's windows, or, on the threads
    of a GPU's process whose steps that rank numbers on its own (``Steps.host_own``), that rank's own windows.

    Why: the host's step k runs from the first rank's kth step's start to the last rank's end, so near its edges it
    holds other ranks' work of the step before or after: 4 ranks 1.8 ms apart, each reading its loss after its update,
    booked the first rank's read-back after its last update -- a step that is not kept -- to the last kept step, and
    the last rank's before its first kept one to the first: 2.5 host waits a step, 24.1 ms of them in a 23.3 ms step
    (``--forms11`` walk seed 62004).  A rank's step k is its own kth, as its GPU's is."""
    h = trace.h
    if not len(h):
        return np.zeros(0, np.int16)
    host_step = assign(h.start, steps.host_windows)
    for on, w in own_step_rows(steps.host_own, steps.count, trace.gpu_host_lines or {}, h.line):
        if on.any():
            host_step[on] = assign(h.start[on], w)
    return host_step


def build_context(trace: Trace, steps: Steps, launches: list[np.ndarray], fw: Framework,
                  options: UserOptions | None = None, job: Job | None = None) -> Context:
    """The shared context of one host: each device event's launch and step, the host's roles; ``options`` (the
    user's settings) ride along for the metrics that need them.

    ``steps`` and ``launches`` (per GPU, each device event's host launch record,
    :func:`~tb_gpu_advisor.model.trace.device_launches`) come from the stages before: the chain
    (``runtime.pipeline``) detects the steps, the metrics only use them."""
    h, devs = trace.h, trace.devices
    memo: dict = {}  # the Context's: classifications shared by the modules (by_name)
    host_op = h.name_mask(fw.host_op_event)
    # input wait by name: TF's IteratorGetNext*Op::DoCompute events (the consumer blocking on tf.data)
    host_input = h.name_mask(fw.input_event)
    # a range the program names for fetching its batch (Megatron's ``get_batch``, TorchRec's ``## load_batch ##``)
    # with no kernel launched inside is its input pipeline as the DataLoader's ``__next__`` is (issue #37 item 4)
    # (which host events launched a kernel: asked here first, where a range's own launches say it is no fetch)
    gpus, launched_kernel = _gpu_contexts(h, devs, launches, steps)
    dispatch = _dispatch_calls(h, fw)
    host_input = _traced_on_loop_threads(h, fw, host_input, dispatch)
    host_input = _input_ranges(trace, fw, host_input, launched_kernel, dispatch)
    # the ops the input pipeline's own functions ran beside the step's, on its threads (tf.data's ``map``: Keras's
    # slicing of NumPy arrays into batches) are input work, not ops of the step placed on the host (h37-survey68)
    if trace.pipeline_ops is not None and trace.pipeline_ops.size:
        pipe = np.zeros(len(h), dtype=bool)
        pipe[trace.pipeline_ops] = True
        host_op = host_op & ~pipe
        host_input = host_input | pipe
    marker_windows = steps.host_windows if steps.detection.source in _MARKER_SOURCES and steps.count else None
    # a step whose GPU receives nothing from the host (no host-to-device copy in the capture) waits for no input:
    # its host time before the first op is not an untraced loader (issue #37 survey: HTA's event-sync test step)
    fed = any(bool((d.kind == devices.KIND_H2D).any()) for d in devs if len(d))
    # which dispatch events are outermost, which events a dispatch encloses: asked here and below (issue #38)
    nesting = _nesting(h, dispatch) if dispatch.any() else None
    input_spans, in_dispatch, pre_op, to_put = _input_spans(h, marker_windows, fw, dispatch, named=host_input, fed=fed,
                                                            nesting=nesting, frames=trace.spans)
    if marker_windows is not None and trace.host_waits is not None and len(trace.host_waits.start) and \
            len(input_spans[0]) and not host_input.any():
        # the lead an unnamed fetch stands for is host time no event records; a blocking OS call the capture records
        # there (Nsight's ``-t osrt``: ``read``, ``getc``) is a wait it names, not an untraced loader -- the gap
        # findings name it (``breakdown.os_waits_in``), as they did before the NVTX iteration ranges were markers
        # -- the dispatching threads' own waits: a helper thread parked in ``pthread_cond_wait`` the whole step is
        # no wait of the loop's
        w = trace.host_waits
        mine = _on_dispatch_lines(w.line, h, dispatch)
        if mine.any():
            input_spans = subtract_intervals(input_spans[0].astype(np.int64), input_spans[1].astype(np.int64),
                                             w.start[mine].astype(np.int64), w.end[mine].astype(np.int64))
    # an op inside a dispatch that ran a millisecond with no runtime call is the host's own work, not the dispatch's:
    # the physics of _host_computing_ops one level down (a 2.19 ms `aten::empty` inside `aten::ones` read as a
    # critical launch wait for 4 kernels, issue #37 survey)
    own_work = _host_computing_ops(h, in_dispatch) if in_dispatch is not None else None
    # intermediates are dropped as soon as they are used: they would otherwise stay alive (tens of MB on
    # large captures) through the per-GPU loop and the host step assignment below, the peak of the analysis
    del launches
    op_on_device = _ops_on_device(h, devs, host_op, launched_kernel)
    del launched_kernel
    release_free_heap()  # the op search's sorted copies and chunks, under the step assignment below (memory.py)
    host_work = _host_work(h, fw, host_op, host_input, dispatch, op_on_device, in_dispatch, own_work)
    host_work &= ~np.isin(h.line, _pipeline_workers(trace, fw, dispatch))
    marks = _step_marks(h, steps)
    host_work &= ~marks
    for g in gpus:
        g.step = assign(g.d.start, g.windows)
        _kernel_classes(g, trace, memo)
    _shares(gpus)
    for g in gpus:
        _own_host(g, trace, h, fw, dispatch, marker_windows is not None, host_input, own_work, fed)
        _less_return_legs(g, input_spans, steps.count)
    host_step = _host_steps(trace, steps)
    dispatch_spans, own_spans = _dispatch_and_own_spans(h, dispatch, own_work)
    outer = nesting[0] if nesting is not None else dispatch
    del nesting
    blocked = h.name_mask(devices.is_blocking_call)
    eager_ops, eager_calls = _eager_ops(h, gpus, host_op, outer)
    if trace.memory and outer.any():
        _memory_on_gpu_time(trace, gpus, h, outer)
    flags = pack_flags({_HOST_OP: host_op, _HOST_INPUT: host_input, _HOST_WORK: host_work, _OP_ON_DEVICE: op_on_device,
                        _DISPATCH_CALL: outer, _EAGER_OP: eager_ops,
                        _EAGER_CALL: eager_calls, _STEP_MARK: marks}, len(h))
    return Context(trace, h, steps, gpus, flags, host_step, options if options is not None else UserOptions(), fw=fw,
                   input_spans=input_spans, dispatch_spans=dispatch_spans, own_spans=own_spans,
                   blocked_spans=(h.start[blocked].astype(np.int64, copy=False), h.end[blocked].astype(np.int64, copy=False)), job=job,
                   alloc_calls=_alloc_calls(h), pre_op_spans=pre_op, lead_to_put=to_put, memo=memo,
                   input_measured=_input_measured(h, fw, host_input, dispatch, marker_windows is not None, fed))


def _input_measured(h: HostEvents, fw: Framework, named: np.ndarray, dispatch: np.ndarray, marked: bool, fed: bool) -> bool:
    """Whether anything read an input wait (:func:`_input_spans`' sources): the input pipeline's own events, transfers
    to the device, or each marked step's time before its first dispatch -- or nothing reaches the GPU from the host
    (``fed`` False), so there is no input to wait for.  None of these (steps from the GPU's own period or a program's
    spans, no pipeline event: an NVTX-only Megatron export) and the ledger's zero input wait is no measurement.  A
    capture that recorded nothing of the host (a kernel trace alone) measured no input either: its missing copies are
    copies not traced, not a GPU nothing feeds (h37-review17)."""
    if not len(h):
        return False
    if not fed or named.any() or (marked and dispatch.any()):
        return True
    return bool(h.name_mask(fw.transfer_event).any() or h.name_mask(fw.batch_transfer_event).any())


def _dispatch_calls(h: HostEvents, fw: Framework) -> np.ndarray:
    """The host's dispatch events (the framework's ops that launch GPU work), less those that compute on the host
    themselves and the ops inside such computing (its CPU tensor's ``aten::empty``): their time is the host's own
    work, not a launch's.

    The computing op around an op is asked by nesting: computing ops nest (``aten::randn`` > ``aten::normal_``), and an
    op inside ``randn`` after its ``normal_`` returned read as outside both -- a dispatch op whose start cut the input
    wait short of the host's computing (h37-probe50c).  Strictly: the op that starts as ``randn`` ends (its copy to
    the GPU) is no op of it."""
    dispatch = h.name_mask(fw.dispatch_event)
    computing = _host_computing_ops(h, dispatch)
    dispatch &= ~computing
    if computing.any():  # an op inside the host's own computing computes too (its CPU tensor's ``aten::empty``)
        inner = np.flatnonzero(dispatch)
        dispatch[inner[Encloser(h, computing, nested=True, strict=True).find(inner) >= 0]] = False
    return dispatch


def _gpu_contexts(h: HostEvents, devs: list[DeviceEvents], launches: list[np.ndarray], steps: Steps
                  ) -> tuple[list[GpuCtx], np.ndarray]:
    """Each GPU's context (its events' launches and step windows; their steps are assigned later), and which host
    events launched a kernel (not a copy): what says an op ran on a device."""
    gpus: list[GpuCtx] = []
    launched_kernel = np.zeros(len(h), dtype=bool)  # launch records of kernels (not copies)
    for d, launch in zip(devs, launches):
        kl = (launch >= 0) & ((d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE))
        launched_kernel[launch[kl]] = True
        gpus.append(GpuCtx(d=d, launch=launch, step=np.zeros(0, np.int16),
                           windows=steps.window(d.gpu), next_start=steps.next_start(d.gpu),
                           prev_id=steps.prev_ids,
                           active=bool(((d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)).any())))
    return gpus, launched_kernel


def _shares(gpus: list[GpuCtx]) -> None:
    """Which GPUs the host's per-step numbers are shared among (``GpuCtx.shares``): the active ones; where none ran a
    kernel or a collective, each that did device work inside the kept steps.  Why: a window whose GPUs only copied
    (a program whose ops all ran on the CPU feeding its four GPUs their batches) summed the four GPUs' copies and
    shared them with one -- "h2d 5.43 ms per step in a 1.49 ms step per GPU" where each GPU copied 1.36 ms
    (h37-xplane3).  A copy-only GPU beside active ones stays out, as before: the guide's checks are the kernels'."""
    anyone = any(g.active for g in gpus)
    for g in gpus:
        g.shares = g.active if anyone else bool((g.step >= 0).any())


def _ops_on_device(h: HostEvents, devs: list[DeviceEvents], host_op: np.ndarray, launched_kernel: np.ndarray
                   ) -> np.ndarray:
    """The host ops that ran on a device: "on device", the op launched at least one kernel (an op that only moved
    data, a memcpy, ran on the host); in TF 2.4's grouped captures, also the host ops named on a device's
    ``TensorFlow Ops`` line."""
    op_on_device = _enclosing_any(h, host_op, launched_kernel)
    dev_op_names = set()
    for d in devs:
        dev_op_names.update(d.op_text)
    if dev_op_names:
        op_on_device |= host_op & h.name_mask(lambda n: n in dev_op_names)
    return op_on_device


def _host_work(h: HostEvents, fw: Framework, host_op: np.ndarray, host_input: np.ndarray, dispatch: np.ndarray,
               op_on_device: np.ndarray, in_dispatch: np.ndarray | None, own_work: np.ndarray | None) -> np.ndarray:
    """Host compute: host work that launches nothing and waits for no input: host-placed TF ops, callbacks and other
    framework/python events, minus bookkeeping, step markers, roots and background (tf.data, event manager)
    threads; inside a dispatch, only the ops that compute on their own."""
    bg_line = np.fromiter((fw.background_line(ln) or frameworks.runtime_background_line(ln) for ln in h.line_names), dtype=bool,
                          count=len(h.line_names))
    host_work = ~h.name_mask(lambda n: frameworks.not_host_work(n) or fw.transfer_event(n) or fw.step_marker(n))
    if not len(h):
        return host_work
    # in place, one column at a time: each ``~x & y`` of 2.25 M events made a fresh temporary (pages faulted in)
    drop = lookup_mask(bg_line, h.line)  # a compare per background line where they are few
    drop |= host_input
    drop |= dispatch
    host_work &= ~drop
    np.less(h.corr, 0, out=drop)
    host_work &= drop
    np.less(h.root, 0, out=drop)
    host_work &= drop
    np.logical_and(host_op, op_on_device, out=drop)
    np.logical_not(drop, out=drop)
    host_work &= drop
    del drop
    if in_dispatch is not None:
        host_work &= ~in_dispatch | own_work
    return host_work


#: Step sources read from ranges around whole iterations -- the program's (NVTX: ``step 3``, ``decode 3``, the most
#: repeated top-level range) or a training wrapper's (Lightning's ``run_training_batch``): marks, not code.  Never a
#: source read from the program's code (a Python function's span, a serving engine's ``execute_model``: its own
#: time is that function's lines), nor a window not read from one event (one pass, the whole capture: the event that
#: opens it is whatever ran first).
_RANGE_SOURCES = ("nvtx_range", "nvtx_top_range", "iteration_range")


def _step_marks(h: HostEvents, steps: Steps) -> np.ndarray:
    """The ranges that mark the steps themselves, where the steps were read from ranges (:data:`_RANGE_SOURCES`):
    each opens a step's window (kept or dropped) to the ps and lasts at least half of it -- the range around the
    iteration (a program's ``step 3`` / ``decode 3`` / ``iteration 12``), whatever its name.

    Why: such a range spans its whole iteration, so it says the host is in the iteration, not what it does there.
    Read as the host's own work (as ``_host_work`` reads every other range of a program with no framework), it
    covered every idle of the step, and the host's time no event records in it -- code after a sync, before the next
    launch -- was called recorded "host work between iterations", while the unrecorded-time check said of the same
    time that no op or range covers it (h37-probe41: ``synthetic.nsysexport.write_untraced_iteration_tail``).  A
    profiler's own marks (``ProfilerStep#N``) were already left out by name (``Framework.step_marker``); this leaves
    out the user's by what they are.  Nor is such a range the caller of a sync inside it (``metrics.syncs``): the
    host_sync finding named its syncs "in decode 1 ×0, decode 2 ×0, decode 3 ×0" -- one numbered iteration range each,
    a 28th of a call a step apiece."""
    out = np.zeros(len(h), dtype=bool)
    if steps.detection.source not in _RANGE_SOURCES:
        return out
    wins = [steps.host_windows] + [np.array([d.window], dtype=np.int64) for d in steps.detection.dropped
                                   if d.window is not None]
    w = np.concatenate([np.asarray(x, dtype=np.int64).reshape(-1, 2) for x in wins])
    if not len(h) or not w.shape[0]:
        return out
    w = w[np.argsort(w[:, 0], kind="stable")]
    start = h.start.astype(np.int64, copy=False)
    at = np.searchsorted(w[:, 0], start)
    hit = at < w.shape[0]
    k = np.minimum(at, w.shape[0] - 1)
    hit &= w[k, 0] == start
    hit &= 2 * (h.end.astype(np.int64, copy=False) - start) >= (w[k, 1] - w[k, 0])
    return hit


def _kernel_classes(g: GpuCtx, trace: Trace, memo: dict) -> None:
    """A GPU's kernels' precision (by name, refined by the ``shape`` stat where the name says fp32 or nothing) and
    whether they run on tensor cores (by name, or by a rate only matrix units reach)."""
    d = g.d
    names = d.names
    prec_name = by_name(memo, devices.precision, names)
    prec = prec_name[d.name] if len(d) else np.zeros(0, np.int8)
    # the `shape` stat refines a name that says fp32 or nothing (the stock tool looks for `half` in `shape`);
    # a shape that names no dtype either leaves the name's answer
    sh = d.shape_sid
    m = ((prec == devices.P_FP32) | (prec == devices.P_UNKNOWN)) & (sh >= 0)
    if m.any():
        us, inv = np.unique(sh[m], return_inverse=True)
        pu = np.array([devices.precision_one(d.string(int(s)) or "") for s in us], dtype=np.int8)
        idx = np.nonzero(m)[0]
        refined = pu[inv]
        known = refined != devices.P_UNKNOWN
        prec[idx[known]] = refined[known]
    # op type hint: kernels of ops whose name says fp16/bf16 are not inferred (kept by name/shape only)
    g.name_prec = prec
    g.int_data = ((by_name(memo, devices.integer_data, names)[d.name] & (prec == devices.P_UNKNOWN)) if len(d)
                  else np.zeros(0, bool))
    g.tc = by_name(memo, devices.tensor_core, names)[d.name] if len(d) else np.zeros(0, bool)
    fast = _matrix_by_rate(trace, d)
    if fast is not None:
        g.tc |= fast


def _memory_on_gpu_time(trace: Trace, gpus: list[GpuCtx], h: HostEvents, calls: np.ndarray) -> None:
    """Allocator events recorded inside an asynchronous dispatch, placed at the GPU work they serve (issue #36).

    XLA records a program's buffer allocations and frees on the host while it enqueues the program (JAX dispatches
    ahead of the GPU: a real capture's 13 steps were all dispatched in its first 20 ms of 450), so the host's clock puts
    the memory of a step long before the GPU runs it.  A buffer of a call is in use from when the GPU starts the call's
    work to when it ends it: allocations inside a dispatch call move to the start of that call's GPU work, frees to its
    end, and a free between calls to the end of the work of the call before it.  The allocator's totals after each
    event stay as recorded (the order is kept); the trace's ``MemoryEvents`` say ``clock="gpu"``."""
    order = np.argsort(h.start[calls], kind="stable")
    cs, ce = h.start[calls][order].astype(np.int64, copy=False), h.end[calls][order].astype(np.int64, copy=False)
    for gpu, me in list(trace.memory.items()):
        g = next((x for x in gpus if x.d.gpu == gpu), None)
        if g is None or not len(me) or me.clock != "host":
            continue
        k = np.flatnonzero(g.launch >= 0)
        if not k.size:
            continue
        at = h.start[g.launch[k]].astype(np.int64, copy=False)
        j = np.searchsorted(cs, at, side="right") - 1
        ok = (j >= 0) & (at <= ce[np.maximum(j, 0)])
        if not ok.any():
            continue
        first = np.full(cs.size, np.iinfo(np.int64).max, np.int64)
        last = np.full(cs.size, -1, np.int64)
        np.minimum.at(first, j[ok], g.d.start[k[ok]].astype(np.int64, copy=False))
        np.maximum.at(last, j[ok], g.d.end[k[ok]].astype(np.int64, copy=False))
        t = me.t.astype(np.int64)
        c = np.searchsorted(cs, t, side="right") - 1
        has = (c >= 0) & (last[np.maximum(c, 0)] >= 0)
        inside = has & (t <= ce[np.maximum(c, 0)])
        new = t.copy()
        new[inside & (me.delta > 0)] = first[c[inside & (me.delta > 0)]]
        new[inside & (me.delta <= 0)] = last[c[inside & (me.delta <= 0)]]
        between = has & ~inside  # after call c's dispatch ended: no earlier than its GPU work's end
        new[between] = np.maximum(t[between], last[c[between]])
        trace.memory[gpu] = dataclasses.replace(me, t=np.maximum.accumulate(new), clock="gpu")


def _alloc_calls(h: HostEvents) -> np.ndarray | None:
    """Host event indices of ``cudaMalloc``/``cudaFree`` (HIP's too), None where there are none."""
    m = h.name_mask(devices.is_alloc_call) if len(h) else np.zeros(0, bool)
    return np.flatnonzero(m) if m.any() else None


def _matrix_by_rate(trace: Trace, d: DeviceEvents) -> np.ndarray | None:
    """Bool per device event: the kernel ran faster than any vector unit of its GPU can, so on its matrix units.

    Physics, not names: a kernel's FLOPs over its time above ``physics.vector_peak_factor`` x the GPU's fp32 peak
    (packed 16-bit vector math reaches 2x at most) cannot have run on vector units, whatever it is called -- an XLA
    Triton GEMM fusion on an MI355X at 600-880 TFLOP/s names no library.  FLOPs come from the HLO rows of the kernels'
    own instructions (``hlo_op``); None where the capture gives no such rows or the GPU's peak is unknown."""
    fo = trace.flop_ops
    if fo is None or fo.source != "hlo" or not len(d) or not d.op_text or not fo.module:
        return None
    info = d.info
    vec = devices.peak_flops(info.name, info.compute_capability, devices.P_FP32, sm_count=info.sm_count,
                             clock_hz=info.clock_hz, memory_bytes=info.memory_bytes)
    if vec is None:
        return None
    by_op = {f"{m}/{o}": i for i, (m, o) in enumerate(zip(fo.module, fo.op_name))}
    per_text = np.array([by_op.get(xla.module_op(t), -1) for t in d.op_text], np.int64)
    idx = np.flatnonzero((d.op_idx >= 0) & (d.kind == devices.KIND_KERNEL))
    row = per_text[d.op_idx[idx]]
    unplaced = row < 0
    if unplaced.any():
        row[unplaced] = _rows_by_kernel_name(fo, d, idx[unplaced])
    keep = row >= 0
    idx, row = idx[keep], row[keep]
    out = np.zeros(len(d), dtype=bool)
    if not idx.size:
        return out
    secs = (d.end[idx] - d.start[idx]).astype(np.float64) / 1e12
    rate = np.divide(fo.flops[row], secs, out=np.zeros(idx.size), where=secs > 0)
    out[idx] = rate > T("physics.vector_peak_factor") * vec.value
    return out


def _rows_by_kernel_name(fo, d: DeviceEvents, idx: np.ndarray) -> np.ndarray:  # noqa: ANN001 - FlopOps
    """The HLO row of each kernel at ``idx`` that carries no HLO op of its own (a kernel inside an XLA command
    buffer names only the buffer), by its name: XLA names a fusion's kernel after its instruction, ``.`` as ``_``
    (``gemm_fusion_dot.208`` -> ``gemm_fusion_dot_208``), within the module its op text names; -1 where none is."""
    by_name = {(m, o.replace(".", "_")): i for i, (m, o) in enumerate(zip(fo.module, fo.op_name))}
    module = [xla.module_op(t).split("/", 1)[0] for t in d.op_text]
    pairs, inv = np.unique(np.stack([d.op_idx[idx].astype(np.int64, copy=False), d.name[idx].astype(np.int64, copy=False)]), axis=1,
                           return_inverse=True)
    rows = np.array([by_name.get((module[int(o)], d.names[int(n)]), -1) for o, n in pairs.T], np.int64)
    return rows[inv.reshape(-1)]


def _eager_ops(h: HostEvents, gpus: list[GpuCtx], host_op: np.ndarray,
               calls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ops run eagerly, one by one, and (``GpuCtx.eager``) the device work each launched.

    Two forms: ops the framework marks eager (TF ``is_eager`` ops, ``EagerExecute``); and calls of compiled
    functions that ran at most ``eager.max_kernels_per_call`` kernels -- an un-jitted ``jnp`` call is a
    one-op program dispatched from Python, where a compiled step runs tens to thousands of kernels per call.
    The device side of a graph launch counts every kernel of the graph.  A launch on a line of runtime calls alone
    (ROCm's HIP line in XPlanes) belongs to the call running when it began, on whichever line
    (:func:`caller_across_lines`): an un-jitted JAX loop on an MI300X counted no eager op, its calls on ``python``
    and their launches on ``Host Threads/<tid>``.  Returns the eager events, and of them the
    ``EagerExecute`` calls that hold an op's own event (that op's, not a second one: counted once).
    """
    marked = (((h.is_eager == 1) & host_op) | h.name_mask(lambda n: n == "EagerExecute")) if len(h) else host_op
    # one op, counted once: TensorFlow records an eager op twice, its ``EagerExecute`` call around the op's own event
    # (``name:Type``, ``is_eager``); the call that holds an op is that op's, the op (named) is counted, a call holding
    # none (no op event recorded inside) is counted as the op (the synthetic TF eager loop of 25 ops a step read 49)
    wrappers = _eager_calls_holding_ops(h, marked, host_op)  # counted apart: :attr:`Context.eager_ops_counted`
    single = np.zeros(len(h), dtype=bool)
    per_gpu_call: list[np.ndarray] = []
    if calls.any():
        kernels = np.zeros(len(h), dtype=np.int64)
        enc_calls = Encloser(h, calls)
        for g in gpus:
            k = (g.launch >= 0) & ((g.d.kind == devices.KIND_KERNEL) | (g.d.kind == devices.KIND_COLLECTIVE))
            call = np.full(len(g.d), -1, dtype=np.int64)
            call[k] = enc_calls.find(g.launch[k])
            # ROCm's launches sit on a line of HIP calls alone, apart from the op that made them: paired by time
            lost = np.flatnonzero(k & (call < 0))
            if lost.size:
                call[lost] = caller_across_lines(h, calls, g.launch[lost].astype(np.int64))
            per_gpu_call.append(call)
            np.add.at(kernels, call[call >= 0], 1)
        single = calls & (kernels >= 1) & (kernels <= T("eager.max_kernels_per_call"))
    enc_marked = Encloser(h, marked) if marked.any() else None
    for i, g in enumerate(gpus):
        eager = np.zeros(len(g.d), dtype=bool)
        if per_gpu_call:
            c = per_gpu_call[i]
            eager[c >= 0] = single[c[c >= 0]]
        if enc_marked is not None:
            has = g.launch >= 0
            eager[has] |= enc_marked.find(g.launch[has]) >= 0
        g.eager = eager
    return marked | single, wrappers & ~single


def _eager_calls_holding_ops(h: HostEvents, marked: np.ndarray, host_op: np.ndarray) -> np.ndarray:
    """Bool per host event: an ``EagerExecute`` call holding an eager op's own event on its thread (the op's
    wrapper, not a second op)."""
    out = np.zeros(len(h), dtype=bool)
    if not len(h):
        return out
    ops = np.flatnonzero(marked & host_op & (h.is_eager == 1))
    calls = marked & ~(host_op & (h.is_eager == 1))
    if not ops.size or not calls.any():
        return out
    held = Encloser(h, calls).find(ops)
    out[held[held >= 0]] = True
    return out


#: Up to this many threads holding ``_nesting``'s events, each thread's events are found by a pass over the line
#: column; beyond it by one stable sort of that column (a pass per thread is quadratic over thousands of threads,
#: and the sort -- 80 MB of indices and ~1 s on a 1 GB Nsight export's 10 M host events of one thread -- is waste
#: over a few).
_NESTING_PASS_LINES = 16


def _nesting(h: HostEvents, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(outermost, inside) for ``mask`` events that may nest in one another (JAX writes ``PjitFunction(f)`` twice,
    one inside the other): per host event, whether it is an outermost ``mask`` event, and whether it starts
    strictly inside one (same line) without being that outermost event itself.

    Each line of a ``mask`` event is worked on alone (a test ``h.line == ln`` per line over every event, or one
    stable sort of the line column where many lines hold one: :data:`_NESTING_PASS_LINES`), its events looked up
    :data:`_CHUNK` at a time, so the temporaries are bounded whatever one thread holds (issue #38: the peak of the
    analysis of an Nsight export, ~60 bytes per event of its one thread)."""
    outer = np.zeros(len(h), dtype=bool)
    inside = np.zeros(len(h), dtype=bool)
    lines = sorted_unique(h.line[mask])
    by_line = ordered = None
    if lines.size > _NESTING_PASS_LINES:
        by_line = np.argsort(h.line, kind="stable")
        ordered = h.line[by_line]
    for ln in lines.tolist():
        if by_line is None:
            sel = np.flatnonzero(mask & (h.line == ln))
            chunks = (a + np.flatnonzero(h.line[a:a + _CHUNK] == ln) for a in range(0, len(h), _CHUNK))
        else:
            ev = by_line[np.searchsorted(ordered, ln, side="left"):np.searchsorted(ordered, ln, side="right")]
            sel = ev[mask[ev]]
            chunks = (ev[a:a + _CHUNK] for a in range(0, ev.size, _CHUNK))
        s, e = union_intervals(h.start[sel].astype(np.int64, copy=False), h.end[sel].astype(np.int64, copy=False),
                               merge_touching=False)  # back-to-back calls are two
        # the outermost event of each merged interval: the first (by index) mask event starting at its start
        x = h.start[sel]
        pos = np.searchsorted(s, x)  # ``np.isin(x, s)`` (s is sorted): a binary search, not a sort of both
        at_start = s[np.minimum(pos, s.size - 1)] == x if s.size else np.zeros(x.size, dtype=bool)
        cand = sel[at_start]
        del x, pos, at_start, sel
        _, keep = np.unique(h.start[cand], return_index=True)
        outer[cand[keep]] = True
        for part in chunks:  # this line's events, ascending
            t = h.start[part]
            k = np.searchsorted(s, t, side="right") - 1
            ok = (k >= 0) & (t < e[np.maximum(k, 0)])
            inside[part[ok]] = True
    inside &= ~outer
    return outer, inside


#: Step sources whose host windows are the user's own step markers (the step's whole host side): the profilers'
#: step markers, and the iteration ranges of an Nsight capture -- the program's range named like a step
#: (``nvtx_range``: ``train_step``) or a framework's range around each iteration (``iteration_range``: Lightning's
#: ``run_training_batch``), which hold the iteration's host side from its fetch on as a marker does (h37-fwnvtx3).
#: Never ``nvtx_top_range``: a guessed most-repeated range may be a forward (a serving engine's ``model``), whose
#: host time before its first op is no fetch.
_MARKER_SOURCES = ("profiler_step", "keras_profiled_batch", "trace_train", "root_r", "step_num_stat",
                   "nvtx_range", "iteration_range")


def _dispatch_and_own_spans(h: HostEvents, dispatch: np.ndarray, own_work: np.ndarray | None = None
                            ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """(dispatch spans, own spans) of the ``dispatch`` events.

    Dispatch spans: host time inside the framework's dispatch, minus the time inside sync calls under it (a
    ``.item()`` is an ATen op, but while it waits in ``cudaStreamSynchronize`` the GPU is running, not waiting for a
    launch), minus ``own_work``, the host's own work under it (:func:`_host_computing_ops` of the ops inside a
    dispatch), and minus its own spans.  Own spans: the dispatch's time that is the host's own work
    (:func:`no_call_stretches` of the dispatch less its syncs and its ``own_work`` events, which are host work
    already).  One cut and one search of the stretches serve both (each was computed twice: 1.7 s of a 1 GB
    Nsight export's analysis, issue #38)."""
    if not dispatch.any():
        return (h.start[:0], h.end[:0]), (h.start[:0].astype(np.int64), h.end[:0].astype(np.int64))
    cut = h.name_mask(devices.is_sync_call)
    if own_work is not None:
        cut = cut | own_work
    s, e = subtract_intervals(h.start[dispatch].astype(np.int64, copy=False), h.end[dispatch].astype(np.int64, copy=False),
                              h.start[cut].astype(np.int64, copy=False), h.end[cut].astype(np.int64, copy=False))
    own_s, own_e = no_call_stretches(h, s, e)
    return (subtract_intervals(s, e, own_s, own_e) if own_s.size else (s, e)), (own_s, own_e)


def no_call_stretches(h: HostEvents, s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The stretches of the dispatch spans ``(s, e)`` (disjoint, sorted) in which no runtime call runs on any thread
    for ``metrics.cpu_op_ms`` or longer: the host's own work, not a dispatch waiting to launch.  Physics as
    :func:`_host_computing_ops`, for time no child event names: handing work to the GPU takes microseconds, so a
    millisecond without a single runtime call is the host computing (a torch.compile'd region's 1.2 ms of guards and
    wrappers before its one 2 us kernel's launch read as 83% launch wait, issue #37 survey)."""
    if not s.size:
        return s, e
    calls = h.name_mask(devices.is_runtime_call)
    a, b = subtract_intervals(s, e, h.start[calls].astype(np.int64, copy=False), h.end[calls].astype(np.int64, copy=False))
    keep = (b - a) >= T("metrics.cpu_op_ms") * PS_PER_MS
    return a[keep], b[keep]


def _own_host(g: GpuCtx, trace: Trace, h: HostEvents, fw, dispatch: np.ndarray, marked: bool,
              fw_input: np.ndarray, own_work: np.ndarray | None = None, fed: bool = True) -> None:
    """A GPU driven by its own process (merged PyTorch ranks): its host events, and input and dispatch spans
    from them alone -- another rank's dispatch does not explain this GPU's idle time.  Step windows for the
    input spans are the rank's own step markers, each up to its next one."""
    lines = trace.gpu_host_lines.get(g.d.gpu)
    if lines is None or not len(h):
        return
    hm = np.isin(h.line, lines)
    g.host_mask = hm
    windows = None
    if marked:
        mark = np.flatnonzero(h.name_mask(fw.step_marker) & hm)
        mark = mark[np.argsort(h.start[mark], kind="stable")]
        s, e = h.start[mark].astype(np.int64, copy=False), h.end[mark].astype(np.int64, copy=False)
        e[:-1] = np.maximum(s[1:], s[:-1])
        windows = np.stack([s, e], axis=1) if s.size else None
    g.input_spans = _input_spans(h, windows, fw, dispatch & hm, hm, named=fw_input & hm, fed=fed, frames=trace.spans,
                                 lines=lines)[0]
    g.dispatch_spans, g.own_spans = _dispatch_and_own_spans(h, dispatch & hm, own_work)


def _less_return_legs(g: GpuCtx, host_spans: tuple[np.ndarray, np.ndarray], n: int) -> None:
    """GPU ``g``'s input spans less its round trips' return legs (``trips.return_legs``: from the copy out's end to the
    copy back's end), set as its own where it has any.  Why: a copy to the device of data the step itself copied out
    is the round trip's leg, not a batch the step waits for -- (c) of :func:`_input_spans` reads every copy of array
    data to the device as input, and the round trip's host staging of its copy back was "the batch's transfer to the
    device" with a prefetch fix (real-h100-jax ``host_roundtrip``: 3.78 ms of a 26.6 ms step), time the round trip's
    own finding owns.  A batch copied in with no copy out of like size before it in its step is no leg, and stays
    input (``implicit_numpy_input``)."""
    ls, le = trips.return_legs(g, n)
    if not ls.size:
        return
    sp = g.input_spans if g.input_spans is not None else host_spans
    if sp is None or not sp[0].size:
        return
    g.input_spans = subtract_intervals(sp[0].astype(np.int64), sp[1].astype(np.int64), ls, le)


def _input_spans(h: HostEvents, windows: np.ndarray | None, fw, dispatch: np.ndarray, mask: np.ndarray | None = None,
                 named: np.ndarray | None = None, fed: bool = True,
                 nesting: tuple[np.ndarray, np.ndarray] | None = None, frames: Spans | None = None,
                 lines: np.ndarray | None = None
                 ) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray | None, tuple[np.ndarray, np.ndarray] | None, bool]:
    """Host input time that no single event names, for frameworks that dispatch compiled steps (JAX).

    Returns ((starts, ends), in_dispatch, pre_op, to_put): the input spans, per host event whether a dispatch event
    encloses it (None when the framework has no dispatch events), and the host time before the steps' first op that
    is not input (None unless ``named`` events are recorded).  Input is:
    (a) each step marker's time before its first dispatch -- loading and preparing the batch, with or
        without events (an untraced data loader shows no event at all) -- where it is longer than a loop's own
        turn (``input.min_untraced_ms``);
    (b) transfers to the device outside any dispatch (``jax.device_put``);
    (c) copies of array data to the device anywhere (:attr:`Framework.batch_transfer_event`): an implicit
        copy of a NumPy batch inside a jitted call, the worker thread's copy the dispatch waits for.
    A Python scalar an un-jitted op copies inside its dispatch is dispatch, not input.
    ``windows``: the step markers' windows (None: the steps are not marked); ``mask``: the host events that
    count (one rank's), None for all; ``named``: the host events that are the input pipeline's own (the DataLoader's
    ``__next__``).  Where the capture records them, the input wait is theirs alone (issue #37 item 4): (a) is then
    other host work before the step's first op, returned third (less the pipeline's own time), not input.  So is (a)
    where nothing reaches the GPU from the host (``fed`` False: no host-to-device copy in the capture): a step with
    no input waits for none.  ``nesting``: :func:`_nesting` of ``dispatch``, where the caller has it already.
    ``frames``: the host's Python frames (``with_stack``), ``lines`` the threads that count (one rank's, None for
    all): where no pipeline event is recorded, a frame holding only host work in (a) whose name says nothing of
    fetching or preparing the batch (``Framework.input_frame``: a pipeline's ``_execution_device`` walking its
    offload hooks) is the program's other work before its first op, not input -- returned with the third
    (:func:`lead_frames`); a frame whose name does, and time no frame covers, stay input.  ``to_put``: most leads
    were cut at the end of the batch's put (:func:`_lead_to_the_put`), so the input time a lead holds ends there.
    """
    empty = (h.start[:0], h.end[:0])
    if not dispatch.any():
        return empty, None, None, False
    outer, in_dispatch = nesting if nesting is not None else _nesting(h, dispatch)
    starts, ends = [], []
    pre = None
    to_put = False
    if windows is not None:
        w = windows
        d_start = np.sort(h.start[outer])
        j = np.searchsorted(d_start, w[:, 0], side="left")
        first = np.where(j < d_start.size, d_start[np.clip(j, 0, max(d_start.size - 1, 0))], np.iinfo(np.int64).max)
        ok = (first < w[:, 1]) & (first - w[:, 0] >= T("input.min_untraced_ms") * PS_PER_MS)
        if named is not None and named.any():
            pre = subtract_intervals(w[ok, 0].astype(np.int64), first[ok].astype(np.int64, copy=False),
                                     h.start[named].astype(np.int64, copy=False), h.end[named].astype(np.int64, copy=False))
        elif not fed:
            pre = (w[ok, 0].astype(np.int64), first[ok].astype(np.int64, copy=False))
        else:
            lead = (w[ok, 0].astype(np.int64), first[ok].astype(np.int64, copy=False))
            lead, pre = _lead_to_the_put(h, fw, lead, dispatch if mask is None else dispatch & mask, in_dispatch,
                                         w[ok, 1].astype(np.int64))
            # most leads end at the batch's put: the number the finding states is that time, not the whole lead
            to_put = pre is not None and 2 * pre[0].size >= lead[0].size
            # the frames of the threads that launch the step (a helper thread's Python holds none of its lead)
            own = np.unique(h.line[dispatch if mask is None else dispatch & mask])
            rows = lead_frames(h, frames, lead, own) if frames is not None and len(frames) else np.zeros(0, np.int64)
            other = rows[~frames_named(h, frames, rows, fw.input_frame)] if rows.size else rows
            if other.size:
                os_, oe = union_intervals(frames.start[other].astype(np.int64), frames.end[other].astype(np.int64))
                kept = subtract_intervals(*lead, os_, oe)
                framed = subtract_intervals(*lead, *kept)
                pre = framed if pre is None else union_intervals(np.concatenate([pre[0], framed[0]]),
                                                                 np.concatenate([pre[1], framed[1]]))
                lead = kept
            starts.append(lead[0])
            ends.append(lead[1])
    xfer = (h.name_mask(fw.transfer_event) & ~in_dispatch) | h.name_mask(fw.batch_transfer_event)
    if mask is not None:
        xfer &= mask
    if pre is not None:
        pre = _less_own_transfers(h, pre, xfer, dispatch)
    xs, xe = _waited_transfers(h, xfer, dispatch, pre)
    starts.append(xs)
    ends.append(xe)
    s, e = union_intervals(np.concatenate(starts).astype(np.int64), np.concatenate(ends).astype(np.int64))
    return (s, e), in_dispatch, pre, to_put


def _lead_to_the_put(h: HostEvents, fw, lead: tuple[np.ndarray, np.ndarray], dispatch: np.ndarray,
                     in_dispatch: np.ndarray, ends: np.ndarray
                     ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray] | None]:
    """An unnamed lead (no pipeline event recorded; ``lead``: per marked step, its start to its first dispatch) split
    at the end of the batch's own put to the device: (the lead up to it, the rest, None where no lead is split).  Why: ``jax.device_put(next(it))``
    on the loop's thread is recorded (``shard_args`` holding a ``BufferFromHostBuffer(f32[64,256])``), and a batch is
    put once it is made -- the untraced time after its put and before the step's first dispatch (logging, the loop's
    other Python) is no fetch, but other host time before the first op (issue #37 item 4).  Main read it all as an
    untraced loader (h37-probe43t: a 150 us tail of a 1 ms step booked as input).  A step whose own dispatches copy
    array data themselves after the put (a NumPy array handed straight to the jitted call: its
    :attr:`Framework.batch_transfer_event` inside a dispatch, before ``ends``, the step's end) keeps its lead whole:
    the time after the put may be making that array.  A tail under ``input.min_untraced_ms`` (the loop's own turn,
    as the lead's own floor) stays with the lead."""
    none = None
    if in_dispatch is None:
        return lead, none
    own = _on_dispatch_lines(h.line, h, dispatch) & ~in_dispatch
    puts = own & h.name_mask(fw.transfer_event)
    batch = own & h.name_mask(fw.batch_transfer_event)
    if not batch.any() or not lead[0].size:
        return lead, none
    ps, pe = union_intervals(h.start[puts | batch].astype(np.int64), h.end[puts | batch].astype(np.int64))
    bs = np.sort(h.start[batch].astype(np.int64))
    holds = searchsorted_right(bs, pe) > np.searchsorted(bs, ps, side="left")  # a put of array data, not a scalar
    pe = np.sort(pe[holds])
    ls, le = lead
    # the last such put's end inside each lead
    k = searchsorted_right(pe, le) - 1
    cut = np.where(k >= 0, pe[np.clip(k, 0, max(pe.size - 1, 0))], ls) if pe.size else ls
    cut = np.where(cut > ls, cut, ls)
    implicit = (h.name_mask(fw.batch_transfer_event) & in_dispatch)
    if implicit.any():
        xs = np.sort(h.start[implicit].astype(np.int64))
        n = min(ends.size, ls.size)
        late = np.zeros(ls.size, dtype=bool)
        late[:n] = searchsorted_right(xs, ends[:n]) > np.searchsorted(xs, cut[:n], side="left")
        cut = np.where(late, ls, cut)
    # a tail shorter than a loop's own turn is the loop between its put and its call, left where it was
    split = (cut > ls) & (le - cut >= T("input.min_untraced_ms") * PS_PER_MS)
    if not split.any():
        return lead, None
    return (ls, np.where(split, cut, le)), (cut[split], le[split])


def _less_own_transfers(h: HostEvents, pre: tuple[np.ndarray, np.ndarray], xfer: np.ndarray, dispatch: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
    """The other host time before the steps' first op (``pre``) less the batch's transfers the loop's own threads
    make there (``xfer`` events on a thread with ``dispatch`` events: ``jax.device_put(next(it))`` after the
    pipeline's take): they are input, and a part holds no time another part of the same lead holds.  A copy's
    worker thread staging the batch while the loop does other work is left as it was: the loop's thread is on that
    work then."""
    if not xfer.any():
        return pre
    own = xfer & _on_dispatch_lines(h.line, h, dispatch)
    if not own.any():
        return pre
    return subtract_intervals(*pre, *union_intervals(h.start[own].astype(np.int64), h.end[own].astype(np.int64)))


def _waited_transfers(h: HostEvents, xfer: np.ndarray, dispatch: np.ndarray,
                      pre: tuple[np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray]:
    """The batch's transfers (``xfer``) as input: those on the loop's own threads whole, a copy's worker thread's
    (JAX's ``H2D Dispatch`` on ``pjrt_async_work_runner``) less the loop's other host work before its first op
    (``pre``).  Why: while the worker stages the batch beside the loop's own other work (logging, untraced Python),
    the loop's thread is on that work, and a faster copy would not launch the step sooner -- the loop waits for the
    copy only where it has nothing else to do (blocked in its dispatch, or idle).  Counted in both, input and "other"
    held more than the lead they share (h37-copies23: 0.54 ms of a 4 MiB batch's staging a step)."""
    own = xfer & _on_dispatch_lines(h.line, h, dispatch)
    s, e = h.start[own].astype(np.int64), h.end[own].astype(np.int64)
    worker = xfer & ~own
    if not worker.any():
        return s, e
    ws, we = h.start[worker].astype(np.int64), h.end[worker].astype(np.int64)
    if pre is not None and pre[0].size:
        ws, we = subtract_intervals(ws, we, pre[0].astype(np.int64), pre[1].astype(np.int64))
    return np.concatenate([s, ws]), np.concatenate([e, we])


def frames_named(h: HostEvents, frames: Spans, rows: np.ndarray, pred: Callable[[str], bool]) -> np.ndarray:
    """Per frame of ``rows``, whether its name answers ``pred`` (asked once per name)."""
    names = h.names
    ids = frames.name[rows].astype(np.int64)
    uniq, inv = np.unique(ids, return_inverse=True)
    return np.fromiter((bool(pred(names[int(i)])) for i in uniq), dtype=bool, count=uniq.size)[inv]


def lead_frames(h: HostEvents, frames: Spans, lead: tuple[np.ndarray, np.ndarray],
                lines: np.ndarray | None = None) -> np.ndarray:
    """The Python frames (``with_stack``) that hold the host time before the steps' first op (``lead``: disjoint
    sorted spans): on a thread that counts (``lines``, None for any), overlapping the lead, with no runtime call of
    their thread inside (only host work: the pipeline's decoding, a tokenizer, a framework's set-up -- a frame around
    the step's launches is its structure, not what holds the lead), and outermost among such frames.  Rows of
    ``frames``, by thread and start (issue #37 item 4)."""
    l0, l1 = union_intervals(lead[0].astype(np.int64), lead[1].astype(np.int64))
    if not l0.size or frames is None or not len(frames):
        return np.zeros(0, np.int64)
    s, e = frames.start.astype(np.int64, copy=False), frames.end.astype(np.int64, copy=False)
    k = np.searchsorted(l0, e, side="left")  # leads starting before each frame's end
    j = np.maximum(k - 1, 0)
    cand = (k > 0) & (l1[j] > s)  # the last lead starting before the end ends after the start
    if lines is not None:
        cand &= np.isin(frames.line, lines)
    cand &= frames.line >= 0
    rows = np.flatnonzero(cand)
    if not rows.size:
        return rows
    calls = np.flatnonzero(h.name_mask(devices.is_runtime_call))
    free = np.ones(rows.size, bool)
    fl = frames.line[rows]
    for t in np.unique(fl):
        at = np.sort(h.start[calls[h.line[calls] == t]].astype(np.int64))
        m = fl == t
        r = rows[m]
        free[m] = np.searchsorted(at, e[r], side="left") == np.searchsorted(at, s[r], side="left")
    rows = rows[free]
    if not rows.size:
        return rows
    # outermost per thread: by (thread, start, longest first), a frame inside the running end before it is nested
    order = np.lexsort((-(e[rows] - s[rows]), s[rows], frames.line[rows]))
    rows = rows[order]
    return rows[outermost(frames.line[rows], s[rows], e[rows])]


def _on_dispatch_lines(lines: np.ndarray, h: HostEvents, dispatch: np.ndarray) -> np.ndarray:
    """Bool per entry of ``lines`` (host thread ids): the thread is one that dispatches the step's work (``dispatch``:
    the framework's dispatch events) -- the loop's own thread, whose waits and transfers are the loop's.  One test for
    the host waits, the input ranges and the batch transfers that ask it."""
    return np.isin(lines, np.unique(h.line[dispatch]))


def _on_loop_threads(h: HostEvents, idx: np.ndarray, dispatch: np.ndarray) -> np.ndarray:
    """The ranges of ``idx`` on a thread that dispatches the step's work (``dispatch``: the framework's dispatch
    events), where any thread does.  The loop waits for its batch only on its own thread: a pipeline's worker thread
    making the next batch meanwhile (grain's prefetch thread, whose dataset iterators record
    ``MapDatasetIterator.__next__``-style TraceMe ranges while the step runs) is the pipeline working ahead, and the
    GPU's idle under it is whatever the loop's thread does then -- its other host work, its dispatch -- not a wait for
    input.  A capture with no dispatch event (TensorFlow's) names no loop thread: its ranges stand."""
    if not idx.size or not dispatch.any():
        return idx
    return idx[_on_dispatch_lines(h.line[idx], h, dispatch)]


def _traced_on_loop_threads(h: HostEvents, fw: Framework, named: np.ndarray, dispatch: np.ndarray) -> np.ndarray:
    """``named`` (the input pipeline's own events) less the frames the profiler's Python tracer recorded
    (``Framework.traced_frame``: an iterator's ``$dataset.py:400 __next__``) on a thread that dispatches none of the
    step's work, where some thread does (:func:`_on_loop_threads`).  Why: the tracer records every thread's Python, and
    a prefetch thread's ``__next__`` makes the next batch while the step runs -- the pipeline working ahead, no wait of
    the loop's (a probe: 88 us of a 1.13 ms step's idle read as the iterator's, where the loop's thread ran its own
    untraced Python)."""
    traced = named & h.name_mask(fw.traced_frame)
    if not traced.any() or not dispatch.any():
        return named
    rows = np.flatnonzero(traced)
    out = named.copy()
    out[rows[~_on_dispatch_lines(h.line[rows], h, dispatch)]] = False
    return out


def _batch_ranges(trace: Trace, fw: Framework) -> np.ndarray:
    """The program's own ranges (``user_ranges.program_ranges``) whose name says they fetch or make its batch
    (``Framework.input_range``), on any thread: one reading for the loop's input ranges and its pipeline's workers."""
    idx = user_ranges.program_ranges(trace, fw)
    return idx[trace.h.per_name(fw.input_range)[trace.h.name[idx]]] if idx.size else idx


def _pipeline_workers(trace: Trace, fw: Framework, dispatch: np.ndarray) -> np.ndarray:
    """The host threads (line ids) that record the program's batch-named ranges but dispatch none of the step's work,
    where some thread does: the input pipeline's worker threads (grain's ``grain-thread-prefetch-*``, whose
    ``MapDatasetIterator.__next__``-style ranges make the next batch while the step runs).  Why: their work is the
    pipeline working ahead, neither the loop's wait for input (:func:`_on_loop_threads`) nor the loop's own host work
    -- the GPU's idle under it is whatever the loop's thread does then, and where that is untraced it is unrecorded
    host time, not host compute painted by another thread's ranges (h37-grainpaint: 0.30 ms of a grain loop's 0.15 ms
    of untraced Python and its dispatch read as ``host_compute``).  None where no thread dispatches (TensorFlow's
    ``tf.data`` threads: background by their names, ``Framework.background_line``)."""
    if fw.input_range is frameworks.never or not dispatch.any():
        return np.zeros(0, dtype=trace.h.line.dtype)
    idx = _batch_ranges(trace, fw)
    lines = trace.h.line[idx]
    return np.unique(lines[~_on_dispatch_lines(lines, trace.h, dispatch)])


def _input_ranges(trace: Trace, fw: Framework, named: np.ndarray, launched_kernel: np.ndarray,
                  dispatch: np.ndarray | None = None) -> np.ndarray:
    """``named`` (the input pipeline's own events) with the ranges the program marks around fetching its batch: its
    own ranges (``user_ranges.program_ranges``: ``record_function``, NVTX, XPlane's TraceMe ranges --
    ``jax.profiler.TraceAnnotation``, ``tf.profiler.experimental.Trace``) whose name says so (``Framework.input_range``:
    ``get_batch``, ``## load_batch ##``, ``data_load``) and inside which its thread launches no kernel -- host work,
    and the batch's copies to the device, only; a range around the step's compute (``sparse_data_dist``'s all-to-all,
    a jitted call's command buffer) is no fetch, whatever its name.  A launch is a launch call by name (a graph's
    too: one ``cuGraphLaunch`` runs a jitted step) or, where the device side is recorded, any host event whose
    correlation a kernel carries (``launched_kernel``: XLA's thunks name their launch records after the kernel)."""
    if fw.input_range is frameworks.never:
        return named
    h = trace.h
    idx = _batch_ranges(trace, fw)
    if dispatch is not None:
        idx = _on_loop_threads(h, idx, dispatch)
    if not idx.size:
        return named
    launches = np.flatnonzero(h.name_mask(devices.is_launch_call) | h.name_mask(devices.is_graph_launch)
                              | launched_kernel)
    out = named.copy()
    for t in np.unique(h.line[idx]):
        r = idx[h.line[idx] == t]
        at = np.sort(h.start[launches[h.line[launches] == t]].astype(np.int64))
        s, e = h.start[r].astype(np.int64), h.end[r].astype(np.int64)
        out[r[np.searchsorted(at, e, side="left") == np.searchsorted(at, s, side="left")]] = True
    return out
