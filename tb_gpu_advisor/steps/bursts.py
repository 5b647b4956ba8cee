"""The GPU's bursts: the program's own busy intervals (Unified-memory migrations out), cut into
clusters apart by an idle gap much longer than the usual one (:func:`_busy_clusters`), or by the host's sync between
them (:func:`_synced_bursts`); a gap the host spends inside one op or range is no gap between iterations
(:func:`_gaps_inside_one_range`), and bursts that share no work are no repeats (:func:`_bursts_repeat`; copies by
their name only between bursts of copies alone, :func:`copies_alone_repeat`; bursts of kernels by their transfers,
:func:`_transfers_repeat`).  Every reading asks the bursts' one table (``steps.burst_table.BurstTable``).

Why: with no marker, range or span, the GPU's idleness is the last evidence of where one iteration ends -- a guess
(low confidence), so each cut must show repeated work.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.job.waits import Waits
from tb_gpu_advisor.model.columns import union_intervals
from tb_gpu_advisor.model.trace import DeviceEvents, HostEvents
from tb_gpu_advisor.steps.burst_table import BurstTable
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


def _cluster_gap(gaps: np.ndarray, queued: int | None = None) -> float:
    """The idle gap (ps) past which the GPU's bursts are apart: ``steps.cluster_gap_factor`` times the median gap,
    at least ``steps.cluster_min_gap_ms`` -- unless no gap is that long and ``queued`` (the pieces of work that
    began before the work ahead of them ended: a gap of none, hidden in the busy intervals) is given: then the gaps'
    two populations (:func:`_two_populations`).

    Why: the median stands for the within-step gap where most gaps lie inside steps.  A loop of few kernels the host
    queues back to back (a native loop that never syncs: ``gemm, relu, softmax`` per iteration) leaves no idle inside
    a step, so every busy interval is a step and every gap a boundary: the median is a boundary gap and nothing is
    ten times it (rocprof, 3 iterations 2 ms apart: no cut, read as one pass)."""
    floor = T("steps.cluster_min_gap_ms") * PS_PER_MS
    cut = max(T("steps.cluster_gap_factor") * float(np.median(gaps)), floor)
    if queued is None or not gaps.size or (gaps > cut).any():
        return cut
    split = _two_populations(np.concatenate([gaps.astype(np.int64), np.zeros(max(queued, 0), np.int64)]), floor)
    return cut if split is None else split


def _two_populations(gaps: np.ndarray, floor: float) -> float | None:
    """The gap (ps) past which the GPU's idle gaps ``gaps`` (those between consecutive pieces of work, none where
    one began before the last ended) are the between-step population: the longest gaps, at least ``floor`` and at
    least ``steps.cluster_gap_factor`` times every shorter gap (the within-step population: the launches' microsecond
    gaps, queued work's none) -- ``factor`` times the longest within-step gap, at least ``floor``; None where the
    gaps make one population (no such jump).

    Why: physics, not the gaps' counts: inside a step the GPU idles only while the host launches (microseconds, none
    where work is queued); between steps it idles while the host does the loop's own work (its input, its logging),
    milliseconds -- two populations apart by orders of magnitude whichever is the more numerous."""
    g = np.sort(gaps)
    factor = T("steps.cluster_gap_factor")
    jump = np.flatnonzero((g[1:] >= floor) & (g[1:] > factor * g[:-1]))
    if not jump.size:
        return None
    return max(factor * float(g[jump[-1]]), floor)


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
    queued = sum(int(k.sum()) for k in keep) - int(us.size)  # work begun before the work ahead of it ended
    cut = _cluster_gap(gaps, queued)
    by_populations = cut < _cluster_gap(gaps)  # the median is a boundary gap: each burst a busy interval or few
    big = np.nonzero(gaps > cut)[0]
    if h is not None and launches is not None and big.size:
        inside = _gaps_inside_one_range(h, own, [la for d, la in zip(devs, launches) if len(d)], us, ue, big)
        if refused is not None:
            refused += [n for n in dict.fromkeys(inside.tolist()) if n]
        big = big[np.asarray([not n for n in inside.tolist()], dtype=bool)]
    if big.size < 1 or big.size > (us.size + queued) // 2:  # bursts of one piece of work each: no loop told
        return None
    starts = np.concatenate([[us[0]], us[big + 1]])
    ends = np.concatenate([ue[big], [ue[-1]]])
    t = BurstTable.of(own, starts, ends, keep)
    if not _bursts_repeat(t, by_copies=True) or by_populations and not _body_in_every_burst(t):
        return None
    return starts, ends


def _body_in_every_burst(t: BurstTable) -> bool:
    """Whether some kernel or collective (by name, on its GPU) runs in every burst that runs one: a loop's body.

    Why, where the gaps' two populations cut the bursts (:func:`_two_populations`): each burst is then one busy
    interval of few kernels, and work shared by two of them is weak evidence -- a benchmark's input set-up, element-wise
    kernels in bursts of 2, 1 and 7 some 10.6 and 13.7 ms apart, shares names between the last and each other
    (``wild/rocprof_mxfp4_setup_gfx950``: one pass, no loop).  A loop of few kernels runs its body in every
    iteration."""
    work = t.own & t.work & (t.burst >= 0)
    held = t.holding(work)
    if held.sum() < 2:
        return False
    return bool((t.bursts_per_name(work, t.per_gpu_name()) >= int(held.sum())).any())


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


def _synced_bursts(host: Waits, us: np.ndarray, ue: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(starts, ends) of the GPU's bursts in the busy intervals ``us``/``ue``: each ended where the GPU fell idle and
    the host waited on it (a wait -- a sync, a poll: ``job.waits`` -- ending in the idle gap) or paused past
    ``steps.cluster_*``; None where nothing cuts them.  The one cut :func:`_framed_bursts` and :func:`_framed_pass`
    read a frame's passes by."""
    waits = np.sort(host.end)
    gaps = us[1:] - ue[:-1]
    synced = np.searchsorted(waits, us[1:], side="right") > np.searchsorted(waits, ue[:-1], side="left")
    cut = np.nonzero(synced | (gaps > _cluster_gap(gaps)))[0]
    if not cut.size:
        return None
    return np.r_[us[0], us[cut + 1]], np.r_[ue[cut], ue[-1]]


def _bursts_repeat(t: BurstTable, by_copies: bool = False) -> bool:
    """Whether some of the program's own work (the table's ``own`` rows) runs in two bursts or more: steps are
    iterations, so bursts are steps only where the work repeats across them.  Bursts that share nothing are one pass of
    a program cut at its host's pauses, not iterations (fckwader/shitbox: three uploads, 14.8 s of the host's own code,
    then one kernel and a read-back -- two "steps" of 7.4 s that were a single run).

    The work is a kernel or collective by name; a copy or fill is the same work by its name only between two bursts
    that run no kernel (:func:`_copies_between_copy_bursts`): its name is its direction and memory kinds, no program's
    own, so a copy that bursts of kernels share is no evidence of a loop -- ParallelKernelsTest's three tests run once,
    at scalings 2 and 4, each uploading 16 MB from pinned memory, read as 2 "steps" with the first test their warm-up
    (h37-hostalloc32) -- while a loop of copies alone (a bandwidth test) still repeats.  Bursts of kernels repeat by
    their transfers where two make the same ones (:func:`_transfers_repeat`).  ``by_copies``: any copy by its name
    too -- the busy clusters' first gate, so that a training job's own readings of its bursts (a burst of copies alone
    joined to its iteration, bursts without a backward) speak first; ``steps.burst_steps`` asks again without it."""
    work = t.own & t.work
    if t.in_two(work):
        return True
    copies = t.own & ~t.work
    if t.in_two(copies) if by_copies else _copies_repeat(t, _copies_between_copy_bursts(t)):
        return True
    return not by_copies and _transfers_repeat(t)  # every copy by its name already: the transfers add nothing


def _copies_repeat(t: BurstTable, rows: np.ndarray) -> bool:
    """Whether a copy or fill among ``rows`` (a mask) runs in two bursts moving as much each time: its name (direction
    and memory kinds) and, where both sizes are known, its bytes within ``steps.transfer_bytes_share`` of each other
    -- a loop moves the same tensors every iteration (:func:`_transfers_repeat`).

    Why the bytes: a program run once uploads its weights, then its input, in bursts of copies alone apart from its
    kernels -- the same direction, different tensors.  TorchDCNN's one forward on a Jetson Nano (jakemdaly's
    ``GPUTrace_l2_bs500_44.csv``, h37-wild57n) uploaded 0.14 MB, 1 MB and 2.7 kB in three such bursts and was read as 4
    burst "steps" of 33.7 ms."""
    idx = np.flatnonzero(rows)
    if idx.size < 2:
        return False
    share = T("steps.transfer_bytes_share")
    per: dict[tuple[int, int], int] = {}  # (name code on its GPU, burst) -> bytes (-1: some unknown)
    code = t.per_gpu_name()
    for i in idx.tolist():
        key = (int(code[i]), int(t.burst[i]))
        b = int(t.nbytes[i])
        per[key] = -1 if b < 0 or per.get(key, 0) < 0 else per.get(key, 0) + b
    by_name: dict[int, list[int]] = {}
    for (name, _), b in per.items():
        by_name.setdefault(name, []).append(b)
    for sizes in by_name.values():
        if len(sizes) < 2:
            continue
        if any(b < 0 for b in sizes):
            return True  # a size not recorded: the name alone, as before sizes were read
        sizes.sort()
        if any(lo >= share * hi for lo, hi in zip(sizes, sizes[1:])):
            return True
    return False


def _copies_between_copy_bursts(t: BurstTable) -> np.ndarray:
    """The rows (a mask) of the program's copies and fills that run in bursts running no kernel or collective (work
    before the first burst, if any, a burst of its own)."""
    work = t.own & t.work
    held = t.holding(work)
    held_before = bool((t.burst[work] < 0).any())
    in_work_burst = np.where(t.burst >= 0, held[np.maximum(t.burst, 0)], held_before)
    return t.own & ~t.work & ~in_work_burst


def _transfers_repeat(t: BurstTable) -> bool:
    """Whether two bursts of kernels make the same transfers: the same copies and fills -- each by its name
    (direction and memory kinds), GPU and stream, as many of each -- beside as many kernels on each stream, and each
    transfer's bytes within ``steps.transfer_bytes_share`` of its match's.

    Why: a loop's iteration moves the same data every time -- its batch's upload, its loss's read-back, from the same
    memory on the same stream -- whatever its kernels are called, so two bursts of kernels making the same transfers
    are evidence of one loop where the names of kernels are none (a program whose kernels are compiled and named
    afresh each iteration, h37-bursts34).  What may vary is how much each moves: a batch of variable-length sequences
    or a ragged last batch uploads fewer bytes through the same copies (h37-bursts35), so bytes match within a bound,
    not exactly; what an iteration does -- which copies, on which streams, how many, and how many kernels -- does not
    vary.  A program run once through several phases makes each phase's transfers apart: ParallelKernelsTest's three
    tests each upload 16 MB buffers, but each test on streams of its own (14-18, 19-23, 24-28 in the GTX 1060
    captures); a training pass's loss read-back (bytes) and an evaluation's logits (megabytes) are different tensors.
    A copy of unknown size tells nothing: its burst makes no transfers to match."""
    return bool(_same_transfers(t, T("steps.transfer_bytes_share")))


def _same_transfers(t: BurstTable, share: float) -> set[int]:
    """The bursts of kernels whose transfers another burst makes again (:func:`_transfers_repeat`), each transfer's
    bytes at least ``share`` of its match's (1.0: exactly)."""
    groups: dict[tuple, list[tuple[int, np.ndarray]]] = {}
    for b, (shape, sizes) in _transfer_shapes(t).items():
        groups.setdefault(shape, []).append((b, sizes))
    out: set[int] = set()
    for rows in groups.values():
        if len(rows) > 1:
            matched = _matched(np.stack([sizes for _, sizes in rows]), share)
            out.update(b for (b, _), m in zip(rows, matched.tolist()) if m)
    return out


def _transfer_shapes(t: BurstTable) -> dict[int, tuple[tuple, np.ndarray]]:
    """Burst -> (what it moves: its copies' and fills' (GPU, name, stream, how many) and its kernels' (GPU, stream,
    how many), each sorted; the bytes of each copy in that order, smallest first per kind) for the bursts of kernels
    that make transfers, every one of known size."""
    work = t.own & t.work & (t.burst >= 0)
    held = t.holding(work)
    copy = t.own & ~t.work & (t.burst >= 0)
    copy &= held[np.maximum(t.burst, 0)]
    unknown = set(t.burst[copy & (t.nbytes < 0)].tolist())
    moved: dict[int, dict[tuple[int, str, str], list[int]]] = {}
    for r in np.flatnonzero(copy).tolist():
        b = int(t.burst[r])
        if b not in unknown:
            key = (int(t.gpu[r]), t.names[int(t.name[r])], t.streams[int(t.stream[r])][1])
            moved.setdefault(b, {}).setdefault(key, []).extend([int(t.nbytes[r])] * int(t.count[r]))
    kernels: dict[int, dict[tuple[int, str], int]] = {}
    for r in np.flatnonzero(work & np.isin(t.burst, list(moved))).tolist():
        per = kernels.setdefault(int(t.burst[r]), {})
        key = (int(t.gpu[r]), t.streams[int(t.stream[r])][1])
        per[key] = per.get(key, 0) + int(t.count[r])
    out: dict[int, tuple[tuple, np.ndarray]] = {}
    for b, items in moved.items():
        keys = sorted(items)
        shape = (tuple((k, len(items[k])) for k in keys), tuple(sorted(kernels.get(b, {}).items())))
        out[b] = shape, np.concatenate([np.sort(np.asarray(items[k], np.int64)) for k in keys])
    return out


def _matched(sizes: np.ndarray, share: float) -> np.ndarray:
    """Per row of ``sizes`` (bursts x their transfers' bytes, in one order): whether another row matches it, each
    transfer's smaller bytes at least ``share`` of the larger (two of zero bytes alike)."""
    out = np.zeros(sizes.shape[0], bool)
    for i in range(sizes.shape[0]):
        lo, hi = np.minimum(sizes[i], sizes), np.maximum(sizes[i], sizes)
        ok = (lo >= share * hi).all(axis=1)
        ok[i] = False
        out[i] = bool(ok.any())
    return out


def copy_bursts_repeat(t: BurstTable) -> bool:
    """Whether two of the GPU's bursts that run no kernel run a copy or fill of the same name (Unified Memory
    migrations, the driver's paging, left out).

    Why: a loop of copies alone -- a bandwidth sweep, its one check kernel after it -- runs its copies in every
    iteration, so its kernel-less bursts repeat among themselves and are its iterations; a one-pass program's
    copy-only bursts (an upload before its one burst of kernels, a read-back after it) are each run once."""
    return t.in_two(_copies_between_copy_bursts(t) & (t.burst >= 0))


def copies_alone_repeat(t: BurstTable) -> str | None:
    """The copies' names that make the GPU's bursts repeat, where nothing else does: no kernel runs in two bursts, and
    no copy in two bursts that run no kernel; None where the bursts repeat without them.

    Why: :func:`_busy_clusters` takes a copy's name for the same work in any two bursts, so that a training job's own
    readings of its bursts speak first; a copy's name is its direction and memory kinds, and a burst of kernels and
    another that share only such a name are no iterations of one loop (h37-hostalloc32: ParallelKernelsTest's three
    tests, each run once, sharing 16 MB pinned uploads)."""
    if t.size < 2 or _bursts_repeat(t):
        return None
    names = {t.names[int(n)] for n in np.unique(t.name[t.own & ~t.work]).tolist()}
    return ", ".join(f"`{n}`" for n in sorted(names)[:3]) or None
