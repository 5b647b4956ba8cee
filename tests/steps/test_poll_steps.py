"""A loop whose host waits by polling reads the steps its sync twin reads (h37-probe45s, issue #37 classes 1/3).

``while (hipEventQuery(ev) == hipErrorNotReady)`` after each burst is the host's wait for the GPU as
``hipDeviceSynchronize`` is: the host launches nothing until the GPU said done.  The step stage read only sync calls
as the host's waits, so the poll twin of a HIP loop of 30 bursts (two GEMM + ReLU pairs each) read its 2-kernel
launch period with no wait at its boundary: 58 steps of half a burst ("0.5 times per step" in host_sync), where the
``hipDeviceSynchronize`` twin reads 28 bursts.  Nsight's offload loop polling after each kernel read 8 GPU clusters
(one per sweep) where its ``cuStreamSynchronize`` twin reads 798 runs of one kernel between waits.  One home now says
where the host waited (``job.waits``), read by the steps and the metrics alike.  Truth by construction:
``synthetic.rpdtrace.write(poll=)``, ``synthetic.nsysexport.write_synced_kernels(poll=)``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from synthetic import nsysexport as nx
from synthetic import rpdtrace
from tests.support.cli_report import first_host

#: a HIP loop's burst: two short fp32 GEMMs and their ReLUs, 24 us of GPU work, then the wait
_BURST = [("gemm_kernel(float*)", 8.0), ("relu(float*)", 4.0)] * 2
_BURSTS = 30


def _steps(host: dict) -> tuple[str, int, int, float]:
    """(source, steps kept, steps found, median step in us) of one host's report."""
    s = host["steps"]
    rows = [r["step_ms"] for r in host["step_rows"] if r.get("gpu") is None] or \
        [r["step_ms"] for r in host["step_rows"]]
    return s["source"], s["count"], s["found"], float(np.median(rows)) * 1000.0


def _hip(tmp_path: Path, poll: str) -> tuple[dict, float]:
    """The HIP loop's host report and its true period (us: its bursts' first launches apart)."""
    path = tmp_path / f"{poll or 'sync'}.rpd"
    truth = rpdtrace.write(str(path), [_BURST] * _BURSTS, gap_ms=0.0, module_load_ms=0.0, poll=poll)
    assert truth["bursts"] == _BURSTS
    return first_host(path), float(np.median(np.diff(truth["burst_starts"]))) / 1000.0


def _kernel_period_us(path: Path) -> float:
    """The offload loop's true period (us): its kernels' starts apart inside a sweep (each kernel one iteration)."""
    with sqlite3.connect(path) as con:
        starts = [r[0] for r in con.execute("SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start")]
    return float(np.median(np.diff(starts))) / 1000.0


@pytest.mark.parametrize("poll", ["hipEventQuery", "hipStreamQuery"])
def test_a_hip_loop_that_polls_reads_its_bursts(tmp_path: Path, poll: str) -> None:
    synced, sync_period = _hip(tmp_path, "")
    polled, poll_period = _hip(tmp_path, poll)
    src, count, found, step_us = _steps(polled)
    # BASE: 58 steps of 60 repeats of the 2-kernel half of a burst, ~half the period (the boundary unread)
    assert (src, count, found) == ("repeated_launches", _BURSTS - 2, _BURSTS), polled["steps"]["note"]
    assert _steps(synced)[:3] == (src, count, found)  # the sync twin's reading
    assert step_us == pytest.approx(poll_period, abs=0.5), (step_us, poll_period)
    assert _steps(synced)[3] == pytest.approx(sync_period, abs=0.5)
    assert "after the host waited for the GPU" in polled["steps"]["note"], polled["steps"]["note"]


@pytest.mark.parametrize("poll", ["cuStreamQuery", "cudaEventQuery_v3020"])
def test_an_offload_loop_that_polls_reads_its_runs_between_waits(tmp_path: Path, poll: str) -> None:
    paths = {p: tmp_path / f"{p or 'sync'}.sqlite" for p in ("", poll)}
    truth = {p: nx.write_synced_kernels(str(path), poll=p) for p, path in paths.items()}
    synced, polled = (_steps(first_host(paths[p])) for p in ("", poll))
    kernels = truth[poll]["kernels"]
    # BASE: gpu_busy_clusters, 8 found (one a sweep), 6 kept, a step of ~61 ms
    assert polled[:3] == synced[:3] == ("repeated_launches", kernels - 2, kernels), (polled, synced)
    assert polled[3] == pytest.approx(_kernel_period_us(paths[poll]), abs=0.5), polled
    assert synced[3] == pytest.approx(_kernel_period_us(paths[""]), abs=0.5), synced
