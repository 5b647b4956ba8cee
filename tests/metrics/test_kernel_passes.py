"""Faster passes of ``metrics.kernels`` against what they replace (issue #38), to the bit.

``_stream_busy_until``: per device event, the latest end among the events before it on its stream
(by start, ties in index order), -1 for a stream's first -- what the idle-launch latency reads (a launch onto a
busy stream measures queueing, not launch latency).  Checked against that definition written as a double loop, on
GPUs by start (the per-stream masks), out of start order and with more streams than the masks take (the sort).
``_cumsum_after_zero`` (the fusion chains' running sums): ``np.concatenate([[0], np.cumsum(a)])``, bit for bit."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tb_gpu_advisor.metrics import kernels


class _Dev(SimpleNamespace):
    def __len__(self) -> int:
        return int(self.start.size)


def _by_definition(d) -> np.ndarray:
    out = np.full(len(d), -1, np.int64)
    for i in range(len(d)):
        before = [int(d.end[j]) for j in range(len(d))
                  if d.stream[j] == d.stream[i] and (int(d.start[j]), j) < (int(d.start[i]), i)]
        if before:
            out[i] = max(before)
    return out


def _gpu(rng, n: int, n_streams: int, by_start: bool) -> _Dev:
    start = rng.integers(0, 60, n)  # few distinct values: ties in start
    if by_start:
        start.sort()
    end = start + rng.integers(0, 40, n)
    return _Dev(start=start.astype(np.int64), end=end.astype(np.int64),
                stream=rng.integers(0, n_streams, n).astype(np.int8))


@pytest.mark.parametrize("by_start", [True, False], ids=["by-start", "unordered"])
@pytest.mark.parametrize("n_streams", [1, 3, kernels._STREAM_MASKS_MAX + 5], ids=["one", "few", "many"])
def test_the_definition(by_start, n_streams):
    rng = np.random.default_rng(38 + n_streams)
    for _ in range(150):
        d = _gpu(rng, int(rng.integers(0, 70)), n_streams, by_start)
        assert np.array_equal(kernels._stream_busy_until(d), _by_definition(d))


def test_the_masks_and_the_sort_agree_on_a_large_gpu():
    rng = np.random.default_rng(7)
    d = _gpu(rng, 200_000, 4, True)
    d.start = np.cumsum(rng.integers(0, 3, d.start.size)).astype(np.int64)  # wide, with ties
    d.end = d.start + rng.integers(0, 10_000, d.start.size)
    fast = kernels._stream_busy_until(d)
    assert np.array_equal(fast, kernels._stream_busy_until_sorted(d))
    assert not np.shares_memory(fast, d.end) and (fast >= -1).all()


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_cumsum_after_zero_is_the_concatenation(dtype):
    rng = np.random.default_rng(11)
    for n in (0, 1, 2, 1000, 100_000):
        a = (rng.standard_normal(n) * 1e9 if dtype is np.float64 else rng.integers(-(10 ** 12), 10 ** 12, n)).astype(dtype)
        want = np.concatenate([[0], np.cumsum(a)])
        got = kernels._cumsum_after_zero(a)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
