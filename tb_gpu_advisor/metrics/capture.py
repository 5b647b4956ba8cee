"""Capture quality (length, steps, steady state, the framework that wrote it) and the fixes it shows in use."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices, frameworks
from tb_gpu_advisor.common.fmt import plural
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.frameworks.base import never
from tb_gpu_advisor.job.kind import collectives_alone
from tb_gpu_advisor.metrics.context import PS_PER_MS, PS_PER_US, Context
from tb_gpu_advisor.metrics.types import AllocCalls, CacheRelease, CaptureQuality, ClockSkew, PythonTracing
from tb_gpu_advisor.model.columns import lookup_mask, union_intervals, work_after_call
from tb_gpu_advisor.model.trace import Trace


def capture_quality(ctx: Context) -> CaptureQuality:
    tr = ctx.trace
    length = tr.capture_ms  # the profiler's own window, else what the events span
    if length is None:
        length = (tr.span_ps[1] - tr.span_ps[0]) / PS_PER_MS if tr.span_ps is not None else 0.0
    start = _window_start_ms(tr)
    if tr.span_ps is not None:  # work recorded after the profiler's span closed (a kernel it launched) is captured too
        length = max(length, (tr.span_ps[1] - tr.viewer_zero_ps) / PS_PER_MS - start)
    w = _step_times_ms(ctx)
    cv = float(np.std(w) / np.mean(w)) if len(w) >= 2 and np.mean(w) > 0 else None
    # the steps the report times, as its ``steps.count`` says them: a capture with no step found is timed as one
    # window, and saying "0 kept" beside that one step contradicted it (h37-review4)
    kept = ctx.steps.count
    whole = ctx.steps.detection.source == "whole_capture"
    private = any(n.startswith("tf_gpu_private") for n in ctx.h.line_names)
    notes = []
    # the capture_quality rule compares with the same entries of the thresholds table, the same way
    min_steps, max_ms, max_cv = T("capture.min_steps"), T("capture.max_seconds") * 1000.0, T("capture.max_step_cv")
    short = kept < min_steps or length < T("capture.min_length_ms")
    if whole or kept < min_steps:
        notes.append(_few_steps(kept, whole, tr.snapshot is not None))
    if length > max_ms:
        notes.append(f"capture is {length / 1000:.0f} s long; profiling overhead distorts long captures")
    if cv is not None and cv > max_cv:
        notes.append(f"step times vary (cv {cv:.2f}); the capture may include warm-up or non-steady steps")
    return CaptureQuality(
        length_ms=float(length), steps_captured=ctx.steps.detection.found, steps_kept=kept,
        steady_state=_steady(cv, max_cv, ctx), step_time_cv=cv, too_short=short,
        too_long=length > max_ms, num_events=ctx.trace.num_events, gpu_thread_mode_private=private, note="; ".join(notes),
        framework=ctx.fw.id, work_framework=_work_framework(ctx), graph_kernel_share=_graph_kernel_share(ctx), time_base=tr.time_base,
        capture_format=tr.format, clock_skew=_clock_skew(ctx), window_start_ms=start,
        python_tracing=_python_tracing(ctx), printed_from=tr.printed_from, not_kept=tuple(tr.not_kept),
        collectives_only=collectives_only(ctx),
    )


def collectives_only(ctx: Context) -> int:
    """The collectives of a capture that holds nothing else -- the GPUs' kernels, or a CPU backend's the host recorded
    --, else 0: the job's reading's answer (``job.kind.collectives_alone``, which makes the window one that times no
    GPU step), counted for the finding."""
    return collectives_alone(ctx.trace, ctx.fw)


def _work_framework(ctx: Context) -> str:
    """The id of the framework that ran the capture's work where it is not the one whose profiler wrote it
    (``frameworks.detect_work``), "" where they are one."""
    work = frameworks.detect_work(ctx.trace, ctx.fw)
    return "" if work.id == ctx.fw.id else work.id


def _window_start_ms(tr: Trace) -> float:
    """Where the capture's window (``length_ms`` long) starts in the report's ms: the profiler's own span where the file
    records its start, else 0 where the format's length is its window from the viewer's 0 (XPlane, Nsight), else the
    first event.  A reader sets a step row (``start_ms``, ``step_ms``) against this window, never against
    ``[0, length_ms]``: mtia_inference's row at 101.3 ms for 342.1 ms read as running past its 344.6 ms window, which
    starts at 99.0 ms (h37-left37)."""
    if tr.capture_start_ps is not None:
        return (tr.capture_start_ps - tr.viewer_zero_ps) / PS_PER_MS
    if tr.capture_ms is not None or tr.span_ps is None:
        return 0.0
    return (tr.span_ps[0] - tr.viewer_zero_ps) / PS_PER_MS


def _steady(cv: float | None, max_cv: float, ctx: Context) -> bool | None:
    """Whether the capture holds the steady state: its kept steps' times even (cv at most ``max_cv``; None with fewer
    than 2) and its window no cold start (``job.phase``): even steps of a window that is mostly one-time costs are
    not the steady state the cold-start finding says it lacks (h37-review4: cloverleaf's "steady_state": true beside
    its "not the steady state")."""
    if cv is None:
        return None
    return cv <= max_cv and not (ctx.job is not None and ctx.job.phase.phase == "warm-up")


def _few_steps(kept: int, whole: bool, snapshot: bool) -> str:
    """The note on too few steps, its count the one the report's ``steps.count`` says: a capture with no step found is
    one window timed as a step, or none timed (no window of work: a memory snapshot, a window without events), not
    "0 steps kept" beside a report of one step (h37-review4).  A snapshot records no step to ask more of."""
    if not whole:
        said = f"only {plural(kept, 'step')} kept"
    else:
        said = "no step found: the whole capture is analysed as one pass" if kept else "no step found, none timed"
    return said if snapshot else f"{said}; capture a few steady-state steps (about 10 s)"


def _clock_skew(ctx: Context) -> ClockSkew:
    """How far the GPU's recorded work starts before the host call that launched it.  No device event can start
    before its launch call begins, so any lead is the capture's two clocks disagreeing (the profiler's conversion of
    GPU timestamps to the host's clock drifting): its largest lead bounds how exactly any host/GPU interval -- a launch
    wait, an idle gap, the viewer's alignment -- was measured.  Every device event with a recorded launch counts."""
    h = ctx.h
    linked = early = 0
    lead = 0
    if h.start.size:
        for g in ctx.gpus:
            ahead = -work_after_call(h.start, g.launch, g.d.start)
            if not ahead.size:
                continue
            linked += int(ahead.size)
            early += int(np.count_nonzero(ahead > 0))
            lead = max(lead, int(ahead.max()))
    return ClockSkew(linked=linked, early=early, max_lead_us=max(lead, 0) / PS_PER_US)


#: the fewest back-to-back leaf call pairs the least time of a recorded Python call is read from
_MIN_CALL_PAIRS = 50


def _python_tracing(ctx: Context) -> PythonTracing:
    """The profiler's Python tracing in the kept steps: Python calls recorded per step and GPU (each GPU's process's
    spans in its steps' host windows, averaged over the active GPUs), and the least time one recorded call takes
    (:func:`_call_period_us`).  A tracer that records every Python call and return costs the host time on each;
    the file's own calls bound that cost, so no constant from another machine stands in for it."""
    sp = ctx.trace.spans
    wins = ctx.steps.host_windows
    if sp is None or not len(sp) or not ctx.steps.count:
        return PythonTracing()
    start = sp.start.astype(np.int64, copy=False)
    counts, idle = [], []
    for g in [g for g in ctx.gpus if g.active] or [None]:
        own = ctx.trace.gpu_host_lines.get(g.d.gpu) if g is not None else None
        m = np.ones(start.shape, bool) if own is None else np.isin(sp.line, own)
        s = np.sort(start[m])
        lo, hi = np.searchsorted(s, wins[:, 0], "left"), np.searchsorted(s, wins[:, 1], "left")
        inside = np.concatenate([s[a:b] for a, b in zip(lo, hi)]) if len(lo) else s[:0]
        counts.append(int(inside.size))
        idle.append(int(inside.size) - (_in_busy(g, inside) if g is not None else 0))
    n = ctx.steps.count
    call_us, pairs = _call_period_us(sp.start.astype(np.int64), sp.end.astype(np.int64), sp.line)
    return PythonTracing(calls_per_step=float(np.mean(counts)) / n, idle_calls_per_step=float(np.mean(idle)) / n,
                         call_us=call_us, pairs=pairs)


def idle_calls_within(ctx: Context, s: np.ndarray, e: np.ndarray) -> float:
    """Python calls (the profiler's Python tracing) per kept step and GPU that start inside the host stretches
    ``(s, e)`` (disjoint, sorted; ps) and inside the kept steps' host windows, while that GPU runs nothing: the calls
    whose recording lengthens the GPU's idle in those stretches -- a finding's own host time, counted in it rather than
    spread by its share of the step's idle (an in-process DataLoader's ``__next__``: h37-pystack's left).  Each GPU's
    own process's calls (``Trace.gpu_host_lines``), averaged over the active GPUs; 0.0 where none was recorded."""
    sp = ctx.trace.spans
    n = ctx.steps.count
    if sp is None or not len(sp) or not n or not s.size:
        return 0.0
    wins = ctx.steps.host_windows
    ws, we = union_intervals(wins[:, 0].astype(np.int64), wins[:, 1].astype(np.int64))
    out = []
    for g in [g for g in ctx.gpus if g.active] or [None]:
        own = ctx.trace.gpu_host_lines.get(g.d.gpu) if g is not None else None
        t = np.sort(sp.start[np.ones(len(sp), bool) if own is None else np.isin(sp.line, own)].astype(np.int64))
        t = t[_within(t, s, e) & _within(t, ws, we)]
        out.append(int(t.size) - (_in_busy(g, t) if g is not None else 0))
    return float(np.mean(out)) / n


def _within(t: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Per time of ``t``: inside one of the disjoint sorted stretches ``(s, e)``."""
    j = np.searchsorted(s, t, "right") - 1
    return (j >= 0) & (t < e[np.maximum(j, 0)])


def _in_busy(g, t: np.ndarray) -> int:  # noqa: ANN001 - a GpuCtx
    """How many of the sorted times ``t`` fall while GPU ``g`` runs any work (the union of its device events)."""
    if not t.size or not g.d.start.size:
        return 0
    bs, be = g.d.busy()
    return int(np.count_nonzero(_within(t, bs, be)))


def _call_period_us(start: np.ndarray, end: np.ndarray, line: np.ndarray) -> tuple[float | None, int]:
    """(us, pairs): the 10th percentile of the period, start to start, of two calls on one thread that follow each
    other and call nothing themselves (leaf spans, the second starting after the first ends), over every such pair.

    Why a period: it holds one call's recording on entry and return, the call's own work and the interpreter's
    between the two -- so it bounds the tracer's cost per call from above, measured on the machine and Python that
    ran the job (the 10th percentile: the cheapest calls, a getter's, whose own work is nearly nothing; not the
    least, one timestamp's rounding).  None where the file's timestamps are whole microseconds (Kineto before
    sub-microsecond times: a period of a fraction of one cannot be read) or fewer than ``_MIN_CALL_PAIRS`` pairs.
    Measured: 0.16 us (a B200 host, gpt2_b200_clock_skew), 0.28 us (H100, nsfw_vit_h100), 0.23-0.34 us (MI300X
    hosts, the xDiT captures)."""
    if not start.size or not np.any(start % PS_PER_US):
        return None, 0
    periods = []
    for ln in np.unique(line):
        idx = np.flatnonzero(line == ln)
        o = idx[np.lexsort((-end[idx], start[idx]))]
        s, e = start[o], end[o]
        leaf = np.append(s[1:] >= e[:-1], True)  # nothing starts inside it
        pair = leaf[:-1] & leaf[1:] & (s[1:] >= e[:-1])
        p = (s[1:] - s[:-1])[pair]
        periods.append(p[p > 0])
    per = np.concatenate(periods) if periods else np.zeros(0, np.int64)
    if per.size < _MIN_CALL_PAIRS:
        return None, int(per.size)
    return float(np.percentile(per, 10)) / PS_PER_US, int(per.size)


def _step_times_ms(ctx: Context) -> list[float]:
    """Each kept step's time, for steadiness: on the GPUs where the steps were placed there (asynchronous dispatch:
    the host runs ahead, and its step windows shrink and stretch with the launch queue while the GPU's stay even),
    the slowest GPU's; else the host-wide window's."""
    gw = [g for g in ctx.steps.gpu_windows.values() if len(g) == len(ctx.steps.ids)]
    if gw and ctx.steps.detection.mapped_via in ("correlation_id", "group_id", "device"):
        return [float(x) / PS_PER_MS for x in np.max(np.stack([g[:, 1] - g[:, 0] for g in gw]), axis=0)]
    return [s.duration_ms for s in ctx.steps.detection.windows]


def _graph_kernel_share(ctx: Context) -> float:
    """Share of kept-step kernel time in kernels of CUDA graphs (XLA command buffers; events carrying ``cuda_graph_id``)."""
    tot = graph = 0
    for g in ctx.gpus:
        k, dur = g.kernels_in_steps()
        tot += int(dur.sum())
        graph += int(dur[g.d.graph_id[k] >= 0].sum())
    return graph / tot if tot else 0.0


def graph_node_gap_us(ctx: Context) -> float | None:
    """The median gap (us) between consecutive kernels of one graph replay on one stream, over the kept steps of every
    GPU: a replay's kernels share the one launch record (``GpuCtx.launch``); its nodes run back to back at the device's own rate,
    so the gap is what a graph still pays per node once the host's launches are gone.  None where no replay runs two
    kernels on one stream (no graph, or a trace that ties no replayed kernel to its launch).

    Measured on kept captures: 0.0 us (MI300X sglang and vLLM decode replays, HIP), -0.06 us (RTX 3060, 10 replays of
    ~95 kernels), -1.15 us (B300 sglang decode: programmatic dependent launch starts the next node before the last
    ends) -- within the per-kernel cost a fused graph is charged (``launch.fused_us_per_kernel``)."""
    gaps = []
    for g in ctx.gpus:
        d = g.d
        if d.graph_id is None or not d.graph_id.size:
            continue
        launch = g.launch
        k = np.flatnonzero((d.kind == devices.KIND_KERNEL) & (g.step >= 0) & (d.graph_id >= 0) & (launch >= 0))
        if k.size < 2:
            continue
        o = k[np.lexsort((d.start[k], d.stream[k], launch[k]))]
        same = (launch[o[1:]] == launch[o[:-1]]) & (d.stream[o[1:]] == d.stream[o[:-1]])
        if same.any():
            gaps.append((d.start[o[1:]][same].astype(np.int64) - d.end[o[:-1]][same].astype(np.int64)))
    if not gaps:
        return None
    return float(np.median(np.concatenate(gaps))) / PS_PER_US


def applied_fixes(ctx: Context) -> dict[str, str]:
    """The fixes this trace shows in use (``Framework.applied_markers``), each with what shows it: looked for among
    the distinct host and kernel names that occur (a name list, not the events), so it costs nothing per event."""
    markers = ctx.fw.applied_markers
    if not markers:
        return {}
    host = _host_names(ctx)
    kern = [d.names[i] for g in ctx.active for d in (g.d,) for i in np.unique(d.name).tolist()]
    out = {}
    for key, (words, on_host, on_gpu, *host_words) in markers.items():
        if any(on_gpu(n) for n in kern):
            out[key] = words
        elif any(on_host(n) for n in host):  # the words of what was seen: no kernel is claimed that the trace lacks
            out[key] = host_words[0] if host_words else words
    return out


def unmet_fixes(ctx: Context) -> list[str]:
    """The framework's fixes whose object this trace does not hold (``Framework.fix_needs``): the fused optimizer to a
    loop that runs no optimizer step (a forward-and-backward benchmark).  Looked for among the distinct host names."""
    needs = ctx.fw.fix_needs
    if not needs:
        return []
    host = _host_names(ctx)
    return [text for text, (_, shows) in needs.items() if not any(shows(n) for n in host)]


def cache_release(ctx: Context) -> CacheRelease:
    """The device frees inside the kept steps, and how many of them lie inside a call of the program emptying the
    framework's cache (``Framework.cache_release_event``: a range, or a Python frame of ``with_stack``) on the same
    thread.

    Why: a caching allocator gives memory back to the driver only when told to (PyTorch's ``empty_cache``) or when an
    allocation fails; a free inside the program's own release is that call's, so the churn is the call's, not a cache
    that is off (whose frees fall wherever tensors die)."""
    h = ctx.h
    if not len(h) or ctx.fw.cache_release_event is never:
        return CacheRelease()
    free = np.flatnonzero(h.name_mask(devices.is_free_call) & (ctx.host_step >= 0))
    if not free.size:
        return CacheRelease()
    free = free[np.argsort(h.start[free], kind="stable")]
    f_start, f_end, f_line = h.start[free], h.end[free], h.line[free]
    inside = np.zeros(free.size, bool)
    counts: dict[str, int] = {}
    for start, end, name, line in _release_calls(ctx):
        lo = int(np.searchsorted(f_start, start, side="left"))
        hi = int(np.searchsorted(f_start, end, side="right"))
        held = (f_line[lo:hi] == line) & (f_end[lo:hi] <= end) & ~inside[lo:hi]
        if held.any():
            inside[lo:hi] |= held
            counts[name] = counts.get(name, 0) + int(held.sum())
    return CacheRelease(int(free.size), int(inside.sum()), sorted(counts, key=lambda n: -counts[n]))


def alloc_calls(ctx: Context) -> AllocCalls:
    """The kept steps' allocator calls by kind (``devices.is_pinned_alloc_call`` or a device allocation), and how many
    allocations follow a free.

    Why: the GPU idles on the allocator alike while the host page-locks host memory and while it asks the driver for
    device memory, but the fixes differ -- pinned buffers are allocated once and reused; device churn is a caching
    allocator off or emptied.  And a pass that frees and allocates again churns even when it runs once: its first
    allocations are no longer all it asks for."""
    h = ctx.h
    if not len(h):
        return AllocCalls()
    kept = ctx.host_step >= 0
    pinned = h.name_mask(devices.is_pinned_alloc_call) & kept
    device = h.name_mask(devices.is_alloc_call) & kept & ~pinned
    if not (pinned.any() or device.any()):
        return AllocCalls()
    dur = (h.end - h.start).astype(np.float64) / PS_PER_MS
    counts: dict[str, int] = {}
    for i in np.flatnonzero(pinned).tolist():
        name = devices.call_base_name(h.names[int(h.name[i])])
        counts[name] = counts.get(name, 0) + 1
    frees = h.name_mask(devices.is_any_free_call) & (pinned | device)
    again = [_after_free(h.start, kind & ~frees, kind & frees) for kind in (pinned, device)]
    order = sorted(counts.items(), key=lambda kv: (-kv[1], devices.is_any_free_call(kv[0]), kv[0]))  # takes first
    return AllocCalls(dict(order), float(dur[pinned].sum()),
                      float(dur[device].sum()), again[0] + again[1], again[0])


def _after_free(start: np.ndarray, allocs: np.ndarray, frees: np.ndarray) -> int:
    """How many of ``allocs`` (a mask) start after the first of ``frees`` (a mask of the same kind of memory).

    Why of the same kind: memory given back and asked for again is one kind's -- a device free followed by pinned
    host allocations gives back nothing the pins ask for.  NCCL's communicator set-up on 4 V100s (blinkplus-nccl-base's
    nvprof ``output.nvvp``) calls ``cudaFree`` first (2.79 s: the devices' contexts), then pins 36 host buffers and
    frees them all at exit: its pins followed a free, and the one pass of its start-up read as "pinned host memory
    allocated and freed inside the pass ... instead of allocating them once" where each was allocated once (hunt70b)."""
    if not frees.any():
        return 0
    return int((start[allocs] > start[frees].min()).sum())


def _release_calls(ctx: Context) -> list[tuple[int, int, str, int]]:
    """(start, end, name, line) of the host events and Python spans that are the program emptying the cache."""
    h, sp, pred = ctx.h, ctx.trace.spans, ctx.fw.cache_release_event
    out = [(int(h.start[r]), int(h.end[r]), h.names[int(h.name[r])], int(h.line[r]))
           for r in np.flatnonzero(h.name_mask(pred)).tolist()]
    if sp is not None and len(sp):
        hit = np.flatnonzero(lookup_mask(h.per_name(pred), sp.name))
        out += [(int(sp.start[r]), int(sp.end[r]), h.names[int(sp.name[r])], int(sp.line[r])) for r in hit.tolist()]
    return out


def _host_names(ctx: Context) -> list[str]:
    """The distinct host event names that occur (a name list, not the events)."""
    return [ctx.h.names[i] for i in np.unique(ctx.h.name).tolist()] if len(ctx.h) else []
