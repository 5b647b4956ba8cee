"""A checkpoint loader's weights are held across steps by their lifetime, whatever call made them (issue #37 class 5).

The reader knew parameters by the frames of the calls that place them -- ``Module._apply`` (``model.to("cuda")``)
and a PyTorch module's constructor (h37-survey69).  A loader puts each weight on the GPU with a tensor's ``.to()`` or
``copy_`` under its own names (Hugging Face's ``from_pretrained(device_map=...)`` through accelerate's
``set_module_tensor_to_device``, safetensors' ``load_file(device=)``, a user's loader): those weights were "other",
and "other" is no kind an OOM's fix frees -- a job whose loaded weights filled the GPU was told to checkpoint its
activations.  Read by lifetime instead: made before the first forward and never freed, a block is held across steps;
a loader's staging buffer, freed before the forward, stays transient.  Truth by construction:
``synthetic.memsnapshot.oom_weights``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.model.trace import MEMORY_PHASES
from tb_gpu_advisor.runtime.pipeline import analyze_host

#: How the same history is recorded: every frame (the default), Python frames only (``stacks="python"``), on Windows.
RECORDED = {"all": lambda doc: doc, "python": lambda doc: ms.as_recorded(doc, stacks="python"), "windows": ms.as_windows}


def _write(tmp_path: Path, built: str, recorded: str = "all", staging_mib: int = 0) -> tuple[Path, ms.Scenario]:
    sc = ms.oom_weights(built, staging_mib=staging_mib)
    path = ms.write(str(tmp_path / f"weights_{built}_{recorded}.pickle"), RECORDED[recorded](sc.doc))
    return Path(path), sc


@pytest.mark.parametrize("recorded", list(RECORDED))
@pytest.mark.parametrize("built", ["hf", "loader"])
def test_weights_a_loader_put_on_the_gpu_are_the_parameters(tmp_path: Path, built: str, recorded: str):
    path, sc = _write(tmp_path, built, recorded)
    frames = ms.WEIGHT_FRAMES[built]
    assert not any(f["name"] in ("_apply", "convert", "__init__") for f in frames)  # the premise: no frame says so
    (oom,) = read_trace(str(path)).snapshot.ooms
    assert {k: v for k, v in oom.live_by_phase.items() if v} == {
        "parameters": sc.truth["weight_bytes"], "forward": sc.truth["live_activation_bytes"]}


@pytest.mark.parametrize("recorded", list(RECORDED))
@pytest.mark.parametrize("built", ["hf", "loader"])
def test_the_oom_finding_prescribes_for_the_loaded_weights(tmp_path: Path, built: str, recorded: str):
    """16 GiB of weights and 8 GiB of activations: sharding / offloading the weights frees the most, not
    checkpointing (main: ``cause == "activations"``, about 5.6 GiB)."""
    path, sc = _write(tmp_path, built, recorded)
    rep = analyze_host(HostFile("oom", str(path), path.stat().st_size, 0, "snapshot"))
    f = next(f for f in rep.findings if f.rule == "oom_snapshot")
    assert f.metric.detail["cause"] == sc.truth["largest"]
    assert f.saving_bytes == sc.truth["weight_bytes"]


@pytest.mark.parametrize("built", ["hf", "loader", "moved"])
def test_a_staging_buffer_freed_before_the_forward_stays_transient(tmp_path: Path, built: str):
    """Each shard read into a 1 GiB buffer, its 8 weights copied out, the buffer freed before the forward: the
    buffers are no weights (not live at the OOM, and their allocations stay "other"); the weights' bytes unchanged."""
    path, sc = _write(tmp_path, built, staging_mib=1024)
    tr = read_trace(str(path))
    me = tr.memory[0]
    staged = np.array([me.op_names[o].startswith("load.py:9 ") if o >= 0 else False for o in me.op.tolist()])
    staged &= me.delta > 0
    assert int(staged.sum()) == sc.truth["staging"] == 8
    assert (me.phase[staged] == MEMORY_PHASES.index("other")).all()
    (oom,) = tr.snapshot.ooms
    assert oom.live_by_phase.get("parameters") == sc.truth["weight_bytes"]
    assert oom.live_by_phase.get("other", 0) == 0


@pytest.mark.parametrize("built", ["moved", "built"])
def test_control_where_frames_decide_nothing_moves(tmp_path: Path, built: str):
    """Weights whose frames already say parameters: the same phases event by event with the lifetime reading."""
    path, sc = _write(tmp_path, built)
    me = read_trace(str(path)).memory[0]
    allocs = me.delta > 0
    assert int(me.delta[allocs & (me.phase == MEMORY_PHASES.index("parameters"))].sum()) == sc.truth["weight_bytes"]
    assert not (allocs & (me.phase == MEMORY_PHASES.index("other"))).any()


def test_control_without_any_frame_no_first_forward_is_known(tmp_path: Path):
    """``context=None``: no allocation is a forward's, so nothing marks the first pass -- left as the frames say
    ("other"), not guessed."""
    sc = ms.oom_weights("loader")
    path = ms.write(str(tmp_path / "bare.pickle"), ms.as_recorded(sc.doc, context=None))
    (oom,) = read_trace(path).snapshot.ooms
    assert {k for k, v in oom.live_by_phase.items() if v} == {"other"}


def test_control_a_batch_made_before_the_first_forward_and_freed_is_not_held(tmp_path: Path):
    """An inference loop's first input is copied to the GPU before the first forward (frames: the user's script,
    "other") and freed when its pass ends: transient, not held (``inference_loop``: truth by construction)."""
    sc = ms.inference_loop()
    path = ms.write(str(tmp_path / "loop.pickle"), sc.doc)
    me = read_trace(path).memory[0]
    first_forward = int(np.flatnonzero((me.delta > 0) & (me.phase == MEMORY_PHASES.index("forward")))[0])
    inputs = np.array([o >= 0 and me.op_names[o].startswith("bench.py:18 ") for o in me.op.tolist()]) & (me.delta > 0)
    assert int(np.flatnonzero(inputs)[0]) < first_forward  # the premise: the first input precedes the first forward
    assert inputs.sum() == sc.truth["passes"]
    assert (me.phase[inputs] == MEMORY_PHASES.index("other")).all()
