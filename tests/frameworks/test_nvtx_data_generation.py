"""A range named after making the program's own data names no inference (survey h37-survey10).

The real cases (quasiben/nvtx-examples ``cupy.sqlite`` and ``workflow.sqlite`` @fd66d32, no licence, so not kept:
``tests/fixtures/wild/SURVEY.md``, "Survey h37-survey10"): CuPy scripts whose NVTX ranges are ``data generation``
(``cupy.random.random`` arrays), ``compute`` and ``data generation w pool``; its multiprocessing script's workers open
``mock generate data``.  Main read "generation" as a model generating its output and called both CuPy jobs
"inference (forward passes) [medium confidence: the user's NVTX ranges name inference: `data generation`]".
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor.frameworks import nvtx


@pytest.mark.parametrize("name", ["data generation", "data generation w pool", "mock generate data",
                                  "generate random inputs", "synthetic_data_generation", "Generate dataset"])
def test_making_the_program_s_data_names_no_inference(name: str) -> None:
    assert not nvtx.is_inference_range(name)


@pytest.mark.parametrize("name", ["generate", "text generation", "model.generate", "Generation step", "inference"])
def test_a_model_generating_its_output_still_names_inference(name: str) -> None:
    """Control: generation of a model's output (text, tokens) is inference, as before."""
    assert nvtx.is_inference_range(name)
