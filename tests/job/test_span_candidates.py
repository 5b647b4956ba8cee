"""``job.structure._candidates`` groups spans by (name, line) in one sort: the same candidates as one mask per group."""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor.job import structure
from tb_gpu_advisor.model.columns import union_intervals


def _by_masks(start, end, name, line, names, keep, times):
    """The candidates as the masks ``keep & (name == i) & (line == ln)`` find them (the former implementation)."""
    n_launch = times.size
    nm = name[keep].astype(np.int64)
    dur = (end[keep] - start[keep]).astype(np.float64)
    total = np.bincount(nm, weights=dur, minlength=len(names))
    out = []
    for i in np.argsort(-total)[: structure._CANDIDATES]:
        if total[i] <= 0:
            break
        m = keep & (name == i)
        best = None
        for ln in np.unique(line[m]):
            mm = m & (line == ln)
            s, e = union_intervals(start[mm].astype(np.int64), end[mm].astype(np.int64), merge_touching=False)
            per = np.searchsorted(times, e, side="right") - np.searchsorted(times, s, side="left")
            cov = _inside_any(times, start[mm], end[mm]) / n_launch
            if best is None or cov > best[4]:
                best = (names[int(i)], "t", s[per > 0], e[per > 0], cov)
        if best is not None and best[2].size:
            out.append(best)
    return out


def _inside_any(times, start, end) -> int:
    """How many of ``times`` lie in any of ``[start, end]``: each once, however the spans touch or overlap."""
    depth = np.zeros(times.size + 1, np.int64)
    np.add.at(depth, np.searchsorted(times, start, side="left"), 1)
    np.add.at(depth, np.searchsorted(times, end, side="right"), -1)
    return int((np.cumsum(depth)[:-1] > 0).sum())


@pytest.mark.parametrize("seed", range(6))
def test_candidates_equal_the_per_group_masks(seed):
    rng = np.random.default_rng(seed)
    n, n_names = int(rng.integers(1, 5000)), int(rng.integers(1, 120))
    names = [f"op{i}" for i in range(n_names)]
    start = np.sort(rng.integers(0, 10**9, n)).astype(np.int64)
    end = start + rng.integers(0, 10**6, n)
    zero = rng.random(n) < 0.05
    end[zero] = start[zero]  # some zero-length spans
    name = rng.integers(0, n_names, n).astype(np.int16)
    line = rng.integers(-1 if seed % 2 else 0, 9, n).astype(np.int16)  # negative lines too (spans without a thread)
    keep = rng.random(n) < 0.8
    times = np.sort(rng.integers(0, 10**9, int(rng.integers(0, 20000))))
    if not times.size:
        times = np.array([5], dtype=np.int64)
    got = structure._candidates("t", start, end, name, line, names, keep, times)
    want = _by_masks(start, end, name, line, names, keep, times)
    assert [c.name for c in got] == [w[0] for w in want]
    assert len(got) > 0 or not keep.any()
    for c, w in zip(got, want):
        assert c.coverage == w[4]
        np.testing.assert_array_equal(c.start, w[2])
        np.testing.assert_array_equal(c.end, w[3])


def test_no_candidates_without_kept_time():
    z = np.zeros(3, dtype=np.int64)
    assert structure._candidates("t", z, z, np.zeros(3, np.int16), np.zeros(3, np.int16), ["a"], np.ones(3, bool),
                                 np.array([1])) == []


@pytest.mark.parametrize("seed", range(6))
def test_lines_bounded_below_the_need_are_the_only_ones_left_out(seed):
    """With a coverage need, exactly the candidates that reach it are kept, each as counted in full: the launch bins'
    bound leaves out only lines that could never be a step span."""
    rng = np.random.default_rng(100 + seed)
    n, n_names = int(rng.integers(200, 4000)), int(rng.integers(2, 40))
    names = [f"op{i}" for i in range(n_names)]
    start = np.sort(rng.integers(0, 10**8, n)).astype(np.int64)
    name = rng.integers(0, n_names, n).astype(np.int16)
    end = start + rng.integers(0, 2 * 10**7, n) * (name == 0) + rng.integers(0, 10**4, n)  # op0 covers most launches
    line = rng.integers(0, 3, n).astype(np.int16)
    keep = np.ones(n, dtype=bool)
    times = np.sort(rng.integers(0, 10**8, int(rng.integers(1000, 50000))))
    need = float(rng.choice([0.3, 0.5]))
    full = structure._candidates("t", start, end, name, line, names, keep, times)
    bounded = structure._candidates("t", start, end, name, line, names, keep, times, need)
    reach = [c for c in full if c.coverage >= need]
    assert reach, "no candidate reaches the need: the case is not exercised"
    assert [(c.name, c.coverage) for c in bounded if c.coverage >= need] == [(c.name, c.coverage) for c in reach]
    left_out = {c.name for c in full} - {c.name for c in bounded}
    assert left_out, "no line was bounded below the need: the case is not exercised"
    assert all(c.coverage < need for c in full if c.name in left_out)


def _bound(bins, s, e):
    """The bins' bound of one group of intervals."""
    return int(bins.each_at_most(s, e, np.arange(s.size), np.zeros(1, np.intp))[0])


@pytest.mark.parametrize("seed", range(20))
def test_launch_bins_bound_the_launches_from_above(seed):
    rng = np.random.default_rng(seed)
    times = np.sort(rng.integers(0, 10**6, int(rng.integers(1, 5000))))
    if seed % 4 == 0:  # bursts: most launches in a few short stretches
        times = np.sort(np.concatenate([times, rng.integers(5 * 10**5, 5 * 10**5 + 50, 3000)]))
    s = np.sort(rng.integers(-10**5, 11 * 10**5, int(rng.integers(3, 300))))  # some before or past every launch
    e = s + rng.integers(-10, 10**5, s.size)  # a few that end before they start, as a damaged file's
    s[:3] = times[0]  # intervals on the first and last launch
    e[-3:] = times[-1]
    per = np.searchsorted(times, e, side="right") - np.searchsorted(times, s, side="left")
    bins = structure._LaunchBins(times)
    assert int(per.sum()) <= _bound(bins, s, e)
    # the intervals as groups of rows in any order, some groups of one: each group's bound is above its launches
    rows = rng.permutation(s.size)
    first = np.unique(np.concatenate([[0], rng.integers(0, s.size, 20)]))
    got = bins.each_at_most(s, e, rows, first)
    want = np.add.reduceat(per[rows], first)
    assert got.shape == want.shape and (want <= got).all()


def test_launch_bins_are_a_tight_bound_on_spread_launches():
    times = np.arange(0, 10**6, 10)  # 100 k launches, one every 10 ps
    bins = structure._LaunchBins(times)
    s, e = np.array([1000, 500_000]), np.array([1999, 500_999])  # 100 launches each
    assert 200 <= _bound(bins, s, e) <= 200 + 4 * structure._PER_BIN
    # before every launch: the first bin at most
    assert _bound(bins, np.array([-50]), np.array([-1])) <= structure._PER_BIN


@pytest.mark.parametrize("chunk", [1, 7, 1 << 18])
def test_time_per_name_equals_one_bincount_across_chunks(monkeypatch, chunk):
    """The chunked sum (a few MB of temporaries at a time) is the whole-table bincount it replaces, exactly: the
    durations are whole picoseconds, so the float sums are exact whatever the chunking."""
    monkeypatch.setattr(structure, "_CHUNK", chunk)
    rng = np.random.default_rng(chunk)
    n, n_names = 3001, 40
    start = np.sort(rng.integers(0, 10**12, n)).astype(np.int64)
    end = start + rng.integers(0, 10**9, n)
    name = rng.integers(0, n_names, n).astype(np.int16)  # the host table's narrow name ids
    keep = rng.random(n) < 0.7
    want = np.bincount(name[keep].astype(np.int64), weights=(end[keep] - start[keep]).astype(np.float64),
                       minlength=n_names)
    got = structure._time_per_name(start, end, name, keep, n_names)
    assert got.shape == (n_names,) and np.array_equal(got, want)


def test_candidates_unchanged_when_totals_are_summed_in_small_chunks(monkeypatch):
    rng = np.random.default_rng(11)
    n, n_names = 4000, 30
    names = [f"op{i}" for i in range(n_names)]
    start = np.sort(rng.integers(0, 10**9, n)).astype(np.int64)
    end = start + rng.integers(1, 10**6, n)
    name, line = rng.integers(0, n_names, n).astype(np.int16), rng.integers(0, 3, n).astype(np.int16)
    keep = rng.random(n) < 0.8
    times = np.sort(rng.integers(0, 10**9, 500)).astype(np.int64)
    whole = structure._candidates("t", start, end, name, line, names, keep, times)
    monkeypatch.setattr(structure, "_CHUNK", 13)
    chunked = structure._candidates("t", start, end, name, line, names, keep, times)
    assert [c.name for c in whole] == [c.name for c in chunked] and whole
    for a, b in zip(whole, chunked):
        assert a.coverage == b.coverage and np.array_equal(a.start, b.start) and np.array_equal(a.end, b.end)
