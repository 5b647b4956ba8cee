"""``model.columns.union_intervals(..., merge_touching=False)`` tells calls apart: a call nested in another is one
call with it, and a call that only begins a nanosecond before the previous one ends is a call of its own -- the
rule of :func:`model.columns.outermost` (profilers round times: Kineto writes microseconds to three decimals, so at
a PyTorch 2.x trace's 4.5e12 us a back-to-back range's end lands up to 1 ns past the next start).  On d4d3db12 the
calls mode merged every overlap: ten back-to-back ``generate`` ranges read as seven calls."""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor.model.columns import outermost, union_intervals


def _back_to_back(n: int, length: int, late: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``n`` calls of ``length`` ns back to back, each ending ``late[i]`` ns past the next one's start."""
    start = np.arange(n, dtype=np.int64) * length
    return start, start + length + late


@pytest.mark.parametrize("late", [0, 1, 2])
def test_back_to_back_calls_rounded_apart_stay_apart(late):
    s, e = _back_to_back(10, 1_338_474, np.full(10, late, np.int64))
    us, ue = union_intervals(s, e, merge_touching=False)
    assert us.tolist() == s.tolist() and ue.tolist() == e.tolist()


def test_a_nested_call_ending_a_nanosecond_late_is_still_held():
    """A call inside another whose rounded end lands 1 ns after its holder's: one call, the holder's start."""
    s = np.array([0, 100, 1000], np.int64)
    e = np.array([1000, 1001, 2000], np.int64)
    us, ue = union_intervals(s, e, merge_touching=False)
    assert us.tolist() == [0, 1000] and ue.tolist() == [1001, 2000]


@pytest.mark.parametrize("seed", range(20))
def test_the_calls_kept_are_the_outermost_ones(seed):
    """Property: the calls' starts are exactly the starts of the events :func:`outermost` keeps, and every event
    lies inside the calls' union."""
    rng = np.random.default_rng(seed)
    n = 200
    s = np.sort(rng.integers(0, 100_000, n)).astype(np.int64)
    e = s + rng.integers(1, 3_000, n)
    order = np.lexsort((-e, s))
    s, e = s[order], e[order]
    us, _ = union_intervals(s, e, merge_touching=False)
    kept = outermost(np.zeros(n, np.int64), s, e)
    assert sorted(us.tolist()) == sorted(s[kept].tolist())
    cs, ce = union_intervals(s, e)
    k = np.searchsorted(cs, s, side="right") - 1
    assert (k >= 0).all() and (e <= ce[k]).all()
