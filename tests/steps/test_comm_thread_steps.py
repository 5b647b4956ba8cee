"""A range another thread runs several times a step is not the step (issue #37 class 2, h37-commthread).

Stanford CME 213's ``train_mpi --sync-mode openmp`` (4 ranks, Nsight 2023.4.1; survey h37-survey54, not kept: no
licence) marks each step on its main thread with ``forward`` / ``backward_bucketed`` / ``adam_update``, 20 each; an
OpenMP communication thread waits on each gradient bucket's event in ``openmp_comm_event_wait`` and all-reduces it,
twice a step (h256) or four times (h512), copying the buckets but launching no kernel.  Main read the comm thread's
range, the most repeated top-level one, as the step: 38 steps of 1.64 ms for 20 of ~2.9 ms (h256).  The wrong
assumption: *the most regular repeated range is the step, whichever thread runs it*.  A step is the GPU work its range
frames; a thread that launches no kernel runs beside the loop, and its ranges count its own round trips.

Truth by construction (``synthetic.nsysexport.write_comm_thread_steps``: ``steps``, ``step_ms``); the control writes
the main thread's ranges from a thread that launches nothing, the communication thread's ranges left out: no range's
thread launches a kernel, and the ranges still mark the steps.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from synthetic.nsysexport import write_comm_thread_steps
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tb_gpu_advisor.steps.detect import detect_steps


def _host(path) -> dict:
    host = SimpleNamespace(host="rank0", path=str(path), format="nsys", size=0)
    return analyze_session("rank0", "s", [host]).to_dict()["hosts"][0]


@pytest.mark.parametrize("buckets", [2, 4])
def test_a_comm_threads_range_run_per_bucket_is_not_the_step(tmp_path, buckets):
    """Twice a step (h256: main read 22 "steps" of 1.69 ms for 12 of 3.39 ms here) or four times (h512: main read the
    four-a-step range on the bare reading and fell to the training range only where the job's reading rejected it)."""
    p = tmp_path / "train_mpi.sqlite"
    truth = write_comm_thread_steps(str(p), buckets=buckets, kernels=4 * buckets)
    s = detect_steps(read_trace(str(p)))
    det = s.detection
    assert det.found == truth["steps"], det.note
    assert "openmp_comm" not in det.note and "`forward`" in det.note, det.note
    assert np.diff(s.host_windows[:, 0]) / 1e9 == pytest.approx(truth["step_ms"], rel=1e-3)
    h = _host(p)
    assert h["steps"]["found"] == truth["steps"] and h["steps"]["count"] == truth["steps"] - 2, h["steps"]
    assert h["headline"][0]["detail"]["avg_step_ms"] == pytest.approx(truth["step_ms"], rel=0.01)


def test_ranges_on_a_thread_that_launches_nothing_still_mark_the_steps_control(tmp_path):
    """An async runtime's Python thread marks the steps its worker launches: where no range's thread launches a
    kernel, launching decides nothing and the ranges are read as before."""
    p = tmp_path / "dispatch.sqlite"
    truth = write_comm_thread_steps(str(p), dispatcher=True)
    s = detect_steps(read_trace(str(p)))
    assert s.detection.source == "nvtx_top_range" and "`forward`" in s.detection.note, s.detection.note
    assert s.detection.found == truth["steps"]
    assert np.diff(s.host_windows[:, 0]) / 1e9 == pytest.approx(truth["step_ms"], rel=1e-3)
