"""Each rank's GPU steps where a framework's or an engine's own ranges mark the iterations, and vLLM V1's model
runner scopes as its engine's steps (h37-ranksteps; ``scripts/randjobs.py --forms12`` walk seeds 494, 1765, 2906,
3664, 5087, 5116; ``--forms11`` seeds 221, 6725).

``steps.iterations._framework_iterations`` (h37-nvtx22) reads DeepSpeed's iterations from the end of one ZeRO optimizer
``step`` range to the end of the next, on each rank's thread.  Main merged the ranks' windows of one iteration into
one (the first rank's start to the last rank's end) and returned no per-rank windows, so every GPU's last step
spanned the ranks' lag: 4 ranks 50 us apart read their last steps 3.12 ms of the 2.97 ms period (seed 494), 2 ranks
0.626 of 0.577 ms (1765).  Now each rank's GPU is placed by its own thread's windows, as the other NVTX readings do
(``_aligned_line_windows``).  Nsight exports by construction (``synthetic.randjobs.random_form12_job``; truth
``randjobs.TRUTH``: the iterations the writer ran and their period).

The engine's and the training range's readings (``_engine_range_steps``, ``_training_range_steps``, h37-nsyslast)
returned no per-rank windows either: 2 ranks of 2 TensorRT-LLM iterations read rank 1's last 38.66 of 38.61 ms (seed
221).  And vLLM V1's ``gpu_model_runner: preprocess`` / ``forward`` / ... scopes, 2 iterations on 2 ranks (seed 6725),
read as one serving pass of 2.26 ms: its step range (``Engine.step_span``) knew only ``execute_model`` and
``execute_context_*``, and 2 repeats of ``preprocess`` are under ``steps.nvtx_min_repeats``.  ``gpu_model_runner:
forward`` runs once an engine step, so it is vLLM's step range too.
"""

from __future__ import annotations

import dataclasses

import pytest

from synthetic.randjobs import TRUTH, random_form11_job, random_form12_job
from tests.support.random_jobs import gpu_step_rows as _rows, laws_broken, truth_problems


@pytest.mark.parametrize(("draw", "seed"), [(random_form12_job, s) for s in (494, 1765, 2906, 3664, 5087, 5116)]
                         + [(random_form11_job, s) for s in (221, 6725)])
def test_every_ranks_marked_iterations_are_the_period(draw, seed):  # noqa: ANN001 - a randjobs drawer
    """Every rank's every step, the last too, is the job's period (to 0.1% and 2 us: main's last steps ran over by
    the ranks' lag, 50-150 us, 0.13% of 221's 38.6 ms and 3-32% of the others'; 6725 one pass of both iterations)."""
    job = draw(seed)
    assert job.fmt in ("ds_nvtx", "nsys_vocab") and job.params["ranks"] > 1, job
    r, rows = _rows(job)
    period = TRUTH[seed]["step_ms"]
    assert len(rows) == job.params["ranks"], rows
    for gpu, ms in rows.items():
        assert len(ms) == TRUTH[seed]["steps"], (gpu, ms)
        assert all(abs(x - period) <= 0.001 * period + 0.002 for x in ms), (gpu, ms, period)
    assert not truth_problems(job, r), truth_problems(job, r)
    assert not laws_broken(r), laws_broken(r)


def test_a_training_ranges_iterations_on_two_ranks():
    """``--forms11`` seed 132 (``data``/``fwd``/``bwd``/``opt``, 2 iterations, one rank) on 2 ranks: read from the
    ``bwd`` training range opened by ``data`` (``_training_range_steps``), each GPU's steps the period (main: the last
    7.113 of 7.063 ms on both GPUs, the ranks' 50 us lag)."""
    job = random_form11_job(132)
    job = dataclasses.replace(job, params={**job.params, "ranks": 2})
    r, rows = _rows(job)
    assert "`bwd`, the training iteration's own range" in r.hosts[0].steps["note"], r.hosts[0].steps
    period = TRUTH[132]["step_ms"]
    assert sorted(rows) == [0, 1] and all(len(ms) == 2 for ms in rows.values()), rows
    assert all(abs(x - period) <= 0.001 * period + 0.002 for ms in rows.values() for x in ms), (rows, period)
    assert not laws_broken(r), laws_broken(r)


def test_control_vllm_three_iterations():
    """Control: seed 6725's job of 3 iterations repeats ``gpu_model_runner: preprocess`` often enough to read it as
    the top-level range, as on main (its last step dropped: nothing marks where it ends)."""
    job = random_form11_job(6725)
    job = dataclasses.replace(job, params={**job.params, "steps": 3})
    r, rows = _rows(job)
    assert r.hosts[0].steps["found"] == 3 and "`gpu_model_runner: preprocess`" in r.hosts[0].steps["note"], r.hosts[0].steps
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
