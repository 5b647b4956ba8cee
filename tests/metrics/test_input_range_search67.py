"""The searches that find what the program's fetch ranges hold (``metrics.inputs._inside``, ``_holds``) answer as a
pass over every pair would, on threads of nested events -- sorted searches a thread, not a pass over the events an
event of the ranges: that pass (h37-huntk67/huntr67's ``_range_calls`` and ``_wraps_parallel``) took 107 s of a 3,000-
step trace's 112 s (``synthetic.torchtrace.write_ranged_loader(steps=3000)``; 3.8 s with these).  Truth: the pairwise
answer, by construction on random nested trees of events."""

from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np

from tb_gpu_advisor.metrics.inputs import _holds, _inside


def _thread(rng: random.Random, lo: int, hi: int, depth: int, out: list[tuple[int, int]]) -> None:
    """Events nested as a thread's calls are, in [lo, hi): siblings apart (or back to back), children inside."""
    t = lo
    while depth and t < hi - 4 and rng.random() < 0.8:
        s = rng.randrange(t, hi - 3)
        e = rng.randrange(s + 1, min(hi, s + 40) + 1)
        out.append((s, e))
        _thread(rng, s, e, depth - 1, out)
        t = e if rng.random() < 0.7 else e + 1


def _table(seed: int) -> SimpleNamespace:
    rng = random.Random(seed)
    start, end, line = [], [], []
    for tid in range(3):
        ev: list[tuple[int, int]] = []
        _thread(rng, 0, 400, 4, ev)
        start += [s for s, _ in ev]
        end += [e for _, e in ev]
        line += [tid] * len(ev)
    return SimpleNamespace(start=np.array(start, np.int64), end=np.array(end, np.int64), line=np.array(line, np.int32))


def test_inside_and_holds_answer_as_every_pair_does():
    for seed in range(25):
        h = _table(seed)
        n = h.start.size
        rng = np.random.default_rng(seed)
        outer, inner = np.flatnonzero(rng.random(n) < 0.3), np.flatnonzero(rng.random(n) < 0.3)
        rows = np.arange(n)

        def within(i: int, o: int, h: SimpleNamespace = h) -> bool:
            return bool(h.line[i] == h.line[o] and h.start[i] >= h.start[o] and h.end[i] <= h.end[o])

        assert _inside(h, outer, rows).tolist() == [any(within(i, o) for o in outer) for i in rows], seed
        assert _holds(h, outer, inner).tolist() == [any(within(i, o) for i in inner) for o in outer], seed


def test_a_parent_of_back_to_back_ranges_is_inside_neither():
    h = SimpleNamespace(start=np.array([0, 0, 5], np.int64), end=np.array([10, 5, 10], np.int64),
                        line=np.zeros(3, np.int32))
    assert _inside(h, np.array([1, 2]), np.arange(3)).tolist() == [False, True, True]
    assert _holds(h, np.array([1, 2]), np.array([0])).tolist() == [False, False]
