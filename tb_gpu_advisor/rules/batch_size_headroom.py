"""§2 item 1: maximize the batch size (only when the capture has memory data).

Metric: peak memory / GPU memory.  Info below the threshold: a larger batch
raises device utilization and amortizes communication.  No saving estimate
(it depends on the model's scaling).
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules.base import Ctx, finding, grade, pct, rule, value_metric

ID = "batch_size_headroom"


@rule(ID, "§2 item 1", "Memory headroom: the batch size could grow", thresholds=("batch_size_headroom.info",))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    mem = m.memory
    if not mem.available or not mem.peak_bytes or not mem.capacity_bytes:
        return []
    used = mem.peak_bytes / mem.capacity_bytes
    if grade(used, "batch_size_headroom.info") is None:
        return []
    return [finding(
        ctx, ID, "info",
        f"Peak GPU memory is {mem.peak_bytes / 2**30:.1f} GiB of {mem.capacity_bytes / 2**30:.1f} GiB ({pct(used)}): "
        f"a larger batch would raise utilization and amortize communication.",
        metric=value_metric("peak_memory_share", "Peak memory / GPU memory", used, "share", pct(used),
                            "batch_size_headroom.info", severity="info", good_direction="higher"),
        actions=ctx.fw.fix(ID),
    )]
