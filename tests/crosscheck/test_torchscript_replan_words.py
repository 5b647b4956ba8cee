"""TorchScript's re-planning for each new input shape, named as the cold start's cause with PyTorch's own fixes
(issue #37, class 4: advice fits what the report knows; h37-jitwords, h37-jitcompile's *Left* 1).

``tests/fixtures/wild/torchscript_fallback_a100_gnn`` (see ``test_torchscript_fallback_real.py``): a GNN's forward
under PyTorch 1.8-1.10 whose one pass is 822.6 ms of the profiling executor planning fallback graphs (6 silences in
``fallback_function``, no op run).  The executor plans again for each input shape its guards have not seen, down to
its bailout depth, so a model whose node count changes every batch pays it again for each new shape: main said only
"Profile after warm-up", with the saving "the steady state pays none of the one-time costs".  The fixes that remove the
cause are fewer shapes (pad / bucket the sizes) and, from PyTorch 1.11 on, ``torch.jit.set_fusion_strategy`` with
dynamic shapes -- which a 1.8-1.10 trace is not told of.

Controls: cold starts with no compile gap (``nvfuser_h200_first_call``: nvFuser's compile ranges and module loading;
``cold_a100_alexnet``: module loading) keep their words and fixes.
"""

from __future__ import annotations

from tests.support.paths import FIXTURES
from tests.support.run_report import doc_host, gzip_json, one_file_host
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.model.schema import Action

TRACE = FIXTURES / "wild" / "torchscript_fallback_a100_gnn" / "thetagpu11_3733800.1646347140914.pt.trace.json.gz"


def _cold(host: dict) -> dict:
    (f,) = [f for f in host["findings"] if f["rule"] == "cold_start"]
    return f


def _code(f: dict) -> str:
    return "\n".join((a.get("snippet") or "") for a in f["actions"])


def test_the_cold_start_names_the_per_shape_replanning_and_its_fix():
    host = one_file_host(str(TRACE), "kineto")
    f = _cold(host)
    assert "bailout depth" in f["summary"] and "each new shape" in f["summary"], f["summary"]
    assert f["actions"][0]["text"].startswith("Pad or bucket"), [a["text"] for a in f["actions"]]
    assert "F.pad(" in f["actions"][0]["snippet"]
    # the generic fix stays: the executor stops re-planning once its bailout depth is spent
    assert any("Skip the first calls" in a["text"] for a in f["actions"]), [a["text"] for a in f["actions"]]
    # PyTorch 1.8-1.10 (the old categories): no torch.jit.set_fusion_strategy, which came with 1.11
    assert "set_fusion_strategy" not in _code(f)
    assert "padded to a few buckets" in f["saving"]["assumption"], f["saving"]


def test_a_trace_of_pytorch_1_13_is_told_the_dynamic_fusion_strategy(tmp_path):
    """The same silences under a stated PyTorch 1.13: the fusion strategy is offered after the padding."""
    doc = gzip_json(TRACE)
    doc["metadata"] = {"torch_env_info": {"torch_version": "1.13.1"}}
    f = _cold(doc_host(tmp_path, doc))
    texts = [a["text"] for a in f["actions"]]
    assert texts[0].startswith("Pad or bucket"), texts
    assert "torch.jit.set_fusion_strategy([('STATIC', 2), ('DYNAMIC', 10)])" in _code(f), texts


def test_the_fusion_strategy_is_fitted_to_the_version():
    """``Framework.fit``: 1.11 on keeps it; before 1.11, or a trace that does not date PyTorch, leaves it out."""
    a = Action("x", "torch.jit.set_fusion_strategy([('DYNAMIC', 10)])", "python")
    fw = pytorch.FRAMEWORK
    for vendor in ("NVIDIA", "AMD", "Intel"):
        assert fw.fit(a, vendor, (1, 11)) == a
        assert fw.fit(a, vendor, (1, 10)) is None
        assert fw.fit(a, vendor, None) is None


def test_a_cold_start_without_compile_gaps_keeps_its_words():
    """Controls: compilation that is no per-shape re-planning (nvFuser's first call: named compile ranges, module
    loading) and a window-only cold start (``cold_a100_alexnet``: module loading outside the pass) keep main's words
    and fixes -- no per-shape cause, no padding fix, main's saving assumption."""
    (nsys,) = sorted((FIXTURES / "wild" / "nvfuser_h200_first_call").glob("*.sqlite"))
    f = _cold(one_file_host(str(nsys), "nsys"))
    assert f["saving"]["assumption"] == ("the steady state pays none of the one-time costs (module loading, library "
                                         "start-up, compilation)"), f["saving"]
    (kineto,) = sorted((FIXTURES / "wild" / "cold_a100_alexnet").glob("*.json.gz"))
    g = _cold(one_file_host(str(kineto), "kineto"))
    for x in (f, g):
        assert "bailout" not in x["summary"], x["summary"]
        assert not any(a["text"].startswith("Pad or bucket") for a in x["actions"]), x["actions"]
