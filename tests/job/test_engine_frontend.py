"""A serving engine's front-end process is a window without GPU work by design (issue #37 class 1, h37-survey31).

vLLM's profiler traces every process of a server: beside the engine core's trace (``rank<N>.<time>.pt.trace.json.gz``)
it writes the front-end's (``async_llm``: the API server that takes requests, tokenises them and streams tokens back).
The front-end never runs the model, so its trace holds Python spans and no CUDA call.  Read as a window of no known
cause, it was asked whether PyTorch saw the GPU and told to capture "a training step or a forward pass"; the GPU work
is in the other trace of the same session.  Real trace: ``tests/fixtures/wild/vllm_gb10_frontend`` (Navi-AI-Lab/nvllm,
Apache-2.0, PROVENANCE.md); truth by construction: Python spans of SGLang's tokenizer manager, then the same spans in
a process that launches a kernel (the engine's own, where the same client code runs around the model).
"""

from __future__ import annotations

from pathlib import Path

from tests.support import kineto_doc
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions


def _wild(run: str) -> dict:
    (s,) = [s for s in wild_sessions() if s.run == run]
    return session_report(s).to_dict()


def _text(f: dict) -> str:
    return " ".join([f["title"], f["summary"]] + [a["text"] + " " + (a["snippet"] or "") for a in f["actions"]])


def _span(name: str, ts: float, dur: float, tid: int = 1) -> dict:
    return {"ph": "X", "cat": "python_function", "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur}


def test_a_real_vllm_front_end_trace_points_to_the_engine_cores_trace():
    """Navi-AI-Lab/nvllm's ``async_llm.pt.trace.json.gz`` (a DGX Spark GB10, vLLM V1, 23.9 s): 18,155 Python spans
    of ``vllm/entrypoints/...``, ``v1/engine/async_llm.py`` and ``core_client.py``, no op, no CUDA call.  On main:
    "No GPU activity in the capture ... Was the GPU visible to PyTorch", with ``run_one_step()  # a training step or a
    forward pass``."""
    rep = _wild("vllm_gb10_frontend")
    job = rep["hosts"][0]["job"]
    assert job["kind"] == "no_gpu" and job["engine_id"] == "vllm", job
    assert "front-end process" in job["kind_evidence"] and "vllm/" in job["kind_evidence"]
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality"]
    assert f["severity"] == "warning" and "front-end process" in f["title"]
    text = _text(f)
    assert "engine core's trace" in text and "rank<N>" in text and "VLLM_TORCH_PROFILER_DIR" in text
    assert "visible to" not in text and "training step" not in text and "torch.cuda.is_available" not in text
    assert [x["rule"] for x in rep["findings"]] == ["capture_quality"]
    assert "VLLM_TORCH_PROFILER_DIR" in job["capture_advice"] and "training step" not in job["capture_advice"]


def test_sglang_front_end_spans_point_to_the_schedulers_traces(tmp_path: Path):
    """By construction: a process whose Python spans are SGLang's HTTP server and tokenizer manager, no CUDA call."""
    events = [_span("sglang/srt/entrypoints/http_server.py(512): generate_request", 0, 9000),
              _span("sglang/srt/managers/tokenizer_manager.py(401): generate_request", 10, 8000),
              _span("asyncio/base_events.py(1909): _run_once", 20, 50)]
    rep = kineto_doc.session_report(tmp_path, events)
    job = rep["hosts"][0]["job"]
    assert job["kind"] == "no_gpu" and job["engine_id"] == "sglang" and "front-end process" in job["kind_evidence"]
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality"]
    assert "front-end process" in f["title"] and "TP-<rank>" in _text(f)


def test_controls_a_cpu_program_and_an_engine_process_with_gpu_work_keep_their_readings(tmp_path: Path):
    """Python spans of no engine's front-end stay a plain window without GPU work; the front-end's client code in a
    process that launches a kernel (vLLM's engine core, or an in-process engine) is the engine's GPU work, not a
    front-end."""
    plain = kineto_doc.session_report(tmp_path / "a", [_span("train.py(40): main", 0, 9000),
                                                       _span("train.py(12): step", 10, 50)])
    job = plain["hosts"][0]["job"]
    assert job["kind"] == "no_gpu" and not job.get("engine_id") and "front-end" not in job["kind_evidence"]
    (f,) = [f for f in plain["findings"] if f["rule"] == "capture_quality"]
    assert f["title"] == "No GPU activity in the capture"
    gpu = [_span("vllm/v1/engine/core_client.py(651): monitor_engine_cores", 0, 9000),
           _span("vllm/v1/worker/gpu_model_runner.py(3758): execute_model", 100, 400),
           {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 110, "dur": 5,
            "args": {"correlation": 7}},
           {"ph": "X", "cat": "kernel", "name": "void vllm::rms_norm_kernel<float>()", "pid": 0, "tid": 7,
            "ts": 120, "dur": 30, "args": {"correlation": 7, "device": 0, "stream": 7}}]
    engine = kineto_doc.session_report(tmp_path / "b", gpu)
    job = engine["hosts"][0]["job"]
    assert job["kind"] == "serving" and job["engine_id"] == "vllm", job
    assert not [f for f in engine["findings"] if "front-end" in f["title"]]
