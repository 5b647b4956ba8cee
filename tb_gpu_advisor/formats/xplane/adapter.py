"""XPlane timeline -> the neutral :class:`~tb_gpu_advisor.model.trace.Trace`.

Everything XPlane-shaped is decided here, once: which planes are the host and
the GPUs, which GPU lines are derived rather than device activity, which
stats carry correlation ids, step numbers, ops, shapes and CUDA graph ids,
and what the derived ``Steps`` / ``XLA Modules`` lines, the ``Task
Environment`` plane and the allocator stats say.  Later stages read the trace
only.

Memory: the event tables take over the timeline's columns; with ``release``
(an analysis that owns the timeline) each line's per-event columns are
dropped as soon as a table holds them, so the timeline and the tables are
never both whole (see ``memory.py``).
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import TYPE_CHECKING

import numpy as np

from tb_gpu_advisor.common.fmt import plural
from tb_gpu_advisor import devices
from tb_gpu_advisor.common.ahead import map_in_order
from tb_gpu_advisor.common.memory import release_free_heap, small_pages
from tb_gpu_advisor.formats.xplane import viewer_json
from tb_gpu_advisor.formats.xplane.reader import MAX_TIME_PS, ProfileReadError, read_timeline
from tb_gpu_advisor.formats.xplane.timeline import Line, Plane, Timeline
from tb_gpu_advisor import frameworks
from tb_gpu_advisor.frameworks import nvtx, tensorflow, xla
from tb_gpu_advisor.model.columns import (absent_as_broadcast, innermost, int_dtype, lookup_mask, narrowest, union_intervals,
                                          unique_inverse)
from tb_gpu_advisor.model.trace import (FLOP_KINDS, MEMORY_PHASES, Allocator, DeviceEvents, DeviceInfo, FlopOps, HostEvents,
                                       HostRanges, MemoryEvents, ModuleRuns, Trace, gpus_in_words)

if TYPE_CHECKING:  # XLA's HLO reader is imported where a capture holds an HLO (most TensorFlow captures hold none)
    from tb_gpu_advisor.formats.xplane import hlo

#: Every event stat the adapter reads.  The reader drops the others
#: (``read_timeline(keep_stats=...)``); ``tests/formats/test_stat_pruning.py`` checks
#: that reports are identical with and without pruning, so a stat read here
#: but missing from this set fails a test instead of silently reading nothing.
USED_STATS: frozenset[str] = frozenset({
    # host_events / device_events
    "correlation_id", "group_id", "step_num", "iter_num", "_r", "is_eager",
    "tf_op", "memcpy_details", "shape", "long_name",
    # XLA GPU kernels (JAX, TF jit_compile): the HLO op behind each kernel, and its module's compiled program (_hlo_ops)
    "hlo_op", "hlo_module", "program_id",
    # kernels launched inside a CUDA graph (XLA command buffers)
    "cuda_graph_id",
    # a kernel's launch configuration (``grid:x,y,z block:x,y,z`` of its details string): kernels too small to fill
    "kernel_details",
    # allocator: memory headroom, and every allocation and free (MemoryAllocation / MemoryDeallocation events)
    "peak_bytes_in_use", "allocator_name", "buffer_limit", "bytes_allocated", "bytes_reserved", "bytes_available",
    "allocation_bytes", "addr",
    # a GPU plane's memory records, which are no GPU work (MEMORY_RECORD_STATS)
    "memalloc_details", "MemFree_details", "MemoryResidency_details",
})

#: Plane name prefixes of a profile: the host (``/host:CPU``, ``/host:metadata``, ...) and devices (``/device:GPU:0``).
PROFILE_PLANE_PREFIXES = ("/host:", "/device:")


def read_trace(path: str, host: str | None = None) -> Trace:
    """Read one ``<host>.xplane.pb`` into a trace; :class:`ProfileReadError` when it is no profile to analyse.

    Its columns are written once each on small pages (:func:`small_pages`): on the 1 GB dense capture the read's
    system time went 2.7-3.1 -> 1.4 s and its CPU 5.8-6.1 -> 3.7-3.9 s (docs/benchmarks.md, h38-wall)."""
    with small_pages():
        tl = read_timeline(path, keep_stats=USED_STATS)
        if host is not None:
            tl.host = host
        problem = profile_problem(tl)
        if problem is not None:
            raise ProfileReadError(path, problem)
        trace = to_trace(tl, release=True)
        if viewer_json.is_viewer_json(path):  # a printing of the XPlane: what it did not keep, the report says
            writer = frameworks.detect_trace(trace).id  # who printed it, from its events: both write the name
            printed = viewer_json.printed_from(path, writer)
            trace.printed_from = printed
            trace.not_kept = _viewer_json_losses(trace, jax=printed in (viewer_json.PERFETTO_PRINTED_FROM,
                                                                        viewer_json.JAX_PRINTED_FROM))
        return trace


def _viewer_json_losses(trace: Trace, jax: bool = False) -> tuple[str, ...]:
    """What a trace read from a trace viewer JSON lacks that its XPlane would hold (``viewer_json.not_kept``), from what
    the trace shows missing: GPUs with work and no name or compute capability, no kernel's launch configuration, no
    allocator record, XLA modules run without their HLO -- always so for JAX's ``perfetto_trace.json.gz`` (``jax``:
    every JAX program on a GPU is an XLA module, and JAX's printing keeps no ``XLA Modules`` line to show it ran)."""
    active = [d for d in trace.devices if len(d)]
    unnamed = sum(1 for d in active if d.info.name is None and d.info.compute_capability is None)
    launches = any(len(d.launch_table) for d in active)
    allocator = bool(trace.memory) or trace.allocator.peak_bytes is not None
    return viewer_json.not_kept(unnamed, launches, allocator, trace.flop_ops is not None,
                                jax or bool(trace.module_runs))


def profile_problem(tl: Timeline) -> str | None:
    """Why a file that parsed as an XSpace still is no profile to analyse, or None.

    A file without any host or device plane is not a profiler capture (another protobuf, or an XSpace
    written by some other tool); one whose host and device planes hold no event recorded nothing in its
    capture window.  Either is an error of that host, never a "healthy" report with nothing in it.
    """
    planes = [p for p in tl.planes if p.name.startswith(PROFILE_PLANE_PREFIXES)]
    if not planes:
        names = sorted({p.name or "<unnamed>" for p in tl.planes})
        shown = ", ".join(repr(n) for n in names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        return (f"no host or device plane of a profile (planes: {shown}): not a TensorFlow/JAX profiler capture; "
                "expected a /host:CPU or /device:GPU:N plane")
    if not any(p.num_events for p in planes):
        return ("no events in the capture window: the profiler recorded nothing (was it stopped right after it "
                "started, or did the steps run in another process?)")
    return None


def to_trace(tl: Timeline, release: bool = False) -> Trace:
    """The trace of a timeline.  ``release``: the caller gives ``tl`` up; its event columns go as the tables take them."""
    num_events = tl.num_events
    spans = [sp for p in tl.planes for ln in p.lines if (sp := ln.span()) is not None]
    span = (min(s for s, _ in spans), max(e for _, e in spans)) if spans else None
    allocator = _allocator(tl)  # before the host lines' stats go with their columns
    memory = memory_events(tl)
    meta = tl.plane("/host:metadata")
    modules = read_modules(meta)
    flop_ops, flops_note, xla_collectives, xla_casts, xla_classes = hlo_work(meta, modules)
    calls = copy_calls(tl)  # before the host tables take the host lines' columns
    range_domains = nvtx_domains(tl)
    h = host_events(tl, release)
    if release:  # the host lines' columns just freed, before the device tables are built on top (see memory.py)
        release_free_heap()
    devs = all_device_events(tl, release, calls, split_modules(modules))
    vendor = _file_vendor(h, devs)
    _name_unnamed(devs, vendor)
    pipeline_ops = tensorflow.pipeline_function_ops(h, _device_groups(devs))
    return Trace(
        format="xplane", host=tl.host, path=tl.path, size_bytes=tl.size_bytes, h=h, devices=devs, num_events=num_events,
        span_ps=span, capture_ms=_capture_ms(tl), viewer_zero_ps=viewer_zero_ps(tl), time_base=TIME_BASE,
        gpu_step_lines=_step_lines(tl), module_runs=_module_runs(tl),
        allocator=allocator, metadata_keys=frozenset(meta.stats) if meta is not None else frozenset(),
        xla_evidence=_xla_evidence(tl), flop_ops=flop_ops, flops_note=flops_note, xla_collectives=xla_collectives,
        xla_casts=xla_casts, xla_fusion_classes=xla_classes,
        producer={**_producer(meta), **_records_loss(tl.warnings), **visible_gpus(tl),
                  **({"gpu_vendor": vendor} if vendor else {})}, memory=memory,
        unread_devices=unread_devices(tl), ranges=nvtx_ranges(h, range_domains),
        pipeline_ops=pipeline_ops if pipeline_ops.size else None,
    )


#: Distinct names read for a file's vendor per table: the evidence is in the first names, a hostile file may hold millions.
_MAX_VENDOR_NAMES = 200_000


def _file_vendor(h: HostEvents, devs: list[DeviceEvents]) -> str | None:
    """The ``VENDOR`` the capture shows besides its GPU planes' stats (``devices.vendor_known``): the runtime's calls its
    GPU tracer recorded on the host (``cuLaunchKernel``, ``hipModuleLaunchKernel``), kernels only one vendor's library
    names (cuBLASLt's ``nvjet_*``, Tensile's ``Cijk_*``); ``devices.UNKNOWN`` where nothing names a vendor, None where
    two disagree.  Why: a trace viewer JSON keeps no plane stat, so its GPU was read as NVIDIA's, the default, whatever
    its calls and kernels said -- a ROCm program's JSON told Tensor Cores and ``CudaDevice`` (h37-vendor66)."""
    calls = [n for n in h.names[:_MAX_VENDOR_NAMES] if devices.is_runtime_call(n)]
    kernels = [n for d in devs for n in d.names[:_MAX_VENDOR_NAMES]]
    return devices.vendor_known(calls, kernels)


def _name_unnamed(devs: list[DeviceEvents], vendor: str | None) -> None:
    """Name a GPU whose plane states nothing of its device (no name, vendor or compute capability: a trace viewer
    JSON's) by the vendor the file shows (:func:`_file_vendor`): ``AMD GPU``, ``devices.unknown.GPU_NAME`` where
    nothing names one; left unnamed where the file shows NVIDIA (the default an unnamed GPU is read as) or the
    evidence disagrees.  A plane with a compute capability is CUDA's (TF 2.4's V100 planes), and keeps its reading."""
    if not vendor or vendor == devices.nvidia.VENDOR:
        return
    name = devices.UNSETTLED_NAMES.get(vendor) or f"{vendor} GPU"
    for d in devs:
        if not d.info.name and d.info.compute_capability is None:
            d.info = dataclasses.replace(d.info, name=name)


def _device_groups(devs: list[DeviceEvents]) -> np.ndarray:
    """The TF group ids the GPUs' events carry (ascending): the groups that hold GPU work."""
    parts = [np.unique(d.group_id[d.group_id >= 0]) for d in devs if len(d)]
    return np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)


#: The profiler's own warning that it dropped GPU events (XLA ``cupti_collector.cc``, kept in ``XSpace.warnings``):
#: "Detected GPU events dropped on <host>: Profiler has collected N driver events and M device events. K events dropped
#: because <reason>; ...".
_DROPPED = re.compile(r"(\d+) events dropped because ([^;.]+)")


def _records_loss(warnings: list[str]) -> dict[str, str]:
    """What the profiler's warnings kept in the capture (``XSpace.warnings``) say of GPU events it dropped, as
    ``Trace.producer`` facts read only where the records show a loss (``job.kind.lost_launches``):
    ``records_dropped`` in words and ``records_dropped_count``."""
    n, why = 0, []
    for text in warnings[:64]:
        if "events dropped" not in text:
            continue
        for count, reason in _DROPPED.findall(text):
            n += int(count)
            why.append(reason.strip()[:80])
    if not n:
        return {}
    because = f" ({'; '.join(dict.fromkeys(why))})" if why else ""
    return {"records_dropped": f"the profiler's own warning, kept in the capture, counts {n:,} GPU "
                               f"{'event' if n == 1 else 'events'} it dropped{because}",
            "records_dropped_count": str(n)}


#: A device plane of any kind: ``/device:GPU:0``, ``/device:TPU:3``.
_DEVICE_PLANE = re.compile(r"^/device:([A-Za-z_]+):\d+$")


def unread_devices(tl: Timeline) -> tuple[str, ...]:
    """Accelerators other than GPUs whose planes hold events (``Trace.unread_devices``), by the type the plane states
    (``device_type_string``: "TPU v6 Lite") or its name's: "4 x TPU v6 Lite"; where no such plane holds events, an
    accelerator whose client's own events the host's planes hold (``xla.client_accelerator``: XLA's TPU client) --
    "a TPU (its client's host events only: no TPU plane in the capture)".

    Why the client: a program's transfers to a TPU are work sent there, not work on the CPU.  verl's torch_xla worker
    (``localhost_9012.xplane.pb``: 144 ``PjRtComputationClient::TransferToDevice`` of its weights through
    ``TfrtTpuClient::BufferFromHostBuffer`` and ``tpu::System::TransferToDevice`` on ``pjrt-tpu-tasks`` threads, no
    ``/device:TPU`` plane) read "the host made no GPU runtime call: the work ran on the CPU" (h37-hunt71a)."""
    kinds: dict[str, int] = {}
    for p in tl.planes:
        m = _DEVICE_PLANE.match(p.name)
        if m is None or m.group(1) in ("GPU", "CPU") or not p.num_events:
            continue
        label = p.stats.get("device_type_string")
        label = label if isinstance(label, str) and label.strip() else m.group(1)
        kinds[label] = kinds.get(label, 0) + 1
    if not kinds:
        clients = {xla.client_accelerator(n) for p in tl.host_planes() if p.num_events for n in p.event_names} - {""}
        return tuple(f"a {c} (its client's host events only: no {c} plane in the capture)" for c in sorted(clients))
    return tuple(f"{n} x {k}" if n > 1 else k for k, n in kinds.items())


def visible_gpus(tl: Timeline) -> dict[str, str]:
    """``{"visible_gpus": "NVIDIA H100 80GB HBM3"}``: the GPUs whose ``/device:GPU:N`` planes the capture holds, by the
    names their device stats give (:func:`device_info`), with or without events -- as Kineto's ``deviceProperties``
    (``Trace.producer``); ``{}`` where it holds none.  XLA's and TensorFlow's GPU tracer writes a plane, with the
    device's properties, for each GPU of the process's CUDA (or ROCm) client, so a plane is a GPU the program could
    use, whether or not its work went there.

    Why: a ``jax.profiler.trace`` around host-only code (its GPU plane empty) and a capture of JAX's CPU backend (no
    GPU plane) read alike -- "Was the GPU visible to JAX? ... print(jax.devices())" -- where the first file answers
    that question: it was, and the traced code ran nothing on it (h37-probe42w)."""
    names = [_gpu_name(p) for p in tl.planes if (m := _DEVICE_PLANE.match(p.name)) is not None and m.group(1) == "GPU"]
    seen = gpus_in_words(names)
    return {"visible_gpus": seen} if seen else {}


#: A GPU plane that states nothing of its device (a trace viewer JSON keeps no plane stat): a GPU the program saw, its
#: model not recorded -- said so, where a bare "GPU" read as a name ("TensorFlow or JAX saw the GPU -- the capture lists
#: GPU --", h37-words63); no vendor's device table claims it, so nothing is said of its units either.
UNKNOWN_MODEL = "GPU of unknown model"


def _gpu_name(plane: Plane) -> str:
    """A GPU plane's device in words: its name (:func:`device_info`: stated, or inferred from its properties), else its
    vendor's GPU ("AMD GPU": ROCm's planes state only ``device_vendor``), else what its properties state ("GPU of
    compute capability 7.0 with 80 SMs and 15.8 GiB"), else :data:`UNKNOWN_MODEL` -- never the vendor alone.

    Why the properties: TF 2.4's planes of a V100 state no name and no vendor, only compute capability 7.0, 80 SMs,
    15.8 GiB, 1.53 GHz -- which more than one V100 fits, so no model is inferred -- and the capture's GPUs read
    "8 x GPU", the one thing the planes do say left out (h37-probe43w: ``v100_bert_8gpu_tf24``).  No comma: the
    listing joins GPUs with one (``job.kind._listed_gpu`` splits it)."""
    vendor = plane.stats.get("device_vendor")
    vendor = vendor.strip()[:40] if isinstance(vendor, str) else ""
    info = device_info(plane)
    name = (info.name or "").strip()[:80]
    if name and name != vendor:
        return name
    if vendor:
        return f"{vendor} GPU"
    cc = info.compute_capability
    if cc is None:
        return UNKNOWN_MODEL
    said = [f"{int(info.sm_count)} SMs" if info.sm_count else "",
            f"{info.memory_bytes / (1 << 30):.1f} GiB" if info.memory_bytes else ""]
    said = [w for w in said if w]
    return f"GPU of compute capability {cc[0]}.{cc[1]}" + (f" with {' and '.join(said)}" if said else "")


#: What JAX names the instructions of a gradient: the backward pass is the transpose of a forward's linearisation.
_AUTODIFF = (b"transpose(jvp(", b"/transpose(")


def _producer(meta: Plane | None) -> dict[str, str]:
    """What the HLO says of the program (``Trace.producer``): the modules that hold a backward pass, by the
    ``transpose(jvp(...))`` names JAX gives a gradient's instructions (their ``op_name`` metadata)."""
    blobs = meta.metadata_blobs(HLO_PROTO_STAT) if meta is not None else []
    grads = sorted({meta.event_names[i].split("(", 1)[0] for i, raw in blobs if any(a in raw for a in _AUTODIFF)})
    out = {"autodiff_modules": ", ".join(grads[:5])} if grads else {}
    loops = {}
    if blobs:
        from tb_gpu_advisor.formats.xplane import hlo
    for i, raw in blobs:
        n = hlo.steps_per_call(raw)
        if n:
            loops[meta.event_names[i].split("(", 1)[0]] = n
    if loops:  # "module=N,module=N": the modules that run N training steps per call
        out["steps_per_call"] = ",".join(f"{k}={v}" for k, v in sorted(loops.items()))
    return out


#: The stat of each compiled module's event metadata on ``/host:metadata`` that holds its HLO (an ``xla.HloProto``).
HLO_PROTO_STAT = "Hlo Proto"
_NO_HLO = ("the capture holds no XLA module's HLO (no `Hlo Proto` on its /host:metadata plane): FLOPs are read from "
           "the HLO that JAX and TensorFlow's XLA (jit_compile=True) write there; a TensorFlow graph without XLA "
           "gives none")


#: ``<module>/<collective op>`` -> (bytes of one rank's message, group size or -1), from the HLO
XlaCollectives = dict[str, tuple[int, int]]
#: ``<module>/<op>`` -> whether the converting instruction does nothing but convert (``hlo.convert_ops``)
XlaCasts = dict[str, bool]
#: ``<module>/<fusion>`` -> the kernel class its fused opcodes state (``hlo.fusion_classes``)
XlaClasses = dict[str, str]


def flop_ops_of(meta: Plane | None) -> tuple[FlopOps | None, str | None]:
    """The matmul/conv/attention rows of every module's HLO on the ``/host:metadata`` plane, and a note on what is
    missing or uncertain; (None, why) where no module has an HLO.  See :func:`hlo_work`."""
    fo, note, _, _, _ = hlo_work(meta)
    return fo, note


def hlo_work(meta: Plane | None, read: HloModules | None = None
             ) -> tuple[FlopOps | None, str | None, XlaCollectives, XlaCasts, XlaClasses]:
    """What every module's HLO on the ``/host:metadata`` plane says: the FLOP rows, a note on what they miss or
    guess ((None, why) where no module has an HLO), the collectives' messages, which converting instructions only
    convert (:func:`xla_casts`), and the kernel class each fusion's opcodes state (:func:`xla_classes`).
    ``read``: the plane's modules read already (:func:`read_modules`).

    A module whose ``Hlo Proto`` cannot be read is skipped and named in the note: the rest of the file is still
    analysed.  Kernels name their module (``hlo_module``) and, where the profiler recorded it, their program
    (``program_id``): a module name compiled into several programs with different rows keys each program's rows by
    its own name (``jit_dot(79)``, :func:`split_modules`), as its kernels' op text does (:func:`_hlo_ops`); where the
    programs carry no id, the last compiled (highest metadata id) stands for the name.
    """
    if read is None:
        read = read_modules(meta)
    by_program, bad = read
    if not by_program:
        if not bad:
            return None, _NO_HLO, {}, {}, {}
        return None, f"no `Hlo Proto` in the capture could be read: {'; '.join(bad[:3])}", {}, {}, {}
    split = split_modules(read)
    by_key: dict[str, list[hlo.ModuleWork]] = {}
    for name, programs in by_program.items():
        for pid, m in programs:
            by_key.setdefault(xla.program_key(name, pid) if name in split else name, []).append(m)
    modules = [(key, ms[-1]) for key, ms in by_key.items()]
    notes = _flop_notes(by_key, modules, bad)
    collectives = {f"{key}/{op}": msg for key, m in modules for op, msg in m.collectives.items()}
    return _flop_table(modules), ("; ".join(notes) if notes else None), collectives, xla_casts(by_key), xla_classes(by_key)


#: Each module name's compiled programs read from ``/host:metadata`` (name -> [(program id or None, its work)], in
#: metadata order), and the modules whose ``Hlo Proto`` could not be read (:func:`read_modules`).
HloModules = tuple[dict[str, list[tuple[int | None, "hlo.ModuleWork"]]], list[str]]


def read_modules(meta: Plane | None) -> HloModules:
    """Every compiled program's work on the ``/host:metadata`` plane, by module name, each with the program id its
    metadata event names (``jit_dot(79)``: :func:`~tb_gpu_advisor.frameworks.xla.program_of`), None where it names
    none; and the programs whose ``Hlo Proto`` could not be read."""
    blobs = meta.metadata_blobs(HLO_PROTO_STAT) if meta is not None else []
    if not blobs:
        return {}, []
    from tb_gpu_advisor.formats.xplane import hlo

    by_name: dict[str, list[tuple[int | None, hlo.ModuleWork]]] = {}
    bad: list[str] = []
    for idx, raw in blobs:
        event = meta.event_names[idx]
        try:
            m = hlo.module_work(raw, fallback_name=event.split("(", 1)[0])
        except hlo.HloReadError as e:
            bad.append(f"{event} ({e})")
            continue
        named = xla.program_of(event)
        by_name.setdefault(m.module, []).append((named[1] if named and named[0] == m.module else None, m))
    return by_name, bad


def split_modules(read: HloModules) -> frozenset[str]:
    """The module names whose programs are read apart: compiled into several programs with different FLOP rows, each
    named with its program id.

    Why: JAX compiles a module name into one program per input shape -- every un-jitted ``jnp.dot`` is a ``jit_dot``,
    a jitted step is retraced for a smaller last batch -- and the kernels of each carry its ``program_id``.  Read as
    one (the last compiled), every GEMM kernel of six ``jit_dot`` programs got the last one's shape and FLOPs: real
    ``wild/jax_mi300x``, whose roofline showed one shape of six, 0.9 calls a step, at 48.5% of its roofline
    (h37-huntx67).  Names whose programs do the same work, or carry no id, stay one module (the kernels' op text and
    every table keyed by it unchanged)."""
    by_name, _ = read
    return frozenset(name for name, programs in by_name.items()
                     if len(programs) > 1 and all(pid is not None for pid, _ in programs)
                     and len({pid for pid, _ in programs}) == len(programs)
                     and len({_rows_key(m) for _, m in programs}) > 1)


def xla_casts(by_name: dict[str, list[hlo.ModuleWork]]) -> XlaCasts:
    """``<module>/<op>`` (the FLOP rows' key) of each converting instruction -> whether it only converts.  Kernels
    name their module, not the compiled program: an op is a cast only where every program of that name that holds
    it says so (a name's programs that disagree are not read as casts)."""
    out: XlaCasts = {}
    for name, ms in by_name.items():
        for m in ms:
            for op, only in m.casts.items():
                key = f"{name}/{op}"
                out[key] = out.get(key, True) and only
    return out


def xla_classes(by_name: dict[str, list[hlo.ModuleWork]]) -> XlaClasses:
    """``<module>/<fusion>`` -> the kernel class its fused opcodes state, where every program of that module name
    that holds the fusion states the same one (kernels name their module, not the program: :func:`xla_casts`)."""
    out: XlaClasses = {}
    mixed: set[str] = set()
    for name, ms in by_name.items():
        for m in ms:
            for op, cls in m.classes.items():
                key = f"{name}/{op}"
                if out.setdefault(key, cls) != cls:
                    mixed.add(key)
    return {k: v for k, v in out.items() if k not in mixed}


def _flop_notes(by_name: dict[str, list[hlo.ModuleWork]], modules: list[tuple[str, hlo.ModuleWork]],
                bad: list[str]) -> list[str]:
    """What the FLOP rows of the HLO leave out or guess, in words (``modules``: (key, work) of each module read)."""
    notes = []
    if not any(m.rows for _, m in modules):
        notes.append(f"no matmul, convolution or attention instruction in the {len(modules)} compiled XLA modules")
    if bad:
        notes.append(f"{plural(len(bad), 'module')} whose `Hlo Proto` could not be read {'was' if len(bad) == 1 else 'were'} skipped: {'; '.join(bad[:3])}")
    loops = sum(m.unknown_loops for _, m in modules)
    if loops:
        notes.append(f"{plural(loops, 'while loop')} with matmul work {'has' if loops == 1 else 'have'} no trip count XLA proved: their FLOPs are "
                     "counted once per module execution (a lower bound)")
    twice = sorted(n for n, ms in by_name.items() if len({_rows_key(m) for m in ms}) > 1)
    if twice:
        notes.append(f"{'module' if len(twice) == 1 else 'modules'} {', '.join(twice[:3])} {'was' if len(twice) == 1 else 'were'} compiled into several programs with different matmuls; "
                     "the last compiled is counted (kernels name the module, not the program)")
    return notes


def _rows_key(m: hlo.ModuleWork) -> tuple:
    """What tells two compiled programs of one module name apart for the FLOPs: their rows."""
    return tuple(sorted((r.op_name, r.flops, r.repeats) for r in m.rows))


def _flop_table(modules: list[tuple[str, hlo.ModuleWork]]) -> FlopOps:
    """The neutral FLOP table of the modules' rows (``source="hlo"``), each keyed by its module's key (its name, or
    its program's where :func:`split_modules` reads the name's programs apart)."""
    rows = [(key, r) for key, m in modules for r in m.rows]
    kinds = {k: i for i, k in enumerate(FLOP_KINDS)}
    reps = np.fromiter((r.repeats for _, r in rows), dtype=np.int64, count=len(rows))
    branch = np.fromiter((r.branch for _, r in rows), dtype=bool, count=len(rows))
    return FlopOps(
        source="hlo", flops=np.fromiter((r.flops for _, r in rows), dtype=np.float64, count=len(rows)),
        bytes=np.fromiter((r.bytes for _, r in rows), dtype=np.float64, count=len(rows)),
        precision=np.fromiter((r.precision for _, r in rows), dtype=np.int8, count=len(rows)),
        kind=np.fromiter((kinds[r.kind] for _, r in rows), dtype=np.int8, count=len(rows)),
        label=[r.label for _, r in rows], host_idx=np.full(len(rows), -1, dtype=np.int64),
        module=[m for m, _ in rows], op_name=[r.op_name for _, r in rows],
        repeats=reps if (reps != 1).any() else None, branch=branch if branch.any() else None,
    )


#: Where an XPlane report's times count from (``Trace.time_base``).
TIME_BASE = "ms from the capture's start, as the Profile tab's trace viewer shows them"


def viewer_zero_ps(tl: Timeline) -> int:
    """The instant the stock trace viewer shows as 0 ms, on the reader's clock (``Trace.viewer_zero_ps``).

    The stock converter writes each event at its line's ``timestamp_ns`` plus its offset, in int64 ps, with
    nothing subtracted: the viewer's 0 is the XPlane clock's 0, the capture's start in every profiler-written
    file (the real JAX captures' first events come 7-20 ms after it, TF 2.4's 129 ms).  The reader keeps that
    clock, except in a file whose line timestamps are epoch ns (``time_base_ns``, re-based so ps fit int64); the
    stock converter's int64 ps wrap there, and the links follow the times it shows (ms near 5.7e12 for a 2026
    stamp: float ms keep 1 us there).  Where the wrapped 0 lies so far that times counted from it would leave int64
    (event ends reach ``3 * MAX_TIME_PS``), the reader's 0.
    """
    shift = (tl.time_base_ns * 1000 + (1 << 63)) % (1 << 64) - (1 << 63)  # the stock converter's int64 ps
    return -shift if abs(shift) < _MAX_ZERO_PS else 0


#: The farthest viewer 0 from the reader's: every event time (|t| <= 3 * MAX_TIME_PS) minus it still fits int64.
_MAX_ZERO_PS = (1 << 63) - 3 * MAX_TIME_PS - 1


def _finite(v: object) -> int | float | None:
    """A plane stat's number, None for NaN/inf, strings and other kinds (hostile or foreign files)."""
    if type(v) is int:
        return v
    if type(v) is float and math.isfinite(v):
        return v
    return None


def device_info(plane: Plane) -> DeviceInfo:
    """The GPU plane's device stats (the stock converter's names)."""
    st = plane.stats
    major, minor = st.get("compute_cap_major"), st.get("compute_cap_minor")
    cc = (major, minor) if type(major) is int and type(minor) is int else None
    name = st.get("gpu_device_name") or st.get("device_vendor")
    khz = _finite(st.get("clock_rate"))  # kHz, as CUDA's clockRate: 1980000 on an H100 SXM (1.98 GHz)
    sms, memory = _finite(st.get("core_count")), _finite(st.get("memory_size"))
    if not name:  # a TF 2.x plane of a T4 names no GPU: its properties may say which tabled one it is
        name = devices.inferred_model(cc, sms, memory)
    return DeviceInfo(name=str(name) if name else None, compute_capability=cc, sm_count=sms,
                      memory_bytes=memory, memory_bandwidth=_finite(st.get("memory_bandwidth")),
                      clock_hz=khz * 1e3 if khz is not None and khz > 0 else None)


def _capture_ms(tl: Timeline) -> float | None:
    """The profiler's window from the ``Task Environment`` plane (ns), None when absent."""
    env = tl.plane("Task Environment")
    if env is None:
        return None
    a, b = env.stats.get("profile_start_time"), env.stats.get("profile_stop_time")
    if isinstance(a, int) and isinstance(b, int) and b > a:
        return (b - a) / 1e6
    return None


def _step_lines(tl: Timeline) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per GPU: the derived ``Steps`` line's (key, start, end); key = ``group_id``, else the event's numeric name."""
    out = {}
    for p in tl.gpu_planes():
        ln = p.line("Steps")
        if ln is None or not len(ln):
            continue
        gid = ln.int_stat("group_id")
        nm = np.asarray([int(n) if n.isdigit() else -1 for n in p.event_names], dtype=np.int64)[ln.name_id]
        out[int(p.gpu_id)] = (np.where(gid >= 0, gid, nm), ln.start_ps, ln.end_ps)
    return out


def _module_runs(tl: Timeline) -> list[ModuleRuns]:
    """Per GPU: executions of the module its ``XLA Modules`` line shows most often."""
    out = []
    for p in tl.gpu_planes():
        ln = p.line("XLA Modules")
        if ln is None or not len(ln):
            continue
        names, counts = np.unique(ln.name_id, return_counts=True)
        top = names[np.argmax(counts)]
        m = ln.name_id == top
        s, e = union_intervals(ln.start_ps[m], ln.end_ps[m])
        out.append(ModuleRuns(f"`XLA Modules` events of `{p.event_names[int(top)]}` (one per step)", s, e))
    return out


def _xla_evidence(tl: Timeline) -> list[str]:
    """XLA's marks in the file beyond host event names: its derived lines and HLO stats."""
    ev: list[str] = []
    for p in tl.planes:
        for name in ("XLA Modules", "XLA Ops"):
            ln = p.line(name)
            if ln is not None and len(ln) and f"`{name}` line" not in ev:
                ev.append(f"`{name}` line")
        for st in ("hlo_op", "hlo_module"):
            if p.stat_key(st) is not None and f"`{st}` stat" not in ev:
                ev.append(f"`{st}` stat")
    return ev


def _allocator(tl: Timeline) -> Allocator:
    """Peak of ``peak_bytes_in_use`` over GPU allocators (host ``MemoryAllocation`` events) and their ``buffer_limit``."""
    peak = limit = None
    for p in tl.host_planes():
        if p.stat_key("peak_bytes_in_use") is None:
            continue
        for ln in p.lines:
            if not ln.has_stat("peak_bytes_in_use").any():
                continue
            v = ln.int_stat("peak_bytes_in_use", inherit=False)
            alloc = ln.str_stat("allocator_name", inherit=False)
            ua, inv = np.unique(alloc, return_inverse=True)
            is_gpu = np.array([a < 0 or "gpu" in (p.string(int(a)) or "").lower() for a in ua], dtype=bool)
            sel = (v >= 0) & is_gpu[inv]
            if sel.any():
                peak = max(peak or 0, int(v[sel].max()))
            bl = ln.int_stat("buffer_limit", inherit=False)
            if (bl > 0).any():
                limit = max(limit or 0, int(bl[bl > 0].max()))
    return Allocator(peak, limit)


#: The host events the allocator records for each allocation and free (TF, XLA's BFC allocator).
MEMORY_EVENTS = ("MemoryAllocation", "MemoryDeallocation")
#: A GPU's allocator (``GPU_0_bfc``); ``gpu_host_bfc`` is pinned host memory, no GPU's.
_GPU_ALLOCATOR = re.compile(r"^GPU_(\d+)_", re.IGNORECASE)


def memory_events(tl: Timeline) -> dict[int, MemoryEvents]:
    """Per GPU, its allocator's ``MemoryAllocation`` / ``MemoryDeallocation`` events in time order, as the stock
    Memory Profile reads them: in use = ``bytes_allocated`` + ``bytes_reserved`` (the heap and the stack reservation)
    after each event, the limit = in use + ``bytes_available``; each event's op is its ``tf_op`` (TensorFlow), else the
    innermost host event of its thread holding it (JAX: the compiled call running).  Reserved bytes are not recorded
    (a BFC allocator holds its whole region from the start): -1."""
    parts: dict[int, list[tuple]] = {}
    labels: dict[str, int] = {}
    for p in tl.host_planes():
        ids = [i for i, n in enumerate(p.event_names) if n in MEMORY_EVENTS]
        if not ids or p.stat_key("bytes_allocated") is None:
            continue
        dealloc = {i for i in ids if p.event_names[i] == MEMORY_EVENTS[1]}
        for ln in p.lines:
            if not len(ln) or ln.start_ps is None:
                continue
            is_mem = np.isin(ln.name_id, ids)
            if not is_mem.any():
                continue
            alloc_name = ln.str_stat("allocator_name", inherit=False)[is_mem]
            gpu_of = {int(a): _gpu_of_allocator(p.string(int(a))) for a in np.unique(alloc_name).tolist()}
            gpu = np.array([gpu_of[int(a)] for a in alloc_name.tolist()], dtype=np.int64)
            ok = gpu >= 0
            if not ok.any():
                continue
            idx = np.flatnonzero(is_mem)[ok]
            t = ln.start_ps[idx]
            size = ln.int_stat("allocation_bytes", 0, inherit=False)[idx]
            sign = np.where(np.isin(ln.name_id[idx], list(dealloc)), -1, 1)
            heap = ln.int_stat("bytes_allocated", inherit=False)[idx]
            stack = np.maximum(ln.int_stat("bytes_reserved", 0, inherit=False)[idx], 0)
            free = ln.int_stat("bytes_available", inherit=False)[idx]
            addr = ln.int_stat("addr", inherit=False)[idx]
            op = _memory_op_labels(ln, idx, is_mem, labels)
            parts_of = (t, sign * size, heap + stack, addr, op, np.where(free >= 0, heap + stack + free, -1))
            for g in np.unique(gpu[ok]).tolist():
                sel = gpu[ok] == g
                parts.setdefault(int(g), []).append(tuple(a[sel] for a in parts_of))
    out: dict[int, MemoryEvents] = {}
    for g, ps in parts.items():
        t, delta, used, addr, op, cap = (np.concatenate([q[k] for q in ps]) for k in range(6))
        order = np.argsort(t, kind="stable")
        limit = int(cap.max()) if (cap > 0).any() else None
        out[g] = MemoryEvents(
            gpu=g, source="XLA/TensorFlow allocator events (MemoryAllocation, MemoryDeallocation)", baseline="absolute",
            t=t[order], delta=delta[order], allocated=used[order], reserved=np.full(order.shape, -1, np.int64),
            addr=addr[order], op=op[order].astype(np.int32),
            phase=np.full(order.shape, MEMORY_PHASES.index("other"), np.int8), op_names=list(labels), limit_bytes=limit)
    return out


def _gpu_of_allocator(name: str | None) -> int:
    m = _GPU_ALLOCATOR.match(name or "")
    return int(m.group(1)) if m else -1


def _memory_op_labels(ln: Line, idx: np.ndarray, is_mem: np.ndarray, labels: dict[str, int]) -> np.ndarray:
    """The op of each memory event ``idx`` of a line: its ``tf_op``, else the innermost other event holding it."""
    p = ln.plane
    tf_op = ln.str_stat("tf_op", inherit=False)[idx] if p.stat_key("tf_op") is not None else np.full(idx.shape, -1)
    others = np.flatnonzero(~is_mem)
    inner = innermost(ln.start_ps[others], ln.start_ps[others] + ln.duration_ps[others], ln.start_ps[idx])
    out = np.full(idx.shape, -1, dtype=np.int64)
    for k in range(idx.shape[0]):
        if tf_op[k] >= 0 and p.string(int(tf_op[k])):
            out[k] = labels.setdefault(p.string(int(tf_op[k])), len(labels))
        elif inner[k] >= 0:
            out[k] = labels.setdefault(p.event_names[int(ln.name_id[others[inner[k]]])], len(labels))
    return out


#: Derived (post-processed) GPU lines: not device activity.  Upstream names (``xplane_schema.cc`` of
#: tensorflow/tensorflow 02e237f8 and openxla/xla 02e89dc4): ``TensorFlow Ops`` / ``TensorFlow Name Scope`` in TF's,
#: ``Framework Ops`` / ``Framework Name Scope`` in openxla's; ``Source code`` in both; ``Host Offload Ops``,
#: ``Async XLA Ops`` in openxla's.
DERIVED_GPU_LINES = {
    "Steps", "TensorFlow Ops", "Framework Ops", "TensorFlow Name Scope", "Framework Name Scope",
    "XLA Modules", "XLA Ops", "Source", "Source code", "Launch Stats", "XLA TraceMe", "Async XLA Ops",
    "Host Offload Ops",
}
#: The line ids the profiler gives the lines it derives from other events, whatever their name: ``kThreadIdDerivedMin``
#: = 0xdeadbeef (an ``int``: -559038737 on the wire) up to ``kThreadIdDerivedMax`` -- +4 in TF 2.2, +7 (``Source``)
#: in TF 2.4-2.x, +289 (host offload and host XLA regions) in openxla/xla's ``xla/tsl/profiler/utils/trace_utils.h``;
#: ``IsDerivedThreadId`` there.  The GPU tracer puts CUPTI's overhead records without a stream on +6
#: (``kThreadIdOverhead``, a line named ``CUPTI overhead``).  A wider bound than today's: no stream or thread id
#: lies near it.
_DERIVED_MIN = 0xDEADBEEF - (1 << 32)
DERIVED_LINE_IDS = range(_DERIVED_MIN, _DERIVED_MIN + 400)
#: The name the GPU tracer gives a stream line holding CUPTI overhead records (``GetDeviceXLineName``): the whole
#: line takes it, kernels and copies on it included.
OVERHEAD_LINE = "CUPTI overhead"


def is_derived_line(ln: Line) -> bool:
    """A line the profiler derived from other events (its id or its name): never device activity of its own."""
    return ln.id in DERIVED_LINE_IDS or (ln.id - (1 << 32)) in DERIVED_LINE_IDS or ln.name in DERIVED_GPU_LINES


#: The line of a device plane's performance counters (``kCounterEventsLineName``, openxla/xla ``xplane_schema.cc``):
#: zero-length samples (ROCm's ``Wavefronts Launched (Count)``, CUPTI PM sampling) that the stock GPU trace parser
#: skips ("Perf Counter events are handled separately") -- values, not work the GPU ran.
COUNTER_LINE = "_counters_"


def activity_lines(plane: Plane) -> list[Line]:
    """A GPU plane's non-empty lines of device activity (streams): no derived line, no counter line."""
    return [ln for ln in plane.lines if len(ln) and not is_derived_line(ln) and ln.name != COUNTER_LINE]


def _cat(parts: list[np.ndarray], dtype) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)


#: What CUPTI's NVTX activity records are named on the host (``NVTX:<name>``, ``NVTX:<domain>:<name>`` in a named
#: domain: openxla/xla xla/backends/profiler/gpu/cupti_collector.cc ``CreateXEvent``), and the suffix of the lines
#: that hold them (``Host Threads/<tid>/NVTX``, on ``/host:CUPTI`` or its own NVTX plane until the profiler session
#: merges them into ``/host:CPU``: ``PostProcessSingleHostXSpace``).
NVTX_EVENT_PREFIX = "NVTX:"
NVTX_LINE_SUFFIX = "/NVTX"
#: The NVTX domains whose name a CUPTI NVTX event's may begin with: the libraries' and frameworks' that the NVTX
#: knowledge names (``frameworks.nvtx``), and XLA's own (``TSL``, ``xla/tsl/profiler/lib/nvtx_utils``).  The collector
#: joins domain and name with ``:`` as names themselves may (``XlaModule:#...#``, ``epoch:1``): an unknown first part
#: stays in the name.
XLA_NVTX_DOMAIN = "TSL"


def nvtx_name(event: str) -> tuple[str, str | None]:
    """(the range's name, its NVTX domain) of a CUPTI NVTX event (``NVTX:TSL:XlaModule:#...#`` -> (``XlaModule:#...#``,
    ``TSL``); ``NVTX:forward`` -> (``forward``, ``""``)); (event, None) for any other host event."""
    if not event.startswith(NVTX_EVENT_PREFIX):
        return event, None
    rest = event[len(NVTX_EVENT_PREFIX):]
    domain, sep, name = rest.partition(":")
    known = domain == XLA_NVTX_DOMAIN or domain in nvtx.LIBRARY_DOMAINS or nvtx.is_framework_op_domain(domain)
    return (name, domain) if sep and name and known else (rest, "")


def nvtx_ranges(h: HostEvents, domains_of: dict[str, str]) -> HostRanges | None:
    """The program's (and its libraries') NVTX ranges, as CUPTI's NVTX activity writes them into the capture: the
    events of ``Host Threads/<tid>/NVTX`` lines, their names without the ``NVTX:`` prefix (:func:`nvtx_name`), read as
    Nsight's NVTX ranges are (``Trace.ranges``); a framework's op ranges (XLA's module and thunk ranges in the ``TSL``
    domain, TensorFlow's op domain) flagged ops.  None where the capture has no NVTX line."""
    on = np.fromiter((n.endswith(NVTX_LINE_SUFFIX) for n in h.line_names), bool, count=len(h.line_names))
    if not on.any():
        return None
    idx = np.flatnonzero(lookup_mask(on, h.line)).astype(np.int64)
    if not idx.size:
        return None
    names = np.unique(h.name[idx]).tolist()
    domains = sorted({domains_of.get(h.names[int(n)], "") for n in names} | {""})
    code = {int(n): domains.index(domains_of.get(h.names[int(n)], "")) for n in names}
    dom = np.array([code[int(n)] for n in h.name[idx].tolist()], np.int16)
    op = h.per_name(nvtx.is_op_name)[h.name[idx]] | np.isin(dom, [i for i, d in enumerate(domains)
                                                                   if nvtx.is_framework_op_domain(d)])
    return HostRanges(idx=idx, domain=dom, domains=domains, op=op, source="NVTX (CUPTI)")


def nvtx_domains(tl: Timeline) -> dict[str, str]:
    """The NVTX domain of each range name the host planes hold (:func:`nvtx_name`), read before the host tables
    rename the events."""
    return {name: dom for p in tl.host_planes() for name, dom in map(nvtx_name, p.event_names) if dom is not None}


#: Sparse host stats: (HostEvents field, stat name, inherit from the event metadata).
_HOST_STATS = (("corr", "correlation_id", False), ("group_id", "group_id", False), ("step_num", "step_num", True),
               ("iter_num", "iter_num", True), ("root", "_r", True), ("is_eager", "is_eager", True))


def _host_lines(tl: Timeline) -> tuple[list[tuple[Line, np.ndarray | None]], list[str]]:
    """Non-empty host lines with their name remap into one name table across host planes (None: identity),
    and that table."""
    index: dict[str, int] = {}
    lines: list[tuple[Line, np.ndarray | None]] = []
    for plane in tl.host_planes():
        remap = np.fromiter((index.setdefault(nvtx_name(n)[0], len(index)) for n in plane.event_names), dtype=np.int32,
                            count=len(plane.event_names))
        identity = bool((remap == np.arange(remap.size)).all())
        lines.extend((ln, None if identity else remap) for ln in plane.lines if len(ln))
    names: list[str] = [None] * len(index)  # type: ignore[list-item]
    for n_, i in index.items():
        names[i] = n_
    return lines, names


#: A host line of at least this many events hands its freed columns back to the OS once the table holds them
#: (``release``): the table's pages are new, so what the line frees is not reused by the next line -- without it, the
#: dense 100 MB capture's 8 host threads of 280k events each grew the heap by ~50 MB, its read's peak.  Smaller lines
#: are left alone: a trim costs milliseconds, and a TensorFlow capture may have hundreds of host threads.
_TRIM_AFTER_EVENTS = 1 << 16


def host_events(tl: Timeline, release: bool = False) -> HostEvents:
    """One table over every host line, filled in place with narrow dtypes.

    The table takes over the timeline's columns rather than holding a second copy: each host line's
    ``start_ps`` becomes a view of its slice of ``start``, and its ``name_id`` one of ``name`` where the
    name table is the line's own (one host plane, distinct names -- as TensorFlow writes them).  The
    values are the same, so the timeline reads as before; its own arrays are freed.  With ``release``
    (an analysis that owns the timeline) each line's remaining per-event columns are dropped as soon as
    the table holds them (:meth:`Line.release_events`): durations and stats were the timeline's share
    of the analysis's peak memory.
    """
    lines, names = _host_lines(tl)
    total = sum(len(ln) for ln, _ in lines)
    start = np.empty(total, np.int64)
    end = np.empty(total, np.int64)
    name = np.empty(total, int_dtype(0, len(names), floor=np.int16))  # int16 up to 32k names: 2 bytes an event
    line = np.empty(total, int_dtype(0, len(lines), floor=np.int16))
    # each stat's column is joined at the end from narrow per-line parts: widened to its final dtype at the first
    # line (an int32 correlation id), it was full size while the whole timeline was still alive -- the peak
    parts: dict[str, list[np.ndarray]] = {k: [] for k, _, _ in _HOST_STATS}
    o = 0
    for li, (ln, remap) in enumerate(lines):
        n = len(ln)
        sl = slice(o, o + n)
        start[sl] = ln.start_ps
        np.add(ln.start_ps, ln.duration_ps, out=end[sl])
        if remap is None:
            name[sl] = ln.name_id
        else:
            np.take(remap, ln.name_id, out=name[sl])
        line[sl] = li
        for k, stat, inherit in _HOST_STATS:
            if ln.stat_all_default(stat, -1, inherit):  # no event has it: -1, without building a column
                parts[k].append(np.full(n, -1, np.int8))
            elif (held := ln.held_column(stat, inherit)) is not None:  # the reader's own column: no int64 copy
                parts[k].append(narrowest(held))
            else:
                parts[k].append(narrowest(ln.int_stat(stat, inherit=inherit)))
        if ln.start_ps.dtype == start.dtype:
            ln.start_ps = start[sl]
        if remap is None and ln.name_id.dtype == name.dtype:
            ln.name_id = name[sl]
        if release:
            ln.release_events()
            if n >= _TRIM_AFTER_EVENTS:
                release_free_heap()
        o += n
    # stats absent from the whole capture (group_id, is_eager in current TF captures) take no memory
    stats = {k: absent_as_broadcast(_join_parts(p)) for k, p in parts.items()}
    return HostEvents(start=start, end=end, name=name, line=line, names=names, line_names=[ln.name for ln, _ in lines], **stats)


def _join_parts(parts: list[np.ndarray]) -> np.ndarray:
    """One column from per-line parts, in the widest of their (narrowest) dtypes; the list is emptied as it goes."""
    if not parts:
        return np.zeros(0, np.int8)
    out = np.concatenate(parts) if len(parts) > 1 else parts[0]
    parts.clear()
    return out


#: The host memory kinds XLA's CUPTI collector writes in ``memcpy_details`` (``kind_src:pageable kind_dst:device``):
#: a copy with either end in pageable memory is staged by the driver; one between pinned or managed memory and the
#: device is not.  ``device``, ``array`` and ``unknown`` say nothing of host memory.
_PAGEABLE_KINDS = ("pageable",)
_OTHER_HOST_KINDS = ("pinned", "managed", "managed_static")


def _parse_memcpy(details: list[str | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(size, sync, host memory) per ``memcpy_details`` string, -1 where it does not say: host memory 1 where a
    ``kind_src`` / ``kind_dst`` is pageable, 0 where one is another host memory.  ``size:0`` says nothing: a copy
    moves bytes, and XLA's ROCm tracer writes 0 for every copy whose record carries no size (roctracer's HIP-OPS
    records: ``kind:Unknown size:0 dest:0 async:0``, openxla/xla rocm_collector.cc / rocm_tracer.cc "record->bytes is
    not a valid value")."""
    size = np.full(len(details), -1, dtype=np.int64)
    sync = np.full(len(details), -1, dtype=np.int8)
    host = np.full(len(details), -1, dtype=np.int8)
    for i, d in enumerate(details):
        if not d:
            continue
        for tok in d.split():
            k, _, v = tok.partition(":")
            if k == "size" and v.isdigit() and v.strip("0"):
                size[i] = int(v)
            elif k == "async" and v in ("0", "1"):
                sync[i] = 1 if v == "0" else 0
            elif k in ("kind_src", "kind_dst"):
                if v in _PAGEABLE_KINDS:
                    host[i] = 1
                elif v in _OTHER_HOST_KINDS and host[i] < 0:
                    host[i] = 0
    return size, sync, host


#: The stats of a GPU plane's memory records (``xla/backends/profiler/gpu/cupti_collector.cc``, and TF's own
#: ``core/profiler/internal/gpu/cupti_collector.cc`` before the move): CUPTI's allocations, frees and residency
#: changes, on the stream lines beside the kernels, named ``MemoryAlloc`` / ``MemoryFree`` / ``MemoryResidency`` -- what the driver did to memory, not work
#: the GPU ran (``Memset_details`` marks a memset, which is).
MEMORY_RECORD_STATS = ("memalloc_details", "MemFree_details", "MemoryResidency_details")


def _not_gpu_work(plane: Plane, lines: list[Line]) -> np.ndarray | None:
    """Over the lines' events, concatenated: those that are no work of the GPU -- CUPTI's overhead records on a
    ``CUPTI overhead`` line, memory records (:data:`MEMORY_RECORD_STATS`); None where the plane holds neither."""
    records = [k for k in MEMORY_RECORD_STATS if plane.stat_key(k) is not None]
    if not records and not any(ln.name == OVERHEAD_LINE for ln in lines):
        return None
    over = np.fromiter((n in devices.PROFILER_OVERHEAD_EVENTS for n in plane.event_names), bool,
                       count=len(plane.event_names))
    parts = []
    for ln in lines:
        d = over[ln.name_id] if ln.name == OVERHEAD_LINE else np.zeros(len(ln), bool)
        for k in records:
            d |= ln.has_stat(k)
        parts.append(d)
    return _cat(parts, bool)


#: correlation id -> the host's copy or fill call that made it (``hipMemcpyHtoDAsync``), where a GPU ran a runtime's
#: own copy kernel (:func:`copy_calls`)
CopyCalls = dict[int, str]


def copy_calls(tl: Timeline) -> CopyCalls:
    """The host's copy and fill calls by correlation id (``devices.is_copy_call``), where some GPU plane holds a copy
    its name may misstate (``devices.blit_copy_kind``: ROCclr's ``__amd_rocclr_copyBuffer.kd``, roctracer's
    ``CopyHostToDevice``); {} else -- the host lines are not read for a capture without one."""
    if not any(devices.blit_copy_kind(n, None) is not None for p in tl.gpu_planes() for n in p.event_names):
        return {}
    out: CopyCalls = {}
    for p in tl.host_planes():
        is_call = np.fromiter((devices.is_copy_call(n) for n in p.event_names), bool, count=len(p.event_names))
        if not is_call.any() or p.stat_key("correlation_id") is None:
            continue
        for ln in p.lines:
            if not len(ln) or ln.start_ps is None:
                continue
            sel = np.flatnonzero(is_call[ln.name_id])
            if sel.size:
                corr = ln.int_stat("correlation_id", inherit=False)[sel]
                out.update((int(c), p.event_names[int(n)]) for c, n in zip(corr.tolist(), ln.name_id[sel].tolist()) if c >= 0)
    return out


def _event_kinds(plane: Plane, name: np.ndarray, corr: np.ndarray, calls: CopyCalls | None) -> np.ndarray:
    """The kind of each event (``devices.device_kind`` of its name); a ROCm copy its name may misstate takes the kind
    of the copy call that made it (``devices.blit_copy_kind``)."""
    per_name = devices.device_kind(plane.event_names)
    kind = per_name[name] if name.size else np.zeros(0, np.int8)
    blit = {i: n for i, n in enumerate(plane.event_names) if devices.blit_copy_kind(n, None) is not None}
    if blit:
        sel = np.flatnonzero(np.isin(name, list(blit)))
        kind = kind.copy()
        for i, n, c in zip(sel.tolist(), name[sel].tolist(), corr[sel].tolist()):
            kind[i] = devices.blit_copy_kind(blit[int(n)], (calls or {}).get(int(c)))
    return kind


def device_events(plane: Plane, release: bool = False, calls: CopyCalls | None = None,
                  split: frozenset[str] = frozenset()) -> DeviceEvents:
    """All activity lines (streams) of one GPU plane, sorted by start; id and stat columns in narrow dtypes.
    ``split``: the XLA modules whose kernels' op text names their program (:func:`split_modules`).

    With ``release`` the streams' own columns are dropped once the table holds them (see
    :func:`host_events`); derived lines (``Steps``, ``TensorFlow Ops``, ...) stay: steps and ops read them.
    """
    lines = activity_lines(plane)
    i64 = np.int64
    start = _cat([ln.start_ps for ln in lines], i64)
    order = np.argsort(start, kind="stable")
    drop = _not_gpu_work(plane, lines)
    if drop is not None:
        order = order[~drop[order]]
    start = start[order]
    n = start.shape[0]

    def col(get, dtype=i64) -> np.ndarray:
        """One column over every stream, in start order (each built and dropped in turn: a few MB at a time)."""
        return _cat([get(ln) for ln in lines], dtype)[order]

    def stat(name: str, inherit: bool = True) -> np.ndarray:
        if plane.stat_key(name) is None:  # not in this plane at all: a zero-byte -1 column
            return np.broadcast_to(np.int64(-1), (n,))
        return col(lambda ln: ln.int_stat(name, inherit=inherit))

    def held(name: str, inherit: bool = True) -> np.ndarray:
        """:func:`stat`'s values in the widest dtype of the streams' held columns (``Line.held_column``: 1-4 bytes
        an event, not int64), for the columns narrowed next."""
        if plane.stat_key(name) is None:
            return stat(name, inherit)
        parts = [ln.held_column(name, inherit) for ln in lines]
        if any(p is None for p in parts):
            return stat(name, inherit)
        return _cat(parts, np.result_type(*parts) if parts else np.int64)[order]

    name = narrowest(col(lambda ln: ln.name_id, np.int32), np.int16)
    end = col(lambda ln: ln.end_ps)
    mem_bytes, mem_sync, mem_host = _memcpy_columns(plane, stat("memcpy_details"))
    op_text, op_idx = _op_columns(plane, stat, start, end, split)
    sdt = int_dtype(0, len(lines))
    stream = _cat([np.full(len(ln), i, dtype=sdt) for i, ln in enumerate(lines)], sdt)[order]
    corr = narrowest(held("correlation_id", inherit=False), np.int32)
    kind = _event_kinds(plane, name, corr, calls)
    group_id = absent_as_broadcast(narrowest(stat("group_id", inherit=False)))
    shape_sid = absent_as_broadcast(narrowest(stat("shape")))
    long_name_sid = absent_as_broadcast(narrowest(stat("long_name")))
    graph_id = absent_as_broadcast(narrowest(stat("cuda_graph_id", inherit=False)))
    launch = _launch_columns(plane, held("kernel_details"))
    if release:
        for ln in lines:
            ln.release_events()
    return DeviceEvents(
        gpu=int(plane.gpu_id), info=device_info(plane), names=plane.event_names, strings=plane.strings, start=start, end=end, name=name, kind=kind,
        stream=stream, stream_names=[ln.name for ln in lines], corr=corr, group_id=group_id, op_text=op_text, op_idx=op_idx,
        **DeviceEvents.copy_columns(mem_bytes, mem_sync, mem_host), shape_sid=shape_sid, long_name_sid=long_name_sid, graph_id=graph_id,
        **launch,
    )


#: Where a launch count saturates (int32, as the other formats' columns): far above any GPU's SMs or a block's threads.
_LAUNCH_TOP = (1 << 31) - 1


def _launch_columns(plane: Plane, kdet: np.ndarray) -> dict[str, np.ndarray]:
    """The ``launch_*`` fields from the ``kernel_details`` string ids (-1 where absent): each distinct string parsed
    once (a kernel's every launch repeats it) into a row of the table, and each event given its string's row."""
    has = kdet >= 0
    if not has.any():
        return {}
    u, inv = unique_inverse(kdet[has])
    per = np.array([_parse_launch(plane.string(int(s))) for s in u.tolist()], np.int64).reshape(-1, 2)
    recorded = per[:, 0] > 0  # a details string without a grid records no launch
    if not recorded.all():
        row = np.cumsum(recorded) - 1
        has[np.flatnonzero(has)[~recorded[inv]]] = False
        inv = row[inv[recorded[inv]]]
        per = per[recorded]
    table = np.stack([np.minimum(per[:, 0], _LAUNCH_TOP), np.clip(per[:, 1], -1, _LAUNCH_TOP)], axis=1)
    return DeviceEvents.launch_from(has, inv, table)


def _parse_launch(details: str | None) -> tuple[int, int]:
    """(blocks, threads per block) of a ``kernel_details`` string (``regs:32 ... grid:108,1,1 block:256,1,1
    occ_pct:50``), -1 for a count it does not give as 1-3 non-negative integers; saturated at int32's top."""
    out = {"grid": -1, "block": -1}
    for tok in (details or "").split():
        key, _, value = tok.partition(":")
        if key in out:
            dims = value.split(",")
            if 1 <= len(dims) <= 3 and all(d.isascii() and d.isdigit() for d in dims):
                prod = 1
                for d in dims:
                    prod = min(prod * _launch_dim(d), _LAUNCH_TOP)
                out[key] = prod
    return out["grid"], out["block"]


def _launch_dim(digits: str) -> int:
    """One dimension's ASCII digits as an int; past 10 significant digits (above int32's top, where the count
    saturates anyway) just above the top.  ``int()`` of the digits would raise past 4,300 of them (Python's limit on
    string conversion): a hostile ``kernel_details`` must not stop the analysis of its host."""
    return int(digits[-10:]) if len(digits.lstrip("0")) <= 10 else _LAUNCH_TOP + 1


def _memcpy_columns(plane: Plane, mdet: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bytes, sync, host memory) per event from the ``memcpy_details`` string ids (-1 where unknown): each distinct
    string is parsed once; zero-byte broadcast -1 columns where no event has details."""
    has = mdet >= 0
    if not has.any():
        none = np.broadcast_to(np.int8(-1), mdet.shape)
        return np.broadcast_to(np.int64(-1), mdet.shape), none, none
    u, inv = unique_inverse(mdet[has])
    size_u, sync_u, host_u = _parse_memcpy([plane.string(int(s)) for s in u])
    size = np.full(mdet.shape, -1, dtype=int_dtype(-1, int(size_u.max())))
    size[has] = size_u[inv]
    sync = np.full(mdet.shape, -1, dtype=np.int8)
    sync[has] = sync_u[inv]
    host = np.full(mdet.shape, -1, dtype=np.int8)
    host[has] = host_u[inv]
    return size, sync, host


def _op_columns(plane: Plane, stat, start: np.ndarray, end: np.ndarray,
                split: frozenset[str] = frozenset()) -> tuple[list[str], np.ndarray]:
    """(op_text, op_idx): each event's TF op name, from its ``tf_op`` stat, its HLO op (XLA GPU kernels), else
    the TF 2.4 ``TensorFlow Ops`` line event enclosing it; op_idx -1 where none.  ``stat(name)``: a string-id
    stat column in event order; ``split``: the XLA modules named by program (:func:`split_modules`)."""
    tf_op = stat("tf_op")
    op_text: list[str] = []
    op_idx = np.full(start.shape[0], -1, dtype=np.int32)
    if (tf_op >= 0).any():
        u, inv2 = unique_inverse(tf_op)
        op_text = [plane.string(int(s)) or "" if s >= 0 else "" for s in u]
        op_idx = inv2.astype(np.int32)
        op_idx[tf_op < 0] = -1
    if plane.stat_key("hlo_op") is not None:  # XLA GPU kernels (JAX, TF jit_compile) carry hlo_op / hlo_module
        _hlo_ops(plane, tf_op, stat("hlo_op"), stat("hlo_module"), op_text, op_idx,
                 stat("program_id") if split else None, split)
    del tf_op
    ops_line = plane.line("TensorFlow Ops") or plane.line("Framework Ops")
    if ops_line is not None and len(ops_line) and (op_idx < 0).any():
        o = np.argsort(ops_line.start_ps, kind="stable")
        os_, oe, on = ops_line.start_ps[o], ops_line.end_ps[o], ops_line.name_id[o]
        j = np.searchsorted(os_, start, side="right") - 1
        ok = (j >= 0) & (op_idx < 0)
        jj = np.clip(j, 0, None)
        ok &= oe[jj] >= end
        base = len(op_text)
        un, inv3 = unique_inverse(on)
        op_text.extend(plane.event_names[int(x)] for x in un)
        op_idx[ok] = (base + inv3[jj[ok]]).astype(np.int32)
    return op_text, op_idx.astype(int_dtype(-1, len(op_text), floor=np.int16), copy=False)


def _hlo_ops(plane: Plane, tf_op: np.ndarray, hlo_op: np.ndarray, hlo_module: np.ndarray, op_text: list[str],
             op_idx: np.ndarray, program: np.ndarray | None = None, split: frozenset[str] = frozenset()) -> None:
    """XLA GPU kernels: the HLO op instead of the module annotation (in place on ``op_text``/``op_idx``).

    On XLA GPU (JAX, TF ``jit_compile``) every kernel's ``tf_op`` is the outermost annotation, the module
    (``XlaModule:``), so all kernels would be one op.  Where ``tf_op`` is that annotation or absent and the
    kernel carries ``hlo_op``, the op becomes ``<hlo_module>/<hlo_op>:<type>`` with the type derived from the
    HLO instruction name (``cublas-gemm.3`` -> ``cublas-gemm``; :func:`kernel_classes.hlo_op_type`), so
    :func:`kernel_classes.op_name` / ``op_type`` and Tensor Core eligibility work unchanged downstream.  A kernel of
    a module in ``split`` that carries its ``program`` id names its program instead (``jit_dot(79)/custom-call.1``:
    :func:`split_modules`), the key its own program's HLO rows are found by.
    """
    has = hlo_op >= 0
    if not has.any():
        return
    if op_text:
        xla_ann = np.fromiter((xla.is_xla_module_annotation(t) for t in op_text), dtype=bool, count=len(op_text))
        replace = has & ((op_idx < 0) | xla_ann[np.clip(op_idx, 0, None)])
    else:
        replace = has & (op_idx < 0)
    if not replace.any():
        return
    sel = np.nonzero(replace)[0]
    mod = hlo_module[sel]
    key = hlo_op[sel].astype(np.int64) * (int(mod.max()) + 2) + (mod + 1)
    u, inv = np.unique(key, return_inverse=True)
    pid = _split_programs(plane, mod, program[sel] if program is not None else None, split)
    if pid is not None:  # (op, module) pairs made (op, module, program) where the module's programs are read apart
        pu, pinv = np.unique(pid, return_inverse=True)
        both, inv = np.unique(inv.reshape(-1).astype(np.int64) * len(pu) + pinv.reshape(-1), return_inverse=True)
        pairs = [(int(u[b // len(pu)]), int(pu[b % len(pu)])) for b in both.tolist()]
    else:
        pairs = [(int(k), -1) for k in u.tolist()]
    base = len(op_text)
    graph = _command_buffer_word(plane)
    for k, p in pairs:
        h, m = divmod(k, int(mod.max()) + 2)
        name = plane.string(h) or ""
        module = plane.string(m - 1) if m > 0 else None
        if module and p >= 0:
            module = xla.program_key(module, p)
        # kernels of an XLA command buffer all carry the buffer's HLO op: say so in the op's name
        label = f"{name} ({graph})" if name.startswith("command_buffer") else name
        op_text.append(f"{module}/{label}:{xla.hlo_op_type(name)}" if module else f"{label}:{xla.hlo_op_type(name)}")
    op_idx[sel] = (base + inv.reshape(-1)).astype(np.int32)


def _command_buffer_word(plane: Plane) -> str:
    """What an XLA command buffer is on the plane's GPU, in its vendor's words (``devices``' ``WORDS``): a CUDA graph
    on NVIDIA's, a HIP graph under XLA's ROCm build (``RocmCommandBuffer`` records ``hipGraph_t``) -- an MI300X's
    kernel table said "command_buffer_1 (CUDA graph)" (h37-amd69).  A plane whose device name and vendor no vendor
    claims (``devices.vendor_claimed``: none stated, or a name no vendor's devices carry) gets the neutral "graph":
    the vendors' default (NVIDIA's) would name a CUDA graph on a GPU nothing in the plane names (h37-kind69), and a
    device name no vendor knows names no CUDA GPU either (h37-names70)."""
    st = plane.stats
    stated = [str(st.get(k) or "") for k in ("gpu_device_name", "device_vendor")]
    claimed = next((v for v in (devices.vendor_claimed([n]) for n in stated if n) if v), None)
    return devices.vendor_called(claimed).words("CUDA graph") if claimed else "graph"


def _split_programs(plane: Plane, mod: np.ndarray, program: np.ndarray | None,
                    split: frozenset[str]) -> np.ndarray | None:
    """Per kernel (``mod``: its ``hlo_module`` string id): its ``program`` id where its module is in ``split``, -1
    elsewhere; None where no kernel names a split module's program (the op text stays the module's)."""
    if program is None or not split:
        return None
    um, minv = np.unique(mod, return_inverse=True)
    named = np.fromiter(((plane.string(int(x)) or "") in split if x >= 0 else False for x in um.tolist()), dtype=bool,
                        count=um.size)
    out = np.where(named[minv.reshape(-1)] & (program >= 0), program.astype(np.int64), -1)
    return out if (out >= 0).any() else None


#: GPU tables built at once (:func:`all_device_events`); 1: one after another in the caller's thread.
DEVICE_TABLE_WORKERS = 2


def all_device_events(tl: Timeline, release: bool = False, calls: CopyCalls | None = None,
                      split: frozenset[str] = frozenset()) -> list[DeviceEvents]:
    """Every GPU's table; with ``release``, freed heap goes back to the OS once they are built (``memory.py``): the
    streams' columns they freed would otherwise stay mapped under the analysis.  ``split``: the XLA modules whose
    programs are read apart (:func:`split_modules`)."""
    # each GPU's table from its own plane's columns (numpy's sorts and gathers let go of the GIL): two at a time
    out = map_in_order(lambda p: device_events(p, release, calls, split), tl.gpu_planes(), DEVICE_TABLE_WORKERS,
                       "xplane-gpu")
    if release:  # once, after every GPU: a trim after each GPU only made the next one fault the pages in again
        release_free_heap()
    return out
