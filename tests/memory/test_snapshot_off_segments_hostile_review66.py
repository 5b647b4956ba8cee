"""The snapshot address check (``formats.snapshot.reader.history_off_segments``, h37-damage66) on addresses no
allocator writes: a damaged file is read on, never lost (h37-review66).

The reader takes any whole number a pickle holds as a segment's ``address``; the check built a signed 64-bit column of
them, and an address of 2**64 raised OverflowError out of the whole read (the file lost, where base read it).  A block
near the top of the 64-bit range ended past it and wrapped negative, so it read as inside a segment it is not in.
Both tests fail on 62a1bfdb (OverflowError; the wrapped block counted inside)."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import numpy as np
import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot import reader

TOP = int(np.iinfo(np.int64).max)


@pytest.mark.parametrize("address", [2**64, 2**70, TOP + 1])
def test_a_segment_address_past_64_bits_is_read_on(tmp_path: Path, address: int):
    doc = copy.deepcopy(ms.history_beside_segments(allocs=2, mib=16, cached_mib=64).doc)
    doc["segments"][0]["address"] = address
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(doc))
    trace = reader.read_trace(str(path))  # 62a1bfdb: OverflowError
    assert trace.memory is not None
    assert reader.history_off_segments([(address, 4096)], *(np.zeros(1, np.int64),) * 3) is None


def test_a_block_ending_past_the_top_is_no_segments():
    """A segment at 0x1000; a block at the top of the range, its end past it: off every segment (base: its end wrapped
    negative and it read as inside)."""
    addr = np.array([TOP - 0x10], dtype=np.int64)
    d = np.array([0x100], dtype=np.int64)
    rd = np.zeros(1, np.int64)
    assert reader.history_off_segments([(0x1000, 0x1000)], d, rd, addr) == (1, 0x100, 0)
    # a segment that reaches the top holds it
    assert reader.history_off_segments([(TOP - 0x20, 0x1000)], d, rd, addr) is None
