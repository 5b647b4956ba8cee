"""Ranks in one export each read their own steps: each rank's launch period against its own host's waits and its own
range, each rank's GPU bursts cut by its own waits and framed by its own range (issue #37 classes 1/2, h37-probe47f).

The wrong assumption: *the ranks' merged times are one program's*.  ``job.period.repeated_launches`` read the busiest
GPU's launch sequence against every process's waits, so a rank 50 us behind "waited" in the middle of each repeat
and no boundary was the loop's: the walk's job (``scripts/randjobs.py --forms11 --seed 104070``: two ranks 50 us apart,
2 iterations of ``forward FFT`` > ``pointwise`` > ``backward FFT``) read as one pass of the whole 1.076 ms; and its
frame (``job.period._frame``) let the other rank's range split that rank's repeats differently, so no frame was read:
a benchmark's 2 warm-ups counted as steps (30.7 ms for passes of 20.2).  ``steps.framed._framed_bursts`` cut the GPUs'
merged bursts, and ranks 3 ms apart keep each other's GPUs busy: 4 timed passes each read as one pass of 146 ms.
Now each process's own waits, range and bursts make its steps (``job.waits.process_waits``,
``job.frame.process_times``, ``job.period._each_process``, ``steps.framed._framed_own_bursts``), each GPU's windows
its own process's (``steps.place._own_gpu_windows``, ``_own_host_windows``).

Truth by construction: ``synthetic.randjobs.form11_job``'s (the iterations' period, 0.513 ms) and
``synthetic.nsysexport.write_framed_passes``' (4 timed passes a rank, each synced, period ``period_ms`` 20.23 ms).
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


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_each_rank_reads_its_loops_period(tmp_path, ranks: int) -> None:  # noqa: ANN001
    """2, 4 ranks read as one: 2 iterations of the period (the last dropped as partial, as one rank's).  BASE: 2 and
    4 ranks one pass (``whole_capture``) of 1.076 ms."""
    R.TRUTH.pop(_SEED, None)
    R.write(R.form11_job("nsys_vocab", _SEED, **{**_JOB, "ranks": ranks}), str(tmp_path))
    path = next(os.path.join(d, f) for d, _, fs in os.walk(tmp_path) for f in fs if f.endswith(".sqlite"))
    m = host_metrics(formats.read(SimpleNamespace(host="h", path=path, format="nsys", size=0)))
    m = m[0] if isinstance(m, tuple) else m
    truth = R.TRUTH[_SEED]
    assert truth["steps"] == 2 and truth["step_ms"] == pytest.approx(0.51278)
    assert (m.steps.source, m.steps.found) == ("repeated_launches", 2), m.steps.note
    assert m.headline.avg_step_ms == pytest.approx(truth["step_ms"], rel=0.002)


def _ranks(tmp_path, ranks: int, lag_us: float, vary: bool) -> tuple[dict, dict]:  # noqa: ANN001
    path = str(tmp_path / "ranks.sqlite")
    truth = N.write_framed_passes(path, warmup=2, measured=4, vary=vary, ranks=ranks, rank_lag_us=lag_us)
    return first_host(path), truth


@pytest.mark.parametrize("ranks,lag_us", [(2, 3000.0), (3, 7000.0)])
def test_each_ranks_own_bursts_in_its_own_frame(tmp_path, ranks: int, lag_us: float) -> None:  # noqa: ANN001
    """Ranks past the sync gap apart (the merged GPUs never idle together), each pass's first kernel its own (no
    launch period): each rank's range frames its own 4 bursts; every GPU's steps are its own passes, one period each.
    BASE: one pass (``single_pass``) of 146 ms (2 ranks)."""
    host, truth = _ranks(tmp_path, ranks, lag_us, vary=True)
    steps = host["steps"]
    assert (steps["source"], steps["count"]) == ("gpu_busy_clusters", truth["measured"]), steps
    assert "each rank's bursts its own GPU's" in steps["note"]
    assert [g["step_ms"] for g in host["gpus"]] == pytest.approx([truth["period_ms"]] * ranks, rel=0.001)


@pytest.mark.parametrize("ranks,lag_us", [(2, 50.0), (2, 3000.0), (4, 50.0)])
def test_each_ranks_own_period_in_its_own_frame(tmp_path, ranks: int, lag_us: float) -> None:  # noqa: ANN001
    """The same passes repeating one launch sequence: each rank's period inside its own range, its 2 warm-ups read
    apart, each GPU's steps its own rank's.  BASE: no frame (the ranks' ranges split the busiest rank's repeats two
    ways), 6 repeats with the warm-ups, first and last dropped: 4 steps of 30.7 ms."""
    host, truth = _ranks(tmp_path, ranks, lag_us, vary=False)
    steps = host["steps"]
    assert (steps["source"], steps["count"]) == ("repeated_launches", truth["measured"]), steps
    assert "`resnet50_inference`, its frame" in steps["note"] and "2 before it are its warm-up" in steps["note"]
    assert [g["step_ms"] for g in host["gpus"]] == pytest.approx([truth["period_ms"]] * ranks, rel=0.001)
