"""``job.phase._own_slow_time``: each slow first call's time outside the calls nested in it, read in one sort and one
pass where the calls nest, not by checking each call against every other (h37-homes71).

:func:`_reference` is the algorithm of main ea5a2537, kept here: on small random inputs -- nested, touching,
overlapping across threads, spans repeated, empty -- both answer alike.  The large input (a chain 20,000 calls deep
beside 20,000 siblings) is checked against its answer by construction (quadratic on ea5a2537: ~4 s); a smaller twin
with one call overlapping the chain is read by the overlapping reader.  No timing is asserted.
"""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor.job.phase import _own_slow_time, _own_slow_time_overlapping
from tb_gpu_advisor.model.columns import union_intervals


def _reference(s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """main ea5a2537's reading: per call, its span less the union of every other call inside it (of two calls with
    one span, the later is the inner)."""
    own = (e - s).astype(np.int64)
    n = np.arange(s.size)
    for k in range(s.size):
        inside = (s >= s[k]) & (e <= e[k]) & (n != k) & ((s != s[k]) | (e != e[k]) | (n > k))
        if inside.any():
            cs, ce = union_intervals(s[inside], e[inside])
            own[k] -= int((ce - cs).sum())
    return own


def _nested(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` calls that nest: each a random part of a random earlier one (or a new root), on a coarse grid so that
    spans repeat and touch."""
    s, e = [0], [int(rng.integers(1, 40))]
    for _ in range(n - 1):
        if rng.random() < 0.2:
            a = e[-1] + int(rng.integers(0, 3))
            s.append(a), e.append(a + int(rng.integers(0, 30)))
            continue
        p = int(rng.integers(0, len(s)))
        a = int(rng.integers(s[p], e[p] + 1))
        s.append(a), e.append(int(rng.integers(a, e[p] + 1)))
    o = rng.permutation(n)
    return np.array(s, np.int64)[o], np.array(e, np.int64)[o]


@pytest.mark.parametrize("seed", range(60))
def test_the_same_answer_as_before_on_small_inputs(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 25))
    if seed % 2:  # any spans: overlapping without nesting, as two threads' calls
        s = rng.integers(0, 50, n).astype(np.int64)
        e = s + rng.integers(0, 20, n)
    else:
        s, e = _nested(rng, max(n, 1))
    assert _own_slow_time(s, e).tolist() == _reference(s, e).tolist()
    order = np.lexsort((np.arange(s.size), -e, s))
    assert _own_slow_time_overlapping(s, e, order).tolist() == _reference(s, e).tolist()


def _chain_and_siblings(depth: int, siblings: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A chain of calls each 1 ps inside the one before, [i, 2*depth - i), then siblings of 3 ps after it, each with
    a 1 ps call inside: (starts, ends, each call's own time by construction)."""
    cs = np.arange(depth, dtype=np.int64)
    at = 2 * depth + 3 * np.arange(siblings, dtype=np.int64)
    s = np.concatenate([cs, at, at + 1])
    e = np.concatenate([2 * depth - cs, at + 3, at + 2])
    return s, e, np.concatenate([np.full(depth + siblings, 2), np.full(siblings, 1)])


def test_a_large_nested_input():
    s, e, want = _chain_and_siblings(20_000, 20_000)
    assert _own_slow_time(s, e).tolist() == want.tolist()


def test_calls_overlapping_without_nesting():
    """One call overlapping the chain's outermost without nesting: read by the overlapping reader."""
    depth = 2_000
    s, e, want = _chain_and_siblings(depth, 2_000)
    s2, e2 = np.append(s, 2 * depth - 1), np.append(e, 2 * depth + 1)
    got = _own_slow_time(s2, e2)
    assert got[:-1].tolist() == want.tolist() and int(got[-1]) == 2
