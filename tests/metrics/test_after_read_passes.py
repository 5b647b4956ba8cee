"""Faster passes of the analysis after the read (issue #38 deliverable 4) against the definitions they replace.

Each pass groups, counts or remembers what a slower form computed again; each is checked here against that form
written plainly (a Python loop over the rows or events), on random inputs with the edge cases the fast paths branch
on (ids spread too wide to count, sums too large for float64, a GPU whose rows come in two runs, a name column
replaced after the answer was kept)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.metrics import breakdown, context, flops, underfill
from tb_gpu_advisor.metrics.context import Context
from tb_gpu_advisor.metrics.job import _steps_by_gpu
from tb_gpu_advisor.model.schema import StepRow
from tb_gpu_advisor.model.steprows import StepRowTable

CATS = ("device_compute", "collectives", "other")


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_distinct_ids_is_np_unique(dtype):
    rng = np.random.default_rng(38)
    info = np.iinfo(dtype)
    for _ in range(200):
        n = int(rng.integers(0, 50))
        lo, hi = (info.min, info.max) if rng.random() < 0.3 else (-5, 5)  # spread wide (np.unique) or counted
        a = rng.integers(lo, hi, n, endpoint=True).astype(dtype)
        got = context.distinct_ids(a)
        assert np.array_equal(got, np.unique(a)) and got.dtype == a.dtype


def _launches_by_definition(d, recorded, small_cfg, floor_ps) -> dict:
    """(name, configuration) -> [launches, ps, ps above the floor, ps above the peaks' floor (none known: all)] of the
    recorded launches of a small configuration, one launch at a time in Python ints, keys sorted."""
    out: dict = {}
    for i in range(recorded.size):
        c = int(d.launch_cfg[i])
        if recorded[i] and small_cfg[c]:
            dur = int(d.end[i]) - int(d.start[i])
            acc = out.setdefault((int(d.name[i]), c), [0, 0, 0, 0])
            acc[0] += 1
            acc[1] += dur
            acc[2] += max(dur - floor_ps, 0)
            acc[3] += dur
    return {k: out[k] for k in sorted(out)}


@pytest.mark.parametrize("scale", [1_000, 10**15], ids=["float-exact", "int64-sums"])
def test_small_launches_are_the_per_launch_sums(scale):
    rng = np.random.default_rng(37)
    for _ in range(60):
        n = int(rng.integers(1, 400))
        n_cfg = int(rng.integers(1, 6))
        start = rng.integers(0, scale, n).astype(np.int64)
        d = SimpleNamespace(name=rng.integers(0, 9, n).astype(np.int32), start=start,
                            end=start + rng.integers(-2, scale, n), launch_cfg=rng.integers(-1, n_cfg, n).astype(np.int32))
        recorded = (d.launch_cfg >= 0) & (rng.random(n) < 0.8)
        small_cfg = np.append(rng.random(n_cfg) < 0.6, False)
        floor_ps = int(scale // 3)
        for block in (7, 1 << 18):  # several blocks summed, and one
            got = underfill._small_launches(d, recorded, small_cfg, floor_ps, block=block)
            assert got == _launches_by_definition(d, recorded, small_cfg, floor_ps)


def test_exact_sums_leave_float64_for_int64_when_they_would_round():
    big = np.array([2**53 + 1, 1, 2**53 + 3], np.int64)
    got = underfill._exact_sums(np.array([0, 0, 1]), big, 2)
    assert got.tolist() == [2**53 + 2, 2**53 + 3]


def _table(rng, gpus: list[int | None]) -> StepRowTable:
    n = len(gpus)
    vals = np.round(rng.random((n, 2 + len(CATS))) * 100, 4)
    return StepRowTable(rng.integers(0, 5, n), gpus, vals, CATS)  # repeated step ids: the last row of a step wins


def test_steps_by_gpu_reads_the_table_as_its_rows():
    rng = np.random.default_rng(36)
    layouts = [[0, 0, 1, 1, None, None], [3, 3, 2, 3, None], [None], [], [5] * 9 + [None] * 9]
    for gpus in layouts:
        table = _table(rng, gpus)
        rows: list[StepRow] = table.rows()
        assert _steps_by_gpu(table) == _steps_by_gpu(list(rows))  # the rows' own loop, one row at a time
        assert list(_steps_by_gpu(table)) == list(dict.fromkeys(gpus))  # GPUs in the order they first come


class _Dev(SimpleNamespace):
    def __len__(self) -> int:
        return int(self.name.size)


def test_gemm_events_kept_per_gpu_are_the_uncached_answer():
    names = ["volta_h884gemm_64x128_ldg8_nn", "elementwise_kernel", "sm80_xmma_fprop_implicit_gemm", "nccl_AllReduce",
             "ampere_sgemm_128x64_tn"]
    rng = np.random.default_rng(35)
    ctx = SimpleNamespace(memo={})
    ctx.by_name = lambda classify, nm: Context.by_name(ctx, classify, nm)  # the analysis's per-name memo
    for gpu in range(3):
        own = [names[i] for i in rng.permutation(len(names))]  # each GPU its own name table, mostly the same names
        d = _Dev(gpu=gpu, names=own, name=rng.integers(0, len(own), 50).astype(np.int32))
        got = flops.gemm_events(d, ctx)
        assert np.array_equal(got, flops.gemm_events(d)) and got.any() and not got.all()
        assert flops.gemm_events(d, ctx) is got and not got.flags.writeable  # kept, and shared read-only
        d.name = rng.integers(0, len(own), 20).astype(np.int32)  # a new name column: answered afresh
        assert np.array_equal(flops.gemm_events(d, ctx), flops.gemm_events(d))


def test_device_categories_are_the_kind_masks():
    """``breakdown._of_kinds`` (a category's intervals: no pass for a kind the GPU lacks, the whole columns where it has
    no other) is the mask of the category's kinds, on GPUs of kernels only, of one other kind, and of every kind."""
    rng = np.random.default_rng(34)
    all_kinds = sorted(set().union(*breakdown._DEVICE_KINDS.values()))
    for pool in ([devices.KIND_KERNEL], [devices.KIND_D2H], [devices.KIND_KERNEL, devices.KIND_COLLECTIVE], all_kinds):
        for n in (0, 1, 40):
            start = rng.integers(0, 100, n).astype(np.int64)
            d = SimpleNamespace(start=start, end=start + 3, kind=rng.choice(pool, n).astype(np.int8))
            present = set(context.distinct_ids(d.kind).tolist())
            for kinds in breakdown._DEVICE_KINDS.values():
                m = np.isin(d.kind, list(kinds))
                s, e = breakdown._of_kinds(d, kinds, present)
                assert np.array_equal(s, d.start[m]) and np.array_equal(e, d.end[m]) and s.dtype == d.start.dtype


@pytest.mark.parametrize("seed", range(8))
def test_painting_with_empty_categories_is_the_segment_method(seed):
    """``breakdown.Attribution`` shares one cover among the categories that add nothing to the prefix union (most of a
    GPU's): its matrix is still the reference segment painting (midpoints, bincount), window by window, to the ps."""
    rng = np.random.default_rng(seed)
    iv = {}
    for c in breakdown.PRIORITY:
        n = int(rng.integers(0, 30)) if rng.random() < 0.4 else 0  # most categories empty, a few with intervals
        s = rng.integers(0, 10_000, n).astype(np.int64)
        iv[c] = (s, s + rng.integers(1, 400, n))
    edges = np.sort(rng.choice(np.arange(0, 10_000, 50), 2 * int(rng.integers(1, 12)), replace=False))
    windows = edges.reshape(-1, 2).astype(np.int64)
    painted = breakdown.Attribution(iv, int(windows[:, 0].min()), int(windows[:, 1].max()))
    assert len({id(c) for c in painted.covers}) < len(breakdown.PRIORITY)  # some covers shared: the case at hand
    assert np.array_equal(breakdown.attribute(iv, windows, painted), breakdown._attribute_segments(iv, windows))
