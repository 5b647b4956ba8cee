"""``torch.autograd.profiler``'s export before Kineto (PyTorch 1.7 and older; ``use_kineto=False``): a JSON list of
events with no category, the host's ops under the process ``"CPU functions"`` (issue #37 survey h37-survey-torch).

A real one (KeondoPark/luxmea ``profiler_trace.json``, no licence: checked, not kept; SURVEY.md) holds a VoteNet
forward's 1,442 ops, 48 of them ``aten::cudnn_convolution`` / ``aten::cudnn_batch_norm``: the model ran on a GPU,
whose side this profiler did not record.  Main read no host event at all and said "no GPU work [high confidence]".
Here by construction: the same layout, with cuDNN ops (GPU work not recorded) and with CPU matmuls (CPU work).
"""

from __future__ import annotations

import json
from pathlib import Path

from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host


def _legacy(tmp_path: Path, name: str, ops: list[str]) -> Path:
    ev, t = [], 100.0
    for op in ops * 5:
        ev.append({"name": op, "ph": "X", "ts": t, "dur": 400.0, "tid": 1, "pid": "CPU functions", "args": {}})
        t += 500.0
    path = tmp_path / f"{name}.pt.trace.json"
    path.write_text(json.dumps(ev))
    return path


def _job(path: Path) -> tuple[dict, list]:
    rep = analyze_host(HostFile(path.name.split(".")[0], str(path), path.stat().st_size, 0, "kineto"))
    assert rep.error is None, rep.error
    return rep.job, rep.findings


def test_legacy_cudnn_ops_are_gpu_work_whose_side_was_not_recorded(tmp_path: Path):
    job, findings = _job(_legacy(tmp_path, "gpu", ["aten::conv2d", "aten::cudnn_convolution", "aten::relu"]))
    assert job["kind"] != "no_gpu", job
    assert "aten::cudnn_convolution" in job["kind_evidence"] and "ran on the CPU" not in job["kind_evidence"], job
    assert findings[0].rule == "capture_quality" and findings[0].title == "The capture lost its GPU records"


def test_legacy_matmuls_alone_are_cpu_work(tmp_path: Path):
    job, findings = _job(_legacy(tmp_path, "cpu", ["aten::linear", "aten::addmm", "aten::relu"]))
    assert job["kind"] == "no_gpu" and "ran on the CPU" in job["kind_evidence"], job
    assert findings[0].title == "No GPU activity in the capture"
