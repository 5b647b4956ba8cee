"""Copy-only GPU bursts outside a loop -- a set-up upload before it, a read-back of results (or a checkpoint download)
after it -- are no iteration and no part of one, a training job's too (h37-probe45m; h37-probe44m's set-up rule was
read after a training job's own readings had joined such bursts to its first and last iterations).

Truth by construction (``synthetic.torchtrace.Rank``): a Kineto training loop with no step mark and no sync -- 4
iterations, each 8 kernels and a ``threshold_backward`` kernel, the host's 5 ms of its own code after each (so each
iteration is one GPU burst, 5.117 ms from one's first kernel to the next's) -- optionally after a 16 MB upload 5 ms
before the loop and before a 16 MB ``.cpu()`` 5 ms after it.  Main (a3712eb4) joined the upload to the first
iteration (10.134 ms) and the read-back to the last (5.769 ms); the steps are the iterations' period each.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from synthetic import torchtrace as T
from tests.support.cli_report import first_host

PAUSE_US = 5000.0


def _loop(path: Path, iterations: int, upload_mb: float, read_mb: float) -> list[float]:
    """Write the loop; returns each iteration's first kernel's GPU start (us)."""
    r = T.Rank(rank=0, pid=777, device=0)
    if upload_mb:
        r.copy_h2d(upload_mb, upload_mb * 40.0)
        r.host_us += PAUSE_US
    firsts = []
    for _ in range(iterations):
        for k in range(4):
            r.kernel("aten::mm", T.GEMM_FWD, 5.0)
            if k == 0:
                firsts.append(float(r.gpu[-1]["ts"]))
            r.kernel("aten::relu", T.RELU_BF16, 4.0)
        r.kernel("aten::threshold_backward", "threshold_backward_kernel", 4.0)
        r.host_us += PAUSE_US
    if read_mb:
        r.read_to_host("aten::to", int(read_mb * 1e6), read_mb * 40.0)
    T.write_doc(os.path.join(path, "w.pt.trace.json"), T.trace_doc(r, 1))
    return firsts


@pytest.mark.parametrize("upload_mb,read_mb", [(16.0, 16.0), (16.0, 0.0), (0.0, 16.0), (0.0, 0.004)])
def test_copy_bursts_outside_a_training_loop_join_no_iteration(upload_mb: float, read_mb: float,
                                                                tmp_path: Path) -> None:
    firsts = _loop(tmp_path, 4, upload_mb, read_mb)
    period_ms = (firsts[1] - firsts[0]) / 1000.0
    assert firsts[3] - firsts[2] == pytest.approx(firsts[1] - firsts[0])
    host = first_host(tmp_path)
    steps = host["steps"]
    assert (steps["source"], steps["found"]) == ("gpu_busy_clusters", 4), steps
    rows = [r["step_ms"] for r in host["step_rows"] if r["gpu"] is None]
    assert rows[:3] == pytest.approx([period_ms] * 3, abs=1e-3), (rows, period_ms)  # main: 10.134 first, with upload
    assert all(r <= period_ms + 1e-3 for r in rows), rows  # main: the last 5.769, with the read-back
    assert ("set-up before its loop" in steps["note"]) == bool(upload_mb)
    assert ("work after its loop" in steps["note"]) == bool(read_mb)
    assert "joined" not in steps["note"]


def test_a_loop_without_copies_reads_as_before_control(tmp_path: Path) -> None:
    """Control: the loop alone -- 4 bursts, 4 steps of its period, nothing left out."""
    firsts = _loop(tmp_path, 4, 0.0, 0.0)
    host = first_host(tmp_path)
    assert host["steps"]["found"] == 4 and "left out" not in host["steps"]["note"], host["steps"]
    rows = [r["step_ms"] for r in host["step_rows"] if r["gpu"] is None]
    assert rows[0] == pytest.approx((firsts[1] - firsts[0]) / 1000.0, abs=1e-3)
