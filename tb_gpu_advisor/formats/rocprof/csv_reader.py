"""rocprofv3's CSV output (``csv_layout.py`` for its files) -> the neutral :class:`~tb_gpu_advisor.model.trace.Trace`.

What is decided here, once, from the writer's own conventions (rocprofiler-sdk's ``generateCSV.cpp``, ``metadata.cpp``):

* one capture is the files of one run (``ranks``: every file discovery grouped; a file given alone is read alone);
  each file is what its header says, never its name;
* host events are the API traces' rows whose ``Domain`` is HIP's (``HIP_RUNTIME_API*``, ``HIP_COMPILER_API*``) -- the
  calls -- and the roctx ranges: ``MARKER_CORE_RANGE_API`` rows, and ``MARKER_CORE_API`` rows that last and are not the
  marker API's own calls (``roctxGetThreadId``; older rocprofv3 wrote ranges there).  A mark (no duration), the
  marker API's control and naming calls, HSA's, RCCL's and the other layers' calls are left out, counted in the
  notes.  One line per (``Process_Id``, ``Thread_Id``);
* device events are the kernel trace's dispatches and the copy trace's copies (named by their ``Direction``, read as
  roctracer's ``CopyHostToDevice`` ...; the CSV records no size), each on its GPU: ``Agent_Id`` is ``Agent <n>``
  (``--agent-index relative``, the default: the agent whose ``Logical_Node_Id`` is n; ``absolute``: its ``Node_Id``),
  ``GPU <n>`` (type-relative: the n-th GPU by node) or, before ROCm 6.4, the bare node id; a copy is on the GPU end
  of it.  One stream per ``Stream_Id`` (per ``Queue_Id`` where the file has no streams); a copy trace with neither
  column (ROCm 6.2's) records no copy's stream: its copies are on one stream marked not recorded;
* an operation's launch is the HIP call with its ``Correlation_Id`` (the tool's internal correlation id, shared by a
  call and the work it launched);
* a kernel's grid is HSA's (``Grid_Size_*``, work-items) divided by its workgroup;
* each GPU's model is ``agent_info.csv``'s ``Product_Name`` (its ``Vendor_Name`` before it where missing), its
  compute units ``Cu_Count``; without agent info the GPU is named an AMD GPU of unknown model;
* times are ns re-based to the earliest record, in picoseconds.

Every file is read whole, the capture's files together bounded by the profile size limit.  A file that is no
rocprofv3 CSV, one whose header lacks a column the reader needs, one cut short or with a cell that is no number where
one must be, and a capture with no record, are clear errors (:class:`RocprofCsvReadError`).
"""

from __future__ import annotations

import csv
import io
import os
import re

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.formats.base import LIMIT_HINT, human_size, max_profile_bytes
from tb_gpu_advisor.formats.launch_links import graph_launches
from tb_gpu_advisor.formats.hip_ops import GPU_NAME, copies_host_side, copy_name, device_events, gpu_named, \
    host_events, launch_call_times, roctx_ranges, trace_of, with_arch
from tb_gpu_advisor.formats.rocprof.csv_layout import KINDS, header_cells, kind_of, prefix
from tb_gpu_advisor.model.columns import unique_inverse
from tb_gpu_advisor.model.enclosing import innermost_range
from tb_gpu_advisor.model.trace import DeviceInfo, Trace
from tb_gpu_advisor.model.damage import Damage, attach, cut, unreadable

__all__ = ["RocprofCsvReadError", "read_trace", "build", "TIME_BASE"]

TIME_BASE = "ms from the first record of the rocprofv3 CSV files (the process's start is not their clock's zero)"
CALLS = ("HIP_RUNTIME_API", "HIP_COMPILER_API")
RANGES = ("MARKER_CORE_RANGE_API", "MARKER_CORE_API")
#: The marker API's own calls, as rocprofv3 names a row of one (``roctxGetThreadId``): no range of the program's.
_ROCTX_CALL = re.compile(r"^roctx[A-Z]\w*$")
_AGENT = re.compile(r"^\s*(?:(agent|gpu|cpu)\s*)?(\d+)\s*$", re.IGNORECASE)


class RocprofCsvReadError(ValueError):
    """A file that is no rocprofv3 CSV, or one that cannot be read."""


def read_trace(path: str, host: str | None = None, ranks: list[str] | None = None) -> Trace:
    """Read one rocprofv3 CSV capture: the files ``ranks`` (discovery's group of one run), else ``path`` alone."""
    files = list(ranks) if ranks else [path]
    limit = max_profile_bytes()
    sizes = []
    for f in files:
        try:
            sizes.append(fsio.size(f))
        except OSError as e:
            raise RocprofCsvReadError(f"cannot read {f}: {e}") from e
    if sum(sizes) > limit:
        raise RocprofCsvReadError(f"{path}: the capture's CSV files are {human_size(sum(sizes))}, over the "
                                  f"{human_size(limit)} limit ({LIMIT_HINT})")
    tables: dict[str, list[dict[str, list[str]]]] = {k: [] for k in KINDS}
    for f in files:
        kind, cols = _table(f)
        tables[kind].append(cols)
    return build(tables, path, sum(sizes), host or prefix(os.path.basename(fsio.local_path(path))))


def _table(path: str) -> tuple[str, dict[str, list[str]]]:
    """One file's kind and its columns (lower-cased names -> cells), every row as long as its header."""
    try:
        with fsio.open_binary(path) as fb:
            text = fb.read().decode("utf-8", errors="replace")
    except OSError as e:
        raise RocprofCsvReadError(f"cannot read {path}: {e}") from e
    if not text.strip():
        raise RocprofCsvReadError(f"{path}: empty file: no rocprofv3 CSV header (a run that stopped before writing)")
    try:
        return _rows(csv.reader(io.StringIO(text.lstrip("\ufeff"))), text, path)
    except csv.Error as e:  # a NUL byte, a cell past the csv module's limit: no file rocprofv3 writes
        raise _damaged(path, unreadable("csv_invalid", str(e))) from None


def _rows(rows, text: str, path: str) -> tuple[str, dict[str, list[str]]]:  # noqa: ANN001 - a csv.reader
    head = [c.strip().lower() for c in next(rows)]
    kind = kind_of(head)
    if "\n" not in text and "\r" not in text:  # its header never ends (claimed by its name where it says no kind)
        raise _damaged(path, cut("csv_cut", "cut short in its header row, before any record (a copy or a run that "
                                 "stopped part-way)", record=0))
    if kind is None:
        got = ", ".join(header_cells(",".join(head))[:8])
        raise RocprofCsvReadError(f"{path}: not a rocprofv3 CSV trace: its header ({got}) is none of a kernel, API, "
                                  "memory copy trace's or agent info's (rocprofv3 --output-format csv)")
    cols: dict[str, list[str]] = {c: [] for c in head}
    n = len(head)
    ends_clean = text.endswith("\n")
    body = list(rows)
    for i, row in enumerate(body):
        if not row:
            continue
        if len(row) != n:
            last = i == len(body) - 1
            if last and len(row) < n and not ends_clean:
                why = f"cut short in its row {i + 1:,} (a copy or a run that stopped part-way)"
                raise attach(RocprofCsvReadError(f"{path}: damaged rocprofv3 CSV: {why}"),
                             cut("csv_cut", why, record=i + 1))
            raise _damaged(path, unreadable("csv_invalid", f"row {i + 1:,} has {len(row)} cells, its header {n}",
                                            record=i + 1))
        for c, v in zip(head, row):
            cols[c].append(v)
    return kind, cols


def _damaged(path: str, damage: Damage) -> RocprofCsvReadError:
    """The read error of a damaged rocprofv3 CSV, carrying its record (``model.damage.attach``): the file and the
    damage's words, the one form every damaged CSV of the capture is said in."""
    return attach(RocprofCsvReadError(f"{path}: damaged rocprofv3 CSV: {damage}"), damage)  # type: ignore[return-value]


def _ints(cols: dict[str, list[str]], name: str, path: str, default: int | None = None) -> np.ndarray:
    """A column as int64; ``default`` where the file has no such column (None: it must have it)."""
    if name not in cols:
        if default is None:
            raise _damaged(path, unreadable("csv_no_column", f"no column {name}"))
        n = len(next(iter(cols.values()), []))
        return np.full(n, default, np.int64)
    try:
        return np.array([int(v) if v.strip() else -1 for v in cols[name]], np.int64)
    except ValueError:
        bad = next(v for v in cols[name] if v.strip() and not v.strip().lstrip("-").isdigit())
        raise _damaged(path, unreadable("csv_not_a_number", f"{name} holds {bad[:40]!r}, not a number")) from None


def _cat(tables: list[dict[str, list[str]]], name: str, path: str, default: int | None = None) -> np.ndarray:
    parts = [_ints(t, name, path, default) for t in tables]
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def _strs(tables: list[dict[str, list[str]]], name: str) -> list[str]:
    n = [len(next(iter(t.values()), [])) for t in tables]
    return [v for t, k in zip(tables, n) for v in (t.get(name) or [""] * k)]


def _agents(tables: list[dict[str, list[str]]], path: str) -> dict[tuple[str, int], tuple[int, DeviceInfo | None]]:
    """Each way a trace may name an agent (``("agent", logical)``, ``("node", id)``, ``("gpu", n)``) -> (its GPU index,
    its model); a CPU agent's index is -1."""
    out: dict[tuple[str, int], tuple[int, DeviceInfo | None]] = {}
    rows = []
    for t in tables:
        node, logical = _ints(t, "node_id", path), _ints(t, "logical_node_id", path, -1)
        units = _ints(t, "cu_count", path, 0)
        typ, prod = t.get("agent_type", []), t.get("product_name") or t.get("name") or [""] * node.size
        vend = t.get("vendor_name") or [""] * node.size
        gfx = t.get("name") or [""] * node.size  # the agent's GFX id (``gfx1035``): the generation a generic name hides
        rows += [(int(node[i]), int(logical[i]), typ[i].strip().upper(),
                  with_arch(prod[i].strip(), devices.amd.gfx_id(gfx[i])), vend[i].strip(),
                  int(units[i])) for i in range(node.size)]
    gpus = sorted((r for r in rows if r[2] == "GPU"), key=lambda r: r[0])
    for r in rows:
        idx, info = -1, None
        if r[2] == "GPU":
            idx = gpus.index(r)
            info = DeviceInfo(name=gpu_named(r[3], r[4]), sm_count=r[5] or None)
            out[("gpu", idx)] = (idx, info)
        out[("node", r[0])] = (idx, info)
        if r[1] >= 0:
            out[("agent", r[1])] = (idx, info)
    return out


def _gpu_of(token: str, agents: dict[tuple[str, int], tuple[int, DeviceInfo | None]]) -> int:
    """The GPU index an ``Agent_Id`` cell names (-1: a CPU; without agent info: the number it holds)."""
    m = _AGENT.match(token)
    if not m:
        return -2
    word, n = (m.group(1) or "").lower(), int(m.group(2))
    if word == "cpu":
        return -1
    if word == "gpu":
        return agents.get(("gpu", n), (n, None))[0]
    if not agents:
        return n
    hit = agents.get(("agent", n)) if word == "agent" else None
    hit = hit or agents.get(("node", n))
    return hit[0] if hit else -2


#: The rocprofv3 option each kind of file is written by (``rocprofv3 --help``; ``--runtime-trace`` writes them all).
_TRACED_BY = (("kernel", "kernel", "--kernel-trace"), ("api", "HIP API", "--hip-trace"),
              ("copy", "memory copy", "--memory-copy-trace"))


def _traced_empty(tables: dict[str, list[dict[str, list[str]]]]) -> str:
    """Why a capture with no record holds none, in words ending its error: where a file of a kind of record was
    written (its header, no row: ``<pid>_kernel_trace.csv``), that trace was on and the program made none of it
    while rocprofv3 recorded -- not "was it run without --kernel-trace?", which the file answers (h37-window69: the
    one rule's "never tell a capture to turn on a trace it shows was on"); else the question, as before."""
    on = [(noun, flag) for kind, noun, flag in _TRACED_BY
          if tables.get(kind) and not any(len(next(iter(t.values()), [])) for t in tables[kind])]
    if not on:
        return " (was it run without --runtime-trace / --kernel-trace?)"
    many = len(on) > 1
    return (f": its {' and '.join(n for n, _ in on)} trace{'s were' if many else ' was'} on "
            f"({', '.join(f for _, f in on)}: {'their files are' if many else 'its file is'} here, empty): nothing "
            f"of {'them' if many else 'it'} happened while rocprofv3 recorded -- the program stopped before its GPU "
            "work, or that work ran in a process rocprofv3 did not follow: profile the command that runs the steps, "
            "with --runtime-trace (its HIP calls show how far it got)")


def build(tables: dict[str, list[dict[str, list[str]]]], path: str, size: int, host: str,
          fmt: str = "rocprofv3-csv", time_base: str = TIME_BASE, what: str = "rocprofv3 CSV files") -> Trace:
    """The trace of rocprofv3's records laid out as its CSV files' columns (``tables``: per kind of file, each file's
    lower-cased columns of cells); the JSON reader lays its records out so too.  A copy's size is its ``bytes``
    column where the records have one (the JSON's; the CSV records none)."""
    notes: list[str] = []
    api, kern, cop = tables["api"], tables["kernel"], tables["copy"]
    agents = _agents(tables["agents"], path)

    # ---- host rows: HIP's calls and roctx's ranges
    domain = np.array([d.strip() for d in _strs(api, "domain")], dtype=object)
    func = _strs(api, "function")
    a_start, a_end = _cat(api, "start_timestamp", path), _cat(api, "end_timestamp", path)
    a_pid, a_tid = _cat(api, "process_id", path, 0), _cat(api, "thread_id", path, 0)
    a_corr = _cat(api, "correlation_id", path, -1)
    is_call = np.array([d.startswith(CALLS) for d in domain.tolist()], bool)
    is_range = np.array([d.startswith(RANGES) and e > b and not _ROCTX_CALL.match(f)
                         for d, f, b, e in zip(domain.tolist(), func, a_start.tolist(), a_end.tolist())], bool)
    keep = is_call | is_range
    if (~keep).any():
        left: dict[str, int] = {}
        for d, r in zip(domain[~keep].tolist(), np.asarray([d.startswith(RANGES) for d in domain.tolist()], bool)[~keep]):
            key = "roctx marks and the marker API's own calls" if r else (d or "(no domain)")
            left[key] = left.get(key, 0) + 1
        notes.append(f"host records of other layers ({int(np.count_nonzero(~keep)):,}: "
                     f"{', '.join(sorted(left)[:4])}) left out: the runtime's own layers, libraries and markers "
                     "that are no range")
    n_k = sum(len(next(iter(t.values()), [])) for t in kern)
    n_c = sum(len(next(iter(t.values()), [])) for t in cop)
    if not keep.any() and not n_k and not n_c:
        raise RocprofCsvReadError(f"{path}: no events: the {what} hold no HIP call, roctx range or GPU "
                                  f"operation{_traced_empty(tables)}")
    idx = np.flatnonzero(keep)
    interned: dict[str, int] = {}
    name_idx = np.array([interned.setdefault(func[i].strip() or "(unnamed)", len(interned)) for i in idx.tolist()],
                        np.int64)
    names = list(interned)
    start, end = a_start[idx], np.maximum(a_end[idx], a_start[idx])
    corr_in, rng = a_corr[idx], is_range[idx]
    ulines, line = unique_inverse(a_pid[idx] * (1 << 32) + (a_tid[idx] & 0xFFFFFFFF))
    order = np.lexsort((start - end, start, line)) if line.size else np.zeros(0, np.intp)
    line, name_idx, start, end, corr_in, rng = (x[order] for x in (line, name_idx, start, end, corr_in, rng))

    # ---- operations: kernels then copies
    k_name = [n.strip() or "(unnamed kernel)" for n in _strs(kern, "kernel_name")]
    k_agent = _strs(kern, "agent_id")
    c_dir = [d.strip() for d in _strs(cop, "direction")]
    c_src, c_dst = _strs(cop, "source_agent_id"), _strs(cop, "destination_agent_id")
    k_gpu = [_gpu_of(a, agents) for a in k_agent]
    c_gpu = []
    for s, d in zip(c_src, c_dst):
        gd, gs = _gpu_of(d, agents), _gpu_of(s, agents)
        c_gpu.append(gd if gd >= 0 else gs)
    if not agents and c_gpu:  # bare numbers, no agent info: a copy's GPU end is not told; the GPU the kernels ran on
        known = sorted(set(k_gpu) - {-1, -2})
        c_gpu = [known[0] if known else 0] * len(c_gpu)
    has_streams = all("stream_id" in t for t in kern + cop)
    o_start = np.concatenate([_cat(kern, "start_timestamp", path), _cat(cop, "start_timestamp", path)])
    o_end = np.maximum(np.concatenate([_cat(kern, "end_timestamp", path), _cat(cop, "end_timestamp", path)]), o_start)
    queue_col = "stream_id" if has_streams else "queue_id"
    streams = np.concatenate([_cat(kern, queue_col, path, 0), _cat(cop, queue_col, path, 0)])
    # a table with no such column (a copy trace of neither Stream_Id nor Queue_Id) records no operation's stream: its
    # filler 0 is no queue of the GPU's (``DeviceEvents.stream_unrecorded``)
    unrecorded = np.concatenate([np.full(len(next(iter(t.values()), [])), queue_col not in t, bool)
                                 for t in kern + cop] or [np.zeros(0, bool)])
    o_corr = np.concatenate([_cat(kern, "correlation_id", path, -1), _cat(cop, "correlation_id", path, -1)])
    gpu = np.array(k_gpu + c_gpu, np.int64)
    if (gpu < 0).any():
        k = int(np.count_nonzero(gpu < 0))
        notes.append(f"{k:,} GPU record{'s' if k > 1 else ''} on an agent the agent info names no GPU left out")
    op_names = np.array(k_name + [copy_name(d) for d in c_dir], dtype=object)
    is_copy = np.concatenate([np.zeros(n_k, bool), np.ones(n_c, bool)])
    parts = [x for x in (start, o_start) if x.size]
    origin = int(min(int(x.min()) for x in parts))

    call_rows = np.flatnonzero(~rng)
    h_corr = np.full(start.size, -1, np.int64)
    h_corr[call_rows] = np.arange(call_rows.size)
    h = host_events(start, end, name_idx, line, ulines, h_corr, names, origin)
    ranges = roctx_ranges(h, rng, "roctx ranges (rocprofv3 marker API records)")

    # ---- each operation's launch: the HIP call with its correlation id
    launch = np.full(o_start.size, -1, np.int64)
    if call_rows.size and o_start.size:
        cc = corr_in[call_rows]
        oc = np.argsort(cc, kind="stable")
        keys = cc[oc]
        k = np.clip(np.searchsorted(keys, o_corr), 0, keys.size - 1)
        hit = (o_corr >= 0) & (keys[k] == o_corr)
        launch[hit] = call_rows[oc][k[hit]]
    d_corr = np.where(launch >= 0, h_corr[np.maximum(launch, 0)] if h_corr.size else -1, -1)
    op_of_launch = innermost_range(h, rng, launch)
    call_name = [names[int(name_idx[i])] if i >= 0 else "" for i in launch.tolist()]
    sized = bool(cop) and all("bytes" in t for t in cop)
    nbytes = np.concatenate([np.full(n_k, -1, np.int64), _cat(cop, "bytes", path, -1)])
    call_start, call_end = launch_call_times(launch, start, end)
    sync, host_kind = copies_host_side(gpu, o_start, o_end, op_names, call_name, is_copy, call_start,
                                               "rocprofv3", notes, call_end)
    graph = graph_launches(call_name, d_corr)
    blocks = np.full(o_start.size, -1, np.int64)
    threads = np.full(o_start.size, -1, np.int64)
    if n_k:
        w = [_cat(kern, f"workgroup_size_{a}", path, 0) for a in "xyz"]
        g = [_cat(kern, f"grid_size_{a}", path, 0) for a in "xyz"]
        known = (g[0] > 0) & (w[0] > 0)
        w = [np.maximum(x, 1) for x in w]
        g = [np.maximum(x, 1) for x in g]
        blocks[:n_k] = np.where(known, (-(-g[0] // w[0])) * (-(-g[1] // w[1])) * (-(-g[2] // w[2])), -1)
        threads[:n_k] = np.where(known, w[0] * w[1] * w[2], -1)
    models = {i: info for i, info in agents.values() if i >= 0}
    devs = []
    for gid in sorted(set(gpu.tolist()) - {-1, -2}):
        sel = np.flatnonzero(gpu == gid)
        sel = sel[np.lexsort((o_end[sel], o_start[sel]))]
        info = models.get(int(gid)) or DeviceInfo(name=GPU_NAME)
        devs.append(device_events(int(gid), sel, info, streams, "stream" if has_streams else "queue", o_start, o_end,
                                  op_names, origin, d_corr, op_of_launch, h, nbytes, sync, graph, blocks, threads,
                                  host_kind, is_copy, unrecorded))
    if devs and not models:
        notes.append("no agent info (rocprofv3's agent_info.csv) beside the traces: the GPU is named an AMD GPU of "
                     "unknown model, and nothing is said of its peak or its compute units")
    if n_c and not sized:
        notes.append("rocprofv3's CSV copy trace records no copy's size: copies are timed, their bytes unknown")
    return trace_of(fmt, host, path, size, h, devs, notes, ranges, time_base)
