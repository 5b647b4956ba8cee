"""Lookups of integer ids in bulk: metadata ids of millions of events and stats, CUPTI correlation ids.

Shared by the reader (event and stat metadata ids) and the metrics context
(the host launch record of each kernel's correlation id).
"""

from __future__ import annotations

import numpy as np

#: Entries taken at a time by :meth:`IdTable.first_positions`.
_BLOCK = 1 << 18


class IdTable:
    """Maps integer ids to values; the first entry of a repeated id wins; ``missing`` for every other id.

    Ids are small dense non-negative ranges in practice (TensorFlow numbers
    metadata from 1; correlation ids are CUPTI's launch counter), so the
    table is an array indexed by id: one gather per lookup, O(n).  Negative
    or sparse ids (a hostile file) get a binary search over the ids sorted
    stably instead, which also keeps the first of equal ids first.
    """

    def __init__(self, ids: np.ndarray, values: np.ndarray, missing: int) -> None:
        self.missing = missing
        self.dense: np.ndarray | None = None
        if ids.size and int(ids.min()) >= 0 and int(ids.max()) < self.max_dense_id(ids.size):
            self.dense = self._dense(ids, values, missing)
        else:
            order = np.argsort(ids, kind="stable")
            self.ids, self.values = ids[order], values[order]

    @classmethod
    def first_positions(cls, column: np.ndarray, dtype=np.int64) -> "IdTable":
        """Id -> the first position in ``column`` holding it (entries < 0 hold no id), positions as ``dtype``.

        The table of ``IdTable(column[p], p, -1)`` over the positions ``p`` that hold an id -- built a block
        at a time where the ids are dense, without those positions and ids as whole columns: for the 1.7 M
        launch records of a dense 100 MB capture they and their temporaries were ~50 MB over the read's
        tables (correlation ids: ``trace.launch_records``).
        """
        n = int(np.count_nonzero(column >= 0))
        if n == 0 or int(column.max()) >= cls.max_dense_id(n):
            pos = np.flatnonzero(column >= 0).astype(dtype, copy=False)
            return cls(column[pos], pos, -1)
        table = np.full(int(column.max()) + 2, -1, dtype=dtype)
        for a in range(0, column.shape[0], _BLOCK):
            block = column[a : a + _BLOCK]
            pos = np.flatnonzero(block >= 0)
            ids = block[pos]
            pos = (pos + a).astype(dtype, copy=False)
            new = table[ids] < 0  # an id an earlier block holds keeps that (first) position
            ids, pos = ids[new], pos[new]
            table[ids] = pos
            repeated = table[ids] != pos  # an id twice in this block: one of them was stored; keep the first
            if repeated.any():
                np.minimum.at(table, ids[repeated], pos[repeated])
        out = cls.__new__(cls)
        out.missing, out.dense = -1, table
        return out

    @staticmethod
    def max_dense_id(n: int) -> int:
        """Ids below this get the array (at most 4 slots per entry, or 64k: a table of a few hundred kB)."""
        return max(4 * n, 1 << 16)

    @staticmethod
    def _dense(ids: np.ndarray, values: np.ndarray, missing: int) -> np.ndarray:
        """The array: slot ``id`` holds the id's first value; the last slot, ``missing``, answers every other id."""
        # int32 positions where they fit: for the 2 M launch records of a dense 100 MB capture the int64
        # ``pos`` and ``first`` were 32 MB of the analysis's peak
        pdt = np.int32 if ids.size < np.iinfo(np.int32).max else np.intp
        pos = np.arange(ids.size, dtype=pdt)
        first = np.full(int(ids.max()) + 2, -1, dtype=pdt)
        first[ids] = pos
        repeated = first[ids] != pos  # an id on several entries: one of them was stored; keep the first
        if repeated.any():
            np.minimum.at(first, ids[repeated], pos[repeated])
        table = np.full(first.size, missing, dtype=np.result_type(values.dtype, np.min_scalar_type(missing)))
        has = first >= 0
        table[has] = values[first[has]]
        return table

    def lookup(self, query: np.ndarray) -> np.ndarray:
        """The value of each id in ``query`` (``missing`` where the id has none)."""
        if self.dense is not None:  # negative ids wrap to huge unsigned ones: the last ("other") slot
            wrapped = query.view(np.uint64) if query.dtype == np.int64 else query.astype(np.uint64)
            return self.dense[np.minimum(wrapped, np.uint64(self.dense.size - 1))]
        if self.ids.size == 0:
            return np.full(query.shape, self.missing, dtype=self.values.dtype)
        pos = np.clip(np.searchsorted(self.ids, query), 0, self.ids.size - 1)
        return np.where(self.ids[pos] == query, self.values[pos], self.missing).astype(self.values.dtype, copy=False)
