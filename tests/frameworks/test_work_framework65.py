"""The framework that wrote the capture and the framework that ran the work may differ (issue #37 class 1, each tool's
own way; h37-jaxwords65, SURVEY h37-huntjax64's *Left* 2b).

The case: lutetjeff/cs521-mp2 ``gpu/traces/jax.json`` @0d6aeaf2 -- a JAX program profiled by ``torch.profiler``: no
ATen op, XLA's ``loop_transpose_fusion`` and ``wrapped_broadcast`` launched through ``cuLaunchKernel`` beside a cuBLAS
fp32 GEMM, each turn in ``record_function(f"jax/iteration_{i}")``.  A Kineto trace is PyTorch's profiler's whatever ran
under it (``frameworks.detect_trace``), and main told that program ``torch.autocast`` for its fp32 GEMM.  Now the
capture's words -- how to record it: ``schedule``, ``prof.step()``, ``record_function``, ``with_stack`` -- stay
PyTorch's, and the work's -- mixed precision, Tensor Cores, compiling -- are JAX's (``frameworks.detect_work``,
``frameworks.recorded_by``).

Truth by construction: :func:`synthetic.torchtrace.write_xla_work` (only XLA's kernels and the cuBLAS call XLA made,
under ``cuLaunchKernel`` / ``cudaLaunchKernel``, no ATen op).  Controls: the same turns with one ATen op each (a
PyTorch program's own work), a PyTorch training job, a PyTorch job launching Triton kernels of its own
(``write_python_launcher``: Triton kernels through ``cuLaunchKernel`` beside ATen ops) -- PyTorch's words as before.
"""

from __future__ import annotations

import os

import pytest

from synthetic.torchtrace import write_python_launcher, write_run, write_xla_work
from tb_gpu_advisor import frameworks
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.frameworks import jax, pytorch
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.properties import report_violations

_REAL = "/work/wild65/turn65/lutetjeff"  # no licence: rebuilt from read_file's text, kept here only
#: the findings whose fixes are the work's compute words, where they fire
_COMPUTE = ("mixed_precision_off", "tensor_core_unused", "dtype_casts", "xla_not_used", "eager_execution")


def _report(root: str, run: str):
    (s,) = [s for s in discover(root) if s.run == run]
    return analyze_session(s.run, s.session, s.hosts)


def _fix_code(findings, rules) -> list[str]:
    return [a.text + "\n" + (a.snippet or "") for f in findings if f.rule in rules for a in f.actions]


def _capture_fixes(findings) -> list[str]:
    return [a.text + "\n" + (a.snippet or "") for f in findings if f.rule == "capture_quality" for a in f.actions]


def _assert_jax_work_words(report) -> None:
    """Every compute fix that fires is JAX's (no torch call in it), and at least one fired; every capture fix is
    torch.profiler's."""
    compute = _fix_code(report.findings, _COMPUTE)
    assert compute, [(f.rule, f.title) for f in report.findings]
    assert not [c for c in compute if "torch." in c or "autocast" in c], compute
    assert any("jnp." in c or "jmp" in c or "jax." in c for c in compute), compute
    captured = _capture_fixes(report.findings)
    assert captured and all("torch.profiler" in c or "prof.step()" in c for c in captured), captured
    assert not report_violations(report)  # the report laws, framework-words among them (both frameworks' words)


@pytest.fixture(scope="module")
def xla(tmp_path_factory):
    root = tmp_path_factory.mktemp("xla_work")
    # its calls into jax recorded (``with_stack``): XLA's kernels alone no longer say JAX (h37-vendor66)
    write_xla_work(str(root), steps=4, front_end="jax")
    return _report(str(root), "xla_work")


def test_a_jax_program_under_torch_profiler_is_told_jax_compute_fixes(xla):
    """Main: mixed_precision_off and tensor_core_unused told ``torch.autocast`` (``with torch.autocast(...)``) and
    ``torch.backends.cuda.matmul.allow_tf32``.  Now JAX's: a bf16 policy (jmp), ``jnp.dot`` in bfloat16, JAX's
    default matmul precision."""
    rules = {f.rule for f in xla.findings}
    assert {"mixed_precision_off", "tensor_core_unused"} <= rules, rules
    _assert_jax_work_words(xla)


def test_its_capture_stays_torch_profilers_and_says_whose_work(xla):
    """The capture is PyTorch's profiler's (its format and advice); the report names the program's framework too."""
    cap = xla.hosts[0].capture
    assert cap["framework"] == "pytorch" and cap["work_framework"] == "jax"
    assert cap["framework_name"] == "JAX (recorded by PyTorch's profiler)"
    assert "torch.profiler" in xla.hosts[0].job["capture_advice"]


def test_one_aten_op_keeps_pytorchs_words(tmp_path):
    """Control: the same turns with a PyTorch op of the program's own -- PyTorch ran work, its words as on main."""
    write_xla_work(str(tmp_path), steps=4, aten_op="aten::add", run="ctl")
    rep = _report(str(tmp_path), "ctl")
    assert "work_framework" not in rep.hosts[0].capture
    assert any("torch." in c for c in _fix_code(rep.findings, ("mixed_precision_off", "tensor_core_unused")))


@pytest.mark.parametrize("scenario", ["healthy_bf16", "host_bound_fp32", "eager_chain"])
def test_pytorch_jobs_keep_their_words(tmp_path, scenario):
    """Controls: PyTorch training jobs (ATen ops, autograd) -- no other framework's work is read into them."""
    write_run(str(tmp_path), scenario, steps=6)
    rep = _report(str(tmp_path), scenario)
    assert "work_framework" not in rep.hosts[0].capture
    assert not [c for c in _fix_code(rep.findings, _COMPUTE) if "jnp." in c or "jmp" in c]


def test_a_pytorch_job_launching_triton_kernels_keeps_its_words(tmp_path):
    """Control: Triton kernels launched through the driver (``cuLaunchKernel``) beside ATen ops -- PyTorch's program."""
    run = tmp_path / "triton"
    run.mkdir()
    write_python_launcher(str(run / "host.1.pt.trace.json"))
    rep = _report(str(tmp_path), "triton")
    assert "work_framework" not in rep.hosts[0].capture
    assert rep.hosts[0].capture["framework_name"] == "PyTorch"


def test_detect_work_reads_the_evidence():
    """``detect_work``'s evidence, each framework's own: ATen ops are PyTorch's work, XLA's kernel names and frames
    into ``jax`` JAX's; a library's kernel (cuBLAS) and Inductor's Triton kernels are no framework's but PyTorch's."""
    assert pytorch.FRAMEWORK.work_event("aten::mm")
    # XLA's kernels are the work of XLA, whose front end they do not name (h37-vendor66): not JAX's evidence alone
    for name in ("loop_transpose_fusion", "wrapped_broadcast", "input_reduce_fusion_3", "fusion_12"):
        assert frameworks.XLA_WORK.work_kernel(name) and not jax.FRAMEWORK.work_kernel(name), name
    for name in ("volta_sgemm_64x32_sliced1x4_tn", "triton_poi_fused_add_0", "fused_dropout_kernel",
                 "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>"):
        assert not frameworks.XLA_WORK.work_kernel(name), name
    assert jax.FRAMEWORK.work_frame("/usr/lib/python3/site-packages/jax/_src/api.py(2757): block_until_ready")
    assert not jax.FRAMEWORK.work_frame("torch/nn/modules/module.py(1501): _call_impl")


def test_recorded_by_takes_each_word_from_its_role():
    """``recorded_by``: the capture's fixes and advice the writer's, the work's fixes the work's; a framework that
    wrote and ran its own capture is itself."""
    both = frameworks.recorded_by(jax.FRAMEWORK, pytorch.FRAMEWORK)
    assert both.fix("capture_quality:few_steps") == pytorch.FRAMEWORK.fix("capture_quality:few_steps")
    assert both.fix("step_gaps:unrecorded") == pytorch.FRAMEWORK.fix("step_gaps:unrecorded")
    assert both.fix("mixed_precision_off") == jax.FRAMEWORK.fix("mixed_precision_off")
    assert both.capture_snippet == pytorch.FRAMEWORK.capture_snippet
    assert both.label("compiled_step") == jax.FRAMEWORK.label("compiled_step")
    assert both.label("ops") == pytorch.FRAMEWORK.label("ops")
    assert frameworks.recorded_by(pytorch.FRAMEWORK, pytorch.FRAMEWORK) is pytorch.FRAMEWORK


@pytest.mark.skipif(not os.path.isdir(os.path.join(_REAL, "jax")), reason="the rebuilt lutetjeff trace is not here")
def test_the_real_jax_program_under_torch_profiler():
    """lutetjeff/cs521-mp2 ``jax.json`` (Quadro RTX 4000, fp16 Tensor Cores, none for bf16): main told
    ``with torch.autocast(device_type='cuda', dtype=torch.float16)`` under mixed_precision_off and tensor_core_unused;
    h37-jaxwords65 JAX's float16 policy with loss scaling (jmp) and ``jnp.dot`` in float16, while capture_quality
    keeps ``torch.profiler``'s ``schedule`` and ``prof.step()``.  Since h37-vendor66 its XLA kernels alone -- no frame
    into ``jax``; its ranges ``jax/iteration_{i}`` are the program's own labels -- do not say which front end
    compiled them: the work is XLA's, JAX's float16 fixes told as JAX's beside TensorFlow's, each headed."""
    rep = _report(_REAL, "jax")
    assert rep.hosts[0].capture.get("work_framework") == "xla"
    compute = _fix_code(rep.findings, ("mixed_precision_off", "tensor_core_unused"))
    assert any(c.startswith("If JAX ran the work: ") and "float16" in c for c in compute), compute
    assert not [c for c in compute if "torch." in c or "autocast" in c], compute
    assert not report_violations(rep)
