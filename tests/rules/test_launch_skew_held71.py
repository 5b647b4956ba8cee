"""A late rank's later start that its GPU's held work explains is the held work's, not host thread contention
(h37-turns71, issue #37 class 3: each wait to its cause, the saving to the finding of the cause, the same ms once).

The real capture, kept (BSD-3-Clause): ``wild/megatron_tp2_v100_turns``, Megatron-LM's tensor-parallel pair on two
V100s (provenance in tests/metrics/test_merged_ranks_opening71.py and PROVENANCE.md): GPU0 shares its card with another
context and starts launched work in ~2.4 ms turns (53 ms of its 62.6 ms step held), so rank 0 opens its step 12.6 ms
late and rank 1 waits 48.2 ms in the all-reduces.  Base f3fab312: top ``launch_skew`` 12.6 ms, "host thread
contention" with the DDP-bucket fix; ``late_rank`` (the held work) info, no saving.

Controls: a rank late by its own host (its GPU holds nothing) keeps launch_skew's reading and saving (below, and
tests/rules/test_late_rank66.py / test_late_rank_gain67.py / test_launch_skew_measured.py, unchanged)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tb_gpu_advisor.rules import evaluate
from tests.support.cli_report import cli_report
from tests.support.rules_factory import multi

_RUN = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "megatron_tp2_v100_turns"


def test_the_later_start_of_a_rank_whose_gpu_takes_turns_is_credited_to_its_held_work():
    host = cli_report(_RUN)["hosts"][0]
    bad = [f for f in host["findings"] if f["severity"] in ("critical", "warning")]
    assert bad[0]["rule"] == "late_rank", [f["rule"] for f in bad]
    top = bad[0]
    assert top["gpu"] == 0 and top["saving"]["ms_per_step"] == pytest.approx(12.56, abs=0.05), top["saving"]
    assert "its later start (12.6 ms) included" in top["summary"] and "a GPU of its own, or MPS" in top["summary"]
    assert "nvidia-smi" in " ".join(a["text"] for a in top["actions"])
    (skew,) = [f for f in host["findings"] if f["rule"] == "launch_skew"]
    assert skew["severity"] == "info" and not skew["saving"]["ms_per_step"], skew
    assert "host thread contention" not in skew["title"], skew["title"]
    assert "all of its later start is its GPU's, not its host's" in skew["summary"], skew["summary"]
    fix = " ".join(a["text"] for a in skew["actions"])
    assert "nvidia-smi" in fix and "DDP" not in fix, fix
    # the same ms once: the two findings' savings add up to no more than the skew alone claimed
    assert top["saving"]["ms_per_step"] + skew["saving"]["ms_per_step"] <= 12.6


def _late_pair(unseen_late: float):
    """Two GPUs, GPU1 opening its step 3 ms late and entering the one AllReduce last, GPU0 waiting 3 ms there;
    GPU1's ledger holds ``unseen_late`` ms of launched work held idle."""
    m = multi(n=2, busy=(9.0, 9.0), skew=3.0, peer_wait={"gpu_wait": 1.5})
    m.comm.arrivals = {"gpu": 1, "calls": 1, "last_in": {1: 1}, "wait_ms": {0: 3.0, 1: 0.0}, "gain_ms": 3.0,
                       "lag_ms": 3.0}
    m.gpus[1].breakdown.unseen = unseen_late
    return m


def test_a_rank_late_by_its_own_host_keeps_the_launch_skew_reading():
    """Control: no held work on the late GPU -- launch_skew keeps its saving, words and fix (as on base)."""
    (f,) = [f for f in evaluate(_late_pair(0.0)) if f.rule == "launch_skew"]
    assert f.severity != "info" and f.saving.ms_per_step > 0
    assert "its GPU's, not its host's" not in f.summary and "host thread contention" in f.title


def test_a_late_rank_whose_gpu_holds_its_work_credits_the_start_to_the_held_work():
    """Fails on base f3fab312: the same pair with GPU1 holding 6 ms of launched work read "host thread contention"."""
    fs = evaluate(_late_pair(6.0))
    (skew,) = [f for f in fs if f.rule == "launch_skew"]
    assert "its GPU's, not its host's" in skew.summary and not (skew.saving and skew.saving.ms_per_step)
