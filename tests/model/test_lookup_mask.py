"""``model.columns.lookup_mask``: a per-name bool table read at each event's name id, by compares where few names
answer true (or false), else by a table lookup -- always the same booleans as ``per_id[ids]``."""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor.model.columns import _COMPARE_IDS_MAX, lookup_mask


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.int64])
@pytest.mark.parametrize("n_true", [0, 1, 2, _COMPARE_IDS_MAX, _COMPARE_IDS_MAX + 1, 100,
                                    300 - _COMPARE_IDS_MAX - 1, 300 - _COMPARE_IDS_MAX, 299, 300])
def test_same_booleans_as_indexing(dtype, n_true: int) -> None:
    rng = np.random.default_rng(n_true)
    per_id = np.zeros(300, dtype=bool)
    per_id[rng.choice(300, size=n_true, replace=False)] = True
    ids = rng.integers(0, 300, 50_000).astype(dtype)
    ids[:300] = np.arange(300)  # every id present at least once: each compare has something to find
    got = lookup_mask(per_id, ids)
    assert got.dtype == bool and got.shape == ids.shape
    np.testing.assert_array_equal(got, per_id[ids])
    got[:] = ~got  # a new array the caller may write into (the stages combine masks in place)
    np.testing.assert_array_equal(lookup_mask(per_id, ids), per_id[ids])


def test_read_only_table_and_empty_column() -> None:
    per_id = np.array([False, True, False])
    per_id.flags.writeable = False  # the per-name memo hands out read-only tables
    assert lookup_mask(per_id, np.zeros(0, np.int16)).shape == (0,)
    np.testing.assert_array_equal(lookup_mask(per_id, np.array([2, 1, 0, 1], np.int16)), [False, True, False, True])
