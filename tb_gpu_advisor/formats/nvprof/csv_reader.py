"""nvprof's printed trace (``nvprof --csv --print-gpu-trace``; ``csv_layout.py`` for the file) -> the neutral
:class:`~tb_gpu_advisor.model.trace.Trace`.

What is decided here, once, from nvprof's own conventions (the console output's ``--csv`` form):

* the table is the rows after the header and its row of units, up to the first blank or console line; each time and
  size is read in the unit its column's cell of that row names (``s``, ``ms``, ``us``, ``ns``; ``B``, ``KB``, ``MB``,
  ``GB``: nvprof's are binary, 1 KB = 1024 B);
* a row naming a GPU (``Device``: ``NVIDIA Tegra X1 (0)``, the ordinal in parentheses) is GPU work: a copy or memset
  where its name is nvprof's ``[CUDA memcpy HtoD]`` / ``[CUDA memset]`` -- named as CUPTI names it to the other
  readers (``Memcpy HtoD (Pageable -> Device)``, from ``SrcMemType`` / ``DstMemType``) --, else a kernel, its name
  demangled where nvprof printed the symbol; one stream per ``Stream``; grid and block from their columns;
* a row naming no GPU is an API call (``--print-api-trace``), one host line for the process (nvprof prints no
  thread); a GPU row's launch is the call with its ``Correlation_ID``;
* each GPU is named by its ``Device`` cell; nothing else of it is printed;
* times are re-based to the earliest row, in picoseconds.

What the printing did not keep is said through ``Trace.printed_from`` / ``Trace.not_kept`` (the API calls where the
API rows were not printed, the threads, NVTX ranges, the GPU's properties): a report read from it judges what it holds
and says what it cannot.  A file with no header, no units row, a row cut short or a cell that is no number where one
must be, and a table with no row, are clear errors (:class:`NvprofCsvReadError`).
"""

from __future__ import annotations

import csv
import io
import os
import re

import numpy as np

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.common.demangle import demangle_all
from tb_gpu_advisor.formats.base import LIMIT_HINT, human_size, max_profile_bytes
from tb_gpu_advisor.formats.launch_links import launch_kinds
from tb_gpu_advisor.formats.hip_ops import device_events, host_events, trace_of
from tb_gpu_advisor.formats.nvprof.csv_layout import CONSOLE, header_at, kind_of, stem
from tb_gpu_advisor.model.damage import Damage, attach, cut, unreadable
from tb_gpu_advisor.model.trace import DeviceInfo, Trace

__all__ = ["NvprofCsvReadError", "read_trace", "TIME_BASE", "PRINTED_FROM"]

TIME_BASE = "ms from the first row of nvprof's printed trace (nvprof counts from its own start)"
PRINTED_FROM = ("nvprof's CSV output (nvprof --csv --print-gpu-trace: each GPU record printed as a row, the run's "
                "database not kept; nvprof --export-profile <name>.nvvp records it whole)")
#: Nanoseconds per time unit, bytes per size unit, as nvprof's units row names them.
_NS = {"s": 1e9, "ms": 1e6, "us": 1e3, "\u00b5s": 1e3, "ns": 1.0}
_BYTES = {"b": 1, "kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30}
_DEVICE = re.compile(r"^(.*?)\s*\((\d+)\)\s*$")
_COPY = re.compile(r"^\[CUDA (memcpy|memset)\s*(\w*)\]$", re.IGNORECASE)
_PID = re.compile(r"^==(\d+)==")
#: nvprof's own word that it lost records: ``======== Warning: 376746 records have invalid timestamps due to
#: insufficient device buffer space. You can configure the buffer space using the option --device-buffer-size.``
_INVALID = re.compile(r"^==(?:\d+|=+)== Warning: ([\d,]+) records have invalid timestamps")


class NvprofCsvReadError(ValueError):
    """A file that is no nvprof printed trace, or one that cannot be read."""


def read_trace(path: str, host: str | None = None, ranks: list[str] | None = None) -> Trace:
    """Read one nvprof CSV trace (``ranks`` is not used: each file is one run's printing)."""
    limit = max_profile_bytes()
    try:
        size = fsio.size(path)
        if size > limit:
            raise NvprofCsvReadError(f"{path}: {human_size(size)}, over the {human_size(limit)} limit ({LIMIT_HINT})")
        with fsio.open_binary(path) as fb:
            text = fb.read().decode("utf-8", errors="replace")
    except OSError as e:
        raise NvprofCsvReadError(f"cannot read {path}: {e}") from e
    return build(text, path, size, host or stem(os.path.basename(fsio.local_path(path))))


def _table(text: str, path: str) -> tuple[list[str], list[str], list[list[str]], int, int]:
    """(header cells, units cells, rows, pid, records nvprof said it could not time) of the printed table; the rows
    stop at the first blank or console line."""
    lines = text.lstrip("\ufeff").splitlines()
    at = header_at(lines)
    if at is None:
        raise NvprofCsvReadError(f"{path}: not nvprof's printed trace: no header row \"Start\",\"Duration\",...,\"Name\" "
                                 "after its console lines (nvprof --csv --print-gpu-trace)")
    pid = next((int(m.group(1)) for m in map(_PID.match, lines[:at]) if m), 0)
    invalid = sum(int(m.group(1).replace(",", "")) for m in map(_INVALID.match, lines[:at]) if m)
    body = []
    for line in lines[at + 1:]:
        if not line.strip() or CONSOLE.match(line):
            break
        body.append(line)
    try:
        rows = list(csv.reader(io.StringIO("\n".join([lines[at], *body]))))
    except csv.Error as e:
        raise _damaged(path, unreadable("csv_invalid", str(e))) from None
    head = [c.strip().lower() for c in rows[0]]
    if len(rows) < 2 or not rows[1] or rows[1][0].strip().lower() not in _NS:
        raise NvprofCsvReadError(f"{path}: nvprof's printed trace without its row of units after the header (s, ms, us "
                                 "or ns): its times cannot be read")
    units = [c.strip() for c in rows[1]] + [""] * len(head)
    out = rows[2:]
    ends_open = at + 1 + len(body) == len(lines) and not text.endswith(("\n", "\r"))  # the table runs to a cut end
    for i, row in enumerate(out):
        if len(row) != len(head):
            raise _damaged(path, _row_damage(i, row, head, last=i == len(out) - 1 and ends_open))
    return head, units, out, pid, invalid


def _row_damage(i: int, row: list[str], head: list[str], last: bool) -> Damage:
    """The damage of the table's row ``i`` whose cells are not its header's: the file's last row, short, on no closing
    newline is a file cut there (``csv_cut``: a copy or a run that stopped part-way, as the rocprofv3 CSV reader tells
    it); any other a row that does not read (``csv_invalid``), nothing said missing past it."""
    if last and len(row) < len(head):
        return cut("csv_cut", f"cut short in row {i + 1:,} of its table: {len(row)} cells, its header {len(head)} (a "
                   "copy or a run cut part-way)", record=i + 1)
    return unreadable("csv_invalid", f"row {i + 1:,} of its table has {len(row)} cells, its header {len(head)}",
                      record=i + 1)


def _damaged(path: str, damage: Damage) -> NvprofCsvReadError:
    """The read error of a damaged printed trace, carrying its record (``model.damage.attach``): the file and the
    damage's words, the one form every damaged nvprof CSV is said in."""
    return attach(NvprofCsvReadError(f"{path}: damaged nvprof CSV: {damage}"), damage)  # type: ignore[return-value]


def _numbers(rows: list[list[str]], col: int, path: str, name: str, scale: float = 1.0) -> np.ndarray:
    """A column as float, times ``scale``; NaN for an empty cell."""
    out = np.full(len(rows), np.nan)
    for i, r in enumerate(rows):
        v = r[col].strip() if col >= 0 else ""
        if v:
            try:
                out[i] = float(v) * scale
            except ValueError:
                raise _damaged(path, unreadable("csv_not_a_number", f"{name} holds {v[:40]!r}, not a number",
                                                record=i + 1)) from None
    return out


def build(text: str, path: str, size: int, host: str) -> Trace:
    head, units, rows, pid, invalid = _table(text, path)
    kind = kind_of(head)
    col = {c: i for i, c in enumerate(head)}
    if not rows:
        raise NvprofCsvReadError(f"{path}: no events: nvprof's printed trace holds no row (was the program's GPU work "
                                 "outside the profiled range?)")

    def ncol(name: str) -> int:
        return col.get(name, -1)

    def unit_of(name: str, table: dict[str, float]) -> float:
        u = units[ncol(name)].lower() if ncol(name) >= 0 else ""
        if u not in table:
            raise NvprofCsvReadError(f"{path}: nvprof's printed trace: the unit of {name} is {u!r}, none of "
                                     f"{', '.join(table)}")
        return table[u]

    start = np.rint(_numbers(rows, ncol("start"), path, "Start", unit_of("start", _NS)))
    dur = np.rint(_numbers(rows, ncol("duration"), path, "Duration", unit_of("duration", _NS)))
    if np.isnan(start).any():
        raise _damaged(path, unreadable("csv_no_start", "a row with no Start"))
    dur = np.nan_to_num(dur, nan=0.0)
    cell = [lambda r, c=ncol(n): r[c].strip() if c >= 0 else "" for n in ("device", "name", "stream", "srcmemtype",
                                                                         "dstmemtype")]
    device_txt, names, stream_txt, src_txt, dst_txt = ([f(r) for r in rows] for f in cell)
    on_gpu = np.array([bool(d) for d in device_txt], bool)
    corr = _numbers(rows, ncol("correlation_id"), path, "Correlation_ID")
    corr = np.where(np.isnan(corr), -1, corr).astype(np.int64)
    notes: list[str] = []

    # ---- host: the API rows, one line for the process (nvprof prints no thread)
    api = np.flatnonzero(~on_gpu)
    interned: dict[str, int] = {}
    name_idx = np.array([interned.setdefault(names[i] or "(unnamed call)", len(interned)) for i in api.tolist()],
                        np.int64)
    a_start, a_end = start[api].astype(np.int64), (start[api] + dur[api]).astype(np.int64)
    order = np.lexsort((a_start - a_end, a_start)) if api.size else np.zeros(0, np.intp)
    api, name_idx, a_start, a_end = api[order], name_idx[order], a_start[order], a_end[order]
    a_corr = corr[api]

    # ---- GPU rows
    ops = np.flatnonzero(on_gpu)
    o_start = start[ops].astype(np.int64)
    o_end = (start[ops] + dur[ops]).astype(np.int64)
    gpu_of: dict[str, tuple[int, str]] = {}
    for d in sorted({device_txt[i] for i in ops.tolist()}):
        m = _DEVICE.match(d)
        gpu_of[d] = (int(m.group(2)), m.group(1)) if m else (len(gpu_of), d)
    gpu = np.array([gpu_of[device_txt[i]][0] for i in ops.tolist()], np.int64)
    copy_m = [_COPY.match(names[i]) for i in ops.tolist()]
    is_copy = np.array([m is not None for m in copy_m], bool)
    kernel_names = demangle_all({names[i] for i, m in zip(ops.tolist(), copy_m) if m is None})
    op_names = np.array([_copy_name(m, src_txt[i], dst_txt[i]) if m else (kernel_names.get(names[i]) or names[i]
                                                                          or "(unnamed kernel)")
                         for i, m in zip(ops.tolist(), copy_m)], dtype=object)
    streams = np.array([int(stream_txt[i]) if stream_txt[i].lstrip("-").isdigit() else -1 for i in ops.tolist()],
                       np.int64)
    # a row with no stream number (no Stream column, a blank cell) names no stream (``DeviceEvents.stream_unrecorded``)
    unrecorded = np.array([not stream_txt[i].lstrip("-").isdigit() for i in ops.tolist()], bool)
    nbytes = np.full(ops.size, -1, np.int64)
    if ncol("size") >= 0 and is_copy.any():
        b = _numbers([rows[i] for i in ops.tolist()], ncol("size"), path, "Size", unit_of("size", _BYTES))
        nbytes = np.where(np.isnan(b) | ~is_copy, -1, np.rint(np.nan_to_num(b))).astype(np.int64)
    blocks = np.full(ops.size, -1, np.int64)
    threads = np.full(ops.size, -1, np.int64)
    if ncol("grid x") >= 0 and ncol("block x") >= 0:
        sub = [rows[i] for i in ops.tolist()]
        g = [_numbers(sub, ncol(f"grid {a}"), path, f"Grid {a.upper()}") for a in "xyz"]
        w = [_numbers(sub, ncol(f"block {a}"), path, f"Block {a.upper()}") for a in "xyz"]
        known = ~np.isnan(g[0]) & ~np.isnan(w[0]) & (np.nan_to_num(g[0]) > 0) & ~is_copy
        g = [np.maximum(np.nan_to_num(x, nan=1.0), 1) for x in g]
        w = [np.maximum(np.nan_to_num(x, nan=1.0), 1) for x in w]
        blocks = np.where(known, g[0] * g[1] * g[2], -1).astype(np.int64)
        threads = np.where(known, w[0] * w[1] * w[2], -1).astype(np.int64)

    parts = [x for x in (a_start, o_start) if x.size]
    origin = int(min(int(x.min()) for x in parts))
    names_list = list(interned)
    h_corr = np.arange(api.size, dtype=np.int64)
    h = host_events(a_start, a_end, name_idx, np.zeros(api.size, np.int64), np.array([pid << 32], np.int64), h_corr,
                    names_list, origin)
    if len(h):
        h.line_names = [f"process {pid} (nvprof prints no thread)" if pid else "the process (nvprof prints no thread)"]

    # ---- each GPU row's launch: the API row with its correlation id
    launch = np.full(ops.size, -1, np.int64)
    if api.size and ops.size:
        oc = np.argsort(a_corr, kind="stable")
        keys = a_corr[oc]
        k = np.clip(np.searchsorted(keys, corr[ops]), 0, keys.size - 1)
        hit = (corr[ops] > 0) & (keys[k] == corr[ops])
        launch[hit] = oc[k[hit]]
    d_corr = np.where(launch >= 0, launch, -1)
    op_of_launch = launch
    call_name = [names_list[int(name_idx[i])] if i >= 0 else "" for i in launch.tolist()]
    rkind, sync, graph = launch_kinds(names_list, call_name, op_names, is_copy, interned, d_corr)
    host_kind = np.full(ops.size, -1, np.int8)
    devs = []
    for gid in sorted(set(gpu.tolist())):
        sel = np.flatnonzero(gpu == gid)
        sel = sel[np.lexsort((o_end[sel], o_start[sel]))]
        model = next(n for d, (g, n) in gpu_of.items() if g == gid)
        devs.append(device_events(int(gid), sel, DeviceInfo(name=model or None), streams, "stream", o_start, o_end,
                                  op_names, origin, d_corr, op_of_launch, h, nbytes, sync, graph, blocks, threads,
                                  host_kind, is_copy, unrecorded))
    trace = trace_of("nvprof-csv", host, path, size, h, devs, notes, None, TIME_BASE)
    trace.printed_from = PRINTED_FROM
    trace.not_kept = not_kept(kind == "api", api.size > 0, ops.size > 0, invalid)
    if api.size and not ops.size:  # the calls alone were printed: the GPU's side was recorded, never printed
        trace.producer.update(unrecorded_cause="nvprof printed only the API's calls (--print-api-trace without "
                                               "--print-gpu-trace): the GPU's rows of the run were not printed",
                              unrecorded_fix="gpu_unprinted", unrecorded_activity="GPU")
    return trace


def not_kept(api_only: bool, api_rows: bool, gpu_rows: bool, invalid: int = 0) -> tuple[str, ...]:
    """What a capture read from nvprof's printed trace lacks because the printing did not keep it, each in words
    (``Trace.not_kept``): the API calls where no API row was printed (``--print-api-trace`` not given: the GPU's work
    alone, no host side, so no launch, wait or copy call is seen), the GPU's rows where only the API's were, the
    threads of the calls, the NVTX ranges (no op names), and the GPU's properties (SMs, compute capability, memory:
    no peak, no occupancy); and the records nvprof itself said it could not time (``invalid``: its device buffer was
    full), which the rows lack.

    Why: read whole, the printing is a timeline of the GPU, yet a report of it that said nothing of the host would read
    as "the host is healthy" (survey h37-wild57n)."""
    lost = []
    if not api_rows:
        lost.append("the CUDA API calls (--print-api-trace not given): no launch, synchronization or copy call of the "
                    "host is seen, so launch overhead, host waits and input stalls are not judged")
    else:
        lost.append("the threads of the API calls (all are read on one line of the process)")
    if api_only or not gpu_rows:
        lost.append("the GPU's rows (--print-gpu-trace not given): no kernel or copy is timed")
    if invalid:
        lost.append(f"{invalid:,} GPU records nvprof could not time (its warning: its device buffer was full; "
                    "--device-buffer-size raises it): the GPU's work is more than its rows")
    lost.append("the NVTX ranges and framework ops: kernels are not tied to the model's layers")
    lost.append("the GPU's properties (SMs, compute capability, memory) beyond its name: no peak or occupancy is "
                "judged")
    return tuple(lost)


def _copy_name(m: re.Match, src: str, dst: str) -> str:
    """A copy as CUPTI names it to PyTorch's profiler and the other readers: ``Memcpy HtoD (Pageable -> Device)``;
    a memset ``Memset (Device)``."""
    if m.group(1).lower() == "memset":
        return f"Memset ({src or 'Device'})"
    base = f"Memcpy {m.group(2)}" if m.group(2) else "Memcpy"
    return f"{base} ({src or 'Unknown'} -> {dst or 'Unknown'})" if src or dst else base
