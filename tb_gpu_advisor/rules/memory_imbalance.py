"""§2 item 5 / memory: one process's GPUs hold unequal memory -- the fullest one sets the batch every GPU can run.

A process that drives several GPUs (``nn.DataParallel``'s replicas; a model split across devices) is limited by its
fullest GPU: it runs out of memory first, while the others keep room they cannot use.  Under DataParallel GPU 0 also
holds the module's master copy and gathers every replica's outputs, and a batch split by count puts more bytes on
one GPU where its items differ in size.  Only a memory snapshot says the GPUs are one process's (a trace per rank
holds one rank each; ``gpu_imbalance`` weighs their compute).  Metric: the fullest GPU's allocated peak / the median
of the others' peaks, among the GPUs whose peak reaches ``memory.imbalance.min_bytes`` (a GPU touched by a few
tensors runs none of the work).  Where the allocated peaks pass no bound, the same ratio of the reserve in segments
holding an allocated block (``peak_reserved_in_use_bytes``, read only where every GPU's segments are known): the
caching allocator's split blocks on one GPU are bytes it cannot hand back before an OOM (its wholly free segments it
can, so they are not counted), and that GPU runs out first though every GPU allocates alike; the finding says which it
read (``detail.reads``), and its fix is the allocator's (``:reserved``: expandable segments).  Saving: the bytes the
fullest GPU holds above the GPUs' mean -- what balancing moves off it.  Fixes: DataParallel's where the allocations'
frames run through it -- the first GPU fullest (``:data_parallel``): DistributedDataParallel, the loss inside the
replicas' forward; another (``:data_parallel_split``): the batch split by bytes, not count -- else balancing the
model's or the batch's split.
"""

from __future__ import annotations

from typing import Callable

from tb_gpu_advisor.common.fmt import gb
from tb_gpu_advisor.metrics.multigpu import peer_median
from tb_gpu_advisor.metrics.types import GpuMemory, HostMetrics
from tb_gpu_advisor.model.schema import Finding, Table
from tb_gpu_advisor.rules import _memory as mem
from tb_gpu_advisor.rules.base import Ctx, T, finding, grade, rule, value_metric

ID = "memory_imbalance"


@rule(ID, "§2 item 5", "One GPU holds far more memory than the process's other GPUs: the fullest sets the batch",
      thresholds=("memory.imbalance.warning", "memory.imbalance.critical", "memory.imbalance.min_bytes"))
def check(m: HostMetrics) -> list[Finding]:
    if not m.memory.snapshot:
        return []
    gpus = [g for g in m.memory.gpus
            if g.baseline == "absolute" and g.peak_allocated_bytes >= T("memory.imbalance.min_bytes")]
    if len(gpus) < 2:
        return []
    held = _read(gpus, _allocated)
    if held is None and all(g.peak_reserved_in_use_bytes for g in gpus):
        held = _read(gpus, _in_use)  # equal allocations, unequal reserves: one GPU's split, cached blocks
    if held is None:
        return []
    of, top, median, ratio, sev = held
    ctx = Ctx(m)
    mean = sum(of(g) for g in gpus) / len(gpus)
    frees = int(of(top) - mean)
    how = ctx.fw.label("memory_imbalance:replicas" if m.memory.data_parallel else "memory_imbalance:gpus")
    others = ", ".join(f"GPU {g.gpu} {gb(of(g))}" for g in gpus if g is not top)
    n = len(gpus) - 1
    if of is _allocated:
        text = (f"GPU {top.gpu} peaks at {gb(of(top))} allocated, {ratio:.1f}x the median {gb(median)} of the "
                f"process's other {n} GPU{'s' if n > 1 else ''} ({others}): {how} hold unequal bytes, and the fullest "
                f"runs out of memory first while the others keep room. Balanced at the GPUs' mean ({gb(mean)}), "
                f"GPU {top.gpu} would hold {gb(frees)} less.")
    else:
        near = _allocated(top) / peer_median({g.gpu: _allocated(g) for g in gpus}, top.gpu)
        text = (f"GPU {top.gpu} reserves up to {gb(of(top))} in segments that hold an allocated block, {ratio:.1f}x the "
                f"median {gb(median)} of the process's other {n} GPU{'s' if n > 1 else ''} ({others}), though its "
                f"allocated peak ({gb(_allocated(top))}) is {near:.2f}x theirs: {how} allocate alike, but "
                f"{ctx.fw.label('memory_imbalance:split_blocks', gpu=top.gpu)}. Balanced at the GPUs' mean ({gb(mean)}), GPU {top.gpu} "
                f"would hold {gb(frees)} less.")
    variant = ID
    if of is _in_use:
        variant = f"{ID}:reserved"
    elif m.memory.data_parallel and top.gpu == min(g.gpu for g in gpus):
        variant = f"{ID}:data_parallel"
        text += " " + ctx.fw.label("memory_imbalance:first_gpu")
    elif m.memory.data_parallel:
        variant = f"{ID}:data_parallel_split"
        text += " " + ctx.fw.label("memory_imbalance:other_gpu")
    reserve = all(g.peak_reserved_in_use_bytes for g in gpus)
    rows = [[g.gpu, gb(g.peak_allocated_bytes)] + ([gb(g.peak_reserved_in_use_bytes)] if reserve else [])
            + [f"{of(g) / mean:.2f}", mem.when(g, ctx)] for g in sorted(gpus, key=lambda g: -of(g))]
    reads = "allocated" if of is _allocated else "reserved_in_use"
    return [finding(
        ctx, ID, sev, text,
        metric=value_metric("memory_imbalance", "Fullest GPU's peak / the others' median", round(ratio, 3), "ratio",
                            f"{ratio:.1f}x", "memory.imbalance.warning", severity=sev,
                            meaning=f"the fullest GPU's {_MEANING[reads]} / the median of the process's other GPUs'",
                            detail={"gpu": top.gpu, "reads": reads, "peak_allocated_bytes": top.peak_allocated_bytes,
                                    "peak_reserved_in_use_bytes": top.peak_reserved_in_use_bytes,
                                    "median_bytes": int(median), "mean_bytes": int(mean),
                                    "data_parallel": m.memory.data_parallel}),
        evidence=[Table(f"Each GPU's {_MEANING[reads]} (fullest first)",
                        ["gpu", "peak allocated"] + (["peak reserved in use"] if reserve else []) + ["/ mean", "peak at"],
                        rows)],
        windows=mem.peak_window(m, top, "memory peak"),
        actions=ctx.fw.fix(variant),
        gpu=top.gpu, saving_bytes=frees,
    )]


_MEANING = {"allocated": "allocated peak",
            "reserved_in_use": "peak reserved in segments in use"}


def _allocated(g: GpuMemory) -> int:
    return g.peak_allocated_bytes


def _in_use(g: GpuMemory) -> int:
    """The most the GPU's allocator held in segments with an allocated block: what it cannot hand back before an
    OOM (its wholly free segments it can), so what a GPU runs out of first."""
    return g.peak_reserved_in_use_bytes or 0


def _read(gpus: list[GpuMemory], of: Callable[[GpuMemory], int]):
    """(of, the fullest GPU by ``of``, the others' median, the ratio, its severity), or None below the warning."""
    top = max(gpus, key=of)
    median = peer_median({g.gpu: of(g) for g in gpus}, top.gpu)  # gpu_imbalance's median, of memory
    ratio = of(top) / median if median > 0 else float("inf")
    sev = grade(ratio, "memory.imbalance.warning", "memory.imbalance.critical")
    return None if sev is None else (of, top, median, ratio, sev)
