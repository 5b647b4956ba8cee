"""Kernel statistics: per (kernel, op), precision, Tensor Cores, small kernels, fusion candidates."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from tb_gpu_advisor import devices, frameworks
from tb_gpu_advisor.frameworks import xla
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.metrics.comm import in_windows, ran_into_steps
from tb_gpu_advisor.metrics.context import PS_PER_MS, PS_PER_US, Context, distinct_ids
from tb_gpu_advisor.metrics.types import (ElementwiseChain, Fusion, KernelDurations, KernelStat, SmallKernelOffender,
                                          SmallKernels)
from tb_gpu_advisor.model.columns import shared_durations, union_intervals, unique_inverse


def _kernel_mask(g) -> np.ndarray:
    """Kernel (not copy) events of a GPU inside kept steps; collectives are kernels too."""
    return (g.step >= 0) & ((g.d.kind == devices.KIND_KERNEL) | (g.d.kind == devices.KIND_COLLECTIVE))


_BRACKETS = re.compile(r"\[([0-9,\s]*)\]")


def shape_dims(text: str | None) -> list[int] | None:
    """Distinct dimension sizes of every ``type[d0,d1,...]`` tensor in a shape / long-name string, first-seen order.

    ``"(half[256,1001];half[1001,1001])"`` -> ``[256, 1001]``; ``"%dot = f16[8,1001]{1,0} dot(...)"`` -> ``[8, 1001]``.
    Layouts in braces are ignored; ``None`` when no bracketed dims are found (scalars ``f32[]`` give no dims).
    """
    if not text:
        return None
    out: list[int] = []
    for grp in _BRACKETS.findall(text):
        for tok in grp.split(","):
            tok = tok.strip()
            if tok.isdigit() and int(tok) not in out:
                out.append(int(tok))
    return out or None


def _dominant_sid(inv: np.ndarray, sid: np.ndarray, nkeys: int) -> np.ndarray:
    """Per key (``inv`` in [0, nkeys)): the most frequent non-negative string id, the smallest on a tie, -1 if none.

    Each (key, string) pair is the one integer ``key * len(strings) + rank of the string``, so counting the pairs
    sorts one int64 column: ``np.unique(..., axis=0)`` of the stacked pairs sorted them as opaque records, 0.3 s of
    the 100 MB stats-shape capture's analysis."""
    best = np.full(nkeys, -1, dtype=np.int64)
    ok = sid >= 0
    if not ok.any():
        return best
    usid, rank = unique_inverse(sid[ok])
    key = inv[ok].astype(np.int64, copy=False)
    key *= usid.size
    key += rank
    pair, cnt = np.unique(key, return_counts=True)  # ascending: by key, then by string id
    owner = pair // usid.size
    o = np.lexsort((-cnt, owner))  # per key, highest count first; a tie keeps the smaller string id first
    first = np.ones(o.size, dtype=bool)
    first[1:] = owner[o[1:]] != owner[o[:-1]]
    best[owner[o[first]]] = usid[pair[o[first]] % usid.size]
    return best


#: At most this many streams on a GPU: :func:`_stream_busy_until` takes each stream's events by a mask (one pass of
#: the stream column each), instead of sorting the GPU's events by stream.
_STREAM_MASKS_MAX = 32


def _stream_busy_until(d) -> np.ndarray:
    """Per device event: the latest end among the events that started before it on its stream (-1 for the first).

    A GPU's events come by start (``model.trace.DeviceEvents``), so each stream's events in index order are in the
    (start, index) order :func:`_stream_busy_until_sorted` sorts them into: a running maximum per stream, over the
    events a mask picks, gives the same values without the sort and its gathers (8 GPUs of 2.2 M events: 0.20 ->
    0.16 s; of 220 k: 18 -> 14 ms).  Events out of start order, or many streams, take the sort.
    """
    n = len(d)
    if not n:
        return np.zeros(0, dtype=np.int64)
    streams = distinct_ids(d.stream)
    if streams.size > _STREAM_MASKS_MAX or not bool((d.start[1:] >= d.start[:-1]).all()):
        return _stream_busy_until_sorted(d)
    out = np.empty(n, dtype=np.int64)
    for s in streams.tolist():
        idx = np.flatnonzero(d.stream == s) if streams.size > 1 else None
        run = np.array(d.end if idx is None else d.end[idx], dtype=np.int64)  # a copy, written in place below
        np.maximum.accumulate(run, out=run)
        prev = np.empty(run.size, dtype=np.int64)
        prev[0] = -1
        prev[1:] = run[:-1]
        del run
        if idx is None:
            out = prev
        else:
            out[idx] = prev
    return out


def _stream_busy_until_sorted(d) -> np.ndarray:
    """:func:`_stream_busy_until` for any order of the events: sorted by (stream, start) first.

    One running maximum over all streams at once: each stream's ends are shifted into a range of their own
    (stream k's above stream k-1's), so the maximum never carries across a stream boundary.
    """
    if not len(d):
        return np.zeros(0, dtype=np.int64)
    # in place where it can: a GPU's 200k events make each int64 temporary 1.7 MB, at the metrics' peak
    order = np.lexsort((d.start, d.stream))
    end = d.end[order].astype(np.int64, copy=False)
    stream = d.stream[order]
    first = np.ones(order.size, dtype=bool)
    first[1:] = stream[1:] != stream[:-1]
    del stream
    lo = int(end.min())
    offset = np.cumsum(first, dtype=np.int64)
    offset -= 1
    offset *= int(end.max()) - lo + 1
    run = end
    run -= lo
    run += offset
    np.maximum.accumulate(run, out=run)
    run -= offset
    run += lo
    del offset
    prev = np.empty(order.size, dtype=np.int64)
    prev[1:] = run[:-1]
    del run, end
    prev[first] = -1
    out = np.empty(order.size, dtype=np.int64)
    out[order] = prev
    return out


def _idle_launch_latency_us(ctx: Context, g, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(counted, latency us) of the masked device events: kernel start - launch record start, counted only when
    the kernel's stream was idle when the launch began.

    A kernel launched behind others waits for them: its start - launch is queueing (milliseconds when the host
    runs ahead, as JAX's asynchronous dispatch does), not the 20-40 us launch latency the guide compares kernel
    durations with.  Only launches onto an idle stream measure that latency.
    """
    launch = g.launch[m]
    has = launch >= 0
    launch_ps = ctx.h.start[np.clip(launch, 0, None)] if ctx.h.start.size else np.zeros(launch.size, np.int64)  # no host events
    del launch
    busy = _stream_busy_until(g.d)
    idle = busy[m] <= launch_ps
    del busy
    counted = has & idle
    latency = g.d.start[m] - launch_ps
    del launch_ps
    return counted, np.where(counted, latency / PS_PER_US, 0.0)


def kernel_stats(ctx: Context, ran_into: bool = False) -> list[KernelStat]:
    """One row per (kernel name, op name) over kept steps and all GPUs, sorted by total time.  ``ran_into``: the rows
    of the calls that started outside the kept steps and ran into them instead (:func:`_ran_into_mask`; count and
    whole time 0, their time inside the steps in ``in_steps_us``: ``HostMetrics.kernels_ran_into``)."""
    acc: dict[tuple[str, str], dict] = {}
    for g in ctx.gpus:
        d = g.d
        m = _ran_into_mask(g) if ran_into else _kernel_mask(g)
        if not m.any():
            continue
        dur = (d.end[m] - d.start[m]).astype(np.float64)
        if ran_into:  # a call run into the steps counts, and is timed whole, in the step it started in, not here
            dur[:] = 0.0
        else:
            dur /= PS_PER_US
        key = d.name[m].astype(np.int64, copy=False)
        key *= len(d.op_text) + 1
        key += d.op_idx[m]
        key += 1
        u, inv = unique_inverse(key)
        del key
        cnt = np.bincount(inv) * (0 if ran_into else 1)
        tot = np.bincount(inv, weights=dur)
        inside = _inside_us(g, m, inv, u.size)
        shared = np.bincount(inv, weights=shared_in_steps(g)[m], minlength=u.size)
        mn = np.full(u.size, np.inf)
        mx = np.zeros(u.size)
        np.minimum.at(mn, inv, dur)
        np.maximum.at(mx, inv, dur)
        del dur
        # a call run into the steps was launched before them: no latency of theirs to measure
        lm, lat = (np.zeros(inv.size, bool), np.zeros(inv.size)) if ran_into else _idle_launch_latency_us(ctx, g, m)
        lat_sum = np.bincount(inv, weights=lat)
        lat_n = np.bincount(inv[lm], minlength=u.size).astype(np.float64)  # counts: the float sums of 1.0s, exact
        del lm, lat
        prec = np.zeros(u.size, np.int8)
        prec[inv] = g.name_prec[m]
        on_mu = np.bincount(inv[g.tc[m]], minlength=u.size) * 2 > np.bincount(inv)  # most of its runs on matrix units
        shp = _dominant_sid(inv, d.shape_sid[m], u.size)
        if d.long_name_sid is not None:
            lng = _dominant_sid(inv, d.long_name_sid[m], u.size)
            shp = np.where(shp >= 0, shp, lng)
        # the rows' numbers as Python lists first: one conversion per column, not a numpy scalar per row and column
        stride = len(d.op_text) + 1
        for nid, oi, p_j, mu_j, sh_j, c_j, t_j, in_j, sd_j, mn_j, mx_j, ls_j, ln_j in zip(
                (u // stride).tolist(), (u % stride - 1).tolist(), prec.tolist(), on_mu.tolist(), shp.tolist(),
                cnt.tolist(), tot.tolist(), inside.tolist(), shared.tolist(), mn.tolist(), mx.tolist(), lat_sum.tolist(),
                lat_n.tolist()):
            nm = d.names[nid]
            ot = d.op_text[oi] if oi >= 0 else ""
            r = acc.get((nm, ot))
            if r is None:
                acc[(nm, ot)] = r = dict(count=0, total=0.0, inside=0.0, shared=0.0, mn=np.inf, mx=0.0, lat=0.0, latn=0.0, prec=p_j, gpus=set(),
                                         shape=None, mu=False)
            r["mu"] = r["mu"] or mu_j
            if r["shape"] is None and sh_j >= 0:
                r["shape"] = d.string(sh_j) or None
            r["count"] += c_j; r["total"] += t_j; r["inside"] += in_j; r["shared"] += sd_j; r["mn"] = min(r["mn"], mn_j); r["mx"] = max(r["mx"], mx_j)
            r["lat"] += ls_j; r["latn"] += ln_j; r["gpus"].add(d.gpu)
    # classified once per distinct kernel name (a name is paired with many ops), then looked up per row
    distinct = list(dict.fromkeys(k[0] for k in acc))
    where = {n: i for i, n in enumerate(distinct)}
    rows_name = np.fromiter((where[k[0]] for k in acc), dtype=np.intp, count=len(acc))
    tc, ew, col, gemm, other = (f(distinct)[rows_name] for f in (devices.tensor_core, frameworks.elementwise, devices.collective,
                                                                 frameworks.gemm_kernel, frameworks.not_gemm_kernel))
    out = []
    for i, ((nm, ot), r) in enumerate(acc.items()):
        typ = frameworks.op_type(ot)
        out.append(KernelStat(
            name=nm, op_name=frameworks.op_name(ot), op_type=typ, count=r["count"], total_us=r["total"], in_steps_us=r["inside"], shared_us=r["shared"], avg_us=r["total"] / r["count"] if r["count"] else 0.0,
            min_us=r["mn"] if r["count"] else 0.0, max_us=r["mx"], tensor_core=bool(tc[i]) or r["mu"],
            # positive: a GEMM/convolution because its library's naming says so (or it runs on the matrix units), never
            # because of the op that launched it -- a matmul op also launches copies, transposes, helper kernels
            tc_eligible=bool(gemm[i] or tc[i] or r["mu"]) and not other[i],
            precision=devices.PRECISIONS[r["prec"]], elementwise=bool(ew[i]), collective=bool(col[i]),
            launch_latency_avg_us=(r["lat"] / r["latn"]) if r["latn"] else None, gpus=sorted(r["gpus"]),
            shape=r["shape"], dims=shape_dims(r["shape"]), hlo_cast=_hlo_cast(ctx, ot, nm),
            hlo_class=_hlo_lookup(ctx.trace.xla_fusion_classes, ot, nm),
        ))
    out.sort(key=lambda k: -k.total_us)
    return out


def _hlo_cast(ctx: Context, op_text: str, kernel: str) -> bool | None:
    """Whether the XLA instruction behind a kernel only converts dtypes, where the modules' HLO says (True/False);
    None for a kernel no HLO instruction with a convert names.  The kernel's op names the instruction; where it
    names none with a convert (a command buffer's kernels carry the buffer as their op), the kernel's own name,
    which XLA takes from the instruction, does."""
    return _hlo_lookup(ctx.trace.xla_casts, op_text, kernel)


def _hlo_lookup(table: dict[str, Any], op_text: str, kernel: str) -> Any:
    """What ``table`` (keyed ``<module>/<instruction>``, from the modules' HLO) says of a kernel's instruction, None
    where it says nothing.  The kernel's op names the instruction; where it names none the table holds (a command
    buffer's kernels carry the buffer as their op), the kernel's own name, which XLA takes from the instruction, does."""
    key = xla.module_op(op_text) if table and op_text else ""
    if not key:
        return None
    got = table.get(key)
    module = key.split("/", 1)[0]
    for inst in xla.kernel_instructions(kernel) if got is None else ():
        got = table.get(f"{module}/{inst}")
        if got is not None:
            break
    return got


def _ran_into_mask(g) -> np.ndarray:  # noqa: ANN001 - a GpuCtx
    """Kernel (and collective) events of a GPU that start outside its kept steps and run into them
    (``comm.ran_into_steps``), as a mask: the ledger paints their time inside the steps, so the kernels' time by class
    must hold it too (h37-review21: two ranks' all-reduces queued before the kept steps and running through them,
    2.0 ms of the ledger's collectives a step, and no collective class at all)."""
    d = g.d
    out = np.zeros(len(d), bool)
    out[ran_into_steps(g, (d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE))] = True
    return out


def shared_in_steps(g) -> np.ndarray:  # noqa: ANN001 - a GpuCtx
    """Per device event of a GPU, us: its share of the GPU's compute-kernel time inside the kept steps' windows -- the
    kernels that run there, those run into the steps from before them too, clipped to the windows as the ledger paints
    them (``comm.in_windows``), every instant shared among the kernels running then (``model.columns.shared_durations``);
    a collective its own time inside the windows, uncut: the communication tables' time of it, one value wherever it
    is shown (its overlap with compute is the overlap they report); 0 for any other event.  Why: kernels on
    concurrent streams each ran their whole duration, but the step holds each microsecond once, so a table of kernel
    time per step (the kernel classes) sums their shares, not their durations (h37-classsum33: five streams' kernels
    read 895.6 ms in a 777.0 ms pass)."""
    memo = g.shared_memo
    if memo is not None and memo[0] is g.step and memo[1] is g.windows:
        return memo[2]
    sel = np.flatnonzero(_kernel_mask(g) | _ran_into_mask(g))
    cs, ce = in_windows(g, sel)
    share = (ce - cs).astype(np.float64)
    comp = g.d.kind[sel] == devices.KIND_KERNEL  # collectives keep their own stream's time, as the comm tables hold it
    share[comp] = shared_durations(cs[comp], ce[comp])
    out = np.zeros(len(g.d), np.float64)
    out[sel] = share / PS_PER_US
    g.shared_memo = (g.step, g.windows, out)
    return out


def _inside_us(g, m: np.ndarray, inv: np.ndarray, n: int) -> np.ndarray:  # noqa: ANN001 - a GpuCtx
    """Each of ``n`` rows' time inside the GPU's kept steps' windows, us: its kernels ``m`` (a mask; ``inv`` their
    row) clipped to the windows as the ledger paints them (``comm.in_windows``).  Why apart from the whole durations:
    a call starts in a kept step but may run past the last one (an all-reduce of 1.37 ms queued at the end of a 0.49 ms
    step), so its whole time per step is no part of the step."""
    cs, ce = in_windows(g, np.flatnonzero(m))
    return np.bincount(inv, weights=(ce - cs).astype(np.float64) / PS_PER_US, minlength=n)


def precision_totals(ctx: Context) -> dict[str, float]:
    """Kernel counts and time (ms) by precision, plus Tensor Core time, over kept steps."""
    res = {"kernel_count": 0, "kernel_ms": 0.0, "fp16_count": 0, "bf16_count": 0, "fp16_ms": 0.0, "bf16_ms": 0.0, "tc_ms": 0.0,
           "unknown_ms": 0.0, "eight_bit_ms": 0.0, "integer_data_ms": 0.0}
    for g in ctx.gpus:
        m, dur_ps = g.kernels_in_steps()
        if not dur_ps.size:
            continue
        dur = dur_ps.astype(np.float64) / PS_PER_MS
        p = g.name_prec[m]
        res["kernel_count"] += int(dur_ps.size)
        res["kernel_ms"] += float(dur.sum())
        res["fp16_count"] += int((p == devices.P_FP16).sum())
        res["bf16_count"] += int((p == devices.P_BF16).sum())
        res["fp16_ms"] += float(dur[p == devices.P_FP16].sum())
        res["bf16_ms"] += float(dur[p == devices.P_BF16].sum())
        res["tc_ms"] += float(dur[g.tc[m]].sum())
        res["unknown_ms"] += float(dur[p == devices.P_UNKNOWN].sum())
        res["integer_data_ms"] += float(dur[g.int_data[m]].sum())  # a part of the unknown: bytes typed, no arithmetic
        res["eight_bit_ms"] += float(dur[(p == devices.P_FP8) | (p == devices.P_INT8)].sum())
    return res


def _optimizer_spans(ctx: Context) -> tuple[np.ndarray, np.ndarray] | None:
    """(starts, ends) of the host's optimizer steps (``fw.step_end_event``), merged and sorted; None without one."""
    h = ctx.h
    if not len(h):
        return None
    m = h.name_mask(ctx.fw.step_end_event)
    if not m.any():
        return None
    o = np.argsort(h.start[m], kind="stable")
    starts, ends = h.start[m][o], np.maximum.accumulate(h.end[m][o])
    keep = np.ones(starts.size, dtype=bool)
    keep[1:] = starts[1:] > ends[:-1]  # a span inside the one before (Optimizer.step#X.step around X.step) merges
    first = np.flatnonzero(keep)
    last_end = np.maximum.reduceat(ends, first)
    return starts[first], last_end


def _launched_within(ctx: Context, g, mask: np.ndarray, spans: tuple[np.ndarray, np.ndarray]) -> int:  # noqa: ANN001
    """How many of ``g``'s device events under ``mask`` were launched inside ``spans`` (by their launch record)."""
    launch = g.launch[mask]
    launch = launch[launch >= 0]
    if not launch.size:
        return 0
    t = ctx.h.start[launch]
    i = np.searchsorted(spans[0], t, side="right") - 1
    return int(((i >= 0) & (t < spans[1][np.maximum(i, 0)])).sum())


#: the step readings whose each step is one of the program's own ranges (``metrics.breakdown._RANGE_STEPS``)
_RANGE_STEPS = ("nvtx_range", "nvtx_top_range")


def _step_range_texts(ctx: Context) -> set[str]:
    """The op texts of the ranges the kept steps were read from -- where each step is one of the program's own ranges
    (:data:`_RANGE_STEPS`), the longest host event opening exactly where a step's window opens; empty otherwise.

    Why: a kernel's op is the innermost range around its launch, and where the program records no op inside its
    step's range (a HIP program's roctx ``train_step`` range around its launches, read by rocprofv3; an NVTX one in
    Nsight without op ranges) the step's own range is that range: the launch-bound finding read "Top offender:
    train_step, 4 calls per step" -- the step itself named as the place inside it that launches the kernels
    (h37-amd70; h37-tiny70's class in the small kernels' table)."""
    if ctx.steps.detection.source not in _RANGE_STEPS or not ctx.steps.count:
        return set()
    h = ctx.h
    opens = np.unique(ctx.steps.host_windows[:, 0].astype(np.int64))
    at = np.flatnonzero(np.isin(h.start.astype(np.int64, copy=False), opens))
    if not at.size:
        return set()
    at = at[np.lexsort((-(h.end[at].astype(np.int64) - h.start[at].astype(np.int64)), h.start[at]))]
    first = np.concatenate([[True], h.start[at][1:] != h.start[at][:-1]])  # per opening: the longest
    return {frameworks.pytorch.op_text(h.names[int(h.name[i])]) for i in at[first].tolist()}


def small_kernels(ctx: Context, top_n: int = 10) -> SmallKernels:
    thr = T("launch.small_kernel_us")
    count = tiny = total = 0
    spans = _optimizer_spans(ctx)
    in_optimizer = 0
    time_small = time_all = 0.0
    groups: dict[tuple[str, str], list] = {}
    step_ranges: set[str] | None = None  # asked once, where a small kernel has an op
    for g in ctx.gpus:
        m, dur_ps = g.kernels_in_steps()
        if not dur_ps.size:
            continue
        d = g.d
        dur = dur_ps.astype(np.float64) / PS_PER_US  # a kernel's own length: is it small?
        inside = g.kernel_time_in_steps() / PS_PER_US  # its time in the steps: what a share or a per-step time sums
        total += int(dur_ps.size)
        time_all += float(inside.sum())
        sm = dur < thr
        count += int(sm.sum())
        tiny += int((dur < T("launch.latency_us")).sum())
        time_small += float(inside[sm].sum())
        if not sm.any():
            continue
        if spans is not None:
            small_mask = m.copy()
            small_mask[m] = sm
            in_optimizer += _launched_within(ctx, g, small_mask, spans)
        nm = d.name[m][sm]
        op = d.op_idx[m][sm]
        key = nm.astype(np.int64) * (len(d.op_text) + 1) + (op + 1)
        u, inv = unique_inverse(key)
        cnt = np.bincount(inv)
        tot = np.bincount(inv, weights=inside[sm])
        own = np.bincount(inv, weights=dur[sm])
        stride = len(d.op_text) + 1
        for nid, oi, c_j, t_j, o_j in zip((u // stride).tolist(), (u % stride - 1).tolist(), cnt.tolist(), tot.tolist(),
                                          own.tolist()):
            if oi >= 0 and step_ranges is None:
                step_ranges = _step_range_texts(ctx)
            typ = frameworks.op_type(d.op_text[oi]) if oi >= 0 and d.op_text[oi] not in step_ranges else ""
            r = groups.setdefault((d.names[nid], typ), [0, 0.0, 0.0])
            r[0] += c_j; r[1] += t_j; r[2] += o_j
    top = sorted(groups.items(), key=lambda kv: -kv[1][1])[:top_n]
    # per kept step and rank, as the step's times: a file of two ranks read "848 of 1,972 kernels per step", both GPUs'
    return SmallKernels(
        threshold_us=thr, count=count, tiny_count=tiny, share_of_kernels=(count / total) if total else None,
        time_ms=time_small / 1000.0, share_of_kernel_time=(time_small / time_all) if time_all else None,
        per_step=ctx.per_step(count), kernels_per_step=ctx.per_step(total) if ctx.steps.count else None,
        top=[SmallKernelOffender(name=devices.short_kernel_name(k[0]), op_type=k[1], count=v[0], total_ms=v[1] / 1000.0,
                                 avg_us=v[2] / v[0], per_step=ctx.per_step(v[0]), ms_per_step=ctx.per_step(v[1] / 1000.0))
             for k, v in top],
        in_optimizer_share=(in_optimizer / count) if spans is not None and count else None,
    )


def xla_evidence(ctx: Context) -> list[str]:
    """Signs that XLA compiled the work: the format's own marks (derived lines, HLO stats), then host op names."""
    ev: list[str] = list(ctx.trace.xla_evidence)
    h = ctx.h
    if len(h):
        xla_names = h.name_mask(lambda n: n.startswith(("XlaLaunch", "_XlaRun", "_XlaCompile", "XlaCompile")) or ":XlaLaunch" in n or ":_XlaRun" in n)
        if xla_names.any():
            ev.append("XlaLaunch/_XlaRun host ops")
        clus = h.name_mask(lambda n: n.startswith(("cluster_", "jit_")) or "/cluster_" in n)
        if clus.any():
            ev.append("`cluster_`/`jit_` names")
        # XLA's own ranges around each execution of a compiled module (Nsight's ``XlaModule:#...#``): XLA ran the work
        # (h37-loops2: a jitted solver under Nsight read "No XLA in this capture")
        if not ev and h.name_mask(xla.is_execution).any():
            ev.append("XLA module executions")
    return ev


def _unique_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(a, axis=0, return_index=True, return_inverse=True)`` of a 2-d int array (rows in lexicographic
    order, first occurrences, inverse), by a stable lexsort: the structured-dtype sort np.unique uses is ~10x slower."""
    o = np.lexsort(a.T[::-1])
    s = a[o]
    new = np.ones(o.size, dtype=bool)
    if o.size > 1:
        new[1:] = (s[1:] != s[:-1]).any(axis=1)
    inv = np.empty(o.size, dtype=np.intp)
    inv[o] = np.cumsum(new) - 1
    return s[new], o[new], inv


def fusion(ctx: Context, top_n: int = 5) -> Fusion:
    """Recurring chains of consecutive element-wise kernels on one stream: what a fusing compiler turns into one.

    Candidates are every element-wise kernel where no fusing compiler ran, and, where one did (JAX, TF with XLA),
    only the kernels of ops dispatched one by one (:attr:`GpuCtx.eager`): a compiled program has fused what it
    could.  A chain breaks at any other kernel on its stream, at a gap while the host was blocked in a
    runtime call (a sync, a copy): fusion does not remove a sync, and at a gap longer than a launch
    (``launch.small_kernel_us``) and than the kernels on either side of it: a chain runs back to back, and the
    host's other work between kernels milliseconds apart is no launch a fused kernel saves.  Per chain: its kernel time, the time of its
    longest kernel in each occurrence (a fused chain still moves the largest operand once), and the GPU idle
    between its kernels.  Chains end at step boundaries.
    """
    ev = xla_evidence(ctx)
    ew_count = small_ew = 0
    ew_ms = 0.0
    chains: dict[tuple, list] = {}
    bs, be = union_intervals(*ctx.blocked_spans) if ctx.blocked_spans is not None else (np.zeros(0, np.int64),) * 2
    for g in ctx.gpus:
        d = g.d
        m, dur_ps = g.kernels_in_steps()
        if not dur_ps.size:
            continue
        idx = np.flatnonzero(m)
        ew_name = ctx.by_name(frameworks.elementwise, d.names)
        ew = ew_name[d.name[idx]]
        dur_us = dur_ps / PS_PER_US
        ew_count += int(ew.sum())
        ew_ms += float(dur_us[ew].sum()) / 1000.0
        small_ew += int((ew & (dur_us < T("launch.small_kernel_us"))).sum())
        cand = ew & g.eager[idx] if ev and g.eager is not None else ew
        stream = d.stream[idx]
        for s in distinct_ids(stream):
            on = stream == s
            sel = idx[on]
            if cand[on].sum() >= 2:  # each kernel's time in the steps, where a chain may be there to sum it
                _chains_on_stream(d, sel, cand[on], g.step[sel], (bs, be), chains, top_n, g.ends_in_steps(sel))
        del stream
    top = sorted(chains.items(), key=lambda kv: -kv[1][0] * len(kv[0]))[:top_n]
    return Fusion(
        xla_in_use=bool(ev), xla_evidence=ev, elementwise_kernel_count=ew_count, elementwise_time_ms=ew_ms,
        small_elementwise_count=small_ew,
        chains=[ElementwiseChain(names=[devices.short_kernel_name(n, 60) for n in k[:12]], length=len(k), occurrences=v[0],
                                 total_ms=v[1], gap_ms=v[2], longest_ms=v[3]) for k, v in top],
    )


def _cumsum_after_zero(a: np.ndarray) -> np.ndarray:
    """``np.concatenate([[0], np.cumsum(a)])`` of an int64 or float64 column, without the concatenation's copy: the
    same additions in the same order, so the same values to the bit (0 + x is x)."""
    out = np.empty(a.size + 1, dtype=a.dtype)
    out[0] = 0
    np.cumsum(a, out=out[1:])
    return out


#: Integers below this in magnitude are exact in float64, and so is every sum of them that stays below it.
_FLOAT_EXACT = 1 << 53


def _exact_in_float(a: np.ndarray) -> bool:
    """Whether every running sum of the int column ``a`` stays below :data:`_FLOAT_EXACT` in magnitude (bounded by
    its largest magnitude times its length): then summing in int64 and converting gives float64's own sums."""
    if not a.size:
        return True
    return max(-int(a.min()), int(a.max())) * a.size < _FLOAT_EXACT


def _run_sums(sums: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """``sums[hi] - sums[lo]`` as float64, from running sums behind a 0 (:func:`_cumsum_after_zero`) kept in int64
    where exact (:func:`_exact_in_float`): the int difference of two exact sums converts to the float difference of
    the same sums, bit for bit, and int64 adds are ~10x faster than float64's (no carried latency)."""
    out = sums[hi] - sums[lo]
    return out.astype(np.float64, copy=False)


def _chains_on_stream(d, sel: np.ndarray, cand: np.ndarray, step: np.ndarray, blocked: tuple[np.ndarray, np.ndarray],
                      chains: dict[tuple, list], top_n: int, in_step_end: np.ndarray | None = None) -> None:
    """Add the recurring runs of >= 2 consecutive candidates among the kernels ``sel`` (one stream, by start) to
    ``chains`` (names -> [occurrences, kernel ms, gap ms, longest-kernel ms]).

    ``in_step_end``: each kernel's end cut where it leaves the kept steps (``GpuCtx.ends_in_steps``): a chain's
    kernel time and its longest kernel are said as parts of the step (the saving is their difference), so they are
    the time inside the steps; a kernel's whole length still decides where a chain breaks (is the gap longer than
    the kernels beside it?).  None: the whole durations."""
    if cand.sum() < 2:
        return
    # each per-kernel column (1.7 MB a column on a 200k-kernel stream) is dropped as soon as its last use is
    # past: all of them alive together were 30 MB over the analysis's held tables
    st = d.start[sel].astype(np.int64, copy=False)
    en = d.end[sel].astype(np.int64, copy=False)
    # a chain breaks at a step boundary, and where the host sat blocked in a runtime call between two kernels
    brk = np.zeros(sel.size, dtype=bool)
    brk[1:] = step[1:] != step[:-1]
    if blocked[0].size and sel.size > 1:
        j = np.searchsorted(blocked[1], en[:-1], side="right")
        jj = np.clip(j, 0, blocked[0].size - 1)
        brk[1:] |= (j < blocked[0].size) & (blocked[0][jj] < st[1:])
        del j, jj
    if sel.size > 1:
        # ... and where the GPU sat idle longer than any launch takes and longer than either kernel beside the gap: a
        # chain to fuse runs at its launches' pace (the idle between its kernels is the launches', jitter included);
        # kernels milliseconds apart have the host's other work between them, which no fused kernel removes
        # (h37-kernames: aiter's MXFP4 benchmark set-up, random-number and cast kernels of 0.04-1.2 ms 10.6 and
        # 13.7 ms apart).  A launch's own pace is no break: torch_tiny_ops' launch-bound loop idles 40-185 us
        # between 55 of its 4,510 kernels, and a break there left its 450-kernel chain no recurring run
        idle = st[1:] - en[:-1]
        brk[1:] |= (idle > T("xla.chain_break_us") * PS_PER_US) & (idle > np.maximum(en[:-1] - st[:-1],
                                                                                   en[1:] - st[1:]))
        del idle
    c8 = cand.astype(np.int8)
    edges = np.diff(np.concatenate([[0], c8, [0]]))
    del c8
    # a break inside a run of candidates ends one run and starts the next
    inner = brk & cand & np.concatenate([[False], cand[:-1]])
    del brk
    starts = np.flatnonzero((edges[:-1] == 1) | inner)
    ends_mask = np.zeros(sel.size + 1, dtype=bool)
    ends_mask[np.flatnonzero(edges == -1)] = True
    ends_mask[np.flatnonzero(inner)] = True
    del edges, inner
    ends = np.flatnonzero(ends_mask)
    del ends_mask
    rs, re_ = starts, ends[np.searchsorted(ends, starts, side="right")]
    ln = re_ - rs
    keep = ln >= 2
    rs, re_, ln = rs[keep], re_[keep], ln[keep]
    if rs.size == 0:
        return
    # the running sums below are written behind a leading 0 in place (``_after_zero``): no concatenated copies.
    # Durations and gaps are whole ps: summed in int64 where every sum is exact in float64 (_run_sums), else as floats
    dur = np.subtract(en if in_step_end is None else in_step_end, st)
    gaps = np.zeros(sel.size, dtype=np.int64)  # GPU idle before each kernel on this stream
    if sel.size > 1:
        idle = np.subtract(st[1:], en[:-1])
        np.maximum(idle, 0, out=idle)
        gaps[1:] = idle
        del idle
    del st, en
    exact = _exact_in_float(dur) and _exact_in_float(gaps)
    if not exact:
        gaps, dur = gaps.astype(np.float64), dur.astype(np.float64)
    gcs = _cumsum_after_zero(gaps)
    del gaps
    gap = _run_sums(gcs, re_, rs + 1) / PS_PER_MS
    del gcs
    durs = _cumsum_after_zero(dur)
    tot = _run_sums(durs, re_, rs) / PS_PER_MS
    del durs
    # the longest kernel of each run: reduceat over (start, end) pairs, every other result; a maximum of ints
    # converts to the maximum of their floats (the conversion keeps order)
    bounds = np.stack([rs, re_], axis=1).ravel()
    longest = np.maximum.reduceat(np.append(dur, dur.dtype.type(0)), bounds)[::2].astype(np.float64) / PS_PER_MS
    del dur, bounds
    nm = d.name[sel].astype(np.int64, copy=False)
    cs = _cumsum_after_zero(nm)
    weight = np.arange(sel.size, dtype=np.int64)
    weight %= 7
    weight += 1
    weight *= nm
    cs2 = _cumsum_after_zero(weight)
    del weight
    sig = np.stack([ln, nm[rs], nm[re_ - 1], cs[re_] - cs[rs], cs2[re_] - cs2[rs]], axis=1)
    del cs, cs2
    u, first, inv = _unique_rows(sig)
    occ = np.bincount(inv)
    tt = np.bincount(inv, weights=tot)
    gg = np.bincount(inv, weights=gap)
    ll = np.bincount(inv, weights=longest)
    for j in np.argsort(-occ * u[:, 0])[: top_n * 2]:
        r0 = int(rs[first[j]])
        names = tuple(d.names[int(x)] for x in nm[r0: r0 + int(u[j, 0])])
        r = chains.setdefault(names, [0, 0.0, 0.0, 0.0])
        r[0] += int(occ[j]); r[1] += float(tt[j]); r[2] += float(gg[j]); r[3] += float(ll[j])


def kernel_durations(ctx: Context) -> KernelDurations:
    """Log-spaced histogram of kernel durations (us) in kept steps, with the launch-latency band."""
    small_us = T("launch.small_kernel_us")
    below = [0]

    def per_gpu():
        """Each GPU's kernel durations (us) in turn: every kernel's duration at once was 8 bytes a kernel
        (13 MB on a dense 100 MB capture), twice while they were joined."""
        for g in ctx.gpus:
            d = g.kernels_in_steps()[1] / 1e6
            below[0] += int((d < small_us).sum())
            yield d

    edges = [0.0, 1, 2, 5, 10, 20, 30, 40, 60, 100, 200, 500, 1000, 2000, 5000, 10000, float("inf")]
    counts, times, n = _histogram_self_weighted(_blocks(per_gpu(), _HIST_BLOCK), np.array(edges))
    return KernelDurations(
        edges_us=edges, counts=[int(c) for c in counts], total_us=[float(t) for t in times],
        band_us=(T("launch.latency_us"), small_us), below_band_count=below[0], count=n,
    )


def _blocks(arrays, size: int):
    """Consecutive blocks of ``size`` values of the arrays as if joined (the last block may be shorter)."""
    held: list[np.ndarray] = []
    n = 0
    for a in arrays:
        while a.size:
            take = min(size - n, a.size)
            held.append(a[:take])
            a, n = a[take:], n + take
            if n == size:
                yield held[0] if len(held) == 1 else np.concatenate(held)
                held, n = [], 0
    if n:
        yield held[0] if len(held) == 1 else np.concatenate(held)


_HIST_BLOCK = 65536  # numpy.histogram's block size


def _histogram_self_weighted(blocks, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """``np.histogram(a, edges)[0]``, ``np.histogram(a, edges, weights=a)[0]`` and ``a.size``, bit for bit,
    sorting once, of the float64 values ``a`` given as consecutive blocks of ``_HIST_BLOCK`` (:func:`_blocks`).

    For uneven bins numpy sorts every block of 65536 values, once per call (an argsort and two gathers
    for the weighted one), and differences cumulative counts / weight sums at the edges.  With the values
    as their own weights, the sorted weights are the sorted values: one ``np.sort`` per block gives both,
    by numpy's own arithmetic (per-block cumulative sums read at the edges, added up over the blocks).
    """
    cum_n = np.zeros(edges.shape, np.intp)
    cum_w = np.zeros(edges.shape, np.float64)
    zero = np.zeros(1, np.float64)
    n = 0
    for block in blocks:
        sa = np.sort(block)
        n += sa.size
        idx = np.concatenate((sa.searchsorted(edges[:-1], "left"), sa.searchsorted(edges[-1:], "right")))
        cum_n += idx
        cum_w += np.concatenate((zero, sa.cumsum()))[idx]
    return np.diff(cum_n), np.diff(cum_w), n
