"""Activations exactly half a weight's bytes, freed by a backward recorded with ``stacks="python"``, stay activations
(issue #37 class 5, h37-snapforms' left (b); h37-snaprocm).

``formats.snapshot.reader._cast_copies`` books autocast's cast copies (a weight's 16-bit copy, half its fp32 bytes,
made in a module's forward and freed with the others in one run when the autocast region exits) as the weights' where
no C++ frame tells them (``at::autocast::cached_cast``).  A training loop's backward also frees forward tensors in
runs with no allocation between -- here the two first layers' outputs, after the gradients are made -- and on main
``training_iterations(mib=32)`` recorded with ``stacks="python"`` had its 96 MiB of activations at the peak booked as
held with the 64 MiB weights.  What tells them apart is when the run comes: autocast's region exits before
``loss.backward()``, and a backward under ``stacks="python"`` allocates on autograd's engine thread with no frame, so a
run after such an allocation (made after the blocks) is the backward's.  Truth: the same history with C++ frames
(``stacks="all"``, read right on main).  Controls: the Windows autocast forward (copies still held) and
``mib=24`` (never half a weight)."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host


def _breakdown(tmp_path: Path, doc: dict, name: str) -> dict:
    path = Path(ms.write(str(tmp_path / f"{name}.pickle"), doc))
    rep = analyze_host(HostFile(path.stem, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep.gpus[0].memory["breakdown"]


@pytest.mark.parametrize("mib", [32, 24])
def test_a_python_stacks_backward_frees_activations_not_cast_copies(tmp_path: Path, mib: int) -> None:
    sc = ms.training_iterations(mib=mib)
    python = _breakdown(tmp_path, ms.as_recorded(sc.doc, stacks="python"), "python")
    full = _breakdown(tmp_path, sc.doc, "all")
    assert python["held"] == full["held"] == (4 + 8) * 64 * 2**20  # 4 weights and Adam's 8 moments
    assert python["activations"] == full["activations"] == 3 * mib * 2**20  # the 3 layers' outputs at the peak


def test_the_windows_autocast_forward_keeps_its_copies_held(tmp_path: Path) -> None:
    """Control: copies freed at the region's exit, no backward before it."""
    sc = ms.windows_autocast_forward()
    got = _breakdown(tmp_path, sc.doc, "win")
    assert (got["held"], got["casts"]) == (sc.truth["weights_bytes"], sc.truth["cast_bytes"])  # the copies apart
