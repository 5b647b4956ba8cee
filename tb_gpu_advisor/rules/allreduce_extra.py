"""§2 item 3: more than one NCCL AllReduce per GPU per step.

Every AllReduce synchronizes all devices; with NCCL there should be one per
GPU per step for the gradients.  Metric: AllReduce calls per GPU per step
(average over active GPUs); fires when it exceeds 1 after rounding to 0.1.
Critical when the extra calls take ``allreduce_extra.critical`` of the step.
Saving: the AllReduce time of the extra calls (one packed call remains).
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules._multi import GPU_COLUMNS, active_gpus, gpu_table_rows, is_multi
from tb_gpu_advisor.rules.base import Ctx, T, count, finding, ms, n_of, rule, saving, step_windows, table, value_metric

ID = "allreduce_extra"


@rule(ID, "§2 item 3", "Extra AllReduce calls per step",
      thresholds=("allreduce_extra.calls_per_gpu_step", "allreduce_extra.critical", "allreduce_extra.min_share"))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    mg = m.multi_gpu
    calls, ar_ms = mg.collective_calls_per_gpu_step, mg.allreduce_ms_per_step or 0.0
    if m.comm.by_type:  # the collective model: AllReduce calls only, and only the time no compute hides
        ar = next((t for t in m.comm.by_type if t.type == "AllReduce"), None)
        if ar is None:
            return []
        calls, ar_ms = ar.calls_per_step, ar.exposed_ms_per_step
        packable = calls - ar.groups_per_step  # calls back to back; one after each GEMM (tensor parallel) is not
        runs = ar.groups_per_step
    else:
        packable, runs = (calls or 0.0) - 1.0, 1.0
    if not is_multi(m) or calls is None:
        return []
    if round(calls, 1) <= T("allreduce_extra.calls_per_gpu_step") or round(packable, 1) <= 0:
        return []
    extra_ms = ar_ms * packable / calls if calls > 0 else 0.0
    if (ctx.share(extra_ms) or 0.0) < T("allreduce_extra.min_share"):
        return []  # extra calls hidden behind compute (DDP buckets during the backward pass) cost nothing
    sev = "critical" if (ctx.share(extra_ms) or 0.0) >= T("allreduce_extra.critical") else "warning"
    per_gpu = ("" if m.comm.by_type else  # the collective model counts AllReduce alone, averaged over the GPUs
               "; " + ", ".join(f"GPU{g.gpu}: {count(round(g.collective_calls_per_step or 0, 1))}" for g in active_gpus(m)))
    return [finding(
        ctx, ID, sev, title=f"Extra AllReduce calls {ctx.per_step}",  # "in the step" where one step was kept
        summary=f"Each GPU makes {ctx.count_per_step(calls, 'AllReduce call')} ({_expected(runs, packable)}{per_gpu}); "
        f"AllReduce takes {ms(ar_ms)} {ctx.per_step} that no compute hides, and every call synchronizes all "
        f"{n_of(len(active_gpus(m)), 'GPU')}.",
        metric=value_metric("allreduce_calls_per_gpu_step", "AllReduce calls per GPU per step", calls, "count",
                            f"{calls:.1f}", "allreduce_extra.calls_per_gpu_step", severity=sev),
        saving=saving(ctx, extra_ms, f"the gradients are reduced in one packed AllReduce {ctx.per_step}: the extra "
                                     "calls' time goes (one call's time remains)" if round(runs, 1) <= 1 else
                      "each call that follows another with no compute between is packed into the one before it: its "
                      "time goes (the runs' first calls remain)", [("collectives", "allreduce", extra_ms)]),
        evidence=[table("Per GPU", GPU_COLUMNS, gpu_table_rows(m))],
        windows=step_windows(ctx, label="AllReduce", n=2, draws=("collectives",), claimed_ms=ar_ms),
        actions=ctx.fw.fix(ID),
    )]


def _expected(runs: float, packable: float) -> str:
    """What one packed call per step would be, as the calls' order shows it: one call, where they all run back to
    back (a step's gradients); else the runs that compute separates -- a call after the compute that made its input
    (tensor parallelism's all-reduce after each GEMM, a DDP bucket during the backward) starts a run of its own and
    is no call to pack (h37-hunt71a's megatron_tp2_v100_turns: 13 tensor-parallel calls in 12 such runs read
    "expected 1 with NCCL")."""
    if round(runs, 1) <= 1:
        return "expected 1 with NCCL"
    k = round(packable, 1)
    return (f"in {count(round(runs, 1))} runs that compute separates, each no call to pack with the one before; "
            f"{n_of(k, 'call')} with no compute between it and the call before it, which one packed call could "
            f"carry with that one")
