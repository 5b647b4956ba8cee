"""A profiler trace's forward run by ``optimizer.step(closure)`` is the forward's, not the optimizer's (issue #37
class 5; the Kineto twin of ``test_snapshot_closure_forward``).

PyTorch Lightning's automatic optimization runs each training step's forward and backward inside
``Optimizer.step#<Opt>.step`` (a real Lightning trace nests ``[pl][module]...`` forwards and ``*Backward0`` nodes in
it: tests/fixtures/wild/lightning_cpu_fit).  A ``[memory]`` event's phase was its innermost scope-naming op's, and
an op of no scope took its parent's, so every activation of the closure's forward was "optimizer" and the activation
findings went silent (tests/fixtures/wild/SURVEY.md, session 30, h37-survey64).  Now a module's forward call inside an
optimizer's step opens a forward.  Truth by construction: ``synthetic.torchtrace.memory_training(closure=)`` -- the
same loop with and without the closure, the simulated caching allocator's bytes.
"""

from __future__ import annotations

import os

import pytest

from synthetic import torchtrace as tt
from synthetic.memsnapshot import GiB
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host

HELD, LAYERS, ACT, GRAD = tt.ACT_HEAVY
STEPS = 6


def _report(tmp_path, closure: bool):
    sc = tt.Scenario(1, tt._single(tt.memory_training(lambda n, i: ACT, LAYERS, GRAD, closure=closure)),
                     ["activation_memory"], [], "an activation-heavy training step", memory_held=HELD)
    (path,) = tt.write_run(str(tmp_path), sc, steps=STEPS, run=f"closure_{closure}")
    rep = analyze_host(HostFile(f"closure_{closure}", path, os.path.getsize(path), 0, "kineto"))
    assert rep.error is None, rep.error
    return rep


def test_the_closures_activations_are_the_forwards(tmp_path):
    rep = _report(tmp_path, closure=True)
    breakdown = rep.gpus[0].memory["breakdown"]
    # every activation is live at the peak (the first backward node): LAYERS blocks, each rounded up to 512 bytes
    assert breakdown["activations"] == LAYERS * (-(-ACT // 512) * 512)
    assert breakdown.get("optimizer", 0) == 0
    assert "activation_memory" in {f.rule for f in rep.findings}


@pytest.mark.parametrize("closure", [False, True])
def test_control_the_closure_moves_frames_not_bytes(tmp_path, closure: bool):
    """The same loop with and without the closure: the same breakdown and the same findings."""
    rep, plain = _report(tmp_path, closure), _report(tmp_path, False)
    assert rep.gpus[0].memory["breakdown"] == plain.gpus[0].memory["breakdown"]
    assert {f.rule for f in rep.findings} == {f.rule for f in plain.findings}
    assert plain.gpus[0].memory["breakdown"]["held"] == HELD and HELD == 12 * GiB
