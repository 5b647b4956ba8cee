"""Where nvprof's databases sit in a logdir: ``<logdir>/<run>/<name>.nvvp`` (``nvprof -o <name>.nvvp``, or
``--export-profile``; one file per process with ``--profile-child-processes`` and ``%p`` in the name).

An ``.nvvp`` (or ``.nvprof``, gzipped or not) is claimed by its name; an SQLite file saved under another name
(``.sqlite``, ``.db``, PyProf's documented ``net.sql``, the Visual Profiler's ``.prof``) is read when its tables are
nvprof's (``heads.is_nvprof``), asked after the Nsight layout, which claims such names first.  Every folder holding
such files (never below a ``plugins`` folder) is a run; each file is a session of its own, named after its
modification time, its host after the file.
"""

from __future__ import annotations

import html
import os
import re

from tb_gpu_advisor.formats.base import ByIdentity, Found, Groups, RunFolderLayout, max_profile_bytes, sniffed

SUFFIXES = (".nvvp", ".nvprof")
#: A gzipped database: read through a decompressed private copy.
GZ_SUFFIXES = tuple(s + ".gz" for s in SUFFIXES)
#: Other names the database may be saved under (its tables decide): ``.prof`` is also cProfile's and gprof's.
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db", ".sql", ".prof")
EXPECTED = "<run>/<name>.nvvp (nvprof -o <name>.nvvp)"
COMPRESSED = {".xz": "xz -dk", ".bz2": "bunzip2 -k", ".zst": "zstd -d"}


def _named(name: str, suffixes: tuple[str, ...]) -> str | None:
    return next((s for s in suffixes if name.endswith(s) and len(name) > len(s)), None)


def stem(file_name: str) -> str:
    suffix = _named(file_name, GZ_SUFFIXES + SUFFIXES + SQLITE_SUFFIXES)
    return file_name[: -len(suffix)] if suffix else file_name


def compressed(file_name: str) -> str | None:
    """Why an ``.nvvp`` compressed otherwise than gzip is left out, with the command that restores it."""
    for suffix, command in COMPRESSED.items():
        inner = file_name[: -len(suffix)] if file_name.endswith(suffix) else ""
        if _named(inner, SUFFIXES):
            return (f"a compressed nvprof database, read once decompressed, since SQLite reads a database in place: "
                    f"{command} {file_name}")
    return None


#: The NVIDIA Visual Profiler's session file, saved under the same suffix as nvprof's database (``File > Save``): an XML
#: ``<session>`` of the profiler's settings and the profiled command (``<executable file=... args=...>``), no recorded
#: event -- nvvp runs the program again to show its timeline (real: xstupi00/N-Body-OpenACC's ``profile.nvvp``,
#: AtilaSaraiva/GPU-Born-Modeling's, h37-wild55n).
_SESSION = re.compile(rb"^\s*(?:<\?xml[^>]*\?>\s*)?<session\b")
_EXECUTABLE = re.compile(rb"<executable\b[^>]*?\bfile=\"([^\"]*)\"(?:[^>]*?\bargs=\"([^\"]*)\")?")


def session_words(head: bytes, file_name: str) -> str | None:
    """Why an ``.nvvp`` that is the Visual Profiler's session file (:data:`_SESSION`) is not read, with its recorded
    command to profile instead; None for any other file."""
    if not _SESSION.match(head):
        return None
    m = _EXECUTABLE.search(head)
    program = " ".join(html.unescape(g.decode("utf-8", "replace")) for g in m.groups() if g) if m else "<program>"
    stem_ = stem(os.path.basename(file_name)) or "run"
    return (f"the NVIDIA Visual Profiler's session file (its settings and the profiled command, saved as "
            f"{os.path.basename(file_name)}), not nvprof's database: it holds no recorded event (nvvp runs the "
            f"program again to show its timeline).  Record the program into nvprof's database and analyse that: "
            f"nvprof -o {stem_}_db.nvvp {program} ; on a GPU after Volta, with Nsight Systems: nsys profile -o "
            f"{stem_} {program} ; nsys export --type sqlite {stem_}.nsys-rep")


_probed: ByIdentity[tuple[str | None, bool | None]] = ByIdentity()


def probe_file(path: str, size: int = 0, mtime_ns: int = 0) -> tuple[str | None, bool | None]:
    """(None when ``path`` is nvprof's database, else why not; whether it holds a kernel).  Cached by identity."""
    return _probed.answer((path, size, mtime_ns),
                          lambda: (None, None) if size > max_profile_bytes() else _probe(path))


def _probe(path: str) -> tuple[str | None, bool | None]:
    import sqlite3

    from tb_gpu_advisor.formats import sqlite as tb
    from tb_gpu_advisor.formats.nvprof import tables as nt

    if not tb.is_sqlite(path):
        if str(path).endswith(".prof"):  # the Visual Profiler's export name, and Python's cProfile's and gprof's
            return ("a .prof that is no SQLite file, so not nvprof's database (nvprof --export-profile <name>.prof): "
                    "Python's cProfile or gprof output, not a GPU profile"), None
        return "not an SQLite file", None
    if tb.cut_short(path) is not None:
        return "an SQLite file cut short", None
    try:
        with tb.open_db(path, lenient=True) as con:
            schema = tb.Schema(con)
            if not nt.is_nvprof(schema):
                return "an SQLite database, but not nvprof's (none of its tables)", None
            return None, schema.nonempty(nt.CONCURRENT_KERNEL) or schema.nonempty(nt.KERNEL)
    except sqlite3.Error as e:
        return f"an SQLite file that cannot be read ({e})", None
    except OSError as e:
        return f"unreadable ({e})", None


def sniff(path: str) -> str | None:
    return sniffed(path, probe_file)


class NvprofLayout(RunFolderLayout):
    expected = EXPECTED

    def claims(self, rel: tuple[str, ...]) -> bool:
        return _named(rel[-1], SUFFIXES + GZ_SUFFIXES) is not None and self.in_run_folder(rel)

    def maybe(self, rel: tuple[str, ...]) -> bool:
        return rel[-1].endswith(SQLITE_SUFFIXES) and self.in_run_folder(rel)

    def unread(self, rel: tuple[str, ...]) -> str | None:
        return compressed(rel[-1])

    def sniff(self, path: str) -> str | None:
        return sniff(path)

    def group(self, found: list[Found]) -> Groups:
        return self.one_file_sessions(found, stem, "nvprof")


LAYOUT = NvprofLayout()
