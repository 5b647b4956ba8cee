"""A loop of few kernels the host queues back to back, never syncing, read from its GPU bursts (issue #37 class 2;
h37-probe45s / h37-probe46b *Left* 1).

Its kernels run end to end, so the GPU's busy intervals are its iterations and every idle gap between them a
boundary: the median gap (``steps.bursts._cluster_gap``) was a boundary gap, nothing was ten times it, and the loop
read as one pass.  The gaps between consecutive pieces of work make two populations -- none (queued work) or the
launches' microseconds inside a step, the host's milliseconds between steps -- and the cut lies between them
(``_two_populations``).  Iterations that launch a varying number of kernels (an adaptive solver) leave the bursts the
only evidence (no repeated launch sequence).  Truth by construction: rocprof v1 (``synthetic.rocproftrace.write``,
``step_range=None, step_sync=None, gap_ms=2``) and Kineto (``synthetic.torchtrace.write_native_queued_loop``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from synthetic import rocproftrace, torchtrace
from tb_gpu_advisor.steps.bursts import _cluster_gap
from tb_gpu_advisor.steps.types import PS_PER_MS
from tests.support.cli_report import first_host

LOOP = [("gemm_kernel(float*)", 900.0), ("relu(float*)", 80.0), ("softmax(float*)", 120.0)]
AXPY = ("axpy(float*)", 50.0)
EXTRA = [0, 1, 0, 2, 0, 1, 2, 0]  # each iteration's extra kernels: no two launch sequences alike in a row


def _rows(host: dict) -> list[float]:
    return [r["step_ms"] for r in host["step_rows"] if r.get("gpu") is None]


def _rocprof(tmp_path: Path, n: int, **kw) -> tuple[dict, list[float]]:
    truth = rocproftrace.write(str(tmp_path / "results.json"), [LOOP + [AXPY] * e for e in EXTRA[:n]],
                               step_range=None, step_sync=None, gap_ms=2.0, **kw)
    starts = truth["step_starts"]
    return first_host(tmp_path), [(b - a) / 1e6 for a, b in zip(starts, starts[1:])]


def test_eight_queued_iterations_read_as_eight_bursts(tmp_path: Path) -> None:
    """BASE: ``whole_capture``, 0 found.  The upload before the loop joins the first burst, the read-back after it
    is left out; first and last dropped: the six middle iterations, each its own length."""
    host, truth = _rocprof(tmp_path, 8)
    steps = host["steps"]
    assert (steps["source"], steps["found"], steps["count"]) == ("gpu_busy_clusters", 8, 6), steps
    assert _rows(host) == pytest.approx(truth[1:7], abs=1e-6)  # 3.16, 3.11, 3.21, 3.11, 3.16, 3.21 ms


def test_five_queued_iterations_keep_all_but_the_partial_last(tmp_path: Path) -> None:
    """BASE: 0 found.  No upload before the loop: every burst an iteration, the last ending at its own work."""
    host, truth = _rocprof(tmp_path, 5, upload_bytes=0)
    steps = host["steps"]
    assert (steps["source"], steps["found"], steps["count"]) == ("gpu_busy_clusters", 5, 4), steps
    assert _rows(host) == pytest.approx(truth, abs=1e-6)  # 3.11, 3.16, 3.11, 3.21 ms


def test_a_kineto_twin_reads_its_iterations(tmp_path: Path) -> None:
    """The same loop traced by Kineto (a native extension's launches, no op, no ``prof.step()``): BASE one
    ``whole_capture`` step of 13.58 ms; now 5 bursts, the last running to the window's end (a step after its start)."""
    truth = torchtrace.write_native_queued_loop(str(tmp_path / "w.1.pt.trace.json"), [2, 3, 2, 4, 2])
    host = first_host(tmp_path)
    steps = host["steps"]
    assert (steps["source"], steps["found"], steps["count"]) == ("gpu_busy_clusters", 5, 5), steps
    assert _rows(host)[:4] == pytest.approx(truth["step_ms"], abs=1e-5)  # 3.068, 3.148, 3.068, 3.228 ms


def test_the_gap_cut_by_population() -> None:
    """Queued work's gaps of none and the boundaries' 2 ms are two populations: cut at the floor (1 ms) -- BASE 20 ms,
    ten times the median, a boundary.  Gaps of one population keep the median's cut, as do gaps the median cuts."""
    ms = PS_PER_MS
    boundaries = np.full(4, 2 * ms, np.int64)
    assert _cluster_gap(boundaries, queued=8) == pytest.approx(1.0 * ms)
    assert _cluster_gap(boundaries) == pytest.approx(20.0 * ms)  # no queued count given: the median's cut
    one_population = np.asarray([2 * ms, 2.5 * ms, 3 * ms], np.int64)
    assert _cluster_gap(one_population, queued=0) == pytest.approx(25.0 * ms)
    within = np.asarray([5_000_000] * 9 + [30 * ms], np.int64)  # 5 us launches, one 30 ms boundary: the median cuts
    assert _cluster_gap(within, queued=20) == pytest.approx(1.0 * ms)


def test_a_native_pass_stays_one_pass(tmp_path: Path) -> None:
    """Control: the program run once (one burst of queued kernels between its upload and read-back): no steps."""
    rocproftrace.write(str(tmp_path / "results.json"), [LOOP], step_range=None, step_sync=None)
    steps = first_host(tmp_path)["steps"]
    assert steps["found"] == 0 and steps["count"] == 1, steps


def test_a_set_up_whose_bursts_share_no_body_stays_one_pass(tmp_path: Path) -> None:
    """Control, shaped after ``wild/rocprof_mxfp4_setup_gfx950`` (a benchmark's input set-up: element-wise kernels in
    bursts of 2, 1 and 7, 10.6 and 13.7 ms apart): the last burst shares kernels with each other one, but no kernel
    runs in every burst -- no loop's body (``bursts._body_in_every_burst``); without that gate the gaps' two
    populations read it as 3 "steps"."""
    k = [(f"elementwise_{c}(float*)", us) for c, us in zip("abcdefg", (600.0, 580.0, 150.0, 220.0, 90.0, 45.0, 80.0))]
    rocproftrace.write(str(tmp_path / "results.json"), [[k[0], k[1]], [k[2]], [k[3], k[0], k[4], k[2], k[5], k[1], k[6]]],
                       step_range=None, step_sync=None, gap_ms=10.0, upload_bytes=0, read_bytes=0)
    steps = first_host(tmp_path)["steps"]
    assert steps["found"] == 0 and steps["count"] == 1, steps
