"""A jitted call's launches on ROCm lie on HIP's own line: the call is found by time, not by line (h37-windows2,
issue #37 class 4).

ROCm's XPlane tracer writes HIP's API calls on a line of their own, ``Host Threads/<tid>``, holding nothing else
(``wild/jax_mi355x``: its 150 ``hipModuleLaunchKernel``/``hipMemsetAsync`` ... on ``Host Threads/7``, its
``PjitFunction`` calls on ``python3``).  Two readings assumed a call's launches lie on the call's own line:

- *the dispatch count* (``metrics.compute._calls_launching_unclaimed_steps``, h37-survey40): a step in which no
  dispatch call starts counts the call enclosing its launches on their line -- on ROCm none, so a one-pass JAX
  capture counted 0 calls and the step-level verdict ("too small for its dispatch") could not fire;
- *host compute* (``metrics.context._host_computing_ops``): a dispatch op of a millisecond or more with no runtime
  call on its line "computed on the host" -- on ROCm every long ``PjitFunction``, whatever it launched.

Built with ``synthetic.jaxcapture.JaxCapture(rocm=True)`` (the launch records as ``jax_mi355x`` lays them out; truth
by construction: one jitted call launching every kernel); the control is the same call on CUDA, whose launches lie
on ``python3``."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic.jaxcapture import EAGER_OPS, JaxCapture, JaxScenario, eager_op
from synthetic.tfcapture import Gpu
from tb_gpu_advisor import devices
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics

MI300X = Gpu("AMD Instinct MI300X", (9, 4), 304, 2100000, 5300000000000, 205822885888)


def _one_call(tmp_path: Path, rocm: bool, kernels: int) -> tuple[str, tuple[int, int]]:
    """One jitted call of ``kernels`` ~1 us kernels, its result read back: a one-pass capture, no step marker."""
    cap = JaxCapture(gpu=MI300X, seed=0, command_buffers=False, module="jit_conv", function="conv", rocm=rocm) \
        if rocm else JaxCapture(seed=0, command_buffers=False, module="jit_conv", function="conv")
    fn, kernel, op, _ = EAGER_OPS[0]
    ex = cap.execute(eager_op(fn, kernel, op) * kernels)
    cap.to_host(4)
    scenario = JaxScenario("one_call", cap.finish(), cap.truth("one_call", "one jitted call", "whole_capture"))
    (path,) = scenario.write(tmp_path)
    return str(path), ex.call


def test_premise_the_rocm_launches_lie_on_a_line_of_hip_calls_alone(tmp_path: Path):
    path, _ = _one_call(tmp_path, True, 4)
    t = read_trace(path)
    launch = t.h.name_mask(devices.is_launch_call)
    (line,) = set(t.h.line[launch].tolist())
    assert t.h.line_names[line].startswith("Host Threads/")
    assert t.h.name_mask(devices.is_runtime_call)[t.h.line == line].all()


@pytest.mark.parametrize("kernels", [4, 400])
def test_a_one_pass_call_on_rocm_counts_as_its_dispatch(tmp_path: Path, kernels: int):
    """One call: 1.0 call in the pass, its whole time the dispatch's -- a short call (4 kernels, ~0.1 ms; main: 0
    calls) and a long one (400 kernels, over the 1 ms at which an op without a runtime call on its line was read as
    host compute; main: 0 calls)."""
    path, (c0, c1) = _one_call(tmp_path, True, kernels)
    assert kernels < 100 or (c1 - c0) / 1e9 > 1.0  # the long call is past ``metrics.cpu_op_ms``
    d = host_metrics(read_trace(path)).dispatch
    assert d.calls_per_step == 1.0, d
    assert abs(d.host_ms_per_step - (c1 - c0) / 1e9) < 0.002, (d.host_ms_per_step, (c1 - c0) / 1e9)


@pytest.mark.parametrize("kernels", [4, 400])
def test_control_the_same_call_on_cuda_counts_the_same(tmp_path: Path, kernels: int):
    path, (c0, c1) = _one_call(tmp_path, False, kernels)
    d = host_metrics(read_trace(path)).dispatch
    assert d.calls_per_step == 1.0, d
    assert abs(d.host_ms_per_step - (c1 - c0) / 1e9) < 0.002
