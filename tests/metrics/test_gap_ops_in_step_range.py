"""A range around each step's whole body names no part of the GPU's idle time: the ops inside it do (survey
h37-survey11: CUDA MODE lecture 1's profiler script, ``with record_function("model_inference"):`` around
``torch.square(torch.randn(10000, 10000).cuda())``, on an RTX 3080; its 654 ms CPU ``aten::randn`` a step was
reported as "in each gap: `model_inference` 654.1 ms").  Truth by construction: ``synthetic.torchtrace``'s
``cpu_input_annotated`` makes each step's input with a 10 ms ``aten::randn`` of a CPU tensor inside one
``record_function`` range spanning the step body; ``cpu_input`` is the same without the range."""

from __future__ import annotations

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics


def _gap_ops(tmp_path, name: str) -> dict[str, float]:
    path = tt.write_run(str(tmp_path), name, steps=6, run=name)[0]
    return dict(host_metrics(read_trace(str(path))).gaps.top_ops)


@pytest.mark.parametrize("name", ["cpu_input_annotated", "cpu_input"])
def test_the_gaps_name_the_host_op_the_gpu_waits_for_whatever_range_spans_the_step(tmp_path, name):
    ops = _gap_ops(tmp_path, name)
    assert tt.STEP_BODY_RANGE not in ops, ops
    assert max(ops, key=ops.get) == "aten::randn", ops
    # the randn is built to fill the gap, less the host's few us around it
    assert ops["aten::randn"] == pytest.approx(tt.CPU_INPUT_MS, rel=0.05), ops
