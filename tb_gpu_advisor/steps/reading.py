"""The state one detection fills in: :class:`_Reading` (what the sources read, source by source,
and the launches computed once on first need) and :class:`_Kept` (the steps found, cut together by the dropping
rules so that no column forgets a drop).

Why apart: every reading (markers, ranges, bursts, passes) and every rule after it (placing, dropping) takes these
holders; here they import nothing of those, so no reading depends on another through them.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import frameworks
from tb_gpu_advisor.frameworks import Framework
from tb_gpu_advisor.job.waits import Waits, sync_waits
from tb_gpu_advisor.model.trace import Trace, device_launches
from tb_gpu_advisor.steps.windows import MarkedSteps


class _Kept:
    """The steps found, as the dropping rules leave them: ids, host windows, per-GPU windows, and where the step after
    each starts in the capture (kept or not), cut together by :meth:`keep` so that no column forgets a drop."""

    def __init__(self, ids: np.ndarray, hs: np.ndarray, he: np.ndarray, gpu: dict[int, np.ndarray],
                 host_own: dict[int, np.ndarray] | None = None) -> None:
        self.ids, self.hs, self.he, self.gpu = ids, hs, he, dict(gpu)
        #: GPU -> the host windows of its own process's steps ((n, 2) ps), where each rank's step k is its own kth
        self.host_own = dict(host_own or {})
        self.first = int(ids[0]) if ids.size else -1
        self.next_start = np.append(hs[1:], -1).astype(np.int64) if hs.size else np.zeros(0, np.int64)
        self.gpu_next = {g: np.append(w[1:, 0], -1).astype(np.int64) for g, w in self.gpu.items()}
        self.prev_id = np.append(-1, ids[:-1]).astype(np.int64) if ids.size else np.zeros(0, np.int64)

    def keep(self, sel: slice | np.ndarray) -> None:
        self.ids, self.hs, self.he = self.ids[sel], self.hs[sel], self.he[sel]
        self.next_start, self.prev_id = self.next_start[sel], self.prev_id[sel]
        self.gpu = {g: w[sel] for g, w in self.gpu.items()}
        self.host_own = {g: w[sel] for g, w in self.host_own.items()}
        self.gpu_next = {g: w[sel] for g, w in self.gpu_next.items()}


class _Reading:
    """What the step sources read as the capture's steps, filled in source by source: the windows (ids, host starts
    and ends, per-GPU windows where placed apart), the source and its note, how the windows map onto the GPUs, and why
    the whole capture is one step where a reading was refused.  One holder, so that each source is a step of its own
    that a reader follows in :func:`detect_steps`, and the launches are computed once, where a step first needs them."""

    def __init__(self, trace: Trace, launches: list[np.ndarray] | None, waits: Waits | None = None) -> None:
        self.trace, self.launches = trace, launches
        #: where the host waited for the GPU (``Job.waits``: its syncs and polls; its sync calls alone where not given)
        self.waits = waits if waits is not None else sync_waits(trace.h)
        self.active = [d for d in trace.devices if len(d)]
        #: the capture's framework (``detect_steps``' ``fw``): its profiler's step marks and its words for the ranges
        self.fw: Framework = frameworks.UNKNOWN
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
        #: per step, where the evaluation pass after it (before the next step) opens, its window ended there; -1 where
        #: none follows (``steps.apart._cut_before_passes``)
        self.apart = np.zeros(0, np.int64)
        #: the job is training (``Job.kind``): an evaluation between its steps is then none of them -- in an
        #: evaluation job it is the work itself
        self.training = False
        self.gpu_windows: dict[int, np.ndarray] = {}
        #: GPU -> its own process's bursts (starts, ends; aligned with ``ids``), where each rank's steps are its own
        #: GPU's bursts (``steps.framed._framed_own_bursts``): placed as that GPU's windows
        self.gpu_own: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        #: the windows run from one update's end to the next's (a framework's iterations, ``steps.iterations``): tiled
        #: like :data:`~tb_gpu_advisor.steps.types._TILED`'s readings, whatever their source's name
        self.tiled_by_updates = False
        #: the steps note's words on the work queued before the window that the first step's GPU window starts after
        #: (``steps.place._start_after_inherited_queue``): said where that step is kept, a dropped one's being no time
        self.inherited = ""
        #: where the last host window would end without its read-back (``SpanSteps.tail_from``, placed as the window
        #: is: :func:`~tb_gpu_advisor.steps.place._place_windows`), ps; 0 where its end was not moved
        self.untailed_last = 0
        #: GPU -> the host windows of its own process's steps (``steps.place._own_host_windows``), aligned with ``ids``
        self.host_own: dict[int, np.ndarray] = {}
        #: GPU -> the ids of the steps its process's capture had not opened for: it marks none of them and recorded
        #: nothing before the step's start (``steps.windows.unrecorded``; dropped by ``steps.drop._drop_unrecorded``)
        self.unopened: dict[int, np.ndarray] = {}
        #: GPU -> the ids of the steps its process's capture had closed before: it marks none of them and recorded
        #: nothing after the step's end (``steps.windows.unrecorded``; dropped by ``steps.drop._drop_unrecorded``)
        self.closed: dict[int, np.ndarray] = {}

    def launched(self) -> list[np.ndarray]:
        """Per GPU, each device event's host launch record (:func:`~tb_gpu_advisor.model.trace.device_launches`):
        the caller's, else computed on first need -- many captures' steps never need them."""
        if self.launches is None:
            self.launches = device_launches(self.trace.h, self.trace.devices)
        return self.launches

    def take(self, read: MarkedSteps, mapped: str) -> None:
        """A source's reading (:class:`~.windows.MarkedSteps`: every numbered source returns one) as the steps."""
        self.source, self.note, self.ids, self.hs, self.he = read.source, read.note, read.ids, read.starts, read.ends
        self.per_line, self.tiled_by_updates = read.per_line, bool(read.tiled_by_updates)
        self.mapped = mapped

    def take_spans(self, source: str, note: str, hs: np.ndarray, he: np.ndarray, mapped: str) -> None:
        """Spans with no step numbers of their own as the steps, numbered in order."""
        self.source, self.note, self.hs, self.he, self.mapped = source, note, hs, he, mapped
        self.ids = np.arange(hs.size, dtype=np.int64)
