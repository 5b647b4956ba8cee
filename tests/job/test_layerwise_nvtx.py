"""Serving engines' layer-wise NVTX: one range per module call, the steps one per model forward, never per layer
(issue #37, h37-left51).

SGLang's ``--enable-layerwise-nvtx-marker`` and vLLM's ``--enable-layerwise-nvtx-tracing`` register NVIDIA's forward
hooks (``PytHooks``: ``register_hooks(model, module_prefix="model")``) on every module; each pre-hook pushes the
``str()`` of a dict ``{'Module': '<dotted name>', 'TrainableParams': ..., 'Inputs': [shapes], 'StaticParams': ...}``.
Every row's text holds its call's shapes, so main read no range as repeated: the export of a 4-layer engine's 12 steps
was cut into 46 "steps" of 2.05 ms by the launches' period -- one decoder layer each.  The module name is what repeats:
the steps are the model's forwards (``model``), one per engine step.

By construction (``synthetic.nsysexport.write_layerwise_engine``): the engine steps and their length known.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.cli import main as cli
from tb_gpu_advisor.frameworks import nvtx


def _report(path: str) -> dict:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        cli.main(["report", path, "--format", "json", "--cache-dir", "off"])
    return json.loads(out.getvalue())["reports"][0]


@pytest.mark.parametrize("prefix", ["model", "top"])
def test_layerwise_ranges_make_one_step_per_model_forward(tmp_path, prefix: str) -> None:  # noqa: ANN001
    path = str(tmp_path / "engine.sqlite")
    truth = nx.write_layerwise_engine(path, prefix=prefix)
    host = _report(path)["hosts"][0]
    assert host["steps"]["count"] <= truth["steps"]  # never one per layer (4 a step)
    assert f"`{prefix}`" in host["steps"]["note"]
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth["decode_step_ms"], rel=0.05)


@pytest.mark.parametrize("text, name", [
    ("{'Module': 'model.layers.0.mlp', 'Inputs': [[8, 4096]]}", "model.layers.0.mlp"),
    ("{'Module': 'model', 'Inputs': [[8], [8]]}", "model"),
])
def test_a_hook_marker_is_named_by_its_module(text: str, name: str) -> None:
    assert nvtx.op_name(text) == (name, False)


@pytest.mark.parametrize("text", ["{'mod': 'Tensor', 'op': 'cuda', 'args': []}",
                                  '{"op":"MatMul","name":"dense/MatMul","args":[]}'])
def test_control_other_dict_ranges_keep_their_reading(text: str) -> None:
    """Controls: PyProf's op annotation and TensorFlow's detailed op range stay framework ops."""
    assert nvtx.op_name(text)[1] is True
