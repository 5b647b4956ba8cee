"""frameworks: which framework wrote a capture, and fixes spelled in that framework's API.

Truth: the real TF captures (V100 TF 2.4, TF 2.21 CPU) are TensorFlow; the
JAX-shaped captures carry jaxlib's ``PjitFunction(...)`` host events.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import re
from types import SimpleNamespace

import pytest

from tb_gpu_advisor.analyze import analyze_host
from tb_gpu_advisor import frameworks
from tb_gpu_advisor.reader import read_timeline
from tb_gpu_advisor.synthetic.jaxcapture import JAX_SCENARIOS, JaxCapture, mlp_train_step

HERE = os.path.dirname(os.path.abspath(__file__))
V100 = os.path.join(HERE, "..", "..", "shared", "profiles", "v100_bert_8gpu_tf24.xplane.pb")
REAL_TF = sorted(glob.glob(os.path.join(HERE, "fixtures", "real", "*.xplane.pb")))
#: TensorFlow spellings that must never reach a JAX user.
TF_API = re.compile(r"\btf\.|tf\.keras|tf\.function|TF_GPU_THREAD|tf\.data|keras", re.I)


def test_detect_framework_from_names():
    detect = lambda names: frameworks.detect(names).id  # noqa: E731
    assert detect(["PjitFunction(train_step)", "jit_train_step:XLA GPU module"]) == "jax"
    assert detect(["FunctionRun", "Iterator::Prefetch"]) == "tensorflow"
    assert detect(["PjitFunction(f)", "__inference_train_function_123"]) == "unknown"  # both
    assert detect(["MemcpyH2D", "volta_sgemm_128x64_nn"]) == "unknown"  # neither
    assert detect([]) == "unknown"


def test_detect_framework_from_metadata_plane_first():
    """JAX writes its versions as `/host:metadata` plane stats: they decide even without a PjitFunction event."""
    assert frameworks.detect(["volta_sgemm_128x64_nn"], ["jax_version", "cuda_version"]).id == "jax"
    assert frameworks.detect(["FunctionRun"], ["cuda_version"]).id == "tensorflow"


@pytest.mark.parametrize("path", REAL_TF + ([V100] if os.path.exists(V100) else []), ids=os.path.basename)
def test_real_tensorflow_captures_are_tensorflow(path):
    assert REAL_TF, "tests/fixtures/real holds the TF 2.21 captures"
    assert frameworks.detect_timeline(read_timeline(path)).id == "tensorflow"


def _jax_fp32_capture(path: str) -> str:
    """fp32 SIMT GEMMs: fires step_gaps, mixed_precision_off, tensor_core_unused and excessive_memcpy."""
    ks = [dataclasses.replace(k, name="ampere_sgemm_128x64_nn", dtype="f32") if k.gemm else k for k in mlp_train_step(4)]
    cap = JaxCapture(seed=1)
    for _ in range(8):
        cap.call(ks)
    cap.finish().write(path)
    return path


def _advice(rep) -> dict[str, str]:
    return {f.rule: " ".join(f"{a.text} {a.snippet or ''}" for a in f.actions) for f in rep.findings}


def test_jax_captures_get_jax_fixes(tmp_path):
    path = _jax_fp32_capture(str(tmp_path / "jaxhost.xplane.pb"))
    rep = analyze_host(SimpleNamespace(host="jaxhost", path=path))
    advice = _advice(rep)
    assert {"step_gaps", "mixed_precision_off", "tensor_core_unused", "excessive_memcpy"} <= set(advice), sorted(advice)
    for rule, text in advice.items():
        assert not TF_API.search(text), (rule, TF_API.search(text).group(0), text)
        assert "jax" in text.lower() or "jnp." in text or "jmp" in text, (rule, text)
    assert "jax_default_matmul_precision" in advice["tensor_core_unused"]
    assert "bfloat16" in advice["mixed_precision_off"]
    assert "jax_transfer_guard" in advice["excessive_memcpy"]


@pytest.mark.parametrize("name", ["jax_raw", "jax_no_steps"])
def test_jax_scenarios_get_jax_fixes(tmp_path, name):
    path = str(JAX_SCENARIOS[name]().write(tmp_path)[0])
    rep = analyze_host(SimpleNamespace(host="jaxhost", path=path))
    advice = _advice(rep)
    assert advice, "each JAX scenario fires at least one finding"
    for rule, text in advice.items():
        assert not TF_API.search(text), (rule, text)
    if name == "jax_no_steps":
        assert "StepTraceAnnotation" in advice["capture_quality"]


def test_tensorflow_captures_keep_tensorflow_fixes():
    demo = os.path.join(HERE, "..", "demo_logs", "fp32_no_tensor_cores")
    path = glob.glob(os.path.join(demo, "plugins", "profile", "*", "*.xplane.pb"))[0]
    advice = _advice(analyze_host(SimpleNamespace(host="worker0", path=path)))
    assert "set_global_policy('mixed_float16')" in advice["tensor_core_unused"]
    assert not any("jax" in text.lower() for text in advice.values())


@pytest.mark.parametrize("name, rule", [
    ("multi_gpu_gpu0_oversubscribed", "gpu_imbalance"),
    ("multi_gpu_launch_skew", "launch_skew"),
    ("multi_gpu_sequential", "sequential_gpus"),
    ("multi_gpu_extra_allreduce", "allreduce_extra"),
    ("launch_bound", "launch_bound"),
])
def test_multi_gpu_and_launch_rules_have_jax_spellings(tmp_path, name, rule):
    """No multi-GPU JAX capture exists in the corpus: the TF scenario's metrics, marked as written by JAX, must
    get JAX fixes from the same rule (and TF fixes unmarked) -- the rule's advice follows the framework."""
    from tb_gpu_advisor import rules
    from tb_gpu_advisor.metrics.compute import compute_host_metrics
    from tb_gpu_advisor.synthetic import scenarios

    path = scenarios.SCENARIOS[name]().write(tmp_path)[0]
    m, _ = compute_host_metrics(read_timeline(str(path)))
    assert m.capture.framework == "tensorflow"
    tf_text = {f.rule: " ".join(f"{a.text} {a.snippet or ''}" for a in f.actions) for f in rules.evaluate(m)}
    assert rule in tf_text and "jax" not in tf_text[rule].lower()
    m.capture.framework = "jax"
    jax_text = {f.rule: " ".join(f"{a.text} {a.snippet or ''}" for a in f.actions) for f in rules.evaluate(m)}
    assert rule in jax_text
    assert not TF_API.search(jax_text[rule]), jax_text[rule]
    assert "jax" in jax_text[rule] and "strategy" not in jax_text[rule]
