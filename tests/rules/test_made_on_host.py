"""A tensor made on the CPU by an op that creates it from its arguments alone is told to be made on the GPU (survey
h37-survey11: CUDA MODE lecture 1's ``torch.square(torch.randn(10000, 10000).cuda())`` on an RTX 3080 spent 654 ms
of each 742 ms step in a CPU ``aten::randn``; the report named `model_inference`, read the time as gaps between steps
and told it to pin a DataLoader's batches).  Truth by construction (``synthetic.torchtrace``): ``randn_on_host``
makes each step's input with a 30 ms CPU ``aten::randn`` (the CPU tensor's ``aten::empty`` inside it, as PyTorch
records one) before the step's first launch -- input the step makes itself; ``randn_next_input`` makes the next
step's input after its launch -- host work between the GPU's bursts; ``serving_decode``'s gaps and ``input_bound``'s
DataLoader wait are of other kinds and get no such fix."""

from __future__ import annotations

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.frameworks.pytorch import is_creation_op
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics

MADE = "Make the tensor on the GPU: `aten::randn` ran on the CPU for 30.0 ms of each step"


def _findings(tmp_path, name: str) -> dict:
    path = tt.write_run(str(tmp_path), name, steps=6, run=name)[0]
    return {f.rule: f for f in evaluate(host_metrics(read_trace(str(path))))}


def test_input_the_step_makes_on_the_cpu_is_input_wait_named_by_its_op(tmp_path):
    """The ``aten::empty`` inside the CPU ``randn`` is no dispatch of GPU work: the step's first launch is its copy,
    so the 30 ms before it is input wait, and the op is named instead of an untraced loader."""
    f = _findings(tmp_path, "randn_on_host")["input_bound"]
    assert f.metric.detail["input_wait_ms"] == pytest.approx(tt.RANDN_CPU_MS, rel=0.02)
    assert "`aten::randn` 30.0 ms -- the step makes its input itself" in f.summary
    assert "untraced loader" not in f.summary
    assert f.actions[0].text.startswith(MADE) and "device='cuda'" in f.actions[0].snippet


def test_an_op_inside_the_cpu_randn_after_its_normal_returned_is_no_dispatch(tmp_path):
    """h37-probe50c: computing ops nest (``aten::randn`` > ``aten::normal_``); an ``aten::empty`` inside the ``randn``
    after its ``normal_`` returned read as outside both (the latest-starting computing op had ended), a dispatch op
    whose start cut each step's input wait 300 us short of the host's computing: BASE 29.66 ms of the twin's 29.96."""
    twin = _findings(tmp_path / "twin", "randn_on_host")["input_bound"].metric.detail["input_wait_ms"]
    path = tt.write_run(str(tmp_path), tt.randn_inner_op_after(300.0), steps=6, run="after")[0]
    f = {f.rule: f for f in evaluate(host_metrics(read_trace(str(path))))}["input_bound"]
    assert f.metric.detail["input_wait_ms"] == pytest.approx(twin, abs=0.005)
    assert f.metric.detail["input_wait_ms"] == pytest.approx(tt.RANDN_CPU_MS, rel=0.005)
    assert "`aten::randn` 30.0 ms -- the step makes its input itself" in f.summary


def test_the_next_input_made_between_the_gpus_bursts_is_a_gap_with_the_same_fix(tmp_path):
    fs = _findings(tmp_path, "randn_next_input")
    assert "input_bound" not in fs
    f = fs["step_gaps"]
    assert "`aten::randn` 30.0 ms" in f.summary
    assert f.actions[0].text.startswith(MADE)


@pytest.mark.parametrize("name, rule", [("serving_decode", "step_gaps"), ("input_bound", "input_bound")])
def test_other_host_work_and_a_loaders_wait_get_no_such_fix(tmp_path, name, rule):
    f = _findings(tmp_path, name)[rule]
    assert not any(a.text.startswith("Make the tensor on the GPU") for a in f.actions)


@pytest.mark.parametrize("name, made", [("aten::randn", True), ("aten::arange", True), ("aten::zeros", True),
                                        ("aten::randn_like", False), ("aten::copy_", False), ("aten::mm", False),
                                        ("aten::empty", False)])
def test_creation_ops_are_the_ones_made_from_their_arguments_alone(name, made):
    assert is_creation_op(name) is made
