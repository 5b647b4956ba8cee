"""``metrics.context.assign`` (and the steps' launch windows) by runs of rising times: each window bound placed
among a run's times, the answer one repeat per run -- it must give exactly the search per time (the general path)
on the bounds' edge cases."""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor.metrics import context
from tb_gpu_advisor.metrics.context import assign
from tb_gpu_advisor.model.columns import rising_runs, window_index_by_runs


def _per_time(t: np.ndarray, windows: np.ndarray) -> list[int]:
    """The window holding each time ([start, end)), -1: the last window starting at or before it, if not ended."""
    out = []
    for x in t.tolist():
        i = int(np.searchsorted(windows[:, 0], x, side="right")) - 1
        out.append(i if i >= 0 and x < windows[i, 1] else -1)
    return out


def _windows(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` sorted windows with gaps, some touching the next, some empty (start == end)."""
    bounds = np.sort(rng.integers(0, 50_000, 2 * n))
    w = bounds.reshape(n, 2).copy()
    w[::5, 1] = w[::5, 0]  # empty windows
    w[1:-1:7, 1] = w[2::7, 0]  # windows that end where the next starts
    return w


@pytest.mark.parametrize("runs", [1, 3, 8])
def test_runs_give_the_search_per_time(runs):
    rng = np.random.default_rng(runs)
    windows = _windows(rng, 300)
    parts = []
    for _ in range(runs):  # each run rises, as a host line's events or a GPU's do
        t = np.sort(rng.integers(-100, 50_100, 6000))
        t[:200] = np.sort(rng.choice(windows.reshape(-1), 200))  # times on window starts and ends
        parts.append(np.sort(t))
    t = np.concatenate(parts)
    assert rising_runs(t) is not None  # the repeat path is the one under test
    got = assign(t, windows)
    assert got.dtype == np.int16 and got.tolist() == _per_time(t, windows)
    assert window_index_by_runs(t, windows.reshape(-1), rising_runs(t), np.int16).tolist() == got.tolist()


def test_short_runs_and_overlapping_windows_take_the_search(monkeypatch):
    rng = np.random.default_rng(9)
    windows = _windows(rng, 50)
    shuffled = rng.integers(-100, 50_100, 5000)  # runs of ~2 times: searched, not repeated
    assert rising_runs(shuffled) is None
    assert assign(shuffled, windows).tolist() == _per_time(shuffled, windows)
    overlapping = np.array([[0, 100], [50, 80], [200, 300]])  # not disjoint: the bounds fall
    t = np.arange(-10, 320)

    def fail(*a, **k):  # noqa: ANN002, ANN003
        raise AssertionError("the repeat path assumes bounds that never fall")

    monkeypatch.setattr(context, "window_index_by_runs", fail)
    assert assign(t, overlapping).tolist() == _per_time(t, overlapping)


def test_empty_inputs():
    assert assign(np.zeros(0, np.int64), np.zeros((3, 2), np.int64)).size == 0
    assert assign(np.arange(5), np.zeros((0, 2), np.int64)).tolist() == [-1] * 5
    assert assign(np.array([7]), np.array([[7, 8]])).tolist() == [0]
