"""Column-wise wire decoding and string-range interning against plain Python."""

import numpy as np
import pytest

from synthetic.encode import encode_varint  # the corpus writer: independent of the decoder
from tb_gpu_advisor.formats.xplane import wire


def test_varints_match_python_encoding_for_every_length():
    rng = np.random.default_rng(1)
    values = [0, 1, 127, 128, 2**32, 2**63 - 1, -1] + [int(x) for x in rng.integers(0, 2**62, 200)]
    raw = b"".join(encode_varint(v) for v in values)
    pos = np.cumsum([0] + [len(encode_varint(v)) for v in values[:-1]])
    got, lengths = wire.varints(wire.padded(raw), pos.astype(np.int64))
    assert got.tolist() == [v & (2**64 - 1) for v in values]
    assert lengths.tolist() == [len(encode_varint(v)) for v in values]


def test_unterminated_varint_is_a_wire_error():
    with pytest.raises(wire.WireError):
        wire.varints(wire.padded(b"\xff" * 11), np.array([0]))


def test_message_past_its_buffer_is_a_wire_error():
    raw = b"\x08\x01\x12\x05ab"  # field 2 claims 5 bytes, only 2 follow
    with pytest.raises(wire.WireError):
        wire.decode_messages(wire.padded(raw), np.array([0]), np.array([len(raw)]))


def test_intern_ranges_equal_contents_share_an_id_and_tails_are_masked():
    """Ranges equal in content get one id even when the bytes *after* them differ
    (the last 8-byte word is read past the range and must be masked)."""
    rng = np.random.default_rng(7)
    alphabet = [b"", b"a", b"ab", b"abcdefgh", b"abcdefghi", b"x" * 64, b"x" * 65, "µs/ü".encode()]
    alphabet += [bytes(rng.integers(0, 256, int(n)).astype(np.uint8)) for n in rng.integers(1, 40, 50)]
    picks = rng.integers(0, len(alphabet), 3000)
    raw, starts, lengths = bytearray(), [], []
    for i in picks:
        starts.append(len(raw))
        lengths.append(len(alphabet[i]))
        raw += alphabet[i] + bytes(rng.integers(0, 256, int(rng.integers(0, 9))).astype(np.uint8))
    table: list[str] = []
    ids = wire.intern_ranges(
        wire.padded(bytes(raw)), np.array(starts), np.array(lengths),
        lambda s: table.append(s) or len(table) - 1,
    )
    got = [table[i] for i in ids]
    assert got == [alphabet[i].decode("utf-8", "replace") for i in picks]
    assert len(table) == len({alphabet[i] for i in picks})  # each distinct content decoded once
