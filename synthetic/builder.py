"""A deterministic XSpace writer shaped like a current TensorFlow GPU capture.

Low level (this module): :class:`SpaceBuilder` -> :class:`PlaneBuilder` ->
:class:`LineBuilder`.  Events are appended into compact ``array`` columns
(no protobuf object per event) and encoded in bulk by :mod:`.encode`, so a
100 MB file takes seconds.  Plane/line headers and metadata (few) go through
the regular protobuf classes of :mod:`tb_gpu_advisor.formats.xplane.schema`.

The TensorFlow-shaped layer (threads, step markers, launches, kernels,
memcpys) is :mod:`.tfcapture`.
"""

from __future__ import annotations

import struct
from array import array
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

import numpy as np

from synthetic import encode as enc
from tb_gpu_advisor.formats.xplane.schema import message_class

#: Events encoded per batch: bounds temporary memory (~ rows x ~150 bytes x 2).
CHUNK = 131072


class Kind(Enum):
    """How a stat value is stored on the wire (the XStat oneof case)."""

    INT = 4
    UINT = 3
    DOUBLE = 2
    STR = 5
    REF = 7


#: Value types of stats in real TF captures (docs/profile-format.md); others
#: are inferred from the Python value (int -> INT, float -> DOUBLE, str -> STR).
STAT_KINDS: dict[str, Kind] = {
    "correlation_id": Kind.UINT,
    "kernel_details": Kind.REF,
    "memcpy_details": Kind.STR,
    "tf_op": Kind.STR,
    "shape": Kind.STR,
    "long_name": Kind.STR,
    "context_id": Kind.STR,
    "_p": Kind.UINT,
    "_c": Kind.UINT,
    "device_vendor": Kind.STR,
    "gpu_device_name": Kind.STR,
}


def _kind_of(name: str, value: object) -> Kind:
    if name in STAT_KINDS:
        return STAT_KINDS[name]
    if isinstance(value, float):
        return Kind.DOUBLE
    if isinstance(value, str):
        return Kind.STR
    return Kind.INT


@dataclass
class _StatColumn:
    """One stat of one line: which events carry it and their values."""

    kind: Kind
    owner: array = field(default_factory=lambda: array("q"))
    # INT/UINT: the value; DOUBLE: float bits; STR/REF: index into the line's string table.
    value: array = field(default_factory=lambda: array("q"))


class LineBuilder:
    """One thread or stream; events kept as columns until encoded."""

    def __init__(self, plane: "PlaneBuilder", line_id: int, name: str, timestamp_ns: int, display_name: str = ""):
        self.plane = plane
        self.id = line_id
        self.name = name
        self.display_name = display_name
        self.timestamp_ns = timestamp_ns
        self.meta = array("q")
        self.start_ps = array("q")
        self.duration_ps = array("q")
        self.stats: dict[str, _StatColumn] = {}
        self._strings: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.meta)

    def _string(self, s: str) -> int:
        sid = self._strings.get(s)
        if sid is None:
            sid = self._strings[s] = len(self._strings)
        return sid

    def _column(self, name: str, value: object) -> _StatColumn:
        col = self.stats.get(name)
        if col is None:
            col = self.stats[name] = _StatColumn(_kind_of(name, value))
            self.plane.stat_id(name)
        return col

    def _encode_value(self, col: _StatColumn, value: object) -> int:
        if col.kind in (Kind.STR, Kind.REF):
            return self._string(str(value))
        if col.kind == Kind.DOUBLE:
            return struct.unpack("<q", struct.pack("<d", float(value)))[0]
        v = int(value)  # type: ignore[arg-type]
        return v - (1 << 64) if v >= 1 << 63 else v

    def add(self, name: str, start_ps: int, duration_ps: int, /, **stats: object) -> int:
        """Append one event (absolute start in ps since profile start); returns its index."""
        idx = len(self.meta)
        self.meta.append(self.plane.event_id(name))
        self.start_ps.append(int(start_ps))
        self.duration_ps.append(int(duration_ps))
        for key, value in stats.items():
            if value is None:
                continue
            col = self._column(key, value)
            col.owner.append(idx)
            col.value.append(self._encode_value(col, value))
        return idx

    def add_many(self, names: list[str] | str, start_ps: np.ndarray, duration_ps: np.ndarray,
                 stats: dict[str, np.ndarray | list] | None = None) -> None:
        """Append many events at once; stat arrays are per event (None entries skipped for lists)."""
        n = len(start_ps)
        base = len(self.meta)
        if isinstance(names, str):
            ids = np.full(n, self.plane.event_id(names), dtype=np.int64)
        else:
            ids = np.asarray([self.plane.event_id(x) for x in names], dtype=np.int64)
        self.meta.frombytes(ids.astype(np.int64).tobytes())
        self.start_ps.frombytes(np.asarray(start_ps, dtype=np.int64).tobytes())
        self.duration_ps.frombytes(np.asarray(duration_ps, dtype=np.int64).tobytes())
        for key, values in (stats or {}).items():
            sample = next((v for v in values if v is not None), None)
            if sample is None:
                continue
            col = self._column(key, sample.item() if isinstance(sample, np.generic) else sample)
            if col.kind in (Kind.STR, Kind.REF) or isinstance(values, list):
                for i, v in enumerate(values):
                    if v is not None:
                        col.owner.append(base + i)
                        col.value.append(self._encode_value(col, v))
            else:
                arr = np.asarray(values)
                if col.kind == Kind.DOUBLE:
                    arr = arr.astype(np.float64).view(np.int64)
                else:
                    arr = arr.astype(np.uint64 if col.kind == Kind.UINT else np.int64).view(np.int64)
                col.owner.frombytes(np.arange(base, base + n, dtype=np.int64).tobytes())
                col.value.frombytes(arr.tobytes())

    def events(self) -> list[tuple[str, int, int, dict[str, object]]]:
        """Every event as (name, start ps, duration ps, stats), in the order added: what :meth:`add` was given."""
        names = {i: n for n, i in self.plane._events.items()}
        strings = {i: s for s, i in self._strings.items()}
        stats: list[dict[str, object]] = [{} for _ in range(len(self))]
        for key, col in self.stats.items():
            for owner, raw in zip(col.owner, col.value):
                value: object = raw
                if col.kind in (Kind.STR, Kind.REF):
                    value = strings[raw]
                elif col.kind == Kind.DOUBLE:
                    value = struct.unpack("<d", struct.pack("<q", raw))[0]
                elif col.kind == Kind.UINT and raw < 0:
                    value = raw + (1 << 64)
                stats[owner][key] = value
        return [(names[m], s, d, stats[i]) for i, (m, s, d) in enumerate(zip(self.meta, self.start_ps, self.duration_ps))]

    def take(self, select) -> list[tuple[str, int, int, dict[str, object]]]:  # noqa: ANN001 - a predicate
        """Remove the events ``select(name, start, dur, stats)`` picks and return them (:meth:`events`' form): another
        version of the tracer writes them elsewhere (another line or plane)."""
        every = self.events()
        taken = [e for e in every if select(*e)]
        self.meta, self.start_ps, self.duration_ps = array("q"), array("q"), array("q")
        self.stats, self._strings = {}, {}
        for e in every:
            if not select(*e):
                self.add(e[0], e[1], e[2], **e[3])
        return taken

    # -- encoding ---------------------------------------------------------

    def _order(self) -> np.ndarray:
        """Events sorted by start, longer first at equal start (parents before children)."""
        start = np.frombuffer(self.start_ps, dtype=np.int64)
        dur = np.frombuffer(self.duration_ps, dtype=np.int64)
        return np.lexsort((-dur, start))

    def encode(self) -> bytes:
        """The serialized XLine (header + events)."""
        header = message_class("XLine")(id=self.id, name=self.name, timestamp_ns=self.timestamp_ns)
        if self.display_name:
            header.display_name = self.display_name
        n = len(self.meta)
        if n:
            start = np.frombuffer(self.start_ps, dtype=np.int64)
            end = start + np.frombuffer(self.duration_ps, dtype=np.int64)
            header.duration_ps = int(end.max() - self.timestamp_ns * 1000)
        parts = [header.SerializeToString()]
        order = self._order()
        dense = self._dense_stats()
        strings = list(self._strings)
        for lo in range(0, n, CHUNK):
            parts.append(self._encode_events(order[lo : lo + CHUNK], dense, strings))
        return b"".join(parts)

    def _dense_stats(self) -> list[tuple[str, Kind, np.ndarray, np.ndarray]]:
        """Per stat: (name, kind, present[n], value[n]) in event order before sorting."""
        n = len(self.meta)
        out = []
        for name, col in self.stats.items():
            present = np.zeros(n, dtype=bool)
            value = np.zeros(n, dtype=np.int64)
            owner = np.frombuffer(col.owner, dtype=np.int64)
            present[owner] = True
            value[owner] = np.frombuffer(col.value, dtype=np.int64)
            out.append((name, col.kind, present, value))
        return out

    def _encode_events(self, idx: np.ndarray, dense, strings: list[str]) -> bytes:
        n = idx.shape[0]
        meta = np.frombuffer(self.meta, dtype=np.int64)[idx]
        offset = np.frombuffer(self.start_ps, dtype=np.int64)[idx] - self.timestamp_ns * 1000
        dur = np.frombuffer(self.duration_ps, dtype=np.int64)[idx]
        body = [
            enc.const_piece(enc.tag(1, 0), n), enc.varint_piece(meta),
            enc.const_piece(enc.tag(2, 0), n), enc.varint_piece(offset),
            enc.const_piece(enc.tag(3, 0), n), enc.varint_piece(dur),
        ]
        for name, kind, present_all, value_all in dense:
            present, value = present_all[idx], value_all[idx]
            if not present.any():
                continue
            stat = enc.join([
                enc.const_piece(enc.tag(1, 0) + enc.encode_varint(self.plane.stat_id(name)), n),
                self._value_piece(kind, value, present, strings),
            ])
            body.append(enc.mask(enc.length_delimited(4, stat), present))
        event = enc.length_delimited(4, enc.join(body))
        return enc.flatten(event)

    def _value_piece(self, kind: Kind, value: np.ndarray, present: np.ndarray, strings: list[str]) -> enc.Piece:
        n = value.shape[0]
        if kind in (Kind.INT, Kind.UINT):
            return enc.join([enc.const_piece(enc.tag(kind.value, 0), n), enc.varint_piece(value)])
        if kind == Kind.DOUBLE:
            raw = value.astype("<i8").view(np.uint8).reshape(n, 8)
            return enc.join([enc.const_piece(enc.tag(2, 1), n), enc.Piece(raw, np.ones((n, 8), dtype=bool))])
        used = np.unique(value[present])
        if kind == Kind.REF:
            ref_ids = np.zeros(max(len(strings), 1), dtype=np.int64)
            for sid in used.tolist():
                ref_ids[sid] = self.plane.stat_id(strings[sid])
            return enc.join([enc.const_piece(enc.tag(7, 0), n), enc.varint_piece(ref_ids[np.where(present, value, 0)])])
        table = [b""] * max(len(strings), 1)
        for sid in used.tolist():
            raw = strings[sid].encode("utf-8")
            table[sid] = enc.tag(5, 2) + enc.encode_varint(len(raw)) + raw
        return enc.table_piece(table, np.where(present, value, 0))


class PlaneBuilder:
    """One XPlane: metadata tables, plane stats, lines."""

    def __init__(self, plane_id: int, name: str):
        self.id = plane_id
        self.name = name
        self.lines: list[LineBuilder] = []
        self._events: dict[str, int] = {}
        self._stats: dict[str, int] = {}
        self._event_display: dict[str, str] = {}
        self._event_stats: dict[str, list[tuple[str, bytes]]] = {}
        self.plane_stats: list[tuple[str, object]] = []

    def event_id(self, name: str, display_name: str = "") -> int:
        """XEventMetadata id of ``name`` (created on first use; ids start at 1)."""
        eid = self._events.get(name)
        if eid is None:
            eid = self._events[name] = len(self._events) + 1
            if display_name:
                self._event_display[name] = display_name
        return eid

    def event_stat(self, event: str, stat: str, value: bytes) -> None:
        """A bytes stat on an event's metadata (JAX's ``Hlo Proto`` of each module on ``/host:metadata``)."""
        self.event_id(event)
        self.stat_id(stat)
        self._event_stats.setdefault(event, []).append((stat, value))

    def stat_id(self, name: str) -> int:
        """XStatMetadata id of ``name``; ref_value strings are stat metadata too."""
        sid = self._stats.get(name)
        if sid is None:
            sid = self._stats[name] = len(self._stats) + 1
        return sid

    def line(self, name: str, line_id: int | None = None, timestamp_ns: int = 0, display_name: str = "") -> LineBuilder:
        """Get or create the line called ``name``."""
        for ln in self.lines:
            if ln.name == name:
                return ln
        ln = LineBuilder(self, line_id if line_id is not None else len(self.lines) + 1, name, timestamp_ns, display_name)
        self.lines.append(ln)
        return ln

    def add_stat(self, name: str, value: object) -> None:
        """A plane-level stat (device properties, profile times)."""
        self.stat_id(name)
        self.plane_stats.append((name, value))

    def encode(self) -> bytes:
        """The serialized XPlane."""
        plane = message_class("XPlane")(id=self.id, name=self.name)
        for name, value in self.plane_stats:
            st = plane.stats.add(metadata_id=self.stat_id(name))
            kind = _kind_of(name, value)
            if kind == Kind.STR:
                st.str_value = str(value)
            elif kind == Kind.DOUBLE:
                st.double_value = float(value)  # type: ignore[arg-type]
            elif kind == Kind.UINT:
                st.uint64_value = int(value)  # type: ignore[arg-type]
            else:
                st.int64_value = int(value)  # type: ignore[arg-type]
        line_bytes = [ln.encode() for ln in self.lines]  # may add stat metadata (ref values)
        for name, eid in self._events.items():
            entry = plane.event_metadata.add(key=eid)
            entry.value.id = eid
            entry.value.name = name
            if name in self._event_display:
                entry.value.display_name = self._event_display[name]
            for stat, value in self._event_stats.get(name, ()):
                entry.value.stats.add(metadata_id=self.stat_id(stat), bytes_value=value)
        for name, sid in self._stats.items():
            entry = plane.stat_metadata.add(key=sid)
            entry.value.id = sid
            entry.value.name = name
        parts = [plane.SerializeToString()]
        for raw in line_bytes:
            parts.append(enc.tag(3, 2) + enc.encode_varint(len(raw)) + raw)
        return b"".join(parts)


class SpaceBuilder:
    """A whole XSpace (one ``<host>.xplane.pb``)."""

    def __init__(self, hostname: str = "localhost"):
        self.hostname = hostname
        self.planes: list[PlaneBuilder] = []
        #: the profiler's warnings about the capture (``XSpace.warnings``, field 3: XLA's GPU tracer writes "Detected
        #: GPU events dropped on <host>: ..." there)
        self.warnings: list[str] = []

    def plane(self, name: str) -> PlaneBuilder:
        """Get or create the plane called ``name``."""
        for p in self.planes:
            if p.name == name:
                return p
        p = PlaneBuilder(len(self.planes) + 1, name)
        self.planes.append(p)
        return p

    def encode(self) -> bytes:
        """The serialized XSpace."""
        parts = []
        for p in self.planes:
            raw = p.encode()
            parts.append(enc.tag(1, 2) + enc.encode_varint(len(raw)) + raw)
        for text in self.warnings:
            raw = text.encode()
            parts.append(enc.tag(3, 2) + enc.encode_varint(len(raw)) + raw)
        host = self.hostname.encode()
        parts.append(enc.tag(4, 2) + enc.encode_varint(len(host)) + host)
        return b"".join(parts)

    def write(self, path: str | Path) -> int:
        """Write the file (parent folders created); returns its size in bytes."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        raw = self.encode()
        path.write_bytes(raw)
        return len(raw)
