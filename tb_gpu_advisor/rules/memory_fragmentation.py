"""§2 item 1 / memory: the allocator holds far more than the most ever allocated at once (fragmentation).

A caching allocator keeps freed blocks for reuse; when requests of changing sizes split its segments, a free block
no longer fits a later request and a new segment is asked for -- reserved memory grows past anything allocated at
once, and an OOM can come with gigabytes reserved but unused.  Metric: (peak reserved - peak allocated) / peak
reserved (``memory.fragmentation.share``), fired when that gap is also ``memory.fragmentation.min_share`` of the GPU.
Warning from ``memory.pressure.warning`` of the GPU in use, info below.  Saving: the gap, in bytes (expandable
segments let freed space serve a request of any size).  A GPU known only by its state at the dump (a snapshot without
history: no event) is not judged: the most ever allocated at once is not in it, and the free bytes at the dump may be
the cache of an earlier, higher use rather than split blocks (Maphsge4/select_n's 3 GiB wholly free segment); nor is
one whose history never takes allocated memory above its level at the history's start (its peak is older than it),
nor one whose gap is whole empty segments (the cache of an earlier, larger use: no split block).
"""

from __future__ import annotations

from tb_gpu_advisor.common.fmt import gb
from tb_gpu_advisor.metrics.types import GpuMemory, HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules import _memory as mem
from tb_gpu_advisor.rules.base import Ctx, T, finding, pct, rule, share_metric

ID = "memory_fragmentation"


@rule(ID, "§2 item 1", "The allocator reserves far more than is ever allocated at once (fragmentation)",
      thresholds=("memory.fragmentation.share", "memory.fragmentation.min_share", "memory.pressure.warning"))
def check(m: HostMetrics) -> list[Finding]:
    cands = []
    for g in mem.totals(m, without_oom=True):
        if not g.gap_bytes or not g.peak_reserved_bytes or not g.events or _peak_before_history(g):
            continue  # no history: the peak allocated is unknown, the gap at the dump may be an earlier use's cache
        share = g.gap_bytes / g.peak_reserved_bytes
        if _fragmented(g, g.gap_bytes, g.peak_reserved_bytes) and not _whole_segments_only(g) \
                and not _rounding_only(g):
            cands.append((g.gap_bytes, share, g))
    if not cands:
        return []
    gap, share, g = max(cands, key=lambda c: c[0])
    ctx = Ctx(m)
    known = g.capacity_bytes is not None
    use = mem.use_share(g) or 0.0
    sev = "warning" if known and use >= T("memory.pressure.warning") else "info"
    expandable = m.memory.settings.get("expandable_segments") is True
    already = " The snapshot's allocator already uses expandable segments: the gap is the cache of freed blocks." \
        if expandable else ""
    return [finding(
        ctx, ID, sev,
        f"GPU {g.gpu} reserves up to {gb(g.peak_reserved_bytes)} from the driver but never has more than "
        f"{gb(g.peak_allocated_bytes)} allocated at once: {gb(gap)} ({pct(share)} of what it reserves"
        + (f", {pct(gap / g.capacity_bytes)} of the GPU) sit in split, cached blocks no later request fits. With "
           f"{pct(use)} of the GPU reserved, that gap is memory a larger batch cannot use." if known else
           f") sit in split, cached blocks no later request fits: memory a larger batch cannot use. "
           f"{mem.CAPACITY_UNKNOWN}") + already,
        metric=share_metric("fragmentation_share", "Reserved beyond the allocated peak", share,
                            "memory.fragmentation.share", severity=sev,
                            detail={"gap_bytes": gap, "peak_reserved_bytes": g.peak_reserved_bytes,
                                    "peak_allocated_bytes": g.peak_allocated_bytes, "capacity_bytes": g.capacity_bytes,
                                    "gpu": g.gpu}),
        evidence=[mem.gpu_table([c[2] for c in cands], ctx)],
        windows=mem.peak_window(m, g, "memory peak"),
        actions=([] if expandable else ctx.fw.fix(ID)) + ([] if known else ctx.fw.extra(f"{ID}:capacity_unknown")),
        saving_bytes=gap,
    )]


def _peak_before_history(g: GpuMemory) -> bool:
    """Whether nothing the history recorded took allocated memory above its level when the history began: then the
    most ever allocated at once was reached before it (a history of frees only, recording started just before the
    dump), and the reserve beside it is the cache of that unrecorded use, no evidence of split blocks
    (jogregoire/How-Diffusion-Models-Work ``my_snapshot.pickle``: one free in its history)."""
    return g.start_bytes is not None and g.peak_allocated_bytes <= g.start_bytes


def _fragmented(g: GpuMemory, gap: int, reserved: int) -> bool:
    """Whether a gap of ``gap`` bytes beside ``reserved`` passes both bounds: its share of the reserve, and of the GPU
    (of the reserve where its capacity is unknown)."""
    return (gap / reserved >= T("memory.fragmentation.share")
            and gap / (g.capacity_bytes or reserved) >= T("memory.fragmentation.min_share"))


def _whole_segments_only(g: GpuMemory) -> bool:
    """Whether, with the segments known, the reserve beyond the allocated peak is whole empty segments: counted only
    in segments that hold a block (``peak_reserved_in_use_bytes``), the gap passes no bound.  Why: a whole free
    segment is no split block -- any request up to its size fits it, and ``empty_cache()`` hands it back -- but the
    cache of an earlier, larger use in the same process (a benchmark sweep's previous, longer sequence: sungdk0822's
    CS336 attention snapshots: 31.5 of 31.6 GiB reserved in wholly free segments at the dump, beside a 1.59 GiB peak,
    read as 30 GiB "in split, cached blocks" with expandable segments as the fix; h37-survey49)."""
    in_use = g.peak_reserved_in_use_bytes
    if in_use is None or not g.peak_allocated_bytes:
        return False
    return not _fragmented(g, max(in_use - g.peak_allocated_bytes, 0), max(in_use, 1))


def _rounding_only(g: GpuMemory) -> bool:
    """Whether the reserve beyond what the allocator's own segment sizes require for the peak's blocks
    (``reserve_floor_bytes``) passes no bound.  Why: a segment the allocator rounds a request up to is no split block
    -- no allocator with those sizes holds the blocks in less -- yet beside a small program's peak it is a large
    share of the reserve, and with capacity unknown the share of the reserve is the only bound (sungdk0822's CS336
    attention sweep, d=16 at 256 tokens: 7.2 MiB of a 22 MiB reserve, one 20 MiB segment for 2 MiB tensors and one 2
    MiB for small ones, read as "split, cached blocks"; h37-snapleft)."""
    floor = g.reserve_floor_bytes
    if floor is None or not g.peak_reserved_bytes:
        return False
    return not _fragmented(g, max(g.peak_reserved_bytes - floor, 0), g.peak_reserved_bytes)
