"""Windows from marks: the marks of one step number make one step (:func:`_group_windows`: several
ranks' marks of step k are one step, from the earliest start to the latest end), and each host line's (rank's) own
windows of those steps (:func:`_line_windows`, :func:`_aligned_line_windows`).

Why: every marked source -- the format's step markers, NVTX ranges, framework iterations, XLA module executions,
training and engine ranges -- numbers steps per rank; one grouping rule keeps "step k" the same step whichever
source read it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tb_gpu_advisor.model.trace import HostEvents


class MarkedSteps(NamedTuple):
    """The steps a numbered source reads (the host's step marks, XLA's module executions, NVTX ranges, a step-named
    annotation, a framework's iterations, a training or engine range, the forward's runs), by name.

    Why: the readers returned 5-, 6- or 7-tuples read by position (``steps.reading._Reading.take`` made each one of
    these first), their types spelled out at each reader; one named type says which array is which, and ``take``
    reads its fields alone.  ``per_line`` is ``{}`` where the source reads no line's own windows."""

    source: str  # ``_Reading.source``: ``profiler_step``, ``xla_modules``, ``nvtx_range``, ``nvtx_top_range`` ...
    note: str
    ids: np.ndarray  # the steps' numbers
    starts: np.ndarray  # host windows, ps: the earliest start of each step's marks
    ends: np.ndarray  # ... and their latest end
    per_line: dict[int, tuple[np.ndarray, np.ndarray]]  # each host line's (rank's) own (starts, ends) of the steps
    tiled_by_updates: bool = False  # ``_Reading.tiled_by_updates``: windows from one update's end to the next's


def _group_windows(key: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per distinct key: (keys, min start, max end), sorted by start."""
    u, inv = np.unique(key, return_inverse=True)
    s = np.full(u.size, np.iinfo(np.int64).max, dtype=np.int64)
    e = np.full(u.size, np.iinfo(np.int64).min, dtype=np.int64)
    np.minimum.at(s, inv, start)
    np.maximum.at(e, inv, end)
    o = np.argsort(s, kind="stable")
    return u[o], s[o], e[o]


def _group_lines(line: np.ndarray, key: np.ndarray, start: np.ndarray, end: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_group_windows` of several lines' (ranks') marks, each line's missing edge steps counted at its own time:
    a step number some line lacks before its first mark (after its last) starts, on that line, its own period
    (median start-to-start per number) before its first (after its last) -- an estimate of a start only, no end.

    Why: a step's host-wide window starts at the earliest rank's mark; a rank whose capture opened late (closed early)
    marks none of its edge steps, so those windows started at the *other* ranks' marks.  Where that rank LEADS them
    by more than a step (2.5 steps, ranks started apart), its first marked step began before the others' earlier
    steps: the steps read out of their loop's order (2, 0, 3, 1, 4 ...) and its unrecorded steps as recorded ones with
    no kernel of its GPU (h37-probe45c *Left* 2).  Each rank runs the loop's steps at its own period."""
    if np.unique(line).size < 2:
        return _group_windows(key, start, end)
    ks, ss = [key], [start.astype(np.int64)]
    every = np.unique(key)
    for ln in np.unique(line).tolist():
        on = line == ln
        k, s = key[on].astype(np.int64), start[on].astype(np.int64)
        o = np.argsort(k, kind="stable")
        k, s = k[o], s[o]
        dk = np.diff(k)
        if k.size < 2 or (dk <= 0).any():
            continue  # one mark, or a number marked twice: no period of its own
        period = float(np.median(np.diff(s) / dk))
        for miss, ref_k, ref_s in ((every[every < k[0]], k[0], s[0]), (every[every > k[-1]], k[-1], s[-1])):
            if miss.size:
                ks.append(miss.astype(np.int64))
                ss.append((ref_s + (miss - ref_k) * period).astype(np.int64))
    est_s = np.concatenate(ss)
    no_end = [np.full(x.size, np.iinfo(np.int64).min, np.int64) for x in ss[1:]]  # an estimate has no end
    return _group_windows(np.concatenate(ks), est_s, np.concatenate([end.astype(np.int64)] + no_end))


#: a step a thread's own windows do not hold (:func:`_aligned_line_windows`)
MISSING = -1


def _line_windows(h: HostEvents, sel: np.ndarray, ids: np.ndarray, u: np.ndarray) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Host line -> (starts, ends) of its own step ranges ``sel`` (numbered ``ids``), aligned with the steps ``u``;
    only the lines that hold every step once.  Why: ranks' ranges of one number are one step whose window runs from
    the first rank's start to the last's end, tiled by the first rank's; ranks 50 us apart in 119 us steps with no
    collective binding them placed the last rank's kernels a step off (its GPU counted 41 of its 42 kernels: "7
    kernels per step" of 6.96, walk seed 20656).  Each rank's GPU is placed by its own thread's ranges."""
    return _windows_by_line(h.line[sel], ids, h.start[sel], h.end[sel], u)


def _windows_by_line(line: np.ndarray, ids: np.ndarray, start: np.ndarray, end: np.ndarray, u: np.ndarray
                     ) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """:func:`_aligned_line_windows` of windows given flat: each one's host line, step number, start and end."""
    per = {int(ln): (ids[line == ln], start[line == ln].astype(np.int64), end[line == ln].astype(np.int64))
           for ln in np.unique(line).tolist()}
    return _aligned_line_windows(per, u)


def _aligned_line_windows(per: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]], u: np.ndarray
                          ) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Host line -> (starts, ends) of its own windows, aligned with the host-wide steps ``u``, from each line's own
    (step numbers, starts, ends) in ``per``; only the lines that hold each step they mark once, and only where two
    lines or more mark steps (one line's windows are the host's).  A step a line does not mark (its rank's window
    opened a step later, or closed a step earlier) is ``MISSING`` in both columns: the host's window stands for it
    (``steps.place._own_host_windows``).  The one home of the per-rank windows every NVTX reading returns
    (:func:`_line_windows`, :func:`_framework_iterations`).

    Why a line marking fewer steps keeps its own windows: its rank's steps are still its own -- a rank whose capture
    opened a step after the other's, and which paused 30 ms for a module load, was placed on the host's windows from
    then on, a step and more off its own: its GPU read 4.67 ms of a 6 ms step's compute and its load in a step kept
    (``synthetic.nsysexport.write_rank_pause`` with rank 1's first step cut; h37-probe43r)."""
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    if len(per) < 2:
        return out
    pos = {int(k): i for i, k in enumerate(u.tolist())}
    for ln, (ids, starts, ends) in per.items():
        lu, ls, le = _group_windows(ids, starts, ends)
        if lu.size != ids.size or lu.size < 2 or any(int(k) not in pos for k in lu.tolist()):
            continue  # a thread that marked one step twice, or one step: the host's windows stand for it
        s, e = np.full(u.size, MISSING, np.int64), np.full(u.size, MISSING, np.int64)
        at = np.array([pos[int(k)] for k in lu.tolist()], np.int64)
        s[at], e[at] = ls, le
        out[int(ln)] = (s, e)
    return out


def own_time(hs: np.ndarray, he: np.ndarray, own_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The host-wide windows (``hs``, ``he``, ps, sorted, aligned with ``own_s``) moved into one rank's own time: the
    steps before the first it marks (``own_s``: its own starts, ``MISSING`` where it marks none) by how much its first
    marked step starts later than the host-wide one, those after its last by as much as its last; the others as given.
    Unchanged where it marks none.

    Why: a step a rank did not mark has only the other ranks' window, which lies where *their* step ran -- a rank 30 ms
    behind (a module load of its own) had its unrecorded last steps placed 30 ms before its own last recorded one,
    out of order, so the step before them ended before it began (h37-probe45c).  Each rank runs the job's steps at
    the job's period, from where its own nearest step stands."""
    at = np.flatnonzero(own_s != MISSING)
    s, e = hs.astype(np.int64).copy(), he.astype(np.int64).copy()
    if not at.size:
        return s, e
    i0, i1 = int(at[0]), int(at[-1])
    for sel, i in ((slice(0, i0), i0), (slice(i1 + 1, None), i1)):
        d = int(own_s[i]) - int(hs[i])
        s[sel] += d
        e[sel] += d
    return s, e


def unrecorded(ids: np.ndarray, hs: np.ndarray, he: np.ndarray, own_s: np.ndarray, first: int, last: int
               ) -> tuple[np.ndarray, np.ndarray]:
    """(ids of the steps one rank's capture had not opened for, ids of those it had closed before): the steps it marks
    none of (``own_s``: its own starts, aligned with the steps ``ids``, ``hs``, ``he``; ``MISSING`` where none) before
    its first marked one that began, in its own time (:func:`own_time`), before its first record (``first``, ps), and
    after its last marked one that had not ended by its last record (``last``).  A step it lacks between two it marks
    is neither: its capture was open.  The one rule of a rank's capture's edges for every reading of each rank's own
    steps (Kineto's per-rank step lines, ``steps.markers``; NVTX ranges per rank's thread, ``steps.place``).

    Why: ranks start and stop their profilers on their own (``nsys profile`` per rank, a ``cudaProfilerStart`` or
    ``Stop`` each reaches in its own time, ``torch.profiler.schedule`` counting each process's own ``prof.step()``
    calls, a buffer that filled), so a capture can hold a rank's steps from its third on, or to its tenth only, while
    the others' run on.  The steps it never recorded took the other ranks' windows with no kernel of its GPU in them:
    its averages read low -- GPU 1's compute 5.4 ms of 6.0 (Nsight, opened 2 steps late; h37-probe44r *Left* 1), 4.667
    of 6.0 (closed 2 steps early) and 2.133 ms of 3.2 (Kineto, closed 2 early; h37-probe45c).  A step it began but did
    not end in its capture is one it did not record whole: dropped too."""
    none = np.zeros(0, np.int64)
    at = np.flatnonzero(own_s != MISSING)
    if not at.size:
        return none, none
    s, e = own_time(hs, he, own_s)
    pos = np.arange(ids.size)
    gone = own_s == MISSING
    opened = gone & (pos < at[0]) & (s < first)
    closed = gone & (pos > at[-1]) & (e > last)
    return ids[opened].astype(np.int64), ids[closed].astype(np.int64)
