"""rocmProfileData database (``.rpd``) -> the neutral :class:`~tb_gpu_advisor.model.trace.Trace`.

What is decided here, once, from the database's own conventions (``tables.py`` for the schema):

* host events are the HIP calls of ``rocpd_api`` (the runtime's calls by their spelling, ``devices.is_runtime_call``)
  and the marked ranges: roctx ranges and the ops PyTorch's hooks record through roctx (``UserMarker``, named by their
  text), and any other name the program marked; one line per (``pid``, ``tid``).  The tracer's own records (its
  table flushes: ``tables.OVERHEAD``) are its work, not the program's, and are left out (counted in the notes);
* device events are the ops of ``rocpd_op`` per ``gpuId`` (the GPU id reported), one stream per ``queueId``:
  kernels by their name (``description``; a HIP graph's kernels are ``Task`` ops), copies and fills by roctracer's
  names (``CopyHostToDevice`` ...), a copy's direction being the one its call asked for (``rocpd_copyapi.kind``) --
  roctracer names some device-to-device copies ``CopyHostToDevice``; ops of any other type (barriers) are no work;
* a device event's launch is the call ``rocpd_api_ops`` pairs it with (the call's row id is the correlation id; a
  ``hipGraphLaunch`` launches each kernel of its graph, which then shares its graph id), its op the innermost marked
  range around that launch on the launching thread (``model.enclosing``);
* a copy's size is its call's (``rocpd_copyapi.size``); whether it held the host is its call's (``hipMemcpy``,
  ``hipMemcpyWithStream`` block, ``...Async`` does not: ``devices.copy_call_sync``), never the table's ``sync`` /
  ``pinned``, which the tracer does not fill for these calls (``tables.py``).  The host memory's kind is unknown but
  where the timing shows it (:func:`formats.hip_ops.copies_host_side`): a blocking copy between the host and the
  device whose call held the host, with no GPU work before it left to wait for, longer than the copy itself took and at least
  :data:`devices.STAGING_MIN_NS` before its copy began -- host work for the copy (the runtime staging or pinning pageable
  pages: a pinned copy's transfer starts within microseconds of its call) -- is from pageable memory;
* a kernel's grid is its launch's (``rocpd_kernelapi``), HIP's module launches' work-item grids divided by their
  workgroup (``devices.WORK_ITEM_GRID_CALLS``);
* the database names no GPU model: each GPU is named an AMD GPU of unknown model, which claims no peak;
* times are re-based to the earliest record, in picoseconds (the database holds no session start).

Columns are read a chunk at a time (``formats.sqlite.int_columns``), strings only for the ids used: memory follows the
events kept, not the file.  A file that is no SQLite database, an SQLite database of another schema, one cut short,
damaged or making SQLite compute past its budget is a clear error (:class:`RpdReadError`), never an empty report.
"""

from __future__ import annotations

import os

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.formats import sqlite as tb
from tb_gpu_advisor.formats.hip_ops import copies_host_side, device_events, host_events, launch_call_times, roctx_ranges, \
    trace_of
from tb_gpu_advisor.formats.rpd import tables as rt
from tb_gpu_advisor.formats.rpd.layout import stem
from tb_gpu_advisor.model.columns import unique_inverse
from tb_gpu_advisor.model.damage import attach, unreadable
from tb_gpu_advisor.model.enclosing import innermost_range
from tb_gpu_advisor.model.trace import DeviceInfo, Trace

__all__ = ["RpdReadError", "read_trace", "TIME_BASE", "GPU_NAME"]

#: Where an rpd trace's times count from (``Trace.time_base``).
TIME_BASE = "ms from the first record of the rocmProfileData trace (it records no session start)"
#: The name each GPU gets: the database records no model, so no peak or unit count is claimed for it.
GPU_NAME = "AMD GPU (model not recorded)"
#: The columns each table must have to be read.
_API_COLS = {"id": "id", "pid": "pid", "tid": "tid", "start": "start", "end": "end", "name": "apiName_id",
             "args": "args_id"}
_OP_COLS = {"id": "id", "gpu": "gpuId", "queue": "queueId", "start": "start", "end": "end",
            "desc": "description_id", "type": "opType_id"}
_API_OPS_COLS = {"api": "api_id", "op": "op_id"}
_COPY_COLS = {"api": "api_ptr_id", "size": "size", "kind": "kind"}
_KERNEL_COLS = {"api": "api_ptr_id", "gx": "gridX", "gy": "gridY", "gz": "gridZ", "wx": "workgroupX",
                "wy": "workgroupY", "wz": "workgroupZ"}


class RpdReadError(ValueError):
    """A file that is no rocmProfileData database, or one that cannot be read."""


def read_trace(path: str, host: str | None = None, ranks: list[str] | None = None) -> Trace:
    """Read one ``.rpd`` database into a trace (``ranks`` is not used: each database is one host)."""
    return tb.read_database(path, host, RpdReadError, "rocmProfileData databases", ".rpd", _read_local, _stem)


def _read_local(path: str, local: str, size: int, host: str | None) -> Trace:
    """The database at ``local`` (the file itself, or its decompressed copy), read for ``path``."""
    if not tb.is_sqlite(local):
        raise RpdReadError(f"{path}: not an SQLite file (a rocmProfileData trace is the SQLite database "
                           "runTracer.sh -o <file>.rpd writes)")
    return tb.read_own(path, local, RpdReadError, rt.is_rpd,
                       f"an SQLite file, but no rocmProfileData database (none of its tables {', '.join(rt.OWN)})",
                       lambda schema: _read(schema, path, size, host or _stem(path)))


def _stem(path: str) -> str:
    return stem(os.path.basename(path))


def _columns(schema: tb.Schema, table: str, cols: dict[str, str], need: bool, path: str) -> dict[str, np.ndarray]:
    """The table's integer columns; a table the trace needs (``need``) lacking one is damage, a missing optional table
    reads as no rows.

    The damage is 'unreadable', not 'cut': SQLite read the file's schema whole (a cut database fails its header check
    first, ``formats.sqlite.whole``), so nothing lies past it; the table is there without a column rpd_tracer always
    writes -- another version's or a trimmed schema, whose rows cannot be read as events (h37-damage68: an error with
    no record before)."""
    missing = [c for c in cols.values() if c not in schema.columns(table)]
    if missing:
        if need:
            _lacks(path, table, missing)
        return {k: np.zeros(0, np.int64) for k in cols}
    out = tb.int_columns(schema, table, dict(cols))
    return {k: np.asarray(v, dtype=np.int64) for k, v in out.items()}


def _lacks(path: str, table: str, missing: list[str]) -> None:
    """The error of a table the trace needs lacking columns, carrying its 'unreadable' record (:func:`_columns`)."""
    why = f"{table} has no column {', '.join(missing)} (rpd_tracer writes it in every database)"
    raise attach(RpdReadError(f"{path}: damaged rocmProfileData database: {why}"),
                 unreadable("sqlite_no_such_column", why))


def _intern(table: dict[str, int], names: list[str], name: str) -> int:
    i = table.get(name)
    if i is None:
        i = table[name] = len(names)
        names.append(name)
    return i


def _read(schema: tb.Schema, path: str, size: int, host: str) -> Trace:
    if not schema.has(rt.STRING, "id", rt.STRING_TEXT):  # every call's and op's name is an id into it
        _lacks(path, rt.STRING, [c for c in ("id", rt.STRING_TEXT) if c not in schema.columns(rt.STRING)])
    api = _columns(schema, rt.API, _API_COLS, True, path)
    ops = _columns(schema, rt.OP, _OP_COLS, True, path)
    if not api["id"].size and not ops["id"].size:
        raise RpdReadError(f"{path}: no events: the rocmProfileData database holds no HIP call, marker or GPU "
                           "operation (was the tracer stopped right after it started?)")
    links = _columns(schema, rt.API_OPS, _API_OPS_COLS, False, path)
    copies = _columns(schema, rt.COPY_API, _COPY_COLS, False, path)
    kernels = _columns(schema, rt.KERNEL_API, _KERNEL_COLS, False, path)
    notes: list[str] = []

    # ---- host records: their names (a marker by its text), the tracer's own left out
    strings = tb.string_table(schema, np.concatenate([api["name"], ops["desc"], ops["type"]]), rt.STRING,
                              rt.STRING_TEXT)
    marker_ids = [i for i, s in strings.items() if s == rt.USER_MARKER]
    is_marker = np.isin(api["name"], marker_ids)
    args = tb.string_table(schema, api["args"][is_marker], rt.STRING, rt.STRING_TEXT) if is_marker.any() else {}
    names: list[str] = []
    interned: dict[str, int] = {}
    key = np.where(is_marker, -2 - api["args"], api["name"])  # a marker's name is its text: keyed apart
    ukey, inv = unique_inverse(key)
    local = np.empty(ukey.size, np.int64)
    overhead = np.zeros(ukey.size, bool)
    for j, k in enumerate(ukey.tolist()):
        text = args.get(-2 - k, "") if k <= -2 else strings.get(k, "")
        overhead[j] = k > -2 and rt.is_overhead(text)
        local[j] = _intern(interned, names, text or ("(unnamed marker)" if k <= -2 else "(unnamed call)"))
    keep = ~overhead[inv]
    if not keep.all():
        notes.append(f"the tracer's own records (its table flushes and activity callbacks, "
                     f"{int(np.count_nonzero(~keep)):,} of them) left out: rpd_tracer's work, not the program's")
    h_name = local[inv][keep]
    h_id = api["id"][keep]
    pid, tid = api["pid"][keep], api["tid"][keep]
    h_start, h_end = api["start"][keep], np.maximum(api["end"][keep], api["start"][keep])
    del api, key, inv
    call = np.fromiter((devices.is_runtime_call(n) for n in names), bool, len(names))
    is_range_row = ~call[h_name] if h_name.size else np.zeros(0, bool)

    # ---- GPU operations: which are work, their names, their launches
    type_name = {k: v for k, v in strings.items()}
    op_type = np.array([type_name.get(int(t), "") for t in ops["type"].tolist()], dtype=object)
    copy_type = np.array([devices.copy_direction(t) is not None for t in op_type.tolist()], bool)
    kernel_type = np.isin(op_type, rt.KERNEL_OPS)
    work = copy_type | kernel_type
    if not work.all():
        left = sorted(set(op_type[~work].tolist()))
        notes.append(f"GPU operations that are no kernel, copy or fill ({int(np.count_nonzero(~work)):,}: "
                     f"{', '.join(x or '(unnamed)' for x in left[:4])}) left out")
    ops = {k: v[work] for k, v in ops.items()}
    op_type, copy_type = op_type[work], copy_type[work]
    # each op's launching call (its rocpd_api row id): the first link of the op
    op_api = np.full(ops["id"].size, -1, np.int64)
    if links["op"].size and ops["id"].size:
        order = np.lexsort((links["api"], links["op"]))
        lo, la = links["op"][order], links["api"][order]
        k = np.clip(np.searchsorted(lo, ops["id"]), 0, lo.size - 1)
        hit = lo[k] == ops["id"]
        op_api[hit] = la[k[hit]]
    del links

    # ---- host events, by (thread, start, longer first); the calls' ids as dense correlation ids
    line_key = pid * (1 << 32) + tid
    ulines, line = unique_inverse(line_key)
    order = np.lexsort((h_start - h_end, h_start, line)) if line.size else np.zeros(0, np.intp)
    line, h_name, h_id = line[order], h_name[order], h_id[order]
    h_start, h_end, is_range_row = h_start[order], h_end[order], is_range_row[order]
    origin_parts = [a.min() for a in (h_start, ops["start"]) if a.size]
    origin = int(min(origin_parts)) if origin_parts else 0
    call_ids = np.unique(h_id[~is_range_row])
    h_corr = np.full(h_id.size, -1, np.int64)
    h_corr[~is_range_row] = np.searchsorted(call_ids, h_id[~is_range_row])
    h = host_events(h_start, h_end, h_name, line, ulines, h_corr, names, origin)
    ranges = roctx_ranges(h, is_range_row, "roctx ranges (rocmProfileData UserMarker)")
    d_corr = np.full(op_api.size, -1, np.int64)
    if call_ids.size:
        k = np.clip(np.searchsorted(call_ids, op_api), 0, call_ids.size - 1)
        hit = (op_api >= 0) & (call_ids[k] == op_api)
        d_corr[hit] = k[hit]
    first = np.full(call_ids.size, -1, np.int64)  # each call's host event
    calls_at = np.flatnonzero(h_corr >= 0)
    first[h_corr[calls_at]] = calls_at
    launch = np.where(d_corr >= 0, first[np.maximum(d_corr, 0)] if first.size else -1, -1)
    op_of_launch = innermost_range(h, is_range_row, launch)

    # ---- per op: name, size, whether its call blocks, grid
    desc = np.array([strings.get(int(d), "") for d in ops["desc"].tolist()], dtype=object)
    op_names = np.where((desc == "") | copy_type, op_type, desc)
    asked = _by_api(copies, op_api, "kind")
    kind_name = np.array([devices.amd.MEMCPY_KIND_OPS.get(int(x), "") for x in asked.tolist()], dtype=object)
    fix = copy_type & (kind_name != "") & (op_type != "FillBuffer")
    op_names[fix] = kind_name[fix]
    nbytes = np.where(copy_type, _by_api(copies, op_api, "size"), -1)
    call_name = [names[int(h.name[i])] if i >= 0 else "" for i in launch.tolist()]
    call_start, call_end = launch_call_times(launch, h.start, h.end)  # ps from the origin -> the tracer's ns
    has = launch >= 0
    call_start[has] = call_start[has] // 1000 + origin
    call_end[has] = call_end[has] // 1000 + origin
    sync, host_kind = copies_host_side(ops["gpu"], ops["start"], ops["end"], op_names, call_name, copy_type,
                                               call_start, "rpd_tracer", notes, call_end)
    is_graph = np.array([devices.is_graph_launch(c) if c else False for c in call_name], bool)
    graph = np.where(is_graph, d_corr, -1)
    blocks, threads = _grid(kernels, op_api, call_name)
    devs = []
    for gpu in sorted(set(ops["gpu"].tolist())):
        sel = np.flatnonzero(ops["gpu"] == gpu)
        sel = sel[np.lexsort((ops["end"][sel], ops["start"][sel]))]
        devs.append(device_events(int(gpu), sel, DeviceInfo(name=GPU_NAME), ops["queue"], "queue", ops["start"],
                                  ops["end"], op_names, origin, d_corr, op_of_launch, h, nbytes, sync, graph, blocks,
                                  threads, host_kind, copy_type))
    if devs:
        notes.append("rocmProfileData records no GPU model: each GPU is named an AMD GPU of unknown model, and "
                     "nothing is said of its peak or its compute units")
    return trace_of("rpd", host, path, size, h, devs, notes, ranges, TIME_BASE)


def _by_api(table: dict[str, np.ndarray], op_api: np.ndarray, col: str) -> np.ndarray:
    """Per op: ``col`` of the row of ``table`` (keyed by ``api``) of its launching call, -1 where none."""
    out = np.full(op_api.size, -1, np.int64)
    if not table["api"].size or not op_api.size:
        return out
    order = np.argsort(table["api"], kind="stable")
    keys, vals = table["api"][order], table[col][order]
    k = np.clip(np.searchsorted(keys, op_api), 0, keys.size - 1)
    hit = (op_api >= 0) & (keys[k] == op_api)
    out[hit] = vals[k[hit]]
    return out


def _grid(kernels: dict[str, np.ndarray], op_api: np.ndarray, call_name: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per op: (blocks in its grid, threads per block), -1 where its launch records none.  HIP's module launches
    record the grid in work-items (``devices.WORK_ITEM_GRID_CALLS``): divided by the workgroup."""
    g = {c: _by_api(kernels, op_api, c) for c in ("gx", "gy", "gz", "wx", "wy", "wz")}
    work_items = np.array([c.startswith(devices.WORK_ITEM_GRID_CALLS) for c in call_name], bool)
    known = (g["gx"] > 0) & (g["wx"] > 0)
    dims = []
    for a, w in (("gx", "wx"), ("gy", "wy"), ("gz", "wz")):
        n, s = np.maximum(g[a], 1), np.maximum(g[w], 1)
        dims.append(np.where(work_items, -(-n // s), n))
    blocks = np.where(known, dims[0] * dims[1] * dims[2], -1)
    threads = np.where(known, np.maximum(g["wx"], 1) * np.maximum(g["wy"], 1) * np.maximum(g["wz"], 1), -1)
    return blocks, threads



