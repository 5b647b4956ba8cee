"""``metrics.context._starts_up_to``: ``np.searchsorted(starts, t, side="right")`` by merging where the times come in
sorted runs (a chunk of host events: a few threads' events, each by start) -- the step assignment's and the op
encloser's search.  Checked against numpy on sorted, run-wise sorted and unsorted times, ties with the starts, times
before and after every start, and few or no starts."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.metrics.context import _starts_up_to


def test_same_as_searchsorted_right():
    rng = np.random.default_rng(36)
    for _ in range(2000):
        starts = np.sort(rng.integers(0, 1000, int(rng.integers(0, 300))))
        n = int(rng.integers(0, 600))
        t = rng.integers(-50, 1100, n)
        if rng.random() < 0.3:  # ties: times equal to starts
            t[: n // 3] = rng.choice(starts, n // 3) if starts.size else t[: n // 3]
        if rng.random() < 0.7:  # sorted runs
            cuts = sorted(rng.integers(0, n + 1, int(rng.integers(0, 4))).tolist())
            for a, b in zip([0, *cuts], [*cuts, n]):
                t[a:b].sort()
        assert np.array_equal(_starts_up_to(starts, t), np.searchsorted(starts, t, side="right"))
