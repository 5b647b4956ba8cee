"""Serving engines' layer-wise NVTX markers are the framework's module structure, and a loop of them with no backward
is forward passes (issue #37 class 2, h37-fwnvtx3).

NVIDIA's forward hooks (``PytHooks``: vLLM ``--enable-layerwise-nvtx-tracing``, SGLang ``--enable-layerwise-nvtx-marker``,
TensorRT-LLM ``LayerwiseNvtxMarker``) push ``str({'Module': '<dotted name>', ...})`` on every module's forward; the
reader names each range by its module (``model.layers.0``, h37-left51).  Main then took them for the program's own
blocks (``user_ranges.program_ranges``): a host-bound layer's idle was "in the program's own range" of a decoder layer.
No name rule can tell them (a user may call a range ``model.layers.0.mlp``): the *text* says who wrote them, so the
reader keeps it per range (``HostRanges.framework``).  And since the hooks fire on forwards only, the top module marked
over many passes with nothing of a backward or an optimizer anywhere is a loop of forward passes: main said "GPU work
of an unknown kind".

By construction (``synthetic.nsysexport.write_layerwise_engine``, from a thread no engine names); no public Nsight
export of these markers is known (SURVEY h37-fwnvtx).
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from synthetic import autograd_nvtx as an
from synthetic import nsysexport as nx
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.frameworks import detect_trace, user_ranges
from tb_gpu_advisor.job.kind import work_kind
from tb_gpu_advisor.runtime.pipeline import analyze_session


def _names(trace, idx) -> set[str]:  # noqa: ANN001
    h = trace.h
    return {h.names[h.name[i]] for i in idx.tolist()}


@pytest.fixture(scope="module")
def engine(tmp_path_factory):  # noqa: ANN001, ANN201
    p = str(tmp_path_factory.mktemp("lw") / "engine.sqlite")
    truth = nx.write_layerwise_engine(p, thread="python", layer_host_ms=0.8)
    return p, truth


def test_hook_markers_are_no_program_range(engine) -> None:  # noqa: ANN001
    trace = read_trace(engine[0])
    own = _names(trace, user_ranges.program_ranges(trace))
    assert not [n for n in own if n == "model" or n.startswith("model.")], own  # main: all 33 modules the program's
    hooked = _names(trace, user_ranges.framework_ranges(trace.ranges))
    assert {"model", "model.layers.0", "model.layers.3.mlp.down_proj"} <= hooked
    # the steps and the job still read them: the model's forward is the engine step
    assert "model" in _names(trace, user_ranges.marked_ranges(trace.ranges))


def test_hooked_forwards_with_no_backward_are_inference(engine) -> None:  # noqa: ANN001
    trace = read_trace(engine[0])
    kind = work_kind(trace, detect_trace(trace))
    assert (kind.kind, kind.confidence) == ("inference", "medium")  # main: unknown, low
    assert "`model` ×12" in kind.evidence and engine[1]["kind"] == "inference"


def test_a_host_bound_layer_is_not_named_the_programs(engine) -> None:  # noqa: ANN001
    p, truth = engine
    host = analyze_session("w", "s", [SimpleNamespace(host="h0", path=p, format="nsys",
                                                      size=os.path.getsize(p))]).to_dict()["hosts"][0]
    for f in host["findings"]:  # main: host-bound "this time lies in the program's own ranges `model` 2.96 ms a step"
        said = f["summary"] + " ".join(str(e) for e in f.get("evidence", []))
        assert "program's own range" not in said and "`model" not in said, f["rule"]
    assert host["job"]["kind"] == "inference"
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth["decode_step_ms"], rel=0.05)  # the steps as before


def test_control_two_forwards_say_no_loop(tmp_path) -> None:  # noqa: ANN001
    """Control: two marked forwards are too few to read a loop from; the kind stays what nothing names."""
    p = str(tmp_path / "two.sqlite")
    nx.write_layerwise_engine(p, thread="python", steps=2)
    trace = read_trace(p)
    assert work_kind(trace, detect_trace(trace)).kind == "unknown"


def test_control_a_users_own_ranges_stay_the_programs(tmp_path) -> None:  # noqa: ANN001
    """Control: a capture with no hook marker has no framework range by text; the user's ``get_batch`` stays the
    program's and the training job keeps its kind."""
    p = str(tmp_path / "meg.sqlite")
    an.write(p, "megatron_shapes", user_range="get_batch")
    trace = read_trace(p)
    assert "get_batch" in _names(trace, user_ranges.program_ranges(trace))
    assert work_kind(trace, detect_trace(trace)).kind == "training"


def test_hook_markers_make_the_framework_pytorch(engine) -> None:  # noqa: ANN001
    """The hooks are ``torch.nn.Module`` forward hooks: a capture they mark is a PyTorch job even where no ATen op or
    kernel name says so (h37-review17).  Main read the hooks as the framework's structure and the job's kind from them,
    yet named the capture "a GPU program with no ML framework": the host-bound fix was the raw CUDA graph API
    (``cudaStreamBeginCapture``) and the cards said "no ML framework in the capture"."""
    p, _ = engine
    trace = read_trace(p)
    assert detect_trace(trace).id == "pytorch"  # main: native
    host = analyze_session("w", "s", [SimpleNamespace(host="h0", path=p, format="nsys",
                                                      size=os.path.getsize(p))]).to_dict()["hosts"][0]
    assert host["capture"]["framework"] == "pytorch"
    bound = next(f for f in host["findings"] if f["rule"] == "unexplained_idle")
    fixes = " ".join(a["text"] + (a.get("snippet") or "") for a in bound["actions"])
    assert "torch" in fixes and "cudaStreamBeginCapture" not in fixes, fixes


def test_control_a_native_programs_own_ranges_stay_native(tmp_path) -> None:  # noqa: ANN001
    """Control: a program's own NVTX ranges around its passes (no hook marker, no ATen) name no framework."""
    p = str(tmp_path / "framed.sqlite")
    nx.write_framed_passes(p)
    trace = read_trace(p)
    assert trace.ranges is not None and trace.ranges.framework is None
    assert detect_trace(trace).id == "native"
