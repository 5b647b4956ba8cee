"""§2 item 1 / memory: a loop keeps bytes every pass that nothing frees (a leak).

A loop's allocated level between its passes is flat: each training iteration, each forward pass of an evaluation or
inference loop, frees what it made.  A tensor kept past its pass -- outputs appended to a list, a loss summed without
``.item()`` (the sum holds each iteration's graph) -- raises that level by the same bytes every pass until the GPU
runs out.  Metric (``GpuMemory.leak_*``, ``metrics.memory._leak``): the blocks each of ``memory.leak.min_iterations``
or more passes allocates at the same sites and sizes -- or at one line, more bytes each pass (a leak that grows) --
and the history never frees, while the level between passes rises by them.  Severity (``memory.leak.warn_passes``, its own: the leak's share of the peak when the history ends
says how long the recording ran, not how soon the job runs out): a warning where the leak adds the allocated peak's
bytes again within that many passes, info where it takes longer.  Saving: the kept bytes live at the allocated peak.
A forward-only job (inference, serving) reads "pass" and gets its own fix (``memory_leak@inference``: no
``.item()`` of a loss it has none of).  The leak's bytes are live at the peak, so where ``memory_near_capacity``
fires on the same GPU its levers and this saving may count the same bytes: the finding says so.  In a snapshot of
unknown capacity the count is to the peak again, and the finding says the capacity is unknown and how to record it.
"""

from __future__ import annotations

from tb_gpu_advisor.common.fmt import gb, plural
from tb_gpu_advisor.metrics.types import GpuMemory, HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules import _memory as mem
from tb_gpu_advisor.rules.base import Ctx, T, finding, grade, pct, rule, value_metric

ID = "memory_leak"


@rule(ID, "§2 item 1", "Every iteration keeps bytes nothing frees (a leak)",
      thresholds=("memory.leak.min_iterations", "memory.leak.min_bytes", "memory.leak.warn_passes"))
def check(m: HostMetrics) -> list[Finding]:
    cands = [g for g in m.memory.gpus if g.leak_iterations and g.peak_allocated_bytes]
    if not cands:
        return []
    g = max(cands, key=lambda c: c.leak_end_bytes)
    ctx = Ctx(m)
    share = g.leak_bytes / g.peak_allocated_bytes
    passes = g.peak_allocated_bytes / g.leak_per_iteration_bytes
    sev = "warning" if passes <= T("memory.leak.warn_passes") else "info"
    # a snapshot records no capacity: "the peak again" is all it can count to, said so with how to record it (issue
    # #37 deliverable 5: every finding of a snapshot of unknown capacity says that, the leak's did not -- snap70)
    unknown = bool(m.memory.snapshot) and g.capacity_bytes is None
    unit, units, loop = (("pass", "passes", "A forward-only loop") if mem.forward_only(m)
                         else ("iteration", "iterations", "A training loop"))
    sites = _site_words(ctx, g)
    return [finding(
        ctx, ID, sev,
        f"GPU {g.gpu}'s allocated level between {units} rises {_rise_words(g, unit, units)}: each of {g.leak_iterations} {units} allocates {plural(g.leak_blocks, 'block')} "
        f"({sites}) that the history never frees{_before_words(g, units)} -- {gb(g.leak_end_bytes)} kept when it "
        f"ends, {gb(g.leak_bytes)} "
        f"({pct(share)}) of the {gb(g.peak_allocated_bytes)} peak. {loop} frees what each {unit} makes; these bytes "
        f"grow with every {unit} until the GPU runs out: another {gb(g.peak_allocated_bytes)} (the peak again) in "
        f"{passes:,.0f} more {units}{_rate_words(g, unit)}.{_beside_capacity(m, g)}"
        + (" " + mem.CAPACITY_UNKNOWN if unknown else ""),
        metric=value_metric("leak_passes", f"{units.capitalize()} in which the leak adds the peak again", passes,
            "count", f"{passes:,.0f}",
            "memory.leak.warn_passes", severity=sev,
            detail={"leak_bytes": g.leak_bytes, "leak_end_bytes": g.leak_end_bytes, "leak_share": round(share, 4),
                    "per_iteration_bytes": g.leak_per_iteration_bytes,
                    "first_iteration_bytes": g.leak_first_iteration_bytes,
                    "iterations_before_history": g.leak_earlier_iterations,
                    "iterations": g.leak_iterations, "blocks_per_iteration": g.leak_blocks,
                    "sites": list(g.leak_sites), "gpu": g.gpu}),
        evidence=[mem.gpu_table(cands, ctx)],
        windows=mem.peak_window(m, g, "memory peak"),
        actions=ctx.fw.fix(ID) + (_record_stacks(ctx, m) if not g.leak_sites else [])
        + (ctx.fw.extra(f"{ID}:capacity_unknown") if unknown else []),
        saving_bytes=g.leak_bytes,
        title=f"Every {unit} keeps bytes nothing frees (a leak)",  # the job's own unit: a forward-only loop has no iteration
    )]


def _site_words(ctx: Ctx, g: GpuMemory) -> str:
    """The lines that allocated the kept blocks, or -- where no frame names any (a history recorded without stacks:
    the leak is read from its sizes and its iterations' pattern alone) -- the framework's words saying so and how to
    record them.  Why: the finding said "allocates 1 block ()" and nothing of where (h37-probe45k)."""
    if not g.leak_sites:
        return ctx.fw.label("leak_site:unnamed")
    return ", ".join(g.leak_sites[:3]) + (" and more" if len(g.leak_sites) > 3 else "")


def _record_stacks(ctx: Ctx, m: HostMetrics) -> list:
    """The framework's fix that records the allocator's history with its stacks (the capture note's), for a leak
    whose site no frame names."""
    return ctx.fw.fix("capture_quality:no_stacks_2.0" if m.memory.snapshot_layout in ("2.0", "2.0 or older")
                      else "capture_quality:no_stacks")


def _growing(g: GpuMemory) -> bool:
    """The leak keeps more bytes each pass (its first pass's below its last's)."""
    return 0 < g.leak_first_iteration_bytes < g.leak_per_iteration_bytes


def _rise_words(g: GpuMemory, unit: str, units: str) -> str:
    """How the level rises: by the same bytes every pass, or by more each pass (first and last said)."""
    if not _growing(g):
        return f"by {gb(g.leak_per_iteration_bytes)} every {unit}"
    return (f"by more every {unit}: {gb(g.leak_first_iteration_bytes)} in the first of its {units} and "
            f"{gb(g.leak_per_iteration_bytes)} in the last (a leak that grows: what it keeps each {unit} grows -- "
            f"a shape, a sequence, a batch)")


def _rate_words(g: GpuMemory, unit: str) -> str:
    """The count of passes to the peak again is at the last pass's rate: a growing leak gets there sooner."""
    return f" at the last {unit}'s rate, fewer as it grows" if _growing(g) else ""


def _before_words(g: GpuMemory, units: str) -> str:
    """Where the history begins late (a full ring buffer): the earlier passes the leak's count holds, read from the
    blocks live at the dump, not from events."""
    n = g.leak_earlier_iterations
    if not n:
        return ""
    bytes_ = "fewer bytes each (the leak grows)" if _growing(g) else "the same bytes"
    return (f" ({n} of those {units} ran before the history's first event -- a full ring buffer (max_entries) "
            f"dropped their events, or the recording began late -- and their blocks, made at the same lines with "
            f"{bytes_}, are live at the dump)")


def _beside_capacity(m: HostMetrics, g: GpuMemory) -> str:
    """The overlap with ``memory_near_capacity`` on the same GPU, in words: the leak's bytes live at the peak are
    among those that finding's levers (the bytes held across passes, the activations) free, so the two savings are
    not to be added.  Said where the capacity is known and the peak is near it (that rule's own test)."""
    near = [x for x in mem.absolute(m, without_oom=True) if x.gpu == g.gpu
            and grade(mem.use_share(x) or 0.0, "memory.near_capacity.warning", "memory.near_capacity.critical")]
    if not near:
        return ""
    return (f" The {gb(g.leak_bytes)} it keeps at the peak are among the bytes the peak near capacity holds: that "
            "finding's savings and this one overlap, they do not add.")
