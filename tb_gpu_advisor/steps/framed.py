"""Bursts inside the job's frame (``job.frame``: the program's one range around some of the GPU's
bursts, each ended by the host's sync or a long pause): the bursts are the steps (:func:`_framed_bursts`), or,
outside training, the one burst after warm-ups of the same work is the one pass a benchmark times
(:func:`_framed_pass`); steps outside the frame or in warm-up ranges are cut (:func:`_inside_frame`).

Why: a benchmark times its work inside one range, after warm-ups; the range says which bursts are the measured ones.
Tried after the training/engine ranges, before the job's device period, one pass and bare bursts.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.frameworks import user_ranges
from tb_gpu_advisor.job import Job
from tb_gpu_advisor.job.frame import Frame, apart, frame
from tb_gpu_advisor.job.waits import Waits
from tb_gpu_advisor.model.columns import union_intervals
from tb_gpu_advisor.model.trace import DeviceEvents, HostEvents, Trace, line_processes
from tb_gpu_advisor.steps.burst_table import BurstTable
from tb_gpu_advisor.steps.bursts import _bursts_repeat, _program_busy, _synced_bursts
from tb_gpu_advisor.steps.drop import _in_warmup_ranges
from tb_gpu_advisor.steps.windows import MISSING


class FramedSteps(NamedTuple):
    """A framed reading's steps (:func:`_framed_graph_launches`, :func:`_framed_graph_pass`, :func:`_framed_bursts`):
    spans with no numbers of their own, numbered in order (``steps.reading._Reading.take_spans``).

    Why: the readings returned a 4- or 5-tuple whose last item was each rank's thread's own windows for one source and
    each GPU's own bursts for another, read by position and by source in ``steps.detect``; named, each is its own
    field (empty where the reading has none)."""

    source: str  # ``_Reading.source``: ``repeated_launches``, ``single_pass``, ``gpu_busy_clusters``
    note: str
    starts: np.ndarray  # host windows (device ones for bursts), ps
    ends: np.ndarray
    per_line: dict[int, tuple[np.ndarray, np.ndarray]]  # host line -> its own (starts, ends): each rank's launches
    gpu_own: dict[int, tuple[np.ndarray, np.ndarray]]  # GPU -> its own process's bursts (starts, ends)


class OnePass(NamedTuple):
    """The one pass a benchmark times (:func:`_marked_pass`, :func:`_framed_pass`): the capture's one step.

    Why: read by position (``one[2]`` the note) at each reader's call in ``steps.detect``; named, one helper there
    takes it."""

    start: int  # ps
    end: int
    note: str


class SpansInFrame(NamedTuple):
    """The repeated spans' steps kept inside the job's frame (:func:`_inside_frame`).

    Why: a plain 5-tuple unpacked by position in ``steps.place`` (h37-debt50 *Left* 3)."""

    ids: np.ndarray  # the steps' numbers
    starts: np.ndarray  # host windows, ps
    ends: np.ndarray
    note: str
    per_line: dict[int, tuple[np.ndarray, np.ndarray]]  # each rank's thread's own (starts, ends), aligned with ids


class MarkedRange(NamedTuple):
    """The program's one range that holds a pass (:func:`_one_marked`)."""

    start: int  # ps
    end: int
    index: int  # its host event


def _inside_frame(trace: Trace, ids: np.ndarray, hs: np.ndarray, he: np.ndarray, note: str,
                  per_line: dict[int, tuple[np.ndarray, np.ndarray]] | None = None) -> SpansInFrame:
    """The repeated spans' steps (``ids``, host windows) inside the job's frame (``job.frame``), the note saying which
    were read apart, and ``per_line`` (each rank's thread's own windows, aligned with ``ids``) kept alike
    (:class:`SpansInFrame`); all of them, unchanged, where no frame holds two or more but not all.  Where each rank
    marks its own spans (``per_line``, two lines or more), a rank's range holds the spans its own thread marks
    (:func:`_own_span_rows`).

    Why: a span the program repeats (``forward``) marks every pass, the warm-ups' too; the one range the program puts
    around the passes it times says which are the steps, as it does for the launch period and the GPU's bursts.
    Where every span before it lies in a range the program names its warm-up, that name says it better (the drop of
    :func:`_in_warmup_ranges`).  Each rank its own: the steps' starts are the earliest rank's, so a later rank's range
    held another split of them and nothing was framed -- 2 ranks 50 us apart, each a ``forward`` range in each of its
    2 warm-ups and 4 timed passes, read 6 steps (4 kept) of 20.68 ms for passes of 20.23; with a range around each pass
    the other rank's range framed 3 of the 4 (h37-probe47g)."""
    per_line = per_line or {}
    order = np.argsort(hs, kind="stable")
    found = frame(trace, hs[order].astype(np.int64, copy=False), once=True, own=_own_span_rows(trace, order, per_line))
    if found is None:
        return SpansInFrame(ids, hs, he, note, per_line)
    lo, hi, label, end = found
    if hi == hs.size and _in_warmup_ranges(trace, hs[order[:lo]])[0].all():
        # the program names them itself: dropped as inside its own `Warm-up` range
        return SpansInFrame(ids, hs, he, note, per_line)
    keep = np.sort(order[lo:hi])
    note += (f"; the steps are the spans inside the program's one range `{label}`, its frame, not its step: it holds "
             f"{hi - lo} of the {hs.size}, and {apart(lo, hs.size - hi)}, read apart")
    he = he[keep].copy()
    last = int(np.argmax(hs[keep]))
    he[last] = max(int(he[last]), end)  # the frame ends after its last pass: a span marking part of it ends sooner
    return SpansInFrame(ids[keep], hs[keep], he, note, {ln: (s[keep], e[keep]) for ln, (s, e) in per_line.items()})


def _own_span_rows(trace: Trace, order: np.ndarray, per_line: dict[int, tuple[np.ndarray, np.ndarray]]
                   ) -> np.ndarray | None:
    """``frame``'s ``own`` (processes x spans, in ``order``: the steps' host order): each process's own span start of
    each step, -1 where its thread marks none (``steps.windows.MISSING``); None where fewer than two lines mark their
    own, the format names no process per GPU, or a process's own starts do not rise with the steps'."""
    proc = line_processes(trace) if len(per_line) > 1 else None
    if proc is None:
        return None
    rows = np.full((int(proc.max()) + 1, order.size), -1, np.int64)
    for line, (s, _) in per_line.items():
        p = int(proc[line]) if 0 <= line < proc.size else -1
        if p < 0 or s.size != order.size or (rows[p] >= 0).any():
            return None
        own = np.where(s[order] == MISSING, -1, s[order]).astype(np.int64)
        if (np.diff(own[own >= 0]) < 0).any():
            return None
        rows[p] = own
    return rows


def _marked_pass(trace: Trace, starts: np.ndarray, job: Job | None,
                 per_line: dict[int, tuple[np.ndarray, np.ndarray]] | None = None) -> OnePass | None:
    """The pass (:class:`OnePass`) of the program's one range -- its only range, opened once, not a warm-up -- where
    GPU work is launched inside it and outside it and none of the repeats read (``starts``: their host starts, ps)
    begins inside it; None elsewhere, and for a training job.  ``per_line`` (host line -> its own repeats, where each
    rank's repeats were read apart: ``SpanSteps.per_line``): each rank's own one range, launches and repeats asked so,
    every rank's alike; the range of the rank whose repeats are ``starts`` (else the first) is the pass.

    Why: a user who measures one request puts one range around it (`measure`) between a warm-up and other work.  The
    repeats read over the whole window are then the work the user did not measure: YiconRain/profiling's SGLang
    prefill (h37-serve34) read as the period of the 40 one-token filler generates after `measure` (26 steps of ~40
    ms), the measured 42 ms prefill in none of them.  The one range the program marks says which pass it times, as
    :func:`_framed_pass` reads for bursts; the repeats outside it are read apart.  Only the program's one range: a
    program that marks several phases names no single pass by one of them.  A training job is left to its own
    readings (:func:`_framed_pass`).  Each rank its own: two ranks' `measure` ranges are two ranges of the export, and
    the 2-rank prefill read as its 12 fillers' period (10 steps of 5.64 ms) beside its measured 5.46 ms (h37-probe47g)."""
    if (job is not None and job.kind.kind == "training") or not starts.size:
        return None
    h = trace.h
    idx = np.setdiff1d(user_ranges.program_ranges(trace), user_ranges.warmup_ranges(h, trace.ranges))
    launch = h.name_mask(devices.is_launch_call) | h.name_mask(devices.is_graph_launch)
    proc = line_processes(trace) if per_line and len(per_line) > 1 else None
    if proc is None:
        one = _one_marked(h, idx, launch, starts)
        return None if one is None else OnePass(one.start, one.end, _marked_words(h, one.index, starts,
                                                                                 int((starts < one.start).sum())))
    found = []
    for line, (own, _) in per_line.items():
        mine = proc[h.line] == proc[line]
        one = _one_marked(h, idx[mine[idx]], launch & mine, own)
        if one is None:
            return None
        found.append((own.size == starts.size and bool((own == starts).all()), one, own))
    _, one, own = max(found, key=lambda f: f[0])
    note = _marked_words(h, one.index, own, int((own < one.start).sum()))
    return OnePass(one.start, one.end, note + f"; each of the {len(found)} ranks' own range around its own such pass")


def _one_marked(h: HostEvents, idx: np.ndarray, launch: np.ndarray, starts: np.ndarray) -> MarkedRange | None:
    """The one range of ``idx`` (:class:`MarkedRange`: start, end, host index) that holds launches (``launch``: bool
    per host event) and has some outside it, none of ``starts`` inside it (:func:`_marked_pass`); None elsewhere."""
    if idx.size != 1:
        return None
    lo, hi = int(h.start[idx[0]]), int(h.end[idx[0]])
    at = h.start[launch]
    inside = (at >= lo) & (at <= hi)
    if not inside.any() or inside.all() or ((starts >= lo) & (starts <= hi)).any():
        return None
    return MarkedRange(lo, hi, int(idx[0]))


def _marked_words(h: HostEvents, i: int, starts: np.ndarray, before: int) -> str:
    """:func:`_marked_pass`'s note: range ``i`` the pass, ``before`` of the ``starts`` before it."""
    return (f"one pass: the program's one range `{h.names[h.name[i]]}` holds GPU work but none of the "
            f"{starts.size} repeats read over the window, the pass it times: the step; "
            f"{apart(before, starts.size - before)}, read apart")


def _graph_frames(trace: Trace, least: int) -> list[tuple[np.ndarray, Frame]] | None:
    """Per process that launches graphs (one where the format names no process per GPU), its graph launches
    (``devices.is_graph_launch``: host indices in time order) and the frame its own range makes of them
    (``job.frame.frame``, ``own=`` its row alone: a range holds only its own process's launches), the process that
    launches most first; None where one of them has no frame holding ``least`` of its launches.

    Why: ranks in one export (one ``nsys`` over a tensor- or data-parallel launcher) each replay their own graph per
    iteration and time their own generate in a range of their own.  Read over every process's launches, two ranks'
    ranges split the merged launches two ways, so nothing framed them: a 2-rank decode loop 3 ms apart (40 replays
    inside each rank's ``measure``) read as 2 "steps" of its bursts, 33 ms each (h37-probe47g)."""
    h = trace.h
    idx = np.flatnonzero(h.name_mask(devices.is_graph_launch))
    idx = idx[np.argsort(h.start[idx], kind="stable")]
    proc = line_processes(trace)
    of = proc[h.line[idx]] if proc is not None else np.zeros(idx.size, np.int64)
    groups = [idx[of == p] for p in np.unique(of).tolist()]
    out: list[tuple[np.ndarray, Frame]] = []
    for mine in sorted(groups, key=lambda g: (-g.size, int(h.start[g[0]]))):
        times = h.start[mine].astype(np.int64, copy=False)
        rows, p = None, int(of[idx == mine[0]][0])
        if len(groups) > 1 and p >= 0:  # a line of no GPU's process (-1) has no row: its launches read as they are
            rows = np.full((int(of.max()) + 1, times.size), -1, np.int64)
            rows[p] = times
        found = frame(trace, times, least=least, own=rows)
        if found is None:
            return None
        out.append((mine, found))
    return out or None


def _framed_graph_launches(trace: Trace) -> FramedSteps | None:
    """``repeated_launches`` (:class:`FramedSteps`, each host line's own windows its ``per_line``): host windows from
    each graph launch (``devices.is_graph_launch``) inside the job's frame to the next, the last to the frame's end,
    where one thread launches at least three graphs there; else None.  Several processes (:func:`_graph_frames`):
    each frames as many of its own launches, the windows the busiest's, each launching line's its own
    (``steps.place._own_host_windows``).

    Why: a serving engine that replays one CUDA graph per decode iteration marks each iteration with that launch on
    its host loop, whatever the GPU does between them.  Read as the GPU's bursts, SGLang's overlap scheduler keeps the
    GPU busy across iterations, so bursts merge: Qwen3.5-0.8B's 128 decode replays inside the user's `measure` (~1.64
    ms each) read as 102 "steps" of 2.05 ms (h37-serve34).  The frame still says which launches the program times;
    the work before the first launch inside it (an eager prefill) is read apart, as the warm-ups are."""
    h = trace.h
    frames = _graph_frames(trace, 3)
    if frames is None or len({f.end - f.first for _, f in frames}) != 1:
        return None
    per: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for idx, f in frames:
        lines = np.unique(h.line[idx[f.first:f.end]])
        if lines.size != 1:
            return None
        starts = h.start[idx[f.first:f.end]].astype(np.int64)
        per[int(lines[0])] = starts, np.append(starts[1:], max(int(starts[-1]), f.end_ps)).astype(np.int64)
    idx, found = frames[0]
    starts, ends = next(iter(per.values()))
    note = (f"steps from the program's graph launches: one thread launches a graph per iteration; the steps are the "
            f"{starts.size} launches inside the program's one range `{found.name}`, its frame, not its step, each "
            f"to the next; {apart(found.first, idx.size - found.end) or 'none outside it'}, read apart, and the "
            f"work inside it before its first launch is no step")
    if len(per) > 1:
        note += f"; each of the {len(per)} ranks' own launches in its own range, as many in each"
    return FramedSteps("repeated_launches", note, starts, ends, per if len(per) > 1 else {}, {})


def _framed_graph_pass(trace: Trace, job: Job | None) -> FramedSteps | None:
    """``single_pass`` (:class:`FramedSteps`, one window): the program's one range as one pass where it holds an eager
    pass (kernel launches before its first graph launch) and one or two of a thread's graph launches
    (:func:`devices.is_graph_launch`: too few to mark steps, :func:`_framed_graph_launches`); else None, and for a
    training job.  Several processes (:func:`_graph_frames`): each process's own range around its own launches, the
    busiest's the pass.

    Why: a serving engine that prefills eagerly and replays a CUDA graph per decode iteration marks its iterations
    with those launches; a user who times one request of one output token puts one range around the prefill and its
    first replay.  That range is the pass: its own structure (one eager pass, one replay) says so.  Read as the GPU's
    bursts inside the range (:func:`_framed_bursts`), the prefill's own syncs cut it into pieces whose layers run the
    same kernels, so the pieces passed as iterations: YiconRain/profiling's SGLang Qwen3.5-0.8B prefill of 256
    tokens inside `measure` (30.9 ms, 635 kernels and one decode replay) read as 11 "steps" of 227 us covering
    2.5 ms of its first layers (h37-serve35)."""
    if job is not None and job.kind.kind == "training":
        return None
    h = trace.h
    frames = _graph_frames(trace, 1)
    if frames is None or any(f.end - f.first >= 3 for _, f in frames):
        return None
    idx, found = frames[0]
    lo = _frame_start(trace, found.name, found.end_ps)
    if lo is None:
        return None
    hi, first = found.end_ps, int(h.start[idx[found.first]])
    eager = h.start[h.name_mask(devices.is_launch_call) & (h.line == h.line[idx[found.first]])]
    n_eager = int(((eager >= lo) & (eager < first)).sum())
    if not n_eager:
        return None
    k = found.end - found.first
    note = (f"one pass: the program's one range `{found.name}` holds an eager pass ({n_eager} launches) and "
            f"{k} of the {idx.size} graph launches, too few to mark steps: the pass it times is the step; "
            f"{apart(found.first, idx.size - found.end) or 'none outside it'}, read apart")
    return FramedSteps("single_pass", note, np.array([lo], np.int64), np.array([hi], np.int64), {}, {})


def _frame_start(trace: Trace, name: str, end_ps: int) -> int | None:
    """The host start (ps) of the program's one range ``name`` that ends at ``end_ps`` (a :class:`job.frame.Frame`'s
    range); None where not exactly one such range is the program's."""
    h = trace.h
    ranges = [i for i in user_ranges.program_ranges(trace).tolist()
              if h.names[h.name[i]] == name and int(h.end[i]) == end_ps]
    return int(h.start[ranges[0]]) if len(ranges) == 1 else None


def _pieces_of_one_pass(t: BurstTable) -> bool:
    """Whether the bursts (three or more) are pieces of one pass, not its iterations: the first and the last burst
    each run work (by name, the program's kernels and collectives) that no other burst runs, and some burst between
    them runs none such.

    Why: an iteration repeats the whole pass, so its once-run work (the head, the sampler, the embedding) runs in every
    burst, or -- a kernel that differs per call -- some in each of them.  A pass the host syncs per layer (an eager
    prefill that reads a value back after each layer) is cut into bursts that repeat one layer's kernels, its once-run
    work before the first layer (the embedding) and after the last (the head): both edges differ, the middle repeats a
    part (h37-framed36).  One edge alone is not enough: iterations whose last one alone runs more (the optimizer step
    after gradient accumulation's micro-steps, a logging reduction every N steps) differ at that edge only, their
    first burst the same work as the middle's (h37-framed37)."""
    if t.size < 3:
        return False
    work = t.own & t.work & (t.burst >= 0)
    key = t.name[work]
    once = np.isin(key, np.unique(key)[t.bursts_per_name(work) == 1])
    held = np.zeros(t.size, bool)
    held[t.burst[work][once]] = True
    return bool(held[[0, -1]].all()) and not held[1:-1].all()


#: process -> (starts, ends, its GPUs) of the bursts of that process's own GPUs (:func:`_own_bursts`)
OwnBursts = dict[int, tuple[np.ndarray, np.ndarray, tuple[int, ...]]]


def _own_bursts(trace: Trace, own: list[DeviceEvents], keep: list[np.ndarray], waits: Waits
                ) -> OwnBursts | None:
    """Process -> (starts, ends, its GPUs) of the bursts of its own GPUs (``own``, ``keep``: :func:`_program_busy`'s), cut by
    its own host's waits (:func:`_synced_bursts`; one burst where none cuts them); None where the GPUs are one
    process's.

    Why: ranks running one loop a little apart merge their GPUs' bursts, cut wherever any rank's host waited; each
    rank's own GPU and host make its own iterations' bursts (h37-probe46f, h37-probe47f)."""
    proc = line_processes(trace)
    if proc is None:
        return None
    gpu_proc = {g: int(proc[ls[0]]) for g, ls in trace.gpu_host_lines.items() if len(ls)}
    procs = sorted({gpu_proc.get(d.gpu, -1) for d in own})
    if len(procs) < 2 or procs[0] < 0:
        return None
    out: OwnBursts = {}
    wline = proc[trace.h.line[waits.idx]] if waits.idx.size else np.zeros(0, np.int64)
    for p in procs:
        mine = [gpu_proc[d.gpu] == p for d in own]
        st = np.concatenate([d.start[k] for d, k, m in zip(own, keep, mine) if m]).astype(np.int64)
        en = np.concatenate([d.end[k] for d, k, m in zip(own, keep, mine) if m]).astype(np.int64)
        if not st.size:
            continue
        us, ue = union_intervals(st, en)
        cut = _synced_bursts(waits.where(wline == p), us, ue) if us.size > 1 else None
        st, en = cut if cut is not None else (us[:1], ue[-1:])
        out[p] = st, en, tuple(d.gpu for d, m in zip(own, mine) if m)
    return out


def _process_starts(mine: OwnBursts | None,
                    starts: np.ndarray) -> np.ndarray | None:
    """Processes x bursts (``starts``: the GPUs' merged bursts): where a burst of each process's own (:func:`_own_bursts`)
    starts in each merged burst, -1 where none does; None where the GPUs are one process's.

    Why: a rank's range is its mark of its own GPU's work, so it is judged by the bursts its own GPU and host make
    (:func:`job.frame._held`), as a process's forwards are by its own launches (h37-probe43f)."""
    if mine is None:
        return None
    out = np.full((max(mine) + 1, starts.size), -1, np.int64)
    for p, (mine_starts, _, _) in mine.items():
        j = np.searchsorted(starts, mine_starts, side="right") - 1
        first = np.r_[True, j[1:] != j[:-1]] & (j >= 0)
        out[p, j[first]] = mine_starts[first]
    return out


@dataclass(frozen=True)
class _Cut:
    """The GPU's bursts one detection reads inside the job's frame: the devices with events and each one's mask of the
    program's own work (``own``, ``keep``: :func:`_program_busy`'s), the bursts cut at the host's waits and long pauses
    (``starts``, ``ends``: :func:`_synced_bursts`'s), and each process's own bursts among them (``by_process``:
    :func:`_process_starts`'s, None where the GPUs are one process's)."""

    own: list[DeviceEvents]
    keep: list[np.ndarray]
    starts: np.ndarray
    ends: np.ndarray
    by_process: np.ndarray | None


class FrameBursts:
    """The one cut of the GPU's bursts that :func:`_framed_bursts` and :func:`_framed_pass` read, made on first need
    and kept (:attr:`cut`).

    Why: both read the same bursts of the same inputs -- the union of the program's busy intervals, cut at its host's
    waits, and each rank's own bursts -- and ``steps.detect`` asks the second where the first returns None, the path
    every unmarked capture takes; made once, that work is not done twice (``benchmarks/framed_once.py``)."""

    def __init__(self, trace: Trace, active: list[DeviceEvents], waits: Waits) -> None:
        self.trace, self.active, self.waits = trace, active, waits

    @cached_property
    def busy(self) -> tuple[list[DeviceEvents], list[np.ndarray], np.ndarray, np.ndarray] | None:
        """:func:`_program_busy` of the active devices."""
        return _program_busy(self.active)

    @cached_property
    def mine(self) -> OwnBursts | None:
        """Each process's own bursts (:func:`_own_bursts`), None where the GPUs are one process's."""
        return None if self.busy is None else _own_bursts(self.trace, self.busy[0], self.busy[1], self.waits)

    @cached_property
    def cut(self) -> _Cut | None:
        """The bursts, or None where fewer than 3 busy intervals or nothing cuts them."""
        if self.busy is None:
            return None
        own, keep, us, ue = self.busy
        cut = _synced_bursts(self.waits, us, ue)
        if cut is None:
            return None
        starts, ends = cut
        return _Cut(own, keep, starts, ends, _process_starts(self.mine, starts))


class BurstsInFrame(NamedTuple):
    """The GPU's bursts inside the job's frame, the steps :func:`_framed_bursts` reads: several processes' own, each
    framed by its own range (:func:`_framed_own_bursts`), or the GPUs' merged bursts in the one frame
    (:func:`_framed_merged_bursts`).

    Why one type: the rest of the reading (do they repeat, are they pieces of one pass, the note) is the same for
    both; it reads these fields and never asks which cut found them."""

    starts: np.ndarray  # burst k of the steps: the earliest process's kth framed burst's start, ps
    ends: np.ndarray  # ... the latest one's end (the last: its frame's end where that is later)
    before: int  # bursts (of the first framing process) before its frame
    of: int  # ... of its bursts in all
    name: str  # the (first framing process's) range
    end_ps: int  # the latest frame's end
    gpus: dict[int, tuple[np.ndarray, np.ndarray]]  # per GPU its own process's framed bursts (starts, ends); {} merged

    @property
    def after(self) -> int:
        """The bursts after the frame."""
        return self.of - self.before - self.starts.size


def _framed_own_bursts(trace: Trace, mine: OwnBursts | None) -> BurstsInFrame | None:
    """The steps (:class:`BurstsInFrame`) where several processes each frame their own bursts (:func:`_own_bursts`)
    in a range of their own (``job.frame.frame`` over that process's bursts alone), all framing
    as many: burst k of the steps runs from the earliest process's kth framed burst's start to the latest one's end;
    ``before`` of ``of`` bursts (the first framing process's) lie before its frame.  None where the GPUs are one
    process's, no process frames its bursts, or two frame different counts.

    Why: ranks a little apart keep each other's GPUs busy, so the merged bursts run together where one rank's pause
    falls in the other's pass: a 2-rank benchmark 3 ms apart, 4 timed passes of 20 ms each in each rank's own
    ``resnet50_inference``, merged into a few long bursts and read as one pass of 146 ms (h37-probe47f).  Each rank's
    own GPU falls idle at its own syncs; its range frames those bursts, and every rank times as many passes."""
    if mine is None:
        return None
    found: dict[int, tuple] = {}
    for p, (st, _, _) in mine.items():
        rows = np.full((max(mine) + 1, st.size), -1, np.int64)
        rows[p] = st
        f = frame(trace, st, own=rows)
        if f is not None:
            found[p] = f
    if not found or len({f.end - f.first for f in found.values()}) != 1:
        return None
    starts = np.min([mine[p][0][f.first:f.end] for p, f in found.items()], axis=0)
    ends = np.max([np.r_[mine[p][1][f.first:f.end - 1], max(int(mine[p][1][f.end - 1]), f.end_ps)]
                   for p, f in found.items()], axis=0)
    p0, f0 = min(found.items())
    gpus = {g: (mine[p][0][f.first:f.end], mine[p][1][f.first:f.end]) for p, f in found.items() for g in mine[p][2]}
    return BurstsInFrame(starts, ends, f0.first, mine[p0][0].size, f0.name, max(f.end_ps for f in found.values()),
                         gpus)


def _framed_bursts(trace: Trace, bursts: FrameBursts) -> FramedSteps | None:
    """``gpu_busy_clusters`` (:class:`FramedSteps`, each GPU's own bursts its ``gpu_own``) of the GPU's bursts inside
    the job's frame (``job.frame``: the program's one range holding at least two of them but not all), where the same
    work runs in them; ``single_pass`` where they are pieces of one pass (:func:`_pieces_pass`); else None.  Several
    processes (ranks, each its own GPU) each framing their own bursts are read so (:func:`_framed_own_bursts`), each
    GPU's steps its own process's bursts (empty where the merged bursts are read: :func:`_framed_merged_bursts`).

    Why: a benchmark times its passes inside one range (``record_function("inference")`` around 5 passes, each ended
    by a sync) after warm-up passes outside it.  Where the launch sequence does not repeat (a kernel that differs per
    call) no period is read, and an inference job would be one pass; but the frame says which repeats the program
    times.  A burst here ends where the GPU fell idle and the host, waiting on it (a sync ending in the idle gap), or
    paused past ``steps.cluster_*``, launched the next: a pass the program synchronizes ends so however short the
    gap.  Bursts before the frame are its warm-up, after it outside its timing: named, not steps."""
    if bursts.busy is None:
        return None
    framed = _framed_own_bursts(trace, bursts.mine) or _framed_merged_bursts(trace, bursts.cut)
    if framed is None:
        return None
    table = _framed_table(bursts.busy[0], bursts.busy[1], framed)
    if not _bursts_repeat(table):
        return None
    if _pieces_of_one_pass(table) and (one := _pieces_pass(trace, framed)) is not None:
        return one
    return FramedSteps("gpu_busy_clusters", _framed_bursts_note(framed), framed.starts, framed.ends, {}, framed.gpus)


def _framed_merged_bursts(trace: Trace, cut: _Cut | None) -> BurstsInFrame | None:
    """The GPUs' merged bursts (``cut``: :attr:`FrameBursts.cut`) inside the program's one range (``job.frame.frame``,
    each process's own bursts its row), the last ended at the frame's end (:func:`_last_to_frame_end`); None where
    nothing cuts the bursts or no range frames them.

    Why apart from :func:`_framed_own_bursts`: one process's GPUs (or ranks whose own bursts frame nothing) have one
    cut of bursts and one frame; only the last burst's end differs from the cut's, the frame's end being the host's."""
    if cut is None:
        return None
    found = frame(trace, cut.starts, own=cut.by_process)
    if found is None:
        return None
    lo, hi, label, frame_end = found
    ends = cut.ends[lo:hi].copy()
    ends[-1] = _last_to_frame_end(cut.starts[lo:hi], ends, frame_end)
    return BurstsInFrame(cut.starts[lo:hi], ends, lo, cut.starts.size, label, frame_end, {})


def _framed_table(own: list[DeviceEvents], keep: list[np.ndarray], framed: BurstsInFrame) -> BurstTable:
    """The framed bursts' table (:class:`~.burst_table.BurstTable`) of the program's own work (``own``, ``keep``:
    :func:`_program_busy`'s) that starts between the first burst's start and the last one's end.

    Why those bounds: the bursts' work alone is asked whether it repeats; what ran before the frame (the warm-ups)
    or after it would make the first or last burst differ from the others."""
    lo, hi = framed.starts[0], framed.ends[-1]
    inside = [k & (d.start >= lo) & (d.start <= hi) for d, k in zip(own, keep)]
    return BurstTable.of(own, framed.starts, framed.ends, inside)


def _pieces_pass(trace: Trace, framed: BurstsInFrame) -> FramedSteps | None:
    """``single_pass`` (:class:`FramedSteps`): the program's one range as one pass, from its start to its end, where
    the framed bursts are pieces of that pass (:func:`_pieces_of_one_pass`); None where the range's start is not
    known (:func:`_frame_start`).

    Why the range, not the bursts: a pass the host syncs per layer is cut into bursts that are its layers; the range
    around them is the pass the program times, its work before the first sync included."""
    begin = _frame_start(trace, framed.name, framed.end_ps)
    if begin is None:
        return None
    note = (f"one pass: the program's one range `{framed.name}` holds {framed.starts.size} of the GPU's {framed.of} "
            f"bursts (each ended where the GPU fell idle and the host waited on it or paused) that repeat a part of "
            f"the work, the work no other burst runs in its first or last: pieces of the one pass it times, "
            f"the step; {apart(framed.before, framed.after)}, read apart")
    return FramedSteps("single_pass", note, np.array([begin], np.int64), np.array([framed.end_ps], np.int64), {}, {})


def _framed_bursts_note(framed: BurstsInFrame) -> str:
    """The steps note of the framed bursts read as the steps: how many the frame holds of all, those outside it read
    apart, and, where each rank's own bursts were framed (``framed.gpus``), that each GPU's steps are its own."""
    note = (f"no step markers found; steps inferred from the GPU's bursts (each ended where the GPU fell idle and the "
            f"host waited on it or paused), some of the same work running in several of them; the steps are the "
            f"bursts inside the program's one range `{framed.name}`, its frame, not its step: it holds "
            f"{framed.starts.size} of the {framed.of} bursts, and {apart(framed.before, framed.after)}, read apart")
    if framed.gpus:
        note += ("; each rank's bursts its own GPU's, cut by its own host's waits and framed by its own range, "
                 "each GPU's step k its own kth")
    return note


def _last_to_frame_end(starts: np.ndarray, ends: np.ndarray, frame_end: int) -> int:
    """Where the last of the framed bursts' steps ends (ps; ``starts``, ``ends``: the framed bursts, device times):
    where the frame (host time) ends after its work, the work's end and the least of the loop's turns before it (each
    burst's end to the next one's start), and not before the frame's end; else its own work's end.

    Why: the frame ends after the last pass, as a part mark's does, so the last step holds its turn; but each burst's
    step runs from its first kernel to the next one's, and the frame's end is where the host would launch the next
    pass, whose first kernel starts a launch later.  Ended at the frame's end, the last step lacked that lead where
    every other held it: a benchmark's 4 passes of 20.23 ms (the pass, its sync, the timing loop's 200 us, the next
    launch's 20 us lead) read the last 20.21 on one rank, where each of two ranks' GPUs read 20.23 (their own
    windows: the work's end and the least gap, ``steps.place._last_device_end``, the same rule; h37-probe47g *Left*
    3)."""
    last = int(ends[-1])
    if frame_end <= last:
        return last
    gaps = starts[1:].astype(np.int64) - ends[:-1].astype(np.int64)
    turn = int(gaps.min()) if gaps.size else 0
    return max(frame_end, last + turn) if turn > 0 else frame_end


def _framed_pass(trace: Trace, bursts: FrameBursts, job: Job | None) -> OnePass | None:
    """The pass (:class:`OnePass`) of the one GPU burst inside the program's one range (``job.frame`` of one repeat),
    where the same work ran before the range (its warm-up); None elsewhere, and for a training job.

    Why: a benchmark that times a single pass (``--measurement-steps 1``) wraps it in one range (``measurement``)
    after warm-up passes of the same work outside it.  The range frames one pass, so no boundary lies inside it, but
    it says which pass is timed: that pass is the step.  Read as the GPU's bursts, a forward-only benchmark on an RTX
    5070 Laptop GPU (CS336, h37-survey42) became 43 "steps" of its first calls and warm-up halves, and the stock rule
    dropped its one timed pass as the possibly partial last; read as one inference pass, the window's warm-ups were
    the step's.  A training job is left to its own readings: one range around its last burst there (an evaluation
    after the iterations) is not the step the loop repeats."""
    if job is not None and job.kind.kind == "training":
        return None
    cut = bursts.cut
    if cut is None:
        return None
    own, keep, starts, ends = cut.own, cut.keep, cut.starts, cut.ends
    found = frame(trace, starts, least=1, own=cut.by_process)
    if found is None or found.end - found.first != 1 or found.first == 0:
        return None
    lo, end = found.first, max(int(ends[found.first]), found.end_ps)
    upto = [k & (d.start <= end) for d, k in zip(own, keep)]
    if not _bursts_repeat(BurstTable.of(own, np.array([starts[0], starts[lo]]), keep=upto)):  # the warm-up ran the same work
        return None
    note = (f"one pass: the program's one range `{found.name}` holds one of the GPU's {starts.size} bursts (each "
            f"ended where the GPU fell idle and the host waited on it or paused), the pass it times: the step; "
            f"{apart(lo, starts.size - lo - 1)}, read apart (the same work ran before it)")
    return OnePass(int(starts[lo]), end, note)
