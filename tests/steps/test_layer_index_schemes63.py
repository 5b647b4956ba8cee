"""A model's per-layer ranges in other people's naming schemes are pieces of one pass, never steps (h37-review63,
reviewing nvtx62's ``frameworks.nvtx.layer_family``).

nvtx62 read a module path's layer index written ``.N`` (``model.layers.3``, FSDP's ``blocks.16``); a hook that names
its range by the expression that reached the module writes the index as code does -- ``model.layers[3]``,
``self.blocks[7].attn`` (``torch.compile``'s guard and source names, JAX/Equinox paths) -- and base read those as a
loop's counter: one forward of 12 such layers as 10 "steps" of 2.68 ms.  The other schemes (Hugging Face BERT's
``encoder.layer.3``, GPT-2's ``transformer.h.11``, timm's ``blocks.7``, Megatron's ``decoder.layers.5``) were read
right by nvtx62 and stay so (controls).

Truth by construction: ``synthetic.nsysexport.write_layer_pass`` (one pass of 12 layers, the host pausing 3 ms after
layers 3 and 7: 3 bursts, no iteration)."""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.frameworks import nvtx
from tests.support.cli_report import first_host


def _steps(tmp_path, scheme: str) -> tuple[dict, dict]:
    p = tmp_path / "pass.sqlite"
    truth = nx.write_layer_pass(str(p), layer_range=scheme)
    return first_host(p), truth


@pytest.mark.parametrize("scheme", ["model.layers[{i}]", "self.blocks[{i}].attn"])
def test_indexed_layers_of_one_pass_are_one_pass(tmp_path, scheme):
    """Base: 10 "steps" of the layers' ranges (the bracketed index read as a counter).  Fails on base."""
    host, truth = _steps(tmp_path, scheme)
    steps = host["steps"]
    assert steps["source"] == "whole_capture" and steps["count"] == 1, steps
    family = nvtx.layer_family(scheme.format(i=0))
    assert f"the 12 layers of `{family}` launch their work in 3 of them" in steps["note"], steps["note"]
    assert host["achievable"]["step_ms"] == pytest.approx(truth["pass_ms"], rel=0.02)


@pytest.mark.parametrize("scheme", ["bert.encoder.layer.{i}", "transformer.h.{i}", "blocks.{i}",
                                    "module.decoder.layers.{i}"])
def test_dotted_layer_schemes_stay_one_pass(tmp_path, scheme):
    """Control (passes on base): the dotted schemes of Hugging Face, GPT-2, timm and Megatron."""
    host, _ = _steps(tmp_path, scheme)
    assert host["steps"]["source"] == "whole_capture" and host["steps"]["count"] == 1, host["steps"]


def test_layer_family_reads_each_scheme_and_no_counter():
    """The names' rule: an index of a module path or of a container, never a loop's counter or a version.  Fails on
    base (the bracketed forms)."""
    assert nvtx.layer_family("model.layers[3].mlp") == "model.layers[#].mlp"
    assert nvtx.layer_family("transformer.h.11") == "transformer.h.#"
    assert nvtx.layer_family("decoder.layers.5.self_attention") == "decoder.layers.#.self_attention"
    for counter in ("train_step 3", "iteration 12", "Step 3/100", "v1.2", "torch 2.1.0", "[3] forward", "step_3"):
        assert nvtx.layer_family(counter) is None, counter
