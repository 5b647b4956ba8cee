"""Bursts inside the program's frame that share some kernels are not by that its iterations (issue #37, h37-framed36).

The wrong assumption (``steps.framed._framed_bursts``): *bursts inside the frame that run some of the same work are
iterations*.  An eager prefill the host syncs per layer is cut into bursts of one layer's kernels; an iteration
repeats the whole pass.  By construction (``synthetic.torchtrace.write_framed_layer_syncs``): decode warm-ups, then
one ``record_function("measure")`` around one prefill of ``layers`` layers, each ended by ``.item()``, then the head
and the sampler.  Main read the layers as ``layers - 1`` "steps" of one layer (1.22 ms) each.
"""

from __future__ import annotations

import os

import pytest

from synthetic import torchtrace as tt
from tests.support.cli_report import first_host


@pytest.mark.parametrize("layers", [6, 8])
def test_a_pass_synced_per_layer_inside_its_frame_is_one_pass(tmp_path, layers: int) -> None:  # noqa: ANN001
    path = os.path.join(str(tmp_path), "run.pt.trace.json")
    truth = tt.write_framed_layer_syncs(path, layers=layers)
    host = first_host(path)
    steps = host["steps"]
    assert steps["source"] == "single_pass" and steps["count"] == 1
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth["pass_ms"], rel=0.01)
    assert f"holds {truth['layers'] + 1} of the GPU's" in steps["note"] and "`measure`" in steps["note"]


def test_passes_with_a_kernel_of_their_own_each_stay_the_iterations(tmp_path) -> None:  # noqa: ANN001
    """Control: whole passes whose first kernel differs per pass (the work one burst runs, in every burst) stay
    iterations, as ``test_framed_bursts.py`` reads them."""
    path = os.path.join(str(tmp_path), "run.pt.trace.json")
    truth = tt.write_framed_inference(path)
    steps = first_host(path)["steps"]
    assert steps["source"] == "gpu_busy_clusters" and steps["count"] == truth["measured"]


@pytest.mark.parametrize("micro_steps", [4])
def test_iterations_whose_last_alone_runs_an_optimizer_step_stay_iterations(tmp_path, micro_steps: int) -> None:  # noqa: ANN001
    """Gradient accumulation (h37-framed37): ``micro_steps`` synced iterations of the same kernels inside the frame,
    the last alone running the optimizer step after its micro-step.  The work one burst runs lies at one edge only;
    the first burst runs the middle's work, so these are iterations, not pieces of one pass.  Main read them as one
    pass (``single_pass``, 1)."""
    path = os.path.join(str(tmp_path), "run.pt.trace.json")
    optimizer = (("aten::_foreach_add_", "multi_tensor_apply_kernel"), ("aten::_fused_adam_", "fused_adam_kernel"))
    truth = tt.write_framed_inference(path, measured=micro_steps, vary=False, last_extra=optimizer)
    steps = first_host(path)["steps"]
    assert steps["source"] == "gpu_busy_clusters" and steps["count"] == truth["measured"]
