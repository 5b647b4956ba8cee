"""rocprofv3's ``rocpd`` database (ROCm 7's default output, ``rocprofv3 --output-format rocpd``: ``<pid>_results.db``
beside the run, an SQLite file): its tables, how one is told, and where it sits in a logdir.

Its tables (facts read off ROCm/rocprofiler-sdk's schema as a real file holds it -- schema_version 3, survey
h37-rocprof): every table is named ``rocpd_<table>_<guid>``, the guid the session's (``rocpd_metadata_<guid>``
``guid``), with views of the same names without it that the file defines (never run here: ``formats.sqlite.Schema``
counts real tables only).  ``rocpd_region`` the host's calls and markers (``start``/``end`` ns, ``name_id``,
``event_id``, ``tid`` -> ``rocpd_info_thread.id``), ``rocpd_kernel_dispatch`` and ``rocpd_memory_copy`` the GPU's work
(``agent_id`` / ``dst_agent_id``, ``src_agent_id`` -> ``rocpd_info_agent``), ``rocpd_event`` per record its
``category_id`` (``HIP_RUNTIME_API_EXT``, ``MARKER_CORE_API``, ``MEMORY_COPY`` ...) and ``stack_id``, the correlation
a dispatch shares with the call that launched it; ``rocpd_info_kernel_symbol`` the kernels' names; ``rocpd_string`` every
name.

A file is claimed by its tables, never its name: any ``.db`` / ``.sqlite`` of a run folder holding
``rocpd_region_<guid>`` and ``rocpd_string_<guid>`` (asked after the Nsight and rocmProfileData layouts).  Each file is
a session of its own, named after its modification time, its host after the file.
"""

from __future__ import annotations

import re

from tb_gpu_advisor.formats.base import ByIdentity, Found, Groups, RunFolderLayout, max_profile_bytes, file_identity

SUFFIXES = (".db", ".sqlite", ".sqlite3")
EXPECTED = "<run>/<pid>_results.db (rocprofv3 --output-format rocpd: any name, told by its tables)"
#: The tables a rocpd database must hold (with its guid): the host's regions and the names.
OWN = ("region", "string")
TABLE = re.compile(r"^rocpd_([a-z_]+?)_([0-9a-f]{8}_[0-9a-f]{4}_[0-9a-f]{4}_[0-9a-f]{4}_[0-9a-f]{12})$")


def guids(tables: frozenset[str] | set[str]) -> dict[str, set[str]]:
    """guid -> the rocpd tables (``region``, ``kernel_dispatch`` ...) the database holds for it."""
    out: dict[str, set[str]] = {}
    for t in tables:
        m = TABLE.match(t)
        if m:
            out.setdefault(m.group(2), set()).add(m.group(1))
    return out


def is_rocpd(tables: frozenset[str] | set[str]) -> bool:
    """rocprofv3's database: some guid holds every table of :data:`OWN`."""
    return any(all(o in have for o in OWN) for have in guids(tables).values())


_probed: ByIdentity[str | None] = ByIdentity()


def sniff(path: str) -> str | None:
    """None when ``path`` is a rocpd database, else why not (cached by the file's identity)."""
    try:
        key = file_identity(path)
    except OSError as e:
        return f"unreadable ({e.strerror or e})"
    return _probed.answer(key, lambda: None if key[1] > max_profile_bytes() else _probe(path))  # over the limit:
    # its read says so


def _probe(path: str) -> str | None:
    import sqlite3

    from tb_gpu_advisor.formats import sqlite as tb

    if not tb.is_sqlite(path):
        return "not an SQLite file"
    if tb.cut_short(path) is not None:
        return "an SQLite file cut short"
    try:
        with tb.open_db(path, lenient=True) as con:
            if not is_rocpd(tb.Schema(con).tables):
                return "an SQLite database, but not rocprofv3's rocpd (no rocpd_region_<guid>, rocpd_string_<guid>)"
            return None
    except sqlite3.Error as e:
        return f"an SQLite file that cannot be read ({e})"
    except OSError as e:
        return f"unreadable ({e})"


def stem(file_name: str) -> str:
    for suffix in SUFFIXES:
        if file_name.endswith(suffix) and len(file_name) > len(suffix):
            return file_name[: -len(suffix)]
    return file_name


class RocpdLayout(RunFolderLayout):
    expected = EXPECTED

    def claims(self, rel: tuple[str, ...]) -> bool:
        return False  # never by its name: results.db is any program's name

    def maybe(self, rel: tuple[str, ...]) -> bool:
        return rel[-1].endswith(SUFFIXES) and self.in_run_folder(rel)

    def sniff(self, path: str) -> str | None:
        return sniff(path)

    def group(self, found: list[Found]) -> Groups:
        return self.one_file_sessions(found, stem, "rocpd")


LAYOUT = RocpdLayout()
