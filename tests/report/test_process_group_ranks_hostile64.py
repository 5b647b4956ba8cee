"""Hostile ``Process Group Ranks`` (h37-review64, review of h37-group63): a rank spelled in digits ``int`` refuses
ends no read, and a rank past a C ``int`` is no group's member.

Base read the field with ``str.isdigit``, true for "²" (a superscript two) that ``int`` refuses: one such value on a
collective op made the whole host file unreadable ("invalid literal for int()"), a job's rank's report lost.  A rank
of 10**23 was kept as a member of the group (c10d numbers ranks in an ``int``, as NCCL counts them:
``devices.collectives.MAX_RANKS``, the bound h37-rev63b set on NCCL's payloads)."""

from __future__ import annotations

import json

from synthetic import torchtrace as tt
from tb_gpu_advisor.devices.collectives import MAX_RANKS
from tb_gpu_advisor.frameworks import pytorch
from tests.support.cli_report import ran_report


def _members(v) -> tuple[int, ...] | None:
    return pytorch.collective_members({"Process Group Ranks": v})


def test_a_rank_spelled_in_other_digits_is_unknown_and_the_trace_is_read(tmp_path):
    """``tp_dp_groups`` (truth by construction: 4 ranks in pairs), rank 0's file with every op's group ranks
    ``"[0, ²]"``: read, its groups' ranks unknown.  Fails on base (the host file's error: ValueError's words)."""
    paths = tt.write_run(str(tmp_path), tt.tp_dp_groups(slow_rank=2), steps=8, run="job")
    p = next(p for p in paths if tt.doc_rank(p) == 0)
    with open(p, encoding="utf-8") as f:
        doc = json.load(f)
    spoiled = 0
    for e in doc["traceEvents"]:
        if "Process Group Ranks" in (e.get("args") or {}):
            e["args"]["Process Group Ranks"] = "[0, \u00b2]"
            spoiled += 1
    assert spoiled
    with open(p, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    rep = ran_report(tmp_path / "job")[1]
    assert rep["hosts"] and all(h.get("error") is None for h in rep["hosts"])
    ranks = {g["rank"]: g.get("collective_ranks") for h in rep["hosts"] for g in h["gpus"] if g["kernel_count"]}
    assert not ranks[0]  # unknown: no group's ranks read
    assert ranks[1] == {"AllReduce": [0, 1], "AllGather": [1, 3]}  # the other ranks' as they were


def test_group_ranks_hostile_spellings():
    """Other digits, ranks past a C int, as text or as a list: unknown.  Fails on base ("²" raised; "\u0663" read as
    3; 10**23 kept)."""
    for v in ("[0, \u00b2]", "[\u0663]", f"[{10 ** 23}]", f"[0, {MAX_RANKS}]", [0, MAX_RANKS], [2 ** 70]):
        assert _members(v) is None, v
    assert _members(f"[{MAX_RANKS - 1}, 0]") == (0, MAX_RANKS - 1)  # the largest rank an int holds: read
