"""A range of one process frames only its own GPU's bursts, not the bursts every rank's GPU makes together.

The wrong assumption (``steps.framed._framed_bursts`` over ``job.frame.frame``): the GPUs' merged bursts, cut wherever
any rank's host waited, start on whichever rank is ahead, and a range of any rank may frame them.  The walk's job
(``scripts/randjobs.py --forms11 --seed 104070``, reduced here: two ranks 50 us apart, 2 iterations each of a numerical
method's ``forward FFT`` > ``pointwise`` > ``backward FFT`` NVTX ranges, 20 kernels and a read-back each, one export)
read as 2 "steps" of 0.262 ms: rank 1's first ``backward FFT`` held the starts of merged bursts 2 and 3 -- one begun
by its own GPU, one by rank 0's -- so it framed them, the other two bursts "warm-up" and "outside its timing".  Now a
rank's range holds a burst only where a burst of its own GPU, cut by its own host's waits, starts inside it
(``steps.framed._process_starts``, ``job.frame._held``): no rank's range holds two, no frame.

Truth by construction (``synthetic.randjobs.form11_job``'s writer): the iterations' period, 0.513 ms.  The control
where each rank does frame its own passes: ``nsysexport.write_framed_passes(ranks=2)`` (a benchmark's timed passes in
each rank's one range): 50 us apart, main's two ranks' ranges each framed a different split of the merged bursts and
no frame was read (one pass of 143 ms); each rank's range now holds its own 4 passes.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from synthetic import nsysexport as N
from synthetic import randjobs as R
from tb_gpu_advisor import formats
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.cli_report import first_host
from tests.support.fft_ranks import JOB as _JOB
from tests.support.fft_ranks import SEED as _SEED


def _read(tmp_path, **change):
    """The reduced job (``change``: its parameters changed) written and read: (its metrics, its truth)."""
    R.TRUTH.pop(_SEED, None)
    R.write(R.form11_job("nsys_vocab", _SEED, **{**_JOB, **change}), str(tmp_path))
    path = next(os.path.join(d, f) for d, _, fs in os.walk(tmp_path) for f in fs if f.endswith(".sqlite"))
    m = host_metrics(formats.read(SimpleNamespace(host="h", path=path, format="nsys", size=0)))
    return (m[0] if isinstance(m, tuple) else m), R.TRUTH[_SEED]


def test_one_ranks_range_frames_no_merged_bursts(tmp_path):
    m, truth = _read(tmp_path)
    assert truth["steps"] == 2 and truth["step_ms"] == pytest.approx(0.51278)
    assert "its frame" not in m.steps.note and m.steps.source != "gpu_busy_clusters"
    # no step is a piece of an iteration: main's frame read 2 steps of 0.262 ms, half the period
    assert m.headline.avg_step_ms >= truth["step_ms"]


def test_one_rank_reads_its_period(tmp_path):
    """The control: the same job on one rank (one process: every burst its own) reads the iterations' period, as on
    main."""
    m, truth = _read(tmp_path, ranks=1)
    assert m.steps.source == "repeated_launches"
    assert m.headline.avg_step_ms == pytest.approx(truth["step_ms"], rel=0.01)


@pytest.mark.parametrize("lag_us", [0.0, 50.0])
def test_each_ranks_range_frames_its_own_passes(tmp_path, lag_us: float):
    """Two ranks (one export, each its own GPU and its own `resnet50_inference` range around 4 synced passes whose
    first kernel differs per pass, after 2 warm-ups) ``lag_us`` apart: the passes inside the frame are the steps."""
    path = str(tmp_path / "ranks.sqlite")
    truth = N.write_framed_passes(path, warmup=2, measured=4, vary=True, ranks=2, rank_lag_us=lag_us)
    host = first_host(path)
    steps = host["steps"]
    assert steps["source"] == "gpu_busy_clusters" and steps["count"] == truth["measured"] == 4
    assert "`resnet50_inference`, its frame" in steps["note"]
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth["pass_ms"], rel=0.03)
