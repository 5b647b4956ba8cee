"""The input account of merged ranks reads each rank's own lead (h37-walk13).

A Kineto host of two ranks, each marking its own ``ProfilerStep`` steps with untraced host time before its first op
(``randjobs`` forms13 seed 33: 2.40 ms a step, no DataLoader event): the ledger books each GPU's input wait from its
own rank's input spans (``context._own_host``), but the input account (``metrics.inputs.host_input``) read the host's
spans over the merged step windows, which held none -- so the finding had no source and named no part of its wait
(the ``input<=account`` law).  The account now reads the spans the ledger painted."""

from __future__ import annotations


from synthetic import randjobs
from tests.support.random_jobs import report_of


def _input_finding(seed: int) -> dict:
    """The input finding of forms13 job ``seed``'s one host (as the report's JSON states it)."""
    r = report_of(randjobs.random_form13_job(seed))
    (f,) = [f for f in r.to_dict()["hosts"][0]["findings"] if f["rule"] == "input_bound"]
    return f


def test_each_ranks_untraced_lead_is_the_input_wait_it_names():
    """Seed 33 (two ranks, 2.39 ms of untraced host time before each step's first op): the finding names the
    untraced lead as its source, with the whole wait inside it."""
    job = randjobs.random_form13_job(33)
    assert job.params["ranks"] == 2 and job.params["loader_us"] == 0.0, job  # the form this test is of
    f = _input_finding(33)
    d = f["metric"]["detail"]
    assert d["source"] == "before_first_op", d
    assert abs(d["input_wait_ms"] - job.params["unrecorded_us"] / 1e3) < 0.05, d
    assert "the host time before each step's first op (2.40 ms a step" in " ".join(f["summary"].split()), f["summary"]
