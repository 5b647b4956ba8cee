"""The verdict: one line saying how the session stands, the same in the tab, the CLI's text and markdown.

It is computed once per report (``Report.verdict``, set when hosts are merged) by :func:`verdict`, which the
renderers call too: every surface says the same words.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.fmt import ms
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.model.damage import CONTRADICTION, CUT, KINDS, UNREADABLE, Damage, from_legacy, lead_kind, of_kind
from tb_gpu_advisor.model.schema import Finding, HostReport, Report
from tb_gpu_advisor.rules.capture_quality import (NO_CAPACITY_METRIC, NO_HISTORY_METRIC, NO_STACKS_METRIC,
                                                  NOT_KEPT_METRIC)
from tb_gpu_advisor.rules.cold_start import holds_start_up, pass_reads_start_up
from tb_gpu_advisor.rules.savings import NO_STEADY_STEP
from tb_gpu_advisor.steps.types import PERIOD_SOURCES, unmarked_pass

_SEVERITIES = ("critical", "warning", "info")


def _counts(findings: Sequence[Finding]) -> str:
    n = {k: 0 for k in _SEVERITIES}
    for f in findings:
        n[f.severity] = n.get(f.severity, 0) + 1
    parts = [f"{n[k]} {k}" for k in ("critical", "warning", "info") if n[k]]
    return ", ".join(parts) if parts else "no findings"


def failed_hosts(report: Report) -> list:
    """Hosts that could not be analysed (``HostReport.error``)."""
    return [h for h in report.hosts if h.error]


def damaged_hosts(report: Report) -> list:
    """Hosts analysed from a damaged file (``HostReport.damage``: cut off mid-write, corrupt, or read whole with
    records that contradict each other): their numbers are partial or the file's own."""
    return [h for h in report.hosts if not h.error and damage_records(h)]


#: What a file read whole whose records contradict each other is (``HostReport.contradictions``): nothing lies past
#: any damage, but its numbers are its own and may not be the GPU's (h37-damage65).  The tab says the same words
#: (:func:`damage_words`, sent in ``display.hosts[].damage``).
READ_WHOLE_CONTRADICTING = "read whole, but its records contradict each other"
CONTRADICTION_CLAIM = "its numbers are the file's own and may not be the GPU's"
#: What a file read to its end with records the reader could not read is (``HostReport.unreadable``): those records
#: are left out of every number, and nothing lies past them (h37-damage66)
READ_TO_END_UNREADABLE = "read to its end, but some of its records could not be read"
UNREADABLE_CLAIM = "every number leaves those records out, and nothing lies past them"
#: What a file cut short is: what was read, and that what it recorded past the damage is missing
CUT_CLAIM = ("whatever the file recorded past the damage (steps, kernels, whole GPUs) is missing, so a check that did "
             "not fire may still apply")
#: What each kind of damage is, in the verdict's words; :data:`VERDICT_WORDS` prefixes them, and a host whose file
#: could not be analysed at all says its kind with them too (``not analysed — the host could not be analysed: the file
#: is damaged (error below)``): one home for the words of each kind (h37-damage67).
KIND_WORDS = {CUT: "the file is damaged", UNREADABLE: "some of the file's records could not be read",
              CONTRADICTION: "the file's records contradict each other"}
#: The verdict's words for one damaged host file, by the kind of its damage (the first kind present: a cut, records
#: left unread, records that contradict each other) -- "partial:" where the numbers leave something of the file out,
#: "damaged:" where they hold all of it and it contradicts itself (h37-damage66: such a file is no partial report)
VERDICT_WORDS = {CUT: f"partial: {KIND_WORDS[CUT]}", UNREADABLE: f"partial: {KIND_WORDS[UNREADABLE]}",
                 CONTRADICTION: f"damaged: {KIND_WORDS[CONTRADICTION]}"}


def damage_records(h: HostReport) -> list[Damage]:
    """The host's damage as typed records (``HostReport.records``: its own, else those of a report of schema 1.6 or
    before, made from its words and the lists that named their kinds)."""
    records = getattr(h, "records", None)
    return records() if callable(records) else from_legacy(getattr(h, "damage", None) or ())


def damage_kinds(h: HostReport) -> tuple[list[str], list[str], list[str]]:
    """(cuts, records left unread, contradictions): the words of the host's damage records by kind, in their order
    (:func:`damage_records`: one typed record each)."""
    records = damage_records(h)
    return tuple([d.detail for d in of_kind(records, k)] for k in KINDS)  # type: ignore[return-value]


def damage_words(h: HostReport) -> dict[str, str]:
    """The tab's damaged-file notice as the note says it (``display.hosts[].damage``): its ``title`` and, per kind
    present, the paragraph under its entries -- ``cut``, ``unreadable``, ``contradiction`` -- the claim in the host's
    vendor's words.  One home for the words: the tab prints these, the CLI and the note compose the same constants."""
    cut, unread, contra = damage_kinds(h)
    kinds = [k for k, xs in (("cut", cut), ("unreadable", unread), ("contradiction", contra)) if xs]
    if not kinds:
        return {}
    lead = {"cut": "only partly read", "unreadable": READ_TO_END_UNREADABLE,
            "contradiction": READ_WHOLE_CONTRADICTING}[kinds[0]]
    also = {"unreadable": "some of its records could not be read", "contradiction": "its records contradict each other"}
    title = "Damaged file: " + lead + "".join(f", and {also[k]}" for k in kinds[1:])
    out = {"title": title}
    if cut:
        out["cut"] = (f"Every number covers only what was read: {CUT_CLAIM}. Capture again, and let the profiler "
                      "finish writing the file.")
    if unread:
        out["unreadable"] = (f"The file was read to its end, but the reader skipped these records: "
                             f"{UNREADABLE_CLAIM}." if not cut else
                             f"What was read also holds records that could not be read: {UNREADABLE_CLAIM}.")
    if contra:
        out["contradiction"] = (f"What was read also contradicts itself, so {host_words(h)(CONTRADICTION_CLAIM)}."
                                if cut or unread else
                                f"The file was read to its end, none of it left out, but its records contradict each "
                                f"other, so {host_words(h)(CONTRADICTION_CLAIM)}.")
    return out


def damage_note(h: HostReport) -> str:
    """What was lost of a damaged host's file, in words: the report's note, the CLI's stderr line, the text's and
    markdown's paragraph.  A file cut short says what was read and that what it recorded past the damage is missing;
    a file read to its end whose reader skipped records (``HostReport.unreadable``) says those are left out and
    nothing lies past them; a file read whole whose records contradict each other (``HostReport.contradictions``)
    says that -- neither was cut, so "past the damage" would send the reader looking for a longer copy that does not
    exist (h37-damage65, h37-damage66); a file with several kinds says each, the cut first."""
    cut, unread, contra = damage_kinds(h)
    parts = []
    if cut:
        events = (h.capture or {}).get("num_events")
        read = f" ({events:,} events)" if isinstance(events, int) and not isinstance(events, bool) else ""
        lost = "; ".join(cut)
        end = " " if lost.endswith(("?", ".", "!")) else ". "
        parts.append(f"{h.host}: the file is damaged and was only partly read: {lost}{end}Every number covers only "
                     f"what was read{read}: {CUT_CLAIM}")
    if unread:
        what = "; ".join(unread).rstrip(".")
        parts.append(f"What was read also holds records that could not be read: {what}; {UNREADABLE_CLAIM}" if parts
                     else f"{h.host}: the file is damaged: {READ_TO_END_UNREADABLE}: {what}; {UNREADABLE_CLAIM}")
    if contra:
        parts.append(f"What was read also contradicts itself: {_contradicting(h, contra)}" if parts
                     else f"{h.host}: the file is damaged: {READ_WHOLE_CONTRADICTING}: {_contradicting(h, contra)}")
    return ". ".join(parts)


def _contradicting(h: HostReport, contra: Sequence[str]) -> str:
    """The contradictions in words, then what they mean for the numbers (the device in its vendor's words: an Ascend
    NPU's snapshot "may not be the NPU's", :func:`host_words`)."""
    what = "; ".join(contra)
    return f"{what.rstrip('.')}; {host_words(h)(CONTRADICTION_CLAIM)}"


def damage_kind(h: HostReport) -> str:
    """The kind of a damaged host's damage the verdict leads with: ``cut`` where any of it is a cut, else
    ``unreadable`` where records were left unread, else ``contradiction``."""
    return lead_kind(damage_records(h)) or CONTRADICTION


def _damaged(report: Report, damaged: Sequence[HostReport], said_below: bool = False) -> str:
    """``partial: the file is damaged (<first problem>)`` -- or, by the damage's kind (:data:`VERDICT_WORDS`),
    ``partial: some of the file's records could not be read (<first>)`` or ``damaged: the file's records contradict
    each other (<first>)`` --, or how many host files are; ``said_below``: the screen states the damage in its own
    paragraph, so the verdict points to it instead of quoting it twice."""
    if len(report.hosts) == 1:
        h = damaged[0]
        kind = damage_kind(h)
        first = of_kind(damage_records(h), kind)[0].detail
        return f"{VERDICT_WORDS[kind]} ({'see DAMAGED FILE below' if said_below else first})"
    names = ", ".join(h.host for h in damaged[:3]) + (" ..." if len(damaged) > 3 else "")
    if all(damage_kind(h) == "contradiction" for h in damaged):
        return f"damaged: {len(damaged)} of {len(report.hosts)} host files' records contradict each other ({names})"
    return f"partial: {len(damaged)} of {len(report.hosts)} host files are damaged ({names})"


def memory_only(h: HostReport | None) -> str | None:
    """What records a host's memory where it records memory and no GPU work (a memory snapshot: allocator events,
    whose "steps" are the allocation pattern's and no GPU work); None otherwise.  The diff compares such a side by
    memory alone; the verdict never calls it healthy, since the guide's time checks had nothing to time."""
    if h is None or h.error is not None:
        return None
    mem = [g.memory for g in h.gpus if g.memory]
    if not mem or any(g.kernel_count for g in h.gpus):
        return None
    return next((m.get("source") for m in mem if m.get("source")), "") or "the allocator's events"


def unrecorded_ranks(hosts: Sequence[HostReport]) -> list[str]:
    """The session's ranks whose GPU side the capture did not record, beside ranks that ran GPU work
    (``Job.unrecorded_rank_labels``, by their calls' evidence: no runtime call, or launches none of whose kernels was
    recorded), as the report names them; never a rank that only started up or tore down.  A whole host without GPU
    work is not among them: its own report says so (``capture_quality``, a finding the verdict counts)."""
    return [str(x) for h in hosts if h.error is None for x in (getattr(h, "job", None) or {}).get(
        "unrecorded_rank_labels") or ()]


def unrecorded_words(labels: Sequence[str]) -> str:
    """"rank 2 (node0_4102)'s GPU work was not recorded" -- what the verdict says the report cannot judge."""
    if len(labels) == 1:
        return f"{labels[0]}'s GPU work was not recorded"
    named = ", ".join(labels[:3]) + (" ..." if len(labels) > 3 else "")
    return f"{len(labels)} ranks' GPU work was not recorded ({named})"


def verdict(report: Report, damage_said_below: bool = False) -> str:
    """Healthy, or how many findings of each severity with the top one's title and saving.  Never "healthy" when a
    host could not be analysed, or was read from a damaged file (the verdict then starts with ``partial:``): bad
    input is no result.  ``damage_said_below``: the text report, whose DAMAGED FILE paragraph states the damage in
    full, has the verdict point to it instead of repeating it (issue #36: "the damage text once per screen")."""
    real = [f for f in report.findings if f.severity != "ok"]
    failed = failed_hosts(report)
    n = len(report.hosts)
    if not report.hosts:
        return "not analysed — the session has no host file"
    if failed and len(failed) == n:
        kind = lead_kind(damage_records(failed[0])) if n == 1 else None  # a file too damaged to read says its kind
        said = f": {KIND_WORDS[kind]}" if kind else ""
        return f"not analysed — {'the host' if n == 1 else f'all {n} hosts'} could not be analysed{said} (error below)"
    bad = f"{len(failed)} of {n} host{'s' if n != 1 else ''} could not be analysed" if failed else ""
    # a damaged file: every number is partial, or the file's own, and that comes first (never "healthy")
    damaged = damaged_hosts(report)
    partial = f"{_damaged(report, damaged, damage_said_below)} — " if damaged else ""
    actionable = [f for f in real if f.severity in ("critical", "warning")]
    # a rank whose GPU side went unrecorded: what it did is unknown, so the session is incomplete (never "healthy")
    lost = unrecorded_ranks(report.hosts)
    if actionable:
        top = _top(real, one_step(report, real[0]), where(report, real[0]))
        return (partial + f"{_counts(real)} — top: {top}" + (f"; {bad}" if bad else "")
                + (f"; {unrecorded_words(lost)}" if lost else ""))
    if failed:
        analysed = n - len(failed)
        return partial + f"no check fired on the {analysed} analysed host{'s' if analysed != 1 else ''}, but {bad}"
    if damaged:
        return partial + "no check fired on what was read"
    # healthy means no warning or critical, whatever the notes (issue #27 item 8)
    notes = [f for f in real if f.severity == "info"]
    if any(f.metric is not None and f.metric.id == NO_HISTORY_METRIC for f in notes):
        # a snapshot's state at the dump alone: the checks that need its history could not run -- never "healthy"
        return ("No check fired on the snapshot's state at the dump; it holds no allocation history, so its peak "
                f"was not judged ({len(notes)} note{'s' if len(notes) != 1 else ''})")
    said = f" ({len(notes)} note{'s' if len(notes) != 1 else ''})" if notes else ""
    if lost:  # the recorded ranks are judged, the unrecorded one is not (h37-norank61 *Left* 4)
        return f"No problem found in the recorded ranks; {unrecorded_words(lost)}" + said
    if any(f.metric is not None and f.metric.id == NO_STACKS_METRIC for f in notes):
        # a snapshot recorded without stacks: the checks that need to know what allocated its peak could not run
        return ("No check fired on the snapshot's totals; its allocations carry no stack, so what held its peak was "
                "not judged" + said)
    if any(f.metric is not None and f.metric.id == NOT_KEPT_METRIC for f in notes):
        # a file that did not keep what some checks read (a printing, GPU work naming no launch): those checks had
        # nothing to read -- what they would judge is unknown, not healthy (session h37-meta57)
        return "No check fired on what the file holds; it did not keep records some checks read, so those were not " \
               "judged" + said
    if all(memory_only(h) is not None for h in report.hosts) and \
            any(f.metric is not None and f.metric.id == NO_CAPACITY_METRIC for f in notes):
        # a snapshot of unknown capacity: its peak was measured against nothing -- said, not "fine" (session 71 snap71)
        return report_words(report)("No memory check fired; the capture records memory and no GPU work, so no time "
                                    "check could run, and no GPU capacity, so how near it the peak came was not "
                                    "judged") + said
    if all(memory_only(h) is not None for h in report.hosts):
        # memory and no GPU work: the memory checks ran, the time checks had nothing to time -- no verdict on the job's
        # speed (h37-review14: every snapshot read "Healthy" under a header saying "no step timed")
        return report_words(report)("No memory check fired; the capture records memory and no GPU work, so no time "
                                    "check could run") + said
    return "Healthy: no check of the guide fired" + said


def one_step(report: Report, f: Finding | None = None) -> str:
    """What ``f``'s numbers are of, where they are of one step: "step" where its host kept one (a finding over every
    host, or ``f`` None: each kept one), "pass" where one is the pass an unmarked capture was read as
    (:func:`one_pass`; as the job rules' ``metrics.job.JobView.marked``); "" over several steps.  The rules say "of the 8.72 ms step" / "of the 432.6 ms pass" then
    (``rules.base.Ctx.of_step``); the renderers' saving, the header and "if every fix lands" say the same, not
    "/step" (h37-left60) nor "of the step" for a pass no step of which the capture marks (h37-words21)."""
    hosts = [h for h in report.hosts if h.error is None and (f is None or f.host is None or h.host == f.host)]
    if not hosts or not all(isinstance(h.steps, dict) and h.steps.get("count") == 1 for h in hosts):
        return ""
    return "pass" if any(one_pass(h) for h in hosts) else "step"


def start_up_only(report: Report) -> bool:
    """The kept window is start-up only: every host kept at most one step, its phase reads warm-up (or its pass holds
    at least ``job.warmup_share`` of one-time costs itself: ``rules.cold_start.pass_is_start_up``), and the GPU idles
    in one-time costs at least ``job.one_time_min_share`` of a host's step, as the cold-start check grades a step
    holding them (``rules.cold_start.steps_hold_start_up``).  The one account the title ("start-up only: one pass,
    no steady step") and "if every fix lands" ask: such a window holds no steady step, so no step time is promised
    (issue #37: "step ~1.55 ms instead of 33.7 ms" on SGLang's graph capture at start-up).  A pass the program's
    ranges bound after its start-up is a step, timed as one: its ledger holds no one-time cost."""
    return start_up_window(report.hosts)


def start_up_window(hosts: Sequence[HostReport]) -> bool:
    """:func:`start_up_only` of these hosts: the report's assembly asks it once, before the report exists, to decide
    whether the account promises a step (:func:`no_promise_reason`); the title asks it of the finished report."""
    jobs = [getattr(h, "job", None) or {} for h in hosts]
    steps = [h.steps.get("count") for h in hosts if isinstance(h.steps, dict) and h.steps.get("count") is not None]
    return bool(jobs) and sum(steps or [0]) <= 1 and any(holds_start_up(*_start_up_of(h)) for h in hosts) and \
        all(pass_reads_start_up(j.get("phase"), *_start_up_of(h)) for h, j in zip(hosts, jobs))


def no_promise_reason(hosts: Sequence[HostReport]) -> str | None:
    """Why these hosts' "if every fix lands" account holds no achievable step (``achievable.reason``), or None where
    it holds one: a start-up-only window measured no steady step, so no step time is promised.  Decided here once,
    by the report's assembly (``report.build`` per host, ``report.merge`` per session); every reader follows the
    account's value."""
    return NO_STEADY_STEP if start_up_window(hosts) else None


def _start_up_of(h: HostReport) -> tuple[float, float]:
    """(ms of one-time costs, ms of the whole) of a host's step ledger (``breakdown_ms``): what
    ``rules.cold_start.holds_start_up`` reads of a finished report, where the check reads a host's metrics."""
    b = h.breakdown_ms or {}
    return b.get("startup") or 0.0, sum(v for v in b.values() if v)


#: A window without GPU record in a damaged file, in the words of its title, job line and tab: no GPU record in what
#: was read, never that the window held no GPU work (:data:`NO_STEP_WHY`).
DAMAGED_NO_GPU = "no GPU record in the part of the damaged file read"
#: Why a host's window times no GPU step, in the words the session's title, the job block (``job.no_gpu_step``) and the
#: tab's host line give it -- by the JSON key that says it (each of ``job.kind.NO_GPU_STEP``'s, ``damaged``: the kind
#: ``no_gpu`` in a file whose read stopped early, and ``no_gpu``: the kind), in the order they are read.  A damaged
#: file's no GPU record is said of the part read, before "no GPU work": its GPU's records may lie past the damage,
#: which its damage finding says beside (h37-damage69: wild/two_writers_v100_gloo, 540 kernels past the damage).
NO_STEP_WHY = {"gpu_unrecorded": "the capture did not record the GPU's work",
               "copies_only": "the window holds copies and no kernel",
               "damaged": DAMAGED_NO_GPU,
               "no_gpu": "the window holds no GPU work",
               "marks_no_job_step": "the window holds none of the job's steps"}


def no_gpu_step_reason(job: dict) -> str:
    """Why a host's ``job`` block (its report's JSON) says its window times no GPU step, in :data:`NO_STEP_WHY`'s
    words; "" where it times one.  A GPU side unrecorded first (its kind may read ``no_gpu``: no GPU work was seen,
    not none run), then no GPU work (``kind`` ``no_gpu``), then marks the job's reading says time none (the loop's
    end).  The one reader of the finished report's answer: the title, the job's line, the steps note and the laws read
    it here, and the report gives it as ``job.no_gpu_step`` for the tab (``serve/static/views.js`` ``noStepTimed``),
    which had a JavaScript twin of this test to keep in step (h37-tidy30)."""
    return next((NO_STEP_WHY[key] for key in NO_STEP_WHY if _says(job, key)), "")


def _says(job: dict, key: str) -> bool:
    """Whether ``job`` says ``key`` of :data:`NO_STEP_WHY`: the kind ``no_gpu`` (``damaged``: in a file whose read
    stopped early), or a key of ``NO_GPU_STEP`` set."""
    if key in ("no_gpu", "damaged"):
        return job.get("kind") == "no_gpu" and (key == "no_gpu" or bool(job.get("damaged")))
    return bool(job.get(key))


def no_gpu_step(job: dict) -> bool:
    """Whether a host's ``job`` block says its window times no GPU step (:func:`no_gpu_step_reason`)."""
    return bool(no_gpu_step_reason(job))


def host_loop_words(job: dict) -> str:
    """A host's loop on the CPU (``job.host_loop``: a window without GPU work that marks its loop) in words --
    "4 marked steps of 88.0 ms on average", "1 marked step of 210.1 ms", and where its turns are uneven (``median_ms``)
    "5 marked steps of 2.00 s on average (median 2.00 s, 1.00 s to 4.00 s)" --, "" where it has none: the one printing of it, which the job's line and
    the tab's host line (``display.hosts[].host_loop``) say."""
    loop = job.get("host_loop") or {}
    if not loop.get("steps") or loop.get("step_ms") is None:
        return ""
    n = loop["steps"]
    spread = ""
    if loop.get("median_ms") is not None and loop.get("max_ms") is not None:  # uneven turns: the mean is none of them
        spread = f" (median {ms(loop['median_ms'])}, {ms(loop['min_ms'])} to {ms(loop['max_ms'])})"
    # a loop read from its work's period (a copy loop's repeating launches) was marked by nothing: its repeats
    # (h37-probe43e: a JAX ``device_put`` / ``np.asarray`` loop read "5 marked steps" with no mark in the capture)
    what = "repeat" if job.get("step_source") in PERIOD_SOURCES else "marked step"
    return f"{n} {what}{'s' if n != 1 else ''} of {ms(loop['step_ms'])}{' on average' if n > 1 else ''}{spread}"


def one_pass(h: HostReport) -> bool:
    """The host kept one step and it is the pass an unmarked capture was read as (``steps.types.UNMARKED_SOURCES``:
    the whole window, or one pass of the program): the capture numbers no step, so no surface calls it one."""
    return isinstance(h.steps, dict) and unmarked_pass(h.steps.get("count"), h.steps.get("source"))


def saving_share(s) -> str:  # noqa: ANN001 - a schema Saving
    """A saving's share of the step as every surface prints it (the verdict's top, the finding's line, the markdown
    table): whole per cent, or "<0.5%" under the report's floor -- one quantity, one printing (h37-randjobs4: a top
    saving "0%" in the verdict beside "<0.5% of step" under the finding)."""
    floor = 100.0 * T("report.min_saving_share")
    return f"<{floor:g}%" if s.percent_of_step < floor else f"{s.percent_of_step:.0f}%"


def where(report: Report, f: Finding) -> str:
    """Where ``f`` was found, where that is only part of the session: "on worker7" (one host of several), "on 5 of 8
    hosts" (merged over some), "on GPU1 (rank 1)" (one GPU of a host driving several); "" where it holds for all.
    Why: a verdict naming a straggler or a rank's host-bound steps as the session's top problem, without the rank,
    reads as every rank's (h37-left43: the verdict line did not name the rank of the worst finding)."""
    analysed = [h for h in report.hosts if h.error is None]
    if len(analysed) > 1:
        if f.host is not None:
            return f"on {f.host}" + (f" GPU{f.gpu}" if f.gpu is not None else "")
        hosts = set(f.hosts or ())
        return f"on {len(hosts)} of {len(analysed)} hosts" if hosts and len(hosts) < len(analysed) else ""
    if f.gpu is None or not analysed or len(analysed[0].gpus) < 2:
        return ""
    rank = next((g.rank for g in analysed[0].gpus if g.gpu == f.gpu and g.rank is not None), None)
    return f"on GPU{f.gpu}" + (f" (rank {rank})" if rank is not None else "")


def _top(real: Sequence[Finding], one: str = "", at: str = "") -> str:
    """The first finding of the list, in the list's one order (``rules.rank``: what the capture is, then by saving):
    its title and what it saves.  A note saving more than every warning is listed above them (issue #36), so the top
    is that note, named as one -- not the first warning, which the list shows second (h37-review2:
    ``compiled_a100_triton``'s verdict named finding #2 under an info #1).  ``one``: :func:`one_step`'s word; ``at``:
    :func:`where` it was found, before what it saves: "(on 5 of 8 hosts; saves ~7.68 ms, 48% of the step)"."""
    f = real[0]
    s = f.saving
    note = "a note, " if f.severity == "info" else ""
    per = (f", {saving_share(s)} of the {one}" if one else f"/step, {saving_share(s)}") if s else ""
    said = [at] if at else []
    said += [f"saves ~{ms(s.ms_per_step)}{per}"] if s and s.ms_per_step else []
    return note + f.title + (f" ({'; '.join(said)})" if said else "")


def host_words(h) -> Callable[[str], str]:  # noqa: ANN001 - a host's report
    """The words of the vendor whose device the host's capture ran on (``capture.vendor``, as its findings speak):
    a table's title, columns and device labels say "NPU" for an Ascend NPU's snapshot, "device" where the snapshot
    names no build; NVIDIA's words are the text's own, so its reports (and a capture with no vendor) read as written.
    Why: beside findings of "NPU 0" the tables said "GPU0", "GPU:0" and "active (any GPU work)" (h37-wild57m; session
    56's h37-wild56m *Left* 3)."""
    return _vendor_words(_vendor_of(h))


def report_words(report: Report) -> Callable[[str], str]:
    """:func:`host_words` of the one vendor every host of ``report`` ran on; NVIDIA's words where they differ."""
    vendors = {_vendor_of(h) for h in report.hosts}
    return _vendor_words(vendors.pop() if len(vendors) == 1 else None)


def _vendor_of(h) -> str | None:  # noqa: ANN001 - a host's report
    """The vendor a host's capture ran on (``capture.vendor``), None where it names none."""
    return (getattr(h, "capture", None) or {}).get("vendor")


def _vendor_words(vendor: str | None) -> Callable[[str], str]:
    """A vendor's words; the text as written (NVIDIA's words are its own) where no one vendor is known."""
    return devices.vendor_called(vendor).words if vendor else as_written


def as_written(text: str) -> str:
    return text


def title_words(words: Callable[[str], str], text: str) -> str:
    """``text`` in ``words``, its first letter a capital ("devices on ..." begins a title as "Devices on ...")."""
    out = words(text)
    return out[:1].upper() + out[1:]
