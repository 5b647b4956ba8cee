"""Unnumbered step ranges of several lines (ranks) are numbered by the step each line's first range ran beside
(``steps.ranges._first_step_beside``; h37-probe46r, h37-review45 *Left* 2).

By construction: each line's range starts, a 10 ms period, the first line opened first.  Truth: a line opened k steps
late starts at step k; a line a part of a step behind -- nearer the first line's next step -- and marking as many
steps as the first opened with it (step 0), and with a late opening as well it starts at the late step.  Main
b3e5562e numbered every line from 0."""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor.steps.ranges import _first_step_beside

P = 10_000_000  # ns


def _starts(n: int, first: int = 0, lag: float = 0.0) -> np.ndarray:
    return (np.arange(first, first + n) * P + int(lag * P)).astype(np.int64)


@pytest.mark.parametrize(("late", "lag", "want"), [(2, 0.0, 2), (3, 0.1, 3), (0, 0.6, 0), (2, 0.6, 2), (0, 0.3, 0)])
def test_a_lines_first_step_is_the_one_it_ran_beside(late: int, lag: float, want: int) -> None:
    ref = _starts(12)
    assert _first_step_beside(ref, _starts(12 - late, late, lag)) == want

