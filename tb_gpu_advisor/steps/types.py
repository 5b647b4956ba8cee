"""What step detection answers and in whose words: the step windows (:class:`StepWindow`), the
detection (:class:`StepDetection`: the source, its note and confidence, the steps dropped and why) and the
:class:`Steps` every later stage reads, and the vocabulary of sources (``StepSource``, ``SOURCE_LABEL``,
``CONFIDENCE``; which sources count steps, which read the capture as one unmarked pass, which tile time).

Why a module of its own: metrics, rules and reports ask these names without caring how the steps were read; each
reading module below shares them, so they sit beneath all of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from tb_gpu_advisor.model.trace import PS_PER_MS as PS_PER_MS  # the steps stage imports it here

#: Host TraceMe around each execution of a compiled XLA module on a GPU
#: (``xla/service/gpu/gpu_executable.cc``: ``<module name>:XLA GPU module``).


StepSource = Literal[
    "steps_line",  # TF 2.4-style derived `Steps` line on the GPU planes (grouped capture)
    "keras_profiled_batch",  # Keras 3 `Profiled batch` host events with `step_num`
    "trace_train",  # `train*`/`test*` host events with `_r` (tf.profiler.experimental.Trace, Keras 2), or any name's `_r`+`step_num`
    "root_r",  # other host events carrying `_r` (e.g. `FunctionRun`, `SessionRun`)
    "step_num_stat",  # host events carrying `step_num` / `iter_num`
    "profiler_step",  # PyTorch: `ProfilerStep#N` host annotations (the format's own step marks)
    "iteration_range",  # a training wrapper's range around each whole iteration (Lightning's `run_training_batch`)
    "xla_modules",  # JAX / XLA: one `XLA Modules` event per step (post-processed files)
    "xla_module_launches",  # raw JAX files: one host `<module>:XLA GPU module` execution per step
    "nvtx_range",  # NVTX `ProfilerStep#N` or user ranges named like a step or iteration (Kineto: record_function's)
    "nvtx_top_range",  # Nsight Systems: the most repeated top-level user NVTX range
    "engine_steps",  # a serving engine's own step span (vLLM ``execute_model``)
    "annotation_spans",  # the program's repeated spans that hold most of the GPU work
    "repeated_launches",  # the period of the launch sequence, the host pausing between repeats
    "device_period",  # a kernel trace alone (no launch recorded): a training job's stream period, by the GPU's idle
    "step_end_events",  # a training loop's step ends (PyTorch's optimizer steps), no markers
    "single_pass",  # inference with no repeated structure: the capture is one forward pass
    "gpu_busy_clusters",  # last resort: clusters of GPU busy time separated by long idle gaps
    "recurring_events",  # bursts that are no iterations: the turns of the work that runs once in each iteration
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
                "gpu_busy_clusters": "GPU bursts, a guess",
                "recurring_events": "GPU work that runs once an iteration, a guess",
                "whole_capture": "the whole capture"}


def source_label(source: str, ranges_word: str = "NVTX ranges") -> str | None:
    """A step source in words (:data:`SOURCE_LABEL`), its ranges named as the trace's reader names them
    (``ranges_word``: "roctx ranges" for AMD's tracers).

    Why: the labels were written for Nsight's NVTX, and an MI300X's rocprof capture timed by its ``forward`` roctx
    ranges read "(a repeated NVTX range)" on the tab's host line, beside a note saying "roctx ranges" (h37-probe44m):
    NVIDIA's word for a ROCm program's own marks."""
    label = SOURCE_LABEL.get(source)
    word = ranges_word[:-len(" ranges")] if ranges_word.endswith(" ranges") else ranges_word
    return label.replace("NVTX", word) if label and word else label


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
              "gpu_busy_clusters": "low", "recurring_events": "low", "whole_capture": "low"}


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
    #: the source in words, in the trace's own words for its ranges (:func:`source_label`); "" where none was given
    label: str = ""
    #: the steps are runs of one kernel at block sizes of their own over the same work, a sweep of launch
    #: configurations (``job.structure.SpanSteps.sweep``): each size's kernel time in words; "" for one loop's turns
    sweep: str = ""


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
    #: GPU -> the host windows of its own process's steps ((n, 2) ps, aligned with ``ids``), where each rank numbers its
    #: steps on its own (``steps.place._own_host_windows``): a rank's host events are its own step k's, as its GPU's are
    host_own: dict[int, np.ndarray] = field(default_factory=dict)

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


def own_step_rows(host_own: dict[int, np.ndarray], count: int, gpu_lines: dict[int, np.ndarray],
                  line: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per GPU whose rank numbers its own steps (``Steps.host_own``, aligned with the ``count`` steps): (bool per host
    row of ``line``: on that GPU's process's lines, ``Trace.gpu_host_lines``; that rank's own windows), in
    ``host_own``'s order.

    Why one walk: a rank's host events lie in its own step k, not the host's (the host's step k runs from the first
    rank's kth start to the last rank's kth end), and every reader of a host event's step -- its host-side step
    (``metrics.context._host_steps``), the warm-up step holding a one-time call (``steps.drop._cold_steps``) -- must
    place it by the same rank's windows, or one reader books an event to a step the other says it is not in."""
    for g, w in host_own.items():
        if w.shape[0] == count:
            yield np.isin(line, np.asarray(gpu_lines.get(g, ()), dtype=np.int64)), w


#: Sources the job stage reads from the work's own period, not from a mark the program put (its launches' repeats, the
#: GPU's): a loop so timed has repeats, not "marked steps" (``report.verdict.host_loop_words``)
PERIOD_SOURCES = ("repeated_launches", "device_period", "gpu_busy_clusters", "recurring_events")


#: Sources whose windows are host time spans (tiled, mapped to devices through the launches).
_HOST_SOURCES = ("profiler_step", "iteration_range", "keras_profiled_batch", "trace_train", "root_r", "step_num_stat",
                 "xla_module_launches",
                 "nvtx_range", "nvtx_top_range", "engine_steps", "annotation_spans", "repeated_launches",
                 "step_end_events")


#: Sources whose spans are a repeated user range or annotation taken for the step: a mark the program put anywhere in
#: its iteration (around one launch, one phase), not a step marker that spans the step by definition.
_PART_MARKS = ("nvtx_top_range", "annotation_spans")


#: the job's own readings whose steps run each from its start to the next one's, the last to its own work's end
#: (``steps.ends._last_ends_at_own_work``)
_TILED = ("repeated_launches", "step_end_events", "device_period")
#: the host marks a loop's own code ends before the next one opens (``tf.profiler.experimental.Trace("train")`` /
#: Keras 2's ``train`` markers, JAX's ``StepTraceAnnotation``): the loop's turn between them belongs to the step before
_TURN_MARKS = ("trace_train",)


#: and the program's own repeated spans (``job.structure``): each step runs from its span's start to the next one's, the
#: last to where its span and its work end -- the same tiling, so the same partial last step (h37-randjobs8)
_ENDS_AT_OWN_WORK = _TILED + ("annotation_spans",)


#: and the GPU's bursts, of at least this many: each burst's step runs to the next burst's start (the host's time
#: between them -- the next batch's loading -- in it), the last to its own work's end (h37-laststep).  Of two, the
#: one other step's tile cannot tell a short last from a cold first (its one-time work inside its tile): the last is
#: stretched by the first's gap instead (``steps.place._last_burst_end``)
_BURSTS_TILED = 3
