"""The all-to-all's fixes follow what it exchanges in every rule that speaks of it (h37-a2afix's left, h37-review19).

``job.exchange`` tags a job with what its all-to-all moves (``exchange_experts``, ``exchange_embeddings``,
``exchange_sequence``) from the work beside it, and ``comm_exposed`` asks for that kind's fix.  Two places did not:

* ``alltoall_imbalance`` told every job both MoE's (an auxiliary loss, hot experts) and TorchRec's (a sharding plan)
  balancing, whatever the exchange -- the assumption that a skewed all-to-all's kind is unknown;
* ``comm_exposed@tensor_parallel`` rewrites the rule's fixes whole (DTensor's all-gathers are TP's, not FSDP's), so an
  MoE or sequence-parallel job that also shards its layers lost its all-to-all's fix.

Truth by construction: ``synthetic.torchtrace.skewed_all_to_all`` (the ``moe_alltoall_skew`` forward on 8 ranks,
rank 0 sending 4x the others) with the kernels beside the exchange named as an MoE's router and experts, or as
embedding lookups; the control keeps the dense GEMMs of ``moe_alltoall_skew`` (no kind: both ways stay).
"""

from __future__ import annotations

from functools import cache

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.metrics.job import JobView
from tb_gpu_advisor.rules import _job
from tb_gpu_advisor.rules.comm_exposed import fix_variants
from tests.support.run_report import run_report

#: The kernels before and after the exchange, by what the job exchanges (names as the libraries write them).
BESIDE = {"experts": ("void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>(...)", "fused_moe_kernel"),
          "embeddings": ("void split_embedding_codegen_forward_unweighted_kernel<float, float, int>(...)", tt.GEMM_FWD),
          "none": (tt.GEMM_FWD, tt.GEMM_BWD[0])}
EXPERT_WORDS, EMBEDDING_WORDS = ("expert",), ("TorchRec", "sharding plan", "embedding")


@cache
def _report(tmp: str, kind: str) -> dict:
    sc = tt.Scenario(8, tt.skewed_all_to_all(*BESIDE[kind]), ["alltoall_imbalance"], [], f"skewed all-to-all, {kind}")
    tt.write_run(tmp, sc, steps=8, run=kind)
    return run_report(tmp, kind).to_dict()


@pytest.fixture(scope="module")
def tmp(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("a2akind"))


def _balance_words(rep: dict) -> str:
    (f,) = [f for f in rep["findings"] if f["rule"] == "alltoall_imbalance"]
    return " ".join(a["text"] + " " + (a["snippet"] or "") for a in f["actions"])


@pytest.mark.parametrize("kind,says,never", [("experts", EXPERT_WORDS, EMBEDDING_WORDS),
                                             ("embeddings", EMBEDDING_WORDS, EXPERT_WORDS)])
def test_a_skewed_all_to_all_is_told_its_own_kinds_balancing(tmp, kind, says, never):
    rep = _report(tmp, kind)
    assert f"exchange_{kind}" in rep["hosts"][0]["job"]["tags"]  # the premise: the job stage read the kind
    words = _balance_words(rep)
    assert all(w in words for w in says), words
    assert not [w for w in never if w in words], words


def test_control_an_all_to_all_of_no_kind_keeps_both_ways(tmp):
    """Dense GEMMs beside the exchange say nothing of it: the fix names both kinds' balancing, as before."""
    rep = _report(tmp, "none")
    assert not [t for t in rep["hosts"][0]["job"]["tags"] if t.startswith("exchange_")]
    words = _balance_words(rep)
    assert "hot experts" in words and "TorchRec" in words


def _view(kind: str, tags: tuple[str, ...]) -> JobView:
    return JobView(framework="pytorch", gpu_names=["NVIDIA H100 80GB HBM3"], tags=tags, kind=kind, processes=4)


def _exposed_fix(view: JobView, types: list[str]) -> str:
    return " ".join(a.text + " " + (a.snippet or "") for a in
                    _job.fixes_for(view, "comm_exposed", fix_variants(view, types)))


@pytest.mark.parametrize("kind,tags,says", [
    ("training", ("tensor_parallel", "exchange_experts"), "DualPipe"),
    ("inference", ("inference", "tensor_parallel", "exchange_experts"), "low_latency_dispatch"),
    ("training", ("tensor_parallel", "exchange_sequence"), "ring attention"),
    ("training", ("tensor_parallel", "exchange_embeddings"), "TrainPipelineSparseDist")])
def test_a_tensor_parallel_job_keeps_its_all_to_alls_kind(kind, tags, says):
    """A job with DTensor's ``Redistribute`` (tag ``tensor_parallel``) and an all-to-all of a read kind: the exchange's
    own fix beside the tensor-parallel one, a forward's for a forward (no training word to an inference job)."""
    words = _exposed_fix(_view(kind, tags), ["AllReduce", "AllToAll"])
    assert says in words and "Tensor parallelism" in words, words
    if "inference" in tags:
        assert "micro-batch's dispatch and combine" not in words and "auxiliary loss" not in words


def test_control_a_tensor_parallel_job_without_an_all_to_all_keeps_the_tensor_parallel_fix_alone():
    words = _exposed_fix(_view("training", ("tensor_parallel",)), ["AllReduce"])
    assert "Tensor parallelism" in words and "all-to-all" not in words.lower() and "FSDP" not in words
