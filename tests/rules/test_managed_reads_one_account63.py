"""A finding that claims the host's reads of managed memory is graded and shown by the reads it claims (issue #37
class 3: each wait belongs to its cause; class 4: a step's findings judged by what they save; h37-managed62 *Left* 3).

Real export, cestwc/balinski-and-gomory-cuda ``report8.sqlite`` (MIT; ``wild/counted_steps_rtx3090_solver``,
PROVENANCE.md), read by hand in h37-nvtx61: the launching thread off the CPU in its managed reads 433.0 us a turn of
the 1.27 ms step (34%).  On base the gaps' check claimed all of them (430 us a step, "34% of step") but printed the
gaps' share as its metric, 5.5%, and graded by it: a warning.  ``report7`` (``wild/managed_flag_rtx3090_solver``, the
same solver; by hand 316.2 us a turn, 31% of its step): the host-wait finding claimed them as a wait for a source
outside the capture, "never critical", its metric the device's share (48.7%).

Generator ``synthetic.nsysexport.write_counted_solver(read="managed", fault_us=300)`` (truth by construction: 300 us of
each 703 us turn asleep in the read's page fault, 43%; 180 us of it between the steps, 120 us inside them)."""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.discover.logdir import discover
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions


def _reads_finding(rep: dict) -> dict:
    (f,) = [f for f in rep["findings"] if "managed memory the GPU wrote" in f["title"] + f["summary"]]
    return f


def _one_account(f: dict) -> None:
    """The finding's metric is the share of the step its saving claims, and its grade follows that share."""
    share = f["saving"]["percent_of_step"] / 100
    assert f["metric"]["id"] == "managed_read_share"
    assert abs(f["metric"]["value"] - share) <= 0.002, (f["metric"], f["saving"])
    want = "critical" if share >= T("step_gaps.critical") else "warning" if share >= T("step_gaps.warning") else "info"
    assert f["severity"] == want


@pytest.mark.parametrize("run", ["counted_steps_rtx3090_solver", "managed_flag_rtx3090_solver"])
def test_the_real_solvers_reads_are_graded_by_the_reads(run):
    """report8: metric 33.9% (not the gaps' 5.5%), critical; report7: metric 31.5% (not the device's 48.7%), critical.
    Both fail on base."""
    (s,) = [s for s in wild_sessions() if s.run == run]
    f = _reads_finding(session_report(s).to_dict())
    _one_account(f)
    assert f["severity"] == "critical"


def test_the_generated_solvers_reads_are_graded_by_the_reads(tmp_path):
    """By construction 300 us of each 703 us turn (43%) is the read: metric and saving agree, critical.  Fails on base
    (the gaps' share as the metric, a warning)."""
    truth = nx.write_counted_solver(str(tmp_path / "run.sqlite"), read="managed", fault_us=300.0)
    (s,) = discover(str(tmp_path))
    f = _reads_finding(session_report(s).to_dict())
    _one_account(f)
    assert abs(f["saving"]["ms_per_step"] * 1000 - truth["fault_us_per_turn"]) <= 0.03 * truth["fault_us_per_turn"]
