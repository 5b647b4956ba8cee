"""``metrics.breakdown._launch_waits`` reads launches and steps only at the GPU's idle gaps: the same intervals, in
the same dtypes, as the test over every pair of consecutive kernels it replaces -- both its launch waits and the
idle after the launch returned that the GPU held (h37-left14), which begins only once all the work the GPU ran
before the kernel was launched (h37-left41)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.metrics.breakdown import LAUNCH_START_PS, _launch_waits, launch_wait_end


def _every_pair(d, step, launch, lend_all, kern):  # noqa: ANN001
    """The former whole-column test of each pair (kernel i, kernel i + 1)."""
    k_end, k_start, k_step = d.end[kern], d.start[kern], step[kern]
    prev_end = np.maximum.accumulate(k_end)[:-1]
    has = (launch[kern][1:] >= 0) & (d.kind[kern][1:] == devices.KIND_KERNEL)
    lend = np.where(has, lend_all[kern][1:], 0) if lend_all is not None else np.zeros(k_start.size - 1, np.int64)
    if lend_all is not None:  # and the latest launch of any work that started before it (h37-left41), pair by pair
        handed = np.where(launch >= 0, np.minimum(lend_all, d.start), np.iinfo(np.int64).min)
        before = d.start[None, :] < k_start[1:, None]  # (kernel, event): the event started before the kernel
        later = np.where(before, handed[None, :], np.iinfo(np.int64).min).max(axis=1, initial=np.iinfo(np.int64).min)
        lend = np.maximum(lend, np.minimum(later, k_start[1:]))
    keep = has & (lend > prev_end) & (k_start[1:] > prev_end) & (k_step[1:] == k_step[:-1]) & (k_step[1:] >= 0)
    held_s = np.maximum(prev_end, lend + LAUNCH_START_PS)
    late = has & (k_start[1:] > held_s) & (k_step[1:] == k_step[:-1]) & (k_step[1:] >= 0)
    return (prev_end[keep], launch_wait_end(k_start[1:][keep], lend[keep])), (held_s[late], k_start[1:][late])


@pytest.mark.parametrize("seed", range(12))
def test_equal_to_every_pair(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 400))
    start = np.cumsum(rng.integers(-30, 60, n)).astype(np.int64)  # overlaps and gaps
    start.sort()
    end = start + rng.integers(0, 80, n)
    kinds = [devices.KIND_KERNEL, devices.KIND_COLLECTIVE, devices.KIND_H2D]
    kind = rng.choice(kinds if seed % 3 else kinds[:2], n).astype(np.int8)
    d = SimpleNamespace(start=start, end=end, kind=kind)
    step = np.repeat(np.arange(-1, 9), n // 10 + 1)[:n].astype(np.int16)  # -1: before the first kept step
    launch = np.where(rng.random(n) < 0.8, rng.integers(0, 1000, n), -1).astype(np.int32)
    lend_all = start - rng.integers(-50, 100, n)  # launch calls ending before or after the GPU drained
    compute = (kind == devices.KIND_KERNEL) | (kind == devices.KIND_COLLECTIVE)
    kern = slice(None) if compute.all() else np.nonzero(compute)[0]
    if (n if isinstance(kern, slice) else kern.size) > 1:
        for lends in (lend_all, lend_all - LAUNCH_START_PS, None):  # the shift: calls returning early, held idle
            got = _launch_waits(d, step, launch, lends, kern)
            want = _every_pair(d, step, launch, lends, kern)
            for part, ref in zip(got, want):
                assert [a.tolist() for a in part] == [a.tolist() for a in ref]
                assert [a.dtype for a in part] == [a.dtype for a in ref]
    if seed == 0:
        assert _launch_waits(d, step, launch, lend_all - LAUNCH_START_PS, kern)[1][0].size, "no held idle exercised"
        assert _launch_waits(d, step, launch, lend_all, kern)[0][0].size, "no launch wait: the case is not exercised"
