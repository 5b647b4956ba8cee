"""A snapshot's allocations are checked against their own stream's segments, not only their device's (h37-damage67).

``history_off_segments`` (h37-damage66) asks whether each allocation of a history lies in a segment of its device.
The caching allocator is stricter: its pools are per (device, stream) -- a block is carved from a segment of the
stream it is allocated on, and a free block is found only among its stream's -- and every snapshot PyTorch writes
names the stream of each segment (``segments[].stream``) and of each trace entry (``device_traces[][].stream``; every
real snapshot of ``tests/fixtures/wild/snapshot_*`` and ``snapshots_wild`` names them, all on stream 0).  So an
allocation on one stream inside another stream's segment was not made by the allocator whose segments the file holds
-- the device-wide check read such a history as whole.  Now ``history_off_stream_segments`` says it, as a
contradiction of its own code; an entry or segment naming no stream is checked against the device's, as before.

Truth by construction, on a real snapshot (YourSaDady/UofT-verification's ``before_train.pickle``, 139 allocations
into 21 segments, every one on stream 0): one segment moved, with the history's ``segment_alloc`` of it, onto stream 7
-- the allocations in it stay on stream 0 (92 of them, 1.7 MiB); the same with those allocations moved too (whole
again).  Fail on base 15b35816: the first two (base: no damage for the moved segment; no
``history_off_stream_segments``); the controls pass on base too."""

from __future__ import annotations

import copy
import gzip
import json
import pickle
from pathlib import Path

import numpy as np

from tb_gpu_advisor.formats.snapshot import reader
from tests.support.paths import FIXTURES

OTHELLO = FIXTURES / "snapshots_wild" / "state_before_training_othello.pickle.gz"


def _doc() -> dict:
    return pickle.loads(gzip.decompress(OTHELLO.read_bytes()))


def _moved(doc: dict, with_allocations: bool) -> dict:
    """``doc`` with the segment holding its first allocation, and the history's segment events of it, on stream 7;
    ``with_allocations``: that segment's allocations and frees too (a consistent history again)."""
    doc = copy.deepcopy(doc)
    first = next(e for e in doc["device_traces"][0] if e["action"] == "alloc")
    seg = next(s for s in doc["segments"] if s["address"] <= first["addr"] < s["address"] + s["total_size"])
    seg["stream"] = 7
    for e in doc["device_traces"][0]:
        inside = e.get("addr") is not None and seg["address"] <= e["addr"] < seg["address"] + seg["total_size"]
        if inside and (e["action"].startswith("segment") or with_allocations):
            e["stream"] = 7
    return doc


def _problems(tmp_path: Path, doc: dict, name: str = "snapshot.pickle") -> list:
    path = tmp_path / name
    path.write_bytes(json.dumps(doc).encode() if name.endswith(".json") else pickle.dumps(doc))
    return reader.read_trace(str(path)).problems


def test_an_allocation_in_another_streams_segment_is_a_contradiction(tmp_path):
    (p,) = _problems(tmp_path, _moved(_doc(), with_allocations=False))
    assert (p.kind, p.what) == ("contradiction", "history_off_stream_segments"), p
    assert p.detail.startswith("GPU 0's history allocates 92 blocks (1.7 MiB) at addresses none of the segments of "
                               "its own stream covers"), p.detail
    assert "the stream it is allocated on" in p.detail and p.record is not None


def test_the_json_form_is_checked_alike(tmp_path):
    """A snapshot saved as JSON is read entry by entry (no compactor's columns): the same streams, the same answer."""
    (p,) = _problems(tmp_path, _moved(_doc(), with_allocations=False), "snapshot.json")
    assert p.what == "history_off_stream_segments", p


def test_control_the_real_snapshot_and_a_consistent_move_are_whole(tmp_path):
    assert _problems(tmp_path, _doc()) == []
    assert _problems(tmp_path, _moved(_doc(), with_allocations=True)) == []


def test_control_one_stream_or_none_named_leaves_it_to_the_device_check():
    d = np.array([0x100, 0x100], np.int64)
    rd = np.zeros(2, np.int64)
    addr = np.array([0x1000, 0x5000], np.int64)  # the second in the segment of stream 9
    spans = [(0x1000, 0x1000), (0x5000, 0x1000)]
    one = np.zeros(2, np.int16)
    assert reader.history_off_stream_segments(spans, [5, 5], d, rd, addr, one, [5]) is None
    assert reader.history_off_stream_segments(spans, [None, None], d, rd, addr, one, [5]) is None
    assert reader.history_off_stream_segments(spans, [5, 9], d, rd, addr, one, [5]) == (1, 0x100, 1)
    unnamed = np.full(2, -1, np.int16)  # entries naming no stream: any segment of the device holds them
    assert reader.history_off_stream_segments(spans, [5, 9], d, rd, addr, unnamed, []) is None
