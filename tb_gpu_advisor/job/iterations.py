"""Training iterations of a memory snapshot, from its allocation pattern, where nothing in it marks them.

A snapshot (``torch.cuda.memory._dump_snapshot``) records allocations, not GPU work or host calls, so no step marker
or repeated span can say where its iterations are; the profiler's annotations do where it kept them (the optimizer
step's end: ``MemorySnapshot.iteration_ends_ps``): each marked end closes an iteration (:func:`marked_iterations`),
and nothing below applies.

Without them the iterations are in the allocations themselves, by their cause.  Between two iterations only what the
job keeps is live (the weights, the optimizer's state); each iteration's forward climbs from that level, its backward
and optimizer step free what the forward made and come back down to it.  Each iteration begins with the same
allocation (the same site and size: the input moved to the GPU, the first layer's output).  So the iterations start
at the repeats of one allocation that are troughs of the history:

* from each repeat to the next, the level does not fall below where it started (by at most ``job.snapshot_trough_dip``
  of what it climbed: a loss or output the program still holds from the iteration before is freed in the next);
* each of them comes back down to where it started (``job.snapshot_trough_return`` of its climb), the first excepted:
  an optimizer makes its state on its first step (Adam's moments), and that state is held from then on;
* each holds a forward's and a backward's allocations (every training iteration runs both; repeats of a layer's
  allocation inside one pass -- a model of identical blocks -- hold no backward between them);
* they are alike: each holds as many allocations as the others (``job.snapshot_iteration_alike``; the first may hold
  more, its optimizer's state).

Only a site's repeats made after a backward allocation (since its repeat before) count: a site may recur inside one
pass, an iteration's start only after the backward before it.  Of the sites whose repeats pass (the lowest-lying
:data:`MAX_CANDIDATES` of those alike in size, checked one by one), the one whose repeats dip least below their start
opens the iterations (a later allocation of the iteration starts above the first one's level, and the level falls
back to it), the earlier on a tie.  The history before the first repeat (set-up, or the end of an iteration the ring
buffer cut) is no step; after the last, the rest is one more when it is alike (it need not come back down: a loop
that calls ``zero_grad()`` first holds its gradients until the next iteration's, which the dump came before), else a
part of an iteration and no step.  Truth: the "Understanding GPU Memory 1" blog's ResNet-50 snapshot (survey
h37-survey17; three iterations of 679 allocations, each at 500.4 MiB), replayed by hand, and a real annotated
snapshot's optimizer-step ends (``tests/memory/test_snapshot_iterations_from_allocations.py``).

Two more causes (``tests/memory/test_snapshot_passes_and_accumulation.py``, truth by construction):

* Gradient accumulation: each micro-batch climbs and returns as an iteration would, but an iteration ends where the
  optimizer runs.  Where the history shows the optimizer's allocations, each iteration holds one (and a site's
  repeats count only after an optimizer allocation since the one before): the k micro-batches before it are one.
* Inference (no backward in the history): the passes of a loop under ``no_grad``.  A model of identical blocks
  repeats its allocations inside one pass too; a pass begins at the level held between passes (weights, caches)
  with its input, a block above it (the pass's input and state live), so only repeats made at the level the
  history never falls below again count (:func:`_at_floor`), made outside the model's forward (the input: a deep
  model dumped with its input still live repeats its blocks at a level never fallen below, but inside its forward),
  and every pass -- the first too -- holds as many allocations as the others: a warm-up call on other inputs before
  the loop is no pass of it.  Where no pass makes anything outside the forward (its input reused in place), the
  forward's repeats at that level open the passes when each pass has freed what it made by the next
  (:func:`_leaves_nothing`): a block opens with the block before's output live.

And three more (h37-left32): gradient accumulation with an optimizer that allocates on its first step only is told
by the gradients a group's first backward makes and ``zero_grad()`` frees (:func:`_group_starts`); the first
iteration is warm-up where it makes allocations no later one makes (:func:`first_call_work`: an optimizer's state, a
library's workspace -- left out of the steps' averages by the step detection); a history without times (PyTorch 2.0)
is cut by its events' order and never timed (:func:`_untimed`).

A history recorded without stacks (``_record_memory_history(context=None)``, ``MemorySnapshot.stackless``) marks no
allocation as a forward's or a backward's, and the cut above found none (h37-stackiter).  Its pattern shows them
(:func:`pattern_phases`): a loop's iterations allocate the same sizes in the same order, and in each the backward
frees the forward's blocks in reverse order while it makes gradients.  Those phases feed the same cut
(:func:`_stackless_iterations`), or open the iterations an annotated history's marks end; the steps are then low
confidence, the note says how they were read, and a history that shows no such repeat (a forward whose graph is
dropped unused, passes under ``no_grad``, one step) reads none.

Its first iteration makes state once (Adam's moments), which breaks the repeat: the sizes are read again without the
blocks the history never frees (:func:`_repeating`), so the first repeats the others -- warm-up, as frames read it --
and a history of two iterations reads both (h37-snap23).  A stackless loop of forward passes (no backward anywhere)
is read from the level: each pass frees all it made by its end, falling back to the floor it never falls below
again, and the passes make the same sizes in the same order (:func:`pass_phases`).
"""

from __future__ import annotations

import bisect
import dataclasses
from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.common.fmt import gb, plural
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.job.phase import PS_PER_MS
from tb_gpu_advisor.job.structure import SpanSteps
from tb_gpu_advisor.model.trace import MEMORY_PHASES, MemoryEvents, Trace, rounded_blocks

#: Allocations a group of repeats must hold for its iterations to be looked at: two iterations of a forward (one
#: allocation at least) and a backward (one at least).
_MIN_ALLOCS = 4
#: Sites whose repeats are checked one by one (:func:`_candidates`): a real history has one site per iteration's
#: start (its first allocations' sites tie), a handful of others that pass the vectorised checks.
MAX_CANDIDATES = 256
#: Allocations at a pass's start that every pass makes alike (:func:`_same_opening`).
_OPENING = 8
#: Events per block of the range-extrema table: a query reads at most two partial blocks and the blocks between.
_BLOCK = 256


class _Extrema:
    """Minimum and maximum of the level over any range of events, from per-block extrema (memory: two blocks' worth of
    numbers per 256 events, where a sparse table would hold 20 copies of the history)."""

    def __init__(self, level: np.ndarray, kept: np.ndarray | None = None) -> None:
        self.level = level
        #: running bytes of the allocations the history never frees, one past each event (0 before the first)
        self.kept = np.zeros(level.size + 1, np.int64) if kept is None else kept
        n = level.size
        full = n // _BLOCK * _BLOCK
        blocks = level[:full].reshape(-1, _BLOCK)
        self.lo = blocks.min(axis=1) if full else np.zeros(0, level.dtype)
        self.hi = blocks.max(axis=1) if full else np.zeros(0, level.dtype)

    def range(self, a: int, b: int) -> tuple[int, int]:
        """(min, max) of ``level[a:b]`` (``a < b``)."""
        ba, bb = -(-a // _BLOCK), b // _BLOCK
        if ba >= bb:
            part = self.level[a:b]
            return int(part.min()), int(part.max())
        parts_lo, parts_hi = [int(self.lo[ba:bb].min())], [int(self.hi[ba:bb].max())]
        for s, e in ((a, ba * _BLOCK), (bb * _BLOCK, b)):
            if e > s:
                parts_lo.append(int(self.level[s:e].min()))
                parts_hi.append(int(self.level[s:e].max()))
        return min(parts_lo), max(parts_hi)

    def kept_in(self, a: int, b: int) -> int:
        """The bytes events ``[a, b)`` allocate that the history never frees."""
        return int(self.kept[b] - self.kept[a])


def _never_freed(me: MemoryEvents) -> np.ndarray:
    """Running bytes of the allocations ``me`` never frees, one past each event (:attr:`_Extrema.kept`)."""
    kept = (me.delta > 0) & (me.frees() == len(me))
    size = np.zeros(len(me), np.int64)
    size[kept] = me.blocks(kept)  # the unit of the levels it is taken from
    return np.concatenate(([0], np.cumsum(size))).astype(np.int64)


def snapshot_iterations(trace: Trace) -> SpanSteps | None:
    """The iterations of a snapshot as its steps, on its events' clock (ps): marked by its annotations, else read from
    its allocations; None where the trace is no such snapshot or its history holds fewer than two whole iterations.
    Of several GPUs, the one with the most allocations (one process's devices run the same loop).  A history without
    times (PyTorch 2.0: one entry a microsecond) is cut by its events' order, its steps untimed (:func:`_untimed`)."""
    snap = trace.snapshot
    if snap is None or len(trace.h) or any(len(d) for d in trace.devices):
        return None
    if not trace.memory:
        return None
    me = max(trace.memory.values(), key=lambda m: int((m.delta > 0).sum()))
    confidence = "medium"
    if snap.iteration_ends_ps:
        # the marks end the iterations; a stackless history's forwards, which open them, are read from its pattern
        got = _turns_at_openers(me, marked_iterations(_phased(me) if snap.stackless else me,
                                                      snap.iteration_ends_ps), snap.iteration_ends_ps)
    elif snap.stackless:
        got, confidence = _stackless_iterations(me), "low"  # its pattern read before a teardown (pattern_phases)
    else:
        loop = _before_script_teardown(me)
        got = _iterations(loop)
        if got is None and not _module_phases(loop):
            got, confidence = _stackless_passes(loop, UNPHASED_WHY), "low"
    if got is None:
        return None
    start, end, note, name = got
    if trace.span_ps is None:
        return SpanSteps(name, "memory_iterations", start, end, 1.0, confidence, _untimed(me, start, end, note),
                         timed=False)
    return SpanSteps(name, "memory_iterations", start, end, 1.0, confidence, note,
                     warmup_first=first_call_work(me, start, end),
                     partial_first=(_cut_first(start, end, snap.iteration_ends_ps, int(me.t[0]))
                                    if snap.iteration_ends_ps else ""),
                     partial_last="" if snap.iteration_ends_ps else _open_last(me, start, end, name),
                     tiled=bool(snap.iteration_ends_ps))


def _before_script_teardown(me: MemoryEvents) -> MemoryEvents:
    """The history up to its script's teardown (:func:`teardown_start`), where it has one.  Why: the frees past it
    release what every iteration held and belong to none; read with them, a benchmark's forward passes read no
    iteration (session 55's metamorphic checks: each real snapshot with a teardown added before its dump,
    ``synthetic.memsnapshot.torn_down``)."""
    cut = teardown_start(me)
    return me if cut is None else me.head(cut)


def framed_pass_phases(me: MemoryEvents) -> Passes | None:
    """The forward passes of a history whose frames name no phase (a forward written as plain functions), read as
    :func:`snapshot_iterations` reads its steps: up to its script's teardown (:func:`_before_script_teardown`).  Why
    one reading: the job's kind read the passes from the whole history, so a benchmark that freed its tensors before
    the dump (``del q, k, v``) read "100 forward passes" as its steps beside "GPU work of an unknown kind" (h37-wild56m:
    wild ``snapshot_attn_fwd_autograd`` under ``synthetic.memsnapshot.torn_down``; session 55's lead *Left* 2).  A
    history recorded without stacks keeps its whole reading (:func:`pass_phases`): cut before its end, a one-pass
    forward under ``no_grad`` that frees its input last read its layers as passes (session 55, withdrawn)."""
    return pass_phases(_before_script_teardown(me))


def stackless_pass_phases(me: MemoryEvents) -> Passes | None:
    """The forward passes of a history recorded without stacks (:func:`pass_phases`); where its whole shows none and
    its script tore down what the loop held before the dump (:func:`teardown_start`), those read before the teardown
    that hold, at every return between them, only blocks made before the first (:func:`_holds_only_set_up`).

    Why: the teardown's frees (``del model`` after the loop) lower the history's floor below the weights every pass
    returns to, so no return reached it and a stackless loop of forward passes torn down read no pass and kind
    "unknown" (h37-wild57m *Left* 4: ``torn_down(as_recorded(forward_only(), context=None))``).  Read before the teardown
    alone, a one-pass forward that rebinds ``x = layer(x)`` and frees its last output in the teardown returns to that
    output's level after every layer, its layers alike (session 55's withdrawn cut); what the pattern proves is the
    difference: a loop of passes holds between two passes only what it held before the first (weights, a cache set
    up), a forward's layers hand each other a block one made."""
    got = pass_phases(me)
    cut = teardown_start(me) if got is None else None
    if cut is None:
        return got
    head = pass_phases(me.head(cut))
    return head if head is not None and _holds_only_set_up(me.head(cut), head) else None


def _holds_only_set_up(me: MemoryEvents, passes: Passes) -> bool:
    """Whether every block live at each return between ``passes`` was made before the first of them (or before the
    history): no pass hands a block it made to the next."""
    frees = me.frees()
    made = np.flatnonzero(me.delta > 0)
    first = passes.starts[0]
    for at in passes.starts[1:]:
        live = made[(made < at) & (frees[made] >= at)]
        if (live >= first).any():
            return False
    return True


def _untimed(me: MemoryEvents, starts: np.ndarray, ends: np.ndarray, note: str) -> str:
    """The words for iterations cut by the order of a history that records no times: their count and peaks, no time.

    Why: PyTorch 2.0's snapshot (and its drawn ``trace_plot`` page) keeps each allocation's size, stack and order,
    not when it happened; the reader places one entry a microsecond, so a window's length there is a count of
    events, not a duration -- the iterations are real, their times would be invented."""
    peaks = [int(me.allocated[(me.t >= a) & (me.t <= b)].max()) for a, b in zip(starts.tolist(), ends.tolist())]
    each = (f"each peaks at {gb(peaks[0])}" if len(set(peaks)) == 1 else
            "they peak at " + ", ".join(gb(p) for p in peaks))
    return (f"{note}; {each}. The history records no times (a PyTorch 2.0 snapshot): cut by its events' order, "
            f"no step is timed")


def first_call_work(me: MemoryEvents, starts: np.ndarray, ends: np.ndarray) -> str:
    """Why the first of the iterations ``[starts, ends]`` (ps) is warm-up, in words, or "" where it is like the others.

    Why: a loop's first call does work no later one does -- an optimizer makes its state (Adam's moments), a library
    its handle's workspace (cuBLAS: 8 MiB per handle, the forward's and autograd's thread each), an autotuner its
    trial buffers -- and each of those is an allocation the later iterations do not make.  Its time holds that work
    (snapshot_adam_iterations: 437 ms against 59.6 ms), so the steady state is the iterations after it.  Told by the
    allocations (site and size, counted) the first makes beyond what any later one makes of the same, where the later
    ones differ among themselves by fewer (each against the rest) and by at most ``job.snapshot_iteration_alike`` of
    what one makes: iterations of data-dependent sizes differ each from each, and then no one of them is the odd one.
    At least two iterations must remain: one is no steady state."""
    if starts.size < 3:
        return ""
    counts = [_site_counts(me, int(a), int(b), last=i == starts.size - 1)
              for i, (a, b) in enumerate(zip(starts.tolist(), ends.tolist()))]
    later = counts[1:]
    extra = _beyond(counts[0], later)
    noise = max(_beyond(c, later[:j] + later[j + 1:]) for j, c in enumerate(later))
    typical = float(np.median([sum(c.values()) for c in later]))
    if extra[0] <= noise[0] or noise[0] > T("job.snapshot_iteration_alike") * typical:
        return ""
    n, size, sites = extra
    names = ", ".join(me.op_names[o].rsplit("/", 1)[-1] if 0 <= o < len(me.op_names) else "an unnamed site"
                      for o in sites[:2])
    return (f"its first calls' one-time work ({plural(n, 'allocation')}, {gb(size)}, at {names}"
            f"{', ...' if len(sites) > 2 else ''}, that no later iteration makes: state or workspace made once)")


def _site_counts(me: MemoryEvents, a: int, b: int, last: bool) -> dict[tuple[int, int], int]:
    """How many allocations of each (site, size) the events from ``a`` to ``b`` (ps; ``b`` itself only for the
    ``last``: the next iteration's first allocation is made at the time one ends) make."""
    lo = int(np.searchsorted(me.t, a, "left"))
    hi = int(np.searchsorted(me.t, b, "right" if last else "left"))
    sel = np.flatnonzero(me.delta[lo:hi] > 0) + lo
    keys, n = np.unique(np.stack([me.op[sel].astype(np.int64), me.delta[sel]], axis=1), axis=0, return_counts=True)
    return {(int(k[0]), int(k[1])): int(c) for k, c in zip(keys, n)}


def _beyond(mine: dict[tuple[int, int], int], others: list[dict[tuple[int, int], int]]) -> tuple[int, int, list[int]]:
    """(allocations, bytes, their sites by bytes) that ``mine`` makes beyond the most any of ``others`` makes of the
    same site and size."""
    out: dict[int, int] = {}
    n = 0
    for (site, size), c in mine.items():
        more = c - max((o.get((site, size), 0) for o in others), default=0)
        if more > 0:
            n += more
            out[site] = out.get(site, 0) + more * size
    return n, sum(out.values()), sorted(out, key=lambda k: -out[k])


#: the words of a history's iterations cut at its marked optimizer steps (:func:`marked_iterations`), and where each opens
_MARKED_NOTE = "a memory snapshot's training iterations, from its annotations: {k} marked (Optimizer.step), {each}"
_FROM_FORWARD = "each iteration from its forward's first allocation to its optimizer step's end"
_TURNS = ("each iteration a turn of the loop: from its first allocation to the next turn's (the first allocation after "
          "the optimizer step's end before it), the last to its step's end and the least time the others show from "
          "theirs to the next turn, within the history")


def marked_iterations(me: MemoryEvents, ends: "tuple[int, ...]") -> tuple[np.ndarray, np.ndarray, str, str] | None:
    """The iterations of a history whose annotations mark its optimizer steps' ends (``ends``, ps): each ends there,
    and begins with its forward's first allocation after the step before (the history's start for the first).

    Why: an optimizer step is an iteration's last work, so its end is the iteration's end, whatever the allocations
    look like (snapshot_adam_iterations: a hand-written Adam re-making its parameters out of place, three marked
    steps, read as one untimed window before).  An end with no forward allocation since the one before -- the ring
    buffer kept only its iteration's tail, or it lies before the history -- closes no whole iteration: no step.  The
    last may end after the history's last event (the step's last allocation made, its kernels run)."""
    fwd = me.t[(me.delta > 0) & (me.phase == MEMORY_PHASES.index("forward"))]
    starts, stops = [], []
    prev = -1
    for end in sorted(ends):
        opened = fwd[(fwd > prev) & (fwd <= end)]
        if opened.size:
            starts.append(int(opened[0]))
            stops.append(int(end))
        prev = end
    if not starts:
        return None
    k = len(starts)
    note = _MARKED_NOTE.format(k=plural(k, "optimizer step"), each=_FROM_FORWARD)
    return np.array(starts, np.int64), np.array(stops, np.int64), note, "training iteration"


def _turns_at_openers(me: MemoryEvents, got: tuple[np.ndarray, np.ndarray, str, str] | None,
                      ends: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, str, str] | None:
    """A history's marked iterations (:func:`marked_iterations`) as the loop's turns: each from its first allocation
    (after the first: the first after the optimizer step's end before it) to the next one's, the last to its own mark
    and as long after it as the least time the earlier ones show from their mark to the next turn's first allocation,
    never past the history's last event (nor before its mark).

    Why: a turn is the distance between like marks of consecutive turns, and N turns tile the span from the first
    like mark to the last, so their mean is that span over N whatever the loop does between one step's end and the
    next forward -- ``zero_grad`` first or last, the next batch, a ``torch.cuda.synchronize()`` that waits for the
    step's kernels -- with no guess about the loop's order.  ASSUMPTION this replaces (h37-survey56's end-to-end
    tiling): the optimizer step's end is where a turn begins.  Each turn was read from the step end before it, so it
    held the wait after the turn before and its own enqueue: where the first recorded turn enqueued longer (segments
    made after a benchmark's ``empty_cache()``), its wait was shorter and the next "turn" short (Zhangkuns ``bwd_128``:
    43.0 ms, the steady 51-53), and the mean sat under the loop's period (49.97 ms for 52.52 from ``zero_grad`` to
    ``zero_grad``; ``bwd_257`` 102.9 for 115.7, ``bwd_512`` 296.9 for 306.4).  From one turn's first allocation to
    the next a turn holds its own enqueue and the wait for its own kernels: 52.50 / 115.68 / 306.34 ms.  The turn's
    first allocation, not its forward's: the loop's input made before the model runs opens it, with frames or
    without (``torch_oom_snapshot``: its input's copy 0.54 / 0.13 ms before the forward's first allocation, where its
    stackless reading's pattern opens each turn)."""
    if got is None:
        return None
    starts, stops, note, name = got
    marks = np.array(sorted(ends), np.int64)
    before = np.searchsorted(marks, stops, "left") - 1  # the mark before each iteration's own
    alloc = np.flatnonzero(me.delta > 0)
    at = me.t[alloc]
    later = (before >= 0) & (np.arange(starts.size) > 0)
    if not later.any():
        return got
    opens = alloc[np.searchsorted(at, marks[before[later]], "right")]  # each later turn's first allocation
    opened = starts.copy()
    opened[later] = me.t[opens]
    lo = int(marks[before[0]]) if before[0] >= 0 else None
    opened[0] = _like_opening(me, alloc, int(opens[0]), lo, int(starts[0]))
    tail = int((opened[later] - marks[before[later]]).min())  # the least time from a mark to the next turn's opening
    last = int(stops[-1]) + max(min(tail, int(me.t[-1]) - int(stops[-1])), 0)
    closed = np.append(opened[1:], last).astype(np.int64)
    note = _MARKED_NOTE.format(k=plural(starts.size, "optimizer step"), each=_TURNS)
    return opened, closed, note, name


def _like_opening(me: MemoryEvents, alloc: np.ndarray, opener: int, lo: int | None, forward: int) -> int:
    """Where the first marked turn opens (ps): its last allocation of the site and size that opened the turn after it
    (event ``opener``), after the mark before it (``lo``, where one is) and no later than its forward's first
    allocation (``forward``); that allocation where none is.  Why: the like mark of consecutive turns is the same
    code's allocation each turn; a set-up call of other code (a forward outside the loop) is not it."""
    sel = alloc[(me.t[alloc] <= forward) & ((me.t[alloc] > lo) if lo is not None else True)]
    like = sel[(me.op[sel] == me.op[opener]) & (me.delta[sel] == me.delta[opener])]
    return int(me.t[like[-1]]) if like.size else forward


def _cut_first(starts: np.ndarray, ends: np.ndarray, marks: tuple[int, ...], floor: int) -> str:
    """Why the first of the turns :func:`_turns_at_openers` reads is only part of one, in words, or "" where it is
    whole: the history holds none of the time every later turn shows between the step's end before it (``marks``, ps)
    and its first allocation -- the least of those leads reaches back past the history's first event (``floor``) --
    and it ran shorter than every later whole one by more than chance (the last may lack its tail: not one of them).

    Why: a recording begun inside a turn (a ring buffer that dropped its oldest events, ``_record_memory_history``
    called mid-iteration) keeps only its tail, whose first allocation is no turn's first; one begun between turns (a
    benchmark's recording after its warm-up's ``synchronize()``: Zhangkuns ``bwd_128``, 0.15 ms before its first
    forward) keeps the whole turn, and it runs as long as the others (54.27 ms, the later 51.16-53.28).  As a trace's
    first step floored at its window's start is judged (``steps.drop._drop_window_start_first``), from three turns
    on."""
    if starts.size < 3:
        return ""
    m = np.array(sorted(marks), np.int64)
    before = np.searchsorted(m, starts[1:], "left") - 1
    ok = before >= 0
    if not ok.any() or int(starts[0]) - int((starts[1:][ok] - m[before[ok]]).min()) > floor:
        return ""
    first = int(ends[0]) - int(starts[0])
    whole = (ends[1:-1] - starts[1:-1]).astype(np.int64)
    later = int(whole.min())
    # short by more than chance moves a turn's edge (the others' spread, a noise floor's share of one), as a tiled
    # reading's last step is judged (``steps.ends._chance``): a first turn that makes its segments holds their events
    if first >= later - max(T("steps.short_last_share") * later, int(whole.max()) - later):
        return ""
    return (f"{first / PS_PER_MS:,.2f} ms from its first allocation to the next turn's, where every later whole turn "
            f"ran at least {later / PS_PER_MS:,.2f} ms: the recording began inside it")


def _open_last(me: MemoryEvents, starts: np.ndarray, ends: np.ndarray, name: str) -> str:
    """Why the last of unmarked iterations (each cut from its first allocation to the next one's) is only part of
    one, in words, or "" where it is whole: it ends at the history's last event, and every earlier one ran on, after
    its own last event, for longer than chance moves a step's end before the next one began.

    Why: an iteration read from its allocations runs to the next one's first allocation, so it holds the loop's time
    after its last free -- the host's wait for the GPU, the next batch, the profiler's ``prof.step()``; the last has no
    next one in the history and ends at its own last free, without that time.  Averaged with the whole ones it is
    another quantity: rishabh-ranjan/cs336-a2's ``memory_snapshot__inference_only=1.pickle`` (three no_grad passes
    under ``torch.profiler``, whose ``prof.step()`` ran 1.06-1.27 s between them) read 1.21 s and 0.15 s, a 676 ms
    mean for a loop that turned every 1.2-1.5 s (h37-survey60).  A loop whose next pass begins at once (the
    generator's, one event's tick after the last free) loses nothing: it keeps its last.  As the launches' own
    reading judges its last period (``job.period``), from three iterations on.  Chance is the larger of the share a
    step's edge moves by (``steps.short_last_share``) and two of the history's median event spacings."""
    if starts.size < 3 or int(ends[-1]) != int(me.t[-1]):
        return ""
    t = me.t
    before = np.searchsorted(t, starts[1:], side="left") - 1  # each later iteration's previous event
    ran_on = starts[1:] - t[np.maximum(before, 0)]  # the loop's time after an iteration's last event
    tiles = np.diff(starts)
    lacking = int(ran_on.min())
    # chance: the share a window's edge moves by, and two of the history's own event spacings (an iteration's last
    # event and the next one's first are a spacing apart in a loop that runs straight on: no time between them)
    edge = 2 * float(np.median(np.diff(t))) if t.size > 1 else 0.0
    if lacking <= max(T("steps.short_last_share") * int(tiles.min()), edge):
        return ""
    last = int(ends[-1]) - int(starts[-1])
    what = "iteration" if "training" in name else "pass"
    return (f"partial: {last / PS_PER_MS:,.2f} ms from its first allocation to the history's last event, where every "
            f"earlier {what} ran on at least {lacking / PS_PER_MS:,.2f} ms after its own last event before the next "
            f"one's first allocation (the loop's time between them: a wait for the GPU, the next batch, the "
            f"profiler's step): the history ends before a next {what} begins, so that time is not in it")


def history_iterations(me: MemoryEvents) -> tuple[np.ndarray, np.ndarray, str] | None:
    """The iterations of one GPU's history (:func:`snapshot_iterations`): (starts, ends, in words)."""
    got = _iterations(me)
    return None if got is None else got[:3]


def _iterations(me: MemoryEvents, opening: int | None = None,
                uncounted: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, str, str] | None:
    """The iterations (training) or passes (inference) of one GPU's history, and the name of one.  ``opening``: where
    its phases and sites are its allocation pattern's (:func:`pattern_phases`), the site that opens each repeat;
    ``uncounted``: allocations (event indices) left out of what makes iterations alike (:attr:`Pattern.after_walk`).

    Why ``uncounted``: a loop whose leak begins after its head (``if step >= warmup: val_total += loss``) makes the
    leak's blocks in its later iterations only; counted in, the first two of 6 were no later one's like (10 against
    14 allocations) and the job read the 4 leaking iterations alone, the head's rounds read as repeats by the same
    measure (:func:`_round_size`) notwithstanding (h37-probe50m, probe48a2's *Left* 3:
    ``as_recorded(training_iterations(6, layers=2, mib=8, micro_batches=2, set_to_none=False, leak="graph",
    leak_from=2), context=None)``)."""
    alloc = np.flatnonzero(me.delta > 0)
    if alloc.size < 2 * _MIN_ALLOCS or me.baseline != "absolute":
        return None
    held_phases = _phases_held(me)
    if held_phases is None:
        return None  # no forward recorded: nothing says where an iteration or a pass is
    training, need = held_phases
    n_alloc = np.cumsum(np.concatenate(([0], me.delta > 0)))
    counted = n_alloc
    if uncounted is not None and uncounted.size:
        mask = me.delta > 0
        mask[uncounted] = False
        counted = np.cumsum(np.concatenate(([0], mask)))
    ext = _Extrema(me.allocated, _never_freed(me))
    pre = me.before()  # the level before each event
    inv, counts, pos, ident, new_group = _by_site(me, alloc)
    keep, every, micro, forward_opens = _opening_repeats(me, pos, ident, new_group, need, training, pre, ext,
                                                         opening)

    def tried(sel: np.ndarray, held: np.ndarray | None, forward: "tuple[MemoryEvents, np.ndarray] | None",
              first_step: int = -1) -> tuple[float, int, int, list[int], bool] | None:
        """:func:`_best` of the repeats ``sel`` marks."""
        return _best(pos[sel], ident[sel], counts.size, counted, pre, ext, need, training, held, alloc, inv, forward,
                     first_step)

    # gradient accumulation where no optimizer allocation marks the steps: the gradients a group's first backward
    # makes are live at its later micro-batches' starts, not at the next group's
    held = _backward_held(me) if training and len(need) == 2 else None
    opt = np.flatnonzero((me.delta > 0) & (me.phase == MEMORY_PHASES.index("optimizer")))
    first_step = int(opt[0]) if opt.size else -1
    best = tried(keep, held, None, first_step)
    if best is None and training and (every != keep).any():  # no other site repeats: the optimizer's is all there is
        best = tried(every, held, None, first_step)
    if best is None and not training:
        # no pass makes anything outside the model's forward (its input reused in place): a pass opens with the
        # forward's first allocation, where nothing the forward made before is live any more
        best = tried(forward_opens, None, (me, me.frees()))
    if best is None:
        return None
    _, _, g, starts, tail = best
    k = len(starts) if tail else len(starts) - 1
    if k < 2:
        return None
    t = me.t
    s = np.array([int(t[i]) for i in starts[:k]], np.int64)
    e = np.array([int(t[i]) for i in starts[1:k]] + [int(t[-1]) if tail else int(t[starts[k]])], np.int64)
    bounds = [*starts[:k], len(me) if tail else starts[k]]
    note = _iterations_note(training, starts, k, tail, bounds, n_alloc, pre, pos[micro & (ident == g)])
    return s, e, note, "training iteration" if training else "forward pass"


def _phases_held(me: MemoryEvents) -> tuple[bool, list[np.ndarray]] | None:
    """Whether the history trains, and the running counts of the phases' allocations every iteration holds: a forward
    and a backward, and the optimizer's step where the history shows one (an iteration ends where the optimizer runs:
    the micro-batches of gradient accumulation before it are one); a pass a forward.  None with no forward recorded."""
    marks = {name: np.cumsum(np.concatenate(([0], (me.phase == MEMORY_PHASES.index(name)) & (me.delta > 0))))
             for name in ("forward", "backward", "optimizer")}
    if not marks["forward"][-1]:
        return None
    if not marks["backward"][-1] and marks["optimizer"][-1]:
        marks["backward"] = np.cumsum(np.concatenate(([0], backward_allocations(me))))
    training = bool(marks["backward"][-1])
    need = [marks["forward"], marks["backward"]] if training else [marks["forward"]]
    if training and _optimizer_steps(me) >= 2:
        need.append(marks["optimizer"])
    return training, need


def backward_allocations(me: MemoryEvents) -> np.ndarray:
    """Per event, whether the backward allocates it: its phase's, or -- where the history shows an optimizer step and
    no backward frame -- every allocation with no frame (:func:`_frameless`)."""
    own = (me.delta > 0) & (me.phase == MEMORY_PHASES.index("backward"))
    if own.any() or not ((me.delta > 0) & (me.phase == MEMORY_PHASES.index("optimizer"))).any():
        return own
    return _frameless(me)


def _frameless(me: MemoryEvents) -> np.ndarray:
    """Per event, whether it allocates with no frame in its stack -- the backward's allocations where the history
    shows an optimizer step and no backward frame (:func:`_phases_held`).  Why: ``stacks="python"`` (Windows records
    nothing else) keeps Python frames only, and the backward runs on autograd's engine thread, which has none: its
    allocations hold an empty stack.  An optimizer that stepped had gradients, so a backward ran; read without it, the
    history was no training and its iterations were not found."""
    bare = np.array([name == "?" for name in me.op_names] + [True], bool)  # the last: op -1, no stack at all
    return (me.delta > 0) & bare[me.op]


def _by_site(me: MemoryEvents, alloc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The allocations grouped by site (op and size): each allocation's group, each group's count, the allocations
    in group order (positions and groups), and where each group's run begins."""
    _, inv, counts = np.unique(np.stack([me.op[alloc].astype(np.int64), me.delta[alloc]], axis=1), axis=0,
                               return_inverse=True, return_counts=True)
    inv = inv.reshape(-1)
    order = np.argsort(inv, kind="stable")
    pos = alloc[order]
    ident = inv[order]
    new_group = np.ones(pos.size, bool)
    new_group[1:] = ident[1:] != ident[:-1]
    return inv, counts, pos, ident, new_group


def _opening_repeats(me: MemoryEvents, pos: np.ndarray, ident: np.ndarray, new_group: np.ndarray,
                     need: list[np.ndarray], training: bool, pre: np.ndarray, ext: _Extrema, opening: int | None = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Of the sites' repeats, those that may open an iteration or a pass: (kept, every candidate, those that may open
    a micro-batch, and -- for a pass -- the forward's own repeats at the floor, the last resort).  ``opening``:
    :func:`_iterations`'."""
    if training:
        # of a site's repeats, those after a backward allocation (and an optimizer step's, where it has one) since the
        # one before: the same site and size may recur inside a pass (a model's identical layers) or a micro-batch,
        # an iteration's start only after the iteration before it
        keep = every = new_group | _after_all(pos, need[1:])
        micro = new_group | _after_all(pos, need[1:2])
        if len(need) == 3:
            # an iteration ends where the optimizer runs, so none opens in its step: an optimizer temporary made every
            # step repeats as evenly as the forward's first allocation, and where nothing dips between (gradients
            # zeroed in place: no free after the step) the earlier of the two, the optimizer's, won the tie -- each
            # "iteration" the step before it and the forward after (h37-left56: a ring buffer cut inside a group)
            keep &= me.phase[pos] != MEMORY_PHASES.index("optimizer")
        if opening is not None:
            # a stackless history's repeats open where its pattern's troughs say (:func:`_troughs`): at the level the
            # next forward opens at (gradients zeroed in place) the step's temporary, or a micro-batch's first
            # allocation, repeats as evenly and dips no more, and as the earlier it won the tie -- each "iteration"
            # [step, leak, forward, backward], the first's forward and backward no step and the last, whole, a cut
            # tail: 2 iterations of 3; or each opening at its second micro-batch: 6 of 7 (h37-probe46g)
            keep &= me.op[pos] == opening
        return keep, every, micro, None
    # a pass opens with its input, made outside the model's forward (copied to the GPU, made by the loop): a
    # block's allocations are the forward's own
    floor = _at_floor(pos, ident, pre, ext)
    forward = me.phase[pos] == MEMORY_PHASES.index("forward")
    keep = every = micro = floor & ~forward
    return keep, every, micro, floor & forward


def _iterations_note(training: bool, starts: list[int], k: int, tail: bool, bounds: list[int], n_alloc: np.ndarray,
                     pre: np.ndarray, micro_starts: np.ndarray) -> str:
    """The iterations or passes read, in words: how many, the level held between them, the allocations each makes,
    the micro-batches inside (training), and the history before the first and after the last that is no step."""
    per = int(np.median([n_alloc[b] - n_alloc[a] for a, b in zip(bounds[:-1], bounds[1:])]))
    if training:
        note = (f"a memory snapshot's training iterations, from its allocations (it holds no step marker or "
                f"annotation): {k} times the allocated bytes climb from the level held between iterations "
                f"({gb(int(pre[starts[1]]))}: weights, optimizer state) with the same allocations ({per:,} an "
                f"iteration, forward and backward) and come back down to it{_kept_words(pre, starts, 'iteration')}")
        note += _micro_words(micro_starts, bounds)
    else:
        note = (f"a memory snapshot's forward passes, from its allocations (it holds no step marker or annotation, "
                f"and no backward: inference): {k} times the allocated bytes climb from the level held between "
                f"passes ({gb(int(pre[starts[1]]))}: weights, caches) with the same allocations ({per:,} a pass) "
                f"and come back down to it{_kept_words(pre, starts, 'pass')}")
    what = "iteration" if training else "pass"
    if starts[0] > 0:
        made = int(n_alloc[starts[0]])
        before = plural(made, "allocation") if made else f"{plural(starts[0], 'event')}, frees only"
        note += f"; the history before the first ({before}) is no step"
    if not tail:
        note += f"; the history ends inside {'an' if training else 'a'} {what}: that part is no step"
    return note


def _kept_words(pre: np.ndarray, starts: list[int], what: str) -> str:
    """", less what each keeps: the level rises 16.0 MiB a pass" where the level held between the iterations read
    (``pre`` at each ``starts`` after the first, which may be cut) rises every time; "" where it does not.

    Why: "come back down to it" is what reads these iterations (within ``job.snapshot_trough_return`` of each climb),
    so a loop keeping a little each time reads so too -- and the steps line said the level comes back while the
    leak finding beside it (``rules.memory_leak``) said every iteration keeps bytes nothing frees (h37-review43's
    brief; ``training_iterations(leak="list")``).  The rise is the steps' own measure, said where it is true."""
    levels = pre[np.asarray(starts[1:], dtype=np.int64)].astype(np.int64)
    rises = np.diff(levels)
    if rises.size < 1 or (rises <= 0).any():
        return ""
    return f", less what each keeps: the level rises {gb(float(rises.mean()))} {'an' if what[0] in 'aeiou' else 'a'} {what}"


def _optimizer_steps(me: MemoryEvents) -> int:
    """How many runs of the optimizer's allocations the history holds (each one step's, between other allocations):
    an optimizer that allocates only on its first step (its state, then fused in place) marks no later one."""
    phase = me.phase[me.delta > 0] == MEMORY_PHASES.index("optimizer")
    return int(np.count_nonzero(phase[1:] & ~phase[:-1]) + (phase.size > 0 and phase[0]))


def _best(kp: np.ndarray, kg: np.ndarray, groups: int, n_alloc: np.ndarray, pre: np.ndarray, ext: _Extrema,
          need: list[np.ndarray], training: bool, held: np.ndarray | None, alloc: np.ndarray, inv: np.ndarray,
          forward: "tuple[MemoryEvents, np.ndarray] | None",
          first_step: int = -1) -> tuple[float, int, int, list[int], bool] | None:
    """(dip, first start, site, starts, whether the rest is one more) of the candidate site whose repeats (``kp``,
    ``kg``) open iterations or passes with the least dip, the earlier on a tie; None where none does.  ``forward``
    (the history and each allocation's free, :meth:`MemoryEvents.frees`): the repeats are the forward's own, and
    each pass must leave nothing it made live (:func:`_leaves_nothing`)."""
    best: tuple[float, int, int, list[int], bool] | None = None
    for g, starts in _candidate_starts(kp, kg, groups, n_alloc, pre, ext.level.size, held, first_step):
        if not training and not _same_opening(starts, alloc, inv):
            continue
        if forward is not None and not _leaves_nothing(starts, *forward, pre, ext):
            continue
        got = _check(starts, ext.level.size, pre, ext, need, n_alloc, training)
        if got is None and training and len(starts) > 2:
            # a site's first repeat opens an iteration only where the history holds that iteration's start: one that
            # begins inside an iteration (a ring buffer, ``max_entries``, dropped the events before) has its first
            # repeat inside it -- the whole iterations open at the later repeats, the part before is no step
            starts = starts[1:]
            got = _check(starts, ext.level.size, pre, ext, need, n_alloc, training)
        if got is not None and (best is None or (got[0], starts[0]) < (best[0], best[1])):
            best = (got[0], starts[0], g, starts, got[1])
    return best


def _leaves_nothing(starts: list[int], me: MemoryEvents, frees: np.ndarray, pre: np.ndarray, ext: _Extrema) -> bool:
    """Whether each pass opening at event indices ``starts`` has freed what it allocated by the next one's start --
    but for at most ``job.snapshot_trough_dip`` of its climb (an output the loop holds until the next pass's is made),
    and the first for what it never frees (a cache it makes for the others).

    Why: a loop's passes each free their tensors, so the next opens with nothing of them live; a deep model's blocks
    repeat the same allocation inside one pass, each opening with the block before's output live (its input) --
    alike in site and level, but not free of what came before."""
    dip = T("job.snapshot_trough_dip")
    n = len(me)
    for i, (a, b) in enumerate(zip(starts[:-1], starts[1:])):
        made = np.flatnonzero(me.delta[a:b] > 0) + a
        live = (frees[made] > b) & ((frees[made] < n) if i == 0 else True)
        left = int(me.blocks(made[live]).sum())
        if left > dip * (ext.range(a, b)[1] - int(pre[a])):
            return False
    return True


def _candidate_starts(kp: np.ndarray, kg: np.ndarray, groups: int, n_alloc: np.ndarray, pre: np.ndarray, n: int,
                      held: np.ndarray | None, first_step: int = -1) -> list[tuple[int, list[int]]]:
    """(site, the event indices its iterations would open at) of every candidate site (:func:`_candidates`): its
    repeats, grouped into iterations where the gradients held at them tell micro-batches apart (``held``, per event,
    :func:`_group_starts`).  A site whose repeats are micro-batches is a candidate by its group starts too: the first
    group's optimizer state makes one of its micro-batch rounds larger than the others."""
    out: list[tuple[int, list[int]]] = []
    pools = [(kp, kg)]
    if held is not None:
        at = held[kp]
        lo = np.full(groups, np.iinfo(np.int64).max)
        hi = np.zeros(groups, np.int64)
        np.minimum.at(lo, kg, at)
        np.maximum.at(hi, kg, at)
        low = (hi[kg] > lo[kg]) & (at == lo[kg])  # of sites whose repeats hold gradients at some, those that hold least
        if low.any():
            pools.append((kp[low], kg[low]))
        if first_step >= 0:
            # gradients zeroed in place (:func:`_group_starts`): of each site's repeats, every k-th from the first
            # after the optimizer's first step, k the repeats before it -- and the round the history began in, where
            # the gradients were made before the site's first repeat (:func:`_cut_first_group`)
            before = np.bincount(kg, weights=(kp < first_step), minlength=groups).astype(np.int64)
            rank = np.arange(kp.size) - np.searchsorted(kg, kg)  # kg is sorted: the repeat's place in its site's
            cut = np.zeros(groups, np.int64)
            cut[kg[rank == 0]] = (at[rank == 0] > 0) & (before[kg[rank == 0]] >= 1)
            k = before + cut
            every = (k[kg] >= 2) & ((rank - before[kg]) % np.maximum(k[kg], 1) == 0)
            if every.any():
                pools.append((kp[every], kg[every]))
    seen: set[int] = set()
    for p_kp, p_kg in pools:
        for g in _candidates(p_kp, p_kg, groups, n_alloc, pre, n).tolist():
            if g in seen:
                continue
            seen.add(g)
            starts = kp[np.searchsorted(kg, g):np.searchsorted(kg, g, "right")].tolist()  # kg is sorted
            out.append((g, _group_starts(starts, held, first_step) if held is not None else starts))
    return out


def _backward_held(me: MemoryEvents) -> np.ndarray:
    """Per event: the bytes live just before it that a backward allocated (the gradients ``.grad`` holds; a
    ``stacks="python"`` history's frameless allocations, :func:`backward_allocations`).

    Why frameless too: the backward runs on autograd's engine thread, which has no Python frame, so such a history's
    gradients carry no backward phase -- none held anywhere, the micro-batches of gradient accumulation were not told
    from iterations, and a leak whose bytes grow each iteration read as 2 iterations, the last one's 2 micro-batches,
    its leak as none (h37-walk53: ``--forms18`` seed 310387)."""
    made = np.flatnonzero(backward_allocations(me))
    step = np.zeros(len(me) + 1, np.int64)
    step[made + 1] += me.delta[made]
    freed = me.frees()[made]
    gone = freed < len(me)
    step[freed[gone] + 1] -= me.delta[made[gone]]
    return np.cumsum(step)[:-1]


def _group_starts(starts: list[int], held: np.ndarray, first_step: int = -1) -> list[int]:
    """Of the rounds of forward and backward opening at event indices ``starts``, those that open an iteration, where
    the gradients tell micro-batches apart; else ``starts``.  ``first_step``: the event index of the optimizer's first
    allocation (-1: none in the history).

    Why: with gradient accumulation the first backward of an iteration makes the gradients (autograd hands its
    buffers to ``.grad``), the later micro-batches add to them in place, and ``zero_grad()`` (``set_to_none``, the
    default) frees them after the optimizer step -- so the backward's bytes live at a round's start are the held
    gradients inside an iteration, and only what the loop keeps across iterations (none, or gradients zeroed in place)
    at an iteration's start.  Where that is the case every k-th round (k >= 2, the same k throughout), those rounds
    open the iterations.  A history may begin inside a group (a ring buffer, ``max_entries``, dropped its start): the
    gradients its first rounds add to were made before it, so those rounds -- the first ones, fewer than k before
    the first of the every-k-th -- hold none it saw made, and are the cut group's, no iteration's start.  A loop
    without accumulation holds the same at every round's start: every round is one.

    ``zero_grad(set_to_none=False)`` zeroes the gradients in place instead: the job's first backward makes them and
    they are held at every later round's start alike, so the gradients no longer tell the groups apart.  Where the
    optimizer allocates then only once -- its state, on its first step (a fused or in-place optimizer) -- that first
    step ends the first iteration: the rounds before it (from the round that made the gradients, the history's
    first, so the job's) are one iteration's k micro-batches, and every k-th round from the first opens one."""
    if len(starts) < 3:
        return starts
    at = held[np.asarray(starts)]
    low = np.flatnonzero(at == at.min())
    if low.size == at.size:
        return _cut_first_group(starts, at, first_step)
    if low.tolist() == [0] and first_step >= 0:
        k = int(np.searchsorted(np.asarray(starts), first_step))  # rounds before the optimizer's first step
        if 2 <= k < len(starts) and _held_from(at, k):
            return starts[::k]
        if (at[1:] == at[1]).all():
            return starts
    if low.size < 2:
        return starts
    gaps = np.diff(low)
    k = int(gaps[-1])
    j = low.size - 1
    while j > 0 and int(gaps[j - 1]) == k:
        j -= 1
    lead, run = low[:j], low[j:]  # the first rounds apart, then every k-th
    if k < 2 or run.size < 2:
        return starts
    if lead.size == 0:
        return [starts[i] for i in run.tolist()] if int(run[0]) < k else starts
    if lead.size <= k and lead.tolist() == list(range(lead.size)) and int(run[0]) == lead.size:
        return [starts[i] for i in run.tolist()]
    return starts


def _cut_first_group(starts: list[int], at: np.ndarray, first_step: int) -> list[int]:
    """Of rounds opening at ``starts`` that all hold the same gradients at their start (``at``, > 0: made in the
    history before its first round), the iterations where the optimizer's first step (``first_step``) comes after
    some of them: the rounds after it, every k-th, k the rounds before it plus the one the history began in; else
    ``starts``.

    Why: gradients zeroed in place (``zero_grad(set_to_none=False)``) are made by the job's first backward and held
    from then on; where the history shows them made before its first round, it began inside the job's first
    micro-batch (a ring buffer, ``max_entries``, dropped its forward), and every round up to the first step is that
    iteration's next micro-batch.  Counted from the first round alone, a loop of 6 iterations of 2 micro-batches under
    a fused optimizer, cut in its first forward, read as 11 iterations, each a micro-batch -- its leak as 12 iterations
    of 16 MiB, not 6 of 32 MiB; with 3 micro-batches as no leak at all (h37-probe46k)."""
    if first_step < 0 or at[0] <= 0:
        return starts
    before = int(np.searchsorted(np.asarray(starts), first_step))  # whole rounds before the first step
    k = before + 1
    if before < 1 or len(starts) - before < 2 * k:
        return starts
    return starts[before::k]


def _held_from(at: np.ndarray, k: int) -> bool:
    """Whether the gradients held at each round's start (``at``) rise over the first ``k`` rounds and stay level from
    the k-th on: zeroed in place, they are all made by the first optimizer step, and held alike after it.

    Why rise, not level from the first round: a parameter the first micro-batch leaves unused (a branch, an expert
    it routes no token to) gets its gradient in a later one -- the held bytes at the rounds' starts read 0, 192, 256,
    256 MiB ..., and the grouping was given up: the job read each micro-batch as an iteration once a leak's bytes no
    longer kept them from passing (h37-probe45g: ``training_iterations(3, layers=3, micro_batches=2,
    set_to_none=False, optimizer_temp=False, leak="grow")``, 4 parameters: the first backward makes 3 gradients)."""
    return bool((np.diff(at[:k + 1]) >= 0).all() and (at[k:] == at[k]).all())


def _after_all(pos: np.ndarray, marks: list[np.ndarray]) -> np.ndarray:
    """Of a site's repeats (event indices ``pos``, by site then time), those with an allocation of each of ``marks``
    (cumulative counts) since the site's repeat before."""
    out = np.zeros(pos.size, bool)
    out[1:] = True
    for m in marks:
        out[1:] &= m[pos[1:]] > m[pos[:-1]]
    return out


def _at_floor(pos: np.ndarray, ident: np.ndarray, pre: np.ndarray, ext: _Extrema) -> np.ndarray:
    """Of a site's repeats (event indices ``pos``, by site ``ident`` then time), those made at the level the history
    never falls below again: a pass's first allocation (its input), made when only what is held between passes is
    live.  Until the site's next repeat the level may dip by ``job.snapshot_trough_dip`` of its climb (an output the
    loop still holds from the pass before, freed in this one); from the next repeat on, not at all (that output is
    gone by then).  A block of a deep model repeats its allocations too, but above that level -- the pass's input and
    state are live -- to which the history falls back when the pass ends."""
    level = ext.level
    n = level.size
    lo = np.minimum.accumulate(level[::-1])[::-1]
    lo_from = np.concatenate((lo, [np.iinfo(np.int64).max]))  # the floor from an event on; none after the end
    hi = np.maximum.accumulate(level[::-1])[::-1]
    start = pre[pos]
    nxt = np.full(pos.size, n)
    same = ident[1:] == ident[:-1]
    nxt[:-1][same] = pos[1:][same]
    dip = T("job.snapshot_trough_dip")
    out = (start <= lo_from[nxt]) & (start - lo[pos] <= dip * np.maximum(hi[pos] - start, 0))
    for j in np.flatnonzero(out & (start > lo[pos])).tolist():  # dips before the next repeat: by less than it climbs
        climb = ext.range(int(pos[j]), int(nxt[j]))[1] - int(start[j])
        out[j] = int(start[j]) - int(lo[pos[j]]) <= dip * climb
    return out


def _same_opening(starts: list[int], alloc: np.ndarray, ident: np.ndarray) -> bool:
    """Whether the passes opening at event indices ``starts`` begin with the same :data:`_OPENING` allocations (site
    and size, ``ident`` per allocation ``alloc``), the first pass apart (a cache it makes for the others): a loop's
    passes run the same code; repeats of one allocation that chance brought back to the same level (allocations of
    random sizes) do not."""
    first = np.searchsorted(alloc, starts)
    length = min(_OPENING, alloc.size - int(first.max()))  # a history dumped early in its last pass: what it has
    heads = {tuple(ident[o:o + length].tolist()) for o in first[1:].tolist()}
    # the first pass may make a cache among its first allocations (a KV cache): its input, the first, is the others'
    return len(heads) == 1 and ident[first[0]] == ident[first[1]]


def _micro_words(repeats: np.ndarray, bounds: list[int]) -> str:
    """", each of N micro-batches" where every iteration (``bounds``) holds N > 1 forward-and-backward rounds (the
    start site's repeats after a backward, ``repeats``): gradient accumulation."""
    per = np.diff(np.searchsorted(np.sort(repeats), bounds))
    if per.size == 0 or per.min() < 2 or per.min() != per.max():
        return ""
    return f", each of {int(per[0])} micro-batches (forward and backward) before one optimizer step"


def _candidates(kp: np.ndarray, kg: np.ndarray, groups: int, n_alloc: np.ndarray, pre: np.ndarray,
                n: int) -> np.ndarray:
    """The sites whose repeats (``kp``, event indices, by site ``kg`` then time) may open iterations, the lowest
    first, at most :data:`MAX_CANDIDATES`: two repeats or more, whose iterations after the first (or, of two, the rest
    after the last) are alike in their allocations.  Vectorised over every site at once: a history of random sizes has
    as many sites as allocations, and :func:`_check` looks at each candidate's repeats one by one."""
    m = np.bincount(kg, minlength=groups)
    alike = T("job.snapshot_iteration_alike")
    na = n_alloc[kp]
    first = np.ones(kp.size, bool)
    first[1:] = kg[1:] != kg[:-1]
    last = np.ones(kp.size, bool)
    last[:-1] = kg[1:] != kg[:-1]
    # the sizes of the later iterations: gaps between repeats but the first, or the rest after the second of two
    later = np.zeros(kp.size, bool)
    later[1:] = ~first[1:] & ~first[:-1]  # gap from repeat j-1 to j, j-1 not the site's first
    size = np.zeros(kp.size, np.int64)
    size[1:] = na[1:] - na[:-1]
    lo = np.full(groups, np.iinfo(np.int64).max)
    hi = np.zeros(groups, np.int64)
    np.minimum.at(lo, kg[later], size[later])
    np.maximum.at(hi, kg[later], size[later])
    two = last & (m[kg] == 2)
    rest = int(n_alloc[n]) - na[two]
    lo[kg[two]], hi[kg[two]] = rest, rest
    ok = (m >= 2) & (lo > 0) & (hi <= lo * (1 + alike) / (1 - alike))
    # the lowest troughs first: an iteration starts at the level held between iterations, the history's lowest
    level = np.bincount(kg, weights=pre[kp].astype(np.float64), minlength=groups) / np.maximum(m, 1)
    cand = np.flatnonzero(ok)
    return cand[np.argsort(level[cand], kind="stable")][:MAX_CANDIDATES]


def _check(starts: list[int], n: int, pre: np.ndarray, ext: _Extrema, need: list[np.ndarray],
           n_alloc: np.ndarray, training: bool) -> tuple[float, bool] | None:
    """(the repeats' mean dip below their start, a share of their climb; whether the rest after the last repeat is one
    more iteration) where the repeats at event indices ``starts`` open iterations (the module's conditions), else
    None.  A training loop's first iteration may hold more allocations (its optimizer's state, made on the first
    step); an inference loop's first pass as many as the others (a cache it makes is a few buffers): a first forward
    call on other inputs (a warm-up) is no pass of the loop that follows it."""
    dips, sizes = [], []
    for i, (a, b) in enumerate(zip(starts[:-1], starts[1:])):
        dip = _segment(a, b, pre, ext, need, first=i == 0, end_level=int(pre[b]))
        if dip is None:
            return None
        dips.append(dip)
        sizes.append(int(n_alloc[b] - n_alloc[a]))
    a = starts[-1]
    # the last may end above its start: a loop that calls zero_grad() first holds its gradients until the next
    # iteration's, which the dump came before
    # (a pass frees what it made: an inference loop's last pass comes back down too, else it is a part of one)
    n = _before_teardown(a, n, pre, ext.level, n_alloc)
    rest = _segment(a, n, pre, ext, need, first=training, end_level=int(ext.level[n - 1]))
    rest_size = int(n_alloc[n] - n_alloc[a])
    alike = T("job.snapshot_iteration_alike")
    # the first iteration may make more (its optimizer's state): the others say what an iteration makes
    later = sizes[1:] or ([rest_size] if rest is not None else [])
    if not later:
        return None
    typical = float(np.median(later))
    if any(abs(x - typical) > alike * typical for x in later) or sizes[0] < (1 - alike) * typical \
            or (not training and sizes[0] > (1 + alike) * typical):
        return None
    tail = rest is not None and abs(rest_size - typical) <= alike * typical
    return float(np.mean(dips)), tail


def _before_teardown(a: int, n: int, pre: np.ndarray, level: np.ndarray, n_alloc: np.ndarray) -> int:
    """One past the last event of the history from event ``a`` (the last iteration's start) that is no teardown: ``n``
    where the history ends as it allocates, else the end of its trailing frees that stay at or above the level before
    ``a`` (``pre``; ``level``: after each event) -- the frees past them (no allocation after) release what the loop
    held across its iterations, its weights
    and optimizer state: the script's ``del model, optimizer`` after the loop, no part of its last iteration.

    Why: Ascend's ``memory_leaks_demo.py`` (codeasier/MemSnapDump's ``snapshot_1768383987920985470.pkl``) frees its
    model and optimizer after 3 iterations and dumps with nothing allocated; the fall to 0 read as the last iteration
    dipping below its start, so the job read 2 iterations, "the history ends inside an iteration", and the peak (the
    third iteration's Adam step) "outside every training iteration" (h37-wild54m)."""
    last = int(np.searchsorted(n_alloc, n_alloc[n], side="left"))  # one past the history's last allocation
    if last >= n or last <= a:
        return n
    below = np.flatnonzero(level[last:n] < int(pre[a]))
    return n if not below.size else last + int(below[0])


def _segment(a: int, b: int, pre: np.ndarray, ext: _Extrema, need: list[np.ndarray], first: bool,
             end_level: int) -> float | None:
    """How far events ``[a, b)`` dip below the level before ``a``, a share of what they climb above it, where they are
    an iteration: an allocation of each of ``need`` (forward, backward, the optimizer's step), a dip of at most
    ``job.snapshot_trough_dip`` and -- the first iteration apart -- an end (``end_level``), less what they allocate
    that the history never frees (:meth:`_Extrema.kept_in`), within ``job.snapshot_trough_return`` of the start; else
    None.

    Why less the never-freed bytes: a loop that leaks keeps them every iteration, and an iteration is no less one for
    it -- the memory-leak check reads the leak off these very iterations.  Counted in, a loop keeping 48 MiB of an
    evaluation's graph after each step of a 448 MiB climb (11%) failed the return at its forward's start; only the
    evaluation's start, whose climb holds the kept bytes too, passed -- 5 iterations from the second's evaluation
    on, where 6 ran (h37-probe45g: ``training_iterations(6, micro_batches=2, optimizer_temp=False, leak="graph")``).
    Training only (``need`` holds a backward): a forward under autograd keeps each layer's tensors for good too, and
    a model of identical layers repeats its allocations a layer apart -- without the return, CS336's 48-layer forward
    (wild ``forward_autograd_cs336``) read as 48 passes each keeping 232 MiB, a leak."""
    if any(m[b] == m[a] for m in need):
        return None
    lo, hi = ext.range(a, b)
    start = int(pre[a])
    climb = hi - start
    if climb <= 0 or start - lo > T("job.snapshot_trough_dip") * climb:
        return None
    kept = ext.kept_in(a, b) if len(need) > 1 else 0
    if not first and abs(end_level - kept - start) > T("job.snapshot_trough_return") * climb:
        return None
    return max(start - lo, 0) / climb  # a level that stays above its start dips by nothing




#: Candidate periods :func:`_period` tries: the distances from one allocation to the later and earlier allocations of
#: its size (the rarest size near the history's middle: one a period, or a few).
_PERIODS = 64
#: Of the blocks a climb held at its peak and the fall after it frees, the share freed last-in first-out for the fall to
#: be a backward pass: autograd walks the graph back, freeing each layer's saved tensors after its gradient is made.
#: The share ``job.kind`` asks of a stackless backward (``_LIFO_SHARE``), for the same cause.
_FALL_LIFO = 0.8
#: Nests :func:`_turn` reads, longest first, before it gives up: a chain of blocks freed together with nothing made
#: between nests too but is no walk back -- gradients made by the backward in reverse order of the layers and freed by
#: ``zero_grad()`` in the layers' order, an optimizer's temporaries -- and it may be longer than the walk itself (the
#: H200 OOM snapshot: 25 such blocks against a walk back over 8 layers' saved outputs).
_NESTS = 3
#: Blocks a backward's walk back must free, at least: two layers' saved input and output.  A pass under ``no_grad``
#: nests a block's temporaries in its output (two or three); a backward frees every layer's saved tensors.
_MIN_NEST = 4
#: Blocks a shorter walk back frees, at least -- a model of two layers, its two saved outputs -- where it walks back
#: all its forward holds and frees at least what it makes meanwhile (:func:`_short_walk`).  Without it a 2-layer
#: model's loop read as no training iteration, its leak per micro-batch or not at all (h37-probe47a:
#: ``as_recorded(training_iterations(8, layers=2, micro_batches=2, set_to_none=False, leak="list"), context=None)``:
#: 16 iterations of one 48 MiB block where 8 of two ran).
_LEAST_NEST = 2


@dataclass
class Pattern:
    """A stackless history's training iterations as its allocation pattern shows them (:func:`pattern_phases`)."""

    phase: np.ndarray  # int8 per event, MEMORY_PHASES: "forward" in each climb, "backward" in each fall, else -1
    period: int  # allocations each repeat of the sequence of sizes holds
    repeats: int  # whole repeats of it in the history
    turns: int  # the iterations whose backward was read (every whole repeat's; the head's and tail's where shown)
    #: int32 per event: an allocation's place in the period inside the repeats (the same code each iteration), -1
    #: outside them and for frees -- the site a stackless allocation has no frame to name (``MemoryEvents.op``)
    site: np.ndarray
    #: allocations left out of the sequence of sizes: blocks never freed in the history (:func:`_repeating`), 0 where
    #: every allocation was read
    set_aside: int = 0
    #: the site (place in the period) of each repeat's first allocation, after its trough (:func:`_troughs`)
    opening: int = 0
    #: the events opening the head's rounds read as repeats (:func:`_head_openings`), sited at ``opening``
    heads: tuple[int, ...] = ()
    #: event indices of the blocks never freed that the rounds after the first keep again -- after their backward's walk
    #: back, or at the same place in the round's allocations (a leak kept after the step, or an output kept from the
    #: forward, :func:`_kept_again`): no part of what makes the rounds alike
    after_walk: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int64))
    #: per round with a backward: (its walk's first free, its walk's last free, the round's last event) -- where the
    #: backward frees what the forward saved, read by the peak's breakdown (``metrics.memory._pattern_phased``)
    walks: tuple[tuple[int, int, int], ...] = ()


def pattern_phases(me: MemoryEvents) -> Pattern | None:
    """The training iterations a history recorded without stacks shows in its pattern (:func:`_pattern_phases`),
    read before its teardown where it has one; None where it shows none.

    Why the teardown apart: a script that frees its model and optimizer after the loop (``del model, optimizer``)
    frees in the history the blocks every iteration holds -- its weights, its optimizer's state -- so none is kept
    for good, and the first iteration, which makes that state, read as a set-up the later ones do not repeat: 3
    iterations read none, 5 read 3 (h37-wild54m *Left*: ``as_recorded(training_iterations(3, teardown=True),
    context=None)``).  Read up to the teardown (:func:`teardown_start`), those blocks are kept as in a history
    dumped inside the loop; the phases past it are none.  Where that reading shows no iteration, the whole's is
    read."""
    cut = teardown_start(me)
    head = _pattern_phases(me.head(cut), me) if cut is not None else None
    if head is None:
        return _pattern_phases(me)
    tail = np.full(len(me) - cut, -1)
    return dataclasses.replace(head, phase=np.concatenate([head.phase, tail.astype(head.phase.dtype)]),
                               site=np.concatenate([head.site, tail.astype(head.site.dtype)]))


def teardown_start(me: MemoryEvents) -> int | None:
    """The first of the frees after the history's last allocation that frees what the loop held across its
    iterations (``del model, optimizer``): a block made in the history's first half, or, where the history ends
    holding no block made before it, a block made before it; None where none does.  The frees before it are the last
    iteration's own (its activations, ``zero_grad()``).

    Why the blocks made before the history only where none is left: a forward pass whose output is rebound frees the
    previous pass's graph after its last allocation too (a real 2.7B model's: 773 blocks, 5.23 GiB,
    ``metrics.memory._pass_replaced``) and keeps its weights, made before the history; a script's teardown frees
    those weights as well (wild ``snapshot_attn_sweep_rounding`` torn down: its 9 MiB of weights, made before the
    recording, freed to 0).  A pass that frees its input at its end frees a block made early too: what is read before
    it still sees those frees (:func:`pattern_phases`)."""
    made = np.flatnonzero(me.delta > 0)
    if not made.size or made[-1] >= len(me) - 1:
        return None
    frees = me.frees()
    held = made[(made < len(me) // 2) & (frees[made] > made[-1]) & (frees[made] < len(me))]
    at = frees[held[~_replaced_graph(me, held, frees)]]
    unseen = me.unseen_frees()
    unseen = unseen[unseen > made[-1]]
    if unseen.size and int(me.allocated[-1]) <= int(me.blocks(made[frees[made] >= len(me)]).sum()):
        at = np.concatenate([at, unseen])  # no block made before the history is left at its end
    return int(at.min()) if at.size else None


def _replaced_graph(me: MemoryEvents, blocks: np.ndarray, frees: np.ndarray) -> np.ndarray:
    """Per block of ``blocks`` (allocations freed after the history's last allocation): whether it is a pass's graph
    the next pass replaced -- a block of its bytes made before it (or before the history) was freed after it was made
    (the graph it replaced in turn), and after that free a block of its bytes was made that still lives when it is
    freed (the graph that replaces it).

    Why: a forward-only loop with autograd on that rebinds its output (``out = model(x)``) frees the previous pass's
    graph once the next pass has returned, after the history's last allocation; recorded over two passes or more,
    that graph was made in the history's first half and read as the script's teardown, so the last pass's climb was
    cut at its peak and its kept graph went unseen (``windows_autocast_forward(grad=True, passes=3)`` without stacks:
    4 MiB "kept" of a 964 MiB peak holding two graphs of 288 MiB, no finding; snap62's *Left* 5a).  A teardown frees
    what the loop held across its iterations -- weights made at the set-up, an optimizer's state -- and no block of
    those bytes was freed while they lived, to be made again."""
    out = np.zeros(blocks.size, bool)
    if not blocks.size:
        return out
    allocs = np.flatnonzero(me.delta > 0)
    last = int(allocs[-1])
    unseen = me.unseen_frees()
    unseen = unseen[unseen <= last]
    ended = allocs[frees[allocs] <= last]  # lifetimes over by the last allocation: (made, freed); made -1 before
    made = np.concatenate([ended, np.full(unseen.size, -1, np.int64)])
    freed = np.concatenate([frees[ended], unseen])
    size = np.concatenate([me.delta[ended], -me.delta[unseen]])
    live = allocs[frees[allocs] > last]  # a successor outlives a block freed after the last allocation: these only
    for s in np.unique(me.delta[blocks]).tolist():
        at = np.flatnonzero(me.delta[blocks] == s)
        same = size == s
        if not same.any():
            continue
        b = blocks[at].astype(np.int64)
        # the graph each replaced: of the lifetimes over b (made before it, freed after), the first freed
        by_end = np.argsort(freed[same], kind="stable")
        ends, starts = freed[same][by_end], made[same][by_end]
        i = _first_above(-starts, np.searchsorted(ends, b, "right"), -b)
        has = i < ends.size
        over = np.where(has, ends[np.minimum(i, ends.size - 1)], 0)
        # the first block of its bytes made after that free and still live when it goes
        later = live[me.delta[live] == s]
        k = _first_above(frees[later], np.searchsorted(later, over, "right"), frees[b])
        has &= k < later.size
        succ = np.where(has, later[np.minimum(k, max(later.size - 1, 0))], 0)
        # and no block of its bytes made and freed between that free and the first of them: a gradient that
        # ``zero_grad(set_to_none=True)`` frees and each backward makes again says the loop's iterations ran
        # between them -- the block lived across them, the loop's own state, no pass's graph (h37-rev63b: a state
        # dict loaded to the GPU before its model, each weight read "replaced" and the teardown unread)
        by_start = np.argsort(made[same], kind="stable")
        first_end = np.minimum.accumulate(freed[same][by_start][::-1])[::-1]  # the first end of lifetimes from here on
        j = np.searchsorted(made[same][by_start], over, "right")
        between = (j < first_end.size) & (first_end[np.minimum(j, first_end.size - 1)] < succ)
        out[at] = has & ~between
    return out


def _first_above(values: np.ndarray, start: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """Per query: the first index ``i >= start`` with ``values[i] > limit``, ``values.size`` where none is.

    Why not a scan per query: a history's teardown of many blocks of one size asked, block by block, over every
    lifetime of that size was quadratic (h37-rev63b *Left*: 64k same-size blocks 2.4 s); jumps of 2**l over a table
    of the maxima of each run of 2**l values answer each query in log2(n) steps, all queries together."""
    pos = np.asarray(start, np.int64).copy()
    limit = np.asarray(limit)
    n = values.size
    table = [values]
    while 2 * (1 << (len(table) - 1)) <= n:
        h = 1 << (len(table) - 1)
        table.append(np.maximum(table[-1][:-h], table[-1][h:]))
    for lvl in range(len(table) - 1, -1, -1):
        step = 1 << lvl
        fits = pos + step <= n
        idx = np.where(fits, pos, 0)
        jump = fits & (table[lvl][idx] <= limit) if table[lvl].size else np.zeros(pos.size, bool)
        pos += np.where(jump, step, 0)
    return pos


def _pattern_phases(me: MemoryEvents, history: MemoryEvents | None = None) -> Pattern | None:
    """The forward and backward allocations of a history recorded without stacks, read from its pattern; None where
    it shows no repeated training iteration.

    Why: ``_record_memory_history(context=None)`` records no frame, so no allocation reads as a backward's and
    :func:`_iterations` (which cuts after a backward allocation) found none.  A training loop's iterations run the same
    code, so the sizes it allocates repeat in the same order (:func:`_period`: two repeats at least, holding at least
    half the history -- a set-up before, a cut iteration after); in each, the forward climbs to a peak and the backward
    falls from it, freeing the forward's blocks in reverse order (:data:`_FALL_LIFO`) while it makes gradients.  Each
    repeat's peak and the trough after it mark the phases: what is made in the climb from the trough before is the
    forward's, what is made in the fall the backward's.  A forward whose graph is dropped unused frees its blocks with
    nothing made between; a pass under ``no_grad`` holds few blocks at its peak: neither reads as training."""
    if int((me.delta > 0).sum()) < 2 * _MIN_ALLOCS or me.baseline != "absolute":
        return None
    frees = me.frees()
    got = _repeating(me, frees)
    if got is None:
        return None
    alloc, (p, first, cover) = got
    reps = cover // p
    troughs = _troughs(me, alloc, p, first, cover)
    made = me.delta > 0
    # rounds the head holds that open as the repeats do, each with its own walk back (:func:`_head_openings`)
    heads = _head_openings(me, troughs, int(me.delta[alloc[first:first + p]].min()), made, frees) if troughs else []
    # (lo, hi] event ranges: the head (set-up), its rounds, each whole repeat, the tail
    cuts = [-1, *[h - 1 for h in heads if h > 0], *troughs, len(me) - 1]
    phase = np.full(len(me), -1, np.int8)
    turns = 0
    walked: list[tuple[int, int]] = []  # per repeat with a backward: (its walk's last free, the repeat's end)
    walks: list[tuple[int, int, int]] = []  # per repeat with a backward: its walk's first and last free, its end
    rounds: list[tuple[int, int]] = []  # per repeat with a backward: its (lo, hi] events
    held: list[bool] = []  # per whole repeat: it ends holding its climb (:func:`_holds_its_climb`)
    kept: list[np.ndarray] = []  # per whole repeat: the blocks it makes and holds past its end
    for k, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:])):
        whole = 0 < k < len(cuts) - 2
        if whole:
            held.append(_holds_its_climb(me.allocated, lo, hi))
            ev = np.flatnonzero(made[lo + 1:hi + 1]) + lo + 1
            kept.append(ev[frees[ev] > hi])
        walk = _walk(lo, hi, made, frees, me.delta)
        if walk is None:
            if whole:
                return None  # a whole repeat with no backward's walk back: no training iteration
            continue  # the head (set-up, or an iteration that differs) or the tail (cut by the dump) need not have one
        turns += 1
        turn = walk[0]
        walked.append((walk[1], hi))
        walks.append((walk[0], walk[1], hi))
        rounds.append((lo, hi))
        ev = np.flatnonzero(made[lo + 1:hi + 1]) + lo + 1
        phase[ev] = np.where(ev < turn, MEMORY_PHASES.index("forward"), MEMORY_PHASES.index("backward"))
    # (of the whole ``history`` where ``me`` is its head before a teardown: a single forward that frees its input at
    # its end frees what its layers kept together after it -- wild ``snapshot_own_attention_b200`` without stacks read
    # its 32 layers as passes from its head)
    if turns < 2 or (len(held) >= 2 and all(held[1:]) and (
            released_together(me, np.concatenate(kept[1:]), frees) if history is None else
            released_together(history, np.concatenate(kept[1:])))):
        return None  # a forward's layers, each keeping what it saved for a backward not run: no iteration
    phase[_first_step_state(me, walked, frees)] = MEMORY_PHASES.index("optimizer")
    site = np.full(len(me), -1, np.int32)
    site[alloc[first:first + cover]] = np.arange(cover, dtype=np.int32) % p
    opening = int(site[troughs[0] + 1]) if troughs else 0
    site[heads] = opening
    return Pattern(phase, p, reps, turns, site, int((me.delta > 0).sum()) - alloc.size, opening, tuple(heads),
                   _kept_again(me, walked, rounds, frees), tuple(walks))


#: The share of its climb (trough to peak) a repeat may still hold at the trough after it and have run a backward
#: (:func:`_holds_its_climb`).
_HELD_CLIMB = 0.9


def _holds_its_climb(level: np.ndarray, lo: int, hi: int) -> bool:
    """Whether the repeat of events ``(lo, hi]`` ends holding :data:`_HELD_CLIMB` or more of what it climbed from the
    trough before it (``level``: the allocated bytes after each event).  Where every whole repeat after the first
    does, and what they keep goes in one run (:func:`released_together`), they are a forward's layers, not
    iterations (:func:`pattern_phases`).

    Why: a backward frees the tensors its forward saved, so an iteration falls from its peak to the trough the next
    one opens at, less a leak's bytes.  What a first iteration makes once and keeps -- gradients held in place
    (``zero_grad(set_to_none=False)``), an optimizer's state -- may hold its climb, and the next iterations reuse it;
    gradients made again each iteration are freed by the next ``zero_grad()``, before that trough.  A forward's
    layers under autograd repeat the same sizes too, each freeing its temporaries last-in first-out while it makes
    the next (:func:`_walk` reads that as a walk back), but each keeps everything it saved: a stackless 2.7B
    forward-only benchmark (``snapshot_forward_autograd_2p7b``, its frames dropped) read its 32 layers as 31
    training iterations, each ending at its own peak 166 MiB above the last, and their saved activations as a
    3.63 GiB leak (session 54's metamorphic checks).  The level alone does not tell them from a loop keeping an
    evaluation's graph as big as its climb each iteration (``val_total += loss``, a leak: forms18 seed 170897);
    the graph its output keeps is dropped in one run when the output goes, a leak's never."""
    if lo < 0 or hi <= lo:
        return False
    climb = int(level[lo + 1:hi + 1].max()) - int(level[lo])
    return climb > 0 and int(level[hi]) - int(level[lo]) >= _HELD_CLIMB * climb


#: The fewest blocks a pass keeps that :func:`earlier_pass_held` reads as a graph: autograd keeps every layer's
#: tensors; a pass under no_grad keeps its output alone, and the previous pass's output, held until the rebinding, is
#: no graph (nilarnab's eval loop under no_grad: one 40 MiB logits beside the last one -- booked as a graph, it moved
#: 39 MiB of "held across steps" to activations).
GRAPH_MIN_BLOCKS = 16


def size_repeats(earlier: np.ndarray, own: np.ndarray, unit: int) -> tuple[np.ndarray, int, int]:
    """(the sizes in ``earlier`` left unmatched, the bytes and count matched): the blocks of ``earlier`` whose sizes
    repeat those of ``own``, each of ``own`` matched once (a multiset match).  Sizes are matched as requested, the
    bytes matched counted as the blocks of ``unit`` that hold them (``MemoryEvents.block_unit``): the unit of the
    level they are a part of (blocks freed before the dump: their request rounded up)."""
    sizes, n_own = np.unique(own, return_counts=True)
    left = np.sort(earlier)
    keep = np.ones(left.size, bool)
    matched = blocks = 0
    for size, k in zip(sizes.tolist(), n_own.tolist()):
        lo = int(np.searchsorted(left, size, side="left"))
        take = min(k, int(np.searchsorted(left, size, side="right")) - lo)
        keep[lo:lo + take] = False
        matched += int(rounded_blocks(np.array([size], np.int64), unit)[0]) * take
        blocks += take
    return left[keep], matched, blocks


def earlier_pass_held(me: MemoryEvents, own: np.ndarray) -> tuple[np.ndarray, int, int] | None:
    """Of the blocks held through the whole history (``MemoryEvents.held_unseen``: made before it, live at the dump),
    those that repeat the sizes of a pass's own kept blocks (``own``: requests) -- (the held sizes left unmatched, the
    bytes and count matched) where they repeat ``memory.forward_kept.together`` of ``own``'s blocks and of its bytes;
    None where they do not (or the format cannot tell).

    Why: a forward-only loop with autograd on (``out = model(x)`` again and again) holds the previous pass's graph
    until the new output replaces it; dumped before that, the previous graph is live at the dump and no free of the
    history shows it (saravargas88's 2.7B benchmark: the recorded pass's 773 blocks, 5.23 GiB, and 773 more of the
    same sizes made before the history, beside 295 weights).  No backward ran on it, or its graph would be gone; a
    training step holds one graph at a time.  Why its blocks, its bytes and its sizes: the weights are held through
    the history too (and a training step's optimizer state, in the weights' sizes again), and where a batch's tokens
    equal the model's width an activation has a weight's bytes -- but a pass keeps tensors of sizes no weight has
    (its attention scores, its norms' statistics, its logits), which only another pass repeats in full."""
    held = me.held_unseen
    if held is None or not held.size or own.size < GRAPH_MIN_BLOCKS:
        return None
    left, matched, blocks = size_repeats(held, own, me.block_unit)
    least = T("memory.forward_kept.together")
    if blocks < least * own.size or matched < least * int(rounded_blocks(own, me.block_unit).sum()):
        return None
    sizes, n_own = np.unique(own, return_counts=True)
    pool, n_pool = np.unique(held, return_counts=True)
    at = np.minimum(np.searchsorted(pool, sizes), pool.size - 1)
    whole = (pool[at] == sizes) & (n_pool[at] >= n_own)  # each size of the pass's repeated as often as it holds it
    if whole.sum() < least * sizes.size:
        return None
    return left, matched, blocks


def released_together(me: MemoryEvents, kept: np.ndarray, frees: np.ndarray | None = None) -> bool:
    """Whether the history frees, in one run of frees with no allocation between, blocks of the sizes of ``kept``
    (allocation events) -- those blocks themselves, or blocks made before the history -- as many of each size as
    ``kept`` holds, for ``memory.forward_kept.together`` of its blocks at least.

    Why: a forward run with autograd on keeps its graph until its output is dropped, and dropping it frees the graph
    all at once -- after the pass, or when rebinding ``out = model(x)`` replaces the previous pass's graph as the
    next one is kept.  A leak keeps its blocks for good, its earlier rounds' with them.  Read without stacks, a kept
    pass's layers rise the level by the same blocks each, as a leak's iterations do: a 2.7B forward-only
    benchmark's 32 layers read as a leak of 3.63 GiB over 65 "iterations" (and as 31 training iterations), while the
    history freed the previous pass's 773 blocks (5.23 GiB, every size alike) in one run after them
    (``snapshot_forward_autograd_2p7b`` with its frames dropped; session 54)."""
    least = T("memory.forward_kept.together") * kept.size
    if not kept.size:
        return False
    frees = me.frees() if frees is None else frees  # ``me.frees()``, where the caller has it
    mine = frees[kept]
    gone = np.concatenate([mine[mine < len(me)], me.unseen_frees()])
    if gone.size < least:
        return False
    runs = np.searchsorted(np.flatnonzero(me.delta > 0), gone)  # allocations before each free: a run shares it
    sizes, counts = np.unique(me.delta[kept], return_counts=True)
    for run in np.unique(runs).tolist():
        freed = -me.delta[gone[runs == run]]
        at = np.minimum(np.searchsorted(sizes, freed), sizes.size - 1)
        got_sizes, got = np.unique(freed[sizes[at] == freed], return_counts=True)
        if int(np.minimum(got, counts[np.searchsorted(sizes, got_sizes)]).sum()) >= least:
            return True
    return False


def _kept_again(me: MemoryEvents, walked: list[tuple[int, int]], rounds: list[tuple[int, int]],
                frees: np.ndarray) -> np.ndarray:
    """Event indices of the blocks never freed that a round after the first (``walked``: per round with a backward,
    its walk's last free and its end; ``rounds``: the same rounds' (lo, hi] events) keeps again: made after its walk
    back ends, of a size another such round keeps there too, or made at a place in its allocations at which another
    such round makes a block never freed too (:func:`_kept_places`) -- what the loop keeps again each iteration (a
    leak's blocks); none of the first round's (a first step's state, which ``_check`` lets the first iteration make
    beside its own).

    Why another round's size: what a loop keeps it keeps again each time (:func:`_kept_alike`); blocks live at the
    dump in the last round alone -- the activations of a turn that ran out of memory, read with the last whole
    iteration as one round -- are what the dump came before freeing, no iteration's keep
    (``synthetic.memsnapshot.oom_later_turn``).  Why the place too: a leak kept from the forward
    (``outputs.append(out)``) is made before the walk back, where the backward's gradients are made too -- the
    gradients ``zero_grad(set_to_none=False)`` holds for good sit there in the first round -- and its size may grow
    each iteration (a sequence that grows); the loop runs the same code each iteration, so it keeps the block at the
    same place in the round's sequence of allocations, whatever its size.  Left counted, a ``list`` or ``grow`` leak
    begun after the head made each later iteration one allocation larger than the head's, and the job read the 4
    leaking iterations of 6 or none (h37-probe51m, probe50m's *Left* 1: ``as_recorded(training_iterations(6, layers=2,
    mib=8, set_to_none=False, optimizer_temp=False, leak="list", leak_from=2), context=None)``).  The loss a loop
    holds at the dump, never freed in the last round alone, is at a place the other rounds free theirs: counted."""
    n = len(me)
    made = me.delta > 0
    after = [np.flatnonzero(made[a + 1:b + 1] & (frees[a + 1:b + 1] >= n)) + a + 1 for a, b in walked[1:]]
    sizes = [set(me.delta[k].tolist()) for k in after]
    out = [k[np.isin(me.delta[k], sorted(set().union(*(o for j, o in enumerate(sizes) if j != i))))]
           for i, k in enumerate(after)]
    places = _kept_places(rounds[1:], made, frees)
    out += [_at_places(a, b, places, made, frees) for a, b in rounds[1:]]
    return np.unique(np.concatenate(out)) if out else np.zeros(0, np.int64)


def _kept_places(rounds: list[tuple[int, int]], made: np.ndarray, frees: np.ndarray) -> frozenset[int]:
    """The places (an allocation's index among its round's allocations; ``rounds``: (lo, hi] events) at which two rounds
    or more make a block the history never frees: where the loop keeps a block again each iteration
    (:func:`_kept_again`, :func:`_round_size`).  A first step's state, a dump's live blocks are kept by one round."""
    seen: dict[int, int] = {}
    for a, b in rounds:
        k = np.flatnonzero(made[a + 1:b + 1]) + a + 1
        for i in np.flatnonzero(frees[k] >= made.size).tolist():
            seen[i] = seen.get(i, 0) + 1
    return frozenset(i for i, c in seen.items() if c >= 2)


def _at_places(a: int, b: int, places: frozenset[int], made: np.ndarray, frees: np.ndarray) -> np.ndarray:
    """Event indices of the blocks never freed that events ``(a, b]`` make at ``places`` (:func:`_kept_places`)."""
    k = np.flatnonzero(made[a + 1:b + 1]) + a + 1
    at = np.array(sorted(places), np.int64)
    k = k[at[at < k.size]] if at.size else k[:0]
    return k[frees[k] >= made.size]


def _first_step_state(me: MemoryEvents, walked: list[tuple[int, int]], frees: np.ndarray) -> np.ndarray:
    """Event indices of the state an optimizer made on its first step, in a history recorded without stacks: the
    blocks never freed that one repeat makes after its backward's walk ends (``walked``: per repeat with a backward,
    its walk's last free and the repeat's end) beyond what any other repeat makes there of their size; none where no
    repeat, or more than one, does.

    Why: an optimizer runs after the backward, and its first step makes its state (Adam's two moments a parameter),
    held from then on; a fused or in-place optimizer allocates nothing after it.  Under gradient accumulation with the
    gradients zeroed in place (``zero_grad(set_to_none=False)``) that first step is the one sign in the history of
    where an iteration ends -- the gradients are held alike at every micro-batch's start -- and a framed history reads
    it off the optimizer's frames (``_group_starts``' ``first_step``).  Without frames the state read as the
    backward's (made after its turn), held at every later round's start: each micro-batch read as an iteration, a
    stackless ``list`` leak under 2 micro-batches as 10 iterations of 1 block where 5 of 2 ran (h37-probe47a).  What
    every repeat keeps after its walk (an evaluation's graph kept each iteration, ``val_total += loss``) is no state:
    only the excess of one repeat is, and not the last's: a loop that makes its parameters anew each step (a
    hand-written Adam out of place) frees the old ones, and only the last step's are live at the dump
    (``wild/snapshot_adam_iterations``, its stacks taken away)."""
    n = len(me)
    kept = [np.flatnonzero((me.delta[a + 1:b + 1] > 0) & (frees[a + 1:b + 1] >= n)) + a + 1 for a, b in walked]
    counts = [dict(zip(*np.unique(me.delta[k], return_counts=True))) for k in kept]
    extra: list[tuple[int, list[int]]] = []
    for j, mine in enumerate(counts):
        sizes = [int(s) for s, c in mine.items()
                 if c > max((o.get(s, 0) for i, o in enumerate(counts) if i != j), default=0)]
        if sizes:
            extra.append((j, sizes))
    if len(extra) != 1 or extra[0][0] == len(kept) - 1:
        return np.zeros(0, np.int64)  # the last repeat's excess: what the dump came before freeing, no first step's
    j, sizes = extra[0]
    return kept[j][np.isin(me.delta[kept[j]], sizes)]


def _head_openings(me: MemoryEvents, troughs: list[int], least: int, made: np.ndarray,
                   frees: np.ndarray) -> list[int]:
    """The events that open rounds of forward and backward in the history's head (the events up to the first of
    ``troughs``, before the repeats), where each opens as every repeat does: an allocation of the repeats' opening
    size (each trough's next event) at their level less what the history never frees (within ``least``, the period's
    smallest block) -- the last of a run of allocations there (weights made before it sit at that level too) --
    whose round, up to the next one's opening or the head's end, walks its forward back (:func:`_walk`) and makes as
    many allocations as a repeat (:func:`_round_size`, within ``job.snapshot_iteration_alike``).

    Why: the repeats are read from the sizes of the blocks the history frees, and under
    ``zero_grad(set_to_none=False)`` the job's first backwards make gradients it never frees -- their rounds allocate
    fewer such blocks than every later one, so they fall before the repeats, and the job's first iteration lost its
    first micro-batches: read from the second on, 4 iterations where 5 ran, or each micro-batch an iteration
    (h37-probe47a).  As many allocations: where the repeats are whole iterations of several micro-batches, a head's
    micro-batch is no repeat's like.  A head of set-up, or one a ring buffer cut inside a round, opens none.  The
    allocations are counted less those at the places where the repeats keep a block again (:func:`_kept_places`): a
    leak begun after the head is no part of what the head's rounds must make."""
    never = _never_freed(me)
    opens = [t + 1 for t in troughs]
    alloc = np.flatnonzero(made[:troughs[0] + 1])
    level = me.before(alloc) - never[alloc]
    opened = me.before(np.asarray(opens, dtype=np.int64))
    floor = float(np.mean([int(b) - int(never[o]) for b, o in zip(opened.tolist(), opens)]))
    low = level < floor + least
    last = low & ~np.append(low[1:], False)  # the last allocation of each run at the level
    at = alloc[last & (me.delta[alloc] == me.delta[opens[0]])].tolist()
    repeats = [(a - 1, b - 1) for a, b in zip(opens[:-1], opens[1:])]
    places = _kept_places(repeats, made, frees)
    sizes = [_round_size(a, b, made, frees, me.delta, places) for a, b in repeats]
    per = float(np.median([x for x in sizes if x is not None])) if any(x is not None for x in sizes) else 0.0
    return _alike_rounds(at, troughs[0] + 1, per, made, frees, me.delta, places)


def _alike_rounds(at: list[int], end: int, per: float, made: np.ndarray, frees: np.ndarray,
                  delta: np.ndarray, places: frozenset[int] = frozenset()) -> list[int]:
    """Of the head's openings ``at`` (their rounds running to the next one's, the last to ``end``), those opening a
    round -- alone, or with the openings after it as one -- of as many allocations as a repeat (``per``, within
    ``job.snapshot_iteration_alike``; :func:`_round_size`).

    Why together: under gradient accumulation with the gradients zeroed in place every micro-batch opens at the
    level an iteration does, so the head's first iteration shows an opening a micro-batch; where the repeats are
    whole iterations, no micro-batch alone is as large as one, and that iteration fell to the set-up -- the job read
    5 of 6 iterations (forms18 116719: ``as_recorded(training_iterations(6, layers=2, mib=64, micro_batches=2,
    set_to_none=False, leak="list", leak_mib=4), context=None)``; probe47a's *Left*).  Its micro-batches together
    make what a repeat makes."""
    alike = T("job.snapshot_iteration_alike")
    ends = [*at[1:], end]
    out: list[int] = []
    i = 0
    while i < len(at):
        for j in range(i, len(at)):
            size = _round_size(at[i] - 1, ends[j] - 1, made, frees, delta, places)
            if size is not None and abs(size - per) <= alike * per:
                out.append(at[i])
                i = j
                break
            if size is not None and size > per:
                break  # the rounds together outgrow a repeat
        i += 1
    return out


def _round_size(lo: int, hi: int, made: np.ndarray, frees: np.ndarray, delta: np.ndarray,
                places: frozenset[int] = frozenset()) -> int | None:
    """The allocations events ``(lo, hi]`` make, less the blocks made after their backward's walk back ends that the
    history never frees (an optimizer's state, made once on its first step) and those up to its end made at
    ``places`` (:func:`_kept_places`: where the repeats keep a block again); None where they walk nothing back.

    Why the places: a leak kept from the forward (``outputs.append(out)``) is made before the walk ends, beside the
    gradients the job's first backward holds for good (``zero_grad(set_to_none=False)``, the head's own, which count);
    begun after the head (``if step >= warmup``), it made each repeat one allocation larger than the head's rounds, so
    none was read as a repeat (:func:`_head_openings`) and the job lost the head's iterations (h37-probe51m).  Left
    out only at the repeats' places: the gradients are made at no place two repeats keep a block."""
    walk = _walk(lo, hi, made, frees, delta)
    if walk is None:
        return None
    after = np.flatnonzero(made[walk[1] + 1:hi + 1]) + walk[1] + 1
    kept = _at_places(lo, walk[1], places, made, frees)
    return int(made[lo + 1:walk[1] + 1].sum()) - kept.size + int((frees[after] < made.size).sum())


def _repeating(me: MemoryEvents, frees: np.ndarray) -> tuple[np.ndarray, tuple[int, int, int]] | None:
    """(the allocations read, (period, first, covered) of :func:`_period` over their sizes) of the reading that holds
    more whole repeats: every allocation, or those the history frees -- of two that hold as many, the one whose
    repeats begin earlier, every allocation on a full tie; None where neither repeats.

    Why: an iteration that makes state once -- an optimizer's on its first step (Adam's moments), a cache on the
    first call -- inserts allocations into the sequence of sizes the later iterations repeat, so that iteration does
    not repeat theirs and the period was read from the later ones alone: the first iteration fell to the set-up, and
    a history of two iterations (the H200 OOM snapshot) read none.  State made once is held from then on, so it is
    never freed in the history: without the blocks never freed the first iteration repeats the others.  Blocks a
    loop holds at the dump from its last iteration (gradients, a loss) are never freed either, and taking them out
    cuts that repeat short.  So of readings holding as many whole repeats, the earlier wins: the history before the
    repeats is never a step, the rest after the last is one more iteration where it is alike (:func:`_check`), so
    the reading that starts at the first iteration reads it and loses no later one (snapshot_adam_iterations: its
    warm-up iteration read, as its frames read it) -- unless its rest holds a period or more of its allocations
    where the other's holds less: the loop runs to the dump, so past its last whole repeat only the iteration the dump
    cut or came before freeing lies; a rest of whole periods that do not repeat says the repeats were a coincidence
    of a few sizes (a stackless forward's [8 MiB, 8 MiB, loss] twice, the loop's later iterations freeing gradients
    its first kept: :func:`_past_made_once`).  Where the freed blocks' repeats are parts of every allocation's (the
    micro-batches of an iteration that keeps blocks each time: :func:`_parts_of`), every allocation's is read.  Every
    allocation's reading reads the blocks never freed by their place (:func:`_kept_read`): a leak's that grows, and
    the head's made once, are no break in the loop's repeats nor a part of them."""
    every = np.flatnonzero(me.delta > 0)
    freed = every[frees[every] < len(me)]
    best: tuple[np.ndarray, tuple[int, int, int]] | None = None
    rank: tuple[int, bool, bool, int] | None = None
    read: list[tuple[np.ndarray, tuple[int, int, int]]] = []
    for alloc in (every, freed):
        got = _period(me.delta[alloc], frees[alloc] >= len(me)) if alloc.size >= 2 * _MIN_ALLOCS else None
        if got is None:
            continue
        got = _past_made_once(frees[alloc], len(me), *got)
        read.append((alloc, got))
        if len(read) == 2 and _parts_of(me.delta[every], frees[every] < len(me), read[0][1], got):
            return read[0]
        # whole repeats, then blocks kept for good kept again a period on, then fewer than a period's allocations
        # left after the repeats, then the earlier first allocation (event)
        mine = (got[2] // got[0], _kept_alike(frees[alloc], len(me), *got), alloc.size - got[1] - got[2] < got[0],
                -int(alloc[got[1]]))
        if rank is None or mine > rank:
            best, rank = (alloc, got), mine
    return best


def _parts_of(sizes: np.ndarray, freed: np.ndarray, whole: tuple[int, int, int], part: tuple[int, int, int]) -> bool:
    """Whether the reading of every allocation (``whole``: its period, first, cover over ``sizes``; ``freed`` per
    allocation: whether the history frees it) is the loop's iteration, and the reading of the freed blocks alone
    (``part``, over those blocks) a part of it: each repeat of ``whole`` keeps blocks for good (:func:`_kept_alike`)
    and frees k >= 2 of ``part``'s periods, the freed sizes in it repeating every ``part``'s period, and ``whole``
    holds as many whole repeats as ``part`` holds k of its own.

    Why: under gradient accumulation with the gradients zeroed in place every micro-batch frees the same blocks, so
    the freed blocks repeat once a micro-batch -- more whole repeats than any reading of iterations holds, and so
    they won (:func:`_repeating`) -- while what the loop keeps for good each iteration (a leak's blocks, made after
    the step) falls once every k of them.  Read as iterations, the micro-batches were unlike (one in k keeps more)
    and no iteration was read: a stackless ``graph`` leak of 8 iterations of 3 micro-batches read as the whole
    capture, no leak (h37-probe49m, forms18 181783: ``as_recorded(training_iterations(8, layers=2, mib=32,
    micro_batches=3, set_to_none=False, optimizer_temp=False, leak="graph", leak_mib=16), context=None)``).  Blocks
    made once (an optimizer's first-step state) are kept by no later repeat, so where they are what the freed blocks
    leave out, no repeat of every allocation keeps alike and the freed reading stands."""
    p, first, cover = whole
    q = part[0]
    mine = freed[first:first + p]
    let_go = sizes[first:first + p][mine]  # the sizes one repeat frees, in order
    k = let_go.size // q
    if mine.all() or k < 2 or let_go.size != k * q or (let_go[:-q] != let_go[q:]).any():
        return False
    if not _kept_alike(np.where(freed, 0, sizes.size), sizes.size, *whole):
        return False
    return cover // p >= _parts_read(freed, first, part) // k


def _parts_read(freed: np.ndarray, first: int, part: tuple[int, int, int]) -> int:
    """The whole repeats of ``part`` (period, first, cover over the freed allocations; ``freed`` per allocation) from
    allocation ``first`` on, where the reading of every allocation begins.

    Why from there: what the freed blocks repeat before it is the head's, read by its rounds
    (:func:`_head_openings`) as every allocation's repeats are, not a whole repeat it fails to hold.  With the
    gradients freed at ``zero_grad(set_to_none=True)`` the first iteration's micro-batches free what every later one
    does, so the freed blocks repeat from the first micro-batch on, while every allocation's reading begins after the
    first step's state (:func:`_past_made_once`); a leak begun after the head (``leak_from``) begins it at the first
    iteration that keeps.  Counted in, the freed reading held an iteration or two more than every allocation's could
    and won -- each micro-batch read as an iteration, unlike (one in k keeps the leak): no iteration at all, or 11
    where 6 ran (h37-probe50m: ``as_recorded(training_iterations(3, layers=2, mib=8, micro_batches=2,
    hold_loss=False, optimizer_temp=False, leak="graph"), context=None)``; ``training_iterations(6, layers=2, mib=8,
    micro_batches=2, set_to_none=False, hold_loss=False, optimizer_temp=False, leak="graph", leak_from=2)``)."""
    q, start, cover = part
    at = np.flatnonzero(freed)[start:start + cover]  # each freed allocation's place among every allocation
    return int((at >= first).sum()) // q


def _past_made_once(frees: np.ndarray, n: int, p: int, first: int, cover: int) -> tuple[int, int, int]:
    """(``p``, first, cover) of a reading (:func:`_period`) begun after the last allocation of its first repeat that
    the history never frees while its twin a period on is freed (``frees`` per allocation read, ``n`` past every
    event); as it is where none is, or where fewer than two whole repeats would be left.

    Why: sizes alone stretch a run of repeats back over blocks made once that match, by size, blocks the next
    repeat makes and frees -- a fused optimizer's state on its first step (64-MiB moments) beside the next
    iteration's 64-MiB gradients, zeroed in place and so freed only from the second iteration on.  Begun there, the
    every-allocation reading paired the state with the gradients (:func:`_kept_alike` failed) and lost to a
    coincidental reading of the freed blocks: 2 repeats of a forward's [8 MiB, 8 MiB, loss], the loop's last two
    iterations read as one (h37-probe48a2: ``as_recorded(training_iterations(3, layers=2, mib=8, set_to_none=False,
    optimizer_temp=False, leak="graph"), context=None)``).  What a loop keeps it keeps again each time; a block
    made once is the head's, before the repeats."""
    head = np.arange(first, first + p)
    odd = head[(frees[head] >= n) & (frees[head + p] < n)]
    if not odd.size or cover - (int(odd[-1]) + 1 - first) < 2 * p:
        return p, first, cover
    start = int(odd[-1]) + 1
    return p, start, cover - (start - first)


def _kept_alike(frees: np.ndarray, n: int, p: int, first: int, cover: int) -> bool:
    """Whether no allocation the history never frees (``frees`` per allocation read, ``n`` past every event) has its
    twin a period on, inside the whole repeats, freed.

    Why: what a loop keeps for good -- a leak's block, its weights -- it keeps again each iteration it makes it; a
    block made once (Adam's state on the first step) has no twin.  A period read over every allocation from sizes alone
    can pair a block kept for good with one the next repeat frees where the loop's blocks are all one size: 3
    iterations of a 4-layer model whose weights, gradients, Adam's state and activations are all 64 MiB (forms18 seed
    116372) read a period of 2 iterations from the weights' first -- as many whole repeats as the freed blocks' true
    period holds, and earlier, so it won and the job merged iterations 2 and 3.  The loop's last iteration's blocks
    held at the dump (freed earlier, kept in it) are the reverse, and fall in no earlier repeat's twin."""
    whole = cover // p
    kept = frees[first:first + (whole - 1) * p] >= n
    return not (kept & (frees[first + p:first + whole * p] < n)).any()


def _period(sizes: np.ndarray, kept: np.ndarray | None = None) -> tuple[int, int, int] | None:
    """(period, first allocation, allocations covered) of the longest stretch of ``sizes`` that repeats with one
    period -- two repeats at least, over half the allocations at least -- the shortest period on a tie (a multiple of
    it covers no more); None where none does.  Why the candidates: a period's every allocation recurs one period on,
    so an allocation inside the repeats (near the middle) meets its size again at each multiple of it; of those near
    the middle the rarest size offers fewest distances to try, from its first allocation there and from its last:
    the first may be the head's -- a first iteration that allocates otherwise (its gradients kept by
    ``zero_grad(set_to_none=False)``) -- whose distances to the loop's are no period (h37-probe52m:
    ``as_recorded(training_iterations(3, layers=5, params=2, mib=8, set_to_none=False, optimizer_temp=False),
    context=None)``: the first loss 12 and 20 allocations from the others, where the loop's period is 8; none read).

    ``kept`` (per allocation: a block the history never frees; every allocation's reading, :func:`_repeating`) reads
    those blocks by their place, not as the loop's work (:func:`_kept_read`).  Why: a short capture of a small model
    holds more blocks made once at its head -- its weights, an optimizer's first-step state, the gradients its first
    backward makes and ``zero_grad(set_to_none=False)`` holds -- than its loop makes in an iteration, and a leak kept
    from the forward may grow each iteration.  Read as the loop's, the head held the middle (no distance between two
    iterations was tried) and outweighed the half, and a growing leak broke every repeat; where the loop holds its
    loss at the dump, the freed blocks' last repeat is cut short too, so a 3-iteration loop's one whole repeat read
    2 iterations of 3 or none (h37-probe52m, probe51m's *Left*: ``as_recorded(training_iterations(3, layers=2, mib=8,
    set_to_none=False, optimizer_temp=False, leak="list"), context=None)``, no leak read; ``micro_batches=2`` with
    the temporary: none, its leak as 6 x 1 block where 3 x 2 ran; ``leak="grow"`` at 2 and 6 layers)."""
    m = sizes.size
    _, inv, counts = np.unique(sizes, return_inverse=True, return_counts=True)
    inv = inv.reshape(-1)
    tried: list[int] = []
    # the middle of every allocation, and of those the history frees: the loop's, where blocks made once hold the head
    for loop in (np.arange(m), *([np.flatnonzero(~kept)] if kept is not None and kept.any() else [])):
        mid = loop[loop.size // 4:max(3 * loop.size // 4, loop.size // 4 + 1)]
        c = counts[inv[mid]]
        if (c >= 2).any():
            anchor = int(mid[c >= 2][np.argmin(c[c >= 2])])
            for a in (anchor, int(mid[inv[mid] == inv[anchor]][-1])):  # its first and last allocation there
                gaps = np.unique(np.abs(np.flatnonzero(inv == inv[a]) - a))
                tried += [g for g in gaps[(gaps > 0) & (gaps <= m // 2)][:_PERIODS].tolist() if g not in tried]
    best: tuple[int, int, int] | None = None
    for p in tried:
        same = sizes[:-p] == sizes[p:]
        if kept is not None:
            same = _kept_read(same, kept, p)
        start, run = _longest_run(same)
        cover = run + p
        weighed = m - (int(kept[:start].sum()) if kept is not None else 0)
        if cover >= 2 * p and 2 * cover >= weighed and (best is None or cover > best[2]):
            best = (p, start, cover)
    return best


def _kept_read(same: np.ndarray, kept: np.ndarray, p: int) -> np.ndarray:
    """``same`` (per allocation: its size is the one a period ``p`` on) with the blocks never freed (``kept``) read by
    place: a kept block repeats a kept block a period on whatever their sizes, and no stretch holds ``p`` kept blocks
    in a row (a repeat that frees nothing).  :func:`_period` also weighs its half less the kept blocks before the
    stretch.

    Why: what a loop keeps it keeps at the same place each iteration (:func:`_kept_places`), whatever the size -- a
    list of outputs whose length grows each time; what is made once (weights, an optimizer's state, gradients held in
    place) is the set-up's however long the loop runs, no part of the half the loop must cover.  But an iteration
    frees what its forward made, so a repeat of kept blocks alone is none: read so, Adam's moments made in a row (one
    size a weight) repeat at any period shorter than their run and outcover a short loop (24 weights of 16 MiB:
    the stretch fell on the moments, whose repeats walk nothing back, and no iteration was read)."""
    same = same | (kept[:-p] & kept[p:])
    run = np.concatenate(([0], np.cumsum(kept, dtype=np.int64)))
    full = np.flatnonzero(run[p:] - run[:-p] == p)  # windows [i, i + p) of kept blocks alone
    same[full[full < same.size]] = False  # a stretch holds window i where it holds same[i - 1] or same[i]
    same[full[(full > 0) & (full <= same.size)] - 1] = False
    return same


def _troughs(me: MemoryEvents, alloc: np.ndarray, p: int, first: int, cover: int) -> list[int]:
    """The events just before each repeat's first allocation, inside the repeats: the place in the period where the
    level before an allocation, less what the history never frees, is lowest on average -- an iteration starts at the
    level held between iterations -- and, of a run of places at that level, the last: where the climb to the
    forward's peak begins (:func:`_last_at_floor`).

    Why less the blocks never freed: a leak (``outputs.append(out)``, ``val_total += loss``) raises the level after
    its blocks each iteration, so the places just before them sat lowest on average, and a leak made after the
    optimizer's step put the iteration's start at the step: each repeat read as [step, leak, forward, backward], the
    first iteration's forward and backward fell to the history before the repeats, and the last, whole, to a cut tail
    -- 2 iterations of 3 (h37-probe46g: ``as_recorded(training_iterations(3, set_to_none=False, leak="graph"),
    context=None)``).  Why the last of a run: with the gradients zeroed in place (``zero_grad(set_to_none=False)``)
    the optimizer's temporary is made and freed at the level the next forward opens at -- a tie the first place
    broke toward the step.  Why over the whole repeats alone: a part repeat after them (the history ends inside one,
    or its last allocation, a loss held at the dump, is set aside as never freed) holds its first places only, so
    they were averaged over one sample more than the rest -- the last micro-batch's, the highest -- and the gradient
    after the loss tied the forward's opening: a stackless loop of 3 iterations of 3 micro-batches under
    ``hold_loss`` opened every round at its first gradient, no round walked back, and read no iteration
    (h37-probe51m: ``as_recorded(training_iterations(3, layers=2, mib=8, micro_batches=3, optimizer_temp=False),
    context=None)``)."""
    idx = np.arange(first, first + cover // p * p)  # whole repeats: each place's mean over the same ones
    where = (idx - first) % p
    never = _never_freed(me)
    before = (me.before(alloc[idx]) - never[alloc[idx]]).astype(np.float64)
    means = np.bincount(where, weights=before, minlength=p) / np.bincount(where, minlength=p)
    r = _last_at_floor(means, int(me.delta[alloc[first:first + p]].min()))
    return [int(alloc[i]) - 1 for i in range(first + r, first + cover, p)]


def _last_at_floor(means: np.ndarray, least: int) -> int:
    """The place (index of ``means``, a cycle) that opens an iteration: of the runs of consecutive places at the lowest
    mean -- above it by less than ``least``, the period's smallest block: no place so near holds one more block in
    every repeat -- the longest (the first of those), its last place.

    Why the longest: with the gradients zeroed in place, every micro-batch of gradient accumulation opens at the
    level the iteration does, and only the step tells them apart -- its temporaries are made and freed at that
    level, so the iteration's start ends a run of places there, a micro-batch's is one alone.  Taken at the first,
    a loop of 7 iterations of 2 micro-batches opened each at its second: 6 iterations, a leak's rounds cut
    [1, 2, 2, 2, 2, 2, 3] blocks (h37-probe46g: ``as_recorded(training_iterations(7, micro_batches=2,
    set_to_none=False, leak="list"), context=None)``).  Why near, not equal: the loss the loop holds at the dump is
    never freed, so it was taken out of the last repeat's levels only -- 512 B on average over a third of them, and
    the forward's first allocation, above the step's, fell out of the run (``training_iterations(3, layers=4,
    set_to_none=False, leak="graph")``)."""
    low = means < means.min() + least
    n = means.size
    if low.all():
        return n - 1
    best, best_len = 0, 0
    for r in np.flatnonzero(low & ~np.roll(low, 1)).tolist():  # each run's first place (its place before is above)
        k = 1
        while low[(r + k) % n]:
            k += 1
        if k > best_len:
            best, best_len = (r + k - 1) % n, k
    return best


def _longest_run(eq: np.ndarray) -> tuple[int, int]:
    """(start, length) of the longest run of True in ``eq``; (0, 0) where none."""
    d = np.diff(np.concatenate(([0], eq.astype(np.int8), [0])))
    s, e = np.flatnonzero(d == 1), np.flatnonzero(d == -1)
    if not s.size:
        return 0, 0
    j = int(np.argmax(e - s))
    return int(s[j]), int(e[j] - s[j])


def _turn(lo: int, hi: int, made: np.ndarray, frees: np.ndarray, delta: np.ndarray) -> int | None:
    """The event at which the backward of the iteration between troughs ``lo`` and ``hi`` begins (:func:`_walk`'s
    first free), or None where it shows no backward."""
    walk = _walk(lo, hi, made, frees, delta)
    return None if walk is None else walk[0]


def _walk(lo: int, hi: int, made: np.ndarray, frees: np.ndarray, delta: np.ndarray) -> tuple[int, int] | None:
    """(first free, last free) of the backward's walk back in the iteration between troughs ``lo`` and ``hi`` (event
    indices): the frees of the forward's blocks it walks back, the first opening the backward (:func:`_turn`), the
    last ending it (an optimizer's step comes after); None where the iteration shows no backward.

    Why: a backward frees the tensors its forward saved in reverse order of their making, so their lifetimes nest
    (made a1 < ... < an, freed fn < ... < f1), while it makes gradients between those frees.  The longest such nest
    among the blocks the iteration makes and frees (:func:`_nest`) is that walk: a forward's temporaries are freed
    before it, gradients made after fn are freed after f1 (``zero_grad()``) and nest with nothing.  Where it holds
    :data:`_FALL_LIFO` of the blocks made before fn and freed from fn on (:data:`_MIN_NEST` at least), and a block is
    made between fn and f1, it is a backward.  Not the level's peak: a backward that makes gradients larger than the
    activations it frees climbs on past the forward's end.  A forward whose graph is dropped unused frees its blocks
    in the same order with nothing made between; a pass under ``no_grad`` frees most of its blocks as it goes.  Of
    the blocks live at the walk's start, only those made from the nest's first on count: under gradient accumulation
    with ``zero_grad()`` freeing them, the gradients the first micro-batch's backward made are live through every
    later backward's walk, and counted in they sank it below the share -- a stackless loop of 3 iterations of 3
    micro-batches read no iteration (h37-probe46g: ``as_recorded(training_iterations(3, layers=5, mib=8,
    micro_batches=3, leak="graph"), context=None)``).  A block freed as soon as it is made saves nothing for a
    backward: a later micro-batch's gradient, made and summed into ``.grad`` in place mid-walk, threaded that walk's
    nest (made after its first free) and, trimmed, left it too short to read, so no repeat read a backward
    (h37-walk53c: ``--forms18`` seed 320938, 6 iterations of 2 micro-batches read as none)."""
    blocks = np.flatnonzero(made[lo + 1:hi + 1]) + lo + 1
    blocks = blocks[frees[blocks] <= hi]
    saved = blocks[frees[blocks] > blocks + 1]  # a block freed as soon as made (a gradient summed in place) saves none
    by_free = saved[np.argsort(frees[saved], kind="stable")]
    for _ in range(_NESTS):
        chain = _nest(by_free)
        if chain.size < _LEAST_NEST:
            return None
        nest = _older_pass_trimmed(chain, blocks, frees)
        if nest.size < _LEAST_NEST:
            by_free = by_free[~np.isin(by_free, chain)]  # a chain around an older pass's block alone: no walk
            continue
        first, last = int(frees[nest[0]]), int(frees[nest[-1]])
        if made[first:last].any():
            # the forward's own blocks live when the walk begins: made from its first saved block on (``nest[-1]``,
            # freed last) -- gradients an earlier micro-batch's backward made, held to the step, are none of them
            walked = by_free[(by_free >= nest[-1]) & (by_free < first) & (frees[by_free] >= first)]
            if nest.size < _MIN_NEST:
                return (first, last) if _short_walk(nest, blocks, first, last, made, frees, delta) else None
            return (first, last) if nest.size >= _FALL_LIFO * walked.size else None
        if _gradients_before(nest, first, last, made, frees, delta):
            # the forward's blocks live as the walk begins: made from its first saved block to its last (the
            # gradients made after them are the backward's)
            walked = by_free[(by_free >= nest[-1]) & (by_free <= nest[0]) & (frees[by_free] >= first)]
            return (first, last) if nest.size >= _FALL_LIFO * walked.size else None
        by_free = by_free[~np.isin(by_free, nest)]  # freed at once: no walk (see _NESTS)
    return None


@dataclass(frozen=True)
class FirstStep:
    """A history's one backward and the optimizer's first step after it, read from its pattern (:func:`first_step`)."""

    walked: int  # the forward's blocks the backward walks back
    grads: int  # the blocks of a weight's size made as it walks (gradients)
    state: int  # the blocks of a weight's size made after the walk and held to the dump (the optimizer's state)
    state_bytes: int


def first_step(me: MemoryEvents) -> FirstStep | None:
    """The backward and first optimizer step of a history recorded without stacks that the whole of it shows once:
    one walk back of the forward's blocks (:func:`_walk`, over the whole history) that makes blocks of a weight's size
    as it goes (gradients), then, after its last free, blocks of a weight's size made and held to the dump (an
    optimizer's state, made on its first step and kept); None where it shows no such walk or no such state.

    A weight's size: of a block the history never frees made before the first block it frees (its set-up), or of a
    block live at the dump that no event made (weights loaded before the recording, ``MemoryEvents.held_unseen``) --
    not of a block made after, which a forward kept for its backward holds for good as well.

    Why: the three marks of a training step -- the forward's saved blocks walked back while gradients the size of
    parameters are made, then state in those sizes made once and kept -- were read only where a loop repeats them
    (:func:`pattern_phases`): a history of one iteration, no frames and too few blocks at its peak for one walk to
    tell a small model's backward from a pass under ``no_grad`` (``job.kind._stackless_backward``), read "unknown"
    (session 71 snap71's *Left* 3: ``as_recorded(training_iterations(iterations=1, layers=3, params=2),
    context=None)``).  Together they are unambiguous: a pass under ``no_grad`` walks nothing back, a graph dropped
    unused makes nothing as it frees, and neither then makes blocks of its weights' sizes to keep for good -- an
    inference server's cache keeps blocks of its keys' and values' sizes, made during its forwards, not after a walk."""
    n = len(me)
    if int((me.delta > 0).sum()) < _MIN_ALLOCS or me.baseline != "absolute":
        return None
    made = me.delta > 0
    frees = me.frees()
    walk = _walk(-1, n - 1, made, frees, me.delta)
    if walk is None:
        return None
    first, last = walk
    alloc = np.flatnonzero(made)
    opened = alloc[frees[alloc] == first]  # the block the walk frees first: the forward's last saved
    if not opened.size:
        return None
    walked = alloc[(alloc <= int(opened[0])) & (frees[alloc] >= first) & (frees[alloc] <= last)]
    # the set-up: what the history makes before the first block it frees (a forward kept for a backward never run
    # holds its earlier layers' blocks for good too -- they are no weights: ``forward_rebound(temps=4)``)
    transient = alloc[frees[alloc] < n]
    sizes = _weight_sizes(int(transient.min()) if transient.size else n, made, frees, me.delta)
    if me.held_unseen is not None and me.held_unseen.size:
        sizes = np.union1d(sizes, me.held_unseen)
    if not sizes.size:
        return None
    grads = alloc[(alloc > int(opened[0])) & (alloc < last) & np.isin(me.delta[alloc], sizes)]
    state = alloc[(alloc > last) & (frees[alloc] >= n)]
    if not grads.size or not state.size or not np.isin(me.delta[state], sizes).all():
        return None
    return FirstStep(int(walked.size), int(grads.size), int(state.size), int(me.delta[state].sum()))


def _gradient_held(lo: int, hi: int, made: np.ndarray, frees: np.ndarray, delta: np.ndarray) -> bool:
    """Whether the stretch of events ``(lo, hi]`` frees last a block of a weight's size (:func:`_weight_sizes`) that
    it made while an earlier block of it was live: a gradient, made as the backward opens and held to ``zero_grad``
    after the forward's blocks are freed.

    Why: a one-layer model's backward frees one saved block -- no walk back to read (:data:`_LEAST_NEST`) -- and its
    loop of such iterations read as forward passes, "inference" (``training_iterations(iterations=3, layers=1,
    params=1, hold_loss=False)`` recorded ``context=None``; session 71 passes71).  A forward pass drops its output
    with its graph; it makes no block of its weights' size to outlive the rest.  Said only to keep a stretch from
    reading as a pass (the kind then not read), never as training."""
    blocks = np.flatnonzero(made[lo + 1:hi + 1]) + lo + 1
    blocks = blocks[frees[blocks] <= hi]
    if blocks.size < 2:
        return False
    j = int(blocks[np.argmax(frees[blocks])])
    earlier = blocks[blocks < j]
    if not (frees[earlier] > j).any():
        return False
    return bool(np.isin(delta[j], _weight_sizes(lo + 1, made, frees, delta)))


def _gradients_before(nest: np.ndarray, first: int, last: int, made: np.ndarray, frees: np.ndarray,
                      delta: np.ndarray) -> bool:
    """Whether a nest that makes nothing between its frees (``first`` .. ``last``; ``nest``: event indices of its
    blocks' allocations, the first freed first) is still a backward's walk: between its last block made and its first
    free a block of a weight's size (:func:`_weight_sizes`) is made that outlives the walk (freed after its last free,
    or never) -- a gradient, made as the backward opens and held to the optimizer's step.

    Why: a backward frees the forward's saved blocks in reverse order while it makes each parameter's gradient, but
    where the gradients are made before the first of those frees -- one parameter's (the model's first layer to walk
    back holds it), every replica's at once (``nn.DataParallel``'s reduce), one large weight's -- nothing is made
    between the frees, and the walk read as a forward's graph dropped unused.  A stackless training loop whose
    iterations made their gradients so then read as forward passes, "inference" (session 71 snap71's *Left* 1:
    ``training_iterations(params=1, hold_loss=False)``, ``attention_math_steps()``, ``data_parallel()``, recorded
    ``context=None``).  A dropped graph makes nothing that outlives it: its output (the loss) is freed before or with
    it, and no block of a weight's size is made after the forward to be held past its teardown."""
    at = np.flatnonzero(made[int(nest[0]) + 1:first]) + int(nest[0]) + 1
    at = at[frees[at] > last]
    if not at.size:
        return False
    return bool(np.isin(delta[at], _weight_sizes(int(nest[-1]), made, frees, delta)).any())


def _older_pass_trimmed(nest: np.ndarray, blocks: np.ndarray, frees: np.ndarray) -> np.ndarray:
    """``nest`` (:func:`_nest`: event indices of its blocks' allocations, the first freed first) less its deepest
    blocks while a block made before the deepest (of ``blocks``: those its iteration makes and frees) is freed between
    the nest's first free and the deepest's.

    Why: a backward walks back what its own forward saved, and that forward made no block a block older than it
    outlives; a block made by an earlier pass -- the gradient the first micro-batch's backward made, held to
    ``zero_grad()`` after the step -- nests around a later micro-batch's walk by its lifetime alone.  Taken as that
    walk's deepest block, the walk "ended" at ``zero_grad()``, after the first step's moments, and the head's first
    iteration, counted with them (:func:`_round_size`), was no repeat's like: a stackless ``graph`` leak under 2-3
    micro-batches with ``zero_grad(set_to_none=True)`` read n-1 of n iterations (h37-probe50m:
    ``as_recorded(training_iterations(3, layers=2, mib=8, micro_batches=2, optimizer_temp=False, leak="graph"),
    context=None)``).  Its twin, the gradient made beside it and freed first, is such a block: freed inside the span,
    made before the deepest."""
    if nest.size < 2:
        return nest
    first = int(frees[nest[0]])
    while nest.size >= 2:
        deep = int(nest[-1])
        older = blocks[blocks < deep]
        f = frees[older]
        if not ((f > first) & (f < frees[deep])).any():
            break
        nest = nest[:-1]
    return nest


def _short_walk(nest: np.ndarray, blocks: np.ndarray, first: int, last: int, made: np.ndarray, frees: np.ndarray,
                delta: np.ndarray) -> bool:
    """Whether a nest shorter than :data:`_MIN_NEST` (event indices of its blocks' allocations, the first freed first;
    its frees ``first`` .. ``last``) is a backward's walk back (:data:`_LEAST_NEST`): it frees every block made from
    its deepest to its last made that is live at its start (``blocks``: those its iteration makes and frees; a chain
    freed at once counted too; a gradient made after them and before the first free is the backward's), and makes
    no more bytes between its frees than it frees, of blocks the history frees (gradients zeroed in place, made by
    the job's first backward and held for good, are the backward's own).

    Why both: a backward walks back all the forward saved, and frees those activations as it makes the gradients; a
    forward frees its temporaries as it goes and climbs on -- a short nest there leaves a block of that stretch to a
    later chain (wild ``snapshot_attn_fwd_autograd``'s eager attention: 3 nested blocks, a fourth freed at the
    pass's end), or makes more between its frees than they free (``snapshot_attn_sweep_cache``: a 128 KiB and a 512
    MiB block nested while the scores' 1 GiB is made).  A 2-layer backward whose gradients outweigh the activations
    it frees reads a walk where they are its weights' sizes (:func:`_weight_sizes`)."""
    every = blocks[(blocks >= nest[-1]) & (blocks <= nest[0]) & (frees[blocks] >= first)]
    between = np.flatnonzero(made[first:last]) + first
    between = between[frees[between] < made.size]  # gradients held for good (zeroed in place) are no climb
    between = between[~np.isin(delta[between], _weight_sizes(int(nest[-1]), made, frees, delta))]
    return nest.size >= every.size and int(delta[between].sum()) <= int(delta[nest].sum())


def _weight_sizes(before: int, made: np.ndarray, frees: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """The sizes of the blocks made before event ``before`` that the history never frees: a model's weights (and
    what else it keeps for good), each a gradient's size.

    Why: a backward makes each parameter's gradient as it walks back -- a block of its weight's size, held to the
    step or added in place and freed -- so a 2-layer model's 64-MiB gradient made between the frees of its two 8-MiB
    activations outweighs them and read as a forward's climb (:func:`_short_walk`): no walk, no iteration, the leak
    unread (h37-probe47x, forms18 132066: ``as_recorded(training_iterations(8, layers=2, mib=8, micro_batches=3,
    optimizer_temp=False, leak="list"), context=None)``).  A forward's climb (the attention sweeps' 1-GiB scores)
    makes blocks no kept block's size."""
    kept = np.flatnonzero(made[:before])
    return np.unique(delta[kept[frees[kept] >= made.size]])


def _nest(by_free: np.ndarray) -> np.ndarray:
    """The longest run of blocks (event indices of their allocations, in the order they are freed) each made before
    the one freed before it: lifetimes nested one in the other.  Longest decreasing subsequence, patience sort."""
    tails: list[int] = []  # per length - 1: the index in by_free ending the best run of that length (its -value)
    keys: list[int] = []
    parent = np.full(by_free.size, -1, np.int64)
    for i, v in enumerate((-by_free).tolist()):
        j = bisect.bisect_left(keys, v)
        if j:
            parent[i] = tails[j - 1]
        if j == len(keys):
            keys.append(v)
            tails.append(i)
        else:
            keys[j], tails[j] = v, i
    out: list[int] = []
    i = tails[-1] if tails else -1
    while i >= 0:
        out.append(int(by_free[i]))
        i = int(parent[i])
    return np.array(out[::-1], np.int64)


def _phased(me: MemoryEvents) -> MemoryEvents:
    """``me`` with the phases its allocation pattern shows (:func:`pattern_phases`); as it is where it shows none."""
    pattern = pattern_phases(me)
    return me if pattern is None else dataclasses.replace(me, phase=pattern.phase)


def _stackless_iterations(me: MemoryEvents) -> tuple[np.ndarray, np.ndarray, str, str] | None:
    """The training iterations of a history recorded without stacks: the phases its pattern shows
    (:func:`pattern_phases`), cut as a framed history is (:func:`_iterations`), said to be read so."""
    pattern = pattern_phases(me)
    if pattern is None:
        return _stackless_passes(me)
    # a site is a frame's code and the size it made; without frames, the place in the repeated sequence is that code
    got = _iterations(dataclasses.replace(me, phase=pattern.phase, op=pattern.site), pattern.opening,
                      pattern.after_walk)
    if got is None and pattern.heads:
        # the head's rounds opened as repeats, yet the iterations they open are not alike (an evaluation begun later
        # keeps more a round): read from the repeats alone, as before the head was read (:func:`_without_heads`)
        got = _iterations(dataclasses.replace(me, phase=pattern.phase, op=_without_heads(pattern)), pattern.opening)
    if got is None or got[3] != "training iteration":
        return None
    start, end, note, name = got
    note += (f"; read from the allocation pattern, the snapshot recording no stacks: its sizes repeat every "
             f"{plural(pattern.period, 'allocation')} ({pattern.repeats} times{_set_aside_words(pattern)}), each "
             f"climb to a peak taken for a forward and each fall -- freeing the climb's blocks in reverse order while "
             f"making others -- for a backward (low confidence: no frame says so)")
    return start, end, note, name


def _without_heads(pattern: Pattern) -> np.ndarray:
    """``pattern``'s sites with the head's round openings (:func:`_head_openings`) no repeat's.

    Why: a head round is read as a repeat's like by its allocations alone; where the loop changes after it -- an
    evaluation kept from the third of 6 iterations, each later iteration making 4 more blocks than the second -- the
    iterations it opens are no longer alike after the first, and the job read none where the repeats alone read the
    leaking 4 (h37-probe48a2: ``as_recorded(training_iterations(6, layers=2, mib=8, micro_batches=2,
    set_to_none=False, leak="graph", leak_from=2), context=None)``)."""
    site = pattern.site.copy()
    site[list(pattern.heads)] = -1
    return site


def _set_aside_words(pattern: Pattern) -> str:
    """"; N blocks never freed set aside ..." where the sequence was read without them (:func:`_repeating`), else ""."""
    if not pattern.set_aside:
        return ""
    return (f"; {plural(pattern.set_aside, 'block')} never freed set aside: weights, state made once, what the "
            f"dump came before freeing")


#: Passes alike in a row a stackless history must hold to be read as a loop's forward passes (:func:`pass_phases`).
_MIN_PASSES = 2


@dataclass
class Passes:
    """A stackless history's forward passes as its allocation pattern shows them (:func:`pass_phases`)."""

    starts: list[int]  # event index of each pass's first allocation
    end: int  # event index of the last pass's return to the floor
    size: int  # allocations each pass makes and frees


#: events a window of :func:`_fell`
_FELL_WINDOW = 1 << 18


def _fell(delta: np.ndarray) -> np.ndarray:
    """Per event, whether the last event up to it that moved the level (``delta`` not 0) freed.  A window at a time,
    the last window's answer carried over: the whole history's index of moving events and each event's search in it
    held ~32 bytes an event, the job stage's peak above the read's on a 1 GB history (h37-snap61)."""
    out = np.empty(delta.size, bool)
    carry = False
    for s in range(0, delta.size, _FELL_WINDOW):
        d = delta[s:s + _FELL_WINDOW]
        last = np.where(d != 0, np.arange(d.size), -1)
        np.maximum.accumulate(last, out=last)
        out[s:s + d.size] = np.where(last >= 0, d[np.maximum(last, 0)] < 0, carry)
        carry = bool(out[s + d.size - 1])
    return out


def pass_phases(me: MemoryEvents) -> Passes | None:
    """The forward passes of a history recorded without stacks and showing no training iteration, read from its
    pattern; None where it shows no two alike in a row.

    Why: a loop of forward passes (inference, a benchmark) runs the same code on inputs of one shape, so each pass
    allocates the same sizes in the same order, and frees them all by its end -- between passes only what the job
    holds (weights, a cache made once) is live.  So the history falls back to the level it never falls below again
    (its floor from there on) at each pass's end; from one such return to the next is one pass.  A model's identical
    blocks repeat sizes inside a pass too, but the level does not come back to that floor between them (the pass's
    input and the block's output are live), so a block is never read as a pass.  The passes are the bulk of the
    history (half its allocations at least, as :func:`_period` asks of repeats): two small calls alike before a
    forward that holds a thousand tensors at the dump (``forward_autograd_cs336``) are no loop of passes.  Blocks
    never freed (a cache the first pass makes) are set aside, as :func:`_repeating` does: the first pass then
    repeats the others.  A stretch between
    returns whose blocks a backward walks back (:func:`_turn`) is a training iteration the pattern did not read: no
    pass is read there, rather than a training loop named inference."""
    n = len(me)
    if int((me.delta > 0).sum()) < 2 * _MIN_ALLOCS or me.baseline != "absolute":
        return None
    frees = me.frees()
    made = me.delta > 0
    level = me.allocated
    floor = np.minimum.accumulate(level[::-1])[::-1]
    # a return: a free that leaves the level at its floor (events that move nothing after it), the next climbing from
    # there -- not an allocation at the floor (a pass's input made before a cache it makes outweighs it)
    fell = _fell(me.delta)
    back = np.flatnonzero((level[:-1] == floor[:-1]) & (level[1:] > level[:-1]) & fell[:-1])
    cuts = [-1, *back.tolist(), n - 1]  # the last event is at the floor: what follows it is nothing
    keys = [_pass_key(me, lo, hi, made, frees) for lo, hi in zip(cuts[:-1], cuts[1:])]
    run = _alike_run(keys)
    if run is None:
        return None
    a, b = run  # segments a .. b-1 are the passes
    if 2 * (b - a) * len(keys[a]) < int(made.sum()):
        return None  # a loop's passes are the bulk of its history, as a period's repeats are (:func:`_period`)
    if any(_turn(cuts[k], cuts[k + 1], made, frees, me.delta) is not None or
           _gradient_held(cuts[k], cuts[k + 1], made, frees, me.delta) for k in range(a, b)):
        return None
    freed = made & (frees < n)  # a pass opens with its first block it frees: the weights before it are no part
    starts = [cuts[k] + 1 + int(np.argmax(freed[cuts[k] + 1:cuts[k + 1] + 1])) for k in range(a, b)]
    return Passes(starts, cuts[b], len(keys[a]))


def _pass_key(me: MemoryEvents, lo: int, hi: int, made: np.ndarray, frees: np.ndarray) -> tuple[int, ...]:
    """The sizes events ``(lo, hi]`` allocate and free, in order: the code a pass runs, as its allocations show it;
    blocks never freed in the history (a cache, state) set aside."""
    ev = np.flatnonzero(made[lo + 1:hi + 1] & (frees[lo + 1:hi + 1] < len(me))) + lo + 1
    return tuple(me.delta[ev].tolist())


def _alike_run(keys: list[tuple[int, ...]]) -> tuple[int, int] | None:
    """(first, end) of the longest run of equal ``keys`` in a row (:data:`_MIN_PASSES` at least, each of two
    allocations at least: one block is no pass), the earlier on a tie; None where none."""
    best: tuple[int, int] | None = None
    i = 0
    while i < len(keys):
        j = i + 1
        while j < len(keys) and keys[j] == keys[i]:
            j += 1
        if len(keys[i]) >= 2 and j - i >= _MIN_PASSES and (best is None or j - i > best[1] - best[0]):
            best = (i, j)
        i = j
    return best


#: Why a framed history's passes are read from its pattern, as a stackless one's are (:func:`_stackless_passes`).
UNPHASED_WHY = "its frames naming no module's forward, backward or optimizer (functional code)"


def _module_phases(me: MemoryEvents) -> bool:
    """Whether any allocation's frames name a module's forward, autograd's backward or an optimizer (its phase).

    Why: a pass is cut by those phases (:func:`_phases_held`); a forward written as plain functions -- a hand-written
    attention called on tensors, not an ``nn.Module`` -- has frames but none of them, so nothing said where a pass is
    though the history repeats one (sungdk0822's CS336 attention benchmark: 100 passes read as no step, its
    ``torch.compile`` twin, whose Inductor frames read as a forward, as 98)."""
    phases = np.unique(me.phase[me.delta > 0])
    return any(MEMORY_PHASES[p] in ("forward", "backward", "optimizer") for p in phases.tolist()
               if 0 <= p < len(MEMORY_PHASES))


def _stackless_passes(me: MemoryEvents, why: str = "the snapshot recording no stacks"
                      ) -> tuple[np.ndarray, np.ndarray, str, str] | None:
    """The forward passes of a history no frame cuts -- recorded without stacks, or with frames that name no phase
    (``why``) -- read from its pattern (:func:`pass_phases`), each from its first allocation to the next one's (the
    last to its return to the floor), said to be read so."""
    passes = stackless_pass_phases(me)
    if passes is None:
        return None
    starts, k = passes.starts, len(passes.starts)
    bounds = [*starts, passes.end + 1]
    n_alloc = np.cumsum(np.concatenate(([0], me.delta > 0)))
    note = _iterations_note(False, starts, k, True, bounds, n_alloc, me.before(), np.zeros(0, np.int64))
    note += (f"; read from the allocation pattern, {why}: {k} times in a row the same "
             f"{plural(passes.size, 'allocation')} in the same order, all freed by the end, each taken for a forward "
             f"pass (low confidence: no frame says so)")
    t = me.t
    return (np.array([int(t[i]) for i in starts], np.int64),
            np.array([int(t[i]) for i in starts[1:]] + [int(t[passes.end])], np.int64), note, "forward pass")
