"""The step timeline's pure parts (``report.timeline``, ``metrics.breakdown.painted_segments``): the painting agrees
with the breakdown's sums, the bound is exact, nested calls stack in rows.  The served route, on real traces, is
``tests/serve/test_plugin_window.py``."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tb_gpu_advisor.metrics.breakdown import PRIORITY, attribute, painted_segments
from tb_gpu_advisor.metrics.types import BREAKDOWN_CATEGORIES
from tb_gpu_advisor.report import timeline


def _random_intervals(rng: np.random.Generator, n: int = 40) -> dict:
    out = {}
    for c in PRIORITY:
        s = rng.integers(0, 10_000, n)
        out[c] = (s.astype(np.int64), (s + rng.integers(1, 800, n)).astype(np.int64))
    return out


@pytest.mark.parametrize("seed", range(5))
def test_painted_segments_sum_to_the_breakdowns_attribution(seed):
    """Per category, the runs' lengths are exactly what ``attribute`` counts for that window: the timeline
    highlights the time the report's numbers are made of."""
    rng = np.random.default_rng(seed)
    iv = _random_intervals(rng)
    lo, hi = 1_000, 9_000
    starts, ends, cats = painted_segments(iv, lo, hi)
    assert starts[0] == lo and ends[-1] == hi and (starts[1:] == ends[:-1]).all()  # tiles the window
    assert all(a != b for a, b in itertools.pairwise(cats))  # adjacent runs of one category are merged
    want = attribute(iv, np.array([[lo, hi]], dtype=np.int64))[0]
    for j, c in enumerate(BREAKDOWN_CATEGORIES):
        got = sum(int(e - s) for s, e, k in zip(starts, ends, cats) if k == c)
        assert got == pytest.approx(want[j]), c


def test_painted_segments_of_an_empty_window():
    s, e, c = painted_segments({k: (np.zeros(0, np.int64),) * 2 for k in PRIORITY}, 5, 5)
    assert (s.size, e.size, c) == (0, 0, [])


def _lane(starts, ends, kind="host") -> timeline._Lane:
    n = len(starts)
    return timeline._Lane(kind, "thread", None, np.array(starts, np.int64), np.array(ends, np.int64),
                          [f"e{i}" for i in range(n)], ["host"] * n)


def test_the_bound_is_exact_even_when_durations_tie():
    lanes = [_lane(range(0, 3000, 10), range(5, 3005, 10)), _lane([0, 100], [2000, 150])]
    keep, shortest = timeline._kept(lanes, 50)
    assert sum(int(k.sum()) for k in keep) == 50
    assert keep[1].all() and shortest == 5  # both longer calls are kept; the 5-ps ties go by start
    assert np.flatnonzero(keep[0]).tolist() == list(range(48))
    keep, shortest = timeline._kept(lanes, 10_000)
    assert all(k.all() for k in keep) and shortest == 0


def test_every_lane_keeps_a_share_so_short_kernels_are_not_crowded_out_by_long_host_calls():
    host = _lane(range(0, 100_000, 100), range(90, 100_090, 100))  # 1000 calls of 90 ps
    gpu = _lane(range(0, 1000, 10), range(2, 1002, 10), kind="gpu")  # 100 kernels of 2 ps
    tiny = _lane([0, 5], [1, 6])
    assert timeline._quotas([1000, 100, 2], 60) == [29, 29, 2]
    assert timeline._quotas([1000, 10, 2], 60) == [48, 10, 2]
    assert timeline._quotas([7, 7, 7], 10) == [3, 3, 4]  # the whole budget, never more
    keep, shortest = timeline._kept([host, gpu, tiny], 60)
    assert [int(k.sum()) for k in keep] == [29, 29, 2]
    assert shortest == 2


def test_nested_calls_stack_in_rows_and_deep_ones_are_counted():
    depth = timeline.MAX_ROWS + 2
    lane = _lane([i for i in range(depth)] + [50], [100 - i for i in range(depth)] + [60])
    drawn, deep = timeline._lane_json(lane, np.ones(depth + 1, bool), origin=0)
    rows = {e[2]: e[4] for e in drawn["events"]}
    assert [rows[f"e{i}"] for i in range(timeline.MAX_ROWS)] == list(range(timeline.MAX_ROWS))
    assert deep == depth - timeline.MAX_ROWS + 1  # the two deepest, and the one nested under them all
    assert drawn["rows"] == timeline.MAX_ROWS
    flat, deep = timeline._lane_json(_lane([0, 10, 20], [10, 20, 30]), np.ones(3, bool), origin=0)
    assert deep == 0 and flat["rows"] == 1  # back-to-back events share a row


def test_the_note_says_what_was_left_out():
    assert timeline._bound_note(10, 10, (0, 0), 0, 0) == ""
    note = timeline._bound_note(9000, 5000, (3990, 2_500_000), 10, 3)
    assert note.startswith("5000 of 9000 events shown")
    assert "3990 shortest of the busiest lanes" in note and "lasts 2.5 us" in note and "10 events nested deeper" in note and "3 host threads" in note
