"""Each rank's own last step reaches as far as its own launches, not the first rank's (h37-forms12b, issue #37
class 2; ``scripts/randjobs.py --forms12`` walk seed 6593).

The wrong assumption (``steps.place._own_host_windows``): *every rank's last step reaches where the host-wide last
step reaches*.  The host-wide last window starts at the first rank's last mark and is stretched to where the work it
launched ends, so its reach is the first rank's.  A program's ``data`` ranges (each the batch's load, its
``eval_step`` after it) on 4 ranks 50 us apart: the later ranks launch their last ``eval_step`` after that reach, so
main read each GPU's last step 0.372, 0.356, 0.306 and 0.257 ms of the 0.372 ms iteration (GPU 3's last 4 kernels in
no step).  Now each rank's reach moves by how much later its own last step starts
(``steps.place._own_last_reach``).

Truth by construction: ``synthetic.randjobs.random_form12_job`` (``TRUTH``: the iterations the writer ran and their
period, every rank alike).  Controls: the same job on one rank, DeepSpeed's ranks (``--forms12`` 494)."""

from __future__ import annotations

import dataclasses

import pytest

from synthetic.randjobs import TRUTH, random_form12_job
from tests.support.random_jobs import gpu_step_rows, laws_broken, truth_problems


def _period_rows(job) -> tuple[dict[int, list[float]], float]:  # noqa: ANN001 - a randjobs.Job
    r, rows = gpu_step_rows(job)
    assert not laws_broken(r), laws_broken(r)
    assert not truth_problems(job, r), truth_problems(job, r)
    return rows, TRUTH[job.seed]["step_ms"]


def test_every_ranks_last_evaluation_step_is_the_period():
    """Seed 6593: 5 ``data`` / ``eval_step`` iterations on 4 ranks 50 us apart; every GPU's every step the period to
    0.1% (main: the last 0.356, 0.306, 0.257 ms on GPUs 1-3 of 0.372)."""
    job = random_form12_job(6593)
    assert job.fmt == "eval_nvtx" and job.params["ranks"] == 4, job
    rows, period = _period_rows(job)
    assert sorted(rows) == [0, 1, 2, 3], rows
    for gpu, ms in rows.items():
        assert len(ms) == TRUTH[6593]["steps"], (gpu, ms)
        assert all(abs(x - period) <= 0.001 * period for x in ms), (gpu, ms, period)


@pytest.mark.parametrize("ranks", [6, 8])
def test_more_ranks_of_the_same_job(ranks: int):
    """The same job on 6 and 8 ranks: the later ranks' last steps whole too (main: short by their lag past the first
    rank's reach)."""
    job = random_form12_job(6593)
    job = dataclasses.replace(job, params={**job.params, "ranks": ranks})
    rows, period = _period_rows(job)
    assert len(rows) == ranks and all(abs(ms[-1] - period) <= 0.001 * period for ms in rows.values()), (rows, period)


@pytest.mark.parametrize("seed,ranks", [(6593, 1), (6593, 2), (6593, 3), (494, None)])
def test_controls_read_as_before(seed: int, ranks: int | None):
    """One rank (no lag to move by), 2 and 3 ranks (their lag within the first rank's reach: whole on main too) and
    DeepSpeed's ranks read from its optimizer's range: the period, on both."""
    job = random_form12_job(seed)
    if ranks is not None:
        job = dataclasses.replace(job, params={**job.params, "ranks": ranks})
    rows, period = _period_rows(job)
    assert all(abs(x - period) <= 0.001 * period + 0.002 for ms in rows.values() for x in ms), (rows, period)
