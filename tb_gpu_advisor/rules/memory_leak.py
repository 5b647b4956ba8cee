"""§2 item 1 / memory: a training loop keeps bytes every iteration that nothing frees (a leak).

A training loop's allocated level between its iterations is flat: each iteration frees what it made.  A tensor kept
past its iteration -- outputs appended to a list, a loss summed without ``.item()`` (the sum holds each iteration's
graph) -- raises that level by the same bytes every iteration until the GPU runs out.  Metric
(``GpuMemory.leak_*``, ``metrics.memory._leak``): the blocks each of ``memory.leak.min_iterations`` or more iterations
allocates at the same sites and sizes and the history never frees, while the level between iterations rises by
them.  Warning from ``memory.forward_kept.share`` of the peak at the history's end, info below.  Saving: the kept
bytes live at the allocated peak.
"""

from __future__ import annotations

from tb_gpu_advisor.common.fmt import gb, plural
from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules import _memory as mem
from tb_gpu_advisor.rules.base import Ctx, T, finding, pct, rule, share_metric

ID = "memory_leak"


@rule(ID, "§2 item 1", "Every iteration keeps bytes nothing frees (a leak)",
      thresholds=("memory.leak.min_iterations", "memory.leak.min_bytes", "memory.forward_kept.share"))
def check(m: HostMetrics) -> list[Finding]:
    cands = [g for g in m.memory.gpus if g.leak_iterations and g.peak_allocated_bytes]
    if not cands:
        return []
    g = max(cands, key=lambda c: c.leak_end_bytes)
    ctx = Ctx(m)
    share = g.leak_bytes / g.peak_allocated_bytes
    sev = "warning" if g.leak_end_bytes / g.peak_allocated_bytes >= T("memory.forward_kept.share") else "info"
    sites = ", ".join(g.leak_sites[:3]) + (" and more" if len(g.leak_sites) > 3 else "")
    return [finding(
        ctx, ID, sev,
        f"GPU {g.gpu}'s allocated level between iterations rises by {gb(g.leak_per_iteration_bytes)} every "
        f"iteration: each of {g.leak_iterations} iterations allocates {plural(g.leak_blocks, 'block')} "
        f"({sites}) that the history never frees -- {gb(g.leak_end_bytes)} kept when it ends, {gb(g.leak_bytes)} "
        f"({pct(share)}) of the {gb(g.peak_allocated_bytes)} peak. A training loop frees what each iteration makes; "
        f"these bytes grow with every iteration until the GPU runs out.",
        metric=share_metric("leak_share", "Kept by earlier iterations at the peak", share,
                            "memory.forward_kept.share", severity=sev,
                            detail={"leak_bytes": g.leak_bytes, "leak_end_bytes": g.leak_end_bytes,
                                    "per_iteration_bytes": g.leak_per_iteration_bytes,
                                    "iterations": g.leak_iterations, "blocks_per_iteration": g.leak_blocks,
                                    "sites": list(g.leak_sites), "gpu": g.gpu}),
        evidence=[mem.gpu_table(cands, ctx)],
        windows=mem.peak_window(m, g, "memory peak"),
        actions=ctx.fw.fix(ID),
        saving_bytes=g.leak_bytes,
    )]
