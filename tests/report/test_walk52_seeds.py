"""The default stream's jobs that broke the report's laws in session 52's walk at seed 250000 (4ae93328), each held to
what it read wrong, not only to the laws:

* seed 250855, two Kineto ranks marking ``record_function("train_step")`` back to back (no loop time between them):
  Kineto writes each event's start and length in microseconds to three decimals, so a range's end lands up to 1 ns
  past the next one's start, and three of rank 0's ten ranges were read as nested in the one before and dropped.  Its
  GPU's kept steps came out 30.1 ms and 1.1 ms long around a 15.6 ms period, and ``host_sync`` put 17.1 ms of waits
  in a 15.6 ms step (``part<=whole``);
* seed 250213, an inference loop already compiled and replayed as CUDA graphs whose host runs its own code half of
  each step: the host-bound finding's only fixes (compile, graphs) were in use, so it gave none (``fix-given``).
"""

from __future__ import annotations

import pytest

from synthetic.randjobs import random_job
from tests.support.random_jobs import check, report_of


def test_back_to_back_step_ranges_are_each_a_step() -> None:
    """Every ``train_step`` range of each rank is a step: 10 found; each GPU's kept steps are the loop's period."""
    job = random_job(250855)
    report = report_of(job)
    (host,) = report.hosts
    assert host.steps["found"] == job.params["steps"], host.steps["note"]
    assert f"({2 * job.params['steps']} on 2 threads)" in host.steps["note"]
    period = host.gpus[0].step_ms
    for g in host.gpus:
        assert g.step_ms == pytest.approx(period, rel=0.01)
    rows = [r.step_ms for r in host.step_rows]
    assert rows and max(rows) <= 1.05 * period, rows
    sync = next(f for f in report.findings if f.rule == "host_sync")
    assert sync.metric.detail["wait_ms_per_step"] <= period


def test_a_host_bound_step_with_every_launch_fix_in_use_says_how_to_see_the_host() -> None:
    """Compiled and replayed as graphs, the host-bound step's fix is to record what the host does, never none."""
    job = random_job(250213)
    assert job.params["graph"] and not job.params["train"]
    bound = next(f for f in report_of(job).findings if f.rule == "unexplained_idle")
    assert "Already in use, so not suggested" in bound.summary and "CUDA graphs" in bound.summary
    assert bound.actions, bound.summary
    assert any("with_stack=True" in (a.snippet or "") or "record_function" in a.text for a in bound.actions)


@pytest.mark.parametrize("seed", [250855, 250213])
def test_the_walks_seeds_keep_every_law(seed: int) -> None:
    assert check(random_job(seed)) == []
