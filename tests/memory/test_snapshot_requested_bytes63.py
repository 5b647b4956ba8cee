"""A memory snapshot's trace entries record what each tensor asked for; its blocks and segments what the caching
allocator gave it (h37-huntsnap63; issue #37 class 5).

Why: ``c10/cuda/CUDACachingAllocator.cpp`` records an allocation as ``record_trace(ALLOC, ptr, orig_size, ...)`` and
both of its frees with the block's ``requested_size`` (the same request), while the dump's block ``size`` is the
request rounded up to 512 bytes (``kMinBlockSize``; a large block left unsplit holds up to 1 MiB more) and the
segments' reserve counts blocks.  The generator wrote each entry with the block's rounded bytes, so no scenario's
history ever asked for an odd size -- and the reader, counting the totals back from the dump's blocks with the
entries' bytes, left each block's rounding live before the history made it (``fragmented(short=100)``: a history begun
with nothing allocated "held" 29.3 KiB across steps); counted in requests throughout, (an OOM's allocated bytes, counted in requests, would stand beside a reserve of blocks with "cached" bytes that
are only rounding).  Truth by construction: the generator's own allocator, whose blocks are the same whatever the
request's last bytes.  The first test fails on base (its entries recorded the rounded bytes); the second fails on
base's reader with this generator (checked by hand: 30,000 B held before the first event) and, as base's generator
never wrote an odd request, is what the reader must do on PyTorch's own entries; the third is a control (the OOM's
allocated and reserved in one unit, as base read them and a reader anchored on requests would not)."""

from __future__ import annotations

from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace

MiB = ms.MiB


def _entries(doc: dict, action: str) -> list[dict]:
    return [e for e in doc["device_traces"][0] if e["action"] == action]


def test_entries_record_the_request_and_blocks_the_rounding():
    a = ms.Allocator(80 * ms.GiB)
    small, large = a.malloc(4, ms.ACTIVATION), a.malloc(5 * MiB - 100, ms.ACTIVATION)
    a.free(small)
    doc = ms.snapshot([a])
    assert [e["size"] for e in _entries(doc, "alloc")] == [4, 5 * MiB - 100]
    assert [e["size"] for e in _entries(doc, "free_requested")] == [4]
    assert [e["size"] for e in _entries(doc, "free_completed")] == [4]
    (live,) = [b for s in doc["segments"] for b in s["blocks"] if b["state"] == "active_allocated"]
    assert (live["address"], live["size"], live["requested_size"]) == (large, 5 * MiB, 5 * MiB - 100)
    # the teardown frees each block with its request too
    freed = _entries(ms.torn_down(doc), "free_completed")[-1]
    assert (freed["addr"], freed["size"]) == (large, 5 * MiB - 100)


def test_history_of_odd_requests_begins_with_nothing_held(tmp_path: Path):
    sc = ms.fragmented(short=100)
    assert all(e["size"] % 512 for e in _entries(sc.doc, "alloc")[:-1])  # every request odd, its block 5 MiB
    mem = read_trace(ms.write(str(tmp_path / "odd.pickle"), sc.doc)).memory[0]
    # the generator's allocator began empty: the level before the first event is 0, and every level is in blocks
    assert int(mem.allocated[0] - mem.delta[0]) == 0
    assert int(mem.allocated.max()) == 4 * 300 * 5 * MiB
    assert int(mem.allocated[-1]) == sc.truth["allocated"]


def test_oom_with_every_byte_allocated_has_none_cached(tmp_path: Path):
    even, odd = ms.oom_activations(), ms.oom_activations(short=100)
    assert odd.truth["allocated"] == odd.truth["reserved"] == even.truth["reserved"]  # the same blocks, none cached
    (got,) = read_trace(ms.write(str(tmp_path / "oom.pickle"), odd.doc)).snapshot.ooms
    assert (got.allocated, got.reserved) == (odd.truth["allocated"], odd.truth["reserved"])
    assert got.requested == odd.truth["requested"] == 2 * 512 * MiB - 100
