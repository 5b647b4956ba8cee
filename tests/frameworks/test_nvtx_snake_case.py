"""A snake_case range name says what it says (survey h37-survey19).

The real case: amacharla15/gpu-profiling-cuda-kernels ``profiling/results/resnet50_nsys.sqlite`` @3f61024 (no
licence: read, not kept; ``tests/fixtures/wild/SURVEY.md``): a ResNet-50 fp32 inference under ``no_grad`` whose only
NVTX range, ``resnet50_inference``, holds its five measured passes.  The inference pattern ended its words at ``\\b``,
which ``_`` does not make, so main read the job as "GPU work of an unknown kind" and cut it into 17 GPU bursts of
2.85 ms.  Words now end at any non-letter.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor.frameworks import nvtx


@pytest.mark.parametrize("name", ["resnet50_inference", "run_inference_loop", "llama_prefill", "bert_generate",
                                  "t5_generation", "model_predict", "decode_step"])
def test_snake_case_names_that_say_inference_say_it(name: str) -> None:
    assert nvtx.is_inference_range(name)


@pytest.mark.parametrize("name", ["inferred_shapes", "random_data_generation", "synthetic_inputs_generation",
                                  "model_inference_backward", "prefilled_cache_init"])
def test_other_words_and_training_or_data_names_still_say_no_inference(name: str) -> None:
    """Controls: a longer word (``inferred``, ``prefilled``), making the program's data, or a training word."""
    assert not nvtx.is_inference_range(name)
