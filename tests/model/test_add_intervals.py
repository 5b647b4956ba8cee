"""``model.columns.add_intervals``: a few intervals added to a union give the union of all, as ``union_intervals`` of the
concatenation gives it (issue #38 deliverable 4: the breakdown's priority painting adds each category this way).

Random sets with every way two intervals can meet -- overlapping, nested, touching end to start, zero-length, one
new interval spanning many merged ones, several new ones touching the same merged one -- are checked against
``union_intervals`` itself, on the incremental path (few new intervals) and on the fallback (many).
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.model import columns
from tb_gpu_advisor.model.columns import add_intervals, union_intervals


def _union(rng: np.random.Generator, n: int, span: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    a = rng.integers(0, span, n).astype(np.int64)
    return union_intervals(a, a + rng.integers(0, width, n))


def _check(us, ue, s, e) -> None:
    want = union_intervals(np.concatenate([us, s]), np.concatenate([ue, e]))
    got = add_intervals(us, ue, s, e)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert got[0].dtype == want[0].dtype and got[1].dtype == want[1].dtype


def test_few_intervals_added_give_the_union_of_all():
    rng = np.random.default_rng(38)
    for _ in range(400):
        n, span = int(rng.integers(500, 3000)), int(rng.integers(2000, 100000))
        us, ue = _union(rng, n, span, int(rng.integers(1, max(2, 2 * span // n))))
        k = int(rng.integers(1, max(2, us.size // 16)))
        s = rng.integers(int(us[0]) - 50, int(ue[-1]) + 50, k).astype(np.int64)
        e = s + rng.integers(0, int(rng.choice([5, 200, 5000])), k)
        s[: k // 4] = ue[rng.integers(0, us.size, k // 4)]  # starting where a merged interval ends: they meet
        assert 8 * k <= us.size  # few: the incremental path, not the plain union
        _check(us, ue, s, e)


def test_many_new_intervals_or_an_empty_side():
    rng = np.random.default_rng(1)
    us, ue = _union(rng, 300, 5000, 40)
    s = rng.integers(0, 5000, 200).astype(np.int64)
    _check(us, ue, s, s + 30)  # many: the plain union
    empty = np.zeros(0, np.int64)
    _check(us, ue, empty, empty)
    _check(empty, empty, s, s + 3)


def test_lexsort2_is_numpys_lexsort():
    """``model.columns.lexsort2``: np.lexsort's order of two integer columns, ties in index order, on sorted runs
    (its use: each GPU's intervals by (step, start), joined), random columns, ties, and ranges too wide for one key."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(0, 3000))
        major = rng.integers(-5, int(rng.choice([3, 50, 2000])), n).astype(rng.choice([np.int16, np.int32, np.int64]))
        minor = rng.integers(-(10 ** 12), int(rng.choice([10, 10 ** 13])), n)
        if n and rng.random() < 0.5:  # joined sorted runs
            cut = sorted(rng.integers(0, n, 3).tolist())
            for a, b in zip([0, *cut], [*cut, n]):
                major[a:b].sort()
                minor[a:b].sort()
        assert np.array_equal(columns.lexsort2(minor, major), np.lexsort((minor, major)))
    wide = np.array([2 ** 62, -(2 ** 62), 0, 5], np.int64)
    assert np.array_equal(columns.lexsort2(wide, np.array([1, 0, 1, 0])), np.lexsort((wide, np.array([1, 0, 1, 0]))))
