"""Kernels too small to fill their GPU: launched with fewer blocks than the GPU has SMs (CUs on AMD).

The physics: a block runs on one SM, start to end, so a kernel of ``B`` blocks keeps at most ``min(B, S)`` of a
GPU's ``S`` SMs busy at any instant; when ``B < S`` at least ``S - B`` SMs idle for its whole duration ``t``.  The
same work spread over every SM, each SM as fast as before, would take ``B / S`` of the time that scales with the
work -- but not of the time every kernel takes whatever its grid (its launch ramp, a round trip to memory, its tail:
``small_grid.floor_us``; a trivial kernel records ~1.1 us on an H100).  So filling the GPU can take at most
``max(0, t - floor) x (1 - B / S)`` off the kernel: the bound this module sums (``idle_ms``) and the rule states as
an upper bound (a kernel limited by something else than its SMs -- one lock, one serial chain -- gains less).  A tiny
kernel of a few microseconds gains nothing from more SMs: it is the launch rule's (``launch_bound``), not this one's.

Where the trace gives no SM count and the device table does not know the GPU (``devices.sm_count``), nothing is
claimed about the GPU's units except what holds on every GPU of two or more SMs (every data-centre and desktop GPU):
a one-block kernel runs on one SM and leaves at least half of them idle, so only one-block kernels are judged, with
``S = 2`` -- the least such a GPU can have, so the bound ``(t - floor) / 2`` is the smallest it can be there.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices, frameworks
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.metrics.context import PS_PER_MS, Context
from tb_gpu_advisor.metrics.memcpy import fault_free_ps, page_waits
from tb_gpu_advisor.metrics.types import GpuUnderfill, Underfill, UnderfilledKernel
from tb_gpu_advisor.model.columns import union_intervals, unique_inverse

#: The SM count assumed where none is known: the least of a multi-SM GPU (see the module's docstring).
UNKNOWN_SMS = 2


def gpu_sms(d) -> tuple[int | None, str]:
    """(SMs of the GPU, where the count comes from): the trace's own count, else the device table's by its name."""
    info = d.info
    if info.sm_count and info.sm_count > 0:
        return int(info.sm_count), "the trace"
    known = devices.sm_count(info.name, info.compute_capability)
    if known is not None:
        return known[0], known[1]
    return None, "unknown"


def underfill(ctx: Context, top_n: int = 10) -> Underfill:
    """Per GPU, the kernel time in kept steps of launches with fewer blocks than SMs, and the top kernels by the
    time of the SMs they left idle."""
    out = Underfill()
    rows: dict[tuple[str, int, int], UnderfilledKernel] = {}
    for g in ctx.gpus:
        gu = _one_gpu(g, rows)
        if gu is not None:
            out.gpus.append(gu)
    per = ctx.per_step(1.0)  # the one division's factor (per kept step and active GPU), one multiply per sum
    out.underfilled_ms_per_step = sum(gu.underfilled_ms for gu in out.gpus) * per
    out.idle_ms_per_step = sum(gu.idle_ms for gu in out.gpus) * per
    out.gemm_idle_ms_per_step = sum(r.idle_ms for r in rows.values() if r.gemm) * per
    out.above_floor_ms_per_step = sum(gu.above_floor_ms for gu in out.gpus) * per
    out.floor_cut_ms_per_step = sum(gu.floor_cut_ms for gu in out.gpus) * per
    out.top = sorted(rows.values(), key=lambda r: (-r.idle_ms, r.name))[:top_n]
    return out


def _one_gpu(g, rows: dict[tuple[str, int, int], UnderfilledKernel]) -> GpuUnderfill | None:
    """One GPU's :class:`GpuUnderfill`, its underfilled kernels added to ``rows``; None without kernels in steps."""
    d = g.d
    in_step, _ = g.kernels_in_steps()  # the kernel modules' shared mask (GpuCtx), not made again
    dur = g.kernel_time_in_steps()  # each kernel's time inside the kept steps: a part of them, never above
    if not dur.size:
        return None
    sms, source = gpu_sms(d)
    unit = devices.unit_name(d.info.name, d.info.compute_capability)
    kernel_ms = float(int(dur.sum(dtype=np.int64))) / PS_PER_MS
    cfg, table = d.launch_cfg, d.launch_table
    recorded = in_step & (cfg >= 0) if len(table) and cfg.size else np.zeros(0, dtype=bool)
    gu = GpuUnderfill(gpu=d.gpu, sm_count=sms, sm_source=source, unit=unit,
                      launches_recorded=int(np.count_nonzero(recorded)), kernel_ms=kernel_ms, underfilled_ms=0.0,
                      idle_ms=0.0)
    if not gu.launches_recorded:
        return gu
    s = sms if sms is not None else UNKNOWN_SMS
    # which of the few configurations are small, then the kernels that use one: no per-kernel copy of the counts
    # (the launches' own columns were ~100 MB a GPU at the peak on a dense 1 GB capture)
    small_cfg = np.append(table[:, 0] < s if sms is not None else table[:, 0] == 1, False)  # -1: the last, False
    floor_ps = round(T("small_grid.floor_us") * 1e6)
    shared = _not_idle_spans(d)
    # each configuration's idle share of the SMs (the last, -1: none), by which each kernel's own bound is weighed
    idle_share = np.append(np.maximum(0.0, 1.0 - table[:, 0] / s), 0.0) if g.above_floor is not None else None
    groups = _small_launches(d, recorded, small_cfg, floor_ps, kernels=(in_step, dur),  # recorded: a part of in_step
                             shared=shared, above_floor=g.above_floor, idle_share=idle_share)
    if not groups:
        return gu
    for (name_id, c), (count, dur_ps, above_ps, unfloored_ps, *own) in groups.items():  # by (name, blocks, threads)
        b, t = (int(v) for v in table[c])
        # no grid takes a kernel below what its work needs at the GPU's peaks: the idle SMs' bound, at most the
        # kernels' time above that floor (h37-pool36: GEMVs at 97% of the memory bandwidth gain ~nothing) -- kernel
        # by kernel where a floor is known (h37-pool37): a group's sum let its kernels far above their floor lend
        # headroom to those at it
        grid_ps = above_ps * (1.0 - b / s)
        bound_ps = own[0] if own else min(grid_ps, unfloored_ps)
        idle_ms = bound_ps / PS_PER_MS
        gu.floor_cut_ms += max(0.0, grid_ps - bound_ps) / PS_PER_MS
        gu.underfilled_ms += dur_ps / PS_PER_MS
        gu.above_floor_ms += unfloored_ps / PS_PER_MS
        gu.idle_ms += idle_ms
        full = d.names[name_id]
        name = devices.short_kernel_name(full)
        r = rows.get((name, b, t))
        if r is None:
            r = rows[(name, b, t)] = UnderfilledKernel(name=name, blocks=b, threads=t, count=0, total_ms=0.0, sm_count=s,
                                                     idle_ms=0.0, gemm=bool(frameworks.gemm_kernel_one(full)),
                                                     code=frameworks.kernel_code_id(full))
        r.count += count
        r.total_ms += dur_ps / PS_PER_MS
        r.idle_ms += idle_ms
        r.sm_count = min(r.sm_count, s)
        if d.gpu not in r.gpus:
            r.gpus.append(d.gpu)
    if shared is not None:
        # kernels of two streams at once are one stretch of the GPU's time, not two: the time "in" small kernels is
        # their union, never above the window (DeepSeek's H800 step read 147.9% of itself, h37-survey35)
        gu.underfilled_ms = _union_ps(d, recorded & small_cfg[cfg], _step_ends(g)) / PS_PER_MS
    return gu


def _step_ends(g) -> np.ndarray:
    """Per device event of ``g``, its end cut where it leaves the kept steps (``GpuCtx.kept_reach``); events outside
    kept steps keep their own end (only in-step events are read)."""
    d = g.d
    out = d.end.astype(np.int64)
    inside = g.step >= 0
    out[inside] = np.minimum(out[inside], g.kept_reach()[g.step[inside]])
    return out


def _union_ps(d, mask: np.ndarray, ends: np.ndarray | None = None) -> int:
    """The length in ps of the union of the device events at ``mask``, each cut at ``ends`` where given (its
    kept steps' end: :func:`_step_ends`)."""
    if not mask.any():
        return 0
    st = d.start[mask].astype(np.int64)
    en = (ends if ends is not None else d.end)[mask].astype(np.int64)
    en = np.maximum(en, st)
    o = np.argsort(st, kind="stable")
    st, en = st[o], np.maximum.accumulate(en[o])
    # each event adds what reaches past every earlier one's end
    prev = np.concatenate([[st[0]], en[:-1]])
    return int(np.sum(en - np.maximum(st, prev)))


def _shared_spans(d) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(starts, ends, lengths before each) of the disjoint spans in which two or more of the GPU's kernels and
    collectives ran at once; None where none did (one stream, or streams that never overlapped).

    The idle-SM bound assumes the SMs a small kernel leaves are idle.  A kernel of another stream running beside it
    is on them: DeepSeek's fp8 GEMMs of 112 thread blocks ran on an H800's 132 SMs beside DeepEP's all-to-all kernels
    of 20 blocks (h37-survey35) -- the 20 SMs were the communication's, so filling them could save nothing there.
    Copies run on the copy engines, not the SMs, and are left out."""
    m = (d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)
    if int(np.count_nonzero(m)) < 2:
        return None
    st, en = d.start[m].astype(np.int64), d.end[m].astype(np.int64)
    order = np.argsort(st, kind="stable")
    st, en = st[order], en[order]
    if not (st[1:] < np.maximum.accumulate(en)[:-1]).any():
        return None
    # depth over time: +1 at each start, -1 at each end; an end sorts before a start at the same instant (touching
    # kernels do not overlap)
    t = np.concatenate([en, st])
    step = np.concatenate([np.full(en.size, -1, np.int64), np.ones(st.size, np.int64)])
    o = np.lexsort((step, t))
    t, depth = t[o], np.cumsum(step[o])
    two = depth >= 2
    rise = np.flatnonzero(two & ~np.concatenate([[False], two[:-1]]))
    fall = np.flatnonzero(~two & np.concatenate([[False], two[:-1]]))
    s0, e0 = t[rise], t[fall]
    keep = e0 > s0
    s0, e0 = s0[keep], e0[keep]
    if not s0.size:
        return None
    before = np.concatenate([[0], np.cumsum(e0 - s0)[:-1]])
    return s0, e0, before


def _paged_spans(d) -> tuple[np.ndarray, np.ndarray] | None:  # noqa: ANN001 - DeviceEvents
    """``metrics.memcpy.page_waits`` of the GPU ``d``: the stretches its kernels waited for managed pages; None where
    none did."""
    if not len(d) or not d.names:
        return None
    kern = (d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)
    mig = devices.page_migration(d.names)[d.name] & (devices.event_copy_directions(d.names, d.name, d.kind) == "h2d")
    if not kern.any() or not mig.any():
        return None
    s0, e0 = page_waits(d.start[kern], d.end[kern], d.start[mig], d.end[mig], fault_free_ps(d)[kern])
    return (s0, e0) if s0.size else None


def _not_idle_spans(d) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:  # noqa: ANN001 - DeviceEvents
    """(starts, ends, lengths before each) of the disjoint spans in which a small kernel's missing thread blocks are
    no idle-SM time: another kernel ran beside it (:func:`_shared_spans`), or it waited for a managed page
    (:func:`_paged_spans`); None where neither."""
    shared, paged = _shared_spans(d), _paged_spans(d)
    if paged is None:
        return shared
    s0, e0 = paged if shared is None else union_intervals(np.concatenate([shared[0], paged[0]]),
                                                          np.concatenate([shared[1], paged[1]]))
    return s0, e0, np.concatenate([[0], np.cumsum(e0 - s0)[:-1]])


def _shared_time(shared: tuple[np.ndarray, np.ndarray, np.ndarray], start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Per interval [start, end): its time inside the shared spans (int64 ps)."""
    s0, e0, before = shared

    def covered(x: np.ndarray) -> np.ndarray:
        i = np.searchsorted(s0, x, side="right") - 1
        ok = i >= 0
        j = np.where(ok, i, 0)
        return np.where(ok, before[j] + np.minimum(x, e0[j]) - s0[j], 0)

    x0, x1 = start.astype(np.int64), end.astype(np.int64)
    return covered(x1) - covered(x0)


def _small_launches(d, recorded: np.ndarray, small_cfg: np.ndarray, floor_ps: int, block: int = 1 << 18,
                    kernels: tuple[np.ndarray, np.ndarray] | None = None,
                    shared: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                    above_floor: np.ndarray | None = None,
                    idle_share: np.ndarray | None = None) -> dict[tuple[int, int], list[int]]:
    """(name, launch configuration) -> [launches, their time in ps, their time above ``floor_ps`` in ps, their time
    above their peaks' floor in ps], sorted, of
    the recorded launches whose configuration is small: exact integer sums, a block of events at a time (the whole
    GPU's small launches as float columns were ~60 bytes a kernel at the peak: 280 MB on the 1 GB Nsight export).

    ``kernels``: :meth:`GpuCtx.kernels_in_steps` (mask, durations), of which ``recorded`` is a part: the durations are
    then read from it, one gather, instead of two time columns gathered and subtracted (dense: ~1 ms a GPU).

    ``above_floor``: ``GpuCtx.above_floor``, per kernel the share of its time above the least its work needs at the
    GPU's peaks, which the 4th sum weighs each kernel's time by (all of it where None): no grid takes more off.

    ``idle_share``: per launch configuration (the last: none) the share of the SMs it leaves idle; given, a 5th sum is
    each kernel's own bound, the least of its time above ``floor_ps`` run alone x that share and its time above its
    peaks' floor -- per kernel, not per group: a sum of minima, never above the minimum of the sums (h37-pool37)."""
    cfg = d.launch_cfg
    ncfg = len(small_cfg)
    out: dict[int, list[int]] = {}
    pos = 0  # where the block's kernels start among ``kernels``' durations
    for a in range(0, recorded.shape[0], block):
        c = cfg[a : a + block]
        m = recorded[a : a + block] & small_cfg[c]
        ins = kernels[0][a : a + block] if kernels is not None else None
        n_in = int(np.count_nonzero(ins)) if ins is not None else 0
        if not m.any():
            pos += n_in
            continue
        key = d.name[a : a + block][m].astype(np.int64) * ncfg + c[m]
        if ins is not None:
            dur = kernels[1][pos : pos + n_in][m[ins]].astype(np.int64)
        else:
            dur = (d.end[a : a + block][m] - d.start[a : a + block][m]).astype(np.int64)
        pos += n_in
        # the time another kernel ran beside it is no idle-SM time (``_shared_spans``): only the time it ran alone,
        # above the floor, counts toward the bound
        # the kernel's span inside the kept steps (``dur`` is cut where it leaves them, ``GpuCtx.kernel_time_in_steps``)
        st = d.start[a : a + block][m].astype(np.int64)
        alone = dur - _shared_time(shared, st, st + dur) if shared is not None else None
        # grouped by counting (key ids span a names x configurations range), not by a stable argsort of the keys:
        # that sort was half of this module's time on the dense 100 MB capture
        u, inv = unique_inverse(key)
        del key
        counts = np.bincount(inv, minlength=u.size)
        total = _exact_sums(inv, dur, u.size)
        unf_k = None if above_floor is None else np.rint(dur * above_floor[a : a + block][m]).astype(np.int64)
        unfloored = total if unf_k is None else _exact_sums(inv, unf_k, u.size)
        np.subtract(dur, floor_ps, out=dur)
        np.maximum(dur, 0, out=dur)
        if alone is not None:
            np.minimum(dur, alone, out=dur)
        above = _exact_sums(inv, dur, u.size)
        sums = [counts, total, above, unfloored]
        if idle_share is not None:
            own = np.rint(dur * idle_share[c[m]]).astype(np.int64)
            if unf_k is not None:
                np.minimum(own, unf_k, out=own)
            sums.append(_exact_sums(inv, own, u.size))
        for k, *vals in zip(u.tolist(), *(x.tolist() for x in sums)):
            acc = out.setdefault(k, [0] * len(sums))
            for i, v in enumerate(vals):
                acc[i] += v
    return {(k // ncfg, k % ncfg): out[k] for k in sorted(out)}


#: Below this sum of magnitudes every partial sum of int64 values is an integer float64 holds exactly.
_EXACT_FLOAT = 1 << 53


def _exact_sums(inv: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Per group ``inv`` in [0, n): the sum of the int64 ``values``, exact (int64).

    ``np.bincount``'s weights add in float64, which is exact while every partial sum is an integer below 2**53 --
    bounded by the sum of the magnitudes, checked first; beyond it (never on real captures: 2**53 ps is 2.5 hours
    of kernel time in one block) the sums are made in int64 by ``np.add.at``."""
    if float(np.abs(values).sum(dtype=np.float64)) < _EXACT_FLOAT / 2:
        return np.bincount(inv, weights=values, minlength=n).astype(np.int64)
    out = np.zeros(n, dtype=np.int64)
    np.add.at(out, inv, values)
    return out
