"""The one analysis entry point: a session's Report for the CLI, the tab and precompute.

Everything that turns profile files into a report goes through here:

* :func:`session_report` -- the Report of a session, from the report cache when stored there (same key for
  ``report``, ``diff``, ``precompute`` and the tab), else analysed and stored.  What could not be stored (a
  host failed, a file changed while it was read, a read-only or full cache) is said, never hidden.
* :func:`compute_json` -- the tab's computation (its own service caches the JSON): in this process, one host
  file per worker process, or each host in a limited child process (``isolation``).
* :func:`analyze_session_parallel` -- the host files of one session in parallel, merged into one Report.

Workers start from the forkserver (``isolation.mp_context``), never a plain fork of TensorBoard's threaded process.

Every function takes the user's settings as ``options`` (``common.options.UserOptions``), hands them to each worker
with its host file and keys the cache with them: the tab serves several settings at once.  ``params=`` (the older
keyword) still works; no options given means the command line's (``UserOptions.of``).
"""

from __future__ import annotations

import concurrent.futures as cf
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tb_gpu_advisor.common import fsio, thresholds
from tb_gpu_advisor.common.fmt import plural
from tb_gpu_advisor.common.options import UserOptions
from tb_gpu_advisor.discover.logdir import HostFile, Session, with_beside
from tb_gpu_advisor.model.schema import HostReport, Report
from tb_gpu_advisor.report.merge import merge_hosts
from tb_gpu_advisor.runtime import isolation, pipeline
from tb_gpu_advisor.runtime.cache import ReportCache, host_key, session_key
from tb_gpu_advisor.runtime.isolation import Limits, mp_context

Progress = Callable[[str, float], None]


@dataclass
class Analysis:
    """A session's report and what happened to it in the cache."""

    report: Any  # report_schema.Report
    from_cache: bool = False
    stored: bool = False
    #: why a newly analysed report was not stored (None: stored, or came from the cache)
    not_stored: str | None = None


def session_report(session: Session, *, params: int | None = None, cache: ReportCache | None = None,
                    progress: Progress | None = None, jobs: int | None = 1,
                    analyze_fn: Callable[..., Any] | None = None, options: UserOptions | None = None,
                    force: bool = False, limits: Limits | None = None) -> Analysis:
    """The session's Report (every host file) with the user's ``options``: cached, else analysed (``jobs`` host files
    at once) and stored.

    ``analyze_fn(run, session, hosts, progress=, params=)`` replaces the analysis (tests, precompute's hook).
    A report with a failed host is not stored (the next run retries); nor is one whose files changed while
    they were read (a capture still being written).

    ``force`` (``precompute --force``): read nothing from the cache -- neither the session's entry nor the per-host
    entries a sharded precompute left -- analyse every host file again and store what it gives (the per-host
    entries of a session of many hosts too).

    ``limits`` (a server's: ``isolation.Limits``): every host file analysed here runs in a child process of its own
    under them, as the tab's do (the MCP server's sessions of many hosts ran in a plain pool, unbounded).

    The job's other ranks in sibling run folders (``Session.linked_ranks``) are part of the analysis -- its rules read
    them (h37-ranks57) -- and of its key: ``analyze_fn`` gets them as ``rank_runs=`` where the session has them.
    """
    options = UserOptions.of(options, params)
    caching = cache is not None and cache.enabled
    # the key hashes the package's sources (``cache.code_fingerprint``, ~6 ms): only for a cache that is on
    key = session_key(session, options=options) if caching else None
    if caching and not force:
        text = cache.get(key)
        if text is not None:
            return Analysis(Report.from_json(text), from_cache=True)
    if analyze_fn is not None:
        linked = {"rank_runs": ranks} if (ranks := session.linked_ranks) is not None else {}
        report = analyze_fn(session.run, session.session, list(session.hosts), progress=progress, params=options.params,
                            **linked)
    elif cache is not None and cache.enabled and len(session.hosts) > 1:
        # many hosts: merged from the per-host cache (what a sharded precompute fills); forced, each analysed again
        report = merge_hosts(session.run, session.session,
                             cached_host_reports(session, cache, options=options, jobs=jobs, progress=progress,
                                                 force=force, limits=limits), options, session.linked_ranks)
    elif cache is not None and cache.enabled and not force and (stored := _stored_host_reports(session, cache, options)):
        # one host: from the per-host cache only when a shard stored it (else only its session entry is kept)
        report = merge_hosts(session.run, session.session, stored, options, session.linked_ranks)
    elif len(session.hosts) > 1 and (limits is not None or worker_count(jobs, len(session.hosts)) > 1):
        report = analyze_session_parallel(session, jobs=jobs, progress=progress, options=options, limits=limits)
    else:
        report = pipeline.analyze_session(session.run, session.session, list(session.hosts), progress=progress,
                                          options=options, rank_runs=session.linked_ranks)
    if cache is None or not cache.enabled:
        return Analysis(report, not_stored="the cache is disabled")
    if any(getattr(h, "error", None) for h in getattr(report, "hosts", [])):
        return Analysis(report, not_stored="a host could not be analysed")
    if not files_unchanged(session.hosts):
        return Analysis(report, not_stored="the file changed while it was analysed (still being written?)")
    if not cache.put(key, report):
        return Analysis(report, not_stored=cache.last_error or "cache write failed")
    return Analysis(report, stored=True)


def _stored_host_reports(session: Session, cache: ReportCache, options: UserOptions) -> list[HostReport] | None:
    """Every host's report made with ``options`` from the per-host cache, each entry read once; None unless all
    are stored."""
    out = []
    for h in session.hosts:
        text = cache.get(host_key(session, h, options=options))
        if text is None:
            return None
        out.append(HostReport.from_json(text))
    return out


def cached_host_reports(session: Session, cache: ReportCache, *, params: int | None = None, jobs: int | None = 1,
                        progress: Progress | None = None, options: UserOptions | None = None,
                        force: bool = False, limits: Limits | None = None) -> list[HostReport]:
    """Every host file's report of ``session``, in host order: from the per-host cache where stored (a sharded
    precompute fills it: ``precompute --shard K/N``), the others analysed now (``jobs`` at once) and stored.
    ``force``: none read from the cache, every one analysed now and stored.

    A session of many ranks is merged from these small summaries, so its memory grows with ranks, not events.
    A host that failed, or whose file changed while it was read, is not stored (the next run retries it).
    """
    options = UserOptions.of(options, params)
    hosts = list(session.hosts)
    keys = [host_key(session, h, options=options) for h in hosts]
    reports: list[HostReport | None] = []
    for k in keys:
        text = None if force else cache.get(k)
        reports.append(HostReport.from_json(text) if text is not None else None)
    missing = [i for i, r in enumerate(reports) if r is None]
    if missing:
        _tell(progress, f"{len(hosts) - len(missing)} of {len(hosts)} hosts cached; analysing {len(missing)}", 0,
              len(missing))
        todo = [hosts[i] for i in missing]
        fresh = (_isolated_host_reports(todo, worker_count(jobs, len(missing)), options, progress, limits,
                                        session.linked_ranks)
                 if limits is not None else _host_reports(todo, worker_count(jobs, len(missing)), options, progress,
                                                          None, session.linked_ranks))
        for i, hr in zip(missing, fresh):
            reports[i] = hr
            if hr.error is None and files_unchanged([hosts[i]]):
                cache.put(keys[i], hr)
    return [r for r in reports if r is not None]


def compute_json(session: Session, hosts: Sequence[HostFile], *, progress: Progress, jobs: int = 1,
                 isolate: bool = False, analyze_fn: Callable[..., Any] | None = None,
                 cache: ReportCache | None = None, options: UserOptions | None = None) -> str:
    """The report JSON of ``hosts`` of ``session`` for the tab (its service keeps the JSON), analysed with the
    request's ``options`` (TensorBoard's flags, overridden by the tab's settings).

    ``cache``: where every host of the session is in the per-host cache (``precompute --shard``), the report is
    merged from those summaries and nothing is analysed.  Isolated, each host file runs in a child process with
    the memory and time limits of ``isolation.Limits.from_env()``, so one bad file cannot take TensorBoard down.
    """
    import dataclasses

    options = UserOptions.of(options)
    stored = (_stored_host_reports(session, cache, options) if cache is not None and cache.enabled
              and analyze_fn is None and len(hosts) == len(session.hosts) else None)
    if stored:
        # every host already analysed into the per-host cache (a sharded precompute): merge, analyse nothing
        progress(f"merging {len(hosts)} cached host reports", 0.5)
        return merge_hosts(session.run, session.session, stored, options, session.linked_ranks).to_json()
    if analyze_fn is not None:
        report = analyze_fn(session.run, session.session, list(hosts), progress=progress)
        return report.to_json() if hasattr(report, "to_json") else __import__("json").dumps(report)
    workers = worker_count(jobs, len(hosts))
    if isolate and (len(hosts) == 1 or workers == 1):
        return isolation.call(isolation.analyze_session_json, session.run, session.session, list(hosts), options,
                              session.linked_ranks,
                              progress=progress, limits=Limits.from_env(hosts))
    chosen = dataclasses.replace(session, hosts=tuple(hosts))
    if len(hosts) > 1 and workers > 1:
        progress(f"analysing {len(hosts)} hosts in {plural(workers, 'worker process')}", 0.0)
        limits = Limits.from_env(hosts) if isolate else None
        return analyze_session_parallel(chosen, jobs=workers, progress=progress, limits=limits,
                                        options=options).to_json()
    return pipeline.analyze_session(session.run, session.session, list(hosts), progress=progress,
                                    options=options, rank_runs=session.linked_ranks).to_json()


def files_unchanged(hosts: Sequence[HostFile]) -> bool:
    """Every file behind every host (each rank's file of a merged host) still has the (size, mtime) it was
    discovered with, and the files read beside them are the ones discovered (``HostFile.beside``: none written,
    changed or removed since)."""

    try:
        return all(fsio.is_remote(path) or fsio.stat(path) == (size, mtime)
                   for h in hosts for path, size, mtime in h.identity()) and \
            all(fsio.is_remote(h.path) or _beside_unchanged(h) for h in hosts)
    except Exception:  # noqa: BLE001 - gone or unreadable meanwhile
        return False


def _beside_unchanged(h: HostFile) -> bool:
    """The files read beside ``h`` are the ones discovered: its format's own (``Layout.beside``: a capacity record)
    as they are now, none written since, and the rest -- the linked captures of the same job discovery added
    (``discover._same_job``), which no layout lists -- each with the stat it was listed with.  Why: comparing the
    layout's files alone with all of them read a snapshot linked to its trace as changed at every ask (the tab
    analysed it again each time, precompute never kept it; h37-debt45)."""
    now = with_beside(h).beside
    if not set(now) <= set(h.beside):
        return False
    own = {path for path, _, _ in now}
    return all(fsio.stat(path) == (size, mtime) for path, size, mtime in h.beside if path not in own)


def available_cores() -> int:
    """Cores this process may use (respects CPU affinity / container limits where the OS exposes them)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def worker_count(jobs: int | None, tasks: int) -> int:
    """``jobs`` bounded by the cores and the number of tasks (at least 1)."""
    cores = available_cores()
    wanted = cores if not jobs or jobs < 1 else jobs
    return max(1, min(wanted, cores, tasks))


def process_pool(workers: int) -> cf.ProcessPoolExecutor:
    """A pool of ``workers`` processes (see :func:`mp_context`) that see this process's environment and thresholds.

    A forkserver starts once per interpreter and its children inherit the
    environment of *that* moment; copying ``os.environ`` in makes
    ``S3_ENDPOINT``, credentials etc. set later count too.  Its children import the thresholds' table afresh: the
    ones changed here (``thresholds.tuned``, which the report cache keys on) are handed in too.
    """
    return cf.ProcessPoolExecutor(max_workers=workers, mp_context=mp_context(),
                                  initializer=isolation.take_parent, initargs=(dict(os.environ), thresholds.tuned()))


def analyze_session_parallel(
    session: Session,
    jobs: int | None = None,
    params: int | None = None,
    progress: Progress | None = None,
    analyze_host_fn: Callable[..., Any] | None = None,
    merge_fn: Callable[..., Any] | None = None,
    limits: Any = None,
    options: UserOptions | None = None,
) -> Any:
    """Analyse each host file of ``session`` in its own worker process, then merge into one Report.

    Uses ``pipeline.analyze_host`` per file and ``merge.merge_hosts(run,
    session, host_reports)``, both with ``options``, unless given others
    (``analyze_host_fn(host, params=)``, ``merge_fn(run, session, reports)``).  A host whose analysis
    raises gets a HostReport with ``error`` set, so the other hosts still
    report.  One host or one job: runs in this process.

    ``limits`` (an ``isolation.Limits``): each host instead runs in a child process of its own with that
    memory and time limit (the plugin: one bad file must not take TensorBoard down); a child that fails
    or is killed gives that host an error.
    """
    options = UserOptions.of(options, params)
    hosts = list(session.hosts)
    if limits is not None:
        reports = _isolated_host_reports(hosts, worker_count(jobs, len(hosts)), options, progress, limits,
                                         session.linked_ranks)
    else:
        reports = _host_reports(hosts, worker_count(jobs, len(hosts)), options, progress, analyze_host_fn,
                                session.linked_ranks)
    if merge_fn is not None:
        return merge_fn(session.run, session.session, reports)
    return merge_hosts(session.run, session.session, reports, options, session.linked_ranks)


def _host_reports(hosts: Sequence[HostFile], workers: int, options: UserOptions,
                  progress: Progress | None, analyze_host_fn: Callable[..., Any] | None,
                  rank_runs: Any = None) -> list[Any]:
    """HostReports in the order of ``hosts``; biggest files start first.  ``analyze_host_fn`` None: the
    pipeline's, with ``options`` and each host's peers on its clock among ``rank_runs`` (``pipeline.clock_files``:
    read in the worker that analyses it, as the one-process path reads them)."""
    reports: list[Any] = [None] * len(hosts)
    order = sorted(range(len(hosts)), key=lambda i: hosts[i].size, reverse=True)
    if workers <= 1:
        for n, i in enumerate(order, start=1):
            reports[i] = _host_or_error(analyze_host_fn, hosts[i], options,
                                        pipeline.clock_files(rank_runs, hosts[i]))
            _tell(progress, f"analysed {hosts[i].host}", n, len(hosts))
        return reports
    with process_pool(workers) as pool:
        futures = {pool.submit(_host_or_error, analyze_host_fn, hosts[i], options,
                               pipeline.clock_files(rank_runs, hosts[i])): i for i in order}
        for n, fut in enumerate(cf.as_completed(futures), start=1):
            i = futures[fut]
            try:
                reports[i] = fut.result()
            except Exception as e:  # noqa: BLE001 - a dead worker: this host failed, keep the others
                reports[i] = _error_host_report(hosts[i], f"worker failed: {type(e).__name__}: {e}")
            _tell(progress, f"analysed {hosts[i].host}", n, len(hosts))
    return reports


def _isolated_host_reports(hosts: Sequence[HostFile], workers: int, options: UserOptions,
                           progress: Progress | None, limits: Any, rank_runs: Any = None) -> list[Any]:
    """HostReports in the order of ``hosts``, each from its own limited child, ``workers`` at once (each child reads
    its host's peers among ``rank_runs``: ``pipeline.clock_files``)."""

    reports: list[Any] = [None] * len(hosts)
    order = sorted(range(len(hosts)), key=lambda i: hosts[i].size, reverse=True)
    with cf.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gpu-advisor-host") as pool:
        futures = {pool.submit(isolation.host_report, hosts[i], None, limits, options,
                               pipeline.clock_files(rank_runs, hosts[i])): i for i in order}
        for n, fut in enumerate(cf.as_completed(futures), start=1):
            i = futures[fut]
            reports[i] = fut.result()
            _tell(progress, f"analysed {hosts[i].host}", n, len(hosts))
    return reports


def _host_or_error(analyze_host_fn: Callable[..., Any] | None, host: HostFile, options: UserOptions,
                   peer_files: Sequence[HostFile] = ()) -> Any:
    """One host's report (in a worker process: module level, so it pickles), or a HostReport with the error.
    A replacement analysis (tests, precompute's hook) takes the older ``params=`` keyword."""
    try:
        if analyze_host_fn is None:
            return pipeline.analyze_host(host, options=options, peer_files=peer_files)
        return analyze_host_fn(host, params=options.params)
    except Exception as e:  # noqa: BLE001
        return _error_host_report(host, f"analysis failed: {type(e).__name__}: {e}")


def _error_host_report(host: HostFile, reason: str) -> Any:

    return HostReport(host=host.host, path=host.path, size_bytes=host.size, error=reason)


def _tell(progress: Progress | None, message: str, done: int, total: int) -> None:
    if progress is not None:
        progress(message, done / max(total, 1))
