"""§2 item 1 / memory: the device allocator inside steady steps -- ``cudaMalloc`` / ``cudaFree`` every iteration.

A framework's caching allocator (PyTorch's, XLA's BFC, TF's) asks the driver for memory during warm-up and then reuses
it; each ``cudaFree`` synchronizes the whole device.  When the cache is off (``PYTORCH_NO_CUDA_MEMORY_CACHING=1``, a
debugging setting left on), or shapes change every step so blocks never fit, or the program empties the cache itself
(``torch.cuda.empty_cache()`` in its loop: at least half the steps' ``cudaFree`` calls inside its own call, a Python
frame or a range, ``metrics.capture.cache_release``; the fix is then to drop that call), the step pays for the driver's
allocator: the GPU idles while the host is inside those calls.  Metric: that idle time (the breakdown's ``allocator``)
as a share of the step.  One-time allocations of a cold start are the cold-start check's (painted first).
Saving: the allocator's idle time (the calls gone from steady steps).  Where the trace records the allocator's events
(``profile_memory=True``), the evidence says how often per step its reserved bytes moved: each move is a segment the
caching allocator asked the driver for, or gave back.
"""

from __future__ import annotations

from tb_gpu_advisor.common.fmt import gb, ms
from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding, Table
from tb_gpu_advisor.rules.base import Ctx, finding, pct, rule, saving, share_metric, step_windows

ID = "allocator_churn"


@rule(ID, "§2 item 1", "The device allocator runs inside every step (cudaMalloc / cudaFree churn)",
      thresholds=("allocator_churn.warning", "allocator_churn.critical"), waits=("allocator",))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    idle = m.breakdown.allocator
    if m.breakdown.startup > 0 and ctx.steps < 2 and not _asked_again(m):
        # the one step of a cold capture: its first allocations are the start-up's (cold_start), not churn -- unless
        # it gives memory back and asks for it again (h37-hostalloc32: ParallelKernelsTest's tests each pin and free)
        return []
    graded = ctx.graded(idle, "allocator_churn.warning", "allocator_churn.critical")
    if graded is None:
        return []
    share, sev = graded
    moves = [g for g in m.memory.gpus if g.reserved_changes_per_step is not None]
    churn = max(moves, key=lambda g: g.reserved_changes_per_step, default=None)
    seen = (f" The allocator's reserved memory moves {churn.reserved_changes_per_step:.1f} times {ctx.a_step} on GPU "
            f"{churn.gpu} (segments asked for and given back)." if churn and churn.reserved_changes_per_step else "")
    evidence = [Table("The caching allocator's segments per step (profile_memory)",
                      ["GPU", "reserved changes / step", "peak reserved", "peak allocated"],
                      [[g.gpu, round(g.reserved_changes_per_step, 2), gb(g.peak_reserved_bytes),
                        gb(g.peak_allocated_bytes)] for g in moves])] if moves else []
    emptied = _emptied_by_program(m, *((f"the {ctx.step_noun}", f"the {ctx.step_noun}'s") if ctx.one_pass else ()))
    pinned = _pinned(m, ctx)
    if pinned:
        said = (f"The GPU idles {ctx.part_of_step(idle)} ({pct(share)}) while the host is inside the driver's "
                f"allocator, most of it page-locking host memory: {pinned}")
        fix, title = f"{ID}:pinned", f"Pinned host memory is allocated and freed inside {ctx.the_pass_or('every step')}"
    else:
        said = (f"The GPU idles {ctx.part_of_step(idle)} ({pct(share)}) while the host is inside the device "
                f"allocator's own calls (cudaMalloc / cudaFree; every free synchronizes the device): "
                f"{emptied or f'the caching allocator is off, or blocks never fit because shapes change {_every(ctx)}.'}")
        fix = f"{ID}:empty_cache" if emptied else ID
        # one unmarked pass holds no step to be "every step" of (h37-words20: cold_a100_alexnet's one pass)
        title = f"The device allocator runs inside {ctx.the_pass_or('every step')} (cudaMalloc / cudaFree churn)"
    return [finding(
        ctx, ID, sev, f"{said}{seen}",
        evidence=evidence,
        metric=share_metric("allocator_share", "GPU idle in allocator calls", share, "allocator_churn.warning",
                            severity=sev, detail={"allocator_ms_per_step": idle}),
        saving=saving(ctx, idle, f"the allocator's calls leave {_steady(ctx)} (memory cached and reused)",
                      [("allocator", "allocator", idle)]),
        windows=step_windows(ctx, key=lambda s: s.breakdown.allocator, label="allocator"),
        actions=ctx.fw.fix(fix), title=title,
    )]


def _blames_pinned(m: HostMetrics) -> bool:
    """Whether pinned host memory takes most of the allocator's host time: the finding's reading is then the pins'."""
    ac = m.alloc_calls
    return bool(ac.pinned) and ac.pinned_ms > ac.device_ms


def _asked_again(m: HostMetrics) -> int:
    """How many allocations of the kind the finding blames (pinned host memory where it takes most of the time, else
    device memory) follow a free of that kind: memory given back and asked for again.

    Why that kind's: a one-pass capture churns only where the memory it blames is given back and taken again; a
    start-up that pins its buffers once (after a ``cudaFree`` of device memory) and frees them at exit allocated each
    once (hunt70b: NCCL's communicator set-up, ``metrics.capture._after_free``)."""
    ac = m.alloc_calls
    return ac.pinned_reallocs if _blames_pinned(m) else ac.reallocs - ac.pinned_reallocs


def _pinned(m: HostMetrics, ctx: Ctx) -> str:
    """Where pinned host memory takes most of the allocator's host time, what the steps call and for how long, else "".

    Why: page-locking host memory (``cudaHostAlloc``) and giving it back (``cudaFreeHost``) is the driver's allocator
    as much as ``cudaMalloc`` is, but no caching allocator is off there: the program pins its buffers where it uses
    them, and the fix is to pin them once and reuse them (h37-hostalloc32).  The calls are the trace's own names, so a
    HIP program reads ``hipHostMalloc``.

    Per step where the capture holds several, as the GPU's idle beside them is ("9.00 ms of each 15.1 ms step"): the
    calls are counted over all the kept steps, and their sum read "take 54.0 ms of the host's time in the steps" next
    to a 15.1 ms step -- a part larger than its whole on one line (h37-review33)."""
    ac = m.alloc_calls
    if not _blames_pinned(m):
        return ""
    each = 1 if ctx.one_step else m.steps.count  # the host's own calls: per kept step, never shared among GPUs
    calls = ", ".join(f"{n} ×{_count(c / max(each, 1))}" for n, c in ac.pinned.items())
    device = f"; device memory's own calls {ms(m.per_step(ac.device_ms, shared=False))}" if ac.device_ms > 0 else ""
    took = f"{ms(m.per_step(ac.pinned_ms, shared=False))} of the host's time"
    said = (f"{calls} take {took} in {ctx.the_pass_or('the step')}" if ctx.one_step else
            f"each step calls {calls}, {took}")
    return (f"{said}{device}. "
            f"The program takes pinned buffers and gives them back where it uses them, instead of allocating them "
            f"once and reusing them.")


def _count(n: float) -> str:
    """A count of calls a step: whole where it is ("1"), else to one decimal ("1.5": a call every other step)."""
    return f"{round(n):,}" if abs(n - round(n)) < 0.05 else f"{n:,.1f}"


def _every(ctx: Ctx) -> str:
    """How often shapes change for the allocator to churn: "every step"; "within the pass" where the capture holds one
    unmarked pass (h37-onepass2: no step repeats in it for a shape to change at)."""
    return ctx.pass_or("within the {step}", "every step")


def _steady(ctx: Ctx) -> str:
    """What the allocator's calls leave once memory is cached: "the steady steps"; "the pass" where the capture holds one
    (h37-onepass2: a one-pass report has no steady steps to speak of, only the pass its numbers are of)."""
    return ctx.the_pass_or("the steady steps")


def _emptied_by_program(m: HostMetrics, of: str = "the steps", whose: str = "the steps'") -> str:
    """Why the allocator churns where the program empties its cache itself, else "" (``of`` / ``whose``: the window's
    words, "the pass" / "the pass's" where the capture holds one).

    A caching allocator frees device memory only when told to (or when an allocation fails): when at least half the
    steps' driver frees run inside the program's own release call, that call is the cause -- it hands the cache
    back, and the next pass asks the driver for the memory again -- and turning a cache back on that is on fixes
    nothing."""
    cr = m.cache_release
    if not cr.released or 2 * cr.released < cr.frees:
        return ""
    if cr.frees == 1:
        which = f"{whose} one cudaFree call runs"
    elif cr.released == cr.frees:
        which = f"all {cr.frees} cudaFree calls of {of} run"
    else:
        which = f"{cr.released} of {whose} {cr.frees} cudaFree calls run"
    return (f"the program empties the allocator's cache itself: {which} inside its own `{cr.names[0]}`, and the next "
            f"pass asks the driver for that memory again.")
