"""``GpuCtx.kernels_in_steps``: the per-GPU kernel rows that five metrics modules share, made once.

Truth by construction: the answer must be what each module computed for itself before -- the mask
``(step >= 0) & (kind == KIND_KERNEL)`` and ``end[mask] - start[mask]`` -- on random GPUs and on the edges (no
events, one, no kernel, no kept step), and a memoised answer must never outlive the columns it was read from.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.metrics.context import GpuCtx

KINDS = np.array([devices.KIND_KERNEL, devices.KIND_COLLECTIVE, devices.KIND_H2D, devices.KIND_D2H, devices.KIND_D2D,
                  devices.KIND_OTHER_COPY, devices.KIND_MEMSET])


@dataclass
class _Device:
    """The columns ``kernels_in_steps`` reads of a ``DeviceEvents``."""

    start: np.ndarray
    end: np.ndarray
    kind: np.ndarray

    def __len__(self) -> int:
        return int(self.start.shape[0])


def _gpu(rng: np.random.Generator, n: int, kinds: np.ndarray = KINDS, steps: int = 5, dtype=np.int64) -> GpuCtx:
    start = np.sort(rng.integers(0, 10**12, n)).astype(dtype)
    end = (start + rng.integers(0, 10**7, n)).astype(dtype)
    kind = rng.choice(kinds, n).astype(np.int8)
    g = GpuCtx(d=_Device(start, end, kind), launch=np.full(n, -1), step=np.zeros(0, np.int16), windows=np.zeros((0, 2)),
               active=True)
    g.step = rng.integers(-1, steps, n).astype(np.int16)
    return g


def _reference(g: GpuCtx) -> tuple[np.ndarray, np.ndarray]:
    m = (g.step >= 0) & (g.d.kind == devices.KIND_KERNEL)
    return m, g.d.end[m] - g.d.start[m]


def _assert_same(g: GpuCtx) -> None:
    m, dur = g.kernels_in_steps()
    ref_m, ref_dur = _reference(g)
    assert m.dtype == bool
    np.testing.assert_array_equal(m, ref_m)
    assert dur.dtype == ref_dur.dtype
    np.testing.assert_array_equal(dur, ref_dur)


@pytest.mark.parametrize("seed", range(30))
def test_equals_the_mask_and_gathers_each_module_made(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.choice([0, 1, 2, 7, int(rng.integers(3, 3000))]))
    kinds = KINDS if seed % 5 else KINDS[1:]  # every fifth GPU runs no compute kernel at all
    steps = 0 if seed % 7 == 3 else 5  # no kept step: every event outside (-1)
    _assert_same(_gpu(rng, n, kinds, steps, np.int64 if seed % 2 else np.uint64))


def test_made_once_and_remade_when_a_column_changes():
    rng = np.random.default_rng(1)
    g = _gpu(rng, 500)
    first = g.kernels_in_steps()
    again = g.kernels_in_steps()
    assert again[0] is first[0] and again[1] is first[1]  # memoised: not made twice
    g.step = rng.integers(-1, 5, 500).astype(np.int16)  # the step column reassigned (build_context does this)
    _assert_same(g)
    assert g.kernels_in_steps()[0] is not first[0]
    g.d.end = g.d.end + 5  # a time column replaced
    _assert_same(g)
    g.d.kind = rng.choice(KINDS, 500).astype(np.int8)
    _assert_same(g)
    g.d.start = g.d.start - 3
    _assert_same(g)


def test_forgotten_answers_are_made_again_equal():
    rng = np.random.default_rng(2)
    g = _gpu(rng, 300)
    first = g.kernels_in_steps()
    g.forget_kernels()  # compute_host_metrics drops the durations after the last module that reads them
    assert g._kernels is None
    again = g.kernels_in_steps()
    assert again[1] is not first[1]
    _assert_same(g)
