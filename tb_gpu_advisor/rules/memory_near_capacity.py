"""§2 item 1 / memory: the peak is at the GPU's capacity -- a larger input will run out of memory.

The guide's multi-GPU advice starts from the batch size memory allows; a peak within ``memory.near_capacity.warning``
of the GPU (reserved bytes: what an out-of-memory error is about) leaves no room for a longer sequence, a larger
batch or the allocator's rounding.  Critical from ``memory.near_capacity.critical``.  The fixes lead with the one
that frees the most of what holds the peak: activations (checkpointing, a smaller micro-batch), memory held across
steps (sharding parameters and optimizer state over the GPUs, offloading it), the backward's gradients.  Saving:
bytes that fix frees.  A serving engine takes most of the GPU for its KV cache by design: info, in its words.  Each
fix is the framework's for that category and the job's kind (a forward pass: the weights quantised or split, fewer
inputs per pass, autocast's cast copies not cached); work of no known kind whose memory shows gradients or an
optimizer step is asked the training job's (``<category>/trained``).  Activations that are autograd's graph of a
job with no backward pass (``_memory.graph_kept``) are the lever ``forward_kept``: ``inference_mode`` frees them whole.
"""

from __future__ import annotations

from tb_gpu_advisor.common.fmt import gb
from tb_gpu_advisor.metrics.memory import AT_DUMP_SOURCE
from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules import _memory as mem
from tb_gpu_advisor.rules.base import Ctx, T, finding, grade, pct, rule, share_metric

ID = "memory_near_capacity"


@rule(ID, "§2 item 1", "The memory peak is at the GPU's capacity: a larger input will run out of memory",
      thresholds=("memory.near_capacity.warning", "memory.near_capacity.critical", "memory.checkpoint_frees"))
def check(m: HostMetrics) -> list[Finding]:
    cands = [(mem.use_share(g) or 0.0, g) for g in mem.absolute(m, without_oom=True)]
    cands = [(u, g) for u, g in cands if grade(u, "memory.near_capacity.warning", "memory.near_capacity.critical")]
    if not cands:
        return []
    use, g = max(cands, key=lambda c: c[0])
    ctx = Ctx(m)
    sev = grade(use, "memory.near_capacity.warning", "memory.near_capacity.critical")
    serving = m.job is not None and m.job.kind.kind == "serving"
    if serving:
        sev = "info"
    lever, frees = _lever(g)
    graph = mem.graph_frees(m, g) if lever == "activations" and not serving else 0
    if graph:  # the activations are autograd's graph of a pass with no backward: inference_mode frees it whole
        lever, frees = "forward_kept", graph
    words = mem.category_words(m, ctx)
    parts = ", ".join(f"{words[c]} {gb(b)}" for c, b in sorted(g.breakdown.items(), key=lambda x: -x[1]))
    held = f" At the peak: {parts}." if parts else ""
    if serving:
        text = (f"GPU {g.gpu} holds {gb(mem.used(g))}{mem.outside_words(g)} of {mem.capacity(g)} ({pct(use)}): the serving engine "
                f"takes the GPU's memory for its KV cache by design.{held}")
    else:
        text = (f"GPU {g.gpu} {_peaks(g)} {gb(mem.used(g))} {'reserved' if g.peak_reserved_bytes is not None else 'allocated'}"
                f"{mem.outside_words(g)} of {mem.capacity(g)} ({pct(use)}, {mem.when(g, ctx)}{_floor(g)}): a longer sequence, a "
                "larger batch or the "
                f"allocator's rounding will run out of memory.{held}")
        if lever == "forward_kept":
            text += mem.graph_words(g, frees)
        elif lever:
            text += f" What frees the most: {words[lever].split(' (')[0]}, about {gb(frees)}."
    others = [c[1] for c in cands]
    return [finding(
        ctx, ID, sev, text,
        # a serving engine's pool is its plan: the generic title's "will run out of memory" would contradict the fix
        title="The memory peak is at the GPU's capacity: the serving engine's KV cache, by design" if serving else None,
        metric=share_metric("peak_memory_share", "Peak memory / GPU memory", use, "memory.near_capacity.warning",
                            severity=sev, detail={"peak_reserved_bytes": g.peak_reserved_bytes,
                                                  "peak_allocated_bytes": g.peak_allocated_bytes,
                                                  "capacity_bytes": g.capacity_bytes, "gpu": g.gpu, "lever": lever}),
        evidence=[mem.gpu_table(others, ctx)] + ([mem.holders_table(g, labels=mem.category_labels(m))] if g.top else []),
        windows=mem.peak_window(m, g, "memory peak"),
        actions=ctx.fw.fixes_for(ID, [_variant(m, lever)]) if lever and not serving else ctx.fw.fix(ID),
        saving_bytes=frees if lever and not serving else None,
    )]


def _peaks(g) -> str:
    """The verb of the GPU's use: a snapshot's state alone (no history, ``events`` 0) is what it held at the dump,
    not its peak."""
    return "holds" if g.source == AT_DUMP_SOURCE else "peaks at"


def _floor(g) -> str:
    """Where the use is a state alone: no history, so the peak was this or more (an out-of-memory observer's dump is
    the state when an allocation failed: the request that failed is not in it)."""
    return "; no history recorded, so the peak was this or more" if _peaks(g) == "holds" else ""


def _lever(g) -> tuple[str | None, int]:
    """The category whose fix frees the most, and about how much: checkpointing frees a share of the activations;
    sharding or offloading frees what is held across steps (all of it on the GPU's side, 1/N kept when sharded over
    N); the other categories by their size."""
    b = g.breakdown
    if not b:
        return None, 0
    frees = {c: int(v * (T("memory.checkpoint_frees") if c == "activations" else 1.0)) for c, v in b.items()}
    lever = max(frees, key=frees.get)
    return lever, frees[lever]


def _variant(m: HostMetrics, lever: str) -> str:
    """The fixes' variant for ``lever``: ``<lever>/trained`` where the job's memory shows it trains
    (:func:`~tb_gpu_advisor.rules._memory.trained`) -- work of no known kind whose peak holds gradients or an
    optimizer step is told the training job's fix, not the held-bytes one; a framework without the key falls back
    to ``lever``'s own."""
    return f"{lever}/trained" if mem.trained(m) else lever
