"""The compiled PyTorch JSON scanner reads every trace as the typed decode it stands in for (issue #38 items 2, 5, 6).

Why: the C scanner (``formats/kineto/_cscan.c``) replaces msgspec's typed decode and the column builder on the hot
path, so every column it gives -- values, dtypes, name/category/pid ids and their order, the kept op shapes, the
metadata, the ``[memory]`` rows, the damage counts -- and every error must be the Python path's, on real traces, on
JSON no profiler writes, and on hostile bytes.  Both paths run in this process (``tests/support/kineto_paths.py``
swaps the parser's one switch); ``make test`` runs this file again with ``TB_GPU_ADVISOR_PURE_PYTHON=1``.
"""

from __future__ import annotations

import gzip
import os
import random

import numpy as np
import pytest

from synthetic import hostile, hostile_kineto
from tb_gpu_advisor.formats.kineto import compiled, parse
from tests.support.compiled import built, check_built_where_required, needs
from tests.support.compiled import in_child as _in_child
from tests.support.kineto_paths import INTERESTING_VALUES, differences, every_trace, mutate_json, read_both, read_with
from tests.support.paths import REPO

_cscan = built("tb_gpu_advisor.formats.kineto._cscan")
needs_compiled = needs(_cscan, "PyTorch JSON scanner")


def test_the_compiled_scanner_is_built_where_required():
    """CI (``.ci/run`` sets TB_GPU_ADVISOR_REQUIRE_COMPILED) must test the compiled path, never skip it."""
    check_built_where_required(_cscan, compiled, parse._CSCAN)


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


@needs_compiled
@pytest.mark.same_on_both_paths  # read_both sets the scanner itself, even under the pure switch: the rerun repeats it
@pytest.mark.parametrize("path", every_trace(), ids=lambda p: os.path.relpath(p, REPO.parent))
def test_both_paths_read_every_trace_alike(path):
    """Every PyTorch trace of tests/, demo_logs/ and ../shared/profiles: identical columns, names and ids."""
    fast, ref = read_both(path)
    assert not isinstance(ref, Exception) or isinstance(fast, Exception)
    assert differences(fast, ref) == []


@needs_compiled
def test_the_compiled_path_really_scans(monkeypatch):
    """Equality proves nothing if the scanner handed every chunk back: on real traces none is."""
    def refuse(*a, **k):
        raise AssertionError("a well-formed chunk fell back to the typed decode")

    monkeypatch.setattr(parse, "_decode_chunk", refuse)
    for rel in ("demo_logs/pytorch_input_bound", "tests/fixtures/wild/hta_v100"):
        path = next(str(p) for p in (REPO / rel).glob("*.pt.trace.json*"))
        kt = read_with(True, path)
        assert not isinstance(kt, Exception), kt
        assert len(kt) > 500 and kt.names and (kt.op_args or kt.op_work)


@needs_compiled
def test_kept_args_read_alike_grouped_or_row_by_row():
    """The shape arguments of a scanned chunk are decoded once per distinct (op, shapes) and given to each row; where
    the scanner refuses the spans (``op_keys`` None) they are decoded row by row: both give the typed decode's
    ``op_args`` and ``op_work``, row for row and in row order, on traces of FLOP ops and of collectives."""
    from tb_gpu_advisor.formats.kineto import _cscan

    class RowByRow:
        scan = staticmethod(_cscan.scan)

        @staticmethod
        def op_keys(*a):
            return None

    for rel in ("tests/fixtures/wild/hta_v100", "tests/fixtures/wild/dlrm_a100_alltoall"):
        path = next(str(p) for p in (REPO / rel).glob("*.pt.trace.json*"))
        grouped, ref = read_both(path)
        assert grouped.op_args or grouped.op_work
        saved = parse._CSCAN
        try:
            parse._CSCAN = RowByRow
            row_by_row = parse.parse_trace(path, workers=1)
        finally:
            parse._CSCAN = saved
        for kt in (grouped, row_by_row):
            assert differences(kt, ref) == []
            assert list(kt.op_args) == list(ref.op_args) and list(kt.op_work) == list(ref.op_work)


@needs_compiled
@pytest.mark.same_on_both_paths  # read_both sets the scanner itself, even under the pure switch: the rerun repeats it
@pytest.mark.parametrize("chunk", [1 << 12, 1 << 16])
def test_small_chunks_and_their_failed_cuts_read_alike(monkeypatch, chunk):
    """Chunks of a few kB: many per trace, new names met in later chunks (ids across chunks), cuts tried inside
    strings and nested ``args`` (the scanner hands those back, as the typed decode refuses them)."""
    monkeypatch.setattr(parse, "CHUNK_BYTES", chunk)
    for rel in ("tests/fixtures/wild/hta_v100", "tests/fixtures/h200_memory/torch_mem_fragmented",
                "tests/fixtures/wild/dlrm_a100_alltoall"):
        path = next(str(p) for p in (REPO / rel).glob("*.pt.trace.json*"))
        fast, ref = read_both(path)
        assert differences(fast, ref) == []


@needs_compiled
def test_worker_threads_merge_scanned_chunks_alike(monkeypatch):
    """Past ``PARALLEL_AFTER`` chunks are scanned in worker threads (processes on the Python path) and merged in file
    order: the serial columns."""
    monkeypatch.setattr(parse, "PARALLEL_AFTER", 0)
    monkeypatch.setattr(parse, "CHUNK_BYTES", 1 << 16)
    path = next(str(p) for p in (REPO / "tests/fixtures/wild/hta_v100").glob("*.pt.trace.json*"))
    fast, ref = read_both(path, workers=2)
    serial = read_with(False, path)
    assert differences(fast, ref) == [] and differences(fast, serial) == []


@needs_compiled
def test_worker_threads_hand_chunks_back_alike(monkeypatch, tmp_path):
    """A thread only scans; the reader's thread adds each chunk in file order, and decodes itself the chunks the
    scanner hands back (an escaped name) or re-reads those cut inside an event (``args`` holding ``[{"ph": 1}, ...]``,
    which looks like the next event's start): the Python path's columns, and the serial path's."""
    events = []
    for i in range(2000):
        name = b"op\\\"%d" % (i % 7) if i % 97 == 0 else b"op%d" % (i % 30)
        nested = b", ".join(b'{"ph": %d}' % j for j in range(i % 9)) if i % 13 == 0 else b""
        events.append(b'{"ph": "X", "cat": "cpu_op", "name": "%s", "pid": %s, "tid": 2, "ts": %d.5, "dur": 1.25, '
                      b'"args": {"correlation": %d, "nested": [%s]}}' % (name, b'"Spans"' if i % 50 == 0 else b"1",
                                                                        10 + i, i, nested))
    path = tmp_path / "w.1.pt.trace.json"
    path.write_bytes(b'{"traceEvents": [' + b", ".join(events) + b"]}")
    monkeypatch.setattr(parse, "CHUNK_BYTES", 4096)
    monkeypatch.setattr(parse, "_READ_BLOCK", 8192)  # threads are used only before the input's end is read
    serial = read_with(True, str(path))
    monkeypatch.setattr(parse, "PARALLEL_AFTER", 0)
    outs = []
    add = parse._Parser._add_thread_scan
    monkeypatch.setattr(parse._Parser, "_add_thread_scan", lambda self, out, data: outs.append(out) or add(self, out, data))
    fast, ref = read_both(str(path), workers=2)
    assert None in outs and False in outs and any(isinstance(o, tuple) for o in outs), "not every case was met"
    assert differences(fast, ref) == [] and differences(fast, serial) == []


@needs_compiled
def test_chunks_in_flight_when_the_thread_pool_breaks_read_alike(monkeypatch, tmp_path):
    """A pool that refuses its fourth chunk (shut down under the reader) is dropped; the chunks already scanned in
    threads are still added in order, the rest read here: the serial columns."""
    events = b", ".join(b'{"ph": "X", "cat": "cpu_op", "name": "op%d", "pid": 1, "tid": 2, "ts": %d.5, "dur": 1.0, '
                        b'"args": {"correlation": %d}}' % (i % 30, 10 + i, i) for i in range(3000))
    path = tmp_path / "w.1.pt.trace.json"
    path.write_bytes(b'{"traceEvents": [' + events + b"]}")
    monkeypatch.setattr(parse, "CHUNK_BYTES", 4096)
    monkeypatch.setattr(parse, "_READ_BLOCK", 8192)
    serial = read_with(True, str(path))

    class Breaks(parse.concurrent.futures.ThreadPoolExecutor):
        sent = 0

        def submit(self, *a, **k):
            self.sent += 1
            if self.sent == 4:
                raise RuntimeError("cannot schedule new futures after shutdown")
            return super().submit(*a, **k)

    dropped = []
    drop = parse._Parser._drop_pool
    monkeypatch.setattr(parse, "_start_threads", lambda n: Breaks(n, thread_name_prefix="kineto-scan"))
    monkeypatch.setattr(parse._Parser, "_drop_pool", lambda self: dropped.append(len(self.pending)) or drop(self))
    monkeypatch.setattr(parse, "PARALLEL_AFTER", 0)
    fast = read_with(True, str(path), workers=2)
    assert dropped and dropped[0] > 0, "no chunk was in flight when the pool broke: the test tests nothing"
    assert differences(fast, serial) == []


# -- JSON no profiler writes, built by hand ----------------------------------------------------------------------

_FIELDS = ("ph", "name", "cat", "pid", "tid", "ts", "dur", "args", "correlation", "External id", "external id",
           "device", "stream", "bytes", "graph id", "Input Dims", "Device Id", "Total Allocated", "name2", "Ev Idx",
           "grid", "block")


def _hand_trace(field: str, value: bytes) -> bytes:
    """A small trace whose middle events carry ``value`` as ``field`` (in the event, or in its ``args``)."""
    events = []
    for i in range(12):
        args = {b"correlation": b"%d" % i, b"External id": b"%d" % (i % 5), b"Input Dims": b"[[4, 8], [8, 16]]",
                b"Input type": b'["float", "float"]'}
        ev = {b"ph": b'"X"', b"cat": b'"cpu_op"', b"name": b'"aten::mm"' if i % 3 else b'"op%d"' % (i % 4),
              b"pid": b"%d" % (100 + i % 2), b"tid": b"%d" % (7 + i % 3), b"ts": b"%d.%03d" % (1000 + i * 10, i),
              b"dur": b"%d.5" % (i + 1)}
        if i in (4, 5, 9):
            key = field.encode()
            if field == "name2":
                ev[b"name"] = value
            elif key in ev or field == "args":
                ev[key] = value
            else:
                args[key] = value
        if b"args" not in ev:
            ev[b"args"] = b"{" + b", ".join(b'"%s": %s' % kv for kv in args.items()) + b"}"
        events.append(b"{" + b", ".join(b'"%s": %s' % kv for kv in ev.items()) + b"}")
    events.insert(3, b'{"ph": "M", "name": "process_name", "pid": 100, "args": {"name": "python"}}')
    events.insert(6, b'{"ph": "i", "name": "[memory]", "pid": 100, "tid": 7, "ts": 1055.0, "s": "t", "args": '
                     b'{"Device Id": 0, "Device Type": 1, "Bytes": 512, "Total Allocated": 4096, "Addr": 77}}')
    return b'{"schemaVersion": 1, "traceEvents": [' + b",\n".join(events) + b"]}"


@needs_compiled
@pytest.mark.parametrize("field", _FIELDS)
def test_every_unusual_value_reads_alike(field):
    """Each field of the events, and of their ``args``, given each unusual value: escapes, ``\\u``, numbers as
    strings, past 64 bits or a float's range, bad grammar, deep nesting, raw control characters, bytes that are no
    UTF-8.  Same columns, or the same error."""
    for value in INTERESTING_VALUES:
        fast, ref = read_both(_hand_trace(field, value))
        assert differences(fast, ref) == [], value


#: One byte or sequence the scanner's string loop must stop at (``needs_look``, eight bytes at a time): the quote and
#: backslash of escapes, raw control bytes, UTF-8 of 2 and 4 bytes, bytes that are no UTF-8, DEL (plain, printable).
_STRING_SPECIALS = (b'\\"', b"\\\\", b"\\n", b"\\u0041", b"\x01", b"\x1f", b"\t", b"\xc3\xa9", b"\xf0\x9f\x98\x80", b"\xff",
                    b"\xc3", b"\x7f", b"\x80")


@needs_compiled
def test_strings_read_alike_wherever_their_special_byte_falls():
    """A name with an escape, a control byte or a non-ASCII byte at each of 18 places (every position within the
    8-byte words the scanner reads at once, and the bytes after the last whole word): the columns of the typed decode
    or its error, and the name as written where it is valid (truth by construction)."""
    for special in _STRING_SPECIALS:
        for at in range(18):
            name = b"k" * at + special + b"z" * (17 - at)
            fast, ref = read_both(_hand_trace("name2", b'"' + name + b'"'))
            assert differences(fast, ref) == [], (special, at)
            if special in (b"\xc3\xa9", b"\xf0\x9f\x98\x80", b"\x7f"):
                assert name.decode() in fast.names, (special, at)


#: Numbers in places no column reads (an unknown ``args`` key, inside arrays): the scanner checks their grammar only,
#: and leaves exponents and 96+ characters to its full number reader (which refuses what is not finite).
_SKIPPED_NUMBERS = (b"1e999", b"-1E-999", b"1e5", b"0.5e+3", b"2E+", b"1.5e", b"1" * 95, b"1" * 96, b"1" * 97,
                    b"-" + b"9" * 400, b"0." + b"3" * 120, b"1.", b"-", b"01", b"-0", b"00", b"-.5", b"0.0", b"7")


@needs_compiled
@pytest.mark.parametrize("where", [b'{"Ev Idx": %s}', b'{"grid": [1, %s, 2]}', b'{"Input Dims": [[%s]]}'])
def test_numbers_no_column_reads_are_checked_alike(where):
    for number in _SKIPPED_NUMBERS:
        fast, ref = read_both(_hand_trace("args", where % number))
        assert differences(fast, ref) == [], number


#: ``grid`` / ``block`` values beyond what CUPTI writes: other lengths, negative, past int32 and int64, floats, nested,
#: and a product that saturates (the launch columns are int32).
_LAUNCH_VALUES = (b"[1, 1, 1]", b"[132]", b"[4, 2]", b"[1, 1, 1, 1]", b"[]", b"[0, 1, 1]", b"[-1, 1, 1]",
                  b"[2147483647, 1, 1]", b"[2147483648, 1, 1]", b"[65535, 65535, 65535]", b"[1.0, 1, 1]",
                  b"[true, 1, 1]", b'["1", 1, 1]', b"[[1], 1, 1]", b"[null]", b"[99999999999999999999, 1, 1]",
                  b"[1e2, 1, 1]", b"[1, 1, 1", b"[1,, 1]", b"[ 7 , 3 ]")


@needs_compiled
@pytest.mark.parametrize("field", ["grid", "block"])
def test_launch_dimensions_read_alike(field):
    """Each launch shape and malformed value of ``grid`` and ``block``: the same columns (or error) on both paths, and
    where the value is a list of 1-3 integers their product, saturated at int32's top (truth by construction)."""
    column = {"grid": "blocks", "block": "threads"}[field]
    for value in _LAUNCH_VALUES:
        fast, ref = read_both(_hand_trace(field, value))
        assert differences(fast, ref) == [], value
        if not isinstance(fast, Exception) and value in (b"[1, 1, 1]", b"[132]", b"[4, 2]", b"[ 7 , 3 ]",
                                                         b"[65535, 65535, 65535]", b"[0, 1, 1]"):
            want = min(int(np.prod([int(x) for x in value.strip(b"[]").split(b",")], dtype=object)), 2**31 - 1)
            col = _dense(fast, column)
            assert col[[4, 5, 9]].tolist() == [want] * 3 and (np.delete(col, [4, 5, 9]) == -1).all(), value
        elif not isinstance(fast, Exception) and value in (b"[]", b"[1, 1, 1, 1]", b"[-1, 1, 1]", b"[1.0, 1, 1]",
                                                           b"[2147483648, 1, 1]"):
            assert (_dense(fast, column) == -1).all() and fast.launch_row.size == 0, value


#: (grid, block, the workgroups were the grid in work-items): partial workgroups per dimension, one of the two
#: missing or malformed, lengths that differ, a block dimension of 0, a product that saturates.
_GROUP_CASES = ((b"[784, 1, 64]", b"[256, 1, 1]", 4 * 64), (b"[73728, 1, 1]", b"[256, 1, 1]", 288),
                (b"[1, 1, 1]", b"[256, 1, 1]", 1), (b"[0, 1, 1]", b"[64, 4, 1]", 0), (b"[300, 7]", b"[256, 2]", 8),
                (b"[16, 256, 1]", b"[1, 256, 1]", 16), (b"[2147483647, 65535, 65535]", b"[1, 1, 1]", 2**31 - 1),
                (b"[4, 2]", b"[1, 1, 1]", -1), (b"[8, 1, 1]", b"[0, 1, 1]", -1), (b"[8, 1, 1]", b"null", -1),
                (b"null", b"[8, 1, 1]", -1), (b"[8.0, 1, 1]", b"[8, 1, 1]", -1), (b"[8, 1, 1]", b"[-8, 1, 1]", -1))


@needs_compiled
def test_launch_workgroups_read_alike():
    """``groups`` (``parse.launch_groups``: the workgroups of a grid in work-items, ceil per dimension) is the same
    column on both paths, and the number built into each case."""
    for grid, block, want in _GROUP_CASES:
        args = b'{"correlation": 4, "grid": %s, "block": %s}' % (grid, block)
        fast, ref = read_both(_hand_trace("args", args))
        assert differences(fast, ref) == [], (grid, block)
        assert _dense(fast, "groups")[[4, 5, 9]].tolist() == [want] * 3, (grid, block)


@needs_compiled
def test_a_scanner_of_another_launch_layout_hands_its_chunks_back(monkeypatch):
    """A scanner built from an older ``_cscan.c`` (two launch counts a row, not three) is not believed: every chunk
    goes to the Python path, whose columns are the reference's."""
    class Stale:
        def __getattr__(self, name):  # the scanner's other functions as they are
            return getattr(_cscan, name)

        @staticmethod
        def scan(data):
            out = _cscan.scan(data)
            if not isinstance(out, tuple):
                return out
            launch = np.frombuffer(out[19], np.int32).reshape(-1, 3)[:, :2]
            return (*out[:19], launch.tobytes())

    path = next(str(p) for p in (REPO / "tests/fixtures/wild/amd_mi300x").glob("*.pt.trace.json*"))
    ref = read_with(False, path)
    monkeypatch.setattr(parse, "_CSCAN", Stale())
    stale = parse.parse_trace(path, workers=1)
    assert differences(stale, ref) == [] and (stale.groups > 0).any()


def _dense(kt, column: str) -> np.ndarray:
    """A launch column over every row (-1 where the row records none)."""
    out = np.full(len(kt), -1, np.int64)
    out[kt.launch_row] = getattr(kt, column)
    return out


@needs_compiled
def test_the_scanner_reads_what_the_trace_says():
    """Truth by construction, without the typed decode: the hand-made trace's columns are the numbers written."""
    kt = read_with(True, _hand_trace("dur", b"2.5"))
    assert not isinstance(kt, Exception), kt
    assert kt.ts_ns[:4].tolist() == [1_000_000, 1_010_001, 1_020_002, 1_030_003]
    assert kt.dur_ns[4] == 2500 and kt.dur_ns[0] == 1500
    assert kt.correlation.tolist() == list(range(12)) and kt.external_id.tolist() == [i % 5 for i in range(12)]
    assert [kt.names[i] for i in kt.name[:4]] == ["op0", "aten::mm", "aten::mm", "op3"]
    assert kt.pid[:3].tolist() == [100, 101, 100] and kt.tid[:4].tolist() == [7, 8, 9, 7]
    assert kt.process_names == {100: "python"} and kt.mem is not None and kt.mem.addr.tolist() == [77]
    assert set(kt.op_work) == {i for i in range(12) if i % 3}  # aten::mm keeps its shapes: 4x8 @ 8x16
    assert kt.ph_counts == {"X": 12, "M": 1, "i": 1}


@needs_compiled
@pytest.mark.same_on_both_paths  # read_both sets the scanner itself, even under the pure switch: the rerun repeats it
@pytest.mark.parametrize("name", list(hostile_kineto.KINDS))
def test_both_paths_meet_hostile_traces_alike(name):
    """The hostile PyTorch traces of the robustness corpus (times no clock writes, 8 MB events): the same result."""
    fast, ref = read_both(hostile_kineto.KINDS[name]())
    assert differences(fast, ref) == []


@needs_compiled
@pytest.mark.same_on_both_paths  # read_both sets the scanner itself, even under the pure switch: the rerun repeats it
def test_both_paths_meet_mutated_traces_alike():
    """A fixed sample of mutations (``scripts/kineto_fuzz_equal.py`` runs many more): byte mutations of the
    robustness fuzzer and JSON-aware ones, of a real trace."""
    rng = random.Random(3802)
    seed = _read(next(str(p) for p in (REPO / "tests/fixtures/wild/cold_a100_alexnet").glob("*.pt.trace.json*")))
    for i in range(160):
        data = mutate_json(rng, seed) if i % 2 else hostile.mutate(rng, seed, [seed])
        fast, ref = read_both(data)
        assert differences(fast, ref) == [], f"mutation {i}"


# -- the C function's own guards ----------------------------------------------------------------------------------


@needs_compiled
@pytest.mark.parametrize("chunk", [b"", b" ", b'{"ph": "X"},', b'{"ph": "X"} {}', b"[]", b"1",
                                   b'{"ph": "X", "ts": 1e999}', b'{"ph": "X", "pid": 1.0}', b'{"ts": "1"}',
                                   b'{"name": "a\\u0041"}', b'{"name": "\\"q\\""}', b'{"ph": "X", "ph": "X"}',
                                   b'{"a": ' + b"[" * 40 + b"]" * 40 + b"}", b'{"args": []}', b'{"args": 1}',
                                   b'{"args": {"device": 1.5}}', b'{"args": {"stream": 1, "stream": 2}}',
                                   b'{"x": "\xff"}', b'{"x": "\x01"}', b'{"x": tru}', b'{"x": 1.}', b'{"x": -}',
                                   b'{"x": 01}'])
def test_the_scanner_hands_back_what_it_does_not_read(chunk):
    """Cut-off, non-object, out-of-range, escaped, duplicated, deep, badly typed or badly encoded: None (the Python
    path decides), never a read past the buffer (the bytes end where the chunk does: a memoryview of a slice)."""
    assert _cscan.scan(memoryview(chunk + b"}}}}")[: len(chunk)]) is None


@needs_compiled
@pytest.mark.parametrize("chunk", [b"{", b'{"ph": "X"', b'{"ph": "X", "name": "a}, {', b'{"args": {"a": [1, {"b": 2}, ',
                                   b'{"ts": 1.', b'{"ts": -', b'{"name": "\\', b'{"name": "\xc3'])
def test_the_scanner_says_when_a_chunk_ends_inside_an_event(chunk):
    """Valid JSON up to the end, which falls inside an event (a cut inside a string or an object): False, so the
    reader tries its next cut without the typed decode refusing the same bytes again."""
    assert _cscan.scan(memoryview(chunk + b'"}]}}')[: len(chunk)]) is False


@needs_compiled
def test_the_scanner_reads_a_minimal_chunk():
    out = _cscan.scan(b'{"ph": "X", "ts": 1.5, "name": "k", "pid": "Spans", "args": {"stream": 7}} , {}')
    n_events, n_x, bad_dur, phs, others, ts, dur, name, cat, pid, tid, pid_s, tid_s, ints, spans = out[:15]
    assert (n_events, n_x, bad_dur, phs, others) == (2, 1, 1, [("X", 1), (None, 1)], b"")
    assert np.frombuffer(ts, np.float64).tolist() == [1.5] and np.frombuffer(dur, np.float64).tolist() == [0.0]
    assert np.frombuffer(name, np.int32).tolist() == [0] and np.frombuffer(cat, np.int32).tolist() == [0]
    assert np.frombuffer(pid_s, np.int32).tolist() == [0] and np.frombuffer(tid_s, np.int32).tolist() == [-1]
    assert np.frombuffer(pid, np.int64).tolist() == [-1] and np.frombuffer(tid, np.int64).tolist() == [-1]
    assert np.frombuffer(ints, np.int64).tolist() == [-1, -1, -1, 7, -1, -1]
    assert np.frombuffer(spans, np.int64).tolist() == [60, 13]
    assert out[15:19] == (["k"], [""], ["Spans"], [])
    assert np.frombuffer(out[19], np.int32).tolist() == [-1, -1, -1]  # no grid, no block
    out = _cscan.scan(b'{"ph": "X", "ts": 1, "args": {"grid": [2, 3, 1], "block": [32, 4, 1]}}')
    assert np.frombuffer(out[19], np.int32).tolist() == [6, 128, 1]  # 2 x 3 work-items: one partial workgroup


@needs_compiled
@pytest.mark.parametrize("prefix", ["ProfilerStep#", "void at::native::elementwise_kernel<128, 4>#", "k"])
def test_names_that_differ_only_at_their_end_are_scanned(prefix):
    """A training loop's step annotations (``ProfilerStep#88``, ``#89`` ...) differ only in their last bytes: a
    chunk holding hundreds of them must be scanned, not handed back as a table of colliding names (the interning's
    hash once left those bytes out of a slot's bits: 65 of them in a chunk sent it to the typed decode)."""
    names = [f"{prefix}{i}" for i in range(2000)]
    chunk = ",".join(f'{{"ph": "X", "name": "{n}", "ts": {i}, "dur": 1}}' for i, n in enumerate(names)).encode()
    out = _cscan.scan(chunk)
    assert out is not None
    assert out[15] == names and np.frombuffer(out[7], np.int32).tolist() == list(range(len(names)))


@needs_compiled
def test_the_scanners_times_are_correctly_rounded():
    """Times and durations of 1-19 digits, up to 18 decimals, around 2^53 (where the scanner's exact arithmetic stops
    and strtod takes over): bit for bit Python's ``float`` of the same text, as the typed decode reads them."""
    rng = random.Random(3)
    texts = []
    for _ in range(20000):
        k = rng.choice([0, 1, 2, 3, 6, 9, 12, 15, 18])
        t = str(rng.randrange(0, 1 << rng.choice([20, 40, 50, 53, 54, 60, 63])))
        t = (t[:-k] + "." + t[-k:]) if 0 < k < len(t) else ("0." + "0" * (k - len(t)) + t) if k else t
        texts.append(t if rng.random() < 0.8 else "-" + t)
    out = _cscan.scan(",".join('{"ph": "X", "ts": %s, "dur": %s}' % (t, t) for t in texts).encode())
    ref = np.array([float(t) for t in texts])
    for col in (out[5], out[6]):
        assert np.array_equal(np.frombuffer(col, np.float64).view(np.int64), ref.view(np.int64))


@needs_compiled
def test_op_keys_are_the_raw_shape_arguments_in_order():
    """Per span: each op-shape key's raw JSON (what the typed decode's ``Raw`` holds), length-prefixed in ``_OP_KEYS``
    order, 0 where absent; a row without ``args`` (offset -1) has every key absent."""
    chunk = b'{"args": {"Seq": 3, "x": {"y": [1]}, "Input Dims": [[2, 3], []] , "dtype": "f\\\\"}}'
    at = chunk.index(b'{"Seq')
    spans = np.array([[at, len(chunk) - 1 - at], [-1, 0]], np.int64)
    key, absent = _cscan.op_keys(chunk, spans)
    raw = {"Input Dims": b"[[2, 3], []]", "dtype": b'"f\\\\"', "Seq": b"3"}
    assert key == b"".join(len(raw.get(k, b"")).to_bytes(4, "little") + raw.get(k, b"") for k in parse._OP_KEYS)
    assert absent == bytes(4 * len(parse._OP_KEYS))
    assert _cscan.op_keys(chunk, np.zeros((0, 2), np.int64)) == []


@needs_compiled
@pytest.mark.parametrize("args", [b"{", b'{"Seq": 1', b'{"Seq": 1,}', b'{"Seq" 1}', b'{"Seq": 1, "Seq": 2}',
                                  b'{"Se\\/q": 1}', b'{"a": "\\u0041"}', b"[1, 2]", b'{"a": ' + b"[" * 40 + b"]" * 40 + b"}",
                                  b'{"a": "\xff"}'])
def test_op_keys_refuse_what_the_scanner_would(args):
    """A span that is no args object of the scanner's subset, or that leaves the chunk: None (the rows are then
    decoded one by one), never a read past the span or the buffer (an exact-size copy: under AddressSanitizer a read
    past it is reported)."""
    chunk = np.frombuffer(args, np.uint8).copy()
    assert _cscan.op_keys(chunk, np.array([[0, len(args)]], np.int64)) is None
    for span in ([0, len(args) + 1], [1, len(args)], [-2, 4], [0, 1]):
        assert _cscan.op_keys(chunk, np.array([span], np.int64)) is None
    with pytest.raises(ValueError):
        _cscan.op_keys(args, b"123")


# -- choosing the path ---------------------------------------------------------------------------------------------


@pytest.mark.same_on_both_paths
def test_the_environment_variable_forces_the_python_path():
    code = "from tb_gpu_advisor.formats.kineto import parse, compiled; print(parse._CSCAN is None, compiled.describe())"
    forced = _in_child(code, **{compiled.PURE_PYTHON_ENV: "1"})
    assert forced.startswith("True PyTorch JSON decoder: Python") and compiled.PURE_PYTHON_ENV in forced
    if _cscan is not None:
        assert _in_child(code).strip() == "False PyTorch JSON decoder: compiled (C)"


@pytest.mark.same_on_both_paths
def test_version_names_the_pytorch_decoder_that_runs():
    version = "from tb_gpu_advisor.cli.main import main; main(['--version'])"
    assert "PyTorch JSON decoder: Python" in _in_child(version, **{compiled.PURE_PYTHON_ENV: "1"})
    if _cscan is not None:
        assert "PyTorch JSON decoder: compiled (C)" in _in_child(version)
