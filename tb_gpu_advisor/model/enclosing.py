"""Which marked host range encloses a launch: the one home of that search, for every reader whose format records
the user's ranges (Nsight's NVTX, rocmProfileData's roctx ``UserMarker``) apart from the launches they hold."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tb_gpu_advisor.model.trace import HostEvents


def innermost_range(h: HostEvents, is_range: np.ndarray, launch: np.ndarray) -> np.ndarray:
    """Per device event: the innermost marked range around its launch on the launching thread, -1 (host index).

    Ranges are sorted by (line, start, longer first); each range's parent is the innermost range containing its
    start, found by pointer jumping from the range before it (a range ending before a later range starts cannot
    contain anything after it); a launch's range is then the latest range starting before it whose chain holds
    one still open at the launch.

    Host events are sorted by (line, start) as the ranges are, so "the latest range starting at or before the
    launch's ns" is a count: the ranges up to the end of the launch's run of events on its line in that ns (a
    prefix sum, O(n), where a binary search per launch missed the cache at every step).  The jumps move only the
    entries still jumping: one that stops never moves again."""
    out = np.full(launch.shape, -1, np.int64)
    ridx = np.flatnonzero(is_range)
    if not ridx.size or not (launch >= 0).any():
        return out
    rs, re_ = h.start[ridx], h.end[ridx]
    rline = h.line[ridx]
    idx_t = np.int32 if h.start.size < 2**31 - 1 else np.int64  # indices at half width: the read's memory peak is here
    parent = np.arange(-1, ridx.size - 1, dtype=idx_t)
    parent[1:][rline[1:] != rline[:-1]] = -1
    _jump(parent, lambda todo, p: re_[p] <= rs[todo], parent)
    # the ranges up to the end of each launch's run of equal (line, start ns) on the host, less one
    last = _run_ends(h)
    upto = np.cumsum(is_range, dtype=idx_t)[last]  # per run: the ranges up to its last event
    run_of = np.cumsum(last, dtype=idx_t)  # each event's run, counted from 1 at its last event
    run_of -= last
    del last
    q = np.flatnonzero(launch >= 0)
    li = launch[q]
    cand = upto[run_of[li]]
    del upto, run_of
    cand -= 1
    cand[(cand >= 0) & (rline[np.maximum(cand, 0)] != h.line[li])] = -1
    t = h.start[li]
    _jump(cand, lambda todo, c: (re_[c] <= t[todo]) | (rs[c] > t[todo]), parent)
    out[q] = np.where(cand >= 0, ridx[np.maximum(cand, 0)], -1)
    return out


def _run_ends(h: HostEvents, block: int = 1 << 20) -> np.ndarray:
    """Bool per host event: the last of its run of equal (line, start ns) -- host events are sorted by both.  Made a
    block at a time: no whole column of ns beside the trace."""
    n = h.start.size
    last = np.ones(n, bool)
    for a in range(0, n - 1, block):
        b = min(a + block, n - 1)
        np.not_equal(h.start[a + 1:b + 1] // 1000, h.start[a:b] // 1000, out=last[a:b])
        last[a:b] |= h.line[a + 1:b + 1] != h.line[a:b]
    return last


def _jump(ptr: np.ndarray, bad: Callable[[np.ndarray, np.ndarray], np.ndarray], parent: np.ndarray) -> None:
    """In place: each ``ptr`` (a range, -1 none) moved to its ``parent`` while ``bad(todo, ptr[todo])`` holds, at most
    64 moves -- every entry reads the pointers as the move before left them, as one whole-array step would."""
    todo = np.flatnonzero(ptr >= 0)
    for _ in range(64):
        if not todo.size:
            break
        cur = ptr[todo]
        move = bad(todo, cur)
        todo = todo[move]
        if not todo.size:
            break
        ptr[todo] = parent[cur[move]]
        todo = todo[ptr[todo] >= 0]
