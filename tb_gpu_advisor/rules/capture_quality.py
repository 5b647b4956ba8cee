"""Q&A: is the capture trustworthy? Short steady-state window (~10 s), enough steps.

Fires: no GPU activity at all (warning; the other checks are skipped) -- named for what the window holds where it
holds no kernel (start-up only, NVTX only, no CUDA call, CUDA tracing off, ``failed``: the program died before its
GPU work, its error quoted from the standard error the capture kept, or ``wsl2``: kernels launched under WSL2, where
they were not traced (``wsl2_driver_ok`` where the recorded Windows driver is new enough for that, so the fix is
the profiler's release, not the driver), ``wsl2_untraced``: no CUDA call traced under WSL2 though the program loaded CUDA or ran to its
output, ``unclosed``: the session stopped before the program's CUDA trace was finalized -- Nsight wrote no CUPTI count
and says not all CUDA events might have been collected --, so the window keeps only the CUDA records written before
(its fix: the CUDA trace written every 100 ms, the program ended before the session), ``frontend``: a serving engine's front-end process, no GPU work by design -- its fix names the engine's own
trace of the same session, ``capture_quality:frontend`` among the engine's fixes: ``job.kind.WINDOWS``); a program that died after its GPU work began (critical, first: ``Kind.died``, its
error quoted); launches the CUDA runtime refused, their kernels never run (critical, ranked with the failures:
``Kind.refused_launches``, the first error and its usual cause from ``devices.nvidia.LAUNCH_ERRORS``); accepted launches
whose kernels ran in the window without a record, at least ``capture.lost_launch_share`` of them, wherever they fall --
a lost tail, or stretches mid-window after which the records resume (warning: ``Kind.lost_launches``, what share and
from when to when; the steps holding them are not counted as steps), with the cause the capture's own settings or log
show (``Kind.lost_cause``: an Nsight session stopped on its ``--duration`` without a flush period, a window ended at
``cudaProfilerStop`` without its flush, Kineto's CUPTI buffer limit) and that cause's fix (``Kind.lost_fix``), and the
profiler's own count of records it dropped (``Kind.lost_counted``: Nsight's diagnostics, Kineto's log kept in the
trace, ``XSpace.warnings``) -- that count alone, where no launch is shown without its kernel, an info --, with how to
record the right window in the capture's own profiler (Nsight: ``formats.nsys.WINDOW_FIXES``; else the framework's
``capture_quality:window``) -- GPU work with no step found (warning: the window is one pass of the program) / fewer
than ``capture.min_steps`` kept steps (warning; neither where the window holds no GPU work), a window opening while the GPU still runs work launched before it for at least ``capture.unseen_share`` of the
step (info: how long, whether the host waited for it in syncs or blocking copies, and the step's own work;
``before_capture``), the GPU idle at handoffs between streams for at least ``capture.unseen_share`` of the step (warning:
the ledger's ``stream_handoff``, with the two sides the capture shows and what ordered them; a fix only where the
capture names the cause -- a collective, a copy, a recorded event wait --, else what to look at), capture longer
than ``capture.max_seconds`` (info), step times
varying more than ``capture.max_step_cv`` (info; not where the window holds no GPU work: it times no step), GPU work recorded as starting more than ``capture.clock_skew_us``
before the call that launched it (info: the capture's GPU and host clocks disagree by at least that lead, so every
host/GPU interval is uncertain by it: ``CaptureQuality.clock_skew``; a warning where the lead is longer than the step:
then the findings that measure the GPU's idle against the host's work are not given, and the note names them --
``unmeasured_across_clocks``), a file that is a printing of a fuller capture and did not keep records some checks
read (info: ``CaptureQuality.not_kept`` -- TensorFlow 2.2's trace viewer JSON: the GPU's name, launch
configurations, allocator records; a PyTorch trace whose GPU work names no launch: which call launched it -- with how
to record the fuller capture; the verdict then never reads "healthy").  A memory snapshot gets none of these (no steps): only, where
its allocator history kept just its last ``max_entries`` events while its annotations show whole iterations before
them (``Memory.history_cut``), a warning that its peak is the kept window's, with the setting that keeps them; and
where it holds no history of a GPU at all (its state at the dump alone: PyTorch 1.13's ``_snapshot()``, 2.0 without a
trace, ``enabled="state"``), an info that its peak and what a forward kept are unknown, with the call that records
them in the release whose layout the file has (``Memory.snapshot_layout``; the verdict then never reads "healthy");
and where its history carries no stack at all (``Memory.stackless``: ``_record_memory_history(context=None)``), an
info that what allocated each block -- and so the job's kind, its iterations and what a forward kept -- is not in the
file, with the call that records the stacks (the verdict then says what held the peak was not judged).
No saving, but for the submission latency's finding: the part of its idle the host waits through in syncs.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices, formats
from tb_gpu_advisor.common.fmt import and_list, gb, plural, times
from tb_gpu_advisor.frameworks.base import action
from tb_gpu_advisor.job.kind import Kind
from tb_gpu_advisor.metrics.types import ClockSkew, Handoff, HostMetrics, rows_of_gpu
from tb_gpu_advisor.model.schema import Action, Finding, Saving
from tb_gpu_advisor.rules import _memory as mem
from tb_gpu_advisor.rules import cold_start
from tb_gpu_advisor.rules.savings import IDLE_GROUPS, idle_claims
from tb_gpu_advisor.steps.types import StepDetection
from tb_gpu_advisor.steps.types import UNMARKED_SOURCES
from tb_gpu_advisor.rules.base import (Ctx, T, finding, gpu_steps_to_judge, ms, pct, rule, saving, share_metric,
                                      step_windows, value_metric)

ID = "capture_quality"

#: The memory checks whose findings speak of a snapshot GPU's peak (each says where its capacity is unknown): where
#: none of them fired on a GPU, :func:`_capacity_unrecorded` says what its peak holds and that it was judged against
#: no capacity.
MEMORY_RULES = ("oom_snapshot", "activation_memory", "memory_fragmentation", "memory_near_capacity", "memory_leak",
                "memory_imbalance", "batch_size_headroom", "unfused_attention")


@rule(ID, "Q&A", "The capture is too short or not steady",
      thresholds=("capture.min_steps", "capture.max_seconds", "capture.max_step_cv",
                  "capture.graph_kernel_share", "capture.unseen_share", "capture.clock_skew_us",
                  "capture.lost_launch_share"), reads=MEMORY_RULES)
def check(m: HostMetrics, earlier: dict[str, list[Finding]] | None = None) -> list[Finding]:
    # what the capture holds and lacks, each its own finding (no docstring: the rule's docs are the module's)
    if m.memory.snapshot:  # a memory snapshot is no capture of steps: the memory checks speak for it
        ctx = Ctx(m)
        return _suffixed(_snapshot_teardown(ctx, m) + _history_cut(ctx, m) + _no_history(ctx, m) + _no_stacks(ctx, m)
                         + _capacity_unrecorded(ctx, m, earlier))
    ctx = Ctx(m)
    out = []
    gpu_work = any(g.active for g in m.gpus)
    # every launch refused (job.kind's decision): the refusal is why no kernel ran, and _run_ended says it
    refused_all = m.job is not None and m.job.kind.every_launch_refused
    if m.capture.collectives_only:  # a filter of a fuller trace to its collectives: nothing of the steps to judge
        return [_collectives_only(ctx, m)]
    # the loop's end is said as a window without the job's steps even where its GPU drained an earlier queue
    if not gpu_steps_to_judge(m) and not refused_all:
        no_gpu, elsewhere = _no_gpu(ctx, m)
        out.append(no_gpu)
        if elsewhere:  # another accelerator's work, lost records or a window without GPU work: no GPU steps to judge
            return out
    out += _run_ended(ctx, m)
    if gpu_work:  # no GPU work: no step to count, the finding above says so
        out += _step_count(ctx, m)
    out += _unseen_work(ctx, m)
    out += _window_notes(ctx, m, gpu_work)
    out += _not_kept(ctx, m)
    return _suffixed(out)


#: The metric of the note on a file that did not keep records some checks read: the verdict reads it (never "healthy"
#: for what was not judged).
NOT_KEPT_METRIC = "records_not_kept"


def _not_kept(ctx: Ctx, m: HostMetrics) -> list[Finding]:
    """A file that is a printing of a fuller capture (``CaptureQuality.printed_from``: TensorFlow's trace viewer JSON of
    its XPlane) and did not keep what some checks read (``CaptureQuality.not_kept``): an info naming what is missing
    and what that leaves unanswered, with how to record the fuller capture (the framework's
    ``capture_quality:not_kept``; a profiler's own way first where its format has one, ``Format.window_fixes
    ["not_kept"]``: nvprof's printed trace is recorded whole by nvprof itself, whatever the framework -- a TensorFlow
    job printed by nvprof was told to profile again on TensorFlow 2.3, h37-wild57n).  Why: the report of a TF 2.2
    session read from its JSON assumed the unnamed GPU's
    fp16 speed-ups and judged no grid and no memory, and said nothing of why (h37-wild55x, Left 1)."""
    c = m.capture
    if not c.printed_from or not c.not_kept:
        return []
    lost = c.not_kept
    return [_note(ctx, f"This report is read from {c.printed_from}, which does not keep {'; '.join(lost)}. The "
                       f"findings describe what the file holds; what it lacks is not judged, not found healthy.",
                  "The file read is a printing of the capture: some of its records were not kept",
                  (NOT_KEPT_METRIC, "Kinds of records the file did not keep", len(lost), "count", str(len(lost)),
                   None), ctx.window_fixes(c.capture_format, "not_kept", False) or ctx.fw.fix(f"{ID}:not_kept"))]


def _collectives_only(ctx: Ctx, m: HostMetrics) -> Finding:
    """A capture that kept the collectives alone (``CaptureQuality.collectives_only``), said as such: what it holds,
    what was filtered out, and what is left unjudged -- the steps its GPU bursts were read as are its collectives, and
    the GPUs' skew at them is the ranks' work before them, which the file does not hold.  Why: a TraceLens NCCL-only
    filter of a 4-rank DDP read as 7 steps of 16.1 ms (they are ~45 ms) with a "host thread contention" launch-skew
    warning (h37-huntk66 *Left* 3)."""
    n = m.capture.collectives_only
    if m.job is not None and m.job.kind.collectives_backend:  # a CPU backend's collectives: no GPU in it at all
        return _cpu_collectives_only(ctx, m, n, m.job.kind)
    gpus = [g for g in m.gpus if g.active]
    kinds = sorted({c.type for c in m.comm.by_type if c.type != "collective"})
    what = f" ({', '.join(kinds)})" if kinds else ""
    f = _note(ctx, f"This capture holds {n:,} collective kernels{what} on {len(gpus)} GPUs and nothing else: no compute "
                   "kernel, no copy, nothing of the host (no op, launch, runtime call or step mark) -- a filter of a "
                   "fuller trace to its communication. What the job does between its collectives, its steps and why "
                   "one GPU enters a collective later than another are not in it: no check of the steps, the GPUs' "
                   "balance or their skew is made from it; the full trace it was filtered from is the one to read.",
              "The capture kept only the collectives: everything else was filtered out",
              ("collectives_only", "Collective kernels, nothing else kept", n, "count", f"{n:,}", None),
              ctx.fw.fix(f"{ID}:collectives_only"))
    f.severity = "warning"
    f.metric.status = "warning"
    return f


def _cpu_collectives_only(ctx: Ctx, m: HostMetrics, n: int, kind: Kind) -> Finding:
    """A window that holds a CPU backend's collectives and nothing else (``Kind.collectives_backend``: Gloo, MPI), said
    as such: what it holds (the job's reading's words), that the backend ran the job's communication on the CPU, and
    that none of the job's own work was recorded -- with the fixes for both cases, a GPU job on the wrong backend or
    device and a capture that missed the job's ops (the framework's ``capture_quality:collectives_only/cpu``).  A
    warning, as every window without GPU work is (the exit code follows, h37-gloo68).  Why: Princeton COS 568's 4-rank
    Gloo BERT traces read "No GPU activity in the capture ... Was the GPU visible?" with ``ProfilerActivity.<DEVICE>``
    as the fix -- a GPU job's lost device records, not a job whose collectives ran on the CPU and whose profiler
    recorded nothing else."""
    length = f"This {ms(m.capture.length_ms)} window" if m.capture.length_ms else "This window"
    lib = kind.collectives_backend
    how = ctx.fw.label("collectives_on_cpu", backend=lib)  # the framework's words for setting up its collectives
    f = _note(ctx, f"{length} holds no GPU work, only {kind.evidence}. Where the job is meant to run on GPUs, its "
                   f"model and tensors stayed on the CPU, or {how}. With none of the job's ops or steps recorded, "
                   "no check of the guide was made from it: nothing here is a verdict on the job.",
              f"The capture holds only {lib}'s collectives, on the CPU: no op recorded, no GPU work",
              ("collectives_only", f"{lib} collectives, nothing else recorded", n, "count", f"{n:,}", None),
              ctx.fw.fix(f"{ID}:collectives_only/cpu", backend=lib))
    f.severity = "warning"
    f.metric.status = "warning"
    return f


def _suffixed(out: list[Finding]) -> list[Finding]:
    """``out`` with unique ids: the secondary findings' suffixed by their metric."""
    for i, f in enumerate(out[1:], 1):
        f.id = f"{f.id}#{f.metric.id if f.metric else i}"
    return out


def _run_ended(ctx: Ctx, m: HostMetrics) -> list[Finding]:
    """What the run itself says went wrong: the program died, or the runtime refused its launches."""
    job, out = m.job, []
    if job is not None and job.kind.died:
        out.append(_died(ctx, m, job.kind))
    if job is not None and job.kind.refused_launches:
        out.append(_refused(ctx, job.kind.refused_launches, ran=any(g.active for g in m.gpus)))
    if job is not None and (job.kind.lost_launches or job.kind.lost_counted):
        out.append(_lost_launches(ctx, job.kind))
    return out


def _lost_launches(ctx: Ctx, kind) -> Finding:  # noqa: ANN001 - job.kind.Kind
    """Kernels that ran in the window without a record (``Kind.lost_launches``), or records the profiler itself
    counted as dropped (``Kind.lost_counted``): a warning where launches lost their kernels, the window's recorded part
    read as what it is -- the steps of the lost stretches are not counted (``steps.detect``) --, an info where only
    the profiler's count says so; the cause the capture's settings or log show (``Kind.lost_cause``, the format's
    words), else the causes that lose records; and the fix for that cause in the capture's own profiler (its format's
    ``Kind.lost_fix`` fix, else its ``lost_records`` one, else the framework's)."""
    counted = f"{kind.lost_counted[:1].upper()}{kind.lost_counted[1:]}." if kind.lost_counted else ""
    why = (f"The records were lost because {kind.lost_cause}" if kind.lost_cause else
           "The profiler stopped writing the GPU's records before the window ended (its buffers flushed only at the "
           "profiler's stop, a duration that ended the session first, or its buffer limit reached)")
    actions = ((ctx.window_fixes(kind.capture_format, kind.lost_fix) if kind.lost_fix else [])
               or ctx.window_fixes(kind.capture_format, "lost_records") or ctx.fw.fix(f"{ID}:lost_records"))
    if kind.lost_launches and kind.unread:  # the file's damage hid records: theirs may be among them (h37-damage70)
        return _lost_among_unread(ctx, kind)
    if not kind.lost_launches:  # the profiler's word alone: no launch is shown without its kernel
        small = ("The launches and kernel records show no stretch without its kernels, so the loss is small, of "
                 "records other than kernels (copies, memsets, API calls), or where the capture pairs no launch with "
                 "its kernel")
        return finding(
            ctx, ID, "info",
            f"{counted} {why if kind.lost_cause else small}; the findings describe what was recorded.",
            title="The profiler reports GPU records it dropped", actions=actions,
            metric=value_metric("dropped_records", "Records the profiler dropped", kind.lost_counted_n, "count",
                                f"{kind.lost_counted_n:,}", "capture.lost_launch_share", severity="info",
                                good_direction="lower"))
    return finding(
        ctx, ID, "warning",
        f"{kind.lost_launches}. {counted + ' ' if counted else ''}{why}. The GPU work of the lost stretch is "
        f"missing: the steps in it are not counted, and every other finding describes the recorded part only.",
        title="The capture lost part of its GPU records: launches without their kernels",
        actions=actions,
        metric=value_metric("lost_launch_share", "Launches without a kernel record", kind.lost_share, "share",
                            pct(kind.lost_share), "capture.lost_launch_share", severity="warning",
                            good_direction="lower"))


def _lost_among_unread(ctx: Ctx, kind) -> Finding:  # noqa: ANN001 - job.kind.Kind
    """Launches without their kernels in a file whose reader skipped records (``Kind.unread``): their kernels'
    records may be among the skipped ones, so the profiler is not shown to have lost them -- never the CUPTI buffer's
    words and fix (h37-damage70: the two-writer file, read past its damage, 159 stretches skipped; its launches
    whose kernels lay in them read "the profiler stopped writing the GPU's records ... a smaller `active`").  The
    damage's own fix first, as a window without GPU record is told it (:func:`_no_gpu_record_read`)."""
    own = ctx.fw.extra(f"{ID}:damaged_records:{kind.damaged_what}") if kind.damaged_what else []
    return finding(
        ctx, ID, "warning",
        f"{kind.lost_launches}. The reader skipped records of this damaged file it could not read (what they are, "
        f"the report's damaged-file notice says once): those kernels' records may be among them -- the profiler is "
        f"not shown to have lost them. The GPU work of those stretches is missing: the steps in them are not counted, "
        f"and every other finding describes the part read only.",
        title="Launches without their kernels: their records may be in the damaged file's skipped bytes",
        actions=own or ctx.fw.extra(f"{ID}:unread_records") or [READ_SKIPPED_RECORDS],
        metric=value_metric("lost_launch_share", "Launches without a kernel record", kind.lost_share, "share",
                            pct(kind.lost_share), "capture.lost_launch_share", severity="warning",
                            good_direction="lower"))


def _step_count(ctx: Ctx, m: HostMetrics) -> list[Finding]:
    """Too few steps to average: a whole capture read as one pass (unless the cold start's finding says the pass is
    all start-up), or fewer kept steps than averages need -- for a job of forward passes, an info, not a warning."""
    s, job = m.steps, m.job
    if s.source == "whole_capture":
        return [] if cold_start.owns_one_pass(m) else [_one_pass(ctx, m)]
    if s.count >= T("capture.min_steps") or s.sweep:  # a sweep's runs are configurations: more of them averages
        return []  # nothing steadier (its own note, :func:`_sweep`, says to compare them)
    passes = job is not None and job.kind.kind in ("inference", "serving") and job.kind.confidence != "low"
    why = s.note or ("no step markers found" if s.source == "whole_capture" else "")
    unit = {"serving": "engine step", "inference": "forward pass"}.get(job.kind.kind if passes else "", "step")
    guess = (f" The steps themselves are a guess ({s.confidence} confidence): every per-step number "
             "rests on it." if s.confidence == "low" else "")
    if s.source in UNMARKED_SOURCES:  # the one pass it was read as may hold several of the job's steps: no count of them
        why = why or "no step is marked, so the capture is read as one pass"
        summary = (f"{why[:1].upper()}{why[1:]}: every per-step number is the pass's total, and how many "
                   f"{_plural(unit)} it holds is not known; at least {T('capture.min_steps'):g} steady-state "
                   f"{_plural(unit)}, each marked, make averages trustworthy.{guess}")
        title = f"No {unit} is marked: the capture is read as one pass"
    else:
        summary = (f"Only {_n(s.count, unit)} {'was' if s.count == 1 else 'were'} kept ({s.found} found"
                   f"{'; ' + why if why else ''}); at least {T('capture.min_steps'):g} steady-state "
                   f"{_plural(unit)} make averages trustworthy.{guess}")
        title = f"Too few {_plural(unit)} in the capture"
    return [finding(
        ctx, ID, "info" if passes and s.confidence != "low" else "warning", summary, title=title,
        metric=value_metric("steps_kept", "Steps kept", s.count, "count", str(s.count), "capture.min_steps",
                            severity="warning", good_direction="higher"),
        actions=ctx.steady_fix(f"{ID}:few_steps"),
    )]


def _unseen_work(ctx: Ctx, m: HostMetrics) -> list[Finding]:
    """GPU work the capture does not show: the host waiting while every GPU idles (work the window does not hold, or
    the GPU holding work it was given), and work queued before the capture began."""
    out = []
    # the idle before the capture's first GPU work with that work launched may be work from before the capture: the
    # ledger keeps it off the host's time, but no warning rests on it (vllm_mi300x_decode's graph, queued at 1.5 ms)
    unseen = max(0.0, m.breakdown.unseen - m.idle_queued_first)
    # the GPU idle at handoffs between streams is the ledger's own category (``stream_handoff``): a dependency the
    # capture holds, said in a finding of its own from the same share of the step as the work it does not hold
    handoff_apart = bool(ctx.step_ms) and m.breakdown.stream_handoff / ctx.step_ms >= T("capture.unseen_share")
    if unseen and ctx.step_ms and unseen / ctx.step_ms >= T("capture.unseen_share"):
        # the held idle is booked in ``unseen``, but averaged per GPU while ``unseen`` is the host's step mean
        # (v100_bert's two GPUs: 2.23 ms held of 2.20 ms unseen): a part is printed at most its whole
        held_ms = min(m.idle_held, unseen)
        held = held_ms >= 0.5 * unseen
        # its windows, as its time, leave out the idle before the capture's first work (the note's below): the first
        # step's ``unseen`` holds both (h37-randjobs4: "682 us of each 4.95 ms step" over 3 steps beside three windows
        # of 1.02 ms, the first of them the before-capture note's)
        first = min((w.step for w in m.steps.windows), default=None)
        before_all = min(m.idle_queued_first, m.breakdown.unseen) * m.steps.count
        whose, held_gpu = _held_gpu(ctx, m) if held else ("", None)
        out.append(finding(
            ctx, ID, "warning",
            _held_words(ctx, unseen, held_ms, m.breakdown.stream_handoff if not handoff_apart else 0.0,
                        m.handoff.streams) + whose if held else
            f"The host waits {ctx.part_of_step(unseen)} ({pct(unseen / ctx.step_ms)}) in syncs or "
            f"blocking copies while the trace shows every GPU idle: it waits for GPU work this capture does not hold "
            f"(a window cut out of a longer trace, or another process on the GPU). That time is booked apart, not as "
            f"launch or host overhead; profile the whole step to see what the GPU ran.",
            title="The GPU holds work it was given, idle" if held else
            "The host waits for GPU work the capture does not show",
            metric=share_metric("unseen_share", "GPU held work it was given" if held else
                                "Host waiting for GPU work not in the capture", unseen / ctx.step_ms,
                                "capture.unseen_share", severity="warning"),
            windows=step_windows(ctx, key=lambda st: np.maximum(0.0, st.breakdown.unseen - np.where(st.step == first, before_all, 0.0)),
                                 label="GPU holding launched work" if held else "waiting for unseen GPU work"),
            actions=[HELD_FIX] if held else ctx.fw.fix(f"{ID}:unseen"),
            gpu=held_gpu,
        ))
    if handoff_apart:
        out.append(_handoff_finding(ctx, m))
    sub = m.submission
    if sub.latency and ctx.step_ms and sub.idle_ms / ctx.step_ms >= T("capture.unseen_share"):
        out.append(_submission_finding(ctx, m))
    before = min(m.idle_queued_first, m.breakdown.unseen)
    if before and ctx.step_ms and before / ctx.step_ms >= T("capture.unseen_share"):
        out.append(_before_capture(ctx, before, min(m.idle_queued_first_blocked, before)))
    return out


def _mean_pulled(ctx: Ctx, m: HostMetrics) -> str:
    """Where a few long steps lift the report's step (the mean) well above the median step, in words ending "; ", ""
    otherwise: the median, and the longest steps that set the mean with their range.

    Why: the header of wild/cold_loop_a4000_swin read "10 steps, step 21.3 ms" and this note "vary by 164%" while
    the median iteration is 3.7 ms and two host pauses of 82.5 and 99.1 ms hold most of the mean (h37-wordsfit30): a
    reader of the step time is told which steps make it.  A mean above ``capture.mean_over_median`` times the median
    is one that a minority of long steps sets."""
    times = sorted(r.step_ms for r in rows_of_gpu(m.steps_detail, None) if r.step_ms > 0)
    if len(times) < 3:
        return ""
    mean, median = float(np.mean(times)), float(np.median(times))
    if median <= 0 or mean < T("capture.mean_over_median") * median:
        return ""
    long = _setting_the_mean(times, T("capture.mean_over_median") * median)
    span = ms(long[0]) if ms(long[0]) == ms(long[-1]) else f"{ms(long[0])} to {ms(long[-1])}"
    which = f"the longest {ctx.unit} ({span}) lifts" if len(long) == 1 else \
        "the {} longest {} ({}) lift".format(*_n(len(long), ctx.unit).split(" ", 1), span)
    return f"the median {ctx.unit} is {ms(median)}, and {which} it to {ms(mean)}, the {ctx.unit} time the report gives; "


def _setting_the_mean(times: list[float], bound: float) -> list[float]:
    """The fewest longest of ``times`` (sorted) without which the mean falls under ``bound``, shortest first: the steps
    that set the mean.  Why not "the steps above the mean": a step just above it (printed as the mean) lifts nothing
    (llamacpp_rocprof_r9700's "15.3 ms to 335.4 ms lift it to 15.3 ms"), and one over twice the median may be a slow
    steady step (cold_loop_a4000_swin's 8.3 ms beside its two 82-99 ms pauses)."""
    total, n = float(sum(times)), len(times)
    for k in range(1, n):
        total -= times[n - k]
        if total / (n - k) < bound:
            return times[n - k:]
    return times[1:]


def _window_notes(ctx: Ctx, m: HostMetrics, gpu_work: bool) -> list[Finding]:
    """How far the window's numbers can be trusted: a long capture (profiling overhead), unsteady step times, kernels
    inside CUDA graphs (no op names), clocks that disagree."""
    c, s, out = m.capture, m.steps, []
    seconds = (c.length_ms or 0) / 1000.0
    if seconds > T("capture.max_seconds"):
        out.append(_note(ctx, f"The capture spans {seconds:.0f} s; profiling overhead distorts long captures — about "
                              f"ten seconds of steady-state steps is enough.", "The capture is long",
                         ("capture_seconds", "Capture length", seconds, "s", f"{seconds:.0f} s", "capture.max_seconds"),
                         ctx.window_fixes(c.capture_format, "long") or ctx.fw.fix(f"{ID}:long")))
    # no GPU work: the report times no step (its header says so), so none is judged unsteady (a CPU-only fit's
    # start-up window beside its iterations, wild/lightning_cpu_fit)
    if gpu_work and s.sweep and s.count >= 2:
        out.append(_sweep(ctx, s.sweep, c.step_time_cv))
    elif gpu_work and c.step_time_cv is not None and c.step_time_cv > T("capture.max_step_cv") and s.count >= 2:
        out.append(_note(ctx, f"Step times vary by {pct(c.step_time_cv, 0)} (stddev / mean over {_n(s.count, 'step')}): "
                              f"{_mean_pulled(ctx, m)}the window is not steady state, so per-step averages hide "
                              f"outliers.",
                         "Step times are not steady",
                         ("step_time_cv", "Step time variation", c.step_time_cv, "ratio", f"{pct(c.step_time_cv, 0)}",
                          "capture.max_step_cv"), ctx.steady_fix(f"{ID}:unsteady")))
    graphs = c.graph_kernel_share
    how = ctx.fw.extra(f"{ID}:command_buffers")
    if graphs >= T("capture.graph_kernel_share") and how:
        out.append(_note(ctx, f"{pct(graphs, 0)} of kernel time ran inside CUDA graphs (XLA command buffers): those kernels "
                              f"are shown under their graph, without the op that launched them, so the op tables cannot "
                              f"point at the op to change.", "Kernels run inside CUDA graphs: per-op names are missing",
                         ("graph_kernel_share", "Kernel time in CUDA graphs", graphs, "share", f"{pct(graphs, 0)}",
                          "capture.graph_kernel_share"), how))
    skew = c.clock_skew
    if gpu_work and skew.max_lead_us > T("capture.clock_skew_us"):
        out.append(_clock_skew(ctx, skew))
    return out


def _sweep(ctx: Ctx, sweep: str, cv: float | None) -> Finding:
    """The steps are runs of one kernel at block sizes of their own over the same work (``StepDetection.sweep``): said
    as the configurations they are, each size's time, in place of "step times vary ... not steady state".

    Why: a benchmark of launch configurations repeats one launch sequence, and the period reads its runs as steps;
    their times differ because the configurations do, so "not steady state" (and a profile after warm-up) answers
    nothing -- kalfazed/tensorrt_starter's block-size sweep read "Step times vary by 62%" (h37-huntnsys64)."""
    vary = f" (they vary by {pct(cv, 0)})" if cv is not None else ""
    return _note(ctx, f"The {ctx.unit}s are a sweep of launch configurations, not one loop's steady turns: "
                      f"{sweep}. Each {ctx.unit}'s time is its configuration's{vary}, so a per-"
                      f"{ctx.unit} average mixes them: compare the configurations, then profile the one chosen in a "
                      "loop of its own.",
                 "The steps are a sweep of launch configurations",
                 ("step_time_cv", "Step time variation", cv or 0.0, "ratio", pct(cv or 0.0, 0), "capture.max_step_cv"),
                 ctx.fw.extra(f"{ID}:sweep"))


#: A file read to its end whose reader skipped records it could not read (``Kind.unread``): the GPU's records may be
#: among them -- the same for every framework and profiler (a framework may add its own:
#: ``capture_quality:unread_records``).
READ_SKIPPED_RECORDS = action(
    "Look at the records the reader skipped (the damaged-file notice counts them and says why: a time that is no "
    "number, a start no time of this capture): a profiler writes none such, so the file was edited, converted or "
    "written by another tool. Analyse the profiler's own file, or profile again.")

#: A damaged file's GPU records may lie past the damage (``Kind.damaged``): the whole file first, then a new capture --
#: the same for every framework and profiler (a framework may add its own: ``capture_quality:damaged_records``).
READ_WHOLE_FILE = action(
    "Read the whole file: copy it again from where the profiler wrote it and compare the sizes (an upload, a notebook "
    "download or a size-limited copy keeps only the start). If the original is cut off too, the writer was stopped "
    "mid-file: let the profiler finish writing before the process ends, and profile again.",
    "ls -l PROFILE   # here, and where the profiler wrote it: the same size?")


def _one_pass(ctx: Ctx, m: HostMetrics) -> Finding:
    """GPU work with no step marker and nothing of it repeating: the window is one pass of the program.  Said once,
    as what the window is, instead of "too few steps (0 found)": a one-shot program has no steps to count, and a loop
    caught for one pass needs a longer window, not more of the same one."""
    s = m.steps
    # a guess only where the steps stage read the window as one iteration from its GPU bursts: a window analysed whole
    # because nothing repeats is no guess, its per-step numbers the pass's totals (h37-lowconf: "the one pass is itself
    # a guess" beside hip_vector_add_mi300a's critical copies, 1.07 s of the 1.10 s pass wherever a step is cut)
    guess = (f" The one pass is itself a guess ({s.confidence} confidence): every per-step number rests on it."
             if s.confidence == "low" and s.iteration_guess else "")
    # a training step is run in a loop by what it is (its optimizer's state carries to the next): "if it loops" is
    # no question there (h37-left43: nvfuser_h200_first_call and vit_a4000_avg_batch, training at medium and high
    # confidence, were told "a program that runs once is read whole")
    n = f"{T('capture.min_steps'):g}"
    loops = (f"A training job runs its step in a loop: record at least {n} of its iterations."
             if m.job is not None and m.job.work() == "training" else
             f"A program that runs once is read whole; if it loops, record at least {n} of its iterations.")
    return finding(
        ctx, ID, "warning",
        f"The window holds one pass of the program ({ms(ctx.step_ms) if ctx.step_ms else 'its whole span'}): no step "
        f"marker, and {_what_repeats(s)}, so there is no step to average and every per-step number is "
        f"the pass's total. {loops}{guess}",
        title="The capture holds one pass of the program: no step repeats",
        metric=value_metric("steps_kept", "Steps kept", s.count, "count", str(s.count), "capture.min_steps",
                            severity="warning", good_direction="higher"),
        actions=ctx.steady_fix(f"{ID}:few_steps"),
    )


def _what_repeats(s: StepDetection) -> str:
    """Why no step of the pass repeats, in words: none of its GPU work does -- or, where the steps stage refused the
    GPU's bursts as iterations for running unlike work on a GPU idle nearly all their span
    (``StepDetection.unlike_bursts``), that: a fill kernel run twice is some work repeating, and the window is then a
    first call (a ``torch.compile``d model's compile on the host between its bursts), not "nothing repeats"."""
    if not s.unlike_bursts:
        return "none of its GPU work repeats"
    return (f"its {s.unlike_bursts} GPU bursts are no iterations: the GPU is idle nearly all their span and most of "
            f"their kernel time runs in kernels only one burst runs, as in a first call (start-up or a compile on "
            f"the host between the bursts), not the steady state a loop's iterations repeat")


#: Clocks that disagree are the recording's, the same for every framework and profiler.
SAME_CLOCKS = action(
    "Record again with the host and GPU on one clock: keep the profiled window short (the two clocks drift apart "
    "the longer a capture runs) and use a current driver and profiler (CUPTI); check the new capture starts every "
    "kernel after its launch call.")


def _clock_skew(ctx: Ctx, skew: ClockSkew) -> Finding:
    """Recorded GPU work that starts before the call that launched it: physically impossible, so the capture's GPU and
    host timestamps disagree by at least the largest lead.  An info note: the work itself is recorded, but every
    interval measured between host and GPU (launch wait, idle gaps, the step's host-bound share, the viewer's flow
    arrows) is uncertain by that much, which the note weighs against the step."""
    lead = skew.max_lead_us
    said = ms(lead / 1000.0)  # 142 us, 20.0 ms, 10.00 s: a skew of seconds is no count of microseconds
    share = lead / 1000.0 / ctx.step_ms if ctx.step_ms else 0.0
    of_step = "" if not ctx.step_ms else (f" ({pct(share)} of {ctx.the_step()})" if share < 1 else
                                          f" ({times(share)} {ctx.the_step()})")
    return _note(
        ctx, f"{skew.early} of {_n(skew.linked, 'GPU event')} with a recorded launch call start before that call, by "
                 f"up to {said}: no GPU work starts before it is launched, so the capture's GPU and host clocks "
                 f"disagree by at least {said}{of_step}. Every time measured between the host and the GPU -- "
                 f"launch wait, idle gaps, what the GPU waited for -- is uncertain by that much; times on one side "
                 f"alone (kernel durations, host op times) are not.",
        "The capture's GPU and host clocks disagree: GPU work starts before its launch",
        ("clock_skew_us", "GPU work ahead of its launch call", lead, "us", said, "capture.clock_skew_us"),
        [SAME_CLOCKS])


def measured_across_clocks(f: Finding) -> bool:
    """Whether a finding measures the GPU's idle time against the host's work: its saving recovers GPU idle the host
    causes (``savings.IDLE_GROUPS``) or waits in for work the capture lacks (``unseen``), or it speaks of idle time
    nothing explains -- each an interval between a host event and a GPU event, on two clocks."""
    if f.rule == "unexplained_idle" or (f.rule == ID and f.metric is not None and f.metric.id in ("unseen_share", "handoff_share")):
        return True
    return f.saving is not None and any(p.get("group") in IDLE_GROUPS or p.get("group") == "unseen"
                                        for p in f.saving.recovers)


def unmeasured_across_clocks(m: HostMetrics, findings: list[Finding]) -> None:
    """Where the capture's GPU and host clocks disagree by more than a step, drop the findings that measure the GPU's
    idle against the host's work (:func:`measured_across_clocks`), and say so in the clock note, raised to a warning.

    Why: a GPU event placed a whole step away from its launch lies in another step's window, or in none; the idle a
    step shows, and what the host did meanwhile, are then an artefact of the skew (kernels 10 s before their launches
    read as 73% input-bound), not a measure.  Under a step the note's uncertainty stands beside the findings."""
    ctx = Ctx(m)
    lead_ms = m.capture.clock_skew.max_lead_us / 1000.0
    note = next((f for f in findings if f.rule == ID and f.metric is not None and f.metric.id == "clock_skew_us"), None)
    if note is None or not ctx.step_ms or lead_ms < ctx.step_ms:
        return
    gone = [f for f in findings if f is not note and measured_across_clocks(f)]
    for f in gone:
        findings.remove(f)
    note.severity = "warning"
    if note.metric is not None:
        note.metric.status = "warning"
    titles = sorted({f"\"{f.title}\"" for f in gone})
    said = (f" {and_list(titles)} {'is' if len(titles) == 1 else 'are'} not given: {'it measures' if len(titles) == 1 else 'they measure'} "
            f"the GPU's idle against the host's work across that skew." if titles else "")
    note.summary += (f" The disagreement is longer than the step: a GPU event sits a step or more from its launch, so "
                     f"what the GPU waited for in a step cannot be measured (launch wait, input wait, host syncs, host "
                     f"work).{said}")


def _plural(unit: str) -> str:
    return unit + ("es" if unit.endswith("ss") else "s")


def _n(k: int, unit: str) -> str:
    return f"{k} {unit}" if k == 1 else f"{k} {_plural(unit)}"


def _note(ctx, summary: str, title: str, metric: tuple, actions: list):
    """An info finding about the capture: ``metric`` = (id, label, value, unit, display, threshold)."""
    return finding(ctx, ID, "info", summary, title=title, metric=value_metric(*metric, severity="info"), actions=actions)


def _other_accelerator_fix(m: HostMetrics) -> list[Action]:
    """Where to read work that ran on another accelerator (a TPU, an MTIA): the viewers that open this capture's own
    file, which draw every device's timeline, by what its format says of them."""
    try:
        fmt = formats.get(m.capture.capture_format) if m.capture.capture_format else None
    except ValueError:
        fmt = None
    viewers = [v for v, ok in (("TensorBoard's Profile tab", fmt is not None and fmt.stock_tool_opens),
                               ("Perfetto (ui.perfetto.dev)", fmt is not None and fmt.perfetto_opens)) if ok]
    where = f"this file opens in {' and '.join(viewers)}, which draw{'' if len(viewers) > 1 else 's'} every device's work" \
        if viewers else \
        "open it in the profiler its vendor ships"
    return [action(f"Read the accelerator's work with its own profiler tools: {where}.")]


def _untraced_backend(kind) -> tuple[str, list[Action], str]:  # noqa: ANN001 - job.kind.Kind
    """Title, fixes and summary of a job on a GPU backend whose work the capture's profiler does not trace (Apple's
    MPS: ``devices.apple``): the backend's own profiler, never the lost-records words (a CUPTI buffer's case) or
    CUDA's fixes."""
    summary = (f"The job ran on a GPU its profiler does not trace: {kind.evidence}. The guide's GPU checks were "
               "skipped, and nothing here is a verdict on the GPU's work; the backend's own profiler records it.")
    vendor = devices.vendor_of_backend(kind.untraced_backend)
    if vendor is None:  # a backend no vendor module claims: named as the framework names it, with no vendor's fix
        return (f"The GPU's work is not in this capture: the `{kind.untraced_backend}` backend is not traced", [],
                summary)
    return (f"The GPU's work is not in this capture: the {vendor.BACKEND_NAME} is not traced",
            [vendor.trace_gpu_action()], summary)


def _no_gpu(ctx: Ctx, m: HostMetrics) -> tuple[Finding, bool]:
    """The finding of a capture with no GPU activity, by why, and whether the GPU work happened elsewhere: on an
    accelerator no stage reads, or in kernels whose records were lost -- else no GPU work at all (the CPU's, when no
    runtime call was made)."""
    copied = sum(1 for g in m.gpus if g.shares and not g.active)  # GPUs that only copied: no kernel ran anywhere
    kind = m.job.kind if m.job is not None else None
    if kind is not None and kind.unread_devices:
        title, actions = "The work ran on an accelerator the Advisor does not analyse", _other_accelerator_fix(m)
        summary = (f"This capture's device work ran on {and_list(kind.unread_devices)}, not on a GPU: the Advisor "
                   f"analyses NVIDIA and AMD GPUs, so the guide's GPU checks were skipped and nothing here is a verdict "
                   f"on that work.")
    elif kind is not None and kind.untraced_backend:
        title, actions, summary = _untraced_backend(kind)
    elif kind is not None and kind.window:
        said = f"{kind.window}:queued" if kind.queued else kind.window
        title, summary = _WINDOW_TITLES[kind.window], _window_summary(ctx, m, said, kind.queued or kind.evidence)
        actions = ((ctx.window_fixes(kind.capture_format, kind.window_fix, False, dict(kind.fix_words))
                    if kind.window_fix else [])
                   or _window_fixes(ctx, kind.window, kind.capture_format, kind.loop_steps))
    elif kind is not None and kind.lost_gpu and kind.died:  # the program failed, and its GPU records with it
        title, actions = ("The program failed, and the GPU's records were lost with it",
                          _window_fixes(ctx, "died", kind.capture_format))
        summary = (f"The GPU was used ({kind.lost_gpu}), but the capture holds no record of its work: the program "
                   f"failed -- \"{kind.died}\" -- and the profiler could not collect the GPU's records from it, so the "
                   f"guide's GPU checks were skipped and nothing here is a verdict on the job. Fix the failure, then "
                   f"profile again.")
        return _run_failed(ctx, summary, title, actions), True
    elif kind is not None and kind.damaged:  # the file, not the capture: read what was cut off
        title, actions, summary = _no_gpu_record_read(
            ctx, kind, "damaged_records", READ_WHOLE_FILE,
            "No GPU record in the part of the damaged file that was read",
            "part of the file that could be read holds no record of GPU work: the file is damaged before them (what "
            "the damage is, the report's damaged-file notice says once). What the file holds past its damage was not "
            "read, so the GPU's records may well be there")
    elif kind is not None and kind.unread:  # the file read to its end, records skipped: they may be the GPU's
        title, actions, summary = _no_gpu_record_read(
            ctx, kind, "unread_records", READ_SKIPPED_RECORDS, "No GPU record among the records that could be read",
            "records of the file that could be read hold no record of GPU work, and the reader skipped records it "
            "could not read (what they are, the report's damaged-file notice says once): the GPU's records may well "
            "be among them")
    elif kind is not None and kind.lost_gpu:
        # the capture's own profiler's way where its format gives one; a side never asked for was not lost
        title = (f"The capture recorded no {kind.unrecorded} activity: the GPU's work is not in it"
                 if kind.unrecorded else "The capture lost its GPU records")
        fmt = kind.capture_format or m.capture.capture_format
        actions = ((ctx.window_fixes(fmt, kind.lost_fix, False) if kind.lost_fix else [])
                   or ctx.window_fixes(fmt, "no_gpu_records") or ctx.fw.fix(f"{ID}:lost_records"))
        if kind.unrecorded:  # then the job's own capture, its activities the GPU's too: its loop, not a generic one
            actions = [*actions, *ctx.fw.fix(ID)]
        why = (f"its GPU side was not recorded, because {kind.lost_cause}. The guide's GPU checks were skipped; the "
               f"fix below records the GPU" if kind.lost_cause else
               "the GPU's side of the profile was lost or not recorded, so the guide's GPU checks were skipped. "
               "Profile again with GPU activity recorded, and let the GPU finish its work before the profiler stops")
        summary = f"The GPU was used ({kind.lost_gpu}), but the capture holds no record of its work: {why}."
    else:
        cpu = kind.cpu_only if kind is not None else ""
        title, actions = "No GPU activity in the capture", ctx.fw.fix(f"{ID}:no_gpu")
        if copied:  # the copies reached the GPU: it was visible, the model's ops ran elsewhere
            title = "No GPU compute in the capture: the GPUs only copied"
            copy_ms = sum(s.ms_per_step for s in m.memcpy)
            summary = (f"No GPU kernel or collective in this capture: its {plural(copied, 'GPU')} only copied data "
                       f"({ms(copy_ms)} of copies {ctx.a_step} and GPU){f'; {cpu}: the work ran on the CPU' if cpu else ''}"
                       f": the guide's GPU checks were skipped. The copies reached the GPU, so "
                       f"{ctx.fw.label('gpu_user')} saw it; did the profiled window include the GPU work (training "
                       f"steps, forward passes, engine steps)?"
                       + (" If the job should use the GPU, move the model, not only its inputs, there." if cpu else ""))
        elif cpu and kind.gpu_seen:  # the file answers "was the GPU visible?": it was, and the work never reached it
            lib = kind.cpu_collectives  # its collectives on a CPU backend: the process group is the fix's too
            actions = ctx.fw.fix(f"{ID}:gpu_unused/cpu_collectives" if lib else f"{ID}:gpu_unused", backend=lib)
            how = f" -- and {ctx.fw.label('collectives_on_cpu', backend=lib)}" if lib else ""
            summary = (f"No GPU kernel or copy in this capture ({m.capture.num_events:,} events; {cpu}: the work ran on "
                       f"the CPU): the guide's GPU checks were skipped. {ctx.fw.label('gpu_user')} saw the GPU -- the "
                       f"capture lists {kind.gpu_seen} -- but the work never reached it: if the job should use the "
                       f"GPU, move the model and its inputs there{how}.")
        else:
            # the GPUs the file lists, in every format's words ("0 GPU planes" was XPlane's word in an Nsight report)
            listed = f"{plural(len(m.gpus), 'GPU')} listed" if m.gpus else "no GPU listed"
            summary = (f"No GPU kernel or copy in this capture ({listed}, {m.capture.num_events:,} events"
                       f"{f'; {cpu}: the work ran on the CPU' if cpu else ''}): the guide's GPU "
                       f"checks were skipped. Was the GPU visible to {ctx.fw.label('gpu_user')}, and did the profiled "
                       f"window include the GPU work (training steps, forward passes, engine steps)?"
                       + (" If the job should use the GPU, move the model and its inputs there." if cpu else ""))
    # the work ran elsewhere, its records were lost, or the window holds none of it: no GPU steps to judge
    elsewhere = kind is not None and bool(kind.unread_devices or kind.untraced_backend or kind.lost_gpu or kind.window)
    # a GPU that drained an earlier queue was active: what the window lacks is the job's steps, counted as such
    metric = (("job_steps", "Steps of the job in the window") if kind is not None and kind.queued else
              ("active_gpus", "GPUs that ran kernels" if copied else "GPUs with activity"))
    return finding(ctx, ID, "warning", summary, title=title, actions=actions,
                   metric=value_metric(*metric, 0, "count", "0", severity="warning", good_direction="higher")), elsewhere

def _no_gpu_record_read(ctx: Ctx, kind, fix: str, fallback, title: str, where: str) -> tuple[str, list, str]:
    """(title, fixes, summary) of a window with no GPU record where the file itself hid them (cut before them, or
    records skipped that may be theirs): one sentence shape for both kinds of damage, so neither claims the profiler
    missed the GPU's records -- the file's damage is said once, in the damaged-file notice."""
    used = f"The GPU was used ({kind.lost_gpu}), but the" if kind.lost_gpu else "The"
    summary = (f"{used} {where} -- the profiler is not shown to have missed them. The guide's GPU checks were "
               f"skipped: nothing here is a verdict on the job.")
    # the damage's own fix first (several writers in one file: each its own file, not "copy it again": h37-hunt69)
    own = ctx.fw.extra(f"{ID}:{fix}:{kind.damaged_what}") if kind.damaged_what else []
    return title, own or ctx.fw.extra(f"{ID}:{fix}") or [fallback], summary



def _died(ctx: Ctx, m: HostMetrics, kind) -> Finding:  # noqa: ANN001 - job.kind.Kind
    """The program died after its GPU work began: critical (the run failed), first, with its own last words -- what
    the window holds is the part before the failure, which every other finding describes."""
    return _run_failed(
        ctx,
        f"The program failed: its standard error, kept in the capture, ends in \"{kind.died}\". This "
        f"{ms(m.capture.length_ms or 0)} window holds what ran before the failure, not the job's steady state: the other findings "
        f"describe that part only. Fix the error, then profile again.",
        "The program stopped with an error after its GPU work began", _window_fixes(ctx, "died", kind.capture_format))


def _refused(ctx: Ctx, refused: str, ran: bool = True) -> Finding:
    """Launches the CUDA runtime refused: their kernels never ran, so the program's results miss them and any time it
    measured around them timed nothing -- critical (the run did not do its work), whatever the rest of it costs.
    Where no kernel ran at all (``ran`` False), no GPU check had work to judge: said so, not "the kernels that ran"."""
    rest = ("The other findings describe the kernels that ran." if ran else
            "No kernel ran in the window, so the guide's GPU checks had nothing to judge: fix the error, then "
            "profile again.")
    return _run_failed(
        ctx,
        f"{refused}. A refused launch runs no kernel and leaves no GPU record, and the program goes on unless it checks "
        f"the code: its results lack that kernel's work, and a time it measured around the launch timed nothing. "
        f"{rest}",
        "A kernel launch failed: its kernel never ran", [action(*devices.nvidia.LAUNCH_ERROR_FIX, "text")],
        metric=("refused_launches", "Launches refused"))


def _run_failed(ctx: Ctx, summary: str, title: str, actions: list,
                metric: tuple[str, str] = ("program_failed", "Program failed")) -> Finding:
    """A run that did not do its work (it died, or a launch was refused): critical whatever its time costs, with a
    yes/no count as its metric -- one shape for every such finding, so the report ranks them alike."""
    return finding(ctx, ID, "critical", summary, title=title, actions=actions,
                   metric=value_metric(metric[0], metric[1], 1, "count", "yes", severity="critical",
                                       good_direction="lower"))


#: A window without GPU work, by what it holds (``job.kind.WINDOWS``).
_WINDOW_TITLES = {"startup": "The capture window ended during start-up: no GPU work launched yet",
                  "input_only": "The capture window holds only the input pipeline: batches fetched, no model run",
                  "loop_ended": "The capture window opened after the loop's last batch: none of the job's steps in it",
                  "no_cuda_call": "The capture window holds no CUDA call: the program had not reached its GPU work",
                  "nvtx_only": "The capture window holds only NVTX ranges: no CUDA call, no GPU work",
                  "tracing_off": "CUDA tracing was off: the capture holds no GPU work",
                  "counters": "The capture holds the kernels' hardware counters, not their timeline",
                  "failed": "The program stopped with an error before its GPU work",
                  "wsl2": "Recorded under WSL2: the GPU's kernels were not traced there",
                  "wsl2_driver_ok": "Recorded under WSL2: the GPU's kernels were not traced there",
                  "wsl2_untraced": "Recorded under WSL2: the program's CUDA work was not traced there",
                  "unclosed": "The profiler stopped before it wrote the program's CUDA records: its GPU work is not "
                              "in the capture",
                  "frontend": "A serving engine's front-end process: its GPU work runs in another process",
                  "input_on_cpu": "The capture window holds only the input pipeline, on the CPU: batches fetched, no "
                                  "model run",
                  "copy_only": "The capture window holds copies between host and GPU, and no kernel",
                  "teardown": "The capture window opened after the loop: it holds the program's tear-down",
                  "profiler_only": "The capture window holds only the profiler's own work: none of the program's",
                  "os_calls_only": "The capture holds only OS runtime calls: no CUDA call, no GPU work",
                  "ops_unrecorded": "The capture holds the compiled graphs' runs and none of their ops: where the "
                                    "work ran was not recorded",
                  "kernels_unrecorded": "The capture holds the runs of programs compiled for the GPU and none of "
                                        "their kernels: the GPU's side was not recorded",
                  "programs_no_kernel": "The host ran programs compiled for the GPU, and they launched no kernel"}


#: What a window without GPU work holds, by its kind (``Kind.window``), and why the checks did not run: ``{length}``
#: the window's length, ``{held}`` the job's words for what it holds; a kind not here is a capture of the wrong window
#: (:data:`_WRONG_WINDOW`).  One table, as :data:`_WINDOW_TITLES`: each kind's sentence differs, its frame does not.
_WINDOW_SUMMARIES = {
    "tracing_off": ("{length} holds no GPU work: {held}. The GPU's side was not recorded, so the guide's GPU checks did "
                    "not run: nothing here is a verdict on the job. Record again with CUDA tracing on."),
    "counters": ("{length} holds {held}. A kernel replayed for its counters takes no time in the step, so the guide's "
                 "time checks did not run: nothing here is a verdict on the job. Profile the steps again without the "
                 "counters to time them."),
    "failed": ("{length} holds no GPU work: {held}. The window was not the problem: the program failed, so the guide's "
               "GPU checks did not run and nothing here is a verdict on the job. Fix that error, then profile again."),
    "wsl2": ("{length} holds the GPU's work as the host launched it, not as the GPU ran it: {held}. The file is not "
             "damaged: the platform did not record the kernels, so the guide's GPU checks did not run and nothing here "
             "is a verdict on the job. Profile on native Linux, or update the Windows driver and the profiler."),
    "wsl2_driver_ok": ("{length} holds the GPU's work as the host launched it, not as the GPU ran it: {held}. The file "
                       "is not damaged: the platform did not record the kernels, so the guide's GPU checks did not run "
                       "and nothing here is a verdict on the job. Profile on native Linux, or install the Nsight "
                       "Systems release that supports this driver."),
    "wsl2_untraced": ("{length} holds no CUDA record: {held}. The window was not the problem and the file is not "
                      "damaged: the profiler recorded none of the program's CUDA work, so the guide's GPU checks did "
                      "not run and nothing here is a verdict on the job. Profile on native Linux, or update Nsight "
                      "Systems and the Windows driver together."),
    "unclosed": ("{length} holds no GPU work: {held}. The window may not be the problem and the file is not "
                 "damaged: the profiler never wrote the program's later CUDA records, so the guide's GPU checks did "
                 "not run and nothing here is a verdict on the job. Let the program end before the session stops, and "
                 "have the CUDA trace written as it runs."),
    "input_on_cpu": ("{length} holds no GPU work: {held}. No model ran in it, on the GPU or the CPU, so the guide's "
                     "checks did not run and nothing here is a verdict on the job's steps."),
    "frontend": ("{length} holds no GPU work: {held}. The window and the file are not the problem: this process never "
                 "runs the model, so the guide's GPU checks did not run and nothing here is a verdict on the job or "
                 "its GPU. Its engine steps are in the trace of the engine's own process."),
    "input_only": ("{length} holds no GPU work: {held}. It is not start-up cut short: the loop turned again and again "
                   "without the model, so the guide's GPU checks did not run and nothing here is a verdict on the "
                   "job's steps."),
    "loop_ended": ("{length} holds no GPU work: {held}. The job's steps ran before the window, so the guide's GPU "
                   "checks did not run: nothing here is a verdict on the job, nor on where its model runs."),
    "loop_ended:queued": ("{length} holds none of the job's steps: {held}. The job's steps ran before the window and "
                          "its GPU work is theirs, so the guide's checks did not run: nothing here is a verdict on the "
                          "job's steps."),
    "copy_only": ("{length} holds GPU work of one kind: {held}. The guide's checks judge kernels and the steps that "
                  "run them, so they did not run: nothing here is a verdict on a model. Where the copies are the "
                  "program's work (a bandwidth test, a staging tool), judge them by their bandwidth and host "
                  "memory: {staging}; where the "
                  "program runs kernels later, the window ended before them: record the window where it runs its "
                  "steps."),
    "teardown": ("{length} holds no GPU work: {held}. It is not start-up: the program's steps ran before the window, "
                 "so the guide's GPU checks did not run and nothing here is a verdict on the job. End the window "
                 "before the program exits, on its steps."),
    "nvtx_only": ("{length} holds no GPU work: {held}. Neither the CUDA API nor the GPU's work is in it, so the "
                  "guide's GPU checks did not run: nothing here is a verdict on the job."),
    "os_calls_only": ("{length} holds no GPU work: {held}. Neither the CUDA API nor the GPU's work is in it, so the "
                      "guide's GPU checks did not run: nothing here is a verdict on the job."),
    "ops_unrecorded": ("{length} holds no recorded work: {held}. Neither the graphs' ops nor the GPUs' activity is in "
                       "it, so the guide's checks did not run: nothing here is a verdict on the job, nor on where its "
                       "work runs."),
    "kernels_unrecorded": ("{length} holds no recorded GPU work: {held}. The guide's GPU checks did not run: nothing "
                           "here is a verdict on the job."),
    "programs_no_kernel": ("{length} holds no GPU work: {held}. With no kernel to time, the guide's GPU checks did not "
                           "run: nothing here is a verdict on the job."),
}
#: Any other kind: a capture of the wrong window; ``{user}`` the framework's words for the code that runs the steps.
_WRONG_WINDOW = ("{length} holds no GPU work: {held}. It is a capture of the wrong window, so the guide's GPU checks "
                 "did not run: nothing here is a verdict on the job. Record the window where {user} runs its steps.")


def _window_summary(ctx: Ctx, m: HostMetrics, window: str, held: str) -> str:
    """What a window without GPU work holds, and why the checks did not run: a capture of the wrong window, not a
    damaged file and not a healthy job."""
    # a window whose file holds no timed event has no length to state: say so, where its siblings state theirs; a
    # length in the unit that shows it (a 0.8 ms window read "This 0.00 s window": h37-survey55)
    length = f"This {ms(m.capture.length_ms)} window" if m.capture.length_ms else "This window (of no recorded length)"
    # which copies are staged, in the framework's terms (JAX: PjRt's staging buffer, not the driver's: h37-probe44v)
    return _WINDOW_SUMMARIES.get(window, _WRONG_WINDOW).format(length=length, held=held,
                                                               user=ctx.fw.label("gpu_user"),
                                                               staging=ctx.fw.label("copies:staging"))


def _window_fixes(ctx: Ctx, window: str, fmt: str, loop_steps: int = 0) -> list[Action]:
    """How to record the right window: the capture format's own profiler options where it has them (Nsight), else
    the framework's (``torch.profiler``'s schedule, ``jax.profiler``, TensorFlow's); a serving engine's front-end,
    its engine's words on where the GPU work's trace is (``frameworks.engines``: the window was right, the process
    was another).  A loop that ended before the window, where its steps are numbered (``loop_steps``), gets the
    framework's fix for a loop of that many steps (``loop_ended/N``; the general one where none is written)."""
    if window == "copy_only":  # the copies' own fix (pinned memory) where any is pageable, then the window's
        pageable = ctx.m.job.kind.pageable_copies if ctx.m.job is not None else 0
        pin = ctx.fw.extra("excessive_memcpy:pageable", copies=plural(pageable, "copy", "copies")) if pageable else []
        return pin + (ctx.window_fixes(fmt, window) or ctx.fw.fix(f"{ID}:copy_only") or ctx.fw.fix(f"{ID}:window"))
    if window == "teardown":  # the format's own window options where it has them (Nsight), else the framework's
        return ctx.window_fixes(fmt, window, False) or ctx.fw.fix(f"{ID}:teardown") or ctx.fw.fix(f"{ID}:window")
    if window == "programs_no_kernel":  # a whole record of programs that launched nothing: no capture fix applies
        key = f"{ID}:{window}"
        return ctx.fw.fix(key) if key in ctx.fw.fixes else []
    # the framework's words: process, loop or its profiler's tracers
    if window in ("frontend", "input_only", "loop_ended", "input_on_cpu", "profiler_only",
                  "ops_unrecorded", "kernels_unrecorded"):
        key = f"{ID}:{window}" + (f"/{loop_steps}" if loop_steps else "")
        return ctx.fw.fix(key) or ctx.fw.fix(f"{ID}:window") or ctx.fw.fix(f"{ID}:no_gpu")
    return ctx.window_fixes(fmt, window) or ctx.fw.fix(f"{ID}:window") or ctx.fw.fix(f"{ID}:no_gpu")


def _snapshot_teardown(ctx: Ctx, m: HostMetrics) -> list[Finding]:
    """A snapshot whose history holds no allocation, only the program's tear-down (``job.kind._snapshot_teardown``):
    a capture of the wrong window, said as every format's is -- a warning with how to record the right one -- never
    "no memory check fired" of a file that holds none of the job's allocations (h37-window69)."""
    kind = m.job.kind if m.job is not None else None
    if kind is None or not kind.snapshot_teardown:
        return []
    return [finding(
        ctx, ID, "warning",
        f"The snapshot's allocator history holds no allocation: {kind.snapshot_teardown} -- the program's tear-down, "
        f"recorded after its work. None of the job's allocations is in it, so the memory checks had nothing to judge: "
        f"nothing here is a verdict on the job's memory.",
        title="The memory snapshot recorded the program's tear-down: no allocation in its history",
        metric=value_metric("allocations_recorded", "Allocations recorded", 0, "count", "0", severity="warning",
                            good_direction="higher"),
        actions=ctx.fw.fix(f"{ID}:snapshot_teardown"))]


def _history_cut(ctx: Ctx, m: HostMetrics) -> list[Finding]:
    """A snapshot whose allocator history kept only its last events (the ring buffer of ``max_entries`` was full): its
    peak and what held it are those of the kept window, not of the job's steps -- said, with the setting that keeps
    them."""
    cut = m.memory.history_cut
    if cut is None:
        return []
    kept, kept_ms, span_ms = cut
    return [finding(
        ctx, ID, "warning",
        f"The snapshot's allocation history kept only its last {kept:,} events ({ms(kept_ms)}), while the profiler's "
        f"annotations in it span {ms(span_ms)}: the allocator's history is a ring buffer of `max_entries` events, and "
        f"whole iterations before the first kept event were dropped. Its peak and what held it are the kept window's "
        f"(here {pct(kept_ms / span_ms) if span_ms else 'part'} of the recording), not the job's: a step's peak may "
        f"lie in what was dropped.",
        title="The memory snapshot lost the start of its history",
        metric=value_metric("history_kept_share", "History kept", kept_ms / span_ms if span_ms else None, "share",
                            pct(kept_ms / span_ms) if span_ms else "n/a", None, severity="warning",
                            good_direction="higher"),
        actions=ctx.fw.fix(f"{ID}:history_cut"),
    )]


#: The metric of the note on a snapshot without history: the verdict reads it (never "healthy" for a state alone).
NO_HISTORY_METRIC = "history_events"


def _no_history(ctx: Ctx, m: HostMetrics) -> list[Finding]:
    """A snapshot with no allocator history on a GPU (``GpuMemory.events`` 0: PyTorch 1.13's ``_snapshot()``, a
    pickled ``torch.cuda.memory_snapshot()``, 2.1's ``enabled="state"`` before any event): its state at the dump is all it holds -- the
    peak, when it fell and what a forward kept for a backward are unknown, not absent.  Said as an info with the call
    that records them in the release whose layout the file has (``Memory.snapshot_layout``).

    Why: a 1.13 dump of a forward that kept 9 GiB for a backward that never ran read "Healthy: no check of the guide
    fired" -- nothing could fire without the history, and nothing said so; and the note's
    ``_record_memory_history()`` is a TypeError before 2.1 (``enabled`` had no default)."""
    bare = [g for g in m.memory.gpus if not g.events and g.baseline == "absolute"]
    if not bare:
        return []
    gpus = [g.gpu for g in bare]
    layout = m.memory.snapshot_layout if m.memory.snapshot_layout in ("1.13", "2.0", "2.0 or older", "2.1") else ""
    made = ctx.fw.label(f"snapshot_made:{layout}")
    which = f"GPU {gpus[0]}" if len(gpus) == 1 else f"GPUs {', '.join(map(str, gpus))}"
    key = f"{ID}:no_history_{layout}" if layout in ("1.13", "2.0") else f"{ID}:no_history_2.0" \
        if layout == "2.0 or older" else f"{ID}:no_history"
    return [_snapshot_note(
        ctx, f"The snapshot holds the allocator's state at the dump and no history of {which} ({made}): what was "
             f"allocated and reserved then, the live blocks and their stacks are known; the peak, when it fell, what "
             f"held it, and what a forward kept for a backward are not -- the memory checks that need them could not "
             f"run.{_capacity_unknown(bare)}", "The memory snapshot holds no allocation history",
        (NO_HISTORY_METRIC, "Allocator events recorded"), key, gpus,
        extra=ctx.fw.extra(f"{ID}:capacity_unknown") if _capacity_unknown(bare) else [])]


def _capacity_unknown(gpus: list) -> str:
    """The words on a state-only snapshot whose GPUs' capacity is unknown (no capacity record beside it), else "".

    Why: a state alone is what an out-of-memory observer dumps (``torch._C._cuda_attach_out_of_memory_observer``
    calling ``_snapshot()`` or ``_dump_snapshot``: FlexGen's, Megatron's, a weather model's on an A100 at 37.9 GiB
    reserved): the one question it can answer is how near the GPU's capacity its state was, and a snapshot does not
    record the capacity.  The note said what the missing history hides but not that, so "no check fired" read as "the
    state is fine" where no check could judge it."""
    if any(g.capacity_bytes is not None for g in gpus):
        return ""
    return (" Nor does a snapshot record the GPU's capacity: how near it the state at the dump was (an out-of-memory "
            "observer's dump is taken when an allocation failed) cannot be told from the file.")


#: The metric of the note on a snapshot whose GPUs' capacity is not recorded and whose peak no memory check spoke of:
#: the verdict reads it (the peak was judged against no capacity).
NO_CAPACITY_METRIC = "capacity_recorded"


def _capacity_unrecorded(ctx: Ctx, m: HostMetrics, earlier: dict[str, list[Finding]] | None) -> list[Finding]:
    """A snapshot GPU with an allocation history whose capacity is not recorded (no capacity file beside it, no OOM's
    free bytes) and of whose peak no memory check (:data:`MEMORY_RULES`, ``earlier``) said anything: an info saying what
    its peak holds -- allocated and reserved, when, its parts as the frames or the allocation pattern book them
    (``GpuMemory.breakdown``) and the reserve beyond it -- and that the capacity is unknown, with how to record it
    (``capture_quality:capacity_unknown``).  Never a warning: nothing in the file says the peak is near the GPU's size.

    Why: a healthy snapshot said "No memory check fired" and nothing else -- not its peak, not what held it, not that
    the checks that measure a peak against the GPU (near capacity, headroom for a larger batch) had no capacity to
    measure against (session 70 snap70's *Left* 1).  A GPU with no history has :func:`_no_history`'s note; an OOM's
    GPU has its finding and the capacity the OOM's free bytes give."""
    spoken = {f.gpu for fs in (earlier or {}).values() for f in fs}
    if None in spoken:
        return []
    gpus = [g for g in m.memory.gpus if g.events and g.baseline == "absolute" and g.capacity_bytes is None
            and g.gpu not in spoken and g.peak_allocated_bytes > 0]
    if not gpus:
        return []
    words = mem.category_words(m, ctx)
    parts = []
    for g in gpus:
        held = ", ".join(f"{gb(b)} {'is ' if not k else ''}{words.get(c, c)}" for k, (c, b) in
                         enumerate(sorted(((c, b) for c, b in (g.breakdown or {}).items() if b > 0),
                                          key=lambda x: -x[1])))
        start = g.start_bytes is not None and g.peak_allocated_bytes <= g.start_bytes
        line = (f"GPU {g.gpu} holds at most {gb(g.peak_allocated_bytes)} allocated, at the start of its history (a "
                "peak older than the history is not in the file)" if start else
                f"GPU {g.gpu}'s peak is {gb(g.peak_allocated_bytes)} allocated {mem.when(g, ctx)}")
        if held:
            line += f": {held}"
            if g.parts_from_pattern:
                line += " (the parts read from the allocation pattern, the history recording no stacks)"
        if g.peak_reserved_bytes is not None:
            line += f"; {gb(g.peak_reserved_bytes)} reserved at most"
            if g.gap_bytes:
                line += f", {gb(g.gap_bytes)} of it beyond the peak reserved but unallocated (the allocator's cache)"
        parts.append(line + ".")
    which = f"GPU {gpus[0].gpu}" if len(gpus) == 1 else f"GPUs {', '.join(str(g.gpu) for g in gpus)}"
    return [finding(
        ctx, ID, "info", " ".join(parts) + f" A memory snapshot does not record the GPU's capacity: how near it "
                                           f"{which}'s peak came, and whether a larger batch would fit, could not "
                                           "be judged -- no memory check fired on it, which says nothing of the room "
                                           "left.",
        title="The memory snapshot's peak was judged against no capacity",
        metric=value_metric(NO_CAPACITY_METRIC, "GPUs whose capacity is recorded", 0, "count", "0", None,
                            good_direction="higher"),
        actions=ctx.fw.extra(f"{ID}:capacity_unknown"), gpu=gpus[0].gpu if len(gpus) == 1 else None)]


def _snapshot_note(ctx: Ctx, summary: str, title: str, metric: tuple[str, str], key: str, gpus: list[int],
                   extra: list | None = None) -> Finding:
    """An info on what a snapshot lacks, counted as ``metric`` (id, label) at 0 -- the verdict reads its id -- with
    the framework's ``key`` fix to record it (and ``extra`` fixes after it)."""
    return finding(ctx, ID, "info", summary, title=title,
                   metric=value_metric(metric[0], metric[1], 0, "count", "0", None, good_direction="higher"),
                   actions=ctx.fw.fix(key) + list(extra or []), gpu=gpus[0] if len(gpus) == 1 else None)


#: The metric of the note on a snapshot recorded without stacks: the verdict reads it (what held the peak unjudged).
NO_STACKS_METRIC = "stacked_allocations"


#: How a stackless snapshot's steps were read from its pattern, by the job's kind (``job.iterations``: the training
#: iterations of ``pattern_phases``, the forward passes of ``pass_phases``).
_PATTERN_READ = {
    "training": "its iterations only from the pattern (the same allocations repeating, each repeat's forward blocks "
                "freed in reverse order while a backward makes others: low confidence)",
    "inference": "its forward passes only from the pattern (the same allocations in the same order, each pass freeing "
                 "them all by its end: low confidence)",
}


#: Said where a stackless training history's peak parts were read from its pattern (``GpuMemory.parts_from_pattern``).
_PEAK_PARTS_READ = (" The peak's activations and gradients were read from the same pattern, not from frames (low "
                    "confidence): the blocks each backward's walk back frees are the forward's, those it makes the "
                    "backward's; what the pattern cannot tell -- a loss kept, what is made after the walk -- stays "
                    "other.")


def _no_stacks(ctx: Ctx, m: HostMetrics) -> list[Finding]:
    """A snapshot whose history carries no stack at all (``Memory.stackless``: ``_record_memory_history(context=None)``,
    2.0 without ``trace_alloc_record_context``): its totals, peak and when it fell are known, what allocated each
    block is not -- so the job's kind and its iterations (but where its allocation pattern shows a backward:
    ``job.iterations.pattern_phases``, low confidence), and what a forward kept for a backward are not read.  Said as an info with the call that records the stacks.

    Why: read without them every allocation was "other", and the report said only "a memory snapshot records
    allocations, not the GPU's work" -- the checks that need the stacks were silent, and nothing said why."""
    gpus = [g for g in m.memory.gpus if g.events]
    if not m.memory.stackless or not gpus:
        return []
    kind = m.job.kind.kind if m.job is not None else "unknown"
    read = (f"its kind ({kind}) rests on what else the file shows (the job line says what), and " if kind != "unknown"
            else "the job's kind, ")
    events = sum(g.events for g in gpus)
    read_steps = m.steps.source == "memory_iterations" and m.steps.found
    iterations = (_PATTERN_READ["inference" if kind == "inference" else "training"] if read_steps
                  else "its iterations could not be read")
    return [_snapshot_note(
        ctx, f"The snapshot's allocator history ({plural(events, 'event')}) carries no stack frame: "
             f"{_without_stacks(ctx, m.memory)}. Its totals, its peak and when it fell are known; which blocks a forward, a backward or "
             f"an optimizer made is not -- {read}{iterations}, and what a forward kept for a "
             f"backward only where the pattern shows it (a climb from the level held between passes, freed in one "
             f"run).{_PEAK_PARTS_READ if any(g.parts_from_pattern for g in gpus) else ''}",
        "The memory snapshot records no stacks", (NO_STACKS_METRIC, "Allocations with a stack"),
        f"{ID}:no_stacks_2.0" if m.memory.snapshot_layout in ("2.0", "2.0 or older") else f"{ID}:no_stacks",
        [g.gpu for g in gpus])]


def _without_stacks(ctx: Ctx, mem) -> str:  # noqa: ANN001 - the host's Memory metrics
    """How a stackless history was recorded, in the note's words: without context, or -- where the blocks live at the
    dump carry their stacks (``Memory.dump_stacks``) -- with the live blocks' stacks only, in the framework's words for
    the release's setting (``snapshot_stacks:*`` labels).  Why: "recorded without context" of a ``context="state"``
    snapshot whose live blocks each name their line told the user something the file contradicts (h37-snap69)."""
    if not mem.dump_stacks:
        return ctx.fw.label("snapshot_stacks:none")
    old = mem.snapshot_layout in ("2.0", "2.0 or older")
    return ctx.fw.label("snapshot_stacks:dump:2.0" if old else "snapshot_stacks:dump")


def _before_capture(ctx: Ctx, before: float, blocked: float) -> Finding:
    """The window opens with the GPU still on work launched before it: the GPU idles in the trace before its first
    recorded work, that work already launched (``idle_queued_first``, booked as ``unseen``), ``blocked`` ms of it with
    the host in a sync or a blocking copy (``idle_queued_first_blocked``).  An info note, not the unseen-work warning:
    the GPU was busy, with work this window does not hold -- launched before the profiler started, or left out where
    the window was cut from a longer trace -- so nothing of the job is wrong there, but the step's time holds that
    stretch, and the report says how much, and whether the host waited for it or went on launching.

    Why: burcukoglu/safe_dynaviseon's ``trace.json`` opens on a forward pass whose first `.to()` (a pageable copy)
    blocks the host 42.6 ms of the 60.3 ms pass while its three fills, launched at 1.2 ms, start at 44.0 ms: the GPU
    was finishing work from before the window (its first op's id, 3073, says profiler sessions ran before it in the
    process).  The report spoke of 15% to fuse and never of the 71%: "no warning rests on it" had left it unsaid.
    haraldger/High-Performance-Deep-Learning's VGG16 opens 5.4 ms before its GPU starts, the warm-up forward just
    before the profiler still running, the host launching the profiled forward meanwhile."""
    step = ctx.step_ms
    first = min((w.step for w in ctx.m.steps.windows), default=None)
    noun = ctx.step_noun  # "the pass's own work" on a capture read whole (h37-words22: held_pass_rtx5070ti)
    host = (f" The host spends {ms(blocked)} of it blocked in syncs or blocking copies, waiting for that earlier work."
            if blocked >= 0.5 * before else
            f" The host meanwhile goes on with the {noun}'s own launches: none of it waits on the host.")
    return finding(
        ctx, ID, "info",
        f"The capture opens while the GPU is still running work launched before it: for "
        f"{ctx.part_of_step(before, step)} ({pct(before / step)}) the GPU runs nothing the capture recorded, though the first work it "
        f"recorded was already launched -- it was on work this window does not hold (launched before the profiler "
        f"started, or left out where the window was cut from a longer trace).{host} That time is booked apart as work "
        f"not in the capture, not as this {noun}'s launch or host overhead; the {noun}'s own work is the other "
        f"{ms(step - before)}.",
        title="The capture opens while the GPU still runs earlier work",
        metric=share_metric("before_capture_share", "GPU on work from before the capture", before / step,
                            "capture.unseen_share", severity="info", detail={"host_blocked_ms": round(blocked, 3)}),
        # the window is the capture's first step, labelled with the time said above, not the step's whole booked
        # ``unseen`` (h37-review6: vllm_mi300x_decode's "for 7.78 ms of each 19.1 ms step" above "(7.80 ms)")
        windows=step_windows(ctx, key=lambda st: min(st.breakdown.unseen, before * ctx.m.steps.count)
                             if st.step == first else 0.0, label="GPU on work from before the capture", n=1),
        actions=ctx.fw.fix(f"{ID}:before_capture"),
    )


#: The share of the held time beside which the held-work finding names the idle at handoffs between streams (the
#: ledger's ``stream_handoff``) where that idle has no finding of its own: a tenth, so a part that moves no reading is
#: not a sentence of its own.
HANDOFF_PART_MIN = 0.1


#: The least share of the host's GPUs' summed unseen idle one GPU holds for the held-work finding to name it.
HELD_ONE_GPU = 0.8


def _held_gpu(ctx: Ctx, m: HostMetrics) -> tuple[str, int | None]:
    """(words, GPU) where one of several GPUs holds nearly all (:data:`HELD_ONE_GPU`) of the held idle the finding
    states as the mean over the host's GPUs: that GPU's own figure, and the GPU for the finding's scope; ("", None)
    with one GPU, or where it is spread.

    Why: Megatron-LM's tensor-parallel pair (``wild/megatron_tp2_v100_turns``) read "The GPU idles 25.9 ms of the
    74.2 ms step" -- the mean of GPU0's 53.1 ms and GPU1's none -- naming no GPU, where the late-rank finding names
    GPU0 as the one the other waits for by that very idle (h37-hunt71a)."""
    gs = [g for g in m.gpus if g.active]
    if len(gs) < 2:
        return "", None
    per = {g.gpu: float(g.breakdown.unseen or 0.0) for g in gs}
    total = sum(per.values())
    top = max(gs, key=lambda g: per[g.gpu])
    if total <= 0 or per[top.gpu] < HELD_ONE_GPU * total:
        return "", None
    who = f"GPU{top.gpu} (rank {top.rank})" if top.rank is not None else f"GPU{top.gpu}"
    others = "the other GPU" if len(gs) == 2 else f"the other {len(gs) - 1} GPUs together"
    return (f" Those figures are means over the host's {len(gs)} GPUs: the idle is {who}'s, "
            f"{ctx.part_of_step(per[top.gpu])} on it, {ms(total - per[top.gpu])} on {others}."), top.gpu


def _held_words(ctx: Ctx, unseen: float, held: float, handoff: float = 0.0, streams: str = "") -> str:
    """The unseen-work finding's words where most of that time is the GPU holding kernels already launched (their
    calls returned and submitted, the GPU idle until they start): the host is not what it waits for -- neither its
    launches nor its code -- so it is another process's work on the GPU or a dependency outside the capture (casio's
    TF NeRF: each burst held 2.45 ms after its launch returned, 188 ms of the 324 ms pass).  The idle at handoffs
    between streams (``handoff``: the ledger's ``stream_handoff``, where it has no finding of its own and is at least
    :data:`HANDOFF_PART_MIN` of the held time) is a dependency the capture does hold, booked apart: said so beside it
    (h37-survey66's *Left*: wild/torchrec_a100_stalls' held time at handoffs was put outside the capture with the
    rest)."""
    part = ""
    if handoff >= HANDOFF_PART_MIN * held and ms(handoff) != ms(0.0):
        where = f" (most of it {streams})" if streams else ""
        part = (f" Besides that time, the GPU idles {ctx.part_of_step(handoff)} at {HANDOFF_WORDS}{where}, a "
                f"dependency this capture holds, booked apart.")
    return (f"The GPU idles {ctx.part_of_step(unseen)} ({pct(unseen / ctx.step_ms)})"
            f"{_held_part(unseen, held)}. The "
            f"host is not what the GPU waits for there -- the launches were made, whatever the host ran meanwhile -- so "
            f"the GPU runs work this capture does not hold (another process's context on the same GPU takes turns "
            f"with this one) or the kernels wait on something outside it. That time is booked apart, not as "
            f"launch or host overhead.{part}")


def _submission_finding(ctx: Ctx, m: HostMetrics) -> Finding:
    """Every launch reaches the GPU tens of microseconds after its call returns, on an idle GPU
    (``HostMetrics.submission``): the driver's submission latency, said with what the capture shows of it and the
    fix that shortens what it costs -- fewer launches -- and how to see the driver that batches them.  An info: the
    host's launches pace the GPU (the ledger books that idle as the host's time), so the latency delays the work
    more than it lengthens the step, save where the host waits for the GPU.

    Why: the waits past the usual 50 us allowance were "The GPU holds work it was given, idle ... another process's
    context on the same GPU takes turns with this one" on duoan/playground-cuda's RTX 5080 (881 us of each 8.87 ms
    step), where 99% of the launches onto the idle GPU waited 23-71 us (p5-p90): a cause the file does not support,
    where the same wait on nearly every launch is the driver's (h37-idle67).  Its saving: :func:`_submission_saving`."""
    sub = m.submission
    drivers, check = ctx.vendor.TERMS["batching_drivers"], ctx.vendor.TERMS["driver_check"]
    hint = {"WSL2 paths": " -- this program's recorded paths are a Windows drive under WSL2 (/mnt/...)",
            "Windows paths": " -- this program's recorded paths are Windows paths"}.get(sub.os_hint, "")
    lps = f" Each of the step's {sub.launches_per_step:,.0f} launches pays it." if sub.launches_per_step >= 1 else ""
    is_, unseen = ("is", "") if hint else ("reads as", f" ({_UNSEEN_DRIVER})")
    summary = (f"On an idle GPU each launch reaches the GPU about {sub.median_us:.0f} us after its call returns "
               f"(median; p90 {sub.p90_us:.0f} us): {pct(sub.delayed_share)} of the {sub.launches:,} launches read "
               f"waited {T('launch.submit_floor_us'):g} us or more, whatever the GPU ran before. The same wait on "
               f"nearly every launch {is_} the driver's submission latency{unseen}: it submits launches late, in batches, as "
               f"{drivers}{hint}; another process "
               f"taking turns on the GPU would delay some launches by up to milliseconds and leave the rest prompt."
               f"{lps} The GPU's idle in it beyond the usual 50 us ({ctx.part_of_step(sub.idle_ms)}) is booked as the "
               f"host's time, since the host's launches pace the GPU; it costs the step in full where the host waits "
               f"for the GPU (a sync){_submission_critical_words(ctx, sub)}.")
    fixes = ctx.fw.fix(f"{ID}:submission") or [action(
        f"Launch fewer, larger pieces of work so fewer launches pay the submission: replay the step as "
        f"{ctx.vendor.TERMS.get('graphs', 'graphs')}, or fuse its small ops.")]
    saved = _submission_saving(ctx, m)
    assumed = " -- the fix the saving assumes --" if saved is not None else ""
    fixes.append(action(f"To remove the latency itself{assumed}, {check}; then profile again."))
    return finding(
        ctx, ID, "info", summary, title=f"Each launch reaches the GPU ~{sub.median_us:.0f} us after its call returns",
        metric=value_metric("submission_latency_us", "Launch submission latency (median)", sub.median_us, "us",
                            f"{sub.median_us:.0f} us", severity="info"),
        saving=saved, actions=fixes)


#: What the submission latency's words say where the capture records no OS (a Kineto trace records none; only a
#: Windows or WSL2 path among the host's recorded names shows one, ``Submission.os_hint``): that the driver's batching
#: is the reading, not something the file shows -- the saving rests on it (h37-copy69: session 68's left item, the
#: RTX 5080 ``torch_smoke2`` and the generated ``write_submission_waits`` both said "is" with no OS in the file).
_UNSEEN_DRIVER = "the capture records no OS or driver model: the reading rests on the waits' pattern alone"


def _submission_critical_words(ctx: Ctx, sub) -> str:  # noqa: ANN001 - a metrics.types.Submission
    """How much of the latency's idle the host waited through in syncs (its cost to the step), in words ending the
    summary's last sentence: ": here X of each Y step" or ": here none of it" (the host's own pace hides it)."""
    crit = min(sum(sub.critical_ms.values()), sub.idle_ms)
    return f": here {ctx.part_of_step(crit)}" if ms(crit) != ms(0.0) else ": here none of it"


def _submission_saving(ctx: Ctx, m: HostMetrics) -> Saving | None:
    """What the submission latency costs the step: the GPU's idle within it while the host waits for the GPU in a sync
    (``Submission.critical_ms``, a part of the idle the finding names), in the pools where the ledger books it.  Only
    there is the step longer for it: elsewhere the host is off to its next launch and the GPU catches up.  The
    assumption says why fewer launches alone recover none of it -- a replay of the step as one graph reaches the GPU
    through the same driver, its latency paid once before each wait as the last launch's is now -- so the time comes
    back where the driver submits at once (the second fix).

    Why: the finding stated no saving (h37-dispatch68); a saving of all its idle would count latencies the host's own
    pace hides (the eager loop of ``synthetic.torchtrace.write_submission_waits``: 228 us of each step's idle in the
    latency, none of it on the step's path where the host's 40 us of Python follow its last launch)."""
    sub = m.submission
    crit = min(sum(sub.critical_ms.values()), sub.idle_ms)
    if crit <= 0.0:
        return None
    graphs = ctx.vendor.TERMS.get("graphs", "graphs")
    rests = "" if sub.os_hint else ("the latency is a batching driver's, which the capture does not show (it records "
                                    "no OS or driver model), and ")
    return saving(ctx, crit, f"{rests}each launch the host then waits for reaches the GPU as its call returns (a driver that "
                  f"submits at once): the GPU's idle in the latency while the host waits for it in syncs comes back. "
                  f"Fewer launches alone recover none of it: {graphs} reach the GPU through the same driver, each "
                  f"replay paying the latency once before the wait that follows it",
                  idle_claims(sub.critical_ms))


#: What the ledger's ``stream_handoff`` is, in the findings' words (``report.legend``'s label of the category says the same).
HANDOFF_WORDS = "handoffs between streams"


def _handoff_finding(ctx: Ctx, m: HostMetrics) -> Finding:
    """The GPU idle at handoffs between streams (the ledger's ``stream_handoff``): kernels queued while another
    stream's work ran started only after it ended, so they waited on it -- a dependency the capture holds, whose
    handoff costs the time.  Where the capture shows its sides (``HostMetrics.handoff``) it says them, and the fix
    its cause calls for (:func:`_handoff_cause`).

    Why: booked as unseen work and said as another process's turn on the GPU, a GRU's forward on an RTX 5070 Ti
    Laptop GPU (survey h37-survey66) read "another process's context on the same GPU takes turns with this one" for
    28 us of each 442 us step, all of it after cuDNN's RNN kernel on its own stream and before the compute stream's
    next kernel, queued 75 us earlier; then the ledger said "Unseen GPU work" for time the finding said the capture
    holds (h37-review31's *Left* 1).  One number, the ledger's, under one name on every screen."""
    handoff, hand = m.breakdown.stream_handoff, m.handoff
    where = f" (most of it {hand.streams})" if hand.streams else ""
    cause, fix = _handoff_cause(ctx, hand)
    return finding(
        ctx, ID, "warning",
        f"The GPU idles {ctx.part_of_step(handoff)} ({pct(handoff / ctx.step_ms)}) at {HANDOFF_WORDS}{where}: "
        f"kernels queued on one stream while the GPU ran another stream's work started only after that work ended, "
        f"so they waited on it, and the GPU idled at each handoff before starting them. That dependency is in this "
        f"capture: the time is the handoff's, not another process's turn on the GPU, and it is booked apart, as "
        f"{HANDOFF_WORDS}.{cause}",
        title=f"The GPU idles at {HANDOFF_WORDS}",
        metric=share_metric("handoff_share", f"GPU idle at {HANDOFF_WORDS}", handoff / ctx.step_ms,
                            "capture.unseen_share", severity="warning"),
        windows=step_windows(ctx, key=lambda st: st.breakdown.stream_handoff, label="stream handoff"),
        actions=[fix],
    )


def _handoff_cause(ctx: Ctx, hand: Handoff) -> tuple[str, Action]:
    """(the sentences that say where the capture shows the handoffs' two sides and what ordered the streams, the fix)
    for the handoffs that hold most of the idle.  A fix only where the capture names the cause: the work waited on is
    a collective (the communication library's stream) or a copy (a copy stream), or the launching thread recorded the
    event wait (``Handoff.event_wait``, the call the capture names: an ordering made on that thread), or, with no
    event wait, the legacy default stream is one of the two streams and orders them (``Handoff.legacy``: the
    framework's ``:legacy_stream`` fix where it has one; h37-copy71 -- a native loop on stream 0 and a
    ``cudaStreamCreate`` stream read "what orders the streams ... is not in it"); otherwise what to look at
    (:func:`_handoff_look`, in the job's framework's words)."""
    if not hand.waited:
        return "", _handoff_look(ctx)
    a, b = (hand.streams.split(" to ") + [""])[:2] if hand.streams else ("another stream", "")
    sides = (f" The capture shows both sides: most of it follows `{hand.waited}` ({_KIND_WORDS.get(hand.waited_kind, 'work')}) "
             f"on {a} and precedes `{hand.waiting}` on {b or 'the stream that waited'}, queued before that work ended")
    wait = (f"; the launching thread records the wait between the two launches (`{hand.event_wait}`: the program's, "
            "its framework's or a library's own event wait)") if hand.event_wait else ""
    if hand.legacy and not hand.event_wait:  # no call orders them: the legacy default stream's implicit order does
        legacy = (f"{sides}; the capture records no event wait between the two launches, and needs none: the legacy "
                  f"default stream ({ctx.vendor.TERMS['legacy_stream']}) is one of the two, and it waits for all the "
                  f"work queued before it on every blocking stream of its context (a stream created without the "
                  f"non-blocking flag) and makes their later work wait for it, so each stream's kernels wait for the "
                  f"other's.")
        return legacy, next(iter(ctx.fw.extra(f"{ID}:legacy_stream")), None) or _handoff_look(ctx)
    if hand.waited_kind == "collective":
        return (f"{sides}{wait}: the stream waits for a collective's result on the communication library's stream.",
                HANDOFF_COLLECTIVE_FIX)
    if hand.waited_kind == "copy":
        return f"{sides}{wait}: the stream waits for a copy on a copy stream.", HANDOFF_COPY_FIX
    if hand.event_wait:
        return f"{sides}{wait}.", HANDOFF_FIX
    unknown = (f"{sides}; the capture records no event wait between the two launches, so what orders the streams -- "
               f"a library's own side stream, or a wait made on another thread -- is not in it.")
    return unknown, _handoff_look(ctx)


#: The kind of work waited on (``metrics.types.Handoff.waited_kind``), as the handoff finding says it.
_KIND_WORDS = {"kernel": "a kernel", "collective": "a collective", "copy": "a copy", "fill": "a memset"}


def _held_part(unseen: float, held: float) -> str:
    """How much of the unseen-work time the GPU held launched kernels, said so that the parts add up to the whole as
    printed: "all of it" where the rest would print as nothing, else the held part and the rest's own cause.

    Why: h37-review5 read "The GPU idles 1.35 ms ... with work it was given: 1.35 ms of it holding kernels" (v100
    BERT, a part printed as its whole) and torchrec_a100_stalls' "143.9 ms ... 127.6 ms of it holding kernels" with
    its other 16.3 ms unsaid."""
    rest = unseen - held
    what = "holding kernels whose launch calls had returned, which start only later"
    if ms(held) == ms(unseen) or ms(rest) == ms(0.0):
        return f", all of it {what}"
    return (f": {ms(held)} of it {what}; the other {ms(rest)} the host waits in syncs or blocking copies with every "
            f"GPU idle, for GPU work the capture does not hold")


#: What to do where the GPU held launched work at handoffs between streams: fewer handoffs.
HANDOFF_FIX = action("Hand work between streams less often: keep kernels that depend on each other on one stream "
                     "where the program picks the streams (each wait between streams costs the GPU a handoff), or "
                     "capture the step as a CUDA graph, whose dependencies between streams the GPU follows as one "
                     "launched graph; then profile again to see what the handoffs still cost.")

#: What to do where the handoffs wait for a collective on the communication stream: fewer of them, or not waited on.
HANDOFF_COLLECTIVE_FIX = action("Wait for collectives less often: fewer, larger collectives (bucket the tensors they "
                                "carry) are fewer handoffs, and work that does not need a collective's result can be "
                                "queued before the wait for it, so the GPU runs it instead of idling at the handoff; "
                                "then profile again.")
#: What to do where the handoffs wait for a copy on a copy stream: have it done before it is needed.
HANDOFF_COPY_FIX = action("Issue the copy earlier -- prefetch the next batch a step ahead on the copy stream -- so it "
                          "has ended before the compute stream reaches the work that needs it, and the wait costs "
                          "no handoff; then profile again.")
def _handoff_look(ctx: Ctx) -> Action:
    """What to look at where the capture does not say what orders the streams.  The program's own streams in its
    framework's words (``handoff:own_streams``): a JAX or native program's finding named PyTorch's
    ``torch.cuda.Stream`` (h37-review32)."""
    return action("Open the trace window below and look at the work on the two streams around each handoff and at "
                  "the op that launched the work waited on: the framework's or a library's own stream (cuDNN's "
                  f"RNN kernels, a communication library) or {ctx.fw.label('handoff:own_streams')} -- "
                  "only the program's own streams are the program's to merge; a CUDA graph of the step removes "
                  "the launches between them either way.")

#: What to do where the GPU held launched work: find who else runs on it.
HELD_FIX = action("See what else runs on the GPU while this job does (nvidia-smi lists each GPU's processes): run the "
                  "job on a GPU of its own, or share one through MPS so the processes' kernels run side by side "
                  "instead of taking turns; then profile again.")

