"""``metrics.breakdown._idle_before`` reads launches and steps only at the GPU's idle gaps: the same intervals as a
plain loop over every work and every step (the reference below) -- its launch waits, the idle after the launch
returned that the GPU held (h37-left14), which begins where everything the GPU ran before the work ended (h37-left41,
h37-left44), and the idle before each step's first work (h37-left26)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.metrics.breakdown import LAUNCH_START_PS, _idle_before, launch_wait_end

LOW = np.iinfo(np.int64).min


def _every_work(d, step, launch, lend_all, windows):  # noqa: ANN001
    """The idle before each work, one work (and one step) at a time."""
    lw, held, lead, first = ([], []), ([], [], []), ([], [], []), ([], [])
    seen: set[int] = set()
    for i in range(len(d.start)):
        ok = launch[i] >= 0 and d.kind[i] != devices.KIND_COLLECTIVE and step[i] >= 0
        before = int(d.end[:i].max()) if i else LOW
        lend = int(lend_all[i]) if lend_all is not None else 0
        start = int(d.start[i])
        if ok and i and step[i] == step[i - 1] and start > before:
            if lend > before:
                lw[0].append(before)
                lw[1].append(int(launch_wait_end(np.int64(start), np.int64(lend))) if lend_all is not None else start)
            hs = max(before, lend + LAUNCH_START_PS)
            if lend_all is not None and start > hs:
                held[0].append(hs)
                held[1].append(start)
                held[2].append(i)
        if ok and int(step[i]) not in seen:
            seen.add(int(step[i]))
            if lend_all is not None and (i == 0 or step[i - 1] != step[i]):
                hs = max(before, int(windows[step[i], 0]), lend + LAUNCH_START_PS)
                if start > hs:
                    part = first if i == 0 else lead
                    part[0].append(hs)
                    part[1].append(start)
                    if i:
                        lead[2].append(i)
    return lw, held, lead, first


@pytest.mark.parametrize("seed", range(12))
def test_equal_to_every_work(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 400))
    start = np.cumsum(rng.integers(-30, 60, n)).astype(np.int64)  # overlaps and gaps
    start.sort()
    end = start + rng.integers(0, 80, n)
    kinds = [devices.KIND_KERNEL, devices.KIND_COLLECTIVE, devices.KIND_H2D]
    kind = rng.choice(kinds if seed % 3 else kinds[:2], n).astype(np.int8)
    d = SimpleNamespace(start=start, end=end, kind=kind)
    step = np.repeat(np.arange(-1, 9), n // 10 + 1)[:n].astype(np.int16)  # -1: before the first kept step
    windows = np.stack([np.full(9, start.min()), np.full(9, end.max())], axis=1)
    for s in range(9):
        mine = start[step == s]
        if mine.size:
            windows[s, 0] = mine.min() - int(rng.integers(0, 40))
    launch = np.where(rng.random(n) < 0.8, rng.integers(0, 1000, n), -1).astype(np.int32)
    lend_all = start - rng.integers(-50, 100, n)  # launch calls ending before or after the GPU drained
    for lends in (lend_all, lend_all - LAUNCH_START_PS, None):  # the shift: calls returning early, held idle
        got = _idle_before(d, step, launch, lends, windows)
        want = _every_work(d, step, launch, lends, windows)
        for part, ref in zip(got, want):
            assert [a.tolist() for a in part] == [list(a) for a in ref]
    if seed == 0:
        assert _idle_before(d, step, launch, lend_all - LAUNCH_START_PS, windows)[1][0].size, "no held idle exercised"
        assert _idle_before(d, step, launch, lend_all, windows)[0][0].size, "no launch wait: the case is not exercised"
