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

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.frameworks import nvtx
from tests.support.cli_report import first_report


@pytest.mark.parametrize("prefix", ["model", "top"])
def test_layerwise_ranges_make_one_step_per_model_forward(tmp_path, prefix: str) -> None:  # noqa: ANN001
    path = str(tmp_path / "engine.sqlite")
    truth = nx.write_layerwise_engine(path, prefix=prefix)
    host = first_report(path)["hosts"][0]
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


@pytest.mark.parametrize("kw, engine", [
    ({"thread": "VLLM::EngineCor"}, "vLLM"),  # ``VLLM::EngineCore`` as Linux keeps a thread's name: 15 bytes
    ({"thread": "sglang::schedul"}, "SGLang"),  # ``sglang::scheduler_TP0``
    ({"thread": "python", "prefix": "top", "executor_domain": "TensorRT-LLM"}, "TensorRT-LLM"),
])
def test_the_engine_that_names_its_threads_or_its_nvtx_domain_is_the_job(tmp_path, kw: dict, engine: str) -> None:  # noqa: ANN001
    """The hooks' ranges name modules, never the engine; what names it is the engine's own process title (vLLM's
    ``set_process_title``, SGLang's ``setproctitle``: on Linux also the thread's name, its first 15 bytes) or the
    NVTX domain of its executor's ranges (TensorRT-LLM's ``nvtx_range``).  Main: "GPU work of an unknown kind"."""
    path = str(tmp_path / "engine.sqlite")
    truth = nx.write_layerwise_engine(path, **kw)
    host = first_report(path)["hosts"][0]
    job = host["job"]
    assert (job["kind"], job.get("engine")) == ("serving", engine)
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth["decode_step_ms"], rel=0.05)  # the steps kept


def test_control_a_thread_named_by_no_engine_stays_unknown(tmp_path) -> None:  # noqa: ANN001
    """Control: the same layer-wise capture from a thread no engine names (a user's own script under NVIDIA's hooks)
    is read as before -- no engine, no serving."""
    path = str(tmp_path / "engine.sqlite")
    nx.write_layerwise_engine(path, thread="python")
    job = first_report(path)["hosts"][0]["job"]
    assert job["kind"] != "serving" and not job.get("engine")
