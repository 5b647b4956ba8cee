"""Where PyTorch writes its traces: ``<logdir>/<run>/<worker>.<time>.pt.trace.json[.gz]``.

``torch.profiler.tensorboard_trace_handler`` names the worker ``<hostname>_<pid>`` by default and the time in
nanoseconds (PyTorch 1.9 wrote milliseconds); other writers name files ``worker0.pt.trace.json`` or
``rank-0.Apr_03_18_51_38.1102.pt.trace.json`` (a pid, not a time).  Every folder holding such files (never
below a ``plugins`` folder) is a run.

Sessions: files are ranks of one job only when the traces say so -- the same ``distributedInfo.world_size``
above 1, distinct ranks, and capture times close together (:data:`RANK_WINDOW_S`; clocks of different nodes
differ by milliseconds); a file stating no rank joins a job that lacks one when it is a process of one of the
job's machines, by name or by its GPUs, clock and pid (:func:`_joins`), as the one rank the job misses where one is
(:func:`_inferred_rank`).  Every other file is a session of its own: two runs of one script written into the
same folder, each on GPU 0, are two captures, never two GPUs.  A session is named after its earliest file's
time (UTC, ``%Y_%m_%d_%H_%M_%S``; ``_<k>`` added on a collision): the time in the file name when it is a
plausible date, else the trace's own clock (``baseTimeNanoseconds`` plus the first event, or the first
event's absolute time in the old schema), else the file's modification time -- never 1970.  The ranks of one
session on one machine become one host whose GPUs are the ranks' GPUs: by name for workers ``<host>_<pid>``, and for
files named otherwise when their headers say one machine (:func:`one_machine`: one job's process groups, the same
GPUs seen by every rank, enough for the whole job; or, for ranks that each see one GPU or a part of a job larger
than their list, one clock and one pid counter: :func:`one_counter`) -- where the whole job is not one machine's,
each machine's ranks together (:func:`machine_groups`).

The clock and ``distributedInfo`` come from the first :data:`HEADER_BYTES` of each file (decompressed; a ranged
read on object stores), cached by the file's identity; a file whose start holds no clock (a writer put it after
``traceEvents``), or whose keys stand in an order that may put ``distributedInfo`` after the events
(:func:`_header_may_follow`), is read to its end for them, up to :data:`TAIL_SCAN_MAX_BYTES` on disk.
"""

from __future__ import annotations

import bisect
import dataclasses
import gzip
import json
import os
import re
import zlib
from dataclasses import dataclass

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.common.memo import Memo
from tb_gpu_advisor.formats import memory_timeline
from tb_gpu_advisor.formats.heads import (ROCPROF_SYS_DATA, is_perfetto_head, is_rocprof_head, is_rocprof_sys_data,
                                         perfetto_words)
from tb_gpu_advisor.formats.base import Found, Groups, RunFile, RunFolderLayout, is_gzip, named_sessions
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

#: The keys PyTorch's profiler writes into a trace's head, before its ``traceEvents`` (the trace's format, the GPUs,
#: the job's ranks, the clock, its CUDA/HIP versions and the profiler's options; seen in the wild fixtures' heads): a
#: file whose head holds one is a Kineto trace even where its events are missing (h37-damage67b: cut in its head).
_KINETO_HEAD_KEYS = (rb'"(?:schemaVersion|deviceProperties|baseTimeNanoseconds|distributedInfo|cupti_version|'
                     rb'cuda_runtime_version|cuda_driver_version|roctracer_version|hip_runtime_version|'
                     rb'hip_driver_version|record_shapes|profile_memory|with_stack|with_flops|with_modules)"\s*:')


def kineto_head(head: bytes) -> bool:
    """Whether the start of a JSON object holds a key only PyTorch's profiler writes in a trace's head
    (:data:`_KINETO_HEAD_KEYS`)."""
    return re.search(_KINETO_HEAD_KEYS, head) is not None


#: ROCm's ``rocprof --hip-trace`` (roctracer, rocprof v1/v2) trace, ``results.json``: read by its own format
#: (``formats.rocprof``, which tells it by its section labels and ``BeginNs`` times: ``formats.heads.is_rocprof_head``).
#: Asked before Kineto's keys: a PyTorch job's roctx ranges are named ``aten::...`` too.
ROCPROF = "ROCm rocprof's trace (`rocprof --hip-trace`, results.json), not PyTorch's: read as rocprof's"
#: ROCm's rocmProfileData (``runTracer.sh`` / ``rpd_tracer``): an SQLite database of its own (``.rpd``: tables
#: ``rocpd_api``, ``rocpd_op``, ``rocpd_string``; ``formats.heads.RPD_OWN``), and the Chrome trace its
#: ``tools/rpd2tracing.py`` writes from one, array or object form, whose host threads are named ``Hip <tid>`` /
#: ``HSA <tid>`` and whose GPUs ``GPU<n>`` (survey h37-survey30: ROCm/rocmProfileData's blog example, a PyTorch matmul
#: on gfx90a kept in ``tests/fixtures/foreign/rocm_rpd_matmul``).  The JSON is not read -- the ``.rpd`` it was made
#: from is (``formats.rpd``) -- and is said by name, with what to read instead.
_RPD_TRACE = rb'"name"\s*:\s*"thread_name"[^{}]{0,200}"args"\s*:\s*\{\s*"name"\s*:\s*"(?:Hip|HSA) \d+"'
RPD = ("the Chrome trace rocmProfileData's rpd2tracing.py writes from an .rpd database, which the Advisor does not "
       "read: give it the .rpd database itself (runTracer.sh -o <file>.rpd; read directly), or profile the job with "
       "torch.profiler (Kineto records HIP kernels, copies and runtime calls on ROCm) or JAX/TensorFlow's profiler "
       "(.xplane.pb)")


#: The Ascend PyTorch Profiler's trace (``torch_npu.profiler``, ``ASCEND_PROFILER_OUTPUT/trace_view.json``; also what
#: its ``export_chrome_trace`` writes): Kineto's ``cpu_op`` events beside processes named ``Ascend Hardware`` (the
#: NPU's tasks per stream), ``CANN`` (AscendCL calls) and ``Overlap Analysis``, a bare list with string times
#: (survey h37-survey30: Ascend's msprof-analyze test data; h37-survey4a: an MoE job's ``trace_rank0.json``).  A job on
#: a Huawei Ascend NPU, whose work the Advisor does not analyse: said by name, with the vendor's tools, never "profile
#: with torch.profiler", which wrote it.
#: Its metadata may come after megabytes of host ops (the msprof-analyze file: at 225 kB of 635 kB), so an op of Ascend's
#: operator library (``aclnn*``, which the host records as it launches them) names it in the head as well.
_ASCEND_TRACE = (rb'"name"\s*:\s*"process_name"[^{}]{0,200}"args"\s*:\s*\{\s*"name"\s*:\s*"(?:Ascend Hardware|CANN)"|'
                 rb'"name"\s*:\s*"aclnn[A-Z]')
ASCEND_TRACE = ("the Ascend PyTorch Profiler's trace (torch_npu.profiler, `trace_view.json`) of a job on a Huawei Ascend "
                "NPU, a device the Advisor does not analyse: read it with Ascend's own tools (MindStudio Insight, "
                "msprof-analyze); the Advisor reads GPU jobs' profiles (torch.profiler on CUDA or ROCm, Nsight "
                "Systems, JAX/TensorFlow's profiler)")


#: torch.profiler's memory timeline (``export_memory_timeline``): words and shapes in ``formats.memory_timeline``.
MEMORY_TIMELINE = memory_timeline.WORDS


#: Chrome's trace format in its JSON Array form: a bare list of events (``[{"ph": "X", ...}, ...]``), which Kineto
#: never writes (its traces are an object with ``traceEvents``): another tool's trace (survey h37-survey11:
#: siwaarbn/grof's own CUPTI tracer, ``gpu_trace.json``, 300 copy and kernel events with no host side).
#: Empty objects before the first event are allowed: a writer that puts a comma before every event opens the list
#: with ``{}`` (rocmProfileData's rpd2tracing.py: ``[ {}`` then ``,{...}`` lines), which Chrome's viewer skips.
#: The first event's keys in any order: a list re-written with its keys sorted (``json.dump(sort_keys=True)``,
#: ``jq -S``) opens each event with its ``args`` object, before ``ph`` (session 55's metamorphic checks).
_CHROME_ARRAY = rb'^\s*\[\s*(?:\{\s*\}\s*,\s*)*\{(?:[^{}]|\{[^{}]*\})*?"ph"\s*:'
#: ... except PyTorch's own before Kineto: ``torch.autograd.profiler``'s ``export_chrome_trace`` (PyTorch 1.7 and older,
#: and ``use_kineto=False`` since) writes a bare list whose host ops sit in the process ``"CPU functions"``
#: (pytorch/pytorch torch/autograd/profiler_util.py ``EventList.export_chrome_trace``), under any file name the user
#: gives (``trace.json``, ``prof_child_fwd.trace``).  Read as the trace it is (``adapter._legacy_host_ops``), not
#: refused as "not PyTorch's profiler" (survey h37-survey27).  With ``use_cuda``, each op's GPU time sits under
#: ``CUDA functions``, which is no kernel record and stays unread.
LEGACY_HOST_PROCESS = "CPU functions"
#: The legacy export's process of each op's GPU time under ``use_cuda=True`` (CUDA events around the op, no kernel).
LEGACY_CUDA_PROCESS = "CUDA functions"
_LEGACY_PYTORCH_ARRAY = rb'"pid"\s*:\s*"' + LEGACY_HOST_PROCESS.encode() + rb'"'
CHROME_ARRAY = ("a trace in Chrome's JSON array form (a bare list of events) written by another tool, not PyTorch's "
                "profiler, which the Advisor reads: profile the job with torch.profiler (export_chrome_trace or "
                "tensorboard_trace_handler), Nsight Systems (nsys export --type sqlite) or JAX/TensorFlow's profiler")


#: TensorFlow's and JAX's own trace JSON, converted from an XPlane: TensorBoard's trace viewer data
#: (``plugins/profile/<session>/<host>.trace.json.gz``), its export, JAX's ``perfetto_trace.json.gz``
#: (``jax.profiler.trace(create_perfetto_trace=True)``).  Its processes are the XPlane's planes, named
#: ``/device:GPU:0`` and ``/host:CPU`` (survey h37-survey18: aoberai/chess-engine's Keras logdirs of 2021).
_XPLANE_TRACE = rb'"name"\s*:\s*"/(?:device:[A-Z_]+:\d+|host:CPU)"'
XPLANE_TRACE = ("TensorFlow's or JAX's trace viewer JSON (`<host>.trace.json.gz`, JAX's `perfetto_trace.json.gz`), "
                "converted from the profile's XPlane, which holds all of it and more: give that "
                "`<host>.xplane.pb` (in the same `plugins/profile/<session>/` folder where the profiler wrote both); "
                "where no XPlane was kept (TensorFlow 2.2 wrote none), the JSON is read in its session folder, as "
                "`<run>/plugins/profile/<session>/<host>.trace.json.gz` or "
                "`<run>/plugins/profile/<session>/perfetto_trace.json.gz`")
#: TensorFlow 1.x's ``tf.compat.v1`` timeline (``timeline.Timeline(run_metadata.step_stats)
#: .generate_chrome_trace_format()``): processes named per device and stream, ``/job:localhost/replica:0/task:0/
#: device:GPU:0 Compute``, ``/device:GPU:0/stream:all Compute`` (TF 1.0: ``/gpu:0/stream:all Compute``; survey
#: h37-survey18: ikhlestov/tensorflow_profiling's 2017 timelines, kept in ``tests/fixtures/foreign/tf1_timeline_gpu``).
_TF1_TIMELINE = rb'"name"\s*:\s*"/[^"]{0,80}(?:GPU|gpu|CPU|cpu):\d+[^"]{0,40} (?:Compute|Tensors)"'
TF1_TIMELINE = ("a TensorFlow 1.x timeline (tf.compat.v1 RunMetadata step_stats as a Chrome trace, "
                "`timeline.Timeline(...).generate_chrome_trace_format()`), a format the Advisor does not read: it "
                "keeps each op's GPU time under the op's name, with no kernel names, launch calls or step marks. Profile with TensorFlow 2's profiler "
                "(tf.profiler.experimental.start(logdir) ... stop(), or the Keras TensorBoard callback's "
                "profile_batch), which writes <run>/plugins/profile/<session>/<host>.xplane.pb, or with Nsight "
                "Systems (nsys profile, then nsys export --type sqlite)")
#: TensorFlow's memory profile tool data (``<host>.memory_profile.json.gz``), made from the XPlane beside it.
_TF_MEMORY_PROFILE = rb'^\s*\{\s*"memoryProfilePerAllocator"\s*:'
TF_MEMORY_PROFILE = ("TensorFlow's memory profile tool data (`<host>.memory_profile.json.gz`), converted from the "
                     "profile's XPlane, which holds the same allocations: give that `<host>.xplane.pb` (in the same "
                     "`plugins/profile/<session>/` folder)")


#: PyTorch's execution trace (``torch.profiler.ExecutionTraceObserver``; the input of Chakra and of PARAM's et_replay):
#: ``{"schema": "1.1.1-chakra.0.0.4", "pid": ..., "time": ..., "start_ts": ..., "nodes": [...]}`` -- each op with its
#: inputs, shapes and dependencies, for replay, and no kernel or time on the device (survey h37-survey29: PARAM's
#: ``et_replay/tests/inputs``, ResNet, GPT-2 and a compiled graph, each beside the Kineto trace recorded with it).
_EXECUTION_TRACE = rb'^\s*\{\s*"schema"\s*:\s*"[^"]{1,64}"\s*,\s*"pid"\s*:\s*\d+[^\[\]]{0,400}?"nodes"\s*:\s*\['
EXECUTION_TRACE = ("PyTorch's execution trace (ExecutionTraceObserver: each op's inputs, shapes and dependencies, the "
                   "input of Chakra and of PARAM's et_replay), not a profiler trace: it holds no GPU kernel and no time "
                   "on the device. Analyse the profiler trace recorded with it (torch.profiler with "
                   "execution_trace_observer= writes both; the trace is what tensorboard_trace_handler or "
                   "export_chrome_trace writes, `<worker>.pt.trace.json`)")


def execution_trace(head: bytes) -> bool:
    """Whether the start of a JSON file is PyTorch's execution trace (:data:`EXECUTION_TRACE`)."""
    return re.search(_EXECUTION_TRACE, head) is not None


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
    if is_perfetto_head(head):  # a protobuf under a JSON name (``perfetto_trace.json.gz``): no JSON at all
        return perfetto_words(head, path)
    if re.search(_ASCEND_TRACE, head):  # Kineto's own `cpu_op` events sit beside the NPU's: before every other check
        return ASCEND_TRACE
    if not re.search(_TRACE_KEYS, head):
        if re.search(_RPD_TRACE, head):
            return RPD
        if re.search(_CHROME_ARRAY, head):
            return None if re.search(_LEGACY_PYTORCH_ARRAY, head) else CHROME_ARRAY
        if re.search(_TF_MEMORY_PROFILE, head):
            return TF_MEMORY_PROFILE
        if execution_trace(head):
            return EXECUTION_TRACE
        if is_rocprof_sys_data(head):
            return ROCPROF_SYS_DATA
        return MEMORY_TIMELINE if memory_timeline.is_json(head) else "JSON without traceEvents: not a trace"
    if re.search(_RPD_TRACE, head):  # before Kineto's keys: its PyTorch markers are named `aten::...` too
        return RPD
    if is_rocprof_head(head):  # likewise
        return ROCPROF
    if not re.search(_KINETO_KEYS, head):
        if re.search(_TF1_TIMELINE, head):
            return TF1_TIMELINE
        if re.search(_XPLANE_TRACE, head):
            return XPLANE_TRACE
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


def names_machine(worker: str, header: Header) -> bool:
    """Whether a worker's name is the handler's ``<host>_<pid>`` (:func:`machine_of`), so says its machine -- not a
    name whose number is the file's own rank (``trace_rank_3``: Accelerate's, vidur's ``profiler_trace_rank_{rank}``,
    ``export_chrome_trace(f"ddp_trace_rank_{rank}.json")``), told by the trace's header: the number is the rank
    ``distributedInfo`` gives and not the pid of the process's host events.

    Why: read as ``<host>_<pid>``, ``trace_rank_0`` ... ``trace_rank_3`` of a job on two machines were one host
    ``trace_rank`` -- two machines merged, compared on clocks that are not one (probe h37-probe43d); the rank-named
    files are placed by their headers (:func:`machine_groups`) as every other name that says no machine."""
    if machine_of(worker) == worker:
        return False
    number = int(worker.rpartition("_")[2])
    return not (header.rank == number and header.pid is not None and header.pid != number)


def by_machine(files: list[HostFile]) -> list[HostFile]:
    """One host per machine: the ranks of one machine (workers ``<host>_<pid>``) become one host whose GPUs
    are the ranks' GPUs, so the multi-GPU checks (imbalance, launch skew, AllReduce) compare them, on the
    clock they share."""
    machines: dict[str, list[HostFile]] = {}
    for hf in files:
        machines.setdefault(machine_of(hf.host), []).append(hf)
    return [hfs[0] if len(hfs) == 1 else _host(machine, sorted(hfs, key=_worker_order))
            for machine, hfs in machines.items()]


def _host(name: str, ranks: list[HostFile]) -> HostFile:
    """One host read from ``ranks``' files, in that order (the first's path, their sizes summed, the latest time)."""
    return HostFile(name, ranks[0].path, sum(h.size for h in ranks), max(h.mtime_ns for h in ranks), "kineto",
                    tuple(ranks))


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
_SCHEMA = rb'"schemaVersion"\s*:'


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
    """What the start of a trace says about the capture: when, which rank of how many, in which process groups, and
    which GPUs its machine showed the process."""

    epoch_s: float | None = None
    rank: int | None = None
    world_size: int | None = None
    #: ``distributedInfo.pg_config`` as canonical JSON: every rank of one job lists the same groups.
    groups: str | None = None
    #: ``deviceProperties`` as (id, name, totalGlobalMem) per GPU: a process lists every GPU it can see.
    gpus: tuple[tuple[object, object, object], ...] = ()
    #: the process's own pid (its first host event's), None where the start holds none
    pid: int | None = None
    #: the first event's time on the file's clock, ns (``baseTimeNanoseconds`` plus its ``ts``, as a merge aligns
    #: ranks), None without events
    clock_ns: int | None = None
    #: the clock is the wall clock (the old schema: no ``baseTimeNanoseconds``, ``ts`` the absolute microseconds since
    #: 1970), which every machine of a job shares to the millisecond: it tells no machine from another
    wall_clock: bool = False
    #: the first event's ``ts`` as written (microseconds on the file's own clock), None without events
    first_ts_us: float | None = None
    #: a checksum of the start read (crc32): two files that open alike are copies of one trace, never two parts of one
    head_crc: int = 0


#: Each file's header by its identity (path, size, mtime): discovery asks it again on every listing.
_headers: Memo[Header] = Memo(50_000)


def read_header(path: str, size: int = 0, mtime_ns: int = 0) -> Header:
    """The clock and ``distributedInfo`` of a trace, from its first :data:`HEADER_BYTES`; an empty Header for
    unreadable or foreign files.  Cached by (path, size, mtime)."""
    return _headers.ask((path, size, mtime_ns), lambda: _read_header(path, size, mtime_ns))


def _read_header(path: str, size: int, mtime_ns: int) -> Header:
    """:func:`read_header` read anew."""
    head = _head_bytes(path)
    tail = _tail_bytes(path, size) if len(head) >= HEADER_BYTES and _header_may_follow(head) else b""
    return _parse_header(head, mtime_ns / 1e9 if mtime_ns else None, tail)


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


def _header_may_follow(head: bytes) -> bool:
    """Whether header keys may stand after ``traceEvents`` in a file starting with ``head``: it holds no clock, or
    its keys before the events are in neither order known to keep the job's header there.

    Why: a JSON object's keys have no order (RFC 8259 s4).  Kineto writes ``schemaVersion``, ``deviceProperties``
    and ``distributedInfo`` before ``traceEvents`` and the clock after them; sorted keys (``json.dump(sort_keys=
    True)``, ``jq -S``) put all of them before; re-dumps of a loaded dict keep Kineto's order.  A clock before the
    events without ``schemaVersion`` beside it (which every writer of ``baseTimeNanoseconds`` writes) is another
    order, whose ``distributedInfo`` may come after the events: two ranks' files read without it were two
    captures (session h37-meta56: ``wild/tp_rtx4090_two_ranks`` with its keys reversed)."""
    clock = re.search(_BASE_TIME, head)
    if clock is None:
        return True
    events = re.search(_TRACE_KEYS, head)
    before = head[: events.start()] if events else head
    return clock.start() < len(before) and not re.search(_SCHEMA, before)


def _head_bytes(path: str) -> bytes:
    try:
        raw = fsio.read_head(path, HEADER_BYTES)
    except Exception:  # noqa: BLE001 - unreadable, gone, no credentials: a file without a header, named by its name
        return b""
    if is_gzip(raw):
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
        if not is_gzip(raw):
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
    rank = world = groups = None
    info = _json_after(_DIST_INFO, head, tail)
    if isinstance(info, dict):
        rank = info.get("rank") if type(info.get("rank")) is int else None
        world = info.get("world_size") if type(info.get("world_size")) is int else None
        if info.get("pg_config") is not None:
            groups = json.dumps(info["pg_config"], sort_keys=True)
    props = _json_after(_DEVICE_PROPS, head, tail)
    gpus = tuple((p.get("id"), p.get("name"), p.get("totalGlobalMem")) for p in props if isinstance(p, dict)) \
        if isinstance(props, list) else ()
    pid = re.search(_HOST_PID, head) or _any_order(head, _HOST_CAT, _PID)
    clock = None if ts_us is None else (int(base.group(1)) if base is not None else 0) + int(ts_us * 1e3)
    wall = base is None and ts_us is not None and _EPOCH_MIN_S <= ts_us / 1e6 <= _EPOCH_MAX_S
    return Header(when, rank, world, groups, gpus, int(pid.group(1)) if pid else None, clock, wall, ts_us,
                  zlib.crc32(head))


#: A host event's pid: Kineto writes ``{"ph": "X", "cat": "cpu_op", "name": "...", "pid": N, ...}`` in that order (GPU
#: rows' pids are the device ids, so only host categories say the process).  Matched in that order only: a free scan
#: from ``"cat"`` to ``"pid"`` is quadratic on a hostile header (46 s on 256 kB of ``"cat": "cpu_op"`` repeated); the
#: name's scan stops at its closing quote, so this is linear.
_HOST_PID = (rb'"cat"\s*:\s*"(?:cpu_op|user_annotation|cuda_runtime|python_function|Operator|Runtime)"\s*,\s*'
             rb'"name"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"pid"\s*:\s*(\d+)')


#: The same in any key order (:func:`_any_order`): a host category, and the pid beside it.
_HOST_CAT = rb'"cat"\s*:\s*"(?:cpu_op|user_annotation|cuda_runtime|python_function|Operator|Runtime)"'
_PID = rb'"pid"\s*:\s*(\d+)'


def _any_order(text: bytes, marker: bytes, *values: bytes) -> re.Match | tuple[re.Match, ...] | None:
    """In the first brace-free stretch of ``text`` (an event's keys up to or after its nested ``args``) that holds
    ``marker`` and each of ``values``, the match of each value (one: that match); None where none holds them all.

    Why: the patterns beside (``_HOST_PID``, ``_RECORD_END``, ``_TRACE_SPAN``) match an event's keys in Kineto's
    order, and a copy re-written with its keys in another (sorted: ``json.dump(sort_keys=True)``, ``jq -S``; a
    converter's) lost its pid and its window's end -- ranks of PyTorch 1.8 are joined by those windows (session
    h37-meta56 *Left* 3).  Each stretch is scanned once by each pattern, none of which crosses a brace: linear."""
    for part in re.finditer(rb"[^{}]+", text):
        seg = part.group(0)
        if not re.search(marker, seg):
            continue
        found = tuple(re.search(v, seg) for v in values)
        if all(found):
            return found[0] if len(found) == 1 else found
    return None


_DEVICE_PROPS = rb'"deviceProperties"\s*:\s*'


def _json_after(key: bytes, head: bytes, tail: bytes) -> object:
    """The JSON value after the top-level ``key`` (a byte pattern ending at the value), in the file's start or else its
    end; None where neither holds it or it does not parse (cut off by the header's size)."""
    src = head if re.search(key, head) else tail
    m = re.search(key, src)
    if m is None:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(src[m.end():].decode("utf-8", "replace"))
    except (ValueError, RecursionError):  # nesting deeper than the interpreter's limit: a hostile header, no value
        return None
    return value


_File = RunFile[Header]


def _file(f: Found) -> _File:
    worker, stamp = worker_of(f.name) or (worker_name(f.name), None)
    header = read_header(f.path, f.size, f.mtime_ns)
    when = epoch_s(stamp) or header.epoch_s or (f.mtime_ns / 1e9 if f.mtime_ns else None) or 0.0
    return _File(HostFile(worker, f.path, f.size, f.mtime_ns, "kineto"), when, header)


def _sessions(files: list[_File]) -> list[list[_File]]:
    """Files of one run folder as sessions: ranks of one job together (see the module docstring), a file without a
    rank with the job it is a process of (:func:`_joins`), every other file alone."""
    out: list[list[_File]] = []
    open_groups: list[list[_File]] = []
    rankless: list[_File] = []
    solo: list[_File] = []
    for f in sorted(files, key=lambda x: (x.when_s, x.host.path)):
        world, rank = f.header.world_size, f.header.rank
        if rank is None and not (world and world == 1):
            rankless.append(f)
            continue
        if not world or world <= 1 or rank is None:
            solo.append(f)
            continue
        for g in open_groups:
            g0 = g[0].header
            if (g0.world_size == world and len({x.header.rank for x in g}) < world  # a rank's parts: one rank
                    and all(x.header.rank != rank for x in g)
                    and f.when_s - g[0].when_s <= RANK_WINDOW_S) or any(_part_of(f, x) for x in g):
                g.append(f)
                break
        else:
            open_groups.append([f])
            out.append(open_groups[-1])
    alone = []
    for f in rankless:
        g = next((g for g in open_groups if _joins(f, g)), None)
        if g is None:
            alone.append(f)
        else:
            g.append(f)
    out += _concurrent_processes(alone) + _one_process_each(solo)
    jobs = {id(g) for g in open_groups}
    out = [_inferred_rank(g) if id(g) in jobs else g for g in out]
    return sorted(out, key=lambda g: min((x.when_s, x.host.path) for x in g))


def _concurrent_processes(files: list[_File]) -> list[list[_File]]:
    """``files`` (traces stating no rank that joined no job) as sessions: the processes of one machine that profiled
    at the same time together, as one job's (:func:`_one_job`); every other file alone.

    Why: ``distributedInfo`` is the profiler's own addition (pytorch/pytorch#58011, May 2021;
    ``torch.profiler``'s ``_KinetoProfile._start_trace``, once ``torch.distributed`` is initialised): PyTorch 1.8's
    DDP ranks, and every rank exported through ``torch.autograd.profiler`` or a tool that drops the header, write
    none.  Each such rank file was a session of its own -- the newest read alone, "3 older sessions not analysed",
    the job's other GPUs in no report and its imbalance unseen (h37-wild54p: a 4-rank job of PyTorch 1.8's files read
    as 4 captures; ``wild/dlrm_v100`` without its ``distributedInfo`` as 8).  What the files do say is enough: when
    each process's capture began and ended (:func:`_windows`), and which machine ran it -- ranks are processes of one
    machine whose windows overlap, while two runs of one script (``test_reruns_are_not_ranks``) follow each other."""
    windows = _windows(files)
    spans = _windows(files, last_event=True)
    groups: list[list[_File]] = []
    for f in sorted(files, key=lambda x: (windows.get(id(x)) or (x.when_s, x.when_s), x.host.path)):
        g = next((g for g in groups if _one_job(f, g, windows, spans)), None) if id(f) in spans else None
        if g is None:
            groups.append([f])
        else:
            g.append(f)
    return groups


def _part_of(f: _File, g: _File) -> bool:
    """Whether ``f`` and ``g`` are parts of one process's window (:func:`_parts_of_one_process`) whose times overlap or
    touch."""
    if not _parts_of_one_process(f, g):
        return False
    spans = _windows([f, g], last_event=True)
    w, v = spans.get(id(f)), spans.get(id(g))
    return w is not None and v is not None and w[0] <= v[1] and v[0] <= w[1] and _ids_agree(f, g)


def _one_process_each(files: list[_File]) -> list[list[_File]]:
    """``files`` (each of a job of one rank) as sessions: the parts of one process's window together
    (:func:`_parts_of_one_process`), every other file alone."""
    groups: list[list[_File]] = []
    by_process: dict[tuple, list[list[_File]]] = {}  # parts share a pid and a rank: only those are compared
    for f in files:
        same = by_process.setdefault((f.header.pid, f.header.rank), [])
        g = next((g for g in same if f.header.pid is not None and all(_part_of(f, x) for x in g)), None)
        if g is None:
            groups.append([f])
            same.append(groups[-1])
        else:
            g.append(f)
    return groups


def _windows(files: list[_File], last_event: bool = False) -> dict[int, tuple[float, float]]:
    """id of each of ``files`` -> its capture window (first event, end) in seconds since 1970, for each whose window
    is known: the start its header's clock, the end the export time the handler stamps into its name
    (``<worker>.<time>.pt.trace.json``), else the trace's own ``Record Window End`` (its last bytes: read only for a
    file begun within :data:`RANK_CLOCK_S` of another, as a rank's is -- a file of its own is never read twice);
    ``last_event``: where the file records neither, its last event's start (:func:`_last_event_s`) -- a part of a
    window (a thread's events written alone) holds no mark of the window's end."""
    starts = sorted(f.header.epoch_s for f in files if f.header.epoch_s is not None)
    out: dict[int, tuple[float, float]] = {}
    for f in files:
        start = f.header.epoch_s
        if start is None:
            continue
        known = worker_of(os.path.basename(f.host.path))
        end = epoch_s(known[1]) if known else None
        if end is None and bisect.bisect_right(starts, start + RANK_CLOCK_S) - bisect.bisect_left(
                starts, start - RANK_CLOCK_S) > 1:
            end = _recorded_end_s(f)
            if end is None and last_event:
                end = _last_event_s(f)
        if end is not None and start <= end:
            out[id(f)] = (start, end)
    return out


_RECORD_END = rb'"name"\s*:\s*"Record Window End"[^{}]*?"ts"\s*:\s*"?([0-9]+(?:\.[0-9]*)?)'
#: The profiler's own span over its window, the ``Trace`` row (``PyTorch Profiler (0)``), written just before it.
_TRACE_SPAN = rb'"cat"\s*:\s*"Trace"\s*,\s*"ts"\s*:\s*([0-9]+(?:\.[0-9]*)?)\s*,\s*"dur"\s*:\s*([0-9]+(?:\.[0-9]*)?)'
_TS = rb'"ts"\s*:\s*"?([0-9]+(?:\.[0-9]*)?)'
#: Each file's recorded end (us as written, None where its end holds none) by its identity (path, size, mtime).
_ends: Memo[float | None] = Memo(50_000)


def _recorded_end_s(f: _File) -> float | None:
    """The end of the capture as Kineto records it (its ``Record Window End`` instant, the trace's last event, else the
    end of its ``Trace`` span over the window), in seconds since 1970 on the header's clock: the header's start plus
    its distance from the first event; None where the file's end holds neither.  Cached by the file's identity."""
    h, key = f.header, (f.host.path, f.host.size, f.host.mtime_ns)
    if h.epoch_s is None or h.first_ts_us is None:
        return None
    end_us = _ends.ask(key, lambda: _recorded_end_us(f))
    return None if end_us is None else h.epoch_s + (end_us - h.first_ts_us) / 1e6


def _recorded_end_us(f: _File) -> float | None:
    """:func:`_recorded_end_s`'s end as written (us on the trace's clock), read anew from the file's last 8 kB."""
    tail = _tail_bytes(f.host.path, f.host.size)[-8192:]
    m = re.search(_RECORD_END, tail) or _any_order(tail, rb'"name"\s*:\s*"Record Window End"', _TS)
    spans = [tuple(float(x) for x in s) for s in re.findall(_TRACE_SPAN, tail)]
    if not m and not spans:  # keys in another order than Kineto's: the first such span
        span = _any_order(tail, rb'"cat"\s*:\s*"Trace"', _TS, rb'"dur"\s*:\s*"?([0-9]+(?:\.[0-9]*)?)')
        spans = [(float(span[0].group(1)), float(span[1].group(1)))] if span else []
    return float(m.group(1)) if m else (spans[-1][0] + spans[-1][1] if spans else None)


def _last_event_s(f: _File) -> float | None:
    """The end of the latest event among the file's last 8 kB (its ``ts`` plus its ``dur`` where written), in seconds
    since 1970 on the header's clock (as :func:`_recorded_end_s`), plus :data:`PART_GAP_S`: where the window that
    holds it may end; None where it holds none."""
    h = f.header
    if h.epoch_s is None or h.first_ts_us is None:
        return None
    ends = []
    for part in re.finditer(rb"[^{}]+", _tail_bytes(f.host.path, f.host.size)[-8192:]):
        ts, dur = re.search(_TS, part.group(0)), re.search(_DUR, part.group(0))
        if ts:
            ends.append(float(ts.group(1)) + (float(dur.group(1)) if dur else 0.0))
    return h.epoch_s + (max(ends) - h.first_ts_us) / 1e6 + PART_GAP_S if ends else None


#: How far after a part's last event the next part of one window may begin (a window cut between two events, one
#: thread's calls apart); two profiler cycles are further apart: the first's export runs between them.
PART_GAP_S = 1e-3
_DUR = rb'"dur"\s*:\s*"?([0-9]+(?:\.[0-9]*)?)'


def _one_job(f: _File, group: list[_File], windows: dict[int, tuple[float, float]],
             spans: dict[int, tuple[float, float]]) -> bool:
    """Whether ``f`` (a file stating no rank, with a window: :func:`_windows`) is one more process of the job of
    processes ``group``: another process (worker) than each of them, of the same machine (:func:`_same_machine`), whose
    capture window overlaps each of theirs -- the ranks of one job profile the same steps together."""
    for g in group:
        w, v = spans.get(id(f)), spans.get(id(g))  # one process's parts: the window of each, or its last event
        if (w is not None and v is not None and w[0] <= v[1] and v[0] <= w[1] and _parts_of_one_process(f, g)
                and _ids_agree(f, g)):
            continue
        w, v = windows.get(id(f)), windows.get(id(g))
        if w is None or v is None or g.host.host == f.host.host or not (w[0] < v[1] and v[0] < w[1]):
            return False
        if not _same_machine(f, g):
            return False
    return True


def _parts_of_one_process(f: _File, g: _File) -> bool:
    """Whether two files of one rank (or of none), whose windows overlap or touch, hold parts of one process's window:
    the same pid on their host events, the same GPUs listed (``deviceProperties``, as one process sees them) on the
    same kind of clock, and no name that says two machines; files that open alike are copies of one trace, not parts.
    Whether their rows agree (no id of one kind in both) is asked after their windows, once (:func:`_ids_agree`).

    Why: one window written as several files -- per thread (``export_chrome_trace`` called in each thread), or cut in
    two by a tool -- read as captures of their own, the newest alone and "1 older session not analysed": its launches
    in one file and their kernels in another (h37-meta57 *Left* 1).  Two profiler cycles of one process
    (``on_trace_ready``) are windows that follow each other with the export between them: they stay two captures."""
    h, m = f.header, g.header
    if h.pid is None or h.pid != m.pid or h.head_crc == m.head_crc or h.gpus != m.gpus or (
            h.wall_clock, h.rank, h.world_size, h.groups) != (m.wall_clock, m.rank, m.world_size, m.groups):
        return False
    named = _names_own_machine(f), _names_own_machine(g)
    return not all(named) or machine_of(f.host.host) == machine_of(g.host.host)


#: Each file's process (``adapter.process_of``: its pids, header and ids), or False where it does not read, by identity.
_processes: Memo[object] = Memo(1000)


def _ids_agree(f: _File, g: _File) -> bool:
    """Whether the files the headers take for parts of one process's window (:func:`_parts_of_one_process`) are, by
    what their rows say: the reader's own test (``ranks.one_process``: no id of one kind in both), asked here once
    for the layout and the reader alike.  Each file's ids are read for it (``adapter.process_of``: the compiled
    scanner's host columns, no trace built, or the whole decode where the scanner cannot say what the reader would;
    cached by the file's identity: its pids, header and ids kept), only where its header already matched another's: a
    rare layout.  A file that does not read is no part.

    Why: the layout took two files for parts from their headers alone, and the reader, finding ids both wrote, read
    them as two ranks of one host -- two captures of one process (a trace written twice, edited) side by side as if
    two GPUs had run them.  Decided here, such files stay two captures (sessions)."""
    from tb_gpu_advisor.formats.kineto.adapter import process_of  # the reader: only for files a header matched
    from tb_gpu_advisor.formats.kineto.ranks import one_process

    own = [_processes.ask((x.host.path, x.host.size, x.host.mtime_ns), lambda x=x: process_of(x.host.path) or False)
           for x in (f, g)]
    return bool(own[0] and own[1] and one_process(own[0], own[1]))


def _same_machine(f: _File, g: _File) -> bool:
    """Whether two files stating no rank are processes of one machine: both named ``<host>_<pid>`` by the handler
    for the same host, with the same GPU models where both list theirs; or, both named otherwise, by content
    (:func:`_one_process_machine`: their GPUs, clock and pid counter)."""
    named = _names_own_machine(f), _names_own_machine(g)
    if any(named):
        models = [{(x[1], x[2]) for x in h.gpus} for h in (f.header, g.header)]
        return all(named) and machine_of(f.host.host) == machine_of(g.host.host) and (
            not all(models) or models[0] == models[1])
    return _one_process_machine(f.header, g.header)


def _inferred_rank(group: list[_File]) -> list[_File]:
    """``group`` (a job's files) with the rank of its one file that states none inferred (``HostFile.inferred_rank``),
    where the job's world (its files' ``world_size``) lacks exactly one rank that no file states; as it was else.

    Why: a joined file without ``distributedInfo`` read unranked -- its GPU row with no rank, its process after every
    rank -- though the one rank the job misses names it (h37-probe45r *Left* 1).  Two files without a rank, or two
    ranks missing (a third's file not here), say no rank: none is guessed."""
    world = group[0].header.world_size or 0
    rankless = [f for f in group if f.header.rank is None]
    missing = set(range(world)) - {f.header.rank for f in group}
    if len(rankless) != 1 or len(missing) != 1:
        return group
    f = rankless[0]
    said = _File(dataclasses.replace(f.host, inferred_rank=missing.pop()), f.when_s, f.header)
    return [said if x is f else x for x in group]


def _joins(f: _File, group: list[_File]) -> bool:
    """Whether ``f``, a file whose trace states no rank (no ``distributedInfo``: the process wrote its trace before
    ``init_process_group`` or after ``destroy_process_group``, or a tool stripped the header), is one more process of
    the job ``group`` holds: the job has a rank no file here holds, and ``f`` is a process of a machine of it
    (:func:`_mates`) that saw the same GPU models and began on that machine's clock within :data:`RANK_CLOCK_S` of it.

    Why: alone, such a file was a session of its own beside its job's, named after a later time (``_1``), so the
    newest-session default read it alone and the job's other files were in no report (probe h37-probe45c: two ranks'
    files, rank 1's header stripped, read as one host holding GPU 1).  Two runs of one script each on GPU 0 -- files
    without ranks, never one job's -- still read as two captures: a file joins only a job its header-less peers
    state."""
    world = group[0].header.world_size or 0
    if len(group) >= world or any(g.host.host == f.host.host for g in group):
        return False
    mates = _mates(f, group)
    if not mates:
        return False
    h, m = f.header, mates[0].header
    models = {(x[1], x[2]) for x in h.gpus}
    if models and models != {(x[1], x[2]) for g in mates for x in g.header.gpus}:
        return False
    if h.clock_ns is not None and m.clock_ns is not None:
        return abs(h.clock_ns - m.clock_ns) <= RANK_CLOCK_S * 1e9
    return abs(f.when_s - mates[0].when_s) <= RANK_CLOCK_S


def _mates(f: _File, group: list[_File]) -> list[_File]:
    """The files of ``group`` that ran on the machine of ``f`` (a file stating no rank): by name where ``f``'s is the
    handler's ``<host>_<pid>`` -- the pid its own host events carry -- and theirs names that host (:func:`machine_of`,
    :func:`names_machine`); else by content, where the two traces show one machine (:func:`_one_process_machine`).

    Why: files saved under other names (``trace.json``, ``rank1.json``, ``worker1.pt.trace.json``) say no machine by
    name, so a rankless one never joined its job (h37-probe45r *Left* 3); what the machine gave both processes -- its
    GPUs, its clock, its pid counter -- does say it, and a foreign job's file (another machine, or minutes apart)
    shows another."""
    by_name = _mates_by_name(f, group)
    if by_name:
        return by_name
    named = _names_own_machine(f)  # then a file whose name says another machine is none of its machine's
    return [g for g in group if not (named and names_machine(g.host.host, g.header))
            and _one_process_machine(f.header, g.header)]


def _mates_by_name(f: _File, group: list[_File]) -> list[_File]:
    """The files of ``group`` whose names say the machine the name of ``f`` says (none where it says none)."""
    if not _names_own_machine(f):
        return []
    machine = machine_of(f.host.host)
    return [g for g in group if machine_of(g.host.host) == machine and names_machine(g.host.host, g.header)]


def _names_own_machine(f: _File) -> bool:
    """Whether a rankless file's worker name is the handler's ``<host>_<pid>``: a number after ``_`` that is not
    another pid than its host events' (``trace_1``, a user's rank number, names no machine)."""
    worker = f.host.host
    if machine_of(worker) == worker:
        return False
    return f.header.pid is None or f.header.pid == int(worker.rpartition("_")[2])


def _one_process_machine(h: Header, m: Header) -> bool:
    """Whether two processes' traces show one machine by content: each lists the GPUs it saw, the same models (and,
    where both list several, the same list: a machine shows every process its GPUs alike), and one clock and pid
    counter (:func:`one_counter`: first events within :data:`RANK_CLOCK_S`, pids within :data:`PID_SPAN`)."""
    if not h.gpus or not m.gpus:
        return False
    if len(h.gpus) > 1 and len(m.gpus) > 1 and h.gpus != m.gpus:
        return False
    return one_counter([h, m])


def one_machine(headers: list[Header]) -> bool:
    """Whether files' headers say they are ranks of one job on one machine: the same world above 1, distinct ranks,
    the same process groups (``pg_config``), and every process saw the same GPUs (ids, models, memory), no more ranks
    than those GPUs -- enough of them for the whole job, or else the machine's clock and pid counter
    (:func:`one_counter`) shared by the ranks.

    Why: the handler's worker name ``<host>_<pid>`` says the machine, but files saved under other names
    (``export_chrome_trace("trace_rank0.json")``) say nothing by name, and read as one host each the job's GPUs are
    never compared.  A process lists every GPU its machine shows it, so two machines' ranks list their own; and a
    machine cannot run more ranks than it has GPUs -- a job larger than the list spans machines, whose identical
    machines list identical GPUs: there the list says no machine, and what the machine gives all its processes must
    (h37-left47: 2 machines of 2 GPUs, each rank listing both, read as 4 hosts of one GPU).  Ranks that each see one
    GPU are one machine's by its clock and pid counter alone."""
    if len(headers) < 2:
        return False
    h0 = headers[0]
    if not h0.world_size or h0.world_size < 2 or not h0.gpus:
        return False
    ranks = {h.rank for h in headers}
    if None in ranks or len(ranks) != len(headers) or any((h.world_size, h.groups) != (h0.world_size, h0.groups)
                                                          for h in headers):
        return False
    if all(len(h.gpus) == 1 for h in headers):
        return one_counter(headers)
    if any(h.gpus != h0.gpus for h in headers) or len(headers) > len(h0.gpus):
        return False
    return h0.world_size <= len(h0.gpus) or one_counter(headers)


#: Ranks of one job record their first events within this many seconds of each other (the profiler's window starts
#: at the same step on every rank, and the ranks meet in every collective).
RANK_CLOCK_S = 60.0
#: Processes a launcher starts together on one machine take pids this close (Linux hands pids out in order).
PID_SPAN = 4096
#: Linux's pid counter wrapped at 32,768 before systemd raised ``kernel.pid_max`` to 4,194,304 (2019); a PID namespace
#: (a container) starts its counter at 1.  Pids past it come from a counter 4M wide, where two machines' land within
#: :data:`PID_SPAN` of each other about once in 500; pids below it may come from a narrow counter (1 in 4) or from two
#: containers started alike (their pids a few apart).
NARROW_PID_MAX = 32768


def one_counter(headers: list[Header]) -> bool:
    """Whether ranks that each see one GPU (``CUDA_VISIBLE_DEVICES`` narrowed per process) -- or a part of a job larger
    than the GPUs its files list -- ran on one machine: the same GPU model, their first events on one clock within
    :data:`RANK_CLOCK_S`, and distinct pids within :data:`PID_SPAN` -- drawn from one machine's pid counter.

    Why: such a file's GPU list cannot say the machine.  What can is what a machine gives all its processes: its clock
    (PyTorch 2.x's traces count from the machine's boot, which two machines do not share to the minute) and its pid
    counter (two machines' counters are independent, a few million wide; two containers' start alike, so their ranks'
    pids repeat).  Where the clock is the wall clock (the old schema, :attr:`Header.wall_clock`), it agrees across
    machines and tells nothing: the pid counter speaks alone, and only pids past :data:`NARROW_PID_MAX` -- a counter
    4M wide -- say one machine; below it two machines' counters (narrow ones, or two containers started alike) land
    within the span too often (h37-left47).  A rank file without a pid or a clock, or a pid seen twice, stays a host
    of its own: two machines' ranks merged would be compared on clocks that are not one."""
    pids = [h.pid for h in headers]
    clocks = [h.clock_ns for h in headers]
    if None in pids or None in clocks or len(set(pids)) != len(pids):
        return False
    if len({(g[1], g[2]) for h in headers for g in h.gpus}) != 1:
        return False
    if any(h.wall_clock for h in headers) and min(pids) <= NARROW_PID_MAX:  # type: ignore[type-var]
        return False
    return max(clocks) - min(clocks) <= RANK_CLOCK_S * 1e9 and max(pids) - min(pids) <= PID_SPAN  # type: ignore[operator]


def job_name(workers: list[str]) -> str:
    """The name of a host read from several workers' files named without their machine: the part their names share,
    ``*`` for the part that differs (``trace_rank0``, ``trace_rank1`` -> ``trace_rank*``); the first name where they
    share less than two letters or digits (``left``, ``right``: ``*t`` would name nothing)."""
    head = os.path.commonprefix(workers)
    tail = os.path.commonprefix([w[len(head):][::-1] for w in workers])[::-1]
    return f"{head}*{tail}" if sum(c.isalnum() for c in head + tail) >= 2 else workers[0]


def _machines(session: list[_File]) -> list[HostFile]:
    """One host per machine: workers named ``<host>_<pid>`` by their name (:func:`by_machine`, :func:`names_machine`);
    the files of workers named otherwise together where their headers put them on one machine
    (:func:`machine_groups`), else each alone; a file stating no rank, named otherwise, with the host of the machine
    its content shows (:func:`_with_rankless`); the parts of one process's window (:func:`_part_of`) where its first
    part is."""
    parts = _one_process_each(session) if len(session) > 1 else [session]
    if len(parts) < len(session):
        files = {p[0].host.path: [f.host for f in sorted(p, key=lambda f: f.host.path)] for p in parts}
        return [_with_parts(h, files) for h in _machines([p[0] for p in parts])]
    if len(session) > 1:
        ranked = [f for f in session if f.header.rank is not None]
        joined = [f for f in session if f.header.rank is None and not _mates_by_name(f, ranked)]
        if not ranked:  # processes of one machine stating no rank (:func:`_concurrent_processes`), placed as ranks
            named = [f.host for f in session if names_machine(f.host.host, f.header)]  # of their names are
            unnamed = sorted((f for f in session if not names_machine(f.host.host, f.header)),
                             key=lambda f: (f.header.pid or 0, f.host.host))  # rank order, as they started
            out = by_machine(named)
            if len(unnamed) > 1:  # names that say no machine: the one machine their content showed
                return out + [_host(job_name([f.host.host for f in unnamed]), [f.host for f in unnamed])]
            return out + [f.host for f in unnamed]
        if joined:
            return _with_rankless(_machines([f for f in session if all(f is not j for j in joined)]), joined, session)
    unnamed = [f for f in session if not names_machine(f.host.host, f.header)]
    groups = machine_groups([f.header for f in unnamed])
    grouped = {id(unnamed[i]) for g in groups for i in g}
    out = by_machine([f.host for f in session if names_machine(f.host.host, f.header)])
    out += [f.host for f in unnamed if id(f) not in grouped]
    for g in groups:
        ranks = [f.host for f in sorted((unnamed[i] for i in g), key=lambda f: f.header.rank or 0)]
        out.append(_host(job_name([h.host for h in ranks]), ranks))
    return out


def _with_parts(host: HostFile, files: dict[str, list[HostFile]]) -> HostFile:
    """``host`` read from every part of each of its processes' windows (``files``: first part's path -> the parts)."""
    each = [h for f in (host.ranks or (host,)) for h in files.get(f.path, [f])]
    return host if len(each) == 1 else _host(host.host, each)


def _with_rankless(hosts: list[HostFile], joined: list[_File], session: list[_File]) -> list[HostFile]:
    """``hosts`` with each of ``joined`` (files stating no rank, named without their machine, that joined the job by
    content: :func:`_mates`) added to the host holding a file of its machine, as one more rank's file of it."""
    for f in joined:
        mates = {g.host.path for g in _mates(f, [g for g in session if g.header.rank is not None])}
        at = next((i for i, h in enumerate(hosts) if any(r.path in mates for r in (h.ranks or (h,)))), None)
        if at is None:  # its machine's files were rankless too: a host of its own
            hosts.append(f.host)
            continue
        files = (*(hosts[at].ranks or (hosts[at],)), f.host)
        hosts[at] = _host(hosts[at].host if hosts[at].ranks else _one_name(files, session), list(files))
    return hosts


def _one_name(files: tuple[HostFile, ...], session: list[_File]) -> str:
    """The name of a host made of a rank's file and a rankless file of its machine: the machine where the rank's
    name is the handler's ``<host>_<pid>``, else the part the names share (:func:`job_name`)."""
    first = next(g for g in session if g.host.path == files[0].path)
    if names_machine(first.host.host, first.header):
        return machine_of(first.host.host)
    return job_name([h.host for h in files])


#: Rank files of one session linked pair by pair into machines at most: the pairs grow as their square (a hostile
#: folder of thousands of rank files would take seconds); a larger job's files stay a host each, as before.
MAX_LINKED = 256


def machine_groups(headers: list[Header]) -> list[list[int]]:
    """The indices of ``headers`` that are ranks of one machine, a list per machine of two or more (a file alone is in
    none): all of them where :func:`one_machine` says so; else, for ranks whose GPU lists cannot say the machine (one GPU
    each, or a job larger than the list), the machines their clocks and pid counters show -- files linked where a pair shares both (:func:`one_counter`), each group kept only
    where it passes :func:`one_machine` whole.

    Why: a job over several machines (2 of 4 ranks on each of 2) fails the whole job's test, and its files read as a
    host each -- no machine's GPUs compared.  Each machine still shows itself to its own ranks; a group that chains
    two counters (a pid span wider than one machine's) fails the whole-group test and stays apart: two machines are
    never merged."""
    if len(headers) < 2:
        return []
    if one_machine(headers):
        return [list(range(len(headers)))]
    if len(headers) > MAX_LINKED:
        return []
    root = list(range(len(headers)))

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    for i in range(len(headers)):
        for j in range(i + 1, len(headers)):
            if find(i) != find(j) and one_machine([headers[i], headers[j]]):
                root[find(j)] = find(i)
    parts: dict[int, list[int]] = {}
    for i in range(len(headers)):
        parts.setdefault(find(i), []).append(i)
    return [g for g in parts.values() if len(g) > 1 and one_machine([headers[i] for i in g])]


class KinetoLayout(RunFolderLayout):
    expected = EXPECTED

    def claims(self, rel: tuple[str, ...]) -> bool:
        return worker_of(rel[-1]) is not None and self.in_run_folder(rel)

    def capture_span(self, path: str, size: int, mtime_ns: int) -> tuple[float, float]:
        """From the trace's first event (its header's clock) to its export (the file's modification time)."""
        end = mtime_ns / 1e9
        start = read_header(path, size, mtime_ns).epoch_s
        return (start if start is not None and start <= end else end), end

    def gpu_totals(self, path: str, size: int, mtime_ns: int) -> tuple[tuple[int, int], ...]:
        """Each GPU of the trace's ``deviceProperties`` (every GPU the process saw, by the ordinal the allocator
        numbers it by) with its ``totalGlobalMem``; read from the header :meth:`capture_span` read (cached)."""
        return tuple((gid, total) for gid, _name, total in read_header(path, size, mtime_ns).gpus
                     if isinstance(gid, int) and isinstance(total, int) and total > 0)

    def same_clock(self, a: HostFile, b: HostFile) -> bool:
        """Whether two host files of one job (ranks in sibling run folders) count on one clock, so one's times place
        the other's (``Trace.clock_ns``): processes of one machine -- by the handler's names ``<host>_<pid>`` where
        both say a machine (:func:`names_machine`), else by their headers (:func:`one_machine`) -- with the same kind
        of clock.  Two machines' clocks are two: NTP keeps them a millisecond or more apart, longer than the waits
        they would place."""
        fa, fb = (a.ranks or (a,))[0], (b.ranks or (b,))[0]
        ha, hb = (read_header(f.path, f.size, f.mtime_ns) for f in (fa, fb))
        if ha.clock_ns is None or hb.clock_ns is None or ha.wall_clock != hb.wall_clock:
            return False
        if names_machine(fa.host, ha) and names_machine(fb.host, hb):
            return machine_of(fa.host) == machine_of(fb.host)
        return one_machine([ha, hb])

    def job_rank(self, path: str, size: int, mtime_ns: int) -> tuple[int, int, str, float] | None:
        """``distributedInfo``'s rank, world size and process groups with the capture's start, from the header
        :meth:`capture_span` reads (cached); None without a rank of a world of two or more, or without a time."""
        h = read_header(path, size, mtime_ns)
        if h.rank is None or h.world_size is None or h.world_size < 2 or h.epoch_s is None:
            return None
        return h.rank, h.world_size, h.groups or "", h.epoch_s

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
            for name, session in named_sessions(_sessions(files)):
                groups.setdefault((run, name, folder), []).extend(_machines(session))
        return groups



LAYOUT = KinetoLayout()
