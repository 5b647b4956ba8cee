"""Edits of an SQLite export copy by SQL statements: how the Nsight tests plant a value or a table the reader meets."""

from __future__ import annotations

import sqlite3


def run_sql(path: str, *sql: str) -> None:
    """Run each statement on the database at ``path`` and commit."""
    con = sqlite3.connect(path)
    for q in sql:
        con.execute(q)
    con.commit()
    con.close()
