"""§1.3 / §1.2.3 XLA is not used although chains of small element-wise kernels could be fused.

Metric: time of recurring chains of at least ``xla.min_chain_length``
element-wise kernels (kernel time + the idle gaps inside the chains) per
step and per GPU, as a share of step, in captures with no XLA evidence.
Chains whose kernels are separated by more than the launch latency on
average are left out (a host op or a sync sits inside; fusion does not
remove that).  Never critical: the guide calls XLA optional.
Saving: ``xla.fused_saving_share`` of the chains' time.
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules.base import Ctx, T, count, finding, grade, ms, pct, rule, saving, share_metric, short, table

ID = "xla_not_used"


def fusible_chains(m) -> list:
    out = []
    for c in m.fusion.chains:
        if c.length < T("xla.min_chain_length") or c.occurrences <= 0:
            continue
        gaps = max(1, (c.length - 1) * c.occurrences)
        if c.gap_ms * 1000.0 / gaps > T("xla.max_chain_gap_us"):
            continue
        out.append(c)
    return out


@rule(ID, "§1.3", "XLA is off: chains of small element-wise kernels could be fused",
      thresholds=("xla_not_used.info", "xla_not_used.warning", "xla.min_chain_length", "xla.max_chain_gap_us",
                  "xla.fused_saving_share"))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    f = m.fusion
    if f.xla_in_use or ctx.step_ms is None or not ctx.steps:
        return []
    chains = fusible_chains(m)
    if not chains:
        return []
    gpus = max(1, sum(1 for g in m.gpus if g.active))
    n = ctx.steps * gpus  # chain time is summed over GPUs: per step on one GPU
    kern_ms = sum(c.total_ms for c in chains) / n
    gap_ms = sum(c.gap_ms for c in chains) / n
    share = ctx.share(kern_ms + gap_ms)
    sev = grade(share, "xla_not_used.warning")
    if sev is None and share is not None and share >= T("xla_not_used.info"):
        sev = "info"
    if sev is None:
        return []
    save = T("xla.fused_saving_share") * (kern_ms + gap_ms)
    top = sorted(chains, key=lambda c: -(c.occurrences * c.length))[:10]
    rows = [[" → ".join(short(x, 30) for x in c.names[:6]) + (" …" if len(c.names) > 6 else ""), c.length,
             c.occurrences, round(c.occurrences / n, 2), c.total_ms, c.gap_ms] for c in top]
    c0 = top[0]
    return [finding(
        ctx, ID, sev,
        f"No {ctx.fw.label('compiler')} in this capture, and {count(len(chains))} recurring chains of {T('xla.min_chain_length'):g}+ small "
        f"element-wise kernels take {ms(kern_ms + gap_ms)} of each {ms(ctx.step_ms)} step ({pct(share)}); the most "
        f"frequent has {c0.length} kernels and occurs {c0.occurrences:,} times in {ctx.steps} steps.",
        metric=share_metric("fusible_chain_share", "Fusible element-wise chain share of step", share,
                            "xla_not_used.warning", severity=sev,
                            detail={"chain_kernel_ms_per_step": kern_ms, "chain_gap_ms_per_step": gap_ms,
                                    "elementwise_kernel_count": f.elementwise_kernel_count,
                                    "small_elementwise_count": f.small_elementwise_count}),
        saving=saving(ctx, save, f"{ctx.fw.label('compiler')} fuses each chain into one kernel, saving {T('xla.fused_saving_share'):.0%} of "
                                 f"the chain's time (kernels + launch gaps)",
                      [("compute", "non_matmul_kernels", kern_ms), ("launch", "launch", gap_ms)]),
        evidence=[table("Most frequent fusible kernel chains", ["chain", "kernels", "occurrences", "per step per GPU",
                                                                "kernel ms", "gap ms"], rows)],
        actions=ctx.fw.fix(ID),
    )]
