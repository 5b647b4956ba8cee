"""Issue #37 deliverable 5 (pytorch#176290: ``_memory_viz`` crashes on snapshots over 1 GB): a snapshot is read as a
stream, never whole.  ``unpickle.load`` reads the pickle twice in chunks (a first pass finds the memo keys fetched
again and the length, the second builds), on both the Python path and the compiled twin, and must give what
``loads`` gives on the whole bytes -- the same value, the same compactor calls, the same error at the same byte --
wherever a chunk boundary falls: inside an opcode, inside a length prefix, inside a string, a text line or a FRAME.

Main read the file (or the decompressed gzip) as one buffer: ``load`` did not exist, and ``read_trace`` asked the
file for all its bytes in one read.
"""

from __future__ import annotations

import gzip
import io
import pickle
import pickletools
import struct
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot import reader, unpickle
from tests.support import snapshot_paths as sp
from tests.support.compiled import built

_cpickle = built("tb_gpu_advisor.formats.snapshot._cpickle")
_GZIP_BLOCK = 1 << 20  # formats.kineto.parse reads a gzip file's compressed bytes 1 MiB at a time
#: The paths compared: Python always; the compiled twin where it is built.
PATHS = [False] + ([True] if sp.CPICKLE is not None else [])


class _Pass:
    """One pass over bytes in memory, as ``reader._Pass`` gives a file's: ``read(n)``, ``close()``."""

    def __init__(self, data: bytes):
        self._f = io.BytesIO(data)

    def read(self, n: int) -> bytes:
        return self._f.read(n)

    def close(self) -> None:
        pass


def _streamed(compiled: bool, data: bytes, chunk: int, compact: bool = True) -> tuple[Any, list]:
    saved = unpickle._CPICKLE
    unpickle._CPICKLE = sp.CPICKLE if compiled else None
    rec = sp.Recording() if compact else None
    try:
        return unpickle.load(lambda: _Pass(data), compact=rec, chunk=chunk)[0], rec.calls if rec else []
    except Exception as e:  # noqa: BLE001 - the error is the result compared
        return e, rec.calls if rec else []
    finally:
        unpickle._CPICKLE = saved


def _check_same_as_whole(data: bytes, chunks: tuple[int, ...] = (1, 2, 3, 5, 8, 64)) -> None:
    want, calls = sp.load_with(False, data)
    for compiled in PATHS:
        for chunk in chunks:
            got, got_calls = _streamed(compiled, data, chunk)
            assert sp.differences(got, want) == [], (compiled, chunk, len(data), got, want)
            assert got_calls == calls, (compiled, chunk)


def _snapshot(protocol: int) -> bytes:
    return pickle.dumps(ms.oom_activations().doc, protocol=protocol)


@pytest.mark.parametrize("protocol", range(0, pickle.HIGHEST_PROTOCOL + 1))
def test_a_snapshot_streamed_in_tiny_chunks_is_the_whole_reads_value(protocol: int):
    """Every protocol (text lines, FRAMEs, BINGET and LONG_BINGET) read 1, 2, 3, 5, 8 and 64 bytes at a time."""
    _check_same_as_whole(_snapshot(protocol))


def _opcode_cuts(data: bytes) -> list[int]:
    """Where a cut of ``data`` reads differently: for each kind of opcode the pickle holds (its first one), a cut
    before it, after its opcode byte, after each byte of a fixed argument or of a length prefix, in the middle and
    before the last byte of a string or a text line (its newline) -- found from the opcodes' offsets
    (``pickletools.genops``)."""
    ops = list(pickletools.genops(data))
    ends = [pos for _, _, pos in ops[1:]] + [len(data)]
    seen, out = set(), set()
    for (op, _, pos), end in zip(ops, ends):
        n, size = (op.arg.n if op.arg is not None else 0), end - pos
        marks = [(0, 0), (1, 1)]
        if n > 0:  # a fixed argument: each byte of it
            marks += [(k, k) for k in range(2, 1 + n)]
        elif n == pickletools.UP_TO_NEWLINE:  # a text line: inside it, and before its newline
            marks += [("mid", size // 2), ("last", size - 1)]
        elif n < 0:  # a length prefix (1, 4 or 8 bytes): each byte of it, then inside the bytes it counts
            m = {pickletools.TAKEN_FROM_ARGUMENT1: 1, pickletools.TAKEN_FROM_ARGUMENT8U: 8}.get(n, 4)
            marks += [(k, k) for k in range(2, 2 + m)] + [("mid", (1 + m + size) // 2), ("last", size - 1)]
        for label, at in marks:
            if 0 <= at < size and (op.code, label) not in seen:
                seen.add((op.code, label))
                out.add(pos + at)
    return sorted(out)


@pytest.mark.parametrize("protocol", [0, 2, 4])
def test_a_pickle_cut_anywhere_is_the_same_error_at_every_chunk_boundary(protocol: int):
    """Cut inside every kind of opcode the pickle holds, at every place of it where the read stops differently
    (:func:`_opcode_cuts`: before it, after its opcode byte, inside a fixed argument or a length prefix, inside a
    string, mid-line, before a newline), read in chunks that put a boundary inside the cut opcode: the whole read's
    error, word for word, on both paths.

    Why these cuts and not every byte (as before: each byte of the first 400, and 60 places spread after them, 460 a
    protocol, each read whole and in chunks of 1, 3 and 7 on both paths): what a cut reads depends on the opcode it
    splits and where in it, and the cuts by bytes split the same few kinds at the same places again and again (the
    spread ones -- most of the time, a cut costs its length read a byte at a time -- landed wherever the spacing
    put them).  The cuts from the opcodes' offsets split each kind at each of its places once, where it first comes
    in the file: the LONG_BINGETs past memo key 255 and STOP at the end too, which the first 400 bytes never held.
    29 / 57 / 57 cuts for protocols 0 / 2 / 4."""
    data = _snapshot(protocol)
    cuts = _opcode_cuts(data)
    assert {0, 1, len(data) - 1} <= set(cuts) and len(cuts) >= 25, cuts  # the start, STOP, the opcodes between
    for cut in cuts:
        _check_same_as_whole(data[:cut], chunks=(1, 3, 7))


def test_a_length_running_past_the_end_is_refused_before_it_is_read():
    """A string's length, a long integer's, a FRAME's, each past the end of the stream (and past its chunk): the
    error the whole read gives, and no read of the length asked for (the length is checked against the stream's)."""
    head = b"\x80\x04"
    hostile = [
        head + b"X" + struct.pack("<I", 1 << 31) + b"abc",  # BINUNICODE of 2 GiB in a 10-byte file
        head + b"\x8d" + struct.pack("<Q", 1 << 62) + b"abc",  # BINUNICODE8
        head + b"\x95" + struct.pack("<Q", 1 << 40) + b"}.",  # FRAME longer than the file
        head + b"\x8c\x10abc",  # SHORT_BINUNICODE cut
        head + b"T" + struct.pack("<i", -5) + b"abc",  # BINSTRING of a negative length
        head + b"\x8b" + struct.pack("<i", 9) + b"\x01",  # LONG4 cut
        b"(lp0\nI1\naI2",  # protocol 0: a text line with no end
    ]
    for data in hostile:
        _check_same_as_whole(data)
        want, _ = sp.load_with(False, data)
        assert isinstance(want, ValueError), data


def test_the_first_pass_steps_over_what_it_cannot_read_as_the_whole_pass_does():
    """The first pass (memo keys fetched again) over a stream: the keys ``fetched_keys`` finds in the whole bytes,
    wherever a chunk ends -- text GETs, BINGET, LONG_BINGET, and a length prefix skipping past many chunks."""
    for protocol in range(0, pickle.HIGHEST_PROTOCOL + 1):
        data = _snapshot(protocol)
        for chunk in (1, 2, 5, 4096):
            keys, total = unpickle._scan_stream(_Pass(data).read, chunk)
            assert (keys, total) == (unpickle.fetched_keys(data), len(data)), (protocol, chunk)


def test_the_compiled_first_pass_finds_the_same_keys():
    if _cpickle is None:
        pytest.skip("the compiled snapshot pickle reader is not built")
    for protocol in range(0, pickle.HIGHEST_PROTOCOL + 1):
        data = _snapshot(protocol)
        for chunk in (1, 3, 4096):
            bitmap, total = _cpickle.scan(_Pass(data).read, chunk, unpickle.MAX_LINE)
            keys = {k for k in range(8 * len(bitmap)) if bitmap[k >> 3] >> (k & 7) & 1}
            assert (keys, total) == (unpickle.fetched_keys(data), len(data)), (protocol, chunk)


_Counting = sp.CountingFile


@pytest.fixture(scope="module")
def long_history(tmp_path_factory) -> tuple[Path, int, Any]:
    """A 20,000-entry history (4.4 MB), its size and the trace its whole bytes give: written and read whole once for
    both forms of the file below (the whole read of the dicts is the slow one, ~8 s)."""
    path = tmp_path_factory.mktemp("stream") / "long.pickle"
    size = ms.write_large(str(path), 20_000)
    return path, size, reader.to_trace(unpickle.loads(path.read_bytes()), "h", str(path), size)


@pytest.mark.parametrize("gz", [False, True])
def test_read_trace_never_asks_the_file_for_more_than_a_chunk(gz: bool, long_history, tmp_path: Path, monkeypatch):
    """``read_trace`` on a 20,000-entry history (4.4 MB) with 4 KiB chunks: no read of the file asks for more than a
    chunk (the look at its start: 64 KiB; the gzip reader's compressed block: 1 MiB), the file is read through once per pass, and the trace is the one the
    whole bytes give.  Main asked for the whole file (its size + 1) in one read."""
    path, size, whole = long_history
    if gz:
        path = tmp_path / "long.pickle.gz"
        path.write_bytes(gzip.compress(long_history[0].read_bytes(), 1))
    log: list[tuple[int, int]] = []
    opened = reader.fsio.open_binary
    monkeypatch.setattr(reader.fsio, "open_binary", lambda p: _Counting(opened(p), log))
    monkeypatch.setattr(unpickle, "CHUNK", 4096)
    for compiled in PATHS:
        log.clear()
        monkeypatch.setattr(unpickle, "_CPICKLE", sp.CPICKLE if compiled else None)
        tr = reader.read_trace(str(path))
        asked = max(n for n, _ in log)
        assert asked <= max(4096, reader._HEAD_BYTES, _GZIP_BLOCK if gz else 0), (compiled, asked)
        got = sum(k for _, k in log)
        assert 2 * path.stat().st_size <= got <= 3 * path.stat().st_size, (compiled, got)  # two passes and the look
        a, b = tr.memory[0], whole.memory[0]
        assert tr.size_bytes == size and len(a) == 20_000
        assert (a.allocated == b.allocated).all() and (a.t == b.t).all() and a.op_names == b.op_names


def test_a_stream_holds_a_window_not_the_file():
    """What ``load`` holds is what it builds and a window: a 3.3 MB pickle of 50,000 dicts the compactor takes as
    one shared value (the value: a list of 50,000 references, 0.4 MB) is read with a traced peak below half the
    file's size in 64 KiB chunks, where ``loads`` on the whole bytes holds them all beside the value.  ``tracemalloc`` counts
    allocations, not time: the same on every run.  (50,000 dicts, not 100,000 as before: the traced peak is 0.29 of
    the file on the Python path and 0.25 on the compiled one, against 0.26 and 0.20 at 100,000 -- the window's fixed
    bytes weigh a little more -- while a read that holds the file's bytes holds 1.0 of it at any size; the Python
    path's traced read is half the time.)"""
    rows = [{"action": "alloc", "addr": 4096 * i, "size": 512, "name": f"layers.{i}.attention.output.dense.weight"}
            for i in range(50_000)]
    data = pickle.dumps({"segments": [], "device_traces": [rows]}, protocol=4)
    del rows
    shared = 0  # a plain value every dict becomes
    for compiled in PATHS:
        saved = unpickle._CPICKLE
        unpickle._CPICKLE = sp.CPICKLE if compiled else None
        try:
            tracemalloc.start()
            try:
                doc, total = unpickle.load(lambda: _Pass(data), compact=lambda d, lst: shared, chunk=1 << 16)
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
        finally:
            unpickle._CPICKLE = saved
        assert total == len(data) and len(doc["device_traces"][0]) == 50_000
        assert peak < len(data) // 2, (compiled, peak, len(data))


@pytest.mark.parametrize("cut", [0.1, 0.5, 0.99])
def test_a_cut_gzip_is_the_same_error_on_both_paths(cut: float, tmp_path: Path, monkeypatch):
    """A gzip snapshot cut off (at 10%, half, 99% of it) read in 4 KiB chunks: the gzip's own error, worded as
    before, with the same count of bytes on both paths, raised by the first pass before anything is built."""
    raw = pickle.dumps(ms.oom_activations().doc, protocol=4)
    z = gzip.compress(raw, 1)
    path = tmp_path / "cut.pickle.gz"
    path.write_bytes(z[: int(len(z) * cut)])
    monkeypatch.setattr(unpickle, "CHUNK", 4096)
    said = set()
    for compiled in PATHS:
        monkeypatch.setattr(unpickle, "_CPICKLE", sp.CPICKLE if compiled else None)
        with pytest.raises(reader.SnapshotReadError) as e:
            reader.read_trace(str(path))
        assert "a gzip file cut off or corrupt after" in str(e.value)
        said.add(str(e.value))
    assert len(said) == 1, said
