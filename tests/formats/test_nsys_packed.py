"""Issue 38: the Nsight reader's columns arrive packed (``tables._chunks``: SQLite writes each chunk's integers as one
hex string, its texts as one string) instead of as a tuple per row -- and the trace is the same, column for column,
as the row-by-row reads it replaced (``tests/support/nsys_reference.py``), on every export the repository and
``../shared`` hold, on a synthetic one with shuffled rows, and on files whose values are no integers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor.formats import sqlite as shared_sqlite
from tb_gpu_advisor.formats.nsys import reader, tables
from tb_gpu_advisor.formats.nsys.tables import NsysReadError
from tb_gpu_advisor.model.damage import of_error
from tests.support.nsys_reference import trace_differences, tuple_reads
from tests.support.paths import SHARED_PROFILES
from tests.support.sqlite_edits import run_sql

REPO = Path(__file__).resolve().parents[2]
EXPORTS = sorted(REPO.glob("tests/fixtures/**/*.sqlite")) + (
    sorted((SHARED_PROFILES / "nsys").glob("*/*.sqlite")) if (SHARED_PROFILES / "nsys").is_dir() else [])


@pytest.fixture(autouse=True)
def _python_reads(monkeypatch):
    """These tests are about the Python reference's packed reads: the compiled reader (``_csqlite.c``) is compared
    with them in ``test_nsys_compiled.py``."""
    monkeypatch.setattr(shared_sqlite, "_CSQLITE", None)


def _both(path: str):
    new = reader.read_trace(path)
    with tuple_reads():
        old = reader.read_trace(path)
    return new, old


def test_the_comparison_sees_a_changed_column(tmp_path):
    """The check the equality tests rest on: one value changed in one column is a difference."""
    p = str(tmp_path / "job.sqlite")
    write(p, NsysJob(steps=3, ops=4))
    a, b = _both(p)
    assert trace_differences(a, b) == []
    b.devices[0].start[3] += 1
    assert trace_differences(a, b) == ["trace.devices[0].start"]


@pytest.mark.same_on_both_paths  # _python_reads sets the SQLite reader itself in both runs: the rerun repeats it
@pytest.mark.parametrize("path", EXPORTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_export_reads_as_the_row_by_row_reads_did(path):
    try:
        reader.read_trace(str(path))
    except tables.NsysReadError as e:  # an export with nothing to read (a program that died at start-up): the same
        with tuple_reads(), pytest.raises(tables.NsysReadError) as old:  # error both ways
            reader.read_trace(str(path))
        assert str(old.value) == str(e)
        return
    new, old = _both(str(path))
    assert trace_differences(new, old) == []


def test_a_shuffled_export_in_small_chunks_reads_the_same_with_no_row_read_as_a_tuple(tmp_path, monkeypatch):
    """Many chunks (7 rows each), rows in no order, registered and inline NVTX names: the packed reads alone (a
    chunk read as tuples would fail here) give the reference trace."""
    p = str(tmp_path / "job.sqlite")
    write(p, NsysJob(steps=6, ops=5, shuffle=True))
    with tuple_reads():
        old = reader.read_trace(p)

    def no_tuples(*a, **k):
        raise AssertionError("a chunk was read as tuples")

    monkeypatch.setattr(shared_sqlite, "_tuple_chunk", no_tuples)
    monkeypatch.setattr(shared_sqlite, "_tuple_chunks", no_tuples)
    monkeypatch.setattr(shared_sqlite.int_columns, "__defaults__", ("", 7))
    monkeypatch.setattr(shared_sqlite.mixed_columns, "__defaults__", ("", 7))
    assert trace_differences(reader.read_trace(p), old) == []


@pytest.mark.parametrize("edit, as_tuples", [
    # a REAL time: truncated, as numpy truncates it
    ("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = start + 0.5 WHERE rowid = 3", 1),
    # a name with a NUL inside: the chunk is read as tuples
    (("UPDATE NVTX_EVENTS SET text = 'aten::mm' || char(0) || 'x' WHERE rowid = (SELECT min(rowid) FROM NVTX_EVENTS "
      "WHERE text IS NOT NULL)"), 1),
    # a BLOB where a name is: read as its text (on main: a TypeError in frameworks.nvtx)
    (("UPDATE NVTX_EVENTS SET text = x'6174656e3a3a6d6d' WHERE rowid = (SELECT max(rowid) FROM NVTX_EVENTS "
      "WHERE text IS NOT NULL AND eventType IN (59, 60) AND end IS NOT NULL)"), 0),
])
def test_values_that_are_no_integers_read_as_the_row_by_row_reads_did(tmp_path, monkeypatch, edit, as_tuples):
    """The chunk holding a value that is no integer (or a text with a NUL) is read as tuples; every other chunk
    packed."""
    p = str(tmp_path / "job.sqlite")
    write(p, NsysJob(steps=3, ops=4))
    run_sql(p, edit)
    chunks = []
    real = shared_sqlite._tuple_chunk
    monkeypatch.setattr(shared_sqlite, "_tuple_chunk", lambda *a: chunks.append(a[1]) or real(*a))
    new, old = _both(p)
    assert trace_differences(new, old) == []
    assert len(chunks) == as_tuples


def test_a_text_where_an_integer_is_fails_as_the_row_by_row_reads_did(tmp_path):
    p = str(tmp_path / "job.sqlite")
    write(p, NsysJob(steps=3, ops=4))
    run_sql(p, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = 'abc' WHERE rowid = 5")
    with pytest.raises(ValueError) as new:
        reader.read_trace(p)
    with tuple_reads(), pytest.raises(ValueError):
        reader.read_trace(p)
    # both fail; the packed read as the reader's own error naming the file, with its record (h37-damage68: a bare
    # ValueError before, as the reference read still raises)
    assert isinstance(new.value, NsysReadError) and p in str(new.value), str(new.value)
    assert of_error(new.value).what == "sqlite_foreign_value"
    # the packed read says where (h37-meta57): the table, the column and the value; the reference read does not
    assert "CUPTI_ACTIVITY_KIND_RUNTIME" in str(new.value) and "correlationId" in str(new.value) and "'abc'" in str(
        new.value), str(new.value)


def test_a_table_without_row_ids_is_read_row_by_row(tmp_path):
    """``WITHOUT ROWID`` (or a column called ``rowid``): no row id ranges; the rows are read as a cursor gives them."""
    p = str(tmp_path / "job.sqlite")
    write(p, NsysJob(steps=3, ops=4))
    run_sql(p, "ALTER TABLE CUPTI_ACTIVITY_KIND_MEMCPY ADD COLUMN rowid INTEGER")
    new, old = _both(p)
    assert trace_differences(new, old) == []
    assert any(np.asarray(d.mem_bytes).max() > 0 for d in new.devices)


def test_tables_read_beside_each_other_give_the_same_trace(tmp_path, monkeypatch):
    """An export read from a private copy (here: every export) has its runtime and device tables read in threads,
    each on its own connection; the trace is the row-by-row one."""
    p = str(tmp_path / "job.sqlite")
    write(p, NsysJob(steps=6, ops=5, ranks=2))
    monkeypatch.setattr(shared_sqlite, "DESERIALIZE_MAX_BYTES", 0)
    opened = []
    real_run = shared_sqlite.Beside._run
    monkeypatch.setattr(shared_sqlite.Beside, "_run", lambda self, job: opened.append(job) or real_run(self, job))
    new, old = _both(p)
    assert trace_differences(new, old) == []
    assert len(opened) == 4  # two jobs a read, both reads


def test_threads_beside_spend_one_budget(tmp_path, monkeypatch):
    """The sibling connections spend the first one's budget: 90% of the steps the whole read takes on one
    connection, a budget no connection alone would exhaust, still stops the read, with the budget's error."""
    p = str(tmp_path / "job.sqlite")
    write(p, NsysJob(steps=40, ops=20))
    monkeypatch.setattr(shared_sqlite, "DESERIALIZE_MAX_BYTES", 0)
    monkeypatch.setattr(shared_sqlite, "PROGRESS_STEP", 100)
    spent = []
    real_close = shared_sqlite.Guarded.close

    def close(con):
        spent.append(con.ticks)
        return real_close(con)

    monkeypatch.setattr(shared_sqlite.Guarded, "close", close)
    monkeypatch.setattr(shared_sqlite, "BESIDE_THREADS", 0)
    reader.read_trace(p)  # one connection: every step counted on it
    alone = spent[-1]
    monkeypatch.setattr(shared_sqlite, "BESIDE_THREADS", 2)
    monkeypatch.setattr(shared_sqlite, "BASE_STEPS", alone * 100 * 9 // 10)
    monkeypatch.setattr(shared_sqlite, "STEPS_PER_BYTE", 0)
    with pytest.raises(reader.NsysReadError, match="budget of"):
        reader.read_trace(p)
