"""One user range around a benchmark's timed passes is the job's frame, not its step: the passes inside it are the
steps (issue #37, h37-left22).

The real case (amacharla15/gpu-profiling-cuda-kernels ``profiling/results/resnet50_nsys.sqlite`` @3f61024, no
licence, so not kept: ``tests/fixtures/wild/SURVEY.md``): ResNet-50 inference on an A100 80GB PCIe, 3 warm-up passes
launched back to back and synchronized once, then one NVTX range ``resnet50_inference`` around 5 passes of 20.3 ms,
each ended by ``cudaDeviceSynchronize``.  Main read the whole capture as one 581 ms step: over all 8 repeats of the
224-launch sequence the host waited at only 5 of 7 boundaries, so the period was refused, and a lone range is no
repeated span.  Now 5 steps of 20.3 ms, the 3 warm-up passes named apart.

By construction (``synthetic.nsysexport.write_framed_passes``): the same shape, each pass's length known.
"""

from __future__ import annotations


import pytest

from tests.support.cli_report import framed_passes_host


def _host(tmp_path, **kw) -> tuple[dict, dict]:  # noqa: ANN001 - pytest's tmp_path
    return framed_passes_host(tmp_path, **kw)


@pytest.mark.parametrize("warmup, measured", [(3, 5), (2, 4)])
def test_the_passes_inside_the_one_range_are_the_steps(tmp_path, warmup: int, measured: int) -> None:  # noqa: ANN001
    host, truth = _host(tmp_path, warmup=warmup, measured=measured)
    steps = host["steps"]
    assert steps["source"] == "repeated_launches"
    assert steps["count"] == truth["measured"]
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth["pass_ms"], rel=0.03)
    assert "`resnet50_inference`" in steps["note"]
    assert f"the {truth['warmup']} before it are its warm-up" in steps["note"]


#: the controls hold for both readings of a frame: passes whose launch sequence repeats, and passes only the GPU's
#: bursts show (``vary=True``: each pass's first kernel differs; ``test_framed_bursts.py``)
BOTH = pytest.mark.parametrize("vary", [False, True], ids=["launches", "bursts"])


@BOTH
def test_a_range_per_pass_keeps_its_reading(tmp_path, vary: bool) -> None:  # noqa: ANN001
    """Control: each timed pass in a range of its own -- the repeated range is the step, as before."""
    host, truth = _host(tmp_path, ranged_passes=True, vary=vary)
    assert host["steps"]["count"] == truth["measured"]
    assert "`pass 0`" in host["steps"]["note"]  # the ranges as the program spelled them (h37-accum32: `pass` before)
    assert "frame" not in host["steps"]["note"]


@BOTH
def test_a_range_around_one_pass_frames_nothing(tmp_path, vary: bool) -> None:  # noqa: ANN001
    """Control: a range holding a single pass (one repeat, one burst) shows no step boundary inside it; the capture
    stays one pass -- the inference job's single pass where only bursts show it."""
    host, _ = _host(tmp_path, measured=1, vary=vary)
    if vary:
        assert host["steps"]["source"] == "single_pass"
    assert host["steps"]["count"] == 1
    assert "frame" not in host["steps"]["note"]


@BOTH
def test_a_warm_up_range_is_no_frame(tmp_path, vary: bool) -> None:  # noqa: ANN001
    """Control: a range the program names its warm-up holds what it does not time, so it never frames the steps."""
    host, _ = _host(tmp_path, frame="Warm-up", vary=vary)
    assert "frame" not in host["steps"]["note"]
