"""§2 Communication the step pays for: collective time no compute overlaps.

Metric: exposed collective time per step and GPU (``metrics.comm``: collective kernels minus every compute kernel
of the same GPU, on any stream), at most each type's transfer time (the least any GPU of the host spends in it:
the rest is waiting for a late GPU, which gpu_imbalance and launch_skew report) / step time.  Collectives hidden behind compute are healthy and never counted:
a finding rests only on time the step waits for communication.  Saving: the exposed time that overlapping could
hide -- at most the step's compute to hide behind, and, for AllReduce when the expected transfer time is known
(``--params``), at most that time (the rest is ``allreduce_slow``'s: the link, not the overlap).
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules.base import Ctx, T, finding, grade, ms, pct, rule, saving, share_metric, table

ID = "comm_exposed"


def paid_ms(m: HostMetrics) -> float:
    """Exposed collective time per step that is the transfer itself: per type, at most the least time any GPU of
    the host spends in it (the rest is waiting for the GPU that arrives last: gpu_imbalance and launch_skew)."""
    return sum(min(t.exposed_ms_per_step, t.transfer_ms_per_step) for t in m.comm.by_type)


def hideable_ms(m: HostMetrics) -> float:
    """What overlapping could hide (see the module docstring)."""
    exp_ar = m.multi_gpu.expected_allreduce_ms
    hide = 0.0
    for t in m.comm.by_type:
        x = min(t.exposed_ms_per_step, t.transfer_ms_per_step)
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
    paid = paid_ms(m)
    share = ctx.share(paid)
    sev = grade(share, "comm_exposed.warning", "comm_exposed.critical")
    if sev is None:
        return []
    top = c.by_type[0]
    hidden = c.ms_per_step - c.exposed_ms_per_step
    save = hideable_ms(m)
    rows = [[t.type, round(t.calls_per_step, 2), t.ms_per_step, t.exposed_ms_per_step, t.transfer_ms_per_step,
             (t.exposed_ms_per_step / t.ms_per_step) if t.ms_per_step else None] for t in c.by_type]
    return [finding(
        ctx, ID, sev,
        f"Collectives take {ms(c.ms_per_step)} of each {ms(ctx.step_ms)} step per GPU, and {ms(c.exposed_ms_per_step)} "
        f"of it runs with no compute to overlap it ({ms(hidden)} is hidden behind compute){_waiting(c, paid)}: "
        f"{ms(paid)} ({pct(share)} of the step) of communication the step pays for. Most exposed: {top.type}, "
        f"{top.calls_per_step:.1f} calls and {ms(top.exposed_ms_per_step)} exposed per step.",
        metric=share_metric("comm_exposed_share", "Exposed communication share of step", share, "comm_exposed.warning",
                            severity=sev, detail={"collective_ms_per_step": c.ms_per_step,
                                                  "exposed_ms_per_step": c.exposed_ms_per_step,
                                                  "paid_ms_per_step": paid,
                                                  "hidden_ms_per_step": hidden}),
        saving=saving(ctx, save, "the exposed collectives overlap with compute (bucketed and prefetched "
                                 "communication), up to the step's compute time to hide behind; AllReduce at most "
                                 "its expected transfer time when --params is given",
                      [("collectives", "exposed_comm", save)]),
        evidence=[table("Collectives per step and GPU", ["collective", "calls", "ms", "exposed ms", "transfer ms", "exposed share"], rows)],
        actions=ctx.fw.fixes_for(ID, [t.type for t in c.by_type[:2]] + ["any"]),
    )]


def _waiting(c, paid: float) -> str:  # noqa: ANN001 - a Communication
    """The part of the exposed time that is waiting for another GPU, when it is worth a clause."""
    wait = c.exposed_ms_per_step - paid
    if wait < 0.05 * max(c.exposed_ms_per_step, 1e-9):
        return ""
    return f", of which {ms(wait)} is waiting for the GPU that enters the collective last (see imbalance and skew)"
