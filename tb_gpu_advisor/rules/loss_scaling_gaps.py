"""§1.3 Dynamic loss scaling: conditional ops on the host that show as gaps.

Metric: GPU-idle time overlapped by dynamic loss-scaling ops per step (host
time of those ops when the overlap is unknown), as a share of step.
Saving: that time (static loss scaling has no such overhead).
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules.base import Ctx, finding, ms, pct, rule, saving, share_metric, step_windows, table

ID = "loss_scaling_gaps"


@rule(ID, "§1.3", "Dynamic loss scaling adds host-side gaps",
      thresholds=("loss_scaling_gaps.warning", "loss_scaling_gaps.critical"))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    ls = m.loss_scaling
    if not ls.present or not ls.dynamic or ctx.step_ms is None:
        return []
    cost = ls.gap_ms_per_step if ls.gap_ms_per_step is not None else ls.host_ms_per_step
    graded = ctx.graded(cost, "loss_scaling_gaps.warning", "loss_scaling_gaps.critical")
    if graded is None:
        return []
    share, sev = graded
    return [finding(
        ctx, ID, sev,
        f"Dynamic loss scaling runs {ctx.count_per_step(ls.op_count_per_step, 'conditional op')} on the host "
        f"({ms(ls.host_ms_per_step)}), leaving the GPU idle {ctx.part_of_step(cost)} ({pct(share)}).",
        metric=share_metric("loss_scaling_gap_share", "Loss-scaling gap share of {step}", share,
                            "loss_scaling_gaps.warning", severity=sev,
                            detail={"host_ms_per_step": ls.host_ms_per_step, "gap_ms_per_step": ls.gap_ms_per_step,
                                    "ops_per_step": ls.op_count_per_step, "ops": ls.op_count}),
        saving=saving(ctx, cost, "static loss scaling (fixed scale) removes the host-side conditional update",
                      [("host", "loss_scaling", cost)]),
        evidence=[table("Loss-scaling ops", ["op"], [[n] for n in ls.names[:15]])],
        windows=step_windows(ctx, label="loss-scaling gap", draws=("host_compute",), claimed_ms=cost),
        actions=ctx.fw.fix(ID),
    )]
