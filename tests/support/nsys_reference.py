"""The Nsight reader's row-by-row column reads as they were before issue 38 (a cursor's tuples, ``fetchmany``,
``np.fromiter``): the reference the packed reads (``formats.nsys.tables``) are compared with, column for column.
Use :func:`tuple_reads` to read an export through them.  Where the reader's way of building a column could share a
bug with its reference, the reference builds it another way (:func:`int_columns` narrows each column once, over all
its rows)."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import operator
import sqlite3
from collections.abc import Iterator

import numpy as np

from tb_gpu_advisor.formats import sqlite
from tb_gpu_advisor.formats.nsys.tables import Schema
from tb_gpu_advisor.formats.sqlite import CHUNK_ROWS
from tb_gpu_advisor.model.columns import int_dtype, narrowest


@contextlib.contextmanager
def tuple_reads() -> Iterator[None]:
    """Within: ``sqlite.int_columns`` and ``sqlite.mixed_columns`` are the reference reads below."""
    saved = sqlite.int_columns, sqlite.mixed_columns
    sqlite.int_columns, sqlite.mixed_columns = int_columns, mixed_columns
    try:
        yield
    finally:
        sqlite.int_columns, sqlite.mixed_columns = saved


def _rows(con: sqlite3.Connection, sql: str, chunk: int) -> Iterator[list[tuple]]:
    """The query's rows, ``chunk`` at a time, as the cursor hands them out."""
    cur = con.execute(sql)
    try:
        yield from iter(lambda: cur.fetchmany(chunk), [])
    finally:
        # a read given up part-way is closed by the collector, maybe after its connection: nothing left to close then
        with contextlib.suppress(sqlite3.ProgrammingError):
            cur.close()


def int_columns(schema: Schema, table: str, cols: dict[str, str | None], where: str = "",
                chunk: int = CHUNK_ROWS) -> dict[str, np.ndarray]:
    """Integer columns of ``table``: ``cols`` maps each output name to its column (an SQL expression is allowed;
    None or a column the table lacks reads as -1; NULL reads as -1), each in the narrowest dtype its values fit.

    Why it narrows differently from ``sqlite.int_columns``: the packed read narrows chunk by chunk and joins the
    chunks at their widest dtype; this one keeps every row at int64 and narrows each column once, over all its rows.
    Both must give the same dtype (the narrowest signed one holding the column's range), and a reference that
    copied the reader's joining would share any bug in it."""
    exprs = ["-1" if col is None or (col.isidentifier() and col not in schema.columns(table)) else
             f"coalesce({col}, -1)" for col in cols.values()]
    sql = f'SELECT {", ".join(exprs)} FROM "{table}"' + (f" WHERE {where}" if where else "")
    k = len(cols)
    chunks = [np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int64, count=len(rows) * k).reshape(-1, k)
              for rows in _rows(schema.con, sql, chunk)]
    flat = np.concatenate(chunks) if chunks else np.zeros((0, k), np.int64)
    return {n: narrowest(flat[:, j].copy()) for j, n in enumerate(cols)}


def mixed_columns(schema: Schema, table: str, cols: dict[str, str | None], text: str, where: str = "",
                  chunk: int = CHUNK_ROWS, *, cut: str | None = None) -> Iterator[tuple[dict[str, np.ndarray], list]]:
    """Integer columns (as :func:`int_columns` reads them) and one text expression of the same rows, a chunk at a
    time: (int64 columns, the texts), each text cut before the 1-based position in column ``cut`` where that is > 0.
    One pass over the table; the texts are interned by the caller."""
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
        texts = list(map(last, rows))
        if cut is not None:
            for i in np.flatnonzero(out[cut] > 0).tolist():
                if texts[i] is not None:
                    texts[i] = texts[i][:int(out[cut][i]) - 1]
        yield out, texts


def trace_differences(a: object, b: object, path: str = "trace") -> list[str]:
    """Where two traces differ, field by field (arrays: dtype, shape and values; everything else: ``==``)."""
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        if type(a) is not type(b):
            return [path]
        return [d for f in dataclasses.fields(a) for d in trace_differences(getattr(a, f.name), getattr(b, f.name),
                                                                           f"{path}.{f.name}")]
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        x, y = np.asarray(a), np.asarray(b)
        return [] if x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y) else [path]
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return [path]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in trace_differences(x, y, f"{path}[{i}]")]
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [path]
        return [d for k in a for d in trace_differences(a[k], b[k], f"{path}[{k!r}]")]
    return [] if a == b else [path]


def innermost_range(h, is_range: np.ndarray, launch: np.ndarray) -> np.ndarray:
    """``model.enclosing.innermost_range`` (the Nsight reader's, then) as it was before issue 38's compiled reader (a binary search per launch, the
    pointer jumps over whole arrays): the reference the count-based one is compared with."""
    out = np.full(launch.shape, -1, np.int64)
    ridx = np.flatnonzero(is_range)
    if not ridx.size or not (launch >= 0).any():
        return out
    span = int((h.end.max() // 1000) + 2)
    rkey = h.line[ridx].astype(np.int64) * span + h.start[ridx] // 1000
    rs, re_ = h.start[ridx], h.end[ridx]
    parent = np.arange(ridx.size, dtype=np.int64) - 1
    parent[1:][h.line[ridx][1:] != h.line[ridx][:-1]] = -1
    parent[0] = -1
    for _ in range(64):
        p = np.maximum(parent, 0)
        bad = (parent >= 0) & (re_[p] <= rs)
        if not bad.any():
            break
        parent[bad] = parent[p[bad]]
    q = np.flatnonzero(launch >= 0)
    li = launch[q]
    t = h.start[li]
    qkey = h.line[li].astype(np.int64) * span + t // 1000
    cand = np.searchsorted(rkey, qkey, side="right") - 1
    cand[(cand >= 0) & (h.line[ridx][np.maximum(cand, 0)] != h.line[li])] = -1
    for _ in range(64):
        c = np.maximum(cand, 0)
        bad = (cand >= 0) & ((re_[c] <= t) | (rs[c] > t))
        if not bad.any():
            break
        cand[bad] = parent[c[bad]]
    out[q] = np.where(cand >= 0, ridx[np.maximum(cand, 0)], -1)
    return out
