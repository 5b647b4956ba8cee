"""The GPU's bursts are read from one table (``steps.burst_table.BurstTable``, h37-bursts35), and bursts of kernels
make the same transfers where each copy's bytes lie within ``steps.transfer_bytes_share`` of its match's.

The table is built once per cut and every reading asks it, so it must hold each of the GPU's events once, in the burst
its start falls in, with its time: no part exceeds its whole.  The bound is checked on the real captures that hold
the two sides of it.  ``wild/pexsi_a100_pageable_sync`` (PEXSI's selected inversion on an A100, a loop over supernodes
of varying size): each supernode's burst uploads two blocks and a third, runs one GEMM and reads a block back, the
blocks' bytes set by the supernode's size -- by hand with ``sqlite3``, uploads of 3,047,424 bytes (x2), 17,713,152 and
a read-back of 3,047,424 in one burst, 3,571,712 (x2), 24,332,288 and 3,571,712 in another: the same work, and bytes
that match exactly only where two supernodes happen to be of one size.  ParallelKernelsTest
(``wild/extrap_parallel_kernels_gtx1060``) makes its three tests' 16 MB copies on streams of their own: no bound on
bytes makes them one loop.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.steps.burst_table import BurstTable
from tb_gpu_advisor.steps.bursts import _busy_clusters, _same_transfers, _transfer_shapes, _transfers_repeat

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"
PEXSI = WILD / "pexsi_a100_pageable_sync" / "report6.sqlite"
EXTRAP = WILD / "extrap_parallel_kernels_gtx1060" / "profile16.sqlite"


def _table(path: Path) -> tuple[BurstTable, list]:
    devs = [d for d in read_trace(str(path)).devices if len(d)]
    cut = _busy_clusters(devs)
    assert cut is not None
    return BurstTable.of(devs, *cut), devs


def test_the_table_holds_each_real_event_once_in_its_burst_with_its_time():
    t, devs = _table(PEXSI)
    assert int(t.count.sum()) == sum(len(d) for d in devs)
    assert int(t.time.sum()) == sum(int((d.end - d.start).astype(np.int64).sum()) for d in devs)
    for i, d in enumerate(devs):  # per burst, as many events as start in it
        b = np.searchsorted(t.starts, d.start, side="right") - 1
        direct = np.bincount(b + 1, minlength=t.size + 1)
        mine = np.bincount(t.burst[t.dev == i] + 1, weights=t.count[t.dev == i], minlength=t.size + 1)
        assert np.array_equal(direct, mine.astype(np.int64))


def test_real_supernodes_of_different_size_make_the_same_transfers_within_the_bound():
    """The two supernodes' bursts read by hand (uploads of 3,047,424 and 3,571,712 bytes): one shape (the same copies
    on stream 7, one kernel), no byte alike, each within the bound of the other -- matched here, by no exact bytes
    (main's reading: ``_burst_transfers`` hashed each burst's bytes)."""
    t, _ = _table(PEXSI)
    shapes = _transfer_shapes(t)
    pair = [b for b, (_, sizes) in shapes.items() if {3_047_424, 3_571_712} & set(sizes.tolist())]
    assert len(pair) == 2 and shapes[pair[0]][0] == shapes[pair[1]][0]
    a, b = (shapes[k][1] for k in pair)
    assert not (set(a.tolist()) & set(b.tolist()))  # no transfer of one size in both
    exact, bound = _same_transfers(t, 1.0), _same_transfers(t, T("steps.transfer_bytes_share"))
    assert set(pair) <= bound - exact, (sorted(exact), sorted(bound))
    assert exact < bound  # the bound only adds matches: every exact one stays


def test_control_real_tests_on_streams_of_their_own_make_no_same_transfers_within_the_bound():
    """Control: ParallelKernelsTest's tests move 16 MB buffers alike by name and bytes, each test on its own streams:
    no burst's transfers are another's, with the bound as without it."""
    t, _ = _table(EXTRAP)
    assert len(_transfer_shapes(t)) == 2
    assert not _same_transfers(t, 0.0) and not _transfers_repeat(t)
