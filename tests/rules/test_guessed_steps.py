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
    iteration, a range around each gradient all-reduce), no autograd ranges: on main "GPU work of an unknown kind".
    Truth by construction: 2 iterations per rank."""
    p = tmp_path / "ddp.sqlite"
    truth = write(str(p), NsysJob(steps=2, ranks=2, autograd_nvtx=False, step_range=None, nccl_us=400.0,
                                  extra_ranges=("forward", "backward"), comm_range="allreduce grads"))
    rep = analyze_session("d", "s", [SimpleNamespace(host="h0", path=str(p), format="nsys", size=0)]).to_dict()
    job, steps = rep["hosts"][0]["job"], rep["hosts"][0]["steps"]
    assert job["kind"] == "training"
    assert "`backward` ×4" in job["kind_evidence"] and "`allreduce grads` ×4" in job["kind_evidence"]
    assert steps["source"] != "gpu_busy_clusters" and steps["found"] == truth.steps


def test_one_training_iteration_named_by_its_nvtx_is_one_step(tmp_path):
    """One iteration per rank (its `backward` range does not repeat): the capture is that iteration, one step of
    medium confidence -- on main a capture of unknown work read as one whole-capture "step" of low confidence."""
    p = tmp_path / "one_iteration.sqlite"
    write(str(p), NsysJob(steps=1, ranks=2, ops=60, autograd_nvtx=False, step_range=None, nccl_us=400.0,
                          extra_ranges=("forward", "backward"), comm_range="allreduce grads"))
    rep = analyze_session("d", "s", [SimpleNamespace(host="h0", path=str(p), format="nsys", size=0)]).to_dict()
    job, steps = rep["hosts"][0]["job"], rep["hosts"][0]["steps"]
    assert job["kind"] == "training"
    assert (steps["source"], steps["count"], steps["confidence"]) == ("single_pass", 1, "medium")
    assert "one training pass" in steps["note"]


def test_the_whole_capture_as_one_step_is_no_guess_and_carries_no_confidence_label(tmp_path):
    """A window with no steps found is read as one "step": its numbers are exact for the window, so a critical stays
    critical -- and is not labelled "low confidence (steps)" beside it (on the real Nsight FSDP window, main showed
    "critical ... saves ~921 ms/step ... low confidence (steps)" on the first finding)."""
    p = tmp_path / "pageable.sqlite"
    write(str(p), NsysJob(steps=8, autograd_nvtx=False, step_range=None, pinned=False))
    m = host_metrics(reader.read_trace(str(p)))
    sure = rules.evaluate(m)
    whole = dataclasses.replace(m, steps=dataclasses.replace(m.steps, source="whole_capture", confidence="low"))
    found = rules.evaluate(whole)
    assert [f.severity for f in found if f.rule != "capture_quality"] == [f.severity for f in sure if f.rule != "capture_quality"]
    assert all(f.confidence == "high" for f in found)
