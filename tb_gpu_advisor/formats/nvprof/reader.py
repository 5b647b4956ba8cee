"""nvprof's database (``nvprof -o <file>.nvvp``) -> the neutral :class:`~tb_gpu_advisor.model.trace.Trace`.

What is decided here, once, from the database's own conventions (``tables.py`` for the schema), as the Nsight reader
decides it of an export's tables of the same CUPTI records:

* host events are the CUDA runtime and driver calls (``CUPTI_ACTIVITY_KIND_RUNTIME`` / ``_DRIVER``), each named by
  its callback id (``cbids.py``: ``211`` -> ``cudaLaunchKernel``, the version suffix stripped as Nsight's reader
  strips it), and the NVTX ranges (``CUPTI_ACTIVITY_KIND_MARKER``: a start row and an end row sharing their ``id``,
  named by the start's text; instant marks are no range), one line per (``processId``, ``threadId``) -- a marker's
  thread read off its ``objectId``.  Ranges are named as the Nsight reader names NVTX texts (``frameworks.nvtx.op_name``:
  PyTorch's autograd ranges ``embedding, seq = 65`` and PyProf's annotations as the op's name);
* device events are the kernels (``CONCURRENT_KERNEL``, and ``KERNEL`` where nvprof serialized them) -- by their
  demangled names (``common.demangle``: nvprof keeps the symbol, an Nsight export its ``demangledName``) --, copies and
  memsets per GPU (``deviceId``), one stream per ``streamId``; a copy is named as CUPTI names it to PyTorch and to
  the Nsight reader (``Memcpy HtoD (Pageable -> Device)``: CUPTI's memory kinds, numbered from 1 here);
* a device event's launch is the call with the same ``correlationId`` (one database is one process), its op the
  innermost NVTX range around that launch on the launching thread (``model.enclosing``); whether a copy held the host
  is its call's (``devices.copies_call_sync``), as for an export;
* the GPU model is ``CUPTI_ACTIVITY_KIND_DEVICE``'s (name, SMs, compute capability, memory, clock);
* times are re-based to the earliest record, in picoseconds (nvprof records no session start the timeline counts
  from: the Visual Profiler counts from the first record too).

A file that is no SQLite database, one of another schema, cut short or damaged is a clear error
(:class:`NvprofReadError`), never an empty report.
"""

from __future__ import annotations

import os
import struct

import numpy as np

from tb_gpu_advisor.common.demangle import demangle_all
from tb_gpu_advisor.formats import sqlite as tb
from tb_gpu_advisor.formats.launch_links import launch_kinds
from tb_gpu_advisor.formats.hip_ops import device_events, host_events, trace_of
from tb_gpu_advisor.formats.nvprof import cbids, tables as nt
from tb_gpu_advisor.formats.nvprof.layout import session_words, stem
from tb_gpu_advisor.frameworks import nvtx
from tb_gpu_advisor.model.columns import unique_inverse
from tb_gpu_advisor.model.enclosing import innermost_range
from tb_gpu_advisor.model.trace import DeviceInfo, HostRanges, Trace

__all__ = ["NvprofReadError", "read_trace", "TIME_BASE"]

#: Where an nvprof database's times count from (``Trace.time_base``).
TIME_BASE = "ms from the first record of nvprof's database (it records no session start)"
_CALL_COLS = {"cbid": "cbid", "start": "start", "end": "end", "pid": "processId", "tid": "threadId",
              "corr": "correlationId"}
_KERNEL_COLS = {"start": "start", "end": "end", "dev": "deviceId", "stream": "streamId", "corr": "correlationId",
                "name": "name", "gx": "gridX", "gy": "gridY", "gz": "gridZ", "bx": "blockX", "by": "blockY",
                "bz": "blockZ"}
_COPY_COLS = {"start": "start", "end": "end", "dev": "deviceId", "stream": "streamId", "corr": "correlationId",
              "kind": "copyKind", "src": "srcKind", "dst": "dstKind", "bytes": "bytes"}
_SET_COLS = {"start": "start", "end": "end", "dev": "deviceId", "stream": "streamId", "corr": "correlationId",
             "mem": "memoryKind", "bytes": "bytes"}
#: A CUPTI thread id is 32 bits; nvprof writes it signed.
_TID_MASK = 0xFFFFFFFF


class NvprofReadError(ValueError):
    """A file that is no nvprof database, or one that cannot be read."""


def read_trace(path: str, host: str | None = None, ranks: list[str] | None = None) -> Trace:
    """Read one nvprof database into a trace (``ranks`` is not used: each database is one process)."""
    return tb.read_database(path, host, NvprofReadError, "nvprof databases", ".nvvp", _read_local, _stem)


def _read_local(path: str, local: str, size: int, host: str | None) -> Trace:
    if not tb.is_sqlite(local):
        with open(local, "rb") as f:
            session = session_words(f.read(1 << 16), path)
        if session:
            raise NvprofReadError(f"{path}: {session}")
        raise NvprofReadError(f"{path}: not an SQLite file (nvprof's database is the SQLite file nvprof -o "
                              "<file>.nvvp writes)")
    return tb.read_own(path, local, NvprofReadError, nt.is_nvprof,
                       f"an SQLite file, but no nvprof database (none of its tables {', '.join(nt.OWN)})",
                       lambda schema: _read(schema, path, size, host or _stem(path)))


def _stem(path: str) -> str:
    return stem(os.path.basename(path))


def _columns(schema: tb.Schema, table: str, cols: dict[str, str]) -> dict[str, np.ndarray]:
    """The table's integer columns (a column the table lacks reads as -1); a table nvprof did not write, no rows."""
    if table not in schema.tables or not {"start", "end"} <= schema.columns(table):
        return {k: np.zeros(0, np.int64) for k in cols}
    out = tb.int_columns(schema, table, dict(cols))
    return {k: np.asarray(v, dtype=np.int64) for k, v in out.items()}


def _joined(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def _intern(table: dict[str, int], names: list[str], name: str) -> int:
    i = table.get(name)
    if i is None:
        i = table[name] = len(names)
        names.append(name)
    return i


def _call_name(table: tuple[str, ...], cbid: int, api: str) -> str:
    name = table[cbid] if 0 <= cbid < len(table) else ""
    return name or f"{api} call {cbid}"


def _markers(schema: tb.Schema) -> list[tuple[int, int, int, int, int, int]]:
    """NVTX ranges as (start, end, pid, tid, name id, domain id): each start row with its end row of the same ``id``
    (a range left open at the window's end is closed at the last record).  Instant marks are no range."""
    if not schema.has(nt.MARKER, "flags", "timestamp", "id", "objectId", "name"):
        return []
    has_domain = "domain" in schema.columns(nt.MARKER)
    sql = (f'SELECT flags, timestamp, id, objectKind, objectId, name, {"domain" if has_domain else "0"} '
           f'FROM "{nt.MARKER}" WHERE flags & {nt.MARKER_START | nt.MARKER_END} ORDER BY timestamp')
    open_: dict[int, tuple[int, int, int, int, int]] = {}
    out = []
    for flags, ts, mid, kind, obj, name, domain in schema.con.execute(sql):
        if flags & nt.MARKER_START:
            pid, tid = _object_ids(kind, obj)
            open_[mid] = (ts, pid, tid, name or 0, domain or 0)
        elif mid in open_:
            start, pid, tid, name_id, dom = open_.pop(mid)
            out.append((start, max(ts, start), pid, tid, name_id, dom))
    last = max((r[1] for r in out), default=None)
    for start, pid, tid, name_id, dom in open_.values():
        out.append((start, max(start, last if last is not None else start), pid, tid, name_id, dom))
    return out


def _object_ids(kind: int, obj: object) -> tuple[int, int]:
    """(pid, tid) of a marker's ``objectId`` (CUPTI's ``CUpti_ActivityObjectKindId``: little-endian processId,
    threadId); -1 where the record names none."""
    if not isinstance(obj, bytes) or len(obj) < 8 or kind not in (nt.OBJECT_PROCESS, nt.OBJECT_THREAD):
        return -1, -1
    pid, tid = struct.unpack_from("<II", obj)
    return pid, tid if kind == nt.OBJECT_THREAD else -1


def _read(schema: tb.Schema, path: str, size: int, host: str) -> Trace:
    notes: list[str] = []
    names: list[str] = []
    interned: dict[str, int] = {}

    # ---- host calls: runtime, then driver, named by their callback id
    parts = []
    for table, api, ctab in ((nt.RUNTIME, "runtime", cbids.RUNTIME), (nt.DRIVER, "driver", cbids.DRIVER)):
        c = _columns(schema, table, _CALL_COLS)
        ucb, inv = unique_inverse(c["cbid"])
        local = np.array([_intern(interned, names, _call_name(ctab, int(k), api)) for k in ucb.tolist()], np.int64)
        c["name"] = local[inv] if inv.size else np.zeros(0, np.int64)
        c["range"] = np.zeros(c["start"].size, bool)
        c["domain"] = np.zeros(c["start"].size, np.int64)
        del c["cbid"]
        parts.append(c)
    calls = _joined(parts)
    calls["tid"] = calls["tid"] & _TID_MASK

    # ---- NVTX ranges
    marks = _markers(schema)
    m = np.array(marks, np.int64).reshape(-1, 6)
    strings = tb.string_table(schema, m[:, 4], nt.STRINGS, "value", key=nt.STRING_ID) if m.size else {}
    dom_text = tb.string_table(schema, m[:, 5][m[:, 5] > 0], nt.STRINGS, "value", key=nt.STRING_ID) if m.size else {}
    mark_pid = np.where(m[:, 2] >= 0, m[:, 2], calls["pid"][0] if calls["pid"].size else 0)
    is_op_name: dict[int, bool] = {}
    ukeys, kinv = unique_inverse(m[:, 4])
    local = np.empty(ukeys.size, np.int64)
    for j, k in enumerate(ukeys.tolist()):
        name, is_op = nvtx.op_name(strings.get(int(k), "") or "(unnamed NVTX range)")
        local[j] = _intern(interned, names, name)
        is_op_name[int(local[j])] = is_op_name.get(int(local[j]), False) or is_op
    domains = [""]
    dom_of = {0: 0}
    for d in sorted(set(m[:, 5].tolist())):
        if d > 0:
            dom_of[d] = len(domains)
            domains.append(dom_text.get(d) or f"domain {d}")
    ranges = dict(start=m[:, 0], end=m[:, 1], pid=mark_pid, tid=np.where(m[:, 3] >= 0, m[:, 3], 0),
                  corr=np.full(m.shape[0], -1, np.int64), name=local[kinv] if kinv.size else np.zeros(0, np.int64),
                  range=np.ones(m.shape[0], bool),
                  domain=np.array([dom_of[int(d)] for d in m[:, 5].tolist()], np.int64))
    hosts = _joined([calls, ranges])

    # ---- GPU work: kernels, copies, memsets
    kparts = [_columns(schema, t, _KERNEL_COLS) for t in (nt.CONCURRENT_KERNEL, nt.KERNEL)]
    k = _joined(kparts)
    kstr = tb.string_table(schema, k["name"], nt.STRINGS, "value", key=nt.STRING_ID)
    cp = _columns(schema, nt.MEMCPY, _COPY_COLS)
    ms = _columns(schema, nt.MEMSET, _SET_COLS)
    if not hosts["start"].size and not k["start"].size and not cp["start"].size and not ms["start"].size:
        raise NvprofReadError(f"{path}: no events: nvprof's database holds no CUDA call, NVTX range, kernel or copy "
                              "(was the profiler started with --profile-from-start off and never started?)")
    demangled = demangle_all(kstr.values())
    op_names = ([demangled.get(kstr.get(int(i)) or "") or f"kernel {int(i)}" for i in k["name"].tolist()]
                + [_copy_name(int(a), int(b), int(c)) for a, b, c in zip(cp["kind"].tolist(), cp["src"].tolist(),
                                                                         cp["dst"].tolist())]
                + [f"Memset ({nt.MEMORY_KINDS.get(int(x), 'Device')})" for x in ms["mem"].tolist()])
    nk, nc, nm = k["start"].size, cp["start"].size, ms["start"].size
    ops = {c: np.concatenate([k[c], cp[c], ms[c]]) for c in ("start", "end", "dev", "stream", "corr")}
    op_names_arr = np.array(op_names, dtype=object)
    is_copy = np.concatenate([np.zeros(nk, bool), np.ones(nc + nm, bool)])
    nbytes = np.concatenate([np.full(nk, -1, np.int64), cp["bytes"], ms["bytes"]])
    known = (k["gx"] > 0) & (k["bx"] > 0)
    blocks = np.concatenate([np.where(known, np.maximum(k["gx"], 1) * np.maximum(k["gy"], 1) * np.maximum(k["gz"], 1),
                                      -1), np.full(nc + nm, -1, np.int64)])
    threads = np.concatenate([np.where(known, np.maximum(k["bx"], 1) * np.maximum(k["by"], 1) * np.maximum(k["bz"], 1),
                                       -1), np.full(nc + nm, -1, np.int64)])

    # ---- host events, by (thread, start, longer first); calls' correlation ids as they are
    line_key = hosts["pid"] * (1 << 32) + hosts["tid"]
    ulines, line = unique_inverse(line_key)
    order = np.lexsort((hosts["start"] - hosts["end"], hosts["start"], line)) if line.size else np.zeros(0, np.intp)
    hosts = {key: v[order] for key, v in hosts.items()}
    line = line[order]
    origin_parts = [a.min() for a in (hosts["start"], ops["start"]) if a.size]
    origin = int(min(origin_parts))
    is_call = ~hosts["range"]
    call_ids, first_at = np.unique(np.where(is_call, hosts["corr"], -1), return_index=True)
    keep = call_ids > 0  # CUPTI numbers correlations from 1; 0 links nothing
    call_ids, first_at = call_ids[keep], first_at[keep]
    h_corr = np.full(hosts["start"].size, -1, np.int64)
    h_corr[first_at] = np.arange(call_ids.size)
    h = host_events(hosts["start"], np.maximum(hosts["end"], hosts["start"]), hosts["name"], line, ulines, h_corr,
                    names, origin)
    ranges_out = _ranges(h, hosts["range"], hosts["domain"], domains, is_op_name)
    d_corr = np.full(ops["corr"].size, -1, np.int64)
    if call_ids.size:
        j = np.clip(np.searchsorted(call_ids, ops["corr"]), 0, call_ids.size - 1)
        hit = call_ids[j] == ops["corr"]
        d_corr[hit] = j[hit]
    launch = np.where(d_corr >= 0, first_at[np.maximum(d_corr, 0)] if first_at.size else -1, -1)
    op_of_launch = innermost_range(h, hosts["range"], launch)

    call_name = [names[int(h.name[i])] if i >= 0 else "" for i in launch.tolist()]
    kind, sync, graph = launch_kinds(names, call_name, op_names_arr, is_copy, interned, d_corr)
    host_kind = np.full(ops["corr"].size, -1, np.int8)
    info = _gpus(schema)
    devs = []
    for gpu in sorted(set(ops["dev"].tolist())):
        sel = np.flatnonzero(ops["dev"] == gpu)
        sel = sel[np.lexsort((ops["end"][sel], ops["start"][sel]))]
        devs.append(device_events(int(gpu), sel, info.get(int(gpu), DeviceInfo()), ops["stream"], "stream",
                                  ops["start"], ops["end"], op_names_arr, origin, d_corr, op_of_launch, h, nbytes,
                                  sync, graph, blocks, threads, host_kind, is_copy,
                                  ops["stream"] < 0))  # streamId absent or NULL: no stream recorded
    return trace_of("nvprof", host, path, size, h, devs, notes, ranges_out, TIME_BASE)


def _copy_name(kind: int, src: int, dst: int) -> str:
    """A copy as CUPTI names it to PyTorch's profiler and the Nsight reader names it: ``Memcpy HtoD (Pageable ->
    Device)`` (CUPTI's memory kinds, :data:`tables.MEMORY_KINDS`)."""
    direction = nt.COPY_DIRECTION.get(kind)
    base = f"Memcpy {direction}" if direction else "Memcpy"
    a, b = nt.MEMORY_KINDS.get(src), nt.MEMORY_KINDS.get(dst)
    return f"{base} ({a or 'Unknown'} -> {b or 'Unknown'})" if a or b else base


def _ranges(h, is_range: np.ndarray, domain: np.ndarray, domains: list[str],  # noqa: ANN001 - HostEvents
            is_op_name: dict[int, bool]) -> HostRanges | None:
    idx = np.flatnonzero(is_range)
    if not idx.size:
        return None
    op = np.fromiter((is_op_name.get(int(n), False) for n in h.name[idx].tolist()), bool, idx.size)
    return HostRanges(idx=idx, domain=domain[idx].astype(np.int16), domains=domains, op=op,
                      source="NVTX ranges (nvprof's CUPTI_ACTIVITY_KIND_MARKER)")


def _gpus(schema: tb.Schema) -> dict[int, DeviceInfo]:
    """Each GPU by ``id`` (where the table has no such column, by its rows' order) as ``CUPTI_ACTIVITY_KIND_DEVICE``
    describes it."""
    cols = schema.columns(nt.DEVICE)
    if "name" not in cols:
        return {}
    want = [c for c in ("id", "name", "numMultiprocessors", "computeCapabilityMajor", "computeCapabilityMinor",
                        "globalMemorySize", "coreClockRate", "globalMemoryBandwidth") if c in cols]
    rows = [dict(zip(want, r)) for r in schema.con.execute(f'SELECT {", ".join(want)} FROM "{nt.DEVICE}" LIMIT 64')]
    text = tb.string_table(schema, np.array([r["name"] for r in rows if isinstance(r.get("name"), int)], np.int64),
                           nt.STRINGS, "value", key=nt.STRING_ID)

    def num(r: dict, key: str) -> int | None:
        v = r.get(key)
        return v if isinstance(v, int) and v > 0 else None

    out = {}
    for n, r in enumerate(rows):
        major, minor = r.get("computeCapabilityMajor"), r.get("computeCapabilityMinor")
        clock = num(r, "coreClockRate")
        bandwidth = num(r, "globalMemoryBandwidth")
        out[int(r["id"]) if isinstance(r.get("id"), int) else n] = DeviceInfo(
            name=text.get(r["name"]) if isinstance(r.get("name"), int) else None,
            compute_capability=(major, minor) if isinstance(major, int) and isinstance(minor, int) and major > 0
            else None,
            sm_count=num(r, "numMultiprocessors"), memory_bytes=num(r, "globalMemorySize"),
            memory_bandwidth=bandwidth * 1000.0 if bandwidth else None,  # CUPTI: KB/s
            clock_hz=clock * 1000.0 if clock else None)  # CUPTI: kHz
    return out
