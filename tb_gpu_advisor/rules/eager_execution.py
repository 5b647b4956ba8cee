"""§1.2.2 Eager execution: ops run one by one outside a compiled step (``tf.function``, ``jax.jit``).

Metric: the eager ops' share of op time, on the host or the device whichever is larger -- the stock overview's
measure, which reports eager execution above 10% of op time (how much of the program runs outside a compiled graph,
the guide's "pure eager mode"; what the step would win is the saving's, which bounds the severity).  Eager ops are TF ops marked eager and, for JAX, calls of compiled functions that ran a
single op (an un-jitted ``jnp`` call).  Saving: the GPU idle time that eager dispatch causes (launch wait + host
compute), capped by the eager time itself; where compiling the step also fuses it (``jax.jit``), plus the
kernel time fusing the eager element-wise chains saves (:mod:`tb_gpu_advisor.rules._fusion`).
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules._fusion import assumption as fusion_assumption, chain_saving, chain_table
from tb_gpu_advisor.rules.base import Ctx, finding, grade, ms, pct, rule, saving, share_metric, table
from tb_gpu_advisor.rules.launch_bound import step_level

ID = "eager_execution"


@rule(ID, "§1.2.2", "Ops run eagerly, one by one, outside a compiled graph",
      thresholds=("eager_execution.warning", "eager_execution.critical", "eager.max_kernels_per_call",
                  "xla.min_chain_length"), waits=("launch_wait", "host_compute"))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    e = m.eager
    if not e.count or ctx.step_ms is None:
        return []
    if step_level(m):
        # a step of a few calls, each too small for its dispatch (``wild/jax_mi300x``: one ``jnp.dot`` a step, 2.2
        # calls): compiling the step merges almost nothing -- more GPU work per call is the fix, and the launch and
        # host-bound checks' step-level verdict says so; "jit the whole step" beside it would contradict it
        return []
    share = e.op_share
    sev = grade(share, "eager_execution.warning", "eager_execution.critical")
    if sev is None:
        return []
    idle = m.breakdown.launch_wait + m.breakdown.host_compute
    dispatch_ms = min(e.time_ms_per_step, idle)
    launch_ms = min(dispatch_ms, m.breakdown.launch_wait)
    cs = chain_saving(m, ctx) if ctx.fw.compiled_step_fuses else None
    fused_ms = cs.fused_ms if cs else 0.0
    compiled = ctx.fw.label("compiled_step")
    assumption = ("the GPU idle time while the host dispatches ops one by one (launch wait + host compute) "
                  f"disappears once the step is {compiled}")
    text = (f"{ctx.count_per_step(e.per_step, 'op')} run eagerly, taking {ms(e.time_ms_per_step)} of host time "
            f"{'in the ' + ctx.unit if ctx.one_step else 'in each ' + ms(ctx.step_ms) + ' step'}: {pct(share)} of the "
            f"{e.op_side}'s op time (stock overview reports eager execution above 10% of op time).")
    evidence = [table("Eagerly executed ops (most frequent)", ["op"], [[n] for n in e.top[:15]])]
    if cs is not None and fused_ms > 0:
        assumption += f"; and compiled, the eager element-wise chains fuse: {fusion_assumption(m)}"
        text += (f" Compiled, the {ms(cs.kernel_ms)} of element-wise kernel chains {ctx.per_step} would also fuse into "
                 f"about {ms(cs.kernel_ms - fused_ms)} of kernels.")
        evidence.insert(0, chain_table(cs, ctx, m))
    return [finding(
        ctx, ID, sev, text,
        metric=share_metric("eager_time_share", f"Eager share of the {e.op_side}'s op time", share, "eager_execution.warning",
                            severity=sev, detail={"eager_ops_per_step": e.per_step, "eager_ops": e.count,
                                                  "eager_ms_per_step": e.time_ms_per_step,
                                                  "fused_kernel_saving_ms_per_step": fused_ms}),
        saving=saving(ctx, dispatch_ms + fused_ms, assumption,
                      [("launch", "launch", launch_ms), ("host", "host_work", dispatch_ms - launch_ms),
                       ("compute", "non_matmul_kernels", fused_ms)],
                      paced=False),  # compiled, the step's ops are no longer dispatched one by one
        evidence=evidence,
        actions=ctx.fw.fix(ID),
    )]
