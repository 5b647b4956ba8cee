"""Read one ``<host>.xplane.pb`` into a columnar :class:`~tb_gpu_advisor.timeline.Timeline`.

How (and why this way): the XSpace top level is streamed from the file one
plane at a time (``wire.stream_top_level_fields``), so the whole file is
never in memory; upb, protobuf's C parser, splits each plane into lines and
one ``bytes`` object per event (the "lazy" views of ``xplane_schema``); the
event and stat *fields* are then decoded for a batch of events at once by
``wire.decode_messages``.  On a 1 M-event capture this takes 0.90 s, against
2.20 s for a full upb parse plus a Python walk into the same columns (which
also holds 6.6x the file in memory); see ``docs/benchmarks.md``.

Metadata (event names, stat names: thousands, not millions) is parsed by
upb into messages and converted with plain Python.
"""

from __future__ import annotations

import io
import os
from typing import BinaryIO

import numpy as np
from google.protobuf.message import DecodeError

from . import fsio, wire
from .memory import release_free_heap
from .timeline import Line, Plane, StatTable, Timeline, ValueKind
from .xplane_schema import message_class

#: Files larger than this are refused with a clear error instead of exhausting memory.
DEFAULT_MAX_BYTES = int(os.environ.get("TB_GPU_ADVISOR_MAX_PROFILE_BYTES", 8 << 30))

_XSTAT_VALUE_FIELDS = {  # XStat field number -> ValueKind
    2: ValueKind.DOUBLE,
    3: ValueKind.UINT,
    4: ValueKind.INT,
    5: ValueKind.STR,
    6: ValueKind.BYTES,
    7: ValueKind.REF,
}


class ProfileReadError(Exception):
    """A profile file could not be read; the message says which file and why."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def _human_size(n: int) -> str:
    """Size for error messages; GiB alone printed a 1 kB limit as "0.0 GiB"."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def host_name(path: str) -> str:
    """Host name of a profile file, as the stock tool shows it (file name minus suffix)."""
    base = path.rstrip("/").rsplit("/", 1)[-1]
    return base[: -len(".xplane.pb")] if base.endswith(".xplane.pb") else base


def read_timeline(path: str, max_bytes: int = DEFAULT_MAX_BYTES, keep_stats: frozenset[str] | None = None) -> Timeline:
    """Read ``path`` (local or any gfile path) into a :class:`Timeline`.

    ``keep_stats``: event stat names to keep (None: all).  The analysis
    passes the few it reads, so the others are neither decoded into strings
    nor stored -- column pruning, as columnar file readers do.  Plane stats,
    metadata stats and stat *names* (``Plane.stat_key``) are always kept.

    Raises :class:`ProfileReadError` for missing, empty, oversized, truncated
    or non-XSpace files.
    """
    if not fsio.is_remote(path) and os.path.isdir(fsio.local_path(path)):
        # os.path.getsize() succeeds on a directory; say what is wrong instead of "Errno 21".
        raise ProfileReadError(path, "is a directory, not a <host>.xplane.pb file")
    try:
        n = fsio.size(path)
    except Exception as e:  # noqa: BLE001 - every file-system error becomes one clear error
        raise ProfileReadError(path, f"cannot open: {e}") from e
    if n == 0:
        raise ProfileReadError(path, "file is empty (was the capture interrupted?)")
    if n > max_bytes:
        raise ProfileReadError(
            path, f"file is {_human_size(n)}, over the {_human_size(max_bytes)} limit "
            "(raise TB_GPU_ADVISOR_MAX_PROFILE_BYTES to read it anyway)"
        )
    try:
        stream = fsio.open_binary(path)
    except Exception as e:  # noqa: BLE001
        raise ProfileReadError(path, f"cannot read: {e}") from e
    with stream:
        return _parse(stream, n, path, keep_stats)


def parse_timeline(raw: bytes, path: str = "<bytes>") -> Timeline:
    """Decode XSpace bytes already in memory."""
    return _parse(io.BytesIO(raw), len(raw), path, None)


def _parse(stream: BinaryIO, size: int, path: str, keep_stats: frozenset[str] | None) -> Timeline:
    """Decode an XSpace from ``stream``, one plane in memory at a time.

    The top level of an XSpace is a handful of fields (planes, host names),
    read here straight from the file; each plane's bytes are read when it is
    decoded and dropped after, so the whole file is never held in memory.
    """
    try:
        clock = _Clock()
        planes: list[Plane] = []
        texts: dict[int, list[str]] = {n: [] for n in _SPACE_TEXT_FIELDS}
        for number, value in wire.stream_top_level_fields(stream, size):
            if number == _SPACE_PLANES:
                planes.append(_read_plane(value, clock, keep_stats))
                del value
                release_free_heap()
            elif number in texts and isinstance(value, bytes):
                texts[number].append(value.decode("utf-8", "replace"))
    except (OSError, DecodeError, wire.WireError, UnicodeDecodeError, ValueError, OverflowError) as e:
        raise ProfileReadError(path, f"not a readable XSpace profile (truncated or foreign file): {e}") from e
    if not planes:
        raise ProfileReadError(path, "no planes: this is not an XSpace profile, or it is empty")
    if not any(p.name for p in planes):
        # Another protobuf whose field 1 is a message (e.g. a ConfigProto's map) parses
        # as "planes"; every plane TensorFlow writes is named, so reject it here.
        raise ProfileReadError(path, "no named planes: this is another kind of protobuf, not an XSpace profile")
    return Timeline(
        host=host_name(path),
        path=path,
        size_bytes=size,
        planes=planes,
        hostnames=texts[4],
        errors=texts[2],
        warnings=texts[3],
        time_base_ns=clock.base_ns,
    )


_SPACE_PLANES = 1  # XSpace field numbers: planes=1, errors=2, warnings=3, hostnames=4
_SPACE_TEXT_FIELDS = (2, 3, 4)


class _Strings:
    """Interns string stat values of one plane."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.values: list[str] = []

    def intern(self, s: str) -> int:
        sid = self.ids.get(s)
        if sid is None:
            sid = self.ids[s] = len(self.values)
            self.values.append(s)
        return sid


class _StatKeys:
    """Maps XStatMetadata ids to dense keys, one key per distinct stat *name*.

    With ``keep``, ``lookup`` answers -1 for stats whose name is not kept (the
    reader then drops them); ``resolve`` still maps every id, because a
    ref_value points at a stat metadata entry used as a string table.
    """

    def __init__(self, stat_metadata, keep: frozenset[str] | None = None) -> None:
        self.names: list[str] = []
        by_name: dict[str, int] = {}
        self.id_to_name: dict[int, str] = {}
        ids, keys = [], []
        for entry in stat_metadata:
            name = entry.value.name
            self.id_to_name[entry.key] = name
            key = by_name.setdefault(name, len(by_name))
            if key == len(self.names):
                self.names.append(name)
            ids.append(entry.key)
            keys.append(key)
        order = np.argsort(np.asarray(ids, dtype=np.int64), kind="stable")
        self.sorted_ids = np.asarray(ids, dtype=np.int64)[order]
        self.all_keys = np.asarray(keys, dtype=np.int64)[order]
        if keep is None:
            self.kept_keys = self.all_keys
        else:
            kept_name = np.fromiter((n in keep for n in self.names), dtype=bool, count=len(self.names))
            self.kept_keys = np.where(kept_name[self.all_keys], self.all_keys, -1) if self.names else self.all_keys

    def _find(self, metadata_ids: np.ndarray, table: np.ndarray) -> np.ndarray:
        if self.sorted_ids.size == 0:
            return np.full(metadata_ids.shape, -1, dtype=np.int64)
        pos = np.clip(np.searchsorted(self.sorted_ids, metadata_ids), 0, self.sorted_ids.size - 1)
        return np.where(self.sorted_ids[pos] == metadata_ids, table[pos], -1)

    def lookup(self, metadata_ids: np.ndarray) -> np.ndarray:
        """Dense keys of the stats to keep; -1 for ids with no metadata or not kept."""
        return self._find(metadata_ids, self.kept_keys)

    def resolve(self, metadata_ids: np.ndarray) -> np.ndarray:
        """Dense keys for every id with metadata (ref_value targets); -1 for unknown ids."""
        return self._find(metadata_ids, self.all_keys)


class _Clock:
    """Picks one time origin per file so picosecond times fit in int64.

    TensorFlow saves line timestamps relative to the session start, but a
    file with absolute epoch nanoseconds (~1.7e18 ns) would overflow int64
    once multiplied to picoseconds.  Such files are re-based on their first
    large line timestamp; ``base_ns`` is recorded on the Timeline.
    """

    _LIMIT_NS = 10**15  # ~11.6 days: any sane relative capture is far below

    def __init__(self) -> None:
        self.base_ns = 0

    def start_ps(self, timestamp_ns: int, offset_ps: np.ndarray) -> np.ndarray:
        if not self.base_ns and abs(timestamp_ns) > self._LIMIT_NS:
            self.base_ns = timestamp_ns
        return (timestamp_ns - self.base_ns) * 1000 + offset_ps


def _read_plane(raw: bytes, clock: _Clock, keep_stats: frozenset[str] | None = None) -> Plane:
    msg = message_class("LazyPlane").FromString(raw)
    keys = _StatKeys(msg.stat_metadata, keep_stats)
    strings = _Strings()

    entries = sorted(msg.event_metadata, key=lambda e: e.key)
    meta_ids = np.asarray([e.key for e in entries], dtype=np.int64)
    event_names = [e.value.name for e in entries]
    display_names = [e.value.display_name for e in entries]
    meta_stats = _stats_from_messages(
        ((i, st) for i, e in enumerate(entries) for st in e.value.stats), keys, strings
    )
    plane_stats = {
        keys.id_to_name.get(st.metadata_id, f"#{st.metadata_id}"): _stat_value(st, keys)
        for st in msg.stats
    }
    lines = [_read_line(b, meta_ids, keys, strings, clock) for b in msg.lines]
    # Events whose metadata id is unknown point one past the table: give them a name.
    if any((ln.name_id == len(event_names)).any() for ln in lines):
        event_names.append("<unknown event metadata>")
        display_names.append("")
    return Plane(
        id=msg.id,
        name=msg.name,
        lines=lines,
        event_names=event_names,
        event_display_names=display_names,
        event_metadata_ids=meta_ids,
        stat_names=keys.names,
        strings=strings.values,
        metadata_stats=meta_stats,
        stats=plane_stats,
    )


def _stat_value(st, keys: _StatKeys) -> object:
    if st.ref_value:
        return keys.id_to_name.get(st.ref_value, "")
    for name in ("str_value", "bytes_value", "double_value", "int64_value", "uint64_value"):
        v = getattr(st, name)
        if v:
            return v
    return 0


def _stats_from_messages(items, keys: _StatKeys, strings: _Strings) -> StatTable:
    """StatTable from (owner, XStat message) pairs -- for the few metadata stats."""
    owner, mid, kind, value = [], [], [], []
    for own, st in items:
        owner.append(own)
        mid.append(st.metadata_id)
        if st.ref_value:
            kind.append(ValueKind.REF)
            value.append(strings.intern(keys.id_to_name.get(st.ref_value, "")))
        elif st.str_value or st.bytes_value:
            kind.append(ValueKind.STR)
            value.append(strings.intern(st.str_value or st.bytes_value.decode("utf-8", "replace")))
        elif st.double_value:
            kind.append(ValueKind.DOUBLE)
            value.append(int(np.float64(st.double_value).view(np.int64)))
        else:
            kind.append(ValueKind.INT)
            value.append(st.int64_value or int(np.uint64(st.uint64_value).view(np.int64)))
    if not owner:
        return StatTable.empty()
    key = keys.resolve(np.asarray(mid, dtype=np.int64))
    keep = key >= 0
    return StatTable(
        owner=np.asarray(owner, dtype=np.int32)[keep],
        key=key[keep].astype(np.int32),
        kind=np.asarray(kind, dtype=np.int8)[keep],
        value=np.asarray(value, dtype=np.int64)[keep],
    )


#: Events decoded per batch: bounds the decoder's temporary arrays (~100 bytes
#: per event) whatever the line's size.
EVENT_CHUNK = 1 << 18


def _read_line(raw: bytes, meta_ids: np.ndarray, keys: _StatKeys, strings: _Strings, clock: _Clock) -> Line:
    msg = message_class("LazyLine").FromString(raw)
    events = list(msg.events)  # one bytes object per event, created once
    n = len(events)
    parts = [_decode_events(events[i : i + EVENT_CHUNK], keys, strings) for i in range(0, n, EVENT_CHUNK)]
    del events
    metadata_id = _concat([p[0] for p in parts])
    if meta_ids.size:
        pos = np.clip(np.searchsorted(meta_ids, metadata_id), 0, meta_ids.size - 1)
        name_id = np.where(meta_ids[pos] == metadata_id, pos, meta_ids.size)
    else:
        name_id = np.zeros(n, dtype=np.int64)
    return Line(
        id=msg.id,
        name=msg.name,
        display_name=msg.display_name,
        timestamp_ns=msg.timestamp_ns,
        start_ps=clock.start_ps(msg.timestamp_ns, _concat([p[1] for p in parts])),
        duration_ps=_concat([p[2] for p in parts]),
        name_id=name_id.astype(np.int32),
        stats=StatTable.concat([p[3] for p in parts], [i * EVENT_CHUNK for i in range(len(parts))]),
    )


def _concat(arrays: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)


def _decode_events(events: list[bytes], keys: _StatKeys, strings: _Strings):
    """(metadata_id, offset_ps, duration_ps, stats) of a batch of serialized XEvents."""
    n = len(events)
    lengths = np.fromiter(map(len, events), dtype=np.int64, count=n)
    buf = wire.padded(b"".join(events))
    ends = np.cumsum(lengths)
    fields = wire.decode_messages(buf, ends - lengths, ends)
    stats = _decode_stats(buf, fields.select(4), keys, strings)
    return wire.last_value(fields, 1, n), wire.last_value(fields, 2, n), wire.last_value(fields, 3, n), stats


def _decode_stats(buf: np.ndarray, stat_fields: wire.Fields, keys: _StatKeys, strings: _Strings) -> StatTable:
    """Decode the XStat sub-messages of many events at once."""
    n = stat_fields.msg.shape[0]
    if n == 0:
        return StatTable.empty()
    starts = stat_fields.start
    f = wire.decode_messages(buf, starts, starts + stat_fields.value.astype(np.int64))
    key = keys.lookup(wire.last_value(f, 1, n))
    if (key < 0).all():
        return StatTable.empty()
    kind = np.zeros(n, dtype=np.int8)
    value = np.zeros(n, dtype=np.int64)  # ints as is, doubles as their bits, strings as ids
    kept = key >= 0
    for number, vkind in _XSTAT_VALUE_FIELDS.items():
        sel = f.select(number)
        if sel.msg.size and not kept.all():  # pruned stats: no string decoding, no interning
            sel = sel.subset(kept[sel.msg])
        if sel.msg.size == 0:
            continue
        kind[sel.msg] = vkind
        if vkind in (ValueKind.DOUBLE, ValueKind.INT, ValueKind.UINT):
            value[sel.msg] = sel.value.view(np.int64)
        elif vkind == ValueKind.REF:
            ref_keys, inverse = np.unique(keys.resolve(sel.value.view(np.int64)), return_inverse=True)
            ids = np.asarray([strings.intern(keys.names[k] if k >= 0 else "") for k in ref_keys.tolist()], dtype=np.int64)
            value[sel.msg] = ids[inverse.ravel()]
        else:  # STR / BYTES: each distinct string decoded once
            value[sel.msg] = wire.intern_ranges(buf, sel.start, sel.value.astype(np.int64), strings.intern)
    keep = key >= 0
    return StatTable(owner=stat_fields.msg[keep].astype(np.int32), key=key[keep].astype(np.int32), kind=kind[keep], value=value[keep])
