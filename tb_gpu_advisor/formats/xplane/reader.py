"""Read one ``<host>.xplane.pb`` into a columnar :class:`~tb_gpu_advisor.formats.xplane.timeline.Timeline`.

How (and why this way): the XSpace top level is streamed from the file one
plane at a time (``wire.stream_top_level_fields``), so the whole file is
never in memory; each plane is read straight into one zero-padded numpy
buffer (``wire.read_padded``: the only copy of its bytes we make).  upb,
protobuf's C parser, parses the plane's metadata and each line's scalar
fields through the "lazy" views of ``schema``, which keep events
as ``bytes``: we take only their lengths.  The events are then decoded
where they lie in the plane's buffer -- their positions follow from the
lengths, every header checked (``wire.locate_repeated``) -- for a batch of
events at once by ``wire.decode_messages``; a line laid out otherwise
(fields interleaved with its events) falls back to joining upb's event
bytes into a buffer of their own.

Measured on the 100 MB benchmark capture (2.42 M events, CPU time, median
of 3): 1.03 s and 194 MB peak RSS for the read, against 1.85 s and 263 MB
when each event went through a ``bytes`` object that was joined and copied
into a fresh buffer per batch (the 1 GB capture: 11.4 s against 19.7 s).
Finding the event boundaries without upb -- lock-step numpy walkers over a
line's bytes, re-synchronised and checked -- measured 3x slower than
upb's lengths (0.59 s against 0.20 s on 1.7 M events) and was dropped.  A
full upb parse plus a Python walk into the same columns was 2.4x slower
than the column-wise design even before these changes and holds 6.6x the
file in memory (``docs/benchmarks.md``).

Metadata (event names, stat names: thousands, not millions) is parsed by
upb into messages and converted with plain Python.

The compiled decoder (``_cwire.c``, optional: ``compiled.py``) does the
same work in C where it is built: it splits a plane's lines and a line's
events off without upb (upb parses only the other fields), and decodes each
batch of events and their stats into the same columns, in the same order,
without the GIL (the string interning after it is shared).  The Python path
above stays the reference: anything the C walk does not fully understand
(groups, over-long varints, a length past its message) is handed back to
it, so both paths give the same Timeline or the same error
(``tests/formats/test_xplane_compiled.py``).  Measured on the 100 MB
captures, the read with the analysis's stat pruning: 0.49-0.59x the Python
path's CPU (dense: 0.66 -> 0.39 s; ``docs/benchmarks.md``).

Both cores (issue #38): with the compiled decoder, the C walk of a plane's
lines and batches runs on a worker thread a couple of batches ahead of the
Python that interns and joins them (``common/ahead.py``: the same items in
the same order, so the same columns and errors), and a plane of up to a
quarter of the file is read from the file while the plane before it is
decoded (``wire.stream_top_level_fields``' ``ahead_bytes``): at most one
plane more in memory.  Dense 100 MB capture, read alone with the second
core idle: 0.49 s -> 0.30 s of wall time, CPU unchanged; with another
process on that core, no gain (``docs/benchmarks.md``).  Planes of 1 MB up
to a quarter of the file are decoded two at a time on a thread pool
(:class:`_PlanePool`), settled in file order with their clock calls
replayed, so the planes, time base and first error are a serial read's.
"""

from __future__ import annotations

import array
import io
import math
import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import closing
from typing import BinaryIO, NamedTuple

import numpy as np

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.common.ahead import cores, run_ahead
from tb_gpu_advisor.common.memory import share_one_heap
from tb_gpu_advisor.formats.base import LIMIT_HINT, human_size, max_profile_bytes
from tb_gpu_advisor.formats.xplane import compiled, viewer_json, wire
from tb_gpu_advisor.formats.xplane.layout import viewer_json_host
from tb_gpu_advisor.formats.xplane.schema import DECODE_ERRORS
from tb_gpu_advisor.formats.xplane.schema import parse as parse_message
from tb_gpu_advisor.formats.xplane.timeline import Line, Plane, StatTable, Timeline, ValueKind
from tb_gpu_advisor.model.columns import int_dtype, unique_inverse
from tb_gpu_advisor.model.damage import Damage, attach, cut, unreadable
from tb_gpu_advisor.model.idtable import IdTable

_STR, _REF = int(ValueKind.STR), int(ValueKind.REF)  # plain ints: compared with int8 kind columns
_XSTAT_VALUE_FIELDS = {  # XStat field number -> (ValueKind, wire type)
    2: (ValueKind.DOUBLE, wire.FIXED64),
    3: (ValueKind.UINT, wire.VARINT),
    4: (ValueKind.INT, wire.VARINT),
    5: (ValueKind.STR, wire.LEN),
    6: (ValueKind.BYTES, wire.LEN),
    7: (ValueKind.REF, wire.VARINT),
}


class CorruptProfileError(ValueError):
    """The file is well-formed protobuf but holds values no capture can have (reported as a ProfileReadError)."""


class ProfileReadError(Exception):
    """A profile file could not be read; the message says which file and why."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


_human_size = human_size


def host_name(path: str) -> str:
    """Host name of a profile file, as the stock tool shows it (file name minus suffix)."""
    base = path.rstrip("/").rsplit("/", 1)[-1]
    if base.endswith(".xplane.pb"):
        return base[: -len(".xplane.pb")]
    return viewer_json_host(base) or base


def read_timeline(path: str, max_bytes: int | None = None, keep_stats: frozenset[str] | None = None) -> Timeline:
    """Read ``path`` (local or any gfile path) into a :class:`Timeline`.

    ``keep_stats``: event stat names to keep (None: all).  The analysis
    passes the few it reads, so the others are neither decoded into strings
    nor stored -- column pruning, as columnar file readers do.  Plane stats,
    metadata stats and stat *names* (``Plane.stat_key``) are always kept.

    Raises :class:`ProfileReadError` for missing, empty, oversized, truncated
    or non-XSpace files.  ``max_bytes`` None: :func:`max_profile_bytes`.
    """
    if max_bytes is None:
        max_bytes = max_profile_bytes()
    if not fsio.is_remote(path) and os.path.isdir(fsio.local_path(path)):
        # os.path.getsize() succeeds on a directory; say what is wrong instead of "Errno 21".
        raise ProfileReadError(path, "is a directory, not a <host>.xplane.pb file")
    try:
        n = fsio.size(path)
    except Exception as e:  # noqa: BLE001 - every file-system error becomes one clear error
        raise ProfileReadError(path, f"cannot open: {e}") from e
    if n == 0:
        raise attach(ProfileReadError(path, "file is empty (was the capture interrupted?)"),
                     cut("empty_file", "the file is empty", offset=0))
    if n > max_bytes:
        raise ProfileReadError(
            path, f"file is {_human_size(n)}, over the {_human_size(max_bytes)} limit ({LIMIT_HINT})"
        )
    try:
        stream = fsio.open_binary(path)
    except Exception as e:  # noqa: BLE001
        raise ProfileReadError(path, f"cannot read: {e}") from e
    with stream:
        if viewer_json.is_viewer_json(path):  # TensorFlow 2.2's session: its trace viewer JSON, no XPlane beside it
            try:
                raw = viewer_json.space_bytes(viewer_json.load(stream.read(), max_bytes), host_name(path))
            except viewer_json.NotViewerJson as e:
                raise ProfileReadError(path, str(e)) from e
            return _parse(io.BytesIO(raw), len(raw), path, keep_stats)
        return _parse(stream, n, path, keep_stats)


def parse_timeline(raw: bytes, path: str = "<bytes>") -> Timeline:
    """Decode XSpace bytes already in memory."""
    return _parse(io.BytesIO(raw), len(raw), path, None)


def _parse(stream: BinaryIO, size: int, path: str, keep_stats: frozenset[str] | None) -> Timeline:
    """Decode an XSpace from ``stream``, one plane in memory at a time.

    The top level of an XSpace is a handful of fields (planes, host names),
    read here straight from the file; each plane's bytes are read when it is
    decoded (or, up to a quarter of the file, while the plane before it is) and
    dropped after, so the whole file is never held in memory.
    """
    try:
        clock = _Clock()
        texts: dict[int, list[str]] = {n: [] for n in _SPACE_TEXT_FIELDS}
        seen = 0
        ahead = size // _READ_AHEAD_SHARE if cores() > 1 else 0
        if ahead:
            share_one_heap()  # planes read ahead are allocated in the main heap (see common/memory.py)
        kept = _KeptPlanes(clock)
        with closing(wire.stream_top_level_fields(stream, size, frozenset({_SPACE_PLANES}), ahead)) as fields, \
                _PlanePool(clock, keep_stats, kept, _pool_budget(size)) as pool:
            for number, value in fields:
                if number == _SPACE_PLANES:
                    if not isinstance(value, np.ndarray):  # e.g. ``08 00``: field 1 written as a varint
                        raise CorruptProfileError("XSpace field 1 (planes) is not a message")
                    seen += 1
                    if seen > MAX_TOTAL_PLANES:  # 25 us per skipped empty plane: 4M in 100 MB would take 100 s
                        raise CorruptProfileError(f"more than {MAX_TOTAL_PLANES} planes: not the capture of one host")
                    pool.add(value)
                    del value
                elif number in texts and isinstance(value, bytes):
                    texts[number].append(value.decode("utf-8", "replace"))
            pool.finish()
        planes, dropped = kept.planes, kept.dropped
    except CorruptProfileError as e:
        raise ProfileReadError(path, f"not a valid XSpace profile: {e}") from e
    except (OSError, *DECODE_ERRORS, wire.WireError, UnicodeDecodeError, ValueError, OverflowError) as e:
        if "alloc failed" in str(e):  # protobuf's parser ran out of memory ("Arena alloc failed"): not a damaged file
            raise MemoryError(f"out of memory while parsing the profile: {e}") from e
        raise attach(ProfileReadError(path, f"not a readable XSpace profile (truncated or foreign file): {e}"),
                     _wire_damage(e, stream)) from e
    warnings = texts[3]
    if dropped:
        warnings = warnings + [f"tb-gpu-advisor: {dropped} planes without events beyond the first {MAX_EMPTY_PLANES} were skipped"]
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
        warnings=warnings,
        time_base_ns=clock.base_ns,
    )


#: A plane of up to this share of the file is read while the one before it is decoded (``wire``'s
#: ``ahead_bytes``): the read's peak holds at most a quarter of the file more, and a plane of ~1 GB planes is read
#: as before.
_READ_AHEAD_SHARE = 4
#: Planes without events kept per file; the rest are skipped (a host has a few devices, not thousands).
MAX_EMPTY_PLANES = 64
#: Planes with events a file may hold: one host's devices are far fewer; a file with more is refused.
MAX_PLANES = 1024
#: Planes of any kind (with or without events) a file may hold; one more and the file is refused, so
#: skipping empty planes costs at most ~0.2 s whatever the file's size.
MAX_TOTAL_PLANES = 8192
#: Planes up to this size are checked for events before upb parses them (once MAX_EMPTY_PLANES is reached).
_SMALL_PLANE_BYTES = 4096


def _wire_damage(error: Exception, stream: BinaryIO) -> Damage:
    """What a protobuf the reader could not decode is: a cut where the file ends inside a top-level field
    (:class:`~tb_gpu_advisor.formats.protowire.WireTruncated`, at the byte read to where known), else bytes that do
    not decode as the XSpace's fields (a corrupt or foreign file)."""
    if isinstance(error, wire.WireTruncated):
        try:
            at: int | None = int(stream.tell())
        except (OSError, ValueError, AttributeError):
            at = None
        return cut("protobuf_truncated", f"the protobuf ends inside a field: {error}", offset=at)
    return unreadable("protobuf_invalid", f"the protobuf does not decode: {error}")


def _surely_empty(buf: np.ndarray) -> bool:
    """True when the small plane in ``buf`` has no line with an event (a cheap walk, no upb parse)."""
    n = buf.shape[0] - wire.PAD
    if n > _SMALL_PLANE_BYTES:
        return False
    data = memoryview(buf)[:n]
    try:
        for num, wt, _, start, end in wire.walk_fields(data, 0, n):
            if num == _PLANE_LINES and wt == 2:
                if any(f == _LINE_EVENTS for f, *_ in wire.walk_fields(data, start, end)):
                    return False
    except wire.WireError:
        return False  # let upb and the reader report it
    return True


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
        ids_a = np.asarray(ids, dtype=np.int64)
        keys_a = np.asarray(keys, dtype=np.int64)
        self._all = IdTable(ids_a, keys_a, -1)
        if keep is None:
            self._kept = self._all
        else:
            kept_name = np.fromiter((n in keep for n in self.names), dtype=bool, count=len(self.names))
            self._kept = IdTable(ids_a, np.where(kept_name[keys_a], keys_a, -1) if self.names else keys_a, -1)
        #: the kept stats held as columns (:data:`COLUMN_STATS`)
        self.column_keys = frozenset(by_name[n] for n in COLUMN_STATS if n in by_name and (keep is None or n in keep))

    def lookup(self, metadata_ids: np.ndarray) -> np.ndarray:
        """Dense keys of the stats to keep; -1 for ids with no metadata or not kept."""
        return self._kept.lookup(metadata_ids)

    def table(self) -> np.ndarray | None:
        """:meth:`lookup` as one int64 array indexed by metadata id (its last slot answering every other id), for
        the compiled decoder to look keys up and drop pruned stats itself; None where the ids are not dense."""
        dense = self._kept.dense
        return None if dense is None else np.ascontiguousarray(dense, dtype=np.int64)

    def resolve(self, metadata_ids: np.ndarray) -> np.ndarray:
        """Dense keys for every id with metadata (ref_value targets); -1 for unknown ids."""
        return self._all.lookup(metadata_ids)


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

    def start_ps(self, timestamp_ns: int, offset_ps: np.ndarray, duration_ps: np.ndarray) -> np.ndarray:
        """Event start times in ps from the file's origin, checked (:func:`_check_times`)."""
        if not self.base_ns and abs(timestamp_ns) > self._LIMIT_NS:
            self.base_ns = timestamp_ns
        return _check_times((timestamp_ns - self.base_ns) * 1000, offset_ps, duration_ps)


#: Event times (ps from the file's time origin) and durations must lie within this: ~11.6 days, far beyond
#: any capture, and small enough that an event's end and the difference of any two times fit in int64
#: (an int64-max duration made ``metrics/kernels.py`` raise OverflowError).
MAX_TIME_PS = 10**18


def _check_times(line_ps: int, offset_ps: np.ndarray, duration_ps: np.ndarray) -> np.ndarray:
    """``line_ps + offset_ps``, after checking that no start, end or duration leaves ``+-MAX_TIME_PS``.

    Checked in an order where nothing can wrap: |line_ps| and |offset| <= M, so |start| <= 2M; then
    0 <= duration <= M, so end <= 3M < 2**63.  The caller gives ``offset_ps`` up: the starts are written over it
    (a line's offsets, starts and ends were three columns at once, 16 bytes an event over the line's columns at
    the read's peak; the ends are now taken a block at a time).
    """
    if offset_ps.size == 0:
        return offset_ps
    lo, hi = int(offset_ps.min()), int(offset_ps.max())
    if abs(line_ps) > MAX_TIME_PS or lo < -MAX_TIME_PS or hi > MAX_TIME_PS:
        raise CorruptProfileError(f"event times out of range (line at {line_ps} ps, offsets {lo}..{hi} ps)")
    dlo, dhi = int(duration_ps.min()), int(duration_ps.max())
    if dlo < 0 or dhi > MAX_TIME_PS:
        raise CorruptProfileError(f"event durations out of range ({dlo}..{dhi} ps)")
    start = offset_ps if offset_ps.flags.writeable else offset_ps.copy()
    start += line_ps
    if abs(int(start.min())) > MAX_TIME_PS or _max_end(start, duration_ps) > MAX_TIME_PS:
        raise CorruptProfileError("event times out of range (over 11 days from the capture's start)")
    return start


#: Events whose ends are summed at a time by :func:`_max_end`.
_END_BLOCK = 1 << 18


def _max_end(start: np.ndarray, duration: np.ndarray) -> int:
    """The latest ``start + duration``, a block at a time (no whole column of ends)."""
    return max(int((start[a : a + _END_BLOCK] + duration[a : a + _END_BLOCK]).max())
               for a in range(0, start.shape[0], _END_BLOCK))


class _KeptPlanes:
    """The planes kept, in file order, with the serial read's counts of empty and dropped planes."""

    def __init__(self, clock: _Clock) -> None:
        self.clock = clock
        self.planes: list[Plane] = []
        self.empty = 0
        self.dropped = 0

    def skips(self, value: np.ndarray) -> bool:
        """True (and counted) for a small plane with no event once MAX_EMPTY_PLANES are kept: 100k empty planes in
        2 MB took 58 s, so it is skipped before upb parses it."""
        if self.empty >= MAX_EMPTY_PLANES and _surely_empty(value):
            self.dropped += 1
            return True
        return False

    def keep(self, plane: Plane, size: int) -> None:
        """Keep ``plane`` (decoded from ``size`` bytes) unless it is one empty plane too many."""
        if not any(len(ln) for ln in plane.lines):
            self.empty += 1
            if self.empty > MAX_EMPTY_PLANES:
                self.dropped += 1
                return
        self.planes.append(plane)
        if len(self.planes) > MAX_PLANES:
            raise CorruptProfileError(f"more than {MAX_PLANES} planes with events: not the capture of one host")
        # no trim here: what a plane's decoding freed is reused by the next plane's (common/memory.py)


class _DeferredClock(_Clock):
    """The clock of a plane decoded out of turn (:class:`_PlanePool`): the file's time base may still be set by a
    plane before it, so each line's call is recorded, its offsets left as they are, and replayed in file order on
    the real clock (:meth:`replay`) -- the same calls, in the same order, as a serial read makes."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[int, np.ndarray, np.ndarray]] = []

    def start_ps(self, timestamp_ns: int, offset_ps: np.ndarray, duration_ps: np.ndarray) -> np.ndarray:
        self.calls.append((timestamp_ns, offset_ps, duration_ps))
        return offset_ps

    def replay(self, clock: _Clock, plane: Plane | None) -> None:
        """Each recorded call on ``clock``, in order (raising the serial read's time error, if any); the starts
        into ``plane``'s lines (None: the decode failed after these calls, its error is raised next)."""
        calls, self.calls = self.calls, []
        starts = [clock.start_ps(*c) for c in calls]
        if plane is not None:
            if len(starts) != len(plane.lines):
                raise AssertionError("a line without its clock call")
            for line, start in zip(plane.lines, starts):
                line.start_ps = start


class _OutOfTurn(NamedTuple):
    """A plane decoded by :class:`_PlanePool`: the plane or the error that ended its decode, and its clock calls."""

    plane: Plane | None
    error: BaseException | None
    clock: _DeferredClock


def _decode_out_of_turn(value: np.ndarray, keep_stats: frozenset[str] | None) -> _OutOfTurn:
    """Decode the plane in ``value`` with a deferred clock; an error is returned, to be raised in file order."""
    clock = _DeferredClock()
    try:
        return _OutOfTurn(_read_plane(value, clock, keep_stats), None, clock)
    except Exception as e:  # noqa: BLE001 - raised by the reader at this plane's turn (:meth:`_PlanePool._settle`)
        return _OutOfTurn(None, e, clock)


#: Threads that decode planes (issue #38: one big file uses every core).  1 (the pool off) by measurement: on this
#: 2-core VM, whole `report` processes with the cache off, 2 workers against 1 (docs/benchmarks.md, "h38-wall,
#: measured again by the lead"): 100 MB stats shape peak 155-159 MB against 135-138 MB (1.53x the file against 1.33x:
#: over the 1.5x target), CPU 1.0-2.1 s against 0.93-0.98 s user (a third of the runs doubled), wall no shorter; 1 GB
#: dense wall 12.5-14.3 s against 13.1-13.4 s, peak the same.  The pool stays, tested, for a machine with cores to
#: spare (set 2 to try it).
PLANE_WORKERS = 1


def _pool_budget(size: int) -> int:
    """Bytes of plane buffers that may be decoding at once: a quarter of the file (as ``_READ_AHEAD_SHARE``), so
    the read's peak holds at most that much more than a serial read; 0 (serial) with one core."""
    return size // _READ_AHEAD_SHARE if cores() > 1 and PLANE_WORKERS > 1 else 0


class _PlanePool:
    """Decodes big planes on :data:`PLANE_WORKERS` threads, and keeps them in file order.

    Each plane is decoded with a :class:`_DeferredClock` and settled in file order: its clock calls replayed on
    the real clock, then its error raised or the plane kept -- so the planes, time base and first error are those
    of a serial read.  A plane is decoded out of turn only while the planes decoding hold at most ``budget`` bytes
    in all.  A plane bigger than ``budget`` (the 1 GB dense capture's 521 MB host plane: beside it the read's peak
    would pass 1.5x the file), and a small one (under ``wire.AHEAD_MIN_BYTES``: the empty-plane counts it may be
    skipped by must be the serial read's), waits for every plane before it and is decoded in the reader's thread.
    """

    def __init__(self, clock: _Clock, keep_stats: frozenset[str] | None, kept: _KeptPlanes, budget: int) -> None:
        self.clock, self.keep_stats, self.kept, self.budget = clock, keep_stats, kept, budget
        self.pending: deque[tuple[Future, int]] = deque()  # (decode, plane bytes), in file order
        self.executor: ThreadPoolExecutor | None = None
        self.failed = False  # a settled plane raised: the planes after it are never settled

    def __enter__(self) -> _PlanePool:  # noqa: PYI034 - a private class, never subclassed
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is not None and issubclass(exc_type, Exception) and not self.failed:
                # the read stopped past pending planes (a truncated file, too many planes): a serial read would
                # have raised an error of one of those first (an interrupt stays an interrupt)
                self.finish()
        finally:
            for fut, _ in self.pending:
                fut.cancel()
            self.pending.clear()
            if self.executor is not None:
                self.executor.shutdown(wait=True)  # no decode outlives the read (it reads the plane buffers)

    def add(self, value: np.ndarray) -> None:
        """Decode the plane in ``value``: on the pool, or here once the planes before it are settled."""
        n = value.shape[0]
        if n < wire.AHEAD_MIN_BYTES or n > self.budget:  # small, or too big to decode beside another
            self.finish()
            if not self.kept.skips(value):
                self.kept.keep(_read_plane(value, self.clock, self.keep_stats), n)
            return
        while self.pending and (len(self.pending) >= PLANE_WORKERS or self._busy_bytes() + n > self.budget):
            self._wait_one()
        if self.executor is None:
            self.executor = ThreadPoolExecutor(PLANE_WORKERS, thread_name_prefix="xplane-plane")
        self.pending.append((self.executor.submit(_decode_out_of_turn, value, self.keep_stats), n))

    def finish(self) -> None:
        """Settle every plane still pending, in order."""
        while self.pending:
            self._settle()

    def _busy_bytes(self) -> int:
        return sum(n for fut, n in self.pending if not fut.done())

    def _wait_one(self) -> None:
        """Settle the planes at the head that are done; if none is, wait until one of the pending is."""
        if not self.pending[0][0].done():
            wait([f for f, _ in self.pending], return_when=FIRST_COMPLETED)
        while self.pending and self.pending[0][0].done():
            self._settle()

    def _settle(self) -> None:
        fut, n = self.pending.popleft()
        self.failed = True
        decoded = fut.result()
        decoded.clock.replay(self.clock, decoded.plane)
        if decoded.error is not None:
            raise decoded.error
        self.kept.keep(decoded.plane, n)
        self.failed = False


def _read_plane(buf: np.ndarray, clock: _Clock, keep_stats: frozenset[str] | None = None) -> Plane:
    """Decode one plane held in ``buf`` (its bytes followed by ``wire.PAD`` zeros)."""
    msg, line_bufs = _plane_fields(buf)
    keys = _StatKeys(msg.stat_metadata, keep_stats)
    strings = _Strings()

    entries = sorted(msg.event_metadata, key=lambda e: e.key)
    meta_ids = np.asarray([e.key for e in entries], dtype=np.int64)
    # an event named only by its display name (the name empty: a writer or converter that fills the one the trace viewer
    # shows) is named by it -- unnamed, a JAX capture's steps and eager ops went unread (session h37-meta57's
    # ``dispname`` rewrite); xprof's visitor shows the display name where set, else the name
    event_names = [e.value.name or e.value.display_name for e in entries]
    display_names = [e.value.display_name for e in entries]
    blobs: list[bytes] = []
    meta_stats = _stats_from_messages(
        ((i, st) for i, e in enumerate(entries) for st in e.value.stats), keys, strings, blobs
    )
    plane_stats = {
        keys.id_to_name.get(st.metadata_id, f"#{st.metadata_id}"): _stat_value(st, keys)
        for st in msg.stats
    }
    # A NaN or infinite device property (compute capability, memory size...) is no value: drop it.
    plane_stats = {k: v for k, v in plane_stats.items() if not (isinstance(v, float) and not math.isfinite(v))}
    names = IdTable(meta_ids, np.arange(meta_ids.size), missing=meta_ids.size)  # unknown: one past the table
    plane_id, plane_name = msg.id, msg.name
    # upb's parse holds its own copy of the plane's bytes (the lines, as bytes fields) in the message's
    # arena: as big as ``buf``, and dead once the lines are located.  Dropped here, before the lines are
    # decoded: the dense 100 MB benchmark capture's read peaked 50 MB higher with it alive.
    del msg, entries
    # No heap is handed back between lines: the next line's decode reuses the freed temporaries (same sizes, the
    # decode runs in batches), so a trim here only made the next line fault the same pages in again -- 34 calls
    # and ~0.3 s of system time on the dense 100 MB capture, with the same peak (the trim after the plane stays).
    lines = _read_lines(line_bufs, names, keys, strings, clock)
    del line_bufs
    _release_scratch()  # the compiled decoder's, kept between batches: none of it lives on into the analysis
    # Events whose metadata id is unknown point one past the table: give them a name.
    if any((ln.name_id == len(event_names)).any() for ln in lines):
        event_names.append("<unknown event metadata>")
        display_names.append("")
    return Plane(
        id=plane_id,
        name=plane_name,
        lines=lines,
        event_names=event_names,
        event_display_names=display_names,
        event_metadata_ids=meta_ids,
        stat_names=keys.names,
        strings=strings.values,
        metadata_stats=meta_stats,
        stats=plane_stats,
        blobs=blobs,
    )


def _plane_fields_python(buf: np.ndarray) -> tuple[object, list[tuple[np.ndarray, int, int]]]:
    """upb's parse of the plane in ``buf`` (lines kept as ``bytes``) and (buffer, start, end) of each line."""
    msg = parse_message("LazyPlane", memoryview(buf)[: buf.shape[0] - wire.PAD])
    return msg, _line_buffers(buf, msg)


def _plane_fields_compiled(buf: np.ndarray) -> tuple[object, list[tuple[np.ndarray, int, int]]]:
    """:func:`_plane_fields_python` with the lines split off by the C walk: upb parses only the rest (metadata,
    plane stats), so it never copies the lines' bytes (as big as the plane).  A plane the walk declines goes
    to the Python path."""
    n = buf.shape[0] - wire.PAD
    split = _CWIRE.split_repeated(buf, n, 0, n, _PLANE_LINES)
    if split is None:
        return _plane_fields_python(buf)
    head, starts, lengths, _ = split
    try:
        msg = parse_message("LazyPlane", head)
    except DECODE_ERRORS:  # upb refuses the plane's other fields: its parse of the whole plane says why, in its words
        return _plane_fields_python(buf)
    ranges = zip(np.frombuffer(starts, dtype=np.int64).tolist(), np.frombuffer(lengths, dtype=np.int64).tolist())
    return msg, [(buf, s, s + ln) for s, ln in ranges]


def _stat_value(st, keys: _StatKeys) -> object:
    if st.ref_value:
        return keys.id_to_name.get(st.ref_value, "")
    for name in ("str_value", "bytes_value", "double_value", "int64_value", "uint64_value"):
        v = getattr(st, name)
        if v:
            return v
    return 0


def _stats_from_messages(items, keys: _StatKeys, strings: _Strings, blobs: list[bytes]) -> StatTable:
    """StatTable from (owner, XStat message) pairs -- for the few metadata stats.

    A ``bytes_value`` stays bytes: its row (kind BYTES) indexes ``blobs``.  Metadata bytes are binary
    protos (XLA's ``Hlo Proto`` of each module on ``/host:metadata``, up to megabytes): decoded as text they
    would be garbage, and the HLO reader (``hlo.py``) needs them whole.
    """
    owner, mid, kind, value = [], [], [], []
    for own, st in items:
        owner.append(own)
        mid.append(st.metadata_id)
        if st.ref_value:
            kind.append(ValueKind.REF)
            value.append(strings.intern(keys.id_to_name.get(st.ref_value, "")))
        elif st.bytes_value:
            kind.append(ValueKind.BYTES)
            value.append(len(blobs))
            blobs.append(st.bytes_value)
        elif st.str_value:
            kind.append(ValueKind.STR)
            value.append(strings.intern(st.str_value))
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


#: Events decoded per batch at most: bounds the decoder's temporary arrays (~100 bytes
#: per event) whatever the line's size.
EVENT_CHUNK = 1 << 16
#: Serialized event bytes per batch at most.  The temporaries grow with an event's stats, not its count: an XLA
#: capture's kernels carry a dozen stats each (~150 bytes an event), and a 64k-event batch of them took ~90 MB of
#: temporaries -- a real 13 MB JAX capture peaked at 142 MiB in its read (74 MiB with batches of 1 MB; measured
#: 0.5-4 MB in docs/benchmarks.md).
BATCH_BYTES = 1 << 20


def _batches(lengths: np.ndarray) -> list[tuple[int, int]]:
    """``[a, b)`` bounds of consecutive events (their serialized ``lengths``) in batches of at most
    :data:`EVENT_CHUNK` events and, past the first event of each, :data:`BATCH_BYTES` bytes."""
    n = int(lengths.shape[0])
    if n <= EVENT_CHUNK and int(lengths.sum()) <= BATCH_BYTES:
        return [(0, n)] if n else []
    ends = np.cumsum(lengths, dtype=np.int64)
    out, a = [], 0
    while a < n:
        base = int(ends[a - 1]) if a else 0
        b = int(np.searchsorted(ends, base + BATCH_BYTES, side="right"))
        b = min(max(b, a + 1), a + EVENT_CHUNK, n)
        out.append((a, b))
        a = b
    return out

_PLANE_LINES = 3  # XPlane.lines
_LINE_EVENTS = 4  # XLine.events
_EVENTS_TAG = _LINE_EVENTS << 3 | 2
#: Fields before a line's first event beyond which the walk gives up (falls back):
#: TensorFlow writes 3 (id, name, timestamp_ns).
_MAX_FIELDS_BEFORE_EVENTS = 64
#: Plane fields walked to find its lines before giving up (falling back): TensorFlow
#: writes the lines right after the plane's id and name.
_MAX_PLANE_FIELDS_WALKED = 4096


def _line_buffers(buf: np.ndarray, msg) -> list[tuple[np.ndarray, int, int]]:
    """(buffer, start, end) of each serialized XLine of the plane in ``buf`` (upb-parsed as ``msg``).

    Lines are located in the plane's own buffer, so their events are
    decoded in place.  A plane whose lines cannot be found by a short walk
    (see :func:`_line_ranges`) gets the previous treatment: each line copied
    out of upb's ``bytes``.
    """
    data = memoryview(buf)[: buf.shape[0] - wire.PAD]
    ranges = _line_ranges(data, len(msg.lines))
    if ranges is not None:
        return [(buf, s, e) for s, e in ranges]
    return [(wire.padded(raw), 0, len(raw)) for raw in msg.lines]


def _line_ranges(data: memoryview, n_lines: int) -> list[tuple[int, int]] | None:
    """(start, end) of each serialized XLine in a plane's bytes, or None if not found near the front.

    Stops as soon as it has the ``n_lines`` lines upb counted (plane field 3, length-delimited).
    """
    if n_lines == 0:
        return []
    found = _length_delimited(data, 0, len(data), _PLANE_LINES, n_lines, _MAX_PLANE_FIELDS_WALKED)
    return None if found is None else [(start, end) for _, start, end in found]


def _length_delimited(data: memoryview, start: int, end: int, number: int, want: int,
                      max_fields: int) -> list[tuple[int, int, int]] | None:
    """(field start, payload start, payload end) of the first ``want`` length-delimited fields ``number`` in
    ``data[start:end]``: a Python walk of the top-level fields (``wire.walk_fields``) for the few fields
    around the big repeated ones.  None when they are not all within the first ``max_fields`` fields, or
    when the walk meets a field it does not skip (a group: upb knows better) -- the callers then fall back.
    """
    found: list[tuple[int, int, int]] = []
    try:
        for k, (num, wt, field_start, payload_start, payload_end) in enumerate(wire.walk_fields(data, start, end)):
            if num == number and wt == 2:
                found.append((field_start, payload_start, payload_end))
                if len(found) == want:
                    return found
            if k >= max_fields:
                return None
    except wire.WireError:
        return None
    return None


#: Items of the C walk (a line's header, a batch's raw columns) produced ahead of the reader's Python on a second
#: core (``common/ahead.py``); 0: none, everything in the reader's thread.  Two keep the worker busy while the
#: reader interns a batch and bound what waits to ~2 batches' columns (a few MB: ``BATCH_BYTES`` of events each).
WALK_AHEAD = 2


def _read_lines(line_bufs: list[tuple[np.ndarray, int, int]], names: IdTable, keys: _StatKeys, strings: _Strings,
                clock: _Clock) -> list[Line]:
    """Each line of a plane, in order.  With the compiled decoder, its C walk of the lines (which releases the GIL)
    runs on a second core ahead of the interning and joining here (which hold it): the same items in the same
    order, so the same columns and the same errors as one thread."""
    if _line_events is not _line_events_compiled or WALK_AHEAD <= 0 or len(line_bufs) == 0:
        return [_read_line(b, s, e, names, keys, strings, clock) for b, s, e in line_bufs]
    with closing(run_ahead(_line_walks_compiled(line_bufs, keys.table()), WALK_AHEAD, name="xplane-walk")) as stream:
        return [_read_line(b, s, e, names, keys, strings, clock, _one_line(stream)) for b, s, e in line_bufs]


def _read_line(
    buf: np.ndarray, start: int, end: int, names: IdTable, keys: _StatKeys, strings: _Strings, clock: _Clock,
    walk: Iterator[object] | None = None,
) -> Line:
    """Decode the XLine at ``buf[start:end]``; its events are decoded in place in ``buf``.

    Events with no field set (``22 00``: nothing to analyse) never reach the decoder and never cost a row,
    and a line made mostly of them is walked without upb (:func:`_walk_sparse_line`): upb's list of event
    lengths costs ~40 bytes per event, 20x the 2 bytes such an event takes in the file (a 10 MB file of
    them peaked at 262 MB in the read alone).
    """
    if walk is None:
        msg, parts = _line_events(buf, start, end, keys, strings)
    else:
        msg, parts = _line_events_compiled(buf, start, end, keys, strings, walk)
    # the batches' columns are joined one column at a time, each batch's part dropped as it is joined: the
    # batches and the line's columns were otherwise alive together (twice the line's decoded size)
    offsets = np.cumsum([0] + [len(p[0]) for p in parts[:-1]]).tolist()
    meta, offset, duration, stats = (list(c) for c in zip(*parts)) if parts else ([], [], [], [])
    del parts
    # int16 where the plane names fewer than 32k events (every capture seen): 2 bytes an event, as the host table;
    # looked up batch by batch, so the line's int64 ids and their lookup's temporaries are never whole columns, and
    # written straight into the line's column: no per-batch column to join after (faulted in and copied once more)
    name_dtype = int_dtype(0, names.missing, floor=np.int16)
    name_id = np.empty(sum(m.shape[0] for m in meta), dtype=name_dtype)
    at = 0
    for k, m in enumerate(meta):
        name_id[at : at + m.shape[0]] = names.lookup(m)  # every id fits: ``names.missing`` is the largest
        at += m.shape[0]
        meta[k] = None
    duration_ps = _concat_dropping(duration)
    return Line(
        id=msg.id,
        name=msg.name,
        display_name=msg.display_name,
        timestamp_ns=msg.timestamp_ns,
        start_ps=clock.start_ps(msg.timestamp_ns, _concat_dropping(offset), duration_ps),
        duration_ps=duration_ps,
        name_id=name_id,
        **_split_batches(stats, offsets, keys.column_keys, len(name_id)),
    )


#: Stats that nearly every event of their lines carries: a kernel's ``kernel_details`` string (every kernel of a GPU
#: line, in every TF and JAX capture seen) and the ``correlation_id`` of every launch and every kernel.  Held as one
#: narrow column per line (a string id or the number; 1-4 bytes an event: a kernel repeats a few launch
#: configurations, ids fit int32) instead of a stat row each (11 bytes): ``kernel_details`` was ~160 MB of the read's
#: peak on a dense 1 GB capture, ``correlation_id`` ~40 MB of the timeline at 100 MB.  Only where every row of the stat
#: on the line is a string or a reference, or every row an integer >= 0 (so -1 can mean absent); :class:`Line`'s
#: readers answer the same either way.
COLUMN_STATS = frozenset({"kernel_details", "correlation_id"})

_UINT, _INT, _BYTES = int(ValueKind.UINT), int(ValueKind.INT), int(ValueKind.BYTES)
assert _UINT + 1 == _INT and _INT < _STR < _BYTES < _REF == _STR + 2  # the kind ranges _split_columns tests


def _split_columns(stats: StatTable, column_keys: frozenset[int], n: int) -> dict[str, object]:
    """``Line`` fields ``stats``, ``columns`` and ``number_columns``: the rows of ``column_keys`` moved out of
    ``stats`` into one column each (-1 where the event lacks it; of two rows for one event the later wins, as in
    :meth:`Line.int_stat`): string ids where every row is a string or reference, numbers where every row is an
    integer >= 0 (a negative or a double keeps the rows)."""
    columns: dict[int, np.ndarray] = {}
    numbers: set[int] = set()
    drop = None
    for key in column_keys:
        rows = stats.rows(key)
        if not rows.size:
            continue
        kinds = stats.kind[rows]
        lo, hi = int(kinds.min()), int(kinds.max())  # UINT, INT are 2, 3; STR, BYTES, REF 4, 5, 6
        values = stats.value[rows]
        if lo >= _STR and hi <= _REF and not (lo <= _BYTES <= hi and (kinds == _BYTES).any()):
            pass
        elif lo >= _UINT and hi <= _INT and int(values.min()) >= 0:
            numbers.add(key)
        else:
            continue
        dtype = int_dtype(-1, int(values.max()), floor=np.int8)
        if n * dtype.itemsize > rows.size * _row_bytes(stats):  # a stat few events carry: its rows are smaller
            numbers.discard(key)
            continue
        col = np.full(n, -1, dtype=dtype)
        col[stats.owner[rows]] = values
        columns[key] = col
        drop = np.zeros(len(stats), dtype=bool) if drop is None else drop
        drop[rows] = True
    if drop is not None:
        # a line whose every stat became a column (a GPU's kernels) takes no gathers: empty copies of its dtypes
        pick = (lambda a: a[:0].copy()) if drop.all() else (lambda a, keep=~drop: a[keep])
        stats = StatTable(owner=pick(stats.owner), key=pick(stats.key), kind=pick(stats.kind), value=pick(stats.value))
    return {"stats": stats, "columns": columns, "number_columns": frozenset(numbers)}


def _split_batches(tables: list[StatTable], offsets: list[int], column_keys: frozenset[int], n: int
                   ) -> dict[str, object]:
    """``_split_columns(_concat_stats(tables, offsets), column_keys, n)``, a batch at a time: the rows that become
    columns are never joined, and each test and gather runs over a batch's rows (in cache) instead of the line's.

    Why: on a dense capture nearly every stat row becomes a column; joining them first and splitting the joined
    table was two passes over 11 bytes a row of the whole line (a 2.8 M-event line at 1 GB).  The answer is the
    same, dtypes included: the decision for a stat is the line's (every batch's rows, the joined table's row size),
    an event's rows are all in its batch, and batches join in order, so the later of two rows still wins.
    """
    if len(tables) <= 1 or not column_keys:
        return _split_columns(_concat_stats(tables, offsets), column_keys, n)
    row_bytes = sum(np.result_type(*(getattr(t, f) for t in tables)).itemsize for f in ("owner", "key", "kind", "value"))
    moved = [np.zeros(len(t), dtype=bool) for t in tables]
    columns: dict[int, np.ndarray] = {}
    numbers: set[int] = set()
    for key in column_keys:
        sel = [t.key == key for t in tables]
        count = sum(int(np.count_nonzero(m)) for m in sel)
        if not count:
            continue
        kinds = [t.kind[m] for t, m in zip(tables, sel) if m.any()]
        values = [t.value[m] for t, m in zip(tables, sel)]
        lo, hi = min(int(k.min()) for k in kinds), max(int(k.max()) for k in kinds)
        vmin, vmax = min(int(v.min()) for v in values if v.size), max(int(v.max()) for v in values if v.size)
        if lo >= _STR and hi <= _REF and not (lo <= _BYTES <= hi and any((k == _BYTES).any() for k in kinds)):
            number = False
        elif lo >= _UINT and hi <= _INT and vmin >= 0:
            number = True
        else:
            continue
        dtype = int_dtype(-1, vmax, floor=np.int8)
        if n * dtype.itemsize > count * row_bytes:  # as _split_columns: a stat few events carry stays rows
            continue
        col = np.full(n, -1, dtype=dtype)
        for t, m, v, off, done in zip(tables, sel, values, offsets, moved):
            if v.size:
                col[t.owner[m].astype(np.int64) + off] = v
                done |= m
        columns[key] = col
        if number:
            numbers.add(key)
    kept = [t if not m.any() else StatTable(owner=t.owner[~m], key=t.key[~m], kind=t.kind[~m], value=t.value[~m])
            for t, m in zip(tables, moved)]
    return {"stats": _concat_stats(kept, offsets), "columns": columns, "number_columns": frozenset(numbers)}


def _row_bytes(stats: StatTable) -> int:
    """Bytes one row of ``stats`` takes (owner, key, kind, value)."""
    return sum(a.dtype.itemsize for a in (stats.owner, stats.key, stats.kind, stats.value))


def _line_events_python(buf: np.ndarray, start: int, end: int, keys: _StatKeys,
                        strings: _Strings) -> tuple[_LineHeader, list[_Decoded]]:
    """The line's own fields and its decoded non-empty events, batch by batch: the pure-Python reference."""
    walked = _walk_sparse_line(buf, start, end) if _mostly_empty_events(buf, start, end) else None
    if walked is not None:
        head, ev_start, ev_len = walked
        msg = _header(parse_message("LazyLine", head))
        parts = _decode_located(buf, ev_start, ev_len, keys, strings)
    else:
        msg, lengths = _header_and_lengths(memoryview(buf)[start:end])
        parts = _decode_line_events(buf, start, end, lengths, keys, strings)
    return msg, parts


def _line_events_compiled(buf: np.ndarray, start: int, end: int, keys: _StatKeys, strings: _Strings,
                          walk: Iterator[object] | None = None) -> tuple[_LineHeader, list[_Decoded]]:
    """:func:`_line_events_python` by the compiled decoder (``_cwire.c``): the same header, batches and columns.

    The C walk of the line replaces upb's (a ``bytes`` object per event) and the column-wise numpy decode; upb
    still parses the line's own fields (``head``: its id, names, timestamp), as before.  ``walk``: the items of
    :func:`_line_walk_compiled` for this line, produced ahead on another core (:func:`_read_plane`); None: walked
    here, batch by batch as they are asked for.  A line the C walk declines anywhere (anything malformed or
    unusual, in the line or in a batch of its events) is decoded again, whole, by the Python path, which gives its
    own result or its own error, word for word (re-interning the strings of the batches decoded before gives them
    the ids they already have: the same strings in the same order).
    """
    items = walk if walk is not None else _line_walk_compiled(buf, start, end, keys.table())
    msg = next(items)
    parts: list[_Decoded] = []
    if msg is not None:
        for out in items:
            if out is None:
                break
            parts.append(_columns_compiled(buf, out, keys, strings))
        else:
            return msg, parts
    for _ in items:  # the rest of this line's items: the stream is left at the next line
        pass
    del parts
    return _line_events_python(buf, start, end, keys, strings)


def _line_walk_compiled(buf: np.ndarray, start: int, end: int, key_table: np.ndarray | None = None
                        ) -> Iterator[object]:
    """The C half of :func:`_line_events_compiled`: the line's header, then each batch's raw columns from
    ``decode_events``; None in place of either where the C walk declines (nothing follows it).

    It reads ``buf`` only and shares no state with the strings and stat keys the batches are interned into, so
    it may run ahead on another thread.  Batches are cut where the Python path cuts them -- over every event when
    it finds them in place, over the non-empty ones otherwise -- because string ids are assigned batch by batch.
    ``key_table`` (``_StatKeys.table``, read only): the C walk drops the stats the reader prunes and gives the others'
    keys; None: every stat, with its metadata id.
    """
    if _mostly_empty_events(buf, start, end):
        # the Python walk skips each run of empty events in one match; the C split would keep two int64 positions
        # per 2-byte empty event (8x the line: a hostile file of them cost 5.5x the file at the read's peak)
        yield None
        return
    limit = buf.shape[0] - wire.PAD
    # the C walk cuts the batches itself (``_batches``' rule, over the events the Python path batches) and keeps
    # only each batch's byte span, not two int64 positions per event: 32 bytes an event less at the read's peak
    walked = _CWIRE.split_line(buf, limit, start, end, EVENT_CHUNK, BATCH_BYTES)
    if walked is None:
        yield None
        return
    head, spans = walked
    try:
        msg = _header(parse_message("LazyLine", head))
    except DECODE_ERRORS:
        yield None
        return
    yield msg
    bounds = np.frombuffer(spans, dtype=np.int64).tolist()
    # the batches' offsets and durations are written straight into the line's two columns (``_join`` then finds
    # them joined): no column per batch, faulted in and copied once more
    total = sum(bounds[2::3])
    offset, duration = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64)
    at = 0
    for k in range(0, len(bounds), 3):
        out = _CWIRE.decode_span(buf, limit, bounds[k], bounds[k + 1], offset, duration, at, key_table)
        if out is None:
            yield None
            return
        n = bounds[k + 2]
        yield out, offset[at : at + n], duration[at : at + n], key_table is not None
        at += n


def _line_walks_compiled(line_bufs: list[tuple[np.ndarray, int, int]], key_table: np.ndarray | None = None
                         ) -> Iterator[object]:
    """:func:`_line_walk_compiled` of each line in turn, each line's items closed by :data:`_LINE_END`."""
    for b, s, e in line_bufs:
        yield from _line_walk_compiled(b, s, e, key_table)
        yield _LINE_END


#: Closes one line's items in the stream of :func:`_line_walks_compiled`.
_LINE_END = object()


def _one_line(stream: Iterator[object]) -> Iterator[object]:
    """The items of the stream's next line (up to its :data:`_LINE_END`, which is consumed)."""
    for item in stream:
        if item is _LINE_END:
            return
        yield item


def _columns_compiled(buf: np.ndarray, item: tuple, keys: _StatKeys, strings: _Strings) -> _Decoded:
    """A batch's columns from ``decode_span``'s raw output and the batch's slices of the line's offsets and
    durations (which it wrote): the stats interned in order (the GIL's half)."""
    out, offset, duration, keyed = item
    meta, _, _, owner, mid, v_row, v_raw, v_start, field_bounds = out
    values = _ValueRecords(np.frombuffer(v_row, dtype=np.int32), np.frombuffer(field_bounds, dtype=np.int64).tolist(),
                           np.frombuffer(v_raw, dtype=np.uint64), np.frombuffer(v_start, dtype=np.int64))
    ids = np.frombuffer(mid, dtype=np.int64)
    stats = _stat_table(buf, np.frombuffer(owner, dtype=np.int32), None if keyed else ids, values, keys, strings,
                        _content_groups_compiled, key=ids if keyed else None)
    return np.frombuffer(meta, dtype=np.int64), offset, duration, stats


def _content_groups_compiled(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``wire._content_groups`` by the C hash table (each group's first range its representative)."""
    reps, group = _CWIRE.content_groups(buf, buf.shape[0] - wire.PAD, np.ascontiguousarray(starts, dtype=np.int64),
                                        np.ascontiguousarray(lengths, dtype=np.int64))
    return np.frombuffer(reps, dtype=np.int64), np.frombuffer(group, dtype=np.int64)


class _ValueRecords:
    """The XStat value fields the compiled decoder found, answering ``select`` as ``wire.FieldGroups`` does.

    The C decoder orders the records by field number first, so each field's records are one slice (``bounds``:
    where field ``_FIRST_VALUE_FIELD + f`` starts and ends): no search of every record per field.  ``start``
    holds the payload starts of the length-delimited fields' records only (one run, from their first record)."""

    def __init__(self, row: np.ndarray, bounds: list[int], raw: np.ndarray, start: np.ndarray) -> None:
        self.row, self.bounds, self.raw, self.start = row, bounds, raw, start
        self.first_len = bounds[min(n for n, (_, wt) in _XSTAT_VALUE_FIELDS.items() if wt == wire.LEN)
                                - _FIRST_VALUE_FIELD]

    def select(self, number: int, wire_type: int) -> wire.Fields:
        """Records of value field ``number`` (the C decoder keeps only those of their schema's wire type)."""
        a, b = self.bounds[number - _FIRST_VALUE_FIELD], self.bounds[number - _FIRST_VALUE_FIELD + 1]
        if wire_type == wire.LEN:
            start = self.start[a - self.first_len : b - self.first_len]
        else:
            start = wire.Fields.empty().start
        return wire.Fields(self.row[a:b], self.raw[a:b], start)


_FIRST_VALUE_FIELD = min(_XSTAT_VALUE_FIELDS)  # XStat.double_value (2); the value fields run to ref_value (7)


#: The compiled decoder module, or None (not built, or ``TB_GPU_ADVISOR_PURE_PYTHON``): the one place the path
#: is chosen, for the whole process (``compiled.describe`` says which).
_CWIRE = compiled.load()
_line_events = _line_events_compiled if _CWIRE is not None else _line_events_python
_plane_fields = _plane_fields_compiled if _CWIRE is not None else _plane_fields_python
_release_scratch = _CWIRE.release_scratch if _CWIRE is not None else (lambda: None)


def _concat_dropping(arrays: list[np.ndarray]) -> np.ndarray:
    """The arrays joined (one array, or consecutive slices of one that they cover: that one, no copy); the list
    is emptied, so each is freed once joined."""
    out = arrays[0] if len(arrays) == 1 else _joined_base(arrays) if arrays else None
    if out is None:
        out = _concat(arrays)
    arrays.clear()
    return out


def _joined_base(arrays: list[np.ndarray]) -> np.ndarray | None:
    """The 1-d array that ``arrays`` are consecutive, contiguous slices of and cover whole, or None (the
    compiled walk writes a line's batches into the line's columns: they are joined already)."""
    base = arrays[0].base
    if not isinstance(base, np.ndarray) or base.ndim != 1 or base.dtype != arrays[0].dtype:
        return None
    pos = base.__array_interface__["data"][0]
    for a in arrays:
        if a.base is not base or a.ndim != 1 or not a.flags.c_contiguous or a.__array_interface__["data"][0] != pos:
            return None
        pos += a.nbytes
    return base if pos == base.__array_interface__["data"][0] + base.nbytes else None


def _concat_stats(tables: list[StatTable], owner_offsets: list[int]) -> StatTable:
    """``StatTable.concat`` a column at a time, each batch's column dropped once joined."""
    if len(tables) <= 1:
        return tables[0] if tables else StatTable.empty()
    for t, off in zip(tables, owner_offsets):  # in place: the batches' tables are the caller's to give up
        t.owner += np.int32(off)
    owner = _concat_dropping([t.owner for t in tables])
    for t in tables:
        t.owner = None  # type: ignore[assignment]
    columns = {}
    for name in ("key", "kind", "value"):
        columns[name] = _concat_dropping([getattr(t, name) for t in tables])
        for t in tables:
            setattr(t, name, None)
    return StatTable(owner=owner, **columns)


_Decoded = tuple[np.ndarray, np.ndarray, np.ndarray, StatTable]


def _decode_located(buf: np.ndarray, ev_start: np.ndarray, ev_len: np.ndarray, keys: _StatKeys,
                    strings: _Strings) -> list[_Decoded]:
    """Decode the events at ``buf[ev_start:ev_start+ev_len]`` in batches (:func:`_batches`)."""
    return [_decode_events(buf, ev_start[a:b], ev_len[a:b], keys, strings) for a, b in _batches(ev_len)]


class _LineHeader(NamedTuple):
    """A line's own fields, kept once upb's message (and the copy of the events it holds) is dropped."""

    id: int
    name: str
    display_name: str
    timestamp_ns: int


def _header(msg) -> _LineHeader:
    return _LineHeader(msg.id, msg.name, msg.display_name, msg.timestamp_ns)


def _header_and_lengths(line: memoryview) -> tuple[_LineHeader, np.ndarray]:
    """The line's own fields and its events' lengths, from upb; upb's message dies here.

    Why: upb's parse holds a copy of every event's bytes and a 16-byte view of each (~45 bytes per event on
    a dense GPU stream), and was alive while the events were decoded: 29 MB of a 210k-kernel stream's read.
    """
    msg = parse_message("LazyLine", line)
    return _header(msg), np.fromiter(map(len, msg.events), dtype=np.int64, count=len(msg.events))


def _decode_line_events(buf: np.ndarray, start: int, end: int, lengths: np.ndarray, keys: _StatKeys,
                        strings: _Strings) -> list[_Decoded]:
    """The non-empty events of the line at ``buf[start:end]`` (their lengths from upb), decoded batch by batch.

    Fast path: the events lie back to back in ``buf`` (as every protobuf writer puts them); each batch's
    positions follow from the lengths and are verified (``wire.locate_repeated``), so the events are decoded
    in the plane's buffer without copying, and only one batch's positions exist at a time.  Otherwise (fields
    interleaved with the events) upb parses the line again and its events are joined into a buffer of their
    own: one copy.
    """
    if lengths.shape[0] == 0:
        return []
    first = _first_field(memoryview(buf), start, end, _LINE_EVENTS)
    if first is not None:
        parts = _decode_in_place(buf, first, lengths, keys, strings)
        if parts is not None:
            return parts
    joined = wire.padded(b"".join(parse_message("LazyLine", memoryview(buf)[start:end]).events))
    starts = np.cumsum(lengths) - lengths
    kept = lengths > 0
    return _decode_located(joined, starts[kept], lengths[kept], keys, strings)


def _decode_in_place(buf: np.ndarray, first: int, all_lengths: np.ndarray, keys: _StatKeys,
                     strings: _Strings) -> list[_Decoded] | None:
    """Decode the back-to-back events of ``all_lengths`` whose first header is at ``buf[first]``, a batch at a
    time; None when they are not back to back (the caller falls back)."""
    parts: list[_Decoded] = []
    pos = first
    for a, b in _batches(all_lengths):
        lengths = all_lengths[a:b]
        starts = wire.locate_repeated(buf, pos, _EVENTS_TAG, lengths)
        if starts is None:
            return None
        pos = int(starts[-1] + lengths[-1])
        kept = lengths > 0
        if not kept.all():  # empty events (all fields default) say nothing: never decoded, no row
            starts, lengths = starts[kept], lengths[kept]
        if lengths.shape[0]:
            parts.append(_decode_events(buf, starts, lengths, keys, strings))
    return parts


#: A line whose ``22 00`` byte pairs (an empty event's whole record) make up at least this share of its bytes
#: is walked without upb (:func:`_walk_sparse_line`).  TensorFlow writes no empty event; in real events the pair
#: is as rare as in random bytes (~1 in 65k), so a real line never comes near.
_EMPTY_SHARE = 1 / 16
_EMPTY_WORD = 0x0022  # the pair read as a little-endian uint16
#: Bytes of a line copied at a time while its empty-event pairs are counted.
_COUNT_BLOCK = 1 << 20


def _mostly_empty_events(buf: np.ndarray, start: int, end: int) -> bool:
    """True when ``22 00`` pairs make up at least :data:`_EMPTY_SHARE` of ``buf[start:end]`` (counted a
    block at a time with numpy: bounded memory, ~25 ms per 100 MB)."""
    if end - start < 1024:
        return False
    if _CWIRE is not None:  # the same count in one C pass (~0.01 s per 100 MB less)
        pairs = _CWIRE.empty_event_pairs(buf, buf.shape[0] - wire.PAD, start, end)
        return 2 * pairs >= _EMPTY_SHARE * (end - start)
    pairs = 0
    for a in range(start, end, _COUNT_BLOCK):
        # one byte of overlap, so a pair across two blocks is counted (a pair cannot overlap itself)
        block = buf[a : min(a + _COUNT_BLOCK + 1, end)]
        pairs += int(np.count_nonzero((block[:-1] == 0x22) & (block[1:] == 0)))
    return 2 * pairs >= _EMPTY_SHARE * (end - start)


def _walk_sparse_line(buf: np.ndarray, start: int, end: int) -> tuple[bytes, np.ndarray, np.ndarray] | None:
    """(the line's fields other than events, serialized; payload starts and lengths of its non-empty events)
    of the XLine at ``buf[start:end]``, by a Python walk that skips each run of empty events in one regex match.

    For lines made mostly of empty events: memory is one entry per *non-empty* event, time one step per run
    of empty events plus one per other field.  None on anything unusual (a group, a truncated field): upb then
    parses the line and reports it.
    """
    data = memoryview(buf)
    head: list[bytes] = []
    ev_start, ev_len = array.array("q"), array.array("q")
    i = start
    try:
        while i < end:
            if data[i] == _EVENTS_TAG and i + 1 < end and data[i + 1] < 0x80:  # an event with a 1-byte length
                n = data[i + 1]
                if n == 0:  # empty: a short run is stepped over here, a long one by numpy
                    i = _skip_empty_run(data, buf, i + 2, end)
                    continue
                if i + 2 + n <= end:
                    ev_start.append(i + 2)
                    ev_len.append(n)
                    i += 2 + n
                    continue
            number, wt, field_start, payload_start, payload_end = next(wire.walk_fields(data, i, end))
            if number == _LINE_EVENTS and wt == 2:
                if payload_end > payload_start:
                    ev_start.append(payload_start)
                    ev_len.append(payload_end - payload_start)
            else:
                head.append(bytes(data[field_start:payload_end]))
            i = payload_end
    except wire.WireError:
        return None
    return b"".join(head), np.frombuffer(ev_start, dtype=np.int64), np.frombuffer(ev_len, dtype=np.int64)


#: Empty events stepped over one by one before the rest of their run is left to :func:`_empty_run_end`.
_SHORT_RUN = 32


def _skip_empty_run(data: memoryview, buf: np.ndarray, i: int, end: int) -> int:
    """Position after the empty-event records (``22 00``) from ``data[i]`` on: a few in Python, a long run in numpy."""
    for _ in range(_SHORT_RUN):
        if i + 1 >= end or data[i] != _EVENTS_TAG or data[i + 1] != 0:
            return i
        i += 2
    return _empty_run_end(buf, i, end)


def _empty_run_end(buf: np.ndarray, i: int, end: int) -> int:
    """Where the run of empty-event records (``22 00`` pairs) at ``buf[i]`` ends: compared as uint16 words in
    blocks that grow from 64 pairs (a short run costs one small comparison, a 5M-pair run a few dozen)."""
    block = 64
    last = end - (end - i) % 2  # pairs only: an odd last byte is no record
    while i < last:
        stop = min(last, i + 2 * block)
        other = buf[i:stop].view("<u2") != _EMPTY_WORD
        if other.any():
            return i + 2 * int(other.argmax())
        i = stop
        block = min(2 * block, 1 << 19)
    return i


def _first_field(data: memoryview, start: int, end: int, number: int) -> int | None:
    """Position of the first length-delimited field ``number`` in ``data[start:end]`` (None: not near the front)."""
    found = _length_delimited(data, start, end, number, 1, _MAX_FIELDS_BEFORE_EVENTS)
    return None if found is None else found[0][0]


def _concat(arrays: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)


def _decode_events(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray, keys: _StatKeys, strings: _Strings):
    """(metadata_id, offset_ps, duration_ps, stats) of a batch of serialized XEvents at ``buf[starts:starts+lengths]``."""
    n = starts.shape[0]
    fields = wire.decode_messages(buf, starts, starts + lengths)
    stats = _decode_stats(buf, fields.select(4, wire.LEN), keys, strings)
    return wire.last_value(fields, 1, n), wire.last_value(fields, 2, n), wire.last_value(fields, 3, n), stats


def _decode_stats(buf: np.ndarray, stat_fields: wire.Fields, keys: _StatKeys, strings: _Strings) -> StatTable:
    """Decode the XStat sub-messages of many events at once."""
    n = stat_fields.msg.shape[0]
    if n == 0:
        return StatTable.empty()
    starts = stat_fields.start
    f = wire.decode_messages(buf, starts, starts + stat_fields.value.astype(np.int64))
    return _stat_table(buf, stat_fields.msg, wire.last_value(f, 1, n), f, keys, strings)


def _stat_table(buf: np.ndarray, owner: np.ndarray, metadata_ids: np.ndarray | None, f, keys: _StatKeys,
                strings: _Strings, groups=None, key: np.ndarray | None = None) -> StatTable:
    """The StatTable of stats owned by ``owner`` with ``metadata_ids``, their value fields in ``f`` (anything
    with ``select(number, wire_type)``): shared by the Python and the compiled decoders (``groups``: the
    grouping of equal strings ``wire.intern_ranges`` uses, None for its own)."""
    n = owner.shape[0]
    if n == 0:
        return StatTable.empty()
    if key is None:  # else the compiled decoder looked the keys up and dropped the pruned stats already
        key = keys.lookup(metadata_ids)
    if (key < 0).all():
        return StatTable.empty()
    kind = np.zeros(n, dtype=np.int8)
    value = np.zeros(n, dtype=np.int64)  # ints as is, doubles as their bits, strings as ids
    kept = key >= 0
    pruned = not kept.all()
    for number, (vkind, wire_type) in _XSTAT_VALUE_FIELDS.items():
        sel = f.select(number, wire_type)  # a value field of another wire type is unknown to protobuf too
        if sel.msg.size and pruned:  # pruned stats: no string decoding, no interning
            sel = sel.subset(kept[sel.msg])
        if sel.msg.size == 0:
            continue
        kind[sel.msg] = vkind
        if vkind in (ValueKind.DOUBLE, ValueKind.INT, ValueKind.UINT):
            value[sel.msg] = sel.value.view(np.int64)
        elif vkind == ValueKind.REF:
            # by counting (the keys index the plane's stat names), not np.unique's sort: a sort per batch of
            # ``kernel_details`` references was ~30% of the batches' Python on a dense capture
            ref_keys, inverse = unique_inverse(keys.resolve(sel.value.view(np.int64)))
            ids = np.asarray([strings.intern(keys.names[k] if k >= 0 else "") for k in ref_keys.tolist()], dtype=np.int64)
            value[sel.msg] = ids[inverse.ravel()]
        else:  # STR / BYTES: each distinct string decoded once
            value[sel.msg] = wire.intern_ranges(buf, sel.start, sel.value.astype(np.int64), strings.intern, groups)
    if pruned:
        owner, key, kind, value = owner[kept], key[kept], kind[kept], value[kept]
    return StatTable(owner=owner.astype(np.int32), key=key.astype(_key_dtype(keys)), kind=kind,
                     value=_narrow_values(kind, value))


_DOUBLE_KIND = int(ValueKind.DOUBLE)  # a plain int: an array compared with an IntEnum member goes through the enum


def _key_dtype(keys: _StatKeys) -> type:
    """int16 stat keys where the plane names fewer than 32k stats (always, in practice): 2 bytes a stat."""
    return np.int16 if len(keys.names) < np.iinfo(np.int16).max else np.int32


def _narrow_values(kind: np.ndarray, value: np.ndarray) -> np.ndarray:
    """``value`` as int32 where no row holds a double (read back through its int64 bits) and every value fits.

    Why: stats are the bulk of a timeline (1.3 per event on a dense capture), and nearly all are ids --
    correlation ids, string ids -- that need 4 bytes, not 8; batches with doubles keep int64 (joined batches
    then widen to it).
    """
    if value.size == 0 or (kind == _DOUBLE_KIND).any():
        return value
    lo, hi = int(value.min()), int(value.max())
    info = np.iinfo(np.int32)
    return value.astype(np.int32) if info.min <= lo and hi <= info.max else value
