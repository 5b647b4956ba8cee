"""A ``zero_grad`` annotation in a snapshot recorded without stacks is weighed against the allocations (h37-snapann,
issue #37 class 5; h37-snap23's left (c)).

``wild/snapshot_nograd_bf16`` (a CS336 benchmark: ``optimizer.zero_grad()``, then one forward under ``no_grad`` and
bf16 autocast) reads inference from its frames: the forward frees its blocks as it goes.  Rewritten as
``_record_memory_history(context=None)`` writes it, no allocation reads as the forward's, so the check that weighs
the ``Optimizer.zero_grad`` range against the forward (``job.kind._forward_kept_share``) had nothing to weigh, and
main let the name win: "training (high)".  A reset says an optimizer exists, not that it stepped; the allocations are
the physics: a forward kept for a backward, or the gradients a backward made, are live at the dump; this history
frees every block it made.  Ranked: a backward's walk back or a loop of passes in the pattern first, then what the
history holds at the dump, the reset's name last.

Truth by construction: ``synthetic.memsnapshot.forward_only`` (one pass under ``no_grad``; one with autograd on held
at the dump: the OOM-in-the-forward case) with the same annotation.  Controls: the same file with its stacks, an
``Optimizer.step`` range (work only training does: training, high, with or without stacks), a stackless training
step (its backward's walk back), and the stackless forward with no annotation (one pass: not read)."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.paths import FIXTURES
from tests.support.snapshot_report import report

REAL = FIXTURES / "wild" / "snapshot_nograd_bf16" / "memory_forward_bf16_128.pickle"
ZERO_GRAD = "Optimizer.zero_grad#AdamW.zero_grad"
WEIGHTS = 8  # ``forward_only``'s weight blocks, made first


def _annotated(doc: dict, name: str = ZERO_GRAD) -> dict:
    """``doc`` with one profiler range ``name`` ending just before its first pass (after the weights are made, as a
    script loads its model, builds its optimizer, then calls it)."""
    allocs = [e["time_us"] for e in doc["device_traces"][0] if e["action"] == "alloc"]
    t0 = allocs[WEIGHTS]  # the first pass's first allocation; the generator's clock ticks 7 us an event
    doc = dict(doc)
    doc["external_annotations"] = [{"stage": "START", "name": name, "device": 0, "time_us": t0 - 3},
                                   {"stage": "END", "name": name, "device": 0, "time_us": t0 - 2}]
    return doc


def _real() -> dict:
    return pickle.loads(REAL.read_bytes())


@pytest.mark.skipif(not REAL.is_file(), reason="wild fixture missing")
def test_the_real_no_grad_benchmark_without_stacks_is_not_training(tmp_path: Path) -> None:
    rep = report(tmp_path, ms.as_recorded(_real(), context=None), "bare")
    assert (rep.job["kind"], rep.job["kind_confidence"]) == ("inference", "low"), rep.job
    why = rep.job["kind_evidence"]
    assert "`Optimizer.zero_grad#AdamW.zero_grad` ran" in why and "frees every block it allocated after it" in why, why
    assert "without stacks" in why


@pytest.mark.skipif(not REAL.is_file(), reason="wild fixture missing")
def test_the_real_benchmark_with_its_stacks_reads_as_before(tmp_path: Path) -> None:
    """Control: the frames' reading (inference, medium: the forward's 2% live at the peak) is untouched."""
    rep = report(tmp_path, _real(), "framed")
    assert (rep.job["kind"], rep.job["kind_confidence"]) == ("inference", "medium"), rep.job
    assert "it kept nothing for a backward" in rep.job["kind_evidence"]


def test_a_generated_no_grad_pass_after_zero_grad_is_inference(tmp_path: Path) -> None:
    """One pass: no loop of passes in the pattern, so the reset and the dump decide."""
    doc = _annotated(ms.forward_only(grad=False, passes=1).doc)
    rep = report(tmp_path, ms.as_recorded(doc, context=None))
    assert (rep.job["kind"], rep.job["kind_confidence"]) == ("inference", "low"), rep.job
    assert "frees every block it allocated after it" in rep.job["kind_evidence"], rep.job


def test_a_forward_held_at_the_dump_after_zero_grad_is_training(tmp_path: Path) -> None:
    """A training forward dumped before its backward (an OOM in the forward) holds what it made: training, from the
    allocations, where main said so from the name alone."""
    doc = _annotated(ms.forward_only(grad=True, passes=1, dump_before_drop=True).doc)
    rep = report(tmp_path, ms.as_recorded(doc, context=None))
    assert (rep.job["kind"], rep.job["kind_confidence"]) == ("training", "low"), rep.job
    assert "held at the dump" in rep.job["kind_evidence"]


@pytest.mark.parametrize("bare", [False, True], ids=["framed", "stackless"])
def test_an_optimizer_step_range_is_training_either_way(tmp_path: Path, bare: bool) -> None:
    """Control (as on main): a step is work only training does, whatever the allocations."""
    doc = _annotated(ms.forward_only(grad=False, passes=1).doc, "Optimizer.step#AdamW.step")
    rep = report(tmp_path, ms.as_recorded(doc, context=None) if bare else doc)
    assert (rep.job["kind"], rep.job["kind_confidence"]) == ("training", "high"), rep.job


@pytest.mark.parametrize("sc, kind", [(ms.windows_training(python_backward=False), "training"),
                                      (ms.forward_only(grad=False, passes=1), "unknown")],
                         ids=["training_step", "one_pass_unannotated"])
def test_controls_without_the_reset(tmp_path: Path, sc: ms.Scenario, kind: str) -> None:
    """Controls (as on main): a backward's walk back reads training; one pass with no annotation is not read."""
    rep = report(tmp_path, ms.as_recorded(sc.doc, context=None))
    assert rep.job["kind"] == kind, rep.job


ADAM = FIXTURES / "wild" / "snapshot_adam_iterations" / "forward_and_backward_memory_snapshot_200.pickle"


@pytest.mark.skipif(not ADAM.is_file(), reason="wild fixture missing")
def test_a_real_training_loop_with_only_its_resets_is_training_by_its_pattern(tmp_path: Path) -> None:
    """The real 3-iteration Adam loop stackless, its ``Optimizer.step`` ranges taken away (its 3 ``zero_grad`` kept):
    training, from the backward's walk back in its pattern -- the evidence that outranks the reset's name (main: from
    the name, high)."""
    doc = pickle.loads(ADAM.read_bytes())
    doc["external_annotations"] = [a for a in doc["external_annotations"] if "zero_grad" in a["name"]]
    rep = report(tmp_path, ms.as_recorded(doc, context=None))
    assert (rep.job["kind"], rep.job["kind_confidence"]) == ("training", "low"), rep.job
    assert "by its allocation pattern" in rep.job["kind_evidence"], rep.job
