"""Source 11, ``single_pass`` (and 13, ``whole_capture``): a capture with no repeated structure is one
pass, from the op that launches its first kernel to its work's end -- or the program's own phase ranges around it,
or from the input fetch it consumes; with no GPU work and no host event, no step is timed.

Why: inference benchmarks and one-iteration captures hold one pass; reading bursts or layers as steps would split
it.  Asked where the job is one pass (no step markers, no repeated span, one optimizer step) before the GPU's bursts;
the whole capture where nothing else read a step.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices, frameworks
from tb_gpu_advisor.frameworks import nvtx, user_ranges
from tb_gpu_advisor.job import Job
from tb_gpu_advisor.model.columns import union_intervals
from tb_gpu_advisor.model.trace import DeviceEvents, HostEvents, Trace
from tb_gpu_advisor.steps.ends import _kernels_launched_after, _last_step_device_end, _launched_work
from tb_gpu_advisor.steps.ranges import _top_level
from tb_gpu_advisor.steps.reading import _Reading
from tb_gpu_advisor.steps.types import PS_PER_MS


def _untimed_note(trace: Trace) -> str:
    """Why no step is timed where the capture holds no GPU work and no host event to make one window of: said as that,
    not as "the whole capture is analysed as one step" over a header of 0 steps (every memory snapshot's report,
    h37-review3) -- a snapshot records the allocator's events, not kernels or steps."""
    if trace.snapshot is not None:
        return ("a memory snapshot: the allocator's events, no kernel or step marker, so no step is timed; its numbers "
                "are the capture's")
    return "no step markers, GPU work or host events: no step is timed"


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
