"""Property: in one capture of several ranks, each rank's one-time costs are its own process's -- the same as its own
file read alone reads (h37-phase60b; h37-ranks60 *Left* 2).

``job.phase`` takes a runtime call for a one-time cost only where the GPU sat idle through it (a full launch queue
keeps the GPU busy instead).  h37-ranks60 made the rare slow calls ask the call's own process's GPUs; the slow first
launches, first op calls, a thread's first asynchronous call, the context's creation and the silences before a first
run still asked EVERY GPU of the capture, so a rank's module load read as no one-time cost wherever another rank's GPU
computed meanwhile.  Now every check asks through one helper (``job.phase._calls_idle`` / ``_gpu_idle_through`` with
the calls' lines).

Truth by construction: ``synthetic.torchtrace.write_late_peer_through_load(extra_gemms=(0, 10, 80))`` -- rank 0
loads a module in a 12 ms first launch, its own GPU idle, while rank 2's GPU runs 80 forward GEMMs (14.4 ms).  Each
rank's file alone holds its own one-time costs; in one capture the other ranks' GPUs must not change them.  BASE:
rank 0's load read as none in the one capture.  Real: ``wild/tp_rtx4090_two_ranks`` (MIT, h37-ranks60) -- each rank's
one-time calls in the one capture are those of its file alone (a control: its checks already agreed on BASE).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor import formats
from tb_gpu_advisor.job import detect_job
from tb_gpu_advisor.model.trace import device_launches

PAIR = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "tp_rtx4090_two_ranks"


def _trace(paths: list[Path]):  # noqa: ANN202 - a Trace
    """The files ``paths`` (one folder's ranks) read as one capture."""
    (folder,) = {p.parent for p in paths}
    from tb_gpu_advisor.discover.logdir import discover

    (session,) = discover(str(folder))
    (host,) = session.hosts
    assert sorted(Path(p).name for p in [r.path for r in host.ranks] or [host.path]) == sorted(p.name for p in paths)
    return formats.read(host)


def _one_time_calls(trace, lines: np.ndarray | None = None) -> list[tuple[str, int]]:  # noqa: ANN001
    """The one-time calls (``OneTime.calls``) of the process on ``lines`` (every one where None): (name, ns length)."""
    phase = detect_job(trace, device_launches(trace.h, trace.devices)).phase
    h = trace.h
    calls = np.asarray(phase.calls, np.int64)
    if lines is not None:
        calls = calls[np.isin(h.line[calls], lines)]
    return sorted((h.names[int(h.name[i])], int(h.end[i] - h.start[i]) // 1000) for i in calls.tolist())


def _per_rank(folder: Path, tmp_path: Path) -> list[tuple[list, list]]:
    """(in the one capture, read alone) one-time calls of each rank's process, per rank file of ``folder``."""
    files = sorted(folder.glob("*.json*"))
    together = _trace(files)
    out = []
    for k, path in enumerate(files):
        alone_dir = tmp_path / f"alone{k}"
        alone_dir.mkdir()
        shutil.copy(path, alone_dir / path.name)
        alone = _trace([alone_dir / path.name])
        (gpu,) = [d.gpu for d in alone.devices if len(d)] or [None]
        lines = np.asarray(together.gpu_host_lines[gpu])
        out.append((_one_time_calls(together, lines), _one_time_calls(alone)))
    return out


def test_a_ranks_load_through_anothers_compute_is_its_own_one_time_cost(tmp_path: Path) -> None:
    """Rank 0's 12 ms module load (its GPU idle) while rank 2 computes: a one-time cost in the one capture as in its
    own file (BASE: none in the one capture -- rank 2's busy GPU was read as rank 0's)."""
    tt.write_late_peer_through_load(str(tmp_path / "w"), extra_gemms=(0, 10, 80))
    ranks = _per_rank(tmp_path / "w" / "late_peer_through_load", tmp_path)
    together0, alone0 = ranks[0]
    assert alone0 and max(ns for _, ns in alone0) > 11_000_000, alone0  # truth: its file holds the 12 ms load
    for together, alone in ranks:
        assert together == alone


@pytest.mark.parametrize("scenario", ["load_through_exchange", "late_peer_through_load"])
def test_generated_ranks_read_their_own_one_time_costs_in_one_capture(scenario: str, tmp_path: Path) -> None:
    """Property over the generator's rank scenarios (each rank's one-time calls, one capture vs alone)."""
    write = {"load_through_exchange": lambda d: tt.write_load_through_exchange(d, ranks=3, peers_load=False),
             "late_peer_through_load": lambda d: tt.write_late_peer_through_load(d, extra_gemms=(40, 0, 60))}[scenario]
    write(str(tmp_path / "w"))
    for together, alone in _per_rank(tmp_path / "w" / scenario, tmp_path):
        assert together == alone


def test_control_the_real_pair_reads_each_ranks_one_time_calls_as_alone(tmp_path: Path) -> None:
    """Control (BASE too, after h37-ranks60's rare-slow-call fix): the real pair's one-time calls per rank."""
    ranks = _per_rank(PAIR, tmp_path)
    assert all(alone for _, alone in ranks)
    for together, alone in ranks:
        assert together == alone
