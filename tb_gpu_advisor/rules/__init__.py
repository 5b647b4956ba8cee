"""Rules: metrics -> findings, one module per check of the GPU performance guide.

``evaluate(metrics)`` runs every registered rule on one host's
:class:`~tb_gpu_advisor.metrics.types.HostMetrics`; ``rank(findings)``
orders findings of one or many hosts for the report.

Where things are:
* ``thresholds.py`` -- every number a rule compares against, with its source;
* ``base.py`` -- the Rule type, registry, guide order, finding builders;
* ``<rule id>.py`` -- one check each (``input_bound.py``, ``launch_bound.py``, ...).
"""

from __future__ import annotations

import importlib
import logging
import traceback
from typing import Iterable

from tb_gpu_advisor.common.fmt import pct_part
from tb_gpu_advisor.common.thresholds import THRESHOLDS, T, override
from tb_gpu_advisor.metrics.job import JobView
from tb_gpu_advisor.metrics.types import MANAGED_READ, HostMetrics
from tb_gpu_advisor.model.schema import SEVERITY_ORDER, Action, Finding, Metric
from tb_gpu_advisor.rules.base import (
    DEVICE_SHARE_LABEL,
    Ctx,
    action,
    finding,
    fixes_left,
    gpu_steps_to_judge,
    grade,
    in_async_stalls,
    in_os_waits,
    in_ranges,
    ms,
    n_of,
    os_waits_table,
    pct,
    profiler_words,
    ran_witness,
    ranges_part,
    ranges_table,
    saving,
    step_windows,
    traced_python,
    fill_pointers,
    wait_covered,
)
from tb_gpu_advisor.rules.capture_quality import unmeasured_across_clocks
from tb_gpu_advisor.rules import comm_exposed, launch_bound, step_gaps
from tb_gpu_advisor.rules.cold_start import first_call_why
from tb_gpu_advisor.rules.registry import REGISTRY, Rule, card_rule
from tb_gpu_advisor.rules.savings import IDLE_POOLS, mark_overlaps
from tb_gpu_advisor.rules.step_gaps import (READ_MANAGED_ASSUMPTION, managed_read_actions, reads_metric, RECORD_HOST, WAIT_SOURCE,
                                           WAIT_SOURCE_ASSUMPTION, WRITE_OUTPUT, after_record_fix, gap_inside_steps, launcher_detail, launcher_words)
from tb_gpu_advisor.steps.types import SOURCE_LABEL, UNMARKED_SOURCES

__all__ = ["evaluate", "evaluate_job", "evaluate_session", "rank", "healthy_finding", "unexplained_idle_finding", "host_bound_finding", "quiet_reason", "card_rule", "MODULES", "fill_pointers",
           "REGISTRY", "RULE_IDS", "GUIDE_ORDER", "THRESHOLDS", "T", "override", "Rule"]

logger = logging.getLogger(__name__)

#: Every rule, one module each named after its id, in the guide's debugging order (overview): input pipeline,
#: one-GPU checks, mixed precision / XLA, then several GPUs, then the capture itself.  The only list of rules:
#: ranking ties, ``docs/rules.md``, card owners and the corpus's truth tables derive from it and from the registry.
#: On equal savings the cause ranks above its symptom (misaligned dims / fp32 explain why Tensor Cores are unused).
RULE_IDS: tuple[str, ...] = (
    "cold_start",  # Q&A: one-time costs first -- they distort every number after them
    "graph_recaptured",  # Q&A: a graph captured again in the steady run is no one-time cost (h37-recapture71)
    "forward_with_autograd",  # Q&A: forwards that keep tensors for a backward that never runs (h37-recapture71)
    "input_bound",  # §1.1
    "step_gaps",  # §1.2.1
    "host_sync",  # §1.2.1
    "launch_bound",  # §1.2.2
    "eager_execution",  # §1.2.2
    "host_op_placement",  # §1.2.2
    "excessive_memcpy",  # §1.2.2 / §2 item 4
    "misaligned_dims",  # §1.2.3
    "mixed_precision_off",  # §1.3
    "dtype_casts",  # §1.3, the casts mixed precision pays for (issue #26)
    "tensor_core_unused",  # §1.2.3
    "mfu_low",  # §1.2.3, GEMMs far below their roofline (issue #20)
    "small_grid",  # §1.2.3, kernels launched with fewer blocks than the GPU has SMs (issue #37)
    "unfused_attention",  # §1.2.3 fusing ops, attention computed op by op (issue #37 item 6)
    "loss_scaling_gaps",  # §1.3
    "xla_not_used",  # §1.3
    "oom_snapshot",  # §2 item 1, memory: an out-of-memory error a snapshot recorded (issue #29)
    "activation_memory",  # §2 item 1, memory: activations are the peak -> checkpointing
    "memory_fragmentation",  # §2 item 1, memory: reserved far above allocated
    "memory_near_capacity",  # §2 item 1, memory: the peak at capacity
    "memory_leak",  # §2 item 1, memory: every iteration keeps bytes nothing frees
    "memory_imbalance",  # §2 item 5, memory: one process's GPUs hold unequal bytes (a snapshot's)
    "batch_size_headroom",  # §2 item 1
    "allocator_churn",  # §2 item 1, memory: the driver's allocator in every step
    "comm_exposed",  # §2 communication overlap (job scope)
    "allreduce_extra",  # §2 item 3
    "gpu_imbalance",  # §2 item 5
    "late_rank",  # §2 item 5, one host: a GPU late at the collectives by its own host's work
    "node_straggler",  # §2 item 5, across nodes (job scope)
    "rank_straggler",  # §2 item 5, across the job's ranks (job scope)
    "alltoall_imbalance",  # §2 item 5, skewed all-to-all splits (job scope)
    "sequential_gpus",  # §2 item 6
    "allreduce_slow",  # §2.1
    "comm_bandwidth_low",  # §2.1, every collective with its message size (job scope)
    "launch_skew",  # §2.2
    "capture_quality",  # Q&A (no saving: listed after the guide's checks)
)
#: The rule modules; importing one registers its rule.
MODULES = tuple(importlib.import_module(f"{__name__}.{rid}") for rid in RULE_IDS)
#: Ranking order of every finding id: the rules, then the two verdicts the engine adds when no rule fired
#: (``unexplained_idle``: the device share is low all the same; ``healthy``).
GUIDE_ORDER: tuple[str, ...] = RULE_IDS + ("unexplained_idle", "healthy")
if set(RULE_IDS) != set(REGISTRY):
    raise ImportError(f"rule modules and registered rules differ: {sorted(set(RULE_IDS) ^ set(REGISTRY))}")
#: Rules that still run on a capture without GPU activity (CPU-only, or the GPU planes are empty).
#: The memory checks read the allocator's events only: a memory snapshot (no kernels) has nothing else.  The host-sync
#: check reads the host's own wait in scalar reads where the GPU's records were lost (``HostSyncs.lost_read_*``); its
#: other parts need the GPU's idle, which such a capture does not hold, and stay quiet.
NO_GPU_RULES = frozenset({"capture_quality", "oom_snapshot", "activation_memory", "memory_fragmentation",
                          "memory_near_capacity", "memory_leak", "memory_imbalance", "batch_size_headroom",
                          "host_sync"})


#: The rule ids of the verdicts the rules add where no check found a problem (:func:`healthy_finding`,
#: :func:`unexplained_idle_finding`): a host's verdict, which a problem found later -- or across the job -- replaces.
VERDICT_RULES = ("healthy", "unexplained_idle")


def evaluate(metrics: HostMetrics, rules: Iterable[str] | None = None) -> list[Finding]:
    """Run every rule (or the named ones) on one host's metrics; never raises.

    A rule that raises yields an ``info`` finding saying the check could not
    run (with the error), so one broken check never hides the others.  When
    no rule reports a warning or critical finding, a ``healthy`` ok finding
    with the headline numbers is added.  Findings come back ranked.
    """
    ctx = Ctx(metrics)
    has_gpu = gpu_steps_to_judge(metrics)
    ids = tuple(rules or RULE_IDS)
    found: dict[str, list[Finding]] = {}
    for rid in in_reading_order(ids):
        r = REGISTRY[rid]
        if r.scope != "host":
            continue  # job-scope rules run once per session: evaluate_job
        if not has_gpu and rid not in NO_GPU_RULES:
            continue  # the guide's checks are about GPU time; capture_quality says why they are skipped
        if not ctx.fw.applies(rid, metrics.input.own_pipeline):
            continue  # the framework has no such concept (JAX has no eager op events)
        found[rid] = _run_check(r, metrics, ctx, {d: found.get(d, []) for d in r.reads})
    out: list[Finding] = [f for rid in ids for f in found.get(rid, [])]  # the guide's order, whatever ran first
    # the idle inside the step the host spent waiting first: a thread off its CPU runs no code, whatever range or op
    # spans it, so that time is no host work
    # the idle inside the step the host spent in a communication library's calls: the step's communication
    comm = comm_exposed.host_calls_finding(metrics) if has_gpu else None
    if comm is not None:
        out.append(comm)
    waits = host_waits_finding(metrics, out) if has_gpu else None
    if waits is not None:
        out.append(waits)  # by its own saving, whatever else fired, wherever the step boundaries fall
    turn = turn_told_whole(metrics, out) if has_gpu else None  # a step too small for its host cost: all of it, once
    host_bound = host_bound_finding(metrics, out) if has_gpu else None
    out, host_bound = calls_told_whole(metrics, out, host_bound)  # compiled calls too small: their gaps its own
    out, held = step_told_whole(metrics, out, host_bound)  # and their launches' wait: one step-level account
    turn = host_bound if held is not None and held is turn else turn
    if host_bound is not None:
        out.append(host_bound)  # by its own saving, whatever else fired (a 4% warning hid 75% of host work)
    unrecorded = unrecorded_idle_finding(metrics, out) if has_gpu else None
    if unrecorded is not None:
        out = unrecorded_part_said_in_its_whole(out, unrecorded)
        out.append(unrecorded)  # whatever else fired: too few steps must not hide most of the window
    elif turn is not None:
        out = unrecorded_part_said_in_its_whole(out, turn, _TURN_AFTER_SYNCS)
    if has_gpu:  # clocks a step apart: no GPU idle measured against the host's work stands (capture_quality says so)
        unmeasured_across_clocks(metrics, out)
    if has_gpu and not any(f.severity in ("critical", "warning") for f in out):
        out.append(unexplained_idle_finding(metrics) or healthy_finding(metrics))
    # a first call's note before the steps' ceiling: the words that keep a critical critical on an unmarked pass, or
    # cap it at a warning on guessed steps, are said only of what stays critical or warning ("Critical though ..." and
    # then "A note, not a problem" in one summary, survey h37-survey39's mmagic forward)
    _one_early_call(metrics, out)
    _step_confidence(metrics, out)
    follow_savings(out)
    _step_confidence(metrics, out)  # a ceiling: a raise to match a smaller saving never lifts a guessed step's finding
    _recorded_minority(metrics, out)
    if has_gpu and not any(f.severity in ("critical", "warning") for f in out) and \
            not any(f.rule in VERDICT_RULES for f in out):
        late = unexplained_idle_finding(metrics) or healthy_finding(metrics)
        _step_confidence(metrics, [late])  # it rests on the same steps: never critical on guessed ones
        out.append(late)
    metrics_follow_severity(out)
    words_follow_severity(out)
    mark_overlaps(out, metrics.breakdown.as_dict())
    windows_in_capture(metrics, out)
    return capture_fixes_said_once(rank(out), {a.text for a in _steady_fix(metrics)})


def in_reading_order(ids: Iterable[str]) -> list[str]:
    """``ids`` with each rule after the rules whose findings it reads (``Rule.reads``), else in the order given.  Why
    apart from the guide's order: that order ranks the findings, and a check that reads another's finding may come
    before it there (the gaps between steps, §1.2.1, read the launch check's step-level verdict, §1.2.2)."""
    ids = list(ids)
    done: set[str] = set()
    order: list[str] = []

    def visit(rid: str) -> None:
        if rid in done:
            return
        done.add(rid)
        for d in REGISTRY[rid].reads:
            if d in ids:
                visit(d)
        order.append(rid)

    for rid in ids:
        visit(rid)
    return order


def _run_check(r: Rule, metrics: HostMetrics, ctx: Ctx, earlier: dict[str, list[Finding]]) -> list[Finding]:
    """Rule ``r``'s findings on one host (``earlier``: the findings of the rules it reads, ``Rule.reads``); a check
    that raises yields an ``info`` finding saying it could not run, so one broken check never hides the others."""
    try:
        return list((r.check(metrics, earlier) if r.reads else r.check(metrics)) or [])
    except Exception as e:  # noqa: BLE001 -- a check must never crash the report
        logger.warning("rule %s failed on %s: %s", r.id, ctx.host, e, exc_info=True)
        f = finding(
            ctx, r.id, "info",
            f"This check could not run on this capture ({type(e).__name__}: {e}); the other checks are "
            f"unaffected.",
            title=f"Check '{r.title}' could not run",
        )
        f.id = f"{f.id}#error"
        f.evidence = []
        logger.debug("%s", traceback.format_exc())
        return [f]


def windows_in_capture(metrics: HostMetrics, out: list[Finding]) -> None:
    """Every finding's trace windows ended at the capture's end (``window_start_ms + length_ms``); a window that
    starts after it is dropped (an instant at the end, an OOM's, stays).  ``out``: changed in place.

    Why: a window is a spot plus the context around it, and the context was taken as if the trace ran on -- wrong
    assumption *the time around a spot lies in the capture*.  A memory peak in the capture's last half millisecond
    opened "a millisecond around the peak" past its end (wild/snapshot_nograd_bf16: a peak at 15.6 ms, its window to
    16.088 ms of a 15.781 ms capture), and the gap after the last kept step was shown with a gap's length of the next step after
    it, which the capture never recorded (wild/mordred_rtx6000_hashjoin: "gap after step 7 (40.0 ms)" to 6742.8 ms
    of a 6703.0 ms capture).  One bound for every rule, the viewer's: nothing lies past the capture's end."""
    length = metrics.capture.length_ms or 0.0
    if length <= 0:
        return
    end = round(metrics.capture.window_start_ms + length, 3)
    for f in out:
        f.windows = [w for w in f.windows if w.start_ms <= end]
        for w in f.windows:
            w.end_ms = min(w.end_ms, end)


def capture_fixes_said_once(ranked: list[Finding], steady: set[str] = frozenset()) -> list[Finding]:
    """A fix of the capture is said once, under the first listed finding about the capture that needs it; a later
    one points to it by title.  How to record the steady state is one fix, whatever the finding that asks for it:
    an Nsight window put after the warm-up over several steps answers the cold start and the few steps alike, a
    serving engine's profiler routes every capture finding of a server (h37-review2: one fix printed under three
    findings).  ``ranked``: one host's findings in the report's order; returned, changed in place.  ``steady``: the
    texts of the fix that records the steady state (:func:`_steady_fix`), the one fix a finding about the program
    points to (:func:`_pointed`)."""
    first: dict[str, str] = {}  # a fix's text -> the title of the first finding that carries it
    for f in ranked:
        if f.rule not in _ABOUT_THE_CAPTURE and f.severity != "ok":
            f.actions = _pointed_once(f.actions, {t: title for t, title in first.items() if t in steady})
        if f.rule not in _ABOUT_THE_CAPTURE or f.severity == "ok":
            continue
        said = [a for a in f.actions if a.text in first]
        if said and len(said) == len(f.actions):
            f.actions = [Action(text=f"The fix under \"{first[said[0].text]}\" records this too: one window, "
                                     "recorded once, answers both.")]
        else:
            f.actions = [a for a in f.actions if a.text not in first]
        for a in f.actions:
            first.setdefault(a.text, f.title)
    return ranked


def _pointed_once(actions: list[Action], first: dict[str, str]) -> list[Action]:
    """``actions`` with each fix a finding about the capture listed above prints in full named by its title
    (:func:`_pointed`), one pointer to a title.

    Why only the steady-state fix: the pointer's words ("record steady iterations after warm-up") are that fix's.  A
    capture finding's program fixes (the submission-latency note's ``torch.compile`` and CUDA graphs) are the
    program finding's own: a DeepSpeed launch-bound step, its capture read as PyTorch's (h37-nvtx70), had both its
    graph fixes turned into one pointer printed twice -- "first record steady iterations" in place of the graph its
    saving assumes (randjobs zero12 seed 611)."""
    out: list[Action] = []
    for a in actions:
        b = _pointed(a, first)
        if b is a or all(b.text != c.text for c in out):
            out.append(b)
    return out


def _steady_fix(m: HostMetrics) -> list[Action]:
    """The fix that records the steady state, in the capture's profiler's words (:func:`_steady_first`'s)."""
    ctx = Ctx(m)
    return ctx.said(ctx.fit(ctx.steady_fix("capture_quality:few_steps")))


def _pointed(a: Action, first: dict[str, str]) -> Action:
    """A fix of another kind of finding that a capture finding listed above it prints in full (the steady capture a
    first call's note leads with, :func:`_one_early_call`): named by that finding's title, not printed twice."""
    if a.text not in first:
        return a
    return Action(text=f"First the fix under \"{first[a.text]}\": record steady iterations after warm-up, then see "
                       "whether this time recurs before acting on it.")


def follow_savings(findings: Iterable[Finding]) -> None:
    """A finding's severity follows what it saves (issue #27 item 6): with a saving under
    ``severity.warning_min_saving`` of the step it is a note (info), under ``severity.critical_min_saving`` at most a
    warning.  Findings without a saving (capture quality, a check that cannot size its fix) keep their grade."""
    for f in findings:
        if f.saving is None or f.severity not in ("critical", "warning"):
            continue
        pct = f.saving.percent_of_step / 100.0
        if pct < T("severity.warning_min_saving"):
            f.severity = "info"
        elif f.severity == "critical" and pct < T("severity.critical_min_saving"):
            f.severity = "warning"
    _raise_to_savings(findings)


#: The strongest colour a finding's metric may take under each severity: a note's metric is not amber, a warning's not
#: red (the schema's statuses; "info" is none of them).
_STATUS_CEILING = {"critical": "critical", "warning": "warning", "info": "good", "ok": "good"}
_STATUS_RANK = {"critical": 2, "warning": 1, "good": 0, "unknown": 0}


def metrics_follow_severity(findings: Iterable[Finding]) -> None:
    """A finding's metric is coloured no stronger than the finding's final severity (h37-review4): the gradings after
    a rule's own (the saving's floors, the steps' confidence) lowered the severity and left the metric's status as
    the rule set it -- a note whose metric read "warning" (61 of the kept captures' findings), a warning whose metric
    read "critical" (jax_mi355x's MFU), a status "info" outside the schema's."""
    for f in findings:
        if f.metric is None:
            continue
        top = _STATUS_CEILING.get(f.severity, "good")
        if _STATUS_RANK.get(f.metric.status, 3) > _STATUS_RANK[top]:
            f.metric.status = top  # type: ignore[assignment]


_CONFIDENCE = {"high": 2, "medium": 1, "low": 0}
_STRONGER = {"info": ("warning", "critical"), "warning": ("critical",)}


def _raise_to_savings(findings: Iterable[Finding]) -> None:
    """The other half of "severity follows the saving and the confidence" (issue #36): a finding that saves more of
    the step than a stronger one, at no lower confidence, is raised to that one's severity -- the list is ranked by
    saving, so a note saving 9.4% under a warning saving 2.8% (or a warning saving 51.7% beside a critical saving
    17.1%) read as the lesser problem above the greater.  Only past the floors of :func:`follow_savings`."""
    fs = sorted((f for f in findings if f.saving is not None and f.severity in ("critical", "warning", "info")),
                key=lambda f: f.saving.percent_of_step)  # smallest first: a raise then counts for the larger ones
    for f in fs:
        pct = f.saving.percent_of_step / 100.0
        if f.severity not in _STRONGER or pct < T("severity.warning_min_saving"):
            continue
        mine = _CONFIDENCE.get(f.confidence, 2)
        beaten = [o.severity for o in fs if o.severity in _STRONGER[f.severity]
                  and o.saving.percent_of_step + 0.5 < f.saving.percent_of_step and _CONFIDENCE.get(o.confidence, 2) <= mine]
        if "critical" in beaten and pct >= T("severity.critical_min_saving") and _may_be(f, "critical"):
            f.severity = "critical"
        elif beaten and _may_be(f, "warning"):
            f.severity = "warning"
        if f.metric is not None and beaten:
            f.metric.status = f.severity


def _may_be(f: Finding, severity: str) -> bool:
    """Whether ``f``'s rule lets its findings take ``severity`` (``Rule.ceiling``): the raise to the savings never
    grades a finding above what its rule promises (h37-review10: v100_bert's XLA finding, "never critical: the guide
    calls XLA optional", raised to critical beside the criticals it out-saved)."""
    ceiling = REGISTRY[f.rule].ceiling if f.rule in REGISTRY else "critical"
    if f.confidence == "low" and rests_on_the_steps(f):
        # the steps' ceiling (:func:`_step_confidence`): never critical on guessed steps, a gap between them a note --
        # held wherever the raise runs (the session's list too, after the hosts' own grading)
        steps_cap = "info" if f.rule in _STEP_BOUNDARY_RULES and not _waits_outside(f) else "warning"
        ceiling = min(ceiling, steps_cap, key=_SEVERITY_RANK.__getitem__)
    return _SEVERITY_RANK[severity] <= _SEVERITY_RANK[ceiling]


_SEVERITY_RANK = {"info": 0, "warning": 1, "critical": 2}


#: Rules whose findings measure the capture itself, or the allocator's own totals (an OOM a snapshot recorded,
#: reserved against allocated bytes): the window, not a step -- unless a finding of theirs claims time per step
#: (:func:`rests_on_the_steps`).
_ABOUT_THE_CAPTURE = ("capture_quality", "cold_start", "oom_snapshot", "memory_fragmentation")
#: Findings that exist only because of where steps begin and end: from steps that are a guess, they are a guess.
_STEP_BOUNDARY_RULES = ("step_gaps",)


def rests_on_the_steps(f: Finding) -> bool:
    """Whether ``f``'s number is a part of the steps as they were cut, so that steps which are a guess make it a guess
    (issue #37 deliverable 2) -- the one home of that distinction, for the steps' ceiling (:func:`_step_confidence`,
    :func:`_may_be`) and the recorded minority's (:func:`_recorded_minority`).

    A saving is time per step, a part of the step it is a share of, whichever rule claims it: guessed steps make both
    the part and the whole a guess (kokkos_8361a6b: the cold start's "3.26 ms/step (40% of step)" of two steps cut
    from GPU bursts, which span 16 ms of a 562 ms window).  A finding of the capture's own rules with no saving
    measures the window (61% of it one-time costs, an OOM, reserved against allocated bytes), which no step cut
    changes.  The steps' side of the question -- whether they were cut at all -- is :func:`steps_are_cut`'s."""
    return f.rule not in _ABOUT_THE_CAPTURE or f.saving is not None


def steps_are_cut(m: HostMetrics) -> bool:
    """Whether the steps are boundaries the steps stage guessed (low confidence): GPU bursts, or the whole window read
    as one iteration from its bursts (``steps.iteration_guess``: each "per step" saving is per that guessed iteration,
    h37-left39).  The whole capture analysed as one pass because no step was found is no cut: a time per step there
    is the pass's total, exact for the window (hip_vector_add_mi300a: copies block 1.07 s of the 1.10 s pass,
    wherever any step could have been cut)."""
    s = m.steps
    return s.confidence == "low" and not read_whole(s.confidence, s.source, s.iteration_guess)


def read_whole(confidence: str, source: str | None, iteration_guess: bool) -> bool:
    """Whether steps so described are the whole capture read as one pass because no step was found (low confidence,
    no iteration guessed from bursts): a time per step there is the pass's total, exact for the window -- the one home
    of that test for the host's metrics (:func:`steps_are_cut`) and the session's reports (its hosts' ``steps``)."""
    return confidence == "low" and source == "whole_capture" and not iteration_guess


#: Said by a critical finding whose number is per step where the capture marks no step and the whole pass is read as
#: one: why it keeps its grade beside the steps' low confidence (the property ``uncut`` reads it).
KEPT_ON_ONE_PASS = (" Critical though the capture marks no step: its time is a part of the whole pass, not of a "
                    "guessed step, and no cut of steps changes it.")


def say_why_kept_on_one_pass(findings: Iterable[Finding]) -> None:
    """Each critical finding claiming time per step, of a pass read whole, says why it is critical beside the steps'
    low confidence (:data:`KEPT_ON_ONE_PASS`, once) -- wherever a grading made it critical: the host's own, or the
    session's regrade against the median rank's pass (forms11 200461: 4 ranks' one pass, a memcpy warning raised to
    critical beside the job's exposed AllReduce it out-saved, said nothing of the pass)."""
    for f in findings:
        if f.severity == "critical" and f.saving is not None and KEPT_ON_ONE_PASS not in f.summary:
            f.summary += KEPT_ON_ONE_PASS


def _step_confidence(m: HostMetrics, findings: list[Finding]) -> None:
    """Every per-step number rests on the steps: a finding carries their confidence, and one that only the step
    boundaries make (a gap *between* steps) is no more than info when the boundaries are a guess -- and says so.
    A critical one whose number rests on no cut keeps its grade and, where it claims time per step, says why."""
    conf = m.steps.confidence
    if conf == "high":
        return
    cut = steps_are_cut(m)
    if conf == "low" and not cut:
        # the whole capture as one "step" is no guess of boundaries: its numbers are exact for the window (the
        # capture_quality finding says there are no steps); "low confidence" beside a critical read as a contradiction,
        # so a critical claiming time "per step" says why it stands (h37-lowconf)
        say_why_kept_on_one_pass(findings)
        return
    source = _guess_words(m)
    for f in findings:
        if not rests_on_the_steps(f):
            continue
        # the steps' confidence is a ceiling, never a raise: a first call's note stays the low-confidence note its
        # rule made it (synthetic startup_pass: the second pass here lifted launch_bound's note to medium, and the
        # session's grading then raised it to a warning beside a cold start of the same confidence)
        f.confidence = min(f.confidence, conf, key=lambda c: _CONFIDENCE.get(c, 2))
        if cut and f.rule in _STEP_BOUNDARY_RULES and f.severity in ("critical", "warning") and \
                not _waits_outside(f):
            _cap(f, "info", _guessed_gap_words(f, source))
        elif cut and f.severity == "critical":
            # a number per guessed step (GPU bursts) is never critical
            _cap(f, "warning", f"{CAPPED_WARNING}it rests on {_guessed(m)} (from {source}, low "
                               f"confidence).")


def _recorded_minority(m: HostMetrics, findings: list[Finding]) -> None:
    """No finding of a capture that kept the records of a minority of its launches is critical (h37-review14).

    Where most launches the runtime accepted lost their kernel records (``Kind.lost_share`` over a half:
    ``job.kind.lost_launches``), the steps every per-step saving rests on are the recorded part alone, the smaller
    part of the GPU work, of which nothing says it is like the rest (nvllm_gb10_lost_tail: the first 711 ms, a cold
    start, 0.6% of its 24,944 launches): a saving per recorded step is graded as its share of that step, but a
    critical claims the job's step, which the capture does not show.  Capped at warning, saying why; the findings
    about the capture itself are not the recorded part's."""
    job = m.job
    share = job.kind.lost_share if job is not None else 0.0
    if share <= 0.5:
        return
    for f in findings:
        if rests_on_the_steps(f) and f.severity == "critical":
            _cap(f, "warning", f"{CAPPED_WARNING}it rests on the recorded part of the window alone, "
                               f"{pct(1.0 - share)} of the kernel launches the runtime accepted (the rest lost their "
                               f"records).")


#: The words of a critical capped at a warning (:func:`_step_confidence`, :func:`_recorded_minority`): a template whose
#: grade :func:`words_follow_severity` fills once the grading is final -- a warning, or a note where the savings' floor
#: lowered it further.
CAPPED_WARNING = " {capped_grade}, not critical: "
#: The grade :data:`CAPPED_WARNING` names, by the finding's final severity.
CAPPED_GRADE = {"info": "A note"}


def words_follow_severity(findings: Iterable[Finding]) -> None:
    """A finding's words name no grade above its final one: a critical capped at a warning on guessed steps that the
    savings' floor then made a note read "[INFO] ... A warning, not critical: it rests on steps that are a guess"
    (h37-wordsfit30: the recurring-events steps of wild/cold_loop_a4000_swin, its mixed-precision and Tensor Core
    notes, each saving ~1% of the step).  The reason stays; the grade it names is the final one."""
    for f in findings:
        f.summary = f.summary.replace("{capped_grade}", CAPPED_GRADE.get(f.severity, "A warning"))


def _guessed(m: HostMetrics) -> str:
    """What a low-confidence cut guessed: "steps that are a guess"; "a pass that is a guess" where the capture was read
    as one unmarked pass (h37-onepass2: the one pass of vit_a4000_avg_batch read "it rests on steps that are a guess"
    beside findings saying "of the 84.9 ms pass")."""
    return Ctx(m).pass_or("a {step} that is a guess", "steps that are a guess")


def _guess_words(m: HostMetrics) -> str:
    """Where the steps a guess come from, in words (never the JSON's id): a whole capture read as one iteration is a
    reading of the GPU's bursts, as burst steps are."""
    source = "gpu_busy_clusters" if m.steps.iteration_guess else m.steps.source
    label = m.steps.label if not m.steps.iteration_guess and m.steps.label else SOURCE_LABEL.get(source)
    return (label or "an unnamed source").split(",")[0]


def _cap(f: Finding, severity: str, why: str) -> None:
    """Lower ``f`` to ``severity``, its headline metric's colour with it, and say ``why`` once: the step-confidence cap
    runs before and after the savings' grading."""
    f.severity = severity
    if why not in f.summary:
        f.summary += why
    if f.metric is not None and f.metric.status in ("critical", "warning"):
        f.metric.status = severity


def _guessed_gap_words(f: Finding, source: str) -> str:
    """Why a gap between guessed steps is a note: it may lie inside one step -- unless it lies between the steps'
    windows (``step_gaps``' ``outside_steps_ms``, most of each gap: a stretch the steps were cut at because nothing
    was recorded in it), where it is no step's time whatever the guess, and saves none (h37-left37:
    vit_a4000_pageable_batch's 3.78 s read "saves ~0 ms/step" beside "this gap may lie inside one step")."""
    detail = (f.metric.detail or {}) if f.metric is not None else {}
    outside, gap = detail.get("outside_steps_ms") or 0.0, detail.get("avg_gap_ms") or 0.0
    if gap > 0 and outside >= 0.5 * gap:
        # a part lies inside the steps, against the gap or the step: the saving is that part's (h37-review14, h37-lawseeds)
        if gap_inside_steps(gap, outside, detail.get("gap_steps_avg_ms")):
            return (f" The steps are a guess (from {source}), but most of this gap lies between them, outside every "
                    f"step's window ({pct_part(outside / gap)} of it): no step's time holds that part, so fixing it shortens "
                    f"the run, not a step; the saving is the part inside the steps, and it is reported as a note, not "
                    f"a problem.")
        return (f" The steps are a guess (from {source}), but this gap lies between them, outside every step's window "
                f"({pct(outside / gap)} of it): no step's time holds it, so fixing it shortens the run, not a step, "
                f"and it is reported as a note, not a problem.")
    return (f" The steps are a guess (from {source}): this gap may lie inside one step, so it is reported as a note, "
            f"not a problem.")


def _waits_outside(f: Finding) -> bool:
    """A gap finding whose idle the launching thread spent off the CPU, waiting for something outside the capture
    (``step_gaps.outside_wait_ms``): true wherever the step boundaries lie -- a gap inside one step is the same wait --
    so guessed boundaries do not make it a note."""
    return bool(f.metric is not None and (f.metric.detail or {}).get("outside_wait_ms"))


#: Savings of the host's time (its own work, launches, gaps): what a first call may spend once.
_HOST_TIME_GROUPS = ("host", "launch")


def _one_early_call(m: HostMetrics, findings: list[Finding]) -> None:
    """A capture of one step, numbered 0 or 1 (at most one iteration ran before it), in which no kernel runs twice:
    every launch in it may be its kernel's first, and its host time the first call's one-time cost (compiled kernels
    loaded on their first run, caches filled) -- nothing in the capture shows a steady step to tell them apart.  A
    saving of host time measured there is a note, not a problem, and says why (wild/compiled_a100_triton: one
    ``torch.compile``'d call whose 1.2 ms of host work before its only kernel read as a critical host-bound step).
    A later single step (``ProfilerStep#100``, ``#6`` after warm-ups) or one whose kernels repeat is judged as it is --
    unless the job stage found the window mostly start-up (phase ``warm-up``) and it holds at most one pass: then it
    is the process's first calls whatever repeats in it (the report's title says "start-up only"), as on a real CuPy
    start-up window whose 7 first kernels each waited for their module to load (recon-stream, survey h37-survey3) --
    where the pass holds those costs (``cold_start.steps_hold_start_up``).  A pass the program's own ranges bound after
    its start-up (wild/cold_a100_alexnet's ``measure|forward`` after its warm-up forward) is no first call: its host
    time recurs each pass, and a note saving more than a critical finding would contradict its own numbers."""
    why = first_call_why(m)
    if why is None:
        return
    for f in findings:
        if f.saving is None or f.severity not in ("critical", "warning"):
            continue
        if not any(r["group"] in _HOST_TIME_GROUPS for r in f.saving.recovers):
            continue
        f.severity, f.confidence = "info", "low"
        if f.metric is not None:
            f.metric.status = "info"
        f.summary += (f" A note, not a problem: {why}, so this host time may be the first call's one-time cost "
                      f"(kernels loaded on their first launch, caches filled); profile a few steps after warm-up to see "
                      f"whether it recurs.")
        f.actions = _steady_first(m, f.actions)


def _steady_first(m: HostMetrics, actions: list[Action]) -> list[Action]:
    """A first call's note leads with recording steady iterations (the capture's profiler options, else the
    framework's: torch.profiler's ``schedule(wait, warmup, active)``), its own fixes after: CUDA graphs and "more GPU
    work per call" pay only for time that recurs, which the capture cannot show (h37-words21:
    compiled_a100_triton's one torch.compile'd first call was told CUDA graphs first)."""
    steady = _steady_fix(m)
    texts = {a.text for a in steady}
    return list(steady) + [a for a in actions if a.text not in texts]


#: Job-scope rules that also speak of a single rank: what its own trace shows (its exposed collectives).  The others
#: compare ranks and need two.
ONE_RANK_RULES = ("comm_exposed",)


def evaluate_job(job: JobView) -> list[Finding]:
    """The job-scope rules over every rank of a session (``metrics.job``); never raises (a failing check is logged
    and skipped: the host reports stand on their own).  With one rank, only :data:`ONE_RANK_RULES`."""
    out: list[Finding] = []
    for rid in RULE_IDS:
        r = REGISTRY[rid]
        if r.scope != "job" or (len(job.ranks) < 2 and rid not in ONE_RANK_RULES):
            continue
        try:
            out.extend(r.check(job) or [])
        except Exception as e:  # noqa: BLE001 -- a check must never crash the report
            logger.warning("job rule %s failed: %s", rid, e, exc_info=True)
    follow_savings(out)
    metrics_follow_severity(out)
    return out


def evaluate_session(job: JobView, findings: Iterable[Finding]) -> list[Finding]:
    """The rules' job step, once every host is analysed: the session's findings from the hosts' (merged across hosts,
    one per problem: ``report.merge.merge_findings``) and the job's ranks.  The job-scope rules run over every rank
    (:func:`evaluate_job`); each host finding whose rule judges it across the job (``Rule.in_job``: allreduce_slow on
    the job's transfer, gpu_imbalance given way to the straggler finding naming its GPU) is judged there, once; and a
    host's "healthy" or "unexplained idle" verdict gives way to a job with a problem found across its ranks -- unless
    it has a saving of its own (host-bound: the host's work no other finding recovers), which is this host's problem
    whatever the job's.  Never raises: a failing judgement is logged and the host's finding kept.  Not ranked."""
    job_findings = evaluate_job(job) if job.ranks else []
    bad = any(f.severity in ("critical", "warning") for f in job_findings)
    out: list[Finding] = []
    for f in findings:
        r = REGISTRY.get(f.rule)
        g: Finding | None = f
        if r is not None and r.in_job is not None:
            try:
                g = r.in_job(f, job, job_findings)
            except Exception as e:  # noqa: BLE001 -- a judgement must never crash the report
                logger.warning("job judgement of %s failed: %s", f.rule, e, exc_info=True)
        if g is not None and not (bad and g.rule in VERDICT_RULES and
                                  not (g.saving is not None and g.saving.ms_per_step > 0)):
            out.append(g)
    # one list, one grading: the job rules were graded among themselves and each host's findings among theirs, so a
    # host's warning could out-save a job's critical beside it (h37-randjobs: input wait saving 12.9% a warning under
    # a collective's critical 11.0%; a slow link's 31.8% a warning over the input's critical 24.7%)
    _raise_to_savings(out + job_findings)
    metrics_follow_severity(out + job_findings)
    fill_pointers(out + job_findings, {f.rule for f in out + job_findings})  # every finding of the session known
    return out + job_findings


def quiet_reason(rule_id: str, metrics: HostMetrics) -> str:
    """Why ``rule_id`` did not fire on these metrics ('' when the rule gives no reason)."""
    r = REGISTRY.get(rule_id)
    try:
        return (r.quiet(metrics) or "") if r is not None and r.quiet is not None else ""
    except Exception:  # noqa: BLE001 -- a reason is a courtesy, never a crash
        return ""


def unexplained_idle_finding(metrics: HostMetrics) -> Finding | None:
    """No check fired, yet the device step-time share is amber or red: say so instead of "healthy".

    The guide's first number is graded on its own (``headline.device_step_share.*``); a report must not
    call a step healthy while the GPU idles most of it for a cause no check recognises.  (Idle the host's own work
    fills is :func:`host_bound_finding`'s, which runs whatever else fired.)
    """
    ctx = Ctx(metrics)
    dev = metrics.headline.device_step_share
    sev = grade(dev, "headline.device_step_share.warning", "headline.device_step_share.critical")
    if sev is None:
        return None
    if ctx.no_host:  # nothing of the host to look at: what the window holds is the reason no check can tell
        summary = (f"The device executes only {pct(dev)} of {ctx.the_step()}, and the capture cannot tell why: "
                   f"{ctx.no_host}, so what the host did while the GPU idled is unobserved.")
        title = "The GPU idles and the capture recorded nothing of the host"
    else:
        summary = (f"The device executes only {pct(dev)} of {ctx.the_step()}, and no check of the guide recognises "
                   f"why: open the trace viewer on the windows below and look at what the host does while the GPU "
                   f"idles.")
        title = "The GPU idles for a reason no check recognises"
    f = finding(
        ctx, "unexplained_idle", sev, summary, title=title,
        metric=_device_share_metric(dev, sev),
        windows=step_windows(ctx),
        # what to change: record what the host does while the GPU idles, so the next capture names it
        actions=ctx.record_host_fix() or [RECORD_HOST],
    )
    f.guide_section = "§1 overview"
    return f


def _device_share_metric(dev: float | None, sev: str, detail: dict | None = None) -> Metric:
    """The device step-time share as the idle findings grade it (the guide's first overview number)."""
    return Metric(id="device_step_share", label=DEVICE_SHARE_LABEL, value=None if dev is None else round(dev, 4),
                  unit="share", display=pct(dev), good_direction="higher", status=sev,
                  threshold=T("headline.device_step_share.warning"),
                  meaning="share of the {step} the device executes (the guide's first overview number)",
                  detail=dict(detail or {}))


def _host_claims_ms(others: Iterable[Finding]) -> float:
    """ms per step and GPU of the host's time that the findings ``others`` recover: their savings' claims on the
    ledger's host group (a host sync's idle, host-placed ops, eager dispatch, gaps between steps), the host's own
    pool aside -- what every host finding leaves to the others, so that each microsecond is recovered once."""
    return sum(float(r["ms"]) for f in others if f.saving is not None
               for r in f.saving.recovers if r["group"] == "host" and r["pool"] != "host_own")


def unclaimed_host_ms(metrics: HostMetrics, others: Iterable[Finding]) -> float:
    """The host's own work in the step's ledger (``host_compute``, per step and GPU) that no other finding recovers:
    the ledger's host group (host work and the idle nothing on the host explains) less every claim other findings
    make on it (a host sync's idle, host-placed ops, the dispatch part of eager ops, gaps between steps), never below
    zero nor above the host work itself.  Each microsecond is then recovered once.  The profiler's own work the GPU
    idled through is the ledger's own category (``profiler``), in neither of these: no change to the program removes it."""
    bd = metrics.breakdown
    claimed = _host_claims_ms(others)
    return max(0.0, min(bd.host_compute, bd.host_compute + bd.managed_read + bd.other - claimed))


def _idle_graded(metrics: HostMetrics) -> tuple[Ctx, float | None, str] | None:
    """(context, device step share, severity) where the GPU idles an amber or red share of a known step -- what
    both host findings (its own work, its waits) start from; None otherwise."""
    ctx = Ctx(metrics)
    dev = metrics.headline.device_step_share
    sev = grade(dev, "headline.device_step_share.warning", "headline.device_step_share.critical")
    return None if sev is None or not ctx.step_ms else (ctx, dev, sev)


def host_bound_finding(metrics: HostMetrics, others: Iterable[Finding] = ()) -> Finding | None:
    """The GPU idles most of the step while the host runs its own code: fires whatever else fired, on its own saving.

    Fires where the device step-time share is amber or red (the GPU idles much of the step) and the host's own work
    no other finding recovers (:func:`unclaimed_host_ms`) fills at least half of that idle: the host, not a wait, is
    what the GPU waits for.  Issue #37's survey: a 4% mixed-precision warning hid 166 ms of host work in a 222 ms
    step, because this finding was added only when nothing else warned.  Ranked by its saving like every other."""
    graded = _idle_graded(metrics)
    if graded is None:
        return _host_bound_by_saving(metrics, others)
    ctx, dev, sev = graded
    others = list(others)
    unrecorded = on_cpu_unrecorded_ms(metrics, others)
    host = unclaimed_host_ms(metrics, others) + unrecorded
    idle = _idle_not_named(ctx, metrics, dev or 0.0)
    if host <= 0 or host < 0.5 * idle:
        return None
    return _host_bound(ctx, sev, dev, host, unrecorded)


def _idle_not_named(ctx: Ctx, metrics: HostMetrics, dev: float) -> float:
    """The GPU's idle in the step (ms) the host-bound finding weighs the host's own work against: less the input
    pipeline's own time (the ledger's ``input_wait``, the input finding's) and the profiler's own work the program
    waited for (the ledger's ``profiler``), neither of them the host's code nor its to remove.

    Why: each wait belongs to its cause.  torchprof-XDU's one-batch ResNet-50 pass at 64x64 (RTX 5070 Ti Laptop GPU,
    wild58 torch58): 4.31 ms of the host's own code in a 13.2 ms pass -- its largest cost beside a 3.85 ms fetch and a
    0.99 ms activity buffer request -- was weighed against all 9.75 ms of idle, the fetch and the request among it,
    and was not named once the request was left out of it.

    Less the exposed collectives too (the ledger's ``collectives``): a rank waiting in a collective waits for its
    peers to enter it (or for the transfer), not for its own host -- ``rank_straggler``'s and ``comm_exposed``'s
    cause.  ``wild/dlrm_v100`` (8 ranks, one file each; raw events read by hand, h37-ranks59): every rank's GPU
    idles 7.6-10.5 ms outside any kernel and its host runs 5.9-8.7 ms of its own code then; ranks 1 and 3 differ only
    in their first all-to-all waiting 7.6 / 6.1 ms for peers (the least rank spends 10 us in it), which put 11.1 /
    9.5 ms of exposed collectives into their idle, so their 5.9 / 6.5 ms of host code read as less than half of it."""
    bd = metrics.breakdown
    idle = ctx.step_ms * (1 - dev) - bd.input_wait - bd.collectives - bd.profiler
    return max(0.0, idle)


def _host_bound_by_saving(metrics: HostMetrics, others: Iterable[Finding]) -> Finding | None:
    """The host-bound finding where the GPU is busy more than the amber share of the step, yet the host's own work no
    other finding recovers still fills at least half of its idle and ``host_bound.saving_warning`` of the step: a
    warning, judged by what it saves (issue #37 item 4), never critical -- the device share is not amber.

    Why: xDiT's SD 3.5 on an MI300X (survey h37-survey37) runs four compiled denoising steps whose Inductor wrapper
    launches ~1,100 kernels each from Python, no graphs: 468 ms of host work the GPU waited for in a 1.2 s step
    (39%), at a device share of 59.6% -- reported "Healthy", because this finding was weighed only below 50%."""
    ctx = Ctx(metrics)
    dev = metrics.headline.device_step_share
    if dev is None or not ctx.step_ms:
        return None
    others = list(others)
    unrecorded = on_cpu_unrecorded_ms(metrics, others)
    host = unclaimed_host_ms(metrics, others) + unrecorded
    idle = _idle_not_named(ctx, metrics, dev)
    if host <= 0 or host < 0.5 * idle or host < T("host_bound.saving_warning") * ctx.step_ms:
        return None
    return _host_bound(ctx, "warning", dev, host, unrecorded)


def on_cpu_unrecorded_ms(metrics: HostMetrics, others: Iterable[Finding]) -> float:
    """The GPU idle inside the step (per step and GPU) that no recorded host event covers (the ledger's ``other``),
    no other finding recovers and the launching thread did not spend waiting in the OS -- where the capture traced
    the threads' context switches, so that the rest is time the thread ran on the CPU: the host's own code, which the
    profiler did not record.  The same where the capture traced the OS runtime's calls instead (``waits_traced``
    "os runtime": a wait for anything outside the program is a traced call, so the rest is the thread running, or
    preempted).  0 where nothing traced the waits (the time may be a wait: nothing tells).

    Why: one pass of a program whose CPU work no event records (fckwader/shitbox: three uploads, 14.79 s of its own
    code, one kernel) has its idle inside the step; the scheduler's trace shows that thread on the CPU 99.8% of it.
    Claims on the host's time fall on that unrecorded time first (as :func:`unclaimed_host_ms` counts), and the waits
    the OS traces are taken out whole: a lower bound."""
    return _unrecorded_left_ms(metrics, others) if metrics.waits_traced else 0.0


def _unrecorded_left_ms(metrics: HostMetrics, others: Iterable[Finding]) -> float:
    """The ledger's idle no recorded host event covers (``other``, and the host's reads of managed memory,
    ``managed_read``, which the waits hold; per step and GPU) less every other finding's claim on the host's time and
    the waits the OS traced (the larger of the two: a lower bound)."""
    claimed = _host_claims_ms(others)
    waits = sum(v for _, v in metrics.idle_in_os_waits)
    bd = metrics.breakdown
    return max(0.0, bd.other + bd.managed_read - max(claimed, waits))


def unrecorded_idle_finding(metrics: HostMetrics, others: Iterable[Finding] = ()) -> Finding | None:
    """The GPU idles while nothing the capture recorded covers the host's time -- half its idle, or a large share of
    the step (:func:`_unrecorded_named`) -- and no scheduler trace tells whether the host ran code or waited: fires whatever else fired (a capture finding -- too few steps --
    must not hide it), a warning at most and with no saving, since no fix can be sized for a cause the capture does
    not show.

    Why: one pass of a program analysed whole (fckwader/shitbox's window without its scheduler trace: 14.79 s of the
    15.2 s no event covers) has that time inside its one step, where no gap check looks, and "too few steps" kept
    the idle finding away: the report said nothing of 91% of the window.  Where the capture traced context
    switches, :func:`host_waits_finding` and :func:`host_bound_finding` name the time instead."""
    ctx = Ctx(metrics)
    dev = metrics.headline.device_step_share
    if metrics.waits_traced or not ctx.step_ms:
        return None
    left = _unrecorded_left_ms(metrics, list(others))
    if not _unrecorded_named(left, ctx.step_ms, dev, first_call_why(metrics) is None):
        return None
    of_window = _of_window(metrics, left)
    head = f"The device executes only {pct(dev)} of {ctx.the_step()}; for {ms(left)} of it ({pct(left / ctx.step_ms)})"
    if ctx.no_host:  # a kernel trace alone: the host's time is unobserved, not recorded and found empty
        summary = (f"{head} the GPU idles, and {ctx.no_host}: what the host did then -- its own code, a wait or the "
                   f"launches themselves -- is unobserved.{of_window}")
        title = "The GPU idles while the capture recorded nothing of the host"
    else:
        summary = (f"{head} no runtime call, op, range or OS call of the capture covers the host's time: the host's own "
                   f"code, or a wait for something outside the capture (an input device, a file, a timer) -- the "
                   f"capture traced no context switches, so it cannot tell which.{of_window}")
        title = "The GPU idles while the host does what the capture did not record"
    launcher = min(metrics.unrecorded_before_launcher_ms, left)
    f = finding(
        ctx, "unexplained_idle", "warning", summary + _sentence(launcher_words(ctx, launcher, metrics.launcher_launches)),
        title=title,
        metric=_device_share_metric(dev, "warning", {"unrecorded_ms": round(left, 3),
                                                             **launcher_detail(launcher, metrics.launcher_launches)}),
        windows=step_windows(ctx, label="GPU idle with the host unobserved" if ctx.no_host else "unrecorded host time",
                             draws=("other",), claimed_ms=left),
        actions=_with_launcher_fix(ctx, ctx.record_host_fix() or [RECORD_HOST], launcher),
    )
    f.guide_section = "§1 overview"
    f.id += UNRECORDED_SUFFIX  # a secondary finding of the rule (docs/report-schema.md, Finding ids)
    return f


def _sentence(words: str) -> str:
    """``words`` as a sentence of its own after another ("" stays "")."""
    return f" {words}." if words else ""


def _of_window(metrics: HostMetrics, left_ms: float) -> str:
    """The unrecorded time over all kept steps as a share of the capture window, in a sentence -- where it is half the
    window or more and the kept steps are not the window itself: a pass read as the whole capture has its share of
    the window said already, and "of the 432.6 ms pass (99.9%) ... That is 99.9% of the 432.6 ms capture window"
    told one number twice as if of two wholes (h37-words20: rocprof_aiter_mi355x, rocprof_mxfp4_setup_gfx950)."""
    window = metrics.capture.length_ms or 0.0
    total = left_ms * max(metrics.steps.count, 1)
    if window <= 0 or total < 0.5 * window or metrics.steps.source == "whole_capture":
        return ""
    return f" That is {pct(min(total / window, 1.0))} of the {ms(window)} capture window."


def calls_told_whole(metrics: HostMetrics, out: list[Finding],
                     host_bound: Finding | None) -> tuple[list[Finding], Finding | None]:
    """(``out``, the host-bound finding) -- where ``host_bound`` reads the step's host time as the dispatch of a few
    compiled calls too small for it (its detail's ``dispatch_calls_per_step``: :func:`_host_bound`'s step-level
    reading) and the gaps between steps are that dispatch and the loop between the calls (``step_gaps.call_gaps``),
    ``out`` without the gaps' finding and the host-bound finding weighed again without its claim, so it holds the
    gaps' time as its own and says so.  Unchanged otherwise.

    Why: one cause, one finding (h37-turn66, wild ``jax_mi300x``: host-bound critical 215 us for "the dispatch of its
    2.2 jitted calls", and gaps between steps critical 91 us of "Python between jitted calls" -- 958 of the gaps'
    1,364 us inside the next ``PjitFunction(dot)``, the rest the loop's frame).  The ledger books both as the host's
    work, so the saving is the same whole (306 us), now told once.

    ``host_bound`` may be None: where all the host's work lies in the gaps, the gaps' finding claims it whole and the
    host-bound finding weighed beside it finds nothing left -- the same cost then told as "Python between jitted calls"
    (h37-calls67: ``write_tiny_jitted_calls(inputs_every=0)``, no host work inside the steps, read the gaps' critical
    138 us and no host-bound finding).  Weighed without the gaps' claim, it holds them where it reads the dispatch."""
    if host_bound is not None and not _reads_dispatch(host_bound):
        return out, host_bound
    gaps = next((f for f in out if step_gaps.call_gaps(f)), None)  # the gaps' check's own diagnosis, made once
    if gaps is None or gaps.saving is None:
        return out, host_bound
    rest = [f for f in out if f is not gaps]
    whole = host_bound_finding(metrics, rest)
    if whole is None or not _reads_dispatch(whole):
        return out, host_bound
    g, ctx = metrics.gaps, Ctx(metrics)
    share = float(gaps.metric.detail["next_call_dispatch_ms"]) / g.avg_gap_ms if g.avg_gap_ms else 0.0
    steps = f"{ctx.step_noun}s"
    whole.summary += (f" {ms(gaps.saving.ms_per_step)} {ctx.per_step} of it lies between the {steps}' GPU work "
                      f"({pct(share)} of those gaps inside the next {ctx.fw.label('dispatch_call')}'s dispatch, the "
                      f"rest the host's other code between the calls): the same cost of running a {ctx.step_noun} this "
                      f"small from the host, told here rather than as gaps between {steps}.")
    whole.metric.detail = {**whole.metric.detail, "between_step_host_ms": gaps.saving.ms_per_step}
    _graded_as_part(whole, gaps)  # the gaps' grade is its part's
    return rest, whole


def step_told_whole(metrics: HostMetrics, out: list[Finding],
                    host_bound: Finding | None) -> tuple[list[Finding], Finding | None]:
    """(``out``, the launch finding folded into ``host_bound`` or None) -- where the host-bound finding reads the step's
    host time as the dispatch of a few compiled calls too small for it (its detail's ``dispatch_calls_per_step``) and
    the launch check tells the same step-level verdict (``launch_bound.tells_step``), ``out`` without the launch
    finding and ``host_bound`` holding its time too: its saving's pools added (the ledger keeps the launch wait apart
    from the host's work, so the sum never passes the idle), its assumption composed after the host-bound one, its
    time said in one sentence, its fixes not yet listed added, its grade where higher.  Unchanged otherwise.

    Why: one cause, one finding (h37-calls67).  A jitted call's dispatch is booked in two ledger categories -- host
    work where a traced frame spans it, launch wait where nothing does -- and each had its finding naming the step
    too small for its dispatch, with the same fix (several steps per call): ``write_tiny_jitted_calls(loop_frame=
    False)`` read host-bound critical 153 us "the dispatch of its 1.6 jitted calls" beside launch-bound critical 140
    us "the whole step is too small for its dispatch cost"; wild ``jax_mi300x`` host-bound critical 306 us beside a
    launch note of its 18 us launch wait in the same words (h37-turn66 *Left* 2)."""
    if host_bound is None or not _reads_dispatch(host_bound):
        return out, None
    lf = next((f for f in out if launch_bound.tells_step(metrics, f)), None)
    if lf is None or lf.saving is None or host_bound.saving is None:
        return out, None
    ctx = Ctx(metrics)
    parts = [(r["group"], r["pool"], r["ms"]) for f in (host_bound, lf) for r in f.saving.recovers]
    host_bound.saving = saving(ctx, host_bound.saving.ms_per_step + lf.saving.ms_per_step,
                               f"{host_bound.saving.assumption}; and {lf.saving.assumption}", parts)
    wait = float((lf.metric.detail or {}).get("launch_wait_ms") or 0.0) if lf.metric is not None else 0.0
    gaps = float((lf.metric.detail or {}).get("unrecorded_ms") or 0.0) if lf.metric is not None else 0.0
    more = (f", and {ms(gaps)} {ctx.per_step} of the host's code around the calls that the capture did not record"
            if gaps > 0 else "")
    host_bound.summary += (f" The GPU also waits {ms(wait)} {ctx.per_step} for the calls' launches themselves (the "
                           f"launch wait){more}: the same cost of dispatching a {ctx.step_noun} this small, told here "
                           f"rather than as launch-bound.")
    detail = dict(host_bound.metric.detail)
    detail["launch_wait_ms"] = wait
    detail["holds"] = [*detail.get("holds", []), launch_bound.ID]  # its card says it is told here (headline.holder)
    for k in ("between_step_host_ms", "in_step_host_ms"):
        if k in (lf.metric.detail or {}):
            detail[k] = float(detail.get(k) or 0.0) + float(lf.metric.detail[k])
    if gaps > 0:
        detail["unrecorded_ms"] = float(detail.get("unrecorded_ms") or 0.0) + gaps
    host_bound.metric.detail = detail
    host_bound.actions = host_bound.actions + [a for a in lf.actions if a not in host_bound.actions]
    _graded_as_part(host_bound, lf)
    return [f for f in out if f is not lf], lf


def _reads_dispatch(f: Finding) -> bool:
    """Whether the host-bound finding ``f`` reads the step's host time as the dispatch of a few compiled calls too
    small for it (its detail's ``dispatch_calls_per_step``, :func:`_host_bound`): the premise of both folds into it
    (:func:`calls_told_whole`, :func:`step_told_whole`)."""
    return bool(f.metric and f.metric.detail.get("dispatch_calls_per_step"))


def _graded_as_part(whole: Finding, part: Finding) -> None:
    """``whole``, holding ``part``'s time after a fold, takes ``part``'s grade where it is higher: a fold never tells
    the same time as a lesser problem."""
    if _SEVERITY_RANK[part.severity] > _SEVERITY_RANK[whole.severity]:
        whole.severity = whole.metric.status = part.severity


def turn_told_whole(metrics: HostMetrics, out: list[Finding]) -> Finding | None:
    """The launch check's step-level finding where it holds a step too small for its host cost with the gaps between
    steps (``launch_bound.holds_turn``), told with the rest of the step's unrecorded host time too: the ledger's
    ``other`` no other finding in ``out`` claims, less the waits the OS traced and the reads of managed memory (a cause
    of their own) -- ``launch_bound.tell_rest``.  None where no such finding is in ``out``.

    Why here: only the account of every finding sees what the others claim of the host's time (as the unrecorded-idle
    and host-bound findings are weighed, after it: they then find that time claimed).  h37-turn66: on lutetjeff/cs521-
    mp2 ``cuda.json`` the launch finding held 44 us of the turns' unrecorded code and a warning told 19 us more of
    the same code as unknown; by the ledger both are the turns' ``other``, one cost of running a turn this small."""
    owner = next((f for f in out if launch_bound.holds_turn(f)), None)
    if owner is None:
        return None
    rest = min(metrics.breakdown.other, _unrecorded_left_ms(metrics, out) - metrics.breakdown.managed_read)
    launch_bound.tell_rest(Ctx(metrics), owner, max(0.0, rest))
    return owner


#: How a step-level finding holding the turn's unrecorded time says the part of it after the syncs
#: (:func:`unrecorded_part_said_in_its_whole`): the syncs close each turn, and the code after them is the loop's.
_TURN_AFTER_SYNCS = (" {part} of that unrecorded time follows the host's syncs and blocking copies: not their wait, "
                     "but the code the host runs after each, before its next call.")
#: The words of the unrecorded-idle warning for the same part.
_AFTER_SYNCS = (" {part} of it follows the host's syncs and blocking copies: neither their cost nor the copies', but "
                "code the host ran after them.")


def unrecorded_part_said_in_its_whole(out: list[Finding], whole: Finding, words: str = _AFTER_SYNCS) -> list[Finding]:
    """``out`` without host_sync's note of the GPU idle after the host's syncs and blocking copies that nothing
    recorded, where ``whole`` (the unrecorded-idle finding) already holds that time: the note's part is said in the
    whole's text instead.  A note larger than the whole is no part of it and stays.

    Why: h37-review5 read wild/vit_a4000_avg_batch's report name one stretch twice -- "for 19.0 ms of it no runtime
    call, op, range or OS call of the capture covers the host's time" and a note "After the host's syncs and
    blocking copies the GPU idles 15.4 ms ... while the host runs code the profiler did not record", both with the
    same trace window "unrecorded host time, step 0 (19.0 ms)": a part said as a finding of its own beside its whole,
    its window showing the whole's time.  ``whole`` may also be the step-level launch finding that holds a tiny turn's
    unrecorded time (:func:`turn_told_whole`), with its own ``words`` for the part (h37-turn66: ``cuda.json``'s note
    "After the host's syncs ... 44 us" beside the launch finding holding those 44 us)."""
    part = next((f for f in out if f.rule == "host_sync" and f.id.endswith("#unrecorded_host_share")), None)
    if part is None or part.metric is None or whole.metric is None:
        return out
    part_ms = float(part.metric.detail.get("unrecorded_ms_per_step") or 0.0)
    whole_ms = float(whole.metric.detail.get("unrecorded_ms") or 0.0)
    if part_ms <= 0 or part_ms > whole_ms * 1.001:
        return out
    whole.summary += words.format(part=ms(part_ms))
    return [f for f in out if f is not part]


def _unrecorded_named(left_ms: float, step_ms: float, dev: float | None, steady: bool = True) -> bool:
    """Whether the step's unrecorded host time (``left_ms``, what no other finding claims) is worth a finding: half
    the GPU's idle where the GPU idles an amber or red share of the step, or a large share of the step itself
    (``step_gaps.unrecorded_share``, the stock overview's high "all others") whatever the GPU's share.

    Why: survey h37-survey18's Keras sessions on a V100 (one profiled batch each) left 13-34 ms of 87-132 ms steps
    (15-26%), under half the idle, booked to nothing recorded and named by no finding -- three of them with the GPU
    52-54% busy, which an amber gate kept unnamed (h37-left26).  That gate stood for the GPU idling after the host's
    last launch with its work queued (vllm_mi300x_decode: its graph launched at 1.5 ms, run from 8.4 ms), which the
    ledger now books apart from the host's time (``metrics.breakdown._idle_before``), so ``left_ms`` no longer holds
    it.  Not in a lone first call (``steady`` False, :func:`first_call_why`): a share of its step may be one-time
    costs (wild/compiled_a100_triton: 285 us of a 1.67 ms first compiled call), which the host-time note says
    already; half the idle is named there, the GPU idling an amber share."""
    if left_ms <= 0:
        return False
    graded = grade(dev, "headline.device_step_share.warning", "headline.device_step_share.critical") is not None
    share = T("step_gaps.unrecorded_share") * step_ms
    if not graded:
        return steady and left_ms >= share
    half_idle = 0.5 * step_ms * (1 - (dev or 0.0))
    return left_ms >= (min(share, half_idle) if steady else half_idle)


def unclaimed_wait_ms(metrics: HostMetrics, others: Iterable[Finding]) -> float:
    """The GPU idle inside the step (per step and GPU) booked to the host (its recorded work, or nothing recorded) that
    no other finding recovers, which the thread launching the GPU's work spent waiting in the OS -- off the CPU in the
    scheduler's trace, or in a blocking call of the OS runtime trace (``HostMetrics.idle_in_os_waits``) -- never
    above either.  A range or op around a wait (an NVTX ``frame`` spanning the wait for the next frame) runs no code
    there: the wait is no host work.  The waits other findings' claims on the host already hold are theirs: what a
    gap check claims between the steps is mostly that thread's wait too (a paced loop's mid-frame sleep), so the rest
    is the traced waits less those claims -- never the thread's own code on the CPU, which a program with no framework
    books as the host's unrecorded time once its launches are told apart from it (h37-ownsplit; the paced loop's
    "wait for the next frame" claimed 13.17 ms where its thread was off the CPU 13.07 ms)."""
    others = list(others)
    waits = sum(v for _, v in metrics.idle_in_os_waits)
    return min(_unclaimed_other_ms(metrics, others), max(0.0, waits - _host_claims_ms(others)))


def _unclaimed_other_ms(metrics: HostMetrics, others: Iterable[Finding]) -> float:
    """The host's share of the step's idle -- its recorded work and the idle nothing recorded covers (the ledger's
    ``host_compute``, ``managed_read`` and ``other``, per step and GPU) -- that no other finding's claim on the host's
    time recovers."""
    bd = metrics.breakdown
    claimed = _host_claims_ms(others)
    return max(0.0, bd.host_compute + bd.managed_read + bd.other - claimed)


def _unclaimed_reads_ms(metrics: HostMetrics, others: Iterable[Finding]) -> float:
    """The host's reads of managed memory the GPU wrote inside the step (``idle_in_os_waits``' :data:`MANAGED_READ`,
    per step and GPU) that no other finding claims: less the claims on the reads' pool
    (``savings.IDLE_POOLS["managed_read"]``, which the gaps' check takes for the reads it names, between the steps and
    inside them).

    Why: the gaps' check claimed a solver's reads wherever they lie in the step, and the host-wait finding claimed
    them again from the waits the gaps' claim left -- another wait's time (a timer's sleep inside the turn) read as the
    reads: two findings each saving the ledger's 300 us of ``managed_read``, and the 400 us sleep named by neither
    (``write_counted_solver(read="managed", fault_us=300, sleep_us=400)``, h37-review64)."""
    group, pool = IDLE_POOLS["managed_read"]
    claimed = sum(float(r["ms"]) for f in others if f.saving is not None
                  for r in f.saving.recovers if r["group"] == group and r["pool"] == pool)
    return max(0.0, dict(metrics.idle_in_os_waits).get(MANAGED_READ, 0.0) - claimed)


def host_waits_finding(metrics: HostMetrics, others: Iterable[Finding] = ()) -> Finding | None:
    """The GPU idles much of the step while the thread that launches its work waits in the OS: fires whatever else
    fired, on its own saving, like :func:`host_bound_finding`.

    Why: where the step's idle lies inside the steps (steps cut by the GPU work's own period, one pass analysed
    whole) no gap check sees it, and a thread off its CPU runs no code of its own: the host waits for something the
    capture does not hold -- a camera's next frame, a file, a socket, a timer (SamuelAmsih/CUDA's Jetson camera loop
    cut into frames by its 7-kernel period: ~27 ms of each 39.9 ms frame unclaimed, the launching thread off the
    CPU).  Fires where the device step-time share is amber or red and such waits fill at least half of the idle
    no finding claims; never critical -- whether the source can deliver faster is outside the capture --, but
    where the waits are the host's reads of managed memory the GPU wrote, whose fix is the program's own: graded and
    shown by the reads' share of the step (``step_gaps.reads_metric``), as the gaps' check does with the same reads."""
    graded = _idle_graded(metrics)
    if graded is None:
        return None
    ctx, dev, sev = graded
    others = list(others)
    free = _unclaimed_other_ms(metrics, others)
    wait = unclaimed_wait_ms(metrics, others)
    # most of the GPU's idle no other finding claims, as host_bound_finding's host: a gap check's claim on the gaps
    # between steps leaves the wait inside the step to this one (a frame's mid-step sleep beside its between-frame one)
    claimed = _host_claims_ms(others)
    idle = max(0.0, ctx.step_ms * (1 - (dev or 0.0)) - claimed)
    # and the GPU still idles much of what is left of the step once those claims are given back
    rest = ctx.step_ms - claimed
    left = (dev or 0.0) * ctx.step_ms / rest if rest > 0 else 1.0
    if wait <= 0 or wait < 0.5 * free or wait < 0.5 * idle or \
            grade(left, "headline.device_step_share.warning", "headline.device_step_share.critical") is None:
        return None
    tail = _output_tail_ms(metrics, wait)
    # under the program's own ranges (a loop's `load_weights` around its sleep) or under nothing: the ledger says
    covered = wait_covered(metrics.breakdown.host_compute, metrics.breakdown.other)
    sev, metric = "warning", _device_share_metric(dev, "warning")  # a wait for a source: never critical
    managed = min(_unclaimed_reads_ms(metrics, others), wait)
    head = (f"The device executes only {pct(dev)} of {ctx.the_step()}; for {ms(wait)} of it "
            f"({pct(wait / ctx.step_ms)}) the GPU idles while the thread that launches its work waits in the OS, "
            f"running no code")
    if tail:  # a one-pass program's tail: no loop is paced, it writes what the GPU computed
        summary = (f"{head}, {ms(tail)} of it after the last kernel: the capture holds one pass of the program, "
                   f"so no source paces a loop here -- a program that runs once writes its results once its GPU work "
                   f"is done{covered}{in_os_waits(ctx, wait)}.")
        title = "The GPU idles while the host waits in the OS after the last kernel: the program's output"
        assumption = ("the program's output written while the GPU works (on a thread of its own, or asynchronously), "
                      "so the pass ends with its GPU work")
        actions = ctx.fw.extra("unexplained_idle:output") or [WRITE_OUTPUT]
    elif managed >= 0.5 * wait:  # the thread asleep in its loads of managed memory: reads of the GPU's values
        summary = (f"{head}, {ms(managed)} of it in the host's reads of managed memory the GPU had written: no call "
                   f"is recorded there, only the pages' migrations to the host (Unified Memory page faults), so the "
                   f"thread waited for the GPU's value itself -- a read of a device value, as a sync is, not a wait "
                   f"for something outside the capture{in_os_waits(ctx, wait)}.")
        title = "The GPU idles while the host reads managed memory the GPU wrote: each read waits for its page"
        assumption = READ_MANAGED_ASSUMPTION
        actions = managed_read_actions(ctx)
        # the reads' fix is the program's own (no source outside the capture): graded, shown and saved as the reads
        # (the ledger's ``managed_read``), the thread's other waits left to no fix of theirs
        wait = managed
        sev, metric = reads_metric(ctx, wait, "warning", {"device_step_share": dev})
    else:
        summary = (f"{head}: the host waits for something outside the capture (an input device, a file, a socket, a "
                   f"timer){covered}{in_os_waits(ctx, wait)}.")
        title = "The GPU idles while the host waits for something outside the capture"
        assumption = WAIT_SOURCE_ASSUMPTION
        actions = ctx.fw.extra("step_gaps:outside") or [WAIT_SOURCE]
    f = finding(
        ctx, "unexplained_idle", sev, summary, title=title,
        metric=metric,
        # a pool of its own: the wait inside the step, what every other claim on the host leaves (unclaimed_wait_ms),
        # never the gaps' wait between steps -- both fixes land, both count
        saving=saving(ctx, wait, assumption, [("host", "host_wait", wait)]),
        evidence=os_waits_table(ctx),
        windows=step_windows(ctx, label="host waiting", draws=("managed_read", "other"), claimed_ms=wait),
        actions=actions,
    )
    f.guide_section = "§1 overview"
    f.id += "#outside_wait"  # a secondary finding of the rule (docs/report-schema.md, Finding ids)
    return f


def _output_tail_ms(metrics: HostMetrics, wait: float) -> float:
    """ms per step of the outside wait that lies after the GPU's last work, where the window is one pass of the
    program and that tail holds most of the wait; else 0.  Why: a one-pass program paces no loop -- its wait after the
    last kernel is its output being written (ISC25-ICON-C's ``pwrite64``), and the fix is the write's, not a source's."""
    tail = min(metrics.idle_in_os_waits_after_work, wait)
    return tail if metrics.steps.source in UNMARKED_SOURCES and wait > 0 and tail >= 0.5 * wait else 0.0


def _host_bound(ctx: Ctx, sev: str, dev: float | None, host_ms: float, unrecorded_ms: float = 0.0) -> Finding:
    """The GPU idles most of the step while the host runs its own code (Python, framework work: each eager op's
    dispatch), inside the step, where no between-step or launch check looks -- an eager serving engine's, a forward
    pass's, or a training step whose host is slower than its GPU.  Saving: that host time (kept out of the step by
    compiling the work into fewer, larger launches or graphs), in a pool of its own: it is what the other findings
    leave of the host's time.  The fix is the job's own for host overhead per op (its launch fixes: compile, CUDA
    graphs, a serving engine's graph mode) -- where the time lies in the program's ranges, only for the part in ranges
    that launch GPU work (:func:`_unlaunched`): a graph removes launches, not a range's host work that launches none."""
    unseen = unrecorded_ms >= 0.5 * host_ms  # mostly code no event records: not the dispatch of launches
    unit = ctx.unit if ctx.one_pass else "step"  # one unmarked pass is "the pass": no step is marked (h37-words20)
    idle, no_launch = _unlaunched(ctx, host_ms, unrecorded_ms)
    elsewhere = not unseen and no_launch >= 0.5 * host_ms  # mostly in ranges that launch nothing
    what = "" if unseen or elsewhere else " (Python, the framework's own work before each launch)"
    alone = (f"; {_names(idle)} {'launches' if len(idle) == 1 else 'launch'} no GPU work" if no_launch > 0 and
             not unseen else "")
    how = (f"moved out of the {unit}, onto the GPU, or overlapped with the GPU's work" if unseen or elsewhere else
           "fewer, larger launches or graphs, or overlapped with the GPU")
    if unseen:
        actions = ctx.record_host_fix() or [RECORD_HOST]
    elif no_launch >= 0.1 * host_ms:
        launch = _launch_fix(ctx, host_ms, "launch_bound") if host_ms - no_launch >= 0.1 * host_ms else []
        actions = [_move_host_work(idle, launch)] + launch
    else:
        actions = _launch_fix(ctx, host_ms, "launch_bound")
    launcher = _launcher_part(ctx.m, unrecorded_ms)
    detail = _launcher_whole(unrecorded_ms, launcher, ctx.m.launcher_launches)
    loop = None if unseen or elsewhere else launch_bound.host_loop(ctx.m, host_ms)
    if loop is not None:  # the host runs the compiled programs' loops: the step is jitted already, the loop is the fix
        actions, what = ctx.fw.fix("launch_bound:host_loop"), " (XLA running loop iterations from the host)"
        how = "the loop run on the GPU, unrolled or shortened"
    elif not (unseen or elsewhere) and launch_bound.step_level(ctx.m):
        actions, what, how = (_launch_fix(ctx, host_ms, "launch_bound:step"), _step_dispatch_words(ctx),
                              "more GPU work per call")
        actions = actions + [a for a in launch_bound.sync_fixes(ctx, ctx.m) if a not in actions]
        detail["dispatch_calls_per_step"] = ctx.m.dispatch.calls_per_step  # read as those calls' dispatch
    if not fixes_left(ctx, actions):  # every launch fix in use (compiled, replayed as graphs): find the host's code
        actions = [*actions, *(ctx.record_host_fix() or [RECORD_HOST])]
        how = f"moved out of the {unit} or overlapped with the GPU's work"
    f = finding(
        ctx, "unexplained_idle", sev,
        f"The device executes only {pct(dev)} of {ctx.the_step()}; for {ms(host_ms)} of it "
        f"({pct(host_ms / ctx.step_ms)}) the GPU waits while the host runs its own code{what} that no other finding "
        f"accounts for: the {unit} is host-bound{in_ranges(ctx, _host_claims(host_ms, unrecorded_ms), 'this time')}{alone}"
        f"{_in_python_call(ctx, host_ms)}"
        f"{in_os_waits(ctx, host_ms)}{in_async_stalls(ctx, host_ms)}{_unrecorded_words(ctx.m, unrecorded_ms)}."
        f"{_sentence(launcher_words(ctx, launcher, ctx.m.launcher_launches))}"
        f"{launch_bound.host_loop_words(ctx, loop) if loop is not None else ''}{traced_python(ctx, host_ms)}"
        f"{profiler_words(ctx)}",
        title=f"Host-bound: the GPU waits for the host's own work inside the {unit}",
        metric=_device_share_metric(dev, sev, detail),
        saving=saving(ctx, host_ms, f"the host's own work moves off the GPU's critical path ({how})",
                      [("host", "host_own", host_ms)]),
        evidence=ranges_table(ctx) + os_waits_table(ctx),
        windows=step_windows(ctx, label="host work", draws=("host_compute", "other"), claimed_ms=host_ms),
        # the code the capture did not record is seen first where it is most of the time; the launcher's fix after it
        actions=_with_launcher_fix(ctx, actions, launcher),
    )
    f.guide_section = "§1 overview"
    return f


def _in_model_call(ctx: Ctx, host_ms: float) -> bool:
    """Most of the host-bound time lies inside the model's own recorded calls (``HostMetrics.host_work_in_model``,
    the framework's ``model_call`` spans), by the finding's share of the ledger's host work as
    :func:`_in_python_call` reads the place's."""
    whole = ctx.m.breakdown.host_compute
    if host_ms <= 0 or whole <= 0:
        return False
    return ctx.m.host_work_in_model * min(1.0, host_ms / whole) >= T("host_frame.share") * host_ms


def _launch_fix(ctx: Ctx, host_ms: float, key: str) -> list[Action]:
    """The host-bound finding's launch fix (``key``: the rule's or its step-level variant): the framework's
    ``launch_bound:model_call`` where its time lies inside the model's own calls (:func:`_in_model_call`) and the
    framework (a serving engine) writes one, else ``key``'s -- a framework whose launch fix is the model's already
    (compile, CUDA graphs) writes none and keeps it.

    Why: the wrong assumption was *a serving engine's host time is its scheduler's*.  vLLM's fix named "scheduling,
    input preparation, sampling, detokenising" and async scheduling while the same finding placed the time inside the
    model's forward (h37-wordsfit30: ``gpt_oss.py(221): forward``, 63.0 of 73.5 ms a step on a B200; the MI300X
    decode's compiled ``llama.py(374): forward``, its guard checks): Python inside the model's call is cut by
    replaying the model as graphs, not by overlapping the scheduler."""
    model = ctx.fw.extra("launch_bound:model_call") if _in_model_call(ctx, host_ms) else []
    return model or ctx.fw.fix(key)


def _in_python_call(ctx: Ctx, host_ms: float) -> str:
    """Where the host-bound time lies in the program's recorded Python (``HostMetrics.host_work_frame``): the deepest
    call holding most of the host's own work, in words; "" where Python was not traced or that call holds under half
    of the finding's time.

    Why: the GPU of vLLM's MI300X decode (h37-survey62) waited 26.6 ms of a 45.6 ms step for the host, and the finding
    said only "the host's own code" while the engine's fix named its scheduler and sampler; 25.8 ms of it lay inside
    the model's compiled call (``llama.py(374): forward``) before its first graph launch.  Each wait belongs to its
    cause: the place is measured, and said as the finding's share of the call's host work (as ``in_ranges`` says a
    range's), so it never exceeds the finding's own time."""
    fr = ctx.m.host_work_frame
    whole = ctx.m.breakdown.host_compute
    if fr is None or host_ms <= 0 or whole <= 0:
        return ""
    name, held = fr
    share = min(1.0, host_ms / whole)  # the finding claims this share of the ledger's host work (others the rest)
    part = held * share
    if part < T("host_frame.share") * host_ms:
        return ""
    shared = " (its share: other findings claim the rest of the host's work there)" if share < 0.999 else ""
    return (f"; {ms(part)} of this time lies inside the Python call `{name}`{shared}, the deepest recorded call "
            f"holding most of the host's own work: look there (its own code, or code it calls that records no call "
            f"of its own)")


def _launcher_part(m: HostMetrics, unrecorded_ms: float) -> float:
    """The part of the host-bound finding's unrecorded time (ms per step, the thread on the CPU where the capture
    traced its waits: :func:`on_cpu_unrecorded_ms`) a Python launcher spends right before its bare driver launches
    (``HostMetrics.unrecorded_before_launcher_ms``, its silences less the thread's traced OS waits), at most that
    whole.  Why: where the waits are traced the unrecorded-idle warning is silent and this finding names the time, so
    the launcher's part of it was named nowhere (h37-launcherhb; the Triton microbenchmark of survey h37-survey44 under
    Nsight with ``-t osrt``)."""
    return min(m.unrecorded_before_launcher_ms, unrecorded_ms) if unrecorded_ms > 0 else 0.0


def _launcher_whole(unrecorded_ms: float, launcher_ms: float, launches: float) -> dict[str, float]:
    """The host-bound finding's detail where it names a launcher's part (none without): that part and its launches
    (``launcher_detail``), with the unrecorded whole it is a part of (``unrecorded_ms``, as the unrecorded-idle
    warning's), so a reader -- and the ``launcher<=unrecorded`` law -- sees both."""
    detail = launcher_detail(launcher_ms, launches)
    return {"unrecorded_ms": round(unrecorded_ms, 3), **detail} if detail else {}


def _with_launcher_fix(ctx: Ctx, actions: list, launcher_ms: float) -> list:
    """``actions`` and, where a launcher's time is named (``launcher_ms`` > 0), the framework's fix for it
    (``step_gaps:launcher``) -- right after the fix that asks to record the host where the list holds it, as the
    gaps' check places it."""
    if launcher_ms <= 0:
        return actions
    return after_record_fix(actions, ctx.record_host_fix() or [RECORD_HOST], ctx.fit(ctx.fw.extra("step_gaps:launcher")))


def _step_dispatch_words(ctx: Ctx) -> str:
    """What the host-bound time is where the step is a few compiled calls whose dispatch costs more host time than the
    step's GPU work (:func:`launch_bound.step_level`), in words.

    Why: the host-bound finding's fix was the framework's launch fix ("jit the whole step as one function") while the
    launch check of the same report read the step as too small for its dispatch (wild ``jax_mi300x``: a loop of
    jitted GEMM calls; survey h37-survey40's one jitted conv on an A10G): the step is compiled already, so its host
    time is each call's dispatch, which only more GPU work per call (several steps per call, a larger batch)
    amortises.

    "Compiled already" is said only where the trace shows the framework's launch fix in use (``Framework.applied``:
    torch.compile's regions or Triton kernels, a tf.function's graph runs), in the framework's words; a JAX call is
    jitted by its own name ("jitted call").  A dispatch call is any top-level op in an eager PyTorch step, which the
    fixed clause told "the step is compiled already" (h37-review19).

    Where the step may be nothing but first calls (:func:`first_call_why`), the host's time in those calls is named
    without the word "dispatch": a first call's host time is also its one-time work (compiling, autotuning, loading
    each kernel on its first launch), which the capture cannot tell from a steady call's dispatch -- the note
    :func:`_one_early_call` appends says so, and "the dispatch of its 2 top-level op calls: 1.39 ms" beside it
    claimed the per-call cost it doubts (h37-words20: wild/compiled_a100_triton)."""
    d = ctx.m.dispatch
    used = list(dict.fromkeys(w for a in ctx.fw.fix("launch_bound") if (w := ctx.fw.applied(a, ctx.m.applied))))
    lead = "the dispatch of" if first_call_why(ctx.m) is None else "the host's time in"
    return (f" ({lead} its {n_of(d.calls_per_step, ctx.fw.label('dispatch_call'), mean=True)}"
            f"{ctx.mean_words(d.calls_per_step)}: {ms(d.host_ms_per_step)} on the host for "
            f"{ms(ctx.m.breakdown.device_compute)} of GPU compute"
            f"{'; already in use: ' + '; '.join(used) if used else ''})")


def _host_claims(host_ms: float, unrecorded_ms: float) -> dict[str, float]:
    """The host-bound finding's claim per ledger category (ms per step): the host's own work no other finding
    recovers (``host_compute``, :func:`unclaimed_host_ms`) and the unrecorded time the thread ran on the CPU
    (``other``, :func:`on_cpu_unrecorded_ms`)."""
    return {"host_compute": max(0.0, host_ms - unrecorded_ms), "other": unrecorded_ms}


def _unlaunched(ctx: Ctx, host_ms: float, unrecorded_ms: float = 0.0) -> tuple[list[tuple[str, float]], float]:
    """The program's ranges holding the host-bound time (:func:`_host_claims`, at least a tenth of ``host_ms`` each) that
    launch no GPU work in the steps (``HostMetrics.ranges_launching``), and their ms per step (at most ``host_ms``).

    Why: cold_a100_alexnet's host-bound 42.8 ms lies in its ``clear_cache`` range (41.9 ms: a cache flush on the host,
    no kernel launched), yet the fix was CUDA graphs for the forward pass -- which holds 0.8 ms of it (h37-review3)."""
    launching = set(ctx.m.ranges_launching)
    idle = [(n, v) for n, v in ranges_part(ctx, _host_claims(host_ms, unrecorded_ms))
            if v >= 0.1 * host_ms and n not in launching]
    return idle, min(host_ms, sum(v for _, v in idle))


def _move_host_work(idle: list[tuple[str, float]], launch: list[Action]) -> Action:
    """The fix for host work in ranges that launch nothing: out of the step or overlapped -- no launch fix reaches it;
    ``launch``: the launch fixes that follow it, for the rest."""
    names = ", ".join(f"`{n}` ({ms(v)})" for n, v in idle)
    one = len(idle) == 1
    rest = (" The launch fixes below fit only the rest, the host's time in ranges that launch the GPU's work."
            if launch else "")
    return action(f"Move the host's own work in {names} out of the timed step, or overlap it with the GPU's work (a "
                  f"thread of its own, or done on the GPU): {'that range launches' if one else 'those ranges launch'} no GPU "
                  f"work, so fewer launches, compiling or graphs do not shorten it.{rest}")


def _names(ranges: list[tuple[str, float]]) -> str:
    """The ranges' names, quoted, in words."""
    q = [f"`{n}`" for n, _ in ranges]
    return q[0] if len(q) == 1 else f"{', '.join(q[:-1])} and {q[-1]}"


def _unrecorded_words(m: HostMetrics, unrecorded_ms: float) -> str:
    """Of the host-bound time, the part no event of the capture records, in words ("" where none)."""
    if unrecorded_ms <= 0:
        return ""
    witness = ran_witness(m, "the thread that launches the GPU's work")
    return (f"; {ms(unrecorded_ms)} of it no runtime call, op or range of the capture covers, yet {witness}: the "
            f"host's own code, which the profiler did not record")


def healthy_finding(metrics: HostMetrics) -> Finding:
    """The explicit 'nothing to fix' finding, with the headline numbers."""
    ctx = Ctx(metrics)
    hl = metrics.headline
    dev, inp, lw, s16 = hl.device_step_share, hl.input_wait_share, hl.launch_wait_share, hl.sixteen_bit_time_share
    f = finding(
        ctx, "healthy", "ok",
        f"No check of the guide fired: the device executes {pct(dev)} of {ctx.the_step()} "
        f"(input wait {pct(inp) if metrics.input.measured else 'not measured'}, launch wait {pct(lw)}, 16-bit kernel time {pct(s16)}) " + ("over the one pass the capture was read as." if ctx.unit == "pass" else
                          f"over {ctx.steps} step{'s' if ctx.steps != 1 else ''}."),
        title="Healthy: no guide check fired",
        metric=Metric(id="device_step_share", label=DEVICE_SHARE_LABEL, value=None if dev is None else round(dev, 4),
                      unit="share", display=pct(dev), good_direction="higher", status="good",
                      meaning="share of the {step} the device executes (the guide's first overview number)"),
    )
    f.guide_section = "§1 overview"
    return f


def _order(f: Finding) -> int:
    return GUIDE_ORDER.index(f.rule) if f.rule in GUIDE_ORDER else len(GUIDE_ORDER)


#: Findings that come first when they warn: they say the capture is not what the other findings assume.
LEADS = ("cold_start",)


def leads(f: Finding) -> bool:
    """A finding listed before every saving: a warm-up capture (:data:`LEADS`), or a critical problem that saves no
    step time (an out-of-memory error, a capture without GPU work), or a capture without GPU activity at any
    severity (:func:`_no_gpu_records`) -- what the run or the capture is comes first.
    A window whose one-time costs are only a part of it (phase ``mixed``: the program's own work fills the rest) and
    of its steps (a warning, below ``job.warmup_share`` of the step) is no warm-up capture: its start-up finding
    ranks by its saving like any other, never above a larger one."""
    return (f.rule in LEADS and (f.severity == "critical" or (f.severity == "warning" and _phase(f) != "mixed"))) or \
        (f.severity == "critical" and (f.saving is None or not f.saving.ms_per_step)) or _no_gpu_records(f)


#: The metric of the finding that says the capture holds no GPU activity (``capture_quality``).
NO_GPU_METRIC = "active_gpus"


def _no_gpu_records(f: Finding) -> bool:
    """The capture holds no GPU activity: what the host still shows (a scalar read's wait, ``host_sync``) is read
    after it, since every other finding stands on a capture without the GPU's side."""
    return f.rule == "capture_quality" and f.metric is not None and f.metric.id == NO_GPU_METRIC


def _saves(f: Finding) -> bool:
    return bool(f.saving is not None and round(f.saving.ms_per_step, 2))


def capture_problem(f: Finding) -> bool:
    """A warning or critical finding about the capture itself that saves no step time (too few steps, one pass,
    GPU work the capture does not show, host time it did not record: :func:`unrecorded_time`)."""
    return (f.rule in _ABOUT_THE_CAPTURE or unrecorded_time(f)) and f.severity in ("critical", "warning") and \
        not _saves(f)


#: The id suffix of the finding that the GPU idles while the host does what the capture did not record.
UNRECORDED_SUFFIX = "#unrecorded"


def unrecorded_time(f: Finding) -> bool:
    """The finding that the GPU idles while the host does what the capture did not record (``unexplained_idle``'s
    secondary): ranked as a warning about the capture is.

    Why: its time is known (a share of the step), what a fix saves is not -- the time may be the host's own code or a
    wait -- and its one fix is the capture's: record the host and profile again.  Counted as saving 0 it ranked
    under every note with a saving: YiconRain/profiling's SGLang 27B prefill (h37-serve34) listed "Kernels too small"
    saving 1.26 ms above 34.1 ms of the 76.7 ms pass (44.5%) the capture did not record.  No saving is claimed for
    it; it is placed as the capture's warnings are, right after the last finding graded warning or critical that
    saves step time (the order the heading states holds: it saves as much as that one, as ranked)."""
    return f.rule == "unexplained_idle" and f.id.endswith(UNRECORDED_SUFFIX)


def _phase(f: Finding) -> str | None:
    """The window's phase a start-up finding read (``job.phase``), where its metric says."""
    return (f.metric.detail or {}).get("phase") if f.metric is not None else None


#: The metric of the finding that says the profiled program died (``capture_quality``): it comes before a warm-up.
FAILED_RUN_METRIC = "program_failed"
#: The metrics of the findings that say the run did not do its work (``capture_quality``): the program died, or the
#: runtime refused a launch and its kernel never ran.
FAILED_RUN_METRICS = (FAILED_RUN_METRIC, "refused_launches")


def _run_failed(f: Finding) -> bool:
    return f.severity == "critical" and f.metric is not None and f.metric.id in FAILED_RUN_METRICS


#: The metric of the finding that says the capture lost part of its GPU records (``capture_quality``,
#: ``job.kind.lost_launches``): what the capture is, so it comes right after a failed run -- every other finding reads
#: the recorded part only.
LOST_RECORDS_METRIC = "lost_launch_share"


def _lost_records(f: Finding) -> bool:
    return f.metric is not None and f.metric.id == LOST_RECORDS_METRIC


def rank(findings: Iterable[Finding]) -> list[Finding]:
    """Order findings as the report's heading says: "ranked by estimated saving".

    1. the findings that say what the capture or the run is (:func:`leads`), whatever they save -- a program that
       died first of all, then a capture that lost part of its GPU records, then a warm-up capture;
    2. then by estimated saving (ms per step, rounded to 0.01 ms) descending, whatever the severity -- an info
       finding that saves 9.7% is listed above a warning that saves 1.4% (issue #36) -- findings without a saving
       count as 0;
       a warning about the capture (too few steps, one pass, host time it did not record: :func:`unrecorded_time`) is listed right after the last critical or warning
       finding that saves step time, above the notes that save less: they rest on the steps it doubts -- so where
       no critical or warning finding saves step time it is the one problem the report has and leads the list
       (h37-review2: ``compiled_a100_triton`` listed a note saving 75% of its one pass -- "may be the first call's
       one-time cost" -- above "Too few steps in the capture", the verdict's top; h37-review16: ``d2d_v100`` listed
       "Too few steps" below a note saving 2.30 ms under three warnings saving 16.5 ms and more);
    3. ties in the guide's debugging order (input pipeline, one-GPU checks, mixed precision / XLA, several GPUs,
       capture quality), then severity (critical first), host, GPU, id -- so the order is deterministic; among the
       findings that save no step time, severity first (a warning about the capture above a note).
    """
    findings = list(findings)
    # the least saving of a critical or warning finding: a warning about the capture is listed right below it
    graded = [round(f.saving.ms_per_step, 2) for f in findings
              if f.severity in ("critical", "warning") and _saves(f)]
    capture_first = not graded
    below = min(graded) if graded else 0.0

    def key(f: Finding):
        s = f.saving.ms_per_step if f.saving else 0.0
        sev = SEVERITY_ORDER.get(f.severity, 9)
        placed = not capture_first and capture_problem(f) and not leads(f)
        if placed:
            s = below
        # a run that failed first of all (what the window holds is the part before the failure), then a warm-up
        lead = 0 if _run_failed(f) else 0.5 if _lost_records(f) else (
            (1 if f.rule in LEADS else 2) if leads(f) or (capture_first and capture_problem(f)) else 3)
        return (lead, -round(s, 2), 1 if placed else 0, 0 if round(s, 2) else sev, _order(f), sev,
                f.host or "", -1 if f.gpu is None else f.gpu, f.id)

    return sorted(findings, key=key)
