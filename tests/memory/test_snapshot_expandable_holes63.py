"""``expandable_segments:True`` maps pages where PyTorch's allocator finds room: the lowest unmapped stretch that,
with the free block before it, holds the request -- a hole ``empty_cache()`` left, not only the range's end
(h37-huntsnap63; issue #37 class 5, snap62's *Left* 6).

Why: ``c10/cuda/CUDACachingAllocator.cpp``'s ``find_expandable_block`` walks the pool's ``unmapped`` blocks in address
order (``BlockComparatorAddress``), starting from a free mapped block just before one where there is one, and takes
the first whose run of free and unmapped blocks adds up to the request; ``map_block`` then maps whole pages of it
(``segment_map``) and merges them with their free neighbours, so a filled hole joins the ranges either side into one
segment of the dump.  The generator mapped only at the range's end: after ``empty_cache()`` unmapped a freed block
between two live ones, the next request opened new pages past the last range and the dump kept two segments where
PyTorch writes one.  Truth by construction: the allocator's own layout (addresses and page counts) for a sequence
whose placement PyTorch's rule fixes.  The first two tests fail on base (base maps at the end); the third is a
control (the reader's peaks equal the generator's on a loop that empties its cache each iteration)."""

from __future__ import annotations

from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host

MiB = ms.MiB


def _expandable() -> ms.Allocator:
    with ms.expandable_segments():
        return ms.Allocator(80 * ms.GiB)


def test_a_hole_empty_cache_left_is_mapped_again_before_the_end():
    a = _expandable()
    x, y, z = (a.malloc(40 * MiB, ms.ACTIVATION) for _ in range(3))
    assert (y - x, z - y) == (40 * MiB, 40 * MiB)  # one range grown page by page
    a.free(y)
    a.empty_cache()  # y's two whole pages unmapped: a hole between x and z
    doc = ms.snapshot([a])
    assert sorted((s["address"], s["total_size"]) for s in doc["segments"]) == [(x, 40 * MiB), (z, 40 * MiB)]
    w = a.malloc(30 * MiB, ms.ACTIVATION)
    assert w == y  # the lowest unmapped stretch that holds 30 MiB is the hole
    last = a.trace[-2]
    assert (last["action"], last["addr"], last["size"]) == ("segment_map", y, 40 * MiB)  # two pages, as few as fit
    (seg,) = ms.snapshot([a])["segments"]  # the hole filled: x's, y's and z's pages one range again
    assert (seg["address"], seg["total_size"]) == (x, 120 * MiB)
    assert [(b["address"], b["size"], b["state"]) for b in seg["blocks"]] == [
        (x, 40 * MiB, "active_allocated"), (y, 30 * MiB, "active_allocated"), (y + 30 * MiB, 10 * MiB, "inactive"),
        (z, 40 * MiB, "active_allocated")]


def test_the_free_blocks_beside_a_hole_count_toward_it():
    """Free mapped bytes on both sides of a hole count with it (``has_available_address_space`` walks every free and
    unmapped block in a row): a 35 MiB request starts in the 10 MiB free before a 20 MiB hole, maps just that hole and
    ends in the 10 MiB free after it -- never new pages past the range's end."""
    a = _expandable()
    x = a.malloc(30 * MiB, ms.ACTIVATION)  # pages [0, 40): 10 MiB free at its end
    q = a.malloc(40 * MiB, ms.ACTIVATION)  # that free block and two more pages: [30, 70)
    r = a.malloc(40 * MiB, ms.ACTIVATION)  # [70, 110)
    assert (q - x, r - x) == (30 * MiB, 70 * MiB)
    a.free(q)
    a.empty_cache()  # the whole pages of [30, 70) unmapped: [40, 60); 10 MiB stays free either side
    assert [(e["addr"] - x, e["size"]) for e in a.trace if e["action"] == "segment_unmap"] == [(40 * MiB, 20 * MiB)]
    v = a.malloc(35 * MiB, ms.ACTIVATION)
    assert v - x == 30 * MiB
    last = a.trace[-2]
    assert (last["action"], last["addr"] - x, last["size"]) == ("segment_map", 40 * MiB, 20 * MiB)
    (seg,) = ms.snapshot([a])["segments"]
    assert (seg["address"], seg["total_size"]) == (x, 120 * MiB)


def test_a_loop_that_empties_its_cache_reads_the_generators_peaks(tmp_path: Path):
    with ms.expandable_segments():
        sc = ms.cache_twin(empty_cache=True)
    path = ms.write(str(tmp_path / "twin.pickle"), sc.doc)
    rep = analyze_host(HostFile("twin", path, Path(path).stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    assert rep.gpus[0].memory["peak_reserved_bytes"] == sc.truth["peak_reserved"]
    assert rep.gpus[0].memory["peak_allocated_bytes"] == sc.truth["peak_allocated"]
