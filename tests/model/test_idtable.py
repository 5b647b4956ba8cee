"""``IdTable.first_positions`` (the launch records' correlation table, built a block at a time) answers as the
table built from whole id and position columns does: the first position of each id, -1 for every other id."""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor.model import idtable
from tb_gpu_advisor.model.idtable import IdTable


@pytest.mark.parametrize("seed", range(40))
def test_first_positions_equals_the_table_of_whole_columns(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    monkeypatch.setattr(idtable, "_BLOCK", int(rng.integers(1, 300)))  # ids repeated within and across blocks
    n = int(rng.integers(0, 2000))
    high = int(rng.choice([5, 300, 5000, 10**9]))  # dense, and sparse ids (the sorted path)
    column = rng.integers(-3, high, n).astype(rng.choice([np.int16, np.int32, np.int64]) if high < 30000 else np.int64)
    pos = np.flatnonzero(column >= 0)
    expected = IdTable(column[pos], pos.astype(np.int32), -1)
    got = IdTable.first_positions(column, np.int32)
    query = np.concatenate([rng.integers(-5, high + 10, 400), column]).astype(np.int64)
    assert got.lookup(query).tolist() == expected.lookup(query).tolist()
    assert got.lookup(query).dtype == expected.lookup(query).dtype
