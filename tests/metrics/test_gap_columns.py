"""metrics.breakdown: the gaps between steps as columns give the summary the per-gap rows gave.

Truth by construction: random gaps (none, one, more than the 50 rows kept, categories never booked, zero and
negative bookings, several GPUs) summarised by ``summarize_gaps`` and by the row-by-row summary it replaced, kept
here as the reference.  Equal means the same floats, bit for bit, and the same key order.
"""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor.metrics.breakdown import HOST_IDLE, GapColumns, summarize_gaps
from tb_gpu_advisor.metrics.types import Breakdown, Gaps, StepGap


def _rows_reference(c: GapColumns) -> list[StepGap]:
    """Every gap of ``c`` as the row ``step_gaps`` used to return."""
    booked = [{k: v for k, v in zip(HOST_IDLE, row) if v > 0} for row in c.booked_ms.tolist()]
    return [StepGap(after_step=s, gpu=c.gpu, gap_ms=gp, input_wait_ms=i_, launch_ms=l_, host_other_ms=h_,
                    unexplained_ms=float(max(0.0, gp - i_ - l_ - h_)), booked_ms=bk, cycle_ms=cy)
            for s, gp, i_, l_, h_, bk, cy in zip(c.after_step.tolist(), c.gap_ms.tolist(), c.input_wait_ms.tolist(),
                                                 c.launch_ms.tolist(), c.host_other_ms.tolist(), booked,
                                                 c.cycle_ms.tolist())]


def _summary_reference(gaps: list[StepGap], ledger: Breakdown | None) -> Gaps:
    """The row-by-row summary (Python sums over StepGap objects) that summarize_gaps replaced."""
    if not gaps:
        return Gaps(0, None, None, None, None, None, None, [])
    k = len(gaps)
    avg = sum(x.gap_ms for x in gaps) / k
    booked: dict[str, float] = {}
    if ledger is not None:
        for x in gaps:
            for c, v in x.booked_ms.items():
                booked[c] = booked.get(c, 0.0) + v / k
        booked = {c: min(v, float(getattr(ledger, c))) for c, v in booked.items()}
    cycle = sum(x.cycle_ms for x in gaps) / k
    return Gaps(count=k, avg_gap_ms=avg, max_gap_ms=max(x.gap_ms for x in gaps),
                share_of_step=(avg / cycle) if cycle > 0 else None, avg_cycle_ms=cycle if cycle > 0 else None,
                avg_input_wait_ms=sum(x.input_wait_ms for x in gaps) / k, avg_launch_ms=sum(x.launch_ms for x in gaps) / k,
                avg_host_other_ms=sum(x.host_other_ms for x in gaps) / k, gaps=gaps[:50], ledger_ms_per_step=booked)


def _random_gpu(rng: np.random.Generator, gpu: int, n: int) -> GapColumns:
    """``n`` random gaps of one GPU; bookings sparse (most categories zero), some negative, some tiny."""
    gap = rng.random(n) * rng.choice([1e-6, 1.0, 1e3])
    part = rng.random((n, 3)) * gap[:, None] / 3
    booked = rng.random((n, len(HOST_IDLE))) * rng.choice([1e-9, 1.0])
    booked[rng.random(booked.shape) < 0.7] = 0.0
    booked[rng.random(booked.shape) < 0.05] *= -1.0
    return GapColumns(gpu=gpu, after_step=np.sort(rng.integers(0, 10 * n + 1, n)), gap_ms=gap,
                      input_wait_ms=part[:, 0], launch_ms=part[:, 1], host_other_ms=part[:, 2],
                      booked_ms=booked, cycle_ms=gap + rng.random(n) * rng.choice([0.0, 5.0]))


@pytest.mark.parametrize("seed", range(30))
def test_summarize_gaps_equals_the_row_by_row_summary(seed):
    rng = np.random.default_rng(seed)
    cols: list[GapColumns | None] = []
    for gpu in range(int(rng.integers(0, 5))):
        n = int(rng.choice([0, 1, 2, 7, 49, 50, 51, 300]))
        cols.append(None if n == 0 and seed % 2 else _random_gpu(rng, gpu, n))
    ledger = None if seed % 3 == 0 else Breakdown(**{c: float(rng.random()) * 1e-3 for c in HOST_IDLE})
    rows = [r for c in cols if c is not None for r in _rows_reference(c)]
    got = summarize_gaps(cols, 10.0, ledger)
    want = _summary_reference(rows, ledger)
    assert got == want
    assert list(got.ledger_ms_per_step) == list(want.ledger_ms_per_step)  # the order the report writes them in


def test_no_gaps_at_all():
    """No GPU, or GPUs without gaps: the empty summary."""
    assert summarize_gaps([], None) == _summary_reference([], None)
    assert summarize_gaps([None, _random_gpu(np.random.default_rng(0), 1, 0)], 5.0, Breakdown()) == \
        _summary_reference([], Breakdown())
