"""An un-jitted JAX op's launches on ROCm lie on HIP's own line: its eager ops are found by time (h37-rocmeager,
issue #37 class 2).

``metrics.context._eager_ops`` counts a compiled call that ran one or two kernels as an eager op (an un-jitted
``jnp`` call).  It looked for the call holding each kernel's launch on the launch's own line -- ASSUMPTION: a launch
runs on the line of the op that made it.  On ROCm XPlanes the launches (``hipModuleLaunchKernel``) sit on
``Host Threads/<tid>``, a line of HIP calls alone, while the ``PjitFunction`` calls are on ``python``: TraceLens' JAX
0.8 MI300X captures kept in ``wild/`` (``elementwise_ops`` called 5 times, 11 one-op dispatches a call; a
``transformer_block`` called 3 times, 27 a call) counted no eager op and ``eager_execution`` (guide §1.2.2) never
fired.  The launch now belongs to the call running when it began, on any line (``context.caller_across_lines``).

Controls: the same eager loop on CUDA (its launches on ``python``) counts the same; a jitted ROCm step
(``wild/jax_mi355x``) has no eager op."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic.jaxcapture import EAGER_BIG_OPS, JaxCapture, JaxScenario, eager_big_op
from synthetic.tfcapture import Gpu
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.paths import FIXTURES

WILD = FIXTURES / "wild"
MI300X = Gpu("AMD Instinct MI300X", (9, 4), 304, 2100000, 5300000000000, 205822885888)


def _wild(run: str) -> HostMetrics:
    (session,) = discover(str(WILD / run))
    (host,) = session.hosts
    return host_metrics(read(host))


@pytest.mark.parametrize(("run", "per_call"), [("jax_eager_mi300x_elementwise", 11), ("jax_eager_mi300x_attention", 27)])
def test_an_eager_jax_loop_on_rocm_counts_its_ops(run: str, per_call: int) -> None:
    """Every outer ``PjitFunction`` of each call runs one or two kernels (by hand: 55 of 5 calls, 81 of 3 calls):
    all are eager ops, one step per call (main: 0)."""
    m = _wild(run)
    assert m.eager.per_step == pytest.approx(per_call), m.eager
    assert "eager_execution" in {f.rule for f in evaluate(m)}


def test_an_eager_jax_loop_on_rocm_leads_with_eager_execution() -> None:
    """The elementwise loop: the GPU busy 38% of each call, the rest Python dispatching one op at a time -- the
    guide's §1.2.2, ahead of the generic host-bound reading (main: host-bound first, no eager finding)."""
    found = [f for f in evaluate(_wild("jax_eager_mi300x_elementwise")) if f.saving is not None]
    assert max(found, key=lambda f: f.saving.ms_per_step).rule == "eager_execution"


def test_the_gemm_loop_on_rocm_is_eager_too() -> None:
    """``wild/jax_mi300x`` (TraceLens' ``jax08_gemm``): ``generate_gemm_trace.py:31 run_gemms`` calls ``jnp.ones``
    and ``jnp.dot`` un-jitted (18 outer ``PjitFunction(dot)``, each one hipBLASLt GEMM, no user function jitted);
    each kept step is one ``jit_dot`` execution, so each holds at least its dot (main: 0 eager ops)."""
    m = _wild("jax_mi300x")
    assert m.eager.count >= 16 and "PjitFunction(dot)" in m.eager.top, m.eager


def test_a_step_of_few_calls_too_small_for_their_dispatch_is_not_told_to_jit_the_step() -> None:
    """``jax_mi300x``'s step is one ``jnp.dot`` (2.2 calls a step whose dispatch outlasts their GPU work): jitting the
    step merges nothing, so ``eager_execution`` stands down for the step-level verdict (launch and host-bound checks:
    several steps per call, a larger batch) -- now that its eager ops are counted, the guard is what keeps it.  Since
    h37-calls67 the launch check's step-level verdict is told inside the host-bound finding (``holds``)."""
    m = _wild("jax_mi300x")
    assert m.eager.count > 0
    found = evaluate(m)
    rules = {f.rule for f in found}
    hb = next(f for f in found if f.rule == "unexplained_idle")
    assert "eager_execution" not in rules and "launch_bound" in hb.metric.detail["holds"], rules


def test_control_a_jitted_rocm_step_has_no_eager_ops() -> None:
    """``wild/jax_mi355x``: a jitted Transformer Engine step, hundreds of kernels a call, launches on HIP's line."""
    assert _wild("jax_mi355x").eager.count == 0


def _eager_loop(tmp_path: Path, rocm: bool, steps: int = 4, ops: int = 12) -> str:
    """``steps`` annotated steps of ``ops`` un-jitted element-wise calls, each its own one-kernel executable."""
    cap = JaxCapture(gpu=MI300X, seed=0, step_annotation=True, module="jit_multiply", function="multiply", rocm=True) \
        if rocm else JaxCapture(seed=0, step_annotation=True, module="jit_multiply", function="multiply")
    for _ in range(steps):
        cap.begin_step()
        for i in range(ops):
            fn, kernel, op = EAGER_BIG_OPS[i % len(EAGER_BIG_OPS)]
            cap.execute(eager_big_op(fn, kernel, op), function=fn)
            cap.host_work(20.0)
        cap.end_step()
    name = f"eager_loop_{'rocm' if rocm else 'cuda'}"
    (path,) = JaxScenario(name, cap.finish(), cap.truth(name, "eager loop", "trace_train")).write(tmp_path)
    return str(path)


@pytest.mark.parametrize("rocm", [True, False], ids=["rocm", "cuda_control"])
def test_eager_ops_are_counted_on_either_vendor(tmp_path: Path, rocm: bool) -> None:
    """Truth by construction: 12 eager ops a step, whichever line holds their launches (main: 0 on ROCm)."""
    m = host_metrics(read_trace(_eager_loop(tmp_path, rocm)))
    assert m.eager.per_step == pytest.approx(12), m.eager
