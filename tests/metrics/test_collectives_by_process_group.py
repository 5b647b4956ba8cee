"""A collective's calls are matched across GPUs within their process group (h37-left50, issue #37).

Every rank of a process group issues that group's collectives in one order, but two groups' calls may interleave
differently on each rank (tensor + data parallelism, FSDP's shard + replicate groups, each on its own NCCL stream).
Matched by their order in the step, one rank's tensor-parallel call pairs with the other's data-parallel call: their
ends disagree, and the transfer fell back to the least GPU's total, which holds the waits for the late rank.

Truth by construction: ``synthetic.torchtrace.tp_dp_alternating`` -- 2 GPUs, one AllReduce type in two groups whose
calls interleave per rank, the late rank alternating step by step; each call ends on both ranks a known transfer after
the last one entered it.  Controls: a real pair in one group (``wild/tp_rtx4090_two_ranks``, read from its files here)
and calls that name no group (``test_collectives_call_by_call``).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor import formats
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.runtime.pipeline import host_metrics

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"


def _host(folder: Path):  # noqa: ANN202 - HostMetrics of the one host found
    (s,) = discover(str(folder))
    (h,) = s.hosts
    return host_metrics(formats.read(h))


def _kernels(path: Path) -> list[tuple[float, float]]:
    with (gzip.open(path, "rt") if path.suffix == ".gz" else open(path)) as f:
        ev = json.load(f)["traceEvents"]
    return [(e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("cat") == "kernel" and "AllReduce" in e["name"]]


def test_calls_of_two_groups_interleaved_per_rank_pair_within_their_group(tmp_path: Path) -> None:
    sc = tt.tp_dp_alternating()
    paths = [Path(p) for p in tt.write_run(str(tmp_path), sc, steps=8, run="tpdp")]
    # the truth from the written files: each rank's calls, in its own start order, are (TP, DP) on rank 0 and (DP, TP)
    # on rank 1, so the k-th calls of a step are two collectives; each rank's total holds the late rank's waits
    calls = [_kernels(p) for p in paths]
    assert len(calls[0]) == len(calls[1]) == 16
    totals = [sum(e - s for s, e in c) for c in calls]
    truth = sc.extra["transfer_ms"]
    assert min(totals) / 8 / 1000 > 1.5 * truth

    m = _host(tmp_path / "tpdp")
    (ar,) = [c for c in m.comm.by_type if c.type == "AllReduce"]
    assert ar.process_groups == ["pg 0", f"pg {tt.TP_GROUP}"]
    assert ar.transfer_ms_per_step == pytest.approx(truth, rel=0.01)  # main: the least total, 1.22 ms
    assert m.multi_gpu.allreduce_transfer_ms_per_step == pytest.approx(truth, rel=0.01)
    for rows in m.comm.per_gpu.values():  # accounting: no GPU spends less than the transfer in the type
        (own,) = [c for c in rows if c.type == "AllReduce"]
        assert own.ms_per_step >= ar.transfer_ms_per_step


def test_one_group_on_a_real_pair_reads_as_the_order_in_the_step() -> None:
    """Control: the kept tensor-parallel pair runs every collective in its one default group, so matching within the
    group is matching by the order in the step: its ReduceScatter's transfer is the least in each call, read here from
    the two files (9 calls each, one order)."""
    folder = WILD / "tp_rtx4090_two_ranks"
    per_rank = []
    for p in sorted(folder.glob("*.json.gz")):
        with gzip.open(p, "rt") as f:
            ev = json.load(f)["traceEvents"]
        per_rank.append(sorted((e["ts"], e["dur"]) for e in ev if e.get("cat") == "kernel" and "ReduceScatter" in e["name"]))
    a, b = per_rank
    assert len(a) == len(b) == 9
    least_ms = sum(min(x[1], y[1]) for x, y in zip(a, b)) / 1000
    m = _host(folder)
    (rs,) = [c for c in m.comm.by_type if c.type == "ReduceScatter"]
    assert rs.transfer_ms_per_step * m.steps.count == pytest.approx(least_ms, rel=1e-3)
