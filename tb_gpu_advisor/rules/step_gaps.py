"""§1.2.1 Gaps between steps: the GPU is idle between training steps.

Metric: ``gaps.share_of_step`` (average gap / the average time a gap sits in: from the start of the step before it
to the next step's start -- the step, and the gap too where it lies outside the steps; never above 1).  The part of
the gap spent waiting for input belongs to ``input_bound``; this rule fires
on the rest (host work between steps: callbacks, metrics, ops outside
``tf.function``; or launch threads contending with tf.data threads) and
names the cause from what the host did during the gaps, and the host ops that fill them (the outermost ops of the
thread whose ops fill the most of the gaps, each at least a tenth of the mean gap) and the program's own ranges
(NVTX, ``record_function``, XPlane's ``TraceAnnotation`` / ``Trace`` ranges) that span them, counted alike; a range
that is also among the ops (an XPlane range is a host event) is named once, as the program's range; an event around
a whole step (``record_function`` over the step's body) names no part of it, so the ops inside it are named.  Where
the op filling most of the gaps makes a tensor from its arguments alone on the host (``aten::randn`` of a CPU tensor,
then copied), the first fix is the framework's for making it on the GPU.  Where the
capture traced the OS runtime (Nsight ``-t osrt``), the blocking OS calls the thread launching the next work sat in
during the gaps are named too (``getc``, ``read``: a host waiting on its input is no host at work).
Saving: the gaps' host-caused idle as the step ledger books it (inside the kept steps, per category), less the parts
other findings own (input wait, dispatch, loss scaling, a GPU's late start, and the idle after the program's syncs and
blocking copies inside the gaps: a step that ends in ``jax.block_until_ready`` or ``.item()`` drained the queue, and
its wait's check claims that idle).  The words and the first fix follow what the gaps hold: where the host's own ops
fill them (or the program's own ranges, where those are the gaps' outermost ops) and no wait leaves its idle there,
the framework's words for CPU ops between steps and its fix that moves them (``step_gaps:cpu_ops``), not its words
for syncs (issue #37 class 3).  With one step kept, every gap lies beside
a step left out: low confidence, never critical. Where the step is too small for its dispatch and the launch check
tells that verdict (``launch_bound.tells_step``; this check reads its finding, the evaluator running it first), gaps
that are the host's unrecorded code around the step's few calls are the rest of that turn's host cost: the launch
check's finding tells them, with their own saving (``launch_bound.tell_gaps``), and this check says nothing of its own
(one cause, one account). Likewise where the framework names the calls of its compiled functions (JAX's
``PjitFunction``) and most of the gaps' host time lies inside the next call's dispatch (``Gaps.avg_dispatch_ms``), the
rest the loop between the calls, no wait or cause of its own: where the ledger books that dispatch as launch wait,
the launch check's step-level finding holds the gaps (as above); where it books it as the host's work (a traced loop
frame spanning the gaps) and the host-bound finding reads the step's host time as those calls' dispatch, that finding
holds them (``call_gaps``: the finding's detail ``next_call_dispatch_ms`` says so, ``rules.calls_told_whole``).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.fmt import pct_part
from tb_gpu_advisor.metrics.types import MANAGED_READ, Gaps, HostMetrics
from tb_gpu_advisor.model.schema import Finding, Metric, TimeWindow
from tb_gpu_advisor.rules.base import (
    Ctx, T, action, finding, grade, ms, pct, ran_witness, rule, saving, share_metric, table, traced_python,
    wait_covered,
)
from tb_gpu_advisor.rules import launch_bound
from tb_gpu_advisor.rules.savings import idle_claims

ID = "step_gaps"


def start_offsets_ms(m) -> dict:
    """GPU -> average delay of its first kernel behind the earliest GPU's, per step (active GPUs)."""
    active = [g for g in m.gpus if g.active]
    if len(active) < 2:
        return {}
    if all(g.first_kernel_offset_ms is not None for g in active):
        return {g.gpu: float(g.first_kernel_offset_ms) for g in active}
    by_step: dict = {}
    for s in m.steps_detail:
        if s.gpu is not None and s.first_kernel_ms is not None:
            by_step.setdefault(s.step, {})[s.gpu] = s.first_kernel_ms
    sums: dict = {}
    n = 0
    for row in by_step.values():
        if len(row) < 2:
            continue
        first = min(row.values())
        n += 1
        for gpu, t in row.items():
            sums[gpu] = sums.get(gpu, 0.0) + (t - first)
    return {gpu: v / n for gpu, v in sums.items()} if n else {}


def mean_start_offset_ms(m) -> float:
    off = start_offsets_ms(m)
    return sum(off.values()) / len(off) if off else 0.0


@rule(ID, "§1.2.1", "Gaps between steps leave the GPU idle",
      thresholds=("step_gaps.warning", "step_gaps.critical", "step_gaps.min_gap_ms", "step_gaps.window_share",
                  "step_gaps.unrecorded_share"),
      reads=(launch_bound.ID,))
def check(m: HostMetrics, earlier: dict[str, list[Finding]] | None = None) -> list[Finding]:
    # ``earlier``: the launch check's findings on this host (``Rule.reads``: the evaluator runs it first); gaps that are
    # the rest of the turn's host cost go to its step-level verdict (``_told_by_launch``) (no docstring: the rule's
    # docs are the module's)
    got = _gaps_finding(m)
    if got is None:
        return []
    f, why = got
    if _turn_rest(m, f, why) and _told_by_launch(m, f, (earlier or {}).get(launch_bound.ID, ())):
        return []  # the rest of a step too small for its dispatch: the launch check's step-level finding tells it
    return [f]


def _turn_rest(m: HostMetrics, f: Finding, why: "_Diagnosis") -> bool:
    """Whether the gaps are the rest of a turn too small for its dispatch, for the launch check's step-level finding
    to tell (:func:`_told_by_launch`): the host's unrecorded code around the step's few calls (:func:`_turn_cost`), or
    the next compiled call's dispatch and the loop between the calls (:func:`_calls_dispatch`, where each dispatch event
    is one compiled call: ``Framework.dispatch_is_compiled``) where the ledger books most of that dispatch as launch
    wait -- the gaps' launch part (``launch_ms``), the launch check's.  Where it books
    the dispatch as the host's work (a traced loop frame spanning the gaps: wild ``jax_mi300x``), the host-bound finding
    holds them (``rules.calls_told_whole``): the gaps go to the finding whose time the dispatch beside them is.

    Why: a loop of one tiny jitted call a turn with no traced frame (``write_tiny_jitted_calls(loop_frame=False,
    inputs_every=0)``) books 110 us a step of the next call's dispatch as launch wait and the loop's 27 us as
    unrecorded; the gaps' finding said the 27 us as "Python between jitted calls" beside the launch finding's
    step-level verdict of the same turn (h37-calls67)."""
    if _turn_cost(m, why):
        return True
    launch = float((f.metric.detail or {}).get("launch_ms") or 0.0) if f.metric is not None else 0.0
    return Ctx(m).fw.dispatch_is_compiled and _calls_dispatch(m, why) and launch >= 0.5 * m.gaps.avg_dispatch_ms


def _told_by_launch(m: HostMetrics, gaps: Finding, launch: "list[Finding] | tuple") -> bool:
    """Whether the launch check's finding among ``launch`` tells the step-level verdict (``launch_bound.tells_step``);
    if so, the gaps' finding -- the rest of each turn's host cost in a step too small for its dispatch
    (:func:`_turn_cost`) -- is handed to it as its own part (``launch_bound.tell_gaps``: one cause, one account).

    Why: a benchmark's turn of two tiny kernels run from Python (lutetjeff/cs521-mp2 ``cuda.json``: 10 us of GPU work
    in a 106 us turn) read two criticals for one cause -- "gaps between steps", 44 us of the turn's unrecorded Python
    and sync, and "launch-bound ... the whole step is too small for its dispatch cost", 34 us of its dispatch.  The
    ledger keeps the two times apart (``other`` and ``launch_wait``), so both savings stand and never sum past the
    idle; the cause is one, the host's cost of running a step this small, and the finding that names it holds both.
    Read from the evaluator (each check computed once), not asked of the other check: the two asked each other, and
    each computed the other's finding again (h37-refactor66)."""
    lf = next((x for x in launch if launch_bound.tells_step(m, x)), None)
    if lf is None:
        return False
    ctx = Ctx(m)
    launch_bound.tell_gaps(ctx, lf, gaps, ctx.record_host_fix() or [RECORD_HOST])
    return True


def call_gaps(f: Finding) -> bool:
    """Whether ``f`` is this check's finding whose host work is the dispatch of the next compiled call and the loop
    between the calls (:func:`_calls_dispatch`; its metric's detail ``next_call_dispatch_ms``, the mean gap's part
    inside that dispatch), for the host-bound finding to tell as its own part where it reads the step's host time as
    those calls' dispatch (``rules.calls_told_whole``).  Read off the finding the evaluator holds, never built again:
    the diagnosis is this check's, made once per evaluation (h37-calls67: asking for the finding again ran the whole
    diagnosis a second time, ~1.4 of the 9.5 ms of analysis on wild ``jax_mi300x``).

    Why: wild ``jax_mi300x`` (a loop of ``jnp.dot`` calls on an MI300X, Python traced; h37-turn66 read it by hand):
    the 15 gaps hold 1,364 us, 958 us of it inside the next ``PjitFunction(dot)`` before its launch, most of the rest
    only the loop's own frame (``run_gemms``) between the calls, a few us JAX's runtime callbacks -- no function of
    the program's own.  The host-bound finding named that cost ("the dispatch of its 2.2 jitted calls ... the step is
    compiled already"), and the gaps' finding told 91 us more of it, critical, as "Python between jitted calls": one
    cause, two findings."""
    return f.rule == ID and f.metric is not None and "next_call_dispatch_ms" in (f.metric.detail or {})


def _calls_dispatch(m: HostMetrics, why: "_Diagnosis") -> bool:
    """Whether the gaps' host time is mostly the framework's dispatch of its compiled calls (``Gaps.avg_dispatch_ms``:
    at least half of the gap's host-caused time, where the framework names those calls) and no cause of its own: no
    OS wait, no reads of managed memory, no communication, no clock's pace, no time nothing recorded -- between two or
    more kept steps read with some confidence, as :func:`_turn_cost` asks."""
    g = m.gaps
    host = (g.avg_gap_ms or 0.0) - (g.avg_input_wait_ms or 0.0) - g.avg_held_ms - g.avg_profiler_ms
    return (Ctx(m).fw.has_dispatch and why.host_work and not why.unrecorded and not why.waited and not why.managed_ms
            and not why.paced and why.comm_ms < 0.5 * (g.avg_gap_ms or 0.0) and host > 0
            and g.avg_dispatch_ms >= 0.5 * host and m.steps.count >= 2 and m.steps.confidence != "low")


def _turn_cost(m: HostMetrics, why: "_Diagnosis") -> bool:
    """Whether the gaps' time is the host's own unrecorded code around a step's few calls -- where the step is too
    small for its dispatch, the rest of the turn's host cost (the Python that makes each call, a sync closing it, the
    loop) -- and not a cause of its own: no OS wait for a source, no reads of managed memory, no communication, no
    clock's pace, no recorded host work to move (an op between the steps is work of its own, whatever the step's size).
    Only between two kept steps read from the program's marks or the GPU's work with some confidence: one kept step or
    guessed boundaries leave the gaps a guess, the gaps' check's to grade down."""
    g = m.gaps
    return (why.unrecorded and not why.waited and not why.managed_ms and not why.paced
            and why.comm_ms < 0.5 * (g.avg_gap_ms or 0.0) and m.steps.count >= 2 and m.steps.confidence != "low")


def _gaps_finding(m: HostMetrics) -> "tuple[Finding, _Diagnosis] | None":
    """The gaps' finding and the diagnosis it rests on (None where the gaps are no finding): the check's, before the
    launch check's finding may tell the gaps' time as its step-level cause's (:func:`_told_by_launch`)."""
    ctx = Ctx(m)
    g = m.gaps
    if not g.count or g.avg_gap_ms is None or ctx.step_ms is None:
        return None
    p = _parts(m, ctx)
    if g.avg_gap_ms < T("step_gaps.min_gap_ms"):
        return None
    sev = grade(p.share, "step_gaps.warning", "step_gaps.critical")
    if sev is None:
        return None
    claims, save_ms = _ledger_saving(g, ctx.fw.has_dispatch, p.loss_ms + p.skew_ms, m.syncs.in_gaps_ledger_ms)
    private = bool(m.capture.gpu_thread_mode_private) or any(x.launch_thread_private for x in m.gpus)
    outside = outside_steps_ms(g, m)
    why = _diagnose(ctx, m, p, sev, private, outside, sum(v for g_, _, v in claims if g_ == "host"))
    if why.managed_ms:  # the reads' cause: what their fix gives back is the reads, the gaps' and the steps' (once)
        gaps_ms, inside = min(save_ms, why.managed_ms[0]), why.managed_ms[1]
        save_ms = gaps_ms + inside  # the reads, wherever the ledger paints them (``managed_read``): one wait's pool
        claims = [("host", "host_wait", save_ms)]
    metric = share_metric("step_gap_share", "Between-step gap (non-input) share of {step}", p.share,
                          "step_gaps.warning", severity=why.severity, detail=_detail(m, p, private, why, outside))
    if why.managed_ms and why.managed_ms[1] > 0:  # the reads inside the steps too: the finding is the reads'
        sev, metric = reads_metric(ctx, save_ms, why.severity, {"gap_share": metric.value,
                                                                **_detail(m, p, private, why, outside)})
        why = replace(why, severity=sev)
    one = m.steps.count < 2
    if one:  # the gaps of one kept step: no idle between two steady steps was seen (issue #37 deliverable 2)
        why = replace(why, severity=_at_most_warning(why.severity))
    f = finding(
        ctx, ID, why.severity, _summary(ctx, m, p, why) + (traced_python(ctx, save_ms) if why.host_work else "")
        + (_ONE_STEP if one else ""),
        title=_READS_TITLE if why.managed_ms and why.managed_ms[1] > why.managed_ms[0] else None,
        metric=metric,
        saving=saving(ctx, save_ms, why.assumption, claims),
        evidence=_evidence(ctx, g, p, why.comm_ms),
        windows=_windows(ctx, m),
        actions=why.actions,
    )
    if one:
        f.confidence = "low"
    return f, why


def reads_metric(ctx: Ctx, reads_ms: float, severity: str, detail: dict | None = None) -> tuple[str, Metric]:
    """(severity, metric) of a finding whose cause is the host's reads of managed memory the GPU wrote: the reads'
    share of the step (``reads_ms``, what the finding claims and saves) is its metric, graded by the gap thresholds
    (``severity`` where the share is under the warning level).  The gaps' check and the host-wait finding both read it:
    one cause, one metric and one grade, whichever finding holds the reads.

    Why: a finding that claims the reads wherever in the step they lie is graded by that time, and shows it.  Graded by
    the gaps' share alone, cestwc's ``report8`` (wild/counted_steps_rtx3090_solver) printed a metric of 5.5% and a
    warning beside its own saving of 430 us a step, 34% of the step; ``report7`` (wild/managed_flag_rtx3090_solver),
    the same solver, a warning at the device's share (48.7%) beside 316 us a step (31%) of reads -- the "never critical"
    of a wait for a source outside the capture, though the reads' fix is the program's own (h37-copy63)."""
    share = reads_ms / ctx.step_ms if ctx.step_ms else None
    sev = grade(share, "step_gaps.warning", "step_gaps.critical") or severity
    metric = share_metric("managed_read_share", "The host's reads of managed memory the GPU wrote, share of {step}",
                          share, "step_gaps.warning", severity=sev, detail=detail,
                          meaning="share of step time the GPU idles while the launching thread sleeps in its reads' "
                                  "page faults of managed memory the GPU wrote, between the steps and inside them")
    return sev, metric


#: Said where the gaps rest on one kept step.  Why low confidence and never critical: a gap is "between steps", and
#: with one step kept every piece of it lies beside a step left out (a warm-up, a step holding the profiler's own
#: work, a partial last one), so whether the idle recurs between steady steps is not shown (SURVEY h37-survey45: one
#: 240 us iteration of three read critical on 58 us of idle, its neighbours both dropped).
_ONE_STEP = (" Low confidence, so a warning at most: only one step was kept, so every gap here lies beside a step "
             "left out, and no gap between two steady steps was seen.")


#: The title where the host's reads of managed memory are the gaps' cause and lie mostly inside the steps: the finding
#: claims them all (:func:`managed_in_steps_ms`), more than the gaps hold.
_READS_TITLE = "The GPU idles while the host reads managed memory the GPU wrote, between the steps and inside them"


@dataclass(frozen=True)
class _Parts:
    """The mean gap split by what the host did in it (ms), and the share of its cycle the rule judges.  Why one
    value: the cause, the message, the detail and the evidence table all read the same split."""
    input_ms: float
    launch_ms: float
    other_ms: float
    #: the GPU holding the next step's work, its launch returned: no host's time (metrics' ``avg_held_ms``)
    held_ms: float
    unexplained_ms: float
    loss_ms: float
    skew_ms: float
    dispatch_ms: float
    #: the gap's idle that follows the program's syncs and blocking copies (``HostSyncs.in_gaps_ledger_ms``, less the
    #: parts taken out already): the waits' checks'
    waits_ms: float
    cycle_ms: float
    share: float
    #: the gap's idle while the program waited for the profiler's own work (``Gaps.avg_profiler_ms``): the capture's
    #: cost, no program's time (h37-ledger59)
    profiler_ms: float = 0.0


def _parts(m: HostMetrics, ctx: Ctx) -> _Parts:
    """Split the mean gap into input wait, launches, other host work, held work and the unexplained rest, and take
    the parts other rules own (input wait, loss scaling, a GPU's late start, JAX's dispatch, held work) out of the
    share this rule judges -- so one gap's time is never reported twice."""
    g = m.gaps
    input_ms = g.avg_input_wait_ms or 0.0
    launch_ms = g.avg_launch_ms or 0.0
    other_ms = g.avg_host_other_ms or 0.0
    held_ms = g.avg_held_ms
    profiler_ms = g.avg_profiler_ms  # the capture's own cost (the ledger's ``profiler``): no program's time
    unexplained = max(0.0, g.avg_gap_ms - input_ms - launch_ms - other_ms - held_ms - profiler_ms)
    # Dynamic loss scaling shows up as gaps too; its own rule reports it.
    ls = m.loss_scaling
    loss_ms = (ls.gap_ms_per_step or 0.0) if (ls.present and ls.dynamic) else 0.0
    # With several GPUs, a GPU that starts the step late (launch skew) shows a longer gap;
    # launch_skew reports that part.
    skew_ms = mean_start_offset_ms(m)
    # Where the framework dispatches compiled work (JAX), the host inside dispatch during a gap is the step's
    # dispatch cost: launch_bound reports it (step-level when the step is a few small calls).
    dispatch_ms = launch_ms if ctx.fw.has_dispatch else 0.0
    # the idle after the program's own waits (a step that ends in block_until_ready, .item(), a pageable copy): the
    # wait drained the queue, so the gap after it is the wait's (host_sync's, the copy check's) -- not host work to
    # move out of the step a second time (issue #37 class 3: H200 jax_train_block_until_ready, 156 us of its 545 us
    # gaps claimed by both)
    waits_ms = sum(v for c, v in m.syncs.in_gaps_ledger_ms.items() if c not in _skipped(ctx.fw.has_dispatch))
    non_input_ms = max(0.0, g.avg_gap_ms - input_ms - loss_ms - skew_ms - dispatch_ms - held_ms - waits_ms
                       - profiler_ms)
    # of the time the gaps sit in (a step's start to the next's: the step, and the gap where it lies outside the
    # steps), never of the mean step -- a part never above its whole (issue #37 survey: "176.3% of the 815 us step"
    # on two steps guessed from GPU bursts, the 1.45 ms gap inside the first)
    cycle_ms = g.avg_cycle_ms or ctx.step_ms
    p = _Parts(input_ms=input_ms, launch_ms=launch_ms, other_ms=other_ms, held_ms=held_ms,
               unexplained_ms=unexplained, loss_ms=loss_ms, skew_ms=skew_ms, dispatch_ms=dispatch_ms,
               waits_ms=waits_ms, cycle_ms=cycle_ms, share=non_input_ms / cycle_ms, profiler_ms=profiler_ms)
    return replace(p, share=(non_input_ms + _unsaid_ms(p, g)) / cycle_ms)


def _unsaid_ms(p: _Parts, g) -> float:  # noqa: ANN001 - Gaps
    """The parts of the mean gap the finding leaves unsaid (under :func:`_floor`: a twentieth of the gap), other than
    the input wait its "outside input wait" names: the share keeps them.  Why: the sentence reads "idle G between
    steps ... S of the step outside input wait"; a part left out of S and said nowhere makes S another number than
    G less what is named.  Wrong assumption fixed (h37-auditleft31): *a part too small to name is still out of the
    share* -- wild/cuda_only_a4000_swin_fwd read "idle 1.64 ms ... 13.7% of the 11.5 ms step", its 62 us of dispatch
    (a twentieth of the gap is 82 us) out of the share and unsaid: 1.64 / 11.52 is 14.3%."""
    floor = _floor(p, g)
    return sum(v for v, _ in _owned(p)[1:] + [(p.held_ms, "")] if 0 < v < floor)


@dataclass
class _Diagnosis:
    """What fills the gaps, what to do about it and what the saving assumes.  Why one value: the summary, the
    detail and the actions must tell the same story, and the severity may be lowered where the cause is a guess."""
    cause: str
    actions: list
    assumption: str
    severity: str
    #: the launching thread's OS wait per gap (:func:`outside_wait_ms`), 0 where it is not most of the host's time
    waited: float
    #: the communication libraries' part of each gap (:func:`communication_ms`)
    comm_ms: float
    #: nothing recorded covers most of the host's part of the gaps: seeing it comes first
    unrecorded: bool
    #: a smaller unrecorded part, yet a large share of the step: named beside the host work
    unseen: bool
    #: the cause stayed the host's recorded work, whose ops and ranges the summary names
    host_work: bool
    #: of the gaps' unrecorded time, the part right before a Python launcher's bare launches (ms per step,
    #: :func:`_launcher_in_gaps`)
    launcher_ms: float = 0.0
    #: where the cause is the host's reads of managed memory: (the reads in the gaps inside the steps' windows, those
    #: inside the steps beside the gaps: :func:`managed_in_steps_ms`), ms per step -- what the finding claims; () else
    managed_ms: tuple[float, float] = ()
    #: the unrecorded gaps are as regular as a clock in a program with no ML framework (:func:`_clock_paced`): likely
    #: a source's pace, no host cost of the step's own
    paced: bool = False


def _diagnose(ctx: Ctx, m: HostMetrics, p: _Parts, sev: str, private: bool, outside: float,
              claimed_ms: float = 0.0) -> _Diagnosis:
    """Name the gaps' cause -- the host's own work or its launches, then, where the host's part is mostly one thing
    the capture shows, communication, an OS wait or time nothing recorded -- with the fixes in the order they pay.
    Why apart from the numbers: the split is measured, the cause is read from it, and each cause has its own fix
    and its own assumption about the saving."""
    g = m.gaps
    host_ms = p.other_ms + p.unexplained_ms
    ops = _cpu_ops(m, p, host_ms, ctx.a_step)
    if ops and all(ctx.fw.traced_frame(n) for n, _ in _named_ops(m, p)):
        ops = ""  # the Python tracer's calls (XPlane's ``$time sleep``: host events), no ops: said as calls
    calls = _own_calls(m, p, host_ms, ctx.a_step)
    dispatched = not ops and _dispatch_ranges(m, p, host_ms)
    py_calls = "" if ops or calls or dispatched else _py_calls(ctx, m, p, host_ms)
    host_work = (devices.OWN_CALLS_WORDS if calls else
                 ctx.fw.label("step_gaps:cpu_ops" if ops else "step_gaps:dispatch" if dispatched else
                              "step_gaps:py_calls" if py_calls else "step_gaps:host_work"))
    causes = {host_work: host_ms, ctx.fw.label("step_gaps:launch"): p.launch_ms - p.dispatch_ms}
    cause = max(causes, key=causes.get)
    actions = ctx.fw.fixes_for(ID, _variants(host_ms, p.launch_ms, private))
    if calls and cause == host_work:  # the program's own runtime calls: asked less often, not moved off the GPU
        actions = [action(devices.own_calls_fix(calls))] + actions
    elif ops and cause == host_work:  # the gaps hold the host's own ops, no wait: the fix moves those, not syncs
        own = ctx.fw.extra(f"{ID}:cpu_ops", ops=ops)
        actions = own + [a for a in actions if a not in own and a not in ctx.fw.extra(f"{ID}:host_work")]
    elif py_calls and cause == host_work:  # the program's own Python calls, no sync: moved off the step's path
        own = [action(PY_CALLS_OFF_PATH.format(calls=py_calls))]
        actions = own + [a for a in actions if a not in ctx.fw.extra(f"{ID}:host_work")]
    elif dispatched and cause == host_work:  # the next step's own dispatch: fewer launches, then the rest
        own = ctx.fw.extra(f"{ID}:dispatch")
        actions = own + [a for a in actions if a not in own]
    unrecorded = cause == host_work and p.unexplained_ms >= 0.5 * (g.avg_gap_ms - p.held_ms)
    # a smaller part of the gaps, yet a large share of the step: named beside the host work, with the way to see it
    unseen = (cause == host_work and not unrecorded
              and p.unexplained_ms >= T("step_gaps.unrecorded_share") * p.cycle_ms)
    # a thread off its CPU runs no code, whatever op or range spans it: that part of the host's time is a wait
    waited = outside_wait_ms(g, host_ms) if cause == host_work else 0.0
    # a communication library's calls (MPI's, NCCL's ranges in their domain) are the host waiting on its peers
    comm_ms = communication_ms(g, host_ms) if cause == host_work and not waited else 0.0
    managed: tuple[float, float] = ()  # the reads of managed memory (gaps', steps'), where those are the cause
    paced = ""  # the unrecorded gaps' clock-like spacing, where that is read (:func:`_clock_paced`)
    assumption = ("the between-step gap shrinks to its input-wait part (host work moved out of the step or run every N "
                  "steps)")
    if dispatched and cause == host_work:  # the dispatch shrinks with the launches, it does not leave the step
        assumption = ("the next step's dispatch shrinks to its input-wait part as its launches become fewer and larger "
                      "(compiled, or replayed as a graph)")
    if outside >= 0.5 * g.avg_gap_ms:  # the gaps are no step's time: moving work out of the step gives nothing back
        assumption = ("the gaps lie between the steps' windows, so no step's time holds them: shrinking them shortens "
                      "the run, not a step")
        if gap_inside_steps(g.avg_gap_ms, outside, ctx.step_ms):  # the rest lies in the steps, and is what the saving counts
            assumption = (f"the part of the gaps inside the steps' windows shrinks to its input-wait part; the rest "
                          f"({pct_part(outside / g.avg_gap_ms)}) lies between the windows, where no step's time holds that "
                          f"part: shrinking it shortens the run, not a step")
    if comm_ms >= 0.5 * g.avg_gap_ms:  # the host's time in the gaps is mostly its wait on the other processes
        cause = (f"the host waiting for the other processes: {ms(comm_ms)} {ctx.a_step} of it is communication "
                 f"({_comm_names(g)}), a library's calls waiting on their peers, not the program's code")
        actions = [COMMUNICATE] + actions
    elif waited and managed_read_ms(g) >= 0.5 * waited:  # asleep in its loads of managed memory: reads, not a source
        read = min(managed_read_ms(g), waited)  # of the gaps' host time, as the host-wait finding caps its own
        inside_share = max(0.0, 1.0 - outside / g.avg_gap_ms)  # the gaps' part inside the steps' windows
        managed_in = managed_in_steps_ms(m, read * inside_share, claimed_ms)
        managed = (read * inside_share, managed_in)
        inside = (f", and {ms(managed_in)} {ctx.a_step} more in reads inside the steps (the same reads' cause, "
                  f"claimed here once)" if managed_in > 0 else "")
        cause = (f"the host reading managed memory the GPU wrote: the thread that launches the next work slept in the "
                 f"reads' page faults, {ms(read)} {ctx.a_step} ({pct(read / g.avg_gap_ms)}){inside}, "
                 f"where no call is recorded, only the pages' migrations to the host -- a read of the GPU's value, as "
                 f"a sync is{wait_covered(p.other_ms, p.unexplained_ms)}")
        actions = managed_read_actions(ctx)
        assumption = READ_MANAGED_ASSUMPTION
    elif waited:  # the host ran no code there: it waited for something the capture does not hold
        cause = (f"the host waiting for something outside the capture (an input device, a file, a socket, a timer): "
                 f"the thread that launches the next work waited in the OS, running no code, {ms(waited)} {ctx.a_step} "
                 f"({pct(waited / g.avg_gap_ms)}){wait_covered(p.other_ms, p.unexplained_ms)}")
        actions = ctx.fw.extra(f"{ID}:outside") or [WAIT_SOURCE]  # no host work to move: the source is the fix
        assumption = WAIT_SOURCE_ASSUMPTION
        # whether the source can deliver faster (a camera's frame rate) is outside the capture: never critical
        sev = _at_most_warning(sev)
    elif unrecorded:  # what fills the gap is not in the capture: seeing it comes first
        paced = _clock_paced(g, ctx, m)
        cause = _unrecorded_kind(ran_witness(m), paced, f"{ms(p.unexplained_ms)} {ctx.a_step}: no runtime call, "
                                                            f"op, range or OS call covers it", ctx.no_host)
        actions = (ctx.record_host_fix(f"{ID}:unrecorded") or [RECORD_HOST]) + actions
        if paced:  # likely a source's clock the program cannot speed up: the saving is a guess, no more than a warning
            sev = _at_most_warning(sev)
    elif unseen:
        actions = actions[:1] + (ctx.record_host_fix(f"{ID}:unrecorded") or [RECORD_HOST]) + actions[1:]
    if _comm_part(g, comm_ms, ctx.a_step) and COMMUNICATE not in actions:  # a part of the gaps: its fix after the first
        actions = actions[:1] + [COMMUNICATE] + actions[1:]
    actions = _made_on_host(ctx, g, cause == host_work) + actions
    launcher = _launcher_in_gaps(m, p, waited)
    if launcher > 0:  # whose the unrecorded time is, and its own fix, beside the way to record it
        record = ctx.record_host_fix(f"{ID}:unrecorded") or [RECORD_HOST]
        actions = after_record_fix(actions, record, ctx.fit(ctx.fw.extra(f"{ID}:launcher")))
    if p.input_ms > 0.2 * g.avg_gap_ms:
        actions.append(action(f"{ms(p.input_ms)} {ctx.a_step} of the gaps is input wait: see the input-bound finding (guide §1.1)."))
    return _Diagnosis(cause=cause, actions=actions, assumption=assumption, severity=sev, waited=waited,
                      comm_ms=comm_ms, unrecorded=unrecorded, unseen=unseen, host_work=cause == host_work,
                      launcher_ms=launcher, managed_ms=managed, paced=bool(paced))


def _launcher_in_gaps(m: HostMetrics, p: _Parts, waited: float) -> float:
    """The part of the gaps' unrecorded time (ms per step) in a Python launcher's silence right before its bare
    driver launches (``HostMetrics.unrecorded_before_launcher_in_gaps_ms``, the launcher's one measure's part in the
    gaps), at most that unrecorded whole; 0 where the host's time in the gaps is an OS wait (a thread that waited ran
    no launcher).  Why: a Triton kernel called outside torch.compile opening each step spends its launcher's time
    in the gap before it (h37-launcher2), which the gaps' check otherwise calls only "not recorded"."""
    return 0.0 if waited else min(m.unrecorded_before_launcher_in_gaps_ms, p.unexplained_ms)


def after_record_fix(actions: list, record: list, fix: list) -> list:
    """``fix`` placed right after the fixes that ask to record the host (``record``) where the list holds them (the
    two are read together: see the time, and what cuts the launcher's part of it), else after the first fix."""
    at = max((i + 1 for i, a in enumerate(actions) if a in record), default=1)
    return actions[:at] + [a for a in fix if a not in actions] + actions[at:]


def launcher_words(ctx: Ctx, launcher_ms: float, launches: float, a_step: str = "") -> str:
    """The clause that names the part of a finding's unrecorded time a Python launcher spends right before its own
    kernel launches (``launcher_ms``, at most the finding's whole, and its ``launches`` per step), in the framework's
    words (its ``unrecorded:launcher`` label; ``a_step``: the amount's "a step" where the sentence needs it); "" where
    there is none.  Why: on a Triton microbenchmark (survey h37-survey44) a third of the time the report called
    unrecorded precedes launches no op makes, which says whose code it is and what cuts it."""
    if launcher_ms <= 0:
        return ""
    amount = f"{ms(launcher_ms)} {a_step}" if a_step else ms(launcher_ms)
    return ctx.fw.label("unrecorded:launcher", ms=amount, launches=ctx.count_per_step(launches, "launch", "launches"))


def launcher_detail(launcher_ms: float, launches: float) -> dict[str, float]:
    """The launcher's part of a finding's unrecorded time and its launches per step, for the finding's metric (none
    without)."""
    if launcher_ms <= 0:
        return {}
    return {"launcher_ms": round(launcher_ms, 3), "launcher_launches_per_step": round(launches, 1)}


def _cpu_ops(m: HostMetrics, p: _Parts, host_ms: float, a_step: str = "a step") -> str:
    """The host's ops that fill the gaps, in words (```aten::repeat` 5.66 ms a step``), where they are what the gaps
    hold: the recorded ops are most of the host's part of the gaps and no sync or blocking copy of the program leaves
    its idle there (``HostSyncs.in_gaps_ledger_ms`` under a tenth of the mean gap); "" otherwise.

    Why: a gap's fix follows what it holds (issue #37 class 3).  A gap after ``.item()`` is the sync's, and keeping
    reads out of the step is its fix; a gap the host fills with its own tensor work (H200 ``torch_unrecorded_host_work``:
    ``aten::repeat`` of a numpy batch, 5.66 ms a step, no sync in any gap) waits for no GPU -- "keep .item() out of the
    step" there names a cause the capture does not hold."""
    g = m.gaps
    if not g.avg_gap_ms or not g.top_ops or host_ms <= 0 or p.other_ms < 0.5 * host_ms:
        return ""
    if sum(m.syncs.in_gaps_ledger_ms.values()) >= 0.1 * g.avg_gap_ms:
        return ""
    named = _named_ops(m, p)
    if not named:
        return ""
    return ", ".join(f"`{name}` ({ms(v)} {a_step})" for name, v in named)


#: The fix where the program's own Python calls, recorded by the profiler and no op's, fill the gaps (``{calls}``).
PY_CALLS_OFF_PATH = ("Take the Python calls that fill the gaps ({calls}) off the step's path: the GPU idles while the "
                     "loop's thread runs them and no op or sync is among them. Run them in another thread or process "
                     "(a data loader's workers, where they make the next batch), every N steps, or not at all.")


def _py_calls(ctx: Ctx, m: HostMetrics, p: _Parts, host_ms: float) -> str:
    """The program's Python calls the profiler recorded (``Gaps.top_frames``: time no op holds) that fill the gaps,
    in words (```sleep` 10.0 ms a step``), where they are most of the host's recorded work there and no sync or
    blocking copy leaves a tenth of the gap's idle; "" otherwise.

    Why: a Python call is recorded host time (``with_stack``'s ``python_function``), and says where the host was --
    a loop's ``time.sleep`` of 10 ms between its steps read "host work between steps (Python, .item() and other
    syncs)" with the fix for a sync first, no call named (h37-host71; issue #37 classes 3 and 4)."""
    g = m.gaps
    # a Python tracer's calls are host events (XPlane's ``$time sleep``), with_stack's are frames apart
    frames = g.top_frames + [(n, v) for n, v in g.top_ops if ctx.fw.traced_frame(n)]
    if not g.avg_gap_ms or not frames or host_ms <= 0 or p.other_ms < 0.5 * host_ms:
        return ""
    if sum(m.syncs.in_gaps_ledger_ms.values()) >= 0.1 * g.avg_gap_ms:
        return ""
    named = [(n, v) for n, v in frames if v >= 0.1 * g.avg_gap_ms]
    if not named or sum(v for _, v in named) < 0.5 * p.other_ms:
        return ""
    return ", ".join(f"`{ctx.fw.frame_label(n)}` {ms(v)} {ctx.a_step}" for n, v in named)


def _own_calls(m: HostMetrics, p: _Parts, host_ms: float, a_step: str = "a step") -> str:
    """The program's own runtime calls that fill the gaps (``metrics.breakdown.bare_runtime_calls``: a query, an
    event's record, no op around them), in words (```cudaMemGetInfo` (700 us a step)``), where they are most of the
    host's recorded work there; "" otherwise.

    Why apart from :func:`_cpu_ops`: a call is recorded time, the call's own, whatever syncs the gaps also hold -- an
    800 us ``cudaMemGetInfo`` each step beside a ``cudaDeviceSynchronize`` was "host work between iterations" with no
    fix of its own (h37-ledger69); its fix is to ask less often, not to move tensor work off the host."""
    g = m.gaps
    if not g.avg_gap_ms or not g.top_ops or host_ms <= 0 or p.other_ms < 0.5 * host_ms:
        return ""
    named = [(name, v) for name, v in g.top_ops if devices.is_runtime_call(name) and v >= 0.1 * g.avg_gap_ms]
    if not named or sum(v for _, v in named) < 0.5 * p.other_ms:
        return ""
    return ", ".join(f"`{name}` ({ms(v)} {a_step})" for name, v in named)


def _named_ops(m: HostMetrics, p: _Parts) -> list[tuple[str, float]]:
    """The ops (or the program's own ranges) :func:`_cpu_ops` names, with their ms a step; the runtime calls no op
    encloses among them (``metrics.breakdown.bare_runtime_calls``)."""
    g = m.gaps
    marked = {name for name, _ in g.top_ranges}
    named = [(name, v) for name, v in g.top_ops if name not in marked and v >= 0.1 * g.avg_gap_ms]
    if sum(v for _, v in named) < 0.5 * p.other_ms:
        named = _own_ranges(g, p, set(m.ranges_computing))
    return named


def _dispatch_ranges(m: HostMetrics, p: _Parts, host_ms: float) -> bool:
    """Whether the gaps' recorded host work lies in the program's ranges that launch the steps' kernels
    (``HostMetrics.ranges_computing``: each at least a tenth of the mean gap, together at least half the host's other
    work, and no sync or blocking copy leaving a tenth of the gap's idle): the next step's own compute, its ops
    dispatched before their first launch.

    Why: such a gap is no batch built ahead and no sync's: a toy GNN step on an RTX 5070 Ti (DAntyNoel/GFNonGNN,
    ``GNN_forward``'s linear layer dispatched ~114 us before its first kernel, ~20 us of GPU work a 1.08 ms step) is
    host-bound by dispatch, whose fix is fewer, larger launches (compiling, graphs) -- not a DataLoader worker
    (h37-hunt69)."""
    g = m.gaps
    computing = set(m.ranges_computing)
    if not g.avg_gap_ms or host_ms <= 0 or not computing or p.other_ms < 0.5 * host_ms:
        return False
    if sum(m.syncs.in_gaps_ledger_ms.values()) >= 0.1 * g.avg_gap_ms:
        return False
    return bool(_filling_ranges(g, p, computing.__contains__))


def _own_ranges(g: Gaps, p: _Parts, computing: AbstractSet[str] = frozenset()) -> list[tuple[str, float]]:
    """The program's own ranges (``record_function``, NVTX) that fill the gaps' host work where its outermost ops are
    those ranges themselves (each at least a tenth of the mean gap, together at least half the host's other work;
    none of them communication, none a range that launches the steps' kernels: ``computing``,
    ``HostMetrics.ranges_computing``); [] otherwise.

    Why not a range that launches the steps' kernels: it is the step's own compute (a model's forward), and its host
    time in the gap is the dispatch of its ops before their first launch -- no batch built ahead, no work a DataLoader
    worker could take.  A toy GNN step on an RTX 5070 Ti (DAntyNoel/GFNonGNN ``profiler_results.json``: a 100 x 10
    linear layer, ~20 us of GPU work a 1.08 ms step) read "Take the CPU tensor work off the step's path: `GNN_forward`
    ... do it in the Dataset's __getitem__ or the collate_fn" for its forward's dispatch (h37-hunt69).

    Why: a loop that marks its phases (``h2d``, ``optimizer``) records its work between steps as ranges, not as bare
    ops, and :func:`_cpu_ops` named only ops outside the ranges -- so gaps filled by the program's own ``h2d`` range,
    no sync anywhere in them, were told "host work between steps (Python, .item() and other syncs)" and to keep
    ``.item()`` out of the step (duoan/playground-cuda ``torch_baseline``, an RTX 5080 lab whose steps read no value
    between ``torch.cuda.synchronize()`` calls that wait for an already idle GPU; h37-huntk67)."""
    comm = _comm_set(g)
    return _filling_ranges(g, p, lambda name: name not in comm and name not in computing)


def _filling_ranges(g: Gaps, p: _Parts, keep: Callable[[str], bool]) -> list[tuple[str, float]]:
    """The gaps' ranges ``keep`` takes that each hold at least a tenth of the mean gap, where together they hold at
    least half the host's other work; [] otherwise.  One measure of "the gaps' host work is these ranges" for
    :func:`_own_ranges` (the program's own phases) and :func:`_dispatch_ranges` (the next step's compute)."""
    ranges = [(name, v) for name, v in g.top_ranges if v >= 0.1 * g.avg_gap_ms and keep(name)]
    return ranges if sum(v for _, v in ranges) >= 0.5 * p.other_ms else []


def _at_most_warning(sev: str) -> str:
    """A critical severity lowered to a warning: where the cause is a guess or lies outside the program (a source's
    pace), the finding must not claim the certainty a critical one does."""
    return "warning" if sev == "critical" else sev


def _summary(ctx: Ctx, m: HostMetrics, p: _Parts, why: _Diagnosis) -> str:
    """The finding's sentence: how long the GPU idles between steps, what share of what whole, what fills it and
    where to look.  Apart from the diagnosis because each clause reads the split and the cause alike."""
    g = m.gaps
    return (f"The GPU is idle {ms(g.avg_gap_ms)} between steps on average (max {ms(g.max_gap_ms)})"
            f"{_held_part(p.held_ms, g, _floor(p, g))}{_others_part(p, g)}, "
            f"{pct(p.share)} of "
            f"{_whole(p.cycle_ms, ctx.step_ms, g.avg_step_ms)} outside input wait; most of it is {why.cause}"
            f"{_named(g, why.host_work and not why.waited, ctx.fw.frame_label)}"
            f"{'; ' + words if (words := launcher_words(ctx, why.launcher_ms, m.launcher_launches_in_gaps, ctx.a_step)) else ''}"
            f"{_waited(g, 'named by the trace' if why.waited else '', ctx.a_step)}"
            f"{_comm_part(g, why.comm_ms, ctx.a_step) if why.comm_ms < 0.5 * g.avg_gap_ms else ''}"
            f"{_unseen_part(min(p.unexplained_ms, p.share * p.cycle_ms), p.cycle_ms, ctx.a_step, ctx.step_noun) if why.unseen and not why.waited else ''}."
            f"{_window_share(g, m, _holder(why.waited, why.unrecorded, bool(m.waits_traced)))}")


def _detail(m: HostMetrics, p: _Parts, private: bool, why: _Diagnosis, outside: float) -> dict:
    """The metric's detail: the split's numbers a reader (or the JSON's user) checks the share against."""
    g = m.gaps
    return {"avg_gap_ms": g.avg_gap_ms, "max_gap_ms": g.max_gap_ms,
            "input_wait_ms": p.input_ms, "launch_ms": p.launch_ms,
            "host_other_ms": p.other_ms, "unexplained_ms": p.unexplained_ms,
            "gpu_private_threads": private, "outside_wait_ms": why.waited,
            "avg_cycle_ms": p.cycle_ms,
            **({"gap_steps_avg_ms": g.avg_step_ms} if g.avg_step_ms is not None else {}),
            **({"outside_steps_ms": outside} if outside else {}),
            **launcher_detail(why.launcher_ms, m.launcher_launches_in_gaps),
            **({"next_call_dispatch_ms": g.avg_dispatch_ms} if _calls_dispatch(m, why) else {})}


def _evidence(ctx: Ctx, g: Gaps, p: _Parts, comm_ms: float) -> list:
    """The tables behind the finding: where the gap time goes, the longest gaps, and the host ops, communication
    ranges, program ranges and OS waits in the gaps -- each only where the capture holds any."""
    rows = [[x.after_step, x.gpu, x.gap_ms, x.input_wait_ms, x.launch_ms, x.host_other_ms, x.unexplained_ms]
            for x in sorted(g.gaps, key=lambda x: -x.gap_ms)[:20]]
    return [
        table(f"Where the gap time goes (ms {ctx.per_step}{'' if ctx.one_step else ', on average'})", ["cause", "ms"],
              [["input wait", p.input_ms], [ctx.fw.label("step_gaps:launch"), p.launch_ms],
               ["other host work", p.other_ms],
               *([["of the host's time: communication (waiting on other processes)", round(comm_ms, 4)]]
                 if comm_ms else []),
               ["dynamic loss scaling", p.loss_ms], ["late start of a GPU (launch skew)", p.skew_ms],
               *([["the GPU holding the next step's work, its launch returned", round(p.held_ms, 4)]]
                 if p.held_ms else []),
               ["unexplained", p.unexplained_ms]]),
        table("Longest gaps", ["after step", "gpu", "gap ms", "input wait ms", "launch ms", "host other ms",
                               "unexplained ms"], rows),
        *([table(f"Host ops in the gaps (the busiest thread's outermost ops; ms {ctx.per_step})", ["op", "ms"], ops)]
          if (ops := [[name, v] for name, v in g.top_ops if name not in _comm_set(g)]) else []),
        *([table("Communication libraries' ranges in the gaps (MPI, NCCL, NVSHMEM or UCX, in their own NVTX "
                 f"domain: the host waiting on other processes, not the program's code; ms {ctx.per_step})",
                 ["range", "ms"], [[name, v] for name, v in g.top_comm_ranges])] if g.top_comm_ranges else []),
        *([table("The program's own ranges in the gaps (the busiest thread's outermost ranges below the step; "
                 f"ms {ctx.per_step})", ["range", "ms"], [[name, v] for name, v in g.top_ranges])] if g.top_ranges else []),
        *([table("OS waits of the thread launching the next work during the gaps (OS runtime or scheduler trace)",
                 ["call", "ms per step", "most ms in one gap"], [list(x) for x in g.top_os_waits])]
          if g.top_os_waits else []),
    ]


def _windows(ctx: Ctx, m: HostMetrics) -> list[TimeWindow]:
    """The three longest gaps as time windows, so the trace viewer opens where the GPU idles."""
    g = m.gaps
    windows = []
    order = sorted(m.steps.windows, key=lambda w: w.start_ms)
    by_step = {w.step: k for k, w in enumerate(order)}
    for x in sorted(g.gaps, key=lambda x: -x.gap_ms)[:3]:
        k = by_step.get(x.after_step)
        if k is not None:
            w = order[k]
            # a gap ends where the next step's work begins: no later than that step's end (a guessed step's window
            # runs start to start and holds its gap, so step end + gap would point past the next step); a gap cut out
            # of the steps (nothing recorded in it) ends at the next step's start, not at this one's end
            anchor = max(w.end_ms, order[k + 1].start_ms) if k + 1 < len(order) else w.end_ms
            end = anchor + x.gap_ms
            if k + 1 < len(order):
                end = min(end, max(order[k + 1].end_ms, anchor))
            windows.append(TimeWindow(host=ctx.host, label=f"gap after step {x.after_step} ({ms(x.gap_ms)})",
                                      start_ms=round(anchor - x.gap_ms, 3), end_ms=round(end, 3),
                                      gpu=x.gpu, step=x.after_step))
    return windows


#: How to see the host's own code a gap holds where the framework gives no way of its own.
RECORD_HOST = action("Record what the host does between its GPU work: mark that code with named ranges (NVTX ranges, "
                     "the framework's trace annotations) or turn on the profiler's CPU sampling or Python tracing, "
                     "then profile again.")


#: What to do where the host waited off the CPU between its GPU work, where the framework gives no words of its own.
WAIT_SOURCE = action("Find what the host waits for between its GPU work -- the source that paces the loop (a camera's or "
                     "sensor's frame rate, a file or socket reader, a timer, another thread's lock) -- and read the next "
                     "input while the GPU works on this one (a reader thread, double buffers); trace the OS runtime "
                     "to name the call it waits in.")

#: What :data:`WAIT_SOURCE`'s saving assumes.
WAIT_SOURCE_ASSUMPTION = ("the host's wait for its source overlaps the GPU's work (the next input read while the GPU "
                          "works on this one), or the source delivers faster")

#: A one-pass program's wait after its last GPU work: its results written (``rules.host_waits_finding``).
WRITE_OUTPUT = action("The wait follows the last kernel: the program writing its results (the OS runtime trace "
                      "names the call: pwrite64, write, fsync). Where the output comes in parts, write each part on a "
                      "thread of its own or with asynchronous I/O while the GPU computes the next, in few large "
                      "writes; where it needs all of the GPU's work, it is the program's tail outside the GPU's "
                      "work -- time the GPU part apart from it.")


#: The host's waits in its reads of managed memory the GPU wrote (``rules.host_waits_finding``), where the framework
#: gives no words of its own.
READ_MANAGED = action("Read the values the GPU computes (a stop flag, a count) without moving their page back and "
                      "forth: copy each into pinned host memory with an asynchronous copy and wait for that copy "
                      "alone, or keep the value in pinned host memory the GPU writes directly, or advise the managed "
                      "memory's preferred location to the host -- a plain load of managed memory the GPU last "
                      "wrote stops the thread while the driver moves the page, and the next kernel that touches it "
                      "moves it back.")

#: What :data:`READ_MANAGED`'s saving assumes.
READ_MANAGED_ASSUMPTION = ("the host's read of the GPU's value takes a copy's few microseconds instead of a page "
                           "fault's service, so the thread is back on the CPU as the value is ready")

#: What to do where the host's time between its GPU work is a communication library's wait on its peers.
COMMUNICATE = action("Overlap the communication with the GPU's work: post it non-blocking (MPI_Isend / MPI_Irecv, "
                     "NCCL on a stream of its own) before the next kernels and wait for it only where its data is "
                     "needed; with a CUDA-aware MPI or NCCL pass device buffers, so no copy to the host comes first; "
                     "a wait that stays long is another process arriving late -- profile every rank to see which.")


def gap_inside_steps(gap_ms: float, outside_ms: float, step_ms: float | None = None) -> bool:
    """Whether a part of the mean gap that shows (half a percent) lies inside the steps' windows, beside the part
    :func:`outside_steps_ms` finds between them: that part is step time, and the saving's (rocprof_aiter_mi355x: two
    gaps inside the guessed steps, 7.84 ms a step, beside the 400.5 ms stretch the steps were cut at).  It shows
    against the gap or against the step (``step_ms``) it is a part of: a gap hundreds of times the step hides in its
    half percent a part that is a visible share of the step, and the saving a share of the step (h37-lawseeds: 10 us
    of a 37.6 ms gap inside a 72 us step read "no step's time holds it" beside a saving of 1.4% of the step)."""
    inside = gap_ms - outside_ms
    return inside > 0.005 * gap_ms or (step_ms is not None and inside > 0.005 * step_ms)


def outside_steps_ms(g, m: HostMetrics) -> float:  # noqa: ANN001 - Gaps
    """The mean part of a gap (over the gaps' rows) that lies between its two steps' windows, in no step at all: a
    stretch the guessed steps were cut at because nothing was recorded in it (``steps.place._cut_unrecorded``), or
    the time between device-defined steps.  Why: a gap inside a step's window is that step's time and shrinking it
    shortens the step; one between the windows is no step's, whatever the steps' confidence (h37-left37)."""
    order = sorted(m.steps.windows, key=lambda w: w.start_ms)
    nxt = {w.step: order[k + 1] for k, w in enumerate(order[:-1])}
    own = {w.step: w for w in order}
    # a partial gap is the part its kept step's window holds (the step beside it dropped: h37-walk25, a step holding
    # the profiler's buffer request dropped between two kept ones) -- none of it between windows, whatever the next
    # kept window's distance: that stretch holds the dropped step's window, not time outside every step
    parts = [0.0 if x.partial else min(x.gap_ms, max(0.0, nxt[x.after_step].start_ms - own[x.after_step].end_ms))
             for x in g.gaps if x.after_step in nxt]
    # over the steps the mean gap is over (``Gaps.count``: one gap a kept step, ``metrics.breakdown.summarize_gaps``),
    # so it is a part of that mean: over the gaps alone it read "outside every step's window (123.6% of it)" of
    # rocprof_aiter_mi355x's 108.0 ms mean gap, a mean of 3 gaps set against a mean over 4 steps (h37-review14)
    return sum(parts) / max(g.count, len(parts)) if parts else 0.0


def _comm_set(g) -> set:  # noqa: ANN001 - Gaps
    """The names of the communication libraries' ranges in the gaps."""
    return {name for name, _ in g.top_comm_ranges}


def communication_ms(g, host_ms: float) -> float:  # noqa: ANN001 - Gaps
    """The part of each gap's host time (``host_ms``) inside a communication library's ranges (MPI's, NCCL's in their
    NVTX domain): the host waiting on its peers (a receive for another rank's data, a send for the receiver), which
    runs none of the program's code (pipit's MPI saxpy: 44.7 ms of each 182 ms gap in ``MPI_Send`` / ``MPI_Recv``).
    The named ranges are the outermost of one thread's, so disjoint; never above the host time they lie in."""
    return min(sum(v for _, v in g.top_comm_ranges), host_ms)


def _comm_names(g) -> str:  # noqa: ANN001 - Gaps
    """The communication ranges of the gaps in words: ```MPI_Recv` 22.5 ms, `MPI_Send` 22.2 ms``."""
    return ", ".join(f"`{name}` {ms(v)}" for name, v in g.top_comm_ranges)


def _comm_part(g, comm_ms: float, a_step: str = "a step") -> str:  # noqa: ANN001 - Gaps
    """The clause naming the gaps' communication where it is a part (a tenth of the mean gap or more) but not most."""
    if not g.avg_gap_ms or comm_ms < 0.1 * g.avg_gap_ms:
        return ""
    return (f"; {ms(comm_ms)} {a_step} of it is communication ({_comm_names(g)}: a library's calls waiting on the other "
            f"processes, not the program's code)")


def managed_in_steps_ms(m: HostMetrics, gaps_ms: float, claimed_ms: float) -> float:
    """The host's reads of managed memory the GPU wrote that lie inside the steps but outside their gaps (ms per step
    and GPU): the reads in the ledger's host share of the step (``HostMetrics.idle_in_os_waits``, ``MANAGED_READ``)
    less the gaps' (``gaps_ms``: their part inside the steps' windows), never above the ledger's host share
    (``host_compute`` and ``other``) less what the gaps' claim on it already holds (``claimed_ms``).

    Why: a solver that reads its flag from managed memory sleeps in the load's page fault where the step's launches
    pause, not only between steps; the gaps' check named the read cause for the gaps' part (180 us a step) and the
    same reads inside the step (120 us) stayed the ledger's ``other`` that no finding named (the generator's
    ``write_counted_solver(read="managed", fault_us=300)``, h37-copy62).  The cause is one, so is its finding."""
    reads = dict(m.idle_in_os_waits).get(MANAGED_READ, 0.0) - gaps_ms
    held = m.breakdown.host_compute + m.breakdown.managed_read + m.breakdown.other - claimed_ms
    return max(0.0, min(reads, held))


def managed_read_ms(g) -> float:  # noqa: ANN001 - Gaps
    """ms per step of the gaps the launching thread slept in its reads of managed memory the GPU wrote
    (``metrics.types.MANAGED_READ``: page faults between its calls)."""
    return sum(avg for name, avg, _ in g.top_os_waits if name == MANAGED_READ)


def outside_wait_ms(g, host_ms: float) -> float:  # noqa: ANN001 - Gaps
    """The part of each gap's host time (``host_ms``: its recorded host work and the time nothing recorded covers)
    that the thread launching the next work spent waiting in the OS -- off the CPU in the scheduler's trace, or inside
    a blocking call of the OS runtime trace -- where that is at least half of it, else 0.  An op or range around the
    wait (an NVTX ``frame`` the wait lies in) ran no code there.

    Why: a thread off its CPU runs no code, so that idle is the host waiting for something the capture does not hold
    (a camera's next frame, a file, a socket, a timer), not the host's own unrecorded work: the fix is the source,
    not recording the CPU (SamuelAmsih/CUDA's Jetson camera loop: 19.9 ms of each 24.9 ms gap off the CPU).  The
    waits named (the outermost of the thread's, disjoint) may overlap a recorded call too, so the part is never
    above the unrecorded time it explains."""
    waits = sum(avg for _, avg, _ in g.top_os_waits)
    part = min(waits, host_ms)
    return part if host_ms > 0 and part >= 0.5 * host_ms else 0.0


#: The spread of the gaps (standard deviation / mean) under which they are regular: a loop paced by a clock.
REGULAR_GAPS_CV = 0.1


def _clock_paced(g, ctx: Ctx, m: HostMetrics) -> str:  # noqa: ANN001 - Gaps
    """"" or the gaps' mean and spread in words where, with no context switches traced, they are as regular as a clock
    (:data:`REGULAR_GAPS_CV`) in a program with no ML framework: a loop fed by a camera or a timer waits the same each
    time.  An ML framework's loop is fed by its input pipeline, whose waits its profiler records as input (the
    DataLoader's ``__next__``, ``tf.data``'s iterator): its unrecorded, equal gaps are its own code each step
    (logging, the step's Python), as on JAX's synthetic steps with a host wait by construction -- never a guess
    that lowers the finding."""
    if m.waits_traced or ctx.fw.id != "native" or (m.job is not None and m.job.kind.kind == "training"):
        return ""
    gaps = [x.gap_ms for x in g.gaps if not x.partial]  # whole gaps: a part cut by a dropped step's window is shorter
    mean = sum(gaps) / len(gaps) if gaps else 0.0
    cv = (sum((x - mean) ** 2 for x in gaps) / len(gaps)) ** 0.5 / mean if len(gaps) >= 3 and mean > 0 else None
    return f"{ms(mean)} +/- {pct(cv)}" if cv is not None and cv <= REGULAR_GAPS_CV else ""


def _unrecorded_kind(witness: str, paced: str, how_much: str, no_host: str = "") -> str:
    """What the time no event covers is, as far as the capture tells: with the threads' context switches traced (and
    the thread not waiting, :func:`outside_wait_ms`), the host's own code; without, code or a wait -- "likely" a wait
    for a pacing source where the gaps are as regular as a clock (:func:`_clock_paced`), never more than likely: a
    host computing the same work each time gives equal gaps too.  Where the capture recorded nothing of the host
    (``no_host``: ``Ctx.no_host``'s words), that is what the window holds: the time is unobserved, whatever its
    spacing -- no host trace was there to record a call, a range or a context switch (h37-hostless)."""
    if no_host:
        return (f"time the capture did not observe ({how_much.split(':')[0]}), since {no_host}: the host's code, its "
                f"waits and its launches there are all unseen")
    if witness:  # the capture traced the thread's waits (``base.ran_witness``)
        return f"the host's own code, which the capture did not record ({how_much}; {witness})"
    if paced:
        what = (f"likely the host waiting for a source that paces the loop (a camera's frame rate, a timer: the gaps "
                f"are as regular as a clock, {paced}), or else its own code")
    else:
        what = "the host's own code or a wait for something outside the capture"
    return (f"time the capture did not record ({how_much}): {what}; the capture traced no context switches to tell "
            f"them apart")


def _owned(p: _Parts) -> list[tuple[float, str]]:
    """The parts of the mean gap other findings own (each with its words), which the share leaves out."""
    return [(p.input_ms, "input wait, the input-bound check's"),
            (p.dispatch_ms, "the next work's dispatch, the launch-bound check's"),
            (p.loss_ms, "dynamic loss scaling, the loss-scaling check's"),
            (p.skew_ms, "a GPU starting late, the launch-skew check's"),
            (p.waits_ms, "the idle after the program's own syncs and blocking copies, theirs"),
            (p.profiler_ms, "the program waiting for the profiler's own work, no run's without it")]


def _floor(p: _Parts, g) -> float:  # noqa: ANN001 - Gaps
    """The least part of the mean gap said before its share: a twentieth of the gap -- or nothing above zero, where
    the parts under it add up to a twentieth or more.  Why: the share leaves every part out, said or not; parts each
    too small to name but many (input wait 28 us, a GPU's late start 25 us, a sync's idle 21 us, dispatch 20 us of a
    1.32 ms gap: h37-randjobs) left "81.9% of the 1.50 ms step" after "1.32 ms between steps", 88% as printed."""
    if not g.avg_gap_ms:
        return 0.0
    twentieth = 0.05 * g.avg_gap_ms
    unsaid = sum(v for v, _ in _owned(p) + [(p.held_ms, "")] if 0 < v < twentieth)
    return twentieth if unsaid < twentieth else 1e-9


def _held_part(held_ms: float, g, floor: float | None = None) -> str:  # noqa: ANN001 - Gaps
    """The part of the mean gap the GPU held the next step's work, its launch returned (``Gaps.avg_held_ms``), where
    it is at least ``floor`` (:func:`_floor`; a twentieth of the gap): the GPU idles there, but the host had handed
    it its work, so the shares and causes that follow are of the rest ("" otherwise)."""
    floor = 0.05 * g.avg_gap_ms if floor is None else floor
    if not g.avg_gap_ms or held_ms <= 0 or held_ms < floor:
        return ""
    return (f" ({ms(min(held_ms, g.avg_gap_ms))} of it holding the next step's work, whose launch had returned: no "
            f"host's time)")


def _others_part(p: _Parts, g) -> str:  # noqa: ANN001 - Gaps
    """The parts of the mean gap other findings own, which the share that follows leaves out (:func:`_parts`): said
    with their numbers where each is a twentieth of the gap or more, so the share reads against what it is of
    (h37-review10: torch_compile_cudagraphs_inference read "idle 131 us between steps on average ..., 21.1% of the 221
    us step" -- 47 us, the 84 us of launch dispatch in each gap being the launch-bound check's)."""
    if not g.avg_gap_ms:
        return ""
    floor = _floor(p, g)
    said = [f"{ms(v)} of it {what}" for v, what in _owned(p) if v > 0 and v >= floor]
    return f" ({'; '.join(said)})" if said else ""


def _unseen_part(unexplained_ms: float, cycle_ms: float, a_step: str = "a step", noun: str = "step") -> str:
    """The part of each gap nothing recorded covers, where it is under half the gap yet a large share of the step
    (``step_gaps.unrecorded_share``): the host work the finding names is then not all there is, and the rest cannot be
    moved before it is seen (survey h37-survey18: Keras's untraced Python between batches, 13-45 ms a step).  The
    caller gives it as a part of the share the finding judges, never more (h37-review12: torch_compile_cudagraphs_
    inference read "47 us a step (21.1% of the step)" after "19.7% of the 221 us step": the sync's idle, owned by the
    host-sync check and left out of the share, lay in the unrecorded time too).  ``noun``: ``Ctx.step_noun``."""
    return (f"; {ms(unexplained_ms)} {a_step} ({pct(unexplained_ms / cycle_ms)} of the {noun}) no runtime call, op, "
            f"range or OS call of the capture covers: record it to see what it is")


def _holder(waited: float, unrecorded: bool, waits_traced: bool) -> str:
    """Who the gaps' time is, in the window-share sentence's words: the host waiting, its own work, or -- unrecorded
    and no context switches traced -- its time, whichever it was."""
    if waited:
        return "the host waiting"
    return "the host's time (its code or a wait)" if unrecorded and not waits_traced else "the host's own work"


def _window_share(g, m, what: str = "the host's own work") -> str:  # noqa: ANN001 - Gaps, HostMetrics
    """Where the gaps are most of the whole capture window, said so: the window is the host's own work, with the GPU's
    around it (fckwader/shitbox: 14.8 s of CPU code between the uploads and one 8.7 ms kernel, 99.9% of it)."""
    window = m.capture.length_ms or 0.0
    total = g.avg_gap_ms * g.count if g.avg_gap_ms else 0.0
    if window <= 0 or total < T("step_gaps.window_share") * window:
        return ""
    if not m.host_recorded:  # the window holds no host time to be "recorded": the GPU's idle is all it shows
        return (f" The gaps are {pct(min(total / window, 1.0))} of the {ms(window)} capture window: the GPU idles more "
                f"of it than it works, and the capture holds nothing of the host to say why.")
    return (f" The gaps are {pct(min(total / window, 1.0))} of the {ms(window)} capture window: it records {what}, "
            f"with the GPU idle for it, more than the GPU's.")


def _named(g, host_work: bool, label=str) -> str:
    """Where the host work in the gaps went, by the host ops that fill them and the program's own ranges (NVTX,
    ``record_function``, XPlane TraceMe ranges) that span them (each at least a tenth of the mean gap): the finding says where to look.  Nothing where launches fill the gaps or no op stands out."""
    if not host_work or not g.avg_gap_ms:
        return ""
    ranges = [f"`{name}` {ms(v)}" for name, v in g.top_ranges if v >= 0.1 * g.avg_gap_ms]
    # an XPlane range is a host event too: named once, as the program's range
    marked = {name for name, _ in g.top_ranges}
    named = [f"`{label(name)}` {ms(v)}" for name, v in g.top_ops
             if v >= 0.1 * g.avg_gap_ms and name not in marked | _comm_set(g)]
    # the Python calls the profiler recorded where no op holds the time (``Gaps.top_frames``), said as calls
    calls = [f"`{label(name)}` {ms(v)}" for name, v in g.top_frames if v >= 0.1 * g.avg_gap_ms]
    where = ([f"in each gap: {', '.join(named)}"] if named else []) + \
        ([f"in the program's own ranges {', '.join(ranges)}"] if ranges else []) + \
        ([f"in each gap, the Python calls the profiler recorded where no op ran: {', '.join(calls)}"] if calls else [])
    return f" ({'; '.join(where)})" if where else ""


def _made_on_host(ctx: Ctx, g, host_work: bool) -> list:  # noqa: ANN001 - Gaps
    """The framework's fix for a tensor made on the CPU where the op filling most of the gaps creates one from its
    arguments alone (``torch.randn(10000, 10000).cuda()``: 654 ms of CPU ``aten::randn`` a step on CUDA MODE's
    lecture-1 script): made on the GPU, neither its CPU time nor its copy remain.  [] otherwise."""
    if not host_work or not g.top_ops or not g.avg_gap_ms:
        return []
    name, op_ms = g.top_ops[0]
    if op_ms < 0.5 * g.avg_gap_ms or not ctx.fw.creation_op(name):
        return []
    return ctx.fw.extra(f"{ID}:creation", op=name, op_ms=ms(op_ms))


def _waited(g, lead: str = "", a_step: str = "a step") -> str:
    """The OS calls the thread launching the next work sat blocked in during the gaps (Nsight's OS runtime trace:
    ``getc``, ``read``, ``pthread_cond_wait``), each holding a tenth of the mean gap or half the longest: a host that
    waits -- on a file, the terminal, another thread -- is no host at work.  "" where none was traced or none stands
    out."""
    if not g.avg_gap_ms:
        return ""
    named = [f"`{name}` {ms(avg)} {a_step} ({ms(most)} at most in one gap)" for name, avg, most in g.top_os_waits
             if avg >= 0.1 * g.avg_gap_ms or most >= 0.5 * (g.max_gap_ms or 0.0)]
    lead = lead or "the thread that launches the next work waited in the OS (OS runtime or scheduler trace)"
    return (f"; {lead}: {', '.join(named)}"
            if named else "")


def _whole(cycle_ms: float, step_ms: float, gap_steps_ms: float | None = None) -> str:
    """What the gaps' share is of, in words: the step where the gaps sit in steps of the mean step's length, else the
    time from one step's start to the next (steps cut at GPU bursts, steps that differ), with the mean of the steps
    the gaps follow -- the step's mean where they are every kept step, else said as theirs (a last step that ends the
    capture has no gap after it): the period is that mean and the time between a step's end and the next's start."""
    mean = gap_steps_ms if gap_steps_ms is not None else step_ms
    if abs(cycle_ms - mean) <= 0.05 * mean and abs(mean - step_ms) <= 0.005 * step_ms:
        return f"the {ms(step_ms)} step"
    if abs(mean - step_ms) <= 0.005 * step_ms:
        return f"the {ms(cycle_ms)} from one step's start to the next (the mean step is {ms(step_ms)})"
    return (f"the {ms(cycle_ms)} from one step's start to the next (the steps a gap follows average {ms(mean)}, "
            f"every kept step {ms(step_ms)})")


def _skipped(has_dispatch: bool) -> tuple[str, ...]:
    """The ledger categories of the gaps other findings recover whole: the input wait (``input_bound``'s) and, where
    the framework dispatches compiled work, the launch wait (``launch_bound``'s)."""
    return ("input_wait", "launch_wait") if has_dispatch else ("input_wait",)


def _ledger_saving(g, has_dispatch: bool, others_ms: float,  # noqa: ANN001 - Gaps
                   waits: dict | None = None) -> tuple[list[tuple[str, str, float]], float]:
    """What shrinking the gaps gives back, from the step ledger's own booking of them (``gaps.ledger_ms_per_step``,
    per step and GPU): their host-caused idle inside the steps, less the input wait (``input_bound``'s), the
    dispatch where the framework names it (``launch_bound``'s) and the loss-scaling and late-start parts (their
    rules'), less the idle after the program's syncs and blocking copies inside the gaps (``waits``: theirs), each
    claimed in the group the ledger holds it in.  Issue #36: the saving was the mean gap less those,
    which counted gaps outside every step's window (181 ms of host work claimed in nsys_a100_saxpy_mpi, whose step
    holds 144 ms)."""
    waits = waits or {}
    own = {c: max(0.0, v - waits.get(c, 0.0)) for c, v in g.ledger_ms_per_step.items()}
    claims = idle_claims(own, _skipped(has_dispatch))
    return claims, max(0.0, sum(v for _, _, v in claims) - others_ms)


def _variants(host_work_ms: float, launch_ms: float, private: bool) -> list[str]:
    """Which fixes apply: host work first when it dominates; then the launch threads (shared, or more private ones)."""
    out = ["host_work"] if host_work_ms >= launch_ms else []
    if not private:
        out.append("shared_threads")
    elif launch_ms > host_work_ms:
        out.append("private_threads")
    return out


def managed_read_actions(ctx: Ctx) -> list:
    """The fixes for a host asleep in its reads of managed memory the GPU wrote: the framework's own where it has
    them (``unexplained_idle:managed_read``), else :data:`READ_MANAGED` -- one lookup for the step-gap and the
    host-wait findings."""
    return ctx.fw.extra("unexplained_idle:managed_read") or [READ_MANAGED]
