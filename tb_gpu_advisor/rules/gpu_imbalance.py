"""§2 item 5: replicas do unequal work; typically GPU0 is oversubscribed.

Metric: ``multi_gpu.compute_imbalance`` = (busiest - the median of its peers) / busiest
of the active GPUs' non-collective compute ms per step (those whose kept steps
hold their compute: ``multi_gpu.compute_gpus``; the busiest is the GPU whose
compute most exceeds its peers' median -- with two GPUs, (max - min) / max).
Each GPU is judged against its peers' median: one slow GPU of 8 is the one
every other waits for, one fast GPU is nobody's wait.  Not busy time: NCCL
kernels spin while they wait for the slowest GPU, so busy time hides the
straggler (it shows the most compute, the others the longest AllReduce).
The words name where the gap is: the kernels the GPU spends longer in than
its peers' median (``multi_gpu.gap_by_kernel``), or that it is spread.
Saving: the heaviest GPU's compute minus the mean (every replica waits for
the slowest), less a slow call's part of the gap (a one-off, no work to
share out), at most the collective and idle time the step's ledger holds
(where no collective binds the ranks, none waits).  Where the gap is one
call of one kernel its peers ran (``multi_gpu.largest_call_excess``, judged
by :func:`one_call`): an info finding naming that call, on each GPU, and no
saving -- work repeats, a one-off cost does not.
"""

from __future__ import annotations


from tb_gpu_advisor.common.fmt import plural
from tb_gpu_advisor.metrics.multigpu import peer_median
from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules._multi import (GPU_COLUMNS, ONE_OFF_COST, active_gpus, kernel_gap_words, gpu_table_rows, is_multi, wait_held_ms,
                                        wait_parts, which_call)
from tb_gpu_advisor.rules.base import (T, Ctx, finding, grade, ms, ms_apart, pct, rule, saving, step_windows, table,
                                      the_others, value_metric)

ID = "gpu_imbalance"


def across_job(f: Finding, job, job_findings: list[Finding]) -> Finding | None:  # noqa: ANN001 - a JobView
    """A host's imbalance on the GPU a job-scope straggler finding names (or on a node a node-wide finding names) is
    the same problem seen from one host: the job's finding, over every rank, replaces it (None)."""
    named = {(j.host, j.gpu) for j in job_findings if j.gpu is not None}
    nodes = {j.host for j in job_findings if j.gpu is None}
    return None if (f.host, f.gpu) in named or f.host in nodes else f


@rule(ID, "§2 item 5", "GPUs do unequal work (one GPU oversubscribed)",
      thresholds=("gpu_imbalance.warning", "gpu_imbalance.critical"), in_job=across_job)
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    mg = m.multi_gpu
    if not is_multi(m) or mg.compute_imbalance is None:
        return []
    sev = grade(mg.compute_imbalance, "gpu_imbalance.warning", "gpu_imbalance.critical")
    if sev is None:
        return []
    # the gap is one slow call of one kernel the other GPU ran too, not work the ranks share unequally: no
    # rebalancing moves it -- said as that call's cost, never dropped unsaid (h37-imb56: the compiled MoE's one 2.44 ms
    # sgemm on rank 0, 9.4 us on rank 1; h37-ranks57)
    one = one_call(mg.largest_call_excess)
    if one is not None:
        return [_one_call_finding(ctx, mg.compute_imbalance, one)]
    gs = [g for g in active_gpus(m) if mg.compute_gpus is None or g.gpu in mg.compute_gpus]
    if not gs:
        return []
    comp = {g.gpu: g.breakdown.device_compute for g in gs}
    # the GPU judged against the median of its peers (``metrics.multigpu.busiest_over_peers``): one slow GPU of 8 is
    # the one every other waits for; one fast GPU is nobody's wait (h37-ranks58)
    heavy = next((g for g in gs if g.gpu == mg.heaviest_compute_gpu), max(gs, key=lambda g: comp[g.gpu]))
    mean = sum(comp.values()) / len(gs)
    others = [g for g in gs if g is not heavy]
    peer = peer_median(comp, heavy.gpu) if others else mean
    coll = {g.gpu: g.breakdown.collectives for g in gs}
    than = (f"vs {ms(peer)} on GPU{others[0].gpu} ({pct(mg.compute_imbalance)} imbalance, collectives excluded)"
            if len(others) == 1 else
            f", {ms(comp[heavy.gpu] - peer)} ({pct(mg.compute_imbalance)}) more than the median of the other "
            f"{plural(len(others), 'GPU')}, {ms(peer)} (collectives excluded)")
    where, once = _where_the_gap_is(mg, comp[heavy.gpu] - peer, ctx.per_step, others)
    return [finding(
        ctx, ID, sev,
        f"GPU{heavy.gpu} computes {ms(comp[heavy.gpu])} {ctx.per_step}{'' if len(others) > 1 else ' '}{than}; "
        f"{_where_they_wait(ctx, heavy, others, coll)}.{where}",
        title=f"GPU{heavy.gpu} is oversubscribed: the GPUs do unequal work",
        metric=value_metric("compute_imbalance", "GPU compute-time imbalance", mg.compute_imbalance, "ratio",
                            pct(mg.compute_imbalance), "gpu_imbalance.warning", severity=sev,
                            detail={"heaviest_gpu": heavy.gpu, "compute_ms": {str(g): v for g, v in comp.items()},
                                    "peer_median_ms": peer,
                                    "collective_ms": {str(g): v for g, v in coll.items()},
                                    "busy_imbalance": mg.busy_imbalance}),
        # the others' wait for the busiest is collective or idle time in the step's ledger: a fix recovers no more
        # (h37-randjobs3: two ranks no collective binds, each at its own pace, recovered 22 us of a ledger holding none)
        # the one call's part is a one-off, no work to share out: the mean work is the rest's (h37-ranks58)
        saving=saving(ctx, min(max(0.0, comp[heavy.gpu] - mean - once * (1.0 - 1.0 / len(gs))), wait_held_ms(m)),
                      "every GPU does the mean amount of work, so the {step} no longer waits for the busiest one"
                      + (f" (its one slow call, {ms(once)} {ctx.per_step}, stays)" if once else ""), wait_parts(m)),
        evidence=[table("Per GPU", GPU_COLUMNS, gpu_table_rows(m))],
        windows=step_windows(ctx, key=lambda s: s.breakdown.device_compute, label="compute", n=2, gpu=heavy.gpu),
        gpu=heavy.gpu,
        actions=ctx.fw.fix(ID, gpu=f"GPU{heavy.gpu}"),
    )]


def _where_the_gap_is(mg, gap: float, per_step: str, others: list) -> tuple[str, float]:  # noqa: ANN001 - MultiGpu, GpuMetrics
    """Where the busiest GPU's compute gap lies, as the metrics state it: the one call that carries part of it
    (``largest_call_excess``, judged not the whole by :func:`one_call`) and the kernels it spends longer in
    (``gap_by_kernel``) -- or that it is spread over many.  Why: a gap said as one number left the reader to find
    which work differs; a slow call counted in it unnamed read as work to rebalance (h37-ranks57 *Left* 3).  With the
    words, the one call's part of the gap (ms per step; 0 where none is said): a one-off, no work to share out."""
    if gap <= 0:
        return "", 0.0
    said, part = [], 0.0
    by = mg.gap_by_kernel if mg.gap_by_kernel and mg.gap_by_kernel.get("gpu") == mg.heaviest_compute_gpu else None
    kernel_more = dict((k, v) for k, v in by["kernels"]) if by else {}
    one = mg.largest_call_excess
    # the one call is said where it holds most of its kernel's excess (a kernel slower every call is work, its one
    # call no news): its part, never above the gap
    if one and one.get("gpu") == mg.heaviest_compute_gpu and one.get("excess_ms", 0.0) > 0 and \
            float(one["excess_ms"]) >= 0.5 * kernel_more.get(one["kernel"], float(one["excess_ms"])):
        part = min(float(one["excess_ms"]), gap)
        said.append(f" One call of `{one['kernel']}` ({which_call(one)}, {ms(one['ms'])} against {ms(one['peer_ms'])} "
                    f"{_on_peer(one)}) is {ms(part)} {per_step} of the gap ({pct(part / gap)}).")
    said.append(kernel_gap_words(by, gap, f"GPU{others[0].gpu}" if len(others) == 1 else "its peers"))
    return "".join(said), part


def _on_peer(one: dict) -> str:
    """Where the matched call's peer time was taken: the other GPU, or the median of several."""
    return f"on GPU{one['peer_gpu']}" if one.get("peer_gpu") is not None else \
        f"on the median of the other {plural(int(one.get('peers') or 2), 'GPU')}"


def one_call(facts: dict | None) -> dict | None:
    """The largest single-call excess (``metrics.multigpu.largest_call_excess``) where it carries the compute gap:
    at least ``gpu_imbalance.one_call_share`` of it, and without it the GPUs' compute is under
    ``gpu_imbalance.warning`` apart -- ``facts`` with ``share_of_gap`` and ``imbalance_without`` added; None where the
    gap is work.  Why: work that differs between ranks repeats (more kernels, or the same kernels longer call after
    call); one call does not carry it, a one-off cost does (h37-imb56)."""
    if not facts or not facts.get("gap_ms"):
        return None
    gap, light = float(facts["gap_ms"]), float(facts["peer_compute_ms"])
    excess = min(float(facts["excess_ms"]), gap)
    left = float(facts["compute_ms"]) - excess  # the busiest GPU's compute without the call
    without = (left - light) / left if left > 0 else 0.0
    if excess < T("gpu_imbalance.one_call_share") * gap or without >= T("gpu_imbalance.warning"):
        return None
    return {**facts, "share_of_gap": excess / gap, "imbalance_without": max(without, 0.0)}


def _one_call_finding(ctx: Ctx, imbalance: float, one: dict) -> Finding:
    """The compute gap said as what it is -- one call of one kernel, its time on each GPU -- with no saving: no
    rebalancing moves it, and the steady state does not pay it again (info)."""
    gpu, peer, which = one["gpu"], one["peer_gpu"], which_call(one)
    theirs = f"GPU{peer}'s" if peer is not None else \
        f"the median of the other {plural(int(one.get('peers') or 2), 'GPU')}'"
    f = finding(
        ctx, ID, "info",
        f"GPU{gpu}'s compute exceeds {theirs} by {ms(one['gap_ms'])} {ctx.per_step} ({pct(imbalance)} "
        f"imbalance), and {pct(one['share_of_gap'])} of that is one call: `{one['kernel']}` ({which}) took "
        f"{ms(one['ms'])} on GPU{gpu} and {ms(one['peer_ms'])} {_on_peer(one)}. Without it the GPUs' compute is "
        f"{pct(one['imbalance_without'])} apart: the GPUs do the same work, and that call paid {ONE_OFF_COST}, "
        "which no rebalancing of the work moves.",
        title=f"One slow kernel call on GPU{gpu}, not unequal work",
        metric=value_metric("compute_imbalance", "GPU compute-time imbalance", imbalance, "ratio", pct(imbalance),
                            "gpu_imbalance.warning", severity="info",
                            detail={"heaviest_gpu": gpu, "one_call": {k: one[k] for k in (
                                "kernel", "call", "calls", "ms", "peer_ms", "peer_gpu", "share_of_gap",
                                "imbalance_without")}}),
        gpu=gpu,
    )
    f.id += "#one_call"  # a secondary finding of the rule (docs/report-schema.md, Finding ids)
    return f


def _where_they_wait(ctx: Ctx, heavy, others: list, coll: dict) -> str:  # noqa: ANN001 - GpuMetrics
    """Where the other GPUs wait for the busiest, as their numbers show it: inside the collectives where they spend
    longer there than it does (each waits in the AllReduce for its last arrival), else idle outside them -- a wait
    that is no collective time is not said "at the AllReduce" (h37-review11: demo multi_gpu_gpu0_oversubscribed read
    "every replica waits for it at the AllReduce (the others spend 149 us per step in collectives, GPU0 150 us)",
    its other GPUs idle 3.45 ms a step before their collectives)."""
    n = max(len(others), 1)
    in_coll = sum(coll[g.gpu] for g in others) / n
    # to the digits that tell the two apart: a wait of a microsecond in a 12.6 ms all-reduce read "12.6 ms ..., GPU1
    # 12.6 ms" beside "waits for it at the AllReduce" (h37-randjobs3, seed 12627)
    mine, theirs = ms_apart(coll[heavy.gpu], in_coll)
    said = (f"{the_others(len(others), 'GPU', 'spend', 'the others spend')} {theirs} {ctx.per_step} in "
            f"collectives, GPU{heavy.gpu} {mine}")
    gap = heavy.breakdown.device_compute - peer_median({g.gpu: g.breakdown.device_compute for g in (heavy, *others)},
                                                       heavy.gpu)
    if in_coll - coll[heavy.gpu] >= 0.5 * gap:
        return f"every replica waits for it at the AllReduce ({said})"
    def rest(g) -> float:  # noqa: ANN001 - the step less its compute and collectives: the ranks table's "other ms"
        return max(0.0, (g.step_ms or 0.0) - g.breakdown.device_compute - g.breakdown.collectives)
    # the window each GPU's time is of: the one home's noun ("step"; "pass" or the job's word where the capture holds
    # one: h37-onepass2, h37-review25)
    noun = ctx.step_noun
    if in_coll + sum(rest(g) for g in others) / n < 0.5 * gap:  # no time in their steps to wait in: each at its own pace
        return (f"{the_others(len(others), 'GPU', 'do', 'the others do')} not wait for it: "
                f"{'its' if len(others) == 1 else 'their'} {noun} holds {ms(in_coll + sum(rest(g) for g in others) / n)} "
                f"of collectives and idle {ctx.per_step}: the ranks run each at its own pace, GPU{heavy.gpu}'s "
                f"{noun if ctx.one_pass else 'steps'} the longer")
    return (f"{the_others(len(others), 'GPU', 'wait', 'the others wait')} for it outside the collectives, not "
            f"inside them: the rest of {'its' if len(others) == 1 else 'their'} {noun} beside compute and collectives is "
            f"{ms(sum(rest(g) for g in others) / n)} "
            f"{ctx.per_step} (GPU{heavy.gpu} {ms(rest(heavy))}), while {said}")

