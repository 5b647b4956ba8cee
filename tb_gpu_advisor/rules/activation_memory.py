"""§2 item 1 / memory: the forward pass's activations are most of the peak -- what checkpointing frees.

A training step's memory peaks where the forward pass ends and the backward begins: every activation the backward
will need is still held.  When those activations are most of the allocated peak (``memory.activations.share``) and
the peak is a real share of the GPU (``memory.activations.min_use``; with half of it free, recomputing buys nothing),
recomputing them in the backward pass (activation checkpointing, JAX's remat, ``tf.recompute_grad``) is the lever:
the memory then goes to a larger batch.  Warning from ``memory.pressure.warning`` of the GPU, info below.
Metric: activations / allocated peak.  Saving: bytes -- checkpointing each block keeps only its input, about
``memory.checkpoint_frees`` of the activations (its compute cost: one more forward pass, about a third of the step).
Training only: a forward pass alone keeps no activations for a backward -- unless autograd is on, the second check
here (``forward_kept``): a capture with no backward pass whose forward keeps ``memory.forward_kept.ratio`` times its
largest tensor live at the peak (every layer's tensors, as autograd keeps them for a backward that never runs; under
``no_grad`` only the tensors in use live) and ``memory.forward_kept.share`` of the peak: those bytes, with the fix
(``inference_mode`` / ``no_grad``).  The kept bytes count the same forward's previous pass where the peak still
holds it (a loop that rebinds its output frees the last graph only once the next forward returns: blocks made before
the recording, freed after the peak -- or still live at the dump, dumped before the new output replaced the old --
in the pass's own sizes: ``GpuMemory.forward_kept_earlier_bytes``; under
autocast also its casts, in the sizes of the pass's own -- ``forward_kept_earlier_cast_bytes``).  A
warning when they are freed with no backward in between (the previous pass's are), or the previous pass's graph
outlived the whole next pass; info when the snapshot was dumped while they were held and no earlier pass shows (a
backward may follow the dump).  Saving: the kept bytes less the largest tensor (what stays
in use).  The third (``grads_kept``): a job with no backward pass whose snapshot holds parameters'
gradients that ``Module._apply`` moved to the GPU with the model (``GpuMemory.grads_moved_bytes``), at least
``memory.grads_kept.share`` of the allocated bytes: held for a backward that never runs; saving, those bytes.
The fourth (``cast_cache``): a job with no backward pass whose peak holds autocast's cached 16-bit copies of the fp32
weights (``GpuMemory.cast_cache_bytes``), at least ``memory.cast_cache.share`` of the peak: autocast keeps them to the
region's exit for a backward's reuse, and ``no_grad`` does not stop it.  A warning where the GPU's capacity is known
and the peak uses ``memory.pressure.warning`` of it, info otherwise; saving, the cache less its largest copy (the one
in use).

A memory snapshot does not record the GPU's capacity: then both checks are measured against the peak alone, say so,
and say how to record it (``torch.cuda.mem_get_info`` beside the dump, or a trace with ``profile_memory=True``).
"""

from __future__ import annotations

from typing import Any, Callable

from tb_gpu_advisor.common.fmt import gb, times
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.metrics.types import GpuMemory, HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules import _memory as mem
from tb_gpu_advisor.rules.base import Ctx, T, finding, pct, rule, share_metric

ID = "activation_memory"


@rule(ID, "§2 item 1", "Activations are most of the memory peak: recompute them (activation checkpointing)",
      thresholds=("memory.activations.share", "memory.activations.min_use", "memory.pressure.warning",
                  "memory.checkpoint_frees", "memory.forward_kept.ratio", "memory.forward_kept.share",
                  "memory.grads_kept.share", "memory.cast_cache.share", "memory.attention_math.share"))
def check(m: HostMetrics) -> list[Finding]:
    kind = m.job.kind.kind if m.job is not None else "unknown"
    math = _attention_math(m)
    if kind != "training":
        kept = _forward_kept(m) + _grads_kept(m) + (_cast_cache(m) if kind in NO_BACKWARD else [])
        if kept or kind != "unknown":
            return kept + [_overlap(m, f, kept) for f in math]
    return _activations(m) + math


def _overlap(m: HostMetrics, math: Finding, kept: list[Finding]) -> Finding:
    """The attention finding ``math`` with what its saving shares with the kept forward's (``forward_kept``) on the
    same GPU, where the two together would free more than the peak holds above its held memory: a part never
    exceeds its whole, so at least the excess is the same bytes -- the softmaxes autograd keeps are the graph's
    tensors too, and inference mode frees them as a fused kernel does.  Why: each saving is true alone, and side by
    side they read as two sums of memory to win (a real CS336 forward: 8.16 GiB and 1.41 GiB of 8.2 GiB)."""
    gpu = math.metric.detail.get("gpu") if math.metric is not None else None
    fk = next((f for f in kept if f.metric is not None and f.metric.detail.get("cause") == "forward_kept"
               and f.metric.detail.get("gpu") == gpu), None)
    g = next((x for x in m.memory.gpus if x.gpu == gpu), None)
    if fk is None or g is None or not math.saving_bytes or not fk.saving_bytes:
        return math
    whole = g.peak_allocated_bytes - g.breakdown.get("held", 0)
    shared = math.saving_bytes + fk.saving_bytes - whole
    if shared <= 0:
        return math
    math.summary += (f" At least {gb(shared)} of them are bytes the kept forward's fix frees too (this "
                     f"{gb(math.saving_bytes)} and its {gb(fk.saving_bytes)} against the {gb(whole)} the peak holds "
                     f"above what is {mem.held_words(Ctx(m))}): the two savings overlap, they do not add.")
    return math


def _activations(m: HostMetrics) -> list[Finding]:
    """The forward pass's activations are most of the peak: checkpointing frees a share of them."""
    cands = []
    for g in mem.totals(m, without_oom=True):
        act = g.breakdown.get("activations", 0)
        if not act or not g.peak_allocated_bytes:
            continue
        share, use = act / g.peak_allocated_bytes, mem.use_share(g)
        if share >= T("memory.activations.share") and (use is None or use >= T("memory.activations.min_use")):
            cands.append((use or 0.0, share, act, g))
    if not cands:
        return []
    use, share, act, g = max(cands, key=lambda c: (c[0], c[2]))
    ctx = Ctx(m)
    known = g.capacity_bytes is not None
    sev = "warning" if known and use >= T("memory.pressure.warning") else "info"
    frees = int(act * T("memory.checkpoint_frees"))
    held = g.breakdown.get("held", 0)
    step_bytes = g.peak_allocated_bytes - held
    grow = ""
    if step_bytes > 0 and g.capacity_bytes:
        room = mem.room(g) - held
        before, after = room / step_bytes, room / max(step_bytes - frees, 1)
        if after > before >= 0:
            grow = f" The step's own memory could then grow about {times(after)} before the GPU is full, instead of {times(before)}."
    others = _alike(cands)
    in_use = f", with {pct(use)} of the GPU's {gb(g.capacity_bytes)} in use{mem.outside_part(g)}" if known else ""
    f = finding(
        ctx, ID, sev,
        f"At its memory peak ({mem.when(g, ctx)}) GPU {g.gpu}{others} holds {gb(act)} of activations kept for the backward "
        f"pass{STACKLESS_WALK if g.parts_from_pattern else ''}: {pct(share)} of the {gb(g.peak_allocated_bytes)} "
        f"allocated ({gb(held)} is {mem.held_words(ctx)})"
        f"{in_use}. Recomputing them in the backward pass frees about "
        f"{gb(frees)} for one more forward pass of compute.{grow}{'' if known else ' ' + mem.CAPACITY_UNKNOWN}",
        metric=share_metric("activation_share", "Activations / allocated peak", share, "memory.activations.share",
                            severity=sev, detail={"activation_bytes": act, "peak_allocated_bytes": g.peak_allocated_bytes,
                                                  "held_bytes": held, "capacity_bytes": g.capacity_bytes, "gpu": g.gpu,
                                                  "use_share": round(use, 4)}),
        evidence=[mem.holders_table(g, labels=mem.category_labels(m)), mem.gpu_table([c[3] for c in cands], ctx)],
        windows=mem.peak_window(m, g, "memory peak"),
        actions=ctx.fw.fix(ID) + ([] if known else ctx.fw.extra(f"{ID}:capacity_unknown")), saving_bytes=frees,
    )
    if g.parts_from_pattern:
        f.confidence = "low"  # no frame says the blocks are the forward's: the pattern's walk back does
    return [f]


#: How a snapshot without stacks shows the activations at its peak (``metrics.memory._pattern_phased``).
STACKLESS_WALK = (" (read from the allocation pattern, the snapshot recording no stacks: the blocks each backward's "
                  "walk back frees, in reverse order of their making; low confidence)")
#: How a snapshot without stacks shows its forward's blocks (``metrics.memory._climb``).
STACKLESS_FORWARD = (" (read from the allocation pattern, the snapshot recording no stacks: the blocks made since the "
                     "level last stood at its floor, freed with no allocation between)")


def _forward_kept(m: HostMetrics) -> list[Finding]:
    """No backward pass ran, yet the forward kept every layer's tensors live: autograd was on.  Memory snapshots
    only: a profiler trace records the grad mode (the job stage reads it), a snapshot does not."""
    if not m.memory.snapshot:
        return []
    cands = []
    for g in mem.totals(m, without_oom=True):
        kept = g.forward_kept_bytes + _earlier_bytes(g)  # the pass's own, and its earlier pass's still held at the peak
        if g.peak_allocated_bytes and mem.graph_shaped(m, g) and \
                kept >= T("memory.forward_kept.share") * g.peak_allocated_bytes:
            cands.append((kept, g))
    if not cands:
        return []
    kept, g = max(cands, key=lambda c: c[0])
    ctx = Ctx(m)
    share = kept / g.peak_allocated_bytes
    frees = kept - g.forward_kept_largest
    known = g.capacity_bytes is not None
    of_gpu = (f" ({pct(mem.use_share(g) or 0.0)} of the GPU's {gb(g.capacity_bytes)} in use{mem.outside_part(g)})"
              if known else "")
    others = _alike(cands)
    # freed with no backward in between (this pass's, or the earlier pass's at this one's end), or an earlier pass's
    # held through this whole pass: none came; held to the dump with no earlier pass seen: a backward may follow the
    # dump, outside the snapshot
    held = g.forward_kept_release.startswith("still held") and not g.forward_kept_earlier_bytes
    why = ("autograd keeps every layer's tensors for a backward pass; if none follows the dump (a forward-only "
           "benchmark, evaluation), they are held for nothing" if held else
           "autograd kept every layer's tensors for a backward that never came")
    return [finding(
        ctx, ID, "info" if held else "warning",
        f"No backward pass ran, yet at its memory peak ({mem.when(g, ctx)}) GPU {g.gpu}{others} holds "
        f"{gb(g.forward_kept_bytes)} that the "
        f"forward pass allocated{STACKLESS_FORWARD if m.memory.stackless else ''} -- {g.forward_kept_blocks:,} "
        f"tensors, {g.forward_kept_bytes / g.forward_kept_largest:.0f}x the "
        f"largest, {g.forward_kept_release}{_earlier_pass(g)}: {why}. That is {pct(share)} of the "
        f"{gb(g.peak_allocated_bytes)} "
        f"allocated{of_gpu}. Run the forward under inference mode (or no_grad): about {gb(frees)} is then never held."
        f"{'' if known else ' ' + mem.CAPACITY_UNKNOWN}",
        title="A forward pass keeps its tensors for a backward that never runs",
        metric=share_metric("forward_kept_share", "Forward bytes kept with no backward / allocated peak", share,
                            "memory.forward_kept.share", severity="info" if held else "warning",
                            detail={"kept_bytes": kept, "kept_blocks": g.forward_kept_blocks,
                                    "earlier_pass_bytes": _earlier_bytes(g),
                                    "earlier_pass_cast_bytes": g.forward_kept_earlier_cast_bytes,
                                    "largest_bytes": g.forward_kept_largest, "release": g.forward_kept_release,
                                    "peak_allocated_bytes": g.peak_allocated_bytes,
                                    "capacity_bytes": g.capacity_bytes, "gpu": g.gpu, "cause": "forward_kept"}),
        evidence=[mem.holders_table(g, labels=mem.category_labels(m)), mem.gpu_table([c[1] for c in cands], ctx)],
        windows=mem.peak_window(m, g, "memory peak"),
        actions=ctx.fw.fix(f"{ID}:forward_kept") + ([] if known else ctx.fw.extra(f"{ID}:capacity_unknown")),
        saving_bytes=frees,
    )]


def _earlier_pass(g: GpuMemory) -> str:
    """The words on the same forward's earlier pass still held at the peak (``GpuMemory.forward_kept_earlier_*``), ""
    where none is.  Why: a loop that rebinds its output (``out = model(x)``) frees the last pass's graph only once
    the next forward has returned, so with autograd on the peak holds two passes' tensors, and no_grad frees both."""
    if not g.forward_kept_earlier_bytes:
        return ""
    casts = (f" and {g.forward_kept_earlier_cast_blocks:,} autocast casts saved for its backward, "
             f"{gb(g.forward_kept_earlier_cast_bytes)} in the sizes of this pass's own casts"
             if g.forward_kept_earlier_cast_bytes else "")
    end = ("still held when the snapshot was dumped, before the new output replaced the old"
           if g.forward_kept_earlier_held else "freed only after this peak, when the new output replaced the old")
    return (f"; and {gb(_earlier_bytes(g))} more that the same forward's previous pass kept "
            f"({g.forward_kept_earlier_blocks:,} tensors of the same sizes{casts}{';' if casts else ','} held from "
            f"before the recording began and {end})")


def _earlier_bytes(g: GpuMemory) -> int:
    """The bytes the same forward's previous pass still holds at the peak: its kept tensors and the autocast casts
    its graph saved (``GpuMemory.forward_kept_earlier_*``) -- what the fix frees beside the pass's own."""
    return g.forward_kept_earlier_bytes + g.forward_kept_earlier_cast_bytes


def _alike(cands: list) -> str:
    """The words that say how many GPUs a finding about the first of ``cands`` stands for, where more than one."""
    return f" ({len(cands)} GPUs alike)" if len(cands) > 1 else ""


def _over_share(m: HostMetrics, part: Callable[[GpuMemory], int], whole: Callable[[GpuMemory], int],
                key: str) -> list[GpuMemory]:
    """The GPUs (at no OOM) whose ``part`` bytes are at least ``T(key)`` of their ``whole``, most ``part`` first (the
    first of equals as they came): the no-backward checks' candidates."""
    cands = [g for g in mem.totals(m, without_oom=True) if part(g) and whole(g) and part(g) >= T(key) * whole(g)]
    return sorted(cands, key=part, reverse=True)


def _grads_kept(m: HostMetrics) -> list[Finding]:
    """No backward pass runs, yet the model was moved to the GPU with its parameters' gradients (a model loaded with
    its ``.grad`` set): memory held for a backward that never runs (BlockZero's evaluator, issue #37)."""
    cands = _over_share(m, lambda g: g.grads_moved_bytes, lambda g: g.grads_moved_of, "memory.grads_kept.share")
    if not cands:
        return []
    g = cands[0]
    ctx = Ctx(m)
    share = g.grads_moved_bytes / g.grads_moved_of
    by = f" ({g.grads_moved_by})" if g.grads_moved_by else ""
    others = _alike(cands)
    f = finding(
        ctx, ID, "warning",
        f"No backward pass runs, yet GPU {g.gpu}{others} holds {gb(g.grads_moved_bytes)} of parameters' gradients "
        f"({g.grads_moved_blocks:,} tensors) that Module.to() moved with the model{by}: each parameter's .grad was set "
        f"when it was moved, and a process that only evaluates never uses them. That is {pct(share)} of the "
        f"{gb(g.grads_moved_of)} live at the snapshot's dump. Set them to None before moving the model.",
        title="Gradients kept in a process that runs no backward pass",
        metric=share_metric("grads_kept_share", "Parameters' gradients held with no backward / bytes live at the dump", share,
                            "memory.grads_kept.share", severity="warning",
                            detail={"grads_bytes": g.grads_moved_bytes, "grads_blocks": g.grads_moved_blocks,
                                    "moved_by": g.grads_moved_by, "live_bytes": g.grads_moved_of,
                                    "gpu": g.gpu, "cause": "grads_kept"}),
        evidence=[mem.gpu_table(cands, ctx)],
        actions=ctx.fw.fix(f"{ID}:grads_kept"),
        saving_bytes=g.grads_moved_bytes,
    )
    f.id += f"#{f.metric.id}"  # a secondary finding of the rule (docs/report-schema.md, Finding ids)
    return [f]


#: The job kinds that run no backward pass by what the capture shows (``job.kind``): an "unknown" one may.
NO_BACKWARD = mem.NO_BACKWARD


def _cast_cache(m: HostMetrics) -> list[Finding]:
    """No backward pass runs, yet the peak holds autocast's cache of the weights' 16-bit copies (CS336's 2.7B forward
    under no_grad and bf16 autocast: 6.25 GiB, a third of its 19.1 GiB peak; h37-cachefind).  Why a finding: the
    cache exists to reuse a weight's copy across a training step's forward and backward; a run that never trains
    pays for it in memory only, and the script's own no_grad does not turn it off (``cached_cast`` keys on the
    parameter's requires_grad flag, not on the grad mode)."""
    # only a snapshot's reader books the copies (``MemoryEvents.cast_copy``): elsewhere no GPU has any
    cands = _over_share(m, lambda g: g.cast_cache_bytes, lambda g: g.peak_allocated_bytes, "memory.cast_cache.share")
    if not cands:
        return []
    g, ctx = cands[0], Ctx(m)
    share = g.cast_cache_bytes / g.peak_allocated_bytes
    sev, of_gpu = _pressure(g)
    others = _alike(cands)
    frees = g.cast_cache_bytes - g.cast_cache_largest
    return _peak_share_finding(
        m, ctx, cands, sev, "cast_cache",
        f"No backward pass runs, yet at its memory peak ({mem.when(g, ctx)}) GPU {g.gpu}{others} holds {gb(g.cast_cache_bytes)} "
        f"of autocast's cached 16-bit copies of the weights ({g.cast_cache_blocks:,} tensors, the largest "
        f"{gb(g.cast_cache_largest)}): each weight's copy is kept until the autocast region exits, for a backward that "
        f"never reuses it. That is {pct(share)} of the {gb(g.peak_allocated_bytes)} allocated{of_gpu}. Without the "
        f"cache each copy is freed once its layer has used it: about {gb(frees)} is then never held.",
        title="Autocast's copies of the weights are cached in a run with no backward pass",
        metric=share_metric("cast_cache_share", "Autocast's cached weight copies at the peak / allocated peak", share,
                            "memory.cast_cache.share", severity=sev,
                            detail={"cache_bytes": g.cast_cache_bytes, "cache_blocks": g.cast_cache_blocks,
                                    "largest_bytes": g.cast_cache_largest,
                                    "peak_allocated_bytes": g.peak_allocated_bytes,
                                    "capacity_bytes": g.capacity_bytes, "gpu": g.gpu, "cause": "cast_cache"}),
        saving_bytes=frees,
    )


def _attention_math(m: HostMetrics) -> list[Finding]:
    """The peak holds score matrices attention computed op by op wrote -- SDPA's math backend, or a softmax run inside
    an attention function (``breakdown["attention_math"]``, booked by their stacks:
    ``pytorch.writes_attention_scores``), at least ``memory.attention_math.share`` of it.  Why apart from the
    activations: booked as the forward's activations, they were prescribed checkpointing (one more forward pass of
    compute to recompute what a fused kernel never writes) or a smaller batch; the flash and memory-efficient
    backends keep no (batch x heads x queries x keys) matrix at all -- the fix frees them with no recompute, in a
    training step and in a forward alike."""
    cands = _over_share(m, lambda g: g.breakdown.get("attention_math", 0), lambda g: g.peak_allocated_bytes,
                        "memory.attention_math.share")
    if not cands:
        return []
    g, ctx = cands[0], Ctx(m)
    math = g.breakdown["attention_math"]
    share = math / g.peak_allocated_bytes
    sev, of_gpu = _pressure(g)
    return _peak_share_finding(
        m, ctx, cands, sev, "attention_math",
        f"At its memory peak ({mem.when(g, ctx)}) GPU {g.gpu}{_alike(cands)} holds {gb(math)} that attention "
        f"computed op by op wrote ({pytorch.ATTENTION_OP_BY_OP}): attention's score matrices and probabilities, "
        f"quadratic in the sequence, {pct(share)} of the {gb(g.peak_allocated_bytes)} allocated{of_gpu}. A fused "
        f"attention kernel (SDPA's flash or memory-efficient backend) writes none of them -- no recompute, no smaller "
        f"batch: about {gb(math)} is then never held.",
        title="Attention's score matrices at the memory peak: attention computed op by op, not by a fused kernel",
        metric=share_metric("attention_math_share", "Attention math backend's bytes at the peak / allocated peak",
                            share, "memory.attention_math.share", severity=sev,
                            detail={"attention_math_bytes": math, "peak_allocated_bytes": g.peak_allocated_bytes,
                                    "capacity_bytes": g.capacity_bytes, "gpu": g.gpu, "cause": "attention_math"}),
        saving_bytes=math,
    )


def _pressure(g: GpuMemory) -> tuple[str, str]:
    """The severity ``g``'s use gives a finding about bytes its peak holds (a warning from ``memory.pressure.warning``
    of the GPU, info below it or where the snapshot did not record the capacity: memory that is not short is a lever,
    not a problem) and the words that say the use, "" where unknown."""
    use = mem.use_share(g)
    if use is None:
        return "info", ""
    sev = "warning" if use >= T("memory.pressure.warning") else "info"
    return sev, f" ({pct(use)} of the GPU's {gb(g.capacity_bytes)} in use{mem.outside_part(g)})"


def _peak_share_finding(m: HostMetrics, ctx: Ctx, cands: list[GpuMemory], sev: str, cause: str, summary: str,
                        **kw: Any) -> list[Finding]:
    """The rule's secondary finding about bytes the first of ``cands`` holds at its memory peak: the peak's
    holders and the GPUs alike as evidence, the peak as its window, the framework's fix for ``cause`` (and how to
    record the capacity where the snapshot did not), under a secondary id; ``kw``: the finding's own title, metric
    and saving.  One build for every such cause, so that each says an unknown capacity and shows its peak alike."""
    g, known = cands[0], mem.use_share(cands[0]) is not None
    f = finding(
        ctx, ID, sev, summary + ("" if known else " " + mem.CAPACITY_UNKNOWN),
        evidence=[mem.holders_table(g, labels=mem.category_labels(m)), mem.gpu_table(cands, ctx)],
        windows=mem.peak_window(m, g, "memory peak"),
        actions=ctx.fw.fix(f"{ID}:{cause}") + ([] if known else ctx.fw.extra(f"{ID}:capacity_unknown")), **kw)
    f.id += f"#{f.metric.id}"  # a secondary finding of the rule (docs/report-schema.md, Finding ids)
    return [f]
