"""A multi-rank Nsight job's last step, and a serving engine's iterations read from its own step range (h37-nsyslast).

Jobs of ``scripts/randjobs.py --forms11`` (``synthetic.randjobs.random_form11_job``), their truth by construction
(``randjobs.TRUTH``: the iterations the writer ran and their period, every iteration alike):

* each rank's GPU step runs from its first kernel to the next step's first kernel, so it holds the host's time after
  its work (the next batch's wait, the untraced Python); the last has no next kernel, and main ended it at its own
  work's end -- 3 steps of 8.91 ms read 8.91, 8.91, 4.41 on each rank (walk seed 769: step ranges; 469: DeepSpeed's
  ``forward`` ranges; 704: SGLang's scheduler phases).  Now the last runs past its work by the gap the steps before it
  show (``steps.place._last_device_end``);
* host-wide windows read from one thread's launch sequence end the last step at that thread's last launch: the other
  ranks' launches of the last step, a little later, were in no step -- 4 ranks of a 37.94 ms step read their last
  37.9, 33.1, 29.0, 24.9 ms (seed 1066).  Now each rank's last window reaches past the reading thread's by the lag
  its launches show in the steps before (``steps.place._launch_lags``);
* 2 ranks of 2 TensorRT-LLM executor iterations in its domain (seed 221), ``_forward_step`` holding a fifth of the
  work: one serving pass of 77.3 ms.  Now the engine's step range, opened by ``_fetch_new_requests`` every time, reads
  the 2 iterations (``steps.top_ranges._engine_range_steps``).
"""

from __future__ import annotations

import dataclasses

import pytest

from synthetic.randjobs import TRUTH, random_form11_job
from tests.support.random_jobs import laws_broken, reports_of, truth_problems


def _report(job):
    (r,) = reports_of(job)
    return r


def _rows(r) -> dict:
    """GPU -> its step rows' lengths (ms), in order."""
    out: dict = {}
    for row in r.to_dict()["hosts"][0]["step_rows"]:
        if row["gpu"] is not None:
            out.setdefault(row["gpu"], []).append(row["step_ms"])
    return out


@pytest.mark.parametrize("seed", [769, 469, 704, 1066])
def test_every_ranks_last_step_is_the_period_long(seed):
    """Each rank's every step, the last too, is the job's period (to 1%); the mean step is the period."""
    job = random_form11_job(seed)
    r = _report(job)
    period = TRUTH[seed]["step_ms"]
    rows = _rows(r)
    assert len(rows) == job.params["ranks"], rows
    for gpu, ms in rows.items():
        assert len(ms) == TRUTH[seed]["steps"], (gpu, ms)
        assert all(abs(x - period) <= 0.01 * period for x in ms), (gpu, ms, period)
    assert not truth_problems(job, r), truth_problems(job, r)
    assert not laws_broken(r), laws_broken(r)


def test_a_serving_engines_iterations_are_its_steps():
    """Seed 221: 2 ranks, 2 TensorRT-LLM iterations, each opened by ``_fetch_new_requests``: 2 steps of the period
    (main: one serving pass of both)."""
    job = random_form11_job(221)
    r = _report(job)
    h = r.hosts[0]
    assert h.steps["found"] == 2, h.steps
    assert "`_forward_step`" in h.steps["note"] and "`_fetch_new_requests`" in h.steps["note"], h.steps["note"]
    period = TRUTH[221]["step_ms"]
    assert all(abs(x - period) <= 0.01 * period for ms in _rows(r).values() for x in ms), _rows(r)
    assert not truth_problems(job, r), truth_problems(job, r)


def test_one_engine_iteration_stays_one_pass():
    """Control: the same engine's job of one iteration has no repeat to read: one serving pass, as on main."""
    job = random_form11_job(221)
    job = dataclasses.replace(job, params={**job.params, "steps": 1})
    r = _report(job)
    assert r.hosts[0].steps["source"] == "single_pass", r.hosts[0].steps
    assert not laws_broken(r), laws_broken(r)


@pytest.mark.parametrize("seed", [769, 1066])
def test_one_rank_reads_as_before(seed):
    """Control: one rank of the same jobs -- its host windows hold its steps, no GPU window is placed -- reads every
    step the period long, on main as here."""
    job = random_form11_job(seed)
    job = dataclasses.replace(job, params={**job.params, "ranks": 1})
    r = _report(job)
    period = TRUTH[seed]["step_ms"]
    (ms,) = _rows(r).values()
    assert len(ms) == TRUTH[seed]["steps"] and all(abs(x - period) <= 0.01 * period for x in ms), (ms, period)
