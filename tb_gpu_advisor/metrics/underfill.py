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

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.metrics.context import PS_PER_MS, Context
from tb_gpu_advisor.metrics.types import GpuUnderfill, Underfill, UnderfilledKernel

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
    n_gpus = max(1, len(ctx.active))
    n_steps = max(1, int(ctx.steps.count or 0))
    per = 1.0 / (n_gpus * n_steps)
    out.underfilled_ms_per_step = sum(gu.underfilled_ms for gu in out.gpus) * per
    out.idle_ms_per_step = sum(gu.idle_ms for gu in out.gpus) * per
    out.gemm_idle_ms_per_step = sum(r.idle_ms for r in rows.values() if r.gemm) * per
    out.top = sorted(rows.values(), key=lambda r: (-r.idle_ms, r.name))[:top_n]
    return out


def _one_gpu(g, rows: dict[tuple[str, int, int], UnderfilledKernel]) -> GpuUnderfill | None:
    """One GPU's :class:`GpuUnderfill`, its underfilled kernels added to ``rows``; None without kernels in steps."""
    d = g.d
    in_step = (g.step >= 0) & (d.kind == devices.KIND_KERNEL)
    if not in_step.any():
        return None
    sms, source = gpu_sms(d)
    unit = devices.unit_name(d.info.name, d.info.compute_capability)
    kernel_ms = _duration_ps(d, in_step) / PS_PER_MS
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
    idx = np.flatnonzero(recorded & small_cfg[cfg])
    if not idx.size:
        return gu
    blocks = table[cfg[idx], 0].astype(np.int64)
    threads = table[cfg[idx], 1].astype(np.int64)
    dur_ms = (d.end[idx] - d.start[idx]).astype(np.float64) / PS_PER_MS
    floor_ms = T("small_grid.floor_us") / 1000.0
    idle = np.maximum(dur_ms - floor_ms, 0.0) * (1.0 - blocks / s)
    gu.underfilled_ms, gu.idle_ms = float(dur_ms.sum()), float(idle.sum())
    first, inv = _groups(d.name[idx].astype(np.int64), blocks, threads)
    cnt = np.bincount(inv, minlength=len(first))
    tot = np.bincount(inv, weights=dur_ms, minlength=len(first))
    idl = np.bincount(inv, weights=idle, minlength=len(first))
    for j, (name_id, b, t) in enumerate(zip(d.name[idx[first]].tolist(), blocks[first].tolist(),
                                            threads[first].tolist())):
        full = d.names[name_id]
        name = devices.short_kernel_name(full)
        r = rows.get((name, b, t))
        if r is None:
            r = rows[(name, b, t)] = UnderfilledKernel(name=name, blocks=b, threads=t, count=0, total_ms=0.0, sm_count=s,
                                                     idle_ms=0.0, gemm=bool(devices.gemm_kernel_one(full)))
        r.count += int(cnt[j])
        r.total_ms += float(tot[j])
        r.idle_ms += float(idl[j])
        r.sm_count = min(r.sm_count, s)
        if d.gpu not in r.gpus:
            r.gpus.append(d.gpu)
    return gu


def _duration_ps(d, mask: np.ndarray, block: int = 1 << 18) -> float:
    """The summed durations (ps) of the events ``mask`` selects, a block of events at a time: no column of the
    kernels' durations (8 bytes a kernel) is made whole."""
    total = 0
    for a in range(0, mask.shape[0], block):
        m = mask[a : a + block]
        total += int((d.end[a : a + block][m] - d.start[a : a + block][m]).sum())
    return float(total)


def _groups(*keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the first row of each distinct key tuple, each row's group) over equal-length integer columns, in the
    order of the sorted tuples.  Each column is ranked on its own (a 1-D ``unique``), and the ranks are folded into one
    int64 two at a time, each fold bounded by rows x rows: ``unique(axis=0)`` sorts a structured view row by row,
    seconds on a million launches."""
    n = len(keys[0])
    code = np.zeros(n, dtype=np.int64)
    for col in keys:
        rank = np.unique(col, return_inverse=True)[1].reshape(-1).astype(np.int64)
        code = np.unique(code * (int(rank.max(initial=0)) + 1) + rank, return_inverse=True)[1].reshape(-1).astype(np.int64)
    order = np.argsort(code, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(code[order]) != 0]) if n else np.zeros(0, dtype=np.int64)
    return order[starts], code
