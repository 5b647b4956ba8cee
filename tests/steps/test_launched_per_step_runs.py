"""``steps.place._launched_per_step`` places the host steps' bounds among the launch times (rising runs, one per
launching thread) instead of searching each launch: the same first starts and last ends per step as the search."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.model.columns import reduce_at
from tb_gpu_advisor.steps.place import _launched_per_step


def _searched(hs, he, h, d, launch):  # noqa: ANN001
    """The search per launch: the last step starting at or before it, if it has not ended."""
    n = hs.size
    big, small = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    first_k, first_any, last = np.full(n, big, np.int64), np.full(n, big, np.int64), np.full(n, small, np.int64)
    m = np.flatnonzero(launch >= 0)
    t = h.start[launch[m]]
    k = np.searchsorted(hs, t, side="right") - 1
    ok = (k >= 0) & (t < he[np.clip(k, 0, None)])
    m, k = m[ok], k[ok]
    reduce_at(np.minimum, first_any, k, d.start[m])
    reduce_at(np.maximum, last, k, d.end[m])
    kern = (d.kind[m] == devices.KIND_KERNEL) | (d.kind[m] == devices.KIND_COLLECTIVE)
    reduce_at(np.minimum, first_k, k[kern], d.start[m][kern])
    return first_k, first_any, last


@pytest.mark.parametrize("overlapping", [False, True])
@pytest.mark.parametrize("seed", range(5))
def test_equal_to_the_search(seed, overlapping):
    rng = np.random.default_rng(seed)
    n_host = 30_000
    line_len = n_host // 3  # three launching threads, each by start: three rising runs
    h_start = np.concatenate([np.sort(rng.integers(0, 10**6, line_len)) for _ in range(3)]).astype(np.int64)
    h = SimpleNamespace(start=h_start)
    bounds = np.sort(rng.choice(10**6, 80, replace=False)).astype(np.int64)
    hs, he = bounds[0::2].copy(), bounds[1::2].copy()
    he[::7] = hs[1::7][: he[::7].size] if not overlapping else he[::7]  # some steps end where the next begins
    if overlapping:
        he[3] = hs[5] + 10  # a step running into a later one: the search's answer
    n_dev = 12_000
    launch = np.where(rng.random(n_dev) < 0.9, rng.integers(0, n_host, n_dev), -1).astype(np.int32)
    launch[launch >= 0] = np.sort(launch[launch >= 0])  # events by start, launched in host order (per thread)
    d_start = np.sort(rng.integers(0, 10**6, n_dev)).astype(np.int64)
    kinds = [devices.KIND_KERNEL, devices.KIND_H2D, devices.KIND_COLLECTIVE]
    d = SimpleNamespace(start=d_start, end=d_start + rng.integers(0, 500, n_dev),
                        kind=rng.choice(kinds, n_dev).astype(np.int8))
    got = _launched_per_step(hs, he, h, d, launch)
    want = _searched(hs, he, h, d, launch)
    for a, b in zip(got, want):
        assert a.tolist() == b.tolist()
    assert (got[1] < np.iinfo(np.int64).max).sum() > 10  # steps that launched work: the case is exercised
