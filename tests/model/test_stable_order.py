"""``model.columns.stable_order``: ``np.argsort(kind="stable")`` by the ranks' radix where few values repeat."""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor.model.columns import stable_order


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.int64])
@pytest.mark.parametrize("distinct", [1, 2, 124, 40_000, 70_000])
def test_the_stable_argsort(dtype, distinct):
    rng = np.random.default_rng(distinct)
    n = 150_000
    hi = min(distinct, np.iinfo(dtype).max)
    key = rng.integers(-3, hi - 3, n).astype(dtype)  # negative keys too
    key[: n // 3] = np.sort(key[: n // 3])  # a sorted run, as events in index order give
    got = stable_order(key)
    assert np.array_equal(got, np.argsort(key, kind="stable"))
    assert np.array_equal(np.sort(got), np.arange(n))


def test_wide_values_short_and_empty_columns():
    key = np.array([10**12, -5, 7, 10**12, -5, 3], dtype=np.int64)  # spread wider than the column is long
    assert stable_order(key).tolist() == np.argsort(key, kind="stable").tolist()
    assert stable_order(np.array([4], np.int32)).tolist() == [0]
    assert stable_order(np.zeros(0, np.int32)).size == 0
