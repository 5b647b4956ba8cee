"""The column-wise decoder's fast paths against a plain sequential Python decoder.

Why: ``wire.decode_messages`` special-cases rounds with one tag, one-byte
varints, compacts its state only when a message ends, and groups mixed
rounds by tag; ``wire.locate_repeated`` finds events in place from their
lengths; ``wire.intern_ranges`` groups strings by a cheap hash checked
byte for byte.  Random messages (any field order, repeated fields, every
varint size, two-byte and non-minimal tags) must decode exactly as a
one-field-at-a-time walk does.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from synthetic.encode import encode_varint
from tb_gpu_advisor.formats import protowire
from tb_gpu_advisor.formats.xplane import wire


def _tag(number: int, wire_type: int, nonminimal: bool = False) -> bytes:
    t = encode_varint(number << 3 | wire_type)
    return t[:-1] + bytes([t[-1] | 0x80, 0]) if nonminimal else t


def _random_message(rng: np.random.Generator) -> bytes:
    out = b""
    for _ in range(int(rng.integers(0, 7))):
        number = int(rng.choice([1, 2, 3, 4, 5, 15, 16, 300]))
        wt = int(rng.choice([0, 0, 0, 1, 2, 2, 5]))
        out += _tag(number, wt, nonminimal=rng.random() < 0.05)
        if wt == 0:
            out += encode_varint(int(rng.integers(0, 2**63)) >> int(rng.integers(0, 63)) if rng.random() < 0.9 else -1)
        elif wt == 1:
            out += rng.bytes(8)
        elif wt == 5:
            out += rng.bytes(4)
        else:
            body = rng.bytes(int(rng.choice([0, 3, 200])))
            out += encode_varint(len(body)) + body
    return out


def _python_decode(raw: bytes, starts: list[int], ends: list[int]) -> dict:
    """(number, wire type) -> [(rank, message, value, start)] by a plain walk."""
    out: dict = {}
    data = memoryview(raw)
    for m, (s, e) in enumerate(zip(starts, ends)):
        for rank, (num, wt, _, ps, pe) in enumerate(wire.walk_fields(data, s, e)):
            if wt == 0:
                value, start = protowire.read_varint(data, ps, pe)[0] & (2**64 - 1), None
            elif wt == 2:
                value, start = pe - ps, ps
            else:
                value, start = int.from_bytes(raw[ps:pe], "little"), None
            out.setdefault((num, wt), []).append((rank, m, value, start))
    return {k: sorted(v, key=lambda r: r[:2]) for k, v in out.items()}


@pytest.mark.parametrize("seed", range(6))
def test_decode_messages_equals_a_sequential_walk(seed):
    rng = np.random.default_rng(seed)
    messages = [_random_message(rng) for _ in range(int(rng.integers(1, 400)))]
    if seed % 2:  # the common shape: every message the same field order
        messages = [_tag(1, 0) + encode_varint(i % 300) + _tag(2, 0) + encode_varint(i**3) for i in range(300)] + messages[:3]
    raw = b"".join(messages)
    ends = np.cumsum([len(m) for m in messages])
    starts = ends - [len(m) for m in messages]
    got = wire.decode_messages(wire.padded(raw), starts, ends)
    expected = _python_decode(raw, starts.tolist(), ends.tolist())
    for (number, wt), records in expected.items():
        sel = got.select(number, wt)
        assert sel.msg.tolist() == [r[1] for r in records]
        assert sel.value.dtype == np.uint64 and sel.value.tolist() == [r[2] for r in records]
        if wt == 2:
            assert sel.start.tolist() == [r[3] for r in records]
    assert got.select(7, 0).msg.size == 0


@pytest.mark.parametrize(
    "raw",
    [
        b"\x08",  # varint missing
        b"\x0b\x01",  # wire type 3 (start group)
        b"\x00\x01",  # field number 0
        b"\x12\x05ab",  # length past the message
        b"\x08" + b"\xff" * 11,  # varint over 10 bytes
        b"\x08\x01\x82\x01\x01",  # field 16 (two-byte tag) of wire type 2 with its length past the end
    ],
)
def test_malformed_messages_are_wire_errors(raw):
    with pytest.raises(wire.WireError):
        wire.decode_messages(wire.padded(raw), np.array([0, 0]), np.array([len(raw), len(raw)]))


def test_public_varints_are_uint64_with_int64_lengths_even_when_one_byte():
    values, lengths = wire.varints(wire.padded(b"\x01\x02\x7f"), np.array([0, 1, 2]))
    assert values.dtype == np.uint64 and lengths.dtype == np.int64
    assert values.tolist() == [1, 2, 127] and lengths.tolist() == [1, 1, 1]


def _records(lengths: list[int], nonminimal_at: int = -1) -> tuple[bytes, list[int]]:
    raw, payloads = b"\x08\x07", []  # a varint field first, as XLine.id
    for i, n in enumerate(lengths):
        size = encode_varint(n)
        if i == nonminimal_at:
            size = size[:-1] + bytes([size[-1] | 0x80, 0])
        raw += b"\x22" + size
        payloads.append(len(raw))
        raw += bytes([i % 251]) * n
    return raw, payloads


def test_locate_repeated_finds_records_of_every_length_size():
    lengths = [0, 5, 127, 128, 300, 16383, 16384, 70000, 1]
    raw, payloads = _records(lengths)
    got = wire.locate_repeated(wire.padded(raw), 2, 0x22, np.array(lengths))
    assert got.tolist() == payloads
    one_byte = [3, 0, 127, 9]
    raw, payloads = _records(one_byte)
    assert wire.locate_repeated(wire.padded(raw), 2, 0x22, np.array(one_byte)).tolist() == payloads


@pytest.mark.parametrize("lengths", [[5, 6, 7], [5, 300, 7]])
def test_locate_repeated_refuses_what_is_not_back_to_back(lengths):
    n = np.array(lengths)
    raw, _ = _records(lengths)
    assert wire.locate_repeated(wire.padded(raw), 2, 0x22, n + np.array([0, 1, 0])) is None  # a length differs
    assert wire.locate_repeated(wire.padded(raw), 2, 0x2A, n) is None  # another tag
    raw_nm, _ = _records(lengths, nonminimal_at=1)
    assert wire.locate_repeated(wire.padded(raw_nm), 2, 0x22, n) is None  # a 2-byte "1-byte" length
    interleaved = raw[:2 + 2 + lengths[0]] + b"\x08\x01" + raw[2 + 2 + lengths[0] :]
    assert wire.locate_repeated(wire.padded(interleaved), 2, 0x22, n) is None
    assert wire.locate_repeated(wire.padded(raw[:-1]), 2, 0x22, n) is None  # past the end
    assert wire.locate_repeated(wire.padded(raw), 2, 0x22, np.zeros(0, dtype=np.int64)).size == 0


def test_walk_fields_and_read_padded():
    raw = b"\x08\x96\x01\x12\x02hi\x1d\x00\x00\x80\x3f\x21" + bytes(8)
    fields = list(wire.walk_fields(memoryview(raw), 0, len(raw)))
    assert [(n, wt) for n, wt, *_ in fields] == [(1, 0), (2, 2), (3, 5), (4, 1)]
    assert fields[1][2:] == (3, 5, 7)
    with pytest.raises(wire.WireError):
        list(wire.walk_fields(memoryview(raw), 0, 6))  # the string cut short
    buf = wire.read_padded(io.BytesIO(raw), 5)
    assert bytes(buf[:5]) == raw[:5] and not buf[5:].any() and buf.shape[0] == 5 + wire.PAD
    with pytest.raises(wire.WireError):
        wire.read_padded(io.BytesIO(raw), len(raw) + 1)


def _intern_calls(buf, starts, lengths) -> tuple[list[int], list[str]]:
    table: list[str] = []
    index: dict[str, int] = {}

    def intern(s: str) -> int:
        if s not in index:
            index[s] = len(table)
            table.append(s)
        return index[s]

    ids = wire.intern_ranges(buf, np.asarray(starts, dtype=np.int64), np.asarray(lengths, dtype=np.int64), intern)
    return ids.tolist(), table


def _strings(rng: np.random.Generator) -> tuple[np.ndarray, list[int], list[int], list[bytes]]:
    """Ranges over strings of every interesting size, followed by random bytes."""
    base = b"replica_0/model/dense_0/MatMul:MatMul"
    alphabet = [b"", b"a", base, base.replace(b"0", b"1"), base[:-1] + b"X", b"y" * 520, b"z" * 70_000, b"z" * 69_999 + b"q"]
    alphabet += [bytes(rng.integers(0, 256, int(n)).astype(np.uint8)) for n in rng.integers(1, 90, 40)]
    raw, starts, lengths, picked = bytearray(), [], [], []
    for i in rng.integers(0, len(alphabet), 2000):
        starts.append(len(raw))
        lengths.append(len(alphabet[i]))
        picked.append(alphabet[i])
        raw += alphabet[i] + rng.bytes(int(rng.integers(0, 9)))
    return wire.padded(bytes(raw)), starts, lengths, picked


def test_intern_order_is_the_content_key_order():
    """Distinct strings are interned in the order of their 128-bit range_keys (ids as before)."""
    buf, starts, lengths, picked = _strings(np.random.default_rng(3))
    ids, table = _intern_calls(buf, starts, lengths)
    assert [table[i] for i in ids] == [p.decode("utf-8", "replace") for p in picked]
    keys = wire.range_keys(buf, np.array(starts), np.array(lengths))
    first: dict[bytes, int] = {}
    for i, p in enumerate(picked):
        first.setdefault(p, i)
    order = sorted(first, key=lambda p: (int(keys["h1"][first[p]]), int(keys["h2"][first[p]]), int(keys["n"][first[p]])))
    assert table == [p.decode("utf-8", "replace") for p in order]


def test_hash_collisions_never_merge_strings(monkeypatch):
    """With a hash that maps every row of a bucket to one value, byte comparison still separates strings."""
    buf, starts, lengths, picked = _strings(np.random.default_rng(4))
    expected = _intern_calls(buf, starts, lengths)
    monkeypatch.setattr(wire, "_ROW_HASH_MUL", np.uint64(0))
    ids, table = _intern_calls(buf, starts, lengths)
    assert (ids, table) == expected
    # and both are right, by the strings as written (not only equal to each other)
    assert [table[i] for i in ids] == [p.decode("utf-8", "replace") for p in picked]
    assert len(table) == len(set(picked))


def _top_level(data: bytes, ahead_bytes: int) -> list:
    """What ``stream_top_level_fields`` gives for ``data``: each (number, payload as bytes), then the error."""
    out: list = []
    try:
        for number, value in wire.stream_top_level_fields(io.BytesIO(data), len(data), frozenset({1}), ahead_bytes):
            out.append((number, bytes(value[: value.shape[0] - wire.PAD]) if isinstance(value, np.ndarray) else value))
    except wire.WireError as e:
        out.append(str(e))
    return out


def test_reading_ahead_gives_the_same_fields_and_errors_at_the_same_field(monkeypatch):
    """Buffered payloads read on a thread while the caller works on the field before (issue #38, both cores):
    the same fields in the same order, and a file cut anywhere -- in a header, in a payload read ahead -- fails
    at the same field with the same words as reading one field at a time."""
    monkeypatch.setattr(wire, "AHEAD_MIN_BYTES", 16)
    started = []
    real = wire._Reading.__init__

    def counted(self, stream, length):
        started.append(length)
        real(self, stream, length)

    monkeypatch.setattr(wire._Reading, "__init__", counted)
    rng = np.random.default_rng(38)
    body = b"".join(
        _tag(1, 2) + encode_varint(n) + rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in (40, 300, 20, 700)
    ) + _tag(4, 2) + b"\x03abc" + _tag(2, 0) + b"\x96\x01" + _tag(3, 5) + bytes(4) + _tag(1, 2) + b"\x20" + bytes(32)
    whole = _top_level(body, 0)
    assert [n for n, _ in whole] == [1, 1, 1, 1, 4, 2, 1]
    assert _top_level(body, 10_000) == whole
    assert started == [300, 20, 700, 32]  # each plane after the first, from AHEAD_MIN_BYTES up
    started.clear()
    assert _top_level(body, 400) == whole and started == [300, 20, 32]  # none over ahead_bytes
    for cut in range(1, len(body), 7):
        assert _top_level(body[:cut], 10_000) == _top_level(body[:cut], 0), cut


def test_a_payload_that_does_not_fit_twice_is_read_when_asked(monkeypatch):
    """Where no room is left for a second payload (a worker's memory limit), the read ahead gives up before it
    reads anything and the payload is read when the caller reaches it: the same fields, no MemoryError."""
    monkeypatch.setattr(wire, "AHEAD_MIN_BYTES", 16)
    real_empty = np.empty

    def refuse_big(shape, *a, **k):
        if isinstance(shape, int) and shape > 200:
            raise MemoryError("no room")
        return real_empty(shape, *a, **k)

    body = b"".join(_tag(1, 2) + encode_varint(n) + bytes([n % 251]) * n for n in (40, 300, 60))
    whole = _top_level(body, 0)
    monkeypatch.setattr(wire.np, "empty", refuse_big)
    with pytest.raises(MemoryError):
        _top_level(body, 0)  # the read itself: no room for the 300 bytes
    monkeypatch.setattr(wire, "read_padded", lambda stream, n: wire._fill(stream, real_empty(n + wire.PAD, np.uint8), n))
    assert _top_level(body, 10_000) == whole


def test_the_hash_seeds_are_splitmix64():
    """The seeds come from splitmix64 (not numpy.random, whose import every report paid): its published first outputs
    from seed 0, and the seeds' shapes the hashes index."""
    assert wire._splitmix64(0, 3).tolist() == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    assert wire._hash_seeds().shape == (2, wire._MAX_HASHED_WORDS)
    assert wire._ROW_HASH_COLUMN.shape == (wire._MAX_ROW_WORDS,) and wire._ROW_HASH_COLUMN.dtype == np.uint64
    assert len(set(wire._hash_seeds().ravel().tolist())) == 2 * wire._MAX_HASHED_WORDS  # no two seeds alike
