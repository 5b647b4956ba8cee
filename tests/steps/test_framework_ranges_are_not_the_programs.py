"""A range a framework writes around its own code is its structure, not a region the user named (issue #37 class 2,
h37-fwnvtx2).

Megatron-core's ``--nvtx-ranges`` names each range after its caller (``megatron/core/utils.py``: ``nvtx_range_push``
without a message pushes ``<module>.<function>[.<suffix>]``), once a layer:
``megatron.core.transformer.transformer_layer._forward_attention.self_attention``.  Main counted them among the
program's own ranges, so on a host-bound Megatron job (``synthetic.autograd_nvtx`` ``megatron`` with 1.5 ms of host
work in each layer's attention range, truth by construction) the host-bound finding said "this time lies in the
program's own ranges `megatron.core.transformer.transformer_layer._forward_attention.self_attention` 7.30 ms a step".
They are Megatron's (``frameworks.pytorch.is_framework_range``), as are Megatron-FSDP's ``MFSDP <module> forward`` and
Lightning's ``[pl][...]`` records; the user's own ranges (here ``get_batch``) stay the program's.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from synthetic import autograd_nvtx as an
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.frameworks import nvtx, user_ranges
from tb_gpu_advisor.runtime.pipeline import analyze_session


@pytest.fixture(scope="module", params=["megatron", "megatron_shapes"])
def job(request, tmp_path_factory):
    p = str(tmp_path_factory.mktemp("fwr") / f"{request.param}.sqlite")
    an.write(p, request.param, host_us=1500, user_range="get_batch")
    host = SimpleNamespace(host="h0", path=p, format="nsys", size=os.path.getsize(p))
    return p, analyze_session("w", "s", [host]).to_dict()["hosts"][0]


def test_megatrons_layer_ranges_are_not_named_the_programs(job):
    _, host = job
    f = next(f for f in host["findings"] if f["rule"] == "unexplained_idle")  # host-bound: 1.5 ms of Python a layer
    assert f["severity"] == "warning"
    # main: "this time lies in the program's own ranges `megatron.core.transformer...self_attention` 7.30 ms a step"
    assert "megatron.core" not in f["summary"], f["summary"]
    for g in host["findings"]:
        assert "megatron.core" not in g["summary"] + " ".join(str(e) for e in g.get("evidence", [])), g["rule"]


def test_the_users_own_range_stays_the_programs(job):
    """Control: the program's ``get_batch`` is its own range; Megatron's are not, but the job still reads them."""
    p, host = job
    trace = read_trace(p)
    h = trace.h
    own = {h.names[h.name[i]] for i in user_ranges.program_ranges(trace).tolist()}
    assert "get_batch" in own
    assert not [n for n in own if n.startswith("megatron.")], own
    marked = {h.names[h.name[i]] for i in user_ranges.marked_ranges(trace.ranges).tolist()}
    assert any(n.startswith(an.MEGATRON_LAYER) for n in marked)  # evidence of what ran, as before
    assert host["steps"]["found"] == 12 and host["job"]["kind"] == "training"


@pytest.mark.parametrize("name", [
    "megatron.core.transformer.transformer_layer._forward_attention.self_attention",
    "megatron.core.transformer.mlp.forward.linear_fc1", "megatron.core.fusions.fused_bias_swiglu.forward",
    "MFSDP decoder.layers.3 backward", "[pl][profile]run_training_batch",
    "[pl][module]torch.nn.modules.linear.Linear: layers.0",
    "DeepSpeedEngine.forward", "DeepSpeedZeroOptimizer_Stage3.step"])
def test_framework_written_names(name):
    assert nvtx.is_framework_range(name)


@pytest.mark.parametrize("name", ["get_data", "get_batch", "train_step", "forward", "megatron", "torch.compile",
                                  "Trainer.step", "model.layers.0.mlp", "resnet50_inference"])
def test_user_names_stay_the_users(name):
    """Controls: a message the program passes (Megatron's ``nvtx_range_push("get_data")``), a user's dotted name, a
    user's own class's method (``Trainer.step``) are no framework-written range.  DeepSpeed's ``DeepSpeedEngine.forward``
    is (h37-nvtx22: its ``instrument_w_nvtx`` qualnames, tests/job/test_library_nvtx.py); the steps still read it."""
    assert not nvtx.is_framework_range(name)
