"""Round trips (issue #18 class 5): each copy back pairs with the nearest copy out before it, and copies of values
(under ``round_trip.min_bytes``) are no data leaving the GPU.  Truth by construction on plain event columns."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.metrics.trips import _trip_windows

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


@pytest.mark.parametrize("limit", [0, 1, 5, 9, 10_000])
def test_memcpy_rows_limited_are_the_first_rows(tmp_path, limit):
    """``max_rows`` makes only the first rows: the same rows as cutting the full list, and the same per-direction
    stats.  Truth: the full list itself, on a multi-GPU capture with copies of several directions in every step."""
    from tb_gpu_advisor import frameworks
    from tb_gpu_advisor.job import detect_job
    from tb_gpu_advisor.metrics.context import build_context
    from tb_gpu_advisor.metrics.memcpy import memcpy_stats
    from tb_gpu_advisor.model.columns import index_dtype
    from tb_gpu_advisor.model.trace import device_launches
    from tb_gpu_advisor.steps.detect import detect_steps

    scenarios = pytest.importorskip("synthetic.scenarios")
    from tb_gpu_advisor.formats.xplane.adapter import read_trace

    sc = scenarios.SCENARIOS["input_bound"]()
    (host, data), = list(sc.encode().items())[:1]
    p = tmp_path / f"{host}.xplane.pb"
    p.write_bytes(data)
    trace = read_trace(str(p))
    launches = device_launches(trace.h, trace.devices, index_dtype(len(trace.h)))
    job = detect_job(trace, launches, frameworks.detect_trace(trace))
    ctx = build_context(trace, detect_steps(trace, launches, job), launches, frameworks.detect_trace(trace), job=job)
    exposed = {"memcpy_h2d": 1.0, "memcpy_d2h": 1.0, "memcpy_d2d": 1.0}
    full_stats, full_rows = memcpy_stats(ctx, exposed)
    stats, rows = memcpy_stats(ctx, exposed, max_rows=limit)
    assert len(full_rows) > 5  # the capture has rows to cut
    assert rows == full_rows[:limit]
    assert stats == full_stats
