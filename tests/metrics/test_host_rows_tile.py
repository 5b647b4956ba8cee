"""A host's step rows never overlap (h37-zero12law, walk ``--zero12`` seed 21210): a host-wide row is the GPUs' mean
step (the ledger's), and main set it at the first GPU's start -- a window of no GPU.  Where the GPUs' skew changes from
step to step it reached past the next row's start: 2 ranks in step, 330 then 457 us apart, row 0 from 5.687 ms for
the mean 0.444 ms ended at 6.131 ms, after row 1 began at 6.068 ms.  The wrong assumption: a row's start and its length
may be read from different GPUs; now the row stands at the GPUs' mean start, so the rows tile as each GPU's do.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tb_gpu_advisor.metrics import breakdown as bd
from tb_gpu_advisor.metrics.types import Breakdown, StepMetrics
from tests.support.random_jobs import gpu_step_rows
from synthetic.randjobs import random_zero12_job

#: seed 21210's two ranks: each GPU's (start, length) of its two steps, ms; each GPU's own windows tile
ROWS = {0: ((6.0176, 0.5072), (6.5248, 13.3567)), 1: ((5.6872, 0.3804), (6.0676, 0.2536))}


def _ctx(gpus) -> SimpleNamespace:
    return SimpleNamespace(sharing=[SimpleNamespace(d=SimpleNamespace(gpu=g)) for g in gpus],
                           steps=SimpleNamespace(count=2))


def _arrays(g: int, rows) -> bd.StepArrays:
    lo, dur = (np.array(x) for x in zip(*rows))
    n = len(rows)
    mat = np.zeros((n, len(bd.BREAKDOWN_CATEGORIES)))
    mat[:, 0] = dur
    return bd.StepArrays(gpu=g, step=np.arange(n), start_ms=lo, step_ms=dur, mat=mat, busy=dur,
                         kernels=np.ones(n, np.int64), collectives=np.zeros(n, np.int64), memcpys=np.zeros(n, np.int64),
                         first_kernel_ms=lo, first_launch_ms=lo - 0.01)


def _tile(starts, lengths) -> bool:
    return all(a + n <= b + 1e-9 for a, n, b in zip(starts, lengths, starts[1:]))


def test_the_host_columns_stand_at_the_gpus_mean_start():
    arr = bd.host_arrays(_ctx(ROWS), {g: _arrays(g, rows) for g, rows in ROWS.items()})
    assert arr.start_ms.tolist() == pytest.approx([(6.0176 + 5.6872) / 2, (6.5248 + 6.0676) / 2])
    assert _tile(arr.start_ms.tolist(), arr.step_ms.tolist())  # main: 5.6872 + 0.4438 = 6.131 > 6.0676


def test_the_host_rows_stand_at_the_gpus_mean_start():
    """The rows' form (GPUs with uneven rows): the same start as the columns'."""
    rows = {g: [StepMetrics(step=k, gpu=g, start_ms=lo, step_ms=dur, breakdown=Breakdown(device_compute=dur),
                            device_busy_ms=dur, kernel_count=1) for k, (lo, dur) in enumerate(rs)] for g, rs in ROWS.items()}
    out = bd.host_rows(_ctx(ROWS), rows)
    assert [r.start_ms for r in out] == pytest.approx([(6.0176 + 5.6872) / 2, (6.5248 + 6.0676) / 2])
    assert _tile([r.start_ms for r in out], [r.step_ms for r in out])


def test_gpus_starting_together_keep_their_start():
    """Control: GPUs that start each step together (a collective's lockstep, one process's GPUs) keep it, as on main."""
    same = {g: ((1.0, 2.0), (3.0, 2.5)) for g in (0, 1)}
    arr = bd.host_arrays(_ctx(same), {g: _arrays(g, rows) for g, rows in same.items()})
    assert arr.start_ms.tolist() == [1.0, 3.0]


def test_seed_21210s_rows_tile_on_every_gpu_and_the_host():
    r, per_gpu = gpu_step_rows(random_zero12_job(21210))
    rows = [x for x in r.to_dict()["hosts"][0]["step_rows"] if x["gpu"] is None]
    assert len(rows) == 2 and all(len(v) == 2 for v in per_gpu.values())
    assert _tile([x["start_ms"] for x in rows], [x["step_ms"] for x in rows])
