"""``tb-gpu-advisor precompute LOGDIR``: analyse every session ahead of time into the report cache.

Why: a big capture takes a while to analyse; running this after training
(or in a cron job next to a shared TensorBoard) makes the Advisor tab open
instantly.  Sessions are analysed in worker processes (the analysis is
CPU-bound Python/numpy, so threads would not help), largest first so the
pool stays busy, and each worker writes its report into the shared cache
itself (the cache is safe for concurrent processes).

Each session goes through the one entry point (:class:`tb_gpu_advisor.runtime.advisor.Advisor`: its ``report``), as
in the CLI, the tab and the MCP server.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from tb_gpu_advisor.cli import options as cli_opts
from tb_gpu_advisor.cli.report import print_skipped
from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.common.fmt import plural
from tb_gpu_advisor.common.options import UserOptions
from tb_gpu_advisor.runtime.advisor import Advisor, CacheKey, ReportCache, Session, process_pool, worker_count

AnalyzeSession = Callable[..., Any]  # pipeline.analyze_session's signature
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
    p.add_argument("logdir", metavar="LOGDIR", help="TensorBoard logdir (local path, s3://, gs://, ...)")
    p.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                   help="worker processes (default: number of cores; never more than cores or sessions)")
    cli_opts.add_common(p)
    p.add_argument("--force", action="store_true", help="analyse again even when a cached report exists")
    p.add_argument("--shard", metavar="K/N", type=_shard, default=None,
                   help="analyse only shard K of N (0 <= K < N) of the host files, into the per-host cache: one "
                   "task of a Slurm job array (--shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT) or a "
                   "Kubernetes Indexed Job sharing one cache folder; a later run without --shard (or the tab) "
                   "merges the sessions from it")
    p.set_defaults(func=_run_cli)


def _shard(text: str) -> tuple[int, int]:
    """``K/N`` -> (K, N), with 0 <= K < N."""
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected K/N, e.g. 0/8") from None
    if n < 1 or not 0 <= k < n:
        raise argparse.ArgumentTypeError(f"{text!r}: need 0 <= K < N")
    return k, n


def _run_cli(args: argparse.Namespace) -> int:
    if not _logdir_exists(args.logdir):
        print(f"precompute: {args.logdir}: no such directory", file=sys.stderr)
        return 2
    advisor = cli_opts.advisor(args)
    if not advisor.cache.enabled:
        print("precompute: the report cache is disabled (--cache-dir off, TB_GPU_ADVISOR_CACHE_DIR=off or not "
              "writable); nothing would be kept", file=sys.stderr)
        return 2
    follow = bool(args.follow_symlinks)
    if args.shard is not None:
        summary = precompute_shard(args.logdir, args.shard, jobs=args.jobs, cache=advisor.cache, params=args.params,
                                   force=args.force, follow_symlinks=follow)
    else:
        summary = precompute(args.logdir, jobs=args.jobs, cache=advisor.cache, params=args.params, force=args.force,
                             follow_symlinks=follow)
    print_summary(summary, sys.stderr)
    print_skipped(advisor.skipped(), sys.stderr, "precompute")
    return summary.exit_code


def _logdir_exists(logdir: str) -> bool:
    """Local logdirs must exist (a typo should not look like 'no profiles'); remote ones are listed as they are."""
    return fsio.is_remote(logdir) or os.path.isdir(fsio.local_path(logdir))


# --- the work -----------------------------------------------------------------------


def precompute(
    logdir: str,
    jobs: int | None = None,
    cache: ReportCache | None = None,
    params: int | None = None,
    force: bool = False,
    analyze_fn: AnalyzeSession | None = None,
    out: TextIO | None = None,
    follow_symlinks: bool = False,
) -> Summary:
    """Analyse every session of ``logdir`` not yet in ``cache``; progress lines go to ``out`` (stderr).

    ``analyze_fn`` defaults to the pipeline's session analysis (in the workers, through ``Advisor.report``); tests
    pass another module-level function.
    """
    out = out or sys.stderr
    advisor = Advisor(logdir, cache=cache, options=UserOptions.of(None, params), follow_symlinks=follow_symlinks)
    cache = advisor.cache
    t0 = time.perf_counter()
    sessions = advisor.sessions()
    total_bytes = sum(s.size for s in sessions)
    _say(out, f"precompute: {len(sessions)} sessions, {sum(len(s.hosts) for s in sessions)} host files "
              f"({_human(total_bytes)}) in {logdir}")
    results: list[SessionResult] = []
    todo: list[tuple[Session, CacheKey]] = []
    for s in sessions:
        key = advisor.session_key(s)
        if not force and cache.get(key) is not None:
            results.append(SessionResult(s.stock_run, len(s.hosts), s.size, "cached"))
        else:
            todo.append((s, key))
    todo.sort(key=lambda t: t[0].size, reverse=True)  # biggest first: the pool drains evenly
    workers = worker_count(jobs, len(todo))
    if todo:
        _say(out, f"precompute: {len(results)} cached, analysing {len(todo)} with {plural(workers, 'worker')}")
    tasks = [(s, key, cache.directory, cache.max_bytes, advisor.options, analyze_fn, force) for s, key in todo]
    for done, result in enumerate(_run_tasks(tasks, workers), start=1):
        results.append(result)
        _say(out, _progress_line(done, len(todo), result))
    return Summary(results, time.perf_counter() - t0, workers, cache.directory if cache.enabled else None)


def shard_of(run: str, session: str, host: str, shards: int) -> int:
    """The shard a host file belongs to: a hash of its run, session and host names -- stable across processes,
    machines and mount points (never Python's salted ``hash``), so N independent processes split the files
    without talking to each other and every file is analysed exactly once."""
    digest = hashlib.sha256(f"{run}\0{session}\0{host}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % shards


def precompute_shard(
    logdir: str,
    shard: tuple[int, int],
    jobs: int | None = None,
    cache: ReportCache | None = None,
    params: int | None = None,
    force: bool = False,
    out: TextIO | None = None,
    follow_symlinks: bool = False,
) -> Summary:
    """Analyse shard ``K`` of ``N`` of every host file in ``logdir`` into the per-host cache.

    Each host report is small (a per-rank summary); the session reports are merged from them later, by a run
    without ``--shard`` or by the tab, without analysing again."""
    out = out or sys.stderr
    advisor = Advisor(logdir, cache=cache, options=UserOptions.of(None, params), follow_symlinks=follow_symlinks)
    cache = advisor.cache
    k, n = shard
    t0 = time.perf_counter()
    sessions = advisor.sessions()
    everything = [(s, h) for s in sessions for h in s.hosts]
    mine = [(s, h) for s, h in everything if shard_of(s.run, s.session, h.host, n) == k]
    _say(out, f"precompute: shard {k}/{n}: {len(mine)} of {len(everything)} host files "
              f"({_human(sum(h.size for _, h in mine))}) in {logdir}")
    results: list[SessionResult] = []
    todo = []
    for s, h in mine:
        key = advisor.host_key(s, h)
        if not force and cache.get(key) is not None:
            results.append(SessionResult(f"{s.stock_run}/{h.host}", 1, h.size, "cached"))
        else:
            todo.append((s, h, key, cache.directory, cache.max_bytes, advisor.options))
    todo.sort(key=lambda t: t[1].size, reverse=True)
    workers = worker_count(jobs, len(todo))
    with (process_pool(workers) if workers > 1 else _inline()) as pool:
        futures = [pool.submit(_analyze_host_and_store, *t) for t in todo]
        for done, fut in enumerate(cf.as_completed(futures), start=1):
            try:
                r = fut.result()
            except Exception as e:  # noqa: BLE001 - a dead worker must not stop the others
                r = SessionResult("?", 1, 0, "failed", errors=[("?", f"{type(e).__name__}: {e}")])
            results.append(r)
            _say(out, _progress_line(done, len(todo), r))
    return Summary(results, time.perf_counter() - t0, workers, cache.directory if cache.enabled else None)


def _analyze_host_and_store(session: Session, host: Any, key: CacheKey, cache_dir: str | None, cache_max_bytes: int,
                            options: UserOptions) -> SessionResult:
    """Worker: one host file into the per-host cache (a failed host is not stored: the next run retries it)."""
    t0 = time.perf_counter()
    name = f"{session.stock_run}/{host.host}"
    advisor = Advisor(session.path, cache=ReportCache(cache_dir, max_bytes=cache_max_bytes), options=options)
    hr = advisor.host_report(host, session=session)
    if hr.error is not None:
        return SessionResult(name, 1, host.size, "failed", time.perf_counter() - t0,
                             errors=[(host.path, _reason(host.path, hr.error))])
    cache = advisor.cache
    if not advisor.files_unchanged([host]):
        return _failed_host(name, host, "the file changed while it was analysed: not cached, run again", t0)
    if not cache.put(key, hr):
        return _failed_host(name, host, f"analysed but not stored: {cache.last_error or 'cache write failed'}", t0)
    return SessionResult(name, 1, host.size, "new", time.perf_counter() - t0, True)


def _failed_host(name: str, host: Any, reason: str, t0: float) -> SessionResult:
    return SessionResult(name, 1, host.size, "failed", time.perf_counter() - t0, errors=[(host.path, reason)])


class _inline:
    """A stand-in for a process pool of one: runs each task at submit, in this process."""

    def __enter__(self) -> "_inline":
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def submit(self, fn: Callable[..., Any], *args: Any) -> cf.Future:
        f: cf.Future = cf.Future()
        try:
            f.set_result(fn(*args))
        except Exception as e:  # noqa: BLE001
            f.set_exception(e)
        return f


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
                yield _failed(session, "worker process died without a result (killed by a signal or crashed; "
                                       "`tb-gpu-advisor report` on this session says why)", 0.0)
            except Exception as e:  # noqa: BLE001 - e.g. a result that cannot be unpickled
                yield _failed(session, f"{type(e).__name__}: {e}", 0.0)


def _analyze_and_store(
    session: Session,
    key: CacheKey,
    cache_dir: str | None,
    cache_max_bytes: int,
    options: UserOptions,
    analyze_fn: AnalyzeSession | None,
    force: bool = False,
) -> SessionResult:
    """Worker: one session through the analysis entry point, into the cache (runs in a worker process).

    A report whose hosts have errors is not stored, so the next run retries them (the error may be transient,
    e.g. a network read); a report that could not be stored for any other reason is a failure.
    ``force``: nothing read from the cache (neither the session's entry nor its hosts'), every host analysed again.
    """
    t0 = time.perf_counter()
    from tb_gpu_advisor.runtime import guard

    advisor = Advisor(session.path, cache=ReportCache(cache_dir, max_bytes=cache_max_bytes), options=options)
    try:
        with guard.analysis_limits():  # the one rule of every analysis (runtime/guard.py), as report and the tab
            a = advisor.report(session, progress=_WorkerProgress(session.stock_run), analyze_fn=analyze_fn,
                               force=force)
    except Exception as e:  # noqa: BLE001 - one bad session must not stop the others
        return _failed(session, f"analysis failed: {type(e).__name__}: {e}", time.perf_counter() - t0)
    errors = [(h.path, _reason(h.path, h.error)) for h in getattr(a.report, "hosts", []) if getattr(h, "error", None)]
    if not errors and not a.stored and not a.from_cache:
        if a.not_stored and a.not_stored.startswith("the file changed"):
            return _failed(session, f"{a.not_stored}: not cached, run precompute again", time.perf_counter() - t0)
        return _failed(session, f"analysed but not stored: {a.not_stored or 'cache write failed'}", time.perf_counter() - t0)
    return SessionResult(session.stock_run, len(session.hosts), session.size, "new",
                         time.perf_counter() - t0, a.stored, errors)


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
    tail = f"{plural(r.hosts, 'host')}, {_human(r.size)}, {r.seconds:.1f}s"
    if r.errors:
        tail += f", {plural(len(r.errors), 'file')} with errors (not cached)"
    return head + tail


def print_summary(summary: Summary, out: TextIO) -> None:
    """The end-of-run summary: counts, every failed file with its reason, wall time."""
    rs = summary.results
    _say(out, "precompute summary:")
    _say(out, f"  sessions:  {len(rs)} ({summary.count('cached')} cached, {summary.count('new')} new, "
              f"{summary.count('failed')} failed)")
    _say(out, f"  hosts:     {sum(r.hosts for r in rs)} files, {_human(sum(r.size for r in rs))}")
    errors = summary.errors
    _say(out, f"  errors:    {plural(len(errors), 'file')}")
    for path, reason in errors:
        _say(out, f"    {path}: {reason}")
    _say(out, f"  wall time: {summary.wall_seconds:.1f}s with {plural(summary.jobs, 'worker')}")
    _say(out, f"  cache:     {summary.cache_dir or 'disabled'}")
