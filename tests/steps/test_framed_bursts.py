"""One range around a benchmark's timed passes frames the GPU's bursts as it frames a repeating launch sequence: one
rule (``job.frame``) every step reading asks (issue #37, h37-left23).

By construction (``synthetic.nsysexport.write_framed_passes(vary=True)``): warm-up passes launched back to back and
synchronized once, then one NVTX range ``resnet50_inference`` around synced passes whose first kernel differs per
pass, so the launch sequence never repeats and only the GPU's bursts show the passes.  Main read the inference job as
one pass of 183 ms (``single_pass``): the frame was asked only by the launch-period reading.
"""

from __future__ import annotations

import os

import pytest

from synthetic import torchtrace as tt
from tests.support.cli_report import first_host, framed_passes_host


def _host(tmp_path, **kw) -> tuple[dict, dict]:  # noqa: ANN001 - pytest's tmp_path
    return framed_passes_host(tmp_path, vary=True, **kw)


@pytest.mark.parametrize("warmup, measured", [(3, 5), (2, 4)])
def test_the_bursts_inside_the_one_range_are_the_steps(tmp_path, warmup: int, measured: int) -> None:  # noqa: ANN001
    host, truth = _host(tmp_path, warmup=warmup, measured=measured)
    steps = host["steps"]
    assert steps["source"] == "gpu_busy_clusters"
    assert steps["count"] == truth["measured"]
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth["pass_ms"], rel=0.03)
    assert "`resnet50_inference`, its frame" in steps["note"]
    assert "the 1 before it is its warm-up" in steps["note"]  # the warm-ups run back to back: one burst


def _kineto(tmp_path, **kw) -> tuple[dict, dict]:  # noqa: ANN001 - pytest's tmp_path
    path = os.path.join(str(tmp_path), "run.pt.trace.json")
    truth = tt.write_framed_inference(path, **kw)
    return first_host(path), truth


def test_a_record_function_frames_the_bursts_in_kineto(tmp_path) -> None:  # noqa: ANN001
    """The same in a Kineto trace: ``record_function("inference")`` around 5 passes, each ended by ``.item()``; main
    read one 35 ms pass."""
    host, truth = _kineto(tmp_path)
    steps = host["steps"]
    assert steps["source"] == "gpu_busy_clusters"
    assert steps["count"] == truth["measured"]
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth["pass_ms"], rel=0.03)
    assert "`inference`, its frame" in steps["note"]


def test_kineto_controls(tmp_path) -> None:  # noqa: ANN001
    """Controls: a range per pass is the repeated span; a range around one pass frames nothing (one pass)."""
    host, truth = _kineto(tmp_path, ranged_passes=True)
    assert host["steps"]["found"] == truth["measured"] and "frame" not in host["steps"]["note"]
    # the last pass's range ends at its own work, without the timing loop's 200 us after it: partial for the mean
    # (h37-randjobs8), which is then the passes' spacing
    assert host["steps"]["count"] == truth["measured"] - 1
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth["pass_ms"], rel=0.005)
    host, _ = _kineto(tmp_path, measured=1)
    assert host["steps"]["source"] == "single_pass" and "frame" not in host["steps"]["note"]
