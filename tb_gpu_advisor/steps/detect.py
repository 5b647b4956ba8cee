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
5. ``root_r``               -- other host events with ``_r`` (the most frequent such name);
6. ``step_num_stat``        -- host events carrying ``step_num`` / ``iter_num`` (grouped by value);
7. ``xla_modules``          -- ``XLA Modules`` line events (JAX / XLA), the most frequent module;
8. ``xla_module_launches``  -- host ``<module>:XLA GPU module`` events (raw JAX files), the most frequent module;
9. ``nvtx_range`` / ``nvtx_top_range`` -- NVTX ranges (Nsight Systems): ``ProfilerStep#N`` or a user range named
   like a step or iteration, or a framework's own range closing each iteration (DeepSpeed's optimizer ``step``);
   else the most repeated top-level user range (``frameworks.nvtx``);
10. ``engine_steps`` / ``annotation_spans`` -- the program's own repeated spans (``job.structure``): a serving
   engine's ``execute_model``, a user's ``record_function`` or ``train_step``; else, for training,
   ``step_end_events``: from one optimizer step's end to the next (PyTorch without ``prof.step()``); else
   ``repeated_launches``: the period of the launch sequence, where the host pauses between its repeats
   (``job.period``); else a training range or a serving engine's step range (TensorRT-LLM's ``_forward_step``)
   repeated, each iteration opened by the phase before it (``nvtx_top_range``); else ``gpu_busy_clusters`` inside the
   job's frame (``job.frame``: the program's one range around some of the GPU's bursts, each ended by the host's sync
   or a long pause), its bursts the steps; else, outside training, ``single_pass`` of the one burst inside the
   program's one range after warm-ups of the same work (:func:`_framed_pass`: the one pass a benchmark times);
11. ``single_pass``          -- a capture of inference work with no repeated structure: one forward pass, one step;
12. ``gpu_busy_clusters``    -- clusters of GPU activity separated by unusually long idle gaps (none the host spends
   inside one op: :func:`_gaps_inside_one_range`);
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
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from tb_gpu_advisor.common.fmt import ms as fmt_ms, plural
from tb_gpu_advisor import devices, frameworks
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.frameworks import engines, nvtx, pytorch, tensorflow, user_ranges, xla
from tb_gpu_advisor.job import Job
from tb_gpu_advisor.job import structure as job_structure
from tb_gpu_advisor.job.frame import apart, frame
from tb_gpu_advisor.job.structure import SpanSteps
from tb_gpu_advisor.model.columns import (reduce_at, rising_runs, searchsorted_right, sorted_unique, union_intervals,
                                          window_index_by_runs)
from tb_gpu_advisor.model.trace import DeviceEvents, HostEvents, Trace, device_launches

PS_PER_MS = 1e9
#: Host TraceMe around each execution of a compiled XLA module on a GPU
#: (``xla/service/gpu/gpu_executable.cc``: ``<module name>:XLA GPU module``).


StepSource = Literal[
    "steps_line",  # TF 2.4-style derived `Steps` line on the GPU planes (grouped capture)
    "keras_profiled_batch",  # Keras 3 `Profiled batch` host events with `step_num`
    "trace_train",  # `train*`/`test*` host events with `_r` (tf.profiler.experimental.Trace, Keras 2)
    "root_r",  # other host events carrying `_r` (e.g. `FunctionRun`, `SessionRun`)
    "step_num_stat",  # host events carrying `step_num` / `iter_num`
    "profiler_step",  # PyTorch: `ProfilerStep#N` host annotations (the format's own step marks)
    "iteration_range",  # a training wrapper's range around each whole iteration (Lightning's `run_training_batch`)
    "xla_modules",  # JAX / XLA: one `XLA Modules` event per step (post-processed files)
    "xla_module_launches",  # raw JAX files: one host `<module>:XLA GPU module` execution per step
    "nvtx_range",  # Nsight Systems: NVTX `ProfilerStep#N` or user ranges named like a step or iteration
    "nvtx_top_range",  # Nsight Systems: the most repeated top-level user NVTX range
    "engine_steps",  # a serving engine's own step span (vLLM ``execute_model``)
    "annotation_spans",  # the program's repeated spans that hold most of the GPU work
    "repeated_launches",  # the period of the launch sequence, the host pausing between repeats
    "device_period",  # a kernel trace alone (no launch recorded): a training job's stream period, by the GPU's idle
    "step_end_events",  # a training loop's step ends (PyTorch's optimizer steps), no markers
    "single_pass",  # inference with no repeated structure: the capture is one forward pass
    "gpu_busy_clusters",  # last resort: clusters of GPU busy time separated by long idle gaps
    "whole_capture",  # no step found: the whole capture is one "step"
]

#: Each step source in a few words any capture's user reads (the tab's host line: "13 steps (step markers)"): the id is
#: the JSON's, never the screen's.
SOURCE_LABEL = {"steps_line": "the profile's Steps line", "keras_profiled_batch": "Keras batch markers",
                "trace_train": "step markers", "root_r": "step roots", "step_num_stat": "step numbers",
                "profiler_step": "ProfilerStep marks", "iteration_range": "the training loop's iteration ranges",
                "xla_modules": "XLA module runs",
                "xla_module_launches": "XLA module launches", "nvtx_range": "NVTX step ranges",
                "nvtx_top_range": "a repeated NVTX range", "engine_steps": "the engine's steps",
                "annotation_spans": "repeated annotated spans", "repeated_launches": "repeating launches",
                "device_period": "the GPU's repeating kernels",
                "step_end_events": "optimizer steps", "single_pass": "one pass",
                "gpu_busy_clusters": "GPU bursts, a guess", "whole_capture": "the whole capture"}

#: Step sources whose step number counts the iterations before it (``ProfilerStep#N``, Keras' and TF's ``step_num``);
#: a whole capture's or a single pass's "step 0" is an index, not a count.
COUNTED_SOURCES = ("profiler_step", "keras_profiled_batch", "step_num_stat")

#: How sure each step source is that its windows are the job's steps.
CONFIDENCE = {"steps_line": "high", "profiler_step": "high", "iteration_range": "high", "keras_profiled_batch": "high", "trace_train": "high",
              "root_r": "medium", "step_num_stat": "medium", "xla_modules": "high", "xla_module_launches": "medium",
              "nvtx_range": "high", "nvtx_top_range": "medium",
              "engine_steps": "high", "annotation_spans": "medium", "repeated_launches": "medium", "device_period": "medium",
              "step_end_events": "medium", "memory_iterations": "medium",
              "single_pass": "medium",
              "gpu_busy_clusters": "low", "whole_capture": "low"}

#: the sources whose one step is no step the capture marks: the whole window, or the one pass it was read as, which may
#: hold several calls of the model launched back to back -- the job's own word for its step ("forward pass") does not
#: fit them, and the GPU's idle after such a window's last work is the program's own tail
UNMARKED_SOURCES: tuple[str, ...] = ("whole_capture", "single_pass")


def unmarked_pass(count: int | None, source: str | None) -> bool:
    """One step kept and it is the pass an unmarked capture was read as (:data:`UNMARKED_SOURCES`): the capture numbers
    no step, so no surface -- the report's text, the tab's axis, host line and memory peak -- calls it "step 0".  One
    home for the test every surface asks (h37-tabpass: the tab said "step 0" where the report said "the pass")."""
    return count == 1 and source in UNMARKED_SOURCES


@dataclass
class DroppedStep:
    """A detected step left out of the averages."""

    step: int  # step number (step_num if the capture has one, else 0-based index)
    reason: str  # "warm-up (first of >5 steps)", "partial (last of >5 steps)", "cut by capture start", ...
    #: where the step lay (absolute ps, ``[start, end)``) as a kept one's window would: host-wide, and per GPU where its
    #: GPU windows are placed apart (``Steps.gpu_windows``); None where it had none.  What a dropped step held is told
    #: by its own window (a warm-up peak's step), not by its place among the dropped
    window: tuple[int, int] | None = None
    gpu_windows: dict[int, tuple[int, int]] = field(default_factory=dict)


def _dropped(k: int, ids: np.ndarray, hs: np.ndarray, he: np.ndarray, gpu_windows: dict[int, np.ndarray],
             reason: str) -> DroppedStep:
    """Step ``k`` (an index into the steps still kept) dropped for ``reason``, with its windows."""
    return DroppedStep(int(ids[k]), reason, (int(hs[k]), int(he[k])),
                       {g: (int(w[k, 0]), int(w[k, 1])) for g, w in gpu_windows.items() if k < w.shape[0]})


@dataclass
class StepWindow:
    """One kept step as a host-wide time window (ms in the trace viewer's time base, ``Steps.origin_ps``)."""

    step: int
    start_ms: float
    end_ms: float

    @property
    def duration_ms(self) -> float:
        return self.end_ms - self.start_ms


@dataclass
class StepDetection:
    """How steps were found.  ``count`` = kept steps (after dropping)."""

    source: str  # a StepSource value
    count: int
    found: int  # steps detected before dropping
    dropped: list[DroppedStep] = field(default_factory=list)
    note: str = ""  # human sentence: why this source, what was dropped, why whole-capture
    windows: list[StepWindow] = field(default_factory=list)  # kept steps, in time order
    mapped_via: str = ""  # "host_window" | "correlation_id" | "group_id" | "device" : how GPU time was tied to steps
    confidence: str = "high"  # CONFIDENCE of the source: "low" steps make every per-step number a guess
    #: the whole capture is one step because this stage read the window as (at most) one iteration from its GPU
    #: bursts -- a guess the per-step savings rest on; False where no step was found and the window is only analysed
    #: as one step, its numbers exact for the window (``rules._step_confidence`` tells the two apart)
    iteration_guess: bool = False
    #: the GPU's bursts this stage refused as iterations because they run unlike work on a GPU idle nearly all their
    #: span (``_unlike_bursts``: a first call, its compile on the host between them); 0 where none was refused so
    unlike_bursts: int = 0


@dataclass
class Steps:
    """Kept steps.  Windows in absolute ps; ``gpu_windows[g]`` is (n, 2) aligned with ``ids``."""

    detection: StepDetection
    ids: np.ndarray  # int64 step numbers
    host_windows: np.ndarray  # (n, 2) int64
    gpu_windows: dict[int, np.ndarray] = field(default_factory=dict)
    #: what every ``*_ms`` time counts from: the trace viewer's 0 (``Trace.viewer_zero_ps``)
    origin_ps: int = 0
    #: per kept step, where the step after it in the capture starts (ps; kept or dropped: a warm-up step, the stock
    #: rule's last), -1 where none follows: a step's period runs from its start to there, and the gap after it ends
    #: there, whichever steps the averages keep (h37-left46)
    next_starts: np.ndarray | None = None
    gpu_next_starts: dict[int, np.ndarray] = field(default_factory=dict)
    #: per kept step, the id of the step before it in the capture (kept or dropped), -1 where none precedes it: a
    #: kept step after a dropped one holds the end of the gap between them (its leading idle)
    prev_ids: np.ndarray | None = None

    @property
    def count(self) -> int:
        return int(self.ids.shape[0])

    def window(self, gpu: int | None) -> np.ndarray:
        return self.gpu_windows.get(gpu, self.host_windows) if gpu is not None else self.host_windows

    def next_start(self, gpu: int | None) -> np.ndarray:
        """Per kept step: the start (ps) of the step after it in the capture on ``gpu``'s windows, -1 where none."""
        nxt = self.gpu_next_starts.get(gpu) if gpu is not None else None
        if nxt is None:
            nxt = self.next_starts
        if nxt is None:  # made by hand from kept windows alone: the next kept step's start
            w = self.window(gpu)
            nxt = np.append(w[1:, 0], -1).astype(np.int64) if w.shape[0] else np.zeros(0, np.int64)
        return nxt


def _group_windows(key: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per distinct key: (keys, min start, max end), sorted by start."""
    u, inv = np.unique(key, return_inverse=True)
    s = np.full(u.size, np.iinfo(np.int64).max, dtype=np.int64)
    e = np.full(u.size, np.iinfo(np.int64).min, dtype=np.int64)
    np.minimum.at(s, inv, start)
    np.maximum.at(e, inv, end)
    o = np.argsort(s, kind="stable")
    return u[o], s[o], e[o]


def _host_candidates(h: HostEvents) -> tuple[str, str, np.ndarray, np.ndarray, np.ndarray] | None:
    """(source, note, ids, starts, ends) of the first host step source that has events."""
    if not len(h):
        return None
    pb = h.name_mask(lambda n: n == tensorflow.KERAS_BATCH_EVENT)
    if pb.any():
        sn = h.step_num[pb]
        ids = np.where(sn >= 0, sn, np.arange(pb.sum()))
        u, s, e = _group_windows(ids, h.start[pb], h.end[pb])
        return "keras_profiled_batch", "Keras 3 `Profiled batch` events (step_num)", u, s, e
    tr = h.name_mask(lambda n: bool(tensorflow.STEP_ROOT.match(n)) or n == tensorflow.TRACE_CONTEXT_EVENT)
    tr &= (h.root >= 0) | (h.step_num >= 0) | h.name_mask(lambda n: n == tensorflow.TRACE_CONTEXT_EVENT)
    if tr.any():
        sn = h.step_num[tr]
        ids = np.where(sn >= 0, sn, np.arange(tr.sum()))
        u, s, e = _group_windows(ids, h.start[tr], h.end[tr])
        return "trace_train", "`train`/`test` step markers", u, s, e
    rt = h.root >= 0
    if rt.any():
        names, counts = np.unique(h.name[rt], return_counts=True)
        best = names[np.argmax(counts)]
        m = rt & (h.name == best)
        # nested roots of the same name (re-entrant) are merged
        s, e = union_intervals(h.start[m], h.end[m])
        return "root_r", f"step roots `_r` on `{h.names[best]}` events", np.arange(s.size, dtype=np.int64), s, e
    for stat, arr in (("step_num", h.step_num), ("iter_num", h.iter_num)):
        m = arr >= 0
        if m.any() and sorted_unique(arr[m]).size >= 2:
            u, s, e = _group_windows(arr[m], h.start[m], h.end[m])
            return "step_num_stat", f"host events grouped by `{stat}`", u, s, e
    return None


def _program_busy(devs: list[DeviceEvents]) -> tuple[list[DeviceEvents], list[np.ndarray], np.ndarray, np.ndarray] | None:
    """(the devices with events, each one's mask of the program's own work, the union's starts and ends) -- Unified
    Memory migrations left out (:func:`_busy_clusters` says why); None with fewer than 4 events or 3 busy intervals,
    too few to cut into bursts.  The one reading :func:`_busy_clusters` and :func:`_framed_bursts` cut."""
    own = [d for d in devs if len(d)]
    keep = [~devices.managed_migration(d.names)[d.name] for d in own]
    st = np.concatenate([d.start[k] for d, k in zip(own, keep)]) if own else np.zeros(0, np.int64)
    en = np.concatenate([d.end[k] for d, k in zip(own, keep)]) if own else np.zeros(0, np.int64)
    if st.size < 4:
        return None
    us, ue = union_intervals(st.astype(np.int64, copy=False), en.astype(np.int64, copy=False))
    return (own, keep, us, ue) if us.size >= 3 else None


def _cluster_gap(gaps: np.ndarray) -> float:
    """The idle gap (ps) past which the GPU's bursts are apart: ``steps.cluster_gap_factor`` times the median gap,
    at least ``steps.cluster_min_gap_ms``."""
    return max(T("steps.cluster_gap_factor") * float(np.median(gaps)), T("steps.cluster_min_gap_ms") * PS_PER_MS)


def _busy_clusters(devs: list[DeviceEvents], h: HostEvents | None = None, launches: list[np.ndarray] | None = None,
                   refused: list[str] | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """Bursts of the work the program launched, apart by unusually long idle gaps.  Unified Memory migrations are
    left out: the driver makes them, in bursts of its own, whenever the host touches managed memory the GPU last
    wrote (a result check after the kernel: thousands of page-sized copies in ~2 ms bursts), or in chunks of its
    choosing for the program's ``cudaMemPrefetchAsync``, so they would make steps of the host's paging and leave the
    program's kernels out as the first or last "step".  A long gap inside one host op or range that recurs within
    the iterations is no boundary (:func:`_gaps_inside_one_range`; with ``h`` and ``launches``, each of ``devs``'s
    host launch records): the names of the ranges that held refused gaps go to ``refused``."""
    busy = _program_busy(devs)
    if busy is None:
        return None
    own, keep, us, ue = busy
    gaps = us[1:] - ue[:-1]
    big = np.nonzero(gaps > _cluster_gap(gaps))[0]
    if h is not None and launches is not None and big.size:
        inside = _gaps_inside_one_range(h, own, [la for d, la in zip(devs, launches) if len(d)], us, ue, big)
        if refused is not None:
            refused += [n for n in dict.fromkeys(inside.tolist()) if n]
        big = big[np.asarray([not n for n in inside.tolist()], dtype=bool)]
    if big.size < 1 or big.size > us.size // 2:
        return None
    starts = np.concatenate([[us[0]], us[big + 1]])
    ends = np.concatenate([ue[big], [ue[-1]]])
    if not _bursts_repeat(own, keep, starts):
        return None
    return starts, ends


def _gaps_inside_one_range(h: HostEvents, own: list[DeviceEvents], launches: list[np.ndarray], us: np.ndarray,
                           ue: np.ndarray, big: np.ndarray) -> np.ndarray:
    """Per long idle gap (``big``: indices into the GPU's busy intervals ``us``/``ue``, the gap after each), the name of
    the host event that holds it, "" where none does: an event on the thread that launched the work after the gap
    that began before the GPU fell idle and ends after that launch returned, and whose name recurs more often than
    the GPU's bursts (an op, a layer's range: many per iteration).

    Why: an iteration ends between the host's ops, never inside one -- its sync returns, the loop turns, the next
    iteration's first op launches.  A gap the host spends inside one op that launched nothing yet (``aten::linear``'s
    cuBLAS set-up after a pageable copy's sync, on an FSDP forward 90% busy: a 1.0 ms idle among microsecond gaps,
    read as a step boundary that cut a 300 ms slice of one forward into "steps" of 290 and 10 ms) is that op's.  A
    name that recurs no more often than the bursts may mark the iterations themselves (a ``train_step`` range the
    host opens ahead of its GPU, a data loader's ``__next__``), or wrap the loop (one range around it all): a gap
    inside it may be a boundary, so it is left to the gaps' length."""
    out = np.full(big.size, "", dtype=object)
    if not len(h) or not big.size:
        return out
    counts = np.bincount(h.name.astype(np.int64), minlength=len(h.names))
    often = counts[h.name.astype(np.int64)] > big.size + 1  # recurs more often than there are bursts
    # per gap: the first work after it that has a launch record, on any GPU -- its launch call's thread and end
    nxt = np.full(big.size, -1, np.int64)
    nxt_t = np.full(big.size, np.iinfo(np.int64).max, np.int64)
    for d, launch in zip(own, launches):
        st = d.start.astype(np.int64, copy=False)
        order = np.flatnonzero(launch >= 0)
        order = order[np.argsort(st[order], kind="stable")]
        if not order.size:
            continue
        j = np.searchsorted(st[order], us[big + 1], side="left")
        ok = j < order.size
        cand = order[np.minimum(j, order.size - 1)]
        better = ok & (st[cand] < nxt_t)
        nxt_t[better], nxt[better] = st[cand[better]], launch[cand[better]]
    has = nxt >= 0
    if not has.any():
        return out
    lines = h.line.astype(np.int64, copy=False)
    for ln in np.unique(lines[nxt[has]]).tolist():
        ev = np.flatnonzero((lines == ln) & often)
        if not ev.size:
            continue
        ev = ev[np.argsort(h.start[ev], kind="stable")]
        st, reach = h.start[ev].astype(np.int64), np.maximum.accumulate(h.end[ev].astype(np.int64))
        for k in np.flatnonzero(has & (lines[np.maximum(nxt, 0)] == ln)).tolist():
            gs, lend = int(ue[big[k]]), int(h.end[nxt[k]])
            p = int(np.searchsorted(st, gs, side="left")) - 1  # events begun before the GPU fell idle
            if p < 0 or reach[p] <= lend:
                continue
            q = int(np.flatnonzero(h.end[ev[:p + 1]] > lend)[-1])  # the innermost such: the latest begun
            out[k] = h.names[int(h.name[ev[q]])]
    return out


def _inside_frame(trace: Trace, ids: np.ndarray, hs: np.ndarray, he: np.ndarray, note: str
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """The repeated spans' steps (``ids``, host windows) inside the job's frame (``job.frame``), the note saying which
    were read apart; all of them, unchanged, where no frame holds two or more but not all.

    Why: a span the program repeats (``forward``) marks every pass, the warm-ups' too; the one range the program puts
    around the passes it times says which are the steps, as it does for the launch period and the GPU's bursts.
    Where every span before it lies in a range the program names its warm-up, that name says it better (the drop of
    :func:`_in_warmup_ranges`)."""
    order = np.argsort(hs, kind="stable")
    found = frame(trace, hs[order].astype(np.int64, copy=False))
    if found is None:
        return ids, hs, he, note
    lo, hi, label, end = found
    if hi == hs.size and _in_warmup_ranges(trace, hs[order[:lo]])[0].all():
        return ids, hs, he, note  # the program names them itself: dropped as inside its own `Warm-up` range
    keep = np.sort(order[lo:hi])
    note += (f"; the steps are the spans inside the program's one range `{label}`, its frame, not its step: it holds "
             f"{hi - lo} of the {hs.size}, and {apart(lo, hs.size - hi)}, read apart")
    he = he[keep].copy()
    last = int(np.argmax(hs[keep]))
    he[last] = max(int(he[last]), end)  # the frame ends after its last pass: a span marking part of it ends sooner
    return ids[keep], hs[keep], he, note


def _framed_bursts(trace: Trace, active: list[DeviceEvents]) -> tuple[str, str, np.ndarray, np.ndarray] | None:
    """("gpu_busy_clusters", note, starts, ends) of the GPU's bursts inside the job's frame (``job.frame``: the
    program's one range holding at least two of them but not all), where the same work runs in them; else None.

    Why: a benchmark times its passes inside one range (``record_function("inference")`` around 5 passes, each ended
    by a sync) after warm-up passes outside it.  Where the launch sequence does not repeat (a kernel that differs per
    call) no period is read, and an inference job would be one pass; but the frame says which repeats the program
    times.  A burst here ends where the GPU fell idle and the host, waiting on it (a sync ending in the idle gap), or
    paused past ``steps.cluster_*``, launched the next: a pass the program synchronizes ends so however short the
    gap.  Bursts before the frame are its warm-up, after it outside its timing: named, not steps."""
    busy = _program_busy(active)
    if busy is None:
        return None
    own, keep, us, ue = busy
    cut = _synced_bursts(trace.h, us, ue)
    if cut is None:
        return None
    starts, ends = cut
    found = frame(trace, starts)
    if found is None:
        return None
    lo, hi, label, frame_end = found
    ends = ends.copy()
    ends[hi - 1] = max(int(ends[hi - 1]), frame_end)  # the frame ends after its last pass, as a part mark's frame does
    inside = [k & (d.start >= starts[lo]) & (d.start <= ends[hi - 1]) for d, k in zip(own, keep)]
    if not _bursts_repeat(own, inside, starts[lo:hi]):
        return None
    note = (f"no step markers found; steps inferred from the GPU's bursts (each ended where the GPU fell idle and the "
            f"host waited on it or paused), some of the same work running in several of them; the steps are the "
            f"bursts inside the program's one range `{label}`, its frame, not its step: it holds {hi - lo} of the "
            f"{starts.size} bursts, and {apart(lo, starts.size - hi)}, read apart")
    return "gpu_busy_clusters", note, starts[lo:hi], ends[lo:hi]


def _synced_bursts(h: HostEvents, us: np.ndarray, ue: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(starts, ends) of the GPU's bursts in the busy intervals ``us``/``ue``: each ended where the GPU fell idle and
    the host waited on it (a sync ending in the idle gap) or paused past ``steps.cluster_*``; None where nothing cuts
    them.  The one cut :func:`_framed_bursts` and :func:`_framed_pass` read a frame's passes by."""
    waits = np.sort(h.end[h.name_mask(devices.is_sync_call)].astype(np.int64, copy=False))
    gaps = us[1:] - ue[:-1]
    synced = np.searchsorted(waits, us[1:], side="right") > np.searchsorted(waits, ue[:-1], side="left")
    cut = np.nonzero(synced | (gaps > _cluster_gap(gaps)))[0]
    if not cut.size:
        return None
    return np.r_[us[0], us[cut + 1]], np.r_[ue[cut], ue[-1]]


def _framed_pass(trace: Trace, active: list[DeviceEvents], job: Job | None) -> tuple[int, int, str] | None:
    """(start, end, note) of the one GPU burst inside the program's one range (``job.frame`` of one repeat), where the
    same work ran before the range (its warm-up); None elsewhere, and for a training job.

    Why: a benchmark that times a single pass (``--measurement-steps 1``) wraps it in one range (``measurement``)
    after warm-up passes of the same work outside it.  The range frames one pass, so no boundary lies inside it, but
    it says which pass is timed: that pass is the step.  Read as the GPU's bursts, a forward-only benchmark on an RTX
    5070 Laptop GPU (CS336, h37-survey42) became 43 "steps" of its first calls and warm-up halves, and the stock rule
    dropped its one timed pass as the possibly partial last; read as one inference pass, the window's warm-ups were
    the step's.  A training job is left to its own readings: one range around its last burst there (an evaluation
    after the iterations) is not the step the loop repeats."""
    if job is not None and job.kind.kind == "training":
        return None
    busy = _program_busy(active)
    cut = _synced_bursts(trace.h, busy[2], busy[3]) if busy is not None else None
    if cut is None:
        return None
    starts, ends = cut
    found = frame(trace, starts, least=1)
    if found is None or found.end - found.first != 1 or found.first == 0:
        return None
    own, keep = busy[0], busy[1]
    lo, end = found.first, max(int(ends[found.first]), found.end_ps)
    upto = [k & (d.start <= end) for d, k in zip(own, keep)]
    if not _bursts_repeat(own, upto, np.array([starts[0], starts[lo]])):  # the warm-up ran the same work
        return None
    note = (f"one pass: the program's one range `{found.name}` holds one of the GPU's {starts.size} bursts (each "
            f"ended where the GPU fell idle and the host waited on it or paused), the pass it times: the step; "
            f"{apart(lo, starts.size - lo - 1)}, read apart (the same work ran before it)")
    return int(starts[lo]), end, note


def _bursts_holding_backward(job: Job | None, active: list[DeviceEvents], starts: np.ndarray
                             ) -> tuple[int, int] | None:
    """(bursts holding a gradient kernel, bursts) of a training job's GPU bursts (``starts``), where fewer than half
    hold one and at least one does; else None.

    Why: every training iteration runs a backward pass, so GPU bursts that are iterations each hold one.  Where most
    bursts hold no gradient kernel (``devices.gradient_kernel_one``) they are parts of iterations -- the host's
    pauses inside one eager step -- and the window holds no more iterations than the bursts that do (casio's TF 1.15
    NeRF: 85 bursts, 2 with a ``ReluGradHalfKernelVector``, read as 83 steps of 3.88 ms).  Where no kernel is named
    as a gradient's, names say nothing either way."""
    if job is None or job.kind.kind != "training" or starts.size < 3:
        return None
    held = np.zeros(starts.size, bool)
    for d in active:
        grad = np.fromiter((devices.gradient_kernel_one(n) for n in d.names), bool, len(d.names))[d.name]
        k = np.searchsorted(starts, d.start[grad], side="right") - 1
        held[k[k >= 0]] = True
    n = int(held.sum())
    # a range k >= 2 times an iteration holds the backward in 1/k of its windows: half of them at most -- exactly half
    # for a model of 2 layers (h37-randjobs5: Megatron's 2-layer ranges, 30 "steps" of 15 iterations)
    return (n, int(starts.size)) if 0 < n and 2 * n <= starts.size else None


def _within_iterations(job: Job | None, h: HostEvents, devs: list[DeviceEvents], launches: list[np.ndarray],
                       starts: np.ndarray) -> bool:
    """Whether a training job's repeated range (its instances' ``starts`` on the thread repeating it most) recurs
    inside its iterations rather than once an iteration: it repeats at least twice as often as the optimizer's updates
    (``Job.optimizer_steps``: one a training iteration), or most of its windows launch no backward work
    (:func:`_ranges_holding_backward`).  Such a range is a framework's per-layer or per-module range
    (Megatron-core's ``--nvtx-ranges``), never a step."""
    if job is None or job.kind.kind != "training" or starts.size < 3:
        return False
    if job.optimizer_steps >= 2 and starts.size >= 2 * job.optimizer_steps:
        return True
    return _ranges_holding_backward(job, h, devs, launches, starts) is not None


def _ranges_holding_backward(job: Job | None, h: HostEvents, devs: list[DeviceEvents], launches: list[np.ndarray],
                             starts: np.ndarray) -> tuple[int, int] | None:
    """(windows launching a gradient kernel, windows) of the host windows a training job's repeated range tiles (each
    from one range's start to the next's: ``starts``, sorted), where at most half launch one and at least one does;
    else None.

    Why: as for its GPU bursts (:func:`_bursts_holding_backward`), every iteration of a training job runs a backward
    pass, so a range that repeats once an iteration launches one in each of its windows.  A range that repeats inside
    the forward -- a framework's per-layer range, Megatron-core's ``--nvtx-ranges``
    (``...transformer_layer._forward_attention.self_attention``, once a layer, none around an iteration) -- launches
    the backward in only the last layer's window, whichever thread (autograd's own) launches it: it marks layers, not
    iterations (h37-fwnvtx: 72 "steps" of one layer for 12 iterations of 6).  A kernel is placed by its launch's host
    time, else its own start."""
    if job is None or job.kind.kind != "training" or starts.size < 3:
        return None
    held = np.zeros(starts.size, bool)
    for d, la in zip(devs, launches):
        if not len(d):
            continue
        grad = np.fromiter((devices.gradient_kernel_one(n) for n in d.names), bool, len(d.names))[d.name]
        t = d.start[grad].astype(np.int64)
        if la is not None and la.size == len(d):
            rec = la[grad]
            t = np.where(rec >= 0, h.start[np.maximum(rec, 0)].astype(np.int64), t)
        k = np.searchsorted(starts, t, side="right") - 1
        held[k[k >= 0]] = True
    n = int(held.sum())
    # a range k >= 2 times an iteration holds the backward in 1/k of its windows: half of them at most -- exactly half
    # for a model of 2 layers (h37-randjobs5: Megatron's 2-layer ranges, 30 "steps" of 15 iterations)
    return (n, int(starts.size)) if 0 < n and 2 * n <= starts.size else None


def _one_off_bursts(job: Job | None, active: list[DeviceEvents], starts: np.ndarray, ends: np.ndarray) -> str | None:
    """Why the GPU's bursts are no iterations of one loop, in words (the whole capture's note), where the bursts
    holding the capture's one-time costs (``job.phase``: module loading, library start-up) run kernel work that no
    other burst runs again -- most of their kernel time in kernels no later burst runs, and more of it than every
    other burst's kernel time together; else None.

    Why: a burst holding one-time costs is left out as a warm-up iteration only where the steps left repeat its work.
    A program traced from its start that runs its work once (a script's one ``torch.matmul`` of a 2 GB input, then
    the ``print`` of its result in a dozen small bursts) has no warm-up iteration: dropping the bursts that hold the
    start-up dropped the program's only GEMM and its upload, and averaged the ``print``'s 3.7 ms of small kernels as
    its "steady state".  Its window is one pass."""
    if job is None or starts.size < 3 or not job.phase.start.size:
        return None
    cold = np.zeros(starts.size, bool)
    k = np.searchsorted(starts, job.phase.start, side="right") - 1
    inside = (k >= 0) & (job.phase.start < ends[np.clip(k, 0, None)])
    cold[k[inside]] = True
    ahead = ~inside & (k + 1 < starts.size)  # a cost in the idle before a burst (a first launch loading its code) is
    cold[k[ahead] + 1] = True  # that burst's: the work it launches waits for it
    if not cold.any() or cold.all():
        return None
    once = again = steady = 0.0
    for d in active:
        kern = np.flatnonzero(d.kind == devices.KIND_KERNEL)
        if not kern.size:
            continue
        b = np.searchsorted(starts, d.start[kern], side="right") - 1
        inb = b >= 0
        kern, b = kern[inb], b[inb]
        dur = (d.end[kern] - d.start[kern]).astype(np.float64)
        in_cold = cold[b]
        steady_names = set(np.unique(d.name[kern[~in_cold]]).tolist())
        repeated = np.fromiter((int(n) in steady_names for n in d.name[kern].tolist()), bool, kern.size)
        once += float(dur[in_cold & ~repeated].sum())
        again += float(dur[in_cold & repeated].sum())
        steady += float(dur[~in_cold].sum())
    if once <= 0.0 or once <= again or once <= steady:
        return None
    return (f"no step markers found; the GPU's bursts are no iterations: the {plural(int(cold.sum()), 'burst')} "
            f"holding the start-up's one-time costs run {once / PS_PER_MS:,.1f} ms of kernels no later burst runs "
            f"again (more than all the other bursts' kernels), so none is a warm-up iteration of a loop: the program "
            f"ran its work once, and the whole capture is analysed as one pass; per-step numbers are capture totals")


def _kernel_time_once_again(active: list[DeviceEvents], starts: np.ndarray) -> tuple[float, float]:
    """(ps of kernel time in kernels that run in one burst only, ps in kernels that run in two bursts or more) over
    ``active``'s kernels, each burst starting at ``starts``; kernels by name."""
    once = again = 0.0
    for d in active:
        kern = np.flatnonzero(d.kind == devices.KIND_KERNEL)
        b = np.searchsorted(starts, d.start[kern], side="right") - 1
        kern, b = kern[b >= 0], b[b >= 0]
        if not kern.size:
            continue
        pairs = np.unique(np.stack([d.name[kern].astype(np.int64), b]), axis=1)
        names, runs = np.unique(pairs[0], return_counts=True)
        repeated = np.isin(d.name[kern], names[runs > 1])
        dur = (d.end[kern] - d.start[kern]).astype(np.float64)
        once += float(dur[~repeated].sum())
        again += float(dur[repeated].sum())
    return once, again


def _unlike_bursts(active: list[DeviceEvents], starts: np.ndarray, ends: np.ndarray) -> str | None:
    """Why the GPU's bursts are no iterations, in words (the whole capture's note), where the GPU works a negligible
    share of the bursts' span (``steps.idle_bursts_share``) and most of the bursts' kernel time runs in kernels only
    one burst runs; else None.

    Why: ``_bursts_repeat`` takes the bursts for steps where any work runs in two of them, and a one-off program
    repeats small things -- a fill kernel, a pageable copy named by its direction alone.  A ``torch.compile``d
    model's first call, captured with CUDA activity only (a course's A10G ``induction_trace.json``), ran ~70 us of GPU
    work in a 14.5 s window: 25 copy pairs, a fill and a read-back twice, then the compiled call's 3 Triton kernels
    and its one cuBLAS GEMM, each burst after seconds of compiling on the host -- read as 4 "steps" of 160.6 ms
    because the fill ran twice.  A loop's iterations repeat their kernels, and a GPU idle 99% of the bursts' span is
    waiting on the host between them, not running iterations."""
    if starts.size < 2:
        return None
    span = float(ends[-1] - starts[0])
    busy = 0.0
    for d in active:
        us, ue = d.busy()
        busy += float((ue - us).sum())
    if span <= 0.0 or busy >= T("steps.idle_bursts_share") * span:
        return None
    once, again = _kernel_time_once_again(active, starts)
    if once <= again:
        return None
    return (f"no step markers found; the GPU's {starts.size} bursts are no iterations: the GPU works "
            f"{busy / PS_PER_MS:,.3f} ms of their {span / PS_PER_MS:,.1f} ms ({busy / span:.2%}), and "
            f"{once / PS_PER_MS:,.3f} ms of their {(once + again) / PS_PER_MS:,.3f} ms of kernels run in one burst "
            f"only: a loop's iterations repeat their kernels, so the window is one pass of a program -- a first call, "
            f"its start-up or compile on the host between the bursts -- not its steady state; the whole capture is "
            f"analysed as one pass; per-step numbers are capture totals")


def _join_copy_bursts(job: Job | None, active: list[DeviceEvents], starts: np.ndarray, ends: np.ndarray
                      ) -> tuple[tuple[np.ndarray, np.ndarray], int]:
    """((starts, ends), bursts joined) of a training job's GPU bursts with each burst that holds no kernel (copies or
    memsets alone) joined to the next burst, the last such to the one before it; the bursts unchanged elsewhere.

    Why: every training iteration runs kernels (its forward, backward and update), so a burst of copies alone is no
    iteration but part of one: the batch's upload before its compute (a ViT's 154 MB pageable copy, then 14 ms of the
    host's own code, then 585 kernels: one iteration read as two "steps" of 58 ms, the copy's name -- a direction
    and memory kinds, the same for the labels' 2 kB -- taken for repeated work), or the results' read-back after it.
    Other jobs keep their bursts: a program of copies and kernels that is no training loop may repeat either."""
    if job is None or job.kind.kind != "training" or starts.size < 2:
        return (starts, ends), 0
    held = np.zeros(starts.size, bool)
    for d in active:
        work = (d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)
        k = np.searchsorted(starts, d.start[work], side="right") - 1
        held[k[k >= 0]] = True
    if held.all() or not held.any():
        return (starts, ends), 0
    out_s: list[int] = []
    out_e: list[int] = []
    pending: int | None = None  # the start of the copies' bursts waiting for the kernels they feed
    for s, e, h in zip(starts.tolist(), ends.tolist(), held.tolist()):
        if not h:
            pending = s if pending is None else pending
            continue
        out_s.append(s if pending is None else pending)
        out_e.append(e)
        pending = None
    if pending is not None:  # copies after the last kernels: that iteration's read-back
        out_e[-1] = int(ends[-1])
    return (np.asarray(out_s, np.int64), np.asarray(out_e, np.int64)), int((~held).sum())


def _bursts_repeat(own: list[DeviceEvents], keep: list[np.ndarray], starts: np.ndarray) -> bool:
    """Whether some of the work (a kernel or copy, by name) runs in two bursts or more: steps are iterations, so
    bursts are steps only where the work repeats across them.  Bursts that share nothing are one pass of a program
    cut at its host's pauses, not iterations (fckwader/shitbox: three uploads, 14.8 s of the host's own code, then
    one kernel and a read-back -- two "steps" of 7.4 s that were a single run)."""
    seen: dict[int, int] = {}  # name -> the first burst it ran in, or -1 once it ran in two
    for d, k in zip(own, keep):
        burst = np.searchsorted(starts, d.start[k], side="right") - 1
        names = np.asarray([hash(n) for n in d.names], np.int64)[d.name[k]]
        pairs = np.unique(np.stack([names, burst]), axis=1)
        for name, b in zip(pairs[0].tolist(), pairs[1].tolist()):
            first = seen.setdefault(name, b)
            if first != b:
                return True
    return False


#: Sources whose windows are host time spans (tiled, mapped to devices through the launches).
_HOST_SOURCES = ("profiler_step", "iteration_range", "keras_profiled_batch", "trace_train", "root_r", "step_num_stat",
                 "xla_module_launches",
                 "nvtx_range", "nvtx_top_range", "engine_steps", "annotation_spans", "repeated_launches",
                 "step_end_events")


#: Sources whose spans are a repeated user range or annotation taken for the step: a mark the program put anywhere in
#: its iteration (around one launch, one phase), not a step marker that spans the step by definition.
_PART_MARKS = ("nvtx_top_range", "annotation_spans")
#: the job's own readings whose steps run each from its start to the next one's, the last to its own work's end
#: (``steps.detect._last_ends_at_own_work``)
_TILED = ("repeated_launches", "step_end_events", "device_period")
#: and the program's own repeated spans (``job.structure``): each step runs from its span's start to the next one's, the
#: last to where its span and its work end -- the same tiling, so the same partial last step (h37-randjobs8)
_ENDS_AT_OWN_WORK = _TILED + ("annotation_spans",)
#: and the GPU's bursts, of at least this many: each burst's step runs to the next burst's start (the host's time
#: between them -- the next batch's loading -- in it), the last to its own work's end (h37-laststep).  Of two, the
#: one other step's tile cannot tell a short last from a cold first (its one-time work inside its tile): the last is
#: stretched by the first's gap instead (``steps.detect._last_burst_end``)
_BURSTS_TILED = 3


def _untimed_note(trace: Trace) -> str:
    """Why no step is timed where the capture holds no GPU work and no host event to make one window of: said as that,
    not as "the whole capture is analysed as one step" over a header of 0 steps (every memory snapshot's report,
    h37-review3) -- a snapshot records the allocator's events, not kernels or steps."""
    if trace.snapshot is not None:
        return ("a memory snapshot: the allocator's events, no kernel or step marker, so no step is timed; its numbers "
                "are the capture's")
    return "no step markers, GPU work or host events: no step is timed"


class _Kept:
    """The steps found, as the dropping rules leave them: ids, host windows, per-GPU windows, and where the step after
    each starts in the capture (kept or not), cut together by :meth:`keep` so that no column forgets a drop."""

    def __init__(self, ids: np.ndarray, hs: np.ndarray, he: np.ndarray, gpu: dict[int, np.ndarray]) -> None:
        self.ids, self.hs, self.he, self.gpu = ids, hs, he, dict(gpu)
        self.first = int(ids[0]) if ids.size else -1
        self.next_start = np.append(hs[1:], -1).astype(np.int64) if hs.size else np.zeros(0, np.int64)
        self.gpu_next = {g: np.append(w[1:, 0], -1).astype(np.int64) for g, w in self.gpu.items()}
        self.prev_id = np.append(-1, ids[:-1]).astype(np.int64) if ids.size else np.zeros(0, np.int64)

    def keep(self, sel: slice | np.ndarray) -> None:
        self.ids, self.hs, self.he = self.ids[sel], self.hs[sel], self.he[sel]
        self.next_start, self.prev_id = self.next_start[sel], self.prev_id[sel]
        self.gpu = {g: w[sel] for g, w in self.gpu.items()}
        self.gpu_next = {g: w[sel] for g, w in self.gpu_next.items()}


def _launched_before(devs: list[DeviceEvents], launches: list[np.ndarray], kept: _Kept) -> str:
    """Why the first step is the tail of an iteration launched before the capture began ("" where it is not): none of
    its GPU work has its host launch in the capture, while every later step begins with work launched inside it -- the
    same program, recording its launches, cut by the window mid-iteration.  Any format whose device records carry the
    launch's correlation (Kineto, Nsight, XPlane): where none carries one the rule is silent.  A first step that also
    holds work launched in the window (a guessed burst running the cut iteration's tail into the next iteration: 9.4
    ms of 291.7 in an FSDP window) is more than the tail and stays.

    Why: a window opens wherever the profiler starts, not at an iteration's start; the first step then holds only
    the end of one (a ViT's 21.7 ms of kernels before an 84 ms iteration), and averaging it in understates the step
    and every per-step number (h37-left46).  ``devs``: the GPUs with records, ``launches`` theirs
    (:func:`~tb_gpu_advisor.model.trace.device_launches`)."""
    n = kept.ids.size
    if n < 2:
        return ""
    big = np.iinfo(np.int64).max
    first_t = np.full(n, big, np.int64)
    first_launched = np.zeros(n, dtype=bool)
    for d, launch in zip(devs, launches):
        w = kept.gpu.get(d.gpu)
        w = w if w is not None else np.stack([kept.hs, kept.he], axis=1)
        own = ~devices.managed_migration(d.names)[d.name] if len(d) else np.zeros(0, dtype=bool)
        st = d.start.astype(np.int64, copy=False)
        k = np.searchsorted(w[:, 0].astype(np.int64), st, side="right") - 1
        idx = np.flatnonzero(own & (k >= 0) & (st < w[np.maximum(k, 0), 1]))
        if not idx.size:
            continue
        idx = idx[np.lexsort((st[idx], k[idx]))]  # by step, then start: each step's first record leads its run
        kk = k[idx]
        lead = idx[np.concatenate([[True], kk[1:] != kk[:-1]])]
        step, t = k[lead], st[lead]
        earlier = t < first_t[step]
        first_t[step[earlier]] = t[earlier]
        first_launched[step[earlier]] = launch[lead[earlier]] >= 0
    has = first_t < big
    if not has[0] or first_launched[0] or has[1:].sum() < 1 or not first_launched[1:][has[1:]].all():
        return ""
    for d, launch in zip(devs, launches):  # any work of the first step launched in the capture: not only a tail
        w = kept.gpu.get(d.gpu)
        w = w if w is not None else np.stack([kept.hs, kept.he], axis=1)
        if ((d.start >= w[0, 0]) & (d.start < w[0, 1]) & (launch >= 0)).any():
            return ""
    lead = 0.0
    for d, launch in zip(devs, launches):  # the work before the capture's first launched record: the cut iteration's
        w = kept.gpu.get(d.gpu)
        w = w if w is not None else np.stack([kept.hs, kept.he], axis=1)
        m = (d.start >= w[0, 0]) & (d.start < w[0, 1]) & (launch < 0)
        if m.any():
            lead = max(lead, float(d.end[m].max() - w[0, 0]) / PS_PER_MS)
    return (f"the capture began inside it: it starts with {_before_window(lead)}, where every later step starts with "
            f"work launched inside the capture -- the tail of an iteration, not a whole one")


def _before_window(lead_ms: float) -> str:
    """The words for GPU work at a step's head that was launched before the capture began: one home for the partial
    first step's reason and the trimmed first burst's note."""
    return f"{fmt_ms(lead_ms)} of GPU work whose launches precede the window (no host launch of it is recorded)"


def _trim_launched_before(h: HostEvents, devs: list[DeviceEvents], launches: list[np.ndarray], kept: _Kept,
                          one_pass: bool = False) -> str:
    """Start the first of GPU-burst steps at its first work launched in the capture, where the burst opens with work
    launched before the capture and runs on into work launched inside it; the note's words ("" where nothing is cut).
    Per GPU: each GPU's window starts at its own first launched work (kept's per-GPU windows, set where the GPUs'
    starts differ); the host window at the earliest of them.

    Why: a burst runs from its first GPU record, but a window opens wherever the profiler starts: work whose launch
    the capture does not hold ran for an iteration before this one (``nsys/fsdp_mfu_before``: 9.4 ms of kernels
    launched before the window, then 282.3 ms of work launched in it, read as one 291.7 ms step).  The head is no part
    of the step, as a first step made only of such work is none (:func:`_launched_before`); the step is from its own
    first work on.  A burst whose first record was launched in the window is unchanged.  The host's wait in a sync
    over the head is a wait on that work: said with it, and out of the step with it (``nsys/h100_fsdp_window``: 424
    ms of uploads launched before the slice, the host's 428 ms ``cudaStreamSynchronize`` begun 145 ms before they
    end) -- no step's time, no sync's claim.  ``one_pass``: the one window is the pass a capture read whole was read
    as (:func:`unmarked_pass`), named so, never "the first step"."""
    if not kept.ids.size:
        return ""
    start0 = int(kept.hs[0])
    starts: dict[int, int] = {}
    heads: dict[int, tuple[int, int]] = {}
    head = 0.0
    for d, launch in zip(devs, launches):
        w = kept.gpu.get(d.gpu)
        w0, w1 = (int(w[0, 0]), int(w[0, 1])) if w is not None else (start0, int(kept.he[0]))
        own = ~devices.managed_migration(d.names)[d.name]
        st = d.start.astype(np.int64, copy=False)
        m = own & (st >= w0) & (st < w1)
        if not m.any():
            continue
        idx = np.flatnonzero(m)
        idx = idx[np.argsort(st[idx], kind="stable")]
        on = launch[idx] >= 0
        if not on.any() or on[0]:  # nothing launched in the window, or the burst opens on work launched in it
            continue
        first = int(st[idx[int(np.argmax(on))]])
        starts[d.gpu] = first
        heads[d.gpu] = (int(st[idx[0]]), first)  # from the head's own first record: a window may open on a host op
        head = max(head, (first - int(st[idx[0]])) / PS_PER_MS)
    if not starts:
        return ""
    lo = min(starts.values())
    host = kept.hs.copy()
    host[0] = lo
    if len(set(starts.values())) > 1 or not kept.gpu and any(d.gpu not in starts for d in devs if len(d)):
        for d in devs:
            if not len(d):
                continue
            w = kept.gpu.get(d.gpu)
            w = (w if w is not None else np.stack([kept.hs, kept.he], axis=1)).copy()
            w[0, 0] = starts.get(d.gpu, int(w[0, 0]))
            kept.gpu[d.gpu] = w
            kept.gpu_next.setdefault(d.gpu, kept.next_start.copy())
    else:
        for g, w in kept.gpu.items():
            w = w.copy()
            w[0, 0] = starts.get(g, int(w[0, 0]))
            kept.gpu[g] = w
    kept.hs = host
    first, own, one = ("the pass", "the pass", "the pass") if one_pass else ("the first step", "the step", "a step")
    return (f"; {first} starts at its first work launched in the capture, after {_before_window(head)}: "
            f"work from before the capture, no part of {own}{_waits_on_head(h, list(heads.values()), one)}")


def _waits_on_head(h: HostEvents, heads: list[tuple[int, int]], step: str = "a step") -> str:
    """The words for the host's longest wait in a sync over GPU work launched before the capture (``heads``: per GPU,
    the head's ``[start, end)``), "" where no sync overlaps one: the part of the call over the head waits on work from
    before the capture, so it is said here, beside that work, and is no step's (each step starts after it); ``step``:
    what it is no part of ("the pass" on a capture read whole)."""
    sync = np.flatnonzero(h.name_mask(devices.is_sync_call)) if len(h) else np.zeros(0, np.int64)
    if not sync.size or not heads:
        return ""
    s, e = h.start[sync].astype(np.int64), h.end[sync].astype(np.int64)
    over = np.zeros(sync.size, np.int64)
    for a, b in heads:
        over = np.maximum(over, np.minimum(e, b) - np.maximum(s, a))
    k = int(np.argmax(over))
    if over[k] <= 0:
        return ""
    whole, part = int(e[k] - s[k]) / PS_PER_MS, int(over[k]) / PS_PER_MS
    name = h.names[int(h.name[int(sync[k])])]
    said = f"all {fmt_ms(whole)} of it" if part >= whole else f"{fmt_ms(part)} of its {fmt_ms(whole)}"
    return (f"; the host's `{name}` waits on that work for {said}: a wait on work from before the capture, no "
            f"part of {step} or of a sync's cost")


class _Reading:
    """What the step sources read as the capture's steps, filled in source by source: the windows (ids, host starts
    and ends, per-GPU windows where placed apart), the source and its note, how the windows map onto the GPUs, and why
    the whole capture is one step where a reading was refused.  One holder, so that each source is a step of its own
    that a reader follows in :func:`detect_steps`, and the launches are computed once, where a step first needs them."""

    def __init__(self, trace: Trace, launches: list[np.ndarray] | None) -> None:
        self.trace, self.launches = trace, launches
        self.active = [d for d in trace.devices if len(d)]
        self.source, self.note, self.mapped = "", "", ""
        self.whole_note = ""  # why the whole capture is one step, where a reading of the steps was refused for a cause
        self.guessed = False  # whole_note reads the window as (at most) one iteration from the GPU's bursts: a guess
        self.unlike = 0  # the GPU's bursts refused as iterations for running unlike work on an idle GPU
        self.own = None  # the program's own repeated structure (``job.structure``), where the steps are read from it
        #: host line -> its own ranges' windows (starts, ends; aligned with ``ids``), where the steps are ranges that
        #: each rank's thread marks on its own (NVTX ranges of one number on several threads are one step)
        self.per_line: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.ids = np.zeros(0, np.int64)
        self.hs = self.he = np.zeros(0, np.int64)
        #: each window's own end as read, before tiling (a range's end, a burst's): where its mark or its work ends
        self.read_end = np.zeros(0, np.int64)
        self.gpu_windows: dict[int, np.ndarray] = {}

    def launched(self) -> list[np.ndarray]:
        """Per GPU, each device event's host launch record (:func:`~tb_gpu_advisor.model.trace.device_launches`):
        the caller's, else computed on first need -- many captures' steps never need them."""
        if self.launches is None:
            self.launches = device_launches(self.trace.h, self.trace.devices)
        return self.launches

    def take(self, read: tuple, mapped: str) -> None:
        """A source's reading, (source, note, ids, host starts, host ends[, per-line windows]), as the steps."""
        self.source, self.note, self.ids, self.hs, self.he = read[:5]
        self.per_line = read[5] if len(read) > 5 else {}
        self.mapped = mapped

    def take_spans(self, source: str, note: str, hs: np.ndarray, he: np.ndarray, mapped: str) -> None:
        """Spans with no step numbers of their own as the steps, numbered in order."""
        self.source, self.note, self.hs, self.he, self.mapped = source, note, hs, he, mapped
        self.ids = np.arange(hs.size, dtype=np.int64)


def detect_steps(trace: Trace, launches: list[np.ndarray] | None = None, job: Job | None = None) -> Steps:
    """Detect steps; see the module docstring.  ``launches``: per GPU, each device event's host launch record
    (:func:`~tb_gpu_advisor.model.trace.device_launches`; computed here when not given); ``job``: what the capture
    is (its own step spans, its one-time costs), None for a bare reading of the markers."""
    r = _Reading(trace, launches)
    if trace.gpu_step_lines:  # 1. the format's own per-GPU step line
        r.ids, r.hs, r.he, r.gpu_windows = _gpu_step_line_windows(trace.gpu_step_lines)
        r.source, r.note = trace.gpu_step_source or ("steps_line", "derived `Steps` line on the GPU planes (grouped capture)")
        r.mapped = "group_id" if trace.gpu_step_source is None else "device"
    else:
        _read_steps(r, job)
        _place_windows(r)
    found = int(r.ids.size)
    if found == 0:
        _whole_capture(r)
    kept = _Kept(r.ids, r.hs, r.he, r.gpu_windows)
    dropped = _drop_steps(r, kept, found, job)
    return _steps(r, kept, found, dropped)


def _read_steps(r: _Reading, job: Job | None) -> None:
    """Sources 2-12 in the module docstring's order, the first that reads steps wins: the host's step marks, XLA's
    modules, NVTX ranges, the program's own repeated spans, a training range, bursts inside the job's frame, one
    inference pass, the GPU's bursts.  Nothing read leaves the steps empty (the whole capture, with ``whole_note``)."""
    trace, h = r.trace, r.trace.h
    cand = _iteration_range_steps(trace) or _marked_host_steps(trace) or _host_candidates(h)
    if cand is not None:
        r.take(cand, "host_window")
        return
    xla = _xla_module_steps(trace) or _xla_launch_steps(h, _line_processes(trace))
    if xla is None and r.launches is None and trace.ranges is not None and trace.ranges.idx.size:
        r.launched()
    marked = _nvtx_steps(trace, r.launches, job) if xla is None else None
    own = job.structure if job is not None else None
    if own is not None and not own.timed:  # counted by order in a capture with no times: said, not timed
        r.whole_note, own = own.note, None
    inside = _spans_inside_iterations(trace, own) if own is not None else ""
    if inside:  # a micro-batch's spans: no iteration each
        own = None
    r.own = own
    trained = (_training_range_steps(trace, job) or _engine_range_steps(trace, job, r.launched())
               if marked is None and own is None else None)
    framed = (_framed_bursts(trace, r.active) if xla is None and marked is None and own is None
              and trained is None else None)
    if xla is not None:
        r.take(xla, "device")
    elif marked is not None:
        r.take(marked, "host_window")
    elif own is not None:
        r.take_spans(own.source, own.note, own.start, own.end, "host_window")
    elif trained is not None:
        r.take(trained, "host_window")
    elif framed is not None:
        r.take_spans(*framed, "device")
    elif (one := _framed_pass(trace, r.active, job)) is not None:
        r.take_spans("single_pass", one[2], np.array([one[0]], np.int64), np.array([one[1]], np.int64), "device")
    elif job is not None and job.periodic is not None and job.periodic.source == "device_period":
        r.own = job.periodic  # a kernel trace's iterations by its stream's period: GPU windows, no launch to map
        r.take_spans("device_period", job.periodic.note, job.periodic.start, job.periodic.end, "device")
    elif _one_pass(job, r.active):
        _one_pass_step(r, job)
    else:
        _burst_steps(r, job)
    r.note += inside if r.source else ""


def _one_pass_step(r: _Reading, job: Job) -> None:
    """11. ``single_pass``: a capture of one pass with no repeated structure is one step, from its first launch to its
    work's end -- or the program's own phase ranges around the pass, where it has them (set-up before them is not the
    step)."""
    r.source, r.mapped = "single_pass", "device"
    r.hs, r.he = _whole_window(r.trace.h, r.trace.devices, r.launched())
    r.ids = np.zeros(1, np.int64)
    r.note = (f"one {job.kind.kind} pass: no step markers, no repeated span that holds the GPU work and no "
              f"repeated launch sequence the host waits after ({job.kind.evidence}), so the capture is read "
              f"as one pass, which may hold several calls of a model launched back to back")
    if job.kind.kind == "training" and job.optimizer_steps == 1 and not job.kind.from_ranges:
        r.note = ("one training iteration: no step markers or repeated span holds the GPU work, and the "
                  "capture holds one optimizer step (an update runs once per iteration), so it is one "
                  "pass, whatever GPU bursts it runs in")
    phases = _pass_phase_window(r.trace, r.active)
    if phases is not None and phases[0] != int(r.hs[0]):
        ps, pe, names = phases
        lead = (ps - int(r.hs[0])) / PS_PER_MS
        r.note += (f"; the pass is the program's own {names} ranges: " +
                   (f"the {lead:,.1f} ms of set-up before them is not the pass" if lead > 0 else
                    f"they start {-lead:,.1f} ms before the op that launches its first kernel, and the "
                    f"host's work before that launch is the pass's"))
        r.hs, r.he = np.array([ps], np.int64), np.array([pe], np.int64)
        return
    fetch = _input_fetch_before(r.trace, int(r.hs[0]))
    if fetch is not None:
        lead = (int(r.hs[0]) - fetch[0]) / PS_PER_MS
        r.note += (f"; the pass starts where it fetches its input (`{fetch[1]}`, {lead:,.1f} ms before the op that "
                   f"launches its first kernel), as a loop's step opens with its batch's fetch")
        r.hs = np.array([fetch[0]], np.int64)


def _input_fetch_before(trace: Trace, start: int) -> tuple[int, str] | None:
    """(start, name) of the input fetch a one-pass capture's pass consumes: the last event of the framework's input
    pipeline (``Framework.input_event``: PyTorch's ``enumerate(DataLoader)#...__next__``, TF's ``IteratorGetNext``)
    that ends by the pass's first launching op (``start``) -- no GPU work lies before that op, so no earlier pass
    consumed it -- and outside the program's warm-up ranges; None where the capture records none.

    Why: a loop's step opens with its batch's fetch (a ``ProfilerStep`` holds the DataLoader's ``__next__``), and one
    pass of such a loop is the same step: a window from its first launch leaves the fetch out and reads no input wait,
    as a course's one-batch ResNet-50 capture read 0.0% while its single-process DataLoader held the GPU idle 9.4 ms
    of the 24.2 ms pass (survey h37-survey34)."""
    h = trace.h
    if not len(h):
        return None
    fw = frameworks.detect_trace(trace)
    sel = np.flatnonzero(h.name_mask(fw.input_event) & (h.end <= start))
    if not sel.size:
        return None
    user = user_ranges.program_ranges(trace)
    if user.size:
        warm = user[h.per_name(nvtx.is_warmup_name)[h.name[user]]]
        if warm.size:
            ws, we = union_intervals(h.start[warm].astype(np.int64), h.end[warm].astype(np.int64))
            k = np.searchsorted(ws, h.start[sel].astype(np.int64), side="right") - 1
            sel = sel[~((k >= 0) & (h.start[sel] < we[np.maximum(k, 0)]))]
            if not sel.size:
                return None
    last = int(sel[np.argmax(h.end[sel])])
    return int(h.start[last]), h.names[int(h.name[last])]


def _burst_steps(r: _Reading, job: Job | None) -> None:
    """12. ``gpu_busy_clusters``: the GPU's bursts, apart by long idle gaps, as the steps -- unless a training job's
    bursts cannot each be an iteration (every iteration runs kernels and a backward): then the window is read as (at
    most) that many iterations, and the whole capture is one step, with the reason in ``whole_note``."""
    refused: list[str] = []
    launches = [la for d, la in zip(r.trace.devices, r.launched()) if len(d)]
    cl = _busy_clusters(r.active, r.trace.h, launches, refused)
    joined = 0
    if cl is None and refused:
        names = ", ".join(f"`{n}`" for n in refused[:3])
        r.whole_note = (f"no step markers found; the GPU's long idle gaps lie inside one host op or range that "
                        f"recurs within the iterations ({names}): it began before the GPU fell idle and launched the "
                        f"work after the gap, and no iteration ends inside one op, so the GPU's bursts are one: the "
                        f"window is analysed as one pass, part of an iteration or more; per-step numbers are the "
                        f"window's")
    if cl is not None:
        bursts = cl[0].size
        cl, joined = _join_copy_bursts(job, r.active, *cl)
        if cl[0].size < 2:  # the copies' bursts joined to the one burst of kernels: one iteration
            cl = None
            r.whole_note = (f"a training job's GPU work runs in {bursts} bursts, "
                            f"{plural(joined, 'burst')} of them copies alone (no kernel): every iteration "
                            f"runs kernels, so such a burst is part of one -- its input's upload or its "
                            f"results' read-back -- and the window holds one iteration; the whole capture "
                            f"is analysed as one pass; per-step numbers are capture totals")
            r.guessed = True
    backward = _bursts_holding_backward(job, r.active, cl[0]) if cl is not None else None
    if backward is not None:  # bursts that mostly run no backward are no iterations of a training job
        cl = None
        r.whole_note = (f"a training job's GPU work runs in {backward[1]} bursts, with a gradient kernel "
                        f"in only {plural(backward[0], 'burst')}: every iteration runs a "
                        f"backward, so a burst without one is no iteration and the window holds at most "
                        f"{plural(backward[0], 'iteration')}; the whole capture is analysed as one pass; "
                        f"per-step numbers are capture totals")
        r.guessed = backward[0] <= 1  # "at most one iteration": the window read as one, a guess
    once = _one_off_bursts(job, r.active, *cl) if cl is not None else None
    if once is not None:  # the work of the bursts holding one-time costs never runs again: no warm-up iterations
        cl = None
        r.whole_note = once
    unlike = _unlike_bursts(r.active, *cl) if cl is not None else None
    if unlike is not None and cl is not None:  # a GPU idle between bursts that share no compute: one pass
        r.whole_note, r.unlike = unlike, len(cl[0])
        cl = None
    if cl is None and not r.whole_note and job is not None and job.periodic is not None:
        # no bursts apart (the host's pause between iterations shorter than a burst gap), but the launches repeat with
        # the host's wait at each repeat and a backward in every one: a training job's iterations
        own = job.periodic
        r.own = own
        r.take_spans(own.source, own.note, own.start, own.end, "host_window")
        return
    if cl is None:
        return
    # in words any capture's user reads, as the whole capture's note
    note = ("no step markers found; steps inferred from clusters of GPU activity separated by long "
            "idle gaps, some of the same work running in several of them")
    if joined:
        note += (f"; {plural(joined, 'burst')} of copies alone joined to the iteration it feeds (or, "
                 f"last, the one it ends)")
    r.take_spans("gpu_busy_clusters", note, *cl, "device")


def _place_windows(r: _Reading) -> None:
    """Shape the windows read into steps that cover the time: marks that hold part of an iteration kept inside the
    job's frame; host and burst windows tiled (each to the next's start, the last to its work's end), bursts cut
    where the capture recorded nothing; and host steps placed on each GPU where the work they launch runs (the host
    runs ahead of an asynchronous GPU)."""
    h = r.trace.h
    if r.source in _PART_MARKS and r.ids.size > 2:
        r.ids, r.hs, r.he, r.note = _inside_frame(r.trace, r.ids, r.hs, r.he, r.note)
    if r.source not in _HOST_SOURCES + ("gpu_busy_clusters", "xla_modules") or not r.ids.size:
        return
    r.read_end = r.he.astype(np.int64)
    r.hs, r.he = _tile(r.hs, r.he)
    host_he = r.he.copy()  # the host's own windows: which launches each step made (the last's not stretched)
    r.he[-1] = max(int(r.he[-1]), _last_step_device_end(h, r.active, int(r.hs[-1]), int(r.he[-1])))
    if r.source == "gpu_busy_clusters":
        r.hs, r.he, cut_note = _cut_unrecorded(r.trace, r.hs, r.he)
        r.note += cut_note
        end = _last_burst_to_window_end(r.trace, r.hs, r.he)
        if end != int(r.he[-1]):
            r.he[-1] = end
            r.note += ("; the last burst's step runs to the profiler's window's end, a step after its start: no next "
                       "burst began, and the window recorded its time after its work")
        elif (end := _last_burst_end(r.hs, r.he, r.read_end)) != int(r.he[-1]):
            r.he[-1] = end
            r.note += ("; the last burst's step runs past its work by the time the first held after its burst: no "
                       "next burst began in the capture")
    if r.source in _HOST_SOURCES:
        r.mapped = "correlation_id"
        own = _own_host_windows(r)
        marks = "numbers its own updates" if r.source == "step_end_events" else "marks its own steps (ranges)"
        # (the last host window stretched to its GPU work's end is a device time: on a host running ahead it holds
        # the launches made after the step -- a pipeline's VAE after its last denoising call (h37-randjobs7))
        dev_w, ahead = _async_device_windows(r.hs, host_he, h, r.trace.devices, r.launched(), own)
        if dev_w:
            r.gpu_windows = dev_w
            if ahead:
                r.note += ("; asynchronous dispatch: the host runs ahead of the GPU, so each GPU step is placed where "
                           "the work launched inside that host step runs (first kernel to the next step's first kernel)")
                if own:
                    r.note += (", each GPU's step k the work its own process launched in its kth step (its own "
                               f"{'updates' if r.source == 'step_end_events' else 'ranges'})")
            else:
                r.note += (f"; each rank {marks}: each GPU's step k is placed where the work its own "
                           "process launched in its kth step runs (first kernel to the next step's first kernel)")


def _whole_capture(r: _Reading) -> None:
    """13. ``whole_capture``: where no source read a step, the capture is one step over its GPU work (else its host
    events; else none, with why), and the note says why -- a refused reading's cause where one was refused."""
    h = r.trace.h
    r.source, r.mapped = "whole_capture", "device"
    if r.active:
        r.hs, r.he = _whole_window(h, r.trace.devices, r.launched())
        r.ids = np.zeros(1, np.int64)
    elif len(h):
        r.hs, r.he = np.array([h.start.min()], np.int64), np.array([h.end.max()], np.int64)
        r.ids = np.zeros(1, np.int64)
    # in words any capture's user reads: no framework's marker names (Keras' to a PyTorch or Nsight capture)
    r.note = r.whole_note or ("no step markers found, nor repeating GPU activity: the whole capture is analysed as one "
                              "pass; per-step numbers are capture totals" if r.ids.size else _untimed_note(r.trace))


def _drop_steps(r: _Reading, kept: _Kept, found: int, job: Job | None) -> list[DroppedStep]:
    """Leave out of the averages the steps that are no whole steady iteration, each rule on the steps the earlier
    ones left: a first step the window cut, an empty or edge step, a loop's partial last iteration, the program's
    warm-up calls, steps holding one-time costs, steps in the program's own warm-up range, a last step cut short.
    The note says each drop; ``found``: the steps read before any drop."""
    dropped: list[DroppedStep] = []
    _drop_lost(r, kept, dropped, job)  # first: a step whose GPU records were lost is no empty or partial step
    if r.active and kept.ids.size:
        _drop_cut_first(r, kept, dropped, found)
    _drop_empty_or_edges(r, kept, found, dropped)
    own = r.own
    cut = own.partial_last if r.source == "repeated_launches" and own is not None else ""
    if cut and kept.ids.size > 2 and int(kept.ids[-1]) == found - 1:  # the last window still kept: part of an iteration
        _drop_one(r, kept, dropped, -1, cut, "; dropped the last step: it holds only the rest of the loop's last iteration")
    tiled = (r.source in _ENDS_AT_OWN_WORK and own is not None and r.source == own.source and kept.ids.size >= 2
             or r.source == "gpu_busy_clusters" and kept.ids.size >= _BURSTS_TILED)
    short = _last_ends_at_own_work(kept) if tiled and int(kept.ids[-1]) == found - 1 else None
    if short is not None:
        held, tiles = short
        _drop_one(r, kept, dropped, -1, f"partial: {held:,.2f} ms from its start to its own work's end, where every "
                  f"other step ran at least {tiles:,.2f} ms from its start to the next's: no next iteration starts "
                  f"after it in the capture, so it holds none of the time between its work and a next one",
                  "; dropped the last step: it ends at its own work, not at a next step's start")
    first = own.warmup_first if own is not None and r.source == own.source else ""
    if first and kept.ids.size > 2 and int(kept.ids[0]) == 0:  # the program's first calls' one-time work (job.iterations)
        _drop_one(r, kept, dropped, 0, f"warm-up: {first}", f"; dropped the first step as warm-up: {first}")
    if job is not None and kept.ids.size > 1 and job.phase.start.size:
        cold = _cold_steps(kept.hs, kept.he, kept.gpu, job)
        if cold.any() and (~cold).sum() >= 2:  # one steady step left is no steady state: keep and book the costs
            _drop_masked(r, kept, dropped, cold, "warm-up: holds one-time costs (module loading, library start-up, "
                         "compilation)", f"; dropped {plural(int(cold.sum()), 'warm-up step')} holding one-time costs")
    if r.source in _HOST_SOURCES and kept.ids.size > 2:
        warm, label = _in_warmup_ranges(r.trace, kept.hs)
        if warm.any() and (~warm).sum() >= 2:  # the program's own warm-up iterations: not the steady state it measures
            _drop_masked(r, kept, dropped, warm, f"warm-up: inside the program's own `{label}` range",
                         f"; dropped {plural(int(warm.sum()), 'step')} inside the program's own `{label}` range")
    _drop_short_last(r, kept, dropped)
    return dropped


def _drop_lost(r: _Reading, kept: _Kept, dropped: list[DroppedStep], job: Job | None) -> None:
    """Steps that reach into a stretch whose GPU records were lost (``job.kind.lost_spans``: launches accepted, their
    kernels run, no record written -- a tail, or a stretch mid-window after which the records resume) are no steps to
    time: their host side is there, their GPU work is not, so they would read as a GPU idling for the host.  Dropped
    where a step outside the stretches remains; where none does, kept (the capture-quality warning says the records
    are lost, and the averages are the recorded part's)."""
    spans = job.kind.lost_spans if job is not None else ()
    if not spans or not kept.ids.size:
        return
    mask = np.zeros(kept.ids.size, dtype=bool)
    for a, b in spans:
        mask |= (kept.he > a) & ((kept.hs < b) if b >= 0 else True)
    if mask.any() and not mask.all():
        _drop_masked(r, kept, dropped, mask, "lost records: its GPU work ran without a record (the capture lost the "
                     "GPU's records of its launches)", f"; dropped {plural(int(mask.sum()), 'step')} in a "
                     "stretch whose GPU records were lost")


def _drop_one(r: _Reading, kept: _Kept, dropped: list[DroppedStep], k: int, reason: str, note: str) -> None:
    """Drop the first (``k`` 0) or the last (-1) kept step for ``reason``, and say so in the note."""
    dropped.append(_dropped(k, kept.ids, kept.hs, kept.he, kept.gpu, reason))
    kept.keep(slice(1, None) if k == 0 else slice(None, -1))
    r.note += note


def _drop_masked(r: _Reading, kept: _Kept, dropped: list[DroppedStep], mask: np.ndarray, reason: str,
                 note: str) -> None:
    """Drop the kept steps ``mask`` marks, each for ``reason``, and say so in the note."""
    dropped += [_dropped(k, kept.ids, kept.hs, kept.he, kept.gpu, reason) for k in np.flatnonzero(mask).tolist()]
    kept.keep(~mask)
    r.note += note


def _drop_cut_first(r: _Reading, kept: _Kept, dropped: list[DroppedStep], found: int) -> None:
    """A first step the window cut: dropped where it holds only work launched before the capture (the tail of an
    iteration; of two steps or more read); else a step whose window the GPU's work bounds (its bursts, one pass, the
    whole capture: ``mapped`` "device") that opens with such work starts at its own first work -- one rule for every
    such step, the whole window's as a burst's.  Host-marked steps start at their marker and place their GPU windows
    at the work launched inside them already (:func:`_async_device_windows`)."""
    launches = [la for d, la in zip(r.trace.devices, r.launched()) if len(d)]
    lead = _launched_before(r.active, launches, kept) if r.source != "whole_capture" and found > 1 else ""
    if lead:  # the window cut an iteration: its first step is the tail of one launched before the capture
        _drop_one(r, kept, dropped, 0, f"partial: {lead}",
                  "; dropped the first step: the capture began inside it (its work was launched before the window)")
    elif r.mapped == "device":
        # a capture read whole (:func:`unmarked_pass`) numbers no step: its one window is "the pass", as every
        # finding later names it (h37-words22: nsys fsdp_mfu_before's note read "the first step starts at ...")
        r.note += _trim_launched_before(r.trace.h, r.active, launches, kept, unmarked_pass(int(kept.ids.size), r.source))


def _drop_empty_or_edges(r: _Reading, kept: _Kept, found: int, dropped: list[DroppedStep]) -> None:
    """A host-marked last step that launched no GPU work (the step a last ``prof.step()`` opens after the loop) is
    dropped; else, of more than a few steps, the first (warm-up, unless a cut first step was that) and the last
    (possibly partial), as the stock tool does."""
    if (r.source in _HOST_SOURCES and kept.ids.size > 1 and r.active
            and not _launched_work(r.trace.h, r.active, int(kept.hs[-1]), int(kept.he[-1]))):
        _drop_one(r, kept, dropped, -1, "empty: no GPU work was launched in it (the step a last prof.step() opens "
                  "when the loop has ended: only the profiler's own stop)", "; dropped the last step: it launched no GPU work")
    elif found > T("steps.drop_edges_above") and kept.ids.size:
        edge = f"{T('steps.drop_edges_above'):g}"
        # the capture's own first and last steps, where still kept: a first step cut by the window is dropped already
        # (the stock rule's warm-up is that one), and a step before a stretch whose GPU records were lost is no last
        # step the window cut -- the steps after it started (h37-randjobs4: 2 recorded steps of 12 before a lost tail,
        # the stock rule took them for the capture's edges and kept none)
        warm = not any(d.reason.startswith("partial") for d in dropped) and int(kept.ids[0]) == int(r.ids[0])
        last = int(kept.ids[-1]) == int(r.ids[-1])
        if warm and kept.ids.size == 1 + last:  # never every step: the last one left is timed
            warm = False
        if warm:
            dropped.append(_dropped(0, kept.ids, kept.hs, kept.he, kept.gpu,
                                    f"warm-up: first of more than {edge} steps (stock tool rule)"))
        if last and kept.ids.size > 1:
            dropped.append(_dropped(-1, kept.ids, kept.hs, kept.he, kept.gpu,
                                    f"possibly partial: last of more than {edge} steps (stock tool rule)"))
        else:
            last = False
        kept.keep(slice(1 if warm else 0, -1 if last else None))
        said = "first and last" if warm and last else "first" if warm else "last" if last else ""
        r.note += f"; dropped {said} of {found} steps" if said else ""


def _drop_short_last(r: _Reading, kept: _Kept, dropped: list[DroppedStep]) -> None:
    """A last step cut short: its mark (a part mark, or an iteration range the capture ended inside) ends where its
    work ends, shorter than every other step's start to the next's -- nothing marks where that iteration ends."""
    if r.source not in _PART_MARKS + ("iteration_range",) or kept.ids.size < 2:
        return
    if not (_last_cut_short(kept.hs, kept.he) or _two_part_marks(r, kept) or _top_range_last_short(r, kept)):
        return
    held = (int(kept.he[-1]) - int(kept.hs[-1])) / PS_PER_MS
    tiles = float(np.diff(kept.hs).min()) / PS_PER_MS
    if r.source == "iteration_range":
        _drop_one(r, kept, dropped, -1, f"partial: the capture ended inside it ({held:,.1f} ms of an iteration range, "
                  f"where every other iteration ran at least {tiles:,.1f} ms from its start to the next's)",
                  "; dropped the last iteration: the capture ended inside it")
    else:
        _drop_one(r, kept, dropped, -1, f"partial: {held:,.1f} ms from its start to its work's end, where every other "
                  f"step ran at least {tiles:,.1f} ms from its start to the next's: its mark holds part of each "
                  f"iteration, and nothing marks where the last one ends",
                  "; dropped the last step: it ends where its mark and its work end, not at a next step's start")


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
        note=r.note,
        # Python numbers, not numpy scalars, through the loop: a numpy scalar per step and field was 17 ms on 1,410 steps
        windows=[StepWindow(int(i), (int(s) - origin) / PS_PER_MS, (int(e) - origin) / PS_PER_MS)
                 for i, s, e in zip(ids.tolist(), hs.tolist(), he.tolist())],
        mapped_via=r.mapped, confidence=_confidence(r),
        iteration_guess=r.guessed and r.source == "whole_capture",
        unlike_bursts=r.unlike if r.source == "whole_capture" else 0,
    )
    return Steps(det, ids.astype(np.int64), host_w, gpu_windows, origin, kept.next_start, gpu_next, kept.prev_id)


_RANK = ("low", "medium", "high")


def _confidence(r: _Reading) -> str:
    """The steps' confidence: their source's (:data:`CONFIDENCE`), lowered to the job's own reading's where it says
    less of itself (``SpanSteps.confidence``: a loop of one kernel read from the host's waits alone is a guess)."""
    c = CONFIDENCE.get(r.source, "low")
    own = r.own.confidence if r.own is not None and r.own.source == r.source else c
    return min(c, own, key=lambda x: _RANK.index(x) if x in _RANK else 0)


def _in_warmup_ranges(trace: Trace, starts: np.ndarray) -> tuple[np.ndarray, str]:
    """Bool per step (by its host start): the step begins inside a user range the program names as its warm-up
    (``frameworks.nvtx.is_warmup_name``: a benchmark's ``Warm-up`` around the iterations it does not measure), and
    the first such range's name."""
    h = trace.h
    sel = user_ranges.warmup_ranges(h, trace.ranges)
    if not sel.size:
        return np.zeros(starts.size, dtype=bool), ""
    ws, we = union_intervals(h.start[sel].astype(np.int64, copy=False), h.end[sel].astype(np.int64, copy=False))
    k = np.searchsorted(ws, starts.astype(np.int64), side="right") - 1
    inside = (k >= 0) & (starts < we[np.maximum(k, 0)])
    outer = sel[np.argmax(h.end[sel] - h.start[sel])]  # the whole warm-up, not one of its iterations
    return inside, h.names[int(h.name[outer])]


def _whole_window(h: HostEvents, devs: list[DeviceEvents], launches: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The one window of a capture analysed whole (one pass, or no steps): its GPU work and the host ops that launched
    it -- from the earliest start to the latest end of the device events and of the ops whose launch calls made them
    (each launch's innermost enclosing host event).

    Why: the work of a pass starts when the host calls the op that launches it, before its kernel; a window from the
    first kernel leaves out that op (the first ``aten::mm`` 1.7 us before its kernel on a compiled MI300X block), and
    with it the op's calls and FLOPs, while its kernel's time is counted.  The op, not an annotation around the whole
    program: a window is the work, not the benchmark loop around it."""
    active = [d for d in devs if len(d)]
    start = min(int(d.start.min()) for d in active)
    end = max(int(d.end.max()) for d in active)
    # kernels only: a copy's or memset's host call can hold a wait or the context's creation (start-up's memset)
    rec = [a[(a >= 0) & ((d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE))]
           for a, d in zip(launches, devs) if len(d)]
    rec = np.concatenate(rec) if rec else np.zeros(0, np.int64)
    if rec.size and len(h):
        op = _launching_ops(h, np.unique(rec))
        start = min(start, int(h.start[op].min()))
        end = max(end, int(h.end[op].max()))
    return np.array([start], np.int64), np.array([end], np.int64)


def _launching_ops(h: HostEvents, rec: np.ndarray) -> np.ndarray:
    """Per launch record of ``rec``: the innermost host event of its line that encloses it (the op that launched it),
    itself where none does.

    Exact for nested events, in O(n log n): in (line, start, longer first) order an event's depth is the number of
    events before it on its line still open at its start, and its parent is the nearest event before it one level
    up.  Where a line's events overlap without nesting (clock rounding), a found parent that does not enclose the
    launch is not taken."""
    order = np.lexsort((-(h.end - h.start).astype(np.int64), h.start, h.line))
    line = h.line[order].astype(np.int64, copy=False)
    st, en = h.start[order].astype(np.int64, copy=False), h.end[order].astype(np.int64, copy=False)
    pos = np.arange(order.size, dtype=np.int64)
    first = np.searchsorted(line, line, side="left")  # each event's line starts here in ``order``
    closed = np.zeros(order.size, np.int64)
    for ln in np.unique(line[np.isin(order, rec)]).tolist():
        lo, hi = np.searchsorted(line, [ln, ln + 1])
        ends = np.sort(en[lo:hi])
        closed[lo:hi] = np.searchsorted(ends, st[lo:hi], side="right")
    depth = pos - first - closed
    at = np.empty(order.size, np.int64)
    at[order] = pos
    q = at[rec]
    out = rec.copy()
    for d in np.unique(depth[q]).tolist():
        if d <= 0:
            continue
        sel = np.flatnonzero(depth[q] == d)
        up = np.flatnonzero(depth == d - 1)
        k = np.searchsorted(up, q[sel], side="left") - 1
        ok = k >= 0
        par = up[np.clip(k, 0, None)]
        ok &= (line[par] == line[q[sel]]) & (st[par] <= st[q[sel]]) & (en[par] >= en[q[sel]])
        out[sel[ok]] = order[par[ok]]
    return out


def _one_pass(job: Job | None, active: list[DeviceEvents]) -> bool:
    """Inference work with no repeated structure: the capture is one forward pass (never cut at its idle gaps); a
    training job whose own NVTX ranges name its iteration, which does not repeat, or whose one optimizer step shows
    one iteration (an update runs once per iteration: GPU bursts never outnumber the iterations, as HPMLProj's cold
    Trainer step read as 23 bursts): one iteration, never GPU bursts."""
    if job is None or not active or job.kind.confidence == "low":
        return False
    if job.kind.kind in ("inference", "serving"):
        return True
    return job.kind.kind == "training" and (job.kind.from_ranges or job.optimizer_steps == 1)


def _pass_phase_window(trace: Trace, active: list[DeviceEvents]) -> tuple[int, int, str] | None:
    """(start, end, names in words) of the one pass a program marks with user ranges named after its phases
    (``frameworks.nvtx.is_pass_phase_name``: ``forward pass``, ``backward pass``, ``optimizer step``) or after the
    step itself (``is_step_name``: a ``training_step`` range around them), outside its own warm-up ranges: from the
    first such range's start to the later of the last one's end and the end of the GPU work launched inside them.
    None where no such range launched GPU work or a kernel is launched after the last one ends (the ranges do not
    enclose the pass's work: :func:`_kernels_launched_after`).  NVTX ranges and Kineto's ``record_function`` annotations alike (a
    benchmark's ``[param|...|measure|forward]`` after its ``warmup|forward``).  The ranges bound the pass both ways:
    the host's Python before the pass's first launch (a ``training_step`` range opened 0.95 ms before its first
    kernel's op on a B200) is the step's, as the set-up before them is not.

    Why: a benchmark that times one pass (CS336's DDP scripts: ``forward pass`` and ``backward pass`` once per rank)
    runs its set-up -- the process group, the model's construction, the parameters' broadcast, NCCL's start-up -- in
    the same window; the whole window as the step (3.37 s for a 0.54 s pass) books all of it as the step's idle time."""
    # NVTX ranges, else Kineto's record_function; no op's, no library's -- but a framework's around its own pass
    # (DeepSpeed's engine ``forward`` / ``backward``) bound it as the program's would (h37-nvtx22)
    user = np.union1d(user_ranges.program_ranges(trace), user_ranges.framework_written_ranges(trace))
    if not user.size or not active:
        return None
    h = trace.h
    phase = h.per_name(nvtx.is_step_name) | h.per_name(nvtx.is_pass_phase_name)
    sel = user[phase[h.name[user]]]
    if not sel.size:
        return None
    warm = h.per_name(nvtx.is_warmup_name)[h.name[user]]
    wsel = user[warm & ~user_ranges.recurring_phases(h, user, warm)]  # a phase of every iteration is no warm-up
    if wsel.size:
        ws, we = union_intervals(h.start[wsel].astype(np.int64, copy=False), h.end[wsel].astype(np.int64, copy=False))
        k = np.searchsorted(ws, h.start[sel].astype(np.int64), side="right") - 1
        inside = (k >= 0) & (h.start[sel] < we[np.maximum(k, 0)])
        sel = sel[~inside]
        if not sel.size:
            return None
    s, e = int(h.start[sel].min()), int(h.end[sel].max())
    if not _launched_work(h, active, s, e) or _kernels_launched_after(h, active, e):
        return None
    sel = sel[np.lexsort((-(h.end[sel] - h.start[sel]).astype(np.int64), h.start[sel], h.line[sel]))]
    top = sel[_top_level(h, sel)]
    names = list(dict.fromkeys(h.names[int(h.name[i])] for i in top[np.argsort(h.start[top], kind="stable")].tolist()))
    words = ", ".join(f"`{n}`" for n in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return s, max(e, _last_step_device_end(h, active, s, e)), words


def _ranges_word(trace: Trace) -> str:
    """What the trace's marked ranges are called, as its reader names them (``HostRanges.source``: NVTX for Nsight,
    roctx for AMD's tracers)."""
    src = (trace.ranges.source if trace.ranges is not None else "NVTX").split(" (")[0].strip() or "NVTX"
    return src if src.endswith("ranges") else f"{src} ranges"


def _training_range_steps(trace: Trace, job: Job | None) -> tuple | None:
    """Steps of a training job known by its own NVTX ranges (``Kind.from_ranges``): the training range that lasts
    longest on average (the backward pass holds the gradient all-reduces it launches, so it outlasts them), where it
    repeats on a thread -- each repeat starts an iteration.  None where it does not repeat (one iteration).  Each
    rank's thread keeps its own windows (:func:`_windows_by_line`), as every NVTX reading's (h37-ranksteps)."""
    r = trace.ranges
    if job is None or not job.kind.from_ranges or job.kind.kind != "training" or r is None or not r.idx.size:
        return None
    h = trace.h
    idx = user_ranges.marked_ranges(r)
    is_training = np.fromiter((nvtx.is_training_range(n) for n in h.names), bool, len(h.names))
    sel = idx[is_training[h.name[idx]]]
    if not sel.size:
        return None
    names, inv = np.unique(h.name[sel], return_inverse=True)
    dur = (h.end[sel] - h.start[sel]).astype(np.float64)
    best = int(names[int(np.argmax(np.bincount(inv, weights=dur) / np.bincount(inv)))])
    pick = sel[h.name[sel] == best]
    if _max_per_line(h, pick) < 2:
        return None
    pick = pick[np.lexsort((h.start[pick], h.line[pick]))]
    lines = np.unique(h.line[pick]).size
    note = (f"{_ranges_word(trace)} `{h.names[best]}`, the training iteration's own range ({pick.size} on {lines} "
            f"thread{'s' if lines > 1 else ''}): each repeat starts a step")
    start, end = h.start[pick].astype(np.int64, copy=False), h.end[pick].astype(np.int64, copy=False)
    opening = _iteration_opening(h, idx, pick)
    if opening is not None:  # the range is a phase of the iteration: the iteration opens with the phase before it
        first, start, end = opening
        note += f", from the iteration's first phase `{h.names[int(h.name[first])]}`, which precedes it every time"
    ids = _range_step_ids(h, pick)
    u, s, e = _group_windows(ids, start, end)
    return "nvtx_top_range", note, u, s, e, _windows_by_line(h.line[pick], ids, start, end, u)


def _engine_range_steps(trace: Trace, job: Job | None, launches: list[np.ndarray]) -> tuple | None:
    """Steps of a serving engine's loop from its own NVTX ranges: its step range (``Engine.step_span``, run once an
    iteration: TensorRT-LLM's ``_forward_step``) repeated on a thread, one phase of an iteration the earlier phase
    before it opens every time (:func:`_iteration_opening`: ``_fetch_new_requests``), where the iterations so read
    hold at least ``job.span_step_coverage`` of the GPU work; None otherwise.

    Why: the step range alone holds only its phase's work (the forward's kernels, not the sampling's or the batch's
    upload), so as a span of the program's own it holds too little of the work to be read as the step, and repeated
    fewer than ``steps.nvtx_min_repeats`` times it marks none as a top-level range; the capture then read as one
    serving pass -- 2 ranks of 2 TensorRT-LLM iterations, one pass of 77.3 ms (h37-nsyslast).  The engine names its
    iteration's phase, and its repeats count the iterations; each rank's thread keeps its own windows (its GPU's last
    step spanned the ranks' lag without them, h37-ranksteps)."""
    rg = trace.ranges
    engine = engines.by_id(job.kind.engine) if job is not None else None
    if engine is None or not engine.step_span or rg is None or not rg.idx.size:
        return None
    h = trace.h
    idx = user_ranges.marked_ranges(rg)
    idx = idx[np.lexsort((h.start[idx], h.line[idx]))]
    for pattern in engine.step_span:
        hit = np.fromiter((bool(pattern.search(n)) for n in h.names), bool, len(h.names))
        pick = idx[hit[h.name[idx]]]
        if _max_per_line(h, pick) < 2:
            continue
        opening = _iteration_opening(h, idx, pick)
        if opening is None or not _windows_hold_work(h, launches, *opening[1:]):
            continue
        first, start, end = opening
        lines = np.unique(h.line[pick]).size
        note = (f"{_ranges_word(trace)} `{h.names[int(h.name[pick[0]])]}`, {engine.name}'s step range ({pick.size} "
                f"on {lines} thread{'s' if lines > 1 else ''}), each iteration from its first phase "
                f"`{h.names[int(h.name[first])]}`, which precedes it every time")
        ids = _range_step_ids(h, pick)
        u, s_, e_ = _group_windows(ids, start, end)
        return "nvtx_top_range", note, u, s_, e_, _windows_by_line(h.line[pick], ids, start, end, u)
    return None


def _windows_hold_work(h: HostEvents, launches: list[np.ndarray], start: np.ndarray, end: np.ndarray) -> bool:
    """Whether the windows (``start``, ``end``, ps) enclose at least ``job.span_step_coverage`` of the launches of the
    capture's device events: the share a span must hold to be the step (as :func:`_hold_the_work`)."""
    rec = np.concatenate([a[a >= 0] for a in launches]) if launches else np.zeros(0, np.int64)
    if not rec.size:
        return False
    rs, re_ = union_intervals(start.astype(np.int64, copy=False), end.astype(np.int64, copy=False))
    t = h.start[rec].astype(np.int64, copy=False)
    j = np.searchsorted(rs, t, side="right") - 1
    return float(((j >= 0) & (t <= re_[np.maximum(j, 0)])).mean()) >= T("job.span_step_coverage")


def _iteration_opening(h: HostEvents, marked: np.ndarray, pick: np.ndarray) -> tuple[int, np.ndarray, np.ndarray] | None:
    """Where each iteration opens and ends, per repeat of the training range ``pick`` (sorted by line, start), where
    that range is one phase of it: the repeats of a top-level range on the same thread that starts before the first
    repeat of ``pick`` and once between every two (``data``, ``fwd`` before ``bwd``, ``opt``) -- the earliest such
    name is the iteration's first phase -- each iteration ending with the last top-level range before the next opens.
    (One opening range, starts, ends); None where none precedes it so (the training range opens each iteration, or
    the order varies).

    Why: a backward range repeats once an iteration, but starts mid-way through it; its repeats as step starts put each
    iteration's forward in the step before and cut the last step to its backward and optimizer (walk seed 132 of
    ``--forms11``: ``data``/``fwd``/``bwd``/``opt``, the last of 2 steps 1.75 ms of the 7.06 ms period)."""
    starts, ends = [], []
    for ln in np.unique(h.line[pick]).tolist():
        mine = pick[h.line[pick] == ln]
        top = marked[h.line[marked] == ln]
        top = top[np.lexsort((-(h.end[top] - h.start[top]).astype(np.int64), h.start[top]))]
        top = top[_top_level(h, top)]
        opening = next((same for same in (top[h.name[top] == h.name[i]] for i in top[h.start[top] < h.start[mine[0]]])
                        if _interleaves(h, same, mine)), None)
        if opening is None:
            return None
        s = h.start[opening].astype(np.int64)
        k = np.searchsorted(s, h.start[top].astype(np.int64), side="right") - 1
        e = s.copy()
        np.maximum.at(e, k[k >= 0], h.end[top[k >= 0]].astype(np.int64))
        starts.append(s)
        ends.append(e)
    return int(opening[0]), np.concatenate(starts), np.concatenate(ends)


def _interleaves(h: HostEvents, first: np.ndarray, then: np.ndarray) -> bool:
    """``first`` (a name's repeats, by start) starts once before each of ``then`` and after the one before it."""
    if first.size != then.size or h.name[first[0]] == h.name[then[0]]:
        return False
    fs, ts, te = h.start[first], h.start[then], h.end[then]
    return bool((fs <= ts).all() and (fs[1:] >= te[:-1]).all())


def _cold_steps(hs: np.ndarray, he: np.ndarray, gpu_windows: dict[int, np.ndarray], job: Job) -> np.ndarray:
    """Bool per step: it holds one-time costs (their host spans start inside the step's host window)."""
    cs = job.phase.start
    k = np.searchsorted(hs, cs, side="right") - 1
    ok = (k >= 0) & (cs < he[np.clip(k, 0, None)])
    out = np.zeros(hs.size, dtype=bool)
    out[k[ok]] = True
    return out


def _gpu_step_line_windows(lines: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[int, np.ndarray]]:
    """Steps of per-GPU step lines: (ids, host-wide starts, ends, per-GPU windows), by start.

    A step's host-wide window spans its windows on every GPU; a GPU that did not see a step gets the
    host-wide window."""
    per = {g: _group_windows(*kse) for g, kse in lines.items()}
    ids = sorted_unique(np.concatenate([v[0] for v in per.values()]))
    hs = np.full(ids.size, np.iinfo(np.int64).max, np.int64)
    he = np.full(ids.size, np.iinfo(np.int64).min, np.int64)
    for k, s, e in per.values():
        idx = np.searchsorted(ids, k)
        np.minimum.at(hs, idx, s)
        np.maximum.at(he, idx, e)
    gpu_windows = {}
    for g, (k, s, e) in per.items():
        w = np.stack([hs, he], axis=1).copy()
        idx = np.searchsorted(ids, k)
        w[idx, 0], w[idx, 1] = s, e
        gpu_windows[g] = w
    o = np.argsort(hs, kind="stable")
    hs, he = hs[o], he[o]
    # host-wide windows are disjoint, as every host event's step is read by its start (``metrics.context.assign``):
    # a late rank's step k reaches past the first rank's k+1 start, whose events would fall in both (h37-left63)
    he[:-1] = np.maximum(hs[:-1], np.minimum(he[:-1], hs[1:]))
    return ids[o], hs, he, {g: w[o] for g, w in gpu_windows.items()}


def _iteration_range_steps(trace: Trace) -> tuple[str, str, np.ndarray, np.ndarray, np.ndarray] | None:
    """The training wrapper's own ranges around whole iterations (``frameworks.pytorch.is_iteration_range``), where
    at least two are recorded: (source, note, ids, starts, ends), by start; None elsewhere."""
    h = trace.h
    if not len(h):
        return None
    m = np.flatnonzero(h.name_mask(pytorch.is_iteration_range))
    if m.size < 2:
        return None
    m = m[np.lexsort((h.start[m], h.line[m]))]  # by thread, then start
    s, e, line = h.start[m].astype(np.int64), h.end[m].astype(np.int64), h.line[m].astype(np.int64)
    new_line = np.r_[True, line[1:] != line[:-1]]
    # one range a nest, each thread's on their own (a rank's process runs its loop on a thread of its own): the running
    # end restarts on each thread
    lines_at = np.flatnonzero(new_line)
    run_end = np.empty_like(e)
    for a, b in zip(lines_at, np.r_[lines_at[1:], e.size]):
        run_end[a:b] = np.maximum.accumulate(e[a:b])
    outer = e > np.where(new_line, np.iinfo(np.int64).min, np.r_[np.iinfo(np.int64).min, run_end[:-1]])
    s, e, line = s[outer], e[outer], line[outer]
    if s.size < 2:
        return None
    # each thread's kth iteration is the job's kth: the ranks of a data-parallel job run their iterations together
    first = np.flatnonzero(np.r_[True, line[1:] != line[:-1]])
    ids = np.arange(s.size, dtype=np.int64) - np.repeat(first, np.diff(np.r_[first, s.size]))
    threads = first.size
    ids, s, e = _group_windows(ids, s, e) if threads > 1 else (ids, s, e)
    if s.size < 2:
        return None
    name = h.names[int(h.name[m[0]])]
    note = (f"the training loop's own `{name}` ranges, one around each whole iteration"
            + (f" on each of {threads} threads, the kth of each one iteration" if threads > 1 else "")
            + ": they bound the iterations, where the profiler's step marks bound the interval between two "
              "`prof.step()` calls, which the loop makes mid-iteration")
    return "iteration_range", note, np.arange(s.size, dtype=np.int64), s, e


def _marked_host_steps(trace: Trace) -> tuple[str, str, np.ndarray, np.ndarray, np.ndarray] | None:
    """The format's own host step annotations (PyTorch ``ProfilerStep#N``), merged per step number."""
    m = trace.host_steps
    if m is None or not m.ids.size:
        return None
    u, s, e = _group_windows(m.ids, m.start, m.end)
    return m.source, m.note, u, s, e


def _launched_per_step(hs: np.ndarray, he: np.ndarray, h: HostEvents, d: DeviceEvents,
                       launch: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per host step: (first kernel start, first device event start, last device end) of the work launched
    inside it; int64 max / min where the step launched nothing on this GPU."""
    n = hs.size
    big, small = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    first_k = np.full(n, big, np.int64)
    first_any = np.full(n, big, np.int64)
    last = np.full(n, small, np.int64)
    m = _where(launch >= 0)
    if _size(m, launch.size) == 0 or n == 0:
        return first_k, first_any, last
    t = h.start[launch[m]]
    runs = rising_runs(t)
    bounds = np.stack([hs, he], axis=1).reshape(-1)
    if runs is not None and bool((bounds[1:] >= bounds[:-1]).all()):
        # disjoint steps and launch times in a few rising runs (one per launching thread): each step bound placed
        # among the times, not a search and a gather per launch (8 GPUs x 220 k launches on the dense 100 MB capture)
        k = window_index_by_runs(t, bounds, runs, np.intp)
        ok = k >= 0
    else:
        k = searchsorted_right(hs, t) - 1  # launch times come in order: merged, not searched one by one
        ok = k >= 0
        ok &= t < he[np.clip(k, 0, None)]
    del t
    # every event launched inside a step (the usual GPU): its columns as they are, no gathers
    if not ok.all():
        m = (np.flatnonzero(ok) if isinstance(m, slice) else m[ok])
        k = k[ok]
    start, end, kind = d.start[m], d.end[m], d.kind[m]
    reduce_at(np.minimum, first_any, k, start)
    reduce_at(np.maximum, last, k, end)
    kern = (kind == devices.KIND_KERNEL) | (kind == devices.KIND_COLLECTIVE)
    if kern.all():
        reduce_at(np.minimum, first_k, k, start)
    else:
        reduce_at(np.minimum, first_k, k[kern], start[kern])
    return first_k, first_any, last


def _where(mask: np.ndarray) -> np.ndarray | slice:
    """The positions ``mask`` holds: every position as a slice (views, no gathers) where it holds them all."""
    return slice(None) if bool(mask.all()) else np.flatnonzero(mask)


def _size(sel: np.ndarray | slice, n: int) -> int:
    """How many positions :func:`_where`'s answer holds, of ``n``."""
    return n if isinstance(sel, slice) else int(sel.size)


def _own_host_windows(r: _Reading) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """GPU -> the host windows of its own process's steps, where each rank numbers its steps on its own
    (``SpanSteps.per_line``: each rank's updates; ``_Reading.per_line``: each rank's thread's step ranges) and the
    format names the lines of each GPU's process; {} otherwise.

    Why: the host's step k runs from the first rank's (k-1)th update to the last's kth, tiled by the first rank's.  A
    rank 1.5 ms behind launches the end of its step k-1 (its backward, its all-reduce) inside that window, so its GPU's
    step k was placed at work a step earlier than the first rank's GPU's -- 4 ranks 1.5 ms apart whose host runs a step
    ahead read as GPUs starting "each step" 15 ms apart in a 14.7 ms step (h37-left62).  Each GPU's step k is where
    the work its own process launched in its own kth step runs."""
    own = r.own.per_line if r.own is not None and r.source == "step_end_events" else r.per_line
    lines = r.trace.gpu_host_lines
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    if not own or not lines:
        return out
    for gpu, ls in lines.items():
        ws = [own.get(int(ln)) for ln in np.asarray(ls).tolist()]
        ws = [w for w in ws if w is not None]
        if not ws or any(w[0].size != r.hs.size for w in ws):
            continue  # a process that ran fewer updates than the host's steps: the host's windows stand
        s = np.min(np.stack([w[0] for w in ws]), axis=0)
        e = np.max(np.stack([w[1] for w in ws]), axis=0)
        s, e = _tile(s, e)
        e[-1] = max(int(e[-1]), int(r.he[-1]))
        out[int(gpu)] = (s, e)
    return out


def _async_device_windows(hs: np.ndarray, he: np.ndarray, h: HostEvents, devs: list[DeviceEvents],
                          launches: list[np.ndarray],
                          own: dict[int, tuple[np.ndarray, np.ndarray]] | None = None
                          ) -> tuple[dict[int, np.ndarray], bool]:
    """Per GPU step windows placed on the device, when dispatch is asynchronous or each rank's own steps are known
    (``own``); ({}, False) otherwise.  The flag: the host runs ahead of the GPU (the spill test below).

    With asynchronous dispatch (JAX: a jitted call returns before its kernels run; the host runs up to
    dozens of steps ahead) a host step window says nothing about the GPU: the device step k is where the
    work launched inside host step k runs, found through the launches' correlation ids (a CUDA graph
    launch covers all its kernels).  Step k then runs from its first kernel to the next step's first
    kernel (idle time before a step belongs to the one before, as with host windows).  Where the launched
    work ends inside (or shortly after) its host window -- a synchronous step, TensorFlow's usual -- the
    host windows are kept: they contain the device work and the host's input wait before it.  ``own``: GPU -> the
    host windows of its own process's steps (:func:`_own_host_windows`), read instead of the host's for that GPU.
    """
    out: dict[int, np.ndarray] = {}
    spills, lengths = [], he - hs
    per: list[tuple[DeviceEvents, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    lags = _launch_lags(hs, h, devs, launches)
    for d, launch in zip(devs, launches):
        if not len(d):
            continue
        hs_d, he_d = (own or {}).get(d.gpu, (hs, he))
        reach = he_d
        if d.gpu not in (own or {}) and lags.get(d.gpu, 0) > 0:
            reach = he_d.copy()
            reach[-1] += lags[d.gpu]
        first_k, first_any, last = _launched_per_step(hs_d, reach, h, d, launch)
        has = last > np.iinfo(np.int64).min
        if has.sum() < 2:
            continue
        spills.append((last[has] - he_d[has]).astype(np.float64))
        per.append((d, first_k, first_any, last, hs_d))
    if not per or not lengths.size:
        return out, False
    # each rank's own steps (``own``, every placed GPU's): the host-wide windows are tiled by the first rank's updates,
    # so they hold none of a late rank's step whether or not its host runs ahead -- a rank 4.5 ms late whose GPU waits
    # for it read its first GPU "starting last" at work of the step before (h37-randjobs3)
    mine = bool(own) and all(d.gpu in own for d, *_ in per)
    ahead = float(np.median(np.concatenate(spills))) > T("steps.async_spill_steps") * float(np.median(lengths))
    ahead = ahead or any(_spill_grows(sp, float(np.median(lengths))) for sp in spills)
    if not (ahead or mine):
        return out, False
    for d, first_k, first_any, last, hs_d in per:
        big = np.iinfo(np.int64).max
        start = np.where(first_k < big, first_k, first_any)
        start = np.where(start < big, start, hs_d)  # a step that launched nothing here: its host start
        start = np.maximum.accumulate(start)
        end = np.empty_like(start)
        end[:-1] = start[1:]
        end[-1] = max(int(start[-1]), _last_device_end(start, last, int(he[-1])))
        out[d.gpu] = np.stack([start, end], axis=1)
    return out, ahead


def _launch_lags(hs: np.ndarray, h: HostEvents, devs: list[DeviceEvents], launches: list[np.ndarray]
                 ) -> dict[int, int]:
    """GPU -> how much later (ps) its launches of each host-wide step begin than the earliest GPU's (the median over
    the steps with a next one); {} where fewer than two GPUs launched in them.

    Why: host-wide windows read from one thread (a launch sequence's repeats) end the last step at that thread's last
    launch; every other step runs to the next one's start, so it holds the other ranks' launches made a little later,
    but the last holds none of a lagging rank's launches after its reading thread's -- 4 ranks 50 us apart read their
    last steps 37.9, 33.1, 29.0 and 24.9 ms of a 37.9 ms step (h37-nsyslast).  The lag each rank shows in the steps
    before is where its own last step's launches end.  Only of ranks that launch from threads of their own: one
    thread launching to every GPU in turn makes its sequence of them all, its last launch every GPU's."""
    if hs.size < 2:
        return {}
    firsts: dict[int, np.ndarray] = {}
    seen: set[int] = set()
    for d, launch in zip(devs, launches):
        ev = launch[launch >= 0] if len(d) else launch[:0]
        if not ev.size:
            continue
        lines = set(np.unique(h.line[ev]).tolist())
        if lines & seen:
            return {}
        seen |= lines
        t = np.sort(h.start[ev].astype(np.int64))
        i = np.searchsorted(t, hs[:-1])  # each step's first launch here, where it lies before the next step's start
        at = t[np.minimum(i, t.size - 1)]
        firsts[d.gpu] = np.where((i < t.size) & (at < hs[1:]), at - hs[:-1], -1)
    if len(firsts) < 2:
        return {}
    both = np.all(np.stack(list(firsts.values())) >= 0, axis=0)
    if not both.any():
        return {}
    lead = {g: float(np.median(f[both])) for g, f in firsts.items()}
    least = min(lead.values())
    return {g: int(v - least) for g, v in lead.items()}


def _last_device_end(start: np.ndarray, last: np.ndarray, host_end: int) -> int:
    """Where a GPU's last step ends (ps), its steps placed from first kernel to the next step's first kernel
    (``start``; ``last``: the end of each step's launched work, int64 min where it launched none here): its own work's
    end and after it the GPU's idle time before a next step that every step before it shows (the least of their
    times from their work's end to the next step's first kernel); the host's end (``host_end``) where it launched none.

    Why: every other step runs to the next one's first kernel, so it holds the host's time between its work and that
    kernel (the next batch's wait, the untraced Python); the last has no next kernel in the capture, and ended at its
    own work it lacks that time -- a 3-step job of 8.91 ms steps (4.5 ms of them the host's between the work) read its
    last 4.41 ms on each rank, its mean 7.41 ms (h37-nsyslast).  A step's length is never shorter than the work it
    holds and the gap every other step shows; the least, not a typical one: a step whose gap held a one-time cost (a
    recompilation before the next step) stretches no last step."""
    small = np.iinfo(np.int64).min
    if last[-1] <= small:
        return host_end
    k = np.flatnonzero(last[:-1] > small)  # the steps with work here whose next step starts in the capture
    gap = int(np.maximum(start[k + 1] - last[k], 0).min()) if k.size else 0
    return int(last[-1]) + gap


def _spill_grows(spill: np.ndarray, length: float) -> bool:
    """Whether the launched work's spill past its host window (``spill``, ps, one a step) grows every step, by more than
    chance moves a window's edge (``steps.short_last_share`` of the median step ``length``) on average, and past the
    first step's work always ends outside its window.

    Why: a host that waits for its GPU each step (a read, a sync) leaves no spill to grow -- its next window starts
    after the work ends; a GPU a little slower than its host falls further behind each step, its spill growing by the
    difference of the periods while its median stays small against the step.  The host windows then stand for the
    host's period, not the GPU's (h37-randjobs8: 9 calls of 3.62 ms on the host, 3.96 ms on the GPU, the lag growing
    0.33 ms a call: the mean read 8.5% low)."""
    if spill.size < 3 or not (spill[1:] > 0).all():
        return False
    grow = np.diff(spill)
    return bool((grow > 0).all()) and float(grow.mean()) > T("steps.short_last_share") * length


def _tile(s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Step k ends where step k+1 starts (gaps belong to the earlier step); last keeps its end."""
    s = s.astype(np.int64).copy()
    e = e.astype(np.int64).copy()
    if s.size > 1:
        e[:-1] = np.maximum(s[1:], np.minimum(e[:-1], s[1:]))
    return s, e


def _recorded(trace: Trace) -> tuple[np.ndarray, np.ndarray]:
    """The union (sorted, disjoint ps intervals) of everything the capture recorded: every thread's host events, its
    Python spans, its OS calls and every GPU's records."""
    parts = [(trace.h.start, trace.h.end)] + [(d.start, d.end) for d in trace.devices if len(d)]
    for extra in (trace.spans, trace.host_waits):
        if extra is not None and len(extra):
            parts.append((extra.start, extra.end))
    return union_intervals(np.concatenate([p[0] for p in parts]).astype(np.int64, copy=False),
                           np.concatenate([p[1] for p in parts]).astype(np.int64, copy=False))


def _cut_unrecorded(trace: Trace, hs: np.ndarray, he: np.ndarray) -> tuple[np.ndarray, np.ndarray, str]:
    """GPU-burst steps (tiled ``hs``, ``he``, ps) each cut at the longest stretch inside it with nothing recorded
    (:func:`_recorded`) where that stretch is at least half its window and longer than any other step; the stretch is
    then between steps: the step ends where it starts and the next starts where it ends.  Returns the windows and the
    note's words ("" if none).

    Why: a burst step runs from its burst to the next, on the guess that the host's time between them serves the
    iteration.  Where nothing at all was recorded there -- no host event, OS call or GPU record -- nothing says so:
    the stretch may be any code or wait outside the loop, and a step made mostly of it is the stretch's length, not
    the iteration's (a ViT's 3.78 s unrecorded stretch made a 1.94 s mean step of an ~84 ms iteration, and every
    per-step share a fraction of its truth).  The host's own unrecorded code in each iteration (a capture of CUDA
    calls only, a GPU-only one) recurs in every step, so a stretch no longer than another whole step may be that, and
    stays; a stretch the thread spent in a recorded OS wait (a benchmark's 4.65 s in ``getc``) is recorded, and a
    shorter one leaves the step mostly known: all stay in the step."""
    us, ue = _recorded(trace)
    gs, ge = ue[:-1], us[1:]  # the stretches nothing covers, sorted
    span = (he - hs).astype(np.int64)
    hs, he = hs.copy(), he.copy()
    cuts: list[str] = []
    for k in range(hs.size):
        lo, hi = np.searchsorted(gs, hs[k], side="left"), np.searchsorted(ge, he[k], side="right")
        if hi <= lo:
            continue
        j = lo + int(np.argmax(ge[lo:hi] - gs[lo:hi]))
        length = int(ge[j] - gs[j])
        if 2 * length < int(span[k]) or length <= int(np.delete(span, k).max(initial=0)):
            continue
        he[k] = gs[j]
        if k + 1 < hs.size:
            hs[k + 1] = ge[j]
        cuts.append(f"step {k} at a {length / PS_PER_MS:,.1f} ms stretch")
    if not cuts:
        return hs, he, ""
    return hs, he, (f"; cut {', '.join(cuts)} with nothing recorded (no host event, OS call or GPU record) and "
                    f"longer than any other step: a stretch between steps, not in one")


def _top_range_last_short(r: _Reading, kept: _Kept) -> bool:
    """Whether the last of three or more steps read from the most repeated top-level range (``nvtx_top_range``) ends
    at its own work short of every other step's start to the next's by more than chance moves an edge
    (:func:`_last_ends_at_own_work`, the test the job's own tiled readings take).

    Why: such a range is a guess at the iteration; where it is one phase of it (a training loop's ``forward``, a
    loader's ``load`` before ``evaluate`` and ``metrics``), the last step ends where that phase's work ends, and the
    rest of the iteration is in no step -- at half of it or more, :func:`_last_cut_short`'s bar let it through: 3
    passes of 19.96 ms read 19.96, 19.96 and 10.22 ms (``forward`` around 15 of each pass's 29 kernels; h37-randjobs12,
    walk seed 83)."""
    return r.source == "nvtx_top_range" and kept.ids.size >= 3 and _last_ends_at_own_work(kept) is not None


def _last_cut_short(hs: np.ndarray, he: np.ndarray) -> bool:
    """Whether the last of tiled steps (``hs``, ``he``: host windows, ps) is under half the shortest of the others'
    start-to-start times (the shortest: a cold first step, 1,175 ms before steps of 3.5 ms, says nothing of the rest).

    Why: every tiled step but the last runs from its mark to the next one's, so it holds a whole iteration wherever in
    the iteration the mark stands; the last ends where its own mark and the work launched in it end.  Where the mark
    holds only part of each iteration (an MPI saxpy's NVTX ``saxpy`` range around its launch alone: 17.7 ms of the
    254 ms iterations), that step is a fraction of one, and averaging it with the whole ones understates the step
    (208 ms for 256)."""
    if hs.size < 3:
        return False
    return float(he[-1] - hs[-1]) < 0.5 * float(np.diff(hs).min())


def _chance(tile: np.ndarray) -> float:
    """How far (ps) chance moves the end of a step tiled start to next start (``tile``: the others' start-to-start
    times): the others' own spread, and the noise floor's share (``steps.short_last_share``) of the shortest."""
    step = float(tile.min())
    return max(T("steps.short_last_share") * step, float(tile.max()) - step)


def _last_burst_end(hs: np.ndarray, he: np.ndarray, work_end: np.ndarray) -> int:
    """Where the last of two GPU-burst steps (``hs``, ``he``: tiled, ps; ``work_end``: each burst's own end) ends:
    past its work by the time the first held after its burst (:func:`_last_device_end`, the host-window reading's
    rule), where it is shorter than the first's start-to-start time; else at its own end.  Of :data:`_BURSTS_TILED`
    or more, a last step that short is dropped as partial (:func:`_last_ends_at_own_work`); of two, dropping it leaves
    one step, and the first's gap is the time it lacks.

    Why: each burst's step runs to the next burst's start, so it holds the host's time between its work and the next
    (the untraced host code, the next batch's wait); the last has no next burst and, ended at its work, lacks that time
    -- 2 ranks' node-mode CUDA graphs with 8.46 ms of untraced host time a step read 8.92 and 7.11 ms, the mean 8.02 of
    the 8.92 ms period (h37-seeds23).  A last step already as long as another's tile lacks nothing the steps show: a
    last burst of other work (a benchmark's 77 ms of copies after a 24 ms step) is not stretched."""
    last = int(he[-1])
    if hs.size != 2 or last - int(hs[-1]) >= int(hs[1] - hs[0]):
        return last
    ends = np.minimum(work_end[:-1], he[:-1])  # a step cut at an unrecorded stretch: its time after work ends there
    nxt = np.concatenate([hs[:1], he[:-1]])  # each step's next start as its own end (the cut's, or the next's start)
    return max(last, _last_device_end(nxt, np.append(ends, last), last))


def _last_burst_to_window_end(trace: Trace, hs: np.ndarray, he: np.ndarray) -> int:
    """Where the last of at least :data:`_BURSTS_TILED` GPU bursts' steps (``hs``, ``he``: tiled, ps) ends: at the
    profiler's own window's end where that falls a whole step after its start (within :func:`_chance` of the others'
    start-to-start times), else at its own work's end.

    Why: each burst's step runs to the next burst's start, so it holds the host's time after its work; the last has no
    next burst in the window.  Where the window goes on idle for as long as a step and ends where the next one would
    have started, it recorded that time (a schedule's window closes at the loop's ``prof.step()``; 3 uploads, each
    then 20 ms of the host's, a window to the last one's end: the last step 116 ms of 137 without it); where it ends
    at the burst's work, nothing says how long the iteration ran on (:func:`_last_ends_at_own_work` judges it)."""
    last = int(he[-1])
    end = trace.window_end_ps()
    if hs.size < _BURSTS_TILED or end is None:
        return last
    if any(int(d.end.max()) > last for d in trace.devices if len(d)):  # GPU work after it (bursts outside a frame)
        return last
    tile = np.diff(hs).astype(np.float64)
    ran, room = float(end - int(hs[-1])), _chance(tile)
    return end if end > last and float(tile.min()) - room <= ran <= float(tile.max()) + room else last


def _last_ends_at_own_work(kept: _Kept) -> tuple[float, float] | None:
    """(the last step's length, the shortest other start-to-start time; ms) where the last of steps tiled start to next
    start is shorter than every other's start-to-start time on every GPU (its step windows: the ledger's home); None
    else.

    Why: each iteration the job's own reading tiles (:data:`_TILED`: a launch sequence's repeats, the updates' ends)
    runs to the next one's start, so it holds its work and the time after it (the result read back, the next batch's
    loading); the capture's last ends where its own work ends, with no next iteration to run to.  Where it is the
    shortest it lacks that time, and averaged with the whole ones it understates the step (h37-randjobs6: 5 repeats of a
    3.17 ms loop, the last 2.61 ms, mean 3.06 ms).  The stock rule drops the last of more than
    ``steps.drop_edges_above`` steps anyway; of fewer, this one is dropped where it is short by more than chance moves
    a window's edge (``steps.short_last_share`` of the step, and the others' own spread): a benchmark's last pass,
    synced at its end, 20.02 ms of 20.23, holds its whole pass."""
    n = kept.ids.size
    wins = [w for w in kept.gpu.values() if w.shape[0] == n] or [np.stack([kept.hs, kept.he], axis=1)]
    held, tiles = 0.0, np.inf
    for w in wins:
        tile = np.diff(w[:, 0]).astype(np.float64)
        last, step = float(w[-1, 1] - w[-1, 0]), float(tile.min())
        if not 0 < last < step - _chance(tile):  # short by more than chance moves a window's edge
            return None
        held, tiles = max(held, last), min(tiles, step)
    return held / PS_PER_MS, tiles / PS_PER_MS


def _two_part_marks(r: _Reading, kept: _Kept) -> bool:
    """Whether the last of two tiled steps read from marks the program repeats -- its own spans (``job.structure``) or
    a repeated NVTX range (``nvtx_top_range``) -- is part of an iteration: the first step's own mark falls short of its
    tile (its start to the next one's) by more than chance moves an edge (:func:`_chance`), so each mark holds part of
    an iteration, and the last step, ending where its mark and its work end, falls that short of the tile too.

    Why apart from :func:`_last_cut_short`: with one other step, its tile alone cannot tell a cold first step (its
    one-time work inside its tile) from a mark that holds part of each iteration -- the mark itself can: a cold first
    call's span holds its compilation.  Two jitted executions (``PjRtCApiLoadedExecutable::Execute``, 0.2 ms each)
    12.4 ms apart read as steps of 12.2 and 0.4 ms, a 6.3 ms mean (h37-xplane3); two training iterations read from
    their ``backward`` range opened by ``forward``, a DataLoader wait before each, 3.275 and 2.646 ms (the second
    without the next batch's wait, h37-seeds23: main's bar, half the tile, let a mark of 81% of it through)."""
    marks = _first_mark(r, kept)
    if marks is None:
        return False
    tile = np.asarray([float(int(kept.hs[1]) - int(kept.hs[0]))])
    room = float(tile[0]) - _chance(tile)
    return marks < room and float(int(kept.he[1]) - int(kept.hs[1])) < room


def _first_mark(r: _Reading, kept: _Kept) -> float | None:
    """The length (ps) of the first of two kept steps' own mark, as read before tiling: the program's span
    (``job.structure``) or the NVTX range's window (from its iteration's opening phase); None where the steps are not
    two such marks with a next one."""
    own = r.own
    if kept.ids.size != 2:
        return None
    i = int(kept.ids[0])
    if own is not None and r.source == own.source:
        return float(int(own.end[i]) - int(own.start[i])) if i + 1 < own.start.size else None
    if r.source != "nvtx_top_range" or r.read_end.size != r.ids.size:
        return None
    k = int(np.searchsorted(r.ids, i))
    return float(int(r.read_end[k]) - int(kept.hs[0])) if k + 1 < r.ids.size else None


def _launched_work(h: HostEvents, devs: list[DeviceEvents], s: int, e: int) -> bool:
    """Some device event was launched (host correlation_id record) within [s, e]: the window is a step of the GPU
    job, not the empty one a final ``prof.step()`` opens after the loop's last step (shreyansh26/MLSys-Experiments'
    pinned-copy traces: ``ProfilerStep#4`` of 18 us holding only the profiler's stop, read as a second step that
    halved the step time)."""
    m = (h.corr >= 0) & (h.start >= s) & (h.start <= e)
    if not m.any():
        return False
    corr = sorted_unique(h.corr[m])
    return any(bool(np.isin(d.corr, corr).any()) for d in devs)


def _kernels_launched_after(h: HostEvents, devs: list[DeviceEvents], e: int) -> bool:
    """A kernel (or collective) was launched after ``e``: ranges that end there do not enclose the pass's GPU work
    (a ``forward`` range with the backward and the optimizer's step launched after it), so they bound nothing --
    the set-up before them is no step, but the work after them is.  Copies are left out: reading the results back
    after the measured pass (``loss.item()``, ``.cpu()``) is no part of the pass's compute."""
    m = (h.corr >= 0) & (h.start > e)
    if not m.any():
        return False
    corr = sorted_unique(h.corr[m])
    return any(bool(np.isin(d.corr[(d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)], corr).any())
               for d in devs)


def _last_step_device_end(h: HostEvents, devs: list[DeviceEvents], s: int, e: int) -> int:
    """End of the last device event launched (host correlation_id record) within [s, e]."""
    m = (h.corr >= 0) & (h.start >= s) & (h.start <= e)
    if not m.any():
        return e
    corr = sorted_unique(h.corr[m])
    best = e
    for d in devs:
        hit = np.isin(d.corr, corr)
        if hit.any():
            best = max(best, int(d.end[hit].max()))
    return best


def _xla_module_steps(trace: Trace) -> tuple[str, str, np.ndarray, np.ndarray, np.ndarray] | None:
    """Executions of the compiled module run most often on any GPU (the ``XLA Modules`` line), one per step."""
    if not trace.module_runs:
        return None
    best = max(trace.module_runs, key=lambda r: r.start.size)  # the first GPU's on a tie, as the planes come
    return "xla_modules", best.note, np.arange(best.start.size, dtype=np.int64), best.start, best.end


def _xla_launch_steps(h: HostEvents, proc: np.ndarray | None = None
                      ) -> tuple[str, str, np.ndarray, np.ndarray, np.ndarray] | tuple[str, str, np.ndarray, np.ndarray, np.ndarray, dict] | None:
    """Steps of a raw JAX/XLA capture: the host's executions of its most executed GPU module.

    Raw ``jax.profiler.trace`` files have no ``XLA Modules`` line (the stock
    converter derives it later) and no step markers unless the user added
    ``StepTraceAnnotation``; but every execution of a jitted function's
    module is wrapped in a ``<module>:XLA GPU module`` host event.  The
    module executed most often (at least twice) is taken to be the training
    step -- a whole-run ``fori_loop`` executes once and is left to the later
    sources.  Unlike GPU busy clusters, this needs no idle gap between
    steps, so asynchronous dispatch (no per-step host sync) still splits.
    Where several processes ran it (``proc``: each host line's process, :func:`_line_processes`; the ranks of one
    Nsight export), each process's executions are its own steps (:func:`_module_processes`).
    """
    if not len(h):
        return None
    # each name's module (XPlane's ``<module>:XLA GPU module``, Nsight's ``XlaModule:#hlo_module=<module>,...#``):
    # one module recompiled is one module, whatever program id each compilation got
    modules: dict[str, int] = {}
    of_name = np.array([-1 if (m := xla.module_execution(n)) is None else modules.setdefault(m, len(modules))
                        for n in h.names], dtype=np.int64)
    if not modules:
        return None
    ev = of_name[h.name]
    mod = ev >= 0
    if not mod.any():
        return None
    counts = np.bincount(ev[mod], minlength=len(modules))
    if counts.max() < 2:
        return None
    tied = np.flatnonzero(counts == counts.max())
    # modules executed as often as each other (``jit_train_step`` and the ``jit__threefry_split`` of the key split
    # before it): the step is the one whose executions launch the most work, not the first seen
    best = int(tied[np.argmax([_launches_inside(h, ev == k) for k in tied.tolist()])]) if tied.size > 1 else int(tied[0])
    m = ev == best
    module = list(modules)[best]
    shown = h.names[int(h.name[np.flatnonzero(m)[0]])]
    others = [int(k) for k in tied.tolist() if int(k) != best]
    procs = _module_processes(h, m, proc)
    runs = [_module_runs(h, np.where(own, ev, -1), best, others) for own in procs]
    cycle = np.logical_or.reduce([c for _, _, c in runs])
    note = f"host executions of XLA module `{module}` (`{shown}` events)"
    if cycle.any():
        names = sorted({list(modules)[int(k)] for k in np.unique(ev[cycle]).tolist()})
        note += (f", each followed by one execution of {', '.join(f'`{n}`' for n in names[:3])}"
                 f"{' ...' if len(names) > 3 else ''} (one iteration)")
    if len(runs) == 1:
        s, e, _ = runs[0]
        return "xla_module_launches", note, np.arange(s.size, dtype=np.int64), s, e
    if max(s.size for s, _, _ in runs) < 2:  # each process ran it once: a whole run, as one process's would be
        return None
    return ("xla_module_launches", note + _processes_note(runs)) + _each_process_steps(h, runs, procs)


def _module_runs(h: HostEvents, ev: np.ndarray, best: int, others: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts, ends, cycle) of one process's steps: its executions of module ``best`` (``ev``: each host event's
    module, -1 off this process), each to its end -- the last to the end of the rest of its iteration, where other
    modules run once in each step (``cycle``, bool per host event: :func:`_cycle_modules`).

    Why the last step's end: each step ends where the next starts; the last ended at its module's end, and the cycle's
    other modules' work fell outside every step (survey h37-survey32: a 1.42 ms last step of 3.7-4.5 ms iterations)."""
    m = ev == best
    s, e = union_intervals(h.start[m], h.end[m])
    cycle = _cycle_modules(h, ev, others, s)
    if cycle.any():
        e = e.copy()
        e[-1] = max(int(e[-1]), int(h.end[cycle & (h.start >= s[-1])].max(initial=int(e[-1]))))
    return s, e, cycle


def _line_processes(trace: Trace) -> np.ndarray | None:
    """Per host line, the process that drives a GPU from it (GPUs that share a line are one process's), -1 for a line of
    no GPU's process; None where the format names no lines per GPU (``Trace.gpu_host_lines`` empty: one process)."""
    lines = trace.gpu_host_lines
    if not lines:
        return None
    out = np.full(len(trace.h.line_names), -1, np.int64)
    for k, ls in enumerate(lines.values()):
        ls = np.unique(np.asarray(ls, np.int64))
        joined = np.unique(out[ls])
        out[np.isin(out, joined[joined >= 0])] = k
        out[ls] = k
    return out


def _module_processes(h: HostEvents, m: np.ndarray, proc: np.ndarray | None) -> list[np.ndarray]:
    """Bool per host event, one mask per process that executed the step's module (``m``; ``proc``: each line's process,
    :func:`_line_processes`): its lines' events; one mask of every event where one process ran it or none is named.

    Why: each process executes its own steps.  Executions of every process merged by time are no host-wide steps: ranks
    that run together overlap each other's executions into one chain (4 ranks 50 us apart: five steps read as one),
    ranks that run in turn (each process after the last has ended) line theirs up as one sequence (4 ranks' 5 steps
    read as 20, walk ``--forms`` seed 30061)."""
    if proc is None:
        return [np.ones(len(h), dtype=bool)]
    of = proc[h.line.astype(np.int64)]
    ran = np.unique(of[m]).tolist()
    return [of == p for p in ran] if len(ran) > 1 else [np.ones(len(h), dtype=bool)]


def _processes_note(runs: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> str:
    """How the steps of several processes make the job's: each process's kth execution its step k, and, where no
    process's executions overlap another's, that they ran one after another (not ranks of one step at once)."""
    note = f"; each of {len(runs)} processes executes its own steps: its kth execution is its step k"
    spans = sorted((int(s[0]), int(e.max())) for s, e, _ in runs)
    if all(a[1] <= b[0] for a, b in zip(spans, spans[1:])):
        note += (" (the processes ran one after another, none executing while another did: their steps are "
                 "numbered each from its own first)")
    return note


def _each_process_steps(h: HostEvents, runs: list[tuple[np.ndarray, np.ndarray, np.ndarray]], procs: list[np.ndarray]
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[int, tuple[np.ndarray, np.ndarray]]]:
    """(ids, host-wide starts, ends, per-line windows) of processes' own steps ``runs`` (one per mask of ``procs``):
    step k is every process's kth, host-wide from the first one's start to the last one's end; each line of a process
    that ran every step keeps that process's own windows (:func:`_own_host_windows` places its GPU by them)."""
    ids = np.concatenate([np.arange(s.size, dtype=np.int64) for s, _, _ in runs])
    u, s, e = _group_windows(ids, np.concatenate([r[0] for r in runs]).astype(np.int64),
                             np.concatenate([r[1] for r in runs]).astype(np.int64))
    per_line: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for (ps, pe, _), own in zip(runs, procs):
        if ps.size == u.size:
            for ln in np.unique(h.line[own]).tolist():
                per_line[int(ln)] = (ps[u].astype(np.int64), pe[u].astype(np.int64))
    return u, s, e, per_line


def _cycle_modules(h: HostEvents, ev: np.ndarray, others: list[int], s: np.ndarray) -> np.ndarray:
    """Bool per host event: an execution of another module run as often as the step's module (``others``) that runs
    once in each step (steps from ``s``, the step module's executions' starts, to the next's start; the last to the
    capture's end) -- the rest of one iteration, as a loop calling four jitted solvers in turn runs each once."""
    out = np.zeros(len(h), dtype=bool)
    for k in others:
        mk = ev == k
        if not mk.any():  # a module this process never ran (``ev`` is one process's)
            continue
        at = np.searchsorted(s, h.start[mk], side="right") - 1
        if at.min() >= 0 and np.array_equal(np.bincount(at, minlength=s.size), np.ones(s.size, np.int64)):
            out |= mk
    return out



def _launches_inside(h: HostEvents, sel: np.ndarray) -> int:
    """How many launch records (host events with a correlation id) start inside the events ``sel`` on their thread."""
    n = 0
    launch = np.asarray(h.corr) >= 0
    for ln in np.unique(h.line[sel]).tolist():
        on = h.line == ln
        s, e = union_intervals(h.start[sel & on], h.end[sel & on])
        t = h.start[launch & on].astype(np.int64, copy=False)
        k = np.searchsorted(s, t, side="right") - 1
        n += int(((k >= 0) & (t <= e[np.maximum(k, 0)])).sum())
    return n


def _nvtx_steps(trace: Trace, launches: list[np.ndarray] | None = None, job: Job | None = None
                ) -> tuple[str, str, np.ndarray, np.ndarray, np.ndarray, dict[int, tuple[np.ndarray, np.ndarray]]] | None:
    """Steps from the capture's NVTX ranges (``Trace.ranges``), in this order: PyTorch's ``ProfilerStep#N``; user
    ranges named like a step or an iteration (``frameworks.nvtx.is_step_name``), the most repeated such name (source
    ``nvtx_range``); else the top-level user range (inside no other range of its thread) repeated most often on one
    thread, at least ``steps.nvtx_min_repeats`` times (``nvtx_top_range``: a guess, medium confidence), where the
    steps it marks hold at least ``job.span_step_coverage`` of the capture's launches (:func:`_hold_the_work`).
    Framework ops (autograd NVTX) and libraries' ranges (NCCL...) never mark steps.  A step's number is the one its name carries (``ProfilerStep#7``, ``iteration 12``), else its order on
    its thread; ranks' ranges of the same number are one step, and each thread's own windows of them are kept
    (:func:`_line_windows`: each rank's GPU is placed by its own ranges, :func:`_own_host_windows`)."""
    r = trace.ranges
    if r is None or not r.idx.size:
        return None
    h = trace.h
    idx = r.idx
    names = h.names
    pstep = np.fromiter((pytorch.step_number(n) for n in names), np.int64, len(names))
    m = pstep[h.name[idx]] >= 0
    if m.any():
        sel = idx[m]
        ids = pstep[h.name[sel]]
        u, s, e = _group_windows(ids, h.start[sel].astype(np.int64, copy=False), h.end[sel].astype(np.int64, copy=False))
        return "nvtx_range", f"NVTX `ProfilerStep#N` ranges ({sel.size})", u, s, e, _line_windows(h, sel, ids, u)
    user = ~r.op & ~user_ranges.library_range_mask(h, r)
    if not user.any():
        return None
    # ranges named alike but for their numbers (``iteration 12``, ``iteration 13``; ``token_6_processing``,
    # ``token_7_processing``) are one name
    bases: dict[str, int] = {}
    base_text = [_base_name(n) for n in names]
    base = np.array([bases.setdefault(b, len(bases)) for b in base_text], dtype=np.int64)
    base_names = list(bases)
    step_named = np.fromiter((nvtx.is_step_name(n) for n in names), bool, len(names))
    named = user & step_named[h.name[idx]]
    how = "named like a step"
    source = "nvtx_range"
    if named.any():
        cand = idx[named]
        best = _most_repeated(h, base[h.name[cand]], cand, per_line=False)
        sel = cand[base[h.name[cand]] == best]
    else:
        ended = _framework_iterations(trace, user)
        if ended is not None:  # a framework's own ranges: its iteration's end marks the steps, not its micro-batches
            return ended
        found = _repeated_outer(h, idx, user, base, top_only=True)
        how = "the most repeated top-level range"
        inside = False
        if found is None:  # the loop inside one range around the whole run (``generate`` around its tokens)
            found = _repeated_outer(h, idx, user & ~_nested_module_calls(h, idx, r.framework), base, top_only=False)
            how, inside = "the outermost repeated range", True
        if found is None:
            return None
        best, sel = found
        if not _hold_the_work(h, trace.devices, launches, sel, inside=inside):
            return None
        if launches is None:
            launches = device_launches(h, trace.devices)
        first = sel[_top_level(h, sel)] if sel.size else sel
        starts = np.sort(h.start[first[h.line[first] == np.bincount(h.line[first].astype(np.int64)).argmax()]]
                         .astype(np.int64))  # the windows of the thread that repeats it most
        if _within_iterations(job, h, trace.devices, launches, starts):
            return None  # it repeats inside each iteration (a layer's range): a part of one, no step
        source = "nvtx_top_range"
    sel = sel[np.lexsort((h.start[sel], h.line[sel]))]
    ids = _range_step_ids(h, sel)
    lines = np.unique(h.line[sel]).size
    note = f"{_ranges_word(trace)} `{base_names[best]}`, {how} ({sel.size} on {lines} thread{'s' if lines > 1 else ''})"
    u, s, e = _group_windows(ids, h.start[sel].astype(np.int64, copy=False), h.end[sel].astype(np.int64, copy=False))
    return source, note, u, s, e, _line_windows(h, sel, ids, u)


def _framework_iterations(trace: Trace, user: np.ndarray) -> tuple | None:
    """Steps of a training job marked by its framework's own ranges (``user_ranges.framework_written_mask``), where one
    of them closes each iteration (``nvtx.is_framework_step_end``: DeepSpeed's ZeRO optimizer's ``step``), at least
    twice on a thread: each iteration from the end of one such range to the end of the next, the first from the
    thread's first framework range -- the micro-batches' ``forward`` / ``backward`` inside.  ``user``: bool per range
    of ``trace.ranges``, the ranges that may mark steps.  None elsewhere.

    Why: the framework's ranges are its calls, not the iteration; its engine's ``forward``, the most repeated of them,
    is once a micro-batch, and under gradient accumulation a step read from it was a quarter of an iteration with the
    optimizer's step in one of four (h37-nvtx22).  Each rank's thread keeps its own windows
    (:func:`_aligned_line_windows`): the ranks' windows of one iteration merged run from the first rank's start to the
    last's end, and every GPU's last step spanned the ranks' lag -- 4 ranks 50 us apart, the last 3.12 of 2.97 ms
    (h37-ranksteps, ``--forms12`` walk seed 494)."""
    r, h = trace.ranges, trace.h
    written = user & user_ranges.framework_written_mask(h, r)
    ends = written & _framework_step_ends(trace)
    if int(ends.sum()) < 2:
        return None
    parts: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for ln in np.unique(h.line[r.idx[ends]]).tolist():
        sel = r.idx[ends & (h.line[r.idx] == ln)]
        if sel.size < 2:
            continue
        e = np.sort(h.end[sel].astype(np.int64))
        starts = np.sort(h.start[r.idx[written & (h.line[r.idx] == ln)]].astype(np.int64))
        parts[int(ln)] = (np.arange(e.size, dtype=np.int64),
                          np.r_[_first_iteration_start(starts, e, _window_start_ps(trace)), e[:-1]], e)
    if not parts:
        return None
    ids, s, e = (np.concatenate([p[i] for p in parts.values()]) for i in range(3))
    u, s, e = _group_windows(ids, s, e)
    name = h.names[int(h.name[r.idx[ends][0]])]
    note = (f"{_ranges_word(trace)} `{name}`, the framework's own range closing each iteration ({int(ends.sum())} on "
            f"{len(parts)} thread{'s' if len(parts) > 1 else ''}): each step runs from the end of one to the end of the "
            f"next, its micro-batches' forward and backward inside")
    return "nvtx_range", note, u, s, e, _aligned_line_windows(parts, u)


def _framework_step_ends(trace: Trace) -> np.ndarray:
    """Per range of ``trace.ranges``, whether it is a framework's own range closing each iteration
    (``nvtx.is_framework_step_end``: DeepSpeed's ZeRO optimizer's ``step``), written by the framework."""
    r, h = trace.ranges, trace.h
    return user_ranges.framework_written_mask(h, r) & h.per_name(nvtx.is_framework_step_end)[h.name[r.idx]]


def _spans_inside_iterations(trace: Trace, own: SpanSteps) -> str:
    """Why the program's repeated spans (``job.structure``, on one thread) are no steps, in the note's words, where they
    recur inside the framework's iterations: some thread runs the framework's range closing each iteration
    (:func:`_framework_step_ends`) and the spans number at least twice its most on one thread -- the rule a repeated
    NVTX range takes against the optimizer's updates (:func:`_within_iterations`); "" else.

    Why: an iteration closes once; a span that repeats between its closes is a micro-batch's (DeepSpeed's engine
    ``forward`` under gradient accumulation) or a layer's.  One iteration of 2 micro-batches on 4 ranks read as 2 steps
    from one rank's 2 ``DeepSpeedEngine.forward`` spans, the second dropped, the first 0.137 ms lent to the GPUs that
    launched nothing in it (h37-seeds23, ``--forms12`` walk seed 3954: an iteration of 11.2 ms)."""
    r = trace.ranges
    if own.source != "annotation_spans" or r is None or not r.idx.size:
        return ""
    ends = r.idx[_framework_step_ends(trace)]
    if not ends.size:
        return ""
    closes = int(np.bincount(trace.h.line[ends].astype(np.int64)).max())
    if own.start.size < 2 * closes:
        return ""
    name = trace.h.names[int(trace.h.name[ends[0]])]
    return (f"; the program's {own.start.size} `{own.name}` spans are no steps: they recur inside its iterations, "
            f"which `{name}` closes {'once' if closes == 1 else f'{closes} times'} a thread")


def _first_iteration_start(starts: np.ndarray, ends: np.ndarray, floor: int) -> int:
    """The first iteration's start of a thread's framework ranges: ``job.structure.first_iteration_start`` (the
    lead every later iteration shows before its first range, h37-randjobs12's walk seed 84), one home for both
    readings of a step from its ends."""
    return job_structure.first_iteration_start(starts, ends, floor)


def _window_start_ps(trace: Trace) -> int:
    """Where the profiler's own window starts on the trace's clock (``Trace.window_start_ps``): no step reaches
    before it."""
    return trace.window_start_ps()


def _line_windows(h: HostEvents, sel: np.ndarray, ids: np.ndarray, u: np.ndarray) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Host line -> (starts, ends) of its own step ranges ``sel`` (numbered ``ids``), aligned with the steps ``u``;
    only the lines that hold every step once.  Why: ranks' ranges of one number are one step whose window runs from
    the first rank's start to the last's end, tiled by the first rank's; ranks 50 us apart in 119 us steps with no
    collective binding them placed the last rank's kernels a step off (its GPU counted 41 of its 42 kernels: "7
    kernels per step" of 6.96, walk seed 20656).  Each rank's GPU is placed by its own thread's ranges."""
    return _windows_by_line(h.line[sel], ids, h.start[sel], h.end[sel], u)


def _windows_by_line(line: np.ndarray, ids: np.ndarray, start: np.ndarray, end: np.ndarray, u: np.ndarray
                     ) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """:func:`_aligned_line_windows` of windows given flat: each one's host line, step number, start and end."""
    per = {int(ln): (ids[line == ln], start[line == ln].astype(np.int64), end[line == ln].astype(np.int64))
           for ln in np.unique(line).tolist()}
    return _aligned_line_windows(per, u)


def _aligned_line_windows(per: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]], u: np.ndarray
                          ) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Host line -> (starts, ends) of its own windows, aligned with the host-wide steps ``u``, from each line's own
    (step numbers, starts, ends) in ``per``; only the lines that hold every step once, and only where two lines or more
    mark steps (one line's windows are the host's).  The one home of the per-rank windows every NVTX reading returns
    (:func:`_line_windows`, :func:`_framework_iterations`)."""
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    if len(per) < 2:
        return out
    pos = {int(k): i for i, k in enumerate(u.tolist())}
    for ln, (ids, starts, ends) in per.items():
        lu, ls, le = _group_windows(ids, starts, ends)
        if lu.size != u.size or ids.size != u.size:
            continue  # a thread that marked fewer steps (or one step twice): the host's windows stand for it
        s, e = np.empty(u.size, np.int64), np.empty(u.size, np.int64)
        at = np.array([pos[int(k)] for k in lu.tolist()], np.int64)
        s[at], e[at] = ls, le
        out[int(ln)] = (s, e)
    return out


def _repeated_outer(h: HostEvents, idx: np.ndarray, user: np.ndarray, base: np.ndarray,
                    top_only: bool) -> tuple[int, np.ndarray] | None:
    """(base name, its ranges) of the most repeated user range among the outer ones, or None where none repeats
    ``steps.nvtx_min_repeats`` times on one thread.  ``top_only``: the ranges inside no other range of their thread;
    else the ranges inside no other *repeated* range -- a loop wrapped in one range that runs once (``generate``
    around its ``token_N`` ranges, ``train`` around its iterations) has its iteration one level down, and the blocks
    inside each iteration (``layer_3``) repeat more often but are parts of it."""
    cand = idx[user]
    if not top_only:
        key = base[h.name[cand]].astype(np.int64, copy=False) * (int(h.line.max()) + 1) + h.line[cand].astype(np.int64, copy=False)
        _, inv, counts = np.unique(key, return_inverse=True, return_counts=True)
        cand = cand[counts[inv] >= T("steps.nvtx_min_repeats")]
    if not cand.size:
        return None
    cand = cand[_top_level(h, cand)]
    best = _most_repeated(h, base[h.name[cand]], cand, per_line=True)
    sel = cand[base[h.name[cand]] == best]
    if _max_per_line(h, sel) < T("steps.nvtx_min_repeats"):
        return None
    return best, sel


def _nested_module_calls(h: HostEvents, idx: np.ndarray, framework: np.ndarray | None) -> np.ndarray:
    """Bool per range of ``idx``: a framework's module-hook range (``HostRanges.framework``) inside another one of its
    thread -- a submodule's call, part of its parent module's call however often that runs.

    Why: the ranges below the top level are read as a loop's iterations where they sit inside no range that repeats
    ``steps.nvtx_min_repeats`` times (a loop wrapped in a range run once); a serving engine's layer-wise markers of two
    steps run the model's range twice, so its decoder layers' ranges (``model.layers.0`` ... numbered alike) sat
    inside no such range and read as 6 "steps" for 2 (h37-randjobs7).  A module's hook range is its call, and a
    submodule's call is part of its parent's: never an iteration."""
    out = np.zeros(idx.size, bool)
    if framework is None or not framework.any():
        return out
    pos = np.flatnonzero(framework)
    out[pos[~_top_level(h, idx[pos])]] = True
    return out


def _hold_the_work(h: HostEvents, devs: list[DeviceEvents], launches: list[np.ndarray] | None, sel: np.ndarray,
                   inside: bool = False) -> bool:
    """Whether steps marked by ranges ``sel`` hold the job's work: the span from the first range's start to the last
    one's end (the steps tile it) encloses at least ``job.span_step_coverage`` of the GPU work launched in the
    capture, counted per device event -- the share a span of the program's own must hold to be its step
    (``job.structure``).  A block that merely repeats is no iteration: the ten ``.cuda()`` calls of ``model.cuda()``
    before one forward pass repeat, but launch only their copies.  ``inside``: the launches must fall inside the ranges
    themselves, not merely between the first and the last -- a range found below the top level may be a library's
    small helper called all through the run (nvFuser's ``isResharding`` on seven threads), which spans the work
    without holding it.  True where no device event maps to a launch."""
    if launches is None:
        launches = device_launches(h, devs)
    rec = np.concatenate([a[a >= 0] for a in launches]) if launches else np.zeros(0, np.int64)
    if not rec.size:
        return True
    t = h.start[rec].astype(np.int64, copy=False)
    if inside:
        rs, re_ = union_intervals(h.start[sel].astype(np.int64, copy=False), h.end[sel].astype(np.int64, copy=False))
        j = np.searchsorted(rs, t, side="right") - 1
        held = (j >= 0) & (t <= re_[np.maximum(j, 0)])
    else:
        held = (t >= int(h.start[sel].min())) & (t <= int(h.end[sel].max()))
    return float(held.mean()) >= T("job.span_step_coverage")


def _top_level(h: HostEvents, idx: np.ndarray) -> np.ndarray:
    """Bool per range of ``idx`` (host events in (line, start, longer first) order): inside no other range of its line."""
    out = np.zeros(idx.size, dtype=bool)
    line = h.line[idx]
    for ln in np.unique(line).tolist():
        pos = np.flatnonzero(line == ln)
        s, e = h.start[idx[pos]].astype(np.int64, copy=False), h.end[idx[pos]].astype(np.int64, copy=False)
        before = np.maximum.accumulate(e)
        open_end = np.concatenate([[np.iinfo(np.int64).min], before[:-1]])
        out[pos] = s >= open_end
    return out


def _most_repeated(h: HostEvents, names: np.ndarray, sel: np.ndarray, per_line: bool) -> int:
    """The name (``names``: one per range of ``sel``) occurring most often (on one line when ``per_line``); ties: the
    one that starts first."""
    key = names.astype(np.int64)
    if per_line:
        key = key * (int(h.line.max()) + 1) + h.line[sel].astype(np.int64, copy=False)
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    best = np.lexsort((h.start[sel][first], -counts))[0]
    return int(names[first[best]])


def _max_per_line(h: HostEvents, sel: np.ndarray) -> int:
    return int(np.bincount(h.line[sel].astype(np.int64, copy=False)).max()) if sel.size else 0


_TRAILING_NUMBER = re.compile(r"(\d+)\s*$")
#: A range name's trailing number with what separates it: ``iteration 12`` and ``iteration 13`` are one name.
_TRAILING_NUMBER_PART = re.compile(r"[-_ #:=]*\d+\s*$")
#: A number standing as a word of its own inside a name (``token_6_processing``, ``layer 3 fwd``), not part of a word
#: (``conv2d``, ``fp16``).
_INNER_NUMBER = re.compile(r"(?<=[-_ #:=])\d+(?=[-_ :=])")


def _base_name(name: str) -> str:
    """A range's name without its numbers: the trailing one and those standing as words of their own, so that the
    ranges of one loop, numbered by its counter anywhere in their name, are one name."""
    return _INNER_NUMBER.sub("#", _TRAILING_NUMBER_PART.sub("", name) or name)


def _range_step_ids(h: HostEvents, sel: np.ndarray) -> np.ndarray:
    """Step numbers of step ranges ``sel`` (by line, then start): the number each name carries where they are distinct
    on every line, else the order on its line (0, 1, ...)."""
    nums = np.array([int(m.group(1)) if (m := _TRAILING_NUMBER.search(h.names[int(i)])) else -1
                     for i in h.name[sel].tolist()], dtype=np.int64)
    line = h.line[sel].astype(np.int64, copy=False)
    if (nums >= 0).all() and all(np.unique(nums[line == ln]).size == int((line == ln).sum()) for ln in np.unique(line)):
        return nums
    order = np.zeros(sel.size, np.int64)
    for ln in np.unique(line).tolist():
        pos = np.flatnonzero(line == ln)
        order[pos] = np.arange(pos.size)
    return order
