"""An OOM of a forward-only job whose live tensors are autograd's graph is the graph's: ``inference_mode`` frees it
whole (issue #37 class 5, h37-probe41m).

A forward-only benchmark run with autograd on keeps every layer's tensors for a backward that never runs; when a
longer input (or a loop that rebinds its output, holding two graphs) runs out of memory, the snapshot's live
memory is that graph.  Main read it as "activations" of any forward: its first fix ran fewer inputs per pass -- in a
training loop's words ("accumulating gradients"), to a job it read as inference -- and counted the saving as
checkpointing's share of them (``memory.checkpoint_frees``), with ``inference_mode`` second.  The same loop under
``no_grad`` fits (truth by construction: ``synthetic.memsnapshot.oom_forward_graph`` replays it on the same allocator
model).  Controls: the loop under no_grad on a smaller GPU runs out of memory with no graph (fewer inputs, a
forward's words), and a training step's OOM (``oom_activations``) keeps checkpointing first."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host

GIB = 2 ** 30
TRAINING_WORDS = "accumulating gradients"


def _oom(sc: ms.Scenario, tmp_path: Path):
    """The one OOM finding of the scenario's report."""
    path = Path(ms.write(str(tmp_path / "oom.pickle"), sc.doc))
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    ooms = [f for f in rep.findings if f.rule == "oom_snapshot"]
    assert len(ooms) == 1, [f.id for f in rep.findings]
    return ooms[0]


@pytest.mark.parametrize("rebound", [False, True], ids=["longer_input", "rebound_output"])
def test_the_twin_under_no_grad_fits(rebound: bool):
    """The truth: with autograd on the loop fails; the same loop under no_grad on the same GPU does not."""
    cap = 16 * GIB if rebound else 14 * GIB
    assert ms.oom_forward_graph(grad=True, rebound=rebound, capacity=cap).truth["oom"]
    assert not ms.oom_forward_graph(grad=False, rebound=rebound, capacity=cap).truth["oom"]


def test_an_oom_of_a_kept_graph_is_fixed_by_not_recording_it(tmp_path: Path):
    """The cause is the graph, the first fix inference_mode, the saving what it frees: at least the graph less what
    the no_grad twin holds at its peak, at most the graph; no training loop's words."""
    sc = ms.oom_forward_graph(capacity=14 * GIB)
    t = sc.truth
    f = _oom(sc, tmp_path)
    assert f.metric.detail["cause"] == "forward_kept", f.summary
    assert "inference_mode" in f.actions[0].snippet, [a.text for a in f.actions]
    assert t["graph_bytes"] - t["nograd_peak_bytes"] <= f.saving_bytes <= t["graph_bytes"], \
        (f.saving_bytes / GIB, t["graph_bytes"] / GIB, t["nograd_peak_bytes"] / GIB)
    assert "autograd keeps" in f.summary
    assert TRAINING_WORDS not in " ".join(a.text for a in f.actions)


def test_a_rebound_graph_with_no_pass_freed_names_both_readings(tmp_path: Path):
    """The rebinding loop fails in its second pass holding both graphs, no forward block freed: the file is a
    training step's longer forward cut by its OOM as well (h37-probe42m: ``job.kind._forward_unended``), so the
    kind is not read and the graph is named with both readings -- inference mode's saving stated, at least the
    graph less the no_grad twin's peak, at most the graph, and its fix offered after the activations' own."""
    sc = ms.oom_forward_graph(rebound=True, capacity=16 * GIB)
    t = sc.truth
    f = _oom(sc, tmp_path)
    assert f.metric.detail["cause"] == "activations", f.summary
    said = float(f.summary.split("inference mode (or no_grad) frees about ")[1].split(" GiB")[0])
    assert (t["graph_bytes"] - t["nograd_peak_bytes"]) / GIB - 0.05 <= said <= t["graph_bytes"] / GIB, said
    assert any("inference_mode" in (a.snippet or "") for a in f.actions), [a.text for a in f.actions]


def test_control_an_oom_with_no_graph_runs_fewer_inputs_in_a_forwards_words(tmp_path: Path):
    """Under no_grad on a GPU too small for one pass: no graph, the activations' own fix, said to a forward."""
    sc = ms.oom_forward_graph(grad=False, capacity=6 * GIB, passes=1, mib=512, grow=1)
    assert sc.truth["oom"]
    f = _oom(sc, tmp_path)
    assert f.metric.detail["cause"] == "activations", f.summary
    assert "autograd keeps" not in f.summary
    assert TRAINING_WORDS not in " ".join(a.text for a in f.actions), [a.text for a in f.actions]


def test_control_a_training_steps_oom_keeps_checkpointing(tmp_path: Path):
    """A training step's activations are kept for its backward on purpose: checkpointing first, as before."""
    f = _oom(ms.oom_activations(), tmp_path)
    assert f.metric.detail["cause"] == "activations", f.summary
    assert "checkpoint" in f.actions[0].text.lower(), [a.text for a in f.actions]
    assert "autograd keeps" not in f.summary


def _near_capacity(sc: ms.Scenario, tmp_path: Path):
    """The near-capacity finding of the scenario's snapshot, its GPU recorded beside the dump (``write_capacity``)
    just above what the allocator reserved: 95% in use."""
    path = ms.write(str(tmp_path / "near.pickle"), sc.doc)
    reserved = sum(int(s["total_size"]) for s in sc.doc["segments"])
    total = int(reserved / 0.95)
    ms.write_capacity(path, total, ms.free_beside(sc.doc, total, 0))
    rep = analyze_host(HostFile("near.pickle", path, Path(path).stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    near = [f for f in rep.findings if f.rule == "memory_near_capacity"]
    assert len(near) == 1, [f.id for f in rep.findings]
    return near[0]


def test_a_peak_near_capacity_held_by_a_kept_graph_is_the_graphs(tmp_path: Path):
    """The same cause short of an OOM: a forward-only benchmark with autograd on at 95% of its GPU.  Its lever is the
    graph, the saving what inference_mode frees (the truth's kept bytes less the largest, as the kept-graph finding
    says), the first fix inference_mode -- main said "the forward pass's activations" and checkpointing's share."""
    sc = ms.forward_only()
    f = _near_capacity(sc, tmp_path)
    assert f.metric.detail["lever"] == "forward_kept", f.summary
    assert f.saving_bytes == sc.truth["kept_bytes"] - sc.truth["largest_bytes"]
    assert "inference_mode" in f.actions[0].snippet, [a.text for a in f.actions]


def test_control_the_same_forward_under_no_grad_near_capacity_is_its_activations(tmp_path: Path):
    """Under no_grad no graph is kept: the lever is what holds the peak (the weights here), never the graph."""
    f = _near_capacity(ms.forward_only(grad=False), tmp_path)
    assert f.metric.detail["lever"] != "forward_kept", f.summary
    assert "autograd keeps" not in f.summary
