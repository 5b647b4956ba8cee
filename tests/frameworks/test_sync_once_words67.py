"""The fix for a loop too small for its host cost that syncs in every turn is each framework's own: TensorFlow's and a
native CUDA program's words, not PyTorch's (issue #37 class 4; h37-calls67, SURVEY h37-turn66's *Left* 3).

Main (15b35816) wrote ``launch_bound:step_sync`` for PyTorch (``torch.cuda.synchronize()``, ``.item()``, CUDA events
from ``torch.cuda.Event``) and JAX (``block_until_ready``) only: ``launch_bound.sync_fixes`` gave nothing to a
TensorFlow program's per-step ``.numpy()`` or a CUDA C++ loop's ``cudaDeviceSynchronize`` after each launch.

Real trace: wild ``counted_steps_rtx3090_solver`` (cestwc's Hungarian solver, CUDA C++, Nsight export): 5 kept turns,
each after a ``cudaDeviceSynchronize`` (5.4 of the program's own syncs a turn) -- the lookup the step-level verdict
makes there gives the native words.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tb_gpu_advisor import formats
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.frameworks import jax, native, pytorch, tensorflow
from tb_gpu_advisor.rules import launch_bound
from tb_gpu_advisor.rules.base import Ctx
from tb_gpu_advisor.runtime.pipeline import host_metrics

_WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"
_KEY = "launch_bound:step_sync"


def _text(actions) -> str:  # noqa: ANN001
    return " ".join(a.text + " " + (a.snippet or "") for a in actions)


@pytest.mark.parametrize("fw, own, foreign", [
    (tensorflow.FRAMEWORK, (".numpy()", "tf.function", "tf.range"), ("torch.", ".item()", "block_until_ready")),
    (native.FRAMEWORK, ("cudaDeviceSynchronize", "cudaEventElapsedTime", "once, after the loop"),
     ("torch.", ".item()", "block_until_ready", ".numpy()")),
])
def test_each_framework_says_sync_once_in_its_own_words(fw, own, foreign):
    """Fails on main: neither TensorFlow nor the native framework wrote the fix."""
    got = _text(fw.extra(_KEY))
    assert got, f"{fw.id} writes no {_KEY}"
    assert all(w in got for w in own), got
    assert not any(w in got for w in foreign), got


def test_every_framework_with_a_step_level_fix_writes_the_sync_fix():
    """A framework that tells a step too small for its host cost (``launch_bound:step``) tells the sync in every turn
    too: PyTorch and JAX on main, TensorFlow now."""
    for fw in (pytorch.FRAMEWORK, jax.FRAMEWORK, tensorflow.FRAMEWORK):
        assert fw.extra("launch_bound:step") and fw.extra(_KEY), fw.id


def test_a_tf_inference_loop_reads_its_own_step():
    """The words follow the job's step (``tensorflow.Loop``): an inference loop is told of its calls, not of training
    steps."""
    fw = tensorflow.FRAMEWORK.for_job(["inference"])
    got = _text(fw.extra(_KEY))
    assert "training step" not in got and "train_step" not in got, got


def test_the_real_cuda_solver_gets_the_native_words():
    """wild ``counted_steps_rtx3090_solver``: its turns each sync (``cudaDeviceSynchronize``); the step-level lookup
    (``launch_bound.sync_fixes``) gives the native program's words.  Main: nothing."""
    (s,) = [s for s in discover(str(_WILD)) if s.run == "counted_steps_rtx3090_solver"]
    m = host_metrics(formats.read(s.hosts[0]))
    ctx = Ctx(m)
    assert ctx.fw.id == "native" and m.steps.count >= 2
    got = _text(launch_bound.sync_fixes(ctx, m))
    assert "cudaDeviceSynchronize" in got and "cudaEventElapsedTime" in got, got
