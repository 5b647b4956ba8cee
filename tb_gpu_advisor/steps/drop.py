"""The dropping rules after a reading: warm-up steps (the capture's one-time costs, the program's
warm-up ranges), a partial first or last step (cut by the window), empty edge steps, steps in stretches the capture
lost, and, like the stock tool, the first and last of more than 5 steps -- each drop recorded with its reason
(:class:`~tb_gpu_advisor.steps.types.DroppedStep`).

Why: the steady state is what each fix saves time in; what the steps hold of start-up or of a cut iteration would
bias every per-step number.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.common.fmt import plural
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.frameworks import user_ranges
from tb_gpu_advisor.job import Job
from tb_gpu_advisor.model.columns import time_within, union_intervals
from tb_gpu_advisor.model.trace import DeviceEvents, Trace
from tb_gpu_advisor.steps.ends import (_any_held_host_work, _holds_host_work, _last_cut_short, _last_ends_at_own_work,
                                       _last_mark_reach, _launched_work, _made_an_os_call, _top_range_last_short,
                                       _two_part_marks)
from tb_gpu_advisor.steps.head import _launched_before, _trim_launched_before
from tb_gpu_advisor.steps.reading import _Kept, _Reading
from tb_gpu_advisor.steps.types import (_BURSTS_TILED, _ENDS_AT_OWN_WORK, _HOST_SOURCES, _PART_MARKS, PS_PER_MS,
                                        DroppedStep, own_step_rows, unmarked_pass)


#: the readings that say themselves why their last step is only part of an iteration (``SpanSteps.partial_last``), and
#: the note's words for that drop: the launches' period (its last repeat cut by the window), a snapshot's iterations
#: read from its allocations (the last ends at the history's end, without the loop's time after it: h37-survey60)
_OWN_PARTIAL_LAST = {"repeated_launches": "; dropped the last step: it holds only the rest of the loop's last iteration",
                     "memory_iterations": "; dropped the last step: the history ends at its last free, before the "
                                          "loop's time after it"}


def _dropped(k: int, ids: np.ndarray, hs: np.ndarray, he: np.ndarray, gpu_windows: dict[int, np.ndarray],
             reason: str) -> DroppedStep:
    """Step ``k`` (an index into the steps still kept) dropped for ``reason``, with its windows."""
    return DroppedStep(int(ids[k]), reason, (int(hs[k]), int(he[k])),
                       {g: (int(w[k, 0]), int(w[k, 1])) for g, w in gpu_windows.items() if k < w.shape[0]})


def _drop_steps(r: _Reading, kept: _Kept, found: int, job: Job | None) -> list[DroppedStep]:
    """Leave out of the averages the steps that are no whole steady iteration, each rule on the steps the earlier
    ones left: a first step the window cut, an empty or edge step, a loop's partial last iteration, the program's
    warm-up calls, steps holding one-time costs, steps in the program's own warm-up range, a last step cut short.
    The note says each drop; ``found``: the steps read before any drop."""
    dropped: list[DroppedStep] = []
    _drop_lost(r, kept, dropped, job)  # first: a step whose GPU records were lost is no empty or partial step
    if r.active and kept.ids.size:
        _drop_cut_first(r, kept, dropped, found)
        _drop_window_start_first(r, kept, dropped)
    _drop_empty_or_edges(r, kept, found, dropped)
    _drop_unrecorded(r, kept, dropped)
    own = r.own
    cut = own.partial_last if r.source in _OWN_PARTIAL_LAST and own is not None and r.source == own.source else ""
    if cut and kept.ids.size > 2 and int(kept.ids[-1]) == found - 1:  # the last window still kept: part of an iteration
        _drop_one(r, kept, dropped, -1, cut, _OWN_PARTIAL_LAST[r.source])
    tiled = (r.source in _ENDS_AT_OWN_WORK and own is not None and r.source == own.source and kept.ids.size >= 2
             or own is not None and own.tiled and r.source == own.source and kept.ids.size >= _BURSTS_TILED
             or r.source == "gpu_busy_clusters" and kept.ids.size >= _BURSTS_TILED)
    short = _last_ends_at_own_work(kept) if tiled and int(kept.ids[-1]) == found - 1 else None
    if short is not None:
        held, tiles = short
        _drop_one(r, kept, dropped, -1, f"partial: {held:,.2f} ms from its start to its own work's end, where every "
                  f"other step ran at least {tiles:,.2f} ms from its start to the next's: no next iteration starts "
                  f"after it in the capture, so it holds none of the time between its work and a next one",
                  "; dropped the last step: it ends at its own work, not at a next step's start")
    cut = own.partial_first if own is not None and r.source == own.source else ""
    if cut and kept.ids.size > 2 and int(kept.ids[0]) == 0:  # a snapshot's history begun inside its first iteration
        _drop_one(r, kept, dropped, 0, f"partial: {cut}", "; dropped the first step: the recording began inside it")
    first = own.warmup_first if own is not None and r.source == own.source else ""
    if first and kept.ids.size > 2 and int(kept.ids[0]) == 0:  # the program's first calls' one-time work (job.iterations)
        _drop_one(r, kept, dropped, 0, f"warm-up: {first}", f"; dropped the first step as warm-up: {first}")
    if job is not None and kept.ids.size > 1 and job.phase.start.size:
        cold = _cold_steps(r.trace, kept, job)
        if cold.any() and (~cold).sum() >= 2:  # one steady step left is no steady state: keep and book the costs
            _drop_masked(r, kept, dropped, cold, "warm-up: holds one-time costs (module loading, library start-up, "
                         "compilation)", f"; dropped {plural(int(cold.sum()), 'warm-up step')} holding one-time costs")
    _drop_profiler_waits(r, kept, dropped)
    _drop_queue_fill(r, kept, dropped)
    _drop_evaluating(r, kept, dropped)
    if r.source in _HOST_SOURCES and kept.ids.size > 2:
        warm, label = _in_warmup_ranges(r.trace, kept.hs)
        if warm.any() and (~warm).sum() >= 2:  # the program's own warm-up iterations: not the steady state it measures
            _drop_masked(r, kept, dropped, warm, f"warm-up: inside the program's own `{label}` range",
                         f"; dropped {plural(int(warm.sum()), 'step')} inside the program's own `{label}` range")
    _untail_last(r, kept)
    _drop_short_last(r, kept, dropped)
    return dropped


def _drop_unrecorded(r: _Reading, kept: _Kept, dropped: list[DroppedStep]) -> None:
    """Drop the steps some rank's capture had not opened for or had closed before (``_Reading.unopened``,
    ``_Reading.closed``: it marks none of them and recorded nothing before, or after, them), where two steps or more
    are left: every rank's per-step numbers are of steps each recorded, not of a window one rank's profiler had not
    yet started in (h37-probe44r *Left* 1) or had already stopped in (h37-probe45c)."""
    for edge, reason, said in ((r.unopened, "opened after this step began", "before {g}'s capture opened (its process "
                                "recorded nothing of it)"),
                               (r.closed, "closed before this step ended", "not whole on {g}: its process's capture "
                                "closed before {they} ended")):
        if not edge or not kept.ids.size:
            continue
        gone = np.isin(kept.ids, np.concatenate(list(edge.values())))
        n = int(gone.sum())
        if not n or kept.ids.size - n < 2:
            continue
        gpus = ", ".join(f"GPU{g}" for g in sorted(edge))
        _drop_masked(r, kept, dropped, gone, f"not recorded on {gpus}: its process's capture {reason}",
                     f"; dropped {plural(n, 'step')} " + said.format(g=gpus, they="it" if n == 1 else "they"))


def _untail_last(r: _Reading, kept: _Kept) -> None:
    """End the last of steps read from updates at its update (``_Reading.untailed_last``), not its read-back, where
    the first step kept already holds a read-back at its head: a step the reading found before it (dropped), or a
    first step whose head spans the read-back every later step opens with (``SpanSteps.first_head_held``).

    Why: ``job.structure._with_last_tail`` moves the last step's end to its own read-back because, tiled update to
    update, each read-back lies in the next step and the first step holds none -- so the steps would lack one.  Where
    the first step kept holds one too, each step holds one, and the moved last holds two: a capture opened inside a
    loop that reads its loss after each update (4 ranks, 3 kept steps of 23.3 ms, each with a 21.7 ms ``.item()``
    wait) booked the last step's two waits to it, 25.5 ms of host wait per 23.3 ms step (``--forms11`` walk seed
    62004)."""
    own = r.own
    if not r.untailed_last or own is None or not kept.ids.size or int(kept.ids[-1]) != int(r.ids[-1]):
        return
    if int(kept.ids[0]) != int(r.ids[0]) or own.first_head_held:
        kept.he[-1] = min(int(kept.he[-1]), max(r.untailed_last, int(kept.hs[-1])))
        lines = r.trace.gpu_host_lines or {}
        for g, w in kept.host_own.items():  # each rank's own last step: to its own last update
            ends = [own.tail_from_by_line[ln] for ln in np.asarray(lines.get(g, ())).tolist() if ln in own.tail_from_by_line]
            if ends:
                w[-1, 1] = min(int(w[-1, 1]), max(max(ends), int(w[-1, 0])))


def _drop_lost(r: _Reading, kept: _Kept, dropped: list[DroppedStep], job: Job | None) -> None:
    """Steps that reach into a stretch whose GPU records were lost (``job.kind.lost_spans``: launches accepted, their
    kernels run, no record written -- a tail, or a stretch mid-window after which the records resume) are no steps to
    time: their host side is there, their GPU work is not, so they would read as a GPU idling for the host.  Dropped
    where a step outside the stretches remains; where none does, kept (the capture-quality warning says the records
    are lost, and the averages are the recorded part's)."""
    spans = job.kind.lost_spans if job is not None else ()
    if not spans or not kept.ids.size:
        return
    mask = np.zeros(kept.ids.size, dtype=bool)
    for a, b in spans:
        mask |= (kept.he > a) & ((kept.hs < b) if b >= 0 else True)
    if mask.any() and not mask.all():
        _drop_masked(r, kept, dropped, mask, "lost records: its GPU work ran without a record (the capture lost the "
                     "GPU's records of its launches)", f"; dropped {plural(int(mask.sum()), 'step')} in a "
                     "stretch whose GPU records were lost")


def _drop_profiler_waits(r: _Reading, kept: _Kept, dropped: list[DroppedStep]) -> None:
    """Steps whose host window holds at least ``job.one_time_call_ms`` of the profiler's own work
    (``Trace.profiler_overhead``: CUPTI's activity buffer requests) are no steady steps: the program's launch waited
    for the profiler there, a wait it never has unprofiled (Kineto allocates CUPTI's buffers on demand, in the active
    window too, and the launch that triggers one takes orders of magnitude longer: pytorch/kineto#1020).  Dropped
    where two steps or more remain, as the steps holding one-time costs are.

    ASSUMPTION this replaces: a step with no one-time call in it (module loading, library start-up, compilation) is
    steady.  On three short iterations the first one held a 0.45 ms buffer request and read 1.94 ms against 0.2 ms,
    which quadrupled the mean step and made the host-bound share of it 85%."""
    spans = r.trace.profiler_overhead
    if spans is None or kept.ids.size < 3:
        return
    by_gpu = r.trace.profiler_overhead_gpus
    held = _profiler_held(spans, by_gpu, kept, _gpu_clock(r, spans, by_gpu, kept) if by_gpu else {})
    mask = held >= T("job.one_time_call_ms") * PS_PER_MS
    if not mask.any() or int((~mask).sum()) < 2:
        return
    most = float(held[mask].max()) / PS_PER_MS
    _drop_masked(r, kept, dropped, mask, f"profiler: the profiler's own work (its activity buffer requests, up to "
                 f"{most:,.2f} ms) ran inside it, and the program's launches waited for it",
                 f"; dropped {plural(int(mask.sum()), 'step')} holding the profiler's own work (its activity buffer "
                 f"requests, up to {most:,.2f} ms), which the program waited for")


def _drop_queue_fill(r: _Reading, kept: _Kept, dropped: list[DroppedStep]) -> None:
    """A first step whose GPU began it idle, at its rank's host mark, where every later kept step opened behind its
    host's mark, the GPU still running the step before (:func:`_queue_fill`): the host ran ahead of that GPU by a lag
    the first step built, so its window holds that lag once more than a steady one.  Dropped where two steps or more
    remain, as a warm-up step is.

    ASSUMPTION this replaces: the first recorded step of a rank is steady where nothing one-time runs in it.  A GPU
    step opens where its host opened it, or where its GPU had finished the step before if later
    (``formats.kineto.adapter._opened_on_host``).  Two ranks tied by an all-reduce, the second 1.89 ms late: rank 0's
    host opens each later step 0.51 ms before its GPU ends the all-reduce before, its next launches queued behind it,
    but its first step opens on an idle GPU and its kernels run at the host's pace -- GPU 0's step 2 read 3.358 ms
    beside steps of the 2.844 ms period, with or without a buffer request (walk seed 51232)."""
    if int(kept.ids.size) < 3 or not kept.host_own or int(kept.ids[0]) != int(r.ids[0]):
        return
    lags = [lag for g, w in kept.gpu.items() if (lag := _queue_fill(w, kept.host_own.get(g))) is not None]
    if not lags:
        return
    lag = max(lags)
    _drop_one(r, kept, dropped, 0, f"warm-up: its GPU began it idle at its host's mark, where every later step opened "
              f"at least {lag / PS_PER_MS:,.2f} ms after its host's, behind the step before: it holds the host's "
              f"lead over its GPU, built once",
              "; dropped the first step: its GPU's queue filled in it (every later step opened behind its host's)")


def _queue_fill(gpu: np.ndarray, host: np.ndarray | None) -> int | None:
    """The least lag (ps) of a GPU's later steps behind their host marks, where its first step opened at its mark
    (no lag) and is longer than each later step but the last by at least that lag: the first step's window holds the
    host's lead, which every later step shares with the step before.  None where the lags are not so, or the lag is
    under ``job.one_time_call_ms`` (no lead worth a step's drop)."""
    if host is None or host.shape[0] != gpu.shape[0] or gpu.shape[0] < 3:
        return None
    lag = gpu[:, 0].astype(np.int64) - host[:, 0].astype(np.int64)
    later = int(lag[1:].min())
    if lag[0] > 0 or later < T("job.one_time_call_ms") * PS_PER_MS:
        return None
    lengths = (gpu[:, 1] - gpu[:, 0]).astype(np.int64)
    return later if int(lengths[0]) - int(lengths[1:-1].max()) >= later else None


def _profiler_held(spans: tuple[np.ndarray, np.ndarray], by_gpu: dict[int, np.ndarray], kept: _Kept,
                   waits: dict[int, tuple[np.ndarray, np.ndarray]] | None = None) -> np.ndarray:
    """Per kept step, the profiler's work it waited for (ps), the most any GPU's window of it holds: its own
    process's requests (``Trace.profiler_overhead_gpus``), and the other ranks' as far as the window outlasts the
    GPU's steady step (:func:`_outlasts`) -- a rank feels another's request only where a collective waits for it.
    One process (no GPU's own list): every request measured against the host windows.

    ASSUMPTION this replaces: the requests of a merged job are the host's, all measured against the host-wide
    windows (the first GPU's).  Each rank's profiler requests its own buffers, and its own launches wait: two ranks,
    the second 0.27 ms late, both requesting in the same steps -- its requests, pooled with no rank, spilled 0.26 ms
    into the first GPU's windows where it waited for nothing, 4 windows of 5 "held" one and none was dropped (mean
    step 2.35 ms against 1.85 ms steady; h37-walk25's Left).  Yet ranks an all-reduce ties wait for each other: the
    second rank 1.9 ms late, the first's next window held 0.5 ms of waiting for the second's request
    (walk seed 51232), which its own requests alone never show.

    ``waits``: GPU -> its own requests moved onto its clock (:func:`_gpu_clock`), measured against its windows in
    place of the requests' host times."""
    # the union of each process's requests, each step's share of it: one sum per step (no steps-by-requests table),
    # and requests that overlap counted once -- no step holds more of the profiler than it lasts
    if not by_gpu:
        return time_within(*union_intervals(*spans), kept.hs, kept.he)
    cut = T("job.one_time_call_ms") * PS_PER_MS
    every = np.arange(spans[0].size)
    held = np.zeros(kept.ids.size, dtype=np.float64)
    for g in sorted(set(by_gpu) | set(kept.gpu)):
        w = kept.gpu.get(g)
        s, e = (w[:, 0], w[:, 1]) if w is not None and w.shape[0] == kept.ids.size else (kept.hs, kept.he)
        own = by_gpu.get(g, every[:0])
        mine = time_within(*waits[g], s, e) if waits and g in waits and w is not None else _held_in(spans, own, s, e)
        theirs = np.minimum(_held_in(spans, np.setdiff1d(every, own), s, e), _outlasts(e - s, mine < cut))
        held = np.maximum(held, np.maximum(mine, theirs))
    return held


def _gpu_clock(r: _Reading, spans: tuple[np.ndarray, np.ndarray], by_gpu: dict[int, np.ndarray], kept: _Kept
               ) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per GPU with windows of its own and launch records, its own requests on its clock: where it waited for them
    (:func:`_waits_on_gpu`).  GPUs without them are left out (their requests are measured by their host times)."""
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    devs = [d for d in r.trace.devices if d.gpu in by_gpu and d.gpu in kept.gpu and len(d)]
    if not devs:
        return out
    launched = dict(zip((d.gpu for d in r.trace.devices), r.launched()))
    hstart = r.trace.h.start.astype(np.int64, copy=False)
    for d in devs:
        launch = launched.get(d.gpu)
        if launch is None or not (launch >= 0).any():
            continue
        a, b = union_intervals(spans[0][by_gpu[d.gpu]], spans[1][by_gpu[d.gpu]])
        out[d.gpu] = _waits_on_gpu(a, b, d, np.where(launch >= 0, hstart[np.maximum(launch, 0)], -1))
    return out


def _waits_on_gpu(a: np.ndarray, b: np.ndarray, d: DeviceEvents, launched_at: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The requests ``[a, b)`` (disjoint, sorted; one process's) moved onto GPU ``d``'s clock: each request delays
    every launch made after it began by its length, and the GPU feels that only where it idles for such a launch --
    the gaps of its busy time that end at work launched after the request's start (``launched_at``: each device
    event's launch call's host start, -1 none).  Each request's length fills those gaps in order, each up to its
    length, as the stretch at the gap's end (sorted, disjoint, as :func:`time_within` takes them); none where the GPU
    never idled for them (its queue absorbed the delay).  A program that waits for its GPU after the request (a read
    of a result) absorbs the delay there, and its GPU's next gap -- the one before the next step's first kernel, in
    the request's own host step's window where the GPU's step opens at its host's mark (h37-probe44r) -- takes the
    request's length.

    ASSUMPTION this replaces: on a GPU's clock the wait lies in the window that holds the request's host time (the
    window before the request's host step).  That holds only where the GPU idled through the request, before its
    step's first kernel.  Busy with the step before's all-reduce until after the request, the GPU idles instead inside
    the request's own step, for the launches the request delayed: two ranks, 108 / 591 / 219 us requests in host
    steps #8, #13, #16 (walk seed 72504) -- windows #7, #12, #15 were dropped (#7 clean at 1.87 ms) and #8 and #13
    kept at 1.98 and 2.03 ms beside eight of the 1.87 ms period."""
    bs, be = d.busy()
    if bs.size < 2 or not a.size:
        return a[:0], b[:0]
    gap_end, gap = bs[1:], bs[1:] - be[:-1]
    first = np.searchsorted(d.start.astype(np.int64, copy=False), gap_end, side="left")  # the work each gap ends at
    by = launched_at[np.minimum(first, launched_at.size - 1)]
    ends, takes = [], []
    for a0, b0 in zip(a.tolist(), b.tolist()):
        m = by >= a0
        g = gap[m]
        take = np.clip((b0 - a0) - (np.cumsum(g) - g), 0, g)
        keep = take > 0
        ends.append(gap_end[m][keep])
        takes.append(take[keep])
    e = np.concatenate(ends)
    return union_intervals(e - np.concatenate(takes), e)


def _held_in(spans: tuple[np.ndarray, np.ndarray], idx: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """The union of the spans ``idx`` names, each window ``[s, e)``'s share of it (ps)."""
    if not idx.size:
        return np.zeros(s.size, dtype=np.float64)
    return time_within(*union_intervals(spans[0][idx], spans[1][idx]), s, e)


def _outlasts(lengths: np.ndarray, clean: np.ndarray) -> np.ndarray:
    """Per window, how much longer it is than the median of the ``clean`` ones (ps, none below 0): the most a wait
    for another rank can have added to it.  None where no window is clean (no steady length to compare with)."""
    if not clean.any():
        return np.zeros(lengths.size, dtype=np.float64)
    return np.clip(lengths - np.median(lengths[clean]), 0, None).astype(np.float64)


def _drop_one(r: _Reading, kept: _Kept, dropped: list[DroppedStep], k: int, reason: str, note: str) -> None:
    """Drop the first (``k`` 0) or the last (-1) kept step for ``reason``, and say so in the note."""
    dropped.append(_dropped(k, kept.ids, kept.hs, kept.he, kept.gpu, reason))
    kept.keep(slice(1, None) if k == 0 else slice(None, -1))
    r.note += note


def _drop_masked(r: _Reading, kept: _Kept, dropped: list[DroppedStep], mask: np.ndarray, reason: str,
                 note: str) -> None:
    """Drop the kept steps ``mask`` marks, each for ``reason``, and say so in the note."""
    dropped += [_dropped(k, kept.ids, kept.hs, kept.he, kept.gpu, reason) for k in np.flatnonzero(mask).tolist()]
    kept.keep(~mask)
    r.note += note


def _drop_cut_first(r: _Reading, kept: _Kept, dropped: list[DroppedStep], found: int) -> None:
    """A first step the window cut: dropped where it holds only work launched before the capture (the tail of an
    iteration; of two steps or more read); else a step whose window the GPU's work bounds (its bursts, one pass, the
    whole capture: ``mapped`` "device") that opens with such work starts at its own first work -- one rule for every
    such step, the whole window's as a burst's.  Host-marked steps start at their marker and place their GPU windows
    at the work launched inside them already (:func:`_async_device_windows`)."""
    launches = [la for d, la in zip(r.trace.devices, r.launched()) if len(d)]
    lead = _launched_before(r.active, launches, kept) if r.source != "whole_capture" and found > 1 else ""
    if lead:  # the window cut an iteration: its first step is the tail of one launched before the capture
        _drop_one(r, kept, dropped, 0, f"partial: {lead}",
                  "; dropped the first step: the capture began inside it (its work was launched before the window)")
    elif r.mapped == "device":
        # a capture read whole (:func:`unmarked_pass`) numbers no step: its one window is "the pass", as every
        # finding later names it (h37-words22: nsys fsdp_mfu_before's note read "the first step starts at ...")
        r.note += _trim_launched_before(r.trace.h, r.active, launches, kept,
                                        unmarked_pass(int(kept.ids.size), r.source), r.waits)


def _drop_window_start_first(r: _Reading, kept: _Kept, dropped: list[DroppedStep]) -> None:
    """A host-read first step that starts at no loop boundary (:func:`_first_start_unmarked`: the capture window's
    start, or the first thing the window shows) and that, even from the window's start, is shorter than every later
    step (:func:`_first_and_later`): the window's start cuts it, so it holds only part of what every later step
    holds.  Dropped where another step remains, as a last step the capture ended inside is
    (:func:`_drop_short_last`); a floored first step as an update-tiled one, judged from three steps on.

    ASSUMPTION this replaces: a first step floored at the window's start is a whole step.  A reading that starts each
    step at the previous iteration's end starts the first one the lead the later ones show before their first range
    earlier, never before the window (``job.structure.first_iteration_start``); where that lead reaches past the
    window's start, the floor cuts it -- whether the loop ran before the window or not, the trace cannot show.
    DeepSpeed's ranges under gradient accumulation, 30.6 ms of the loop's untraced Python between one update and the
    next micro-batch, the window opened 5.6 ms before the first micro-batch: steps of 10.76, 41.39, 41.39 ms, a mean
    of 31.18 against the job's 41.39 ms period (h37-walk24, ``--zero12`` walk seed 70120)."""
    if r.source not in _HOST_SOURCES or kept.ids.size < 2 or int(kept.ids[0]) != int(r.ids[0]):
        return
    where = _first_start_unmarked(r, kept)
    if not where:
        return
    floor = r.trace.window_start_ps()
    held, later = _first_and_later(kept, floor)
    if held >= later:
        return
    read = int(kept.he[0]) - int(kept.hs[0])
    since = "" if where == _WINDOW_START else f"{read / PS_PER_MS:,.2f} ms from {where}, "
    _drop_one(r, kept, dropped, 0, f"partial: {since}{held / PS_PER_MS:,.2f} ms from {_WINDOW_START} to the next "
              f"step's start, where every later step ran at least {later / PS_PER_MS:,.2f} ms from its start to the "
              f"next's: the window's start cuts it",
              "; dropped the first step: the capture window's start cuts it")


#: where a first step floored at the window's start starts, in words
_WINDOW_START = "the capture window's start"


def _first_and_later(kept: _Kept, floor: int) -> tuple[int, int]:
    """The first kept step's time from the capture window's start (``floor``, ps: the most of it the window could
    hold, whatever lead its reading gave it) to the next step's start, and the least time any later step but the last
    ran from its start to the next's (ps); (0, 0), nothing to judge by, where fewer than three steps are kept.

    Why from the window's start: a first step at no loop boundary could have begun anywhere from the window's start
    to its first event; where the window holds room for a whole step before its end, nothing shows it cut -- a loop
    that began inside the window, its read-back after each update (a compiled loop's 64 us ``.item()`` and 10 us
    turn, 150 us of window before its first op: h37-seeds24's ``tests/job/test_last_update_tail.py``).  Why start to
    start, the last left out: the last step's end is its reading's (stretched to its read-back, its launched work, the
    last rank's reach), no next step's start -- 2 DDP iterations of 3.71 ms whose host runs ahead read a last host
    window of 6.49 ms (``tests/steps/test_two_update_steps_ahead.py``), and 4 ranks 50 us apart 3.12 ms for 2.97
    (``--forms12`` walk seed 494): the first step whole either way, as start to start shows."""
    if kept.hs.size < 3:
        return 0, 0
    return int(kept.hs[1]) - min(int(kept.hs[0]), floor), int(np.diff(kept.hs[1:]).min())


def _first_start_unmarked(r: _Reading, kept: _Kept) -> str:
    """Where the first kept step starts, in words, where that start is no loop boundary the trace shows; "" where it
    is one.  Floored at the capture window's start, it is the window's; in a reading that runs each step from one
    update's end to the next (``step_end_events``, the update readings' ``tiled_by_updates``), a first step that
    starts at or before the first thing the window shows has no update before it: its start is the window's first
    event (less the lead the later steps show, ``job.structure.first_iteration_start``), not where an iteration
    began.

    ASSUMPTION this replaces: a first step the window's start does not floor starts at a loop boundary.  A Kineto loop
    read from its optimizer steps, 20 ms of untraced host time after each update's ``.item()``, the window opening
    in that time: the lead every later step shows after its update is the read-back's, none, so the first step began
    at the window's first op, 5.005 ms after the window's start, and held 0.084 of 20.11 ms -- where the floor rule
    never looked (h37-opens2)."""
    start = int(kept.hs[0])
    if start <= r.trace.window_start_ps():
        return _WINDOW_START
    if not (r.source == "step_end_events" or r.tiled_by_updates):
        return ""
    h = r.trace.h
    return "the window's first event (no update before it)" if len(h) and start <= int(h.start.min()) else ""


def _drop_empty_or_edges(r: _Reading, kept: _Kept, found: int, dropped: list[DroppedStep]) -> None:
    """A host-marked last step that ran none of the loop's work (:func:`_empty_last`: the step a last ``prof.step()``
    opens after the loop) is dropped; else, of more than a few steps, the first (warm-up, unless a cut first step was
    that) and the last (possibly partial), as the stock tool does."""
    empty = _empty_last(r, kept)
    if empty:
        why, said = empty
        _drop_one(r, kept, dropped, -1, f"empty: {why} (the step a last prof.step() opens when the loop has ended: "
                  f"only the profiler's own stop)", f"; dropped the last step: {said}")
    elif found > T("steps.drop_edges_above") and kept.ids.size:
        edge = f"{T('steps.drop_edges_above'):g}"
        # the capture's own first and last steps, where still kept: a first step cut by the window is dropped already
        # (the stock rule's warm-up is that one), and a step before a stretch whose GPU records were lost is no last
        # step the window cut -- the steps after it started (h37-randjobs4: 2 recorded steps of 12 before a lost tail,
        # the stock rule took them for the capture's edges and kept none)
        warm = not any(d.reason.startswith("partial") for d in dropped) and int(kept.ids[0]) == int(r.ids[0])
        last = int(kept.ids[-1]) == int(r.ids[-1])
        if warm and kept.ids.size == 1 + last:  # never every step: the last one left is timed
            warm = False
        if warm:
            dropped.append(_dropped(0, kept.ids, kept.hs, kept.he, kept.gpu,
                                    f"warm-up: first of more than {edge} steps (stock tool rule)"))
        if last and kept.ids.size > 1:
            dropped.append(_dropped(-1, kept.ids, kept.hs, kept.he, kept.gpu,
                                    f"possibly partial: last of more than {edge} steps (stock tool rule)"))
        else:
            last = False
        kept.keep(slice(1 if warm else 0, -1 if last else None))
        said = "first and last" if warm and last else "first" if warm else "last" if last else ""
        r.note += f"; dropped {said} of {found} steps" if said else ""


def _empty_last(r: _Reading, kept: _Kept) -> tuple[str, str] | None:
    """Why the last of two or more host-marked steps holds none of the loop's work, in words (the drop's reason, the
    note's clause); None where it holds some.
    Where the capture recorded GPU work, the step launched none of it (:func:`_launched_work`); where it recorded none,
    no host event but the step's own mark begins in it (:func:`_holds_host_work`), the program made no OS call inside
    its mark (:func:`_made_an_os_call`), and some earlier step holds a host event besides its mark
    (:func:`_any_held_host_work`: else the marks are all the capture records of any turn, the last one's as bare as
    theirs -- quasiben/nvtx-examples ``quickstart.sqlite``'s 5 ``loop`` ranges around ``time.sleep(0..4)``, whose
    last 4 s turn was dropped as the stub a last ``prof.step()`` opens), and the last mark, closed, is shorter than
    the earlier steps' median over ``job.uneven_turns_ratio``: a stub lasts from the loop's end to the profiler's
    stop, an instant beside a turn -- a 4 s bare last ``loop`` after turns holding a child ``work`` range, traced ``-t
    nvtx`` alone (no OS call to show its sleep), was dropped as one (h37-cpuloop31's Left 2, h37-accum32).

    ASSUMPTION this replaces: an empty last step shows only against GPU records.  A capture whose GPU side was not
    recorded (a PyTorch build whose profiler records the host alone: a 2-GPU naive-DDP benchmark's rank) ends with the
    ``ProfilerStep#4`` of 17 us its last ``prof.step()`` opened, holding nothing, kept as a fourth step: steps of
    2.91, 2.80 and 0.017 ms, a mean of 1.91 ms for iterations of 2.86 ms, and a step-time spread of 0.70."""
    if r.source not in _HOST_SOURCES or kept.ids.size < 2:
        return None
    s, e = int(kept.hs[-1]), int(kept.he[-1])
    if r.active:
        return None if _launched_work(r.trace.h, r.active, s, e) else ("no GPU work was launched in it",
                                                                        "it launched no GPU work")
    until = _last_mark_reach(r, kept)  # its mark's end, or past it where the marks hold part of each turn
    unrecorded = "no host op ran in it, and the capture recorded no GPU work"
    # a blocking OS call the program made inside its own mark is its work (a turn asleep in ``select``); and where
    # the earlier steps hold nothing but their marks either, the marks are all the capture records of every turn:
    # the last, as bare as the others, is no stub the profiler's stop closed but one more turn
    if _holds_host_work(r.trace.h, s, e, until) or (e > s and _made_an_os_call(r.trace.host_waits, s, e)):
        return None
    if e > s and not _any_held_host_work(r.trace.h, kept.hs[:-1], kept.he[:-1]):
        return None
    if e > s and (e - s) * T("job.uneven_turns_ratio") >= float(np.median(kept.he[:-1] - kept.hs[:-1])):
        return None  # a closed mark as long as a turn is one: the stub is the instant before the profiler's stop
    return unrecorded, "no host op ran in it"


def _drop_short_last(r: _Reading, kept: _Kept, dropped: list[DroppedStep]) -> None:
    """A last step cut short: its mark (a part mark, or an iteration range the capture ended inside) ends where its
    work ends, shorter than every other step's start to the next's -- nothing marks where that iteration ends."""
    if r.source not in _PART_MARKS + ("iteration_range",) or kept.ids.size < 2:
        return
    if not (_last_cut_short(kept.hs, kept.he) or _two_part_marks(r, kept) or _top_range_last_short(r, kept)):
        return
    held = (int(kept.he[-1]) - int(kept.hs[-1])) / PS_PER_MS
    tiles = float(np.diff(kept.hs).min()) / PS_PER_MS
    if r.source == "iteration_range":
        _drop_one(r, kept, dropped, -1, f"partial: the capture ended inside it ({held:,.1f} ms of an iteration range, "
                  f"where every other iteration ran at least {tiles:,.1f} ms from its start to the next's)",
                  "; dropped the last iteration: the capture ended inside it")
    else:
        _drop_one(r, kept, dropped, -1, f"partial: {held:,.1f} ms from its start to its work's end, where every other "
                  f"step ran at least {tiles:,.1f} ms from its start to the next's: its mark holds part of each "
                  f"iteration, and nothing marks where the last one ends",
                  "; dropped the last step: it ends where its mark and its work end, not at a next step's start")


def _drop_evaluating(r: _Reading, kept: _Kept, dropped: list[DroppedStep]) -> None:
    """Drop a training job's steps that hold an evaluation pass the other steps do not (:func:`_evaluating`), where two
    steps or more are left, and say which and how long their evaluation ran.

    Why: a loop whose ``train_step`` range wraps its ``evaluate()`` every N steps (``if step % N == 0``) makes those
    steps longer by the evaluation -- 8 training steps of 8.03 ms, two ``eval_step`` forwards inside step 3, read "6
    steps of 10.7 ms", one of 24.1 ms (h37-probe45n's Left 1).  An evaluation at the mark's tail or head is cut off
    the step by :mod:`.apart` (h37-probe46e); one with training on both sides of it cannot be (a window is not
    holed), so that step is no steady step.  One in every step is the loop's own time: nothing dropped."""
    if not r.training or kept.ids.size < 3:
        return
    held, names, took = _evaluating(r.trace, kept)
    n = int(held.sum())
    if not n or held.all() or kept.ids.size - n < 2:
        return
    word = ", ".join(f"`{x}`" for x in names[:3]) + (" ..." if len(names) > 3 else "")
    _drop_masked(r, kept, dropped, held, f"evaluating: holds an evaluation range ({word}) the other steps do not",
                 f"; dropped {plural(n, 'step')} holding an evaluation range ({word}, {took / PS_PER_MS:,.1f} ms in "
                 "all) the other steps do not hold: the training step's time and the evaluation's are one window")


def _evaluating(trace: Trace, kept: _Kept) -> tuple[np.ndarray, list[str], float]:
    """Bool per kept step: an evaluation range (``user_ranges.evaluation_ranges``: named ``eval``, ``validation``,
    ``val_step 3``; outermost on its thread) starts inside its host window -- a range of a process whose rank marks
    its own steps (``_Kept.host_own``) inside that rank's own window; those ranges' names, and their summed length
    (ps).  A step that is itself an evaluation range holds one, as every step of such a loop does.

    Why the rank's own window: the host's step k runs from the first rank's kth mark to the last rank's kth end, so
    a rank that opens its evaluation as its step ends opens it inside the host's step while a rank behind it still
    trains: 2 ranks 50 us apart, each cut at its own ``eval_step`` (``steps.apart._cut_own``), dropped the step before
    each evaluation as "evaluating" (8 steps, 5 kept for 6; h37-probe47s)."""
    h = trace.h
    sel = user_ranges.evaluation_ranges(h, trace.ranges, trace.annotations)
    out = np.zeros(kept.hs.size, dtype=bool)
    if not sel.size or not kept.hs.size:
        return out, [], 0.0
    starts = h.start[sel].astype(np.int64)
    k = np.full(sel.size, -1, np.int64)
    rest = np.ones(sel.size, bool)
    for on, w in own_step_rows(kept.host_own, kept.hs.size, trace.gpu_host_lines or {}, h.line[sel]):
        mine = rest & on
        rest &= ~mine
        k[mine] = _step_holding(w[:, 0], w[:, 1], starts[mine])
    k[rest] = _step_holding(kept.hs, kept.he, starts[rest])
    inside = k >= 0
    out[k[inside]] = True
    mine = sel[inside]
    names = sorted({h.names[int(h.name[i])] for i in mine.tolist()})
    return out, names, float((h.end[mine] - h.start[mine]).astype(np.int64).sum())


def _step_holding(hs: np.ndarray, he: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per start (ps): the window (``hs``, ``he``, sorted by start) it lies in, -1 where none holds it."""
    k = np.searchsorted(hs, starts, side="right") - 1
    inside = (k >= 0) & (starts < he[np.clip(k, 0, None)])
    return np.where(inside, k, -1)


def _in_warmup_ranges(trace: Trace, starts: np.ndarray) -> tuple[np.ndarray, str]:
    """Bool per step (by its host start): the step begins inside a user range the program names as its warm-up
    (``frameworks.nvtx.is_warmup_name``: a benchmark's ``Warm-up`` around the iterations it does not measure), and
    the first such range's name."""
    h = trace.h
    sel = user_ranges.warmup_ranges(h, trace.ranges)
    if not sel.size:
        return np.zeros(starts.size, dtype=bool), ""
    ws, we = union_intervals(h.start[sel].astype(np.int64, copy=False), h.end[sel].astype(np.int64, copy=False))
    k = np.searchsorted(ws, starts.astype(np.int64), side="right") - 1
    inside = (k >= 0) & (starts < we[np.maximum(k, 0)])
    outer = sel[np.argmax(h.end[sel] - h.start[sel])]  # the whole warm-up, not one of its iterations
    return inside, h.names[int(h.name[outer])]


def _cold_steps(trace: Trace, kept: _Kept, job: Job) -> np.ndarray:
    """Bool per step: it holds one-time costs (their host spans start inside the step's host window): a one-time
    call of a process whose rank numbers its own steps (``_Kept.host_own``) inside that rank's own window, the spans
    no single call is (``OneTime.shared_start``) and the other calls inside the host's.

    Why: the host's step k runs from the first rank's kth step's start to the last rank's kth end, so a rank's call
    between its own steps lies in whichever host window the other ranks' steps make there: rank 1 of 2 loading a module
    for 30 ms before its step 6 (its later steps 30 ms late) dropped step 6 -- rank 0's step 6 had started -- and kept
    rank 1's step 5 that holds the load, 3.33 ms a step of start-up on its GPU, where the rank alone drops step 5
    (``synthetic.nsysexport.write_rank_pause``; h37-probe43r).  A rank's cost lies in its own step, as its GPU sees."""
    p = job.phase
    h = trace.h
    calls = p.calls[p.calls < len(h)] if p.calls.size else p.calls
    out = np.zeros(kept.hs.size, dtype=bool)
    rest = np.ones(calls.size, bool)
    for on, w in own_step_rows(kept.host_own, kept.hs.size, trace.gpu_host_lines or {}, h.line[calls]):
        mine = rest & on
        rest &= ~mine
        _mark_inside(out, w[:, 0], w[:, 1], h.start[calls[mine]].astype(np.int64))
    if not kept.host_own:  # no rank numbers its own steps: the host's windows, as ever
        _mark_inside(out, kept.hs, kept.he, p.start)
        return out
    starts = np.concatenate([h.start[calls[rest]].astype(np.int64), p.shared_start.astype(np.int64)])
    _mark_inside(out, kept.hs, kept.he, starts)
    return out


def _mark_inside(out: np.ndarray, hs: np.ndarray, he: np.ndarray, cs: np.ndarray) -> None:
    """Set ``out`` for each window (``hs``, ``he``, sorted) holding one of the starts ``cs``."""
    if not cs.size or not hs.size:
        return
    k = np.searchsorted(hs, cs, side="right") - 1
    ok = (k >= 0) & (cs < he[np.clip(k, 0, None)])
    out[k[ok]] = True
