"""A straggler across host files saves the step time its keeping pace gives back -- a replay of the calls matched
across the files with it on time -- not the others' wait summed (issue #37 deliverable 3, "each wait belongs to its
cause"; session 68, as h37-late67 made ``late_rank`` within one host).

The others' wait holds their own next work: the next bucket's compute runs inside their wait in the first all-reduce,
and returns to the step's path once the late rank is on time.  One replay for both (``metrics.comm.step_gain``): the
host files share no clock, but every rank leaves a collective together, so each call's arrival and readiness are read
before its end (``CollectiveStat.call_times``, the report's ``calls`` columns ``arrive``/``ready``/``at``).

Truth by construction (``synthetic.torchtrace.write_late_rank_nodes``: 4 ranks on 2 nodes, 2 all-reduces a step,
rank 3 dispatching at 60 us a launch, the others at 30): the step less the same job's with rank 3 at 30 us.
"""

from __future__ import annotations

import json

import pytest

from synthetic import torchtrace as tt
from tests.support.cli_report import first_report


def _step(report: dict) -> float:
    return max(g["step_ms"] for h in report["hosts"] for g in h["gpus"])


def _straggler(report: dict) -> dict:
    (f,) = [f for f in report["findings"] if f["rule"] == "rank_straggler"]
    return f


def test_the_straggler_saves_the_step_time_its_keeping_pace_gives_back(tmp_path):
    """Fails on base 225b624d: saving 2.07 ms (the others' 2.59 ms of wait less rank 3's own 0.52) where the step gains
    1.80; now 1.80, the wait still told."""
    tt.write_late_rank_nodes(str(tmp_path / "late"), launch_us=30.0, late_launch_us=60.0)
    tt.write_late_rank_nodes(str(tmp_path / "paced"), launch_us=30.0, late_launch_us=30.0)
    late, paced = first_report(tmp_path / "late" / "late_rank_nodes"), first_report(tmp_path / "paced" / "late_rank_nodes")
    truth = _step(late) - _step(paced)
    assert truth == pytest.approx(1.80, abs=0.01)
    f = _straggler(late)
    assert "rank 3" in f["metric"]["detail"]["rank"]
    assert f["metric"]["detail"]["extra_ms_per_step"] == pytest.approx(2.07, abs=0.01)  # the wait itself is still told
    assert f["saving"]["ms_per_step"] == pytest.approx(truth, abs=0.05)
    assert "their launches), which runs inside the wait" in f["summary"]
    assert not [f for f in paced["findings"] if f["rule"] == "rank_straggler"]


def test_the_replay_needs_no_shared_clock(tmp_path):
    """Node 1's clock 7.3 ms ahead of node 0's: the same saving (the calls are read against their own ends)."""
    paths = tt.write_late_rank_nodes(str(tmp_path / "late"), launch_us=30.0, late_launch_us=60.0)
    for p in paths:
        if "node1_" not in p:
            continue
        with open(p) as fh:
            doc = json.load(fh)
        for e in doc["traceEvents"]:
            if "ts" in e and e.get("ph") != "M":
                e["ts"] = round(e["ts"] + 7300.0, 3)
        tt.write_doc(p, doc)
    f = _straggler(first_report(tmp_path / "late" / "late_rank_nodes"))
    assert f["saving"]["ms_per_step"] == pytest.approx(1.80, abs=0.05)
