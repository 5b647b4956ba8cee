"""A capture filtered to its collectives alone is said as such, never read as the job's steps (issue #37 class 1 and
3; h37-huntk66 *Left* 3, h37-straggle66).

Real trace: amd/HPCTrainingExamples ``MLExamples/TraceLens/fused_traces/merged_nccl_only.json.gz`` @82661816 (MIT,
4.4 KB, kept out of the repository; ``TB_GPU_ADVISOR_NCCL_ONLY`` points at it): TraceLens' fused 4-rank MI300X DDP
filtered to its 84 ``ncclDevKernel_Generic`` kernels and their ``nccl:*`` GPU ranges -- no compute kernel, no host
event.  On base: 7 steps of 16.1 ms from GPU bursts (the job's are ~45 ms), a gaps note and a launch-skew warning
blaming "host thread contention" for rank 3's lateness (its cause is its own work, which the file does not hold).

Generator (truth by construction): ``synthetic.torchtrace.collectives_only_like_tracelens`` of
``write_late_rank_fused``'s file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from synthetic.torchtrace import collectives_only_like_tracelens, write_late_rank_fused
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics

NCCL_ONLY = Path(os.environ.get("TB_GPU_ADVISOR_NCCL_ONLY")
                 or "/work/wild66/huntk66/runs/ncclonly/merged_nccl_only.json.gz")


def _fused(tmp_path: Path) -> tuple[Path, dict]:
    path = tmp_path / "fused" / "merged_all_events.json"
    path.parent.mkdir()
    write_late_rank_fused(str(path))
    return path, json.loads(path.read_text())


def _said_collectives_only(findings) -> None:
    rules = sorted({f.rule for f in findings if f.severity != "ok"})
    assert rules == ["capture_quality"], rules
    (f,) = [f for f in findings if f.rule == "capture_quality"]
    assert f.metric.id == "collectives_only" and "kept only the collectives" in f.title


def test_generated_collectives_only_filter_is_said_as_such(tmp_path):
    """Fails on base: read as steps of GPU bursts, with a launch-skew warning."""
    _, doc = _fused(tmp_path)
    path = tmp_path / "nccl" / "merged_nccl_only.json"
    path.parent.mkdir()
    only = collectives_only_like_tracelens(doc)
    path.write_text(json.dumps(only))
    m = host_metrics(read_trace(str(path)))
    assert m.capture.collectives_only == sum(1 for e in only["traceEvents"] if e.get("cat") == "kernel")
    _said_collectives_only(evaluate(m))


def test_the_full_file_is_no_filter(tmp_path):
    """Control (passes on base but for the fact's name): the file it was filtered from holds the job's work."""
    path, _ = _fused(tmp_path)
    m = host_metrics(read_trace(str(path)))
    assert not getattr(m.capture, "collectives_only", 0)
    assert not [f for f in evaluate(m) if f.metric is not None and f.metric.id == "collectives_only"]


def test_the_real_nccl_only_filter_is_said_as_such():
    """Fails on base: 7 guessed steps, a gaps note and "host thread contention"."""
    if not NCCL_ONLY.is_file():
        pytest.skip(f"{NCCL_ONLY} is not here (a real trace kept out of the repository)")
    m = host_metrics(read_trace(str(NCCL_ONLY)))
    assert m.capture.collectives_only == 84
    _said_collectives_only(evaluate(m))
