"""§2 item 1: maximize the batch size (only when the capture has memory data).

Metric: peak memory / GPU memory.  Info below the threshold: a larger batch
raises device utilization and amortizes communication.  No saving estimate
(it depends on the model's scaling).
"""

from __future__ import annotations

from .base import Ctx, action, finding, grade, is_jax, pct, rule, value_metric

ID = "batch_size_headroom"


@rule(ID, "§2 item 1", "Memory headroom: the batch size could grow", thresholds=("batch_size_headroom.info",))
def check(m) -> list:
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
        actions=[action("Raise the (per-replica) batch size until peak memory nears capacity; check convergence "
                        "(learning rate scaling).",
                        "global_batch = per_device_batch * jax.device_count()" if is_jax(m) else
                        "global_batch = per_replica_batch * strategy.num_replicas_in_sync")],
    )]
