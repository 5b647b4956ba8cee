"""Columnar event tables shared by steps and metrics: host events, and device events per GPU.

Built once per timeline from the reader's arrays (concatenation per line, no
per-event Python).  Host names are re-interned into one table across host
planes (``/host:CPU`` and, in old captures, ``/host:CUPTI``).

Memory: these tables and the timeline are alive together through the whole
analysis, so ids and stats are stored in the narrowest int dtype that holds
their values (:func:`int_dtype`), stats absent from a capture take no memory,
and the host table takes over the host lines' start and name columns (the
lines keep views of it) instead of holding a second copy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import kernel_classes as kc
from ..idtable import IdTable
from ..memory import release_free_heap
from ..timeline import Line, Plane, Timeline

#: Derived (post-processed) GPU lines: not device activity.
DERIVED_GPU_LINES = {
    "Steps", "TensorFlow Ops", "Framework Ops", "TensorFlow Name Scope", "Framework Name Scope",
    "XLA Modules", "XLA Ops", "Source", "Launch Stats", "XLA TraceMe", "Async XLA Ops",
}


@dataclass
class HostEvents:
    start: np.ndarray  # int64 ps
    end: np.ndarray
    name: np.ndarray  # int32, index into names
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
        per_name = np.fromiter((bool(pred(n)) for n in self.names), dtype=bool, count=len(self.names))
        if not per_name.any():
            return np.zeros(len(self), dtype=bool)
        return np.take(per_name, self.name)  # take: about twice as fast as per_name[self.name]


@dataclass
class DeviceEvents:
    gpu: int
    plane: Plane
    start: np.ndarray
    end: np.ndarray
    name: np.ndarray  # plane-local name id (int16, or int32 past 32k names)
    kind: np.ndarray  # kernel_classes KIND_*
    stream: np.ndarray  # index into stream_names (int8 or wider)
    stream_names: list[str]
    corr: np.ndarray  # correlation_id, -1 (int32, or int64 where ids do not fit)
    group_id: np.ndarray  # -1 where absent; narrow, or a zero-byte broadcast -1 (also shape_sid, long_name_sid)
    op_text: list[str]  # resolved op names: `tf_op` stat strings, HLO ops, TF 2.4 `TensorFlow Ops` line names
    op_idx: np.ndarray  # index into op_text, -1 = unknown (int16, or wider when op_text is long)
    mem_bytes: np.ndarray  # memcpy size, -1 unknown (the narrowest int dtype holding the sizes)
    mem_sync: np.ndarray  # 1 sync, 0 async, -1 unknown
    shape_sid: np.ndarray  # plane string id of `shape` stat
    long_name_sid: np.ndarray = None  # plane string id of `long_name` stat (XLA ops: "%x = f16[8,128]{1,0} dot(...)")
    graph_id: np.ndarray = None  # `cuda_graph_id` of kernels launched inside a CUDA graph (XLA command buffer), -1

    def __len__(self) -> int:
        return int(self.start.shape[0])


def _cat(parts: list[np.ndarray], dtype) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)


#: Sparse host stats: (HostEvents field, stat name, inherit from the event metadata).
_HOST_STATS = (("corr", "correlation_id", False), ("group_id", "group_id", False), ("step_num", "step_num", True),
               ("iter_num", "iter_num", True), ("root", "_r", True), ("is_eager", "is_eager", True))
_INT_DTYPES = (np.int8, np.int16, np.int32, np.int64)


def int_dtype(lo: int, hi: int, floor=np.int8) -> np.dtype:
    """The narrowest signed int dtype (not narrower than ``floor``) holding every value in [lo, hi].

    Per-event id and stat columns are the bulk of the analysis's memory: a step number or a line index
    needs 1 or 2 bytes, not 8.
    """
    for dt in _INT_DTYPES[_INT_DTYPES.index(floor):]:
        info = np.iinfo(dt)
        if info.min <= lo and hi <= info.max:
            return np.dtype(dt)
    return np.dtype(np.int64)


def _absent_as_broadcast(a: np.ndarray) -> np.ndarray:
    """``a`` itself, or where every value is -1 (a stat absent from the capture) one read-only broadcast -1
    of the same shape and dtype (0 bytes): nothing writes into event table columns."""
    if a.size and int(a.min()) == -1 and int(a.max()) == -1:
        return np.broadcast_to(a.dtype.type(-1), a.shape)
    return a


def _host_lines(tl: Timeline) -> tuple[list[tuple[Line, np.ndarray | None]], list[str]]:
    """Non-empty host lines with their name remap into one name table across host planes (None: identity),
    and that table."""
    index: dict[str, int] = {}
    lines: list[tuple[Line, np.ndarray | None]] = []
    for plane in tl.host_planes():
        remap = np.fromiter((index.setdefault(n, len(index)) for n in plane.event_names), dtype=np.int32, count=len(plane.event_names))
        identity = bool((remap == np.arange(remap.size)).all())
        lines.extend((ln, None if identity else remap) for ln in plane.lines if len(ln))
    names: list[str] = [None] * len(index)  # type: ignore[list-item]
    for n_, i in index.items():
        names[i] = n_
    return lines, names


def _put_narrow(col: np.ndarray, sl: slice, v: np.ndarray) -> np.ndarray:
    """``col[sl] = v``, first widening ``col`` (a copy) when ``v`` holds values its dtype cannot."""
    if v.size:
        dt = int_dtype(int(v.min()), int(v.max()), floor=np.dtype(col.dtype).type)
        if dt != col.dtype:
            col = col.astype(dt)
    col[sl] = v
    return col


#: Lines at least this long hand their freed columns back to the OS at once when released (``memory.py``):
#: a few hundred microseconds per call, against megabytes that would stay mapped through the analysis.
_TRIM_EVENTS = 1 << 16


def _late_keys(plane: Plane) -> frozenset[int]:
    """Stat keys of ``plane`` that stay on its lines after a release (:data:`..metrics.LATE_LINE_STATS`)."""
    from . import LATE_LINE_STATS

    return frozenset(k for n in LATE_LINE_STATS if (k := plane.stat_key(n)) is not None)


def host_events(tl: Timeline, release: bool = False) -> HostEvents:
    """One table over every host line, filled in place with narrow dtypes.

    The table takes over the timeline's columns rather than holding a second copy: each host line's
    ``start_ps`` becomes a view of its slice of ``start``, and its ``name_id`` one of ``name`` where the
    name table is the line's own (one host plane, distinct names -- as TensorFlow writes them).  The
    values are the same, so the timeline reads as before; its own arrays are freed.  With ``release``
    (an analysis that owns the timeline) each line's remaining per-event columns are dropped as soon as
    the table holds them (:meth:`Line.release_events`): durations and stats were the timeline's share
    of the analysis's peak memory.
    """
    lines, names = _host_lines(tl)
    total = sum(len(ln) for ln, _ in lines)
    start = np.empty(total, np.int64)
    end = np.empty(total, np.int64)
    name = np.empty(total, np.int32)
    line = np.empty(total, int_dtype(0, len(lines), floor=np.int16))
    stats = {k: np.empty(total, np.int8) for k, _, _ in _HOST_STATS}
    o = 0
    for li, (ln, remap) in enumerate(lines):
        n = len(ln)
        sl = slice(o, o + n)
        start[sl] = ln.start_ps
        np.add(ln.start_ps, ln.duration_ps, out=end[sl])
        if remap is None:
            name[sl] = ln.name_id
        else:
            np.take(remap, ln.name_id, out=name[sl])
        line[sl] = li
        for k, stat, inherit in _HOST_STATS:
            if ln.plane.stat_key(stat) is None:  # not in this plane at all: -1, without building a column
                stats[k][sl] = -1
            else:
                stats[k] = _put_narrow(stats[k], sl, ln.int_stat(stat, inherit=inherit))
        if ln.start_ps.dtype == start.dtype:
            ln.start_ps = start[sl]
        if remap is None and ln.name_id.dtype == name.dtype:
            ln.name_id = name[sl]
        if release:
            ln.release_events(_late_keys(ln.plane))
            if n >= _TRIM_EVENTS:  # the line's freed columns back to the OS before the next line's temporaries
                release_free_heap()
        o += n
    # stats absent from the whole capture (group_id, is_eager in current TF captures) take no memory
    stats = {k: _absent_as_broadcast(v) for k, v in stats.items()}
    return HostEvents(start=start, end=end, name=name, line=line, names=names, line_names=[ln.name for ln, _ in lines], **stats)


def _parse_memcpy(details: list[str | None]) -> tuple[np.ndarray, np.ndarray]:
    size = np.full(len(details), -1, dtype=np.int64)
    sync = np.full(len(details), -1, dtype=np.int8)
    for i, d in enumerate(details):
        if not d:
            continue
        for tok in d.split():
            k, _, v = tok.partition(":")
            if k == "size" and v.isdigit():
                size[i] = int(v)
            elif k == "async" and v in ("0", "1"):
                sync[i] = 1 if v == "0" else 0
    return size, sync


def narrowest(a: np.ndarray, floor=np.int8) -> np.ndarray:
    """``a`` (an int column) in the narrowest dtype holding its values (:func:`int_dtype`); ``a`` itself if it is."""
    if not a.size:
        return a
    return a.astype(int_dtype(int(a.min()), int(a.max()), floor), copy=False)


def device_events(plane: Plane, release: bool = False) -> DeviceEvents:
    """All activity lines (streams) of one GPU plane, sorted by start; id and stat columns in narrow dtypes.

    With ``release`` the streams' own columns are dropped once the table holds them (see
    :func:`host_events`); derived lines (``Steps``, ``TensorFlow Ops``, ...) stay: steps and ops read them.
    """
    lines = [ln for ln in plane.lines if len(ln) and ln.name not in DERIVED_GPU_LINES]
    i64 = np.int64
    start = _cat([ln.start_ps for ln in lines], i64)
    order = np.argsort(start, kind="stable")
    start = start[order]
    n = start.shape[0]

    def col(get, dtype=i64) -> np.ndarray:
        """One column over every stream, in start order (each built and dropped in turn: a few MB at a time)."""
        return _cat([get(ln) for ln in lines], dtype)[order]

    def stat(name: str, inherit: bool = True) -> np.ndarray:
        if plane.stat_key(name) is None:  # not in this plane at all: a zero-byte -1 column
            return np.broadcast_to(np.int64(-1), (n,))
        return col(lambda ln: ln.int_stat(name, inherit=inherit))

    name = narrowest(col(lambda ln: ln.name_id, np.int32), np.int16)
    end = col(lambda ln: ln.end_ps)
    kinds_per_name = kc.device_kind(plane.event_names)
    mem_bytes, mem_sync = _memcpy_columns(plane, stat("memcpy_details"))
    op_text, op_idx = _op_columns(plane, stat, start, end)
    sdt = int_dtype(0, len(lines))
    stream = _cat([np.full(len(ln), i, dtype=sdt) for i, ln in enumerate(lines)], sdt)[order]
    corr = narrowest(stat("correlation_id", inherit=False), np.int32)
    group_id = _absent_as_broadcast(narrowest(stat("group_id", inherit=False)))
    shape_sid = _absent_as_broadcast(narrowest(stat("shape")))
    long_name_sid = _absent_as_broadcast(narrowest(stat("long_name")))
    graph_id = _absent_as_broadcast(narrowest(stat("cuda_graph_id", inherit=False)))
    if release:
        for ln in lines:
            ln.release_events()
    return DeviceEvents(
        gpu=int(plane.gpu_id), plane=plane, start=start, end=end, name=name, kind=kinds_per_name[name] if n else np.zeros(0, np.int8),
        stream=stream, stream_names=[ln.name for ln in lines], corr=corr, group_id=group_id, op_text=op_text, op_idx=op_idx,
        mem_bytes=mem_bytes, mem_sync=mem_sync, shape_sid=shape_sid, long_name_sid=long_name_sid, graph_id=graph_id,
    )


def _memcpy_columns(plane: Plane, mdet: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(bytes, sync) per event from the ``memcpy_details`` string ids (-1 where unknown): each distinct
    string is parsed once; a zero-byte broadcast -1 pair where no event has details."""
    has = mdet >= 0
    if not has.any():
        return np.broadcast_to(np.int64(-1), mdet.shape), np.broadcast_to(np.int8(-1), mdet.shape)
    u, inv = unique_inverse(mdet[has])
    size_u, sync_u = _parse_memcpy([plane.string(int(s)) for s in u])
    size = np.full(mdet.shape, -1, dtype=int_dtype(-1, int(size_u.max())))
    size[has] = size_u[inv]
    sync = np.full(mdet.shape, -1, dtype=np.int8)
    sync[has] = sync_u[inv]
    return size, sync


def _op_columns(plane: Plane, stat, start: np.ndarray, end: np.ndarray) -> tuple[list[str], np.ndarray]:
    """(op_text, op_idx): each event's TF op name, from its ``tf_op`` stat, its HLO op (XLA GPU kernels), else
    the TF 2.4 ``TensorFlow Ops`` line event enclosing it; op_idx -1 where none.  ``stat(name)``: a string-id
    stat column in event order."""
    tf_op = stat("tf_op")
    op_text: list[str] = []
    op_idx = np.full(start.shape[0], -1, dtype=np.int32)
    if (tf_op >= 0).any():
        u, inv2 = unique_inverse(tf_op)
        op_text = [plane.string(int(s)) or "" if s >= 0 else "" for s in u]
        op_idx = inv2.astype(np.int32)
        op_idx[tf_op < 0] = -1
    if plane.stat_key("hlo_op") is not None:  # XLA GPU kernels (JAX, TF jit_compile) carry hlo_op / hlo_module
        _hlo_ops(plane, tf_op, stat("hlo_op"), stat("hlo_module"), op_text, op_idx)
    del tf_op
    ops_line = plane.line("TensorFlow Ops") or plane.line("Framework Ops")
    if ops_line is not None and len(ops_line) and (op_idx < 0).any():
        o = np.argsort(ops_line.start_ps, kind="stable")
        os_, oe, on = ops_line.start_ps[o], ops_line.end_ps[o], ops_line.name_id[o]
        j = np.searchsorted(os_, start, side="right") - 1
        ok = (j >= 0) & (op_idx < 0)
        jj = np.clip(j, 0, None)
        ok &= oe[jj] >= end
        base = len(op_text)
        un, inv3 = unique_inverse(on)
        op_text.extend(plane.event_names[int(x)] for x in un)
        op_idx[ok] = (base + inv3[jj[ok]]).astype(np.int32)
    return op_text, op_idx.astype(int_dtype(-1, len(op_text), floor=np.int16), copy=False)


def _hlo_ops(plane: Plane, tf_op: np.ndarray, hlo_op: np.ndarray, hlo_module: np.ndarray, op_text: list[str],
             op_idx: np.ndarray) -> None:
    """XLA GPU kernels: the HLO op instead of the module annotation (in place on ``op_text``/``op_idx``).

    On XLA GPU (JAX, TF ``jit_compile``) every kernel's ``tf_op`` is the outermost annotation, the module
    (``XlaModule:``), so all kernels would be one op.  Where ``tf_op`` is that annotation or absent and the
    kernel carries ``hlo_op``, the op becomes ``<hlo_module>/<hlo_op>:<type>`` with the type derived from the
    HLO instruction name (``cublas-gemm.3`` -> ``cublas-gemm``; :func:`kernel_classes.hlo_op_type`), so
    :func:`kernel_classes.op_name` / ``op_type`` and Tensor Core eligibility work unchanged downstream.
    """
    has = hlo_op >= 0
    if not has.any():
        return
    if op_text:
        xla_ann = np.fromiter((kc.is_xla_module_annotation(t) for t in op_text), dtype=bool, count=len(op_text))
        replace = has & ((op_idx < 0) | xla_ann[np.clip(op_idx, 0, None)])
    else:
        replace = has & (op_idx < 0)
    if not replace.any():
        return
    sel = np.nonzero(replace)[0]
    mod = hlo_module[sel]
    key = hlo_op[sel].astype(np.int64) * (int(mod.max()) + 2) + (mod + 1)
    u, inv = np.unique(key, return_inverse=True)
    base = len(op_text)
    for k in u.tolist():
        h, m = divmod(int(k), int(mod.max()) + 2)
        name = plane.string(h) or ""
        module = plane.string(m - 1) if m > 0 else None
        # kernels of an XLA command buffer (a CUDA graph) all carry the buffer's HLO op: say so in the op's name
        label = f"{name} (CUDA graph)" if name.startswith("command_buffer") else name
        op_text.append(f"{module}/{label}:{kc.hlo_op_type(name)}" if module else f"{label}:{kc.hlo_op_type(name)}")
    op_idx[sel] = (base + inv).astype(np.int32)


def launch_records(h: HostEvents, idx_t=np.int64) -> IdTable:
    """Correlation id -> the host launch record: the first host event (by index) that carries the id.

    A CUDA graph launch (``cuGraphLaunch``) shares its correlation id with every kernel of the graph, so the
    graph's kernels map to the one launch, as CUPTI records them.
    """
    hc = np.flatnonzero(h.corr >= 0).astype(idx_t, copy=False)
    return IdTable(h.corr[hc], hc, -1)


def device_launches(h: HostEvents, devs: list["DeviceEvents"], idx_t=np.int64) -> list[np.ndarray]:
    """Per GPU: the host launch record index of each device event (-1 where none)."""
    records = launch_records(h, idx_t)
    return [records.lookup(d.corr) for d in devs]


def all_device_events(tl: Timeline, release: bool = False) -> list[DeviceEvents]:
    """Every GPU's table; with ``release``, freed heap goes back to the OS after each GPU (``memory.py``): the
    streams' columns it frees would otherwise stay mapped under the next GPU's table."""
    out = []
    for p in tl.gpu_planes():
        out.append(device_events(p, release))
        if release:
            release_free_heap()
    return out


def sorted_unique(a: np.ndarray) -> np.ndarray:
    """``np.unique(a)`` for 1-d numeric arrays, by sorting.

    numpy >= 2.3 answers a plain ``np.unique`` with a hash table, which on
    millions of distinct int64 timestamps is ~50x slower than sorting and
    grows faster than linearly (cache misses): the breakdown's segment
    boundaries made the analysis superlinear in the capture size.
    """
    s = np.sort(a, axis=None)
    if s.size < 2:
        return s
    keep = np.empty(s.size, dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def unique_inverse(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(a, return_inverse=True)`` of a 1-d int array, by counting when its values span a range not
    much larger than the array (ids into a names or strings table: the usual case), else by sorting.

    Counting is O(n) against the sort's O(n log n): 4x faster on a GPU's 100k kernels' op ids.
    """
    if a.size:
        lo, hi = int(a.min()), int(a.max())
        if hi - lo < max(4 * a.size, 1 << 16):
            shifted = np.subtract(a, lo, dtype=np.intp)
            present = np.zeros(hi - lo + 1, dtype=bool)
            present[shifted] = True
            rank = np.cumsum(present, dtype=np.intp)
            rank -= 1
            return (np.flatnonzero(present) + lo).astype(a.dtype), np.take(rank, shifted)
    return np.unique(a, return_inverse=True)


def union_intervals(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge intervals into disjoint sorted ones (vectorized)."""
    if start.size == 0:
        return start.copy(), end.copy()
    if (start[1:] >= start[:-1]).all():  # a GPU's events come by start: no sort needed
        s, e = start, end
    else:
        o = np.argsort(start, kind="stable")
        s, e = start[o], end[o]
    cummax = np.maximum.accumulate(e)
    new = np.ones(s.size, dtype=bool)
    new[1:] = s[1:] > cummax[:-1]
    idx = np.nonzero(new)[0]
    us = s[idx]
    ue = np.maximum.reduceat(cummax, idx) if idx.size else cummax[:0]
    return us, ue


def in_key_start_order(key: np.ndarray, start: np.ndarray) -> bool:
    """Rows already sorted by (key, start): ``np.lexsort((start, key))`` -- stable -- would be the identity.

    Two vector passes instead of an O(n log n) sort; events usually come in this order (a host line's
    events by start, a GPU's events by start with their steps rising with time).
    """
    if key.size < 2:
        return True
    same = key[1:] == key[:-1]
    return bool((key[1:] >= key[:-1]).all() and (start[1:] >= start[:-1])[same].all())


def union_by_key(key: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Merge intervals into disjoint sorted ones separately per ``key`` (vectorized).

    Returns (key, start, end) of the merged intervals, sorted by (key, start).  Intervals of different keys are
    never merged, even when they touch or overlap.
    """
    if start.size == 0:
        return key[:0].copy(), start[:0].copy(), end[:0].copy()
    if in_key_start_order(key, start):  # e.g. one GPU's events (by start) keyed by step: no sort needed
        k, s = key, start
        e = np.maximum(end, s)
    else:
        o = np.lexsort((start, key))
        k, s = key[o], start[o]
        e = np.maximum(end[o], s)
    first = np.ones(s.size, dtype=bool)
    first[1:] = k[1:] != k[:-1]
    gstart = np.nonzero(first)[0]
    grp = np.cumsum(first) - 1
    # running max of ends *within* each key: shift each key's values to its own disjoint band so that a
    # previous key's ends can never exceed the next key's (cumulative max stays exact, no Python loop)
    gmin = np.minimum.reduceat(s, gstart)
    gmax = np.maximum.reduceat(e, gstart)
    band = int((gmax - gmin).max()) + 1
    off = grp.astype(np.int64) * band - gmin[grp]
    cm = np.maximum.accumulate(e + off) - off
    new = first.copy()
    new[1:] |= s[1:] > cm[:-1]
    idx = np.nonzero(new)[0]
    return k[idx], s[idx], np.maximum.reduceat(cm, idx)


def coverage(mid: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Bool per point in ``mid``: covered by at least one [start, end) interval."""
    if start.size == 0:
        return np.zeros(mid.shape, dtype=bool)
    s = np.sort(start)
    e = np.sort(end)
    return (np.searchsorted(s, mid, side="right") - np.searchsorted(e, mid, side="right")) > 0
