"""``metrics.context._few_distinct``: the distinct values of a stream or kind column by one compare per value found,
against ``np.unique``, at and just past the number of values it is allowed to find."""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor.metrics import context


@pytest.mark.parametrize("k", [1, 2, 3, context._FEW_IDS, context._FEW_IDS + 1, context._FEW_IDS + 2])
def test_few_distinct_is_np_unique_or_none(k: int) -> None:
    rng = np.random.default_rng(k)
    values = rng.choice(np.arange(-60, 60), size=k, replace=False)
    for n in (k, 5 * k, 10_000):
        a = values[rng.permutation(np.resize(np.arange(k), n))].astype(np.int8)  # each value at least once, shuffled
        got = context._few_distinct(a, context._FEW_IDS)
        if k > context._FEW_IDS:
            assert got is None
        else:
            assert got is not None and got.dtype == a.dtype
            np.testing.assert_array_equal(got, np.unique(a))
        np.testing.assert_array_equal(context.distinct_ids(a), np.unique(a))
