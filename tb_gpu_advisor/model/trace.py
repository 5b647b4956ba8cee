"""The neutral trace model: what every input format is read into, and all that steps and metrics see.

One :class:`Trace` per host file (an XPlane ``<host>.xplane.pb``, a PyTorch
``<worker>.pt.trace.json``, an Nsight Systems SQLite export).  Events live in columnar tables -- one
:class:`HostEvents` for the host's threads, one :class:`DeviceEvents` per
GPU -- in numpy arrays, times in picoseconds on the trace's own clock.  A
launch on the host and the device work it started share a correlation id
(``corr``), as CUPTI records them in every format.  What a format marks
itself (a derived per-GPU step line, step annotations, compiled-module
executions, the capture window, allocator peaks and events) is carried as plain fields,
so no later stage reads a format's own types.
"""

from __future__ import annotations

import re
import types
from dataclasses import dataclass, field, fields, replace

import numpy as np

from tb_gpu_advisor.model.columns import absent_as_broadcast, int_dtype, lookup_mask, narrowest, union_intervals
from tb_gpu_advisor.model.damage import CONTRADICTION, CUT, UNREADABLE, Damage, as_damage
from tb_gpu_advisor.model.idtable import IdTable

#: The trace model's times are picoseconds: these turn them into the units reports speak (one home; the stages
#: after the model import them from here).
PS_PER_MS = 1e9
PS_PER_US = 1e6

@dataclass(frozen=True)
class DeviceInfo:
    """What the profile says about one GPU; None where it does not say."""

    name: str | None = None
    compute_capability: tuple[int, int] | None = None
    sm_count: int | None = None
    memory_bytes: int | None = None
    memory_bandwidth: float | None = None  # bytes/s
    clock_hz: float | None = None  # the SMs' maximum (boost) clock; XPlane's ``clock_rate`` is in kHz


#: Step windows in one GPU's time: (step keys, starts, ends), one row per event of the format's step line.
StepLine = tuple[np.ndarray, np.ndarray, np.ndarray]


@dataclass
class StepMarkers:
    """Steps the format marks on the host itself (PyTorch ``ProfilerStep#N``): one window per step."""

    source: str  # the step source id reported (``profiler_step``)
    note: str  # how they were found, in words
    ids: np.ndarray  # int64 step numbers
    start: np.ndarray  # int64 ps
    end: np.ndarray


@dataclass
class ModuleRuns:
    """Executions of the most executed compiled module on one GPU (XLA ``XLA Modules`` line): a step source."""

    note: str
    start: np.ndarray  # disjoint, sorted, ps
    end: np.ndarray


@dataclass
class Allocator:
    """GPU allocator statistics of the capture: peak bytes in use and the allocator's limit, None where unknown."""

    peak_bytes: int | None = None
    limit_bytes: int | None = None


@dataclass
class HostRanges:
    """Ranges the user's code (or a library) marks on the host -- Nsight's NVTX push/pop and start/end ranges --
    that are host events of their own: names and threads are the host events', what is kept here is which events
    they are, their domain, and whether each is a framework op (PyTorch's autograd NVTX ``aten::mm, op_id = N``)
    rather than a block of the user's code.  Step detection reads the user ranges (``steps.detect``)."""

    idx: np.ndarray  # host event indices of the ranges, ascending
    domain: np.ndarray  # per range: index into ``domains``
    domains: list[str]  # NVTX domain names ("" the default domain; "domain N" where the capture does not name it)
    op: np.ndarray  # bool per range: a framework op's range, not a user block
    source: str = "NVTX"  # what the ranges are, in words
    #: bool per range, None for none: a range a framework writes by its own rule around its model's structure, told by
    #: the range's text rather than its name (NVIDIA's layer-wise forward-hook markers ``{'Module': 'model.layers.0',
    #: ...}``, named ``model.layers.0``): no op and no block of the program's code (``frameworks.user_ranges``)
    framework: np.ndarray | None = None


#: What the live bytes of an allocation are, where a trace tells (:attr:`MemoryEvents.phase`): allocated in the forward
#: pass, the backward pass, the optimizer's step, by an op of unknown role, or by moving a model's parameters to the GPU
#: (a snapshot's stack says so).
MEMORY_PHASES = ("forward", "backward", "optimizer", "other", "parameters")


#: :meth:`MemoryEvents.unseen_frees` reads the addresses in this many parts (by their bits above 512 bytes)
UNSEEN_PARTS = 16
_PART_WINDOW = 1 << 18  # events a window when the parts are told


#: :class:`MemoryEvents`' arrays that are not one entry per event: :meth:`MemoryEvents.head` never cuts them, even
#: where their length happens to equal the history's
_WHOLE = frozenset({"held_unseen"})


@dataclass
class MemoryEvents:
    """One GPU's allocator events in the capture, in time order: every allocation and free the format records
    (PyTorch ``[memory]`` instant events, XLA/TF ``MemoryAllocation`` / ``MemoryDeallocation``, a snapshot's trace).

    ``allocated`` and ``reserved`` are the bytes after each event.  With ``baseline == "absolute"`` they are the
    allocator's own totals (``Total Allocated``, ``bytes_allocated``); with ``"capture_start"`` the file gives deltas
    only (PyTorch 1.8-1.10) and they count from 0 at the capture's start: what was allocated *above* it.
    """

    gpu: int
    source: str  # in words: "PyTorch [memory] events", "XLA allocator events (GPU_0_bfc)"
    baseline: str  # "absolute" | "capture_start"
    t: np.ndarray  # int64 ps, the trace's clock, sorted
    delta: np.ndarray  # int64 bytes: + allocation, - free
    allocated: np.ndarray  # int64 bytes allocated after the event
    reserved: np.ndarray  # int64 bytes the allocator holds from the driver after the event; -1 unknown
    addr: np.ndarray  # int64 address of the block, -1 unknown (frees are matched to allocations by it)
    op: np.ndarray  # int32 index into ``op_names``: the op the event happened in, -1 unknown
    phase: np.ndarray  # int8 index into MEMORY_PHASES (-1 unknown)
    op_names: list[str] = field(default_factory=list)
    #: the allocator's limit where the format records it (XLA's BFC: in use + available), else None
    limit_bytes: int | None = None
    #: whose time ``t`` is: "host" (when the host recorded the event), or "gpu" (moved to the GPU work the buffers
    #: served: an asynchronous dispatch records them long before the GPU runs it; ``metrics.context``)
    clock: str = "host"
    #: int64 bytes reserved in segments that hold no allocated block after each event: the cache the allocator hands
    #: back whole (``empty_cache()``, or itself before it raises an OOM), so ``reserved - cached`` is what it cannot;
    #: None where the format says nothing of segments (a trace's totals) or they are not followed (expandable segments)
    cached: np.ndarray | None = None
    #: bool per event: an allocation the reader booked as autocast's cached 16-bit copy of an fp32 parameter (its
    #: phase is "parameters": it lives with the weights until the autocast region exits); None where the format
    #: cannot tell (every format but a PyTorch memory snapshot)
    cast_copy: np.ndarray | None = None
    #: bool per event: an allocation the reader booked with the parameters by its lifetime alone (made before the
    #: history's first forward, never freed in it: ``formats.snapshot.reader._held_by_lifetime``) -- no frame says it
    #: is a weight; None where the format cannot tell
    by_lifetime: np.ndarray | None = None
    #: int8 per event: the maker its stack names apart from its phase (index into ``HOLDERS``), -1 none; None where
    #: the format cannot tell
    holder: np.ndarray | None = None
    #: the allocator's least block where ``delta`` holds what each tensor asked for while ``allocated`` counts the
    #: blocks that hold them (a PyTorch snapshot: its entries record the request, its totals the request rounded up
    #: to 512 bytes); 1 where ``delta`` is what the totals count
    block_unit: int = 1
    #: (sorted event indices, bytes): the allocations whose block is not their request rounded up to ``block_unit``
    #: -- a large block left unsplit, live at the dump, which says its bytes; None for none (a few: never per event)
    block_over: tuple[np.ndarray, np.ndarray] | None = None
    #: int64: the bytes each block live at the dump asked for (its request), of the blocks at an address no event of
    #: the history names -- made before the history began and live through all of it; None where the format cannot
    #: tell (every format but a PyTorch memory snapshot).  Not per event (:meth:`head` keeps it whole).  Why: a
    #: forward-only loop with autograd on, dumped before its output is rebound, holds the previous pass's graph to
    #: the dump -- blocks the history never frees, so never seen but here (``job.iterations.earlier_pass_held``).
    held_unseen: np.ndarray | None = None

    def __post_init__(self) -> None:
        # The pairing of blocks with their frees (:meth:`frees`, :meth:`unseen_frees`) reads ``delta`` and ``addr``
        # alone and is kept once made (:meth:`_paired`): both columns are read-only from here, so no update in place
        # can leave it stale -- one raises instead; a history with other columns is a new instance
        # (``dataclasses.replace``: :meth:`head`, the clock moved in ``metrics.context``), paired afresh where asked.
        for col in (self.delta, self.addr):
            col.flags.writeable = False
        self._pairs: dict[str, np.ndarray] = {}

    def __len__(self) -> int:
        return int(self.t.shape[0])

    def _paired(self, key: str, make) -> np.ndarray:  # noqa: ANN001 - a function of (delta, addr)
        """``make(delta, addr)``, made once per history and handed out read-only (callers index it, never write it).
        Why kept: the job and metrics stages ask a snapshot's history for its pairing a dozen times and more (the
        frees 5-10 times, the unseen frees 20-50 per GPU), each pass sorting every address again."""
        got = self._pairs.get(key)
        # kept only for the very columns it was made of, while they stay read-only: a column assigned anew, or made
        # writable again (a copy of the history: ``copy.deepcopy`` makes its arrays writable), is paired afresh
        if (got is not None and got[1] is self.delta and got[2] is self.addr
                and not self.delta.flags.writeable and not self.addr.flags.writeable):
            return got[0]
        out = make(self.delta, self.addr)
        out.flags.writeable = False
        self._pairs[key] = (out, self.delta, self.addr)
        return out

    def before(self, idx: np.ndarray | None = None) -> np.ndarray:
        """The bytes allocated just before each event (of ``idx``; every event where None): its level less its own
        block, in the unit of ``allocated`` (its level less its request left the block's rounding in the level).
        One new array of ``idx``'s length: a whole history's is made in place."""
        out = self.blocks(idx)
        np.subtract(self.allocated if idx is None else self.allocated[self._index(idx)], out, out=out)
        return out

    def blocks(self, idx: np.ndarray | None = None) -> np.ndarray:
        """The bytes of the blocks events ``idx`` (indices or a mask; every event where None) allocate (+) or free
        (-), in the unit of ``allocated``.  Why: a level's parts summed from ``delta`` (its requests) left each
        block's rounding to the remainder, so "held" at a snapshot's peak held every live tensor's rounding (4-byte
        tensors' requests, each in a 512-byte block); summed from here, a part never exceeds its whole, each in one
        unit."""
        at = None if idx is None else self._index(idx)
        out = rounded_blocks(self.delta if at is None else self.delta[at], self.block_unit)
        if self.block_over is not None and self.block_over[0].size and out.size:
            over, size = self.block_over
            if at is None:
                inside = over < out.size  # a history's head (:meth:`head`) keeps the whole's
                out[over[inside]] = size[inside]
            else:
                k = np.minimum(np.searchsorted(over, at), over.size - 1)
                hit = over[k] == at
                out[hit] = size[k[hit]]
        return out

    @staticmethod
    def _index(idx: np.ndarray) -> np.ndarray:
        return np.flatnonzero(idx) if idx.dtype == bool else np.asarray(idx, dtype=np.int64)

    def head(self, n: int) -> "MemoryEvents":
        """The history's first ``n`` events alone: every per-event array cut there, the rest as it is."""
        cut = {f.name: v[:n] for f in fields(self) if f.name not in _WHOLE
               and isinstance(v := getattr(self, f.name), np.ndarray) and v.shape[:1] == self.t.shape}
        return replace(self, **cut)

    def unseen_frees(self) -> np.ndarray:
        """The indices of the frees of blocks the history never allocated: the first event at their address frees.
        Every block an allocator frees it allocated first, so these were made before the history began.

        Read a part of the addresses at a time (:data:`UNSEEN_PARTS`, by the address's bits above the allocator's
        least block, which every address of one block shares): the whole at once held an index, a copy of the
        addresses and ``np.unique``'s sort of them -- ~40 bytes an event beside the read's columns, the reader's peak
        (a 1 GB history: 600 MB read, 438 before; h37-snap60).  Made once per history, read-only (:meth:`_paired`)."""
        return self._paired("unseen", unseen_frees)

    def frees(self) -> np.ndarray:
        """Per event: for an allocation, the index of the free of its block (the next event at its address that
        frees), ``len(self)`` when it is never freed in the capture; -1 for frees (:func:`pair_frees`).  Made once
        per history, read-only (:meth:`_paired`)."""
        return self._paired("frees", pair_frees)


def unseen_frees(delta: np.ndarray, addr: np.ndarray) -> np.ndarray:
    """:meth:`MemoryEvents.unseen_frees` of the history ``delta``, ``addr``."""
    part = address_parts(addr)
    found = [np.zeros(0, np.int64)]
    for p in range(UNSEEN_PARTS):
        at = np.flatnonzero(part == p)
        at = at[(addr[at] >= 0) & (delta[at] != 0)]
        if at.size:
            _, first = np.unique(addr[at], return_index=True)  # a stable sort: each address's first event
            firsts = at[first]
            found.append(firsts[delta[firsts] < 0])
    return np.sort(np.concatenate(found))


def rounded_blocks(delta: np.ndarray, unit: int) -> np.ndarray:
    """``delta`` (requests: + allocated, - freed) as the blocks an allocator whose least block is ``unit`` bytes
    holds them in: each size rounded up to a multiple of ``unit``, at least one; 0 stays 0.  A new array, made in
    place from one copy (a history's column may hold millions of entries)."""
    out = np.abs(delta)
    if unit > 1:
        out += unit - 1
        out //= unit
        np.maximum(out, 1, out=out)
        out *= unit
        out[delta == 0] = 0
    np.negative(out, out=out, where=delta < 0)
    return out


def address_parts(addr: np.ndarray) -> np.ndarray:
    """Per event, which of :data:`UNSEEN_PARTS` parts its address falls in, by its bits above the allocator's least
    block (every address of one block shares them): a uint8 column, built a window at a time (no whole-history int64
    temporary), so a whole-history pass can read one part's events at a time."""
    part = np.empty(addr.size, np.uint8)
    for s in range(0, addr.size, _PART_WINDOW):
        part[s:s + _PART_WINDOW] = (addr[s:s + _PART_WINDOW] >> 9) % UNSEEN_PARTS
    return part


def pair_frees(delta: np.ndarray, addr: np.ndarray) -> np.ndarray:
    """Per event of a memory history (``delta``: bytes, > 0 allocates; ``addr``: -1 none): for an allocation, the
    index of the free of its block (the next event at its address that frees), ``delta.size`` where none follows; -1
    for other events.  One part of the addresses at a time (:func:`address_parts`): the whole history sorted at once
    held an index, the addresses gathered and ``lexsort``'s keys, ~42 bytes an event beside the 8 of the answer --
    asked a dozen times by the job and metrics stages, it set the report's peak above the read's (a 1 GB history:
    581 MB against 450; h37-snap61)."""
    n = delta.size
    out = np.full(n, -1, dtype=np.int64)
    out[delta > 0] = n
    part = address_parts(addr)
    for p in range(UNSEEN_PARTS):
        at = np.flatnonzero(part == p)
        at = at[addr[at] >= 0]
        if at.size < 2:
            continue
        order = at[np.argsort(addr[at], kind="stable")]  # by address, then time (``at`` ascends)
        a = addr[order]
        pair = (a[1:] == a[:-1]) & (delta[order[:-1]] > 0) & (delta[order[1:]] < 0)
        out[order[:-1][pair]] = order[1:][pair]
    return out


@dataclass
class SnapshotBlock:
    """One allocation of a memory snapshot: its size, where it was allocated (stack frames, innermost first)."""

    size: int
    requested: int
    address: int
    frames: list[str]  # "file.py:123 function", innermost first
    state: str = "active_allocated"
    time_ps: int | None = None  # when it was allocated (its trace entry), None unknown
    phase: str = "other"  # MEMORY_PHASES, from its stack
    label: str = ""  # its innermost frame in the user's code
    holder: str = ""  # HOLDERS: the maker its stack names apart from its phase, "" for none


@dataclass(frozen=True)
class LiveStack:
    """The blocks live at a snapshot's dump that one stack allocated: together they say what the job holds memory
    for (``job.kind`` weighs each stack's frames by its bytes, where the history says nothing)."""

    size: int  # bytes of the blocks, together
    blocks: int
    frames: tuple[str, ...]  # "file.py:123 function", innermost first; () for blocks recorded without a stack
    phase: str = "other"  # MEMORY_PHASES, from the stack
    label: str = ""  # its innermost frame in the user's code (in a C++-only stack its autograd node or ATen op)


#: Makers of live memory a snapshot's stacks name across the phases, each with its own fix at an OOM: SDPA's math
#: backend (attention's score matrices, quadratic in the sequence: a fused backend keeps none) and a KV cache (the
#: tokens a generation keeps: neither weights nor activations).
HOLDERS = ("attention_math", "kv_cache")


@dataclass
class OutOfMemory:
    """An allocation the allocator could not serve (a snapshot's ``oom`` trace entry), with what was live then."""

    gpu: int
    requested: int  # bytes asked for
    device_free: int  # bytes the driver had free
    allocated: int  # bytes allocated at that moment, -1 unknown
    reserved: int  # bytes reserved at that moment, -1 unknown
    frames: list[str]  # where it was asked for
    time_ps: int
    live: list[SnapshotBlock] = field(default_factory=list)  # the largest live allocations then, largest first
    #: every live allocation's bytes then, by MEMORY_PHASES (from their stacks)
    live_by_phase: dict[str, int] = field(default_factory=dict)
    #: the innermost frame of the user's code that asked (the frames' first outside the framework)
    label: str = ""
    #: the live bytes whose maker the stacks name apart from their phase -- ``HOLDERS``: SDPA's math backend (the
    #: score matrices it writes and keeps), a KV cache's code -- per holder, by MEMORY_PHASES (inside live_by_phase)
    live_by_holder: dict[str, dict[str, int]] = field(default_factory=dict)


@dataclass
class AllocRetry:
    """The caching allocator gave segments back from inside one of its own allocations (a snapshot's ``segment_free``
    entries whose stack runs through the allocator's ``malloc``, not ``emptyCache``): the driver refused it memory,
    so it released its cache and asked again: the GPU had less than the bytes then reserved plus the request."""

    gpu: int
    time_ps: int  # the first segment given back
    reserved: int  # bytes reserved just before: what the driver would not grow
    released: int  # bytes of the segments given back
    segments: int
    span_ps: int  # first segment given back to the last (each a cudaFree, which synchronizes the device)
    #: the segment asked for again right after (what the driver had refused), None where none follows
    requested: int | None = None


@dataclass
class MemorySnapshot:
    """What a PyTorch allocator snapshot (``torch.cuda.memory._dump_snapshot``) says beyond its events: per GPU the
    segments and blocks at the dump, the OOMs its trace holds, the allocator's settings."""

    #: GPU -> (reserved bytes, allocated bytes, segments, largest free block) at the dump
    state: dict[int, tuple[int, int, int, int]] = field(default_factory=dict)
    #: GPU -> bytes of the segments holding no allocated block at the dump (the cache ``empty_cache()`` hands back)
    cached: dict[int, int] = field(default_factory=dict)
    #: GPU -> its largest live blocks at the dump, largest first
    blocks: dict[int, list[SnapshotBlock]] = field(default_factory=dict)
    #: GPU -> every live block at the dump, grouped by the stack that allocated it, most bytes first (the largest
    #: stacks; their sizes never add up to more than the allocated bytes of ``state``)
    stacks: dict[int, list[LiveStack]] = field(default_factory=dict)
    ooms: list[OutOfMemory] = field(default_factory=list)
    #: the allocator's retries: each run of segments it gave back from inside an allocation (:class:`AllocRetry`)
    retries: list[AllocRetry] = field(default_factory=list)
    #: ``allocator_settings`` (``PYTORCH_CUDA_ALLOC_CONF``, ``expandable_segments`` ...), scalars only
    settings: dict[str, object] = field(default_factory=dict)
    #: when the job's optimizer steps ended (ps, the events' clock), from the snapshot's ``external_annotations``: the
    #: iterations' boundaries where the snapshot has no step markers (what is live at a peak and older than the last
    #: one before it was made by an earlier iteration: held across steps)
    iteration_ends_ps: tuple[int, ...] = ()
    #: when the optimizer's gradient resets (``Optimizer.zero_grad``) ended (ps, the events' clock), from the same
    #: annotations: what a history makes after the last one is the step the dump interrupted (its forward kept for a
    #: backward, the gradients a backward made), set apart from what set-up made before it (weights, state)
    reset_ends_ps: tuple[int, ...] = ()
    #: the allocator's history lost its start (``_record_memory_history(max_entries=N)`` keeps only the last N events):
    #: (entries kept, ms they span, ms the profiler's annotations span -- recorded while the history was on, earlier
    #: than the first kept entry); None where nothing shows a loss
    history_cut: tuple[int, float, float] | None = None
    #: no allocation of the history and no block live at the dump carries a stack frame: the history was recorded
    #: without context (``_record_memory_history(context=None)``; PyTorch 2.0 without ``trace_alloc_record_context``
    #: and no live block): what allocated each byte -- a forward, a backward, an optimizer -- is not in the file
    stackless: bool = False
    #: the history carries no stack but the blocks live at the dump do (``_record_memory_history(context="state")``;
    #: 2.0 without ``trace_alloc_record_context``): what holds memory at the dump is named, what the history made is not
    dump_stacks: bool = False
    #: the GPUs' vendor (``devices``' ``VENDOR``: "AMD", "NVIDIA") as the allocations' C++ frames name the build's
    #: caching allocator (``c10::hip::HIPCachingAllocator`` on ROCm); None where no frame names one (a
    #: ``stacks="python"`` or stackless record): a snapshot records no GPU by name
    vendor: str | None = None
    #: the operating system its Python frames' paths show ("Windows": a drive letter or backslashes), None where they
    #: show none: PyTorch's Windows builds lack what the CUDA driver API gives (expandable segments)
    platform: str | None = None
    #: the allocations' Python frames run through ``nn.DataParallel``'s own files (``pytorch.data_parallel_file``): one
    #: process's replicas of one module on each of its GPUs (what ``memory_imbalance`` fixes by its own means)
    data_parallel: bool = False
    #: GPU -> (blocks its history frees that it never allocated, their bytes, entries of its history), for a GPU whose
    #: history does: it begins after those blocks were made -- its ring buffer (``max_entries``) dropped its oldest
    #: events, or the recording began with the run under way
    begun_late: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    #: GPU -> bytes per maker (``HOLDERS``) of the blocks live at the dump whose address no entry of the history
    #: touches: made before the history began and never freed in it, so live at every event of it -- its peak too
    unseen_by_holder: dict[int, dict[str, int]] = field(default_factory=dict)
    #: GPU -> (the user's line that allocated it, its bytes) -> how many blocks live at the dump so, at an address no
    #: entry of the history touches: made before a history that begins late (a full ring buffer, a late start) and
    #: never freed since.  A leak's earlier passes leave their blocks here: the history shows only its last ones.
    unseen_live: dict[int, dict[tuple[str, int], int]] = field(default_factory=dict)
    #: GPU -> bytes of it in use outside this process's caching allocator when the capacity record beside the snapshot
    #: was taken (``torch.cuda.mem_get_info()``: total - free - the allocator's reserved bytes at the dump): the CUDA
    #: context, NCCL's and other libraries' own buffers, other processes on the GPU; absent where unknown
    outside: dict[int, int] = field(default_factory=dict)


#: What a row of :class:`FlopOps` computes (``FlopOps.kind`` indexes it).
#: The kinds of FLOP work: the matrix units' (a matmul, a convolution, attention's matmuls) and "depthwise" -- a
#: convolution each of whose outputs sums one input channel, which runs on the vector units
#: (``frameworks.aten_flops._conv_kind``): MFU counts the matrix units' kinds only (``MATRIX_FLOP_KINDS``).
#: The one rule of the split: an op's kind is its shapes', never its kernels'.  A convolution with a channel sum is
#: the matrix units' kind whatever ran it -- MIOpen's ``naive_conv_*``, its Winograd or assembly solvers, cuDNN's
#: CUDA-core or FFT engines: work the matrix units could take and did not, which is what a low MFU says (and
#: ``tensor_core_unused`` names for the GEMM-form families -- Winograd, MIOpen's assembly, cuDNN's CUDA-core implicit
#: GEMMs --, not for the direct loops, ``devices.direct_convolution_one``, which it reads by name alone) (h37-conv69).
#: Its kernels change one thing only: its roofline row is rated against the matrix units' peak of its type -- a
#: ceiling (loose) for kernels on the vector units too -- except where they run an algorithm that multiplies less
#: than the op's direct count (``devices.fewer_multiplies_one``: Winograd, FFT): then no compute roof, the bytes' only.
FLOP_KINDS = ("matmul", "conv", "attention", "depthwise")
#: The kinds MFU counts, over the matrix units' peak.
MATRIX_FLOP_KINDS = (0, 1, 2)
#: Their names, as a roofline row says its kind (``metrics.types.GemmRoofline.on_matrix_units``)
MATRIX_FLOP_KIND_NAMES = frozenset(FLOP_KINDS[k] for k in MATRIX_FLOP_KINDS)


@dataclass
class FlopOps:
    """Matmul, convolution and attention work whose FLOPs the trace's own shapes give: one row per op.

    PyTorch (``source="trace shapes"``): one row per call of an ATen op recorded with ``record_shapes``, the
    innermost such op only (``aten::linear`` encloses the ``aten::addmm`` that is counted); ``host_idx`` is its
    host event, and its kernels are those launched inside it.  XLA (``source="hlo"``): one row per HLO
    instruction of a compiled module's entry program (``module``, ``op_name``), from the module's ``Hlo Proto``;
    its kernels carry the same ``hlo_module``/``hlo_op`` (``DeviceEvents.op_text`` ``<module>/<op>:<type>``).
    FLOPs and bytes are per execution; a multiply-add is 2 FLOPs.
    """

    source: str  # "trace shapes" | "hlo"
    flops: np.ndarray  # float64 per execution
    bytes: np.ndarray  # float64: operands and result, each moved once (the roofline's least traffic)
    precision: np.ndarray  # int8 P_* code of the inputs (devices.codes)
    kind: np.ndarray  # int8 index into FLOP_KINDS
    label: list[str]  # per row, readable: "aten::mm bf16 [4096,4096]x[4096,4096]"
    host_idx: np.ndarray  # int64 host event index of the op (PyTorch), -1 for XLA rows
    module: list[str] = field(default_factory=list)  # XLA: the module's name per row (empty for PyTorch)
    op_name: list[str] = field(default_factory=list)  # XLA: the HLO instruction's name per row
    #: the module's executions are not one per step: times an XLA row runs per module execution (while loops
    #: with a known trip count), 1 elsewhere; None means all 1
    repeats: np.ndarray | None = None
    #: XLA: bool per row, inside a ``conditional``'s branch (``lax.cond``): it runs only in the executions that take
    #: that branch, and ``repeats`` counts it as if every one did; None means no row is
    branch: np.ndarray | None = None
    #: float64 per row: the result's bytes (a matmul's output), where the shapes give them (PyTorch); None: unknown
    out_bytes: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.flops.shape[0])


def release_columns(table: object, *columns: str) -> None:
    """Drop ``columns`` of an event table once no later stage reads them (``pipeline.host_metrics``).

    Why: the correlation ids and the step-marker stats are read by the correlation and the step detection
    only, yet stayed alive through the metrics, whose peak is the analysis's (~24 bytes per event on a
    dense capture).  A released column is None, so a stage that still read it fails loudly instead of
    computing on nothing.
    """
    for c in columns:
        setattr(table, c, None)


@dataclass
class HostEvents:
    """Every host event of one host (all threads), one row per event; times in ps on the trace's clock."""

    start: np.ndarray  # int64 ps
    end: np.ndarray
    name: np.ndarray  # index into names (int16, or int32 past 32k names)
    line: np.ndarray  # index into line_names (int16, or int32 past 32k lines)
    # stats, -1 where absent: the narrowest signed int dtype holding every value (int8 .. int64), or a
    # zero-byte read-only broadcast -1 where the stat is absent from the whole capture
    corr: np.ndarray  # correlation_id
    group_id: np.ndarray
    step_num: np.ndarray
    iter_num: np.ndarray
    root: np.ndarray  # _r value
    is_eager: np.ndarray  # 1 / 0 / -1
    names: list[str]
    line_names: list[str]

    def __len__(self) -> int:
        return int(self.start.shape[0])

    def name_mask(self, pred) -> np.ndarray:
        """Bool per event: ``pred(name)`` evaluated once per distinct name.

        Most predicates (eager, loss scaling, XLA markers...) match no name of a given capture: then the
        answer is a zero-filled array without a pass over the events.
        """
        return lookup_mask(self.per_name(pred), self.name)  # a compare per matching name, or a blocked table lookup

    def per_name(self, pred) -> np.ndarray:
        """Bool per name of ``names``: ``pred(name)``, remembered for a named predicate (issue #38).

        Why: the stages ask the same predicates (sync, runtime, launch, blocking calls; the framework's dispatch
        and step markers) several times each, and an Nsight export names every NVTX step apart (``train_step N``:
        235k names on 1 GB), so each ask was a Python call per name.  Only module-level functions and bound methods
        without a closure are remembered: they are pure functions of the name; a lambda is a new object per call
        and may capture state, so it is evaluated each time.  The memo is keyed on the name list's identity and
        length: a new or grown list is evaluated afresh.
        """
        key = _memo_key(pred)
        memo = self.__dict__.get("_per_name_memo")
        stamp = (id(self.names), len(self.names))
        if key is not None and memo is not None and memo[0] == stamp and key in memo[1]:
            return memo[1][key]
        # ``map`` in C, not a generator frame per name (~10% of the test's time over 235 k names); numpy's bool of
        # each answer is Python's ``bool()`` (its truth value)
        per_name = np.fromiter(map(pred, self.names), dtype=bool, count=len(self.names))
        if key is not None:
            if memo is None or memo[0] != stamp:
                memo = (stamp, {})
                self.__dict__["_per_name_memo"] = memo
            per_name.flags.writeable = False  # shared by every later ask
            memo[1][key] = per_name
        return per_name


@dataclass
class Spans:
    """Python spans of the host (PyTorch ``with_stack``'s ``python_function`` events), kept apart from the host
    events: they nest around everything, so they take no part in what the host was doing; the job stage reads them
    for the program's own structure (a serving engine's ``execute_model``, a user's ``train_step``)."""

    start: np.ndarray  # int64 ps
    end: np.ndarray
    name: np.ndarray  # int32 index into ``HostEvents.names`` (one name table for both)
    line: np.ndarray  # int32 index into ``HostEvents.line_names``, -1 for a thread with no host event

    def __len__(self) -> int:
        return int(self.start.shape[0])


#: The name a thread's stretch off the CPU takes among :class:`HostWaits` (a scheduler's trace: Nsight's
#: ``SCHED_EVENTS``): the thread ran no code there -- blocked in the kernel (``poll``, ``read``, ``ioctl``, ``futex``,
#: ``nanosleep``) or preempted -- and the trace does not say which call held it.  Where it is among the names, a
#: thread's time not in such a stretch is time on the CPU.
OFF_CPU = "off the CPU (scheduler trace)"


@dataclass
class HostWaits:
    """The host threads' blocking calls into the operating system (Nsight's OS runtime trace, ``-t osrt``: ``read``,
    ``poll``, ``pthread_cond_wait``, ``getc`` ...), intervals of kind :attr:`kind`, kept apart from the host events: a
    thread inside one waits on the OS (a file, a pipe, the terminal, another thread) and runs no code of its own, and
    the calls nest inside the host events (a ``cudaStreamSynchronize`` waits in ``ioctl``), so they take no part in
    what the host was doing.  What the thread that launches the GPU's next work waited in while the GPU idled is named
    from them (``metrics/breakdown.os_waits_in``)."""

    start: np.ndarray  # int64 ps, by (line, start)
    end: np.ndarray
    name: np.ndarray  # int32 index into ``names``
    line: np.ndarray  # int32 index into ``HostEvents.line_names``, -1 for a thread with no host event
    names: list[str]
    kind: str = "os wait"

    def __len__(self) -> int:
        return int(self.start.shape[0])


@dataclass
class StreamWaits:
    """One GPU's streams' waits on CUDA events: each row a ``cudaStreamWaitEvent`` (the waiting stream, an index into
    the GPU's ``DeviceEvents.stream_names``, and its call, a host event index) and the ``cudaEventRecord`` it waits
    for (the recording stream, -1 where that stream ran no work of the GPU, and its call, -1 where the trace lacks it).

    Why: the work a stream queues after a wait runs after all the recording stream's work queued before the record --
    the order a program sets between its copy and compute streams, which no timestamp shows.  It says which copies a
    kernel needed (``metrics.breakdown.copies_under_one_time_calls``)."""

    stream: np.ndarray  # int64 index into the GPU's stream_names
    call: np.ndarray  # int64 host event index of the wait call
    rec_stream: np.ndarray  # int64 index into the GPU's stream_names, -1
    rec_call: np.ndarray  # int64 host event index of the record call, -1

    def __len__(self) -> int:
        return int(self.stream.shape[0])

    def awaited(self, stream: int, before: int, call_start: np.ndarray) -> dict[int, int]:
        """Stream -> the host time before which the work queued on that stream runs before the work ``stream``
        queues at ``before`` (``call_start``: the host events' start times, the calls' clock): ``stream`` itself up
        to ``before``, each stream it waited on before then up to that wait's record, and so on along the chain.

        Why: a wait orders the waiting stream after the recording stream's work queued before the record, and that
        stream may itself have waited on a third before recording (a relay: PyTorch's ``wait_stream`` from a side
        stream that waited on the copy stream) -- the order is transitive, so one hop misses the copies a kernel
        needs through two.  Each stream keeps its latest time: a time only grows, and each round follows one hop
        more, so the walk ends within as many rounds as there are streams, whatever cycles the waits make."""
        ok = (self.call >= 0) & (self.rec_call >= 0) & (self.rec_stream >= 0)
        ws, rs = self.stream[ok], self.rec_stream[ok]
        tw, tr = call_start[self.call[ok]].astype(np.int64), call_start[self.rec_call[ok]].astype(np.int64)
        due = {int(stream): int(before)}
        for _ in range(len(set(ws.tolist()) | set(rs.tolist())) + 1):
            grown = False
            for s, t in list(due.items()):
                sel = (ws == s) & (tw < t)
                for r, at in zip(rs[sel].tolist(), tr[sel].tolist()):
                    if r not in due or at > due[r]:
                        due[r], grown = at, True
            if not grown:
                break
        return due


#: The kinds of CUDA stream a format may state (``DeviceEvents.stream_kinds``).  The legacy default stream (CUDA's
#: NULL stream, ``cudaStreamLegacy``) orders itself against every blocking stream of its context; a per-thread
#: default stream (``--default-stream per-thread``, ``cudaStreamPerThread``) and a stream created
#: ``cudaStreamNonBlocking`` do not; a stream created with the default flags (``cudaStreamCreate``) is blocking.
STREAM_LEGACY_DEFAULT = "legacy_default"
STREAM_PER_THREAD_DEFAULT = "per_thread_default"
STREAM_BLOCKING = "blocking"
STREAM_NON_BLOCKING = "non_blocking"
STREAM_KINDS = (STREAM_LEGACY_DEFAULT, STREAM_PER_THREAD_DEFAULT, STREAM_BLOCKING, STREAM_NON_BLOCKING)


@dataclass
class DeviceEvents:
    """Every activity event of one GPU (kernels, copies, memsets, collectives on all its streams), sorted by start."""

    gpu: int
    info: DeviceInfo
    names: list[str]  # event names: ``name`` indexes them
    strings: list[str]  # text of string-id columns (``shape_sid``, ``long_name_sid``)
    start: np.ndarray
    end: np.ndarray
    name: np.ndarray  # index into names (int16, or int32 past 32k names)
    kind: np.ndarray  # kernel_classes KIND_*
    stream: np.ndarray  # index into stream_names (int8 or wider)
    stream_names: list[str]
    corr: np.ndarray  # correlation_id, -1 (int32, or int64 where ids do not fit)
    group_id: np.ndarray  # -1 where absent; narrow, or a zero-byte broadcast -1 (also shape_sid, long_name_sid)
    op_text: list[str]  # resolved op names: `tf_op` stat strings, HLO ops, TF 2.4 `TensorFlow Ops` line names
    op_idx: np.ndarray  # index into op_text, -1 = unknown (int16, or wider when op_text is long)
    # the events a copy size or sync flag is known for, and those: a few per step where every event had both
    # columns, 5 bytes each (8 MB on a dense 100 MB capture); read through ``mem_bytes`` / ``mem_sync``
    copy_idx: np.ndarray  # int32 event indices, ascending
    copy_bytes: np.ndarray  # memcpy size, -1 unknown (the narrowest int dtype holding the sizes)
    copy_sync: np.ndarray  # int8: 1 sync, 0 async, -1 unknown
    shape_sid: np.ndarray  # string id of the op's shapes (XPlane `shape` stat), -1
    long_name_sid: np.ndarray = None  # string id of the XLA op text (`long_name` stat) (XLA ops: "%x = f16[8,128]{1,0} dot(...)")
    graph_id: np.ndarray = None  # `cuda_graph_id` of kernels launched inside a CUDA graph (XLA command buffer), -1
    # each event's launch configuration (:meth:`launch_columns`): an index into ``launch_table`` in the narrowest int
    # dtype, -1 where the file records none (a zero-byte broadcast where no event has one).  A kernel repeats a few
    # configurations (1-2 bytes an event, against 12 for its own blocks and threads: 240 MB at 1 GB of dense XPlane)
    launch_cfg: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))
    launch_table: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int32))  # (blocks x*y*z, threads)
    #: int8 per ``copy_idx`` event: 1 a copy to or from pageable host memory, 0 another host memory (pinned, managed),
    #: -1 unknown -- where the format records the memory kinds apart from the name (XPlane's ``memcpy_details``
    #: ``kind_src:pageable``); empty where none does (Kineto and Nsight name them: ``Memcpy HtoD (Pageable -> Device)``)
    copy_host: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))
    #: the index into ``stream_names`` of the stream that holds the events whose stream the file did not record (a
    #: rocprofv3 copy trace with no ``Stream_Id`` or ``Queue_Id`` column, an nvprof CSV row with no ``Stream`` cell),
    #: -1 where every event's stream is recorded.  Why: a reader that filled such a stream with a number (queue 0)
    #: made a stream no kernel ran on, and the copies on it read as on a stream of their own (h37-review61b's Left 1)
    stream_unrecorded: int = -1
    #: the kind of each stream (an index into ``stream_names``) the file states -- one of :data:`STREAM_KINDS`:
    #: Nsight's ``TARGET_INFO_CUDA_STREAM.flag`` (CUPTI's ``CUpti_ActivityStream.flag``); empty where the format says
    #: none (Kineto's ``stream`` is CUPTI's number alone, XPlane's and ROCm's lines name no kind).  Why: work on the
    #: legacy default stream waits for all work queued before it on the context's blocking streams and makes their
    #: later work wait for it, an order no timestamp shows; which stream is that one is the format's to say, never a
    #: number's (CUPTI gave it id 7 in one process and 15 in the next of the same job: h37-stream70)
    stream_kinds: dict[int, str] = field(default_factory=dict)
    #: the CUDA context each stream (an index into ``stream_names``) was created in, as a number per GPU (streams of
    #: one context share it) where the file states it (Nsight's ``TARGET_INFO_CUDA_STREAM.contextId``, per process);
    #: empty where it states none -- the GPU's streams then taken as one context's.  Why: the legacy default stream's
    #: order holds within its own context; a second process or context on the GPU runs beside it unordered
    #: (h37-stream70's Left 3, h37-copy71)
    stream_contexts: dict[int, int] = field(default_factory=dict)
    #: :meth:`busy`'s answer with the columns it was made from (start, end), compared by identity
    _busy: tuple | None = field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        return int(self.start.shape[0])

    def legacy_ordered(self, a: int, b: int) -> bool:
        """Whether the legacy default stream orders streams ``a`` and ``b`` (indices into ``stream_names``) against
        each other, as the file states their kinds (:attr:`stream_kinds`) and contexts (:attr:`stream_contexts`): two
        streams of one context, one the legacy default stream and the other it, a blocking one or a per-thread
        default one.  False where a kind is not stated, for a non-blocking stream, and between a per-thread default
        stream and a blocking one (it synchronises with the legacy default stream only: CUDA's "Stream
        synchronization behavior"); a stream of no stated context is the one context's the others of none share.

        Why here, the one home of the rule: the order is CUDA's semantics of the kinds the format states, read by the
        copies' reading (``metrics.memcpy._copy_streams``: a copy's stream tied to a kernels' stream) and the
        handoffs' (``metrics.breakdown``: the pair of streams a handoff crossed) alike -- each read it by a rule of
        its own before (h37-stream70, h37-copy71, h37-onehome71)."""
        ka, kb = self.stream_kinds.get(int(a)), self.stream_kinds.get(int(b))
        if a == b or ka is None or kb is None:
            return False
        if self.stream_contexts.get(int(a), -1) != self.stream_contexts.get(int(b), -1):
            return False
        tied = (STREAM_LEGACY_DEFAULT, STREAM_BLOCKING, STREAM_PER_THREAD_DEFAULT)
        return STREAM_LEGACY_DEFAULT in (ka, kb) and ka in tied and kb in tied

    def busy(self) -> tuple[np.ndarray, np.ndarray]:
        """(starts, ends), int64 ps, of the stretches this GPU runs any work: the union of all its events (kernels,
        copies, memsets, collectives on every stream), sorted, disjoint and apart (:func:`union_intervals`).

        Made once per GPU and analysis: the job stage (is the GPU idle through a host span), the steps (are the
        bursts iterations) and the metrics (each step's busy time, its gaps, the idle the host's ranges and waits
        fill, the loss scaling's idle, the trips) all read this one union, and each used to merge the GPU's events
        again.  The answer lives with the GPU's columns and is kept with the ``start`` and ``end`` it was read from:
        a table whose times were replaced gets a new one, never a stale one.  Read-only: callers share it."""
        memo = self._busy
        if memo is not None and memo[0] is self.start and memo[1] is self.end:
            return memo[2], memo[3]
        us, ue = union_intervals(self.start.astype(np.int64, copy=False), self.end.astype(np.int64, copy=False))
        us.flags.writeable = ue.flags.writeable = False
        self._busy = (self.start, self.end, us, ue)
        return us, ue

    @staticmethod
    def launch_columns(blocks: np.ndarray, threads: np.ndarray, block: int = 1 << 20) -> dict[str, np.ndarray]:
        """The ``launch_*`` fields from a dense blocks and threads column (-1 where not recorded): the events with a
        grid of at least one block get their (blocks, threads) pair's row of the table (the pairs sorted), the counts
        clipped to int32 (2**31-1 blocks fill any GPU; a block holds at most 1024 threads on every GPU we know).

        A block of events at a time, twice (the pairs, then each event's row): one pass over a whole GPU's kernels
        made ~50 bytes of temporaries a kernel (235 MB on the 1 GB Nsight export's 4.7 M kernels)."""
        blocks, threads = np.asarray(blocks), np.asarray(threads)
        top = np.iinfo(np.int32).max
        span = top + 2  # (blocks, threads + 1) as one int64: threads -1..top, blocks 1..top

        def keys(a: int) -> tuple[np.ndarray, np.ndarray]:
            has = blocks[a : a + block] > 0
            b = np.minimum(blocks[a : a + block][has].astype(np.int64), top)
            return has, b * span + (np.clip(threads[a : a + block][has].astype(np.int64), -1, top) + 1)

        n = blocks.shape[0]
        parts = [np.unique(keys(a)[1]) for a in range(0, n, block)]
        pairs = np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
        if not pairs.size:
            return {"launch_cfg": absent_as_broadcast(np.full(blocks.shape, -1, np.int8))}
        out = np.full(n, -1, dtype=int_dtype(-1, max(len(pairs) - 1, 0)))
        for a in range(0, n, block):
            has, k = keys(a)
            out[a : a + block][has] = np.searchsorted(pairs, k)
        table = np.stack([pairs // span, pairs % span - 1], axis=1).astype(np.int32)
        return {"launch_cfg": absent_as_broadcast(out), "launch_table": table}

    @staticmethod
    def launch_from(has: np.ndarray, cfg: np.ndarray, table: np.ndarray) -> dict[str, np.ndarray]:
        """The ``launch_*`` fields from the events that have a configuration (``has``), their rows (``cfg``) of
        ``table`` ((blocks, threads) int32 pairs, blocks >= 1)."""
        out = np.full(has.shape, -1, dtype=int_dtype(-1, max(len(table) - 1, 0)))
        out[has] = cfg
        return {"launch_cfg": absent_as_broadcast(out), "launch_table": np.asarray(table, np.int32).reshape(-1, 2)}

    def launches(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(event indices ascending, blocks, threads per block) of the events whose launch configuration the file
        records."""
        cfg = self.launch_cfg
        if not len(self.launch_table) or not cfg.size:
            return np.zeros(0, np.intp), np.zeros(0, np.int32), np.zeros(0, np.int32)
        idx = np.flatnonzero(cfg >= 0)
        rows = self.launch_table[cfg[idx]]
        return idx, rows[:, 0], rows[:, 1]

    @staticmethod
    def copy_columns(mem_bytes: np.ndarray, mem_sync: np.ndarray,
                     mem_host: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """The ``copy_*`` fields from a dense size, sync and (optional) host-memory column (-1 where unknown)."""
        known = (mem_bytes >= 0) | (mem_sync >= 0)
        if mem_host is not None:
            known = known | (mem_host >= 0)
        idx = np.flatnonzero(known).astype(np.int32)
        out = {"copy_idx": idx, "copy_bytes": narrowest(np.asarray(mem_bytes[idx], dtype=np.int64)),
               "copy_sync": np.asarray(mem_sync[idx], dtype=np.int8)}
        if mem_host is not None and (mem_host >= 0).any():
            out["copy_host"] = np.asarray(mem_host[idx], dtype=np.int8)
        return out

    @property
    def mem_bytes(self) -> np.ndarray:
        """Memcpy size per event, -1 unknown (a zero-byte broadcast -1 where no event has one)."""
        return self._dense(self.copy_bytes)

    @property
    def mem_sync(self) -> np.ndarray:
        """Per event: 1 sync copy, 0 async, -1 unknown (a zero-byte broadcast -1 where no event says)."""
        return self._dense(self.copy_sync)

    @property
    def mem_host(self) -> np.ndarray:
        """Per event: 1 a copy to or from pageable host memory, 0 another host memory, -1 unknown (``copy_host``)."""
        return self._dense(self.copy_host)

    def _dense(self, values: np.ndarray) -> np.ndarray:
        if not values.size or not (values >= 0).any():
            return np.broadcast_to(values.dtype.type(-1), (len(self),))
        out = np.full(len(self), -1, dtype=values.dtype)
        out[self.copy_idx] = values
        return out

    def string(self, sid: int) -> str | None:
        """The text of string id ``sid`` of a string-id column, None for -1 or an unknown id."""
        return self.strings[sid] if 0 <= sid < len(self.strings) else None


#: how many GPU models :func:`gpus_in_words` names at most
_LISTED_MODELS = 4


def gpus_in_words(names: list[str]) -> str:
    """``Trace.producer["visible_gpus"]``: the GPUs a capture lists, each model once with its count ("8 x NVIDIA
    H200", "NVIDIA A100 80GB PCIe, 2 x Tesla T4"), the first :data:`_LISTED_MODELS` models; "" for none.  The one
    writer of that text (Kineto's ``deviceProperties``, an XPlane's GPU planes); :func:`listed_gpu_models` its one
    reader."""
    counts = {n: names.count(n) for n in dict.fromkeys(names)}
    return ", ".join(f"{c} x {n}" if c > 1 else n for n, c in list(counts.items())[:_LISTED_MODELS])


def listed_gpu_models(listed: str) -> list[str]:
    """The GPU models :func:`gpus_in_words` wrote in ``listed``, each once, counts taken off ("8 x NVIDIA H200" ->
    ["NVIDIA H200"]).  Why one reader: the job stage, the rules and the Kineto reader each took the counts off the
    text with their own expression (h37-review62: four copies, one of them stripping blanks and dropping empties, the
    others not)."""
    return [m.group(2) for n in listed.split(", ") if (m := _LISTED.match(n.strip())) and m.group(2)]


_LISTED = re.compile(r"(\d+ x )?(.*)")


def launch_records(h: HostEvents, idx_t=np.int64) -> IdTable:
    """Correlation id -> the host launch record: the first host event (by index) that carries the id.

    A CUDA graph launch (``cuGraphLaunch``) shares its correlation id with every kernel of the graph, so the
    graph's kernels map to the one launch, as CUPTI records them.
    """
    return IdTable.first_positions(h.corr, idx_t)


def device_launches(h: HostEvents, devs: list["DeviceEvents"], idx_t=np.int64) -> list[np.ndarray]:
    """Per GPU: the host launch record index of each device event (-1 where none)."""
    records = launch_records(h, idx_t)
    return [records.lookup(d.corr) for d in devs]


def line_processes(trace: "Trace") -> np.ndarray | None:
    """Per host line, the process that drives a GPU from it (GPUs that share a line are one process's), -1 for a line of
    no GPU's process; None where the format names no lines per GPU (``Trace.gpu_host_lines`` empty: one process).
    One reading for every stage that judges a process by its own threads (the steps' XLA modules and forward runs, the
    job's forward ranges): the format's own map of each GPU's process to its lines."""
    lines = trace.gpu_host_lines
    if not lines:
        return None
    out = np.full(len(trace.h.line_names), -1, np.int64)
    for k, ls in enumerate(lines.values()):
        ls = np.unique(np.asarray(ls, np.int64))
        joined = np.unique(out[ls])
        out[np.isin(out, joined[joined >= 0])] = k
        out[ls] = k
    return out


def queued_before(d: DeviceEvents, launch: np.ndarray) -> np.ndarray:
    """Per device event of a GPU (``launch``: its :func:`device_launches` row): whether it was launched before the
    window -- it carries a correlation id (CUPTI gives a launch and its work one) that no host call of the window
    carries.  Why one home: a GPU runs only what was launched to it, so such work is the queue the window inherited
    from the steps before it; the job's reading of a window that only drains that queue (``job.kind._queued_before``)
    and the first step's start after it (``steps.place._inherited_end``) read the one answer (h37-review29)."""
    return (launch < 0) & (d.corr >= 0)


#: ``Trace.flops_note`` where the host side records no matmul, convolution or attention op at all: a statement about the
#: ops, not the kernels -- the FLOP count (:mod:`tb_gpu_advisor.metrics.flops`) reads the kernels too, and where matmul
#: kernels ran without such an op (replayed from a CUDA graph, a kernels-only capture) says that instead.
NO_FLOP_OPS_NOTE = "no matmul, convolution or attention op is recorded in the trace"


def contradictions(problems: list[Damage | str]) -> list[str]:
    """The words of the entries of ``problems`` that are records contradicting each other
    (``model.damage.CONTRADICTION``)."""
    return [d.detail for d in map(as_damage, problems) if d.kind == CONTRADICTION]


def unreadable(problems: list[Damage | str]) -> list[str]:
    """The words of the entries of ``problems`` that are records left unread in a file read to its end
    (``model.damage.UNREADABLE``)."""
    return [d.detail for d in map(as_damage, problems) if d.kind == UNREADABLE]


def cuts(problems: list[Damage | str]) -> list[str]:
    """The words of the entries of ``problems`` that are a file cut short: a read that stopped before the file's end
    (``model.damage.CUT``; a plain string, from a trace built by hand, is one)."""
    return [d.detail for d in map(as_damage, problems) if d.kind == CUT]


@dataclass
class Trace:
    """One host file, read: the input of :func:`~tb_gpu_advisor.steps.detect.detect_steps` and the metrics."""

    format: str  # "xplane" | "kineto" | "nsys" | "rpd" | "rocprof" | "rocpd" | "rocprofv3-csv" | "rocprofv3-json" | "snapshot"
    host: str
    path: str
    size_bytes: int
    h: HostEvents
    devices: list[DeviceEvents]  # by GPU id
    num_events: int  # events the file held (all lines, derived ones too)
    #: (earliest start, latest end) in ps over everything the file holds, None when it holds no event
    span_ps: tuple[int, int] | None = None
    #: the profiler's own capture window in ms, when the file records it
    capture_ms: float | None = None
    #: where that window starts on this trace's clock (ps), where the file records it (PyTorch's ``PyTorch Profiler``
    #: span); None: at ``viewer_zero_ps`` with ``capture_ms`` (XPlane, Nsight), else where the events start
    capture_start_ps: int | None = None
    #: the instant, on this trace's clock (ps), that the viewer which opens the file shows as 0 ms.  Every window
    #: a report names (``start_ms`` of steps and trace-viewer links) counts from it, so a link lands where the
    #: viewer draws the step: XPlane's stock trace viewer counts from the capture's start, not from the first
    #: event (which real captures record 7-20 ms later); Perfetto counts a PyTorch trace from its first event.
    viewer_zero_ps: int = 0
    #: that viewer and its 0, in words (``capture.time_base`` of the report)
    time_base: str = ""
    #: this trace's 0 ps on the clock its file counts on, in ns (Kineto: ``baseTimeNanoseconds`` plus the first
    #: event's ``ts``, as a merge of one machine's ranks aligns them): what places another process's file of the same
    #: machine on this trace's clock (``job.peers``); None where the format says no such clock
    clock_ns: int | None = None
    #: per GPU, the format's own step line (TF's derived ``Steps`` line in grouped captures)
    gpu_step_lines: dict[int, StepLine] = field(default_factory=dict)
    #: what the step lines are: (step source id, note in words); None: TF's derived ``Steps`` line
    gpu_step_source: tuple[str, str] | None = None
    #: per GPU, the host lines of the process that drives it (PyTorch ranks merged into one trace): a GPU's
    #: idle time is explained by its own process only.  Empty: every host line drives every GPU.
    gpu_host_lines: dict[int, np.ndarray] = field(default_factory=dict)
    #: step annotations the format defines on the host (PyTorch ``ProfilerStep#N``)
    host_steps: StepMarkers | None = None
    #: per GPU, executions of its most executed compiled module (XLA ``XLA Modules`` line)
    module_runs: list[ModuleRuns] = field(default_factory=list)
    allocator: Allocator = field(default_factory=Allocator)
    #: capture-wide metadata keys the framework detection may look at (``/host:metadata`` stats)
    metadata_keys: frozenset[str] = frozenset()
    #: XLA markers the format holds beyond host event names (``XLA Ops`` line, ``hlo_op`` stat...), as shown
    xla_evidence: list[str] = field(default_factory=list)
    #: the file's damage, one typed record each (``model.damage.Damage``): what the reader could not read (a trace
    #: cut off mid-write), records it skipped in a file read to its end, records read whole that contradict each other
    problems: list[Damage] = field(default_factory=list)
    #: what the reader says of the file that is no damage, for the report's notes (an Nsight export that does not
    #: name its GPU model)
    notes: list[str] = field(default_factory=list)
    #: host event index of a copy op (``aten::to``, ``aten::copy_``) -> the bytes it reads and writes, where the file
    #: records its shapes (PyTorch ``record_shapes``): the most its own work can move (``job.phase``'s first calls)
    copy_op_bytes: dict[int, int] = field(default_factory=dict)
    #: host event index of a collective op -> (bytes of one rank's message, group size or -1), where the file
    #: records them (PyTorch ``record_shapes``): what the collective model's bandwidth is computed from
    collective_messages: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: host event index of a collective op -> (its process group, e.g. "pg 1 (tp)", or None; its sequence number in
    #: that group, or None), where the file records them (PyTorch ``record_param_comms``)
    collective_groups: dict[int, tuple[str | None, int | None]] = field(default_factory=dict)
    #: host event index of a collective op -> the job's global ranks of its process group, sorted, where the file
    #: records them (PyTorch 2.1+ ``record_param_comms``' ``Process Group Ranks``, ``pytorch.collective_members``)
    collective_members: dict[int, tuple[int, ...]] = field(default_factory=dict)
    #: of the copies to a GPU whose copy op records its inputs (PyTorch ``record_shapes``: ``aten::copy_``'s
    #: ``non_blocking``), (how many asked for ``non_blocking=True``, how many in all); None where none records them
    h2d_non_blocking: tuple[int, int] | None = None
    #: ranks of the job the trace belongs to (PyTorch ``distributedInfo.world_size``; the largest NCCL communicator
    #: an Nsight export's NCCL payloads name: the least the world can be), None unknown
    world_size: int | None = None
    #: where :attr:`world_size` was read, in words ("its distributedInfo", "NCCL's communicator")
    world_size_from: str = "its distributedInfo"
    #: GPU id -> the job's global rank that drives it (PyTorch ``distributedInfo.rank``), where the trace says
    gpu_ranks: dict[int, int] = field(default_factory=dict)
    #: where several ranks' files are read as one trace (a node's ranks): the workers whose windows hold no GPU work
    #: -> their job rank (-1 where the file does not say); their host lines are named ``"<worker>: ..."``
    idle_ranks: dict[str, int] = field(default_factory=dict)
    #: where one file records several processes and some ran GPU work (Nsight's multi-process export): each process
    #: whose threads recorded host events (NVTX ranges, runtime calls) but no GPU work of its own, as the report names
    #: it ("python3 (pid 149)") -> its host lines.  A fact of the file, not a rank: a launcher, a loader worker or a rank
    #: whose GPU side went unrecorded alike; ``job.kind`` reads which are the job's ranks from what their ranges name
    host_only_processes: dict[str, np.ndarray] = field(default_factory=dict)
    #: matmul/conv/attention ops with FLOPs from shapes, None where the format gives no shapes
    flop_ops: FlopOps | None = None
    #: why ``flop_ops`` is None or incomplete, in words a user can act on ("record_shapes=False" ...)
    flops_note: str | None = None
    #: XLA collectives from the modules' HLO, keyed like the FLOP rows' kernels (``<module>/<op>``, the op text of
    #: their kernels without ``:<type>``) -> (bytes of one rank's message, group size or -1)
    xla_collectives: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: XLA instructions that convert dtypes, keyed like :attr:`xla_collectives` -> whether converting is all they do
    #: (their fused computation's opcodes: a ``loop_convert_fusion`` may compute a sine in f32 and convert its result
    #: back), from the modules' HLO; an op absent here is not known from it
    xla_casts: dict[str, bool] = field(default_factory=dict)
    #: XLA fusions, keyed like :attr:`xla_collectives` -> the kernel class their fused opcodes state
    #: (``frameworks.xla.fusion_class``: "matmul/conv", "reduction", "elementwise"), from the modules' HLO; a fusion
    #: absent here states none (or no HLO was written)
    xla_fusion_classes: dict[str, str] = field(default_factory=dict)
    #: the user's (and libraries') marked host ranges (Nsight's NVTX), None where the format has none
    ranges: HostRanges | None = None
    #: host event indices (ascending) of the annotations the program marks among its ops where the format keeps them
    #: with the ops rather than as :attr:`ranges` (Kineto's ``user_annotation``: ``record_function``,
    #: ``ProfilerStep#N``); None where the format has none.  What holds the host's time is named from them
    #: (``metrics/breakdown.ranges_in_idle``)
    annotations: np.ndarray | None = None
    #: the framework the file itself shows, for a format several frameworks write (an Nsight export of a PyTorch
    #: job: ATen kernels or ranges), None where the file does not say (``frameworks.detect_trace``)
    framework_hint: str | None = None
    #: what the file says of the program that wrote it, as plain facts the job stage reads (``job/``):
    #: ``torch_version`` where a header states it, ``schema`` ("kineto<1.11": PyTorch 1.8-1.10's categories),
    #: ``grad_mode`` ("inference_mode", "no_grad") where recorded, ``autodiff_modules`` (XLA modules whose HLO holds
    #: a backward pass: ``transpose(jvp(...))`` instruction names), ``dist_backend`` (PyTorch
    #: ``distributedInfo.backend``: "nccl", "gloo"), ``visible_gpus`` (the GPUs the profiled process saw, as Kineto's
    #: ``deviceProperties`` lists them, used or not: "NVIDIA A100 80GB PCIe")
    producer: dict[str, str] = field(default_factory=dict)
    #: the host's Python spans (:class:`Spans`), None where the file has none
    spans: Spans | None = None
    #: host event indices (ascending) of the ops the input pipeline's own functions ran on the threads the step's ops
    #: run on (tf.data's captured functions: ``frameworks.tensorflow.pipeline_function_ops``), where the file tells
    #: them apart; None where it does not.  They are input work, not the step's: no placement to judge
    pipeline_ops: np.ndarray | None = None
    #: the host threads' blocking OS calls (:class:`HostWaits`), None where the file has none
    host_waits: HostWaits | None = None
    #: per GPU, its streams' waits on work recorded on its other streams (:class:`StreamWaits`), where the file
    #: records the links (Nsight's CUDA events); None where it does not: then only a stream's own order is known
    stream_waits: dict[int, StreamWaits] | None = None
    #: per GPU, the allocator's events (:class:`MemoryEvents`), where the file records them
    memory: dict[int, MemoryEvents] = field(default_factory=dict)
    #: GPUs whose allocator events :attr:`memory` holds but that ran no recorded work (no kernel, copy or fill: a
    #: capture whose GPU tracer lost every record), with what the file says of each (Kineto's ``deviceProperties``:
    #: name, memory size, SMs).  The file shows they were there, so their memory is judged against their size; they
    #: are no :attr:`devices` -- those are the GPUs whose work was recorded, and no GPU time is read of these
    memory_devices: dict[int, DeviceInfo] = field(default_factory=dict)
    #: a PyTorch memory snapshot's own facts (segments, OOMs), for a snapshot file
    snapshot: MemorySnapshot | None = None
    #: accelerators whose work the file holds but no reader turns into device events ("4 x TPU v6 Lite",
    #: "MTIA 9 (ARTEMIS)"), as the file names them: their work ran on neither a GPU nor the CPU, and is named so
    unread_devices: tuple[str, ...] = ()
    #: the profiler's own work on the host, (starts, ends) ps sorted by start, where the file records it (Kineto's
    #: ``overhead`` events: CUPTI's ``Activity Buffer Request``); None where it records none.  A program thread that
    #: needs an activity buffer waits for it, so a step holding this time ran slower than the program runs unprofiled
    profiler_overhead: tuple[np.ndarray, np.ndarray] | None = None
    #: per GPU, the spans of ``profiler_overhead`` (indices) that its own process's profiler wrote, where several
    #: processes' captures were read as one (PyTorch ranks merged): a rank's launch waits for its own profiler's
    #: buffer requests only.  Empty: every span is every GPU's (one process)
    profiler_overhead_gpus: dict[int, np.ndarray] = field(default_factory=dict)
    #: where the file is a lossy printing of a fuller capture (TensorFlow's trace viewer JSON of its XPlane): what it is,
    #: in words; "" for a capture read as its profiler wrote it
    printed_from: str = ""
    #: what that printing did not keep that the fuller capture holds and a check needs, each in words ("the GPU's name
    #: and properties (...)"): shown in the trace as missing, so the report says which of its answers it lacks
    not_kept: tuple[str, ...] = ()

    def device(self, gpu: int) -> DeviceEvents | None:
        return next((d for d in self.devices if d.gpu == gpu), None)

    def window_start_ps(self) -> int:
        """Where the profiler's own window starts (ps, this trace's clock): ``capture_start_ps``, else the viewer's 0
        where the file records a window, else where the host's events start (0 without any): no step reaches before
        it."""
        if self.capture_start_ps is not None:
            return int(self.capture_start_ps)
        if self.capture_ms is not None:
            return int(self.viewer_zero_ps)
        return int(self.h.start.min()) if len(self.h) else 0

    def window_end_ps(self) -> int | None:
        """Where the profiler's own window ends (ps, this trace's clock): its start (``capture_start_ps``, else
        ``viewer_zero_ps``) plus ``capture_ms``; None where the file records no window of its own."""
        if self.capture_ms is None:
            return None
        start = self.capture_start_ps if self.capture_start_ps is not None else self.viewer_zero_ps
        return int(start + round(self.capture_ms * 1_000_000_000))


def _memo_key(pred) -> object | None:
    """The key under which :meth:`HostEvents.per_name` may remember ``pred``'s answers, None where it may not:
    a plain function or a bound method whose code is no lambda and captures no closure (a pure test of the name)."""
    func = pred.__func__ if isinstance(pred, types.MethodType) else pred
    if not isinstance(func, types.FunctionType) or func.__closure__ is not None or func.__name__ == "<lambda>":
        return None
    return pred  # a bound method hashes and compares by its object's identity: no id reuse while it is held
