"""§2 item 1 / memory: the forward pass's activations are most of the peak -- what checkpointing frees.

A training step's memory peaks where the forward pass ends and the backward begins: every activation the backward
will need is still held.  When those activations are most of the allocated peak (``memory.activations.share``) and
the peak is a real share of the GPU (``memory.activations.min_use``; with half of it free, recomputing buys nothing),
recomputing them in the backward pass (activation checkpointing, JAX's remat, ``tf.recompute_grad``) is the lever:
the memory then goes to a larger batch.  Warning from ``memory.pressure.warning`` of the GPU, info below.
Metric: activations / allocated peak.  Saving: bytes -- checkpointing each block keeps only its input, about
``memory.checkpoint_frees`` of the activations (its compute cost: one more forward pass, about a third of the step).
Training only: a forward pass alone keeps no activations for a backward.
"""

from __future__ import annotations

from tb_gpu_advisor.common.fmt import gb
from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules import _memory as mem
from tb_gpu_advisor.rules.base import Ctx, T, finding, pct, rule, share_metric

ID = "activation_memory"


@rule(ID, "§2 item 1", "Activations are most of the memory peak: recompute them (activation checkpointing)",
      thresholds=("memory.activations.share", "memory.activations.min_use", "memory.pressure.warning",
                  "memory.checkpoint_frees"))
def check(m: HostMetrics) -> list[Finding]:
    if m.job is not None and m.job.kind.kind not in ("training", "unknown"):
        return []
    cands = []
    for g in mem.absolute(m, without_oom=True):
        act = g.breakdown.get("activations", 0)
        if not act or not g.peak_allocated_bytes:
            continue
        share, use = act / g.peak_allocated_bytes, mem.use_share(g) or 0.0
        if share >= T("memory.activations.share") and use >= T("memory.activations.min_use"):
            cands.append((use, share, act, g))
    if not cands:
        return []
    use, share, act, g = max(cands, key=lambda c: (c[0], c[2]))
    ctx = Ctx(m)
    sev = "warning" if use >= T("memory.pressure.warning") else "info"
    frees = int(act * T("memory.checkpoint_frees"))
    held = g.breakdown.get("held", 0)
    step_bytes = g.peak_allocated_bytes - held
    grow = ""
    if step_bytes > 0 and g.capacity_bytes:
        room = T("memory.usable_share") * g.capacity_bytes - held
        before, after = room / step_bytes, room / max(step_bytes - frees, 1)
        if after > before >= 0:
            grow = f" The step's own memory could then grow about {after:.1f}x before the GPU is full, instead of {before:.1f}x."
    others = f" ({len(cands)} GPUs alike)" if len(cands) > 1 else ""
    return [finding(
        ctx, ID, sev,
        f"At its memory peak ({mem.when(g)}) GPU {g.gpu}{others} holds {gb(act)} of activations kept for the backward "
        f"pass: {pct(share)} of the {gb(g.peak_allocated_bytes)} allocated ({gb(held)} is held across steps), with "
        f"{pct(use)} of the GPU's {gb(g.capacity_bytes)} in use. Recomputing them in the backward pass frees about "
        f"{gb(frees)} for one more forward pass of compute.{grow}",
        metric=share_metric("activation_share", "Activations / allocated peak", share, "memory.activations.share",
                            severity=sev, detail={"activation_bytes": act, "peak_allocated_bytes": g.peak_allocated_bytes,
                                                  "held_bytes": held, "capacity_bytes": g.capacity_bytes, "gpu": g.gpu,
                                                  "use_share": round(use, 4)}),
        evidence=[mem.holders_table(g), mem.gpu_table([c[3] for c in cands])],
        windows=mem.peak_window(m, g, "memory peak"),
        actions=ctx.fw.fix(ID), saving_bytes=frees,
    )]
