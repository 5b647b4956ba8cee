"""``tb-gpu-advisor precompute LOGDIR``: analyse every session ahead of time into the report cache.

Why: a big capture takes a while to analyse; running this after training
(or in a cron job next to a shared TensorBoard) makes the Advisor tab open
instantly.  Sessions are analysed in worker processes (the analysis is
CPU-bound Python/numpy, so threads would not help), largest first so the
pool stays busy, and each worker writes its report into the shared cache
itself (the cache is safe for concurrent processes).

Also here: :func:`analyze_session_parallel`, which analyses the host files
of ONE multi-host session in parallel and merges them (used by the plugin
for large multi-host sessions).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from .cache import CacheKey, ReportCache, session_key
from .discovery import HostFile, Session, discover

AnalyzeSession = Callable[..., Any]  # analyze.analyze_session's signature
Progress = Callable[[str, float], None]


@dataclass
class SessionResult:
    """What happened to one session (small: this crosses the process boundary, the report does not)."""

    stock_run: str
    hosts: int
    size: int
    status: str  # "cached" (already there), "new" (analysed now), "failed" (analysis raised)
    seconds: float = 0.0
    stored: bool = False
    errors: list[tuple[str, str]] = field(default_factory=list)  # (file path, reason)


@dataclass
class Summary:
    """Totals printed at the end; ``exit_code`` is 1 when any file failed."""

    results: list[SessionResult]
    wall_seconds: float
    jobs: int
    cache_dir: str | None

    @property
    def errors(self) -> list[tuple[str, str]]:
        return [e for r in self.results for e in r.errors]

    @property
    def exit_code(self) -> int:
        return 1 if self.errors else 0

    def count(self, status: str) -> int:
        return sum(1 for r in self.results if r.status == status)


# --- CLI ------------------------------------------------------------------------


def add_parser(subparsers: Any) -> None:
    """Register ``precompute`` (called by cli.py)."""
    p = subparsers.add_parser(
        "precompute",
        help="analyse every profile session in LOGDIR into the report cache",
        description="Analyse every profile session in LOGDIR (local path, s3://, gs://, ...) into the "
        "report cache so the TensorBoard tab opens instantly. Exit status 1 if any file failed.",
    )
    p.add_argument("logdir", metavar="LOGDIR")
    p.add_argument("--jobs", "-j", type=int, default=None,
                   help="worker processes (default: number of cores; never more than cores or sessions)")
    p.add_argument("--cache-dir", default=None,
                   help="cache folder (default: $TB_GPU_ADVISOR_CACHE_DIR, else $XDG_CACHE_HOME/tb-gpu-advisor "
                   "or ~/.cache/tb-gpu-advisor)")
    p.add_argument("--params", type=int, default=None,
                   help="model parameter count, if the reports should use it (part of the cache key)")
    p.add_argument("--force", action="store_true", help="analyse again even when a cached report exists")
    p.set_defaults(func=_run_cli)


def _run_cli(args: argparse.Namespace) -> int:
    if not _logdir_exists(args.logdir):
        print(f"precompute: {args.logdir}: no such directory", file=sys.stderr)
        return 2
    cache = ReportCache(args.cache_dir)
    if not cache.enabled:
        print("precompute: the report cache is disabled (TB_GPU_ADVISOR_CACHE_DIR=off or not writable); "
              "nothing would be kept", file=sys.stderr)
        return 2
    summary = precompute(args.logdir, jobs=args.jobs, cache=cache, params=args.params, force=args.force)
    print_summary(summary, sys.stderr)
    return summary.exit_code


def _logdir_exists(logdir: str) -> bool:
    """Local logdirs must exist (a typo should not look like 'no profiles'); remote ones are listed as they are."""
    from . import fsio

    return fsio.is_remote(logdir) or os.path.isdir(fsio.local_path(logdir))


# --- the work -----------------------------------------------------------------------


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


def mp_context() -> multiprocessing.context.BaseContext:
    """Start workers with forkserver/spawn, never plain fork.

    Forking a multi-threaded process (TensorBoard's server is threaded) can
    deadlock the child on a lock held by another thread; forkserver starts
    children from a clean single-threaded process.
    """
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def process_pool(workers: int) -> cf.ProcessPoolExecutor:
    """A pool of ``workers`` processes (see :func:`mp_context`) that see this process's environment.

    A forkserver starts once per interpreter and its children inherit the
    environment of *that* moment; copying ``os.environ`` in makes
    ``S3_ENDPOINT``, credentials etc. set later count too.
    """
    return cf.ProcessPoolExecutor(max_workers=workers, mp_context=mp_context(),
                                  initializer=_set_environ, initargs=(dict(os.environ),))


def _set_environ(env: dict[str, str]) -> None:
    os.environ.clear()
    os.environ.update(env)


def precompute(
    logdir: str,
    jobs: int | None = None,
    cache: ReportCache | None = None,
    params: int | None = None,
    force: bool = False,
    analyze_fn: AnalyzeSession | None = None,
    out: TextIO | None = None,
) -> Summary:
    """Analyse every session of ``logdir`` not yet in ``cache``; progress lines go to ``out`` (stderr).

    ``analyze_fn`` defaults to ``tb_gpu_advisor.analyze.analyze_session``
    (imported in the workers); tests pass another module-level function.
    """
    out = out or sys.stderr
    cache = cache if cache is not None else ReportCache()
    t0 = time.perf_counter()
    sessions = discover(logdir)
    total_bytes = sum(s.size for s in sessions)
    _say(out, f"precompute: {len(sessions)} sessions, {sum(len(s.hosts) for s in sessions)} host files "
              f"({_human(total_bytes)}) in {logdir}")
    results: list[SessionResult] = []
    todo: list[tuple[Session, CacheKey]] = []
    for s in sessions:
        key = session_key(s, params=params)
        if not force and cache.get(key) is not None:
            results.append(SessionResult(s.stock_run, len(s.hosts), s.size, "cached"))
        else:
            todo.append((s, key))
    todo.sort(key=lambda t: t[0].size, reverse=True)  # biggest first: the pool drains evenly
    workers = worker_count(jobs, len(todo))
    if todo:
        _say(out, f"precompute: {len(results)} cached, analysing {len(todo)} with {workers} worker(s)")
    tasks = [(s, key, cache.directory, cache.max_bytes, params, analyze_fn) for s, key in todo]
    for done, result in enumerate(_run_tasks(tasks, workers), start=1):
        results.append(result)
        _say(out, _progress_line(done, len(todo), result))
    return Summary(results, time.perf_counter() - t0, workers, cache.directory if cache.enabled else None)


def _run_tasks(tasks: list[tuple], workers: int):
    """Yield a SessionResult per task as they finish; inline when one worker is enough."""
    if workers <= 1:
        for task in tasks:
            yield _analyze_and_store(*task)
        return
    with process_pool(workers) as pool:
        futures = {pool.submit(_analyze_and_store, *task): task for task in tasks}
        for fut in cf.as_completed(futures):
            session = futures[fut][0]
            try:
                yield fut.result()
            except cf.process.BrokenProcessPool:
                yield _failed(session, "worker process died (killed, or out of memory?)", 0.0)
            except Exception as e:  # noqa: BLE001 - e.g. a result that cannot be unpickled
                yield _failed(session, f"{type(e).__name__}: {e}", 0.0)


def _analyze_and_store(
    session: Session,
    key: CacheKey,
    cache_dir: str | None,
    cache_max_bytes: int,
    params: int | None,
    analyze_fn: AnalyzeSession | None,
) -> SessionResult:
    """Worker: analyse one session and write its report into the cache (runs in a worker process).

    A report whose hosts have errors is not stored, so the next run retries
    them (the error may be transient, e.g. a network read).
    """
    t0 = time.perf_counter()
    if analyze_fn is None:
        from .analyze import analyze_session as analyze_fn  # lazy: heavy (numpy), only in the workers
    try:
        report = analyze_fn(session.run, session.session, list(session.hosts),
                            progress=_WorkerProgress(session.stock_run), params=params)
    except Exception as e:  # noqa: BLE001 - one bad session must not stop the others
        return _failed(session, f"analysis failed: {type(e).__name__}: {e}", time.perf_counter() - t0)
    errors = [(h.path, _reason(h.path, h.error)) for h in getattr(report, "hosts", []) if getattr(h, "error", None)]
    stored = False
    if not errors:
        if not _unchanged(session):  # written to while we read it: a partial file's report is no report
            return _failed(session, "the file changed while it was analysed (still being written?): "
                                    "not cached, run precompute again", time.perf_counter() - t0)
        cache = ReportCache(cache_dir, max_bytes=cache_max_bytes)
        stored = cache.put(key, report)
        if not stored:  # a read-only or full cache must not pass for success
            return _failed(session, f"analysed but not stored: {cache.last_error or 'cache write failed'}",
                           time.perf_counter() - t0)
    return SessionResult(session.stock_run, len(session.hosts), session.size, "new",
                         time.perf_counter() - t0, stored, errors)


def _unchanged(session: Session) -> bool:
    """Every host file still has the (size, mtime) it was discovered with."""
    from . import fsio

    try:
        return all(fsio.is_remote(h.path) or fsio.stat(h.path) == (h.size, h.mtime_ns) for h in session.hosts)
    except Exception:  # noqa: BLE001 - gone or unreadable meanwhile
        return False


def _reason(path: str, error: str) -> str:
    """The error without a leading ``<path>: `` (the summary prints the path already)."""
    return error[len(path) + 2:] if error.startswith(path + ": ") else error


def _failed(session: Session, reason: str, seconds: float) -> SessionResult:
    """Every file of a session that could not be analysed, with the reason."""
    return SessionResult(session.stock_run, len(session.hosts), session.size, "failed", seconds,
                         errors=[(h.path, reason) for h in session.hosts])


class _WorkerProgress:
    """The analyzer's progress callback in a worker: a stderr line at most every few seconds per session."""

    def __init__(self, name: str, every_s: float = 5.0):
        self.name, self.every_s, self.last = name, every_s, time.monotonic()

    def __call__(self, message: str, fraction: float) -> None:
        now = time.monotonic()
        if now - self.last >= self.every_s:
            self.last = now
            _say(sys.stderr, f"    {self.name}: {message} ({fraction:.0%})")


# --- one multi-host session in parallel -------------------------------------------------


def analyze_session_parallel(
    session: Session,
    jobs: int | None = None,
    params: int | None = None,
    progress: Progress | None = None,
    analyze_host_fn: Callable[..., Any] | None = None,
    merge_fn: Callable[..., Any] | None = None,
    limits: Any = None,
) -> Any:
    """Analyse each host file of ``session`` in its own worker process, then merge into one Report.

    Uses ``analyze.analyze_host`` per file and ``analyze.merge_hosts(run,
    session, host_reports)`` unless given others.  A host whose analysis
    raises gets a HostReport with ``error`` set, so the other hosts still
    report.  One host or one job: runs in this process.

    ``limits`` (an ``isolation.Limits``): each host instead runs in a child process of its own with that
    memory and time limit (the plugin: one bad file must not take TensorBoard down); a child that fails
    or is killed gives that host an error.
    """
    if analyze_host_fn is None or merge_fn is None:
        from . import analyze

        analyze_host_fn = analyze_host_fn or analyze.analyze_host
        merge_fn = merge_fn or analyze.merge_hosts
    hosts = list(session.hosts)
    if limits is not None:
        reports = _isolated_host_reports(hosts, worker_count(jobs, len(hosts)), params, progress, limits)
    else:
        reports = _host_reports(hosts, worker_count(jobs, len(hosts)), params, progress, analyze_host_fn)
    return merge_fn(session.run, session.session, reports)


def _host_reports(hosts: Sequence[HostFile], workers: int, params: int | None,
                  progress: Progress | None, analyze_host_fn: Callable[..., Any]) -> list[Any]:
    """HostReports in the order of ``hosts``; biggest files start first."""
    reports: list[Any] = [None] * len(hosts)
    order = sorted(range(len(hosts)), key=lambda i: hosts[i].size, reverse=True)
    if workers <= 1:
        for n, i in enumerate(order, start=1):
            reports[i] = _host_or_error(analyze_host_fn, hosts[i], params)
            _tell(progress, f"analysed {hosts[i].host}", n, len(hosts))
        return reports
    with process_pool(workers) as pool:
        futures = {pool.submit(_host_or_error, analyze_host_fn, hosts[i], params): i for i in order}
        for n, fut in enumerate(cf.as_completed(futures), start=1):
            i = futures[fut]
            try:
                reports[i] = fut.result()
            except Exception as e:  # noqa: BLE001 - a dead worker: this host failed, keep the others
                reports[i] = _error_host_report(hosts[i], f"worker failed: {type(e).__name__}: {e}")
            _tell(progress, f"analysed {hosts[i].host}", n, len(hosts))
    return reports


def _isolated_host_reports(hosts: Sequence[HostFile], workers: int, params: int | None,
                           progress: Progress | None, limits: Any) -> list[Any]:
    """HostReports in the order of ``hosts``, each from its own limited child, ``workers`` at once."""
    from . import isolation

    reports: list[Any] = [None] * len(hosts)
    order = sorted(range(len(hosts)), key=lambda i: hosts[i].size, reverse=True)
    with cf.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gpu-advisor-host") as pool:
        futures = {pool.submit(isolation.host_report, hosts[i], params, limits): i for i in order}
        for n, fut in enumerate(cf.as_completed(futures), start=1):
            i = futures[fut]
            reports[i] = fut.result()
            _tell(progress, f"analysed {hosts[i].host}", n, len(hosts))
    return reports


def _host_or_error(analyze_host_fn: Callable[..., Any], host: HostFile, params: int | None) -> Any:
    try:
        return analyze_host_fn(host, params=params)
    except Exception as e:  # noqa: BLE001
        return _error_host_report(host, f"analysis failed: {type(e).__name__}: {e}")


def _error_host_report(host: HostFile, reason: str) -> Any:
    from .report_schema import HostReport

    return HostReport(host=host.host, path=host.path, size_bytes=host.size, error=reason)


def _tell(progress: Progress | None, message: str, done: int, total: int) -> None:
    if progress is not None:
        progress(message, done / max(total, 1))


# --- output ---------------------------------------------------------------------------------


def _say(out: TextIO, line: str) -> None:
    out.write(line + "\n")
    out.flush()


def _human(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


def _progress_line(done: int, total: int, r: SessionResult) -> str:
    head = f"[{done}/{total}] {r.stock_run}: "
    if r.status == "failed":
        return head + f"FAILED after {r.seconds:.1f}s: {r.errors[0][1] if r.errors else '?'}"
    tail = f"{r.hosts} host(s), {_human(r.size)}, {r.seconds:.1f}s"
    if r.errors:
        tail += f", {len(r.errors)} file(s) with errors (not cached)"
    return head + tail


def print_summary(summary: Summary, out: TextIO) -> None:
    """The end-of-run summary: counts, every failed file with its reason, wall time."""
    rs = summary.results
    _say(out, "precompute summary:")
    _say(out, f"  sessions:  {len(rs)} ({summary.count('cached')} cached, {summary.count('new')} new, "
              f"{summary.count('failed')} failed)")
    _say(out, f"  hosts:     {sum(r.hosts for r in rs)} files, {_human(sum(r.size for r in rs))}")
    errors = summary.errors
    _say(out, f"  errors:    {len(errors)} file(s)")
    for path, reason in errors:
        _say(out, f"    {path}: {reason}")
    _say(out, f"  wall time: {summary.wall_seconds:.1f}s with {summary.jobs} worker(s)")
    _say(out, f"  cache:     {summary.cache_dir or 'disabled'}")
