"""Capture quality (length, steps, steady state, the framework that wrote it) and memory headroom."""

from __future__ import annotations

from .. import kernel_classes as kc

import numpy as np

from ..thresholds import T
from .context import PS_PER_MS, Context
from .types import CaptureQuality, Memory



def capture_quality(ctx: Context) -> CaptureQuality:
    env = ctx.tl.plane("Task Environment")
    length = None
    if env is not None:
        a, b = env.stats.get("profile_start_time"), env.stats.get("profile_stop_time")
        if isinstance(a, int) and isinstance(b, int) and b > a:
            length = (b - a) / 1e6  # ns -> ms
    if length is None:
        spans = [sp for p in ctx.tl.planes for ln in p.lines if (sp := ln.span()) is not None]
        length = (max(e for _, e in spans) - min(s for s, _ in spans)) / PS_PER_MS if spans else 0.0
    w = [s.duration_ms for s in ctx.steps.detection.windows]
    cv = float(np.std(w) / np.mean(w)) if len(w) >= 2 and np.mean(w) > 0 else None
    kept = ctx.steps.count if ctx.steps.detection.source != "whole_capture" else 0
    private = any(n.startswith("tf_gpu_private") for n in ctx.h.line_names)
    notes = []
    # the capture_quality rule compares with the same entries of the thresholds table, the same way
    min_steps, max_ms, max_cv = T("capture.min_steps"), T("capture.max_seconds") * 1000.0, T("capture.max_step_cv")
    short = kept < min_steps or length < T("capture.min_length_ms")
    if kept < min_steps:
        notes.append(f"only {kept} step(s) kept; capture a few steady-state steps (about 10 s)")
    if length > max_ms:
        notes.append(f"capture is {length / 1000:.0f} s long; profiling overhead distorts long captures")
    if cv is not None and cv > max_cv:
        notes.append(f"step times vary (cv {cv:.2f}); the capture may include warm-up or non-steady steps")
    return CaptureQuality(
        length_ms=float(length), steps_captured=ctx.steps.detection.found, steps_kept=kept,
        steady_state=(cv <= max_cv) if cv is not None else None, step_time_cv=cv, too_short=short,
        too_long=length > max_ms, num_events=ctx.tl.num_events, gpu_thread_mode_private=private, note="; ".join(notes),
        framework=ctx.fw.id, graph_kernel_share=_graph_kernel_share(ctx),
    )


def _graph_kernel_share(ctx: Context) -> float:
    """Share of kept-step kernel time in kernels of CUDA graphs (XLA command buffers; events carrying ``cuda_graph_id``)."""
    tot = graph = 0
    for g in ctx.gpus:
        k = (g.step >= 0) & (g.d.kind == kc.KIND_KERNEL)
        dur = g.d.end[k] - g.d.start[k]
        tot += int(dur.sum())
        graph += int(dur[g.d.graph_id[k] >= 0].sum())
    return graph / tot if tot else 0.0


def memory(ctx: Context) -> Memory:
    """Peak GPU allocator use (host `MemoryAllocation` events' `peak_bytes_in_use`) vs the GPU's memory size."""
    peak = None
    limit = None
    for p in ctx.tl.host_planes():
        if p.stat_key("peak_bytes_in_use") is None:
            continue
        for ln in p.lines:
            if not ln.has_stat("peak_bytes_in_use").any():
                continue
            v = ln.int_stat("peak_bytes_in_use", inherit=False)
            alloc = ln.str_stat("allocator_name", inherit=False)
            ua, inv = np.unique(alloc, return_inverse=True)
            is_gpu = np.array([a < 0 or "gpu" in (p.string(int(a)) or "").lower() for a in ua], dtype=bool)
            gpu_alloc = is_gpu[inv]
            sel = (v >= 0) & gpu_alloc
            if sel.any():
                peak = max(peak or 0, int(v[sel].max()))
            bl = ln.int_stat("buffer_limit", inherit=False)
            if (bl > 0).any():
                limit = max(limit or 0, int(bl[bl > 0].max()))
    cap = limit
    if cap is None:
        sizes = [g.d.plane.stats.get("memory_size") for g in ctx.active if g.d.plane.stats.get("memory_size")]
        cap = int(max(sizes)) if sizes else None
    if peak is None:
        return Memory(False, None, cap, None, "no allocator peak statistics in this capture")
    return Memory(True, peak, cap, (1.0 - peak / cap) if cap else None,
                  "peak of `peak_bytes_in_use` over GPU allocators vs allocator limit (`buffer_limit`) or device memory")
