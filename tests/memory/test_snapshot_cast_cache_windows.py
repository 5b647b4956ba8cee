"""autocast's cast cache in a snapshot that records Python frames only (Windows) is the weights' copy, not
activations (issue #37, survey h37-survey9's left; h37-left13).

LilySu/stanford-cs336-assignment2-systems' ``memory_snapshot_large_forward_ctx128_mp.pickle`` @44be739 (no licence,
read locally, not kept): forward passes of the large LM under ``torch.no_grad()`` and bf16 autocast, recorded on
Windows.  At the peak 3.07 GiB live were made in ``Linear.forward``: each weight's bf16 copy, half its fp32 block, all
freed in one run when the autocast region ends; main read them as 3.07 GiB of activations (a Linux snapshot tells
them by ``at::autocast::cached_cast`` in its C++ frames, which Windows does not record).  Truth by construction:
``synthetic.memsnapshot.windows_autocast_forward``."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host


def _memory(tmp_path: Path, sc: ms.Scenario) -> dict:
    path = Path(ms.write(str(tmp_path / "win.pickle"), sc.doc))
    rep = analyze_host(HostFile(path.stem, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    assert rep.job["kind"] == sc.truth["kind"]
    return rep.gpus[0].memory


@pytest.mark.parametrize("in_history", [False, True])
def test_the_cast_copies_are_booked_apart_from_the_weights(tmp_path: Path, in_history: bool) -> None:
    """Weights allocated before the history (as the real file's) or moved by ``model.to()`` inside it."""
    sc = ms.windows_autocast_forward(weights_in_history=in_history)
    mem = _memory(tmp_path, sc)
    assert (mem["breakdown"]["held"], mem["breakdown"]["casts"]) == (sc.truth["weights_bytes"], sc.truth["cast_bytes"])
    assert mem["breakdown"]["activations"] <= sc.truth["act_bytes"]  # the layer's output, nothing of the copies


def test_outputs_half_a_weight_freed_as_they_go_stay_activations(tmp_path: Path) -> None:
    """Control: no autocast, each layer's output exactly half a weight's bytes -- freed one by one as the next layer
    runs, not in one run at the region's end: the forward's, as before."""
    sc = ms.windows_autocast_forward(cast=False, act_mib=8)
    mem = _memory(tmp_path, sc)
    assert mem["breakdown"]["held"] == sc.truth["weights_bytes"]
    assert mem["breakdown"]["activations"] == sc.truth["act_bytes"]


@pytest.mark.parametrize("in_history", [False, True])
def test_the_copies_of_weights_in_unsplit_blocks_are_booked_apart(tmp_path: Path, in_history: bool) -> None:
    """A 25 MiB fp32 weight keeps its whole 26 MiB block (the allocator splits a large block only where more than
    1 MiB would remain), so its 12.5 MiB bf16 copy is half the tensor, not half the block: CS336's 2.7B model under
    autocast (QR-0W/Stanford-CS336, h37-autocast).  Main read the 24 copies as the forward's activations."""
    sc = ms.windows_autocast_forward(weight_mib=25, unsplit=True, weights_in_history=in_history)
    assert sc.truth["weights_bytes"] == 24 * 26 * 2**20  # the premise: each weight's block is not twice its copy
    mem = _memory(tmp_path, sc)
    assert (mem["breakdown"]["held"], mem["breakdown"]["casts"]) == (sc.truth["weights_bytes"], sc.truth["cast_bytes"])
    assert mem["breakdown"]["activations"] <= sc.truth["act_bytes"]
