"""Steps from the program's own structure, where the format marks none.

A serving engine runs ``execute_model`` once per engine step, a script without ``prof.step()`` still calls its
``train_step`` or its model once per iteration, and ``record_function`` names the user's own blocks.  Each of these
is a span name whose instances repeat and between them launch most of the GPU work.  The step is the outermost such
span: among the names whose instances (on the thread that launched them) enclose at least ``job.span_step_coverage``
of the GPU work's launches (each kernel or collective at its launch record: :func:`work_launch_times`), the one that
covers the most, then the fewest instances (a per-layer span repeats more often than the step around it), then the
longest.  A serving engine's own step span wins when it qualifies.  Instances of
one name nested in each other (a module's ``forward`` inside another's) count as one.  Nothing here reads kernel
names: what repeats is the program's own structure.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.fmt import ms, pct
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.frameworks import Framework, nvtx, user_ranges, xla
from tb_gpu_advisor.frameworks.engines import Engine
from tb_gpu_advisor.model.columns import count_within, held, outermost, outermost_rows, stable_order, union_intervals
from tb_gpu_advisor.model.enclosing import Encloser
from tb_gpu_advisor.model.trace import PS_PER_MS, HostEvents, Trace, line_processes

#: what weighs a span (:func:`span_steps`): the GPU work it launches, or, where the capture holds none, the host's ops
_LAUNCHED = "the GPU work's launches"
_HOST_OPS = "the host's ops (the capture holds no GPU work to weigh them by)"

#: Span names weighed per table, by total time: the step is among the longest-running names.
_CANDIDATES = 48


@dataclass
class SpanSteps:
    """The repeated span taken for the step: its instances' host windows (ps, disjoint, sorted)."""

    name: str
    source: str  # "engine_steps" | "annotation_spans" | "step_end_events" | "repeated_launches" | "memory_iterations"
    start: np.ndarray
    end: np.ndarray
    coverage: float  # share of all launches its instances enclose
    confidence: str  # "high" for an engine's own step span, else "medium"
    note: str
    #: why the last instance is only part of an iteration (dropped as partial by the step detection), "" when whole
    partial_last: str = ""
    #: why the first instance holds one-time work (dropped as warm-up by the step detection where two or more steps
    #: remain), "" when it is like the others
    warmup_first: str = ""
    #: why the first instance is only part of an iteration (the recording began inside it: dropped as partial by the
    #: step detection where two or more steps remain), "" when whole
    partial_first: str = ""
    #: True where each instance runs from its start to the next one's and the last to its own work's end (a snapshot's
    #: marked turns, ``job.iterations._turns_at_openers``): the last is judged as :data:`steps.types._TILED` readings'
    #: are (``steps.ends._last_ends_at_own_work``), from three instances (of two, the one other tile cannot tell a short
    #: last from a cold first: ``steps.types._BURSTS_TILED``)
    tiled: bool = False
    #: False where the capture records no times (a PyTorch 2.0 snapshot's history, cut by its events' order): the
    #: instances are counted in ``note``, never timed as steps
    timed: bool = True
    #: host line -> that thread's own step windows (starts, ends; ps), where each thread numbers its steps on its own
    #: (``step_end_events``: each rank's updates): step k of a rank is its own kth, wherever the others' are
    per_line: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    #: ``repeated_launches``: the host waited for the GPU at the period's boundaries (a loop reading its results), not
    #: only a period of layers or of a native loop's own calls
    waited: bool = False
    #: ``step_end_events``: where the last update's end was moved to the end of its read-back
    #: (:func:`_with_last_tail`), the last end before that move (ps), the host's and each thread's; 0 / {} where none
    tail_from: int = 0
    tail_from_by_line: dict[int, int] = field(default_factory=dict)
    #: ``step_end_events``: the first instance's head, on every thread, already spans the work each later one opens
    #: with (the read-back of an iteration before the capture's first update): no read-back is missing from the steps
    first_head_held: bool = False
    #: ``annotation_spans`` read as iterations that open at the program's forward spans (``name``): the later phase
    #: whose spans repeat with them (a ``backward`` or an ``optimizer`` step, :func:`forward_iterations`); "" otherwise
    phase: str = ""
    #: ``repeated_launches`` whose repeats launch one kernel with a block of its own over the same threads in all: the
    #: configurations in words (``job.period._swept_blocks``: "`MatmulKernel` 9.24 ms at 4 threads a block ..."), ""
    #: where the repeats are one loop's turns
    sweep: str = ""


@dataclass
class _Cand:
    name: str
    table: str
    start: np.ndarray
    end: np.ndarray
    coverage: float
    line: int = -1  # the thread whose instances these are; -1 where not one line's

    @property
    def count(self) -> int:
        return int(self.start.size)

    @property
    def total(self) -> int:
        return int((self.end - self.start).sum())


def span_steps(trace: Trace, launches: list[np.ndarray], fw: Framework, engine: Engine | None = None) -> SpanSteps | None:
    """The program's step span, or None where no repeated span holds most of the GPU work.

    The framework's ops (``fw.dispatch_event``) are never a step; a span of which one model call (``fw.model_call``)
    holds several instances is the model's inner structure (its layers), not a step."""
    h = trace.h
    # launches counted by time, on any thread: PyTorch runs the backward pass on its autograd thread while the loop's
    # own thread waits inside ``train_step``; a step span holds them all
    times, work = work_launch_times(trace, launches), _LAUNCHED
    if not times.size:
        times, work = host_work_times(trace, launches, fw), _HOST_OPS
    if not times.size:
        return None
    cands = []
    not_calls = ~h.name_mask(_runtime_call) & ~h.name_mask(fw.dispatch_event) & (np.asarray(h.corr) < 0)
    # the program's read of device values (JAX's ``np.asarray(jax.Array)``) is the host waiting inside a step, as a
    # runtime's sync call is: it repeats once a step and holds the copy back's launch, never the step's own work
    # (h37-randjobs2: a jitted step as one command buffer, read back each step, no module events -- the reads held
    # as many launches as the executions, and the steps were placed at the copies: the last step a 76 us D2H copy)
    not_calls &= ~_tool_ranges(trace) & ~h.name_mask(fw.blocking_read_event)
    # a collective's record (c10d's ``gloo:send``) is the framework's, around one exchange the program asked for: a
    # ring all-reduce written by hand records a send around each round's receive and reduction, which then encloses
    # most of the host's ops -- its rounds read as "3 marked steps" of a loop (h37-hunt70a: pramod-b-s/
    # 839_Adv_ML_Project's ``trace_comm.json``, one 4-rank Gloo ring all-reduce on the CPU)
    not_calls &= ~h.name_mask(lambda n: bool(fw.collective_backend(n)))
    need = T("job.span_step_coverage")
    cands += _candidates("host event", h.start, h.end, h.name, h.line, h.names, not_calls, times, need)
    sp = trace.spans
    if sp is not None and len(sp):
        cands += _candidates("Python span", sp.start, sp.end, sp.name, sp.line, h.names, sp.line >= 0, times, need)
    calls = model_calls(trace, fw)
    ok = [c for c in cands if c.coverage >= need and not within_one_call(c.start, c.end, calls)]
    if engine is not None and engine.step_span:
        for pattern in engine.step_span:  # the engine's most specific step span that holds the work
            own = [c for c in ok if pattern.search(c.name)]
            if own:
                best = max(own, key=lambda c: (c.coverage, c.total))
                return _result(best, "engine_steps", "high", f"{engine.name}'s engine steps")
        if engine.kind == "serving":  # an engine's own spans are its steps: its Python plumbing repeats, too
            return None
    repeated = [c for c in ok if c.count >= 2]
    if repeated:
        runs = _module_runs(trace)
        if runs is None:
            runs = _named_module_runs(trace, fw)
        repeated = [c for c in repeated if _same_programs(c, runs)]
    if not repeated:
        return None
    best = min(repeated, key=lambda c: (-int(c.coverage * 10 + 1e-9), c.count, -c.total))
    found = (_opening_forwards(h, best, times, work)
             or _result(best, "annotation_spans", "medium", "the program's repeated spans", work))
    if work == _HOST_OPS:
        found.note += _host_lead(h, fw, found)
    return found


def _host_lead(h: HostEvents, fw: Framework, found: SpanSteps) -> str:
    """Where the host's ops weigh the spans (:func:`host_work_times`), the time before the first iteration said as
    what the trace shows it is: the longest stretch in it that no host event runs through (the spans around the whole
    first iteration, the loop's own, aside), where it is longer than the iterations' median, ended by the framework's
    first input fetch (``fw.input_event``) -- the wait for the first batch, a worker pool's start-up where the loader's iterator
    runs workers (``fw.parallel_input``) -- or by other work (unrecorded host time); "" where no such stretch.

    Why: a capture without the GPU's side has no GPU idle to show where its time went, and the stretch before its first
    batch (11.9 s of 12.8 s in ``wild/cuda_unrecorded_cifar_cnn``: two DataLoader workers starting) went unnamed."""
    if found.start.size < 2:
        return ""
    first = int(found.start[0])
    s, e = h.start.astype(np.int64), h.end.astype(np.int64)
    # what ran before the first iteration, cut at its start; never a span around the whole first iteration (the loop's
    # own: an epoch's range)
    before = (s < first) & (e < int(found.end[0]))
    if not before.any():
        return ""
    run_s, run_e = union_intervals(s[before], np.minimum(e[before], first))
    nxt = np.append(run_s[1:], first)  # each stretch: from a run of events' end to the next run's start
    gaps = nxt - run_e
    k = int(np.argmax(gaps))
    gap, at = int(gaps[k]), int(nxt[k])
    if gap <= float(np.median(found.end - found.start)):
        return ""
    size = ms(gap / PS_PER_MS)
    after = np.flatnonzero((s >= at) & (s < first))  # what the stretch opens, up to the first iteration
    fetch = next((n for n in (h.names[int(h.name[i])] for i in after[np.argsort(s[after], kind="stable")].tolist())
                  if fw.input_event(n)), None)
    before_what = "the first iteration" if fetch is None else f"the first batch's fetch (`{_short(fetch)}`)"
    why = ("the loader's iterator runs worker processes, which start, unrecorded, when it is made"
           if fetch is not None and fw.parallel_input(fetch) else "unrecorded host time")
    return f"; the {size} before {before_what} hold no recorded event: {why}"


def _opening_forwards(h: HostEvents, best: _Cand, times: np.ndarray, work: str = _LAUNCHED) -> SpanSteps | None:
    """``best``, a span named after a later phase of a pass (a backward, an optimizer step), read as the iterations
    its thread's forward spans open (:func:`forward_iterations`); None where it names no such phase, or its thread
    marks no forward that opens each of its instances' iterations.

    Why: a loop marked only by its phases (``record_function("forward")`` / ``"backward"`` / ``"optimizer"``, no
    ``ProfilerStep``) repeats every phase once an iteration, and the phase holding the most launches is the step
    span -- so the steps opened at the backward (ranks together) or the optimizer (a skewed rank's, holding the others'
    launches by time): per-step numbers right in a steady loop, every boundary a phase late (h37-probe48k *Left* 1).
    An iteration opens at its forward."""
    if best.table != "host event" or best.line < 0 or nvtx.is_forward_range(best.name) or not (
            nvtx.is_backward_range(best.name) or nvtx.is_update_range(best.name)):
        return None
    on = np.flatnonzero((h.line == best.line) & h.per_name(nvtx.is_forward_range)[h.name])
    names, counts = np.unique(h.name[on], return_counts=True)
    for i in np.argsort(-counts, kind="stable").tolist():  # the most repeated forward name first
        fwd = h.names[int(names[i])]
        found = forward_iterations(h, best.line, iteration_names(h, fwd, best.name))
        if found is None:
            continue
        rows, ends = found.rows, found.ends
        starts = h.start[rows].astype(np.int64)
        cov = count_within(times, starts, ends) / max(times.size, 1)  # iterations back to back: a launch once
        note = (f"the program's repeated spans: {rows.size} iterations, each from a `{_short(fwd)}` host event "
                f"through its `{_short(best.name)}` to its last phase's end, enclosing {pct(cov, 0)} of "
                f"{work} (no step markers in the capture)")
        return SpanSteps(fwd, "annotation_spans", starts, ends, cov, "medium", note, phase=best.name)
    return None


class IterationNames(NamedTuple):
    """The names :func:`forward_iterations` reads an iteration by, as bool per name of ``HostEvents.names``
    (:func:`iteration_names`).

    Why apart: each call built its masks afresh, a pass over every name, and ``steps.nvtx_ranges._own_ends`` asks it
    once per rank's line with the same names; a call site builds them once."""

    forward: np.ndarray  # the ``forward`` span's name
    phase: np.ndarray  # the later phase's (a backward, an optimizer step)
    any_phase: np.ndarray  # any pass phase's (``nvtx.is_pass_phase_name``)


class ForwardIterations(NamedTuple):
    """The iterations a thread's forward spans open (:func:`forward_iterations`)."""

    rows: np.ndarray  # host rows of its top-level forward events, each opening one
    ends: np.ndarray  # each iteration's end, ps


def iteration_names(h: HostEvents, forward: str, phase: str) -> IterationNames:
    """:class:`IterationNames` of a ``forward`` span's name and a later ``phase``'s."""
    return IterationNames(np.fromiter((n == forward for n in h.names), bool, len(h.names)),
                          np.fromiter((p == phase for p in h.names), bool, len(h.names)),
                          h.per_name(nvtx.is_pass_phase_name))


def forward_iterations(h: HostEvents, line: int, names: IterationNames) -> ForwardIterations | None:
    """The iterations thread ``line`` marks by its ``forward`` spans and a later ``phase`` (a backward, an optimizer
    step; ``names``: :func:`iteration_names`): the rows of its top-level ``forward`` events, each opening one, and
    each iteration's end (ps) -- its last pass phase's end (``nvtx.is_pass_phase_name``, the ``phase`` among them)
    before the next forward.  None unless every iteration holds a ``phase`` instance that starts once its forward has
    ended, and none runs past the next forward's start: a forward alone (an evaluation's) or phases out of order are
    no such loop."""
    rows = np.flatnonzero((h.line == line) & names.forward[h.name])
    if rows.size < 2:
        return None
    rows = rows[np.lexsort((-h.end[rows].astype(np.int64), h.start[rows].astype(np.int64)))]
    f_s, f_e = h.start[rows].astype(np.int64), h.end[rows].astype(np.int64)
    top = outermost(np.zeros(rows.size, np.int8), f_s, f_e)
    rows, f_s, f_e = rows[top], f_s[top], f_e[top]
    n = rows.size
    p_rows = np.flatnonzero((h.line == line) & names.phase[h.name])
    it = np.searchsorted(f_s, h.start[p_rows].astype(np.int64), side="right") - 1
    mine = it >= 0
    if n < 2 or np.unique(it[mine]).size != n:
        return None
    if held(h.start[p_rows[mine]], h.end[p_rows[mine]], f_e[it[mine]]).any():
        return None  # a phase instance inside its forward: not a phase after it
    any_phase = np.flatnonzero((h.line == line) & names.any_phase[h.name])
    a_it = np.searchsorted(f_s, h.start[any_phase].astype(np.int64), side="right") - 1
    keep = a_it >= 0
    ends = f_e.copy()
    np.maximum.at(ends, a_it[keep], h.end[any_phase[keep]].astype(np.int64))
    if held(f_s[1:], f_e[1:], ends[:-1]).any():
        return None  # a forward inside the iteration before: the loop's phases are no such iterations
    return ForwardIterations(rows, ends)


def work_launch_times(trace: Trace, launches: list[np.ndarray]) -> np.ndarray:
    """The host times (ps, int64, sorted) of the GPU's work as launched: one per kernel or collective, at its launch
    record's start -- where no GPU ran one, one per launch record of any device work (a window of copies).

    Why the work, not the launch records: a span's share of the GPU's work is what makes it the step, and one record
    can start a whole step's kernels (a CUDA graph, an XLA command buffer: ``cuGraphLaunch`` once per execution) while
    a copy is the step's input or its result read back, not its work.  Counted by records, a jitted step as one
    command buffer, its batch put and its loss read back held a third of the launches each, no span reached
    ``job.span_step_coverage`` and the steps fell to GPU bursts (h37-xplane3: 2 JAX steps of ~12 ms read as 0.76 ms
    bursts).  Where every kernel has a launch record of its own and no copy runs, the count is the records' as
    before."""
    h = trace.h
    if not len(h):
        return np.zeros(0, np.int64)
    work = []
    for d, a in zip(trace.devices, launches):
        if a.size and len(d):
            k = ((d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)) & (a >= 0)
            if k.any():
                work.append(a[k])
    if work:  # gathered per GPU and sorted in place: this runs at the analysis's peak (1.8 M launches: 14 MB a copy)
        # a gather is a new array already: no second copy for the dtype, the sort below is in place
        times = (np.concatenate([h.start[w].astype(np.int64, copy=False) for w in work]) if len(work) > 1 else
                 h.start[work[0]].astype(np.int64, copy=False))
        del work
    else:  # no kernel anywhere: each launch record once, by a mask read back in order (np.unique's hash table took
        # 0.4 s on the 1.6 M launch records of a 20 MB dense capture)
        marked = np.zeros(len(h), dtype=bool)
        for a in launches:
            if a.size:
                marked[a[a >= 0]] = True
        times = h.start[marked].astype(np.int64, copy=False)
        del marked
    times.sort(kind="stable")  # a few sorted runs (one per launching thread): timsort merges them, 4x quicksort's speed
    return times


def host_work_times(trace: Trace, launches: list[np.ndarray], fw: Framework) -> np.ndarray:
    """Where the capture holds no GPU work at all (its GPU side unrecorded or never used), the host times (ps, int64,
    sorted) of the framework's top-level ops (``fw.dispatch_event``), each once: the work a repeated span must hold to be
    the job's iteration; empty where any device work was recorded (then the launches weigh the spans) or the framework
    names no op.

    Why: the GPU's launches weigh a span by the work it starts, and a capture whose CUDA side was not recorded holds
    none, though its host marks every iteration (``record_function`` ranges, DataLoader turns) and runs each
    iteration's ops inside them -- its 16 marked batches read as one pass where "nothing repeats" (h37-steps60b:
    ``wild/cuda_unrecorded_cifar_cnn``).  The ops a span encloses stand in for the work it launches."""
    h = trace.h
    if not len(h) or any(len(d) for d in trace.devices) or any(a.size for a in launches):
        return np.zeros(0, np.int64)
    ops = np.flatnonzero(h.name_mask(fw.dispatch_event))
    if not ops.size:
        return ops.astype(np.int64)
    s, e = h.start[ops].astype(np.int64), h.end[ops].astype(np.int64)
    top = outermost_rows(h.line[ops], s, e)  # an op's nested ops are its own work, counted once
    return np.sort(s[top])


def step_end_count(trace: Trace, fw: Framework) -> int:
    """How many optimizer steps (``fw.step_end_event``, nested calls merged) the capture holds: an update runs once per
    training iteration, so the window holds no more whole iterations than this (0: the framework names none, or none
    ran -- no evidence either way)."""
    h = trace.h
    return max((e.size for e in _ends_per_line(h, h.name_mask(fw.step_end_event))), default=0) if len(h) else 0


def _ends_per_line(h, mask: np.ndarray) -> list[np.ndarray]:  # noqa: ANN001 - HostEvents
    """Each thread's ends of the events in ``mask`` (nested or overlapping calls on it merged, :func:`_merged`), ps.

    Why per thread: the ranks of a data-parallel job on one host are processes of their own, and each runs every
    iteration's update -- two processes' optimizer steps are one step of two ranks, not two steps.  Merged over the
    host, they read as twice the steps where the ranks' updates do not overlap, interleaved, each "step" from one
    rank's update to the other's (h37-randjobs: 2 DDP ranks 0.7 ms apart, 9 steps each, read as 16 overlapping steps
    of each rank's GPU)."""
    return list(_ends_by_line(h, mask).values())


def _ends_by_line(h, mask: np.ndarray) -> dict[int, np.ndarray]:  # noqa: ANN001 - HostEvents
    """:func:`_ends_per_line` by host line."""
    line = h.line[mask]
    return {int(ln): _merged(h, mask & (h.line == ln))[1] for ln in np.unique(line).tolist()}


def _merged(h, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001 - HostEvents
    """(starts, ends) of the host events in ``mask``, nested or overlapping calls merged into one, ps.  Calls that only
    touch (one ends where the next begins: a loop of updates back to back) stay two: two updates are two
    iterations."""
    return union_intervals(h.start[mask].astype(np.int64, copy=False), h.end[mask].astype(np.int64, copy=False),
                           merge_touching=False)


def step_end_steps(trace: Trace, fw: Framework) -> SpanSteps | None:
    """Training steps from the event that ends each (``fw.step_end_event``: PyTorch's optimizer step), where no
    marker or span holds the steps -- a PyTorch 1.8 loop without ``prof.step()``: step k runs from the end of the
    (k-1)th optimizer step to the end of the kth, the first from the capture's first host event.  A loop whose work
    the optimizer steps do not divide (two optimizers a step, as a GAN's) reads as twice the steps; hence medium
    confidence.  None with fewer than two step ends."""
    h = trace.h
    if not len(h):
        return None
    m = h.name_mask(fw.step_end_event)
    if int(m.sum()) < 2:
        return None
    by_line = _ends_by_line(h, m)  # nested calls: one step end; each rank's (thread's) own
    per_line = list(by_line.values())
    n = max(e.size for e in per_line)
    if n < 2:
        return None
    first = int(h.start.min())
    floor = trace.window_start_ps()
    # (each thread's first step holds the loop's own lead before its first event, as every later step does)
    firsts = {ln: min(first, first_iteration_start(np.sort(h.start[h.line == ln].astype(np.int64)), e, floor))
              for ln, e in by_line.items()}
    # the kth update of every rank ends step k: the step runs from the first rank's (k-1)th update's end to the last
    # rank's kth, as the ranks' marks of one step number make one step (``steps.windows._group_windows``)
    # (each thread's last step holds its own read-back after its update, as the update before it does in the next step)
    tailed = {ln: _with_last_tail(h, ln, e, firsts[ln]) for ln, e in by_line.items()}
    moved = any(int(t[0][-1]) != int(by_line[ln][-1]) for ln, t in tailed.items())
    tail_from = int(max(int(e[-1]) for e in by_line.values())) if moved else 0
    tail_from_by_line = {int(ln): int(e[-1]) for ln, e in by_line.items()} if moved else {}
    first_head_held = moved and all(t[1] for t in tailed.values())
    by_line = {ln: t[0] for ln, t in tailed.items()}
    starts = np.full(n, np.iinfo(np.int64).max, np.int64)
    ends = np.full(n, np.iinfo(np.int64).min, np.int64)
    for ln, e in by_line.items():
        k = np.arange(e.size)
        np.minimum.at(starts, k, np.concatenate(([firsts[ln]], e[:-1])).astype(np.int64))
        np.maximum.at(ends, k, e.astype(np.int64))
    name = h.names[int(h.name[np.flatnonzero(m)[0]])]
    found = sum(e.size for e in per_line)
    where = f" on {len(per_line)} threads, {n} steps" if len(per_line) > 1 else ""
    note = (f"the training loop's step ends: {found} `{_short(name)}` events{where} (no step markers or step spans in "
            "the capture); each step runs from one optimizer step's end to the next's")
    own = {ln: (np.concatenate(([firsts[ln]], e[:-1])).astype(np.int64), e.astype(np.int64)) for ln, e in by_line.items()}
    return SpanSteps(name, "step_end_events", starts, ends, 1.0, "medium", note, per_line=own, tail_from=tail_from,
                     tail_from_by_line=tail_from_by_line, first_head_held=first_head_held)


def _with_last_tail(h, line: int, ends: np.ndarray, first: int) -> tuple[np.ndarray, bool]:  # noqa: ANN001 - HostEvents
    """A thread's update ends (``ends``, sorted, ps), the last moved to the end of the host's work after it that every
    earlier update is followed by too: the events on ``line`` starting within the least time any earlier update's end
    is from the op of the next kernel launch on the thread (the next iteration's first): the last step runs to the end of
    that work (its read-back, as each earlier step's successor holds it), never past that time or a later launch.

    Why: a step read from one update's end to the next holds, after its own update, nothing of its iteration: the host's
    work after each update -- the loss's ``.item()``, a metric's read-back -- lies in the next step, and the last
    iteration's in none.  Steps tiled so are each the period where the host's work repeats, but the first holds no
    read-back before it (none ran) and the last's is dropped, so their mean falls short by one read-back over the
    steps (h37-randjobs13's ``--forms7`` seed 6024: a compiled loop's 64 us ``.item()`` after each of 5 updates,
    0.2272 of 0.232 ms; now 0.2300, the loop's untraced turn after each read-back left out).  Only the time every
    earlier iteration shows before its next kernel launch is the last's own: a partial iteration after it launches
    within it no sooner than the others did; a loop that ended at its last update records nothing after it, and its
    last step is left as read.  Recorded work only, never that whole time: after the last read-back the loop may
    have ended (``--forms5`` seed 6223: 0.6 ms between each read-back and the next op that launches, no step's).

    Also whether the first step (from ``first``, ps) already holds that work at its head: from its start to its first
    launch's op at least the least time every later step shows there.  Then the first step holds the read-back of an
    iteration before the capture, every step holds one, and the last's own is one too many (``SpanSteps.
    first_head_held``; ``steps.drop._untail_last`` undoes the move where the first step kept holds it)."""
    if ends.size < 2:
        return ends, False
    on = h.line == line
    st = h.start[on].astype(np.int64, copy=False)
    en = h.end[on].astype(np.int64, copy=False)
    launch = np.sort(st[h.name_mask(devices.is_launch_call)[on]])
    if not launch.size:
        return ends, False
    # each launch's op: the start of the outermost run of the thread's events around it (its Python's call)
    bs, _ = union_intervals(st, en, merge_touching=False)
    op = bs[np.searchsorted(bs, launch, side="right") - 1]
    nxt = np.searchsorted(launch, ends, side="left")
    if (nxt[:-1] >= launch.size).any():
        return ends, False
    tail = int((np.maximum(op[nxt[:-1]], ends[:-1]) - ends[:-1]).min())
    head = np.searchsorted(launch, first, side="left")  # the first step's first launch, its op's start
    held = bool(tail > 0 and head < launch.size and int(op[head]) - first >= tail and int(op[head]) < int(ends[0]))
    last = int(ends[-1])
    after = (st >= last) & (st < last + tail)
    stop = min(last + tail, max(int(op[nxt[-1]]), last)) if nxt[-1] < launch.size else last + tail
    out = ends.astype(np.int64, copy=True)
    out[-1] = max(last, int(np.minimum(en[after], stop).max(initial=last)))
    return out, held


def first_iteration_start(starts: np.ndarray, ends: np.ndarray, floor: int) -> int:
    """The first iteration's start on a thread whose events start at ``starts`` (sorted) and whose iterations end at
    ``ends`` (sorted): its first event less the lead every later iteration shows between the previous one's end and
    its own first event (the least of them), never before ``floor`` (the capture window's start).

    Why: each later step runs from the previous iteration's end, so it holds the loop's own work before its first
    recorded event (waiting for its batch, a CPU environment's step in untraced Python); a first step from the
    capture's first event alone left that work out -- framework ranges: 7.43 of 9.43 ms where the loop waits 2 ms for
    its DataLoader (h37-randjobs12, walk seed 84); optimizer steps: an RL loop's 4.65 ms environment step before each
    update, 3 steps read 3.37 of 4.92 ms (h37-randjobs13, ``--forms13`` walk seed 256)."""
    after = np.searchsorted(starts, ends[:-1], side="left")
    ok = after < starts.size
    leads = starts[after[ok]] - ends[:-1][ok]
    lead = int(leads.min()) if leads.size else 0
    return max(int(starts[0]) - max(lead, 0), min(floor, int(starts[0])))


def backward_span_steps(trace: Trace, launches: list[np.ndarray], fw: Framework) -> SpanSteps | None:
    """Training steps from the span that opens each iteration, where no span holds most of the GPU work and no
    optimizer step ends one: a ``torch.compile``d forward + backward loop profiled without a schedule, whose
    ``prof.step()`` writes no ``ProfilerStep#N`` (Wings236/model_inference, h37-survey16).

    Why: the forward's span (``Torch-Compiled Region``, a user's ``forward``) holds only the forward's launches --
    autograd runs the backward on its own thread after it -- so it misses :func:`span_steps`' coverage, and the host's
    Python between forward and backward splits each iteration into GPU bursts.  Every iteration runs a backward
    (``fw.training_event``), so a repeated span each of whose tiles (one instance to the next, the last to the end of
    the backward after it) holds a backward, and whose tiles hold the launches, opens the iterations.  A per-layer
    span fails it (most of its tiles hold no backward); the fewest instances win, then the longest.  None where the
    window holds at most one update (``step_end_count``: it is one iteration, its micro-batches no steps), and where the
    capture marks its steps itself (``fw.step_marker``)."""
    h = trace.h
    if not len(h) or step_end_count(trace, fw) or h.name_mask(fw.step_marker).any():
        return None  # the format's own step marks win anyway: no search over a marked capture's spans
    times = work_launch_times(trace, launches)
    if not times.size:
        return None
    trained = h.name_mask(fw.training_event)
    if not trained.any():
        return None
    t_start = h.start[trained].astype(np.int64, copy=False)
    t_end = h.end[trained].astype(np.int64, copy=False)
    order = np.argsort(t_start, kind="stable")
    t_start, t_end = t_start[order], t_end[order]
    # the framework's dispatch is kept: the compiled forward's region is what opens a compiled loop's iteration
    keep = ~h.name_mask(_runtime_call) & (np.asarray(h.corr) < 0) & ~_tool_ranges(trace)
    # outermost, a backward's own ops never: an inner name repeats under different outer ones (two compiled functions)
    keep &= _outermost(h, keep) & ~trained
    calls = model_calls(trace, fw)
    best: tuple[tuple[int, int], _Cand] | None = None
    for c in _candidates("host event", h.start, h.end, h.name, h.line, h.names, keep, times):
        if c.count < 2 or within_one_call(c.start, c.end, calls):
            continue
        tiles = _backward_tiles(c, t_start, t_end)
        if tiles is None:
            continue
        s, e = tiles
        cov = float(np.searchsorted(times, e[-1], side="right") - np.searchsorted(times, s[0], side="left")) / times.size
        if cov < T("job.span_step_coverage"):
            continue
        key = (c.count, -c.total)
        if best is None or key < best[0]:
            best = (key, _Cand(c.name, c.table, s, e, cov))
    if best is None:
        return None
    c = best[1]
    note = (f"the program's repeated spans: {c.count} `{_short(c.name)}` {c.table}s, each opening a training iteration "
            f"(a backward pass runs before the next), enclosing with it {pct(c.coverage, 0)} of the GPU work's "
            "launches (no step markers in the capture)")
    return SpanSteps(c.name, "annotation_spans", c.start, c.end, c.coverage, "medium", note)


def _outermost(h, keep: np.ndarray) -> np.ndarray:  # noqa: ANN001 - HostEvents
    """Bool per host event: kept and inside no other kept event of its thread (``model.columns.outermost``: held only
    where mostly inside).  Why: an inner name repeats under different outer ones (``CompiledFunction`` inside each
    compiled function's own ``Torch-Compiled Region: N/0``), so its repeats are not one span's.  Why not "starts
    before an earlier one ended": Kineto's times are rounded (microseconds to three decimals, ~1 ns at a 2.x trace's
    4.5e12 us), so a region opening where the op before it ended can start a nanosecond before that op's end, and
    was read as inside it -- no instance of its span."""
    idx = np.flatnonzero(keep)
    out = np.zeros(keep.size, dtype=bool)
    out[idx[outermost_rows(np.asarray(h.line)[idx], h.start[idx], h.end[idx])]] = True
    return out


def _backward_tiles(c: _Cand, t_start: np.ndarray, t_end: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(starts, ends) of the tiles of ``c``'s instances -- one instance's start to the next's, the last to the end of
    the training events (``t_start``/``t_end``, sorted by start) that start in it -- where every tile holds the start
    of a training event; else None."""
    s = c.start.astype(np.int64, copy=False)
    lo = np.searchsorted(t_start, s, side="left")
    hi = np.append(np.searchsorted(t_start, s[1:], side="left"), t_start.size)
    if not bool((hi > lo).all()):
        return None
    last_end = max(int(c.end[-1]), int(t_end[lo[-1]:].max()))
    return s, np.append(s[1:], last_end).astype(np.int64)


def model_calls(trace: Trace, fw: Framework) -> tuple[np.ndarray, np.ndarray]:
    """The outermost calls of the user's model (``fw.model_call`` spans, nested ones merged), ps."""
    parts = []
    h = trace.h
    if len(h):
        m = h.name_mask(fw.model_call)
        if m.any():
            parts.append((h.start[m], h.end[m]))
    sp = trace.spans
    if sp is not None and len(sp):
        per = np.fromiter((bool(fw.model_call(n)) for n in h.names), dtype=bool, count=len(h.names))
        if per.any():
            m = per[sp.name]
            parts.append((sp.start[m], sp.end[m]))
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return union_intervals(np.concatenate([p[0] for p in parts]).astype(np.int64),
                           np.concatenate([p[1] for p in parts]).astype(np.int64))


def within_one_call(start: np.ndarray, end: np.ndarray, calls: tuple[np.ndarray, np.ndarray]) -> bool:
    """Two or more of the windows ``[start, end]`` lie inside one model call (:func:`model_calls`): they are the
    model's own structure (its layers), never steps -- a step holds whole model calls."""
    cs, ce = calls
    if not cs.size or start.size < 2:
        return False
    k = np.searchsorted(cs, start, side="right") - 1
    inside = (k >= 0) & (end <= ce[np.clip(k, 0, None)])
    ks = k[inside]
    return bool(ks.size) and bool((np.bincount(ks) >= 2).any())


def layer_range_families(trace: Trace) -> dict[int, str]:
    """The user's ranges that a framework or program opens per layer: name id -> its layer family
    (``frameworks.nvtx.layer_family``), a step's own name never one (``train_step 3`` counts a loop).  Why one home:
    the job stage reads a launch period's repeats as layers and the steps stage a burst's layers by the same names."""
    rg, h = trace.ranges, trace.h
    family: dict[int, str] = {}
    if rg is None or not rg.idx.size:
        return family
    for nid in np.unique(h.name[rg.idx]).tolist():
        f = nvtx.layer_family(h.names[nid])
        if f is not None and not nvtx.is_step_name(h.names[nid]):
            family[nid] = f
    return family


def layer_passes(trace: Trace, steps: SpanSteps) -> SpanSteps | None:
    """``steps`` (a launch period's repeats, host windows) read again where they are a model's layers, not its steps:
    each window overlaps the user's ranges of one layer family (``frameworks.nvtx.layer_family``: ``layer_#_forward``,
    ``model.layers.#``) of ONE layer only, three layers or more are met -- where a loop's iteration runs every layer in
    its one window.  Then the passes are the runs of windows from one window of the first layer met to the next, each
    running the same layers; returned as ``steps`` of those passes (an empty one where the window holds a single
    pass: no period, one pass).  None where the repeats are not layers.

    Why: a weight-streaming demo's one forward of 8 layers (``layer_0_forward`` ... ``layer_7_forward``, each after a
    simulated 51 ms load of its weights) repeats the same launch sequence once per layer, each after the host waited:
    the period read 8 "steps" of 64.9 ms, each a layer (Sh1mwww/llama3-inference ``demo.sqlite``, h37-huntnsys63) --
    as h37-nvtx62 found GPU bursts cutting an FSDP forward at its layers."""
    rg = trace.ranges
    start, end = np.asarray(steps.start, np.int64), np.asarray(steps.end, np.int64)
    if rg is None or start.size < 3 or not rg.idx.size:
        return None
    h = trace.h
    family = layer_range_families(trace)
    for f in dict.fromkeys(family.values()):
        ranged = rg.idx[np.isin(h.name[rg.idx], [nid for nid, g in family.items() if g == f])]
        rs, re_ = h.start[ranged].astype(np.int64), h.end[ranged].astype(np.int64)
        # the windows each range overlaps (touching edges are no overlap: tiled windows meet end to start)
        first = np.searchsorted(end, rs, side="right")
        last = np.searchsorted(start, re_, side="left") - 1
        layer_of: dict[int, set[int]] = {}  # window -> the layers (name ids) whose ranges overlap it
        for nid, a, z in zip(h.name[ranged].tolist(), first.tolist(), last.tolist()):
            for w in range(a, z + 1):
                layer_of.setdefault(w, set()).add(int(nid))
        if len(layer_of) != start.size or any(len(v) != 1 for v in layer_of.values()):
            continue
        layers = [next(iter(layer_of[w])) for w in range(start.size)]
        if len(set(layers)) < 3:
            continue
        opens = [w for w, nid in enumerate(layers) if nid == layers[0]]
        runs = [set(layers[a:z]) for a, z in zip(opens, [*opens[1:], len(layers)])]
        if len(opens) < 2 or any(r != runs[0] for r in runs):  # one pass, or passes that run other layers
            return dataclasses.replace(steps, start=start[:0], end=end[:0])
        ends = np.array([end[z - 1] for z in [*opens[1:], len(layers)]], np.int64)
        return dataclasses.replace(
            steps, start=start[opens], end=ends,
            note=f"{steps.note}; each of the {len(opens)} passes is {len(runs[0])} of those repeats, one per layer of "
                 f"`{f}` (each repeat runs one layer: a loop's iteration runs them all)")
    return None


def module_executions(h: HostEvents, proc: np.ndarray | None = None,
                      programs: np.ndarray | None = None) -> tuple[np.ndarray, list[str]] | None:
    """Per host event, the id of the compiled XLA module it executes (``xla.module_execution``: XPlane's
    ``<module>:XLA GPU module``, Nsight's ``XlaModule:#hlo_module=<module>,...#``), -1 for none, and the modules by id;
    None where the capture names none.  One home for the job's program spans and the steps' XLA launch reading.

    A module name whose executions name two or more programs that run in a fixed cycle in one process (``proc``: each
    host line's process, ``model.trace.line_processes``; None: one) is read program by program, each keyed as the
    profiler names it (``jit_step(9)``: ``xla.program_key``; :func:`_cycled_modules`).  An execution's program is its
    Nsight range's ``program_id``, or, for XPlane's events, which name none, ``programs`` (per host event, -1 none:
    :func:`executed_programs`, the program its kernels carry).  Why: JAX compiles one name into a program per input
    shape, and each runs its own work -- a jitted function called on the training batch and then on an evaluation
    batch each iteration is two programs an iteration, where one name read every execution as a step (two steps an
    iteration, each half of one).  Programs that ran one after the other are one module recompiled (a new input shape
    mid-window, a last partial batch), and programs called in no fixed order are one function's calls on bucketed
    input shapes (sequences padded to one of several lengths, in data order): each execution is still a call of the
    one step."""
    module_of = [xla.module_execution(n) for n in h.names]
    if not any(m is not None for m in module_of):
        return None
    prog = _event_programs(h, programs)
    split = _cycled_modules(h, proc, module_of, prog)
    ids: dict[str, int] = {}
    of_name = np.array([-1 if m is None or m in split else ids.setdefault(m, len(ids)) for m in module_of],
                       dtype=np.int64)
    ev = of_name[h.name]
    for m, roles in sorted(split.items()):  # a split name's events keyed by their program's role (:func:`_role_key`)
        own = np.flatnonzero(np.array([x == m for x in module_of], dtype=bool)[h.name])
        ran, at = np.unique(prog[own], return_inverse=True)
        key = np.array([ids.setdefault(_role_key(m, p, roles), len(ids)) for p in ran.tolist()])
        ev[own] = key[at.reshape(-1)]
    return ev, list(ids)


def executed_programs(trace: Trace, launched: Callable[[], list[np.ndarray]]) -> np.ndarray | None:
    """Per host event, the program an XPlane ``<module>:XLA GPU module`` execution ran: the one program of its module
    its kernels name (op text ``jit_step(9)/dot.1``, from their ``program_id``), the kernels of the launch records it
    holds on its own line; -1 elsewhere (no kernel tied, kernels of several programs).  None where no kernel names a
    program -- a name's programs are named only where their work differs (``formats.xplane.adapter.split_modules``),
    and ``launched`` (per GPU, each device event's launch record) is then never asked for.

    Why: XPlane's execution event names the module, never the program (real-h100-jax: the event carries no stat; the
    ``PjRtLoadedExecutable::Execute`` around it only a ``run_id`` and the module's name), while every kernel it
    launches carries its program's ``program_id`` -- the evidence Nsight's ranges state outright.  Read by name, a step
    called on the training batch and then on an evaluation batch each iteration was two steps an iteration.  ROCm's
    launches run on a line of their own, held by no execution: untied, as before."""
    h = trace.h
    texts = [_op_programs(d.op_text) for d in trace.devices]
    if not any((t >= 0).any() for t in texts):
        return None
    mask = h.name_mask(lambda n: n.endswith(xla.GPU_MODULE_SUFFIX))
    if not mask.any():
        return None
    enc = Encloser(h, mask)
    held, named = [], []
    for d, launch, text in zip(trace.devices, launched(), texts):
        sel = np.flatnonzero((launch >= 0) & (d.op_idx >= 0))
        sel = sel[text[d.op_idx[sel]] >= 0]
        ex = enc.find(launch[sel].astype(np.int64, copy=False)).astype(np.int64)
        ok = ex >= 0
        held.append(ex[ok])
        named.append(text[d.op_idx[sel[ok]]])
    out = np.full(len(h), -1, np.int64)
    if not sum(x.size for x in held):
        return out
    pairs = np.unique(np.stack([np.concatenate(held), np.concatenate(named)]), axis=1)  # (execution, program) once
    ex, first, count = np.unique(pairs[0], return_index=True, return_counts=True)
    out[ex[count == 1]] = pairs[1][first[count == 1]]
    return out


def _op_programs(op_text: list[str]) -> np.ndarray:
    """Per op text of a GPU: the program id its XLA op names (``jit_step(9)/dot.1:dot`` -> 9), -1 for none."""
    named = [xla.program_of(xla.module_op(t).partition("/")[0]) for t in op_text]
    return np.array([p[1] if p else -1 for p in named] or [-1], np.int64)


def _role_key(module: str, program: int, roles: dict[int, int]) -> str:
    """The key of a split name's execution of ``program``: the program's as the profiler names it (``jit_step(9)``),
    the module's where none is known (-1); a program recompiled in another's place (``roles``: :func:`_recompiled`)
    is keyed with all of its place's programs, first to last (``jit_step(7, 11)``)."""
    if program < 0:
        return module
    first = roles.get(program, program)
    chain = [first, *(p for p, r in roles.items() if r == first)]  # in the order they took the place
    if len(chain) == 1:
        return xla.program_key(module, program)
    return f"{module}({', '.join(str(p) for p in chain)})"


def _event_programs(h: HostEvents, programs: np.ndarray | None) -> np.ndarray | None:
    """Per host event, the program it runs: its Nsight XLA range's ``program_id`` (``xla.nvtx_program``), else
    ``programs``' (XPlane: :func:`executed_programs`); -1 for none.  None where no event names one (no column over
    a long capture's events for nothing)."""
    by_name = np.array([-1 if (p := xla.nvtx_program(n)) is None else p for n in h.names] or [-1], np.int64)
    if (by_name < 0).all():
        return programs
    out = by_name[h.name] if len(h) else np.zeros(0, np.int64)
    return out if programs is None else np.where(out >= 0, out, programs)


def _cycled_modules(h: HostEvents, proc: np.ndarray | None, module_of: list[str | None],
                    prog: np.ndarray | None) -> dict[str, dict[int, int]]:
    """The module names (``module_of``: each host event name's, :func:`module_executions`) whose executions name two
    or more programs (``prog``: each event's, :func:`_event_programs`) that run in a fixed cycle in one process
    (:func:`_program_cycle`), each with its recompiled programs' roles (:func:`_recompiled`).  Why per process:
    program ids are each process's own count, and ranks running at once put one rank's program between another's
    runs without either recompiling."""
    if prog is None:
        return {}
    ev = np.flatnonzero(prog >= 0)  # the executions that name a program: a few of a long capture's events
    if not ev.size:
        return {}
    number: dict[str, int] = {}
    mod_of_name = np.array([-1 if m is None else number.setdefault(m, len(number)) for m in module_of], np.int64)
    ev_module = mod_of_name[h.name[ev]]
    keep = ev_module >= 0
    ev, ev_module = ev[keep], ev_module[keep]
    ev_prog = prog[ev]
    ev_proc = np.zeros(len(ev), np.int64) if proc is None else proc[h.line[ev].astype(np.int64)]
    start = h.start[ev]
    out: dict[str, dict[int, int]] = {}
    for m, k in sorted(number.items()):
        mine = ev_module == k
        if np.unique(ev_prog[mine]).size < 2:
            continue
        for pr in np.unique(ev_proc[mine]).tolist():
            own = np.flatnonzero(mine & (ev_proc == pr))
            roles = _program_cycle(ev_prog[own[np.argsort(start[own], kind="stable")]])
            if roles is not None:
                out[m] = roles
                break
    return out


def _program_cycle(seq: np.ndarray) -> dict[int, int] | None:
    """Where one process's sequence of a name's program ids (``seq``, in start order) repeats in a fixed cycle, each
    program recompiled in another's place mapped to its place's first program (:func:`_recompiled`; {} for none);
    None where it repeats in none.  A cycle: a period of two or more calls that holds two or more programs:
    ``seq[i] == seq[i + p]`` (to one call in ten), a partial cycle allowed at either end, at least two cycles' worth
    of calls (``p <= len(seq) / 2``); the smallest such period.

    Why a fixed cycle, not programs that merely interleave: a training and an evaluation program called in turn
    each iteration (or an evaluation every N training calls) run in the same order every cycle -- the loop's code
    fixes it -- while bucketed input shapes (each padding length its own program) are called in data order, which
    repeats in no period: read program by program, the most-run bucket's calls became the steps (a third of 30
    calls in 3 buckets, h37-xla68c).  Programs run one after the other (a recompile mid-window, a shape that came
    back, a last partial batch's own program) repeat in no period either: one step per call (h37-xla68b).
    Round-robin buckets (7, 8, 9, 7, 8, 9 ...) are a fixed cycle and read as one iteration a cycle: the order alone
    cannot tell them from a loop that calls three shapes each iteration, and a loop's fixed order is the common one.
    The period holds where at most one call in ten differs from the call a period before: train + eval in turn and
    then a last partial batch's own program with its eval is still the train + eval cycle (read exactly, it repeated
    in no period: each of its calls a step, twice the iterations), while calls in data order differ from the call a
    period before about as often as they differ at all (two in three, for three buckets).  Where the period found
    holds one program, the few calls that differ are a cycle of their own only where they recur in a longer period
    (:func:`_rare_cycle`: an evaluation every 20th training call)."""
    n = seq.size
    ids, d = np.unique(seq, return_inverse=True)  # dense program numbers, for :func:`_recompiled`
    d = d.reshape(-1)
    first, last = _first_last(d, ids.size)
    successive = bool((last[:, None] < first[None, :]).any())  # some program's calls all before another's
    for p in range(1, n // 2 + 1):
        place = _recompiled(d, p, first, last) if successive else None
        r = place[d] if place is not None else d
        missed = _missed(r, p)
        if missed <= n // 10:  # a stray call or two break no cycle
            if np.unique(r[:p]).size < 2 and not _rare_cycle(seq, p, missed):
                return None
            moved = sorted(np.flatnonzero(place != np.arange(ids.size)).tolist() if place is not None else [],
                           key=lambda k: first[k])  # in the order they took their place
            return {int(ids[k]): int(ids[place[k]]) for k in moved}
    return None


def _first_last(d: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each of ``k`` dense program numbers' first and last position in ``d``."""
    at = np.arange(d.size)
    first = np.full(k, d.size, np.int64)
    np.minimum.at(first, d, at)
    last = np.full(k, -1, np.int64)
    np.maximum.at(last, d, at)
    return first, last


def _recompiled(d: np.ndarray, p: int, first: np.ndarray, last: np.ndarray) -> np.ndarray | None:
    """Per program of ``d`` (a sequence of dense program numbers; ``first``/``last``: each one's first and last
    call), the first program of the place in the cycle it plays at period ``p`` -- itself, unless it took another's
    place ``p`` calls later with each call of the other before its first (a recompile: a new input shape) --; None
    where none took another's, or the replacements are not one to one.

    Why: a train and an evaluation program called in turn, both recompiled for a new batch shape mid-window (7, 9 x4,
    then 11, 13 x6), repeat in no period program by program: each call read as a step, twice the iterations, or --
    read program by program where the slack let it cycle -- the most-run program's calls (6 steps of 10).  Each
    recompiled program plays its predecessor's part in the cycle (h37-xla68c left 1)."""
    a, b = d[: d.size - p], d[p:]
    diff = a != b
    if not diff.any():
        return None
    x, y = a[diff], b[diff]
    took = last[x] < first[y]
    if not took.any():
        return None
    k = first.size
    seen = np.zeros(k * k, bool)  # each (program, program that took its place) once: k is a name's few programs
    seen[x[took] * k + y[took]] = True
    pairs = np.flatnonzero(seen)
    old, new = pairs // k, pairs % k
    if np.unique(old).size < old.size or np.unique(new).size < new.size:
        return None  # one program followed by two, or two by one: no replacement says which part each plays
    place = np.arange(k)
    then = dict(zip(old.tolist(), new.tolist()))
    for s in sorted(set(then) - set(new.tolist()), key=lambda q: first[q]):  # each chain from its first program on
        q = then[s]
        while True:
            place[q] = s
            if q not in then:
                break
            q = then[q]
    return place


def _missed(seq: np.ndarray, p: int) -> int:
    """How many calls of ``seq`` differ from the call ``p`` before them."""
    return int((seq[p:] != seq[: seq.size - p]).sum())


def _rare_cycle(seq: np.ndarray, first: int, missed: int) -> bool:
    """Whether the few calls that differ from one program's (``missed`` calls differ from the call ``first`` before,
    within :func:`_program_cycle`'s slack) recur in a period of their own: a longer period ``p`` (at most half the
    calls, holding two or more programs) where at most a quarter as many calls differ from the call ``p`` before.

    Why: an evaluation after every 20th training call is one call in 21, inside the slack of one program's "stray
    calls" -- read as one module, each evaluation was a step too (42 steps for 40, h37-xla68c left 1).  A program
    that recurs in a fixed period matches itself a period later, leaving only the stray calls to differ (each
    evaluation left two at period one: the call into it and the call out of it); calls at no period -- a one-off, a
    last partial batch's program, a shape that comes and goes -- differ at every period about as often as at one (a
    program run once differs from the call a period before or after it at any period up to half the calls)."""
    for p in range(first + 1, seq.size // 2 + 1):
        if 4 * _missed(seq, p) <= missed and np.unique(seq[:p]).size > 1:
            return True
    return False


def _module_runs(trace: Trace) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The host's executions of compiled XLA modules (``xla.module_execution``), as (starts ps, ends ps, module ids),
    sorted by start; None where the capture names none."""
    h = trace.h
    of = module_executions(h, line_processes(trace))
    if of is None:
        return None
    ev = of[0]
    sel = np.flatnonzero(ev >= 0)
    sel = sel[np.argsort(h.start[sel], kind="stable")]
    return h.start[sel].astype(np.int64), h.end[sel].astype(np.int64), ev[sel]


def _named_module_runs(trace: Trace, fw: Framework) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The outermost calls of the modules the capture names (``fw.named_module``: PyTorch ``with_modules``'
    ``nn.Module: <Class>_<n>``), per thread, as (starts ps, ends ps, module ids) sorted by start; None where it names
    none.  A module's call is the program it runs, as an XLA execution's module is (:func:`_same_programs`).

    Why: ``with_stack``'s ``Module._call_impl`` frame is the same span for every module, so one pass of a pipeline of
    four models -- a diffusion pipeline's two text encoders, its transformer and its VAE -- repeats it four times, each
    a different model: an xDiT Flux.1 capture (survey h37-survey37) was timed as three steps of 20.6 ms, the mean of
    three different models' forwards."""
    h = trace.h
    names = h.names
    if not len(names):
        return None
    ids: dict[str, int] = {}
    of_name = np.array([ids.setdefault(m, len(ids)) if (m := fw.named_module(n)) else -1 for n in names],
                       dtype=np.int64)
    if not ids:
        return None
    parts = []
    sources = [(h.start, h.end, h.name, h.line)] if len(h) else []
    sp = trace.spans
    if sp is not None and len(sp):
        sources.append((sp.start, sp.end, sp.name, sp.line))
    for st, en, nm, ln in sources:
        sel = np.flatnonzero(of_name[np.asarray(nm)] >= 0)
        if sel.size:
            parts.append((np.asarray(st)[sel].astype(np.int64), np.asarray(en)[sel].astype(np.int64),
                          of_name[np.asarray(nm)[sel]], np.asarray(ln)[sel].astype(np.int64)))
    if not parts:
        return None
    s, e, mods, line = (np.concatenate([p[i] for p in parts]) for i in range(4))
    order = np.lexsort((-e, s, line))
    s, e, mods, line = s[order], e[order], mods[order], line[order]
    top = outermost(line, s, e)  # the calls no call before them on their thread holds (rounded times: its rule)
    s, e, mods = s[top], e[top], mods[top]
    order = np.argsort(s, kind="stable")
    return s[order], e[order], mods[order]


#: Instances of a span read for the programs they run (:func:`_same_programs`): the first this many.
_PROGRAM_SAMPLE = 256


def _same_programs(c: _Cand, runs: tuple[np.ndarray, np.ndarray, np.ndarray] | None) -> bool:
    """Whether the instances of a repeated span run the same compiled programs, as iterations of one loop do.

    Where the capture names the XLA module each execution runs, an instance runs the modules whose executions it
    overlaps (holds, or lies in).  A span whose instances mostly run different modules is no iteration: the runtime's
    ``PjRtCApiLoadedExecutable::Execute`` around each of four different solvers run once each, or one thunk
    (``while.13``) of two modules that share its name, is one execution each -- the modules themselves are judged by
    ``steps.detect``'s module source.  Instances that overlap no named execution say nothing.

    Why: survey h37-survey32's JAX 0.10 logdir (four jitted solvers, one call each) was timed as three steps of 790 us
    -- the mean of three different programs.  And a pipeline's ``Module._call_impl`` frames around its text encoders,
    its transformer called 5 times (the denoising loop) and its VAE were 8 "steps", most of them the transformer's
    (h37-randjobs7): an instance that runs none of the programs most instances run is a call of another program, so
    the span marks no loop's iterations (the transformer's own ``nn.Module:`` span does)."""
    if runs is None:
        return True
    starts, ends, mods = runs
    reach = np.maximum.accumulate(ends)  # the latest end so far: executions before the first reaching past s end by s
    sets = []
    for s, e in zip(c.start[:_PROGRAM_SAMPLE].tolist(), c.end[:_PROGRAM_SAMPLE].tolist()):
        lo = int(np.searchsorted(reach, s, side="right"))
        hi = int(np.searchsorted(starts, e, side="right"))
        ov = lo + np.flatnonzero(ends[lo:hi] > s)
        if ov.size:
            sets.append(frozenset(mods[ov].tolist()))
    if len(sets) < 2:
        return True
    loop = max(set(sets), key=sets.count)
    # most instances run one set of programs, and every instance runs one of them: an iteration may run more (a
    # logging call now and then), never none of the loop's -- a pipeline's call of another model is no iteration
    return 2 * sets.count(loop) > len(sets) and all(x & loop for x in sets)


def _result(c: _Cand, source: str, confidence: str, what: str, work: str = _LAUNCHED) -> SpanSteps:
    # one event is one ("1 `step[DECODE bs=32]` host event", h37-review14: "host events" of one)
    note = (f"{what}: {c.count} `{_short(c.name)}` {c.table}{'' if c.count == 1 else 's'} enclosing {pct(c.coverage, 0)} of "
            f"{work} (no step markers in the capture)")
    return SpanSteps(c.name, source, c.start, c.end, c.coverage, confidence, note)


_RUNTIME = re.compile(r"^(cuda|cu|hip|nccl|rccl|cudnn|cublas|miopen|rocblas)[A-Z_]")


def _tool_ranges(trace: Trace) -> np.ndarray:
    """Bool per host event: a marked range that is a framework's op (autograd NVTX, PyProf / DLProf's op ranges) or
    a library's or an annotation tool's own range, by its name or NVTX domain (``frameworks.user_ranges``) -- never
    the program's step.  A forward pass of two convolutions annotated by DLProf repeats ``pyprof::conv2d`` twice: a
    layer, not two steps."""
    h = trace.h
    out = np.zeros(len(h), dtype=bool)
    r = trace.ranges
    if r is None or not r.idx.size:
        return out
    out[r.idx] = r.op | user_ranges.library_range_mask(h, r)
    return out


def _runtime_call(name: str) -> bool:
    """A runtime, driver or library call: it launches or waits, it is never a step."""
    return bool(_RUNTIME.match(name)) or devices.is_sync_call(name)


def _candidates(table: str, start: np.ndarray, end: np.ndarray, name: np.ndarray, line: np.ndarray, names: list[str],
                keep: np.ndarray, times: np.ndarray, need: float = 0.0) -> list[_Cand]:
    """Per span name among the longest-running ones: its instances (on the thread whose instances hold the most
    launches, by time) and the share of all launches (``times``, sorted) they hold.

    A line whose instances cannot hold ``need`` of the launches is not counted exactly: it can never be a step
    span (:func:`span_steps` keeps only those that reach ``need``), and bounding it first by the launches' time bins
    (:class:`_LaunchBins`) is arithmetic -- on a dense capture, 1.8 M launch times searched by a few hundred
    thousand op instances were a tenth of the whole analysis."""
    n_launch = times.size
    if not start.size or not keep.any():
        return []
    bins = _LaunchBins(times) if need > 0 and n_launch else None
    total = _time_per_name(start, end, name, keep, len(names))
    top = np.argsort(-total)[:_CANDIDATES]
    top = top[: int(np.count_nonzero(total[top] > 0))]  # the loop stopped at the first name without time
    if not top.size:
        return []
    # the instances of the top names only, grouped by (name, line) in one stable sort: each group keeps the events'
    # own order, as the masks ``keep & (name == i) & (line == ln)`` it replaces (48 full-length masks per line)
    is_top = np.zeros(total.size, dtype=bool)
    is_top[top] = True
    rows = np.flatnonzero(keep & is_top[name]).astype(np.int32 if start.size < 2**31 else np.int64)
    ln_all = line[rows].astype(np.int64, copy=False)
    lo = int(ln_all.min())
    span = int(ln_all.max()) - lo + 1
    # int32 keys where they fit: this runs at the analysis's peak (the trace and the launch records alive)
    key_t = np.int32 if total.size * span < 2**31 else np.int64
    key = name[rows].astype(key_t)
    key *= key_t(span)
    ln_all -= lo
    key += ln_all.astype(key_t)
    del ln_all
    order = stable_order(key)  # a few hundred distinct keys: sorted by their ranks' radix
    rows, key = rows[order], key[order]
    del order
    bounds = np.flatnonzero(np.diff(key)) + 1
    first = np.concatenate(([0], bounds))
    last = np.concatenate((bounds, [key.size]))
    group_name = key[first] // span
    # a line whose instances, as they are (nested ones each counted), cannot hold ``need`` of the launches cannot
    # once merged either: bounded for every line at once, before any line's gather and union
    reach = bins.each_at_most(start, end, rows, first) >= need * n_launch if bins is not None else None
    out = []
    for i in top:
        best = None
        a, b = np.searchsorted(group_name, [i, i + 1])
        for g in range(int(a), int(b)):  # the name's lines, in ascending order
            if reach is not None and not reach[g]:
                continue
            mm = rows[first[g] : last[g]]
            # nested or overlapping instances are one call; instances that only touch are two, as two back-to-back
            # updates are two iterations (``_merged``): a loop's ranges end where the next opens at the clock's
            # resolution (a whole microsecond in Kineto's older traces), and merged they read as one span of the
            # whole loop (h37-randjobs: 14 back-to-back `forward_pass` ranges, read as one pass)
            s, e = union_intervals(start[mm].astype(np.int64, copy=False), end[mm].astype(np.int64, copy=False),
                                   merge_touching=False)
            has = np.searchsorted(times, e, side="right") - np.searchsorted(times, s, side="left") > 0
            cov = count_within(times, s, e) / n_launch  # calls back to back: the launch where they meet once
            if best is None or cov > best.coverage:
                best = _Cand(names[int(i)], table, s[has], e[has], cov, int(key[first[g]] % span) + lo)
        if best is not None and best.count:
            out.append(best)
    return out


#: Events summed at a time by :func:`_time_per_name`.
_CHUNK = 1 << 18


def _time_per_name(start: np.ndarray, end: np.ndarray, name: np.ndarray, keep: np.ndarray, n_names: int) -> np.ndarray:
    """Total duration (ps, float) of the ``keep`` events per name id, a chunk at a time: this runs at the analysis's
    peak, where whole-table copies of the kept events' names and durations were ~50 MB of a dense 100 MB capture's
    temporaries."""
    total = np.zeros(n_names, dtype=np.float64)
    for a in range(0, start.size, _CHUNK):
        k = keep[a : a + _CHUNK]
        dur = (end[a : a + _CHUNK][k] - start[a : a + _CHUNK][k]).astype(np.float64)
        total += np.bincount(name[a : a + _CHUNK][k], weights=dur, minlength=n_names)[:n_names]
    return total


#: Instances bounded at a time by :meth:`_LaunchBins.each_at_most` (its temporaries: ~40 bytes an instance).
_BOUND_BLOCK = 1 << 16

#: Launch times per bin of :class:`_LaunchBins`, on average.
_PER_BIN = 8


class _LaunchBins:
    """The sorted launch times counted into equal bins of time: at most how many launches a set of intervals holds,
    by arithmetic.

    Why: the bound lets :func:`_candidates` skip the exact count of a line that cannot reach the step coverage.  A
    launch inside ``[s, e]`` lies in a bin from ``s``'s to ``e``'s (a bin's index rises with time), so the launches of
    those bins bound it from above, read as two lookups in the bins' cumulative counts -- where a binary search of
    each bound among every 32nd launch (the bound before this one) was 20-30 ms on the dense 100 MB capture's 124
    lines and 1.8 M launches.  Times outside the launches' range are clipped to it: the first and last bins still
    hold every launch they could."""

    def __init__(self, times: np.ndarray) -> None:
        self.lo, self.hi = int(times[0]), int(times[-1])
        n = max(1, times.size // _PER_BIN)
        self.width = (self.hi - self.lo) // n + 1  # n bins cover [lo, hi]: the last launch is in bin n - 1 at most
        counts = np.zeros(n, dtype=np.int64)
        for a in range(0, times.size, _BOUND_BLOCK):  # a block at a time: a whole copy of 1.8 M times was 14 MB
            counts += np.bincount(self._bin(times[a : a + _BOUND_BLOCK]), minlength=n)
        self.cum = np.zeros(n + 1, dtype=np.int32 if times.size < 2**31 else np.int64)  # launches so far, per bin
        np.cumsum(counts, out=self.cum[1:])

    def _bin(self, t: np.ndarray) -> np.ndarray:
        t = np.clip(t, self.lo, self.hi)
        t -= self.lo
        t //= self.width
        return t

    def each_at_most(self, start: np.ndarray, end: np.ndarray, rows: np.ndarray, first: np.ndarray) -> np.ndarray:
        """At least the launches inside the intervals ``[start[r], end[r]]`` of each group ``r`` in
        ``rows[first[k]:first[k + 1]]`` (the last up to the end of ``rows``), each launch counted once per interval
        holding it: one pass over every row, a block at a time, not a few numpy calls per group."""
        # int32 counts (at most the launches) and small blocks: this runs at the analysis's peak
        per = np.empty(rows.size, dtype=np.int32 if self.cum[-1] < 2**31 else np.int64)
        for a in range(0, rows.size, _BOUND_BLOCK):
            r = rows[a : a + _BOUND_BLOCK]
            hi = self._bin(end[r].astype(np.int64, copy=False))
            hi += 1
            per[a : a + r.size] = self.cum[hi] - self.cum[self._bin(start[r].astype(np.int64, copy=False))]
        return np.add.reduceat(per, first, dtype=np.int64) if rows.size else np.zeros(0, np.int64)


def _short(name: str, n: int = 70) -> str:
    return name if len(name) <= n else name[: n - 1] + "…"
