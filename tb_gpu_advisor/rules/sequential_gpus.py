"""§2 item 6: GPUs run the step one after another instead of concurrently.

Metric: ``multi_gpu.concurrency`` (overlap of the GPUs' busy windows; 1 =
fully parallel), never below the overlap the busy times force: GPUs busy
more than the step span (``multi_gpu.step_span_ms``: earliest to latest of
the GPUs' step windows) in total must overlap by the excess.  Saving: (sum of busy - max busy) × (1 - concurrency): the
serialised part of the work.
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules._multi import GPU_COLUMNS, active_gpus, gpu_table_rows, is_multi
from tb_gpu_advisor.rules.base import Ctx, finding, grade, pct, rule, saving, step_windows, table, value_metric

ID = "sequential_gpus"


def concurrency(m) -> float | None:
    """``multi_gpu.concurrency``, raised to the pigeonhole bound: GPUs whose busy times add up to more than the
    step must overlap by at least the excess (guards against a mis-measured concurrency)."""
    c = m.multi_gpu.concurrency
    busy = [g.busy_ms_per_step for g in active_gpus(m) if g.busy_ms_per_step]
    # the wall span the GPUs' step windows cover (per-GPU windows may lie apart in time); older metrics: the step
    step = m.multi_gpu.step_span_ms or m.headline.avg_step_ms
    if c is None or len(busy) < 2 or not step:
        return c
    spread = sum(busy) - max(busy)
    bound = max(0.0, sum(busy) - step) / spread if spread > 0 else 1.0
    return max(c, min(1.0, bound))


def is_sequential(m) -> bool:
    """Whether this rule fires (launch_skew defers to it)."""
    return is_multi(m) and grade(concurrency(m), "sequential_gpus.warning", "sequential_gpus.critical") is not None


@rule(ID, "§2 item 6", "GPUs run the step one after another",
      thresholds=("sequential_gpus.warning", "sequential_gpus.critical"))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    mg = m.multi_gpu
    conc = concurrency(m)
    if not is_multi(m) or conc is None:
        return []
    sev = grade(conc, "sequential_gpus.warning", "sequential_gpus.critical")
    if sev is None:
        return []
    busy = [g.busy_ms_per_step for g in active_gpus(m) if g.busy_ms_per_step]
    save = (sum(busy) - max(busy)) * (1.0 - conc) if busy else None
    order = " → ".join(f"GPU{g}" for g in mg.first_gpu_order) or "n/a"
    return [finding(
        ctx, ID, sev,
        f"The {len(busy)} GPUs overlap only {pct(conc)} of their busy time (1 = fully parallel): they run "
        f"the step in turn ({order}), which usually means a control dependency from one GPU to another.",
        metric=value_metric("gpu_concurrency", "GPU concurrency", conc, "share", pct(conc),
                            "sequential_gpus.warning", severity=sev, good_direction="higher"),
        saving=saving(ctx, save, "the replicas run concurrently, so the step takes the busiest GPU's time instead of "
                                 "the sum", [("host", "sequential", save or 0.0)]),
        evidence=[table("Per GPU", GPU_COLUMNS, gpu_table_rows(m))],
        windows=step_windows(ctx, label="sequential GPUs", n=2),
        actions=ctx.fw.fix(ID),
    )]
