"""Per-rank memory snapshots of one job are one session with a host per rank (``formats/snapshot/layout.rank_sets``).

Layout as distributed programs write it (read upstream: torchtitan's ``memory_snapshot/iteration_N/
rank{r}_memory_snapshot.pickle``, one file per rank at an iteration; ``snapshot_rank{r}.pickle``).  Truth by
construction (``synthetic/memsnapshot.py``): rank 0 trains within its GPU (``training_iterations``), rank 1 runs out
of memory (``oom_activations``).  Each rank's findings stay its own: the out-of-memory finding is rank 1's alone, and
each rank's peak is its own.  Controls: snapshots named for no rank, and the same rank's files of two iterations
(two folders), stay a session each."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.discover.logdir import discover
from tests.support.report_store import session_report


def _write(folder: Path, names: list[str]) -> list[ms.Scenario]:
    """Rank 0's snapshot trains, every later one runs out of memory."""
    made = [ms.training_iterations() if i == 0 else ms.oom_activations() for i in range(len(names))]
    for name, sc in zip(names, made):
        ms.write(str(folder / name), sc.doc)
    return made


@pytest.mark.parametrize("names", [["rank0_memory_snapshot.pickle", "rank1_memory_snapshot.pickle"],
                                   ["snapshot_rank0.pickle", "snapshot_rank1.pickle", "snapshot_rank2.pickle"]])
def test_one_jobs_rank_snapshots_are_one_session(tmp_path: Path, names: list[str]) -> None:
    folder = tmp_path / "memory_snapshot" / "iteration_10"
    _write(folder, names)
    sessions = discover(str(tmp_path))
    assert len(sessions) == 1
    assert [h.path for h in sessions[0].hosts] == [str(folder / n) for n in names]
    assert len({h.host for h in sessions[0].hosts}) == len(names)


def test_each_ranks_findings_are_its_own(tmp_path: Path) -> None:
    folder = tmp_path / "memory_snapshot" / "iteration_10"
    made = _write(folder, ["rank0_memory_snapshot.pickle", "rank1_memory_snapshot.pickle"])
    (s,) = discover(str(tmp_path))
    report = session_report(s)
    oom = [f for f in report.findings if f.rule == "oom_snapshot"]
    assert [f.host for f in oom] == ["rank1_memory_snapshot"]
    peaks = {h.host: max(g.memory["peak_allocated_bytes"] for g in h.gpus if g.memory) for h in report.hosts}
    assert peaks["rank0_memory_snapshot"] < made[1].truth["allocated"] <= peaks["rank1_memory_snapshot"]


def test_snapshots_of_no_rank_or_two_iterations_stay_apart(tmp_path: Path) -> None:
    _write(tmp_path / "run", ["before.pickle", "after.pickle"])
    _write(tmp_path / "memory_snapshot" / "iteration_10", ["rank0_memory_snapshot.pickle"])
    _write(tmp_path / "memory_snapshot" / "iteration_20", ["rank0_memory_snapshot.pickle"])
    sessions = discover(str(tmp_path))
    assert sorted(len(s.hosts) for s in sessions) == [1, 1, 1, 1]
