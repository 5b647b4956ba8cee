"""Columnar event tables shared by steps and metrics: host events, and device events per GPU.

Built once per timeline from the reader's arrays (concatenation per line, no
per-event Python).  Host names are re-interned into one table across host
planes (``/host:CPU`` and, in old captures, ``/host:CUPTI``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import kernel_classes as kc
from ..timeline import Plane, Timeline

#: Derived (post-processed) GPU lines: not device activity.
DERIVED_GPU_LINES = {
    "Steps", "TensorFlow Ops", "Framework Ops", "TensorFlow Name Scope", "Framework Name Scope",
    "XLA Modules", "XLA Ops", "Source", "Launch Stats", "XLA TraceMe", "Async XLA Ops",
}
INPUT_EVENT_PREFIXES = ("IteratorGetNext", "IteratorGetNextAsOptional", "MultiDeviceIteratorGetNext")


@dataclass
class HostEvents:
    start: np.ndarray  # int64 ps
    end: np.ndarray
    name: np.ndarray  # int32, index into names
    line: np.ndarray  # int32, index into line_names
    corr: np.ndarray  # correlation_id or -1 (int32 when every id fits, else int64; likewise the next four)
    group_id: np.ndarray
    step_num: np.ndarray
    iter_num: np.ndarray
    root: np.ndarray  # _r value or -1
    is_eager: np.ndarray  # 1 / 0 / -1 (int8)
    names: list[str]
    line_names: list[str]

    def __len__(self) -> int:
        return int(self.start.shape[0])

    def name_mask(self, pred) -> np.ndarray:
        """Bool per event: ``pred(name)`` evaluated once per distinct name."""
        per_name = np.fromiter((bool(pred(n)) for n in self.names), dtype=bool, count=len(self.names))
        return per_name[self.name] if len(self.names) else np.zeros(len(self), dtype=bool)


@dataclass
class DeviceEvents:
    gpu: int
    plane: Plane
    start: np.ndarray
    end: np.ndarray
    name: np.ndarray  # plane-local name id
    kind: np.ndarray  # kernel_classes KIND_*
    stream: np.ndarray  # index into stream_names
    stream_names: list[str]
    corr: np.ndarray
    group_id: np.ndarray
    tf_op: np.ndarray  # plane string id of tf_op stat (or of TF Ops line event name via names: see op_text)
    op_text: list[str]  # resolved op name per event id space: tf_op strings table
    op_idx: np.ndarray  # int32 index into op_text, -1 = unknown
    mem_bytes: np.ndarray  # memcpy size, -1 unknown
    mem_sync: np.ndarray  # 1 sync, 0 async, -1 unknown
    shape_sid: np.ndarray  # plane string id of `shape` stat
    long_name_sid: np.ndarray = None  # plane string id of `long_name` stat (XLA ops: "%x = f16[8,128]{1,0} dot(...)")

    def __len__(self) -> int:
        return int(self.start.shape[0])


def _cat(parts: list[np.ndarray], dtype) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)


#: Sparse host stats, stored as int32 when every value fits (else int64); is_eager (1/0/-1) as int8.
_HOST_STATS = (("corr", "correlation_id", False), ("group_id", "group_id", False), ("step_num", "step_num", True),
               ("iter_num", "iter_num", True), ("root", "_r", True))
_I32 = np.iinfo(np.int32)


def _fits_int32(a: np.ndarray) -> bool:
    return not a.size or (int(a.min()) >= _I32.min and int(a.max()) <= _I32.max)


def _absent_as_broadcast(a: np.ndarray) -> np.ndarray:
    """``a`` itself, or where every value is -1 (a stat absent from the capture) one read-only broadcast -1
    of the same shape and dtype (0 bytes): nothing writes into event table columns."""
    if a.size and int(a.min()) == -1 and int(a.max()) == -1:
        return np.broadcast_to(a.dtype.type(-1), a.shape)
    return a


def host_events(tl: Timeline) -> HostEvents:
    """One table over every host line, filled in place (no per-line copies kept alive, narrow dtypes)."""
    index: dict[str, int] = {}
    line_names: list[str] = []
    lines = []
    for plane in tl.host_planes():
        remap = np.fromiter((index.setdefault(n, len(index)) for n in plane.event_names), dtype=np.int32, count=len(plane.event_names))
        lines.extend((ln, remap) for ln in plane.lines if len(ln))
    total = sum(len(ln) for ln, _ in lines)
    i64 = np.int64
    start = np.empty(total, i64)
    end = np.empty(total, i64)
    name = np.empty(total, np.int32)
    line = np.empty(total, np.int32)
    stats = {k: np.empty(total, np.int32) for k, _, _ in _HOST_STATS}
    is_eager = np.empty(total, np.int8)
    o = 0
    for li, (ln, remap) in enumerate(lines):
        n = len(ln)
        sl = slice(o, o + n)
        line_names.append(ln.name)
        start[sl] = ln.start_ps
        np.add(ln.start_ps, ln.duration_ps, out=end[sl])
        np.take(remap, ln.name_id, out=name[sl])
        line[sl] = li
        for k, stat, inherit in _HOST_STATS:
            v = ln.int_stat(stat, inherit=inherit)
            if stats[k].dtype != i64 and not _fits_int32(v):
                stats[k] = stats[k].astype(i64)
            stats[k][sl] = v
        v = ln.int_stat("is_eager")
        if is_eager.dtype != i64 and not (v.size == 0 or (int(v.min()) >= -128 and int(v.max()) <= 127)):
            is_eager = is_eager.astype(i64)
        is_eager[sl] = v
        del v
        o += n
    names: list[str] = [None] * len(index)  # type: ignore[list-item]
    for n_, i in index.items():
        names[i] = n_
    # stats absent from the whole capture (group_id, is_eager in current TF captures) take no memory
    for k in stats:
        stats[k] = _absent_as_broadcast(stats[k])
    is_eager = _absent_as_broadcast(is_eager)
    return HostEvents(start=start, end=end, name=name, line=line, corr=stats["corr"], group_id=stats["group_id"],
                      step_num=stats["step_num"], iter_num=stats["iter_num"], root=stats["root"], is_eager=is_eager,
                      names=names, line_names=line_names)


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


def _narrow(a: np.ndarray) -> np.ndarray:
    """int32 copy of an int64 id column when every value fits (same values, half the memory)."""
    return a.astype(np.int32) if _fits_int32(a) else a


def device_events(plane: Plane) -> DeviceEvents:
    """All activity lines (streams) of one GPU plane, sorted by start."""
    lines = [ln for ln in plane.lines if len(ln) and ln.name not in DERIVED_GPU_LINES]
    hlo = plane.stat_key("hlo_op") is not None  # XLA GPU kernels (JAX, TF jit_compile) carry hlo_op / hlo_module
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("start", "end", "name", "stream", "corr", "group_id", "tf_op", "mdet", "shape", "long_name",
                                                           "hlo_op", "hlo_module")}
    for si, ln in enumerate(lines):
        parts["start"].append(ln.start_ps)
        parts["end"].append(ln.end_ps)
        parts["name"].append(ln.name_id)
        parts["stream"].append(np.full(len(ln), si, dtype=np.int32))
        parts["corr"].append(ln.int_stat("correlation_id", inherit=False))
        parts["group_id"].append(ln.int_stat("group_id", inherit=False))
        parts["tf_op"].append(ln.str_stat("tf_op"))
        parts["mdet"].append(ln.str_stat("memcpy_details"))
        parts["shape"].append(ln.str_stat("shape"))
        parts["long_name"].append(ln.str_stat("long_name"))
        if hlo:
            parts["hlo_op"].append(ln.str_stat("hlo_op"))
            parts["hlo_module"].append(ln.str_stat("hlo_module"))
    i64 = np.int64
    start = _cat(parts["start"], i64)
    order = np.argsort(start, kind="stable")
    start = start[order]
    take = lambda k, dt: _cat(parts[k], dt)[order]  # noqa: E731
    narrow = lambda k: _narrow(take(k, i64))  # noqa: E731  -- ids: int32 when they fit
    name = take("name", np.int32)
    kinds_per_name = kc.device_kind(plane.event_names)
    mdet = take("mdet", i64)
    # memcpy details: parse each distinct string once
    uniq, inv = np.unique(mdet, return_inverse=True) if len(mdet) else (np.zeros(0, i64), np.zeros(0, i64))
    size_u, sync_u = _parse_memcpy([plane.string(int(s)) if s >= 0 else None for s in uniq])
    tf_op = narrow("tf_op")
    # op text: tf_op stat strings, else the TF 2.4 `TensorFlow Ops` line event enclosing the kernel
    op_text: list[str] = []
    op_idx = np.full(len(start), -1, dtype=np.int32)
    if (tf_op >= 0).any():
        u, inv2 = np.unique(tf_op, return_inverse=True)
        op_text = [plane.string(int(s)) or "" if s >= 0 else "" for s in u]
        op_idx = inv2.astype(np.int32)
        op_idx[tf_op < 0] = -1
    if hlo:
        _hlo_ops(plane, tf_op, take("hlo_op", i64), take("hlo_module", i64), op_text, op_idx)
    ops_line = plane.line("TensorFlow Ops") or plane.line("Framework Ops")
    end = take("end", i64)
    if ops_line is not None and len(ops_line) and (op_idx < 0).any():
        o = np.argsort(ops_line.start_ps, kind="stable")
        os_, oe, on = ops_line.start_ps[o], ops_line.end_ps[o], ops_line.name_id[o]
        j = np.searchsorted(os_, start, side="right") - 1
        ok = (j >= 0) & (op_idx < 0)
        jj = np.clip(j, 0, None)
        ok &= oe[jj] >= end
        base = len(op_text)
        un, inv3 = np.unique(on, return_inverse=True)
        op_text.extend(plane.event_names[int(x)] for x in un)
        op_idx[ok] = (base + inv3[jj[ok]]).astype(np.int32)
    return DeviceEvents(
        gpu=int(plane.gpu_id), plane=plane, start=start, end=end, name=name, kind=kinds_per_name[name] if len(name) else np.zeros(0, np.int8),
        stream=take("stream", np.int32), stream_names=[ln.name for ln in lines], corr=narrow("corr"),
        group_id=_absent_as_broadcast(narrow("group_id")), tf_op=tf_op, op_text=op_text, op_idx=op_idx,
        mem_bytes=size_u[inv] if len(mdet) else np.zeros(0, i64), mem_sync=sync_u[inv] if len(mdet) else np.zeros(0, np.int8),
        shape_sid=_absent_as_broadcast(narrow("shape")), long_name_sid=_absent_as_broadcast(narrow("long_name")),
    )


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
        op_text.append(f"{module}/{name}:{kc.hlo_op_type(name)}" if module else f"{name}:{kc.hlo_op_type(name)}")
    op_idx[sel] = (base + inv).astype(np.int32)


def all_device_events(tl: Timeline) -> list[DeviceEvents]:
    return [device_events(p) for p in tl.gpu_planes()]


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


def union_intervals(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge intervals into disjoint sorted ones (vectorized)."""
    if start.size == 0:
        return start.copy(), end.copy()
    o = np.argsort(start, kind="stable")
    s, e = start[o], end[o]
    cummax = np.maximum.accumulate(e)
    new = np.ones(s.size, dtype=bool)
    new[1:] = s[1:] > cummax[:-1]
    idx = np.nonzero(new)[0]
    us = s[idx]
    ue = np.maximum.reduceat(cummax, idx) if idx.size else cummax[:0]
    return us, ue


def union_by_key(key: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Merge intervals into disjoint sorted ones separately per ``key`` (vectorized).

    Returns (key, start, end) of the merged intervals, sorted by (key, start).  Intervals of different keys are
    never merged, even when they touch or overlap.
    """
    if start.size == 0:
        return key[:0].copy(), start[:0].copy(), end[:0].copy()
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
