"""``metrics.context._enclosing_any``: which outer host events enclose (are the innermost outer event holding the
start of) at least one inner event.  A table by line and strictly rising start is answered from the positions
after each outer event; every other table by the search per inner event.  Both must be the brute force."""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor.metrics import context
from tb_gpu_advisor.metrics.context import _enclosing_any, _enclosing_any_in_order
from tb_gpu_advisor.model.trace import HostEvents


def _host(line: np.ndarray, start: np.ndarray, dur: np.ndarray) -> HostEvents:
    n = start.size
    none = np.full(n, -1, np.int32)
    return HostEvents(start=start, end=start + dur, name=np.zeros(n, np.int32), line=line, corr=none, group_id=none,
                      step_num=none, iter_num=none, root=none, is_eager=none.astype(np.int8), names=["x"],
                      line_names=[f"l{i}" for i in range(int(line.max()) + 1)])


def _brute(h: HostEvents, outer: np.ndarray, inner: np.ndarray) -> list[bool]:
    """Each inner event's encloser: the outer event on its line starting last at or before it (latest index among
    equal starts), still running at its start, not itself; the outer events that are some inner event's."""
    out = [False] * len(h)
    o_idx = np.flatnonzero(outer).tolist()
    for i in np.flatnonzero(inner).tolist():
        cand = [o for o in o_idx if h.line[o] == h.line[i] and h.start[o] <= h.start[i]]
        if cand:
            best = max(cand, key=lambda o: (h.start[o], o))
            if h.end[best] >= h.start[i] and best != i:
                out[best] = True
    return out


def _table(rng: np.random.Generator, n: int, ties: bool = False) -> HostEvents:
    line = np.sort(rng.integers(0, 3, n)).astype(np.int16)
    start = np.empty(n, np.int64)
    for ln in np.unique(line).tolist():  # each line by strictly rising start (or with equal starts)
        m = line == ln
        steps = rng.integers(0 if ties else 1, 40, int(m.sum()))
        start[m] = np.cumsum(steps)
    return _host(line, start, rng.integers(0, 120, n).astype(np.int64))


@pytest.mark.parametrize("seed", range(6))
def test_ordered_tables_take_the_positions(seed):
    rng = np.random.default_rng(seed)
    h = _table(rng, 500)
    outer = rng.random(500) < 0.35
    inner = rng.random(500) < 0.6  # events both outer and inner too
    inner[::6] = True  # no outer event's next inner event further than the tries
    outer[-1] = inner[-1] = True  # an outer event last of all
    assert _enclosing_any_in_order(h, outer, inner) is not None  # the path under test
    assert _enclosing_any(h, outer, inner).tolist() == _brute(h, outer, inner)


def test_far_inner_events_equal_starts_and_unordered_lines_take_the_search(monkeypatch):
    rng = np.random.default_rng(11)
    calls = []
    real = context.Encloser

    def counted(*a, **k):  # noqa: ANN002, ANN003
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(context, "Encloser", counted)
    h = _table(rng, 400)
    outer = np.zeros(400, bool)
    outer[::50] = True
    inner = np.zeros(400, bool)
    inner[30::50] = True  # 30 positions after each outer event: past the tries
    assert _enclosing_any_in_order(h, outer, inner) is None
    assert _enclosing_any(h, outer, inner).tolist() == _brute(h, outer, inner) and len(calls) == 1
    tied = _table(rng, 400, ties=True)
    o, i = rng.random(400) < 0.4, rng.random(400) < 0.5
    assert _enclosing_any_in_order(tied, o, i) is None
    assert _enclosing_any(tied, o, i).tolist() == _brute(tied, o, i) and len(calls) == 2
    lines = _host(rng.integers(0, 3, 300).astype(np.int16), np.arange(300, dtype=np.int64), np.full(300, 5, np.int64))
    o, i = rng.random(300) < 0.4, rng.random(300) < 0.5
    assert _enclosing_any_in_order(lines, o, i) is None
    assert _enclosing_any(lines, o, i).tolist() == _brute(lines, o, i) and len(calls) == 3


def test_blocks_of_outer_events_join(monkeypatch):
    """Outer events taken a few at a time: each block's last one still looks up to the next block's first."""
    monkeypatch.setattr(context, "_CHUNK", 16)  # blocks of 4 outer events
    rng = np.random.default_rng(21)
    h = _table(rng, 400)
    outer = rng.random(400) < 0.35
    inner = rng.random(400) < 0.6
    inner[::6] = True
    assert _enclosing_any_in_order(h, outer, inner) is not None
    assert _enclosing_any(h, outer, inner).tolist() == _brute(h, outer, inner)
