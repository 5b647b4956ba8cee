"""§2 item 5, across the job: one rank is slower than the others, and every rank waits for it.

Every rank leaves a collective together, so the rank that enters last waits least in it.  The straggler is the
rank with the least exposed communication; metric: how much longer the other ranks (their median) wait in
exposed collectives per step, as a share of the job's median step.  It must also spend at least the others'
median time before its collectives (else the waits have another cause: launch skew).  Both are read per rank,
so no clock alignment between nodes is needed.  Only where the ranks span several host files (one host's GPUs:
``gpu_imbalance``), and not when all ranks of its node are slow (``node_straggler``).
Saving: the others' extra wait, which goes when the straggler keeps pace -- at most the step time a replay of the
calls matched across the host files with the straggler on time gives back (``JobView.replay_gain_ms``, the replay of
``metrics.comm.step_gain`` that ``late_rank`` asks within a host): the others' next work runs inside their wait and
returns to the path (session 68: 2.07 ms of wait, 1.80 of step, a late rank's dispatch on 2 nodes); where another
rank enters a step's last call last the replay is not read (its readiness may wait on the earlier calls).
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.job import JobView, kernel_gap
from tb_gpu_advisor.model.schema import Finding, Table
from tb_gpu_advisor.rules._multi import ONE_OFF_COST, kernel_gap_words, which_call
from tb_gpu_advisor.rules._job import capital, fixes, job_finding, med, ranks_table, slow_node, straggler_meaning
from tb_gpu_advisor.rules.base import T, grade, ms, n_of, pct, share_metric, the_others
from tb_gpu_advisor.rules.registry import rule

ID = "rank_straggler"
#: the title in the job's unit (``JobView.unit``): "A straggler GPU" where one process drives several GPUs
TITLE = "A straggler {unit}: every other {unit} waits for it in the collectives"


@rule(ID, "§2 item 5", TITLE.format(unit="rank"),
      thresholds=("rank_straggler.warning", "rank_straggler.critical", "rank_straggler.min_steps"), scope="job")
def check(job: JobView) -> list[Finding]:
    if len(job.hosts) < 2 or len(job.ranks) < 3 or not job.step_ms:
        return []
    s = min(job.ranks, key=lambda r: r.comm_ms)
    others = [r for r in job.ranks if r is not s]
    waits = med([r.comm_ms for r in others])
    extra = waits - s.comm_ms
    busy_extra = s.busy_ms - med([r.busy_ms for r in others])
    if busy_extra < 0 or (slow_node(job) or (None,))[0] == s.host:
        return []  # it does not do more before the collectives, or its whole node is slow (node_straggler)
    share = extra / job.step_ms
    sev = grade(share, "rank_straggler.warning", "rank_straggler.critical")
    if sev is None:
        return []
    # its lead is one slow call of one kernel the others ran too -- a first call's autotuning or module load, a clock
    # dip --, not a rank slower step after step: said as that call, no straggler (h37-ranks57; gpu_imbalance's
    # judgement of the same facts within one host)
    one = one_call(s, others, busy_extra, extra, job.step_ms)
    if one is not None:
        return [_one_call_finding(job, s, others, one, share)]
    compute_gap = s.compute_ms - med([r.compute_ms for r in others])
    why = ("more compute" if compute_gap >= 0.5 * busy_extra
           else "more time outside its kernels (host work, input, launches)")
    # where that compute lies, by kernel, across the host files (h37-ranks59; gpu_imbalance's words within one host)
    kernels = kernel_gap_words(kernel_gap(s, others), compute_gap, f"the median other {job.unit}") \
        if why == "more compute" else ""
    where = _most_waited(s, others)
    per_step = job.last_per_step()
    last_in = sum(1 for _, r, _ in per_step if r is s)
    persist = f" It enters last in {last_in} of {n_of(len(per_step), 'step')}." if per_step else ""
    # what the straggler's lead can explain: the others wait for it at most as long as it is behind them; the rest
    # of their wait is the collective itself (transfer, skewed splits), which no balancing removes (issue #27 item 2)
    save = min(extra, busy_extra)
    gain = job.replay_gain_ms(s)
    call, once = _call_words(s, others, busy_extra, extra, job.step_ms, job.unit)
    rest = (f" Its lead explains {ms(save)} of that wait; the other {ms(extra - save)} is the collective itself "
            f"(its transfer, skewed splits: see the collectives table and the all-to-all splits finding), which balancing the "
            f"{job.units} does not remove." if extra - save > 0.05 * extra else "")
    gives = _gives_back(job, save, gain)
    weak = len(per_step) < T("rank_straggler.min_steps")
    if weak:
        sev = "warning" if sev == "critical" else sev
        persist += (f" {len(per_step) or 'No'} aligned step{'s' if len(per_step) != 1 else ''} is weak evidence: "
                    f"profile at least {T('rank_straggler.min_steps'):g} steps to tell a straggler from one slow step.")
    f = job_finding(
        job, ID, sev,
        f"{capital(the_others(len(others), job.unit, 'wait'))} {ms(waits)} {job.per_step} in exposed collectives "
        f"(median){where}: {ms(extra)}, {pct(share)} of the {ms(job.step_ms)} {job.step_word if job.one_step else 'step'}, longer than {s.label}, which "
        f"enters them last. It spends {ms(s.busy_ms)} {'of the ' + job.step_word if job.one_step else 'of each step'} before its "
        f"collectives, {ms(busy_extra)} more than the median {job.unit}, "
        f"mostly {why}.{kernels}{call}{rest}{gives}{persist}",
        metric=share_metric("straggler_extra_share", "Straggler's extra time, share of {step}", share,
                            "rank_straggler.warning", meaning=straggler_meaning(job), severity=sev,
                            detail={"rank": s.label, "extra_ms_per_step": extra, "straggler_comm_ms": s.comm_ms,
                                    "straggler_busy_extra_ms": busy_extra, "last_in_steps": last_in,
                                    "steps_aligned": len(per_step),
                                    "others_median_comm_ms": waits, "ranks": len(job.ranks),
                                    "gain_ms": gain}),
        # the one call's part of the lead is a one-off: keeping pace leaves it (h37-ranks58); the step gives back what
        # a replay of the calls with the straggler on time gives, not the others' whole wait (session 68)
        saving_ms=max(0.0, (save if gain is None else min(save, gain)) - once),
        assumption=f"the straggler keeps pace (balanced work or a healthy GPU): the other {job.units} stop waiting for "
                   "it, at most as long as it is behind them" + (f", less the one call's {ms(once)}" if once else "")
                   + ("; the step time given back is a replay of the matched calls with it on time" if gain is not None
                      else ""),
        evidence=[ranks_table(job, mark=s), _steps_table(per_step, job.unit)], actions=fixes(job, ID, gpu=s.label),
        host=s.host, gpu=s.gpu, title=TITLE.format(unit=job.unit),
    )
    if weak:
        f.confidence = "low"
    return [f]


def _gives_back(job: JobView, save: float, gain: float | None) -> str:
    """Words on the step time the straggler keeping pace gives back where a replay of the matched calls reads less than
    the wait its lead explains (``JobView.replay_gain_ms``): the rest is the other ranks' own next work, which ran
    inside their wait; "" where the replay cannot be read or gives it all.  One wording with ``late_rank``'s."""
    if gain is None or save - gain < 0.05 * save:
        return ""
    return (f" If it kept pace the {job.step_word if job.one_step else 'step'} would be {ms(gain)} shorter, not the "
            f"whole wait: {ms(save - gain)} of it is the other {job.units}' own next work (the next bucket's compute, "
            "their launches), which runs inside the wait and is back on the path once it is on time.")


def call_candidates(s, others) -> list[dict]:  # noqa: ANN001 - RankRows
    """The straggler's longest calls (``RankRow.longest_calls``) set against the same kernel's on the median other
    rank, each with its excess per step between two bounds: ``excess_ms`` (the least: a peer's longest call of the
    kernel bounds its same call from above, and a peer that lists its longest calls in full
    (``metrics.multigpu.LONGEST_CALLS``) without the kernel runs it no longer than its shortest listed) and
    ``excess_hi_ms`` (the most: the call's whole time per step, were the peers' same call instant); ``exact`` where
    every peer lists the kernel itself (its longest call is its typical one within the call's own spread).  A peer
    that lists fewer calls than the bound and not this kernel does not run it (work of the straggler's own: no
    candidate).  Empty where a report predates the lists (0.1.0+a78).  Largest least excess first."""
    if not s.longest_calls or any(r.longest_calls is None for r in others):
        return []
    full = max(len(r.longest_calls) for r in [s, *others])
    out = []
    for kernel, i, call_ms, n, per_step in s.longest_calls:
        peers, exact = [], True
        for r in others:
            theirs = {row[0]: row for row in r.longest_calls}
            if kernel in theirs:
                peers.append(float(theirs[kernel][2]))
            elif r.longest_calls and len(r.longest_calls) >= full:
                peers.append(float(r.longest_calls[-1][2]))  # at most its shortest listed
                exact = False
            else:
                peers = None
                break
        if not peers or not call_ms:
            continue
        peer = med(peers)
        out.append({"kernel": kernel, "call": int(i), "calls": int(n), "ms": float(call_ms), "peer_ms": peer,
                    "excess_ms": max(0.0, float(per_step) * (1.0 - peer / float(call_ms))),
                    "excess_hi_ms": float(per_step), "exact": exact})
    return sorted(out, key=lambda c: -c["excess_ms"])


def _carries(c: dict, excess: float, busy_extra: float, extra: float, step_ms: float) -> bool:
    """Whether a call whose excess per step is ``excess`` carries the straggler's lead: at least
    ``gpu_imbalance.one_call_share`` of it, and without it the wait it explains under ``rank_straggler.warning``."""
    excess = min(excess, busy_extra)
    without = min(extra, busy_extra - excess) / step_ms
    return excess >= T("gpu_imbalance.one_call_share") * busy_extra and without < T("rank_straggler.warning")


def one_call(s, others, busy_extra: float, extra: float, step_ms: float) -> dict | None:  # noqa: ANN001 - RankRows
    """The straggler's lead as one call (:func:`call_candidates`): the call whose least excess per step carries it
    (:func:`_carries`) -- with ``share_of_lead`` and ``share_without`` added; None where the lead is work, or no call
    is known to carry it."""
    if busy_extra <= 0:
        return None
    best = next((c for c in call_candidates(s, others) if c["excess_ms"] > 0), None)
    if best is None or not _carries(best, best["excess_ms"], busy_extra, extra, step_ms):
        return None
    excess = min(best["excess_ms"], busy_extra)
    return {**best, "share_of_lead": excess / busy_extra,
            "share_without": max(min(extra, busy_extra - excess) / step_ms, 0.0)}


def undecided_call(s, others, busy_extra: float, extra: float, step_ms: float) -> dict | None:  # noqa: ANN001
    """A call of the straggler that would carry its lead at its most excess and does not at its least
    (:func:`call_candidates`: the peers list their longest calls, not this one's) -- the one-call reading the reports
    cannot decide, said with both bounds rather than read as work (h37-ranks57 *Left* 2); None where none."""
    if busy_extra <= 0:
        return None
    return next((c for c in call_candidates(s, others) if not c["exact"]
                 and _carries(c, c["excess_hi_ms"], busy_extra, extra, step_ms)), None)


#: the least part of the straggler's lead a call it does not carry is named with (a wording bound: smaller parts are
#: no news beside the lead, and every GEMM's longest call is a little longer on a slower rank)
NAMED_PART = 0.1


def _call_words(s, others, busy_extra: float, extra: float, step_ms: float, unit: str) -> tuple[str, float]:  # noqa: ANN001
    """The straggler finding's words on a slow call that does not carry the lead, and the part of the lead known to be
    that call (ms per step, a one-off no rebalancing moves): the call the reports cannot judge (:func:`undecided_call`,
    both bounds; its least part), else the largest call known to hold a part of it -- a call counted in the lead
    unnamed read as the rank's work (h37-ranks57 *Left* 3)."""
    und = undecided_call(s, others, busy_extra, extra, step_ms)
    if und is not None:
        lo, hi = min(und["excess_ms"], busy_extra), min(und["excess_hi_ms"], busy_extra)
        return (f" Its call `{und['kernel']}` ({which_call(und)}, {ms(und['ms'])}) may be most of that lead: the other "
                f"{unit}s' reports list only their longest calls, which bound its same call there by {ms(und['peer_ms'])} "
                f"(the median), so it holds between {ms(lo)} and {ms(hi)} of the {ms(busy_extra)}; were it all, "
                f"{s.label} would be one slow call, not a straggler -- profile the {unit}s again to tell.", lo)
    best = next((c for c in call_candidates(s, others) if c["excess_ms"] >= NAMED_PART * busy_extra), None)
    if best is None:
        return "", 0.0
    part = min(best["excess_ms"], busy_extra)
    return (f" At least {ms(part)} of that lead ({pct(part / busy_extra)}) is one call: `{best['kernel']}` "
            f"({which_call(best)}) took {ms(best['ms'])} on {s.label}, at most {ms(best['peer_ms'])} on the median "
            f"other {unit}, {ONE_OFF_COST} that no rebalancing moves.", part)


def _one_call_finding(job: JobView, s, others, one: dict, share: float) -> Finding:  # noqa: ANN001 - RankRows
    """The others' wait said as the one call the late rank paid (info, no saving): which kernel, which call, how long
    against the median other rank's longest call of it."""
    which = which_call(one)
    f = job_finding(
        job, ID, "info",
        f"{capital(the_others(len(others), job.unit, 'wait'))} for {s.label} in the collectives ({pct(share)} of the "
        f"{job.step_word if job.one_step else 'step'}), and {pct(one['share_of_lead'])} of its lead is one call: "
        f"`{one['kernel']}` ({which}) took {ms(one['ms'])} on {s.label}, at most {ms(one['peer_ms'])} on the median "
        f"other {job.unit}. Without it the wait it explains is {pct(one['share_without'])} of the step: {s.label} does "
        f"the others' work at their pace, and that call paid {ONE_OFF_COST} -- not a straggler to rebalance or "
        "replace.",
        metric=share_metric("straggler_extra_share", "Straggler's extra time, share of {step}", share,
                            "rank_straggler.warning", meaning=straggler_meaning(job), severity="info",
                            detail={"rank": s.label, "one_call": one, "ranks": len(job.ranks)}),
        saving_ms=0.0, assumption="", evidence=[ranks_table(job, mark=s)], actions=[], host=s.host, gpu=s.gpu,
        title=f"One slow kernel call on {s.label}, not a straggler {job.unit}",
    )
    f.saving = None  # no rebalancing moves it, and the steady state does not pay it again
    f.id += "#one_call"
    return f


def _most_waited(s, others) -> str:  # noqa: ANN001 - RankRows
    """', mostly in <type>' when one collective type holds most of the others' extra wait."""
    extra: dict[str, float] = {}
    for t in {t for r in others for t in r.collectives}:
        mine = s.collectives.get(t, (0.0, 0.0, 0.0))[2]
        extra[t] = med([r.collectives.get(t, (0.0, 0.0, 0.0))[2] for r in others]) - mine
    if not extra:
        return ""
    t = max(extra, key=extra.get)
    return f", mostly in {t}" if extra[t] > 0.5 * sum(v for v in extra.values() if v > 0) else ""


def _steps_table(per_step, unit: str) -> Table:  # noqa: ANN001 - JobView.last_per_step()
    """The ranks aligned by step number: who entered the collectives last in each step, and by how much (``unit``:
    what a row is, ``JobView.unit``)."""
    return Table(f"Per step: the {unit} that enters the collectives last", ["step", unit, "waits less than the median ms"],
                 [[step, r.label, round(d, 3)] for step, r, d in per_step[:50]])
