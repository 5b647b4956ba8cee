"""A collective whose process group holds no unrecorded rank keeps its transfer (issue #37 class 2 at job scope;
h37-group63).

A rank whose GPU work went unrecorded made base read no transfer, paid time or bus bandwidth off any collective
(``JobView.transfer_known`` false for every type): the recorded ranks' least time may be their wait for it.  A call
waits only for the ranks of its own process group, which PyTorch 2.1+ records on each collective
(``Process Group Ranks``: ``"[0, 1]"``; ``"[]"`` or absent before, then nothing changes).

Truth by construction: ``synthetic.torchtrace.tp_dp_groups`` -- 4 ranks, tensor-parallel pairs [0, 1], [2, 3] run a
150 us AllReduce, data-parallel pairs [0, 2], [1, 3] a 300 us AllGather after it, rank 2 at 1.5x compute; the
session holds ranks 0 and 1 recorded and rank 2 with its GPU side unrecorded (``unrecord_gpu``), rank 3's file
absent.  The AllReduce of [0, 1] waits for no unrecorded rank: its transfer is 0.150 ms; the AllGather of [0, 2]
waits for rank 2: unknown."""

from __future__ import annotations

import gzip
import json
import os
from collections import Counter

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto import adapter, parse
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.metrics.job import JobView, RankRow
from tb_gpu_advisor.model.schema import Report
from tests.support.cli_report import ran_report
from tests.support.properties import unrecorded_rank_claims

WILD_DDP = os.path.join(os.path.dirname(__file__), "..", "fixtures", "wild", "ddp_a100_nccl",
                        "rank0.2910249.pt.trace.json.gz")


def _report(tmp_path, drop_members: bool = False) -> dict:
    paths = tt.write_run(str(tmp_path), tt.tp_dp_groups(slow_rank=2), steps=8, run="job")
    for p in paths:
        if tt.doc_rank(p) == 3:
            os.remove(p)
        elif drop_members:  # as a PyTorch before 2.1 writes them: no group's ranks
            with open(p, encoding="utf-8") as f:
                doc = json.load(f)
            for e in doc["traceEvents"]:
                (e.get("args") or {}).pop("Process Group Ranks", None)
            with open(p, "w", encoding="utf-8") as f:
                json.dump(doc, f)
    tt.unrecord_gpu(next(p for p in paths if tt.doc_rank(p) == 2))
    return ran_report(tmp_path / "job")[1]


def _row(table: dict, typ: str, col: str):
    return next(r for r in table["rows"] if r[0] == typ)[table["columns"].index(col)]


def test_a_tensor_parallel_pair_of_recorded_ranks_keeps_its_transfer(tmp_path):
    """The AllReduce of [0, 1] reads its 0.150 ms transfer (truth ``GROUPS_TP_US``) and a bus bandwidth, and the
    evidence its paid time; the AllGather of [0, 2] reads none (rank 2 unrecorded).  Each GPU lists its groups'
    ranks.  Fails on base (the AllReduce's transfer, bus bandwidth and paid ms all None)."""
    rep = _report(tmp_path)
    table = rep["collectives"]
    assert _row(table, "AllReduce", "transfer ms") == tt.GROUPS_TP_US / 1000.0
    assert _row(table, "AllReduce", "bus GB/s") is not None
    assert _row(table, "AllGather", "transfer ms") is None and _row(table, "AllGather", "bus GB/s") is None
    f = next(f for f in rep["findings"] if f["rule"] == "comm_exposed")
    (ev,) = f["evidence"]
    assert _row(ev, "AllReduce", "paid ms") == tt.GROUPS_TP_US / 1000.0
    assert _row(ev, "AllGather", "paid ms") is None
    assert f.get("saving") is None and "pays for" not in f["summary"]  # the AllGather's wait is not told apart
    assert "No process group of AllReduce holds it: its transfer is read." in f["summary"], f["summary"]
    held = {g["rank"]: g["collective_ranks"] for h in rep["hosts"] for g in h["gpus"] if g["kernel_count"]}
    assert held == {0: {"AllReduce": [0, 1], "AllGather": [0, 2]}, 1: {"AllReduce": [0, 1], "AllGather": [1, 3]}}
    assert [h["job"].get("idle_rank_numbers") for h in rep["hosts"]] == [[2]]
    assert unrecorded_rank_claims(Report.from_dict(rep)) == []


def test_no_group_ranks_recorded_keeps_the_old_reading(tmp_path):
    """Control (passes on base): the same job written without ``Process Group Ranks`` (PyTorch before 2.1) reads no
    transfer of either type."""
    rep = _report(tmp_path, drop_members=True)
    table = rep["collectives"]
    assert _row(table, "AllReduce", "transfer ms") is None and _row(table, "AllGather", "transfer ms") is None
    assert unrecorded_rank_claims(Report.from_dict(rep)) == []


def test_group_ranks_in_every_spelling():
    """``Process Group Ranks`` as c10d writes it: a list in text; "[]" (a call c10d leaves unnamed), a list cut short
    and anything else read as unknown.  Fails on base (no such reading)."""
    assert pytorch.collective_members({"Process Group Ranks": "[0, 1]"}) == (0, 1)
    assert pytorch.collective_members({"Process Group Ranks": "[2, 0]"}) == (0, 2)
    assert pytorch.collective_members({"Process Group Ranks": [1, 3]}) == (1, 3)
    for v in ("[]", "[0, 1, ...]", "[0, 1, ..., 63]", "", "ranks", "[-1]", [], True, None):
        assert pytorch.collective_members({"Process Group Ranks": v}) is None, v
    assert pytorch.collective_members({}) is None


def test_both_kineto_readers_keep_the_group_ranks_of_a_real_trace():
    """``wild/ddp_a100_nccl`` (2-rank DDP, PyTorch 2.x): its 21 ``record_param_comms`` of group "0" carry
    ``"Process Group Ranks": "[0, 1]"``, its 6 of no group ``"[]"`` (read by hand with zcat | grep): the compiled
    scanner and the Python path read the same.  Fails on base (the key not kept)."""
    with gzip.open(WILD_DDP, "rt", encoding="utf-8") as f:
        said = Counter(e["args"]["Process Group Ranks"] for e in json.load(f)["traceEvents"]
                       if e.get("name") == "record_param_comms")
    assert said == {"[0, 1]": 21, "[]": 6}
    kept = parse._CSCAN
    try:
        for scanner in (kept, None):
            parse._CSCAN = scanner
            t = adapter.read_trace(WILD_DDP)
            assert Counter(t.collective_members.values()) == {(0, 1): 21}, scanner
    finally:
        parse._CSCAN = kept


def _row_of(rank: int, groups: list[int]) -> RankRow:
    return RankRow("node0", rank, 10.0, 8.0, 1.0, 1.0, {"AllGather": (1.0, 1.0, 1.0)}, rank=rank,
                   transfers={"AllGather": 0.4}, group_ranks={"AllGather": tuple(groups)})


def test_an_unrecorded_ranks_number_apart_from_the_groups():
    """Ranks 0 and 1 of an 8-rank job run AllGather in [0, 2] and [1, 3] (ranks 2 and 3 not in the session); the
    unrecorded rank is 4: no group holds it, so the transfer is known -- where its number is known.  Its number
    unknown, or its number in a group: not known.  Fails on base (any unrecorded rank: not known)."""
    rows = [_row_of(0, [0, 2]), _row_of(1, [1, 3])]
    assert JobView("pytorch", ["x", "x"], rows, unrecorded=("rank 4 (node1_7)",),
                   unrecorded_ranks=(4,)).transfer_known("AllGather")
    assert not JobView("pytorch", ["x", "x"], rows, unrecorded=("rank 4 (node1_7)",)).transfer_known("AllGather")
    assert not JobView("pytorch", ["x", "x"], rows, unrecorded=("rank 3 (node0_3)",),
                       unrecorded_ranks=(3,)).transfer_known("AllGather")
