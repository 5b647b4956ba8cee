"""Column-wise protobuf wire decoding with numpy.

A profile holds millions of ``XEvent`` and ``XStat`` messages.  Decoding
them one Python object at a time costs seconds per million; here every
message of a batch advances through its fields in lock-step, so the Python
loop runs once per *field position* (a handful), not once per event.
Writers emit fields in a fixed order, so nearly every round holds one tag:
such rounds are decoded with a scalar field number and wire type, and the
decoder's state is compacted only in rounds where some message ends.

Varints are read eight bytes at a time through an unaligned ``uint64``
view of the buffer, so a varint of up to 8 bytes costs a fixed handful of
vector operations instead of one gather per byte; these run in cache-sized
blocks.  Rounds of one-byte varints (tags, small ids, short lengths) take
a single byte gather.

The events of a line are decoded where they lie in the plane's buffer:
:func:`locate_repeated` finds them from their lengths and checks every
header.  String stats are interned by :func:`intern_ranges`, which groups
equal byte ranges by a cheap hash confirmed byte for byte.

Only the wire types that XEvent/XStat use are supported; anything else is
reported as a :class:`WireError` (a truncated or foreign file), never as an
IndexError from deep inside numpy.  A field written with another wire type
than its schema's is ignored (:meth:`FieldGroups.select`), as protobuf
parsers do.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.formats.protowire import MAX_VARINT_BYTES as _MAX_VARINT_BYTES
from tb_gpu_advisor.formats.protowire import WireError, WireTruncated, walk_fields  # noqa: F401 - the xplane readers name them here
#: Zero bytes appended to every buffer so vectorized look-ahead never leaves it.
PAD = 16

_U = np.uint64
_HIGH_BITS = _U(0x8080808080808080)
_LOW7_BITS = _U(0x7F7F7F7F7F7F7F7F)


def padded(raw: bytes) -> np.ndarray:
    """Return ``raw`` as a uint8 array followed by ``PAD`` zero bytes."""
    buf = np.zeros(len(raw) + PAD, dtype=np.uint8)
    buf[: len(raw)] = np.frombuffer(raw, dtype=np.uint8)
    return buf


def words(buf: np.ndarray) -> np.ndarray:
    """``words(buf)[i]`` = the little-endian uint64 made of ``buf[i:i+8]`` (an unaligned view, no copy)."""
    return np.ndarray(shape=(buf.shape[0] - 7,), dtype="<u8", buffer=buf, strides=(1,))


def varints(buf: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decode one varint at each position; return (values as uint64, byte lengths)."""
    values, lengths = _varints(buf, pos)
    return values.astype(np.uint64, copy=False), np.broadcast_to(lengths, pos.shape).astype(np.int64)


def _varints(buf: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray | int]:
    """``varints`` for the decoder: when every varint is one byte (the commonest round), values
    come as uint8 and lengths as the int 1, sparing two conversions of the whole batch.

    The first byte of each varint is gathered first (a cheap uint8 gather):
    if none continues, that is the answer.  If few continue, the byte-wise
    path touches only those.  Otherwise :func:`_word_varints`.
    """
    first = buf[pos]
    n_long = np.count_nonzero(first >= 0x80)
    if n_long == 0:  # uint8 values: callers widen them when they concatenate
        return first, 1
    if n_long * 4 < pos.shape[0]:  # mostly 1-byte: byte-wise is cheaper
        return _bytewise_varints(buf, pos, first)
    return _word_varints(buf, pos)


#: Varints decoded per block by ``_word_varints``: its ~20 temporaries then stay
#: in the CPU cache (128 KiB each) instead of streaming through memory; measured
#: 2x faster than whole-array operations on 1 M varints (25 -> 12 ms).
_BLOCK = 1 << 14


def _word_varints(buf: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decode varints eight bytes at a time, in cache-sized blocks of in-place operations.

    The first 8 bytes of every varint are loaded as one word: the lowest
    byte without its high bit ends the varint, and the 7-bit groups below it
    are packed together in three shift-and-merge steps.  Varints of 9-10
    bytes (negative int64s, huge values) are redone byte-wise.
    """
    n = pos.shape[0]
    values = np.empty(n, dtype=np.uint64)
    lengths = np.empty(n, dtype=np.int64)
    all_words = words(buf)
    long: list[np.ndarray] = []
    for a in range(0, n, _BLOCK):
        w = all_words[pos[a : a + _BLOCK]]
        stop = np.invert(w)
        stop &= _HIGH_BITS  # high bit set in every byte that ends a varint
        below = np.negative(stop)
        below &= stop  # the lowest such bit (0: none in these 8 bytes)
        if not below.all():
            long.append(a + np.flatnonzero(below == 0))
        below -= _U(1)  # every bit below it: the varint's bytes, less the last high bit
        n_bits = np.bitwise_count(below)  # 8 * length - 1
        n_bits += np.uint8(1)
        n_bits >>= np.uint8(3)
        lengths[a : a + _BLOCK] = n_bits
        below &= _LOW7_BITS
        w &= below
        # pack 8 x 7-bit groups: 7+7 -> 14 in 16-bit lanes, 14+14 -> 28, 28+28 -> 56
        for low, high_bits, shift in _PACK_STEPS:
            high = w & high_bits
            w &= low
            high >>= shift
            w |= high
        values[a : a + _BLOCK] = w
    if long:
        slow = np.concatenate(long)
        values[slow], lengths[slow] = _bytewise_varints(buf, pos[slow], buf[pos[slow]])
    return values, lengths


#: (low half of each lane, high half, shift joining them) for 16-, 32- and 64-bit lanes.
_PACK_STEPS = tuple((_U(low), ~_U(low), _U(shift)) for low, shift in ((0x007F007F007F007F, 1), (0x00003FFF00003FFF, 2), (0x0FFFFFFF, 4)))


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


@dataclass
class Fields:
    """The occurrences of one field (one wire type) in a batch of messages, one record per occurrence.

    ``msg`` is the index of the message a record belongs to; for varint and
    fixed-width fields ``value`` holds the raw 64-bit value; for
    length-delimited fields ``start`` locates the payload in the buffer and
    ``value`` is its length (``start`` is empty for the other wire types).
    Records come in message order within each occurrence rank, ranks in
    order: so the last record of a message is its last occurrence.
    ``single_rank``: all records come from one lock-step round, so ``msg``
    is strictly increasing (at most one occurrence per message).
    """

    msg: np.ndarray
    value: np.ndarray
    start: np.ndarray
    single_rank: bool = False

    def subset(self, mask: np.ndarray) -> "Fields":
        start = self.start[mask] if self.start.size else self.start
        return Fields(self.msg[mask], self.value[mask], start, self.single_rank)

    @classmethod
    def empty(cls) -> "Fields":
        e = np.zeros(0, dtype=np.int64)
        return cls(e, e.astype(np.uint64), e)


class FieldGroups:
    """Decoded records grouped by (field number, wire type) as they are produced.

    Messages of one kind nearly always write their fields in the same order,
    so most lock-step rounds hold a single tag and grouping costs nothing;
    records of a field are concatenated once, on first ``select``.
    """

    def __init__(self) -> None:
        self._parts: dict[tuple[int, int], list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
        self._done: dict[tuple[int, int], Fields] = {}

    def add(self, number: int, wire_type: int, msg: np.ndarray, value: np.ndarray, start: np.ndarray | None) -> None:
        self._parts.setdefault((number, wire_type), []).append((msg, value, _NO_START if start is None else start))

    def select(self, number: int, wire_type: int) -> Fields:
        """Records of field ``number`` written with ``wire_type``.

        Occurrences with another wire type are ignored, as protobuf parsers
        treat them (unknown fields): so a length is never taken from a varint.
        """
        key = (number, wire_type)
        if key not in self._done:
            parts = self._parts.pop(key, None)
            if not parts:
                self._done[key] = Fields.empty()
            else:
                msg, value, start = zip(*parts)
                joined = _join(msg, np.int64), _join(value, np.uint64), _join(start, np.int64)
                self._done[key] = Fields(*joined, single_rank=len(parts) == 1)
        return self._done[key]


_NO_START = np.zeros(0, dtype=np.int64)


def _join(arrays: tuple[np.ndarray, ...], dtype) -> np.ndarray:
    """Concatenate as ``dtype`` (values of one-byte rounds come as uint8)."""
    if len(arrays) == 1:
        return arrays[0].astype(dtype, copy=False)
    return np.concatenate(arrays, dtype=dtype)


#: Wire types (protobuf encoding): the ones XEvent / XStat fields use.
VARINT, FIXED64, LEN, FIXED32 = 0, 1, 2, 5


def _fixed(buf: np.ndarray, pos: np.ndarray, width: int) -> np.ndarray:
    w = words(buf)[pos]
    return w if width == 8 else w & _U(0xFFFFFFFF)


def _payloads(buf: np.ndarray, vpos: np.ndarray, wire_type: int, limit: int):
    """(value, payload start or None, next field position) of fields of one wire type at ``vpos``."""
    if wire_type == VARINT:
        value, n = _varints(buf, vpos)
        return value, None, vpos + n
    if wire_type == LEN:
        value, n = _varints(buf, vpos)
        if value.dtype != np.uint8 and int(value.max()) > limit:  # also keeps the int64 sums below from wrapping
            raise WireError("field runs past the end of its message")
        start = vpos + n
        return value, start, start + value.astype(np.int64, copy=False)
    if wire_type in (FIXED64, FIXED32):  # double / fixed32
        width = 8 if wire_type == FIXED64 else 4
        return _fixed(buf, vpos, width), None, vpos + width
    raise WireError(f"unsupported wire type {wire_type}")


def decode_messages(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> FieldGroups:
    """Split every message ``buf[starts[i]:ends[i]]`` into its fields, column-wise.

    Each round decodes the next field of every message not yet finished.
    The state (message index, position, end) is kept compact and only
    compacted again in rounds where some message ends.  A round whose
    fields all have the same one-byte tag -- nearly every round, as writers
    emit fields in a fixed order -- is decoded with scalar field number and
    wire type; mixed rounds are split by tag into such groups.
    """
    limit = buf.shape[0] - PAD
    out = FieldGroups()
    if starts.size == 0:
        return out
    if int(ends.max()) > limit or (starts > ends).any():
        raise WireError("message extends past the end of its buffer")
    nonempty = starts < ends
    if nonempty.all():
        live = np.arange(starts.shape[0])
        pos, end = starts.astype(np.int64, copy=False), ends.astype(np.int64, copy=False)  # never written to
    else:
        live = np.flatnonzero(nonempty)
        pos, end = starts[live].astype(np.int64, copy=False), ends[live].astype(np.int64, copy=False)
    while live.size:
        tag = buf[pos]
        t0 = int(tag[0])
        if t0 < 0x80 and (tag == t0).all():
            nxt = _uniform_round(buf, pos, t0 >> 3, t0 & 7, live, limit, out)
        else:
            nxt = _mixed_round(buf, pos, tag, live, limit, out)
        left = end - nxt
        least = int(left.min())
        if least < 0:
            raise WireError("field runs past the end of its message")
        if least > 0:  # no message ended: nothing to compact
            pos = nxt
        else:
            more = left > 0
            live, pos, end = live[more], nxt[more], end[more]
    return out


def _uniform_round(buf, pos, number: int, wire_type: int, msg, limit: int, out: FieldGroups, tag_len=1) -> np.ndarray:
    """Decode one field of tag (number, wire_type) at every ``pos``; return the next positions."""
    if number == 0:
        raise WireError("field number 0")
    value, start, nxt = _payloads(buf, pos + tag_len, wire_type, limit)
    out.add(number, wire_type, msg, value, start)
    return nxt


def _mixed_round(buf, pos, tag: np.ndarray, msg, limit: int, out: FieldGroups) -> np.ndarray:
    """A round with several tags: decode each group of equal tags as a uniform round."""
    nxt = np.empty(pos.shape[0], dtype=np.int64)
    if (tag < 0x80).all():  # one-byte tags: group by the byte
        keys, tag_len = tag, 1
        distinct = np.flatnonzero(np.bincount(tag, minlength=0x80))  # cheaper than np.unique on bytes
    else:  # field numbers >= 16 (or non-minimal tags): group by the decoded tag
        keys, tag_len = _varints(buf, pos)
        distinct = np.unique(keys)
    for key in distinct.tolist():
        sel = np.flatnonzero(keys == key)  # in message order
        tl = tag_len if isinstance(tag_len, int) else tag_len[sel]
        nxt[sel] = _uniform_round(buf, pos[sel], key >> 3, key & 7, msg[sel], limit, out, tl)
    return nxt


def _stream_varint(stream, first: bytes = b"") -> int:
    value = shift = 0
    for k in range(_MAX_VARINT_BYTES):
        b = first if k == 0 and first else stream.read(1)
        if not b:
            raise WireTruncated("truncated varint")
        value |= (b[0] & 0x7F) << shift
        if b[0] < 0x80:
            return value
        shift += 7
    raise WireError("varint longer than 10 bytes")


def read_padded(stream, length: int) -> np.ndarray:
    """Read ``length`` bytes of ``stream`` straight into a uint8 array followed by ``PAD`` zero bytes.

    One copy (the read itself): the decoder then works on this array in
    place, and upb parses slices of it through a memoryview.
    """
    return _fill(stream, np.empty(length + PAD, dtype=np.uint8), length)


def _fill(stream, buf: np.ndarray, length: int) -> np.ndarray:
    """``buf`` (``length`` + ``PAD`` bytes) holding the next ``length`` bytes of ``stream``, then zeros."""
    buf[length:] = 0
    view = memoryview(buf)[:length]
    got = 0
    while got < length:
        n = stream.readinto(view[got:])
        if not n:
            raise WireTruncated("field runs past the end of the file")
        got += n
    return buf


def stream_top_level_fields(stream, size: int, buffered: frozenset[int] = frozenset(), ahead_bytes: int = 0):
    """Yield the top-level fields of one message read from ``stream`` as (number, payload).

    For messages with few top-level fields and big payloads (an XSpace and
    its planes): each payload is read only when the caller asks for the next
    field, so only one is in memory at a time.  Length-delimited payloads
    come as ``bytes``, or for field numbers in ``buffered`` as a zero-padded
    array (:func:`read_padded`); varints as ``int``.

    ``ahead_bytes`` (issue #38, both cores): a ``buffered`` payload of :data:`AHEAD_MIN_BYTES` to ``ahead_bytes``
    is read on a thread while the caller works on the field before it (``readinto`` lets go of the GIL), so at
    most one such payload more is in memory.  The same fields come, and the same error at the same field: what
    goes wrong reading ahead is raised when the caller asks for that field, as without reading ahead.
    """
    heads = _field_heads(stream, size)
    head = _next_head(heads)
    reading: _Reading | None = None
    try:
        while True:
            if isinstance(head, BaseException):
                raise head
            if head is None:
                return
            number, wt, n = head
            if reading is not None:
                value, reading = reading.result(stream, n), None
            else:
                value = _payload(stream, number, wt, n, buffered)
            head = _next_head(heads)
            if (ahead_bytes and isinstance(head, tuple) and head[1] == 2 and head[0] in buffered
                    and AHEAD_MIN_BYTES <= head[2] <= ahead_bytes):
                reading = _Reading(stream, head[2])
            if wt in (0, 2):
                yield number, value
            del value
    finally:
        if reading is not None:  # the caller left early: nothing reads the stream after it is closed
            reading.join()


#: Payloads read ahead are at least this big: a smaller one is read at once, cheaper than starting a thread.
AHEAD_MIN_BYTES = 1 << 20


def _field_heads(stream, size: int):
    """(number, wire type, varint value or payload length) of each top-level field; the caller reads or skips a
    payload before asking for the next."""
    while True:
        first = stream.read(1)
        if not first:
            return
        tag = _stream_varint(stream, first)
        number, wt = tag >> 3, tag & 7
        if number <= 0:
            raise WireError("field number 0")
        if wt == 0:
            yield number, wt, _stream_varint(stream)
        elif wt == 2:
            length = _stream_varint(stream)
            if length > size:
                raise WireTruncated("field runs past the end of the file")
            yield number, wt, length
        elif wt in (1, 5):
            yield number, wt, 8 if wt == 1 else 4
        else:
            raise WireError(f"unsupported wire type {wt}")


def _next_head(heads) -> tuple[int, int, int] | BaseException | None:
    """The next head, None at the end, or the error met reading it (raised when the caller reaches it)."""
    try:
        return next(heads, None)
    except Exception as e:  # noqa: BLE001 - raised at the same field as without reading ahead
        return e


def _payload(stream, number: int, wt: int, n: int, buffered: frozenset[int]):
    """The payload after a head: the varint itself, the bytes or padded array of a LEN field; a fixed-width
    value is skipped (None)."""
    if wt == 0:
        return n
    if wt == 2 and number in buffered:
        return read_padded(stream, n)
    payload = stream.read(n)
    if len(payload) != n:
        raise WireTruncated("field runs past the end of the file")
    return payload if wt == 2 else None


class _Reading:
    """:func:`read_padded` of the next ``length`` bytes of ``stream`` on a thread of its own."""

    def __init__(self, stream, length: int) -> None:
        import threading  # only where a file has payloads worth reading ahead

        self._out: list = []
        self._thread = threading.Thread(target=self._run, args=(stream, length), name="xplane-read", daemon=True)
        self._thread.start()

    def _run(self, stream, length: int) -> None:
        try:
            buf = np.empty(length + PAD, dtype=np.uint8)
        except MemoryError:  # no room for two payloads at once (a worker's memory limit): read it when asked
            self._out.append(None)
            return
        try:
            self._out.append(_fill(stream, buf, length))
        except BaseException as e:  # noqa: BLE001 - raised by result(), in the caller's thread
            self._out.append(e)

    def join(self) -> None:
        self._thread.join()

    def result(self, stream, length: int) -> np.ndarray:
        """The payload, or the error reading it; read here, as without reading ahead, where it did not start."""
        self._thread.join()
        out = self._out.pop()
        if out is None:
            return read_padded(stream, length)
        if isinstance(out, BaseException):
            raise out
        return out


def varint_sizes(values: np.ndarray) -> np.ndarray:
    """Bytes each non-negative value takes as a varint."""
    sizes = np.ones(values.shape[0], dtype=np.int64)
    bound = 1 << 7
    while values.size and bound <= int(values.max()):
        sizes += values >= bound
        bound <<= 7
    return sizes


def locate_repeated(buf: np.ndarray, first: int, tag: int, lengths: np.ndarray) -> np.ndarray | None:
    """Payload starts of consecutive length-delimited records, or None if they are not consecutive.

    ``lengths`` are the payload lengths of every occurrence of one repeated
    field, in order (upb gives them); ``first`` is where the first
    occurrence's one-byte ``tag`` is.  Writers put a repeated field's
    occurrences back to back (protobuf serializes fields in number order),
    so each header position follows from the previous record's size by a
    cumulative sum.  Every header is then checked -- the tag byte, and the
    length varint's value *and* size -- so the records found are exactly
    the field's occurrences; anything else (occurrences interleaved with
    other fields, non-minimal varints) gives None and the caller falls back.
    """
    n = lengths.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    sizes = varint_sizes(lengths)
    record = 1 + sizes + lengths
    header = np.empty(n, dtype=np.int64)
    header[0] = first
    np.cumsum(record[:-1], out=header[1:])
    header[1:] += first
    if int(header[-1] + record[-1]) > buf.shape[0] - PAD:
        return None
    if int(lengths.max()) < 0x80:  # one-byte lengths: tag and length checked as one 16-bit word
        head = words(buf)[header] & _U(0xFFFF)
        if not (head == (lengths.astype(np.uint64) << _U(8)) | _U(tag)).all():
            return None
        return header + 2
    if not (buf[header] == tag).all():
        return None
    try:
        value, got_sizes = varints(buf, header + 1)
    except WireError:  # not a header after all
        return None
    if not ((value == lengths.astype(np.uint64)) & (got_sizes == sizes)).all():
        return None
    return header + 1 + sizes


def last_value(fields: FieldGroups, number: int, n_msgs: int, default: int = 0) -> np.ndarray:
    """Dense int64 column of varint field ``number`` (last occurrence wins, as in protobuf)."""
    sel = fields.select(number, VARINT)
    if sel.single_rank and sel.msg.shape[0] == n_msgs:  # one record per message, in order: the column itself
        return sel.value.view(np.int64)
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
        _seeds = _splitmix64(_HASH_SEED, 2 * _MAX_HASHED_WORDS).reshape(2, _MAX_HASHED_WORDS)
    return _seeds


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer: a bijective, non-linear 64-bit mixer (in place)."""
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def _splitmix64(seed: int, n: int) -> np.ndarray:
    """The first ``n`` outputs of splitmix64 from ``seed`` (Steele, Lea and Flood, 2014; the generator that seeds
    xoshiro): fixed, well-mixed 64-bit words for the hashes' seeds.  Not ``np.random``: importing it (with
    ``hashlib`` and ``secrets``) was ~8 ms of every XPlane report's start-up (issue #38)."""
    state = np.arange(1, n + 1, dtype=np.uint64)
    state *= np.uint64(0x9E3779B97F4A7C15)  # the generator's increment; wraps modulo 2**64 as it should
    state += np.uint64(seed)
    return _mix(state)


def range_keys(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray, index: np.ndarray | None = None) -> np.ndarray:
    """A 128-bit content key per byte range ``buf[s:s+len]``, computed without a Python loop.

    Each range is read as unaligned little-endian 8-byte words (a strided
    uint64 view of the buffer, so no byte-by-byte gather); the last word is
    masked to the range's length.  Two hashes with independent seeds sum the
    mixed words (``mix(word ^ seed[i])``), plus the length: equal ranges get
    equal keys; distinct ranges collide with probability about 2**-128 per
    pair.  Ranges over 64 KiB get the key (``index``, 0, -1) instead
    (``index`` defaults to their position in ``starts``).

    :func:`intern_ranges` orders the distinct strings it interns by this
    key (so string ids do not depend on how the ranges were grouped).
    """
    n = starts.shape[0]
    keys = np.zeros(n, dtype=[("h1", "<u8"), ("h2", "<u8"), ("n", "<i8")])
    keys["n"] = lengths
    nwords = (lengths + 7) // 8
    long = nwords > _MAX_HASHED_WORDS
    keys["h1"][long] = (np.flatnonzero(long) if index is None else index[long]).astype(np.uint64)
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


def intern_ranges(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray, intern, groups=None) -> np.ndarray:
    """String ids for byte ranges: distinct contents are decoded (UTF-8) and passed to ``intern`` once.

    The ranges are first grouped by exact content (:func:`_content_groups`,
    cheap), then only one representative per group gets the 128-bit
    :func:`range_keys` key, and groups are interned in key order: the same
    order, hence the same ids, as keying every range (the previous design,
    measured 2.3x slower on the 100 MB benchmark's 800 k tf_op strings).
    A content split over several groups is harmless: its groups have equal
    keys, so they are interned one after the other, the first one assigning
    the id.

    ``groups``: another function giving what :func:`_content_groups` gives (the compiled decoder's hash table);
    the ids are the same whatever the groups' numbering, as long as each group's representative is its first
    range where the range is over 64 KiB (its key is then the representative's index).
    """
    if starts.size == 0:
        return np.zeros(0, dtype=np.int64)
    reps, group = (groups or _content_groups)(buf, starts, lengths)
    keys = range_keys(buf, starts[reps], lengths[reps], index=reps)
    order = np.lexsort((keys["n"], keys["h2"], keys["h1"]))
    data = buf.data
    ids = np.empty(reps.shape[0], dtype=np.int64)
    ids[order] = np.fromiter(
        (
            intern(bytes(data[s : s + n]).decode("utf-8", "replace"))
            for s, n in zip(starts[reps[order]].tolist(), lengths[reps[order]].tolist())
        ),
        dtype=np.int64,
        count=reps.shape[0],
    )
    return ids[group]


#: Ranges of up to this many 8-byte words are grouped in numpy (512 bytes: tf_op
#: names, shapes, memcpy details); longer ones, rare, by a Python dict.
_MAX_ROW_WORDS = 64
#: Tail masks by ``length % 8``: the bytes of a range's last word that belong to it.
_TAIL_MASKS = np.array([2**64 - 1] + [(1 << (8 * k)) - 1 for k in range(1, 8)], dtype=np.uint64)
_ROW_HASH_MUL = _U(0x9E3779B97F4A7C15)
_ROW_HASH_COLUMN = _splitmix64(_HASH_SEED + 1, _MAX_ROW_WORDS)
_ROW_BLOCK_WORDS = 1 << 21  # bounds each block's word matrix (16 MiB)


def _content_groups(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(representative range of each group, group of each range): ranges in one group have equal bytes.

    Ranges are bucketed by word count; a bucket is read as a matrix of
    8-byte words (one row per range, last word masked), rows are hashed
    with a cheap per-column mix and grouped by hash, and every row is then
    *compared* with its group's first row, so a hash collision can never
    merge two different strings: rows that differ, and ranges too long for
    a matrix, are grouped exactly by a Python dict instead.
    """
    n = starts.shape[0]
    nwords = np.minimum((lengths + 7) // 8, _MAX_ROW_WORDS + 1).astype(np.uint16)
    order = np.argsort(nwords, kind="stable")  # radix sort; keeps range order within a bucket
    bounds = np.concatenate(([0], np.cumsum(np.bincount(nwords, minlength=_MAX_ROW_WORDS + 2))))
    group = np.empty(n, dtype=np.int64)
    reps: list[np.ndarray] = []
    n_groups = 0
    leftovers = [order[bounds[_MAX_ROW_WORDS + 1] :]]
    all_words = words(buf)
    for k in range(_MAX_ROW_WORDS + 1):
        rows_per_block = max(1, _ROW_BLOCK_WORDS // max(k, 1))
        for a in range(int(bounds[k]), int(bounds[k + 1]), rows_per_block):
            idx = order[a : min(a + rows_per_block, int(bounds[k + 1]))]
            local_reps, local_group, differ = _row_groups(all_words, starts[idx], lengths[idx], k)
            group[idx] = local_group + n_groups
            reps.append(idx[local_reps])
            n_groups += local_reps.shape[0]
            if differ.size:
                leftovers.append(idx[differ])
    rest = np.sort(np.concatenate(leftovers))
    if rest.size:
        data = buf.data
        seen: dict[bytes, int] = {}
        rest_reps = []
        for i, s, ln in zip(rest.tolist(), starts[rest].tolist(), lengths[rest].tolist()):
            g = seen.setdefault(bytes(data[s : s + ln]), n_groups + len(seen))
            if g == n_groups + len(rest_reps):
                rest_reps.append(i)
            group[i] = g
        reps.append(np.asarray(rest_reps, dtype=np.int64))
    return np.concatenate(reps), group


def _row_groups(all_words: np.ndarray, starts: np.ndarray, lengths: np.ndarray, k: int):
    """Group ranges of ``k`` words each: (representatives, group of each, ranges that differ from their group's).

    The words are gathered column by column (word j of every range), so
    every operation runs on long contiguous vectors.  Ranges in ``differ``
    keep a group number but must be regrouped by the caller.
    """
    m = starts.shape[0]
    if k == 0:  # empty strings: all equal
        return np.zeros(1, dtype=np.int64), np.zeros(m, dtype=np.int64), np.zeros(0, dtype=np.int64)
    cols = np.empty((k, m), dtype=np.uint64)
    for j in range(k):
        cols[j] = all_words[starts + 8 * j if j else starts]
    cols[k - 1] &= _TAIL_MASKS[lengths & 7]
    h = lengths.astype(np.uint64) * _ROW_HASH_MUL
    mixed = np.empty(m, dtype=np.uint64)
    shifted = np.empty(m, dtype=np.uint64)
    for j in range(k):  # h += mix(word_j ^ column constant j)
        np.bitwise_xor(cols[j], _ROW_HASH_COLUMN[j], out=mixed)
        mixed *= _ROW_HASH_MUL
        np.right_shift(mixed, _U(29), out=shifted)
        mixed ^= shifted
        h += mixed
    del mixed, shifted
    by_hash = np.argsort(h)
    h = h[by_hash]
    new = np.empty(m, dtype=bool)
    new[0] = True
    np.not_equal(h[1:], h[:-1], out=new[1:])
    reps = by_hash[np.flatnonzero(new)]
    group = np.empty(m, dtype=np.int64)
    group[by_hash] = np.cumsum(new) - 1
    rep_of = reps[group]
    differ = lengths != lengths[rep_of]
    for col in cols:
        differ |= col != col[rep_of]
    return reps, group, np.flatnonzero(differ)
