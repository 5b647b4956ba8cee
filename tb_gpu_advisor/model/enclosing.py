"""Which host event encloses another: which marked range encloses a launch (:func:`innermost_range`), the one home
of that search for every reader whose format records the user's ranges (Nsight's NVTX, rocmProfileData's roctx
``UserMarker``) apart from the launches they hold; and which of some host events encloses others on their line
(:class:`Encloser`), asked by the metrics and by the job stage (``job.waits``: a poll outside every op)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tb_gpu_advisor.model.columns import in_key_start_order, index_dtype, searchsorted_right, sorted_unique
from tb_gpu_advisor.model.trace import HostEvents

#: Queries searched at a time (their temporaries bounded whatever one thread holds).
_CHUNK = 1 << 18


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


class Encloser:
    """``mask_outer`` host events sorted by (line, start) once, for many :meth:`find` queries.

    ``nested``: :meth:`find` answers by nesting -- where the latest outer event starting before a query has ended (an
    op's inner op that returned before the op's own sync or launch: ``aten::nonzero``'s ``aten::empty`` of the pinned
    count), the query's answer is the innermost one still open around it (:meth:`_parents`), not none.  Off, a query
    after an inner op ended reads as inside no outer event at all (h37-probe47c).

    ``strict``: an outer event that ends where a query starts does not hold it -- on one line an op starting as
    another ends runs after it (a CPU ``aten::randn``'s copy to the GPU, begun at its last us); off, it does (a launch
    in an op's last recorded us is the op's).  Asked where nesting answers an outer op's parent: the parent's end and
    the next op's start are one tick (h37-probe50c)."""

    def __init__(self, h: HostEvents, mask_outer: np.ndarray, nested: bool = False, strict: bool = False) -> None:
        self.h = h
        self.nested = nested
        self.strict = strict
        self._parent: np.ndarray | None = None
        self.outer = np.flatnonzero(mask_outer).astype(index_dtype(len(h)), copy=False)
        self.oline = h.line[self.outer]
        self.ostart = h.start[self.outer]
        # host events come line by line, each line (as written by TensorFlow) by start: then the events are
        # already in order and the sort (a lexsort of ~1 M events: 40 ms) is skipped
        if not in_key_start_order(self.oline, self.ostart):
            # ties (same line and start) stay in index order, as a stable per-line argsort would leave them
            order = np.lexsort((self.ostart, self.oline))
            self.outer, self.oline, self.ostart = self.outer[order], self.oline[order], self.ostart[order]

    def find(self, idx_inner: np.ndarray) -> np.ndarray:
        """For host events ``idx_inner``: the innermost outer event on the same line containing its start, -1."""
        h = self.h
        out = np.full(idx_inner.shape, -1, dtype=self.outer.dtype)
        if idx_inner.size == 0 or self.outer.size == 0:
            return out
        iline = h.line[idx_inner]
        # positions of idx_inner grouped by line (index order within a line); None: already grouped
        iord = None if (iline[1:] >= iline[:-1]).all() else np.argsort(iline, kind="stable")
        if iord is not None:
            iline = iline[iord]
        lines = sorted_unique(iline)
        o_lo = np.searchsorted(self.oline, lines, side="left")
        o_hi = np.searchsorted(self.oline, lines, side="right")
        i_lo = np.searchsorted(iline, lines, side="left")
        i_hi = np.searchsorted(iline, lines, side="right")
        del iline
        for k in range(lines.size):
            if o_hi[k] == o_lo[k]:
                continue
            o = self.outer[o_lo[k]:o_hi[k]]
            ostart = self.ostart[o_lo[k]:o_hi[k]]
            for a in range(i_lo[k], i_hi[k], _CHUNK):
                b = min(a + _CHUNK, i_hi[k])
                # queries already grouped by line (the usual case) are a slice: no index arrays to gather through
                sel = iord[a:b] if iord is not None else slice(a, b)
                inner = idx_inner[sel]
                t = h.start[inner]
                j = searchsorted_right(ostart, t)
                j -= 1
                ok = j >= 0
                np.maximum(j, 0, out=j)
                if self.nested:
                    j = self._open_at(j + o_lo[k], ok, inner, t) - o_lo[k]
                    ok &= j >= 0
                    np.maximum(j, 0, out=j)
                oj = o[j]
                ok &= (h.end[oj] > t) if self.strict else (h.end[oj] >= t)
                ok &= oj != inner
                if iord is None:
                    out[sel] = np.where(ok, oj, -1)
                else:
                    out[sel[ok]] = oj[ok]
        return out

    def _open_at(self, pos: np.ndarray, ok: np.ndarray, inner: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Per query (``pos``: the position in the sorted outer events of the latest one on its line starting at or
        before ``t``, valid where ``ok``): that event's position, or its nearest ancestor's that is still open at
        ``t`` and is not the query itself; -1 where none is."""
        parent = self._parents()
        end = self.h.end[self.outer]
        cur = np.where(ok, pos, -1).astype(np.int64)
        first = cur >= 0
        first[first] = self.outer[cur[first]] == inner[first]  # a query is never its own outer event
        cur[first] = parent[cur[first]]
        if self.strict:
            _jump(cur, lambda todo, c: end[c] <= t[todo], parent)
        else:
            _jump(cur, lambda todo, c: end[c] < t[todo], parent)
        return cur

    def _parents(self) -> np.ndarray:
        """Per sorted outer event: the position of the innermost earlier one on its line still open at its start, -1
        (pointer jumping from the event before it, as :func:`innermost_range` finds a range's parent)."""
        if self._parent is None:
            n = self.outer.size
            parent = np.arange(-1, n - 1, dtype=np.int64)
            if n:
                parent[1:][self.oline[1:] != self.oline[:-1]] = -1
            end, start = self.h.end[self.outer], self.ostart
            if self.strict:
                _jump(parent, lambda todo, p: end[p] <= start[todo], parent)
            else:
                _jump(parent, lambda todo, p: end[p] < start[todo], parent)
            self._parent = parent
        return self._parent
