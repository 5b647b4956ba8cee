"""Nsight Systems SQLite export -> the neutral :class:`~tb_gpu_advisor.model.trace.Trace`.

What is decided here, once, from the export's own conventions (``tables.py`` for the schema):

* host events are the CUDA runtime (and driver) calls, their version suffixes stripped (``cudaLaunchKernel_v7000``
  -> ``cudaLaunchKernel``), and the NVTX push/pop and start/end ranges, one line per thread (``globalTid``); NVTX
  names are their ``text`` or ``StringIds[textId]``, PyTorch's autograd ranges (``aten::mm, seq = 1, op_id = 2``)
  read as the op's name (``frameworks.nvtx``); domains and which ranges are ops are kept as ``Trace.ranges``;
* device events are kernels, copies, memsets and CUDA graph executions (``--cuda-graph-trace=graph``: one row per
  graph launch; ``node`` mode gives the graph's kernels with their ``graphId``), per GPU (``deviceId``), one stream
  per (process, ``streamId``); a copy is named as CUPTI names it to PyTorch (``Memcpy HtoD (Pinned -> Device)``),
  so its direction and its host memory kind (pageable or pinned) are in its name;
* a device event's launch is the runtime call with the same ``correlationId`` *in the same process* (correlation
  ids are per process: two ranks' ids collide), its op the innermost NVTX range around that launch on the
  launching thread -- the ATen op under ``--pytorch=autograd-nvtx``, else the user's own block;
* host syncs are the sync calls themselves (``cudaStreamSynchronize``, ``cudaDeviceSynchronize``,
  ``cudaEventSynchronize``): every synchronisation record (``CUPTI_ACTIVITY_KIND_SYNCHRONIZATION``) belongs to one of
  them (same correlation id) and adds nothing the call's name does not say -- its ``deviceId`` is 0 for every
  process in real exports -- so the table is not read (``tests/crosscheck/test_nsys_ai.py`` checks the calls against
  nsys-ai's reading of the records);
* the GPU model comes from ``TARGET_INFO_GPU``, else ``TARGET_INFO_CUDA_DEVICE``, else (Nsight 2020-2021, both
  keyed by ``deviceId``) ``TARGET_INFO_CUDA_GPU``'s properties or ``TARGET_INFO_GPU``'s name; where none names it, the
  report says so (the kernels' architecture families are named as a hint);
* times are re-based to the earliest event, in picoseconds; windows count from the session's start
  (``ANALYSIS_DETAILS.startTime``), as the Nsight Systems timeline shows them;
* an export without a kernel table (or graph executions) is a window that holds no GPU work: it is read like any
  other (its runtime calls, NVTX ranges, copies and memsets), and the job stage says what the window holds; the
  capture's own options (``META_DATA_CAPTURE``: CUDA / NVTX tracing on or off, what started and stopped the window)
  are kept as ``Trace.producer`` facts (``cuda_trace``, ``nvtx_trace``, ``capture_start``, ``capture_stop``; the OS
  runtime trace and its threshold, ``os_runtime_trace``, ``os_runtime_threshold_ns``), so a
  report says "CUDA tracing was off" only where the export says so.  Launches whose kernels the export does not
  hold are GPU records the profiler lost, read as any such capture (``job.kind``: a report whose first finding says
  so, not damage to the file), as in every format.

Several exports of one machine (one per rank, ``report_rank%q{RANK}``) are read as one trace, their GPUs side by
side (``ranks=``), each moved onto the first-started session's clock by its session's start (``utcEpochNs``): each
export's times count from its own session's start.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.devices.collectives import MAX_RANKS
from tb_gpu_advisor.formats.base import program_failure, reported_failure
from tb_gpu_advisor.formats import sqlite
from tb_gpu_advisor.formats.nsys import export, tables as tb
from tb_gpu_advisor.formats.nsys.layout import is_report
from tb_gpu_advisor.formats.nsys.secrets import masked_words
from tb_gpu_advisor.formats.nsys.tables import NsysReadError
from tb_gpu_advisor.frameworks import nvtx, pytorch, xla
from tb_gpu_advisor.frameworks.nvtx import framework_shown
from tb_gpu_advisor.model.columns import absent_as_broadcast, int_dtype, narrowest, sorted_unique, unique_inverse
from tb_gpu_advisor.model.damage import attach, unreadable
from tb_gpu_advisor.model.enclosing import innermost_range
from tb_gpu_advisor.model.trace import (OFF_CPU, STREAM_BLOCKING, STREAM_LEGACY_DEFAULT, STREAM_NON_BLOCKING,
                                       STREAM_PER_THREAD_DEFAULT, DeviceEvents, DeviceInfo, HostEvents, HostRanges,
                                       HostWaits, StreamWaits, Trace)

__all__ = ["NsysReadError", "read_trace", "TIME_BASE", "NOTHING_RECORDED"]

#: Where an Nsight report's times count from (``Trace.time_base``).
TIME_BASE = "ms from the start of the Nsight Systems session, as the Nsight Systems timeline shows them"
#: The error of an export that recorded no event at all and does not say what it was asked to record -- the same input
#: error as an XPlane file with no event: a window that recorded anything (OS runtime calls, NVTX, CUDA start-up), or
#: whose capture options say what it traced (CUDA tracing off), is read and reported for what it holds.
_NOTHING = "no events in the capture window: the export holds no CUDA, NVTX, OS runtime or sampling event"
NOTHING_RECORDED = _NOTHING + " (was the profiler stopped right after it started, or did the program run in another process?)"
#: Tables of events a window records, beside the CUDA and NVTX tables the reader reads: (prefix, suffix) of their
#: names (``OSRT_API``, ``SCHED_EVENTS``, ``COMPOSITE_EVENTS``, ``MPI_*``, ``CUPTI_ACTIVITY_KIND_*``).
_EVENT_TABLES = (("CUPTI_ACTIVITY_KIND_", ""), ("", "_EVENTS"), ("", "_API"), ("MPI_", ""), ("OPENMP_", ""))
#: ``cudaLaunchKernel_v7000`` -> ``cudaLaunchKernel``: the CUDA version that introduced the call (4+ digits); the
#: API's own ``_v2`` stays (``cudaStreamGetCaptureInfo_v2_v11030`` -> ``cudaStreamGetCaptureInfo_v2``).
_VERSION_SUFFIX = re.compile(r"_v\d{4,}(?=(?:_ptsz|_ptds)?$)")
#: NVTX event types of ranges (``ENUM_NSYS_EVENT_TYPE``), where the export has no enum table.
_RANGE_TYPES = (59, 60, 70, 71)
_DOMAIN_CREATE = 75
#: CUPTI memcpy kinds (``ENUM_CUDA_MEMCPY_OPER``) -> the direction in CUPTI's short form; arrays are device memory.
_COPY_DIRECTION = {1: "HtoD", 2: "DtoH", 3: "HtoD", 4: "DtoH", 5: "DtoD", 6: "DtoD", 7: "DtoD", 8: "DtoD", 9: "HtoH",
                   10: "PtoP", 11: "HtoD", 12: "DtoH", 13: "DtoD"}
#: The Unified Memory kinds (``CUDA_MEMCPY_KIND_UVM_HTOD`` / ``_DTOH`` / ``_DTOD``): the driver's page migrations of
#: managed memory, which no call of the program launched (correlation id 0), named as such (``devices.PAGE_MIGRATION``).
_UVM_KINDS = frozenset((11, 12, 13))
#: ``migrationCause`` of a migration the program asked for (``ENUM_CUDA_UNIF_MEM_MIGRATION`` "User prefetch":
#: ``cudaMemPrefetchAsync``); the others are the driver's (page faults, its speculative prefetch, eviction).
_USER_PREFETCH = 1
#: ``ENUM_CUDA_MEM_KIND`` labels, where the export has no enum table.
_MEM_KINDS = {0: "Pageable", 1: "Pinned", 2: "Device", 3: "Array", 4: "Managed", 5: "Device Static",
              6: "Managed Static", 7: "Unknown"}
#: ``TARGET_INFO_CUDA_STREAM.flag`` (``ENUM_CUPTI_STREAM_TYPE``) -> the stream's kind, where the export has no enum
#: table: CUPTI's ``CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT`` (a stream created with the default flags, blocking),
#: ``_NON_BLOCKING`` and ``_NULL`` (CUDA's NULL stream: the legacy default stream); 0 (unknown) says nothing.
_STREAM_FLAGS = {1: STREAM_BLOCKING, 2: STREAM_NON_BLOCKING, 3: STREAM_LEGACY_DEFAULT}
#: Kernel-name families that say which architecture (at least) ran them: the GPU model's hint.
_ARCH_HINTS = (("sm100", "Blackwell"), ("sm90", "Hopper"), ("nvjet", "Hopper or newer"), ("wgmma", "Hopper"),
               ("sm89", "Ada"), ("sm86", "Ampere"), ("sm80", "Ampere or newer"), ("sm75", "Turing or newer"),
               ("sm70", "Volta or newer"))
#: How far before the first event a session's start may lie and still be the timeline's 0 (a day).
_MAX_LEAD_NS = 86_400 * 10**9
#: A serialized thread id without its hardware id (bits 56-63): merged exports put their file's number there.
_LOW56 = (1 << 56) - 1
#: "No suffix" in the SQL that finds where an autograd NVTX name's suffix starts.
_NO_SUFFIX = 1 << 30
#: Bits of a correlation key kept for the correlation id (CUPTI's are 32-bit) and for the pid.
_CORR_BITS, _PID_BITS = 32, 24


def read_trace(path: str, host: str | None = None, ranks: list[str] | None = None) -> Trace:
    """Read one export (``.sqlite``; a ``.nsys-rep`` is exported first, ``export.sqlite_for``) into a trace;
    ``ranks``: several exports of one machine, read as one trace (``path`` is then the first of them)."""
    paths = list(ranks) if ranks else [path]
    raws = [_read_file(p, k) for k, p in enumerate(paths)]
    size = sum(r.size for r in raws)
    return _to_trace(raws, host or _stem(path), path, size)


def _stem(path: str) -> str:
    name = os.path.basename(path)
    for suffix in (".nsys-rep", ".sqlite3", ".sqlite", ".db", ".qdrep"):
        if name.endswith(suffix):
            return name[: -len(suffix)] or name
    return name


# --------------------------------------------------------------------------- one file, as columns


@dataclass
class _Raw:
    """One export's events as columns (times in ns on the export's clock), before they become a trace."""

    path: str
    size: int
    # host events: runtime calls, then NVTX ranges
    h_start: np.ndarray
    h_end: np.ndarray
    h_name: np.ndarray  # index into h_names
    h_tid: np.ndarray  # globalTid
    h_corr: np.ndarray  # correlation key (pid, correlationId), -1
    h_range: np.ndarray  # bool: an NVTX range
    h_op: np.ndarray  # int8: 1 a framework op's range, _SCOPE a suffixed range that may be the user's, _HOOK a
    # framework's forward-hook marker (_nvtx)
    h_domain: np.ndarray  # index into domains, -1 for runtime calls
    h_names: list[str]
    domains: list[str]
    # device events
    d_start: np.ndarray
    d_end: np.ndarray
    d_dev: np.ndarray  # deviceId
    d_pid: np.ndarray
    d_stream: np.ndarray
    d_corr: np.ndarray  # correlation key, -1
    d_name: np.ndarray  # index into d_names
    d_bytes: np.ndarray  # copies and memsets, -1 for kernels
    d_graph: np.ndarray  # CUDA graph id, -1
    d_names: list[str]
    d_blocks: np.ndarray = None  # kernels: blocks in the grid, -1 (other events, or not recorded)
    d_threads: np.ndarray = None  # kernels: threads per block, -1
    threads: dict[int, str] = field(default_factory=dict)  # globalTid -> thread name
    processes: dict[int, str] = field(default_factory=dict)  # pid -> process name
    gpu_info: dict[int, DeviceInfo] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    zero_ns: int | None = None  # the session's start on the export's clock
    utc_ns: int | None = None  # the wall-clock time (UTC, ns) of the export's time 0 (``_session_utc``)
    capture_ms: float | None = None
    #: where the capture's window starts on the export's clock where it is not the session's start (a time slice)
    capture_start_ns: int | None = None
    files: int = 1  # exports read into these columns
    facts: dict[str, str] = field(default_factory=dict)  # the capture's options (``_capture_options``)
    gpu_ranks: dict[int, int] = field(default_factory=dict)  # GPU -> the rank whose export it came from
    #: pid -> (its rank, the communicator's ranks) in the largest NCCL communicator it made (:func:`_nccl_ranks`)
    nccl_ranks: dict[int, tuple[int, int]] = field(default_factory=dict)
    # the OS runtime's blocking calls (``OSRT_API``, ``-t osrt``): times, thread key, index into os_names
    os_start: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    os_end: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    os_tid: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    os_name: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    os_names: list[str] = field(default_factory=list)
    #: the streams' waits on CUDA events (:func:`_event_links`): per wait, the waiting ``(pid, stream)`` and
    #: call's correlation key, the recording stream and record call's key; None where the export records no event
    links: dict[str, np.ndarray] | None = None
    #: (process, ``streamId``) -> the stream's kind (``model.trace.STREAM_KINDS``) where ``TARGET_INFO_CUDA_STREAM``
    #: states it (:func:`_stream_kinds`); the process as :func:`_stream_process` keys it (the export's number and pid)
    stream_kinds: dict[tuple[int, int], str] = field(default_factory=dict)
    #: (process, ``streamId``) -> the CUDA context the stream was created in, as (process, ``contextId``)
    stream_contexts: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)


def _read_file(path: str, file_index: int) -> _Raw:
    if fsio.is_remote(path):
        raise NsysReadError(f"{path}: Nsight Systems exports are read from local disk only (SQLite needs a file)")
    local = fsio.local_path(path)
    if is_report(os.path.basename(local)):
        local = export.sqlite_for(local)
    size = sqlite.sized_local(path, local, NsysReadError)
    if not sqlite.is_sqlite(local):
        raise NsysReadError(f"{path}: not an SQLite file (an Nsight Systems export is `nsys export --type sqlite`)")
    try:
        return sqlite.read_leniently(lambda lenient: _read_db(local, path, size, file_index, lenient))
    except NsysReadError:
        # a file shorter than its header says is a cut, said so (``sqlite.whole``), not "malformed": checked only once
        # SQLite failed, so an export whose missing tail it never needed still reads (h37-damage67)
        sqlite.whole(path, local, NsysReadError)
        raise


def _read_db(local: str, path: str, size: int, file_index: int, lenient: bool) -> _Raw:
    with sqlite.read_errors(path, NsysReadError, retry_decode=not lenient):
        with sqlite.open_db(local, lenient=lenient) as con:
            schema = tb.Schema(con)
            if not schema.is_export():
                raise NsysReadError(f"{path}: an SQLite file, but no Nsight Systems export (none of its tables)")
            _names_readable(schema, path)
            if (not _holds_events(schema) and not _capture_options(schema)  # options say what the window was asked to hold
                    and not _died(schema)):
                failure = _last_words(schema)
                raise NsysReadError(_NOTHING + failure if failure else NOTHING_RECORDED)
            return _columns(schema, path, size, file_index)


def _names_readable(schema: tb.Schema, path: str) -> None:
    """An error carrying an 'unreadable' record where the export's calls or kernels are named by ids into a
    ``StringIds`` it lacks (``tables.names_unreadable``).  Not 'cut': SQLite read the file's schema whole (a cut is
    told by its header, ``sqlite.whole``), so nothing lies past the damage -- the table is missing from a well-formed
    file: a trimmed or foreign schema, whose rows cannot say what they are (h37-damage68)."""
    lost = tb.names_unreadable(schema)
    if lost:
        why = (f"no such table: {tb.STRINGS} -- the names of its rows in {', '.join(lost)} are ids into it (every "
               "Nsight Systems export writes it), so no call or kernel can be named: a trimmed or foreign schema")
        raise attach(NsysReadError(f"{path}: damaged Nsight Systems export: {why}"),
                     unreadable("sqlite_no_such_table", why))


def _holds_events(schema: tb.Schema) -> bool:
    """Whether the export recorded any event in its window (a row in one of its event tables), read or not."""
    tables = (t for t in schema.tables if any(t.startswith(p) and t.endswith(x) for p, x in _EVENT_TABLES))
    return any(schema.nonempty(t) for t in tables if t != "DIAGNOSTIC_EVENTS")


def _corr_key(pid: np.ndarray, corr: np.ndarray, file_index: int) -> np.ndarray:
    """One id per (file, process, correlation id): correlation ids are per process."""
    ok = corr >= 0
    key = ((np.int64(file_index) << (_CORR_BITS + _PID_BITS)) | (pid.astype(np.int64) << _CORR_BITS)
           | (corr.astype(np.int64) & ((1 << _CORR_BITS) - 1)))
    return np.where(ok, key, -1)


#: Columns of the CUDA runtime and driver tables.
_CALL_COLS = {"start": "start", "end": "end", "tid": "globalTid", "corr": "correlationId", "name": "nameId"}
_CALLS = (tb.RUNTIME, tb.DRIVER)
_DEVICE = (tb.KERNEL, tb.MEMCPY, tb.MEMSET, tb.GRAPH_TRACE)


def _table_columns(tables: tuple[str, ...], cols: Callable[[tb.Schema, str], dict],
                   where: Callable[[tb.Schema, str], str] = lambda _s, _t: "") -> Callable[[tb.Schema], list]:
    """A job for :class:`tables.Beside`: each non-empty table's integer columns, (table, its ``cols``, columns), of
    the rows ``where`` keeps."""
    def job(schema: tb.Schema) -> list:
        out = []
        for table in tables:
            if schema.nonempty(table):
                want = cols(schema, table)
                out.append((table, want, sqlite.int_columns(schema, table, want, where=where(schema, table))))
        return out
    return job


#: ``ENUM_NSYS_EVENT_CLASS``' CUDA backtrace record (``TRACE_PROCESS_EVENT_CUDABACKTRACE``), 67 where the export has no
#: such table (Nsight 2022.2's ``saxpy-mpi-cuda`` export holds none).
_BACKTRACE_CLASS = 67
_BACKTRACE_LABEL = "CUDABACKTRACE"


def _calls_only(schema: tb.Schema, table: str) -> str:
    """The rows of a runtime/driver table that are calls: not the backtrace record ``--cudabacktrace`` writes beside a
    call, with its times and correlation id, under ``eventClass`` "CUDA backtrace" (read as a call, it made every
    call that has a backtrace two: pipit's Perlmutter saxpy read 10 launches and 30 ``cudaMemcpy`` for 5 and 15)."""
    if "eventClass" not in schema.columns(table):
        return ""
    enum = tb.enum_labels(schema, "ENUM_NSYS_EVENT_CLASS")
    found = [i for i, n in enum.items() if _BACKTRACE_LABEL in n.upper().replace(" ", "")]
    classes = found or ([] if enum else [_BACKTRACE_CLASS])
    if not classes:
        return ""
    return f"(eventClass IS NULL OR eventClass NOT IN ({', '.join(str(c) for c in classes)}))"


def _columns(schema: tb.Schema, path: str, size: int, fidx: int) -> _Raw:
    """The export's events as columns.  The runtime and device tables are read beside the NVTX table (threads, each
    on its own connection: ``tables.Beside``); names are interned here, in one order: runtime calls, NVTX ranges,
    then (device names) kernels, copies, memsets, graphs."""
    with sqlite.Beside(schema) as beside:
        calls = beside.submit(_table_columns(_CALLS, lambda s, t: _CALL_COLS, _calls_only))
        device = beside.submit(_table_columns(_DEVICE, _device_cols))
        return _columns_of(schema, path, size, fidx, calls, device)


def _columns_of(schema: tb.Schema, path: str, size: int, fidx: int, calls, device) -> _Raw:
    names: dict[str, int] = _Names()
    h_parts, d_parts = [], []
    callers: set[int] = set()  # the processes that made CUDA calls (serialized globalPid form)
    # ---- host: runtime and driver calls
    for _, _, c in calls.result():
        callers.update(sorted_unique(c["tid"] >> 24).tolist())
        strings = tb.string_table(schema, c["name"])
        ids, inv = unique_inverse(c["name"])
        local = np.array([_intern(names, _api_name(strings.get(int(i), f"CUDA API {int(i)}"))) for i in ids.tolist()],
                         dtype=np.int32)
        n = c["start"].size
        h_parts.append(dict(start=c["start"], end=c["end"], tid=_thread_key(c["tid"], fidx), name=local[inv] if n else local[:0],
                            corr=_corr_key(tb.pid_of(c["tid"]), c["corr"], fidx), range=np.zeros(n, bool),
                            op=np.zeros(n, bool), domain=np.full(n, -1, np.int16)))
    # ---- host: NVTX ranges
    domains: list[str] = [""]
    recorded = 0  # autograd ops with a sequence number
    if schema.nonempty(tb.NVTX):
        part, domains, recorded = _nvtx(schema, names, fidx)
        if part is not None:
            h_parts.append(part)
    mpi = _mpi_calls(schema, names, fidx)
    if mpi is not None:
        domains = _with_domain(domains, _MPI_DOMAIN)
        mpi["domain"] = np.full(mpi["start"].size, domains.index(_MPI_DOMAIN), np.int16)
        h_parts.append(mpi)
    # ---- device
    d_names: dict[str, int] = {}
    launcher = (next(iter(callers)) << 24) if len(callers) == 1 else None
    for table, cols, c in device.result():
        d_parts.append(_device_table(schema, table, cols, c, d_names, fidx, launcher))
    h = _concat(h_parts, ("start", "end", "tid", "name", "corr", "range", "op", "domain"))
    d = _concat(d_parts, ("start", "end", "dev", "pid", "stream", "corr", "name", "bytes", "graph", "blocks", "threads"))
    raw = _Raw(path=path, size=size, h_start=h["start"], h_end=h["end"], h_name=h["name"], h_tid=h["tid"],
               h_corr=h["corr"], h_range=h["range"], h_op=h["op"], h_domain=h["domain"], h_names=list(names),
               domains=domains, d_start=d["start"], d_end=d["end"], d_dev=d["dev"], d_pid=d["pid"],
               d_stream=d["stream"], d_corr=d["corr"], d_name=d["name"], d_bytes=d["bytes"], d_graph=d["graph"],
               d_names=list(d_names), d_blocks=d["blocks"], d_threads=d["threads"])
    _read_os_calls(schema, raw, fidx)
    _read_off_cpu(schema, raw, fidx)
    raw.links = _event_links(schema, fidx)
    raw.threads = {int(_thread_key(np.int64(t), fidx)): n for t, n in _thread_names(schema).items()}
    raw.processes = _process_names(schema)
    raw.nccl_ranks = _nccl_ranks(schema)
    raw.stream_kinds, raw.stream_contexts = _stream_kinds(schema, fidx)
    raw.gpu_info, note = _gpu_info(schema, raw, _gpus_by_process(schema, raw))
    if note:
        raw.notes.append(note)
    raw.zero_ns, raw.capture_ms, raw.capture_start_ns = _session_window(schema)
    raw.utc_ns = _session_utc(schema)
    _close_open_ranges(schema, raw)
    raw.facts = _capture_options(schema) or _traced_by_messages(schema)
    raw.facts.update(_recorded_command(schema))
    raw.facts.update(_platform(schema))
    if recorded:  # the forward recorded autograd's graph: grad mode was on (job.kind reads it)
        raw.facts["grad_recorded_ops"] = str(recorded)
    if not raw.facts.get("cuda_trace") and (empty := _empty_cuda_tables(schema)):
        raw.facts["cuda_tables_empty"] = empty
    if "wsl2" in raw.facts:
        raw.facts.update(_program_ran(schema))
    elif tb.RUNTIME not in schema and _called_cuda(schema):
        raw.facts["cuda_in_stacks"] = "1"
    elif tb.RUNTIME not in schema and _driver_thread(raw.threads, raw.processes):
        raw.facts["cuda_thread"] = "1"
    stderr = tb.program_stderr(schema)
    failure = next((f for f in map(program_failure, stderr) if f), "")
    # a window with GPU work ended in the failure where it is the last thing the program wrote (a traceback logged
    # mid-run, progress lines after it, is no death)
    died = next((f for f in (program_failure(_last_lines(t, _DEATH_LINES)) for t in stderr) if f), "")
    if not failure:  # a kernel that faulted says so in the calls' return codes, whatever the program printed
        failure = died = _sticky_error(schema)
    stream = "standard error"
    if not failure:  # a program may write its failure to its output: the words tell it, not the stream
        failure, stream = _output_failure(tb.program_stderr(schema, 65536, "stdout")), "standard output"
    if failure:  # the program died: a window without GPU work is its failure, not a window put wrong
        raw.facts["program_error"] = failure
        raw.facts["program_stream"] = stream
    else:
        reported, stream = _reported(stderr, tb.program_stderr(schema, 65536, "stdout"))
        if reported:  # read only for a window without GPU work (``job.kind``): the likely reason it launched none
            raw.facts["program_reported"] = reported
            raw.facts["program_stream"] = stream
    if died:
        raw.facts["program_died"] = died
    counted = _counted_steps(tb.program_stderr(schema, 65536, "stdout"))
    if counted:  # the program's own count of its iterations: job.period reads the launches' turns against it
        raw.facts["program_counted_steps"] = str(counted)
    refused, n_refused = _refused_launches(schema)
    if refused:
        raw.facts["refused_launches"] = refused
        raw.facts["refused_count"] = str(n_refused)  # job.kind: every launch refused is no kernel lost
    raw.facts.update(_records_loss(schema, raw.facts))
    raw.facts.update(_trace_unclosed(schema, raw))
    return raw


def _refused_launches(schema: tb.Schema) -> tuple[str, int]:
    """The CUDA Runtime launches that returned an error without running their kernel
    (``devices.nvidia.LAUNCH_ERRORS``), in words -- "1 `cudaLaunchKernel` call returned cudaErrorInvalidValue (1):
    <its usual cause>" -- the first error's cause named, and how many; ("", 0) where none did.  Why: such a kernel
    never runs and leaves no GPU record, and the program goes on unless it checks the code, so its results and timings
    miss that kernel; only the call's return code tells it.  Sticky errors (a kernel that faulted) are :func:`_sticky_error`'s."""
    if not schema.has(tb.RUNTIME, "returnValue", "nameId", "start"):
        return "", 0
    codes = ",".join(str(c) for c in devices.nvidia.LAUNCH_ERRORS)
    rows = schema.con.execute(f'SELECT nameId, returnValue, COUNT(*), MIN(start) FROM "{tb.RUNTIME}" '
                              f'WHERE returnValue IN ({codes}) AND {tb.integers("nameId", "start", "returnValue")} '
                              "GROUP BY nameId, returnValue").fetchall()
    if not rows:
        return "", 0
    names = tb.string_table(schema, np.array([r[0] for r in rows], np.int64))
    refused = []  # (first start, call, code, count)
    for name_id, code, n, start in rows:
        call = _VERSION_SUFFIX.sub("", names.get(int(name_id), ""))
        if call.startswith("cuda") and devices.is_launch_call(call):  # the runtime's codes; a driver call's differ
            refused.append((int(start), call, int(code), int(n)))
    if not refused:
        return "", 0
    refused.sort()
    _, call, code, _ = refused[0]
    name, cause = devices.nvidia.launch_error(code, *_launch_target(schema)) or ("an error", "")
    total = sum(n for *_, n in refused)
    calls = "call" if total == 1 else "calls"
    return (f"{total:,} launch {calls} (`{call}`{' and others' if len(refused) > 1 else ''}) returned {name} ({code})"
            f"{': ' + cause if cause else ''}"), total


def _launch_target(schema: tb.Schema) -> tuple[tuple[int, int] | None, str | None, int | None]:
    """What a refused launch's cause may name (``devices.nvidia.launch_error``): the compute capability of the
    export's GPUs (``TARGET_INFO_GPU``, else ``TARGET_INFO_CUDA_DEVICE``) where they all share one, else None -- a
    runtime row does not say which GPU it launched on, and a process's ordinals move with ``CUDA_VISIBLE_DEVICES``,
    so a box of mixed GPUs keeps the generic words; the driver's release (``NvDriverVersion``) and the CUDA version it
    supports (``CudaDriverVersion``, 12020), None where not recorded.  Why: a refusal for the GPU's architecture or
    the driver's age is fixed by building for that architecture or that CUDA version, and the export records both."""
    rows = tb.dict_rows(schema, tb.GPU_INFO) or tb.dict_rows(schema, tb.CUDA_DEVICE)
    if not any(_info(r).compute_capability for r in rows):  # Nsight 2020-2021: the properties in their own table
        rows = tb.dict_rows(schema, tb.CUDA_GPU) or rows
    ccs = {_info(r).compute_capability for r in rows}
    cc = next(iter(ccs)) if len(ccs) == 1 else None
    driver = driver_version(tb.value_of(schema, tb.SYSTEM_ENV, "NvDriverVersion") or "") or None
    cuda = (tb.value_of(schema, tb.SYSTEM_ENV, "CudaDriverVersion") or "").strip()
    return cc, driver, int(cuda) if cuda.isdigit() else None


#: An error report whose message is a number (``Error: 3.2e-06``): a program's measured error, not its failure.
_MEASURED_ERROR = re.compile(r"error\s*:\s*[-+]?[\d.]+(?:e[-+]?\d+)?\s*%?\s*$", re.I)


def _output_failure(stdout: list[str]) -> str:
    """The failure a program wrote to its standard output (:func:`program_failure`, by its words), a measured error
    (``Max error: 0.0``) left out: a numerical program prints its error as a result."""
    for text in stdout:
        f = program_failure(text)
        if f and not _MEASURED_ERROR.search(f):
            return f
    return ""


#: A line of a program's output that counts one of its iterations: a step's name (``nvtx.is_step_name``: "Step 3",
#: "iteration 12", "iter 5/100"), its number the first in it.
_COUNTED_LINE = re.compile(r"^(\D*?)(\d+)")
#: The fewest such lines that count a loop.
_COUNTED_LEAST = 2


def _counted_steps(stdout: list[str]) -> int:
    """How many iterations the program's standard output counts, one line each -- lines named like a step
    (``nvtx.is_step_name``), the same words before a number that goes up by one from line to line ("Step 0" ..
    "Step 6") -- where one process wrote them; 0 where no such count (fewer than two lines, numbers that skip or
    repeat, two counters, a second process's).  Why: a native program that prints a line per iteration says how many
    it ran, where its launches' own pattern can read two ways (the GPU's turns of one solve, or runs of them between a
    branch some turns take: job.period; cestwc/balinski-and-gomory-cuda ``report8``, h37-nsys59)."""
    counts = []
    for text in stdout:
        lines = [ln.strip() for ln in text.splitlines() if ln.strip() and nvtx.is_step_name(ln)]
        found = [m for m in map(_COUNTED_LINE.match, lines) if m]
        if len(found) < _COUNTED_LEAST or len(found) != len(lines) or len({m.group(1) for m in found}) != 1:
            continue
        numbers = np.array([int(m.group(2)) for m in found], np.int64)
        if (np.diff(numbers) == 1).all():
            counts.append(len(found))
    return counts[0] if len(counts) == 1 else 0


def _reported(stderr: list[str], stdout: list[str]) -> tuple[str, str]:
    """The last failure the program reported in words (:func:`reported_failure`), standard error first, and the
    stream it is in; ("", "") where it reported none."""
    for texts, stream in ((stderr, "standard error"), (stdout, "standard output")):
        for text in texts:
            r = reported_failure(text)
            if r:
                return r, stream
    return "", ""


def _sticky_error(schema: tb.Schema) -> str:
    """The first CUDA call that returned a "sticky" error (``devices.nvidia.STICKY_ERRORS``: a kernel faulted, the
    context is unusable and the GPU's records are lost with it), in words; "" where none did."""
    if not schema.has(tb.RUNTIME, "returnValue", "nameId", "start"):
        return ""
    codes = ",".join(str(c) for c in devices.nvidia.STICKY_ERRORS)
    row = schema.con.execute(f'SELECT nameId, returnValue FROM "{tb.RUNTIME}" WHERE returnValue IN ({codes}) '
                             f'AND {tb.integers("nameId")} ORDER BY start LIMIT 1').fetchone()
    if row is None:
        return ""
    names = tb.string_table(schema, np.array([row[0]], np.int64))
    call = _VERSION_SUFFIX.sub("", names.get(int(row[0]), "a CUDA call"))
    name, what = devices.nvidia.sticky_error(int(row[1])) or ("an error", "")
    return f"{call} returned {name} ({int(row[1])}): {what}; the CUDA context is unusable after it"


#: The lines at the end of a program's standard error that its failure must be among to be how it ended: a
#: runtime's fatal report and the file, function and line it names; a traceback's last frame and exception.
_DEATH_LINES = 8


def _last_lines(text: str, n: int) -> str:
    """The last ``n`` non-blank lines of ``text``."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(lines[-n:]) + "\n"


#: The OS runtime trace's calls (``nsys profile -t osrt``): libc's blocking calls as the host made them.
_OSRT = "OSRT_API"
_OSRT_COLS = {"start": "start", "end": "end", "tid": "globalTid", "name": "nameId"}


def _read_os_calls(schema: tb.Schema, raw: _Raw, fidx: int) -> None:
    """``OSRT_API``'s calls into ``raw``'s ``os_*`` columns (only the four columns the analysis needs; the integer
    scan is the compiled reader's where it is built, like every table's), names interned in the order of their
    string ids; a call with no end or no thread is left out (nothing to place on a thread's timeline)."""
    if not schema.nonempty(_OSRT):
        return
    c = sqlite.int_columns(schema, _OSRT, _OSRT_COLS)
    ok = (c["end"] >= c["start"]) & (c["tid"] >= 0) & (c["start"] >= 0)
    start, end, tid, name = (c[k][ok] for k in ("start", "end", "tid", "name"))
    if not start.size:
        return
    strings = tb.string_table(schema, name)
    ids, inv = unique_inverse(name)
    raw.os_names = [strings.get(int(i), f"OS call {int(i)}") for i in ids.tolist()]
    raw.os_start, raw.os_end = start.astype(np.int64), end.astype(np.int64)
    raw.os_tid = _thread_key(tid, fidx)
    raw.os_name = inv.astype(np.int32)


#: CUPTI's event records: one row per ``cudaEventRecord`` (its stream, call's correlation id and event), in the
#: exports of Nsight 2022 on (``timestamp`` and ``eventSyncId`` added in 2024.4; neither is read).
_CUDA_EVENT = "CUPTI_ACTIVITY_KIND_CUDA_EVENT"
_EVENT_COLS = {"pid": "globalPid", "stream": "streamId", "corr": "correlationId", "event": "eventId"}
#: A ``streamId`` / ``eventId`` of no stream or event: a synchronisation of the host (``cudaStreamSynchronize``,
#: ``cudaEventSynchronize``, ``cudaEventQuery``) rather than a stream's wait.
_NO_ID = 0xFFFFFFFF


def _event_links(schema: tb.Schema, fidx: int) -> dict[str, np.ndarray] | None:
    """The streams' waits on CUDA events, resolved to the record each waits for: per wait (``cudaStreamWaitEvent``'s
    ``CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`` row: a stream and an event), the waiting ``pid``, ``stream`` and
    the call's correlation key ``corr``, and the latest ``cudaEventRecord`` of that event in that process before the
    wait (``CUPTI_ACTIVITY_KIND_CUDA_EVENT``): its ``rec_stream`` and key ``rec_corr``.  None where the export holds no
    event record (no such table, or an empty one: then nothing tells which stream's work another's waits for).

    Why: a stream's work after a wait runs only after the recording stream's work before the record -- the order a
    program sets between its copy and compute streams.  It is what says whether the first kernel after a module load
    needed the uploads that ran beneath the load (ntua-el20062/gemm_spmm_a100, A100, Nsight 2024.2: batch 0's upload,
    event 19, waited for by the GEMM stream through ``cudaStreamWaitEvent``; batch 1's only 1.8 s later).  The wait is
    told by its row's ids, a stream and an event both set, not by ``syncType``: the 2024.2 exports give
    ``cudaStreamWaitEvent`` the type their own enum calls a stream synchronisation (3) and ``cudaEventQuery`` the
    stream-wait type (2).  Correlation ids count up in a process's calls, so "before" is a smaller id."""
    if not schema.nonempty(_CUDA_EVENT) or not schema.nonempty(tb.SYNC):
        return None
    rec = sqlite.int_columns(schema, _CUDA_EVENT, _EVENT_COLS)
    wait = sqlite.int_columns(schema, tb.SYNC, _EVENT_COLS)
    ok = (wait["stream"] >= 0) & (wait["stream"] != _NO_ID) & (wait["event"] >= 0) & (wait["event"] != _NO_ID)
    wait = {k: v[ok].astype(np.int64) for k, v in wait.items()}
    rec = {k: v.astype(np.int64) for k, v in rec.items()}
    # the records by (pid, event, corr): a wait's record is the last of its (pid, event) with a smaller id
    order = np.lexsort((rec["corr"], rec["event"], rec["pid"]))
    rec = {k: v[order] for k, v in rec.items()}
    width = np.int64(1) << 32
    rkey = (rec["pid"] * width + rec["event"]) * width + rec["corr"]
    wkey = (wait["pid"] * width + wait["event"]) * width + wait["corr"]
    at = np.searchsorted(rkey, wkey, side="left") - 1
    found = at >= 0
    found[found] = (rec["pid"][at[found]] == wait["pid"][found]) & (rec["event"][at[found]] == wait["event"][found])
    found &= wait["pid"] > 0  # a process to key the ids by (old exports write NULL or 0)
    at = at[found]
    gpid = wait["pid"][found]
    return {"pid": _process_key(gpid, fidx), "stream": wait["stream"][found],
            "corr": _corr_key(tb.pid_of(gpid), wait["corr"][found], fidx), "rec_stream": rec["stream"][at],
            "rec_corr": _corr_key(tb.pid_of(gpid), rec["corr"][at], fidx)}


#: The tables Nsight Systems 2023 and later write the MPI trace's calls into (``nsys profile -t mpi``): point-to-point,
#: the start and wait of non-blocking calls (``MPI_Wait`` of an ``MPI_Iallreduce``), collectives, and the rest
#: (``MPI_Init``, ``MPI_Finalize``), each row a call's ``start``, ``end``, ``globalTid`` and ``textId``.  Older exports
#: (pipit's, Nsight 2022.2) wrote the same calls as NVTX ranges in the domain ``MPI``; a newer one registers that domain
#: and leaves it empty (a 4-rank CME 213 export of 2026: 47 collectives and 40 ``MPI_Wait`` in the tables, none in
#: ``NVTX_EVENTS``), so read from the tables they are the same ranges in the same domain.
_MPI_TABLES = ("MPI_P2P_EVENTS", "MPI_START_WAIT_EVENTS", "MPI_COLLECTIVES_EVENTS", "MPI_OTHER_EVENTS")
_MPI_COLS = {"start": "start", "end": "end", "tid": "globalTid", "name": "textId"}
#: The NVTX domain Nsight's MPI trace writes its calls in (``frameworks.nvtx.COMMUNICATION_DOMAINS`` names it).
_MPI_DOMAIN = "MPI"


def _mpi_calls(schema: tb.Schema, names: dict[str, int], fidx: int) -> dict | None:
    """The MPI trace's calls from ``_MPI_TABLES`` as host ranges (``_nvtx``'s columns but the domain, which the caller
    sets): why ranges, not runtime calls -- the host inside one waits for its peers, as in the older exports' ``MPI``
    ranges, which the rules already read as communication.  A call with no end or no thread is left out."""
    parts = [sqlite.int_columns(schema, t, _MPI_COLS) for t in _MPI_TABLES if schema.nonempty(t)]
    if not parts:
        return None
    c = {k: np.concatenate([p[k].astype(np.int64) for p in parts]) for k in _MPI_COLS}
    ok = (c["end"] >= c["start"]) & (c["tid"] >= 0) & (c["start"] >= 0)
    c = {k: v[ok] for k, v in c.items()}
    n = c["start"].size
    if not n:
        return None
    strings = tb.string_table(schema, c["name"])
    ids, inv = unique_inverse(c["name"])
    local = np.array([_intern(names, strings.get(int(i), f"MPI call {int(i)}")) for i in ids.tolist()], np.int32)
    return dict(start=c["start"], end=c["end"], tid=_thread_key(c["tid"], fidx), name=local[inv],
                corr=np.full(n, -1, np.int64), range=np.ones(n, bool), op=np.zeros(n, np.int8))


def _with_domain(domains: list[str], name: str) -> list[str]:
    """``domains`` with ``name`` in it (appended where absent: the export registered no such NVTX domain)."""
    return domains if name in domains else [*domains, name]


#: The scheduler's trace (``nsys profile --cpuctxsw=process-tree``, on by default on Linux): one row per context
#: switch of a thread, ``isSchedIn`` 0 where the thread left its CPU and non-zero where it got one back.
_SCHED = "SCHED_EVENTS"
_SCHED_COLS = {"start": "start", "tid": "globalTid", "into": "isSchedIn"}


def _read_off_cpu(schema: tb.Schema, raw: _Raw, fidx: int) -> None:
    """``SCHED_EVENTS``' stretches each thread spent off its CPU -- from a switch out to that thread's next switch in
    -- appended to ``raw``'s ``os_*`` columns as waits named :data:`OFF_CPU`.  Why: a thread off the CPU runs no code
    of its own, so GPU idle it spans is the host waiting (on a camera, a file, a socket, a timer, a lock), not the
    host computing; without an OS runtime trace the scheduler is the only witness of it (SamuelAmsih/CUDA's camera
    loop: its launching thread off the CPU 74% of the window).  A switch out with no switch in after it (the window's
    end, the thread's exit) bounds nothing and is left out; the stretches nest inside the OS runtime's calls where
    both were traced, and the analysis keeps only the outermost of each thread's waits."""
    if not schema.nonempty(_SCHED):
        return
    c = sqlite.int_columns(schema, _SCHED, _SCHED_COLS)
    ok = (c["tid"] >= 0) & (c["start"] >= 0)
    start, tid, into = c["start"][ok].astype(np.int64), c["tid"][ok].astype(np.int64), c["into"][ok] != 0
    if start.size < 2:
        return
    order = np.lexsort((start, tid))
    start, tid, into = start[order], tid[order], into[order]
    # a switch out whose next event, on the same thread, is a switch in
    out = np.flatnonzero(~into[:-1] & into[1:] & (tid[:-1] == tid[1:]) & (start[1:] >= start[:-1]))
    if not out.size:
        return
    name = len(raw.os_names)
    raw.os_names = [*raw.os_names, OFF_CPU]
    raw.os_start = np.concatenate([raw.os_start, start[out]])
    raw.os_end = np.concatenate([raw.os_end, start[out + 1]])
    raw.os_tid = np.concatenate([raw.os_tid, _thread_key(tid[out], fidx)])
    raw.os_name = np.concatenate([raw.os_name.astype(np.int32), np.full(out.size, name, np.int32)])


#: ``META_DATA_CAPTURE`` keys of the options a window's reading depends on -> the ``Trace.producer`` fact.
_TRACE_OPTIONS = {"COLLECT_CUDA_TRACE": "cuda_trace", "COLLECT_NVTX_TRACE": "nvtx_trace"}


#: How WSL2's Linux kernel names its release (``uname -r``, kept as ``TARGET_INFO_SYSTEM_ENV.SoftwareReleaseVersion``):
#: Microsoft's build, ``5.15.90.1-microsoft-standard-WSL2`` (older ones: ``4.19.128-microsoft-standard``).
_WSL2_KERNEL = re.compile(r"microsoft-standard|wsl2", re.I)


def _platform(schema: tb.Schema) -> dict[str, str]:
    """The target system, where it changes what a capture can hold: ``wsl2`` (the kernel release) when the program
    ran under WSL2, with ``nv_driver`` (the Windows display driver, ``NvDriverVersion``).  Under WSL2 the GPU's own
    activity is recorded only with a recent Windows driver and profiler, so an export of launches without kernels is
    the platform's limit, not a damaged file (``job.kind`` window ``wsl2``)."""
    if tb.SYSTEM_ENV not in schema:
        return {}
    release = tb.value_of(schema, tb.SYSTEM_ENV, "SoftwareReleaseVersion")
    if not release or not _WSL2_KERNEL.search(release):
        return {}
    driver = driver_version(tb.value_of(schema, tb.SYSTEM_ENV, "NvDriverVersion") or "")
    return {"wsl2": release.strip(), **({"nv_driver": driver} if driver else {})}


def driver_version(raw: str) -> str:
    """NVIDIA's display-driver version as the driver names its releases, from ``NvDriverVersion``.  Nsight keeps it
    either dotted (``536.40``, ``580.95.05``) or as its digits run together: a three-digit branch, then a two- or
    three-digit minor and a two-digit patch (``5303002`` = 530.30.02, ``52510517`` = 525.105.17, a Windows driver's
    ``51694`` = 516.94).  Anything else is kept as written, so a layout not seen yet is never misread."""
    raw = raw.strip()
    if not raw.isdigit() or not 5 <= len(raw) <= 8 or len(raw) == 6:
        return raw
    rest = raw[3:]
    parts = [raw[:3], rest] if len(rest) == 2 else [raw[:3], rest[:-2], rest[-2:]]
    return ".".join(parts)


#: The message Nsight's CUDA injection writes once the profiled program has loaded the CUDA driver (the driver loads
#: the injection library at ``cuInit``): the program initialised CUDA under the profiler.
_CUDA_INJECTED = re.compile(r"\bCUDA injection initiali[sz]ed successfully", re.I)
#: The CUDA driver's library as a call-stack frame names it (``/usr/lib/wsl/lib/libcuda.so.1``): a program whose OS
#: runtime calls or samples ran inside it had loaded CUDA and called it, whatever runtime above it (CUDA's, OpenACC's).
_CUDA_DRIVER = re.compile(r"(?:^|/)libcuda\.so(?:\.|$)")


def _called_cuda(schema: tb.Schema) -> bool:
    """Whether the program's sampled or OS-runtime call stacks ran inside the CUDA driver's library: it had loaded
    CUDA and called it, whether or not the profiler traced those calls."""
    return any(_CUDA_DRIVER.search(mod) for mod in tb.callchain_modules(schema))


#: The profiler's own processes (Nsight Systems' CLI, launcher and output relay): a CUDA thread in one is not the
#: program's.
_PROFILER_PROCESS = re.compile(r"^nsys(?:-|$)")


def _driver_thread(threads: dict[int, str], processes: dict[int, str]) -> bool:
    """Whether a profiled process (not Nsight's own) holds a thread the CUDA driver starts where it initialises
    (``devices.driver_thread``): the program loaded and initialised CUDA, so an export without CUDA records did
    not trace it -- it is no program that ran on the CPU (YijiaZhao/NVTX-example's ``quickstart.sqlite``: PyTorch's
    ``cuda-EvtHandlr`` ran in its ``python`` 0.5 s into the training loop).  ``threads``: globalTid -> name, the pid
    in bits 24-47 of the key as Nsight writes it."""
    for tid, name in threads.items():
        if devices.driver_thread(name):
            pid = (int(tid) >> 24) & 0xFFFFFF
            if not _PROFILER_PROCESS.match(processes.get(pid, "")):
                return True
    return False


def _program_ran(schema: tb.Schema) -> dict[str, str]:
    """What the export shows of a program that ran, for a WSL2 window without CUDA records (``job.kind`` window
    ``wsl2_untraced``): ``cuda_injected`` where the profiler's CUDA injection started in it (the program loaded CUDA),
    else ``cuda_in_stacks`` where its sampled or OS-runtime call stacks ran inside the CUDA driver's library,
    ``program_output`` (its standard output's last line), ``profiler_trouble`` (the injection's own warnings and
    errors, as it wrote them: ``CUPTI_ERROR_INVALID_DEVICE``, a driver newer than the profiler supports)."""
    out: dict[str, str] = {}
    msgs = tb.injection_messages(schema)
    if any(_CUDA_INJECTED.search(text) for _, text in msgs):
        out["cuda_injected"] = "1"
    elif _called_cuda(schema):
        out["cuda_in_stacks"] = "1"
    trouble = list(dict.fromkeys(" ".join(text.split())[:200] for sev, text in msgs if sev in tb.DIAG_TROUBLE))
    if trouble:
        out["profiler_trouble"] = "; ".join(trouble[:3])
    lines = [ln.strip() for text in tb.program_stderr(schema, 4096, "stdout") for ln in text.splitlines() if ln.strip()]
    if lines:
        out["program_output"] = lines[-1][:160]
    return out


def _died(schema: tb.Schema) -> bool:
    """Whether the program's own standard error, kept in the export, shows it died (:func:`program_failure`): then an
    export without events is a report of that failure -- the same kind of window, read the same way, as one that died
    after a few start-up calls (job kind ``failed``) -- not an unreadable file."""
    return any(map(program_failure, tb.program_stderr(schema)))


def _last_words(schema: tb.Schema) -> str:
    """For a window that recorded nothing: what the profiled program died with (:func:`program_failure`), else the
    last line it wrote to its standard error, which the export keeps -- a program that died at start-up (a library
    that failed to load under the profiler's injection, a crash, a Python error) records no event, and its own words
    say why.  Empty when it wrote none."""
    texts = tb.program_stderr(schema)
    last = next((f for f in map(program_failure, texts) if f), "")
    for text in texts if not last else ():
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        if lines:
            last = lines[-1] if len(lines[-1]) <= 300 else lines[-1][:297] + "..."
            break
    if not last:
        return _ran_unrecorded(schema)
    return (f": the profiled program stopped before it ran any work; its last words on standard error, kept in "
            f"the export: \"{last}\" (fix that error, then profile again)")


def _ran_unrecorded(schema: tb.Schema) -> str:
    """For a window that recorded nothing and whose program wrote no error: the program's own output, where it wrote
    some -- it ran to it, so nothing of its work was traced (a build that runs on the CPU, or no CUDA tracing), not a
    window stopped too early.  Empty when it wrote none."""
    lines = [ln.strip() for text in tb.program_stderr(schema, 4096, "stdout") for ln in text.splitlines() if ln.strip()]
    if not lines:
        return ""
    last = lines[-1] if len(lines[-1]) <= 160 else lines[-1][:157] + "..."
    return (f": the profiled program ran and wrote its output (its last line, kept in the export: \"{last}\"), yet no "
            f"CUDA call or GPU work of it was recorded -- a build that runs on the CPU, or CUDA tracing off (the export "
            f"keeps no capture options to say which); profile a GPU build with -t cuda,nvtx")


#: What Nsight Systems' CUDA injection writes at the session's end, into the export's strings, where CUDA was traced:
#: the events it collected, or none ("No CUDA events collected. Does the process use CUDA?").  Only the CUDA trace
#: writes them: a ``-t nvtx,osrt`` export of 2020 holds neither (quasiben/nvtx-examples ``quickstart.sqlite``).
_CUDA_COLLECTED = ("No CUDA events collected%", "Number of CUDA events collected%")


def _traced_by_messages(schema: tb.Schema) -> dict[str, str]:
    """``cuda_trace`` "on" for an export that keeps no capture options (``META_DATA_CAPTURE``: Nsight before 2021)
    where the profiler's own end-of-session message about the CUDA events it collected is among its strings; nothing
    otherwise.

    Why: with no options to read, a window of NVTX ranges without a CUDA table was said to be what tracing NVTX alone
    leaves ("the export does not record whether CUDA tracing was on") and, with the CUDA driver's thread in the
    process, "CUDA tracing was off" with a fix to trace CUDA -- where Nsight had traced CUDA and written that the
    program made no CUDA call (quasiben/nvtx-examples ``multiprocessing.sqlite``, ``cpython-nvtx-patch.sqlite``,
    recorded with ``-t nvtx,osrt,cuda``; h37-survey67)."""
    if not schema.has(tb.STRINGS, "value"):
        return {}
    where = " OR ".join("value LIKE ?" for _ in _CUDA_COLLECTED)
    row = schema.con.execute(f'SELECT 1 FROM "{tb.STRINGS}" WHERE {where} LIMIT 1', _CUDA_COLLECTED).fetchone()
    return {"cuda_trace": "on"} if row else {}


def _empty_cuda_tables(schema: tb.Schema) -> str:
    """The export's CUDA activity tables (``CUPTI_ACTIVITY_KIND_*``), comma-separated, where it holds some and every
    one is empty; "" otherwise.  Why: a window without a CUDA record whose export keeps no capture options was said to
    hold "no CUDA table at all ... what tracing NVTX alone (-t nvtx) leaves" -- of an export that holds CUDA's tables,
    empty (h37-window69).  Nsight writes no table for a trace that recorded nothing (tests/fixtures/nsys_windows'
    exports), so an empty one is no proof of either setting: the words say what the file holds, nothing more."""
    names = sorted(t for t in schema.tables if t.startswith("CUPTI_ACTIVITY_KIND_"))
    if not names or any(schema.nonempty(t) for t in names):
        return ""
    return ", ".join(names)


def _capture_options(schema: tb.Schema) -> dict[str, str]:
    """What the profiler was asked to record, where the export says (``META_DATA_CAPTURE``: Nsight 2021.x and newer):
    ``cuda_trace`` / ``nvtx_trace`` "on" when any profiled process had it on, else "off"; ``capture_start`` /
    ``capture_stop`` the triggers of the window ("Immediate", "Delayed", "CudaProfilerApi", "Nvtx" ...), and
    ``start_delay_ms`` / ``run_duration_ms`` where set; ``os_runtime_trace`` "on" where the OS runtime's calls were
    traced (``-t osrt``: ``CAPTURE_EVENT_TYPE`` ``OSRuntime``) and then ``os_runtime_threshold_ns``, the shortest call
    it records (``--osrt-threshold``).  Nothing for an export that does not record them."""
    if tb.META_CAPTURE not in schema:
        return {}
    facts: dict[str, str] = {}
    threshold = ""
    for name, value in tb.key_values(schema, tb.META_CAPTURE):
        option = name.rsplit(":", 1)[-1]
        if option in _TRACE_OPTIONS:
            key = _TRACE_OPTIONS[option]
            on = value.strip().lower() == "true"
            facts[key] = "on" if on or facts.get(key) == "on" else "off"
        elif name in ("START_TRIGGER", "STOP_TRIGGER"):
            facts["capture_" + name.split("_")[0].lower()] = value.strip()
        elif name in ("START_DELAY_MS", "RUN_DURATION_MS") and value.strip().isdigit() and int(value) > 0:
            facts[name.lower()] = value.strip()
        elif name in _FLUSH_OPTIONS and value.strip():
            facts[_FLUSH_OPTIONS[name]] = value.strip().lower()
        elif name == "CAPTURE_EVENT_TYPE" and value.strip() == _OSRT_EVENT_TYPE:
            facts["os_runtime_trace"] = "on"
        elif name == _OSRT_THRESHOLD and value.strip().isdigit():
            threshold = value.strip()
    if facts.get("os_runtime_trace") == "on" and threshold:  # the threshold counts only where the trace was on
        facts["os_runtime_threshold_ns"] = threshold
    return facts


#: ``META_DATA_CAPTURE``'s ``CAPTURE_EVENT_TYPE`` values -> the ``nsys profile -t`` name that records them (Nsight's
#: Linux default ``-t cuda,opengl,nvtx,osrt`` is stored as ``Cuda``, ``Graphics``, ``NvtxEvents``, ``OSRuntime``); a type
#: not listed is left out of the command rebuilt from them, never guessed.
_TRACE_NAMES = {"Cuda": "cuda", "NvtxEvents": "nvtx", "OSRuntime": "osrt", "Graphics": "opengl"}
#: The longest program command kept (``program_command``): a command line is the user's, shown back in a fix.
_COMMAND_CHARS = 300


def _recorded_command(schema: tb.Schema) -> dict[str, str]:
    """The profiled program's command line and what the capture traced, as the export records them
    (``META_DATA_CAPTURE``: ``PROCESS_0:COMMAND`` and its ``ARGUMENT_n``; ``CAPTURE_EVENT_TYPE``): ``program_command``
    (shell-quoted, where one program was launched), ``traced_apis`` (the ``-t`` list it was recorded with, in nsys's
    names) and ``retrace_apis`` (that list with ``cuda`` first, where CUDA tracing was off).  Why: a fix for a capture
    recorded with the wrong options is the user's own command with those options corrected -- their program and
    what they traced kept -- not a generic ``./app`` (h37-tracingoff2: ``wild/tracing_off_nvtx_a10_train`` was
    recorded as ``python benchmark.py`` under ``-t nvtx``).  Nothing where the export does not record them."""
    if tb.META_CAPTURE not in schema:
        return {}
    commands: dict[str, str] = {}
    args: dict[str, dict[int, str]] = {}
    traced: list[str] = []
    cuda_on = nvtx_on = False
    attach: set[str] = set()
    for name, value in tb.key_values(schema, tb.META_CAPTURE):
        proc, _, option = name.rpartition(":")
        if option == "COMMAND" and proc.startswith("PROCESS_") and value.strip():
            commands[proc] = value.strip()
        elif option.startswith("ARGUMENT_") and option[9:].isdigit() and proc.startswith("PROCESS_"):
            args.setdefault(proc, {})[int(option[9:])] = value
        elif name == "CAPTURE_EVENT_TYPE" and _TRACE_NAMES.get(value.strip()) and _TRACE_NAMES[value.strip()] not in traced:
            traced.append(_TRACE_NAMES[value.strip()])
        elif option == "COLLECT_CUDA_TRACE" and value.strip().lower() == "true":
            cuda_on = True
        elif option == "COLLECT_NVTX_TRACE" and value.strip().lower() == "true":
            nvtx_on = True
        elif option == "HOW_TO_ATTACH" and proc.startswith("PROCESS_"):
            attach.add(value.strip())
    if not cuda_on and "cuda" in traced:  # the type is listed, but no process traced it (tracing_off_julia)
        traced.remove("cuda")
    if nvtx_on and "nvtx" not in traced:  # a process's own option says what the event types did not list
        traced.append("nvtx")
    out: dict[str, str] = {}
    if len(commands) == 1:
        (proc, command), = commands.items()
        line = " ".join(masked_words([command, *(a for _, a in sorted(args.get(proc, {}).items()))]))
        if len(line) <= _COMMAND_CHARS:
            out["program_command"] = line
        if attach == {"LaunchAnother"}:  # nsys started the program itself: its session began at the launch
            out["program_launched"] = "true"
    if traced:
        out["traced_apis"] = ",".join(traced)
        if not cuda_on:
            out["retrace_apis"] = ",".join(["cuda", *traced])
    return out


def _launch_lead(facts: dict[str, str], zero_ns: int | None, origin: int, files: int) -> dict[str, str]:
    """``launch_lead_ms``: how long after the program's launch the trace's first event lies (the trace's time 0), where
    the capture itself began at that launch -- nsys launched the program (``program_launched``), the window opened
    at once (``START_TRIGGER`` Immediate, no ``START_DELAY_MS``) and the session's start is on the events' clock
    (``ANALYSIS_DETAILS.startTime`` at or before the first event; or, where the export writes its times from the
    session's start, as Nsight 2024+ does, the events' own clock from 0).  Why: ``nsys profile --delay`` counts from
    the launch, so a window put past the warm-up by time needs the warm-up's end on that clock (h37-tracingoff3);
    nothing where the record does not show it -- a delay guessed would start the window in the warm-up."""
    if (files != 1 or zero_ns is None or facts.get("program_launched") != "true"
            or facts.get("capture_start") != "Immediate" or facts.get("start_delay_ms")):
        return {}
    if 0 <= origin - zero_ns <= _MAX_LEAD_NS:
        lead = origin - zero_ns
    elif 0 <= origin <= _MAX_LEAD_NS < zero_ns:  # the export's times count from the session's start
        lead = origin
    else:
        return {}
    return {"launch_lead_ms": f"{lead / 1e6:.3f}"}


#: ``META_DATA_CAPTURE``'s ``CAPTURE_EVENT_TYPE`` value of the OS runtime trace (``nsys profile -t osrt``), and the key
#: of its threshold: calls shorter than it are not recorded (``--osrt-threshold``, ns; Nsight's default 1000).
_OSRT_EVENT_TYPE = "OSRuntime"
_OSRT_THRESHOLD = "OS_RUNTIME_OPTIONS:DURATION_THRESHOLD_NS"
#: ``META_DATA_CAPTURE`` keys of how the CUDA trace's buffers are written (``nsys profile --flush-on-cudaprofilerstop``,
#: ``--cuda-flush-interval``: 0 writes a buffer only when it fills) -> the ``Trace.producer`` fact.
_FLUSH_OPTIONS = {"CUDA_FLUSH_ON_CUDA_PROFILER_STOP": "cuda_flush_on_stop", "CUDA_FLUSH_PERIOD": "cuda_flush_period_ms"}
#: Nsight's own count of the GPU records it dropped, in its diagnostics (``DIAGNOSTIC_EVENT``, Nsight Systems 2025.6:
#: "Number of incomplete CUPTI events dropped: 24806. Incomplete events appear when GPU timestamp information have not
#: been retrieved at the time the profiling session was stopped.").
_DROPPED = re.compile(r"incomplete CUPTI events dropped:\s*(\d+)", re.I)
#: ``nsys profile --duration`` takes whole seconds: the ``RUN_DURATION_MS`` of a session it stopped is a multiple of this.
_DURATION_UNIT_MS = 1000
#: Nsight's diagnostic when the program's own cudaProfilerStart opened the window (``--capture-range=cudaProfilerApi``;
#: Nsight Systems 2025.6: "Profiling started due to cudaProfilerStart API invoked in the application.").
_PROGRAM_START = "cudaProfilerStart API invoked"


def _program_window(schema: tb.Schema) -> bool:
    """Whether the program opened the window itself with cudaProfilerStart, as Nsight's own diagnostics say.  Why:
    Nsight writes ``START_TRIGGER`` Immediate, ``STOP_TRIGGER`` Delayed and ``RUN_DURATION_MS`` -- the session's
    length as it ran -- for such a window too, so those settings alone read as a ``--duration`` that ended it
    (YiconRain/profiling's SGLang exports: a 94.3 ms window, ``RUN_DURATION_MS`` 95, opened at ``cuProfilerStart``;
    h37-survey72)."""
    return bool(tb.diagnostic_texts(schema, _PROGRAM_START, limit=1))


#: Nsight's diagnostics that a traced process's CUDA trace was finalized (its CUPTI counts, written as the trace of that
#: process closes), and that the session stopped.
_TRACE_CLOSED = ("Number of CUPTI events produced%", "Number of incomplete CUPTI events dropped%")
_SESSION_STOPPED = "Profiling has stopped%"


def _program_ended_first(schema: tb.Schema) -> bool:
    """Whether every traced process's CUDA trace closed before the session stopped: the program had ended, so no
    ``--duration`` stopped it while it ran.  Why: ``RUN_DURATION_MS`` is the length the session ran (one ms over it in
    every export read here: nvllm's 3799 for 3798.4 ms, its CUPTI counts written 255 ms before the stop, the program
    gone), and the requested ``--duration`` only where one ended it (``llm_startup_window``: 10000 for a 10,005 ms
    session whose CUPTI counts follow the stop); h37-survey72.  The latest close, not the earliest: each process's
    counts are written as its own trace closes, and a short-lived helper (a compile worker, a device probe) that
    closed early says nothing of the program still running at the stop (h37-review36)."""
    if not schema.has(tb.DIAGNOSTICS, "timestamp", "text"):
        return False
    q = f'SELECT max(timestamp) FROM "{tb.DIAGNOSTICS}" WHERE ' + " OR ".join("text LIKE ?" for _ in _TRACE_CLOSED)
    (closed,) = schema.con.execute(q, _TRACE_CLOSED).fetchone()
    (stopped,) = schema.con.execute(f'SELECT min(timestamp) FROM "{tb.DIAGNOSTICS}" WHERE text LIKE ?',
                                    (_SESSION_STOPPED,)).fetchone()
    return closed is not None and stopped is not None and closed < stopped


def _duration_stop_ms(schema: tb.Schema, facts: dict[str, str]) -> int:
    """The ``--duration`` that stopped the session, in ms; 0 where none did.  Why: Nsight writes ``RUN_DURATION_MS``
    for every session.  Where no duration was asked it is the length the session ran, rounded up to the ms (every such
    export read here: 838 for an 837.0 ms session, 6036 for 6,035.4 ms, 295659 for 295,658.1 ms, 95 for a 94.3 ms
    window the program opened); where one was, it is the duration asked, in whole seconds, and the session outlasts it
    by its stop's latency (``llm_startup_window``: 10000 for a 10,005.4 ms session).  The export keeps no other trace of
    the option (``META_DATA_CAPTURE``'s triggers read Immediate / Delayed either way), so a duration stopped the session
    only where the value is whole seconds and the session ran past it; a session no longer than the value ran its own
    length (cestwc/balinski-and-gomory-cuda ``report6``: 6036 for 6,035.4 ms, read before as "stopped on its --duration
    of 6.0 s"; h37-nsys59)."""
    asked = int(facts.get("run_duration_ms", "0") or 0)
    if not asked or asked % _DURATION_UNIT_MS or not schema.has(tb.ANALYSIS, "startTime", "stopTime"):
        return 0
    row = schema.con.execute(f'SELECT startTime, stopTime FROM "{tb.ANALYSIS}" LIMIT 1').fetchone()
    if not row or row[0] is None or row[1] is None:
        return 0
    return asked if int(row[1]) - int(row[0]) > asked * 1_000_000 else 0


def _records_loss(schema: tb.Schema, facts: dict[str, str]) -> dict[str, str]:
    """What the export says of GPU records it did not write, as ``Trace.producer`` facts read only where the records
    show a loss (``job.kind.lost_launches``): ``records_dropped``, Nsight's own count of the records it dropped (its
    diagnostics), in words; ``records_cause``, the cause the capture's settings show, in words, and ``records_fix``,
    the key of :data:`formats.nsys.WINDOW_FIXES` that fits it.  The settings that lose records: a session stopped on
    its ``--duration`` while CUDA's buffers are written only when they fill (``--cuda-flush-interval`` 0), or a window
    ended at ``cudaProfilerStop`` without a flush there -- the records in buffers not yet written are never retrieved."""
    out: dict[str, str] = {}
    for text in tb.diagnostic_texts(schema, "dropped"):
        m = _DROPPED.search(text)
        if m:
            n = int(m.group(1))
            out["records_dropped"] = (f"Nsight Systems' own diagnostics count {n:,} incomplete CUPTI "
                                      f"{'record' if n == 1 else 'records'} dropped at the session's stop (their GPU "
                                      "timestamps not yet retrieved when it stopped)")
            out["records_dropped_count"] = str(n)
            break
    duration = _duration_stop_ms(schema, facts)
    period = facts.get("cuda_flush_period_ms", "")
    on_stop = facts.get("cuda_flush_on_stop", "")
    stop = facts.get("capture_stop", "").lower()
    unflushed = "and CUDA's trace buffers written only when full (no --cuda-flush-interval)" if period in ("", "0") \
        else ""
    program = _program_window(schema)
    if duration and period in ("", "0") and not program and not _program_ended_first(schema):
        no_stop = " or at a cudaProfilerStop (--flush-on-cudaprofilerstop=false)" if on_stop == "false" else ""
        out["records_cause"] = (f"the capture stopped on its --duration of {duration / 1000:,.1f} s while the program "
                                f"still ran, with no flush of the CUDA trace's buffers on a period{no_stop}, so the records "
                                "still in them were never retrieved")
        out["records_fix"] = "lost_records_duration"
    elif "profilerapi" in stop and on_stop == "false":
        out["records_cause"] = ("the window ended at cudaProfilerStop with the CUDA trace's buffers not flushed there "
                                f"(--flush-on-cudaprofilerstop=false){', ' + unflushed if unflushed else ''}, so the "
                                "records still in them were never retrieved")
        out["records_fix"] = "lost_records_stop"
    elif program:
        out["records_cause"] = ("the program opened and closed the window itself (cudaProfilerStart, then its "
                                "cudaProfilerStop; no --duration ended it), and the GPU work it had launched was not "
                                "finished and written at that stop, so those records were never retrieved")
        out["records_fix"] = "lost_records_program_stop"
    return out


#: Nsight's diagnostic that the CUDA records it wrote may not be all the program made, and its count of the CUDA API
#: events it collected (Nsight Systems 2025.1-2025.5: "Not all CUDA events might have been collected.", "Number of CUDA
#: events collected: 2.").
_CUDA_INCOMPLETE = "Not all CUDA events might have been collected"
_CUDA_COUNT = re.compile(r"Number of CUDA events collected:\s*(\d+)", re.I)


def _trace_unclosed(schema: tb.Schema, raw: _Raw) -> dict[str, str]:
    """``cuda_unclosed``, in words, where the session stopped before any traced process's CUDA trace was finalized:
    Nsight says not all CUDA events might have been collected, it wrote that the session stopped, and it wrote no count
    of the CUPTI records of any process (:data:`_TRACE_CLOSED`: each process's count is written as its CUDA trace
    closes, at its exit or after the stop) -- the records still in CUPTI's buffers were never written.  With it,
    ``cuda_unclosed_after``: what the program did after its last CUDA record that the export keeps (its OS calls
    going on, by how long; its standard output's last line).  Nothing otherwise.

    Why: a CUDA solver run as ``nsys profile build/test1 100`` printed its "Step 0" to "Step 19" over a 6.04 s window
    and never its result; the export keeps 2 CUDA calls of its first 0.3 s and no CUPTI count, and was read "start-up
    only ... no kernel was launched in the window" with the fix to record where the steps run -- where they ran in it
    and their records were never written (cestwc/balinski-and-gomory-cuda ``report6.sqlite``, h37-nsys58).  A session
    that stopped on its ``--duration`` while the program loaded a model (``llm_startup_window``) writes its CUPTI count
    after the stop: its trace closed, and what it holds is what the program did."""
    if not tb.diagnostic_texts(schema, _CUDA_INCOMPLETE, limit=1) or not tb.diagnostic_texts(
            schema, _SESSION_STOPPED.rstrip("%"), limit=1):
        return {}
    if any(tb.diagnostic_texts(schema, closed.rstrip("%"), limit=1) for closed in _TRACE_CLOSED):
        return {}
    counted = next((m.group(1) for m in map(_CUDA_COUNT.search, tb.diagnostic_texts(schema, "CUDA events collected"))
                    if m), "")
    out = {"cuda_unclosed": ("Nsight Systems stopped the session before the program's CUDA trace was finalized: it "
                             "wrote no count of the program's CUPTI records, and says not all CUDA events might have "
                             f"been collected{f' (it collected {int(counted):,})' if counted else ''}")}
    runtime = np.flatnonzero(np.fromiter((devices.is_runtime_call(n) for n in raw.h_names), bool,
                                         len(raw.h_names))[raw.h_name]) if raw.h_name.size else np.empty(0, np.int64)
    if runtime.size:
        last_ns = int(raw.h_end[runtime].max())
        after = []
        # the OS calls of the processes that called CUDA (not the profiler's own, nor a process beside it)
        mine = np.isin(raw.os_tid >> 24, np.unique(raw.h_tid[runtime].astype(np.int64) >> 24))
        if mine.any() and int(raw.os_end[mine].max()) > last_ns:
            after.append(f"its threads' OS calls go on {(int(raw.os_end[mine].max()) - last_ns) / 1e6:,.1f} ms after "
                         "its last CUDA record")
        lines = [ln.strip() for t in tb.program_stderr(schema, 4096, "stdout") for ln in t.splitlines() if ln.strip()]
        if lines:
            after.append(f"its standard output ends \"{lines[-1][:120]}\"")
        if after:
            out["cuda_unclosed_after"] = "; ".join(after)
    return out


def _thread_key(global_tid: np.ndarray, fidx: int) -> np.ndarray:
    """A thread across the exports read together: its serialized id with the file's number in place of the hardware
    id (bits 56-63).  ``key >> 24`` is then its process across the files (:func:`_process_key`)."""
    return (global_tid.astype(np.int64) & _LOW56) | (np.int64(fidx) << 56)


def _process_key(global_pid: np.ndarray, fidx: int) -> np.ndarray:
    """A process across the exports read together, as ``_thread_key(tid) >> 24`` gives it for its threads."""
    return (global_pid.astype(np.int64) & _LOW56) >> 24 | (np.int64(fidx) << 32)


def _concat(parts: list[dict], keys: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The tables' columns, one column at a time, each part's column dropped once copied (the peak is one column)."""
    if not parts:
        return {k: np.zeros(0, np.int64) for k in keys}
    out = {}
    for k in keys:
        arrs = [p.pop(k) for p in parts]
        out[k] = np.concatenate(arrs) if len(arrs) > 1 else arrs[0]
        del arrs
    return out


#: The name of an NVTX range with neither a text nor a registered string.
_UNNAMED = "(unnamed NVTX range)"


class _Names(dict):
    """Name -> its index, a new name interned on its first look-up (``names[t]``, in C for a name already there):
    NVTX names arrive one per row.  ``None`` (a range whose name is a ``textId``) reads as the unnamed range's index
    and is never a key."""

    def __missing__(self, name: str | None) -> int:
        if name is None:
            return self[_UNNAMED]
        i = self[name] = len(self)
        return i


def _is_none(x: object) -> bool:
    return x is None


class _StringNames:
    """The name index of each of a compiled scan's distinct texts (:class:`tables.Texts` ``strings``), as far as its
    chunks have reached: the scan numbers its texts in order of first appearance, so a chunk's texts not seen before
    are the indices from ``done`` to its largest, in the order its rows first show them."""

    def __init__(self) -> None:
        self.strings: list[str] | None = None
        self.ids = np.zeros(0, np.int32)
        self.done = 0

    def upto(self, names: dict[str, int], strings: list[str], last: int, intern: bool = True) -> np.ndarray:
        """The name indices of texts 0..``last``, each text not seen before interned now, in index order; without
        ``intern`` only looked up (-1: not a name -- a text every row of which was replaced)."""
        if strings is not self.strings:  # another scan's texts
            self.strings, self.ids, self.done = strings, np.zeros(0, np.int32), 0
        if last >= self.ids.size:
            grown = np.zeros(max(last + 1, 2 * self.ids.size), np.int32)
            grown[:self.done] = self.ids[:self.done]
            self.ids = grown
        for k in range(self.done, last + 1):
            self.ids[k] = names[strings[k]] if intern else names.get(strings[k], -1)
        self.done = max(self.done, last + 1)
        return self.ids


def _row_names(names: dict[str, int], texts: list | sqlite.Texts,
               seen: _StringNames | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(each row's name index, interned in row order as ``names[text]`` one row after another interns them; the rows
    whose text is None).  The compiled reader's texts (:class:`tables.Texts`) are interned one distinct text at a
    time: a chunk with neither a None nor a replaced text by ``seen`` (its new texts come in index order, and a text
    seen before interns nothing), any other in order of first appearance -- the same indices either way."""
    if isinstance(texts, sqlite.Texts) and seen is not None and texts.idx.size and not texts.replaced:
        last = int(texts.idx.max())
        if int(texts.idx.min()) >= 0:
            return seen.upto(names, texts.strings, last)[texts.idx], np.zeros(0, np.intp)
    if isinstance(texts, sqlite.Texts):
        strings, key = texts.strings, texts.idx
        over = list(texts.replaced.items())  # a replaced text: a distinct key of its own, past the strings
        if over:
            key = key.astype(np.int64)
            key[[i for i, _ in over]] = np.arange(len(strings), len(strings) + len(over))
        distinct, first, inv = np.unique(key, return_index=True, return_inverse=True)
        ids = np.empty(distinct.size, np.int32)
        for k in np.argsort(first, kind="stable").tolist():
            i = int(distinct[k])
            ids[k] = names[None if i < 0 else strings[i] if i < len(strings) else over[i - len(strings)][1]]
        if seen is not None and texts.idx.size:  # every text of the chunk is a name now: known to later chunks
            seen.upto(names, strings, int(texts.idx.max()), intern=False)
        return ids[inv.reshape(-1)], np.flatnonzero(key < 0)
    ids = np.fromiter(map(names.__getitem__, texts), np.int32, len(texts))  # _Names: interned in row order
    return ids, np.flatnonzero(np.fromiter(map(_is_none, texts), bool, len(texts)))


def _intern(table: dict[str, int], name: str) -> int:
    i = table.get(name)
    if i is None:
        i = table[name] = len(table)
    return i


def _api_name(name: str) -> str:
    """A CUDA API function without its version suffix (``cudaStreamSynchronize_v3020`` -> ``cudaStreamSynchronize``)."""
    return _VERSION_SUFFIX.sub("", name)


def _nvtx_select(schema: tb.Schema, cols: frozenset[str]) -> tuple[str, str, dict[str, str | None]]:
    """The SQL that reads :func:`_nvtx`'s ranges from this export's columns: the rows' filter, the name's text, and
    the integer columns (absent ones None).  Apart because the columns differ by Nsight version and what was traced;
    the suffix's cut and the autograd and annotation flags are computed by SQLite, so no row's text is looked at in
    Python unless it needs it."""
    where = "end IS NOT NULL AND end >= start"
    if "eventType" in cols:  # else every row with an end is a range (marks, domains and categories have none)
        where = f"eventType IN ({', '.join(str(t) for t in _range_types(schema))}) AND {where}"
    # a BLOB where a name is: its bytes as text; an empty text beside a registered string's id is no name: exports of
    # Nsight 2020-2021 declare every column NOT NULL and write a default where a value is missing (their "SQLite
    # Export Schema Reference"), so a registered name's row holds '' in ``text``, its name in ``textId``
    text = "NULL" if "text" not in cols else (
        "CAST(CASE WHEN text = '' AND textId > 0 THEN NULL ELSE text END AS TEXT)" if "textId" in cols
        else "CAST(text AS TEXT)")
    # where the suffix starts (1-based, 0: none): PyTorch writes them in OP_SUFFIXES' order, so the first one found
    # in that order is the first in the name; coalesce stops at it (one instr() per autograd range)
    cut = "coalesce(" + ", ".join(f"nullif(instr({text}, '{sfx}'), 0)" for sfx in nvtx.OP_SUFFIXES) + ", 0)"
    int_cols = {"start": "start", "end": "end", "tid": "globalTid", "text_id": "textId" if "textId" in cols else None,
                "domain": "domainId" if "domainId" in cols else None, "suffix": cut,
                "seq": f"coalesce(instr({text}, '{nvtx.GRAD_SEQ}') > 0, 0)",
                # a name that is a dict literal: PyProf / DLProf annotation, named by frameworks.nvtx (few rows
                # elsewhere, so the Python look-up runs only on these)
                "annotation": f"coalesce(substr({text}, 1, 1) = '{{', 0)"}
    return where, text, int_cols


def _name_registered(schema: tb.Schema, names: dict[str, int], registered: dict[int, tuple[int, bool, bool]],
                     c: dict[str, np.ndarray], ids: np.ndarray, none: np.ndarray) -> None:
    """Name the rows ``none`` of a chunk (no inline text) by their registered string (``textId``), in place: ``ids``,
    and the chunk's ``suffix`` and ``seq`` flags as the text would have set them.  Each id's string is read once for
    the whole table (``registered``, filled here), so a range named by id costs one look-up a distinct name."""
    tids = c["text_id"][none]
    missing = [int(t) for t in sorted_unique(tids).tolist() if t >= 0 and int(t) not in registered]
    if missing:
        strings = tb.string_table(schema, np.array(missing, np.int64))
        for t in missing:
            name, is_op = nvtx.op_name(strings[t]) if t in strings else (_UNNAMED, False)
            # cut like an inline text: a suffixed name is weighed as an op or the user's scope below
            cut_off = is_op or nvtx.has_op_suffix(strings.get(t, ""))
            registered[t] = (_intern(names, name), cut_off, nvtx.GRAD_SEQ in strings.get(t, ""))
    # per distinct id; the unnamed range interned (where first needed) after the registered names, as before
    uids, inv = unique_inverse(tids)
    got = [registered.get(int(t)) or (_intern(names, _UNNAMED), False, False) for t in uids.tolist()]
    ids[none] = np.array([g[0] for g in got], np.int32)[inv]
    c["suffix"][none] = np.array([int(g[1]) for g in got], np.int8)[inv]
    c["seq"][none] = np.array([int(g[2]) for g in got], np.int8)[inv]


def _nvtx(schema: tb.Schema, names: dict[str, int], fidx: int) -> tuple[dict | None, list[str], int]:
    """NVTX push/pop and start/end ranges (not marks, not domain or category records) as host events, their domains'
    names, and how many of them are ops autograd recorded (``, seq = N``: grad mode on, a graph kept for a backward).

    Names are cut before PyTorch's autograd suffixes (``frameworks.nvtx.OP_SUFFIXES``) in SQL, so the rows' names
    arrive as the few distinct op and range names they are, and are interned in one dict look-up each; the sequence
    number the cut drops is counted first (``frameworks.nvtx.GRAD_SEQ``)."""
    cols = schema.columns(tb.NVTX)
    domains = _domain_names(schema) if "domainId" in cols else {}
    where, text, int_cols = _nvtx_select(schema, cols)
    parts: dict[str, list[np.ndarray]] = {k: [] for k in int_cols}
    name_parts: list[np.ndarray] = []
    registered: dict[int, tuple[int, bool, bool]] = {}  # textId -> (name id, is an op, recorded by autograd)
    hook_parts: list[np.ndarray] = []  # per row: a framework's forward-hook marker (``nvtx.is_module_hook``)
    seen = _StringNames()
    # an autograd range's text arrives cut before its suffix: its name
    for c, texts in sqlite.mixed_columns(schema, tb.NVTX, int_cols, text, where=where, cut="suffix"):
        for k, v in c.items():
            parts[k].append(v)
        cut = c["suffix"]
        hooked = np.zeros(cut.size, bool)
        for i in np.flatnonzero(c["annotation"] > 0).tolist():  # PyProf / DLProf: the op's name, or the tool's range
            hooked[i] = nvtx.is_module_hook(texts[i])
            found = nvtx.annotation_name(texts[i])
            if found is not None:
                texts[i] = found[0]
                cut[i] = int(found[1])
        hook_parts.append(hooked)
        ids, none = _row_names(names, texts, seen)
        if none.size:
            _name_registered(schema, names, registered, c, ids, none)
        name_parts.append(ids)
    if not name_parts:
        return None, [""], 0
    c = {k: sqlite.joined(parts.pop(k)) for k in list(parts)}
    name = np.concatenate(name_parts) if len(name_parts) > 1 else name_parts[0]
    n = name.size
    op_prefix = np.fromiter((nvtx.is_op_name(x) for x in names), bool, len(names))
    # a suffixed range autograd did not number (no ``seq``) whose name is no framework op's may be the user's own
    # ``record_function`` under ``emit_nvtx`` (``train_step, op_id = 7``): ``_SCOPE`` until :func:`_user_scopes`
    # sees whether it holds the program's calls (a block of the program) or none (an op PyTorch records by a bare
    # name, ``detach_``)
    user_scope = np.fromiter((nvtx.is_user_scope(x) for x in names), bool, len(names))
    scoped = (c["suffix"] > 0) & (c["seq"] == 0) & (c["annotation"] == 0) & user_scope[name]
    op = ((c["suffix"] > 0) | op_prefix[name]).astype(np.int8)
    op[scoped] = _SCOPE
    dom_ids, dom_inv = unique_inverse(c["domain"])
    dom_names = [""] + [_domain_label(int(d), domains) for d in dom_ids.tolist() if int(d) > 0]
    local = np.array([0 if int(d) <= 0 else dom_names.index(_domain_label(int(d), domains)) for d in dom_ids.tolist()],
                     dtype=np.int16)
    op_domain = np.fromiter((nvtx.is_framework_op_domain(d) for d in dom_names), bool, len(dom_names))
    op[op_domain[local[dom_inv]]] = 1  # a framework's op domain (TensorFlow's ``tensorflow-core``): every range an op
    # NVIDIA's layer-wise forward hooks (vLLM, SGLang, TensorRT-LLM): no op, no user block -- the framework's module
    # structure, named by its module (h37-fwnvtx3)
    op[(np.concatenate(hook_parts) if len(hook_parts) > 1 else hook_parts[0]) & (op == 0)] = _HOOK
    part = dict(start=c["start"], end=c["end"], tid=_thread_key(c["tid"], fidx), name=name, corr=np.full(n, -1, np.int64),
                range=np.ones(n, bool), op=op, domain=local[dom_inv])
    return part, dom_names, int(np.count_nonzero(c["seq"]))


#: The ``op`` code of a range that is the user's ``record_function`` where it holds the program's calls (``_nvtx``).
_SCOPE = 2
#: The ``op`` code of a framework's forward-hook marker (``frameworks.nvtx.is_module_hook``): no op, and no range the
#: program wrote around its own code (``HostRanges.framework``).
_HOOK = 3


def _user_scopes(op: np.ndarray, line: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Bool op flag per host event (ordered by thread, start, longer first) from ``_nvtx``'s codes: a ``_SCOPE`` range
    is the user's block (no op) where the next event of its thread starts inside it -- a ``record_function`` around
    the program's code holds its ops and CUDA calls -- and an op where it holds none (``detach_, op_id = 5``:
    PyTorch's ``VariableTypeManual`` records ``detach`` / ``detach_`` by a bare name, with nothing inside)."""
    out = op == 1
    cand = np.flatnonzero(op == _SCOPE)
    if cand.size:
        nxt = np.minimum(cand + 1, op.size - 1)
        holds = (nxt != cand) & (line[nxt] == line[cand]) & (start[nxt] < end[cand])
        out[cand[~holds]] = True
    return out


def _domain_label(d: int, domains: dict[int, str]) -> str:
    return domains.get(d) or f"domain {d}"


def _range_types(schema: tb.Schema) -> tuple[int, ...]:
    """NVTX event types that are ranges: from ``ENUM_NSYS_EVENT_TYPE`` where the export has it."""
    enum = tb.enum_labels(schema, "ENUM_NSYS_EVENT_TYPE")
    found = tuple(sorted(i for i, n in enum.items() if n.startswith("Nvtx") and n.endswith(("PushPopRange", "StartEndRange"))))
    return found or _RANGE_TYPES


def _domain_names(schema: tb.Schema) -> dict[int, str]:
    """Domain id -> name, from the ``NvtxDomainCreate`` records (a sliced export may have lost them)."""
    cols = schema.columns(tb.NVTX)
    if "domainId" not in cols or "eventType" not in cols:
        return {}
    text = "text" if "text" in cols else "NULL"
    out = {}
    for d, t in schema.con.execute(f'SELECT domainId, {text} FROM "{tb.NVTX}" WHERE eventType = {_DOMAIN_CREATE} '
                                   f'AND {tb.integers("domainId")}'):
        if isinstance(t, str) and t:
            out[int(d)] = t
    return out


def _device_cols(schema: tb.Schema, table: str) -> dict[str, str | None]:
    """The columns of one activity table that device events are made of."""
    cols = {"start": "start", "end": "end", "dev": "deviceId", "pid": "globalPid", "stream": "streamId",
            "corr": "correlationId"}
    present = schema.columns(table)
    if table == tb.KERNEL:
        cols["name"] = next((k for k in _KERNEL_NAMES if k in present), _KERNEL_NAMES[0])
        cols["graph"] = "graphId"
        cols.update(_launch_exprs(present))
    elif table == tb.MEMCPY:
        cols.update(bytes="bytes", kind="copyKind", src="srcKind", dst="dstKind", cause="migrationCause")
        cols["graph"] = None
    elif table == tb.MEMSET:
        cols.update(bytes="bytes", mem="memKind")
        cols["graph"] = None
    else:  # graph executions
        cols["graph"] = "graphId"
    return cols


#: A kernel's name columns, the one read first first: ids into ``StringIds``.  Every export since Nsight 2021 writes
#: all three; an id that names no string (a name the export lost) is read from the next column of the same row.
_KERNEL_NAMES = ("demangledName", "shortName", "mangledName")


def _kernel_names(schema: tb.Schema, table: str, first: str, ids: np.ndarray) -> tuple[np.ndarray, dict[int, str]]:
    """Each kernel row's name id -- its ``first`` name column's, else (an id naming no string, or none: a name the
    export lost) the next name column's of the same row (:data:`_KERNEL_NAMES`), read only where needed -- and the
    strings of those ids.  The columns are read in row order (``sqlite.int_columns``), as ``ids`` was."""
    present = schema.columns(table)
    later = [k for k in _KERNEL_NAMES[_KERNEL_NAMES.index(first) + 1:] if k in present] if first in _KERNEL_NAMES else []
    strings = tb.string_table(schema, ids)
    for col in later:
        good = np.isin(ids, np.fromiter((i for i, v in strings.items() if v), np.int64))
        if good.all():
            break
        other = sqlite.int_columns(schema, table, {"s": col})["s"]
        if other.size != ids.size:  # rows of another count: never mix two rows' names
            break
        ids = np.where(good, ids.astype(np.int64, copy=False), other)
        strings.update(tb.string_table(schema, other[~good]))
    return ids, strings


#: Where a launch count saturates (int32, as the other formats' columns): far above any GPU's SMs or a block's threads.
_LAUNCH_TOP = (1 << 31) - 1


def _launch_exprs(present: frozenset[str]) -> dict[str, str | None]:
    """SQL of a kernel's launch configuration: blocks in its grid (gridX*gridY*gridZ) and threads per block
    (blockX*blockY*blockZ), saturated at int32's top; NULL (read as -1) where a dimension is negative or absent --
    the SQL runs alike on the compiled and the Python reader, so both give the same columns."""
    out: dict[str, str | None] = {}
    for col, dim in (("blocks", "grid"), ("threads", "block")):
        x, y, z = (f"{dim}{a}" for a in "XYZ")
        if not {x, y, z} <= present:
            out[col] = None
            continue
        out[col] = (f"CASE WHEN {x} >= 0 AND {y} >= 0 AND {z} >= 0 "
                    f"THEN min(min({x} * {y}, {_LAUNCH_TOP}) * {z}, {_LAUNCH_TOP}) END")
    return out


def _device_table(schema: tb.Schema, table: str, cols: dict[str, str | None], c: dict[str, np.ndarray],
                  d_names: dict[str, int], fidx: int, launcher: int | None = None) -> dict[str, np.ndarray]:
    """One activity table's rows (its columns ``c``, read as ``cols`` says) as device events.  ``launcher``: the one
    process whose CUDA calls the export holds (serialized), the process of a row whose ``globalPid`` is absent, NULL
    or 0 (an export whose activity tables do not say it): its launch is that process's call of the same
    correlation id."""
    n = c["start"].size
    if table == tb.KERNEL:
        name_ids, strings = _kernel_names(schema, table, cols["name"], c["name"])
        ids, inv = unique_inverse(name_ids)
        local = np.array([_intern(d_names, strings.get(int(i)) or f"kernel {int(i)}") for i in ids.tolist()], np.int32)
        name = local[inv] if n else local[:0]
        nbytes = np.full(n, -1, np.int8)
        blocks, threads = narrowest(c["blocks"]), narrowest(c["threads"])  # 8 bytes a kernel each as fetched
    elif table == tb.MEMCPY:
        kinds = _mem_kinds(schema)
        asked = c["cause"] == _USER_PREFETCH  # a migration the program's cudaMemPrefetchAsync asked for
        combo = (c["kind"].astype(np.int64) * 4096) + (np.clip(c["src"], -1, 62).astype(np.int64) + 1) * 64 + \
            (np.clip(c["dst"], -1, 62).astype(np.int64) + 1) + asked.astype(np.int64) * (1 << 40)
        ids, inv = unique_inverse(combo)
        labels = []
        for k in ids.tolist():
            kind, src, dst = (k % (1 << 40)) // 4096, (k // 64) % 64 - 1, k % 64 - 1
            labels.append(_intern(d_names, _copy_name(kind, kinds.get(src), kinds.get(dst), k >= 1 << 40)))
        name = np.array(labels, np.int32)[inv] if n else np.zeros(0, np.int32)
        nbytes = c["bytes"]
    elif table == tb.MEMSET:
        kinds = _mem_kinds(schema)
        ids, inv = unique_inverse(c["mem"])
        labels = [_intern(d_names, f"Memset ({kinds.get(int(k), 'Device')})") for k in ids.tolist()]
        name = np.array(labels, np.int32)[inv] if n else np.zeros(0, np.int32)
        nbytes = c["bytes"]
    else:
        ids, inv = unique_inverse(c["graph"])
        labels = [_intern(d_names, f"CUDA graph {int(g)}" if g >= 0 else "CUDA graph") for g in ids.tolist()]
        name = np.array(labels, np.int32)[inv] if n else np.zeros(0, np.int32)
        nbytes = np.full(n, -1, np.int8)
    gpid = c["pid"]
    pids = tb.pid_of(gpid)
    if launcher is not None:
        unknown = (gpid < 0) | (pids == 0)  # NULL, absent, or Nsight 2020-2021's default 0: no process is 0
        if unknown.any():
            gpid = np.where(unknown, np.int64(launcher), gpid)
            pids = tb.pid_of(gpid)
    has_pid = gpid >= 0
    pid = np.where(has_pid, pids, 0)
    graph = c["graph"]
    if table == tb.KERNEL and graph.size and int(graph.max()) <= 0:
        graph = np.full(n, -1, np.int8)  # node mode writes 0 (or NULL) for kernels outside a graph
    elif table == tb.KERNEL:
        graph = np.where(graph > 0, graph, -1)
    proc = np.where(has_pid, _process_key(gpid, fidx), -1)
    if table != tb.KERNEL:
        blocks = threads = np.full(n, -1, np.int8)
    return dict(start=c["start"], end=c["end"], dev=c["dev"], pid=proc, stream=c["stream"],
                corr=_corr_key(pid, c["corr"], fidx), name=name, bytes=nbytes, graph=graph, blocks=blocks,
                threads=threads)


def _mem_kinds(schema: tb.Schema) -> dict[int, str]:
    """``ENUM_CUDA_MEM_KIND`` as the labels a copy's name carries (``Pageable``, ``Device Static``): the table's
    ``label``, or where it has only its ``name`` (``CUDA_MEMOPR_MEMORY_KIND_PAGEABLE``), the words after ``KIND_``
    -- a copy from pageable memory is named so whichever column the export wrote; :data:`_MEM_KINDS` where the export
    has no such table (Nsight 2022.2's ``saxpy-mpi-cuda`` export: its copies' kinds number as these do)."""
    out = {}
    for i, v in tb.enum_labels(schema, "ENUM_CUDA_MEM_KIND").items():
        word = v.rsplit("KIND_", 1)[-1] if v.isupper() else v
        out[i] = word.replace("_", " ").title() if word.isupper() else word
    return out or _MEM_KINDS


def _copy_name(kind: int, src: str | None, dst: str | None, asked: bool = False) -> str:
    """A copy as CUPTI names it to PyTorch's profiler: ``Memcpy HtoD (Pinned -> Device)``; a Unified Memory page
    migration ``Memcpy HtoD (Unified Memory page migration)``, or ``(Unified Memory prefetch)`` where the program's
    ``cudaMemPrefetchAsync`` asked for it (``asked``)."""
    direction = _COPY_DIRECTION.get(kind, "Other")
    base = f"Memcpy {direction}" if direction != "Other" else "Memcpy"
    if kind in _UVM_KINDS:  # its memory kinds are "Unknown": the driver's paging, or the program's prefetch
        return f"{base} ({devices.UM_PREFETCH if asked else devices.PAGE_MIGRATION})"
    if src or dst:
        return f"{base} ({src or 'Unknown'} -> {dst or 'Unknown'})"
    return base


def _thread_names(schema: tb.Schema) -> dict[int, str]:
    if not schema.has(tb.THREADS, "nameId", "globalTid"):
        return {}
    # a row whose ids are no integers (text, a blob, a REAL: another schema's table of this name) names no thread
    rows = schema.con.execute(f'SELECT globalTid, nameId FROM "{tb.THREADS}" '
                              f'WHERE {tb.integers("globalTid", "nameId")}').fetchall()
    ids = np.array([r[1] for r in rows if r[1] is not None], np.int64)
    strings = tb.string_table(schema, ids)
    return {int(t): strings[int(n)] for t, n in rows if t is not None and n is not None and int(n) in strings}


def _process_names(schema: tb.Schema) -> dict[int, str]:
    if not schema.has(tb.PROCESSES, "pid", "name"):
        return {}
    return {int(p): str(n) for p, n in schema.con.execute(f'SELECT pid, name FROM "{tb.PROCESSES}" '
                                                          f'WHERE {tb.integers("pid")}') if n}


def _close_open_ranges(schema: tb.Schema, raw: _Raw) -> None:
    """``raw``'s NVTX ranges still open when the capture stopped ended no later than the last thing the capture
    recorded otherwise (runtime calls, GPU work, OS calls, the ranges that closed), as the Kineto reader ends a trace's
    open annotations (``formats/kineto/adapter._close_open_annotations``).

    Why: Nsight's export ends a range the program pushed and never popped at the session's end, to the nanosecond
    (``ANALYSIS_DETAILS``: its ``duration`` on a clock that starts with the session, its ``stopTime`` on the session's
    own) -- no program's range ends there by itself.  PyProf's wrapper pushes a range around each ``torch`` call and
    pops it on return, so a call that raises never pops it: 1,404 ranges of a model's ``__getattr__('extra_repr')``
    (``print(model)``) on one thread all ended at the capture's end, 0.7 s after the process's last recorded OS call,
    and the one pass of its forward read 3.70 s where it ran 3.00 s (yyhtbs-yye/mmagic_vsr_v2's ``net.sqlite``,
    survey h37-survey39).  Where the process left nothing but ranges (an NVTX-only window), nothing shows it stopped
    before the capture did: its open range is kept to the end."""
    if not raw.h_range.any() or not schema.has(tb.ANALYSIS, "duration", "stopTime"):
        return
    row = schema.con.execute(f'SELECT duration, stopTime FROM "{tb.ANALYSIS}" LIMIT 1').fetchone()
    stops = [int(v) for v in (row or ()) if v is not None and int(v) > 0]
    if not stops:
        return
    ends = raw.h_end.astype(np.int64, copy=False)
    still = raw.h_range & np.isin(ends, np.asarray(stops, np.int64))
    if not still.any():
        return
    # what else the process left shows it alive: its runtime calls, GPU work and OS calls (not the ranges that closed:
    # an NVTX-only window's last range open at the end ran until the capture stopped, as far as anything shows)
    calls = ~raw.h_range
    last = [int(ends[calls].max())] if calls.any() else []
    last += [int(x.max()) for x in (raw.d_end, raw.os_end) if x.size]
    if not last:
        return
    raw.h_end = np.where(still, np.maximum(raw.h_start, max(last)), raw.h_end).astype(raw.h_end.dtype, copy=False)


def _session_window(schema: tb.Schema) -> tuple[int | None, float | None, int | None]:
    """(the session's start on the export's clock, the capture's length in ms, where a time slice starts):
    ``ANALYSIS_DETAILS``; a time slice of an export (``DERIVED_WINDOW_NS``) is as long as its slice and starts where
    it does, not at the session's start (fsdp_mfu_before: a 300 ms slice 31.8 s in, h37-left37)."""
    zero, capture, start = None, None, None
    if schema.has(tb.ANALYSIS, "startTime"):
        row = schema.con.execute(f'SELECT startTime, stopTime FROM "{tb.ANALYSIS}" LIMIT 1').fetchone()
        if row and row[0] is not None:
            zero = int(row[0])
            if row[1] is not None and int(row[1]) > zero:
                capture = (int(row[1]) - zero) / 1e6
    elif schema.has(tb.SESSION_START, "systemClockNs"):
        row = schema.con.execute(f'SELECT systemClockNs FROM "{tb.SESSION_START}" LIMIT 1').fetchone()
        zero = int(row[0]) if row and row[0] is not None else None
    for name, value in tb.key_values(schema, tb.META_EXPORT) + tb.key_values(schema, tb.META_EXPORT_OLD):
        if name == "DERIVED_WINDOW_NS":
            a, _, b = value.partition("-")
            if a.strip().isdigit() and b.strip().isdigit() and int(b) > int(a):
                capture, start = (int(b) - int(a)) / 1e6, int(a)
    return zero, capture, start


def _session_utc(schema: tb.Schema) -> int | None:
    """The wall-clock time (UTC ns) at the export's time 0: ``TARGET_INFO_SESSION_START_TIME.utcEpochNs``, the
    session's start, from which its timestamps count.  None where the export does not record it."""
    if not schema.has(tb.SESSION_START, "utcEpochNs"):
        return None
    row = schema.con.execute(f'SELECT utcEpochNs FROM "{tb.SESSION_START}" LIMIT 1').fetchone()
    return int(row[0]) if row and isinstance(row[0], int) and row[0] > 0 else None


# --------------------------------------------------------------------------- GPU model


def _gpus_by_process(schema: tb.Schema, raw: _Raw) -> bool:
    """Where processes of one export each number their GPUs from 0 (``CUDA_VISIBLE_DEVICES`` giving each rank one
    GPU), ``raw.d_dev`` renumbered by Nsight's GPU id (``TARGET_INFO_GPU.id``) through ``TARGET_INFO_CUDA_DEVICE``
    (``pid``, ``cudaId`` -> ``gpuId``); True where it was (then the GPU table is keyed by ``id``).

    Why: a device row's ``deviceId`` is its process's CUDA ordinal, not Nsight's GPU id -- the CS336 DDP export
    (``tests/fixtures/nsys_ranks``, Nsight 2026.3: GPU id 0 is ``cuDevice`` 1) runs ``mp.spawn``'s first process
    (``cuda:0``) on ``deviceId`` 0 and the second (``cuda:1``) on 1, its stray context on ``deviceId`` 0 (survey
    h37-survey24's left, h37-left49).  Read as one key, two ranks on ordinal 0 were one GPU with the first GPU's
    model.  Only where two processes' same ordinal names different GPUs, and every (process, ordinal) is in the
    table: elsewhere the ordinal is kept (the GPU ids the reports have always shown)."""
    found = _process_gpus(schema, raw)
    if found is None:
        return False
    gpu_of, key, named = found
    if not any(len(v) > 1 for v in named.values()):
        return False
    ukey, inv = unique_inverse(key)
    raw.d_dev = np.array([gpu_of[(int(k) // 4096, int(k) % 4096)] for k in ukey.tolist()], np.int64)[inv]
    return True


def _process_gpus(schema: tb.Schema, raw: _Raw) -> tuple[dict[tuple[int, int], int], np.ndarray,
                                                         dict[int, set[int]]] | None:
    """``TARGET_INFO_CUDA_DEVICE``'s (pid, CUDA ordinal) -> Nsight GPU id, each device row's (pid, ordinal) key, and
    ordinal -> the GPU ids it names among the device rows' processes; None where the export lacks the table or a
    device row's process and ordinal are not in it."""
    if not raw.d_dev.size or not schema.has(tb.CUDA_DEVICE, "gpuId", "cudaId", "pid"):
        return None
    gpu_of: dict[tuple[int, int], int] = {}
    for row in tb.dict_rows(schema, tb.CUDA_DEVICE):
        g, c, p = (_first_int(row, k) for k in ("gpuId", "cudaId", "pid"))
        if g is not None and c is not None and p is not None:
            gpu_of[(p, c)] = g
    pids = np.where(raw.d_pid >= 0, raw.d_pid.astype(np.int64) & 0xFFFFFF, -1)  # ``_process_key``: the pid's bits low
    dev = np.clip(raw.d_dev.astype(np.int64), 0, 4095)
    key = pids * 4096 + dev
    pairs = [(int(k) // 4096, int(k) % 4096) for k in sorted_unique(key).tolist()]
    if any(p < 0 or (p, d) not in gpu_of for p, d in pairs):
        return None
    named: dict[int, set[int]] = {}
    for p, d in pairs:
        named.setdefault(d, set()).add(gpu_of[(p, d)])
    return gpu_of, key, named


def _ordinal_gpus(schema: tb.Schema, raw: _Raw) -> dict[int, int]:
    """CUDA ordinal -> Nsight GPU id (``TARGET_INFO_GPU.id``) of the device rows, where ``TARGET_INFO_CUDA_DEVICE``
    names one GPU for each ordinal they use; {} else.

    Why: ``TARGET_INFO_GPU`` lists the machine's GPUs in Nsight's own numbering (``id``; ``cuDevice`` the machine's
    CUDA order), while a device row's ``deviceId`` is its process's ordinal, which ``CUDA_VISIBLE_DEVICES`` renumbers
    from 0.  A job run with ``CUDA_VISIBLE_DEVICES=1`` on a workstation whose GPU 0 is its display card ran every kernel
    on ordinal 0 -- and was read as the display card (6 SMs where the H100 has 132: its small grids unseen, its peak
    a T400's).  The per-process table says which GPU each ordinal was (h37-probe43v)."""
    found = _process_gpus(schema, raw)
    if found is None:
        return {}
    named = found[2]
    return {d: next(iter(g)) for d, g in named.items()} if all(len(g) == 1 for g in named.values()) else {}


def _stream_kinds(schema: tb.Schema, fidx: int = 0) -> tuple[dict[tuple[int, int], str],
                                                             dict[tuple[int, int], tuple[int, int]]]:
    """(process, ``streamId``) -> the stream's kind as ``TARGET_INFO_CUDA_STREAM.flag`` states it, read through the
    export's ``ENUM_CUPTI_STREAM_TYPE`` labels ("Null stream", "Non-blocking stream", "Default stream") where it has
    them, else CUPTI's numbers (:data:`_STREAM_FLAGS`); a stream listed twice with two kinds, or of an unknown flag,
    is left out.  And (process, ``streamId``) -> its context, (process, ``contextId``).  The process is the export's
    number ``fidx`` and the pid (:func:`_stream_process`).

    Why: the legacy default stream orders itself against every blocking stream of its context -- a copy on it waits
    for the kernels on the others and they for it -- and only this table says which stream that is: the real exports'
    NULL stream is ``streamId`` 7 where one process ran, while an H100 FSDP job's second process ran its default
    stream as 15 (h37-stream70).  Why the context: that order holds inside one context only -- a second process's,
    or a second context's, streams on the same GPU are not held by it (matmul_rtx3060_laptop_pinned_sync's one process
    ran three contexts, NULL streams 7, 14 and 21); and why the export's number: ranks in containers share their pid
    (the same pid and ``streamId`` in two exports are two streams, h37-copy71)."""
    rows = tb.dict_rows(schema, tb.CUDA_STREAM)
    if not rows:
        return {}, {}
    kinds = dict(_STREAM_FLAGS)
    for i, label in tb.enum_labels(schema, "ENUM_CUPTI_STREAM_TYPE").items():
        low = label.lower().replace("_", "-")
        kinds[i] = (STREAM_LEGACY_DEFAULT if "null" in low else STREAM_NON_BLOCKING if "non-blocking" in low
                    else STREAM_BLOCKING if "default" in low else "")
    out: dict[tuple[int, int], str] = {}
    contexts: dict[tuple[int, int], tuple[int, int]] = {}
    seen: set[tuple[int, int]] = set()
    for row in rows:
        pid, sid, flag = _first_int(row, "processId"), _first_int(row, "streamId"), _first_int(row, "flag")
        if pid is None or sid is None or flag is None:
            continue
        proc = _stream_process(pid, fidx)
        key, kind = (proc, sid), kinds.get(flag, "")
        if (ctx := _first_int(row, "contextId")) is not None:
            contexts[key] = (proc, ctx)
        if key in seen and out.get(key) != kind:
            out.pop(key, None)  # two kinds for one stream: none known
            continue
        seen.add(key)
        if kind and key not in out:
            out[key] = kind
    return out, contexts


def _stream_process(pid: int, fidx: int) -> int:
    """A process as the stream tables key it: the export's number above the pid's bits (``_process_key``'s
    ``fidx << 32`` and its low 24 bits)."""
    return (int(fidx) << 32) | (int(pid) & 0xFFFFFF)


def _gpu_info(schema: tb.Schema, raw: _Raw, by_id: bool = False) -> tuple[dict[int, DeviceInfo], str | None]:
    """deviceId -> what the export says about that GPU, and a note where it does not name the model; ``by_id``: the
    device rows carry Nsight's GPU ids (:func:`_gpus_by_process`), else their process's CUDA ordinals."""
    out: dict[int, DeviceInfo] = {}
    rows = tb.dict_rows(schema, tb.GPU_INFO)
    ordinals = {} if by_id or not rows else _ordinal_gpus(schema, raw)
    by_gpu = {g: _info(row) for row in rows if (g := _first_int(row, "id")) is not None} if ordinals else {}
    if ordinals and all(g in by_gpu for g in ordinals.values()):  # each ordinal the GPU its process's table names
        out = {d: by_gpu[g] for d, g in ordinals.items()}
    for row in rows if not out else ():
        dev = _first_int(row, "id") if by_id else _first_int(row, "cuDevice", "cudaId", "id")
        if dev is None:
            continue
        out.setdefault(dev, _info(row))
    if not out:
        for row in tb.dict_rows(schema, tb.CUDA_DEVICE):
            dev = _first_int(row, "cudaId", "cuDevice", "id", "gpuId")
            if dev is not None and (row.get("name") or _first_int(row, "numMultiprocessors", "smCount")):
                out.setdefault(dev, _info(row))
    if not out:
        out = _legacy_gpu_info(schema)
    used = sorted(set(sorted_unique(raw.d_dev).tolist())) if raw.d_dev.size else []
    if out and not any(d in out for d in used):  # ids of another numbering: one model for all when it is one
        models = {(i.name, i.compute_capability) for i in out.values()}
        out = {d: next(iter(out.values())) for d in used} if len(models) == 1 else {}
    if any(i.name for i in out.values()):
        return out, None
    hint = _arch_hint(raw.d_names)
    return out, ("GPU model: not in this export (no TARGET_INFO_GPU or TARGET_INFO_CUDA_DEVICE table)"
                 + (f"; its kernels are {hint} builds" if hint else "")
                 + ": the peak FLOPs and MFU need the model (give --model-flops-per-step, or export from a newer "
                   "Nsight Systems)")


def _legacy_gpu_info(schema: tb.Schema) -> dict[int, DeviceInfo]:
    """CUDA ordinal -> the GPU as an Nsight Systems 2020-2021 export describes it: ``TARGET_INFO_CUDA_GPU``'s row of
    that ordinal (``deviceId``; its SM count, compute capability, memory and clock), else ``TARGET_INFO_GPU``'s name
    for it (``deviceId``, the name alone).

    Why: those exports key both tables by ``deviceId``, which :func:`_gpu_info`'s reading of the later tables
    (``id``, ``cuDevice``, ``cudaId``) never finds, so a capture that names its GPU read as one that does not: extra-p's
    A100 export (``TARGET_INFO_CUDA_GPU``: 108 SMs, cc 8.0) reported "GPU model: not in this export" and judged its
    one-block kernels against an unknown SM count."""
    out: dict[int, DeviceInfo] = {}
    for row in tb.dict_rows(schema, tb.CUDA_GPU):
        dev = _first_int(row, "deviceId")
        if dev is not None and (row.get("name") or _first_int(row, "numMultiprocessors")):
            out.setdefault(dev, _info(row))
    if not out:
        for row in tb.dict_rows(schema, tb.GPU_INFO):
            dev = _first_int(row, "deviceId")
            if dev is not None and row.get("name"):
                out.setdefault(dev, _info(row))
    return out


def _first_int(row: dict, *keys: str) -> int | None:
    for k in keys:
        v = row.get(k)
        if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
            return v
    return None


def _info(row: dict) -> DeviceInfo:
    name = row.get("name") if isinstance(row.get("name"), str) and row.get("name") else None
    major = _first_int(row, "computeMajor", "computeCapabilityMajor", "ccMajor")
    minor = _first_int(row, "computeMinor", "computeCapabilityMinor", "ccMinor")
    clock = _first_int(row, "clockRate", "maxClockRate", "coreClockRate")
    bw = _first_int(row, "memoryBandwidth")
    memory = _first_int(row, "totalMemory", "globalMemorySize", "totalGlobalMem")
    return DeviceInfo(
        name=name, compute_capability=(major, minor) if major is not None and minor is not None else None,
        sm_count=_first_int(row, "smCount", "numMultiprocessors", "multiProcessorCount"),
        # Nsight 2020 wrote ``globalMemorySize`` in MiB (48601 for a Quadro RTX 8000), 2021 in bytes: no GPU has
        # under 16 MiB, so a smaller number is MiB
        memory_bytes=(memory << 20 if memory and memory < 1 << 24 else memory),
        memory_bandwidth=float(bw) if bw else None,
        # Nsight writes Hz; a value in kHz (CUDA's own unit) would be below 10 MHz
        clock_hz=(float(clock) * (1e3 if clock < 10_000_000 else 1.0)) if clock else None,
    )


def _arch_hint(names: list[str]) -> str | None:
    found = [label for key, label in _ARCH_HINTS if any(key in n for n in names)]
    return found[0] if found else None


# --------------------------------------------------------------------------- the trace


def _to_trace(raws: list[_Raw], host: str, path: str, size: int) -> Trace:
    """The trace of the files' columns.  Each raw column is dropped once the trace's own is built from it: the
    read's peak is the trace plus a column or two, not twice the trace."""
    r = raws[0] if len(raws) == 1 else _merge(raws)
    del raws
    used = [a for a in (r.h_start, r.d_start) if a.size]
    origin = int(min(int(a.min()) for a in used)) if used else 0
    n_events = int(r.h_start.size + r.d_start.size)
    # ---- host events, by (thread, start, longer first)
    tids = sorted_unique(r.h_tid)  # few threads, large serialized ids: sorted, then searched
    line = np.searchsorted(tids, r.h_tid).astype(int_dtype(0, max(len(tids), 1), np.int16))
    r.h_tid = None
    order = np.lexsort((r.h_start - r.h_end, r.h_start, line)) if line.size else np.zeros(0, np.intp)
    line = line[order]
    h_start, r.h_start = _ps(r.h_start[order], origin), None
    h_end, r.h_end = _ps(r.h_end[order], origin), None
    h_name, r.h_name = narrowest(r.h_name[order].astype(np.int32), np.int16), None
    corr_ids, h_corr = _dense_corr(r.h_corr[order])
    r.h_corr = None
    is_range, r.h_range = r.h_range[order], None
    ridx = np.flatnonzero(is_range)
    ranges = None
    if ridx.size:
        codes = r.h_op[order]
        op = _user_scopes(codes, line, h_start, h_end)
        hooked = codes[ridx] == _HOOK
        ranges = HostRanges(idx=ridx, domain=r.h_domain[order][ridx].astype(np.int16), domains=list(r.domains),
                            op=op[ridx], framework=hooked if hooked.any() else None)
    r.h_op = r.h_domain = None
    del order
    waits = _host_waits(r, tids, origin)
    line_pid = tids.astype(np.int64) >> 24  # the process key of each line (``_process_key``)
    minus1 = np.broadcast_to(np.int8(-1), h_start.shape)
    h = HostEvents(start=h_start, end=h_end, name=h_name, line=line,
                   corr=absent_as_broadcast(narrowest(h_corr, np.int32)), group_id=minus1, step_num=minus1,
                   iter_num=minus1, root=minus1, is_eager=minus1, names=r.h_names,
                   line_names=[_line_name(r, int(t)) for t in tids.tolist()])
    del h_corr
    # ---- device events, per GPU
    d_corr = _lookup_corr(corr_ids, r.d_corr)
    links = r.links
    if links is not None:
        links = {**links, "corr": _lookup_corr(corr_ids, links["corr"]),
                 "rec_corr": _lookup_corr(corr_ids, links["rec_corr"])}
    del corr_ids
    r.d_corr = None
    launch = _launch_index(h.corr, d_corr)
    op_of_launch = innermost_range(h, is_range, launch)
    del is_range
    gpu_of = _gpu_ids(r)
    host_lines = _gpu_host_lines(r, gpu_of, line_pid)
    host_only = _host_only_processes(r, line_pid)
    devs = []
    for dev in sorted(gpu_of):
        sel = np.flatnonzero(r.d_dev == dev)
        sel = sel[np.lexsort((r.d_end[sel], r.d_start[sel]))]
        devs.append(_one_device(r, gpu_of[dev], dev, sel, origin, d_corr, op_of_launch, h, launch))
    del d_corr, launch, op_of_launch
    if links is not None:  # each call as its host event
        links["corr"], links["rec_corr"] = _launch_index(h.corr, links["corr"]), _launch_index(h.corr, links["rec_corr"])
    stream_waits = None if links is None else {
        gpu_of[dev]: _stream_waits(r, links, dev) for dev in sorted(gpu_of)}
    span_parts = [(int(h_start.min()), int(h_end.max()))] if h_start.size else []
    span_parts += [(int(d.start.min()), int(d.end.max())) for d in devs if len(d)]
    span = (min(a for a, _ in span_parts), max(b for _, b in span_parts)) if span_parts else None
    zero = 0
    if r.zero_ns is not None and 0 <= origin - r.zero_ns <= _MAX_LEAD_NS:
        zero = (r.zero_ns - origin) * 1000
    return Trace(
        format="nsys", host=host, path=path, size_bytes=size, h=h, devices=devs,
        num_events=n_events, span_ps=span, capture_ms=r.capture_ms, viewer_zero_ps=zero,
        capture_start_ps=(r.capture_start_ns - origin) * 1000 if r.capture_start_ns is not None and r.files == 1 else None,
        time_base=TIME_BASE if r.files == 1 else TIME_BASE + f" ({r.files} exports of one machine on its clock)",
        world_size=max((n for _, n in r.nccl_ranks.values()), default=0) or None,
        world_size_from="NCCL's communicator",
        gpu_host_lines=host_lines, host_only_processes=host_only, notes=list(dict.fromkeys(r.notes)), ranges=ranges, gpu_ranks=dict(r.gpu_ranks),
        host_waits=waits, stream_waits=stream_waits,
        framework_hint=framework_shown(h.names, r.d_names, r.domains,
                                       module_hooks=ranges is not None and ranges.framework is not None),
        producer={**r.facts, **_host_processes(r, tids), **_autodiff_modules(h),
                  **_launch_lead(r.facts, r.zero_ns, origin, r.files)},
    )


def _autodiff_modules(h: HostEvents) -> dict[str, str]:
    """``{"autodiff_modules": ...}``: the XLA modules whose executions (``XlaModule:#hlo_module=<module>,...#``
    ranges) ran a gradient's thunk (``Thunk:#name=transpose(jvp(MLP))/dot_general,...#``: ``xla.is_autodiff_thunk``)
    on the same thread -- a backward pass, as the modules' HLO says in an XPlane capture; empty where none did."""
    grad = h.name_mask(xla.is_autodiff_thunk)
    if not grad.any():
        return {}
    module = np.array([xla.nvtx_module(n) or "" for n in h.names], dtype=object)
    mod = h.name_mask(lambda n: xla.nvtx_module(n) is not None)
    found: list[str] = []
    for ln in np.unique(h.line[grad]).tolist():
        on = h.line == ln
        mi = np.flatnonzero(mod & on)
        if not mi.size:
            continue
        t = h.start[grad & on]
        k = np.searchsorted(h.start[mi], t, side="right") - 1  # the module execution open when each thunk started
        ok = k >= 0
        inside = ok & (h.end[grad & on] <= h.end[mi[np.maximum(k, 0)]])
        found += [str(module[int(h.name[i])]) for i in mi[k[inside]].tolist()]
    names = list(dict.fromkeys(found))
    return {"autodiff_modules": ", ".join(names[:5])} if names else {}


def _host_waits(r: _Raw, tids: np.ndarray, origin: int) -> HostWaits | None:
    """The OS runtime's calls on the trace's clock, each on the line of its thread (-1: a thread with no host event),
    by (line, start); None where the export has none.  ``r``'s columns are dropped once read."""
    if not r.os_start.size:
        return None
    k = np.minimum(np.searchsorted(tids, r.os_tid), max(len(tids) - 1, 0))
    line = np.where(tids[k] == r.os_tid, k, -1).astype(np.int32) if len(tids) else np.full(r.os_tid.shape, -1, np.int32)
    order = np.lexsort((r.os_start, line))
    waits = HostWaits(start=_ps(r.os_start[order], origin), end=_ps(r.os_end[order], origin),
                      name=r.os_name[order].astype(np.int32), line=line[order], names=list(r.os_names))
    r.os_start = r.os_end = r.os_tid = r.os_name = np.zeros(0, np.int64)
    return waits


def _ps(ns: np.ndarray, origin: int) -> np.ndarray:
    """Times in ns on the export's clock -> ps from ``origin``, in place (``ns`` is a fresh copy).

    Widened to int64 before any arithmetic: the tables narrow each column to the smallest dtype its values fit, so an
    export whose times all lie in its first 2.1 s holds them as int32 -- where ``* 1000`` wraps without a word (a real
    Perlmutter export read kernels at -2.1 s)."""
    out = ns.astype(np.int64, copy=False)
    out -= origin
    out *= 1000
    return out


@dataclass
class _CorrIndex:
    """The host's distinct correlation keys, each at its rank among them (sorted).  A key is (file, process) in its
    high 32 bits and CUPTI's 32-bit correlation id below; the few (file, process) pairs times the span of the ids
    is seldom much larger than the keys, and then a key's rank is read from a table over that span (``rank``: -1
    where no host key is) -- O(n), where sorting the keys and a binary search per key missed the cache at every
    step.  Otherwise ``ids`` holds the sorted keys and the ranks are searched."""

    ids: np.ndarray | None = None  # the sorted distinct keys (the search path)
    procs: np.ndarray | None = None  # the table path: the distinct high halves, sorted
    lo: int = 0  # the smallest low half
    width: int = 0  # the span of the low halves
    rank: np.ndarray | None = None  # per (process, low half - lo): the key's rank, -1

    def slots(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(each key's slot in ``rank``, 0 where it has none; whether it has one): its process known and its low half
        in the span.  In place where it can: the keys are millions."""
        hi = keys >> 32
        p = np.searchsorted(self.procs, hi)
        np.minimum(p, self.procs.size - 1, out=p)
        ok = self.procs[p] == hi
        del hi
        ok &= keys >= 0
        slot = keys & 0xFFFFFFFF
        slot -= self.lo
        ok &= slot >= 0
        ok &= slot < self.width
        p *= self.width
        slot += p
        del p
        slot[~ok] = 0
        return slot, ok

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """Each key's rank, -1 where no host key is it."""
        out = np.full(keys.shape, -1, np.int64)
        if self.rank is not None:
            slot, ok = self.slots(keys)
            out[ok] = self.rank[slot[ok]]
            return out
        if self.ids is None or not self.ids.size or not keys.size:
            return out
        j = np.clip(np.searchsorted(self.ids, keys), 0, self.ids.size - 1)
        hit = (keys >= 0) & (self.ids[j] == keys)
        out[hit] = j[hit]
        return out


def _dense_corr(keys: np.ndarray) -> tuple[_CorrIndex, np.ndarray]:
    """(the index of the distinct correlation keys; each key's rank among them, sorted, -1 for none)."""
    ok = keys >= 0
    n = int(np.count_nonzero(ok))
    if n:
        procs = np.unique(keys >> 32)  # a few processes: numpy hashes them
        procs = procs[procs >= 0]  # (a key of -1: none)
        low = keys & 0xFFFFFFFF
        lo, hi = int(np.min(low, where=ok, initial=1 << 32)), int(np.max(low, where=ok, initial=-1))
        del low
        width = hi - lo + 1
        if procs.size * width <= 4 * n + (1 << 16):
            index = _CorrIndex(procs=procs, lo=lo, width=width)
            slot, has = index.slots(keys)
            present = np.zeros(procs.size * width, bool)
            present[slot[has]] = True
            rank = np.cumsum(present, dtype=np.int32 if present.size < 2**31 else np.int64)
            rank -= 1
            rank[~present] = -1
            index.rank = rank
            dense = rank[slot]
            dense[~has] = -1
            return index, dense
    mine = keys[ok]
    ids = sorted_unique(mine)
    dense = np.full(keys.shape, -1, np.int64)
    dense[ok] = np.searchsorted(ids, mine)
    return _CorrIndex(ids=ids), dense


def _lookup_corr(index: _CorrIndex, keys: np.ndarray) -> np.ndarray:
    """Device events' correlation keys as the host's dense ids; -1 where no host call in the export has the key."""
    return index.lookup(keys)


def _launch_index(h_corr: np.ndarray, d_corr: np.ndarray) -> np.ndarray:
    """Host event index of each device event's launch (the first host event with its correlation id), -1."""
    out = np.full(d_corr.shape, -1, np.int64)
    if not d_corr.size:
        return out
    hc = np.asarray(h_corr, dtype=np.int64)
    has = np.flatnonzero(hc >= 0)
    if not has.size:
        return out
    first = np.full(int(hc[has].max()) + 1, -1, np.int64)
    first[hc[has][::-1]] = has[::-1]  # the first index wins: written last
    ok = (d_corr >= 0) & (d_corr < first.size)
    out[ok] = first[d_corr[ok]]
    return out


def _gpu_ids(r: _Raw) -> dict[int, int]:
    """deviceId -> the GPU id reported (the same: CUPTI's device ordinal)."""
    return {int(d): int(d) for d in sorted_unique(r.d_dev).tolist() if int(d) >= 0}


#: The largest stream id CUPTI writes (its ``streamId`` is a 32-bit unsigned id; -1 is the reader's "none").
_MAX_STREAM = (1 << 32) - 1


def _stream_keys(r: _Raw, sel: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """(the distinct (process, stream) keys of a GPU's events ``sel``, sorted; each event's index into them; the
    width that keys them): one GPU's streams, numbered as its ``stream_names``.  A stream id outside CUPTI's 32-bit
    range is an error carrying an 'unreadable' record: keyed, it overflowed int64 (a crash, h37-damage68's fuzz) or,
    below -1, took another process's key."""
    low, high = (int(r.d_stream[sel].min()), int(r.d_stream[sel].max())) if sel.size else (-1, -1)
    if low < -1 or high > _MAX_STREAM:
        why = (f"GPU events with a stream id no CUDA stream has (outside -1..{_MAX_STREAM:,}: {low:,} to {high:,}): "
               "another schema's values")
        raise attach(NsysReadError(f"{r.path}: damaged Nsight Systems export: {why}"),
                     unreadable("stream_id_range", why))
    width = high + 2
    spair = r.d_pid[sel].astype(np.int64) * width + (r.d_stream[sel].astype(np.int64) + 1)
    ustream, stream = unique_inverse(spair)
    return ustream, stream, width


def _stream_waits(r: _Raw, links: dict[str, np.ndarray], dev: int) -> StreamWaits:
    """The waits of GPU ``dev``'s streams (:func:`_event_links`, their calls the trace's host events), each stream as the GPU's
    index: a wait on a stream that ran no work of the GPU is dropped (nothing of the GPU's waits there), a record on
    such a stream kept as -1.

    A wait is the GPU's by its process and stream -- where that stream's work runs --, not by its sync row's
    ``deviceId``: real exports write 0 there for every process (docs/compatibility.md, syncs),
    so a rank on its node's second GPU lost every wait and its uploads beneath a module load went back to start-up."""
    ustream, _, width = _stream_keys(r, np.flatnonzero(r.d_dev == dev))

    def index(stream: np.ndarray) -> np.ndarray:
        if not ustream.size:
            return np.full(stream.shape, -1, np.int64)
        key = mine["pid"] * width + (stream + 1)
        at = np.minimum(np.searchsorted(ustream, key), ustream.size - 1)
        return np.where((stream + 1 < width) & (ustream[at] == key), at, -1).astype(np.int64)

    mine = links
    wait = index(mine["stream"])
    has = wait >= 0
    return StreamWaits(stream=wait[has], call=mine["corr"][has].astype(np.int64),
                       rec_stream=index(mine["rec_stream"])[has], rec_call=mine["rec_corr"][has].astype(np.int64))


def _stream_columns(r: _Raw, keys: list[int], width: int, stream: np.ndarray, launch: np.ndarray,
                    h: HostEvents) -> dict[str, dict[int, object]]:
    """``DeviceEvents.stream_kinds`` and ``stream_contexts`` of one GPU's streams (``keys``: its (process, stream)
    keys, :func:`_stream_keys`; ``stream``, ``launch``: each of its events' stream index and launching call, -1
    none): each one's kind and context where ``TARGET_INFO_CUDA_STREAM`` lists it (a NULL stream whose work the
    per-thread calls made is the per-thread default stream: :func:`_per_thread_streams`), the contexts numbered in
    the order met."""
    kinds: dict[int, str] = {}
    contexts: dict[int, int] = {}
    number: dict[tuple[int, int], int] = {}
    for i, x in enumerate(keys):
        proc = int(x) // width
        key = (_stream_process(proc & 0xFFFFFF, proc >> 32), int(x) % width - 1)
        if kind := r.stream_kinds.get(key):
            kinds[i] = kind
        if (ctx := r.stream_contexts.get(key)) is not None:
            contexts[i] = number.setdefault(ctx, len(number))
    _per_thread_streams(kinds, stream, launch, h)
    return {"stream_kinds": kinds, "stream_contexts": contexts}


def _per_thread_streams(kinds: dict[int, str], stream: np.ndarray, launch: np.ndarray, h: HostEvents) -> None:
    """Mend ``kinds`` (stream index -> kind) where a stream listed as the NULL stream ran work its program handed it
    through the per-thread default stream's calls (``devices.is_per_thread_call``: ``cudaLaunchKernel_ptsz``,
    ``cudaMemcpy_ptds``): every call of it so, the calling thread's own default stream (``cudaStreamPerThread``);
    some, a kind not known (dropped).

    Why: a build with ``--default-stream per-thread`` runs its "stream 0" work on each thread's own default stream,
    which holds no blocking stream in series (CUDA's "Stream synchronization behavior": it synchronises with the
    legacy default stream only); read as the legacy NULL stream, its copies beside kernels on a created stream were
    told a wait that build does not have (h37-stream70's Left 1, h37-copy71).  Only the calls tell the two apart:
    CUPTI's stream flags name no per-thread stream (0-3: unknown, default, non-blocking, NULL)."""
    legacy = [i for i, k in kinds.items() if k == STREAM_LEGACY_DEFAULT]
    if not legacy or not len(h):
        return
    known = launch >= 0
    for i in legacy:
        mine = known & (stream == i)
        if not mine.any():
            continue
        names, inv = np.unique(h.name[launch[mine]], return_inverse=True)
        per_thread = np.array([devices.is_per_thread_call(h.names[int(n)]) for n in names], bool)[inv]
        if per_thread.all():
            kinds[i] = STREAM_PER_THREAD_DEFAULT
        elif per_thread.any():
            kinds.pop(i)


def _one_device(r: _Raw, gpu: int, dev: int, sel: np.ndarray, origin: int, d_corr: np.ndarray,
                op_of_launch: np.ndarray, h: HostEvents, launch: np.ndarray) -> DeviceEvents:
    # each column narrowed as soon as it is made, its temporaries dropped: a GPU's millions of events at 8 bytes
    # each, several at once, were the read's memory peak
    uname, name = unique_inverse(r.d_name[sel])
    name = narrowest(name.astype(np.int32), np.int16)
    names = [r.d_names[int(i)] for i in uname]
    ustream, stream, width = _stream_keys(r, sel)
    stream = narrowest(stream.astype(np.int64))
    procs = {int(x) // width for x in ustream.tolist()}
    stream_names = [f"stream {int(x) % width - 1}" + (f" (pid {(int(x) // width) & 0xFFFFFF})" if len(procs) > 1 else "")
                    for x in ustream.tolist()]
    op_host = op_of_launch[sel]
    op_name = np.full(op_host.size, -1, np.int64)  # no host event (an export of kernels without CUDA calls): none
    op_name[op_host >= 0] = h.name[op_host[op_host >= 0]]
    op_ids, op_idx = unique_inverse(op_name)
    op_text = [pytorch.op_text(h.names[int(i)]) if i >= 0 else "" for i in op_ids.tolist()]
    op_idx = np.where(op_host >= 0, op_idx, -1).astype(int_dtype(-1, len(op_text), floor=np.int16))
    del op_host
    nbytes = r.d_bytes[sel].astype(np.int64)
    la = launch[sel]
    is_copy = nbytes >= 0
    kind = devices.recorded_kinds(names, name, np.where(is_copy, devices.RECORDED_TRANSFER, devices.RECORDED_KERNEL))
    known = is_copy & (la >= 0)
    mem_sync = devices.copies_call_sync(h.names, np.where(known, h.name[np.maximum(la, 0)].astype(np.int64) if len(h)
                                                          else -1, -1), kind)
    graph = r.d_graph[sel].astype(np.int64)
    if (la >= 0).any():  # graph-mode executions and node-mode kernels share their cudaGraphLaunch's correlation
        is_graph = np.fromiter((devices.is_graph_launch(n) for n in h.names), bool, len(h.names))
        by_launch = (la >= 0) & (graph < 0)
        by_launch[by_launch] = is_graph[h.name[la[by_launch]]]
        graph[by_launch] = d_corr[sel][by_launch]
    corr = d_corr[sel]
    return DeviceEvents(
        gpu=gpu, info=r.gpu_info.get(dev, DeviceInfo()), names=names, strings=[],
        start=_ps(r.d_start[sel], origin), end=_ps(r.d_end[sel], origin),  # int64 first: narrow ns wrap in ps
        name=name,
        kind=kind,
        stream=stream, stream_names=stream_names,
        **_stream_columns(r, ustream.tolist(), width, stream, la, h),
        corr=narrowest(corr, np.int32), group_id=np.broadcast_to(np.int8(-1), sel.shape), op_text=op_text,
        op_idx=op_idx,
        **DeviceEvents.copy_columns(np.where(is_copy, nbytes, -1), mem_sync),
        shape_sid=np.broadcast_to(np.int8(-1), sel.shape), long_name_sid=np.broadcast_to(np.int8(-1), sel.shape),
        graph_id=absent_as_broadcast(narrowest(graph)),
        **DeviceEvents.launch_columns(r.d_blocks[sel], r.d_threads[sel]),
    )


def _line_name(r: _Raw, gtid: int) -> str:
    """``<thread name> (pid P, tid T)``; ``thread T (pid P, <process>)`` for an unnamed thread."""
    pid, tid = (gtid >> 24) & 0xFFFFFF, gtid & 0xFFFFFF
    name = r.threads.get(gtid)
    proc = r.processes.get(pid)
    if name:
        return f"{name} (pid {pid}, tid {tid})"
    return f"thread {tid} (pid {pid}{', ' + proc if proc else ''})"


def _host_processes(r: _Raw, tids: np.ndarray) -> dict[str, str]:
    """The ``host_processes`` fact: the names of the processes whose threads recorded the host events (CUDA calls,
    NVTX), sorted -- the profiled program, not the machine's other processes an OS-runtime trace lists."""
    pids = {(int(t) >> 24) & 0xFFFFFF for t in tids.tolist()}
    names = sorted({r.processes[p] for p in pids if r.processes.get(p)})
    return {"host_processes": ",".join(names)} if names else {}


def _gpu_host_lines(r: _Raw, gpu_of: dict[int, int], line_pid: np.ndarray) -> dict[int, np.ndarray]:
    """Per GPU, the host lines of the processes that launched its work, when several processes drive GPUs -- or when
    one does and another process recorded host events too (a process that launched nothing: a DataLoader worker or
    a helper that made a CUDA context, a launcher's NVTX).  Such a process's calls run in a context of their own:
    its ``cudaFree`` holds none of the driving process's GPU work, so the GPU's idle is read from its driver's lines
    alone (h37-probe42n: a second process's 100 ms context creation inside a loop's steps was booked as the loop's
    allocator churn, critical, and hid its input wait)."""
    pairs = set()
    if r.d_dev.size:  # (device, process) pairs, as one int each: GPU ids are small
        key = sorted_unique(r.d_pid.astype(np.int64) * 4096 + np.clip(r.d_dev, 0, 4095))
        pairs = {(int(k) % 4096, int(k) // 4096) for k in key.tolist()}
    procs = {p for _, p in pairs if p >= 0}
    if not procs or (len(procs) < 2 and np.isin(line_pid, list(procs)).all()):
        return {}
    lines = {gpu_of[d]: np.flatnonzero(np.isin(line_pid, [p for dd, p in pairs if dd == d])) for d in gpu_of}
    if len(procs) < 2 and not all(v.size for v in lines.values()):
        return {}  # a GPU whose work names no process: one process drives them all, as far as the trace tells
    return lines


def _host_only_processes(r: _Raw, line_pid: np.ndarray) -> dict[str, np.ndarray]:
    """``Trace.host_only_processes``: each process whose threads recorded host events (its NVTX ranges, runtime calls)
    and which ran no GPU work, where other processes of the export did -- ``"<process> (pid P)"`` -> its host lines;
    empty where no GPU work names its process (then no process can be told apart by it).  Why: a rank whose CUDA side
    went unrecorded (its NVTX ranges kept) beside ranks that ran GPU work was said nowhere (h37-norank61 *Left* 1);
    which of these processes are ranks is the job stage's reading of their ranges."""
    if not r.d_pid.size or (r.d_pid < 0).any():
        return {}
    gpu_procs = set(sorted_unique(r.d_pid.astype(np.int64)).tolist())
    world = max((n for _, n in r.nccl_ranks.values()), default=0)
    # a rank of the world's communicator is one process's: one claimed by two (two jobs on one machine, a subgroup's
    # communicator taken for the world's where the world's was made before the capture) names neither (h37-rev63b)
    claims = Counter(k for k, n in r.nccl_ranks.values() if n == world)
    out: dict[str, np.ndarray] = {}
    for p in sorted(set(line_pid.tolist()) - gpu_procs):
        pid = int(p) & 0xFFFFFF
        name = r.processes.get(pid)
        who = f"{name}, pid {pid}" if name else f"pid {pid}"
        rank, size = r.nccl_ranks.get(pid, (-1, 0))
        # its rank in the job where its largest communicator is the job's largest (the world's, as far as the file
        # tells): a rank in a smaller group's communicator is the group's, not the job's
        out[f"rank {rank} ({who})" if rank >= 0 and size == world and claims[rank] == 1 else
            f"{name} (pid {pid})" if name else f"pid {pid}"] = np.flatnonzero(line_pid == p)
    return out


#: The fields of NCCL's NVTX payload on its communicator calls (``ncclCommInitRank``, ``ncclCommInitRankConfig``,
#: ``ncclCommSplit``, ``ncclCommDestroy``: the payload schema NCCL registers in its ``NCCL`` domain, read off the
#: export's ``NVTX_PAYLOAD_SCHEMA_ENTRIES``: "NCCL communicator ID", "No. of ranks", "Rank", "CUDA device"), as Nsight
#: 2026.3.1 (export schema 3.27) writes a range's payload, JSON in ``jsonText`` (``nsys_ranks/ddp_overlap_rtx3090``);
#: the shared FSDP exports (2026.2.1, schema 3.25) hold the schema tables but no payload on any range.
_NCCL_RANKS = "No. of ranks"
_NCCL_RANK = "Rank"
_NCCL_COMM = "NCCL communicator ID"


def _nccl_ranks(schema: tb.Schema, limit: int = 4096) -> dict[int, tuple[int, int]]:
    """pid -> (its rank, the communicator's ranks) in the largest NCCL communicator the process made or destroyed,
    from NCCL's NVTX payloads (:data:`_NCCL_RANKS`); {} where the export kept no payload (the shared FSDP exports:
    schema tables, no payload).  A payload only as ``binaryData`` (laid out by the schema's offsets) is not read: no
    export at hand holds one.  Why: a process recorded by its NVTX alone was named by
    its pid ("python (pid 13097)") where NCCL's own ranges said which rank it is (h37-nvtx62 *Left* 1); the largest
    communicator's size is the least the job's world can be."""
    cols = schema.columns(tb.NVTX)
    if "globalTid" not in cols or not ({"jsonText", "jsonTextId"} & cols):
        return {}
    # the payload inline, else as a registered string (``jsonTextId``)
    parts = ["e.jsonText"] if "jsonText" in cols else []
    if "jsonTextId" in cols and tb.STRINGS in schema:
        parts.append(f'(SELECT value FROM "{tb.STRINGS}" s WHERE s.id = e.jsonTextId)')
    if not parts:
        return {}
    text = parts[0] if len(parts) == 1 else f"coalesce({', '.join(parts)})"
    present = " OR ".join(f"e.{c} IS NOT NULL" for c in ("jsonText", "jsonTextId") if c in cols)
    sql = (f'SELECT e.globalTid, substr({text}, 1, 512) FROM "{tb.NVTX}" e WHERE ({present}) '
           f"AND {text} LIKE '%\"{_NCCL_RANKS}\"%' LIMIT {int(limit)}")
    best: dict[int, tuple[int, int]] = {}
    for gtid, j in schema.con.execute(sql):
        try:
            got = json.loads(j)
        except (TypeError, ValueError):
            continue
        if not isinstance(got, dict) or gtid is None:
            continue
        rank, size = got.get(_NCCL_RANK), got.get(_NCCL_RANKS)
        if type(rank) is not int or type(size) is not int or not 0 <= rank < size <= MAX_RANKS:
            continue
        pid = int(tb.pid_of(np.int64(gtid)))
        if size > best.get(pid, (-1, 0))[1]:
            best[pid] = (rank, size)
    return best


# --------------------------------------------------------------------------- several exports of one machine


def _merge(raws: list[_Raw]) -> _Raw:
    """Exports of one machine (one per rank) as one: names re-indexed, GPUs kept apart (a rank that saw its GPU as
    device 0 beside another rank's device 0 gets the next free id), on one clock: the first-started session's
    (:func:`_session_shifts`)."""
    h_names: dict[str, int] = {}
    d_names: dict[str, int] = {}
    domains: list[str] = [""]
    cols: dict[str, list[np.ndarray]] = {}
    used_devs: set[int] = set()
    notes: list[str] = []
    gpu_info: dict[int, DeviceInfo] = {}
    threads: dict[int, str] = {}
    processes: dict[int, str] = {}
    nccl: dict[int, tuple[int, int]] = {}
    stream_kinds: dict[tuple[int, int], str] = {}
    stream_contexts: dict[tuple[int, int], tuple[int, int]] = {}
    ranks: dict[int, int] = {}
    facts: dict[str, str] = {}
    os_names: dict[str, int] = {}
    shifts = _session_shifts(raws)
    for k, r in enumerate(raws):
        _shift_times(r, shifts[k])
        for key, value in r.facts.items():  # "on" in any export wins: the option was on for the job
            facts[key] = value if facts.get(key) != "on" else "on"
        hmap = np.array([_intern(h_names, n) for n in r.h_names], np.int32)
        dmap = np.array([_intern(d_names, n) for n in r.d_names], np.int32)
        dom = np.array([domains.index(x) if x in domains else (domains.append(x) or len(domains) - 1)
                        for x in r.domains], np.int16)
        devmap = {}
        rank = _rank_of(r.path)
        for d in sorted(set(sorted_unique(r.d_dev).tolist())):
            nd = d if d not in used_devs else max(used_devs) + 1
            used_devs.add(nd)
            devmap[d] = nd
            if rank is not None:
                ranks[nd] = rank
            if d in r.gpu_info:
                gpu_info[nd] = r.gpu_info[d]
        dev = r.d_dev.astype(np.int64)
        for d, nd in devmap.items():
            dev = np.where(r.d_dev == d, nd, dev)
        for name, arr in (("h_start", r.h_start), ("h_end", r.h_end), ("h_name", hmap[r.h_name] if r.h_name.size else r.h_name),
                          ("h_tid", r.h_tid), ("h_corr", r.h_corr), ("h_range", r.h_range), ("h_op", r.h_op),
                          ("h_domain", np.where(r.h_domain >= 0, dom[np.maximum(r.h_domain, 0)], -1)),
                          ("d_start", r.d_start), ("d_end", r.d_end), ("d_dev", dev), ("d_pid", r.d_pid),
                          ("d_stream", r.d_stream), ("d_corr", r.d_corr),
                          ("d_name", dmap[r.d_name] if r.d_name.size else r.d_name), ("d_bytes", r.d_bytes.astype(np.int64)),
                          ("d_graph", r.d_graph.astype(np.int64)), ("d_blocks", r.d_blocks.astype(np.int32, copy=False)),
                          ("d_threads", r.d_threads.astype(np.int32, copy=False))):
            cols.setdefault(name, []).append(arr)
        _merge_os_calls(cols, r, os_names)
        threads.update(r.threads)
        processes.update(r.processes)
        nccl.update(r.nccl_ranks)
        stream_kinds.update(r.stream_kinds)  # keyed by the export's number: no two exports share a key
        stream_contexts.update(r.stream_contexts)
        notes.extend(r.notes)
    merged = {k: np.concatenate(v) for k, v in cols.items()}
    zeros = [r.zero_ns for r in raws if r.zero_ns is not None]
    caps = [r.capture_ms for r in raws if r.capture_ms is not None]
    return _Raw(path=raws[0].path, size=sum(r.size for r in raws), h_names=list(h_names), domains=domains,
                os_names=list(os_names),
                d_names=list(d_names), threads=threads, processes=processes, nccl_ranks=nccl, gpu_info=gpu_info,
                stream_kinds=stream_kinds, stream_contexts=stream_contexts,
                notes=notes, zero_ns=min(zeros) if zeros else None, capture_ms=max(caps) if caps else None,
                files=len(raws), gpu_ranks=ranks if len(set(ranks.values())) == len(raws) else {}, facts=facts, **merged)


def _session_shifts(raws: list[_Raw]) -> list[int]:
    """Per export, the ns to add to its times to put it on the first-started session's clock: how much later its
    session started (``utc_ns``).  Why: each ``nsys profile`` of a rank is a session of its own, whose timestamps
    count from its own start -- the exports of one machine share no clock as written.  A CME 213 4-rank MPI job's
    exports (Nsight 2023.4.1) started up to 111 ms apart: as written, one ``MPI_Barrier`` ended 111 ms apart on the
    ranks and a rank's start-up lay over the others' steady steps; moved by their sessions' starts, it ends within
    43 us on all four.  All zero where any export does not record its start (nothing to align by)."""
    utc = [r.utc_ns for r in raws]
    if any(u is None for u in utc):
        return [0] * len(raws)
    first = min(utc)
    return [u - first for u in utc]


def _shift_times(r: _Raw, ns: int) -> None:
    """Every time of export ``r`` (events, OS calls, its session's start) moved ``ns`` later, in place."""
    if not ns:
        return
    for key in ("h_start", "h_end", "d_start", "d_end", "os_start", "os_end"):
        setattr(r, key, getattr(r, key).astype(np.int64) + ns)
    if r.zero_ns is not None:
        r.zero_ns += ns


def _merge_os_calls(cols: dict[str, list[np.ndarray]], r: _Raw, names: dict[str, int]) -> None:
    """One export's OS runtime calls appended to the merged columns, their names re-indexed into ``names``."""
    nmap = np.array([_intern(names, n) for n in r.os_names], np.int32)
    for key, arr in (("os_start", r.os_start), ("os_end", r.os_end), ("os_tid", r.os_tid),
                     ("os_name", nmap[r.os_name] if r.os_name.size else r.os_name.astype(np.int32))):
        cols.setdefault(key, []).append(arr)


#: ``report_rank3.sqlite``, ``trace.rank-12.nsys-rep``: the rank a per-rank export's name gives.
_RANK_IN_NAME = re.compile(r"rank[-_.]?(\d+)", re.I)


def _rank_of(path: str) -> int | None:
    m = _RANK_IN_NAME.search(_stem(path))
    return int(m.group(1)) if m else None

