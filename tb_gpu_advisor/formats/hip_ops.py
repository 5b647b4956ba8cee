"""What the readers of AMD's own tracers share (rocmProfileData's ``.rpd``, rocprof's ``results.json``, rocprofv3's
rocpd database): each records HIP calls and the GPU operations they launched with ns times on one clock, and each
turns one GPU's operations into the model's :class:`DeviceEvents` the same way -- one home, so the three cannot drift
apart in how a kernel names its launching op, its stream or its copy columns."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.frameworks import nvtx, pytorch
from tb_gpu_advisor.frameworks.nvtx import framework_shown
from tb_gpu_advisor.model.columns import absent_as_broadcast, int_dtype, narrowest, unique_inverse, unique_strings
from tb_gpu_advisor.model.trace import DeviceEvents, DeviceInfo, HostEvents, HostRanges, Trace
from tb_gpu_advisor.formats.staging import pageable_by_staging


#: rocprofiler-sdk's memory copy operations (``rocprofiler_memory_copy_operation_t``: ``MEMORY_COPY_HOST_TO_DEVICE`` in
#: the rocpd database and newer CSVs, ``HOST_TO_DEVICE`` in older ones) -> roctracer's record names.
COPY_OPS = {"HOST_TO_DEVICE": "CopyHostToDevice", "DEVICE_TO_HOST": "CopyDeviceToHost",
            "DEVICE_TO_DEVICE": "CopyDeviceToDevice", "HOST_TO_HOST": "CopyHostToHost"}
#: A GPU whose model the trace does not give.
GPU_NAME = "AMD GPU (model not recorded)"


def copy_name(op: str) -> str:
    """A rocprofiler-sdk copy operation's name as roctracer's records name it (:data:`COPY_OPS`), else as written."""
    return next((v for k, v in COPY_OPS.items() if op.endswith(k)), op or "(unnamed copy)")


def gpu_named(product: str, vendor: str) -> str:
    """A rocprofiler-sdk agent's product name, its vendor before it where the name does not carry it (``Vega 20`` ->
    ``AMD Vega 20``); unnamed: :data:`GPU_NAME`."""
    if not product:
        return GPU_NAME
    return product if not vendor or vendor.lower() in product.lower().split() else f"{vendor} {product}"


def with_arch(name: str, gfx: str | None) -> str:
    """A marketing name that says only the vendor (``AMD Radeon Graphics``: ROCm's name for some Instinct boards and
    for Radeon APUs alike) with the agent's GFX id after it (``AMD Radeon Graphics (gfx950)``): the architecture the
    capture records, which tells the generation and, with the CU count, the table's models of it (``devices.peaks``)
    -- never a model it does not name."""
    return f"{name} ({gfx})" if name and gfx and devices.amd.named_generically(name) else name


def launch_call_times(launch: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per GPU operation: its launching call's (start, end) on the calls' clock, -1 where no call launched it
    (``launch``: the call's row, -1 none).  Why the end too: whether a copy's call still held the host when its
    transfer began is read off it (:func:`copies_host_side`)."""
    call_start = np.full(launch.size, -1, np.int64)
    call_end = np.full(launch.size, -1, np.int64)
    has = launch >= 0
    call_start[has] = start[launch[has]]
    call_end[has] = end[launch[has]]
    return call_start, call_end


def copies_host_side(gpu: np.ndarray, o_start: np.ndarray, o_end: np.ndarray, op_names: np.ndarray,
                     call_name: list[str], is_copy: np.ndarray, call_start: np.ndarray, tracer: str,
                     notes: list[str], call_end: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(``sync``, ``host_kind``) per GPU operation: 1 where the copy's call blocks the host (``devices.copy_call_sync``
    with the copy's kind, -1 for no copy), and 1 where its timing shows host staging (:func:`formats.staging.pageable_by_staging`: a
    pageable copy), -1 unknown.  ``call_start`` / ``call_end`` are each operation's launching call's start and end on
    the operations' clock (-1 none); ``tracer`` names the tool in the note said where a copy reads as staged.

    A copy whose call returned before its transfer began did not hold the host for it, whatever the call's name: ROCm's
    runtime queues a device-to-device ``hipMemcpy`` and a ``hipMemset`` of device memory without waiting, and its
    tracers cannot tell those by their records (``amd.HOST_FREE_KINDS``); the call's end can (h37-words32).
    A copy whose ``...Async`` call was still running when its transfer began held the host as a blocking call does:
    HIP stages a pageable buffer through a pinned one inside the call, ``hipMemcpyAsync`` or not (as CUDA's API
    synchronization rule says of ``cudaMemcpyAsync`` from pageable memory).  Read by its name alone it was
    asynchronous and of unknown memory, so a staged pageable batch got no pinned-memory fix (h37-copyforms).

    Why one home: AMD's tracers record no host memory kind, and each of their readers read a copy's blocking and staging
    the same way (rocprof v1/v2, rocprofv3's CSV and JSON, rocpd, rocmProfileData)."""
    direction = np.array([devices.copy_direction(str(x)) if c else None for x, c in zip(op_names.tolist(), is_copy.tolist())],
                         dtype=object)  # a kernel dispatch named like a copy is no copy (devices.recorded_kinds)
    # each copy's call asked with the copy's kind, as the ledger books it (a recorded copy of no named direction is
    # ``other``), as CUDA's readers ask; ROCm's record tells no kind that returns at once (``amd.HOST_FREE_KINDS``),
    # the call's own end does (below)
    kind = [devices.nvidia.COPY_KINDS.get(d or "other") for d in direction.tolist()]
    sync = np.array([devices.copy_call_sync(c, k) if c and cp else -1
                     for c, k, cp in zip(call_name, kind, is_copy.tolist())], np.int8)
    if call_end is not None:  # a call that returned before its copy began did not wait for it, whatever its name
        sync[is_copy & (sync == 1) & (call_start >= 0) & (call_end < o_start)] = 0
    held = sync == 1
    if call_end is not None:  # an async call that held the host until its transfer began is read as a blocking one
        held |= is_copy & (call_start >= 0) & (call_end > o_start)
    host_kind = pageable_by_staging(gpu, o_start, o_end, direction, np.where(held, 1, sync), call_start)
    n = int(np.count_nonzero(host_kind == 1))
    if n:
        notes.append(f"{n:,} blocking cop{'y' if n == 1 else 'ies'} between the host and the device held the host "
                     "longer before the transfer began than the transfer took, with no GPU work before it to wait "
                     f"for: host staging, read as pageable host memory ({tracer} records no memory kind)")
    return sync, host_kind


def ps_from(ns: np.ndarray, origin: int) -> np.ndarray:
    """Times in ns on the tracer's clock -> ps from ``origin`` (int64 first: narrow ns would wrap in ps)."""
    out = ns.astype(np.int64, copy=True)
    out -= origin
    out *= 1000
    return out


def device_events(gpu: int, sel: np.ndarray, info: DeviceInfo, queues: np.ndarray, queue_word: str,
                  o_start: np.ndarray, o_end: np.ndarray, op_names: np.ndarray, origin: int, d_corr: np.ndarray,
                  op_of_launch: np.ndarray, h: HostEvents, nbytes: np.ndarray, sync: np.ndarray, graph: np.ndarray,
                  blocks: np.ndarray, threads: np.ndarray, host_kind: np.ndarray, is_copy: np.ndarray,
                  unrecorded: np.ndarray | None = None) -> DeviceEvents:
    """GPU ``gpu``'s operations, rows ``sel`` (in time order) of the reader's per-operation arrays: ``queues`` the
    queue or stream each ran on (named "``queue_word`` N"), ``op_of_launch`` the host event that launched it (-1 for
    none: a kernel-only trace has no host side), ``graph`` its graph id (-1 for none), ``is_copy`` whether the tracer
    recorded it as a copy or fill (its copy section or record type), not a kernel dispatch: the kind follows the record,
    the name saying only the direction (``devices.recorded_kinds``); ``unrecorded`` (None: none) the operations whose
    queue or stream the file did not record: they share one stream named so (``DeviceEvents.stream_unrecorded``)."""
    names, name = unique_strings(op_names[sel])
    stream, stream_names, unknown = _streams(queues[sel], queue_word, None if unrecorded is None else unrecorded[sel])
    op_host = op_of_launch[sel]
    named = h.name[np.maximum(op_host, 0)].astype(np.int64) if len(h) else np.full(op_host.size, -1, np.int64)
    op_ids, op_idx = unique_inverse(np.where(op_host >= 0, named, -1))
    op_text = [pytorch.op_text(h.names[int(i)]) if i >= 0 else "" for i in op_ids.tolist()]
    op_idx = np.where(op_host >= 0, op_idx, -1).astype(int_dtype(-1, len(op_text), floor=np.int16))
    name = narrowest(name.astype(np.int32), np.int16)
    return DeviceEvents(
        gpu=gpu, info=info, names=names, strings=[],
        start=ps_from(o_start[sel], origin), end=ps_from(np.maximum(o_end[sel], o_start[sel]), origin),
        name=name, kind=devices.recorded_kinds(names, name, np.where(is_copy[sel], devices.RECORDED_TRANSFER,
                                                                    devices.RECORDED_KERNEL)),
        stream=narrowest(stream.astype(np.int64)), stream_names=stream_names, stream_unrecorded=unknown,
        corr=narrowest(d_corr[sel], np.int32), group_id=np.broadcast_to(np.int8(-1), sel.shape), op_text=op_text,
        op_idx=op_idx, **DeviceEvents.copy_columns(nbytes[sel], sync[sel], host_kind[sel]),
        shape_sid=np.broadcast_to(np.int8(-1), sel.shape), long_name_sid=np.broadcast_to(np.int8(-1), sel.shape),
        graph_id=absent_as_broadcast(narrowest(graph[sel])),
        **DeviceEvents.launch_columns(blocks[sel], threads[sel]),
    )


def _streams(queues: np.ndarray, queue_word: str, unrecorded: np.ndarray | None) -> tuple[np.ndarray, list[str], int]:
    """(each operation's stream index, the streams' names, the index of the stream of those whose queue the file did
    not record -- -1 where none): the recorded queues numbered in order, the unrecorded ones one stream after them,
    never merged with a recorded queue their filler number might equal."""
    if unrecorded is None or not unrecorded.any():
        uq, stream = unique_inverse(queues)
        return stream, [f"{queue_word} {int(q)}" for q in uq.tolist()], -1
    uq, known = unique_inverse(queues[~unrecorded])
    stream = np.full(queues.shape, uq.size, np.int64)
    stream[~unrecorded] = known
    return stream, [f"{queue_word} {int(q)}" for q in uq.tolist()] + [f"{queue_word} not recorded"], int(uq.size)


def host_events(start: np.ndarray, end: np.ndarray, name_idx: np.ndarray, line: np.ndarray, line_keys: np.ndarray,
                corr: np.ndarray, names: list[str], origin: int) -> HostEvents:
    """The host's calls and roctx ranges, sorted per thread: ``line_keys`` the threads' ``pid << 32 | tid`` keys
    (``line`` indexes them), ``corr`` each call's correlation (-1 for a range).  These tracers record no steps,
    graphs or eager flags: those columns are absent (-1).  A range that carries PyTorch's autograd suffix is named
    without it (:func:`_autograd_names`)."""
    name_idx, names = _autograd_names(name_idx, names)
    minus1 = np.broadcast_to(np.int8(-1), start.shape)
    return HostEvents(start=ps_from(start, origin), end=ps_from(end, origin),
                      name=narrowest(name_idx.astype(np.int32), np.int16),
                      line=line.astype(int_dtype(0, max(line_keys.size, 1), np.int16)),
                      corr=absent_as_broadcast(narrowest(corr, np.int32)), group_id=minus1, step_num=minus1,
                      iter_num=minus1, root=minus1, is_eager=minus1, names=names,
                      line_names=[f"thread {int(k) & 0xFFFFFFFF} (pid {int(k) >> 32})" for k in line_keys.tolist()])


def _autograd_names(name_idx: np.ndarray, names: list[str]) -> tuple[np.ndarray, list[str]]:
    """``names`` with PyTorch's autograd range suffix cut off (``frameworks.nvtx.op_name``: ``aten::mm, seq = 1, op_id
    = 2`` -> ``aten::mm``, ``[pl][profile]run_training_batch, op_id = 4`` -> ``[pl][profile]run_training_batch``), the
    rows of one name after the cut sharing its index.  Why: ``torch.autograd.profiler.emit_nvtx`` on ROCm pushes the
    same text through roctx as through NVTX on CUDA, and every range's own ``op_id`` made each name unique -- a
    Lightning loop's ``run_training_batch`` read by rocprofv3 as no iteration, its job "of an unknown kind", where
    Nsight's reader (``formats.nsys.reader``) cut the suffix off and read training (h37-amd70)."""
    if not any(nvtx.has_op_suffix(n) for n in names):
        return name_idx, names
    cut = [nvtx.op_name(n)[0] if nvtx.has_op_suffix(n) else n for n in names]
    kept = list(dict.fromkeys(cut))
    at = {n: i for i, n in enumerate(kept)}
    remap = np.fromiter((at[n] for n in cut), np.int64, len(cut))
    return remap[np.asarray(name_idx, np.int64)], kept


def roctx_ranges(h: HostEvents, is_range: np.ndarray, source: str) -> HostRanges | None:
    """The user's roctx ranges among the host rows (``is_range``), one domain, those named like a framework's op
    marked as such; None where the trace holds none.  ``source`` says which of the tracer's tables they came from."""
    idx = np.flatnonzero(is_range)
    if not idx.size:
        return None
    op_name = np.fromiter((nvtx.is_op_name(x) for x in h.names), bool, len(h.names))
    return HostRanges(idx=idx, domain=np.zeros(idx.size, np.int16), domains=[""], op=op_name[h.name[idx]],
                      source=source)


def trace_of(fmt: str, host: str, path: str, size: int, h: HostEvents, devs: list[DeviceEvents], notes: list[str],
             ranges: HostRanges | None, time_base: str) -> Trace:
    """The read trace of an AMD tracer's file: its span is what its host calls and GPU operations cover (the tracers
    mark no window of their own) and its viewer counts from the earliest of them."""
    parts = [(int(h.start.min()), int(h.end.max()))] if len(h) else []
    parts += [(int(d.start.min()), int(d.end.max())) for d in devs if len(d)]
    span = (min(a for a, _ in parts), max(b for _, b in parts)) if parts else None
    return Trace(format=fmt, host=host, path=path, size_bytes=size, h=h, devices=devs,
                 num_events=int(len(h) + sum(len(d) for d in devs)), span_ps=span, viewer_zero_ps=0,
                 time_base=time_base, notes=notes, ranges=ranges,
                 framework_hint=framework_shown(h.names, [x for d in devs for x in d.names]))
