"""What the input wait is made of (issue #37 item 4): the input pipeline's own time, and the host time before each
step's first op that is not the pipeline's, named apart.

Where the capture records its input pipeline (PyTorch's DataLoader ``__next__``, TF's ``IteratorGetNext``), the
input wait is that pipeline's time alone; other host time before the step's first op (Python before the first
op, a logger) is reported here and not counted as input.  Where it records none, the host time before the first
op stands in for an untraced loader, as ``context._input_spans`` counts it -- if anything reaches the GPU from the
host (a host-to-device copy): a capture with none has no input to wait for, and that time is named apart too.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.metrics.breakdown import around_step_work, ledger_of
from tb_gpu_advisor.metrics.capture import idle_calls_within
from tb_gpu_advisor.metrics.context import (DISPATCH_BIT, HOST_INPUT_BIT, HOST_WORK_BIT, PS_PER_MS, Context, GpuCtx,
                                            lead_frames)
from tb_gpu_advisor.metrics.types import BREAKDOWN_CATEGORIES, HostInput, per_step
from tb_gpu_advisor.model.columns import (intersect_intervals, outermost, outermost_rows, subtract_intervals, time_within,
                                          union_intervals)

#: How many ops of the untraced input time are named.
TOP_OPS = 5


def host_input(ctx: Context) -> HostInput:
    """Where this host's input wait comes from, and the host time before the first op that is not input."""
    n = ctx.steps.count
    if not n:
        return HostInput()
    if not ctx.input_measured:
        return HostInput(measured=False)
    every = ctx.role_rows(HOST_INPUT_BIT) if len(ctx.h) else np.zeros(0, dtype=np.int64)
    rows = _kept_rows(ctx, every)
    pre = ctx.pre_op_spans
    pre_ms = ctx.per_step(float((pre[1] - pre[0]).astype(np.float64).sum()) / PS_PER_MS, shared=False) if pre is not None else 0.0
    lead = _untraced_spans(ctx)
    source = "pipeline" if rows.size else ("before_first_op" if lead is not None else "")
    moved = _moved_ms(ctx, n) if source == "before_first_op" else 0.0
    ops = _ops_in(ctx, lead, n) if lead is not None and source == "before_first_op" else []
    frames, within = _frames_in(ctx, lead, pre, n) if lead is not None and source == "before_first_op" else ([], [])
    workers, parallel = _workers(ctx, rows)
    own = (workers and not parallel) or (not workers and _serial_range_holds(ctx, rows))
    return HostInput(source=source, pre_op_ms_per_step=pre_ms, parallel=parallel, workers=workers, own_range=own,
                     range_calls=_range_calls(ctx, rows, n) if own else [], ops=ops,
                     transfer_ms_per_step=moved or _transfer_ms(ctx, every, n), frames=frames, frames_within=within,
                     ranges=_ranges(ctx, every, n), functions=_functions(ctx, every, n),
                     traced_calls_per_step=_traced_calls(ctx, every),
                     put_ms_per_step=_put_ms(ctx, every, n) if source == "pipeline" else 0.0,
                     own_ms_per_step=_own_ms(ctx, every, n) if source == "pipeline" else 0.0,
                     own_frame=_own_frame(ctx, every, n) if source == "pipeline" else "",
                     lead_ms_per_step=max(0.0, _lead_ms(ctx, n) - moved) if source == "before_first_op" else 0.0,
                     lead_to_put=ctx.lead_to_put and source == "before_first_op")


def _kept_rows(ctx: Context, rows: np.ndarray) -> np.ndarray:
    """The pipeline's events among ``rows`` that hold any of a kept step: begun inside one (``Context.host_step``), or
    begun before one and ending inside it.  Why: the ledger books the part of an input event inside a step, wherever
    it began; judged by its start alone, a rank whose fetch began before the step's first rank started and ended after
    it had 75 us of input wait in the ledger and no pipeline to name it by (walk seed 82693: 4 ranks 50 us apart, the
    finding naming no part of its wait)."""
    inside = ctx.host_step[rows] >= 0
    w = ctx.steps.host_windows
    if inside.all() or not w.shape[0]:
        return rows[inside]
    s, e = ctx.h.start[rows].astype(np.int64), ctx.h.end[rows].astype(np.int64)
    last = np.searchsorted(w[:, 0], e, side="left") - 1  # the last window opening before the event ends
    at = np.clip(last, 0, None)
    return rows[inside | ((last >= 0) & (s < w[at, 1]))]


def _untraced_spans(ctx: Context) -> tuple[np.ndarray, np.ndarray] | None:
    """The input spans the ledger books for the host's active GPUs (:func:`_input_spans` of each: a GPU driven by its
    own process reads its own rank's, the others the host's), merged; the host's (``Context.input_spans``) where no
    GPU is active; None where there are none.  Why: the source, ops and frames the finding names are read from the
    spans the ledger's wait was painted from.  Read from the host's alone, a host of merged ranks whose own spans held
    each rank's lead (its steps marked per rank) while the host's, over the merged windows, held none named no part
    of its wait (h37-walk13: forms13 seed 33, a 2.40 ms wait of a 6.61 ms step with no source)."""
    if not ctx.active:
        sp = ctx.input_spans
        return sp if sp is not None and sp[0].size else None
    parts = [sp for sp in (_input_spans(ctx, g) for g in ctx.active) if sp is not None]
    if not parts:
        return None
    return union_intervals(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))


def _traced_calls(ctx: Context, rows: np.ndarray) -> float:
    """The Python calls recorded inside the input wait's own host time -- the pipeline's events ``rows`` and the
    spans that stand for an untraced loader (``Context.input_spans``) -- while the GPU ran nothing, per step and GPU:
    an in-process pipeline (a DataLoader without workers) runs the program's Python in the traced process, each call
    paying its recording (``metrics.capture.idle_calls_within``)."""
    h = ctx.h
    sp = _untraced_spans(ctx) or (h.start[:0], h.end[:0])
    s, e = union_intervals(np.concatenate([h.start[rows], sp[0]]).astype(np.int64),
                           np.concatenate([h.end[rows], sp[1]]).astype(np.int64))
    return idle_calls_within(ctx, s, e)


def _frames_in(ctx: Context, spans: tuple[np.ndarray, np.ndarray], pre: tuple[np.ndarray, np.ndarray] | None,
               n: int) -> tuple[list[tuple[str, float, bool]], list[tuple[str, float]]]:
    """The program's Python frames holding the host time before each step's first op where no pipeline event is
    recorded (``spans``, the input part, and ``pre``, the frames' part that is not input): (name, ms per step, input),
    the outermost frames with only host work (``context.lead_frames``) of the one thread they fill the most of,
    longest first -- what the capture records holding that time (survey h37-survey37: TimeSformer's HF pipeline
    ``preprocess`` frames, PyAV decoding and the image processor, 215 of 217.5 ms); and the frames directly inside the
    longest (:func:`_within`)."""
    fr = ctx.trace.spans
    if fr is None or not len(fr):
        return [], []
    s0 = [spans[0].astype(np.int64)] + ([pre[0].astype(np.int64)] if pre is not None else [])
    s1 = [spans[1].astype(np.int64)] + ([pre[1].astype(np.int64)] if pre is not None else [])
    i0, i1 = union_intervals(np.concatenate(s0), np.concatenate(s1))
    rows = lead_frames(ctx.h, fr, (i0, i1), np.unique(ctx.h.line[ctx.role_rows(DISPATCH_BIT)]) if len(ctx.h) else None)
    if not rows.size:
        return [], []
    s, e = fr.start[rows].astype(np.int64), fr.end[rows].astype(np.int64)
    inside = time_within(i0, i1, s, e)
    line = fr.line[rows].astype(np.int64)
    busiest = int(np.argmax(np.bincount(line - line.min(), weights=inside))) + int(line.min())
    mine = (line == busiest) & (inside > 0)
    rows, inside = rows[mine], inside[mine]
    totals = np.bincount(fr.name[rows].astype(np.int64), weights=inside)
    names, said = ctx.h.names, ctx.fw.input_frame
    out = [(names[i], per_step(float(totals[i]) / PS_PER_MS, n), bool(said(names[i])))
           for i in np.flatnonzero(totals > 0).tolist()]
    out = sorted(out, key=lambda x: -x[1])[:TOP_OPS]
    top = int(np.argmax(totals))
    return out, _within(ctx, rows[fr.name[rows] == top], (i0, i1), n)


def _within(ctx: Context, tops: np.ndarray, lead: tuple[np.ndarray, np.ndarray], n: int) -> list[tuple[str, float]]:
    """The frames directly inside the frames ``tops`` (one name's, one thread's): (name, ms per step inside the
    lead -- ``lead``, its stretches), longest first: what the longest frame holding the lead spends its
    time in (TimeSformer's ``preprocess``: the image processor 178 ms, PyAV decoding 36 ms)."""
    fr = ctx.trace.spans
    if not tops.size:
        return []
    line = fr.line[tops[0]]
    s, e = fr.start.astype(np.int64, copy=False), fr.end.astype(np.int64, copy=False)
    kids: list[np.ndarray] = []
    for t in tops.tolist():
        c = np.flatnonzero((fr.line == line) & (s >= s[t]) & (e <= e[t]))
        c = c[c != t]
        if not c.size:
            continue
        c = c[np.lexsort((-(e[c] - s[c]), s[c]))]
        kids.append(c[outermost(np.zeros(c.size, np.int64), s[c], e[c])])
    if not kids:
        return []
    c = np.concatenate(kids)
    inside = time_within(lead[0], lead[1], s[c], e[c])
    totals = np.bincount(fr.name[c].astype(np.int64), weights=inside)
    names = ctx.h.names
    out = [(names[i], per_step(float(totals[i]) / PS_PER_MS, n)) for i in np.flatnonzero(totals > 0).tolist()]
    return sorted(out, key=lambda x: -x[1])[:TOP_OPS]


def _transfer_ms(ctx: Context, rows: np.ndarray, n: int) -> float:
    """ms per step and GPU of the input wait inside the pipeline's events (``rows``: all of them, the ledger keeps
    the part inside the kept steps -- a send begun before the step's first GPU work still holds it) that move the batch
    to the device (``Framework.batch_transfer_event``): the batch was made, and the GPU waits for its transfer -- the fix is to
    prefetch to the device, not to make batches faster (survey h37-survey18: TF's ``IteratorGetNext/_1:_Send``, 17 ms
    of a 41 ms step, the host staging the copy)."""
    if not rows.size:
        return 0.0
    return _wait_in(ctx, rows[ctx.h.name_mask(ctx.fw.batch_transfer_event)[rows]], n)


def _moved_ms(ctx: Context, n: int) -> float:
    """ms per step and GPU of the input wait inside the host's copies of array data to the device
    (``Framework.batch_transfer_event``) where the capture records no pipeline event.  Why: the input spans such a
    capture's wait is painted from hold these copies beside the lead before each step's first op
    (``context._input_spans`` (c)); a jitted call handed a NumPy batch copies it inside the call, after the step's
    first op (real-h100-jax ``implicit_numpy_input``: the first op 3 us into each step, 2.49 ms of the wait in
    PjRt's ``H2D Dispatch``), so that part is the batch's transfer, not host time before the first op."""
    h = ctx.h
    rows = np.flatnonzero(h.name_mask(ctx.fw.batch_transfer_event)) if len(h) else np.zeros(0, dtype=np.int64)
    return _wait_in(ctx, rows, n)


def _wait_in(ctx: Context, rows: np.ndarray, n: int, less: np.ndarray | None = None) -> float:
    """ms per step and GPU of the ledger's input wait inside the host events ``rows`` (their union: nested or
    overlapping events count once), outside the events ``less`` (None: none)."""
    h = ctx.h
    act = ctx.active
    if not rows.size or not act:
        return 0.0
    s, e = union_intervals(h.start[rows].astype(np.int64), h.end[rows].astype(np.int64))
    if less is not None and less.size:
        s, e = subtract_intervals(s, e, *union_intervals(h.start[less].astype(np.int64), h.end[less].astype(np.int64)))
    col = BREAKDOWN_CATEGORIES.index("input_wait")
    return per_step(sum(float(ledger_of(ctx, g, s, e)[col]) for g in act) / PS_PER_MS, n, len(act))


def _own_ms(ctx: Context, rows: np.ndarray, n: int) -> float:
    """ms per step and GPU of the ledger's input wait inside the framework's own pipeline events among ``rows``
    (``Framework.input_event``: the DataLoader's ``__next__``, tf.data's ``IteratorGetNext`` and its send), the
    program's ranges aside.  Why: the finding that names the iterator's next batch as the wait states the time the
    capture records in it, measured apart from the wait, so its parts (this, the ranges, the put) are an account the
    reader -- and the ``input<=account`` law -- can check against the wait (h37-forms10num: main named the iterator
    with no time at all)."""
    if not rows.size:
        return 0.0
    return _wait_in(ctx, rows[ctx.h.name_mask(ctx.fw.input_event)[rows]], n)


def _own_frame(ctx: Context, rows: np.ndarray, n: int) -> str:
    """The name of the framework's own pipeline events among ``rows`` holding the most input wait, where those events
    are frames the profiler's Python tracer recorded (``Framework.traced_frame``: ``$dataset_ops.py:4734 __next__``);
    "" where none is, or an event of another kind (tf.data's ``IteratorGetNext``) holds more.  Why: the iterator's
    ``__next__`` is then the capture's only record of the loop taking its batch, and the finding names it as such --
    main read it as the host's own ops, "the step makes its input itself" (h37-tiny70 *Left* 1)."""
    h = ctx.h
    if not rows.size:
        return ""
    own = rows[h.name_mask(ctx.fw.input_event)[rows]]
    if not own.size:
        return ""
    best = max(((_wait_in(ctx, own[h.name[own] == i], n), h.names[int(i)]) for i in np.unique(h.name[own]).tolist()),
               default=(0.0, ""))
    return best[1] if best[0] > 0 and ctx.fw.traced_frame(best[1]) else ""


def _lead_ms(ctx: Context, n: int) -> float:
    """ms per step and GPU of the ledger's input wait inside the host time before each step's first op that stands for
    an untraced loader (each GPU's input spans, ``Context.input_spans`` where it has none of its own).  Why: the
    finding naming that time states it, from the spans themselves, not as the wait restated: a wait the ledger booked
    outside them would show as an account that falls short (h37-forms10num)."""
    col = BREAKDOWN_CATEGORIES.index("input_wait")
    total = 0.0
    for g in ctx.active:
        sp = _input_spans(ctx, g)
        if sp is not None:
            total += float(ledger_of(ctx, g, *sp)[col])
    return per_step(total / PS_PER_MS, n, len(ctx.active)) if ctx.active else 0.0


def _input_spans(ctx: Context, g: GpuCtx) -> tuple[np.ndarray, np.ndarray] | None:
    """GPU ``g``'s input spans, merged (:func:`union_intervals`): its own process's (``GpuCtx.input_spans``), else the
    host's (``Context.input_spans``); None where it has none.  Why one reading: the untraced lead (:func:`_lead_ms`)
    and the batch's put (:func:`_put_ms`) are parts of the one input wait the ledger paints from these spans
    (``breakdown`` reads them so), and each asked it in its own loop (h37-review26)."""
    sp = ctx.gpu_input_spans(g)
    if sp is None or not sp[0].size:
        return None
    return union_intervals(sp[0].astype(np.int64), sp[1].astype(np.int64))


def _put_ms(ctx: Context, rows: np.ndarray, n: int) -> float:
    """ms per step and GPU of the ledger's input wait outside the pipeline's own events (``rows``): in the batch's
    transfers to the device that ``context._input_spans`` counts as input beside them (``jax.device_put`` after the
    program's fetch range, its staging on a PjRt worker thread).  Why: the ledger books both as input, so a finding
    that names the pipeline's ranges as the wait names this part too, or its parts fall short of its whole (h37-forms10in:
    seed 41178's 42.7 ms wait, 41.9 ms of it in ``next_batch``, 0.8 ms in the put around it)."""
    act = ctx.active
    h = ctx.h
    moves = h.name_mask(ctx.fw.transfer_event) | h.name_mask(ctx.fw.batch_transfer_event)
    if not act or not moves.any():
        return 0.0
    # only the input spans' transfers: a GPU whose own process records no pipeline event counts its lead as input
    # too (``context._own_host``), and that lead is no transfer
    xs, xe = union_intervals(h.start[moves].astype(np.int64), h.end[moves].astype(np.int64))
    own = union_intervals(h.start[rows].astype(np.int64), h.end[rows].astype(np.int64))
    col = BREAKDOWN_CATEGORIES.index("input_wait")
    total = 0.0
    for g in act:
        sp = _input_spans(ctx, g)
        if sp is None:
            continue
        s, e = intersect_intervals(*sp, xs, xe)  # inside a transfer event
        s, e = subtract_intervals(s, e, *own) if own[0].size else (s, e)
        total += float(ledger_of(ctx, g, s, e)[col])
    return per_step(total / PS_PER_MS, n, len(act))


def _ranges(ctx: Context, rows: np.ndarray, n: int) -> list[tuple[str, float]]:
    """The program's own ranges for fetching its batch among the pipeline's events ``rows`` -- those no framework
    pipeline event is (``Framework.input_event``) --, (name, ms per step and GPU of input wait inside each name's and
    outside the framework's own pipeline events), longest first, those holding any: what the finding names the
    pipeline by where the program marks it itself (a JAX loop's ``TraceAnnotation('get_batch')`` has no iterator to
    name).  A range around the DataLoader's ``__next__`` holds none of its own: that event names the wait.  Every
    such range is kept, not the longest ``TOP_OPS``: the finding names the longest and says the rest together as
    "other ranges", so a cut here left a sixth range's time out of the parts it names (h37-review26 *Left* 7)."""
    if not rows.size:
        return []
    framework = ctx.h.name_mask(ctx.fw.input_event)[rows]
    return _by_name(ctx, rows[~framework & ~_pipeline_function(ctx, rows)], rows[framework], n)


def _functions(ctx: Context, rows: np.ndarray, n: int) -> list[tuple[str, float]]:
    """The ops the pipeline's own functions ran among the pipeline's events ``rows`` (``Trace.pipeline_ops``), as
    :func:`_ranges` names the program's ranges: (op name, ms per step and GPU of input wait inside it and outside the
    framework's own pipeline events), longest first.  Why apart: they are the pipeline's work on the step's threads
    (tf.data's ``map``), not a range the program marks around fetching its batch.  Each op's part leaves out the
    time of the longer ones before it: one function's ops run nested across threads (TensorFlow 2.4's
    ``MultiDeviceIterator``: ``RemoteCall`` on a GPU's private thread around the ``MultiDeviceIteratorGetNextFromShard``
    it runs on an inter-op thread, the shared V100 BERT), so the parts are one account of the wait, never a
    microsecond twice (h37-xla64)."""
    if not rows.size:
        return []
    framework = ctx.h.name_mask(ctx.fw.input_event)[rows]
    own = rows[~framework & _pipeline_function(ctx, rows)]
    out, said = [], rows[framework]
    for name, _ in _by_name(ctx, own, said, n):  # longest first, each outside the framework's and the longer ones'
        mine = own[ctx.h.name[own] == ctx.h.names.index(name)]
        out.append((name, _wait_in(ctx, mine, n, said)))
        said = np.concatenate([said, mine])
    return sorted((x for x in out if x[1] > 0), key=lambda x: -x[1])


def _pipeline_function(ctx: Context, rows: np.ndarray) -> np.ndarray:
    """Bool per row of ``rows``: an op the pipeline's own functions ran (``Trace.pipeline_ops``)."""
    ops = ctx.trace.pipeline_ops
    return np.isin(rows, ops) if ops is not None else np.zeros(rows.size, dtype=bool)


def _by_name(ctx: Context, own: np.ndarray, theirs: np.ndarray, n: int) -> list[tuple[str, float]]:
    """(name, ms per step and GPU of input wait inside the events ``own`` of that name and outside ``theirs``), longest
    first, those holding any."""
    h = ctx.h
    out = [(h.names[int(i)], _wait_in(ctx, own[h.name[own] == i], n, theirs)) for i in np.unique(h.name[own]).tolist()]
    return sorted((x for x in out if x[1] > 0), key=lambda x: -x[1])


def _ops_in(ctx: Context, spans: tuple[np.ndarray, np.ndarray], n: int) -> list[tuple[str, float]]:
    """The host's own recorded work inside the input time no pipeline event names: op name -> ms per step, the
    outermost events of the one thread whose events fill the most of it (so they never add up to more than the
    time), longest first.  Where such ops fill it, the time is no untraced loader: the step makes its input itself
    (survey h37-survey11: a 654 ms CPU ``aten::randn`` before each step's copy)."""
    h = ctx.h
    i0, i1 = union_intervals(spans[0].astype(np.int64), spans[1].astype(np.int64))
    work = ctx.role_rows(HOST_WORK_BIT)
    if not i0.size or not work.size:
        return []
    s, e = h.start[work].astype(np.int64), h.end[work].astype(np.int64)
    inside = time_within(i0, i1, s, e)  # the part of each event inside the spans
    # an event around a whole step (``record_function`` over its body) is outermost over every op and names none
    keep = inside > 0
    keep[keep] = ~around_step_work(ctx, np.zeros((0, 2), np.int64), work[keep])
    work, s, e, inside = work[keep], s[keep], e[keep], inside[keep]
    if not work.size:
        return []
    # outermost per thread: sorted by (thread, start, longest first), an event inside the running end of the ones
    # before it on its thread is nested in one of them
    order = np.lexsort((-(e - s), s, h.line[work]))
    work, s, e, inside = work[order], s[order], e[order], inside[order]
    line = h.line[work].astype(np.int64)
    outer = outermost(line, s, e)
    work, inside, line = work[outer], inside[outer], line[outer]
    busiest = int(np.argmax(np.bincount(line - line.min(), weights=inside))) + int(line.min())
    mine = line == busiest
    totals = np.bincount(h.name[work[mine]].astype(np.int64), weights=inside[mine])
    named = sorted(((h.names[i], per_step(float(totals[i]) / PS_PER_MS, n)) for i in np.flatnonzero(totals > 0).tolist()),
                   key=lambda x: -x[1])
    return named[:TOP_OPS]


def _workers(ctx: Context, rows: np.ndarray) -> tuple[bool, bool]:
    """Whether the input events of the kept steps (``rows``) show a pipeline whose batches workers make, and whether
    its wait is theirs (:func:`_parallel`).  The first alone is the lever in use: where the loop's own code inside its
    fetch range holds most of the wait, the workers are not what it waits for, yet "load batches in worker processes"
    would tell it to use what it uses (the duoan/playground-cuda ``torch_baseline``: 2 workers, 74 of a 261 us wait
    in their ``__next__``, h37-huntk67 *Left* 1)."""
    shown = _workers_shown(ctx, rows)
    return shown, shown and _parallel(ctx, rows)


def _workers_shown(ctx: Context, rows: np.ndarray) -> bool:
    """Every input event of ``rows`` is a parallel pipeline's own (``Framework.parallel_input``: a DataLoader with
    worker processes) or a program's range wrapping one (:func:`_wraps_parallel`); a loop whose loader switches mode
    mid-capture is not."""
    if not rows.size:
        return False
    parallel = _parallel_rows(ctx, rows)
    return bool(parallel.all()) or (bool(parallel.any()) and _wraps_parallel(ctx, rows[~parallel], rows[parallel]))


def _parallel_rows(ctx: Context, rows: np.ndarray) -> np.ndarray:
    """Bool per row of ``rows``: a parallel pipeline's own event (``Framework.parallel_input``)."""
    names = ctx.h.names
    ids, at = np.unique(ctx.h.name[rows], return_inverse=True)  # one question a name, not an event
    return np.array([ctx.fw.parallel_input(names[int(i)]) for i in ids.tolist()], dtype=bool)[at.ravel()]


def _parallel(ctx: Context, rows: np.ndarray) -> bool:
    """Of a pipeline whose workers make the batches (:func:`_workers_shown`), the wait is theirs: the fix for it is
    faster workers, not workers.  A range the program marks around fetching its batch that holds such a pipeline's
    own event (``record_function("data_loader")`` around ``next(it)``) is that pipeline's fetch, not a pipeline of its
    own: it says nothing of how the batches are made (:func:`_wraps_parallel`) -- where the workers' own event holds
    most of the wait the range holds; where the range's own code outside it holds more, the wait is not the workers'
    and no fix for slow workers fits (the same lab's ``torch_baseline``: 74 of a 261 us wait in ``__next__``, the rest
    the loop's Python and the profiler's own range around it).

    Why: a synthetic training lab's RTX 5080 trace (duoan/playground-cuda ``torch_data_workers4``, a DataLoader of 4
    workers each ~0.5 s a batch, wrapped in the loop's own ``data_loader`` range) waited 298 ms in the workers'
    ``__next__``, and was told to "load batches in DataLoader worker processes" -- its range, no worker iterator by
    name, made the pipeline read as one without workers (h37-huntk67)."""
    parallel = _parallel_rows(ctx, rows)
    if parallel.all():
        return True
    n = ctx.steps.count  # the workers' fetch holds most of the wait: the rest is the loop's own code in its range
    return _wait_in(ctx, rows[parallel], n) >= 0.5 * _wait_in(ctx, rows, n)


def _serial_range_holds(ctx: Context, rows: np.ndarray) -> bool:
    """Of a pipeline without workers (its events the framework's own serial ones: a DataLoader's in-process
    ``__next__``), whether the loop's own code in the ranges it marks around each fetch holds most of the wait: every
    range wraps one of the pipeline's events on its own thread, and those events hold under half the wait the ranges
    and they hold together.

    Why: "load batches in worker processes" first, for a range whose own code outside ``__next__`` held most of the
    wait, would move the part that is not the loader's to no worker (``synthetic.torchtrace.write_ranged_loader``
    without workers: 400 of a 460 us wait outside the 60 us ``__next__``; the case beside h37-huntr67's, h37-idle67)."""
    if not rows.size:
        return False
    h = ctx.h
    framework = h.name_mask(ctx.fw.input_event)[rows]
    ranges, fetches = rows[~framework], rows[framework]
    if not ranges.size or not fetches.size:
        return False
    if not bool(_holds(h, ranges, fetches).all()):  # sorted searches: a pass a range is quadratic in the steps
        return False
    n = ctx.steps.count
    return _wait_in(ctx, fetches, n) < 0.5 * _wait_in(ctx, rows, n)


def _range_calls(ctx: Context, rows: np.ndarray, n: int) -> list[tuple[str, float, float]]:
    """The calls the profiler recorded inside the program's fetch ranges among ``rows`` (no framework pipeline
    event) and outside the pipeline's own events, on each range's thread: the outermost of them by name, as (name,
    calls per step, ms per step and GPU of the input wait inside them), longest first (at most ``TOP_OPS``), those
    holding any.  The wait, not their wall time: the finding says them as parts of the ranges' own wait
    (:func:`_ranges`), and a call the GPU ran beside (a loop that fetches before it syncs) outlasted that wait -- "464
    us of the range's time ... `aten::stack` (1.50 ms) there" (``write_ranged_loader(busy_us=...)``, h37-review67).
    What the loop's own code in its fetch range is, as far as the capture shows it; the rest is code it did not
    record.  Why: a range whose own code holds most of
    the wait is that code's cost, and the finding names it rather than the workers (the ``torch_baseline`` range's two
    ``cudaEventRecordWithFlags`` a step after ``__next__`` returns, and ~150 us of unrecorded Python, h37-huntr67)."""
    h = ctx.h
    framework = h.name_mask(ctx.fw.input_event)[rows]
    ranges, fetches = rows[~framework], rows[framework]
    near = np.flatnonzero(_inside(h, ranges, np.arange(len(h))))
    # not the pipeline's own event nor what it holds, nor a range no other holds (the fetch range itself)
    near = near[~_inside(h, fetches, near)]
    outer = ranges[outermost_rows(h.line[ranges], h.start[ranges], h.end[ranges])]
    every = near[~np.isin(near, outer)]
    if not every.size:
        return []
    every = every[outermost_rows(h.line[every], h.start[every], h.end[every])]
    out = []
    for i in np.unique(h.name[every]).tolist():
        mine = every[h.name[every] == i]
        if (wait := _wait_in(ctx, mine, n)) > 0:
            out.append((h.names[int(i)], per_step(float(mine.size), n), wait))
    return sorted(out, key=lambda x: -x[2])[:TOP_OPS]


def _wraps_parallel(ctx: Context, others: np.ndarray, parallel: np.ndarray) -> bool:
    """Each of ``others`` -- input events that are no parallel pipeline's own -- is a program's range (no framework
    pipeline event, ``Framework.input_event``) that holds one of the ``parallel`` pipeline's events on its own thread:
    it wraps that pipeline's fetch.  A framework's own serial iterator, or a range holding none, is a pipeline that
    makes its batches on the step's path."""
    h = ctx.h
    if h.name_mask(ctx.fw.input_event)[others].any():
        return False
    return bool(_holds(h, others, parallel).all())


def _inside(h, outer: np.ndarray, rows: np.ndarray) -> np.ndarray:  # noqa: ANN001 - HostEvents
    """Bool per row of ``rows``: wholly inside one of the events ``outer`` on its own thread (inside their union
    there: a thread's events nest, so inside the union is inside one of them).  One search a thread of ``outer``.
    Why: a search per event of ``outer`` over the rows is quadratic in the steps (3,000 fetch ranges: 107 s)."""
    out = np.zeros(rows.size, dtype=bool)
    for line in np.unique(h.line[outer]).tolist():
        mine = np.flatnonzero(h.line[rows] == line)
        if not mine.size:
            continue
        o = outer[h.line[outer] == line]
        # back-to-back ranges kept apart: their parent spans both and lies inside neither
        us, ue = union_intervals(h.start[o].astype(np.int64), h.end[o].astype(np.int64), merge_touching=False)
        s, e = h.start[rows[mine]].astype(np.int64), h.end[rows[mine]].astype(np.int64)
        at = np.searchsorted(us, s, side="right") - 1
        out[mine] = (at >= 0) & (e <= ue[np.maximum(at, 0)])
    return out


def _holds(h, outer: np.ndarray, inner: np.ndarray) -> np.ndarray:  # noqa: ANN001 - HostEvents
    """Bool per row of ``outer``: it holds one of the events ``inner`` on its own thread (one starting inside it
    that ends inside it: of those starting inside it, the earliest end).  Sorted searches a thread of ``outer``, not
    a pass over ``inner`` an event of ``outer``, which is quadratic in the steps."""
    out = np.zeros(outer.size, dtype=bool)
    for line in np.unique(h.line[outer]).tolist():
        mine = np.flatnonzero(h.line[outer] == line)
        i = inner[h.line[inner] == line]
        if not i.size:
            continue
        order = np.argsort(h.start[i], kind="stable")
        s, e = h.start[i][order].astype(np.int64), h.end[i][order].astype(np.int64)
        os_, oe = h.start[outer[mine]].astype(np.int64), h.end[outer[mine]].astype(np.int64)
        lo, hi = np.searchsorted(s, os_, side="left"), np.searchsorted(s, oe, side="right")
        some = hi > lo
        if not some.any():
            continue
        # the earliest end over each [lo, hi): reduceat over the pairs, an end past the last as the sentinel
        bounds = np.stack([lo[some], hi[some]], axis=1).ravel()
        first_end = np.minimum.reduceat(np.append(e, np.iinfo(np.int64).max), bounds)[::2]
        out[mine[some]] = first_end <= oe[some]
    return out
