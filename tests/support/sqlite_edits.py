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
