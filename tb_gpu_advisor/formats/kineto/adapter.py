"""Kineto (PyTorch ``torch.profiler``) trace -> the neutral :class:`~tb_gpu_advisor.model.trace.Trace`.

What is decided here, once, from the format's own conventions:

* host events are the ``X`` events of the host categories (ATen ops, annotations, CUDA runtime and driver
  calls), one line per (process, thread);
* device events are kernels, copies and memsets, per device (``args.device``), one stream per
  ``args.stream``; ``gpu_user_annotation`` spans are derived, not activity, and are left out;
* a device event's launch is the runtime/driver call with the same ``correlation`` (CUDA graph kernels
  share the ``cudaGraphLaunch``'s), its op the ATen op whose ``External id`` the launch carries;
* steps are the ``ProfilerStep#N`` annotations of the training loop;
* times are re-based to the earliest event, in picoseconds (raw ``ts`` is microseconds since an
  arbitrary clock origin: at 1e15 us and above, picoseconds would not fit in int64).
"""

from __future__ import annotations

import io
import os
import re
import zlib
from itertools import compress, repeat
from operator import is_not
from typing import Any, NamedTuple

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.common.memory import small_pages
from tb_gpu_advisor.formats.base import max_profile_bytes
from tb_gpu_advisor.frameworks import aten_flops, pytorch
from tb_gpu_advisor.formats.kineto.layout import LEGACY_CUDA_PROCESS, LEGACY_HOST_PROCESS
from tb_gpu_advisor.formats.kineto.parse import (MPS_DEVICE_TYPE, OLD_CATS, KinetoReadError, KinetoTrace, completed_pairs,
                                               has_duration_pairs, link_by_flows, nothing_recorded, parse_trace,
                                               rows_of, scan_host_columns, times_as_numbers, unlinked_rows)
from tb_gpu_advisor.formats.kineto.ranks import (Process, gpu_rows_device, merge_ranks, process_scoped_ids, processes,
                                                 stated_ranks, tagged_ranks)
from tb_gpu_advisor.model.columns import (absent_as_broadcast, int_dtype, loop_turn, lower_median, narrowest, nest,
                                          unique_inverse, unique_pairs)
from tb_gpu_advisor.model.idtable import IdTable
from tb_gpu_advisor.model.trace import (MEMORY_PHASES, NO_FLOP_OPS_NOTE, Allocator, DeviceEvents, DeviceInfo, FlopOps,
                                       HostEvents, MemoryEvents, Spans, StepMarkers, Trace, gpus_in_words,
                                       listed_gpu_models)

#: Host categories analysed.  Python frames (``python_function``, with ``with_stack=True``) are left out: they
#: enclose the ATen ops they call, so as host events they would cover the whole step as host work.
HOST_CATS = ("cpu_op", "user_annotation", "cuda_runtime", "cuda_driver")
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
_LAUNCH_CATS = ("cuda_runtime", "cuda_driver")
#: The runtime and driver calls of the accelerators Kineto traces through a plugin -> the launch categories: Intel GPUs
#: (the ``xpupti`` plugin, PyTorch 2.4 on: ``urEnqueueKernelLaunch``, ``zeCommandListAppendLaunchKernel``) and an
#: out-of-tree backend's (``privateuse1``).  Their kernels, copies and memsets are ``kernel``/``gpu_memcpy``/``gpu_memset``
#: like CUDA's, linked to the call by the same ``correlation`` (pytorch/kineto libkineto/include/ActivityType.h,
#: src/plugin/xpupti/XpuptiActivityHandlers.cpp); read as any other category, the launches went unread and a blocking
#: pageable copy read as no host wait at all (survey h37-survey27).
PLUGIN_RUNTIME_CATS = {"xpu_runtime": "cuda_runtime", "xpu_driver": "cuda_driver",
                       "privateuse1_runtime": "cuda_runtime", "privateuse1_driver": "cuda_driver"}
_OP_CATS = ("cpu_op", "user_annotation")
#: The trace's own span event (``PyTorch Profiler (0)``, category ``Trace``): the capture window.
_TRACE_CAT = "Trace"
#: CUPTI's range profiler (``experimental_config=_ExperimentalConfig(profiler_metrics=[...])``): one event per kernel
#: with its hardware counters and the replay's time, instead of the kernel's own timed record.
COUNTER_CAT = "cuda_profiler_range"


def read_trace(path: str, host: str | None = None, ranks: list[str] | None = None,
               inferred_ranks: dict[str, int] | None = None) -> Trace:
    """Read one ``*.pt.trace.json[.gz]`` into a trace (``KinetoReadError`` when it is no trace to analyse);
    ``ranks``: several ranks' files of one machine, read as one trace (``path`` is then the first of them);
    ``inferred_ranks``: path -> rank of those files that state none, as the layout inferred it (said in a note).
    Its columns are written once each on small pages (:func:`small_pages`: a 1 GB read's system time 1.1 -> 0.3 s)."""
    paths = list(ranks) if ranks else [path]
    inferred = {_worker(p): r for p, r in (inferred_ranks or {}).items() if p in paths}
    with small_pages():
        parsed = [_parse(p) for p in paths]
        size = sum(n for _, n in parsed)
        if len(parsed) > 1:  # one process's window written as several files: its parts read as one file
            groups = processes([k for k, _ in parsed])
            parsed = [parsed[g[0]] if len(g) == 1 else (merge_ranks(
                [parsed[i][0] for i in g], [_worker(paths[i]) for i in g], one_process=True),
                sum(parsed[i][1] for i in g)) for g in groups]
            paths = [paths[g[0]] for g in groups]
        kt = parsed[0][0] if len(parsed) == 1 else merge_ranks([k for k, _ in parsed], [_worker(p) for p in paths],
                                                               inferred)
        trace = to_trace(kt, host or _worker(path), path, size)
    trace.notes += [_inferred_note(w, r, _world_size(kt)) for w, r in sorted(inferred.items(), key=lambda x: x[1])]
    unlinked = sum(unlinked_rows(k, DEVICE_CATS, flows_only=False).size for k, _ in parsed)
    if unlinked and not trace.printed_from:  # the device rows counted only where some name no launch
        trace.printed_from = UNLINKED_FROM
        trace.not_kept = (_unlinked_note(unlinked, sum(_device_rows(k) for k, _ in parsed)),)
    return trace


#: What a trace whose device work names no launch is, in words (``Trace.printed_from``).
UNLINKED_FROM = ("a trace whose GPU work names no launch (no `correlation` argument and no flow arrow from its call: "
                 "a converted or re-written copy; torch.profiler writes both on every kernel, copy and memset)")


def _unlinked_note(unlinked: int, rows: int) -> str:
    """What a trace loses where ``unlinked`` of its ``rows`` device rows name no launch (``Trace.not_kept``).

    Why: a kernel with neither its ``correlation`` nor a flow arrow ending on it (:func:`link_by_flows`) read as work
    no call launched, and nothing said so (session h37-meta56 *Left* 1: ``torchrec_shampoo_128`` so re-written lost a
    step and read its GPU idle as unexplained)."""
    return (f"which host call launched {unlinked:,} of its {rows:,} kernels, copies and memsets: they are tied to no "
            "step by their launch and to no host work, so the steps, the launch waits and the GPU idle the host "
            "explains are read without them")


def _device_rows(kt: KinetoTrace) -> int:
    """How many rows of ``kt`` are device work (kernels, copies, memsets)."""
    return int(np.count_nonzero(rows_of(kt, DEVICE_CATS)))


def _inferred_note(worker: str, rank: int, world: int | None) -> str:
    """What the report says of a rank file whose rank was inferred: the file does not state it."""
    of = f" of {world}" if world else ""
    return (f"{worker}'s trace states no rank (no distributedInfo: written before init_process_group or after "
            f"destroy_process_group, or stripped); read as rank {rank}, the one rank{of} no other file of the job "
            "states")


def process_of(path: str) -> Process | None:
    """What tells the process of the trace at ``path`` from another's (``ranks.Process``: its pids, header and ids),
    as :func:`read_trace` reads it; None where it does not read (``KinetoReadError``, or a damaged compressed stream:
    discovery asks it, and a file that does not read is no part of another).  The one place that chooses how:
    the compiled scanner's host columns (``parse.scan_host_columns``: the ids alone, no trace built), else -- no
    scanner, or a file it cannot read as the reader does, or one whose device work the flow arrows link -- the file
    decoded whole as :func:`read_trace` decodes it (the reference)."""
    try:
        with fsio.open_binary(path) as f:
            cols = scan_host_columns(f, max_profile_bytes())
    except _UNREADABLE:
        cols = None
    if cols is not None and not unlinked_rows(cols, DEVICE_CATS).size:  # flows link only device rows, mostly
        return Process.of(cols)
    try:
        return Process.of(_parse(path)[0])
    except (KinetoReadError, *_UNREADABLE):
        return None


#: What a file's bytes raise where they do not read as a stream: a bad gzip (``OSError``), one cut off inside a member
#: (``EOFError``), a corrupt deflate stream (``zlib.error``).
_UNREADABLE = (OSError, EOFError, zlib.error)


def _parse(path: str) -> tuple[KinetoTrace, int]:
    """A file's columns and its size on disk.  Opened through ``fsio`` (a file discovery listed: only below its
    logdir, only the file listed) and read from that one open file; where the columns cannot read what it wrote,
    read again through each rewrite of :data:`_REWRITES` it needs, in turn (each rewrite reads the previous one's
    text), and once more for its flow arrows where its device work carries no ``correlation``
    (:func:`~tb_gpu_advisor.formats.kineto.parse.link_by_flows`)."""
    try:
        f = fsio.open_binary(path)
    except OSError as e:
        raise KinetoReadError(path, f"cannot open: {e.strerror or e}") from e
    with f:
        n = os.fstat(f.fileno()).st_size if hasattr(f, "fileno") and not fsio.is_remote(path) else fsio.size(path)
        kt, failed = _columns(f, path)
    text: bytes | None = None  # the last rewrite's document; None: the file as written
    for rewrite in _REWRITES:
        if not rewrite.needed(kt, failed):
            continue
        try:
            with _reopen(path, text) as src:
                mended = rewrite.mend(src)
        except (ValueError, RecursionError):  # not one JSON document (cut off, nested past the limit): as read
            mended = None
        if mended is not None:
            text = mended
            kt, failed = _columns(io.BytesIO(text), path)
    if kt is None:
        raise failed
    rows = unlinked_rows(kt, DEVICE_CATS)
    if rows.size:  # device work written without its correlation: the flow arrows still name each launch
        with _reopen(path, text) as src:
            link_by_flows(kt, src, rows)
    return kt, n


class _Rewrite(NamedTuple):
    """A rewrite of a document the columns cannot read as written, and when it is needed: the read failed for that
    reason (``KinetoReadError``'s flag ``flag``), or it read but kept what the rewrite mends (``kept``)."""

    flag: str
    kept: Any  # Callable[[KinetoTrace], bool]
    mend: Any  # Callable[[IO[bytes]], bytes | None]

    def needed(self, kt: KinetoTrace | None, failed: KinetoReadError | None) -> bool:
        return bool(getattr(failed, self.flag)) if kt is None else bool(self.kept(kt))


#: in this order: times written as text become numbers first, so that the begin/end pairs can be timed
_REWRITES = (_Rewrite("untimed", lambda kt: kt.untimed, times_as_numbers),
             _Rewrite("only_pairs", has_duration_pairs, completed_pairs))


def _columns(src: Any, path: str) -> tuple[KinetoTrace | None, KinetoReadError | None]:
    """``src`` read into columns, or the error a rewrite may mend (every other error is raised)."""
    try:
        return parse_trace(src, max_bytes=max_profile_bytes(), name=path), None
    except KinetoReadError as e:
        if not any(getattr(e, r.flag) for r in _REWRITES):
            raise
        return None, e


def _reopen(path: str, text: bytes | None) -> Any:
    """The document to read again: the last rewrite's text, else the file."""
    return io.BytesIO(text) if text is not None else fsio.open_binary(path)


def _worker(path: str) -> str:
    """``<worker>.<time_ns>.pt.trace.json[.gz]`` -> ``<worker>`` (the file name when it has no such form)."""
    name = os.path.basename(path)
    for suffix in (".pt.trace.json.gz", ".pt.trace.json"):
        if name.endswith(suffix):
            stem = name[: -len(suffix)]
            head, _, tail = stem.rpartition(".")
            return head if head and tail.isdigit() else stem
    return name


def _legacy_host_ops(kt: KinetoTrace) -> None:
    """The legacy profiler's uncategorised host ops read as ``cpu_op`` (in place), so its ATen ops are the trace's
    host events: its ``aten::cudnn_convolution`` then says the work ran on a GPU whose side was not recorded, where
    an empty host read "no GPU work, the CPU's" (a VoteNet forward, KeondoPark/luxmea: 1,442 ops)."""
    pids = [i for i, label in kt.pid_labels.items() if label == LEGACY_HOST_PROCESS]
    if not pids or "" not in kt.cats:
        return
    _recategorise(kt, (kt.cat == kt.cats.index("")) & np.isin(kt.pid, pids), "cpu_op")


def _recategorise(kt: KinetoTrace, rows: np.ndarray, cat: str) -> None:
    """The events ``rows`` (bool per X event) given the category ``cat`` (in place; added to the trace's categories
    where it has none), the category column widened first where it is too narrow for one more name."""
    if not rows.any():
        return
    if cat not in kt.cats:
        kt.cats.append(cat)
    kt.cat = kt.cat.astype(np.int32, copy=True) if kt.cat.dtype.itemsize < 4 else kt.cat
    kt.cat[rows] = kt.cats.index(cat)


def _old_user_scopes(kt: KinetoTrace) -> None:
    """The old schema's ``record_function`` scopes read as ``user_annotation`` (in place), as PyTorch 1.11 on writes
    them: before it every scope was an op (``Operator``; 1.10's ``cpu_op`` beside ``Runtime``), told apart by its name
    alone (``frameworks.pytorch.is_scope_name``).  Why: read as ops, a PyTorch 1.8-1.10 loop's
    ``record_function("train_step")`` ranges were no step ranges -- the steps fell to its repeated spans, and of a
    4-rank job pausing between steps 2 were read where 14 ran (issue #37, class 2)."""
    if not any(c in OLD_CATS for c in kt.cats):
        return
    ops = [i for i, c in enumerate(kt.cats) if c in ("Operator", "cpu_op")]
    scopes = [i for i, n in enumerate(kt.names) if pytorch.is_scope_name(n)]
    if not ops or not scopes:
        return
    rows = np.isin(kt.cat, np.asarray(ops, dtype=kt.cat.dtype)) & np.isin(kt.name, np.asarray(scopes))
    _recategorise(kt, rows, "user_annotation")


def _cat_mask(kt: KinetoTrace, cats: tuple[str, ...]) -> np.ndarray:
    """Bool per X event: its category is one of ``cats``."""
    ids = [i for i, c in enumerate(kt.cats) if c in cats]
    return np.isin(kt.cat, np.asarray(ids, dtype=kt.cat.dtype)) if ids else np.zeros(kt.cat.shape, dtype=bool)


def to_trace(kt: KinetoTrace, host: str, path: str, size: int) -> Trace:
    """The trace of a parsed Kineto file."""
    producer = _producer(kt)
    _legacy_host_ops(kt)
    _old_user_scopes(kt)
    vendor = _file_vendor(kt)  # the legacy list's ops read as ops first (its ``aten::cudnn_convolution``)
    if vendor:
        producer["gpu_vendor"] = vendor
    unnamed = _unnamed_gpu(vendor)
    kt.cats = [OLD_CATS.get(c, PLUGIN_RUNTIME_CATS.get(c, c)) for c in kt.cats]
    process_scoped_ids(kt)  # one file of several processes' ids (a fused job's ranks): each op found in its own
    is_host = _cat_mask(kt, HOST_CATS)
    is_dev = _cat_mask(kt, DEVICE_CATS)
    used = is_host | is_dev
    _recorded_something(kt, used, path)
    origin = int(kt.ts_ns[used].min()) if used.any() else 0
    start_ps = (kt.ts_ns - origin) * 1000
    end_ps = _close_open_annotations(kt, start_ps, start_ps + np.maximum(kt.dur_ns, 0) * 1000, origin, used)
    host_rows = np.flatnonzero(is_host)
    h, line_pairs, host_order = _host_events(kt, host_rows, start_ps, end_ps)
    line_pids = line_pairs[:, 0]
    launch_ext = _launch_external_ids(kt)
    op_of_ext = _op_names_by_external_id(kt)
    devs = _device_events(kt, np.flatnonzero(is_dev), start_ps, end_ps, launch_ext, op_of_ext, unnamed, _op_tiles(kt))
    span = (int(start_ps[used].min()), int(end_ps[used].max())) if used.any() else None
    memory = _memory_events(kt, origin, h, line_pairs, host_order, [d.gpu for d in devs])
    return Trace(
        format="kineto", host=host, path=path, size_bytes=size, h=h, devices=devs, num_events=int(kt.n_events),
        span_ps=span, capture_ms=_capture_ms(kt), capture_start_ps=_capture_start_ps(kt, origin), viewer_zero_ps=_viewer_zero_ps(kt, origin), time_base=_time_base(kt),
        clock_ns=_clock_ns(kt, origin),
        host_steps=_profiler_steps(kt, h), allocator=_allocator(kt),
        annotations=np.flatnonzero(_cat_mask(kt, ("user_annotation",))[host_order]),
        **_rank_step_lines(kt, devs, start_ps, end_ps),
        gpu_host_lines={g: np.flatnonzero(np.isin(line_pids, pids)) for g, pids in kt.gpu_pids.items()},
        metadata_keys=frozenset(kt.meta), xla_evidence=_compile_evidence(kt, h, devs),
        problems=list(kt.problems),  # a file cut off or malformed; GPU records the profiler lost are job.kind's
        **_collective_messages(kt, host_order), h2d_non_blocking=_h2d_non_blocking(kt, is_dev),
        world_size=_world_size(kt), gpu_ranks=_gpu_ranks(kt, devs), idle_ranks=dict(kt.idle_ranks),
        **_flop_ops(kt, h, host_order),
        producer=producer, spans=_python_spans(kt, start_ps, end_ps, line_pairs),
        memory=memory, memory_devices=_memory_devices(kt, memory, devs, unnamed),
        unread_devices=_unread_devices(kt, is_host | is_dev),
        **_profiler_overhead(kt, start_ps, end_ps),
    )


#: Kineto's category for CUPTI's overhead records (``CUpti_ActivityOverhead``).
_OVERHEAD_CAT = "overhead"
#: The kinds of them that are the profiler's own work, as Kineto names them.  The others in that category are not:
#: ``Command Buffer Full`` is the launch queue full behind a busy GPU, ``Lazy Function Loading`` / ``Runtime Triggered
#: Module Loading`` / ``Driver Compiler`` are the program's own one-time costs (``h200_memory`` keeps both kinds).
_PROFILER_OWN = ("Activity Buffer Request", "Buffer Flush", "Instrumentation", "Resource")


def _profiler_overhead(kt: KinetoTrace, start_ps: np.ndarray, end_ps: np.ndarray) -> dict[str, Any]:
    """The profiler's own host work (``Trace.profiler_overhead``), sorted by start, and after a merge of ranks each
    GPU's share of it (``profiler_overhead_gpus``); nothing where the file has none.

    Why: Kineto writes it on a thread of its own (pid -1), not on the program's, so no host event shows that the
    program's launch waited for it -- yet the launch did (TraceLens' B300 MoE benchmarks: a 0.45 ms buffer request
    inside the first of three 0.2 ms iterations, the iteration's first launch starting as it ends)."""
    rows = np.flatnonzero(_cat_mask(kt, (_OVERHEAD_CAT,)))
    own = [i for i, n in enumerate(kt.names) if n in _PROFILER_OWN]
    rows = rows[np.isin(kt.name[rows], np.asarray(own, dtype=kt.name.dtype))] if own else rows[:0]
    if not rows.size:
        return {}
    rows = rows[np.argsort(start_ps[rows], kind="stable")]
    return {"profiler_overhead": (start_ps[rows].astype(np.int64), end_ps[rows].astype(np.int64)),
            "profiler_overhead_gpus": {g: np.flatnonzero((rows >= a) & (rows < b)) for g, (a, b) in kt.gpu_rows.items()}}


def _recorded_something(kt: KinetoTrace, used: np.ndarray, path: str) -> None:
    """Raise ``KinetoReadError`` where the profiler recorded nothing but its own window: no op, annotation, runtime
    call, kernel, copy, Python span or allocation -- only ``PyTorch Profiler (0)`` (``Op count: 0``) and its
    iteration marks.  The profiled code ran no PyTorch work there (a model of another library, or code outside the
    ``with profile()`` block), so nothing can be said of its job: an error, never "no GPU work" (a Windows capture of
    an XGBoost run, MLOps-Team-Spring-2024/Diabetes-Predictor: 1.22 s, four events, all the profiler's own)."""
    marks = _step_marks(kt, used)
    if (used & ~marks).any() or (kt.mem is not None and kt.mem.ts_ns.size) or _cat_mask(kt, ("python_function",)).any():
        return
    own = _cat_mask(kt, (_TRACE_CAT,))
    if not marks.any():
        _another_tools_events(kt, own, path)
    window = (f" ({int(kt.dur_ns[own].max()) / 1e6:,.1f} ms, `{kt.names[int(kt.name[own][0])]}`)"
              if own.any() else "")
    raise KinetoReadError(path, nothing_recorded(window, _marks_words(kt, marks)))


def _step_marks(kt: KinetoTrace, used: np.ndarray) -> np.ndarray:
    """Bool per X event: a used event that is the profiler's own step mark (``prof.step()``'s ``ProfilerStep#N``,
    ``frameworks.pytorch.PROFILER_STEP``).  Why: the mark is the profiler's, not the program's work -- a window of
    marks and nothing else recorded no more of the job than an empty one, and read as work it was "the host made no
    GPU runtime call: the work ran on the CPU ... move the model to the GPU" (exit 0), where the empty window is
    "nothing recorded" (exit 2): one kind of window, two readings and two codes (h37-window69)."""
    ids = [i for i, n in enumerate(kt.names) if pytorch.PROFILER_STEP.match(n)]
    if not ids:
        return np.zeros(used.shape, dtype=bool)
    return used & np.isin(kt.name, np.asarray(ids, dtype=kt.name.dtype))


def _marks_words(kt: KinetoTrace, marks: np.ndarray) -> str:
    """What the window holds besides nothing, in words: " but its own step marks (3, `ProfilerStep#10` to
    `ProfilerStep#12`)"; "" without marks."""
    if not marks.any():
        return ""
    nums = sorted({pytorch.step_number(kt.names[int(i)]) for i in kt.name[marks]})
    span = f"`ProfilerStep#{nums[0]}`" + (f" to `ProfilerStep#{nums[-1]}`" if len(nums) > 1 else "")
    return (f" but the profiler's own step marks ({int(marks.sum()):,}, {span}): prof.step() was called, and no "
            "PyTorch op of the profiled thread ran between its calls")


def _another_tools_events(kt: KinetoTrace, own: np.ndarray, path: str) -> None:
    """Raise ``KinetoReadError`` where the file's timed events are all of categories no PyTorch profiler writes and
    the profiler's own window is absent: another tool's Chrome trace that borrowed Kineto's ``"schemaVersion"`` key
    (survey h37-survey21: 99change/Triton_insrt's PTX-instrumented Triton kernel, 9,600 per-warp spans named by source
    line, ``Line 21`` ... ``Line 60``).  "Nothing recorded ... the code ran no PyTorch work" would blame the program
    for a file the profiler never wrote; the file is the wrong kind, and its own categories say so."""
    if own.any() or not kt.cat.size:
        return
    counts = np.bincount(kt.cat.astype(np.int64), minlength=len(kt.cats))
    named = [kt.cats[i] for i in np.argsort(-counts, kind="stable") if counts[i] and kt.cats[i]]
    if not named:
        return
    shown = ", ".join(f"`{c}`" for c in named[:4]) + (f" and {len(named) - 4} more" if len(named) > 4 else "")
    raise KinetoReadError(path, f"a trace, but not PyTorch's: its {int(kt.cat.size):,} timed events are of "
                                f"categories the PyTorch profiler never writes ({shown}) and it holds no profiler "
                                "window (`PyTorch Profiler (0)`) -- another tool's Chrome trace with Kineto's "
                                "\"schemaVersion\" key. Profile the job with torch.profiler (export_chrome_trace or "
                                "tensorboard_trace_handler), Nsight Systems (nsys export --type sqlite) or "
                                "JAX/TensorFlow's profiler")


#: How Kineto names a device's process: "GPU 0", and for other accelerators their own word ("MTIA 9").
_DEVICE_PROCESS = re.compile(r"^([A-Za-z][A-Za-z0-9_]*) (\d+)$")


def _unread_devices(kt: KinetoTrace, read: np.ndarray) -> tuple[str, ...]:
    """Accelerators other than GPUs whose own activity the trace holds (``Trace.unread_devices``): a device process
    ("MTIA 9") with events of categories no stage reads (``mtia_ccp_events``), named with the model
    ``deviceProperties`` gives its id ("MTIA 17 (ARTEMIS)")."""
    devs = [pid for pid, n in kt.process_names.items()
            if (m := _DEVICE_PROCESS.match(n.strip())) and m.group(1).upper() not in ("GPU", "CPU")]
    if not devs:
        return ()
    pids = np.asarray(devs, np.int64)
    active = np.unique(kt.pid[~read & np.isin(kt.pid, pids)]).tolist()
    props = kt.meta.get("deviceProperties")
    models = {p["id"]: p["name"].strip() for p in props if isinstance(p, dict) and type(p.get("id")) is int
              and isinstance(p.get("name"), str) and p["name"].strip()} if isinstance(props, list) else {}
    return tuple(f"{kt.process_names[pid].strip()}" + (f" ({models[pid]})" if pid in models else "") for pid in active)


def _python_spans(kt: KinetoTrace, start_ps: np.ndarray, end_ps: np.ndarray, line_pairs: np.ndarray) -> Spans | None:
    """The ``python_function`` events (``with_stack=True``) as :class:`Spans` on the host events' lines
    (``line_pairs``: the (pid, tid) of each)."""
    rows = np.flatnonzero(_cat_mask(kt, ("python_function",)))
    if not rows.size:
        return None
    upairs, inv = unique_pairs(kt.pid[rows], kt.tid[rows])
    by_thread = {(int(p), int(t)): i for i, (p, t) in enumerate(line_pairs)}
    line_of = np.array([by_thread.get((int(p), int(t)), -1) for p, t in upairs], dtype=np.int32)
    order = np.argsort(start_ps[rows], kind="stable")
    rows, inv = rows[order], inv.reshape(-1)[order]
    return Spans(start=start_ps[rows], end=end_ps[rows], name=kt.name[rows].astype(np.int32), line=line_of[inv])


def _producer(kt: KinetoTrace) -> dict[str, str]:
    """What the file says of the PyTorch that wrote it (``Trace.producer``), before the old categories are renamed.

    The Kineto header names no PyTorch version; some writers add one (TraceLens' ``metadata.torch_env_info``), and the
    categories date the schema: ``Runtime`` is PyTorch 1.8-1.10's name (``cuda_runtime`` 1.11's on: pytorch/kineto
    #68329, 2021-11-18), and ``Operator`` became ``cpu_op`` within that range, in 1.10 (#59360, 2021-06-08): ``cpu_op``
    beside ``Runtime`` is PyTorch 1.10's (h37-survey70: misskies/faceipr-pytorch, for-the-juan/Useprofile).
    :func:`to_trace` adds ``gpu_vendor`` (:func:`_file_vendor`: the file's vendor besides its GPUs' names, ``unknown``
    where nothing names one) -- what a window with no GPU record is told in (``job.kind``)."""
    out: dict[str, str] = {}
    if any(c in OLD_CATS for c in kt.cats):
        out["schema"] = "kineto<1.11"
    info = _first_info(kt)
    backend = info.get("backend") if isinstance(info, dict) else None
    if isinstance(backend, str) and backend.strip():  # the process group's backend (nccl, gloo ...)
        out["dist_backend"] = backend.strip()[:40]
    counted = int(_cat_mask(kt, (COUNTER_CAT,)).sum())
    if counted:  # the kernels were measured by hardware counters, not timed: no GPU timeline, and no lost records
        out["counter_ranges"] = str(counted)
    out.update(_records_loss(kt.meta))
    out.update(_legacy_profiler(kt))
    out.update(_synced_unrecorded(kt))
    out.update(_cuda_unrecorded(kt))
    out.update(_backend_memory(kt))
    seen = _visible_gpus(kt.meta.get("deviceProperties"))
    if seen:  # the GPUs the profiled process saw: a window without GPU work then had one to use
        out["visible_gpus"] = seen
    meta = kt.meta.get("metadata")
    if isinstance(meta, dict):
        env = meta.get("torch_env_info") or (meta.get("system") or {}).get("torch_env_info")
        version = env.get("torch_version") if isinstance(env, dict) else None
        prof = meta.get("profiler")
        grad = prof.get("grad_mode") if isinstance(prof, dict) else None
        if isinstance(version, str) and version[:1].isdigit():
            out["torch_version"] = version[:40]
        if isinstance(grad, str) and grad:
            out["grad_mode"] = grad[:40]
    return out


def _backend_memory(kt: KinetoTrace) -> dict[str, str]:
    """``{"backend_memory": "mps", "backend_memory_events": "N"}`` where the allocator's ``[memory]`` events are the MPS
    backend's (``Device Type`` :data:`MPS_DEVICE_TYPE`); ``{}`` otherwise.  Why: torch.profiler records no Metal GPU work,
    so on an Apple GPU the allocator's own events are what the file says of the device the job ran on (``job.kind``)."""
    mem = kt.mem
    n = int((mem.dtype == MPS_DEVICE_TYPE).sum()) if mem is not None and len(mem) else 0
    return {"backend_memory": "mps", "backend_memory_events": str(n)} if n else {}


def _visible_gpus(props: object) -> str:
    """The GPUs ``deviceProperties`` lists, in words ("NVIDIA A100 80GB PCIe", "8 x Tesla V100-SXM2-32GB"); "" where it
    lists none.  Kineto fills it in the profiled process from the CUDA (or HIP) runtime's own device count, so a GPU
    listed there is one the program could use, whether or not its work went there."""
    names = [str(p["name"]).strip() for p in props if isinstance(p, dict) and isinstance(p.get("name"), str)] \
        if isinstance(props, list) else []
    return gpus_in_words([n[:80] for n in names if n])


#: Kineto's own log lines that say it lost GPU records (libkineto ``CuptiActivityApi.cpp``, ``GenericActivityProfiler.cpp``):
#: its CUPTI buffers reached their limit and it stopped tracing the GPU, and CUPTI's count of the records it dropped.
_BUFFER_LIMIT = re.compile(r"Exceeded max GPU buffer count \((\d+)(?:\s*>=?\s*(\d+))?\)")
_STOPPED = re.compile(r"stopped by GPU profiler\. \(Buffer size configured is (\d+)\s*MB\)")
_DROPPED = re.compile(r"Dropped (\d+) activity records")


def _records_loss(meta: dict) -> dict[str, str]:
    """What Kineto's own log, kept in the trace (the top-level ``WARNING`` / ``ERROR`` lists a non-glog build writes,
    Kineto 2021-11 to 2026-07), says of GPU records it lost, as ``Trace.producer`` facts read only where the records
    show a loss (``job.kind.lost_launches``): ``records_cause`` and ``records_fix`` (the key of
    :data:`formats.kineto.WINDOW_FIXES`) where it hit its CUPTI buffer limit and stopped tracing the GPU;
    ``records_dropped`` (and ``records_dropped_count``) where it counted records CUPTI dropped."""
    lines = [str(v) for key in ("WARNING", "ERROR") if isinstance(meta.get(key), list) for v in meta[key][:256]]
    out: dict[str, str] = {}
    for line in lines:
        limit, stopped, dropped = _BUFFER_LIMIT.search(line), _STOPPED.search(line), _DROPPED.search(line)
        if (limit or stopped) and "records_cause" not in out:
            size = (f" of {stopped.group(1)} MB" if stopped else
                    f" of {limit.group(2) or limit.group(1)} buffers" if limit else "")
            out["records_cause"] = (f"Kineto's CUPTI activity buffers reached their limit{size} and it stopped "
                                    "tracing the GPU (its own log, kept in the trace)")
            out["records_fix"] = "lost_records_buffers"
        if dropped:
            n = int(out.get("records_dropped_count", "0")) + int(dropped.group(1))
            out["records_dropped_count"] = str(n)
            out["records_dropped"] = (f"Kineto's own log, kept in the trace, counts {n:,} activity "
                                      f"{'record' if n == 1 else 'records'} CUPTI dropped")
    return out


def _synced_unrecorded(kt: KinetoTrace) -> dict[str, str]:
    """Why a trace whose CUDA calls launched kernels holds no GPU record at all, where the program itself waited for
    the GPU after its last launch: ``unrecorded_cause`` (in words) and ``unrecorded_fix`` (``"synced_unrecorded"``, a
    key of :data:`formats.kineto.WINDOW_FIXES`); {} for any other trace.

    Why: "let the GPU finish its work before the profiler stops" is the fix for kernels still running at the stop --
    but a ``cudaDeviceSynchronize`` that begins after the last launch returns only once every kernel has run, inside
    the window, so the profiler's GPU tracer (CUPTI) recorded the calls and none of their kernels: the program already
    does what that fix asks (an A40's analysis call, a laptop RTX 3060's transformer forward with Triton attention on a
    CUDA 12.1 build under a 13.0 driver, h37-survey73).  The waits for the whole device are every vendor's
    (``devices.DEVICE_SYNC_CALLS``: ``hipDeviceSynchronize`` on ROCm), and the cause is put in the runtime's own
    words (HIP calls, roctracer), never CUDA's (h37-amdmps35)."""
    if _cat_mask(kt, DEVICE_CATS + ("Kernel", "Memcpy", "Memset")).any():
        return {}
    calls = np.flatnonzero(_cat_mask(kt, _LAUNCH_CATS + ("Runtime",)))
    if not calls.size:
        return {}
    names = np.asarray(kt.names, dtype=object)[kt.name[calls]]
    launch = np.fromiter(("Launch" in str(n) for n in names), bool, calls.size)
    sync = np.isin(names, devices.DEVICE_SYNC_CALLS)
    if not launch.any() or not sync.any():
        return {}
    last = int((kt.ts_ns[calls[launch]] + kt.dur_ns[calls[launch]]).max())
    after = calls[sync][kt.ts_ns[calls[sync]] >= last]
    if not after.size:
        return {}
    first = int(after[np.argmin(kt.ts_ns[after])])  # by time: a Kineto trace's rows are not in time order
    waited = int(kt.dur_ns[first]) / 1e6
    waiter = kt.names[int(kt.name[first])]
    vendor = devices.vendor_of_calls(names)
    versions = _cuda_versions(kt.meta) if vendor is devices.nvidia else ""
    cause = (f"the profiler's GPU tracer (CUPTI) recorded the {vendor.TERMS['runtime']} calls but none of their "
             f"kernels, though the program waited for the GPU after its last launch (`{waiter}`, {waited:.2f} ms, "
             f"before the profiler stopped), so every kernel ran inside the window{f' ({versions})' if versions else ''}")
    return {"unrecorded_cause": vendor.words(cause),
            "unrecorded_fix": "synced_unrecorded"}


#: Keys of the header torch.profiler's Kineto writes beside ``traceEvents`` (``schemaVersion`` from PyTorch 1.8.1 on,
#: ``deviceProperties`` where the build has CUDA or HIP): the file as the profiler wrote it, not events a tool kept.
_KINETO_HEADER = frozenset(("schemaVersion", "deviceProperties"))


def _cuda_unrecorded(kt: KinetoTrace) -> dict[str, str]:
    """Why a Kineto trace of host ops holds no GPU-side record of any kind -- no runtime or driver call, kernel, copy,
    fill or counter range: ``unrecorded_cause`` (in words), ``unrecorded_fix`` (``"cuda_unrecorded"``, a key of
    :data:`formats.kineto.WINDOW_FIXES`) and ``unrecorded_activity`` ("CUDA": the activity the profiler was not set to
    record); {} for any other trace, and for the legacy list (:func:`_legacy_profiler` says why it holds none).

    Why: torch.profiler records the CUDA runtime's calls and the GPU's work through one activity,
    ``ProfilerActivity.CUDA`` (CUPTI's callbacks and its activity records, on ROCm's build roctracer's); with
    ``activities=[ProfilerActivity.CPU]`` the trace holds the host's ops alone -- as it does where CUDA was asked for
    and CUPTI recorded nothing (XAheli/torch-profiler's H200 GEMM, ``wild/gemm_h200_cuda_unrecorded``: CPU and CUDA
    asked, CUPTI 24 under a 13.0 driver), which the file does not tell apart: the words name both, the fix both
    in order.  Records lost leave the calls behind
    (the launches with no kernel, :func:`_synced_unrecorded`, ``job.kind.lost_launches``); a trace without a single
    call was never recorded, and "lost ... let the GPU finish before the profiler stops" asked for a wait that records
    nothing (h37-probe42w's K3, h37-probe42c).  Only a file with the profiler's own header (:data:`_KINETO_HEADER`)
    is read so: a tool's copy without it (HTA's ``wild/gpu_events_stripped``, every GPU event removed) may have lost
    what the profiler recorded.  Asked only where the job shows GPU work (``job.kind``'s
    ``Kind.lost_gpu``): a CPU job's trace is the same file."""
    if LEGACY_HOST_PROCESS in set(kt.pid_labels.values()) or not _KINETO_HEADER.intersection(kt.meta):
        return {}  # no profiler's header (HTA's test data, its GPU events removed): it may have lost them
    gpu_side = DEVICE_CATS + _LAUNCH_CATS + ("Kernel", "Memcpy", "Memset", "Runtime", COUNTER_CAT)
    if _cat_mask(kt, gpu_side).any() or not _cat_mask(kt, ("cpu_op", "Operator")).any():
        return {}
    seen = _visible_gpus(kt.meta.get("deviceProperties"))
    # the runtime and tracer of the GPUs the header lists (ROCm's PyTorch lists its AMD GPUs there and traces HIP
    # through roctracer under the same ProfilerActivity.CUDA), else of the vendor the file shows otherwise
    # (:func:`_file_vendor`: its ops, header keys, backend), CUDA's only where one of those says NVIDIA: a file that
    # names no vendor was told "no CUDA call ... CUPTI" of a GPU nothing says is NVIDIA's (h37-vendor66)
    listed = devices.vendor_claimed(listed_gpu_models(seen)) if seen else None
    terms = devices.vendor_called(listed or _file_vendor(kt) or devices.UNKNOWN)
    runtime, tracer = terms.TERMS["runtime"], terms.TERMS["gpu_tracer"]
    versions = _cuda_versions(kt.meta) if terms is devices.nvidia else ""
    return {"unrecorded_cause": (f"the trace, as torch.profiler wrote it, holds no {runtime} call, kernel or copy at "
                                 "all -- only the host's ops"
                                 + (f", though its header lists the GPUs the process could use ({seen})" if seen else "")
                                 + ": ProfilerActivity.CUDA was not among the profiler's activities, or its GPU tracer"
                                 f"{f' ({tracer})' if tracer else ''} recorded nothing"
                                 f"{f' ({versions})' if versions else ''} -- a tracer that "
                                 "dropped its records keeps their launches, and this trace holds none"),
            "unrecorded_fix": "cuda_unrecorded", "unrecorded_activity": runtime}


def _cuda_versions(meta: dict) -> str:
    """The CUDA runtime and driver the header names, in words ("CUDA runtime 12.1, driver 13.0"); "" where it names
    neither (Kineto writes them from 2023 on, as ``major * 1000 + minor * 10``)."""
    said = []
    for key, what in (("cuda_runtime_version", "CUDA runtime"), ("cuda_driver_version", "driver")):
        v = meta.get(key)
        if isinstance(v, int) and not isinstance(v, bool) and 1000 <= v < 100000:
            said.append(f"{what} {v // 1000}.{v % 1000 // 10}")
    return ", ".join(said)


def _legacy_profiler(kt: KinetoTrace) -> dict[str, str]:
    """Why a trace in the legacy profiler's list form (host ops under ``"CPU functions"``) holds no GPU record, as
    ``Trace.producer`` facts: ``unrecorded_cause`` (in words) and ``unrecorded_fix`` (the key of
    :data:`formats.kineto.WINDOW_FIXES`); {} for any other trace.

    Why: the list is what ``torch.autograd.profiler`` wrote before Kineto, and what ``torch.profiler`` falls back to
    on a PyTorch build without Kineto (``USE_KINETO=0``): neither records a kernel, copy or runtime call, whatever
    activities the call asks for, so "profile again with CUDA activity recorded" repeats the call that made it (a DDP
    rank's ``torch.profiler.profile(activities=[CPU, CUDA], schedule=...)`` on a cluster's build, h37-survey61).  The
    file tells the calls apart: ``ProfilerStep#N`` marks are ``torch.profiler``'s ``prof.step()`` (PyTorch 1.8.1 on),
    so its build has no Kineto; ops timed under ``"CUDA functions"`` are the old profiler's ``use_cuda=True``; neither
    is the old profiler without it (or ``use_kineto=False``)."""
    labels = set(kt.pid_labels.values())
    if LEGACY_HOST_PROCESS not in labels:
        return {}
    if any(pytorch.PROFILER_STEP.match(n) for n in kt.names):
        return {"unrecorded_cause": ("torch.profiler wrote the legacy profiler's list of host ops (its prof.step() "
                                     "marks are in it), which it does only on a PyTorch build without Kineto "
                                     "(USE_KINETO=0), and without Kineto no profiler call records the GPU's kernels, "
                                     "copies or CUDA calls"),
                "unrecorded_fix": "no_kineto"}
    if LEGACY_CUDA_PROCESS in labels:
        return {"unrecorded_cause": ("it is torch.autograd.profiler's legacy list with use_cuda=True, which times each "
                                     "op with CUDA events but records no kernel, copy or CUDA call"),
                "unrecorded_fix": "legacy_profiler"}
    return {"unrecorded_cause": ("it is torch.autograd.profiler's legacy list (before Kineto, or use_kineto=False), "
                                 "which records the host's ops alone"),
            "unrecorded_fix": "legacy_profiler"}


def _gpu_ranks(kt: KinetoTrace, devs: list[DeviceEvents]) -> dict[int, int]:
    """GPU -> global rank: the merged ranks' own, or a single file's ``distributedInfo.rank`` for its one GPU."""
    if kt.gpu_ranks:
        return dict(kt.gpu_ranks)
    named = _ranks_of_gpu_processes(kt, devs)
    if named:
        return named
    info = kt.meta.get("distributedInfo")
    rank = info.get("rank") if isinstance(info, dict) else None
    gpus = [d.gpu for d in devs if len(d)]
    return {gpus[0]: rank} if type(rank) is int and rank >= 0 and len(gpus) == 1 else {}


def _ranks_of_gpu_processes(kt: KinetoTrace, devs: list[DeviceEvents]) -> dict[int, int]:
    """GPU -> the rank its own GPU process's name states (``RANK 3 - GPU``: ``ranks.stated_ranks``), or where no name
    says its ranges' ``args.rank`` (``ranks.tagged_ranks``), where several
    GPUs have work and each process names one rank; else {}.  Why: a fused file's ranks are read from the processes
    that launch on each GPU (``ranks.process_scoped_ids``); one filtered to its collectives keeps no launching process,
    and its four GPUs had no rank though each GPU process names its own (TraceLens' ``merged_nccl_only.json.gz``,
    h37-late67)."""
    gpus = [d.gpu for d in devs if len(d)]
    tagged = tagged_ranks(kt) if len(gpus) >= 2 else {}
    if len(gpus) < 2 or not (kt.process_names or tagged):
        return {}
    device = gpu_rows_device(kt)
    pids = {g: np.unique(kt.pid[device == g]).tolist() for g in gpus}
    return stated_ranks({g: [int(p) for p in v] for g, v in pids.items() if v}, kt.process_names, tagged) \
        if all(pids.values()) else {}


def _world_size(kt: KinetoTrace) -> int | None:
    """``distributedInfo.world_size`` (of the first rank, for merged ranks), None without one."""
    info = _first_info(kt)
    w = info.get("world_size") if isinstance(info, dict) else None
    return w if type(w) is int and w > 0 else None


def _first_info(kt: KinetoTrace) -> object:
    """``distributedInfo`` of a file, or of the first merged rank that states one: a rank whose file states none
    (its rank inferred, ``ranks.merge_ranks``) may come first."""
    info = kt.meta.get("distributedInfo")
    if isinstance(info, list):
        return next((i for i in info if isinstance(i, dict)), None)
    return info


def _collective_messages(kt: KinetoTrace, host_order: np.ndarray) -> dict[str, dict]:
    """``collective_messages`` (host event index -> (message bytes, group size)), ``collective_groups`` (host
    event index -> (process group label, sequence number)) and ``collective_members`` (host event index -> the group's
    global ranks) of the collective ops whose arguments say; ``copy_op_bytes`` (host event index -> the bytes it
    moves) of the copy ops whose shapes are recorded."""
    out: dict[str, dict] = {"collective_messages": {}, "collective_groups": {}, "collective_members": {},
                            "copy_op_bytes": {}}
    if not kt.op_args:
        return out
    index_of_row = _positions_of(host_order, kt.op_args)
    names = kt.names
    for row, args in kt.op_args.items():
        j = index_of_row.get(row)
        if j is None:
            continue
        if pytorch.is_copy_op(names[int(kt.name[row])]):  # a copy's own work: the bytes it moves
            moved = aten_flops.moved_bytes(args)
            if moved is not None:
                out["copy_op_bytes"][j] = moved
            continue
        msg = pytorch.collective_message(args)
        if msg is not None:
            out["collective_messages"][j] = msg
        group = pytorch.collective_group(args)
        if group != (None, None):
            out["collective_groups"][j] = group
        members = pytorch.collective_members(args)
        if members is not None:
            out["collective_members"][j] = members
    return out


def _positions_of(order: np.ndarray, rows: dict[int, Any]) -> dict[int, int]:
    """{row: its position in ``order``} for the file rows of ``rows`` that ``order`` holds (``order``: file rows, each
    once -- the host events' ``host_order``).  Why by a sort: a Python pass over every host event to find the few
    with arguments took 0.1 s of a 0.6 s analysis (torchrec_a100_stalls, h37-refactor66)."""
    if not rows or not order.size:
        return {}
    want = np.fromiter(rows, np.int64, len(rows))
    by_row = np.argsort(order, kind="stable")
    k = np.minimum(np.searchsorted(order[by_row], want), order.size - 1)
    hit = order[by_row[k]] == want
    return dict(zip(want[hit].tolist(), by_row[k[hit]].tolist()))


def _h2d_non_blocking(kt: KinetoTrace, is_dev: np.ndarray) -> tuple[int, int] | None:
    """``Trace.h2d_non_blocking``: of the copies to a GPU whose copy op records its inputs, how many that op called
    ``non_blocking=True``, and how many in all; None where none records them.  A copy's device record carries the
    ``External id`` of the op that made it (the innermost: ``aten::copy_``; ``aten::to`` / ``_to_copy`` read alike where
    the id names one), whose ``Concrete Inputs`` hold the flag;
    in merged ranks' files an id is looked up in its own file's rows (each rank numbers its ids from its own start)."""
    if not kt.op_args:
        return None
    names = list(kt.names)
    part = _file_of_row(kt)
    flag_of_ext: dict[tuple[int, int], bool] = {}
    for row, args in kt.op_args.items():
        name = names[int(kt.name[row])]
        if pytorch.is_copy_op(name) and kt.external_id[row] >= 0:
            flag = pytorch.copy_non_blocking(args, name)
            if flag is not None:
                flag_of_ext[(int(part[row]), int(kt.external_id[row]))] = flag
    h2d = [i for i, n in enumerate(names) if devices.copy_direction(n) == "h2d"]
    if not flag_of_ext or not h2d:
        return None
    dev = np.flatnonzero(is_dev & (kt.external_id >= 0) & np.isin(kt.name, h2d))
    flags = [f for f in map(flag_of_ext.get, zip(part[dev].tolist(), kt.external_id[dev].tolist())) if f is not None]
    return (sum(flags), len(flags)) if flags else None


def _file_of_row(kt: KinetoTrace) -> np.ndarray:
    """Per row, the start of the merged rank's file it came from (``gpu_rows``); 0 for every row of one file."""
    part = np.zeros(len(kt.name), np.int64)
    for first, past in sorted(set(kt.gpu_rows.values())):
        part[first:past] = first
    return part


def _flop_ops(kt: KinetoTrace, h: HostEvents, host_order: np.ndarray) -> dict:
    """``flop_ops`` and ``flops_note`` of the trace: the outermost matmul/conv/attention op calls whose recorded
    shapes give their FLOPs (:mod:`~tb_gpu_advisor.frameworks.aten_flops`).

    Host events are in (thread, start, longer first) order, so an op's enclosing ops come before it: one pass
    keeps, per thread, the end of the last counted op, and an op starting before that end is inside it.  An op
    whose shapes do not give FLOPs covers nothing, so the ops inside it count instead."""
    is_flop = np.fromiter((aten_flops.is_flop_op(n) for n in h.names), bool, len(h.names))
    cand = np.flatnonzero(is_flop[h.name]) if len(h) else np.zeros(0, np.int64)
    if not cand.size:
        return {"flop_ops": None, "flops_note": NO_FLOP_OPS_NOTE}
    rows = host_order[cand].tolist()
    line, start, end = h.line[cand], h.start[cand], h.end[cand]
    ws = list(map(kt.op_work.get, rows))
    valid = np.fromiter(map(is_not, ws, repeat(None)), bool, len(ws))
    outside = _outside_counted(line, start, end, valid)
    if outside is None:  # the ops of a line overlap in a way the columns cannot follow: op by op
        kept, works, unreadable = _counted_op_by_op(kt, h, cand, rows)
    else:
        counted = outside & valid
        kept = cand[counted].tolist()
        works = list(compress(ws, counted.tolist()))
        unreadable = {}
        recorded = np.fromiter(map(kt.op_work.__contains__, rows), bool, len(rows))
        for j in cand[outside & ~valid & recorded].tolist():  # shapes recorded that give no number, in order
            name = h.names[int(h.name[j])]
            unreadable[name] = unreadable.get(name, 0) + 1
    why = _unreadable_note(unreadable)
    if not works:
        return {"flop_ops": None, "flops_note": why or _NO_SHAPES}
    fo = FlopOps(source="trace shapes", flops=np.array([w.flops for w in works]),
                 bytes=np.array([w.bytes for w in works]), precision=np.array([w.precision for w in works], np.int8),
                 kind=np.array([w.kind for w in works], np.int8), label=[w.label for w in works],
                 host_idx=np.array(kept, np.int64), out_bytes=np.array([w.out_bytes for w in works]))
    unread = len(rows) - sum(map(kt.op_work.__contains__, rows))
    note = why or (None if not unread else (f"{unread} of {cand.size} matmul/convolution/attention op calls carry no "
                                             "shapes; the FLOPs count the others"))
    return {"flop_ops": fo, "flops_note": note}


def _counted_op_by_op(kt: KinetoTrace, h: HostEvents, cand: np.ndarray,
                      rows: list[int]) -> tuple[list[int], list[Any], dict[str, int]]:
    """The FLOP ops :func:`_flop_ops` counts (host indexes, their work) and the names of those whose shapes give no
    number, in one pass over the candidates in host order: per thread, the end of the last counted op; an op starting
    before it is inside it.  The reference :func:`_outside_counted` must agree with."""
    works, kept = [], []
    line_end: dict[int, int] = {}
    unreadable: dict[str, int] = {}
    for j, row, ln, s, e in zip(cand.tolist(), rows, h.line[cand].tolist(), h.start[cand].tolist(), h.end[cand].tolist()):
        if s < line_end.get(ln, -1):
            continue  # inside a counted op of its thread
        w = kt.op_work.get(row)
        if w is not None:
            works.append(w)
            kept.append(j)
            line_end[ln] = e
        elif row in kt.op_work:  # shapes recorded, but they give no number
            name = h.names[int(h.name[j])]
            unreadable[name] = unreadable.get(name, 0) + 1
    return kept, works, unreadable


def _outside_counted(line: np.ndarray, start: np.ndarray, end: np.ndarray, valid: np.ndarray) -> np.ndarray | None:
    """Per candidate (host order: by line, then start): whether it starts at or after the end of the last op counted
    before it on its line, as :func:`_counted_op_by_op` decides it (``valid``: the op gives a number, so it is counted
    where it is outside) -- with whole-column operations, or None where they cannot say.

    Why it can: were every counted end the largest valid end so far on its line, "the end of the last counted op"
    would be the running maximum of the valid ends, one ``maximum.accumulate``.  That holds, by induction along the
    line, exactly when each valid op that is counted ends at or after that maximum and each valid op inside ends at or
    before it (well-nested ops, what a profiler writes); both are checked, and otherwise the caller goes op by op."""
    n = len(line)
    if n == 0:
        return np.zeros(0, bool)
    line = line.astype(np.int64)
    if (line[1:] < line[:-1]).any():
        return None
    seg = np.zeros(n, np.int64)
    np.cumsum(line[1:] != line[:-1], out=seg[1:])
    if not valid.any():
        return start >= -1
    lo, hi = int(end[valid].min()), int(end[valid].max())
    width = hi - lo + 2  # a valid end -> 1 .. width-1 within its line's block; 0: none
    if width > (1 << 62) // (int(seg[-1]) + 1):
        return None
    key = seg * width
    key[valid] += end[valid].astype(np.int64) - (lo - 1)
    top = np.maximum.accumulate(key)
    upto = np.where(top // width == seg, top % width, 0)  # the largest valid end so far on the line, inclusive
    before = np.zeros(n, np.int64)
    before[1:] = np.where(seg[1:] == seg[:-1], upto[:-1], 0)
    last = np.where(before > 0, before + (lo - 1), -1)
    outside = start >= last
    holds = np.where(outside, end >= last, (end <= last) & (before > 0))
    return outside if holds[valid].all() else None


def _unreadable_note(unreadable: dict[str, int]) -> str | None:
    """Why some recorded shapes give no FLOPs: in practice convolutions without strides (PyTorch < 1.10 writes
    no ``Concrete Inputs``), whose output size -- a stride-2 layer has a quarter of the positions -- is unknown."""
    if not unreadable:
        return None
    top = sorted(unreadable.items(), key=lambda kv: -kv[1])[:3]
    names = ", ".join(f"{n} ({c} calls)" for n, c in top)
    conv = any("conv" in n for n in unreadable)
    return (f"shapes of {names} do not give FLOPs" + (": the trace records no convolution strides (PyTorch 1.10 and "
            "later write them with record_shapes=True)" if conv else ""))


#: What a trace without shapes is missing, and how to record it.
_NO_SHAPES = ("the matmul/convolution ops carry no shapes: profile with "
              "`torch.profiler.profile(record_shapes=True)` to get FLOPs and MFU from the trace")


def _host_events(kt: KinetoTrace, idx: np.ndarray, start_ps: np.ndarray,
                 end_ps: np.ndarray) -> tuple[HostEvents, np.ndarray, np.ndarray]:
    """Host events by (thread, start), outer events before the inner ones they enclose (longer first on a tie);
    the (pid, tid) of each host line; and the file row of each host event."""
    upairs, line = _unique_pairs_by_runs(kt.pid[idx], kt.tid[idx])
    # narrowed before the sort: a stable sort of 1-2 byte keys is a radix sort (1 GB trace: 0.045 -> 0.009 s)
    line = line.astype(int_dtype(0, len(upairs), np.int16), copy=False)
    order = _host_order(line, start_ps[idx], end_ps[idx])
    idx, line = idx[order], line[order]
    launch = _cat_mask(kt, _LAUNCH_CATS)[idx]
    corr = np.where(launch, kt.correlation[idx], -1)
    minus1 = np.broadcast_to(np.int8(-1), idx.shape)
    h = HostEvents(
        start=start_ps[idx], end=end_ps[idx], name=kt.name[idx].astype(np.int32), line=line,
        corr=absent_as_broadcast(narrowest(corr, np.int32)), group_id=minus1, step_num=minus1, iter_num=minus1, root=minus1,
        is_eager=minus1, names=kt.names, line_names=[_thread_name(kt, int(p), int(t)) for p, t in upairs],
    )
    return h, upairs, idx


def _host_order(line: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """``np.lexsort((-(end - start), start, line))``: by line, start, longer first.  A trace's starts are nearly in
    order and rarely equal, so two stable sorts do it -- by start (a few long runs: near linear), then by line --
    and the duration decides nothing unless two starts are equal (then the lexsort runs): 0.17 -> 0.01 s on a 1 GB
    trace's 2.2 M host events."""
    by_start = np.argsort(start, kind="stable")
    ordered = start[by_start]
    if (ordered[1:] == ordered[:-1]).any():
        return np.lexsort((-(end - start), start, line))
    return by_start[np.argsort(line[by_start], kind="stable")]


def _unique_pairs_by_runs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`unique_pairs` of the host events' (pid, tid), through their runs: a thread's events come in long runs
    in the file, so its few distinct pairs are found among the runs' first rows (a sort of the runs, not of millions
    of rows: 0.29 -> 0.03 s on a 1 GB trace's 2.2 M host events); any order of the rows gives the same result."""
    if a.size < 2:
        return unique_pairs(a, b)
    change = np.flatnonzero((a[1:] != a[:-1]) | (b[1:] != b[:-1]))
    if change.size > a.size // 8:
        return unique_pairs(a, b)  # no long runs: the plain sort
    starts = np.concatenate(([0], change + 1))
    pairs, run_inverse = unique_pairs(a[starts], b[starts])
    return pairs, np.repeat(run_inverse, np.diff(starts, append=a.size))


def _thread_name(kt: KinetoTrace, pid: int, tid: int) -> str:
    name = kt.thread_names.get((pid, tid))
    return name if name else f"thread {tid}"


def _launch_external_ids(kt: KinetoTrace) -> IdTable:
    """Correlation id -> ``External id`` of the runtime/driver call that launched it (its ATen op)."""
    m = _cat_mask(kt, _LAUNCH_CATS) & (kt.correlation >= 0) & (kt.external_id >= 0)
    return IdTable(kt.correlation[m], kt.external_id[m], -1)


def _op_names_by_external_id(kt: KinetoTrace) -> IdTable:
    """``External id`` -> name id of the ATen op (or annotation) that carries it."""
    m = _cat_mask(kt, _OP_CATS) & (kt.external_id >= 0)
    return IdTable(kt.external_id[m], kt.name[m].astype(np.int64), -1)


def _op_tiles(kt: KinetoTrace) -> tuple[IdTable, list[str]]:
    """``External id`` -> string id of the sizes its op's GEMM is tiled over (``aten_flops.OpWork.tile_dims``: a
    matmul's M, K, N, a convolution's channels), as ``"[C_in,C_out]"`` text, and those texts: a kernel's shapes as
    the matrix-unit checks read them (``KernelStat.dims``).  Why: ``record_shapes`` writes the shapes on the op, not
    the kernel; without them a 16-bit convolution off the matrix units was told to pad channels it had aligned
    already (amd/HPCTrainingExamples' MI300X replay of a 512->128 convolution's backward, h37-huntk66)."""
    rows = [r for r, w in kt.op_work.items() if w is not None and w.tile_dims and kt.external_id[r] >= 0]
    if not rows:
        return IdTable(np.zeros(0, np.int64), np.zeros(0, np.int64), -1), []
    texts = ["[" + ",".join(map(str, kt.op_work[r].tile_dims)) + "]" for r in rows]
    strings = list(dict.fromkeys(texts))
    sid = {t: i for i, t in enumerate(strings)}
    return IdTable(kt.external_id[np.array(rows, np.int64)], np.array([sid[t] for t in texts], np.int64), -1), strings


def _device_ids(kt: KinetoTrace, idx: np.ndarray) -> np.ndarray:
    """The device of each device event: ``args.device``, else its pid (Kineto writes the device as the pid)."""
    dev = kt.device[idx]
    return np.where(dev >= 0, dev, kt.pid[idx])


def _device_events(kt: KinetoTrace, idx: np.ndarray, start_ps: np.ndarray, end_ps: np.ndarray, launch_ext: IdTable,
                   op_of_ext: IdTable, unnamed: str | None = None,
                   tiles: tuple[IdTable, list[str]] | None = None) -> list[DeviceEvents]:
    """Each device's events; ``unnamed``: the name of a GPU ``deviceProperties`` does not name (:func:`_unnamed_gpu`)."""
    dev = _device_ids(kt, idx)
    props = _device_properties(kt, unnamed)
    call_by_corr = _copy_call_by_correlation(kt)
    graph_of_corr = _graph_launches(kt)
    items_of_corr = _work_item_launches(kt)
    out = []
    for g in np.unique(dev).tolist():
        if g < 0:
            continue
        sel = idx[dev == g]
        sel = sel[np.argsort(start_ps[sel], kind="stable")]
        out.append(_one_device(kt, int(g), sel, start_ps, end_ps, launch_ext, op_of_ext, call_by_corr,
                               props.get(int(g), _only_model(props) or (DeviceInfo(name=unnamed) if unnamed else None)),
                               graph_of_corr, items_of_corr, tiles))
    return out


#: Kineto's device categories -> what each records an event as (``devices.recorded_kinds``).
_RECORDED = {"kernel": devices.RECORDED_KERNEL, "gpu_memcpy": devices.RECORDED_TRANSFER, "gpu_memset": devices.RECORDED_FILL}


def _recorded(kt: KinetoTrace, sel: np.ndarray) -> np.ndarray:
    """Per device event of ``sel``: what its category records it as (a kernel, a copy, a fill), not what its name
    says -- a kernel named ``Memset...`` is still a kernel (``devices.recorded_kinds``)."""
    by_cat = np.array([_RECORDED.get(c, devices.RECORDED_NAME_ONLY) for c in kt.cats] or [-1], np.int8)
    return by_cat[kt.cat[sel]] if sel.size else np.zeros(0, np.int8)


def _in_collective_ranges(kt: KinetoTrace, gpu: int, sel: np.ndarray, start_ps: np.ndarray,
                          op_name_id: np.ndarray) -> np.ndarray:
    """``op_name_id`` (per device event of ``sel``: the name id of the op that launched it, -1: none known) with each
    unknown one that starts inside a c10d range Kineto drew on the GPU (``gpu_user_annotation`` ``nccl:all_reduce``,
    ``nccl:broadcast``: ``pytorch.collective_backend_annotation``) given that range's name.

    Why: NCCL and RCCL run every collective as ``ncclDevKernel_Generic``, whose name says no type; the launching op
    says it, but a capture filtered to its collectives keeps no host (TraceLens' ``merged_nccl_only.json.gz``): its 84
    kernels were 84 calls of type "collective" beside 60 ``nccl:all_reduce`` and 24 ``nccl:broadcast`` GPU ranges
    drawn over them (h37-late67)."""
    miss = op_name_id < 0
    if not miss.any():
        return op_name_id
    # the GPU's ranges: on its device, or -- where they carry none (TraceFuse's) -- in its kernels' process
    rows = np.flatnonzero(_cat_mask(kt, ("gpu_user_annotation",))
                          & ((kt.device == gpu) | ((kt.device < 0) & np.isin(kt.pid, np.unique(kt.pid[sel])))))
    if not rows.size:
        return op_name_id
    named = np.fromiter((pytorch.collective_backend_annotation(kt.names[int(i)]) for i in kt.name[rows]), dtype=bool,
                        count=rows.size)
    rows = rows[named]
    if not rows.size:
        return op_name_id
    rows = rows[np.argsort(start_ps[rows], kind="stable")]
    rs = start_ps[rows].astype(np.int64)
    re = rs + np.maximum(kt.dur_ns[rows], 0).astype(np.int64) * 1000
    at = start_ps[sel].astype(np.int64)
    i = np.searchsorted(rs, at, side="right") - 1
    inside = miss & (i >= 0) & (at < re[np.clip(i, 0, None)])
    out = op_name_id.copy()
    out[inside] = kt.name[rows[i[inside]]]
    return out


def _one_device(kt: KinetoTrace, gpu: int, sel: np.ndarray, start_ps: np.ndarray, end_ps: np.ndarray, launch_ext: IdTable,
                op_of_ext: IdTable, call_by_corr: IdTable, info: DeviceInfo | None,
                graph_of_corr: IdTable, items_of_corr: IdTable | None = None,
                tiles: tuple[IdTable, list[str]] | None = None) -> DeviceEvents:
    uname, name = unique_inverse(kt.name[sel])
    names = [kt.names[int(i)] for i in uname]
    ustream, stream = unique_inverse(np.where(kt.stream[sel] >= 0, kt.stream[sel], kt.tid[sel]))
    corr = kt.correlation[sel]
    ext = kt.external_id[sel]
    ext = np.where(ext >= 0, ext, launch_ext.lookup(corr))
    op_name_id = _in_collective_ranges(kt, gpu, sel, start_ps, op_of_ext.lookup(ext))
    shape_sid = (absent_as_broadcast(narrowest(tiles[0].lookup(ext))) if tiles and tiles[1]
                 else np.broadcast_to(np.int8(-1), sel.shape))
    op_ids, op_idx = unique_inverse(op_name_id)
    op_text = [pytorch.op_text(kt.names[int(i)]) if i >= 0 else "" for i in op_ids]
    op_idx = np.where(op_name_id >= 0, op_idx, -1)
    is_copy = kt.bytes[sel] >= 0
    mem_bytes = np.where(is_copy, kt.bytes[sel], -1)
    kind = devices.recorded_kinds(names, name, _recorded(kt, sel))
    mem_sync = devices.copies_call_sync(kt.names, np.where(is_copy, call_by_corr.lookup(corr), -1), kind)
    # Kineto writes CUPTI's ``graphId`` for every kernel since 2026 (pytorch/kineto #1276, CUDA 12+): 0 where the
    # kernel ran outside any graph (CUPTI: "0 if the kernel is not executed through graph launch API"); read as a
    # graph, every kernel of a plain loop was "already in CUDA graphs" (lutetjeff/cs521-mp2, h37-huntjax64)
    graph = np.where(kt.graph_id[sel] > GRAPH_ID_NONE, kt.graph_id[sel], graph_of_corr.lookup(corr))
    return DeviceEvents(
        gpu=gpu, info=info or DeviceInfo(), names=names, strings=list(tiles[1]) if tiles else [], start=start_ps[sel],
        end=end_ps[sel],
        name=narrowest(name.astype(np.int32), np.int16), kind=kind,
        stream=narrowest(stream.astype(np.int64)), stream_names=[f"stream {int(s)}" for s in ustream],
        corr=narrowest(corr, np.int32), group_id=np.broadcast_to(np.int8(-1), sel.shape), op_text=op_text,
        op_idx=op_idx.astype(int_dtype(-1, len(op_text), floor=np.int16)),
        **DeviceEvents.copy_columns(mem_bytes, mem_sync),
        shape_sid=shape_sid, long_name_sid=np.broadcast_to(np.int8(-1), sel.shape),
        graph_id=absent_as_broadcast(narrowest(graph)), **_launch_columns(kt, sel, items_of_corr),
    )


def _launch_columns(kt: KinetoTrace, sel: np.ndarray, items_of_corr: IdTable | None = None) -> dict[str, np.ndarray]:
    """The launch configuration of the events ``sel`` (rows; kernels' ``grid`` and ``block``), where the trace records
    it: each row found among the recorded ones (``launch_row``, ascending) by a binary search.  A kernel whose launch
    call records its grid in work-items (``items_of_corr``, :func:`_work_item_launches`) runs its ``groups``."""
    if kt.launch_row is None or not kt.launch_row.size or not sel.size:
        return {}
    at = np.minimum(np.searchsorted(kt.launch_row, sel), kt.launch_row.size - 1)
    found = kt.launch_row[at] == sel
    blocks = np.where(found, kt.blocks[at], -1)
    threads = np.where(found, kt.threads[at], -1)
    if items_of_corr is not None and kt.groups is not None:
        items = found & (items_of_corr.lookup(kt.correlation[sel]) > 0)
        blocks = np.where(items, kt.groups[at], blocks)
    return DeviceEvents.launch_columns(blocks, threads)


def _work_item_launches(kt: KinetoTrace) -> IdTable | None:
    """Correlation id -> 1 where the launch call records its kernel's ``grid`` in work-items, not workgroups (HIP's
    ``hipExtModuleLaunchKernel``: rocBLAS/hipBLASLt and MIOpen kernels, ``devices.grid_in_work_items``); those
    kernels' workgroups are ``ceil(grid_d / block_d)`` per dimension (``KinetoTrace.groups``)."""
    is_items = np.fromiter((devices.grid_in_work_items(n) for n in kt.names), dtype=bool, count=len(kt.names))
    if not is_items.any():
        return None  # no such call in the trace (every NVIDIA one)
    m = _cat_mask(kt, _LAUNCH_CATS) & (kt.correlation >= 0)
    m[m] = is_items[kt.name[m]]
    return IdTable(kt.correlation[m], np.ones(int(np.count_nonzero(m)), np.int64), -1)


def _graph_launches(kt: KinetoTrace) -> IdTable:
    """Correlation id -> itself where a CUDA graph launch made it: the graph's kernels share that id, which then
    names their graph (``args["graph id"]`` where Kineto writes one wins)."""
    is_graph = np.fromiter((devices.is_graph_launch(n) for n in kt.names), dtype=bool, count=len(kt.names))
    m = _cat_mask(kt, _LAUNCH_CATS) & (kt.correlation >= 0)
    m[m] = is_graph[kt.name[m]]
    return IdTable(kt.correlation[m], kt.correlation[m], -1)


def _copy_call_by_correlation(kt: KinetoTrace) -> IdTable:
    """Correlation id -> the name id of the copy or memset call that launched it (``cudaMemcpy``,
    ``hipMemcpyAsync``): whether it held the host is asked with the copy's kind (``devices.copies_call_sync``)."""
    m = _cat_mask(kt, _LAUNCH_CATS) & (kt.correlation >= 0)
    names = np.fromiter((devices.copy_call_sync(n) >= 0 for n in kt.names), dtype=bool, count=len(kt.names))
    keep = names[kt.name[m]] if m.any() else np.zeros(0, bool)
    return IdTable(kt.correlation[m][keep], kt.name[m][keep].astype(np.int64), -1)


#: A kernel's ``args["graph id"]`` for "no graph": CUPTI numbers graphs from 1 and records 0 for a kernel launched
#: outside one (its ``CUpti_ActivityKernel`` ``graphId``); Kineto writes the field for every kernel (CUDA 12+).
GRAPH_ID_NONE = 0

#: Header keys only ROCm builds of PyTorch write.
_ROCM_KEYS = ("hip_runtime_version", "hip_driver_version", "roctracer_version")
#: Header keys only CUDA builds write (Kineto's CUPTI logger: ``cupti_version``, the CUDA runtime's and driver's).
_CUDA_KEYS = ("cupti_version", "cuda_runtime_version", "cuda_driver_version")


#: The vendor a Kineto plugin's categories say, for a GPU ``deviceProperties`` leaves unnamed: an Intel GPU's calls are
#: ``xpu_runtime``/``xpu_driver`` (the ``xpupti`` plugin), so its words are Intel's, never CUDA's.
_PLUGIN_VENDOR_GPU = {"xpu_runtime": "Intel GPU", "xpu_driver": "Intel GPU"}


#: The categories (before :data:`OLD_CATS` renames them) of the runtime's calls and of the GPU's kernels.
_CALL_CATS = ("cuda_runtime", "cuda_driver", "xpu_runtime", "xpu_driver", "Runtime")
_KERNEL_CATS = ("kernel", "Kernel")
#: ... and of the framework's host ops and annotations, before renaming (``Operator`` PyTorch 1.8-1.10's name for
#: ``cpu_op``): the ops only one vendor's build has, a collective's c10d record.  Not :data:`_OP_CATS` (read after).
_HOST_OP_CATS = ("cpu_op", "Operator", "user_annotation")


def _unnamed_gpu(vendor: str | None) -> str | None:
    """What to call a GPU the file does not name, by its vendor (:func:`_file_vendor`'s ``vendor``): None where it says NVIDIA (the
    default an unnamed GPU is read as) or the evidence disagrees; ``devices.unknown.GPU_NAME`` where nothing names a
    vendor (h37-vendor64: such a GPU was NVIDIA's, and told CUDA, Tensor Cores and ``nsys``)."""
    if vendor in devices.UNSETTLED_NAMES:  # nothing names a vendor, or NCCL's names alone (NVIDIA's or AMD's)
        return devices.UNSETTLED_NAMES[vendor]
    return f"{vendor} GPU" if vendor and vendor != devices.nvidia.VENDOR else None


def _file_vendor(kt: KinetoTrace) -> str | None:
    """The ``VENDOR`` the file shows besides its GPUs' names: ROCm's header keys say AMD (vLLM's MI300X traces leave
    the name empty), the ``xpupti`` plugin's categories Intel, CUDA's header keys NVIDIA, else every other evidence the
    file holds (``devices.vendor_known``): its runtime's calls (``hipLaunchKernel``), kernels only one vendor names
    (ROCclr's ``__amd_rocclr_copyBuffer``, cuBLAS's ``ampere_sgemm_*``), host ops only one vendor's build has
    (``aten::cudnn_convolution``), the distributed backend (``rccl``; ``nccl`` is both vendors' and says nothing);
    ``devices.UNKNOWN`` where nothing names a vendor, None where the evidence disagrees.  Read before :data:`OLD_CATS` renames the categories."""
    if any(k in kt.meta for k in _ROCM_KEYS):
        return devices.amd.VENDOR
    if any(c in _PLUGIN_VENDOR_GPU for c in kt.cats):
        return devices.intel.VENDOR
    if any(k in kt.meta for k in _CUDA_KEYS):
        return devices.nvidia.VENDOR
    names = np.asarray(kt.names, dtype=object)

    def named(cats: tuple[str, ...]) -> list[str]:
        return list(names[np.unique(kt.name[_cat_mask(kt, cats)])]) if len(names) else []

    info = _first_info(kt)
    backend = info.get("backend") if isinstance(info, dict) else None
    ops = named(_HOST_OP_CATS)
    # the process group's backend as its collectives' annotations name it (``nccl:all_to_all``), as distributedInfo does
    libraries = [backend] if isinstance(backend, str) else []
    libraries += sorted({n.split(":", 1)[0] for n in ops if pytorch.collective_backend_annotation(n)})
    return devices.vendor_known(named(_CALL_CATS), named(_KERNEL_CATS), libraries, ops)


def _device_properties(kt: KinetoTrace, unnamed: str | None = None) -> dict[int, DeviceInfo]:
    """``deviceProperties`` by device id; malformed entries are skipped (a foreign or hand-edited file); ``unnamed``
    names a GPU they list without a name."""
    out: dict[int, DeviceInfo] = {}
    props = kt.meta.get("deviceProperties")
    if not isinstance(props, list):
        return out
    for p in props:
        if not isinstance(p, dict) or type(p.get("id")) is not int:
            continue
        major, minor = p.get("computeMajor"), p.get("computeMinor")
        name = str(p["name"]).strip() if isinstance(p.get("name"), str) else ""
        if name and unnamed == devices.unknown.GPU_NAME and devices.vendor_claimed([name]) is None:
            name += devices.unknown.NAME_TAIL  # a model no vendor's table knows, in a file naming no vendor
        elif name and unnamed == devices.nccl_gpu.GPU_NAME and devices.vendor_claimed([name]) is None:
            name += devices.nccl_gpu.NAME_TAIL  # the same, in a file whose one vendor word is NCCL's
        out[p["id"]] = DeviceInfo(
            # a ROCm build that leaves the name empty (vLLM's MI300X traces) is still an AMD GPU: say the vendor, so
            # its architecture, peaks and words are AMD's, never an NVIDIA "compute capability 9.4"
            name=name or unnamed,
            compute_capability=(major, minor) if type(major) is int and type(minor) is int else None,
            sm_count=p["numSms"] if type(p.get("numSms")) is int else None,
            memory_bytes=p["totalGlobalMem"] if type(p.get("totalGlobalMem")) is int else None,
        )
    return out


def _memory_devices(kt: KinetoTrace, memory: dict[int, MemoryEvents], devs: list[DeviceEvents],
                    unnamed: str | None) -> dict[int, DeviceInfo]:
    """The GPUs the allocator's events name that ran no recorded work, each as ``deviceProperties`` describes it (the
    allocator numbers devices as the framework does, as ``deviceProperties`` does).  Why: a capture whose GPU tracer
    lost every kernel record still holds the allocator's events and the header's GPUs (wild/lost_kernels_synced_a40:
    an A40's 45.4 GB peak); the GPU was there, and its memory is judged against its own size."""
    ran = {d.gpu for d in devs}
    idle = sorted(g for g in memory if g not in ran)
    if not idle:
        return {}
    if not devs and unnamed in devices.UNSETTLED_NAMES.values():
        # no GPU record at all: a window whose GPU side went unrecorded names its GPU as the job's words do, from
        # its runtime (``job.kind``'s ``runtime_vendor``), not as a GPU that ran work nobody's words name
        # (wild/cuda_unrecorded_cifar_cnn: "GPU of unknown vendor" beside capture.vendor NVIDIA)
        unnamed = None
    props = _device_properties(kt, unnamed)
    return {g: props.get(g, _only_model(props) or DeviceInfo(name=unnamed)) for g in idle}


def _only_model(props: dict[int, DeviceInfo]) -> DeviceInfo | None:
    """The one GPU model ``deviceProperties`` lists, for a device it lists under another id (a VM's virtual function:
    properties of device 0, kernels on device 2); None when it lists several models or none."""
    models = {(p.name, p.compute_capability) for p in props.values()}
    return next(iter(props.values())) if len(models) == 1 else None


def _profiler_steps(kt: KinetoTrace, h: HostEvents) -> StepMarkers | None:
    """``ProfilerStep#N`` host annotations (``prof.step()``): one per step."""
    step_of_name = np.fromiter((pytorch.step_number(n) for n in h.names), dtype=np.int64, count=len(h.names))
    if not (step_of_name >= 0).any() or not len(h):
        return None
    n = step_of_name[h.name]
    m = n >= 0
    if not m.any():
        return None
    note = "`ProfilerStep#N` annotations (one per prof.step())"
    ids = n[m]
    if len(kt.workers) > 1:
        note += f" of {len(kt.workers)} ranks ({', '.join(kt.workers)}), each step from its earliest start to its latest end"
    else:
        ids, restarted = _restarted_counts(ids, h.start[m])
        note += restarted
    return StepMarkers("profiler_step", note, ids, h.start[m], h.end[m])


def _restarted_counts(ids: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, str]:
    """One process's ``ProfilerStep`` numbers, numbered on where its count restarts, and that in words ("" if never).

    Why: one profiler's count only grows, so a number lower than the one before it in time opens a new count in the
    same file -- Lightning's ``PyTorchProfiler`` writes ``#1`` for the fit's start, then ``#0, #1, #2, #3`` for the
    training iterations (survey h37-survey22, BjarkeErichsen/Twitter_sentiment_MLOPS).  Kept as written, the two
    ``#1`` marks would be read as one step and the iteration between them merged into its neighbour; numbered on
    (``#0`` after ``#1`` becomes 2), each mark stays its own window.  Equal numbers are left equal (one step's marks);
    several ranks are not renumbered: their counts interleave in time without restarting."""
    order = np.argsort(start, kind="stable")
    seq = ids[order].astype(np.int64, copy=False)
    back = np.flatnonzero(np.diff(seq) < 0) + 1  # where the count went back: a new count begins
    if not back.size:
        return ids, ""
    # each new count continues from the number before it: the shift grows by (previous + 1 - first of the new count)
    shift = np.zeros(seq.size, dtype=np.int64)
    shift[back] = seq[back - 1] + 1 - seq[back]
    renumbered = np.empty_like(ids)
    renumbered[order] = seq + np.cumsum(shift)
    k = int(back[0])
    return renumbered, (f"; the count restarted (`ProfilerStep#{int(seq[k])}` after `#{int(seq[k - 1])}`): later "
                        "steps are numbered on from there")


def _rank_step_lines(kt: KinetoTrace, devs: list[DeviceEvents], start_ps: np.ndarray,
                     end_ps: np.ndarray) -> dict[str, Any]:
    """Several ranks in one trace: each GPU's steps from its own ``ProfilerStep#N`` span on the device
    (``gpu_user_annotation``, which Kineto draws over the work launched inside each step).

    Why: ranks start their steps at different times (that difference is the launch skew to measure); one
    host-wide window per step number would cut each rank's steps where another rank's begin.  Step k on a
    GPU runs from its span's start to the start of its next span (idle time before a step belongs to the
    one before, as with host steps).  Used only when every GPU with work has such spans; a single rank keeps
    its host steps, whose input waits before the first kernel the device spans would not cover."""
    if len(kt.workers) < 2:
        return {}
    m = _cat_mask(kt, ("gpu_user_annotation",))
    step_of_name = np.fromiter((pytorch.step_number(n) for n in kt.names), dtype=np.int64, count=len(kt.names))
    m &= step_of_name[kt.name] >= 0
    drawn = bool(m.any())  # PyTorch 1.11 on draws them; before it (the old schema) they are derived as Kineto does
    launched = None if drawn else _launched_work(kt)
    lines = {}
    for d in devs:
        spans = _drawn_step_spans(kt, d.gpu, m, step_of_name, start_ps, end_ps) if launched is None else \
            _derived_step_spans(kt, d.gpu, launched, step_of_name, start_ps, end_ps)
        if spans is None:
            return {}
        ids, start, end = spans
        opened = _opened_on_host(kt, d.gpu, ids, start, _busy_until(d, start), start_ps)
        end[:-1] = np.maximum(opened[1:], opened[:-1])
        host = _host_step_ps(kt, d.gpu, int(ids[-1]), start_ps, end_ps)
        host += _host_mark_gap_ps(kt, d.gpu, start_ps, end_ps) if host else 0  # the gap every earlier step holds
        if opened[-1] < start[-1]:  # opened where its host opened it: its own lead and wait are in it, as its mark's
            end[-1] = max(int(end[-1]), int(opened[-1]) + host)
        else:
            host -= _late_first_work_ps(kt, d.gpu, ids, start, start_ps) if host else 0  # its wait: the step before's
            end[-1] = max(int(end[-1]), int(start[-1]) + host)
        lines[d.gpu] = (ids, opened, end)
    note = (f"`ProfilerStep#N` spans on each rank's GPU ({len(kt.workers)} ranks: {', '.join(kt.workers)}); "
            "step k from its span's start to the next one's")
    return {"gpu_step_lines": lines, "gpu_step_source": ("profiler_step", note)}


def _drawn_step_spans(kt: KinetoTrace, gpu: int, m: np.ndarray, step_of_name: np.ndarray, start_ps: np.ndarray,
                      end_ps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(step numbers, starts, ends; ps) of the ``ProfilerStep#N`` spans Kineto drew on ``gpu`` (``m``: the rows of
    such spans), by start; None where it drew fewer than two."""
    sel = np.flatnonzero(m & (kt.device == gpu))
    if sel.size < 2:
        return None
    sel = sel[np.argsort(start_ps[sel], kind="stable")]
    return step_of_name[kt.name[sel]], start_ps[sel].astype(np.int64), end_ps[sel].astype(np.int64)


class _LaunchedWork(NamedTuple):
    """The trace's launches and the GPU work they launched, once for every rank (:func:`_launched_work`)."""

    launch: np.ndarray  # bool per X event: a runtime or driver call with a correlation
    work: np.ndarray  # rows of kernels, copies and memsets with a correlation
    work_gpu: np.ndarray  # the device of each row of ``work``


def _launched_work(kt: KinetoTrace) -> _LaunchedWork:
    """The masks every rank's :func:`_derived_step_spans` reads, built once: they span the whole trace, and rebuilt
    per GPU they cost a pass over every event per rank (session 53's review)."""
    work = np.flatnonzero(_cat_mask(kt, DEVICE_CATS) & (kt.correlation >= 0))
    return _LaunchedWork(_cat_mask(kt, _LAUNCH_CATS) & (kt.correlation >= 0), work, _device_ids(kt, work))


def _derived_step_spans(kt: KinetoTrace, gpu: int, launched: _LaunchedWork, step_of_name: np.ndarray,
                        start_ps: np.ndarray, end_ps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The ``ProfilerStep#N`` spans PyTorch 1.11 on would have drawn on ``gpu``: per step of the rank driving it (its
    host marks), the first start to the last end of the GPU work launched inside it (its runtime calls' correlation);
    None where fewer than two steps launched any.

    Why: before 1.11 Kineto draws no GPU span, and several ranks' old files were placed on one host-wide window per
    step, the earliest rank's start to the latest's end -- a rank pausing alone read ``gpu_imbalance`` and a critical
    ``host_sync`` its twin of today does not (h37-probe52x *Left* 1).  The spans are what Kineto derives them from: the
    work each step launched."""
    marks = _rank_step_marks(kt, gpu)
    if marks.size < 2:
        return None
    marks = marks[np.argsort(start_ps[marks], kind="stable")]
    m_s, m_e = start_ps[marks].astype(np.int64), end_ps[marks].astype(np.int64)
    launch = launched.launch & np.isin(kt.pid, kt.gpu_pids.get(gpu, []))
    at = IdTable(kt.correlation[launch], start_ps[launch].astype(np.int64), -1)
    work = launched.work[launched.work_gpu == gpu]
    t = at.lookup(kt.correlation[work])
    k = np.searchsorted(m_s, t, side="right") - 1
    inside = (t >= 0) & (k >= 0)
    inside[inside] &= t[inside] < m_e[k[inside]]
    work, k = work[inside], k[inside]
    first = np.full(marks.size, np.iinfo(np.int64).max)
    last = np.full(marks.size, np.iinfo(np.int64).min)
    np.minimum.at(first, k, start_ps[work].astype(np.int64))
    np.maximum.at(last, k, end_ps[work].astype(np.int64))
    has = last > np.iinfo(np.int64).min
    if np.count_nonzero(has) < 2:
        return None
    order = np.argsort(first[has], kind="stable")
    return step_of_name[kt.name[marks[has]]][order], first[has][order], last[has][order]


def _busy_until(d: DeviceEvents, at: np.ndarray) -> np.ndarray:
    """Per time of ``at``: the latest end of the GPU's work begun before it, on any stream (0 where none): till then
    the GPU was busy -- a step's all-reduce on its own stream outlasts the step's span on the compute stream."""
    i = np.searchsorted(d.start, at, side="left")
    if not d.end.size:
        return np.zeros(at.size, np.int64)
    reach = np.maximum.accumulate(d.end.astype(np.int64))
    return np.where(i > 0, reach[np.maximum(i - 1, 0)], 0).astype(np.int64)


def _opened_on_host(kt: KinetoTrace, gpu: int, ids: np.ndarray, start: np.ndarray, done: np.ndarray,
                    start_ps: np.ndarray) -> np.ndarray:
    """Each GPU step's start (``start``: its device span's, by start) moved back to where its rank's host opened the
    step (its ``ProfilerStep#N`` annotation, :func:`_rank_step_marks`), where the GPU had finished its work before
    (``done[k]``: :func:`_busy_until` its span's start) by then: the GPU's idle from there to the span is the step's own, waiting on its host.

    Why: a span covers its kernels alone, so tiled span to span, the idle while the rank's host ran the head of step k
    (its batch's fetch, a module's load) lay in step k-1: rank 1 loading a module for 30 ms inside its own step 7 read
    its GPU's step 6 as 33 ms, 3.3 ms a step of start-up once step 7 was dropped for the load, where the rank alone
    reads none (h37-probe44r, ``synthetic.torchtrace.rank_pause``).  A host running ahead opens step k while its GPU
    still runs k-1: then the span's start stands (its GPU was busy, not waiting), nor does it move before the step
    before's span starts.  One pass over the marks and one search per step (h37-debt45: it was a mask per step)."""
    marks = _rank_step_marks(kt, gpu)
    if not marks.size:
        return start
    numbers = np.fromiter((pytorch.step_number(kt.names[k]) for k in kt.name[marks]), np.int64, count=marks.size)
    marked, first = _first_mark_ps(numbers, start_ps[marks].astype(np.int64))
    at = np.minimum(np.searchsorted(marked, ids), marked.size - 1)
    before = np.concatenate(([0], start[:-1])).astype(np.int64)  # the step before's span start (0 for the first)
    moved = np.minimum(start, np.maximum(np.maximum(first[at], done), before))
    return np.where(marked[at] == ids, moved, start).astype(start.dtype)


def _first_mark_ps(numbers: np.ndarray, opened: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each step number the marks hold, sorted; the earliest of its marks' starts, ps): a rank's host may open one
    step number more than once (a restarted count), and the step opens at its first."""
    order = np.lexsort((opened, numbers))
    marked, first = np.unique(numbers[order], return_index=True)
    return marked, opened[order][first]


def _host_step_ps(kt: KinetoTrace, gpu: int, number: int, start_ps: np.ndarray, end_ps: np.ndarray) -> int:
    """The length of step ``number``'s ``ProfilerStep#`` annotation on the host of the rank driving ``gpu``
    (``KinetoTrace.gpu_pids``), ps; 0 where that rank's file holds none.

    Why: each GPU step but the last runs from its span's start to the next one's, so it holds the rank's time before
    its first kernel (the batch's fetch and copy, Python before the first op); the device span of the last covers its
    kernels alone.  Its host annotation is the iteration as the rank ran it: on 2 ranks, 3 steps of 1.48 ms with
    1 ms of untraced Python before each forward read as 1.13 ms, the last step 0.44 ms (h37-randjobs13, ``--forms13``
    walk seed 340)."""
    m = _cat_mask(kt, ("user_annotation",)) & np.isin(kt.pid, kt.gpu_pids.get(gpu, []))
    m &= np.fromiter((pytorch.step_number(n) == number for n in kt.names), dtype=bool, count=len(kt.names))[kt.name]
    sel = np.flatnonzero(m)
    return int((end_ps[sel] - start_ps[sel]).max()) if sel.size else 0


def _host_mark_gap_ps(kt: KinetoTrace, gpu: int, start_ps: np.ndarray, end_ps: np.ndarray) -> int:
    """The loop's turn (``model.columns.loop_turn``) the rank driving ``gpu`` took between one host ``ProfilerStep#``
    annotation's end and the next one's start, ps (0 where its annotations touch, or where it has fewer than two).

    Why: each GPU step but the last runs from its span's start to the next one's, so it holds that gap -- a rank that
    reaches each step late, untraced, opens its annotation after the others' and closes it with them at the
    all-reduce's end; the last step, read as its host annotation (:func:`_host_step_ps`), would leave the gap out and
    be measured on another ruler than the steps before it: 4 ranks each keeping a 15 ms period, the latest rank's
    last step read 13.64 ms, the mean 14.66 ms (h37-usercopies13, ``--forms13`` walk seed 23156).  Annotations that
    tile their loop, as ``prof.step()`` writes them, have no gap: nothing changes there.  Read as every reading of a
    last step's missing turn reads it (h37-lastturn): the median of two gaps blended a one-time wait into the last."""
    sel = _rank_step_marks(kt, gpu)
    if sel.size < 2:
        return 0
    sel = sel[np.argsort(start_ps[sel], kind="stable")]
    return loop_turn(start_ps[sel][1:].astype(np.int64) - end_ps[sel][:-1].astype(np.int64))


def _late_first_work_ps(kt: KinetoTrace, gpu: int, ids: np.ndarray, gpu_start: np.ndarray,
                        start_ps: np.ndarray) -> int:
    """How much later after its host ``ProfilerStep#`` annotation opens the last step's GPU span (``gpu_start[-1]``)
    opens than the loop's usual lead (``model.columns.lower_median`` of every step's lead), ps; 0 where no later, or
    where the rank's file marks fewer than two of the GPU's steps (``ids``).

    ASSUMPTION this replaces: *the last step's own lead is the one the next step's first work would have taken*.  The
    last GPU step, with no next span to end at, is measured by its host annotation's length (:func:`_host_step_ps`) from
    its span's start -- its own lead carried past its end.  A wait on the host before the last step's first launch (the
    profiler's activity buffer request, a batch's fetch) breaks that: on the GPU's clock it lies in the step before,
    which ends at the late span's start, yet the annotation holds it too, so the last step read it again after its own
    work: 2 ranks, a 0.67 ms request in the last of 4 steps of 0.92 ms, the step before 1.59 ms (holding it, dropped)
    and the last 1.59 ms as well, kept (walk seed 52518).  Likewise the GPU's backlog (the step before's all-reduce
    still running when the last step's first launch came): the last window ran 0.68 ms past its work, where the next
    step's work would have queued behind it (walk seed 55591, 8.62 ms for a 7.94 ms span).  The next step's first
    work would have followed its annotation by the loop's usual lead, not by this one's.  A last lead shorter than the
    usual one is no wait moved elsewhere: a host draining the GPU's backlog shortens its leads step by step, and the
    next one would be shorter still -- the annotation's length stands there, as before."""
    marks = _rank_step_marks(kt, gpu)
    numbers = np.fromiter((pytorch.step_number(kt.names[k]) for k in kt.name[marks]), np.int64, count=marks.size)
    leads = [int(gpu_start[k]) - int(start_ps[marks[numbers == n]].min())
             for k, n in enumerate(ids.tolist()) if (numbers == n).any()]
    if len(leads) < 2 or not (numbers == ids[-1]).any():
        return 0
    return max(leads[-1] - lower_median(np.array(leads, np.int64)), 0)


def _rank_step_marks(kt: KinetoTrace, gpu: int) -> np.ndarray:
    """The rows of the ``ProfilerStep#N`` host annotations (``user_annotation``) of the rank driving ``gpu``
    (``KinetoTrace.gpu_pids``), in file order."""
    m = _cat_mask(kt, ("user_annotation",)) & np.isin(kt.pid, kt.gpu_pids.get(gpu, []))
    m &= np.fromiter((pytorch.step_number(n) >= 0 for n in kt.names), dtype=bool, count=len(kt.names))[kt.name]
    return np.flatnonzero(m)


#: Where a PyTorch report's times count from (``Trace.time_base``).
TIME_BASE = "ms from the trace's start, as Perfetto and chrome://tracing show them"


def _time_base(kt: KinetoTrace) -> str:
    """``TIME_BASE``; merged ranks count from the earliest rank's start, which another rank's file does not show."""
    if len(kt.workers) < 2:
        return TIME_BASE
    return (f"{TIME_BASE} (ranks {', '.join(kt.workers)} on one clock: from the earliest rank's trace start; "
            "another rank's own file starts up to its profiler's start skew later)")


def _clock_ns(kt: KinetoTrace, origin_ns: int) -> int | None:
    """The trace's 0 (its first used event, ``origin_ns`` on its ``ts``) on the file's clock in ns (``Trace.clock_ns``):
    ``baseTimeNanoseconds`` plus it, or -- the old schema, without one -- ``ts`` itself, which counts from 1970.
    Merged ranks count from the earliest rank's base (``ranks._bases``), which their ``meta`` states."""
    base = kt.meta.get("baseTimeNanoseconds")
    if base is None:
        return origin_ns if kt.ts_ns.size else None
    return int(base) + origin_ns if type(base) is int else None


def _viewer_zero_ps(kt: KinetoTrace, origin_ns: int) -> int:
    """The trace's start on the adapter's clock (``Trace.viewer_zero_ps``, <= 0): where Perfetto's timeline starts.

    A trace has no stock viewer in the Profile tab; Perfetto and chrome://tracing draw it from its earliest event,
    the profiler's own span (category ``Trace``, ``PyTorch Profiler (0)``), which opens 0.05-0.33 ms before the first
    op in real traces.  The adapter's clock starts at that first op or kernel; windows count from the span.
    Merged ranks: the earliest rank's span (every rank on the earliest file's clock, ``ranks.py``).
    """
    if not kt.ts_ns.size:
        return 0
    zero = (min(int(kt.ts_ns.min()), origin_ns) - origin_ns) * 1000
    return zero if zero >= -_MAX_LEAD_PS else 0  # an event days before the rest: a broken ts, not the start


#: How far before its first op a trace's start may lie (an hour): further, a stray ``ts`` is not where Perfetto's
#: timeline of the steps starts, and times from it would not fit int64 picoseconds.
_MAX_LEAD_PS = 3600 * 10**12


def _close_open_annotations(kt: KinetoTrace, start_ps: np.ndarray, end_ps: np.ndarray, origin_ns: int,
                            used: np.ndarray) -> np.ndarray:
    """``end_ps`` with each annotation (``user_annotation``: ``ProfilerStep#N``, ``record_function``) ended no later
    than the last thing the capture recorded: the later of the profiler's own span's end and the last other event's.

    Why: an annotation still open when the profiler stops is written with the time it was closed, which can be
    seconds later (a ``ProfilerStep#1`` of 13.3 s in a 355 ms capture whose work ends 1.7 ms after the step begins);
    no step or span can outlast what was recorded.  Ops, launches and kernels are kept as written (kernels and launches
    end past the profiler's span by up to 17 ms in real traces, their work real).  A file without the profiler's span
    keeps its ends: its capture's end is not known."""
    span = _cat_mask(kt, (_TRACE_CAT,))
    ann = _cat_mask(kt, ("user_annotation",)) & used
    if not span.any() or not ann.any():
        return end_ps
    recorded = (int((kt.ts_ns[span] + np.maximum(kt.dur_ns[span], 0)).max()) - origin_ns) * 1000
    others = used & ~ann
    if others.any():
        recorded = max(recorded, int(end_ps[others].max()))
    out = end_ps.copy()
    late = ann & (out > recorded)
    out[late] = np.maximum(start_ps[late], recorded)
    return out


def _capture_ms(kt: KinetoTrace) -> float | None:
    """The profiler's span event (category ``Trace``), in ms; None when the trace has none."""
    m = _cat_mask(kt, (_TRACE_CAT,))
    if not m.any():
        return None
    return float(kt.dur_ns[m].max()) / 1e6


def _capture_start_ps(kt: KinetoTrace, origin_ns: int) -> int | None:
    """Where the profiler's span (the longest ``Trace`` event, :func:`_capture_ms`'s) starts on the adapter's clock;
    None when the trace has none.  Why: the viewer's 0 is the earliest event, which an accelerator's own records can
    put before the span (mtia_inference: 99 ms of MTIA command-processor events first), so the window the capture's
    length measures does not always start at the report's 0 (h37-left37)."""
    m = np.flatnonzero(_cat_mask(kt, (_TRACE_CAT,)))
    if not m.size:
        return None
    k = m[int(np.argmax(kt.dur_ns[m]))]
    return (int(kt.ts_ns[k]) - origin_ns) * 1000


def _allocator(kt: KinetoTrace) -> Allocator:
    """Peak allocated bytes over the GPUs' ``[memory]`` events (``profile_memory=True``), else unknown."""
    mem = kt.memory or {}
    peaks = [int(v) for d, v in mem.items() if isinstance(v, (int, float)) and d is not None and int(d) >= 0]
    return Allocator(max(peaks) if peaks else None, None)


#: What the ``[memory]`` events say, in the report's words.
_MEMORY_SOURCE = "PyTorch [memory] events (profile_memory=True)"


def _memory_events(kt: KinetoTrace, origin_ns: int, h: HostEvents, line_pairs: np.ndarray, host_order: np.ndarray,
                   gpus: list[int]) -> dict[int, MemoryEvents]:
    """Per GPU, its ``[memory]`` events in time order (the file's order is not always time order: the autograd
    thread's events are written apart), each with the op it happened in.

    Totals: ``Total Allocated`` / ``Total Reserved`` as written where every event carries them; PyTorch 1.8-1.10 wrote
    ``Bytes`` only, and allocated is then their running sum from the capture's start (``baseline="capture_start"``).
    The op: the innermost ATen op or annotation of the event's thread holding it, named after the op that called an
    allocation-only op (``aten::empty`` inside ``aten::addmm`` is ``aten::addmm``'s), and its phase: inside autograd's
    backward nodes, inside ``Optimizer.step``, inside some other op (``forward``), outside any (``other``).

    GPU ids: the allocator numbers devices as the framework does (HIP's ordinal 0), while ROCm's tracer numbers the
    GPU that ran the kernels after the CPU agents (2 on the MI300X traces): where the ids differ but the counts agree,
    they are paired in order (:func:`_memory_gpu_ids`)."""
    m = kt.mem
    if m is None:
        return {}
    rows = np.flatnonzero(m.gpu_rows())
    if not rows.size:
        return {}
    t = (m.ts_ns[rows] - origin_ns) * 1000
    op, phase, names = _memory_ops(kt, h, line_pairs, host_order, m.pid[rows], m.tid[rows], t)
    out: dict[int, MemoryEvents] = {}
    dev = m.device[rows]
    to_gpu = _memory_gpu_ids(sorted(set(dev.tolist())), gpus)
    for g in np.unique(dev).tolist():
        sel = np.flatnonzero(dev == g)
        sel = sel[np.argsort(t[sel], kind="stable")]
        r = rows[sel]
        delta = m.bytes[r]
        total = m.total[r]
        absolute = bool((total >= 0).all())
        out[to_gpu[int(g)]] = MemoryEvents(
            gpu=to_gpu[int(g)], source=_MEMORY_SOURCE, baseline="absolute" if absolute else "capture_start", t=t[sel],
            delta=delta, allocated=total if absolute else np.cumsum(delta), reserved=m.reserved[r], addr=m.addr[r],
            op=op[sel], phase=phase[sel], op_names=names)
    return out


def _memory_gpu_ids(mem_devs: list[int], gpus: list[int]) -> dict[int, int]:
    """The trace's GPU id of each allocator device: the same id where the GPUs have it; paired in order where the two
    numberings differ (ROCm's agent ids) but count the same GPUs."""
    if set(mem_devs) <= set(gpus) or len(mem_devs) != len(gpus):
        return {d: d for d in mem_devs}
    return dict(zip(mem_devs, sorted(gpus)))


def _memory_ops(kt: KinetoTrace, h: HostEvents, line_pairs: np.ndarray, host_order: np.ndarray, pid: np.ndarray,
                tid: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """For each memory event: (its op's label id, its phase id, the labels) -- see :func:`_memory_events`."""
    n = t.shape[0]
    op = np.full(n, -1, dtype=np.int32)
    phase = np.full(n, MEMORY_PHASES.index("other"), dtype=np.int8)
    labels: dict[str, int] = {}
    if not len(h) or not line_pairs.size:
        return op, phase, []
    is_op = _cat_mask(kt, _OP_CATS)[host_order]
    # PyTorch 1.9 wrote an op's tid as text ("25738") and a [memory] event's as a number: one thread all the same
    def thread(q: int) -> int:
        label = kt.tid_labels.get(q, "") if q < -1 else ""
        return int(label) if label.isdigit() else q

    key = {(int(p), thread(int(q))): i for i, (p, q) in enumerate(line_pairs.tolist())}
    ev_line = np.array([key.get((int(p), thread(int(q))), -1) for p, q in zip(pid.tolist(), tid.tolist())],
                       dtype=np.int64)
    for line in np.unique(ev_line[ev_line >= 0]).tolist():
        ops = np.flatnonzero((h.line == line) & is_op)
        evs = np.flatnonzero(ev_line == line)
        if not ops.size:
            continue
        parent, inner = nest(h.start[ops], h.end[ops], t[evs])
        op_label, op_phase = _op_scopes(h, ops, parent, labels)
        hit = inner >= 0
        op[evs[hit]] = op_label[inner[hit]]
        phase[evs[hit]] = op_phase[inner[hit]]
    return op, phase, list(labels)


def _op_scopes(h: HostEvents, ops: np.ndarray, parent: np.ndarray, labels: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """Per op of one line: the label its allocations get (its own name, its caller's for an allocation-only op) and
    its phase (its own scope, else its parent's; ``forward`` inside ops of no scope).  The innermost scope decides: a
    module's forward call inside an optimizer's step is the forward ``optimizer.step(closure)`` runs (Lightning's
    automatic optimization), not the optimizer's state."""
    k = ops.shape[0]
    label = np.full(k, -1, dtype=np.int32)
    ph = np.full(k, MEMORY_PHASES.index("forward"), dtype=np.int8)
    starts, ends = h.start[ops], h.end[ops]
    names = h.names
    name_ids = h.name[ops].tolist()
    par = parent.tolist()
    scopes = {nid: pytorch.memory_phase(names[nid]) for nid in set(name_ids)}
    factory = {nid: pytorch.is_factory_op(names[nid]) for nid in set(name_ids)}
    module = {nid: pytorch.is_module_forward(names[nid]) for nid in set(name_ids)}
    optimizer, forward = MEMORY_PHASES.index("optimizer"), MEMORY_PHASES.index("forward")
    for i in np.lexsort((-ends, starts)).tolist():  # parents first
        nid, p = name_ids[i], par[i]
        if factory[nid] and p >= 0:
            label[i] = label[p]
        else:
            label[i] = labels.setdefault(names[nid], len(labels))
        scope = scopes[nid]
        if scope:
            ph[i] = MEMORY_PHASES.index(scope)
        elif p >= 0:
            ph[i] = forward if ph[p] == optimizer and module[nid] else ph[p]
    return label, ph


def _compile_evidence(kt: KinetoTrace, h: HostEvents, devs: list[DeviceEvents]) -> list[str]:
    """``torch.compile`` marks: Inductor's Triton kernels, compiled-region annotations."""
    ev = []
    if any(n.startswith(pytorch.TRITON_KERNEL) for d in devs for n in d.names):
        ev.append("Triton kernels (torch.compile)")
    if len(h) and h.name_mask(lambda n: n.startswith(pytorch.COMPILED_HOST)).any():
        ev.append("compiled regions (torch.compile)")
    return ev
