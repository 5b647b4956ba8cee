"""Column-wise protobuf wire decoding with numpy.

A profile holds millions of ``XEvent`` and ``XStat`` messages.  Decoding
them one Python object at a time costs seconds per million; here every
message of a batch advances through its fields in lock-step, so the Python
loop runs once per *field position* (a handful), not once per event.

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


class WireError(ValueError):
    """The bytes are not a well-formed protobuf message of the expected shape."""


def padded(raw: bytes) -> np.ndarray:
    """Return ``raw`` as a uint8 array followed by ``PAD`` zero bytes."""
    buf = np.zeros(len(raw) + PAD, dtype=np.uint8)
    buf[: len(raw)] = np.frombuffer(raw, dtype=np.uint8)
    return buf


def varints(buf: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decode one varint at each position; return (values as uint64, byte lengths).

    Round 0 handles every varint with plain (not fancy-indexed) array
    operations; later rounds touch only the varints still continuing, so the
    common one- and two-byte varints cost one or two vector passes.
    """
    b = buf[pos]
    values = (b & 0x7F).astype(np.uint64)
    lengths = np.ones(pos.shape[0], dtype=np.int64)
    live = np.flatnonzero(b >= 0x80)
    for k in range(1, _MAX_VARINT_BYTES):
        if live.size == 0:
            return values, lengths
        b = buf[pos[live] + k]
        values[live] |= (b & 0x7F).astype(np.uint64) << np.uint64(7 * k)
        lengths[live] += 1
        live = live[b >= 0x80]
    if live.size:
        raise WireError("varint longer than 10 bytes")
    return values, lengths


def _tags(buf: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Field tags: one byte for field numbers < 16, the common case, else a varint."""
    b = buf[pos]
    if (b < 0x80).all():
        return b.astype(np.uint64), np.ones(pos.shape[0], dtype=np.int64)
    return varints(buf, pos)


@dataclass
class Fields:
    """The decoded fields of a batch of messages, one record per field occurrence.

    ``msg`` is the index of the message a record belongs to; for varint and
    fixed-width fields ``value`` holds the raw 64-bit value; for
    length-delimited fields ``start``/``length`` locate the payload in the
    buffer (``value`` is the length).
    """

    msg: np.ndarray
    number: np.ndarray
    wire_type: np.ndarray
    value: np.ndarray
    start: np.ndarray

    def select(self, number: int) -> "Fields":
        keep = self.number == number
        return Fields(self.msg[keep], self.number[keep], self.wire_type[keep], self.value[keep], self.start[keep])


def decode_messages(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> Fields:
    """Split every message ``buf[starts[i]:ends[i]]`` into its fields, column-wise."""
    limit = buf.shape[0] - PAD
    if starts.size and (ends.max(initial=0) > limit or (starts > ends).any()):
        raise WireError("message extends past the end of its buffer")
    pos = starts.astype(np.int64, copy=True)
    idx = np.nonzero(pos < ends)[0]
    out: list[tuple[np.ndarray, ...]] = []
    while idx.size:
        p = pos[idx]
        tag, tag_len = _tags(buf, p)
        number = (tag >> np.uint64(3)).astype(np.int64)
        wire_type = (tag & np.uint64(7)).astype(np.int8)
        vpos = p + tag_len
        value = np.zeros(idx.size, dtype=np.uint64)
        nxt = np.empty(idx.size, dtype=np.int64)
        payload = vpos.copy()
        for wt in np.unique(wire_type):
            sel = wire_type == wt
            vp = vpos[sel]
            if wt == 0:  # varint
                v, n = varints(buf, vp)
                value[sel], nxt[sel] = v, vp + n
            elif wt == 2:  # length-delimited
                v, n = varints(buf, vp)
                value[sel], payload[sel] = v, vp + n
                nxt[sel] = vp + n + v.astype(np.int64)
            elif wt == 1:  # fixed64 (double)
                raw = buf[vp[:, None] + np.arange(8)].copy()
                value[sel], nxt[sel] = raw.view("<u8").ravel(), vp + 8
            elif wt == 5:  # fixed32
                raw = buf[vp[:, None] + np.arange(4)].copy()
                value[sel], nxt[sel] = raw.view("<u4").ravel().astype(np.uint64), vp + 4
            else:
                raise WireError(f"unsupported wire type {int(wt)}")
        if (nxt > ends[idx]).any() or (number <= 0).any():
            raise WireError("field runs past the end of its message")
        out.append((idx, number, wire_type, value, payload))
        pos[idx] = nxt
        idx = idx[nxt < ends[idx]]
    if not out:
        empty = np.zeros(0, dtype=np.int64)
        return Fields(empty, empty, empty.astype(np.int8), empty.astype(np.uint64), empty)
    cols = [np.concatenate(c) for c in zip(*out)]
    return Fields(*cols)


def last_value(fields: Fields, number: int, n_msgs: int, default: int = 0) -> np.ndarray:
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
    words_view = np.ndarray(shape=(buf.shape[0] - 7,), dtype="<u8", buffer=buf, strides=(1,))
    seeds = _hash_seeds()
    cut = np.searchsorted(np.cumsum(nwords[todo]), np.arange(_CHUNK_WORDS, int(nwords[todo].sum()), _CHUNK_WORDS))
    for sel in np.split(todo, cut):
        if sel.size == 0:
            continue
        nw = nwords[sel]
        seg_start = np.cumsum(nw) - nw
        within = np.arange(int(nw.sum()), dtype=np.int64) - np.repeat(seg_start, nw)
        words = words_view[np.repeat(starts[sel], nw) + 8 * within]
        tail = (lengths[sel] % 8).astype(np.uint64)
        last = seg_start + nw - 1
        words[last] &= np.where(tail > 0, (np.uint64(1) << (np.uint64(8) * tail)) - np.uint64(1), ~np.uint64(0))
        for col, seed in (("h1", seeds[0]), ("h2", seeds[1])):
            keys[col][sel] = np.add.reduceat(_mix(words ^ seed[within]), seg_start)
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
