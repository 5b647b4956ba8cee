"""§1.2.1 The host synchronises with the GPU inside the step, and the GPU then waits for the host.

Metric: GPU idle after host sync calls (``cudaStreamSynchronize`` behind a PyTorch ``.item()``,
``cudaDeviceSynchronize``, event waits) until the next device work, per kept step, as a share of
the step (``metrics/syncs.py``).  The guide's GPU-idle check (§1.2.1) names the host keeping the GPU
waiting; a sync drains the GPU's queue, so every launch after it is exposed.
Saving: that idle time (the queue stays full when the value is read every N steps instead).
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules.base import Ctx, finding, ms, pct, rule, saving, share_metric, short, step_windows, table

ID = "host_sync"


@rule(ID, "§1.2.1", "The host waits for the GPU inside the step (syncs drain the GPU)",
      thresholds=("host_sync.warning", "host_sync.critical"))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    s = m.syncs
    if ctx.step_ms is None or not s.calls_per_step:
        return []
    graded = ctx.graded(s.gpu_idle_ms_per_step, "host_sync.warning", "host_sync.critical")
    if graded is None:
        return []
    share, sev = graded
    who = ", ".join(f"{short(name, 40)} ×{per:.1f}" for name, per in s.callers[:3]) or "runtime calls"
    return [finding(
        ctx, ID, sev,
        f"The host waits for the GPU {s.calls_per_step:.1f} times per step (in {who}); each wait drains the GPU's "
        f"queue, which then idles until the host launches more work: {ms(s.gpu_idle_ms_per_step)} of each "
        f"{ms(ctx.step_ms)} step ({pct(share)}).",
        metric=share_metric("sync_idle_share", "GPU idle after host syncs", share, "host_sync.warning", severity=sev,
                            detail={"syncs_per_step": s.calls_per_step, "idle_ms_per_step": s.gpu_idle_ms_per_step}),
        saving=saving(ctx, s.gpu_idle_ms_per_step, "the GPU's queue stays full: values are read every N steps, not "
                                                  "every step", [("launch", "launch", s.gpu_idle_ms_per_step)]),
        evidence=[table("Host events that wait for the GPU, per step", ["host event", "syncs per step"],
                        [[short(n, 80), round(per, 2)] for n, per in s.callers])],
        windows=step_windows(ctx, key=lambda st: st.breakdown.launch_wait + st.breakdown.other, label="GPU idle"),
        actions=ctx.fw.fix(ID),
    )]
