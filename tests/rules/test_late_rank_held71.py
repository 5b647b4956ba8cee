"""A rank late because its GPU holds the work its host launched is late by its GPU, not by its host's work
(h37-hunt71a, issue #37 class 3: each wait to its cause).

The real capture, kept (BSD-3-Clause): ``wild/megatron_tp2_v100_turns``, Megatron-LM's tensor-parallel pair on two
V100s (provenance in tests/metrics/test_merged_ranks_opening71.py and PROVENANCE.md).  GPU0 starts each kernel and
copy up to 2.4 ms after its launch returned, in turns (53 ms of its step; GPU1 none), its host waiting ~2.3 ms in
each 4 KB copy's sync; GPU1 waits 48.2 ms in the 13 all-reduces for it.  Base ea5a2537: "Its step starts 12.6 ms
later (...); the rest is GPU0 (rank 0)'s own host work before each call: its dispatch, Python or a sync that the
other rank does not do or does sooner", fix "profile that rank's host thread (with_stack=True)".  The controls --
ranks late by their own host -- are tests/rules/test_late_rank66.py's and test_late_rank_gain67.py's (unchanged)."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli_report import cli_report

_RUN = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "megatron_tp2_v100_turns"


def test_a_rank_whose_gpu_holds_its_launched_work_is_late_by_its_gpu_not_its_host():
    host = cli_report(_RUN)["hosts"][0]
    (f,) = [f for f in host["findings"] if f["rule"] == "late_rank"]
    assert f["gpu"] == 0, f
    assert "own host work" not in f["summary"], f["summary"]
    assert "its GPU's, not its host's" in f["summary"] and "53.1 ms" in f["summary"], f["summary"]
    assert "taking turns" in f["summary"], f["summary"]
    fix = " ".join(a["text"] for a in f["actions"])
    assert "nvidia-smi" in fix and "with_stack" not in fix, fix


def test_the_held_work_note_of_a_merged_pair_names_the_gpu_that_holds_it():
    """Base ea5a2537: "The GPU idles 25.9 ms of the 74.2 ms step" -- the mean of GPU0's 53.1 ms and GPU1's none --
    scoped to the host, no GPU named."""
    host = cli_report(_RUN)["hosts"][0]
    (f,) = [f for f in host["findings"] if f["title"] == "The GPU holds work it was given, idle"]
    assert f["gpu"] == 0, f
    assert "GPU0 (rank 0)'s, 53.1 ms" in f["summary"] and "on the other GPU" in f["summary"], f["summary"]
