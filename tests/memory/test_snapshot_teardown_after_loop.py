"""A training loop whose script frees its model and optimizer after the loop, before the dump (h37-wild54m).

Real case (read locally, not kept: no licence): codeasier/MemSnapDump's ``snapshot_1768383987920985470.pkl``, an
Ascend NPU (``torch_npu``) run of ``memory_leaks_demo.py`` -- a ResNet built in the history (320 allocations), 3
training iterations with Adam (each peaking at 450 MiB in its step), then line 36 frees all 642 blocks it holds: the
dump holds nothing allocated.  The fall to 0 after the last iteration read as that iteration dipping below its start
(``job.iterations._check``), so the job read 2 iterations, "the history ends inside an iteration", and the peak
"outside every training iteration".  Frees after the history's last allocation that drop below the last iteration's
start release what the loop held across its iterations: a teardown, no part of the iteration.

By construction (``synthetic.memsnapshot.training_iterations(teardown=True)``: every block freed after the loop).
Named controls (pass on base too): the same loops without the teardown."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_report import report as snapshot_report


def _read(tmp_path: Path, **kw):  # noqa: ANN202 - the host report and the scenario
    sc = ms.training_iterations(**kw)
    return snapshot_report(tmp_path, sc.doc), sc


@pytest.mark.parametrize("kw", [{}, {"micro_batches": 2}, {"set_to_none": False}, {"recorded_from_loop": True},
                                {"iterations": 4}])
def test_a_loop_followed_by_its_teardown_keeps_its_last_iteration(tmp_path, kw):
    rep, sc = _read(tmp_path, **{"iterations": 3, **kw, "teardown": True})
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", sc.truth["iterations"]), rep.steps
    assert "ends inside an iteration" not in rep.steps["note"]
    kept = slice(-rep.steps["count"], None)  # the first, its one-time work, may be left out as warm-up
    assert [row[1] for row in rep.gpus[0].memory["step_peaks"]] == sc.truth["peaks"][kept]


def test_the_peak_of_the_last_iteration_is_placed_in_it_not_outside_every_one(tmp_path):
    """A list that keeps each iteration's output (freed by the teardown with the rest) raises every iteration's peak
    above the one before: the last iteration's is the history's (base: "outside every training iteration")."""
    rep, sc = _read(tmp_path, iterations=3, leak="list", teardown=True)
    mem = rep.gpus[0].memory
    assert mem["peak_allocated_bytes"] == sc.truth["peaks"][-1] == max(sc.truth["peaks"])
    assert mem["peak_step"] == rep.steps["found"] - 1  # the last step's id (0-based)


@pytest.mark.parametrize("kw", [{}, {"dump_in_forward": True}])
def test_control_without_a_teardown_the_iterations_read_as_before(tmp_path, kw):
    rep, sc = _read(tmp_path, iterations=3, **kw)
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", 3), rep.steps
