"""Memory copies per step and direction: count, bytes, GPU time, synchronous share, recurrence."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from tb_gpu_advisor import devices, frameworks
from tb_gpu_advisor.common.fmt import plural
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.metrics.breakdown import off_path_uploads
from tb_gpu_advisor.metrics.context import PS_PER_MS, Context, Encloser, GpuCtx, assign
from tb_gpu_advisor.metrics.trips import trip_windows
from tb_gpu_advisor.metrics.types import HostRoundTrip, MemcpyStat, MemcpyStepStat
from tb_gpu_advisor.model.columns import subtract_intervals, time_within, union_intervals

_DIRS = {"MemcpyH2D": "h2d", "MemcpyD2H": "d2h", "MemcpyD2D": "d2d", "MemcpyP2P": "p2p", "Memset": "memset"}
_BLOCK_CAT = {"h2d": "memcpy_h2d", "d2h": "memcpy_d2h", "d2d": "memcpy_d2d", "p2p": "memcpy_d2d", "memset": "memset", "other": "memcpy_d2d"}


#: the evidence id (``HostMetrics.applied``) of copies to the GPU that are pinned and asynchronous already
PINNED_ASYNC_H2D = "pinned_async_h2d"


#: the evidence id of copies to the GPU whose calls ask for ``non_blocking=True`` already (not all of them pinned)
NON_BLOCKING_H2D = "non_blocking_h2d"


def applied(copies: list[MemcpyStat], non_blocking: tuple[int, int] | None = None, steps: int = 2) -> dict[str, str]:
    """:func:`pinned_async` of the copies, else the asynchronous-copy request alone where every copy to the GPU whose
    op records its inputs asked for ``non_blocking=True`` (``non_blocking``: ``Trace.h2d_non_blocking``).  Why: a copy
    from pageable memory holds the host whatever its call asked, so its own record cannot show the flag, and a loop
    that passes it was told to add it (h37-nonblock33: ``wild/loader_pass_rtx5070ti``); pinning is then the rest of
    the fix.  ``steps``: how many the copies' counts are a mean over (one: the window's own count, said as such)."""
    out = pinned_async(copies, steps)
    if out or not non_blocking:
        return out
    asked, recorded = non_blocking
    h2d = any(c.direction == "h2d" and c.ms_per_step > 0 for c in copies)
    return {NON_BLOCKING_H2D: frameworks.pytorch.NON_BLOCKING_UPLOADS} if h2d and recorded and asked == recorded else {}


def pinned_async(copies: list[MemcpyStat], steps: int = 2) -> dict[str, str]:
    """The copy fixes the trace shows in use, with what shows them (``HostMetrics.applied``, beside the framework's
    markers): every H2D copy with time known to come from pinned memory (its whole time's memory kind told, none of it
    pageable or the driver's paging) and none of them a call that held the host -- the pinned-memory and
    asynchronous-copy fix is then what the program does, not advice (h37-already31: ``wild/d2d_v100``'s 25 pinned,
    asynchronous uploads per step were told "copy batches to the GPU asynchronously from pinned memory").  The pageable uploads beside pinned ones may be too small for pinning to speed
    (:func:`_too_small_to_pin`); none of them holds the host either (``sync_count_per_step``), so no wait in them is
    left for pinning to save.  Their count is a mean per step over several steps, the window's own over one (a
    one-pass report said "1 copy a step" of a capture that marks no step: walk seed 42123 of ``--forms5``)."""
    h2d = [c for c in copies if c.direction == "h2d" and c.ms_per_step > 0]
    if not h2d or not all((c.pageable_share == 0 or _too_small_to_pin(c)) and (c.kind_known_share or 0.0) >= 0.999
                          and not c.sync_count_per_step and not (c.migration_share or 0.0) for c in h2d):
        return {}
    small = sum(c.pageable_count_per_step for c in h2d if c.pageable_share)
    if not small:
        return {PINNED_ASYNC_H2D: devices.PINNED_ASYNC_UPLOADS}
    return {PINNED_ASYNC_H2D: devices.PINNED_ASYNC_UPLOADS_BUT_SMALL.format(
        copies=plural(round(small, 1), "copy", "copies") + (" a step" if steps > 1 else ""), under=f"{T('excessive_memcpy.pin_bytes') / 1024:.0f} KiB")}


def _too_small_to_pin(c: MemcpyStat) -> bool:
    """Whether an H2D direction's pageable copies are, on average, too small for pinning to speed (under
    ``excessive_memcpy.pin_bytes``: their time is the call's, not the bytes') beside pinned ones -- the copies the copy
    rule would not ask to pin (``rules.excessive_memcpy._to_pin``).  Why: a loop that pins its batch and copies it
    ``non_blocking`` still makes a few pageable copies of its own of scalars and offsets (``wild/dlrm_v100``: 5 pinned
    ``cudaMemcpyAsync`` of the batch after its ``aten::pin_memory``, and 8 pageable copies of 64-2808 B a step), and
    was told to load batches "into pinned memory" and copy them asynchronously (h37-pinned32)."""
    return (c.pageable_share or 0.0) < 1.0 and 0 < largest_pageable(c) < T("excessive_memcpy.pin_bytes")


def largest_pageable(c: MemcpyStat) -> float:
    """The largest of a direction's pageable copies (bytes; ``pageable_max_bytes``), else their mean where only the
    total is known; 0 where no size is.  Why the largest: pinning pays for each copy large enough that its bytes set
    its time, so one 1 MB upload among 200 reads of 4 bytes is worth pinning though their mean (~5 KB) says it is too
    small (h37-bus69; the sizes' range came with h37-hunt69b)."""
    if c.pageable_max_bytes > 0:
        return c.pageable_max_bytes
    k = c.pageable_count_per_step
    return c.pageable_bytes_per_step / k if k > 0 else 0.0


def memcpy_stats(ctx: Context, exposed: dict[str, float],
                 max_rows: int | None = None) -> tuple[list[MemcpyStat], list[MemcpyStepStat]]:
    """``exposed``: average per-step breakdown ms by category (host-wide) for the blocking share.  ``max_rows``: the
    per-step rows the caller keeps, the first ones (by GPU, direction, step); the rest are never made (a row per step,
    GPU and direction: ~10,000 objects on a 100 MB capture, of which the report keeps 500)."""
    tally = _Tally(n=ctx.steps.count, max_rows=max_rows, step_ids=ctx.steps.ids.tolist())
    hosts = _HostOps(ctx)
    gpus = [(g, c) for g in ctx.gpus if (c := _gpu_copies(ctx, g)) is not None]
    tally.shared = _shared_rates([c for _, c in gpus])
    tally.side = _side_bytes([c for _, c in gpus])
    for g, c in gpus:
        _tally_gpu(ctx, g, c, tally, hosts)
    # per step and GPU (``Context.per_step``), as the blocking time beside it and the step it is part of: a sum over 2
    # GPUs read "H2D (450 copies, 1.84 s per step)" in a 969 ms step (issue #36)
    out = [_direction_stat(dr, a, tally, exposed, ctx.per_step) for dr, a in tally.agg.items()]
    out.sort(key=lambda s: -s.ms_per_step)
    return out, tally.rows


@dataclass
class _Tally:
    """What the copies add up to over the host's GPUs: each direction's per-step columns and totals (``agg``: the dict
    :func:`_blocking` reads), the per-step rows the caller keeps, and the device-side times measured against each
    GPU's own kernels.  Why one value: every GPU adds to the same totals, and the rows stop at ``max_rows``."""
    n: int
    max_rows: int | None
    step_ids: list[int]
    rows: list[MemcpyStepStat] = field(default_factory=list)
    agg: dict[str, dict] = field(default_factory=dict)
    #: a device copy's time no kernel or collective of its GPU overlaps, ms
    own: dict[str, float] = field(default_factory=dict)
    #: page migrations' time under a kernel of their GPU (the kernel waits on them), ms
    paging: dict[str, float] = field(default_factory=dict)
    #: the program's own Unified Memory prefetch's time no kernel overlaps, ms
    prefetch: dict[str, float] = field(default_factory=dict)
    #: asynchronous uploads' time no kernel overlaps that delayed no GPU work (:func:`_idle_anyway`), ms
    idle_anyway: dict[str, float] = field(default_factory=dict)
    #: copy time on streams of their own (no kernel or collective of the GPU on them, :func:`_copy_streams`), ms
    own_stream: dict[str, float] = field(default_factory=dict)
    #: copy time whose stream, or whose GPU's kernels' streams, the file did not record (:func:`_copy_streams`), ms
    unknown_stream: dict[str, float] = field(default_factory=dict)
    #: copy time on a stream with no kernel of its own that the legacy default stream orders against the GPU's
    #: kernels (:func:`_copy_streams`), ms
    legacy_stream: dict[str, float] = field(default_factory=dict)
    #: the copies' bytes over the host link of their GPU (``devices.host_link``, or the rate its copies measured:
    #: :func:`_link_rate`), ms; and, per direction, that link's words
    bus: dict[str, float] = field(default_factory=dict)
    links: dict[str, set[str]] = field(default_factory=dict)
    #: (direction, host memory kind) -> the rate the large copies of several GPUs moved at side by side, with how
    #: many copies and GPUs (:func:`_shared_rates`), and the GPUs that took part
    shared: dict[tuple[str, int], tuple[float, int, int, frozenset]] = field(default_factory=dict)
    #: (GPU, host direction) -> the bytes of its copies that ran while another GPU's copies of the direction ran
    #: (:func:`_side_bytes`)
    side: dict[tuple[int, str], float] = field(default_factory=dict)


class _HostOps:
    """The host events that enclose a copy's launch record: the op that issued it, and the framework's
    parameter-loading hook (FSDP's pre-forward).  Each is built on first use: sorting the op events is the costly part,
    and most copies name their op on the device."""

    def __init__(self, ctx: Context) -> None:
        self.h = ctx.h
        self.fw = ctx.fw
        # TF ops incl. rendezvous/internal types (`IteratorGetNext/_2:_Send`), which is_tf_op_event leaves out
        internal = ctx.h.name_mask(_internal_op)
        self.op_like = (ctx.host_op | internal) if internal.any() else ctx.host_op

    @cached_property
    def op(self) -> Encloser:
        """The op events (host ops and TF's internal ones)."""
        return Encloser(self.h, self.op_like)

    @cached_property
    def upload(self) -> Encloser:
        """The framework's parameter-loading events."""
        return Encloser(self.h, self.h.name_mask(self.fw.param_upload_event))


@dataclass
class _Copies:
    """One GPU's copies inside the kept steps, a column each: what the name, the format and the host's call tell of
    each copy, read once per GPU for every direction."""
    gpu: int
    op_text: list[str]
    direction: np.ndarray
    #: the host memory: 1 pageable, 0 another kind, -1 unknown
    host_kind: np.ndarray
    #: the driver's paging of managed memory
    migration: np.ndarray
    #: the program's own prefetch of managed memory (``cudaMemPrefetchAsync``)
    asked: np.ndarray
    step: np.ndarray
    start: np.ndarray
    end: np.ndarray
    dur_ms: np.ndarray
    nbytes: np.ndarray
    #: each copy's own start on the device (ps), before the kept steps clip it (``start``)
    dev_start: np.ndarray
    #: the host was held until the copy ran (:func:`_blocks_host`)
    sync: np.ndarray
    op_idx: np.ndarray
    launch: np.ndarray
    #: the device's kernel and collective kinds, for :func:`_compute_time`
    kind: np.ndarray
    all_start: np.ndarray
    all_end: np.ndarray
    #: per device event: its kernel's own time where runs without a page fault show it (:func:`fault_free_ps`)
    fault_free: np.ndarray
    #: each copy on a stream of its own: one on which the GPU ran no kernel or collective (:func:`_copy_streams`)
    own_stream: np.ndarray
    #: each copy whose stream is not known to be its own or the kernels' (:func:`_copy_streams`)
    unknown_stream: np.ndarray
    #: each copy on a stream of no kernel that still runs in series with the kernels through the legacy default
    #: stream (:func:`_copy_streams`)
    legacy_stream: np.ndarray


def _gpu_copies(ctx: Context, g: GpuCtx) -> _Copies | None:
    """The copies of one GPU inside the kept steps (None: none), with each copy's direction, host memory kind,
    paging and prefetch read from its name -- or, where the name does not say, from what the format records apart."""
    d = g.d
    names = d.names
    if not len(d):
        return None
    direction = devices.event_copy_directions(names, d.name, d.kind)
    idx, step, start, covered = _in_kept_steps(g, direction != "")
    if not idx.size:
        return None
    m = np.zeros(len(d), dtype=bool)
    m[idx] = True
    dname = direction[m]
    host_kind = host_kinds(d)[m]
    migration = devices.page_migration(names)[d.name[m]]  # the driver's paging of managed memory
    # the program's own prefetch of managed memory (``cudaMemPrefetchAsync``): migrations, not the driver's paging
    asked = devices.managed_migration(names)[d.name[m]] & ~migration
    own, unknown, legacy = _copy_streams(d)
    return _Copies(gpu=d.gpu, op_text=d.op_text, direction=dname, host_kind=host_kind, migration=migration,
                   asked=asked, step=step, start=start, end=d.end[m],
                   dur_ms=covered.astype(float) / PS_PER_MS, nbytes=np.maximum(d.mem_bytes[m], 0), dev_start=d.start[m],
                   sync=_blocks_host(ctx.h, d.mem_sync[m], host_kind, dname, g.launch[m], d.start[m]),
                   op_idx=d.op_idx[m], launch=g.launch[m], kind=d.kind, all_start=d.start, all_end=d.end,
                   fault_free=fault_free_ps(d) if migration.any() else np.full(len(d), -1, np.int64), own_stream=own[m], unknown_stream=unknown[m],
                   legacy_stream=legacy[m])


def _copy_streams(d) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # noqa: ANN001 - DeviceEvents
    """Per device event of ``d``: (whether its stream is a stream of copies -- one on which the GPU ran no kernel or
    collective (a prefetcher's ``torch.cuda.Stream()``, a copy engine's queue) and that no implicit order ties to
    the kernels' --, whether that is not known: the event's stream, or a kernel's or collective's of the GPU, is one
    the file did not record, and whether its stream ran no kernel yet is tied to the kernels by the legacy default
    stream: it is that stream while kernels run on a blocking stream, or a blocking stream while kernels run on it
    (``DeviceEvents.legacy_ordered``, where the format states the kinds).  Most formats name each
    event's stream (Kineto's ``stream``, Nsight's ``streamId``, XPlane's stream line): the model keeps it as
    ``DeviceEvents.stream``, and the stream of those whose stream the file did not record as
    ``DeviceEvents.stream_unrecorded`` (a rocprofv3 copy trace of no ``Stream_Id`` or ``Queue_Id`` column): a copy on
    it is on no stream known, neither its own nor the kernels'.

    Why: a copy already on a stream of its own is not to be told to move to one (h37-fixorder61's Left 3: the
    metrics had no copy's stream, and the side-stream fix said "a copy on the kernels' own stream runs between them"
    to copies that ran on none of theirs); and a stream not recorded is not one of their own (h37-review61b's Left 1:
    rocprofv3's copies, filled in as queue 0 beside kernels on queue 1, read a share of 1.0 on streams of their own);
    nor is the legacy default stream, or a blocking stream beside kernels on it (h37-copy70's Left 2: a copy on the
    legacy default stream waits for the kernels queued before it on every blocking stream, and they queued after it
    wait for it -- CUDA's implicit synchronisation -- yet it read as "a stream of its own").  Only the kinds the
    format states count: a stream of no stated kind is taken as its own, as before."""
    busy = (d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)
    none = np.zeros(len(d), dtype=bool)
    if not busy.any():  # a copy-only GPU: no kernels for its copies to overlap, whatever stream they run on
        return none, none, none
    unrecorded = d.stream == d.stream_unrecorded if d.stream_unrecorded >= 0 else none
    if (unrecorded & busy).any():  # a kernel on no stream known: no copy's stream is known to be free of kernels
        return none, np.ones(len(d), dtype=bool), none
    kernels = np.unique(d.stream[busy])
    own = ~np.isin(d.stream, kernels) & ~unrecorded
    # the streams the legacy default stream orders against a kernels' stream: CUDA's rule for the kinds and contexts
    # the file states, asked of its one home, as the handoffs' reading asks it (h37-copy71's Left 3)
    tied, ks = np.zeros(max(len(d.stream_names), 1), dtype=bool), kernels.tolist()
    for i in d.stream_kinds:
        if 0 <= i < tied.size and any(d.legacy_ordered(i, k) for k in ks):
            tied[i] = True
    legacy = own & tied[d.stream.astype(np.intp, copy=False)] if tied.any() else none
    return own & ~legacy, unrecorded, legacy


def _in_kept_steps(g: GpuCtx, copy: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The copies (``copy``: bool per device event of ``g``) the kept steps hold -- their indices, sorted; each one's
    kept step, start (ps) and time inside the kept steps (ps) -- as the ledger keeps its account of them.  A copy is
    a step's where it starts (``GpuCtx.step``), or, where it starts before any kept step (a dropped step's, the queue
    before the window) and runs into one, that step's from the step's start; each copy's time is its time inside
    the kept steps' windows.

    Why: the ledger books each instant of a kept step once, so a copy launched before the first kept step and run
    into it is booked there, and a copy running past the last one only up to its end; the copies table counted whole
    copies by their start.  A JAX loop whose batch is put on the device just before each step's module (random walk
    seed 42101 of ``--xplane``) read 0.5 copies and 0.42 ms of H2D a step in the table beside 0.78 ms a step in the
    breakdown (two copies, the first run mostly inside step 0); a PyTorch loop's prefetch of the next batch run past
    the optimizer step's end (seed 43641) read 2.37 ms beside 2.81 ms."""
    d = g.d
    cand = np.flatnonzero(copy)
    step = g.step[cand]
    start = d.start[cand].astype(np.int64)
    end = d.end[cand].astype(np.int64)
    w = np.asarray(g.windows, np.int64).reshape(-1, 2)
    if len(w):
        into = np.flatnonzero(step < 0)
        k = assign(end[into] - 1, w) if into.size else np.zeros(0, np.int64)
        ok = k >= 0
        ok[ok] = start[into[ok]] < w[k[ok], 0]  # started before the step it ends in
        step = step.copy()
        step[into[ok]] = k[ok]
        start[into[ok]] = w[k[ok], 0]
    keep = step >= 0
    return cand[keep], step[keep], start[keep], time_within(w[:, 0], w[:, 1], start[keep], end[keep])


def host_kinds(d) -> np.ndarray:  # noqa: ANN001 - DeviceEvents
    """Per device event of ``d``, the host memory of its copy: 1 pageable, 0 another kind, -1 unknown or no copy.
    One reading for the copies' tally and the idle inside their calls (``metrics.syncs``): the kind a copy's name
    gives (CUPTI's "Memcpy HtoD (Pageable -> Device)"), or where the name does not say, what the format records apart
    from it (XPlane's ``memcpy_details``: ``kind_src:pageable``; ``formats.staging``'s reading of AMD's timing)."""
    return devices.event_host_memory(d.names, d.name, d.mem_host)


def _compute_time(c: _Copies) -> tuple[np.ndarray, np.ndarray]:
    """The union of the GPU's kernels and collectives: what a device copy, a page migration or a prefetch is measured
    against (built only for a GPU that has one of those)."""
    busy = (c.kind == devices.KIND_KERNEL) | (c.kind == devices.KIND_COLLECTIVE)
    return union_intervals(c.all_start[busy].astype(np.int64, copy=False), c.all_end[busy].astype(np.int64, copy=False))


def _tally_gpu(ctx: Context, g: GpuCtx, c: _Copies, tally: _Tally, hosts: _HostOps) -> None:
    """Add one GPU's copies to the tally, direction by direction: their time beside the GPU's kernels, their
    per-step counts and rows, and the ops that issued them."""
    compute = None  # kernels and collectives of this GPU, built for its device copies only
    for dr in np.unique(c.direction):
        sel = c.direction == dr
        if dr in _ON_DEVICE or (dr == "h2d" and c.migration[sel].any()) or c.asked[sel].any():
            if compute is None:
                compute = _compute_time(c)
            _beside_kernels(tally, c, str(dr), sel, compute)
        a = _per_step(tally, c, dr, sel)
        _issuing_ops(ctx, c, dr, sel, a, hosts)
        tally.own_stream[str(dr)] = tally.own_stream.get(str(dr), 0.0) + float(c.dur_ms[sel & c.own_stream].sum())
        tally.unknown_stream[str(dr)] = tally.unknown_stream.get(str(dr), 0.0) + float(
            c.dur_ms[sel & c.unknown_stream].sum())
        if c.legacy_stream[sel].any():
            tally.legacy_stream[str(dr)] = tally.legacy_stream.get(str(dr), 0.0) + float(
                c.dur_ms[sel & c.legacy_stream].sum())
        if dr in _HOST_DIRECTIONS:
            _bus_floor(tally, g, c, str(dr), float(c.nbytes[sel].sum()))
        if dr == "h2d":
            tally.idle_anyway["h2d"] = tally.idle_anyway.get("h2d", 0.0) + _idle_anyway(ctx, g)


def _idle_anyway(ctx: Context, g: GpuCtx) -> float:
    """Milliseconds, inside the kept steps, of GPU ``g``'s uploads that ran while the GPU would have idled waiting for
    the host anyway (``metrics.breakdown.off_path_uploads``: from pinned memory, asynchronous, no kernel beside them,
    ended before the host launched the GPU's next kernel) -- the stretches the ledger books as the host's idle.

    Why read there: one account.  h37-copystream61 measured these stretches here while the ledger booked them as
    ``memcpy_h2d``, so the copies' finding left them out and the host's findings did not claim them (its Left 4)."""
    s, e = off_path_uploads(ctx, g)
    w = np.asarray(g.windows, np.int64).reshape(-1, 2)
    if not s.size or not len(w):
        return 0.0
    return float(time_within(s, e, w[:, 0], w[:, 1]).sum()) / PS_PER_MS


def _beside_kernels(tally: _Tally, c: _Copies, dr: str, sel: np.ndarray, compute: tuple[np.ndarray, np.ndarray]) -> None:
    """The copy time a GPU's kernels do not hide: a prefetch's and a device copy's time no kernel overlaps; and the
    kernels' wait for the pages migrated under them (:func:`page_waits`: kernel time, told beside the copies', never
    inside it).  Why measured per GPU: only that GPU's kernels can hide its copies."""
    if c.asked[sel].any():
        tally.prefetch[dr] = tally.prefetch.get(dr, 0.0) + _exposed_ms(c.start[sel & c.asked], c.end[sel & c.asked],
                                                                       compute)
    if dr in _ON_DEVICE:
        tally.own[dr] = tally.own.get(dr, 0.0) + _exposed_ms(c.start[sel], c.end[sel], compute)
    elif dr == "h2d" and c.migration[sel].any():
        busy = (c.kind == devices.KIND_KERNEL) | (c.kind == devices.KIND_COLLECTIVE)
        ws, we = page_waits(c.all_start[busy], c.all_end[busy], c.start[sel & c.migration], c.end[sel & c.migration],
                            c.fault_free[busy])
        tally.paging[dr] = tally.paging.get(dr, 0.0) + float((we - ws).sum()) / PS_PER_MS


#: The copies between host memory and a GPU, which cross its host link.
_HOST_DIRECTIONS = ("h2d", "d2h")


def _bus_floor(tally: _Tally, g: GpuCtx, c: _Copies, dr: str, nbytes: float) -> None:
    """Add one GPU's ``nbytes`` of ``dr`` copies to the tally's floor: their time at the fastest its host link moves
    bytes -- the rate this capture's own copies measured on it where they measured one (:func:`_link_rate`), else the
    fastest link the GPU can sit on (``devices.host_link``), said assumed.  Why: a fix that pins or overlaps a copy
    leaves its bytes to cross the bus -- the saving the copy finding books is at most the copy's time beyond this floor
    (h37-bus69); and the link a GPU's generation allows is no measurement of the slot it sits in (h37-copy70).  Where
    several GPUs' copies moved side by side the link's rate is their sum (:func:`_shared_rates`), yet the bytes this
    GPU moved beside another's (``_Tally.side``) cross it beside those again: they keep the share this GPU's copies
    moved at, and only its copies alone on the link take the sum (h37-copy71: an FSDP job's two ranks upload at once,
    27.7 GB/s each on a link that moved 54.6; flooring each rank's uploads at 54.6 halved a floor the schedule keeps)."""
    info = g.d.info
    cc = info.compute_capability
    bw, words = devices.host_link(info.name, "{}.{}".format(*cc) if isinstance(cc, (tuple, list)) else cc)
    side = 0.0
    if np.isfinite(bw):  # a bus to measure: an integrated GPU's copies cross none
        share = _link_rate(c, dr, bw, words)[0]  # the rate this GPU's own copies moved at
        bw, words = _link_rate(c, dr, bw, words, tally.shared)
        side = min(tally.side.get((c.gpu, dr), 0.0), nbytes) if bw > share else 0.0
    # the bytes that ran beside another GPU's copies cross at the share they moved at; the rest at the link's rate
    tally.bus[dr] = tally.bus.get(dr, 0.0) + ((nbytes - side) / bw + (side / share if side else 0.0)) * 1e3
    tally.links.setdefault(dr, set()).add(words)


def _rated(c: _Copies, dr: str, kind: int) -> np.ndarray:
    """The copies of ``c`` that measure ``dr``'s link with host memory ``kind`` (0 pinned, 1 pageable): large enough
    that their bytes set their time (``excessive_memcpy.rate_bytes``), with a device time; neither the driver's paging
    nor the program's prefetch of managed memory (they move pages, not a copy's bytes)."""
    return ((c.direction == dr) & (c.host_kind == kind) & ~c.migration & ~c.asked
            & (c.nbytes >= T("excessive_memcpy.rate_bytes")) & (c.end > c.dev_start))


def _shared_rates(gpus: list[_Copies]) -> dict[tuple[str, int], tuple[float, int, int, frozenset]]:
    """Per host direction and host memory kind (0 pinned, 1 pageable): the rate (bytes/s) the large copies
    (:func:`_rated`) of several GPUs moved at while side by side -- those of each GPU that overlap one of another
    GPU's: their bytes over the union of their device times --, with how many copies, of how many GPUs, and which
    GPUs; none where no two GPUs' copies overlap.

    Why: GPUs behind one host link (a PCIe switch, a CPU's root port) share it; each copy then moves at its share, and
    the rate one GPU's copies measured understates the link by as many GPUs as copied at once (h37-copy70's Left 1).
    Their sum is what the link moved -- where the GPUs do not share one link, more than it could: the caller keeps
    it no faster than the fastest link the GPU can sit on (``devices.host_link``)."""
    out: dict[tuple[str, int], tuple[float, int, int, frozenset]] = {}
    if len(gpus) < 2:
        return out
    for dr in _HOST_DIRECTIONS:
        for kind in (0, 1):
            sel = [_rated(c, dr, kind) for c in gpus]
            spans = [(c.dev_start[m].astype(np.int64), c.end[m].astype(np.int64)) for c, m in zip(gpus, sel)]
            starts, ends, nbytes, who = [], [], 0.0, set()
            for k, (c, m) in enumerate(zip(gpus, sel)):
                if not m.any():
                    continue
                others = [spans[j] for j in range(len(gpus)) if j != k and spans[j][0].size]
                if not others:
                    continue
                s, e = spans[k]
                hit = _overlaps(spans[k], others)
                if hit.any():
                    starts.append(s[hit])
                    ends.append(e[hit])
                    nbytes += float(c.nbytes[m][hit].sum())
                    who.add(c.gpu)
            if len(who) < 2:
                continue
            us, ue = union_intervals(np.concatenate(starts), np.concatenate(ends))
            span = float((ue - us).sum()) / PS_PER_MS / 1e3
            if span > 0:
                out[(dr, kind)] = (nbytes / span, sum(x.size for x in starts), len(who), frozenset(who))
    return out


def _side_bytes(gpus: list[_Copies]) -> dict[tuple[int, str], float]:
    """(GPU, host direction) -> the bytes of its copies of the direction (the driver's paging and the program's
    prefetch aside) that ran while another GPU's copies of the direction ran: the bytes that share the link with
    another GPU's at the time they cross it (:func:`_bus_floor`)."""
    out: dict[tuple[int, str], float] = {}
    if len(gpus) < 2:
        return out
    for dr in _HOST_DIRECTIONS:
        sel = [(c.direction == dr) & ~c.migration & ~c.asked & (c.end > c.dev_start) for c in gpus]
        spans = [(c.dev_start[m].astype(np.int64), c.end[m].astype(np.int64)) for c, m in zip(gpus, sel)]
        for k, (c, m) in enumerate(zip(gpus, sel)):
            others = [spans[j] for j in range(len(gpus)) if j != k and spans[j][0].size]
            if not m.any() or not others:
                continue
            hit = _overlaps(spans[k], others)
            if hit.any():
                out[(c.gpu, dr)] = out.get((c.gpu, dr), 0.0) + float(c.nbytes[m][hit].sum())
    return out


def _overlaps(mine: tuple[np.ndarray, np.ndarray], others: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Per interval of ``mine`` (starts, ends), whether it overlaps any interval of ``others``."""
    os_, oe = union_intervals(np.concatenate([o[0] for o in others]), np.concatenate([o[1] for o in others]))
    s, e = mine
    at = np.searchsorted(oe, s, side="right")  # the first other stretch ending after the interval starts
    return (at < os_.size) & (os_[np.minimum(at, os_.size - 1)] < e)


def _measured(c: _Copies, dr: str, kind: int) -> tuple[float, int]:
    """The rate (bytes/s) ``dr``'s copies of host memory ``kind`` (0 pinned, 1 pageable) large enough that their bytes
    set their time (:func:`_rated`) moved at on this GPU, with how many: their bytes over the union of their device
    times (copies run side by side share the link); (0, 0) where none is."""
    sel = _rated(c, dr, kind)
    if not sel.any():
        return 0.0, 0
    s, e = union_intervals(c.dev_start[sel].astype(np.int64), c.end[sel].astype(np.int64))
    span = float((e - s).sum()) / PS_PER_MS / 1e3
    return (float(c.nbytes[sel].sum()) / span, int(np.count_nonzero(sel))) if span > 0 else (0.0, 0)


def _side_by_side(c: _Copies, dr: str, bw: float, shared: dict) -> tuple[float, int, int]:
    """The rate ``dr``'s large pinned copies of several GPUs, this one's among them, moved at side by side
    (:func:`_shared_rates`), no faster than the link ``bw``, with how many copies and GPUs; (0, 0, 0) where none."""
    rate, k, n, who = shared.get((dr, 0), (0.0, 0, 0, frozenset()))
    return (min(rate, bw), k, n) if c.gpu in who else (0.0, 0, 0)


def _link_rate(c: _Copies, dr: str, bw: float, words: str, shared: dict | None = None) -> tuple[float, str]:
    """The bandwidth a host copy's floor takes on this GPU, with its words: the rate this capture's large pinned
    copies moved at (``dr``'s, else the other host direction's: one link) -- never faster than the link did pinned --,
    and never slower than any large copy of ``dr`` measured, pageable ones included (the link moved at least that);
    the assumed link ``bw`` (``words``) only where no pinned copy measured it.

    Why: the floor took the fastest link a GPU's generation allows (PCIe 4.0 x16 for an Ampere part) whatever slot
    the GPU sat in; a capture whose pinned copies moved at 12 GB/s says its link, and a pageable copy that moved
    faster than the assumed link says the assumption was wrong (h37-copy70).  Where this GPU's pinned copies ran side
    by side with another GPU's, the link moved their sum (``shared``, :func:`_side_by_side`), no faster than ``bw``:
    each GPU's own rate was its share of a link they shared (h37-copy71)."""
    pinned, k = _measured(c, dr, 0)
    side, on = "", dr
    if not pinned:
        other = next(o for o in _HOST_DIRECTIONS if o != dr)
        pinned, k = _measured(c, other, 0)
        side, on = (f" {_DIR_WORDS[other]}", other) if pinned else ("", dr)
    together, kt, gpus = _side_by_side(c, on, bw, shared or {}) if pinned else (0.0, 0, 0)
    if together > pinned:  # several GPUs' copies at once: the link moved their sum, at most the fastest it can be
        pinned, k = together, kt
        side += devices.SHARED_LINK.format(gpus=gpus, cap=f", at most {words}" if together >= bw else "")
    paged, kp = _measured(c, dr, 1)
    if paged > (pinned or bw):
        beside = f"its pinned copies' {pinned / 1e9:.1f} GB/s" if pinned else words
        return paged, devices.MEASURED_LINK_AT_LEAST.format(
            rate=paged / 1e9, copies=plural(kp, "pageable copy", "pageable copies"), beside=beside)
    if pinned:
        return pinned, devices.MEASURED_LINK.format(rate=pinned / 1e9, copies=plural(k, "pinned copy", "pinned copies"),
                                                    side=side)
    # the default link's words say "assumed" already; a vendor's link by the GPU's generation is assumed too
    return bw, devices.ASSUMED_LINK.format(link=words if words == devices.HOST_LINK_ASSUMED[1] else f"{words}, assumed")


def _links_words(links: set[str]) -> str:
    """The words of a direction's host links over the GPUs: each distinct one, the first two and how many more (eight
    GPUs' measured rates each differ a little: eight clauses were no sentence)."""
    ws = sorted(links)
    return "; ".join(ws[:2]) + (f"; and {plural(len(ws) - 2, 'other GPU link', 'other GPU links')}" if len(ws) > 2 else "")


#: A host direction in a link's words.
_DIR_WORDS = {"h2d": "to the GPU", "d2h": "from the GPU"}


def _per_step(tally: _Tally, c: _Copies, dr: str, sel: np.ndarray) -> dict:
    """One direction's copies of one GPU counted per step (calls, bytes, time, synchronous calls and their time):
    the rows the caller keeps (up to ``max_rows``) and the direction's running totals, which it returns."""
    n = tally.n
    st, dur = c.step[sel], c.dur_ms[sel]
    cnt = np.bincount(st, minlength=n)
    b = np.bincount(st, weights=c.nbytes[sel], minlength=n)
    ms = np.bincount(st, weights=dur, minlength=n)
    sc = np.bincount(st, weights=c.sync[sel].astype(float), minlength=n)
    sms = np.bincount(st, weights=np.where(c.sync[sel], dur, 0.0), minlength=n)
    nz = np.flatnonzero(cnt)
    if tally.max_rows is not None:
        nz = nz[:max(0, tally.max_rows - len(tally.rows))]
    tally.rows.extend(MemcpyStepStat(tally.step_ids[i], c.gpu, str(dr), k, int(bi), mi, int(si))
                      for i, k, bi, mi, si in zip(nz.tolist(), cnt[nz].tolist(), b[nz].tolist(), ms[nz].tolist(),
                                                  sc[nz].tolist()))
    a = tally.agg.setdefault(str(dr), dict(cnt=np.zeros(n), b=np.zeros(n), ms=np.zeros(n), sc=np.zeros(n),
                                           sms=np.zeros(n), ops={}, pageable=0.0, kind_known=0.0, migration=0.0,
                                           launched=0.0, uploads=0.0, pageable_n=0, pageable_b=0.0,
                                           pageable_min=0.0, pageable_max=0.0))
    a["migration"] += float(c.dur_ms[sel & c.migration].sum())
    a["cnt"] += cnt; a["b"] += b; a["ms"] += ms; a["sc"] += sc; a["sms"] += sms
    paged = sel & (c.host_kind == 1)
    a["pageable"] += float(c.dur_ms[paged].sum())
    a["pageable_n"] += int(np.count_nonzero(paged))  # the pageable copies themselves: how many, how large
    a["pageable_b"] += float(c.nbytes[paged].sum())
    _size_range(a, c.nbytes[paged])
    a["kind_known"] += float(c.dur_ms[sel & (c.host_kind >= 0)].sum())
    return a


def _size_range(a: dict, nbytes: np.ndarray) -> None:
    """Widen ``a``'s smallest and largest pageable copy (bytes) by ``nbytes``, the sizes of more of them (a size of 0:
    unknown, left out).  Why: the mean alone made one 154.1 MB batch of images and its 2 KB of labels "the 2 H2D
    copies of 77.1 MB each" (``wild/vit_a4000_pageable_batch``, h37-hunt69b)."""
    known = nbytes[nbytes > 0]
    if known.size:
        lo, hi = float(known.min()), float(known.max())
        a["pageable_min"] = min(a["pageable_min"], lo) if a["pageable_min"] > 0 else lo
        a["pageable_max"] = max(a["pageable_max"], hi)


def _issuing_ops(ctx: Context, c: _Copies, dr: str, sel: np.ndarray, a: dict, hosts: _HostOps) -> None:
    """Count the ops behind one direction's copies into ``a["ops"]``, and for uploads the time launched inside the
    framework's parameter-loading hook.  The op is the device-side one (`tf_op` stat / TF 2.4 `TensorFlow Ops` line),
    else the `name:Type` host op event enclosing the copy's launch record (same correlation_id)."""
    ops = c.op_idx[sel]
    for o, k in zip(*np.unique(ops[ops >= 0], return_counts=True)):
        name = frameworks.op_name(c.op_text[int(o)])
        a["ops"][name] = a["ops"].get(name, 0) + int(k)
    rec = c.launch[sel]
    if dr == "h2d":
        known = rec >= 0
        dur = c.dur_ms[sel]
        a["launched"] += float(dur[known].sum())
        a["uploads"] += float(dur[known][hosts.upload.find(rec[known]) >= 0].sum())
    rec = rec[(ops < 0) & (rec >= 0)]
    # the enclosing op of the copies' launch records only: a column of it for every device event was
    # 4 bytes per event through the whole analysis, for the few copies here
    host_op = hosts.op.find(rec) if rec.size else np.full(0, -1, np.int64)
    host_op = host_op[host_op >= 0]
    for nid, k in zip(*np.unique(ctx.h.name[host_op], return_counts=True)):
        name = frameworks.op_name(ctx.h.names[int(nid)])
        a["ops"][name] = a["ops"].get(name, 0) + int(k)


def _direction_stat(dr: str, a: dict, tally: _Tally, exposed: dict[str, float],
                    per: Callable[[float], float]) -> MemcpyStat:
    """One direction's copies per step and GPU (``per``: ``Context.per_step``), with the shares the rules read:
    synchronous, pageable, migrated, parameter uploads, and the time no kernel hides."""
    total = a["cnt"].sum()
    recurring = bool(tally.n >= 2 and total > 0 and np.all(a["cnt"] == a["cnt"][0]) and np.all(a["b"] == a["b"][0]))
    blocking = _blocking(dr, a, exposed, tally.own, per)
    return MemcpyStat(
        direction=dr, count_per_step=per(total), count=int(total), bytes_per_step=per(a["b"].sum()),
        ms_per_step=per(a["ms"].sum()),
        sync_count_per_step=per(a["sc"].sum()), sync_share=float(a["sc"].sum() / total) if total else None,
        sync_ms_per_step=per(a["sms"].sum()),
        # the part of the copies' time no kernel overlaps: at most their time (the ledger's category may hold a
        # copy's edge that falls in the step where its start does not)
        recurring=recurring, blocking_ms_per_step=blocking,
        top_ops=[o for o, _ in sorted(a["ops"].items(), key=lambda kv: -kv[1])[:5]],
        pageable_share=a["pageable"] / a["kind_known"] if a["kind_known"] > 0 else None,
        pageable_ms_per_step=per(a["pageable"]), pageable_count_per_step=per(a["pageable_n"]),
        pageable_bytes_per_step=per(a["pageable_b"]),
        pageable_min_bytes=a["pageable_min"], pageable_max_bytes=a["pageable_max"],
        kind_known_share=a["kind_known"] / float(a["ms"].sum()) if a["ms"].sum() > 0 else None,
        migration_share=a["migration"] / float(a["ms"].sum()) if a["ms"].sum() > 0 else None,
        paging_in_kernels_ms_per_step=per(tally.paging.get(dr, 0.0)),  # kernel time: no part of the copies' own
        param_upload_share=a["uploads"] / a["launched"] if a["launched"] > 0 else None,
        prefetch_blocking_ms_per_step=min(per(tally.prefetch.get(dr, 0.0)), blocking),
        # beside the blocking time, never inside it: the ledger books these stretches as the host's idle
        idle_anyway_ms_per_step=min(per(tally.idle_anyway.get(dr, 0.0)), max(per(a["ms"].sum()) - blocking, 0.0)),
        own_stream_share=tally.own_stream.get(dr, 0.0) / float(a["ms"].sum())
        if a["ms"].sum() > 0 and not tally.unknown_stream.get(dr, 0.0) else None,
        legacy_stream_share=tally.legacy_stream[dr] / float(a["ms"].sum())
        if a["ms"].sum() > 0 and tally.legacy_stream.get(dr, 0.0) > 0 else None,
        # at most the copies' own time: a capture's bytes over a link they beat are no floor above what ran
        bus_floor_ms_per_step=min(per(tally.bus.get(dr, 0.0)), per(a["ms"].sum())),
        bus_link=_links_words(tally.links.get(dr, set())) if dr in tally.bus else None,
    )


#: Copies on the device (one GPU's, or between GPUs): GPU work of their own, exposed where no kernel runs beside them.
_ON_DEVICE = ("d2d", "p2p")
#: Directions whose blocking time is their own ledger category's (``_BLOCK_CAT``): the host copies and the GPU
#: filling its own memory (``cudaMemset``, booked as ``memset``, no transfer).
_LEDGER_OWN = ("h2d", "d2h", "memset")


def _blocking(dr: str, a: dict, exposed: dict[str, float], own: dict[str, float],
              per: Callable[[float], float]) -> float:
    """A direction's copy time per step that no kernel overlaps (at most its own time).  Host copies and memsets:
    their ledger category's -- one quantity, one value on every screen (the report's copy table, the copies' finding,
    the ledger).  Unified Memory pages migrated to the GPU under a running kernel are no part of it: they ran while a
    kernel ran, and the kernel's wait for them is kernel time, ``paging`` (``MemcpyStat.paging_in_kernels_ms_per_step``),
    told in its own words and column.  Until h37-marks68 that wait was added here, capped at the copies' own time: a
    managed-memory solver's table read H2D "exposed" 6.2 us per step where the ledger booked 0 of its copies, a slice
    of the kernels' 524 us wait under the name of copy time no kernel hid (wild/counted_steps_rtx3090_solver).  Device
    copies share
    theirs (``memcpy_d2d``) with copies of unknown kind, so theirs is measured on the copies themselves: a step that
    spends 13% of its time in 768 ``.contiguous()``-like D2D copies with nothing else running (HTA's V100 trace) is
    blocked by them as much as by a host copy.

    Memsets read their own category (``memset``): the ledger booked them in ``memcpy_d2d`` until h37-fill30, and the
    table said 0 of it -- a 1.36 GB ``cudaMemset`` holding 6.40 ms of a Sudoku solver's 9.69 ms pass
    (RyuGracie/SudokuSolverCUDA, RTX 4060 Laptop) was "copies block the GPU for 6.47 ms ... mostly D2H (45 us)"; then
    a fill measured on its own events beside a device-copy category that named it a copy.  One quantity, one name: no
    part exceeds its whole."""
    total = per(a["ms"].sum())
    if dr in _LEDGER_OWN:
        return min(float(exposed.get(_BLOCK_CAT[dr], 0.0)), total)
    if dr in _ON_DEVICE:
        return min(per(own.get(dr, 0.0)), total, float(exposed.get("memcpy_d2d", 0.0)))
    return 0.0


def _exposed_ms(s: np.ndarray, e: np.ndarray, compute: tuple[np.ndarray, np.ndarray]) -> float:
    """Milliseconds of the copies (s, e) during which none of the ``compute`` intervals runs."""
    xs, xe = subtract_intervals(s.astype(np.int64), e.astype(np.int64), *compute)
    return float((xe - xs).sum()) / PS_PER_MS


def fault_free_ps(d) -> np.ndarray:  # noqa: ANN001 - DeviceEvents
    """Per device event of ``d``: the median length (ps) of its kernel's runs under which no managed page migrated to
    the GPU -- its own time without a fault --; -1 where the kernel always ran with a page moving under it, or the
    event is no kernel.  Read over every event of the GPU, the steps left out too: a run there with a page moving
    under it is no fault-free run."""
    out = np.full(len(d), -1, np.int64)
    kern = (d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)
    mig = devices.page_migration(d.names)[d.name] & (devices.event_copy_directions(d.names, d.name, d.kind) == "h2d") \
        if d.names and len(d) else np.zeros(len(d), bool)
    if not kern.any() or not mig.any():
        return out
    ki = np.flatnonzero(kern)
    ks, ke = d.start[ki].astype(np.int64), d.end[ki].astype(np.int64)
    o = np.argsort(ks, kind="stable")
    ms = d.start[mig].astype(np.int64)
    k = np.searchsorted(ks[o], ms, side="right") - 1
    ok = k >= 0
    ok[ok] = ms[ok] < ke[o][k[ok]]
    faulted = np.zeros(ki.size, bool)
    faulted[o[k[ok]]] = True
    names = d.name[ki]
    for nid in np.unique(names[faulted]).tolist():
        free = ~faulted & (names == nid)
        if free.any():
            out[ki[names == nid]] = int(np.median(ke[free] - ks[free]))
    return out


def page_waits(ks: np.ndarray, ke: np.ndarray, ms: np.ndarray, me: np.ndarray,
               free: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) ps, disjoint and sorted, of the time a GPU's kernels (``ks``, ``ke``) waited for managed pages
    that Unified Memory page migrations to the GPU (``ms``, ``me``: the driver's paging on a kernel's fault) brought
    under them: each such kernel from its start to the end of the first page moved under it, and each later page's
    own migration.

    Why from the kernel's start: the driver moves a page only once it has handled the kernel's fault, so a kernel
    that needs a page at once stops far longer than the copy it waits for.  cestwc/balinski-and-gomory-cuda
    ``report7`` (wild/managed_flag_rtx3090_solver, RTX 3090): ``reset_d_changed``, one thread writing one int, runs
    1.15 us where no page moves under it and 45-419 us where one does, its 4 KB migration 1.8 us long and ending as the
    kernel does; 483 of each turn's 497 us of kernel time is in such kernels, of which the migrations' own time was a
    few microseconds (h37-nvtx61).  Later pages only by their own time, a lower bound: a long kernel faulting page
    after page as it goes (a one-thread vector add over managed buffers) computes between its faults.

    ``free`` (per kernel of ``ks``, :func:`fault_free_ps`): the kernel's own time where its runs without a fault show
    it (-1 unknown).  A kernel's wait for its first page is then at most what the faults added to it, its length less
    that own time: the fault lies somewhere in the kernel's work, and the work before it is no wait.  Why: from the
    start alone, a kernel that computes 200 us before it touches a managed page and waits 50 us for it counted 249 us
    (h37-copy63: ``synthetic.nsysexport.write_counted_solver(gpu_fault_every=2, kernel_us=200)``); on cestwc's
    ``report7``/``report8`` each faulting kernel's fault-free runs take 1.1-2.6 us, so the bound moves nothing there
    (by hand: at most 9 us of report8's 4.04 ms of waits in the window, 0.2%)."""
    ks, ke = ks.astype(np.int64, copy=False), ke.astype(np.int64, copy=False)
    ms, me = ms.astype(np.int64, copy=False), me.astype(np.int64, copy=False)
    none = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    if not ks.size or not ms.size:
        return none
    order = np.argsort(ks, kind="stable")
    ks, ke = ks[order], ke[order]
    added = ke - ks - free.astype(np.int64, copy=False)[order] if free is not None else None
    k = np.searchsorted(ks, ms, side="right") - 1  # the last kernel begun before each migration: the one it ran under
    under = k >= 0
    under[under] = ms[under] < ke[k[under]]
    if not under.any():
        return none
    k, ms, me = k[under], ms[under], np.minimum(me[under], ke[k[under]])
    o = np.lexsort((ms, k))
    k, ms, me = k[o], ms[o], me[o]
    first = np.concatenate([[True], k[1:] != k[:-1]])  # each kernel's first page: waited for from its start
    begin = ks[k]
    if added is not None:  # at most what the faults added to the kernel, where its fault-free runs tell its own time
        known = free[order][k] >= 0
        begin = np.where(known, np.maximum(begin, me - np.maximum(added[k], 0)), begin)
    return union_intervals(np.where(first, begin, ms), me)

def _blocks_host(h, call_sync: np.ndarray, host_kind: np.ndarray, dname: np.ndarray,  # noqa: ANN001 - HostEvents
                 launch: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Bool per copy: the host was held until the copy ran -- a synchronous call (``cudaMemcpy``), or a copy between
    the device and pageable host memory whatever its call (issue #37 item 3).  CUDA's API synchronization behaviour:
    an ``...Async`` copy from the device to pageable memory returns only once the copy has completed, and one from
    pageable memory to the device is staged through a pinned buffer by the driver, the call returning as the last
    chunk is staged.  Measured where the capture holds the call: a pageable copy blocked the host if its call was still
    running when the copy began (PyTorch's 19 MB pageable batch on a V100: a 1.71 ms ``cudaMemcpyAsync`` around a
    1.65 ms copy); a small one the driver stages at once returns before its copy starts (its 256-byte copies: an 11 us
    call, ended before the copy), and is not.  Without the call, a pageable copy to the host is synchronous by the
    API's rule; one to the device is not known to be, and is left as its call made it."""
    sync = call_sync == 1
    pageable = host_kind == 1
    if not pageable.any():
        return sync
    known = launch >= 0
    held = pageable & known
    held[held] = h.end[launch[held]] > start[held]
    return sync | held | (pageable & ~known & (dname == "d2h"))


def _host_memory(name: str) -> int:
    """1 a copy to or from pageable host memory, 0 one whose name gives another memory kind, -1 a name that does not
    say (XPlane's ``MemcpyH2D``)."""
    return devices.copy_host_memory(name)


def _internal_op(name: str) -> bool:
    """``name:_Type`` host events: TF's internal ops (``_Send``, ``_Recv``, ``_HostSend``...)."""
    if ":_" not in name or name.startswith(("void ", "Memcpy")) or "::" in name:
        return False
    t = name.rsplit(":", 1)[1]
    return len(t) > 1 and t[0] == "_" and t[1].isupper() and " " not in t and "(" not in t


def _waiting(ctx: Context, g) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001 - a GpuCtx
    """Host time that is waiting, not work on data: inside blocking runtime calls, and waiting for input."""
    spans = [ctx.blocked_spans, ctx.input_wait_parts(g)]
    spans = [sp for sp in spans if sp is not None and len(sp[0])]
    if not spans:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return union_intervals(np.concatenate([sp[0] for sp in spans]).astype(np.int64),
                           np.concatenate([sp[1] for sp in spans]).astype(np.int64))


def round_trips(ctx: Context) -> HostRoundTrip:
    """Device->host->device round trips inside kept steps (see :class:`HostRoundTrip`); framework-neutral."""
    n = ctx.steps.count
    active = ctx.active
    if not n or not active:
        return HostRoundTrip()
    with_any = np.zeros(n, dtype=bool)
    idle = d2h_b = h2d_b = 0.0
    for g in active:
        d = g.d
        inside = g.step >= 0
        d2h = inside & (d.kind == devices.KIND_D2H)
        h2d = inside & (d.kind == devices.KIND_H2D)
        ws, we, steps = trip_windows(g, n)
        if not ws.size:
            continue
        us, ue = d.busy()
        # the GPU idle in the windows, less the time the host was waiting rather than working on the data: blocked in
        # a copy or a sync, or loading the next batch (a D2H that waits for NCCL, then the input pipeline, is no trip)
        iw_s, iw_e = subtract_intervals(ws, we, us.astype(np.int64), ue.astype(np.int64))
        iw_s, iw_e = subtract_intervals(iw_s, iw_e, *_waiting(ctx, g))
        idle += float((iw_e - iw_s).sum()) / PS_PER_MS
        ok = np.zeros(n, dtype=bool)
        ok[steps] = True
        with_any |= ok
        sel = ok[np.clip(g.step, 0, None)] & inside
        d2h_b += float(np.maximum(d.mem_bytes[d2h & sel], 0).sum())
        h2d_b += float(np.maximum(d.mem_bytes[h2d & sel], 0).sum())
    # per step and rank, the one division every per-step number makes (``Context.per_step``)
    return HostRoundTrip(steps_with=int(with_any.sum()), idle_ms_per_step=ctx.per_step(idle),
                         d2h_bytes_per_step=ctx.per_step(d2h_b), h2d_bytes_per_step=ctx.per_step(h2d_b))
