"""The compiled Nsight column reader reads what the Python reader reads, and fails where and as it fails (issue #38:
the C twin of ``shared_sqlite.int_columns`` / ``shared_sqlite.mixed_columns``).

Why: ``formats/_csqlite.c`` steps the reader's queries through SQLite's C API into native columns instead of
Python's ``sqlite3`` module, and the exports it reads are files someone else wrote: every column (values, dtype,
order), every interned name, and every error on a damaged file must be the Python path's.  Both paths run in this
process (``formats.sqlite._CSQLITE`` set to the module or to None), on every export of tests/, demo_logs/ and
../shared/profiles, on generated ones, on edited ones whose values are no integers or no UTF-8, and on truncated and
bit-flipped copies; each export is read both in memory (a small file) and from a private copy with its tables read
beside each other in threads (a large one).  ``make test`` runs this file again with ``TB_GPU_ADVISOR_PURE_PYTHON=1``.
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from synthetic.nsysexport import NsysJob, write, write_dlprof_forward, write_window
from tb_gpu_advisor.formats import sqlite as shared_sqlite
from tb_gpu_advisor.formats import sqlite_compiled
from tb_gpu_advisor.formats.nsys import compiled, reader, tables
from tb_gpu_advisor.model import enclosing
from tests.support.compiled import built, check_built_where_required, forced_pure_description, needs, version_text
from tests.support.nsys_reference import innermost_range, trace_differences
from tests.support.paths import DEMO_LOGS, REPO, SHARED_PROFILES, TESTS
from tests.support.sqlite_edits import run_sql

_csqlite = built("tb_gpu_advisor.formats._csqlite")
needs_compiled = needs(_csqlite, "Nsight Systems column reader")
EXPORTS = sorted({p for root in (TESTS, DEMO_LOGS, SHARED_PROFILES) if root.is_dir()
                  for p in root.rglob("*.sqlite")})
SOURCE = REPO / "tb_gpu_advisor" / "formats" / "_csqlite.c"


class _Spy:
    """The compiled module with its scans counted: ``read`` tables it read, ``handed_back`` tables it handed back."""

    def __init__(self, module) -> None:
        self.module, self.read, self.handed_back = module, 0, 0

    def scan(self, *args):
        ticks, got = self.module.scan(*args)
        if got is None:
            self.handed_back += 1
        else:
            self.read += 1
        return ticks, got


def _read(path: str, module, monkeypatch) -> object:
    """The export's columns (``reader._read_file``) through ``module`` (None: the Python path), or its error."""
    monkeypatch.setattr(shared_sqlite, "_CSQLITE", module)
    try:
        return reader._read_file(path, 0)
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return type(e), str(e)
    finally:
        monkeypatch.setattr(shared_sqlite, "_CSQLITE", _csqlite)


def _both(path: str, monkeypatch, copy: bool = False) -> tuple[object, object, _Spy]:
    """(compiled, Python, the compiled module's counts); ``copy``: read from a private copy, tables in threads."""
    if copy:
        monkeypatch.setattr(shared_sqlite, "DESERIALIZE_MAX_BYTES", 0)
    spy = _Spy(_csqlite)
    return _read(path, spy, monkeypatch), _read(path, None, monkeypatch), spy


def _differences(a: object, b: object) -> list:
    if isinstance(a, tuple) or isinstance(b, tuple):
        return [] if a == b else [a, b]
    return trace_differences(a, b, "raw")


def test_the_compiled_reader_is_built_where_required():
    """CI (``.ci/run`` sets TB_GPU_ADVISOR_REQUIRE_COMPILED) must test the compiled path, never skip it."""
    check_built_where_required(_csqlite, compiled, shared_sqlite._CSQLITE)


@pytest.mark.same_on_both_paths
def test_version_names_the_nsys_reader():
    assert ("Nsight Systems reader: compiled (C)" if _csqlite else "Nsight Systems reader: pure Python") in version_text()
    assert forced_pure_description("nsys") == "Nsight Systems reader: pure Python (TB_GPU_ADVISOR_PURE_PYTHON is set)"


def test_a_built_reader_without_an_sqlite_library_is_named_as_such(monkeypatch):
    """The extension finds SQLite when imported; where it cannot, ``--version`` says that, not 'no C compiler'."""
    def no_library(name, *a, **k):
        raise ImportError("no SQLite library found (neither _sqlite3's nor libsqlite3.so.0)")

    monkeypatch.delenv(compiled.PURE_PYTHON_ENV, raising=False)
    monkeypatch.setattr(sqlite_compiled.importlib, "import_module", no_library)
    assert compiled.describe() == ("Nsight Systems reader: pure Python (the compiled extension is built but cannot "
                                   "run: no SQLite library found (neither _sqlite3's nor libsqlite3.so.0))")


@pytest.mark.same_on_both_paths
def test_the_source_needs_no_sqlite_header():
    """CI and users may lack ``sqlite3.h`` and the ``libsqlite3.so`` link: the preprocessor's list of the headers
    the source pulls in holds no SQLite header."""
    cc = shutil.which(sysconfig.get_config_var("CC").split()[0] if sysconfig.get_config_var("CC") else "cc")
    if cc is None:
        pytest.skip("no C compiler")
    if subprocess.run([cc, "-E", "-x", "c", "-"], input="int x;\n", capture_output=True, text=True).returncode:
        pytest.skip(f"{cc} does not run: no working C compiler")  # the source's own failure is then no evidence
    deps = subprocess.run([cc, "-M", f"-I{sysconfig.get_paths()['include']}", str(SOURCE)], capture_output=True,
                          text=True, check=True).stdout
    assert "Python.h" in deps
    assert "sqlite" not in deps.replace(str(SOURCE), "").replace("_csqlite", "")


@pytest.mark.same_on_both_paths
@needs_compiled
def test_the_built_module_links_no_sqlite_library():
    """It finds SQLite at import (dlopen); a ``NEEDED libsqlite3`` would make it fail to load without one."""
    readelf = shutil.which("readelf")
    if readelf is None or sys.platform != "linux":
        pytest.skip("readelf (Linux) needed")
    needed = subprocess.run([readelf, "-d", _csqlite.__file__], capture_output=True, text=True, check=True).stdout
    assert "sqlite" not in needed.lower()
    assert _csqlite.library()[1] == sqlite3.sqlite_version  # the library Python's own sqlite3 runs


@needs_compiled
@pytest.mark.parametrize("copy", [False, True], ids=["in_memory", "private_copy"])
@pytest.mark.parametrize("path", EXPORTS, ids=lambda p: os.path.relpath(p, REPO.parent))
def test_every_export_reads_alike(path, copy, monkeypatch):
    """Every export of tests/, demo_logs/ and ../shared/profiles: the same columns (values, dtypes, order), names,
    threads, GPUs and notes; where an export has nothing to read, the same error."""
    c, p, spy = _both(str(path), monkeypatch, copy)
    assert _differences(c, p) == []
    assert spy.handed_back == 0
    if not isinstance(p, tuple) and p.h_start.size + p.d_start.size:  # the compiled reader read its tables
        assert spy.read > 0


def _generated(tmp_path: Path) -> list[str]:
    out = []
    for name, job in (("shuffled", NsysJob(steps=6, ops=5, shuffle=True, ranks=2)), ("plain", NsysJob(steps=4)),
                      ("osrt", NsysJob(steps=5, ops=4, ranks=2, os_call="getc", os_call_ms=3.0))):
        p = str(tmp_path / f"{name}.sqlite")
        write(p, job)
        out.append(p)
    p = str(tmp_path / "dlprof.sqlite")
    write_dlprof_forward(p)
    out.append(p)
    for window in ("startup", "nvtx_only", "tracing_off"):
        p = str(tmp_path / f"window_{window}.sqlite")
        write_window(p, window)
        out.append(p)
    return out


@needs_compiled
@pytest.mark.parametrize("copy", [False, True], ids=["in_memory", "private_copy"])
def test_generated_exports_read_alike(tmp_path, copy, monkeypatch):
    """Shuffled rows over two ranks, registered and inline NVTX names, PyProf/DLProf annotations, empty windows."""
    for p in _generated(tmp_path):
        c, py, spy = _both(p, monkeypatch, copy)
        assert _differences(c, py) == [], p
        assert isinstance(py, tuple) or spy.read > 0


@needs_compiled
@pytest.mark.parametrize("copy", [False, True], ids=["in_memory", "private_copy"])
def test_os_runtime_calls_read_alike(copy, monkeypatch):
    """``OSRT_API`` (``-t osrt``): the four columns read (start, end, thread, name) and the names interned are the
    same through both readers, on a real export holding 12,492 calls (Mordred's hash join: ``getc``, ``poll`` ...)."""
    path = REPO / "tests" / "fixtures" / "wild" / "mordred_rtx6000_hashjoin" / "report1.sqlite"
    c, p, _ = _both(str(path), monkeypatch, copy)
    assert p.os_start.size == 12_492 and "getc" in p.os_names
    for col in ("os_start", "os_end", "os_tid", "os_name"):
        a, b = getattr(c, col), getattr(p, col)
        assert a.dtype == b.dtype and np.array_equal(a, b), col
    assert c.os_names == p.os_names


@needs_compiled
def test_the_trace_is_the_same_in_many_small_chunks(tmp_path, monkeypatch):
    """Chunk boundaries order the NVTX names interned (each chunk's texts, then its registered names): with 7-row
    chunks, many of them, the whole trace is the Python path's, name indices included."""
    p = str(tmp_path / "job.sqlite")
    write(p, NsysJob(steps=6, ops=5, shuffle=True))
    monkeypatch.setattr(shared_sqlite.mixed_columns, "__defaults__", ("", 7))
    monkeypatch.setattr(shared_sqlite, "_CSQLITE", None)
    old = reader.read_trace(p)
    spy = _Spy(_csqlite)
    monkeypatch.setattr(shared_sqlite, "_CSQLITE", spy)
    assert trace_differences(reader.read_trace(p), old) == []
    assert spy.read > 0


_FIRST_TEXT = "(SELECT min(rowid) FROM NVTX_EVENTS WHERE text IS NOT NULL)"
_LAST_RANGE = ("(SELECT max(rowid) FROM NVTX_EVENTS WHERE text IS NOT NULL AND eventType IN (59, 60) AND end IS NOT "
               "NULL)")
#: Edits after which a value the reader reads is no integer, or a text no UTF-8: the compiled reader hands the table
#: back (1) and the Python path decides; or it reads the value itself (0).
EDITS = [
    ("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = start + 0.5 WHERE rowid = 3", 1),  # REAL: numpy truncates it
    ("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = 'abc' WHERE rowid = 5", 1),  # TEXT: the Python error
    ("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET streamId = x'01' WHERE rowid = 2", 1),  # BLOB
    ("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = NULL WHERE rowid = 4", 0),  # NULL: -1, as in Python
    (f"UPDATE NVTX_EVENTS SET text = x'61ff62' WHERE rowid = {_FIRST_TEXT}", 1),  # no UTF-8: read leniently
    (f"UPDATE NVTX_EVENTS SET text = x'eda080' WHERE rowid = {_FIRST_TEXT}", 1),  # an encoded surrogate: no UTF-8
    (f"UPDATE NVTX_EVENTS SET text = 'aten::mm' || char(0) || 'x' WHERE rowid = {_FIRST_TEXT}", 0),  # NUL: kept
    ("UPDATE NVTX_EVENTS SET text = 'äß€😀::mm, seq = 3, op_id = 9' WHERE text LIKE 'aten::%'", 0),  # cut by character
    (f"UPDATE NVTX_EVENTS SET text = x'6174656e3a3a6d6d' WHERE rowid = {_LAST_RANGE}", 0),  # a BLOB name, as text
    # one column through every width, widened in place mid-scan
    ("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET streamId = CASE WHEN rowid < 5 THEN rowid WHEN rowid < 9 THEN 300 "
     + "WHEN rowid < 13 THEN -70000 ELSE 1 << 40 END", 0),
    ("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = -9223372036854775807 - 1 WHERE rowid = 7", 0),  # int64 floor
    ("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = -(1 << 63) WHERE rowid = 7", 1),  # overflowed: a REAL
]


@needs_compiled
@pytest.mark.parametrize("copy", [False, True], ids=["in_memory", "private_copy"])
@pytest.mark.parametrize("edit, handed_back", EDITS, ids=[str(i) for i in range(len(EDITS))])
def test_values_of_other_types_read_or_fail_as_the_python_path_does(tmp_path, monkeypatch, edit, handed_back, copy):
    p = str(tmp_path / "job.sqlite")
    write(p, NsysJob(steps=3, ops=4, ranks=2))
    run_sql(p, edit)
    c, py, spy = _both(p, monkeypatch, copy)
    assert _differences(c, py) == []
    assert (spy.handed_back > 0) == bool(handed_back)


@needs_compiled
def test_a_table_without_row_ids_reads_alike(tmp_path, monkeypatch):
    """A column called ``rowid``: no row id order to ask for; the rows come as a plain scan gives them, both ways."""
    p = str(tmp_path / "job.sqlite")
    write(p, NsysJob(steps=3, ops=4))
    run_sql(p, "ALTER TABLE CUPTI_ACTIVITY_KIND_MEMCPY ADD COLUMN rowid INTEGER",
          "ALTER TABLE NVTX_EVENTS ADD COLUMN oid INTEGER")
    c, py, spy = _both(p, monkeypatch)
    assert _differences(c, py) == [] and spy.read > 0


def _damaged(seed_file: str, rng: random.Random, out: str) -> str:
    """A copy with bytes flipped, a page overwritten, or the tail cut (``scripts/robustness_sqlite.fuzzed``'s kinds)."""
    data = bytearray(Path(seed_file).read_bytes())
    how = rng.choice(["flip", "page", "cut"])
    if how == "flip":
        for _ in range(rng.randint(1, 16)):
            data[rng.randrange(100, len(data))] = rng.randrange(256)
    elif how == "page":
        page = int.from_bytes(data[16:18], "big") or 65536
        k = rng.randrange(1, len(data) // page)
        data[k * page:(k + 1) * page] = bytes(rng.randrange(256) for _ in range(page))
    else:
        del data[rng.randrange(100, len(data)):]
    Path(out).write_bytes(bytes(data))
    return out


@needs_compiled
@pytest.mark.parametrize("seed", range(24))
def test_damaged_exports_fail_or_read_alike(tmp_path, monkeypatch, seed):
    """Truncated, bit-flipped and overwritten pages: the same columns or the same error (class and message), read in
    memory and from a private copy in threads."""
    base = str(tmp_path / "job.sqlite")
    write(base, NsysJob(steps=8, ops=4, ranks=2, shuffle=True))
    p = _damaged(base, random.Random(seed), str(tmp_path / "damaged.sqlite"))
    for copy in (False, True):
        c, py, _ = _both(p, monkeypatch, copy)
        assert _differences(c, py) == [], (seed, copy)


@needs_compiled
@pytest.mark.parametrize("copy", [False, True], ids=["in_memory", "private_copy"])
def test_a_spent_budget_stops_both_paths_alike(tmp_path, monkeypatch, copy):
    """A scan past the connection's VM-step budget is handed back, its steps spent, and the Python path then stops
    with the budget's error."""
    p = str(tmp_path / "job.sqlite")
    write(p, NsysJob(steps=3, ops=4))
    if copy:
        monkeypatch.setattr(shared_sqlite, "DESERIALIZE_MAX_BYTES", 0)
    monkeypatch.setattr(shared_sqlite, "PROGRESS_STEP", 50)  # a look at the budget every 50 steps: a small table spends some
    errors = []
    for module in (_Spy(_csqlite), None):
        monkeypatch.setattr(shared_sqlite, "_CSQLITE", module)
        with pytest.raises(shared_sqlite.QueryBudgetExceeded) as e, shared_sqlite.open_db(p) as con:
            schema = tables.Schema(con)
            schema.columns(tables.KERNEL)  # asked before the budget is spent, as the row id check below
            monkeypatch.setattr(shared_sqlite, "_by_rowid", lambda *a: True)
            con.ticks = con.budget - 1  # one progress call left: not enough for the kernel table
            shared_sqlite.int_columns(schema, tables.KERNEL, {"start": "start", "end": "end"})
        errors.append(str(e.value))
        if module is not None:
            assert module.handed_back == 1 and con.ticks > con.budget
    assert errors[0] == errors[1]


@needs_compiled
def test_the_scan_writes_each_column_at_its_narrowest_width(tmp_path):
    """The widths the buffers end at are ``int_dtype``'s of each column's range, as the Python path narrows them."""
    p = str(tmp_path / "w.sqlite")
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE t (a INTEGER, b INTEGER, c INTEGER, d INTEGER, e TEXT)")
    rows = [(1, 1, 1, 1, "x"), (-128, 300, -70_000, 1 << 40, None), (127, -32768, 2**31 - 1, -(1 << 63), "x")]
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
    con.commit()
    con.close()
    uri = Path(p).as_uri() + "?mode=ro&immutable=1"
    _, got = _csqlite.scan(uri, "SELECT a, b, c, d, e FROM t ORDER BY rowid", 4, True, -1, 1 << 20, 10**6, 1000)
    n, cols, idx, strings = got
    assert n == 3 and [w for w, _ in cols] == [1, 2, 4, 8] and strings == ["x"]
    for j, (w, buf) in enumerate(cols):
        assert np.frombuffer(buf, f"i{w}").tolist() == [r[j] for r in rows]
    assert np.frombuffer(idx[1], f"i{idx[0]}").tolist() == [0, -1, 0]


@pytest.mark.parametrize("seed", range(6))
def test_the_innermost_range_is_the_binary_search_one(seed, monkeypatch):
    """The launch's innermost NVTX range, found by counting and moving only the pointers still jumping, is the one
    the binary search per launch and whole-array jumps found (``nsys_reference.innermost_range``), on random nested
    ranges over several threads with ties in start (same ns, different ps), zero-length ranges and launches at
    range edges."""
    rng = np.random.default_rng(seed)
    n = 4000
    line = np.sort(rng.integers(0, 4, n)).astype(np.int16)
    start = np.concatenate([np.sort(rng.integers(0, 50, k)) * 1000 + rng.integers(0, 3, k) for k in
                            np.bincount(line, minlength=4)])
    dur = rng.choice([0, 1000, 5000, 20_000, 200_000], n) + rng.integers(0, 2000, n)
    order = np.lexsort((-dur, start, line))
    start, end, line = start[order], (start + dur)[order], line[order]
    h = SimpleNamespace(start=start.astype(np.int64), end=end.astype(np.int64), line=line)
    is_range = rng.random(n) < 0.6
    launch = np.where(rng.random(3000) < 0.9, rng.integers(0, n, 3000), -1)
    launch[::7] = np.flatnonzero(~is_range)[: launch[::7].size] if (~is_range).any() else -1
    monkeypatch.setattr(enclosing._run_ends, "__defaults__", (7 if seed % 2 else 1 << 20,))  # blocks of runs
    want = innermost_range(h, is_range, launch)
    assert (want >= 0).sum() > 100  # the case is not vacuous: most launches lie in a range
    assert np.array_equal(enclosing.innermost_range(h, is_range, launch), want)  # the one home, nsys's and rpd's


@pytest.mark.parametrize("spread", [1, 1 << 20], ids=["dense", "sparse"])
def test_correlation_ranks_are_the_sorted_ones(spread):
    """Host keys' ranks among the sorted distinct keys, and device keys looked up among them (-1 where absent), as
    sorting and a binary search give them -- by the table over the ids' span (dense ids) and by the search (ids
    spread past it); keys of several files and processes, repeated keys, keys no host holds."""
    rng = np.random.default_rng(spread & 0xFFFF)
    pid = rng.choice([7, 300, 1 << 20], 5000).astype(np.int64)
    fidx = rng.choice([0, 1], 5000).astype(np.int64)
    corr = rng.integers(0, 4000, 5000) * spread
    host = np.where(rng.random(5000) < 0.1, -1, reader._corr_key(pid, corr, 0) | (fidx << 56))
    dev = np.concatenate([host[::3], host[:50] + 1, np.array([-1, 1 << 40])])
    ok = host >= 0
    ids = np.unique(host[ok])
    want = np.full(host.shape, -1)
    want[ok] = np.searchsorted(ids, host[ok])
    index, dense = reader._dense_corr(host)
    assert (index.rank is not None) == (spread == 1)
    assert np.array_equal(dense, want)
    j = np.clip(np.searchsorted(ids, dev), 0, ids.size - 1)
    assert np.array_equal(reader._lookup_corr(index, dev), np.where((dev >= 0) & (ids[j] == dev), j, -1))
