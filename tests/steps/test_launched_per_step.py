"""``steps.place._launched_per_step`` (the asynchronous-dispatch windows' per-step first kernel, first event and last
end) against its definition, one device event at a time: with every event launched inside a step (the whole columns
read as they are, issue #38) and with events launched outside every step, not launched at all, or copies."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.steps import place


def _by_definition(hs, he, h, d, launch):
    big, small = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    first_k, first_any, last = [big] * hs.size, [big] * hs.size, [small] * hs.size
    for i in range(launch.size):
        if launch[i] < 0:
            continue
        t = int(h.start[launch[i]])
        inside = [k for k in range(hs.size) if hs[k] <= t < he[k]]
        if not inside:
            continue
        k = inside[-1]  # the last window starting at or before the launch
        first_any[k] = min(first_any[k], int(d.start[i]))
        last[k] = max(last[k], int(d.end[i]))
        if d.kind[i] in (devices.KIND_KERNEL, devices.KIND_COLLECTIVE):
            first_k[k] = min(first_k[k], int(d.start[i]))
    return first_k, first_any, last


@pytest.mark.parametrize("every", [True, False], ids=["all-launched-in-steps", "some-not"])
def test_the_definition(every):
    rng = np.random.default_rng(38 + every)
    for _ in range(100):
        n_steps, n_host, n_dev = int(rng.integers(1, 6)), int(rng.integers(1, 50)), int(rng.integers(0, 60))
        hs = np.sort(rng.choice(np.arange(0, 1000, 10), n_steps, replace=False)).astype(np.int64)
        he = np.r_[hs[1:], hs[-1] + 100]
        lo, hi = (int(hs[0]), int(he[-1])) if every else (0, 1200)
        h = SimpleNamespace(start=np.sort(rng.integers(lo, hi, n_host)).astype(np.int64))
        launch = np.sort(rng.integers(0 if every else -1, n_host, n_dev)).astype(np.int64)
        start = np.sort(rng.integers(0, 2000, n_dev)).astype(np.int64)
        kinds = [devices.KIND_KERNEL] if every else [devices.KIND_KERNEL, devices.KIND_COLLECTIVE, devices.KIND_H2D]
        d = SimpleNamespace(start=start, end=start + rng.integers(0, 50, n_dev), kind=rng.choice(kinds, n_dev).astype(np.int8))
        got = place._launched_per_step(hs, he, h, d, launch)
        assert [a.tolist() for a in got] == list(_by_definition(hs, he, h, d, launch))
