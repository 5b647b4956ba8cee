"""The eager check grades what its threshold means: the eager ops' share of OP time, not of the step (h37-probe43x,
issue #37 class 4).

The wrong assumption (``rules.eager_execution``): *the share of the step the host spends in eager ops says how eager
the program is.*  The stock overview's level (``kEagerReportThresholdInPercent``, 10%) is a share of op time -- how
much of the program runs outside a compiled graph, the guide's "pure eager mode" (§1.2.2) -- and what compiling would
win is the saving's, which bounds the severity (``severity.*_min_saving``).  Graded by the step, an un-jitted JAX loop
(``--xplane`` walk seed 42889: 17 one-kernel ``jnp`` calls a step, every op of it eager, beside 28 ms of untraced host
work) read 8% eager and had no finding, while its words quoted the op-time level.

Truth by construction: ``synthetic.randjobs`` (``TRUTH``: the rules the job has).  Control: the same job compiled
(``eager`` 0: one jitted step a step) has no eager finding."""

from __future__ import annotations

import dataclasses

from synthetic import randjobs
from tests.support.random_jobs import report_of


def _eager(job: randjobs.Job):  # noqa: ANN202 - a Finding or None
    (h,) = report_of(job).hosts
    return next((f for f in h.findings if f.rule == "eager_execution"), None)


def test_walk_seed_42889_every_op_eager_is_reported():
    job = randjobs.random_xplane_job(42889)
    f = _eager(job)
    assert "eager_execution" in randjobs.TRUTH[job.seed]["rules"]
    assert f is not None
    assert f.metric.value == 1.0, f.metric  # every op of the step is an un-jitted call
    assert "of the host's op time" in f.summary and "10% of op time" in f.summary, f.summary
    # what compiling wins is under a tenth of the step (the untraced 28 ms stays): never critical
    assert f.saving is not None and f.saving.percent_of_step < 10.0 and f.severity == "warning", (f.severity, f.saving)


def test_the_same_job_jitted_has_no_eager_finding():
    job = randjobs.random_xplane_job(42889)
    job = dataclasses.replace(job, params={**job.params, "eager": 0})
    assert _eager(job) is None
