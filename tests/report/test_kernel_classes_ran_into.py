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

import tempfile

import pytest

from synthetic.randjobs import random_form5_job
from tests.support.random_jobs import report_of


def _report(seed: int):  # noqa: ANN202 - a Report
    return report_of(random_form5_job(seed), tempfile.mkdtemp(prefix="ranin"))


def test_calls_run_into_the_steps_are_their_class_time():
    (h,) = _report(30059).hosts
    ar = [g.collectives["AllReduce"] for g in h.gpus]
    assert all(a[0] == 0 and a[1] > 1.5 for a in ar), ar  # premise: no call starts in the kept steps, each GPU's runs in
    classes = {c["class"]: c for c in h.kernel_classes}
    coll = classes.get("collective")  # main: absent
    assert coll is not None, h.kernel_classes
    assert coll["us_per_step"] / 1000 == pytest.approx(sum(a[1] for a in ar) / len(ar), abs=1e-3)
    assert coll["launches_per_step"] == 0 and coll["kernels"] == 1
    # a part of the step: the class holds no more than the ledger's collectives and what ran beside them
    assert coll["us_per_step"] / 1000 <= max(g.step_ms for g in h.gpus) + 1e-6
    assert not any("AllReduce" in str(row[0]) or "nccl" in str(row[0]).lower() for row in h.kernels.rows)


def test_a_run_whose_calls_start_in_the_steps_keeps_its_classes():
    (h,) = _report(0).hosts
    launches = sum(c["launches_per_step"] for c in h.kernel_classes)
    assert launches > 0 and h.kernel_classes
    assert all(c["launches_per_step"] > 0 for c in h.kernel_classes), h.kernel_classes  # no class of run-in calls only
