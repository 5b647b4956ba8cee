"""A generated SQLite capture opened for writing: the generators' one way to open one.

A generated file is scratch (a test's temporary folder, a benchmark's corpus): nothing is lost if the machine stops
mid-write, so SQLite is told not to wait for the disk (``synchronous=OFF``) and to keep its rollback journal in memory.
The file written is the same, byte for byte; only the waits go: each ``CREATE TABLE`` of a schema script is a commit of
its own, and on a busy disk an export's ~20 tables took 0.4 s of fsyncs (0.04 s without).
"""

from __future__ import annotations

import sqlite3


def connect(path: str) -> sqlite3.Connection:
    """A connection to the SQLite file at ``path`` (made if absent) that writes without syncing to the disk."""
    con = sqlite3.connect(path)
    con.execute("PRAGMA synchronous=OFF")
    con.execute("PRAGMA journal_mode=MEMORY")
    return con
