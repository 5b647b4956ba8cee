"""Windows from marks: the marks of one step number make one step (:func:`_group_windows`: several
ranks' marks of step k are one step, from the earliest start to the latest end), and each host line's (rank's) own
windows of those steps (:func:`_line_windows`, :func:`_aligned_line_windows`).

Why: every marked source -- the format's step markers, NVTX ranges, framework iterations, XLA module executions,
training and engine ranges -- numbers steps per rank; one grouping rule keeps "step k" the same step whichever
source read it.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.model.trace import HostEvents


def _group_windows(key: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per distinct key: (keys, min start, max end), sorted by start."""
    u, inv = np.unique(key, return_inverse=True)
    s = np.full(u.size, np.iinfo(np.int64).max, dtype=np.int64)
    e = np.full(u.size, np.iinfo(np.int64).min, dtype=np.int64)
    np.minimum.at(s, inv, start)
    np.maximum.at(e, inv, end)
    o = np.argsort(s, kind="stable")
    return u[o], s[o], e[o]


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
