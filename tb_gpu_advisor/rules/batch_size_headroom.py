"""§2 item 1: maximize the batch size -- the GPU's memory peak leaves room for a larger one.

Metric: peak memory / GPU memory (reserved bytes where the trace records them, else allocated), on the GPU that uses
the most of those that ran the steps (a GPU known only by its memory runs none: no utilization to raise).  Info below ``batch_size_headroom.info``.  How much larger: the memory held across steps (parameters,
optimizer state) stays, the step's own memory grows with the batch, and a job can plan its peak for
``memory.usable_share`` of the GPU -- so about (usable - held) / (peak - held) times the batch.  A larger batch raises
device utilization (and amortizes the gradient all-reduce where the capture has collectives) -- said only where the
capture recorded the GPU's work (``Ctx.gpu_recorded``); without it (CUDA unrecorded, a memory snapshot) the room is
said and the utilization is not in the capture.  No step-time saving
(it depends on the model's scaling); the room it uses is the saving in bytes.  A trace of deltas only (PyTorch
1.8-1.10) has no peak to judge: silent.
"""

from __future__ import annotations

from tb_gpu_advisor.common.fmt import gb, times
from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules import _memory as mem
from tb_gpu_advisor.rules.base import Ctx, finding, grade, pct, rule, value_metric

ID = "batch_size_headroom"


@rule(ID, "§2 item 1", "Memory headroom: the batch size could grow", thresholds=("batch_size_headroom.info",
                                                                               "memory.usable_share"))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    # a GPU whose allocator had to retry was full then: its capacity is an upper bound, no room to grow into
    gpus = mem.of_the_work(m, [g for g in mem.absolute(m) if not g.retry_words])
    if m.memory.ooms:  # it ran out of memory: no headroom to speak of
        return []
    if not gpus:
        return _legacy(m, ctx)
    g = max(gpus, key=lambda x: mem.use_share(x) or 0.0)
    used = mem.use_share(g) or 0.0
    if grade(used, "batch_size_headroom.info") is None:
        return []
    held = g.breakdown.get("held", 0) if g.breakdown else 0
    room = mem.room(g)
    step_bytes = g.peak_allocated_bytes - held
    factor = (room - held) / step_bytes if step_bytes > 0 else None
    kind = "reserved" if g.peak_reserved_bytes is not None else "allocated"
    text = (f"GPU {g.gpu}'s memory peaks at {gb(mem.used(g))} {kind}{mem.outside_words(g)} of {mem.capacity(g)} ({pct(used)}, "
            f"{mem.when(g, ctx)})")
    if factor is not None and factor > 1:
        # the step's own bytes are the allocated peak's: where the peak above is the reserved one, say which
        peak = "the peak" if kind == "allocated" else f"the allocated peak {gb(g.peak_allocated_bytes)}"
        # the one step's noun as every rule writes it (``Ctx.step_noun``): "the pass's own" on a pass read whole
        text += (f": the {ctx.step_noun}'s own {gb(step_bytes)} ({peak} less {gb(held)} {mem.held_words(ctx)}) could "
                 f"grow about {times(factor)} before {mem.pool(g)} is {mem.full_words(g)}")
    text += ". " + _what_it_raises(m, ctx, "raises", "amortizes the step's collectives over more samples")
    return [finding(
        ctx, ID, "info", text,
        metric=value_metric("peak_memory_share", "Peak memory / GPU memory", used, "share", pct(used),
                            "batch_size_headroom.info", severity="info", good_direction="higher",
                            detail={"gpu": g.gpu, "peak_allocated_bytes": g.peak_allocated_bytes,
                                    "peak_reserved_bytes": g.peak_reserved_bytes, "capacity_bytes": g.capacity_bytes,
                                    "held_bytes": held, "growth_factor": round(factor, 2) if factor else None}),
        evidence=[mem.gpu_table(gpus, ctx)], windows=mem.peak_window(m, g, "memory peak"),
        actions=ctx.fw.fix(ID),  # no saving_bytes: a larger batch uses the headroom, it frees none (issue #36)
    )]


def _legacy(m: HostMetrics, ctx: Ctx) -> list[Finding]:
    """A capture with the allocator's peak statistic only (no allocation events): peak vs capacity."""
    mem_ = m.memory
    if not mem_.available or mem_.gpus or not mem_.peak_bytes or not mem_.capacity_bytes:
        return []
    used = mem_.peak_bytes / mem_.capacity_bytes
    if grade(used, "batch_size_headroom.info") is None:
        return []
    return [finding(
        ctx, ID, "info",
        f"Peak GPU memory is {gb(mem_.peak_bytes)} of {gb(mem_.capacity_bytes)} ({pct(used)}). "
        + _what_it_raises(m, ctx, "would raise", "amortize the step's collectives"),
        metric=value_metric("peak_memory_share", "Peak memory / GPU memory", used, "share", pct(used),
                            "batch_size_headroom.info", severity="info", good_direction="higher"),
        actions=ctx.fw.fix(ID),
    )]


def _what_it_raises(m: HostMetrics, ctx: Ctx, verb: str, collectives: str) -> str:
    """What a larger batch gains, in one sentence: the device's utilization (and the collectives amortized, where the
    capture has them) -- said only where the capture recorded the GPU's work (``Ctx.gpu_recorded``).  Where it holds
    none (CUDA unrecorded, a CPU-only window), how busy the GPU was is not in it: the room is a fact of the allocator's,
    the utilization a claim the capture cannot show (h37-jax61)."""
    if not ctx.gpu_recorded:
        return ("Whether a larger batch would raise the GPU's utilization this capture cannot show: it holds no record "
                "of the GPU's work.")
    return f"A larger batch {verb} device utilization" + (f" and {collectives}." if m.comm.by_type else ".")
