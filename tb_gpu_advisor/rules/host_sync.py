"""§1.2.1 The host synchronises with the GPU inside the step, and the GPU then waits for the host.

Metric: GPU idle after the syncs the program asked for (``cudaStreamSynchronize`` behind a PyTorch ``.item()``,
``.cpu()``, ``cudaDeviceSynchronize``, event waits) until the host launches again, per kept step, as a share of the
step (``metrics/syncs.py``).  The guide's GPU-idle check (§1.2.1) names the host keeping the GPU waiting; a sync
drains the GPU's queue, so every launch after it is exposed.
Saving: that idle time (the queue stays full when the value is read every N steps instead), booked where the step's
ledger holds it: the host's launches, its own work, its start-up or allocator calls after the sync (issue #36: all of
it was called launch wait, 877 ms of it on cold_a100_alexnet whose step holds 1.9 ms of launch wait).  A gap is the
syncs' only as far as they blocked the host (issue #37 item 3): without a sync the host runs on by the time it waited,
so its next launch comes at most that much sooner, and the rest of the gap is the host's own time (cold_a100_alexnet:
0.92 ms of syncs, then seconds of cuDNN start-up, which run with or without them).  In a loop that waits every step
and replays graphs, the GPU's idle before the replays is the wait's too: the host prepares each replay only after its
wait, where a host running ahead prepares it while the GPU runs (``host_sync.replay_wait_held_by_syncs``; the H200
JAX twins: 543 and 652 us saved where the loops without the wait give back 542 and 652).  Its claims go in the pool
``sync_idle`` of each group: the gap and launch checks leave that idle out of theirs, so the two add up rather than
being taken for one time (``rules.savings.idle_claims``, h37-probe42s).

JAX records no sync call: its reads of device values (``float(loss)``, ``x.item()``, ``np.asarray(x)``,
``jax.device_get``, ``print(x)``) are the syncs there, each one ``np.asarray(jax.Array)`` event spanning the host's
wait, worded and fixed in JAX's terms (read every N steps; h37-left55).

Not counted (issue #37 item 3): a sync that is a blocking copy's own wait (a pageable host-to-device copy waits for
its stream) is the copy's cost, reported by ``excessive_memcpy`` with the copy's fix; the idle inside a round trip
(data copied out, worked on by the host and copied back) is ``host_op_placement``'s, a read of that data before it
included; GPU idle while the syncing thread ran nothing the profiler recorded is named apart, as a note saying how
to record it.

Without the GPU's records (no CUDA runtime call in the capture: the other GPU checks are skipped), a scalar read that
lasted milliseconds (``.item()``'s ``aten::_local_scalar_dense``) still shows the host blocked on the GPU: its time
per step is named, with the op that asked for the value and the fix that keeps the value on the GPU -- a warning at
most, with no saving, since the GPU's idle behind it is not in the capture (``HostSyncs.lost_read_ms_per_step``).
"""

from __future__ import annotations

from tb_gpu_advisor import devices
from tb_gpu_advisor.metrics.types import HostMetrics, HostSyncs
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules.base import (
    Ctx,
    action,
    count,
    finding,
    grade,
    in_async_stalls,
    in_ranges,
    ms,
    pct,
    rule,
    saving,
    share_metric,
    short,
    step_windows,
    table,
)
from tb_gpu_advisor.rules.cold_start import first_call_why
from tb_gpu_advisor.rules.savings import idle_claims

ID = "host_sync"


@rule(ID, "§1.2.1", "The host waits for the GPU inside the step (syncs drain the GPU)",
      thresholds=("host_sync.warning", "host_sync.critical"))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    if ctx.step_ms is None:
        return []
    return [f for f in (_syncs(ctx), _unrecorded(ctx), _lost_reads(ctx)) if f is not None]


def after_waits_ms(m: HostMetrics) -> float:
    """ms per step of the launch wait that follows a host sync or a blocking copy's wait (``metrics.syncs``, booked in
    the step's ledger as launch wait): the host blocked until the GPU drained, then launched the next kernel into an
    idle GPU.  Why not the launch check's (issue #37 deliverable 3: each wait belongs to its cause): a CUDA graph or bigger kernels
    leave that wait as it is -- the GPU idles because the host waited, and the fix is to stop waiting
    (an OpenMP offload region's ``cuStreamSynchronize`` after every kernel)."""
    s = m.syncs
    return float(s.gpu_idle_ledger_ms.get("launch_wait", 0.0) + s.copy_idle_ledger_ms.get("launch_wait", 0.0))


def syncs_every_step(m: HostMetrics) -> bool:
    """Whether the program's own syncs (not an op's read of a size, not a poll: those have fixes of their own) number
    at least one a step over a loop of two or more kept steps, no lone first call: a loop whose host waits for the
    GPU in every turn, and so never runs ahead of it."""
    s = m.syncs
    own = s.calls_per_step - s.in_op_calls_per_step - s.poll_calls_per_step
    # a turn's sync is "every turn" only where turns repeat: one kept step (a lone first call, wild
    # compiled_a100_triton's one compiled pass) shows no loop to sync once after
    return own >= 1.0 and m.steps.count >= 2 and first_call_why(m) is None


def replay_wait_held_by_syncs(m: HostMetrics) -> float:
    """ms per step of the GPU's wait before graph replays (``HostMetrics.launch_wait_before_replay``, less the wait
    after the syncs, which is theirs already: :func:`after_waits_ms`) in a loop that syncs every step
    (:func:`syncs_every_step`): 0 elsewhere.  That wait is the sync's cost, not the replays': a host that waits for
    the GPU in every step prepares each replay only after the wait, with nothing queued, where a host running ahead
    prepares it while the GPU still runs the step before -- the fix is the sync's (wait once, after the loop), and the
    host-sync finding's saving holds it.

    Why: H200 ``jax_train_float_loss`` (tests/fixtures/h200_waits: a jitted MLP step of five command-buffer replays,
    ``float(loss)`` every step, 979 us a step; the same loop without the wait runs 327 us) read the host-sync finding
    saving 540 us and, as a note, the replays' preparation saving 112 us more with the sync's own fix -- one cause
    told twice, its note saving 11.5% of the step (21.9% in ``jax_train_block_until_ready``) while graded info.
    Together they are the 652 us the control gives back.  That a waiting host's time before its replays goes with
    the wait is what the twins measure: ``jax_train_block_until_ready``'s dispatch (``PjitFunction``) lasts 446-522
    us a step, its twin's 250-306 us, the ~190 us of idle before the replays (h37-waits2 left that difference as "a
    host this capture does not show", capping the saving at the 359 us the host blocked)."""
    if m.capture.graph_kernel_share <= 0 or not syncs_every_step(m):
        return 0.0
    own = max(0.0, (m.breakdown.launch_wait or 0.0) - after_waits_ms(m))
    # hidden behind the GPU's work before each replay, as far as that work lasts (the replay note's own bound), and
    # only as far as the host waited: a sync that finds the GPU done holds the host back by nothing, so a host that
    # drops it runs no further ahead -- its replays' preparation stays the replays' own
    return max(0.0, min(m.launch_wait_before_replay, own, m.breakdown.device_compute, m.syncs.wait_ms_per_step))


def replays_claimed_ms(m: HostMetrics) -> float:
    """ms per step of the idle before graph replays the syncs' finding claims (:func:`replay_wait_held_by_syncs`,
    where that finding fires: :func:`_claim`), 0 elsewhere -- what the launch check's replay note leaves to it and
    points at (a pointer to a finding the report does not hold would be a dangling one)."""
    ctx = Ctx(m)
    if ctx.step_ms is None:
        return 0.0
    claim = _claim(ctx)
    return claim[1] if claim is not None else 0.0


def _claim(ctx: Ctx) -> tuple[float, float, float, str] | None:
    """(idle after the syncs, idle before the replays the waiting host prepares late, share of the step, severity) of
    the program's own syncs, graded on both; None without syncs or below the warning level."""
    s = ctx.m.syncs
    if not s.calls_per_step:
        return None
    replays = replay_wait_held_by_syncs(ctx.m)
    graded = ctx.graded(s.gpu_idle_ms_per_step + replays, "host_sync.warning", "host_sync.critical")
    return None if graded is None else (s.gpu_idle_ms_per_step, replays, *graded)


def _syncs(ctx: Ctx) -> Finding | None:
    """The syncs the program asked for, graded by the GPU idle they leave: after each wait, and -- in a loop that
    waits every step and replays graphs -- before the replays the host prepares only after its wait
    (``host_sync.replay_wait_held_by_syncs``)."""
    s = ctx.m.syncs
    claim = _claim(ctx)
    if claim is None:
        return None
    _, replays, share, sev = claim
    idle = s.gpu_idle_ms_per_step + replays
    who = ", ".join(f"{short(name, 40)} ×{count(round(per, 1))}" for name, per in s.callers[:3]) or "runtime calls"
    return finding(
        ctx, ID, sev,
        ctx.fw.label("host_sync:waits", calls=ctx.count_per_step(s.calls_per_step, "time"), who=who,
                     wait=ms(s.wait_ms_per_step), step=ctx.step_noun) +
        (ctx.fw.label("host_sync:in_op", calls=count(round(s.in_op_calls_per_step, 1))) if s.in_op_calls_per_step else "") +
        (ctx.fw.label("host_sync:poll", calls=count(round(s.poll_calls_per_step, 1))) if s.poll_calls_per_step else "") +
        "; each wait drains the GPU's queue, which then idles until the host launches more work: "
        f"{ctx.part_of_step(s.gpu_idle_ms_per_step)} ({pct(ctx.share(s.gpu_idle_ms_per_step))})"
        f"{in_async_stalls(ctx, s.gpu_idle_ms_per_step, s.idle_in_async_stalls)}"
        f"{in_ranges(ctx, dict(s.gpu_idle_ledger_ms), 'that idle')}.{_replays_txt(ctx, replays, share)}",
        metric=share_metric("sync_idle_share", "GPU idle after host syncs", share, "host_sync.warning", severity=sev,
                            meaning=ctx.fw.label("host_sync:meaning"),
                            detail={"syncs_per_step": s.calls_per_step, "syncs": s.calls, "idle_ms_per_step": s.gpu_idle_ms_per_step,
                                    "wait_ms_per_step": s.wait_ms_per_step}),
        saving=saving(ctx, idle, "the GPU's queue stays full: values are read every N steps, not every step"
                      + (", so the host prepares each graph replay while the GPU still runs the work before it"
                         if replays > 0 else ""),
                      idle_claims(s.gpu_idle_ledger_ms, pool="sync_idle") + [("launch", "sync_idle", replays)]),
        evidence=[table("Host events that wait for the GPU, {per_step}", ["host event", "syncs per step"],
                        [[short(n, 80), round(per, 2)] for n, per in s.callers])],
        # the syncs' idle where the ledger books it (``gpu_idle_ledger_ms``), each step's share of those categories
        windows=step_windows(ctx, label="GPU idle after syncs", draws=tuple(s.gpu_idle_ledger_ms) or ("launch_wait", "other"),
                             claimed_ms=s.gpu_idle_ms_per_step),
        actions=ctx.fw.fix(f"{ID}:read_in_op" if _mostly_in_ops(s) else f"{ID}:poll" if _mostly_polls(s) else ID),
        title=_title(ctx),
    )


def _replays_txt(ctx: Ctx, replays: float, share: float) -> str:
    """The idle before graph replays a loop waiting every step exposes, said as the wait's (""  where there is none)."""
    if replays <= 0:
        return ""
    return (f" And since the host waits in every {ctx.step_noun}, it prepares each graph replay only after its wait, "
            f"with nothing queued: the GPU idles another {ms(replays)} {ctx.per_step} before the replays, which a "
            f"host running ahead prepares while the GPU still runs -- {pct(share)} of the {ctx.step_noun} in all.")


def _mostly_in_ops(s: HostSyncs) -> bool:
    """Most of the syncs were ops' own reads of a size they go on with (``HostSyncs.in_op_calls_per_step``:
    ``torch.nonzero``, boolean-mask indexing, ``torch.unique``): the fix is the op's -- a size known in advance --
    first, since no ``.item()`` of the program's is there to move (h37-probe43s)."""
    return s.in_op_calls_per_step > 0.5 * s.calls_per_step


def _mostly_polls(s: HostSyncs) -> bool:
    """Most of the syncs were the program's polls (``HostSyncs.poll_calls_per_step``: ``while not ev.query()``): the
    fix is the poll's -- one wait, or work meanwhile -- not "move .item() out", which the program never wrote."""
    return s.poll_calls_per_step > 0.5 * s.calls_per_step


def _title(ctx: Ctx) -> str:
    """The rule's title, composed: said of the pass where the one step kept is the pass an unmarked capture was read as
    (the capture marks no step, so "inside the step" named one it does not hold: h37-randjobs11, walk seed 13 of
    ``--forms11``), and why the wait matters in the framework's words for its waits (``host_sync:drains``)."""
    where = ctx.the_pass_or("the step")
    return f"The host waits for the GPU inside {where} ({ctx.fw.label('host_sync:drains')})"


#: How to record the host's own code, where the framework gives no way of its own (``host_sync:unrecorded``).
RECORD_HOST = action("Record what the host does there: mark the code between GPU work with named ranges (NVTX "
                     "ranges, the framework's trace annotations) or turn on the profiler's Python tracing, then "
                     "profile again.")


def _unrecorded(ctx: Ctx) -> Finding | None:
    """GPU idle after syncs and blocking copies while the syncing thread ran nothing the profiler recorded: the host's
    own code the profiler did not see.  No fix can be sized for code the capture does not show, so it is a note (no
    saving) that names the time and how to record it."""
    s = ctx.m.syncs
    if not (s.calls_per_step or s.copy_calls_per_step) or grade(ctx.share(s.unrecorded_ms_per_step),
                                                                  "host_sync.warning") is None:
        return None
    if sum(v for _, v in ctx.m.idle_in_os_waits) >= 0.5 * s.unrecorded_ms_per_step:
        return None  # the thread waited in the OS there, running no code: the idle findings name that wait
    share = ctx.share(s.unrecorded_ms_per_step)
    f = finding(
        ctx, ID, "info",
        f"After the host's syncs and blocking copies the GPU idles "
        f"{ctx.part_of_step(s.unrecorded_ms_per_step)} ({pct(share)}) while the host runs code the profiler did not record: no op, no runtime "
        f"call and no Python call (the loop's own frames aside) covers that time on the host thread, so this capture cannot say what it is. "
        f"It is neither the syncs' nor the copies' cost; record it to find out.",
        title="The host runs code the profiler did not record while the GPU idles",
        metric=share_metric("unrecorded_host_share", "GPU idle during unrecorded host time", share,
                            detail={"unrecorded_ms_per_step": s.unrecorded_ms_per_step}),
        # where, not how much: no step row holds this time (the syncs measure it apart from the ledger, which may
        # book the stretch as host work), so a window labelled with a row's ``other`` claimed another quantity under
        # these words (corpus_torch/synced_layers: "1.05 ms of each 1.46 ms step" above "step 0 (28 us)", h37-left56)
        windows=step_windows(ctx, label="unrecorded host time", claimed_ms=s.unrecorded_ms_per_step),
        actions=ctx.record_host_fix(f"{ID}:unrecorded") or [RECORD_HOST],
    )
    f.id += f"#{f.metric.id}"  # a secondary finding of the rule (docs/report-schema.md, Finding ids)
    return f


def _lost_reads(ctx: Ctx) -> Finding | None:
    """The host's wait in scalar reads where the capture lost its GPU records (``HostSyncs.lost_read_ms_per_step``).
    Why here: the wait is the host's, measured on the host's clock, whatever the GPU's records say; the capture-quality
    finding says the records are lost, and this one what the host still shows.  Nothing is said of the GPU's kernels
    or its idle, which the capture does not hold: no saving is sized, and the severity stays at most a warning."""
    s = ctx.m.syncs
    graded = ctx.graded(s.lost_read_ms_per_step, "host_sync.warning", "host_sync.critical")
    if graded is None:
        return None
    share, _ = graded
    where = "; ".join(f"`{short(name.split(' under ')[0], 40)}`"
                      f"{' under `' + short(name.split(' under ', 1)[1], 40) + '`' if ' under ' in name else ''} "
                      f"{ms(per)} {ctx.a_step}" for name, per in s.lost_read_callers[:3])
    in_op = all(" under " in name for name, _ in s.lost_read_callers)
    kind = ctx.m.job.kind if ctx.m.job is not None else None
    # a backend whose GPU work the profiler never traces (Apple's MPS) did not lose it: its vendor says why; its code
    # is the vendor's device's, as every finding's is (``Ctx.code``, ``Framework.fit``)
    untraced = devices.vendor_of_backend(kind.untraced_backend) if kind is not None else None
    why = (untraced.NOT_RECORDED if untraced else
           f"The capture recorded no {kind.unrecorded} activity" if kind is not None and kind.unrecorded else
           "The capture lost the GPU's records")
    actions = ctx.fw.fix(f"{ID}:read_in_op" if in_op else ID)
    return finding(
        ctx, ID, "warning",
        f"The host waits {ctx.part_of_step(s.lost_read_ms_per_step)} ({pct(share)}) reading single "
        f"values back from the GPU ({where}): each read blocks the host until the GPU's queue reaches it, and the "
        f"host launches nothing meanwhile. {why}, so what the GPU ran and how long it "
        f"idled are not known; the host's wait is measured on the host.",
        title="The host waits for the GPU in scalar reads",
        metric=share_metric("lost_read_share", "Host waiting in scalar reads", share, "host_sync.warning",
                            severity="warning", detail={"wait_ms_per_step": s.lost_read_ms_per_step}),
        evidence=[table("Scalar reads that waited on the GPU, per step", ["read", "ms per step"],
                        [[short(n, 80), round(per, 3)] for n, per in s.lost_read_callers])],
        actions=actions,
    )
