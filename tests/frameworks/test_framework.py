"""frameworks: which framework wrote a capture, and fixes spelled in that framework's API.

Truth: the real TF captures (V100 TF 2.4, TF 2.21 CPU) are TensorFlow; the
JAX-shaped captures carry jaxlib's ``PjitFunction(...)`` host events.
"""

from __future__ import annotations

import glob
import os
import re
from types import SimpleNamespace

import pytest

from synthetic.jaxcapture import JAX_SCENARIOS
from tb_gpu_advisor import frameworks
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import DEMO_LOGS, FIXTURES, REPO, SHARED_PROFILES

V100 = str(SHARED_PROFILES / "v100_bert_8gpu_tf24.xplane.pb")
REAL_TF = sorted(glob.glob(str(FIXTURES / "real" / "*.xplane.pb")))
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
    assert frameworks.detect_trace(read_trace(path)).id == "tensorflow"


def _advice(rep) -> dict[str, str]:
    return {f.rule: " ".join(f"{a.text} {a.snippet or ''}" for a in f.actions) for f in rep.findings}


def _scenario_advice(tmp_path, name: str) -> dict[str, str]:
    path = str(JAX_SCENARIOS[name]().write(tmp_path / name)[0])
    return _advice(analyze_host(SimpleNamespace(host="jaxhost", path=path)))


@pytest.mark.parametrize("name, rule, must", [
    # fp32 GEMMs on an H100 (sm90): bf16 compute, and TF32 at JAX's default precision (Ampere and newer)
    ("jax_fp32_highest", "tensor_core_unused", "jax_default_matmul_precision"),
    ("jax_fp32_highest", "mixed_precision_off", "bfloat16"),
    # host data loading inside the step: JAX loading/prefetch advice, never tf.data
    ("jax_input_bound", "input_bound", "jax.device_put"),
    # op-by-op JAX: jit the step
    ("jax_eager_ops", "launch_bound", "@jax.jit"),
    # kernels inside command buffers: how to get per-op names
    ("jax_healthy_bf16", "capture_quality", "--xla_gpu_enable_command_buffer="),
])
def test_jax_captures_get_jax_fixes(tmp_path, name, rule, must):
    advice = _scenario_advice(tmp_path, name)
    assert rule in advice, sorted(advice)
    assert must in advice[rule], advice[rule]
    for r, text in advice.items():
        assert not TF_API.search(text), (r, TF_API.search(text).group(0), text)


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
    demo = str(DEMO_LOGS / "fp32_no_tensor_cores")
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
    ("input_bound", "input_bound"),
    ("step_gaps_callbacks", "step_gaps"),
    ("host_placement", "host_op_placement"),
    ("eager", "eager_execution"),
])
def test_multi_gpu_and_launch_rules_have_jax_spellings(tmp_path, name, rule):
    """No multi-GPU JAX capture exists in the corpus: the TF scenario's metrics, marked as written by JAX, must
    get JAX fixes from the same rule (and TF fixes unmarked) -- the rule's advice follows the framework."""
    from synthetic import scenarios
    from tb_gpu_advisor import rules
    from tb_gpu_advisor.runtime.pipeline import host_metrics

    path = scenarios.SCENARIOS[name]().write(tmp_path)[0]
    m = host_metrics(read_trace(str(path)))
    assert m.capture.framework == "tensorflow"
    tf_text = {f.rule: " ".join(f"{a.text} {a.snippet or ''}" for a in f.actions) for f in rules.evaluate(m)}
    assert rule in tf_text and "jax" not in tf_text[rule].lower()
    m.capture.framework = "jax"
    jax_text = {f.rule: " ".join(f"{a.text} {a.snippet or ''}" for a in f.actions) for f in rules.evaluate(m)}
    if not frameworks.get("jax").applies(rule):
        assert rule not in jax_text  # JAX has no such concept (eager op events): the rule is silent
        return
    assert rule in jax_text, sorted(jax_text)
    assert not TF_API.search(jax_text[rule]), jax_text[rule]
    assert "jax" in jax_text[rule] and "strategy" not in jax_text[rule]


def test_no_tf32_advice_before_ampere():
    """TF32 Tensor Cores exist from Ampere (sm80): the V100 (sm70) fp32 demo gets mixed precision, not TF32."""
    demo = str(DEMO_LOGS / "fp32_no_tensor_cores")
    path = glob.glob(os.path.join(demo, "plugins", "profile", "*", "*.xplane.pb"))[0]
    rep = analyze_host(SimpleNamespace(host="worker0", path=path))
    assert {g.compute_capability for g in rep.gpus if g.kernel_count} == {"7.0"}
    advice = _advice(rep)
    assert "tensor_core_unused" in advice
    assert not re.search(r"TF32|tensor_float_32|tensorfloat32", " ".join(advice.values()), re.I)


#: Framework APIs and words a rule must not spell itself (they belong in tb_gpu_advisor/frameworks/).
FRAMEWORK_WORDS = re.compile(r"\btf\.|\bTF_|TensorFlow|keras|\bjax\b|jnp\.|PjitFunction|IteratorGetNext|"
                             r"jit_compile|XLA_FLAGS|torch|PyTorch", re.I)


def _string_literals(path: str):
    """(line, text) of a module's string constants, docstrings excepted (they explain; they are not shown)."""
    import ast

    tree = ast.parse(open(path, encoding="utf-8").read())
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            yield n.lineno, n.value


def test_rules_hold_no_framework_strings():
    """Rules ask the capture's framework module for titles, words and fixes.  The thresholds table is exempt: its
    'source' column cites the guide, which is written for TensorFlow."""
    rules_dir = str(REPO / "tb_gpu_advisor" / "rules")
    found = [f"{name}:{line}: {FRAMEWORK_WORDS.search(text).group(0)!r} in {text[:60]!r}"
             for name in sorted(os.listdir(rules_dir)) if name.endswith(".py") and name != "thresholds.py"
             for line, text in _string_literals(os.path.join(rules_dir, name)) if FRAMEWORK_WORDS.search(text)]
    assert not found, "\n".join(found)


def test_every_framework_fills_every_label():
    """A label missing from GENERIC_LABELS would raise at report time; each framework's labels are known keys."""
    for fw in frameworks.REGISTRY.values():
        unknown = [k for k in fw.labels if k not in frameworks.GENERIC_LABELS and not k.startswith("title:")]
        assert not unknown, (fw.id, unknown)


def test_tiny_jitted_steps_are_launch_bound_at_step_level(tmp_path):
    """One jitted call per step running three ~1 us kernels (constructed): the host's dispatch of each call costs far
    more than its GPU work, so the step as a whole is launch-bound.  Fusing kernels cannot help; several steps per
    call (lax.scan) or a larger batch does -- and the between-step gap, being that dispatch, is not a second cause."""
    from synthetic.jaxcapture import EAGER_OPS, JaxCapture, JaxScenario, _async_loop, eager_op

    cap = JaxCapture(seed=0, step_annotation=True, command_buffers=False, module="jit_tiny_step", function="tiny_step")
    fn, kernel, op, _ = EAGER_OPS[0]
    _async_loop(cap, eager_op(fn, kernel, op) * 3, 30)
    path = JaxScenario("tiny_jit", cap.finish(), cap.truth("tiny_jit", "3 tiny kernels per jitted step",
                                                            "trace_train")).write(tmp_path)[0]
    rep = analyze_host(SimpleNamespace(host="jaxhost", path=str(path)))
    top = rep.findings[0]
    assert top.rule == "launch_bound" and top.severity == "critical", [(f.rule, f.severity) for f in rep.findings]
    assert "1 jitted call costing" in top.summary, top.summary
    advice = " ".join(f"{a.text} {a.snippet or ''}" for a in top.actions)
    assert "jax.lax.scan" in advice and "batch size" in advice
    assert "Make each kernel do more work" not in advice  # kernel-level advice does not fit a step-level cause
    gaps = [f for f in rep.findings if f.rule == "step_gaps"]
    assert all("dispatching" not in f.summary for f in gaps), gaps
