"""A stackless training loop whose backward makes its gradients before it frees the forward's blocks reads as
training, and a single stackless iteration reads its backward and its optimizer's first step (issue #37 class 5;
session 71 passes71).

Base d69a9652 read three training loops recorded without stacks as "inference (low)" ("makes the same N allocations
in the same order ... with no backward pass walking them back"): ``training_iterations(params=1, hold_loss=False)``,
``attention_math_steps()`` and ``data_parallel()``, ``context=None`` and ``"state"`` (session 71 snap71's *Left* 1).
Each iteration's backward frees the forward's saved blocks in reverse order, but makes its gradients -- blocks the
size of a weight, held past the walk to ``zero_grad`` -- before the first of those frees, not between them; the walk
reader (``job.iterations._walk``) asked for an allocation between the frees and read a graph dropped unused.  Now a
nest with nothing made between its frees is still a walk where, after the forward's last saved block and before the
walk, a block of a weight's size is made that outlives the walk (``_gradients_before``): a dropped graph's output is
freed with it, and nothing of a weight's size is made to outlive it.

And snap71's *Left* 3: a history of one iteration, no frames, its peak holding fewer than 16 blocks, read "unknown":
its backward's walk (gradients of the weights' sizes made as it frees) and then its optimizer's state (blocks of the
weights' sizes made after the walk and held to the dump) are together a training step's alone
(``job.iterations.first_step``).

Truth by construction (the generators say what ran).  Controls (pass on base): stackless forward-only loops and
single passes, with autograd on or off, keep their reading (never training)."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.cli_report import cli_report


def _job(tmp_path: Path, doc: dict) -> dict:
    return cli_report(ms.write(str(tmp_path / "run" / "snapshot.pickle"), doc))["hosts"][0]["job"]


_LOOPS = {
    "one_param_loss_dropped_6": lambda: ms.training_iterations(iterations=3, layers=6, params=1, hold_loss=False),
    "one_param_loss_dropped_2": lambda: ms.training_iterations(iterations=3, layers=2, params=1, hold_loss=False),
    "one_param_loss_dropped_12": lambda: ms.training_iterations(iterations=3, layers=12, params=1, hold_loss=False),
    "attention_math": ms.attention_math_steps,
    "data_parallel": ms.data_parallel,
}


# recorded ``context="state"`` the one-parameter loops' optimizer state keeps its stack at the dump and read training
# on base too: those variants are left out
@pytest.mark.parametrize("name,context", [*((n, None) for n in sorted(_LOOPS)), ("attention_math", "state"),
                                          ("data_parallel", "state")])
def test_a_training_loop_whose_gradients_open_the_backward_is_not_inference(tmp_path: Path, name: str,
                                                                            context: str | None):
    job = _job(tmp_path, ms.as_recorded(_LOOPS[name]().doc, context=context))
    assert job["kind"] == "training", job["kind_evidence"]
    assert "forward passes" not in job["kind_evidence"]


@pytest.mark.parametrize("kw", [dict(layers=3, params=2), dict(layers=3, params=2, recorded_from_loop=True),
                                dict(layers=2, params=4, optimizer_temp=False)])
def test_one_stackless_iteration_reads_its_optimizers_first_step(tmp_path: Path, kw: dict):
    s = ms.training_iterations(iterations=1, **kw)
    job = _job(tmp_path, ms.as_recorded(s.doc, context=None))
    assert job["kind"] == "training", job["kind_evidence"]
    ev = job["kind_evidence"]
    assert "an optimizer's state, made on its first step" in ev
    # Adam's two moments a parameter, of the parameters' sizes
    assert f"then {2 * kw['params']} blocks of those sizes ({2 * kw['params'] * 64} MiB)" in ev, ev


@pytest.mark.parametrize("grad", [True, False])
@pytest.mark.parametrize("passes", [1, 3])
@pytest.mark.parametrize("context", [None, "state"])
def test_forward_passes_are_never_read_as_training(tmp_path: Path, grad: bool, passes: int, context: str | None):
    """Control (passes on base): a forward's graph dropped unused makes nothing of a weight's size to outlive it."""
    job = _job(tmp_path, ms.as_recorded(ms.forward_only(grad=grad, passes=passes).doc, context=context))
    assert job["kind"] != "training", job["kind_evidence"]


@pytest.mark.parametrize("iterations", [3, 4])
def test_a_one_layer_training_loop_is_not_read_as_forward_passes(tmp_path: Path, iterations: int):
    """A one-layer model's backward frees one saved block -- no walk back to read -- but its gradient, of its
    weight's size, outlives the forward's block to ``zero_grad``: no forward pass (``_gradient_held``).  The kind is
    then not read (unknown), never inference."""
    s = ms.training_iterations(iterations=iterations, layers=1, params=1, hold_loss=False)
    job = _job(tmp_path, ms.as_recorded(s.doc, context=None))
    assert job["kind"] != "inference", job["kind_evidence"]
