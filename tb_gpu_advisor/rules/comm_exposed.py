"""§2 Communication the step pays for: collective time no compute overlaps, across every rank of the job.

Per rank and collective type (``metrics.comm``, kept per GPU in the host reports): the exposed time -- collective
kernels minus every compute kernel of the same GPU, on any stream -- counted at most up to the type's transfer
time, the least time any rank of the job spends in it (``JobView.transfer_ms``; the rest is waiting for a late
rank, which ``rank_straggler``, ``node_straggler`` and ``gpu_imbalance`` report).  Metric: the median rank's
paid communication / the job's median step.  Collectives hidden behind compute are healthy and never counted:
a finding rests only on time the step waits for communication.  Saving: what overlapping could hide -- at most
the rank's compute to hide behind, AllReduce at most its expected transfer time when it is known (the parameter
count: ``--params`` or the tab's Settings; the rest is ``allreduce_slow``'s: the link, not the overlap), AllToAll at
most its time with balanced splits (the rest is ``alltoall_imbalance``'s).

Small collectives launched one by one (a per-parameter all-reduce loop: ``RankRow.paced``) cost the step the GPU idle
between them as well -- each call pays a launch and the library's latency --, which the ledger books with the
collectives, not as launch wait: it is paid communication, and bucketing the calls (a few calls of the same bytes)
recovers it whole; the bucketing fix comes first then.

Where ranks of the job have no GPU work recorded (``JobView.unrecorded``), the finding says the recorded ranks' time
in the collectives may be waiting for them, which their traces cannot tell from the transfer: the transfer is not known
(``JobView.transfer_known``), so neither is the part of the exposed time the step pays for it, nor what overlapping
saves -- the finding grades the time the step waits in collectives, transfer and wait together, prints no paid time
(the table's "paid ms" is empty, the metric has no ``paid_ms_per_step``) and claims no saving -- but where the
AllReduce's expected transfer bounds it (the parameter count given): overlap hides at most that.  A DDP job whose slow
rank's GPU side went unrecorded read "1.32 ms of communication the step pays for", saving 1.32 ms, of a 150 us
AllReduce, the rest its wait for that rank (h37-review61b *Left* 2).
"""

from __future__ import annotations

import dataclasses

from tb_gpu_advisor.job.exchange import tagged_exchange
from tb_gpu_advisor.metrics.job import JobView, RankRow
from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding, Table
from tb_gpu_advisor.rules._job import fixes_for, job_finding, med, unrecorded_ranks_words
from tb_gpu_advisor.rules.base import SEE_IMBALANCE, SEE_STRAGGLERS, Ctx, finding, grade, ms, n_of, pct, saving, share_metric, step_windows, table
from tb_gpu_advisor.rules.registry import rule
from tb_gpu_advisor.rules.step_gaps import COMMUNICATE

ID = "comm_exposed"


def paced_ms(r: RankRow) -> float:
    """A rank's GPU idle per step between its small collectives launched one by one (``RankRow.paced``)."""
    return sum(v[0] for v in r.paced.values())


def hideable_ms(job: JobView, r: RankRow) -> float | None:
    """What overlapping could hide on one rank (see the module docstring), and what bucketing its small collectives
    launched one by one recovers: the idle between them.  None where a transfer it runs is not known
    (``JobView.transfer_known``): overlap hides the transfer, never the wait for a late rank."""
    o = _overlap_ms(job, r)
    return None if o is None else o + paced_ms(r)


def paid_ms(job: JobView, r: RankRow, types: list[str]) -> float | None:
    """A rank's communication the step pays for: its exposed transfers and the idle between its small collectives
    launched one by one; None where a transfer is not known (``JobView.paid_ms``)."""
    xs = [job.paid_ms(r, t) for t in types]
    return None if None in xs else sum(x or 0.0 for x in xs) + paced_ms(r)


def _overlap_ms(job: JobView, r: RankRow) -> float | None:
    """What overlapping could hide on one rank: its exposed transfers, at most its compute."""
    hide = 0.0
    for t in r.collectives:
        x = job.paid_ms(r, t)
        if t == "AllReduce" and job.expected_allreduce_ms is not None:
            # the expected transfer bounds what overlap hides, known or not the transfer read (the parameter count)
            x = min(r.collectives[t][2] if x is None else x, job.expected_allreduce_ms)
        if x is None:
            return None
        skew = job.message_skew(t) if t == "AllToAll" else None
        if skew is not None and skew[1] > 0:
            x *= skew[2] / skew[1]  # the rest is the skewed splits' time: alltoall_imbalance's
        hide += x
    return max(0.0, min(hide, r.compute_ms))


def host_calls_in_job(f: Finding, job: JobView, job_findings: list[Finding]) -> Finding:
    """The host-calls finding (:func:`host_calls_finding`) judged across the job's ranks: its saving is the
    communication itself, the least wait any rank shows in the calls (``JobView.host_calls_transfer_ms``), as the
    collectives' rule pays a kernel's exposed time only up to its transfer.  Why: every rank leaves the exchange
    together, so the ranks that wait longer than the least wait for the rank that arrives last -- time
    ``rank_straggler`` claims; a 4-rank MPI job with one rank 1.5 ms late claimed 1.65 ms here (the hosts' mean wait)
    beside the straggler's 1.50 ms, for 2.02 ms of wait.  Ranks of one host file alike (the host's finding is the mean
    of its GPUs' waits; ``gpu_imbalance`` claims the wait for its busiest GPU): CME 213's 4-rank OpenMP export saved
    4.71 ms there beside the imbalance's 0.32 ms, for 4.92 ms of the longest wait.  Any other finding of the rule, or a
    job without the ranks' waits (one rank waits, or a report before 0.1.0+a52): as the hosts found it."""
    transfer = job.host_calls_transfer_ms()
    if not f.id.endswith("#host_calls") or f.saving is None or transfer is None or \
            ms(transfer) == ms(f.saving.ms_per_step) or transfer > f.saving.ms_per_step:
        return f
    k = transfer / f.saving.ms_per_step if f.saving.ms_per_step > 0 else 0.0
    saving = dataclasses.replace(
        f.saving, ms_per_step=round(transfer, 4), percent_of_step=round(100.0 * transfer / job.step_ms, 2),
        assumption=f"{f.saving.assumption}; across the job at most the least any {job.unit} waits in them "
                   f"({ms(transfer)}): the rest is waiting for the {job.unit} that arrives last",
        recovers=[{**r, "ms": r["ms"] * k} for r in f.saving.recovers])
    wait = med([r.host_calls_ms or 0.0 for r in job.ranks]) - transfer
    return dataclasses.replace(
        f, saving=saving,
        summary=f"{f.summary} Across the {len(job.ranks)} {job.units}, the least any waits in these calls is "
                f"{ms(transfer)} {job.per_step}: the communication itself; the median {job.unit} waits {ms(wait)} "
                f"more, for the {job.unit} that arrives last{SEE_STRAGGLERS if len(job.hosts) > 1 else SEE_IMBALANCE}.")


@rule(ID, "§2", "Communication is exposed: the step waits for collectives no compute overlaps",
      thresholds=("comm_exposed.warning", "comm_exposed.critical"), scope="job", in_job=host_calls_in_job)
def check(job: JobView) -> list[Finding]:
    types = job.types()
    if not types or not job.step_ms:
        return []
    each = [paid_ms(job, r, types) for r in job.ranks]
    paid = None if None in each else med([x or 0.0 for x in each])
    paced = med([paced_ms(r) for r in job.ranks])
    # where the transfer is not known, what is known: the time the step waits in collectives, transfer and wait
    waits = med([sum(c[2] for c in r.collectives.values()) + paced_ms(r) for r in job.ranks]) if paid is None else paid
    share = waits / job.step_ms
    sev = grade(share, "comm_exposed.warning", "comm_exposed.critical")
    if sev is None:
        return []
    rows = []
    for t in types:
        c = job.summary(t)
        rows.append([t, round(c.calls, 2), c.ms, c.exposed_ms, c.transfer_ms, c.paid_ms, c.bytes_per_call,
                     round(c.bus_bytes_per_s / 1e9, 2) if c.bus_bytes_per_s else None])
    total, exposed = med([sum(c[1] for c in r.collectives.values()) for r in job.ranks]), \
        med([sum(c[2] for c in r.collectives.values()) for r in job.ranks])
    top = rows[0]
    hide = [hideable_ms(job, r) for r in job.ranks]
    save = None if None in hide else med([x or 0.0 for x in hide])
    n = len(job.ranks)
    scope = f"the median of {n} {job.unit}s" if n > 1 else _one_rank(job.ranks[0])
    step = job.step_word if job.one_step and not job.marked else "step"  # an unmarked pass (h37-words20)
    f = job_finding(
        job, ID, sev,
        f"Collectives take {job.part_of_step(total)} ({scope}), and {ms(exposed)} of it runs with no "
        f"compute to overlap it"
        + ("" if paid is None else _wait_clause(exposed, paid - paced, job.unit))
        + (_paced_clause(job, paced) if paced > 0 else "")
        + (f": {ms(paid)} ({pct(share)} of the {step}) of communication the {step} pays for" if paid is not None else
           f": the {step} waits {ms(waits)} ({pct(share)}) in collectives, their transfer and any wait for a late "
           f"{job.unit} together")
        + f". Most exposed: {top[0]}, "
          f"{_calls(top[1])} and {ms(top[3])} exposed {job.per_step}{'' if float(round(top[1], 1)).is_integer() else ' on average'}."
        + (unrecorded_ranks_words(job, ", and no bus bandwidth is read from it")
           or (unseen_ranks_words(job) if n == 1 else "")),
        metric=share_metric("comm_exposed_share", "Exposed communication share of {step}", share, "comm_exposed.warning",
                            severity=sev, detail={"collective_ms_per_step": total, "exposed_ms_per_step": exposed,
                                                  **({"paid_ms_per_step": paid} if paid is not None else {}),
                                                  "ranks": n,
                                                  **({"paced_ms_per_step": paced} if paced > 0 else {})}),
        saving_ms=save or 0.0, pool="exposed_comm",
        assumption=("the small collectives launched one by one packed into a few calls of the same bytes, so the GPU "
                    "idle between them goes; " if paced > 0 else "")
                   + "the exposed collectives overlap with compute (bucketed and prefetched communication), up to "
                   f"each {job.unit}'s compute time to hide behind; AllReduce at most its expected transfer time when "
                   "the parameter count is given",
        evidence=[Table(f"Collectives {job.per_step} (median {job.unit})", ["collective", "calls", "ms", "exposed ms",
                                                               "transfer ms", "paid ms", "bytes per call",
                                                               "bus GB/s"], rows)],
        actions=fixes_for(job, ID, (["paced"] if paced > 0 else []) + fix_variants(job, types[:2])), host=job.ranks[0].host if len(job.hosts) == 1 else None,
        title=f"Communication is exposed: the {step} waits for collectives no compute overlaps",
    )
    # overlap hides the transfer, never the wait for a late rank: with the transfer unknown, so is what it saves
    return [f if save is not None else dataclasses.replace(f, saving=None)]


def fix_variants(job: JobView, types: list[str]) -> list[str]:
    """The fixes' variants of the listed collective types: an all-to-all's by what it exchanges where the job stage
    read it from the work beside it (``AllToAll/experts``: an MoE's tokens are not TorchRec's embedding rows), then
    the rule's general fix ("any": DDP's buckets) -- left out where every listed type is such an all-to-all, whose
    step holds no gradient all-reduce for it to speak of (h37-a2afix: a DeepEP job was told DDP's buckets)."""
    kind = tagged_exchange(job.tags)
    if kind is None:
        return types + ["any"]
    named = [f"{t}/{kind}" if t == "AllToAll" else t for t in types]
    return named if all(t == "AllToAll" for t in types) else named + ["any"]


def _wait_clause(exposed: float, paid: float, unit: str) -> str:
    """The part of the exposed time that is waiting for the last rank, said wherever the two printed numbers differ:
    "528.0 ms of it runs with no compute to overlap it: 505.3 ms of communication the step pays for" read as one
    quantity with two values (tp_rtx4090_two_ranks, h37-review3: its 22.7 ms wait was under the 5% that points to the
    straggler findings, so it went unsaid).  The pointer to those findings stays for a wait large enough to be one.
    ``unit``: what enters the collective, ``JobView.unit``."""
    wait = max(0.0, exposed - paid)
    if ms(exposed) == ms(paid):
        return ""
    return (f", of which {ms(wait)} is waiting for the {unit} that enters the collective last"
            + (SEE_STRAGGLERS if wait >= 0.05 * max(exposed, 1e-9) else ""))


def _paced_clause(job: JobView, paced: float) -> str:
    """The idle between small collectives launched one by one, said with the calls it lies between (the median
    rank's type of most such idle)."""
    top: dict[str, float] = {}
    for r in job.ranks:
        for t, v in r.paced.items():
            top[t] = top.get(t, 0.0) + v[0]
    t = max(top, key=top.__getitem__)
    calls = med([r.collectives[t][0] for r in job.ranks if t in r.collectives])
    return (f", and the GPU idles {ms(paced)} between its {n_of(round(calls, 1), 'small ' + t + ' call')} "
            f"{job.per_step} launched one by one (each pays a launch and the library's latency: their number costs "
            f"it, not their bytes)")


def unseen_ranks_words(job: JobView) -> str:
    """What a lone rank's exposed collectives cannot say, and where to see it, as the job's context has it: the runs
    that hold the other ranks where the job wrote each rank into its own folder (``JobView.rank_runs``), else
    "profile every rank" -- never advice to do what was done (h37-wild56r)."""
    unit, units = job.unit, job.units
    linked = job.rank_runs
    if linked is None:
        return (f" One {unit}'s trace cannot tell the transfer from waiting for the other {units}: profile every {unit} "
                "to separate them.")
    one = linked.world - len(linked.ranks) == 1
    runs = ", ".join(f"'{r}'" for r in linked.runs)
    where = f"in {'run' if len(linked.runs) == 1 else 'runs'} {runs}"
    return (f" One {unit}'s trace cannot tell the transfer from waiting for the other {units}: "
            f"{'its trace is' if one else 'their traces are'} {where}, read together only from one folder.")


def _one_rank(r: RankRow) -> str:
    """Whose step, on one rank's file: collectives run between ranks, so the step is this rank's, one of the group
    its messages name ("this rank of 8") -- not "the GPU", the words of a job that is one GPU (h37-review2)."""
    group = max((m[1] for m in r.messages.values()), default=0)
    return f"this rank of {group}" if group > 1 else "this rank"


def _calls(n: float) -> str:
    """"1 call", "2 calls", "1.5 calls": a whole count as one, a mean with its decimal (issue #36: "1.0 calls")."""
    k = round(n, 1)
    return f"{k:g} call" if k == 1 else f"{k:g} calls"


def host_calls_finding(metrics: HostMetrics) -> Finding | None:
    """The GPU idles inside the step while the host waits in a communication library's calls (``MPI_Wait`` of an
    ``MPI_Iallreduce``, a blocking ``MPI_Allreduce``), no collective kernel running: communication the step pays for,
    graded as the exposed collectives are (the share of the step), fired whatever else fired.

    Why: a program that reduces its gradients through MPI from the host runs no collective kernel, so the collectives'
    table above is empty, and the ledger booked the GPU's idle in ``MPI_Wait`` the host's own work: Stanford CME 213's
    ``train_mpi`` (h37-survey54) read "Host-bound ... 1.60 ms/step (41%)" for 2.27 ms of each ~4 ms step spent in
    ``MPI_Wait``.  The ledger books that idle with the collectives (``metrics.breakdown.comm_call_spans``,
    ``HostMetrics.idle_in_comm_calls``); this finding says it, with the calls' names and time, and the fix is the
    communication's: overlap it, or a rank arrives late.  The GPU idle after a step's last kernel is the gap check's."""
    calls = metrics.idle_in_comm_calls
    ctx = Ctx(metrics)
    wait = sum(v for _, v in calls)
    if not calls or not ctx.step_ms or wait <= 0:
        return None
    share = wait / ctx.step_ms
    sev = grade(share, "comm_exposed.warning", "comm_exposed.critical")
    if sev is None:
        return None
    names = ", ".join(f"`{n}` {ms(v)}" for n, v in calls)
    f = finding(
        ctx, ID, sev,
        f"For {ms(wait)} of {ctx.the_step()} ({pct(share)}) the GPU idles while the host waits in a communication "
        f"library's calls ({names} {ctx.per_step}): the process waits on the other processes -- their data, or the "
        f"last of them to arrive -- and no collective kernel runs meanwhile, so this is communication the "
        f"{ctx.unit} pays for, not the host's own work.",
        title=f"Communication is exposed: the GPU idles while the host waits in communication calls inside the "
              f"{ctx.unit}",
        metric=share_metric("comm_exposed_share", "Exposed communication share of {step}", share,
                            "comm_exposed.warning", severity=sev, detail={"host_calls_ms_per_step": round(wait, 4)}),
        saving=saving(ctx, wait, "the communication overlaps the GPU's work (posted non-blocking before the next "
                                 "kernels, waited for where its data is needed), and no process arrives late",
                      [("collectives", "exposed_comm", wait)]),
        evidence=[table(f"Communication calls the host waited in while the GPU idled (ms {ctx.per_step})",
                        ["call", "ms"], [[n, v] for n, v in calls])],
        windows=step_windows(ctx, label="waiting in communication", draws=("collectives",), claimed_ms=wait),
        actions=[COMMUNICATE],
    )
    f.id += "#host_calls"  # a secondary finding of the rule (docs/report-schema.md, Finding ids)
    return f

