"""Fusion chains' kernel and gap sums in int64 (``metrics.kernels._run_sums``) against the float64 sums they replace:
the same chains, bit for bit, where every running sum is exact in float64; the float sums where one is not."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tb_gpu_advisor.metrics import kernels


def _stream(rng: np.random.Generator, n: int, scale: int):
    """One stream of ``n`` kernels by start, a few distinct names, ragged gaps and durations up to ``scale`` ps."""
    dur = rng.integers(1, scale, n)
    gap = rng.integers(-scale // 4, scale, n)  # negative: overlapping kernels (a gap of 0 is booked)
    start = np.cumsum(dur + np.maximum(gap, 0))
    end = start + dur
    names = [f"k{i}" for i in range(5)]
    d = SimpleNamespace(start=start.astype(np.int64), end=end.astype(np.int64), names=names,
                        name=rng.integers(0, 5, n).astype(np.int32))
    cand = rng.random(n) < 0.7
    step = np.repeat(np.arange(n // 50 + 1), 50)[:n]
    return d, np.arange(n), cand, step


def _chains(d, sel, cand, step, exact: bool, monkeypatch) -> dict:
    chains: dict = {}
    with monkeypatch.context() as m:
        if not exact:  # the definition: float64 running sums of the durations and gaps as floats, differenced
            m.setattr(kernels, "_exact_in_float", lambda a: False)
            m.setattr(kernels, "_run_sums", lambda sums, hi, lo: sums[hi] - sums[lo])
        kernels._chains_on_stream(d, sel, cand, step, (np.zeros(0, np.int64),) * 2, chains, 5)
    return chains


@pytest.mark.parametrize("scale", [10**3, 10**9, 10**12])
def test_int_sums_give_the_float_sums(scale: int, monkeypatch) -> None:
    rng = np.random.default_rng(scale)
    d, sel, cand, step = _stream(rng, 20_000, scale)
    got = _chains(d, sel, cand, step, True, monkeypatch)
    want = _chains(d, sel, cand, step, False, monkeypatch)
    assert got and got == want  # floats compared exactly


def test_exact_bound() -> None:
    a = np.array([3, -7, 5], np.int64)
    assert kernels._exact_in_float(a) and kernels._exact_in_float(a[:0])
    big = np.full(4, (1 << 53) // 4, np.int64)
    assert not kernels._exact_in_float(big)
    assert kernels._exact_in_float(big[:3])
    assert not kernels._exact_in_float(-big)
    sums = np.array([0, 5, 12, 30], np.int64)
    out = kernels._run_sums(sums, np.array([3, 2]), np.array([0, 1]))
    assert out.dtype == np.float64 and out.tolist() == [30.0, 7.0]
