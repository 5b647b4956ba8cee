"""Non-overlapping step-time breakdown per GPU and step, and the gaps between steps.

Every instant of a step window is given exactly one category, the first of
``PRIORITY`` that is active at that instant on that GPU (see docs/metrics.md).
Vectorized: all interval boundaries of one GPU form elementary segments;
each category's coverage of the segment midpoints is a searchsorted count.
"""

from __future__ import annotations

import numpy as np

from .. import kernel_classes as kc
from .context import PS_PER_MS, Context, GpuCtx
from .events import coverage, union_intervals
from .types import BREAKDOWN_CATEGORIES, Breakdown, Gaps, StepGap, StepMetrics

#: Highest first.  GPU activity beats host activity; exposed copies are copies no kernel overlaps.
PRIORITY: tuple[str, ...] = (
    "device_compute",
    "collectives",
    "memcpy_d2d",
    "memcpy_d2h",
    "memcpy_h2d",
    "input_wait",
    "host_compute",
    "launch_wait",
)
_CAT_INDEX = {c: i for i, c in enumerate(BREAKDOWN_CATEGORIES)}


def category_intervals(ctx: Context, g: GpuCtx) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    d, h = g.d, ctx.h
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    kinds = {
        "device_compute": d.kind == kc.KIND_KERNEL,
        "collectives": d.kind == kc.KIND_COLLECTIVE,
        "memcpy_d2d": (d.kind == kc.KIND_D2D) | (d.kind == kc.KIND_OTHER_COPY),
        "memcpy_d2h": d.kind == kc.KIND_D2H,
        "memcpy_h2d": d.kind == kc.KIND_H2D,
    }
    for c, m in kinds.items():
        out[c] = (d.start[m], d.end[m])
    out["input_wait"] = (h.start[ctx.host_input], h.end[ctx.host_input])
    # launch wait (idle waiting for launch): the GPU idle gap before a device event, from the end of
    # everything earlier on this GPU to the event's start, when the event's host launch record ended
    # after that earlier work had finished (the GPU drained its queue and waited for the host), and
    # both belong to the same step.  Input wait, higher in PRIORITY, takes precedence.
    kern = np.nonzero((d.kind == kc.KIND_KERNEL) | (d.kind == kc.KIND_COLLECTIVE))[0]
    if kern.size > 1:
        prev_end = np.maximum.accumulate(d.end[kern])[:-1]
        cur = kern[1:]
        has = (g.launch[cur] >= 0) & (d.kind[cur] == kc.KIND_KERNEL)  # a collective waits for peers, not for launch
        lend = np.where(has, h.end[np.clip(g.launch[cur], 0, None)], 0)
        keep = has & (lend > prev_end) & (d.start[cur] > prev_end) & (g.step[cur] == g.step[kern[:-1]]) & (g.step[cur] >= 0)
        out["launch_wait"] = (prev_end[keep], d.start[cur][keep])
    else:
        out["launch_wait"] = (d.start[:0], d.start[:0])
    out["host_compute"] = (h.start[ctx.host_work], h.end[ctx.host_work])
    return out


def attribute(intervals: dict[str, tuple[np.ndarray, np.ndarray]], windows: np.ndarray) -> np.ndarray:
    """(n_windows, n_categories) ps per window and BREAKDOWN_CATEGORIES category."""
    n = windows.shape[0]
    res = np.zeros((n, len(BREAKDOWN_CATEGORIES)), dtype=np.float64)
    if n == 0:
        return res
    lo, hi = int(windows[:, 0].min()), int(windows[:, 1].max())
    pts = [windows.ravel()]
    for s, e in intervals.values():
        m = (e > lo) & (s < hi)
        pts.append(np.clip(s[m], lo, hi))
        pts.append(np.clip(e[m], lo, hi))
    p = np.unique(np.concatenate(pts))
    if p.size < 2:
        return res
    a, b = p[:-1], p[1:]
    mid = a + (b - a) / 2.0
    length = (b - a).astype(np.float64)
    cat = np.full(mid.shape, _CAT_INDEX["other"], dtype=np.int64)
    unset = np.ones(mid.shape, dtype=bool)
    for c in PRIORITY:
        s, e = intervals[c]
        cov = coverage(mid, s, e) & unset
        cat[cov] = _CAT_INDEX[c]
        unset &= ~cov
    w = np.searchsorted(windows[:, 0], mid, side="right") - 1
    ok = (w >= 0) & (mid < windows[np.clip(w, 0, None), 1])
    flat = w[ok] * len(BREAKDOWN_CATEGORIES) + cat[ok]
    res += np.bincount(flat, weights=length[ok], minlength=res.size).reshape(res.shape)
    return res


def _bd(row_ps: np.ndarray) -> Breakdown:
    return Breakdown(**{c: float(row_ps[i]) / PS_PER_MS for i, c in enumerate(BREAKDOWN_CATEGORIES)})


def gpu_step_rows(ctx: Context, g: GpuCtx) -> tuple[list[StepMetrics], np.ndarray, dict]:
    """Per-step rows of one GPU, the (n, cats) ms matrix, and its intervals (reused for gaps)."""
    iv = category_intervals(ctx, g)
    w = g.windows
    mat = attribute(iv, w) / PS_PER_MS
    d = g.d
    rows: list[StepMetrics] = []
    n = w.shape[0]
    kmask = d.kind == kc.KIND_KERNEL
    inside = g.step >= 0
    kcount = np.bincount(g.step[inside & kmask], minlength=n) if n else np.zeros(0, int)
    ccount = np.bincount(g.step[inside & (d.kind == kc.KIND_COLLECTIVE)], minlength=n) if n else np.zeros(0, int)
    mcount = np.bincount(g.step[inside & ~kmask & (d.kind != kc.KIND_COLLECTIVE)], minlength=n) if n else np.zeros(0, int)
    first_k = np.full(n, np.iinfo(np.int64).max, np.int64)
    if inside.any():
        np.minimum.at(first_k, g.step[inside], d.start[inside])
    first_l = np.full(n, np.iinfo(np.int64).max, np.int64)
    hl = inside & (g.launch >= 0)
    if hl.any():
        np.minimum.at(first_l, g.step[hl], ctx.h.start[g.launch[hl]])
    # busy = union of all device activity within the window
    us, ue = union_intervals(d.start, d.end)
    busy = attribute({**{c: (np.zeros(0, np.int64),) * 2 for c in PRIORITY}, "device_compute": (us, ue)}, w)[:, _CAT_INDEX["device_compute"]] / PS_PER_MS
    big = np.iinfo(np.int64).max
    for i in range(n):
        rows.append(StepMetrics(
            step=int(ctx.steps.ids[i]), gpu=d.gpu, start_ms=(int(w[i, 0]) - ctx.steps.origin_ps) / PS_PER_MS,
            step_ms=float(w[i, 1] - w[i, 0]) / PS_PER_MS, breakdown=Breakdown(**{c: float(mat[i, j]) for j, c in enumerate(BREAKDOWN_CATEGORIES)}),
            device_busy_ms=float(busy[i]), kernel_count=int(kcount[i]),
            first_kernel_ms=None if first_k[i] == big else (int(first_k[i]) - ctx.steps.origin_ps) / PS_PER_MS,
            first_launch_ms=None if first_l[i] == big else (int(first_l[i]) - ctx.steps.origin_ps) / PS_PER_MS,
            collective_calls=int(ccount[i]), memcpy_count=int(mcount[i]),
        ))
    return rows, mat, iv


def host_rows(ctx: Context, per_gpu: dict[int, list[StepMetrics]]) -> list[StepMetrics]:
    """Host-wide row per step: mean over active GPUs (counts summed)."""
    act = [g.d.gpu for g in ctx.active if g.d.gpu in per_gpu]
    if not act:
        act = list(per_gpu)[:1]
    out = []
    n = ctx.steps.count
    for i in range(n):
        rs = [per_gpu[gid][i] for gid in act if i < len(per_gpu[gid])]
        if not rs:
            w = ctx.steps.host_windows[i]
            out.append(StepMetrics(int(ctx.steps.ids[i]), None, (int(w[0]) - ctx.steps.origin_ps) / PS_PER_MS,
                                   float(w[1] - w[0]) / PS_PER_MS, Breakdown(other=float(w[1] - w[0]) / PS_PER_MS), 0.0, 0))
            continue
        k = len(rs)
        bd = Breakdown(**{c: sum(getattr(r.breakdown, c) for r in rs) / k for c in BREAKDOWN_CATEGORIES})
        fk = [r.first_kernel_ms for r in rs if r.first_kernel_ms is not None]
        fl = [r.first_launch_ms for r in rs if r.first_launch_ms is not None]
        out.append(StepMetrics(
            step=rs[0].step, gpu=None, start_ms=min(r.start_ms for r in rs), step_ms=sum(r.step_ms for r in rs) / k,
            breakdown=bd, device_busy_ms=sum(r.device_busy_ms for r in rs) / k, kernel_count=sum(r.kernel_count for r in rs),
            first_kernel_ms=min(fk) if fk else None, first_launch_ms=min(fl) if fl else None,
            collective_calls=sum(r.collective_calls for r in rs), memcpy_count=sum(r.memcpy_count for r in rs),
        ))
    return out


def average(rows: list[StepMetrics]) -> Breakdown:
    if not rows:
        return Breakdown()
    k = len(rows)
    return Breakdown(**{c: sum(getattr(r.breakdown, c) for r in rows) / k for c in BREAKDOWN_CATEGORIES})


def step_gaps(ctx: Context, g: GpuCtx, iv: dict) -> list[StepGap]:
    """GPU idle between consecutive kept steps: last device end of step k -> first device start of step k+1."""
    d = g.d
    n = ctx.steps.count
    if n < 2 or not len(d):
        return []
    inside = g.step >= 0
    last = np.full(n, -1, np.int64)
    first = np.full(n, np.iinfo(np.int64).max, np.int64)
    np.maximum.at(last, g.step[inside], d.end[inside])
    np.minimum.at(first, g.step[inside], d.start[inside])
    a, b = last[:-1], first[1:]
    ok = (a >= 0) & (b < np.iinfo(np.int64).max) & (b > a)
    idx = np.nonzero(ok)[0]
    if idx.size == 0:
        return []
    win = np.stack([a[idx], b[idx]], axis=1)
    mat = attribute(iv, win) / PS_PER_MS
    ci = _CAT_INDEX
    out = []
    for r, k in enumerate(idx):
        gap = float(win[r, 1] - win[r, 0]) / PS_PER_MS
        inp, lw, hc = mat[r, ci["input_wait"]], mat[r, ci["launch_wait"]], mat[r, ci["host_compute"]]
        out.append(StepGap(after_step=int(ctx.steps.ids[k]), gpu=d.gpu, gap_ms=gap, input_wait_ms=float(inp),
                           launch_ms=float(lw), host_other_ms=float(hc), unexplained_ms=float(max(0.0, gap - inp - lw - hc))))
    return out


def summarize_gaps(gaps: list[StepGap], avg_step_ms: float | None) -> Gaps:
    if not gaps:
        return Gaps(0, None, None, None, None, None, None, [])
    k = len(gaps)
    avg = sum(x.gap_ms for x in gaps) / k
    return Gaps(
        count=k, avg_gap_ms=avg, max_gap_ms=max(x.gap_ms for x in gaps),
        share_of_step=(avg / avg_step_ms) if avg_step_ms else None,
        avg_input_wait_ms=sum(x.input_wait_ms for x in gaps) / k, avg_launch_ms=sum(x.launch_ms for x in gaps) / k,
        avg_host_other_ms=sum(x.host_other_ms for x in gaps) / k, gaps=gaps[:50],
    )
