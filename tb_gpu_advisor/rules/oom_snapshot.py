"""§2 item 1 / memory: a memory snapshot recorded an out-of-memory error -- the allocation that failed, what was live,
and the fix that frees the most.

``torch.cuda.memory._dump_snapshot`` after an OOM (or with ``_record_memory_history`` on when it struck) keeps the
failed request (``oom`` entry: its size, the driver's free bytes, its stack) and what was allocated then.  Cause, from
the allocator's own rule (it asks the driver only when no cached block fits, and gives its unused cached segments
back before it fails):

* the driver had more free than the request: a cap the process set refused it (``memory_cap``:
  ``torch.cuda.set_per_process_memory_fraction``, a framework's memory fraction) -- raise the cap, or shrink what
  lives;
* cached-but-unallocated bytes plus the driver's free bytes would have served it: the memory was there, split into
  blocks too small for it (``fragmentation``: expandable segments -- not offered where the allocator already used
  them: its ``allocator_settings``, or every segment's ``is_expandable`` where a release writes no settings);
* else the GPU was full, and the largest kind of live memory decides (activations: checkpointing; held across
  steps: sharding / offload; the optimizer's state; gradients).

Where the live blocks SDPA's math backend wrote (its score matrices: ``_scaled_dot_product_attention_math`` in their
stacks), or a KV cache's code made, would, freed, have served the request, that is said with their bytes, and their
own fix leads (a fused attention backend; fewer or smaller cached tokens): the phases book them as activations or
held memory, whose fixes (checkpointing, sharding) do not shrink them.

Critical.  Saving: the bytes the fix frees (for a cap, what shrinking the largest kind frees).
"""

from __future__ import annotations

from tb_gpu_advisor.common.fmt import gb, ms
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.metrics.types import HostMetrics, OomReport
from tb_gpu_advisor.model.schema import Finding, Table, TimeWindow
from tb_gpu_advisor.rules import _memory as mem
from tb_gpu_advisor.rules.base import Ctx, T, finding, rule, value_metric

ID = "oom_snapshot"


@rule(ID, "§2 item 1", "Out of memory: the allocation that failed and what held the GPU",
      thresholds=("memory.checkpoint_frees",))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    out = []
    # the snapshot's allocator settings (or its segments' own flag, ``formats.snapshot``): its fix is not offered again
    expandable = m.memory.settings.get("expandable_segments") is True
    for gpu in sorted({o.gpu for o in m.memory.ooms}):
        o = next(x for x in m.memory.ooms if x.gpu == gpu)  # the first: what the job died of
        n = sum(1 for x in m.memory.ooms if x.gpu == gpu)
        cause, largest, frees = cause_of(o)
        where = o.frames[0] if o.frames else "an unknown place (record the history with stacks)"
        at = f"{where}" + (f", called from {o.label}" if o.label and o.label != where else "")
        cached = max(o.reserved_bytes - o.allocated_bytes, 0)
        live = ", ".join(f"{_what(c)} {gb(b)}" for c, b in sorted(o.by_category.items(), key=lambda x: -x[1]))
        text = (f"Allocating {gb(o.requested_bytes)} on GPU {gpu} failed ({at}): the driver had "
                f"{gb(o.device_free_bytes)} free, {gb(o.allocated_bytes)} was allocated and {gb(o.reserved_bytes)} "
                f"reserved ({gb(cached)} cached but unallocated).")
        if live:
            text += f" The largest live allocations then: {live}."
        if cause == "memory_cap":
            text += (f" The driver had more free than the request: a memory cap this process set refused it (reserved "
                     f"{gb(o.reserved_bytes)} plus the request is above it). Raise the cap if the GPU is this job's; "
                     f"else shrink what lives.")
        elif cause == "fragmentation":
            text += (f" Cached plus free memory ({gb(cached + max(o.device_free_bytes, 0))}) would have served the "
                     f"request: it was there, split into blocks too small for it.")
            if expandable:
                text += (" The allocator already used expandable segments: what is cached is freed blocks inside "
                         "them, not segments carved too small.")
        named = _named_holders(o)
        text += "".join(words for _, _, words in named)
        most = named[0][1] if named else 0
        if most and most >= frees:
            text += " That frees the most."
        elif cause != "fragmentation" and (frees or cause != "memory_cap"):
            text += f" What frees the most: {_what(largest)}, about {gb(frees)}."
        if n > 1:
            text += f" The snapshot holds {n} out-of-memory errors on this GPU; this is the first."
        out.append(finding(
            ctx, ID, "critical", text,
            metric=value_metric("oom_requested_bytes", "Failed allocation", o.requested_bytes, "bytes",
                                gb(o.requested_bytes), severity="critical",
                                detail={"device_free_bytes": o.device_free_bytes, "allocated_bytes": o.allocated_bytes,
                                        "reserved_bytes": o.reserved_bytes, "cause": cause, "gpu": gpu}),
            evidence=[Table("The allocation that failed (innermost frame first)", ["frame"], [[f] for f in o.frames]),
                      Table(f"The largest live allocations at the OOM on GPU {gpu}", ["size", "holds", "allocated at"],
                            [[gb(b), c, " <- ".join(fr[:3])] for b, c, fr in o.live])],
            windows=[TimeWindow(host=m.host or "", label=f"out of memory, GPU {gpu} (at {ms(o.at_ms)})",
                                start_ms=round(o.at_ms, 3), end_ms=round(o.at_ms, 3), gpu=gpu)]
            if o.at_ms is not None else [],  # a history without times: no moment to show
            actions=ctx.fw.fixes_for(ID, [v for v, _, _ in named]
                                     + ([largest] if expandable and cause == "fragmentation" else [cause, largest])),
            gpu=gpu, saving_bytes=max(frees, most),
        ))
    return out


def _what(category: str) -> str:
    """A kind of live memory in a few words (its summary words without the parenthesis)."""
    return mem.CATEGORY_WORDS[category].split(" (")[0]


def _named_holders(o: OomReport) -> list[tuple[str, int, str]]:
    """(fix variant, bytes, words) of the live memory whose maker the stacks name and whose own fix frees it, where
    freeing it would have served the request (with the driver's free bytes), the most bytes first.

    Why: the kinds of :func:`cause_of` are phases, and two holders cut across them.  SDPA's math fallback
    materialises the whole score matrix, quadratic in the sequence, and keeps it for the backward: booked as the
    forward's activations it was prescribed checkpointing (a recompute) or a smaller batch, while a fused backend
    never writes it.  A KV cache lives as long as the weights where it is made before the first forward (read as
    held: sharding prescribed) or grows in the forward (``generate()``: read as activations, checkpointing
    prescribed to a job with no backward); its fix is fewer or smaller cached tokens."""
    room = max(o.device_free_bytes, 0)
    out = []
    if o.attention_math_bytes and o.attention_math_bytes + room >= o.requested_bytes:
        out.append(("attention_math", o.attention_math_bytes,
                    f" {gb(o.attention_math_bytes)} of the live memory was written by scaled_dot_product_attention's "
                    f"math backend (`{pytorch.ATTENTION_MATH_FRAME}`: the attention's score matrices, quadratic in "
                    f"the sequence, kept for the backward); a fused backend (flash, memory-efficient) keeps none of "
                    f"them -- freed with no recompute and no smaller batch, they serve the request."))
    if o.kv_cache_bytes and o.kv_cache_bytes + room >= o.requested_bytes:
        out.append(("kv_cache", o.kv_cache_bytes,
                    f" {gb(o.kv_cache_bytes)} of the live memory is a KV cache (made by a cache's code): neither "
                    f"weights nor activations -- fewer cached tokens, or smaller ones, free it and serve the "
                    f"request."))
    return sorted(out, key=lambda x: -x[1])


def cause_of(o: OomReport) -> tuple[str, str, int]:
    """(why it failed, the largest kind of live memory, the bytes fixing it frees).  Why: ``memory_cap`` when the
    driver had room for the request, ``fragmentation`` when cached plus free bytes would have served it, else the
    largest kind itself.  Checkpointing frees ``memory.checkpoint_frees`` of the activations; a fragmentation fix frees
    the cached bytes."""
    frees = {c: int(b * (T("memory.checkpoint_frees") if c == "activations" else 1.0))
             for c, b in o.by_category.items() if c != "other"}
    largest = max(frees, key=frees.get) if frees else "other"
    most = frees.get(largest, 0)
    cached = max(o.reserved_bytes - o.allocated_bytes, 0)
    if o.device_free_bytes >= o.requested_bytes:
        return "memory_cap", largest, most
    if cached and cached + max(o.device_free_bytes, 0) >= o.requested_bytes:
        return "fragmentation", largest, cached
    return largest, largest, most
