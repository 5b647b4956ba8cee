"""§2.1 Gradient AllReduce slower than expected.

Expected time ~ params × 4 bytes / bandwidth (gradients travel in fp32 even
with fp16).  With a parameter count (``--params``, TensorBoard's ``--gpu_advisor_params`` or the tab's
Settings) the metric is measured / expected AllReduce time; without
it, the collective share of the step, reported as info only (stock: >=3% moderate): nothing says it is slow, and
the communication the step pays for is ``comm_exposed``'s finding.
Measured on the GPU that enters the AllReduce last (the smallest per-GPU time): the others' extra time is
waiting for it, which gpu_imbalance and launch_skew report.  A job of several host files: a host's GPUs can all wait
for another host's GPU (a straggler there), so the rules' job step (``rules.evaluate_session``) judges the session's
finding once on the job's transfer instead -- the least any rank of the job spends in AllReduce (:func:`in_job`) --
and the rest is the straggler findings' wait, claimed once.  Where ranks of the job have no GPU work recorded
(``JobView.unrecorded``) and the AllReduce's process groups may hold them (``JobView.transfer_known``), the
recorded ranks' least time may be their wait for one of those: the time is said as measured, not judged, with no
saving.
Saving: measured - expected (or nothing known without a count).
"""

from __future__ import annotations

import dataclasses

from tb_gpu_advisor.metrics.job import JobView
from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding, Metric, Saving
from tb_gpu_advisor.rules._job import unrecorded_ranks_words
from tb_gpu_advisor.rules._multi import GPU_COLUMNS, gpu_table_rows, is_multi
from tb_gpu_advisor.common.fmt import ms_apart
from tb_gpu_advisor.rules.base import (SEE_IMBALANCE, SEE_STRAGGLERS, Ctx, T, action, count, finding, grade, ms, pct, rule, saving, share_metric,
                                       table, the_others, value_metric)

ID = "allreduce_slow"
#: the collective type this rule judges (``metrics.comm``'s types, as ``JobView`` keys them)
TYPE = "AllReduce"


def across_job(f: Finding, job: JobView, job_findings: list[Finding]) -> Finding | None:
    """The session's finding, judged once on the job's transfer where the job's ranks span several host files (a host
    sees only its own GPUs, and all of them may wait for another host's straggler): :func:`in_job` on
    ``JobView.transfer_ms``; the finding as the hosts found it otherwise.  Where ranks of the job have no GPU work
    recorded (``JobView.unrecorded``) and its process groups may hold them (``JobView.transfer_known``), the least
    time a recorded rank spends in it may be waiting for one of them: the time is said, not judged
    (:func:`_unjudged`)."""
    if TYPE in job.types() and not job.transfer_known(TYPE):
        return _unjudged(f, job)
    if len(job.hosts) < 2 or TYPE not in job.types():
        return f
    out = in_job(f, job.transfer_ms(TYPE), job.step_ms, job.unit, job.per_step)
    how = job.transfer_matching(TYPE)  # the calls not matched across the host files: say the reading is the least host's
    if out is None or how is None or out.summary.endswith(_said(how)):
        return out
    return dataclasses.replace(out, summary=f"{out.summary} {_said(how)}")


def _unjudged(f: Finding, job: JobView) -> Finding:
    """The finding where the job's AllReduce may hold waiting for a rank with no GPU work recorded: the recorded
    ranks' transfer said as measured, never judged against the expected time (a 17.8x "slower than expected" of a
    DDP job's 150 us transfer, its 1.32 ms the recorded ranks' wait for the unrecorded slow rank: ``norank61``),
    no saving claimed -- what the step would gain is not known."""
    d = (f.metric.detail or {}) if f.metric is not None else {}
    ar = d.get("allreduce_ms")
    if not isinstance(ar, (int, float)) or not job.step_ms:
        return f
    ar = min(ar, job.transfer_ms(TYPE) or ar)
    share = ar / job.step_ms
    words = unrecorded_ranks_words(job, ": the AllReduce is not judged against its expected time")
    metric = share_metric("collective_share", f"AllReduce share of {_word(job.per_step)}", share,
                          "allreduce_slow.share_info", severity="info", detail={**d, "allreduce_ms": ar})
    return dataclasses.replace(f, severity="info", saving=None, metric=metric,
                               title="AllReduce time measured, not judged: a rank's GPU work was not recorded",
                               summary=_measured(ar, share, job.step_ms, job.per_step, ask_params=False)
                               + words)


def _said(how: str) -> str:
    return f"({how[0].upper()}{how[1:]}.)"


@rule(ID, "§2.1", "Gradient AllReduce is slower than expected",
      thresholds=("allreduce_slow.ratio_warning", "allreduce_slow.ratio_critical", "allreduce_slow.share_info",
                  "allreduce.bandwidth_GBps"), in_job=across_job)
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
            _judged(ar, share, ctx.step_ms, ratio, expected, params, bw, ctx.per_step) + _waited(ctx, waited, n - 1),
            metric=_ratio_metric(ratio, sev, {"allreduce_ms": ar, "expected_ms": expected, "params": params,
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
        _measured(ar, share, ctx.step_ms, ctx.per_step) + _waited(ctx, waited, n - 1),
        # without the parameter count nothing says it is slow: the title states what was measured, not a verdict;
        # ``needs_setting`` lets the tab point at its Settings field that would judge it
        title="AllReduce time measured, not judged: give the parameter count to compare",
        metric=share_metric("collective_share", "AllReduce share of {step}", share, "allreduce_slow.share_info",
                            severity=sev, detail={"allreduce_ms": ar, "needs_setting": "params"}),
        saving=None,
        evidence=evidence,
        actions=[action("Give the model's parameter count (Model.summary(), or sum(p.numel() for p in "
                        "model.parameters())) to get the expected AllReduce time: Parameters in the Advisor tab's "
                        "Settings, TensorBoard's --gpu_advisor_params, or the command line's --params.",
                        "tb-gpu-advisor report LOGDIR --params 110000000", "shell")] + _actions(ctx.vendor),
    )]


def _judged(ar: float, share: float | None, step_ms: float, ratio: float, expected: float, params: float,
            bw: float, per_step: str = "per step") -> str:
    """The finding's sentence with a parameter count: the transfer against the expected params x 4 B / bandwidth."""
    part, whole = ms_apart(ar, step_ms)
    return (f"AllReduce takes {part} {per_step} ({pct(share)} of the {whole} {_word(per_step)}), {ratio:.1f}× the "
            f"expected {ms(expected)} for {count(params)} parameters × 4 bytes at {bw / 1e9:.0f} GB/s.")


def _word(per_step: str) -> str:
    """The step's word in ``per_step`` ("in the pass" of an unmarked capture: "pass"), else "step"."""
    return per_step.removeprefix("in the ") if per_step.startswith("in the ") else "step"


def _measured(ar: float, share: float | None, step_ms: float, per_step: str = "per step", *,
              ask_params: bool = True) -> str:
    """The finding's sentence without a parameter count: the transfer measured, not judged (``per_step``: the
    rule's phrase for a time per step, "in the step" in a one-step capture).  ``ask_params``: whether to ask for the
    parameter count -- not where no count could make the measured time a transfer (a rank's GPU work unrecorded)."""
    part, whole = ms_apart(ar, step_ms)
    said = (f"AllReduce takes {part} {per_step}, {pct(share)} of the {whole} {_word(per_step)} (stock: collectives "
            f">=3% moderate, >=15% high)")
    if not ask_params:
        return said + "."
    return said + "; give the model's parameter count to compare with the expected params × 4 B / bandwidth."


def in_job(f: Finding, transfer_ms: float, step_ms: float, unit: str, per_step: str = "per step") -> Finding | None:
    """A host's finding judged on the job's AllReduce transfer: the least time any rank of the job spends in it
    (``JobView.transfer_ms``; every rank leaves together, so the one that enters last waits least).  A host whose
    every GPU waits for another host's GPU (a straggler there: 2.17 ms of a 6.3 ms step on the 2x2 straggler job,
    0.15 ms of it the transfer) measured that wait as its own AllReduce time; the wait is the straggler findings'.
    None where the transfer alone is not worth the finding; the finding unchanged where the host's own time is the
    job's transfer.  ``step_ms``: the step the session's header states (the median rank's); ``unit``: what enters
    the collective (``JobView.unit``)."""
    d = (f.metric.detail or {}) if f.metric is not None else {}
    ar = d.get("allreduce_ms")
    if not isinstance(ar, (int, float)) or not step_ms or ms(transfer_ms) == ms(ar) or transfer_ms > ar:
        return f
    share = transfer_ms / step_ms
    wait = (f" Its GPUs spend {ms(ar - transfer_ms)} more{' per step' if per_step == 'per step' else ''} inside it, waiting for the {unit} of the job that "
            f"enters it last{SEE_STRAGGLERS}.")
    expected = d.get("expected_ms")
    if not expected:
        if share < T("allreduce_slow.share_info"):
            return None
        metric = dataclasses.replace(f.metric, value=round(share, 4), display=pct(share),
                                     detail={**d, "allreduce_ms": transfer_ms, "host_allreduce_ms": ar})
        return dataclasses.replace(f, summary=_measured(transfer_ms, share, step_ms, per_step) + wait, metric=metric)
    ratio = transfer_ms / expected
    sev = grade(ratio, "allreduce_slow.ratio_warning", "allreduce_slow.ratio_critical")
    if sev is None or share < T("allreduce_slow.share_info"):
        return None
    metric = _ratio_metric(ratio, sev, {**d, "allreduce_ms": transfer_ms, "host_allreduce_ms": ar})
    summary = _judged(transfer_ms, share, step_ms, ratio, expected, d.get("params") or 0,
                      d.get("bandwidth_bytes_per_s") or T("allreduce.bandwidth_GBps") * 1e9, per_step) + wait
    return dataclasses.replace(f, severity=sev, summary=summary, metric=metric,
                               saving=_scaled(f.saving, max(0.0, transfer_ms - expected), step_ms))


def _ratio_metric(ratio: float, sev: str, detail: dict) -> Metric:
    """The measured / expected metric, one home for the host's judgement and the job's."""
    return value_metric("allreduce_vs_expected", "AllReduce time / expected", ratio, "ratio", f"{ratio:.1f}×",
                        "allreduce_slow.ratio_warning", severity=sev, detail=detail)


def _scaled(s: Saving | None, ms_per_step: float, step_ms: float) -> Saving | None:
    """A saving cut to the transfer's excess over the expected time, its claims scaled to add up to it."""
    if s is None:
        return None
    k = ms_per_step / s.ms_per_step if s.ms_per_step > 0 else 0.0
    return dataclasses.replace(s, ms_per_step=ms_per_step, percent_of_step=round(100.0 * ms_per_step / step_ms, 2),
                               recovers=[{**r, "ms": r["ms"] * k} for r in s.recovers])


def _waited(ctx: Ctx, waited_ms: float, others: int) -> str:
    """The part of the average AllReduce time that is waiting for the last GPU, when it is worth a sentence."""
    if waited_ms < 0.05:
        return ""
    return (f" That is the GPU that enters it last; {the_others(others, 'GPU', 'spend', 'the others spend')} "
            f"{ms(waited_ms)} more{'' if ctx.one_step else ' per step'} inside it, "
            f"waiting for that GPU{SEE_IMBALANCE}.")


def _actions(vendor) -> list:  # noqa: ANN001 - a devices vendor module
    return [
        action("Raise the per-GPU batch size: step time grows, communication does not."),
        vendor.FIXES["topology"],
    ]
