"""The kernels' time by class holds the calls that ran into the kept steps from before them (h37-review21).

``--forms5`` seed 30059 (``synthetic.randjobs``): two Kineto ranks whose all-reduces (10.5 ms) start before the kept
steps and run through them.  The ledger paints their time inside the steps (2.0 ms of collectives a step), the GPUs'
table counts it (h37-lawseeds: 2.23 and 1.81 ms of AllReduce a step), and ``metrics.comm.ran_into_steps`` says every
table of their time counts it -- but the kernel classes, read from the rows of the calls that *start* in the kept
steps, had no collective class at all: a diff of the run would read its collectives gone.  Now the class holds their
time inside the steps (``HostMetrics.kernels_ran_into``), as the GPUs' AllReduce column does; their launches count
where they started (0 here), as the communication tables count them.  Controls: a run whose calls all start inside
the kept steps keeps its classes (seed 0 of the same walk), and the kernels table holds the kept steps' own calls."""

from __future__ import annotations


import pytest

from synthetic.randjobs import random_form5_job
from tests.support.random_jobs import report_of


def _report(seed: int):  # noqa: ANN202 - a Report
    return report_of(random_form5_job(seed))


def test_calls_run_into_the_steps_are_their_class_time():
    """Since h37-nsyslast the late rank's last step runs its whole period (2.23 ms; it ended at its own work before,
    0.54 ms), so it holds the start of GPU 1's next queued all-reduce: one call of the eight GPU-steps starts inside
    (0.25 a step on GPU 1), the rest of the class's time ran in from before."""
    (h,) = _report(30059).hosts
    ar = [g.collectives["AllReduce"] for g in h.gpus]
    assert ar[0][0] == 0 and all(a[1] > 1.5 for a in ar), ar  # premise: GPU 0's calls all run in from before the steps
    classes = {c["class"]: c for c in h.kernel_classes}
    coll = classes.get("collective")  # main before h37-review21: absent
    assert coll is not None, h.kernel_classes
    assert coll["us_per_step"] / 1000 == pytest.approx(sum(a[1] for a in ar) / len(ar), abs=1e-3)
    # launches count where they started, as the communication tables count them: per step and GPU
    assert coll["launches_per_step"] == pytest.approx(sum(a[0] for a in ar) / len(ar)) and coll["kernels"] == 1
    # a part of the step: the class holds no more than the ledger's collectives and what ran beside them
    assert coll["us_per_step"] / 1000 <= max(g.step_ms for g in h.gpus) + 1e-6
    # the kernels table holds the kept steps' own calls: GPU 1's one, none of those that ran in
    rows = [row for row in h.kernels.rows if "AllReduce" in str(row[0])]
    count = h.kernels.columns.index("count")
    assert sum(row[count] for row in rows) == round(ar[1][0] * h.capture["steps_kept"]) == 1


def test_a_run_whose_calls_start_in_the_steps_keeps_its_classes():
    (h,) = _report(0).hosts
    launches = sum(c["launches_per_step"] for c in h.kernel_classes)
    assert launches > 0 and h.kernel_classes
    assert all(c["launches_per_step"] > 0 for c in h.kernel_classes), h.kernel_classes  # no class of run-in calls only
