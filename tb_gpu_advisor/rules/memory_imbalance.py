"""§2 item 5 / memory: one process's GPUs hold unequal memory -- the fullest one sets the batch every GPU can run.

A process that drives several GPUs (``nn.DataParallel``'s replicas; a model split across devices) is limited by its
fullest GPU: it runs out of memory first, while the others keep room they cannot use.  Under DataParallel GPU 0 also
holds the module's master copy and gathers every replica's outputs, and a batch split by count puts more bytes on
one GPU where its items differ in size.  Only a memory snapshot says the GPUs are one process's (a trace per rank
holds one rank each; ``gpu_imbalance`` weighs their compute).  Metric: the fullest GPU's allocated peak / the median
of the others' peaks, among the GPUs whose peak reaches ``memory.imbalance.min_bytes`` (a GPU touched by a few
tensors runs none of the work).  Saving: the bytes the fullest GPU holds above the GPUs' mean -- what balancing
moves off it.  Fixes: DataParallel's where the allocations' frames run through it -- the first GPU fullest
(``:data_parallel``): DistributedDataParallel, the loss inside the replicas' forward; another (``:data_parallel_split``):
the batch split by bytes, not count -- else balancing the model's or the batch's split.
"""

from __future__ import annotations


from tb_gpu_advisor.common.fmt import gb
from tb_gpu_advisor.metrics.multigpu import peer_median
from tb_gpu_advisor.metrics.types import HostMetrics
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
    top = max(gpus, key=lambda g: g.peak_allocated_bytes)
    others = [g.peak_allocated_bytes for g in gpus if g is not top]
    median = peer_median({g.gpu: g.peak_allocated_bytes for g in gpus}, top.gpu)  # gpu_imbalance's, of memory
    ratio = top.peak_allocated_bytes / median
    sev = grade(ratio, "memory.imbalance.warning", "memory.imbalance.critical")
    if sev is None:
        return []
    ctx = Ctx(m)
    mean = sum(g.peak_allocated_bytes for g in gpus) / len(gpus)
    frees = int(top.peak_allocated_bytes - mean)
    how = ("nn.DataParallel's replicas of one module" if m.memory.data_parallel
           else "the GPUs of one process")
    text = (f"GPU {top.gpu} peaks at {gb(top.peak_allocated_bytes)} allocated, {ratio:.1f}x the median "
            f"{gb(median)} of the process's other {len(others)} GPU{'s' if len(others) > 1 else ''} "
            f"({', '.join(f'GPU {g.gpu} {gb(g.peak_allocated_bytes)}' for g in gpus if g is not top)}): {how} hold "
            f"unequal bytes, and the fullest runs out of memory first while the others keep room. Balanced at the "
            f"GPUs' mean ({gb(mean)}), GPU {top.gpu} would hold {gb(frees)} less.")
    variant = ID
    if m.memory.data_parallel and top.gpu == min(g.gpu for g in gpus):
        variant = f"{ID}:data_parallel"
        text += (" The fullest is the first GPU: DataParallel's output device, which holds the module's master copy "
                 "and gathers every replica's outputs.")
    elif m.memory.data_parallel:
        variant = f"{ID}:data_parallel_split"
        text += (" The fullest is not the first GPU (the output device, which holds the master copy and the gathered "
                 "outputs): its replica made more than the others, most likely because its share of the batch holds more bytes.")
    rows = [[g.gpu, gb(g.peak_allocated_bytes), f"{g.peak_allocated_bytes / mean:.2f}", mem.when(g, ctx)]
            for g in sorted(gpus, key=lambda g: -g.peak_allocated_bytes)]
    return [finding(
        ctx, ID, sev, text,
        metric=value_metric("memory_imbalance", "Fullest GPU's peak / the others' median", round(ratio, 3), "ratio",
                            f"{ratio:.1f}x", "memory.imbalance.warning", severity=sev,
                            meaning="the fullest GPU's allocated peak / the median of the process's other GPUs' peaks",
                            detail={"gpu": top.gpu, "peak_allocated_bytes": top.peak_allocated_bytes,
                                    "median_bytes": int(median), "mean_bytes": int(mean),
                                    "data_parallel": m.memory.data_parallel}),
        evidence=[Table("Each GPU's allocated peak (fullest first)", ["gpu", "peak allocated", "/ mean", "peak at"],
                        rows)],
        windows=mem.peak_window(m, top, "memory peak"),
        actions=ctx.fw.fix(variant),
        gpu=top.gpu, saving_bytes=frees,
    )]
