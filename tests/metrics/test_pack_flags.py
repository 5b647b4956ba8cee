"""``metrics.context.pack_flags``: each bool column's bit in one uint8 per event, read back by ``Context._flag``."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.metrics.context import pack_flags


def test_each_bit_is_its_column():
    rng = np.random.default_rng(3)
    n = 10_001
    masks = {1 << i: rng.random(n) < p for i, p in enumerate((0.0, 0.001, 0.2, 0.5, 0.999, 1.0))}
    masks[1 << 2] = (rng.random(2 * n) < 0.3)[::2]  # a strided view, as a column's slice can be
    flags = pack_flags(masks, n)
    assert flags.dtype == np.uint8 and flags.shape == (n,)
    for bit, mask in masks.items():
        assert np.array_equal((flags & np.uint8(bit)) != 0, mask), bit
    assert not (flags & np.uint8(0xC0)).any()  # no bit that no column set


def test_no_columns_and_no_events():
    assert pack_flags({}, 4).tolist() == [0, 0, 0, 0]
    assert pack_flags({1: np.zeros(0, bool)}, 0).size == 0
