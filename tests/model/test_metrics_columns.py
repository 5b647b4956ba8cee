"""The metrics context's column machinery: narrow dtypes, views of the timeline, the fast paths.

Each fast path (counting instead of sorting, a lookup table instead of a binary search, skipping a
sort of already ordered events, rounding a matrix at once) must give exactly what the general path
gives; these tests compare the two on random and adversarial inputs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from synthetic.builder import SpaceBuilder
from tb_gpu_advisor.formats.xplane.adapter import host_events
from tb_gpu_advisor.formats.xplane.reader import parse_timeline
from tb_gpu_advisor.metrics.context import Encloser, assign
from tb_gpu_advisor.metrics.kernels import _HIST_BLOCK, _blocks, _histogram_self_weighted
from tb_gpu_advisor.model.columns import (
    _subtract_swept,
    int_dtype,
    narrowest,
    subtract_intervals,
    union_by_key,
    union_intervals,
    unique_inverse,
    unique_pairs,
)
from tb_gpu_advisor.model.trace import HostEvents, launch_records
from tb_gpu_advisor.report.build import round6


def test_int_dtype_is_the_narrowest_that_holds_the_range():
    assert int_dtype(-1, 127) == np.int8
    assert int_dtype(-1, 128) == np.int16
    assert int_dtype(-1, 40_000) == np.int32
    assert int_dtype(-1, 2**31) == np.int64
    assert int_dtype(0, 5, floor=np.int16) == np.int16
    a = np.array([-1, 3, 300], dtype=np.int64)
    assert narrowest(a).dtype == np.int16 and narrowest(a).tolist() == a.tolist()


@pytest.mark.parametrize("case", ["ids", "with_missing", "int16", "sparse_wide", "single", "empty"])
def test_unique_inverse_equals_np_unique(case):
    rng = np.random.default_rng(3)
    a = {
        "ids": rng.integers(0, 90, 5000),
        "with_missing": rng.integers(-1, 40, 5000),
        "int16": rng.integers(-1, 30000, 5000).astype(np.int16),
        "sparse_wide": rng.integers(0, 2**40, 3000),  # range far above the size: the sorting path
        "single": np.array([7, 7, 7]),
        "empty": np.zeros(0, np.int64),
    }[case]
    u, inv = unique_inverse(a)
    u0, inv0 = np.unique(a, return_inverse=True)
    assert u.dtype == u0.dtype and u.tolist() == u0.tolist()
    assert inv.shape == inv0.shape and inv.tolist() == inv0.tolist()


@pytest.mark.parametrize("case", ["threads", "negative_labels", "wide_tids", "single", "empty"])
def test_unique_pairs_equals_np_unique_of_the_rows(case):
    rng = np.random.default_rng(5)
    a, b = {
        "threads": (rng.integers(0, 3, 4000), rng.integers(0, 9, 4000)),
        "negative_labels": (rng.integers(-4, 2, 4000), rng.integers(-3, 3, 4000)),  # string pids/tids: -2, -3 ...
        "wide_tids": (rng.integers(0, 2**40, 500).repeat(7), rng.integers(0, 2**62, 3500)),
        "single": (np.array([5, 5]), np.array([9, 9])),
        "empty": (np.zeros(0, np.int64), np.zeros(0, np.int64)),
    }[case]
    pairs, inv = unique_pairs(a, b)
    pairs0, inv0 = np.unique(np.stack([a, b], axis=1), axis=0, return_inverse=True)
    assert pairs.dtype == pairs0.dtype and pairs.shape == pairs0.shape and pairs.tolist() == pairs0.tolist()
    assert inv.tolist() == inv0.reshape(-1).tolist()


def _host(line: np.ndarray, start: np.ndarray, dur: np.ndarray, corr: np.ndarray | None = None) -> HostEvents:
    n = start.size
    none = np.full(n, -1, np.int32)
    return HostEvents(start=start, end=start + dur, name=np.zeros(n, np.int32), line=line,
                      corr=corr if corr is not None else none, group_id=none, step_num=none, iter_num=none, root=none,
                      is_eager=none.astype(np.int8), names=["x"], line_names=[f"l{i}" for i in range(int(line.max()) + 1)])


def _enclosing_reference(h: HostEvents, outer: np.ndarray, inner: np.ndarray) -> list[int]:
    """Brute force: the outer event on the inner's line starting last at or before its start (latest index among
    equal starts), if it is still running at that start and is not the inner event itself."""
    out = []
    for i in inner.tolist():
        cand = [o for o in np.flatnonzero(outer).tolist() if h.line[o] == h.line[i] and h.start[o] <= h.start[i]]
        best = max(cand, key=lambda o: (h.start[o], o)) if cand else -1
        out.append(best if best >= 0 and h.end[best] >= h.start[i] and best != i else -1)
    return out


@pytest.mark.parametrize("sorted_lines", [True, False])
def test_encloser_matches_brute_force(sorted_lines):
    rng = np.random.default_rng(7 if sorted_lines else 8)
    n = 600
    line = np.sort(rng.integers(0, 4, n)).astype(np.int16)
    start = rng.integers(0, 2000, n).astype(np.int64)
    if sorted_lines:  # as TensorFlow writes them: each line by start (the sort-free path)
        start = start[np.lexsort((start, line))]
    h = _host(line, start, rng.integers(0, 300, n).astype(np.int64))
    outer = rng.random(n) < 0.4
    inner = np.flatnonzero(rng.random(n) < 0.5)
    rng.shuffle(inner)  # queries in any order
    assert Encloser(h, outer).find(inner).tolist() == _enclosing_reference(h, outer, inner)


def _nested_ops(rng: np.random.Generator, lines: int = 3, roots: int = 30) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(line, start, end) of a thread's ops per line: properly nested, siblings often touching (one starts in the tick
    the one before ends), no two starting together."""
    out: list[tuple[int, int, int]] = []

    def grow(line: int, lo: int, hi: int, depth: int) -> None:
        t = lo
        while t < hi - 2 and depth < 4:
            s = t + int(rng.integers(0, 2)) + (1 if t == lo else 0)  # touching the sibling before, or a tick after it
            e = min(hi, s + int(rng.integers(2, max(3, (hi - s) // 2 + 1))))
            if e <= s:
                break
            out.append((line, s, e))
            grow(line, s, e, depth + 1)
            t = e
    for line in range(lines):
        grow(line, 0, 40 * roots, 0)
    a = np.array(out, dtype=np.int64)
    return a[:, 0].astype(np.int16), a[:, 1], a[:, 2]


@pytest.mark.parametrize("strict", [False, True])
def test_nested_encloser_answers_the_innermost_open_op(strict):
    """``nested``: the innermost outer op still open at a query's start (an op's inner op having ended before it),
    against brute force on nested, touching ops; ``strict``: an op ending in the tick a query starts holds it not
    (h37-probe50c)."""
    rng = np.random.default_rng(50)
    line, start, end = _nested_ops(rng)
    order = np.lexsort((start, line))
    line, start, end = line[order], start[order], end[order]
    h = _host(line, start, end - start)
    outer = rng.random(start.size) < 0.6
    inner = np.flatnonzero(rng.random(start.size) < 0.7)
    want = []
    for i in inner.tolist():
        held = [o for o in np.flatnonzero(outer).tolist() if o != i and line[o] == line[i] and start[o] <= start[i]
                and (end[o] > start[i] if strict else end[o] >= start[i])]
        want.append(max(held, key=lambda o: start[o]) if held else -1)
    assert Encloser(h, outer, nested=True, strict=strict).find(inner).tolist() == want


def test_launch_records_table_and_search_agree():
    rng = np.random.default_rng(11)
    n = 4000
    line = np.zeros(n, np.int16)
    start = np.arange(n, dtype=np.int64)
    corr = np.where(rng.random(n) < 0.5, rng.permutation(n), -1).astype(np.int32)
    queries = rng.integers(-1, n + 50, 3000).astype(np.int32)  # some ids beyond every record
    unique_ids = launch_records(_host(line, start, start, corr), np.int32)
    assert unique_ids.dense is not None  # ids dense: the table
    dup = corr.copy()
    dup[np.flatnonzero(dup >= 0)[:50]] = dup[np.flatnonzero(dup >= 0)[50:100]]  # ids on two events
    repeated = launch_records(_host(line, start, start, dup), np.int32)
    assert repeated.dense is not None  # still the table, holding the first event of a repeated id
    for rec, c in ((unique_ids, corr), (repeated, dup)):
        first = {}
        for i, v in enumerate(c.tolist()):
            if v >= 0:
                first.setdefault(v, i)
        assert rec.lookup(queries).tolist() == [first.get(q, -1) for q in queries.tolist()]


def _two_host_planes():
    space = SpaceBuilder("h")
    cpu = space.plane("/host:CPU")
    py = cpu.line("python", 1)
    for i in range(50):
        py.add("train" if i % 10 == 0 else f"op{i % 7}:MatMul", i * 1000, 500, step_num=i // 10)
    th = cpu.line("tf_gpu_private_0", 2)
    for i in range(80):
        th.add("cudaLaunchKernel", i * 700, 100, correlation_id=i + 1)
    cupti = space.plane("/host:CUPTI")  # older captures: a second host plane with names of its own
    cl = cupti.line("cupti", 3)
    for i in range(20):
        cl.add("cudaLaunchKernel" if i % 2 else "cuMemcpy", i * 900, 50, correlation_id=1000 + i)
    return parse_timeline(space.encode())


def test_host_events_take_over_the_timeline_columns():
    tl = _two_host_planes()
    before = [(ln.start_ps.copy(), ln.duration_ps.copy(), ln.name_id.copy()) for p in tl.host_planes() for ln in p.lines if len(ln)]
    h = host_events(tl)
    lines = [ln for p in tl.host_planes() for ln in p.lines if len(ln)]
    for ln, (st, du, nm) in zip(lines, before):  # the timeline reads exactly as before ...
        assert ln.start_ps.dtype == st.dtype and ln.start_ps.tolist() == st.tolist()
        assert ln.duration_ps.tolist() == du.tolist()
        assert ln.name_id.dtype == nm.dtype and ln.name_id.tolist() == nm.tolist()
        assert np.shares_memory(ln.start_ps, h.start)  # ... from the table's memory
    cpu_plane, cupti_plane = list(tl.host_planes())
    first, cupti = lines[0], lines[-1]
    assert h.name.dtype == np.int16  # 2 bytes an event up to 32k names, as the lines' own ids
    assert np.shares_memory(first.name_id, h.name)  # the first plane's names are the table's own
    assert not np.shares_memory(cupti.name_id, h.name)  # re-interned ids: the line keeps its own
    assert [h.names[i] for i in h.name[: len(first)].tolist()] == [cpu_plane.event_names[i] for i in first.name_id.tolist()]
    assert [h.names[i] for i in h.name[-len(cupti):].tolist()] == [cupti_plane.event_names[i] for i in cupti.name_id.tolist()]
    assert h.step_num.dtype == np.int8 and h.line.dtype == np.int16  # narrow: values fit
    assert h.group_id.strides == (0,)  # absent from the capture: a zero-byte broadcast


def test_host_events_widen_a_stat_column_when_a_later_line_needs_it():
    space = SpaceBuilder("h")
    cpu = space.plane("/host:CPU")
    a = cpu.line("a", 1)
    a.add("x", 0, 10, iter_num=3)
    b = cpu.line("b", 2)
    b.add("x", 0, 10, iter_num=70_000)
    h = host_events(parse_timeline(space.encode()))
    assert h.iter_num.dtype == np.int32 and h.iter_num.tolist() == [3, 70_000]


def test_name_mask_matching_no_name_is_all_false():
    h = host_events(_two_host_planes())
    assert not h.name_mask(lambda n: n == "nothing").any()
    assert h.name_mask(lambda n: n == "cuMemcpy").sum() == 10


def test_round6_is_pythons_round():
    rng = np.random.default_rng(5)
    ties = (rng.integers(0, 10**7, 2000) + 0.5) / 1e6  # x * 1e6 on (or next to) a half-integer
    vals = np.concatenate([rng.random(5000) * 1000, rng.random(2000) * 1e-3, -rng.random(2000) * 50, ties,
                           rng.integers(0, 10**9, 2000) / 1e6 + 5e-7,
                           [0.0, -0.0, 5e-7, -5e-7, 2.5e-6, 1e300, -1e300, 4.5e9, math.nan, math.inf, -math.inf]])
    got = round6(vals.reshape(-1, 3) if vals.size % 3 == 0 else vals)
    want = [round(x, 6) if math.isfinite(x) else None for x in vals.tolist()]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g is None and w is None) or (g == w and math.copysign(1, g) == math.copysign(1, w))


def test_self_weighted_histogram_is_numpys():
    edges = np.array([0.0, 1, 2, 5, 10, 20, 30, 40, 60, 100, 200, 500, 1000, 2000, 5000, 10000, math.inf])
    rng = np.random.default_rng(2)
    for a in (rng.lognormal(2, 2, 3 * 65536 + 11), rng.integers(0, 50, 1000).astype(float), np.array([-1.0, 0.0, 1.0, 1e9, math.inf])):
        # given as uneven pieces (one per GPU), cut into numpy's blocks of 65536 as if joined
        cuts = np.sort(rng.integers(0, a.size + 1, 5))
        counts, total, n = _histogram_self_weighted(_blocks(np.split(a, cuts), _HIST_BLOCK), edges)
        assert counts.tolist() == np.histogram(a, bins=edges)[0].tolist() and n == a.size
        assert np.array_equal(total, np.histogram(a, bins=edges, weights=a)[0], equal_nan=True)


@pytest.mark.parametrize("times_sorted", [True, False])
def test_assign_matches_a_search_per_time(times_sorted):
    rng = np.random.default_rng(4)
    edges = np.sort(rng.choice(100_000, 41, replace=False))
    windows = np.stack([edges[:-1:2], edges[1::2]], axis=1)  # disjoint, with gaps between them
    t = rng.integers(-10, 100_010, 20_000)
    if times_sorted:  # the merge path
        t.sort()
        t[5000:5003] = windows[3, 0]  # times on a window start
    got = assign(t, windows)
    i = np.searchsorted(windows[:, 0], t, side="right") - 1
    want = np.where((i >= 0) & (t < windows[np.maximum(i, 0), 1]), i, -1)
    assert got.tolist() == want.tolist() and got.dtype == np.int16


def test_unions_need_no_sort_when_given_in_order():
    rng = np.random.default_rng(6)
    start = np.sort(rng.integers(0, 10_000, 500))
    end = start + rng.integers(0, 80, 500)
    key = np.searchsorted(np.array([2500, 5000, 7500]), start).astype(np.int16)  # rising with time, as steps do
    shuffled = rng.permutation(500)
    for a, b in zip(union_intervals(start, end), union_intervals(start[shuffled], end[shuffled])):
        assert a.tolist() == b.tolist()
    for a, b in zip(union_by_key(key, start, end), union_by_key(key[shuffled], start[shuffled], end[shuffled])):
        assert a.tolist() == b.tolist()


def _merged_by_hand(start: np.ndarray, end: np.ndarray, touching: bool) -> list[list[int]]:
    """The union interval by interval, in start order (ties in their given order): the next interval joins the
    current run where it starts before the run's end -- or at it, with ``touching``; telling calls apart (not
    ``touching``), only where it lies mostly inside the run (more than half its length: rounded times)."""
    out: list[list[int]] = []
    for s, e in sorted(zip(start.tolist(), end.tolist()), key=lambda p: p[0]):
        held = touching or 2 * (out[-1][1] - s) > e - s if out else False
        if out and (s < out[-1][1] and held or (touching and s == out[-1][1])):
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def test_touching_intervals_are_one_busy_span_but_two_calls() -> None:
    """[0, 5) and [5, 9) touch: time accounting counts one busy span, call nesting (``metrics.context._nesting``)
    two back-to-back calls -- one function, the caller says which; both against merging interval by interval, on
    random nested, touching, tied and zero-length intervals in any order."""
    s, e = np.array([0, 5, 20, 22]), np.array([5, 9, 30, 25])
    assert [x.tolist() for x in union_intervals(s, e)] == [[0, 20], [9, 30]]
    assert [x.tolist() for x in union_intervals(s, e, merge_touching=False)] == [[0, 5, 20], [5, 9, 30]]
    rng = np.random.default_rng(12)
    for _ in range(400):
        n = int(rng.integers(0, 12))
        s = rng.integers(0, 40, n)
        e = s + rng.integers(0, 10, n)
        for touching in (True, False):
            us, ue = union_intervals(s, e, merge_touching=touching)
            assert [[a, b] for a, b in zip(us.tolist(), ue.tolist())] == _merged_by_hand(s, e, touching)


def test_subtract_intervals_against_a_raster() -> None:
    """columns.subtract_intervals against painting both sets on a grid of integer ticks."""
    rng = np.random.default_rng(7)
    for _ in range(200):
        n, m = rng.integers(0, 6, 2)
        s = rng.integers(0, 50, n)
        e = s + rng.integers(1, 20, n)
        cs = rng.integers(0, 50, m)
        ce = cs + rng.integers(1, 20, m)
        grid = np.zeros(80, bool)
        for a, b in zip(s, e):
            grid[a:b] = True
        for a, b in zip(cs, ce):
            grid[a:b] = False
        rs, re_ = subtract_intervals(s, e, cs, ce)
        got = np.zeros(80, bool)
        for a, b in zip(rs, re_):
            got[a:b] = True
        assert np.array_equal(got, grid) and (rs[1:] > re_[:-1]).all()


def _subtract_reference(s, e, cut_s, cut_e):
    """subtract_intervals before issue #38: one sweep over every boundary of both sets, unmerged (the sweep the
    reader still keeps for backwards intervals, ``columns._subtract_swept``)."""
    if not s.size or not cut_s.size:
        return union_intervals(s, e)
    return _subtract_swept(s, e, cut_s, cut_e)


def test_subtract_intervals_merging_first_gives_the_same_set() -> None:
    """Merging both sets before the sweep (issue #38: memory) gives exactly the old sweep's intervals, on nested,
    touching, tied and zero-length intervals in any order."""
    rng = np.random.default_rng(11)
    for _ in range(500):
        n, m = rng.integers(0, 40, 2)
        s = rng.integers(0, 60, n).astype(np.int64)
        e = s + rng.integers(0, 15, n)  # zero-length ones too
        cs = rng.integers(0, 60, m).astype(np.int64)
        ce = cs + rng.integers(0, 10, m)
        for a, b in zip(subtract_intervals(s, e, cs, ce), _subtract_reference(s, e, cs, ce)):
            assert a.tolist() == b.tolist(), (s, e, cs, ce)


def _subtract_merged_sweep(s, e, cut_s, cut_e):
    """subtract_intervals as it was before it cut by gaps (issue #38): both sets merged, then one sweep over every
    boundary of both."""
    if not s.size or not cut_s.size:
        return union_intervals(s, e)
    return _subtract_reference(*union_intervals(s, e), *union_intervals(cut_s, cut_e))


@pytest.mark.parametrize("span", [12, 60, 1 << 62])
def test_subtract_intervals_by_gaps_equals_the_sweep(span) -> None:
    """Cutting each merged interval by the cut set's gaps (binary search) gives exactly the merged sweep's intervals
    and dtype: on nested, touching, tied, zero-length and (a damaged file's) backwards intervals, negative times and
    times near 2^62 ps, either set empty."""
    rng = np.random.default_rng(span % 1000)
    for k in range(600):
        n, m = rng.integers(0, 30, 2)
        s = rng.integers(-span, span, n).astype(np.int64)
        e = s + rng.integers(0, max(span // 4, 2), n)
        cs = rng.integers(-span, span, m).astype(np.int64)
        ce = cs + rng.integers(0, max(span // 8, 2), m)
        if k % 5 == 0 and n:  # one interval ending before it starts
            j = int(rng.integers(0, n))
            s[j], e[j] = e[j] + 1, s[j]
        got, want = subtract_intervals(s, e, cs, ce), _subtract_merged_sweep(s, e, cs, ce)
        for a, b in zip(got, want):
            assert a.dtype == b.dtype and a.tolist() == b.tolist(), (s, e, cs, ce)


def _reference_inner(start, end, t):
    """The innermost interval holding each instant, by brute force: the holding interval that starts last, the shorter
    (the inner one) on a tie -- for properly nested intervals, what ``nest``'s sweep defines."""
    out = np.full(t.shape, -1, dtype=np.int64)
    for k, x in enumerate(t.tolist()):
        hold = np.flatnonzero((start <= x) & (x <= end))
        if hold.size:
            out[k] = hold[np.lexsort((end[hold] - start[hold], -start[hold]))[0]]
    return out


@pytest.mark.parametrize("seed", range(8))
def test_innermost_is_nest_s_answer_over_the_intervals_that_hold_an_instant(seed):
    """Properly nested intervals (a thread's ops) and instants, many intervals holding none: ``innermost`` (swept over
    only those that hold one) equals ``nest``'s inner over all of them and the brute-force innermost."""
    from tb_gpu_advisor.model.columns import innermost, nest

    rng = np.random.default_rng(seed)
    starts, ends = [], []

    def build(lo, hi, depth):
        a = lo
        while a < hi and len(starts) < 400:
            b = min(hi, a + int(rng.integers(1, 200)))
            starts.append(a)
            ends.append(b)
            if depth < 4 and b - a > 4 and rng.random() < 0.6:
                build(a + 1, b - 1, depth + 1)
            a = b + int(rng.integers(0, 20))

    build(0, 5000, 0)
    start, end = np.array(starts, np.int64), np.array(ends, np.int64)
    t = rng.integers(0, 5200, int(rng.integers(0, 60))).astype(np.int64)
    got = innermost(start, end, t)
    assert np.array_equal(got, nest(start, end, t)[1])
    assert np.array_equal(got, _reference_inner(start, end, t))
    assert (got >= 0).any() or t.size == 0 or not ((start[:, None] <= t) & (t <= end[:, None])).any()


def test_innermost_with_no_interval_holding_any_instant():
    """Instants between and after the intervals (a real V100 capture's allocator events outside every op): -1 each."""
    from tb_gpu_advisor.model.columns import innermost

    start, end = np.array([0, 10, 20], np.int64), np.array([5, 15, 25], np.int64)
    for t in (np.array([7, 17, 30], np.int64), np.zeros(0, np.int64)):
        got = innermost(start, end, t)
        assert got.shape == t.shape and (got == -1).all()
    assert innermost(start, end, np.array([7, 12], np.int64)).tolist() == [-1, 1]


def _nesting_reference(h: HostEvents, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The per-line loop ``metrics.context._nesting`` was before issue #38, kept here as the reference -- with the
    one nesting rule under rounded times since session 53: an event lying mostly past the calls before it is a call
    of its own (``model.columns.outermost``)."""

    def calls(start, end):
        o = np.argsort(start, kind="stable")
        s, e = start[o], end[o]
        cummax = np.maximum.accumulate(e)
        new = np.ones(s.size, dtype=bool)
        new[1:] = (s[1:] >= cummax[:-1]) | (2 * (cummax[:-1] - s[1:]) <= e[1:] - s[1:])
        idx = np.flatnonzero(new)
        return s[idx], np.maximum.reduceat(cummax, idx)

    outer = np.zeros(len(h), dtype=bool)
    inside = np.zeros(len(h), dtype=bool)
    for ln in np.unique(h.line[mask]).tolist():
        on_line = h.line == ln
        sel = np.flatnonzero(mask & on_line)
        s, e = calls(h.start[sel].astype(np.int64), h.end[sel].astype(np.int64))
        cand = sel[np.isin(h.start[sel], s)]
        _, keep = np.unique(h.start[cand], return_index=True)
        outer[cand[keep]] = True
        ev = np.flatnonzero(on_line)
        t = h.start[ev]
        k = np.searchsorted(s, t, side="right") - 1
        ok = (k >= 0) & (t < e[np.clip(k, 0, None)])
        inside[ev[ok]] = True
    inside &= ~outer
    return outer, inside


@pytest.mark.parametrize("chunk", [64, 1 << 18])
@pytest.mark.parametrize("case", ["nested", "many_lines", "zero_length", "ties", "negative_length", "huge_times",
                                  "one_line", "none", "all", "by_start", "by_start_one_line"])
def test_nesting_equals_the_per_line_loop(case, chunk, monkeypatch):
    """Every line at once gives what one pass per line gave, on random and adversarial nestings: few lines (a pass
    per line) and many (one sort of the lines), events by start (as readers write them: not sorted again) or not,
    a line's events looked up in many chunks or one."""
    from tb_gpu_advisor.metrics import context
    from tb_gpu_advisor.metrics.context import _nesting
    monkeypatch.setattr(context, "_CHUNK", chunk)
    rng = np.random.default_rng(sum(map(ord, case)))
    n = 3000
    line = rng.integers(0, 7, n).astype(np.int16)
    start = rng.integers(0, 5000, n).astype(np.int64)
    dur = rng.integers(0, 400, n).astype(np.int64)
    mask = rng.random(n) < 0.3
    if case == "many_lines":
        line = rng.integers(0, 900, n).astype(np.int16)
    elif case == "zero_length":  # zero-length events at the same start open intervals of their own
        dur = np.where(rng.random(n) < 0.5, 0, dur)
        start = rng.integers(0, 300, n).astype(np.int64)
    elif case == "ties":
        start = (rng.integers(0, 40, n) * 100).astype(np.int64)
        dur = (rng.integers(0, 3, n) * 100).astype(np.int64)
        mask = rng.random(n) < 0.7
    elif case == "negative_length":  # bad input: an end before its start must not crash nor differ
        dur = rng.integers(-200, 200, n).astype(np.int64)
    elif case == "huge_times":  # ps over days on many lines: a time offset per line would overflow int64
        start = rng.integers(0, 2**62, n).astype(np.int64)
        dur = rng.integers(0, 2**58, n).astype(np.int64)
        line = rng.choice(np.array([-3, 0, 29999], np.int32), n)
    elif case == "one_line":
        line = np.zeros(n, np.int16)
    elif case == "none":
        mask = np.zeros(n, bool)
    elif case == "all":
        mask = np.ones(n, bool)
    elif case.startswith("by_start"):  # a reader's order: by start, ties and nesting kept
        start = np.sort(rng.integers(0, 20000, n)).astype(np.int64)
        if case == "by_start_one_line":
            line = np.zeros(n, np.int16)
    h = _host(line, start, dur)
    got = _nesting(h, mask)
    want = _nesting_reference(h, mask)
    assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
    if case not in ("none",):
        assert want[0].any() and (case == "all" or want[1].any())  # the case exercises both answers


_SPY_CALLS: list[str] = []


def _spy(n: str) -> bool:
    """A module-level predicate (so remembered) that counts its calls."""
    _SPY_CALLS.append(n)
    return n.startswith("cuda")


def _named_hosts(names: list[str]) -> HostEvents:
    h = _host(np.zeros(len(names) * 2, np.int16), np.arange(len(names) * 2, dtype=np.int64),
              np.ones(len(names) * 2, np.int64))
    h.names = names
    h.name = np.tile(np.arange(len(names), dtype=np.int32), 2)
    return h


def test_name_mask_remembers_pure_predicates_only():
    """A named predicate is evaluated once per name list; a lambda (which may capture state) every time."""
    from tb_gpu_advisor import devices
    names = [f"train_step {i}" for i in range(500)] + ["cudaStreamSynchronize", "cudaLaunchKernel", "aten::mm"]
    h = _named_hosts(names)
    calls = _SPY_CALLS
    calls.clear()
    spy = _spy
    first = h.name_mask(spy)
    again = h.name_mask(spy)
    assert first.tolist() == again.tolist() == [n.startswith("cuda") for n in names] * 2
    assert len(calls) == len(names)  # the second ask was remembered
    for pred in (devices.is_sync_call, devices.is_launch_call, devices.is_runtime_call):
        assert h.name_mask(pred).tolist() == [bool(pred(n)) for n in names] * 2
        assert h.name_mask(pred).tolist() == [bool(pred(n)) for n in names] * 2
    state = {"x": "aten::mm"}
    assert h.name_mask(lambda n: n == state["x"]).sum() == 2
    state["x"] = "cudaLaunchKernel"
    assert h.name_mask(lambda n: n == state["x"]).sum() == 2  # not answered from the first lambda's memo
    h.names = names + ["cudaMalloc"]  # a new name list is evaluated afresh
    h.name = np.append(h.name, np.int32(len(names)))
    assert h.name_mask(spy).tolist()[-1] is True and len(calls) == 2 * len(names) + 1
    with pytest.raises(ValueError):
        h.per_name(spy)[0] = False  # the remembered answer is shared: read-only


def test_name_mask_takes_each_answer_s_truth_value():
    """A predicate may answer with anything (a match object or None, a string, a count): the mask is its ``bool()``
    (issue #38: the answers go to numpy through ``map``, not through a ``bool()`` per name)."""
    import re

    names = ["aten::mm", "", "cudaLaunchKernel", "train_step 7", "x"]
    h = _named_hosts(names)
    for pred in (re.compile(r"cuda|mm").search, lambda n: n[:1], len, lambda n: n.count("a"), lambda n: None):
        assert h.name_mask(pred).tolist() == [bool(pred(n)) for n in names] * 2
