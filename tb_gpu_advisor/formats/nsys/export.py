"""``.nsys-rep`` reports: exported to SQLite once, into the report cache, and read from there.

An ``.nsys-rep`` is Nsight Systems' own binary report; only ``nsys`` reads it.  Where ``nsys`` is on PATH, the
report is exported (``nsys export --type sqlite``) into ``<cache>/nsys-exports/`` -- never beside the user's file,
never into the logdir -- under a name keyed by the report's path, size and modification time, so it is exported
once and again only when the report changes.  ``nsys`` exports a private copy made through the checked descriptor,
never the logdir's path.  Without ``nsys``, the read fails with the one command to run.
With the cache off (``TB_GPU_ADVISOR_CACHE_DIR=off``) or remote, the export goes to the machine's temp folder.
Exports beyond :data:`MAX_EXPORT_BYTES` in all are removed, least recently used first.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.common.cachedir import default_dir, mark_used
from tb_gpu_advisor.formats import heads
from tb_gpu_advisor.formats.base import LIMIT_HINT, human_size, max_profile_bytes
from tb_gpu_advisor.formats.nsys.layout import report_suffix
from tb_gpu_advisor.formats.nsys.tables import NsysReadError
from tb_gpu_advisor.formats.sqlite import is_sqlite, private_copy, remove_private_copy
from tb_gpu_advisor.model.damage import attach, unreadable

#: The sub-folder of the report cache holding the exports.
EXPORT_DIR = "nsys-exports"
#: How long one export may take (a multi-GB report takes minutes).
EXPORT_TIMEOUT_S = 1800
#: The exports kept in all; older ones go first.
MAX_EXPORT_BYTES = 8 << 30


def command(report: str, out: str) -> list[str]:
    """The export command, as a user would type it."""
    return ["nsys", "export", "--type", "sqlite", "-o", out, report]


def export_folder() -> str:
    """Where exports go: the report cache's ``nsys-exports`` folder, else a temp folder of this user."""
    base = default_dir()
    if base is None or fsio.is_remote(base):
        base = os.path.join(tempfile.gettempdir(), f"tb-gpu-advisor-{os.getuid() if hasattr(os, 'getuid') else 0}")
    return os.path.join(base, EXPORT_DIR)


def cached_path(report: str) -> str:
    """The export of ``report`` in :func:`export_folder`, named after the report and its identity (a listed report is
    checked to be the file listed, below its logdir: ``fsio.open_listed``)."""
    with fsio.open_binary(report) as f:
        return _name(report, os.fstat(f.fileno()))


def _name(report: str, st: os.stat_result) -> str:
    key = hashlib.sha1(f"{os.path.abspath(report)}\0{st.st_size}\0{st.st_mtime_ns}".encode()).hexdigest()[:16]
    stem = os.path.basename(report)[: -len(report_suffix(report))] or "report"
    return os.path.join(export_folder(), f"{stem}-{key}.sqlite")


def sqlite_for(report: str) -> str:
    """The SQLite export of an ``.nsys-rep`` (exported now when not yet cached); NsysReadError when it cannot be.

    ``nsys`` is never given the logdir's path: it would open whatever the path names when it runs, a link swapped in
    after the check included.  It exports a private copy made through the one checked descriptor
    (``formats.sqlite.private_copy``), whose identity also names the export."""
    try:
        with fsio.open_binary(report) as f:
            st = os.fstat(f.fileno())
            out = _name(report, st)
            if st.st_size > max_profile_bytes():  # no private copy of what the reader would refuse (its export is larger)
                raise NsysReadError(f"{report}: file is {human_size(st.st_size)}, over the "
                                    f"{human_size(max_profile_bytes())} limit ({LIMIT_HINT})")
            if os.path.isfile(out) and is_sqlite(out):
                mark_used(out)
                return out
            nsys = shutil.which("nsys")
            if nsys is None:
                suggested = os.path.splitext(report)[0] + ".sqlite"
                head = f.read(heads.NSYS_HEADER_BYTES)
                if head and not heads.is_nsys_report_head(head):  # its name only: an empty one is nsys's to refuse
                    raise NsysReadError(f"{report}: named as an Nsight Systems report ({_kind(report)}), but its "
                                        f"bytes are not one (no '{heads.NSYS_REPORT_MAGIC.decode().strip()}' head): "
                                        "a damaged or another file; profile the run again (nsys profile -o <name> "
                                        "<program>)")
                said = heads.nsys_report_said(head)
                raise NsysReadError(
                    f"{report}: an Nsight Systems report ({_kind(report)}{'; ' + said if said else ''}), which only "
                    f"nsys reads, and nsys is not on PATH here. Export it to SQLite and analyse that: "
                    f"{' '.join(_quote(a) for a in command(report, suggested))}")
            copy = private_copy(f, report_suffix(report))
    except OSError as e:
        raise NsysReadError(f"cannot read {report}: {e}") from e
    try:
        return _export(nsys, copy, report, out)
    finally:
        remove_private_copy(copy)


def _kind(report: str) -> str:
    """The report's kind in words: an old ``.qdrep`` is named as the same report under its pre-2021.4 name, so the
    reader knows the export command takes it as it is."""
    if report_suffix(report) == ".qdrep":
        return ".qdrep, the name Nsight Systems gave its reports before 2021.4; nsys export reads it"
    return ".nsys-rep"


def _export(nsys: str, copy: str, report: str, out: str) -> str:
    """``nsys export`` of the private ``copy`` of ``report`` into ``out`` (written under a temp name, then moved)."""
    suggested = os.path.splitext(report)[0] + ".sqlite"
    os.makedirs(os.path.dirname(out), exist_ok=True)
    tmp = f"{out[:-len('.sqlite')]}.tmp-{os.getpid()}.sqlite"
    argv = [nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "-o", tmp, copy]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=EXPORT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        _remove(tmp)
        raise NsysReadError(f"{report}: nsys export failed ({e}); run it yourself: "
                            f"{' '.join(_quote(a) for a in command(report, suggested))}") from e
    if done.returncode != 0 or not (os.path.isfile(tmp) and is_sqlite(tmp)):
        _remove(tmp)
        tail = done.stdout.decode("utf-8", "replace").strip().splitlines()[-3:] if done.stdout else []
        said = ' / '.join(tail)
        error = NsysReadError(f"{report}: nsys export failed (exit {done.returncode}{': ' + said if said else ''}); "
                              f"run it yourself: {' '.join(_quote(a) for a in command(report, suggested))}")
        # nsys ran and read the report, and could not export it: its records are not readable here (a damaged report,
        # or one of a newer nsys) -- a record, so the host says the file's damage, not only an error (h37-damage67b)
        raise attach(error, unreadable("nsys_export_failed", f"nsys export could not read the report (exit "
                                       f"{done.returncode}{': ' + said if said else ''})"))
    os.replace(tmp, out)
    _prune(os.path.dirname(out), keep=out)
    return out


def _quote(arg: str) -> str:
    return arg if arg and all(c.isalnum() or c in "/._-=:+@%" for c in arg) else "'" + arg.replace("'", "'\\''") + "'"


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def _prune(folder: str, keep: str, max_bytes: int = MAX_EXPORT_BYTES) -> None:
    """Remove the least recently used exports until the folder holds at most ``max_bytes`` (``keep`` stays)."""
    try:
        entries = []
        with os.scandir(folder) as it:
            for e in it:
                if e.name.endswith(".sqlite") and ".tmp-" not in e.name and e.is_file(follow_symlinks=False):
                    st = e.stat(follow_symlinks=False)
                    entries.append((st.st_mtime, st.st_size, e.path))
    except OSError:
        return
    total = sum(s for _, s, _ in entries)
    for _, size, path in sorted(entries):
        if total <= max_bytes:
            break
        if os.path.abspath(path) != os.path.abspath(keep):
            _remove(path)
            total -= size
