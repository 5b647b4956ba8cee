"""Each rank's GPU steps, where a framework's own ranges close each iteration (h37-ranksteps; ``scripts/randjobs.py
--forms12`` walk seeds 494, 1765, 2906, 3664).

``steps.detect._framework_iterations`` (h37-nvtx22) reads DeepSpeed's iterations from the end of one ZeRO optimizer
``step`` range to the end of the next, on each rank's thread.  Main merged the ranks' windows of one iteration into
one (the first rank's start to the last rank's end) and returned no per-rank windows, so every GPU's last step
spanned the ranks' lag: 4 ranks 50 us apart read their last steps 3.12 ms of the 2.97 ms period (seed 494), 2 ranks
0.626 of 0.577 ms (1765).  Now each rank's GPU is placed by its own thread's windows, as the other NVTX readings do
(``_aligned_line_windows``).  Nsight exports by construction (``synthetic.randjobs.random_form12_job``; truth
``randjobs.TRUTH``: the iterations the writer ran and their period).
"""

from __future__ import annotations

import dataclasses
import tempfile

import pytest

from synthetic.randjobs import TRUTH, random_form12_job
from tests.support.random_jobs import laws_broken, reports_of, truth_problems


def _rows(job) -> tuple:  # noqa: ANN001 - a randjobs Job
    """The job's report and GPU -> its step rows' lengths (ms), in order."""
    (r,) = reports_of(job, tempfile.mkdtemp(prefix="ranksteps"))
    out: dict = {}
    for row in r.to_dict()["hosts"][0]["step_rows"]:
        if row["gpu"] is not None:
            out.setdefault(row["gpu"], []).append(row["step_ms"])
    return r, out


@pytest.mark.parametrize("seed", [494, 1765, 2906, 3664])
def test_every_ranks_framework_iterations_are_the_period(seed):
    """Every rank's every step, the last too, is the job's period (to 1%: main's last steps were 3-32% over)."""
    job = random_form12_job(seed)
    assert job.fmt == "ds_nvtx" and job.params["ranks"] > 1, job
    r, rows = _rows(job)
    period = TRUTH[seed]["step_ms"]
    assert len(rows) == job.params["ranks"], rows
    for gpu, ms in rows.items():
        assert len(ms) == TRUTH[seed]["steps"], (gpu, ms)
        assert all(abs(x - period) <= 0.01 * period for x in ms), (gpu, ms, period)
    assert not truth_problems(job, r), truth_problems(job, r)
    assert not laws_broken(r), laws_broken(r)


def test_control_one_rank():
    """Control: seed 494's job on one rank has no lag to span; its steps are the period, as on main."""
    job = random_form12_job(494)
    job = dataclasses.replace(job, params={**job.params, "ranks": 1})
    r, rows = _rows(job)
    assert list(rows) == [0], rows
    ms = rows[0]
    assert len(ms) == 2 and all(abs(x - ms[0]) <= 0.01 * ms[0] for x in ms), ms
    assert not laws_broken(r), laws_broken(r)
