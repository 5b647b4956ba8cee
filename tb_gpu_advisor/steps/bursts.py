"""The GPU's bursts: the program's own busy intervals (Unified-memory migrations out), cut into
clusters apart by an idle gap much longer than the usual one (:func:`_busy_clusters`), or by the host's sync between
them (:func:`_synced_bursts`); a gap the host spends inside one op or range is no gap between iterations
(:func:`_gaps_inside_one_range`), and bursts that share no work are no repeats (:func:`_bursts_repeat`; copies by
their name only between bursts of copies alone, :func:`copies_alone_repeat`; bursts of kernels by their whole
transfers, :func:`_burst_transfers`).

Why: with no marker, range or span, the GPU's idleness is the last evidence of where one iteration ends -- a guess
(low confidence), so each cut must show repeated work.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.model.columns import union_intervals
from tb_gpu_advisor.model.trace import DeviceEvents, HostEvents
from tb_gpu_advisor.steps.types import PS_PER_MS


def _program_busy(devs: list[DeviceEvents]) -> tuple[list[DeviceEvents], list[np.ndarray], np.ndarray, np.ndarray] | None:
    """(the devices with events, each one's mask of the program's own work, the union's starts and ends) -- Unified
    Memory migrations left out (:func:`_busy_clusters` says why); None with fewer than 4 events or 3 busy intervals,
    too few to cut into bursts.  The one reading :func:`_busy_clusters` and :func:`_framed_bursts` cut."""
    own, keep = _own_work(devs)
    st = np.concatenate([d.start[k] for d, k in zip(own, keep)]) if own else np.zeros(0, np.int64)
    en = np.concatenate([d.end[k] for d, k in zip(own, keep)]) if own else np.zeros(0, np.int64)
    if st.size < 4:
        return None
    us, ue = union_intervals(st.astype(np.int64, copy=False), en.astype(np.int64, copy=False))
    return (own, keep, us, ue) if us.size >= 3 else None


def _own_work(devs: list[DeviceEvents]) -> tuple[list[DeviceEvents], list[np.ndarray]]:
    """(the devices with events, each one's mask of the program's own work): Unified Memory migrations left out, the
    driver's paging (:func:`_busy_clusters` says why)."""
    own = [d for d in devs if len(d)]
    return own, [~devices.managed_migration(d.names)[d.name] for d in own]


def _cluster_gap(gaps: np.ndarray) -> float:
    """The idle gap (ps) past which the GPU's bursts are apart: ``steps.cluster_gap_factor`` times the median gap,
    at least ``steps.cluster_min_gap_ms``."""
    return max(T("steps.cluster_gap_factor") * float(np.median(gaps)), T("steps.cluster_min_gap_ms") * PS_PER_MS)


def _busy_clusters(devs: list[DeviceEvents], h: HostEvents | None = None, launches: list[np.ndarray] | None = None,
                   refused: list[str] | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """Bursts of the work the program launched, apart by unusually long idle gaps.  Unified Memory migrations are
    left out: the driver makes them, in bursts of its own, whenever the host touches managed memory the GPU last
    wrote (a result check after the kernel: thousands of page-sized copies in ~2 ms bursts), or in chunks of its
    choosing for the program's ``cudaMemPrefetchAsync``, so they would make steps of the host's paging and leave the
    program's kernels out as the first or last "step".  A long gap inside one host op or range that recurs within
    the iterations is no boundary (:func:`_gaps_inside_one_range`; with ``h`` and ``launches``, each of ``devs``'s
    host launch records): the names of the ranges that held refused gaps go to ``refused``."""
    busy = _program_busy(devs)
    if busy is None:
        return None
    own, keep, us, ue = busy
    gaps = us[1:] - ue[:-1]
    big = np.nonzero(gaps > _cluster_gap(gaps))[0]
    if h is not None and launches is not None and big.size:
        inside = _gaps_inside_one_range(h, own, [la for d, la in zip(devs, launches) if len(d)], us, ue, big)
        if refused is not None:
            refused += [n for n in dict.fromkeys(inside.tolist()) if n]
        big = big[np.asarray([not n for n in inside.tolist()], dtype=bool)]
    if big.size < 1 or big.size > us.size // 2:
        return None
    starts = np.concatenate([[us[0]], us[big + 1]])
    ends = np.concatenate([ue[big], [ue[-1]]])
    if not _bursts_repeat(own, keep, starts, by_copies=True):
        return None
    return starts, ends


def _gaps_inside_one_range(h: HostEvents, own: list[DeviceEvents], launches: list[np.ndarray], us: np.ndarray,
                           ue: np.ndarray, big: np.ndarray) -> np.ndarray:
    """Per long idle gap (``big``: indices into the GPU's busy intervals ``us``/``ue``, the gap after each), the name of
    the host event that holds it, "" where none does: an event on the thread that launched the work after the gap
    that began before the GPU fell idle and ends after that launch returned, and whose name recurs more often than
    the GPU's bursts (an op, a layer's range: many per iteration).

    Why: an iteration ends between the host's ops, never inside one -- its sync returns, the loop turns, the next
    iteration's first op launches.  A gap the host spends inside one op that launched nothing yet (``aten::linear``'s
    cuBLAS set-up after a pageable copy's sync, on an FSDP forward 90% busy: a 1.0 ms idle among microsecond gaps,
    read as a step boundary that cut a 300 ms slice of one forward into "steps" of 290 and 10 ms) is that op's.  A
    name that recurs no more often than the bursts may mark the iterations themselves (a ``train_step`` range the
    host opens ahead of its GPU, a data loader's ``__next__``), or wrap the loop (one range around it all): a gap
    inside it may be a boundary, so it is left to the gaps' length."""
    out = np.full(big.size, "", dtype=object)
    if not len(h) or not big.size:
        return out
    counts = np.bincount(h.name.astype(np.int64), minlength=len(h.names))
    often = counts[h.name.astype(np.int64)] > big.size + 1  # recurs more often than there are bursts
    # per gap: the first work after it that has a launch record, on any GPU -- its launch call's thread and end
    nxt = np.full(big.size, -1, np.int64)
    nxt_t = np.full(big.size, np.iinfo(np.int64).max, np.int64)
    for d, launch in zip(own, launches):
        st = d.start.astype(np.int64, copy=False)
        order = np.flatnonzero(launch >= 0)
        order = order[np.argsort(st[order], kind="stable")]
        if not order.size:
            continue
        j = np.searchsorted(st[order], us[big + 1], side="left")
        ok = j < order.size
        cand = order[np.minimum(j, order.size - 1)]
        better = ok & (st[cand] < nxt_t)
        nxt_t[better], nxt[better] = st[cand[better]], launch[cand[better]]
    has = nxt >= 0
    if not has.any():
        return out
    lines = h.line.astype(np.int64, copy=False)
    for ln in np.unique(lines[nxt[has]]).tolist():
        ev = np.flatnonzero((lines == ln) & often)
        if not ev.size:
            continue
        ev = ev[np.argsort(h.start[ev], kind="stable")]
        st, reach = h.start[ev].astype(np.int64), np.maximum.accumulate(h.end[ev].astype(np.int64))
        for k in np.flatnonzero(has & (lines[np.maximum(nxt, 0)] == ln)).tolist():
            gs, lend = int(ue[big[k]]), int(h.end[nxt[k]])
            p = int(np.searchsorted(st, gs, side="left")) - 1  # events begun before the GPU fell idle
            if p < 0 or reach[p] <= lend:
                continue
            q = int(np.flatnonzero(h.end[ev[:p + 1]] > lend)[-1])  # the innermost such: the latest begun
            out[k] = h.names[int(h.name[ev[q]])]
    return out


def _synced_bursts(h: HostEvents, us: np.ndarray, ue: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(starts, ends) of the GPU's bursts in the busy intervals ``us``/``ue``: each ended where the GPU fell idle and
    the host waited on it (a sync ending in the idle gap) or paused past ``steps.cluster_*``; None where nothing cuts
    them.  The one cut :func:`_framed_bursts` and :func:`_framed_pass` read a frame's passes by."""
    waits = np.sort(h.end[h.name_mask(devices.is_sync_call)].astype(np.int64, copy=False))
    gaps = us[1:] - ue[:-1]
    synced = np.searchsorted(waits, us[1:], side="right") > np.searchsorted(waits, ue[:-1], side="left")
    cut = np.nonzero(synced | (gaps > _cluster_gap(gaps)))[0]
    if not cut.size:
        return None
    return np.r_[us[0], us[cut + 1]], np.r_[ue[cut], ue[-1]]


def _bursts_repeat(own: list[DeviceEvents], keep: list[np.ndarray], starts: np.ndarray, by_copies: bool = False
                   ) -> bool:
    """Whether some of the work runs in two bursts or more: steps are iterations, so bursts are steps only where the
    work repeats across them.  Bursts that share nothing are one pass of a program cut at its host's pauses, not
    iterations (fckwader/shitbox: three uploads, 14.8 s of the host's own code, then one kernel and a read-back --
    two "steps" of 7.4 s that were a single run).

    The work is a kernel or collective by name; a copy or fill is the same work by its name only between two bursts
    that run no kernel (:func:`_burst_names`): its name is its direction and memory kinds, no program's own, so a copy
    that bursts of kernels share is no evidence of a loop -- ParallelKernelsTest's three tests run once, at scalings 2
    and 4, each uploading 16 MB from pinned memory, read as 2 "steps" with the first test their warm-up
    (h37-hostalloc32) -- while a loop of copies alone (a bandwidth test) still repeats.  Bursts of kernels repeat by
    their copies where each makes the same transfers (:func:`_burst_transfers`).  ``by_copies``: any copy by its name
    too -- the busy clusters' first gate, so that a training job's own readings of its bursts (a burst of copies alone
    joined to its iteration, bursts without a backward) speak first; ``steps.burst_steps`` asks again without it."""
    seen: dict[tuple[int, int], int] = {}  # (what, its hash) -> the first burst it ran in
    for key, b in _burst_names(own, keep, starts, by_copies):
        first = seen.setdefault(key, b)
        if first != b:
            return True
    return False


_WORK, _COPY, _TRANSFERS = 0, 1, 2  # what a key of :func:`_burst_names` hashes: a kernel's name, a copy's, a burst's copies


def _burst_names(own: list[DeviceEvents], keep: list[np.ndarray], starts: np.ndarray, by_copies: bool = False,
                 transfers: bool = True) -> list[tuple[tuple[int, int], int]]:
    """((what, its hash), burst) for the work that runs in each burst, what :func:`_bursts_repeat` reads: each kernel
    or collective's name (``_WORK``); each copy or fill's name (``_COPY``) in bursts that run no kernel or collective
    (in every burst where ``by_copies``); and, without ``by_copies``, each burst of kernels' transfers taken together
    (``_TRANSFERS``, :func:`_burst_transfers`; left out where ``transfers`` is False: a caller that reads the copies'
    names alone need not hash every burst's copies)."""
    pairs: list[tuple[tuple[int, int], int]] = []
    with_kernels: set[int] = set()
    for d, k in zip(own, keep):
        burst = np.searchsorted(starts, d.start[k], side="right") - 1
        work = (d.kind[k] == devices.KIND_KERNEL) | (d.kind[k] == devices.KIND_COLLECTIVE)
        with_kernels.update(np.unique(burst[work]).tolist())
        names = np.asarray([hash(n) for n in d.names], np.int64)[d.name[k]]
        for is_work in (True, False):
            sel = work == is_work
            for name, b in np.unique(np.stack([names[sel], burst[sel]]), axis=1).T.tolist():
                pairs.append(((_WORK if is_work else _COPY, name), b))
    if by_copies:  # every copy by its name already: the transfers add nothing
        return pairs
    pairs = [(key, b) for key, b in pairs if key[0] != _COPY or b not in with_kernels]
    if not transfers:
        return pairs
    made = _burst_transfers(own, keep, starts)
    return pairs + [((_TRANSFERS, t), b) for b, t in made.items() if b in with_kernels]


def _burst_transfers(own: list[DeviceEvents], keep: list[np.ndarray], starts: np.ndarray) -> dict[int, int]:
    """Burst -> a hash of all its copies and fills, each by its name (direction and memory kinds), its bytes and its
    GPU and stream, as many of each as it runs; only for bursts that run some, every one of known size.

    Why: a loop's iteration moves the same data every time -- its batch's upload, its loss's read-back: the same
    bytes, from the same memory, on the same stream -- whatever its kernels are called, so two bursts of kernels
    making the same transfers are evidence of one loop where the names of kernels are none (a program whose kernels
    are compiled and named afresh each iteration).  A program run once through several phases makes each phase's
    transfers apart: ParallelKernelsTest's three tests each upload 16 MB buffers, but each test on streams of its own
    (14-18, 19-23, 24-28 in the GTX 1060 captures), and a one-pass vector add's two first uploads share no burst's
    whole set of transfers with the rest.  A copy of unknown size tells nothing: its burst gets no hash."""
    items: dict[int, list[tuple[int, str, int, str, int]]] = {}
    unknown: set[int] = set()
    for d, k in zip(own, keep):
        moved = np.flatnonzero(k & (d.kind != devices.KIND_KERNEL) & (d.kind != devices.KIND_COLLECTIVE))
        if not moved.size:
            continue
        rows = np.stack([np.searchsorted(starts, d.start[moved], side="right") - 1, d.name[moved].astype(np.int64),
                         d.mem_bytes[moved].astype(np.int64), d.stream[moved].astype(np.int64)], axis=1)
        unknown.update(np.unique(rows[rows[:, 2] < 0, 0]).tolist())
        kinds, counts = np.unique(rows, axis=0, return_counts=True)
        for (b, name, nbytes, stream), n in zip(kinds.tolist(), counts.tolist()):
            where = d.stream_names[stream] if 0 <= stream < len(d.stream_names) else str(stream)
            items.setdefault(b, []).append((d.gpu, d.names[name], nbytes, where, n))
    return {b: hash(tuple(sorted(v))) for b, v in items.items() if b not in unknown}


def copy_bursts_repeat(devs: list[DeviceEvents], starts: np.ndarray) -> bool:
    """Whether two of the GPU's bursts (``starts``) that run no kernel run a copy or fill of the same name (Unified
    Memory migrations, the driver's paging, left out).

    Why: a loop of copies alone -- a bandwidth sweep, its one check kernel after it -- runs its copies in every
    iteration, so its kernel-less bursts repeat among themselves and are its iterations; a one-pass program's
    copy-only bursts (an upload before its one burst of kernels, a read-back after it) are each run once.  The pairs
    :func:`_burst_names` gives without ``by_copies`` hold a copy's name exactly for the bursts that run no kernel."""
    own, keep = _own_work(devs)
    seen: dict[int, int] = {}
    for (what, name), b in _burst_names(own, keep, starts, transfers=False):
        if what == _COPY and b >= 0 and seen.setdefault(name, b) != b:
            return True
    return False


def copies_alone_repeat(devs: list[DeviceEvents], starts: np.ndarray) -> str | None:
    """The copies' names that make the GPU's bursts (``starts``) repeat, where nothing else does: no kernel runs in
    two bursts, and no copy in two bursts that run no kernel; None where the bursts repeat without them.

    Why: :func:`_busy_clusters` takes a copy's name for the same work in any two bursts, so that a training job's own
    readings of its bursts speak first; a copy's name is its direction and memory kinds, and a burst of kernels and
    another that share only such a name are no iterations of one loop (h37-hostalloc32: ParallelKernelsTest's three
    tests, each run once, sharing 16 MB pinned uploads)."""
    busy = _program_busy(devs)
    if busy is None or starts.size < 2:
        return None
    own, keep = busy[0], busy[1]
    if _bursts_repeat(own, keep, starts):
        return None
    names: set[str] = set()
    for d, k in zip(own, keep):
        copies = k & (d.kind != devices.KIND_KERNEL) & (d.kind != devices.KIND_COLLECTIVE)
        names.update(d.names[int(n)] for n in np.unique(d.name[copies]).tolist())
    return ", ".join(f"`{n}`" for n in sorted(names)[:3]) or None
