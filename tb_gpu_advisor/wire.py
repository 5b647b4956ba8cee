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

    Each round only touches the varints that are still continuing, so the
    common one- and two-byte varints cost one or two vector operations.
    """
    n = pos.shape[0]
    values = np.zeros(n, dtype=np.uint64)
    lengths = np.zeros(n, dtype=np.int64)
    live = np.arange(n)
    for k in range(_MAX_VARINT_BYTES):
        b = buf[pos[live] + k]
        values[live] |= (b & 0x7F).astype(np.uint64) << np.uint64(7 * k)
        done = b < 0x80
        lengths[live[done]] = k + 1
        live = live[~done]
        if live.size == 0:
            return values, lengths
    raise WireError("varint longer than 10 bytes")


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
        tag, tag_len = varints(buf, p)
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
_MAX_HASHED_LEN = 1 << 16  # longer strings (rare) are compared as real bytes
_CHUNK_BYTES = 1 << 23
_weights: tuple[np.ndarray, np.ndarray] | None = None


def _hash_weights() -> tuple[np.ndarray, np.ndarray]:
    global _weights
    if _weights is None:
        rng = np.random.default_rng(_HASH_SEED)
        w = rng.integers(1, 2**63, size=(2, _MAX_HASHED_LEN), dtype=np.uint64) | np.uint64(1)
        _weights = (w[0], w[1])
    return _weights


def range_keys(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """A 128-bit content key per byte range ``buf[s:s+len]``, computed without a Python loop.

    Two independent random linear hashes (mod 2**64) plus the length: equal
    ranges get equal keys; distinct ranges collide with probability about
    2**-128 per pair.  Used to intern millions of repeated string stats
    (tf_op names, shapes) while decoding each distinct string only once.
    Ranges longer than ``_MAX_HASHED_LEN`` get a unique key of their own
    (their index), so they are never merged by mistake.
    """
    n = starts.shape[0]
    keys = np.zeros(n, dtype=[("h1", "<u8"), ("h2", "<u8"), ("n", "<i8")])
    keys["n"] = lengths
    w1, w2 = _hash_weights()
    long = lengths > _MAX_HASHED_LEN
    keys["h1"][long] = np.nonzero(long)[0].astype(np.uint64)
    keys["n"][long] = -1
    todo = np.nonzero((lengths > 0) & ~long)[0]
    # chunk so the gathered bytes stay a few tens of MB
    bounds = np.searchsorted(np.cumsum(lengths[todo]), np.arange(_CHUNK_BYTES, int(lengths[todo].sum()) + _CHUNK_BYTES, _CHUNK_BYTES))
    for sel in np.split(todo, bounds[:-1] + 1) if todo.size else []:
        if sel.size == 0:
            continue
        ln = lengths[sel]
        seg_start = np.cumsum(ln) - ln
        within = np.arange(int(ln.sum()), dtype=np.int64) - np.repeat(seg_start, ln)
        b = buf[np.repeat(starts[sel], ln) + within].astype(np.uint64) + np.uint64(1)
        keys["h1"][sel] = np.add.reduceat(b * w1[within], seg_start)
        keys["h2"][sel] = np.add.reduceat(b * w2[within], seg_start)
    return keys


def intern_ranges(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray, intern) -> np.ndarray:
    """String ids for byte ranges: distinct contents are decoded (UTF-8) and passed to ``intern`` once."""
    if starts.size == 0:
        return np.zeros(0, dtype=np.int64)
    uniq, first, inverse = np.unique(range_keys(buf, starts, lengths), return_index=True, return_inverse=True)
    data = buf.data
    ids = np.fromiter(
        (intern(bytes(data[s : s + n]).decode("utf-8", "replace")) for s, n in zip(starts[first].tolist(), lengths[first].tolist())),
        dtype=np.int64,
        count=uniq.shape[0],
    )
    return ids[inverse.ravel()]
