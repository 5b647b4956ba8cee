"""Each allocation's free (``MemoryEvents.frees``) is paired without whole-history sort keys: its temporaries stay a
few bytes an event beside the 8-byte answer (h37-snap61; issue #37 class 5: "snapshots over 1 GB are read in bounded
memory").

Why: the job and metrics stages ask ``frees()`` about fifteen times per history; it held an index of every event, the
addresses gathered and ``lexsort``'s keys -- 42 bytes an event for an 8-byte answer, measured with ``tracemalloc`` on
a 1,000,000-entry ``write_large`` history -- and set the report's peak above the read's (167 MB against 134 at
1,000,000 entries; 581 against 450 at 5,000,000).  ``tracemalloc`` counts numpy's buffers exactly, so the bound is no
timing.  Truth by construction: a history of 2,000,000 events whose allocations are freed in a known order, the
pairing checked against it.  The peak bound fails on base (42 bytes an event); the pairing is a control."""

from __future__ import annotations

import tracemalloc

import numpy as np

from tb_gpu_advisor.model.trace import MemoryEvents

N = 1_000_000  # allocations; as many frees


def _history() -> tuple[MemoryEvents, np.ndarray]:
    """One allocation and one free alternating: event 2k allocates block k (its own address), event 2k + 1 frees
    block k - 7 (the first 7 frees are of blocks made before the history, the last 7 blocks are never freed).  Returns
    the events and each allocation's free by construction."""
    k = np.arange(N, dtype=np.int64)
    addr = np.empty(2 * N, np.int64)
    delta = np.empty(2 * N, np.int64)
    addr[0::2] = (k * 7919 % (1 << 20)) * 512 + (1 << 32)  # distinct live addresses, reused after 2**20 blocks
    addr[1::2] = np.where(k >= 7, addr[0::2][np.maximum(k - 7, 0)], (1 << 40) + k * 512)  # frees k - 7
    delta[0::2] = 4096
    delta[1::2] = -4096
    want = np.full(2 * N, -1, np.int64)
    want[0::2] = np.where(k + 7 < N, 2 * (k + 7) + 1, 2 * N)
    zeros = np.zeros(2 * N, np.int64)
    me = MemoryEvents(gpu=0, source="test", baseline="absolute", t=np.arange(2 * N, dtype=np.int64), delta=delta,
                      allocated=np.cumsum(delta), reserved=zeros - 1, addr=addr, op=np.full(2 * N, -1, np.int32),
                      phase=np.full(2 * N, -1, np.int8))
    return me, want


def test_frees_pairs_each_allocation_with_its_free() -> None:
    me, want = _history()
    assert np.array_equal(me.frees(), want)


def test_frees_temporaries_are_bounded() -> None:
    me, _ = _history()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        got = me.frees()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    per_event = (peak - before - got.nbytes) / len(me)
    assert per_event < 12, f"{per_event:.1f} bytes an event beside the answer"
