"""The program's own annotations among a framework's host events, where the format writes both alike (issue #37).

An XPlane capture keeps the user's ``jax.profiler.TraceAnnotation`` / ``tf.profiler.experimental.Trace`` ranges as
TraceMe events on the Python thread, with nothing in the event or its metadata that tells them from the runtime's own
TraceMe events (``PjitFunction(f)``, ``ExecutorState::Process``, ``ThunkExecutor`` ...).  They are told apart by
where they sit, which follows from what runs there:

* the user's code runs on the program's own threads, not on the runtime's worker threads (the framework's
  ``background_line``: pjrt workers, tf.data, the CUPTI callback threads);
* it never runs inside a runtime call: whatever nests inside an event the framework names its own
  (``Framework.runtime_event``: dispatch, buffer waits, allocations) is the runtime's, and so is every event of a
  name that nests there anywhere in the capture (the runtime writes it from inside its calls) -- except inside a
  step's marker or root (``Profiled batch``, ``train``, an ``_r`` event), which spans the program's step, its own code
  included;
* launch records (a ``correlation_id``) are the CUDA API's, step roots (``_r``: ``StepTraceAnnotation``, TF's
  ``Trace('train', step_num=s, _r=1)``) are the profiler's step grouping (``step_num`` alone is read by the step
  detection only, and released before the metrics: a range that is a step is left out there), and the profiler's Python tracer writes calls, not ranges (:func:`xla.is_python_tracer_event`).

What is left are the ranges the program marked: the Advisor names them where the GPU idles inside them, as it names
NVTX ranges and ``record_function`` (:func:`program_ranges`).

This module is the one home of which marked ranges are the user's own structure, in every format (issue #37, "each
kind of knowledge has one home"); the job, the steps and the metrics ask it:

* :func:`marked_ranges` -- Nsight's NVTX ranges that are no framework op (PyTorch's autograd NVTX ``aten::mm, op_id =
  N``): the program's blocks and its libraries' ranges (``DDP::``, ``nccl:all_reduce``), which the job stage reads
  as evidence of what ran;
* :func:`library_range_mask` -- which of them a library opens around its own work, by name or by NVTX domain
  (``frameworks.nvtx``): never a step, never the user's code; of those, :func:`communication_ranges` are a
  communication library's (MPI, NCCL: the host waits there for its peers);
* :func:`program_ranges` -- the user's own code, in whichever form the format keeps it: NVTX ranges that are neither
  (nor a range a framework writes around its own code, ``nvtx.is_framework_range``),
  Kineto's ``user_annotation`` (``record_function``), XPlane's TraceMe ranges told by position
  (:func:`user_annotations`), none of them named like a library's.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np

from tb_gpu_advisor.frameworks import nvtx, tensorflow, xla
from tb_gpu_advisor.frameworks.base import Framework, never
from tb_gpu_advisor.model.columns import lookup_mask, outermost_rows, searchsorted_right

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import HostEvents, HostRanges, Trace


def framework_ranges(ranges: HostRanges | None) -> np.ndarray:
    """Host event indices (ascending) of the ranges a framework writes around its model's structure, told by their
    text (``HostRanges.framework``: NVIDIA's layer-wise forward-hook markers); empty where there are none."""
    if ranges is None or ranges.framework is None:
        return np.zeros(0, np.int64)
    return ranges.idx[ranges.framework].astype(np.int64)


def marked_ranges(ranges: HostRanges | None) -> np.ndarray:
    """Host event indices (ascending) of the NVTX ranges that are no framework op: the program's own blocks and its
    libraries' ranges alike -- what the job stage reads for what ran (a ``DDP::`` or ``nccl:all_reduce`` range says
    training as well as the user's ``backward`` does).  Empty where the capture has none."""
    if ranges is None or not ranges.idx.size:
        return np.zeros(0, np.int64)
    return ranges.idx[~ranges.op]


def warmup_ranges(h: HostEvents, ranges: HostRanges | None) -> np.ndarray:
    """Host event indices of the marked ranges (:func:`marked_ranges`) the program names as its warm-up
    (``nvtx.is_warmup_name``: a benchmark's ``Warm-up`` around the iterations it does not measure): the steps drop
    the steps inside them, the job asks whether its training ran only there."""
    marked = marked_ranges(ranges)
    warm = h.per_name(nvtx.is_warmup_name)[h.name[marked]]
    if not warm.any():
        return marked[warm]
    return marked[warm & ~recurring_phases(h, marked, warm)]


def evaluation_ranges(h: HostEvents, ranges: HostRanges | None, annotations: np.ndarray | None = None) -> np.ndarray:
    """Host event indices (ascending) of the marked ranges (:func:`marked_ranges`; and Kineto's ``user_annotation``,
    ``annotations``: ``record_function("evaluate")``) the program names as an evaluation pass
    (``nvtx.is_evaluation_range``: ``eval``, ``validation``, ``val_step 3``), inside no other such range of their
    thread (a ``validation`` range around its ``eval_step`` ranges is one pass; ``model.columns.outermost_rows``:
    held only where mostly inside -- a Kineto range's rounded end lands up to 1 ns past the next one's start, and
    back-to-back ``eval_step`` ranges are each a pass): the steps leave them out of a training job's steps, which they
    lie between or end.  Why the annotations: a Kineto trace keeps the program's ``record_function`` there, no NVTX --
    its ``evaluate`` is the evaluation an Nsight ``eval_step`` is (h37-probe46e)."""
    marked = marked_ranges(ranges)
    if annotations is not None and annotations.size:
        marked = np.union1d(marked, annotations.astype(np.int64))
    sel = marked[h.per_name(nvtx.is_evaluation_range)[h.name[marked]]]
    if sel.size < 2:
        return sel
    return np.sort(sel[outermost_rows(h.line[sel], h.start[sel], h.end[sel])])


def recurring_phases(h: HostEvents, marked: np.ndarray, warm: np.ndarray) -> np.ndarray:
    """Bool per range of ``marked``: a warm-up-named range (``warm``) whose name recurs with the program's other marked
    work between every two of its occurrences -- a phase of each iteration, not the stretch before them.

    Why: a warm-up runs before the steady iterations, its recurrences (``Warm-up Step 1``, ``warmup`` per warm-up
    iteration) back to back; Megatron-core's 1F1B schedule pushes ``<schedule>.warmup`` inside every iteration, its
    ``.steady`` and ``.cooldown`` ranges (or the optimizer's, the next iteration's) between two of them.  The name says
    warm-up either way; where the range lies in the iterations says which it is (a true warm-up, once before the
    measured iterations, stays)."""
    out = np.zeros(marked.size, bool)
    s, e = h.start[marked].astype(np.int64, copy=False), h.end[marked].astype(np.int64, copy=False)
    other = np.flatnonzero(~warm)
    os_ = np.sort(s[other])
    names = h.name[marked]
    for nm in np.unique(names[warm]).tolist():
        k = np.flatnonzero(warm & (names == nm))
        if k.size < 2:
            continue
        k = k[np.argsort(s[k], kind="stable")]
        gap_s, gap_e = e[k[:-1]], s[k[1:]]
        if (gap_e <= gap_s).any():  # overlapping or touching occurrences: one warm-up, nothing between them
            continue
        # another marked range begins in every gap (after one occurrence ends, before the next begins)
        between = np.searchsorted(os_, gap_e, side="left") - np.searchsorted(os_, gap_s, side="left")
        if (between > 0).all():
            out[k] = True
    return out


def in_domains(ranges: HostRanges, domains: frozenset[str]) -> np.ndarray:
    """Bool per range of ``ranges``: it lies in one of the named NVTX ``domains`` (``nvtx.LIBRARY_DOMAINS``,
    ``nvtx.COMMUNICATION_DOMAINS``)."""
    if not ranges.domains:
        return np.zeros(ranges.idx.size, bool)
    hit = np.fromiter((d in domains for d in ranges.domains), bool, len(ranges.domains))
    return hit[ranges.domain]


def library_range_mask(h: HostEvents, ranges: HostRanges) -> np.ndarray:
    """Bool per range of ``ranges``: a library's own (``nvtx.is_library_range`` by its name, or in a library's NVTX
    domain: NCCL's, cuDNN's, MPI's) -- never a step, never the user's code."""
    return h.per_name(nvtx.is_library_range)[h.name[ranges.idx]] | in_domains(ranges, nvtx.LIBRARY_DOMAINS)


def framework_writers(h: HostEvents, ranges: HostRanges | None) -> dict[str, str]:
    """Range name -> the library that wrote it (``nvtx.framework_range_writer``: ``DeepSpeed``), for the marked ranges
    (:func:`marked_ranges`) a framework writes around its own code, by their names or their NVTX domain; a name not
    in it is the user's (or an ordinary library's: :func:`library_range_mask`).  The job reads these ranges as
    evidence of what ran, and says whose they are: not the user's."""
    if ranges is None or not ranges.idx.size:
        return {}
    domain = in_domains(ranges, nvtx.FRAMEWORK_RANGE_DOMAINS)
    sel = np.flatnonzero(_framework_written(h, ranges, domain))
    # one (name, domain) pair each: a layer's range repeats thousands of times
    dom = np.where(domain[sel], ranges.domain[sel].astype(np.int64), -1)
    pairs = np.unique(np.stack([h.name[ranges.idx[sel]].astype(np.int64), dom]), axis=1)
    out: dict[str, str] = {}
    for name_id, d in pairs.T.tolist():
        name = h.names[name_id]
        out[name] = out.get(name) or nvtx.framework_range_writer(name, ranges.domains[d] if d >= 0 else "")
    return out


def _framework_written(h: HostEvents, ranges: HostRanges, domain: np.ndarray) -> np.ndarray:
    """Bool per range of ``ranges``: a marked range (no op) a framework wrote around its own code, by its name
    (``nvtx.is_framework_range``) or in its NVTX domain (``domain``: :func:`in_domains` of
    ``nvtx.FRAMEWORK_RANGE_DOMAINS``)."""
    return ~ranges.op & (domain | h.per_name(nvtx.is_framework_range)[h.name[ranges.idx]])


def framework_written_mask(h: HostEvents, ranges: HostRanges) -> np.ndarray:
    """Bool per range of ``ranges``: a marked range a framework wrote around its own code, by its name or its NVTX
    domain (:func:`framework_written_ranges`)."""
    return _framework_written(h, ranges, in_domains(ranges, nvtx.FRAMEWORK_RANGE_DOMAINS))


def framework_written_ranges(trace: Trace) -> np.ndarray:
    """Host event indices (ascending) of the marked ranges a framework wrote around its own code (DeepSpeed's
    ``DeepSpeedEngine.forward``, Megatron-core's layers): not the user's code (:func:`program_ranges` leaves them),
    yet the bounds of the pass they wrap where the program marks none of its own -- a DeepSpeed benchmark's one pass
    is its engine's ``forward``, ``backward`` and optimizer ``step``."""
    r = trace.ranges
    if r is None or not r.idx.size:
        return np.zeros(0, np.int64)
    return r.idx[framework_written_mask(trace.h, r)].astype(np.int64)


def communication_ranges(ranges: HostRanges | None) -> np.ndarray:
    """Host event indices of the ranges a communication library marks around its calls -- those in its own NVTX
    domain (``nvtx.COMMUNICATION_DOMAINS``: Nsight's MPI trace puts ``MPI_Send`` / ``MPI_Recv`` in domain ``MPI``).
    Why apart from the user's ranges: a host inside one in the GPU's idle waits for the other ranks, and runs none of
    the program's code (survey h37-survey14: pipit's MPI saxpy, 43 ms of each gap in ``MPI_Send`` / ``MPI_Recv``,
    named "the program's own ranges").  Empty where the capture has none."""
    if ranges is None or not ranges.idx.size:
        return np.zeros(0, np.int64)
    return ranges.idx[in_domains(ranges, nvtx.COMMUNICATION_DOMAINS)].astype(np.int64)


def waiting_communication_ranges(ranges: HostRanges | None) -> np.ndarray:
    """Host event indices of the communication ranges (:func:`communication_ranges`) of a library whose calls the host
    may sit in until its peers answer (``nvtx.WAITING_COMMUNICATION_DOMAINS``: MPI's, not NCCL's, whose calls enqueue
    and return).  Empty where the capture has none."""
    if ranges is None or not ranges.idx.size:
        return np.zeros(0, np.int64)
    return ranges.idx[in_domains(ranges, nvtx.WAITING_COMMUNICATION_DOMAINS)].astype(np.int64)


def program_ranges(trace: Trace, fw: Framework | None = None) -> np.ndarray:
    """Host event indices (ascending) of the ranges the program marks around its own code, none a framework op or a
    library's: Nsight's NVTX ranges (:func:`marked_ranges` less :func:`library_range_mask`), Kineto's
    ``user_annotation`` (``record_function``), and, given the framework ``fw``, XPlane's TraceMe ranges of the
    program (:func:`user_annotations`: a pass over every host event, which the step detection does not pay).
    Empty where the capture has none."""
    r = trace.ranges
    parts = []
    if r is not None and r.idx.size:
        # a framework's forward-hook markers (``HostRanges.framework``, told by their text) are its modules, not the
        # program's blocks: named ``model.layers.0``, no name rule can tell them (h37-fwnvtx3)
        # nor are a framework's own domain's (DeepSpeed's): its engine's calls, whatever their names (h37-nvtx22)
        mine = ~r.op & ~in_domains(r, nvtx.LIBRARY_DOMAINS | nvtx.FRAMEWORK_RANGE_DOMAINS)
        parts.append(r.idx[mine & ~r.framework if r.framework is not None else mine])
    if trace.annotations is not None and trace.annotations.size:
        parts.append(trace.annotations)
    elif fw is not None and (r is None or trace.format == "xplane") and trace.annotations is None:
        # XPlane: TraceMe ranges read like the runtime's -- beside the NVTX ranges CUPTI recorded, which are no TraceMe
        own = user_annotations(trace.h, fw)
        parts.append(own if r is None else np.setdiff1d(own, r.idx))
    if not parts:
        return np.zeros(0, np.int64)
    idx = np.unique(np.concatenate(parts)).astype(np.int64)
    # a library's own ranges (NCCL's, PyTorch's ``Optimizer.step#...``, ``nccl:all_reduce``) are not the user's code,
    # nor are those a framework writes around its own (Megatron-core's layer ranges, Lightning's ``[pl][...]``): the
    # findings that say where in the program's code the time goes name the user's regions, not the model's layers
    # (h37-fwnvtx2); the job and the steps read them still (:func:`marked_ranges`)
    h = trace.h
    return idx[~(h.per_name(nvtx.is_library_range) | h.per_name(nvtx.is_framework_range))[h.name[idx]]]


def user_annotations(h: HostEvents, fw: Framework) -> np.ndarray:
    """Host event indices (ascending) of the ranges the program marks itself, told from the runtime's events by
    position (module docstring); empty where the framework names no runtime events (nothing to tell them from)."""
    if fw.runtime_event is never or not len(h):
        return np.zeros(0, np.int64)
    own = h.name_mask(fw.runtime_event)
    # a step's marker or root spans the program's code too: it holds no runtime call's children
    container = own & (h.root < 0) & ~h.name_mask(tensorflow.is_step_root_name)
    bg_line = np.fromiter((fw.background_line(n) or tensorflow.is_background_line(n) for n in h.line_names),
                          dtype=bool, count=len(h.line_names))
    inside = _inside(h, container)
    nested_name = np.bincount(h.name[inside].astype(np.int64), minlength=len(h.names)) > 0
    # in place, one column at a time: each ``~x & y`` over the host table (2.25 M events, dense) was a temporary
    out = lookup_mask(nested_name, h.name)
    out |= own
    out |= inside
    out |= lookup_mask(bg_line, h.line)
    out |= h.name_mask(xla.is_python_tracer_event)
    user = np.logical_not(out, out=out)
    np.less(h.corr, 0, out=inside)  # ``inside`` is no longer needed: its column holds each test in turn
    user &= inside
    np.less(h.root, 0, out=inside)
    user &= inside
    np.greater(h.end, h.start, out=inside)
    user &= inside
    return np.flatnonzero(user).astype(np.int64)


def _inside(h: HostEvents, own: np.ndarray) -> np.ndarray:
    """Bool per event: not ``own`` and lying within an ``own`` event on its thread (within the union of them: a
    runtime call's children and their children).  One sort by thread, then each thread's slice: a capture has
    hundreds of threads and millions of events."""
    out = np.zeros(len(h), bool)
    ordered = h.line.size < 2 or bool((h.line[1:] >= h.line[:-1]).all())  # the XPlane reader's order: no sort
    by_line = None if ordered else np.argsort(h.line, kind="stable")  # ordered: slices, no index column (8 B/event)
    lines = h.line if by_line is None else h.line[by_line]
    edges = np.concatenate([[0], np.flatnonzero(lines[1:] != lines[:-1]) + 1, [lines.size]]).tolist()
    runs = {int(lines[a]): (a, b) for a, b in itertools.pairwise(edges) if b > a}
    for ln in np.unique(h.line[own]).tolist():
        a, b = runs[ln]
        ev = slice(a, b) if by_line is None else by_line[a:b]
        start, end, mine = h.start[ev], h.end[ev], own[ev]
        s, e = _union(start[mine], end[mine])
        other = ~mine
        k = searchsorted_right(s, start[other]) - 1  # a thread's events by start: merged, not searched one by one
        within = (k >= 0) & (end[other] <= e[np.maximum(k, 0)])
        if by_line is None:
            out[a:b][other] = within
        else:
            out[ev[other]] = within
    return out


def _union(s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint, sorted union of the intervals ``[s, e)``.  A thread's events come by start (the readers' order): then
    the stable sort, the identity, is skipped."""
    if s.size > 1 and not bool((s[1:] >= s[:-1]).all()):
        o = np.argsort(s, kind="stable")
        s, e = s[o], e[o]
    s, e = s.astype(np.int64, copy=False), e.astype(np.int64, copy=False)
    run = np.maximum.accumulate(e)
    new = np.ones(s.size, bool)
    new[1:] = s[1:] > run[:-1]
    idx = np.flatnonzero(new)
    return s[idx], np.maximum.reduceat(run, idx)
