"""§2 item 5: replicas do unequal work; typically GPU0 is oversubscribed.

Metric: ``multi_gpu.busy_imbalance`` = (max - min busy ms) / max busy ms per
step among active GPUs.  Saving: busiest GPU's busy time minus the mean
(every replica waits for the slowest at the AllReduce).
"""

from __future__ import annotations

from . import _jax
from ._multi import GPU_COLUMNS, active_gpus, gpu_table_rows, is_multi
from .base import Ctx, action, finding, for_framework, grade, ms, pct, rule, saving, step_windows, table, value_metric

ID = "gpu_imbalance"


@rule(ID, "§2 item 5", "GPUs do unequal work (one GPU oversubscribed)",
      thresholds=("gpu_imbalance.warning", "gpu_imbalance.critical"))
def check(m) -> list:
    ctx = Ctx(m)
    mg = m.multi_gpu
    if not is_multi(m) or mg.busy_imbalance is None:
        return []
    sev = grade(mg.busy_imbalance, "gpu_imbalance.warning", "gpu_imbalance.critical")
    if sev is None:
        return []
    gs = [g for g in active_gpus(m) if g.busy_ms_per_step is not None]
    if not gs:
        return []
    heavy = max(gs, key=lambda g: g.busy_ms_per_step)
    mean = sum(g.busy_ms_per_step for g in gs) / len(gs)
    others = [g for g in gs if g is not heavy]
    mean_others = sum(g.busy_ms_per_step for g in others) / len(others) if others else mean
    return [finding(
        ctx, ID, sev,
        f"GPU{heavy.gpu} is busy {ms(heavy.busy_ms_per_step)} per step vs {ms(mean_others)} on average for the other "
        f"{len(others)} GPUs ({pct(mg.busy_imbalance)} imbalance); every replica waits for it at the AllReduce.",
        title=f"GPU{heavy.gpu} is oversubscribed: the GPUs do unequal work",
        metric=value_metric("busy_imbalance", "GPU busy-time imbalance", mg.busy_imbalance, "ratio",
                            pct(mg.busy_imbalance), "gpu_imbalance.warning", severity=sev,
                            detail={"heaviest_gpu": heavy.gpu, "busy_ms": {str(g.gpu): g.busy_ms_per_step for g in gs}}),
        saving=saving(ctx, heavy.busy_ms_per_step - mean, "every GPU does the mean amount of work, so the step "
                                                          "no longer waits for the busiest one"),
        evidence=[table("Per GPU", GPU_COLUMNS, gpu_table_rows(m))],
        windows=step_windows(ctx, key=lambda s: s.device_busy_ms, label=f"GPU{heavy.gpu} busy", n=2, gpu=heavy.gpu),
        gpu=heavy.gpu,
        actions=for_framework(m, [
            action(f"Look for ops pinned to GPU{heavy.gpu} (explicit tf.device, variables or metrics created outside "
                   f"the strategy scope, host->GPU0 copies of the whole batch).",
                   "tf.debugging.set_log_device_placement(True)"),
            action("Create the model, optimizer and metrics inside the strategy scope and distribute the dataset.",
                   "strategy = tf.distribute.MirroredStrategy()\nwith strategy.scope():\n    model = build_model()\n"
                   "    model.compile(...)\ndist_ds = strategy.experimental_distribute_dataset(ds)"),
        ], [
            action(f"Shard the batch and the step evenly over all GPUs, and look for arrays committed to GPU{heavy.gpu} "
                   f"(jax.device_put(x, device) without a sharding, a whole batch put on one device).",
                   _jax.SHARD_BATCH),
        ]),
    )]
