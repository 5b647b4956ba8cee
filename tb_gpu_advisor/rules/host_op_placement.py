"""§1.2.2 Op placement: framework ops placed on the host instead of the GPU.

Metric: host self time of host-placed TF ops per step / step time (the
guide's overview number is by op count; it is reported as detail).
Dynamic loss-scaling ops are left to ``loss_scaling_gaps``; ops that only run on the host (the framework's
``host_only_op_type``: TF's tf.data iterators, ``RemoteCall``, collectives) are no placement to change and are not
counted.
Saving: the GPU-idle host time (capped by the host-op time; the ledger's host work, then its launch wait) plus the copy
round trips host-placed ops cause (each D2H copy to the host and a copy of
the same size back; capped by the blocking copy time).
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules.base import (Ctx, finding, framework, grade, ms, n_of, pct, rule, saving, share_metric,
                                       short, step_windows, table)

ID = "host_op_placement"
_HEAVY = ("MatMul", "Conv", "BatchMatMul", "Einsum", "Softmax", "Unique", "Gather", "Scatter", "Sort", "TopK")


def _is_loss_scaling(op, m) -> bool:
    ls = m.loss_scaling
    return "LossScaleOptimizer" in op.op_name or (ls.present and op.op_name in set(ls.names))


def host_op_time(m) -> tuple[float, list]:
    """(host ms per step of host-placed ops, loss-scaling ops excluded; the remaining top ops)."""
    h = m.host_ops
    excluded = [o for o in h.top if _is_loss_scaling(o, m)]
    t = max(0.0, h.time_ms_per_step - m.per_step(sum(o.host_self_ms or 0.0 for o in excluded)))
    return t, [o for o in h.top if o not in excluded]


def round_trip_ms(m) -> float:
    """Blocking D2H copies plus as much blocking H2D copy time coming back."""
    by = {c.direction: c for c in m.memcpy}
    d2h = by["d2h"].blocking_ms_per_step if "d2h" in by else 0.0
    h2d = by["h2d"].blocking_ms_per_step if "h2d" in by else 0.0
    return d2h + min(d2h, h2d)


@rule(ID, "§1.2.2", "Ops placed on the host instead of the GPU",
      thresholds=("host_op_placement.warning", "host_op_placement.critical", "round_trip.min_bytes"), card="host_op_share", waits=("host_compute",))
def check(m: HostMetrics) -> list[Finding]:
    if not framework(m).applies("host_op_share"):
        return round_trip_check(m)
    ctx = Ctx(m)
    h = m.host_ops
    if ctx.step_ms is None or not h.count_per_step:
        return []
    t_ms, top = host_op_time(m)
    if not top and h.top:
        return []  # only loss-scaling ops: loss_scaling_gaps reports them
    share = min(1.0, ctx.share(t_ms) or 0.0)
    sev = grade(share, "host_op_placement.warning", "host_op_placement.critical")
    if sev is None:
        return []
    # the GPU idles while host-placed ops run: the step's ledger books that as host work first, then as launch wait
    # (an op on the host delays the launches after it); each part is claimed where the ledger holds it (issue #36:
    # all of it was claimed as host work, 3.48 ms of the 2.27 ms v100 bert's ledger holds there)
    on_host = min(t_ms, m.breakdown.host_compute + m.breakdown.managed_read + m.breakdown.other)
    on_launch = min(t_ms - on_host, m.breakdown.launch_wait)
    copies = round_trip_ms(m)
    save_ms = on_host + on_launch + copies
    heavy = [o for o in top if any(k in o.op_type for k in _HEAVY)]
    rows = [[short(o.op_name, 60), o.op_type, o.occurrences, o.host_self_ms] for o in top[:15]]
    heavy_txt = f" Compute-heavy ops on the host: {', '.join(sorted({o.op_type for o in heavy})[:5])}." if heavy else ""
    copy_txt = f"; their tensors round-trip through {ms(copies)} of blocking copies" if copies > 0 else ""
    return [finding(
        ctx, ID, sev,
        f"{ctx.count_per_step(h.count_per_step, ctx.fw.label('ops_short').removesuffix('s'), ctx.fw.label('ops_short'))} run on the host ({pct(h.share_by_count)} of ops by "
        f"count), taking {ctx.part_of_step(t_ms)} ({pct(share)}){copy_txt}.{heavy_txt}",
        metric=share_metric("host_op_time_share", "Host-placed op time share of {step}", share,
                            "host_op_placement.warning", severity=sev,
                            detail={"host_op_share_by_count": h.share_by_count, "host_ops_per_step": h.count_per_step,
                                    "host_op_ms_per_step": t_ms, "round_trip_copy_ms_per_step": copies}),
        saving=saving(ctx, save_ms, "host-placed ops move to the GPU: the GPU no longer idles while they run on the "
                                    "host, and their device->host->device copies disappear",
                      [("host", "host_work", on_host), ("launch", "launch", on_launch), ("copies", "copies", copies)]),
        evidence=[table("Host-placed ops by host time ({kept}, all GPUs)", ["op", "type", "occurrences", "host ms"], rows)],
        actions=ctx.fw.fix(ID),
    )]


def round_trip_check(m) -> list:
    """Frameworks without op placement (JAX): the step's data goes to the host and back, with the GPU idle.

    Same guide check (computation placed on the host instead of the GPU), measured from the copies: the
    GPU idle time between each step's device->host copy and the host->device copy after it.  Saving: that
    idle time plus the blocking copies (the work moves onto the GPU, the copies disappear).
    """
    ctx = Ctx(m)
    rt = m.round_trip
    if ctx.step_ms is None or not rt.steps_with:
        return []
    graded = ctx.graded(rt.idle_ms_per_step, "host_op_placement.warning", "host_op_placement.critical")
    if graded is None:
        return []
    share, sev = graded
    copies = round_trip_ms(m)
    # the trip's idle is claimed where the ledger books it: the host's own time (``host``) as far as the step holds
    # it, the rest -- the GPU waiting on the next launch once the data is back -- as launch wait (h37-randjobs4:
    # 44 us claimed as host time of a step whose ledger holds 41 us there, the other 3 us booked as launch wait)
    held = (m.breakdown.host_compute or 0.0) + (m.breakdown.managed_read or 0.0) + (m.breakdown.other or 0.0)
    host_part = min(rt.idle_ms_per_step, held)
    claims = [("host", "host_work", host_part), ("launch", "launch", rt.idle_ms_per_step - host_part),
              ("copies", "copies", copies)]
    return [finding(
        ctx, ID, sev,
        f"In {rt.steps_with} of {n_of(ctx.steps, 'step')} the data leaves the GPU and comes back: a device->host copy "
        f"({rt.d2h_bytes_per_step / 1e6:.1f} MB {ctx.per_step}), {ms(rt.idle_ms_per_step)} of host work with the GPU idle "
        f"({pct(share)} {ctx.of_step()}), then a host->device copy ({rt.h2d_bytes_per_step / 1e6:.1f} MB).",
        title="Computation leaves the GPU mid-step: a device -> host -> device round trip",
        metric=share_metric("round_trip_idle_share", "GPU idle in host round trips, share of {step}", share,
                            "host_op_placement.warning", severity=sev,
                            detail={"round_trip_idle_ms_per_step": rt.idle_ms_per_step, "steps_with_round_trip": rt.steps_with,
                                    "d2h_bytes_per_step": rt.d2h_bytes_per_step, "h2d_bytes_per_step": rt.h2d_bytes_per_step,
                                    "round_trip_copy_ms_per_step": copies}),
        saving=saving(ctx, rt.idle_ms_per_step + copies, "the host part of the step runs on the GPU instead: the GPU no "
                                                          "longer idles while the host computes, and both copies disappear",
                      [c for c in claims if c[2] > 0]),
        evidence=[table("Round trip per step (mean)", ["steps with a round trip", "GPU idle ms", "D2H MB", "H2D MB"],
                        [[rt.steps_with, rt.idle_ms_per_step, rt.d2h_bytes_per_step / 1e6, rt.h2d_bytes_per_step / 1e6]])],
        # the trip's idle where its claims book it (host work, then launch wait): the text's value, not the copy's too
        windows=step_windows(ctx, label="round trip's host work", draws=("host_compute", "other", "launch_wait"),
                             claimed_ms=rt.idle_ms_per_step),
        actions=ctx.fw.fix(ID),
    )]
