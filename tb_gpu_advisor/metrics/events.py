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
    corr: np.ndarray  # correlation_id or -1
    group_id: np.ndarray
    step_num: np.ndarray
    iter_num: np.ndarray
    root: np.ndarray  # _r value or -1
    is_eager: np.ndarray  # 1 / 0 / -1
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


def host_events(tl: Timeline) -> HostEvents:
    names: list[str] = []
    index: dict[str, int] = {}
    line_names: list[str] = []
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("start", "end", "name", "line", "corr", "group_id", "step_num", "iter_num", "root", "is_eager")}
    for plane in tl.host_planes():
        remap = np.fromiter((index.setdefault(n, len(index)) for n in plane.event_names), dtype=np.int32, count=len(plane.event_names))
        for ln in plane.lines:
            if not len(ln):
                continue
            li = len(line_names)
            line_names.append(ln.name)
            cols["start"].append(ln.start_ps)
            cols["end"].append(ln.end_ps)
            cols["name"].append(remap[ln.name_id])
            cols["line"].append(np.full(len(ln), li, dtype=np.int32))
            cols["corr"].append(ln.int_stat("correlation_id", inherit=False))
            cols["group_id"].append(ln.int_stat("group_id", inherit=False))
            cols["step_num"].append(ln.int_stat("step_num"))
            cols["iter_num"].append(ln.int_stat("iter_num"))
            cols["root"].append(ln.int_stat("_r"))
            cols["is_eager"].append(ln.int_stat("is_eager"))
    names = [None] * len(index)  # type: ignore[list-item]
    for n, i in index.items():
        names[i] = n
    i64 = np.int64
    return HostEvents(
        start=_cat(cols["start"], i64), end=_cat(cols["end"], i64), name=_cat(cols["name"], np.int32),
        line=_cat(cols["line"], np.int32), corr=_cat(cols["corr"], i64), group_id=_cat(cols["group_id"], i64),
        step_num=_cat(cols["step_num"], i64), iter_num=_cat(cols["iter_num"], i64), root=_cat(cols["root"], i64),
        is_eager=_cat(cols["is_eager"], i64), names=names, line_names=line_names,
    )


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


def device_events(plane: Plane) -> DeviceEvents:
    """All activity lines (streams) of one GPU plane, sorted by start."""
    lines = [ln for ln in plane.lines if len(ln) and ln.name not in DERIVED_GPU_LINES]
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("start", "end", "name", "stream", "corr", "group_id", "tf_op", "mdet", "shape", "long_name")}
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
    i64 = np.int64
    start = _cat(parts["start"], i64)
    order = np.argsort(start, kind="stable")
    start = start[order]
    take = lambda k, dt: _cat(parts[k], dt)[order]  # noqa: E731
    name = take("name", np.int32)
    kinds_per_name = kc.device_kind(plane.event_names)
    mdet = take("mdet", i64)
    # memcpy details: parse each distinct string once
    uniq, inv = np.unique(mdet, return_inverse=True) if len(mdet) else (np.zeros(0, i64), np.zeros(0, i64))
    size_u, sync_u = _parse_memcpy([plane.string(int(s)) if s >= 0 else None for s in uniq])
    tf_op = take("tf_op", i64)
    # op text: tf_op stat strings, else the TF 2.4 `TensorFlow Ops` line event enclosing the kernel
    op_text: list[str] = []
    op_idx = np.full(len(start), -1, dtype=np.int32)
    if (tf_op >= 0).any():
        u, inv2 = np.unique(tf_op, return_inverse=True)
        op_text = [plane.string(int(s)) or "" if s >= 0 else "" for s in u]
        op_idx = inv2.astype(np.int32)
        op_idx[tf_op < 0] = -1
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
        stream=take("stream", np.int32), stream_names=[ln.name for ln in lines], corr=take("corr", i64),
        group_id=take("group_id", i64), tf_op=tf_op, op_text=op_text, op_idx=op_idx,
        mem_bytes=size_u[inv] if len(mdet) else np.zeros(0, i64), mem_sync=sync_u[inv] if len(mdet) else np.zeros(0, np.int8),
        shape_sid=take("shape", i64), long_name_sid=take("long_name", i64),
    )


def all_device_events(tl: Timeline) -> list[DeviceEvents]:
    return [device_events(p) for p in tl.gpu_planes()]


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
