"""A native loop whose only boundary is its blocking read-back (issue #37, h37-hipread).

A HIP or CUDA program that runs the same kernels each iteration and reads its result back with a blocking
``hipMemcpy`` / ``cudaMemcpy``, and never calls a stream or device sync, was one pass on main: the waits had no sync
to mark, and its copy made the repeats no loop of the program's own (``job.period._own_loop``).  The read-back is the
host's one wait of each iteration: one device-to-host copy at the same point of every repeat, the same bytes each
time, its call returning only once its copy ended, every other launch returning before its work did
(``job.period._read_backs``).  Truth by construction: the generators' clocks (rocprof v1, rocmProfileData, Nsight
Systems).  Controls: a layer's swapped weights, copied in and out by blocking copies (the host blocked at two points of
every repeat: ``tests/job/test_period_native.py``), and copies out whose sizes differ (a model's tensors, no one
result buffer).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from synthetic import rocproftrace, rpdtrace
from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.cli_report import first_host
from tests.support.contradictions import context_problems, report_problems

LOOP = [("gemm_kernel(float*)", 900.0), ("relu(float*)", 80.0), ("softmax(float*)", 120.0)]
RESULT = 4096


def _step_ms(starts: list[int]) -> float:
    """The generated iteration's length: the mean distance between its first calls (ns -> ms)."""
    return float(np.mean(np.diff(starts))) / 1e6


@pytest.mark.parametrize("n", [3, 8])
def test_a_hip_loop_read_back_each_iteration_is_its_iterations(tmp_path: Path, n: int) -> None:
    """rocprof v1: ``n`` iterations of 3 kernels and a blocking ``hipMemcpy`` of 4 KiB, no sync (main: one pass)."""
    truth = rocproftrace.write(str(tmp_path / "results.json"), [LOOP] * n, step_range=None, step_sync=None,
                               step_read_bytes=RESULT)
    host = first_host(tmp_path)
    steps = host["steps"]
    assert (steps["source"], steps["found"]) == ("repeated_launches", n), steps
    assert host["gpus"][0]["step_ms"] == pytest.approx(_step_ms(truth["step_starts"]), rel=0.01)
    assert "blocking read of its result (`hipMemcpy`" in steps["note"] and "4.00 KiB" in steps["note"]
    (session,) = discover(str(tmp_path))  # no CUDA word on the AMD host, no finding against its own numbers
    report = analyze_session(session.run, session.session, session.hosts)
    assert not report_problems(report) and not context_problems(report)


def test_an_rpd_loop_read_back_each_iteration_is_its_iterations(tmp_path: Path) -> None:
    """rocmProfileData: 10 bursts of 3 kernels, each read back by a blocking ``hipMemcpy``, no sync (main: one pass)."""
    truth = rpdtrace.write(str(tmp_path / "trace.rpd"), [LOOP] * 10, gap_ms=1.0, module_load_ms=0.0,
                           read_bytes=RESULT, sync=False)
    host = first_host(tmp_path)
    steps = host["steps"]
    assert (steps["source"], steps["found"]) == ("repeated_launches", 10), steps
    assert host["gpus"][0]["step_ms"] == pytest.approx(_step_ms(truth["burst_starts"]), rel=0.01)
    assert "`hipMemcpy`" in steps["note"]


def test_a_cuda_loop_read_back_each_iteration_is_its_iterations(tmp_path: Path) -> None:
    """Nsight Systems: 10 iterations of a pinned upload, 3 kernels and a blocking ``cudaMemcpy`` of 4 KiB back, no
    sync (main: one pass); the upload returns at once, so the read is the host's one wait."""
    job = NsysJob(steps=10, ops=3, kernel_us=2000.0, d2h_us=50.0, d2h_bytes=RESULT, step_range=None,
                  autograd_nvtx=False, sync=False, shuffle=False)
    truth = write(str(tmp_path / "loop.sqlite"), job)
    host = first_host(tmp_path)
    steps = host["steps"]
    assert (steps["source"], steps["found"]) == ("repeated_launches", 10), steps
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth.step_ms, rel=0.01)
    assert "`cudaMemcpy" in steps["note"]


def test_a_loop_whose_copy_in_blocks_too_stays_one_pass(tmp_path: Path) -> None:
    """Control (HIP): each repeat copies 48 MiB in by a blocking ``hipMemcpy`` as well as its result out -- the host
    blocks at two points of every repeat, as a layer whose weights are swapped in and out does; neither is marked."""
    rocproftrace.write(str(tmp_path / "results.json"), [LOOP] * 8, step_range=None, step_sync=None,
                       step_upload_bytes=48 << 20, step_read_bytes=RESULT)
    assert first_host(tmp_path)["steps"]["source"] != "repeated_launches"


def test_copies_out_of_other_sizes_are_no_read_back(tmp_path: Path) -> None:
    """Control: the same loop whose copies out move another number of bytes each repeat (a model's tensors, each its
    own size, not one result read back) stays one pass."""
    path = tmp_path / "results.json"
    rocproftrace.write(str(path), [LOOP] * 8, step_range=None, step_sync=None, step_read_bytes=RESULT)
    sizes = iter(range(1, 100))
    text = re.sub(rf"sizeBytes\({RESULT}\)", lambda m: f"sizeBytes({RESULT * next(sizes)})", path.read_text())
    path.write_text(text)
    assert first_host(tmp_path)["steps"]["source"] != "repeated_launches"
