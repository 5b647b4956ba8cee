"""Ranks whose processes ran in turn are never compared as one step's launches (issue #37, h37-turns).

Walk ``--forms`` seed 30061 without its step ranges: four ranks, one process each, each done with its work before the
next began, read as one pass.  Main measured the spread of their first kernels (135 ms here) as a launch skew --
critical, "saves" most of the pass -- though no rank waited for a later one: each had ended before the next started.

The wrong assumption: the GPUs of one step run it together, so the spread of their starts delays the first ones.  A
late rank delays its peers only while they are still at work; where one rank's work in the kept steps had all ended
before another's began (``metrics.multigpu.processes_in_turn``), the starts are not skewed launches.  Ranks that run
together keep their skew, a step apart or not (the controls here, and ``tests/report/test_random_jobs.py``'s 4 ranks
1.4 ms apart in 4.3 ms steps).  Truth by construction (``synthetic.nsysexport``: rank r starts ``r * rank_lag_us``
after rank 0)."""

from __future__ import annotations

import pytest

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor import rules
from tb_gpu_advisor.formats.nsys import reader
from tb_gpu_advisor.runtime.pipeline import host_metrics


def _metrics(tmp_path, lag_us: float):
    """4 ranks of 5 unmarked steps (one pass), rank r starting ``r * lag_us`` after rank 0, each after a set-up."""
    p = tmp_path / f"ranks_{lag_us}.sqlite"
    write(str(p), NsysJob(steps=5, ranks=4, ops=17, step_range=None, autograd_nvtx=False, rank_lag_us=lag_us,
                          setup_ms=49.773))
    return host_metrics(reader.read_trace(str(p)))


def test_ranks_that_ran_in_turn_have_no_launch_skew(tmp_path):
    m = _metrics(tmp_path, 45_000.0)  # each rank's set-up and steps (85 ms) end before the next rank's work
    assert m.steps.count == 1 and m.multi_gpu.one_process_per_gpu
    assert m.multi_gpu.launch_skew_ms is None  # main: 135 ms
    assert "launch_skew" not in {f.rule for f in rules.evaluate(m)}  # main: critical


@pytest.mark.parametrize(("lag_us", "skew_ms"), [(50.0, 0.15), (2000.0, 6.0)])
def test_ranks_that_ran_together_keep_their_skew_control(tmp_path, lag_us, skew_ms):
    """Control: ranks whose work overlaps in the pass (late by 3 lags at most) keep the skew main measured."""
    m = _metrics(tmp_path, lag_us)
    assert m.multi_gpu.launch_skew_ms == pytest.approx(skew_ms, rel=1e-6)
