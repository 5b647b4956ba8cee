"""A model built on the GPU holds its weights as a model moved there does (issue #37 class 5).

``nn.Linear(..., device="cuda")``, and any module made under ``with torch.device("cuda"):`` (litgpt's
``init_module``, gpt-fast), allocates its parameters in its constructor: no ``Module._apply`` moves them.  The reader
knew parameters only by ``_apply`` (``model.to("cuda")``), so a real snapshot's weights, made by ``linear.py
__init__`` (tests/fixtures/wild/SURVEY.md, session 31, h37-survey69: a0kuma/ckptTry, 7 of its 8 snapshots), were
"other" -- and "other" is no kind an OOM's fix can free: a job whose weights filled the GPU was told to checkpoint its
activations.  A PyTorch module's constructor allocates only the module's parameters and buffers: held, as moved ones
are.  Truth by construction: ``synthetic.memsnapshot.oom_weights``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host


def _write(tmp_path: Path, built: str) -> tuple[Path, ms.Scenario]:
    sc = ms.oom_weights(built)
    return Path(ms.write(str(tmp_path / f"weights_{built}.pickle"), sc.doc)), sc


@pytest.mark.parametrize("built", ["built", "device_mode"])
def test_weights_made_by_a_modules_constructor_are_the_parameters(tmp_path: Path, built: str):
    path, sc = _write(tmp_path, built)
    assert not any(f["name"] == "_apply" for f in ms.WEIGHT_FRAMES[built])  # the premise: nothing moved them
    (oom,) = read_trace(str(path)).snapshot.ooms
    assert oom.live_by_phase["parameters"] == sc.truth["weight_bytes"]
    assert oom.live_by_phase["forward"] == sc.truth["live_activation_bytes"]


@pytest.mark.parametrize("built", ["built", "device_mode"])
def test_the_oom_finding_prescribes_for_the_weights_not_the_activations(tmp_path: Path, built: str):
    path, sc = _write(tmp_path, built)
    rep = analyze_host(HostFile("oom", str(path), path.stat().st_size, 0, "snapshot"))
    f = rep.findings[0]
    assert f.rule == "oom_snapshot" and f.metric.detail["cause"] == sc.truth["largest"]
    assert f.saving_bytes == sc.truth["weight_bytes"]


@pytest.mark.parametrize("built", ["moved", "built", "device_mode"])
def test_control_how_the_weights_reached_the_gpu_changes_no_byte(tmp_path: Path, built: str):
    """Moved by ``.to()`` (read right before) or built in place: the same phases, the same finding."""
    path, sc = _write(tmp_path, built)
    (oom,) = read_trace(str(path)).snapshot.ooms
    assert {k: v for k, v in oom.live_by_phase.items() if v} == {
        "parameters": sc.truth["weight_bytes"], "forward": sc.truth["live_activation_bytes"]}


def test_control_a_forward_run_inside_a_constructor_stays_the_forwards():
    """The innermost phase frame decides: a user's ``__init__`` that runs a forward (a shape probe) makes an
    activation, and a constructor outside PyTorch's modules is no parameter's."""
    from tb_gpu_advisor.formats.snapshot.reader import _phase
    from tb_gpu_advisor.model.trace import MEMORY_PHASES
    probe = [*ms.ACTIVATION[:-2], ms.frame("model.py", 14, "__init__"), ms.frame("train.py", 30, "main")]
    assert MEMORY_PHASES[_phase(probe)] == "forward"
    own = [*ms.ALLOCATOR_CPP, ms.frame("model.py", 14, "__init__"), ms.frame("train.py", 30, "main")]
    assert MEMORY_PHASES[_phase(own)] == "other"
