"""Repeated ``record_function`` spans NOT named like a step, of several ranks in Kineto files: each rank's steps are
its own spans (h37-probe47k *Left* 1; its step-named twin is ``tests/steps/test_kineto_unnumbered_rank_steps.py``).

By construction (``synthetic.torchtrace.write_rank_pause(ranks=2, late=L)``: two ranks of one node, each its own
file, rank 1 loading a module once at the head of its ``ProfilerStep#<RANK_PAUSE_STEP>``, rank 1's capture opened L
steps after rank 0's), every ``ProfilerStep#k`` annotation renamed ``fwd_bwd_opt`` -- the user's
``record_function("fwd_bwd_opt")`` around each iteration, a name no step reading knows.  Truth: each rank ran 3.2 ms of
compute each step; of the loop's steps ``#2`` .. ``#13`` (numbered from rank 0's first, 0), the first and last dropped,
those before rank 1's capture opened dropped and said, the module load's step dropped as warm-up.

BASE (daf93aca) read them as the program's repeated spans (``job.structure.span_steps``) of the one thread whose
instances held the most launches by time -- rank 0's: rank 1's GPU placed on rank 0's windows, GPU 0's kept steps
after rank 1's 30 ms load 0.0 ms of compute (late 0: steps 6-10; late 2: 4-8; late 3: 3-7).  Now each rank's
thread's own spans (``steps.nvtx_ranges._span_lines``), numbered beside the first thread's, as unnumbered step ranges
are (h37-probe48k).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from synthetic import torchtrace as tt
from tests.support.cli_report import ran_report
from tests.support.phase_spans import DDP_COMPUTE_MS, compute_rows, phase_spans_host

COMPUTE_MS = 3.2  # each rank's kernels a step, by construction (``rank_pause``)


def _host(logdir: Path, ranks: int, late: int, paused: int | None = 1) -> dict[str, Any]:
    """The one host's report of ``write_rank_pause(ranks, late=late, paused=paused)``, each ``ProfilerStep#k``
    annotation (host and GPU) renamed ``fwd_bwd_opt``."""
    for path in tt.write_rank_pause(str(logdir), ranks=ranks, late=late, paused=paused):
        doc = json.loads(Path(path).read_text())
        for e in doc["traceEvents"]:
            if re.fullmatch(r"ProfilerStep#\d+", e.get("name", "")):
                e["name"] = "fwd_bwd_opt"
        tt.write_doc(path, doc)
    code, report = ran_report(logdir)
    assert code in (0, 1)
    (host,) = report["hosts"]
    return host


def _kept(late: int) -> list[int]:
    """The kept steps' numbers by construction (rank 0's ``ProfilerStep#2`` numbered 0): of steps ``#2`` .. ``#13``,
    the first and the last dropped, those before rank 1's capture opened (``#<2 + late>``), and the module load's
    (``RANK_PAUSE_STEP``, the warm-up)."""
    return [k - 2 for k in range(3, 13) if k >= 2 + late and k != tt.RANK_PAUSE_STEP]


@pytest.mark.parametrize("late", [0, 2, 3])
def test_each_ranks_repeated_spans_are_its_own_steps(tmp_path: Path, late: int) -> None:
    """Every kept step 3.2 ms of compute on each GPU, the same steps on both (``_kept``), the steps before rank 1's
    capture opened said.  BASE: GPU 0 0.0 ms in each step after rank 1's module load (rank 0's windows)."""
    host = _host(tmp_path, 2, late)
    assert host["steps"]["source"] == "annotation_spans"
    for g in (0, 1):
        assert compute_rows(host, g) == [(k, COMPUTE_MS) for k in _kept(late)], g
    assert "each rank's own" in host["steps"]["note"]
    assert "on 2 ranks' threads" in host["steps"]["note"]
    assert ("before GPU1's capture opened" in host["steps"]["note"]) == (late > 0)


def test_one_ranks_repeated_spans_read_as_before(tmp_path: Path) -> None:
    """Control, one rank (no module load): its spans are the one thread's as before -- 12 found, the first and last
    dropped, 10 kept of 3.2 ms each, numbered 1-10."""
    host = _host(tmp_path, 1, 0, paused=None)
    assert host["steps"]["source"] == "annotation_spans"
    assert "each rank's own" not in host["steps"]["note"]
    assert host["steps"]["found"] == 12
    assert compute_rows(host, 0) == [(k, COMPUTE_MS) for k in range(1, 11)]


@pytest.mark.parametrize("scenario", ["ddp_balanced", "ddp_launch_skew"])
def test_ranks_phase_spans_read_each_ranks_iterations(tmp_path: Path, scenario: str) -> None:
    """Control (h37-probe47k *Left* 2): iterations marked only by ``forward`` / ``backward`` / ``optimizer`` spans on
    4 ranks (ranks together, or each 400 us behind the one before) read a training job's 12 iterations, the first and
    last dropped, each rank's own: 10 kept steps of the body's compute on every GPU.  (Each step opens at a phase, not
    at the forward: *Left* in the SURVEY.)"""
    host = phase_spans_host(tmp_path, scenario)
    assert host["job"]["kind"] == "training"
    assert host["steps"]["source"] == "annotation_spans"
    assert host["steps"]["found"] == 12
    assert "on 4 ranks' threads" in host["steps"]["note"]
    for g in range(4):
        assert compute_rows(host, g) == [(k, round(DDP_COMPUTE_MS, 3)) for k in range(1, 11)], g
