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
            s, e = union_intervals(start[mm].astype(np.int64), end[mm].astype(np.int64))
            per = np.searchsorted(times, e, side="right") - np.searchsorted(times, s, side="left")
            cov = float(per.sum()) / n_launch
            if best is None or cov > best[4]:
                best = (names[int(i)], "t", s[per > 0], e[per > 0], cov)
        if best is not None and best[2].size:
            out.append(best)
    return out


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
