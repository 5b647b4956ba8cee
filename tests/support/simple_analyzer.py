"""A small real analyzer with the signatures of ``tb_gpu_advisor.report.build`` (for cache/precompute tests).

It reads each host file with the real reader and reports its size and
event count, so tests can check that results come from the files and that
a changed file gives a changed report.  Module-level functions, so worker
processes can import them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence

from tb_gpu_advisor.formats.xplane.reader import ProfileReadError, read_timeline
from tb_gpu_advisor.model.schema import HostReport, Metric, Report

VERSION = "test-analyzer-1"


def analyze_host(host_file, params: int | None = None) -> HostReport:
    """Size and event count of one host file; a read error goes into ``error``."""
    try:
        tl = read_timeline(host_file.path)
    except ProfileReadError as e:
        return HostReport(host=host_file.host, path=host_file.path, size_bytes=host_file.size, error=e.reason)
    events = sum(p.num_events for p in tl.planes)
    metric = Metric(id="events", label="Events", value=float(events), unit="count", display=str(events))
    return HostReport(
        host=host_file.host, path=host_file.path, size_bytes=tl.size_bytes, headline=[metric],
        capture={"pid": os.getpid(), "params": params},
    )


def merge_hosts(run: str, session: str, host_reports: Sequence[HostReport]) -> Report:
    """One session report from per-host reports: total events as the headline."""
    total = sum(int(h.headline[0].value) for h in host_reports if h.headline)
    metric = Metric(id="events", label="Events", value=float(total), unit="count", display=str(total))
    return Report(
        run=run, session=session, hosts=list(host_reports), findings=[], headline=[metric],
        healthy=not any(h.error for h in host_reports), analyzer_version=VERSION,
        generated_at=time.strftime("%Y-%m-%dT%H:%M:%S"),
    )


def analyze_session(run: str, session: str, host_files, progress: Callable[[str, float], None] | None = None,
                    params: int | None = None) -> Report:
    """Sequential session analysis: every host, then merge."""
    reports = []
    for i, hf in enumerate(host_files):
        if progress:
            progress(f"reading {hf.host}", i / max(len(host_files), 1))
        reports.append(analyze_host(hf, params=params))
    return merge_hosts(run, session, reports)


def analyze_session_failing(run, session, host_files, progress=None, params=None) -> Report:
    """Like analyze_session but raises for sessions named 'boom' (an analyzer crash)."""
    if session == "boom":
        raise RuntimeError("analyzer crashed on purpose")
    return analyze_session(run, session, host_files, progress, params)


def environ(name: str) -> str | None:
    """A worker's view of one environment variable."""
    return os.environ.get(name)
