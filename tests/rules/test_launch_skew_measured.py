"""The launch skew is a part of the steps it was measured in (h37-lawseeds), and of no others (h37-skewfall): two paths
fell back to every kept step --

* ``metrics.multigpu._skews`` read the measured steps' ids from the first GPU's own step column; a GPU with fewer step
  rows than the kept steps left them unknown (none), and the rule took every kept step as measured;
* ``rules.launch_skew`` took the host-wide step of the measured steps, else of all steps: where the measured steps are
  only the last one and the GPUs' windows are apart (the last step is left out there: no next start bounds it), the
  skew of that one step was set against the mean of the steps one GPU ran alone -- "200% of the step".
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tb_gpu_advisor.metrics.breakdown import NONE_MS
from tb_gpu_advisor.metrics.multigpu import _skews
from tb_gpu_advisor.metrics.types import Breakdown, StepMetrics
from tb_gpu_advisor.rules import REGISTRY
from tb_gpu_advisor.rules.launch_skew import _host_wide_spans
from tests.support.rules_factory import STEPS, multi


def _gpu(ids: list[int], fk: list[float]) -> SimpleNamespace:
    """One GPU's step columns (``metrics.breakdown.step_arrays``' form): its rows of the kept steps ``ids`` (the first
    ones), first kernel and first launch at ``fk`` ms."""
    t = np.asarray(fk, dtype=np.float64)
    return SimpleNamespace(step=np.asarray(ids, np.int64), first_kernel_ms=t, first_launch_ms=t - 0.01)


def test_measured_steps_are_known_when_the_first_gpu_has_fewer_rows():
    # kept steps 5..8; GPU 0 has rows for the first three, GPU 1 for all four but no kernel in step 6
    ctx = SimpleNamespace(steps=SimpleNamespace(count=4, ids=np.array([5, 6, 7, 8], np.int64)))
    per_gpu = {0: _gpu([5, 6, 7], [0.0, 10.0, 20.0]), 1: _gpu([5, 6, 7, 8], [1.0, NONE_MS, 21.5, 31.0])}
    skews, _, _, measured = _skews(ctx, [0, 1], per_gpu)
    assert skews == pytest.approx([1.0, 1.5])
    assert measured == [5, 7]  # main: [] -- every kept step then read as measured


def test_measured_steps_are_the_kept_ids_when_every_gpu_has_them_all():
    """Control: GPUs with every row read the same steps as before."""
    ctx = SimpleNamespace(steps=SimpleNamespace(count=3, ids=np.array([2, 3, 4], np.int64)))
    per_gpu = {0: _gpu([2, 3, 4], [0.0, 10.0, 20.0]), 1: _gpu([2, 3, 4], [NONE_MS, 10.5, 20.25])}
    skews, _, _, measured = _skews(ctx, [0, 1], per_gpu)
    assert skews == pytest.approx([0.5, 0.25]) and measured == [3, 4]


def _last_step_two_gpus(skew: float = 4.0, short: float = 2.0, last: float = 10.0):
    """2 GPUs over the kept steps: steps 0..STEPS-2 ``short`` ms, GPU 1 idle in them (the host's window: one GPU ran
    alone); the last step ``last`` ms on each GPU, GPU 1's window ``skew`` ms after GPU 0's -- the GPUs' windows are
    apart, and the skew is measured in that step alone.  Its host-wide step: ``last + skew`` ms."""
    m = multi(n=2, busy=(1.0, 1.0), skew=skew)
    rows = []
    for s in range(STEPS):
        for g in (0, 1):
            lo = s * short + (skew if s == STEPS - 1 and g == 1 else 0.0)
            dur = last if s == STEPS - 1 else short
            fk = lo + 0.1 if s == STEPS - 1 or g == 0 else None
            rows.append(StepMetrics(step=s, gpu=g, start_ms=lo, step_ms=dur, breakdown=Breakdown(device_compute=1.0,
                                    other=dur - 1.0), device_busy_ms=1.0, kernel_count=1, first_kernel_ms=fk))
    m.steps_detail = rows
    m.multi_gpu.launch_skew_steps = [STEPS - 1]
    return m


def test_a_skew_measured_in_the_last_step_alone_is_a_part_of_that_step():
    m = _last_step_two_gpus()
    (f,) = REGISTRY["launch_skew"].check(m)
    # main: 4 ms over the 2 ms mean of the steps one GPU ran alone, "200.0% of the step"
    assert f.metric.value == pytest.approx(4.0 / 14.0, abs=1e-3)
    assert "in the 1 of the 20 steps in which two or more of them run" in f.summary
    assert STEPS - 1 not in _host_wide_spans(m)  # the last step is left out where the GPUs are apart
    assert _host_wide_spans(m, keep_last=True)[STEPS - 1] == pytest.approx(14.0)  # 38 ms .. 52 ms


def test_a_skew_of_gpus_in_the_hosts_windows_is_a_part_of_the_step():
    """Control: GPUs in the host's windows (not apart) measure every step, the last one included, as on main."""
    m = multi(n=2, busy=(1.0, 1.0), skew=1.0)
    m.steps_detail = [StepMetrics(step=s, gpu=g, start_ms=s * 10.0, step_ms=10.0, breakdown=Breakdown(
        device_compute=1.0, other=9.0), device_busy_ms=1.0, kernel_count=1, first_kernel_ms=s * 10.0 + g)
        for s in range(STEPS) for g in (0, 1)]
    m.multi_gpu.launch_skew_steps = [STEPS - 1]
    (f,) = REGISTRY["launch_skew"].check(m)
    assert f.metric.value == pytest.approx(0.1)
