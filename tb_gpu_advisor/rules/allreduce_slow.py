"""§2.1 Gradient AllReduce slower than expected.

Expected time ~ params × 4 bytes / bandwidth (gradients travel in fp32 even
with fp16).  With a parameter count (``--params``, TensorBoard's ``--gpu_advisor_params`` or the tab's
Settings) the metric is measured / expected AllReduce time; without
it, the collective share of the step, reported as info only (stock: >=3% moderate): nothing says it is slow, and
the communication the step pays for is ``comm_exposed``'s finding.
Measured on the GPU that enters the AllReduce last (the smallest per-GPU time): the others' extra time is
waiting for it, which gpu_imbalance and launch_skew report.  Saving: measured - expected (or nothing known
without a count).
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules._multi import GPU_COLUMNS, gpu_table_rows, is_multi
from tb_gpu_advisor.rules.base import (Ctx, T, action, count, finding, grade, ms, pct, rule, saving, share_metric,
                                       table, value_metric)

ID = "allreduce_slow"


@rule(ID, "§2.1", "Gradient AllReduce is slower than expected",
      thresholds=("allreduce_slow.ratio_warning", "allreduce_slow.ratio_critical", "allreduce_slow.share_info",
                  "allreduce.bandwidth_GBps"))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    mg = m.multi_gpu
    if not is_multi(m) or not mg.allreduce_ms_per_step or ctx.step_ms is None:
        return []
    # the transfer: the GPU that arrives last waits least; the others' extra time is a straggler or a late launch,
    # which gpu_imbalance and launch_skew report (NCCL kernels spin while they wait)
    ar = mg.allreduce_transfer_ms_per_step if mg.allreduce_transfer_ms_per_step is not None else mg.allreduce_ms_per_step
    # the mean over every GPU less the last one's: per GPU that waits, the others' mean excess is n/(n-1) of it (the
    # last GPU waits 0) -- the ranks table's number (issue #36: "the others spend 880 us more" beside its 1.17 ms)
    n = sum(1 for g in m.gpus if g.active)
    waited = ((mg.allreduce_ms_per_step or 0.0) - ar) * (n / (n - 1) if n > 1 else 1.0)
    share = ctx.share(ar)
    params = mg.params
    bw = mg.bandwidth_bytes_per_s or T("allreduce.bandwidth_GBps") * 1e9
    bw_src = mg.bandwidth_source or f"assumed {T('allreduce.bandwidth_GBps'):g} GB/s (thresholds table)"
    expected = mg.expected_allreduce_ms
    if expected is None and params:
        expected = params * 4.0 / bw * 1000.0
    evidence = [table("Per GPU", GPU_COLUMNS, gpu_table_rows(m))]
    if expected:
        ratio = ar / expected
        sev = grade(ratio, "allreduce_slow.ratio_warning", "allreduce_slow.ratio_critical")
        if sev is None or (share or 0) < T("allreduce_slow.share_info"):
            return []
        return [finding(
            ctx, ID, sev,
            f"AllReduce takes {ms(ar)} per step ({pct(share)} of the {ms(ctx.step_ms)} step), {ratio:.1f}× the "
            f"expected {ms(expected)} for {count(params)} parameters × 4 bytes at {bw / 1e9:.0f} GB/s.{_waited(waited)}",
            metric=value_metric("allreduce_vs_expected", "AllReduce time / expected", ratio, "ratio", f"{ratio:.1f}×",
                                "allreduce_slow.ratio_warning", severity=sev,
                                detail={"allreduce_ms": ar, "expected_ms": expected, "params": params,
                                        "params_source": mg.params_source, "bandwidth_bytes_per_s": bw,
                                        "bandwidth_source": bw_src}),
            saving=saving(ctx, ar - expected, "AllReduce runs at the expected params × 4 B / bandwidth",
                          [("collectives", "allreduce", ar - expected)]),
            evidence=evidence,
            actions=_actions(ctx.vendor),
        )]
    # without the parameter count nothing says the AllReduce is slow: measured, not judged (info).  The time the
    # step pays for communication is comm_exposed's finding, across every rank of the job
    sev = "info" if (share or 0) >= T("allreduce_slow.share_info") else None
    if sev is None:
        return []
    return [finding(
        ctx, ID, sev,
        f"AllReduce takes {ms(ar)} per step, {pct(share)} of the {ms(ctx.step_ms)} step (stock: collectives >=3% "
        f"moderate, >=15% high); give the model's parameter count to compare with the expected params × 4 B / "
        f"bandwidth.{_waited(waited)}",
        # without the parameter count nothing says it is slow: the title states what was measured, not a verdict;
        # ``needs_setting`` lets the tab point at its Settings field that would judge it
        title="AllReduce time measured, not judged: give the parameter count to compare",
        metric=share_metric("collective_share", "AllReduce share of step", share, "allreduce_slow.share_info",
                            severity=sev, detail={"allreduce_ms": ar, "needs_setting": "params"}),
        saving=None,
        evidence=evidence,
        actions=[action("Give the model's parameter count (Model.summary(), or sum(p.numel() for p in "
                        "model.parameters())) to get the expected AllReduce time: Parameters in the Advisor tab's "
                        "Settings, TensorBoard's --gpu_advisor_params, or the command line's --params.",
                        "tb-gpu-advisor report LOGDIR --params 110000000", "shell")] + _actions(ctx.vendor),
    )]


def _waited(waited_ms: float) -> str:
    """The part of the average AllReduce time that is waiting for the last GPU, when it is worth a sentence."""
    if waited_ms < 0.05:
        return ""
    return (f" That is the GPU that enters it last; the others spend {ms(waited_ms)} more per step inside it, "
            f"waiting for that GPU (see imbalance and launch skew).")


def _actions(vendor) -> list:  # noqa: ANN001 - a devices vendor module
    return [
        action("Raise the per-GPU batch size: step time grows, communication does not."),
        vendor.FIXES["topology"],
    ]
