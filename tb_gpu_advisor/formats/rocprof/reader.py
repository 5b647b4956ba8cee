"""ROCm rocprof's trace (``rocprof --hip-trace``: ``results.json``, ``layout.py`` for its form) -> the neutral
:class:`~tb_gpu_advisor.model.trace.Trace`.

What is decided here, once, from the writer's own conventions (ROCm/rocprofiler ``bin/tblextr.py``, ``dform.py``,
``sqlitedb.py``; checked on two real captures, survey h37-survey5):

* a section is what its ``process_name`` label says (``CPU HIP API``, ``COPY``, ``GPU<n>`` ...), else what tblextr's
  fixed pid for it says (:data:`SECTION_PIDS`);
* host events are the HIP calls (``CPU HIP API``) and the roctx ranges (``Markers and Ranges``), one line per (``pid``,
  ``tid`` of their args: the program's process and thread).  The HSA calls (``CPU HSA API``, ``--hsa-trace``) are the
  HIP runtime's own implementation of those calls and the barrier packets (``GPU Barriers<n>``) no work: both left
  out, counted in the notes;
* device events are the kernels of ``GPU<n>`` (named after the launch's ``kernel(...)`` argument by tblextr) and the
  copies and fills of ``COPY`` (roctracer's ``CopyHostToDevice`` ...), each on the GPU its args name (``dev-id``: the
  KFD node id, as ``rocminfo``'s ``Node``; ``gpu-id`` in a kernel-only trace), one stream per ``stream-id`` (HIP's
  stream, numbered by the tracer);
* times are the args' ``BeginNs`` / ``EndNs`` (ns on the GPUs' system clock; ``ts``/``dur`` are the same in
  whole microseconds), re-based to the earliest record, in picoseconds;
* a GPU operation's launch is the call a flow event pair ties it to: tblextr writes one ``s`` event on the calling
  thread at the call's middle (its start where the operation began before that) and one ``t`` on the operation's
  section and stream at its start (whole microseconds both): the call is the one running on that thread at the
  ``s`` time, the operation the one starting on that section and stream at the ``t`` time.  Flows from an operation
  to a ``hipStreamSynchronize`` (tblextr draws the sync's dependence too) are no launch;
* a call's arguments are roctracer's text (``( dst(0x..) src(0x..) sizeBytes(8388608) kind(1))``): a copy's size is
  its ``sizeBytes``, its direction the ``kind`` it asked for (``devices.amd.MEMCPY_KIND_OPS``: roctracer names some
  device-to-device copies ``CopyHostToDevice``), whether it held the host its call's name (``devices.copy_call_sync``);
  its host memory's kind is unknown but where the timing shows staging (``formats.staging``); a kernel's grid is its
  launch's ``numBlocks``/``dimBlocks`` (or ``gridDim*``/``blockDim*``; HIP's work-item launches divided by their
  workgroup: ``devices.WORK_ITEM_GRID_CALLS``); a kernel-only trace's (``rocprof --stats`` without ``--hip-trace``:
  ``KernelName``, ``gpu-id``, ``grd`` and ``wgr`` in work-items) its dispatch's own ``grd`` / ``wgr``;
* each GPU's model and compute units are ``rocminfo``'s (``otherData``: the agent whose ``Node`` is the GPU's id),
  its name as the ``<name>.sysinfo.txt`` rocprof writes beside the trace spells it where that is there, else
  ``otherData``'s with its spaces given back (``AMDInstinctMI300X`` -> ``AMD Instinct MI300X``).

The events are decoded one at a time from the text and each kept only as what the reader asks of it (:class:`_Read`: a
section label, a complete event's times, name and the few args read, a flow's end; every other event dropped as
decoded), the file's size bounded as every format's.  A file cut short, one that is no JSON or holds no event, is a clear error (:class:`RocprofReadError`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.devices import amd
from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.formats.base import LIMIT_HINT, gunzipped_within_limit, human_size, is_gzip, max_profile_bytes
from tb_gpu_advisor.formats.launch_links import graph_launches
from tb_gpu_advisor.formats.rocprof.layout import SYSINFO_SUFFIX, stem
from tb_gpu_advisor.formats.hip_ops import copies_host_side, device_events, host_events, launch_call_times, roctx_ranges, \
    with_arch, \
    trace_of
from tb_gpu_advisor.model.columns import unique_inverse
from tb_gpu_advisor.model.enclosing import innermost_range
from tb_gpu_advisor.model.trace import DeviceInfo, Trace
from tb_gpu_advisor.model.damage import Damage, attach, cut, unreadable

__all__ = ["RocprofReadError", "file_text", "read_trace", "TIME_BASE", "GPU_NAME"]

TIME_BASE = "ms from the first record of the rocprof trace (it records no session start)"
#: A GPU whose model ``otherData`` does not give.
GPU_NAME = "AMD GPU (model not recorded)"
#: tblextr's fixed pid of each section (``EXT_PID`` ... ``GPU_BASE_PID``), for a file whose labels are missing.
SECTION_PIDS = {0: "ranges", 1: "copy", 2: "hip", 3: "hsa"}
GPU_BASE_PID = 6
BARRIER_PID_OFFSET = 512
_LABEL = {"Markers and Ranges": "ranges", "COPY": "copy", "CPU HIP API": "hip", "CPU HSA API": "hsa"}
_GPU_LABEL = re.compile(r"^GPU(\d+)$")
_BARRIER_LABEL = re.compile(r"^GPU Barriers(\d+)$")
#: A call argument as roctracer writes it: ``name(value)``.
_ARG = r"(?:^|[\s(]){}\((\d+)\)"
_DIMS = r"{}\(\{{z\((\d+)\) y\((\d+)\) x\((\d+)"


class RocprofReadError(ValueError):
    """A file that is no rocprof trace, or one that cannot be read."""


def read_trace(path: str, host: str | None = None, ranks: list[str] | None = None) -> Trace:
    """Read one rocprof ``results.json`` into a trace (``ranks`` is not used: each file is one host)."""
    text, size = file_text(path)
    read, other = _events(text, path)
    said = _tail_cut(text, read.count)
    del text
    trace = _build(read, other, path, size, host or _stem(path))
    if said is not None:
        trace.problems.append(said)
    return trace


def _tail_cut(text: str, events: int) -> Damage | None:
    """The cut of a file whose events are whole but whose end is not: a ``results.json`` ends on its object's ``}``
    (after ``otherData``, rocminfo's GPU properties, which tblextr writes last); one that does not was cut after its
    events (h37-damage67b: read as whole before, its GPUs' names and the cut unsaid, the exit status 0).  Its
    ``otherData`` may be no JSON in a whole file (tblextr writes rocminfo's values unescaped): only the end tells."""
    if text.rstrip().endswith("}"):
        return None
    return cut("json_cut", f"cut short after its {events:,} events, in what follows them (otherData: the GPUs' "
               "properties)", record=events)


def _stem(path: str) -> str:
    return stem(os.path.basename(path))


def file_text(path: str) -> tuple[str, int]:
    """The file's text (decompressed where gzipped), within the size limit, and its size on disk: rocprof's JSON
    and rocprofv3's alike (:mod:`.json_reader`)."""
    limit = max_profile_bytes()
    try:
        size = fsio.size(path)
    except OSError as e:
        raise RocprofReadError(f"cannot read {path}: {e}") from e
    if size > limit:
        raise RocprofReadError(f"{path}: file is {human_size(size)}, over the {human_size(limit)} limit ({LIMIT_HINT})")
    try:
        with fsio.open_binary(path) as f:
            head = f.read(2)
            if is_gzip(head):
                f.seek(0)
                raw = gunzipped_within_limit(f, path, RocprofReadError, "the trace")
            else:
                raw = head + f.read()
    except OSError as e:
        raise RocprofReadError(f"cannot read {path}: {e}") from e
    # a BOM before the JSON (a copy saved by an editor or PowerShell's ``Out-File -Encoding utf8``) is no text of it:
    # the trace did not "start as one" and was an error (session h37-meta57's ``bom`` rewrite)
    return raw.decode("utf-8-sig", errors="replace"), size


@dataclasses.dataclass
class _Read:
    """What the reader keeps of the trace's events, each decoded and dropped in turn: the sections' labels (pid ->
    ``process_name``), the complete events (:func:`_kept`, with times) and the flows' ends (id -> ``s`` / ``t`` ->
    (pid, tid, ts)); the last of each kind for one key wins, as a dict of the decoded events would have it."""

    labels: dict[int, str] = dataclasses.field(default_factory=dict)
    xs: list[tuple] = dataclasses.field(default_factory=list)
    flows: dict[object, dict[str, tuple[int, int, int]]] = dataclasses.field(default_factory=dict)
    count: int = 0

    def add(self, ev: dict) -> None:
        self.count += 1
        ph = ev.get("ph")
        if ph == "M" and ev.get("name") == "process_name" and isinstance(ev.get("args"), dict):
            self.labels[_int(ev.get("pid"))] = str(ev["args"].get("name", ""))
        elif ph == "X":
            kept = _kept(ev)
            if kept is not None:
                self.xs.append(kept)
        elif ph in ("s", "t", "f") and "id" in ev:
            self.flows.setdefault(ev["id"], {})["s" if ph == "s" else "t"] = (_int(ev.get("pid")), _int(ev.get("tid")),
                                                                              _int(ev.get("ts")))


#: The args of a complete event the reader reads (``_kept``'s tuple keeps them in this order after its first fields).
_ARGS = ("pid", "tid", "args", "EndNs", "dev-id", "gpu-id", "stream-id", "queue-id", "grd", "wgr")


def _kept(ev: dict) -> tuple | None:
    """A complete event as ``(pid, begin, end, name, tid, ts, *args of _ARGS)``; None where it has no time."""
    b, e = _times(ev)
    if b < 0:
        return None
    a = ev.get("args") if isinstance(ev.get("args"), dict) else {}
    return (_int(ev.get("pid")), b, e, str(a.get("Name") or ev.get("name") or ""), ev.get("tid"), ev.get("ts"),
            *(a.get(k) for k in _ARGS))


def _events(text: str, path: str) -> tuple[_Read, dict]:
    """The trace's events, decoded one at a time into what the reader keeps of them (:class:`_Read`), and its
    ``otherData`` (empty where absent or not JSON: tblextr writes rocminfo's values unescaped).  tblextr writes
    ``traceEvents`` first and ``otherData`` after it; a copy re-written with its keys in another order (sorted:
    ``json.dump(sort_keys=True)``, ``jq -S``) holds ``otherData`` first, read where it stands (session 55)."""
    m = re.match(r'\s*\{\s*"traceEvents"\s*:\s*\[', text)
    before = ""
    if not m and re.match(r'\s*\{\s*"otherData"\s*:', text):
        m = re.compile(r'\s*,\s*"traceEvents"\s*:\s*\[').search(text)
        before = text[:m.start()] if m else ""
    if not m:
        raise RocprofReadError(f"{path}: not a rocprof trace (it does not start as one: "
                               '{ "traceEvents":[ ... as rocprof --hip-trace writes results.json)')
    dec = json.JSONDecoder()
    pos, n = m.end(), len(text)
    events = _Read()
    while True:
        while pos < n and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= n:
            why = (f"cut short after {events.count:,} events (its event list never closes: a copy or a run that "
                   "stopped part-way)")
            raise attach(RocprofReadError(f"{path}: damaged rocprof trace: {why}"),
                         cut("json_cut", why, record=events.count))
        if text[pos] == "]":
            pos += 1
            break
        try:
            ev, pos = dec.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            # the text ends where the error is, or ends on no closing bracket at all: a file cut, not bad JSON (as
            # the Kineto reader tells them)
            short = pos + 2 >= n or e.pos >= n - 1 or not text.rstrip().endswith(("}", "]"))
            at = "cut short" if short else f"not JSON at byte {e.pos:,}"
            why = f"{at} after {events.count:,} events"
            said = (cut("json_cut", why, record=events.count) if short else
                    unreadable("json_invalid", why, record=events.count))
            raise attach(RocprofReadError(f"{path}: damaged rocprof trace: {why}"), said) from e
        if isinstance(ev, dict) and ev:
            events.add(ev)
    other: dict = {}
    k = re.compile(r'\s*,\s*"otherData"\s*:\s*').match(text, pos) or re.match(r'\s*\{\s*"otherData"\s*:\s*', before)
    if k:
        try:
            got, _ = dec.raw_decode(text, k.end())
            other = got if isinstance(got, dict) else {}
        except json.JSONDecodeError:
            other = {}
    return events, other


def _int(v: object, default: int = -1) -> int:
    try:
        return int(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default


def _arg(args: str, name: str) -> int:
    m = re.search(_ARG.format(re.escape(name)), args)
    return int(m.group(1)) if m else -1


def _gpu_models(other: dict) -> tuple[dict[int, DeviceInfo], DeviceInfo | None, dict[int, str]]:
    """rocminfo's GPU agents by node id, the one model every GPU agent shares (None where they differ), and each
    agent's GFX id (its ``Name``: ``gfx950``)."""
    agents: dict[str, dict[str, str]] = {}
    for key, value in other.items():
        head, dot, field = str(key).partition(".")
        if dot and head.startswith("Agent") and "." not in field:
            agents.setdefault(head, {})[field] = str(value)
    by_node: dict[int, DeviceInfo] = {}
    gfx_by_node: dict[int, str] = {}
    for a in agents.values():
        if a.get("DeviceType") != "GPU":
            continue
        name = _with_vendor(_spaced(a.get("MarketingName") or a.get("Name") or ""), a.get("VendorName", ""))
        units = _int(re.sub(r"\(.*", "", a.get("ComputeUnit", "")), 0)
        gfx = amd.gfx_id(a.get("Name"))
        node = _int(a.get("Node"))
        if gfx:
            gfx_by_node[node] = gfx
        by_node[node] = DeviceInfo(name=with_arch(name, gfx) or GPU_NAME, sm_count=units or None)
    shared = {(i.name, i.sm_count) for i in by_node.values()}
    return by_node, (next(iter(by_node.values())) if len(shared) == 1 else None), gfx_by_node


#: How much of the sibling ``<name>.sysinfo.txt`` is read (rocminfo of an 8-GPU node: ~70 kB).
SYSINFO_BYTES = 1 << 20


def _sysinfo_names(path: str) -> dict[int, str]:
    """GPU node id -> its marketing name as rocminfo printed it, from the ``<name>.sysinfo.txt`` rocprof writes beside
    the trace (the same rocminfo ``otherData`` holds, its spaces kept: ``AMD Radeon AI PRO R9700``, which no rule can
    give back to ``AMDRadeonAIPROR9700``); {} where it is not there."""
    name = fsio.file_name(path)
    if stem(name) == name:
        return {}
    try:  # reached as the trace is (``fsio.sibling``): never through a link out of the logdir
        text = fsio.read_head(fsio.sibling(path, stem(name) + SYSINFO_SUFFIX), SYSINFO_BYTES).decode(
            "utf-8", errors="replace")
    except Exception:  # noqa: BLE001 - absent or unreadable: otherData's names are used
        return {}
    out: dict[int, str] = {}
    for block in re.split(r"(?m)^Agent \d+\s*$", text)[1:]:
        field = dict((k.strip(), v.strip()) for k, v in re.findall(r"(?m)^\s{2}([A-Za-z][\w ]*?):\s+(.*)$", block))
        if field.get("Device Type") == "GPU" and field.get("Node", "").isdigit() and field.get("Marketing Name"):
            out[int(field["Node"])] = _with_vendor(field["Marketing Name"], field.get("Vendor Name", ""))
    return out


def _with_vendor(name: str, vendor: str) -> str:
    """rocminfo's marketing name with its agent's vendor before it where the name does not carry it (a Vega 20's
    marketing name is ``Vega 20``, its vendor ``AMD``): the model named as the vendor's."""
    vendor = vendor.strip()
    if not name or not vendor or vendor.lower() in name.lower().split():
        return name
    return f"{vendor} {name}"


def _spaced(name: str) -> str:
    """rocminfo's name as ``results.sysinfo.txt`` keeps it, its spaces taken out (``AMDInstinctMI300X``), with them
    given back: before a capital that starts a word after a lower-case letter or after a run of capitals, and before a
    model number after a lower-case letter (``Radeon8060SGraphics`` -> ``Radeon 8060S Graphics``, ``Vega20`` ->
    ``Vega 20``; a number after capitals stays joined: ``MI300X``)."""
    return re.sub(r"(?<=[a-z])(?=[A-Z\d])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name).strip()


def _times(ev: dict) -> tuple[int, int]:
    a = ev.get("args") if isinstance(ev.get("args"), dict) else {}
    b, e = _int(a.get("BeginNs")), _int(a.get("EndNs"))
    if b < 0:
        ts, dur = _int(ev.get("ts")), _int(ev.get("dur"), 0)
        b, e = (ts * 1000, (ts + max(dur, 0)) * 1000) if ts >= 0 else (-1, -1)
    return b, max(e, b)


def _build(read: _Read, other: dict, path: str, size: int, host: str) -> Trace:
    labels = read.labels
    notes: list[str] = []

    def section(pid: int) -> tuple[str, int]:
        label = labels.get(pid)
        if label is not None:
            if label in _LABEL:
                return _LABEL[label], -1
            if (g := _GPU_LABEL.match(label)) is not None:
                return "gpu", int(g.group(1))
            if (g := _BARRIER_LABEL.match(label)) is not None:
                return "barrier", int(g.group(1))
            return "other", -1
        if pid in SECTION_PIDS:
            return SECTION_PIDS[pid], -1
        if pid >= GPU_BASE_PID + BARRIER_PID_OFFSET:
            return "barrier", pid - GPU_BASE_PID - BARRIER_PID_OFFSET
        return ("gpu", pid - GPU_BASE_PID) if pid >= GPU_BASE_PID else ("other", -1)

    calls: list[tuple] = []  # (pid, tid, begin, end, name, args text)
    ranges: list[tuple] = []
    ops: list[tuple] = []  # (gpu, stream, begin, end, name, section pid, lane tid, begin us, is copy, grd, wgr)
    left = {"hsa": 0, "barrier": 0, "other": 0, "unknown copy": 0}
    backwards = [0, 0]  # GPU records whose EndNs is before their BeginNs, and the most by which it is
    for pid, b, e, name, ev_tid, ev_ts, *raw in read.xs:
        kind, n = section(pid)
        a = dict(zip(_ARGS, raw))
        if kind in ("hip", "ranges"):
            args = a.get("args")
            row = (_int(a.get("pid"), 0), _int(a.get("tid"), _int(ev_tid, 0)), b, e, name,
                   str("" if args is None else args))
            (calls if kind == "hip" else ranges).append(row)
        elif kind in ("gpu", "copy"):
            is_copy = kind == "copy"
            if is_copy and devices.copy_direction(name) is None:
                left["unknown copy"] += 1
                continue
            if 0 <= (raw_end := _int(a.get("EndNs"))) < b:
                backwards[0] += 1
                backwards[1] = max(backwards[1], b - raw_end)
            gpu = _int(a.get("dev-id"), _int(a.get("gpu-id"), n if n >= 0 else 0))
            stream = _int(a.get("stream-id"), _int(a.get("queue-id"), -1))
            ops.append((gpu, stream, b, e, name or "(unnamed kernel)", pid, _int(ev_tid, 0),
                        _int(ev_ts), is_copy, _int(a.get("grd")), _int(a.get("wgr"))))
        else:
            left[kind if kind in left else "other"] += 1
    if not calls and not ranges and not ops:
        raise RocprofReadError(f"{path}: no events: the rocprof trace holds no HIP call, roctx range or GPU operation "
                               "(was it run without --hip-trace, or did the program stop before its first call?)")
    if left["hsa"]:
        notes.append(f"the HSA calls ({left['hsa']:,}: rocprof --hsa-trace) left out: the HIP runtime's own "
                     "implementation of the HIP calls recorded beside them")
    if left["barrier"]:
        notes.append(f"barrier packets ({left['barrier']:,}) left out: they order the GPU's work and do none")
    if left["unknown copy"]:
        notes.append(f"copy records of no known direction ({left['unknown copy']:,}: HSA's async copies) left out")
    if left["other"]:
        notes.append(f"events of sections rocprof does not name ({left['other']:,}) left out")
    if backwards[0]:
        notes.append(f"{backwards[0]:,} GPU record{'s' if backwards[0] > 1 else ''} end before they begin (EndNs up to "
                     f"{backwards[1]:,} ns before BeginNs: the tracer's own timestamps) and are read as lasting no time")

    # ---- host events: calls and ranges, by (line, start, longer first)
    rows = calls + ranges
    is_range_row = np.array([False] * len(calls) + [True] * len(ranges), bool)
    interned: dict[str, int] = {}
    name_idx = np.array([interned.setdefault(r[4], len(interned)) for r in rows], np.int64)
    names = list(interned)
    pid = np.array([r[0] for r in rows], np.int64)
    tid = np.array([r[1] for r in rows], np.int64)
    start = np.array([r[2] for r in rows], np.int64)
    end = np.array([r[3] for r in rows], np.int64)
    row_args = [r[5] for r in rows]
    ulines, line = unique_inverse(pid * (1 << 32) + (tid & 0xFFFFFFFF))
    order = np.lexsort((start - end, start, line)) if line.size else np.zeros(0, np.intp)
    line, name_idx, start, end, is_range_row = line[order], name_idx[order], start[order], end[order], is_range_row[order]
    tid = tid[order]
    row_args = [row_args[i] for i in order.tolist()]
    o_start = np.array([o[2] for o in ops], np.int64)
    o_end = np.array([o[3] for o in ops], np.int64)
    origin = int(min(a.min() for a in (start, o_start) if a.size))
    call_rows = np.flatnonzero(~is_range_row)
    h_corr = np.full(start.size, -1, np.int64)
    h_corr[call_rows] = np.arange(call_rows.size)
    h = host_events(start, end, name_idx, line, ulines, h_corr, names, origin)
    host_ranges = roctx_ranges(h, is_range_row, "roctx ranges (rocprof Markers and Ranges)")

    # ---- each operation's launch, through the flow pairs
    copy_call = np.array([devices.is_copy_call(names[int(i)]) for i in name_idx.tolist()], bool)
    launch = _launches(read.flows, ops, tid, start, end, is_range_row, copy_call)
    d_corr = np.where(launch >= 0, h_corr[np.maximum(launch, 0)] if h_corr.size else -1, -1)
    op_of_launch = innermost_range(h, is_range_row, launch)
    call_name = [names[int(name_idx[i])] if i >= 0 else "" for i in launch.tolist()]
    call_args = [row_args[i] if i >= 0 else "" for i in launch.tolist()]

    # ---- per operation: name, size, whether its call blocks, grid
    op_names = np.array([o[4] for o in ops], dtype=object)
    is_copy = np.array([o[8] for o in ops], bool)
    kind_asked = np.array([_arg(x, "kind") if x else -1 for x in call_args], np.int64)
    asked = np.array([devices.amd.MEMCPY_KIND_OPS.get(int(k), "") for k in kind_asked.tolist()], dtype=object)
    fix = is_copy & (asked != "") & (op_names != "FillBuffer")
    op_names[fix] = asked[fix]
    nbytes = np.array([_arg(x, "sizeBytes") if c else -1 for x, c in zip(call_args, is_copy.tolist())], np.int64)
    call_start, call_end = launch_call_times(launch, start, end)
    gpu = np.array([o[0] for o in ops], np.int64)
    sync, host_kind = copies_host_side(gpu, o_start, o_end, op_names, call_name, is_copy, call_start,
                                               "rocprof", notes, call_end)
    graph = graph_launches(call_name, d_corr)
    blocks, threads = _grid(call_name, call_args)
    # a kernel-only trace (rocprof --stats, no --hip-trace): the dispatch's own grid and workgroup, in work-items
    grd = np.array([o[9] for o in ops], np.int64)
    wgr = np.array([o[10] for o in ops], np.int64)
    own = (blocks < 0) & (grd > 0) & (wgr > 0)
    blocks[own] = -(-grd[own] // wgr[own])
    threads[own] = wgr[own]
    models, shared, gfx_by_node = _gpu_models(other)
    for node, spelled in _sysinfo_names(path).items():  # rocminfo's own spelling, where rocprof kept it beside
        if node in models:
            models[node] = dataclasses.replace(models[node], name=with_arch(spelled, gfx_by_node.get(node)))
    if shared is not None and len({i.name for i in models.values()}) == 1:
        shared = next(iter(models.values()))
    streams = np.array([o[1] for o in ops], np.int64)
    # a record with neither a stream-id nor a queue-id (the copies of rpd2tracing's export) names no stream
    unrecorded = streams < 0
    devs = []
    unnamed = False
    for g in sorted(set(gpu.tolist())):
        sel = np.flatnonzero(gpu == g)
        sel = sel[np.lexsort((o_end[sel], o_start[sel]))]
        info = models.get(int(g)) or shared
        unnamed = unnamed or info is None
        devs.append(device_events(int(g), sel, info or DeviceInfo(name=GPU_NAME), streams, "stream", o_start, o_end,
                                  op_names, origin, d_corr, op_of_launch, h, nbytes, sync, graph, blocks, threads,
                                  host_kind, is_copy, unrecorded))
    if devs and unnamed:
        notes.append("the trace's rocminfo names no model for some GPU: it is named an AMD GPU of unknown model, and "
                     "nothing is said of its peak or its compute units")
    return trace_of("rocprof", host, path, size, h, devs, notes, host_ranges, TIME_BASE)


def _launches(flows: dict[object, dict[str, tuple[int, int, int]]], ops: list[tuple], tid: np.ndarray,
              start: np.ndarray, end: np.ndarray, is_range_row: np.ndarray, copy_call: np.ndarray) -> np.ndarray:
    """Per operation: the host event (sorted index) of the call that launched it, -1 where no flow ties one.

    tblextr puts a flow's ``s`` at ``begin_us + dur_us / 2`` of the call (whole microseconds, printed with ``%d``),
    unless the operation began before that: then at the operation's start.  A call whose middle is the ``s`` time is
    the launch; a flow moved to its operation's start is the first call on that thread, not yet tied, whose middle
    comes at or after it (a copy's call for a copy)."""
    out = np.full(len(ops), -1, np.int64)
    if not flows or not ops:
        return out
    at: dict[tuple[int, int, int], list[int]] = {}  # operations by (section pid, lane, start us), first one first
    for i, o in enumerate(ops):
        at.setdefault((o[5], o[6], o[7] if o[7] >= 0 else o[2] // 1000), []).append(i)
    op_pids = {o[5] for o in ops}
    copy_pids = {o[5] for o in ops if o[8]}
    calls = np.flatnonzero(~is_range_row)
    middle = start // 1000 + ((end - start) // 1000) // 2
    by_thread: dict[int, np.ndarray] = {}
    for t in np.unique(tid[calls]).tolist():
        mine = calls[tid[calls] == t]
        by_thread[t] = mine[np.lexsort((start[mine], middle[mine]))]
    taken = np.zeros(start.size, bool)
    pairs = sorted(((p["s"], p["t"]) for p in flows.values() if "s" in p and "t" in p), key=lambda x: (x[1][2], x[0][2]))
    moved = []
    for s, t in pairs:
        if t[0] not in op_pids or s[1] not in by_thread:
            continue  # not a launch (a sync's dependence runs from the GPU to the host)
        mine = by_thread[s[1]]
        lo, hi = np.searchsorted(middle[mine], s[2], "left"), np.searchsorted(middle[mine], s[2], "right")
        hit = [int(c) for c in mine[lo:hi] if not taken[c]]
        if hit and at.get(t):
            out[at[t].pop(0)] = hit[0]
            taken[hit[0]] = True
        elif s[2] == t[2]:
            moved.append((s, t))
    for s, t in moved:
        mine = by_thread[s[1]]
        k = int(np.searchsorted(middle[mine], s[2], "left"))
        want_copy = t[0] in copy_pids
        cand = next((int(c) for c in mine[k:] if not taken[c] and (copy_call[c] or not want_copy)), -1)
        if cand >= 0 and at.get(t):
            out[at[t].pop(0)] = cand
            taken[cand] = True
    return out


def _grid(call_name: list[str], call_args: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per operation: (blocks, threads per block) of its launch's arguments, -1 where it records none."""
    blocks = np.full(len(call_name), -1, np.int64)
    threads = np.full(len(call_name), -1, np.int64)
    for i, (c, a) in enumerate(zip(call_name, call_args)):
        if not a or not (devices.is_launch_call(c) or devices.grid_in_work_items(c)):
            continue
        g = w = None
        for gk, wk in (("numBlocks", "dimBlocks"), ("gridDim", "blockDim")):
            mg, mw = re.search(_DIMS.format(gk), a), re.search(_DIMS.format(wk), a)
            if mg and mw:
                g, w = [int(x) for x in mg.groups()], [int(x) for x in mw.groups()]
                break
        if g is None:
            for gk, wk in (("gridDim", "blockDim"), ("globalWorkSize", "localWorkSize")):
                gx, wx = [_arg(a, gk + d) for d in "ZYX"], [_arg(a, wk + d) for d in "ZYX"]
                if min(gx) > 0 and min(wx) > 0:
                    g, w = gx, wx
                    break
        if g is None or min(g) <= 0 or min(w) <= 0:
            continue
        if devices.grid_in_work_items(c):
            g = [-(-x // y) for x, y in zip(g, w)]
        blocks[i] = g[0] * g[1] * g[2]
        threads[i] = w[0] * w[1] * w[2]
    return blocks, threads



