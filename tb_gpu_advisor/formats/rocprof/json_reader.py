"""rocprofv3's JSON output (``rocprofv3 --output-format json``: ``<pid>_results.json``) -> the neutral
:class:`~tb_gpu_advisor.model.trace.Trace`.

The document (facts read off rocprofiler-sdk's writer, ``source/lib/output/generateJSON.cpp``, and its records'
serialisation, ``rocprofiler-sdk/cxx/serialization.hpp``; the tool's own tests read it the same way; survey
h37-rocprof3, no real file public): one top key, ``rocprofiler-sdk-tool``, an array of one object per process with

* ``metadata`` (``pid`` ...), ``agents`` (each ``id.handle``, ``type`` -- 1 CPU, 2 GPU --, ``node_id``,
  ``logical_node_id``, ``cu_count``, ``name``, ``vendor_name``, ``product_name``), ``kernel_symbols`` (each
  ``kernel_id`` with its ``formatted_kernel_name`` / ``demangled_kernel_name`` / ``kernel_name``);
* ``strings``: ``buffer_records`` -- per record kind id its ``kind`` name and its ``operations``' names (a call's name
  is its operation's) -- and ``marker_api``, the roctx messages by correlation id (``key`` / ``value``);
* ``buffer_records``: ``hip_api``, ``hsa_api``, ``marker_api``, ``rccl_api`` (``kind``, ``operation``,
  ``correlation_id.internal``, ``start_timestamp``, ``end_timestamp``, ``thread_id``), ``kernel_dispatch`` (the same
  and ``dispatch_info``: ``agent_id.handle``, ``queue_id.handle``, ``kernel_id``, ``workgroup_size`` and
  ``grid_size`` ``x``/``y``/``z``; ``stream_id`` where recorded) and ``memory_copy`` (``dst_agent_id`` /
  ``src_agent_id`` handles, ``bytes``).

Its records are laid out as the CSV files' columns and read by the CSV reader's one build (``csv_reader.build``: the
same rules for calls, ranges, launches by correlation id, GPUs, grids), with each copy's ``bytes`` kept.  A process
array of several is read for the process with the most GPU work, the others named in the notes.  The file is read
whole, gunzipped where gzipped (its size bounded as every format's); one that is no JSON, cut short, or not
rocprofv3's is a clear error (:class:`RocprofJsonReadError`).
"""

from __future__ import annotations

import json
import os

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.formats.rocprof.csv_reader import RocprofCsvReadError, build
from tb_gpu_advisor.formats.rocprof.json_layout import stem as layout_stem
from tb_gpu_advisor.formats.rocprof.reader import RocprofReadError, file_text
from tb_gpu_advisor.model.damage import attach, cut, of_error, unreadable
from tb_gpu_advisor.model.trace import Trace

__all__ = ["RocprofJsonReadError", "read_trace", "TIME_BASE", "TOP_KEY"]

TOP_KEY = "rocprofiler-sdk-tool"
TIME_BASE = "ms from the first record of the rocprofv3 JSON (the process's start is not its clock's zero)"
#: rocprofiler-sdk's agent types (``rocprofiler_agent_type_t``).
AGENT_TYPES = {1: "CPU", 2: "GPU"}
API_RECORDS = ("hip_api", "hsa_api", "marker_api", "rccl_api")


class RocprofJsonReadError(ValueError):
    """A file that is no rocprofv3 JSON, or one that cannot be read."""


def read_trace(path: str, host: str | None = None, ranks: list[str] | None = None) -> Trace:
    try:  # the rocprof reader's read: decompressed where gzipped, within the size limit either way
        text, size = file_text(path)
    except RocprofReadError as e:
        raise _as_own(e) from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:  # the text ends inside a value (a string or the document): cut short
        short = e.pos >= len(text.rstrip()) - 1 or e.msg.startswith("Unterminated string")
        said = (cut("json_cut", "cut short (a copy or a run that stopped part-way)") if short else
                unreadable("json_invalid", f"not JSON at character {e.pos:,}",
                           offset=len(text[:e.pos].encode("utf-8", "surrogatepass"))))
        raise attach(RocprofJsonReadError(f"{path}: damaged rocprofv3 JSON: {said}"), said) from None
    tool = doc.get(TOP_KEY) if isinstance(doc, dict) else None
    procs = [p for p in (tool if isinstance(tool, list) else [tool]) if isinstance(p, dict)]
    if not procs:
        raise RocprofJsonReadError(f"{path}: not a rocprofv3 JSON (no {TOP_KEY!r} object with a process's records)")
    notes = []
    proc = max(procs, key=lambda p: sum(len(_list(_dict(p.get("buffer_records")).get(k)))
                                         for k in ("kernel_dispatch", "memory_copy")))
    if len(procs) > 1:
        notes.append(f"the file holds {len(procs)} processes: the one with the most GPU work is read")
    name = os.path.basename(fsio.local_path(path))
    stem = layout_stem(name)
    try:
        trace = build(_tables(proc), path, size, host or stem, fmt="rocprofv3-json", time_base=TIME_BASE,
                      what="rocprofv3 JSON's records")
    except RocprofCsvReadError as e:  # the build's words, as this format's error
        raise _as_own(e) from None
    trace.notes[:0] = notes
    return trace


def _dict(x: object) -> dict:
    return x if isinstance(x, dict) else {}


def _list(x: object) -> list:
    return x if isinstance(x, list) else []


def _handle(x: object) -> object:
    return _dict(x).get("handle", x) if isinstance(x, dict) else x


def _s(x: object) -> str:
    return "" if x is None else str(x)


def _tables(proc: dict) -> dict[str, list[dict[str, list[str]]]]:
    """The process's records as the CSV files' columns (``csv_reader.build``'s input)."""
    strings = _dict(proc.get("strings"))
    kinds = _list(strings.get("buffer_records"))

    def kind_name(k: object) -> str:
        try:
            return _s(_dict(kinds[int(k)]).get("kind"))  # type: ignore[arg-type]
        except (TypeError, ValueError, IndexError):
            return ""

    def op_name(k: object, op: object) -> str:
        try:
            return _s(_list(_dict(kinds[int(k)]).get("operations"))[int(op)])  # type: ignore[arg-type]
        except (TypeError, ValueError, IndexError):
            return ""

    msgs_raw = strings.get("marker_api")
    messages = ({_s(m.get("key")): _s(m.get("value")) for m in _list(msgs_raw) if isinstance(m, dict)}
                if isinstance(msgs_raw, list) else {_s(k): _s(v) for k, v in _dict(msgs_raw).items()})
    pid = _s(_dict(proc.get("metadata")).get("pid") or 0)
    recs = _dict(proc.get("buffer_records"))
    agents = [a for a in _list(proc.get("agents")) if isinstance(a, dict)]
    node_of = {_s(_handle(a.get("id"))): _s(a.get("node_id")) for a in agents}

    def agent(x: object) -> str:
        h = _s(_handle(x))
        return node_of.get(h, h) if agents else h

    api: dict[str, list[str]] = {c: [] for c in ("domain", "function", "process_id", "thread_id", "correlation_id",
                                                  "start_timestamp", "end_timestamp")}
    for key in API_RECORDS:
        for r in _list(recs.get(key)):
            if not isinstance(r, dict):
                continue
            corr = _s(_dict(r.get("correlation_id")).get("internal", -1))
            fn = op_name(r.get("kind"), r.get("operation"))
            if key == "marker_api":
                fn = messages.get(corr) or fn
            for c, v in (("domain", kind_name(r.get("kind")) or key.upper()), ("function", fn), ("process_id", pid),
                         ("thread_id", _s(r.get("thread_id"))), ("correlation_id", corr),
                         ("start_timestamp", _s(r.get("start_timestamp"))),
                         ("end_timestamp", _s(r.get("end_timestamp")))):
                api[c].append(v)
    symbols = {}
    for sym in _list(proc.get("kernel_symbols")):
        if isinstance(sym, dict):
            symbols[_s(sym.get("kernel_id"))] = next((_s(sym.get(k)) for k in (
                "formatted_kernel_name", "demangled_kernel_name", "truncated_kernel_name", "kernel_name")
                if sym.get(k)), "")
    kern: dict[str, list[str]] = {c: [] for c in ("kind", "agent_id", "queue_id", "kernel_name", "correlation_id",
                                                   "start_timestamp", "end_timestamp", "workgroup_size_x",
                                                   "workgroup_size_y", "workgroup_size_z", "grid_size_x",
                                                   "grid_size_y", "grid_size_z")}
    kd = [r for r in _list(recs.get("kernel_dispatch")) if isinstance(r, dict)]
    streams = bool(kd) and all("stream_id" in r for r in kd)
    if streams:
        kern["stream_id"] = []
    for r in kd:
        info = _dict(r.get("dispatch_info"))
        wg, grid = _dict(info.get("workgroup_size")), _dict(info.get("grid_size"))
        row = {"kind": "KERNEL_DISPATCH", "agent_id": agent(info.get("agent_id")),
               "queue_id": _s(_handle(info.get("queue_id"))), "kernel_name": symbols.get(_s(info.get("kernel_id")), ""),
               "correlation_id": _s(_dict(r.get("correlation_id")).get("internal", -1)),
               "start_timestamp": _s(r.get("start_timestamp")), "end_timestamp": _s(r.get("end_timestamp"))}
        row.update({f"workgroup_size_{a}": _s(wg.get(a, 0)) for a in "xyz"})
        row.update({f"grid_size_{a}": _s(grid.get(a, 0)) for a in "xyz"})
        if streams:
            row["stream_id"] = _s(_handle(r.get("stream_id")))
        for c in kern:
            kern[c].append(row[c])
    cop: dict[str, list[str]] = {c: [] for c in ("kind", "direction", "source_agent_id", "destination_agent_id",
                                                  "correlation_id", "start_timestamp", "end_timestamp", "bytes")}
    mc = [r for r in _list(recs.get("memory_copy")) if isinstance(r, dict)]
    if mc and streams and all("stream_id" in r for r in mc):
        cop["stream_id"] = []
    for r in mc:
        row = {"kind": "MEMORY_COPY", "direction": op_name(r.get("kind"), r.get("operation")),
               "source_agent_id": agent(r.get("src_agent_id")), "destination_agent_id": agent(r.get("dst_agent_id")),
               "correlation_id": _s(_dict(r.get("correlation_id")).get("internal", -1)),
               "start_timestamp": _s(r.get("start_timestamp")), "end_timestamp": _s(r.get("end_timestamp")),
               "bytes": _s(r.get("bytes", -1)), "stream_id": _s(_handle(r.get("stream_id")))}
        for c in cop:
            cop[c].append(row[c])
    ag: dict[str, list[str]] = {c: [] for c in ("node_id", "logical_node_id", "agent_type", "cu_count",
                                                 "product_name", "vendor_name")}
    for a in agents:
        t = a.get("type")
        row = {"node_id": _s(a.get("node_id")), "logical_node_id": _s(a.get("logical_node_id", -1)),
               "agent_type": AGENT_TYPES.get(t, _s(t)) if isinstance(t, int) else _s(t).replace(
                   "ROCPROFILER_AGENT_TYPE_", ""),
               "cu_count": _s(a.get("cu_count", 0)), "product_name": _s(a.get("product_name") or a.get("name")),
               "vendor_name": _s(a.get("vendor_name"))}
        for c in ag:
            ag[c].append(row[c])
    # kernel_trace's streams must be in every GPU table or none (the CSV rule): drop the copies' where kernels lack them
    if "stream_id" in cop and "stream_id" not in kern:
        del cop["stream_id"]
    return {"api": [api], "kernel": [kern] if kd else [], "copy": [cop] if mc else [], "agents": [ag] if agents else []}


def _as_own(e: ValueError) -> RocprofJsonReadError:
    """Another reader's error (the rocprof reader's read of the file: a gzip cut; the build's) as this format's, its
    damage record kept (``model.damage.attach``): ``from None`` drops the cause the pipeline would find it by."""
    own = RocprofJsonReadError(str(e))
    said = of_error(e)
    return attach(own, said) if said is not None else own  # type: ignore[return-value]
