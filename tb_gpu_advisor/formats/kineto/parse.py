"""PyTorch profiler (Kineto) Chrome-trace JSON -> columns, in memory bounded by a chunk, not by the file.

Why not ``json.load``: a full parse builds a dict per event, 6-9x the file in memory (a 2 GB trace would
need 12-18 GB; measured in ``benchmarks/kineto_parse.py``, docs/benchmarks.md).  Instead:

1. the top-level object is read up to ``"traceEvents": [`` and parsed alone (``deviceProperties``,
   ``distributedInfo``, ``baseTimeNanoseconds`` ...); whatever follows the array is parsed the same way;
2. the array is cut into chunks of whole events (a few MB each) and each chunk is decoded on its own --
   typed with ``msgspec`` when it is installed (only the fields read become objects, ~5x faster), else
   with the stdlib -- and turned into numpy columns before the next chunk is read;
3. the typed decode's columns are built without Python code per event: each field is read by ``map`` over the
   chunk's structs, strings are interned by hashing each distinct one once, integers converted by ``array("q")``;
   only the arguments a stage reads are decoded (the shapes of the ops that keep them, lazily, once per distinct
   raw text); the structs are untracked by the garbage collector (``gc=False``), whose passes over hundreds of
   thousands of new objects cost as much as the decode;
4. past :data:`PARALLEL_AFTER` bytes, chunks are decoded by worker processes (one per CPU) and merged in file
   order, giving the serial columns exactly (a chunk whose cut fails there is read again here);
5. where the optional compiled scanner is built (``_cscan.c``, chosen in ``compiled.py``), it stands in for steps 2-3:
   a chunk's bytes straight into its columns, no object per event, the names interned per chunk, ``args`` kept as
   byte spans decoded only for the ops that keep their shapes, once per distinct shapes (``op_keys``); it hands any
   chunk it does not fully read back to the typed decode, so the columns and errors are the same.  It scans without
   the GIL, so step 4 uses threads (reading each chunk where it lies in the buffer), which only scan: the reader's
   own thread adds each scanned chunk, in file order, as the serial path does;
6. each chunk's rows are copied into the trace's columns as the chunk is added (:class:`_Sink`), not kept and
   concatenated at the end: the columns' memory is written once.

The floor this is measured against (``benchmarks/kineto_floor.py``, docs/benchmarks.md): msgspec's typed decode of
every event's common fields with ``args`` raw.

Where to cut: at a ``}`` followed by ``,`` or ``]``.  Such a byte pair can also sit inside a string or a
nested object; the cut is then rejected because the chunk before it does not decode (an open string or
brace), and the next candidate is tried.  After a few rejected candidates the chunk is decoded event by
event with the stdlib's ``raw_decode``, which is exact: a hostile file cannot make the scan quadratic.

A trace cut off mid-write (common: the job was killed while the handler wrote) keeps every whole event
before the cut and says so in :attr:`KinetoTrace.problems`; a file with no readable event is an error.
Only ``X`` (complete) events become rows; metadata (``M``) names processes and threads, ``[memory]``
instant events (``profile_memory=True``) become the allocator's columns (:class:`MemoryColumns`); flows (``ac2g``, ``fwdbwd``) are counted, not kept: the
launch link is the ``correlation`` argument both ends carry (device work written without it takes its flow's ``id``:
:func:`link_by_flows`).
"""

from __future__ import annotations

import array
import concurrent.futures
import dataclasses
import functools
import io
import json
import math
import multiprocessing
import os
import re
import threading
import zlib
from collections import Counter, deque
from dataclasses import dataclass, field
from itertools import compress, count, repeat
from operator import attrgetter, eq, is_not
from typing import IO, Any, Callable, Iterable

import numpy as np

from tb_gpu_advisor.common.fmt import plural
from tb_gpu_advisor.formats.base import LIMIT_HINT, human_size, is_gzip
from tb_gpu_advisor.formats.gz import Gunzip, Prefixed
from tb_gpu_advisor.formats.kineto import compiled
from tb_gpu_advisor.formats.kineto.layout import (EXECUTION_TRACE, SNIFF_BYTES, execution_trace, kineto_head,
                                                  text_encoding)
from tb_gpu_advisor.frameworks import aten_flops, pytorch
from tb_gpu_advisor.model.damage import Damage, attach, contradiction, cut, unreadable

#: Bytes of events decoded at once: large enough that per-chunk overhead vanishes, small enough that the
#: chunk's Python objects stay a few tens of MB.
CHUNK_BYTES = 4 << 20
#: JSON objects (counted as ``}``) decoded at once: a chunk of tiny events (``{}``, 3 bytes: nothing to
#: analyse) would otherwise hold 1.4 M decoded objects, ~150 MB for 4 MB of text.  A real event with its
#: ``args`` is two objects in ~300 bytes, so real chunks (~28k objects) stay at ``CHUNK_BYTES``.
CHUNK_OBJECTS = 1 << 16
#: How far into the file ``"traceEvents"`` must appear (the metadata before it is a few kB in practice).
HEAD_LIMIT = 64 << 20
#: Rejected cut candidates before a chunk is decoded event by event.
MAX_CUT_TRIES = 4
_READ_BLOCK = 1 << 20
_CUT = re.compile(rb"\}\s*[,\]]")
_NON_WS = re.compile(rb"[^ \t\r\n]")
#: A cut candidate followed by the next event's first key: where a chunk sent to a worker is cut, as it is almost
#: never inside a string or a nested object (a failed cut there costs the chunks in flight; see ``_Parser._rewind``).
_EVENT_CUT = re.compile(rb'\}\s*,\s*\{\s*"(?:ph|cat|name|pid|tid|ts|dur|args|id|bp|s)"')
_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
#: Where a whole event may begin after damage (h37-damage70): an object opening on a Kineto event's first key
#: (``"ph"``, or ``"name"`` on the metadata events), the reader's resynchronisation point.
_EVENT_START = re.compile(rb'\{\s*"(?:ph|name)"\s*:')
#: Kineto's closing key, written once per trace: a file holding it twice holds two traces' bytes.
_TRACE_NAME = b'"traceName"'
#: What a file holding several traces' ends is (the words of its damage record).
_TWO_WRITERS = ("more than one trace was written into this one file, as processes that export to one path at once "
                "do, their writes interleaved")
_RESYNC_DECODER = json.JSONDecoder()
#: Bytes of text a resynchronisation candidate is first decoded in (doubled while its event runs past them): an
#: event's size, not a block's -- every candidate after damage is decoded, so a damaged stretch of many broken events
#: cost 64 KiB each where it began at 64 KiB (review70).
_RESYNC_WINDOW = 1 << 12
#: An error this close to the window's end may be the window's cut (a literal, a number or a ``\uXXXX`` escape cut in
#: two), not the event's: the window doubles and the event is decoded again.
_RESYNC_MARGIN = 16
#: Device event categories (today's and PyTorch 1.8-1.10's) told to a writer by their launching call's correlation.
_DEVICE_CATS = {"kernel": "kernels", "gpu_memcpy": "copies", "gpu_memset": "sets"}
#: Host event categories counted per process in the damaged file's words.
_HOST_CATS = {"cpu_op": "ops", "cuda_runtime": "runtime calls", "cuda_driver": "driver calls",
              "user_annotation": "annotations", "gpu_user_annotation": "GPU annotations"}
_WS = b" \t\r\n"
#: PyTorch 1.8-1.10's categories (Kineto before the ``cpu_op``/``kernel`` names) -> today's; the adapter renames them,
#: and what reads the parsed columns before it (``ranks.merge_ranks``) reads both.
OLD_CATS = {"Operator": "cpu_op", "Runtime": "cuda_runtime", "Kernel": "kernel", "Memcpy": "gpu_memcpy",
            "Memset": "gpu_memset", "User Annotation": "user_annotation", "Python": "python_function"}
#: Integer columns, ``-1`` where the event does not carry the value.
_INT_COLUMNS = ("pid", "tid", "correlation", "external_id", "device", "stream", "bytes", "graph_id")
#: ``args`` keys read into columns (Kineto's spelling).  PyTorch 1.8-1.10 wrote ``external id`` in lower case on
#: runtime calls and device events (``External id`` on ops); the first key an event carries wins.
_ARG_KEYS = {"correlation": "correlation", "External id": "external_id", "external id": "external_id",
             "device": "device", "stream": "stream", "bytes": "bytes", "graph id": "graph_id"}
#: ``args`` kept as they are for the ops that need them (:func:`keeps_args`): collective ops for their message
#: size, matmul/conv/attention ops for their FLOPs, the copy op for its ``non_blocking`` flag.  Decoded lazily (raw JSON until then), so the shapes every
#: other op carries cost no parsing.
_OP_KEYS = ("Input Dims", "Input type", "Concrete Inputs", "In msg nelems", "dtype", "Group size", "Process Group Name",
            "Process Group ID", "Process Group Desc", "Seq", "Process Group Ranks", "rank")
#: A kernel's launch configuration (CUPTI's, as Kineto writes it on ``kernel`` events): ``args`` key -> the int32
#: column of its count (:func:`launch_count`): blocks in the grid, threads per block.
_LAUNCH_ARGS = {"grid": "blocks", "block": "threads"}
#: Where a launch count saturates (int32): far above any GPU's SMs or a block's threads.
LAUNCH_TOP = (1 << 31) - 1


def launch_count(v: Any) -> int:
    """``grid`` or ``block`` ([x, y, z]) -> the blocks or threads it launches: the product of its 1 to 3 integers,
    each in [0, LAUNCH_TOP], saturated at LAUNCH_TOP; -1 for anything else (absent, another shape).  The compiled
    scanner computes the same (``_cscan.c`` ``scan_dims``)."""
    if type(v) is not list or not 1 <= len(v) <= 3:
        return -1
    prod = 1
    for x in v:
        if type(x) is not int or not 0 <= x <= LAUNCH_TOP:
            return -1
        prod = min(prod * x, LAUNCH_TOP)
    return prod


def launch_groups(grid: Any, block: Any) -> int:
    """``grid`` in work-items and ``block`` ([x, y, z] each) -> the workgroups the launch runs: the product over the
    dimensions of ``ceil(grid_d / block_d)`` (a grid that is no multiple of the block ends in a partial workgroup, as
    HSA's dispatch allows), saturated at LAUNCH_TOP; -1 where either is no such list, their lengths differ or a block
    dimension is 0.  The compiled scanner computes the same (``_cscan.c`` ``launch_groups``)."""
    if launch_count(grid) < 0 or launch_count(block) < 0 or len(grid) != len(block):
        return -1
    prod = 1
    for g, b in zip(grid, block):
        if b == 0:
            return -1
        prod = min(prod * -(-g // b), LAUNCH_TOP)
    return prod


def _launch_columns(grids: list[Any], blocks: list[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A chunk's launch columns from its rows' ``grid`` and ``block`` values (None where absent): blocks, threads per
    block and :func:`launch_groups` (int32, -1 where not recorded)."""
    groups = np.full(len(grids), -1, np.int32)
    has = np.fromiter(map(is_not, grids, repeat(None)), bool, len(grids))
    if has.any():
        groups[has] = np.fromiter(map(launch_groups, compress(grids, has), compress(blocks, has)), np.int32,
                                  int(np.count_nonzero(has)))
    return _launch_column(grids), _launch_column(blocks), groups


def _launch_column(vals: list[Any]) -> np.ndarray:
    """One launch count column of a chunk's rows (int32, -1 where not recorded): :func:`launch_count` of the values
    present only (a kernel's; the other rows' None is found by a C loop, no Python call per row)."""
    out = np.full(len(vals), -1, np.int32)
    has = np.fromiter(map(is_not, vals, repeat(None)), bool, len(vals))
    if has.any():
        out[has] = np.fromiter(map(launch_count, compress(vals, has)), np.int32, int(np.count_nonzero(has)))
    return out


def keeps_args(name: str) -> bool:
    """An op whose shape arguments the analysis reads: a collective (message size), a FLOP op (FLOPs) or the copy op
    (whether it was called ``non_blocking``)."""
    return pytorch.is_collective_op(name) or aten_flops.is_flop_op(name) or pytorch.is_copy_op(name)


#: :func:`keeps_args` remembered (a worker process meets the same names in every chunk it is given).
_keeps_args = functools.lru_cache(maxsize=1 << 14)(keeps_args)


def _decoded_args(raws: tuple[bytes | memoryview, ...]) -> dict[str, Any]:
    """The shape arguments (:data:`_OP_KEYS`, in order) an op keeps, from their raw JSON values as the typed decode
    and the compiled scanner hand them over: the empty, the undecodable (the typed decode keeps raw bytes unchecked)
    and the nulls left out."""
    import msgspec

    kept = {}
    for key, v in zip(_OP_KEYS, raws):
        if len(v):
            try:
                kept[key] = msgspec.json.decode(v)
            except (msgspec.DecodeError, UnicodeDecodeError):
                continue
    return {k: v for k, v in kept.items() if v is not None}


class KinetoReadError(ValueError):
    """The file is no PyTorch trace we can analyse; the message says which file and why."""

    def __init__(self, path: str, reason: str, only_pairs: bool = False, untimed: bool = False):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
        #: no complete event, but begin/end pairs (:func:`completed_pairs` reads them)
        self.only_pairs = only_pairs
        #: no complete event with a numeric time (:func:`times_as_numbers` reads those written as strings)
        self.untimed = untimed


#: ``Device Type`` of a GPU's ``[memory]`` events (c10's DeviceType, pytorch/pytorch c10/core/DeviceType.h): CUDA, HIP
#: (ROCm builds write 6) and XPU (12: an Intel GPU's allocator; survey h37-survey27 -- read as the CPU's before).
GPU_DEVICE_TYPES = (1, 6, 12)
#: ``Device Type`` of the MPS allocator's ``[memory]`` events (c10's ``DeviceType::MPS``): Apple's GPU, whose work
#: torch.profiler does not trace (``devices.apple``); neither a GPU row here nor the CPU's.
MPS_DEVICE_TYPE = 13


@dataclass
class MemoryColumns:
    """``[memory]`` instant events, one row each, in file order: the allocator's every allocation and free.

    ``ts_ns`` as written (not re-based), like :attr:`KinetoTrace.ts_ns`; ``device`` is ``Device Id`` (-1 for the
    host's), ``dtype`` ``Device Type``; ``total`` / ``reserved`` are ``Total Allocated`` / ``Total Reserved`` after the
    event and ``addr`` the block's address, -1 where the event does not carry them (PyTorch 1.8-1.10 wrote
    ``Bytes`` only)."""

    ts_ns: np.ndarray
    pid: np.ndarray
    tid: np.ndarray
    device: np.ndarray
    dtype: np.ndarray
    bytes: np.ndarray
    total: np.ndarray
    reserved: np.ndarray
    addr: np.ndarray

    def __len__(self) -> int:
        return int(self.ts_ns.shape[0])

    def gpu_rows(self) -> np.ndarray:
        """Bool per row: a GPU's event (CUDA or HIP, or no type written) with a device id."""
        return (self.device >= 0) & (np.isin(self.dtype, GPU_DEVICE_TYPES) | (self.dtype < 0))


@dataclass
class KinetoTrace:
    """One trace file as columns: one row per ``X`` event, in file order.

    ``pid``/``tid`` are the trace's integers; a string pid or tid (``"Spans"``, ``"PyTorch Profiler"``) gets a
    negative id, its text in ``pid_labels``/``tid_labels``.  Times are integer nanoseconds as written (``ts``
    is microseconds with three decimals), not yet re-based: the adapter does that.
    """

    source: str
    names: list[str]
    cats: list[str]
    cat: np.ndarray
    name: np.ndarray
    ts_ns: np.ndarray
    dur_ns: np.ndarray
    pid: np.ndarray
    tid: np.ndarray
    correlation: np.ndarray
    external_id: np.ndarray
    device: np.ndarray
    stream: np.ndarray
    bytes: np.ndarray
    graph_id: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)
    process_names: dict[int, str] = field(default_factory=dict)
    process_labels: dict[int, str] = field(default_factory=dict)
    thread_names: dict[tuple[int, int], str] = field(default_factory=dict)
    pid_labels: dict[int, str] = field(default_factory=dict)
    tid_labels: dict[int, str] = field(default_factory=dict)
    memory: dict[int, int] = field(default_factory=dict)
    memory_reserved: dict[int, int] = field(default_factory=dict)
    #: the ``[memory]`` events themselves, None where the trace has none
    mem: MemoryColumns | None = None
    ph_counts: dict[str, int] = field(default_factory=dict)
    n_events: int = 0
    bytes_read: int = 0
    compressed: bool = False
    truncated: bool = False
    problems: list[Damage] = field(default_factory=list)
    #: complete events whose ``ts`` or ``dur`` is no number (skipped, or read as lasting 0): strings, where a writer
    #: wrote numbers as text (:func:`times_as_numbers`), null, NaN
    untimed: int = 0
    decoder: str = "json"
    #: Workers (ranks) whose files were merged into this trace (``ranks.merge_ranks``); empty: one file.
    workers: list[str] = field(default_factory=list)
    #: After a merge: each GPU's driving process(es), GPU id -> host pids of its rank's file.
    gpu_pids: dict[int, list[int]] = field(default_factory=dict)
    #: After a merge: GPU id -> the rows of its rank's file in the merged columns, (first, past the last).  Kineto
    #: writes some of a process's events on a pid of no process (the profiler's own ``overhead`` on pid -1, the same
    #: in every rank's file), so only the file they came from tells whose they are.
    gpu_rows: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: Row -> the shape ``args`` of a collective or FLOP op (:func:`keeps_args`): ``Input Dims``, ``Input type``,
    #: ``Concrete Inputs``, ``In msg nelems``, ``dtype``, ``Group size`` where written.
    op_args: dict[int, dict[str, Any]] = field(default_factory=dict)
    #: Row -> what a matmul/conv/attention op computes (``aten_flops.op_work``; None where its shapes give no
    #: number), worked out as the chunk is read so its shape lists are never kept
    op_work: dict[int, Any] = field(default_factory=dict)
    #: After a merge: GPU id -> ``distributedInfo.rank`` of the file that drives it, where the file says
    gpu_ranks: dict[int, int] = field(default_factory=dict)
    #: After a merge: the workers whose files hold no GPU row (no kernel, copy or fill) -> their
    #: ``distributedInfo.rank``, -1 where the file does not say
    idle_ranks: dict[str, int] = field(default_factory=dict)
    #: the rows that record a kernel's launch configuration (int64, ascending), and it (:func:`launch_count` of
    #: ``grid`` and ``block``): blocks in its grid and threads per block, int32, -1 where one of the two is not
    #: recorded; None where the trace was made without them
    launch_row: np.ndarray | None = None
    blocks: np.ndarray | None = None
    threads: np.ndarray | None = None
    #: the workgroups of the same launches were their ``grid`` in work-items (:func:`launch_groups`), -1 where not
    #: computable: the reader takes them for the launches whose call records work-items (HIP's module launches,
    #: ``devices.grid_in_work_items``), known only once the launch's runtime event is read
    groups: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.ts_ns.size)


ProgressFn = Callable[[int], None]


def parse_trace(src: str | IO[bytes], *, max_bytes: int | None = None, progress: ProgressFn | None = None,
                decoder: str | None = None, name: str | None = None, workers: int | None = None) -> KinetoTrace:
    """Parse one ``*.pt.trace.json[.gz]`` (a local path or a binary file object; gzip is detected by its magic).

    ``max_bytes``: refuse traces whose *decompressed* text is larger (a gzip bomb is refused, not inflated).
    ``name``: what errors call the file (default: the path, or the stream's name).
    ``progress``: called with the decompressed bytes read so far, once per chunk.  ``decoder``: ``"msgspec"``
    or ``"json"`` (default: msgspec when installed).  ``workers``: processes decoding chunks once
    :data:`PARALLEL_AFTER` bytes are read (default: the CPUs, at most :data:`MAX_WORKERS`; 1: none, in this process
    only).  Raises :class:`KinetoReadError`.
    """
    name = name or (src if isinstance(src, str) else str(getattr(src, "name", "<stream>")))
    try:
        raw = open(src, "rb") if isinstance(src, str) else src
    except OSError as e:
        raise KinetoReadError(name, f"cannot open: {e.strerror or e}") from e
    try:
        declared, resumed = _declared_size(raw) if max_bytes is not None or workers != 1 else (None, None)
        if declared is not None and max_bytes is not None and declared[0] > max_bytes:  # refused before it is read
            raise KinetoReadError(name, f"trace is {human_size(declared[0])}{' once decompressed' if declared[1] else ''}"
                                        f", over the {human_size(max_bytes)} limit ({LIMIT_HINT})")
        stream, compressed = (resumed, True) if resumed is not None else _maybe_gunzip(raw)
        stream = _first_text(stream, name)
        parser = _Parser(name, stream, compressed, max_bytes, progress, _decoder(decoder), workers)
        parser.size_hint = declared[0] if declared else 0
        return parser.run()
    finally:
        if isinstance(src, str):
            raw.close()


@dataclass
class HostColumns:
    """What tells one process's files from another's, as :func:`scan_host_columns` reads it: each X row's pid,
    category, ``args.device``, ``correlation`` and ``External id``, the file's top-level keys (``meta``) and its
    events' phases -- the attributes of :class:`KinetoTrace` that ``ranks.Process.of`` and ``unlinked_rows`` read."""

    pid: np.ndarray
    cat: np.ndarray
    cats: list[str]
    device: np.ndarray
    correlation: np.ndarray
    external_id: np.ndarray
    meta: dict[str, Any]
    ph_counts: dict[str, int]

    def __len__(self) -> int:
        return len(self.pid)


#: The most text :func:`scan_host_columns` holds at once (it scans the events in one piece): past it the whole decode
#: answers, which streams the text in chunks (a gigabyte's text held whole would outweigh its columns).
SCAN_MAX_BYTES = 256 << 20


def scan_host_columns(raw: IO[bytes], max_bytes: int | None = None) -> HostColumns | None:
    """The columns that tell a file's process (:class:`HostColumns`), read by the compiled scanner (``_cscan.c``) in one
    pass over the text, no other column, name or argument built; the top-level keys decoded beside an empty event
    array.  None where it cannot say what :func:`parse_trace` would: no scanner (the Python decode is the reference:
    the caller decodes the file whole), text past ``max_bytes`` or :data:`SCAN_MAX_BYTES` once decompressed, anything
    outside the JSON the scanner reads (another encoding, a cut-off file, keys around the events it does not expect),
    or a file the reader mends or drops rows of (X events without a numeric time or duration, begin/end pairs, times
    far apart).

    Why: which files are one process's parts is decided at discovery from their rows' ids (``layout._ids_agree``),
    and the reader decodes the same files whole after it; the ids alone cost a fraction of a whole decode (the reader's
    columns, names, arguments and trace: ``benchmarks/reads_once.py``)."""
    if _CSCAN is None:
        return None
    most = min(max_bytes, SCAN_MAX_BYTES) if max_bytes is not None else SCAN_MAX_BYTES
    stream, _ = _maybe_gunzip(raw)
    data = stream.read(most + 1)
    if len(data) > most or not data.lstrip(_WS).startswith(b"{"):
        return None
    key = _EVENTS_KEY.search(data)
    found = _scanned_events(data, key.end()) if key is not None else None
    if found is None:
        return None
    out, close = found
    _, n_x, bad_dur, phs, _, ts, _, _, cat, pid, _, pid_s, _, ints, _, _, cats, pid_strings, _, _ = out
    ph = Counter({p if p is not None else "?": n for p, n in phs})
    ts = np.frombuffer(ts, np.float64)
    if bad_dur or n_x != len(ts) or not len(ts) or (ph["B"] and ph["E"]) or not _plausible_times(ts).all():
        return None
    meta = _loads(data[:key.end()] + data[close:])
    meta.pop("traceEvents", None)
    ints = np.frombuffer(ints, np.int64).reshape(-1, len(_SCANNED_INTS))
    cols = {c: ints[:, j] for j, c in enumerate(_SCANNED_INTS) if c in ("correlation", "external_id", "device")}
    return HostColumns(pid=_scanned_ids(pid, pid_s, pid_strings, {}, _Columns._id), cat=np.frombuffer(cat, np.int32),
                       cats=list(cats), meta=meta, ph_counts=dict(ph), **cols)


#: How many ``]`` from the end :func:`_scanned_events` looks at for the events' close, and how many it scans up to.
_CLOSES_LOOKED, _CLOSES_SCANNED = 256, 3


def _scanned_events(data: bytes, start: int) -> tuple[tuple, int] | None:
    """The scanner's columns of the events array that opens at ``start`` and the offset of its ``]``: the last ``]``
    that follows an event's ``}`` and before which the scanner reads whole events, after which the top-level keys
    close the document (Kineto writes keys after the events: ``traceName``, a log's lines in an array); None
    where none does within a few tries."""
    close, scanned = len(data), 0
    for _ in range(_CLOSES_LOOKED):
        close = data.rfind(b"]", start, close)
        if close < 0 or scanned == _CLOSES_SCANNED:
            return None
        last = data.rfind(b"}", max(start, close - 64), close)
        if last < 0 or data[last + 1:close].strip(_WS):
            continue
        try:  # the rest a document's top-level keys: cheap, before a scan of the events
            meta = _loads(data[:start] + data[close:])
        except ValueError:
            continue
        if not isinstance(meta, dict):
            continue
        scanned += 1
        with memoryview(data) as view, view[start:last + 1] as events:
            out = _CSCAN.scan(events)
        if isinstance(out, tuple):
            return out, close
    return None


#: Compressed bytes decompressed to check what a gzip trace's trailer declares (``_declared_size``).
SAMPLE_BYTES = 1 << 20


def _declared_size(raw: IO[bytes]) -> tuple[tuple[int, bool] | None, Gunzip | None]:
    """(bytes of text a seekable file holds and whether it is gzip, known without reading it all -- None when it
    cannot be told: a stream, a gzip file whose trailer and start disagree; the gzip stream read on from the sample
    this decompressed, ``raw`` then at the sample's end -- None where nothing was decompressed, ``raw`` where it was).
    A file that cannot fit the size limit is refused at once, not after a limit's worth of reading (a 2.4 GB trace
    held a shared TensorBoard for minutes).

    Plain text: its size.  Gzip: the size its trailer declares (ISIZE, mod 2^32), trusted only when the ratio of
    its first :data:`SAMPLE_BYTES` says about the same (within 2x): a file cut off mid-write ends in arbitrary bytes,
    not a trailer, and is never refused on them.  The sample's text is the stream's start, handed on
    (:meth:`Gunzip.resumed`), not decompressed again by the read."""
    try:
        if not raw.seekable():
            return None, None
        pos = raw.tell()
        try:
            end = raw.seek(0, 2)
            raw.seek(pos)
            head = raw.read(SAMPLE_BYTES)
            if not is_gzip(head):
                return (end - pos, False), None
            if end - pos < 18:
                return None, None
            raw.seek(end - 4)
            declared = int.from_bytes(raw.read(4), "little")
        finally:
            raw.seek(pos)
        d = zlib.decompressobj(wbits=31)
        made = d.decompress(head, 64 * SAMPLE_BYTES)
        text = len(made)
        used = len(head) - len(d.unconsumed_tail)
        if d.eof or not used or not text:
            answer = None  # several members, or too small to say: the streaming limit decides
        else:
            estimate = text * (end - pos) / used
            answer = (declared, True) if estimate / 2 <= declared <= estimate * 2 else None
        resumed = Gunzip.resumed(d, made, raw)
        raw.seek(pos + len(head))  # last: where it fails, ``raw`` is still at ``pos``
        return answer, resumed
    except (OSError, ValueError, AttributeError, zlib.error):
        return None, None


def _first_text(stream: IO[bytes], name: str) -> IO[bytes]:
    """:func:`as_utf8` of the stream, a gzip stream that ends or breaks before its first bytes of text said as the
    damage it is (h37-damage67b: a ``.json.gz`` cut in its first few dozen bytes raised zlib's bare "compressed file
    ended before the end-of-stream marker was reached", naming no file and carrying no record): a cut (``gzip_cut``)
    where it ends, records that do not decode (``gzip_invalid``) where its bytes are no deflate stream."""
    try:
        return as_utf8(stream)
    except EOFError as e:
        said = cut("gzip_cut", f"its gzip stream is cut off before its first text ({e})", offset=0)
    except zlib.error as e:
        said = unreadable("gzip_invalid", f"its gzip stream does not decompress ({e})", offset=0)
    raise attach(KinetoReadError(name, f"damaged gzip file: {said}"), said)


def _maybe_gunzip(raw: IO[bytes]) -> tuple[IO[bytes], bool]:
    head = raw.read(2)
    if is_gzip(head):
        return Gunzip(Prefixed(head, raw)), True  # type: ignore[return-value]
    return Prefixed(head, raw), False  # type: ignore[return-value]


def as_utf8(stream: IO[bytes]) -> IO[bytes]:
    """The stream as UTF-8 bytes: a UTF-8 BOM dropped, UTF-16/32 text decoded as it is read (the parser scans bytes
    for ASCII keys and brackets, which a UTF-16 file spells with NULs between)."""
    head = b""
    while len(head) < 4:
        block = stream.read(4 - len(head))
        if not block:
            break
        head += block
    encoding, bom = text_encoding(head)
    rest = Prefixed(head[bom:], stream)
    return rest if encoding == "utf-8" else _Utf8(rest, encoding)  # type: ignore[return-value]


class _Utf8:
    """A UTF-16/32 byte stream read as UTF-8 bytes, decoded incrementally (a character split across reads waits)."""

    def __init__(self, raw: "Prefixed", encoding: str):
        import codecs  # only for the rare re-encoded trace

        self._raw = raw
        self._decode = codecs.getincrementaldecoder(encoding)(errors="replace")
        self._pending = b""

    def read(self, n: int = -1) -> bytes:
        while n is None or n < 0 or len(self._pending) < n:
            block = self._raw.read(_READ_BLOCK if n is None or n < 0 else max(n, _READ_BLOCK))
            self._pending += self._decode.decode(block, final=not block).encode("utf-8")
            if not block:
                break
        if n is None or n < 0:
            out, self._pending = self._pending, b""
        else:
            out, self._pending = self._pending[:n], self._pending[n:]
        return out


# ---------------------------------------------------------------------------------------------- decoders

def _decoder(which: str | None) -> str:
    if which not in (None, "msgspec", "json"):
        raise ValueError(f"unknown decoder {which!r}")
    if which == "json":
        return "json"
    try:
        import msgspec  # noqa: F401 - optional accelerator
    except ImportError:
        if which == "msgspec":
            raise
        return "json"
    return "msgspec"


_MSGSPEC_TYPE: Any = None
_EMPTY_ARGS: Any = None  # the typed decode's ``Args`` with nothing set
_ARGS_TYPE: Any = None  # the typed decode's ``Args`` struct (the compiled scanner's kept spans decode to it)
#: Kineto ``args`` keys -> identifiers of the typed decode's ``Args`` struct.
_STRUCT_ARGS = {key: f"a{i}_" + re.sub(r"\W", "_", key).lower() for i, key in enumerate((
    *_ARG_KEYS, "name", "labels", "Device Id", "Device Type", "Total Allocated", "Total Reserved", "Bytes", "Addr",
    *_OP_KEYS, *_LAUNCH_ARGS))}
#: ``[memory]`` event arguments -> :class:`MemoryColumns` fields (integers; anything else reads as absent, -1).
_MEM_ARGS = (("Device Id", "device"), ("Device Type", "dtype"), ("Bytes", "bytes"), ("Total Allocated", "total"),
             ("Total Reserved", "reserved"), ("Addr", "addr"))


def _msgspec_type() -> Any:
    """``list[Event]`` with only the fields we read; everything else in an event is skipped unbuilt.

    The arguments read into integer columns are ``int | str | None``, -1 when absent (a ROCm trace writes some as
    text: they read as absent, as in the stdlib path), the others ``Any``; a value of another type rejects the chunk,
    which is then decoded exactly by the stdlib (and the column builder checks types).

    ``gc=False``: the structs hold no reference cycles, so the garbage collector need not track them; tracked, the
    collections that hundreds of thousands of new objects trigger cost as much as the decode itself
    (``benchmarks/kineto_floor.py``)."""
    global _MSGSPEC_TYPE, _EMPTY_ARGS, _ARGS_TYPE
    if _MSGSPEC_TYPE is None:
        import msgspec

        # the op-shape keys stay raw JSON (``Raw``, empty when absent: ``Raw | None`` is no valid type)
        args = msgspec.defstruct("Args", [(ident, msgspec.Raw, msgspec.field(default=msgspec.Raw(b""), name=key))
                                          if key in _OP_KEYS else
                                          (ident, int | str | None, msgspec.field(default=-1, name=key))
                                          if key in _ARG_KEYS else
                                          (ident, Any, msgspec.field(default=None, name=key))
                                          for key, ident in _STRUCT_ARGS.items()], gc=False)
        event = msgspec.defstruct("Event", [("ph", str | None, None), ("cat", str | None, None),
                                            ("name", str | None, None), ("pid", int | str | None, None),
                                            ("tid", int | str | None, None), ("ts", float | None, None),
                                            ("dur", float | None, None), ("args", args | None, None)], gc=False)
        _EMPTY_ARGS, _ARGS_TYPE = args(), args
        _MSGSPEC_TYPE = list[event]
    return _MSGSPEC_TYPE


def _loads(data: bytes) -> Any:
    """``json.loads`` that says ValueError for every way bytes can fail to be JSON a trace holds: nesting deeper than
    the interpreter's recursion limit is a hostile file, not a crash of the reader."""
    try:
        return json.loads(data)
    except (UnicodeDecodeError, RecursionError) as e:
        raise ValueError(str(e)) from e


def _decode_chunk(data: bytes | memoryview, decoder: str) -> list[Any]:
    """Events of ``data`` (whole events separated by commas); ValueError when it is not that."""
    text = b"".join((b"[", data, b"]"))
    if decoder == "msgspec":
        import msgspec

        try:
            return msgspec.json.decode(text, type=_msgspec_type())
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as e:
            raise ValueError(str(e)) from e
    return _loads(text)


# ---------------------------------------------------------------------------------------------- columns

def nothing_recorded(window: str = "", held: str = "") -> str:
    """The words for a window in which the profiler recorded no work of the program's: said the same whether the
    file keeps the window's own span (``PyTorch Profiler (0)``, the adapter's check) or not even that (thread names
    and ``Record Window End`` only, this reader's).  The file is the profiler's and whole: what to change is where
    its window was opened, never the file."""
    return (f"nothing recorded: the profiler's window{window} holds no op, annotation, CUDA call or kernel{held} -- "
            "the profiled code ran no PyTorch work in it (profile the code that runs the model: its steps inside the "
            "`with torch.profiler.profile(...)` block, each followed by prof.step())")


def _only_own_marks(phases: Counter) -> str | None:
    """What a trace holds when it has events but none with a duration, all of them the profiler's own (thread
    names, its instant marks): "4 metadata events and 1 instant event"; None otherwise."""
    if not phases or not set(phases) <= {"M", "i"}:
        return None
    return " and ".join(plural(n, _PHASE_WORDS[ph]) for ph, n in phases.most_common())


#: The profiler's own events without a duration, as that message names them.
_PHASE_WORDS = {"M": "metadata event", "i": "instant event"}


class _Columns:
    """Rows of X events, accumulated chunk by chunk as numpy arrays (a chunk's lists die with the chunk)."""

    def __init__(self, sink: bool = False) -> None:
        self.names: dict[str, int] = {}
        self.cats: dict[str, int] = {}
        #: each chunk's X rows (``sink``: copied into the whole trace's columns as they come, :class:`_Sink`)
        self.parts: list[dict[str, np.ndarray]] = []
        self.sink = _Sink() if sink else None
        self.process_names: dict[int, str] = {}
        self.process_labels: dict[int, str] = {}
        self.thread_names: dict[tuple[int, int], str] = {}
        self.pid_labels: dict[str, int] = {}
        self.tid_labels: dict[str, int] = {}
        self.memory: dict[int, int] = {}
        self.memory_reserved: dict[int, int] = {}
        self.mem: dict[str, list] = {k: [] for k in ("ts", "pid", "tid", *(c for _, c in _MEM_ARGS))}
        self.ph = Counter()
        self.n_events = 0
        self.malformed = 0
        self.bad_dur = 0  # X events whose ``dur`` is no number (a string, null, NaN, infinite): read as 0
        self.rows = 0  # X rows kept so far (the next part's first row)
        self.op_args: dict[int, dict[str, Any]] = {}
        self.op_work: dict[int, Any] = {}
        #: (rows, blocks, threads, groups) of the rows that record a launch configuration, by chunk: kernels only
        self.launches: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self._labels: dict[str, str] = {}  # one string per distinct FLOP-op label
        self._keep = np.zeros(0, bool)  # name id -> keeps_args(name)
        self._work_memo: dict[tuple, Any] = {}  # (name, raw shape arguments) -> op_work

    def add(self, events: list[Any], typed: bool) -> None:
        """Append one chunk's events (msgspec structs when ``typed``, else dicts from the stdlib)."""
        self.n_events += len(events)
        if typed:
            self._add_typed(events)
            return
        ok = [e for e in events if isinstance(e, dict)]
        self.malformed += len(events) - len(ok)
        events = [_Event(e) for e in ok]
        self.ph.update(e.ph if isinstance(e.ph, str) else "?" for e in events)
        xs = [e for e in events if e.ph == "X"]
        timed = [e for e in xs if _is_number(e.ts)]
        self.malformed += len(xs) - len(timed)
        self._others(events)
        if timed:
            self._append(self._part(timed))

    def merge(self, other: _Columns) -> None:
        """Append the columns a worker built from the next chunk on fresh columns (:func:`_decode_part`), as if
        this object had added that chunk itself: its names, categories and string pids/tids take the ids they would
        have had here (new ones numbered in the order the chunk met them), its rows follow these."""
        name_ids = _remap(other.names, self.names, lambda d: len(d))
        cat_ids = _remap(other.cats, self.cats, lambda d: len(d))
        pid_ids = _remap(other.pid_labels, self.pid_labels, lambda d: -2 - len(d))
        tid_ids = _remap(other.tid_labels, self.tid_labels, lambda d: -2 - len(d))
        pid, tid = _relabel(pid_ids), _relabel(tid_ids)
        self.process_names.update((pid(k), v) for k, v in other.process_names.items())
        self.process_labels.update((pid(k), v) for k, v in other.process_labels.items())
        self.thread_names.update(((pid(p), tid(t)), v) for (p, t), v in other.thread_names.items())
        for col, values in other.mem.items():
            self.mem[col] += [pid(v) for v in values] if col == "pid" else [tid(v) for v in values] if col == "tid" else values
        for mine, theirs in ((self.memory, other.memory), (self.memory_reserved, other.memory_reserved)):
            for dev, v in theirs.items():
                if v > mine.get(dev, -1):
                    mine[dev] = v
        self.ph.update(other.ph)
        self.n_events += other.n_events
        self.malformed += other.malformed
        self.bad_dur += other.bad_dur
        for part in other.parts:
            part["name"] = np.asarray(name_ids, np.int32)[part["name"]] if name_ids else part["name"]
            part["cat"] = np.asarray(cat_ids, np.int32)[part["cat"]] if cat_ids else part["cat"]
            for col, ids in (("pid", pid_ids), ("tid", tid_ids)):
                if ids and (part[col] <= -2).any():
                    lut = np.asarray(ids, np.int64)
                    part[col] = np.where(part[col] <= -2, lut[np.maximum(-2 - part[col], 0)], part[col])
            self._append(part)
        self.op_args.update((self.rows + r, v) for r, v in other.op_args.items())
        self.op_work.update((self.rows + r, v) for r, v in other.op_work.items())
        self.launches += [(rows + self.rows, b, t, g) for rows, b, t, g in other.launches]
        self.rows += other.rows

    def _others(self, events: list[Any]) -> None:
        """The metadata and ``[memory]`` events of a chunk (before its X rows: string pids get their ids in file order)."""
        for e in events:
            if e.ph == "M":
                self._metadata(e)
            elif e.ph == "i" and e.name == "[memory]":
                self._memory(e)

    def _add_typed(self, events: list[Any]) -> None:
        """A chunk of the typed decode's structs, column by column with no Python code per event beyond the
        comprehension that reads one field (C loops: ``np.array`` of a list, ``dict.fromkeys``, ``map``).

        The decode's types make most checks unneeded: ``ts``/``dur`` are floats or None (None reads as NaN), an
        integer argument is -1 when absent.  Where a column holds something else (a string pid, a null argument,
        an integer past 64 bits) that column alone takes the per-value path of the stdlib decode."""
        phs = list(map(_PH, events))
        counts = Counter(phs)
        for ph, n in counts.items():  # first appearance order, as event by event
            self.ph[ph if ph is not None else "?"] += n
        if "M" in counts or "i" in counts:  # a few per chunk: found by list.index, a C loop
            at = sorted(_positions(phs, "M", counts.get("M", 0)) + _positions(phs, "i", counts.get("i", 0)))
            self._others([events[i] for i in at])
        if "X" not in counts:
            return
        xs = list(compress(events, map(eq, phs, repeat("X")))) if counts["X"] < len(events) else events
        ts = np.array(list(map(_TS, xs)), np.float64)
        timed = ~np.isnan(ts)
        if not timed.all():
            xs = [e for e, ok in zip(xs, timed.tolist()) if ok]
            self.malformed += len(ts) - len(xs)
            ts = ts[timed]
            if not xs:
                return
        dur = np.array(list(map(_DUR, xs)), np.float64)
        bad = ~np.isfinite(dur)
        if bad.any():
            self.bad_dur += int(np.count_nonzero(bad))
            dur[bad] = 0.0
        part = {"ts": ts, "dur": dur,
                "cat": _intern(list(map(_CAT, xs)), self.cats),
                "name": _intern(list(map(_NAME, xs)), self.names),
                "pid": self._ids(list(map(_PID, xs)), self.pid_labels),
                "tid": self._ids(list(map(_TID, xs)), self.tid_labels)}
        args = list(map(_ARGS, xs))
        if None in args:
            args = [a if a is not None else _EMPTY_ARGS for a in args]
        for key, col in _ARG_KEYS.items():
            column = _int_column(list(map(attrgetter(_STRUCT_ARGS[key]), args)))
            part[col] = column if col not in part else np.where(part[col] >= 0, part[col], column)
        self._add_launches(*_launch_columns(*(list(map(attrgetter(_STRUCT_ARGS[key]), args)) for key in _LAUNCH_ARGS)))
        self._keep_op_args(part["name"], args, True)
        self.rows += len(xs)
        self._append(part)

    def add_scanned(self, data: bytes | memoryview, out: Any = None) -> int:
        """Append one chunk read by the compiled scanner (``_cscan.c``), exactly as :meth:`_add_typed` would append
        the typed decode of the same bytes: 1.  With nothing changed: 0 where there is no scanner or it hands the
        chunk back (anything outside the JSON it reads: the caller then decodes the chunk as before); -1 where the
        chunk ends inside an event, all of it valid JSON until then (its cut is inside a string or an object, so the
        typed decode would refuse it as well: the caller tries the next cut without decoding this one twice).

        The scanner gives the X rows' columns, each distinct name, category and string pid/tid once (interned here
        in the order the rows meet them), the spans of the metadata and ``[memory]`` events (decoded here by the
        typed decode, a few per chunk) and each row's ``args`` span, decoded only for the ops that keep their shapes.
        ``out``: the scan of ``data`` where a thread made it already (:meth:`_Parser._add_thread_scan`).
        """
        if _CSCAN is None:
            return 0
        if out is None:
            out = _CSCAN.scan(data)
        if out is None or out is False:
            return -1 if out is False else 0
        (n_events, n_x, bad_dur, phs, others, ts, dur, name, cat, pid, tid, pid_s, tid_s, ints, spans,
         names, cats, pid_strings, tid_strings, launch) = out
        if len(launch) * 2 != len(ts) * 3:  # not 3 int32 a row: a scanner built from an older _cscan.c
            return 0
        import msgspec

        event_type = _msgspec_type()
        view = memoryview(data)
        if others:
            at = np.frombuffer(others, np.int64).reshape(-1, 2).tolist()
            try:
                specials = msgspec.json.decode(b"[" + b",".join(view[a:b] for a, b in at) + b"]", type=event_type)
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                return 0
        self.n_events += n_events
        for ph, n in phs:  # first appearance order, as event by event
            self.ph[ph if ph is not None else "?"] += n
        if others:
            self._others(specials)
        ts = np.frombuffer(ts, np.float64)
        self.malformed += n_x - len(ts)
        if not len(ts):
            return 1
        self.bad_dur += bad_dur
        ints = np.frombuffer(ints, np.int64).reshape(-1, 6)
        part = {"ts": ts, "dur": np.frombuffer(dur, np.float64),
                "cat": _local_ids(cat, cats, self.cats), "name": _local_ids(name, names, self.names),
                "pid": _scanned_ids(pid, pid_s, pid_strings, self.pid_labels, self._id),
                "tid": _scanned_ids(tid, tid_s, tid_strings, self.tid_labels, self._id)}
        for j, col in enumerate(_SCANNED_INTS):
            part[col] = ints[:, j]
        launch = np.frombuffer(launch, np.int32).reshape(-1, 3)
        self._add_launches(launch[:, 0], launch[:, 1], launch[:, 2])
        self._keep_scanned_args(part["name"], view, np.frombuffer(spans, np.int64).reshape(-1, 2))
        self.rows += len(ts)
        self._append(part)
        return 1

    def _add_launches(self, blocks: np.ndarray, threads: np.ndarray, groups: np.ndarray) -> None:
        """The launch configurations of the chunk being added (dense over its rows, -1 not recorded), kept for the rows
        that record one -- kernels, a third of a trace's rows at most: no column over every row."""
        at = np.flatnonzero((blocks >= 0) | (threads >= 0))
        if at.size:
            self.launches.append(((at + self.rows).astype(np.int64), blocks[at].astype(np.int32),
                                  threads[at].astype(np.int32), groups[at].astype(np.int32)))

    def launch_columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(rows, blocks, threads, groups) of every row that records a launch configuration, in row order."""
        if not self.launches:
            return np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.int32)
        out = tuple(np.concatenate(parts) for parts in zip(*self.launches))
        self.launches = []
        return out  # type: ignore[return-value]

    def _append(self, part: dict[str, np.ndarray]) -> None:
        """One chunk's X rows, after those of the chunks before it."""
        if self.sink is not None:
            self.sink.append(part)
        else:
            self.parts.append(part)

    def _ids(self, vals: list[Any], labels: dict[str, int]) -> np.ndarray:
        """pid or tid column of the typed decode: the integers as they are, else :meth:`_id` value by value."""
        try:
            return np.frombuffer(array.array("q", vals), np.int64)
        except (TypeError, OverflowError):
            return np.array([self._id(v, labels) for v in vals], np.int64)

    def _part(self, xs: list[Any]) -> dict[str, np.ndarray]:
        """The columns of ``xs`` (stdlib-decoded X events with a numeric time)."""
        names, cats, pids, tids = self.names, self.cats, self.pid_labels, self.tid_labels
        part = {
            "ts": np.fromiter((e.ts for e in xs), np.float64, len(xs)),
            "dur": self._durations(xs),
            "cat": np.fromiter((cats.setdefault(e.cat if isinstance(e.cat, str) else "", len(cats)) for e in xs),
                               np.int32, len(xs)),
            "name": np.fromiter((names.setdefault(e.name if isinstance(e.name, str) else "", len(names)) for e in xs),
                                np.int32, len(xs)),
            "pid": np.fromiter((e.pid if type(e.pid) is int and _I64 <= e.pid < -_I64 else self._id(e.pid, pids)
                                for e in xs), np.int64, len(xs)),
            "tid": np.fromiter((e.tid if type(e.tid) is int and _I64 <= e.tid < -_I64 else self._id(e.tid, tids)
                                for e in xs), np.int64, len(xs)),
        }
        args = [e.args for e in xs]
        for key, col in _ARG_KEYS.items():
            vals = [a.get(key) if type(a) is dict else None for a in args]
            column = np.array([v if type(v) is int and _I64 <= v < -_I64 else -1 for v in vals], np.int64)
            part[col] = column if col not in part else np.where(part[col] >= 0, part[col], column)
        self._add_launches(*_launch_columns(*([a.get(key) if type(a) is dict else None for a in args]
                                              for key in _LAUNCH_ARGS)))
        self._keep_op_args(part["name"], args, False)
        self.rows += len(xs)
        return part

    def _durations(self, xs: list[Any]) -> np.ndarray:
        """``dur`` of stdlib-decoded X events; one that is no finite number reads as 0 and is counted (damage)."""
        dur = np.fromiter((e.dur if _is_number(e.dur) else np.nan for e in xs), np.float64, len(xs))
        bad = ~np.isfinite(dur)
        if bad.any():
            self.bad_dur += int(np.count_nonzero(bad))
            dur[bad] = 0.0
        return dur

    def _keep_op_args(self, name_ids: np.ndarray, args: list[Any], typed: bool) -> None:
        """The shape arguments of collective and FLOP ops, by row (the shapes of other ops stay unparsed).

        Which name ids keep them is a boolean table over the interned names, extended as names come; a FLOP op's
        work is worked out once per distinct (name, raw shape arguments) of the typed decode (a training loop
        repeats the same shapes every step)."""
        rows = self._rows_keeping_args(name_ids)
        if not rows.size:
            return
        names = list(self.names)
        if typed:  # the typed decode's raw values (only with msgspec installed)
            raw_of = attrgetter(*(_STRUCT_ARGS[k] for k in _OP_KEYS))
        for i in rows.tolist():
            a = args[i]
            nid = int(name_ids[i])
            name = names[nid]
            flop = aten_flops.is_flop_op(name)
            if typed:
                raws = raw_of(a)
                memo = (name, *map(bytes, raws)) if flop else None
                if memo is not None and memo in self._work_memo:
                    w = self._work_memo[memo]
                    if w is not _NO_ARGS:
                        self.op_work[self.rows + i] = w
                    continue
                kept = _decoded_args(raws)
            else:
                if type(a) is not dict:
                    continue
                kept = {key: a[key] for key in _OP_KEYS if a.get(key) is not None}
                memo = None
            w = (self._work(name, kept) if kept else _NO_ARGS) if flop else None
            if memo is not None and len(self._work_memo) < _WORK_MEMO:
                self._work_memo[memo] = w
            if not kept:
                continue
            if flop:
                self.op_work[self.rows + i] = w
            else:
                self.op_args[self.rows + i] = kept

    def _rows_keeping_args(self, name_ids: np.ndarray) -> np.ndarray:
        """The rows (of a part) whose op keeps its shape arguments: a boolean table over the interned names, extended
        as names come."""
        keep = self._keep
        if len(keep) < len(self.names):
            names = list(self.names)[len(keep):]
            self._keep = keep = np.concatenate([keep, np.fromiter(map(_keeps_args, names), bool, len(names))])
        if not keep.any():
            return np.zeros(0, np.int64)
        return np.flatnonzero(keep[name_ids])

    def _keep_scanned_args(self, name_ids: np.ndarray, data: memoryview, spans: np.ndarray) -> None:
        """:meth:`_keep_op_args` of a scanned chunk, with Python code per distinct (op, shapes), not per row.

        The scanner gives each kept row's shape arguments as one bytes key (their raw JSON, which is what the typed
        decode's ``Raw`` values hold, so equal keys mean equal arguments); a training loop repeats a few hundred
        distinct keys over hundreds of thousands of calls.  Each distinct one is decoded once, from one of its rows,
        by the code the typed decode runs (:meth:`_keep_op_args`), and its result given to every row that has it, in
        row order; only C loops (``map``, ``dict``, ``compress``) touch every row.  Where the scanner refuses a span
        (never for the spans it gave) the rows are decoded one by one as before."""
        rows = self._rows_keeping_args(name_ids)
        if not rows.size:
            return
        keys = _CSCAN.op_keys(data, np.ascontiguousarray(spans[rows])) if _scanner_keys_current() else None
        if keys is None:
            self._keep_op_args(name_ids, _ArgSpans(data, spans), True)
            return
        pairs = zip(name_ids[rows].tolist(), keys)
        # each distinct (name id, key) -> the position of its first row (``count`` runs on; ``setdefault`` keeps the
        # first): one hash of each row's pair, and the rows then look their result up by a small int
        first: dict[tuple, int] = {}
        at = list(map(first.setdefault, pairs, count()))
        work: dict[int, Any] = {}
        kept: dict[int, dict] = {}
        names = list(self.names)
        row_of = rows.tolist()
        for (name_id, key), j in first.items():  # first appearance order, as row by row
            name = names[name_id]
            if aten_flops.is_flop_op(name):
                work[j] = self._scanned_work(name, key, data, spans, row_of[j])
            else:
                args = self._scanned_kept(data, spans, row_of[j])
                if args:
                    kept[j] = args
        glob = (rows + self.rows).tolist()
        if work:
            ws = list(map(work.get, at, repeat(_NO_ARGS)))
            has = list(map(is_not, ws, repeat(_NO_ARGS)))
            self.op_work.update(zip(compress(glob, has), compress(ws, has)))
        if kept:
            ks = list(map(kept.get, at))
            has = list(map(is_not, ks, repeat(None)))
            self.op_args.update(zip(compress(glob, has), map(dict, compress(ks, has))))  # a dict per row, as before

    def _scanned_work(self, name: str, key: bytes, data: memoryview, spans: np.ndarray, row: int) -> Any:
        """A FLOP op's work for its shape key (``_NO_ARGS``: no shape recorded), remembered across chunks."""
        memo = (name, key)
        if memo in self._work_memo:
            return self._work_memo[memo]
        args = self._scanned_kept(data, spans, row)
        w = self._work(name, args) if args else _NO_ARGS
        if len(self._work_memo) < _WORK_MEMO:
            self._work_memo[memo] = w
        return w

    @staticmethod
    def _scanned_kept(data: memoryview, spans: np.ndarray, row: int) -> dict[str, Any]:
        """The shape arguments of one scanned row, decoded as :meth:`_keep_op_args` decodes the typed decode's."""
        return _decoded_args(_RAW_OF(_ArgSpans(data, spans)[row]))

    def _work(self, name: str, args: dict[str, Any]) -> Any:
        """An op's FLOPs and bytes from its shapes, its label shared with every call of the same shapes."""
        w = aten_flops.op_work(name, args)
        if w is not None:
            w = dataclasses.replace(w, label=self._labels.setdefault(w.label, w.label))
        return w

    def _metadata(self, e: Any) -> None:
        kind, args = e.name, e.args
        pid = self._id(e.pid, self.pid_labels)
        if kind == "process_name" and isinstance(_any_arg(args, "name"), str):
            self.process_names[pid] = _any_arg(args, "name")
        elif kind == "process_labels" and isinstance(_any_arg(args, "labels"), str):
            self.process_labels[pid] = _any_arg(args, "labels")
        elif kind == "thread_name" and isinstance(_any_arg(args, "name"), str):
            self.thread_names[(pid, self._id(e.tid, self.tid_labels))] = _any_arg(args, "name")

    def _memory(self, e: Any) -> None:
        """A ``[memory]`` event (``profile_memory=True``): one allocator row (:class:`MemoryColumns`), and the peak
        allocated/reserved bytes per GPU (CUDA or HIP)."""
        if not _is_number(e.ts) or not abs(e.ts) < MAX_TS_US:
            self.malformed += 1
            return
        args, mem = e.args, self.mem
        mem["ts"].append(e.ts)
        mem["pid"].append(self._id(e.pid, self.pid_labels))
        mem["tid"].append(self._id(e.tid, self.tid_labels))
        for key, col in _MEM_ARGS:
            v = _any_arg(args, key)
            ok = type(v) is int and -(1 << 63) <= v < (1 << 63)
            mem[col].append(v if ok else (0 if col == "bytes" else -1))  # a size not written changes nothing
        dev, dtype = mem["device"][-1], mem["dtype"][-1]
        if dev < 0 or (dtype >= 0 and dtype not in GPU_DEVICE_TYPES):
            return
        for col, peaks in (("total", self.memory), ("reserved", self.memory_reserved)):
            v = mem[col][-1]
            if v >= 0 and v > peaks.get(dev, -1):
                peaks[dev] = v

    def mem_columns(self) -> MemoryColumns | None:
        m = self.mem
        if not m["ts"]:
            return None
        cols = {c: np.asarray(m.pop(c), dtype=np.int64) for c in ("pid", "tid", *(c for _, c in _MEM_ARGS))}
        return MemoryColumns(ts_ns=_ns(np.asarray(m.pop("ts"), dtype=np.float64)), **cols)

    @staticmethod
    def _id(v: Any, labels: dict[str, int]) -> int:
        """An integer pid/tid as is; a string one gets a stable negative id (-2, -3, ...; -1 is "absent", as is an
        integer past 64 bits, which no process or thread id is)."""
        if type(v) is int:
            return v if _I64 <= v < -_I64 else -1
        if isinstance(v, str):
            return labels.setdefault(v, -2 - len(labels))
        return -1

    def column(self, key: str, dtype: type) -> np.ndarray:
        if self.sink is not None:
            return self.sink.column(key).astype(dtype, copy=False)
        if not self.parts:
            return np.zeros(0, dtype)
        return np.concatenate([p.pop(key) for p in self.parts]).astype(dtype, copy=False)


#: The X rows' columns and their types (:meth:`_Columns.column`).
_ROW_DTYPES = {"ts": np.float64, "dur": np.float64, "cat": np.int32, "name": np.int32,
               **dict.fromkeys(_INT_COLUMNS, np.int64)}


#: Input bytes per X row the columns may be reserved for at once (:meth:`_Sink._grow`): their 88 bytes per row are
#: then at most a third of the input's size, what a real trace's columns take.
BYTES_PER_ROW = 256


class _Sink:
    """The X rows' columns of the whole trace, each chunk's rows copied in as the chunk is added.

    Why not keep each chunk's columns and concatenate them at the end: on a gigabyte that writes every column twice
    into memory never touched before (the parts, then the whole), and on these machines a fresh page costs more than
    the copy (``perf``: the concatenation was 0.46 s of a 1 GB read, docs/benchmarks.md).  Here a chunk's rows are
    copied while they are hot and then freed, so the next chunk reuses their memory; the columns are allocated for the
    rows the input is expected to hold (``total``/``done``, set by the reader: its size and how far the chunk added
    ends; pages never written cost nothing) and trimmed in place at the end.  Without a size, or before the estimate
    is worth trusting, capacity grows 4x at a time, so at most a third of the rows is copied twice."""

    def __init__(self) -> None:
        self.rows = 0
        self.total = 0  # bytes of text the input holds, 0 where unknown
        self.done = 0  # where the chunk being added ends
        self.cols = {k: np.empty(0, dt) for k, dt in _ROW_DTYPES.items()}

    def append(self, part: dict[str, np.ndarray]) -> None:
        n = len(part["ts"])
        if self.rows + n > len(self.cols["ts"]):
            self._grow(self.rows + n)
        end = self.rows + n
        for key, col in self.cols.items():
            col[self.rows:end] = part[key]
        self.rows = end

    def _grow(self, need: int) -> None:
        """Room for at least ``need`` rows: the rows the whole input should hold at the density read so far (plus a
        tenth), at most 4x ``need`` or one row per :data:`BYTES_PER_ROW` of the input, whichever is more (a dense
        start is no promise: a hostile file's would reserve gigabytes; a real trace's rows take ~250 bytes each)."""
        expect = need * self.total // self.done * 11 // 10 if 0 < self.done < self.total else 0
        cap = max(need, 1 << 12, min(expect, max(4 * need, self.total // BYTES_PER_ROW)) if expect else 4 * need)
        for key, col in self.cols.items():
            new = np.empty(cap, col.dtype)
            new[:self.rows] = col[:self.rows]
            self.cols[key] = new

    def column(self, key: str) -> np.ndarray:
        """A column of every row, handed over (trimmed in place: ``realloc`` gives the unused tail back unread)."""
        col = self.cols.pop(key)
        col.resize(self.rows, refcheck=False)  # this object held the only reference
        return col


#: Distinct (FLOP op, shapes) whose work is remembered: far more than a model has, a bound for hostile files.
_WORK_MEMO = 1 << 16
_NO_ARGS = object()  # a FLOP op whose raw shape arguments hold nothing


_PH, _TS, _DUR, _CAT, _NAME, _PID, _TID, _ARGS = map(attrgetter, ("ph", "ts", "dur", "cat", "name", "pid", "tid", "args"))


def _positions(items: list[Any], value: Any, n: int) -> list[int]:
    """The indexes of the ``n`` occurrences of ``value`` in ``items``."""
    out, i = [], -1
    for _ in range(n):
        i = items.index(value, i + 1)
        out.append(i)
    return out


def _intern(vals: list[Any], ids: dict[str, int]) -> np.ndarray:
    """Ids of ``vals`` (strings; anything else reads as ""), new strings numbered in order of first appearance,
    as a ``setdefault`` per value would: by hashing each distinct value once (``dict.fromkeys``), not by sorting."""
    local = {}
    for v in dict.fromkeys(vals):
        local[v] = ids.setdefault(v if isinstance(v, str) else "", len(ids))
    return np.fromiter(map(local.__getitem__, vals), np.int32, len(vals))


#: The integer argument columns of the compiled scanner, in the order it writes them per row.
_SCANNED_INTS = ("correlation", "external_id", "device", "stream", "bytes", "graph_id")


def _local_ids(local: bytes, distinct: list[str], ids: dict[str, int]) -> np.ndarray:
    """Ids of the scanner's per-chunk ids (``distinct``: its strings in first-appearance order), each new string
    numbered as :func:`_intern` numbers it."""
    lut = np.fromiter((ids.setdefault(v, len(ids)) for v in distinct), np.int32, len(distinct))
    return lut[np.frombuffer(local, np.int32)]


def _scanned_ids(values: bytes, strings: bytes, distinct: list[str], labels: dict[str, int],
                 label_id: Callable[[Any, dict[str, int]], int]) -> np.ndarray:
    """A pid or tid column of the scanner: its integers, and a string's id (:meth:`_Columns._id`) where the row's
    value is a string (``strings``: the per-chunk string id, -1 elsewhere)."""
    col = np.frombuffer(values, np.int64)
    if not distinct:
        return col
    lut = np.fromiter((label_id(v, labels) for v in distinct), np.int64, len(distinct))
    local = np.frombuffer(strings, np.int32)
    return np.where(local >= 0, lut[np.maximum(local, 0)], col)


#: The typed decode's raw shape arguments of an ``Args`` struct, in ``_OP_KEYS`` order.
_RAW_OF = attrgetter(*(_STRUCT_ARGS[k] for k in _OP_KEYS))


class _ArgSpans:
    """The ``args`` of a scanned chunk's rows, decoded by the typed decode only for the rows asked for."""

    def __init__(self, data: memoryview, spans: np.ndarray):
        self._data, self._spans = data, spans

    def __getitem__(self, row: int) -> Any:
        import msgspec

        at, n = self._spans[row].tolist()
        if at < 0:
            return _EMPTY_ARGS
        return msgspec.json.decode(self._data[at:at + n], type=_ARGS_TYPE)


def _remap(theirs: dict[str, int], mine: dict[str, int], new_id: Callable[[dict], int]) -> list[int]:
    """``theirs``' keys (in their order) interned into ``mine``: their ids in ``mine``, listed by their order."""
    return [mine.setdefault(k, new_id(mine)) for k in theirs]


def _relabel(ids: list[int]) -> Callable[[int], int]:
    """A string pid/tid's id (-2, -3, ...) in a worker's columns -> its id in the merged ones; others as they are."""
    return lambda v: ids[-2 - v] if v <= -2 else v


def _int_column(vals: list[Any]) -> np.ndarray:
    """An integer argument's column: the values where they are 64-bit integers, else -1.

    ``array("q")`` is the strict converter: it takes Python integers of 64 bits and refuses anything else (None, a
    string, which ``np.array(..., np.int64)`` would parse), so a column with one such value takes the slow path."""
    try:
        return np.frombuffer(array.array("q", vals), np.int64)
    except (TypeError, OverflowError):
        return np.array([v if type(v) is int and _I64 <= v < -_I64 else -1 for v in vals], np.int64)


#: The least 64-bit integer (integers past 64 bits in an id or an argument read as absent, not as a crash).
_I64 = -(1 << 63)


def _is_number(v: Any) -> bool:
    return type(v) in (int, float) and v == v  # NaN is no time


class _Event:
    """A stdlib-decoded event (a dict) seen through the attribute names of the typed decode's struct."""

    __slots__ = ("ph", "cat", "name", "pid", "tid", "ts", "dur", "args")

    def __init__(self, e: dict):
        g = e.get
        self.ph, self.cat, self.name, self.pid = g("ph"), g("cat"), g("name"), g("pid")
        self.tid, self.ts, self.dur, self.args = g("tid"), g("ts"), g("dur"), g("args")


def _any_arg(args: Any, key: str) -> Any:
    """``args[key]`` of either decoder's events (a dict, a struct, or anything else: None)."""
    if type(args) is dict:
        return args.get(key)
    return getattr(args, _STRUCT_ARGS[key], None) if args is not None else None


def _ns(us: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Microseconds (three decimals as written) -> integer nanoseconds, exact: the whole microseconds times 1000 in
    integers, their fraction's nanoseconds added; ``out=us`` works in ``us`` (the fraction's column: on a gigabyte
    each column is tens of MB of fresh pages).

    Why not ``us * 1000.0``: past 2**53 ns (9.0e12 us, 104 days) a double holds no whole nanosecond, and PyTorch
    1.8-1.10 wrote ``ts`` as the wall clock's microseconds since 1970 (1.6e15): each time read off by up to 128 ns, each
    its own way, so a range ending where the next began overlapped it -- nested in it, the next ``record_function``
    step range was no step (of a 4-rank loop's 14 steps, 2 were read; issue #37, class 2)."""
    whole = np.floor(us)
    frac = np.subtract(us, whole, out=out)  # exact: what the double holds below the whole microseconds
    ns = whole.astype(np.int64)
    del whole
    ns *= 1000
    frac = np.rint(np.multiply(frac, 1000.0, out=frac), out=frac)
    ns += frac.astype(np.int64)
    return ns


#: Kineto's flow arrow from a launch to its work (``ac2g``; PyTorch 1.8-1.10: category ``async``, name ``launch``: its
#: ``s`` on the runtime call, its ``f`` on the kernel, copy or memset at the same pid, tid and ``ts``, the ``id`` the
#: ``correlation`` both carry): one object without nested
#: braces, its keys in any order.  Found as every object without nested braces (possessive: each start scans to the
#: next brace and never back, so the search is linear on any text), kept where it names ``ac2g``.
_FLAT_OBJECT = re.compile(rb'\{[^{}]*+\}')
#: What the flows' second reading reads at a time, and keeps of a block's end for an object cut by the block.
FLOW_BLOCK = 8 << 20
_FLOW_CARRY = 4096


def unlinked_rows(kt: KinetoTrace, cats: tuple[str, ...], flows_only: bool = True) -> np.ndarray:
    """The rows of ``cats`` (device work) that carry no ``correlation``, where the trace holds flow ends (``f``) that
    could link them (``flows_only``; with it False, wherever they are); empty else."""
    if (flows_only and not kt.ph_counts.get("f")) or not len(kt):
        return np.zeros(0, np.int64)
    return np.flatnonzero(rows_of(kt, cats) & (kt.correlation < 0))


def rows_of(kt: KinetoTrace, cats: tuple[str, ...]) -> np.ndarray:
    """Per row of ``kt``, whether its category is one of ``cats`` (an older Kineto's name of one counts as it)."""
    ids = [i for i, c in enumerate(kt.cats) if c in cats or OLD_CATS.get(c) in cats]
    return np.isin(kt.cat, ids) if ids else np.zeros(len(kt.cat), bool)


def link_by_flows(kt: KinetoTrace, src: IO[bytes], rows: np.ndarray) -> int:
    """Give ``rows`` (device work without a ``correlation``: :func:`unlinked_rows`) the ``id`` of the ``ac2g`` flow
    that ends on each (its ``f`` at the row's pid, tid and start), reading ``src`` (the file again) for the flows;
    the number linked.

    Why: the launch link is read from the ``correlation`` both ends carry, and the flow arrows Kineto draws between
    them are only counted.  A writer that keeps a kernel's times but not that argument (a converter, a trimmed
    re-write: session h37-meta56's ``nocorr`` rewrite of the real sets) left every kernel unlaunched though each
    arrow still names its call: the steps read from the kernels each step launched were lost (``cold_mi300x_norm``:
    one step read as the whole capture, its launch-bound and host-bound findings gone, nothing said)."""
    if not rows.size:
        return 0
    stream = as_utf8(_maybe_gunzip(src)[0])
    pid_of = {v: k for k, v in kt.pid_labels.items()}
    tid_of = {v: k for k, v in kt.tid_labels.items()}
    ends: list[tuple[int, int, float, int]] = []
    carry = b""
    while True:
        block = stream.read(FLOW_BLOCK)
        text = carry + block
        last = 0
        for m in _FLAT_OBJECT.finditer(text):
            last = m.end()
            if b'"ac2g"' not in m.group(0) and b'"async"' not in m.group(0):
                continue
            try:
                e = json.loads(m.group(0))
            except ValueError:
                continue
            pid = e.get("pid") if type(e.get("pid")) is int else pid_of.get(e.get("pid"))
            tid = e.get("tid") if type(e.get("tid")) is int else tid_of.get(e.get("tid"))
            launch = e.get("cat") == "ac2g" or (e.get("cat") == "async" and e.get("name") == "launch")
            if launch and e.get("ph") == "f" and type(e.get("id")) is int and _is_number(e.get("ts")) and None not in (pid, tid):
                ends.append((pid, tid, float(e["ts"]), e["id"]))
        if not block:
            break
        carry = text[max(last, len(text) - _FLOW_CARRY):]
    if not ends:
        return 0
    at = _ns(np.array([t for _, _, t, _ in ends], np.float64))
    flow = {(p, t, int(ns)): i for (p, t, _, i), ns in zip(ends, at.tolist())}
    linked = 0
    for r, p, t, ns in zip(rows.tolist(), kt.pid[rows].tolist(), kt.tid[rows].tolist(), kt.ts_ns[rows].tolist()):
        i = flow.get((p, t, ns))
        if i is not None:
            kt.correlation[r] = i
            linked += 1
    return linked


def has_duration_pairs(kt: KinetoTrace) -> bool:
    """Whether the trace writes spans as begin/end pairs (``ph`` ``B`` and ``E``), which the columns do not read."""
    return bool(kt.ph_counts.get("B")) and bool(kt.ph_counts.get("E"))


def _whole_document(src: IO[bytes]) -> tuple:
    """The trace ``src`` parsed whole (gunzipped, as UTF-8) and its event list (None where it has none): the rewrites
    below (:func:`completed_pairs`, :func:`times_as_numbers`) mend what the columns cannot read in one pass."""
    stream, blocks = as_utf8(_maybe_gunzip(src)[0]), []
    while block := stream.read(FLOW_BLOCK):
        blocks.append(block)
    doc = json.loads(b"".join(blocks))
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    return doc, events


def completed_pairs(src: IO[bytes]) -> bytes:
    """The trace ``src`` as JSON text whose begin/end pairs are complete events: each ``B`` an ``X`` where it stands,
    its ``dur`` up to the ``E`` that closes it (the latest open ``B`` of the same pid and tid, as the Trace Event
    Format pairs them), the ``E``'s ``args`` added to its own; an ``E`` is dropped, a ``B`` never closed too.

    Why: only ``X`` events become rows.  The Trace Event Format lets a writer record a span either way, and one that
    writes the host's ops as ``B``/``E`` (session h37-meta56's rewrite of the real sets) left every op, runtime call
    and step mark unread: the report said the capture "recorded only the GPU's kernels, nothing of the host"."""
    doc, events = _whole_document(src)
    if not isinstance(events, list):
        return json.dumps(doc).encode()
    stacks: dict[tuple[str, str], list[dict]] = {}
    out = []
    for e in events:
        ph = e.get("ph") if isinstance(e, dict) else None
        if ph == "B":
            stacks.setdefault((repr(e.get("pid")), repr(e.get("tid"))), []).append(e)
            out.append(e)
            continue
        if ph != "E":
            out.append(e)
            continue
        stack = stacks.get((repr(e.get("pid")), repr(e.get("tid"))))
        if not stack:
            continue
        b = stack.pop()
        try:
            dur = float(e.get("ts")) - float(b.get("ts"))
        except (TypeError, ValueError):
            continue
        b["ph"], b["dur"] = "X", round(dur, 3)
        if isinstance(e.get("args"), dict) and e["args"]:
            b["args"] = {**(b.get("args") if isinstance(b.get("args"), dict) else {}), **e["args"]}
    out = [e for e in out if not (isinstance(e, dict) and e.get("ph") == "B")]
    if isinstance(doc, dict):
        doc["traceEvents"] = out
    return json.dumps(doc if isinstance(doc, dict) else out).encode()


def times_as_numbers(src: IO[bytes]) -> bytes | None:
    """The trace ``src`` as JSON text whose ``ts`` and ``dur`` written as numeric strings (``"1700000000123.5"``) are
    numbers; None where it writes none so (its untimed events are null, NaN or words: damage, as first read).

    Why: the columns read only numbers, and the Chrome trace viewer and Perfetto read a number in a string as the
    number.  A writer that quotes them (a converter, a template; rocprof's tblextr does, read by its own reader)
    left every event unread -- "no readable event" -- or, with ``dur`` alone quoted, every span 0 long: the report
    damaged and empty of findings (session h37-meta57's ``durstr`` rewrite of the real sets).  A file whose times
    are damaged otherwise (null, NaN, words) is first scanned block by block for a time written as text
    (:func:`_writes_text_times`) and read whole only where one is: the damaged file's second read is a scan, not a
    document held in memory (the largest shared trace damaged: see SURVEY session 59 h37-layout59).  One that
    writes them is rewritten chunk by chunk as the columns read it (:class:`_TextTimes`): what it holds at once is
    the text it writes and a chunk of the file, not the whole document's objects (h37-speed60: a 32 MB document's
    peak 5.2x -> 1.2x its size, ``benchmarks/text_times.py``; h37-tidy61: the columns' chunked reader, not a second
    one of its own)."""
    if src.seekable():
        start = src.tell()
        if not _writes_text_times(src):
            return None
        src.seek(start)
    else:  # read once here: a document with a repeated top-level key is read again whole (json's meaning of it)
        src = io.BytesIO(src.read())
        start = 0
    try:
        return _TextTimes(src, _mend_text_times).rewrite()
    except (_RepeatedKey, KinetoReadError):  # a repeated key, or no event list: json's own reading of the document
        src.seek(start)
    doc, events = _whole_document(src)
    if not isinstance(events, list):
        return None
    changed = sum(_mend_text_times(e) for e in events)
    return json.dumps(doc).encode() if changed else None


def _mend_text_times(e: Any) -> int:
    """``e``'s ``ts`` and ``dur`` written as numeric strings made numbers (in place), if ``e`` is an event; how many."""
    if not isinstance(e, dict):
        return 0
    changed = 0
    for key in ("ts", "dur"):
        v = e.get(key)
        if type(v) is str and _NUMBER_TEXT.fullmatch(v.strip()):
            x = float(v)
            if math.isfinite(x):
                e[key] = int(v) if _INTEGER_TEXT.fullmatch(v.strip()) else x
                changed += 1
    return changed


def _writes_text_times(src: IO[bytes]) -> bool:
    """Whether the trace ``src`` writes a ``ts`` or ``dur`` as a string that opens like a number, read in blocks of
    :data:`_SCAN_BLOCK` (one block held at a time, and the seam between it and the one before)."""
    stream, carry = as_utf8(_maybe_gunzip(src)[0]), b""
    while block := stream.read(_SCAN_BLOCK):
        if _TEXT_TIME.search(carry + block[:_TEXT_TIME_CARRY]) or _TEXT_TIME.search(block):
            return True
        carry = block[-_TEXT_TIME_CARRY:]
    return False


_SCAN_BLOCK = 1 << 20


_TEXT_TIME = re.compile(rb'"(?:ts|dur)"\s*:\s*"\s*[-+]?[0-9.]')
#: how many bytes of a block are read again with the next: a key, its colon and the value's start, with some spaces
_TEXT_TIME_CARRY = 256
_NUMBER_TEXT = re.compile(r"-?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?")
_INTEGER_TEXT = re.compile(r"-?[0-9]+")


# ---------------------------------------------------------------------------------------------- parser

class _Parser:
    """One pass over the (decompressed) bytes: head, events chunk by chunk, tail."""

    def __init__(self, name: str, stream: IO[bytes], compressed: bool, max_bytes: int | None,
                 progress: ProgressFn | None, decoder: str, workers: int | None = None):
        self.name, self.stream, self.compressed = name, stream, compressed
        self.workers = _default_workers() if workers is None else workers
        self.pool: Any = None
        self.threads = False  # the pool is (was, once dropped) the scanner's threads, not worker processes
        #: chunks in flight, oldest first: (future, file offset, the separator text before it, its text)
        self.pending: deque[tuple[Any, int, bytes, bytes | memoryview]] = deque()
        self.rewound = False  # a chunk in flight failed: the next one is decoded here
        self.size_hint = 0  # the text's size where known before reading (a big file's workers start at once)
        self.max_bytes, self.progress, self.decoder = max_bytes, progress, decoder
        self.chunk_bytes = CHUNK_BYTES  # bytes of events decoded at once
        self.buf = b""
        self.base = 0  # file offset of buf[0]
        self.eof = False
        self.read_error: str | None = None
        self.cols = _Columns(sink=True)
        self.problems: list[Damage] = []
        self.truncated = False
        #: the damage skipped inside the events (:meth:`_resync`): stretches, broken events, bytes, ``traceName``
        #: keys among them; the first stretch's byte, words and place among the problems
        self.skip: dict[str, Any] = {"stretches": 0, "events": 0, "bytes": 0, "ends": 0, "at": 0, "why": "",
                                     "index": 0}
        self.tail_ends = 0

    # -- input
    def _fill(self, want: int) -> None:
        """Read until ``buf`` holds ``want`` bytes or the input ends."""
        have = len(self.buf)
        if have >= want or self.eof:
            return
        if callable(getattr(self.stream, "readinto", None)):
            self._fill_into(want)
            return
        parts = [self.buf]
        while have < want and not self.eof:
            try:
                block = self.stream.read(max(_READ_BLOCK, want - have))
            except (EOFError, OSError, zlib.error) as e:  # gzip cut off or corrupt: what was read stays
                self.eof, self.read_error = True, f"{type(e).__name__}: {e}"
                break
            if not block:
                self.eof = True
                break
            parts.append(block)
            have += len(block)
            self._check_limit(have)
        self.buf = b"".join(parts)

    def _fill_into(self, want: int) -> None:
        """:meth:`_fill` from a file that reads into a buffer: the kept text and the new bytes in one new buffer (no
        block read, then joined to the text: each byte of the file copied once in memory, not twice; 1 GB PyTorch
        trace: the reads 0.24-0.44 -> 0.17-0.19 s of CPU).  The buffer is sized to the file's declared end where that
        comes first (a tail's 64 MB look-ahead allocates only what is left), and grows should the file go on past it
        (still being written).  It is never written again once read (the chunks in flight are views of it)."""
        have = len(self.buf)
        size = max(want, have + _READ_BLOCK)
        if self.size_hint > self.base + have:
            size = min(size, self.size_hint - self.base + 1)  # one byte past the declared end: the read sees it end
        buf = bytearray(size)
        buf[:have] = self.buf
        while True:
            if have == len(buf):
                buf.extend(bytes(max(_READ_BLOCK, want - have)))
            with memoryview(buf) as view, view[have:] as room:
                try:
                    n = self.stream.readinto(room)
                except (EOFError, OSError, zlib.error) as e:  # cut off or unreadable: what was read stays
                    self.eof, self.read_error = True, f"{type(e).__name__}: {e}"
                    break
            if not n:
                self.eof = True
                break
            have += n
            self._check_limit(have)
            if have >= want:
                break
        del buf[have:]
        self.buf = buf

    def _check_limit(self, have: int) -> None:
        """KinetoReadError once the text read passes ``max_bytes``."""
        if self.max_bytes is not None and self.base + have > self.max_bytes:
            raise KinetoReadError(self.name, f"trace is over the {human_size(self.max_bytes)} limit"
                                  + (" once decompressed" if self.compressed else "") + f" ({LIMIT_HINT})")

    def _drop(self, n: int) -> None:
        """Forget the first ``n`` bytes of the buffer (they are decoded)."""
        self.buf = self.buf[n:]
        self.base += n
        if self.progress is not None:
            self.progress(self.base)

    def _skip_ws(self, pos: int) -> int:
        """The offset of the first byte at or after ``pos`` that is no JSON whitespace (or the end of the input).

        A run of whitespace longer than the buffer is dropped as it is read, so it costs its length in time and
        nothing in memory (a regex scan, not a Python loop per byte)."""
        while True:
            m = _NON_WS.search(self.buf, pos)
            if m is not None:
                return m.start()
            if self.eof:
                return len(self.buf)
            self._drop(len(self.buf))
            pos = 0
            self._fill(_READ_BLOCK)

    # -- stages
    def run(self) -> KinetoTrace:
        try:
            meta, pos = self._head()
            pos = self._events(pos)
            while pos is not None and self.RESYNC and (after := self._events_after_end(pos)) is not None:
                pos = self._events(after)  # one writer's end inside the other's events (h37-damage70)
        finally:
            if self.pool is not None:
                self.pool.shutdown(wait=True, cancel_futures=True)
        if pos is not None:
            meta.update(self._tail(pos))
        self._skipped(self.tail_ends, meta)
        return self._result(meta)

    def _head(self) -> tuple[dict[str, Any], int]:
        """The top-level keys before ``traceEvents`` and the offset of the array's first event."""
        self._fill(_READ_BLOCK)
        pos = self._skip_ws(0)
        if pos >= len(self.buf):
            raise KinetoReadError(self.name, "file is empty" + (" once decompressed" if self.compressed else "")
                                  + (f" ({self.read_error})" if self.read_error else " (was the capture interrupted?)"))
        first = self.buf[pos:pos + 1]
        if first == b"[":  # Chrome's JSON Array Format: events only
            return {}, pos + 1
        if first != b"{":
            raise KinetoReadError(self.name, "not JSON" + (" once decompressed" if self.compressed else "")
                                  + f" (starts with {bytes(self.buf[pos:pos + 16])!r}): not a PyTorch profiler trace")
        m = self._find_events_key(pos)
        head = self.buf[pos:m.start()].rstrip(_WS).rstrip(b",")
        try:
            meta = _loads(head + b"}")
        except ValueError as e:
            raise KinetoReadError(self.name, f"the JSON before \"traceEvents\" does not parse ({e}): "
                                  "not a PyTorch profiler trace") from e
        return (meta if isinstance(meta, dict) else {}), m.end()

    def _find_events_key(self, pos: int) -> re.Match:
        while True:
            m = _EVENTS_KEY.search(self.buf, pos)
            if m is not None:
                return m
            if self.eof or len(self.buf) >= HEAD_LIMIT:
                if execution_trace(bytes(self.buf[:SNIFF_BYTES])):  # named as a trace, holding another profiler file
                    raise KinetoReadError(self.name, EXECUTION_TRACE)
                if self.eof:
                    self._cut_in_head(pos)
                where = "in the file" if self.eof else f"in its first {HEAD_LIMIT >> 20} MB"
                raise KinetoReadError(self.name, f"no \"traceEvents\" array {where}: not a PyTorch profiler trace")
            self._fill(len(self.buf) + _READ_BLOCK)

    def _cut_in_head(self, pos: int) -> None:
        """Raise a cut (``json_cut`` at the file's end) where the file ends inside a Kineto trace's head: its head
        holds PyTorch's own keys (``layout.kineto_head``) and is no whole JSON value -- the events that follow a head
        are missing, so the file is a trace cut short, not a foreign file (h37-damage67b: ``{"schemaVersion": 1,
        "deviceProperties": [...`` read "no traceEvents array: not a PyTorch profiler trace", with no record).  A
        whole object without ``traceEvents`` stays foreign: nothing of it is missing."""
        head = bytes(self.buf[pos:])
        if not kineto_head(head[:SNIFF_BYTES]):
            return
        try:
            json.loads(head)
            return
        except (ValueError, UnicodeDecodeError):
            pass
        end = self.base + len(self.buf)
        said = cut("json_cut", "the trace ends in its head, before its \"traceEvents\" array: was it still being "
                   "written?" + (f" [{self.read_error}]" if self.read_error else ""), offset=end)
        raise attach(KinetoReadError(self.name, f"no readable event: {said}"), said)

    def _events(self, pos: int) -> int | None:
        """Decode the array chunk by chunk; the offset just after its ``]``, None when reading stopped first.

        A big trace's chunks go to worker processes (:meth:`_parallel`), in flight a few at a time and merged in file
        order, so the columns are those of the serial path, chunk for chunk.  A chunk cut at its first candidate is
        sent; if it does not decode there, the reader goes back to its start and reads on here (:meth:`_rewind`)."""
        while True:
            self._fill(pos + self.chunk_bytes + _READ_BLOCK)
            pos = self._skip_ws(pos)
            at_end = self.buf[pos:pos + 1] == b"]"
            if not at_end and self.buf[pos:pos + 1] == b",":
                pos = self._skip_ws(pos + 1)
            if at_end or pos >= len(self.buf):
                if not self._settle():
                    pos = 0
                    continue
                if at_end:
                    return pos + 1
                self._stop("the trace ends inside the \"traceEvents\" array: was it still being written?", "json_cut",
                           self.base + pos)
                return None
            if not self.rewound and self._parallel():
                end = self._send(pos)
                if end is not None:
                    self._drop(end)
                    pos = 0
                    continue
                if self.rewound:
                    pos = 0
                    continue
            if not self._settle():
                pos = 0
                continue
            self.rewound = False
            end = self._chunk(pos)
            if end is None:
                return None
            self._drop(end)
            pos = 0

    # -- chunks decoded by worker processes
    def _parallel(self) -> bool:
        """Whether chunks go to worker processes: a big trace (past :data:`PARALLEL_AFTER` bytes and not at its end)
        with workers to give them to; the pool is started then."""
        if self.pool is not None:
            return True
        if self.workers < 2 or max(self.base, self.size_hint // 2) < PARALLEL_AFTER or self.eof:
            return False
        scanned = self.decoder == "msgspec" and _CSCAN is not None
        self.threads = scanned
        self.pool = _start_threads(self.workers) if scanned else _start_pool(self.workers)
        if self.pool is None:
            self.workers = 1
        return self.pool is not None

    def _send(self, pos: int) -> int | None:
        """Give the chunk at ``pos`` to a worker, cut at its first candidate; the offset after it, or None where the
        chunk is not an ordinary one (the input's last, one event longer than the buffer; it is decoded here after
        the chunks in flight) or where a chunk in flight failed (:attr:`rewound`)."""
        size = _chunk_size(self.buf, pos, self.chunk_bytes)
        if len(self.buf) - pos <= size:
            return None
        m = _EVENT_CUT.search(self.buf, pos + size, pos + size + _READ_BLOCK) or _CUT.search(self.buf, pos + size)
        if m is None:
            return None
        while len(self.pending) >= 2 * self.workers:
            if not self._merge_oldest():
                return None
        cut = m.start() + 1
        # a thread reads the chunk where it lies (the buffer is immutable bytes: a view keeps it, no 4 MB copy per
        # chunk); a worker process needs bytes to pickle
        data = memoryview(self.buf)[pos:cut] if self.threads else self.buf[pos:cut]
        try:
            fut = self.pool.submit(_scan_part, data) if self.threads else self.pool.submit(_decode_part, data, self.decoder)
        except Exception:  # noqa: BLE001 - a broken pool: read on here, after the chunks in flight
            self._drop_pool()
            return None
        self.pending.append((fut, self.base + pos, self.buf[:pos], data))
        return cut

    def _drop_pool(self) -> None:
        """No more workers for this trace (the chunks in flight are still merged or read again)."""
        pool, self.pool, self.workers = self.pool, None, 1
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def _merge_oldest(self) -> bool:
        """Wait for the oldest chunk in flight and add its columns; False when it did not decode (:meth:`_rewind`).

        A worker that failed (out of memory under the memory guard's limit, killed) costs the pool, not the trace:
        its chunk and the rest are read in this process."""
        fut, at, _, data = self.pending[0]
        threads = self.threads  # what the chunk was sent to, even where that pool has been dropped since
        try:
            part = fut.result()
        except Exception:  # noqa: BLE001 - whatever a worker died of, the serial path reads the same bytes
            part = threads = None
            self._drop_pool()
        if threads:
            self._ends_at(at + len(data))
            if not self._add_thread_scan(part, data):
                self._rewind()
                return False
            self.pending.popleft()
            return True
        if part is None:
            self._rewind()
            return False
        self.pending.popleft()
        self._ends_at(at + len(data))
        self.cols.merge(part)
        return True

    def _add_thread_scan(self, out: Any, data: memoryview) -> bool:
        """Add a chunk a thread scanned (``out``: what ``_cscan.scan`` gave) here, as :meth:`_chunk` adds one scanned
        in this thread, so the columns are the serial path's by construction (no per-chunk columns to merge); False
        where the chunk is no run of whole events (:meth:`_rewind`)."""
        if out is False:
            return False
        if out is not None and self.cols.add_scanned(data, out) > 0:
            return True
        try:
            events = _decode_chunk(data, self.decoder)
        except ValueError:
            return False
        self._add(events)
        return True

    def _rewind(self) -> None:
        """The oldest chunk in flight was cut inside a string or an object: it and every later one are forgotten and
        ``buf`` starts at its first byte again (its text and the text between the later ones were kept)."""
        _, start, _, first = self.pending.popleft()
        parts, end = [first], start + len(first)
        for fut, at, lead, data in self.pending:
            fut.cancel()
            parts += (_gap(lead, at - end), data)  # whitespace the reader dropped, as spaces: offsets stay the file's
            end = at + len(data)
        self.pending.clear()
        self.buf = b"".join([*parts, _gap(b"", self.base - end), self.buf])
        self.base = start
        self.rewound = True

    def _ends_at(self, end: int) -> None:
        """The chunk about to be added ends at byte ``end`` of ``size_hint``: how the columns estimate their rows."""
        sink = self.cols.sink
        if sink is not None:
            sink.total, sink.done = self.size_hint, end

    def _settle(self) -> bool:
        """Every chunk in flight merged; False when one failed (``buf`` then starts at it: :meth:`_rewind`)."""
        while self.pending:
            if not self._merge_oldest():
                return False
        return True

    def _chunk(self, pos: int) -> int | None:
        """Decode whole events from ``pos``; the offset after the last one, None when reading must stop.

        Away from the end, the first cut candidate past ``CHUNK_BYTES`` is tried; in the input's last
        chunk the candidates are tried from the end back (the array's closing ``}]`` first)."""
        size = _chunk_size(self.buf, pos, self.chunk_bytes)
        if len(self.buf) - pos > size:
            candidates = self._cuts_after(pos, pos + size)
        else:
            candidates = list(_CUT.finditer(self.buf, pos))[::-1][:MAX_CUT_TRIES]
        for m in candidates:
            cut = m.start() + 1
            self._ends_at(self.base + cut)
            scanned = self.cols.add_scanned(memoryview(self.buf)[pos:cut]) if self.decoder == "msgspec" else 0
            if scanned > 0:
                return cut
            if scanned < 0:  # the cut is inside an event: the typed decode would refuse it too
                continue
            try:
                events = _decode_chunk(memoryview(self.buf)[pos:cut], self.decoder)  # one copy, not two
            except ValueError:
                continue
            self._add(events)
            return cut
        return self._exact(pos)

    def _cuts_after(self, pos: int, at: int) -> list[re.Match]:
        """Cut candidates of the chunk that starts at ``pos``: the first ones at or after ``at``; where the buffer
        holds none, the last ones before ``at`` (the chunk ends early: what follows is one long event or a long run
        of whitespace); where there are none either (one event longer than the chunk), the first ones after reading
        on.  The buffer then doubles each time and the scan resumes where the last one ended (at its last ``}``,
        which a candidate may start with), so an event of any length costs its length, not its square."""
        before: list[re.Match] | None = None
        while True:
            candidates = _first(_CUT.finditer(self.buf, at), MAX_CUT_TRIES)
            if candidates or self.eof:
                return candidates
            if before is None:
                before = list(_CUT.finditer(self.buf, pos, at))[::-1][:MAX_CUT_TRIES]
                if before:
                    return before
            last = self.buf.rfind(b"}", at)
            at = last if last >= 0 else len(self.buf)
            self._fill(2 * len(self.buf))

    def _add(self, events: list[Any], typed: bool | None = None) -> None:
        """Columns of decoded events: structs from the typed decode, dicts from the stdlib (``typed=False``)."""
        self.cols.add(events, typed=self.decoder == "msgspec" if typed is None else typed)

    def _exact(self, pos: int) -> int | None:
        """Event by event with the stdlib (exact): after rejected cuts, at the end of a cut-off file, on garbage."""
        text = self.buf[pos:].decode("utf-8", "surrogateescape")
        dec = json.JSONDecoder()
        events: list[Any] = []
        i = end = 0
        while i < len(text) and end < self.chunk_bytes and len(events) < CHUNK_OBJECTS:
            try:
                event, end = dec.raw_decode(text, i)
            except RecursionError:  # a hostile file: nesting no trace has
                at = self.base + pos + len(text[:i].encode("utf-8", "surrogateescape"))
                self._add(events, typed=False)
                self._stop(f"an event at byte {at:,} is nested too deeply to be a trace event; "
                           "the events from there on were not read", "json_nested_too_deep", at)
                return None
            except json.JSONDecodeError as e:
                if not self.eof and (events or len(text) - e.pos < (1 << 20) or "Unterminated" in e.msg):
                    if events:
                        break  # the rest after more input is read
                    self._fill(len(self.buf) * 2)
                    return self._exact(pos)
                return self._exact_failed(pos, text, i, events, e)
            events.append(event)
            k = _skip_ws(text, end)
            if k < len(text) and text[k] == "]":
                break
            if k < len(text) and text[k] != ",":
                return self._exact_failed(pos, text, k, events, None)
            i = _skip_ws(text, k + 1)
        self._add(events, typed=False)
        return pos + len(text[:end].encode("utf-8", "surrogateescape"))

    def _exact_failed(self, pos: int, text: str, i: int, events: list[Any], e: json.JSONDecodeError | None) -> int | None:
        """Keep the whole events before ``i``; then a file cut off inside an event stops there, and damage inside the
        file is skipped to the next whole event (:meth:`_resync`): the offset in ``buf`` to read on from, None where
        reading stops."""
        self._add(events, typed=False)
        at = self.base + pos + len(text[:i].encode("utf-8", "surrogateescape"))
        if self.eof and not text.rstrip().endswith(("}", "]")):
            self._stop(f"the trace is cut off at byte {at:,}, inside an event: was it still being written?",
                       "json_cut", at)
            return None
        if e is not None:
            where = self.base + pos + len(text[:e.pos].encode("utf-8", "surrogateescape"))
            why = f"{e.msg} at byte {where:,}"
        else:
            why = f"no ',' between events at byte {at:,}"
        if not self.RESYNC:
            self._stop(f"invalid JSON in \"traceEvents\" ({why})", "json_invalid", at)
            return None
        return self._resync(at - self.base, why, broken=e is not None)

    #: Whether damage inside the events is skipped to the next whole event (the rewrite refuses it instead).
    RESYNC = True
    #: Bytes after the damage searched for the next whole event (a tail's look-ahead, :data:`HEAD_LIMIT`): where none
    #: begins in them the read stops and the rest is counted as it streams past, never held (:meth:`_unresynced`).
    RESYNC_SPAN = HEAD_LIMIT

    def _resync(self, b0: int, why: str, broken: bool, stop: bool = True) -> int | None:
        """Skip the damage at ``buf[b0]`` to the next whole event: the offset in ``buf`` of that event, None where none
        follows before the file's end (the read stops there, as it always did).

        Why: a file two processes exported to at once -- the ranks of a job each calling
        ``export_chrome_trace("trace_result.json")`` on one shared path -- is a patchwork of both writers' bytes: each
        writer's events broken off where the other's blocks begin, whole events between (cheese-snowleopard/dist-GNN's
        4-rank V100 gloo job, 1.56 MB: the read stopped at byte 8,372, 23 events in, 540 kernels among the bytes past
        it; h37-hunt69, h37-damage70).  An event is whole where it decodes on its own as an object with ``"ph"`` and
        the next byte after it is ``,``, ``]`` or another event's ``{``: a broken event (a duration cut mid-number, a
        string cut by the other writer's bytes) is dropped, never mended.  What was skipped (stretches, the event
        starts among them, bytes, ``"traceName"`` keys) is summed in :attr:`skip` and said once (:meth:`_skipped`)."""
        sk = self.skip
        c, rejected = (b0 + 1 if broken else b0), 0
        while True:
            m = _EVENT_START.search(self.buf, c)
            whole = self._whole_event_at(m.start()) if m is not None else None
            if whole is None and (self.eof or len(self.buf) - b0 >= self.RESYNC_SPAN):
                # no whole event before the file's end, or none in the span after the damage: the rest is not read
                if stop:
                    self._unresynced(b0, why, searched=not self.eof)
                return None
            if whole is None:  # no candidate in the buffer, or one that runs past it: read on, try again
                self._fill(min(2 * len(self.buf), b0 + self.RESYNC_SPAN))
                continue
            if whole:
                break
            rejected += 1
            c = m.start() + 1
        r = m.start()
        if not sk["stretches"]:
            sk["at"], sk["why"], sk["index"] = self.base + b0, why, len(self.problems)
        sk["stretches"] += 1
        sk["events"] += int(broken) + rejected
        sk["bytes"] += r - b0
        sk["ends"] += self.buf.count(_TRACE_NAME, b0, r)
        return r

    def _events_after_end(self, pos: int) -> int | None:
        """Where the array's ``]`` (before ``buf[pos]``) is one writer's end inside the other's events -- the text after
        it no trace's tail, whole events after it -- the offset in ``buf`` of the next whole event, the end and the
        bytes to it counted as a damaged stretch (:meth:`_resync`); None where the text after it is a tail, or holds
        no whole event (read as a tail, as it always was).  A file two processes wrote at once ends the shorter
        writer's array wherever its last bytes were written after the other's."""
        self._fill(pos + HEAD_LIMIT)
        tail = self.buf[pos:].strip(_WS)
        if tail in (b"", b"}") or not _EVENT_START.search(self.buf, pos):
            return None
        try:
            if isinstance(_loads(b"{" + tail.lstrip(b",")), dict):
                return None
        except ValueError:
            pass
        end = pos - 1 if self.buf[pos - 1:pos] == b"]" else pos
        return self._resync(end, f"the events go on after the array's end at byte {self.base + end:,}",
                            broken=False, stop=False)

    def _whole_event_at(self, c: int) -> bool | None:
        """Whether ``buf[c]`` opens a whole event followed by ``,``, ``]`` or ``{``; None where that needs more input."""
        n = _RESYNC_WINDOW
        while True:
            txt = bytes(self.buf[c:c + n]).decode("utf-8", "surrogateescape")
            try:
                event, end = _RESYNC_DECODER.raw_decode(txt)
            except RecursionError:
                return False
            except json.JSONDecodeError as x:
                if x.pos < len(txt) - _RESYNC_MARGIN and "Unterminated" not in x.msg:
                    return False
                if c + n < len(self.buf):
                    n *= 2
                    continue
                return False if self.eof else None
            if not isinstance(event, dict) or "ph" not in event:
                return False
            m = _NON_WS.search(self.buf, c + len(txt[:end].encode("utf-8", "surrogateescape")))
            if m is None:
                return False if self.eof else None
            return self.buf[m.start():m.start() + 1] in (b",", b"]", b"{")

    def _unresynced(self, b0: int, why: str, searched: bool = False) -> None:
        """No whole event after the damage at ``buf[b0]``: the read stops there.  The file's rest is read once for its
        ``"traceName"`` keys, which say whether two traces' bytes lie in it: in ``buf`` where the file ended in it, else
        (``searched``: no whole event in the :attr:`RESYNC_SPAN` after the damage) streamed past in blocks, counted as
        it goes and never held -- its bytes said as skipped (h37-homes71: the buffer grew to the file's rest)."""
        sk = self.skip
        at = self.base + b0
        unread = f"the events from byte {at:,} on were not read"
        if searched:
            self.tail_ends, n = self._count_rest(b0)
            unread = (f"no whole event begins in the {human_size(self.RESYNC_SPAN)} after it: the events from byte "
                      f"{at:,} on ({n:,} bytes, skipped) were not read")
        else:
            self.tail_ends = self.buf.count(_TRACE_NAME, b0)  # the rest, read once: the stretches' record counts them
        ends = sk["ends"] + self.tail_ends
        if ends > 1:  # several traces' bytes in one file: each writer's end is there, their events interleaved
            self._stop(f"invalid JSON in \"traceEvents\" ({why}): the file holds {ends} traces' ends "
                       f"(`\"traceName\"` {ends} times) -- {_TWO_WRITERS}; {unread}", "json_writers", at)
            return
        self._stop(f"invalid JSON in \"traceEvents\" ({why}); {unread}", "json_invalid", at)

    def _count_rest(self, b0: int) -> tuple[int, int]:
        """(``"traceName"`` keys, bytes) in the input from ``buf[b0]`` to its end, read block by block and dropped as
        counted: a key cut between two blocks is counted once (the last bytes of each block are kept for the next)."""
        keep = len(_TRACE_NAME) - 1
        ends, n = self.buf.count(_TRACE_NAME, b0), len(self.buf) - b0
        while not self.eof:
            self._drop(max(len(self.buf) - keep, 0))
            had = len(self.buf)
            self._fill(had + _READ_BLOCK)
            ends += self.buf.count(_TRACE_NAME)  # a key wholly in the kept bytes cannot be: they are one byte short
            n += len(self.buf) - had
        return ends, n

    def _skipped(self, tail_ends: int, meta: dict[str, Any] | None = None) -> None:
        """The one record of the damage skipped inside the events (:meth:`_resync`), at the place of its first
        stretch among the problems: unreadable (the file was read to its end past it, or a cut follows)."""
        sk = self.skip
        if not sk["stretches"]:
            return
        ends = sk["ends"] + tail_ends
        what = "json_writers" if ends > 1 else "json_invalid"
        heads = [f"`{k}`" for k in ("deviceProperties", "distributedInfo") if k in (meta or {})]
        writers = (f": the file holds {ends} traces' ends (`\"traceName\"` {ends} times) -- {_TWO_WRITERS}"
                   + (f" (its {' and '.join(heads)} are one writer's, which the file does not say)" if heads else "")
                   if ends > 1 else "")
        said = (f"invalid JSON in \"traceEvents\" ({sk['why']}){writers}; "
                f"{plural(sk['stretches'], 'damaged stretch', 'damaged stretches')} from byte {sk['at']:,} on "
                f"({plural(sk['events'], 'broken event')}, {sk['bytes']:,} bytes) were skipped, the read resumed at "
                "the next whole event each time: every count is a lower bound (and an event whose halves the damage joined "
                "so that they parse as one cannot be told from a whole one)")
        sk["writers"] = ends > 1
        self.problems.insert(sk["index"], unreadable(what, said, offset=sk["at"]))

    def _writers_held(self, cat: np.ndarray, pid: np.ndarray, corr: np.ndarray) -> np.ndarray | None:
        """Where two traces' bytes were read (:meth:`_skipped`) and two processes' events are among them, the rows of
        one writer's events, its record saying what each process's events hold; None where the file is one trace's.

        One writer's alone: read into one timeline, two processes' kernels -- on one ``pid`` each, each its own
        device 0 -- would overlap as if one GPU ran both, and their host work would be one process's.  The writer
        kept is the one with the most device events read (then events): the file says no more which it is (its head,
        ``deviceProperties`` and ``distributedInfo``, is one writer's bytes, whose unknown).  A device event is a
        writer's where its launching call's correlation id is that writer's alone; the rest are set aside, counted."""
        sk = self.skip
        if not sk["stretches"] or not sk.get("writers"):
            return None
        split = _per_process(cat, pid, corr, list(self.cols.cats))
        if split is None:
            return None
        keep, said = split
        i = sk["index"]
        self.problems[i] = dataclasses.replace(self.problems[i], detail=f"{self.problems[i].detail}; {said}")
        return keep

    def _stop(self, reason: str, what: str = "json_cut", at: int | None = None) -> None:
        """The read stops here: a cut (``what``: its code; ``at``: the byte, where known), the rest unread."""
        if self.read_error:
            reason += f" [{self.read_error}]"
        self.truncated = True
        self.problems.append(cut(what, reason, offset=at))

    def _tail(self, pos: int) -> dict[str, Any]:
        """Top-level keys after the array (``traceName``); a broken tail costs only those keys."""
        self._fill(pos + HEAD_LIMIT)
        self.tail_ends = self.buf.count(_TRACE_NAME, pos)
        tail = self.buf[pos:].strip(_WS)
        if tail in (b"", b"}"):
            return {}
        body = tail.lstrip(b",")
        try:
            rest = _loads(b"{" + body) if tail.startswith(b",") else None
        except ValueError:
            rest = None
        if not isinstance(rest, dict):
            self.problems.append(unreadable("json_tail", "the JSON after \"traceEvents\" does not parse; its keys "
                                            "(traceName ...) were skipped", offset=self.base + pos))
            return {}
        return rest

    def _result(self, meta: dict[str, Any]) -> KinetoTrace:
        c = self.cols
        if not c.rows:
            held = None if self.problems else _only_own_marks(c.ph)
            if held:
                raise KinetoReadError(self.name, nothing_recorded(held=f" (the file holds only {held}: thread names and the window's marks)"))
            reason = "; ".join(map(str, self.problems)) if self.problems else (
                f"its {c.malformed:,} complete events have no numeric time (a `ts` written as a string?)"
                if c.malformed and c.malformed >= c.ph["X"] > 0 else "the \"traceEvents\" array holds no complete event")
            error = KinetoReadError(self.name, f"no readable event: {reason}", only_pairs=bool(c.ph["B"] and c.ph["E"]),
                                    untimed=bool(c.malformed))
            raise attach(error, self.problems[0]) if self.problems else error  # cut before any event: its damage
        if self.read_error and not self.truncated:
            self.problems.append(cut("stream_end", f"the file's end is damaged ({self.read_error}), after the last "
                                     "event"))
        if c.malformed:  # skipped where they lie, the rest read on to the file's end: records left unread, no cut
            self.problems.append(unreadable("untimed_events", f"{c.malformed:,} events without a numeric time or not "
                                            "objects were skipped"))
        ts, dur = c.column("ts", np.float64), c.column("dur", np.float64)  # this reader's own: changed in place
        cols = {k: c.column(k, np.int64) for k in _INT_COLUMNS}
        cols["cat"], cols["name"] = c.column("cat", np.int32), c.column("name", np.int32)
        launch_row, blocks, threads, groups = c.launch_columns()
        self.problems += _time_problems(ts, dur, c.bad_dur)
        keep = _plausible_times(ts)
        implausible = int(keep.size - np.count_nonzero(keep))
        own = self._writers_held(cols["cat"], cols["pid"], cols["correlation"])
        if own is not None:
            keep &= own
        if not keep.all():
            if implausible:
                self.problems.append(unreadable("implausible_times", _dropped_times(implausible)))
            ts, dur, cols = ts[keep], dur[keep], {k: v[keep] for k, v in cols.items()}
            launch_row, blocks, threads, groups = _kept_launches(keep, launch_row, blocks, threads, groups)
            c.op_args, c.op_work = _kept_rows(c.op_args, keep), _kept_rows(c.op_work, keep)
            if not ts.size:
                raise attach(KinetoReadError(self.name, "no readable event: " + "; ".join(map(str, self.problems))),
                             self.problems[0])
        cat, name = _narrow_ids(cols.pop("cat")), cols.pop("name")
        return KinetoTrace(
            source=self.name, names=list(c.names), cats=list(c.cats), cat=cat,
            name=name, ts_ns=_ns(ts, out=ts), dur_ns=_ns(np.maximum(dur, 0, out=dur), out=dur), meta=meta,
            process_names=c.process_names, process_labels=c.process_labels, thread_names=c.thread_names,
            pid_labels={v: k for k, v in c.pid_labels.items()}, tid_labels={v: k for k, v in c.tid_labels.items()},
            memory=c.memory, memory_reserved=c.memory_reserved, mem=c.mem_columns(), ph_counts=dict(c.ph), n_events=c.n_events,
            bytes_read=self.base + len(self.buf), compressed=self.compressed, truncated=self.truncated,
            problems=self.problems, untimed=c.malformed + c.bad_dur, decoder=self.decoder, op_args=c.op_args,
            op_work=c.op_work, **cols,
            launch_row=launch_row, blocks=blocks, threads=threads, groups=groups,
        )


#: Bytes of the events array :class:`_TextTimes` decodes at once (the columns' :data:`CHUNK_BYTES` is 128x): the
#: rewrite holds the text it writes, so its chunk's objects are kept small beside it (``benchmarks/text_times.py``:
#: 32 KB to 512 KB cost the same CPU; the peak was least at 32 KB, h37-tidy61).
_REWRITE_CHUNK = 32 << 10


class _RepeatedKey(ValueError):
    """The document repeats a top-level key: json keeps its first place and its last value, which a text written as
    it is read cannot; :func:`times_as_numbers` reads such a document whole."""


def _per_process(cat: np.ndarray, pid: np.ndarray, corr: np.ndarray,
                 cats: list[str]) -> tuple[np.ndarray, str] | None:
    """The rows of the writer kept (:meth:`_Parser._writers_held`) and what each process's complete events hold, in
    words: its host events by their category, and the device events its launching calls' correlation ids name (a
    device event's ``pid`` is its device, the same for both writers of one file; correlation ids are each process's
    own count: an id two processes launched with names no writer).  None where fewer than two processes wrote."""
    names = [OLD_CATS.get(c, c).lower() for c in cats]

    def of(keys: Iterable[str]) -> np.ndarray:
        return np.array([n in keys for n in names] + [False], bool)[cat]

    dev = of(_DEVICE_CATS)
    pids = sorted(set(pid[of(_HOST_CATS) & (pid >= 0)].tolist()))  # the writers: the processes of host events
    if len(pids) < 2:
        return None
    host = ~dev & np.isin(pid, pids)  # every event of a writer's pid (its Python functions too)
    runtime = of(("cuda_runtime", "cuda_driver")) & (corr >= 0) & host
    writer = np.where(host, pid, -1)
    writer[dev] = _launcher(corr[runtime], pid[runtime], corr[dev])
    kept = max(pids, key=lambda p: (int(np.count_nonzero(dev & (writer == p))), int(np.count_nonzero(writer == p))))

    def held(p: int) -> str:
        mine = cat[writer == p]
        counts = Counter({"": int(np.count_nonzero(mine < 0))})  # an event without a category: another event
        for k, n in enumerate(np.bincount(mine[mine >= 0], minlength=len(names)).tolist()):
            counts[names[k]] += n
        words = [plural(counts[k], _HOST_CATS[k][:-1], _HOST_CATS[k]) for k in _HOST_CATS if counts[k]]
        words += [plural(counts[k], _DEVICE_CATS[k][:-1], _DEVICE_CATS[k]) for k in _DEVICE_CATS if counts[k]]
        other = sum(counts.values()) - sum(counts[k] for k in (*_HOST_CATS, *_DEVICE_CATS))
        return f"pid {p}: " + ", ".join(words + ([plural(other, "other event")] if other else []))

    rest = int(np.count_nonzero(dev & (writer < 0)))
    said = (f"the events read, by process (a device event by its launching call's): {held(kept)} -- kept, the most "
            f"device events read; set aside: {'; '.join(held(p) for p in pids if p != kept)}"
            + (f"; and {plural(rest, 'device event')} whose launch was not read, or whose id both launched" if rest else "")
            + ": read into one timeline, two processes' work would be one")
    return (writer == kept) | ~(host | dev), said


def _launcher(rc: np.ndarray, rp: np.ndarray, dc: np.ndarray) -> np.ndarray:
    """Per device event's correlation id ``dc``, the process whose launching call (ids ``rc``, processes ``rp``) holds
    that id alone; -1 where no call or calls of two processes hold it (:func:`_per_process`).  In numpy: the runtime
    calls of a two-writer file are hundreds of thousands where its damage is a large job's."""
    if not rc.size or not dc.size:
        return np.full(dc.size, -1, np.int64)
    pairs = np.unique(np.stack([rc.astype(np.int64), rp.astype(np.int64)]), axis=1)  # by id, then process
    ids, first, count = np.unique(pairs[0], return_index=True, return_counts=True)
    own = np.where(count == 1, pairs[1][first], -1)
    j = np.minimum(np.searchsorted(ids, dc), ids.size - 1)
    return np.where(ids[j] == dc, own[j], -1)


class _TextTimes(_Parser):
    """A trace's JSON text read as the columns read it (:class:`_Parser`: the keys before ``traceEvents``, the
    array chunk by chunk, the keys after it) and written again with each chunk's events mended: the text
    ``json.dumps(doc)`` would write of the document ``json.loads`` reads, the events mended, without the document.

    Where the columns' reader forgives (a file cut off or damaged: its whole events kept, a note said), this one
    refuses as ``json.loads`` would, with the ``ValueError`` it raises: a text that is no JSON document is not
    rewritten.  A document whose top level is no object holding an event list (nor the list itself) raises
    :class:`KinetoReadError` from the head, as the columns' reader does."""

    RESYNC = False  # damage is refused, as json.loads refuses it

    def __init__(self, src: IO[bytes], mend: Callable[[Any], int]):
        stream, compressed = _maybe_gunzip(src)
        super().__init__("<text times>", _StrictUtf8(as_utf8(stream)), compressed, None, None, "json", workers=1)
        self.chunk_bytes = _REWRITE_CHUNK
        self.mend, self.changed, self.events = mend, 0, 0
        self.out = io.BytesIO()
        self.top = b""

    def rewrite(self) -> bytes | None:
        """The text mended by :attr:`mend` (an event in, how many of its values it changed out), None where it changed
        nothing."""
        meta, pos = self._head()
        if "traceEvents" in meta:
            raise _RepeatedKey("traceEvents")
        self.out.write(b"[" if self.top == b"[" else json.dumps(meta)[:-1].encode() + (b", " if meta else b"")
                       + b'"traceEvents": [')
        pos = self._events(pos)
        self.out.write(b"]")
        rest = self._tail(pos)
        if rest.keys() & {*meta, "traceEvents"}:
            raise _RepeatedKey(next(iter(rest.keys() & {*meta, "traceEvents"})))
        if self.top == b"{":
            self.out.write("".join(f", {json.dumps(k)}: {json.dumps(v)}" for k, v in rest.items()).encode() + b"}")
        if self.stream.error is not None:
            raise self.stream.error
        return self.out.getvalue() if self.changed else None

    def _head(self) -> tuple[dict[str, Any], int]:
        """:meth:`_Parser._head`, its text before the array as ``json.loads`` reads it (the columns' reader forgives a
        comma too many or too few there)."""
        self._fill(_READ_BLOCK)
        at = self._skip_ws(0)
        self.top = bytes(self.buf[at:at + 1])
        meta, pos = super()._head()
        if self.top == b"{":
            _loads(self.buf[at:pos - 1] + b"0}")  # the key's value written as 0: the head's JSON, its keys whole
        return meta, pos

    def _events(self, pos: int) -> int | None:
        pos = self._skip_ws(pos)
        if self.buf[pos:pos + 1] == b",":  # the columns' reader passes a comma before the first event
            raise json.JSONDecodeError("Expecting value", self.buf[pos:pos + 1].decode(), 0)
        return super()._events(pos)

    def _add(self, events: list[Any], typed: bool | None = None) -> None:
        if not events:
            return
        self.changed += sum(self.mend(e) for e in events)
        self.out.write((b", " if self.events else b"") + json.dumps(events)[1:-1].encode())
        self.events += len(events)

    def _stop(self, reason: str, what: str = "json_cut", at: int | None = None) -> None:
        if self.stream.error is not None:
            raise self.stream.error
        raise ValueError(reason)

    def _tail(self, pos: int) -> dict[str, Any]:
        """The keys after the array, as ``json.loads`` reads them; nothing may follow a top-level list."""
        while not self.eof:
            self._fill(2 * len(self.buf) + _READ_BLOCK)
        tail = self.buf[pos:].strip(_WS)
        if self.top == b"[" or tail == b"}":
            if tail and self.top == b"[":
                raise json.JSONDecodeError("Extra data", tail[:16].decode("utf-8", "replace"), 0)
            return {}
        if tail[:1] != b"," or tail[1:].lstrip(_WS)[:1] != b'"':
            raise json.JSONDecodeError("Expecting property name", tail[:16].decode("utf-8", "replace"), 0)
        rest = _loads(b"{" + tail[1:])
        return rest if isinstance(rest, dict) else {}


class _StrictUtf8:
    """A UTF-8 byte stream passed on as read, each block decoded as ``json.loads`` decodes bytes (strict, surrogates
    encoded allowed: ``surrogatepass``), so bytes that are no UTF-8 raise the ``UnicodeDecodeError`` it would (the
    columns' reader reads them as escapes).  A character cut by the block's end waits for the next read.  A read that
    fails (a gzip cut off, corrupt) is kept as :attr:`error`: the rewrite raises it, where the columns' reader notes
    it."""

    def __init__(self, raw: IO[bytes]):
        import codecs

        self._raw = raw
        self._decode = codecs.getincrementaldecoder("utf-8")(errors="surrogatepass").decode
        self.error: BaseException | None = None

    def read(self, n: int = -1) -> bytes:
        while True:
            try:
                block = self._raw.read(n)
            except (EOFError, OSError, zlib.error) as e:
                self.error = e
                raise
            text = self._decode(block, final=not block)
            if text or not block:
                return text.encode("utf-8", "surrogatepass")


#: The largest ``ts`` (microseconds) whose nanoseconds fit an int64, with room to re-base: ~106 days past the
#: clock's zero.  A Unix-epoch clock (1.7e15 us today) is well inside it; 1e308 is no time any clock can have.
MAX_TS_US = 9.0e15
#: How far from the middle of the capture an event may start: no profiler capture lasts a day (a day in
#: picoseconds, 8.6e16, still leaves the re-based times far inside an int64).
MAX_SPREAD_US = 86_400e6


def _time_problems(ts: np.ndarray, dur: np.ndarray, bad_dur: int) -> list[Damage]:
    """Durations that make no physical sense, in words for the damage note (they are read as 0).  A negative one is an
    event that ends before it starts, read whole: a contradiction (the file was not cut there); one that is no number
    was not read: unreadable (the reader read on past it to the file's end)."""
    out: list[Damage] = []
    if bad_dur:
        out.append(unreadable("untimed_durations", f"events whose duration is no finite number: {bad_dur:,} (read "
                              "as 0)"))
    neg = int(np.count_nonzero(dur < 0))
    if neg:
        out.append(contradiction("negative_durations", f"events with a negative duration: {neg:,} (read as 0)"))
    return out


def _plausible_times(ts: np.ndarray) -> np.ndarray:
    """Per row: the start is a time of this capture -- finite, within the clock's range and within a day of the
    capture's median start (the median, so one wild value cannot move the reference)."""
    lo, hi = (float(ts.min()), float(ts.max())) if ts.size else (0.0, 0.0)
    if -MAX_TS_US < lo and hi < MAX_TS_US and hi - lo <= MAX_SPREAD_US:  # NaN fails too
        return np.ones(ts.size, bool)  # every start within a day of every other, so of the median
    ok = np.isfinite(ts) & (np.abs(ts) < MAX_TS_US)
    if ok.any():
        mid = float(np.median(ts[ok]))
        ok &= np.abs(ts - mid) <= MAX_SPREAD_US
    return ok


def _dropped_times(n: int) -> str:
    return (f"events that start at no time of this capture (not finite, past the clock's range, or more than a day "
            f"from the other events): {n:,}, skipped")


def _kept_launches(keep: np.ndarray, rows: np.ndarray, *cols: np.ndarray) -> tuple[np.ndarray, ...]:
    """The launch rows of the rows ``keep`` keeps, renumbered as the kept rows are, and their columns."""
    kept = keep[rows]
    new = np.cumsum(keep, dtype=np.int64) - 1
    return (new[rows[kept]], *(c[kept] for c in cols))


def _kept_rows(by_row: dict[int, Any], keep: np.ndarray) -> dict[int, Any]:
    """A row-keyed table after the rows not in ``keep`` are dropped (rows renumbered)."""
    new = np.cumsum(keep) - 1
    return {int(new[r]): v for r, v in by_row.items() if keep[r]}


#: Bytes of events read in this process before chunks go to worker processes (at once where the file is known to be
#: twice as big): a trace smaller than this is not worth a pool's start (~0.1 s forked, ~1 s spawned).
PARALLEL_AFTER = 32 << 20
#: Worker processes at most (each holds one chunk's decoded objects, a few tens of MB).
MAX_WORKERS = 4


#: The compiled chunk scanner (``_cscan.c``), None where it is not built or the Python path is forced
#: (``compiled.py``; tests swap this one switch).
_CSCAN = compiled.load()


@functools.lru_cache(maxsize=1)
def _scanner_keys_current() -> bool:
    """Whether the compiled scanner keys an op's arguments by every key of :data:`_OP_KEYS`: an absent ``args``
    gives one 4-byte length per key.  Why: a scanner built from an older ``_cscan.c`` (a build folder kept across an
    update) keys by fewer, and two ops told apart only by a newer key (``rank``: TraceFuse's on every event) would
    share one decode; the rows are then decoded one by one, as where the scanner refuses a span."""
    try:
        out = _CSCAN.op_keys(b"{}", np.array([-1, 0], np.int64))
    except Exception:  # noqa: BLE001 - any refusal: not this scanner's keys
        return False
    return bool(out) and len(out[0]) == 4 * len(_OP_KEYS)


def _default_workers() -> int:
    """The CPUs this process may run on, at most :data:`MAX_WORKERS`; 1 inside a daemonic worker (it may not start
    processes) or where ``TB_GPU_ADVISOR_PARSE_WORKERS`` says so."""
    env = os.environ.get("TB_GPU_ADVISOR_PARSE_WORKERS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            pass
    if multiprocessing.current_process().daemon:
        return 1
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, MAX_WORKERS))


def _start_threads(workers: int) -> Any:
    """Threads for the compiled scanner's chunks: it scans without the GIL, so threads use every core without a
    process's start, its pickled columns or its copy of each chunk.  A thread only scans (:func:`_scan_part`); the
    per-chunk Python -- interning the distinct names, the metadata events, the kept shapes -- runs on the reader's
    thread as it adds the chunks in order, so no chunk's columns are built twice (on fresh columns, then merged).
    The typed decode's types are made here, once."""
    _msgspec_type()
    return concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="kineto-scan")


def _start_pool(workers: int) -> Any:
    """A process pool, or None where none can be started.  Forked where this process runs one thread (the CLI: a
    fork costs milliseconds), else spawned (forking a threaded server can deadlock the child)."""
    method = "fork" if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods() else "spawn"
    try:
        return concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method))
    except (OSError, ValueError, NotImplementedError):
        return None


def _scan_part(data: memoryview) -> Any:
    """In a worker thread: the compiled scanner's output for one chunk (``_cscan.scan``: None, False or its columns),
    added to the trace's columns by the reader's own thread, in file order (:meth:`_Parser._add_thread_scan`)."""
    return _CSCAN.scan(data)


def _decode_part(data: bytes | memoryview, decoder: str) -> _Columns | None:
    """In a worker: the columns of one chunk of whole events, as this process would add them to fresh columns;
    None when the chunk does not decode (its cut was no event boundary)."""
    cols = _Columns()
    cols._work_memo = _WORKER_MEMO  # a worker's chunks share the work of the shapes they repeat
    scanned = cols.add_scanned(data) if decoder == "msgspec" else 0
    if scanned < 0:
        return None
    if not scanned:
        try:
            events = _decode_chunk(data, decoder)
        except ValueError:
            return None
        cols.add(events, typed=decoder == "msgspec")
    cols._work_memo = {}  # not sent back: the merge needs none, and its sentinel does not survive pickling
    return cols


#: In a worker process: (FLOP op, raw shapes) -> work, over the chunks it decodes (it lives as long as the pool,
#: one parse).
_WORKER_MEMO: dict[tuple, Any] = {}


def _gap(text: bytes, length: int) -> bytes:
    """``text`` (the separator between two chunks) padded on the left to ``length`` bytes: the whitespace the
    reader dropped before it (:meth:`_Parser._skip_ws`)."""
    return b" " * (length - len(text)) + text if length > len(text) else text


def _chunk_size(buf: bytes, pos: int, chunk_bytes: int) -> int:
    """Bytes from ``pos`` to decode as one chunk: ``chunk_bytes``, less where they hold more than
    ``CHUNK_OBJECTS`` objects, so a chunk's decoded objects stay bounded however small its events are."""
    scanned = min(len(buf) - pos, chunk_bytes)
    objects = _count_closing(buf, pos, scanned)
    if objects <= CHUNK_OBJECTS:
        return chunk_bytes
    return max(scanned * CHUNK_OBJECTS // objects, 1 << 12)


def _count_closing(buf: bytes | bytearray, pos: int, n: int) -> int:
    """How many ``}`` ``buf[pos:pos + n]`` holds: one pass in C where the scanner has ``count_byte`` (1 GB trace's
    240 windows: 0.085-0.11 -> 0.019 s), else numpy's comparison (4x ``bytes.count``'s speed, but a temporary as
    large as the window and a second pass over it)."""
    counted = getattr(_CSCAN, "count_byte", None)
    if counted is not None:
        return counted(buf, pos, n, 0x7D)
    return int(np.count_nonzero(np.frombuffer(buf, np.uint8, n, pos) == 0x7D))


def _first(it: Iterable[re.Match], n: int) -> list[re.Match]:
    out = []
    for m in it:
        out.append(m)
        if len(out) == n:
            break
    return out


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _narrow_ids(a: np.ndarray) -> np.ndarray:
    return a.astype(np.int16) if a.size and int(a.max()) < (1 << 15) else a
