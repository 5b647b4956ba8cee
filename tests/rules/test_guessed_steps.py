"""A finding that rests on low-confidence steps is never critical (issue #37): the rules' severity path
(``rules._step_confidence``) caps it at warning for every rule, and says why."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor import rules
from tb_gpu_advisor.formats.nsys import reader
from tb_gpu_advisor.runtime.pipeline import host_metrics, analyze_session


def test_critical_findings_on_guessed_steps_are_warnings(tmp_path):
    """Pageable copies every step (critical on the generator's own steps); the same metrics with their steps read
    as GPU bursts (low confidence) give the same findings, none critical."""
    p = tmp_path / "pageable.sqlite"
    write(str(p), NsysJob(steps=8, autograd_nvtx=False, step_range=None, pinned=False))
    m = host_metrics(reader.read_trace(str(p)))
    sure = rules.evaluate(m)
    assert any(f.severity == "critical" for f in sure)
    guessed = dataclasses.replace(m, steps=dataclasses.replace(m.steps, source="gpu_busy_clusters", confidence="low"))
    found = rules.evaluate(guessed)
    assert {f.rule for f in found} == {f.rule for f in sure}
    assert not any(f.severity == "critical" for f in found)
    capped = [f for f in found if "not critical" in f.summary]
    assert capped and all(f.severity == "warning" for f in capped)


def test_a_training_job_named_by_its_nvtx_is_training_and_never_cut_by_gpu_bursts(tmp_path):
    """A 2-rank DDP-like export whose only evidence of training is the user's NVTX (`forward`, `backward` per
    iteration, NCCL all-reduce kernels), no autograd ranges: on main "GPU work of an unknown kind"."""
    p = tmp_path / "ddp.sqlite"
    write(str(p), NsysJob(steps=2, ranks=2, autograd_nvtx=False, step_range=None, extra_ranges=("forward", "backward"),
                          nccl_us=400.0))
    rep = analyze_session("d", "s", [SimpleNamespace(host="h0", path=str(p), format="nsys", size=0)]).to_dict()
    job, steps = rep["hosts"][0]["job"], rep["hosts"][0]["steps"]
    assert job["kind"] == "training" and "`backward` ×4" in job["kind_evidence"]
    assert steps["source"] != "gpu_busy_clusters" and steps["found"] == 2
