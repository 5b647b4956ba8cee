"""A rank that entered a collective its peer had not, and THEN paid a one-time cost, waits for that peer -- read the
same from one capture of both ranks and from the rank's own folder (h37-phase61; h37-phase60b's second half).

h37-phase60b read it in one capture only (``job.peers.own_not_entered``: the peers' GPUs in the trace say who had
entered); from rank folders the peers' entries were not carried, so the rank's own span still stood in for its peers'
loads (h37-ranks57) and one rank read two ways by layout.  Now each peer's file gives, from the one read that gives
its one-time spans, the times its GPUs are inside a collective on the shared clock (``job.peers.of_peer``,
``PeerView.all_in``), placed on the rank's timeline (``Job.peer_all_in``) and asked by the same function.

Truth by construction: ``synthetic.torchtrace.write_late_peer_through_load`` -- rank 0 enters the all-to-all first,
then loads a module for 12 ms; ranks 1 and 2 enter 10 and 25 GEMMs (180 us each) later, none paying a one-time cost:
rank 0 waits 4.5 ms for rank 2's compute.  BASE from ``rank0/``: 0 exposed, 11.34 ms start-up.

Real (``wild/tp_rtx4090_two_ranks``, MIT), read by hand on the shared clock (ms from rank 0's first collective):
rank 0 entered every collective first.  Its first ReduceScatter runs 0.00-17.75, rank 1 entering at 14.78; rank 0's
host is in a 14.03 ms first ``cudaLaunchKernel`` (``aten::mean``, 4.05-18.08).  Rank 1 meanwhile finishes its own
first launch (a 367.69 ms ``cudaLaunchKernel`` under ``aten::embedding``, to 8.22) and a 4.68 ms launch (9.77-14.44)
-- its one-time costs, start-up rank 0 waits through -- but between them (8.22-9.77) and after (14.44-14.78) runs
ordinary ops: 1.89 ms of waiting for rank 1's work.  The third ReduceScatter runs 80.45-97.65, rank 1 entering at
94.46; rank 0's host loads ``aten::silu``'s module (85.40-102.22); rank 1 is in ``cudaFree`` (68.82-80.27),
``cudaOccupancyMaxActiveBlocksPerMultiprocessor`` (81.28-85.70) and a first attention launch (89.77-91.09), its
one-time costs, and otherwise runs its attention's ops: 85.70-89.77 and 91.09-94.46, 7.44 ms of waiting for rank 1's
work.  So rank 0's ReduceScatter holds 9.33 ms more exposed communication than BASE's 30.97 ms (40.30), and its
start-up 9.33 ms less, with 0.09 ms of the AllGather (rank 1 in no collective from 97.98 to its entry at 98.07).
BASE: one capture and ``rank0/`` both 444.46 ms start-up / 30.97 ms; phase60b alone: 435.05 / 40.30 in one capture,
444.46 / 30.97 from the folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tests.support.cli_report import gpus_of as _gpus
from tests.support.cli_report import reports_by_run as _reports
from tests.support.paths import TP_PAIR as PAIR
from tests.support.paths import in_rank_folders

#: rank 0 waits for rank 2's 25 GEMMs of 180 us, less nothing: it entered first
LATE_MS = 25 * 180.0 / 1000.0


def _reading(g: dict) -> tuple[float, ...]:
    """Start-up and each collective type's exposed time of one GPU."""
    return (g["breakdown"]["startup"], *(g["collectives"][k][2] for k in sorted(g["collectives"])))


def test_rank_folder_first_enterer_waits_for_its_late_peers_as_in_one_capture(tmp_path: Path) -> None:
    """``rank0/``: its all-to-all is 4.5 ms exposed (rank 2's compute) and its start-up the 12 ms load less that wait,
    as one capture of the three ranks reads GPU 0 (BASE from the folder: 0 exposed, 11.34 ms start-up)."""
    tt.write_late_peer_through_load(str(tmp_path / "one"))
    tt.write_late_peer_through_load(str(tmp_path / "apart"), rank_folders=True)
    (one,) = _reports(tmp_path / "one" / "late_peer_through_load").values()
    (g0,) = _gpus(_reports(tmp_path / "apart" / "late_peer_through_load")["rank0"]).values()
    assert g0["collectives"]["AllToAll"][2] == pytest.approx(LATE_MS, abs=0.03), g0["collectives"]
    assert 12.0 - LATE_MS - 1.5 < g0["breakdown"]["startup"] < 12.0 - LATE_MS, g0["breakdown"]
    assert _reading(g0) == pytest.approx(_reading(_gpus(one)[0]), abs=1e-3)


def test_the_real_pair_rank_zero_reads_its_waits_for_rank_one_in_both_layouts(tmp_path: Path) -> None:
    """The real pair: rank 0 read from one capture and from ``rank0/`` alike -- 9.33 ms of its ReduceScatter (by
    hand, module docstring) moved from its own start-up to exposed communication (BASE: 444.46 ms start-up, 30.97 ms
    exposed, in both layouts), rank 1 unchanged (it entered every collective second)."""
    in_rank_folders(PAIR, tmp_path)
    (one,) = _reports(PAIR).values()
    apart = _reports(tmp_path)
    (r0,) = _gpus(apart["rank0"]).values()
    (r1,) = _gpus(apart["rank1"]).values()
    for layout, g0, g1 in (("one capture", _gpus(one)[0], _gpus(one)[1]), ("rank folders", r0, r1)):
        assert g0["collectives"]["ReduceScatter"][2] == pytest.approx(30.97 + 1.89 + 7.44, abs=0.03), layout
        # the AllGather's 0.33 ms by hand (97.74-98.07): the same call matched since h37-job62 (0.09 "inside any
        # collective" before: rank 1 finishing its ReduceScatter until 97.98)
        assert g0["breakdown"]["startup"] == pytest.approx(444.46 - 1.89 - 7.44 - 0.33, abs=0.05), layout
        assert g1["collectives"]["ReduceScatter"][2] == pytest.approx(32.05, abs=0.01), layout
        # rank 0 enters its first AllGather at 97.74 and rank 1 the same call at 98.07 (by hand, h37-job62): 0.33 ms
        # more exposed than the 472.72 of any start-up reading; rank 1 unchanged
        assert g0["collectives"]["AllGather"][2] == pytest.approx(472.72 + 0.33, abs=0.03), layout
        assert g1["collectives"]["AllGather"][2] == pytest.approx(472.09, abs=0.01), layout
