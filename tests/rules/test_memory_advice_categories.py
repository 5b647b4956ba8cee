"""Each category of a peak near capacity gets a fix that fits it and the job's kind (h37-memkind37).

memkind36 left: a forward pass's peak was told one fix whatever held it ("load the weights in bfloat16, split the
model, lower the batch"); autocast's cached cast copies had no fix of their own; work of no known kind whose memory
shows gradients -- evidence that it trains -- was told the held-bytes fix of a job that does not.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from tb_gpu_advisor import frameworks
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.rules import _memory as mem
from tb_gpu_advisor.rules import memory_near_capacity
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.paths import FIXTURES

#: Words of a training lever (as test_memory_advice_job_kind's): none is said to a forward pass.
TRAINING_LEVERS = ("FSDP", "ZeRO", "optimizer", "shard", "checkpoint", "recompute", "Recompute", "gradient")


def _texts(actions: list) -> list[str]:
    return [a.text + "\n" + (a.snippet or "") for a in actions]


@pytest.fixture(scope="module")
def a40():
    """wild/lost_kernels_synced_a40 (jacobcd52/dictionary_learning, MIT): one analysis call of no known kind whose
    A40 peaks at 95%, 37.2 GiB of it made before the pass, no gradients."""
    path = next((FIXTURES / "wild" / "lost_kernels_synced_a40").glob("*.gz"))
    return host_metrics(read(SimpleNamespace(host="a40", path=str(path), format="kineto")))


def test_each_category_of_a_forward_pass_gets_its_own_fix():
    """PyTorch's fixes to an inference job, by what holds its peak.  Main: the one INFERENCE_MEMORY fix ("load the
    weights in bfloat16 ...") for held, activations, other and casts alike.  Here: the weights quantised or split;
    activations with fewer inputs and no autograd graph; the casts not cached; none a training lever."""
    fw = frameworks.REGISTRY["pytorch"].for_job(("inference",))
    by = {v: _texts(fw.fixes_for("memory_near_capacity", [v])) for v in ("held", "activations", "other", "casts")}
    assert len({tuple(t) for t in by.values()}) == len(by), by
    assert any("quantis" in t and "tensor_parallel_size" in t for t in by["held"]), by["held"]
    assert any("inference_mode" in t for t in by["activations"]), by["activations"]
    assert any("cache_enabled=False" in t for t in by["casts"]), by["casts"]
    for variant, texts in by.items():
        assert not [w for t in texts for w in TRAINING_LEVERS if w in t], (variant, texts)


def test_cast_copies_at_capacity_are_told_not_to_cache_them_in_work_of_no_known_kind():
    """``memory_near_capacity:casts`` in work of no known kind.  Main: the rule-wide any_work fixes (what the held
    bytes are, fewer inputs per pass) -- neither touches autocast's cache."""
    texts = _texts(frameworks.REGISTRY["pytorch"].for_job(("any_work",)).fixes_for("memory_near_capacity", ["casts"]))
    assert any("cache_enabled=False" in t for t in texts), texts


def test_work_of_no_known_kind_whose_memory_shows_gradients_is_told_the_training_fix(a40):
    """The A40's real peak, with its gradients by construction: 2 GiB of the held bytes recorded as gradients (as a
    Kineto GRADIENT category or a snapshot's autograd frames record them).  The job's kind stays unknown; the held
    bytes still free the most.  Main: "Find what the memory made before the step ..." (the held-bytes fix of a job
    that does not train) beside summary words of training.  Here: sharding / offloading, as a training job is told.
    Control: the trace as recorded (no gradients) keeps the held-bytes fix."""
    (before,) = memory_near_capacity.check(a40)
    assert a40.job.kind.kind == "unknown" and before.metric.detail["lever"] == "held"
    assert any("parameters()" in t for t in _texts(before.actions)), _texts(before.actions)
    g = max(mem.absolute(a40, without_oom=True), key=lambda x: mem.use_share(x) or 0.0)
    moved = 2 * 2**30
    breakdown = {**g.breakdown, "held": g.breakdown["held"] - moved, "gradients": moved}
    gpus = [dataclasses.replace(x, breakdown=breakdown) if x is g else x for x in a40.memory.gpus]
    m = dataclasses.replace(a40, memory=dataclasses.replace(a40.memory, gpus=gpus))
    (after,) = memory_near_capacity.check(m)
    assert after.metric.detail["lever"] == "held"
    texts = _texts(after.actions)
    assert any("fully_shard" in t for t in texts) and not any("parameters()" in t for t in texts), texts


def test_a_job_that_does_not_train_names_its_held_memory_without_optimizer_state(a40):
    """The holders tables' names follow the job's kind: the A40's analysis call (no gradients, no optimizer) is not
    told its held memory is optimizer state.  Main: one name for every job, "Held across steps (parameters,
    optimizer state)"."""
    assert "optimizer" not in mem.category_labels(a40)["held"]
    assert "optimizer" not in mem.category_label("held", mem.category_labels(a40))
