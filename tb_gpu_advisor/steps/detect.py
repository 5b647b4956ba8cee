"""Find training steps in any capture and map them to per-GPU time windows.

Sources, tried in order (the first that yields steps wins; see
``docs/metrics.md``):

1. ``steps_line``           -- derived ``Steps`` line on GPU planes (TF 2.4-style grouped files);
2. ``iteration_range``      -- a training wrapper's own range around each whole iteration (Lightning's
   ``run_training_batch``, ``frameworks.pytorch.is_iteration_range``): it bounds an iteration, where the profiler's
   marks only bound the interval between two ``prof.step()`` calls, which Lightning makes mid-iteration;
   ``profiler_step``        -- else step annotations the format itself defines (PyTorch ``ProfilerStep#N``);
3. ``keras_profiled_batch`` -- Keras 3 ``Profiled batch`` host events with ``step_num``;
4. ``trace_train``          -- ``train*``/``test*`` host events (TF ``Trace``, JAX ``StepTraceAnnotation``), or ``TraceContext``;
   else the program's own step marks of any name (``_r`` with ``step_num``: ``Trace('predict', ...)``);
5. ``root_r``               -- other host events with ``_r`` (the most frequent such name);
6. ``step_num_stat``        -- host events carrying ``step_num`` / ``iter_num`` (grouped by value);
7. ``xla_modules``          -- ``XLA Modules`` line events (JAX / XLA), the most frequent module;
8. ``xla_module_launches``  -- host ``<module>:XLA GPU module`` events (raw JAX files), the most frequent module;
   never one run several times inside each of the program's own repeated spans (``job.structure``): one op of an
   un-jitted program, not its step (:func:`.xla_modules._runs_several_per_span`);
9. ``nvtx_range`` / ``nvtx_top_range`` -- NVTX ranges (Nsight Systems): ``ProfilerStep#N`` or a user range named
   like a step or iteration, or a framework's own range closing each iteration (DeepSpeed's optimizer ``step``);
   else the most repeated top-level user range (``frameworks.nvtx``); Kineto's ``record_function`` annotations named
   like a step alike (``nvtx_range``: each rank's own, :func:`.nvtx_ranges._annotation_steps`);
10. ``engine_steps`` / ``annotation_spans`` -- the program's own repeated spans (``job.structure``): a serving
   engine's ``execute_model``, a user's ``record_function`` or ``train_step`` (repeated by several ranks' processes:
   each rank's own, :func:`.nvtx_ranges._span_lines`); else, for training,
   ``step_end_events``: from one optimizer step's end to the next (PyTorch without ``prof.step()``); else
   ``repeated_launches``: the period of the launch sequence, where the host pauses between its repeats
   (``job.period``); else a training range or a serving engine's step range (TensorRT-LLM's ``_forward_step``)
   repeated, each iteration opened by the phase before it (``nvtx_top_range``); else one thread's graph launches
   inside the job's frame, each to the next (``repeated_launches``, :func:`_framed_graph_launches`), or, where the
   frame holds an eager pass and only one or two of them, the frame as one pass (``single_pass``,
   :func:`_framed_graph_pass`); else ``gpu_busy_clusters`` inside the
   job's frame (``job.frame``: the program's one range around some of the GPU's bursts, each ended by the host's sync
   or a long pause), its bursts the steps; else, for training where the launches show no period, the runs of
   ranges that mark only the forward's parts (Megatron-core's layer ranges), a backward and the host's wait between
   every two, each from its first range to the next's (``nvtx_top_range``, :mod:`.forward_runs`); else, outside training, ``single_pass`` of the one burst inside the
   program's one range after warm-ups of the same work (:func:`_framed_pass`: the one pass a benchmark times);
11. ``single_pass``          -- a capture of inference work with no repeated structure: one forward pass, one step;
12. ``gpu_busy_clusters``    -- clusters of GPU activity separated by unusually long idle gaps (none the host spends
   inside one op: :func:`_gaps_inside_one_range`); where no work runs in most bursts (they are pieces of iterations),
   ``recurring_events``: the turns of the kernels or copies that run once in each iteration, in the same order
   (:mod:`.recurring`);
13. ``whole_capture``        -- one window over everything, with a note why.

Each source carries a confidence (:data:`CONFIDENCE`): the format's own markers are sure, the program's spans
likely, GPU busy clusters a guess -- what rests on the steps says so.  Steps that hold the capture's one-time costs
(``job.phase``: module loading, library start-up, compilation) are dropped as warm-up where steady steps remain.

Host-defined steps tile time: step k runs from its marker's start to the
next marker's start (the gap before the next step belongs to step k, as in
the stock tool's step-to-step time); the last step ends at the later of its
marker's end and the end of the last device event launched inside it
(host launch -> kernel via ``correlation_id``); a GPU's own last step, placed at its work, runs past that work by the
idle gap every step before it shows.  Like the stock tool, when
more than 5 steps are found the first (warm-up) and last (partial) are
dropped; with fewer, a last host-marked step that launched no GPU work (the
empty step a final ``prof.step()`` opens after the loop) is dropped.

Each reading lives in its own module: :mod:`.markers` (1-6), :mod:`.xla_modules` (7-8), :mod:`.nvtx_ranges`,
:mod:`.iterations` and :mod:`.ranges` (9), :mod:`.top_ranges`, :mod:`.framed` and :mod:`.forward_runs` (10), :mod:`.passes` (11, 13),
:mod:`.bursts` and :mod:`.burst_steps` (12); then :mod:`.place` (windows onto time and GPUs), :mod:`.head`,
:mod:`.ends` and :mod:`.drop` (partial and warm-up steps).  This module chooses among them (:func:`detect_steps`).
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import frameworks
from tb_gpu_advisor.frameworks import Framework
from tb_gpu_advisor.job import Job
from tb_gpu_advisor.job.structure import executed_programs
from tb_gpu_advisor.model.trace import Trace, line_processes
from tb_gpu_advisor.steps.burst_steps import _burst_steps
from tb_gpu_advisor.steps.drop import _drop_steps
from tb_gpu_advisor.steps.ends import _grouped_after_last_mark
from tb_gpu_advisor.steps.forward_runs import _forward_run_steps
from tb_gpu_advisor.steps.framed import (FrameBursts, FramedSteps, OnePass, _framed_bursts, _framed_graph_launches,
                                         _framed_graph_pass, _framed_pass, _marked_pass)
from tb_gpu_advisor.steps.iterations import _spans_inside_iterations
from tb_gpu_advisor.steps.markers import (_gpu_step_line_windows, _host_candidates, _iteration_range_steps,
                                          _last_step_mark_end, _marked_host_steps, _own_marked_windows,
                                          _unrecorded_by_gpu)
from tb_gpu_advisor.steps.nvtx_ranges import _nvtx_steps, _span_lines
from tb_gpu_advisor.steps.passes import _one_pass, _one_pass_step, _whole_capture
from tb_gpu_advisor.steps.place import _place_windows
from tb_gpu_advisor.steps.reading import _Kept, _Reading
from tb_gpu_advisor.steps.top_ranges import _engine_range_steps, _training_range_steps
from tb_gpu_advisor.steps.types import (CONFIDENCE, PS_PER_MS, DroppedStep, StepDetection, Steps, StepWindow,
                                        source_label)
from tb_gpu_advisor.steps.windows import MarkedSteps
from tb_gpu_advisor.steps.xla_modules import (_runs_several_per_span, _xla_launch_steps,
                                              _xla_module_steps)


#: Why a capture of the GPUs' collectives alone (``Job.kind.window`` "collectives_only") is read as one pass: its GPU
#: bursts are its collectives, not the job's steps -- read from them, TraceLens' NCCL-only filter of a 4-rank DDP was
#: 7 guessed 16.1 ms steps in every table beside a header saying "no step of the job in it" (h37-nccl67).
COLLECTIVES_ONLY_NOTE = ("the capture kept the GPUs' collectives alone, a filter of a fuller trace: its bursts are its "
                         "collectives, not the job's steps, so the whole capture is one pass and no step is timed")


#: The same window where the collectives are a CPU backend's (``Kind.collectives_backend``: Gloo, MPI): no GPU work,
#: no op and no step mark, so nothing to cut into steps -- not the GPUs' bursts of a filter (h37-gloo68).
COLLECTIVES_ONLY_CPU_NOTE = ("the capture kept {backend}'s collectives alone, on the CPU: no op, no step mark and no GPU "
                             "work, so the whole capture is one pass and no step is timed")


def detect_steps(trace: Trace, launches: list[np.ndarray] | None = None, job: Job | None = None,
                 fw: Framework | None = None) -> Steps:
    """Detect steps; see the module docstring.  ``launches``: per GPU, each device event's host launch record
    (:func:`~tb_gpu_advisor.model.trace.device_launches`; computed here when not given); ``job``: what the capture
    is (its own step spans, its one-time costs), None for a bare reading of the markers; ``fw``: the capture's
    framework (``frameworks.detect_trace``'s; read here when not given), whose profiler's step marks and words for
    the program's ranges the readings ask (``Framework.own_step_marks``, ``frameworks.ranges_word``)."""
    r = _Reading(trace, launches, job.waits if job is not None else None)
    r.fw = fw or frameworks.detect_trace(trace)
    r.training = job is not None and job.kind.kind == "training"
    if trace.gpu_step_lines:  # 1. the format's own per-GPU step line
        r.ids, r.hs, r.he, r.gpu_windows = _gpu_step_line_windows(trace.gpu_step_lines)
        r.source, r.note = trace.gpu_step_source or ("steps_line", "derived `Steps` line on the GPU planes (grouped capture)")
        r.mapped = "group_id" if trace.gpu_step_source is None else "device"
        _grouped_after_last_mark(r, _last_step_mark_end(trace, r.fw))
        r.host_own = _own_marked_windows(trace, r.ids, int(r.he[-1]) if r.he.size else 0)
        r.unopened, r.closed = _unrecorded_by_gpu(trace.gpu_step_lines, r.ids, r.hs, r.he, r.gpu_windows)
    elif job is not None and job.kind.window == "collectives_only":  # a filter of a fuller trace to its collectives
        cpu = job.kind.collectives_backend  # or a CPU backend's collectives alone: no GPU burst to read at all
        r.whole_note = COLLECTIVES_ONLY_CPU_NOTE.format(backend=cpu) if cpu else COLLECTIVES_ONLY_NOTE
    else:
        _read_steps(r, job)
        _place_windows(r)
    found = int(r.ids.size)
    if found == 0:
        _whole_capture(r)
    kept = _Kept(r.ids, r.hs, r.he, r.gpu_windows, r.host_own)
    dropped = _drop_steps(r, kept, found, job)
    return _steps(r, kept, found, dropped)


def _read_steps(r: _Reading, job: Job | None) -> None:
    """Sources 2-12 in the module docstring's order, the first that reads steps wins: the host's step marks, XLA's
    modules, NVTX ranges, the program's own repeated spans, a training range, bursts inside the job's frame, one
    inference pass, the GPU's bursts.  Nothing read leaves the steps empty (the whole capture, with ``whole_note``)."""
    trace, h = r.trace, r.trace.h
    cand = _iteration_range_steps(trace) or _marked_host_steps(trace) or _host_candidates(h, r.fw)
    if cand is not None:
        r.take(cand, "host_window")
        return
    xla = _xla_module_steps(trace) or _xla_launch_steps(h, line_processes(trace), executed_programs(trace, r.launched))
    own = job.structure if job is not None else None
    if _runs_several_per_span(xla, own):
        xla = None  # one op of an un-jitted program, run several times in each of the program's own iterations
    if xla is None and r.launches is None and (trace.ranges is not None and trace.ranges.idx.size
                                               or trace.annotations is not None and trace.annotations.size):
        r.launched()
    marked = _nvtx_steps(trace, r.launches, job) if xla is None else None
    if own is not None and not own.timed:  # counted by order in a capture with no times: said, not timed
        r.whole_note, own = own.note, None
    inside = _spans_inside_iterations(trace, own) if own is not None else ""
    if inside:  # a micro-batch's spans: no iteration each
        own = None
    r.own = own
    trained = (_training_range_steps(trace, job) or _engine_range_steps(trace, job, r.launched())
               if marked is None and own is None else None)
    bursts = FrameBursts(trace, r.active, r.waits)  # cut on first need, once for both framed readings
    framed = (_framed_graph_launches(trace) or _framed_graph_pass(trace, job) or _framed_bursts(trace, bursts)
              if xla is None and marked is None and own is None
              and trained is None else None)
    if xla is not None:
        r.take(xla, "device")
    elif marked is not None:
        r.take(marked, "host_window")
    elif own is not None and (one := _marked_pass(trace, own.start, job, own.per_line)) is not None:
        r.own = None  # the user's one range around none of the repeats: it is the pass
        _take_pass(r, one, "host_window")
    elif own is not None and own.source == "annotation_spans" and (
            ranked := _span_lines(trace, own, r.launched())) is not None:
        r.take(ranked, "host_window")  # each rank's own repeats on its own thread
    elif own is not None:
        r.take_spans(own.source, own.note, own.start, own.end, "host_window")
        if own.source == "repeated_launches":  # each rank's own repeats (``job.period._each_process``)
            r.per_line = own.per_line
    elif trained is not None:
        r.take(trained, "host_window")
    elif framed is not None:
        _take_framed(r, framed)
    elif (runs := _forward_runs(trace, r, job)) is not None:  # xla and marked None: the branches above
        r.take(runs, "host_window")
    elif (one := _framed_pass(trace, bursts, job)) is not None:
        _take_pass(r, one, "device")
    elif job is not None and job.periodic is not None and job.periodic.source == "device_period":
        r.own = job.periodic  # a kernel trace's iterations by its stream's period: GPU windows, no launch to map
        r.take_spans("device_period", job.periodic.note, job.periodic.start, job.periodic.end, "device")
    elif _one_pass(job, r.active):
        _one_pass_step(r, job)
    else:
        _burst_steps(r, job)
    r.note += inside if r.source else ""


def _take_pass(r: _Reading, one: OnePass, mapped: str) -> None:
    """The one pass a benchmark times (:class:`~.framed.OnePass`) as the capture's one step, ``single_pass``."""
    r.take_spans("single_pass", one.note, np.array([one.start], np.int64), np.array([one.end], np.int64), mapped)


def _take_framed(r: _Reading, framed: FramedSteps) -> None:
    """A framed reading (:class:`~.framed.FramedSteps`) as the steps: a graph launch per iteration is the host's mark
    (``host_window``, each rank's own launches its ``per_line``); a burst is the GPU's (``device``, each GPU's own
    process's bursts its ``gpu_own``)."""
    mapped = "device" if framed.source == "gpu_busy_clusters" else "host_window"
    r.take_spans(framed.source, framed.note, framed.starts, framed.ends, mapped)
    r.per_line, r.gpu_own = framed.per_line, framed.gpu_own


def _forward_runs(trace: Trace, r: _Reading, job: Job | None) -> MarkedSteps | None:
    """The forward runs' reading (:func:`~tb_gpu_advisor.steps.forward_runs._forward_run_steps`) where the job's
    launch sequence shows no period (``Job.periodic``): where it does, the period's repeats are the iterations, each from
    the loop's own boundary (the batch's upload, not its forward), and that reading stands."""
    if job is None or job.periodic is not None:
        return None
    return _forward_run_steps(trace, r.launched(), job)


def _steps(r: _Reading, kept: _Kept, found: int, dropped: list[DroppedStep]) -> Steps:
    """The kept steps as :class:`Steps`: host windows, each GPU's windows (the host's where not placed apart), the
    detection's record in the trace viewer's ms."""
    ids, hs, he, gpu_windows = kept.ids, kept.hs, kept.he, kept.gpu
    origin = r.trace.viewer_zero_ps  # ms are counted as the trace's viewer counts them (links land on their step)
    host_w = np.stack([hs, he], axis=1) if ids.size else np.zeros((0, 2), np.int64)
    for d in r.trace.devices:
        gpu_windows.setdefault(d.gpu, host_w)
    gpu_next = {g: kept.gpu_next.get(g, kept.next_start) for g in gpu_windows}
    det = StepDetection(
        source=r.source, count=int(ids.size), found=found if r.source != "whole_capture" else 0, dropped=dropped,
        note=r.note + (r.inherited if ids.size and int(ids[0]) == kept.first else ""),
        # Python numbers, not numpy scalars, through the loop: a numpy scalar per step and field was 17 ms on 1,410 steps
        windows=[StepWindow(int(i), (int(s) - origin) / PS_PER_MS, (int(e) - origin) / PS_PER_MS)
                 for i, s, e in zip(ids.tolist(), hs.tolist(), he.tolist())],
        mapped_via=r.mapped, confidence=_confidence(r),
        iteration_guess=r.guessed and r.source == "whole_capture",
        unlike_bursts=r.unlike if r.source == "whole_capture" else 0,
        label=source_label(r.source, frameworks.ranges_word(r.trace, r.fw)) or "",
        sweep=r.own.sweep if r.own is not None and r.own.source == r.source else "",
    )
    return Steps(det, ids.astype(np.int64), host_w, gpu_windows, origin, kept.next_start, gpu_next, kept.prev_id,
                 host_own=kept.host_own)


_RANK = ("low", "medium", "high")


def _confidence(r: _Reading) -> str:
    """The steps' confidence: their source's (:data:`CONFIDENCE`), lowered to the job's own reading's where it says
    less of itself (``SpanSteps.confidence``: a loop of one kernel read from the host's waits alone is a guess)."""
    c = CONFIDENCE.get(r.source, "low")
    own = r.own.confidence if r.own is not None and r.own.source == r.source else c
    return min(c, own, key=lambda x: _RANK.index(x) if x in _RANK else 0)
