"""Where PyTorch writes its traces: ``<logdir>/<run>/<worker>.<time>.pt.trace.json[.gz]``.

``torch.profiler.tensorboard_trace_handler`` names the worker ``<hostname>_<pid>`` by default and the time in
nanoseconds (PyTorch 1.9 wrote milliseconds); other writers name files ``worker0.pt.trace.json`` or
``rank-0.Apr_03_18_51_38.1102.pt.trace.json`` (a pid, not a time).  Every folder holding such files (never
below a ``plugins`` folder) is a run.

Sessions: files are ranks of one job only when the traces say so -- the same ``distributedInfo.world_size``
above 1, distinct ranks, and capture times close together (:data:`RANK_WINDOW_S`; clocks of different nodes
differ by milliseconds).  Every other file is a session of its own: two runs of one script written into the
same folder, each on GPU 0, are two captures, never two GPUs.  A session is named after its earliest file's
time (UTC, ``%Y_%m_%d_%H_%M_%S``; ``_<k>`` added on a collision): the time in the file name when it is a
plausible date, else the trace's own clock (``baseTimeNanoseconds`` plus the first event, or the first
event's absolute time in the old schema), else the file's modification time -- never 1970.  The ranks of one
session on one machine (workers ``<host>_<pid>``) become one host whose GPUs are the ranks' GPUs.

The clock and ``distributedInfo`` come from the first :data:`HEADER_BYTES` of each file (decompressed; a ranged
read on object stores), cached by the file's identity; a file whose start holds no clock (a writer put it after
``traceEvents``) is read to its end for it, up to :data:`TAIL_SCAN_MAX_BYTES` on disk.
"""

from __future__ import annotations

import gzip
import json
import re
import threading
import zlib
from dataclasses import dataclass

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.formats.base import Found, Groups, RunFile, RunFolderLayout, session_name
from tb_gpu_advisor.model.logdir import ROOT_RUN, HostFile

#: Trace file endings (``tensorboard_trace_handler``, ``use_gzip=True`` for the second).
SUFFIXES = (".pt.trace.json", ".pt.trace.json.gz")
#: Other formats' plugin assets live below this folder; PyTorch never writes there.
EXPECTED = "<run>/<worker>.<time>.pt.trace.json[.gz]"


def worker_of(file_name: str) -> tuple[str, int | None] | None:
    """(worker, time_ns or None) of a ``<worker>.<time_ns>.pt.trace.json[.gz]`` name, None for any other file."""
    for suffix in SUFFIXES:
        if file_name.endswith(suffix) and len(file_name) > len(suffix):
            stem = file_name[: -len(suffix)]
            worker, dot, stamp = stem.rpartition(".")
            if dot and worker and stamp.isdigit():
                return worker, int(stamp)
            return stem, None
    return None


#: Other JSON files in a run folder (``prof.export_chrome_trace("trace.json")``) are traces when their start says so.
OTHER_SUFFIXES = (".json", ".json.gz")
#: How much of a JSON file's start is searched for a PyTorch trace's keys.
SNIFF_BYTES = 64 << 10
#: The byte patterns here are text, compiled by ``re``'s own cache at their first use: a logdir without PyTorch
#: traces never reads them (issue #38: compiling them was part of every report's start-up).
_TRACE_KEYS = rb'"traceEvents"\s*:'
_JSON_WS = b" \t\r\n"
_KINETO_KEYS = (rb'"(?:schemaVersion|deviceProperties|baseTimeNanoseconds|distributedInfo)"\s*:|'
                rb'"cat"\s*:\s*"(?:cpu_op|Operator|kernel|Kernel|cuda_runtime|Runtime|user_annotation)"|'
                rb'"name"\s*:\s*"(?:ProfilerStep#|aten::|PyTorch Profiler)')

#: ROCm's ``rocprof --hip-trace`` (roctracer, rocprof v1) trace, ``results.json``: its processes are named
#: ``CPU HIP API`` / ``COPY`` / ``GPU<n>`` and every event carries its times in ``BeginNs`` / ``DurationNs``.
#: Not read here: said by name, with the captures that are (HGLiu1998/batched_gemm, shashankparsi/HIP_Programming).
_ROCPROF_KEYS = rb'"name"\s*:\s*"CPU HIP API"|"BeginNs"\s*:'
ROCPROF = ("ROCm rocprof's trace (`rocprof --hip-trace`, roctracer's results.json), a format the Advisor does not "
           "read: profile the job with torch.profiler (Kineto records HIP kernels, copies and runtime calls on ROCm) "
           "or JAX/TensorFlow's profiler (.xplane.pb)")


#: ``profile.export_memory_timeline("x.json")``: ``[times_us, sizes_by_category]`` -- a JSON array whose first array
#: holds microsecond timestamps since the epoch (16 digits), no events (cwilson51/CO-Colloquium-Pytorch-profiler's
#: ``train_batch_128_nworkers_6_memory_broken.json``).  Its raw form (``export_memory_timeline("x.raw.json.gz")``) is
#: one ``[time_ns, action, bytes, category]`` per allocation and free, the time ``-1`` for what was live before the
#: profile began (survey h37-survey17: tonghuikang/optimizer-memory-profiles' ``profile.raw.json.gz``).
_MEMORY_TIMELINE = rb"^\s*\[\s*\[\s*(?:\d{13,}\s*,|-1\s*,\s*\d\s*,\s*-?\d+\s*,\s*(?:-?\d+|null)\s*\])"
MEMORY_TIMELINE = ("torch.profiler's memory timeline (`export_memory_timeline`: the bytes each category held over "
                   "time, or in its raw form each allocation and free by category), not a trace: analyse the "
                   "trace itself (`export_chrome_trace`, `tensorboard_trace_handler`) or a memory snapshot "
                   "(`torch.cuda.memory._dump_snapshot`), which say where the memory went")


#: Chrome's trace format in its JSON Array form: a bare list of events (``[{"ph": "X", ...}, ...]``), which Kineto
#: never writes (its traces are an object with ``traceEvents``): another tool's trace (survey h37-survey11:
#: siwaarbn/grof's own CUPTI tracer, ``gpu_trace.json``, 300 copy and kernel events with no host side).
_CHROME_ARRAY = rb'^\s*\[\s*\{[^{}]*"ph"\s*:'
CHROME_ARRAY = ("a trace in Chrome's JSON array form (a bare list of events) written by another tool, not PyTorch's "
                "profiler, which the Advisor reads: profile the job with torch.profiler (export_chrome_trace or "
                "tensorboard_trace_handler), Nsight Systems (nsys export --type sqlite) or JAX/TensorFlow's profiler")


def other_json(file_name: str) -> bool:
    """A JSON file not named as the trace handler names traces: a trace only if its content says so (:func:`sniff`)."""
    return file_name.endswith(OTHER_SUFFIXES) and worker_of(file_name) is None


def sniff(path: str) -> str | None:
    """None when the start of a JSON file is a PyTorch trace (``traceEvents`` with Kineto's keys or categories),
    else why it is not, in words (an exported chrome trace of another tool, a config file...)."""
    head = _head_bytes(path)[:SNIFF_BYTES]
    if not head:
        return "empty or unreadable"
    if not head.strip(_JSON_WS):  # a newline a writer or an editor left (survey h37-survey13: a 1-byte trace)
        return "empty: it holds only whitespace, no JSON (was the capture interrupted, or the file overwritten?)"
    if not re.search(_TRACE_KEYS, head):
        if re.search(_CHROME_ARRAY, head):
            return CHROME_ARRAY
        return MEMORY_TIMELINE if re.search(_MEMORY_TIMELINE, head) else "JSON without traceEvents: not a trace"
    if not re.search(_KINETO_KEYS, head):
        if re.search(_ROCPROF_KEYS, head):
            return ROCPROF
        return "a trace, but not PyTorch's (no profiler keys, ATen ops or CUDA categories in its first 64 kB)"
    return None


def worker_name(file_name: str) -> str:
    """The worker a file stands for: the handler's ``<worker>`` part, else the file name without ``.json[.gz]``."""
    known = worker_of(file_name)
    if known is not None:
        return known[0]
    for suffix in (".json.gz", ".json"):
        if file_name.endswith(suffix):
            return file_name[: -len(suffix)] or file_name
    return file_name


def machine_of(worker: str) -> str:
    """``<host>_<pid>`` (the handler's default worker name) -> ``<host>``; another name is its own machine."""
    head, sep, tail = worker.rpartition("_")
    return head if sep and head and tail.isdigit() else worker


def by_machine(files: list[HostFile]) -> list[HostFile]:
    """One host per machine: the ranks of one machine (workers ``<host>_<pid>``) become one host whose GPUs
    are the ranks' GPUs, so the multi-GPU checks (imbalance, launch skew, AllReduce) compare them, on the
    clock they share."""
    machines: dict[str, list[HostFile]] = {}
    for hf in files:
        machines.setdefault(machine_of(hf.host), []).append(hf)
    out = []
    for machine, hfs in machines.items():
        if len(hfs) == 1:
            out.append(hfs[0])
            continue
        hfs.sort(key=_worker_order)
        out.append(HostFile(machine, hfs[0].path, sum(h.size for h in hfs), max(h.mtime_ns for h in hfs), "kineto",
                            tuple(hfs)))
    return out


def _worker_order(hf: HostFile) -> tuple[str, int, str]:
    """Workers by machine, then pid as a number (rank order when ranks start in order), then name."""
    head, _, tail = hf.host.rpartition("_")
    return (head, int(tail), hf.host) if tail.isdigit() else (hf.host, -1, hf.host)


#: Times before this (2015) or after 2100 are no capture time: a pid or a counter in the file name.
_EPOCH_MIN_S, _EPOCH_MAX_S = 1.42e9, 4.1e9
#: Ranks of one job write their files within this many seconds of each other.
RANK_WINDOW_S = 300.0
#: How much of a file's start is read for its clock and ``distributedInfo`` (they precede ``traceEvents``).
HEADER_BYTES = 256 << 10
_BASE_TIME = rb'"baseTimeNanoseconds"\s*:\s*(\d+)'
_FIRST_TS = rb'"ts"\s*:\s*"?([0-9]+(?:\.[0-9]*)?)'
_DIST_INFO = rb'"distributedInfo"\s*:\s*'


def epoch_s(stamp: float | None) -> float | None:
    """Seconds since 1970 of a time written in seconds, ms, us or ns (told by its size); None when no plausible date."""
    if stamp is None:
        return None
    for scale in (1e9, 1e6, 1e3, 1.0):
        t = stamp / scale
        if _EPOCH_MIN_S <= t <= _EPOCH_MAX_S:
            return t
    return None


@dataclass(frozen=True)
class Header:
    """What the start of a trace says about the capture: when, and which rank of how many."""

    epoch_s: float | None = None
    rank: int | None = None
    world_size: int | None = None


_headers: dict[tuple[str, int, int], Header] = {}
_headers_lock = threading.Lock()


def read_header(path: str, size: int = 0, mtime_ns: int = 0) -> Header:
    """The clock and ``distributedInfo`` of a trace, from its first :data:`HEADER_BYTES`; an empty Header for
    unreadable or foreign files.  Cached by (path, size, mtime)."""
    key = (path, size, mtime_ns)
    with _headers_lock:
        if key in _headers:
            return _headers[key]
    head = _head_bytes(path)
    tail = _tail_bytes(path, size) if len(head) >= HEADER_BYTES and not re.search(_BASE_TIME, head) else b""
    header = _parse_header(head, mtime_ns / 1e9 if mtime_ns else None, tail)
    with _headers_lock:
        if len(_headers) > 50_000:
            _headers.clear()
        _headers[key] = header
    return header


#: JSON text in another encoding than UTF-8, told by its first bytes (RFC 8259 allows readers to ignore a BOM; RFC
#: 4627 s3 told UTF-16/32 by where the NULs of the first two ASCII characters fall).  A trace re-saved on Windows --
#: Notepad's "Unicode", PowerShell 5's `>` / `Out-File` -- is UTF-16 with a BOM (survey h37-survey13:
#: incredere/ml-accelerator-profiling-labs' `gpt2.pt.trace.json`, `FF FE 7B 00`); `Set-Content -Encoding UTF8` adds
#: UTF-8's BOM.  Longest prefixes first (UTF-32 LE's BOM starts with UTF-16 LE's).
_ENCODINGS: tuple[tuple[bytes, str, int], ...] = (
    (b"\xef\xbb\xbf", "utf-8", 3), (b"\xff\xfe\x00\x00", "utf-32-le", 4), (b"\x00\x00\xfe\xff", "utf-32-be", 4),
    (b"\xff\xfe", "utf-16-le", 2), (b"\xfe\xff", "utf-16-be", 2))


def text_encoding(head: bytes) -> tuple[str, int]:
    """(the encoding of JSON text starting with ``head``, the bytes of its BOM); ("utf-8", 0) for plain UTF-8.

    Without a BOM the NULs around the first ASCII character tell UTF-16/32 apart (JSON starts with ASCII)."""
    for bom, encoding, size in _ENCODINGS:
        if head.startswith(bom):
            return encoding, size
    if len(head) >= 4 and head[0] and not any(head[1:4]):
        return "utf-32-le", 0
    if len(head) >= 4 and not any(head[:3]) and head[3]:
        return "utf-32-be", 0
    if len(head) >= 2 and head[0] and not head[1]:
        return "utf-16-le", 0
    if len(head) >= 2 and not head[0] and head[1]:
        return "utf-16-be", 0
    return "utf-8", 0


def _head_bytes(path: str) -> bytes:
    try:
        raw = fsio.read_head(path, HEADER_BYTES)
    except Exception:  # noqa: BLE001 - unreadable, gone, no credentials: a file without a header, named by its name
        return b""
    if raw[:2] == b"\x1f\x8b":
        try:  # a cut-off stream: decompress what is there
            raw = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, HEADER_BYTES)
        except (zlib.error, gzip.BadGzipFile):
            return b""
    encoding, bom = text_encoding(raw[:4])  # a trace re-saved as UTF-16 (Windows) is sniffed as its reader reads it
    return raw[bom:] if encoding == "utf-8" else raw[bom:].decode(encoding, errors="ignore").encode("utf-8")


#: A trace whose clock is not in its first :data:`HEADER_BYTES` is read to its end for it up to this size on disk
#: (compressed); a larger one is named by its modification time rather than read whole during discovery.
TAIL_SCAN_MAX_BYTES = 32 << 20
#: How much of a file's end is kept for its clock and ``distributedInfo`` (a process-group list can run to 20 kB).
TAIL_BYTES = 256 << 10


def _tail_bytes(path: str, size: int) -> bytes:
    """The last :data:`TAIL_BYTES` of a trace (decompressed), b"" past :data:`TAIL_SCAN_MAX_BYTES` or on any error.

    Why: writers that re-serialise a trace (TraceLens's cut windows, ``json.dump`` of the loaded dict) put
    ``traceEvents`` first and ``baseTimeNanoseconds`` / ``distributedInfo`` after it, megabytes from the start; the
    session was then named after the file's modification time -- the time of the checkout, not of the capture.  A
    gzip stream cannot be entered at its end, so it is decompressed through, keeping only the last bytes."""
    if size <= 0 or size > TAIL_SCAN_MAX_BYTES:
        return b""
    try:
        with fsio.open_binary(path) as f:
            raw = f.read(TAIL_SCAN_MAX_BYTES + 1)
        if raw[:2] != b"\x1f\x8b":
            return raw[-TAIL_BYTES:]
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        keep = b""
        for i in range(0, len(raw), 1 << 20):
            keep = (keep + d.decompress(raw[i:i + (1 << 20)]))[-TAIL_BYTES:]
        return (keep + d.flush())[-TAIL_BYTES:]
    except Exception:  # noqa: BLE001 - unreadable or cut off: no tail, the modification time names the session
        return b""


def _parse_header(head: bytes, mtime_s: float | None = None, tail: bytes = b"") -> Header:
    """The capture's time, from the first reading that is a plausible date no later than the file itself (a day's
    slack for clocks): ``baseTimeNanoseconds`` plus the first event; ``baseTimeNanoseconds`` alone (writers that
    put absolute times in ``ts`` beside it would land in 2039); the first ``ts`` as the absolute microseconds of the
    old schema -- ``ts`` is always microseconds, never read at another scale (a relative one landed in 2015).
    ``tail`` (the file's end, when its start holds no clock) supplies ``baseTimeNanoseconds`` and
    ``distributedInfo`` that a writer put after ``traceEvents``."""
    base = re.search(_BASE_TIME, head) or re.search(_BASE_TIME, tail)
    first = re.search(_FIRST_TS, head)
    ts_us = float(first.group(1)) if first else None
    readings = []
    if base is not None:
        readings += [epoch_s(int(base.group(1)) + (ts_us or 0.0) * 1e3), epoch_s(int(base.group(1)))]
    if ts_us is not None:
        t = ts_us / 1e6
        readings.append(t if _EPOCH_MIN_S <= t <= _EPOCH_MAX_S else None)
    when = next((t for t in readings if t is not None and (mtime_s is None or t <= mtime_s + 86400.0)), None)
    rank = world = None
    src = head if re.search(_DIST_INFO, head) else tail
    m = re.search(_DIST_INFO, src)
    if m is not None:
        try:
            info, _ = json.JSONDecoder().raw_decode(src[m.end():].decode("utf-8", "replace"))
        except ValueError:
            info = None
        if isinstance(info, dict):
            rank = info.get("rank") if type(info.get("rank")) is int else None
            world = info.get("world_size") if type(info.get("world_size")) is int else None
    return Header(when, rank, world)


_File = RunFile[Header]


def _file(f: Found) -> _File:
    worker, stamp = worker_of(f.name) or (worker_name(f.name), None)
    header = read_header(f.path, f.size, f.mtime_ns)
    when = epoch_s(stamp) or header.epoch_s or (f.mtime_ns / 1e9 if f.mtime_ns else None) or 0.0
    return _File(HostFile(worker, f.path, f.size, f.mtime_ns, "kineto"), when, header)


def _sessions(files: list[_File]) -> list[list[_File]]:
    """Files of one run folder as sessions: ranks of one job together (see the module docstring), every other file
    alone."""
    out: list[list[_File]] = []
    open_groups: list[list[_File]] = []
    for f in sorted(files, key=lambda x: (x.when_s, x.host.path)):
        world, rank = f.header.world_size, f.header.rank
        if not world or world <= 1 or rank is None:
            out.append([f])
            continue
        for g in open_groups:
            g0 = g[0].header
            if (g0.world_size == world and len(g) < world and all(x.header.rank != rank for x in g)
                    and f.when_s - g[0].when_s <= RANK_WINDOW_S):
                g.append(f)
                break
        else:
            open_groups.append([f])
            out.append(open_groups[-1])
    return out


class KinetoLayout(RunFolderLayout):
    expected = EXPECTED

    def claims(self, rel: tuple[str, ...]) -> bool:
        return worker_of(rel[-1]) is not None and self.in_run_folder(rel)

    def maybe(self, rel: tuple[str, ...]) -> bool:
        """A file whose name does not say, but whose content may (:func:`sniff`): another JSON in a run folder."""
        return other_json(rel[-1]) and self.in_run_folder(rel)

    def sniff(self, path: str) -> str | None:
        return sniff(path)

    def group(self, found: list[Found]) -> Groups:
        """Sessions of each run folder (see the module docstring), hosts by machine."""
        by_run: dict[tuple[str, str], list[_File]] = {}
        for f in found:
            by_run.setdefault(("/".join(f.rel[:-1]) or ROOT_RUN, f.folder), []).append(_file(f))
        groups: Groups = {}
        for (run, folder), files in by_run.items():
            used: set[str] = set()
            for k, session in enumerate(_sessions(files)):
                name = session_name(min(x.when_s for x in session))
                if name in used:
                    name = f"{name}_{k}"
                used.add(name)
                groups.setdefault((run, name, folder), []).extend(by_machine([x.host for x in session]))
        return groups



LAYOUT = KinetoLayout()
