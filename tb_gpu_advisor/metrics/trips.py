"""Device -> host -> device round trips: data copied out of the GPU mid-step, worked on by the host, copied back.

One home for the pairing of each copy back with the copy out it returns, read by three stages of the one account:
the context (the copy back is the round trip's leg, not the step's input: its host time is taken out of the input
spans the ledger paints), the round trip's own size (``memcpy.round_trips``, which ``host_op_placement`` reports) and
the syncs (a read of the data that leaves in a round trip is the round trip's, ``syncs``).  It reads device events
only, so the context can ask it before the rest of the metrics exist.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.model.columns import sorted_unique, union_intervals

#: A copy back to the GPU is the data that went out (a round trip) when its size is within this factor of a copy out
#: earlier in the step; a small result fetched (a loss, an 88-element tensor) and the next batch copied in are not.
ROUND_TRIP_SIZE_FACTOR = 8.0

_NONE = (np.zeros(0, np.int64),) * 4


def _comes_back(d, step: np.ndarray, d2h: np.ndarray, h2d: np.ndarray) -> np.ndarray:  # noqa: ANN001 - DeviceEvents
    """Per H2D copy (in ``h2d`` order): data that could be what an earlier D2H copy of the same step took out -- its
    size within :data:`ROUND_TRIP_SIZE_FACTOR` of one of them.  Copies of unknown size are given the benefit of the
    doubt (as before sizes were read)."""
    out = np.ones(int(h2d.sum()), dtype=bool)
    out_b, out_end, out_step = d.mem_bytes[d2h], d.end[d2h], step[d2h]
    in_b, in_start, in_step = d.mem_bytes[h2d], d.start[h2d], step[h2d]
    for i in np.flatnonzero(in_b > 0):
        prior = (out_step == in_step[i]) & (out_end <= in_start[i]) & (out_b > 0)
        if prior.any():
            ratio = in_b[i] / out_b[prior]
            out[i] = bool(((ratio <= ROUND_TRIP_SIZE_FACTOR) & (ratio >= 1 / ROUND_TRIP_SIZE_FACTOR)).any())
    return out


def _trip_pairs(d, step: np.ndarray, d2h: np.ndarray, h2d: np.ndarray,  # noqa: ANN001 - DeviceEvents
                last_kernel: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The round trips of one GPU, one per H2D copy that brings data back (:func:`_comes_back`) before more GPU work of
    its step: (end of the latest D2H copy of the same step before it, the copy back's start, its end, its step).
    Pairing each copy in with the nearest copy out keeps copies spread over a step from making one step-long window;
    copies under ``round_trip.min_bytes`` (a value read, a small constant: a recommender's per-feature lengths) are no
    data leaving the GPU."""
    small = T("round_trip.min_bytes")
    d2h = d2h & ~((d.mem_bytes >= 0) & (d.mem_bytes < small))  # values and small constants are no data round trip
    h2d = h2d & ~((d.mem_bytes >= 0) & (d.mem_bytes < small))
    o_end, o_step = d.end[d2h].astype(np.int64, copy=False), step[d2h]
    i_start, i_end, i_step = d.start[h2d].astype(np.int64, copy=False), d.end[h2d].astype(np.int64, copy=False), step[h2d]
    back = _comes_back(d, step, d2h, h2d) & (i_start < last_kernel[i_step])
    if not back.any() or not o_end.size:
        return _NONE
    order = np.lexsort((o_end, o_step))  # copies out by (step, end)
    o_end, o_step = o_end[order], o_step[order]
    i_start, i_end, i_step = i_start[back], i_end[back], i_step[back]
    # the latest copy out of the same step ending at or before each copy in
    j = np.searchsorted(o_step, i_step, side="left")  # first copy out of the step
    k = np.searchsorted(o_step, i_step, side="right")  # past the last
    pos = np.array([j[x] + np.searchsorted(o_end[j[x]:k[x]], i_start[x], side="right") - 1 for x in range(i_start.size)],
                   dtype=np.int64) if i_start.size else np.zeros(0, np.int64)
    ok = (pos >= j) & (pos < k)
    a, b = o_end[pos[ok]], i_start[ok]
    good = b > a
    return a[good], b[good], i_end[ok][good], i_step[ok][good].astype(np.int64)


def _trip_windows(d, step: np.ndarray, d2h: np.ndarray, h2d: np.ndarray,  # noqa: ANN001 - DeviceEvents
                  last_kernel: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The round trips of one GPU (:func:`_trip_pairs`): each window from the end of the copy out to the start of the
    copy back, disjoint, and the steps that hold one."""
    a, b, _, st = _trip_pairs(d, step, d2h, h2d, last_kernel)
    if not a.size:
        return _NONE[:3]
    ws, we = union_intervals(a, b)
    return ws, we, sorted_unique(st)


def _copies(g, n: int):  # noqa: ANN001, ANN202 - a context.GpuCtx; the pairing's inputs
    """One GPU's copies out and in inside its ``n`` kept steps, and each step's last kernel start -- or None where it
    has no copy either way.  Mid-step only: the data comes back for more GPU work of the same step (a kernel starts
    after the H2D).  A step's result fetched at its end (the loss) and the next step's input copied before the next
    step's first kernel are no round trip, though both fall in one window where a step boundary is placed between them
    by a device- or module-defined step source."""
    d = g.d
    inside = g.step >= 0
    d2h = inside & (d.kind == devices.KIND_D2H)
    h2d = inside & (d.kind == devices.KIND_H2D)
    if not n or not d2h.any() or not h2d.any():
        return None
    kern = inside & ((d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE))
    last_k = np.full(n, -1, np.int64)  # start of each step's last kernel
    np.maximum.at(last_k, g.step[kern], d.start[kern])
    return d, g.step, d2h, h2d, last_k


def trip_windows(g, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # noqa: ANN001 - a context.GpuCtx
    """One GPU's round trips inside its ``n`` kept steps (:func:`_trip_windows`): each from the end of the copy out to
    the start of the copy bringing the data back, disjoint; and the steps that hold one.  The round trip's own
    stretch, which ``host_op_placement`` sizes -- no other cause's (``metrics.syncs``: a read of the data inside it)."""
    c = _copies(g, n)
    return _trip_windows(*c) if c is not None else _NONE[:3]


def return_legs(g, n: int) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001 - a context.GpuCtx
    """One GPU's round trips from the end of the copy out to the END of the copy back, disjoint: the stretch whose host
    time is the round trip's -- the host's work on the data, then its staging of the copy back (JAX's ``jnp.asarray``
    of a NumPy result: PjRt's host-to-device transfer).  Why: that copy moves data the step itself sent out, not a
    batch the step waits for, so the input spans (``context``) leave it to the round trip: read as input it was
    "the batch's transfer to the device" with a prefetch fix (real-h100-jax ``host_roundtrip``: 3.78 ms of each
    26.6 ms step, its 33.6 MB copy back from NumPy)."""
    c = _copies(g, n)
    if c is None:
        return _NONE[:2]
    a, _, e, _ = _trip_pairs(*c)
    return union_intervals(a, e) if a.size else _NONE[:2]
