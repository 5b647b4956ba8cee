"""Find profile sessions in a logdir and name them exactly as the stock Profile tab does.

Layout: ``<logdir>/<run>/plugins/profile/<session>/<host>.xplane.pb``, where
``<run>`` may be nested (``job/tensorboard``) or the logdir itself (run
``"."``).  The stock tab's run name is ``<run>/<session>``, or just
``<session>`` for run ``"."`` (xprof ``profile_plugin.generate_runs``), so a
link from the Advisor into the Profile tab uses :attr:`Session.stock_run`.

We discover runs ourselves because TensorBoard's run list skips folders
without event files, and a profile-only run is common.

Walk rules (why):

* Local logdirs are walked with ``os.scandir`` (entry types come from the
  directory listing, no ``stat`` per entry), so 10,000 runs take well under
  a second.  Below a ``plugins`` folder only ``plugins/profile`` is looked
  at, and only one level below each session folder: the other plugins'
  assets and the stock tool's cache files can be large and never hold
  profiles.
* Remote logdirs (``s3://``, ``gs://``, ...) are one flat listing
  (:func:`fsio.remote_walk`) matched against the layout, because per-folder
  requests to an object store are slow.
* Symlinks are followed only when they resolve inside the logdir, and never
  into a folder already on the current path (no loops); the Advisor must not
  read files outside the logdir.
* Unreadable folders are skipped with a warning instead of failing the
  whole listing.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from . import fsio

logger = logging.getLogger(__name__)

HOST_SUFFIX = ".xplane.pb"
PLUGINS_DIR = "plugins"
PROFILE_DIR = "profile"
ROOT_RUN = "."
#: Session folders are normally named after the capture time, e.g. 2026_11_21_11_04_16.
_SESSION_TIME_FORMAT = "%Y_%m_%d_%H_%M_%S"
_SESSION_TIME = re.compile(r"^\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}$")
#: Guard against pathological trees; real logdirs are a handful of levels deep.
MAX_DEPTH = 256
#: Relative path of a host file in a remote listing: [<run>/]plugins/profile/<session>/<host>.xplane.pb
_REMOTE_HOST = re.compile(
    r"^(?:(?P<run>.+)/)?" + PLUGINS_DIR + "/" + PROFILE_DIR + r"/(?P<session>[^/]+)/(?P<file>[^/]+)$"
)


@dataclass(frozen=True)
class HostFile:
    """One ``<host>.xplane.pb``; (path, size, mtime_ns) is its identity for caching."""

    host: str
    path: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Session:
    """One capture: a folder under ``<run>/plugins/profile`` with one file per host."""

    run: str  # "." when the TensorBoard run is the logdir itself
    session: str
    path: str
    hosts: tuple[HostFile, ...]

    @property
    def stock_run(self) -> str:
        """The run name the stock Profile tab uses (its ``?run=`` parameter)."""
        return self.session if self.run == ROOT_RUN else f"{self.run}/{self.session}"

    @property
    def size(self) -> int:
        """Total bytes of its host files (lets callers pick a progress message or parallelism)."""
        return sum(h.size for h in self.hosts)


class SessionNotFoundError(KeyError):
    """No discovered session has this run and session name."""

    def __str__(self) -> str:  # KeyError would print the message in quotes
        return str(self.args[0]) if self.args else "session not found"


def discover(logdir: str) -> list[Session]:
    """All sessions with at least one host file, sorted by run, then newest session first.

    A missing logdir gives ``[]`` (TensorBoard may start before training
    writes anything).
    """
    if fsio.is_remote(logdir):
        groups = _remote_groups(logdir)
    else:
        groups = _local_groups(fsio.local_path(logdir))
    sessions = [
        Session(run, session, path, tuple(sorted(hosts, key=lambda h: h.host)))
        for (run, session, path), hosts in groups.items()
        if hosts
    ]
    return _sorted(sessions)


def has_profiles(logdir: str) -> bool:
    """True as soon as one ``*.xplane.pb`` is found in the layout (cheap: for ``is_active``)."""
    try:
        if fsio.is_remote(logdir):
            return any(_remote_host_match(f.rel) for f in fsio.remote_walk(logdir))
        root = fsio.local_path(logdir)
        for _run, profile_dir, chain in _local_profile_dirs(root):
            for _session, session_dir, session_chain in _local_sessions(root, profile_dir, chain):
                if next(_local_host_files(root, session_dir, session_chain, with_stat=False), None):
                    return True
    except Exception as e:  # noqa: BLE001 - a listing failure means "nothing to show", not a crash
        logger.warning("cannot list %s: %s", logdir, e)
    return False


#: What a misplaced profile is told (CLI, and anything else that explains an empty logdir).
EXPECTED_LAYOUT = "<run>/plugins/profile/<session>/<host>" + HOST_SUFFIX
#: Bounds of the search for misplaced profiles: only done when nothing was found, and never a full crawl.
_MISPLACED_MAX_DEPTH = 8
_MISPLACED_MAX_DIRS = 20_000


def misplaced_profiles(logdir: str, limit: int = 5) -> list[str]:
    """``*.xplane.pb`` files in ``logdir`` that are not where :func:`discover` looks, as paths relative to it.

    For the "no profiles found" message: a profile copied straight into the logdir (``x.xplane.pb``),
    or into a session folder without ``plugins/profile`` above it, is a wrong folder layout, which users
    should be told instead of "no profiles".  At most ``limit`` paths; the local search is bounded in depth
    and folders (symlinks are not followed), the remote one reads the same flat listing as :func:`discover`.
    Never raises: a listing failure gives what was found so far.
    """
    found: list[str] = []
    try:
        if fsio.is_remote(logdir):
            for f in fsio.remote_walk(logdir):
                if _host_of(f.rel.rsplit("/", 1)[-1]) is not None and _remote_host_match(f.rel) is None:
                    found.append(f.rel)
                    if len(found) >= limit:
                        break
            return found
        root = fsio.local_path(logdir)
        stack: list[tuple[str, int]] = [(root, 0)]
        seen_dirs = 0
        while stack and len(found) < limit and seen_dirs < _MISPLACED_MAX_DIRS:
            path, depth = stack.pop()
            seen_dirs += 1
            subdirs = []
            for entry in sorted(_scandir(path), key=lambda e: e.name):
                try:
                    if entry.is_dir(follow_symlinks=False):
                        subdirs.append(entry.path)
                    elif _host_of(entry.name) is not None and entry.is_file(follow_symlinks=False):
                        rel = os.path.relpath(entry.path, root).replace(os.sep, "/")
                        if _remote_host_match(rel) is None:
                            found.append(rel)
                            if len(found) >= limit:
                                break
                except OSError:
                    continue
            if depth + 1 < _MISPLACED_MAX_DEPTH:
                stack.extend((d, depth + 1) for d in reversed(subdirs))
    except Exception as e:  # noqa: BLE001 - only a hint for an error message
        logger.debug("cannot search %s for misplaced profiles: %s", logdir, e)
    return found


def find_session(sessions: Iterable[Session], run: str, session: str) -> Session:
    """The discovered session named (run, session); raises :class:`SessionNotFoundError`.

    Request handlers map names to files only through this lookup, never by
    joining request parameters onto paths.
    """
    for s in sessions:
        if s.run == run and s.session == session:
            return s
    raise SessionNotFoundError(f"no profile session {session!r} in run {run!r} (refresh the run list?)")


def find_stock_run(sessions: Iterable[Session], stock_run: str) -> Session:
    """The session the stock Profile tab calls ``stock_run`` (``<run>/<session>`` or ``<session>``)."""
    run, _, session = stock_run.rpartition("/")
    return find_session(sessions, run or ROOT_RUN, session)


# --- ordering -----------------------------------------------------------------


def _newest_key(s: Session) -> float:
    """Capture time from the folder name (the profiler names it so), else the newest file's mtime."""
    if _SESSION_TIME.match(s.session):
        try:
            return time.mktime(time.strptime(s.session, _SESSION_TIME_FORMAT))
        except (ValueError, OverflowError):
            pass
    return max(h.mtime_ns for h in s.hosts) / 1e9


def _sorted(sessions: list[Session]) -> list[Session]:
    """Run ascending; within a run newest first (ties: name descending, so the order is stable)."""
    sessions.sort(key=lambda s: s.session, reverse=True)
    sessions.sort(key=_newest_key, reverse=True)
    sessions.sort(key=lambda s: s.run)
    return sessions


# --- local walk -------------------------------------------------------------------

Groups = dict[tuple[str, str, str], list[HostFile]]


def _local_groups(root: str) -> Groups:
    groups: Groups = {}
    for run, profile_dir, chain in _local_profile_dirs(root):
        for session, session_dir, session_chain in _local_sessions(root, profile_dir, chain):
            hosts = list(_local_host_files(root, session_dir, session_chain, with_stat=True))
            groups.setdefault((run, session, session_dir), []).extend(hosts)
    return groups


def _scandir(path: str) -> list[os.DirEntry]:
    """Entries of ``path``, or [] with a warning when it cannot be listed."""
    try:
        with os.scandir(path) as it:
            return list(it)
    except FileNotFoundError:
        return []  # removed while we walked (or a missing logdir): nothing to report
    except OSError as e:
        logger.warning("skipping unreadable folder %s: %s", path, e)
        return []


def _inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def _follow(entry: os.DirEntry, real_root: str, chain: tuple[str, ...], want_dir: bool) -> tuple[bool, tuple[str, ...]]:
    """Whether to use ``entry`` as a folder (``want_dir``) or file, and the symlink chain below it.

    Plain entries are used as they are.  A symlink is used only if it
    resolves inside the logdir and (for folders) not onto a folder already
    entered through a symlink on this path or an ancestor of it, which would
    loop.
    """
    try:
        if not entry.is_symlink():
            ok = entry.is_dir(follow_symlinks=False) if want_dir else entry.is_file(follow_symlinks=False)
            return ok, chain
        real = os.path.realpath(entry.path)
        if not _inside(real, real_root):
            logger.debug("ignoring symlink leaving the logdir: %s -> %s", entry.path, real)
            return False, chain
        if not want_dir:
            return os.path.isfile(real), chain
        if not os.path.isdir(real) or real in chain:
            return False, chain
        here = os.path.realpath(os.path.dirname(entry.path))
        if _inside(here, real):  # link to an ancestor (or itself): a loop
            return False, chain
        return True, chain + (real,)
    except OSError:
        return False, chain


def _local_profile_dirs(root: str) -> Iterator[tuple[str, str, tuple[str, ...]]]:
    """(run, ``<run>/plugins/profile`` path, symlink chain) for every run folder, depth first.

    Does not descend into ``plugins`` folders: below them only
    ``plugins/profile`` matters and it is yielded here.
    """
    real_root = os.path.realpath(root)
    stack: list[tuple[str, str, tuple[str, ...], int]] = [(root, ROOT_RUN, (), 0)]
    while stack:
        path, run, chain, depth = stack.pop()
        subdirs: list[tuple[str, str, tuple[str, ...]]] = []
        for entry in _scandir(path):
            is_dir, sub_chain = _follow(entry, real_root, chain, want_dir=True)
            if not is_dir:
                continue
            if entry.name == PLUGINS_DIR:
                profile = os.path.join(entry.path, PROFILE_DIR)
                profile_entry = _entry(entry.path, PROFILE_DIR)
                if profile_entry is not None:
                    ok, profile_chain = _follow(profile_entry, real_root, sub_chain, want_dir=True)
                    if ok:
                        yield run, profile, profile_chain
                continue
            sub_run = entry.name if run == ROOT_RUN else f"{run}/{entry.name}"
            subdirs.append((entry.path, sub_run, sub_chain))
        if depth + 1 >= MAX_DEPTH:
            if subdirs:
                logger.warning("not descending below %s: more than %d levels deep", path, MAX_DEPTH)
            continue
        for sub_path, sub_run, sub_chain in sorted(subdirs, reverse=True):
            stack.append((sub_path, sub_run, sub_chain, depth + 1))


def _entry(parent: str, name: str) -> os.DirEntry | None:
    """The directory entry ``name`` in ``parent`` (scandir, so symlinks can be checked)."""
    for entry in _scandir(parent):
        if entry.name == name:
            return entry
    return None


def _local_sessions(root: str, profile_dir: str, chain: tuple[str, ...]) -> Iterator[tuple[str, str, tuple[str, ...]]]:
    """(session name, path, symlink chain) of each folder directly in ``plugins/profile``."""
    real_root = os.path.realpath(root)
    for entry in _scandir(profile_dir):
        ok, sub_chain = _follow(entry, real_root, chain, want_dir=True)
        if ok:
            yield entry.name, entry.path, sub_chain


def _local_host_files(root: str, session_dir: str, chain: tuple[str, ...], with_stat: bool) -> Iterator[HostFile]:
    """``*.xplane.pb`` files directly in a session folder (other files, e.g. the stock cache, ignored)."""
    real_root = os.path.realpath(root)
    for entry in _scandir(session_dir):
        host = _host_of(entry.name)
        if host is None:
            continue
        ok, _ = _follow(entry, real_root, chain, want_dir=False)
        if not ok:
            continue
        if not with_stat:
            yield HostFile(host, entry.path, 0, 0)
            continue
        try:
            st = entry.stat(follow_symlinks=True)
        except OSError as e:
            logger.warning("skipping unreadable profile %s: %s", entry.path, e)
            continue
        yield HostFile(host, entry.path, st.st_size, st.st_mtime_ns)


def _host_of(file_name: str) -> str | None:
    """Host name of a profile file name, or None for any other file."""
    if file_name.endswith(HOST_SUFFIX) and len(file_name) > len(HOST_SUFFIX):
        return file_name[: -len(HOST_SUFFIX)]
    return None


# --- remote listing ---------------------------------------------------------------


def _remote_host_match(rel: str) -> re.Match[str] | None:
    """The layout match of a relative object path, or None when it is not a host file we would find locally.

    Mirrors the local walk's pruning: a run never has a ``plugins`` folder
    in its path, and hosts sit directly in the session folder.
    """
    m = _REMOTE_HOST.match(rel)
    if m is None or _host_of(m.group("file")) is None:
        return None
    run = m.group("run")
    if run is not None and PLUGINS_DIR in run.split("/"):
        return None
    return m


def _remote_groups(logdir: str) -> Groups:
    base = logdir.rstrip("/")
    groups: Groups = {}
    try:
        files: Sequence[fsio.RemoteFile] = list(fsio.remote_walk(logdir))
    except Exception as e:  # noqa: BLE001 - missing bucket, no credentials, ...: report and show nothing
        logger.warning("cannot list %s: %s", logdir, e)
        return groups
    for f in files:
        m = _remote_host_match(f.rel)
        if m is None:
            continue
        run = m.group("run") or ROOT_RUN
        session = m.group("session")
        prefix = f"{m.group('run')}/" if m.group("run") else ""
        session_path = f"{base}/{prefix}{PLUGINS_DIR}/{PROFILE_DIR}/{session}"
        host = HostFile(_host_of(m.group("file")) or "", f"{base}/{f.rel}", f.size, f.mtime_ns)
        groups.setdefault((run, session, session_path), []).append(host)
    return groups
