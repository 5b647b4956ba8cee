"""A memory snapshot of the state alone -- no allocation history, or one with no step in it -- takes its job's kind
from the stacks of the blocks live at the dump, each weighted by its bytes (issue #37 item 5, survey h37-survey5).

Two real snapshots were of "unknown" kind although their live blocks' frames say what the job is: verl's rollout
worker (volcengine/verl ``mem.pickle``, kept in tests/fixtures/wild/snapshot_verl_rollout_state: vLLM's KV cache of
20.3 GiB and its Qwen2 weights beside a Megatron actor's gradient buffers and optimizer state) and SketchKV2's Llama
forward with a quantised KV cache under Hugging Face ``generate`` (tests/fixtures/wild/snapshot_llama_kvcache_state).
Truth by construction: ``synthetic/memsnapshot.state_only``, which allocates each holder's bytes from its own stack.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.frameworks import engines
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES

GiB = ms.GiB
VERL = FIXTURES / "wild" / "snapshot_verl_rollout_state" / "mem.pickle"
LLAMA = FIXTURES / "wild" / "snapshot_llama_kvcache_state" / "my_snapshot.pickle"


def _job(path: Path) -> dict:
    rep = analyze_host(HostFile(path.stem, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep.job


def _write(tmp_path: Path, sc: ms.Scenario, name: str = "state") -> Path:
    return Path(ms.write(str(tmp_path / f"{name}.pickle"), sc.doc))


def test_a_serving_engines_state_beside_a_trainers_is_serving_by_its_bytes(tmp_path: Path):
    sc = ms.state_only({"weights": 2 * GiB, "kv_vllm": 12 * GiB, "weights_vllm": GiB, "adam": GiB, "ddp": GiB // 2})
    job = _job(_write(tmp_path, sc))
    assert (job["kind"], job["engine_id"]) == (sc.truth["kind"], sc.truth["engine"]) == ("serving", "vllm"), job
    assert job["kind_confidence"] == "medium"  # 13 of 16.5 GiB say serving
    ev = job["kind_evidence"]
    assert "cache_engine.py:83 _allocate_kv_cache" in ev and "13.0 GiB of the 16.5 GiB allocated (79%)" in ev, ev
    assert "1.50 GiB say training" in ev and "adam.py:157 _init_group" in ev, ev


def test_the_kind_is_what_most_bytes_say_not_the_first_name_found(tmp_path: Path):
    """The same holders, the trainer's larger: training, with the engine beside it."""
    sc = ms.state_only({"kv_vllm": GiB, "adam": 4 * GiB, "ddp": 2 * GiB, "grads": 2 * GiB})
    job = _job(_write(tmp_path, sc))
    assert job["kind"] == sc.truth["kind"] == "training" and job["engine_id"] is None, job
    ev = job["kind_evidence"]
    assert "8.00 GiB of the 9.00 GiB allocated" in ev and "1.00 GiB say serving" in ev, ev
    assert "a data-parallel wrapper's gradient buffers 2.00 GiB (`distributed.py:1231 _ddp_init_helper`)" in ev, ev


def test_a_forwards_cache_kept_after_a_history_without_steps_is_inference(tmp_path: Path):
    """A history of one free (recording started just before the dump): the state still says a forward pass."""
    sc = ms.state_only({"weights": 12 * GiB, "kv_hf": 2 * GiB}, history=True)
    assert len(sc.doc["device_traces"][0]) == 1
    job = _job(_write(tmp_path, sc))
    assert job["kind"] == sc.truth["kind"] == "inference", job
    # the user's own line that ran the forward (the stack's label: transformers is a library)
    assert job["kind_confidence"] == "medium" and "2.00 GiB (`eval.py:33 run`)" in job["kind_evidence"], job


def test_few_named_bytes_among_two_kinds_are_low_confidence(tmp_path: Path):
    sc = ms.state_only({"weights": 20 * GiB, "kv_hf": GiB, "adam": GiB // 2})
    job = _job(_write(tmp_path, sc))
    assert (job["kind"], job["kind_confidence"]) == ("inference", "low"), job


def test_stacks_that_say_nothing_leave_the_kind_unknown(tmp_path: Path):
    job = _job(_write(tmp_path, ms.state_only({"weights": 4 * GiB})))
    assert (job["kind"], job["kind_confidence"]) == ("unknown", "low"), job


def test_the_live_stacks_account_for_the_allocated_bytes(tmp_path: Path):
    sc = ms.state_only({"weights": 2 * GiB, "kv_vllm": 12 * GiB, "adam": GiB})
    trace = read_trace(str(_write(tmp_path, sc)))
    stacks = trace.snapshot.stacks[0]
    assert sum(s.size for s in stacks) == trace.snapshot.state[0][1] == sc.truth["allocated"]
    assert sum(s.blocks for s in stacks) == 12 and [s.size for s in stacks] == sorted((s.size for s in stacks),
                                                                                       reverse=True)


def test_a_trainers_bridge_to_vllm_is_not_vllms_code():
    """verl's ``megatron_vllm.py`` holds the actor's buffers, not vLLM's: a word of its own names the engine."""
    assert engines.frame_engine("/opt/verl/workers/sharding_manager/megatron_vllm.py:77 __init__") is None
    hit = engines.frame_engine("/x/dist-packages/vllm/worker/cache_engine.py:83 _allocate_kv_cache")
    assert hit is not None and hit.id == "vllm"
    hf = engines.frame_engine("C:\\env\\transformers\\generation\\utils.py:3206 _sample")  # Windows paths too
    assert hf is not None and hf.id == "hf_generate"


@pytest.mark.skipif(not VERL.is_file(), reason="wild fixture missing")
def test_real_verl_rollout_state_is_vllm_serving_beside_training_state():
    job = _job(VERL)
    assert (job["kind"], job["engine_id"], job["kind_confidence"]) == ("serving", "vllm", "medium"), job
    ev = job["kind_evidence"]
    # by hand (SURVEY.md): the KV cache 20.3 GiB, Qwen2's vLLM weights ~0.5 GiB; DDP buffers 1.4 GiB, main params 0.46
    assert "20.8 GiB of the 23.2 GiB allocated (90%)" in ev and "_allocate_kv_cache" in ev, ev
    assert "1.84 GiB say training" in ev and "param_and_grad_buffer.py" in ev and "distrib_optimizer.py" in ev, ev
    trace = read_trace(str(VERL))
    assert sum(s.size for s in trace.snapshot.stacks[0]) <= trace.snapshot.state[0][1]


@pytest.mark.skipif(not LLAMA.is_file(), reason="wild fixture missing")
def test_real_llama_kv_cache_state_is_inference_under_generate():
    job = _job(LLAMA)
    assert (job["kind"], job["kind_confidence"]) == ("inference", "medium"), job
    assert job["engine_id"] == "hf_generate" and "2.72 GiB of the 15.3 GiB allocated" in job["kind_evidence"], job
