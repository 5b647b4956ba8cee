"""Several GPUs on one host: per-GPU summaries, imbalance, collectives, AllReduce estimate, launch skew, concurrency."""

from __future__ import annotations

import re

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.metrics import breakdown as bd
from tb_gpu_advisor.metrics.breakdown import NONE_MS, StepArrays, average_matrix
from tb_gpu_advisor.metrics.comm import call_groups, in_windows, ran_into_steps, transfer_ms
from tb_gpu_advisor.metrics.context import PS_PER_MS, Context
from tb_gpu_advisor.metrics.types import BREAKDOWN_CATEGORIES, Breakdown, GpuMetrics, MultiGpu
from tb_gpu_advisor.model.columns import subtract_intervals, union_by_key, union_intervals

_ALLREDUCE = re.compile(r"all_?reduce", re.I)




#: ``launch_thread_private`` holds when at least this share of a GPU's launch records come from tf_gpu_private_* threads.
PRIVATE_LAUNCH_MAJORITY = 0.5


def _step_times(ctx: Context, ids: list[int], per_gpu: dict[int, StepArrays], attr: str) -> np.ndarray:
    """(len(ids), steps) matrix of the StepArrays column ``attr`` (``first_kernel_ms``...), NaN where a GPU has
    no such event in a step (or fewer steps)."""
    n = ctx.steps.count
    t = np.full((len(ids), n), np.nan)
    for i, gid in enumerate(ids):
        col = getattr(per_gpu[gid], attr)[:n]
        t[i, :col.shape[0]] = np.where(col == NONE_MS, np.nan, col)
    return t


def start_offsets(ctx: Context, per_gpu: dict[int, StepArrays], attr: str) -> dict[int, float]:
    """Active GPU -> mean over steps of (its ``attr`` time - the earliest active GPU's ``attr`` time in that step), ms.

    Only steps where at least two active GPUs have a value count; GPUs without any such step are left out.
    """
    ids = [g.d.gpu for g in ctx.active if g.d.gpu in per_gpu]
    n = ctx.steps.count
    if len(ids) < 2 or n == 0:
        return {}
    t = _step_times(ctx, ids, per_gpu, attr)  # (gpus, steps)
    ok = (~np.isnan(t)).sum(axis=0) >= 2
    if not ok.any():
        return {}
    rel = t[:, ok] - np.nanmin(t[:, ok], axis=0)
    cnt = (~np.isnan(rel)).sum(axis=1)
    tot = np.nansum(rel, axis=1)
    return {gid: float(tot[i] / cnt[i]) for i, gid in enumerate(ids) if cnt[i]}


def _in_step(ctx: Context, per_gpu: dict[int, StepArrays]) -> bool:
    """The active GPUs' steps keep in step (``breakdown.in_lockstep``) and their processes did not run in turn
    (:func:`processes_in_turn`): a skew of their starts is a delay each step."""
    return (bd.in_lockstep([per_gpu[g.d.gpu] for g in ctx.active if g.d.gpu in per_gpu])
            and not processes_in_turn(ctx, [g.d.gpu for g in ctx.active]))


def processes_in_turn(ctx: Context, ids: list[int]) -> bool:
    """Whether the active GPUs ``ids``, each driven by a process of its own (:func:`one_process_per_gpu`), ran in turn:
    one GPU's work in the kept steps (kernels, copies, collectives) had all ended before another's began.

    Why: a late rank delays its peers only while they are still at work -- waiting in its collective; a process done
    before another began waited for nothing, so the spread of their starts is no delay (4 ranks 31 ms apart, each done
    before the next began, read as one pass: "the GPUs start each step up to 94.2 ms apart", critical, saving 64% of
    the pass, walk ``--forms`` seed 30061).  Ranks that run together, a step apart or not, overlap in their work and
    keep their skew.  One process driving its GPUs in turn is ``sequential_gpus``' cause, not this."""
    if not one_process_per_gpu(ctx, ids):
        return False
    spans = []
    for g in ctx.gpus:
        m = g.step >= 0
        if g.d.gpu in ids and m.any():
            spans.append((int(g.d.start[m].min()), int(g.d.end[m].max())))
    return len(spans) >= 2 and min(e for _, e in spans) <= max(s for s, _ in spans)


def private_launch_share(ctx: Context, g) -> float | None:
    """Share of this GPU's launch records (in kept steps) issued from ``tf_gpu_private_*`` threads; None without any."""
    rec = g.launch[(g.launch >= 0) & (g.step >= 0)]
    if rec.size == 0:
        rec = g.launch[g.launch >= 0]
    if rec.size == 0:
        return None
    priv_line = np.fromiter((x.startswith("tf_gpu_private") for x in ctx.h.line_names), dtype=bool, count=len(ctx.h.line_names))
    return float(priv_line[ctx.h.line[rec]].mean())


def gpu_metrics(ctx: Context, per_gpu: dict[int, StepArrays]) -> list[GpuMetrics]:
    """Per-GPU summaries; ``per_gpu``: each GPU's per-step columns (its StepMetrics rows, as arrays)."""
    out = []
    # GPUs out of step (ranks drifting apart) start no step "late": the spread of their starts is the drift
    together = _in_step(ctx, per_gpu)
    k_off = start_offsets(ctx, per_gpu, "first_kernel_ms") if together else {}
    l_off = start_offsets(ctx, per_gpu, "first_launch_ms") if together else {}
    for g in ctx.gpus:
        d, info = g.d, g.d.info
        arr = per_gpu.get(d.gpu)
        steps = arr.step.shape[0] if arr is not None else 0
        inside = g.step >= 0
        coll = inside & (d.kind == devices.KIND_COLLECTIVE)
        # the AllReduce time inside the kept steps: the calls that start there and those that started before and run
        # into them (a long call from a dropped step holds a whole kept step's AllReduce: ``comm.ran_into_steps``)
        ar = _allreduce_rows(g) | _allreduce_rows(g, before=True)
        priv = private_launch_share(ctx, g)
        # Python sums over the rows' values, in step order (as a sum over StepMetrics rows)
        step_ms = sum(arr.step_ms.tolist()) / steps if steps else None
        # a memory snapshot records no GPU work: its GPUs' activity is unknown, not zero
        busy = sum(arr.busy.tolist()) / steps if steps and ctx.trace.snapshot is None else None
        out.append(GpuMetrics(
            gpu=d.gpu, name=info.name or unnamed_device(ctx, d.gpu), rank=ctx.trace.gpu_ranks.get(d.gpu),
            compute_capability="{}.{}".format(*info.compute_capability) if info.compute_capability else None, sm_count=info.sm_count,
            memory_bandwidth_bytes_per_s=info.memory_bandwidth, memory_size_bytes=info.memory_bytes,
            active=g.active, kernel_count=int((inside & (d.kind == devices.KIND_KERNEL)).sum()), step_ms=step_ms,
            busy_ms_per_step=busy, busy_share=(busy / step_ms) if (step_ms and busy is not None) else None,
            breakdown=average_matrix(arr.mat) if steps else Breakdown(), collective_calls_per_step=ctx.per_step(int(coll.sum()), shared=False),
            allreduce_ms_per_step=ctx.per_step(_clipped_ms(g, ar), shared=False) if ar.any() else (0.0 if g.active else None),
            allreduce_bytes_per_step=(ctx.params * 4.0 if (ctx.params and ar.any()) else None),
            first_kernel_offset_ms=k_off.get(d.gpu), first_launch_offset_ms=l_off.get(d.gpu),
            launch_thread_private=(priv >= PRIVATE_LAUNCH_MAJORITY) if priv is not None else None,
            shares=g.shares,
        ))
    return out


def memory_only_gpus(ctx: Context) -> list[GpuMetrics]:
    """The GPUs known only by their memory (``Trace.memory_devices``): each as the file describes it, with no step time,
    activity or kernels -- their work was not recorded, so none of it is counted (not zero: unknown)."""
    return [GpuMetrics(gpu=g, name=info.name or unnamed_device(ctx, g), rank=ctx.trace.gpu_ranks.get(g),
                       compute_capability="{}.{}".format(*info.compute_capability) if info.compute_capability else None,
                       sm_count=info.sm_count, memory_bandwidth_bytes_per_s=info.memory_bandwidth,
                       memory_size_bytes=info.memory_bytes, active=False, kernel_count=0, step_ms=None,
                       busy_ms_per_step=None, busy_share=None, shares=False, memory_only=True)
            for g, info in sorted(ctx.trace.memory_devices.items())]


def _clipped_ms(g, mask: np.ndarray) -> float:  # noqa: ANN001 - a GpuCtx
    """The time of a GPU's events ``mask`` inside its kept steps' windows, ms (``comm.in_windows``: as the ledger)."""
    cs, ce = in_windows(g, np.flatnonzero(mask))
    return float((ce - cs).sum()) / PS_PER_MS


def _allreduce_rows(g, before: bool = False) -> np.ndarray:  # noqa: ANN001 - a GpuCtx
    """A GPU's AllReduce kernels in the kept steps (by name), as a mask of its device events; ``before``: those that
    start before the kept steps and run into them instead (``comm.ran_into_steps``: their time there is the type's)."""
    d = g.d
    ar_names = np.fromiter((bool(_ALLREDUCE.search(x)) for x in d.names), dtype=bool, count=len(d.names))
    ar = (d.kind == devices.KIND_COLLECTIVE) & (ar_names[d.name] if len(d) else np.zeros(0, bool))
    if not before:
        return ar & (g.step >= 0)
    out = np.zeros(len(d), dtype=bool)
    out[ran_into_steps(g, ar)] = True
    return out


def _allreduce_transfer(ctx: Context, gpus: list[GpuMetrics]) -> float | None:
    """The AllReduce's transfer per step on the host's active GPUs: the least time any GPU spends in each call, summed
    (``comm.transfer_ms``), else the least GPU's total; None without AllReduce time."""
    arms = [g.allreduce_ms_per_step for g in gpus if g.active and g.allreduce_ms_per_step is not None]
    if not arms:
        return None
    calls = []
    codes: dict[str, int] = {}
    for g in ctx.active:
        ar = np.flatnonzero(_allreduce_rows(g))
        cs, ce = in_windows(g, ar)
        calls.append((g.step[ar], g.d.start[ar], g.d.end[ar], call_groups(ctx, g, ar, codes), ce - cs))
    n = max(ctx.steps.count, 1)
    return ctx.per_step(transfer_ms([a * n for a in arms], calls), shared=False) if len(calls) == len(arms) else min(arms)


def compute_held_gpus(ctx: Context) -> set[int]:
    """The active GPUs whose compute per step the kept steps can tell: all but a GPU that ran compute kernels in the
    window and none inside its kept steps.  Its 0 ms a step is not a GPU doing less work but steps that hold none of
    it (ranks reaching one iteration at their own times, the steps cut elsewhere): set beside the others' compute it
    read as a 100% imbalance (h37-walk24, ``--forms12`` seed 70368: GPU0 ran 15 GEMMs, none in its kept steps).  A
    GPU that ran no compute kernel at all in the window stays: its 0 is what it did."""
    held = set()
    for g in ctx.gpus:
        kernels = g.d.kind == devices.KIND_KERNEL
        if g.active and (not kernels.any() or (kernels & (g.step >= 0)).any()):
            held.add(g.d.gpu)
    return held


def _kernels_by_name(g) -> dict[str, np.ndarray]:  # noqa: ANN001 - a GpuCtx
    """A GPU's compute kernels in its kept steps: name -> their durations (ps), in the order they started."""
    d = g.d
    m = np.flatnonzero((d.kind == devices.KIND_KERNEL) & (g.step >= 0))
    if not len(m):
        return {}
    nid, start, dur = d.name[m], d.start[m], d.end[m] - d.start[m]
    o = np.lexsort((start, nid))
    nid, dur = nid[o], dur[o]
    cuts = np.flatnonzero(np.diff(nid)) + 1
    return {d.names[int(nid[i])]: part for i, part in zip(np.r_[0, cuts], np.split(dur, cuts))}


#: how many kernels' longest calls a GPU states (``MultiGpu.longest_calls``): a size bound of the report, no judgement
LONGEST_CALLS = 16


def longest_calls(ctx: Context) -> dict[int, list]:
    """Per active GPU, its kernels' longest single calls in the kept steps, longest first, at most
    :data:`LONGEST_CALLS`: ``[kernel, call index (0-based among that kernel's calls), ms, calls of the kernel, that
    call's ms per step]`` -- what matches one slow call across host files (``rules.rank_straggler``; within one host
    :func:`largest_call_excess` matches every call)."""
    out: dict[int, list] = {}
    for g in ctx.active:
        rows = []
        for name, durs in _kernels_by_name(g).items():
            i = int(np.argmax(durs))
            call_ms = float(durs[i]) / PS_PER_MS
            rows.append([name, i, call_ms, int(durs.size), ctx.per_step(call_ms, shared=False)])
        rows.sort(key=lambda r: -r[2])
        out[g.d.gpu] = rows[:LONGEST_CALLS]
    return out


#: how many kernels' times a GPU states (``MultiGpu.kernel_times``): a size bound of the report, no judgement
KERNEL_TIMES = 16


def kernel_times(ctx: Context) -> dict[int, list]:
    """Per active GPU, its compute kernels' summed time in the kept steps, ms per step, largest first, at most
    :data:`KERNEL_TIMES`: ``[kernel, ms per step]`` -- what places a rank's compute gap by kernel across host files
    (``metrics.job.kernel_gap``; within one host :func:`gap_by_kernel` reads every kernel)."""
    n = ctx.steps.count
    out: dict[int, list] = {}
    for g in ctx.active:
        rows = sorted(([k, v] for k, v in _kernel_ms(g, n).items()), key=lambda r: -r[1])
        out[g.d.gpu] = rows[:KERNEL_TIMES]
    return out


def peer_median(values: dict[int, float], gpu: int) -> float:
    """The median of the other GPUs' values (``values``: GPU -> its compute ms per step, its allocated peak): what
    ``gpu`` is judged against, by ``gpu_imbalance`` (its compute) and ``memory_imbalance`` (its memory) alike.
    numpy's median: ``statistics`` is no import the command line pays for (``tests/cli/test_cli_lazy_imports.py``)."""
    return float(np.median([v for g, v in values.items() if g != gpu]))


def busiest_over_peers(compute: dict[int, float]) -> tuple[int, float] | None:
    """The GPU whose compute most exceeds the median of its peers', and that median (``compute``: GPU -> ms per step);
    None with fewer than two GPUs.

    Why the median of the others, not the lightest GPU: with 3+ GPUs the busiest against the lightest read one fast GPU
    among 8 as seven slow ones (8 DDP ranks, rank 3 at 0.6x: "GPU0 computes 2.39 ms vs 2.26 ms on average for the
    other 7 GPUs (39.3% imbalance)") -- each GPU waits only for the GPUs slower than it, so one slow GPU is a
    straggler, and one fast GPU delays nobody (h37-ranks58).  With two GPUs the median of the other is the other."""
    if len(compute) < 2:
        return None
    gpu = max(compute, key=lambda g: (compute[g] - peer_median(compute, g), compute[g]))
    return gpu, peer_median(compute, gpu)


def compute_imbalance(compute: dict[int, float]) -> float | None:
    """(busiest - the median of its peers) / busiest of the GPUs' compute ms per step (:func:`busiest_over_peers`);
    None with fewer than two GPUs or no compute."""
    top = busiest_over_peers(compute)
    if top is None or compute[top[0]] <= 0:
        return None
    return max(0.0, (compute[top[0]] - top[1]) / compute[top[0]])


def _kernel_ms(g, n: int) -> dict[str, float]:  # noqa: ANN001 - a GpuCtx
    """A GPU's compute kernels' summed time in its kept steps, ms per step (``n`` steps)."""
    return {k: float(v.sum()) / PS_PER_MS / max(n, 1) for k, v in _kernels_by_name(g).items()}


#: how many kernels the compute gap names (``MultiGpu.gap_by_kernel``): a size bound of the report, no judgement
GAP_KERNELS = 3


def gap_by_kernel(ctx: Context, compute: dict[int, float]) -> dict | None:
    """Where the busiest GPU's compute gap over the median of its peers (:func:`busiest_over_peers`) lies, by kernel:
    ``{"gpu", "kernels": [[kernel, ms per step more than the median peer's time in it], ...] (the largest
    :data:`GAP_KERNELS`, largest first), "more_kernels" (how many kernels it spends longer in), "more_ms" (their sum
    per step), "less_ms" (its time less than the median peer's in the others, per step: the kernels' parts are not
    the gap's, which is their net)}`` -- a kernel a GPU does not run counts 0 ms there.  Facts only (``rules.gpu_imbalance`` names them);
    None without a gap."""
    top = busiest_over_peers(compute)
    if top is None or compute[top[0]] <= top[1]:
        return None
    by = {g.d.gpu: g for g in ctx.gpus}
    if any(g not in by for g in compute):
        return None
    n = ctx.steps.count
    mine = _kernel_ms(by[top[0]], n)
    peers = [_kernel_ms(by[g], n) for g in compute if g != top[0]]
    names = set(mine).union(*peers)
    diff = sorted(((k, mine.get(k, 0.0) - float(np.median([p.get(k, 0.0) for p in peers]))) for k in names),
                  key=lambda kv: -kv[1])
    more = [[k, v] for k, v in diff if v > 0]
    if not more:
        return None
    return {"gpu": top[0], "kernels": more[:GAP_KERNELS], "more_kernels": len(more),
            "more_ms": float(sum(v for _, v in more)), "less_ms": float(-sum(v for _, v in diff if v < 0))}


def largest_call_excess(ctx: Context, compute: dict[int, float]) -> dict | None:
    """Facts of the compute gap between the busiest GPU and the median of its peers (``compute``: GPU -> compute ms
    per step; :func:`busiest_over_peers`): the single largest excess of one call of one of the busiest GPU's kernels
    over the same kernel's same call on its peers (matched by name and call order in the kept steps; with 3+ GPUs the
    median of the peers' same call), named -- ``{"gpu", "peer_gpu" (the other GPU; None where several), "peers" (how
    many), "kernel", "call" (its 0-based index among that kernel's calls on the GPU), "calls" (how many it ran), "ms",
    "peer_ms" (that call on each), "excess_ms" (per step), "gap_ms" (the GPU's compute over its peers' median, per
    step), "compute_ms", "peer_compute_ms" (the GPU's and its peers' median, per step)}``.  Kernels a peer does not run
    are the busiest GPU's extra work and never the excess.  None where fewer than two GPUs compare, the gap is none,
    or no matched call ran longer on the busiest.

    Facts only: whether the gap is that one call (a first call's autotuning or module load, a clock dip: work that
    differs between ranks repeats) is the rule's judgement (``rules.gpu_imbalance``; h37-imb56, h37-ranks57)."""
    top = busiest_over_peers(compute)
    if top is None or max(compute.values()) <= 0:
        return None
    heavy, median = top
    gap = compute[heavy] - median
    if gap <= 0:
        return None
    by = {g.d.gpu: g for g in ctx.gpus}
    peers = [g for g in compute if g != heavy]
    if heavy not in by or any(g not in by for g in peers):
        return None
    mine, theirs = _kernels_by_name(by[heavy]), [_kernels_by_name(by[g]) for g in peers]
    best = None
    for name, a in mine.items():
        bs = [t.get(name) for t in theirs]
        if any(b is None for b in bs):
            continue
        k = min(len(a), *(len(b) for b in bs))
        if not k:
            continue
        b = np.median(np.stack([x[:k] for x in bs]), axis=0)
        ex = a[:k] - b
        i = int(np.argmax(ex))
        if ex[i] > 0 and (best is None or ex[i] > best[1]):
            best = (name, float(ex[i]), int(a[i]), float(b[i]), i, len(a))
    if best is None:
        return None
    name, ex_ps, a_ps, b_ps, i, n = best
    return {"gpu": heavy, "peer_gpu": peers[0] if len(peers) == 1 else None, "peers": len(peers), "kernel": name,
            "call": i, "calls": n, "ms": a_ps / PS_PER_MS, "peer_ms": b_ps / PS_PER_MS,
            "excess_ms": ctx.per_step(ex_ps / PS_PER_MS, shared=False), "gap_ms": gap,
            "compute_ms": compute[heavy], "peer_compute_ms": median}


def multi_gpu(ctx: Context, gpus: list[GpuMetrics], per_gpu: dict[int, StepArrays]) -> MultiGpu:
    act = [g for g in gpus if g.active]
    ids = [g.gpu for g in act]
    skews, lskews, order_votes, skew_steps = _skews(ctx, ids, per_gpu) if _in_step(ctx, per_gpu) else ([], [], {}, [])
    conc, span = concurrency(ctx)
    busy = {g.gpu: g.busy_ms_per_step for g in act if g.busy_ms_per_step is not None}
    held = compute_held_gpus(ctx)
    compute = {g.gpu: g.breakdown.device_compute for g in act if g.gpu in held}
    stepms = [g.step_ms for g in act if g.step_ms is not None]
    shares = [g.busy_share for g in act if g.busy_share is not None]
    coll = [g.collective_calls_per_step for g in act if g.collective_calls_per_step is not None]
    arms = [g.allreduce_ms_per_step for g in act if g.allreduce_ms_per_step is not None]
    params, psrc = (ctx.params, "user") if ctx.params else (None, "")
    first = next((g for g in act if g.compute_capability), None)
    bw, bsrc = (devices.link_bandwidth(first.name, first.compute_capability) or devices.PCIE_BANDWIDTH) \
        if first is not None else (None, "")
    dev_copies = dev_copy_ms = 0.0
    for g in ctx.gpus:
        d = g.d
        m = (g.step >= 0) & (d.kind == devices.KIND_D2D)
        dev_copies += int(m.sum())
        dev_copy_ms += float((d.end[m] - d.start[m]).sum()) / PS_PER_MS
    return MultiGpu(
        gpu_count=len(gpus), active_gpus=ids, idle_gpus=[g.gpu for g in gpus if not g.active],
        step_ms_max=max(stepms) if stepms else None, step_ms_min=min(stepms) if stepms else None,
        busy_share_max=max(shares) if shares else None, busy_share_min=min(shares) if shares else None,
        busy_imbalance=((max(busy.values()) - min(busy.values())) / max(busy.values())) if len(busy) >= 2 and max(busy.values()) > 0 else None,
        heaviest_gpu=max(busy, key=busy.get) if busy else None,
        compute_imbalance=compute_imbalance(compute),
        heaviest_compute_gpu=(busiest_over_peers(compute) or (max(compute, key=compute.get),))[0] if compute else None,
        compute_peer_median_ms=(busiest_over_peers(compute) or (None, None))[1], compute_gpus=sorted(compute),
        largest_call_excess=largest_call_excess(ctx, compute), gap_by_kernel=gap_by_kernel(ctx, compute),
        longest_calls=longest_calls(ctx), kernel_times=kernel_times(ctx),
        collective_calls_per_gpu_step=sum(coll) / len(coll) if coll else None,
        allreduce_ms_per_step=sum(arms) / len(arms) if arms else None, allreduce_bytes_per_step=(params * 4.0 if params else None),
        allreduce_transfer_ms_per_step=_allreduce_transfer(ctx, gpus),
        params=params, params_source=psrc, bandwidth_bytes_per_s=bw, bandwidth_source=bsrc,
        expected_allreduce_ms=(params * 4.0 / bw * 1000.0) if (params and bw) else None,
        launch_skew_ms=sum(skews) / len(skews) if skews else None, launch_order_skew_ms=sum(lskews) / len(lskews) if lskews else None,
        launch_skew_steps=skew_steps, launch_skew_by_step=skews,
        first_gpu_order=list(max(order_votes, key=order_votes.get)) if order_votes else [],
        concurrency=conc, sequential=(conc < 0.2) if conc is not None else None, step_span_ms=span,
        peer_wait_ledger_ms=peer_waits(ctx) if conc is not None and conc < T("sequential_gpus.warning") else {},
        device_copies_per_step=ctx.per_step(dev_copies), device_copy_ms_per_step=ctx.per_step(dev_copy_ms),
        one_process_per_gpu=one_process_per_gpu(ctx, ids), processes=processes(ctx, _driven(ctx)),
        job_ranks=ctx.trace.world_size, job_ranks_from=ctx.trace.world_size_from,
    )


def one_process_per_gpu(ctx: Context, ids: list[int]) -> bool:
    """Whether each of the active GPUs ``ids`` (two or more) is driven by its own process: the format names the host
    lines of each GPU's process (``Trace.gpu_host_lines``) and no two GPUs share a line.  Why: the ranks of a DDP job
    run one process per GPU, so their GPUs idle in turn only when a rank waits for its peers -- never because one
    Python thread moves the work from GPU to GPU, which is what ``sequential_gpus`` reports."""
    lines = ctx.trace.gpu_host_lines
    if len(ids) < 2 or any(g not in lines or not len(lines[g]) for g in ids):
        return False
    own = [np.unique(lines[g]) for g in ids]
    return int(np.unique(np.concatenate(own)).size) == sum(int(x.size) for x in own)


def _driven(ctx: Context) -> list[int]:
    """The GPUs some process drove: any record on the device -- a kernel, a copy, a memset -- was put there by a
    process.  "Active" GPUs are those with kernels (the compute metrics' GPUs); a window whose GPU ran one copy still
    has a process driving it (startup_climate_unet: one memset, ``processes`` 0 before, h37-left37)."""
    return [g.d.gpu for g in ctx.gpus if len(g.d)]


def processes(ctx: Context, ids: list[int]) -> int:
    """How many processes drive the active GPUs ``ids``: GPUs whose host lines (``Trace.gpu_host_lines``) overlap
    are one process's; a format that names no lines per GPU has one process drive them all.  Why: a rank is a
    process, not a GPU -- one TensorFlow process driving 8 GPUs under MirroredStrategy is one worker with 8 replicas,
    and a report that called them "8 ranks" would send its reader to look for processes that do not exist.  Where no
    lines are named but the trace states each GPU's job rank (``Trace.gpu_ranks``: a fused file filtered to its GPU
    events, its ranks read from ``args.rank``), GPUs of different ranks are different processes -- a rank is one
    process of the job -- and GPUs of no stated rank one more."""
    lines = ctx.trace.gpu_host_lines
    if not ids:
        return 0
    if not lines:
        ranks = {ctx.trace.gpu_ranks[g] for g in ids if g in ctx.trace.gpu_ranks}
        return max(1, len(ranks) + any(g not in ctx.trace.gpu_ranks for g in ids))
    groups: list[set[int]] = []
    for g in ids:
        own = set(np.unique(lines.get(g, np.zeros(0, np.int64))).tolist())
        if not own:  # a GPU the format names no process for: a process of its own, as far as the trace tells
            groups.append(set())
            continue
        joined = [x for x in groups if x & own]
        for x in joined:
            groups.remove(x)
            own |= x
        groups.append(own)
    return len(groups)


def _skews(ctx: Context, ids: list[int], per_gpu: dict[int, StepArrays]) \
        -> tuple[list[float], list[float], dict[tuple, int], list[int]]:
    """Per step with at least two of the GPUs ``ids`` having one: the spread of first kernel starts, of first
    launches, and votes for the order the GPUs launched in (ties in ``ids`` order), steps in order; and the ids of
    the steps the first spread is over -- a part of those steps, not of every kept one (h37-lawseeds)."""
    if not ids:
        return [], [], {}, []
    fk = _step_times(ctx, ids, per_gpu, "first_kernel_ms")
    fl = _step_times(ctx, ids, per_gpu, "first_launch_ms")
    out, twos = [], []
    for t in (fk, fl):
        ok = ~np.isnan(t)
        two = ok.sum(axis=0) >= 2
        spread = np.where(ok, t, -np.inf).max(axis=0) - np.where(ok, t, np.inf).min(axis=0)
        out.append(spread[two].tolist())
        twos.append(two)
    measured = _kept_ids(ctx)[twos[0]].tolist()
    ok = ~np.isnan(fl)
    cnt = ok.sum(axis=0)
    order = np.argsort(np.where(ok, fl, np.inf), axis=0, kind="stable").T  # per step: GPUs by first launch
    votes: dict[tuple, int] = {}
    gid = np.asarray(ids)
    for c, o in zip(cnt.tolist(), order):
        if c >= 2:
            key = tuple(gid[o[:c]].tolist())
            votes[key] = votes.get(key, 0) + 1
    return out[0], out[1], votes, measured


def _kept_ids(ctx: Context) -> np.ndarray:
    """The kept steps' ids, one per column of ``_step_times``' matrix (column k is kept step k on every GPU).  Why
    not a GPU's own step column: a GPU with fewer step rows than the kept steps has a shorter one, and the measured
    steps read from it were none -- every kept step then counted as measured (h37-skewfall)."""
    return np.asarray(ctx.steps.ids[:ctx.steps.count], dtype=np.int64)


def concurrency(ctx: Context) -> tuple[float | None, float | None]:
    """(concurrency, step span ms) of the active GPUs' own work, averaged over kept steps.

    Per step and active GPU: busy = union of its kernels and copies inside its step window (collectives left
    out: they wait for every peer, so they overlap by construction and say nothing about the replicas' work).
    Per step: concurrency = (sum of busy - union of all GPUs' busy) / (sum of busy - max busy), i.e. the
    overlapped time over the most overlap possible: 1 when every GPU's work runs inside the busiest GPU's,
    0 when no two GPUs are ever busy together.  Steps with fewer than two busy GPUs are skipped.
    Span: mean over steps of (latest end - earliest start) of the active GPUs' step windows (= the step time
    for host-defined steps; longer when per-GPU windows are apart in time, as on TF 2.4 grouped captures).
    """
    n = ctx.steps.count
    act = ctx.active
    if n == 0 or not act:
        return None, None
    lo = np.min(np.stack([g.windows[:n, 0] for g in act]), axis=0)
    hi = np.max(np.stack([g.windows[:n, 1] for g in act]), axis=0)
    span = float((hi - lo).mean()) / PS_PER_MS
    if len(act) < 2:
        return None, span
    keys, starts, ends, busy = [], [], [], []
    for g in act:  # one pass per GPU, vectorized over its events
        d = g.d
        m = (g.step >= 0) & (d.kind != devices.KIND_COLLECTIVE)
        st = g.step[m]
        s = np.maximum(d.start[m], g.windows[st, 0])
        e = np.minimum(d.end[m], g.windows[st, 1])
        k, s, e = union_by_key(st, s, e)
        busy.append(np.bincount(k, weights=(e - s).astype(np.float64), minlength=n)[:n])
        keys.append(k); starts.append(s); ends.append(e)
    b = np.stack(busy)  # (gpus, steps) ps
    k, s, e = union_by_key(np.concatenate(keys), np.concatenate(starts), np.concatenate(ends))
    union = np.bincount(k, weights=(e - s).astype(np.float64), minlength=n)[:n]
    total = b.sum(axis=0)
    room = total - b.max(axis=0)
    ok = ((b > 0).sum(axis=0) >= 2) & (room > 0)
    if not ok.any():
        return None, span
    c = np.clip((total[ok] - union[ok]) / room[ok], 0.0, 1.0)
    return float(c.mean()), span


def peer_waits(ctx: Context) -> dict[str, float]:
    """Per breakdown category, ms per kept step and active GPU: each GPU idle inside its own steps while another GPU
    runs its work, as the step ledger books that time (host-caused idle only, :data:`breakdown.HOST_IDLE`).

    What running the replicas concurrently can give back of a GPU's step (issue #36): where each GPU's step windows
    lie apart in time (TF 2.4 grouped captures: GPU:6 runs its step 650 ms after GPU:4), a GPU never waits inside its
    own step and the turn-taking costs wall time outside every step; where the GPUs share the host's windows, the
    waits are in each GPU's step, booked as whatever the host did meanwhile."""
    act = ctx.active
    n = ctx.steps.count
    if len(act) < 2 or not n:
        return {}
    busy = [bd.busy_not_collective(ctx, g) for g in act]  # collectives wait for every peer: nothing of turn-taking
    tot = np.zeros(len(BREAKDOWN_CATEGORIES))
    for i, g in enumerate(act):
        others = [b for j, b in enumerate(busy) if j != i]
        os_, oe = union_intervals(np.concatenate([b[0] for b in others]), np.concatenate([b[1] for b in others]))
        s, e = subtract_intervals(os_, oe, *busy[i])
        tot += bd.ledger_of(ctx, g, s, e) if s.size else 0.0
    tot /= PS_PER_MS * n * len(act)
    return {c: float(tot[i]) for i, c in enumerate(BREAKDOWN_CATEGORIES) if c in bd.HOST_IDLE and tot[i] > 0}


def unnamed_device(ctx: Context, gpu: int) -> str:
    """The name of a device its capture does not name: ``GPU:<n>``, in the words of the build a memory snapshot's
    frames or streams name (``MemorySnapshot.vendor``: ``NPU:0`` for torch_npu's, ``device:0`` where it names none)
    -- a snapshot records no device by name, and "GPU:0" beside findings of "NPU 0" contradicted them (h37-wild57m)."""
    vendor = ctx.trace.snapshot.vendor if ctx.trace.snapshot is not None else None
    return devices.vendor_called(vendor).words(f"GPU:{gpu}") if vendor else f"GPU:{gpu}"
