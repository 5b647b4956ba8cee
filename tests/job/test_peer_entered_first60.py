"""A rank that enters a collective after its peer is not waiting for that peer, though the peer's host meanwhile pays
a one-time cost (h37-ranks60; ranks59 *Left*).

h37-ranks58/59 booked a collective running inside a peer's one-time span (a module load, a compile) as waiting for
that peer's start-up.  The ranks of a group leave a collective together, so the peer is waited for only until it
enters: a peer that launched its side FIRST and then loaded a module is already in the collective, and a rank
entering after it waits for whoever enters last (or for nobody: the transfer itself).  Now a peer's span counts only
where its GPU runs no collective (``job.peers.not_entered``): in one capture (``Context.peer_one_time_spans``) and
from rank folders (``job.peers.one_time_ns``).

Truth by construction: ``synthetic.torchtrace.write_late_peer_through_load`` -- rank 0 enters the all-to-all first
and then loads for 12 ms; rank 1 enters 1.8 ms later, inside that load; rank 2 (25 more GEMMs) 2.7 ms after rank 1.
Rank 1 waits 2.7 ms for rank 2's compute: communication a late peer holds.  BASE: 2.712 ms start-up, 0 exposed.

Real (``wild/tp_rtx4090_two_ranks``, MIT; read by hand on the shared clock, ms from rank 0's first collective):
rank 1's ReduceScatters at 14.78-17.96 and 94.46-97.98 and its AllGather at 98.07-102.13 run inside rank 0's one-time
spans (4.05-18.08, 85.40-102.22), but rank 0 entered each first (0.00, 80.45, 97.74): 3.2-4.1 ms each, the pair's
steady transfer time (3.3-4.6 ms for every later call), no wait.  BASE booked them as rank 0's start-up: rank 1's
ReduceScatter exposed 25.64 of 32.34 ms; now 32.05.  Rank 0's waits for rank 1 (rank 1 had not entered) stay
start-up.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tests.support.cli_report import gpus_of as _gpus
from tests.support.cli_report import reports_by_run as _reports
from tests.support.paths import in_rank_folders

PAIR = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "tp_rtx4090_two_ranks"


def test_one_capture_a_rank_after_its_loading_peer_waits_for_the_late_one(tmp_path: Path) -> None:
    """One capture of the three ranks: GPU 1's all-to-all is 2.7 ms of waiting for rank 2, exposed, none of it
    start-up (BASE: 2.712 ms start-up, 0 exposed); the last rank's is its 15 us transfer."""
    made = tt.write_late_peer_through_load(str(tmp_path))
    (report,) = _reports(tmp_path / "late_peer_through_load").values()
    g = _gpus(report)
    calls, total, exposed, *_ = g[1]["collectives"]["AllToAll"]
    assert exposed == pytest.approx(made["wait_ms"] + tt.EXCHANGE_US / 1000, abs=0.02), g[1]["collectives"]
    assert g[1]["breakdown"]["startup"] < 0.05, g[1]["breakdown"]
    assert g[2]["collectives"]["AllToAll"][2] == pytest.approx(tt.EXCHANGE_US / 1000, abs=0.005)


def test_rank_folders_a_rank_after_its_loading_peer_waits_for_the_late_one(tmp_path: Path) -> None:
    """The same job, one folder per rank (rank 0's load placed on rank 1's clock from its own file): rank 1's wait
    is exposed communication, its top finding, not a cold start it did not wait through (BASE: ``cold_start``
    critical 2.71 ms, no ``comm_exposed``)."""
    made = tt.write_late_peer_through_load(str(tmp_path), rank_folders=True)
    reports = _reports(tmp_path / "late_peer_through_load")
    (g1,) = _gpus(reports["rank1"]).values()
    assert g1["collectives"]["AllToAll"][2] == pytest.approx(made["wait_ms"] + tt.EXCHANGE_US / 1000, abs=0.02)
    assert g1["breakdown"]["startup"] < 0.05
    assert reports["rank1"]["findings"][0]["rule"] == "comm_exposed"


def test_the_real_pair_rank_one_is_not_waiting_for_a_peer_already_in() -> None:
    """The real pair (one folder): rank 1's calls after rank 0 entered are its transfers, exposed (BASE: ReduceScatter
    exposed 25.64 of 32.34 ms)."""
    (report,) = _reports(PAIR).values()
    g = _gpus(report)
    assert g[1]["collectives"]["ReduceScatter"][2] > 31.9, g[1]["collectives"]


def test_the_real_pair_reads_the_same_from_one_folder_and_from_rank_folders(tmp_path: Path) -> None:
    """Property: each rank of the real pair reads the same in one folder and in ``rank0/``, ``rank1/`` -- start-up and
    exposed time of each collective type, to the microsecond.  BASE: GPU 0 440.35 ms start-up and 35.09 ms exposed
    ReduceScatter in one folder, 444.46 and 30.97 from its folder: rank 1's first
    ``cudaOccupancyMaxActiveBlocksPerMultiprocessor`` (4.42 ms, its own GPU idle; rank 0 waiting in its ReduceScatter
    for rank 1 to enter) read as rank 1's one-time cost from its own file only, rank 0's GPU running meanwhile in the
    one capture (``job.phase._rare_slow_calls`` now asks the call's own process's GPU)."""
    in_rank_folders(PAIR, tmp_path)
    (one,) = _reports(PAIR).values()
    apart = _reports(tmp_path)
    together = _gpus(one)
    for run, gpu in (("rank0", 0), ("rank1", 1)):
        (a,) = _gpus(apart[run]).values()
        b = together[gpu]
        assert a["breakdown"]["startup"] == pytest.approx(b["breakdown"]["startup"], abs=1e-3), run
        for kind in ("AllGather", "ReduceScatter"):
            assert a["collectives"][kind][2] == pytest.approx(b["collectives"][kind][2], abs=1e-3), (run, kind)


def test_control_a_peer_loading_before_it_enters_is_waited_for(tmp_path: Path) -> None:
    """Control (the same on BASE): rank 0 loads BEFORE launching its side (``write_load_through_exchange``), so rank
    1's all-to-all waits for its start-up, in one capture and from the folders alike."""
    tt.write_load_through_exchange(str(tmp_path / "one"), peers_load=False)
    tt.write_load_through_exchange(str(tmp_path / "apart"), rank_folders=True, peers_load=False)
    (one,) = _reports(tmp_path / "one" / "load_through_exchange").values()
    apart = _reports(tmp_path / "apart" / "load_through_exchange")
    for g in (_gpus(one)[1], *_gpus(apart["rank1"]).values()):
        assert g["collectives"]["AllToAll"][2] < 0.1 and g["breakdown"]["startup"] > 11.0, g["collectives"]
