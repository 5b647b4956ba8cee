"""The tables of an ``nsys export --type sqlite`` file, and reading them a chunk at a time into numpy columns.

What is decided here, from the export's own conventions (Nsight Systems' "SQLite Export Schema Reference"; the
three real exports in ``../shared/profiles/nsys`` were checked against it):

* an export is recognised by its tables, never its name: Nsight's own metadata tables (``ANALYSIS_DETAILS``,
  ``META_DATA_EXPORT``, ``TARGET_INFO_SESSION_START_TIME``), or ``StringIds`` beside an activity table
  (``CUPTI_ACTIVITY_KIND_*``, ``NVTX_EVENTS``) or one of Nsight's target tables (``TARGET_INFO_GPU``,
  ``ProcessStreams``: an older export of a program that recorded nothing holds only those);
* tables are created lazily: one exists only when its data does (an export of a run without CUDA trace has no
  ``CUPTI_ACTIVITY_KIND_KERNEL``), and columns come and go between versions (``PRAGMA table_info`` says which);
* rows are in no guaranteed order (newer exports shuffle them): every reader sorts what it reads;
* ``globalTid`` / ``globalPid`` are serialized ids: the pid in bits 24-47, the tid in bits 0-23.

Reading the tables (the checked descriptor, the private copy, the query budget, the packed chunks and the compiled
column reader) is every SQLite format's, in ``formats/sqlite.py``, which the Nsight reader imports itself.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.formats import heads, sqlite as _sq
from tb_gpu_advisor.formats.sqlite import _quote

KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET = "CUPTI_ACTIVITY_KIND_MEMSET"
RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
DRIVER = "CUPTI_ACTIVITY_KIND_DRIVER"
SYNC = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"
GRAPH_TRACE = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"
NVTX = "NVTX_EVENTS"
STRINGS = "StringIds"
THREADS = "ThreadNames"
PROCESSES = "PROCESSES"
GPU_INFO = "TARGET_INFO_GPU"
CUDA_DEVICE = "TARGET_INFO_CUDA_DEVICE"
#: Each CUDA stream a process used: ``streamId``, ``processId``, ``contextId``, ``priority`` and ``flag``
#: (``ENUM_CUPTI_STREAM_TYPE``: CUPTI's ``CUpti_ActivityStreamFlag`` -- 0 unknown, 1 "Default stream" (created with
#: the default flags: blocking), 2 "Non-blocking stream", 3 "Null stream").  Not every stream used is listed: an
#: H100 FSDP export's PyTorch default streams (7 and 15) are absent from it.
CUDA_STREAM = "TARGET_INFO_CUDA_STREAM"
#: What Nsight Systems 2020-2021 kept of each process's CUDA devices (``nsys`` 2020.3 of quasiben/nvtx-examples,
#: 2021's of extra-p/extrap's tests): one row per process and CUDA ordinal (``deviceId``, ``pid``) with ``name``,
#: ``numMultiprocessors``, ``computeCapabilityMajor`` / ``Minor``, ``globalMemorySize`` and ``coreClockRate`` (kHz),
#: while its ``TARGET_INFO_GPU`` names each GPU by ``deviceId`` alone -- the table a later Nsight replaced by
#: ``TARGET_INFO_CUDA_DEVICE`` and the richer ``TARGET_INFO_GPU``.
CUDA_GPU = "TARGET_INFO_CUDA_GPU"
SESSION_START = "TARGET_INFO_SESSION_START_TIME"
ANALYSIS = "ANALYSIS_DETAILS"
META_EXPORT = "META_DATA_EXPORT"
#: The same table as Nsight 2022 named it (pipit's ``saxpy-mpi-cuda`` export, 2022.2.1, schema 2.9.1; CenterFormer's,
#: 2022.4.2, schema 3.0.0): the export's product, schema version and (for a time slice) ``DERIVED_WINDOW_NS`` are in
#: whichever of the two the file holds.
META_EXPORT_OLD = "EXPORT_META_DATA"
META_CAPTURE = "META_DATA_CAPTURE"
SYSTEM_ENV = "TARGET_INFO_SYSTEM_ENV"
#: The profiled program's standard output and error, as Nsight Systems kept them: ``(globalPid, filenameId,
#: contentId)``, the file name (``.../pid_<pid>_stderr.log``) and its text in ``StringIds``.
PROCESS_STREAMS = "ProcessStreams"
#: Tables only Nsight writes: any one of them makes an SQLite file an export.
NSYS_OWN = (ANALYSIS, META_EXPORT, META_EXPORT_OLD, SESSION_START)
#: Activity tables; with ``StringIds`` beside one of them, a file is an export (a hand-made or trimmed one).
ACTIVITY = (KERNEL, MEMCPY, MEMSET, RUNTIME, NVTX, SYNC, GRAPH_TRACE)
#: Nsight's own names for what it keeps of the target and the program, written even where the window recorded no
#: event: an older export (``nsys nvprof`` of 2021, a ``.qdrep``'s) of a program that made no CUDA call holds only
#: these beside ``StringIds`` -- no metadata table, no activity table -- and is still an export, to be read as such.
TARGET_TABLES = (GPU_INFO, CUDA_DEVICE, CUDA_GPU, SYSTEM_ENV, PROCESS_STREAMS)

#: The activity tables whose rows say what they are by an id into ``StringIds`` (a call's ``nameId``, a kernel's
#: ``demangledName`` / ``shortName``): Nsight writes every such name there, so an export holding one of these rows
#: holds ``StringIds`` too.
NAMED_BY_ID = {RUNTIME: ("nameId",), DRIVER: ("nameId",), KERNEL: ("demangledName", "shortName")}

#: Serialized global ids: pid and tid fields.
_PID_SHIFT = 24
_ID_MASK = (1 << 24) - 1


class NsysReadError(ValueError):
    """An SQLite file that is no Nsight Systems export, or one without anything to analyse."""


def integers(*cols: str) -> str:
    """The SQL condition that ``cols`` hold integers: a row read with ``int()`` in Python is kept only so -- a table of
    Nsight's name whose values are text, blobs or REALs (another schema's, a hostile file's) crashed the read with
    ``int('text')`` (h37-damage68's fuzz), where such a row names nothing."""
    return " AND ".join(f"typeof({c}) = 'integer'" for c in cols)


def pid_of(global_id: np.ndarray) -> np.ndarray:
    """The process id of serialized ``globalTid`` / ``globalPid`` values (any integer width: a column the table lacks
    reads as a narrow -1)."""
    return (global_id.astype(np.int64, copy=False) >> _PID_SHIFT) & _ID_MASK


def tid_of(global_tid: np.ndarray) -> np.ndarray:
    return global_tid.astype(np.int64, copy=False) & _ID_MASK

#: nvprof's own database (``StringTable`` + ``Version``, no ``StringIds``): ``formats.heads.is_nvprof``, read by
#: ``formats.nvprof``.
NVPROF_OWN = heads.NVPROF_OWN


class Schema(_sq.Schema):
    """The export's tables and their columns (:class:`formats.sqlite.Schema`), and which profiler's database it is."""

    def is_export(self) -> bool:
        """An Nsight Systems export, by its tables."""
        return any(t in self.tables for t in NSYS_OWN) or (
            STRINGS in self.tables and any(t in self.tables for t in ACTIVITY + TARGET_TABLES))

    def is_nvprof(self) -> bool:
        """nvprof's database (:data:`NVPROF_OWN`), not an Nsight Systems export."""
        return heads.is_nvprof(self)



def names_unreadable(schema: Schema) -> list[str]:
    """The tables of :data:`NAMED_BY_ID` holding rows whose names are ids into a ``StringIds`` the export lacks (no
    table, or one without ``id`` / ``value``); empty where their names can be read.

    Why it is damage and not an empty name: every Nsight export writes ``StringIds`` beside these tables, so a file
    without it is a trimmed or foreign schema; read on, each call and kernel would be "CUDA API 17" and kernel 17 --
    no launch, sync or kernel family told -- and the advice would rest on ids (h37-damage68)."""
    if schema.has(STRINGS, "id", "value"):
        return []
    return [t for t, cols in NAMED_BY_ID.items() if any(c in schema.columns(t) for c in cols) and schema.nonempty(t)]


def string_table(schema: _sq.Schema, ids: np.ndarray, table: str = STRINGS, column: str = "value") -> dict[int, str]:
    """The strings of the ids asked from ``StringIds`` (``formats.sqlite.string_table``)."""
    return _sq.string_table(schema, ids, table, column)


def enum_labels(schema: Schema, table: str) -> dict[int, str]:
    """An ``ENUM_*`` table as id -> label (its ``label``, else ``name``); {} when the export has none."""
    cols = schema.columns(table)
    if "id" not in cols:
        return {}
    col = "label" if "label" in cols else "name" if "name" in cols else None
    if col is None:
        return {}
    return {int(i): str(v) for i, v in schema.con.execute(f'SELECT id, {col} FROM "{table}" WHERE {integers("id")}')}


def key_values(schema: Schema, table: str, limit: int = 10_000, chars: int = 4096) -> list[tuple[str, str]]:
    """``(name, value)`` rows of a metadata table (``META_DATA_*``, ``TARGET_INFO_SYSTEM_ENV``): at most ``limit``
    rows, each text cut at ``chars`` characters (metadata is short; a file's own huge row costs no memory here)."""
    cols = schema.columns(table)
    if not {"name", "value"} <= cols:
        return []
    sql = f'SELECT substr(name, 1, {int(chars)}), substr(value, 1, {int(chars)}) FROM "{table}" LIMIT {int(limit)}'
    return [(str(n), "" if v is None else str(v)) for n, v in schema.con.execute(sql)]


def program_stderr(schema: Schema, chars: int = 65536, stream: str = "stderr") -> list[str]:
    """The profiled program's standard error (``stream="stdout"``: its output) as the export kept it
    (:data:`PROCESS_STREAMS`): one text per process that wrote any, cut at ``chars`` characters from its end (where a
    failing program says why); empty without the table."""
    if not (schema.has(PROCESS_STREAMS, "filenameId", "contentId") and schema.has(STRINGS, "id", "value")):
        return []
    sql = (f'SELECT substr(c.value, -{int(chars)}) FROM "{PROCESS_STREAMS}" p '
           f'JOIN "{STRINGS}" f ON f.id = p.filenameId JOIN "{STRINGS}" c ON c.id = p.contentId '
           "WHERE f.value LIKE ? AND length(trim(c.value)) > 0 LIMIT 16")
    return [str(v) for (v,) in schema.con.execute(sql, (f"%{stream}%",)) if v is not None]


#: The profiler's own messages about the run (``nsys``'s diagnostics, the ones its GUI lists).
DIAGNOSTICS = "DIAGNOSTIC_EVENT"
#: ``DIAGNOSTIC_EVENT.source`` of the messages the profiler's injection library wrote from inside the profiled
#: process (``ENUM_DIAGNOSTIC_SOURCE_TYPE``: 1 Injection, 2 Daemon, 3 Analysis), and the severities (2 Warning,
#: 3 Error) of those that say something went wrong.
DIAG_INJECTION = 1
DIAG_TROUBLE = (2, 3)


def injection_messages(schema: Schema, limit: int = 64) -> list[tuple[int, str]]:
    """(severity, text) of the profiler's injection messages from inside the profiled process, in time order: what
    the profiler itself says it did there (``CUDA injection initialized successfully.``) and what failed
    (``ActivityFlushAll returned 2: CUPTI_ERROR_INVALID_DEVICE``); empty without the table."""
    if not schema.has(DIAGNOSTICS, "timestamp", "source", "severity", "text"):
        return []
    sql = (f'SELECT severity, substr(text, 1, 300) FROM "{DIAGNOSTICS}" WHERE source = ? AND text IS NOT NULL '
           f'AND {integers("severity")} ORDER BY timestamp LIMIT {int(limit)}')
    return [(int(sev), str(text)) for sev, text in schema.con.execute(sql, (DIAG_INJECTION,))]


def diagnostic_texts(schema: Schema, word: str, limit: int = 16) -> list[str]:
    """The profiler's diagnostic messages (any source) holding ``word``, in time order, at most ``limit``: a count it
    wrote once at the session's end is found however many messages precede it; empty without the table."""
    if not schema.has(DIAGNOSTICS, "timestamp", "text"):
        return []
    sql = (f'SELECT substr(text, 1, 300) FROM "{DIAGNOSTICS}" WHERE text LIKE ? ORDER BY timestamp '
           f"LIMIT {int(limit)}")
    return [str(text) for (text,) in schema.con.execute(sql, (f"%{word}%",)) if text is not None]


#: The tables of the call stacks Nsight samples or attaches to OS runtime calls: their ``module`` names the library of
#: each frame.
CALLCHAINS = ("OSRT_CALLCHAINS", "SAMPLING_CALLCHAINS")


def callchain_modules(schema: Schema, limit: int = 512) -> list[str]:
    """The libraries the profiled program's sampled or OS-runtime call stacks passed through (``module`` of
    :data:`CALLCHAINS`, distinct, at most ``limit``): what it had loaded and called into, where the export kept stacks;
    empty without them."""
    out: list[str] = []
    for table in CALLCHAINS:
        if not schema.has(table, "module") or STRINGS not in schema:
            continue
        sql = (f'SELECT DISTINCT substr(s.value, 1, 300) FROM (SELECT DISTINCT module FROM "{table}") c '
               f'JOIN "{STRINGS}" s ON s.id = c.module LIMIT {int(limit)}')
        out.extend(str(v) for (v,) in schema.con.execute(sql) if v is not None)
    return list(dict.fromkeys(out))


def value_of(schema: Schema, table: str, name: str, chars: int = 256) -> str | None:
    """The first ``value`` of the metadata row called ``name`` (``Hostname``), cut at ``chars``; None without one."""
    if not {"name", "value"} <= schema.columns(table):
        return None
    row = schema.con.execute(f'SELECT substr(value, 1, {int(chars)}) FROM "{table}" WHERE name = ? AND '
                             "length(value) > 0 LIMIT 1", (name,)).fetchone()
    return str(row[0]) if row and row[0] is not None else None


def dict_rows(schema: Schema, table: str, limit: int = 10_000) -> list[dict]:
    """Every row of a small table (``TARGET_INFO_GPU``) as a dict of its columns."""
    names = sorted(schema.columns(table))
    if not names:
        return []
    cur = schema.con.execute(f'SELECT {", ".join(map(_quote, names))} FROM "{table}" LIMIT {int(limit)}')
    return [dict(zip(names, r)) for r in cur.fetchall()]
