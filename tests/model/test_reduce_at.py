"""``model.columns.reduce_at``: ``np.minimum.at`` / ``np.maximum.at`` by runs of one key where the keys do not fall
(a GPU's events by start, their steps rising), ``ufunc.at`` otherwise -- the same values, to the bit, on rising
keys with runs and gaps, falling and shuffled keys, narrow keys (int16 steps) and values of another width, and
keys that are empty or one."""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor.model import columns


@pytest.mark.parametrize("ufunc", [np.minimum, np.maximum], ids=["min", "max"])
def test_same_as_ufunc_at(ufunc):
    rng = np.random.default_rng(38)
    for _ in range(400):
        n_out = int(rng.integers(1, 40))
        n = int(rng.integers(0, 300))
        keys = rng.integers(0, n_out, n).astype(rng.choice([np.int16, np.int32, np.int64]))
        order = rng.choice(["rising", "falling", "shuffled"])
        if order == "rising":
            keys.sort()
        elif order == "falling":
            keys = np.sort(keys)[::-1].copy()
        values = rng.integers(-(10 ** 15), 10 ** 15, n).astype(rng.choice([np.int32, np.int64]) if n else np.int64)
        init = rng.integers(-(10 ** 15), 10 ** 15, n_out)
        want, got = init.copy(), init.copy()
        ufunc.at(want, keys, values)
        columns.reduce_at(ufunc, got, keys, values)
        assert got.dtype == want.dtype and np.array_equal(got, want), (order, keys, values)


def test_a_run_per_key_is_reduced_not_looped(monkeypatch):
    """The rising path is taken (its answer is checked above): ``ufunc.at`` is not called for rising keys."""
    called = []

    class Spy:
        def __init__(self, f):
            self.f = f

        def at(self, *a):
            called.append(True)
            return self.f.at(*a)

        def reduceat(self, *a):
            return self.f.reduceat(*a)

        def __call__(self, *a):
            return self.f(*a)

    out = np.full(3, 10 ** 9)
    columns.reduce_at(Spy(np.minimum), out, np.array([0, 0, 2, 2, 2]), np.array([5, 3, 9, 1, 4]))
    assert out.tolist() == [3, 10 ** 9, 1] and not called
    columns.reduce_at(Spy(np.minimum), out, np.array([2, 0]), np.array([0, 0]))
    assert called and out.tolist() == [0, 10 ** 9, 0]
