"""A share of the launch skew is of its own whole (h37-zero12law, walk ``--zero12`` seed 21210): the skew is each
measured step's spread of first-kernel starts, the whole the host-wide step -- bounded by the next step's start, so
where the GPUs' windows are apart the last step has none and is left out of the whole.  Main left it in the part:
2 ranks 330 then 457 us apart, the mean of both (394 us) set against the first step's 380 us, read "103.5% of the
host-wide step".  The wrong assumption: the skew's steps and the whole's are one set; now both are the steps whose
whole is measured, each with its own skew (``MultiGpu.launch_skew_by_step``).
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor.metrics.types import Breakdown, StepMetrics
from tb_gpu_advisor.rules import REGISTRY
from tests.support.rules_factory import multi

#: seed 21210's two ranks: (start, length) of each GPU's two steps, ms -- GPU 0 starts 330 us, then 457 us, late
ROWS = {0: ((6.0176, 0.5072), (6.5248, 13.3567)), 1: ((5.6872, 0.3804), (6.0676, 0.2536))}


def _two_ranks(by_step: list[float]):
    """2 GPUs whose windows are apart (each its own), the skew measured in both kept steps, ``by_step`` each."""
    m = multi(n=2, busy=(0.3, 0.3), skew=sum(by_step) / len(by_step))
    m.steps.count = 2
    m.steps_detail = [StepMetrics(step=k, gpu=g, start_ms=lo, step_ms=dur, breakdown=Breakdown(device_compute=dur),
                                  device_busy_ms=dur, kernel_count=1, first_kernel_ms=lo)
                      for g, rows in ROWS.items() for k, (lo, dur) in enumerate(rows)]
    m.multi_gpu.launch_skew_steps = [0, 1]
    m.multi_gpu.launch_skew_by_step = by_step
    return m


def test_the_skew_share_is_of_the_steps_its_whole_holds():
    m = _two_ranks([6.0176 - 5.6872, 6.5248 - 6.0676])
    (f,) = REGISTRY["launch_skew"].check(m)
    # step 0 alone has a whole (6.0676 - 5.6872 ms: step 1 bounds it); its own skew, 330 us, is the part
    assert f.metric.value == pytest.approx(0.3304 / 0.3804, abs=1e-3)  # main: 0.3938 / 0.3804 = 1.035
    assert f.metric.value <= 1.0
    assert "394 us apart" in " ".join(f.summary.split())  # the skew said is still the mean of the measured steps
    assert "of the host-wide step" in f.summary  # its whole printed by no value the part would not fit


def test_the_same_skew_each_step_reads_as_before():
    """Control: a skew alike in every step is its own part of the step whose whole is measured, as on main."""
    m = _two_ranks([0.3304, 0.3304])
    (f,) = REGISTRY["launch_skew"].check(m)
    assert f.metric.value == pytest.approx(0.3304 / 0.3804, abs=1e-3)


def test_metrics_without_steps_own_skews_take_the_mean_for_each():
    """Metrics that name no skew per step (a rule test's, an older cache's) read the mean for each measured step."""
    m = _two_ranks([0.25, 0.5])
    m.multi_gpu.launch_skew_by_step = []
    (f,) = REGISTRY["launch_skew"].check(m)
    assert f.metric.value == pytest.approx(0.375 / 0.3804, abs=1e-3)
