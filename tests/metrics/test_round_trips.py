"""Round trips (issue #18 class 5): each copy back pairs with the nearest copy out before it, and copies of values
(under ``round_trip.min_bytes``) are no data leaving the GPU.  Truth by construction on plain event columns."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.metrics.memcpy import _trip_windows

US = 1_000_000  # ps


def _copies(rows):
    """rows: (start us, end us, 'out'|'in', bytes), all in step 0; returns device columns and the two masks."""
    start = np.array([r[0] * US for r in rows], np.int64)
    end = np.array([r[1] * US for r in rows], np.int64)
    d = SimpleNamespace(start=start, end=end, mem_bytes=np.array([r[3] for r in rows], np.int64))
    out = np.array([r[2] == "out" for r in rows])
    return d, np.zeros(len(rows), np.int16), out, ~out


def test_each_copy_back_pairs_with_the_nearest_copy_out():
    big = 1 << 20
    d, step, d2h, h2d = _copies([(100, 110, "out", big), (500, 510, "out", big), (900, 910, "in", big)])
    ws, we, steps = _trip_windows(d, step, d2h, h2d, np.array([2_000 * US]))
    assert ws.tolist() == [510 * US] and we.tolist() == [900 * US] and steps.tolist() == [0]


def test_values_and_small_constants_are_no_round_trip():
    small = int(T("round_trip.min_bytes")) - 1
    d, step, d2h, h2d = _copies([(100, 101, "out", 24), (3_000, 3_001, "in", 64), (4_000, 4_001, "in", small)])
    ws, _, _ = _trip_windows(d, step, d2h, h2d, np.array([9_000 * US]))
    assert ws.size == 0


def test_a_copy_in_after_the_last_kernel_is_the_next_batch():
    big = 1 << 20
    d, step, d2h, h2d = _copies([(100, 110, "out", big), (900, 910, "in", big)])
    ws, _, _ = _trip_windows(d, step, d2h, h2d, np.array([800 * US]))  # the step's last kernel starts before the copy
    assert ws.size == 0
