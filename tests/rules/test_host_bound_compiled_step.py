"""A step that is a few compiled calls too small for their dispatch: the host-bound finding's fix is more GPU work per
call, not "jit the whole step" (survey h37-survey40).

Two wrong assumptions, each with its own test:

- *The host-bound time is un-jitted per-op dispatch.*  The host-bound finding took the framework's launch fix ("jit
  the whole step as one function") while the launch check of the same report read the step as a few jitted calls
  whose dispatch costs more host time than their GPU work (``launch_bound.step_level``) -- on ``wild/jax_mi300x``, a
  loop of ``jit_dot`` calls on an MI300X, both findings stood side by side with contradicting fixes.
- *A step's dispatch calls start inside it.*  A step drawn from the GPU's work begins at its first launch, after the
  call that launched it began: the one-pass capture of survey h37-survey40 (one ``jit`` conv on an A10G, its
  ``PjitFunction`` 338 us around 16 us of kernels; no licence, read in place) held no call, so the step-level reading
  could not fire at all.  Reproduced here by construction: one jitted call of four tiny kernels.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from synthetic.jaxcapture import EAGER_OPS, JaxCapture, JaxScenario, eager_op, jax_eager_ops
from tb_gpu_advisor import frameworks
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import analyze_host, device_launches, host_metrics, index_dtype
from tests.support.paths import FIXTURES
from tests.support.run_report import run_report

JIT_STEP = "jit the whole step as one function"


def _advice(f) -> str:  # noqa: ANN001 - a Finding
    return " ".join(f"{a.text} {a.snippet or ''}" for a in f.actions)


def _only(findings, rule: str):  # noqa: ANN001
    (f,) = [f for f in findings if f.rule == rule]
    return f


def test_the_real_gemm_loop_is_jitted_calls_only():
    """Premise, read off the file: every launch record of ``jax_mi300x`` (HIP's API calls, on their own host line)
    falls inside a ``PjitFunction`` call -- the program is jitted already, so "jit the whole step" cannot be its fix."""
    (path,) = (FIXTURES / "wild" / "jax_mi300x").rglob("*.xplane.pb")
    t = read_trace(str(path))
    calls = t.h.name_mask(frameworks.detect_trace(t).dispatch_event)
    starts, ends = t.h.start[calls], t.h.end[calls]
    launched = np.concatenate([x[x >= 0] for x in device_launches(t.h, t.devices, index_dtype(len(t.h)))])
    assert launched.size >= 50
    assert all(((starts <= t.h.start[i]) & (t.h.start[i] < ends)).any() for i in launched)


def test_a_compiled_step_too_small_for_its_dispatch_gets_the_step_fixes():
    """``jax_mi300x``: the host-bound finding names each call's dispatch and the launch check's step-level fixes
    (several steps per call, a larger batch), as the launch check does; main said "jit the whole step".  Since
    h37-calls67 the launch check's step-level verdict (a note of the same words over its 18 us launch wait) is told
    inside the host-bound finding: one verdict, one finding."""
    findings = run_report(FIXTURES / "wild", "jax_mi300x").findings
    hb = _only(findings, "unexplained_idle")
    assert not [f for f in findings if f.rule == "launch_bound"]
    assert "for the calls' launches themselves" in hb.summary  # the launch check's wait, told here
    # each call's dispatch, the calls named jitted (h37-review19: "compiled already" only where the trace shows the
    # framework's launch fix in use -- a JAX dispatch call is jitted by its name)
    assert "the dispatch of its 2.2 jitted calls" in " ".join(hb.summary.split()), hb.summary
    advice = _advice(hb)
    assert JIT_STEP not in advice, advice
    assert "jax.lax.scan" in advice and "batch size" in advice


def _one_call(tmp_path):
    """One jitted call of four ~1 us kernels, its result read back: a one-pass capture with no step marker."""
    cap = JaxCapture(seed=0, command_buffers=False, module="jit_conv", function="conv")
    fn, kernel, op, _ = EAGER_OPS[0]
    ex = cap.execute(eager_op(fn, kernel, op) * 4)
    cap.to_host(4)
    scenario = JaxScenario("one_jitted_call", cap.finish(),
                           cap.truth("one_jitted_call", "one jitted call of 4 tiny kernels", "whole_capture"))
    (path,) = scenario.write(tmp_path)
    return str(path), ex.call


def test_a_one_pass_capture_counts_the_call_that_launched_its_work(tmp_path):
    """The pass's one call (built: its ``PjitFunction`` span) is the step's dispatch, though it began before the pass's
    first launch; main counted 0 calls."""
    path, (c0, c1) = _one_call(tmp_path)
    d = host_metrics(read_trace(path)).dispatch
    assert d.calls_per_step == 1.0
    assert abs(d.host_ms_per_step - (c1 - c0) / 1e9) < 0.002, (d.host_ms_per_step, (c1 - c0) / 1e9)


def test_a_one_pass_jitted_call_is_too_small_for_its_dispatch(tmp_path):
    """The pass is read as one jitted call too small for its dispatch: more work per call, not "jit the whole step"
    nor "make each kernel do more work".  The launch check reads that verdict too; since h37-calls67 the host-bound
    finding holds its launch wait and says it (one verdict, one finding)."""
    path, _ = _one_call(tmp_path)
    rep = analyze_host(SimpleNamespace(host="jaxhost", path=path))
    hb = _only(rep.findings, "unexplained_idle")
    assert not [f for f in rep.findings if f.rule == "launch_bound"]
    assert "the dispatch of its 1 jitted call" in " ".join(hb.summary.split()), hb.summary
    assert "for the calls' launches themselves" in hb.summary
    advice = _advice(hb)
    assert JIT_STEP not in advice and "Make each kernel do more work" not in advice, advice
    assert "jax.lax.scan" in advice and "batch size" in advice


def test_control_eager_ops_keep_jit_the_whole_step(tmp_path):
    """Control: un-jitted JAX (201 one-op programs a step) is per-op dispatch: its launch fix is still to jit."""
    (path,) = jax_eager_ops(num_steps=6).write(tmp_path)
    rep = analyze_host(SimpleNamespace(host="jaxhost", path=str(path)))
    fixed = [f for f in rep.findings if f.rule in ("launch_bound", "eager_execution", "unexplained_idle")]
    assert fixed and all(JIT_STEP in _advice(f) for f in fixed), [(f.rule, _advice(f)[:80]) for f in fixed]


def test_control_steps_that_hold_their_calls_keep_their_count(tmp_path):
    """Control: marked steps each hold the call they start with -- one call a step, as before (the launching call is
    added only where no call starts in a step)."""
    cap = JaxCapture(seed=0, step_annotation=True, command_buffers=False, module="jit_tiny_step", function="tiny_step")
    fn, kernel, op, _ = EAGER_OPS[0]
    for _ in range(8):
        cap.begin_step()
        cap.execute(eager_op(fn, kernel, op) * 3)
        cap.end_step()
    (path,) = JaxScenario("tiny_steps", cap.finish(), cap.truth("tiny_steps", "tiny jitted steps", "trace_train")
                          ).write(tmp_path)
    assert host_metrics(read_trace(str(path))).dispatch.calls_per_step == 1.0
