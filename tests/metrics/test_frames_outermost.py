"""``metrics.breakdown._outermost_by_name``: of recorded Python calls, each name's outermost ones (a recursive
``_call_impl`` inside ``_call_impl`` is the same stretch of time, counted once), by one running maximum over shifted
ends -- checked against the plain reading, one name at a time, on drawn nestings."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.metrics.breakdown import _outermost_by_name


def _plain(s: np.ndarray, e: np.ndarray, name: np.ndarray) -> set[tuple[int, int, int]]:
    out = set()
    for n in np.unique(name):
        m = name == n
        best = -1
        for a, b in sorted(zip(s[m].tolist(), e[m].tolist()), key=lambda ab: (ab[0], -ab[1])):
            if a >= best:
                out.add((int(n), a, b))
            best = max(best, b)
    return out


def test_outermost_calls_of_each_name_match_the_plain_reading():
    rng = np.random.default_rng(7)
    for _ in range(200):
        k = int(rng.integers(1, 40))
        name = rng.integers(0, 4, k).astype(np.int64)
        s = rng.integers(0, 1_000, k).astype(np.int64)
        e = s + rng.integers(0, 300, k).astype(np.int64)
        o = np.lexsort((-e, s, name))
        got = _outermost_by_name(s[o], e[o], name[o])
        assert set(zip(got[2].tolist(), got[0].tolist(), got[1].tolist())) == _plain(s, e, name)


def test_a_call_inside_one_of_its_name_is_dropped_one_of_another_name_kept():
    s, e = np.array([0, 10, 20, 5], np.int64), np.array([100, 50, 30, 60], np.int64)
    name = np.array([1, 1, 1, 2], np.int64)
    got = _outermost_by_name(s, e, name)
    assert got[0].tolist() == [0, 5] and got[2].tolist() == [1, 2]
