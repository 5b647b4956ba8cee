"""The last of a JAX / TF loop's ``train``-marked steps holds the loop's turn after its marker, as every earlier step
does (h37-forms12b, issue #37 class 2; h37-seeds24's left, ``--forms12`` walk seed 4044).

The wrong assumption (``steps.place._place_windows``): *a marked step ends at its marker's end*.  Each step runs to
the next marker's start, so it holds the loop's own code between its marker and the next (the turn: bookkeeping, the
iterator's advance); the last has no next marker and ended at its own.  A grain-fed JAX loop of 2 steps read 2.976 and
2.795 ms, the last without its 15 us turn: a mean of 2.885 ms of the 2.893 the loop ran.  Now the last runs past its
marker by the loop's turn the earlier steps show (``steps.ends._last_marker_turn``; the lower median of their turns,
``model.columns.loop_turn``, since h37-lastturn), never longer than the longest earlier step nor past the window's
end.

Truth by construction: ``synthetic.randjobs._write_grain`` (the mean over the iterations run, first marker to the
loop's end).  Controls: marks with no gap between them (``ProfilerStep#N``) and the kept ``real-h100-jax`` captures
(their last step dropped as partial: the kept steps unchanged)."""

from __future__ import annotations


import pytest

from synthetic import randjobs
from tests.support.random_jobs import laws_broken, report_of, truth_problems


def _mean(job: randjobs.Job) -> tuple[dict, float, float]:
    r = report_of(job)
    assert not laws_broken(r) and not truth_problems(job, r), (laws_broken(r), truth_problems(job, r))
    h = r.hosts[0]
    return h.steps, h.mean_step_ms(), randjobs.TRUTH[job.seed]["step_ms"]


def test_the_walks_two_step_grain_loop_is_its_mean_iteration() -> None:
    """Seed 4044: the mean to 0.05% (main: 2.885 of 2.893 ms, 0.27% short)."""
    job = randjobs.random_form12_job(4044)
    found, mean, period = _mean(job)
    assert (found["source"], found["count"]) == ("trace_train", 2), found
    assert mean == pytest.approx(period, rel=0.0005), (mean, period)


@pytest.mark.parametrize("gpu,other_us,prefetch", [("H100", 40.0, True), ("A100", 300.0, False)])
def test_two_step_loops_of_short_iterations(gpu: str, other_us: float, prefetch: bool) -> None:
    """Short iterations, where the turn is a larger share (main: short by half the turn over the mean)."""
    job = randjobs.form12_job("grain", seed=9, steps=2, layers=1, scale=0.05, take_us=20.0, other_us=other_us,
                              prefetch_thread=prefetch, command_buffers=False, gpu=gpu)
    found, mean, period = _mean(job)
    assert (found["source"], found["count"]) == ("trace_train", 2), found
    assert mean == pytest.approx(period, rel=0.0005), (mean, period)
