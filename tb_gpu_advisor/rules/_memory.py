"""What the memory rules share (``activation_memory``, ``memory_fragmentation``, ``memory_near_capacity``,
``oom_snapshot``, ``batch_size_headroom``, ``allocator_churn``): which GPU to speak of, its use of capacity, the
window of its peak, the table of every GPU, the words for what holds memory."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from tb_gpu_advisor.common.fmt import gb, ms, pct
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.metrics.types import GpuMemory, HostMetrics
from tb_gpu_advisor.model.schema import Table, TimeWindow

if TYPE_CHECKING:  # the rules' context: only its words are read here, and base imports nothing of this module
    from tb_gpu_advisor.rules.base import Ctx

#: What memory made before a step (or the one pass) holds, for a training job and for one of forward passes only.
_HELD = {"training": "parameters, optimizer state, caches", "forward": "parameters, caches"}
#: What holds memory at a GPU's peak (:data:`~tb_gpu_advisor.metrics.types.MEMORY_CATEGORIES`), by name: the memory
#: chart's bars (``report.legend``), the "holds" column of every table of live memory (the peak's holders, an OOM's
#: live blocks; in findings, on the tab, in the MCP server's markdown) and the diff's rows.  The one home of each
#: category's name (h37-review33: the tables printed the ids, the chart these, the prose :data:`CATEGORY_WORDS`).
CATEGORY_LABELS = {
    "held": "Held across steps (parameters, optimizer state)", "activations": "Activations (forward pass)",
    "gradients": "Gradients, backward temporaries", "optimizer": "Optimizer step", "other": "Other",
    "casts": "Cached 16-bit copies of the weights (this pass)",
    "attention_math": "Attention scores (attention op by op)", "kv_cache": "KV cache",
}


#: The names for a job of forward passes only: what it holds from before a pass is no optimizer state.
FORWARD_ONLY_LABELS = {**CATEGORY_LABELS, "held": "Held across steps (parameters, caches)"}


def category_label(category: object, labels: dict[str, str] | None = None) -> str:
    """A category's name (``labels``, else :data:`CATEGORY_LABELS`); an id no label names is shown as it is."""
    return (labels or CATEGORY_LABELS).get(category, str(category)) if isinstance(category, str) else str(category)


def category_labels(m: HostMetrics) -> dict[str, str]:
    """The categories' names for this job: a job that does not train (:func:`trained`) is not told its held memory
    is optimizer state (h37-memkind37: a forward pass's holders table read "Held across steps (parameters,
    optimizer state)")."""
    return labels_for(trained(m))


def labels_for(training: bool) -> dict[str, str]:
    """The categories' names for a training job (:data:`CATEGORY_LABELS`) or one of forward passes only
    (:data:`FORWARD_ONLY_LABELS`)."""
    return CATEGORY_LABELS if training else FORWARD_ONLY_LABELS


#: How each category of :data:`~tb_gpu_advisor.metrics.types.MEMORY_CATEGORIES` reads in a summary's prose (beside
#: its name, :data:`CATEGORY_LABELS`: a sentence says what the bytes are, a table or a bar names them).
CATEGORY_WORDS = {
    "held": f"held across steps ({_HELD['training']})",
    "activations": "the forward pass's activations (training keeps them for the backward pass)",
    "gradients": "gradients and the backward pass's temporaries",
    "optimizer": "the optimizer step's state and temporaries",
    "other": "allocations of no known phase",
    "casts": "cached 16-bit copies of the weights, kept for this pass only (freed when its mixed-precision region exits)",
    "fragmentation": "reserved but unallocated (the allocator's cache, split blocks)",
    "attention_math": ("attention score matrices written by attention computed op by op (SDPA's math backend, a "
                       "hand-written softmax; quadratic in the sequence)"),
    "kv_cache": "a KV cache (the tokens a generation keeps)",
}
#: The same for a job of forward passes only (inference, serving): it has no optimizer and keeps nothing for a
#: backward pass, so its memory is never said to hold either.
FORWARD_ONLY_WORDS = {**CATEGORY_WORDS, "held": f"held across steps ({_HELD['forward']})",
                      "activations": "the forward pass's activations"}


def trained(m: HostMetrics) -> bool:
    """Whether the job's memory is a training job's (:func:`shows_training` of its kind and its GPUs' memory)."""
    return shows_training(m.job.kind.kind if m.job is not None else None, (g.breakdown for g in m.memory.gpus))


def shows_training(kind: str | None, breakdowns: Iterable[Mapping[str, Any] | None]) -> bool:
    """Whether memory of a job of ``kind`` (``Job.kind.kind``; None: unknown) whose GPUs' peaks hold ``breakdowns``
    (category -> bytes) is a training job's: its kind is training, or it is of no known kind and its memory shows
    gradients or an optimizer step.  A job of no known kind is told of training only where its memory shows it:
    wild/lost_kernels_synced_a40's analysis call read "training keeps them for the backward pass" (h37-memrow35).
    One home, asked by the rules (:func:`trained`, from the metrics) and by the report's views and MCP tables (from
    the stored report: ``report.view.memory_labels``), so a table, a chart and a finding name a category alike."""
    return kind == "training" or (kind not in ("inference", "serving") and any(
        (b or {}).get("gradients") or (b or {}).get("optimizer") for b in breakdowns))


def category_words(m: HostMetrics, ctx: Ctx | None = None) -> dict[str, str]:
    """How each memory category reads for this job (a serving engine is not told of optimizer state), the held
    memory's in the window's words (:func:`held_words`, where ``ctx`` is given)."""
    forward = not trained(m)
    words = FORWARD_ONLY_WORDS if forward else CATEGORY_WORDS
    if ctx is None or not ctx.one_pass:
        return words
    return {**words, "held": f"{held_words(ctx)} ({_HELD['forward' if forward else 'training']})"}


def held_words(ctx: Ctx) -> str:
    """The memory made before the window a peak falls in: "held across steps"; "held from before the pass" where the
    capture holds one unmarked pass (h37-onepass2: ``metrics.memory`` counts as held what an earlier iteration made,
    and one pass has no steps for it to be held across -- only the time before it)."""
    return ctx.pass_or("held from before the {step}", "held across steps")


GPU_COLUMNS = ["GPU", "peak allocated", "peak reserved", "capacity", "peak / capacity", "peak at", "held across steps",
               "activations", "reserved - allocated peak"]


def capacity(g: GpuMemory) -> str:
    """The GPU's capacity after "of": "its 79.2 GiB", or, where its allocator's limit is a share of it, "the 59.4 GiB
    limit of its allocator, 75% of the GPU's 79.2 GiB" (JAX preallocates 75%: issue #36 read "59.4 GiB" on an 80 GB
    H100 unexplained).  One name for one quantity: the memory table's capacity cell says "allocator limit" too, and
    the limit is no reserved amount (h37-review10: v100_bert read "the 14.4 GiB its allocator took" beside "peak
    reserved n/a")."""
    dev, cap = g.device_bytes, g.capacity_bytes
    if g.retry_words:  # read off the allocator's retries: the most it could reserve, not the GPU's size
        return f"at most {gb(cap)}, the most it could reserve -- {g.retry_words} --"
    if _limit_only(g):
        return f"the {gb(cap)} limit of its allocator" + (f", {pct(cap / dev, 0)} of the GPU's {gb(dev)}" if dev else "")
    return f"its {gb(cap)}"


def _limit_only(g: GpuMemory) -> bool:
    """Whether the capacity is the allocator's limit and not the GPU's own memory: any share of it short of the whole,
    or a GPU whose memory the capture does not give.  One quantity, one name: the memory table calls it the
    allocator's limit too (h37-review11: jax_mi355x's XLA limit, 97.0% of its 288 GiB, read "of its 279 GiB" and
    "before the GPU is 90% full" beside "279 GiB (allocator limit)": 97% had counted as the GPU's whole)."""
    dev, cap = g.device_bytes, g.capacity_bytes
    return g.capacity_source == "allocator limit" and bool(cap) and (not dev or cap < 0.9995 * dev)


def pool(g: GpuMemory) -> str:
    """What fills up as the batch grows, in words: "the GPU", or where its allocator's limit is a share of it (JAX's
    75%) "its allocator's 59.4 GiB" -- the headroom is figured against that limit, so "the GPU is 90% full" would
    name a larger whole than the figure used."""
    if _limit_only(g):
        return f"its allocator's {gb(g.capacity_bytes)} limit"
    return "the GPU"


def absolute(m: HostMetrics, without_oom: bool = False) -> list[GpuMemory]:
    """The GPUs whose numbers are totals (not deltas from the capture's start) and whose capacity is known;
    ``without_oom``: not those a snapshot saw run out of memory (``oom_snapshot`` speaks for them)."""
    oom = {o.gpu for o in m.memory.ooms} if without_oom else set()
    return [g for g in m.memory.gpus if g.baseline == "absolute" and g.capacity_bytes and g.gpu not in oom]


def of_the_work(m: HostMetrics, gpus: list[GpuMemory]) -> list[GpuMemory]:
    """``gpus`` less those known only by their memory (``GpuMetrics.memory_only``: no recorded kernel or copy) where
    another GPU ran the capture's work: a larger batch grows the steps' GPUs, and a GPU that ran none of them has no
    utilization to raise (h37-memkind36: ``synthetic.torchtrace.write_memory_beside_work``'s idle GPU 1, the most
    used, was told its batch could grow 3.6x).  Where no GPU ran recorded work (the records lost), all of them."""
    idle = {g.gpu for g in m.gpus if g.memory_only}
    worked = [g for g in gpus if g.gpu not in idle]
    return worked if worked and len(idle) < len(m.gpus) else gpus


def totals(m: HostMetrics, without_oom: bool = False) -> list[GpuMemory]:
    """:func:`absolute`, and in a memory snapshot also the GPUs of unknown capacity (a snapshot does not record it;
    a rule then speaks relative to the peak and says :data:`CAPACITY_UNKNOWN`)."""
    if not m.memory.snapshot:
        return absolute(m, without_oom)
    oom = {o.gpu for o in m.memory.ooms} if without_oom else set()
    return [g for g in m.memory.gpus if g.baseline == "absolute" and g.gpu not in oom]


#: Distinct allocation sites the kept tensors come from, at least: autograd keeps the tensors of every op of every
#: layer, a cache (a KV cache kept on purpose) comes from one or two.
MIN_SITES = 4
#: Of a snapshot recorded without stacks (no site to count), the blocks the climb to the peak kept, at least -- and
#: freed together or still held, never over a backward's span: a backward frees what a forward kept one by one
#: while it makes gradients, a graph dropped unused frees them in one run (``job.kind``'s
#: ``_STACKLESS_MIN_BLOCKS``: a pass under ``no_grad`` holds a few at its peak, a forward with autograd every layer's).
MIN_BLOCKS_STACKLESS = 16


def kept_by_a_forward(m: HostMetrics, g: GpuMemory) -> bool:
    """The blocks the peak held are a forward's graph: made at :data:`MIN_SITES` places (a cache comes from one or
    two); where the snapshot records no stack, :data:`MIN_BLOCKS_STACKLESS` blocks that no backward freed."""
    if not m.memory.stackless:
        return g.forward_kept_sites >= MIN_SITES
    return g.forward_kept_blocks >= MIN_BLOCKS_STACKLESS and \
        g.forward_kept_release.startswith(("freed together", "still held"))


def graph_kept(m: HostMetrics, g: GpuMemory) -> bool:
    """GPU ``g``'s peak holds the graph autograd keeps of a forward pass in a snapshot of a job with no backward pass:
    the forward's tensors live there are :func:`kept_by_a_forward`'s and ``memory.forward_kept.ratio`` times the
    largest of them (under ``no_grad`` only the few in use live).  Why one home: the kept-graph finding
    (``activation_memory``) and an OOM's cause (``oom_snapshot``) must read the same tensors the same way -- an OOM of
    such a pass is autograd's graph, which ``inference_mode`` frees whole, not activations a smaller pass shrinks."""
    return bool(m.memory.snapshot and forward_only(m) and graph_shaped(m, g))


#: The job kinds ``job.kind`` reads as running no backward pass: an "unknown" one may run one.
NO_BACKWARD = ("inference", "serving")


def forward_only(m: HostMetrics) -> bool:
    """Whether the job is read as running forward passes only (:data:`NO_BACKWARD`) -- not merely as not training.
    Why: a job of no known kind may train; a snapshot whose history ends (an OOM, the dump) with its forward still
    climbing is one (``job.kind._forward_unended``), and its kept forward is a training step's activations as likely
    as a graph kept for nothing: told "inference mode frees it" as the first fix, a training step was told to drop
    its own backward (SURVEY session 41, probe l)."""
    return (m.job.kind.kind if m.job is not None else None) in NO_BACKWARD


def graph_unsure(m: HostMetrics, g: GpuMemory) -> bool:
    """GPU ``g``'s peak holds a forward's tensors in a kept graph's shape (:func:`graph_shaped`) in a snapshot of a job
    of no known kind: a training step's activations, or a graph kept for a backward that never comes -- the snapshot
    cannot tell (:func:`forward_only`)."""
    kind = m.job.kind.kind if m.job is not None else "unknown"
    return bool(m.memory.snapshot and kind == "unknown" and not trained(m) and graph_shaped(m, g))


def graph_shaped(m: HostMetrics, g: GpuMemory) -> bool:
    """The forward's tensors live at GPU ``g``'s peak have a kept graph's shape: :func:`kept_by_a_forward`'s, and
    ``memory.forward_kept.ratio`` times the largest of them -- whatever the job's kind (:func:`graph_kept` adds it)."""
    own, largest = g.forward_kept_bytes, g.forward_kept_largest
    return bool(own and largest and kept_by_a_forward(m, g) and own >= T("memory.forward_kept.ratio") * largest)


def graph_frees(m: HostMetrics, g: GpuMemory) -> int:
    """What ``inference_mode`` frees at GPU ``g``'s peak where it holds a kept graph (:func:`graph_kept`): the
    forward's tensors live there and its earlier pass's still held (``forward_kept_earlier_*``), less the largest (the
    one in use); 0 where it holds none.  The saving ``activation_memory``'s kept-graph finding states, asked by the
    rules whose lever is the peak's biggest holder (``memory_near_capacity``, ``oom_snapshot``): the graph is freed
    whole, not by checkpointing's share (``memory.checkpoint_frees``)."""
    if not graph_kept(m, g):
        return 0
    return graph_bytes(g)


def graph_bytes(g: GpuMemory) -> int:
    """The bytes not recording GPU ``g``'s kept forward frees at its peak: the forward's tensors live there and its
    earlier pass's still held, less the largest (the one in use)."""
    kept = g.forward_kept_bytes + g.forward_kept_earlier_bytes + g.forward_kept_earlier_cast_bytes
    return max(kept - g.forward_kept_largest, 0)


def graph_words(g: GpuMemory, frees: int) -> str:
    """What frees the most where the peak holds a kept graph (:func:`graph_frees`), in one sentence of the rules that
    name the peak's lever."""
    return (f" Those are the graph autograd keeps of the forward pass ({g.forward_kept_blocks:,} tensors, "
            f"{g.forward_kept_bytes / g.forward_kept_largest:.0f}x the largest), for a backward pass the snapshot never "
            f"shows. What frees the most: running the forward under inference mode (or no_grad), where only the "
            f"tensors in use live -- about {gb(frees)}.")


#: What a finding measured against the peak says of the capacity (its fix says how to record it).
CAPACITY_UNKNOWN = ("The GPU's capacity is unknown (a memory snapshot does not record it): this is judged against "
                    "the peak alone.")


def used(g: GpuMemory) -> int:
    """What the process holds at its peak: reserved bytes where known (what an OOM is about), else allocated -- the
    warm-up's peak where it stands above the steady one (the process must fit it once to reach the steady state)."""
    if g.peak_reserved_bytes is not None:
        return g.peak_reserved_bytes
    return max(g.peak_allocated_bytes, g.warmup_peak_bytes or 0)


def outside(g: GpuMemory) -> int:
    """Bytes of the GPU in use outside the process's caching allocator (``GpuMemory.outside_bytes``: a snapshot's
    capacity record), 0 where unknown: at the peak they are on the GPU too, so the share in use counts them and the
    room left to grow does not."""
    return g.outside_bytes or 0


def use_share(g: GpuMemory) -> float | None:
    """The share of the capacity in use at the peak: what the process holds and what lies outside its allocator."""
    return (used(g) + outside(g)) / g.capacity_bytes if g.capacity_bytes else None


def room(g: GpuMemory) -> float:
    """What the process may fill: the capacity less the bytes outside its allocator where a capacity record measured
    them (:func:`outside`), else the usable share of it (``memory.usable_share``: the margin that stands for them)."""
    if g.outside_bytes is not None:
        return (g.capacity_bytes or 0) - g.outside_bytes
    return T("memory.usable_share") * (g.capacity_bytes or 0)


def full_words(g: GpuMemory) -> str:
    """How full :func:`room` is reached: "full" where the bytes outside the allocator were measured, else "90% full"."""
    return "full" if g.outside_bytes is not None else f"{pct(T('memory.usable_share'), 0)} full"


def outside_part(g: GpuMemory) -> str:
    """" (0.83 GiB of it outside the allocator)" after a share in use that counts those bytes (:func:`use_share`), else
    "": the share is then more than the peak's own bytes over the capacity, and says why."""
    return f" ({gb(g.outside_bytes)} of it outside the allocator)" if g.outside_bytes else ""


def outside_words(g: GpuMemory) -> str:
    """", with 1.20 GiB more in use outside the allocator (...)," where the capacity record says so (:func:`outside`),
    else "": the share that follows counts them, so the sentence says what they are."""
    if not g.outside_bytes:
        return ""
    return (f", with {gb(g.outside_bytes)} more in use outside the allocator (the capacity record's total less its free "
            "and the allocator's reserved bytes: the runtime's context, communication and other libraries' own "
            "buffers, other processes),")


def when(g: GpuMemory, ctx: Ctx) -> str:
    """When the peak falls, in words: '12.3 ms into step 7, 41% of it' or 'at 812 ms of the capture'.  The step as
    a trace window names it (``Ctx.step_name``): "into the pass" where the one step kept is the pass an unmarked
    capture was read as -- the capture numbers no step, so "into step 0" named one it does not hold (h37-words22:
    gpt2_b200_one_step's peak "5.12 ms into step 0" beside findings that say "the pass")."""
    if g.peak_step is not None and g.peak_step_offset_ms is not None:
        share = f", {pct(g.peak_step_share, 0)} of it" if g.peak_step_share is not None else ""
        return f"{ms(g.peak_step_offset_ms)} into {ctx.step_name(g.peak_step)}{share}"
    if g.peak_ms is not None:
        return f"at {ms(g.peak_ms)} of the capture"
    if g.peak_place:  # a history without times: its place in the events' order, no time
        return f"{'at' if g.peak_place.startswith('event') else 'in'} {g.peak_place}"
    return "at the dump"


def peak_window(m: HostMetrics, g: GpuMemory, label: str) -> list[TimeWindow]:
    """The step holding the peak: where the finding's moment is.  The allocator's events are the host's (an allocation
    is made when the op is dispatched), so the window is the step's host-wide one, its GPU named in the label only
    (under asynchronous dispatch -- JAX -- the GPU runs that step much later).  Where that window does not hold the
    peak's time, a millisecond around the peak instead, naming no step."""
    if g.peak_ms is None:
        return []
    w = next((w for w in m.steps.windows if w.step == g.peak_step), None)
    if w is not None and w.start_ms <= g.peak_ms <= w.end_ms:
        start, end, step = w.start_ms, w.end_ms, g.peak_step
    else:
        start, end, step = g.peak_ms - 0.5, g.peak_ms + 0.5, None
    return [TimeWindow(host=m.host or "", label=f"{label}, GPU {g.gpu} ({gb(g.peak_allocated_bytes)} at "
                                                 f"{ms(g.peak_ms)})", start_ms=round(start, 3), end_ms=round(end, 3),
                       gpu=None, step=step)]


def gpu_table(gpus: list[GpuMemory], ctx: Ctx, title: str = "GPU memory at the peak") -> Table:
    rows = []
    for g in gpus:
        share = use_share(g)
        rows.append([g.gpu, gb(g.peak_allocated_bytes), gb(g.peak_reserved_bytes),
                     gb(g.capacity_bytes) + (" (allocator limit)" if g.capacity_source == "allocator limit" and
                                             g.capacity_bytes else
                                             " (at most: a retry)" if g.retry_words and g.capacity_bytes else "")
                     + outside_part(g),
                     pct(share) if share is not None else "n/a", when(g, ctx), gb(g.breakdown.get("held")) if g.breakdown
                     else "n/a", gb(g.breakdown.get("activations", 0)) if g.breakdown else "n/a", gb(g.gap_bytes)])
    return Table(title, list(GPU_COLUMNS), rows)


def holders_table(g: GpuMemory, title: str | None = None, labels: dict[str, str] | None = None) -> Table:
    """The ops holding ``g``'s peak, each category named by ``labels`` (:func:`category_labels`: the job's kind)."""
    return Table(title or f"What holds GPU {g.gpu}'s memory at its peak",
                 ["op", "holds", "size", "allocations"],
                 [[h.name, category_label(h.category, labels), gb(h.bytes), h.count] for h in g.top])


def fraction(share_name: str) -> float:
    return float(T(share_name))
