"""Host reports -> one session report: one finding per problem across hosts, headline means, the session's verdict."""

from __future__ import annotations

import dataclasses
import datetime as _dt

from tb_gpu_advisor import ANALYZER_VERSION, rules
from tb_gpu_advisor.common.options import UserOptions
from tb_gpu_advisor.common.fmt import ms as _ms
from tb_gpu_advisor.common.fmt import pct as _pct
from tb_gpu_advisor.metrics.job import JobView, job_view, med
from tb_gpu_advisor.model.logdir import RankRuns
from tb_gpu_advisor.model.schema import SEVERITY_ORDER, Finding, HostReport, Metric, Report, Saving, Table
from tb_gpu_advisor.common.jsonout import json_float
from tb_gpu_advisor.report.build import session_ranks_words
from tb_gpu_advisor.report.verdict import damage_note, damage_records, no_promise_reason, unrecorded_ranks, verdict
from tb_gpu_advisor.report.view import display
from tb_gpu_advisor.rules._job import ranks_table
from tb_gpu_advisor.rules.headline import grade_card
from tb_gpu_advisor.rules.savings import achievable, counted, mark_overlaps, parts


def _host_steps(hr: HostReport) -> int:
    try:
        return max(1, int((hr.steps or {}).get("count") or 0))
    except (TypeError, ValueError):
        return 1


def _merged_evidence(per_host: list[tuple[str, Finding]]) -> list[Table]:
    """Evidence of one finding on several hosts: tables of the same title and columns concatenated with a leading
    ``host`` column (in host order); a table whose columns differ between hosts stays a table per host."""
    out: list[Table] = []
    by_key: dict[tuple[str, tuple], Table] = {}
    titles_cols: dict[str, set] = {}
    for _, f in per_host:
        for t in f.evidence:
            titles_cols.setdefault(t.title, set()).add(tuple(t.columns))
    for host, f in per_host:
        for t in f.evidence:
            if len(titles_cols[t.title]) == 1:
                key = (t.title, tuple(t.columns))
                m = by_key.get(key)
                if m is None:
                    m = by_key[key] = Table(t.title, ["host", *t.columns], [])
                    out.append(m)
                m.rows.extend([host, *r] for r in t.rows)
            else:
                out.append(Table(f"{t.title} ({host})", list(t.columns), [list(r) for r in t.rows]))
    return out


def _merge_group(per_host: list[tuple[HostReport, Finding]]) -> Finding:
    """One session-level finding for the same finding on several hosts (see :func:`merge_findings`)."""
    # the representative: the worst host (severity, then saving), whose summary, metric and actions are shown
    def worst(hf):
        f = hf[1]
        return (SEVERITY_ORDER.get(f.severity, 9), -(f.saving.ms_per_step if f.saving else 0.0))

    rep_hr, rep = min(per_host, key=worst)
    hosts = [hr.host for hr, _ in per_host]
    others = [h for h in hosts if h != rep_hr.host]
    summary = f"{rep.summary} (Numbers from {rep_hr.host}; the same finding on {', '.join(others)}.)"
    saving = None
    with_saving = [(hr, f) for hr, f in per_host if f.saving is not None]
    if with_saving:
        w = [_host_steps(hr) for hr, _ in per_host]
        tot = float(sum(w))
        ms_ = sum(wi * (f.saving.ms_per_step if f.saving else 0.0) for wi, (_, f) in zip(w, per_host)) / tot
        pc = sum(wi * (f.saving.percent_of_step if f.saving else 0.0) for wi, (_, f) in zip(w, per_host)) / tot
        # each host's saving as its own finding prints it ("9.11 ms", not "9.109 ms" beside it: one value, one form)
        each = ", ".join(f"{hr.host} {_ms(f.saving.ms_per_step)}" if f.saving else f"{hr.host} none" for hr, f in per_host)
        base = rep.saving or with_saving[0][1].saving
        saving = Saving(ms_per_step=round(ms_, 3), percent_of_step=round(pc, 2),
                        recovers=parts(ms_, [(r["group"], r["pool"], r["ms"]) for r in base.recovers]),
                        assumption=f"{rep.saving.assumption if rep.saving else with_saving[0][1].saving.assumption}; "
                                   f"session saving = mean over the {len(per_host)} hosts weighted by their kept steps "
                                   f"({each})")
    metric = rep.metric
    if metric is not None:
        per = {hr.host: (f.metric.value if f.metric else None) for hr, f in per_host}
        metric = dataclasses.replace(metric, detail={**(metric.detail or {}), "per_host": per})
    actions, seen = [], set()
    for _, f in [(rep_hr, rep)] + [hf for hf in per_host if hf[1] is not rep]:
        for a in f.actions:
            if a.text not in seen:
                seen.add(a.text)
                actions.append(a)
    gpus = {f.gpu for _, f in per_host}
    return Finding(
        id=rep.id, rule=rep.rule, severity=rep.severity, title=rep.title, summary=summary, guide_section=rep.guide_section,
        metric=metric, saving=saving, evidence=_merged_evidence([(hr.host, f) for hr, f in per_host]),
        windows=[w for _, f in per_host for w in f.windows], actions=actions, host=None,
        gpu=gpus.pop() if len(gpus) == 1 else None, hosts=hosts,
    )


#: card detail keys the session's own grading sets again (a host's grading says nothing about the session's)
_GRADING_KEYS = frozenset({"graded_by", "not_flagged", "not_graded", "hosts"})


def _merged_detail(details: list[dict]) -> dict:
    """A session card's detail from its hosts' cards: numbers averaged over the hosts that have them, words kept
    where every host says the same (the MFU card's dtype, peak source; an n/a card's reason), the rest left out."""
    keys = dict.fromkeys(k for d in details for k in d if k not in _GRADING_KEYS)
    out = {}
    for k in keys:
        vals = [d[k] for d in details if d.get(k) is not None]
        if vals and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vals):
            out[k] = json_float(sum(vals) / len(vals), 6)
        elif vals and len(vals) == len(details) and all(x == vals[0] for x in vals):
            out[k] = vals[0]
    return out


def merge_findings(host_reports: list[HostReport]) -> list[Finding]:
    """Session findings: one finding per problem, not one per host.

    Findings of the same rule and title (the same kind of problem; rules that name a GPU in the title, like
    ``gpu_imbalance``, stay apart) found on two or more hosts become one session-level finding: the worst
    severity; summary, metric and actions of the worst host (the metric's ``detail.per_host`` has every
    host's value); the saving as the mean over those hosts weighted by their kept steps (the assumption says
    so; a host without a saving counts 0); evidence tables concatenated with a ``host`` column (a table per
    host where the columns differ); the windows of every host; ``host`` None and ``hosts`` the host names.
    A finding on one host only is kept as it is.  ``HostReport.findings`` are not touched.
    """
    groups: dict[tuple[str, str], list[tuple[HostReport, Finding]]] = {}
    order: list[tuple[str, str]] = []
    for hr in host_reports:
        for f in hr.findings:
            key = (f.rule, f.title)
            if key not in groups:
                groups[key] = []
                order.append(key)
            groups[key].append((hr, f))
    out: list[Finding] = []
    used: set[str] = set()
    for key in order:
        g = groups[key]
        hosts = [hr.host for hr, _ in g]
        if len(g) < 2 or len(set(hosts)) != len(hosts):  # one host, or one host twice: nothing to merge
            out.extend(f for _, f in g)
            continue
        m = _merge_group(g)
        # id: "<rule>" plus the host finding's "#..." suffix (secondary finding, "#error"); unique in the session
        suffix = m.id.partition("#")[2]
        cand = [f"{key[0]}#{suffix}" if suffix else key[0]]
        if m.metric is not None:
            cand.append(f"{cand[0]}#{m.metric.id}")
        cand += [f"{cand[0]}#{i}" for i in range(2, len(order) + 2)]
        m.id = next(c for c in cand if c not in used)
        used.add(m.id)
        out.append(m)
    return out


def merge_hosts(run: str, session: str, host_reports: list[HostReport], options: UserOptions | None = None,
                rank_runs: RankRuns | None = None) -> Report:
    """Session report: aggregate headline (mean of hosts' values), findings merged across hosts
    (:func:`merge_findings`), judged across the job with the job rules' findings over every rank
    (``rules.evaluate_session``: the rules' job step; this stage only merges), and ranked.

    ``options``: the user's settings the job rules read (the network between hosts); none given, the command line's
    (``UserOptions.of``).  ``rank_runs``: the job's other ranks in sibling run folders (``Session.linked_ranks``),
    part of the job's context the rules read (``JobView.rank_runs``: the comm rule names those runs) and said in a
    note (:func:`rank_runs_note`).

    ``healthy`` only when every host was analysed (a host with ``error`` makes the session not healthy:
    bad input is never reported as "no problems"), none from a damaged file (``HostReport.damage``: its numbers are
    partial), and no finding is a warning or critical."""
    ok = [h for h in host_reports if h.error is None]
    _session_ranks(host_reports)
    job = job_view(host_reports, UserOptions.of(options), rank_runs)
    findings = rules.rank(rules.evaluate_session(job, merge_findings(host_reports)))  # judged across the job there
    for h in ok:  # a host's pointers to other findings, filled as the session's were: the reader sees both lists
        rules.fill_pointers(h.findings, {f.rule for f in findings} | {f.rule for f in h.findings}, findings)
    mark_overlaps(findings, by_host={h.host: h.breakdown_ms for h in ok})
    headline: list[Metric] = []
    if len(ok) == 1:
        headline = list(ok[0].headline)  # one host: its cards as they are (display and detail included)
    elif ok:
        for card in ok[0].headline:
            same = [c for h in ok for c in h.headline if c.id == card.id]
            vals = [c.value for c in same if c.value is not None]
            v = sum(vals) / len(vals) if vals else None
            # a host without a number for the card has no say in its words (an n/a MFU card of a start-up window
            # dropped the others' precision: "of the None dense peak", h37-probe42w); none with one: all speak
            said = [c for c in same if c.value is not None] or same
            detail: dict = {**_merged_detail([c.detail or {} for c in said]), "hosts": len(vals)}
            headline.append(grade_card(Metric(card.id, card.label, json_float(v), card.unit, _pct(v) if card.unit == "share" else str(v),
                                              card.good_direction, "unknown", card.meaning, card.threshold, detail),
                                       findings, any(h.gpus for h in ok)))
    notes = [f"{h.host}: could not be analysed: {h.error}" for h in host_reports if h.error]
    notes += [damage_note(h) for h in ok if damage_records(h)]
    if rank_runs is not None:
        notes.append(rank_runs_note(rank_runs))
    slowest = _session_achievable(ok, job, findings, no_promise_reason(host_reports))
    if len(job.ranks) > 1 and _of_session_step(findings, slowest.get("step_ms")):
        # the shares restated, the grade follows them: a host's warning saving 3.05% of its own step saved 2.95% of
        # the session's and stayed a warning (h37-xplane3: 2 TF hosts' launch wait, seed 6115)
        rules.follow_savings(findings)
        whole = _hosts_read_whole(ok)
        rules.say_why_kept_on_one_pass([f for f in findings if _found_only_on(f, whole)])
        rules.metrics_follow_severity(findings)
        findings = rules.rank(findings)
    # bad input is never healthy: every host must have been analysed (and there must be one), from a whole file
    # and a rank whose GPU side went unrecorded leaves the session incomplete (``verdict.unrecorded_ranks``)
    healthy = (bool(ok) and len(ok) == len(host_reports) and not any(damage_records(h) for h in ok)
               and not any(f.severity in ("critical", "warning") for f in findings) and not unrecorded_ranks(ok))
    report = Report(run=run, session=session, hosts=host_reports, findings=findings, headline=headline, healthy=healthy,
                  analyzer_version=ANALYZER_VERSION, generated_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), notes=notes,
                  achievable=dict(slowest), ranks=ranks_table(job) if len(job.ranks) > 1 else None,
                  collectives=_collectives_table(job))
    report.verdict = verdict(report)
    report.display = display(report)
    return report


def _hosts_read_whole(ok: list[HostReport]) -> set[str]:
    """The hosts that read their capture whole, as one pass (``rules.read_whole``): the session's regrade may raise
    their findings to critical, which must then say why (``rules.say_why_kept_on_one_pass``)."""
    out = set()
    for h in ok:
        st = h.steps if isinstance(h.steps, dict) else {}
        if rules.read_whole(st.get("confidence"), st.get("source"), bool(st.get("iteration_guess"))):
            out.add(h.host)
    return out


def _found_only_on(f: Finding, hosts: set[str]) -> bool:
    """Whether ``f`` was found on one host or more, each of them among ``hosts``."""
    names = [f.host] if f.host else list(f.hosts)
    return bool(names) and hosts.issuperset(names)


def _session_ranks(host_reports: list[HostReport]) -> None:
    """Each host's job line as the session has it (``report.build.session_ranks_words``): the job's ranks its file
    lacks are the session's other hosts where the session holds them -- one job's files, as the layout grouped them
    -- not "not here"."""
    if len(host_reports) < 2:
        return
    for h in host_reports:
        if h.error is not None or not (h.job or {}).get("ranks_not_here"):
            continue
        others = [(o.host, _ranks_held(o)) for o in host_reports if o is not h]
        said = h.job.get("part_of_job") or ""
        now = session_ranks_words(h.job, others)
        if now != said:
            h.job["summary"] = (h.job.get("summary") or "").replace(said, now)
            h.job["part_of_job"] = now


def _ranks_held(h: HostReport) -> int:
    """How many of the job's ranks a host's file holds: its GPUs' ranks and the ranks it read as idle, one at least
    (a file is one rank's where it names none: a start-up rank's window has no GPU row)."""
    ranks = {g.rank for g in h.gpus if g.rank is not None}
    idle = int((h.job or {}).get("idle_rank_count") or 0)  # ``Job.idle_rank_count``: a count, not its words
    return max(len(ranks) + idle, 1)


def _session_achievable(ok: list[HostReport], job: JobView, findings: list[Finding], withheld: str | None) -> dict:
    """The session's step if every fix lands.  One host: its own.  Several ranks: the job's median rank step, less
    what the session's findings recover -- the merged host findings and the job findings together, each pool capped
    by the median rank's breakdown -- so the line, the header's step and the findings' savings speak of one step
    (issue #27 item 1; one worker's findings alone said "19.6 ms instead of 19.9" beside a 4.6 ms straggler).
    ``withheld``: why the session's window holds no step to promise (``verdict.no_promise_reason`` of every host,
    asked once here), or None."""
    if len(job.ranks) < 2:
        pick = max((h for h in ok if h.achievable), key=lambda h: _promised(h.achievable), default=None)
        own = dict(pick.achievable) if pick is not None else {}
        missing = {f.id for f in counted(findings) if f.saving.ms_per_step > 0} - set(own.get("findings") or [])
        if own and len(ok) == 1 and missing:  # a job finding on one rank: its saving counts too (issue #36)
            return achievable(own["step_ms"], ok[0].breakdown_ms, findings, withheld, own.get("peak_floor_ms"))
        if own and own.get("reason") != withheld:  # the session's window reads otherwise than this host's own
            return achievable(own["step_ms"], pick.breakdown_ms, pick.findings, withheld, own.get("peak_floor_ms"))
        return own
    rows = [g.breakdown or {} for h in ok for g in h.gpus if g.kernel_count and g.step_ms is not None]
    cats = {c for b in rows for c in b}
    median = {c: med([float(b.get(c) or 0.0) for b in rows]) for c in cats}  # the job view's median rank
    out = achievable(job.step_ms, median, findings, withheld, _least_floor(ok))
    if out:
        out["scope"] = f"median of {len(job.ranks)} {job.unit}s"
    return out


def _least_floor(ok: list[HostReport]) -> float | None:
    """The peaks' floor of the median rank's kernels (``achievable.peak_floor_ms``): the least of the hosts' own, so
    no rank's claims are cut by another's heavier work; None where a host knows none (its work's bytes unknown)."""
    floors = [(h.achievable or {}).get("peak_floor_ms") for h in ok if h.achievable]
    return min(floors) if floors and None not in floors else None


def _promised(a: dict) -> float:
    """The step a host's account promises: its achievable step, or its step itself where it promises none (a window
    of start-up only: no fix is promised to shorten it) -- the session steps at its slowest host's pace."""
    left = a.get("achievable_step_ms")
    return float(a.get("step_ms") or 0.0) if left is None else float(left)


def _of_session_step(findings: list[Finding], step_ms: float | None) -> bool:
    """A session finding's share is of the step the report's header states (the median rank's): a merged finding's
    ms is a mean over the hosts it fired on, and the mean of their own shares is of their own, longer steps --
    dlrm_v100 printed "saves ~8.11 ms/step (55% of step)" under "step 16.1 ms (median of 8 ranks)", where 8.11 ms
    is 50% of it.  True where the shares were restated (the caller grades them again)."""
    if not step_ms:
        return False
    for f in findings:
        if f.host is None and f.saving is not None:
            f.saving.percent_of_step = round(100.0 * f.saving.ms_per_step / step_ms, 2)
    return True


def _collectives_table(job: JobView) -> Table | None:
    """Every collective type of the job, per step (median rank): calls, message, time, what the step pays for,
    the transfer and its bus bandwidth."""
    rows = []
    for t in job.types():
        c = job.summary(t)
        rows.append([t, round(c.calls, 2), c.bytes_per_call, round(c.ms, 4), round(c.exposed_ms, 4),
                     round(c.transfer_ms, 4) if c.transfer_ms is not None else None,  # None: a rank unrecorded
                     round(c.bus_bytes_per_s / 1e9, 2) if c.bus_bytes_per_s else None,
                     round(c.exposed_ms / c.ms, 4) if c.ms else None])
    if not rows:
        return None
    return Table(f"Collectives {job.per_step} (median {job.unit}){job.calls_before_note()}", ["collective", "calls", "bytes per call", "ms", "exposed ms",
                                                         "transfer ms", "bus GB/s", "exposed share"], rows)


def rank_runs_note(linked: RankRuns) -> str:
    """The note of a session whose job's other ranks lie in sibling run folders (``Session.rank_runs``: one folder
    per rank): which runs, and how to read the ranks together (h37-wild56r)."""
    ranks = linked.ranks
    own = f"rank {ranks[0]}" if len(ranks) == 1 else "ranks " + ", ".join(str(r) for r in ranks)
    one = linked.world - len(ranks) == 1
    runs = ", ".join(f"'{r}'" for r in linked.runs)
    where = f"in {'run' if len(linked.runs) == 1 else 'runs'} {runs}"
    others = "the job's other rank is" if one else "the job's other ranks are"
    return (f"This run holds {own} of a {linked.world}-rank job (its distributedInfo); {others} {where} -- "
            "one folder per rank, so TensorBoard lists each rank as a run and each is analysed apart. To compare the "
            "ranks (which one the others wait for at each collective, how far their launches drift), write every "
            "rank's trace into one folder (the same tensorboard_trace_handler directory on every rank): its session "
            "then reads them as one job.")
