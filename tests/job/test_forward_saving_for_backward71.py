"""A forward that saves tensors *for* a backward is no backward: 100 ``torch.compile``d forwards with autograd on read
as inference, not training (h37-hunt71b; issue #37 item 6).

The real capture, kept (BSD-3, redacted: an Inductor cache folder's user name): pytorch/ao PR #468's ``trace.json``
@2ababfe7 -- ``benchmarks/benchmark_intx.py`` ``profile_intx()``: a compiled fp16 ``nn.Linear(512, 512)`` called 100
times on one [1, 512] input under ``record_function("model_inference")``, ``with_stack=True``, on a GTX 1650; no
backward, no optimizer.  Each call's AOT-autograd ``CompiledFunction`` forward records the Python frame
``torch/autograd/function.py(34): save_for_backward`` (autograd on: the forward keeps what a backward would need).
Main ea5a2537 read it "training steps [high confidence: work only training does ...: `save_for_backward`]": the
framework's training pattern's ``_backward\\b`` matched the frame's name.  Controls (pass on both): backward work's
own names -- ATen's backward ops, FSDP2's ``FSDP::pre_backward``, autograd's nodes -- stay training's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tb_gpu_advisor.frameworks import pytorch
from tests.support.cli_report import cli_report

_RUN = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "compiled_linear_gtx1650_no_backward"


def test_compiled_forwards_saving_for_a_backward_that_never_runs_are_inference():
    job = cli_report(_RUN)["hosts"][0]["job"]
    assert job["kind"] == "inference", job
    assert "save_for_backward" not in job["kind_evidence"] and "training" not in job["kind_evidence"], job


@pytest.mark.parametrize("name", ["torch/autograd/function.py(34): save_for_backward",
                                  "torch/autograd/function.py(40): _save_for_backward"])
def test_a_frame_that_saves_for_a_backward_is_no_training_event(name):
    assert not pytorch.is_training_event(name)


@pytest.mark.parametrize("name", ["aten::convolution_backward", "aten::_flash_attention_backward",
                                  "FSDP::pre_backward",
                                  "autograd::engine::evaluate_function: AddmmBackward0", "CompiledFunctionBackward",
                                  "Optimizer.step#AdamW.step"])
def test_control_backward_work_stays_training(name):
    assert pytorch.is_training_event(name)
