"""A model left on the CPU, timed with CUDA events, is a model on the CPU -- not a window that ended in start-up
(issue #37, every window is a report; h37-probe42w).

``job.kind._cpu_compute_ops`` read "no CUDA call while the matmuls ran" as the sign of a model on the CPU.  A
benchmark timing each step with ``torch.cuda.Event(enable_timing=True)`` calls ``cudaEventRecord`` /
``cudaEventSynchronize`` / ``cudaEventElapsedTime`` between them, which queue no GPU work; main then fell through to
"start-up only: 32 CUDA calls ... skip start-up with torch.profiler's schedule", advice that records the same window
again.  Truth by construction: ``torchtrace.write_event_timed_cpu_model``.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.cli import main as cli


def _report(folder: str) -> dict:
    """The CLI's JSON report of the one session in ``folder`` (exit code 0 asserted)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(["report", folder, "--format", "json", "--cache-dir", "off"])
    assert code == 0, err.getvalue()
    (rep,) = json.loads(out.getvalue())["reports"]
    return rep


@pytest.mark.parametrize("marked", [True, False])
def test_a_cpu_model_timed_with_cuda_events_ran_on_the_cpu(tmp_path, marked):
    truth = tt.write_event_timed_cpu_model(str(tmp_path), marked=marked)
    rep = _report(truth["folder"])
    job = rep["hosts"][0]["job"]
    assert job["kind"] == "no_gpu", job
    assert f"the framework's {truth['matmuls']} matmul/convolution ops" in job["kind_evidence"], job["kind_evidence"]
    assert f"the window's {truth['calls']} CUDA calls did no GPU work" in job["kind_evidence"]
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality"]
    text = " ".join([f["title"], f["summary"]] + [a["text"] for a in f["actions"]])
    assert f["title"] == "No GPU activity in the capture", f["title"]
    assert "start-up" not in text and "Move the model and every input of the step to the GPU" in text, text


def test_marked_steps_that_only_sync_are_a_loop_on_the_cpu_not_start_up(tmp_path):
    """``prof.step()`` steps of host work, each ending in a stream sync, no kernel: main read "start-up only: 6 CUDA
    calls ... skip start-up with the schedule" beside its own phase line ("its loop on the CPU: 4 marked steps").
    Start-up does not repeat step after step: the loop ran on the CPU."""
    truth = tt.write_idle_synced_steps(str(tmp_path))
    rep = _report(truth["folder"])
    job = rep["hosts"][0]["job"]
    assert job["kind"] == "no_gpu" and job["kind_evidence"].startswith(
        f"the loop's {truth['steps']} marked steps each called CUDA ({truth['calls']} CUDA calls: "
        f"`cudaStreamSynchronize` ×{truth['calls']}"), job["kind_evidence"]
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality"]
    text = " ".join([f["title"], f["summary"]] + [a["text"] for a in f["actions"]])
    assert "start-up" not in text and "saw the GPU" in f["summary"], text
