"""§2 Communication the step pays for: collective time no compute overlaps.

Metric: exposed collective time per step and GPU (``metrics.comm``: collective kernels minus every compute kernel
of the same GPU, on any stream) / step time.  Collectives hidden behind compute are healthy and never counted:
a finding rests only on time the step waits for communication.  Saving: the exposed time that overlapping could
hide -- at most the step's compute to hide behind, and, for AllReduce when the expected transfer time is known
(``--params``), at most that time (the rest is ``allreduce_slow``'s: the link, not the overlap).
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules.base import Ctx, T, finding, grade, ms, pct, rule, saving, share_metric, table

ID = "comm_exposed"


def hideable_ms(m: HostMetrics) -> float:
    """Exposed collective time per step that overlap could hide (see the module docstring)."""
    c = m.comm
    exp_ar = m.multi_gpu.expected_allreduce_ms
    hide = 0.0
    for t in c.by_type:
        x = t.exposed_ms_per_step
        if t.type == "AllReduce" and exp_ar is not None:
            x = min(x, exp_ar)
        hide += x
    return max(0.0, min(hide, m.breakdown.device_compute))


@rule(ID, "§2", "Communication is exposed: the step waits for collectives no compute overlaps",
      thresholds=("comm_exposed.warning", "comm_exposed.critical"))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    c = m.comm
    if not c.by_type or ctx.step_ms is None:
        return []
    share = ctx.share(c.exposed_ms_per_step)
    sev = grade(share, "comm_exposed.warning", "comm_exposed.critical")
    if sev is None:
        return []
    top = c.by_type[0]
    hidden = c.ms_per_step - c.exposed_ms_per_step
    save = hideable_ms(m)
    rows = [[t.type, round(t.calls_per_step, 2), t.ms_per_step, t.exposed_ms_per_step,
             (t.exposed_ms_per_step / t.ms_per_step) if t.ms_per_step else None] for t in c.by_type]
    return [finding(
        ctx, ID, sev,
        f"Collectives take {ms(c.ms_per_step)} of each {ms(ctx.step_ms)} step per GPU, and {ms(c.exposed_ms_per_step)} "
        f"of it ({pct(share)} of the step) runs with no compute to overlap it ({ms(hidden)} is hidden behind "
        f"compute). Most exposed: {top.type}, {top.calls_per_step:.1f} calls and {ms(top.exposed_ms_per_step)} exposed "
        f"per step.",
        metric=share_metric("comm_exposed_share", "Exposed communication share of step", share, "comm_exposed.warning",
                            severity=sev, detail={"collective_ms_per_step": c.ms_per_step,
                                                  "exposed_ms_per_step": c.exposed_ms_per_step,
                                                  "hidden_ms_per_step": hidden}),
        saving=saving(ctx, save, "the exposed collectives overlap with compute (bucketed and prefetched "
                                 "communication), up to the step's compute time to hide behind; AllReduce at most "
                                 "its expected transfer time when --params is given",
                      [("collectives", "exposed_comm", save)]),
        evidence=[table("Collectives per step and GPU", ["collective", "calls", "ms", "exposed ms", "exposed share"], rows)],
        actions=ctx.fw.fixes_for(ID, [t.type for t in c.by_type[:2]] + ["any"]),
    )]
