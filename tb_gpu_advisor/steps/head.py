"""The capture's first step cut by the window: a first step made only of GPU work launched before the
capture began is the tail of an iteration and dropped (:func:`_launched_before`); a first burst that opens with such
work starts at its first work launched inside the capture (:func:`_trim_launched_before`), and the host's wait on
that work is said beside it.

Why: a profiler window opens mid-iteration; averaging the tail in understates the step and every per-step number.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.fmt import ms as fmt_ms
from tb_gpu_advisor.job.waits import Waits, sync_waits
from tb_gpu_advisor.model.trace import DeviceEvents, HostEvents
from tb_gpu_advisor.steps.reading import _Kept
from tb_gpu_advisor.steps.types import PS_PER_MS


def _launched_before(devs: list[DeviceEvents], launches: list[np.ndarray], kept: _Kept) -> str:
    """Why the first step is the tail of an iteration launched before the capture began ("" where it is not): none of
    its GPU work has its host launch in the capture, while every later step begins with work launched inside it -- the
    same program, recording its launches, cut by the window mid-iteration.  Any format whose device records carry the
    launch's correlation (Kineto, Nsight, XPlane): where none carries one the rule is silent.  A first step that also
    holds work launched in the window (a guessed burst running the cut iteration's tail into the next iteration: 9.4
    ms of 291.7 in an FSDP window) is more than the tail and stays.

    Why: a window opens wherever the profiler starts, not at an iteration's start; the first step then holds only
    the end of one (a ViT's 21.7 ms of kernels before an 84 ms iteration), and averaging it in understates the step
    and every per-step number (h37-left46).  ``devs``: the GPUs with records, ``launches`` theirs
    (:func:`~tb_gpu_advisor.model.trace.device_launches`)."""
    n = kept.ids.size
    if n < 2:
        return ""
    big = np.iinfo(np.int64).max
    first_t = np.full(n, big, np.int64)
    first_launched = np.zeros(n, dtype=bool)
    for d, launch in zip(devs, launches):
        w = kept.gpu.get(d.gpu)
        w = w if w is not None else np.stack([kept.hs, kept.he], axis=1)
        own = ~devices.managed_migration(d.names)[d.name] if len(d) else np.zeros(0, dtype=bool)
        st = d.start.astype(np.int64, copy=False)
        k = np.searchsorted(w[:, 0].astype(np.int64), st, side="right") - 1
        idx = np.flatnonzero(own & (k >= 0) & (st < w[np.maximum(k, 0), 1]))
        if not idx.size:
            continue
        idx = idx[np.lexsort((st[idx], k[idx]))]  # by step, then start: each step's first record leads its run
        kk = k[idx]
        lead = idx[np.concatenate([[True], kk[1:] != kk[:-1]])]
        step, t = k[lead], st[lead]
        earlier = t < first_t[step]
        first_t[step[earlier]] = t[earlier]
        first_launched[step[earlier]] = launch[lead[earlier]] >= 0
    has = first_t < big
    if not has[0] or first_launched[0] or has[1:].sum() < 1 or not first_launched[1:][has[1:]].all():
        return ""
    for d, launch in zip(devs, launches):  # any work of the first step launched in the capture: not only a tail
        w = kept.gpu.get(d.gpu)
        w = w if w is not None else np.stack([kept.hs, kept.he], axis=1)
        if ((d.start >= w[0, 0]) & (d.start < w[0, 1]) & (launch >= 0)).any():
            return ""
    lead = 0.0
    for d, launch in zip(devs, launches):  # the work before the capture's first launched record: the cut iteration's
        w = kept.gpu.get(d.gpu)
        w = w if w is not None else np.stack([kept.hs, kept.he], axis=1)
        m = (d.start >= w[0, 0]) & (d.start < w[0, 1]) & (launch < 0)
        if m.any():
            lead = max(lead, float(d.end[m].max() - w[0, 0]) / PS_PER_MS)
    return (f"the capture began inside it: it starts with {_before_window(lead)}, where every later step starts with "
            f"work launched inside the capture -- the tail of an iteration, not a whole one")


def _before_window(lead_ms: float) -> str:
    """The words for GPU work at a step's head that was launched before the capture began: one home for the partial
    first step's reason and the trimmed first burst's note."""
    return f"{fmt_ms(lead_ms)} of GPU work whose launches precede the window (no host launch of it is recorded)"


def _trim_launched_before(h: HostEvents, devs: list[DeviceEvents], launches: list[np.ndarray], kept: _Kept,
                          one_pass: bool = False, waits: Waits | None = None) -> str:
    """Start the first of GPU-burst steps at its first work launched in the capture, where the burst opens with work
    launched before the capture and runs on into work launched inside it; the note's words ("" where nothing is cut).
    Per GPU: each GPU's window starts at its own first launched work (kept's per-GPU windows, set where the GPUs'
    starts differ); the host window at the earliest of them.

    Why: a burst runs from its first GPU record, but a window opens wherever the profiler starts: work whose launch
    the capture does not hold ran for an iteration before this one (``nsys/fsdp_mfu_before``: 9.4 ms of kernels
    launched before the window, then 282.3 ms of work launched in it, read as one 291.7 ms step).  The head is no part
    of the step, as a first step made only of such work is none (:func:`_launched_before`); the step is from its own
    first work on.  A burst whose first record was launched in the window is unchanged.  The host's wait in a sync
    over the head is a wait on that work: said with it, and out of the step with it (``nsys/h100_fsdp_window``: 424
    ms of uploads launched before the slice, the host's 428 ms ``cudaStreamSynchronize`` begun 145 ms before they
    end) -- no step's time, no sync's claim.  ``one_pass``: the one window is the pass a capture read whole was read
    as (:func:`unmarked_pass`), named so, never "the first step"."""
    if not kept.ids.size:
        return ""
    start0 = int(kept.hs[0])
    starts: dict[int, int] = {}
    heads: dict[int, tuple[int, int]] = {}
    head = 0.0
    for d, launch in zip(devs, launches):
        w = kept.gpu.get(d.gpu)
        w0, w1 = (int(w[0, 0]), int(w[0, 1])) if w is not None else (start0, int(kept.he[0]))
        own = ~devices.managed_migration(d.names)[d.name]
        st = d.start.astype(np.int64, copy=False)
        m = own & (st >= w0) & (st < w1)
        if not m.any():
            continue
        idx = np.flatnonzero(m)
        idx = idx[np.argsort(st[idx], kind="stable")]
        on = launch[idx] >= 0
        if not on.any() or on[0]:  # nothing launched in the window, or the burst opens on work launched in it
            continue
        first = int(st[idx[int(np.argmax(on))]])
        starts[d.gpu] = first
        heads[d.gpu] = (int(st[idx[0]]), first)  # from the head's own first record: a window may open on a host op
        head = max(head, (first - int(st[idx[0]])) / PS_PER_MS)
    if not starts:
        return ""
    lo = min(starts.values())
    host = kept.hs.copy()
    host[0] = lo
    if len(set(starts.values())) > 1 or not kept.gpu and any(d.gpu not in starts for d in devs if len(d)):
        for d in devs:
            if not len(d):
                continue
            w = kept.gpu.get(d.gpu)
            w = (w if w is not None else np.stack([kept.hs, kept.he], axis=1)).copy()
            w[0, 0] = starts.get(d.gpu, int(w[0, 0]))
            kept.gpu[d.gpu] = w
            kept.gpu_next.setdefault(d.gpu, kept.next_start.copy())
    else:
        for g, w in kept.gpu.items():
            w = w.copy()
            w[0, 0] = starts.get(g, int(w[0, 0]))
            kept.gpu[g] = w
    kept.hs = host
    first, own, one = ("the pass", "the pass", "the pass") if one_pass else ("the first step", "the step", "a step")
    return (f"; {first} starts at its first work launched in the capture, after {_before_window(head)}: "
            f"work from before the capture, no part of {own}{_waits_on_head(h, waits, list(heads.values()), one)}")


def _waits_on_head(h: HostEvents, waits: Waits | None, heads: list[tuple[int, int]], step: str = "a step") -> str:
    """The words for the host's longest wait in a sync over GPU work launched before the capture (``heads``: per GPU,
    the head's ``[start, end)``), "" where no sync overlaps one: the part of the call over the head waits on work from
    before the capture, so it is said here, beside that work, and is no step's (each step starts after it); ``step``:
    what it is no part of ("the pass" on a capture read whole).  ``waits``: the host's waits (``job.waits``: a sync
    call, a poll from its first query to the one that said done; the sync calls alone where not given)."""
    waits = waits if waits is not None else sync_waits(h)
    sync = waits.idx
    if not sync.size or not heads:
        return ""
    s, e = waits.start, waits.end
    over = np.zeros(sync.size, np.int64)
    for a, b in heads:
        over = np.maximum(over, np.minimum(e, b) - np.maximum(s, a))
    k = int(np.argmax(over))
    if over[k] <= 0:
        return ""
    whole, part = int(e[k] - s[k]) / PS_PER_MS, int(over[k]) / PS_PER_MS
    name = h.names[int(h.name[int(sync[k])])]
    said = f"all {fmt_ms(whole)} of it" if part >= whole else f"{fmt_ms(part)} of its {fmt_ms(whole)}"
    return (f"; the host's `{name}` waits on that work for {said}: a wait on work from before the capture, no "
            f"part of {step} or of a sync's cost")
