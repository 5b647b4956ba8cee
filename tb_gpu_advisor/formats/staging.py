"""Whether a blocking copy was staged through pageable host memory, read off its timing: one home for the tracers that
record no memory kind (AMD's: rocmProfileData, rocprof).

A blocking host<->device copy's call holds the host from its start.  The part of that before the transfer began during
which its GPU ran nothing (no earlier work to wait for) is the runtime's host work for the copy.  Where it is at least
:data:`STAGING_MIN_NS` and longer than the transfer itself, the copy was staged: pageable memory (a pinned copy's
transfer starts within microseconds of its call).  A shorter lead says nothing -- a small pageable copy is staged chunk
by chunk as it transfers -- so the kind stays unknown, never pinned.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.devices import STAGING_MIN_NS  # the runtime's fact, in its home (metrics read it too)


def pageable_by_staging(gpu: np.ndarray, start: np.ndarray, end: np.ndarray, direction: np.ndarray, sync: np.ndarray,
                        call_start: np.ndarray) -> np.ndarray:
    """Per GPU operation: 1 a copy from (or to) pageable host memory by its timing, -1 unknown.  Every array is one
    value per operation, times in ns on the tracer's one clock: ``gpu`` its GPU, ``start``/``end`` its transfer,
    ``direction`` ``devices.copy_direction``'s word (None for no copy), ``sync`` 1 where its call blocks the host,
    ``call_start`` its launching call's start (-1 where none is known)."""
    out = np.full(start.size, -1, np.int8)
    cand = np.flatnonzero((sync == 1) & (call_start >= 0) & np.isin(direction, ("h2d", "d2h")))
    if not cand.size:
        return out
    c0 = call_start[cand]
    o0, o1 = start[cand], end[cand]
    busy_until = c0.copy()  # the latest end of the GPU's earlier work (none: the call's start)
    for g in np.unique(gpu[cand]).tolist():
        on = np.flatnonzero(gpu == g)
        order = np.argsort(start[on], kind="stable")
        starts, ran_to = start[on][order], np.maximum.accumulate(end[on][order])
        mine = np.flatnonzero(gpu[cand] == g)
        k = np.searchsorted(starts, o0[mine], side="left") - 1  # the operations that started before each transfer
        busy_until[mine] = np.where(k >= 0, ran_to[np.maximum(k, 0)], c0[mine])
    lead = o0 - np.maximum(c0, np.minimum(busy_until, o0))
    out[cand[(lead >= STAGING_MIN_NS) & (lead > o1 - o0)]] = 1
    return out
