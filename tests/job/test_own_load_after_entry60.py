"""A rank that entered a collective and THEN pays a one-time cost waits for its late peers, not for its own host
(h37-phase60b; h37-ranks60 *Left* 1).

h37-ranks57 booked a collective running through its own process's one-time span as the start-up's: with only one
rank's file read, the own load stands in for the peers' loads at the same moment.  Where the peers' GPUs are in the
capture, their entries are known: the own span now leaves out the times this rank is inside a collective that some
peer has not entered (``job.peers.own_not_entered``); the peer's own spans say whether that peer was starting.  Where
every peer is inside too, nobody is late and the hosts' loads hold it (it stays start-up).

Truth by construction: ``synthetic.torchtrace.write_late_peer_through_load`` -- rank 0 enters the all-to-all first
and then loads for 12 ms; ranks 1 and 2 enter 1.8 and 4.5 ms later after their own GEMMs (no one-time cost).  Rank 0
waits 4.5 ms for their compute.  BASE: 11.34 ms start-up and 0 exposed on GPU 0.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from synthetic import torchtrace as tt


def _gpus(path: Path) -> dict[int, dict]:
    from tb_gpu_advisor.cli import main as cli

    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        cli.main(["report", str(path), "--format", "json", "--cache-dir", "off"])
    (report,) = json.loads(out.getvalue())["reports"]
    return {g["gpu"]: g for h in report["hosts"] for g in h["gpus"]}


def test_the_first_enterer_waits_for_its_late_peers_not_its_own_load(tmp_path: Path) -> None:
    """GPU 0's all-to-all: 4.5 ms exposed (ranks 1-2's compute), and its start-up less that wait (BASE: 0 exposed,
    11.34 ms start-up)."""
    made = tt.write_late_peer_through_load(str(tmp_path))
    g = _gpus(tmp_path / "late_peer_through_load")
    late = (25 * 180.0) / 1000.0  # rank 2 enters 25 GEMMs of 180 us after rank 0
    calls, total, exposed, *_ = g[0]["collectives"]["AllToAll"]
    assert exposed == pytest.approx(late, abs=0.03), g[0]["collectives"]
    # the 12 ms load less the wait, less the GPU's own work in it: no time booked twice
    assert 12.0 - late - 1.5 < g[0]["breakdown"]["startup"] < 12.0 - late, g[0]["breakdown"]
    assert g[1]["collectives"]["AllToAll"][2] == pytest.approx(made["wait_ms"] + tt.EXCHANGE_US / 1000, abs=0.02)


def test_control_both_ranks_loading_inside_the_collective_stays_start_up(tmp_path: Path) -> None:
    """Control (the same on BASE): both ranks load through their exchange (``write_load_through_exchange``, peers
    loading too) -- every peer is inside it, nobody is late: the wait is start-up, not exposed communication."""
    tt.write_load_through_exchange(str(tmp_path))
    for g in _gpus(tmp_path / "load_through_exchange").values():
        assert g["collectives"]["AllToAll"][2] < 0.1, g["collectives"]
