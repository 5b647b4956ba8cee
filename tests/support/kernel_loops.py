"""The job an Nsight export of a loop of named kernels reads as: one helper for the job-kind tests that write such a
loop (a 10-step loop whose every step runs the given kernels in turn, no NVTX, no op -- as the real exports they
stand for) and say what the job stage made of it."""

from __future__ import annotations

import json
from pathlib import Path

from synthetic import nsysexport as nx
from tests.support.cli_report import in_process


def loop_job(tmp_path: Path, kernels: tuple[str, ...]) -> dict:
    """The report's job of a 10-step loop whose every step runs ``kernels`` in turn, no NVTX, no op."""
    p = tmp_path / "loop.sqlite"
    nx.write(str(p), nx.NsysJob(steps=10, ops=len(kernels), kernel_us=300.0, step_kernels=kernels, step_range=None,
                                autograd_nvtx=False, h2d_us=200.0, shuffle=False))
    out = in_process("report", str(p), "--format", "json", "--cache-dir", "off")
    return json.loads(out.stdout)["reports"][0]["hosts"][0]["job"]


def said(job: dict) -> str:
    """The job's kind, its confidence and its evidence, as one line to compare."""
    return f"{job['kind']}, {job['kind_confidence']}: {job['kind_evidence']}"
