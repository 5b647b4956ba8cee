"""``model.columns.union_by_key`` where each key's intervals end at or before the next key's begin (a GPU's events
clipped to its step windows) merges with one running maximum, no per-key bands: it must equal each key's own
union, and never join two keys, even where one key's last interval ends exactly where the next key's first begins."""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor.model.columns import union_by_key, union_intervals


def _per_key(key: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[list, list, list]:
    """Each key's own union (touching intervals merged), keys ascending."""
    ks, ss, es = [], [], []
    for k in np.unique(key).tolist():
        m = key == k
        s, e = union_intervals(start[m], np.maximum(end[m], start[m]))
        ks += [k] * s.size
        ss += s.tolist()
        es += e.tolist()
    return ks, ss, es


def _windows_events(rng: np.random.Generator, steps: int, touching: bool):
    """Events by start, each clipped to its step's window; windows back to back when ``touching``."""
    bounds = np.cumsum(rng.integers(50, 500, steps + 1))
    ws, we = bounds[:-1], (bounds[1:] if touching else bounds[1:] - rng.integers(1, 40, steps))
    key, start, end = [], [], []
    for k in range(steps):
        s = np.sort(rng.integers(ws[k] - 30, we[k], int(rng.integers(0, 30))))
        e = s + rng.integers(0, 80, s.size)
        key += [k] * s.size
        start += np.maximum(s, ws[k]).tolist()
        end += np.minimum(e, we[k]).tolist()
    return np.array(key, np.int16), np.array(start, np.int64), np.array(end, np.int64)


@pytest.mark.parametrize("touching", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_keys_apart_equal_each_keys_union(seed, touching):
    rng = np.random.default_rng(seed)
    key, start, end = _windows_events(rng, 60, touching)
    got = union_by_key(key, start, end)
    assert [a.tolist() for a in got] == list(_per_key(key, start, end))


def test_overlapping_keys_still_kept_apart():
    rng = np.random.default_rng(5)
    key = rng.integers(0, 6, 400).astype(np.int16)  # every key across the whole range: the bands' path
    start = rng.integers(0, 5000, 400).astype(np.int64)
    end = start + rng.integers(0, 300, 400)
    got = union_by_key(key, start, end)
    assert [a.tolist() for a in got] == list(_per_key(key, start, end))


def test_touching_keys_are_not_joined():
    key = np.array([0, 0, 1, 1, 2], np.int16)
    start = np.array([0, 5, 10, 12, 20], np.int64)
    end = np.array([6, 10, 12, 20, 25], np.int64)  # key 0 ends at 10 where key 1 begins; key 1 ends at 20, key 2 begins
    k, s, e = union_by_key(key, start, end)
    assert (k.tolist(), s.tolist(), e.tolist()) == ([0, 1, 2], [0, 10, 20], [10, 20, 25])


def test_keys_overlapping_a_little_take_the_bands():
    key = np.array([0, 1, 1], np.int16)
    start = np.array([0, 10, 14], np.int64)
    end = np.array([13, 12, 20], np.int64)  # key 0 ends after key 1 begins: its end must not carry into key 1
    k, s, e = union_by_key(key, start, end)
    assert (k.tolist(), s.tolist(), e.tolist()) == ([0, 1, 1], [0, 10, 14], [13, 12, 20])
