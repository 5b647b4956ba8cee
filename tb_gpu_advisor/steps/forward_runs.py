"""Source 10's ``nvtx_top_range`` of a training job whose ranges mark only its forward's parts: the runs of ranges
that a backward separates, each run one iteration's forward (:func:`_forward_run_steps`).

Why: a framework may push ranges around each layer's parts and none around an iteration -- Megatron-core's
``--nvtx-ranges`` without pipelining (NVIDIA/Megatron-LM @d98e8a64, as ``frameworks.pytorch`` notes; the reading
asks no name of them).  Such a range repeats inside each iteration, so it marks no step (``steps.nvtx_ranges._within_iterations``); of 3 iterations or more the launch
sequence's period reads them (``job.period.training_iterations``), but of 2 nothing repeated 3 times, and the window
read as one pass: 2 iterations of 3.319 ms as one of 6.299 ms (h37-forms12b's left).  The structure still tells
them: a forward's ranges follow each other with no gradient kernel launched between them; between two forwards the
backward runs (its gradient kernels, launched from autograd's own thread) and the loop waits for the GPU (its loss,
its gradients' norm read back).  Tried after the job's own readings and the training ranges, before one pass and
the GPU's bursts: a reading from the job's structure, not from any framework's names.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices, frameworks
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.frameworks import user_ranges
from tb_gpu_advisor.job import Job
from tb_gpu_advisor.job.waits import sync_waits
from tb_gpu_advisor.model.columns import count_between
from tb_gpu_advisor.model.trace import HostEvents, Trace, line_processes
from tb_gpu_advisor.steps.ranges import _top_level
from tb_gpu_advisor.steps.windows import MarkedSteps, _group_windows, _windows_by_line


def _forward_run_steps(trace: Trace, launches: list[np.ndarray], job: Job) -> MarkedSteps | None:
    """Steps of a training job from the runs of its top-level user ranges on a thread (:func:`_runs`): each step from
    the first range of one run -- its iteration's forward -- to the next run's first, the last placed and dropped as
    the tiled readings' are (``steps.drop``: it ends at its own work, no next forward to end it).  Per thread, where
    at least two runs of as many ranges each hold no gradient launch and every gap between two runs holds both a
    gradient launch and the host's wait (``Job.waits``: a sync or a poll) of the thread's own process, and the steps (from
    the first run's start on) hold at least ``job.span_step_coverage`` of the launched work.  None elsewhere.

    Why the wait: without it, runs a backward separates may be one iteration's micro-batches (gradient accumulation
    runs forward and backward per micro-batch, and reads the loss and the gradients' norm back once an iteration); a
    single forward pass -- inference, a benchmark -- launches no gradient kernel, so it is one run and no reading."""
    r = trace.ranges
    if job.kind.kind != "training" or r is None or not r.idx.size:
        return None
    h = trace.h
    idx = r.idx[~r.op & ~user_ranges.library_range_mask(h, r)]
    if not idx.size:
        return None
    idx = idx[np.lexsort((-(h.end[idx] - h.start[idx]).astype(np.int64), h.start[idx], h.line[idx]))]
    idx = idx[_top_level(h, idx)]
    proc = line_processes(trace)
    grad = _process_times(trace, _gradient_launches(trace, launches), proc)
    waits = _process_times(trace, (job.waits if job.waits is not None else sync_waits(h)).idx, proc)  # sync or poll
    work = _launched_kernels(trace, launches, proc)
    per: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for ln in np.unique(h.line[idx]).tolist():
        mine = idx[h.line[idx] == ln]
        p = int(proc[ln]) if proc is not None else 0
        runs = _runs(h.start[mine].astype(np.int64), h.end[mine].astype(np.int64), grad.get(p, _NONE),
                     waits.get(p, _NONE))
        if runs is not None and _same_work(*runs, *work.get(p, (_NONE, _NONE))):
            per[int(ln)] = (np.arange(runs[0].size, dtype=np.int64), *runs)
    if not per or not _hold_from(h, launches, min(int(s[0]) for _, s, _ in per.values())):
        return None
    ids, s, e = (np.concatenate([p[i] for p in per.values()]) for i in range(3))
    line = np.concatenate([np.full(p[0].size, ln, np.int64) for ln, p in per.items()])
    u, gs, ge = _group_windows(ids, s, e)
    note = (f"{frameworks.ranges_word(trace)} that mark only the forward's parts ({int(sum(p[0].size for p in per.values()))} "
            f"forwards on {len(per)} thread{'s' if len(per) > 1 else ''}, no range around an iteration): each step "
            f"runs from the first range of one forward to the next's, a backward and the host's wait for the GPU "
            f"between every two")
    return MarkedSteps("nvtx_top_range", note, u, gs, ge, _windows_by_line(line, ids, s, e, u))


_NONE = np.zeros(0, np.int64)


def _runs(s: np.ndarray, e: np.ndarray, grad: np.ndarray, waits: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray] | None:
    """(starts, ends) of one thread's forward runs from its top-level ranges (``s``, ``e``: sorted by start, ps) and
    its process's gradient launches ``grad`` and waits ``waits`` (host times, sorted): the ranges split where a
    gradient kernel was launched between two of them.  None unless there are two runs or more, none holds a gradient
    launch, each gap between two holds a wait, and every run has as many ranges as the others -- a first run with
    fewer, a forward the window cut, is left out."""
    reach = np.maximum.accumulate(e)
    split = count_between(grad, reach[:-1], s[1:]) > 0
    first = np.r_[0, np.flatnonzero(split) + 1]
    last = np.r_[first[1:] - 1, s.size - 1]
    sizes = last - first + 1
    if first.size >= 2 and sizes[0] < sizes[1:].min():
        first, last, sizes = first[1:], last[1:], sizes[1:]
    if first.size < 2 or (sizes != sizes[0]).any():
        return None
    rs, re_ = s[first], reach[last]
    if (count_between(grad, rs, re_) > 0).any() or (count_between(waits, re_[:-1], rs[1:]) == 0).any():
        return None
    return rs, re_


def _same_work(rs: np.ndarray, re_: np.ndarray, t: np.ndarray, names: np.ndarray) -> bool:
    """Whether every forward run (``rs``, ``re_``) launches kernels, the same ones (by name, as many of each) as every
    other: ``t`` the process's kernel launches' host times (sorted), ``names`` their kernels' names.

    Why: each iteration runs its model's one forward; runs that launch other work are other passes.  nvFuser's first
    call of a forward and a backward fusion (``FusionCache::get``, ``FusionDefinition Definition``,
    ``FusionExecutorCache::runFusionWithInputs`` around each, the backward's ATen gradient kernel and a sync between)
    read as 2 "iterations" of 429.5 ms for one 3.19 s pass (``nvfuser_h200_first_call``)."""
    lo, hi = np.searchsorted(t, rs, side="left"), np.searchsorted(t, re_, side="right")
    if (hi <= lo).any():
        return False
    first = np.sort(names[lo[0]:hi[0]])
    return all(np.array_equal(np.sort(names[a:b]), first) for a, b in zip(lo[1:].tolist(), hi[1:].tolist()))


def _launched_kernels(trace: Trace, launches: list[np.ndarray], proc: np.ndarray | None
                      ) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Process -> (host launch times, sorted; the kernels' names) of its launched kernels and collectives."""
    h = trace.h
    rec, names = [_NONE], [np.zeros(0, object)]
    for d, la in zip(trace.devices, launches):
        if not len(d) or la is None or la.size != len(d):
            continue
        m = (la >= 0) & ((d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE))
        rec.append(la[m].astype(np.int64))
        names.append(np.asarray(d.names, object)[d.name[m]])
    r, n = np.concatenate(rec), np.concatenate(names)
    p = proc[h.line[r]] if proc is not None else np.zeros(r.size, np.int64)
    t = h.start[r].astype(np.int64)
    out = {}
    for k in np.unique(p).tolist():
        o = np.argsort(t[p == k], kind="stable")
        out[int(k)] = (t[p == k][o], n[p == k][o])
    return out


def _gradient_launches(trace: Trace, launches: list[np.ndarray]) -> np.ndarray:
    """The host launch records of the kernels only a backward pass runs (``devices.gradient_kernel_one``)."""
    out = [_NONE]
    for d, la in zip(trace.devices, launches):
        if not len(d) or la is None or la.size != len(d):
            continue
        grad = np.fromiter((devices.gradient_kernel_one(n) for n in d.names), bool, len(d.names))[d.name]
        out.append(la[grad & (la >= 0)].astype(np.int64))
    return np.unique(np.concatenate(out))


def _process_times(trace: Trace, rec: np.ndarray, proc: np.ndarray | None) -> dict[int, np.ndarray]:
    """Process -> the sorted host start times of the host events ``rec``, by their line's process (one process where
    the format names none): one rank's backward or wait never splits another rank's forward."""
    h = trace.h
    p = proc[h.line[rec]] if proc is not None else np.zeros(rec.size, np.int64)
    t = h.start[rec].astype(np.int64)
    return {int(k): np.sort(t[p == k]) for k in np.unique(p).tolist()}


def _hold_from(h: HostEvents, launches: list[np.ndarray], start: int) -> bool:
    """Whether at least ``job.span_step_coverage`` of the launched device events were launched from ``start`` on:
    the steps tile from there to the window's end, so they hold the job's work, not a stretch of it."""
    rec = np.concatenate([a[a >= 0] for a in launches] or [_NONE])
    return bool(rec.size) and float((h.start[rec] >= start).mean()) >= T("job.span_step_coverage")
