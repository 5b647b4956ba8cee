"""Source 1-6: the step marks the capture itself carries, the surest reading, tried first.  A
derived ``Steps`` line on the GPU planes (TF 2.4 grouped files), a training wrapper's range around each whole
iteration (Lightning's ``run_training_batch``), the format's own step annotations (PyTorch ``ProfilerStep#N``),
Keras' ``Profiled batch``, ``train*``/``test*`` host events with ``_r``, the program's own step marks of any name
(``_r`` and ``step_num``), other ``_r`` events, or events carrying ``step_num``/``iter_num``.

Why it wins: these marks are written by the framework at each step's boundary, so where any exist no inference from
the program's structure or the GPU's idleness can know better.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.frameworks import Framework, pytorch
from tb_gpu_advisor.model.columns import sorted_unique, union_intervals
from tb_gpu_advisor.model.trace import HostEvents, Trace
from tb_gpu_advisor.steps.windows import MISSING, MarkedSteps, _group_lines, _group_windows, own_time, unrecorded


def _host_candidates(h: HostEvents, fw: Framework) -> MarkedSteps | None:
    """The steps (:class:`~.windows.MarkedSteps`, no line's own windows) of the first host step source that has
    events; ``fw``: the capture's framework, whose profiler's step marks are read -- those of names of its own
    (``Framework.step_marks``: Keras 3's ``Profiled batch``, ``train``/``test`` roots), then the program's own of any
    name (:func:`_own_step_marks`).  Asked of the framework, never read by one framework's module: the marks and
    their names are its knowledge (h37-homes71's Left 2, h37-onehome71)."""
    if not len(h):
        return None
    for marks in fw.step_marks:
        m = marks.events(h)
        if m.any():
            sn = h.step_num[m]
            ids = np.where(sn >= 0, sn, np.arange(m.sum()))
            u, s, e = _group_windows(ids, h.start[m], h.end[m])
            return MarkedSteps(marks.source, marks.note, u, s, e, {})
    own = _own_step_marks(h, fw)
    if own is not None:
        return own
    rt = h.root >= 0
    if rt.any():
        names, counts = np.unique(h.name[rt], return_counts=True)
        best = names[np.argmax(counts)]
        m = rt & (h.name == best)
        # nested roots of the same name (re-entrant) are merged
        s, e = union_intervals(h.start[m], h.end[m])
        return MarkedSteps("root_r", f"step roots `_r` on `{h.names[best]}` events", np.arange(s.size, dtype=np.int64),
                           s, e, {})
    for stat, arr in (("step_num", h.step_num), ("iter_num", h.iter_num)):
        m = arr >= 0
        if m.any() and sorted_unique(arr[m]).size >= 2:
            u, s, e = _group_windows(arr[m], h.start[m], h.end[m])
            return MarkedSteps("step_num_stat", f"host events grouped by `{stat}`", u, s, e, {})
    return None


def _own_step_marks(h: HostEvents, fw: Framework) -> MarkedSteps | None:
    """The program's own step marks of any name as ``fw``'s profiler writes them (``Framework.own_step_marks``: ``_r``
    and ``step_num`` for TensorFlow's, JAX's and PyTorch/XLA's; none for a format that writes no such mark),
    the most frequent name's, grouped by ``step_num``: the same source as ``train``/``test`` marks (``trace_train``),
    so a ``predict`` or ``step`` mark -- the name our capture advice gives a forward pass or work of no known kind --
    reads as a ``train`` mark does (its confidence, its windows: the loop's turn to the step before), not as a root of
    any kind (``root_r``, medium: h37-marks68).  None where the host has none.  Asked of the capture's framework, as
    ``job.kind._marked_training_steps`` asks it (h37-homes71)."""
    own = fw.own_step_marks(h)
    if not own.any():
        return None
    names, counts = np.unique(h.name[own], return_counts=True)
    best = names[np.argmax(counts)]
    m = own & (h.name == best)
    u, s, e = _group_windows(h.step_num[m], h.start[m], h.end[m])
    return MarkedSteps("trace_train", f"the program's own step marks (`{h.names[best]}`, with `_r` and `step_num`)", u, s, e, {})


def _gpu_step_line_windows(lines: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[int, np.ndarray]]:
    """Steps of per-GPU step lines: (ids, host-wide starts, ends, per-GPU windows), by start.

    A step's host-wide window spans its windows on every GPU; a GPU that did not see a step gets the
    host-wide window."""
    per = {g: _group_windows(*kse) for g, kse in lines.items()}
    ids, hs, he = _group_lines(np.concatenate([np.full(v[0].size, g, np.int64) for g, v in per.items()]),
                               *(np.concatenate([v[i] for v in per.values()]) for i in range(3)))
    o = np.argsort(ids, kind="stable")
    ids, hs, he = ids[o], hs[o], he[o]
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


def _unrecorded_by_gpu(lines: dict, ids: np.ndarray, hs: np.ndarray, he: np.ndarray,
                       gpu_windows: dict[int, np.ndarray]) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
    """(GPU -> the ids of the steps its rank's capture had not opened for, GPU -> those it had closed before): the
    steps its own step line (``Trace.gpu_step_lines``: one rank's file) has no span of, before its first span or after
    its last, by :func:`~tb_gpu_advisor.steps.windows.unrecorded` (``_Reading.unopened``, ``_Reading.closed``).  Their
    windows on that GPU (``gpu_windows``, aligned with ``ids``; the other ranks' where it has no span) are moved into
    the rank's own time (:func:`~tb_gpu_advisor.steps.windows.own_time`), so its own last step runs to where its next
    would start, not to another rank's step (h37-probe45c; h37-probe44r *Left* 1, the Kineto form)."""
    opened: dict[int, np.ndarray] = {}
    closed: dict[int, np.ndarray] = {}
    pos = {int(k): i for i, k in enumerate(ids.tolist())}
    for g, (k, s, e) in lines.items():
        k = np.asarray(k)
        if not k.size or any(int(x) not in pos for x in k.tolist()):
            continue
        own_s = np.full(ids.size, MISSING, np.int64)
        at = np.array([pos[int(x)] for x in k.tolist()], np.int64)
        own_s[at] = np.iinfo(np.int64).max
        np.minimum.at(own_s, at, np.asarray(s, np.int64))
        before, after = unrecorded(ids, hs, he, own_s, int(np.min(s)), int(np.max(e)))
        for out, got in ((opened, before), (closed, after)):
            if got.size:
                out[int(g)] = got
        moved = np.isin(ids, np.concatenate([before, after]))
        if moved.any() and int(g) in gpu_windows:
            w = gpu_windows[int(g)]
            ts, te = own_time(hs, he, own_s)
            w[moved, 0], w[moved, 1] = ts[moved], te[moved]
    return opened, closed


def _own_marked_windows(trace: Trace, ids: np.ndarray, last_end: int) -> dict[int, np.ndarray]:
    """GPU -> the host windows of its own rank's steps ``ids`` ((n, 2) ps, aligned with ``ids``), from the
    ``ProfilerStep#N`` marks on its process's lines (``Trace.gpu_host_lines``), where steps are read from each GPU's
    own step line (``Trace.gpu_step_lines``: Kineto's device spans, one file per rank); {} where the format names no
    lines per GPU or no rank marks its steps on the host.  A rank's step k runs from its mark of k to its mark of k+1
    (``prof.step()`` closes one as it opens the next), its last to its mark's end or the steps' ``last_end``, the later;
    a step it did not mark (its capture opened late, closed early) is an empty window where its next one starts.

    Why: those steps are device spans, so the host-wide windows are device time, one union over every rank: a call
    rank 1 alone makes inside its own step 7 (a 30 ms module load, its later steps 30 ms late) started inside rank 0's
    GPU's step 6, which was dropped as the warm-up step and rank 1's step 7 kept with the load, where the rank alone
    drops its step 7 (h37-probe44r; ``synthetic.torchtrace.rank_pause``).  Each rank's host events lie in its own marks."""
    h, lines = trace.h, trace.gpu_host_lines
    if not lines or not len(h) or not ids.size:
        return {}
    num = np.fromiter((pytorch.step_number(n) for n in h.names), dtype=np.int64, count=len(h.names))[h.name]
    at = {int(k): i for i, k in enumerate(ids.tolist())}
    out: dict[int, np.ndarray] = {}
    for gpu, ls in lines.items():
        rows = np.flatnonzero((num >= 0) & np.isin(h.line, np.asarray(ls, dtype=np.int64)))
        if not rows.size:
            continue
        u, s, e = _group_windows(num[rows], h.start[rows].astype(np.int64), h.end[rows].astype(np.int64))
        if any(int(k) not in at for k in u.tolist()) or np.any(np.diff(s) < 0):
            continue  # numbers the steps do not hold, or out of order: no reading of the rank's own
        e = e.copy()
        e[:-1] = np.maximum(s[:-1], s[1:])
        e[-1] = max(int(e[-1]), last_end)
        out[int(gpu)] = _aligned(np.array([at[int(k)] for k in u.tolist()], np.int64), s, e, ids.size)
    return out


def _aligned(idx: np.ndarray, s: np.ndarray, e: np.ndarray, n: int) -> np.ndarray:
    """(n, 2) windows with ``(s, e)`` at positions ``idx`` and the others empty where the next present one starts
    (after the last: where it ends), so the windows stay sorted and hold nothing they did not mark."""
    w = np.full((n, 2), -1, np.int64)
    w[idx, 0], w[idx, 1] = s, e
    nxt = int(e[-1])
    for i in range(n - 1, -1, -1):
        if w[i, 0] < 0:
            w[i] = nxt
        else:
            nxt = int(w[i, 0])
    return w


def _iteration_range_steps(trace: Trace) -> MarkedSteps | None:
    """The training wrapper's own ranges around whole iterations (``frameworks.pytorch.is_iteration_range``), where
    at least two are recorded: their steps (:class:`~.windows.MarkedSteps`), by start; None elsewhere."""
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
    return MarkedSteps("iteration_range", note, np.arange(s.size, dtype=np.int64), s, e, {})


def _marked_host_steps(trace: Trace) -> MarkedSteps | None:
    """The format's own host step annotations (PyTorch ``ProfilerStep#N``), merged per step number."""
    m = trace.host_steps
    if m is None or not m.ids.size:
        return None
    u, s, e = _group_windows(m.ids, m.start, m.end)
    return MarkedSteps(m.source, m.note, u, s, e, {})


def _last_step_mark_end(trace: Trace, fw: Framework) -> int | None:
    """Where the host's last step mark ends (ps): the format's own step marks or the host's step markers
    (:func:`_marked_host_steps`, :func:`_host_candidates`), else the last call of the framework's compiled step
    function (``Framework.step_function``: Keras 2's ``train_function`` carries no marker stat); None where the
    host marks none.  What the host launched after it is no part of a step but the step's results read back
    (``steps.ends._grouped_after_last_mark``).

    A mark inside a call of the step function ends no earlier than that call: TF 2.3's graph step runs as a
    ``FunctionRun`` root (``_r``) that returns on the Python thread within 2 ms while the executor's threads
    (``ExecutorState::Process``, the step's group) go on launching the step's kernels until ``train_function``
    returns 72 ms later -- read from the root alone, 207 of the step's device events fell after the mark and a 164 ms
    step read 0.4 ms (mholmeslinder/semi-supervised-cv's V100 Keras sessions, h37-survey74)."""
    h = trace.h
    fn = h.name_mask(fw.step_function) if len(h) else None
    marks = _marked_host_steps(trace) or _host_candidates(h, fw)
    if marks is not None and len(marks.ends):
        last = int(np.argmax(marks.ends))
        s, e = int(marks.starts[last]), int(marks.ends[last])
        if fn is not None and fn.any():
            inside = fn & (h.start <= s) & (h.end >= e)
            if inside.any():
                e = max(e, int(h.end[inside].max()))
        return e
    if fn is None:
        return None
    return int(h.end[fn].max()) if fn.any() else None
