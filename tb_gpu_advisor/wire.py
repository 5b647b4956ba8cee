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
