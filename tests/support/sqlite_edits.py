"""Edits of an SQLite export copy by SQL statements: how the Nsight tests plant a value or a table the reader meets;
and the read-only query the tests check a real export's numbers with."""

from __future__ import annotations

import sqlite3


def run_sql(path: str, *sql: str) -> None:
    """Run each statement on the database at ``path`` and commit."""
    con = sqlite3.connect(path)
    for q in sql:
        con.execute(q)
    con.commit()
    con.close()


def query(path: str | object, sql: str) -> list[tuple]:
    """The rows of ``sql`` on the database at ``path``, opened read-only (a kept export is never written)."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def add_first_inputs(con: sqlite3.Connection, start_ns: int) -> None:
    """Plant a native program's start-up in an Nsight export built by ``synthetic.nsysexport`` (``con`` open on it):
    its module loaded (``cuModuleLoadData``, 2 ms) at ``start_ns``, then 2 blocking 4 MiB uploads
    (``cudaMemcpy``) before its loop -- the program's first inputs, uploaded once (h37-native words; h37-jaxunrec70's
    first-compute words read the same start-up)."""
    gtid, gpid = con.execute("SELECT max(r.globalTid), max(m.globalPid) FROM CUPTI_ACTIVITY_KIND_RUNTIME r, "
                             "CUPTI_ACTIVITY_KIND_MEMCPY m").fetchone()
    top = con.execute("SELECT max(id) FROM StringIds").fetchone()[0]
    con.executemany("INSERT INTO StringIds VALUES (?, ?)", [(top + 1, "cuModuleLoadData"), (top + 2, "cudaMemcpy_v3020")])
    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, 900000, ?, 0, NULL)",
                (start_ns, start_ns + 2_000_000, gtid, top + 1))
    for i in range(2):
        s = start_ns + 2_100_000 + i * 1_000_000
        con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, ?, 0, NULL)",
                    (s, s + 900_000, gtid, 900001 + i, top + 2))
        con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?, ?, 0, 1, 7, ?, ?, 4194304, 1, 0, 2)",
                    (s + 50_000, s + 850_000, 900001 + i, gpid))
