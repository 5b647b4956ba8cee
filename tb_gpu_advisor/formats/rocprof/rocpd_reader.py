"""rocprofv3's ``rocpd`` database (``rocpd_layout.py`` for its tables) -> the neutral
:class:`~tb_gpu_advisor.model.trace.Trace`.

What is decided here, once, from the database's own conventions:

* host events are ``rocpd_region`` rows whose record's category (``rocpd_event.category_id``) is HIP's
  (``HIP_RUNTIME_API*``, ``HIP_COMPILER_API*``) -- the calls -- or a marker's (``MARKER_*``: roctx ranges, as
  ``Trace.ranges``); the other categories (HSA's, the kernel driver's, RCCL's ...) are the runtime's own layers or
  libraries below the program's calls: left out, counted in the notes.  One line per thread (``rocpd_info_thread``'s
  OS ``tid``);
* device events are ``rocpd_kernel_dispatch`` (named by ``rocpd_info_kernel_symbol``'s ``display_name``, else its
  ``kernel_name``) and ``rocpd_memory_copy`` (named by its operation, ``MEMORY_COPY_HOST_TO_DEVICE`` ..., read as
  roctracer's ``CopyHostToDevice`` ... names), each on its GPU agent's ``type_index`` (a copy on the GPU end of it),
  one stream per ``stream_id``;
* an operation's launch is the HIP call whose record shares its ``stack_id`` (rocprofiler-sdk's correlation id);
* a copy's size is its row's; whether it held the host its call's name (``devices.copy_call_sync``); pageable where the
  timing shows staging (``formats.staging``);
* a kernel's grid is HSA's (``grid_size_*`` in work-items) divided by its workgroup;
* each GPU's model is its agent's ``product_name``, its compute units ``extdata``'s ``cu_count``;
* times are ns re-based to the earliest record, in picoseconds.

A database holding several sessions' guids (merged files) is read for the one with the most GPU work, the others
named in the notes.  A file that is no SQLite database, another schema, one cut short or damaged is a clear error
(:class:`RocpdReadError`).
"""

from __future__ import annotations

import json
import os

import numpy as np

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.formats import sqlite as tb
from tb_gpu_advisor.formats.hip_ops import GPU_NAME, copies_host_side, copy_name, device_events, gpu_named, \
    host_events, launch_call_times, roctx_ranges, trace_of
from tb_gpu_advisor.formats.rocprof.rocpd_layout import guids, is_rocpd
from tb_gpu_advisor.model.columns import unique_inverse
from tb_gpu_advisor.model.damage import attach, unreadable
from tb_gpu_advisor.model.enclosing import innermost_range
from tb_gpu_advisor.model.trace import DeviceInfo, Trace

__all__ = ["RocpdReadError", "read_trace", "TIME_BASE", "GPU_NAME"]

TIME_BASE = "ms from the first record of the rocpd database (the process's start is not its clock's zero)"
#: Region categories read: HIP's calls, and the program's markers.
CALLS = ("HIP_RUNTIME_API", "HIP_COMPILER_API")
MARKERS = ("MARKER_",)


class RocpdReadError(ValueError):
    """A file that is no rocpd database, or one that cannot be read."""


def read_trace(path: str, host: str | None = None, ranks: list[str] | None = None) -> Trace:
    if fsio.is_remote(path):
        raise RocpdReadError(f"{path}: rocpd databases are read from local disk only (SQLite needs a file)")
    local = fsio.local_path(path)
    size = tb.sized_local(path, local, RocpdReadError)
    if not tb.is_sqlite(local):
        raise RocpdReadError(f"{path}: not an SQLite file (a rocpd database is the SQLite file rocprofv3 writes)")
    tb.whole(path, local, RocpdReadError)
    name = os.path.basename(path)
    stem = name.rsplit(".", 1)[0] if "." in name else name
    with tb.read_errors(path, RocpdReadError), tb.open_db(local, lenient=True) as con:
        schema = tb.Schema(con)
        if not is_rocpd(schema.tables):
            raise RocpdReadError(f"{path}: an SQLite file, but no rocpd database (no rocpd_region_<guid>, "
                                 "rocpd_string_<guid> tables)")
        return _read(schema, path, size, host or stem)


def _cols(schema: tb.Schema, table: str, cols: dict[str, str], path: str, need: tuple[str, ...] = ()) -> dict:
    """``cols`` of ``table`` (none where it is absent); a table lacking a column the read ``need``s is an error
    carrying an 'unreadable' record, not a cut: SQLite read its schema whole (a cut file fails ``tb.whole`` first),
    so nothing lies past it -- the table is another version's or trimmed, and its rows cannot be read as events
    (h37-damage68: an error with no record before)."""
    if table not in schema.tables:
        return {k: np.zeros(0, np.int64) for k in cols}
    missing = [c for k, c in cols.items() if k in need and c not in schema.columns(table)]
    if missing:
        why = f"{table} has no column {', '.join(missing)} (rocprofv3 writes it in every rocpd database)"
        raise attach(RocpdReadError(f"{path}: damaged rocpd database: {why}"), unreadable("sqlite_no_such_column", why))
    out = tb.int_columns(schema, table, dict(cols))
    return {k: np.asarray(v, dtype=np.int64) for k, v in out.items()}


def _read(schema: tb.Schema, path: str, size: int, host: str) -> Trace:
    notes: list[str] = []
    found = guids(schema.tables)
    usable = [g for g, have in found.items() if "region" in have and "string" in have]

    def work(g: str) -> int:
        return sum(schema.count(f"rocpd_{t}_{g}") for t in ("kernel_dispatch", "memory_copy"))

    guid = max(usable, key=lambda g: (work(g), g))
    if len(usable) > 1:
        notes.append(f"the database holds {len(usable)} sessions (guids): the one with the most GPU work is read")
    T = {t: f"rocpd_{t}_{guid}" for t in ("region", "string", "event", "kernel_dispatch", "memory_copy",
                                          "info_kernel_symbol", "info_agent", "info_thread")}
    reg = _cols(schema, T["region"], {"id": "id", "tid": "tid", "start": "start", "end": "end", "name": "name_id",
                                      "event": "event_id"}, path, need=("start", "end", "name", "event", "tid"))
    ev = _cols(schema, T["event"], {"id": "id", "cat": "category_id", "stack": "stack_id"}, path)
    kd = _cols(schema, T["kernel_dispatch"], {
        "agent": "agent_id", "kernel": "kernel_id", "stream": "stream_id", "queue": "queue_id", "start": "start",
        "end": "end", "event": "event_id", "wx": "workgroup_size_x", "wy": "workgroup_size_y",
        "wz": "workgroup_size_z", "gx": "grid_size_x", "gy": "grid_size_y", "gz": "grid_size_z"}, path,
        need=("agent", "kernel", "start", "end"))
    mc = _cols(schema, T["memory_copy"], {
        "start": "start", "end": "end", "name": "name_id", "dst": "dst_agent_id", "src": "src_agent_id",
        "size": "size", "stream": "stream_id", "queue": "queue_id", "event": "event_id"}, path,
        need=("start", "end", "name", "size"))
    threads = _cols(schema, T["info_thread"], {"id": "id", "tid": "tid", "pid": "pid"}, path)
    if not reg["id"].size and not kd["start"].size and not mc["start"].size:
        raise RocpdReadError(f"{path}: {_nothing_traced(schema, guid)}")

    # ---- each record's category and correlation (its event row)
    def by_event(ids: np.ndarray, col: str) -> np.ndarray:
        out = np.full(ids.size, -1, np.int64)
        if not ev["id"].size or not ids.size:
            return out
        order = np.argsort(ev["id"], kind="stable")
        keys = ev["id"][order]
        k = np.clip(np.searchsorted(keys, ids), 0, keys.size - 1)
        hit = keys[k] == ids
        out[hit] = ev[col][order][k[hit]]
        return out

    r_cat, r_stack = by_event(reg["event"], "cat"), by_event(reg["event"], "stack")
    strings = tb.string_table(schema, np.concatenate([reg["name"], r_cat, mc["name"]]), T["string"], "string")
    cat_name = np.array([strings.get(int(c), "") for c in r_cat.tolist()], dtype=object)
    is_call = np.array([c.startswith(CALLS) for c in cat_name.tolist()], bool)
    is_range = np.array([c.startswith(MARKERS) for c in cat_name.tolist()], bool)
    keep = is_call | is_range
    if (~keep).any():
        left = sorted({c or "(none)" for c in cat_name[~keep].tolist()})
        notes.append(f"host records of other layers ({int(np.count_nonzero(~keep)):,}: {', '.join(left[:4])}) left "
                     "out: the runtime's own layers and libraries below the program's HIP calls")

    # ---- host events: names, lines (the OS thread), by (line, start, longer first)
    os_tid = dict(zip(threads["id"].tolist(), threads["tid"].tolist()))
    os_pid = dict(zip(threads["id"].tolist(), threads["pid"].tolist()))
    interned: dict[str, int] = {}
    name_idx = np.array([interned.setdefault(strings.get(int(n), "") or "(unnamed)", len(interned))
                         for n in reg["name"][keep].tolist()], np.int64)
    names = list(interned)
    tids = reg["tid"][keep]
    line_key = np.array([(os_pid.get(int(t), 0) << 32) + (os_tid.get(int(t), int(t)) & 0xFFFFFFFF)
                         for t in tids.tolist()], np.int64)
    start, end = reg["start"][keep], np.maximum(reg["end"][keep], reg["start"][keep])
    stack, rng = r_stack[keep], is_range[keep]
    ulines, line = unique_inverse(line_key)
    order = np.lexsort((start - end, start, line)) if line.size else np.zeros(0, np.intp)
    line, name_idx, start, end, stack, rng = (a[order] for a in (line, name_idx, start, end, stack, rng))
    origin = int(min(a.min() for a in (start, kd["start"], mc["start"]) if a.size))
    call_rows = np.flatnonzero(~rng)
    h_corr = np.full(start.size, -1, np.int64)
    h_corr[call_rows] = np.arange(call_rows.size)
    h = host_events(start, end, name_idx, line, ulines, h_corr, names, origin)
    ranges = roctx_ranges(h, rng, "roctx ranges (rocpd markers)")

    # ---- GPU agents
    agents = _agents(schema, T["info_agent"])
    gpu_of = {a: info[0] for a, info in agents.items() if info[0] >= 0}

    # ---- operations: kernels then copies
    sym = _symbols(schema, T["info_kernel_symbol"])
    k_names = [sym.get(int(k), "(unnamed kernel)") for k in kd["kernel"].tolist()]
    c_op = [strings.get(int(n), "") for n in mc["name"].tolist()]
    c_names = [copy_name(o) for o in c_op]
    c_gpu = [gpu_of.get(int(d), gpu_of.get(int(s), 0)) for d, s in zip(mc["dst"].tolist(), mc["src"].tolist())]
    op_names = np.array(k_names + c_names, dtype=object)
    gpu = np.array([gpu_of.get(int(a), 0) for a in kd["agent"].tolist()] + c_gpu, np.int64)
    o_start = np.concatenate([kd["start"], mc["start"]])
    o_end = np.maximum(np.concatenate([kd["end"], mc["end"]]), o_start)
    streams = np.concatenate([kd["stream"], mc["stream"]])
    is_copy = np.concatenate([np.zeros(kd["start"].size, bool), np.ones(mc["start"].size, bool)])
    o_stack = np.concatenate([by_event(kd["event"], "stack"), by_event(mc["event"], "stack")])
    # each operation's launch: the call sharing its stack id (its correlation)
    launch = np.full(o_start.size, -1, np.int64)
    if call_rows.size and o_start.size:
        cs = stack[call_rows]
        order_c = np.argsort(cs, kind="stable")
        keys = cs[order_c]
        k = np.clip(np.searchsorted(keys, o_stack), 0, max(keys.size - 1, 0))
        hit = (o_stack > 0) & (keys[k] == o_stack)
        launch[hit] = call_rows[order_c][k[hit]]
    d_corr = np.where(launch >= 0, h_corr[np.maximum(launch, 0)], -1)
    op_of_launch = innermost_range(h, rng, launch)
    call_name = [names[int(name_idx[i])] if i >= 0 else "" for i in launch.tolist()]
    nbytes = np.concatenate([np.full(kd["start"].size, -1, np.int64), mc["size"]])
    call_start, call_end = launch_call_times(launch, start, end)
    sync, host_kind = copies_host_side(gpu, o_start, o_end, op_names, call_name, is_copy, call_start,
                                               "rocprofv3", notes, call_end)
    blocks = np.full(o_start.size, -1, np.int64)
    threads_n = np.full(o_start.size, -1, np.int64)
    n_k = kd["start"].size
    if n_k:
        w = [np.maximum(kd[c], 1) for c in ("wx", "wy", "wz")]
        g = [np.maximum(kd[c], 1) for c in ("gx", "gy", "gz")]
        known = (kd["gx"] > 0) & (kd["wx"] > 0)
        blocks[:n_k] = np.where(known, (-(-g[0] // w[0])) * (-(-g[1] // w[1])) * (-(-g[2] // w[2])), -1)
        threads_n[:n_k] = np.where(known, w[0] * w[1] * w[2], -1)
    devs = []
    for gid in sorted(set(gpu.tolist())):
        sel = np.flatnonzero(gpu == gid)
        sel = sel[np.lexsort((o_end[sel], o_start[sel]))]
        info = next((i[1] for i in agents.values() if i[0] == gid), None) or DeviceInfo(name=GPU_NAME)
        devs.append(device_events(int(gid), sel, info, streams, "stream", o_start, o_end, op_names, origin, d_corr,
                                  op_of_launch, h, nbytes, sync, np.full(gpu.size, -1, np.int8), blocks, threads_n,
                                  host_kind, is_copy, streams < 0))  # stream_id absent or NULL: no stream recorded
    return trace_of("rocpd", host, path, size, h, devs, notes, ranges, TIME_BASE)


#: How many names an error shows of a list it counts.
_SHOWN = 4


def _shown(names: list[str]) -> str:
    return ", ".join(names[:_SHOWN]) + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")


def _count(names: list[str], noun: str) -> str:
    return f"{len(names)} {noun}" + ("" if len(names) == 1 else "s")


def _nothing_traced(schema: tb.Schema, guid: str) -> str:
    """Why a database with no call, marker or GPU operation holds no timeline, from what it does hold.

    rocprofv3 writes its set-up records (agents, the program's loaded kernels, the counters it was asked for) whatever
    it traces; a run with no tracing option -- a thread trace (``--att``) or a counter collection (``--pmc``) alone,
    whose results go to other files -- leaves every event table empty though the program ran its kernels.  Kernels
    loaded but none launched is that run, not a program that stopped before its first call, and the way out is the
    same option either way."""
    kernels = list(_symbols(schema, f"rocpd_info_kernel_symbol_{guid}").values())
    counters = _counters(schema, f"rocpd_info_pmc_{guid}")
    said = "no events: the rocpd database holds no HIP call, marker or GPU operation"
    if not kernels:
        return said + (" (was rocprofv3 run without --runtime-trace or --kernel-trace, or did the program stop "
                       "before its first call?)")
    why = (f"; it lists the {_count(kernels, 'kernel')} the program loaded ({_shown(kernels)}) and no launch of any: "
           "rocprofv3 traced no API call or kernel")
    if counters:
        why += (f" and set up only {_count(counters, 'counter')} ({_shown(counters)}): a thread trace (--att) or counter "
                "collection (--pmc) alone, whose results go to other files, never a timeline")
    return said + why + "; run it again with --runtime-trace (or --kernel-trace --hip-trace) for a timeline"


def _counters(schema: tb.Schema, table: str) -> list[str]:
    """The counters a run was asked for (``rocpd_info_pmc``'s names), in the database's order."""
    if not schema.has(table, "name"):
        return []
    return [str(r[0]) for r in schema.con.execute(f'SELECT name FROM "{table}" ORDER BY id').fetchall() if r[0]]


def _agents(schema: tb.Schema, table: str) -> dict[int, tuple[int, DeviceInfo | None]]:
    """agent id -> (its GPU index, its model), -1 for a CPU agent."""
    if not schema.has(table, "id", "type"):
        return {}
    cols = [c for c in ("type_index", "product_name", "vendor_name", "extdata") if c in schema.columns(table)]
    sql = f'SELECT id, type, {", ".join(cols) or "NULL"} FROM "{table}"'
    out: dict[int, tuple[int, DeviceInfo | None]] = {}
    for row in schema.con.execute(sql).fetchall():
        got = dict(zip(cols, row[2:]))
        if row[1] != "GPU":
            out[int(row[0])] = (-1, None)
            continue
        units = None
        try:
            units = int(json.loads(got.get("extdata") or "{}").get("cu_count") or 0) or None
        except (ValueError, TypeError, AttributeError):
            units = None
        idx = got.get("type_index")
        out[int(row[0])] = (int(idx) if isinstance(idx, int) else int(row[0]),
                            DeviceInfo(name=gpu_named(str(got.get("product_name") or ""), str(got.get("vendor_name") or "")),
                                       sm_count=units))
    return out


def _symbols(schema: tb.Schema, table: str) -> dict[int, str]:
    if not schema.has(table, "id"):
        return {}
    cols = [c for c in ("display_name", "kernel_name") if c in schema.columns(table)]
    if not cols:
        return {}
    out = {}
    for row in schema.con.execute(f'SELECT id, {", ".join(cols)} FROM "{table}"').fetchall():
        out[int(row[0])] = next((str(v) for v in row[1:] if v), "(unnamed kernel)")
    return out



