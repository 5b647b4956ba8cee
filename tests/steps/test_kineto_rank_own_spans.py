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


#: One rank's compute a step in ``ddp``'s body (``forward_backward`` + ``optimizer``), us: 4 x (addmm 180 + relu 20)
#: + 4 x (relu grad 35 + 2 GEMMs 170, 160 + sum 22) + the SGD update 42.
DDP_COMPUTE_MS = (4 * (180.0 + 20.0) + 4 * (35.0 + 170.0 + 160.0 + 22.0) + 42.0) / 1000


def _phase_spans(logdir: Path, scenario: str) -> dict[str, Any]:
    """The one host's report of ``scenario`` (a ``ddp`` job of 4 ranks, one file each) with each ``ProfilerStep#k``
    dropped and its window split into the user's ``record_function`` phases: ``forward`` (to the first backward op),
    ``backward`` (to the all-reduce), ``optimizer`` (to the step's end)."""
    for path in tt.write_run(str(logdir), scenario):
        doc = json.loads(Path(path).read_text())
        ev = doc["traceEvents"]
        phases = []
        for st in [e for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")]:
            t0, t1 = st["ts"], st["ts"] + st["dur"]
            ops = [e for e in ev if e.get("ph") == "X" and e.get("tid") == st["tid"] and t0 < e["ts"] < t1]
            bwd = min(e["ts"] for e in ops if "backward" in e["name"])
            opt = min(e["ts"] for e in ops if e["name"].startswith("nccl:"))
            for name, a, b in (("forward", t0 + 0.5, bwd - 0.5), ("backward", bwd - 0.4, opt - 0.5),
                               ("optimizer", opt - 0.4, t1 - 0.5)):
                phases.append({**st, "name": name, "ts": a, "dur": b - a, "args": {}})
        doc["traceEvents"] = [e for e in ev if not e.get("name", "").startswith("ProfilerStep#")] + phases
        tt.write_doc(path, doc)
    code, report = ran_report(logdir)
    assert code in (0, 1)
    (host,) = report["hosts"]
    return host


@pytest.mark.parametrize("scenario", ["ddp_balanced", "ddp_launch_skew"])
def test_ranks_phase_spans_read_each_ranks_iterations(tmp_path: Path, scenario: str) -> None:
    """Control (h37-probe47k *Left* 2): iterations marked only by ``forward`` / ``backward`` / ``optimizer`` spans on
    4 ranks (ranks together, or each 400 us behind the one before) read a training job's 12 iterations, the first and
    last dropped, each rank's own: 10 kept steps of the body's compute on every GPU.  (Each step opens at a phase, not
    at the forward: *Left* in the SURVEY.)"""
    host = _phase_spans(tmp_path, scenario)
    assert host["job"]["kind"] == "training"
    assert host["steps"]["source"] == "annotation_spans"
    assert host["steps"]["found"] == 12
    assert "on 4 ranks' threads" in host["steps"]["note"]
    for g in range(4):
        assert _rows(host, g) == [(k, round(DDP_COMPUTE_MS, 3)) for k in range(1, 11)], g
