"""The columnar timeline: what the reader produces and every later stage reads.

One :class:`Timeline` per host file.  Planes and lines are few (tens), so
they are small Python objects; events and stats are many (millions), so
they live in numpy arrays.  Names are interned per plane: an event's
``name_id`` indexes ``Plane.event_names``; string stat values index
``Plane.strings``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Iterator

import numpy as np

_GPU_PLANE = re.compile(r"^/device:GPU:(\d+)$")
MISSING = -1


class ValueKind(IntEnum):
    """How an XStat stores its value (the oneof case)."""

    NONE = 0
    DOUBLE = 1
    UINT = 2
    INT = 3
    STR = 4
    BYTES = 5
    REF = 6  # the name of another XStatMetadata; resolved to a string id


_DOUBLE = int(ValueKind.DOUBLE)  # a plain int: comparing an array with an IntEnum member goes through the enum
_BYTES = int(ValueKind.BYTES)


@dataclass
class StatTable:
    """Stats of many owners (events, or event metadata), one row per stat.

    ``owner`` indexes the events of a line (or the dense metadata ids of a
    plane); ``key`` indexes ``Plane.stat_names``; ``value`` holds ints and
    uints (as int64 bits), doubles (their IEEE bits: see ``doubles``) and --
    for STR, BYTES and REF -- the string id in ``Plane.strings``, except a
    metadata stat's BYTES value: the index of its raw bytes in ``Plane.blobs``
    (binary protos, see :meth:`Plane.metadata_blobs`).  11 bytes a stat (17 in
    a table holding doubles or values beyond int32): stats are the bulk of a
    timeline's memory.
    """

    owner: np.ndarray  # int32
    key: np.ndarray  # int16 (int32 past 32k stat names)
    kind: np.ndarray  # int8 ValueKind
    value: np.ndarray  # int32 where no double and every value fits (event stats), else int64

    @classmethod
    def empty(cls) -> "StatTable":
        i = np.zeros(0, dtype=np.int32)
        return cls(i, i.copy(), np.zeros(0, dtype=np.int8), np.zeros(0, dtype=np.int64))

    @classmethod
    def concat(cls, tables: list["StatTable"], owner_offsets: list[int]) -> "StatTable":
        """Join the tables of consecutive event batches (owners shifted by each batch's offset)."""
        if not tables:
            return cls.empty()
        if len(tables) == 1:
            return tables[0]
        return cls(
            owner=np.concatenate([t.owner + np.int32(off) for t, off in zip(tables, owner_offsets)]),
            key=np.concatenate([t.key for t in tables]),
            kind=np.concatenate([t.kind for t in tables]),
            value=np.concatenate([t.value for t in tables]),
        )

    def __len__(self) -> int:
        return int(self.owner.shape[0])

    def rows(self, key: int) -> np.ndarray:
        """Row indices of stat ``key``."""
        return np.flatnonzero(self.key == key)

    def doubles(self, rows: np.ndarray) -> np.ndarray:
        """The values of DOUBLE rows as float64."""
        return self.value[rows].view(np.float64)


@dataclass
class Line:
    """One timeline row (a host thread or a GPU stream), its events as columns."""

    id: int
    name: str
    display_name: str
    timestamp_ns: int
    start_ps: np.ndarray  # int64, absolute: timestamp_ns * 1000 + offset_ps
    duration_ps: np.ndarray  # int64
    name_id: np.ndarray  # index into Plane.event_names (int16, or int32 past 32k names)
    stats: StatTable
    plane: "Plane" = field(repr=False, compare=False, default=None)  # type: ignore[assignment]
    #: stat key -> a string-id column over the events (-1 where absent): stats nearly every event carries, held as
    #: one narrow column instead of a row each in ``stats`` (``reader.COLUMN_STATS``); read alike by every accessor
    columns: dict[int, np.ndarray] = field(default_factory=dict)
    #: the keys of ``columns`` that hold numbers (an integer stat), not string ids: :meth:`float_stat` reads them
    number_columns: frozenset[int] = frozenset()
    #: after :meth:`release_events`: (event count, (min start, max end) or None); None while the columns are here
    _released: tuple[int, tuple[int, int] | None] | None = field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        if self._released is not None:
            return self._released[0]
        return int(self.start_ps.shape[0])

    @property
    def end_ps(self) -> np.ndarray:
        return self.start_ps + self.duration_ps

    def span(self) -> tuple[int, int] | None:
        """(earliest start, latest end) of the line's events in ps, None when it has none; kept after a release."""
        if self._released is not None:
            return self._released[1]
        if not len(self):
            return None
        return int(self.start_ps.min()), int(self.end_ps.max())

    def release_events(self) -> None:
        """Drop the per-event columns once the trace's event tables hold what the analysis needs of them.

        Why: the timeline and the trace's event tables (``formats/xplane/adapter.py``) would otherwise be
        alive together, the events' times, names and stats held twice -- the bulk of the peak memory.
        Length and :meth:`span` stay answerable; the time and name columns become None and the stats
        empty, so a later reader fails loudly instead of seeing no events.
        """
        if self._released is not None:
            return
        self._released = (len(self), self.span())
        self.start_ps = self.duration_ps = self.name_id = None  # type: ignore[assignment]
        self.stats = StatTable.empty()
        self.columns = {}
        self.number_columns = frozenset()

    def int_stat(self, name: str, default: int = MISSING, inherit: bool = True) -> np.ndarray:
        """Dense int64 column of stat ``name`` for every event of this line.

        Integer, unsigned and ref/string ids all come back as int64.  With
        ``inherit`` an event without the stat takes its metadata's value
        (XEventMetadata.stats), as the profiler's own visitors do.
        """
        key = self.plane.stat_key(name)
        if key is None:
            return np.full(len(self), default, dtype=np.int64)
        meta_col = self.plane.metadata_int_stat(name, default) if inherit else None
        col = meta_col[self.name_id] if meta_col is not None else np.full(len(self), default, dtype=np.int64)
        own = self.columns.get(key)
        if own is not None:
            has = own >= 0
            col[has] = own[has]
        rows = self.stats.rows(key)
        if rows.size == 0:
            return col
        is_dbl = self.stats.kind[rows] == _DOUBLE
        if not is_dbl.any():  # the usual case: ids and counters, no doubles to convert
            col[self.stats.owner[rows]] = self.stats.value[rows]
            return col
        ints = rows[~is_dbl]
        col[self.stats.owner[ints]] = self.stats.value[ints]
        dbl = rows[is_dbl]
        vals = self.stats.doubles(dbl)
        # real files carry NaN doubles (e.g. `fragmentation`); a double beyond int64 (1e300) has no int value
        # either: both keep the default instead of casting to garbage
        ok = np.isfinite(vals) & (np.abs(vals) < 2.0**63)
        col[self.stats.owner[dbl[ok]]] = vals[ok].astype(np.int64)
        return col

    def held_column(self, name: str, inherit: bool = True) -> np.ndarray | None:
        """The line's own narrow column of stat ``name`` (``columns``: -1 where absent), which is exactly
        :meth:`int_stat` with its default -1 where no metadata value is inherited; None where the stat is not held
        as a column or metadata gives values.

        Why: the event tables narrow each stat column; from the held column they skip :meth:`int_stat`'s int64
        copy (and the pass that narrows it again) -- 18 MB of the dense 100 MB capture's host table's build.
        """
        key = self.plane.stat_key(name)
        own = None if key is None else self.columns.get(key)
        if own is None or (inherit and self.plane.metadata_int_stat(name) is not None):
            return None
        return own

    def stat_all_default(self, name: str, default: int = MISSING, inherit: bool = True) -> bool:
        """True when :meth:`int_stat` would give every event ``default``: no event of the line carries the stat,
        and (with ``inherit``) no metadata gives it another value.

        Why: most host threads carry few of the stats the host table reads; answering this costs one scan of
        the stat keys, where the column costs a gather and a narrowing over every event.
        """
        key = self.plane.stat_key(name)
        if key is None:
            return True
        if inherit:
            meta_col = self.plane.metadata_int_stat(name, default)
            if meta_col is not None and bool((meta_col != default).any()):
                return False
        return key not in self.columns and not bool((self.stats.key == key).any())

    def float_stat(self, name: str, default: float = np.nan) -> np.ndarray:
        """Dense float64 column of a numeric stat (ints converted)."""
        col = np.full(len(self), default, dtype=np.float64)
        key = self.plane.stat_key(name)
        if key is None:
            return col
        rows = self.stats.rows(key)
        kinds = self.stats.kind[rows]
        num = rows[(kinds == ValueKind.INT) | (kinds == ValueKind.UINT)]
        col[self.stats.owner[num]] = self.stats.value[num]
        dbl = rows[kinds == ValueKind.DOUBLE]
        col[self.stats.owner[dbl]] = self.stats.doubles(dbl)
        if key in self.number_columns:
            own = self.columns[key]
            has = own >= 0
            col[has] = own[has]
        return col

    def str_stat(self, name: str, inherit: bool = True) -> np.ndarray:
        """Dense string-id column (index into ``Plane.strings``; -1 where absent)."""
        return self.int_stat(name, MISSING, inherit)

    def has_stat(self, name: str) -> np.ndarray:
        """Boolean column: the event itself carries stat ``name``."""
        out = np.zeros(len(self), dtype=bool)
        key = self.plane.stat_key(name)
        if key is not None:
            out[self.stats.owner[self.stats.rows(key)]] = True
            if key in self.columns:
                out |= self.columns[key] >= 0
        return out

    def names(self) -> np.ndarray:
        """Event names as an object array (for display; analysis should use ids)."""
        return np.asarray(self.plane.event_names, dtype=object)[self.name_id]


@dataclass
class Plane:
    """One XPlane: the host (``/host:CPU``), a GPU (``/device:GPU:N``), or other."""

    id: int
    name: str
    lines: list[Line]
    event_names: list[str]  # dense metadata index -> name
    event_display_names: list[str]
    event_metadata_ids: np.ndarray  # dense index -> original XEventMetadata id
    stat_names: list[str]  # dense stat key -> name
    strings: list[str]  # string ids used by STR/BYTES/REF stat values
    metadata_stats: StatTable  # owner = dense event metadata index
    stats: dict[str, object]  # plane-level stats, decoded (few)
    #: raw values of the BYTES metadata stats (``metadata_stats`` rows of kind BYTES index it)
    blobs: list[bytes] = field(default_factory=list)
    _stat_keys: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._stat_keys = {n: i for i, n in enumerate(self.stat_names)}
        for line in self.lines:
            line.plane = self

    @property
    def gpu_id(self) -> int | None:
        """The N of ``/device:GPU:N``, or None for other planes."""
        m = _GPU_PLANE.match(self.name)
        return int(m.group(1)) if m else None

    @property
    def num_events(self) -> int:
        return sum(len(line) for line in self.lines)

    def stat_key(self, name: str) -> int | None:
        return self._stat_keys.get(name)

    def string(self, sid: int) -> str | None:
        return self.strings[sid] if 0 <= sid < len(self.strings) else None

    def metadata_int_stat(self, name: str, default: int = MISSING) -> np.ndarray | None:
        """Per-metadata int/string-id column of stat ``name``, or None if no metadata has it."""
        key = self.stat_key(name)
        if key is None:
            return None
        rows = self.metadata_stats.rows(key)
        rows = rows[self.metadata_stats.kind[rows] != _BYTES]  # a blob index is no int nor string id
        if rows.size == 0:
            return None
        col = np.full(len(self.event_names), default, dtype=np.int64)
        col[self.metadata_stats.owner[rows]] = self.metadata_stats.value[rows]
        return col

    def metadata_blobs(self, name: str) -> list[tuple[int, bytes]]:
        """(dense event metadata index, raw bytes) of each event metadata whose stat ``name`` is a bytes value,
        e.g. the ``Hlo Proto`` of each XLA module on ``/host:metadata``."""
        key = self.stat_key(name)
        if key is None:
            return []
        ms = self.metadata_stats
        rows = ms.rows(key)
        rows = rows[ms.kind[rows] == _BYTES]
        return [(int(ms.owner[r]), self.blobs[int(ms.value[r])]) for r in rows if 0 <= ms.value[r] < len(self.blobs)]

    def line(self, name: str) -> Line | None:
        return next((ln for ln in self.lines if ln.name == name), None)


@dataclass
class Timeline:
    """Everything read from one ``<host>.xplane.pb``."""

    host: str
    path: str
    size_bytes: int
    planes: list[Plane]
    hostnames: list[str]
    errors: list[str]
    warnings: list[str]
    time_base_ns: int = 0  # subtracted from absolute line timestamps (see reader._Clock)

    @property
    def num_events(self) -> int:
        return sum(p.num_events for p in self.planes)

    def gpu_planes(self) -> list[Plane]:
        """GPU planes sorted by GPU id."""
        gpus = [p for p in self.planes if p.gpu_id is not None]
        return sorted(gpus, key=lambda p: p.gpu_id)  # type: ignore[arg-type,return-value]

    def plane(self, name: str) -> Plane | None:
        return next((p for p in self.planes if p.name == name), None)

    def host_planes(self) -> Iterator[Plane]:
        """``/host:CPU`` and, in older captures, ``/host:CUPTI``."""
        return (p for p in self.planes if p.name.startswith("/host:"))
