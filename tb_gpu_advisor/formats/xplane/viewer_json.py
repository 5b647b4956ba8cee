"""TensorFlow's trace viewer JSON (``<host>.trace.json.gz``) read back into the XSpace it was converted from.

Why: TensorFlow 2.2 saved a profile as its tool data only -- ``<host>.trace.json.gz`` beside the overview page, input
pipeline, TF and kernel stats -- and no ``<host>.xplane.pb`` (TF 2.3 on write both; the ``GPU-input-bound`` demo session of
tensorflow/profiler, March 2020, is such a folder).  Those logdirs held no file this reader read, and asking for "the
XPlane the profiler wrote beside it" asked for a file that never was (survey h37-wild55x).

The JSON is the XSpace itself, one event per event: TensorFlow's converter (``ConvertXSpaceToTraceEvents``,
``tsl/profiler/convert/xplane_to_trace_events.cc``) makes each plane a process (``process_name`` = the plane's name:
``/host:CPU``, ``/device:GPU:0``), each line a thread (``tid`` = the line's display id, ``thread_name`` = its name:
``Stream #13(Compute)``, the derived ``Steps`` / ``TensorFlow Ops`` lines by their ``0xdeadbeef + k`` ids), each event
an ``X`` event at its picosecond time printed in microseconds to the nanosecond (``"highres-ticks": true``), and each
stat an argument printed as text (``stat.ToString()``: ``correlation_id``, ``group_id``, ``memcpy_details``,
``step_name``, ...); an event with a display name is printed under it, its name kept as ``long_name``.  So the planes,
lines, events and stats come back as they were, and the XPlane adapter reads them as any capture.

What the JSON does not keep (it is lost, not guessed): the planes' own stats (a GPU's compute capability, SM count,
memory: the device stays unnamed), the stats the converter calls internal (a kernel's ``kernel_details``: its launch
configuration), the ``/host:metadata`` plane (XLA's HLO modules) and the task environment.
"""

from __future__ import annotations

import io
import json
import math
import re
from typing import Any

from tb_gpu_advisor.formats.base import LIMIT_HINT, human_size
from tb_gpu_advisor.formats.gz import gunzip_upto
from tb_gpu_advisor.formats.heads import is_perfetto_head, perfetto_words
from tb_gpu_advisor.formats.xplane.layout import PERFETTO_TRACE, viewer_json_host
from tb_gpu_advisor.formats.xplane.schema import message_class

#: Processes that are planes of a profile: the host's threads and each device (``/host:CPU``, ``/device:GPU:N``).
_PLANE_PREFIXES = ("/host:", "/device:")
_INT = re.compile(r"-?\d{1,19}\Z")
_INT64 = 1 << 63
_PS_PER_US = 1_000_000
#: How much of a file's start tells a Perfetto protobuf (``heads.is_perfetto_head``'s first packets).
_HEAD_BYTES = 64 * 1024


#: What the file is, in words (``Trace.printed_from``), by the framework whose profiler wrote it.
PRINTED_FROM = ("TensorFlow's trace viewer JSON (<host>.trace.json.gz: the XPlane printed event by event, what "
                "TensorFlow 2.2 saved instead of an XPlane)")
#: ... a ``<host>.trace.json.gz`` whose events are JAX's (``jax.profiler.trace`` writes it beside the XPlane).
JAX_PRINTED_FROM = ("JAX's trace viewer JSON (<host>.trace.json.gz, which jax.profiler.trace writes beside the "
                    "<host>.xplane.pb: the XPlane printed event by event; the XPlane holds more)")
#: ... JAX's ``perfetto_trace.json.gz`` (``layout.PERFETTO_TRACE``).
PERFETTO_PRINTED_FROM = ("JAX's perfetto_trace.json.gz (jax.profiler.trace(..., create_perfetto_trace=True): the "
                         "session's trace viewer JSON, the XPlane printed event by event, without its metadata; the "
                         "<host>.xplane.pb written beside it holds more)")
#: ... a trace viewer JSON whose events name neither framework.
ANY_PRINTED_FROM = ("a trace viewer JSON (<host>.trace.json.gz: an XPlane printed event by event, as TensorFlow's and "
                    "JAX's profilers print it)")


def printed_from(path: str, writer: str | None = None) -> str:
    """What the trace viewer JSON at ``path`` is, in words: JAX's ``perfetto_trace.json.gz`` by its name (only JAX
    writes it); a ``<host>.trace.json.gz`` by the framework its events show (``writer``: ``frameworks.detect_trace``'s
    id -- TensorFlow and JAX both write the name).

    Why by its events: a JAX session's ``vm.trace.json.gz`` read alone was "what TensorFlow 2.2 saved instead of an
    XPlane" while its ops were ``PjitFunction(train_step)`` and its fix JAX's (h37-wild60 *Left* 3)."""
    if path.rstrip("/").rsplit("/", 1)[-1] == PERFETTO_TRACE:
        return PERFETTO_PRINTED_FROM
    return {"jax": JAX_PRINTED_FROM, "tensorflow": PRINTED_FROM}.get(writer or "", ANY_PRINTED_FROM)


def not_kept(unnamed_gpus: int, launches_kept: bool, allocator_kept: bool, hlo_kept: bool,
             modules_run: bool) -> tuple[str, ...]:
    """What a capture read from a trace viewer JSON lacks because the JSON did not keep it, each in words
    (``Trace.not_kept``): the GPUs left unnamed (their planes' stats), the kernels' launch configurations
    (``kernel_details``), the allocator's records and XLA's HLO modules -- each said only where the capture read shows
    it missing (``unnamed_gpus``: GPUs that ran work and that no stat names; ``modules_run``: XLA modules ran, so their
    HLO would have been on the metadata plane).

    Why: a report from the JSON gave the same steps as from the XPlane it was printed from, but assumed an unnamed
    GPU's fp16 speed-up (2x for the T4's 8.02x), judged no grid size and no memory, and said none of it was because
    of the file (survey h37-wild55x, Left 1)."""
    lost = []
    if unnamed_gpus:
        lost.append(f"the GPU{'s' if unnamed_gpus > 1 else ''}' name and properties (so the speed-ups of 16-bit and "
                    f"Tensor Core kernels are assumed, not the GPU's own, and no memory size is known)"
                    if unnamed_gpus > 1 else "the GPU's name and properties (so the speed-ups of 16-bit and Tensor "
                    "Core kernels are assumed, not the GPU's own, and its memory size is not known)")
    if not launches_kept:
        lost.append("the kernels' launch configurations (grid and block sizes: small grids are not judged)")
    if not allocator_kept:
        lost.append("the allocator's records (memory use and headroom are not judged)")
    if modules_run and not hlo_kept:
        lost.append("XLA's HLO modules (no FLOPs: no model FLOPs utilisation; and no backward pass read from them: "
                    "the job's kind stays unknown where its op names do not say it)")
    return tuple(lost)


class NotViewerJson(ValueError):
    """The file is no trace viewer JSON of a TensorFlow/JAX profile: why, in words."""


def is_viewer_json(path: str) -> bool:
    """``path`` names a trace viewer JSON (by its name: :func:`layout.viewer_json_host`)."""
    return viewer_json_host(path.rstrip("/").rsplit("/", 1)[-1]) is not None


def load(raw: bytes, max_bytes: int) -> dict[str, Any]:
    """The JSON document of a file's bytes, gunzipped where they are gzip's -- to at most ``max_bytes`` of text (a
    gzip bomb is refused, not inflated)."""
    if raw[:2] == b"\x1f\x8b":
        text, cut = gunzip_upto(io.BytesIO(raw), max_bytes + 1)  # every format's one bounded gzip reader
        if cut:
            raise NotViewerJson(f"a damaged gzip file: its stream is cut off or corrupt after {human_size(len(text))}")
        if len(text) > max_bytes:
            raise NotViewerJson(f"its JSON is over the {human_size(max_bytes)} limit decompressed ({LIMIT_HINT})")
        raw = text
    elif len(raw) > max_bytes:
        raise NotViewerJson(f"its JSON is over the {human_size(max_bytes)} limit ({LIMIT_HINT})")
    if is_perfetto_head(raw[:_HEAD_BYTES]):  # a Perfetto protobuf saved under JAX's JSON name: its writer's words
        raise NotViewerJson(perfetto_words(raw[:_HEAD_BYTES]))
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise NotViewerJson(f"not JSON ({e})") from e
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise NotViewerJson("JSON without the trace viewer's traceEvents list")
    return doc


def _text(value: object) -> str:
    """``value`` as the UTF-8 text a proto string holds (JSON can carry lone surrogates, which protobuf refuses)."""
    text = value if isinstance(value, str) else json.dumps(value)
    return text.encode("utf-8", "replace").decode("utf-8")


def _stat_value(stat: Any, value: object) -> None:
    """Set ``stat``'s value from an argument printed by ``stat.ToString()``: an integer's digits come back as the
    integer (ids, counts, bytes: ``group_id`` and ``correlation_id`` are joined as numbers), anything else as text."""
    if isinstance(value, bool):
        stat.int64_value = int(value)
    elif isinstance(value, int) and -_INT64 <= value < _INT64:
        stat.int64_value = value
    elif isinstance(value, float):
        stat.double_value = value
    else:
        text = _text(value)
        if _INT.match(text) and -_INT64 <= int(text) < _INT64:
            stat.int64_value = int(text)
        else:
            stat.str_value = text


def _ps(us: object) -> int | None:
    """Picoseconds of a time printed in microseconds (three decimals: the nanosecond); None for no time an XPlane can
    hold (text, NaN, beyond int64)."""
    try:
        ps = float(us) * _PS_PER_US  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return round(ps) if math.isfinite(ps) and abs(ps) < _INT64 else None


def _id(value: object) -> int | None:
    """A process or thread id as the int64 an XPlane's plane and line ids are; None for another tool's text ids."""
    try:
        n = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):
        return None
    return n if -_INT64 <= n < _INT64 else None


class _PlaneBuilder:
    def __init__(self, space: Any, pid: int, name: str) -> None:
        self.plane = space.planes.add(id=pid, name=_text(name))
        self.lines: dict[int, Any] = {}
        self.first_ps: dict[int, int] = {}
        self.events: dict[int, list[tuple[int, int, int, list[tuple[int, object]]]]] = {}
        self.event_ids: dict[tuple[str, str], int] = {}
        self.stat_ids: dict[str, int] = {}

    def line(self, tid: int, name: str = "") -> None:
        if name or tid not in self.lines:
            self.lines[tid] = name

    def stat_id(self, name: str) -> int:
        sid = self.stat_ids.get(name)
        if sid is None:
            sid = self.stat_ids[name] = len(self.stat_ids) + 1
            entry = self.plane.stat_metadata.add(key=sid)
            entry.value.id = sid
            entry.value.name = _text(name)
        return sid

    def event_id(self, name: str, display: str) -> int:
        eid = self.event_ids.get((name, display))
        if eid is None:
            eid = self.event_ids[(name, display)] = len(self.event_ids) + 1
            entry = self.plane.event_metadata.add(key=eid)
            entry.value.id = eid
            entry.value.name = _text(name)
            if display:
                entry.value.display_name = _text(display)
        return eid

    def add(self, tid: int, event: dict[str, Any]) -> None:
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        shown = str(event.get("name", ""))
        long_name = args.get("long_name")
        name, display = (str(long_name), shown) if isinstance(long_name, str) and long_name != shown else (shown, "")
        start, dur = _ps(event.get("ts", 0)), _ps(event.get("dur", 0))
        if start is None or dur is None:
            return  # no time to place it at: left out, as the trace viewer leaves it
        stats = [(self.stat_id(k), v) for k, v in args.items() if k != "long_name" or not display]
        self.line(tid)
        self.events.setdefault(tid, []).append((start, max(0, dur), self.event_id(name, display), stats))

    def build(self) -> None:
        for tid, name in sorted(self.lines.items()):
            events = sorted(self.events.get(tid, ()), key=lambda e: e[0])
            base_ns = events[0][0] // 1000 if events else 0
            ln = self.plane.lines.add(id=tid, display_id=tid, name=_text(name), timestamp_ns=base_ns)
            for start, dur, eid, stats in events:
                ev = ln.events.add(metadata_id=eid, offset_ps=start - base_ns * 1000, duration_ps=dur)
                for sid, value in stats:
                    _stat_value(ev.stats.add(metadata_id=sid), value)


def _host_of(process: str) -> str:
    """The host a process name gives before its plane (xprof's streaming trace viewer: ``"vm /device:GPU:0"``), ""
    where it begins with the plane (``ConvertXSpaceToTraceEvents``: ``"/device:GPU:0"``)."""
    cut = min((i for i in (process.find(" " + p) for p in _PLANE_PREFIXES) if i >= 0), default=-1)
    return process[:cut] if cut > 0 and not process.startswith(_PLANE_PREFIXES) else ""


def _planes(names: dict[int, str]) -> tuple[dict[int, str], dict[int, int]]:
    """(process id -> plane name, process id -> the plane's process its events belong to) of a document's processes.

    Two layouts print an XSpace.  TensorFlow's ``ConvertXSpaceToTraceEvents`` (``<host>.trace.json.gz``, JAX's
    Perfetto JSON, the classic trace viewer) names each process by its plane: ``/host:CPU``, ``/device:GPU:0``.
    xprof's streaming trace viewer (``trace_viewer@``: ``ConvertXSpaceToTraceEventsContainer`` then
    ``TraceEventsToJson``, openxla/xprof; tensorboard-plugin-profile 2.19 on, the default in xprof 2.2x) names it
    ``"<host> <plane>"`` and moves the host's threads named ``<pool>/<n>`` into one process per thread pool named
    ``"<host> <pool>"`` (``ThreadPoolGrouper``: ``tf_data_private_threadpool``, ``pjrt_async_work_runner``) -- their
    threads keep their line ids, so they go back into the host's plane.  Why: a streaming viewer JSON was "a trace
    JSON whose processes are no planes" (h37-jax61)."""
    planes: dict[int, str] = {}
    for pid, name in names.items():
        host = _host_of(name)
        plane = name[len(host) + 1:] if host else name
        if plane.startswith(_PLANE_PREFIXES):
            planes[pid] = plane
    into = {pid: pid for pid in planes}
    hosts = {_host_of(names[pid]): pid for pid in sorted(planes, reverse=True) if planes[pid].startswith("/host:")}
    hosts.pop("", None)
    for pid, name in names.items():
        if pid not in planes:
            owner = next((h for h in hosts if name.startswith(h + " ")), None)
            if owner is not None:  # a thread pool of that host's threads
                into[pid] = hosts[owner]
    return planes, into


def space_bytes(doc: dict[str, Any], host: str = "") -> bytes:
    """The serialised XSpace of a trace viewer document (see the module doc); :class:`NotViewerJson` where it holds no
    plane of a profile (a Chrome trace of another tool)."""
    events = [e for e in doc["traceEvents"] if isinstance(e, dict)]
    names: dict[int, str] = {}
    threads: dict[tuple[int, int], str] = {}
    for e in events:
        if e.get("ph") != "M" or not isinstance(e.get("args"), dict) or (pid := _id(e.get("pid"))) is None:
            continue
        if e.get("name") == "process_name":
            names[pid] = str(e["args"].get("name", ""))
        elif e.get("name") == "thread_name" and (tid := _id(e.get("tid"))) is not None:
            threads[(pid, tid)] = str(e["args"].get("name", ""))
    planes, into = _planes(names)
    if not planes:
        shown = ", ".join(sorted(repr(n) for n in names.values())[:5]) or "none named"
        raise NotViewerJson(f"a trace JSON whose processes are no planes of a TensorFlow/JAX profile ({shown}); "
                            "TensorFlow's trace viewer names them /host:CPU and /device:GPU:N")
    space = message_class("XSpace")()
    named = {_host_of(names[pid]) for pid in planes} - {""}
    if host or len(named) == 1:
        space.hostnames.append(_text(host or named.pop()))
    order = sorted(planes, key=lambda pid: (not planes[pid].startswith("/host:"), pid))  # the host first, as written
    builders = {pid: _PlaneBuilder(space, pid, planes[pid]) for pid in order}
    for (pid, tid), name in threads.items():
        if into.get(pid) in builders:
            builders[into[pid]].line(tid, name)
    for e in events:
        if e.get("ph") != "X":
            continue
        pid, tid = _id(e.get("pid")), _id(e.get("tid", 0))
        if into.get(pid) in builders and tid is not None:  # type: ignore[arg-type]
            builders[into[pid]].add(tid, e)  # type: ignore[index]
    for b in builders.values():
        b.build()
    return space.SerializeToString()
