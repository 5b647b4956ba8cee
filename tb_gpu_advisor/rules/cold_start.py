"""Q&A: the capture holds one-time start-up costs -- "you profiled warm-up".

The Q&A's first rule of profiling is to measure steady-state steps after warm-up.  A capture of a process's first
calls is dominated by costs paid once: the first launch of each kernel loads its module (lazy loading), library
handles are created (cuBLAS, cuDNN; rocBLAS, MIOpen), the program is compiled.  The job stage finds them
(``job.phase``: launches of milliseconds with the GPU idle, start-up and compilation calls) and the breakdown books the
GPU's idle time inside them as ``startup``, so no rule reads them as launch overhead or host syncs.  This finding says
so first, with their share of the window, and how to capture the steady state instead.

Saving: the start-up time per step -- gone in the steady state, not by any change to the code.  Severity: critical
when it is at least ``job.warmup_share`` of the step, a warning from ``job.one_time_min_share`` -- at most a warning on
steps that are a guess, as every saving per step (``rules.rests_on_the_steps``).  One-time costs
outside every kept step: a warning where they fill ``job.warmup_share`` of the window, else (phase mixed) an info note
of what the window holds beyond the steps, with no saving.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.common.fmt import ms_apart
from tb_gpu_advisor.job.phase import STARTING
from tb_gpu_advisor.metrics.context import PS_PER_MS
from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules.base import Ctx, T, finding, ms, n_of, pct, rule, saving, share_metric, step_windows
from tb_gpu_advisor.steps.types import COUNTED_SOURCES

ID = "cold_start"


@rule(ID, "Q&A", "The capture is a cold start: one-time costs, not the steady state",
      thresholds=("job.one_time_min_share", "job.warmup_share", "job.one_time_launch_ms",
                  "job.one_time_launch_factor", "job.one_time_launch_share", "job.one_time_call_ms",
                  "job.compile_gap_ms", "capture.min_steps"), waits=("startup",))
def check(m: HostMetrics) -> list[Finding]:
    job = m.job
    if job is None or job.phase.phase not in STARTING:  # steady, or a tear-down's exit (``job.phase.window_phase``)
        return []
    ctx = Ctx(m)
    startup_ms = m.breakdown.startup
    p = job.phase
    dropped = _warmup_dropped(m)
    graded = ctx.graded(startup_ms, "job.one_time_min_share", "job.warmup_share")
    if graded is None:
        return _window_only(ctx, m, dropped)
    share, sev = graded
    no_step = ("The window holds one pass of the program, and no steady step is left" if owns_one_pass(m) else
               "No steady step is left")
    # the kept steps hold these costs (their idle is what this finding grades): a step left out held only part of them
    rest = (f" {n_of(len(dropped), 'step').capitalize()} holding part of them {'was' if len(dropped) == 1 else 'were'} "
            f"left out of the averages; the other {m.steps.count}, analysed below, hold the rest." if dropped else
            f" {no_step} to analyse apart from them: every "
            "number below describes the start-up, and the GPU's time inside these costs (idle, or copying while the host loads) is booked as start-up, "
            "not as launch overhead."
            if pass_is_start_up(m) or (p.phase == "warm-up" and share >= T("job.warmup_share")) else
            # the steps hold the rest: the program's own work, analysed below -- of the step, which this finding
            # grades, not of the window, whose set-up before the steps no step holds (h37-review12: streams_pinned_
            # copies' two transfer-bound steps, 8.6% of them start-up, read "No steady step is left"; ddp_overlap_
            # rtx3090's "the other 82.2% of the window ... analysed below" beside a pass of 16% of it)
            f" The other {pct(1 - share)} of the {ctx.unit if ctx.one_step else 'step'} is the program's own work, "
            "analysed below; the GPU's time inside these costs (idle, or copying while the host loads) is booked as start-up, not as launch overhead.")
    replans = planned_per_shape(m)
    cause = f" {ctx.fw.label('compile_gap_cause')}" if replans else ""
    assumed = (ctx.fw.label("compile_gap_saving") if replans else
               "the steady state pays none of the one-time costs (module loading, library start-up, compilation)")
    # "waits", not "sits idle": the start-up share holds the copies the GPU ran while the host was still inside
    # one-time calls (``copy_startup``, h37-memsetctx31: streams_pinned_copies' uploads under a module load)
    return [finding(
        ctx, ID, sev,
        f"The GPU waits {ctx.part_of_step(startup_ms)} ({pct(share)}) inside one-time costs: "
        f"{p.evidence}.{cause}{rest} Profile after warm-up to see the steady state.",
        metric=share_metric("startup_share", "GPU waiting in one-time start-up", share, "job.one_time_min_share",
                            severity=sev, detail={"startup_ms": startup_ms, "one_time_ms": p.total_ms,
                                                  "window_share": p.share, "slow_launches": p.slow_launches,
                                                  "phase": p.phase}),
        saving=saving(ctx, startup_ms, assumed, [("startup", "startup", startup_ms)]),
        windows=step_windows(ctx, key=lambda s: s.breakdown.startup, label="start-up"),
        actions=(ctx.fw.extra(f"{ID}:compile_gap") if replans else []) + ctx.steady_fix("capture_quality:unsteady"),
    )]


def planned_per_shape(m: HostMetrics) -> bool:
    """Most of the one-time costs are the framework planning a graph for input shapes it had not seen, with no op run
    (``OneTime.compile_gap_ms``: TorchScript's fallback functions).  Why it matters: that cost is per shape, not per
    process -- a model whose input sizes change every call pays it again in the steady run until the executor stops
    specialising -- so the finding names the cause and the fix that removes it (fewer shapes), not only "profile after
    warm-up" (``wild/torchscript_fallback_a100_gnn``: 822.6 ms of 822.6 ms)."""
    p = m.job.phase if m.job is not None else None
    return p is not None and p.total_ms > 0 and 2 * p.compile_gap_ms > p.total_ms


def _warmup_dropped(m: HostMetrics) -> list:
    """The steps left out of the averages because they held the warm-up."""
    return [d for d in m.steps.dropped if d.reason.startswith("warm-up")]


def holds_start_up(startup_ms: float | None, whole_ms: float | None, bar: str = "job.one_time_min_share") -> bool:
    """The part analysed holds one-time costs: the GPU idles in them (``startup_ms``) at least ``bar`` of ``whole_ms``
    -- ``job.one_time_min_share``, what :func:`check` grades, or ``job.warmup_share``, the window's phase bar applied
    to the part analysed (:func:`pass_reads_start_up`).  One reading, one home: the cold-start check asks it of a host's
    step (:func:`steps_hold_start_up`, :func:`pass_is_start_up`) and the report's start-up-only account of a host's
    ledger (``report.verdict.start_up_window``, which holds the report, not the metrics), where each wrote its own
    share and bar before (h37-review26 *Left* 8)."""
    return whole_ms is not None and whole_ms > 0 and (startup_ms or 0.0) / whole_ms >= T(bar)


def pass_reads_start_up(phase: str | None, startup_ms: float | None, whole_ms: float | None) -> bool:
    """One pass is the start-up: the window's phase reads warm-up, or the pass itself holds at least
    ``job.warmup_share`` of one-time costs (:func:`holds_start_up`) -- a first call in a window the program's imports
    dilute (:func:`pass_is_start_up`).  Asked of a host's metrics by the check and of a host's report by
    ``report.verdict.start_up_window``."""
    return phase == "warm-up" or holds_start_up(startup_ms, whole_ms, "job.warmup_share")


def steps_hold_start_up(m: HostMetrics) -> bool:
    """The kept steps hold the capture's one-time costs: the GPU idles in them at least ``job.one_time_min_share`` of
    the step (what :func:`check` grades).  Under it the costs lie outside the steps (:func:`_window_only`): dropped as
    warm-up, or run before a pass the program's own ranges bound (a benchmark's ``measure|forward`` after its warm-up
    forward) -- then the step is no first call, whatever share of the window the start-up fills."""
    return holds_start_up(m.breakdown.startup, Ctx(m).step_ms)


def pass_is_start_up(m: HostMetrics) -> bool:
    """The capture kept at most one step and it is the start-up: the window's phase reads warm-up, or the pass's own
    ledger holds at least ``job.warmup_share`` of one-time costs -- the phase's bar applied to the part analysed.  The
    window's phase alone missed a first call whose window the program's own set-up dilutes: Thunder's first call of a
    loss forward + backward (``wild/nvfuser_h200_first_call``: one pass of 3.19 s, 27% of it nvFuser's compilation and
    module loading, the rest Thunder's unrecorded first-call host work) reads "mixed" because 5.8 s of imports before
    its first kernel fill the 10.65 s window.  The report's account asks the same of its hosts
    (``report.verdict.start_up_window``)."""
    if m.steps.count > 1 or m.job is None:
        return False
    return pass_reads_start_up(m.job.phase.phase, m.breakdown.startup, Ctx(m).step_ms)


def first_call_why(m: HostMetrics) -> str | None:
    """Why the capture's one step may be nothing but first calls (see :func:`_one_early_call`), in a clause; None
    where a steady step is there to judge."""
    w = m.steps.windows
    warm = m.steps.count <= 1 and m.job is not None and m.job.phase.phase == "warm-up" and bool(m.kernels) and \
        steps_hold_start_up(m)  # a pass after the start-up (its ranges bound it) is no first call
    if warm:
        return f"the capture is one pass and {pct(m.job.phase.share, 0)} of its window is one-time costs (start-up only)"
    if m.steps.source not in COUNTED_SOURCES or m.steps.count != 1 or len(w) != 1 or w[0].step > 1 or not m.kernels:
        return None
    if any(k.count > 1 for k in m.kernels if not k.collective):
        return None
    return (f"the capture holds one step, step {w[0].step} (at most one iteration ran before it), and no kernel in "
            f"it runs twice")


def owns_one_pass(m: HostMetrics) -> bool:
    """The window is one pass of the program (no step found) and that pass is a cold start: phase warm-up, and the
    GPU's idle in one-time costs leaves less than ``job.warmup_share`` of the pass to the program's own work (the
    share at which one-time costs make a window a start-up, read from the other side).  Then this rule's finding says
    the pass holds no steady step, and ``capture_quality`` does not say "one pass, no step repeats" again; a pass
    mostly of the program's own work keeps both findings, which then say different things."""
    job, ctx = m.job, Ctx(m)
    if job is None or job.phase.phase != "warm-up" or m.steps.source != "whole_capture" or _warmup_dropped(m):
        return False
    share = ctx.share(m.breakdown.startup)
    return share is not None and share >= 1 - T("job.warmup_share")


def _window_only(ctx: Ctx, m: HostMetrics, dropped: list) -> list[Finding]:
    """The one-time costs lie outside the kept steps -- their steps were left out as warm-up, or they ran before the
    first step (a process's start-up ahead of its one forward pass): the capture is still mostly start-up when they
    fill ``job.warmup_share`` of its window -- said first, with no step time to save."""
    p = m.job.phase
    if p.phase == "mixed":
        return _outside_note(ctx, m, dropped)
    if p.phase != "warm-up":
        return []
    # the steps left are judged as the too-few-steps check judges them: "may be too few" of 38 steady steps contradicts
    # it (survey h37-survey29: PARAM's linear model, a second of context creation then 38 host-bound iterations)
    enough = m.steps.count >= T("capture.min_steps")
    verdict = (f"enough steady steps (at least {T('capture.min_steps'):g}) to trust them" if enough else
               "which may be too few to be the steady state")
    # a step left out as warm-up holds the costs that lie inside its own window, not all of them: the stock rule drops
    # a first step whatever it holds, and the costs often run before it (h37-review13: nvllm_gb10_lost_tail's 631.8 ms
    # and cloverleaf_a100_cuda's 234.3 ms cudaMalloc, before their dropped first steps of 13.9 and 32.1 ms, read "The
    # 1 step holding them was left out")
    held = _held_ms(m, dropped)
    left = f"the {n_of(len(dropped), 'step')} left out as warm-up"
    inside = m.one_time_in_steps_ms
    if ms(inside) != ms(0.0):
        where = _inside_words(ctx, m, inside, held, left, verdict)
    elif dropped and ms(held) == ms(p.total_ms):
        where = (f"The {n_of(len(dropped), 'step')} holding them {'was' if len(dropped) == 1 else 'were'} left out; "
                 f"the averages below rest on the other {m.steps.count}, {verdict}.")
    elif dropped and held > 0:
        where = f"{ms(held)} of them lie in {left}; the rest ran outside the {_kept(ctx)} analysed, {verdict}."
    elif dropped:
        where = (f"They ran outside every step, {left} too; the averages below rest on the {_kept(ctx)} analysed, "
                 f"{verdict}.")
    else:
        where = f"They ran {'outside' if ctx.one_pass else 'before or between'} the {_kept(ctx)} analysed, {verdict}."
    return [finding(
        ctx, ID, "warning",
        f"{pct(p.share)} of the capture window is one-time costs: {p.evidence}. {where} Profile after warm-up.",
        metric=share_metric("one_time_window_share", "Capture window in one-time costs", p.share,
                            "job.warmup_share", severity="warning",
                            detail={"one_time_ms": p.total_ms, "slow_launches": p.slow_launches,
                                    "dropped_steps": [d.step for d in dropped], "dropped_one_time_ms": held,
                                    "in_steps_one_time_ms": inside}),
        actions=ctx.steady_fix("capture_quality:unsteady"),
    )]


def _inside_words(ctx: Ctx, m: HostMetrics, inside: float, held: float, left: str, verdict: str) -> str:
    """Where the one-time costs lie where some of them (``inside`` ms) ran inside the kept steps: that part, the GPU's
    wait in it (the ledger's start-up, under ``job.one_time_min_share`` of the step, which is why the steps are not
    graded a cold start), the part in the steps left out as warm-up (``held``) and the rest, before or between them.

    Why: a one-pass program whose kernels run in one burst holds its library start-up and its first uploads inside
    its one pass (ntua-el20062/gemm_spmm_a100 ``gemm_tiled_20000``: cuBLAS's start-up and the kernel fetch inside the
    1.57 s pass, 3.85 s of pinned allocations before it) -- "They ran outside the pass analysed" said none did, and
    the reader looked outside the pass for costs the pass holds.  Beneath the rest of them the GPU ran the program's
    own work (the uploads the pass needs, a kernel), which the steps' numbers count as such."""
    p, kept = m.job.phase, _kept(ctx)
    them = "it" if ctx.one_step else "them"
    rest = p.total_ms - inside - held
    lead = "They ran" if ms(rest) == ms(0.0) and not held else f"{ms(inside)} of them ran"
    parts = [f"{lead} {_inside_clause(ctx, m)}"]
    if held > 0:
        parts.append(f"{ms(held)} lie in {left}")
    if ms(rest) != ms(0.0):
        before = ms(m.one_time_before_steps_ms) == ms(rest)
        parts.append(f"the other {ms(rest)} ran {'before' if before else 'outside'} {them}" if ctx.one_step else
                     f"the other {ms(rest)} ran {'before' if before else 'before or between'} {them}")
    return f"{'; '.join(parts)}. The numbers below rest on the {kept} analysed, {verdict}."


def _inside_clause(ctx: Ctx, m: HostMetrics) -> str:
    """"inside the pass analysed, the GPU waiting in them 19.3 ms of the 1.57 s pass (1.2%) -- ...": the GPU's wait
    in the one-time costs the kept steps hold (the ledger's start-up), the one part of them a step's time pays."""
    share = ctx.share(m.breakdown.startup)
    n = 1 if ctx.one_step else max(ctx.steps, 1)
    if ms(m.breakdown.startup * n) == ms(0.0):  # the program's own uploads alone: the GPU worked beneath all of them
        return f"inside the {_kept(ctx)} analysed, the GPU running the program's own work beneath them all"
    wait = (ms(m.breakdown.startup) if share is None or ctx.step_ms is None else
            f"{ctx.part_of_step(m.breakdown.startup)} ({pct(share)})" if ctx.one_step else
            f"{_in_all(m.breakdown.startup * n, ctx.step_ms * n)} ({pct(share)})")
    return (f"inside the {_kept(ctx)} analysed, the GPU waiting in them {wait} -- beneath the rest it ran the "
            "program's own work")


def _where_words(inside: float, total: float) -> str:
    """Where the window's one-time costs lie against the kept steps, as the note's title says it: "outside", "inside",
    or "inside and outside" where ``inside`` ms of their ``total`` ran inside the steps and the rest did not.

    Why: the note's words say the part inside apart (h37-coldwords33), and a title saying "outside" of all of them
    contradicted its own text (h37-review33: ``wild/extrap_parallel_kernels_gtx1060``'s "The window holds one-time
    costs outside the pass" above "13.5 ms of them ran inside the pass analysed")."""
    if ms(inside) == ms(0.0):
        return "outside"
    return "inside" if ms(total - inside) == ms(0.0) else "inside and outside"


def _in_all(wait_ms: float, steps_ms: float) -> str:
    """"29.0 ms of the steps' 5.27 s in all": the GPU's wait in the one-time costs inside several kept steps, a total
    beside the costs' own total before it -- one unit, said once.  Why: "130.0 ms of them ran inside the 6 steps
    analysed, the GPU waiting in them 4.84 ms of each 877.5 ms step" put a total beside a mean per step, and the
    reader compared 4.84 with 130.0 (wild/mordred_rtx6000_hashjoin; h37-coldshare34).  One-time costs do not repeat,
    so a total is their unit; the share is the same either way."""
    part, whole = ms_apart(wait_ms, steps_ms)
    return f"{part} of the steps' {whole} in all"


def _held_ms(m: HostMetrics, dropped: list) -> float:
    """The one-time costs' time (ms) inside the windows of the ``dropped`` steps: the part of them those steps hold."""
    start, end = m.job.phase.spans()
    held = 0
    for d in dropped:
        if d.window is not None and len(start):
            a, b = d.window
            held += int(np.clip(np.minimum(end, b) - np.maximum(start, a), 0, None).sum())
    return held / PS_PER_MS


def _kept(ctx: Ctx) -> str:
    """The steps the averages rest on, as the one-time costs' words name them: "3 steps", "1 step"; "pass" (the job's
    word, ``Ctx.step_noun``) where the one step is the pass an unmarked capture was read as: "outside the 1 step
    analysed ... No step counts them" named a step the capture does not mark (h37-words23)."""
    return ctx.step_noun if ctx.one_pass else n_of(ctx.steps, "step")


def _outside_note(ctx: Ctx, m: HostMetrics, dropped: list) -> list[Finding]:
    """Some one-time costs (``job.one_time_min_share`` to ``job.warmup_share`` of the window) that lie outside every
    kept step: an info note saying what the window holds beyond the steps, with no saving.

    Why: a benchmark whose timed passes are its steps (a frame around them, warm-up passes before it) captured from
    process start holds its start-up in the window but in no step, so no step time pays it and nothing is to save;
    silence would leave the reader to wonder where the window's first seconds went, and counting them in a step would
    make the steady state look cold."""
    p = m.job.phase
    if not m.steps.windows or p.share <= 0:
        return []
    window_ms = p.total_ms / p.share
    span_ms = sum(w.end_ms - w.start_ms for w in m.steps.windows)
    noun = ctx.step_noun
    left = (f"the {n_of(len(dropped), 'step')} left out as warm-up" if dropped else
            f"the work before or after {'it' if m.steps.count == 1 else 'them'} (warm-up passes, set-up)")
    inside = m.one_time_in_steps_ms
    # some of them inside the steps (h37-coldwords33): that part said apart, and the rest is what lies outside
    part = (f"{pct(p.share)} of the capture window is one-time costs outside the {_kept(ctx)} analysed "
            f"({p.evidence}). " if ms(inside) == ms(0.0) else
            f"{pct(p.share)} of the capture window is one-time costs ({p.evidence}). {ms(inside)} of them ran "
            f"{_inside_clause(ctx, m)}. ")
    their = "it" if m.steps.count == 1 else "them"
    these = "these costs" if ms(inside) == ms(0.0) else f"the other {ms(p.total_ms - inside)} of these costs"
    return [finding(
        ctx, ID, "info",
        f"{part}"
        f"{'The steps span' if m.steps.count != 1 else f'The {noun} spans'} {ms(span_ms)} of the {ms(window_ms)} "
        f"window; the rest holds {these} and {left}. "
        f"{f'The {noun} does not count' if ctx.one_pass else 'No step counts'} "
        f"{'them' if ms(inside) == ms(0.0) else f'those, and the wait inside {their} is too little to grade'}, "
        "so nothing is to save.",
        title=f"The window holds one-time costs {_where_words(inside, p.total_ms)} {ctx.the_pass_or('its steps')}",
        metric=share_metric("one_time_window_share", "Capture window in one-time costs", p.share,
                            "job.one_time_min_share", severity="info",
                            detail={"one_time_ms": p.total_ms, "window_ms": window_ms, "steps_ms": span_ms,
                                    "dropped_steps": [d.step for d in dropped], "in_steps_one_time_ms": inside}),
        # a note with its one fix, as every finding has: record the steps alone, and the window holds no start-up
        actions=ctx.steady_fix("capture_quality:unsteady"),
    )]
