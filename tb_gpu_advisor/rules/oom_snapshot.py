"""§2 item 1 / memory: a memory snapshot recorded an out-of-memory error -- the allocation that failed, what was live,
and the fix that frees the most.

``torch.cuda.memory._dump_snapshot`` after an OOM (or with ``_record_memory_history`` on when it struck) keeps the
failed request (``oom`` entry: its size, the driver's free bytes, its stack) and what was allocated then.  Cause, from
the allocator's own rule (it asks the driver only when no cached block fits, and gives its unused cached segments
back before it fails):

* the driver had more free than the allocator asked of it (the request's segment, or its pages on expandable
  segments: a 5 MiB request opens a 20 MiB segment): a cap the process set refused it (``memory_cap``:
  ``torch.cuda.set_per_process_memory_fraction``, a framework's memory fraction) -- raise the cap, or shrink what
  lives;
* cached-but-unallocated bytes plus the driver's free bytes, in the whole units it serves the ask in (2 MiB for a
  small request, 20 MiB for an expandable page or a fixed segment under 10 MiB, 2 MiB steps for a larger fixed
  segment), would have served it: the memory was there, split into
  blocks too small for it (``fragmentation``: expandable segments -- not offered where the allocator already used
  them: its ``allocator_settings``, or every segment's ``is_expandable`` where a release writes no settings);
* else the GPU was full, and the largest kind of live memory decides (activations: checkpointing; held across
  steps: sharding / offload; the optimizer's state; gradients) -- but activations that are autograd's graph of a job
  with no backward pass (``_memory.graph_kept``: the forward's tensors still held at the OOM, kept at every layer)
  are the cause ``forward_kept``: ``inference_mode`` frees the graph whole, fewer inputs only shrink it.

Two makers the stacks name are kinds of their own (``model.trace.HOLDERS``), out of the phase that made them: the
blocks attention computed op by op wrote (its score matrices: SDPA's math backend,
``_scaled_dot_product_attention_math``, or a softmax run inside an attention function; a fused attention kernel frees
them, with no recompute) and a KV cache (fewer or smaller cached tokens free it) -- booked as
activations or held memory, their phases' fixes (checkpointing, sharding) do not shrink them.

Critical.  Saving: the bytes the fix frees (for a cap, what shrinking the largest kind frees).
"""

from __future__ import annotations

from tb_gpu_advisor.common.fmt import gb, ms
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.metrics.types import GpuMemory, HostMetrics, OomReport
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
    words = mem.category_words(m)  # a forward pass's live memory in its own words (no optimizer state, no backward)
    for gpu in sorted({o.gpu for o in m.memory.ooms}):
        o = next(x for x in m.memory.ooms if x.gpu == gpu)  # the first: what the job died of
        n = sum(1 for x in m.memory.ooms if x.gpu == gpu)
        cause, largest, frees = cause_of(o, ctx.fw.driver_ask(o.requested_bytes, expandable)
                                          if ctx.fw.driver_ask else None)
        graph = _graph_frees(m, o) if cause == largest == "activations" else 0
        if graph:  # autograd's graph of a pass with no backward: inference_mode frees it whole
            cause, frees = "forward_kept", graph
        where = o.frames[0] if o.frames else "an unknown place (record the history with stacks)"
        # "?": the reader's label of a request with no frame -- no caller to name (a history recorded without stacks)
        at = f"{where}" + (f", called from {o.label}" if o.label and o.label not in (where, "?") else "")
        cached = max(o.reserved_bytes - o.allocated_bytes, 0)
        live = ", ".join(f"{_what(c, words)} {gb(b)}" for c, b in sorted(o.by_category.items(), key=lambda x: -x[1]))
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
        if cause == "forward_kept":
            text += mem.graph_words(_gpu(m, gpu), frees)
        elif cause != "fragmentation" and (frees or cause != "memory_cap"):
            text += f" What frees the most: {_what(largest, words)}, about {gb(frees)}."
        if cause == largest == "activations":
            text += _unsure_words(m, o)
        text += _holder_words(m, largest)
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
                            [[gb(b), mem.category_label(c, mem.category_labels(m)), " <- ".join(fr[:3])] for b, c, fr in o.live])],
            windows=[TimeWindow(host=m.host or "", label=f"out of memory, GPU {gpu} (at {ms(o.at_ms)})",
                                start_ms=round(o.at_ms, 3), end_ms=round(o.at_ms, 3), gpu=gpu)]
            if o.at_ms is not None else [],  # a history without times: no moment to show
            actions=ctx.fw.fixes_for(ID, [largest] if expandable and cause == "fragmentation" else [cause, largest]),
            gpu=gpu, saving_bytes=frees,
        ))
    return out


#: What the largest kind of live memory is, where the stacks name its maker (``model.trace.HOLDERS``): why its own
#: fix frees it and its phase's does not.  ``{kept}``: why the math backend's matrices were live, by the job's kind
#: (:data:`_SCORES_KEPT`).
_HOLDER_WORDS = {
    "attention_math": (f" Those are attention's score matrices, quadratic in the sequence, that attention computed op "
                       f"by op ({pytorch.ATTENTION_OP_BY_OP}) wrote{{kept}}; a fused attention kernel (SDPA's "
                       f"flash or memory-efficient backend) keeps none of them -- no recompute, no smaller batch."),
    "kv_cache": (" A KV cache is neither weights nor activations: it holds the tokens a generation keeps, and fewer "
                 "of them, or smaller ones, free it."),
}
#: Why the score matrices were live at the OOM, by the job's kind as ``job.kind`` reads the snapshot: a training step
#: keeps them for its backward; where the snapshot shows no backward (forward passes only), only autograd recording
#: the forward keeps them -- "kept for the backward" said to a job read as inference was the report against itself
#: (h37-review32: ``synthetic.memsnapshot.oom_attention_math``, read "inference").
_SCORES_KEPT = {"training": " and kept for the backward",
                "forward": ", each layer's kept while autograd records the forward (grad on) though the snapshot "
                           "shows no backward"}


def _gpu(m: HostMetrics, gpu: int) -> GpuMemory | None:
    """GPU ``gpu``'s memory reading (its peak's forward tensors), None where the metrics hold none."""
    return next((g for g in m.memory.gpus if g.gpu == gpu), None)


def _graph_frees(m: HostMetrics, o: OomReport) -> int:
    """The bytes ``inference_mode`` frees at the OOM ``o`` where its GPU's live forward tensors are autograd's graph
    of a job with no backward pass (``mem.graph_kept``): every kept tensor but the largest (the one in use), no more
    than the live bytes the OOM does not book as held.  0 otherwise.  Why: "fewer inputs per pass" shrinks
    activations by the batch's share and checkpointing by ``memory.checkpoint_frees``; a graph kept for a backward
    that never runs is freed whole by not recording it, and the snapshot's peak is the OOM's moment only where the
    tensors were still held when the history ended (its last event, the OOM)."""
    g = _gpu(m, o.gpu)
    if g is None or not g.forward_kept_release.startswith("still held"):
        return 0
    return max(min(mem.graph_frees(m, g), o.allocated_bytes - o.by_category.get("held", 0)), 0)


def _unsure_words(m: HostMetrics, o: OomReport) -> str:
    """Where the live forward tensors at the OOM ``o`` have a kept graph's shape and the job's kind is not known
    (``mem.graph_unsure``: the history ends with the forward still climbing), both readings and what each frees;
    "" otherwise.  Why: a training step needs those tensors for its backward (a smaller pass, checkpointing) and a
    forward run for its output alone does not (inference mode frees them whole) -- the snapshot cannot tell which,
    so the text names the graph and leaves the choice to the one who knows the script."""
    g = _gpu(m, o.gpu)
    if g is None or not g.forward_kept_release.startswith("still held") or not mem.graph_unsure(m, g):
        return ""
    frees = max(min(mem.graph_bytes(g), o.allocated_bytes - o.by_category.get("held", 0)), 0)
    ratio = g.forward_kept_bytes / g.forward_kept_largest
    return (f" Those are {g.forward_kept_blocks:,} tensors the forward kept ({ratio:.0f}x the largest), as autograd "
            f"keeps them for a backward; the history ends with the forward still climbing, no pass of it seen to "
            f"end, so whether a backward would follow is not known. If the job trains, they are its activations, "
            f"for its backward; if it runs the forward for its output alone (evaluation, a benchmark), inference "
            f"mode (or no_grad) frees about {gb(frees)}.")


def _holder_words(m: HostMetrics, largest: str) -> str:
    """:data:`_HOLDER_WORDS` of the largest kind of live memory, in the words of the job's kind."""
    kept = _SCORES_KEPT["training" if mem.trained(m) else "forward"]
    return _HOLDER_WORDS.get(largest, "").format(kept=kept)


def _what(category: str, words: dict[str, str]) -> str:
    """A kind of live memory in a few words (its summary words for the job, ``mem.category_words``, without the
    parenthesis)."""
    return words[category].split(" (")[0]


def cause_of(o: OomReport, units: tuple[int, int] | None = None) -> tuple[str, str, int]:
    """(why it failed, the largest kind of live memory, the bytes fixing it frees).  Why: ``memory_cap`` when the
    driver had room for what the allocator asked of it, ``fragmentation`` when cached plus free bytes would have
    served it, else the largest kind itself.  ``units``: (the most the allocator asks the driver for at once for this
    request, the unit the driver's free bytes serve it in; ``Framework.driver_ask``), where known -- free bytes below
    the ask are no cap's, and free bytes short of a unit serve nothing.  Checkpointing frees
    ``memory.checkpoint_frees`` of the activations; a fragmentation fix frees the cached bytes."""
    frees = {c: int(b * (T("memory.checkpoint_frees") if c == "activations" else 1.0))
             for c, b in o.by_category.items() if c != "other"}
    largest = max(frees, key=frees.get) if frees else "other"
    most = frees.get(largest, 0)
    cached = max(o.reserved_bytes - o.allocated_bytes, 0)
    ask, unit = units or (o.requested_bytes, 1)
    if o.device_free_bytes >= max(ask, o.requested_bytes):
        return "memory_cap", largest, most
    if cached and cached + max(o.device_free_bytes, 0) // unit * unit >= o.requested_bytes:
        return "fragmentation", largest, cached
    return largest, largest, most
