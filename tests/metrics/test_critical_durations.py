"""``metrics.breakdown._critical_and_durations``: the critical part and the durations it starts from, made once for
:func:`gpu_critical_ms` -- the same numbers as :func:`critical_time` and the clipped durations, bit for bit; no
waited end (None) is every end not waited."""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor.metrics.breakdown import _critical_and_durations, critical_time


@pytest.mark.parametrize("seed", range(10))
def test_the_critical_part_and_the_durations(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 80))
    start = np.sort(rng.integers(0, 10_000, n)).astype(np.int64)
    end = start + rng.integers(-20, 500, n)  # a few that end before they start: duration 0
    ready = start + rng.integers(-800, 300, n)
    known = rng.random(n) < 0.8
    waited = rng.random(n) < 0.2
    crit, dur = _critical_and_durations(start, end, ready, known, waited)
    assert np.array_equal(crit, critical_time(start, end, ready, known, waited))
    assert dur.dtype == np.float64 and np.array_equal(dur, np.maximum(end - start, 0).astype(np.float64))
    none, _ = _critical_and_durations(start, end, ready, known, None)
    assert np.array_equal(none, critical_time(start, end, ready, known, np.zeros(n, bool)))
    assert crit is not dur  # the caller may write either
