"""Protocol buffers' wire format, walked field by field in plain Python: the few fields around XPlane's big repeated
ones (``xplane.wire``'s vectorised decoders read those), and the head of a Perfetto trace (``heads``).  Why its own
module: the wire format is no one format's -- a format imports no other (``heads``), and both read it."""

from __future__ import annotations

from collections.abc import Iterator

#: A varint is at most ten bytes (64 bits, seven a byte).
MAX_VARINT_BYTES = 10


class WireError(ValueError):
    """The bytes are not a well-formed protobuf message of the expected shape."""


class WireTruncated(WireError):
    """The file ends inside a top-level field (a payload or varint that runs past its end): a file cut short, which
    the reader says as a cut (``model.damage``), not as a foreign file."""


def read_varint(data: bytes | memoryview, i: int, end: int) -> tuple[int, int]:
    """(value, position after it) of the varint at ``data[i]``, for short Python-side walks."""
    value = shift = 0
    while i < end and shift < 7 * MAX_VARINT_BYTES:
        b = data[i]
        value |= (b & 0x7F) << shift
        i += 1
        if b < 0x80:
            return value, i
        shift += 7
    raise WireError("truncated varint")


def walk_fields(data: bytes | memoryview, start: int, end: int) -> Iterator[tuple[int, int, int, int, int]]:
    """Yield (number, wire type, field start, payload start, payload end) of the top-level fields in ``data[start:end]``;
    varint and fixed fields report their value's bytes as the payload.  A bad tag, wire type or length past the end
    raises :class:`WireError`."""
    i = start
    while i < end:
        field_start = i
        tag, i = read_varint(data, i, end)
        number, wt = tag >> 3, tag & 7
        if number <= 0:
            raise WireError("field number 0")
        if wt == 0:
            _, j = read_varint(data, i, end)
        elif wt == 2:
            length, i = read_varint(data, i, end)
            j = i + length
        elif wt in (1, 5):
            j = i + (8 if wt == 1 else 4)
        else:
            raise WireError(f"unsupported wire type {wt}")
        if j > end:
            raise WireError("field runs past the end of its message")
        yield number, wt, field_start, i, j
        i = j
