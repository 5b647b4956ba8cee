"""Trace -> HostMetrics: runs every metrics module once over a shared context."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.memory import release_free_heap
from tb_gpu_advisor.common.options import UserOptions
from tb_gpu_advisor.frameworks import Framework, user_ranges, xla
from tb_gpu_advisor.job import Job
from tb_gpu_advisor.metrics import breakdown as bd
from tb_gpu_advisor.metrics import attention, capture, comm, flops, inputs, kernels, memcpy, memory, multigpu, ops, syncs, underfill
from tb_gpu_advisor.metrics.context import PS_PER_MS, Context, assign, build_context, caller_across_lines, enclosing
from tb_gpu_advisor.metrics.types import (BREAKDOWN_CATEGORIES, Breakdown, CaptureQuality, Dispatch, Fusion, GpuMetrics, Handoff, Headline, HostMetrics,
                                         KernelDurations, SmallKernels, StepMetrics, StepTable, Submission, Underfill,
                                         UnfusedAttention, per_step)
from tb_gpu_advisor.model.columns import union_intervals
from tb_gpu_advisor.model.trace import OFF_CPU, Trace, release_columns
from tb_gpu_advisor.steps.types import Steps


def _share(a: float | None, b: float | None) -> float | None:
    return (a / b) if (a is not None and b) else None


def compute_host_metrics(trace: Trace, steps: Steps, launches: list[np.ndarray], fw: Framework,
                         options: UserOptions | None = None, release: bool = False, job: Job | None = None) -> HostMetrics:
    """Every metric of one host, from its trace and the steps found in it; the numpy context they share
    stays in here (the report sees metrics only).  ``options``: the user's settings (none: the defaults).
    ``release``: the host columns only the context reads are dropped once it is built (``pipeline.host_metrics``)."""
    ctx = build_context(trace, steps, launches, fw, options, job)
    del launches
    # XPlane's tell launches and step roots by the corr and root, released next
    marked = user_ranges.program_ranges(trace, ctx.fw)
    comm_ranges = user_ranges.communication_ranges(trace.ranges)
    if release:
        release_columns(trace.h, "corr", "root")
    release_free_heap()  # the context's build temporaries (see memory.py)
    idle = _idle_per_gpu(ctx, marked, comm_ranges)
    ledger = _host_ledger(ctx, idle.arrays)
    kept = ops.kept_ops(ctx)
    place = ops.placement(ctx, kept)
    op_list = ops.op_stats(ctx, top_n=0, kept=kept)
    del kept
    release_free_heap()  # the breakdown's and the ops' temporaries, before memcpy's encloser is built (memory.py)
    # the report keeps the first 500 rows: a row per step, GPU and direction otherwise lives on
    mc, mc_rows = memcpy.memcpy_stats(ctx, ledger.avg.as_dict(), max_rows=500)
    release_free_heap()  # the memcpy encloser's sort keys and masks: tens of MB on large captures (memory.py)
    gm = multigpu.gpu_metrics(ctx, idle.arrays)
    _host_calls_per_gpu(gm, idle.comm_calls_ms, ctx.steps.count)
    _launch_in_comm_per_gpu(gm, idle.launch_in_comm, ctx.steps.count)
    # the kernel modules' per-GPU temporaries (~100 bytes per device event) are handed back after each of them
    kernel_rows = _trimmed(kernels.kernel_stats, ctx)
    communication = comm.communication(ctx, idle.paced)
    # before the in-step kernel modules: the rooflines mark each kernel's share of time above its peaks' floor
    # (``GpuCtx.above_floor``), which underfill's bound reads (h37-pool36)
    fl = flops.flops(ctx, ledger.avg_step)
    ks = _in_step_kernels(ctx)
    recorded = host_recorded(trace)
    head = _headline(ledger, place, ks.precision, bool(ctx.active), host_recorded=recorded)
    notes = _notes(trace, bool(ctx.active))
    n = ctx.steps.count
    sy = syncs.host_syncs(ctx, gap_windows={c.gpu: c.windows for c in idle.gaps if c is not None})
    hm = HostMetrics(
        host=trace.host, path=trace.path, capture=ks.quality, steps=ctx.steps.detection, headline=head,
        breakdown=ledger.avg, steps_detail=[], gpus=gm + multigpu.memory_only_gpus(ctx), kernels=kernel_rows, kernels_ran_into=kernels.kernel_stats(ctx, True),
        ops=op_list[:200],
        memcpy=mc, memcpy_steps=mc_rows, small_kernels=ks.small, eager=ops.eager(ctx),
        host_ops=ops.host_ops(ctx, op_list, place), fusion=ks.fusion, loss_scaling=ops.loss_scaling(ctx),
        gaps=bd.summarize_gaps(idle.gaps, ledger.avg_step, ledger.avg),
        multi_gpu=multigpu.multi_gpu(ctx, gm, idle.arrays), memory=memory.memory(ctx),
        notes=notes, round_trip=memcpy.round_trips(ctx), dispatch=_dispatch(ctx),
        kernel_durations=ks.durations, syncs=sy, input=inputs.host_input(ctx), comm=communication,
        flops=fl, applied={**capture.applied_fixes(ctx), **memcpy.applied(mc, ctx.trace.h2d_non_blocking, ctx.steps.count)},
        unmet_fixes=capture.unmet_fixes(ctx), cache_release=capture.cache_release(ctx),
        alloc_calls=capture.alloc_calls(ctx),
        job=job, compute_critical_ms=bd.mean_critical(ledger.arrays, idle.arrays, ctx),
        compute_critical_share=bd.critical_shares(idle.arrays, ctx),
        idle_in_ranges=bd.top_ranges(idle.in_ranges, n),
        idle_in_ranges_by=(by := bd.top_ranges_by(idle.in_host_idle, n)),
        ranges_launching=sorted(idle.launching & set(by)),
        ranges_computing=sorted(idle.computing),
        host_work_frame=bd.deepest_frame(idle.in_frames, n, ledger.avg.host_compute),
        host_work_in_model=bd.held_by(idle.in_frames, n, ctx.fw.model_call),
        idle_in_os_waits=bd.top_ranges(idle.in_waits, n), idle_in_comm_calls=bd.top_ranges(idle.in_comm, n),
        idle_in_async_stalls=bd.top_ranges(idle.in_stalls, n),
        underfill=ks.underfill, unfused_attention=ks.attention,
        idle_in_os_waits_after_work=_per_step(idle.tail_waits, n),
        idle_held=_per_step(idle.held, n),
        submission=_submission(idle.submitted, n),
        handoff=max(idle.handoff, default=(0.0, Handoff()), key=lambda x: x[0])[1],
        idle_queued_first=_per_step(idle.queued, n),
        idle_queued_first_blocked=_per_step(idle.queued_blocked, n),
        launch_wait_before_replay=_per_step([w for w, _ in idle.replay], n),
        kernels_outside_graphs=_per_step([k for _, k in idle.replay], n),
        graph_node_gap_us=capture.graph_node_gap_us(ctx),
        idle_in_host_loops=_per_step([h for h, _ in idle.loops], n),
        launch_wait_in_host_loops=_per_step([w for _, w in idle.loops], n),
        launch_wait_in_launch_calls=_per_step([c for c, _ in idle.launch_split], n),
        launch_wait_host_code=_per_step([o for _, o in idle.launch_split], n),
        waits_traced=(traced := waits_traced(trace)), host_recorded=recorded,
        os_runtime_threshold_us=_os_runtime_threshold_us(trace) if traced == "os runtime" else None,
    )
    (hm.unrecorded_before_launcher_ms, hm.launcher_launches, hm.unrecorded_before_launcher_in_gaps_ms,
     hm.launcher_launches_in_gaps) = syncs.launcher_silence(ctx, {c.gpu: c.windows for c in idle.gaps if c is not None})
    hm.steps_detail = _step_table(ctx, idle.arrays, ledger)
    hm.one_time_in_steps_ms, hm.one_time_before_steps_ms = one_time_in_steps(job, steps.host_windows)
    hm.recaptures = recaptures_in_steps(job, steps.host_windows)
    if not gpu_step_timed(job):
        _without_gpu_step(hm, trace)
    return hm


def _submission(submitted: list[tuple[float, Submission, np.ndarray]], n: int) -> Submission:
    """The submission reading of the GPU with most launches read, its idle within the latency per step (``n`` kept
    steps) and the part of it the host waited through in syncs, by ledger category.  Why one: the finding names one
    latency; the GPUs of one host share its driver."""
    if not submitted:
        return Submission()
    ms, sub, crit = max(submitted, key=lambda x: x[1].launches)
    critical = {c: float(v) / PS_PER_MS / n for c, v in zip(BREAKDOWN_CATEGORIES, crit) if v > 0} if n else {}
    return dataclasses.replace(sub, idle_ms=ms / n if n else 0.0, critical_ms=critical)


def one_time_in_steps(job: Job | None, windows: np.ndarray) -> tuple[float, float]:
    """The job's one-time costs inside the kept steps' host ``windows`` ((n, 2) absolute ps) and before the first of
    them, in ms (over all the steps, not per step).

    Why: the phase measures the costs over the window and the ledger books only the GPU's idle inside them, so neither
    says where the costs lie against the steps; a one-pass program whose kernels run in one burst holds its library
    start-up and its first uploads inside the pass, not before it (ntua-el20062/gemm_spmm_a100 ``gemm_tiled_20000``:
    cuBLAS's start-up inside the 1.57 s pass, the host's pinned allocations before it)."""
    if job is None or not len(job.phase.start) or not len(windows):
        return 0.0, 0.0
    s, e = job.phase.spans()
    inside = 0
    for a, b in windows:  # the spans are disjoint, so are kept steps: no part is counted twice
        inside += int(np.clip(np.minimum(e, b) - np.maximum(s, a), 0, None).sum())
    first = int(np.min(windows[:, 0]))
    before = int(np.clip(np.minimum(e, first) - s, 0, None).sum())
    return inside / PS_PER_MS, before / PS_PER_MS


def recaptures_in_steps(job: Job | None, windows: np.ndarray) -> tuple[int, int, float, float] | None:
    """The kept steps (host ``windows``, (n, 2) absolute ps) holding the start of a graph captured again
    (``job.phase.OneTime.recapture_start``) against the others: (steps holding one, kept steps, ms per kept step
    those steps run over the others' median -- the cost the recaptures add to the average step --, ms of the capture
    spans inside the kept steps).  None where no kept step holds one, or every kept step does (nothing to compare).

    Why from the steps' own times: a recapture's cost is more than its capture -- the framework's eager warm-up run,
    the recording, the instantiation, the Python around them (pytorch/ao's compiled ViT: a 7 ms capture inside each
    210 ms call that records, beside 2.4 ms replays, ``wild/compiled_vit_recapture_a100``) -- and a step that holds
    none is the same call replayed: the difference is what recording again costs."""
    if job is None or not job.phase.recapture_start.size or len(windows) < 2:
        return None
    s, e = job.phase.recapture_start, job.phase.recapture_end
    k = np.searchsorted(windows[:, 0], s, side="right") - 1
    ok = (k >= 0) & (s < windows[np.clip(k, 0, None), 1])
    held = np.zeros(len(windows), dtype=bool)
    held[k[ok]] = True
    if not held.any() or held.all():
        return None
    dur = (windows[:, 1] - windows[:, 0]).astype(np.float64) / PS_PER_MS
    base = float(np.median(dur[~held]))
    extra = float(np.clip(dur[held] - base, 0, None).sum()) / len(windows)
    inside = sum(int(np.clip(np.minimum(e, b) - np.maximum(s, a), 0, None).sum()) for a, b in windows) / PS_PER_MS
    return int(held.sum()), len(windows), extra, inside


def gpu_step_timed(job: Job | None) -> bool:
    """Whether the host's window holds a GPU step to time: not where the job's reading says its marks time none
    (``Kind.times_gpu_step``): a window without GPU work (``job.kind`` ``no_gpu``: no kernel launched -- start-up, an
    input pipeline's loop, a model on the CPU), marked or not; the loop's end, whose marks time none of the job's
    steps; CUDA tracing off, whose NVTX marks time iterations the ledger could only book as host time.

    Why here: a GPU step is the GPU's work of one iteration, and such a window has none -- the span of an input-only
    DataLoader loop's uploads (5.72 s) is no step length, yet the report's step rows, its achievable account and its
    cards kept it while its title said "no step" and its GPU row (asked apart, in the report builder) said none.
    Decided once, where the step is measured, so that every reader -- step rows, cards, the account, the text, the
    MCP, a diff, a merge -- reads the one value.  A host that marks its iterations on the CPU (a CPU-only capture's
    ``ProfilerStep`` marks; a TF loop whose GPUs only copy its batches) keeps them as how the window was read
    (``steps``) and in the job's words, not as GPU steps (h37-tidy29: ``h200_jobs/torch_cpu_only``'s JSON held 4 steps
    of 88 ms under the title "no step: the window holds no GPU work")."""
    return job is None or job.kind.times_gpu_step


def _without_gpu_step(hm: HostMetrics, trace: Trace) -> None:
    """Drop the step a window without GPU work was measured as (:func:`gpu_step_timed`): no step rows, no mean step,
    no ledger of the pass (its parts sum to the step a report without one reads), no GPU row's step.  What the window
    holds -- its length, its copies, the job's words -- stays."""
    hm.steps_detail = StepTable()
    hm.headline.avg_step_ms = None
    # a share of no step: the GPU's work of a loop's end (an earlier step's queue draining) is no step's part
    hm.headline.device_step_share = hm.headline.launch_wait_share = hm.headline.input_wait_share = None
    hm.breakdown = Breakdown()
    # with no step kept, a GPU's kernels are the window's: a loop's end whose GPU drained the last step's queue ran
    # 964 of them, which its row said were 0 beside the finding that counts them (h37-loopend2)
    ran = {d.gpu: int((d.kind == devices.KIND_KERNEL).sum()) for d in trace.devices if len(d)}
    for g in hm.gpus:
        g.step_ms, g.breakdown, g.kernel_count = None, Breakdown(), ran.get(g.gpu, 0)
        if g.kernel_count:  # its busy share was of the step dropped, the kernels' time lying outside it: no share
            g.busy_ms_per_step = g.busy_share = None


def host_recorded(trace: Trace) -> bool:
    """Whether the capture recorded anything of the host (a runtime call, a launch, an op, a range): False for a
    kernel trace alone (rocprof ``--stats`` without ``--hip-trace``, ``rocprofv3 --kernel-trace``), which holds the
    GPU's work and nothing of what the host did around it.  The one place that decides it: the launch card, the idle
    findings and the gap check ask ``HostMetrics.host_recorded`` (issue #37 class 1, h37-hostless) -- an unrecorded
    host is unobserved, not a host that was recorded and did nothing the capture names."""
    return len(trace.h) > 0


#: The longest OS runtime threshold (``nsys profile --osrt-threshold``, ns) under which the trace is read as holding
#: every wait of a thread: a blocking call that returns sooner costs about what the two context switches around it
#: cost (a few us each), so the thread hardly left its CPU -- Nsight's default threshold is 1 us.
OS_CALLS_WHOLE_NS = 10_000


def waits_traced(trace: Trace) -> str:
    """What records the host threads' waits, so that a thread's time outside every recorded call is time it ran (on
    its CPU, or preempted) -- the one place that decides what the host's unrecorded time is: "scheduler" where the
    capture traced context switches (stretches :data:`OFF_CPU`: a thread's time outside them is on the CPU); "os
    runtime" where it traced the OS runtime's calls (Nsight ``-t osrt``: the export's own settings say so, with a
    threshold of at most :data:`OS_CALLS_WHOLE_NS`) and holds such calls on a thread of the program's recorded work --
    a thread waiting for something outside the program (a file, a socket, a lock, a timer, a frame) waits in a system
    call, which that trace records, so what no call covers is the thread running; "" otherwise (the time may be a
    wait: nothing tells).

    Why: wrf-gpu/wrf_gpu's JAX solver bake-off (``--trace=cuda,nvtx,osrt``, 1 us threshold, no context switches)
    has ~1.0 ms a step of its launching thread covered by no CUDA call, NVTX range or OS call -- Python and dispatch
    between the jitted calls, the host's own work -- which was read as possibly a wait and kept out of host-bound."""
    w = trace.host_waits
    if w is None or not len(w):
        return ""
    if OFF_CPU in w.names:
        return "scheduler"
    return "os runtime" if _os_runtime_threshold_us(trace) is not None and bool((w.line >= 0).any()) else ""


def _os_runtime_threshold_us(trace: Trace) -> float | None:
    """The OS runtime trace's threshold in us where the export says it traced OS calls with one of at most
    :data:`OS_CALLS_WHOLE_NS` (``Trace.producer``, from the capture's settings; never assumed), else None."""
    threshold = trace.producer.get("os_runtime_threshold_ns", "")
    if trace.producer.get("os_runtime_trace") != "on" or not threshold.isdigit():
        return None
    return int(threshold) / 1000.0 if int(threshold) <= OS_CALLS_WHOLE_NS else None


@dataclass
class _Idle:
    """Each GPU's step columns and, per active GPU, what its idle time holds (gaps, ranges, OS waits, held and queued
    work).  Why one value: one pass over the GPUs builds them all from the same attributed intervals, which are
    dropped before the next GPU's are made."""
    arrays: dict[int, bd.StepArrays] = field(default_factory=dict)
    gaps: list[bd.GapColumns | None] = field(default_factory=list)
    in_ranges: list[dict[str, float]] = field(default_factory=list)
    #: each range's idle per ledger category, per active GPU
    in_host_idle: list[dict[str, dict[str, float]]] = field(default_factory=list)
    #: each recorded Python call's share of the host's own work, per active GPU (``bd.frames_in_host_work``)
    in_frames: list[dict[str, tuple[float, float]]] = field(default_factory=list)
    #: the ranges inside which some GPU's work was launched
    launching: set[str] = field(default_factory=set)
    #: the ranges inside which some GPU's kernels (not only copies) were launched in the kept steps
    computing: set[str] = field(default_factory=set)
    in_waits: list[dict[str, float]] = field(default_factory=list)
    #: per active GPU: communication call name -> ms of idle in the steps booked to it (``bd.comm_calls_in_idle``)
    in_comm: list[dict[str, float]] = field(default_factory=list)
    #: per active GPU: slow asynchronous call name -> ms of idle in the steps the host stalled in it
    #: (``bd.async_stalls_in_idle``)
    in_stalls: list[dict[str, float]] = field(default_factory=list)
    #: GPU -> ms of its idle in the steps booked to the host's communication calls (the sum of its ``in_comm``)
    comm_calls_ms: dict[int, float] = field(default_factory=dict)
    #: ms of OS waits after each step's last GPU work, per active GPU
    tail_waits: list[float] = field(default_factory=list)
    #: ms of idle holding launched work, not at a handoff between streams (``bd.held_ms``), per active GPU
    held: list[float] = field(default_factory=list)
    #: (ms of idle within the driver's submission latency, booked as the host's time, its reading, ps by ledger
    #: category of that idle the host waited through in syncs) per active GPU (``bd.submission_ms``,
    #: ``bd.submission``, ``bd.submission_critical``)
    submitted: list[tuple[float, Submission, np.ndarray]] = field(default_factory=list)
    #: (ms of idle at handoffs between streams -- the ledger's ``stream_handoff`` --, the busiest handoff "A to B"),
    #: per active GPU (``bd.handoff_reading``)
    handoff: list[tuple[float, Handoff]] = field(default_factory=list)
    #: per active GPU: the idle between its small collectives launched one by one, booked as collectives
    #: (``iv["comm_launch"]``, ``metrics.breakdown.paced_collective_gaps``), as (starts, ends)
    paced: dict = field(default_factory=dict)
    #: ms of idle before the capture's first GPU work, that work launched, per active GPU
    queued: list[float] = field(default_factory=list)
    #: of that, ms the host spent blocked in a sync or a blocking copy
    queued_blocked: list[float] = field(default_factory=list)
    #: (ms of launch wait before graph replays, kernels launched outside graphs) in the kept steps, per active GPU
    replay: list[tuple[float, float]] = field(default_factory=list)
    #: (ms of idle booked as the host's own time, ms booked as launch wait) while the host ran the compiled programs'
    #: loop iterations, per active GPU
    loops: list[tuple[float, float]] = field(default_factory=list)
    #: (ms of launch wait in the kernel launch calls and their submission, ms of the idle before late launches in the
    #: launching threads' silences outside them) in the kept steps, per active GPU (``metrics/breakdown.launch_split``)
    launch_split: list[tuple[float, float]] = field(default_factory=list)
    #: GPU -> ms of its collective time in the kept steps while its other work waited for launches
    #: (``bd.launch_gaps_in_collectives``)
    launch_in_comm: dict[int, float] = field(default_factory=dict)


def _idle_per_gpu(ctx: Context, marked: np.ndarray, comm_ranges: np.ndarray) -> _Idle:
    """Each GPU's step ledger, and for an active one what fills its idle time: done GPU by GPU so that only one
    GPU's attributed intervals (``iv``, ``painted``) are alive at a time."""
    out = _Idle()
    for g in ctx.gpus:
        arr, iv, painted = bd.gpu_step_arrays(ctx, g)
        out.arrays[g.d.gpu] = arr
        if g.active:
            out.held.append(bd.held_ms(g, iv))
            out.submitted.append((bd.submission_ms(g, iv), ctx.memo.get(("submission", g.d.gpu), Submission()),
                                  bd.submission_critical(ctx, g, iv)))
            out.handoff.append(bd.handoff_reading(ctx, g, iv))
            if iv["comm_launch"][0].size:
                out.paced[g.d.gpu] = iv["comm_launch"]
            out.queued.append(bd.queued_first_ms(g, iv))
            out.queued_blocked.append(bd.queued_first_blocked_ms(ctx, g, iv))
            out.replay.append(bd.replay_wait(ctx, g, iv))
            out.loops.append(bd.loop_idle(ctx, g, iv))
            out.launch_split.append(bd.launch_split(ctx, g, iv))
            out.launch_in_comm[g.d.gpu] = bd.launch_gaps_in_collectives(ctx, g, iv)
            out.gaps.append(bd.step_gaps(ctx, g, iv, painted, marked, comm_ranges))
            out.in_ranges.append(bd.ranges_in_idle(ctx, g, marked))
            out.in_host_idle.append(bd.ranges_in_host_idle(ctx, g, iv, marked))
            out.in_frames.append(bd.frames_in_host_work(ctx, g, iv))
            out.launching.update(bd.ranges_launching(ctx, g, sorted(out.in_host_idle[-1]), marked))
            gap_ranges = set(out.gaps[-1].ranges_ms) if out.gaps[-1] is not None else set()
            out.computing.update(bd.ranges_launching(ctx, g, sorted(set(out.in_host_idle[-1]) | gap_ranges), marked,
                                                     kinds=(devices.KIND_KERNEL,)))
            out.in_waits.append(bd.os_waits_in_idle(ctx, g, iv))
            out.in_comm.append(bd.comm_calls_in_idle(ctx, g, iv))
            out.in_stalls.append(bd.async_stalls_in_idle(ctx, g, iv))
            out.comm_calls_ms[g.d.gpu] = sum(out.in_comm[-1].values())
            out.tail_waits.append(bd.os_waits_after_work(ctx, g))
        del iv, painted
    return out


@dataclass
class _Ledger:
    """The host's step ledger: its mean breakdown and step times, as columns where there are GPUs (``arrays``) or as
    rows (``rows``, with each GPU's rows in ``per_gpu`` where they had to be made)."""
    avg: Breakdown
    step_ms: list[float]
    arrays: bd.StepArrays | None = None
    rows: list[StepMetrics] | None = None
    per_gpu: dict[int, list[StepMetrics]] | None = None

    @property
    def avg_step(self) -> float | None:
        """The mean step every share is of (None: no steps), to the ns the report keeps (``build``'s 6 decimals of ms):
        one float the rules print and the report stores, so every surface prints one step in one set of digits
        (h37-randjobs4: 0.2725002 ms printed "273 us" by the rules, its report value 0.2725 "272 us")."""
        return round(sum(self.step_ms) / len(self.step_ms), 6) if self.step_ms else None


def _host_ledger(ctx: Context, per_gpu_arr: dict[int, bd.StepArrays]) -> _Ledger:
    """The host's steps from its GPUs' columns.  Each GPU's per-step rows (StepMetrics objects: ~1 kB a row, 13 MB
    for 8 GPUs x 1,300 steps) are made from its columns at the end, after the modules' peak, unless the host rows
    need them now (no host columns: the host-only rows)."""
    host_arr = bd.host_arrays(ctx, per_gpu_arr) if per_gpu_arr else None
    if host_arr is not None:
        return _Ledger(avg=bd.average_matrix(host_arr.mat), step_ms=host_arr.step_ms.tolist(), arrays=host_arr)
    per_gpu = {gid: arr.rows() for gid, arr in per_gpu_arr.items()}
    rows = bd.host_rows(ctx, per_gpu) if per_gpu else _host_only_rows(ctx)
    return _Ledger(avg=bd.average(rows), step_ms=[r.step_ms for r in rows], rows=rows, per_gpu=per_gpu)


@dataclass
class _InStepKernels:
    """What the modules that read each GPU's in-step kernels found."""
    precision: dict[str, float]
    fusion: Fusion
    durations: KernelDurations
    small: SmallKernels
    quality: CaptureQuality
    underfill: Underfill
    attention: UnfusedAttention


def _in_step_kernels(ctx: Context) -> _InStepKernels:
    """Run the modules that read each GPU's in-step kernels and their durations (``GpuCtx.kernels_in_steps``:
    precision, fusion, durations, small kernels, capture checks, underfill) one after the other, then drop the shared
    durations (8 bytes a kernel): they would otherwise lie under every module after these."""
    out = _InStepKernels(precision=kernels.precision_totals(ctx), fusion=_trimmed(kernels.fusion, ctx),
                         durations=_trimmed(kernels.kernel_durations, ctx), small=kernels.small_kernels(ctx),
                         quality=capture.capture_quality(ctx), underfill=underfill.underfill(ctx),
                         attention=attention.unfused_attention(ctx))
    for g in ctx.gpus:
        g.forget_kernels()
    release_free_heap()  # those durations, under the modules below (memory.py)
    return out


def _headline(ledger: _Ledger, place: dict, prec: dict, has_gpu: bool, host_recorded: bool = True) -> Headline:
    """The headline shares.  16-bit shares are of the kernel time whose precision the names (or shapes) tell: an XLA
    fusion or a Triton GEMM names no dtype, and counting it as 32-bit made bf16 captures look fp32.

    ``host_recorded`` False: the capture recorded the GPU's work and nothing of the host (a kernel trace alone:
    ``rocprofv3 --kernel-trace``), so no launch is there to have been waited for -- the launch wait is not measured
    (None), not a zero the ledger's empty host part sums to (h37-review17: wild/fsdp_mi350x_kernel_trace's "Idle
    waiting for launch 0.0%", graded good)."""
    avg, avg_step = ledger.avg, ledger.avg_step
    known_ms = prec["kernel_ms"] - prec["unknown_ms"]
    return Headline(
        avg_step_ms=avg_step,
        device_step_share=_share(avg.device_compute, avg_step) if has_gpu else None,
        host_op_share_by_count=place["share_by_count"], host_op_share_by_time=place["share_by_time"],
        device_op_count=place["device_count"], host_op_count=place["host_count"],
        kernel_count=prec["kernel_count"], fp16_kernel_count=prec["fp16_count"], bf16_kernel_count=prec["bf16_count"],
        fp16_time_share=_share(prec["fp16_ms"], known_ms), bf16_time_share=_share(prec["bf16_ms"], known_ms),
        sixteen_bit_time_share=_share(prec["fp16_ms"] + prec["bf16_ms"], known_ms),
        unknown_precision_share=_share(prec["unknown_ms"], prec["kernel_ms"]),
        integer_data_share=_share(prec["integer_data_ms"], prec["kernel_ms"]),
        eight_bit_time_share=_share(prec["eight_bit_ms"], known_ms),
        tensor_core_time_share=_share(prec["tc_ms"], prec["kernel_ms"]),
        launch_wait_share=_share(avg.launch_wait, avg_step) if has_gpu and host_recorded else None,
        input_wait_share=_share(avg.input_wait, avg_step) if has_gpu else None,  # the GPU's wait: none without one
    )


def _notes(trace: Trace, has_gpu: bool) -> list[str]:
    """What the report must say of the capture before any finding: what the reader could not read (the report is
    partial), what it says of the file besides, and why there are no device metrics."""
    notes = [str(p) for p in trace.problems]  # what the reader could not read, in words: the report is partial
    notes += getattr(trace, "notes", [])  # what it says of the file besides (no damage)
    if trace.snapshot is not None:
        notes.append("a PyTorch memory snapshot: the allocator's state, history and out-of-memory errors; no kernels "
                     "or steps")
    elif not has_gpu:
        # why there are none is the job's to say (its kind evidence: the CPU, an accelerator, lost GPU records, a
        # window before the GPU work): guessing "CPU-only" here contradicted it on 12 of 15 kept captures (h37-review4)
        notes.append("no GPU kernels in this capture: device metrics are not available")
    return notes


def _host_calls_per_gpu(gm: list[GpuMetrics], comm_calls_ms: dict[int, float], steps: int) -> None:
    """Each GPU's idle per step the host spent waiting in communication calls (``GpuMetrics.host_calls_ms_per_step``).
    Why per GPU: the host's ``idle_in_comm_calls`` is a mean over its GPUs, and the job reads each rank's wait apart --
    the least rank's is the communication itself, the rest waiting for a late rank (``JobView.host_calls_transfer_ms``)."""
    for g in gm:
        g.host_calls_ms_per_step = round(per_step(comm_calls_ms.get(g.gpu, 0.0), steps, 1), 6) if steps else 0.0


def _launch_in_comm_per_gpu(gm: list[GpuMetrics], launch_in_comm: dict[int, float], steps: int) -> None:
    """Each GPU's collective time per step during which its other work waited for launches
    (``GpuMetrics.launch_in_collectives_ms_per_step``).  Why per GPU: a host's step is its pacing GPU's where its GPUs
    meet at the collectives, and the launch fix's bound reads that GPU's own launch gaps (``rules._multi``)."""
    for g in gm:
        g.launch_in_collectives_ms_per_step = (round(per_step(launch_in_comm.get(g.gpu, 0.0), steps, 1), 6)
                                               if steps else 0.0)


def _per_step(per_gpu_ms: list[float], steps: int) -> float:
    """A total per active GPU as ms per step and GPU: the idle figures are compared with the mean step (0 without
    steps or GPUs)."""
    return per_step(sum(per_gpu_ms), steps, len(per_gpu_ms)) if per_gpu_ms and steps else 0.0


def _step_table(ctx: Context, per_gpu_arr: dict[int, bd.StepArrays], ledger: _Ledger) -> StepTable:
    """Each active GPU's per-step rows, then the host's.  The rows stay columns (StepTable): the report reads them as
    such, a rule that reads rows gets them made."""
    active_ids = {g.d.gpu for g in ctx.gpus if g.active}
    host_block = ledger.arrays if ledger.arrays is not None else ledger.rows
    per_gpu = ledger.per_gpu
    return StepTable([per_gpu[gid] if per_gpu is not None else per_gpu_arr[gid]
                      for gid in sorted(per_gpu_arr) if gid in active_ids] + [host_block])


def _trimmed(fn, ctx: Context):
    """``fn(ctx)``, then its freed temporaries handed back to the OS (see memory.py): otherwise each module's
    leftovers would lie under the next one's peak."""
    out = fn(ctx)
    release_free_heap()
    return out


def _dispatch(ctx: Context) -> Dispatch:
    """Dispatch calls and their host time per kept step (outermost dispatch events by host step)."""
    n = ctx.steps.count
    if not n:
        return Dispatch()
    # the loops' host time in either form (XPlane's [iter=N], Nsight's loop thunk ranges); a count only from XPlane's
    # iteration spans, the one form that marks where an iteration ends (h37-loops2: never a count invented).  Read
    # without dispatch calls too: an Nsight export of JAX holds XLA's module ranges, never JAX's PjitFunction events
    execs, iters, loops = (_in_steps(ctx, p) for p in (xla.is_execution, xla.is_loop_iteration, xla.is_host_loop))
    looped = dict(execution_ms_per_step=ctx.per_step(_union_ms(ctx, execs)),
                  loop_iterations_per_step=ctx.per_step(iters.sum()), loop_ms_per_step=ctx.per_step(_union_ms(ctx, loops)))
    if ctx.dispatch_calls is None or not ctx.dispatch_calls.any():
        return _runtime_dispatch(ctx, looped)
    step = _call_steps(ctx)
    m = ctx.dispatch_calls & (step >= 0)
    m |= _calls_launching_unclaimed_steps(ctx, m, step)
    # per step and rank: each rank's process dispatches its own calls
    return Dispatch(calls_per_step=ctx.per_step(m.sum()), host_ms_per_step=ctx.per_step((ctx.h.end[m] - ctx.h.start[m]).sum() / 1e9),
                    **looped)


def _runtime_dispatch(ctx: Context, looped: dict) -> Dispatch:
    """:func:`_dispatch` where the framework records no dispatch of compiled work: its step calls
    (``Framework.step_calls``: a native program's launches, copies and syncs) in kept steps, their host time less
    the calls that wait for the GPU (``Framework.step_call_wait``: the GPU works while the host sits in a sync).

    Why: a CUDA C++ loop of one tiny kernel and a ``cudaDeviceSynchronize`` a turn dispatches its work by those calls
    alone; counted as none, its step was never read as too small for its dispatch, so the sync-once fix written in
    native words (``launch_bound:step_sync``) reached no report (h37-native67)."""
    calls = ctx.h.name_mask(ctx.fw.step_calls) & (ctx.host_step >= 0)
    if not calls.any():
        return Dispatch(**looped)
    cost = calls & ~ctx.h.name_mask(ctx.fw.step_call_wait)
    return Dispatch(calls_per_step=ctx.per_step(calls.sum()),
                    host_ms_per_step=ctx.per_step((ctx.h.end[cost] - ctx.h.start[cost]).sum() / 1e9), **looped)


def _call_steps(ctx: Context) -> np.ndarray:
    """Kept-step index per host event, as ``ctx.host_step`` (by its start), except that a dispatch call holding the
    start of a step found in the capture (kept or dropped) belongs to that step (the first such): -1 where it is
    dropped.

    Why: a step cut where the call's compiled program begins (XLA's ``<module>:XLA GPU module`` execution, nested in
    its ``PjitFunction``) starts after the call that launched it began; counted by their start, each call fell in the
    step before its own, the first in none -- ``wild/jax_mi355x``, one ``jit_loss_fn`` call a step, read 4 calls in 5
    steps (0.8 a step); ``wild/jax_mi300x`` counted the call of its dropped last step in place of its first kept
    step's.  A call holding a step's start is the call that runs that step: its work begins inside it.  Steps that
    tile the timeline from markers enclosing their calls hold no boundary inside a call, and each call is counted
    once, in one step, whichever rule places it."""
    step = ctx.host_step
    calls = np.flatnonzero(ctx.dispatch_calls)
    starts, kept = _step_starts(ctx.steps)
    if not calls.size or not starts.size:
        return step
    k = np.searchsorted(starts, ctx.h.start[calls], side="right")  # the first step beginning after each call's start
    inside = k < starts.size
    inside[inside] = starts[k[inside]] < ctx.h.end[calls[inside]]
    if not inside.any():
        return step
    step = step.copy()
    step[calls[inside]] = kept[k[inside]]
    return step


def _step_starts(steps) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001 - steps.Steps (metrics reads it as data)
    """Where every step found in the capture starts on the host (ps, sorted) and its kept index, -1 for a dropped
    one: a dropped step's call is its own, never the kept step's before it."""
    dropped = [d.window[0] for d in steps.detection.dropped if d.window is not None]
    starts = np.concatenate([steps.host_windows[:, 0].astype(np.int64), np.asarray(dropped, dtype=np.int64)])
    kept = np.concatenate([np.arange(steps.count, dtype=np.int64), np.full(len(dropped), -1, dtype=np.int64)])
    order = np.argsort(starts, kind="stable")
    return starts[order], kept[order]


def _calls_launching_unclaimed_steps(ctx: Context, started: np.ndarray, step: np.ndarray) -> np.ndarray:
    """Bool per host event: the dispatch calls that launched GPU work of a kept step in which no dispatch call starts
    (``started``: the calls counted by their start).

    Why: a step drawn from the GPU's work -- a one-pass capture read whole, or the first of the steps cut at XLA's
    executions -- begins at its first launch, after the call that launched it began; counted by their start, the
    one-pass window of survey h37-survey40's A10G conv (one ``PjitFunction`` of 337 us dispatching 16 us of kernels)
    held no call, so the step-level verdict ("too small for its dispatch") could not fire and the host-bound finding
    said "jit the whole step" to a program that was one jitted call.  A step that already holds a call starting in it
    keeps the old count: steps that tile the timeline hold the next call's start, and adding the call that launched
    their work too would count it twice."""
    out = np.zeros(len(ctx.h), dtype=bool)
    claimed = np.unique(step[started])
    for g in ctx.gpus:
        sel = (g.launch >= 0) & (g.step >= 0)
        sel[sel] = ~np.isin(g.step[sel], claimed)
        if not sel.any():
            continue
        launch = g.launch[sel].astype(np.int64)
        caller = enclosing(ctx.h, ctx.dispatch_calls, launch)
        lost = caller < 0
        if lost.any():
            caller[lost] = caller_across_lines(ctx.h, ctx.dispatch_calls, launch[lost])
        out[caller[caller >= 0]] = True
    return out


def _in_steps(ctx: Context, pred) -> np.ndarray:  # noqa: ANN001 - a name predicate
    """The host events whose name ``pred`` accepts that start or end in a kept step (an execution that began before
    the step's first GPU work still holds the step's loop iterations: its part in the steps counts, :func:`_union_ms`)."""
    m = ctx.h.name_mask(pred)
    if m.any():
        m &= (ctx.host_step >= 0) | (assign(ctx.h.end, ctx.steps.host_windows) >= 0)
    return m


def _union_ms(ctx: Context, mask: np.ndarray) -> float:
    """ms covered by the union of the host events of ``mask``, clipped to the steps' extent (nested spans -- a loop's
    iterations inside another's -- counted once; each thread's spans are its own, so over threads it is an upper bound
    of one thread's)."""
    if not mask.any():
        return 0.0
    w = ctx.steps.host_windows  # what lies before the first step or after the last is not the steps'
    s = np.maximum(ctx.h.start[mask].astype(np.int64), int(w[:, 0].min()))
    e = np.minimum(ctx.h.end[mask].astype(np.int64), int(w[:, 1].max()))
    us, ue = union_intervals(s, e)
    return float((np.asarray(ue, np.int64) - np.asarray(us, np.int64)).sum()) / 1e9


def _host_only_rows(ctx: Context) -> list[StepMetrics]:
    """No GPU planes: host-only breakdown (input wait / host compute / other) over the host windows."""
    iv = {c: (ctx.h.start[:0], ctx.h.end[:0]) for c in bd.PRIORITY}
    iv["input_wait"] = (ctx.h.start[ctx.host_input], ctx.h.end[ctx.host_input])
    iv["host_compute"] = (ctx.h.start[ctx.host_work], ctx.h.end[ctx.host_work])
    w = ctx.steps.host_windows
    mat = bd.attribute(iv, w) / 1e9
    return [StepMetrics(int(ctx.steps.ids[i]), None, (int(w[i, 0]) - ctx.steps.origin_ps) / 1e9, float(w[i, 1] - w[i, 0]) / 1e9,
                        Breakdown(**{c: float(mat[i, j]) for j, c in enumerate(BREAKDOWN_CATEGORIES)}), 0.0, 0) for i in range(w.shape[0])]
