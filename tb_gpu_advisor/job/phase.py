"""One-time costs in a capture: the first call of a process is not its steady state.

What a cold capture shows (CUDA and HIP alike): kernel launches of milliseconds to seconds among launches of a
few microseconds -- the first launch of each kernel loads its module (CUDA's lazy loading, HIP's code objects) --
library handles created (cuBLAS, cuDNN, rocBLAS, MIOpen), graphs instantiated, the program compiled.  A launch is
only taken for a one-time cost when the GPU sat idle through it: a launch that blocks because the launch queue is
full (the GPU far behind, busy) is steady state, and physics tells the two apart.  The phase is ``warm-up`` when
one-time costs fill a large share of the capture window, ``mixed`` when they are present but small, ``steady``
otherwise; the step stage drops warm-up steps where steady ones remain, and the breakdown books the GPU's idle time
inside these costs as start-up, not as launch overhead.
"""

from __future__ import annotations

from collections.abc import Iterator
import dataclasses
from dataclasses import dataclass, field

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.fmt import ms, pct, plural
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.devices.collectives import cpu_backend
from tb_gpu_advisor.frameworks import Framework
from tb_gpu_advisor.model.columns import subtract_intervals, time_within, union_intervals
from tb_gpu_advisor.model.trace import PS_PER_MS as PS_PER_MS, PS_PER_US as PS_PER_US  # the job stage imports them here
from tb_gpu_advisor.model.trace import HostEvents, Trace, device_launches


@dataclass
class OneTime:
    """The capture's one-time costs (host time spans, ps) and its phase."""

    phase: str  # "steady" | "warm-up" | "mixed" | "tear-down" (the report's "one-pass": :func:`shown_phase`)
    evidence: str
    start: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # disjoint, sorted
    end: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    total_ms: float = 0.0
    share: float = 0.0  # of the capture window
    slow_launches: int = 0  # launches taken for one-time costs
    launches: int = 0  # all launch calls
    launch_median_us: float | None = None
    #: of ``total_ms``, the framework planning a graph for new input shapes with no op run (:func:`_compile_gaps`):
    #: a cost paid again for each new shape, not once (the cold-start finding names it where it is most of the costs)
    compile_gap_ms: float = 0.0
    #: graph captures made again after the program had reached replays alone (:func:`recaptures`), each from its
    #: capture's begin to its instantiation's end (ps, sorted): a recurring cost, not one-time -- left out of
    #: ``start`` / ``end``, so no step holding one is dropped as warm-up
    recapture_start: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    recapture_end: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    #: the host blocked waiting for the GPU while the trace shows every GPU idle: GPU work the capture does not
    #: hold (a window cut out of a longer trace, another process on the GPU); disjoint sorted (starts, ends), ps
    unseen_start: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    unseen_end: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    #: host event indices of the slow asynchronous calls that are no thread's first (:func:`async_stalls`): the host's
    #: own time in the runtime, which the ledger books as host work (``metrics.breakdown``'s ``async_stall``), sorted
    stalls: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    #: host event indices of the blocking calls behind ``unseen_start`` / ``unseen_end`` (:func:`unseen_gpu_calls`),
    #: sorted: each is one process's wait, read per GPU by its own process (``metrics.context.Context.unseen_spans``)
    unseen_calls: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    #: of ``start`` / ``end``, the spans no single host call is (a graph's capture, an algorithm search, the first
    #: uploads, compile gaps, the context's unrecorded creation, first work's leads): disjoint, sorted, read on every
    #: GPU; the one-time calls (``calls``) are each one process's and read per GPU by it
    #: (``metrics.context.Context.one_time_spans``)
    shared_start: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    shared_end: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    #: GPUs whose first work in the capture a process launched after starting its runtime in the window
    #: (:func:`_first_work_leads`): nothing launched before the capture can be queued ahead of it there
    fresh_gpus: frozenset[int] = frozenset()
    #: host event indices of the one-time calls themselves (first launches, library start-up, compilation, first-time
    #: calls, the context's creation), sorted: the ledger reads a thread's copies under them (``metrics.breakdown``)
    calls: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    #: the capture holds host calls to read one-time costs from; False where it holds none (a memory snapshot, a
    #: GPU-only export): its "steady" is then no reading at all (:func:`shown_phase`)
    host_read: bool = True

    def spans(self) -> tuple[np.ndarray, np.ndarray]:
        return self.start, self.end

    @property
    def unseen_ms(self) -> float:
        return float((self.unseen_end - self.unseen_start).sum()) / PS_PER_MS


@dataclass(frozen=True)
class ContextStart:
    """Where a process started its GPU runtime in the window (:func:`context_start`): asked once per analysis and read
    by the one-time costs (:func:`one_time_costs`: the context's creation, recorded or not) and by the unseen GPU work
    (:func:`unseen_gpu_work`: the call that created the context waited for no GPU work)."""

    #: (the first runtime start-up call, the next runtime call) of each thread, host event indices
    #: (:func:`_runtime_starts`)
    starts: list[tuple[int, int]]
    #: bool per host event: the call that created the context (:func:`_context_calls`); read-only, shared
    calls: np.ndarray


def _launches(trace: Trace, launches: list[np.ndarray] | None) -> list[np.ndarray]:
    """``launches`` (per GPU, each device event's host launch record), or, where the caller has none, computed once
    here: every reading of this module takes them from its public entry point, so one analysis builds the correlation
    table once (the job stage's caller already holds it), not once per reading."""
    return launches if launches is not None else device_launches(trace.h, trace.devices)


def context_start(trace: Trace) -> ContextStart:
    """The runtime's start-ups in ``trace`` and the calls that created the context.

    Why one answer: each thread's start-up and its next call were searched three times an analysis (the context's
    creation in a recorded call, in the driver's calls between the two, and the calls the unseen-work reading leaves
    out), a scan of every runtime call per thread each time."""
    starts = _runtime_starts(trace)
    calls = _context_calls(trace, starts)
    calls.flags.writeable = False
    return ContextStart(starts, calls)


def one_time_costs(trace: Trace, fw: Framework, launches: list[np.ndarray] | None = None,
                   started: ContextStart | None = None) -> OneTime:
    """The one-time costs of ``trace`` and its phase; ``launches``: per GPU, each device event's host launch record
    (a graph launch's kernels all map to it), or None; ``started``: :func:`context_start` of ``trace`` where the
    caller has it."""
    h = trace.h
    if not len(h):
        return OneTime("steady", "no host events", host_read=False)
    launches = _launches(trace, launches)
    # no copy where the columns are int64 already: this runs at the analysis's peak (the trace and the launch records
    # alive), where each copy of a dense capture's durations was 16 MB more
    dur = (h.end - h.start).astype(np.int64, copy=False)
    launch = h.name_mask(devices.is_launch_call)
    slow, median = _slow_first_launches(trace, dur, launch, launches)
    init = h.name_mask(devices.is_init_call) & (dur >= T("job.one_time_call_ms") * PS_PER_MS)
    init &= ~_steady_lookups(h, dur, init)
    graph_s, graph_e = _captures(h)
    again, again_s, again_e, inst = recaptures(h, graph_s, graph_e)
    graph_s, graph_e = graph_s[~again], graph_e[~again]
    init &= ~inst
    comp = ((h.name_mask(fw.compile_event) | h.name_mask(devices.is_jit_compile))
            & (dur >= T("job.one_time_call_ms") * PS_PER_MS))
    rare = _rare_slow_calls(trace, dur, launch | init | h.name_mask(devices.is_lookup_call)
                            | h.name_mask(devices.is_blocking_call)
                            | _graph_submissions(trace, dur, launches))
    # the context's creation is a one-time cost whatever call it falls in, a blocking copy too (left out just above)
    started = started if started is not None else context_start(trace)
    ctx = started.calls.copy()  # narrowed below; the shared answer stays whole
    # where no recorded call created it, the driver did in calls the capture skipped: its ioctl between the two
    drv_s, drv_e, drv_words = _unrecorded_context(trace, ctx, started.starts)
    ctx &= ~rare & ~init & ~slow
    # with no start-up mark, a thread's first call that cannot wait for the GPU and lasts holds the runtime's start-up
    first = _first_async_calls(trace, launches) & ~rare & ~init & ~slow & ~ctx
    first_ops = _slow_first_op_calls(trace, dur, fw, bool(started.starts))
    beyond = _beyond_work_calls(trace, dur, fw, bool(started.starts)) & ~first_ops
    driving = _driving_lines(trace)
    slow, init, comp, rare, ctx, first, first_ops, beyond = (x & driving for x in (slow, init, comp, rare, ctx, first,
                                                                                   first_ops, beyond))
    if again_s.size:  # a recapture's calls recur with it: no one-time cost (:func:`recaptures`)
        mid = _starts_inside(h.start.astype(np.int64, copy=False), again_s, again_e)
        slow, init, comp, rare, ctx, first, first_ops, beyond = (x & ~mid for x in (slow, init, comp, rare, ctx, first,
                                                                                    first_ops, beyond))
    m = slow | init | comp | rare | ctx | first | first_ops | beyond
    tune_s, tune_e, tune_n = _autotune(trace, fw)
    # a process that starts in the window (its context, libraries or modules loading) uploads its model before its
    # first kernel: those copies are set-up, not a step's
    up_s, up_e, up_n, up_to = _first_uploads(trace, launches, ctx | first) if m.any() or drv_s.size \
        else (_EMPTY, _EMPTY, 0, "")
    link_s, link_e = _compiles_before_links(trace)
    load_s, load_e = _compiles_before_loads(trace, launches, (link_s, link_e), comp)
    gap_s, gap_e = _compile_gaps(trace, fw)
    lead_s, lead_e, fresh, call_s, call_e = _first_work_leads(trace, started, launches, slow)
    if again_s.size:
        lead_s, lead_e, call_s, call_e = (*_outside(lead_s, lead_e, again_s, again_e),
                                          *_outside(call_s, call_e, again_s, again_e))
    cap_s = np.concatenate([graph_s, tune_s, up_s, link_s, load_s, gap_s, drv_s, lead_s, call_s])
    cap_e = np.concatenate([graph_e, tune_e, up_e, link_e, load_e, gap_e, drv_e, lead_e, call_e])
    n_launch = int(launch.sum())
    med_us = None if median is None else median / 1e6
    if not m.any() and not cap_s.size:
        return OneTime("steady", "no one-time costs (module loading, library start-up, compilation) in the capture",
                       launches=n_launch, launch_median_us=med_us, fresh_gpus=fresh, recapture_start=again_s,
                       recapture_end=again_e)
    s, e = union_intervals(np.concatenate([h.start[m].astype(np.int64, copy=False), cap_s]),
                           np.concatenate([h.end[m].astype(np.int64, copy=False), cap_e]))
    total = float((e - s).sum()) / PS_PER_MS
    span = trace.span_ps
    window = float(span[1] - span[0]) / PS_PER_MS if span else total
    share = total / window if window > 0 else 0.0
    parts = (_slow_launch_words(dur, launch, slow, med_us)
             + _span_words(fw, (up_s, up_e, up_n, up_to), (tune_s, tune_e, tune_n), (link_s, link_e), (load_s, load_e),
                          (graph_s, graph_e))
             + _call_words(h, dur, init, comp, rare, ctx) + _first_async_words(h, dur, first)
             + _beyond_work_words(trace, dur, beyond) + _first_op_words(h, dur, first_ops)
             + _gap_words(fw, gap_s, gap_e) + drv_words
             + _first_call_words(h, call_s, call_e) + _lead_words(lead_s, lead_e))
    phase = ("warm-up" if share >= T("job.warmup_share") else
             "mixed" if share >= T("job.one_time_min_share") else "steady")
    lead = {"warm-up": "a cold start", "mixed": "some one-time costs", "steady": "negligible one-time costs"}[phase]
    evidence = (f"{lead}: {'; '.join(parts)}; {_ms(total * PS_PER_MS)}, {pct(share, 0)} of the "
                f"{_ms(window * PS_PER_MS)} window")
    shared_s, shared_e = union_intervals(cap_s, cap_e) if cap_s.size else (_EMPTY, _EMPTY)
    return OneTime(phase, evidence, s, e, total, share, int(slow.sum()), n_launch, med_us,
                   compile_gap_ms=float((gap_e - gap_s).sum()) / PS_PER_MS, fresh_gpus=fresh,
                   calls=np.flatnonzero(m).astype(np.int64), shared_start=shared_s, shared_end=shared_e,
                   recapture_start=again_s, recapture_end=again_e)


def _steady_lookups(h: HostEvents, dur: np.ndarray, slow: np.ndarray) -> np.ndarray:
    """Bool per host event: a ``slow`` lookup of a kernel's handle or attributes (``devices.is_lookup_call``) that
    is no first call -- its thread makes the same call at other times too, and this one is under
    ``job.first_call_factor`` times their median: the call costs that much every time, the program's steady cost.

    Why: a lookup is slow once per kernel (lazy loading loads the kernel's module inside it), microseconds after; a
    ``cudaFuncGetAttributes`` of 150 us in every step (a launcher asking before each launch) read as "8 library
    start-up / module loading calls", a cold start the next profile after warm-up would hold again (h37-ledger69).
    The one call of its name on its thread, or one far over its later calls, stays the first call it is."""
    out = np.zeros(len(h), dtype=bool)
    idx = np.flatnonzero(h.name_mask(devices.is_lookup_call))
    if not idx.size or not slow[idx].any():
        return out
    key = h.line[idx].astype(np.int64) * (int(h.name.max()) + 1) + h.name[idx].astype(np.int64)
    for k in np.unique(key[slow[idx]]).tolist():
        mine = idx[key == k]
        if mine.size < 2:
            continue
        d = dur[mine].astype(np.float64)
        for j in np.flatnonzero(slow[mine]).tolist():
            others = np.delete(d, j)
            out[mine[j]] = d[j] < T("job.first_call_factor") * float(np.median(others))
    return out


def _driving_lines(trace: Trace) -> np.ndarray:
    """Bool per host event: on a line of a process that drives a GPU (``Trace.gpu_host_lines``), every event where
    the format names no lines per GPU.  A process that launched nothing in the capture -- a helper that made a CUDA
    context, three runtime calls -- pays its own start-up in its own context: its ``cudaFree`` is no one-time cost
    of the job, and read as one it made a loop's steady steps a critical "cold start" (h37-probe42n)."""
    h = trace.h
    lines = trace.gpu_host_lines
    if not lines:
        return np.ones(len(h), bool)
    own = np.concatenate([np.asarray(v, np.int64) for v in lines.values()])
    return np.isin(h.line, own) if own.size else np.ones(len(h), bool)


#: the phase of a capture of at most one step whose one-time costs read "steady" (:func:`shown_phase`)
ONE_PASS = "one-pass"
#: the phase of a window that times no GPU step and whose one-time costs read "steady" (:func:`untimed_phase`)
NOT_TIMED = "not timed"
#: the phase of a window that opened after the loop and holds the program's exit (``Kind.window`` "teardown")
TEAR_DOWN = "tear-down"
#: the phases whose one-time costs are the program's start: a cold start, all or some of the window
STARTING = ("warm-up", "mixed")


def window_phase(phase: OneTime, window: str) -> OneTime:
    """The phase as the window's reading (``Kind.window``) has it: a tear-down window's one-time costs are the
    exit's, so its phase is "tear-down", never a warm-up; any other window keeps :func:`one_time_costs`' phase.

    Why: :func:`one_time_costs` reads one-time calls without asking when they ran, so a window opened after the loop
    -- ``cudaDeviceReset`` 60 ms, ``cudaFreeHost`` 5 ms -- read "warm-up (94% of the window in one-time costs)" and
    "a cold start: 3 first-time runtime calls" beside a job line that says the program's tear-down, after its loop
    (h37-probe43w *Left* 1, ``synthetic.nsysexport.write_teardown_window``).  The costs and their share are kept: they
    are measured; only what they are called follows the window."""
    if window != "teardown" or phase.phase not in STARTING:
        return phase
    measured = phase.evidence.split("; ")[-1]  # "65.0 ms, 94% of the 69.4 ms window"
    return dataclasses.replace(phase, phase=TEAR_DOWN, evidence=(
        f"the program's exit, after its loop, not a warm-up: its release calls take {measured}"))


def shown_phase(phase: OneTime, steps_found: int, steps_kept: int) -> tuple[str, str]:
    """(phase, evidence) as the report says them: ``phase``'s own, but "one-pass" where it reads "steady" and the
    capture holds one step at most (``steps_found`` detected, ``steps_kept`` kept; one kept: a pass is analysed).

    Why: "steady" says the capture shows the program's steady state, and a steady state is what repeats -- one pass
    with no one-time cost read holds nothing to compare it with: its first call may pay what no later one would
    (a host-side warm-up this stage cannot see).  The one-time costs are read before the steps are
    (:func:`one_time_costs`), so the steps' count is asked here, where the report puts the two together.  The rules
    keep reading ``OneTime.phase`` (no one-time cost read: no cold-start finding).

    ASSUMPTION this replaces: *no one-time cost read is a steady state* (h37-lostmark34's *Left* 1):
    ``wild/gpt2_b200_one_step``, one training iteration of 11.3 ms with no step marked, and
    ``wild/part_forward_a100``'s one forward pass read phase "steady".

    ASSUMPTION this replaces too: *a capture with no host events is steady* (h37-steady36's *Left*): a memory
    snapshot has no host call, so no one-time cost is read from it, and where its allocation history keeps no two
    iterations (``wild/snapshot_inference_gpt``, no step found) nothing shows a steady state either: "not timed"
    there; where its iterations repeat (``wild/snapshot_adam_iterations``, 2 kept of 3) "steady" stays."""
    if phase.phase == "steady" and not phase.host_read and steps_kept < 2 and not (steps_found <= 1 and steps_kept):
        return NOT_TIMED, (f"{phase.evidence}: no host call to read one-time costs from, and no two steps kept to "
                           "show one repeating, so the capture shows no steady state")
    if phase.phase == "steady" and not phase.host_read and steps_kept >= 2:
        return phase.phase, (f"{phase.evidence} to read one-time costs from, but {plural(steps_kept, 'step')} kept "
                             f"of {steps_found} found repeat")
    if phase.phase != "steady" or steps_found > 1 or steps_kept != 1:
        return phase.phase, phase.evidence
    return ONE_PASS, (f"{phase.evidence}; but the capture holds one pass and nothing in it repeats, so it shows no "
                      "steady state to compare the pass with")


def untimed_phase(phase: OneTime, loop_ms: list[float] | None = None, timed_by: str = "") -> tuple[str, str]:
    """(phase, evidence) as the report says them for a window that times no GPU step: ``phase``'s own, but
    "not timed" where it reads "steady" and the loop's turns timed on the CPU (``loop_ms``: the kept marked steps'
    lengths, ms; ``timed_by``: what marked them) do not show one repeating -- fewer than two, or uneven past
    ``job.uneven_turns_ratio``.  Where they repeat, "steady" stays, its evidence the loop's turns.

    Why: "steady" is a claim about the GPU steps the window times -- that they are the program's steady state, not
    its start.  A window with no GPU work, or whose GPU records were lost or never recorded, times no step at all:
    no one-time cost read there is the absence of evidence, not a steady state shown.  A one-time cost read
    ("warm-up", "mixed") is kept: the host's calls show it whether the GPU's side was recorded or not.

    ASSUMPTION this replaces: *a window of no GPU step with no one-time cost read is steady* (h37-steady35's *Left*
    1): ``wild/cpu_only_gloo``, ``wild/lightning_cpu_fit`` and ``wild/llm_startup_window`` (no GPU work), and
    ``files/tracing_off_julia`` (the GPU's work not recorded) each read phase "steady"."""
    if phase.phase != "steady":
        return phase.phase, phase.evidence
    if _turns_repeat(loop_ms or []):
        n, lo, hi = len(loop_ms), min(loop_ms), max(loop_ms)
        return phase.phase, (f"{phase.evidence}; no GPU step is timed, but the loop's {n} steps, timed on the CPU "
                             f"{timed_by or 'by their marks'}, repeat ({_ms_range(lo * PS_PER_MS, hi * PS_PER_MS)} "
                             "each)")
    return NOT_TIMED, (f"{phase.evidence}; but the window times no GPU step, so it shows no steady state of the "
                       "GPU's work")


def _turns_repeat(loop_ms: list[float]) -> bool:
    """The loop's turns show a steady state: two at least (one has nothing to compare it with), each over zero, the
    longest within ``job.uneven_turns_ratio`` of the shortest (turns of the same code agree far closer; 0-4 s sleeps
    do not).

    Why: a phase is about the program's loop, not the device that runs it -- a CPU loop's 71 NVTX iterations of
    ~119 ms (``files/nvtx_only_centerformer``) repeat as a GPU's steps would; only where nothing repeats is the
    steady state unshown (h37-steady36's rule, its *Left* 1)."""
    return (len(loop_ms) >= 2 and min(loop_ms) > 0
            and max(loop_ms) <= T("job.uneven_turns_ratio") * min(loop_ms))


def _slow_first_launches(trace: Trace, dur: np.ndarray, launch: np.ndarray, launches: list[np.ndarray]
                         ) -> tuple[np.ndarray, float | None]:
    """The launches that load their modules (far slower than the typical launch, with the GPU idle through them, and
    not a launch that repeats), and the typical launch's duration (ps; None where every launch is over the one-time
    cut).  A few slow launches among many are noise (preemption), not a cold process: none then."""
    slow = np.zeros(len(trace.h), dtype=bool)
    if not launch.any():
        return slow, None
    h = trace.h
    d_sum = dur.sum(where=launch)  # the launches' total, without a copy of their durations
    # the typical launch, from those under the one-time cut: in a short cold capture half the launches may be
    # first launches, which would lift a plain median to milliseconds
    quick = dur[launch & (dur < T("job.one_time_launch_ms") * PS_PER_MS)]
    # the median of our own copy, partitioned in place (np.median would copy it once more); none where every
    # launch is over the one-time cut (a one-pass program's single launch, its module loaded in it): a launch
    # takes microseconds, so the cut alone says which are one-time costs -- the median of those launches
    # themselves would set the cut above each of them
    median = float(np.median(quick, overwrite_input=True)) if quick.size else None
    del quick
    floor = cut = T("job.one_time_launch_ms") * PS_PER_MS
    if median is not None:
        cut = max(cut, T("job.one_time_launch_factor") * median)
    long = launch & (dur > floor)
    if long.any():
        state = _launch_states(trace, launches)
        cand = np.flatnonzero((long & (dur > cut)) | _first_over_repeats(h, dur, launch, long, state))
        # a collective kernel running through the launch waits for its peers (each rank's first launch loads the
        # module at once, so its peer's wait spans its own load): no work that fills the launch queue
        idle = _calls_idle(trace, cand, collectives=False) & (state[cand] != _REPEAT)
        slow[cand[idle]] = True
    if slow.any() and dur[slow].sum() < T("job.one_time_launch_share") * d_sum:
        slow[:] = False  # a few slow launches among many: noise (preemption), not a cold process
    return slow, median


def _slow_first_op_calls(trace: Trace, dur: np.ndarray, fw: Framework, started: bool = False) -> np.ndarray:
    """Bool per host event: an op's first call that pays what only a first call does -- at least
    ``job.one_time_call_ms``, longer than every later call of the same op, and ``job.first_call_factor`` times their
    median (two later calls at least: one says nothing of the typical) -- where the capture holds no GPU record; where
    it holds them, only where the process ``started`` its GPU runtime in the window (:func:`context_start`) and every
    GPU sat idle through most of the call (:func:`_gpu_idle_through`).

    Why: with the GPU's side unrecorded (a legacy ``torch.autograd.profiler`` list, CUDA activity off, records lost)
    the runtime's calls and the GPU's idle -- what every other one-time reading here goes by -- are not there; the
    ops' own times are the evidence.  An op's later calls in one pass differ by their shapes; a first call orders of
    magnitude over all of them is cuDNN's algorithm search (``cudnn.benchmark``), a library's lazy start-up (the
    first ``aten::inverse`` loading cuSOLVER/MAGMA), a first ``bmm``'s cuBLAS handle.

    Where an op is called twice, its one later call says the typical only where it does the same work: the same
    recorded shapes (:func:`_recorded_work`), the first ``job.first_call_factor`` times the second.

    ASSUMPTION this replaces: *a capture with no slow runtime call, start-up call or compilation holds no one-time
    cost*.  nachewigkeit/CropDefender's legacy list (``wild/legacy_list_cudnn_convs``) is one 3.46 s pass whose first
    ``aten::cudnn_convolution`` took 1.12 s (its 49 later calls a median of 322 us), the first ``aten::inverse`` 840
    ms, the first ``aten::bmm`` 649 ms: "steady: no one-time costs".

    A CPU backend's communication ops are left out (:func:`_peer_waits`): their time on the host is the wait for
    their peers, so a first call far over the later ones is the ranks' arrival, not a start-up.

    With GPU records (h37-steady35), the first launches' module loading is seen directly (:func:`_slow_first_launches`),
    but a first call's host-only work is not: a library's lazy start-up or a handle made inside the op, Python's lazy
    initialisation (``wild/mmagic_a100_pyprof_forward``: the first ``Tensor.cuda`` 1.27 s against 69 us after, the
    first ``conv2d`` 1.05 s against 127 us, the GPU idle through both).  Two causes make a slow first call no
    one-time cost there, each ruled out by what the capture shows: the window's first call of an op is the
    process's first only where the process started in the window -- a server's window opened mid-run holds no first
    call (``wild/sglang_mi300x_decode`` read 98% of its window as "first calls", the window's first long span of each
    name); and a first call the GPU is busy through waits for GPU work, not for a start-up (``wild/d2d_v100``'s
    first ``fbgemm::permute_sparse_features``, 9.8 ms against 170 us, the GPU busy)."""
    h = trace.h
    out = np.zeros(len(h), dtype=bool)
    recorded = any(len(d) for d in trace.devices)
    if (recorded and not started) or len(h) < 3:
        return out  # a window opened mid-run: the first call of an op in it is no first call of the process
    op = (~h.name_mask(devices.is_runtime_call) & ~h.name_mask(fw.step_marker) & ~_peer_waits(h, fw)
          & ~_graph_call_layers(h, fw))
    idx = np.flatnonzero(op)
    if not idx.size:
        return out
    order = idx[np.lexsort((h.start[idx], h.name[idx]))]  # by name, then by time
    names = h.name[order]
    bounds = np.flatnonzero(np.diff(names.astype(np.int64), prepend=-1, append=-1))
    floor = T("job.one_time_call_ms") * PS_PER_MS
    work = _recorded_work(trace)
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        if dur[order[a]] < floor:
            continue
        if b - a == 2:  # one later call: it says the typical only where it does the same work (the same shapes)
            first, then = int(order[a]), int(order[a + 1])
            key = work.get(first)
            if key is not None and work.get(then) == key and (
                    float(dur[first]) >= T("job.first_call_factor") * float(dur[then])):
                out[first] = True
            continue
        if b - a < 3:
            continue
        later = dur[order[a + 1:b]]
        head = float(dur[order[a]])
        if head > float(later.max()) and head >= T("job.first_call_factor") * float(np.median(later)):
            out[order[a]] = True
    if recorded and out.any():  # the GPU busy through the call: it waited for GPU work, which no first call pays
        idx = np.flatnonzero(out)
        out[idx[~_calls_idle(trace, idx)]] = False
    return out


def _recorded_work(trace: Trace) -> dict[int, tuple]:
    """Host event -> what its recorded shapes say it does, where they say: a FLOP op's label (its name, precision and
    shapes: ``FlopOps.label``), a copy op's bytes (``Trace.copy_op_bytes``).  Two calls with the same key do the same
    work: where the first is ``job.first_call_factor`` times the second, the difference is no work of the op's but
    what only a first call pays -- a one-pass capture calling an op twice (a ``.to('cuda')`` of the input and of the
    target, the first making the GPU context) holds no third call to take a median of (h37-host71: cold70 *Left* 2)."""
    out: dict[int, tuple] = {}
    fo = trace.flop_ops
    if fo is not None and fo.source == "trace shapes" and len(fo):
        for r, j in enumerate(fo.host_idx.tolist()):
            if j >= 0:
                out[int(j)] = ("flop", fo.label[r])
    for j, moved in trace.copy_op_bytes.items():
        out[int(j)] = ("copy", int(trace.h.name[j]), moved)
    return out


def _graph_call_layers(h: HostEvents, fw: Framework) -> np.ndarray:
    """Bool per host event: a call recorded inside a compiled graph's call (``Framework.step_call_wait``: TensorFlow's
    eager call of a tf.function's graph) on its thread -- the eager runtime's inner layers of that call
    (``EagerKernelExecute``), whose name is the same for every op and graph they run.

    Why: such a layer is the graph's run, named by the graph call around it, not an op of its own: compared with the
    layer of the same name under the callbacks' eager ops (``LogicalAnd``, ``WriteSummary``: ~0.05 ms each) the graph's
    62.5 ms run read as an op's slow first call, and sagemaker-debugger's one Keras ``train_function``
    (``wild/tf_keras_input_ops_8gpu``) as "warm-up, 94% of the window in one-time costs" -- a graph's run is the
    same work on every call.  The graph call itself is still compared with its own later calls by its name (a first
    call slow from tracing or an XLA compile the capture does not name), and a compile the capture records
    (``XlaCompile``, ``_XlaCompile``: ``Framework.compile_event``) is read as one-time wherever it lies."""
    out = np.zeros(len(h), dtype=bool)
    for i in np.flatnonzero(h.name_mask(fw.step_call_wait)).tolist():
        out[_nested(h, i)] = True
    return out


def _beyond_work_calls(trace: Trace, dur: np.ndarray, fw: Framework, started: bool = False) -> np.ndarray:
    """Bool per host event: an op's first call on its thread whose host time is orders of magnitude over the most its
    own work can take (:func:`_most_work_ps`) -- ``job.beyond_work_factor`` times over it and ``job.beyond_work_ms``
    long at least -- and over every later call of the op by ``job.first_call_factor``: what the call paid is no work
    of the op's, but the runtime's or a library's start-up on first use (the context made with the process's first
    device tensor, a math library's handle, workspace and modules).  Guarded as :func:`_slow_first_op_calls` is where
    the capture holds GPU records: only where the process started in the window, the GPU idle through the call.

    Physics: an op's own work is its FLOPs and bytes -- its recorded shapes' -- at some rate, and no CPU or GPU runs
    them slower than ``job.least_work_gflops`` / ``job.least_work_gbps``; an op that only makes a tensor (the
    framework's ``factory_op``) does its work in the allocation and fill it calls, each recorded as a call of its
    own, so its time outside them is dispatch, microseconds; a copy (``Trace.copy_op_bytes``: ``aten::to``,
    ``aten::copy_`` with its shapes recorded) has no FLOPs, its work is its bytes alone -- a process's first
    ``x.to('cuda')`` makes the GPU context inside it, seconds for a few MB (h37-host71: cold70 *Left* 2).
    ASSUMPTION this replaces: *a first call is known to be one-time only by later, faster calls of the same op* --
    pramod-b-s/839_Adv_ML_Project's ``trace.json``
    @6c4879c1 (no licence; survey h37-hunt70a, h37-cold70), a ResNet-18 forward with CPU activity only, ~94% of its
    11 s window one-time, read 37%: its first ``aten::zeros`` (4.36 s, its ``aten::empty`` and ``aten::zero_`` of
    [1] 452 us of it) and its one ``aten::linear`` ([5,512]x[1000,512], 5.1 MFLOP, 2.29 s) had no later call to
    compare with.  What the bounds leave out, each a wait and not the op's work: a collective's wait for its
    peers (:func:`_peer_waits`), an op that reads the device's results back (its time is the GPU's queue, no
    FLOP op and no tensor-making op), a launch into a full queue (one kernel's time, under ``job.beyond_work_ms``)."""
    h = trace.h
    out = np.zeros(len(h), dtype=bool)
    recorded = any(len(d) for d in trace.devices)
    if (recorded and not started) or len(h) < 2:
        return out
    least = T("job.beyond_work_ms") * PS_PER_MS
    most: dict[int, float] = {}  # host event -> the most its own work takes, ps (only the long calls: no dense column)
    fo = trace.flop_ops
    if fo is not None and fo.source == "trace shapes" and len(fo):
        rows = np.flatnonzero(fo.host_idx >= 0)
        rows = rows[dur[fo.host_idx[rows].astype(np.int64)] >= least]
        secs = np.maximum(fo.flops[rows] / (T("job.least_work_gflops") * 1e9),
                          fo.bytes[rows] / (T("job.least_work_gbps") * 1e9))
        for i, sec in zip(fo.host_idx[rows].tolist(), secs.tolist()):
            most[i] = min(most.get(i, np.inf), sec * 1e12)
    for i, moved in trace.copy_op_bytes.items():  # a copy's work is its bytes alone: no FLOPs to bound it
        if dur[i] >= least:
            most[i] = min(most.get(i, np.inf), moved / (T("job.least_work_gbps") * 1e9) * 1e12)
    made = np.flatnonzero(h.name_mask(fw.factory_op) & (dur >= least))
    for i in made.tolist():
        inner = _nested(h, i)
        if inner.size:  # its allocation and fill are recorded: the rest of its time is none of its work
            cs, ce = union_intervals(h.start[inner].astype(np.int64), h.end[inner].astype(np.int64))
            most[i] = min(most.get(i, np.inf), float((ce - cs).sum()))
    waits = _peer_waits(h, fw)
    cand = [i for i, w in most.items() if float(dur[i]) >= T("job.beyond_work_factor") * w and not waits[i]]
    for i in sorted(cand):
        same = np.flatnonzero((h.name == h.name[i]) & (h.line == h.line[i]))
        if h.start[same].min() < h.start[i]:
            continue  # no first call of the op on its thread: what it paid, an earlier call did not -- no start-up
        others = dur[same[same != i]]
        if others.size and float(others.max()) * T("job.first_call_factor") > float(dur[i]):
            continue  # a later call pays as much: a cost of every call, not of the first
        out[i] = True
    if recorded and out.any():  # the GPU busy through the call: it waited for GPU work
        idx = np.flatnonzero(out)
        out[idx[~_calls_idle(trace, idx)]] = False
    for i in np.flatnonzero(out).tolist():  # the outermost said once: ``aten::to`` around its ``_to_copy``, ``copy_``
        out[_nested(h, i)] = False
    return out


def _nested(h: HostEvents, i: int) -> np.ndarray:
    """Host event indices of the calls recorded inside call ``i`` on its thread (its span, not its own)."""
    inner = np.flatnonzero((h.line == h.line[i]) & (h.start >= h.start[i]) & (h.end <= h.end[i]))
    return inner[inner != i]


def _beyond_work_words(trace: Trace, dur: np.ndarray, beyond: np.ndarray) -> list[str]:
    """The first calls far beyond their own work (:func:`_beyond_work_calls`) in words, the evidence of each (up to
    three, the longest first): a FLOP op's shapes, FLOPs and bytes against the longest they take; a tensor-making
    op's recorded allocation and fill against its time."""
    if not beyond.any():
        return []
    h, fo = trace.h, trace.flop_ops
    idx = np.flatnonzero(beyond)
    idx = idx[np.argsort(-dur[idx], kind="stable")]
    rows = {}
    if fo is not None and fo.source == "trace shapes":
        rows = {int(j): r for r, j in enumerate(fo.host_idx.tolist()) if j >= 0}
    said = []
    for i in idx[:3].tolist():
        name = h.names[int(h.name[i])]
        if i in trace.copy_op_bytes:
            moved = trace.copy_op_bytes[i]
            said.append(f"`{name}` {_ms(dur[i])} to copy {_amount(moved, 'B')}, which no CPU or GPU takes over "
                        f"{_ms(moved / (T('job.least_work_gbps') * 1e9) * 1e12)} to move")
            continue
        if i in rows:
            r = rows[i]
            most = max(fo.flops[r] / (T("job.least_work_gflops") * 1e9), fo.bytes[r] / (T("job.least_work_gbps") * 1e9))
            said.append(f"`{fo.label[r]}` {_ms(dur[i])} for {_amount(fo.flops[r], 'FLOP')} and "
                        f"{_amount(fo.bytes[r], 'B')}, which no CPU or GPU takes over {_ms(most * 1e12)} to do")
            continue
        inner = _nested(h, i)
        cs, ce = union_intervals(h.start[inner].astype(np.int64), h.end[inner].astype(np.int64))
        calls = sorted({h.names[int(n)] for n in np.unique(h.name[inner])})[:3]
        said.append(f"`{name}` {_ms(dur[i])}, of which the allocation and fill it calls "
                    f"({', '.join(f'`{c}`' for c in calls)}) took {_ms((ce - cs).sum())}")
    us, ue = union_intervals(h.start[idx].astype(np.int64), h.end[idx].astype(np.int64))
    return [f"{plural(int(idx.size), 'first op call', 'first op calls')} far beyond "
            f"{'its' if idx.size == 1 else 'their'} own work "
            f"({'; '.join(said)}; {_ms((ue - us).sum())}): no op's work takes that, a first use's start-up does "
            "(the GPU context made with the process's first device tensor, a math library's handle, workspace and "
            "modules loading)"]


def _amount(x: float, unit: str) -> str:
    """``x`` of ``unit`` with a decimal prefix: 5.1 MFLOP, 2.1 MB."""
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= scale:
            return f"{x / scale:.1f} {prefix}{unit}"
    return f"{x:.0f} {unit}"


def _peer_waits(h: HostEvents, fw: Framework) -> np.ndarray:
    """Bool per host event: a collective or point-to-point op of a backend that runs on the CPU (the host event's
    backend by the framework's name, ``Framework.collective_backend``: ``gloo:recv`` -> Gloo, ``devices.collectives.
    cpu_backend``), whose time on the host is its wait for its peers.

    Why: such an op's first call is no first call of its library -- Gloo, by default, connects every pair of ranks when
    the process group is made (``init_process_group``), before any collective --, and it returns when its peers have
    sent (MPI's backend is taken alike, though an MPI library may connect a pair at its first message): a
    first call far over the later ones is the ranks reaching it at different times (the work each did before it),
    which no later call repeats once they run in lock step.  ASSUMPTION this replaces: *an op's first call far
    slower than its later ones pays a start-up* -- pramod-b-s/839_Adv_ML_Project's ``trace_comm.json`` (no licence;
    survey h37-hunt70a), rank 2 of a 4-rank Gloo ring all-reduce on the CPU: its first ``gloo:recv`` 2.85 ms (inside
    the first ``gloo:send``, 3.65 ms), the two later pairs 174-341 us, read "a cold start ... what only a first call
    pays (an algorithm search, a library's lazy start-up)", "phase warm-up (80% of the window in one-time costs)".
    NCCL's process group makes its communicators at the first collective (lazily, unless given a device at
    ``init_process_group``): its first call may pay that, and stays read as before."""
    return h.name_mask(lambda n: bool(cpu_backend(fw.collective_backend(n))))


def _first_op_words(h: HostEvents, dur: np.ndarray, first: np.ndarray) -> list[str]:
    """The slow first op calls (:func:`_slow_first_op_calls`) in words: how many pay their time themselves, the few
    that pay the most with their time, the time covered.

    A call pays its own time where at least half of it lies outside the slow first calls nested in it
    (:func:`_own_slow_time`): an op's first call nests its callee's (``aten::conv2d`` around ``aten::
    cudnn_convolution``), which pays it, and the callee may nest slow first calls of its own that pay a sliver.  Why:
    naming the innermost calls named those slivers -- pramod-b-s/839_Adv_ML_Project's ResNet-18 forward (CPU activity
    only; survey h37-hunt70a) read "6 first op calls ... (`aten::add` 14.0 ms, `aten::clamp_min` 6.1 ms, `aten::add_`
    2.5 ms; 4.10 s)", its first ``aten::cudnn_convolution`` (3.77 s, a 2.3 ms ``aten::resize_`` in it) and
    ``aten::cudnn_batch_norm`` (295 ms) unnamed."""
    if not first.any():
        return []
    idx = np.flatnonzero(first)
    s, e = h.start[idx].astype(np.int64), h.end[idx].astype(np.int64)
    own = _own_slow_time(s, e)
    paying = [k for k in range(idx.size) if 2 * own[k] >= e[k] - s[k]]
    paying.sort(key=lambda k: -int(own[k]))
    named = ", ".join(f"`{h.names[int(h.name[idx[k]])]}` {_ms(dur[idx[k]])}" for k in paying[:3])
    us, ue = union_intervals(s, e)
    return [f"{plural(len(paying), 'first op call', 'first op calls')} far slower than every later call of the same "
            f"op ({named}; {_ms((ue - us).sum())}): what only a first call pays (an algorithm search, a library's "
            "lazy start-up)"]


def _own_slow_time(s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Per call (``s``, ``e``: the slow first calls' spans), its time outside the other calls nested in it (of two
    calls with one span, the later in ``s``'s order is the inner).

    Calls that nest (every pair apart or one inside the other: a thread's calls) are a forest, each call's nested ones
    its descendants, whose union is its children's spans: one sort and one pass, n log n.  Calls that overlap without
    nesting (two threads' first calls) are read by :func:`_own_slow_time_overlapping`.  Why: each call was checked
    against every other (h37-homes71: a 10,000-deep chain beside 10,000 siblings took 1.0 s, now 9 ms).
    The overlapping reader is still quadratic in the depth of the nesting."""
    n = s.size
    own = (e - s).astype(np.int64)
    if n < 2:
        return own
    order = np.lexsort((np.arange(n), -e, s))  # by start, the longer first, then the earlier: an outer before its inner
    inner = np.zeros(n, np.int64)
    stack: list[int] = []
    sl, el, ol = s.tolist(), e.tolist(), order.tolist()
    for k in ol:
        last = -1
        while stack and el[stack[-1]] < el[k]:
            last = stack.pop()
        if last >= 0 and el[last] > sl[k]:  # begun inside a call it outlasts: no forest
            return _own_slow_time_overlapping(s, e, order)
        if stack:
            inner[stack[-1]] += el[k] - sl[k]
        stack.append(k)
    return own - inner


def _own_slow_time_overlapping(s: np.ndarray, e: np.ndarray, order: np.ndarray) -> np.ndarray:
    """:func:`_own_slow_time` of calls that overlap without nesting: per call, the union of the calls inside it, each
    call's candidates those starting within it (``order``: by start, the longer first, then the earlier)."""
    own = (e - s).astype(np.int64)
    ss, se = s[order], e[order]
    rank = np.empty(s.size, np.int64)
    rank[order] = np.arange(s.size)
    hi = np.searchsorted(ss, e, side="right")
    for k in range(s.size):
        lo = int(rank[k]) + 1  # before it in ``order`` with its start: longer, or its span and earlier: not inside it
        cand = np.arange(lo, int(hi[k]))
        cand = cand[se[cand] <= e[k]]
        if cand.size:
            cs, ce = union_intervals(ss[cand], se[cand])
            own[k] -= int((ce - cs).sum())
    return own


def _slow_launch_words(dur: np.ndarray, launch: np.ndarray, slow: np.ndarray, med_us: float | None) -> list[str]:
    """The slow first launches in words: how many, how long, their share of all launch time."""
    if not slow.any():
        return []
    typical = f"median launch {med_us:.1f} us; " if med_us is not None else ""
    return [f"{plural(int(slow.sum()), 'kernel launch')} of {_ms_range(dur[slow].min(), dur[slow].max())} with the GPU "
            f"idle ({typical}{pct(dur[slow].sum() / max(dur[launch].sum(), 1), 0)} "
            "of all launch time): first launches load their modules"]


def _gap_words(fw: Framework, gap_s: np.ndarray, gap_e: np.ndarray) -> list[str]:
    """The compile gaps (:func:`_compile_gaps`) in words: how many, how long, whose."""
    if not gap_s.size:
        return []
    return [(f"{plural(int(gap_s.size), 'stretch', 'stretches')} of {fw.label('compile_gap')} with no op run "
             f"({_ms((gap_e - gap_s).sum())})")]


def _span_words(fw: Framework, up: tuple, tune: tuple, link: tuple, load: tuple, graph: tuple) -> list[str]:
    """The one-time spans that are no call of their own, in words: the first uploads, the autotuning, the run-time
    compiles shown by their links or by the modules they load from memory, the graph captures (each a (starts,
    ends[, count]) of its finder)."""
    (up_s, up_e, up_n, up_to), (tune_s, tune_e, tune_n), (link_s, link_e), (graph_s, graph_e) = up, tune, link, graph
    load_s, load_e = load
    parts = []
    if up_n:
        parts.append(f"{plural(up_n, 'copy', 'copies')} to the device before the first {up_to} "
                     f"({_ms((up_e - up_s).sum())}): "
                     f"{fw.label('first_upload')}")
    if tune_n:
        parts.append(f"{plural(int(tune_s.size), 'call')} in {fw.label('autotune')}, {plural(tune_n, 'sync')} "
                     f"({_ms((tune_e - tune_s).sum())})")
    if link_s.size:
        parts.append(f"{plural(int(link_s.size), 'kernel')} compiled on the host and linked at run time "
                     f"({_ms((link_e - link_s).sum())} from the thread's last GPU work to the launch, the GPU idle: a "
                     "compiler with no call of its own in the capture, shown by the link that follows it)")
    if load_s.size:
        parts.append(f"{plural(int(load_s.size), 'kernel')} compiled on the host (or read from a compiler's cache) "
                     f"and loaded from memory ({_ms((load_e - load_s).sum())} from the thread's last GPU work to the "
                     "module's load, the GPU idle: a compiler with no call of its own in the capture, such as "
                     "NVRTC, shown by the module it loads from memory)")
    if graph_s.size:
        parts.append(f"{plural(graph_s.size, 'graph capture')} ({_ms((graph_e - graph_s).sum())}): kernels launched while a "
                     "graph is captured are recorded, not run")
    return parts


def _call_words(h: HostEvents, dur: np.ndarray, init: np.ndarray, comp: np.ndarray, rare: np.ndarray,
                ctx: np.ndarray) -> list[str]:
    """The one-time calls in words: library start-up, compilation, first-time runtime calls (a few names each, the
    time they cover), and the call that created the context."""
    parts = []
    for what, many, mask in (("library start-up / module loading call", "library start-up / module loading calls",
                              init), ("compilation span", None, comp), ("first-time runtime call", None, rare)):
        if mask.any():
            names = sorted({h.names[i] for i in np.unique(h.name[mask])[:3]})
            # the time they cover, not the sum of their durations: compilation's spans nest (bw_compiler around
            # compile_fx_inner around ...), and summed they read 3.97 s of compiling in a 1.7 s capture
            us, ue = union_intervals(h.start[mask].astype(np.int64, copy=False), h.end[mask].astype(np.int64, copy=False))
            parts.append(f"{plural(int(mask.sum()), what, many)} ({', '.join(f'`{n}`' for n in names)}, {_ms((ue - us).sum())})")
    if ctx.any():
        i = int(np.flatnonzero(ctx)[0])
        parts.append(f"the context created in the process's first runtime call after the runtime's start-up "
                     f"(`{h.names[int(h.name[i])]}`, {_ms(dur[ctx].sum())})")
    return parts


_EMPTY = np.zeros(0, np.int64)


def _autotune(trace: Trace, fw: Framework) -> tuple[np.ndarray, np.ndarray, int]:
    """The framework ops that synced inside (``fw.autotune_event``: a library's algorithm search, cuDNN's under
    ``cudnn.benchmark``), as disjoint (starts, ends) per thread, and the number of syncs in them.  The search times
    each candidate kernel and waits for it: the GPU idles between candidates, once per shape -- a start-up cost the
    steady state does not pay, not a value the program reads."""
    h = trace.h
    tune = np.flatnonzero(h.name_mask(fw.autotune_event))
    sync = np.flatnonzero(h.name_mask(devices.is_sync_call)) if tune.size else tune
    if not sync.size:
        return _EMPTY, _EMPTY, 0
    starts, ends, n = [], [], 0
    for ln in np.unique(h.line[tune]).tolist():
        t, sy = tune[h.line[tune] == ln], sync[h.line[sync] == ln]
        if not sy.size:
            continue
        us, ue = union_intervals(h.start[t].astype(np.int64, copy=False), h.end[t].astype(np.int64, copy=False))
        j = np.searchsorted(us, h.start[sy].astype(np.int64, copy=False), side="right") - 1
        inside = (j >= 0) & (h.end[sy].astype(np.int64, copy=False) <= ue[np.maximum(j, 0)])
        hit = np.unique(j[inside])
        n += int(inside.sum())
        starts.append(us[hit])
        ends.append(ue[hit])
    if not starts:
        return _EMPTY, _EMPTY, 0
    return np.concatenate(starts), np.concatenate(ends), n


def _compile_gaps(trace: Trace, fw: Framework) -> tuple[np.ndarray, np.ndarray]:
    """The stretches (ps, disjoint) of each ``fw.compile_gap_event`` with no host event nested in them, each at least
    ``job.compile_gap_ms`` long.

    Why the stretches, not the events: a TorchScript fallback function's own time is its executor planning the graph
    for new shapes, but the ops it then runs (nested in it, as the nested fallbacks that run them) are the program's
    work; an interpreter that runs no op for milliseconds is not running the graph."""
    h = trace.h
    floor = T("job.compile_gap_ms") * PS_PER_MS
    cand = np.flatnonzero(h.name_mask(fw.compile_gap_event)
                          & ((h.end - h.start).astype(np.int64, copy=False) >= floor))
    if not cand.size:
        return _EMPTY, _EMPTY
    starts, ends = [], []
    for ln in np.unique(h.line[cand]).tolist():
        on = np.flatnonzero(h.line == ln)
        on = on[np.argsort(h.start[on], kind="stable")]
        s, e = h.start[on].astype(np.int64, copy=False), h.end[on].astype(np.int64, copy=False)
        for i in cand[h.line[cand] == ln].tolist():
            a, b = int(h.start[i]), int(h.end[i])
            lo, hi = np.searchsorted(s, a, side="left"), np.searchsorted(s, b, side="right")
            kid = (on[lo:hi] != i) & (e[lo:hi] <= b)
            gs, ge = subtract_intervals(np.array([a], np.int64), np.array([b], np.int64), s[lo:hi][kid], e[lo:hi][kid])
            keep = (ge - gs) >= floor
            starts.append(gs[keep])
            ends.append(ge[keep])
    if not starts:
        return _EMPTY, _EMPTY
    return union_intervals(np.concatenate(starts), np.concatenate(ends))


def _first_uploads(trace: Trace, launches: list[np.ndarray], context: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray, int, str]:
    """Per GPU, the copies to the device before its first kernel (``model.cuda()``, ``model.to(device)``: one copy
    per parameter and buffer), as the host time each was issued or in flight -- from its call's start to the later of
    the copy's end and the call's return (a pageable copy's call blocks until the copy is staged) -- merged; and how
    many copies; a copy whose call created the context (``context``, per host event) counts its own time only, the
    context's being counted apart.  Only called for a
    process that starts in the window: a steady capture may open on a step's input copy, which is no set-up.

    A call that waited for the GPU's earlier work (a synchronous ``cudaMemcpy`` queued behind a memset) counts from
    where that work ended: the wait is the earlier work's time, not the upload's.  RyuGracie/SudokuSolverCUDA's first
    ``cudaMemcpy`` of 4 bytes lasted 6.40 ms behind a 1.36 GB ``cudaMemset``, read as "2 copies to the device before
    the first kernel (6.4 ms): the program's first inputs uploaded once" -- the two copies took 1.4 us.

    The fourth value names what the copies preceded, from what the GPUs' first compute was: "kernel", "collective"
    (NVIDIA/nccl-tests' set-up on 4 V100s: each GPU's first compute an all-reduce, read "before the first kernel",
    h37-hunt70b Left 3), or "kernel or collective" where the GPUs differ."""
    h = trace.h
    bursts, firsts = [], set()
    for i, d in enumerate(trace.devices):
        kern = (d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)  # the program's compute
        if not kern.any():
            continue
        up = np.flatnonzero((d.kind == devices.KIND_H2D) & (d.start < d.start[kern].min()))
        if up.size >= 2:  # one copy before the first kernel is a step's input as much as a model's upload
            bursts.append((i, up))
            lead = np.flatnonzero(kern)[int(np.argmin(d.start[kern]))]
            firsts.add("collective" if d.kind[lead] == devices.KIND_COLLECTIVE else "kernel")
    if not bursts:  # the launch records are looked up only for a capture that has a burst
        return _EMPTY, _EMPTY, 0, ""
    starts, ends, n = [], [], 0
    for i, up in bursts:
        d = trace.devices[i]
        r = launches[i][up]
        # the GPU's earlier work (a memset, a copy) ended by when each copy's call stopped waiting for it
        before = np.maximum.accumulate(d.end.astype(np.int64, copy=False))
        earlier = np.where(up > 0, before[np.maximum(up - 1, 0)], np.iinfo(np.int64).min)
        # each copy from its call's start to the later of its own end and its call's return (a pageable copy's call
        # blocks until the copy is staged): the upload is the time a copy was issued or in flight, not the hull from
        # the first copy to the last, which took in a host that waited on something else between two bursts (a
        # program blocked 4.65 s reading its standard input read as 4.79 s of uploads)
        s = d.start[up].astype(np.int64, copy=False)
        e = d.end[up].astype(np.int64, copy=False)
        ok = r >= 0
        if context is not None and context.any():
            ok[ok] = ~context[r[ok]]
        s[ok] = np.minimum(s[ok], np.maximum(h.start[r[ok]].astype(np.int64, copy=False), earlier[ok]))
        e[ok] = np.maximum(e[ok], h.end[r[ok]].astype(np.int64, copy=False))
        starts.append(s)
        ends.append(e)
        n += int(up.size)
    if not starts:
        return _EMPTY, _EMPTY, 0, ""
    s, e = union_intervals(np.concatenate(starts), np.concatenate(ends))
    return s, e, n, " or ".join(sorted(firsts, key=("kernel", "collective").index))


def _compiles_before_links(trace: Trace) -> tuple[np.ndarray, np.ndarray]:
    """Host spans (ps) in which a kernel was compiled by a compiler the capture does not trace, each from the
    thread's last GPU work (a launch, copy, sync or allocation; or the GPU's last work, if later) to the launch after a
    run-time link (``devices.is_link_start``), with the GPU idle through it.

    Why: a JIT compiler other than NVRTC (Numba's NVVM, an LLVM backend) runs on the host with no CUDA call -- the
    capture shows 145 ms of silence, then ``cuLinkCreate`` / ``cuLinkComplete`` / ``cuModuleLoadDataEx``: a program
    links code at run time only after generating it, so the silence before the link is the compile, a first call's
    one-time cost, not the host's steady work.  A program that links more often than it has kernels recompiles every
    call: that is its steady state, and nothing is taken."""
    return _silences_before(trace, np.flatnonzero(trace.h.name_mask(devices.is_link_start)))


def _compiles_before_loads(trace: Trace, launches: list[np.ndarray], links: tuple[np.ndarray, np.ndarray],
                           traced: np.ndarray
                           ) -> tuple[np.ndarray, np.ndarray]:
    """Host spans (ps), as :func:`_compiles_before_links`, ended by a module loaded from the program's memory
    (``devices.is_image_load``) whose thread's next launch runs a kernel's first run in the capture; those a link's
    span (``links``) already holds are left to it, and so are those holding a compile the capture traced
    (``traced``: bool per host event -- nvFuser's ``Nvrtc::CompileProgram`` range: its own words say it).

    Why: the link is not the only sign of an untraced compile.  NVRTC is a library the capture does not trace, and
    a program that compiles with it loads the result with no link: CuPy's element-wise kernels on an A100
    (nikitinvv/recon-stream, Nsight 2023.1) show 169 ms with no CUDA call, then ``cuModuleLoadData`` and the new
    kernel's first launch -- twice in a pass of 347 ms whose GPU ran 15 us.  Main read the silences as "the host's
    own code, which the profiler did not record" (critical host-bound, 91% of the pass) and the cold start as the
    loads' own 29 ms.  A module is loaded from memory only after it was made (or read from a cache): the silence
    before it, ending in the first run of a kernel, is a first call's cost.  The guards keep steady work out: the
    launch after the load must run a kernel for the first time (a load before repeat launches is no new code), and
    a program that loads more modules than it has kernels reloads every call -- its steady state."""
    loads = np.flatnonzero(trace.h.name_mask(devices.is_image_load))
    if not loads.size:
        return _EMPTY, _EMPTY
    s, e = _silences_before(trace, loads, _launch_states(trace, launches) == _FIRST, to_mark_end=True,
                            skip=_launched_library_kernels(trace, launches))
    held = _overlaps(s, e, links[0].astype(np.int64, copy=False), links[1].astype(np.int64, copy=False))
    at = np.sort(trace.h.start[traced].astype(np.int64, copy=False))
    if at.size:
        held |= np.searchsorted(at, s, side="left") < np.searchsorted(at, e, side="right")
    return s[~held], e[~held]


def _overlaps(s: np.ndarray, e: np.ndarray, os_: np.ndarray, oe: np.ndarray) -> np.ndarray:
    """Per span (``s``, ``e``), whether it overlaps any of the spans (``os_``, ``oe``)."""
    if not os_.size or not s.size:
        return np.zeros(s.size, dtype=bool)
    order = np.argsort(os_, kind="stable")
    reach = np.maximum.accumulate(oe[order])  # the latest end of the spans starting up to each one
    k = np.searchsorted(os_[order], e, side="left") - 1  # the last span starting before this one ends
    return (k >= 0) & (reach[np.maximum(k, 0)] > s)


def _launched_library_kernels(trace: Trace, launches: list[np.ndarray]) -> np.ndarray:
    """Bool per host event: it launched a kernel of a math library (``devices.library_kernel_one``: cuBLAS, rocBLAS's
    Tensile ``Cijk_*``, MIOpen ...).  Such a library ships its kernels compiled: a module it loads from memory before
    one is its own code object read from its files (rocBLAS reads Tensile's ``.co`` files, then
    ``hipModuleLoadData``), part of the library's start-up, not a compile of the program's -- ROCm's rpd matmul
    (``foreign/rocm_rpd_matmul``) spends 2.70 s unrecorded loading its BLAS libraries before its first GEMM."""
    h = trace.h
    out = np.zeros(len(h), dtype=bool)
    for d, rec in zip(trace.devices, launches):
        if not len(d):
            continue
        lib = np.fromiter((devices.library_kernel_one(n) for n in d.names), dtype=bool, count=len(d.names))
        hit = (rec >= 0) & lib[d.name.astype(np.int64)] if lib.size else np.zeros(len(d), dtype=bool)
        out[rec[hit]] = True
    return out


def _silences_before(trace: Trace, marks: np.ndarray, first_runs: np.ndarray | None = None,
                     to_mark_end: bool = False, skip: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per mark (host event index, a link or a load that shows code just made), the span from its thread's last GPU
    work (a launch, copy, sync or allocation; or the GPU's last work, if later) to the thread's next launch, kept
    where the GPU idles through it.  Nothing where the program makes code every call (its steady state): without
    ``first_runs``, where the marks outnumber the capture's kernels; with ``first_runs`` (bool per host event), where
    more marks are followed by a launch of a kernel already run than by a kernel's first run -- and a span is kept
    only where the launch that ends it is a first run.  (Kernels are counted by name only without it: CuPy loads a
    ``cupy_fill`` module per dtype, one name for two modules.)  ``to_mark_end``: the span ends with the mark itself,
    not at the next launch -- a load is the compile's last act, and the host's own code between it and the launch
    (the first call's Python) is the host's work, not the compile's.  ``skip`` (bool per host event): a mark whose
    next launch is one of these is no sign of code just made, and is left out before anything is counted."""
    h = trace.h
    if not marks.size:
        return _EMPTY, _EMPTY
    launch = np.flatnonzero(h.name_mask(devices.is_launch_call))
    nxt = np.full(marks.size, -1, np.int64)  # per mark, its thread's next launch
    for j, i in enumerate(marks.tolist()):
        after = launch[(h.line[launch] == h.line[i]) & (h.start[launch] >= h.start[i])]
        if after.size:
            nxt[j] = int(after[np.argmin(h.start[after])])
    if skip is not None:
        keep = (nxt < 0) | ~skip[np.maximum(nxt, 0)]
        marks, nxt = marks[keep], nxt[keep]
        if not marks.size:
            return _EMPTY, _EMPTY
    if first_runs is None:
        kernels = len(set().union(*({d.names[int(i)] for i in np.unique(d.name[d.kind == devices.KIND_KERNEL])}
                                    for d in trace.devices if len(d))))
        if marks.size > kernels:
            return _EMPTY, _EMPTY
    else:
        fresh = (nxt >= 0) & first_runs[np.maximum(nxt, 0)]
        if int(((nxt >= 0) & ~fresh).sum()) > int(fresh.sum()):
            return _EMPTY, _EMPTY
        marks, nxt = marks[fresh], nxt[fresh]
    work = np.flatnonzero(h.name_mask(devices.is_launch_call) | h.name_mask(devices.is_blocking_call)
                          | h.name_mask(devices.is_alloc_call))
    gpu_end = np.sort(np.concatenate([d.end.astype(np.int64) for d in trace.devices if len(d)] or [_EMPTY]))
    starts, ends, lines = [], [], []
    for i, n in zip(marks.tolist(), nxt.tolist()):
        t, ln = int(h.start[i]), h.line[i]
        before = work[(h.line[work] == ln) & (h.end[work] <= t)]
        if not before.size:
            continue
        a = int(h.end[before].max())
        k = np.searchsorted(gpu_end, t, side="right")
        if k:
            a = max(a, int(gpu_end[k - 1]))
        b = int(h.end[i]) if to_mark_end or n < 0 else int(h.start[n])
        if b > a:
            starts.append(a)
            ends.append(b)
            lines.append(ln)
    if not starts:
        return _EMPTY, _EMPTY
    s, e = np.asarray(starts, np.int64), np.asarray(ends, np.int64)
    idle = _gpu_idle_through(trace, s, e, np.asarray(lines, dtype=h.line.dtype))
    return s[idle], e[idle]


#: :func:`_launch_states`: a launch call none of whose device events is mapped, one that ran only kernels the
#: capture had run before, one that ran a kernel's first run.
_UNMAPPED, _REPEAT, _FIRST = 0, 1, 2


def _launch_states(trace: Trace, launches: list[np.ndarray]) -> np.ndarray:
    """Per host event (int8): :data:`_FIRST` where a device event it launched is its kernel's first run in the
    capture (the launch that loads the kernel's module, lazily), :data:`_REPEAT` where every one it launched runs a
    kernel the capture had already run -- no first launch, so no module to load: slow launches of kernels launched
    hundreds of times before (a TorchRec step 550 stalling 2-7 ms on the same three element-wise launches each step)
    are a recurring host stall, not a cold start -- :data:`_UNMAPPED` where it maps to no device event (nothing says
    which)."""
    h = trace.h
    state = np.zeros(len(h), dtype=np.int8)
    for d, rec in zip(trace.devices, launches):
        if not len(d):
            continue
        order = np.argsort(d.start, kind="stable")
        first = np.zeros(len(d), dtype=bool)
        _, pos = np.unique(d.name[order], return_index=True)
        first[order[pos]] = True
        ok = rec >= 0
        np.maximum.at(state, rec[ok], np.where(first[ok], _FIRST, _REPEAT).astype(np.int8))
    return state


def _first_over_repeats(h: HostEvents, dur: np.ndarray, launch: np.ndarray, long: np.ndarray, state: np.ndarray
                        ) -> np.ndarray:
    """Bool per host event: a launch (``launch``) over the one-time floor (``long``) that ran its kernel's first run and took
    longer than every launch by the same call of a kernel already run (:func:`_launch_states`).  Physics, not a
    multiple of the median: a launch returns in microseconds; one of a millisecond with the GPU idle (read by the
    caller) is the host stalled in it, and where it is the kernel's first launch and no repeat launch by that call
    stalled as long, the stall is what only a first launch does -- loading the kernel's module (CUDA's lazy loading).

    Why: the cut of ``job.one_time_launch_factor`` x the median launch (2.25 ms on a median of 22.5 us) left
    Better-Call-Paul/CUDA-Transformer's T4 ``layer_norm`` first launch of 1.13 ms (the next two 17 and 28 us) as
    the steady launch path: "critical launch-bound ... saves ~806 us (65%)" with a CUDA-graph fix, which removes no
    module load."""
    first = np.flatnonzero(long & (state == _FIRST))
    if not first.size:
        return np.zeros(len(h), dtype=bool)
    rep = np.flatnonzero(launch & (state == _REPEAT))
    worst = np.zeros(len(h.names), dtype=np.int64)  # per call name, its longest repeat launch
    if rep.size:
        np.maximum.at(worst, h.name[rep].astype(np.int64), dur[rep].astype(np.int64))
    out = np.zeros(len(h), dtype=bool)
    out[first[dur[first] > worst[h.name[first].astype(np.int64)]]] = True
    return out


def _first_work_leads(trace: Trace, started: ContextStart, launches: list[np.ndarray], slow: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, frozenset[int], np.ndarray, np.ndarray]:
    """Host spans (ps) from a launch call's return to its work's start, the GPU idle between, where the launch is
    the first of a process that started its runtime in the window (``started``: :func:`context_start`) on its GPU,
    or one the reading took for a module load (``slow``: :func:`_slow_first_launches`): the GPU's side of that
    first use -- the module the lazy launch loaded made resident, the new context's first work set up -- a one-time
    cost of the load, booked with it.

    Why: the ledger reads an idle GPU holding launched work before a step's first work as work from before the
    capture (still running when the window opened).  That reading needs work that could precede the window; a
    process whose first runtime call the window holds launched none before it.  Qcompiler/MIXQ's A100 benchmark
    (``nsys`` launched the program) waits 1.48 ms for `reduce_kernel` after the 6.5 ms launch that loaded its module
    (and 0.42 ms for its first kernel), and the report called it "The capture opens while the GPU still runs earlier
    work".  A GPU another process drives, or work launched before the start-up, keeps the earlier reading.

    Also returns the GPUs whose first work (the capture's first on them) such a process launched after its start-up
    -- on those no work launched before the capture can run ahead of it (``OneTime.fresh_gpus``: the ledger reads no
    work from before the capture there) -- and the launch calls of those first works (starts, ends): the GPU, with
    nothing before, idles through the process's first launch on it, a first use like the idle after it (max-zhao0's
    TAC-HEP `mm_cuda` on a T4: a 516 us first launch, the module loaded in it, beside later launches of 13-52 us)."""
    if not started.starts or not any(len(d) for d in trace.devices):
        return _EMPTY, _EMPTY, frozenset(), _EMPTY, _EMPTY
    h = trace.h
    lines = {int(h.line[first]) for first, _ in started.starts}
    t0 = min(int(h.start[first]) for first, _ in started.starts)
    floor = T("launch.kernel_switch_us") * PS_PER_US
    launch = h.name_mask(devices.is_launch_call)
    starts, ends = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    fresh: set[int] = set()
    calls: list[int] = []
    for d, rec in zip(trace.devices, launches):
        if not len(d):
            continue
        own = trace.gpu_host_lines.get(d.gpu)
        if own is not None and own.size and not lines & set(np.unique(own).tolist()):
            continue  # another process drives this GPU: this start-up says nothing of its work
        rec = np.asarray(rec, np.int64)
        first = np.zeros(len(d), bool)
        k0 = int(np.argmin(d.start))
        first[k0] = True
        if rec[k0] >= 0 and h.start[rec[k0]] >= t0:
            fresh.add(int(d.gpu))
            # a kernel's launch call (a copy's call is the copy's, staged or waiting); a slow launch's call is a
            # one-time cost of its own already (its words say so)
            if d.kind[k0] == devices.KIND_KERNEL and launch[rec[k0]] and not slow[rec[k0]]:
                calls.append(int(rec[k0]))
        i = np.flatnonzero(rec >= 0)
        i = i[(slow[rec[i]] | first[i]) & (h.start[rec[i]] >= t0)]
        if not i.size:
            continue
        # the idle begins where the call returned, or where the GPU's earlier work ended if later
        prev_end = np.maximum.accumulate(d.end.astype(np.int64, copy=False))
        before = np.where(i > 0, prev_end[np.maximum(i - 1, 0)], np.iinfo(np.int64).min)
        s = np.maximum(h.end[rec[i]].astype(np.int64), before)
        e = d.start[i].astype(np.int64)
        keep = (e - s) >= floor
        starts.append(s[keep])
        ends.append(e[keep])
    s, e = np.concatenate(starts), np.concatenate(ends)
    c = np.asarray(calls, np.int64)
    return (*(union_intervals(s, e) if s.size else (_EMPTY, _EMPTY)), frozenset(fresh),
            h.start[c].astype(np.int64), h.end[c].astype(np.int64))


def _first_call_words(h: HostEvents, s: np.ndarray, e: np.ndarray) -> list[str]:
    """The first launch calls of :func:`_first_work_leads` (not already slow launches) in words."""
    if not s.size:
        return []
    n = int(s.size)
    return [(f"the GPU idle {_ms((e - s).sum())} inside {plural(n, 'first launch call', 'first launch calls')} of "
             f"a process on its GPU, nothing before {'it' if n == 1 else 'them'} to run")]


def _lead_words(s: np.ndarray, e: np.ndarray) -> list[str]:
    """The first-work leads (:func:`_first_work_leads`) in words."""
    if not s.size:
        return []
    n = int(s.size)
    return [f"the GPU idle {_ms((e - s).sum())} from the return of {plural(n, 'first launch', 'first launches')} "
            f"(a module loaded in the call, or the process's first work on its GPU) to the start of "
            f"{'its' if n == 1 else 'their'} work, in a process that started in the window: the first use of what "
            "the call set up, with nothing launched before the start-up to wait on"]


def unseen_gpu_work(trace: Trace, launches: list[np.ndarray] | None = None, started: ContextStart | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The host's time in :func:`unseen_gpu_calls`: disjoint sorted (starts, ends), ps."""
    h, cand = trace.h, unseen_gpu_calls(trace, launches, started)
    return union_intervals(h.start[cand].astype(np.int64, copy=False), h.end[cand].astype(np.int64, copy=False))


def unseen_gpu_calls(trace: Trace, launches: list[np.ndarray] | None = None, started: ContextStart | None = None
                     ) -> np.ndarray:
    """Host event indices, sorted, of the host's waits for GPU work the capture does not show (see :class:`OneTime`): a sync or a blocking copy of at least
    ``job.one_time_launch_ms`` through which every GPU of the trace is idle.  Physics: a host only waits that long for
    a GPU that is busy -- with work outside this file.  A call that cannot wait (:func:`_never_waits`: an asynchronous
    fill, a copy between the device and pinned memory) is no such wait, its thread's first or not: its time is the
    host's own (:func:`_first_async_calls`, :func:`async_stalls`).  A blocking copy call waits for its own copy too, and a pageable
    one for the driver staging its bytes through a pinned buffer on the host (the GPU idle meanwhile): a call no
    longer than its own copies plus their bytes at ``job.staging_min_gbps`` is that, not unseen work (``launches``: per
    GPU, each device event's host launch record; ``started``: :func:`context_start` of ``trace`` where the caller has
    it)."""
    h = trace.h
    if not len(h) or not any(len(d) for d in trace.devices):
        return np.zeros(0, np.int64)
    # the durations of the blocking calls only: one column of every host event's was 18 MB more on a dense
    # capture, at the analysis's peak
    cand = np.flatnonzero(h.name_mask(devices.is_blocking_call))
    cand = cand[(h.end[cand] - h.start[cand]) >= T("job.one_time_launch_ms") * PS_PER_MS]
    launches = _launches(trace, launches)
    if cand.size:  # an asynchronous call waits for no GPU work, first in its thread or not: its time is the host's
        cand = cand[~_never_waits(trace, cand, launches)]
    if not cand.size:
        return np.zeros(0, np.int64)
    cand = cand[_calls_idle(trace, cand)]
    if cand.size:  # the call that created the context waited for no GPU work: there was none yet
        cand = cand[~(started if started is not None else context_start(trace)).calls[cand]]
    if cand.size:
        cand = cand[~_own_copy_waits(trace, cand, launches)]
    return np.sort(cand).astype(np.int64, copy=False)


def async_stalls(trace: Trace, launches: list[np.ndarray] | None = None) -> np.ndarray:
    """Host event indices, sorted, of the asynchronous calls that cannot wait for the GPU (:func:`_never_waits`) and
    last ``job.one_time_launch_ms`` or more, other than a thread's first (:func:`_first_async_calls`: start-up).

    Why: such a call returns without waiting for any GPU work, so a millisecond in it is the host's own -- the driver's
    work, a lock, pinning pages, the OS descheduling the thread -- not GPU work the capture lacks (the old reading of
    :func:`unseen_gpu_work`), and not a launch's dispatch cost either: the same call takes microseconds elsewhere in
    the run (``nsys/fsdp_mfu_after``: a ``cudaMemsetAsync`` of 5.75 ms mid-run where the median is microseconds, the
    GPU idle; ``wild/cold_loop_a4000_swin``: one of 1.26 ms in one of ten steps).  Booked as the launch wait that
    precedes its fill, one stall read as per-launch overhead and graded the run launch-bound (h37-asyncslow32)."""
    h = trace.h
    if not len(h):
        return np.zeros(0, np.int64)
    cand = np.flatnonzero(h.name_mask(devices.is_async_fill) | h.name_mask(devices.is_async_copy))
    cand = cand[(h.end[cand] - h.start[cand]) >= T("job.one_time_launch_ms") * PS_PER_MS]
    launches = _launches(trace, launches)
    if cand.size:
        cand = cand[_never_waits(trace, cand, launches)]
    if cand.size:
        cand = cand[~_first_async_calls(trace, launches)[cand]]
    return np.sort(cand).astype(np.int64, copy=False)


def _first_async_calls(trace: Trace, launches: list[np.ndarray]) -> np.ndarray:
    """Bool per host event: a thread's first runtime call of the window, one that cannot wait for the GPU
    (:func:`_never_waits`), of ``job.one_time_launch_ms`` or more with every GPU idle -- the runtime's start-up (the
    context, the modules of the program's libraries) made in it.

    Why: the context's creation was found only after the runtime's start-up mark (``devices.is_runtime_init``: CUDA
    11.7+'s ``cuModuleGetLoadingMode``), and a window's first call was not taken for it, because a window cut from a
    running process may open on a sync or a copy that waits for GPU work launched before it.  An asynchronous memset,
    or a copy between the device and pinned memory, waits for nothing: a thread's first such call that lasts is the
    runtime's own start-up.  quasiben/nvtx-examples' ``cudf.sqlite`` (CUDA 11.0): the process's first call, a
    ``cudaMemsetAsync``, lasts 2,157.6 ms -- 79% of the window -- and the report read "negligible one-time costs" and
    2.16 s of GPU work the capture does not hold (h37-memsetctx31).  Later such calls are no start-up that the call's
    kind alone can show: the host's own time in the runtime (:func:`async_stalls`)."""
    h = trace.h
    out = np.zeros(len(h), dtype=bool)
    calls = np.flatnonzero(h.name_mask(devices.is_runtime_call))
    if not calls.size:
        return out
    calls = calls[np.lexsort((h.start[calls], h.line[calls]))]
    head = calls[np.r_[True, h.line[calls][1:] != h.line[calls][:-1]]]  # each thread's first call
    head = head[(h.end[head] - h.start[head]) >= T("job.one_time_launch_ms") * PS_PER_MS]
    if not head.size:
        return out
    head = head[_never_waits(trace, head, launches)]
    if head.size:
        out[head[_calls_idle(trace, head)]] = True
    return out


def _first_async_words(h: HostEvents, dur: np.ndarray, first: np.ndarray) -> list[str]:
    """The first calls of :func:`_first_async_calls` in words."""
    if not first.any():
        return []
    names = sorted({h.names[int(i)] for i in np.unique(h.name[first])})
    n = int(first.sum())
    who = "a thread's" if n == 1 else f"{n} threads'"
    return [(f"the runtime's start-up in {who} first runtime call ({', '.join(f'`{x}`' for x in names)}, "
             f"{_ms(dur[first].sum())}): an asynchronous call waits for no GPU work, so its time is the host's own "
             "(the context, the libraries' modules)")]


def _never_waits(trace: Trace, cand: np.ndarray, launches: list[np.ndarray]) -> np.ndarray:
    """Bool per host event index of ``cand``: an asynchronous call that cannot wait for the GPU -- a memset
    (``devices.is_async_fill``: always asynchronous to the host), or a copy whose every record moves bytes between the
    device and pinned or device memory (``devices.is_async_copy``; a pageable end is staged by the driver, which may
    wait for the stream, and a host-to-host copy runs on the host).  Time inside one is the host's own work.

    Why: a blocking call (a sync, a copy) of milliseconds with every GPU idle was read as a wait for GPU work the
    capture does not hold.  An asynchronous call has nothing to wait for: a CUDA 11.0 cuDF process creates its context
    in its first call, a ``cudaMemsetAsync`` of 2,157.6 ms (quasiben/nvtx-examples ``cudf.sqlite``, 79% of the
    window), and the report booked 2.16 s of unseen GPU work (h37-memsetctx31).  A copy call with no record (none
    kept, or the copy lost) is not taken: its memory is unknown.  ``launches``: per GPU, each device event's host
    launch record."""
    h = trace.h
    idx = np.asarray(cand, np.int64)
    fill = h.name_mask(devices.is_async_fill)[idx]
    copy = h.name_mask(devices.is_async_copy)[idx]
    ok = fill.copy()
    if copy.any() and any(len(d) for d in trace.devices):
        ok[copy] = _device_pinned_copies(trace, idx[copy], launches)
    return ok


def _device_pinned_copies(trace: Trace, calls: np.ndarray, launches: list[np.ndarray]) -> np.ndarray:
    """Bool per host call in ``calls``: it made copies, each between the device and non-pageable memory."""
    h = trace.h
    pinned = np.zeros(len(h), dtype=bool)
    other = np.zeros(len(h), dtype=bool)
    for d, rec in zip(trace.devices, launches):
        if not len(d):
            continue
        rec = np.asarray(rec, np.int64)
        copy = (rec >= 0) & (d.kind != devices.KIND_KERNEL) & (d.kind != devices.KIND_COLLECTIVE)
        if not copy.any():
            continue
        host = devices.event_host_memory(d.names, d.name, d.mem_host)[copy]
        kind = d.kind[copy]
        good = (host == 0) & ((kind == devices.KIND_H2D) | (kind == devices.KIND_D2H) | (kind == devices.KIND_D2D))
        pinned[rec[copy][good]] = True
        other[rec[copy][~good]] = True
    return pinned[calls] & ~other[calls]


def _own_copy_waits(trace: Trace, cand: np.ndarray, launches: list[np.ndarray]) -> np.ndarray:
    """Bool per host record in ``cand``: a call whose length its own device copies and the staging of their bytes
    (``job.staging_min_gbps``) account for -- a cut window's ``hipMemcpyWithStream`` that waits 463 ms on a previous
    batch around its own 4 KB copy is not one."""
    h = trace.h
    own_ps = np.zeros(cand.size, np.float64)
    own_bytes = np.zeros(cand.size, np.float64)
    order = np.argsort(cand)
    sorted_cand = cand[order]
    for d, rec in zip(trace.devices, launches):
        if not len(d):
            continue
        copy = (rec >= 0) & (d.kind != devices.KIND_KERNEL) & (d.kind != devices.KIND_COLLECTIVE)
        if not copy.any():
            continue
        r = rec[copy]
        pos = np.clip(np.searchsorted(sorted_cand, r), 0, sorted_cand.size - 1)
        hit = sorted_cand[pos] == r
        at = order[pos[hit]]
        np.add.at(own_ps, at, (d.end[copy] - d.start[copy])[hit].astype(np.float64))
        np.add.at(own_bytes, at, np.maximum(d.mem_bytes[copy], 0)[hit].astype(np.float64))
    staging_ps = own_bytes * 1e3 / T("job.staging_min_gbps")  # bytes at GB/s, in ps
    length = (h.end[cand] - h.start[cand]).astype(np.float64)
    return (own_ps > 0) & (length <= own_ps + staging_ps)


def _context_calls(trace: Trace, starts: list[tuple[int, int]]) -> np.ndarray:
    """Bool per host event: the call that created the process's context -- on each thread where the runtime
    initialised in the window (``devices.is_runtime_init``), its next runtime call, where it took at least
    ``job.one_time_launch_ms`` with every GPU idle.

    Why not the first call of the window: a window cut from a running process (a capture range, a delay) may open on
    a sync or a blocking copy that waits for GPU work launched before it, which no context creation explains.  The
    runtime's own initialisation is what shows the process starting in the window; the context is then created in
    the next call the program makes, whatever call it is (a 77 ms ``cudaMemcpyToSymbol`` in a real cloth simulator,
    a ``cudaMallocManaged`` in a camera pipeline).  ``starts``: :func:`_runtime_starts` of ``trace``."""
    h = trace.h
    out = np.zeros(len(h), dtype=bool)
    if not starts:
        return out
    p = np.asarray([nxt for _, nxt in starts], np.int64)
    long = (h.end[p] - h.start[p]) >= T("job.one_time_launch_ms") * PS_PER_MS
    p = p[long]
    if p.size:
        out[p[_calls_idle(trace, p)]] = True
    return out


def _runtime_starts(trace: Trace) -> list[tuple[int, int]]:
    """(the first runtime start-up call, the next runtime call that is no device query -- :func:`_is_query`) of each
    thread where the runtime initialised in the window (``devices.is_runtime_init``) and made a call after it, as host
    event indices: the context is created between the start-up call's start and the next call's end
    (:func:`_context_calls`, :func:`_unrecorded_context`).

    A start-up call after a runtime call of its thread that had already returned is none: the runtime initialises
    once, so that mark came later -- HIP's ``__hipRegisterFatBinary`` runs again for each library loaded mid-run
    (``dlopen`` of an extension), with the runtime long initialised."""
    h = trace.h
    init = np.flatnonzero(h.name_mask(devices.is_runtime_init))
    if not init.size:
        return []
    calls = np.flatnonzero(h.name_mask(devices.is_runtime_call) & ~h.name_mask(devices.is_runtime_init))
    needs = ~h.name_mask(_is_query)[calls]
    out = []
    for ln in np.unique(h.line[init]).tolist():
        mine_calls = h.line[calls] == ln
        c = calls[mine_calls]
        if not c.size:
            continue
        mine = init[h.line[init] == ln]
        first = int(mine[np.argmin(h.start[mine])])
        if (h.end[c] <= h.start[first]).any():
            continue  # the thread's runtime ran before this mark: no start in the window
        c = c[needs[mine_calls]]  # the next call that needs a context: a device query needs none
        c = c[np.argsort(h.start[c], kind="stable")]
        k = np.searchsorted(h.start[c], h.start[first], side="right")
        if k < c.size:
            out.append((first, int(c[k])))
    return out


def _is_query(name: str) -> bool:
    """A device query (``devices.QUERY_CALLS``: count, properties, attributes, versions): it reads the device and
    needs no context, so it creates none -- the runtime's next call after its start that is not one does.  Why: a
    window that records the runtime's start and then the profiler's queries (a model left on the CPU, its context
    made by the exit sync) named no creating call, the quick query after the start taken for it (h37-nogpu2)."""
    return bool(devices.QUERY_CALLS) and name.startswith(devices.QUERY_CALLS)


def _unrecorded_context(trace: Trace, ctx: np.ndarray, starts: list[tuple[int, int]]
                        ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Host spans (ps, disjoint sorted) in which the driver created the context in calls the capture does not record,
    and those spans in words: on each thread where the runtime initialised in the window and its next recorded call
    did not create the context (``ctx``: quick), the thread's calls into the GPU driver's kernel module
    (``devices.is_driver_os_call``: ``ioctl``, from the OS runtime trace) between the two, where they total at least
    ``job.one_time_launch_ms`` with every GPU idle.

    Why: the assumption was that start-up is only what runs inside a recorded runtime call.  Nsight skips some calls
    (``CUDA_SKIP_SOME_API_CALLS``), and PyTorch's ``.cuda()`` creates the primary context through calls it does not
    record: in a real A100 export (mmagic's one forward pass under PyProf) the first ``Tensor.cuda`` takes 1,265 ms
    of which 965 ms is the thread's ``ioctl`` (604 calls, up to 215 ms each; 652 in 971 ms from the start-up call on)
    and its next recorded call, ``cudaStreamIsCapturing``, takes 14 us -- the context existed by then.  Between a runtime's start-up and its next
    call, the driver is what enters its kernel module; that was booked as the host's own work.  Only the driver's
    calls are taken, not the whole gap: the program may run its own code there (this one built its model and
    printed it), and the OS trace does not say what the thread did between two of its calls.  ``starts``:
    :func:`_runtime_starts` of ``trace``."""
    h, w = trace.h, trace.host_waits
    if w is None or not len(w):
        return _EMPTY, _EMPTY, []
    starts = [(i, nxt) for i, nxt in starts if not ctx[nxt]]
    if not starts:
        return _EMPTY, _EMPTY, []
    driver = np.isin(w.name, np.flatnonzero([devices.is_driver_os_call(n) for n in w.names]))
    spans_s, spans_e, words = [], [], []
    for i, nxt in starts:
        a, b = int(h.end[i]), int(h.start[nxt])
        pick = np.flatnonzero(driver & (w.line == h.line[i]) & (w.start >= a) & (w.end <= b))
        if not pick.size:
            continue
        s, e = union_intervals(w.start[pick].astype(np.int64), w.end[pick].astype(np.int64))
        idle = _gpu_idle_through(trace, s, e, np.full(s.size, h.line[i], dtype=h.line.dtype))
        s, e = s[idle], e[idle]
        total = int((e - s).sum())
        if total < T("job.one_time_launch_ms") * PS_PER_MS:
            continue
        spans_s.append(s)
        spans_e.append(e)
        names = sorted({w.names[int(k)] for k in np.unique(w.name[pick])})
        words.append(f"the context created in calls the capture does not record: "
                     f"{plural(int(pick.size), 'call')} into the GPU driver ({', '.join(f'`{n}`' for n in names)}, "
                     f"{_ms(total)}) between the runtime's start-up (`{h.names[int(h.name[i])]}`) and the thread's "
                     f"next recorded call (`{h.names[int(h.name[nxt])]}`, {ms(float(h.end[nxt] - h.start[nxt]) / PS_PER_MS)})")
    if not spans_s:
        return _EMPTY, _EMPTY, []
    s, e = union_intervals(np.concatenate(spans_s), np.concatenate(spans_e))
    return s, e, words


def _rare_slow_calls(trace: Trace, dur: np.ndarray, other: np.ndarray) -> np.ndarray:
    """Runtime calls of milliseconds with the GPU idle that a name makes only a few times: a process's first call
    creates its context (29.9 s in one real capture), its first allocations and streams are slow once.  A name slow
    many times (``hipFree`` with the caching allocator off, every iteration) is the steady state, not a start-up.

    The GPU idle through it is the call's own process's (``line``: :func:`_gpu_idle_through`): in one capture of two
    ranks (``wild/tp_rtx4090_two_ranks``) rank 1's first ``cudaOccupancyMaxActiveBlocksPerMultiprocessor`` (4.42 ms,
    its GPU idle) read as no one-time cost because rank 0's GPU ran meanwhile -- its own file alone reads it as one,
    and rank 0's collective waiting through it read 4.1 ms apart between the two layouts (h37-ranks60)."""
    h = trace.h
    cand = np.flatnonzero(h.name_mask(devices.is_runtime_call) & ~other & (dur >= T("job.one_time_launch_ms") * PS_PER_MS))
    out = np.zeros(len(h), dtype=bool)
    if not cand.size:
        return out
    cand = cand[_calls_idle(trace, cand)]
    names, counts = np.unique(h.name[cand], return_counts=True)
    few = set(names[counts <= T("job.one_time_call_repeats")].tolist())
    out[[i for i in cand.tolist() if int(h.name[i]) in few]] = True
    return out


def _graph_submissions(trace: Trace, dur: np.ndarray, launches: list[np.ndarray]) -> np.ndarray:
    """Bool per host event: a graph launch no longer than ``job.graph_node_us`` per kernel it launched -- its own
    submission of the graph's nodes, paid at every launch, not a first-time call.

    Why: a graph launch is made once a step; in a window of one step it is made once, which read as "slow once" (a
    first-time call).  TriForce's decode step (ranonrkm/TriForce-legacy ``trace_flash.json``, profiled after its
    warm-up loop) launches a 1,387-kernel graph in 1.59 ms, the GPU idle until it returns: 1.15 us a node, the
    launch's own cost every step, was called a cold start (a warning to profile after warm-up, which it was)."""
    h = trace.h
    out = np.zeros(len(h), dtype=bool)
    graph = np.flatnonzero(h.name_mask(devices.is_graph_launch))
    if not graph.size or not launches:
        return out
    nodes = np.zeros(len(h), dtype=np.int64)
    for rec in launches:
        rec = rec[rec >= 0]
        if rec.size:
            np.add.at(nodes, rec.astype(np.int64), 1)
    own = dur[graph] <= nodes[graph] * T("job.graph_node_us") * PS_PER_US
    out[graph[own & (nodes[graph] > 0)]] = True
    return out


def _captures(h) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001 - HostEvents
    """Graph-capture windows: from each stream capture's begin call to the next end call on its thread (ps)."""
    spans = list(_captures_by_line(h))
    if not spans:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate([s for _, s, _ in spans]), np.concatenate([e for _, _, e in spans])


def recaptures(h, graph_s: np.ndarray, graph_e: np.ndarray  # noqa: ANN001 - HostEvents
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The graph captures (of :func:`_captures`' ``graph_s`` / ``graph_e``) made again after the program had reached
    its steady state of replays: a capture that begins after two graph launches with no capture between them.
    Returns (bool per capture: made again; the recaptures' spans, each to the end of the instantiation that follows
    it on its thread (ps); bool per host event: that instantiation call).

    Why: a capture is booked one-time because a graph is recorded once and replayed after; but a program whose graph
    is recorded again and again -- a new input shape each time, or a compiled forward with autograd on whose CUDA graph
    tree starts no new iteration while a backward is pending -- pays it in the steady run.  pytorch/ao's compiled
    ViT (``wild/compiled_vit_recapture_a100``) re-captured its graph on 3 of 5 profiled calls, 210 ms each beside
    2.4 ms replays, and was read "3 warm-up steps dropped, 4% one-time costs" (h37-hunt71b *Left* 2).  The first
    captures -- a program recording its graphs one after another, each replayed once as it is recorded (a forward's
    then a backward's, a graph per partition) -- stay one-time: no two launches have run in a row before them."""
    none = np.zeros(len(h), dtype=bool)
    again = np.zeros(graph_s.size, dtype=bool)
    if graph_s.size < 2:
        return again, _EMPTY, _EMPTY, none
    gl = np.flatnonzero(h.name_mask(devices.is_graph_launch))
    if gl.size < 2:
        return again, _EMPTY, _EMPTY, none
    ls = np.sort(h.start[gl].astype(np.int64))
    cs = np.sort(graph_s)
    # the first pair of launches with no capture begun between them: the program replays alone from there
    k = np.searchsorted(cs, ls, side="right")  # captures begun before each launch
    pair = np.flatnonzero(k[1:] == k[:-1])
    if not pair.size:
        return again, _EMPTY, _EMPTY, none
    steady = int(ls[pair[0] + 1])
    again = graph_s > steady
    if not again.any():
        return again, _EMPTY, _EMPTY, none
    inst_idx = np.flatnonzero(h.name_mask(devices.is_graph_instantiate))
    ends = graph_e[again].astype(np.int64).copy()
    for i, e0 in enumerate(graph_e[again].tolist()):
        after = inst_idx[h.start[inst_idx] >= e0]
        if after.size:
            j = after[np.argmin(h.start[after])]
            if not np.any((ls > e0) & (ls < h.start[j])):  # made before the next launch: this capture's
                none[j] = True
                ends[i] = max(ends[i], int(h.end[j]))
    s, e = union_intervals(graph_s[again].astype(np.int64), ends)
    return again, s, e, none


def _starts_inside(t: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Bool per time in ``t``: inside one of the disjoint sorted spans (``s``, ``e``)."""
    k = np.searchsorted(s, t, side="right") - 1
    return (k >= 0) & (t < e[np.clip(k, 0, None)]) if s.size else np.zeros(t.size, dtype=bool)


def _outside(s: np.ndarray, e: np.ndarray, cut_s: np.ndarray, cut_e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The spans (``s``, ``e``) that start outside every cut span."""
    keep = ~_starts_inside(s.astype(np.int64, copy=False), cut_s, cut_e)
    return s[keep], e[keep]


def _captures_by_line(h) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:  # noqa: ANN001 - HostEvents
    """(thread line, starts, ends) of each thread's graph-capture windows, begin call to the next end call (ps)."""
    b = np.flatnonzero(h.name_mask(lambda n: n.startswith(devices.CAPTURE_BEGIN)))
    e = np.flatnonzero(h.name_mask(lambda n: n.startswith(devices.CAPTURE_END)))
    for ln in np.unique(h.line[b]) if b.size else []:
        bs = np.sort(h.start[b[h.line[b] == ln]].astype(np.int64))
        es = np.sort(h.end[e[h.line[e] == ln]].astype(np.int64))
        k = np.searchsorted(es, bs)
        ok = k < es.size
        yield int(ln), bs[ok], es[k[ok]]


def captured_calls(h, idx: np.ndarray) -> np.ndarray:  # noqa: ANN001 - HostEvents
    """Bool per host event in ``idx``: its call began inside a graph capture on its own thread.

    Why: a launch made while its thread captures a stream is recorded into the graph, not run -- it has no kernel
    record by construction, so no accounting of launches against kernels may count it (SGLang's start-up capture of
    its batch-32 decode graph on an MI300X: 544 launches inside ``hipStreamBeginCapture`` ... ``hipStreamEndCapture``
    were read as records the profiler lost, h37-survey50)."""
    out = np.zeros(idx.size, dtype=bool)
    if not idx.size:
        return out
    start, line = h.start[idx].astype(np.int64), h.line[idx]
    for ln, bs, es in _captures_by_line(h):
        mine = line == ln
        k = np.searchsorted(bs, start[mine], side="right") - 1
        inside = (k >= 0) & (start[mine] <= es[np.maximum(k, 0)])
        out[np.flatnonzero(mine)[inside]] = True
    return out


def _calls_idle(trace: Trace, idx: np.ndarray, collectives: bool = True) -> np.ndarray:
    """Bool per host event index of ``idx``: its process's GPUs idle through most of the call
    (:func:`_gpu_idle_through` of the calls' own spans and lines)."""
    h = trace.h
    idx = np.asarray(idx, np.int64)
    return _gpu_idle_through(trace, h.start[idx].astype(np.int64), h.end[idx].astype(np.int64), h.line[idx],
                             collectives)


def _gpu_idle_through(trace: Trace, s: np.ndarray, e: np.ndarray, line: np.ndarray,
                      collectives: bool = True) -> np.ndarray:
    """Bool per host span: the GPUs its process drives were idle for most of it (a full launch queue keeps the GPU
    busy instead).  ``line``: per span, the host line of its call (or of the thread it is on); a span on a GPU's
    process's lines (``Trace.gpu_host_lines``) asks only the GPUs its process drives -- a rank blocked in its sync
    waits on its own GPU, and another rank's busy GPU holds none of that wait's work (h37-probe42r).  A span on no
    GPU's lines asks every GPU.  Every one-time check here asks this way (h37-phase60b): in one capture of several
    ranks, a rank's slow first launch, first op call, first asynchronous call, context creation or silence before a
    first run read as no one-time cost wherever ANOTHER rank's GPU ran meanwhile -- which its own file, read alone
    or from its rank folder, reads as one.

    ``collectives=False``: a collective kernel's time is not the GPU's work (as ``metrics.breakdown.
    busy_not_collective``): it waits for every peer, and a peer that is itself stalled in a host call keeps it
    "running" for as long.  Why (h37-wild56r): the ranks of ykcai-daniel/torch-compile-moe's 2-GPU MoE each stall 12
    ms in one ``cudaLaunchKernel`` (the first ``AccumulateGrad`` add loading its module) at the same moment; rank 1's
    GPU runs 7 ms of ``ncclDevKernel_SendRecv`` through it, waiting for rank 0 (the same exchange takes 10-20 us once
    both are there), so its load read as "a launch with the GPU busy" -- no one-time cost -- and, with both ranks in
    one folder, rank 1's wait hid rank 0's load too ("one pass, no one-time cost read")."""
    busy = np.zeros(s.size, dtype=np.float64)
    length = np.maximum(e - s, 1).astype(np.float64)
    lines = trace.gpu_host_lines
    own = {g: np.isin(line, v) for g, v in lines.items()}
    anyone = np.logical_or.reduce(list(own.values())) if own else np.zeros(s.size, dtype=bool)
    for d in trace.devices:
        if not len(d):
            continue
        if collectives or not (d.kind == devices.KIND_COLLECTIVE).any():
            us, ue = d.busy()
        else:
            m = d.kind != devices.KIND_COLLECTIVE
            us, ue = union_intervals(d.start[m].astype(np.int64, copy=False), d.end[m].astype(np.int64, copy=False))
        frac = time_within(us, ue, s, e) / length
        mine = own.get(d.gpu)
        if mine is not None:  # another process's call does not wait on this GPU
            frac = np.where(mine | ~anyone, frac, 0.0)
        busy = np.maximum(busy, frac)
    return busy < 0.5


def _ms_range(lo: float, hi: float) -> str:
    """``1.4-6.5 ms`` as ``1.4 ms-6.5 ms``; one value where both ends print the same (one launch, or equal ones)."""
    a, b = _ms(lo), _ms(hi)
    return a if a == b else f"{a}-{b}"


def _ms(ps: float) -> str:
    """One-time costs' times to a tenth of a millisecond; a time that rounds to none in microseconds (``ms``): "4
    copies ... (0.0 ms)" said no time where the copies took some."""
    v = float(ps) / PS_PER_MS
    if 0 < v < 0.05:
        return ms(v)
    return f"{v:.1f} ms" if v < 1000 else f"{v / 1000:.2f} s"

