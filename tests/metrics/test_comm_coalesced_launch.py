"""A coalesced collective's launch is its open op's, not the latest-starting op's (h37-probe50c, issue #37 class 3:
each wait belongs to its cause; the ``Encloser`` call sites h37-probe47y left).

The wrong assumption (``metrics.comm``: ``_recording_ops``, ``call_groups``, ``_host_collectives``): *the op that
recorded a collective is the latest one starting before its launch*.  PyTorch runs an all-gather of uneven shards
as a coalesced group: ``c10d::allgather_`` records its message (``record_param_comms``), each shard's
``_broadcast_oop`` records its own and returns, and the group launches one ``ncclDevKernel_Generic`` at its end --
inside the outer op and record, after the inner ones ended.  Asked without nesting, the latest-starting record and
collective op were the ended inner ones: the call read as "collective", no bytes, no process group.

Generator: :func:`synthetic.torchtrace.write_coalesced_all_gather`, truth by construction.
"""

from __future__ import annotations

import numpy as np
import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor import devices
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.metrics.comm import call_groups
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.metrics_context import capture_context as _context




def test_a_coalesced_all_gather_reads_its_ops_type_bytes_and_group(tmp_path):
    """BASE read one "collective" a step with no bytes, no group size and no process group."""
    path = str(tmp_path / "rank0.pt.trace.json")
    truth = tt.write_coalesced_all_gather(path)
    (row,) = host_metrics(read_trace(path)).comm.by_type
    assert row.type == truth["type"]
    assert row.calls_per_step == truth["calls_per_step"]
    assert row.bytes_per_call == truth["bytes"] and row.group_size == truth["group_size"]
    assert row.process_groups == [truth["pg"]]


def test_a_coalesced_calls_process_group_is_its_records(tmp_path):
    """``call_groups`` (the all-reduce's pairing across GPUs asks it) answers the outer record's group for the
    group's kernel; BASE: -1 (none recorded)."""
    truth = tt.write_coalesced_all_gather(str(tmp_path / "rank0.pt.trace.json"))
    ctx = _context(str(tmp_path))
    (g,) = ctx.active
    sel = np.flatnonzero((g.d.kind == devices.KIND_COLLECTIVE) & (g.step >= 0))
    codes: dict[str, int] = {}
    got = call_groups(ctx, g, sel, codes)
    assert sel.size == ctx.steps.count > 0
    assert codes == {truth["pg"]: 0} and set(got.tolist()) == {0}


@pytest.mark.parametrize("run", ["fsdp_prefetch", "tp_allreduce"])
def test_a_launch_inside_its_own_record_reads_as_before(tmp_path, run):
    """Control: collectives launched inside their own ``record_param_comms`` (no inner op ended first) read their
    type, bytes and group on both trees."""
    path = tt.write_run(str(tmp_path), run, steps=6)[0]
    rows = host_metrics(read_trace(str(path))).comm.by_type
    assert {r.type for r in rows} <= {"AllGather", "ReduceScatter", "AllReduce"} and rows
    for r in rows:
        assert r.bytes_per_call == tt.SHARD_NELEMS * 2 and r.group_size == 4
