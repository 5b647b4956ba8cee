"""§1.2.2 Eager execution: ops run one by one outside ``tf.function``.

Metric: host time of eagerly executed ops per step / step time (the stock
overview reports eager execution above 10% of op time).  Saving: the GPU
idle time that eager dispatch causes (launch wait + host compute), capped
by the eager time itself.
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules.base import Ctx, count, finding, grade, ms, pct, rule, saving, share_metric, table

ID = "eager_execution"


@rule(ID, "§1.2.2", "Ops run eagerly, one by one, outside a compiled graph",
      thresholds=("eager_execution.warning", "eager_execution.critical"))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    e = m.eager
    if not e.count or ctx.step_ms is None:
        return []
    share = min(1.0, ctx.share(e.time_ms_per_step) or 0.0)
    sev = grade(share, "eager_execution.warning", "eager_execution.critical")
    if sev is None:
        return []
    idle = m.breakdown.launch_wait + m.breakdown.host_compute
    save_ms = min(e.time_ms_per_step, idle)
    return [finding(
        ctx, ID, sev,
        f"{count(round(e.per_step))} ops per step run eagerly, taking {ms(e.time_ms_per_step)} of host time in each "
        f"{ms(ctx.step_ms)} step ({pct(share)}; stock overview reports eager time above 10%).",
        metric=share_metric("eager_time_share", "Eager op time share of step", share, "eager_execution.warning",
                            severity=sev, detail={"eager_ops_per_step": e.per_step,
                                                  "eager_ms_per_step": e.time_ms_per_step}),
        saving=saving(ctx, save_ms, "the GPU idle time while the host dispatches ops one by one (launch wait + host "
                                    "compute) disappears once the step is " + ctx.fw.label("compiled_step"),
                      [("launch", "launch", min(save_ms, m.breakdown.launch_wait)),
                       ("host", "host_work", save_ms - min(save_ms, m.breakdown.launch_wait))]),
        evidence=[table("Eagerly executed ops (most frequent)", ["op"], [[n] for n in e.top[:15]])],
        actions=ctx.fw.fix(ID),
    )]
