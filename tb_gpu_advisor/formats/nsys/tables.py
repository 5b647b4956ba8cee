"""The tables of an ``nsys export --type sqlite`` file, and reading them a chunk at a time into numpy columns.

What is decided here, from the export's own conventions (Nsight Systems' "SQLite Export Schema Reference"; the
three real exports in ``../shared/profiles/nsys`` were checked against it):

* an export is recognised by its tables, never its name: Nsight's own metadata tables (``ANALYSIS_DETAILS``,
  ``META_DATA_EXPORT``, ``TARGET_INFO_SESSION_START_TIME``), or ``StringIds`` beside an activity table
  (``CUPTI_ACTIVITY_KIND_*``, ``NVTX_EVENTS``);
* tables are created lazily: one exists only when its data does (an export of a run without CUDA trace has no
  ``CUPTI_ACTIVITY_KIND_KERNEL``), and columns come and go between versions (``PRAGMA table_info`` says which);
* rows are in no guaranteed order (newer exports shuffle them): every reader sorts what it reads;
* ``globalTid`` / ``globalPid`` are serialized ids: the pid in bits 24-47, the tid in bits 0-23.

Columns are read with one cursor per table, :data:`CHUNK_ROWS` rows at a time (``fetchmany``), each chunk turned
into numpy columns at once: memory follows the columns kept, not the table, and no per-event object outlives its
chunk.
"""

from __future__ import annotations

import contextlib
import itertools
import operator
import os
import pathlib
import sqlite3
from collections.abc import Iterator

import numpy as np

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.model.columns import int_dtype

#: Rows fetched at a time.
CHUNK_ROWS = 1 << 16
#: SQLite files start with these 16 bytes.
MAGIC = b"SQLite format 3\x00"
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
SESSION_START = "TARGET_INFO_SESSION_START_TIME"
ANALYSIS = "ANALYSIS_DETAILS"
META_EXPORT = "META_DATA_EXPORT"
META_CAPTURE = "META_DATA_CAPTURE"
SYSTEM_ENV = "TARGET_INFO_SYSTEM_ENV"
#: Tables only Nsight writes: any one of them makes an SQLite file an export.
NSYS_OWN = (ANALYSIS, META_EXPORT, SESSION_START)
#: Activity tables; with ``StringIds`` beside one of them, a file is an export (a hand-made or trimmed one).
ACTIVITY = (KERNEL, MEMCPY, MEMSET, RUNTIME, NVTX, SYNC, GRAPH_TRACE)

#: Serialized global ids: pid and tid fields.
_PID_SHIFT = 24
_ID_MASK = (1 << 24) - 1


class NsysReadError(ValueError):
    """An SQLite file that is no Nsight Systems export, or one without anything to analyse."""


def pid_of(global_id: np.ndarray) -> np.ndarray:
    """The process id of serialized ``globalTid`` / ``globalPid`` values."""
    return (global_id >> _PID_SHIFT) & _ID_MASK


def tid_of(global_tid: np.ndarray) -> np.ndarray:
    return global_tid & _ID_MASK


def connect(path: str, lenient: bool = False, immutable: bool = False) -> sqlite3.Connection:
    """The export, opened read-only (``mode=ro``: nothing is written beside it, not even a journal).  ``lenient``:
    text that is no UTF-8 is decoded with replacement characters (slower: a Python call per string) instead of
    failing the query.  ``immutable``: no locks, no journal looked for (a file opened through its descriptor)."""
    uri = pathlib.Path(os.path.abspath(path)).as_uri() + "?mode=ro" + ("&immutable=1" if immutable else "")
    con = sqlite3.connect(uri, uri=True, check_same_thread=False)
    if lenient:
        con.text_factory = lambda b: b.decode("utf-8", "replace")
    return con


@contextlib.contextmanager
def open_db(path: str, lenient: bool = False) -> Iterator[sqlite3.Connection]:
    """The export at ``path``, read-only, closed after.  A file discovery listed (``fsio.Listed``) is opened only
    below its logdir and only as the file listed (``fsio.open_listed``), and SQLite reads that open file through its
    descriptor (``/proc/self/fd/N``): a link swapped in after the listing is never followed.  Elsewhere (no
    ``/proc``), or for a path given by hand, the path itself."""
    held = None
    target, immutable = fsio.local_path(path), False
    if isinstance(path, fsio.Listed) and os.path.isdir("/proc/self/fd"):
        held = fsio.open_listed(path)
        target, immutable = f"/proc/self/fd/{held.fileno()}", True
    try:
        con = connect(target, lenient=lenient, immutable=immutable)
        try:
            yield con
        finally:
            con.close()
    finally:
        if held is not None:
            held.close()


def is_decode_error(e: Exception) -> bool:
    """A query failed on text that is no UTF-8 (read again with ``connect(lenient=True)``)."""
    return isinstance(e, sqlite3.OperationalError) and "decode" in str(e).lower()


def is_sqlite(path: str) -> bool:
    """The file starts as SQLite files do (a listed file read only as listed: ``fsio.read_head``)."""
    try:
        return fsio.read_head(path, len(MAGIC)) == MAGIC
    except OSError:
        return False


class Schema:
    """The export's tables and their columns, asked once per table."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con
        rows = con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')").fetchall()
        self.tables = frozenset(r[0] for r in rows)
        self._columns: dict[str, frozenset[str]] = {}

    def __contains__(self, table: str) -> bool:
        return table in self.tables

    def columns(self, table: str) -> frozenset[str]:
        if table not in self.tables:
            return frozenset()
        if table not in self._columns:
            self._columns[table] = frozenset(r[1] for r in self.con.execute(f'PRAGMA table_info("{table}")'))
        return self._columns[table]

    def has(self, table: str, *cols: str) -> bool:
        return table in self.tables and all(c in self.columns(table) for c in cols)

    def is_export(self) -> bool:
        """An Nsight Systems export, by its tables."""
        return any(t in self.tables for t in NSYS_OWN) or (
            STRINGS in self.tables and any(t in self.tables for t in ACTIVITY))

    def count(self, table: str) -> int:
        if table not in self.tables:
            return 0
        return int(self.con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0])

    def nonempty(self, table: str) -> bool:
        return table in self.tables and self.con.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchone() is not None


def _rows(con: sqlite3.Connection, sql: str, chunk: int) -> Iterator[list[tuple]]:
    cur = con.execute(sql)
    try:
        while True:
            rows = cur.fetchmany(chunk)
            if not rows:
                return
            yield rows
    finally:
        cur.close()


def int_columns(schema: Schema, table: str, cols: dict[str, str | None], where: str = "",
                chunk: int = CHUNK_ROWS) -> dict[str, np.ndarray]:
    """Integer columns of ``table``: ``cols`` maps each output name to its column (an SQL expression is allowed;
    None or a column the table lacks reads as -1; NULL reads as -1).  Each chunk is decoded at once and narrowed,
    so the columns kept are int64 only where the values need it (times, serialized ids)."""
    present = schema.columns(table)
    exprs = []
    for out, col in cols.items():
        if col is None or (col.isidentifier() and col not in present):
            exprs.append("-1")
        else:
            exprs.append(f"coalesce({col}, -1)")
    sql = f'SELECT {", ".join(exprs)} FROM "{table}"' + (f" WHERE {where}" if where else "")
    names = list(cols)
    parts: dict[str, list[np.ndarray]] = {n: [] for n in names}
    k = len(names)
    for rows in _rows(schema.con, sql, chunk):
        flat = np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int64, count=len(rows) * k).reshape(-1, k)
        for j, n in enumerate(names):
            col = flat[:, j]
            parts[n].append(col.astype(int_dtype(int(col.min()), int(col.max())), copy=True))
        del flat
    out = {}
    for n in names:
        p = parts.pop(n)
        if not p:
            out[n] = np.zeros(0, np.int64)
            continue
        dt = np.result_type(*[a.dtype for a in p])
        out[n] = np.concatenate(p).astype(dt, copy=False) if len(p) > 1 else p[0]
    return out


def mixed_columns(schema: Schema, table: str, cols: dict[str, str | None], text: str, where: str = "",
                  chunk: int = CHUNK_ROWS) -> Iterator[tuple[dict[str, np.ndarray], list]]:
    """Integer columns (as :func:`int_columns` reads them) and one text expression of the same rows, a chunk at a
    time: (int64 columns, the texts).  One pass over the table; the texts are interned by the caller."""
    present = schema.columns(table)
    exprs = ["-1" if col is None or (col.isidentifier() and col not in present) else f"coalesce({col}, -1)"
             for col in cols.values()]
    sql = f'SELECT {", ".join(exprs)}, {text} FROM "{table}"' + (f" WHERE {where}" if where else "")
    k = len(cols)
    ints = operator.itemgetter(*range(k)) if k > 1 else (lambda r: (r[0],))
    last = operator.itemgetter(k)
    for rows in _rows(schema.con, sql, chunk):
        flat = np.fromiter(itertools.chain.from_iterable(map(ints, rows)), dtype=np.int64, count=len(rows) * k)
        flat = flat.reshape(-1, k)
        out = {}
        for j, n in enumerate(cols):
            col = flat[:, j]
            out[n] = col.astype(int_dtype(int(col.min()), int(col.max())), copy=True)
        del flat
        yield out, list(map(last, rows))


def string_table(schema: Schema, ids: np.ndarray) -> dict[int, str]:
    """``StringIds`` values of the ids asked (kernel and function names): only those are kept."""
    want = np.unique(ids[ids >= 0]) if ids.size else ids
    if not want.size or STRINGS not in schema:
        return {}
    out: dict[int, str] = {}
    lo, hi = int(want[0]), int(want[-1])
    wanted = set(want.tolist())
    sql = f'SELECT id, value FROM "{STRINGS}" WHERE id BETWEEN {lo} AND {hi}'
    for rows in _rows(schema.con, sql, CHUNK_ROWS):
        for i, v in rows:
            if i in wanted:
                out[int(i)] = v if isinstance(v, str) else str(v)
    return out


def enum_labels(schema: Schema, table: str) -> dict[int, str]:
    """An ``ENUM_*`` table as id -> label (its ``label``, else ``name``); {} when the export has none."""
    cols = schema.columns(table)
    if "id" not in cols:
        return {}
    col = "label" if "label" in cols else "name" if "name" in cols else None
    if col is None:
        return {}
    return {int(i): str(v) for i, v in schema.con.execute(f'SELECT id, {col} FROM "{table}"') if i is not None}


def key_values(schema: Schema, table: str) -> list[tuple[str, str]]:
    """``(name, value)`` rows of a metadata table (``META_DATA_*``, ``TARGET_INFO_SYSTEM_ENV``)."""
    cols = schema.columns(table)
    if not {"name", "value"} <= cols:
        return []
    return [(str(n), "" if v is None else str(v)) for n, v in schema.con.execute(f'SELECT name, value FROM "{table}"')]


def dict_rows(schema: Schema, table: str, limit: int = 10_000) -> list[dict]:
    """Every row of a small table (``TARGET_INFO_GPU``) as a dict of its columns."""
    if table not in schema:
        return []
    cur = schema.con.execute(f'SELECT * FROM "{table}" LIMIT {int(limit)}')
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]
