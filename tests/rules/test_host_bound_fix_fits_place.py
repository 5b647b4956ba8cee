"""The host-bound finding's fix fits the place its own summary names (issue #37: every piece of advice fitting what
the report already knows).

h37-survey62 placed a host-bound step's time in the deepest recorded Python call holding it (vLLM's B200 decode:
63.0 of 73.5 ms a step inside ``gpt_oss.py(221): forward``), but the serving engine's fix still named its
scheduler, input preparation and sampler, with async scheduling.  The wrong assumption: *a serving engine's host
time is its scheduler's*.  Where the host's work lies inside the model's own recorded calls (the framework's model
calls: ``nn.Module`` spans, ``_call_impl``), the fix is the one that skips the forward's Python (the engine's
``launch_bound:model_call``: whole-step CUDA graphs); elsewhere the engine's scheduler fix stays.

Truth by construction: ``synthetic.torchtrace.serving_in_model_call`` (the host's 9 ms a step inside the model's
forward, called through ``_call_impl``) and its twin ``serving_in_runner_code`` (the same 9 ms in the model runner's
own ``_build_attention_metadata``, no module's call).  The real trace: the kept ``wild/vllm_b200_tp8``.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.frameworks import engines
from tb_gpu_advisor.runtime.pipeline import analyze_session

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"


def _host_bound(host: dict) -> dict:
    (f,) = [f for f in host["findings"] if f["title"].startswith("Host-bound")]
    return f


def _synthetic(tmp_path, body) -> dict:
    scenario = tt.Scenario(1, body, [], [], "a vLLM TP worker")
    paths = tt.write_run(str(tmp_path), scenario, steps=10, run="run")
    hosts = [SimpleNamespace(host=f"h{i}", path=p, format="kineto", size=0) for i, p in enumerate(paths)]
    return analyze_session("run", "s", hosts).to_dict()["hosts"][0]


def _texts(f: dict) -> list[str]:
    return [a["text"] for a in f["actions"]]


def _vllm(key: str) -> list[str]:
    """The vLLM engine's own fix texts for ``key``, read from its table (no copy of the words here)."""
    e = engines.by_id("vllm")
    return [a.text for a in e.fixes[key]]


def test_time_inside_the_model_s_forward_gets_the_model_s_fix(tmp_path):
    f = _host_bound(_synthetic(tmp_path, tt.serving_in_model_call))
    assert f"inside the Python call `{tt.MODEL_FORWARD}`" in f["summary"]
    texts = _texts(f)
    # main: the scheduler's fix ("scheduling, input preparation, sampling ...; async scheduling") under a place that
    # is the model's forward
    assert not set(_vllm("launch_bound")) & set(texts), texts
    assert set(_vllm("launch_bound:model_call")) <= set(texts), texts


def test_control_time_in_the_runner_s_own_code_keeps_the_engine_s_fix(tmp_path):
    f = _host_bound(_synthetic(tmp_path, tt.serving_in_runner_code))
    assert f"inside the Python call `{tt.RUNNER_METADATA}`" in f["summary"]
    texts = _texts(f)
    assert set(_vllm("launch_bound")) <= set(texts), texts
    assert not set(_vllm("launch_bound:model_call")) & set(texts), texts


def test_a_real_eager_decode_s_forward_gets_the_model_s_fix():
    """vLLM's gpt-oss decode on a B200 (TP 8): 63.0 of its 73.5 ms host-bound time a step lie inside the model's
    ``gpt_oss.py(221): forward``, itself inside ``_call_impl`` (read off the file: the forward's spans lie inside
    the module calls')."""
    path = next((WILD / "vllm_b200_tp8").glob("*.pt.trace.json.gz"))
    host = analyze_session("run", "s", [SimpleNamespace(host="h", path=str(path), format="kineto", size=0)]
                           ).to_dict()["hosts"][0]
    f = _host_bound(host)
    assert "gpt_oss.py(221): forward`" in f["summary"]
    texts = _texts(f)
    assert not set(_vllm("launch_bound")) & set(texts), texts  # main: "... the engine's host side runs (scheduling"
    assert set(_vllm("launch_bound:model_call")) <= set(texts), texts


@pytest.mark.parametrize("key", ["launch_bound", "launch_bound:model_call"])
def test_the_engines_write_both_fixes_for_vllm_and_sglang(key):
    for eid in ("vllm", "sglang"):
        assert engines.by_id(eid).fixes.get(key), (eid, key)
