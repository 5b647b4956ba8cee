"""The job's frame: the program's one range around the passes it repeats and times.

A benchmark often wraps its timed passes in one range (``record_function("inference")``, an NVTX
``resnet50_inference``) after warm-up passes of the same work outside it.  That range is no step (it is not
repeated), but it says which repeats the program times: the repeats inside it are the steps, the ones before it
its warm-up.  Every step reading that finds repeats by itself -- the launch sequence's period
(``job.period``), GPU bursts (``steps.detect``) -- asks this one rule, so that a frame means the same whatever
found the repeats.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tb_gpu_advisor.frameworks import user_ranges
from tb_gpu_advisor.model.trace import HostEvents, Trace, line_processes


class Frame(NamedTuple):
    """The repeats ``[first, end)`` inside the program's range ``name``, which ends at ``end_ps`` (host clock)."""

    first: int
    end: int
    name: str
    end_ps: int


def frame(trace: Trace, times: np.ndarray, least: int = 2, once: bool = False, own: np.ndarray | None = None
          ) -> Frame | None:
    """(first, end, name, end_ps): the indices ``[first, end)`` of the sorted host ``times`` (ps; the repeats' starts, or
    their launches) inside the program's one range that holds at least ``least`` of them but not all; None where no
    such range, or more than one, exists.  ``once``: only a range whose name its thread opens once (repeated spans
    framed: :func:`_once_on_its_thread`).  ``own`` (processes x repeats; -1 where a process has no part in a repeat):
    each process's own time of each repeat -- a range on a process's line holds the repeats whose own time lies
    inside it (:func:`_held`).

    Why each condition: a range holding every repeat frames nothing apart (the whole reading stands); one holding
    fewer than ``least`` shows no step boundary inside it; two ranges that split the repeats differently leave the
    timed ones unknown.  A range the program names its warm-up (``Warm-up``) holds what it does not time: never the
    frame."""
    h, windows, starts = trace.h, set(), {}
    warm = user_ranges.warmup_ranges(h, trace.ranges)
    idx = np.setdiff1d(user_ranges.program_ranges(trace), warm)
    phases = idx[_once_on_its_thread(h, idx)]
    if once:
        idx = phases
    proc = line_processes(trace) if own is not None else None
    for i in idx.tolist():
        lo, hi, n = _held(times, own, -1 if proc is None else int(proc[h.line[i]]), int(h.start[i]), int(h.end[i]))
        if n >= least and hi - lo < times.size:
            f = Frame(lo, hi, h.names[h.name[i]], int(h.end[i]))
            windows.add(f)
            starts[f] = max(starts.get(f, int(h.start[i])), int(h.start[i]))
    if len({(f.first, f.end) for f in windows}) != 1:
        return None
    found = min(windows)
    before = times[:found.first]
    before = before[~_inside(h, warm, before)]  # a repeat the program names its warm-up is one, whatever holds it
    return None if _named_apart(h, phases, before, starts[found]) else found


def process_times(trace: Trace, times: np.ndarray, gpu: int) -> np.ndarray | None:
    """``frame``'s ``own`` where the repeats are one process's (``times``: the launches of the process driving
    ``gpu``): its row the times, every other process's none; None where the trace names no process per GPU.

    Why: a rank's launch sequence is its own; another rank's range (the same benchmark's, a little apart) holds a
    different split of it, and two ranges that split the repeats differently frame nothing -- a 2-rank benchmark 50 us
    apart read its 2 warm-ups as steps beside its 4 timed passes (h37-probe47f)."""
    proc = line_processes(trace)
    lines = trace.gpu_host_lines.get(gpu)
    if proc is None or lines is None or not len(lines):
        return None
    p = int(proc[int(np.asarray(lines)[0])])
    own = np.full((int(proc.max()) + 1, times.size), -1, np.int64)
    own[p] = times
    return own


def _held(times: np.ndarray, own: np.ndarray | None, proc: int, start: int, end: int) -> tuple[int, int, int]:
    """(first, end, count): the repeats a range on process ``proc``'s line (-1: none named) holds from ``start`` to
    ``end`` -- of its own process's times (``own``'s row) where ``own`` names it, else of ``times``.

    Why: a range is the program's mark of its own work.  Where several processes (ranks, each its own GPU) run the
    same loop a little apart, their GPUs' merged bursts start on whichever rank is ahead; a range of one rank that
    held the other rank's burst starts framed bursts its own GPU does not start inside it: a 2-rank NVTX job's
    `backward FFT` of one iteration on rank 1 framed 2 of the 4 merged bursts as the steps (h37-probe46f)."""
    if own is None or proc < 0 or proc >= own.shape[0]:
        lo = int(np.searchsorted(times, start, side="left"))
        hi = int(np.searchsorted(times, end, side="right"))
        return lo, hi, hi - lo
    where = np.flatnonzero(own[proc] >= 0)
    t = own[proc][where]
    a, b = int(np.searchsorted(t, start, side="left")), int(np.searchsorted(t, end, side="right"))
    return (int(where[a]), int(where[b - 1]) + 1, b - a) if b > a else (0, 0, 0)


def _inside(h: HostEvents, idx: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Bool per host time of ``times``: inside one of the ranges ``idx``."""
    out = np.zeros(times.size, bool)
    for i in idx.tolist():
        out |= (times >= h.start[i]) & (times <= h.end[i])
    return out


def _named_apart(h: HostEvents, phases: np.ndarray, before: np.ndarray, start: int) -> bool:
    """Whether a repeat before the frame (``before``, host times; the frame opens at ``start``) lies inside a range of
    the program's own that it opens once and closes before the frame opens (``phases``, warm-up ranges left out).

    Why: the frame's premise is warm-up passes of the timed work before it, outside any range or in one the program
    names its warm-up.  Work the program puts in a phase of its own beside the range (``main->test_max_par`` before
    ``main->test_copies`` and ``main->process``: extra-p's ParallelKernelsTest, three tests run once each) is no
    warm-up of it: the range is one of the program's phases, and the repeats it holds are that phase's work cut at
    its syncs, no timed passes (h37-survey71: the copy test's two bursts read as the job's 2 steps, "mostly D2H")."""
    if not before.size:
        return False
    return bool(_inside(h, phases[h.end[phases] <= start], before).any())


def _once_on_its_thread(h: HostEvents, idx: np.ndarray) -> np.ndarray:
    """Bool per range of ``idx``: its name opens no other range of its thread -- the program's one range, not one of a
    range it repeats (a rank's ``backward_bucketed``, run every step, may reach past the next step's start where the
    steps' starts are the ranks' earliest: h37-survey54's 4-rank MPI job, read as 2 steps "framed" by one of them)."""
    key = h.name[idx].astype(np.int64) * (int(h.line.max()) + 1 if h.line.size else 1) + h.line[idx].astype(np.int64)
    _, inv, counts = np.unique(key, return_inverse=True, return_counts=True)
    return counts[inv] == 1


def apart(before: int, after: int) -> str:
    """What the frame leaves out, in words: the repeats before it (warm-up) and after it (untimed)."""
    def are(n: int) -> str:
        return "is" if n == 1 else "are"
    return " and ".join(part for part in (f"the {before} before it {are(before)} its warm-up" if before else "",
                                          f"the {after} after it {are(after)} outside its timing" if after else "")
                        if part)
