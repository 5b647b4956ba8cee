"""The last step read from a repeated top-level range that is one phase of the iteration is no whole step
(h37-randjobs12, ``scripts/randjobs.py --forms12`` walk seeds 83 and 373).

``nvtx_top_range`` tiles each step from its range's start to the next one's; the last ends where its range and the
work launched in it end.  Where the range is one phase (a training loop's ``forward`` around the first half of each
pass's launches; ``load`` before ``evaluate`` and ``metrics``), that last step holds only the phase's work -- and main
dropped it only where it was under half the others' tile.  By construction (``synthetic.nsysexport``), every
iteration the period long.
"""

from __future__ import annotations

from synthetic import nsysexport as nx
from tests.support.cli_report import first_host


def _steady(host: dict) -> list[float]:
    return [r["step_ms"] for r in host["step_rows"]]


def test_a_forward_ranges_last_step_is_dropped(tmp_path):  # noqa: ANN001
    """3 passes of 29 kernels, 19.96 ms apart, ``forward`` around the first 14 launches and ``backward`` around the
    rest (no warm-up): main read 19.96, 19.96 and 10.22 ms (mean 16.71)."""
    path = str(tmp_path / "phases.sqlite")
    t = nx.write_framed_passes(path, warmup=0, measured=3, kernels=29, pass_ms=19.729, phases=True)
    host = first_host(path)
    assert host["steps"]["source"] == "nvtx_top_range" and host["steps"]["found"] == 3
    rows = _steady(host)
    period = t["pass_ms"] + 0.23  # the pass, then its sync's, the timing loop's and the next launch's host time
    assert rows and all(abs(ms - period) < 0.02 for ms in rows), (rows, period)


def test_a_load_ranges_last_step_is_dropped(tmp_path):  # noqa: ANN001
    """``load``, ``evaluate``, ``metrics`` each step, 3 steps of 2.761 ms: main read the last 2.224 ms."""
    path = tmp_path / "eval.sqlite"
    truth = nx.write(str(path), nx.NsysJob(steps=3, ops=31, kernel_us=26.063, kernel=nx.GEMM_FP32, launch_us=10.218,
                                           h2d_bytes=23086455, h2d_us=1923.871, pinned=False, step_range=None,
                                           autograd_nvtx=False, extra_ranges=("load", "evaluate", "metrics")))
    host = first_host(path)
    assert host["steps"]["found"] == truth.steps
    rows = _steady(host)
    assert rows and all(abs(ms - truth.step_ms) < 0.01 for ms in rows), (rows, truth.step_ms)


def test_control_a_range_around_the_whole_iteration(tmp_path):  # noqa: ANN001
    """One top-level range around each iteration's work: its last step is whole and stays (main read it so too)."""
    path = tmp_path / "whole.sqlite"
    truth = nx.write(str(path), nx.NsysJob(steps=4, ops=12, step_range=None, autograd_nvtx=False,
                                           extra_ranges=("evaluate",)))
    host = first_host(path)
    assert host["steps"]["found"] == truth.steps
    assert "dropped the last step" not in host["steps"]["note"]
    rows = _steady(host)
    assert rows and all(abs(ms - truth.step_ms) < 0.02 * truth.step_ms for ms in rows), (rows, truth.step_ms)
