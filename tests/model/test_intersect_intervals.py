"""``model.columns.intersect_intervals``: the parts of one interval set inside another, checked against the truth by
construction -- on an integer grid each unit cell ``[t, t + 1)`` is inside the answer exactly where it lies in some
interval of both sets (h37-review25's list: the metrics wrote it as a subtraction of a subtraction at five sites)."""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor.model.columns import intersect_intervals, union_intervals

GRID = 200


def _cells(s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Bool per unit cell of the grid: covered by some half-open interval."""
    out = np.zeros(GRID, bool)
    for a, b in zip(s.tolist(), e.tolist()):
        out[a:b] = True
    return out


def _draw(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` intervals in any order, nested, overlapping or touching, some empty."""
    s = rng.integers(0, GRID, n)
    return s.astype(np.int64), np.minimum(s + rng.integers(0, 40, n), GRID).astype(np.int64)


@pytest.mark.parametrize("seed", range(40))
def test_the_parts_inside_both_sets_by_construction(seed):
    rng = np.random.default_rng(seed)
    s, e = _draw(rng, int(rng.integers(1, 12)))
    ws, we = _draw(rng, int(rng.integers(0, 12)))
    a, b = intersect_intervals(s, e, ws, we)
    assert (_cells(a, b) == (_cells(s, e) & _cells(ws, we))).all()
    # the canonical form: sorted, disjoint and apart, none empty (union_intervals' own output)
    assert (b > a).all() and (a[1:] > b[:-1]).all()
    ua, ub = union_intervals(a, b)
    assert np.array_equal(ua, a) and np.array_equal(ub, b)


def test_nothing_inside_an_empty_set():
    s, e = np.array([5, 30], np.int64), np.array([20, 60], np.int64)
    a, b = intersect_intervals(s, e, s[:0], e[:0])
    assert a.size == 0 and b.size == 0


def test_nested_and_touching_parts_read_once():
    """[0, 10) and [10, 20) touch: inside [5, 15) they are one stretch [5, 15); [40, 50) holds [42, 44) twice."""
    a, b = intersect_intervals(np.array([0, 10, 40], np.int64), np.array([10, 20, 50], np.int64),
                               np.array([5, 42, 42], np.int64), np.array([15, 44, 43], np.int64))
    assert a.tolist() == [5, 42] and b.tolist() == [15, 44]
