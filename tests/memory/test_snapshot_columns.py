"""Issue #37 item 5, "snapshots over 1 GB are read in bounded memory" (h37-snap6): a snapshot's history is held as
its compactor's columns and nothing per entry.

The assumption that was wrong: *each trace entry needs an object of its own in the list that held it* (an
``_Entry``, an int subclass naming its row: ~40 bytes an entry beside the ~37 its columns take).  An entry's list
only needs to say which rows are its: appends to one list come in order, so the compactor, told the list each dict
goes into, keeps runs (the list, its first row) and the list holds one shared mark (``reader.ROW``) per entry.  The
walk then reads the rows column by column.  A 1.08 GB ``write_large`` history: 876 -> see docs/robustness.md."""

from __future__ import annotations

import struct
import tracemalloc
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot import reader, unpickle
from tests.support import snapshot_paths as sp

PATHS = [False] + ([True] if sp.CPICKLE is not None else [])


def _read(compiled: bool, fn, *args):
    saved = unpickle._CPICKLE
    unpickle._CPICKLE = sp.CPICKLE if compiled else None
    try:
        return fn(*args)
    finally:
        unpickle._CPICKLE = saved


@pytest.mark.parametrize("compiled", PATHS)
def test_a_history_is_held_as_columns_with_one_shared_mark_per_entry(compiled: bool, tmp_path: Path):
    """By construction: after the read, every entry of the history is the one ``ROW`` object (no Python object per
    entry), and the compactor's Python objects are per stack and per action, not per row (main: an ``_Entry`` each;
    ``reader.ROW`` does not exist there)."""
    path = tmp_path / "long.pickle"
    ms.write_large(str(path), 5_000, stacks=40)
    cols = reader._Compactor()
    doc, _ = _read(compiled, unpickle.load, lambda: reader._Pass(str(path)), None, cols)
    entries = doc["device_traces"][0]
    assert len(entries) == 5_000 and all(e is reader.ROW for e in entries)
    assert len(cols.action) == 5_000 and len(cols.frames) <= 40 and len(cols.actions) == 2
    assert cols.runs == [(entries, 0)] and not cols.device_free
    rows = reader._entries(entries, cols, reader._Budget(10**9))
    assert isinstance(rows, reader._Rows) and len(rows) == 5_000
    assert [rows[i].fields() for i in (0, 4_999)] == [cols.row(0).fields(), cols.row(4_999).fields()]


def _peak_per_entry(path: Path) -> float:
    tracemalloc.start()
    try:
        tr = reader.read_trace(str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, len(tr.memory[0])


def test_reading_a_longer_history_costs_its_columns_and_its_events_only(tmp_path: Path):
    """The peak of ``read_trace`` grows with the history by what its columns (29 bytes an entry), list slots (8) and
    the walk's event arrays need, not by an object per entry: measured as the growth between two histories of the
    same stacks (the fixed part -- frames, interpreter, the first read's imports -- cancels).  Python objects traced
    (``tracemalloc``): here ~37 bytes an entry on both readers, main 122 (pure Python) and 132 (compiled), an
    ``_Entry`` per row and the walk's per-entry copies of every column; the bound, 80, sits between."""
    small, large = tmp_path / "small.pickle", tmp_path / "large.pickle"
    ms.write_large(str(small), 10_000)
    ms.write_large(str(large), 50_000)
    reader.read_trace(str(small))  # once untraced: what the first read makes once (imports, caches) is not counted
    (p_small, n_small), (p_large, n_large) = _peak_per_entry(small), _peak_per_entry(large)
    assert (n_small, n_large) == (10_000, 50_000)
    per_entry = (p_large - p_small) / (n_large - n_small)
    assert 0 < per_entry < 80, per_entry


def _interleaved() -> bytes:
    """A hand-made pickle whose two device lists are filled alternately: B gets the first entry, then A (holding B)
    gets the second; ``device_traces`` is [A, B].  Rows in order of placement are B's then A's."""
    def text(s: str) -> bytes:
        raw = s.encode()
        return b"X" + struct.pack("<I", len(raw)) + raw

    def entry(addr: int, size: int, t: int) -> bytes:
        return (b"}(" + text("action") + text("alloc") + text("addr") + b"J" + struct.pack("<i", addr)
                + text("size") + b"J" + struct.pack("<i", size) + text("time_us") + b"J" + struct.pack("<i", t) + b"u")

    return (b"\x80\x02}(" + text("segments") + b"]" + text("device_traces") + b"](]]q\x00("
            + entry(4096, 512, 10) + b"ea(" + entry(8192, 1024, 20) + b"eh\x00eu.")


@pytest.mark.parametrize("compiled", PATHS)
def test_control_lists_filled_alternately_keep_their_own_rows(compiled: bool, tmp_path: Path):
    """Control (main alike): the rows of a list are its own even where the file fills two lists in turn -- the
    compactor is told each dict's list, so device 0 (A) is the 1024-byte allocation and device 1 (B) the 512-byte
    one, on both readers; A's nested list is a trace entry of the wrong shape, said as damage."""
    path = tmp_path / "interleaved.pickle"
    path.write_bytes(_interleaved())
    tr = _read(compiled, reader.read_trace, str(path))
    assert sorted(tr.memory) == [0, 1]
    assert tr.memory[0].delta.tolist() == [1024] and tr.memory[0].addr.tolist() == [8192]
    assert tr.memory[1].delta.tolist() == [512] and tr.memory[1].addr.tolist() == [4096]


@pytest.mark.parametrize("compiled", PATHS)
def test_the_compactor_is_freed_when_the_read_returns(compiled: bool, tmp_path: Path, monkeypatch):
    """By construction (h37-snap7): with the garbage collector off, no compactor of the read outlives it, on an
    ordinary history and on one with an OOM (whose entries are read one by one, as ``_Entry`` rows).  Main: the
    compactor and its row class referred to each other, so its columns (~21 bytes an entry the events do not view)
    stayed until the collector's next full pass -- which came during the analysis, beside its peak."""
    import gc
    import weakref

    made: list[weakref.ref] = []
    init = reader._Compactor.__init__

    def tracked(self) -> None:
        init(self)
        made.append(weakref.ref(self))

    monkeypatch.setattr(reader._Compactor, "__init__", tracked)
    long = tmp_path / "long.pickle"
    ms.write_large(str(long), 5_000, stacks=40)
    oom = ms.write(str(tmp_path / "oom.pickle"), ms.oom_activations().doc)
    gc.collect()
    gc.disable()
    try:
        for path in (str(long), oom):
            made.clear()
            tr = _read(compiled, reader.read_trace, path)
            assert len(tr.memory[0]) and made, path
            assert all(r() is None for r in made), path
        assert tr.snapshot.ooms  # the OOM's entries were read as rows, and their compactor freed too
    finally:
        gc.enable()
