"""XLA's kernels do not say which front end compiled them: under another framework's profiler, only a frame into
``jax`` (or ``tensorflow``) names the program's framework; XLA's kernels alone are the work of "XLA (front end
unknown)", told each front end's fixes as whose they are (issue #37 class 1; h37-jaxwords65's *Left* 1, h37-vendor66).

Truth by construction: :func:`synthetic.torchtrace.write_xla_work` -- the same turns of XLA's fusions and cuBLAS
GEMMs under ``torch.profiler`` (no ATen op), with ``with_stack`` frames of the program's call into TensorFlow
(``tensorflow/python/eager/polymorphic_function/...``: TensorFlow's ``jit_compile=True`` runs the same kernels), into
JAX, or none.  On base (c079d51f) all three read as JAX's work (``frameworks.detect_work`` by XLA's kernel names):
TensorFlow's program told jmp's bf16 policy and ``jnp.dot``.
"""

from __future__ import annotations

import re

from synthetic.torchtrace import write_xla_work
from tb_gpu_advisor import frameworks
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.frameworks import jax, tensorflow
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.properties import report_violations

#: the findings whose fixes are the work's compute words
_COMPUTE = ("mixed_precision_off", "tensor_core_unused")
_JAX = re.compile(r"\bjax\.|\bjnp\.|\bjmp\b")
_TF = re.compile(r"\btf\.|Keras|keras\.")


def _report(tmp_path, front_end):
    write_xla_work(str(tmp_path), steps=4, front_end=front_end, run="w")
    (s,) = discover(str(tmp_path))
    return analyze_session(s.run, s.session, s.hosts)


def _compute(report) -> list[str]:
    return [a.text + "\n" + (a.snippet or "") for f in report.findings if f.rule in _COMPUTE for a in f.actions]


def test_a_tensorflow_program_under_torch_profiler_is_told_tensorflows_fixes(tmp_path):
    """Frames into ``tensorflow``: TensorFlow's work (base: JAX's, "jnp.dot", jmp)."""
    rep = _report(tmp_path, "tensorflow")
    cap = rep.hosts[0].capture
    assert cap["work_framework"] == "tensorflow", cap.get("work_framework")
    assert cap["framework_name"] == "TensorFlow (recorded by PyTorch's profiler)"
    compute = _compute(rep)
    assert compute and any(_TF.search(c) for c in compute), compute
    assert not [c for c in compute if _JAX.search(c) or "torch." in c], compute
    assert not report_violations(rep)


def test_xla_kernels_alone_name_no_front_end(tmp_path):
    """No frame: the work is XLA's, its front end unknown -- each fix said once where both front ends say it alike,
    else headed by whose it is; never one front end's unheaded (base: JAX's, unheaded)."""
    rep = _report(tmp_path, None)
    cap = rep.hosts[0].capture
    assert cap["work_framework"] == "xla", cap.get("work_framework")
    assert cap["framework_name"] == "XLA (front end unknown) (recorded by PyTorch's profiler)"
    compute = _compute(rep)
    assert any(c.startswith("If JAX ran the work: ") for c in compute), compute
    assert any(c.startswith("If TensorFlow ran the work: ") for c in compute), compute
    for c in compute:
        if _JAX.search(c):
            assert c.startswith("If JAX ran the work: "), c
        if _TF.search(c):
            assert c.startswith("If TensorFlow ran the work: "), c
        assert "torch." not in c, c
    captured = [a.text for f in rep.findings if f.rule == "capture_quality" for a in f.actions]
    assert captured and not [c for c in captured if c.startswith("If ")], captured  # the capture's: torch.profiler's
    assert not report_violations(rep)


def test_control_frames_into_jax_keep_jaxs_fixes(tmp_path):
    """Frames into ``jax``: JAX's work, its fixes unheaded (as h37-jaxwords65 read every XLA program)."""
    rep = _report(tmp_path, "jax")
    assert rep.hosts[0].capture["work_framework"] == "jax"
    compute = _compute(rep)
    assert any(_JAX.search(c) for c in compute) and not [c for c in compute if c.startswith("If ")], compute


def test_each_front_ends_own_evidence():
    """A frame of each package, TensorFlow's own kernel namespace; XLA's kernels are neither's alone."""
    assert tensorflow.FRAMEWORK.work_frame(
        "/usr/lib/python3/site-packages/tensorflow/python/eager/def_function.py(917): _call")
    assert tensorflow.FRAMEWORK.work_kernel("void tensorflow::functor::ShuffleInTensor3Simple<float, 2, 1, 0, false>")
    assert not tensorflow.FRAMEWORK.work_frame("/usr/lib/python3/site-packages/keras/src/trainers/trainer.py(30): fit")
    for name in ("loop_transpose_fusion", "wrapped_broadcast"):
        assert not jax.FRAMEWORK.work_kernel(name) and not tensorflow.FRAMEWORK.work_kernel(name)
        assert frameworks.XLA_WORK.work_kernel(name)


def test_the_captures_version_is_its_writers_not_the_works(tmp_path):
    """A TensorFlow program under PyTorch 2.6's profiler: the version the trace dates is PyTorch's, TensorFlow's is
    not known, so a fix needing TensorFlow 2.5 (``jit_compile=True``) keeps its version note (base: read as
    TensorFlow 2.6, the note dropped -- ``Job.version_low`` asked of the work's framework)."""
    import dataclasses

    from tb_gpu_advisor import formats
    from tb_gpu_advisor.rules.base import Ctx
    from tb_gpu_advisor.runtime.pipeline import host_metrics

    write_xla_work(str(tmp_path), steps=4, front_end="tensorflow", run="w")
    (s,) = discover(str(tmp_path))
    m = host_metrics(formats.read(s.hosts[0]))
    assert m.capture.work_framework == "tensorflow"
    fix = tensorflow.FRAMEWORK.fix("xla_not_used")[0]
    assert "jit_compile=True" in fix.snippet
    m.job = dataclasses.replace(m.job, version="2.6.0", version_low=(2, 6))  # the trace dates PyTorch 2.6
    (fitted,) = Ctx(m).fit([fix])
    assert "TF 2.5 or newer" in fitted.snippet, fitted.snippet
    # control: TensorFlow's own capture dated 2.6 -- the note goes (the version is the work's framework's)
    m.capture = dataclasses.replace(m.capture, framework="tensorflow", work_framework="")
    (own,) = Ctx(m).fit([fix])
    assert "TF 2.5 or newer" not in own.snippet, own.snippet
