"""Sources 7-8, ``xla_modules`` / ``xla_module_launches``: JAX / XLA steps from the executions of
the most frequent compiled module -- the ``XLA Modules`` line (post-processed files) or the host's ``<module>:XLA GPU
module`` launches (raw files) --, each process's kth execution its step k, modules run once per cycle folded in.

Why: a JAX program marks no step; its jitted train step is one module executed once per iteration, so the most
frequent module's executions are the iterations.  They win over NVTX ranges and everything after them.
"""

from __future__ import annotations

from itertools import pairwise
from typing import NamedTuple

import numpy as np

from tb_gpu_advisor.job.structure import SpanSteps, module_executions
from tb_gpu_advisor.model.columns import union_intervals
from tb_gpu_advisor.model.trace import HostEvents, Trace
from tb_gpu_advisor.steps.windows import MarkedSteps, _group_windows


class ProcessRuns(NamedTuple):
    """One process's executions of the step's module (:func:`_module_runs`): each one's start and end (ns), and which
    host events are the other modules run once in each of its iterations (bool per host event)."""

    starts: np.ndarray
    ends: np.ndarray
    cycle: np.ndarray


def _xla_module_steps(trace: Trace) -> MarkedSteps | None:
    """Executions of the compiled module run most often on any GPU (the ``XLA Modules`` line), one per step."""
    if not trace.module_runs:
        return None
    best = max(trace.module_runs, key=lambda r: r.start.size)  # the first GPU's on a tie, as the planes come
    return MarkedSteps("xla_modules", best.note, np.arange(best.start.size, dtype=np.int64), best.start, best.end, {})


def _xla_launch_steps(h: HostEvents, proc: np.ndarray | None = None,
                      programs: np.ndarray | None = None) -> MarkedSteps | None:
    """Steps of a raw JAX/XLA capture: the host's executions of its most executed GPU module.

    Raw ``jax.profiler.trace`` files have no ``XLA Modules`` line (the stock
    converter derives it later) and no step markers unless the user added
    ``StepTraceAnnotation``; but every execution of a jitted function's
    module is wrapped in a ``<module>:XLA GPU module`` host event.  The
    module executed most often (at least twice) is taken to be the training
    step -- a whole-run ``fori_loop`` executes once and is left to the later
    sources.  Unlike GPU busy clusters, this needs no idle gap between
    steps, so asynchronous dispatch (no per-step host sync) still splits.
    Where several processes ran it (``proc``: each host line's process, :func:`~tb_gpu_advisor.model.trace.line_processes`; the ranks of one
    Nsight export), each process's executions are its own steps (:func:`_module_processes`).  ``programs``: per
    host event, the program an XPlane execution ran (:func:`~tb_gpu_advisor.job.structure.executed_programs`).
    """
    if not len(h):
        return None
    of = module_executions(h, proc, programs)  # each event's module (its program, where a name's programs cycle)
    if of is None:
        return None
    ev, modules = of
    mod = ev >= 0
    if not mod.any():
        return None
    counts = np.bincount(ev[mod], minlength=len(modules))
    if counts.max() < 2:
        return None
    tied = np.flatnonzero(counts == counts.max())
    # modules executed as often as each other (``jit_train_step`` and the ``jit__threefry_split`` of the key split
    # before it): the step is the one whose executions launch the most work, not the first seen
    best = int(tied[np.argmax([_launches_inside(h, ev == k) for k in tied.tolist()])]) if tied.size > 1 else int(tied[0])
    m = ev == best
    module = modules[best]
    shown = h.names[int(h.name[np.flatnonzero(m)[0]])]
    others = [int(k) for k in tied.tolist() if int(k) != best]
    procs = _module_processes(h, m, proc)
    runs = [_module_runs(h, np.where(own, ev, -1), best, others) for own in procs]
    cycle = np.logical_or.reduce([r.cycle for r in runs])
    note = f"host executions of XLA module `{module}` (`{shown}` events)"
    if cycle.any():
        names = sorted({modules[int(k)] for k in np.unique(ev[cycle]).tolist()})
        note += (f", each followed by one execution of {', '.join(f'`{n}`' for n in names[:3])}"
                 f"{' ...' if len(names) > 3 else ''} (one iteration)")
    if len(runs) == 1:
        one = runs[0]
        return MarkedSteps("xla_module_launches", note, np.arange(one.starts.size, dtype=np.int64), one.starts,
                           one.ends, {})
    if max(r.starts.size for r in runs) < 2:  # each process ran it once: a whole run, as one process's would be
        return None
    return _each_process_steps(h, runs, procs, note + _processes_note(runs))


def _runs_several_per_span(xla: MarkedSteps | None, own: SpanSteps | None) -> bool:
    """Whether the module read as the step (``xla``, :func:`_xla_launch_steps`' reading) runs two or more times inside
    every one of the program's own repeated spans (``own``: ``job.structure``), each execution inside one: the module
    is then one call of many in each iteration, not the iteration.

    Why: an un-jitted JAX program dispatches every ``jnp`` call as its own one-op module (``jit_add``, ``jit_matmul``);
    the most executed module is the most used op, run several times in each call of the Python function the loop
    repeats (survey h37-survey46: TraceLens' eager attention read as 22 steps of 1.47 ms inside 3 iterations of
    3.3-5.1 ms).  No step runs several times inside one iteration that encloses it; a jitted step called once per
    iteration (one execution in each span) keeps its reading."""
    if xla is None or own is None or xla.source != "xla_module_launches" or not own.timed or own.start.size < 2:
        return False
    starts = np.asarray(xla.starts, np.int64)
    at = np.searchsorted(own.start, starts, side="right") - 1
    inside = (at >= 0) & (starts < own.end[np.maximum(at, 0)])
    if not inside.all():
        return False
    return bool(np.bincount(at, minlength=own.start.size).min() >= 2)


def _module_runs(h: HostEvents, ev: np.ndarray, best: int, others: list[int]) -> ProcessRuns:
    """One process's steps: its executions of module ``best`` (``ev``: each host event's
    module, -1 off this process), each to its end -- the last to the end of the rest of its iteration, where other
    modules run once in each step (``cycle``, bool per host event: :func:`_cycle_modules`).

    Why the last step's end: each step ends where the next starts; the last ended at its module's end, and the cycle's
    other modules' work fell outside every step (survey h37-survey32: a 1.42 ms last step of 3.7-4.5 ms iterations)."""
    m = ev == best
    s, e = union_intervals(h.start[m], h.end[m])
    cycle = _cycle_modules(h, ev, others, s)
    if cycle.any():
        e = e.copy()
        e[-1] = max(int(e[-1]), int(h.end[cycle & (h.start >= s[-1])].max(initial=int(e[-1]))))
    return ProcessRuns(s, e, cycle)


def _module_processes(h: HostEvents, m: np.ndarray, proc: np.ndarray | None) -> list[np.ndarray]:
    """Bool per host event, one mask per process that executed the step's module (``m``; ``proc``: each line's process,
    :func:`~tb_gpu_advisor.model.trace.line_processes`): its lines' events; one mask of every event where one process ran it or none is named.

    Why: each process executes its own steps.  Executions of every process merged by time are no host-wide steps: ranks
    that run together overlap each other's executions into one chain (4 ranks 50 us apart: five steps read as one),
    ranks that run in turn (each process after the last has ended) line theirs up as one sequence (4 ranks' 5 steps
    read as 20, walk ``--forms`` seed 30061)."""
    if proc is None:
        return [np.ones(len(h), dtype=bool)]
    of = proc[h.line.astype(np.int64)]
    ran = np.unique(of[m]).tolist()
    return [of == p for p in ran] if len(ran) > 1 else [np.ones(len(h), dtype=bool)]


def _processes_note(runs: list[ProcessRuns]) -> str:
    """How the steps of several processes make the job's: each process's kth execution its step k, and, where no
    process's executions overlap another's, that they ran one after another (not ranks of one step at once)."""
    note = f"; each of {len(runs)} processes executes its own steps: its kth execution is its step k"
    spans = sorted((int(r.starts[0]), int(r.ends.max())) for r in runs)
    if all(a[1] <= b[0] for a, b in pairwise(spans)):
        note += (" (the processes ran one after another, none executing while another did: their steps are "
                 "numbered each from its own first)")
    return note


def _each_process_steps(h: HostEvents, runs: list[ProcessRuns], procs: list[np.ndarray],
                        note: str) -> MarkedSteps:
    """The module's steps, with ``note``, from processes' own executions ``runs`` (one per mask of ``procs``): step k
    is every process's kth, host-wide from the first one's start to the last one's end; each line of a process that
    ran every step keeps that process's own windows (:func:`_own_host_windows` places its GPU by them).

    Why the reading itself: a plain 4-tuple was spread into ``MarkedSteps`` by position (h37-debt50 *Left* 3)."""
    ids = np.concatenate([np.arange(r.starts.size, dtype=np.int64) for r in runs])
    u, s, e = _group_windows(ids, np.concatenate([r.starts for r in runs]).astype(np.int64),
                             np.concatenate([r.ends for r in runs]).astype(np.int64))
    per_line: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for r, own in zip(runs, procs, strict=True):
        if r.starts.size == u.size:
            for ln in np.unique(h.line[own]).tolist():
                per_line[int(ln)] = (r.starts[u].astype(np.int64), r.ends[u].astype(np.int64))
    return MarkedSteps("xla_module_launches", note, u, s, e, per_line)


def _cycle_modules(h: HostEvents, ev: np.ndarray, others: list[int], s: np.ndarray) -> np.ndarray:
    """Bool per host event: an execution of another module run as often as the step's module (``others``) that runs
    once in each step (steps from ``s``, the step module's executions' starts, to the next's start; the last to the
    capture's end) -- the rest of one iteration, as a loop calling four jitted solvers in turn runs each once."""
    out = np.zeros(len(h), dtype=bool)
    for k in others:
        mk = ev == k
        if not mk.any():  # a module this process never ran (``ev`` is one process's)
            continue
        at = np.searchsorted(s, h.start[mk], side="right") - 1
        if at.min() >= 0 and np.array_equal(np.bincount(at, minlength=s.size), np.ones(s.size, np.int64)):
            out |= mk
    return out


def _launches_inside(h: HostEvents, sel: np.ndarray) -> int:
    """How many launch records (host events with a correlation id) start inside the events ``sel`` on their thread."""
    n = 0
    launch = np.asarray(h.corr) >= 0
    for ln in np.unique(h.line[sel]).tolist():
        on = h.line == ln
        s, e = union_intervals(h.start[sel & on], h.end[sel & on])
        t = h.start[launch & on].astype(np.int64, copy=False)
        k = np.searchsorted(s, t, side="right") - 1
        n += int(((k >= 0) & (t <= e[np.maximum(k, 0)])).sum())
    return n
