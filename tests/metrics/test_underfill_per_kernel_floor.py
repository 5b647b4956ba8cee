"""Underfill's idle-SM bound is each kernel's own least of its grid bound and its time above its floor, summed
(issue #37, h37-pool37).

Why: h37-pool36 took, per (name, grid) group, the least of the group's grid bound and the group's time above its
floor.  A group mixing kernels at their floor with kernels far above it was judged on the sums, so the far kernels
lent their headroom to the ones at the floor: no grid speeds a kernel below its own floor, whatever its neighbours do.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.metrics import underfill
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report


def _two_kernels(shares: list[float]) -> SimpleNamespace:
    """One kernel name, one launch configuration, two 100-unit launches back to back."""
    start = np.array([0, 200], np.int64)
    return SimpleNamespace(name=np.zeros(2, np.int32), start=start, end=start + 100,
                           launch_cfg=np.zeros(2, np.int32), shares=np.array(shares, np.float64))


def test_a_kernel_at_its_floor_borrows_no_headroom_from_its_group():
    """Truth by construction: one kernel at its floor (share 0), one with all its time above (share 1), a grid that
    leaves half the SMs idle.  The group's sums gave min(200 x 0.5, 0 + 100) = 100; per kernel it is min(50, 0) +
    min(50, 100) = 50.  main had no per-kernel sum (``idle_share``: TypeError)."""
    d = _two_kernels([0.0, 1.0])
    recorded = np.ones(2, bool)
    got = underfill._small_launches(d, recorded, np.array([True, False]), 0, above_floor=d.shares,
                                    idle_share=np.array([0.5, 0.0]))
    (count, dur, above, unfloored, own), = got.values()
    assert (count, dur, above, unfloored) == (2, 200, 200, 100)
    assert own == 50


@pytest.mark.parametrize("seed", range(5))
def test_the_bound_is_the_sum_of_each_kernels_minimum(seed):
    """Random launches: the 5th sum is, group by group, the sum over its kernels of min(time above ``floor_ps`` x the
    configuration's idle share, time x its share above its floor) -- by definition, one kernel at a time."""
    rng = np.random.default_rng(seed)
    n, n_cfg = 300, 4
    start = rng.integers(0, 10**6, n).astype(np.int64)
    d = SimpleNamespace(name=rng.integers(0, 5, n).astype(np.int32), start=start,
                        end=start + rng.integers(0, 10**4, n), launch_cfg=rng.integers(0, n_cfg, n).astype(np.int32))
    recorded = rng.random(n) < 0.8
    small = np.append(rng.random(n_cfg) < 0.7, False)
    idle = np.append(rng.random(n_cfg), 0.0)
    af = rng.random(n)
    floor_ps = 2_000
    got = underfill._small_launches(d, recorded, small, floor_ps, block=37, above_floor=af, idle_share=idle)
    want: dict[tuple[int, int], int] = {}
    for i in np.flatnonzero(recorded & small[d.launch_cfg]):
        dur = int(d.end[i] - d.start[i])
        c = int(d.launch_cfg[i])
        own = min(int(np.rint(max(0, dur - floor_ps) * idle[c])), int(np.rint(dur * af[i])))
        key = (int(d.name[i]), c)
        want[key] = want.get(key, 0) + own
    assert {k: v[4] for k, v in got.items()} == want
    assert all(v[4] <= min(v[2] * idle[k[1]], v[3]) + v[0] for k, v in got.items())  # the group's bound, +rounding


def test_dlrm_small_grid_bound_is_per_kernel():
    """DLRM on an A100 (record_shapes): its cutlass groups mix kernels near and far from their floor.  main (group
    sums): idle-SM bound 1.429 ms, saving 1.315 ms/step; per kernel: 1.405 ms, 1.294 ms/step."""
    (s,) = [s for s in discover(str(FIXTURES / "wild" / "dlrm_a100_alltoall"))]
    (h,) = [h for h in session_report(s).hosts if h.error is None]
    (f,) = [f for f in h.findings if f.rule == "small_grid"]
    d = f.metric.detail
    assert d["idle_sm_bound_ms_per_step"] < 1.42  # main: 1.4288, the groups' min of sums
    assert d["idle_sm_bound_ms_per_step"] <= d["above_floor_ms_per_step"]
    assert f.saving.ms_per_step < 1.31  # main: 1.315
