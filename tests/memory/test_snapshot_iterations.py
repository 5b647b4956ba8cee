"""A snapshot has no step markers, but its ``external_annotations`` mark where each ``optimizer.step()`` ended: what
is live at the memory peak and was made before the last such end belongs to an earlier iteration -- held across steps
(the weights, the optimizer's state), whichever phase made it.  Issue #37 survey h37-survey4a: NiuHuangxiaozi/
assignment2-systems ``forward_and_backward_memory_snapshot_200.pickle`` @9d868b9 (MIT; read, not kept) runs three
iterations of a hand-written Adam that re-makes each parameter and its two moments out of place every step; main
called 4.31 MiB of its 1.15 GiB peak "held across steps" where ~260 MiB of weights and Adam state were (by hand:
3 x 86.6 MiB from ``optimizer.py`` in the peak's stacks); this branch says 280 MiB.  Here by construction.
"""

from __future__ import annotations

from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host

MiB = 1 << 20
STATE, ACT, GRAD = 96 * MiB, 64 * MiB, 8 * MiB


def _job(annotate: bool) -> dict:
    """Two iterations: each a forward keeping its activations (3, then 4: the peak is the second's), a backward freeing them into gradients, then an
    optimizer step that replaces the state (weights and moments) out of place, as the surveyed Adam does."""
    a = ms.Allocator(capacity=16 << 30)
    notes: list[dict] = []
    state = a.malloc(STATE, ms.OPTIMIZER)  # made by the first step before the capture's window: the first iteration's
    for layers in (3, 4):
        acts = [a.malloc(ACT, ms.ACTIVATION) for _ in range(layers)]
        grads = [a.malloc(GRAD, ms.GRADIENT) for _ in range(4)]
        for x in acts:
            a.free(x)
        notes.append({"stage": "START", "name": "Optimizer.step#Adam.step", "device": 0, "time_us": a.now_us + 1})
        new = a.malloc(STATE, ms.OPTIMIZER)
        a.free(state)
        state = new
        for g in grads:
            a.free(g)
        notes.append({"stage": "END", "name": "Optimizer.step#Adam.step", "device": 0, "time_us": a.now_us + 1})
    doc = ms.snapshot([a])
    doc["external_annotations"] = notes if annotate else []
    return doc


def _memory(tmp_path: Path, doc: dict, name: str) -> dict:
    path = ms.write(str(tmp_path / f"{name}.pickle"), doc)
    rep = analyze_host(HostFile(name, path, Path(path).stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep.gpus[0].memory


def test_state_made_by_an_earlier_iteration_is_held_across_steps(tmp_path: Path):
    mem = _memory(tmp_path, _job(annotate=True), "iterations")
    # the peak: the second iteration's backward, its activations and gradients live with the state of the first step
    assert mem["peak_allocated_bytes"] == STATE + 4 * ACT + 4 * GRAD, mem
    assert mem["breakdown"] == {"held": STATE, "activations": 4 * ACT, "gradients": 4 * GRAD}, mem["breakdown"]


def test_without_the_annotations_the_phases_still_find_the_iteration(tmp_path: Path):
    """No marks: the peak's forward starts after the first iteration's optimizer allocation (the allocations' own
    phases, ``metrics/memory._forward_start``), so the state that step made is still held, not the peak's optimizer."""
    mem = _memory(tmp_path, _job(annotate=False), "one_step")
    assert mem["breakdown"] == {"held": STATE, "activations": 4 * ACT, "gradients": 4 * GRAD}, mem["breakdown"]
