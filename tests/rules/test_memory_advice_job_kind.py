"""The near-capacity memory advice asks the job's kind (h37-memkind36).

A peak held mostly by memory made before the pass is told to shard parameters, gradients and optimizer state with
FSDP (and checkpointing for activations) only where the job trains: a forward pass and work of no known kind hold no
optimizer state and run no backward to recompute in, so their fixes are what holds for any job -- what the bytes
are, fewer of them per GPU, fewer inputs per pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tb_gpu_advisor import frameworks
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES

#: Words of a training lever: sharding or offloading optimizer state, recomputing activations in a backward.
TRAINING_LEVERS = ("FSDP", "ZeRO", "optimizer", "shard", "checkpoint", "recompute", "Recompute", "remat")


def _levers(texts: list[str]) -> list[str]:
    return [w for t in texts for w in TRAINING_LEVERS if w in t]


def test_a_job_of_no_known_kind_at_capacity_is_told_what_holds_for_any_job():
    """wild/lost_kernels_synced_a40 (jacobcd52/dictionary_learning, MIT): one analysis call whose GPU records were
    lost -- a job of no known kind, no backward, no optimizer in its memory; its A40 peaks at 95% with 37.2 GiB made
    before the pass.  Main told it "Shard parameters, gradients and optimizer state ... (FSDP ...)" and to offload
    the optimizer state.  Here: where the bytes are (the weights' size beside the allocator's) and fewer of them."""
    path = next((FIXTURES / "wild" / "lost_kernels_synced_a40").glob("*.gz"))
    rep = analyze_host(HostFile(path.name, str(path), Path(path).stat().st_size, 0, "kineto"))
    assert rep.error is None, rep.error
    assert rep.job["kind"] == "unknown"
    (near,) = [f for f in rep.findings if f.rule == "memory_near_capacity"]
    assert near.metric.detail["lever"] == "held"
    texts = [a.text + "\n" + (a.snippet or "") for a in near.actions]
    assert texts and not _levers(texts), texts
    assert any("weights" in t and "parameters()" in t for t in texts), texts


@pytest.mark.parametrize("fid", sorted(frameworks.REGISTRY))
@pytest.mark.parametrize("tag", ["inference", "any_work"])
def test_no_framework_tells_a_job_that_does_not_train_to_shard_its_optimizer_state(fid: str, tag: str):
    """Every framework's near-capacity fixes to a forward pass or work of no known kind, for each category that may
    hold the peak without training (and the rule's own, where no category is known), name no training lever.  Main:
    PyTorch's ``any_work`` (FSDP, CPUOffload), JAX's and TensorFlow's for both tags (remat, recompute_grad, sharding
    the optimizer state)."""
    fw = frameworks.REGISTRY[fid].for_job((tag,))
    for variant in ("held", "activations", "other"):
        texts = [a.text + "\n" + (a.snippet or "") for a in fw.fixes_for("memory_near_capacity", [variant])]
        assert not _levers(texts), (variant, texts)
    texts = [a.text + "\n" + (a.snippet or "") for a in fw.fix("memory_near_capacity")]
    assert not _levers(texts), texts


def test_an_out_of_memory_forward_is_told_to_hold_fewer_weights_not_to_shard_optimizer_state(tmp_path):
    """``synthetic.memsnapshot.oom_weights``: 16 GiB of weights and a forward's activations fill a 24 GiB GPU until one
    more does not fit, no backward, no optimizer step.  The weights are the largest live kind.  Main: "Shard
    parameters, gradients and optimizer state ... (FSDP ...)" and "an 8-bit optimizer, or the state ... offloaded".
    Here: the weights in fewer bytes (16-bit) or split over GPUs; the cap and fragmentation keep their own fixes.
    Every forward block is still held at the OOM, so the job stage reads no kind (h37-probe42m: the generator's own
    truth is a training step's first forward, which the file cannot tell from a forward-only run): the held bytes'
    fix for work of no known kind (``oom_snapshot:held@any_work``)."""
    from synthetic import memsnapshot as ms

    sc = ms.oom_weights("built")
    path = Path(ms.write(str(tmp_path / "oom.pickle"), sc.doc))
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    assert rep.job["kind"] == "unknown"
    (oom,) = [f for f in rep.findings if f.rule == "oom_snapshot"]
    assert f"What frees the most: held across steps, about {sc.truth['weight_bytes'] / 2**30:.1f} GiB" in oom.summary
    texts = [a.text + "\n" + (a.snippet or "") for a in oom.actions]
    assert texts and not _levers(texts), texts
    assert any("16-bit" in t for t in texts), texts
    assert "optimizer" not in oom.summary, oom.summary
