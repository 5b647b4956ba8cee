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

import io
import json
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.cli import main as cli

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
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        assert cli.main(["report", str(logdir), "--format", "json", "--cache-dir", "off"]) in (0, 1)
    (report,) = json.loads(out.getvalue())["reports"]
    (host,) = report["hosts"]
    return host


def _kept(late: int) -> list[int]:
    """The kept steps' numbers by construction (rank 0's ``ProfilerStep#2`` numbered 0): of steps ``#2`` .. ``#13``,
    the first and the last dropped, those before rank 1's capture opened (``#<2 + late>``), and the module load's
    (``RANK_PAUSE_STEP``, the warm-up)."""
    return [k - 2 for k in range(3, 13) if k >= 2 + late and k != tt.RANK_PAUSE_STEP]


def _rows(host: dict[str, Any], gpu: int) -> list[tuple[int, float]]:
    """(step, compute ms) of each kept step on ``gpu``, in step order."""
    return [(r["step"], round(r["breakdown"].get("device_compute", 0.0), 3))
            for r in sorted(host["step_rows"], key=lambda r: r["step"]) if r["gpu"] == gpu]


@pytest.mark.parametrize("late", [0, 2, 3])
def test_each_ranks_repeated_spans_are_its_own_steps(tmp_path: Path, late: int) -> None:
    """Every kept step 3.2 ms of compute on each GPU, the same steps on both (``_kept``), the steps before rank 1's
    capture opened said.  BASE: GPU 0 0.0 ms in each step after rank 1's module load (rank 0's windows)."""
    host = _host(tmp_path, 2, late)
    assert host["steps"]["source"] == "annotation_spans"
    for g in (0, 1):
        assert _rows(host, g) == [(k, COMPUTE_MS) for k in _kept(late)], g
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
    assert _rows(host, 0) == [(k, COMPUTE_MS) for k in range(1, 11)]
