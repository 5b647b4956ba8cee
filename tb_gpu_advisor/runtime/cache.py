"""Persistent on-disk cache of session reports, keyed by the identity of the profile files.

Why: analysing a multi-GB capture takes seconds to minutes; the same
session is opened again and again (every TensorBoard restart, every CLI
run, ``precompute`` ahead of time).  A report is valid as long as every
host file -- and every file its reader reads beside it (``HostFile.beside``) -- is unchanged (path, size,
mtime_ns), the analyzer (its Python and C code) and report schema are the same and no threshold differs from the
table's (``thresholds.override``), so exactly that is the key.

Design:

* One gzip-compressed JSON file per report, named by the key's SHA-256.
  The file also stores the key material, checked on read.
* Writes go to a temp file in the same folder, then ``os.replace``: readers
  (other threads, other processes: TensorBoard and ``precompute`` may
  share the folder) see the old file or the new one, never half of one.
* Entries that cannot be read back (truncated, foreign, wrong key, or a body
  that is not the report the key names: ``{}`` under a valid header) are
  removed and treated as a miss; ``put`` refuses to store such a body.
* An entry is bound to its key (:func:`binding`): its header carries the run,
  the session, the analyzer version and every file's identity when it was
  written -- size, ``mtime_ns``, inode and a digest of its first and last
  ``IDENTITY_BLOCK`` bytes -- and its body must be a report of that run, session,
  analyzer and those files.  All of it is checked on read: another run's report
  saved under this run's key, or a file replaced by one of the same size and
  mtime, is a miss (logged once per entry) and the entry is removed.
* Size-bounded: after a write, when the folder holds more than
  ``max_bytes``, the least recently used entries go (a hit refreshes the
  entry's mtime, so mtime is the LRU clock).
* A cache that cannot be created (read-only home, ...) disables itself with
  a warning: the Advisor still works, only slower.
* Hostile or broken folders: an entry is opened without following symlinks
  and without blocking (a FIFO, a link to ``/dev/zero``, a device: discarded,
  never waited on or read without end), and read and decompressed up to
  ``MAX_ENTRY_BYTES`` only.
* Only reports are cached, never failures: a report with a host that failed
  (file over the size limit, unreadable, a worker killed) is not stored, so
  the next run tries again (perhaps with a higher limit).

An object store works as the folder (``s3://bucket/prefix``, with ``S3_ENDPOINT`` as for logdirs; other fsspec
schemes such as ``gs://``): each entry is one object written in one put (atomic for readers), listed for
eviction; there the LRU clock is the write time (a hit does not refresh it).

Folder: constructor argument, else ``$TB_GPU_ADVISOR_CACHE_DIR``, else
``$XDG_CACHE_HOME/tb-gpu-advisor``, else ``~/.cache/tb-gpu-advisor``.
``TB_GPU_ADVISOR_CACHE_DIR=off``, a folder given as ``off`` (``--cache-dir off``) or ``enabled=False`` disables it.
"""

from __future__ import annotations

import functools
import gzip
import json
import logging
import os
import stat
import tempfile
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from tb_gpu_advisor import ANALYZER_VERSION
from tb_gpu_advisor.common import fsio, thresholds
from tb_gpu_advisor.common.cachedir import DISABLED_VALUES, ENV_DIR, default_dir, mark_used  # noqa: F401 - re-exported
from tb_gpu_advisor.common.options import UserOptions
from tb_gpu_advisor.model.logdir import HostFile, RankRuns, Session
from tb_gpu_advisor.model.schema import SCHEMA_VERSION, HostReport, Report, problem

logger = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 1 << 30  # 1 GiB: reports are 10 kB - a few MB compressed
#: Version of this module's file layout; bump when the entry format changes (2: entries carry their binding).
CACHE_FORMAT = 2
#: Bytes at each end of a profile file whose digest binds an entry to the file (a file replaced by one of the same
#: size and mtime almost always differs at one end: a header, the last events).
IDENTITY_BLOCK = 64 << 10
_SUFFIX = ".json.gz"
_TMP_PREFIX = ".tmp-"
_STALE_TMP_SECONDS = 3600  # a temp file this old belongs to a writer that died
#: Entries bigger than this (compressed, or decompressed) are not reports: discarded unread.
MAX_ENTRY_BYTES = 256 << 20


def analyzer_version() -> str:
    """The analyzer's version and a fingerprint of its code, part of every key: a new analyzer -- or any edit to
    the analysing code, version bumped or not -- never serves old reports."""
    return f"{ANALYZER_VERSION}+{code_fingerprint()}"


#: The analysing code's sources the fingerprint hashes: the package's Python and its decoders' C.
_CODE = ("*.py", "*.c", "*.h")


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """SHA-256 (12 hex digits) of the package's Python sources, read once per process (about 1 MB: milliseconds).

    Why: reports are cached across runs and processes; ``ANALYZER_VERSION`` is bumped by hand and a forgotten bump
    served stale reports while a rule was being changed.  The compiled decoders' C sources (``_CODE``) are analysing
    code too: an edit to one changed what a file reads as with every Python file the same.  The tab's static files do
    not change reports and are left out."""
    import hashlib  # here, not at import: a report with the cache off hashes nothing (OpenSSL's start-up, ~3 ms)

    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(p for pattern in _CODE for p in root.rglob(pattern)):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + data + b"\0")
    return h.hexdigest()[:12]


def schema_version() -> str:
    return SCHEMA_VERSION


@dataclass(frozen=True)
class CacheKey:
    """Everything a cached report depends on; ``digest`` names its file."""

    material: str  # canonical JSON of the key fields

    @property
    def digest(self) -> str:
        import hashlib

        return hashlib.sha256(self.material.encode("utf-8")).hexdigest()


def make_key(
    run: str,
    session: str,
    hosts: Sequence[HostFile],
    params: int | None = None,
    analyzer: str | None = None,
    schema: str | None = None,
    scope: str = "session",
    options: UserOptions | None = None,
    rank_runs: RankRuns | None = None,
) -> CacheKey:
    """Key of a session report (or, ``scope="host"``, of one host file's report): names, every host file's (path,
    size, mtime_ns) and every file its reader reads beside it (``HostFile.beside``: a report made before a snapshot's
    capacity record was written is not the report of the snapshot with it), the rank of each file that states none as
    its layout inferred it from the job's other files (``HostFile.inferred_ranks``: other machines' files, which no
    host key holds, say it), the user's settings, every threshold changed from the table's and versions.

    Run and session names are part of it because the report carries them; the settings the report was made with
    (``options``, with ``params`` over its own; none given: the command line's, ``UserOptions.of``) change findings,
    so each setting has its own entry.  ``rank_runs`` (``model.logdir.RankRuns``: the job's other ranks in sibling
    run folders) are what the session's report says of its job (the comm rule's words, a note): the same files beside
    other rank folders make another report.
    """
    options = UserOptions.of(options, params)
    material = {
        "format": CACHE_FORMAT,
        "analyzer": analyzer if analyzer is not None else analyzer_version(),
        "schema": schema if schema is not None else schema_version(),
        "run": run,
        "session": session,
        "params": options.params,
        # a one-file host's identity is its file's (path, size, mtime), a host of several files the list of theirs: a
        # session holding both (3 ranks on 2 nodes, h37-probe44v) sorted them against each other and failed with a
        # TypeError; each form sorts among its own kind, so a session of one form keeps its key
        "hosts": sorted((_identity(h) for h in hosts), key=lambda i: (isinstance(i[0], list), i)),
    }
    beside = sorted([str(path), int(size), int(mtime)] for h in hosts for path, size, mtime in getattr(h, "beside", ()))
    if beside:  # the files read beside a host file (a snapshot's capacity record); none: keys keep their earlier form
        material["beside"] = beside
    inferred = sorted(r for h in hosts for r in (h.inferred_ranks() if hasattr(h, "inferred_ranks") else ()))
    if inferred:  # the ranks read from other machines' files (``HostFile.inferred_ranks``); none: the earlier form
        material["inferred_ranks"] = inferred
    if scope != "session":  # session keys keep the form of earlier versions
        material["scope"] = scope
    if rank_runs is not None:  # the job's other ranks in sibling run folders; none: keys keep their earlier form
        material["rank_runs"] = rank_runs.key_material()
    settings = options.key_material()
    if settings:  # the network and model FLOPs settings; absent, keys keep their earlier form
        material["options"] = settings
    changed = thresholds.tuned()
    if changed:  # thresholds changed from the table's (``thresholds.override``); none: keys keep their earlier form
        material["thresholds"] = sorted(changed.items())
    return CacheKey(json.dumps(material, sort_keys=True, separators=(",", ":")))


def _identity(h: HostFile) -> list:
    """A host's files as (path, size, mtime_ns); a one-file host keeps the key form of earlier versions."""
    files = h.identity() if hasattr(h, "identity") else [[h.path, int(h.size), int(h.mtime_ns)]]
    return files[0] if len(files) == 1 else files


def host_key(session: Session, host: HostFile, params: int | None = None, options: UserOptions | None = None,
             **versions: str) -> CacheKey:
    """Key of one host file's report within its session: the unit a sharded precompute fills and a session's
    report is merged from (:func:`tb_gpu_advisor.runtime.session.session_report`).  The job's ranks in sibling run
    folders are in it as in the session's (``Session.linked_ranks``): the host's analysis places their one-time costs
    (``pipeline.clock_files``), so a host report made without them, or with other files of theirs, is another."""
    return make_key(session.run, session.session, [host], params=params, scope="host", options=options,
                    rank_runs=session.linked_ranks, **versions)


def session_key(session: Session, params: int | None = None, options: UserOptions | None = None,
                **versions: str) -> CacheKey:
    """``make_key`` for a :class:`~tb_gpu_advisor.discover.logdir.Session`."""
    return make_key(session.run, session.session, session.hosts, params=params, options=options,
                    rank_runs=session.linked_ranks, **versions)


class ReportCache:
    """Reports as JSON text by :class:`CacheKey`; see the module doc for the guarantees."""

    def __init__(self, directory: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES, enabled: bool = True):
        self.max_bytes = max_bytes
        self.last_error: str | None = None  # why the last ``put`` stored nothing
        if directory is not None and directory.strip().lower() in DISABLED_VALUES:
            directory, enabled = None, False  # --cache-dir off: no cache, as TB_GPU_ADVISOR_CACHE_DIR=off
        self.directory = directory if directory is not None else default_dir()
        self.enabled = bool(enabled and self.directory)
        #: an object store (``s3://bucket/prefix``, ``gs://...``): entries are objects, written in one put each
        self.remote = bool(self.directory) and fsio.is_remote(self.directory)  # type: ignore[arg-type]
        if self.enabled and not self.remote:
            try:
                os.makedirs(self.directory, exist_ok=True)  # type: ignore[arg-type]
            except OSError as e:
                logger.warning("report cache disabled: cannot create %s: %s", self.directory, e)
                self.enabled = False

    def __repr__(self) -> str:
        return f"ReportCache({self.directory!r}, enabled={self.enabled})"

    def path_for(self, key: CacheKey) -> str:
        if self.remote:
            return fsio.join(self.directory, key.digest + _SUFFIX)  # type: ignore[arg-type]
        return os.path.join(self.directory or "", key.digest + _SUFFIX)

    # -- read ------------------------------------------------------------------

    def get(self, key: CacheKey) -> str | None:
        """The cached report's JSON text, or None (miss, disabled, or a bad entry, which is removed)."""
        if not self.enabled:
            return None
        path = self.path_for(key)
        try:
            raw = _read_remote_entry(path) if self.remote else _read_entry(path)
        except FileNotFoundError:
            return None
        except OSError as e:
            logger.warning("cannot read cache entry %s: %s", path, e)
            return None
        report, why = (None, "not a regular file of sane size") if raw is None else _decode(raw, key)
        if report is None:
            _warn_once(path, why)
            self._remove(path)
            return None
        if not self.remote:  # an object store has no cheap touch: its LRU clock is the write time
            mark_used(path)
        return report

    def get_dict(self, key: CacheKey) -> dict[str, Any] | None:
        """Like :meth:`get`, parsed."""
        text = self.get(key)
        return None if text is None else json.loads(text)

    def __contains__(self, key: CacheKey) -> bool:
        return self.get(key) is not None

    # -- write -----------------------------------------------------------------

    def put(self, key: CacheKey, report: Any) -> bool:
        """Store ``report`` (a Report, a dict, or JSON text) atomically; True when written.

        Never raises for I/O problems: a cache that cannot be written only
        costs time.
        """
        self.last_error = None
        if not self.enabled:
            self.last_error = "the cache is disabled"
            return False
        text, failed = _report_json(report)
        if failed:  # a failure is no report: the next run must try again (e.g. with a higher size limit)
            self.last_error = f"not cached: {failed}"
            return False
        body = json.loads(text)
        material = _material(key)
        bad = _body_problem(body, key) or (_not_of_key(body, material) if material is not None else None)
        if bad:  # it would be refused when read back: never written
            self.last_error = f"not cached: not a report: {bad}"
            return False
        # one line: no raw newlines
        header = json.dumps({"format": CACHE_FORMAT, "key": key.material, "binding": binding(key)})
        blob = gzip.compress(f"{header}\n{text}".encode("utf-8"), compresslevel=6, mtime=0)
        path = self.path_for(key)
        try:
            if self.remote:
                fsio.write_object(path, blob)
            else:
                _atomic_write(path, blob)
        except Exception as e:  # noqa: BLE001 - OSError locally; an object store's client errors too
            logger.warning("cannot write cache entry %s: %s", path, e)
            self.last_error = f"cannot write cache entry {path}: {e}"
            return False
        self.evict()
        return True

    # -- maintenance -----------------------------------------------------------

    def entries(self) -> list[tuple[str, int, float]]:
        """(path, size, mtime) of every entry."""
        out = []
        if not self.enabled:
            return out
        if self.remote:
            try:
                return [(fsio.join(self.directory, f.rel), f.size, f.mtime_ns / 1e9)  # type: ignore[arg-type]
                        for f in fsio.remote_walk(self.directory)  # type: ignore[arg-type]
                        if "/" not in f.rel and f.rel.endswith(_SUFFIX)]
            except Exception as e:  # noqa: BLE001 - an unreachable store: nothing listed, nothing evicted
                logger.warning("cannot list cache %s: %s", self.directory, e)
                return out
        try:
            it = os.scandir(self.directory)  # type: ignore[arg-type]
        except OSError:
            return out
        with it:
            for e in it:
                if e.name.endswith(_SUFFIX) and not e.name.startswith(_TMP_PREFIX):
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue  # removed by another process meanwhile
                    out.append((e.path, st.st_size, st.st_mtime))
        return out

    def total_bytes(self) -> int:
        return sum(size for _, size, _ in self.entries())

    def evict(self) -> int:
        """Remove least recently used entries until the total is under ``max_bytes``; returns how many.

        Safe when several processes evict at once: a file already removed
        by another one is simply skipped.
        """
        if not self.enabled:
            return 0
        self._remove_stale_temp_files()
        entries = self.entries()
        total = sum(size for _, size, _ in entries)
        removed = 0
        for path, size, _ in sorted(entries, key=lambda e: e[2]):
            if total <= self.max_bytes:
                break
            if self._remove(path):
                removed += 1
            total -= size
        return removed

    def clear(self) -> None:
        for path, _, _ in self.entries():
            self._remove(path)

    def _remove(self, path: str) -> bool:
        return fsio.remove_object(path) if self.remote else _remove(path)

    def _remove_stale_temp_files(self) -> None:
        """Temp files left by a writer that was killed mid-write (an object store has none)."""
        if self.remote:
            return
        cutoff = time.time() - _STALE_TMP_SECONDS
        try:
            with os.scandir(self.directory) as it:  # type: ignore[arg-type]
                for e in it:
                    if e.name.startswith(_TMP_PREFIX):
                        try:
                            if e.stat(follow_symlinks=False).st_mtime < cutoff:
                                _remove(e.path)
                        except OSError:
                            pass
        except OSError:
            pass


def _report_json(report: Any) -> tuple[str, str | None]:
    """(JSON text, why it is a failure or None) of a Report (``to_json``), dict, or JSON text (validated)."""
    if isinstance(report, str):
        doc = json.loads(report)  # refuse to cache something that would not read back
        return report, _failure(doc)
    if hasattr(report, "to_json"):
        text = report.to_json()
        return text, _failure({"hosts": [{"error": getattr(h, "error", None)} for h in getattr(report, "hosts", [])]})
    return json.dumps(report, allow_nan=False), _failure(report)


def _failure(doc: Any) -> str | None:
    """The first host error of a report document (a failed analysis), else None."""
    hosts = doc.get("hosts") if isinstance(doc, dict) else None
    for h in hosts if isinstance(hosts, list) else []:
        if isinstance(h, dict) and h.get("error"):
            return f"host {h.get('host', '?')} failed: {h['error']}"
    return None


def _read_remote_entry(path: str) -> bytes | None:
    """An object's bytes, None when it is larger than an entry can be; FileNotFoundError when it is absent."""
    try:
        size, _ = fsio.stat(path)
    except Exception as e:  # noqa: BLE001 - boto3's ClientError (404), fsspec's FileNotFoundError
        raise FileNotFoundError(path) from e
    if size > MAX_ENTRY_BYTES:
        return None
    return fsio.read_bytes(path)


def _read_entry(path: str) -> bytes | None:
    """An entry's bytes; None when it is not a regular file of sane size (then it is discarded).

    ``O_NONBLOCK``: opening a FIFO planted in the folder would otherwise block
    forever (and starve the report workers); ``O_NOFOLLOW``: a symlink (to
    ``/dev/zero``, to a file elsewhere) is not an entry we wrote.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError:
        if os.path.islink(path):  # ELOOP from O_NOFOLLOW
            return None
        raise
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_ENTRY_BYTES:
            return None
        raw = f.read(MAX_ENTRY_BYTES + 1)
    return raw if len(raw) <= MAX_ENTRY_BYTES else None


def _decode(raw: bytes, key: CacheKey) -> tuple[str | None, str]:
    """(the report JSON text from an entry's bytes, "") or (None, why the entry is unusable).

    Entry layout: gzip of ``<header JSON>\n<report JSON>``; gzip's CRC catches
    truncation and bit rot, the header catches a foreign or mismatched file,
    and the body must be the report its key names (:func:`_body_problem`).
    """
    try:
        header, _, text = _gunzip(raw).decode("utf-8").partition("\n")
        doc = json.loads(header)
        report = json.loads(text)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, ValueError) as e:
        return None, f"unreadable ({type(e).__name__})"
    if not isinstance(doc, dict) or doc.get("format") != CACHE_FORMAT or doc.get("key") != key.material:
        return None, "its header is not this key's"
    bad = _body_problem(report, key)
    if bad:
        return None, f"its body is not a report: {bad}"
    unbound = _binding_problem(doc.get("binding"), report, key)
    return (None, f"not bound to this key: {unbound}") if unbound else (text, "")


def _body_problem(body: Any, key: CacheKey) -> str | None:
    """Why ``body`` (parsed) is not what an entry of ``key`` holds, else None.

    A report key (:func:`make_key`) holds a :class:`Report`, or (``scope`` host) a :class:`HostReport`, checked
    field by field (``schema.problem``); any other key (the store's opaque strings) holds a JSON object."""
    if not isinstance(body, dict):
        return "not a JSON object"
    material = _material(key)
    if material is None:
        return None  # an opaque key
    return problem(HostReport if material.get("scope") == "host" else Report, body)


def _material(key: CacheKey) -> dict | None:
    """A report key's fields (:func:`make_key`), or None for the store's opaque keys."""
    try:
        material = json.loads(key.material)
    except ValueError:
        return None
    return material if isinstance(material, dict) and {"run", "session", "hosts"} <= material.keys() else None


def _key_files(material: dict) -> list[list]:
    """Every file of a report key as (path, size, mtime_ns), a host of several ranks flattened, and the files read
    beside them (``beside``: a snapshot's capacity record).  Why the latter: the key holds a side file's size and
    mtime only, and a record rewritten with other numbers of the same length under the same mtime (``touch -r``, a
    copy that keeps times) would serve the report of the old numbers; bound by its identity (a side file is read up
    to 64 KiB, so its two :data:`IDENTITY_BLOCK` ends are all of it), such an entry is a miss."""
    out = []
    for h in material.get("hosts") or []:
        for f in (h if h and isinstance(h[0], list) else [h]):
            out.append(list(f))
    out += [list(f) for f in material.get("beside") or [] if isinstance(f, list) and len(f) == 3]
    return out


def file_identity(path: str) -> list | None:
    """(size, mtime_ns, inode, digest of the first and last :data:`IDENTITY_BLOCK` bytes) of a local file, read
    through one descriptor; None when it is not a regular file now (gone, a FIFO, a device).  An object store's
    object: (size, mtime_ns) only, from the key."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(fsio.local_path(path), flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        import hashlib

        h = hashlib.sha256()
        h.update(os.pread(fd, IDENTITY_BLOCK, 0))
        if st.st_size > IDENTITY_BLOCK:
            h.update(os.pread(fd, IDENTITY_BLOCK, max(IDENTITY_BLOCK, st.st_size - IDENTITY_BLOCK)))
        return [int(st.st_size), int(st.st_mtime_ns), int(st.st_ino), h.hexdigest()[:32]]
    except OSError:
        return None
    finally:
        os.close(fd)


def identity_now(path: str, size: int, mtime: int) -> list:
    """A file's identity as of now: a local regular file's :func:`file_identity` (its content's two ends with its
    size, mtime and inode), else -- an object store's object, a file gone meanwhile -- the (size, mtime) it was
    listed with.  The one home of the key an entry is bound by, and the tab's in-memory key of a side file."""
    f = None if fsio.is_remote(path) else file_identity(path)
    return f if f else [size, mtime]


def side_identities(beside: Iterable) -> tuple:
    """Each file read beside a host (``HostFile.beside``: (path, size, mtime)) with its :func:`identity_now`: a side
    file rewritten with the same size under the same mtime (``touch -r``) is another identity (h37-memkind36: the
    tab's in-memory key held its size and mtime only, and kept serving the old record's report)."""
    return tuple((str(path), *identity_now(path, size, mtime)) for path, size, mtime in beside)


def binding(key: CacheKey) -> dict | None:
    """What binds an entry to a report key, as of now: its run, session and analyzer, and every file's identity
    (:func:`file_identity`; an object store's file: its size and mtime).  None for an opaque key."""
    material = _material(key)
    if material is None:
        return None
    files = [[path, *identity_now(path, size, mtime)] for path, size, mtime in _key_files(material)]
    return {"run": material["run"], "session": material["session"], "analyzer": material.get("analyzer"),
            "files": sorted(files)}


def _binding_problem(bound: Any, body: dict, key: CacheKey) -> str | None:
    """Why an entry (its header's ``bound``, its parsed ``body``) is not bound to ``key`` as the files are now, else
    None: the run, session and analyzer of the key and of the binding must be one, and the body's run and session
    too; the binding's file identities those of the files now.  (The body's own
    ``analyzer_version`` is a replaceable analysis' word -- precompute's hook, tests -- so the binding's counts.)"""
    material = _material(key)
    if material is None:
        return None
    if not isinstance(bound, dict):
        return "it carries no binding"
    for name in ("run", "session", "analyzer"):
        if bound.get(name) != material.get(name):
            return f"written for {name} {bound.get(name)!r}, not {material.get(name)!r}"
    stranger = _not_of_key(body, material)
    if stranger:
        return stranger
    now = binding(key)
    if bound.get("files") != now["files"]:  # type: ignore[index]
        changed = [f[0] for f, g in zip(now["files"], bound.get("files") or []) if f != g]  # type: ignore[index]
        return f"the file {changed[0] if changed else '?'!r} is not the one it was made from (replaced since)"
    return None


def _not_of_key(body: dict, material: dict) -> str | None:
    """Why a session report ``body`` is not of the run and session a key's ``material`` names, else None (a host
    report names neither: its binding does)."""
    if material.get("scope") != "host":
        for name in ("run", "session"):
            if body.get(name) != material[name]:
                return f"its report is of {name} {body.get(name)!r}, not {material[name]!r}"
    return None


#: Entries whose refusal was logged already (one warning per entry and process, however often it is asked for).
_WARNED: set[str] = set()


def _warn_once(path: str, why: str) -> None:
    """"removing cache entry ``path``: ``why``" as a WARNING the first time for ``path``, then at DEBUG (a refused
    entry may be asked for on every poll)."""
    first = path not in _WARNED
    if first and len(_WARNED) < 4096:
        _WARNED.add(path)
    logger.log(logging.WARNING if first else logging.DEBUG, "removing cache entry %s: %s", path, why)


def _gunzip(raw: bytes) -> bytes:
    """``gzip.decompress`` of one member, refusing more than ``MAX_ENTRY_BYTES`` of output (a gzip bomb)."""
    d = zlib.decompressobj(wbits=31)
    out = d.decompress(raw, MAX_ENTRY_BYTES + 1)
    if len(out) > MAX_ENTRY_BYTES or d.unconsumed_tail:
        raise ValueError("cache entry decompresses to more than MAX_ENTRY_BYTES")
    if not d.eof:
        raise EOFError("truncated cache entry")
    return out


def _atomic_write(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers never see a partial file."""
    folder = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=_TMP_PREFIX, suffix=".part", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        _remove(tmp)
        raise


def _remove(path: str) -> bool:
    try:
        os.unlink(path)
        return True
    except OSError:
        return False


# --- string-keyed store for the plugin's ReportService ------------------------------


def store_key(run: str, session: str, hosts: Sequence[HostFile], params: int | None = None,
              options: UserOptions | None = None) -> str:
    """The string key the plugin should hand to :class:`ReportStore` (same entry ``precompute`` writes with the
    same settings)."""
    return make_key(run, session, hosts, params=params, options=options).material


class ReportStore:
    """``get(key: str)`` / ``put(key: str, json_text)`` over a :class:`ReportCache` (report_service.Store).

    Keys may be :func:`store_key` strings (what the plugin passes), JSON of
    ``(run, session, [(host, path, size, mtime_ns), ...])`` (the plugin's earlier key form, translated to
    the same key ``precompute`` uses, so precomputed reports are found), or
    any other string (then versioned here, so a new analyzer never gets
    an old report).
    """

    def __init__(self, cache: ReportCache):
        self.cache = cache

    def get(self, key: str) -> str | None:
        return self.cache.get(self._key(key))

    def put(self, key: str, value: str) -> None:
        self.cache.put(self._key(key), value)

    @staticmethod
    def _key(key: str) -> CacheKey:
        try:
            doc = json.loads(key)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and doc.get("format") == CACHE_FORMAT and "hosts" in doc:
            return CacheKey(key)
        tuple_key = _plugin_tuple_key(doc)
        if tuple_key is not None:
            return tuple_key
        material = {"format": CACHE_FORMAT, "analyzer": analyzer_version(), "schema": schema_version(), "opaque": key}
        return CacheKey(json.dumps(material, sort_keys=True, separators=(",", ":")))


def _plugin_tuple_key(doc: Any) -> CacheKey | None:
    """make_key for ``[run, session, [[host, path, size, mtime_ns], ...]]``, else None."""
    if not (isinstance(doc, list) and len(doc) == 3 and isinstance(doc[0], str) and isinstance(doc[1], str)):
        return None
    hosts = []
    for h in doc[2] if isinstance(doc[2], list) else [None]:
        if not (isinstance(h, list) and len(h) == 4 and isinstance(h[2], int) and isinstance(h[3], int)):
            return None
        hosts.append(HostFile(str(h[0]), str(h[1]), h[2], h[3]))
    return make_key(doc[0], doc[1], hosts)


def open_store(directory: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> ReportStore | None:
    """The plugin's persistent store, or None when the cache is disabled or cannot be created.

    ``directory`` may be the raw ``TB_GPU_ADVISOR_CACHE_DIR`` value, so "off" etc. disable here too.
    """
    if directory is not None and directory.strip().lower() in DISABLED_VALUES:
        return None
    cache = ReportCache(directory or None, max_bytes=max_bytes)
    return ReportStore(cache) if cache.enabled else None
