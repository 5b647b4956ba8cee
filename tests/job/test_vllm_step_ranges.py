"""A vLLM worker profiled without ``with_stack`` (vLLM's default) has no ``execute_model`` Python span: its engine
steps are the ranges its model runner names after each batch, ``execute_context_<n>(<tokens>)_generation_<m>(<tokens>)``.

Survey h37-survey15: alint77/jupiter-glm52-vllm-worklog's four-rank GH200 decode profile (TP4/EP4, full CUDA graphs)
holds eight ``execute_context_0(0)_generation_1(1)`` ranges, one ``cudaGraphLaunch`` in each; main read the 216 ms
window as one serving pass, so every per-step number was eight tokens' (its 150 reduce-scatters a token read as
1,200 "a step").  Truth by construction: ``synthetic.torchtrace.serving_ranges`` -- the ``serving_decode`` worker with
its ``execute_model`` span replaced by that range -- and the original worker as the control.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.runtime.pipeline import analyze_session


def _host(tmp_path, body, steps: int = 10) -> dict:
    scenario = tt.Scenario(1, body, [], [], "a vLLM TP worker")
    paths = tt.write_run(str(tmp_path), scenario, steps=steps, run="run")
    hosts = [SimpleNamespace(host=f"h{i}", path=p, format="kineto", size=0) for i, p in enumerate(paths)]
    return analyze_session("run", "s", hosts).to_dict()["hosts"][0]


def test_the_batch_named_range_is_the_engine_step(tmp_path):
    host = _host(tmp_path, tt.serving_ranges)
    assert (host["job"]["engine"], host["job"]["step_source"]) == ("vLLM", "engine_steps")
    assert host["steps"]["found"] == 10 and host["steps"]["count"] == 8  # the first and last dropped, as ever
    (ar,) = [r for r in host["communication"]["rows"] if r[0] == "AllReduce"]
    assert ar[1] == 2 * tt.SERVE_LAYERS  # one engine step's all-reduces, not the window's


def test_execute_model_still_wins_where_the_profile_records_python(tmp_path):
    host = _host(tmp_path, tt.serving)
    assert host["job"]["step_source"] == "engine_steps" and host["steps"]["found"] == 10


@pytest.mark.parametrize("name", ["execute_context_0(0)_generation_1(1)", "execute_context_1(888_788544)_generation_0(0)",
                                  "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32)"])
def test_each_build_s_range_name_is_vllm_s_step(name):
    from tb_gpu_advisor.frameworks.engines import ENGINES

    vllm = next(e for e in ENGINES if e.id == "vllm")
    assert any(p.search(name) for p in vllm.step_span)
    assert not any(p.search("execute_graph_pass") for p in vllm.step_span)
