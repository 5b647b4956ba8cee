"""The one entry point of the CLI, the tab and the MCP server: an :class:`Advisor` over one logdir.

As HTA's ``TraceAnalysis`` is one object whose methods each hand a question to its analyzer module, an Advisor
holds what every question about a logdir shares -- the logdir, the user's settings (``UserOptions``), the report
cache, whether symlinks inside the logdir are followed -- and each method hands the question to the module that
answers it in one line or two:

=======================  =================================================================================
discovery                :meth:`sessions`, :meth:`has_profiles`, :meth:`find_session`, :meth:`skipped`,
                         :meth:`misplaced`, :meth:`nothing_found`, :meth:`listing`, :func:`locate_file`
                         (``discover.logdir``, ``formats.probe``)
analysis                 :meth:`report` (a session's Report: the cache first, else analysed and stored;
                         ``runtime.session``), :meth:`report_json` (the tab's), :meth:`host_report`
                         (one host file, ``runtime.pipeline``), :meth:`files_unchanged`
cache                    :attr:`cache`, :meth:`session_key`, :meth:`host_key`, :meth:`store_key`,
                         :meth:`store` (``runtime.cache``)
windows                  :meth:`timelines_json` (a host's step timelines; ``runtime.pipeline``, in a limited
                         child process with ``isolate``)
=======================  =================================================================================

Nothing here is an analysis of its own; callers never reach past it into ``discover`` or the other runtime
modules (``tests/test_architecture.py``).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Sequence
from typing import Any

from tb_gpu_advisor import formats
from tb_gpu_advisor.common.options import UserOptions
from tb_gpu_advisor.discover import logdir as _discover
from tb_gpu_advisor.discover.logdir import ROOT_RUN, HostFile, Session, SessionNotFoundError
from tb_gpu_advisor.formats import probe as _probe
from tb_gpu_advisor.frameworks import how_to_capture
from tb_gpu_advisor.model.schema import HostReport, Report
from tb_gpu_advisor.report import timeline as _timeline
from tb_gpu_advisor.runtime import cache as _cache
from tb_gpu_advisor.runtime import isolation as _isolation
from tb_gpu_advisor.runtime import pipeline as _pipeline
from tb_gpu_advisor.runtime import session as _session
from tb_gpu_advisor.runtime.cache import CacheKey, ReportCache, ReportStore
from tb_gpu_advisor.runtime.isolation import GONE, failure_kind
from tb_gpu_advisor.runtime.session import Analysis, process_pool, worker_count

__all__ = ["Advisor", "Analysis", "CacheKey", "GONE", "HostFile", "ROOT_RUN", "ReportCache", "Session",
           "SessionNotFoundError", "expected_layouts", "failure_kind", "how_to_capture_text", "locate_file", "process_pool", "runs_listing", "worker_count"]

Progress = Callable[[str, float], None]


class Advisor:
    """One logdir and what every question about it shares.

    ``cache``: a :class:`ReportCache`, or a folder (None: ``$TB_GPU_ADVISOR_CACHE_DIR`` or the default; ``off``:
    none).  ``options``: the settings an analysis uses when the call gives none (None: the environment's, as the
    command line leaves them).  ``follow_symlinks``: symlinks that stay inside the logdir are followed (never one
    leading out; off by default).
    """

    def __init__(self, logdir: str, *, cache: ReportCache | str | None = None, options: UserOptions | None = None,
                 follow_symlinks: bool = False) -> None:
        self.logdir = logdir or ""
        self.cache = cache if isinstance(cache, ReportCache) else ReportCache(cache)
        self.options = options if options is not None else UserOptions.from_env()
        self.follow_symlinks = bool(follow_symlinks)

    def __repr__(self) -> str:
        return f"Advisor({self.logdir!r}, cache={self.cache!r}, follow_symlinks={self.follow_symlinks})"

    def options_for(self, options: UserOptions | None) -> UserOptions:
        """The settings of one call: the call's where given, else the Advisor's."""
        return options if options is not None else self.options

    # -- discovery -----------------------------------------------------------------------------------------

    def sessions(self) -> list[Session]:
        """Every session of the logdir, by run, newest first within a run (listed now)."""
        return _discover.discover(self.logdir, self.follow_symlinks) if self.logdir else []

    def has_profiles(self) -> bool:
        """True at the first host file found (cheap)."""
        return bool(self.logdir) and _discover.has_profiles(self.logdir, self.follow_symlinks)

    def find_session(self, run: str, session: str, sessions: Sequence[Session] | None = None) -> Session:
        """The session ``run``/``session`` (raises :class:`SessionNotFoundError` naming the choices)."""
        return _discover.find_session(list(self.sessions() if sessions is None else sessions), run, session)

    def skipped(self, limit: int = 50) -> list[tuple[str, str]]:
        """What discovery left out, with why (symlinks not followed or leading out, JSON that is no trace)."""
        return _discover.skipped(self.logdir, limit, self.follow_symlinks) if self.logdir else []

    def misplaced(self, limit: int = 5) -> list[tuple[str, str]]:
        """Profiles in the wrong folder layout, with the layout expected (for the "nothing found" message)."""
        return _discover.misplaced_profiles(self.logdir, limit)

    def nothing_found(self, follow_flag: str, skips: list[tuple[str, str]] | None = None) -> tuple[str, str] | None:
        """(headline, what to do) when the logdir lists nothing because of what was left out; None otherwise."""
        collections = _discover.counter_collections(self.logdir) if self.logdir else []
        skips = self.skipped(10) if skips is None else skips
        if self.logdir:  # a profiler's text summary is named, not passed over in silence
            skips = [*skips, *(x for x in _discover.text_summaries(self.logdir) if x not in skips)]
            skips = [*skips, *(x for x in _discover.foreign_captures(self.logdir) if x not in skips)]
            skips = [*skips, *(x for x in _discover.archived_profiles(self.logdir) if x not in skips)]
        return _discover.nothing_found(skips, follow_flag, collections)

    def listing(self, sessions: Sequence[Session] | None = None) -> list[dict[str, Any]]:
        """Runs -> sessions -> hosts as the tab's ``/runs`` and the MCP server's ``list_runs`` give them: discovery's
        order, each session's format (its name, whether the stock Profile tab and Perfetto open its files) and
        ``has_gpu`` (a cheap probe: True/False/None unknown), each host's size, mtime and file count."""
        sessions = list(self.sessions() if sessions is None else sessions)
        return runs_listing(sessions, _probe.session_activity(sessions))

    # -- analysis ------------------------------------------------------------------------------------------

    def report(self, session: Session, *, options: UserOptions | None = None, progress: Progress | None = None,
               jobs: int | None = 1, isolate: bool = False, analyze_fn: Callable[..., Any] | None = None,
               force: bool = False) -> Analysis:
        """The session's Report with its cache story (``runtime.session.session_report``): from the cache when
        stored, else analysed (``jobs`` host files at once) and stored.  ``isolate``: a one-host session is
        analysed in a child process with the worker limits, each host file of a session of many in one of its own
        (a long-lived server must not die with one file).
        ``force``: nothing read from the cache, every host analysed again (``precompute --force``)."""
        opts = self.options_for(options)
        limits = None
        if analyze_fn is None and isolate and len(session.hosts) == 1:
            analyze_fn = functools.partial(_isolated_session, opts)
        elif analyze_fn is None and isolate:  # each host file in its own limited child
            limits = _isolation.Limits.from_env(session.hosts)
        return _session.session_report(session, cache=self.cache, progress=progress, jobs=jobs,
                                       analyze_fn=analyze_fn, options=opts, force=force, limits=limits)

    def report_json(self, session: Session, hosts: Sequence[HostFile], *, progress: Progress, jobs: int = 1,
                    isolate: bool = False, options: UserOptions | None = None,
                    analyze_fn: Callable[..., Any] | None = None) -> str:
        """The tab's report JSON of ``hosts`` of ``session`` (``runtime.session.compute_json``: merged from the
        per-host cache when every host is there, else analysed, each host in a limited child with ``isolate``)."""
        return _session.compute_json(session, hosts, progress=progress, jobs=jobs, isolate=isolate,
                                     analyze_fn=analyze_fn, cache=self.cache, options=self.options_for(options))

    def host_report(self, host: HostFile, options: UserOptions | None = None, session: Session | None = None) -> HostReport:
        """One host file's report, in this process (``runtime.pipeline.analyze_host``); ``session`` (the one that
        holds it): its job's ranks in sibling run folders on the host's clock are placed as the session's analysis
        places them (``pipeline.clock_files``)."""
        ranks = session.linked_ranks if session is not None else None
        return _pipeline.analyze_host(host, options=self.options_for(options),
                                      peer_files=_pipeline.clock_files(ranks, host))

    @staticmethod
    def files_unchanged(hosts: Sequence[HostFile]) -> bool:
        """Every file behind ``hosts`` still has the size and mtime it was listed with."""
        return _session.files_unchanged(hosts)

    @staticmethod
    def side_identities(host: HostFile) -> tuple:
        """The files read beside ``host`` with their identity now, content included (``cache.side_identities``):
        the tab's in-memory key of them is the disk cache's binding of them."""
        return _cache.side_identities(getattr(host, "beside", ()))

    # -- cache ---------------------------------------------------------------------------------------------

    def session_key(self, session: Session, options: UserOptions | None = None) -> CacheKey:
        return _cache.session_key(session, options=self.options_for(options))

    def host_key(self, session: Session, host: HostFile, options: UserOptions | None = None) -> CacheKey:
        return _cache.host_key(session, host, options=self.options_for(options))

    def store_key(self, session: Session, hosts: Sequence[HostFile], options: UserOptions | None = None) -> str:
        """The persistent store's key of ``hosts`` of ``session`` (the entry precompute writes with these settings)."""
        return _cache.store_key(session.run, session.session, list(hosts), options=self.options_for(options))

    def store(self) -> ReportStore | None:
        """The cache as the tab's persistent store (None when the cache is off)."""
        return ReportStore(self.cache) if self.cache.enabled else None

    # -- windows -------------------------------------------------------------------------------------------

    def timelines_json(self, host: HostFile, windows: Sequence[tuple[float, float]],
                       max_events: int = _timeline.MAX_EVENTS, *, isolate: bool = False,
                       progress: Progress | None = None) -> str:
        """The step timeline of each window of ``host`` (one read of the file), as a JSON list; in a limited child
        process with ``isolate``."""
        if isolate:
            return _isolation.call(_isolation.timelines_json, host, list(windows), max_events, progress=progress,
                                   limits=_isolation.Limits.from_env([host]))
        return json.dumps(_pipeline.host_timelines(host, list(windows), max_events))


def _isolated_session(options: UserOptions, run: str, session: str, hosts: list, progress: Progress | None = None,
                      params: int | None = None, rank_runs: Any = None) -> Report:
    """A session analysed in a child process with the worker limits (``isolation.Limits.from_env``), with
    ``options`` (``params``: the older keyword :func:`runtime.session.session_report` passes, the same value)."""
    return Report.from_json(_isolation.call(_isolation.analyze_session_json, run, session, list(hosts), options,
                                            rank_runs, progress=progress, limits=_isolation.Limits.from_env(hosts)))


def runs_listing(sessions: Sequence[Session], has_gpu: dict | None = None) -> list[dict[str, Any]]:
    """Groups sessions by run, keeping discovery's order (runs by name, newest session first).

    ``mtime_ms`` lets the frontend pick the newest session across runs; ``has_gpu`` (True/False/None) the newest with
    GPU activity; ``stock_tool``, ``perfetto`` and ``native_viewer`` say which viewers open the session's files as they
    are.
    """
    runs: dict[str, list[dict[str, Any]]] = {}
    for s in sessions:
        fmt = formats.get(s.format)
        hosts = [{"host": h.host, "size": h.size, "mtime_ms": h.mtime_ns / 1e6, "files": len(h.ranks) or 1}
                 for h in s.hosts]
        runs.setdefault(s.run, []).append(
            {
                "session": s.session,
                "stock_run": s.stock_run,
                "format": s.format,
                "format_name": fmt.name,
                "stock_tool": fmt.stock_tool_opens,
                "perfetto": fmt.perfetto_opens,
                "native_viewer": fmt.native_viewer,
                "mtime_ms": max((h["mtime_ms"] for h in hosts), default=0.0),
                "has_gpu": (has_gpu or {}).get((s.run, s.session)),
                "hosts": hosts,
                "same_job": list(s.same_job),  # another format's capture of the same job (discover._same_job)
                "rank_runs": list(s.rank_runs),  # the job's other ranks in sibling run folders (discover._rank_folders)
            }
        )
    return [{"run": run, "sessions": sessions_} for run, sessions_ in runs.items()]


def locate_file(path: str, follow_symlinks: bool = False) -> tuple[str, Session, HostFile] | None:
    """The (logdir, session, host) of one local profile file given by path (``report FILE``, ``diff FILE FILE``)."""
    return _discover.locate_file(path, follow_symlinks)


def expected_layouts() -> list[str]:
    """Each format's folder layout, as a user is told it."""
    return _discover.expected_layouts()


def why_not_read(path: str) -> str | None:
    """Why a file whose content a format may claim (an ``.sqlite``) was not read as one, in words (``report FILE``
    of an unreadable export says that, not which files are read); None when no format's layout looks at it."""
    rel = (os.path.basename(path),)
    looked = any(f.layout.maybe(rel) or f.layout.claims(rel) for f in formats.REGISTRY.values())
    # a profile's name, and content that stands in for the profile: a Git LFS pointer, a binary converted to text
    pointer = (formats.lfs_pointer(path) or formats.text_decoded(path)) if looked else None
    placed = tuple(os.path.abspath(path).split(os.sep)[-4:])  # another writer's file in a format's place
    unread = next((why for f in formats.REGISTRY.values() if (why := f.layout.unread(placed)) is not None), None)
    foreign = formats.foreign_capture(path)  # another tool's capture by its bytes, whatever its name
    return pointer or foreign or unread or _discover.counter_file(path) or _discover.summary_file(path) or _discover.archive_file(path) or next((f.layout.refused(path) for f in formats.REGISTRY.values()
                                      if f.layout.maybe(rel)), None)


def how_to_capture_text() -> str:
    """How to capture a profile in each framework, and where each format's files go."""
    return how_to_capture({f.id: f.layout.expected for f in formats.REGISTRY.values()})
