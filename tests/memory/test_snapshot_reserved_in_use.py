"""A snapshot's peak reserved in segments in use (h37-snap4): the reserved bytes less the cache of whole empty
segments, which ``empty_cache()`` -- or the allocator itself before it raises an OOM -- hands back.  The memory gate
judges reserved growth by it (``tests/cli/test_cli_diff_memory_noise.py``); main had no such number.

Truth read by hand on the real snapshots of ``tests/fixtures/snapshots_wild`` (SOURCE.md) with a script of the survey's
own, independent of the reader: a restricted unpickler, then a *forward* replay of the history from its start (the
state before it is the dump's less what the history made, plus what it removed -- the reader counts *back* from the
dump), following which segments hold a live block (survey h37-snap4).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import REPO

WILD = REPO / "tests" / "fixtures" / "snapshots_wild"

#: file -> (peak reserved, peak reserved in segments in use), bytes, read by hand (forward replay)
BY_HAND = {
    "forward_autograd_cs336": (47_234_154_496, 45_459_963_904),
    "forward_no_grad_cs336": (1_763_704_832, 1_759_510_528),
    "windows_training_cs336": (14_180_941_824, 14_180_941_824),
    "state_before_training_othello": (119_537_664, 119_537_664),
}


def _memory(path: Path) -> dict:
    rep = analyze_host(HostFile(path.stem, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    (g,) = [g for g in rep.gpus if g.memory]
    return g.memory


def _unzipped(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.pickle"
    path.write_bytes(gzip.decompress((WILD / f"{name}.pickle.gz").read_bytes()))
    return path


@pytest.mark.parametrize("name", sorted(BY_HAND))
def test_real_snapshots_peak_in_use_is_the_forward_replays(tmp_path, name):
    """Each real snapshot's peaks as read by hand; a segment that holds a block is in use, a whole empty one is
    cache (the CS336 forward with autograd holds 1.65 GiB of it at its reserved peak).  Main: no such number."""
    m = _memory(_unzipped(tmp_path, name))
    assert (m["peak_reserved_bytes"], m["peak_reserved_in_use_bytes"]) == BY_HAND[name]
    assert m["peak_allocated_bytes"] <= m["peak_reserved_in_use_bytes"] <= m["peak_reserved_bytes"]


def test_a_history_that_stops_before_the_dump_claims_no_cache():
    """Control: ``mini_snapshot_cut`` (its history cut to 50 events, the dump's segments empty) does not fit its
    segments: its totals are counted from their lowest point, so the cache is not known and not claimed (null)."""
    m = _memory(WILD / "mini_snapshot_cut.pickle")
    assert m["peak_reserved_in_use_bytes"] is None and m["peak_reserved_bytes"] is not None


def test_a_dump_without_history_counts_its_empty_segments(tmp_path):
    """A 1.13 dump (no history) of the cached twin: its state at the dump -- segments that hold no block are the
    cache, the rest in use -- as the twin's allocator held them at the end."""
    sc = ms.cache_twin()
    doc = ms.as_version(sc.doc, "1.13")
    m = _memory(Path(ms.write(str(tmp_path / "v113.pickle"), doc)))
    empty = sum(s["total_size"] for s in sc.doc["segments"] if not s["allocated_size"])
    assert empty > 0  # the premise: the dump keeps whole empty segments cached
    assert m["peak_reserved_in_use_bytes"] == m["peak_reserved_bytes"] - empty


def test_the_cache_series_follows_every_event_of_a_twin(tmp_path):
    """By construction: after every allocator call of ``cache_twin`` (no empty_cache), reserved less the cache equals
    the bytes of segments holding a live block -- checked at the peak by the truth, and never above reserved."""
    sc = ms.cache_twin()
    tr = read_trace(ms.write(str(tmp_path / "twin.pickle"), sc.doc))
    me = tr.memory[0]
    assert me.cached is not None and (me.cached >= 0).all() and (me.cached <= me.reserved).all()
    assert int((me.reserved - me.cached).max()) == sc.truth["peak_reserved_in_use"]
