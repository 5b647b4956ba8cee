"""SQLite databases of any profiler, read safely and a chunk at a time into numpy columns: the one home of the machinery
the SQLite readers share (Nsight Systems exports, ``formats/nsys``; rocmProfileData databases, ``formats/rpd``).

What is decided here, once, for every SQLite format:

* SQLite reads only bytes that came through one checked descriptor (:func:`open_db`): a small file in memory, a large
  one through a private copy (:func:`private_copy`), never a path into the logdir; a file over the profile size limit
  is refused first (:func:`sized_local`);
* what a file may make SQLite do is bounded (:func:`guard`): no trusted schema, no write, a VM-step budget
  proportional to the file (:class:`QueryBudgetExceeded`);
* only real tables count (:class:`Schema`): nothing a file defines (a view, a virtual table, a computed column) is run;
* a file cut short is told by its header (:func:`cut_short`);
* columns are read :data:`CHUNK_ROWS` rows at a time, in row id order, each chunk packed by SQLite into one row (its
  integers as one hex string, its texts as one NUL-separated string: ``_chunks``) and turned into numpy columns at
  once: no Python object per value, memory follows the columns kept, not the table.  A chunk holding a value that is
  no integer, and a table without row ids, are read as a cursor's tuples (what numpy makes of them is unchanged).

Where the compiled reader is built (``formats/_csqlite.c``, built under that name; chosen in ``sqlite_compiled.py``),
:func:`int_columns` and :func:`mixed_columns` step the same expressions through SQLite's C API instead, on a connection
of its own to the same bytes, the GIL released (so the tables :class:`Beside` reads run on both cores), each value
written into its column at the column's narrowest width: the same columns, the same order, the same dtypes.  It hands
a table back to the code here on anything but integers and strict UTF-8 text, and on any SQLite error.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import itertools
import os
import pathlib
import shutil
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

import numpy as np

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.formats import sqlite_compiled
from tb_gpu_advisor.formats.base import gunzipped_copy
from tb_gpu_advisor.model.columns import int_dtype
from tb_gpu_advisor.model.damage import attach, cut, unreadable

T = TypeVar("T")

#: The compiled column reader (``formats/_csqlite.c``, built under that name: ``sqlite_compiled.py`` says which
#: runs), or None.
_CSQLITE = sqlite_compiled.load()

CHUNK_ROWS = 1 << 16

MAGIC = b"SQLite format 3\x00"

#: Exports up to this size are read into memory through the checked descriptor (``sqlite3`` ``deserialize``); larger
#: ones are copied through it into a private folder first.  Measured (docs/robustness.md, "Issue 39"): reading a
#: 103 MB export in memory raised the read's peak RSS from 217 to 292 MB (about 0.7x the file) at the same CPU time,
#: and saves only the copy's disk write.
DESERIALIZE_MAX_BYTES = 64 << 20
#: SQLite virtual-machine steps between two looks at the query budget.
PROGRESS_STEP = 10_000
#: The budget of a connection: this many VM steps, plus :data:`STEPS_PER_BYTE` per byte of the file.  A table scan
#: costs a bounded number of steps per row, and a row takes bytes of the file: reading a real export spends under
#: 1/10 of it (a 197 MB synthetic export: 276 M steps of its 3.95 G with the packed reads of :func:`_chunks`, whose
#: ``printf`` and ``typeof`` per value are VM steps; 64 M row by row); only what a file makes SQLite compute (a
#: view, a recursive query) could run past it, and the readers never read those.  Threads reading beside the first
#: connection (:class:`Beside`) spend its budget.
BASE_STEPS = 20_000_000
STEPS_PER_BYTE = 20


class QueryBudgetExceeded(sqlite3.OperationalError):
    """A query ran past the connection's VM-step budget: the file makes SQLite compute, not read."""


class ForeignValue(ValueError):
    """A column the reader reads as numbers (times, ids into a string table) holds a value that is none: text, a blob
    or a REAL past int64 -- a table of the right name whose rows are another schema's (h37-damage68)."""


class Guarded(sqlite3.Connection):
    """A connection with its budget (:func:`guard`): ``ticks`` spent of ``budget``, in :data:`PROGRESS_STEP` steps."""

    ticks = 0
    budget = 0
    #: The private copy this connection reads (None: an in-memory database), and whether it reads text leniently:
    #: what a sibling connection (:class:`Beside`) opens.
    copy: str | None = None
    lenient = False
    #: The connection whose budget this one spends (itself, or a :class:`Beside` sibling's first connection).
    spend: Guarded | None = None
    #: An in-memory database's bytes, kept for the compiled reader's own connection (None without it).
    image: bytearray | None = None


def connect(path: str, lenient: bool = False, immutable: bool = False) -> sqlite3.Connection:
    """The SQLite file at ``path``, opened read-only (``mode=ro``: nothing is written beside it, not even a journal).
    ``lenient``: text that is no UTF-8 is decoded with replacement characters (slower: a Python call per string)
    instead of failing the query.  ``immutable``: no locks, no journal looked for (a private copy).  Guarded as every
    connection is (:func:`guard`), with the budget of a file of its size."""
    uri = pathlib.Path(os.path.abspath(path)).as_uri() + "?mode=ro" + ("&immutable=1" if immutable else "")
    con = sqlite3.connect(uri, uri=True, check_same_thread=False, factory=Guarded)
    return guard(con, os.path.getsize(path), lenient)


def guard(con: Guarded, size: int, lenient: bool = False, share: Guarded | None = None) -> Guarded:
    """What a file may make SQLite do, bounded: nothing it defines runs with privileges (``trusted_schema`` off), no
    write (``query_only``), no string or blob longer than the file itself (only a computed value can be), and every
    query under a VM-step budget proportional to the file (:class:`QueryBudgetExceeded` past it)."""
    con.execute("PRAGMA trusted_schema = OFF")
    con.execute("PRAGMA query_only = ON")
    con.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max(int(size), 1 << 20))
    if lenient:
        con.text_factory = lambda b: b.decode("utf-8", "replace")
    con.budget = (BASE_STEPS + STEPS_PER_BYTE * max(int(size), 0)) // PROGRESS_STEP
    con.ticks = 0
    con.lenient = lenient
    spend = share if share is not None else con  # a sibling spends its first connection's budget
    con.spend = spend

    def progress() -> int:
        spend.ticks += 1
        return 1 if spend.ticks > spend.budget else 0

    con.set_progress_handler(progress, PROGRESS_STEP)
    return con


def over_budget(con: sqlite3.Connection, e: Exception) -> bool:
    """``e`` is SQLite's "interrupted" of this connection's spent budget."""
    return isinstance(e, sqlite3.OperationalError) and isinstance(con, Guarded) and con.ticks > con.budget


def budget_message(con: Guarded) -> str:
    steps = con.budget * PROGRESS_STEP
    return (f"a query ran past its budget of {steps:,} SQLite steps ({BASE_STEPS:,} + {STEPS_PER_BYTE} per byte of "
            "the file): the file makes SQLite compute rather than read its tables")


#: How long the private copy of a probe is kept for a read of the same file (:func:`open_db` ``keep``).
KEEP_SECONDS = 120.0
#: The kept copy: (the file's identity, the copy's path, the process that made it, when), or None.
_kept: tuple[tuple[int, ...], str, int, float] | None = None
_kept_lock = threading.Lock()
#: The timer that removes the kept copy no read took (one at a time: replaced with the copy).
_kept_timer: threading.Timer | None = None


def _identity(st: os.stat_result) -> tuple[int, ...]:
    """What a file is, for the kept copy: the same inode with the same size and times (``ctime`` moves on any write,
    and cannot be set back)."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _take_kept(identity: tuple[int, ...]) -> str | None:
    """The kept copy if it is of the file with ``identity``, made by this process (a forked child never takes its
    parent's), not older than :data:`KEEP_SECONDS`, and still whole; it is the caller's to remove then.  Any other
    kept copy of this process is removed."""
    global _kept
    with _kept_lock:
        kept = _kept
        if kept is None or kept[2] != os.getpid():
            return None
        _kept = None
    ident, copy, _, when = kept
    try:
        whole = os.path.getsize(copy) == identity[2]
    except OSError:
        whole = False
    if ident == identity and whole and time.monotonic() - when <= KEEP_SECONDS:
        return copy
    remove_private_copy(copy)
    return None


def _keep(identity: tuple[int, ...], copy: str) -> None:
    """Keep ``copy`` for the next read of the same file, in place of any copy kept before (removed); removed after
    :data:`KEEP_SECONDS` if no read takes it, and at exit."""
    global _kept, _kept_timer
    timer = threading.Timer(KEEP_SECONDS, _drop_kept, args=(copy,))
    timer.daemon = True
    with _kept_lock:
        old, _kept = _kept, (identity, copy, os.getpid(), time.monotonic())
        old_timer, _kept_timer = _kept_timer, timer
    if old_timer is not None:
        old_timer.cancel()
    if old is not None and old[2] == os.getpid():
        remove_private_copy(old[1])
    timer.start()


def _drop_kept(copy: str | None = None) -> None:
    """Remove the kept copy (only if it is ``copy``, when given) made by this process."""
    global _kept
    with _kept_lock:
        kept = _kept
        if kept is None or kept[2] != os.getpid() or (copy is not None and kept[1] != copy):
            return
        _kept = None
    remove_private_copy(kept[1])


atexit.register(_drop_kept)


@contextlib.contextmanager
def open_db(path: str, lenient: bool = False, keep: bool = False) -> Iterator[sqlite3.Connection]:
    """The export at ``path``, read-only and guarded (:func:`guard`), closed after.  SQLite reads only bytes that came
    through one descriptor, opened as :func:`fsio.open_binary` opens the path (a file discovery listed:
    ``fsio.open_listed``, only below its logdir and only as the file listed): up to
    :data:`DESERIALIZE_MAX_BYTES` in memory (``deserialize``), beyond it a private copy made through that descriptor
    (:func:`private_copy`).  SQLite is never given a path into the logdir: it would resolve and reopen it, and a link
    swapped in meanwhile would be read (even ``/proc/self/fd/N`` is resolved to the file's path first).  A query
    past the budget raises :class:`QueryBudgetExceeded`.

    ``keep``: the private copy is kept after (:func:`_keep`) for the read that follows a probe of the same file in
    this process (discovery's look at the header, then the report's read): that read takes it when the file
    it opened is the one copied (:func:`_identity`), so a large export is copied once, not twice."""
    with fsio.open_binary(path) as f:
        st = os.fstat(f.fileno())
        size = st.st_size
        if size <= DESERIALIZE_MAX_BYTES:
            con = _in_memory(f, size, lenient)
            copy = None
        else:
            copy = _take_kept(_identity(st)) or private_copy(f, ".sqlite")
    try:
        if copy is not None:
            con = connect(copy, lenient=lenient, immutable=True)
            con.copy = copy
        try:
            yield con
        except sqlite3.OperationalError as e:
            if over_budget(con, e):
                raise QueryBudgetExceeded(budget_message(con)) from e
            raise
        except UnicodeDecodeError as e:  # Python decodes SQLite's own message: one quoting a damaged schema's bytes
            raise sqlite3.DatabaseError(f"malformed database schema (its text is no UTF-8: {e})") from e
        finally:
            con.close()
    finally:
        if copy is not None and keep:
            _keep(_identity(st), copy)
        elif copy is not None:
            remove_private_copy(copy)


def _in_memory(f, size: int, lenient: bool) -> sqlite3.Connection:
    """The file's bytes, read through ``f``, as an in-memory database (the buffer is SQLite's own copy)."""
    buf = bytearray(size)
    n = f.readinto(buf)
    if n < size:  # the file shrank since fstat: what is there
        del buf[n:]
    if len(buf) >= 20 and buf[18:20] == b"\x02\x02":  # a WAL-mode file: its pages as a rollback-journal file's
        buf[18:20] = b"\x01\x01"
    con = sqlite3.connect(":memory:", check_same_thread=False, factory=Guarded)
    try:
        con.deserialize(buf)
    except sqlite3.Error:
        con.close()
        raise
    if _CSQLITE is not None and not lenient:  # its connection reads these bytes in place (up to DESERIALIZE_MAX_BYTES)
        con.image = buf
    del buf
    return guard(con, size, lenient)


def private_copy(f, suffix: str) -> str:
    """A copy of the open file ``f``, made through its descriptor, in a new folder only this user can enter: what a
    tool that wants a path (SQLite for a large export, ``nsys export``) is given instead of the logdir's path.
    Remove it with :func:`remove_private_copy`."""
    folder = tempfile.mkdtemp(prefix="tb-gpu-advisor-")
    dst = os.path.join(folder, "copy" + suffix)
    try:
        with open(dst, "xb") as out:
            _copy_through(f, out)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return dst


def _copy_through(f, out) -> None:
    """``f``'s bytes from its start into ``out``, by the kernel where it can (``copy_file_range``: no pass through
    Python's buffers, a reflink on filesystems that share blocks), else through a buffer."""
    done = 0
    try:
        while True:
            n = os.copy_file_range(f.fileno(), out.fileno(), 1 << 30, done)
            if n == 0:
                return
            done += n
    except (OSError, AttributeError):  # another filesystem, an old kernel, no such call on this platform
        f.seek(done)
        out.seek(done)
        out.truncate()
        shutil.copyfileobj(f, out, 4 << 20)


def remove_private_copy(path: str) -> None:
    shutil.rmtree(os.path.dirname(path), ignore_errors=True)


def read_database(path: str, host: str | None, error: type[Exception], what: str, suffix: str,
                  read_local: Callable[[str, str, int, str | None], T], stem: Callable[[str], str]) -> T:
    """A format's SQLite database at ``path`` read by ``read_local(path, local, size, host)``: from local disk only
    (SQLite needs a file; ``what`` names the format's databases in the error), and a gzipped one from its
    decompressed private copy (``formats.base.gunzipped_copy``, its host named by ``stem`` of the file where none is
    given).  One home for the SQLite formats read whole (rocmProfileData, nvprof)."""
    if fsio.is_remote(path):
        raise error(f"{path}: {what} are read from local disk only (SQLite needs a file)")
    local = fsio.local_path(path)
    size = sized_local(path, local, error)
    if not local.endswith(".gz"):
        return read_local(path, local, size, host)
    with gunzipped_copy(path, error, suffix) as copy:
        return read_local(path, copy, size, host or stem(local))


def read_own(path: str, local: str, error: type[Exception], is_own: Callable[[Schema], bool], not_own: str,
             read: Callable[[Schema], T]) -> T:
    """The SQLite database at ``local`` read for ``path`` by ``read(schema)``: checked whole (:func:`whole`), its
    errors in the format's own ``error``, read again leniently where its text is no UTF-8, and refused with
    ``not_own`` where ``is_own`` says its tables are not the format's.  One home for the SQLite formats read whole
    (rocmProfileData, nvprof)."""
    whole(path, local, error)

    def once(lenient: bool) -> T:
        with read_errors(path, error, retry_decode=not lenient), open_db(local, lenient=lenient) as con:
            schema = Schema(con)
            if not is_own(schema):
                raise error(f"{path}: {not_own}")
            return read(schema)

    return read_leniently(once)


def probe_own(path: str, is_own: Callable[[Schema], bool], not_own: str,
              activity: Callable[[sqlite3.Connection, Schema], bool | None]) -> tuple[str | None, bool | None]:
    """(None when the file at ``path`` is a whole SQLite database whose tables ``is_own`` says are the format's, else
    why not (``not_own`` where its tables are another's); ``activity`` -- whether it holds GPU work).  One probe for
    the SQLite formats read whole (rocmProfileData, nvprof): what cannot be opened is not known to be theirs."""
    if not is_sqlite(path):
        return "not an SQLite file", None
    if cut_short(path) is not None:
        return "an SQLite file cut short", None
    try:
        with open_db(path, lenient=True) as con:
            schema = Schema(con)
            if not is_own(schema):
                return not_own, None
            return None, activity(con, schema)
    except sqlite3.Error as e:
        return f"an SQLite file that cannot be read ({e})", None
    except OSError as e:
        return f"unreadable ({e})", None


def sized_local(path: str, local: str, error: type[Exception]) -> int:
    """The size of a database file on local disk, within the profile size limit; ``error`` (the format's own) where it
    cannot be read or is over the limit.  One check for every SQLite format (Nsight exports, rocmProfileData)."""
    from tb_gpu_advisor.formats.base import LIMIT_HINT, human_size, max_profile_bytes

    try:
        size = fsio.size(local)
    except OSError as e:
        raise error(f"cannot read {path}: {e}") from e
    limit = max_profile_bytes()
    if size > limit:
        raise error(f"{path}: file is {human_size(size)}, over the {human_size(limit)} limit ({LIMIT_HINT})")
    return size


def whole(path: str, local: str, error: type[Exception]) -> None:
    """``error`` (the format's own) where the SQLite file at ``local`` is shorter than its header says
    (:func:`cut_short`): one wording for every SQLite format that checks it before reading."""
    short = cut_short(local)
    if short is not None:
        held = ("of its 100-byte header" if short[0] == HEADER_BYTES and short[1] < HEADER_BYTES else
                f"of the {short[0]:,} bytes its header says it holds")
        why = f"cut short ({short[1]:,} {held}: a copy or transfer that stopped part-way)"
        raise attach(error(f"{path}: damaged SQLite file: {why}"), cut("sqlite_cut_short", why, offset=short[1]))


@contextlib.contextmanager
def read_errors(path: str, error: type[Exception], retry_decode: bool = False) -> Iterator[None]:
    """What reading the database of ``path`` raises, in the format's own ``error``: a query past the budget, a damaged
    file (SQLite's operational and database errors), a file not as listed; SQLite's own allocation failing under the
    memory guard stays a :class:`MemoryError`.  ``retry_decode``: text that is no UTF-8 is raised as it is, for the
    caller to read again leniently (:func:`read_leniently`).  One home for the SQLite readers (Nsight exports,
    rocpd, rocmProfileData)."""
    try:
        yield
    except QueryBudgetExceeded as e:
        raise error(f"{path}: {e}") from e
    except ForeignValue as e:
        raise attach(error(f"{path}: {e}"), unreadable("sqlite_foreign_value", str(e))) from e
    except sqlite3.OperationalError as e:
        if retry_decode and is_decode_error(e):
            raise
        if "out of memory" in str(e).lower():
            raise MemoryError(str(e)) from e
        said = foreign_schema(e)
        if said is not None:
            raise attach(error(f"{path}: {said}"), unreadable("sqlite_foreign_schema", said)) from e
        raise error(f"{path}: damaged SQLite file: {e}") from e
    except sqlite3.DatabaseError as e:  # SQLite's own corruption codes (SQLITE_CORRUPT, SQLITE_NOTADB): damage
        raise attach(error(f"{path}: damaged SQLite file: {e}"), unreadable("sqlite_corrupt", str(e))) from e
    except fsio.NotListedFile as e:
        raise error(str(e)) from e


def foreign_schema(e: Exception) -> str | None:
    """The words of a query that failed on the file's schema -- a table or column the reader reads that the file
    lacks (SQLite's "no such table" / "no such column") -- else None.

    Why 'unreadable', not 'cut': SQLite read the schema whole (a cut file fails its header check or its pages, never
    the names it lists), so nothing lies past the damage; the file is another schema's, or one trimmed, and the rows
    the reader needs there cannot be read (h37-damage68)."""
    text = str(e)
    if not isinstance(e, sqlite3.OperationalError) or not text.lower().startswith(("no such table", "no such column")):
        return None
    return f"{text}: the file's schema lacks what its profiler always writes (another version's or a trimmed schema)"


def read_leniently(read: Callable[[bool], T]) -> T:
    """``read(False)``; where it fails on text that is no UTF-8 (:func:`read_errors` with ``retry_decode``),
    ``read(True)``: the database read again with ``connect(lenient=True)``."""
    try:
        return read(False)
    except sqlite3.OperationalError as e:
        if not is_decode_error(e):
            raise
    return read(True)


def is_decode_error(e: Exception) -> bool:
    """A query failed on text that is no UTF-8 (read again with ``connect(lenient=True)``)."""
    return isinstance(e, sqlite3.OperationalError) and "decode" in str(e).lower()


def is_sqlite(path: str) -> bool:
    """The file starts as SQLite files do (a listed file read only as listed: ``fsio.read_head``)."""
    try:
        return fsio.read_head(path, len(MAGIC)) == MAGIC
    except OSError:
        return False


#: The bytes of an SQLite file's header (https://www.sqlite.org/fileformat.html, 1.3): every SQLite file holds them.
HEADER_BYTES = 100


def cut_short(path: str) -> tuple[int, int] | None:
    """(bytes the file's header says it holds, bytes it holds) where an SQLite file is shorter than its own header
    says -- a copy cut off mid-write or mid-transfer, damaged, whatever its tables were -- else None.  A file that
    starts as SQLite's and is shorter than the header itself: (:data:`HEADER_BYTES`, bytes it holds).

    SQLite's header (https://www.sqlite.org/fileformat.html, 1.3): the page size at offset 16 (big-endian u16, 1
    meaning 65536), the database's size in pages at 28 (u32), valid when the change counter at 24 equals the
    "version-valid-for" number at 92."""
    try:
        head = fsio.read_head(path, 100)
        size = fsio.stat(path)[0]
    except OSError:
        return None
    if len(MAGIC) <= len(head) < HEADER_BYTES and head[: len(MAGIC)] == MAGIC:
        return HEADER_BYTES, size  # cut in its header: not even the 100 bytes every SQLite file starts with (h37-damage67b)
    if len(head) < HEADER_BYTES or head[: len(MAGIC)] != MAGIC or head[24:28] != head[92:96]:
        return None
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    want = int.from_bytes(head[28:32], "big") * page
    return (want, size) if size < want else None


#: Tables SQLite reads rather than computes: real tables (a virtual table is a module's code, with root page 0), no
#: column computed on read (a virtual generated column: ``table_xinfo`` hidden 2), names that are UTF-8 (Nsight's
#: all are).  Views are never among them: a view is a query the file wrote.
_TABLES_SQL = ("SELECT CAST(name AS BLOB) FROM sqlite_master WHERE type = 'table' AND rootpage > 0 "
               "AND name NOT IN (SELECT m.name FROM sqlite_master AS m, pragma_table_xinfo(m.name) AS x "
               "WHERE m.type = 'table' AND x.hidden = 2)")


def _utf8(raw: object) -> str | None:
    try:
        return bytes(raw).decode("utf-8") if isinstance(raw, (bytes, bytearray, memoryview)) else None
    except UnicodeDecodeError:
        return None


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'



class Schema:
    """The database's tables and their columns, asked once per table.  Only real tables count (:data:`_TABLES_SQL`):
    a name the file gave to a view, a virtual table or a table with computed columns reads as absent, so nothing the
    file defines is ever run; names that are no UTF-8 are left out."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con
        names = (_utf8(r[0]) for r in con.execute(_TABLES_SQL).fetchall())
        self.tables = frozenset(n for n in names if n is not None)
        self._columns: dict[str, frozenset[str]] = {}

    def __contains__(self, table: str) -> bool:
        return table in self.tables

    def columns(self, table: str) -> frozenset[str]:
        """The table's column names (those that are UTF-8)."""
        if table not in self.tables:
            return frozenset()
        if table not in self._columns:
            rows = self.con.execute("SELECT CAST(name AS BLOB) FROM pragma_table_info(?)", (table,)).fetchall()
            self._columns[table] = frozenset(n for n in (_utf8(r[0]) for r in rows) if n is not None)
        return self._columns[table]

    def has(self, table: str, *cols: str) -> bool:
        return table in self.tables and all(c in self.columns(table) for c in cols)

    def count(self, table: str) -> int:
        if table not in self.tables:
            return 0
        return int(self.con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0])

    def nonempty(self, table: str) -> bool:
        return table in self.tables and self.con.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchone() is not None

#: Threads that read tables beside the first connection: sqlite3 lets go of the GIL while SQLite steps, and the
#: packed reads (:func:`_chunks`) spend nearly all their time there.
BESIDE_THREADS = 2


class Beside:
    """Reads of whole tables run in threads, each on its own connection to the same private copy, while the caller
    reads on its own (``with Beside(schema) as b: f = b.submit(job); ...; f.result()``; ``job(schema)``).  Every
    sibling connection is guarded as the first is and spends the first one's budget: a file gets one budget however
    many threads read it.  An in-memory database (a small file), or one core, runs each job at once, in the caller's
    thread.  Leaving the block interrupts and closes the siblings."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        con = schema.con
        self.parallel = (isinstance(con, Guarded) and con.copy is not None and BESIDE_THREADS > 0
                         and (os.cpu_count() or 1) > 1)
        self.pool: concurrent.futures.ThreadPoolExecutor | None = None
        self.siblings: list[Guarded] = []
        self.lock = threading.Lock()

    def __enter__(self) -> Beside:  # noqa: PYI034 - a final class
        if self.parallel:
            self.pool = concurrent.futures.ThreadPoolExecutor(BESIDE_THREADS, thread_name_prefix="nsys-read")
        return self

    def submit(self, job: Callable[[Schema], T]) -> concurrent.futures.Future[T]:
        if self.pool is None:
            f: concurrent.futures.Future[T] = concurrent.futures.Future()
            f.set_result(job(self.schema))
            return f
        return self.pool.submit(self._run, job)

    def _run(self, job: Callable[[Schema], T]) -> T:
        first = self.schema.con
        sib = sqlite3.connect(pathlib.Path(first.copy).as_uri() + "?mode=ro&immutable=1", uri=True,
                              check_same_thread=False, factory=Guarded)
        sib.copy = first.copy  # what the compiled reader opens for this sibling
        with self.lock:
            self.siblings.append(sib)
        try:
            return job(Schema(guard(sib, os.path.getsize(first.copy), first.lenient, share=first)))
        finally:
            sib.close()

    def __exit__(self, *exc: object) -> None:
        if self.pool is None:
            return
        if exc[0] is not None:
            with self.lock:
                for sib in self.siblings:
                    with contextlib.suppress(sqlite3.Error):
                        sib.interrupt()
        self.pool.shutdown(wait=True, cancel_futures=True)


def _rows(con: sqlite3.Connection, sql: str, chunk: int, params: tuple = ()) -> Iterator[list[tuple]]:
    cur = con.execute(sql, params)
    try:
        while True:
            rows = cur.fetchmany(chunk)
            if not rows:
                return
            yield rows
    finally:
        cur.close()


#: Hex digits of one integer in a packed chunk (``printf('%016x')``: a 64-bit two's complement value).
_HEX = 16
#: What SQLite names a rowid table's row id; a table with a column of one of these names is read row by row.
_ROWID_NAMES = ("_rowid_", "rowid", "oid")


def _by_rowid(schema: Schema, table: str) -> bool:
    """Whether ``table``'s rows can be read in ``_rowid_`` ranges: a rowid table (not ``WITHOUT ROWID``) that has no
    column of that name (which would stand for the row id in SQL)."""
    if any(c.lower() in _ROWID_NAMES for c in schema.columns(table)):
        return False
    try:
        schema.con.execute(f'SELECT _rowid_ FROM "{table}" LIMIT 0').fetchall()
    except sqlite3.OperationalError:  # WITHOUT ROWID: "no such column"
        return False
    return True


def _packed_sql(table: str, exprs: list[str], text: str | None, where: str, rows: int) -> str:
    """One chunk of ``rows`` rows after a row id, as one row: the integers of every row as one hex string
    (``printf('%016x...')``, two's complement), the last row id, the row count, whether any value is no integer (then
    the chunk is read as tuples, which keeps what numpy makes of a REAL or a TEXT), and, with ``text``, the texts
    joined by NUL (NULL as '') with an integer column per row saying which were NULL."""
    k = len(exprs) + (1 if text is not None else 0)
    ints = list(exprs) + ([f"({text}) IS NULL"] if text is not None else [])
    bad = " OR ".join([f"typeof({e}) != 'integer'" for e in exprs]
                      + ([f"typeof({text}) NOT IN ('text', 'null')"] if text is not None else []))
    inner = ["_rowid_ AS r_", f"printf('{'%016x' * k}', {', '.join(ints)}) AS h_", f"({bad}) AS bad_"]
    outer = ["group_concat(h_, '')", "max(r_)", "count(*)", "max(bad_)"]
    if text is not None:
        inner.append(f"coalesce({text}, '') AS t_")
        outer.append("group_concat(t_, char(0))")
    cond = "_rowid_ > ?" + (f" AND ({where})" if where else "")
    return (f'SELECT {", ".join(outer)} FROM (SELECT {", ".join(inner)} FROM "{table}" WHERE {cond} '
            f"ORDER BY _rowid_ LIMIT {int(rows)})")


def _tuple_chunk(con: sqlite3.Connection, table: str, exprs: list[str], text: str | None, where: str, after: int,
                 rows: int) -> tuple[np.ndarray, list | None, int]:
    """The chunk :func:`_packed_sql` reads, as tuples (a value that is no integer, a text with a NUL, a chunk past
    SQLite's string limit): (int64 rows x columns, the texts, the last row id)."""
    cols = list(exprs) + ([text] if text is not None else [])
    cond = "_rowid_ > ?" + (f" AND ({where})" if where else "")
    got = con.execute(f'SELECT _rowid_, {", ".join(cols)} FROM "{table}" WHERE {cond} ORDER BY _rowid_ '
                      f"LIMIT {int(rows)}", (after,)).fetchall()
    k = len(exprs)
    try:
        flat = np.fromiter(itertools.chain.from_iterable(r[1:k + 1] for r in got), dtype=np.int64,
                           count=len(got) * k).reshape(-1, k)
    except (ValueError, OverflowError) as e:  # text that spells no number where a number or an id belongs
        raise ForeignValue(_text_in_numbers(table, exprs, got)) from e
    texts = [r[k + 1] for r in got] if text is not None else None
    return flat, texts, got[-1][0] if got else after


def _text_in_numbers(table: str, exprs: list[str], got: list[tuple]) -> str:
    """The error of a chunk whose number or id column holds text: the table, the column and the first such value.

    Why: an export whose name columns hold the names themselves instead of ``StringIds`` ids (session h37-meta57's
    inline-names rewrite of an Nsight export) read "invalid literal for int() with base 10: 'cudaMalloc_v3020'"."""
    for r in got:
        for expr, v in zip(exprs, r[1:]):
            if isinstance(v, str):
                try:
                    int(v)
                except ValueError:
                    return (f'"{table}" holds text where a number or a string id belongs ({expr}: {v[:60]!r}; names '
                            "written inline, not as ids into StringIds?): not read")
    return f'"{table}" holds a value that is no number where a number or a string id belongs: not read'


def _chunks(schema: Schema, table: str, exprs: list[str], where: str, chunk: int,
            text: str | None = None) -> Iterator[tuple[np.ndarray, list | None]]:
    """``table``'s rows (``where``), a chunk at a time: (int64 rows x ``exprs``, the ``text`` of each row or None).

    SQLite packs each chunk's integers into one hex string (:func:`_packed_sql`), decoded by ``bytes.fromhex`` and
    numpy: no Python object per value, and the texts arrive as one string split at NULs.  Rows come in row id order,
    the order a plain scan gives them.  A table whose rows cannot be ranged by row id is read as tuples."""
    if not _by_rowid(schema, table):
        yield from _tuple_chunks(schema.con, table, exprs, where, chunk, text)
        return
    k = len(exprs) + (1 if text is not None else 0)
    limit = schema.con.getlimit(sqlite3.SQLITE_LIMIT_LENGTH)
    rows = max(1, min(int(chunk), limit // (_HEX * k + 1)))
    sql = _packed_sql(table, exprs, text, where, rows)
    after = -(1 << 63)
    while True:
        try:
            got = schema.con.execute(sql, (after,)).fetchone()
        except sqlite3.DataError:  # the chunk's texts past SQLite's string limit
            got = None
        if got is not None and not got[2]:
            return
        flat = texts = None
        if got is not None and not got[3]:
            packed = np.frombuffer(bytes.fromhex(got[0]), dtype=">i8").reshape(-1, k)
            texts = got[4].split("\x00") if text is not None else None
            if texts is None or len(texts) == packed.shape[0]:
                flat = packed[:, :len(exprs)].astype(np.int64)
                if texts is not None:
                    for i in np.flatnonzero(packed[:, -1]).tolist():
                        texts[i] = None
                after = int(got[1])
        if flat is None:
            flat, texts, after = _tuple_chunk(schema.con, table, exprs, text, where, after, rows)
            if not flat.shape[0]:
                return
        yield flat, texts


def _tuple_chunks(con: sqlite3.Connection, table: str, exprs: list[str], where: str, chunk: int,
                  text: str | None) -> Iterator[tuple[np.ndarray, list | None]]:
    """:func:`_chunks` of a table without usable row ids: a cursor's tuples, ``chunk`` rows at a time."""
    cols = list(exprs) + ([text] if text is not None else [])
    sql = f'SELECT {", ".join(cols)} FROM "{table}"' + (f" WHERE {where}" if where else "")
    k = len(exprs)
    for got in _rows(con, sql, chunk):
        try:
            flat = np.fromiter(itertools.chain.from_iterable(r[:k] for r in got) if text is not None
                               else itertools.chain.from_iterable(got), dtype=np.int64, count=len(got) * k)
        except (ValueError, OverflowError) as e:  # the same as a rowid table's (:func:`_tuple_chunk`)
            raise ForeignValue(_text_in_numbers(table, exprs, [(None, *r) for r in got])) from e
        yield flat.reshape(-1, k), ([r[k] for r in got] if text is not None else None)


def _exprs(schema: Schema, table: str, cols: dict[str, str | None]) -> list[str]:
    """Each output column's SQL: ``coalesce(col, -1)``; -1 for None or a column the table lacks."""
    present = schema.columns(table)
    return ["-1" if col is None or (col.isidentifier() and col not in present) else f"coalesce({col}, -1)"
            for col in cols.values()]


def int_columns(schema: Schema, table: str, cols: dict[str, str | None], where: str = "",
                chunk: int = CHUNK_ROWS) -> dict[str, np.ndarray]:
    """Integer columns of ``table``: ``cols`` maps each output name to its column (an SQL expression is allowed;
    None or a column the table lacks reads as -1; NULL reads as -1).  Each chunk is decoded at once and narrowed,
    so the columns kept are int64 only where the values need it (times, serialized ids)."""
    names = list(cols)
    exprs = _exprs(schema, table, cols)
    got = _compiled_scan(schema, table, exprs, where)
    if got is not None:
        return dict(zip(names, got[0]))
    parts: dict[str, list[np.ndarray]] = {n: [] for n in names}
    for flat, _ in _chunks(schema, table, exprs, where, chunk):
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
                  chunk: int = CHUNK_ROWS, *, cut: str | None = None) -> Iterator[tuple[dict[str, np.ndarray], list]]:
    """Integer columns (as :func:`int_columns` reads them) and one text expression of the same rows, a chunk at a
    time: (int columns, the texts, None for NULL).  ``cut``: the integer column where a value > 0 is the 1-based
    character position a row's text ends before (PyTorch's autograd suffixes: the names then arrive as the few
    distinct ones they are).  One pass over the table; the texts are interned by the caller.  The chunks are the
    Python path's (:func:`_chunk_rows`) on both paths, so a caller that interns names chunk by chunk interns them in
    one order."""
    exprs = _exprs(schema, table, cols)
    got = _compiled_scan(schema, table, exprs, where, text, list(cols).index(cut) if cut is not None else -1)
    if got is not None:
        yield from _compiled_chunks(got, list(cols), _chunk_rows(schema, table, len(exprs) + 1, chunk))
        return
    for flat, texts in _chunks(schema, table, exprs, where, chunk, text=text):
        out = {}
        for j, n in enumerate(cols):
            col = flat[:, j]
            out[n] = col.astype(int_dtype(int(col.min()), int(col.max())), copy=True)
        del flat
        if cut is not None:
            ends = out[cut]
            for i in np.flatnonzero(ends > 0).tolist():
                t = texts[i]
                if t is not None:
                    texts[i] = t[:int(ends[i]) - 1]
        yield out, texts


def _chunk_rows(schema: Schema, table: str, k: int, chunk: int) -> int:
    """Rows in one of :func:`_chunks`' chunks of ``k`` packed values a row."""
    if not _by_rowid(schema, table):
        return chunk
    return max(1, min(int(chunk), schema.con.getlimit(sqlite3.SQLITE_LIMIT_LENGTH) // (_HEX * k + 1)))


#: A column's native width (bytes) -> its dtype: the widths are ``int_dtype``'s.
_WIDTH = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}


def _compiled_scan(schema: Schema, table: str, exprs: list[str], where: str, text: str | None = None,
                   cut: int = -1) -> tuple[list[np.ndarray], np.ndarray | None, list[str] | None] | None:
    """``table``'s ``exprs`` (and ``text``) as the compiled reader reads them: (the integer columns, each at
    ``int_dtype`` of its range; per row the index of its text in the distinct texts, -1 for NULL; those texts), or
    None where it is not built, the text is read leniently, or it hands the table back (then read it here).

    Its query is the one :func:`_chunks` runs chunk by chunk, as one scan in row id order (the same rows: the same
    ``_rowid_`` floor); it spends the connection's budget as the Python path's queries do."""
    con = schema.con
    if _CSQLITE is None or not isinstance(con, Guarded) or con.lenient:
        return None
    if con.copy is not None:
        target: str | bytearray = pathlib.Path(con.copy).as_uri() + "?mode=ro&immutable=1"
    elif con.image is not None:
        target = con.image
    else:
        return None
    cols = list(exprs) + ([text] if text is not None else [])
    if _by_rowid(schema, table):
        cond = "_rowid_ > (-9223372036854775807 - 1)" + (f" AND ({where})" if where else "")
        sql = f'SELECT {", ".join(cols)} FROM "{table}" WHERE {cond} ORDER BY _rowid_'
    else:
        sql = f'SELECT {", ".join(cols)} FROM "{table}"' + (f" WHERE {where}" if where else "")
    spend = con.spend if con.spend is not None else con
    ticks, got = _CSQLITE.scan(target, sql, len(exprs), text is not None, cut,
                               con.getlimit(sqlite3.SQLITE_LIMIT_LENGTH), spend.budget - spend.ticks, PROGRESS_STEP)
    spend.ticks += ticks
    if got is None:
        return None
    rows, columns, idx, strings = got
    ints = [np.frombuffer(buf, _WIDTH[w]) if rows else np.zeros(0, np.int64) for w, buf in columns]
    return ints, (np.frombuffer(idx[1], _WIDTH[idx[0]]) if idx is not None else None), strings


class Texts:
    """One chunk's texts as the compiled reader gives them: per row the index of its text in ``strings`` (-1: NULL),
    each distinct text one string (the list shared by every chunk of the scan, never changed).  Reads and writes
    like the Python path's list of texts (``texts[i]``); a replaced text (an annotation's name) is kept in
    ``replaced`` (row -> text).  A caller that interns names can intern each distinct text once
    (``reader._row_names``)."""

    __slots__ = ("idx", "replaced", "strings")

    def __init__(self, idx: np.ndarray, strings: list[str]) -> None:
        self.idx, self.strings = idx, strings
        self.replaced: dict[int, str] = {}

    def __len__(self) -> int:
        return int(self.idx.size)

    def __getitem__(self, i: int) -> str | None:
        if i in self.replaced:
            return self.replaced[i]
        k = int(self.idx[i])
        return self.strings[k] if k >= 0 else None

    def __setitem__(self, i: int, text: str) -> None:
        self.replaced[i] = text


def _compiled_chunks(got: tuple, names: list[str], rows: int) -> Iterator[tuple[dict[str, np.ndarray], Texts]]:
    """:func:`mixed_columns`' chunks of a compiled scan: views of its columns, and each chunk's :class:`Texts`."""
    ints, idx, strings = got
    if idx is None or not idx.size:
        return
    for lo in range(0, idx.size, rows):
        yield {n: col[lo:lo + rows] for n, col in zip(names, ints)}, Texts(idx[lo:lo + rows], strings)


def joined(parts: list[np.ndarray]) -> np.ndarray:
    """One column of ``parts`` in order: the array they are consecutive views of where they are (the compiled
    reader's chunks: no copy), else their concatenation."""
    if len(parts) == 1:
        return parts[0]
    base = parts[0].base
    if (isinstance(base, np.ndarray) and base.ndim == 1 and all(p.base is base and p.dtype == base.dtype for p in parts)
            and sum(p.size for p in parts) == base.size and _address(parts[0]) == _address(base)
            and all(_address(a) + a.nbytes == _address(b) for a, b in itertools.pairwise(parts))):
        return base
    return np.concatenate(parts)


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])

def string_table(schema: Schema, ids: np.ndarray, table: str, column: str, key: str = "id") -> dict[int, str]:
    """The strings of the ids asked (kernel and function names) from a table of ``(<key>, <column>)`` rows -- Nsight's
    ``StringIds``, rocmProfileData's ``rocpd_string`` (``string``), nvprof's ``StringTable`` (``_id_``): only those
    are kept."""
    want = np.unique(ids[ids >= 0]) if ids.size else ids
    if not want.size or not schema.has(table, key, column):
        return {}
    out: dict[int, str] = {}
    lo, hi = int(want[0]), int(want[-1])
    wanted = set(want.tolist())
    sql = f'SELECT {_quote(key)}, {_quote(column)} FROM {_quote(table)} WHERE {_quote(key)} BETWEEN {lo} AND {hi}'
    for rows in _rows(schema.con, sql, CHUNK_ROWS):
        for i, v in rows:
            if i in wanted:
                out[int(i)] = v if isinstance(v, str) else str(v)
    return out
