"""Bulk protobuf encoding of XEvents with numpy.

Why: issue 5 needs 100 MB - 1 GB synthetic profiles; building one protobuf
object per event costs microseconds each and gigabytes of Python objects.
Here every field of a batch of events is encoded at once as a *piece*: an
``(n, width)`` uint8 matrix plus the number of bytes each row really uses.
Concatenating pieces side by side and keeping the used bytes in row-major
order yields the events' wire bytes back to back, in order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_MAX_VARINT = 10


@dataclass
class Piece:
    """Per-row byte strings of one field: row i's bytes are ``data[i][used[i]]``.

    Used bytes need not be contiguous: joining pieces just stacks columns, so
    nesting (stat in event in line) never has to move bytes around.
    """

    data: np.ndarray  # uint8 (n, width)
    used: np.ndarray  # bool (n, width)

    @property
    def length(self) -> np.ndarray:
        return self.used.sum(axis=1, dtype=np.int64)


def _prefix(length: np.ndarray, width: int) -> np.ndarray:
    return np.arange(width)[None, :] < length[:, None]


def varint_piece(values: np.ndarray) -> Piece:
    """Varint-encode int64/uint64 values (negatives as 10-byte two's complement)."""
    v = np.asarray(values).astype(np.int64).view(np.uint64)
    n = v.shape[0]
    length = np.ones(n, dtype=np.int64)
    for k in range(1, _MAX_VARINT):
        length += v >= np.uint64(1 << (7 * k)) if 7 * k < 64 else 0
    width = int(length.max(initial=1))
    shifts = (np.arange(width, dtype=np.uint64) * np.uint64(7))[None, :]
    groups = ((v[:, None] >> shifts) & np.uint64(0x7F)).astype(np.uint8)
    more = np.arange(width)[None, :] < (length[:, None] - 1)
    groups |= (more * 0x80).astype(np.uint8)
    return Piece(groups, _prefix(length, width))


def const_piece(raw: bytes, n: int, present: np.ndarray | None = None) -> Piece:
    """The same bytes on every row (zero-length where ``present`` is False)."""
    data = np.broadcast_to(np.frombuffer(raw, dtype=np.uint8), (n, len(raw)))
    used = np.ones((n, len(raw)), dtype=bool)
    if present is not None:
        used &= present[:, None]
    return Piece(data, used)


def table_piece(table: list[bytes], index: np.ndarray) -> Piece:
    """Row i gets ``table[index[i]]`` (for string values drawn from a small set)."""
    width = max((len(t) for t in table), default=0)
    mat = np.zeros((len(table), max(width, 1)), dtype=np.uint8)
    lens = np.zeros(len(table), dtype=np.int64)
    for i, t in enumerate(table):
        mat[i, : len(t)] = np.frombuffer(t, dtype=np.uint8)
        lens[i] = len(t)
    used = _prefix(lens, mat.shape[1])
    return Piece(mat[index], used[index])


def mask(piece: Piece, present: np.ndarray) -> Piece:
    """Drop the bytes of rows that are not present."""
    return Piece(piece.data, piece.used & present[:, None])


def join(pieces: list[Piece]) -> Piece:
    """Concatenate pieces row by row (still one piece)."""
    data = np.concatenate([p.data for p in pieces], axis=1)
    used = np.concatenate([p.used for p in pieces], axis=1)
    return Piece(data, used)


def flatten(piece: Piece) -> bytes:
    """All rows' used bytes, back to back."""
    return piece.data[piece.used].tobytes()


def tag(field: int, wire_type: int) -> bytes:
    """Encoded key of a field (field numbers here are < 16, one byte)."""
    return bytes([(field << 3) | wire_type])


def length_delimited(field: int, body: Piece) -> Piece:
    """``tag + varint(len) + body`` for every row."""
    n = body.data.shape[0]
    return join([const_piece(tag(field, 2), n), varint_piece(body.length), body])


def encode_varint(value: int) -> bytes:
    """One varint (int64 two's complement for negatives)."""
    v = value & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)
