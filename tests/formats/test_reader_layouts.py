"""The reader gives the same Timeline whatever the byte layout of a valid file.

Why: the reader decodes events in place in the plane's buffer, at positions
computed from upb's event lengths (``wire.locate_repeated``), which assumes
a line's events are written back to back -- as protobuf writers do.  Other
layouts are valid protobuf too (fields in any order, a repeated field
interleaved with others, non-minimal varints) and must take the fallback
(events copied out of upb's bytes) and give the identical Timeline.  Each
test below re-serializes real and synthetic captures field by field and
checks both which path ran and the result.
"""

from __future__ import annotations

import numpy as np
import pytest

from synthetic.encode import encode_varint, tag
from synthetic.scenarios import SCENARIOS
from tb_gpu_advisor.formats.xplane import reader, wire
from tb_gpu_advisor.formats.xplane.reader import parse_timeline, read_timeline
from tb_gpu_advisor.formats.xplane.schema import message_class
from tb_gpu_advisor.formats.xplane.timeline import Timeline
from tb_gpu_advisor.model.idtable import IdTable
from tests.support.paths import FIXTURES
from tests.support.reference_parse import assert_matches_reference

REAL = FIXTURES / "real" / "tf221_cpu_custom_loop.xplane.pb"


@pytest.fixture(scope="module")
def captures() -> dict[str, bytes]:
    """A real TF CPU capture, a synthetic 2-GPU one, and that one with long events.

    In "long_events" every event carries one more stat, of a metadata id no
    plane defines (so it is dropped, as the reference parse drops it),
    whose 200-byte string makes the event's length a 2-byte varint; the
    first events of each line get a 20 kB one (3-byte lengths).
    """
    synthetic = next(iter(SCENARIOS["multi_gpu_gpu0_oversubscribed"](num_steps=2).encode().values()))

    def lengthen(raw_line: bytes) -> bytes:
        head, events, tail = _split_line(raw_line)
        extra = [_len_field(4, _varint_field(1, 999_999) + _len_field(5, b"x" * (20_000 if i < 2 else 200))) for i in range(len(events))]
        return b"".join(head + _events([ev + x for ev, x in zip(events, extra)]) + tail)

    return {"real": REAL.read_bytes(), "synthetic": synthetic, "long_events": _relayout(synthetic, lengthen)}


def _signature(tl: Timeline) -> list:
    """Everything the reader produces, as plain Python values (arrays with their dtypes)."""
    out: list = [tl.hostnames, tl.errors, tl.warnings, tl.time_base_ns]
    for p in tl.planes:
        out += [p.id, p.name, p.event_names, p.event_display_names, p.stat_names, p.strings, sorted(p.stats.items(), key=str)]
        ms = p.metadata_stats
        out += [(a.dtype.str, a.tolist()) for a in (p.event_metadata_ids, ms.owner, ms.key, ms.kind, ms.value)]
        for ln in p.lines:
            out += [ln.id, ln.name, ln.display_name, ln.timestamp_ns]
            arrays = (ln.start_ps, ln.duration_ps, ln.name_id, ln.stats.owner, ln.stats.key, ln.stats.kind, ln.stats.value)
            out += [(a.dtype.str, a.tolist()) for a in arrays]
    return out


def _len_field(number: int, payload: bytes, nonminimal: bool = False) -> bytes:
    size = encode_varint(len(payload))
    if nonminimal:  # one byte more than needed: valid protobuf, unusual
        size = size[:-1] + bytes([size[-1] | 0x80, 0])
    return tag(number, 2) + size + payload


def _varint_field(number: int, value: int) -> bytes:
    return tag(number, 0) + encode_varint(value)


def _fields(raw: bytes) -> list[tuple[int, bytes, bytes]]:
    """(number, whole field bytes, payload) of each top-level field, bytes exactly as written."""
    data = memoryview(raw)
    return [(num, raw[fs:end], raw[ps:end]) for num, _, fs, ps, end in wire.walk_fields(data, 0, len(raw))]


def _split_line(raw: bytes) -> tuple[list[bytes], list[bytes], list[bytes]]:
    """A line's fields: (before its events, the events as payloads, after them)."""
    head, events, tail = [], [], []
    for num, whole, payload in _fields(raw):
        if num == 4:
            events.append(payload)
        else:
            (tail if events else head).append(whole)
    return head, events, tail


def _events(payloads: list[bytes], nonminimal: bool = False) -> list[bytes]:
    return [_len_field(4, ev, nonminimal) for ev in payloads]


def _as_written(raw: bytes) -> bytes:
    head, ev, tail = _split_line(raw)
    return b"".join(head + _events(ev) + tail)


def _events_first(raw: bytes) -> bytes:
    head, ev, tail = _split_line(raw)
    return b"".join(_events(ev) + tail + head)


def _interleaved(raw: bytes) -> bytes:
    head, ev, tail = _split_line(raw)
    return b"".join(_events(ev[:1]) + head + _events(ev[1:]) + tail)


def _nonminimal_lengths(raw: bytes) -> bytes:
    head, ev, tail = _split_line(raw)
    return b"".join(head + _events(ev, nonminimal=True) + tail)


def _many_fields_first(raw: bytes) -> bytes:
    """The line id repeated 70 times first (the last one wins): past the walk's limit."""
    head, ev, tail = _split_line(raw)
    line_id = message_class("LazyLine").FromString(raw).id
    return b"".join([_varint_field(1, line_id)] * 70 + head + _events(ev) + tail)


LINE_LAYOUTS = {  # name -> (writer, whether every line can take the in-place path)
    "as_written": (_as_written, True),
    "events_first": (_events_first, True),
    "interleaved": (_interleaved, False),  # fallback wherever a line has 2+ events
    "nonminimal_lengths": (_nonminimal_lengths, False),
    "many_fields_first": (_many_fields_first, False),
}


def _relayout(raw: bytes, write_line, plane_order: str = "as_written") -> bytes:
    """The XSpace ``raw`` written again field by field, each line by ``write_line``."""
    out = []
    for num, whole, plane in _fields(raw):
        if num != 1:
            out.append(whole)
            continue
        fields = _fields(plane)
        head = [whole for n, whole, _ in fields if n in (1, 2)]
        lines = [_len_field(3, write_line(payload)) for n, _, payload in fields if n == 3]
        meta = [whole for n, whole, _ in fields if n not in (1, 2, 3)]
        if plane_order == "lines_last":
            fields = head + meta + lines
        elif plane_order == "lines_split":  # one line, then the metadata, then the others
            fields = head + lines[:1] + meta + lines[1:]
        else:
            fields = head + lines + meta
        out.append(_len_field(1, b"".join(fields)))
    return b"".join(out)


class _PathSpy:
    """Counts lines with events decoded in place (in the plane's buffer) and by the fallback, on the pure-Python
    path (the paths it counts are the reference's; test_xplane_compiled.py holds the compiled one to it)."""

    def __init__(self, monkeypatch) -> None:
        self.in_place = self.fallback = 0
        monkeypatch.setattr(reader, "_line_events", reader._line_events_python)
        monkeypatch.setattr(reader, "_plane_fields", reader._plane_fields_python)
        real_line, real_in_place = reader._decode_line_events, reader._decode_in_place

        def in_place(*args):
            found = real_in_place(*args)
            self.in_place += found is not None
            return found

        def line(buf, start, end, lengths, *rest):
            before = self.in_place
            found = real_line(buf, start, end, lengths, *rest)
            if len(lengths) and self.in_place == before:
                self.fallback += 1
            return found

        monkeypatch.setattr(reader, "_decode_in_place", in_place)
        monkeypatch.setattr(reader, "_decode_line_events", line)


@pytest.mark.parametrize("which", ["real", "synthetic", "long_events"])
@pytest.mark.parametrize("layout", sorted(LINE_LAYOUTS))
def test_line_layouts_give_the_same_timeline(captures, which, layout, monkeypatch, tmp_path):
    raw = captures[which]
    expected = _signature(parse_timeline(raw))
    write_line, in_place = LINE_LAYOUTS[layout]
    data = _relayout(raw, write_line)
    spy = _PathSpy(monkeypatch)
    path = tmp_path / "host.xplane.pb"
    path.write_bytes(data)
    tl = read_timeline(str(path))
    assert _signature(tl) == expected
    assert assert_matches_reference(tl, str(path)) == tl.num_events > 0
    if in_place:
        assert spy.fallback == 0 and spy.in_place > 0
    else:
        assert spy.fallback > 0


@pytest.mark.parametrize("plane_order", ["lines_last", "lines_split"])
def test_lines_after_the_metadata(captures, plane_order):
    raw = captures["synthetic"]
    data = _relayout(raw, LINE_LAYOUTS["as_written"][0], plane_order)
    assert _signature(parse_timeline(data)) == _signature(parse_timeline(raw))


def test_every_fallback_at_once_gives_the_same_timeline(captures, monkeypatch):
    """Lines copied out of upb (plane fallback) and events joined (line fallback), on every line."""
    expected = {name: _signature(parse_timeline(raw)) for name, raw in captures.items()}
    monkeypatch.setattr(reader, "_line_ranges", lambda data, n: None)
    monkeypatch.setattr(wire, "locate_repeated", lambda *a: None)
    for name, raw in captures.items():
        assert _signature(parse_timeline(raw)) == expected[name]


def test_plane_walk_limit_falls_back(captures, monkeypatch):
    """A plane whose lines lie beyond the walk's limit is read through upb's line bytes."""
    monkeypatch.setattr(reader, "_MAX_PLANE_FIELDS_WALKED", 0)
    raw = captures["synthetic"]
    data = _relayout(raw, LINE_LAYOUTS["as_written"][0], "lines_last")
    assert _signature(parse_timeline(data)) == _signature(parse_timeline(raw))


def test_group_field_before_events_is_skipped_like_upb(captures):
    """An unknown field of the deprecated group wire type stops the Python walk: fallback, same result."""
    raw = captures["real"]
    group = tag(15, 3) + _varint_field(1, 7) + tag(15, 4)  # start group, a varint, end group

    def write_line(raw_line):
        return group + raw_line

    data = _relayout(raw, write_line)
    assert message_class("XSpace").FromString(data).planes  # upb accepts it
    assert _signature(parse_timeline(data)) == _signature(parse_timeline(raw))


def test_stat_value_with_the_wrong_wire_type_is_ignored_like_protobuf(tmp_path):
    """A str_value (field 5) written as a varint near the end of the buffer: protobuf
    keeps it as an unknown field; the reader must too (it once took the varint for a
    string length and read past the buffer)."""
    stat = _varint_field(1, 1) + _varint_field(5, 3000)
    event = _varint_field(1, 1) + _varint_field(3, 10) + _len_field(4, stat)
    line = _varint_field(1, 1) + _len_field(2, b"l") + _len_field(4, event)
    stat_meta = _len_field(5, _varint_field(1, 1) + _len_field(2, _varint_field(1, 1) + _len_field(2, b"s")))
    event_meta = _len_field(4, _varint_field(1, 1) + _len_field(2, _varint_field(1, 1) + _len_field(2, b"e")))
    plane = _varint_field(1, 1) + _len_field(2, b"p") + _len_field(3, line) + event_meta + stat_meta
    path = tmp_path / "h.xplane.pb"
    path.write_bytes(_len_field(1, plane))
    tl = read_timeline(str(path))
    assert assert_matches_reference(tl, str(path)) == 1
    ln = tl.planes[0].lines[0]
    assert ln.duration_ps.tolist() == [10]
    assert len(ln.stats) == 1 and ln.stats.kind.tolist() == [0]  # a stat with no (known) value


def test_event_chunks_in_place(captures, monkeypatch, tmp_path):
    """Lines longer than a decode batch: batches decoded in place equal batches of copied events."""
    path = tmp_path / "h.xplane.pb"
    path.write_bytes(captures["synthetic"])
    monkeypatch.setattr(reader, "EVENT_CHUNK", 7)
    tl = read_timeline(str(path))
    assert assert_matches_reference(tl, str(path)) == tl.num_events > 7
    monkeypatch.setattr(wire, "locate_repeated", lambda *a: None)
    assert _signature(read_timeline(str(path))) == _signature(tl)


def test_byte_bounded_batches_in_place(captures, monkeypatch, tmp_path):
    """Batches cut by bytes (an XLA capture's stat-heavy events) read every event and stat of the file (string ids
    are numbered batch by batch, so the oracle is the reference parse, not the one-batch read's ids)."""
    path = tmp_path / "h.xplane.pb"
    path.write_bytes(captures["synthetic"])
    monkeypatch.setattr(reader, "BATCH_BYTES", 64)
    tl = read_timeline(str(path))
    assert assert_matches_reference(tl, str(path)) == tl.num_events > 7
    assert len(reader._batches(np.full(tl.num_events, 30, np.int64))) > 1


@pytest.mark.parametrize("seed", range(5))
def test_batches_cover_every_event_once_within_both_bounds(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    monkeypatch.setattr(reader, "EVENT_CHUNK", int(rng.integers(1, 50)))
    monkeypatch.setattr(reader, "BATCH_BYTES", int(rng.integers(1, 400)))
    lengths = rng.integers(0, 120, int(rng.integers(0, 2000))).astype(np.int64)
    lengths[rng.random(lengths.size) < 0.05] = 1000  # events bigger than a whole batch: one to a batch
    bounds = reader._batches(lengths)
    assert [a for a, _ in bounds] == [0] + [b for _, b in bounds[:-1]] and (bounds[-1][1] if bounds else 0) == lengths.size
    for a, b in bounds:
        assert 1 <= b - a <= reader.EVENT_CHUNK
        assert b - a == 1 or int(lengths[a:b].sum()) <= reader.BATCH_BYTES
        if b < lengths.size and b - a < reader.EVENT_CHUNK:  # a batch stops early only where the next event overflows it
            assert int(lengths[a : b + 1].sum()) > reader.BATCH_BYTES


@pytest.mark.parametrize("which", ["synthetic", "long_events"])
def test_located_events_are_upbs_events(captures, which):
    """Positions computed from upb's lengths point at exactly upb's event bytes (1- to 3-byte lengths)."""
    longest = 0
    for num, _, plane in _fields(captures[which]):
        if num != 1:
            continue
        buf = wire.padded(plane)
        msg = message_class("LazyPlane").FromString(plane)
        for ln_buf, s, e in reader._line_buffers(buf, msg):
            assert ln_buf is buf
            events = list(message_class("LazyLine").FromString(plane[s:e]).events)
            lengths = np.array([len(ev) for ev in events], dtype=np.int64)
            first = reader._first_field(memoryview(buf), s, e, 4)
            starts = wire.locate_repeated(buf, first, 0x22, lengths)
            assert [bytes(buf[a : a + n]) for a, n in zip(starts.tolist(), lengths.tolist())] == events
            longest = max(longest, int(lengths.max(initial=0)))
    assert longest > (1 << 14) if which == "long_events" else longest < 128


@pytest.mark.parametrize("dense", [True, False])
def test_id_table_matches_a_dict(dense, monkeypatch):
    """Metadata id lookups (a dense array for small ids, binary search otherwise): first entry of a repeated id wins."""
    if not dense:
        monkeypatch.setattr(IdTable, "max_dense_id", staticmethod(lambda n: 0))
    rng = np.random.default_rng(5)
    ids = rng.integers(0, 50, 40)
    values = rng.integers(0, 1000, 40)
    table = IdTable(ids, values, missing=-7)
    assert (table.dense is not None) == dense
    first: dict[int, int] = {}
    for i, v in sorted(zip(ids.tolist(), values.tolist()), key=lambda iv: iv[0]):
        first.setdefault(i, v)
    query = np.array([-1, -(2**63), 2**63 - 1, 50, 51, 1 << 20] + list(range(50)), dtype=np.int64)
    assert table.lookup(query).tolist() == [first.get(q, -7) for q in query.tolist()]
    empty = IdTable(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), missing=3)
    assert empty.lookup(query).tolist() == [3] * query.size
    big = IdTable(np.array([5, 1 << 40, -3]), np.array([1, 2, 3]), missing=0)
    assert big.dense is None and big.lookup(np.array([5, 1 << 40, -3, 6])).tolist() == [1, 2, 3, 0]


def _with_empty_events(per_event: int, every: int):
    """A line writer that puts ``per_event`` empty events (``22 00``: no field set) after every ``every``-th event,
    and as many before the first and after the last."""

    def write_line(raw_line: bytes) -> bytes:
        head, ev, tail = _split_line(raw_line)
        empty = [b"\x22\x00" * per_event]
        out = list(empty)
        for i, e in enumerate(_events(ev)):
            out.append(e)
            if i % every == 0:
                out += empty
        return b"".join(head + out + empty + tail)

    return write_line


@pytest.mark.parametrize("which", ["real", "synthetic", "long_events"])
@pytest.mark.parametrize(("per_event", "every", "walked"), [(16, 1, True), (1, 50, False)])
def test_empty_events_cost_no_row_on_either_path(captures, which, per_event, every, walked, monkeypatch, tmp_path):
    """Empty events between real ones give the timeline of the file without them: no row, no stat.  A line made
    mostly of them is walked without upb (its list of event lengths would cost ~40 bytes per empty event); a few
    of them take upb's path and are dropped batch by batch before decoding."""
    raw = captures[which]
    expected = _signature(parse_timeline(raw))
    data = _relayout(raw, _with_empty_events(per_event, every))
    assert _signature(parse_timeline(data)) == expected  # the path that runs (compiled where built)
    monkeypatch.setattr(reader, "_line_events", reader._line_events_python)  # the walks counted are the reference's
    used = []
    real_walk = reader._walk_sparse_line

    def walk(*args):
        found = real_walk(*args)
        used.append(found is not None)
        return found

    monkeypatch.setattr(reader, "_walk_sparse_line", walk)
    assert _signature(parse_timeline(data)) == expected
    assert any(used) is walked
    # the empty events of many batches: every event and stat is the file's without them (string ids are
    # numbered batch by batch, so the oracle is the full parse of the file without empty events)
    monkeypatch.setattr(reader, "EVENT_CHUNK", 5)
    original = tmp_path / "original.xplane.pb"
    original.write_bytes(raw)
    assert assert_matches_reference(parse_timeline(data), str(original)) == parse_timeline(raw).num_events > 5
