"""The compiled XPlane decoder reads every file as the pure-Python reference does (issue #38 items 1, 5, 6).

Why: the C decoder (``formats/xplane/_cwire.c``) replaces the reference on the hot path, so every column it
gives -- values, dtypes, string ids, stat order -- and every error must be the reference's, on real captures,
on layouts TensorFlow never writes, and on hostile bytes.  Both decoders run in this process
(``tests/support/xplane_paths.py`` swaps the reader's one switch); the suite itself runs on the compiled path
wherever the extension is built, and ``make test`` runs this file and the goldens again with
``TB_GPU_ADVISOR_PURE_PYTHON=1``.
"""

from __future__ import annotations

import gzip
import io
import os
import random
import threading

import numpy as np
import pytest

from synthetic import encode as enc
from synthetic import hostile
from tb_gpu_advisor.formats.xplane import compiled, reader
from tb_gpu_advisor.formats.xplane.adapter import USED_STATS
from tb_gpu_advisor.formats.xplane.schema import message_class
from tests.support.compiled import built, check_built_where_required, needs
from tests.support.compiled import in_child as _in_child
from tests.support.paths import DEMO_LOGS, REPO, SHARED_PROFILES, TESTS
from tests.support.xplane_paths import differences, read_both, read_with

_cwire = built("tb_gpu_advisor.formats.xplane._cwire")
needs_compiled = needs(_cwire, "XPlane decoder")


def test_the_compiled_decoder_is_built_where_required():
    """CI (``.ci/run`` sets TB_GPU_ADVISOR_REQUIRE_COMPILED) must test the compiled path, never skip it."""
    check_built_where_required(_cwire, compiled, reader._CWIRE)


def _captures() -> list[str]:
    roots = [TESTS, DEMO_LOGS] + ([SHARED_PROFILES] if SHARED_PROFILES.is_dir() else [])
    return sorted(str(p) for root in roots for p in root.rglob("*.xplane.pb"))


@needs_compiled
@pytest.mark.parametrize("path", _captures(), ids=lambda p: os.path.relpath(p, REPO.parent))
def test_both_decoders_read_every_capture_alike(path):
    """Every XPlane file of tests/, demo_logs/ and ../shared/profiles: identical columns, all stats and pruned."""
    for keep in (None, USED_STATS):
        fast, ref = read_both(path, keep)
        assert not isinstance(ref, Exception) or isinstance(fast, Exception)
        assert differences(fast, ref) == []


@needs_compiled
def test_the_compiled_path_really_decodes(monkeypatch):
    """Equality proves nothing if the C walk declined every line: on a real capture no line falls back."""
    path = str(TESTS / "fixtures" / "real" / "tf221_cpu_custom_loop.xplane.pb")

    def refuse(*a, **k):
        raise AssertionError("a well-formed line fell back to the Python decoder")

    monkeypatch.setattr(reader, "_line_events_python", refuse)
    monkeypatch.setattr(reader, "_plane_fields_python", refuse)
    monkeypatch.setattr(reader, "_decode_events", refuse)
    tl = read_with(True, path)
    assert not isinstance(tl, Exception), tl
    assert tl.num_events == 2256


# -- layouts TensorFlow does not write, built by hand ------------------------------------------------------------


def _varint_field(number: int, value: int) -> bytes:
    return enc.tag(number, 0) + enc.encode_varint(value)


def _stat(metadata_id: int, *values: bytes) -> bytes:
    return _varint_field(1, metadata_id) + b"".join(values)


def _event(*fields: bytes) -> bytes:
    return b"".join(fields)


def _space(lines: list[bytes]) -> bytes:
    """One GPU plane holding ``lines`` (serialized XLine bodies), with event and stat metadata."""
    XPlane = message_class("XPlane")
    p = XPlane(id=1, name="/device:GPU:0")
    for entries, names in ((p.event_metadata, ("k0", "k1", "k2")),
                           (p.stat_metadata, ("tf_op", "correlation_id", "kernel_details", "extra"))):
        for i, name in enumerate(names, start=1):
            e = entries.add()
            e.key = e.value.id = i
            e.value.name = name
    body = p.SerializeToString() + b"".join(hostile.field(3, ln) for ln in lines)
    return hostile.field(1, body)


def _line(events: list[bytes], head: bytes = b"", tail: bytes = b"", between: bytes | None = None) -> bytes:
    head = head or (_varint_field(1, 7) + hostile.field(2, b"stream") + _varint_field(3, 1000))
    parts = [hostile.field(4, e) for e in events]
    if between is not None:
        parts.insert(len(parts) // 2, between)
    return head + b"".join(parts) + tail


def _str(s: bytes) -> bytes:
    return hostile.field(5, s)


def _events(n: int, rng: random.Random) -> list[bytes]:
    """Events with 0-4 stats each, in varying field orders, some values written twice, some strings long."""
    out = []
    for i in range(n):
        stats = []
        for _ in range(rng.randrange(5)):
            kind = rng.randrange(6)
            if kind == 0:
                v = _str(f"op{rng.randrange(50)}-{i // 500}".encode())  # new names as the line goes: ids follow batches
            elif kind == 1:
                v = _varint_field(4, rng.randrange(1 << 40))
            elif kind == 2:
                v = enc.tag(2, 1) + np.float64(rng.random()).tobytes()
            elif kind == 3:
                v = _varint_field(7, rng.randrange(1, 6))  # a ref, one dangling
            elif kind == 4:
                v = _str(b"a") + _str(f"twice{rng.randrange(3)}".encode())  # the last one wins, both interned
            else:
                v = hostile.field(6, b"\x00\xff" * rng.randrange(4)) + _varint_field(3, 5)
            stats.append(hostile.field(4, _stat(rng.randrange(0, 6), v)))
        fields = [_varint_field(1, rng.randrange(0, 5)), _varint_field(2, 10 * i), _varint_field(3, 5)] + stats
        if rng.random() < 0.2:
            rng.shuffle(fields)  # stats before the times: other rounds in the reference's column decode
        out.append(_event(*fields))
    return out


def _small_events(n: int) -> list[bytes]:
    """``n`` small events, every tenth empty, every 40th with a name of its own: more events than a batch holds
    (``reader.EVENT_CHUNK``) in few bytes, so where batches are cut decides string ids; too few empty events for
    the reader's sparse-line path."""
    out = []
    for i in range(n):
        if i % 10 == 0:
            out.append(b"")
        elif i % 40 == 1:
            out.append(_event(_varint_field(1, 1), hostile.field(4, _stat(1, _str(f"name{i}".encode())))))
        else:
            out.append(_varint_field(1, 2) + _varint_field(2, 10**9) + _varint_field(3, 10**5))
    return out


LAYOUTS = {
    "plain": lambda rng: [_line(_events(300, rng))],
    "fields between the events": lambda rng: [_line(_events(300, rng), between=_varint_field(9, 4))],
    "a field after the events": lambda rng: [_line(_events(50, rng), tail=hostile.field(11, b"late name"))],
    "empty events mixed in": lambda rng: [_line([e if i % 3 else b"" for i, e in enumerate(_events(300, rng))])],
    "mostly empty events": lambda rng: [_line([b""] * 5000 + _events(20, rng) + [b""] * 3000)],
    "a non-minimal event length": lambda rng: [_line(_events(5, rng)) + b"\x22\x82\x00" + _varint_field(1, 1)],
    "an event tag written in two bytes": lambda rng: [_line(_events(5, rng)) + b"\xa2\x00\x02\x08\x01"],
    # a string over 64 KiB is keyed by its first occurrence: x (first at 0, last at 2) before y (at 1)
    "strings over 64 KiB": lambda rng: [_line([
        _event(_varint_field(1, 1), hostile.field(4, _stat(1, _str(c * 70000)))) for c in (b"x", b"y", b"x")] + [
        _event(_varint_field(1, 1), hostile.field(4, _stat(1, _str(b"z" * 70000), _str(b"w" * 70000))))])],
    # batches are cut over every event in place, over the non-empty ones otherwise: string ids follow the batches
    "many small events, empty ones": lambda rng: [_line(_small_events(100_000))],
    "many small events, empty ones, a field between": lambda rng: [
        _line(_small_events(100_000), between=_varint_field(9, 4))],
    "an unknown varint field in events": lambda rng: [_line([e + _varint_field(5, 3) for e in _events(40, rng)])],
    "a field number past 2**29": lambda rng: [_line(_events(5, rng)) + enc.encode_varint((1 << 29) << 3) + b"\x00"],
    "no events": lambda rng: [_line([])],
}


@needs_compiled
@pytest.mark.parametrize("name", list(LAYOUTS))
def test_both_decoders_read_unusual_layouts_alike(name):
    """Interleaved fields, empty events, non-minimal headers, long strings, repeated values: the same columns
    (the C walk decodes some of these itself and hands the others back; either way the result is the reference's)."""
    data = _space(LAYOUTS[name](random.Random(38)))
    for keep in (None, frozenset({"tf_op", "extra"})):
        fast, ref = read_both(data, keep)
        assert differences(fast, ref) == []


@needs_compiled
@pytest.mark.parametrize("name", list(hostile.KINDS))
def test_both_decoders_meet_hostile_files_alike(name):
    """The hand-made bad files of the robustness corpus: the same Timeline or the same error, word for word."""
    fast, ref = read_both(hostile.KINDS[name](), USED_STATS)
    assert differences(fast, ref) == []


@needs_compiled
@pytest.mark.parametrize("name", ["plane_error_order", "event_error_order"])
def test_errors_are_the_references_word_for_word(name):
    """Two fuzzed files whose error message once differed (tests/fixtures/xplane_fuzz/SOURCE.md): a fault met in
    another order when upb parsed only a plane's other fields, and a declined batch decoded apart from its line."""
    data = gzip.decompress((TESTS / "fixtures" / "xplane_fuzz" / f"{name}.xplane.pb.gz").read_bytes())
    for keep in (None, USED_STATS):
        fast, ref = read_both(data, keep)
        assert isinstance(ref, reader.ProfileReadError)
        assert differences(fast, ref) == []


@needs_compiled
def test_both_decoders_meet_mutated_captures_alike():
    """A fixed sample of the robustness fuzzer's mutations (``scripts/xplane_fuzz_equal.py`` runs many more)."""
    rng = random.Random(3800)
    seed = hostile.seed_capture()
    for i in range(120):
        data = hostile.mutate_structured(rng, seed) if i % 2 else hostile.mutate(rng, seed, [seed])
        fast, ref = read_both(data, USED_STATS)
        assert differences(fast, ref) == [], f"mutation {i}"


# -- both cores -----------------------------------------------------------------------------------------------------


class _Recording:
    """The compiled module, recording the thread of each call of its event decoders."""

    def __init__(self, module) -> None:
        self.module, self.threads = module, []

    def __getattr__(self, name):
        fn = getattr(self.module, name)
        if name not in ("decode_events", "decode_span"):
            return fn

        def call(*args):
            self.threads.append(threading.get_ident())
            return fn(*args)
        return call


@needs_compiled
def test_the_c_walk_runs_on_a_second_core_with_the_same_columns(monkeypatch):
    """Lines of many batches, a line the C walk declines, strings numbered batch by batch: with the walk run ahead
    on another thread, the columns are those of one thread and of the pure-Python reference."""
    from tb_gpu_advisor.common import ahead
    from tb_gpu_advisor.formats.xplane import _cwire as module

    rng = random.Random(3801)
    late_decline = _small_events(100_000)
    late_decline[90_001] += b"\xc8\x80\x80\x80\x80\x00\x01"  # a 6-byte tag: the C walk declines the 2nd batch
    data = _space([_line(_small_events(100_000)), _line(_events(300, rng)), _line(late_decline),
                   _line([b""] * 5000 + _events(20, rng) + [b""] * 3000),  # declined before any batch: Python's
                   _line(_small_events(70_000), between=_varint_field(9, 4)), _line([])])
    ref = read_with(False, data)
    recording = _Recording(module)
    monkeypatch.setattr(ahead, "cores", lambda: 2)
    monkeypatch.setattr(reader, "_CWIRE", recording)
    monkeypatch.setattr(reader, "_release_scratch", module.release_scratch)
    monkeypatch.setattr(reader, "_plane_fields", reader._plane_fields_compiled)
    monkeypatch.setattr(reader, "_line_events", reader._line_events_compiled)
    results = {}
    for walk_ahead in (0, 2):
        monkeypatch.setattr(reader, "WALK_AHEAD", walk_ahead)
        recording.threads.clear()
        results[walk_ahead] = reader._parse(io.BytesIO(data), len(data), "<bytes>", None)
        here = {t == threading.get_ident() for t in recording.threads}
        assert here == ({True} if walk_ahead == 0 else {False}), walk_ahead
    assert differences(results[2], results[0]) == []
    assert differences(results[2], ref) == []
    assert results[2].num_events > 150_000


@needs_compiled
@pytest.mark.parametrize("path", [c for c in _captures() if "fixtures/real/" in c or "v100" in c][:4],
                         ids=lambda p: os.path.basename(p))
def test_planes_read_ahead_give_the_same_columns(monkeypatch, path):
    """Every plane read on a thread while the one before it is decoded (the floor and share lowered so that the
    small real captures here read ahead too): the reference's columns."""
    from tb_gpu_advisor.common import ahead
    from tb_gpu_advisor.formats.xplane import wire

    started = []
    real = wire._Reading.__init__

    def counted(self, stream, length):
        started.append(length)
        real(self, stream, length)

    monkeypatch.setattr(ahead, "cores", lambda: 2)
    monkeypatch.setattr(wire, "AHEAD_MIN_BYTES", 1)
    monkeypatch.setattr(reader, "_READ_AHEAD_SHARE", 1)
    monkeypatch.setattr(wire._Reading, "__init__", counted)
    fast, ref = read_both(path, USED_STATS)
    assert started and differences(fast, ref) == []


# -- the C functions' own guards ----------------------------------------------------------------------------------


@needs_compiled
def test_the_c_decoder_refuses_ranges_outside_its_buffer():
    """Out-of-range positions never make the C read outside the buffer: None (the Python path decides) or ValueError."""
    buf = np.zeros(64 + 16, dtype=np.uint8)
    buf[:4] = (0x08, 0x01, 0x10, 0x02)
    one = np.ones(1, dtype=np.int64)
    assert _cwire.decode_events(buf, 64, one * 60, one * 10) is None  # past the limit
    assert _cwire.decode_events(buf, 64, one * -1, one) is None
    assert _cwire.decode_events(buf, 64, one * 0, one * -5) is None
    assert _cwire.decode_events(buf, 64, one * 0, one * 3) is None  # the second field cut in half
    out = _cwire.decode_events(buf, 64, one * 0, one * 4)
    assert np.frombuffer(out[0], np.int64).tolist() == [1] and np.frombuffer(out[1], np.int64).tolist() == [2]
    with pytest.raises(ValueError):
        _cwire.decode_events(buf, 1 << 20, one, one)  # a limit past the buffer
    with pytest.raises(ValueError):
        _cwire.split_repeated(buf, 64, 0, 65, 4)
    assert _cwire.split_repeated(buf, 64, 0, 3, 4) is None  # a field cut in half
    buf[:12] = 0xFF  # an 11-byte varint
    assert _cwire.split_repeated(buf, 64, 0, 12, 4) is None


@needs_compiled
def test_the_line_split_and_span_decode_refuse_what_is_outside_their_buffer():
    """``split_line`` and ``decode_span`` (the reader's C walk of a line): the same guards as the functions above,
    and the line's output columns are never written past their end."""
    buf = np.zeros(64 + 16, dtype=np.uint8)
    event = bytes((0x08, 0x01, 0x10, 0x02))
    buf[:12] = np.frombuffer(bytes((0x08, 0x07, 0x22, 4)) + event + bytes((0x22, 0x00, 0x22, 0x00)), np.uint8)
    head, spans = _cwire.split_line(buf, 64, 0, 12, 1 << 16, 1 << 20)
    assert head == bytes((0x08, 0x07)) and np.frombuffer(spans, np.int64).tolist() == [2, 12, 1]
    offset, duration = np.full(3, -1, np.int64), np.full(3, -1, np.int64)
    out = _cwire.decode_span(buf, 64, 2, 12, offset, duration, 1)
    assert np.frombuffer(out[0], np.int64).tolist() == [1] and out[1] is None and out[2] is None
    assert offset.tolist() == [-1, 2, -1] and duration.tolist() == [-1, 0, -1]
    assert _cwire.split_line(buf, 64, 0, 11, 1 << 16, 1 << 20) is None  # the last event cut in half
    assert _cwire.decode_span(buf, 64, 2, 7, offset, duration, 0) is None  # an event cut in half
    for bad in ((0, 65), (-1, 12), (5, 4)):
        with pytest.raises(ValueError):
            _cwire.split_line(buf, 64, *bad, 1 << 16, 1 << 20)
        with pytest.raises(ValueError):
            _cwire.decode_span(buf, 64, *bad, offset, duration, 0)
    with pytest.raises(ValueError):
        _cwire.decode_span(buf, 1 << 20, 0, 4, offset, duration, 0)  # a limit past the buffer
    for at in (3, 4, -1):  # no room for the event, or outside the columns
        with pytest.raises(ValueError):
            _cwire.decode_span(buf, 64, 2, 12, offset, duration, at)
    with pytest.raises(ValueError):
        _cwire.decode_span(buf, 64, 2, 12, offset, duration[:2], 0)  # columns of two sizes
    with pytest.raises(ValueError):
        _cwire.split_line(buf, 64, 0, 12, 0, 1 << 20)  # a batch of no event


@needs_compiled
def test_the_span_decode_drops_the_stats_its_key_table_prunes():
    """With the reader's key table, ``decode_span`` keeps a stat whose metadata id has a key (and gives the key),
    and drops one the table prunes, or whose id is past the table or negative (its last, "other" slot), with
    its values; without it, every stat and its metadata id."""
    stats = [_stat(1, _varint_field(3, 7)), _stat(2, _varint_field(3, 8)), _stat(9, _varint_field(3, 9)),
             _stat((1 << 64) - 1, _varint_field(3, 10))]  # ids 1 (kept: key 0), 2 (pruned), 9 and -1 (other)
    line = b"".join(hostile.field(4, _varint_field(1, 1) + hostile.field(4, st)) for st in stats)
    buf = np.zeros(len(line) + 16, dtype=np.uint8)
    buf[: len(line)] = np.frombuffer(line, np.uint8)
    table = np.array([-1, 0, -1, -1], dtype=np.int64)  # ids 0..2; slot 3 answers every other id
    _, spans = _cwire.split_line(buf, len(line), 0, len(line), 1 << 16, 1 << 20)
    a, b, n = np.frombuffer(spans, np.int64).tolist()
    columns = np.zeros(n, np.int64), np.zeros(n, np.int64)
    kept = _cwire.decode_span(buf, len(line), a, b, *columns, 0, table)
    assert np.frombuffer(kept[3], np.int32).tolist() == [0] and np.frombuffer(kept[4], np.int64).tolist() == [0]
    assert np.frombuffer(kept[6], np.uint64).tolist() == [7]
    every = _cwire.decode_span(buf, len(line), a, b, *columns, 0)
    assert np.frombuffer(every[3], np.int32).tolist() == [0, 1, 2, 3]
    assert np.frombuffer(every[4], np.int64).tolist() == [1, 2, 9, -1]
    with pytest.raises(ValueError):
        _cwire.decode_span(buf, len(line), a, b, *columns, 0, np.zeros(0, np.int64))  # no "other" slot


@needs_compiled
def test_the_c_count_of_empty_event_pairs_is_numpys():
    """``empty_event_pairs`` (which decides whether a line is walked as mostly empty events) counts what the
    reference's numpy count does, over ranges cut anywhere, runs of pairs, overlaps (``22 00 22 00``, ``22 22 00``)."""
    rng = np.random.default_rng(3802)
    buf = rng.choice(np.array([0x22, 0x00, 0x08, 0x22], dtype=np.uint8), size=20_000 + 16)
    buf[5000:9000] = np.tile(np.array([0x22, 0x00], dtype=np.uint8), 2000)
    limit = buf.shape[0] - 16
    for _ in range(500):
        start = int(rng.integers(0, limit))
        end = int(rng.integers(start, limit + 1))
        block = buf[start:end]
        expected = int(np.count_nonzero((block[:-1] == 0x22) & (block[1:] == 0))) if end > start else 0
        assert _cwire.empty_event_pairs(buf, limit, start, end) == expected
    for bad in ((0, limit + 1), (-1, 5), (6, 5)):
        with pytest.raises(ValueError):
            _cwire.empty_event_pairs(buf, limit, *bad)


# -- choosing the path ---------------------------------------------------------------------------------------------


@pytest.mark.same_on_both_paths
def test_the_environment_variable_forces_the_pure_python_path():
    code = "from tb_gpu_advisor.formats.xplane import reader, compiled; print(reader._CWIRE is None, compiled.describe())"
    forced = _in_child(code, **{compiled.PURE_PYTHON_ENV: "1"})
    assert forced.startswith("True XPlane decoder: pure Python") and compiled.PURE_PYTHON_ENV in forced
    if _cwire is not None:
        assert _in_child(code).strip().startswith("False XPlane decoder: compiled (C), metadata by ")
        assert _in_child(code, **{compiled.PURE_PYTHON_ENV: "0"}).startswith("False")


@pytest.mark.same_on_both_paths
def test_version_names_the_decoder_that_runs():
    out = _in_child("from tb_gpu_advisor.cli.main import main; main(['--version'])", **{compiled.PURE_PYTHON_ENV: "1"})
    assert out.startswith("tb-gpu-advisor ") and "XPlane decoder: pure Python" in out
    if _cwire is not None:
        assert "XPlane decoder: compiled (C)" in _in_child("from tb_gpu_advisor.cli.main import main; main(['--version'])")
