"""A snapshot whose history ends with its forward still climbing is no evidence of inference (issue #37 class 5,
h37-probe42m).

A training step's first forward that runs out of memory and a forward-only run with autograd on that does the same
write the same history, byte for byte (``synthetic.memsnapshot.oom_first_forward``: the two jobs, one file): the
forward's live bytes only climb (each layer's intermediate freed or not), so no pass is seen to end without a
backward.  Main read "no backward in the history" as inference ("a memory snapshot whose allocations come from
modules' forward passes, with no backward pass"), took the kept tensors for a graph kept for nothing, and gave the
training step ``inference_mode`` as its OOM's first fix.  Here the kind is not read (unknown, low), the OOM's first
fix is the activations' own, and its text names the graph with both readings and what inference mode would free.
Controls: a forward-only loop whose earlier passes freed their graphs unused (``oom_forward_graph``) keeps its
kept-graph cause; a forward under no_grad that frees as it goes, and one whose earlier pass dropped its graph, keep
"inference"; a training step's OOM keeps checkpointing first."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_report import report

GIB = 2 ** 30


def _oom(rep):
    (f,) = [f for f in rep.findings if f.rule == "oom_snapshot"]
    return f


@pytest.mark.parametrize("temporaries", [False, True], ids=["all_kept", "intermediates_freed"])
def test_the_two_jobs_write_one_file(temporaries: bool):
    """The truth: a training step's first forward and a forward-only run, both cut by the OOM, are the same file --
    with every block kept, or with each layer's intermediate freed as a real forward frees it."""
    train = ms.oom_first_forward(train=True, temporaries=temporaries)
    forward = ms.oom_first_forward(train=False, temporaries=temporaries)
    assert train.truth["oom"] and forward.truth["oom"]
    assert train.doc == forward.doc
    assert train.truth["kind"] is None


@pytest.mark.parametrize("train", [True, False], ids=["training_step", "forward_only"])
@pytest.mark.parametrize("temporaries", [False, True], ids=["all_kept", "intermediates_freed"])
def test_the_kind_of_an_unended_forward_is_not_read(tmp_path: Path, train: bool, temporaries: bool):
    """The forward still climbing when the OOM ends the history: the job line says what the file cannot tell, not
    "inference" -- the blocks the forward holds then are the truth's."""
    sc = ms.oom_first_forward(train=train, temporaries=temporaries)
    rep = report(tmp_path, sc.doc)
    assert rep.job["kind"] == "unknown", rep.job
    said = rep.job["kind_evidence"]
    assert f"still climbing: {sc.truth['blocks']:,} blocks" in said, said


@pytest.mark.parametrize("temporaries", [False, True], ids=["all_kept", "intermediates_freed"])
def test_the_oom_of_an_unended_forward_names_both_readings(tmp_path: Path, temporaries: bool):
    """The OOM is not told its cause is a graph kept for nothing: the activations' own fix first (fewer inputs a
    pass, with a training loop's accumulation), inference mode offered after it, and the text says what inference
    mode frees -- at least the graph less the no_grad twin's peak, at most the graph -- on the reading the user
    picks."""
    sc = ms.oom_first_forward(temporaries=temporaries)
    t = sc.truth
    f = _oom(report(tmp_path, sc.doc))
    assert f.metric.detail["cause"] == "activations", f.summary
    assert "inference_mode" not in (f.actions[0].snippet or ""), [a.text for a in f.actions]
    assert any("inference_mode" in (a.snippet or "") for a in f.actions[1:]), [a.text for a in f.actions]
    assert "whether a backward would follow is not known" in f.summary, f.summary
    said = f.summary.split("inference mode (or no_grad) frees about ")[1].split(" GiB")[0]
    assert (t["graph_bytes"] - t["nograd_peak_bytes"]) / GIB - 0.05 <= float(said) <= t["graph_bytes"] / GIB, said
    assert f.saving_bytes <= t["graph_bytes"]


def test_control_passes_freed_unused_keep_the_kept_graph(tmp_path: Path):
    """Earlier forward passes freed their graphs with no backward between: inference, the graph's cause and fix."""
    rep = report(tmp_path, ms.oom_forward_graph(passes=3).doc)
    assert rep.job["kind"] == "inference", rep.job
    f = _oom(rep)
    assert f.metric.detail["cause"] == "forward_kept", f.summary
    assert "inference_mode" in f.actions[0].snippet


@pytest.mark.parametrize("doc", [ms.forward_only(grad=False, passes=1, dump_before_drop=True).doc,
                                 ms.forward_only(passes=2, dump_before_drop=True).doc], ids=["no_grad", "pass_dropped"])
def test_control_a_forward_seen_to_free_is_inference(tmp_path: Path, doc: dict):
    """Under no_grad a forward frees each layer's tensors as the next uses them (grad off); with autograd on, an
    earlier pass's graph dropped with no backward, though the dump holds the last pass's: forward passes."""
    rep = report(tmp_path, doc)
    assert rep.job["kind"] == "inference", rep.job


def test_control_a_training_steps_oom_keeps_checkpointing(tmp_path: Path):
    """A training step's OOM in its second step (a backward seen): training, checkpointing first."""
    rep = report(tmp_path, ms.oom_activations().doc)
    assert rep.job["kind"] == "training"
    f = _oom(rep)
    assert "checkpoint" in f.actions[0].text.lower(), [a.text for a in f.actions]
    assert "whether a backward would follow" not in f.summary


WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"


@pytest.mark.parametrize("name", ["snapshot_forward_rebound_autograd", "snapshot_forward_rebound_bf16_autograd"])
def test_control_real_rebound_loops_recorded_after_warm_up_are_inference(name: str):
    """Real forward-only loops with autograd on, recorded after their warm-up (Hyperion-shuo's CS336 benchmark, wild
    PROVENANCE): the recorded pass climbs to the dump, but the history frees the previous pass's graph -- 872 / 1,234
    blocks made before it began -- with no backward: a pass ended unused, so the kind is read
    (``job.kind._earlier_dropped``)."""
    from tb_gpu_advisor.model.logdir import HostFile
    from tb_gpu_advisor.runtime.pipeline import analyze_host

    (path,) = (WILD / name).glob("*.pickle*")
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    assert rep.job["kind"] == "inference", rep.job
