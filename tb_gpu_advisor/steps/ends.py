"""Where a step ends: whether a host window launched GPU work, the device end of the last step's work,
and whether a last step is partial: shorter than every other step's start-to-start time by more than chance, under
half the shortest of them, or the second of two steps whose spans each hold only part of an iteration.

Why: host marks tile time, so the last step has no next mark to end it; its end is read from its work, and a last
step the window cut short would pull the mean down, so it is dropped where the others show it is short.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.model.columns import loop_turn, sorted_unique
from tb_gpu_advisor.model.trace import OFF_CPU, DeviceEvents, HostEvents, HostWaits, Trace
from tb_gpu_advisor.steps.reading import _Kept, _Reading
from tb_gpu_advisor.steps.types import _BURSTS_TILED, _TURN_MARKS, PS_PER_MS


def _top_range_last_short(r: _Reading, kept: _Kept) -> bool:
    """Whether the last of three or more steps read from the most repeated top-level range (``nvtx_top_range``) ends
    at its own work short of every other step's start to the next's by more than chance moves an edge
    (:func:`_last_ends_at_own_work`, the test the job's own tiled readings take).

    Why: such a range is a guess at the iteration; where it is one phase of it (a training loop's ``forward``, a
    loader's ``load`` before ``evaluate`` and ``metrics``), the last step ends where that phase's work ends, and the
    rest of the iteration is in no step -- at half of it or more, :func:`_last_cut_short`'s bar let it through: 3
    passes of 19.96 ms read 19.96, 19.96 and 10.22 ms (``forward`` around 15 of each pass's 29 kernels; h37-randjobs12,
    walk seed 83)."""
    return r.source == "nvtx_top_range" and kept.ids.size >= 3 and _last_ends_at_own_work(kept) is not None


def _last_cut_short(hs: np.ndarray, he: np.ndarray) -> bool:
    """Whether the last of tiled steps (``hs``, ``he``: host windows, ps) is under half the shortest of the others'
    start-to-start times (the shortest: a cold first step, 1,175 ms before steps of 3.5 ms, says nothing of the rest).

    Why: every tiled step but the last runs from its mark to the next one's, so it holds a whole iteration wherever in
    the iteration the mark stands; the last ends where its own mark and the work launched in it end.  Where the mark
    holds only part of each iteration (an MPI saxpy's NVTX ``saxpy`` range around its launch alone: 17.7 ms of the
    254 ms iterations), that step is a fraction of one, and averaging it with the whole ones understates the step
    (208 ms for 256)."""
    if hs.size < 3:
        return False
    return float(he[-1] - hs[-1]) < 0.5 * float(np.diff(hs).min())


def _chance(tile: np.ndarray) -> float:
    """How far (ps) chance moves the end of a step tiled start to next start (``tile``: the others' start-to-start
    times): the others' own spread, and the noise floor's share (``steps.short_last_share``) of the shortest."""
    step = float(tile.min())
    return max(T("steps.short_last_share") * step, float(tile.max()) - step)


def _steady(tile: np.ndarray) -> np.ndarray:
    """The start-to-start times of the steady steps among tiled ones (``tile``): all but the first step's where that
    one lies outside the others' range by more than chance moves them (:func:`_chance` of the others, two or more) --
    the first step is an edge, as the last one judged against them is.

    Why: the first step holds whatever ran before the loop's first iteration and joined it (a set-up upload queued
    into the first burst: 6.48 ms before steady steps of 3.11-3.21 ms), so its time widened :func:`_chance` to 3.37 ms,
    more than the steps themselves, and a 5-iteration loop's last burst of 1.10 ms, cut at its own work, was kept as a
    whole step (h37-probe47n *Left* 2).  The steps between the edges say what chance moves a step by; a first step
    within it is one of them (a loop whose iterations vary, 3.07 ms then 3.15 and 3.23: its last, 3.06, is whole)."""
    if tile.size < 3:
        return tile
    rest = tile[1:]
    room = _chance(rest)
    return tile if float(rest.min()) - room <= float(tile[0]) <= float(rest.max()) + room else rest


def _last_burst_to_window_end(trace: Trace, hs: np.ndarray, he: np.ndarray) -> int:
    """Where the last of at least :data:`_BURSTS_TILED` GPU bursts' steps (``hs``, ``he``: tiled, ps) ends: at the
    profiler's own window's end where that falls a whole step after its start (within :func:`_chance` of the steady
    others' start-to-start times, :func:`_steady`) or one of the loop's turns after its work (:func:`_a_turn_after`),
    else at its own work's end.

    Why: each burst's step runs to the next burst's start, so it holds the host's time after its work; the last has no
    next burst in the window.  Where the window goes on idle for as long as a step and ends where the next one would
    have started, it recorded that time (a schedule's window closes at the loop's ``prof.step()``; 3 uploads, each
    then 20 ms of the host's, a window to the last one's end: the last step 116 ms of 137 without it); where it ends
    at the burst's work, nothing says how long the iteration ran on (:func:`_last_ends_at_own_work` judges it).  The
    steady steps judge it, as they judge a last step cut at its work: a first iteration of one-time work (6.11 ms
    before steps of 3.15-3.23) widened chance to 2.96 ms, and a window that ran on 2.5 ms of the host's own work after
    the loop made the last step 5.80 ms (h37-probe47s *Left* 3)."""
    last = int(he[-1])
    end = trace.window_end_ps()
    if hs.size < _BURSTS_TILED or end is None:
        return last
    if any(int(d.end.max()) > last for d in trace.devices if len(d)):  # GPU work after it (bursts outside a frame)
        return last
    tile = _steady(np.diff(hs).astype(np.float64))
    ran, room = float(end - int(hs[-1])), _chance(tile)
    if end > last and float(tile.min()) - room <= ran <= float(tile.max()) + room:
        return end
    return end if end > last and _a_turn_after(_turns(trace, hs), float(end - last)) else last


def _turns(trace: Trace, hs: np.ndarray) -> np.ndarray:
    """Each tiled step's turn (ps): its start to the next one's (``hs``) less its own GPU work -- the time from its
    last device event's end in the step to the next step's start (the host's own code between iterations)."""
    done = hs[:-1].astype(np.int64).copy()
    for d in trace.devices:
        if not len(d):
            continue
        order = np.argsort(np.asarray(d.start, np.int64), kind="stable")
        st, en = np.asarray(d.start, np.int64)[order], np.asarray(d.end, np.int64)[order]
        at = np.searchsorted(st, hs)
        for i in range(hs.size - 1):
            if at[i + 1] > at[i]:
                done[i] = max(done[i], int(en[at[i]:at[i + 1]].max()))
    return (hs[1:] - done).astype(np.float64)


def _a_turn_after(turns: np.ndarray, tail: float) -> bool:
    """Whether the window's time after the last step's work (``tail``, ps) is one of the loop's turns (``turns``:
    :func:`_turns`): within the steady ones' range by chance (:func:`_steady`, :func:`_chance`).

    Why: an iteration's length is its work and its turn; where the last iteration's work differs from the others' (a
    loop whose iterations grow: a GEMM and 3 kernels, then 4), its work + turn lies outside the steps' range though
    the window closed one turn after it -- where the next iteration would have started.  The work is measured; only
    the turn needs judging against the others' turns."""
    if turns.size < 2 or float(turns.min()) <= 0.0:
        return False
    steady = _steady(turns)
    room = _chance(steady)
    return float(steady.min()) - room <= tail <= float(steady.max()) + room


def _last_ends_at_own_work(kept: _Kept) -> tuple[float, float] | None:
    """(the last step's length, the shortest other start-to-start time; ms) where the last of steps tiled start to next
    start is shorter than every other's start-to-start time on every GPU (its step windows: the ledger's home); None
    else.

    Why: each iteration the job's own reading tiles (:data:`_TILED`: a launch sequence's repeats, the updates' ends)
    runs to the next one's start, so it holds its work and the time after it (the result read back, the next batch's
    loading); the capture's last ends where its own work ends, with no next iteration to run to.  Where it is the
    shortest it lacks that time, and averaged with the whole ones it understates the step (h37-randjobs6: 5 repeats of a
    3.17 ms loop, the last 2.61 ms, mean 3.06 ms).  The stock rule drops the last of more than
    ``steps.drop_edges_above`` steps anyway; of fewer, this one is dropped where it is short by more than chance moves
    a window's edge (``steps.short_last_share`` of the step, and the others' own spread): a benchmark's last pass,
    synced at its end, 20.02 ms of 20.23, holds its whole pass."""
    n = kept.ids.size
    wins = [w for w in kept.gpu.values() if w.shape[0] == n] or [np.stack([kept.hs, kept.he], axis=1)]
    held, tiles = 0.0, np.inf
    for w in wins:
        tile = _steady(np.diff(w[:, 0]).astype(np.float64))
        last, step = float(w[-1, 1] - w[-1, 0]), float(tile.min())
        if not 0 < last < step - _chance(tile):  # short by more than chance moves a window's edge
            return None
        held, tiles = max(held, last), min(tiles, step)
    return held / PS_PER_MS, tiles / PS_PER_MS


def _two_part_marks(r: _Reading, kept: _Kept) -> bool:
    """Whether the last of two tiled steps read from marks the program repeats -- its own spans (``job.structure``) or
    a repeated NVTX range (``nvtx_top_range``) -- is part of an iteration: the first step's own mark falls short of its
    tile (its start to the next one's) by more than chance moves an edge (:func:`_chance`), so each mark holds part of
    an iteration, and the last step, ending where its mark and its work end, falls that short of the tile too.

    Why apart from :func:`_last_cut_short`: with one other step, its tile alone cannot tell a cold first step (its
    one-time work inside its tile) from a mark that holds part of each iteration -- the mark itself can: a cold first
    call's span holds its compilation.  Two jitted executions (``PjRtCApiLoadedExecutable::Execute``, 0.2 ms each)
    12.4 ms apart read as steps of 12.2 and 0.4 ms, a 6.3 ms mean (h37-xplane3); two training iterations read from
    their ``backward`` range opened by ``forward``, a DataLoader wait before each, 3.275 and 2.646 ms (the second
    without the next batch's wait, h37-seeds23: main's bar, half the tile, let a mark of 81% of it through)."""
    marks = _first_mark(r, kept)
    if marks is None:
        return False
    tile = np.asarray([float(int(kept.hs[1]) - int(kept.hs[0]))])
    room = float(tile[0]) - _chance(tile)
    return marks < room and float(int(kept.he[1]) - int(kept.hs[1])) < room


def _first_mark(r: _Reading, kept: _Kept) -> float | None:
    """The length (ps) of the first of two kept steps' own mark, as read before tiling: the program's span
    (``job.structure``) or the NVTX range's window (from its iteration's opening phase); None where the steps are not
    two such marks with a next one."""
    own = r.own
    if kept.ids.size != 2:
        return None
    i = int(kept.ids[0])
    if own is not None and r.source == own.source:
        return float(int(own.end[i]) - int(own.start[i])) if i + 1 < own.start.size else None
    if r.source != "nvtx_top_range" or r.read_end.size != r.ids.size:
        return None
    k = int(np.searchsorted(r.ids, i))
    return float(int(r.read_end[k]) - int(kept.hs[0])) if k + 1 < r.ids.size else None


def _marks_span_their_steps(r: _Reading, kept: _Kept) -> bool:
    """Whether each earlier kept step's own mark (``r.read_end``: its end as read, before tiling) reaches the next
    step's start within chance (:func:`_chance` of the start-to-start times): the marks tile the loop, so the last
    mark's own end is where its step ends.  False where some mark ends short of the next start by more (a mark
    around one phase of each turn: NVTX ``load batch`` with ``preprocess`` after it) or the marks' ends are unknown.

    Why: a ``ProfilerStep#N`` runs from one ``prof.step()`` to the next, so the last mark, closed by the profiler's
    stop, holds the whole of its step; what follows it (the profiler's own ``cudaDeviceSynchronize``, the program's
    code after the loop) is no part of it.  A mark around one phase holds part of each turn, and the rest of the
    last turn runs after its end."""
    n = kept.ids.size
    if n < 2 or r.read_end.size != r.ids.size:
        return False
    k = np.searchsorted(r.ids, kept.ids[:-1])
    if (k >= r.ids.size).any() or (r.ids[np.minimum(k, r.ids.size - 1)] != kept.ids[:-1]).any():
        return False
    tile = np.diff(kept.hs).astype(np.float64)
    gaps = kept.hs[1:].astype(np.float64) - r.read_end[k].astype(np.float64)
    return bool((gaps <= _chance(tile)).all())


def _last_mark_reach(r: _Reading, kept: _Kept) -> int:
    """How far (ps) the last kept host-marked step's window is judged for its own work: its mark's end where the marks
    span their steps (:func:`_marks_span_their_steps`), else as long as the shortest earlier step (those run to the
    next mark, the last only to its own mark's end), and to the capture's end for a mark of no length (one the
    capture ended inside: Lightning's last ``run_training_batch``, its end never written).

    ASSUMPTION this replaces: *a last mark's work may follow its end* for every mark.  That holds for a mark around
    one phase of each turn (h37-review29: NVTX ``load batch``, its ``preprocess`` after it), not for a mark that spans
    its step: a capture whose GPU records were lost ends with the ``ProfilerStep#4`` of 32 us the last
    ``prof.step()`` opens, and the profiler's ``cudaDeviceSynchronize`` 34 us after it, inside the 4.68 ms reach the
    earlier step lent it, was read as its work -- 2 steps of 2.37 ms for one of 4.71 (Abenich7's ``trace0.json``,
    h37-survey70's Left 2).  Where GPU records are there, the last step is judged by the launches inside its own
    mark alone (:func:`_launched_work` over ``[s, e]``), the same extent."""
    s, e = int(kept.hs[-1]), int(kept.he[-1])
    if e <= s:
        return int(np.iinfo(np.int64).max)
    if _marks_span_their_steps(r, kept):
        return e
    return max(e, s + int((kept.he[:-1] - kept.hs[:-1]).min()))


def _launched_work(h: HostEvents, devs: list[DeviceEvents], s: int, e: int) -> bool:
    """Some device event was launched (host correlation_id record) within [s, e]: the window is a step of the GPU
    job, not the empty one a final ``prof.step()`` opens after the loop's last step (shreyansh26/MLSys-Experiments'
    pinned-copy traces: ``ProfilerStep#4`` of 18 us holding only the profiler's stop, read as a second step that
    halved the step time)."""
    m = (h.corr >= 0) & (h.start >= s) & (h.start <= e)
    if not m.any():
        return False
    corr = sorted_unique(h.corr[m])
    return any(bool(np.isin(d.corr, corr).any()) for d in devs)


def _holds_host_work(h: HostEvents, s: int, e: int, until: int | None = None) -> bool:
    """Some host event begins within ``[s, until)`` (``until`` None: ``e``) other than one spanning the whole window
    ``[s, e]`` (the step's own mark, the profiler's span around the capture): the window ran some of the program's
    work.  The evidence for a step where the capture recorded no GPU work to read :func:`_launched_work` by: CUDA
    activity off, or a build whose profiler records the host alone (its ``ProfilerStep#N`` of 17 us after the loop's
    last iteration holds nothing)."""
    inside = (h.start >= s) & (h.start < (e if until is None else until))
    return bool((inside & ~((h.start <= s) & (h.end >= e))).any())


def _any_held_host_work(h: HostEvents, hs: np.ndarray, he: np.ndarray) -> bool:
    """Some host event begins strictly inside one of the windows ``(hs[k], he[k])``: the steps record work besides
    their own marks (a child range, a CPU op), so a step that holds none differs from them."""
    if not hs.size or not len(h):
        return False
    st = np.sort(h.start.astype(np.int64, copy=False))
    inside = np.searchsorted(st, he.astype(np.int64), "left") - np.searchsorted(st, hs.astype(np.int64), "right")
    return bool((inside > 0).any())


def _made_an_os_call(waits: HostWaits | None, s: int, e: int) -> bool:
    """Some blocking OS call (Nsight's OS runtime trace, ``-t osrt``) begins and returns within ``[s, e]``: the
    program made it there -- a ``sleep``'s ``select``, a ``read`` of its input -- so the window ran some of its work,
    though no host event but its own mark begins in it.  A thread's stretch off the CPU (``OFF_CPU``, the scheduler's
    trace) is no call the program made, and is left out.

    ASSUMPTION this replaces: *a host-only capture records the program's work in its host events alone*.  Host events
    are the CPU ops and ranges; the OS runtime trace keeps the calls apart (``model.trace.HostWaits``), so a loop whose
    turn blocks in one -- quasiben/nvtx-examples ``quickstart.sqlite``: 5 ``loop`` ranges, each a ``time.sleep(i)``
    held in one ``select`` of 0-4 s -- read its last turn, a 4.004 s ``select``, as the empty step a last
    ``prof.step()`` opens, and dropped it: "4 marked steps of 1.50 s" for 5 of 2.00 s."""
    if waits is None or not len(waits):
        return False
    off = np.fromiter((n == OFF_CPU for n in waits.names), bool, len(waits.names))
    inside = (waits.start >= s) & (waits.end <= e)
    return bool((inside & ~off[waits.name]).any()) if waits.names else bool(inside.any())


def _kernels_launched_after(h: HostEvents, devs: list[DeviceEvents], e: int) -> bool:
    """A kernel (or collective) was launched after ``e``: ranges that end there do not enclose the pass's GPU work
    (a ``forward`` range with the backward and the optimizer's step launched after it), so they bound nothing --
    the set-up before them is no step, but the work after them is.  Copies are left out: reading the results back
    after the measured pass (``loss.item()``, ``.cpu()``) is no part of the pass's compute."""
    m = (h.corr >= 0) & (h.start > e)
    if not m.any():
        return False
    corr = sorted_unique(h.corr[m])
    return any(bool(np.isin(d.corr[(d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)], corr).any())
               for d in devs)


def _last_step_device_end(h: HostEvents, devs: list[DeviceEvents], s: int, e: int) -> int:
    """End of the last device event launched (host correlation_id record) within [s, e]; ``e`` where none ends later.

    Why closed, where a tiled last step reads its work half-open (``steps.place._last_launched_end``): this is the
    end of one framed pass (``steps.passes``), whose ranges tile nothing -- no next window opens at ``e`` to own a
    launch there -- and whose launches :func:`_launched_work` reads in the same ``[s, e]``, with only those after
    ``e`` (:func:`_kernels_launched_after`) left outside it (h37-lastend kept this measure for the pass)."""
    m = (h.corr >= 0) & (h.start >= s) & (h.start <= e)
    if not m.any():
        return e
    corr = sorted_unique(h.corr[m])
    best = e
    for d in devs:
        hit = np.isin(d.corr, corr)
        if hit.any():
            best = max(best, int(d.end[hit].max()))
    return best


def _last_marker_turn(r: _Reading) -> int:
    """Where the last of host-marked steps (``r.hs``; ``r.read_end``: each marker's own end) ends at least: its marker's
    end and the loop's turn after it -- ``model.columns.loop_turn`` of the times from each earlier marker's end to the
    next one's start, never longer than the longest earlier step (by more than :func:`_chance`) nor past the
    profiler's window's end; its marker's end where the source is none of :data:`_TURN_MARKS` or no earlier step has a
    next.

    Why: each marked step runs to the next marker's start, so it holds the loop's own code between its marker and the
    next (the loop's turn: its bookkeeping, the iterator's advance); the last has no next marker and ended at its own,
    so it lacked that time -- a grain-fed JAX loop of 2 steps read 2.976 and 2.795 ms, the last without its 15 us
    turn (``--forms12`` seed 4044, h37-seeds24's left).  The turn is the loop's, read as every reading of a last
    step's missing turn reads it (``loop_turn``, h37-lastturn): the least took one cut turn for the loop's and the
    last step fell short; a gap that held a one-time cost (an evaluation between two steps) stretches no last step;
    of two steps, the longest-step bound keeps it from making the last longer than any step seen."""
    end = int(r.read_end[-1]) if r.read_end.size else 0
    if r.read_end.size != r.hs.size or r.hs.size < 2 or not (r.source in _TURN_MARKS or _ranges_span_turns(r)):
        return end
    hs = r.hs.astype(np.int64)
    turn = loop_turn(hs[1:] - r.read_end[:-1])
    # never longer than the longest tile before it by more than chance moves an edge, never past the window's end
    tile = np.diff(hs).astype(np.float64)
    stop = min(int(hs[-1] + tile.max() + _chance(tile)), r.trace.window_end_ps() or np.iinfo(np.int64).max)
    return max(end, min(end + turn, stop))


def _ranges_span_turns(r: _Reading) -> bool:
    """Whether repeated NVTX ranges (``nvtx_top_range``) each span their step but the loop's turn: every earlier
    range's end (``r.read_end``) reaches the next one's start within the noise floor's share
    (``steps.short_last_share``) of the shortest start-to-start time -- not the steps' own spread, which in a loop of
    uneven turns (CPU sleeps of 0 to 4 s) would call any gap a turn.

    Why: a benchmark's ``pass N`` range around each timed pass and its sync leaves the timing loop's own 200 us after
    it; every step but the last runs to the next range's start and holds it, the last ended at its range's end -- one
    rank read its last pass 20.03 ms of a 20.23 ms iteration, where each of two ranks' GPUs read 20.23 (their own
    windows: the work's end and the least gap, ``steps.place._last_device_end``; h37-probe47g *Left* 4).  A range
    around one phase of each turn (``load batch``, ``preprocess`` after it) ends short of the next by more: its last
    step is judged by its work (:func:`_last_mark_reach`), not given a turn.  Only where the capture recorded GPU
    work (``r.active``), as the device windows that read the turn on several ranks: a host-only loop's last mark may
    be the stub the profiler's stop closes (``steps.drop._empty_last``), an instant a turn would hide."""
    if r.source != "nvtx_top_range" or not r.active:  # a host-only loop: its stub and turns are judged by its marks
        return False
    hs = r.hs.astype(np.int64)
    gaps = (hs[1:] - r.read_end[:-1].astype(np.int64)).astype(np.float64)
    return bool((gaps <= T("steps.short_last_share") * float(np.diff(hs).min())).all())


def _results_read_until(r: _Reading, mark_end: int) -> float:
    """Until when (host ps) a device-to-host copy launched after the host's last step mark is the step's results
    read back: before the host launches anything else to any GPU after that mark (inf where it launches nothing else).

    Why: Keras reads each batch's loss and metrics back (``.numpy()`` for its progress bar: 4-byte D2H copies) after
    its step function returned and before the next batch -- the loop's own per-step work, which TensorFlow's
    ``Steps`` line keeps.  What the host launches after the mark besides such reads (the TensorBoard callback's
    ``LogicalAnd`` summary op, and any read after it) is other code's.  Read as kernels, the reads were cut with the
    callback's op: a 10.9 ms RTX 2060 step (the stock tool's) read 8.06 ms against 9.77 ms with its reads
    (aoberai/chess-engine's Keras sessions, h37-survey75)."""
    h = r.trace.h
    first = np.inf
    for d, launch in zip(r.trace.devices, r.launched()):
        other = (launch >= 0) & (d.kind != devices.KIND_D2H)
        at = h.start[launch[other]]
        at = at[at > mark_end]
        if at.size:
            first = min(first, float(at.min()))
    return first


def _grouped_after_last_mark(r: _Reading, mark_end: int | None) -> None:
    """End the last step of a per-GPU step line (``steps_line``) with the work launched before the host's last step
    mark ended, where work launched after that mark stretched it (``r.gpu_windows``, ``r.he`` and ``r.note`` change).

    Why: TensorFlow's derived ``Steps`` line spans each step group from its first device event to its last, and the
    grouping follows the eager ops the program runs after its step function returned: the Keras TensorBoard callback
    that stops the profiler after the profiled batch runs its summary ops (``LogicalAnd``, ``WriteSummary``) with the
    batch's group id, so a step of 12 ms read 59 ms, 45 ms of it the callback's own Python (ecbme4040 assignment 2 T4
    captures, h37-survey65).  A GPU runs only what was launched to it, and what the host launched after its last step
    mark ended is no part of that step -- the rule host-marked steps already follow
    (:func:`_last_step_device_end`); only the last step is read so, as every other step runs to the next one's start.
    The step's results the loop reads back before launching anything else stay in it (:func:`_results_read_until`).
    ``mark_end``: where the host's last step mark ends (``steps.markers._last_step_mark_end``), None where the host
    marks no step."""
    if mark_end is None or not r.gpu_windows or not r.ids.size:
        return
    h = r.trace.h
    reads_until = _results_read_until(r, mark_end)
    cut, late = 0, 0
    for d, launch in zip(r.trace.devices, r.launched()):
        w = r.gpu_windows.get(d.gpu)
        if w is None or not len(d):
            continue
        s, e = int(w[-1, 0]), int(w[-1, 1])
        inside = (d.start >= s) & (d.end <= e)
        after = inside & (launch >= 0)
        at = h.start[launch[after]]
        after[after] = (at > mark_end) & ~((d.kind[after] == devices.KIND_D2H) & (at < reads_until))
        own = inside & ~after
        if not after.any() or not own.any():
            continue
        end = int(d.end[own].max())
        if end < e:
            w[-1, 1] = end
            cut, late = cut + int(after.sum()), max(late, e - end)
    if cut:
        r.he[-1] = max(int(r.hs[-1]), max(int(w[-1, 1]) for w in r.gpu_windows.values()))
        r.note += (f"; the last step ends with the work launched before its host mark ended: {cut} device event"
                   f"{'s' if cut > 1 else ''} the host launched after it ({late / PS_PER_MS:.1f} ms later) left out")
