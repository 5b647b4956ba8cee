"""Where Nsight Systems captures sit in a logdir: ``<logdir>/<run>/<report>.sqlite`` (``nsys export --type sqlite``)
or ``<run>/<report>.nsys-rep`` (``.qdrep``: its name before Nsight 2021.4).

An SQLite file (``.sqlite``, ``.sqlite3``, ``.db``) is an export only when its tables say so (``tables.Schema
.is_export``), never by its name: a run folder may hold other databases -- or when it is too damaged to say, being
shorter than its own header says (``tables.cut_short``: a rank's export cut off mid-copy), listed to fail as damaged.  An ``.nsys-rep`` is known by its name
(only ``nsys`` reads it); beside an export of the same name it is left out (the export is read instead).  Every
folder holding such files (never below a ``plugins`` folder) is a run.

Sessions: an export is a session of its own, named after its capture time (``TARGET_INFO_SESSION_START_TIME``,
UTC, ``%Y_%m_%d_%H_%M_%S``; else the file's modification time), its host after the file.  Exports of one job --
one per rank, as ``nsys profile -o report_rank%q{RANK}`` writes them: the same name but for a trailing number, in
one folder, captured at the same time (their captures overlap; where a capture's length is unknown, started within
:data:`RANK_WINDOW_S` of each other and named ``...rank<N>``) -- are one session.  ``report1``, ``report2`` of two
runs one after the other (nsys's default names) do not overlap: two sessions.  In a job, the exports of one machine
(``TARGET_INFO_SYSTEM_ENV`` ``Hostname``) are one host whose GPUs are the ranks' GPUs, read on the clock they
share.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.common.memo import Memo
from tb_gpu_advisor.formats.base import Found, Groups, RunFile, RunFolderLayout, max_profile_bytes, named_sessions
from tb_gpu_advisor.formats.heads import NVPROF_DATABASE, RPD_DATABASE, STREAM_SUFFIX, is_rpd, stream_words
from tb_gpu_advisor.model.logdir import ROOT_RUN, HostFile

# The tables (numpy, sqlite3) and the exporter (subprocess) are imported when an SQLite file is probed: discovery of a
# logdir without Nsight files, and every ``report`` of another format, waits for neither (issue #30 item 3).

#: An Nsight Systems report not yet exported (``export.py`` exports it to SQLite).
REP_SUFFIX = ".nsys-rep"
#: Every name a report not yet exported has: ``.qdrep`` is the same report under the name Nsight Systems gave it
#: before 2021.4 (``nsys profile`` of 2019-2021, the NVIDIA DLI CUDA course's labs); ``nsys export`` reads both.
#: Why both: a logdir holding only a ``.qdrep`` read "no GPU profiles found", as if it held nothing of Nsight's,
#: where an ``.nsys-rep`` beside it is told the one command that exports it (h37-survey67).
REP_SUFFIXES = (REP_SUFFIX, ".qdrep")


def is_report(file_name: str) -> bool:
    """``file_name`` is an Nsight Systems report not yet exported (:data:`REP_SUFFIXES`), not a bare suffix."""
    return any(file_name.endswith(x) and len(file_name) > len(x) for x in REP_SUFFIXES)


def report_suffix(file_name: str) -> str:
    """The report suffix ``file_name`` ends with (:data:`REP_SUFFIXES`); :data:`REP_SUFFIX` where none does."""
    return next((x for x in REP_SUFFIXES if file_name.endswith(x)), REP_SUFFIX)

#: Names an export may have; its tables decide.  ``.sql``: NVIDIA PyProf's documented capture wrote nvprof's database
#: as ``net.sql`` (``nvprof -o net.sql``, then ``python -m apex.pyprof.parse net.sql``), which is then named for what it
#: is rather than "not a profile this tool reads" (josiahdavis/profiling-lm, survey h37-survey39); an SQL script of that
#: name is no SQLite file and stays unread.
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db", ".sql")
EXPECTED = "<run>/<report>.sqlite (nsys export --type sqlite) or <run>/<report>.nsys-rep (.qdrep)"
#: Ranks of one job start their captures within this many seconds of each other.
RANK_WINDOW_S = 300.0
#: ``report_rank3``, ``trace.1``, ``rank-12``: a job's per-rank name and the rank.
_RANK_NAME = re.compile(r"^(.*?)(\d+)$")


def stem(file_name: str) -> str:
    for suffix in (*REP_SUFFIXES, *SQLITE_SUFFIXES):
        if file_name.endswith(suffix) and len(file_name) > len(suffix):
            return file_name[: -len(suffix)]
    return file_name


@dataclass(frozen=True)
class Header:
    """What an export says about its capture: when (seconds since 1970), and on which machine."""

    epoch_s: float | None = None
    hostname: str | None = None
    duration_s: float | None = None  # how long the capture ran (``ANALYSIS_DETAILS.duration``)
    gpu: bool | None = None  # a kernel (or CUDA graph execution) recorded: the tab's probe (``probe.py``) asks this


#: How a shared export is often compressed, and the command that gives the file back beside itself.
COMPRESSED = {".gz": "gunzip -k", ".xz": "xz -dk", ".bz2": "bunzip2 -k", ".zst": "zstd -d"}


def compressed(file_name: str) -> str | None:
    """Why a compressed export (``run.sqlite.gz``, ``run.nsys-rep.zst``) is left out, with the command that restores
    it; None for any other name.  SQLite reads a database file in place, with random access, so the export is read
    only once decompressed (the real CS336 export kept in tests/fixtures/nsys_ranks is shared gzipped)."""
    for suffix, command in COMPRESSED.items():
        inner = file_name[: -len(suffix)] if file_name.endswith(suffix) else ""
        if inner and stem(inner) != inner:
            kind = "report" if is_report(inner) else "export"
            return (f"a compressed Nsight Systems {kind}, read once decompressed, since SQLite reads a file in "
                    f"place: {command} {file_name}")
    return None


#: Each file's answer by its identity (path, size, mtime): discovery asks it again on every listing.
_headers: Memo[tuple[str | None, Header]] = Memo(50_000)


def probe_file(path: str, size: int = 0, mtime_ns: int = 0) -> tuple[str | None, Header]:
    """(None when ``path`` is an Nsight export, else why not; its capture time and machine).  Cached by identity."""
    # over the profile limit: listed unread (no copy of it made to ask), its analysis then says it is too big
    return _headers.ask((path, size, mtime_ns),
                        lambda: (None, Header()) if size > max_profile_bytes() else _probe(path))


def _probe(path: str) -> tuple[str | None, Header]:
    import sqlite3

    from tb_gpu_advisor.formats import sqlite
    from tb_gpu_advisor.formats.nsys import tables as tb

    if not sqlite.is_sqlite(path):
        return "not an SQLite file", Header()
    try:
        # lenient: a metadata row may hold bytes that are no UTF-8 (Nsight 2022 writes `GpuInfo` in
        # TARGET_INFO_SYSTEM_ENV as a binary protobuf in a TEXT column); the header reads three short values of
        # real tables (``tables.Schema``: never a view the file defines), under the connection's step budget
        # keep=True: a large export's private copy is kept for the read that follows in this process
        with sqlite.open_db(path, lenient=True, keep=True) as con:
            schema = tb.Schema(con)
            if not schema.is_export():
                if schema.is_nvprof():
                    return NVPROF_DATABASE, Header()
                if is_rpd(schema):
                    return RPD_DATABASE, Header()
                return "an SQLite database, but not an Nsight Systems export (none of its tables)", Header()
            when = None
            if schema.has(tb.SESSION_START, "utcEpochNs"):
                row = con.execute(f'SELECT utcEpochNs FROM "{tb.SESSION_START}" LIMIT 1').fetchone()
                when = int(row[0]) / 1e9 if row and isinstance(row[0], int) and row[0] > 0 else None
            host = tb.value_of(schema, tb.SYSTEM_ENV, "Hostname")
            duration = None
            if schema.has(tb.ANALYSIS, "duration"):
                row = con.execute(f'SELECT duration FROM "{tb.ANALYSIS}" LIMIT 1').fetchone()
                duration = int(row[0]) / 1e9 if row and isinstance(row[0], int) and row[0] > 0 else None
            gpu = schema.nonempty(tb.KERNEL) or schema.nonempty(tb.GRAPH_TRACE)
            return None, Header(when, host, duration, gpu)
    except sqlite3.Error as e:
        if sqlite.cut_short(path) is not None:  # a copy cut off (a rank's export among its job's): a damaged host, listed
            return None, Header()
        return f"an SQLite file that cannot be read ({e})", Header()
    except OSError as e:
        return f"unreadable ({e})", Header()
    except Exception as e:  # noqa: BLE001 - one file that cannot be listed is that file's error, never the listing's
        return f"an SQLite file that cannot be read ({type(e).__name__}: {e})", Header()


def sniff(path: str) -> str | None:
    """None when the SQLite file at ``path`` is an Nsight Systems export, else why it is not, in words."""
    try:
        st = os.stat(fsio.local_path(path))
        return probe_file(path, st.st_size, st.st_mtime_ns)[0]
    except OSError as e:
        return f"unreadable ({e.strerror or e})"



_File = RunFile[Header]


def _file(f: Found) -> _File:
    header = Header() if is_report(f.name) else probe_file(f.path, f.size, f.mtime_ns)[1]
    when = header.epoch_s or (f.mtime_ns / 1e9 if f.mtime_ns else 0.0)
    return _File(HostFile(stem(f.name), f.path, f.size, f.mtime_ns, "nsys"), when, header)


def _jobs(files: list[_File]) -> list[list[_File]]:
    """One run folder's files as sessions: per-rank exports of one job together, every other file alone."""
    out: list[list[_File]] = []
    by_prefix: dict[str, list[_File]] = {}
    for f in sorted(files, key=lambda x: (x.when_s, x.host.path)):
        m = _RANK_NAME.match(f.host.host)
        if m is None or not m.group(1):
            out.append([f])
            continue
        by_prefix.setdefault(m.group(1), []).append(f)
    for group in by_prefix.values():
        current: list[_File] = []
        for f in group:
            if current and not (_concurrent(current[0], f) and all(_rank(x) != _rank(f) for x in current)):
                out.append(current)
                current = []
            current.append(f)
        if current:
            out.append(current)
    return out


def _concurrent(a: _File, b: _File) -> bool:
    """Two ranks' captures of one job: they overlap in time (b starts before a ends); where a's length is unknown,
    they start within :data:`RANK_WINDOW_S` and are named as ranks."""
    if a.header.epoch_s is not None and b.header.epoch_s is not None and a.header.duration_s:
        return b.when_s - a.when_s < a.header.duration_s
    return abs(b.when_s - a.when_s) <= RANK_WINDOW_S and "rank" in a.host.host.lower() and "rank" in b.host.host.lower()


def _rank(f: _File) -> int:
    m = _RANK_NAME.match(f.host.host)
    return int(m.group(2)) if m else -1


def _hosts(files: list[_File]) -> list[HostFile]:
    """A job's files as hosts: the exports of one machine (same ``Hostname``) are one host, ranks in order."""
    if len(files) == 1:
        return [files[0].host]
    machines: dict[str, list[_File]] = {}
    for f in files:
        machines.setdefault(f.header.hostname or f.host.host, []).append(f)
    out = []
    for machine, fs in machines.items():
        fs.sort(key=_rank)
        hs = [f.host for f in fs]
        if len(hs) == 1:
            out.append(hs[0])
        else:
            out.append(HostFile(machine, hs[0].path, sum(h.size for h in hs), max(h.mtime_ns for h in hs), "nsys",
                                tuple(hs)))
    return out


class NsysLayout(RunFolderLayout):
    expected = EXPECTED

    def claims(self, rel: tuple[str, ...]) -> bool:
        return is_report(rel[-1]) and self.in_run_folder(rel)

    def capture_span(self, path: str, size: int, mtime_ns: int) -> tuple[float, float]:
        """From the export's session start to its end (start plus the capture's duration), else its modification
        time: a report (``.nsys-rep``) is not opened here."""
        end = mtime_ns / 1e9
        head = probe_file(path, size, mtime_ns)[1] if str(path).endswith(SQLITE_SUFFIXES) else Header()
        if head.epoch_s is None or head.epoch_s > end:
            return end, end
        return head.epoch_s, (head.epoch_s + head.duration_s if head.duration_s else end)

    def maybe(self, rel: tuple[str, ...]) -> bool:
        return rel[-1].endswith(SQLITE_SUFFIXES) and self.in_run_folder(rel)

    def unread(self, rel: tuple[str, ...]) -> str | None:
        """Nsight's raw capture stream (``.qdstrm``, :data:`STREAM_SUFFIX`) and a
        compressed export, named by what they are rather than "not a profile this tool reads" or, in a logdir, nothing
        at all (rocmProfileData's ``.rpd`` and nvprof's ``.nvvp``, read, are ``formats.rpd``'s and
        ``formats.nvprof``'s).  Which notes go unsaid beside a profile read
        in the same folder: :meth:`unread_beside`."""
        name, unpack = rel[-1], ""
        for suffix, command in COMPRESSED.items():  # shared gzipped, still the other tool's file
            if name.endswith(suffix) and len(name) > len(suffix):
                name, unpack = name[: -len(suffix)], f"{command} {name} ; "
                break
        if name.endswith(STREAM_SUFFIX) and len(name) > len(STREAM_SUFFIX):
            return stream_words(name, unpack)
        return compressed(rel[-1])

    def unread_beside(self, file_name: str, read: frozenset[str]) -> bool:
        """A raw stream is its own capture: its note goes unsaid only beside its own report or export (the same stem:
        ``report1.qdstrm`` beside ``report1.nsys-rep``); beside another report (a 2019 laptop's ``report4.qdrep``
        among ``report1..5.qdstrm``, h37-wild54n) it is still a capture left out.  Any other note: as for every
        format, beside any profile read."""
        name = next((file_name[: -len(x)] for x in COMPRESSED if file_name.endswith(x)), file_name)
        if name.endswith(STREAM_SUFFIX) and len(name) > len(STREAM_SUFFIX):
            return name[: -len(STREAM_SUFFIX)] in {stem(r) for r in read}
        return bool(read)

    def sniff(self, path: str) -> str | None:
        return sniff(path)

    def read_instead(self, file_name: str) -> tuple[str, ...]:
        """A report's exports of the same name (``report1.sqlite`` beside ``report1.nsys-rep``): read instead of it,
        as :meth:`group` lists them."""
        return tuple(stem(file_name) + x for x in SQLITE_SUFFIXES) if is_report(file_name) else ()

    def group(self, found: list[Found]) -> Groups:
        by_run: dict[tuple[str, str], list[Found]] = {}
        for f in found:
            by_run.setdefault(("/".join(f.rel[:-1]) or ROOT_RUN, f.folder), []).append(f)
        groups: Groups = {}
        for (run, folder), fs in by_run.items():
            exported = {stem(f.name) for f in fs if not is_report(f.name)}
            files = [_file(f) for f in fs if not (is_report(f.name) and stem(f.name) in exported)]
            for name, job in named_sessions(sorted(_jobs(files), key=lambda j: (min(x.when_s for x in j),
                                                                               j[0].host.path))):
                groups.setdefault((run, name, folder), []).extend(_hosts(job))
        return groups



LAYOUT = NsysLayout()
