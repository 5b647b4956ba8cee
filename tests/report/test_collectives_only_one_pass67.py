"""A capture that kept the GPUs' collectives alone is one pass with no step of the job, on every screen (h37-nccl67).

Its header said "collectives only: no step of the job in it" and its finding said no check of the steps is made, yet
the rest of the report read the collectives' GPU bursts as 7 guessed steps of 16.1 ms: "Device step-time share 0.0% !!",
"step ms 16.14" and "collectives/step 2.6" in the GPUs table, step rows, an achievable step of 16.1 ms, collectives
"per step and GPU".  The job's reading now says what the window is (``Kind.window`` "collectives_only", which times no
GPU step), and every table follows it: per pass or n/a, never per step.

Generator (truth by construction): ``synthetic.torchtrace.collectives_only_like_tracelens`` of
``write_late_rank_fused``'s 4-rank file: 12 all-reduces on each of 4 GPUs, nothing else.
Real trace: amd/HPCTrainingExamples ``MLExamples/TraceLens/fused_traces/merged_nccl_only.json.gz`` @82661816 (MIT,
kept out of the repository; ``TB_GPU_ADVISOR_NCCL_ONLY`` points at it): 84 collective kernels (60 all-reduces, 24
broadcasts) of ranks 0-3; skipped where absent.

Both fail on base 18a90de9: the "!!" headline, the 16 ms step and the step rows.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from synthetic.torchtrace import write_collectives_only
from tb_gpu_advisor.report.render import to_text
from tb_gpu_advisor.runtime.pipeline import analyze_session

NCCL_ONLY = Path(os.environ.get("TB_GPU_ADVISOR_NCCL_ONLY")
                 or Path(__file__).resolve().parents[1] / "fixtures" / "real" / "tracelens_merged_nccl_only.json.gz")


def _report(path: Path):
    return analyze_session("run", "s", [SimpleNamespace(host="nccl", path=str(path), format="kineto")])


def _one_pass_no_step(rep) -> dict:
    """The report's properties of a window with no step of the job: the header and the job line say so, no step is
    timed or promised anywhere, no per-step label or "!!" in the text; returns the host's JSON."""
    text = to_text(rep)
    head = text.splitlines()[0]
    assert "collectives only: no step of the job in it" in head and " steps" not in head, head
    assert "collectives alone" in text and "none of the job's steps in it" in text
    assert "!!" not in text, text  # no alarm on a share of a step the capture does not hold
    assert "collectives/step" not in text and "per step and GPU" not in text, text
    assert "Steps on" not in text and "If every fix lands" not in text, text
    d = json.loads(json.dumps(rep.to_dict()))
    h = d["hosts"][0]
    assert h["job"]["marks_no_job_step"] and h["job"]["collectives_only"]
    assert h["steps"]["found"] == 0 and h["steps"]["source"] == "whole_capture"
    assert h["step_rows"] == [] and not h["achievable"] and not d["achievable"]
    assert all(g["step_ms"] is None for g in h["gpus"])
    share = next(c for c in h["headline"] if c["id"] == "device_step_share")
    assert share["value"] is None and share["status"] == "unknown"
    assert [f["metric"]["id"] for f in d["findings"] if f["metric"]] == ["collectives_only"]
    return h


def test_generated_collectives_only_capture_is_one_pass_with_no_step(tmp_path):
    """Fails on base: 7 guessed steps (the GPU bursts of the collectives), a "!!" headline, step rows."""
    out = tmp_path / "merged_nccl_only.json"
    write_collectives_only(str(out))
    kernels = [e for e in json.loads(out.read_text())["traceEvents"] if e.get("cat") == "kernel"]
    h = _one_pass_no_step(_report(out))
    per_gpu = len(kernels) / len({e["pid"] for e in kernels})  # truth: each rank ran the same all-reduces
    assert [g["collective_calls_per_step"] for g in h["gpus"]] == [per_gpu] * 4
    assert h["communication"]["rows"][0][:2] == ["AllReduce", per_gpu]


def test_the_real_nccl_only_file_is_one_pass_with_no_step():
    """Fails on base: "Device step-time share 0.0% !!", "step ms 16.14", "collectives/step 2.6"."""
    if not NCCL_ONLY.is_file():
        pytest.skip(f"{NCCL_ONLY} is not here (a real trace kept out of the repository)")
    rep = _report(NCCL_ONLY)
    h = _one_pass_no_step(rep)
    f = next(f for f in rep.findings if f.metric is not None and f.metric.id == "collectives_only")
    assert f.metric.value == 84 and "(AllReduce, Broadcast)" in f.summary
    assert sorted(g["rank"] for g in h["gpus"]) == [0, 1, 2, 3]
    assert sum(g["collective_calls_per_step"] for g in h["gpus"]) == 84
