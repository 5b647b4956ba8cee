"""The NVTX the libraries people use write, read for the job and its steps (issue #37 class 2, h37-nvtxvocab).

Each case is an Nsight export built with ``synthetic.nsysexport`` around the range names its writer pushes, read from
the writer's own source (tests/fixtures/wild/SURVEY.md, "Session 21: h37-nvtxvocab"), with no other evidence of the
job: no ATen op range (no ``emit_nvtx``), generic GEMM kernels, so the names alone must say the kind.  Truth by
construction: 8 iterations of the template's period, the job's kind.

* SGLang under ``SGLANG_SCHEDULER_ENABLE_NVTX=1`` (sgl-project/sglang ``python/sglang/srt/utils/nvtx_utils.py``): one
  range per phase of its scheduler's event loop, ``scheduler.recv_requests`` ... ``scheduler.process_batch_result``.
  Main read no engine: "GPU work of an unknown kind";
* a program's short words for the passes (``torch.cuda.nvtx.range_push("BWD"); y.backward(dy)``; ``fwd`` / ``bwd`` /
  ``opt``), an ``optim_step``, a gradient clipping: main read "unknown" -- only ``backward`` and ``optimizer`` were
  training's words;
* a numerical method's backward direction (``backward FFT``, ``fft_bwd``) is no backward pass: main read "backward
  FFT" as training.

Controls, read right on main and unchanged: vLLM's ``VLLM_NVTX_SCOPES_FOR_PROFILING`` scopes (``gpu_model_runner:
forward`` ...: vLLM), DeepSpeed's ``instrument_w_nvtx`` in its own NVTX domain ``DeepSpeed`` (deepspeedai/DeepSpeed
``deepspeed/utils/nvtx.py`` since #7988: ``DeepSpeedEngine.forward`` / ``backward``,
``DeepSpeedZeroOptimizer_Stage3.step``), TensorRT-LLM's executor ranges in its domain ``TensorRT-LLM``.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.frameworks import engines, nvtx
from tests.support.cli_report import first_host

#: Only the ranges speak: no ATen op ranges, no user step range.
_BARE = dict(step_range=None, autograd_nvtx=False)
CASES = {
    # sgl-project/sglang python/sglang/srt/utils/nvtx_utils.py (_NVTX_COLOR_MAP): the overlap event loop's phases
    "sglang": dict(extra_ranges=("scheduler.recv_requests", "scheduler.process_input_requests",
                                 "scheduler.get_next_batch_to_run", "scheduler.run_batch",
                                 "scheduler.process_batch_result"), range_starts=(1, 2, 3, 8)),
    "fwd_bwd_opt": dict(extra_ranges=("data", "fwd", "bwd", "opt"), range_starts=(1, 4, 8)),
    "FWD_BWD": dict(extra_ranges=("FWD", "BWD")),
    "optim_step": dict(extra_ranges=("forward", "loss", "optim_step")),
    "clip_grad": dict(extra_ranges=("forward", "loss", "clip_grad_norm")),
    "backward_fft": dict(extra_ranges=("forward FFT", "pointwise", "backward FFT")),
    "fft_bwd": dict(extra_ranges=("fft_fwd", "pointwise", "fft_bwd")),
    # controls
    # vllm-project/vllm vllm/v1/worker/gpu_model_runner.py (record_function_or_nullcontext -> nvtx.annotate)
    "vllm": dict(extra_ranges=("gpu_model_runner: preprocess", "gpu_model_runner: forward",
                               "gpu_model_runner: postprocess", "gpu_model_runner: sample",
                               "gpu_model_runner: bookkeep"), range_starts=(1, 6, 7, 8)),
    # deepspeedai/DeepSpeed deepspeed/utils/nvtx.py (instrument_w_nvtx: func.__qualname__ in domain "DeepSpeed")
    "deepspeed_domain": dict(extra_ranges=("DeepSpeedEngine.forward", "DeepSpeedEngine.backward",
                                           "DeepSpeedZeroOptimizer_Stage3.step"), range_domain="DeepSpeed"),
    # NVIDIA/TensorRT-LLM tensorrt_llm/_utils.py (nvtx_range(..., domain="TensorRT-LLM")), its executor's methods
    "trtllm": dict(extra_ranges=("_fetch_new_requests", "_schedule", "_forward_step", "_sample_async",
                                 "_update_requests"), range_starts=(1, 2, 8, 9), range_domain="TensorRT-LLM"),
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Each case's first host as ``report PATH`` reads it, with the export's truth."""
    d = tmp_path_factory.mktemp("nvtx_vocabularies")
    paths = {name: d / f"{name}.sqlite" for name in CASES}
    truths = {name: nx.write(str(paths[name]), nx.NsysJob(steps=8, ops=9, **_BARE, **kw)) for name, kw in CASES.items()}
    return {name: (first_host(paths[name]), truths[name]) for name in CASES}


def _steps_right(host: dict, truth: nx.Truth) -> None:
    """Every iteration read, each its period long."""
    assert host["steps"]["found"] == truth.steps
    steady = [r["step_ms"] for r in host["step_rows"]]
    assert steady and all(abs(ms - truth.step_ms) < 0.01 for ms in steady)


def test_sglangs_scheduler_ranges_name_the_engine(reports):
    host, truth = reports["sglang"]
    job = host["job"]
    assert job["kind"] == "serving"  # main: unknown, "no backward pass, optimizer step or serving engine is named"
    assert "SGLang" in job["kind_evidence"] and "scheduler." in job["kind_evidence"]
    _steps_right(host, truth)


@pytest.mark.parametrize(("case", "word"), [("fwd_bwd_opt", "`bwd`"), ("FWD_BWD", "`BWD`"),
                                            ("optim_step", "`optim_step`"), ("clip_grad", "`clip_grad_norm`")])
def test_a_programs_short_words_for_training_say_training(reports, case, word):
    host, truth = reports[case]
    assert host["job"]["kind"] == "training"  # main: unknown
    assert word in host["job"]["kind_evidence"]
    _steps_right(host, truth)


@pytest.mark.parametrize("case", ["backward_fft", "fft_bwd"])
def test_a_numerical_methods_backward_direction_is_no_training(reports, case):
    host, truth = reports[case]
    assert host["job"]["kind"] != "training"  # main: "backward FFT" read as a backward pass (high)
    _steps_right(host, truth)


@pytest.mark.parametrize(("case", "kind", "said"), [("vllm", "serving", "vLLM"), ("deepspeed_domain", "training",
                                                                                   "DeepSpeedEngine.backward"),
                                                    ("trtllm", "serving", "TensorRT-LLM")])
def test_controls_read_as_before(reports, case, kind, said):
    host, truth = reports[case]
    assert host["job"]["kind"] == kind and said in host["job"]["kind_evidence"]
    _steps_right(host, truth)


@pytest.mark.parametrize(("name", "training"), [
    ("bwd", True), ("BWD", True), ("fwd_bwd", True), ("attn_bwd", True), ("optim_step", True), ("opt.step", True),
    ("clip_grad_norm", True), ("grad_clip", True),
    ("transformer_engine._Linear.backward", True), ("Transformer backward", True),  # a transformer is no transform
    ("fft_bwd", False), ("backward FFT", False), ("bwd_substitution", False), ("backward Euler", False),
    ("fwd", False), ("bwdata", False), ("forward", False),
])
def test_training_words(name, training):
    assert nvtx.is_training_range(name) is training


def test_sglang_scheduler_names_are_sglangs_only():
    found = engines.find(["scheduler.get_next_batch_to_run"], [])
    assert found is not None and found[0].id == "sglang"
    # a program's own scheduler is not SGLang's: only its loop's method names are
    assert engines.find(["scheduler.step", "lr_scheduler.step", "schedule"], []) is None
