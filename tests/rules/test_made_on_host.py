"""A tensor made on the CPU by an op that creates it from its arguments alone is told to be made on the GPU (survey
h37-survey11: CUDA MODE lecture 1's ``torch.square(torch.randn(10000, 10000).cuda())`` on an RTX 3080 spent 654 ms
of each 742 ms step in a CPU ``aten::randn``; the report named no op and told it to pin a DataLoader's batches).
Truth by construction: ``synthetic.torchtrace``'s ``randn_on_host`` fills the GPU's idle between steps with a 30 ms
CPU ``aten::randn`` (an ``aten::empty`` inside it, as PyTorch records one); ``serving_decode``'s gaps are host work
of another kind (its input preparation), which gets no such fix."""

from __future__ import annotations

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.frameworks.pytorch import is_creation_op
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics


def _gap_finding(tmp_path, name: str):
    path = tt.write_run(str(tmp_path), name, steps=6, run=name)[0]
    (f,) = [f for f in evaluate(host_metrics(read_trace(str(path)))) if f.rule == "step_gaps"]
    return f


def test_the_cpu_randn_filling_the_gaps_is_told_to_run_on_the_gpu_first(tmp_path):
    f = _gap_finding(tmp_path, "randn_on_host")
    assert "`aten::randn`" in f.summary
    first = f.actions[0]
    assert first.text.startswith("Make the tensor on the GPU: `aten::randn` ran on the CPU for 30.0 ms"), first.text
    assert "device='cuda'" in first.snippet


def test_gaps_of_other_host_work_get_no_such_fix(tmp_path):
    f = _gap_finding(tmp_path, "serving_decode")
    assert not any(a.text.startswith("Make the tensor on the GPU") for a in f.actions)


@pytest.mark.parametrize("name, made", [("aten::randn", True), ("aten::arange", True), ("aten::zeros", True),
                                        ("aten::randn_like", False), ("aten::copy_", False), ("aten::mm", False),
                                        ("aten::empty", False)])
def test_creation_ops_are_the_ones_made_from_their_arguments_alone(name, made):
    assert is_creation_op(name) is made
