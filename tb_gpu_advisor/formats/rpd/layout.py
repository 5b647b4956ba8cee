"""Where rocmProfileData traces sit in a logdir: ``<logdir>/<run>/<trace>.rpd`` (``runTracer.sh -o <trace>.rpd``).

An ``.rpd`` file is claimed by its name; an SQLite file saved under another name (``.sqlite``, ``.db``) is read when
its tables are rocmProfileData's (``rpd.tables.is_rpd``), asked after the Nsight layout, which claims such
names first.  A gzipped one (``trace.rpd.gz``, as rocmProfileData shares its own test trace) is read through a
decompressed private copy; one compressed otherwise is named with the command that restores it.  Every folder holding such files (never below a
``plugins`` folder) is a run; each file is a session of its own, named after its modification time (the database
records no wall-clock time), its host after the file.
"""

from __future__ import annotations


from tb_gpu_advisor.formats.base import ByIdentity, Found, Groups, RunFolderLayout, max_profile_bytes, sniffed

SUFFIX = ".rpd"
#: A gzipped database (rocmProfileData shares its own test trace so): read through a decompressed private copy.
GZ_SUFFIX = SUFFIX + ".gz"
#: Other names the database may be saved under (its tables decide).
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
EXPECTED = "<run>/<trace>.rpd (runTracer.sh -o <trace>.rpd)"
#: How a shared database is often compressed, and the command that gives the file back beside itself.
COMPRESSED = {".gz": "gunzip -k", ".xz": "xz -dk", ".bz2": "bunzip2 -k", ".zst": "zstd -d"}


def stem(file_name: str) -> str:
    for suffix in (GZ_SUFFIX, SUFFIX, *SQLITE_SUFFIXES):
        if file_name.endswith(suffix) and len(file_name) > len(suffix):
            return file_name[: -len(suffix)]
    return file_name


def compressed(file_name: str) -> str | None:
    """Why a compressed ``.rpd`` is left out, with the command that restores it; None for any other name (a gzipped
    one is read: :data:`GZ_SUFFIX`)."""
    for suffix, command in COMPRESSED.items():
        if suffix == ".gz":
            continue
        inner = file_name[: -len(suffix)] if file_name.endswith(suffix) else ""
        if inner.endswith(SUFFIX) and len(inner) > len(SUFFIX):
            return (f"a compressed rocmProfileData trace, read once decompressed, since SQLite reads a database in "
                    f"place: {command} {file_name}")
    return None


_probed: ByIdentity[tuple[str | None, bool | None]] = ByIdentity()


def probe_file(path: str, size: int = 0, mtime_ns: int = 0) -> tuple[str | None, bool | None]:
    """(None when ``path`` is a rocmProfileData database, else why not; whether it holds a kernel).  Only a database
    whose tables say so is one: what cannot be opened is not known to be (a file named ``.rpd`` is listed by its name
    anyway, and its read says what is wrong).  Cached by identity."""
    return _probed.answer((path, size, mtime_ns),  # over the limit: its read says so
                          lambda: (None, None) if size > max_profile_bytes() else _probe(path))


def _probe(path: str) -> tuple[str | None, bool | None]:
    import sqlite3

    from tb_gpu_advisor.formats import sqlite as tb
    from tb_gpu_advisor.formats.rpd import tables as rt

    if not tb.is_sqlite(path):
        return "not an SQLite file", None
    if tb.cut_short(path) is not None:  # an .rpd is listed by its name, to fail as damaged; another name is not ours
        return "an SQLite file cut short", None
    try:
        with tb.open_db(path, lenient=True) as con:
            schema = tb.Schema(con)
            if not rt.is_rpd(schema):
                return "an SQLite database, but not a rocmProfileData trace (none of its tables)", None
            if not schema.has(rt.OP, "opType_id") or not schema.has(rt.STRING, "id", rt.STRING_TEXT):
                return None, None
            marks = ", ".join("?" for _ in rt.KERNEL_OPS)
            row = con.execute(f'SELECT 1 FROM "{rt.OP}" WHERE opType_id IN (SELECT id FROM "{rt.STRING}" WHERE '
                              f'"{rt.STRING_TEXT}" IN ({marks})) LIMIT 1', rt.KERNEL_OPS).fetchone()
            return None, row is not None
    except sqlite3.Error as e:  # an .rpd is listed by its name, its read says why; another name is not known ours
        return f"an SQLite file that cannot be read ({e})", None
    except OSError as e:
        return f"unreadable ({e})", None


def sniff(path: str) -> str | None:
    return sniffed(path, probe_file)


class RpdLayout(RunFolderLayout):
    expected = EXPECTED

    def claims(self, rel: tuple[str, ...]) -> bool:
        name = rel[-1]
        named = any(name.endswith(s) and len(name) > len(s) for s in (SUFFIX, GZ_SUFFIX))
        return named and self.in_run_folder(rel)

    def maybe(self, rel: tuple[str, ...]) -> bool:
        return rel[-1].endswith(SQLITE_SUFFIXES) and self.in_run_folder(rel)

    def unread(self, rel: tuple[str, ...]) -> str | None:
        return compressed(rel[-1])

    def sniff(self, path: str) -> str | None:
        return sniff(path)

    def group(self, found: list[Found]) -> Groups:
        return self.one_file_sessions(found, stem, "rpd")


LAYOUT = RpdLayout()
