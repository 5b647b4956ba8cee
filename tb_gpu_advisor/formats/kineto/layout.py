"""Where PyTorch writes its traces: ``<logdir>/<run>/<worker>.<time_ns>.pt.trace.json[.gz]``.

``torch.profiler.tensorboard_trace_handler`` names the worker ``<hostname>_<pid>`` by default.  Every
folder holding such files (never below a ``plugins`` folder) is a run; its files are grouped into hosts
by worker and into sessions by profiling cycle: each worker's files sorted by time, the k-th file of
every worker belongs to cycle k (``schedule(..., repeat=N)`` writes one file per worker per cycle; ranks
of one cycle write seconds apart).  A worker that missed a cycle shifts its later files one cycle early:
the rule cannot tell a missing cycle from a late one without reading the files.  The session is named
after the cycle's earliest ``time_ns`` (UTC, ``%Y_%m_%d_%H_%M_%S``; ``_<k>`` added on a collision,
``cycle_<k>`` when the names carry no time).  The ranks of one machine (workers ``<host>_<pid>``) become
one host whose GPUs are the ranks' GPUs.
"""

from __future__ import annotations

import time

from tb_gpu_advisor.formats.base import Found, Groups, Located
from tb_gpu_advisor.model.logdir import ROOT_RUN, HostFile

#: Trace file endings (``tensorboard_trace_handler``, ``use_gzip=True`` for the second).
SUFFIXES = (".pt.trace.json", ".pt.trace.json.gz")
#: Other formats' plugin assets live below this folder; PyTorch never writes there.
PLUGINS_DIR = "plugins"
EXPECTED = "<run>/<worker>.<time>.pt.trace.json[.gz]"
_SESSION_TIME_FORMAT = "%Y_%m_%d_%H_%M_%S"


def worker_of(file_name: str) -> tuple[str, int | None] | None:
    """(worker, time_ns or None) of a ``<worker>.<time_ns>.pt.trace.json[.gz]`` name, None for any other file."""
    for suffix in SUFFIXES:
        if file_name.endswith(suffix) and len(file_name) > len(suffix):
            stem = file_name[: -len(suffix)]
            worker, dot, stamp = stem.rpartition(".")
            if dot and worker and stamp.isdigit():
                return worker, int(stamp)
            return stem, None
    return None


def machine_of(worker: str) -> str:
    """``<host>_<pid>`` (the handler's default worker name) -> ``<host>``; another name is its own machine."""
    head, sep, tail = worker.rpartition("_")
    return head if sep and head and tail.isdigit() else worker


def by_machine(files: list[HostFile]) -> list[HostFile]:
    """One host per machine: the ranks of one machine (workers ``<host>_<pid>``) become one host whose GPUs
    are the ranks' GPUs, so the multi-GPU checks (imbalance, launch skew, AllReduce) compare them, on the
    clock they share."""
    machines: dict[str, list[HostFile]] = {}
    for hf in files:
        machines.setdefault(machine_of(hf.host), []).append(hf)
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


def _cycle_name(time_ns: int | None, k: int) -> str:
    """A cycle's session name: its earliest write time as the XPlane session folders are named (UTC)."""
    if time_ns is None:
        return f"cycle_{k}"
    try:
        return time.strftime(_SESSION_TIME_FORMAT, time.gmtime(time_ns / 1e9))
    except (OverflowError, OSError, ValueError):
        return f"cycle_{k}"


class KinetoLayout:
    expected = EXPECTED

    def claims(self, rel: tuple[str, ...]) -> bool:
        return worker_of(rel[-1]) is not None and PLUGINS_DIR not in rel[:-1]

    def descend(self, rel: tuple[str, ...]) -> bool:
        return PLUGINS_DIR not in rel

    def misplaced(self, rel: tuple[str, ...]) -> bool:
        return False

    def group(self, found: list[Found]) -> Groups:
        """Hosts by worker, sessions by profiling cycle (see the module docstring for the rule and its limit)."""
        by_run: dict[tuple[str, str], dict[str, list[tuple[int, str, HostFile]]]] = {}
        for f in found:
            worker, stamp = worker_of(f.name) or (f.name, None)
            run = "/".join(f.rel[:-1]) or ROOT_RUN
            hf = HostFile(worker, f.path, f.size, f.mtime_ns, "kineto")
            by_run.setdefault((run, f.folder), {}).setdefault(worker, []).append((-1 if stamp is None else stamp, f.path, hf))
        groups: Groups = {}
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
        return groups

    def locate(self, path: str) -> Located | None:
        return None


LAYOUT = KinetoLayout()
