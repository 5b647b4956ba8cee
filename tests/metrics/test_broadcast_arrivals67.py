"""Broadcasts are matched across a host's GPUs, their root's early exit read as no lateness and no wait, and a file
filtered to its collectives keeps the ranks its GPU processes name (issue #37 deliverable 3; h37-late67).

A broadcast's root returns once it has sent, and a rank once its data is in and passed on: its ends do not fall
together, and the pairing's test that they do left every broadcast unmatched -- the fused MI300X DDP's 2 a step, in
which ranks 1-2 wait ~1.3 ms for rank 3.  Real traces: amd/HPCTrainingExamples ``MLExamples/TraceLens/fused_traces``
@82661816 (MIT, kept out of the repository; ``TB_GPU_ADVISOR_FUSED_DDP``, ``TB_GPU_ADVISOR_NCCL_ONLY``).

Generator (truth by construction): ``synthetic.torchtrace.write_late_rank_fused(broadcast_us=...)``: each step opens
with the buffers broadcast, root rank 0 leaving after 15 us, rank 3 entering it 60 us after the others.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from synthetic.torchtrace import write_collectives_only, write_late_rank_fused
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics

FUSED = Path(os.environ.get("TB_GPU_ADVISOR_FUSED_DDP")
             or "/work/wild66/huntk66/runs/fused/merged_all_events.json.gz")
NCCL_ONLY = Path(os.environ.get("TB_GPU_ADVISOR_NCCL_ONLY")
                 or Path(__file__).resolve().parents[1] / "fixtures" / "real" / "tracelens_merged_nccl_only.json.gz")


def test_generated_broadcasts_are_matched_and_their_root_waits_for_none(tmp_path):
    """Fails on base (the broadcasts unpaired: 8 calls, not 12; the others' wait in them left out)."""
    path = tmp_path / "fused" / "merged_all_events.json"
    path.parent.mkdir()
    truth = write_late_rank_fused(str(path), broadcast_us=15.0)
    m = host_metrics(read_trace(str(path)))
    arr = m.comm.arrivals
    assert arr["calls"] == 3 * m.steps.count and arr["last_in"][truth["late_gpu"]] == arr["calls"]
    for gpu, wait in truth["wait_ms"].items():
        assert arr["wait_ms"][gpu] == pytest.approx(wait, abs=1e-3)


def test_a_collectives_only_file_keeps_the_ranks_its_gpu_processes_name(tmp_path):
    """Fails on base: no GPU had a rank (no launching process is left to read it from)."""
    only = tmp_path / "merged_nccl_only.json"
    write_collectives_only(str(only))
    m = host_metrics(read_trace(str(only)))
    assert {g.gpu: g.rank for g in m.gpus if g.active} == {0: 0, 1: 1, 2: 2, 3: 3}


def test_the_real_fused_ddps_broadcasts_are_matched():
    """Fails on base: 15 calls matched (the all-reduces), the 6 buffer broadcasts left out."""
    if not FUSED.is_file():
        pytest.skip(f"{FUSED} is not here (a 4.2 MB real trace kept out of the repository)")
    arr = host_metrics(read_trace(str(FUSED))).comm.arrivals
    assert arr["calls"] == arr["last_in"][5] == 21


def test_the_real_nccl_only_file_names_its_ranks():
    """Fails on base: ranks None."""
    if not NCCL_ONLY.is_file():
        pytest.skip(f"{NCCL_ONLY} is not here (a real trace kept out of the repository)")
    m = host_metrics(read_trace(str(NCCL_ONLY)))
    assert {g.gpu: g.rank for g in m.gpus if g.active} == {2: 0, 3: 1, 4: 2, 5: 3}
