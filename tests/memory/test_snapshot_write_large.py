"""The generator's large history (``synthetic.memsnapshot.write_large``) is encoded a block of entries at a time, so a
1 GB snapshot is written at the disk's pace (h37-snap62; issue #37 class 5: the 1 GB table in docs/benchmarks.md
could not be remade in session 61, whose writer made each entry's bytes in a Python loop of ~130 calls an entry and
wrote ~10 MB a minute on the loaded machine).

The first test counts the Python calls the writer makes (``sys.setprofile``: a count, no timing): base makes ~130 an
entry (each frame reference its own ``ref`` and ``struct.pack`` calls: 2,589,812 here), the block writer a few per
block -- it fails on base.  The second checks the file against its construction (control: true of both writers): the first ``live + 1`` entries
allocate, then every other one frees the oldest allocation with its size and stack, every stack one of ``stacks``
lists of the shared frame dicts, times 3 us apart; and the reader reads every entry of it."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace

ENTRIES, STACKS, LIVE = 20_000, 40, 300


def test_the_large_history_is_written_without_python_work_per_entry(tmp_path: Path):
    calls = 0

    def count(frame, event, arg) -> None:
        nonlocal calls
        calls += event in ("call", "c_call")

    sys.setprofile(count)
    try:
        ms.write_large(str(tmp_path / "long.pickle"), ENTRIES, stacks=STACKS, live=LIVE)
    finally:
        sys.setprofile(None)
    # the header's frames and stacks cost ~(stacks * (4 + depth)) calls, once; base: 2,589,812
    assert calls < ENTRIES, calls


def test_the_large_history_is_the_one_constructed(tmp_path: Path):
    path = tmp_path / "long.pickle"
    size = ms.write_large(str(path), ENTRIES, stacks=STACKS, live=LIVE)
    assert size == path.stat().st_size
    assert ms.write_large(str(tmp_path / "again.pickle"), ENTRIES, stacks=STACKS, live=LIVE) == size
    assert (tmp_path / "again.pickle").read_bytes() == path.read_bytes()  # the same arguments, the same file
    with open(path, "rb") as f:
        doc = pickle.load(f)
    (trace,) = doc["device_traces"]
    assert len(trace) == ENTRIES
    shared = {id(fr) for fr in doc["x_shared"] if isinstance(fr, dict)}
    live: dict[int, tuple[int, list]] = {}
    order: list[int] = []
    stacks = set()
    for i, e in enumerate(trace):
        assert e["time_us"] == ms.T0_US + 3 * (i + 1) and e["stream"] == 0
        assert all(id(fr) in shared for fr in e["frames"])
        stacks.add(tuple(id(fr) for fr in e["frames"]))
        if e["action"] == "alloc":
            assert i <= LIVE or (i - LIVE - 1) % 2 == 1
            assert 512 <= e["size"] <= 2 * ms.MiB and e["size"] % 512 == 0 and e["addr"] not in live
            live[e["addr"]] = (e["size"], e["frames"])
            order.append(e["addr"])
        else:
            assert e["action"] == "free_completed" and (i - LIVE - 1) % 2 == 0
            assert e["addr"] == order.pop(0)  # the oldest allocation first
            assert live.pop(e["addr"]) == (e["size"], e["frames"])
    assert len(live) == LIVE and 1 < len(stacks) <= STACKS
    assert len(read_trace(str(path)).memory[0]) == ENTRIES
