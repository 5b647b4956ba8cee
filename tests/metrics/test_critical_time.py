"""The GPU-critical part of kernel time (metrics/breakdown.critical_time, issue #37): a kernel's speed-up shortens
the step only by the time the GPU's next work was already waiting for it.  Checked against a plain loop on random
timelines, and on hand-built ones whose answer is known: a GPU-bound chain is all critical, a host-paced chain none."""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor.metrics.breakdown import critical_time


def _loop(start, end, ready, known, waited) -> list[float]:
    """The definition, one event at a time."""
    out = []
    for i in range(len(start)):
        dur = max(0.0, float(end[i] - start[i]))
        if i + 1 == len(start) or not known[i + 1] or waited[i]:
            out.append(dur)
        else:
            out.append(min(dur, max(0.0, float(end[i] - ready[i + 1]))))
    return out


@pytest.mark.parametrize("seed", range(20))
def test_matches_the_loop_on_random_timelines(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 60))
    start = np.sort(rng.integers(0, 10_000, n)).astype(np.int64)
    end = start + rng.integers(0, 500, n)
    ready = start + rng.integers(-800, 300, n)
    known = rng.random(n) < 0.8
    waited = rng.random(n) < 0.2
    got = critical_time(start, end, ready, known, waited)
    assert got.tolist() == pytest.approx(_loop(start, end, ready, known, waited))


def _chain(gap: int, lead: int) -> tuple[np.ndarray, ...]:
    """Ten 100-long kernels ``gap`` apart, each launched ``lead`` before it starts (its launch call ends then)."""
    start = np.arange(10, dtype=np.int64) * (100 + gap)
    return start, start + 100, start - lead, np.ones(10, bool), np.zeros(10, bool)


def test_a_gpu_bound_chain_is_all_critical() -> None:
    """Back to back, each launched long before the previous one ends: every kernel delays the next."""
    assert critical_time(*_chain(gap=0, lead=500)).sum() == 1000


def test_a_host_paced_chain_with_gaps_is_not_critical() -> None:
    """Each kernel launched 5 after the previous one ended (the GPU idles 5 + launch): only the last counts, the one
    nothing follows (no measure caps it)."""
    crit = critical_time(*_chain(gap=20, lead=15))
    assert crit[:-1].sum() == 0 and crit[-1] == 100


def test_partly_waited_for_counts_the_overlap_only() -> None:
    """The next launch ends 30 before the kernel ends: 30 of its 100 are critical."""
    start = np.array([0, 110], np.int64)
    crit = critical_time(start, start + 100, np.array([-50, 70]), np.ones(2, bool), np.zeros(2, bool))
    assert crit.tolist() == [30, 100]


def test_unknown_launches_and_host_waits_do_not_cap() -> None:
    """Where the next launch is unknown, or the host was blocked waiting for the GPU (a sync returns when the queue
    drains, so the next launch follows the GPU), the whole kernel counts."""
    start, end, ready, known, waited = _chain(gap=20, lead=15)
    assert critical_time(start, end, ready, np.zeros(10, bool), waited).sum() == 1000
    assert critical_time(start, end, ready, known, np.ones(10, bool)).sum() == 1000
