"""A block the first forward makes and never frees is held, not an activation (issue #37, survey h37-survey19).

The real class: Da1sypetals/tomi ``snapshots/snapshot.pickle`` @f289cab (no licence: read, not kept) -- 17 iterations
of a 10-20-1 MLP trained with SGD, no annotations.  Its 17.3 MiB peak is two cuBLAS workspaces of 8.1 MiB (one made in
the first ``linear`` forward, one on autograd's thread) kept by their handles to the end, a 1 MiB transient and a few
KiB of tensors; main read 9.13 MiB of it as activations and an info finding said recomputation would free ~6.4 MiB.
Activations are freed by the backward that reads them: a forward-made block an earlier iteration allocated outlived
that backward.  Here by construction (``synthetic.memsnapshot.training_with_workspace``): the workspace and the
weights are held, the activations are one iteration's.
"""

from __future__ import annotations

from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host


def _memory(tmp: Path, sc: ms.Scenario):
    path = ms.write(str(tmp / "snapshot.pickle"), sc.doc)
    rep = analyze_host(HostFile("snapshot", path, Path(path).stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep.gpus[0].memory


def test_a_workspace_made_in_the_first_forward_is_held_not_an_activation(tmp_path: Path):
    sc = ms.training_with_workspace()
    mem = _memory(tmp_path, sc)
    assert mem["breakdown"]["activations"] == sc.truth["activation_bytes"], mem["breakdown"]
    assert mem["breakdown"]["held"] == sc.truth["held_bytes"], mem["breakdown"]


def test_in_the_first_iteration_nothing_is_an_earlier_iterations(tmp_path: Path):
    """One iteration only: no backward came before the peak's forward, so the workspace is booked with the forward."""
    sc = ms.training_with_workspace(iterations=1)
    mem = _memory(tmp_path, sc)
    assert mem["breakdown"]["activations"] == sc.truth["activation_bytes"] + sc.truth["workspace_bytes"], mem


def test_a_compiled_backward_s_forward_frames_do_not_start_an_iteration():
    """Control on a kept real snapshot (``wild/snapshot_compiled_gpt2``, one compiled GPT step and a hand-written
    AdamW): its compiled backward allocates under the graph's forward frames, so forward and backward interleave
    inside the one iteration; the optimizer, which allocates, bounds iterations there, and the step's ~12 MiB of
    activations stay activations (TRUTH.json: "activations ~12 MiB")."""
    from tests.support.paths import FIXTURES

    path = str(FIXTURES / "wild" / "snapshot_compiled_gpt2" / "memory_snapshot.pickle")
    rep = analyze_host(HostFile("snapshot", path, Path(path).stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    acts = rep.gpus[0].memory["breakdown"].get("activations", 0)
    assert 11 << 20 < acts < 14 << 20, rep.gpus[0].memory["breakdown"]
