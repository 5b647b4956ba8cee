"""Where rocmProfileData traces sit in a logdir: ``<logdir>/<run>/<trace>.rpd`` (``runTracer.sh -o <trace>.rpd``).

An ``.rpd`` file is claimed by its name; an SQLite file saved under another name (``.sqlite``, ``.db``) is read when
its tables are rocmProfileData's (``rpd.tables.is_rpd``), asked after the Nsight layout, which claims such
names first.  A gzipped one (``trace.rpd.gz``, as rocmProfileData shares its own test trace) is read through a
decompressed private copy; one compressed otherwise is named with the command that restores it.  Every folder holding such files (never below a
``plugins`` folder) is a run; each file is a session of its own, named after its modification time (the database
records no wall-clock time), its host after the file.
"""

from __future__ import annotations


from tb_gpu_advisor.formats.base import DatabaseLayout


def _probe(path: str) -> tuple[str | None, bool | None]:
    """Only a database whose tables say so is one: what cannot be opened is not known to be (a file named ``.rpd`` is
    listed by its name anyway, and its read says what is wrong)."""
    from tb_gpu_advisor.formats import sqlite as tb
    from tb_gpu_advisor.formats.rpd import tables as rt

    return tb.probe_own(path, rt.is_rpd, "an SQLite database, but not a rocmProfileData trace (none of its tables)",
                        _holds_kernel)


def _holds_kernel(con, schema) -> bool | None:  # noqa: ANN001 - sqlite3.Connection, formats.sqlite.Schema
    from tb_gpu_advisor.formats.rpd import tables as rt

    if not schema.has(rt.OP, "opType_id") or not schema.has(rt.STRING, "id", rt.STRING_TEXT):
        return None
    marks = ", ".join("?" for _ in rt.KERNEL_OPS)
    row = con.execute(f'SELECT 1 FROM "{rt.OP}" WHERE opType_id IN (SELECT id FROM "{rt.STRING}" WHERE '
                      f'"{rt.STRING_TEXT}" IN ({marks})) LIMIT 1', rt.KERNEL_OPS).fetchone()
    return row is not None


LAYOUT = DatabaseLayout(kind="rpd", what="rocmProfileData trace",
                        expected="<run>/<trace>.rpd (runTracer.sh -o <trace>.rpd)", names=(".rpd",),
                        sqlite_names=(".sqlite", ".sqlite3", ".db"), probe=_probe)
stem = LAYOUT.stem
probe_file = LAYOUT.probe_file
