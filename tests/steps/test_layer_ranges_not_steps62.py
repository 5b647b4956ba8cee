"""A model's per-layer NVTX ranges are pieces of a step, never steps (issue #37 class 2: jobs described by NVTX).

Frameworks open a range per layer, the layer's index in its module path: FSDP's ``FSDP::pre_forward
(blocks.16._checkpoint_wrapped_module)`` (read off the shared 2xH100 FSDP export), a forward hook's ``model.layers.3``
(NVIDIA's layer-wise hooks, Megatron-core's ``decoder.layers.5...``).  Two readings took them for the loop's:

* the steps' "ranges named alike but for their numbers" stripped the layer index as a counter, so one forward of 12
  layers read as 10 "steps" of 2.68 ms (and three iterations as 34 steps) -- ``steps.ranges._base_name`` now keeps a
  module path's layer index (``frameworks.nvtx.layer_family``);
* the GPU's bursts, cut by the host's pauses inside a pass, were read as iterations though each ran other layers:
  ``steps.burst_steps._layers_across_bursts`` reads them as one pass where the layers of one family run in different
  bursts, none again in a later one.  Real: the FSDP export with its second process's CUDA side deleted
  (``synthetic.nsysexport.unrecord_process``): its one rank's 300 ms slice of a forward (blocks 8 to 23, once each)
  read as 4 "steps" of 135, 35, 7 and 121 ms; with both ranks recorded it read as one pass.

Truth by construction: ``synthetic.nsysexport.write_layer_pass`` (passes of 12 layers, the host pausing 3 ms after
layers 3 and 7; between passes 6 ms)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.frameworks import nvtx
from tests.support.cli_report import first_host

FSDP = Path("/work/shared/profiles/nsys/fsdp_mfu_after/mfu_2gpu_after.sqlite")
HOOKS = "model.layers.{i}"


def _host(tmp_path: Path, name: str, **kw: object) -> tuple[dict, dict]:
    p = tmp_path / f"{name}.sqlite"
    truth = nx.write_layer_pass(str(p), **kw)
    return first_host(p), truth


def test_one_forward_of_hooked_layers_is_one_pass(tmp_path):
    """One pass of 12 ``model.layers.N`` ranges, cut into 3 bursts by the host's pauses: base read 10 "steps" of
    2.68 ms from the layers' ranges; now one pass of the window, said by the layers.  Fails on base."""
    host, truth = _host(tmp_path, "pass", layer_range=HOOKS)
    steps = host["steps"]
    assert steps["source"] == "whole_capture" and steps["count"] == 1, steps
    assert "the 12 layers of `model.layers.#` launch their work in 3 of them" in steps["note"], steps["note"]
    assert host["achievable"]["step_ms"] == pytest.approx(truth["pass_ms"], rel=0.02)


@pytest.mark.parametrize("pauses", [(), (3, 7)], ids=["back-to-back", "paused"])
def test_three_passes_of_hooked_layers_are_three_iterations(tmp_path, pauses):
    """Three passes of the same 12 layers: base read 34 "steps" of 2.4-3.0 ms (each layer a step); now the passes, at
    their period.  Fails on base."""
    host, truth = _host(tmp_path, "loop", iterations=3, pause_after=pauses, layer_range=HOOKS)
    steps = host["steps"]
    assert steps["found"] == 3 and steps["count"] >= 2, steps
    assert "model.layers.0" in steps["note"]
    assert host["achievable"]["step_ms"] == pytest.approx(truth["period_ms"], rel=0.05), (host["achievable"]["step_ms"], truth)


def test_fsdp_layers_of_one_pass_stay_one_pass(tmp_path):
    """Control (passes on base): FSDP's per-layer ranges of one pass -- the job read as training, one pass."""
    host, _ = _host(tmp_path, "fsdp")
    assert host["steps"]["count"] == 1 and host["steps"]["source"] in ("single_pass", "whole_capture"), host["steps"]


def test_layer_family_is_a_module_paths_index_not_a_counter():
    """The names' rule (new): a layer index in a module path, never a loop's counter."""
    assert nvtx.layer_family("FSDP::pre_forward (blocks.16._checkpoint_wrapped_module)") == \
        "FSDP::pre_forward (blocks.#._checkpoint_wrapped_module)"
    assert nvtx.layer_family("model.layers.3") == "model.layers.#"
    assert nvtx.layer_family("decoder.layers.5.self_attention") == "decoder.layers.#.self_attention"
    for counter in ("train_step 3", "iteration 12", "Step 3/100", "conv2d", "fp16", "v1.2", "microbatch_0_forward"):
        assert nvtx.layer_family(counter) is None, counter


def test_real_fsdp_rank_alone_reads_its_slice_as_one_pass(tmp_path):
    """The shared FSDP export with process 149's CUDA side deleted: base read process 148's slice of one forward as
    4 burst "steps" (135, 35, 7, 121 ms); now one pass, as the export read with both ranks recorded.  Fails on
    base."""
    if not FSDP.is_file():
        pytest.skip(f"{FSDP} absent")
    p = tmp_path / FSDP.name
    shutil.copy(FSDP, p)
    nx.unrecord_process(str(p), 149)
    steps = first_host(p)["steps"]
    assert steps["count"] == 1 and steps["source"] == "whole_capture", steps
    assert "layers of `FSDP::pre_forward (blocks.#._checkpoint_wrapped_module)`" in steps["note"], steps["note"]
