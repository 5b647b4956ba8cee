"""Column helpers shared by every stage: narrow int dtypes, uniques and interval unions over numpy arrays.

Event tables hold millions of rows, so these work on whole columns (no
per-event Python) and pick the smallest dtype that holds the values: the
analysis's peak memory is its columns.
"""

from __future__ import annotations

import itertools

import numpy as np

_INT_DTYPES = (np.int8, np.int16, np.int32, np.int64)


def index_dtype(n: int):
    """Dtype of indices into a table of ``n`` rows: int32 halves the memory where it fits."""
    return np.int32 if n < np.iinfo(np.int32).max else np.int64


def int_dtype(lo: int, hi: int, floor=np.int8) -> np.dtype:
    """The narrowest signed int dtype (not narrower than ``floor``) holding every value in [lo, hi].

    Per-event id and stat columns are the bulk of the analysis's memory: a step number or a line index
    needs 1 or 2 bytes, not 8.
    """
    for dt in _INT_DTYPES[_INT_DTYPES.index(floor):]:
        info = np.iinfo(dt)
        if info.min <= lo and hi <= info.max:
            return np.dtype(dt)
    return np.dtype(np.int64)


def narrowest(a: np.ndarray, floor=np.int8) -> np.ndarray:
    """``a`` (an int column) in the narrowest dtype holding its values (:func:`int_dtype`); ``a`` itself if it is."""
    if not a.size:
        return a
    return a.astype(int_dtype(int(a.min()), int(a.max()), floor), copy=False)


def absent_as_broadcast(a: np.ndarray) -> np.ndarray:
    """``a`` itself, or where every value is -1 (a stat absent from the capture) one read-only broadcast -1
    of the same shape and dtype (0 bytes): nothing writes into event table columns."""
    if a.size and int(a.min()) == -1 and int(a.max()) == -1:
        return np.broadcast_to(a.dtype.type(-1), a.shape)
    return a


#: Indices converted at a time by :func:`take`.
_TAKE_BLOCK = 1 << 16


def take(table: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``table[idx]`` for a small table and a long index column, a block at a time.

    ``np.take`` first converts a narrow index column (int16 names, int32 positions) to intp: 8 bytes per
    event at once -- 17 MB for the host events of a dense 100 MB capture, on top of the analysis's peak.
    By blocks the conversion stays 512 kB, and it is faster too (the blocks stay in cache).
    """
    out = np.empty(idx.shape, dtype=table.dtype)
    for a in range(0, idx.shape[0], _TAKE_BLOCK):
        np.take(table, idx[a : a + _TAKE_BLOCK], out=out[a : a + _TAKE_BLOCK])
    return out


#: At most this many distinct ids are told by one compare each in :func:`lookup_mask` (else a table lookup).
_COMPARE_IDS_MAX = 4


def lookup_mask(per_id: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``per_id[ids]`` for a bool table ``per_id`` (per name: is it a sync call, a runtime event ...) and a long id
    column (each host event's name id), as a new writable array.

    Why: the stages ask a dozen such questions of the 2.25 M host events of a dense 100 MB capture, and most are true
    of one to a few names.  A table lookup converts every id to an index and gathers (~1.2 ms); a compare of the
    int16 column with one id is ~0.06 ms.  So where at most :data:`_COMPARE_IDS_MAX` ids are true (or false: the
    answer is then inverted) the mask is that many compares, ORed in place; otherwise :func:`take`.  Same booleans.
    At 1 GB (22.5 M events, out of cache) each further compare and OR costs ~3 ms against the lookup's ~15 ms: 4 ids
    still gain a little there, 8 lost 9 ms; hence 4.
    """
    n_true = int(np.count_nonzero(per_id))
    invert = n_true > _COMPARE_IDS_MAX and per_id.size - n_true <= _COMPARE_IDS_MAX
    if n_true > _COMPARE_IDS_MAX and not invert:
        return take(per_id, ids)
    chosen = np.flatnonzero(~per_id if invert else per_id).tolist()
    if not chosen:
        out = np.zeros(ids.shape, dtype=bool)
    else:
        out = np.equal(ids, chosen[0])
        tmp = np.empty(ids.shape, dtype=bool) if len(chosen) > 1 else None
        for i in chosen[1:]:
            np.equal(ids, i, out=tmp)
            out |= tmp
    if invert:
        np.logical_not(out, out=out)
    return out


def sorted_unique(a: np.ndarray) -> np.ndarray:
    """``np.unique(a)`` for 1-d numeric arrays, by sorting.

    numpy >= 2.3 answers a plain ``np.unique`` with a hash table, which on
    millions of distinct int64 timestamps is ~50x slower than sorting and
    grows faster than linearly (cache misses): the breakdown's segment
    boundaries made the analysis superlinear in the capture size.
    """
    s = np.sort(a, axis=None)
    if s.size < 2:
        return s
    keep = np.empty(s.size, dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def unique_inverse(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(a, return_inverse=True)`` of a 1-d int array, by counting when its values span a range not
    much larger than the array (ids into a names or strings table: the usual case), else by sorting.

    Counting is O(n) against the sort's O(n log n): 4x faster on a GPU's 100k kernels' op ids.
    """
    if a.size:
        lo, hi = int(a.min()), int(a.max())
        if hi - lo < max(4 * a.size, 1 << 16):
            shifted = np.subtract(a, lo, dtype=np.intp)
            present = np.zeros(hi - lo + 1, dtype=bool)
            present[shifted] = True
            rank = np.cumsum(present, dtype=np.intp)
            rank -= 1
            return (np.flatnonzero(present) + lo).astype(a.dtype), np.take(rank, shifted)
    return np.unique(a, return_inverse=True)


def unique_strings(values) -> tuple[list[str], np.ndarray]:  # noqa: ANN001 - a 1-d object array or list of str
    """``np.unique(np.asarray(values).astype(str), return_inverse=True)`` of a column of names, as (the sorted
    distinct names as ``str``, each row's index among them, intp).

    Each name is interned in a dict and only the distinct ones are sorted: numpy's way widens every row to the
    longest name (a GPU's 44 k dispatches of multi-KB mangled kernel names: hundreds of MB) and sorts the whole
    column, ~2 s of the 2.5 s analysis of the rocprofv3 kernel trace ``wild/fsdp_mi350x_kernel_trace``.  Python
    orders ``str`` by code point, as numpy orders its unicode strings.  A column numpy reads otherwise takes numpy's
    way: one holding a name with trailing NULs (numpy drops them: "a\\0" and "a" are one name there) or a value that
    is not a ``str`` (numpy decodes ``bytes``, which ``str()`` would quote; ``1`` and ``True`` are one dict key)."""
    vals = values.tolist() if isinstance(values, np.ndarray) else list(values)
    ids: dict = {}
    first = np.fromiter((ids.setdefault(v, len(ids)) for v in vals), dtype=np.intp, count=len(vals))
    if not all(isinstance(v, str) and not v.endswith("\0") for v in ids):
        u, inv = np.unique(np.asarray(values, dtype=object).astype(str), return_inverse=True)
        return [str(x) for x in u.tolist()], inv.reshape(-1).astype(np.intp, copy=False)
    names = sorted(ids)
    rank = np.empty(len(names), np.intp)
    rank[np.fromiter((ids[n] for n in names), dtype=np.intp, count=len(names))] = np.arange(len(names), dtype=np.intp)
    return [str(n) for n in names], rank[first]


def stable_order(key: np.ndarray) -> np.ndarray:
    """``np.argsort(key, kind="stable")`` of an int column.

    Where the column holds at most 65,536 distinct values, each is replaced by its rank (by counting,
    where the values span a small range) as a uint16, which numpy's stable sort orders by radix in O(n):
    the span steps' 468 k (name, line) keys of the dense 100 MB capture, 124 distinct, 6.7 -> 2.3 ms against timsort
    of the int32 keys.  Ranks keep the keys' order, and a stable sort of equal ranks keeps index order: the same
    permutation."""
    if key.size < 2 or key.dtype.itemsize <= 2:
        return np.argsort(key, kind="stable")
    lo, hi = int(key.min()), int(key.max())
    if hi - lo >= max(4 * key.size, 1 << 16):  # values spread wide: ranking them would be a sort itself
        return np.argsort(key, kind="stable")
    # ranked by counting, in the range's size; the ranks made uint16 in the lookup itself (no intp column: this runs
    # at the span steps' peak, where an intp rank and index per key were 7 MB more on the dense 100 MB capture)
    shifted = key - key.dtype.type(lo)
    present = np.zeros(hi - lo + 1, dtype=bool)
    present[shifted] = True
    if int(np.count_nonzero(present)) > 1 << 16:
        return np.argsort(key, kind="stable")
    rank = np.cumsum(present, dtype=np.int64)
    rank -= 1
    return np.argsort(rank.astype(np.uint16)[shifted], kind="stable")


def unique_pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(np.stack([a, b], axis=1), axis=0, return_inverse=True)`` (the inverse flat) of two int columns.

    ``axis=0`` sorts the rows as opaque records, ~10x slower than sorting the columns: here each column is ranked on
    its own and the row is the one integer ``rank_a * len(ub) + rank_b``, which orders rows as (a, b) does."""
    if not a.size:
        return np.zeros((0, 2), np.result_type(a, b)), np.zeros(0, np.intp)
    ua, ia = np.unique(a, return_inverse=True)
    ub, ib = np.unique(b, return_inverse=True)
    key = ia.reshape(-1).astype(np.int64) * len(ub) + ib.reshape(-1)
    ukey, inv = unique_inverse(key)
    pairs = np.stack([ua[ukey // len(ub)], ub[ukey % len(ub)]], axis=1)
    return pairs, inv.reshape(-1)


def searchsorted_right(w_start: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``np.searchsorted(w_start, t, side="right")``: how many window starts lie at or before each time.

    Times in order (a host line's events, a GPU's, a GPU's launch calls) are merged instead: each start's position
    among the times, counted up with a cumulative sum -- O(times + starts), 3x faster than a binary search per
    time.  A chunk of several lines' events is merged a sorted run at a time; many short runs are searched.
    """
    n = t.shape[0]
    if n < 2:
        return np.searchsorted(w_start, t, side="right")
    # sorted runs: a chunk of host events is a few lines' events, each line by start
    breaks = np.flatnonzero(t[1:] < t[:-1])
    if breaks.size == 0:
        return _merged_counts(w_start, t)
    if breaks.size * _MIN_RUN > n:
        return np.searchsorted(w_start, t, side="right")
    out = np.empty(n, dtype=np.intp)
    edges = [0, *(breaks + 1).tolist(), n]
    for a, b in itertools.pairwise(edges):
        out[a:b] = _merged_counts(w_start, t[a:b])
    return out


#: Mean length of the sorted runs below which :func:`_starts_up_to` searches each time instead of merging per run.
_MIN_RUN = 4096


def _merged_counts(w_start: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``np.searchsorted(w_start, t, side="right")`` for times ``t`` in order: each window start's place among them.

    Only the starts within ``t``'s range are placed (those before it count for every time): a chunk of queries
    against a long sorted column (an encloser's 440 k op starts) searches the part it spans, not the whole."""
    n = t.shape[0]
    base = int(np.searchsorted(w_start, t[0], side="left"))
    top = int(np.searchsorted(w_start, t[-1], side="right"))
    if top - base > 8 * n:  # few times across many starts (a few copies against every op): searching is cheaper
        return np.searchsorted(w_start, t, side="right")
    out = np.cumsum(np.bincount(np.searchsorted(t, w_start[base:top], side="left"), minlength=n + 1)[:n])
    if base:
        out += base
    return out


#: Mean length of the rising runs of times below which :func:`rising_runs` declines (a search per time is cheaper).
_MIN_RISING_RUN = 4096


def rising_runs(times: np.ndarray) -> list[int] | None:
    """The edges ``[0, ..., n]`` of the runs in which ``times`` rise (a GPU's events: one run; the host's: one per
    line), or None where the runs are too short for :func:`window_index_by_runs` to gain."""
    n = times.shape[0]
    breaks = np.flatnonzero(times[1:] < times[:-1]) if n > 1 else np.zeros(0, np.intp)
    if breaks.size * _MIN_RISING_RUN > n:
        return None
    return [0, *(breaks + 1).tolist(), n]


def count_between(t: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """How many of the sorted times ``t`` fall strictly inside each open interval (``lo``, ``hi``): the kernels
    started between two calls, the gradient launches between two forwards -- one binary search each side."""
    return np.searchsorted(t, hi, side="left") - np.searchsorted(t, lo, side="right")


def loop_turn(gaps: np.ndarray) -> int:
    """The turn a loop takes between its iterations (ps) from the ``gaps`` it showed between one iteration's end and
    the next one's start: their lower median (a gap below 0 as 0); 0 where none.  The one reading of the turn the
    capture's last iteration, with no next one, did not get (``steps.ends``, ``steps.iterations``, the Kineto
    adapter's rank steps).

    Why the lower median: the turn is a property of the loop (its bookkeeping, the iterator's advance, the Python
    after a sync), the same each iteration but for one-time work that lengthens one (an evaluation, a checkpoint)
    and a turn cut short (a step skipped its logging).  The least takes the cut turn for the loop's; the mean and
    the median of two blend the evaluation in; the lower median is a turn the loop did take, resists one outlier
    of either kind from three gaps on, and of two -- where it cannot tell which is usual -- takes the shorter,
    since one-time work only ever adds to a turn."""
    return lower_median(np.maximum(np.asarray(gaps, np.int64), 0))


def lower_median(values: np.ndarray) -> int:
    """The lower median of integer ``values`` (0 where none): a value the data holds, the shorter of the middle two.

    Why (:func:`loop_turn`, the Kineto adapter's usual lead of a step's GPU work after its host mark): a loop's per-
    iteration quantity is the same each iteration but for one-time work that only ever adds to one; the lower median
    resists one such outlier from three values on and of two takes the one the outlier did not lengthen."""
    v = np.sort(np.asarray(values, np.int64))
    return int(v[(v.size - 1) // 2]) if v.size else 0


def work_after_call(call_start: np.ndarray, launch: np.ndarray, work_start: np.ndarray) -> np.ndarray:
    """Of each device event with a recorded launch (``launch``: its host event's row, -1 for none), how long after its
    call's start (``call_start``) its work starts (ps; negative: recorded before its call).  No work starts before its
    call, so this is the one measure of how far a capture's two clocks disagree, read by the capture check (the
    largest lead) and the period's read-back test (the slack either way)."""
    ok = np.flatnonzero(launch >= 0)
    return np.asarray(work_start, np.int64)[ok] - np.asarray(call_start, np.int64)[launch[ok]]


def starts_in_windows(starts: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (event, window) pair where an event's start (``starts``, sorted) lies in a window [lo, hi): the events'
    indices and their windows', one pair per row -- an event inside two overlapping windows is a row of each."""
    a = np.searchsorted(starts, lo, side="left")
    b = np.searchsorted(starts, hi, side="left")
    cnt = np.maximum(b - a, 0)
    win = np.repeat(np.arange(lo.size), cnt)
    offset = np.arange(win.size) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    return np.repeat(a, cnt) + offset, win


def window_index_by_runs(times: np.ndarray, flat: np.ndarray, runs: list[int],
                         dt) -> np.ndarray:  # noqa: ANN001 - a dtype
    """The window holding each time (its index, -1 for none: ``metrics.context.assign``) where the windows' bounds
    ``flat`` (start0, end0, start1, ...) never fall and the times come in a few rising runs (:func:`rising_runs`).

    Why: within a run the answer is constant between two consecutive bounds, so each bound is placed among the run's
    times (a binary search per bound: 2.8 k for 1.4 k steps) and the answer written as one repeat of the values
    between bounds -- ``k`` bounds at or before a time mean window ``(k - 1) // 2`` for odd ``k``, none for even
    ``k`` (before its start or at or past its end).  A search and a gather per time, as the general path does, were
    7.8 ms for the dense 100 MB capture's 2.25 M host events; this is 3.6 ms."""
    m = flat.size // 2
    values = np.full(2 * m + 1, -1, dtype=dt)
    values[1::2] = np.arange(m, dtype=dt)
    out = np.empty(times.shape, dtype=dt)
    for a, b in zip(runs[:-1], runs[1:]):
        at = np.searchsorted(times[a:b], flat, side="left")  # bound j counts for the run's times from at[j] on
        out[a:b] = np.repeat(values, np.diff(at, prepend=0, append=b - a))
    return out


def reduce_at(ufunc: np.ufunc, out: np.ndarray, keys: np.ndarray, values: np.ndarray) -> None:
    """``ufunc.at(out, keys, values)`` for ``np.minimum`` / ``np.maximum`` (any ufunc whose result does not depend on
    the order its values come in): ``out[k]`` takes in every value whose key is ``k``.

    Where the keys do not fall (a GPU's events by start carry their steps rising), each run of one key is reduced at
    once (``ufunc.reduceat``) and written with one scatter: ``ufunc.at``'s per-element loop was 0.30 s at the step
    gaps' and steps' three uses over the 1 GB capture's 8 GPUs of 2.2 M events.  Other keys take ``ufunc.at``.  Minima and maxima are exact, so the two
    give the same values.
    """
    if keys.size == 0:
        return
    if keys.size < 2 or not bool((keys[1:] >= keys[:-1]).all()):
        ufunc.at(out, keys, values)
        return
    first = np.flatnonzero(keys[1:] != keys[:-1])
    first += 1
    first = np.concatenate([np.zeros(1, first.dtype), first])
    k = keys[first]
    out[k] = ufunc(out[k], ufunc.reduceat(values, first))


def union_intervals(start: np.ndarray, end: np.ndarray, *, merge_touching: bool = True
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Merge intervals into disjoint sorted ones (vectorized).

    ``merge_touching``: whether intervals that only touch (one ends where the next begins) merge.  For time
    accounting they do: [a, b) and [b, c) are one busy span, and the union is then also apart (no two results
    touch).  For telling calls apart they do not (``merge_touching=False``): back-to-back ATen ops are two calls,
    only events that overlap are one nested call -- and an event lying mostly past the ones before it is a call of its
    own, as :func:`held` says (rounded times overlap back-to-back calls by a nanosecond: ten back-to-back
    ``record_function("generate")`` ranges of a PyTorch 2.x trace read as seven).  Events already by start (a GPU's,
    a thread's, as readers write them) are not sorted again: the stable sort's order is theirs."""
    if start.size == 0:
        return start.copy(), end.copy()
    if (start[1:] >= start[:-1]).all():  # a GPU's events come by start: no sort needed
        s, e = start, end
    else:
        o = np.argsort(start, kind="stable")
        s, e = start[o], end[o]
    cummax = np.maximum.accumulate(e)
    new = np.ones(s.size, dtype=bool)
    new[1:] = s[1:] > cummax[:-1] if merge_touching else ~held(s[1:], e[1:], cummax[:-1])
    idx = np.nonzero(new)[0]
    us = s[idx]
    ue = np.maximum.reduceat(cummax, idx) if idx.size else cummax[:0]
    return us, ue


def count_within(times: np.ndarray, start: np.ndarray, end: np.ndarray) -> int:
    """How many of ``times`` (sorted) lie in any of the intervals ``[start, end]`` -- each time once, however the
    intervals overlap or touch (their union, touching ones merged, as time is accounted).

    Why: a share of the launches that spans enclose was summed per span, and spans told apart as calls may touch (a
    loop's iterations back to back: the launch at the boundary in both) or overlap (ranks' spans running together,
    one lying mostly past another's: :func:`held`) -- "enclosing 101%" of a warmed-up benchmark's launches, "125%"
    of 4 ranks' (h37-walk53)."""
    us, ue = union_intervals(np.asarray(start, np.int64), np.asarray(end, np.int64))
    return int((np.searchsorted(times, ue, side="right") - np.searchsorted(times, us, side="left")).sum())


def shared_durations(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Each interval's share of its union's time (float64, the inputs' unit): every instant is shared equally among the
    intervals that cover it, so the shares add up to the union's measure and each share is at most its duration.

    Why: time summed over intervals that overlap (kernels on concurrent streams) counts a microsecond once per
    interval, and so can outgrow the span holding them (h37-classsum33: five streams' kernels, 895.6 ms "per step" of
    a 777.0 ms pass); shared, each microsecond is attributed once, as the step's ledger paints it.  A sweep over the
    sorted ends: O(n log n), vectorized."""
    n = start.size
    if n == 0:
        return np.zeros(0, np.float64)
    t, idx = np.unique(np.concatenate([start, end]), return_inverse=True)
    idx = idx.ravel()
    active = np.cumsum(np.bincount(idx[:n], minlength=t.size) - np.bincount(idx[n:], minlength=t.size))[:-1]
    per = np.diff(t).astype(np.float64) / np.maximum(active, 1)  # each covering interval's part of an elementary span
    per[active <= 0] = 0.0
    cum = np.concatenate([[0.0], np.cumsum(per)])
    return np.maximum(cum[idx[n:]] - cum[idx[:n]], 0.0)


def outermost(line: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Bool per event (sorted by line, then start, longest first): no event before it on its line holds it.  An event
    is held where it starts before the running end of those before it and lies mostly inside it -- more than half its
    own length.  Why not "starts before the running end" alone: a profiler's times are rounded (Kineto's microseconds
    to three decimals, 0.1 us on Windows), so two calls back to back can overlap by a nanosecond (a pipeline's
    ``preprocess`` frame starting where its set-up frame's rounded end lies), and a call nested in another can end a
    nanosecond after it; the first are siblings, the second nested, and only how much of each lies inside tells them
    apart."""
    s, e = start.astype(np.int64, copy=False), end.astype(np.int64, copy=False)
    out = np.ones(s.size, bool)
    cuts = np.flatnonzero(line[1:] != line[:-1]) + 1  # the events come by line: each line one slice
    for lo, hi in zip(np.concatenate([[0], cuts]).tolist(), np.concatenate([cuts, [s.size]]).tolist()):
        if hi - lo < 2:
            continue
        out[lo + 1:hi] = ~held(s[lo + 1:hi], e[lo + 1:hi], np.maximum.accumulate(e[lo:hi])[:-1])
    return out


def outermost_rows(line: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """:func:`outermost` of events in any order: bool per event, in the order given.  Sorted here by line, then start,
    the longest first (ties kept in their given order), the order :func:`outermost` reads."""
    s, e = _wide(np.asarray(start)), _wide(np.asarray(end))
    order = np.lexsort((-e, s, np.asarray(line)))
    out = np.empty(order.size, dtype=bool)
    out[order] = outermost(np.asarray(line)[order], s[order], e[order])
    return out


def held(start: np.ndarray, end: np.ndarray, reach: np.ndarray) -> np.ndarray:
    """Bool per event ``[start, end)``: held by what runs until ``reach`` (an earlier event's end, or the running end
    of several) -- it starts before ``reach`` and lies mostly inside, more than half its own length (:func:`outermost`'s
    rule, for a caller whose earlier events are not one line's: a phase after its forward, the next iteration after
    this one's last phase).  Times of one clock: integers as int64 (no narrow type's overflow), floats as they are."""
    s, e, r = (_wide(np.asarray(x)) for x in (start, end, reach))
    return (s < r) & (2 * (r - s) > e - s)


def _wide(x: np.ndarray) -> np.ndarray:
    """Integer times as int64; others as they are."""
    return x.astype(np.int64, copy=False) if x.dtype.kind in "iu" else x


def time_within(i0: np.ndarray, i1: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """The time of the stretches ``(i0, i1)`` (sorted, disjoint, as :func:`union_intervals` gives them) inside each
    ``[s, e)``, as float64: the stretches' running total at ``e`` less the one at ``s`` -- one sum per event, however
    many stretches it spans."""
    acc = np.concatenate([[0], np.cumsum(i1 - i0)])

    def before(t: np.ndarray) -> np.ndarray:
        k = np.searchsorted(i0, t, side="right")  # stretches starting at or before t
        kk = np.maximum(k - 1, 0)
        return np.where(k > 0, acc[kk] + np.clip(t - i0[kk], 0, (i1 - i0)[kk]), 0)

    return (before(e) - before(s)).astype(np.float64)


def add_intervals(us: np.ndarray, ue: np.ndarray, s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``union_intervals(concatenate([us, s]), concatenate([ue, e]))`` where ``(us, ue)`` is already a union
    (:func:`union_intervals`' output: sorted, disjoint, apart) and ``(s, e)`` is a few intervals more.

    Why: a priority painting adds one category after another to a growing union (``metrics.breakdown``); re-merging
    a GPU's ~100 k merged kernels for each of a handful of copies was ten passes over them per category.  Here only
    the merged intervals that a new one touches (overlaps or meets) are merged with it; the others stay as they are,
    apart from every result (they touch nothing new and each other not at all), and the merged ones are inserted
    among them: the same canonical union, with a copy or two of ``us`` instead of a sort.  Many new intervals, or
    one that ends before it starts, take :func:`union_intervals` itself."""
    if not s.size:
        return us, ue
    if not us.size or 8 * s.size > us.size or us.dtype != s.dtype or (e < s).any():
        return union_intervals(np.concatenate([us, s]), np.concatenate([ue, e]))
    s, e = union_intervals(s, e)
    lo = np.searchsorted(ue, s, side="left")  # the first merged interval ending at or after each new start
    hi = np.searchsorted(us, e, side="right")  # past the last one starting at or before each new end
    span = np.maximum(hi - lo, 0)
    total = int(span.sum())
    if total:
        touched = np.arange(total) + np.repeat(lo - (np.cumsum(span) - span), span)
        touched = sorted_unique(touched)  # ranges of neighbouring new intervals may share an interval
        s, e = union_intervals(np.concatenate([us[touched], s]), np.concatenate([ue[touched], e]))
        us, ue = np.delete(us, touched), np.delete(ue, touched)
    at = np.searchsorted(us, s)
    return np.insert(us, at, s), np.insert(ue, at, e)


def subtract_intervals(s: np.ndarray, e: np.ndarray, cut_s: np.ndarray,
                       cut_e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The parts of intervals (s, e) outside the intervals (cut_s, cut_e), as disjoint sorted intervals.

    Both sets are merged first: a host's nested calls (3 M ATen ops on a 197 MB Nsight export) collapse to their
    outermost spans (issue #38: the unmerged sweep built eight int64 arrays of every boundary, 400 MB at the analysis'
    peak there).  Then each kept interval is cut by the gaps of the cut set that overlap it, found by binary search
    (:func:`_outside_merged`): no sort of both sets' boundaries, which on a 1 GB export (5 M runtime calls cut from
    the dispatch) was a sort and a ``np.unique`` of 10 M boundaries per call.  A set holding an interval that ends
    before it starts (a damaged file's) is swept as before (:func:`_subtract_swept`): its answer there is the sweep's."""
    if not s.size or not cut_s.size:
        return union_intervals(s, e)
    s, e = union_intervals(s, e)
    cut_s, cut_e = union_intervals(cut_s, cut_e)
    if (e < s).any() or (cut_e < cut_s).any():
        return _subtract_swept(s, e, cut_s, cut_e)
    i64 = np.int64
    return _outside_merged(s.astype(i64, copy=False), e.astype(i64, copy=False), cut_s.astype(i64, copy=False),
                           cut_e.astype(i64, copy=False))


def intersect_intervals(s: np.ndarray, e: np.ndarray, with_s: np.ndarray,
                        with_e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The parts of intervals (s, e) inside the intervals (with_s, with_e), as disjoint sorted intervals: (s, e) less
    its parts outside them, so both sets may be unsorted, nested or overlapping, and the answer is
    :func:`subtract_intervals`' own canonical form (none where ``with`` is empty).  Why one function: the metrics
    asked it as a subtraction of a subtraction at each site (input waits inside transfers, idle inside gaps or the
    host's own stretches), each writing the idiom and its comment again."""
    return subtract_intervals(s, e, *subtract_intervals(s, e, with_s, with_e))


def _outside_merged(s: np.ndarray, e: np.ndarray, cut_s: np.ndarray, cut_e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`subtract_intervals` of two merged sets (:func:`union_intervals`' output: sorted, disjoint, none ending
    before it starts): each interval intersected with the gaps between the cuts that it overlaps.

    The gaps are ``(-inf, cut_s[0]), (cut_e[0], cut_s[1]), ..., (cut_e[-1], +inf)``, sorted and disjoint; interval
    ``i`` overlaps gaps ``lo[i] <= k < hi[i]`` (the first gap ending after it starts, up to the last starting before
    it ends).  The pieces are the set difference, as half-open intervals; merged, they are its one canonical form,
    as the sweep's were."""
    big = np.iinfo(np.int64)
    gap_s = np.concatenate([np.array([big.min], np.int64), cut_e])
    gap_e = np.concatenate([cut_s, np.array([big.max], np.int64)])
    lo = np.searchsorted(gap_e, s, side="right")
    count = np.maximum(np.searchsorted(gap_s, e, side="left") - lo, 0)
    which = np.repeat(np.arange(s.size), count)
    first = np.cumsum(count) - count  # where each interval's pieces start in ``which``
    gap = np.arange(which.size) - np.repeat(first - lo, count)
    a = np.maximum(s[which], gap_s[gap])
    b = np.minimum(e[which], gap_e[gap])
    del which, gap
    ok = a < b
    return union_intervals(a[ok], b[ok])


def _subtract_swept(s: np.ndarray, e: np.ndarray, cut_s: np.ndarray, cut_e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`subtract_intervals` by one sweep over every boundary of both (merged) sets: an interval ``+1`` at its
    start and ``-1`` at its end, kept where the kept count is above 0 and the cut count 0.  What intervals ending
    before they start mean here is this sweep's answer (the interval-by-interval path drops them)."""
    t = np.concatenate([s, e, cut_s, cut_e]).astype(np.int64)
    n, m = s.size, cut_s.size
    keep = np.concatenate([np.ones(n, np.int64), -np.ones(n, np.int64), np.zeros(2 * m, np.int64)])
    cut = np.concatenate([np.zeros(2 * n, np.int64), np.ones(m, np.int64), -np.ones(m, np.int64)])
    o = np.argsort(t, kind="stable")
    ut, first = np.unique(t[o], return_index=True)
    inside = (np.cumsum(np.add.reduceat(keep[o], first)) > 0) & (np.cumsum(np.add.reduceat(cut[o], first)) == 0)
    seg = np.flatnonzero(inside[:-1])  # the state holds on [ut[i], ut[i + 1])
    return union_intervals(ut[seg], ut[seg + 1])


def lexsort2(minor: np.ndarray, major: np.ndarray) -> np.ndarray:
    """``np.lexsort((minor, major))`` of two integer columns: by ``major``, then ``minor``, ties in index order.

    Where both ranges fit one int64 (``major``'s range times ``minor``'s), the pair is one key and the order its
    stable argsort: timsort, which merges the sorted runs such columns come in (each GPU's events by (step, start),
    joined) -- 27 ms -> 5 ms on 8 GPUs' 800 k intervals, where lexsort sorts both keys from scratch."""
    if minor.size < 2:
        return np.arange(minor.size)
    lo_a, hi_a = int(major.min()), int(major.max())
    lo_b, hi_b = int(minor.min()), int(minor.max())
    span = hi_b - lo_b + 1
    if (hi_a - lo_a + 1) * span >= 2 ** 63:
        return np.lexsort((minor, major))
    key = major.astype(np.int64)
    key -= lo_a
    key *= span
    low = minor.astype(np.int64)
    low -= lo_b
    key += low
    return np.argsort(key, kind="stable")


def in_key_start_order(key: np.ndarray, start: np.ndarray) -> bool:
    """Rows already sorted by (key, start): ``np.lexsort((start, key))`` -- stable -- would be the identity.

    Two vector passes instead of an O(n log n) sort; events usually come in this order (a host line's
    events by start, a GPU's events by start with their steps rising with time).
    """
    if key.size < 2:
        return True
    same = key[1:] == key[:-1]
    return bool((key[1:] >= key[:-1]).all() and (start[1:] >= start[:-1])[same].all())


def union_by_key(key: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Merge intervals into disjoint sorted ones separately per ``key`` (vectorized).

    Returns (key, start, end) of the merged intervals, sorted by (key, start).  Intervals of different keys are
    never merged, even when they touch or overlap.
    """
    if start.size == 0:
        return key[:0].copy(), start[:0].copy(), end[:0].copy()
    if in_key_start_order(key, start):  # e.g. one GPU's events (by start) keyed by step: no sort needed
        k, s = key, start
        e = np.maximum(end, s)
    else:
        o = lexsort2(start, key)
        k, s = key[o], start[o]
        e = np.maximum(end[o], s)
    first = np.ones(s.size, dtype=bool)
    first[1:] = k[1:] != k[:-1]
    gstart = np.nonzero(first)[0]
    # running max of ends *within* each key: shift each key's values to its own disjoint band so that a
    # previous key's ends can never exceed the next key's (cumulative max stays exact, no Python loop)
    gmin = np.minimum.reduceat(s, gstart)
    gmax = np.maximum.reduceat(e, gstart)
    if gstart.size < 2 or bool((gmax[:-1] <= gmin[1:]).all()):
        # each key's intervals end before (or where) the next key's begin (a GPU's events clipped to its step
        # windows): a running maximum carried into the next key is at or below each of its starts and ends, so it
        # never joins what ``first`` keeps apart -- the bands below, five passes over the intervals, are not needed
        cm = np.maximum.accumulate(e)
    else:
        band = int((gmax - gmin).max()) + 1
        grp = np.cumsum(first) - 1
        off = grp.astype(np.int64) * band - gmin[grp]
        cm = np.maximum.accumulate(e + off) - off
    new = first.copy()
    new[1:] |= s[1:] > cm[:-1]
    idx = np.nonzero(new)[0]
    return k[idx], s[idx], np.maximum.reduceat(cm, idx)


def coverage(mid: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Bool per point in ``mid``: covered by at least one [start, end) interval."""
    if start.size == 0:
        return np.zeros(mid.shape, dtype=bool)
    s = np.sort(start)
    e = np.sort(end)
    return (np.searchsorted(s, mid, side="right") - np.searchsorted(e, mid, side="right")) > 0


def innermost(start: np.ndarray, end: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``nest(start, end, t)[1]``: the innermost interval holding each instant (-1: none), swept over only the
    intervals that hold some instant.

    Why: :func:`nest` sweeps in Python lists, 20 MB for the 103k ops of a real 4.8 MB eager JAX capture, of which a
    quarter hold an allocator event.  The answer is the same: an interval that holds no instant is never one's
    innermost, and on the sweep's stack it is popped before any instant is looked up past its end.
    """
    if start.size == 0 or t.size == 0:
        return np.full(t.shape, -1, dtype=np.int64)
    ts = np.sort(t)
    holds = np.flatnonzero(np.searchsorted(ts, end, side="right") > np.searchsorted(ts, start, side="left"))
    if holds.size == 0:
        return np.full(t.shape, -1, dtype=np.int64)
    _, inner = nest(start[holds], end[holds], t)
    return np.where(inner >= 0, holds[np.maximum(inner, 0)], -1)


def nest(start: np.ndarray, end: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Intervals of one line, properly nested (a thread's ops), and instants ``t`` on it: (the parent of each
    interval, the innermost interval holding each instant), indices into the intervals, -1 for none.

    One sweep in time order with a stack of open intervals (ties: the longer interval is the outer one; an instant at
    an interval's end is inside it).  A Python loop over the intervals and instants of the line: it is only asked for
    the lines that hold instants (allocator events), whose ops are a fraction of the trace.
    """
    n, m = int(start.shape[0]), int(t.shape[0])
    parent = np.full(n, -1, dtype=np.int64)
    inner = np.full(m, -1, dtype=np.int64)
    if n == 0 or m == 0:
        return parent, inner
    order = np.lexsort((-end, start))
    s, e = start[order].tolist(), end[order].tolist()
    t_order = np.argsort(t, kind="stable")
    tt = t[t_order].tolist()
    par, inn = [-1] * n, [-1] * m
    stack: list[int] = []
    i = 0
    for q, at in enumerate(tt + [None]):  # the sentinel sweeps the intervals after the last instant
        while i < n and (at is None or s[i] <= at):
            while stack and e[stack[-1]] < s[i]:
                stack.pop()
            par[i] = stack[-1] if stack else -1
            stack.append(i)
            i += 1
        if at is None:
            break
        while stack and e[stack[-1]] < at:
            stack.pop()
        inn[q] = stack[-1] if stack else -1
    par_a, inn_a = np.asarray(par, dtype=np.int64), np.asarray(inn, dtype=np.int64)
    parent[order] = np.where(par_a >= 0, order[np.maximum(par_a, 0)], -1)
    inner[t_order] = np.where(inn_a >= 0, order[np.maximum(inn_a, 0)], -1)
    return parent, inner
