"""A hostile Nsight export -- a table of the right name whose values are another schema's -- read by the compiled SQLite
reader (``formats/_csqlite.c``) and by the Python one: each gives the trace, or an error naming the file, and the
report an error or a record; never a crash, never a hang (h37-damage68; issue #37: "bad input gets a clear error").

Why seeded mutations of a real file: the hostile files before (``synthetic.hostile.SQLITE_KINDS``) are what a file can
make SQLite *run* (views, triggers, virtual tables); here the tables are plain and their values are wrong -- text,
blobs, REALs past int64, NULLs, negative or huge times and ids, a column retyped -- where the readers turn rows into
numbers.  The fixture is the smallest real export kept (an A100 run of extra-p's ``ex-gpu``, 40 kB, its own tables
only); the named cases are the ones the issue names, the drawn ones (seed 68) reach the tables it holds at random.

Fail on base 225b624d: ``thread_name_id_text`` (``int('text')``: a ValueError, no file named), ``stream_id_huge``
(an int64 overflow keying the streams), ``kernel_start_text`` and ``call_name_id_blob`` (an error naming no file,
with no record), ``kernels_without_calls`` (an IndexError)."""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from tb_gpu_advisor.formats import sqlite as shared_sqlite
from tb_gpu_advisor.formats.nsys import reader
from tb_gpu_advisor.formats.nsys.tables import NsysReadError
from tb_gpu_advisor.model.damage import of_error
from tests.support.paths import FIXTURES
from tests.support.run_report import fresh_report

EXPORT = FIXTURES / "wild" / "extrap_ex_gpu_a100" / "ex-gpu.s100000.sqlite"
KERNEL, RUNTIME = "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME"
#: Values no Nsight export holds where the readers read numbers or ids (and a few it might: 0, -5).
HOSTILE = ("NULL", "'text'", "'12'", "-5", "0", str(2**63 - 1), str(-2**63), "1e300", "-1e300", "x'00ff'", "2.5")
#: name -> (table, column, value, where): the cases the issue names, always run.
NAMED = {
    "kernel_start_text": (KERNEL, "start", "'text'", ""),
    "kernel_start_negative": (KERNEL, "start", str(-2**63), "_rowid_ % 2 = 0"),
    "kernel_end_huge": (KERNEL, "end", str(2**63 - 1), ""),
    "kernel_end_before_start": (KERNEL, "end", "start - 1000", ""),
    "kernel_name_null": (KERNEL, "demangledName", "NULL", ""),
    "call_name_id_blob": (RUNTIME, "nameId", "x'00ff'", "_rowid_ % 3 = 0"),
    "call_start_real": (RUNTIME, "start", "1e300", "_rowid_ = 1"),
    "string_null": ("StringIds", "value", "NULL", ""),
    "thread_name_id_text": ("ThreadNames", "nameId", "'text'", ""),
    "stream_id_huge": (KERNEL, "streamId", str(2**63 - 1), "_rowid_ % 4 = 0"),
    "stream_id_negative": (KERNEL, "streamId", "-5", ""),
    "gpu_id_text": ("TARGET_INFO_GPU", "deviceId", "'gpu'", ""),
    "gpu_units_blob": ("TARGET_INFO_CUDA_GPU", "numMultiprocessors", "x'00ff'", ""),
}
#: Seeded draws over every table and column of the file.
DRAWS, SEED = 6, 68


def _loose(con: sqlite3.Connection, table: str, types: dict[str, str] | None = None) -> None:
    """``table`` made again without its constraints (NOT NULL, keys), its columns ``types`` where given (the same
    name, another schema's types), its rows kept: then any value can be written."""
    cols = [(r[1], r[2]) for r in con.execute(f'PRAGMA table_info("{table}")')]
    ddl = ", ".join(f'"{c}" {(types or {}).get(c, t)}' for c, t in cols)
    con.executescript(f'ALTER TABLE "{table}" RENAME TO old_; CREATE TABLE "{table}" ({ddl}); '
                      f'INSERT INTO "{table}" SELECT * FROM old_; DROP TABLE old_;')


def _mutated(tmp: Path, name: str, edit) -> Path:
    path = tmp / name / "run" / "ex-gpu.sqlite"
    path.parent.mkdir(parents=True)
    shutil.copyfile(EXPORT, path)
    con = sqlite3.connect(path)
    edit(con)
    con.commit()
    con.execute("VACUUM")
    con.close()
    return path


def _set(table: str, col: str, value: str, where: str):
    def edit(con):
        _loose(con, table)
        con.execute(f'UPDATE "{table}" SET "{col}" = {value}' + (f" WHERE {where}" if where else ""))
    return edit


def _drawn() -> dict[str, object]:
    """:data:`DRAWS` edits drawn (seed :data:`SEED`) over the file's tables: a value of :data:`HOSTILE` in a column
    (every row, or every n-th), or the table's columns retyped (TEXT, REAL, BLOB, none)."""
    con = sqlite3.connect(EXPORT)
    schema = {t: [r[1] for r in con.execute(f'PRAGMA table_info("{t}")')]
              for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")}
    con.close()
    rng = random.Random(SEED)
    out: dict[str, object] = {}
    for i in range(DRAWS):
        table = rng.choice(sorted(schema))
        if rng.random() < 0.2:
            types = {c: rng.choice(("TEXT", "REAL", "BLOB", "")) for c in schema[table]}
            out[f"draw{i}_{table}_retyped"] = lambda con, t=table, ty=types: _loose(con, t, ty)
        else:
            col, value = rng.choice(schema[table]), rng.choice(HOSTILE)
            where = rng.choice(("", f"_rowid_ % {rng.randrange(2, 5)} = 0"))
            out[f"draw{i}_{table}.{col}={value}"] = _set(table, col, value, where)
    return out


CASES = {**{k: _set(*v) for k, v in NAMED.items()},
         "kernels_without_calls": lambda con: con.execute(f'DROP TABLE "{RUNTIME}"'),
         "kernel_table_retyped": lambda con: _loose(con, KERNEL, {"start": "TEXT", "end": "REAL",
                                                                   "demangledName": "BLOB"}),
         **_drawn()}


def _read(path: Path) -> tuple[str, object]:
    """("trace", its event counts) or ("error", its words and record): what the reader gives; anything else raised
    fails the test (a crash)."""
    try:
        trace = reader.read_trace(str(path))
    except NsysReadError as e:
        assert str(path) in str(e), str(e)  # a clear error names the file
        d = of_error(e)
        return "error", (str(e), d and (d.kind, d.what))
    return "trace", (len(trace.h), [len(d) for d in trace.devices])


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_value_in_an_export_is_an_error_or_a_record_never_a_crash(tmp_path, monkeypatch, case):
    path = _mutated(tmp_path, "m", CASES[case])
    compiled = _read(path)
    monkeypatch.setattr(shared_sqlite, "_CSQLITE", None)  # the Python reader: the same answer
    assert _read(path) == compiled, case
    monkeypatch.undo()
    if compiled[0] == "error":  # the reader's error is the host's (``runtime.pipeline``), said above
        return
    report = fresh_report(path.parent.parent)
    for h in report.hosts:
        assert not (h.error or "").startswith("analysis failed"), (case, h.error)  # the analysis crashed
        assert not h.error or str(path) in h.error or h.records(), (case, h.error)


@pytest.mark.parametrize("said", ["no such table: StringIds", "no such column: gridId"])
def test_a_query_on_what_the_schema_lacks_is_an_unreadable_record(said):
    """SQLite's own "no such table/column" on a read (a reader that asked for what the file's schema lacks): the
    format's error naming the file, with an 'unreadable' record -- the file was read whole, it is no cut."""
    with pytest.raises(NsysReadError) as e, shared_sqlite.read_errors("/x/run.sqlite", NsysReadError):
        raise sqlite3.OperationalError(said)
    assert str(e.value).startswith("/x/run.sqlite: " + said)
    d = of_error(e.value)
    assert (d.kind, d.what) == ("unreadable", "sqlite_foreign_schema")
