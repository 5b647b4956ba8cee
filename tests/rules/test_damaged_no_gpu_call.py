"""A damaged file whose readable part holds no GPU call is no proof that the work ran on the CPU (h37-ui11).

Real trace: ``tests/fixtures/h200_waits/torch_unrecorded_host_work`` (a bf16 MLP trained on an H200; PROVENANCE.md)
cut, in a temporary folder, to its first 5,000 compressed bytes: 241 host events survive, none a CUDA call -- they
precede the first launch.  On main its report said "the host made no GPU runtime call: the work ran on the CPU" and
"If the job should use the GPU, move the model and its inputs there" at high confidence: a verdict on the part read.
The control, ``tests/fixtures/h200_jobs/torch_cpu_only`` (a CNN trained on the CPU, whole), keeps those words."""

from __future__ import annotations

import os
import shutil

from tests.support.paths import REPO
from tests.support.run_report import run_report

FIXTURES = os.path.join(REPO, "tests", "fixtures")
GPU_RUN = os.path.join(FIXTURES, "h200_waits", "torch_unrecorded_host_work")
CPU_RUN = os.path.join(FIXTURES, "h200_jobs", "torch_cpu_only")


def _capture_finding(report):
    (f,) = [f for f in report.findings if f.rule == "capture_quality"]
    return f


def test_a_cut_gpu_trace_whose_readable_part_holds_no_gpu_call_asks_for_the_whole_file(tmp_path):
    (name,) = os.listdir(GPU_RUN)
    os.makedirs(tmp_path / "cut")
    with open(os.path.join(GPU_RUN, name), "rb") as src, open(tmp_path / "cut" / name, "wb") as dst:
        dst.write(src.read(5000))
    report = run_report(tmp_path, "cut")
    host = report.hosts[0]
    assert host.damage, "the cut file is read as damaged"
    f = _capture_finding(report)
    text = f.title + " " + f.summary + " " + " ".join(a.text for a in f.actions)
    assert f.title == "No GPU record in the part of the damaged file that was read"
    assert "ran on the CPU" not in text and "move the model" not in text
    assert "Read the whole file" in text
    assert host.job["kind_confidence"] == "low" and "ran on the CPU" not in host.job["kind_evidence"]


def test_a_whole_cpu_only_trace_still_says_the_work_ran_on_the_cpu(tmp_path):
    shutil.copytree(CPU_RUN, tmp_path / "cpu")
    report = run_report(tmp_path, "cpu")
    assert not report.hosts[0].damage
    f = _capture_finding(report)
    assert "the work ran on the CPU" in f.summary and "move the model and its inputs there" in f.summary
