"""§1.3 / §1.2.3 No fusing compiler, although chains of element-wise kernels could be fused.

Metric: the step time fusing the recurring chains of at least ``xla.min_chain_length`` element-wise kernels
would save, per step and GPU, as a share of step, in captures with no XLA (or torch.compile) evidence.  A chain runs
back to back: a gap longer than a launch (``launch.small_kernel_us``) and than the kernels beside it ends it.
Graded on the saving rather than on the chains' time: a healthy eager model has short chains whose fusion
saves little.  Never critical: the guide calls XLA optional.
Saving: each chain fused takes about as long as its longest kernel (:mod:`tb_gpu_advisor.rules._fusion`); the
launch gaps between its kernels are ``launch_bound``'s time.
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules._fusion import assumption, chain_saving, chain_table
from tb_gpu_advisor.rules.base import Ctx, T, count, finding, grade, ms, n_of, pct, rule, saving, share_metric

ID = "xla_not_used"


@rule(ID, "§1.3", "XLA is off: chains of element-wise kernels could be fused",
      thresholds=("xla_not_used.info", "xla_not_used.warning", "xla.min_chain_length", "launch.small_kernel_us"),
      ceiling="warning")
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    f = m.fusion
    if f.xla_in_use or ctx.step_ms is None or not ctx.steps:
        return []
    cs = chain_saving(m, ctx)
    if cs is None:
        return []
    share = ctx.share(cs.fused_ms)
    sev = grade(share, "xla_not_used.warning")
    if sev is None and share is not None and share >= T("xla_not_used.info"):
        sev = "info"
    if sev is None:
        return []
    c0 = max(cs.chains, key=lambda c: c.occurrences * c.length)
    compiler = ctx.fw.label("compiler")
    # a chain that runs once recurs nowhere (h37-review10: the one-step v100_bert read "2 recurring chains ... The
    # most frequent ... occurs 1 time in 1 step")
    recurs = all(c.occurrences > 1 for c in cs.chains)
    # a host of one step says "in the forward pass", as every other number of it (h37-review13: hf_qwen_h100's
    # "occurs 38 times in 1 step" beside "10.7 ms of kernel time in the forward pass")
    most = (f"The most frequent has {c0.length} kernels and occurs {n_of(c0.occurrences, 'time')} in "
            f"{'the ' + ctx.unit if ctx.one_step else n_of(ctx.steps, 'step')}." if c0.occurrences > 1 else
            f"The largest has {c0.length} kernels and runs once"
            f"{' in the ' + ctx.unit if ctx.one_step else ' in ' + n_of(ctx.steps, 'step')}.")
    return [finding(
        ctx, ID, sev,
        f"No {compiler} in this capture, and {count(len(cs.chains))} {'recurring ' if recurs else ''}"
        f"{'chain' if len(cs.chains) == 1 else 'chains'} of {T('xla.min_chain_length'):g}+ element-wise kernels "
        f"{'takes' if len(cs.chains) == 1 else 'take'} {ms(cs.kernel_ms)} of kernel time "
        f"{'in the ' + ctx.unit if ctx.one_step else 'in each ' + ms(ctx.step_ms) + ' step'}; fused into one kernel each, about {ms(cs.kernel_ms - cs.fused_ms)}: {ms(cs.fused_ms)} "
        f"({pct(share)} of the {ctx.step_noun}) saved. {most}",
        metric=share_metric("fusible_saving_share", "{Step} time fusing element-wise chains would save", share,
                            "xla_not_used.warning", severity=sev,
                            detail={"chain_kernel_ms_per_step": cs.kernel_ms, "chain_gap_ms_per_step": cs.gap_ms,
                                    "chain_kernel_share_of_step": ctx.share(cs.kernel_ms),
                                    "elementwise_kernel_count": f.elementwise_kernel_count,
                                    "small_elementwise_count": f.small_elementwise_count}),
        saving=saving(ctx, cs.fused_ms, f"{compiler} fuses each chain into one kernel: {assumption(m)}",
                      [("compute", "non_matmul_kernels", cs.fused_ms)],
                      paced=False),  # a fused chain is one launch: the host no longer paces its kernels
        evidence=[chain_table(cs, ctx, m)],
        actions=ctx.fw.fix(ID),
    )]
