"""§1.2.2 Small GPU kernels and host kernel-launch delay.

Metric: ``headline.launch_wait_share`` -- the share of the step the GPU is
idle waiting for the host to launch the next kernel (stock overview
"kernel launch" column; 0.0 there for GPU captures, so measured here).
Evidence is the guide's own shape: kernels shorter than the 20-40 us
launch latency, with counts, totals and average durations ("126,224 Mul,
2.77 s, ~21.9 us each").  Saving, an upper bound (said "at most"): the launch wait minus what the same
kernels would still cost at ~1 us each in a fused graph -- or, where the capture replays graphs, what its replays pay
per node where that is more (``HostMetrics.graph_node_gap_us``): a replay still runs each node at the device's own
rate --, and less the wait of the one launch the graph itself still is (one kernel a step has nothing to batch: no
finding) -- except where the step-level verdict is told and no graph of the step is its fix (one launch a step, or the
calls of compiled programs, a jitted call being one program already): its fixes run several steps per call, so the
saving is the whole wait, paid once for many steps, less what each kernel still pays.  The launch wait that follows a host sync or a blocking
copy's wait is theirs (``host_sync``, ``excessive_memcpy``: issue #37 deliverable 3) and is left out before grading.
Where most small kernels are launched inside the framework's optimizer step (``SmallKernels.in_optimizer_share``: a
per-parameter optimizer's own kernels), the fixes are the optimizer's -- a fused or foreach update -- not bigger kernels.
Work already replayed from graphs is one launch: a graph saves only over the launches not in graphs, and only the wait
before them (``HostMetrics.kernels_outside_graphs``).  The wait before a replay is the host preparing it
(``HostMetrics.launch_wait_before_replay``); where it is most of the wait, the finding is that preparation, with the
framework's or engine's fix for it (``launch_bound:replay``) and a saving of at most that wait, up to the step's GPU
compute: the host prepares the next replay while the GPU runs -- except in a loop that waits for the GPU every step,
where a host that waits prepares each replay only after its wait: that idle is the wait's, saved by ``host_sync``, and
the note claims none (``host_sync.replays_claimed_ms``).  Where no graph fix fits the GPU at the framework version
the trace shows (an Intel GPU, PyTorch undated), no saving is claimed from one.  Where at least half of the wait lies
inside loops a compiled program runs from the host (XLA's ``while`` loops: ``[iter=N]`` spans, or Nsight's loop thunk
ranges; ``HostMetrics.launch_wait_in_host_loops``), the launches are the loop's iterations and the fixes are the
loop's (``launch_bound:host_loop``), never "compile the step": it is compiled already.
Where the host's GPUs meet at the collectives, the step is its latest GPU's: the launch fix on every GPU also takes
the others' wait for the pacing GPU's launches, which the ledger's mean books as their wait -- added in that pool, up
to the least sum over the GPUs of their own launch wait and their wait for the others (``rules._multi.paced_launch_ms``;
h37-late67: 0.42 ms claimed where batching every rank's launches gives back 1.57).
A GPU alone on its host counts its launch gaps under its own collectives too (``_own_collective_gaps``): the
ledger paints them as communication, yet with its launches ahead of its kernels its next work fills them (replay68).
A GPU program with no ML framework (``Framework.own_code_between_launches``) has its own code between launches (the
launching threads record nothing: ``HostMetrics.launch_wait_host_code``) booked by the ledger as the host's own
unrecorded time, not as launch wait; of the wait left, the grade and the saving rest on the part inside its launch
calls and their submission (``HostMetrics.launch_wait_in_launch_calls``) -- a graph of the launches cuts that, not
the other calls the host waits in before a launch (a synchronous copy's return) -- and the finding names the parts
and, where the code holds more of the GPU's idle before launches than the calls do, how to see it
(``launch_bound:host_code``).  A framework's host time between launches is its dispatch, which a graph of the step
does replay away: its wait is graded and saved whole.
Where the step is too small for its dispatch (a few calls whose host dispatch outlasts the step's GPU compute) and the
gaps between steps are the host's unrecorded code around those calls, the finding tells them too, as the rest of the
same turn's host cost: their time said, their saving added in the gaps' own pool (the ledger keeps the two parts
apart, so they never sum past the idle they share), the way to record that code among the fixes -- and the gaps' check
says nothing of its own there (it reads this finding, run first, and hands it the gaps: ``tell_gaps``). The rest of
the steps' unrecorded host time (the code around the calls within the steps, a last turn's tail after its sync), what
no other finding claims once all have spoken, is the same cost and told there too (``rules.turn_told_whole``), with
the note of the code after the syncs as its part: each microsecond of the turn once. Where the program syncs in every
turn, the framework's fix for that -- once, after the loop (``launch_bound:step_sync``) -- is among the step-level
fixes.
"""

from __future__ import annotations

from tb_gpu_advisor.frameworks import xla
from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules.base import (Ctx, T, action, finding, grade, in_ranges, kernels_per_step, mean_count, ms, n_of,
                                       pct, profiler_words, r, ranges_table, rule, saving, share_metric,
                                       short, step_windows, table, traced_python)
from tb_gpu_advisor.rules._multi import active_gpus, paced_launch_ms, wait_held_ms, wait_parts
from tb_gpu_advisor.rules.cold_start import first_call_why
from tb_gpu_advisor.rules.host_sync import after_waits_ms, replays_claimed_ms, syncs_every_step

ID = "launch_bound"
_BIGGER_KERNELS = action("Make each kernel do more work: concatenate small tensors, vectorize loops over scalars, "
                         "or raise the batch size.")


#: Small kernels launched inside the optimizer's step (``SmallKernels.in_optimizer_share``) from this share on: the
#: optimizer's update is the launch-bound work (survey h37-survey13: a per-parameter CustomAdam, 224 of 224).
_OPTIMIZER_MOST = 0.5


def step_level(m) -> bool:
    """A step of a few dispatch calls whose host dispatch time exceeds the step's GPU compute (tiny jitted steps):
    fusing kernels cannot help, running several steps per call or a larger batch does."""
    d = m.dispatch
    return 0 < d.calls_per_step <= T("launch_bound.step_calls") and d.host_ms_per_step > m.breakdown.device_compute


def host_loop(m: HostMetrics, host_ms: float, inside: float | None = None) -> tuple[float, float] | None:
    """(iterations, ms) per step of the loops the compiled programs run from the host (``Dispatch.loop_ms_per_step``:
    XLA's ``[iter=N]`` spans inside an execution, or its loop thunk NVTX ranges in an Nsight export -- those count no
    iteration: 0), where the GPU's idle inside them (``inside``: by default ``HostMetrics.idle_in_host_loops``, the
    host's own time; the launch-bound check passes its launch wait inside them) is at least half of ``host_ms`` -- the
    time a finding names -- else None.  Why: a jitted solver's ``while`` loop of 88 iterations a call, each a few
    launches from the host (wrf_gpu's Thomas kernel), read "jit the whole step as one function" while every call was
    one jitted program; its host time is the loop's, and the fixes are the loop's (``launch_bound:host_loop``)."""
    d = m.dispatch
    inside = m.idle_in_host_loops if inside is None else inside
    if d.loop_ms_per_step <= 0 or host_ms <= 0 or min(inside, host_ms) < 0.5 * host_ms:
        return None
    return d.loop_iterations_per_step, d.loop_ms_per_step


def host_loop_words(ctx: Ctx, loop: tuple[float, float], idle_ms: float | None = None) -> str:
    """What the host does in the loops the compiled programs run from it, in words: the iterations where the capture
    marks them (XPlane's ``[iter=N]``), else the time alone (Nsight's thunk ranges mark none: no count invented)."""
    n, t = loop
    ex = max(ctx.m.dispatch.execution_ms_per_step, t)  # a loop runs inside its execution: never more than it
    # the GPU's idle inside the loops: a part of the loops' host time
    idle = min(ctx.m.idle_in_host_loops if idle_ms is None else idle_ms, t)
    what = (f"running {ctx.count_per_step(n, 'iteration', per='')}of while loops from the host" if n > 0 else
            xla.LOOP_WITHOUT_COUNT)
    return (f" The host spends {ms(ex)} {ctx.per_step} inside the {ctx.fw.label('dispatch_call')}s' compiled "
            f"programs, {'all' if ms(t) == ms(ex) else ms(t)} of it {what}, and the GPU idles {ms(idle)} of that: "
            f"each iteration launches its body's kernels one by one, so the program is compiled already and it is the "
            f"loop that holds the host.")


def quiet(m) -> str | None:
    """Why a launch wait is no finding: where a step launches one kernel a graph would be one launch too; where the
    wait follows the host's syncs, it is theirs."""
    ctx = Ctx(m)
    kps = kernels_per_step(m, ctx) or 0.0
    if 0 < kps <= 1 and (m.headline.launch_wait_share or 0.0) > 0 and not steps_repeat(m):
        return (f"one kernel {ctx.a_step}: batching launches into a graph would leave one launch too, so there is no "
                "launch to save")
    after = after_waits_ms(m)
    if after > 0:
        return (f"{ms(after)} of the launch wait {ctx.per_step} follows the host's syncs and blocking copies, which drained the "
                f"GPU's queue: that wait is the host-sync and blocking-copy checks' to judge, and the rest is below "
                f"this check's level")
    wait = m.breakdown.launch_wait or 0.0
    code = _host_code(ctx, m, wait)
    if code is not None:  # graded on the launch calls' part (_own_wait)
        return (f"of the {ms(wait)} launch wait {ctx.per_step}, the host is inside its launch calls (or the GPU about "
                f"to start what they submitted) for {ms(code[0])}, below this check's level; the rest is inside the "
                f"other calls it records, which no graph of the launches cuts")
    return None


@rule(ID, "§1.2.2", "Launch-bound: many small kernels, the GPU waits for the host to launch them",
      thresholds=("launch_bound.warning", "launch_bound.critical", "launch.small_kernel_us", "launch.fused_us_per_kernel",
                 "launch_bound.step_calls", "launch_bound.min_small_kernel_time_share",
                 "capture.graph_kernel_share", "launch_bound.min_small_kernel_share", "launch.latency_us"),
      card="launch_wait_share", waits=("launch_wait",), quiet=quiet)
def check(m: HostMetrics) -> list[Finding]:
    # grade the GPU's wait for launches (less the part after the host's syncs), and say what batching them saves and
    # how; a step-level verdict may then be handed the gaps between steps as its own part by the gaps' check, which
    # reads it (``tell_gaps``) (no docstring: the rule's docs are the module's)
    ctx = Ctx(m)
    own = _own_wait(ctx, m)
    if own is None:
        return []
    share, sev, wait_ms, after = own
    sk = m.small_kernels
    kps = kernels_per_step(m, ctx) or 0.0
    small_ps = sk.per_step or 0.0  # per step and rank, as the step and its launch wait (metrics.context.per_step)
    small_share = sk.share_of_kernels
    # the title says what the numbers show: small kernels only when they are most of the kernels; otherwise the GPU
    # waits for the host to dispatch work of ordinary size (an eager loop, Python between ops)
    few_small = (small_share or 0.0) < T("launch_bound.min_small_kernel_share")
    # the verdict first: where it reads the wait as the host's cost per op (few_small), a fused graph still makes every
    # kernel's launch, and the saving, the title and the assumption's words all say so (h37-review10: cloverleaf's
    # assumption read "92 kernels per step", its 92 small ones, beside "92 of 125 kernels per step")
    sev, few_small, actions, said = _verdict(ctx, m, sev, few_small)
    replay, loose, launches = _replayed(m, wait_ms or 0.0, kps)
    code = _host_code(ctx, m, wait_ms or 0.0)
    if code is not None:  # the program's own code between its launches: no graph of them cuts it
        loose = min(loose, code[0])
    launched_ps = min(kps if few_small else small_ps, launches)  # the launches a fused graph still makes, ~1 us each
    residual = launched_ps * _node_us(m) / 1000.0
    # a graph is itself one launch a step: of the step's launches it saves all but one, so the wait of one launch
    # (the mean per launch) stays -- one kernel a step has no launches to batch and saves nothing.  Only the launches
    # not already in graphs are left to batch, and only the wait before them
    kept_ms = 0.0 if _across_steps(m, sev, kps) else loose / launches if launches >= 1 else loose
    save_ms = max(0.0, loose - kept_ms - residual)
    # the wait before graph replays: the host preparing each replay, which it can do while the GPU still runs the
    # work before it -- as far as that work lasts
    hidden = min(replay, m.breakdown.device_compute) if replay >= 0.5 * (wait_ms or 0.0) else 0.0
    if save_ms + hidden <= 0.0:
        return []
    # of that, what a loop syncing every step exposes is the sync's to save (host_sync): the note says so, claims none
    synced = min(hidden, replays_claimed_ms(m))
    hidden_saved = hidden - synced
    # a kernel replayed from a graph pays no launch of its own: where the wait is the replays' (or the words say what
    # is left is the graph's one launch), the top offender is not held against the launch latency (h37-review13:
    # sglang_b300_decode's "~24.6 us each -- about the 20-40 us launch latency itself" beside "not a launch per
    # kernel")
    graphed = hidden > 0 or GRAPH_LAUNCH_LEFT in said
    rows, example = _offenders(sk, ctx, against_launch=not graphed)
    title = "Launch-bound: the GPU waits for the host to dispatch each op" if few_small else _few_kernels_title(kps)
    if hidden > 0:
        title, sev, actions = "The GPU waits while the host prepares each graph replay", "info", ctx.fw.fix(f"{ID}:replay")
        said = _replay_txt(ctx, replay, wait_ms or 0.0, m.capture.graph_kernel_share) + _synced_txt(ctx, synced)
    elif replay >= T("report.min_said_ms"):  # a part before replays: the host preparing them, which no graph cuts
        said += (f" {ms(replay)} of the wait comes before graph replays: the host preparing them, which another "
                 f"graph cannot cut, so it is left out of the saving.")
    elif f"{ID}:host_loop" in ctx.fw.fixes and (loop := host_loop(m, wait_ms or 0.0, m.launch_wait_in_host_loops)):
        # the launches come from loops the compiled programs run from the host (XLA's while loops): the step is one
        # jitted program already, and it is the loop's iterations that launch one by one -- the loop's fixes
        # (h37-loops2: "jit the whole step" to wrf_gpu's jitted solvers)
        actions = ctx.fw.fix(f"{ID}:host_loop")
        said += host_loop_words(ctx, loop, m.launch_wait_in_host_loops)
    elif code is not None:
        said += _host_code_txt(ctx, wait_ms or 0.0, *code)
        if code[1] > code[0]:  # the code holds more of the GPU's idle before launches than the calls: see it first
            actions = actions + ctx.fw.fix(f"{ID}:host_code")
    elif _no_graph_fits(ctx, actions):  # the device cannot replay a graph at the version the trace shows
        save_ms = 0.0
        said += (f" No graph fix fits this GPU at the {ctx.fw.name} version the trace shows, so every kernel keeps "
                 f"its launch and no saving from batching them into one is claimed.")
    paced, by = _paced(ctx, m, save_ms, wait_ms or 0.0) if not hidden else (0.0, "")
    said += by
    own_comm = _own_collective_gaps(m, save_ms) if not hidden else 0.0
    if own_comm > 0:
        said += (f" Another {ms(own_comm)} {ctx.per_step} of its launch gaps fall while its own collectives run: the "
                 f"ledger books them as communication, but with the launches ahead of the kernels its next work fills "
                 f"them and the collective hides behind it, so the saving counts them too.")
    assumption = _assumption(ctx, save_ms, hidden_saved, launched_ps, few_small,
                             launches < (kps if few_small else small_ps), m.graph_node_gap_us,
                             code[0] if code is not None and not hidden else None, _across_steps(m, sev, kps))
    if paced > 0:  # the part beyond the mean's launch wait: the others' wait for the pacing GPU's launches
        whose = "the other GPU's" if len(active_gpus(m)) == 2 else "the other GPUs'"
        assumption += (f"; and, the GPUs meeting at the collectives, {whose} wait for the pacing GPU's launches goes "
                       f"with them: at most {ms(paced)} more")
    if own_comm > 0:
        assumption += f"; and its launch gaps under its own collectives go with them: {ms(own_comm)} more"
    f = finding(
        ctx, ID, sev,
        f"The GPU is idle waiting for kernel launches {pct(share)} {ctx.of_step()} ({ms(wait_ms)}; stock "
        f"'kernel launch' level >=3% moderate / >=15% high); {_n_of_m(small_ps, kps, small_share, ctx)} run shorter than "
        f"{sk.threshold_us:.0f} us{in_ranges(ctx, {'launch_wait': wait_ms}, 'the wait')}.{_after_txt(after, ctx.per_step)}{example}{said}"
        f"{traced_python(ctx, wait_ms or 0.0) if not hidden else ''}{profiler_words(ctx)}",
        # less the waits after syncs, it is another number than the card's: named apart (one value per quantity)
        metric=share_metric(*_wait_metric(after),
                            share, "launch_bound.warning",
                            severity=sev, detail={"launch_wait_ms": wait_ms, "kernels_per_step": kps,
                                                  "small_kernels_per_step": small_ps,
                                                  "small_kernel_share": small_share,
                                                  "small_kernel_threshold_us": sk.threshold_us,
                                                  **({"launch_wait_before_replay_ms": replay,
                                                      "kernels_outside_graphs_per_step": launches,
                                                      "graph_node_gap_us": m.graph_node_gap_us}
                                                     if m.capture.graph_kernel_share > 0 else {}),
                                                  **({"launch_call_wait_ms": code[0], "host_code_wait_ms": code[1]}
                                                     if code is not None else {})}),
        saving=saving(ctx, save_ms + hidden_saved + paced + own_comm, assumption,
                      [("launch", "launch", save_ms + hidden_saved)]
                      + [(g, p, paced * v / held) for g, p, v in wait_parts(m) if paced > 0 and (held := wait_held_ms(m))]
                      + ([("collectives", "launch", own_comm)] if own_comm > 0 else []))
        if save_ms + hidden_saved > 0 else None,
        evidence=[table(f"Kernels shorter than {sk.threshold_us:.0f} us (launch latency 20–40 us), by total time",
                        ["kernel", "op type", "calls/step", "ms/step", "avg us"], rows), *ranges_table(ctx)],
        # the ledger's launch wait of a step holds the part after the host's syncs, which the finding leaves to them:
        # each step's is the finding's own share of it (the steps' mean is then the finding's wait, one value)
        windows=step_windows(ctx, label="launch wait", draws=("launch_wait",), claimed_ms=wait_ms),
        actions=actions, title=title,
    )
    return [f]


def tells_step(m: HostMetrics, f: Finding) -> bool:
    """Whether this check's finding ``f`` tells the step-level verdict (a step too small for its dispatch,
    :func:`step_level`) above a note -- the finding that holds the gaps between steps where they are the rest of the
    turn's host cost: the gaps' check reads it (``Rule.reads``: the evaluator runs this check first) before it says
    them itself, and hands them to it (:func:`tell_gaps`)."""
    return f.rule == ID and step_level(m) and f.severity != "info" and f.saving is not None


def tell_gaps(ctx: Ctx, f: Finding, gaps: Finding, record: list) -> None:
    """``f`` (the step-level verdict, :func:`tells_step`) told with the gaps between steps as its own part: their saving (the ledger's
    host idle in the gaps, its own pool: the two parts are disjoint, so the sum never passes the idle they share) and
    assumption added to its own, their time said, the way to record what the capture did not (the windows stay
    the launch wait's: a gap's window would print the whole gap, the dispatch in it too, a second value beside the
    text's).  Why one finding: the gaps are the host's Python around each tiny step's calls and between them -- the
    same cost of running a step this small from the host that the verdict names (h37-turn65, lutetjeff/cs521-mp2
    ``cuda.json``: two criticals, 44 us of gaps and 34 us of dispatch, for one 10 us turn).  ``record``: the fixes
    that record the host's code (the capture's own, else the gaps' check's words)."""
    gap_ms = gaps.saving.ms_per_step if gaps.saving is not None else 0.0
    if gap_ms <= 0 or f.saving is None:
        return
    own = [(r["group"], r["pool"], r["ms"]) for r in f.saving.recovers]
    theirs = [(r["group"], r["pool"], r["ms"]) for r in gaps.saving.recovers]
    steps = f"{ctx.step_noun}s"
    f.saving = saving(ctx, f.saving.ms_per_step + gap_ms, f"{f.saving.assumption}; and {_turn_assumption(ctx)}",
                      own + theirs)
    f.title = (f"The {ctx.step_noun} is too small for its host cost: the GPU waits for the dispatch of its few kernels "
               f"and for the host's code between {steps}")
    f.summary += (f" Between its {steps} the GPU idles another {ms(gap_ms)} {ctx.per_step} while the host runs code "
                  f"the capture did not record (the Python that makes each {ctx.step_noun}'s calls, and whatever runs "
                  f"between them): the rest of the same cost of running a {ctx.step_noun} this small from the host, "
                  f"told here rather than as gaps between {steps}.")
    if f.metric is not None:
        f.metric.detail = {**(f.metric.detail or {}), "between_step_host_ms": gap_ms, "unrecorded_ms": gap_ms}
    f.actions = f.actions + [a for a in record if a not in f.actions]


def _turn_assumption(ctx: Ctx) -> str:
    """The clause of the saving's assumption for the host's unrecorded time between steps the step-level finding holds
    (:func:`tell_gaps`); :func:`tell_rest` adds its own clause after it (composed, never reworded)."""
    steps = f"{ctx.step_noun}s"
    return (f"the host's unrecorded time between the {steps} cut from each {ctx.step_noun} (what it runs there moved "
            f"out of the loop or run once every N {steps})")


def holds_turn(f: Finding) -> bool:
    """Whether ``f`` is this check's step-level finding holding the gaps between steps as the rest of the turn's host
    cost (:func:`tell_gaps` said them)."""
    return f.rule == ID and f.saving is not None and f.metric is not None and \
        "between_step_host_ms" in (f.metric.detail or {})


def tell_rest(ctx: Ctx, f: Finding, rest_ms: float) -> None:
    """``f`` (a finding that :func:`holds_turn`) told with the rest of the step's unrecorded host time too: the GPU's
    idle inside the steps while the host runs code no event explains and no other finding claims (``rest_ms``, per
    step, the caller's account of the ledger's ``other``), added to its saving in the gaps' pool (the host's
    unrecorded time around each call is one time, wherever a step boundary cuts it) and said in one sentence.

    Why: in a step too small for its dispatch, the code around the few calls is the same per-turn host cost wherever
    it lies -- the gap before a call, the stretch between two calls, the tail after a sync that no next step closes
    (the capture's last turn).  h37-turn66, lutetjeff/cs521-mp2 ``cuda.json``: the launch finding held the 44 us
    between the turns, and a warning "the GPU idles while the host does what the capture did not record" told 19 us
    more of the same turns (the last turn's 21 us tail, the 3-4 us between each turn's two calls, the syncs' 3 us)
    as a cause of its own; the ledger books all 62.5 us alike (``other``).  The warning then has nothing left to say."""
    if f.saving is None or ms(rest_ms) == ms(0.0):
        return
    parts = [(r["group"], r["pool"], r["ms"]) for r in f.saving.recovers]
    parts = [(g, p, v + rest_ms if (g, p) == ("host", "host_work") else v) for g, p, v in parts]
    if ("host", "host_work") not in {(g, p) for g, p, _ in parts}:
        parts.append(("host", "host_work", rest_ms))
    f.saving = saving(ctx, f.saving.ms_per_step + rest_ms,
                      f"{f.saving.assumption}; and the host's unrecorded time around the calls within each "
                      f"{ctx.step_noun} cut alike", parts)
    f.title = (f"The {ctx.step_noun} is too small for its host cost: the GPU waits for the dispatch of its few kernels "
               f"and for the host's code around them")
    f.summary += (f" Within its {ctx.step_noun}s the GPU idles another {ms(rest_ms)} {ctx.per_step} while the host "
                  f"runs code around its calls that no op explains: the same cost, told here too.")
    if f.metric is not None:
        d = dict(f.metric.detail or {})
        d["in_step_host_ms"] = rest_ms
        d["unrecorded_ms"] = float(d.get("between_step_host_ms") or 0.0) + rest_ms
        f.metric.detail = d


def _few_kernels_title(kps: float) -> str | None:
    """The title of a wait before a step of a few kernels (at most ``launch_bound.step_calls`` a step, the count the
    step-level diagnosis calls a few); None: the rule's own, "many small kernels".

    Why: the words claim a count the numbers must show.  A step of 1.6 to 4 kernels (wild/jax_mi300x,
    wild/lazy_first_launch_t4, waits/event_sync_a100) waits for the host before each launch -- the launch's own cost
    and the host's time between them -- and there are not many launches to batch: "many small kernels" said a count
    its own "4 of 4 kernels per step" denied (h37-auditleft31)."""
    if 0 < kps <= T("launch_bound.step_calls"):
        return "Launch-bound: the GPU waits for the host before each of its few kernels"
    return None


def _own_collective_gaps(m: HostMetrics, save_ms: float) -> float:
    """ms a step of a lone GPU's launch gaps while its own collectives run (``GpuMetrics.
    launch_in_collectives_ms_per_step``, ``metrics.breakdown.launch_gaps_in_collectives``), at most the collective
    time the ledger holds; 0 where the host has several active GPUs (the pacing GPU's gaps count in :func:`_paced`),
    the fix saves nothing (``save_ms``), or the gaps are below what a report says.

    Why: the ledger paints a collective above the launch wait, so a launch-bound rank's gaps under its own overlapped
    all-reduce read as communication -- yet with its launches ahead of its kernels its next bucket's compute fills that
    stretch and the all-reduce hides behind it.  A rank alone on its host (``write_late_rank_fused`` with one rank at
    30 us a launch) gave back 0.97 ms of its 2.50 ms step with its launches ahead of its kernels; the fix claimed 0.78,
    its 0.14 ms of gaps under the all-reduce left out (the several-GPU bound counted them from session 68)."""
    gs = active_gpus(m)
    if len(gs) != 1 or save_ms <= 0:
        return 0.0
    gaps = float(getattr(gs[0], "launch_in_collectives_ms_per_step", 0.0) or 0.0)
    gaps = min(gaps, max(0.0, m.breakdown.collectives or 0.0))
    return gaps if gaps >= T("report.min_said_ms") else 0.0


def _paced(ctx: Ctx, m: HostMetrics, save_ms: float, wait_ms: float) -> tuple[float, str]:
    """(ms a step, words): what the launch fix gives back beyond the host's mean launch wait where the host's GPUs
    meet at the collectives and one GPU's launches pace them (``rules._multi.paced_launch_ms``), at most the wait the
    ledger holds; (0, "") where none or where the fix saves nothing (``save_ms``): the launches a graph keeps are
    already taken off the mean's part."""
    more, pace = paced_launch_ms(m)
    if pace is None or wait_ms <= 0 or save_ms <= 0:
        return 0.0, ""
    more = min(more, wait_held_ms(m))
    if more < T("report.min_said_ms"):
        return 0.0, ""
    rank = f" (rank {pace.rank})" if pace.rank is not None else ""
    one = len(active_gpus(m)) == 2
    whose, wait = ("the other GPU's", "the other GPU waits") if one else ("the other GPUs'", "the others wait")
    return more, (f" The GPUs meet at the collectives, so the {ctx.step_noun} is paced by GPU{pace.gpu}{rank}, the one "
                  f"{wait} for: with every GPU's launches batched, {whose} wait for its launches goes too: up "
                  f"to {ms(more)} more {ctx.per_step}.")


def _host_code(ctx: Ctx, m: HostMetrics, wait_ms: float) -> tuple[float, float] | None:
    """(ms of the finding's wait of ``wait_ms`` a step inside the launch calls, ms of the program's own code before
    its launches, which the ledger books as the host's time outside that wait) where the program dispatches its own
    launches (``Framework.own_code_between_launches``: no framework) and its calls hold less of the wait than all of it
    (as printed); None otherwise.

    Why: the GPU idle before a late launch is late for whatever the host did before the call.  Where the host is
    inside its launch calls (``HostMetrics.launch_wait_in_launch_calls``) a graph or fewer kernels cut it; the other
    calls it waits in (a synchronous copy's return) and its own code between the calls
    (``HostMetrics.launch_wait_host_code``) run as before -- ASSUMPTION that was wrong: the GPU idle while the host
    is between launches is launch time (PEXSI's selected inversion on an A100: 2.0 ms in its 849 launch calls,
    20.9 ms in its own code, priced whole as launch overhead).  A framework's host time between launches is its
    dispatch (PyTorch's ops, JAX's calls), which a graph of the step does replay away: it keeps the reading it had."""
    if not ctx.fw.own_code_between_launches or wait_ms <= 0 or _replayed(m, wait_ms, 0.0)[0] > 0:
        return None  # a wait before graph replays is the host preparing them, read as such (``_replay_txt``)
    calls = min(m.launch_wait_in_launch_calls, wait_ms)
    if ms(calls) == ms(wait_ms):
        return None
    return calls, m.launch_wait_host_code


def _host_code_txt(ctx: Ctx, wait_ms: float, calls: float, code: float) -> str:
    """The words of a program's wait that its launch calls hold only a part of (:func:`_host_code`), and of the
    program's own code before its launches, which the ledger books outside the wait."""
    own = (f" Before its launches the GPU idles another {ms(code)} while the host runs "
           f"{ctx.fw.label('launch_bound:host_code')}, in stretches no call records (each shorter than "
           f"{T('metrics.cpu_op_ms'):g} ms): the host's own time, not launch wait, and no graph of the launches runs "
           f"it away." if ms(code) != ms(0.0) else "")
    return (f" Of the {ms(wait_ms)} wait, the host is inside its launch calls (or the GPU about to start what they "
            f"submitted) for {ms(calls)}: the launches' own cost; the remaining {ms(wait_ms - calls)} inside the other "
            f"calls or ranges it records, which a graph of the launches does not cut, so the grade and the saving "
            f"count the calls' part alone.{own}")


#: the words that say the kernels' launches are their graphs' (no launch per kernel is left to cut)
GRAPH_LAUNCH_LEFT = "what is left is that launch, not a launch per kernel"


def _replayed(m: HostMetrics, wait_ms: float, kps: float) -> tuple[float, float, float]:
    """(ms of the wait before graph replays, ms before the other launches, launches per step not in graphs) of a
    launch wait of ``wait_ms`` over ``kps`` kernels a step.  Where no kernel is replayed from a graph, all of it is
    the launches' (``HostMetrics.launch_wait_before_replay``: accounting, a graph's kernels are one launch already)."""
    if m.capture.graph_kernel_share <= 0:
        return 0.0, wait_ms, kps
    replay = min(m.launch_wait_before_replay, wait_ms)
    return replay, wait_ms - replay, min(kps, m.kernels_outside_graphs)


def _no_graph_fits(ctx: Ctx, actions: list) -> bool:
    """Whether the check's fixes would record a graph (``Framework.fix_introduces``) but none is left once fitted to
    the job's GPU and framework version (``Ctx.fit``: an Intel GPU's graph API came with PyTorch 2.11, and a trace
    that does not date PyTorch is told none).  Then the saving's premise -- one launch a step, a graph's -- is no
    fix the report gives (h37-left60: the undated XPU ``tiny_ops`` read 4.94 ms saved "by a graph" beside fixes
    with no graph)."""
    def graphs(xs) -> bool:  # noqa: ANN001
        return any("cuda_graphs" in ctx.fw.fix_introduces(a) for a in xs)
    return graphs(actions) and not graphs(ctx.fit(actions))


def _replay_txt(ctx: Ctx, replay: float, wait: float, graphs: float) -> str:
    """The words of a wait that comes before graph replays: no launch per kernel to batch, the host's preparation."""
    return (f" {pct(graphs)} of kernel time already runs from {ctx.vendor.TERMS.get('graphs', 'graphs')}, and "
            f"{_part_of(replay, wait)} comes before a replay: the host preparing it (its inputs, the "
            f"program's code before its one launch), not a launch per kernel -- another graph cannot cut it; "
            f"preparing the next replay while the GPU runs the current one can.")


def _synced_txt(ctx: Ctx, synced: float) -> str:
    """Where the loop syncs every step (``host_sync.replays_claimed_ms``), that the preparation's idle is the sync's:
    the host-sync finding's saving holds it ("" where none is)."""
    if synced <= 0:
        return ""
    return (f" But the host waits for the GPU in every {ctx.step_noun}, so it prepares each replay only after that "
            f"wait, with nothing queued: {ms(synced)} {ctx.per_step} of this idle is the wait's cost, saved by "
            f"the host-sync finding's fix, not counted here.")


def _part_of(part: float, whole: float) -> str:
    """"44 us of the 90 us wait", or "all of the 44 us wait" where the part is the whole as printed -- a part equal to
    its whole is not said as a part (the one-value property)."""
    return f"all of the {ms(whole)} wait" if ms(part) == ms(whole) else f"{ms(part)} of the {ms(whole)} wait"


def _node_us(m: HostMetrics) -> float:
    """What a replayed graph still pays per node, us: the fused graph's charge (``launch.fused_us_per_kernel``), or
    the gap this capture's own replays leave between their nodes where it is more (``HostMetrics.graph_node_gap_us``)
    -- never less: the saving stays an upper bound, and a replay whose device overlaps its nodes (a negative gap)
    does not make the launches cost nothing."""
    gap = m.graph_node_gap_us
    return max(T("launch.fused_us_per_kernel"), gap) if gap is not None else T("launch.fused_us_per_kernel")


def _across_steps(m: HostMetrics, sev: str, kps: float) -> bool:
    """Whether the wait is saved across steps, not within one: a step told the step-level verdict (:func:`step_level`,
    above a note) whose launches a graph of the step cannot cut -- one launch (nothing in it to batch), or the calls of
    compiled programs (``Framework.dispatch_is_compiled``: a jitted call is one program already) -- so its fixes,
    several steps per call or a larger batch, pay the step's dispatch once for many steps.

    Why: a loop of one tiny jitted call a turn (``synthetic.jaxcapture.write_tiny_jitted_calls(loop_frame=False,
    inputs_every=0)``: 110 us a step of the next call's dispatch, booked as launch wait, in a 143 us step) was quiet
    here -- "one kernel a step: batching launches into a graph would leave one launch too" -- and no other finding
    told that wait (h37-turn66 *Left* 1): the graph's premise is no premise of the step-level fix, which runs the
    steps in one call (``jax.lax.scan``) and leaves one dispatch for all of them."""
    return (0 < kps <= 1 or Ctx(m).fw.dispatch_is_compiled) and sev != "info" and steps_repeat(m)


def steps_repeat(m: HostMetrics) -> bool:
    """Whether the step is too small for its dispatch (:func:`step_level`) over two or more kept steps and no lone
    first call: a loop of such steps, whose fixes (several steps per call, one sync after the loop) have steps to run
    together.  One kept step (wild ``compiled_a100_triton``'s lone compiled pass, its one kernel launched 129 us after
    a first call's one-time costs) shows no loop to batch."""
    return step_level(m) and m.steps.count >= 2 and first_call_why(m) is None


def _assumption(ctx: Ctx, save_ms: float, hidden: float, launched: float, few_small: bool, graphed: bool,
                gap_us: float | None = None, calls_ms: float | None = None, across: bool = False) -> str:
    """The saving's assumption: the launches a graph still batches (``graphed``: fewer than the finding counts, the
    rest already in graphs), the replays' preparation overlapped -- or, ``across`` (:func:`_across_steps`), the one
    launch of each step paid once for many steps.  The saving is an upper bound, said so: it takes every gap the
    host's launches leave away, less what a replay still pays per node (:func:`_node_us`), where the kernels may wait
    on each other or on other work too (h37-comm3)."""
    out = []
    wait = "the launch wait" if calls_ms is None else f"the launch calls' {ms(calls_ms)} of the wait"
    # of the step's kernels, those the fix still launches: outside graphs where some already replay (the count's words
    # say so: "0 small kernels per step" beside the finding's 15 read as a second value, randjobs seed 15)
    kernels = (f"{ctx.count_per_step(launched, 'kernel' if few_small else 'small kernel')}"
               f"{', not already in graphs' if graphed else ''}")
    if save_ms > 0 and across:
        out.append(f"at most: {wait} of each {ctx.step_noun} paid once for many {ctx.step_noun}s (several "
                   f"{ctx.step_noun}s run in one call, or a larger batch), less the "
                   f"{T('launch.fused_us_per_kernel'):g} us/kernel each kernel still pays ({kernels})")
    elif save_ms > 0:
        node = max(T("launch.fused_us_per_kernel"), gap_us) if gap_us is not None else T("launch.fused_us_per_kernel")
        measured = (f"; this capture's own replays start each node {abs(gap_us):.2f} us "
                    f"{'before' if gap_us < 0 else 'after'} the last one ends (the median)" if gap_us is not None else "")
        out.append(f"at most: {wait} reduced to one launch {ctx.a_step} (a graph's) and the "
                   f"{node:g} us/kernel a replayed graph still pays per node "
                   f"({kernels}){measured}")
    if hidden > 0:
        out.append(f"at most: the host prepares each graph replay while the GPU still runs the work before it, so the GPU "
                   f"no longer waits before a replay ({ms(hidden)}, at most the {ctx.step_noun}'s GPU compute)")
    return "; and ".join(out)


def _wait_metric(after: float) -> tuple[str, str]:
    """The finding's metric id and name: the card's own where its wait is the card's; named apart where the waits after
    the host's syncs were left out (one value per quantity on one screen).  The profiler's own work is no part of
    either: the ledger books it apart (``profiler``)."""
    if after <= 0:
        return "launch_wait_share", "Idle waiting for kernel launch"
    return "launch_wait_own_share", "Idle waiting for kernel launch, not after a host sync"


def _own_wait(ctx: Ctx, m: HostMetrics) -> tuple[float, str, float | None, float] | None:
    """(share, severity, ms per step, ms after syncs) of the GPU's wait for launches, graded without the part after
    the host's syncs (theirs: graded and saved there); None where it is not worth a finding."""
    graded = ctx.graded_wait(m.headline.launch_wait_share, m.breakdown.launch_wait, "launch_bound.warning", "launch_bound.critical")
    if graded is None:
        return None
    share, sev, wait_ms = graded
    after = min(after_waits_ms(m), wait_ms or 0.0)
    # the part after the host's syncs is theirs: graded and saved without it (the profiler's own work is no launch
    # wait: the ledger books it apart)
    if after > 0 and ctx.step_ms:
        wait_ms = (wait_ms or 0.0) - after
        share = wait_ms / ctx.step_ms
        sev = grade(share, "launch_bound.warning", "launch_bound.critical")
        if sev is None:
            return None
    code = _host_code(ctx, m, wait_ms or 0.0)
    if code is not None and ctx.step_ms:  # a program's launches: graded on the part a graph of them cuts
        sev = grade(code[0] / ctx.step_ms, "launch_bound.warning", "launch_bound.critical")
        if sev is None:
            return None
    return share, sev, wait_ms, after


def _offenders(sk, ctx: Ctx, against_launch: bool = True) -> tuple[list, str]:  # noqa: ANN001 - small kernels
    """The small kernels' table rows, per step and rank as every other number of the finding, and the top offender
    in words -- set against the launch latency where each of its calls is a launch (``against_launch``)."""
    top = sk.top[:10]
    # per step and rank, as every other number of the finding (metrics.context.per_step)
    rows = [[short(o.name), o.op_type, r(o.per_step), r(o.ms_per_step, 4), o.avg_us] for o in top]
    if not top:
        return rows, ""
    o = top[0]
    return rows, (f" Top offender: {o.op_type or short(o.name, 40)}, {ctx.count_per_step(o.per_step, 'call')} taking "
                  f"{ms(o.ms_per_step)}, ~{o.avg_us:.1f} us each"
                  f"{_against_latency(o.avg_us) if against_launch else ''}.")


def _step_host_cost(m: HostMetrics) -> tuple[str, str]:
    """What the host's time in a step too small for it is called ("of host ...", "too small for its ..."): its
    dispatch where a steady step shows it recurs, else its host time.  Where the capture's one step may be nothing but
    first calls (``rules.cold_start.first_call_why``), its host time is also one-time work (compiling, loading each kernel on its
    first launch) the capture cannot tell from a steady call's dispatch, and the note ``rules._one_early_call``
    appends says so -- "of host dispatch" beside it claimed the per-call cost it doubts, as the host-bound clause's
    "the host's time in" avoids (h37-walk23: ``--forms`` seed 6053, one Kineto step kept, the later steps' GPU records
    lost)."""

    return ("dispatch", "dispatch cost") if first_call_why(m) is None else ("time", "host time")


def _verdict(ctx: Ctx, m: HostMetrics, sev: str, few_small: bool) -> tuple[str, bool, list, str]:
    """(severity, few small kernels, fixes, words) for what the wait is: an optimizer's per-parameter launches (its
    multi-tensor update); a moderate wait beside big kernels or kernels replayed from CUDA graphs (the host's per-op
    cost, an info); a step too small for its dispatch; else many small kernels (bigger kernels, fewer launches)."""
    sk = m.small_kernels
    words, step_txt, actions = "", "", ([] if few_small else [_BIGGER_KERNELS]) + ctx.fw.fix(ID)
    in_opt = sk.in_optimizer_share or 0.0
    if in_opt >= _OPTIMIZER_MOST and not few_small:  # the optimizer's own kernels: its update is what to batch, not
        # the model's ops (a bigger batch leaves a per-parameter update's kernels as they are)
        actions = ctx.fw.fix(f"{ID}:optimizer")
        words = (f" {pct(in_opt)} of the small kernels are launched inside the optimizer's step: a few per "
                 f"parameter, which one multi-tensor update launches once for all.")
    if sev == "warning" and not step_level(m) and (sk.share_of_kernel_time or 0.0) < T("launch_bound.min_small_kernel_time_share"):
        sev = "info"  # a moderate wait with big kernels: the host's per-op cost under the profiler, not small kernels
        few_small = True  # the title and the fixes then say so too: no "many small kernels", no "make them bigger"
        actions = [a for a in actions if a is not _BIGGER_KERNELS]
        step_txt = (f" Kernels longer than the launch latency do {pct(1 - (sk.share_of_kernel_time or 0.0))} of the GPU's "
                    f"work, so this wait is the host's cost per op (the profiler's "
                    f"own launch tracing adds to it), not small kernels: worth a look only if the {ctx.step_noun} is short.")
    graphs = m.capture.graph_kernel_share
    if sev == "warning" and graphs >= T("capture.graph_kernel_share"):
        sev = "info"  # the kernels replay from CUDA graphs: no per-kernel launch left to save
        step_txt = (f" {pct(graphs)} of kernel time already runs from CUDA graphs, one launch per graph: "
                    f"{GRAPH_LAUNCH_LEFT}.")
    if step_level(m) and sev != "info":
        d = m.dispatch
        spent, too_small_for = _step_host_cost(m)
        step_txt = (f" {'The' if ctx.one_step else 'Each'} {ctx.step_noun} is "
                    f"{n_of(d.calls_per_step, ctx.fw.label('dispatch_call'), mean=True)}"
                    f"{ctx.mean_words(d.calls_per_step)} costing {ms(d.host_ms_per_step)} "
                    f"of host {spent}, more than its {ms(m.breakdown.device_compute)} of GPU compute: the whole "
                    f"{ctx.step_noun} is too small for its {too_small_for}.")
        actions = ctx.fw.fix(f"{ID}:step") + sync_fixes(ctx, m)
    return sev, few_small, actions, words + step_txt


def sync_fixes(ctx: Ctx, m: HostMetrics) -> list:
    """The framework's fix for a step too small for its host cost that syncs in every turn (``launch_bound:step_sync``:
    once, after the loop) -- where the program's own syncs (not an op's read of a size, not a poll: those have fixes of
    their own) number at least one a step over two or more kept steps; [] otherwise, or where the framework writes
    none.  The caller asks only of a step-level verdict.

    Why: a benchmark's turn of ~10 us of GPU work closed by ``torch.cuda.synchronize()`` (lutetjeff/cs521-mp2
    ``cuda.json``, h37-turn66) was told CUDA graphs and a bigger batch, never the sync itself: each one makes the host
    wait for the GPU and the GPU for the host's next call, so neither runs ahead.  The sync there waited for nothing
    (the GPU was done), so no sync finding fires; the fix belongs to the step's verdict."""
    return ctx.fw.extra(f"{ID}:step_sync") if syncs_every_step(m) else []


def _after_txt(after: float, per: str = "per step") -> str:
    """The launch wait left to the host's syncs, said where there is any."""
    if after <= 0:
        return ""
    return (f" Another {ms(after)} {per} of launch wait follows the host's syncs and blocking copies, which drained "
            f"the GPU's queue: theirs, not counted here.")


def _n_of_m(part: float, whole: float, share: float | None, ctx: Ctx) -> str:
    """"15.4 of 33.6 kernels per step on average (45.8%)": the counts as they are (a per-step mean is rarely whole)
    and the share those two numbers give, so a reader who divides them gets the printed share (issue #36: "15 of
    34 kernels (45.7%)" rounded the counts but not the share)."""
    a, b = round(part, 1), round(whole, 1)
    return (f"{mean_count(part)} of {n_of(whole, 'kernel', mean=True)} {ctx.per_step}{ctx.mean_words(part, whole)} "
            f"({pct(a / b if b else share)})")


def _against_latency(avg_us: float) -> str:
    """How a kernel's length compares with the 20-40 us it takes to launch one, in words that fit the number."""
    lo, hi = T("launch.latency_us"), T("launch.small_kernel_us")
    if avg_us <= 0:  # kernels that last no time (a damaged file's durations): no ratio to state
        return f", far shorter than the {lo:g}-{hi:g} us a launch takes"
    if avg_us < lo / 2:
        return f", about {lo / avg_us:.0f}x shorter than the {lo:g}-{hi:g} us a launch takes"
    if avg_us <= hi * 1.5:
        return f" -- about the {lo:g}-{hi:g} us launch latency itself"
    return ""
