"""Underfill's small launches read their durations from the kernel modules' shared in-step durations
(``GpuCtx.kernels_in_steps``) instead of the time columns: the same groups and exact sums, over one block and many."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from tb_gpu_advisor.metrics import underfill


def test_shared_durations_give_the_columns_sums() -> None:
    rng = np.random.default_rng(38)
    for _ in range(60):
        n = int(rng.integers(1, 400))
        n_cfg = int(rng.integers(1, 6))
        start = rng.integers(0, 10**9, n).astype(np.int64)
        d = SimpleNamespace(name=rng.integers(0, 9, n).astype(np.int32), start=start,
                            end=start + rng.integers(-2, 10**9, n), launch_cfg=rng.integers(-1, n_cfg, n).astype(np.int32))
        in_step = rng.random(n) < 0.85
        dur = d.end[in_step] - d.start[in_step]  # what kernels_in_steps hands out: durations of its mask's events
        recorded = in_step & (d.launch_cfg >= 0)
        small_cfg = np.append(rng.random(n_cfg) < 0.6, False)
        for block in (7, 1 << 18):
            want = underfill._small_launches(d, recorded, small_cfg, 10**8, block=block)
            got = underfill._small_launches(d, recorded, small_cfg, 10**8, block=block, kernels=(in_step, dur))
            assert got == want
        assert np.array_equal(dur, d.end[in_step] - d.start[in_step])  # the shared durations are left as they were
