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

from tb_gpu_advisor.formats.base import DatabaseLayout

#: Other names the database may be saved under (its tables decide): ``.prof`` is also cProfile's and gprof's.
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db", ".sql", ".prof")


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


def _probe(path: str) -> tuple[str | None, bool | None]:
    from tb_gpu_advisor.formats import sqlite as tb
    from tb_gpu_advisor.formats.nvprof import tables as nt

    if str(path).endswith(".prof") and not tb.is_sqlite(path):  # the Visual Profiler's export name, and cProfile's
        return ("a .prof that is no SQLite file, so not nvprof's database (nvprof --export-profile <name>.prof): "
                "Python's cProfile or gprof output, not a GPU profile"), None
    return tb.probe_own(path, nt.is_nvprof, "an SQLite database, but not nvprof's (none of its tables)",
                        lambda con, schema: schema.nonempty(nt.CONCURRENT_KERNEL) or schema.nonempty(nt.KERNEL))


LAYOUT = DatabaseLayout(kind="nvprof", what="nvprof database", expected="<run>/<name>.nvvp (nvprof -o <name>.nvvp)",
                        names=(".nvvp", ".nvprof"), sqlite_names=SQLITE_SUFFIXES, probe=_probe)
stem = LAYOUT.stem
probe_file = LAYOUT.probe_file
