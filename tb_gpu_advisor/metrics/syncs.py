"""Host synchronisations inside the step: the host waits for the GPU, and the GPU then waits for the host.

A sync (``cudaStreamSynchronize`` behind a PyTorch ``.item()``, ``cudaDeviceSynchronize``, an event
wait) returns only once the GPU has drained its queue; until the host launches the next kernel the GPU
sits idle.  Measured per sync: the GPU's idle time from the end of the work the sync waited for to the
next device event, on each active GPU, within kept steps.  Several syncs in one idle gap (a copy and
its stream sync) count the gap once.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.metrics.context import PS_PER_MS, Context, enclosing
from tb_gpu_advisor.metrics.types import HostSyncs
from tb_gpu_advisor.model.columns import sorted_unique, subtract_intervals, union_intervals, unique_inverse

_RUNTIME = ("cuda", "cu")


def host_syncs(ctx: Context, top_n: int = 5) -> HostSyncs:
    """Sync calls per kept step, the GPU idle they cause, and the host events that made them."""
    h, n = ctx.h, ctx.steps.count
    if not len(h) or not n:
        return HostSyncs()
    sync = np.flatnonzero(h.name_mask(devices.is_sync_call) & (ctx.host_step >= 0))
    if not sync.size:
        return HostSyncs()
    active = ctx.active
    idle = sum(_idle_after(g, h.end[sync], _input_wait(ctx, g)) for g in active) / max(len(active), 1)
    callers = enclosing(h, h.name_mask(lambda x: not x.startswith(_RUNTIME)), sync)
    named = callers[callers >= 0]
    top: list[tuple[str, float]] = []
    if named.size:
        u, inv = unique_inverse(h.name[named])
        counts = np.bincount(inv, minlength=u.size)
        top = [(h.names[int(u[i])], float(counts[i]) / n) for i in np.argsort(-counts, kind="stable")[:top_n]]
    return HostSyncs(calls_per_step=sync.size / n, gpu_idle_ms_per_step=idle / PS_PER_MS / n, callers=top)


def _input_wait(ctx: Context, g) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001 - a context.GpuCtx
    """The host's input waits that explain this GPU's idle time (its own process's, as the breakdown counts them)."""
    h = ctx.h
    inp = ctx.host_input if g.host_mask is None else ctx.host_input & g.host_mask
    spans = ctx.input_spans if g.input_spans is None else g.input_spans
    s = np.concatenate([h.start[inp].astype(np.int64), spans[0].astype(np.int64)]) if spans else h.start[inp]
    e = np.concatenate([h.end[inp].astype(np.int64), spans[1].astype(np.int64)]) if spans else h.end[inp]
    return union_intervals(s.astype(np.int64), e.astype(np.int64))


def _idle_after(g, ends: np.ndarray, waits: tuple[np.ndarray, np.ndarray] | None = None) -> float:  # noqa: ANN001
    """GPU idle (ps) from the end of the device work each sync waited for to the GPU's next device event, less
    the time the host spent waiting for input meanwhile: a loop that syncs and then waits for its DataLoader
    idles the GPU for the input, which is the input check's, not the sync's."""
    d = g.d
    if not len(d):
        return 0.0
    run_end = np.maximum.accumulate(d.end)
    j = np.searchsorted(d.start, ends, side="left")  # the first device event starting after the sync returned
    ok = (j > 0) & (j < len(d))
    j = sorted_unique(j[ok])  # one idle gap, however many syncs sit in it
    if not j.size:
        return 0.0
    kept = g.step[j] >= 0  # the work the GPU waited for belongs to a kept step
    a, b = run_end[j - 1][kept].astype(np.int64), d.start[j][kept].astype(np.int64)
    pos = b > a
    a, b = a[pos], b[pos]
    if waits is not None and waits[0].size:
        a, b = subtract_intervals(a, b, *waits)
    return float((b - a).sum())
