"""``rules.base.pick_steps`` ranks step rows on their columns (issue #38): the same rows, in the same order, as ranking
the StepMetrics objects with a stable sort -- ties included -- which is what the reports showed before."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tb_gpu_advisor.metrics.breakdown import StepArrays
from tb_gpu_advisor.metrics.types import BREAKDOWN_CATEGORIES, StepTable
from tb_gpu_advisor.rules.base import _column_key, _top_n, pick_steps, step_windows

#: the keys the rules rank by (rules/*.py ``step_windows(..., key=...)``), None: the first rows
KEYS = {
    "first rows": None,
    "one category": lambda s: s.breakdown.launch_wait,
    "two categories": lambda s: s.breakdown.launch_wait + s.breakdown.other,
    "three categories": lambda s: s.breakdown.memcpy_h2d + s.breakdown.memcpy_d2h + s.breakdown.memcpy_d2d,
    "step time": lambda s: s.step_ms,
}


def _arrays(gpu: int | None, n: int, rng: np.random.Generator) -> StepArrays:
    """Columns whose values come from a few levels, so that many rows tie (and sums of them tie too)."""

    def levels(*shape: int) -> np.ndarray:
        return rng.integers(0, 4, shape) * 0.25 + (rng.random(shape) < 0.1) * 0.1

    return StepArrays(gpu=gpu, step=np.arange(n, dtype=np.int64), start_ms=rng.integers(0, 3 * n + 1, n) * 0.5,
                      step_ms=levels(n), mat=levels(n, len(BREAKDOWN_CATEGORIES)), busy=levels(n),
                      kernels=rng.integers(0, 9, n), collectives=rng.integers(0, 3, n), memcpys=rng.integers(0, 3, n),
                      first_kernel_ms=levels(n), first_launch_ms=levels(n))


def _old_pick(rows: list, key, n: int) -> list:
    """The object-based pick ``step_windows`` made before the columns: a stable sort of every row."""
    return sorted(rows, key=lambda s: -key(s))[:n] if key else rows[:n]


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("name", list(KEYS))
def test_column_pick_is_the_object_pick_ties_included(seed: int, name: str) -> None:
    rng = np.random.default_rng(seed)
    key = KEYS[name]
    blocks = [_arrays(g, int(rng.integers(1, 60)), rng) for g in (0, 1, None)]
    table = StepTable(blocks)
    for gpu in (None, 1):
        rows = table.of_gpu(gpu)
        if key is not None:  # the ranking ran on the columns, not through the fallback over the objects
            assert _column_key(table, gpu, key) is not None
        for n in (1, 2, 3, len(rows) - 1, len(rows), len(rows) + 2):
            assert pick_steps(table, gpu, key, n) == _old_pick(rows, key, n), (gpu, n)


def test_top_n_breaks_ties_by_row_order() -> None:
    k = np.array([1.0, 3.0, 2.0, 3.0, 2.0, 2.0, 0.0, 3.0])
    assert _top_n(k, 4).tolist() == [1, 3, 7, 2]
    assert _top_n(k, 5).tolist() == [1, 3, 7, 2, 4]
    assert _top_n(-np.zeros(4), 2).tolist() == [0, 1]


def test_a_key_the_columns_cannot_run_falls_back_to_the_rows() -> None:
    rng = np.random.default_rng(7)
    table = StepTable([_arrays(None, 30, rng)])
    rows = table.of_gpu(None)
    key = lambda s: max(s.breakdown.other, s.breakdown.launch_wait)  # noqa: E731  (not arithmetic on columns)
    assert _column_key(table, None, key) is None
    assert pick_steps(table, None, key, 3) == _old_pick(rows, key, 3)
    assert pick_steps(rows, None, key, 3) == _old_pick(rows, key, 3)  # a plain list of rows


@pytest.mark.parametrize("seed", range(10))
def test_windows_from_columns_are_the_windows_from_row_objects(seed: int) -> None:
    """The whole ``step_windows`` (labels, spans, order by start) from a column table and from the same rows as a
    list, which takes the object path."""
    rng = np.random.default_rng(seed)
    blocks = [_arrays(g, 25, rng) for g in (0, None)]
    spans = [SimpleNamespace(step=i, start_ms=float(i), end_ms=i + 0.5) for i in range(0, 25, 2)]

    def ctx(detail):
        return SimpleNamespace(host="h", m=SimpleNamespace(steps_detail=detail, steps=SimpleNamespace(windows=spans)),
                               step_name=lambda step: f"step {step}")  # a marked job's windows: "step N"

    cols, objs = StepTable(blocks), [r for b in blocks for r in b.rows()]
    for key in KEYS.values():
        for gpu in (None, 0):
            assert step_windows(ctx(cols), key, "x", 3, gpu) == step_windows(ctx(objs), key, "x", 3, gpu)
