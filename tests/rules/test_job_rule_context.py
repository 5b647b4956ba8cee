"""The job-scope rules' fixes fit the job, as the host rules' do (issue #37, h37-left34): ``rules/_job`` asks the
job's context (its kind: ``any_work`` for work neither training nor a confident forward; ``alone`` for one process)
through the one ``job.context_tags`` the host rules use, and PyTorch's job fixes have forward-pass and
no-known-kind variants.  On main the job rules read the first host's tags only: a tensor-parallel forward
(``tp_allreduce``, read as forward passes) and an expert-parallel forward (``moe_alltoall_skew``) were told DDP's
``loss_fn(model(x), y).backward()`` under ``no_sync`` and TorchRec's training pipeline with an optimizer."""

from __future__ import annotations

from functools import cache
from types import SimpleNamespace

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.metrics.job import JobView
from tb_gpu_advisor.rules import _job
from tb_gpu_advisor.runtime.pipeline import analyze_session

TRAINING_CODE = (".backward(", "optimizer", "train_step", "aux_loss")


@cache
def _report(tmp: str, name: str) -> dict:
    paths = tt.write_run(tmp, name, steps=8, run=name)
    hosts = [SimpleNamespace(host=f"h{i}", path=p, format="kineto", size=0) for i, p in enumerate(paths)]
    return analyze_session(name, "s", hosts).to_dict()


@pytest.fixture(scope="module")
def tmp(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("jobctx"))


@pytest.mark.parametrize("name,rule", [("tp_allreduce", "comm_exposed"), ("moe_alltoall_skew", "alltoall_imbalance")])
def test_a_forward_jobs_collective_fixes_hold_no_training_code(tmp, name, rule):
    rep = _report(tmp, name)
    assert rep["hosts"][0]["job"]["kind"] == "inference"  # by construction: forward GEMMs only, no backward
    found = [f for f in rep["findings"] if f["rule"] in ("comm_exposed", "alltoall_imbalance")]
    assert rule in {f["rule"] for f in found}
    for f in found:
        words = " ".join(a["text"] + " " + (a["snippet"] or "") for a in f["actions"])
        assert not [c for c in TRAINING_CODE if c in words], (f["rule"], words)


def _view(kind: str, tags: tuple[str, ...] = (), processes: int = 4) -> JobView:
    return JobView(framework="pytorch", gpu_names=["NVIDIA H100 80GB HBM3"], tags=tags, kind=kind,
                   processes=processes)


def test_a_training_job_keeps_ddp_overlap_and_work_of_no_known_kind_gets_no_training_step():
    train = " ".join(a.snippet or "" for a in _job.fixes_for(_view("training"), "comm_exposed", ["AllReduce", "any"]))
    assert "no_sync" in train and ".backward(" in train
    unknown = _job.fixes_for(_view("unknown"), "comm_exposed", ["AllReduce", "any"])
    code = " ".join(a.snippet or "" for a in unknown)
    assert "DistributedDataParallel" in code and ".backward(" not in code
    forward = _job.fixes_for(_view("inference", ("inference",)), "comm_exposed", ["AllReduce", "any"])
    assert "_micro_pipeline_tp" in " ".join(a.snippet or "" for a in forward)
