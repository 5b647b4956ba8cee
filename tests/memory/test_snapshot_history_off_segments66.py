"""A history whose allocations lie in no segment of the file is no allocator's record, even within its reserve
(h37-damage66; h37-huntsnap65's *Left* 2).

h37-huntsnap65 caught a generated history (facebookresearch/mosaic's) by its levels: it allocates more than its
segments reserve.  A generated history that stays within the reservation -- its allocations at addresses no segment
covers, but fewer bytes than the segments hold -- read as a GPU's without a word.  The caching allocator carves every
block out of a segment it holds (one held at the dump, or one the history itself makes or gives back:
``segment_alloc``/``segment_free``, on expandable segments ``segment_map``/``segment_unmap``), so such a history is no
allocator's record: ``formats.snapshot.reader.history_off_segments`` says so, as a contradiction (the file read whole).

Truth by construction: ``synthetic.memsnapshot.history_beside_segments(cached_mib=64, allocs=2, mib=16)`` -- the
file's allocator keeps a 64 MiB segment cached, another allocator makes two 16 MiB activations beside it (its segment
entries left out): 32 MiB allocated within 66 MiB reserved, both allocations off every segment.  Controls: the same
activations by the file's own allocator; every kept real snapshot (no false damage: none of its allocations lies
outside a segment its file knows of); a synthetic history on expandable segments that maps, unmaps (``empty_cache``)
and maps again.  The first two tests fail on base (no damage; no ``history_off_segments``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot import reader
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES
from tests.support.snapshot_reports import written

WORDS = "at addresses none of its segments covers"
REAL = sorted([*FIXTURES.glob("wild/snapshot_*/*.pickle*"), *FIXTURES.glob("snapshots_wild/*.pickle*"),
               FIXTURES / "h200_memory" / "torch_oom_snapshot" / "oom_snapshot.pickle"])


def _host(path: Path):  # the host's report
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def _off(path: Path, monkeypatch: pytest.MonkeyPatch) -> list:
    """What :func:`reader.history_off_segments` answers for each device of ``path`` as the reader reads it."""
    seen = []
    real = reader.history_off_segments  # base has none: AttributeError there

    def spy(*a, **k):
        seen.append(real(*a, **k))
        return seen[-1]

    monkeypatch.setattr(reader, "history_off_segments", spy)
    reader.read_trace(str(path))
    return seen


def test_a_history_off_its_segments_within_its_reserve_is_said_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    sc = ms.history_beside_segments(allocs=2, mib=16, cached_mib=64)
    assert sc.truth["excess"] == 0  # within the reserve: the levels' check has nothing to say
    path = written(tmp_path, sc)
    count, size, at_ps = sc.truth["off"]
    off = _off(path, monkeypatch)
    assert len(off) == 1 and off[0][:2] == (count, size), off
    rep = _host(path)
    said = [d for d in rep.damage if WORDS in d]
    assert said == [(f"GPU 0's history allocates 2 blocks (32.0 MiB) {WORDS} (the first {at_ps / 1e12:,.3f} s into "
                     f"it): the caching allocator places every block inside a segment it holds, so the history and "
                     f"the segments are not one allocator's record (a generated or edited snapshot) -- its levels are "
                     f"the history's own sums, not the GPU's")], rep.damage  # base: no damage
    assert rep.contradictions == said and "more than its segments reserve" not in " ".join(rep.damage)


def test_the_first_off_allocation_is_the_first_one_made_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    sc = ms.history_beside_segments(allocs=3, mib=8, cached_mib=64)
    off = _off(written(tmp_path, sc), monkeypatch)
    doc_trace = sc.doc["device_traces"][0]
    events = [e for e in doc_trace if e["action"] != "free_requested"]  # an event each: allocations, frees, segments
    first = next(i for i, e in enumerate(events) if e["action"] == "alloc" and e["addr"] >= ms.BASE_ADDR + (1 << 40))
    assert off == [(3, 3 * 8 * ms.MiB, first)]


def test_control_the_same_activations_by_the_files_own_allocator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    sc = ms.history_beside_segments(allocs=2, mib=16, cached_mib=64, outside=False)
    path = written(tmp_path, sc)
    assert _off(path, monkeypatch) == [None]
    assert _host(path).damage == []


def test_control_expandable_segments_mapped_unmapped_and_mapped_again(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch):
    """Pages mapped into one growing range, given back by ``empty_cache`` and mapped again: every allocation lies in a
    range a ``segment_map`` made (or the dump holds), though no single dump segment covers them all."""
    with ms.expandable_segments():
        a = ms.Allocator(8 * ms.GiB)
        w = a.malloc(300 * ms.MiB, ms.PARAMS)
        xs = [a.malloc(40 * ms.MiB, ms.ACTIVATION) for _ in range(4)]
        for x in xs:
            a.free(x)
        a.empty_cache()
        ys = [a.malloc(50 * ms.MiB, ms.ACTIVATION) for _ in range(2)]
        a.free(ys[0])
        doc = ms.snapshot([a])
    actions = {e["action"] for e in doc["device_traces"][0]}
    assert {"segment_map", "segment_unmap"} <= actions and w
    path = written(tmp_path, ms.Scenario(doc, {}))
    assert _off(path, monkeypatch) == [None]
    assert _host(path).damage == []


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.parent.name + "/" + p.name)
def test_no_kept_real_snapshot_allocates_off_its_segments(path: Path, monkeypatch: pytest.MonkeyPatch):
    """No false damage on real files: every allocation of every kept real history lies in a segment its file knows
    of (the generated mosaic fixture's 520 lie in none, said by its levels first: one note, not two)."""
    off = _off(path, monkeypatch)
    if path.name.startswith("generated_mosaic"):
        assert off == [(520, 25_351_966_520, 0)]
        assert not any(WORDS in d for d in _host(path).damage)  # the levels' note says it, once
    else:
        assert all(o is None for o in off), off


def test_the_address_check_by_hand():
    """Each allocation's whole ``[addr, addr + size)`` must lie in one known range: two segments at the dump (0x1000
    and 0x3000, 0x1000 bytes each), one a ``segment_map`` made beside the first (0x2000: the two touch, one range
    0x1000-0x3000 joined with the third) -- a block across the joint is inside, one across the last segment's end is
    not, nor one before every segment; frees and segment events are no allocations.  A window of 2 events at a time
    gives the same answer."""
    import numpy as np

    spans = [(0x1000, 0x1000), (0x3000, 0x1000)]
    #           map     in      joint    straddle  before  free
    addr = np.array([0x2000, 0x1100, 0x1F00, 0x3F00, 0x100, 0x1100], dtype=np.int64)
    d = np.array([0, 0x100, 0x200, 0x200, 0x10, -0x100], dtype=np.int64)
    rd = np.array([0x1000, 0, 0, 0, 0, 0], dtype=np.int64)
    assert reader.history_off_segments(spans, d, rd, addr) == (2, 0x210, 3)
    assert reader.history_off_segments(spans, d, rd, addr, window=2) == (2, 0x210, 3)
    assert reader.history_off_segments([(-1, 0x1000)], d, rd, addr) is None  # no address: nothing to place them by
