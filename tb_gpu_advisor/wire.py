"""Column-wise protobuf wire decoding with numpy.

A profile holds millions of ``XEvent`` and ``XStat`` messages.  Decoding
them one Python object at a time costs seconds per million; here every
message of a batch advances through its fields in lock-step, so the Python
loop runs once per *field position* (a handful), not once per event.

Varints are read eight bytes at a time through an unaligned ``uint64``
view of the buffer, so a varint of up to 8 bytes costs a fixed handful of
vector operations instead of one gather per byte.

Only the wire types that XEvent/XStat use are supported; anything else is
reported as a :class:`WireError` (a truncated or foreign file), never as an
IndexError from deep inside numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_MAX_VARINT_BYTES = 10
#: Zero bytes appended to every buffer so vectorized look-ahead never leaves it.
PAD = 16

_U = np.uint64
_HIGH_BITS = _U(0x8080808080808080)
_LOW7_BITS = _U(0x7F7F7F7F7F7F7F7F)


class WireError(ValueError):
    """The bytes are not a well-formed protobuf message of the expected shape."""


def padded(raw: bytes) -> np.ndarray:
    """Return ``raw`` as a uint8 array followed by ``PAD`` zero bytes."""
    buf = np.zeros(len(raw) + PAD, dtype=np.uint8)
    buf[: len(raw)] = np.frombuffer(raw, dtype=np.uint8)
    return buf


def words(buf: np.ndarray) -> np.ndarray:
    """``words(buf)[i]`` = the little-endian uint64 made of ``buf[i:i+8]`` (an unaligned view, no copy)."""
    return np.ndarray(shape=(buf.shape[0] - 7,), dtype="<u8", buffer=buf, strides=(1,))


def varints(buf: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decode one varint at each position; return (values as uint64, byte lengths).

    The first 8 bytes of every varint are loaded as one word: the lowest
    byte without its high bit ends the varint, and the 7-bit groups below it
    are packed together in three shift-and-merge steps.  Varints of 9-10
    bytes (negative int64s, huge values) take a byte-wise path; batches of
    mostly 1-byte varints too (cheaper there).
    """
    w = words(buf)[pos]
    if np.count_nonzero(w & _U(0x80)) * 4 < pos.shape[0]:  # mostly 1-byte: byte-wise is cheaper
        return _bytewise_varints(buf, pos, (w & _U(0xFF)).astype(np.uint8))
    stop = ~w & _HIGH_BITS  # high bit set in every byte that ends a varint
    first_stop = stop & (~stop + _U(1))  # isolate the lowest such bit (0 if none in 8 bytes)
    keep = ((first_stop << _U(1)) - _U(1)) & _LOW7_BITS  # payload bits of the bytes up to it
    lengths = np.bitwise_count(keep).astype(np.int64) // 7
    w &= keep
    # pack 8 x 7-bit groups: 7+7 -> 14 in 16-bit lanes, 14+14 -> 28, 28+28 -> 56
    w = (w & _U(0x007F007F007F007F)) | ((w & _U(0x7F007F007F007F00)) >> _U(1))
    w = (w & _U(0x00003FFF00003FFF)) | ((w & _U(0x3FFF00003FFF0000)) >> _U(2))
    values = (w & _U(0x000000000FFFFFFF)) | ((w & _U(0x0FFFFFFF00000000)) >> _U(4))
    long = first_stop == 0
    if long.any():
        slow = np.flatnonzero(long)
        values[slow], lengths[slow] = _bytewise_varints(buf, pos[slow], buf[pos[slow]])
    return values, lengths


def _bytewise_varints(buf: np.ndarray, pos: np.ndarray, first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One byte per round, each round touching only the varints still continuing."""
    values = (first & 0x7F).astype(np.uint64)
    lengths = np.ones(pos.shape[0], dtype=np.int64)
    live = np.flatnonzero(first >= 0x80)
    for k in range(1, _MAX_VARINT_BYTES):
        if live.size == 0:
            return values, lengths
        b = buf[pos[live] + k]
        values[live] |= (b & 0x7F).astype(np.uint64) << _U(7 * k)
        lengths[live] += 1
        live = live[b >= 0x80]
    if live.size:
        raise WireError("varint longer than 10 bytes")
    return values, lengths


def _tags(buf: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(field numbers, wire types, tag lengths).  One byte for field numbers < 16, the common case."""
    b = buf[pos]
    if (b < 0x80).all():
        return b >> 3, b & 7, np.ones(pos.shape[0], dtype=np.int64)
    tag, n = varints(buf, pos)
    return (tag >> _U(3)).astype(np.int64), (tag & _U(7)).astype(np.uint8), n


@dataclass
class Fields:
    """The decoded fields of a batch of messages, one record per field occurrence.

    ``msg`` is the index of the message a record belongs to; for varint and
    fixed-width fields ``value`` holds the raw 64-bit value; for
    length-delimited fields ``start`` locates the payload in the buffer and
    ``value`` is its length.
    """

    msg: np.ndarray
    wire_type: np.ndarray
    value: np.ndarray
    start: np.ndarray

    def subset(self, mask: np.ndarray) -> "Fields":
        return Fields(self.msg[mask], self.wire_type[mask], self.value[mask], self.start[mask])

    @classmethod
    def empty(cls) -> "Fields":
        e = np.zeros(0, dtype=np.int64)
        return cls(e, e.astype(np.int8), e.astype(np.uint64), e)


class FieldGroups:
    """Decoded records grouped by field number as they are produced.

    Messages of one kind nearly always write their fields in the same order,
    so each lock-step round holds a single field number and grouping costs
    nothing; records of a field are concatenated once, on first ``select``.
    """

    def __init__(self) -> None:
        self._parts: dict[int, list[tuple[np.ndarray, ...]]] = {}
        self._done: dict[int, Fields] = {}

    def add(self, number: np.ndarray, *cols: np.ndarray) -> None:
        first = int(number[0])
        if (number == first).all():
            self._parts.setdefault(first, []).append(cols)
            return
        for n in np.unique(number):
            sel = number == n
            self._parts.setdefault(int(n), []).append(tuple(c[sel] for c in cols))

    def select(self, number: int) -> Fields:
        if number not in self._done:
            parts = self._parts.pop(number, None)
            self._done[number] = Fields(*[np.concatenate(c) for c in zip(*parts)]) if parts else Fields.empty()
        return self._done[number]


def _fixed(buf: np.ndarray, pos: np.ndarray, width: int) -> np.ndarray:
    w = words(buf)[pos]
    return w if width == 8 else w & _U(0xFFFFFFFF)


def decode_messages(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> FieldGroups:
    """Split every message ``buf[starts[i]:ends[i]]`` into its fields, column-wise."""
    limit = buf.shape[0] - PAD
    if starts.size and (ends.max(initial=0) > limit or (starts > ends).any()):
        raise WireError("message extends past the end of its buffer")
    pos = starts.astype(np.int64, copy=True)
    idx = np.flatnonzero(pos < ends)
    out = FieldGroups()
    while idx.size:
        p = pos[idx]
        number, wire_type, tag_len = _tags(buf, p)
        vpos = p + tag_len
        if not wire_type.any():  # a round of plain varints (the common case): no per-type masks
            value, n = varints(buf, vpos)
            nxt, payload = vpos + n, vpos
        else:
            kinds = np.bincount(wire_type, minlength=8)
            if kinds[[3, 4, 6, 7]].any():
                raise WireError(f"unsupported wire type {int(wire_type[~np.isin(wire_type, (0, 1, 2, 5))][0])}")
            value = np.zeros(idx.size, dtype=np.uint64)
            nxt = np.empty(idx.size, dtype=np.int64)
            payload = vpos.copy()
            for wt in np.flatnonzero(kinds):
                sel = wire_type == wt
                vp = vpos[sel]
                if wt == 0:  # varint
                    v, n = varints(buf, vp)
                    value[sel], nxt[sel] = v, vp + n
                elif wt == 2:  # length-delimited
                    v, n = varints(buf, vp)
                    value[sel], payload[sel] = v, vp + n
                    nxt[sel] = vp + n + v.astype(np.int64)
                else:  # fixed64 (double) / fixed32
                    width = 8 if wt == 1 else 4
                    value[sel], nxt[sel] = _fixed(buf, vp, width), vp + width
        end = ends[idx]
        if ((nxt > end) | (nxt < 0)).any() or not number.all():
            raise WireError("field runs past the end of its message")
        out.add(number, idx, wire_type, value, payload)
        pos[idx] = nxt
        idx = idx[nxt < end]
    return out


def _stream_varint(stream, first: bytes = b"") -> int:
    value = shift = 0
    for k in range(_MAX_VARINT_BYTES):
        b = first if k == 0 and first else stream.read(1)
        if not b:
            raise WireError("truncated varint")
        value |= (b[0] & 0x7F) << shift
        if b[0] < 0x80:
            return value
        shift += 7
    raise WireError("varint longer than 10 bytes")


def stream_top_level_fields(stream, size: int):
    """Yield the top-level fields of one message read from ``stream`` as (number, payload bytes or int).

    For messages with few top-level fields and big payloads (an XSpace and
    its planes): each payload is read only when the caller asks for the next
    field, so only one is in memory at a time.
    """
    while True:
        first = stream.read(1)
        if not first:
            return
        tag = _stream_varint(stream, first)
        number, wt = tag >> 3, tag & 7
        if number <= 0:
            raise WireError("field number 0")
        if wt == 0:
            yield number, _stream_varint(stream)
        elif wt == 2:
            length = _stream_varint(stream)
            if length > size:
                raise WireError("field runs past the end of the file")
            payload = stream.read(length)
            if len(payload) != length:
                raise WireError("field runs past the end of the file")
            yield number, payload
        elif wt in (1, 5):
            width = 8 if wt == 1 else 4
            if len(stream.read(width)) != width:
                raise WireError("field runs past the end of the file")
        else:
            raise WireError(f"unsupported wire type {wt}")


def last_value(fields: FieldGroups, number: int, n_msgs: int, default: int = 0) -> np.ndarray:
    """Dense int64 column of field ``number`` (last occurrence wins, as in protobuf)."""
    sel = fields.select(number)
    col = np.full(n_msgs, default, dtype=np.int64)
    col[sel.msg] = sel.value.view(np.int64)
    return col


_HASH_SEED = 0x5EED_AD71
_MAX_HASHED_WORDS = 1 << 13  # strings over 64 KiB (rare) get a key of their own
_CHUNK_WORDS = 1 << 21
_seeds: np.ndarray | None = None


def _hash_seeds() -> np.ndarray:
    global _seeds
    if _seeds is None:
        _seeds = np.random.default_rng(_HASH_SEED).integers(0, 2**63, size=(2, _MAX_HASHED_WORDS), dtype=np.uint64)
    return _seeds


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer: a bijective, non-linear 64-bit mixer (in place)."""
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def range_keys(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """A 128-bit content key per byte range ``buf[s:s+len]``, computed without a Python loop.

    Each range is read as unaligned little-endian 8-byte words (a strided
    uint64 view of the buffer, so no byte-by-byte gather); the last word is
    masked to the range's length.  Two hashes with independent seeds sum the
    mixed words (``mix(word ^ seed[i])``), plus the length: equal ranges get
    equal keys; distinct ranges collide with probability about 2**-128 per
    pair.  Used to intern millions of repeated string stats (tf_op names,
    memcpy details) while decoding each distinct string once.
    """
    n = starts.shape[0]
    keys = np.zeros(n, dtype=[("h1", "<u8"), ("h2", "<u8"), ("n", "<i8")])
    keys["n"] = lengths
    nwords = (lengths + 7) // 8
    long = nwords > _MAX_HASHED_WORDS
    keys["h1"][long] = np.flatnonzero(long).astype(np.uint64)
    keys["n"][long] = -1
    todo = np.flatnonzero((lengths > 0) & ~long)
    if todo.size == 0:
        return keys
    words_view = words(buf)
    seeds = _hash_seeds()
    cut = np.searchsorted(np.cumsum(nwords[todo]), np.arange(_CHUNK_WORDS, int(nwords[todo].sum()), _CHUNK_WORDS))
    for sel in np.split(todo, cut):
        if sel.size == 0:
            continue
        nw = nwords[sel]
        seg_start = np.cumsum(nw) - nw
        within = np.arange(int(nw.sum()), dtype=np.int64) - np.repeat(seg_start, nw)
        chunk = words_view[np.repeat(starts[sel], nw) + 8 * within]
        tail = (lengths[sel] % 8).astype(np.uint64)
        last = seg_start + nw - 1
        chunk[last] &= np.where(tail > 0, (np.uint64(1) << (np.uint64(8) * tail)) - np.uint64(1), ~np.uint64(0))
        for col, seed in (("h1", seeds[0]), ("h2", seeds[1])):
            keys[col][sel] = np.add.reduceat(_mix(chunk ^ seed[within]), seg_start)
    return keys


def intern_ranges(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray, intern) -> np.ndarray:
    """String ids for byte ranges: distinct contents are decoded (UTF-8) and passed to ``intern`` once."""
    if starts.size == 0:
        return np.zeros(0, dtype=np.int64)
    keys = range_keys(buf, starts, lengths)
    # Sorting plain uint64 is several times faster than sorting the structured
    # keys; the second hash and the length confirm each group afterwards.
    _, first, inverse = np.unique(keys["h1"], return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    if (keys[first[inverse]] != keys).any():  # h1 collision: fall back to the full key
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        inverse = inverse.ravel()
    data = buf.data
    ids = np.fromiter(
        (intern(bytes(data[s : s + n]).decode("utf-8", "replace")) for s, n in zip(starts[first].tolist(), lengths[first].tolist())),
        dtype=np.int64,
        count=first.shape[0],
    )
    return ids[inverse]
