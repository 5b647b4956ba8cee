"""Find profile sessions in a logdir and name them exactly as the stock Profile tab does.

Two formats, each host file tagged with its own (``HostFile.format``):

* XPlane (TensorFlow, JAX): ``<logdir>/<run>/plugins/profile/<session>/<host>.xplane.pb``;
* Kineto (PyTorch ``torch.profiler.tensorboard_trace_handler``):
  ``<logdir>/<run>/<worker>.<time_ns>.pt.trace.json[.gz]``, worker ``<hostname>_<pid>`` by default.
  Every folder holding such files is a run; its files are grouped into hosts by worker and into
  sessions by profiling cycle: each worker's files sorted by time, the k-th file of every worker
  belongs to cycle k (``schedule(..., repeat=N)`` writes one file per worker per cycle; ranks of one
  cycle write seconds apart).  A worker that missed a cycle shifts its later files one cycle early:
  the rule cannot tell a missing cycle from a late one without reading the files.  The session is
  named after the cycle's earliest ``time_ns`` (UTC, ``%Y_%m_%d_%H_%M_%S``; ``_<k>`` added on a
  collision, ``cycle_<k>`` when the names carry no time).

XPlane layout details: ``<run>``
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

from tb_gpu_advisor.common import fsio

logger = logging.getLogger(__name__)

HOST_SUFFIX = ".xplane.pb"
PLUGINS_DIR = "plugins"
PROFILE_DIR = "profile"
ROOT_RUN = "."
#: Session folders are normally named after the capture time, e.g. 2026_11_21_11_04_16.
_SESSION_TIME_FORMAT = "%Y_%m_%d_%H_%M_%S"
_SESSION_TIME = re.compile(r"^\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}$")
#: PyTorch trace file endings (``tensorboard_trace_handler``, ``use_gzip=True`` for the second).
KINETO_SUFFIXES = (".pt.trace.json", ".pt.trace.json.gz")
#: Guard against pathological trees; real logdirs are a handful of levels deep.
MAX_DEPTH = 256
#: Relative path of a host file in a remote listing: [<run>/]plugins/profile/<session>/<host>.xplane.pb
_REMOTE_HOST = re.compile(
    r"^(?:(?P<run>.+)/)?" + PLUGINS_DIR + "/" + PROFILE_DIR + r"/(?P<session>[^/]+)/(?P<file>[^/]+)$"
)


@dataclass(frozen=True)
class HostFile:
    """One host's file (``<host>.xplane.pb`` or a worker's ``.pt.trace.json``); (path, size, mtime_ns) is its
    identity for caching, ``format`` names the reader (``formats.READERS``)."""

    host: str
    path: str
    size: int
    mtime_ns: int
    format: str = "xplane"
    #: PyTorch ranks of one machine analysed as one host (their GPUs side by side): the ranks' own files, in
    #: worker order; ``path`` is the first's, ``size`` the sum, ``mtime_ns`` the latest.  Empty: one file.
    ranks: tuple["HostFile", ...] = ()

    def identity(self) -> list:
        """(path, size, mtime_ns) of every file behind this host: what must not change for a cached report."""
        files = self.ranks or (self,)
        return [[f.path, int(f.size), int(f.mtime_ns)] for f in files]


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
    def format(self) -> str:
        """``xplane`` or ``kineto``: one format per session (a run folder of PyTorch traces is its own run)."""
        return self.hosts[0].format if self.hosts else "xplane"

    @property
    def stock_tool_opens(self) -> bool:
        """Whether the stock Profile tab can open this session (it reads XPlane only): trace links need it."""
        return self.format == "xplane"

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
    """True as soon as one ``*.xplane.pb`` in the layout, or one PyTorch trace, is found (cheap: for ``is_active``)."""
    try:
        if fsio.is_remote(logdir):
            return any(_remote_host_match(f.rel) or _remote_trace_match(f.rel) for f in fsio.remote_walk(logdir))
        root = fsio.local_path(logdir)
        traces: list = []
        for _run, profile_dir, chain in _local_profile_dirs(root, traces):
            if traces:
                return True
            for _session, session_dir, session_chain in _local_sessions(root, profile_dir, chain):
                if next(_local_host_files(root, session_dir, session_chain, with_stat=False), None):
                    return True
        return bool(traces)
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
    traces: list[tuple[str, str, HostFile]] = []
    for run, profile_dir, chain in _local_profile_dirs(root, traces):
        for session, session_dir, session_chain in _local_sessions(root, profile_dir, chain):
            hosts = list(_local_host_files(root, session_dir, session_chain, with_stat=True))
            groups.setdefault((run, session, session_dir), []).extend(hosts)
    _group_kineto(traces, groups)
    return groups


# --- PyTorch traces -----------------------------------------------------------------


def kineto_worker(file_name: str) -> tuple[str, int | None] | None:
    """(worker, time_ns or None) of a ``<worker>.<time_ns>.pt.trace.json[.gz]`` name, None for any other file."""
    for suffix in KINETO_SUFFIXES:
        if file_name.endswith(suffix) and len(file_name) > len(suffix):
            stem = file_name[: -len(suffix)]
            worker, dot, stamp = stem.rpartition(".")
            if dot and worker and stamp.isdigit():
                return worker, int(stamp)
            return stem, None
    return None


def _cycle_name(time_ns: int | None, k: int) -> str:
    """A cycle's session name: its earliest write time as the XPlane session folders are named (UTC)."""
    if time_ns is None:
        return f"cycle_{k}"
    try:
        return time.strftime(_SESSION_TIME_FORMAT, time.gmtime(time_ns / 1e9))
    except (OverflowError, OSError, ValueError):
        return f"cycle_{k}"


def _group_kineto(traces: list[tuple[str, str, HostFile]], groups: Groups) -> None:
    """Add (run, session, run folder) groups of PyTorch traces: hosts by worker, sessions by profiling cycle.

    ``traces``: (run, run folder, host file) with ``host`` = the worker.  Each worker's files sorted by
    (time_ns, name): its k-th file is in cycle k (see the module docstring for the rule and its limit).
    """
    by_run: dict[tuple[str, str], dict[str, list[tuple[int, str, HostFile]]]] = {}
    for run, folder, hf in traces:
        stamp = kineto_worker(os.path.basename(hf.path))
        t = stamp[1] if stamp and stamp[1] is not None else -1
        by_run.setdefault((run, folder), {}).setdefault(hf.host, []).append((t, hf.path, hf))
    for (run, folder), workers in by_run.items():
        cycles: dict[int, list[tuple[int, HostFile]]] = {}
        for files in workers.values():
            for k, (t, _, hf) in enumerate(sorted(files, key=lambda x: (x[0], x[1]))):
                cycles.setdefault(k, []).append((t, hf))
        used: set[str] = set()
        for k in sorted(cycles):
            times = [t for t, _ in cycles[k] if t >= 0]
            name = _cycle_name(min(times) if times else None, k)
            if name in used:
                name = f"{name}_{k}"
            used.add(name)
            groups.setdefault((run, name, folder), []).extend(by_machine([hf for _, hf in cycles[k]]))


def kineto_machine(worker: str) -> str:
    """``<host>_<pid>`` (the handler's default worker name) -> ``<host>``; another name is its own machine."""
    head, sep, tail = worker.rpartition("_")
    return head if sep and head and tail.isdigit() else worker


def by_machine(files: list[HostFile]) -> list[HostFile]:
    """One host per machine: the ranks of one machine (workers ``<host>_<pid>``) become one host whose GPUs
    are the ranks' GPUs, so the multi-GPU checks (imbalance, launch skew, AllReduce) compare them, on the
    clock they share."""
    machines: dict[str, list[HostFile]] = {}
    for hf in files:
        machines.setdefault(kineto_machine(hf.host), []).append(hf)
    out = []
    for machine, hfs in machines.items():
        if len(hfs) == 1:
            out.append(hfs[0])
            continue
        hfs.sort(key=_worker_order)
        out.append(HostFile(machine, hfs[0].path, sum(h.size for h in hfs), max(h.mtime_ns for h in hfs), "kineto",
                            tuple(hfs)))
    return out


def _worker_order(hf: HostFile) -> tuple[str, int, str]:
    """Workers by machine, then pid as a number (rank order when ranks start in order), then name."""
    head, _, tail = hf.host.rpartition("_")
    return (head, int(tail), hf.host) if tail.isdigit() else (hf.host, -1, hf.host)


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


def _local_profile_dirs(root: str, traces: list | None = None) -> Iterator[tuple[str, str, tuple[str, ...]]]:
    """(run, ``<run>/plugins/profile`` path, symlink chain) for every run folder, depth first.

    Does not descend into ``plugins`` folders: below them only
    ``plugins/profile`` matters and it is yielded here.  With ``traces``, the PyTorch trace files of every
    folder walked are appended to it as (run, folder, HostFile) (the same walk: no second pass).
    """
    real_root = os.path.realpath(root)
    stack: list[tuple[str, str, tuple[str, ...], int]] = [(root, ROOT_RUN, (), 0)]
    while stack:
        path, run, chain, depth = stack.pop()
        subdirs: list[tuple[str, str, tuple[str, ...]]] = []
        for entry in _scandir(path):
            if traces is not None and kineto_worker(entry.name) is not None:
                hf = _kineto_file(entry, real_root, chain)
                if hf is not None:
                    traces.append((run, path, hf))
                continue
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


def _kineto_file(entry: os.DirEntry, real_root: str, chain: tuple[str, ...]) -> HostFile | None:
    """The host file of a PyTorch trace entry (a plain file, or a symlink inside the logdir), None otherwise."""
    ok, _ = _follow(entry, real_root, chain, want_dir=False)
    if not ok:
        return None
    try:
        st = entry.stat(follow_symlinks=True)
    except OSError as e:
        logger.warning("skipping unreadable trace %s: %s", entry.path, e)
        return None
    worker = kineto_worker(entry.name)
    return HostFile(worker[0] if worker else entry.name, entry.path, st.st_size, st.st_mtime_ns, "kineto")


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


def _remote_trace_match(rel: str) -> tuple[str, str] | None:
    """(run, file name) of a PyTorch trace in a remote listing, None for other objects (or ones under ``plugins``)."""
    folder, _, name = rel.rpartition("/")
    if kineto_worker(name) is None or PLUGINS_DIR in folder.split("/"):
        return None
    return (folder or ROOT_RUN), name


def _remote_groups(logdir: str) -> Groups:
    base = logdir.rstrip("/")
    groups: Groups = {}
    try:
        files: Sequence[fsio.RemoteFile] = list(fsio.remote_walk(logdir))
    except Exception as e:  # noqa: BLE001 - missing bucket, no credentials, ...: report and show nothing
        logger.warning("cannot list %s: %s", logdir, e)
        return groups
    traces: list[tuple[str, str, HostFile]] = []
    for f in files:
        t = _remote_trace_match(f.rel)
        if t is not None:
            run, name = t
            worker = kineto_worker(name)
            folder = base if run == ROOT_RUN else f"{base}/{run}"
            traces.append((run, folder, HostFile(worker[0] if worker else name, f"{base}/{f.rel}", f.size, f.mtime_ns, "kineto")))
            continue
        m = _remote_host_match(f.rel)
        if m is None:
            continue
        run = m.group("run") or ROOT_RUN
        session = m.group("session")
        prefix = f"{m.group('run')}/" if m.group("run") else ""
        session_path = f"{base}/{prefix}{PLUGINS_DIR}/{PROFILE_DIR}/{session}"
        host = HostFile(_host_of(m.group("file")) or "", f"{base}/{f.rel}", f.size, f.mtime_ns)
        groups.setdefault((run, session, session_path), []).append(host)
    _group_kineto(traces, groups)
    return groups
