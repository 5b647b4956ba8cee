"""The chain, in one place: read -> steps -> metrics -> rules -> report.

Every caller that turns files into reports -- the CLI, the tab's background service, precompute,
the worker processes of ``runtime.isolation`` -- comes through :func:`analyze_host` /
:func:`analyze_session`; no stage runs another.  ``analyze_host`` never raises for a bad file:
the HostReport carries ``error``, so one bad host never breaks its session.

The user's settings (``common.options.UserOptions``: parameter count, network bandwidth, model FLOPs) are an
argument of every function here and go down to the metrics and rules that read them: the tab analyses different
settings at once, in threads and worker processes, so no setting may come from process-wide state.  ``params=``,
the older keyword, still works; a caller that gives no options gets the command line's (``UserOptions.of``).
"""

from __future__ import annotations

import os
from typing import Callable, Iterable, Sequence

import numpy as np

from tb_gpu_advisor import formats, frameworks, rules
from tb_gpu_advisor.common.memo import Memo
from tb_gpu_advisor.common.memory import release_free_heap
from tb_gpu_advisor.common.options import UserOptions
from tb_gpu_advisor.job import detect_job
from tb_gpu_advisor.job import peers as job_peers
from tb_gpu_advisor.metrics.compute import compute_host_metrics
from tb_gpu_advisor.metrics.context import build_context
from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.columns import index_dtype
from tb_gpu_advisor.model.damage import Damage
from tb_gpu_advisor.model.damage import of_error as damage_of_error
from tb_gpu_advisor.model.logdir import RankRuns
from tb_gpu_advisor.model.schema import HostReport, Report
from tb_gpu_advisor.model.trace import Trace, device_launches, release_columns
from tb_gpu_advisor.report import timeline
from tb_gpu_advisor.report.build import build_host_report
from tb_gpu_advisor.report.merge import merge_hosts
from tb_gpu_advisor.runtime.guard import out_of_memory_message
from tb_gpu_advisor.steps.detect import detect_steps


def host_metrics(trace: Trace, params: int | None = None, options: UserOptions | None = None,
                 release: bool = False, peers: job_peers.PeerView | None = None) -> HostMetrics:
    """Steps and metrics of one trace: which framework wrote it, each device event's launch, the steps, the numbers.

    ``release`` (a caller that owns ``trace`` and drops it after): each column is dropped after the last
    stage that reads it (:func:`~tb_gpu_advisor.model.trace.release_columns`), so the metrics' peak does not
    carry the correlation ids and step stats.  ``peers``: the job's other processes' one-time spans and collective
    entries, ns on the clock this trace's file counts on (:func:`peer_start_up`), which its job places on its timeline
    (``Job.peer_one_time``, ``Job.peer_calls``)."""
    options = UserOptions.of(options, params)
    fw = frameworks.detect_trace(trace)
    # correlation: host launch record of every device event (graph launches cover all their kernels)
    launches: list[np.ndarray] = device_launches(trace.h, trace.devices, index_dtype(len(trace.h)))
    release_free_heap()  # the correlation table's build arrays, before the steps' (see common/memory.py)
    job = detect_job(trace, launches, fw)
    job.peer_one_time = job_peers.placed(trace, peers.one_time if peers is not None else None)
    job.peer_calls = job_peers.placed_calls(trace, peers)
    job.phase = job_peers.with_peers(job.phase, job.peer_one_time, trace)
    steps = detect_steps(trace, launches, job, fw)
    # the step detection's temporaries: ~40 MB of freed heap on the dense 100 MB benchmark capture, under the
    # context built next (see common/memory.py)
    release_free_heap()
    if release:  # read by the correlation and the steps only (the context still reads the host's corr and root)
        release_columns(trace.h, "step_num", "iter_num", "group_id")
        for d in trace.devices:
            release_columns(d, "corr", "group_id")
    return compute_host_metrics(trace, steps, launches, fw, options, release=release, job=job)


def host_report(m: HostMetrics, size: int, damage: list[Damage] | None = None) -> HostReport:
    """Rules over one host's metrics, then its report (``damage``: what the reader could not read of the file)."""
    return build_host_report(m, rules.evaluate(m), size, damage)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def analyze_host(host_file, params: int | None = None, options: UserOptions | None = None,
                 peers: job_peers.PeerView | None = None, peer_files: Sequence = ()) -> HostReport:
    """Analyze one host file (a ``discovery.HostFile``, or anything with ``host``, ``path`` and optionally ``format``
    and ``size``) with the user's ``options``; errors land in ``HostReport.error``: a bad file must not break the
    session.  ``peers``: the job's other processes' reading on its clock (:func:`peer_start_up`); not given,
    they are read here from ``peer_files`` (:func:`clock_files`), so a worker process reads them where it analyses."""
    options = UserOptions.of(options, params)
    host, path = host_file.host, host_file.path
    size = int(getattr(host_file, "size", 0) or 0)
    try:
        if peers is None and peer_files:
            peers = peer_start_up(peer_files)
        report = _analyze_host(host_file, size, options, peers)
    except MemoryError:
        # the memory guard (runtime/guard.py) stopped this file; its arrays are freed as the exception unwinds
        report = HostReport(host=host, path=path, size_bytes=size or _size(path), error=out_of_memory_message())
    # the last trim, after the metrics are gone: a long-lived process (a pool worker, the MCP server) must not keep a
    # big file's heap after its report (see common/memory.py)
    release_free_heap()
    return report


def _analyze_host(host_file, size: int, options: UserOptions,
                  peers: job_peers.PeerView | None = None) -> HostReport:
    """:func:`analyze_host` up to running out of memory (raised: the caller says so once, for read and analysis)."""
    host, path = host_file.host, host_file.path
    try:
        trace = formats.read(host_file)
    except MemoryError:  # numpy's says only "Unable to allocate ...": the caller names the limit instead
        raise
    except Exception as e:  # noqa: BLE001
        # a file too damaged to analyse: the error, and the damage its reader named (kind, code, place) beside it
        said = damage_of_error(e)
        return HostReport(host=host, path=path, size_bytes=size or _size(path), error=str(e) or type(e).__name__,
                          damage_records=[said] if said is not None else [])
    size = size or trace.size_bytes
    damage = list(trace.problems)  # a file cut off mid-write (or read whole, contradicting itself): analysed, and said
    try:
        m = host_metrics(trace, options=options, release=True, peers=peers)
        if m.job is not None:  # its one-time costs and entries, which its peers ask (:func:`peer_start_up`)
            _remember_start_up(host_file, job_peers.of_peer(trace, m.job.phase.spans()))
        del trace  # the event tables, before the report is built (see memory.py)
        release_free_heap()
        m.host = host
        return host_report(m, size, damage)
    except MemoryError:
        raise
    except Exception as e:  # noqa: BLE001
        return HostReport(host=host, path=path, size_bytes=size, error=f"analysis failed: {type(e).__name__}: {e}")


def host_timelines(host_file, windows: Sequence[tuple[float, float]], max_events: int = timeline.MAX_EVENTS) -> list[dict]:
    """The step timeline of each (start_ms, end_ms) window of one host file (``report.timeline``).

    The file is read by the same reader, under the same size limit, and its steps and host roles come from the
    same chain as the report's, so the timeline's idle runs are the breakdown's.  One read serves every window
    asked (the tab asks for all the windows a report names on that host at once).  Raises for an unreadable file.
    """
    trace = formats.read(host_file)
    fw = frameworks.detect_trace(trace)
    launches = device_launches(trace.h, trace.devices, index_dtype(len(trace.h)))
    job = detect_job(trace, launches, fw)
    steps = detect_steps(trace, launches, job, fw)
    ctx = build_context(trace, steps, launches, fw, job=job)
    del launches
    return [timeline.window_timeline(ctx, float(s), float(e), max_events) for s, e in windows]


def peer_start_up(files: Sequence) -> job_peers.PeerView | None:
    """The one-time spans (module loads, compiles, the context's creation: ``Job.phase``) of the job's other
    processes, read from their own ``files`` (host files on the session's clock, ``RankRuns.files``), and the times
    they are all inside a collective, as ns on that clock (``job.peers.joined``); None where there are none.  Each
    file is read as the analysis reads it and dropped, both from that one read (``job.peers.of_peer``); one that
    cannot be read gives none (its own session says why)."""
    parts = []
    for hf in files:
        known = _START_UPS.get(_identity(hf))
        if known is not None:
            parts.append(known)
            continue
        try:
            trace = formats.read(hf)
            launches = device_launches(trace.h, trace.devices, index_dtype(len(trace.h)))
            parts.append(_remember_start_up(hf, job_peers.of_peer(trace, detect_job(trace, launches).phase.spans())))
        except MemoryError:
            raise
        except Exception:  # noqa: BLE001 - a peer's damage is its own report's
            continue
        finally:
            trace = launches = None
            release_free_heap()
    return job_peers.joined(parts)


#: Each host file's reading by its peers on its clock (:func:`peer_start_up`, ``job.peers.PeerView``), by its identity
#: (path, size, mtime): the ranks of a job in sibling folders each ask every other's, so each file is read for them
#: once per process -- or never, where its own analysis ran first here.  Small arrays, of at most 256 files.
_START_UPS: Memo[job_peers.PeerView] = Memo(256)


def _identity(hf) -> tuple:  # noqa: ANN001 - a HostFile
    return (hf.path, int(getattr(hf, "size", 0) or 0), int(getattr(hf, "mtime_ns", 0) or 0))


def _remember_start_up(hf, view: job_peers.PeerView) -> job_peers.PeerView:  # noqa: ANN001
    return _START_UPS.put(_identity(hf), view)


def clock_files(rank_runs: RankRuns | None, host_file) -> tuple:  # noqa: ANN001 - a HostFile
    """The host files of the job's ranks in sibling run folders (``rank_runs``, ``Session.linked_ranks``) that count on
    ``host_file``'s clock (``RankRuns.clock_files``), whose one-time spans its analysis places (``peer_files`` of
    :func:`analyze_host`).  Every path that analyses a host of a session asks this, so the CLI, the parallel workers,
    the isolated children, the per-host cache and precompute place the same peers (h37-ranks60)."""
    return rank_runs.clock_files(host_file.host) if rank_runs is not None else ()


def analyze_session(run: str, session: str, host_files: Iterable, progress: Callable[[str, float], None] | None = None,
                    params: int | None = None, options: UserOptions | None = None, rank_runs=None) -> Report:
    """Every host file in turn, merged into the session's Report, all with the same ``options``; ``rank_runs``: the
    job's other ranks in sibling run folders (``Session.linked_ranks``), which the job rules read."""
    options = UserOptions.of(options, params)
    files = list(host_files)
    reports = []
    for i, hf in enumerate(files):
        if progress:
            progress(f"analysing {hf.host} ({i + 1}/{len(files)})", i / max(len(files), 1))
        reports.append(analyze_host(hf, options=options, peer_files=clock_files(rank_runs, hf)))
    if progress:
        progress("done", 1.0)
    return merge_hosts(run, session, reports, options, rank_runs)
