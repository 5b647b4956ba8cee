"""Source 9, ``nvtx_range`` / ``nvtx_top_range``: steps from the program's ranges (Nsight's NVTX,
Kineto's ``record_function``): a range named like a step or iteration (``ProfilerStep#N``, ``train_step``,
``iteration 3``), a framework's own range closing each iteration (DeepSpeed's optimizer ``step``,
:mod:`.iterations`), else the most repeated top-level user range that holds the GPU work, on a thread that
launches kernels where one marks ranges (:func:`_on_launching_threads`).

Why: a capture without the format's step markers often still marks its loop with ranges; read per rank, they give
each GPU's steps.  They win over the program's repeated spans and GPU bursts (the user's own words for a step), and
lose to the format's markers and to XLA's module executions; a range that holds a gradient in under half its windows
is a layer's, not a step's (:func:`_within_iterations`).
"""

from __future__ import annotations

import itertools

import numpy as np

from tb_gpu_advisor import devices, frameworks
from tb_gpu_advisor.common.fmt import pct
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.frameworks import nvtx, pytorch, user_ranges
from tb_gpu_advisor.job import Job
from tb_gpu_advisor.job.structure import SpanSteps, forward_iterations, iteration_names, work_launch_times
from tb_gpu_advisor.model.columns import count_within, union_intervals
from tb_gpu_advisor.model.trace import DeviceEvents, HostEvents, Trace, device_launches, line_processes
from tb_gpu_advisor.steps.iterations import (_framework_iterations, _update_iterations, _user_update_iterations,
                                             _windows_holding_backward)
from tb_gpu_advisor.steps.ranges import (_base_name, _counting_bases, _max_per_line, _most_repeated, _range_step_ids,
                                         _spelled, _top_level)
from tb_gpu_advisor.steps.windows import MarkedSteps, _group_lines, _line_windows, _windows_by_line


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
    n = int(_windows_holding_backward(h, devs, launches, starts).sum())
    # a range k >= 2 times an iteration holds the backward in 1/k of its windows: half of them at most -- exactly half
    # for a model of 2 layers (h37-randjobs5: Megatron's 2-layer ranges, 30 "steps" of 15 iterations)
    return (n, int(starts.size)) if 0 < n and 2 * n <= starts.size else None


def _nvtx_steps(trace: Trace, launches: list[np.ndarray] | None = None, job: Job | None = None) -> MarkedSteps | None:
    """Steps from the capture's NVTX ranges (``Trace.ranges``), in this order: PyTorch's ``ProfilerStep#N``; user
    ranges named like a step or an iteration (``frameworks.nvtx.is_step_name``), the most repeated such name (source
    ``nvtx_range``); else the top-level user range (inside no other range of its thread) repeated most often on one
    thread, at least ``steps.nvtx_min_repeats`` times (``nvtx_top_range``: a guess, medium confidence) -- of the threads
    that launch a kernel, where any range's thread does (:func:`_on_launching_threads`) -- where the steps it marks hold at least ``job.span_step_coverage`` of the capture's launches (:func:`_hold_the_work`).
    Framework ops (autograd NVTX) and libraries' ranges (NCCL...) never mark steps.  A step's number is the one its name carries (``ProfilerStep#7``, ``iteration 12``), else its order on
    its thread; ranks' ranges of the same number are one step, and each thread's own windows of them are kept
    (:func:`_line_windows`: each rank's GPU is placed by its own ranges, :func:`_own_host_windows`)."""
    r = trace.ranges
    if r is None or not r.idx.size:
        return _annotation_steps(trace, launches)
    h = trace.h
    idx = r.idx
    names = h.names
    pstep = np.fromiter((pytorch.step_number(n) for n in names), np.int64, len(names))
    m = pstep[h.name[idx]] >= 0
    if m.any():
        sel = idx[m]
        ids = pstep[h.name[sel]]
        u, s, e = _group_lines(h.line[sel], ids, h.start[sel], h.end[sel])
        return MarkedSteps("nvtx_range", f"NVTX `ProfilerStep#N` ranges ({sel.size})", u, s, e,
                           _line_windows(h, sel, ids, u))
    user = ~r.op & ~user_ranges.library_range_mask(h, r)
    if not user.any():
        return None
    base, base_names = _bases(trace, idx[user])
    how = "named like a step"
    source = "nvtx_range"
    best, sel, launches = _step_named(trace, idx[user], base, launches)
    if sel is not None and nvtx.iteration_number(names[int(h.name[sel[0]])]) < 0:
        accumulated = _named_step_updates(trace, sel, launches, job, _spelled(h, sel, base_names[best]))
        if accumulated is not None:
            return accumulated
    if sel is None:
        ended = _framework_iterations(trace, user)
        if ended is not None:  # a framework's own ranges: its iteration's end marks the steps, not its micro-batches
            return ended
        if launches is None:
            launches = device_launches(h, trace.devices)
        updated = _update_iterations(trace, user, launches)
        if updated is not None:  # its micro-batches' ranges, the updates after every k-th closing the iterations
            return updated
        user = user & _on_launching_threads(h, idx, user, trace.devices, launches)
        found = _repeated_outer(h, idx, user, base, top_only=True)
        how = "the most repeated top-level range"
        if found is None and job is not None and job.kind.kind == "inference":  # two passes its ranges name
            phase = _twice_named_phase(h, idx, user, base, base_names)
            found = None if phase is None else _turn_opening(h, idx, user, base, *phase)
            how = "the top-level range named after the loop's phase"
            if found is not None and found[0] != phase[0]:
                how = (f"the top-level range opening each turn of the loop's phase "
                       f"{_spelled(h, phase[1], base_names[phase[0]])}, twice")
        inside = False
        if found is None:  # the loop inside one range around the whole run (``generate`` around its tokens)
            found = _repeated_outer(h, idx, user & ~_nested_module_calls(h, idx, r.framework), base, top_only=False)
            how, inside = "the outermost repeated range", True
        if found is None:
            return None
        best, sel = found
        if not _hold_the_work(h, trace.devices, launches, sel, inside=inside):
            return None
        first = sel[_top_level(h, sel)] if sel.size else sel
        most = first[h.line[first] == np.bincount(h.line[first].astype(np.int64)).argmax()]
        if not _hold_the_time(h, trace.devices, most, idx[user]):
            return None  # calls made now and then (an interpreter's own ranges), not a loop's turns
        accumulated = _user_update_iterations(trace, sel, launches, job, _spelled(h, sel, base_names[best]))
        if accumulated is not None:  # its micro-steps, the optimizer's update after every k-th closing the steps
            return accumulated
        starts = np.sort(h.start[most].astype(np.int64))  # the windows of the thread that repeats it most
        if _within_iterations(job, h, trace.devices, launches, starts):
            return None  # it repeats inside each iteration (a layer's range): a part of one, no step
        source = "nvtx_top_range"
    return _numbered_steps(trace, sel, source, f"{_spelled(h, sel, base_names[best])}, {how}")


def _named_step_updates(trace: Trace, sel: np.ndarray, launches: list[np.ndarray] | None, job: Job | None,
                        shown: str) -> MarkedSteps | None:
    """The optimizer's steps where the ranges ``sel``, named like a step (``frameworks.nvtx.is_step_name``: ``batch
    {n}``, ``train_step {n}``, ``epoch 2 batch 30``), are micro-steps of gradient accumulation, the update after every
    k-th -- outside them, named the optimizer's or shown by the gradients' all-reduce at that beat -- closing each
    (:func:`~.iterations._user_update_iterations`); None elsewhere (an update inside each range, or after every one:
    each range is a step).  Not for micro-steps named after their iteration (``iteration_3_ga_step_0``): the name
    numbers their step already (``_iteration_ids``).

    Why: such a name counts the data loader's batches, or the program's calls of its step function, not the
    optimizer's steps: read as the top-level range it was, before its name was a step's, the update's beat made one step
    of k of them (8 optimizer steps of 4 micro-steps); read as a step's name alone, 32 (h37-names69 for nested names;
    h37-names70 for ``batch {n}`` and ``train_step {n}``, which main's policy left one step each)."""
    if launches is None:
        launches = device_launches(trace.h, trace.devices)
    return _user_update_iterations(trace, sel, launches, job, shown, how="named like a step")


def _bases(trace: Trace, idx: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """(per name of ``trace.h.names``, its base's id; the bases' texts) for the ranges ``idx``: ranges named alike but
    for their numbers (``iteration 12``, ``iteration 13``; ``token_6_processing``, ``token_7_processing``) are one
    name where those numbers count (:func:`~.ranges._counting_bases`)."""
    h = trace.h
    bases: dict[str, int] = {}
    base_text = _counting_bases(h, idx, [_base_name(n) for n in h.names], line_processes(trace))
    base = np.array([bases.setdefault(b, len(bases)) for b in base_text], dtype=np.int64)
    return base, list(bases)


def _step_named(trace: Trace, idx: np.ndarray, base: np.ndarray, launches: list[np.ndarray] | None
                ) -> tuple[int, np.ndarray | None, list[np.ndarray] | None]:
    """(base id, its ranges; the launches, computed where asked) of the most repeated base name among the ranges
    ``idx`` named like a step (``frameworks.nvtx.is_step_name``) whose ranges hold the GPU work's launches
    (:func:`_launch_inside`); (-1, None, launches) where none does."""
    h = trace.h
    step_named = h.per_name(nvtx.is_step_name) | _counted_loop_names(h, idx)
    cand = idx[step_named[h.name[idx]]]
    while cand.size:
        best = _most_repeated(h, base[h.name[cand]], cand, per_line=False)
        sel = cand[base[h.name[cand]] == best]
        if launches is None:
            launches = device_launches(h, trace.devices)
        if _launch_inside(h, launches, sel):
            return best, sel, launches
        # named like a step, yet beside the loop (a loader thread's `batch`, fetched ahead): the next name, if any
        cand = cand[base[h.name[cand]] != best]
    return -1, None, launches


def _numbered_steps(trace: Trace, sel: np.ndarray, source: str, what: str) -> MarkedSteps:
    """The steps the ranges ``sel`` mark (``what``: their name and why, for the note): each numbered by the number its
    name carries, else beside the line that began first (:func:`~.ranges._range_step_ids`); the ranges of one number
    one step (:func:`_group_lines`), each thread's own windows kept (:func:`_line_windows`)."""
    h = trace.h
    sel = sel[np.lexsort((h.start[sel], h.line[sel]))]
    lines = np.unique(h.line[sel]).size
    note = f"{frameworks.ranges_word(trace)} {what} ({sel.size} on {lines} thread{'s' if lines > 1 else ''})"
    iters = _iteration_ids(h, sel)
    if iters is not None:  # micro-steps named after their iteration: each iteration's ranges are one step
        line, ids, start, end = _one_window_per_step(h.line[sel], iters, h.start[sel], h.end[sel])
        note += f", each a micro-step of the iteration its name numbers ({np.unique(iters).size} iterations)"
        u, s, e = _group_lines(line, ids, start, end)
        return MarkedSteps(source, note, u, s, e, _windows_by_line(line, ids, start, end, u))
    ids = _range_step_ids(h, sel)
    u, s, e = _group_lines(h.line[sel], ids, h.start[sel], h.end[sel])
    return MarkedSteps(source, note, u, s, e, _line_windows(h, sel, ids, u))


def _iteration_ids(h: HostEvents, sel: np.ndarray) -> np.ndarray | None:
    """Per range of ``sel``, the iteration its name numbers (``frameworks.nvtx.iteration_number``:
    ``iteration_3_ga_step_0`` -> 3), where every one names one and some iteration holds two ranges or more on a
    thread; else None (a range per step: its own number or order numbers it, :func:`~.ranges._range_step_ids`).

    Why: a micro-step's last number is its index inside the iteration, which repeats every iteration; read as the
    steps' numbers (or by order), each micro-step was a step -- NeMo Automodel's ``iteration_{i}_ga_step_{j}``, the
    optimizer's update outside them, read as 32 "steps" for 8 iterations of 4 micro-steps (h37-nvtx69)."""
    num = np.fromiter((nvtx.iteration_number(n) for n in h.names), np.int64, len(h.names))[h.name[sel]]
    if not num.size or (num < 0).any():
        return None
    key = h.line[sel].astype(np.int64) * (int(num.max()) + 1) + num
    return num if np.unique(key).size < key.size else None


def _one_window_per_step(line: np.ndarray, ids: np.ndarray, start: np.ndarray, end: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(line, step number, start, end) of each thread's one window per step: its ranges of one number merged, from
    the first's start to the last's end -- a step's micro-steps on that thread."""
    key = line.astype(np.int64) * (int(ids.max()) + 1) + ids.astype(np.int64)
    u, first, inv = np.unique(key, return_index=True, return_inverse=True)  # first: a row of each, its line and number
    s = np.full(u.size, np.iinfo(np.int64).max, np.int64)
    e = np.full(u.size, np.iinfo(np.int64).min, np.int64)
    np.minimum.at(s, inv, start.astype(np.int64))
    np.maximum.at(e, inv, end.astype(np.int64))
    return line[first], ids[first], s, e


def _annotation_steps(trace: Trace, launches: list[np.ndarray] | None) -> MarkedSteps | None:
    """Steps from the program's annotations named like a step, where the format keeps them among its ops
    (``Trace.annotations``: Kineto's ``record_function("train_step")``, ``f"train_step {k}"``), read as a step-named
    NVTX range is (source ``nvtx_range``): each rank's thread's own, numbered by their counter or beside the
    others', each GPU placed by its own rank's windows.  None where no such annotation holds the GPU work's launches.

    Why: read as the program's repeated spans (``job.structure.span_steps``), they were one thread's instances by
    time, every other rank's GPU placed on that thread's windows: rank 1 of 2, 30 ms behind after a module load of its
    own, left GPU 0's steps after it 0.0 ms of compute (h37-debt47 *Left* 1); numbered, each ``train_step {k}`` was a
    name of its own, no span repeated, and the launches' period placed a late rank's GPU off its steps: GPU 1 0.0 ms
    of compute in 7 of 9 steps (*Left* 2).  A user's range named like a step is its own word for its step, in either
    format; the ranges named otherwise stay the program's repeated spans."""
    ann = trace.annotations
    if ann is None or not ann.size:
        return None
    h = trace.h
    # a library's own annotations (``Optimizer.step#AdamW.step``, ``nccl:all_reduce``) are no program's step
    own = ann[~(h.per_name(nvtx.is_library_range) | h.per_name(nvtx.is_framework_range))[h.name[ann]]].astype(np.int64)
    step_named = h.per_name(nvtx.is_step_name) | _counted_loop_names(h, own)
    own = own[step_named[h.name[own]]]
    if not own.size:
        return None
    base, base_names = _bases(trace, own)
    best, sel, launches = _step_named(trace, own, base, launches)
    if sel is None:
        return None
    # one name nested in itself (a decorated step calling a decorated helper of its name) is one call, as one span
    sel = sel[np.lexsort((-h.end[sel].astype(np.int64), h.start[sel].astype(np.int64), h.line[sel]))]
    sel = sel[_top_level(h, sel)]
    if _max_per_line(h, sel) < 2 and not _hold_most_launches(h, launches, sel):
        return None  # once on each thread, beside most of the work: no loop's turn
    return _numbered_steps(trace, sel, "nvtx_range", f"{_spelled(h, sel, base_names[best])}, {_named_how(h, sel)}")


def _counted_loop_names(h: HostEvents, idx: np.ndarray) -> np.ndarray:
    """Bool per name of ``h.names``: a name of two labelled counters (``frameworks.nvtx.two_counters``: ``cycle 2 pass
    5``), no step's name by its words, among the ranges ``idx`` whose family (the two words) reads as the turns of a
    loop nested in another by the ranges' order (:func:`_loop_of_counters`).

    Why by structure: which words name a loop cannot be listed -- ``cycle``/``pass``, ``round``/``turn``,
    ``phase``/``chunk`` are loops only where the program says so -- but their ranges say it: each pair once, the outer
    counter constant across each run of the inner, the ranges apart on their thread.  A layer's index (``layer 3 block
    2``) is none (``two_counters``), and ranges whose pairs recur (a model's blocks, run every step) are no loop's turns
    (h37-names69 *Left* 1: such a name stayed no step name and its steps came from the host's waits, low)."""
    out = np.zeros(len(h.names), bool)
    families: dict[tuple[str, str], dict[int, tuple[int, int]]] = {}
    for i in np.unique(h.name[idx]).tolist():
        name = h.names[int(i)]
        c = nvtx.two_counters(name)
        if c is not None and not nvtx.is_step_name(name):
            families.setdefault((c[0], c[2]), {})[int(i)] = (c[1], c[3])
    for counters in families.values():
        if len(counters) >= 3:
            sel = idx[np.isin(h.name[idx], list(counters))]
            if _loop_of_counters(h, sel, counters):
                out[list(counters)] = True
    return out


def _loop_of_counters(h: HostEvents, sel: np.ndarray, counters: dict[int, tuple[int, int]]) -> bool:
    """Whether the ranges ``sel`` (names -> their (outer, inner) counters: ``counters``) are an inner loop's turns
    inside an outer loop's, on every thread: apart (none overlaps the next beyond a clock's rounding), each pair once, in order -- the outer
    counter never decreasing, the inner one rising within each run of it -- with two outer values or more and one of
    them held across two turns or more."""
    outers: set[int] = set()
    held = False
    for ln in np.unique(h.line[sel]).tolist():
        mine = sel[h.line[sel] == ln]
        mine = mine[np.argsort(h.start[mine], kind="stable")]
        s, e = h.start[mine].astype(np.int64), h.end[mine].astype(np.int64)
        if mine.size < 3 or (100 * (e[:-1] - s[1:]) > e[:-1] - s[:-1]).any():
            return False  # one inside another, or overlapping beyond the clock's rounding (1% of a turn)
        pairs = [counters[int(n)] for n in h.name[mine].tolist()]
        if len(set(pairs)) != len(pairs):
            return False
        for (o0, i0), (o1, i1) in itertools.pairwise(pairs):
            if o1 < o0 or (o1 == o0 and i1 <= i0):
                return False
            held |= o1 == o0
        outers |= {o for o, _ in pairs}
    return held and len(outers) >= 2


def _named_how(h: HostEvents, sel: np.ndarray) -> str:
    """Why the ranges ``sel`` were read as steps, for the note: named like a step, or by two loops' counters."""
    name = h.names[int(h.name[sel[0]])]
    if nvtx.is_step_name(name) or nvtx.two_counters(name) is None:
        return "named like a step"
    return "named by two loops' counters (the first constant across each run of the second, every pair once)"


def _hold_most_launches(h: HostEvents, launches: list[np.ndarray] | None, sel: np.ndarray) -> bool:
    """Whether the ranges ``sel`` (each thread's one step-named range) hold at least half the launches of the
    capture's GPU work, on any thread; False where no device event maps to a launch.

    Why: a capture of one training step -- ``with profile(): with record_function("train_step"): ...``, no schedule,
    so no ``ProfilerStep#N`` -- marks its step once, and the program's range is its step: read as no mark, it was "no
    step markers found" and the GPU's bursts taken for steps (a 2-rank MoE step's forward and backward read as 2
    steps of 7.3 ms, its 12 ms module load between them; ykcai-daniel/torch-compile-moe, h37-wild55k).  A range
    named like a step that holds few of the launches (one ``batch`` fetch, one step among unmarked ones) is no
    reading of the capture's steps."""
    rec = np.concatenate([a[a >= 0] for a in launches]) if launches else np.zeros(0, np.int64)
    if not rec.size or not sel.size:
        return False
    t = np.sort(h.start[rec].astype(np.int64))
    return 2 * count_within(t, h.start[sel].astype(np.int64), h.end[sel].astype(np.int64)) >= rec.size


def _span_lines(trace: Trace, own: SpanSteps, launches: list[np.ndarray]) -> MarkedSteps | None:
    """The program's repeated spans (``job.structure``'s ``annotation_spans``, named ``own.name``) read per rank, as
    unnumbered step ranges are (:func:`_numbered_steps`), where two or more ranks' processes each repeat them on one
    thread of their own: each thread's instances (inside none of its own, holding a launch of the GPU work) numbered
    beside the thread that began first (``ranges._first_step_beside``), those of one number one step, each rank's GPU
    placed by its own thread's windows.  None where one process (or a thread of none) repeats them, two threads of one
    process do, a rank's thread repeats them once, or ``own``'s windows are not these spans' own.

    Why: ``span_steps`` weighs each name on the thread whose instances hold the most launches, counted by time -- and
    ranks run together, so one rank's instances held every rank's launches and the steps were that thread's alone,
    the other rank's GPU placed on its windows.  Kineto's ``record_function("fwd_bwd_opt")`` of 2 ranks, rank 1 paused
    30 ms by a module load of its own: GPU 0's kept steps after the load read 0.0 ms of compute (rank 1's capture
    opened 2 steps late: steps 4-8 of 0.0; opened with rank 0's: 6-10), though each rank ran 3.2 ms each step
    (h37-probe47k *Left* 1).  Each rank's steps are its own spans, as its step-named ones are
    (:func:`_annotation_steps`)."""
    proc = line_processes(trace)
    h = trace.h
    named = np.fromiter((n == own.name for n in h.names), bool, len(h.names))
    if proc is None or not named.any() or not len(h):
        return None
    sel = np.flatnonzero(named[h.name])
    sel = sel[proc[h.line[sel]] >= 0]
    sel = sel[np.lexsort((-h.end[sel].astype(np.int64), h.start[sel].astype(np.int64), h.line[sel]))]
    sel = sel[_top_level(h, sel)]
    ends = _own_ends(h, sel, own)
    if ends is None:
        return None
    times = work_launch_times(trace, launches)
    held = (np.searchsorted(times, ends, side="right")
            - np.searchsorted(times, h.start[sel].astype(np.int64), side="left")) > 0
    sel, ends = sel[held], ends[held]  # as ``span_steps`` keeps them: an instance that holds no launch is no step
    lines = np.unique(h.line[sel])
    if not (np.isin(own.start, h.start[sel]).all() and np.isin(own.end, ends).all()):
        # the spans read were another table's (a Python function's), or tiles run on past them (each to the next
        # one's start: ``job.structure.backward_span_steps``' forwards, each holding the backward after it)
        return None
    if lines.size < 2 or np.unique(proc[lines]).size != lines.size or _min_per_line(h, sel) < 2:
        return None
    ids = _range_step_ids(h, sel)
    u, s, e = _group_lines(h.line[sel], ids, h.start[sel], ends)
    # ranks run together: one rank's span lying mostly past another's is a call of its own, yet a launch in both is
    # one launch (4 ranks' `generate` spans read as "enclosing 125% of the GPU work's launches")
    inside = count_within(times, h.start[sel].astype(np.int64), ends)
    what = (f"{sel.size} iterations, each from a `{own.name}` host event through its `{own.phase}` to its last "
            "phase's end," if own.phase else f"{sel.size} `{own.name}` host events")
    note = (f"the program's repeated spans, each rank's own: {what} on {lines.size} ranks' threads enclosing "
            f"{pct(inside / max(times.size, 1), 0)} of the GPU work's launches (no step markers in the capture)")
    return MarkedSteps(own.source, note, u, s, e, _windows_by_line(h.line[sel], ids, h.start[sel], ends, u))


def _own_ends(h: HostEvents, sel: np.ndarray, own: SpanSteps) -> np.ndarray | None:
    """The end (ps) of each span of ``sel`` (by line, then start) as ``own`` reads its instances: its own end, or --
    where ``own`` opens each iteration at a forward span (``own.phase``) -- its iteration's, on its own thread
    (``job.structure.forward_iterations``); None where a thread's forwards open no such iterations."""
    if not own.phase:
        return h.end[sel].astype(np.int64)
    out = np.zeros(sel.size, np.int64)
    line = h.line[sel]
    names = iteration_names(h, own.name, own.phase)  # the same on every line: built once
    for ln in np.unique(line).tolist():
        pos = np.flatnonzero(line == ln)
        found = forward_iterations(h, ln, names)
        if found is None or not np.array_equal(found.rows, sel[pos]):
            return None
        out[pos] = found.ends
    return out


def _min_per_line(h: HostEvents, sel: np.ndarray) -> int:
    """The fewest ranges of ``sel`` any of their lines holds."""
    return int(np.unique(h.line[sel], return_counts=True)[1].min()) if sel.size else 0


def _launch_inside(h: HostEvents, launches: list[np.ndarray], sel: np.ndarray) -> bool:
    """Whether most ranges of ``sel`` (named like a step) hold a launch of the capture's GPU work inside them, on any
    thread (a step's kernels may be launched by a runtime's worker under the Python thread's ``train_step``); True
    where no device event maps to a launch.

    Why: a step's range frames the loop's turn, whose GPU work is launched inside it.  A thread beside the loop may
    name its own ranges like a step -- a loader thread's ``batch`` around each fetch, all of them ahead of the loop
    that uses them -- and those, holding no launch, counted the fetches: twelve 1 ms ``batch`` ranges before a loop of
    twelve 8 ms steps read as 11 steps of 1.05 ms, "input-bound", critical (h37-probe43n;
    ``synthetic.nsysexport.write_loader_thread_batches``).  Its ranges are left to the other readings (a thread
    that launches nothing marks no top-level step either: :func:`_on_launching_threads`)."""
    rec = np.concatenate([a[a >= 0] for a in launches]) if launches else np.zeros(0, np.int64)
    if not rec.size or not sel.size:
        return True
    t = np.sort(h.start[rec].astype(np.int64))
    held = np.searchsorted(t, h.end[sel].astype(np.int64), side="right") - np.searchsorted(
        t, h.start[sel].astype(np.int64), side="left")
    return 2 * int((held > 0).sum()) >= sel.size


def _hold_the_time(h: HostEvents, devs: list[DeviceEvents], sel: np.ndarray, user: np.ndarray) -> bool:
    """Whether a repeated range's instances on one thread (``sel``) hold the time they would tile, where the capture
    recorded no GPU work for them to hold (:func:`_hold_the_work` has nothing to count): the user's ranges of that
    thread (``user``: these and their siblings, the other phases the program marks; not one around them all) cover at
    least ``job.span_step_coverage`` of the span from the first instance's start to the last one's end.  True where
    some GPU work was recorded.

    Why: a loop's turn runs inside the program's marks -- the user wraps the loop's body, or its phases -- so on the
    CPU alone the marks are where the loop's time goes.  A range that repeats only because some function the program
    calls now and then is marked holds almost none of the time between its instances: the steps read from them would
    be the unmarked time between the calls.
    ASSUMPTION this replaces: *a range repeated on one thread is a loop's turn*.  quasiben/nvtx-examples
    ``cpython-nvtx-patch.sqlite`` (a CPython patched with NVTX ranges in ``PyObject_GetAttr``): 5,069 ranges of
    ~0.2 us, 5,025 in the interpreter's first 41 ms and 44 at its exit, the 554 s dict loop between them marking
    none -- 1.9 ms of ranges in 554 s (0.0003%), read as "5068 marked steps of 109.4 ms"."""
    if any(len(d) for d in devs) or sel.size < 2:
        return True
    lo, hi = int(h.start[sel].min()), int(h.end[sel].max())
    # (not a range around the whole run -- ``main``, the ``f`` around the loop -- which holds every span)
    mine = user[(h.line[user] == h.line[sel[0]]) & (h.end[user] > lo) & (h.start[user] < hi)
                & ~((h.start[user] <= lo) & (h.end[user] >= hi))]
    s, e = union_intervals(np.clip(h.start[mine].astype(np.int64), lo, hi), np.clip(h.end[mine].astype(np.int64), lo, hi))
    return hi <= lo or float((e - s).sum()) >= T("job.span_step_coverage") * (hi - lo)


def _on_launching_threads(h: HostEvents, idx: np.ndarray, user: np.ndarray, devs: list[DeviceEvents],
                          launches: list[np.ndarray]) -> np.ndarray:
    """Bool per range of ``idx``: on a thread that launches a kernel (or a collective), where some user range
    (``user``) is; all True where no user range's thread launches one (the launches unmapped, or the work launched by
    threads that mark no range: an async runtime's workers under the Python thread's ``train_step``).

    Why: a step is the GPU work its range frames, and the kernels are launched from inside the loop that marks it.
    A thread that launches no kernel runs beside the loop -- an OpenMP communication thread's
    ``openmp_comm_event_wait``, run twice (h256) or four times (h512) in each step while it waits for the gradients'
    copies, each a wait and an all-reduce -- so its range, however regular and however often it repeats, counts its
    own round trips, not the steps: 38 "steps" of 1.64 ms for 20 of ~2.9 ms framed by the main thread's
    ``forward`` / ``backward_bucketed`` / ``adam_update`` (CME 213's MPI transformer, h37-commthread).  Its copies
    are the comm's, not the step's work: only kernels count."""
    lines = _kernel_launch_lines(h, devs, launches)
    on = np.isin(h.line[idx], lines)
    return on if (on & user).any() else np.ones(idx.size, bool)


def _kernel_launch_lines(h: HostEvents, devs: list[DeviceEvents], launches: list[np.ndarray]) -> np.ndarray:
    """The host lines (threads) whose launch records started a kernel or a collective on some GPU (sorted)."""
    rec = [la[(la >= 0) & ((d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE))]
           for d, la in zip(devs, launches) if len(d) and la is not None and la.size == len(d)]
    rec = np.concatenate(rec) if rec else np.zeros(0, np.int64)
    return np.unique(h.line[rec]) if rec.size else np.zeros(0, np.int64)


def _repeated_outer(h: HostEvents, idx: np.ndarray, user: np.ndarray, base: np.ndarray, top_only: bool,
                    only: np.ndarray | None = None, least: float | None = None) -> tuple[int, np.ndarray] | None:
    """(base name, its ranges) of the most repeated user range among the outer ones, or None where none repeats
    ``steps.nvtx_min_repeats`` times on one thread.  ``top_only``: the ranges inside no other range of their thread;
    else the ranges inside no other *repeated* range -- a loop wrapped in one range that runs once (``generate``
    around its ``token_N`` ranges, ``train`` around its iterations) has its iteration one level down, and the blocks
    inside each iteration (``layer_3``) repeat more often but are parts of it.  ``only`` (bool per base name): the
    outer ranges of these names alone; ``least``: the repeats asked in place of ``steps.nvtx_min_repeats``."""
    cand = idx[user]
    if not top_only:
        key = base[h.name[cand]].astype(np.int64, copy=False) * (int(h.line.max()) + 1) + h.line[cand].astype(np.int64, copy=False)
        _, inv, counts = np.unique(key, return_inverse=True, return_counts=True)
        cand = cand[counts[inv] >= T("steps.nvtx_min_repeats")]
    if not cand.size:
        return None
    cand = cand[_top_level(h, cand)]
    if only is not None:
        cand = cand[only[base[h.name[cand]]]]
    if not cand.size:
        return None
    best = _most_repeated(h, base[h.name[cand]], cand, per_line=True)
    sel = cand[base[h.name[cand]] == best]
    if _max_per_line(h, sel) < (T("steps.nvtx_min_repeats") if least is None else least):
        return None
    return best, sel


#: The fewest times a top-level range whose name says a loop's phase (``frameworks.nvtx.is_evaluation_range``) must
#: repeat on a thread to mark steps -- below ``steps.nvtx_min_repeats``, which guards unnamed blocks run once or twice.
_PHASE_MIN_REPEATS = 2


def _twice_named_phase(h: HostEvents, idx: np.ndarray, user: np.ndarray, base: np.ndarray, base_names: list[str]
                       ) -> tuple[int, np.ndarray] | None:
    """(base name, its ranges) of the most repeated top-level user range whose name says the loop's phase
    (``nvtx.is_evaluation_range``: ``evaluate``, ``eval_step``, ``validation``), where it repeats
    :data:`_PHASE_MIN_REPEATS` times on a thread; None otherwise.

    Why: ``steps.nvtx_min_repeats`` (3) keeps a block run once or twice (a set-up, a checkpoint) from marking steps,
    but a range named after the loop's own phase says what it is by its name, as a step-named range does: an
    evaluation of two batches under ``load`` / ``evaluate`` / ``metrics`` ranges, two ranks (random walk seeds 52258
    and 52262 of ``--forms12``), read as one pass of the whole window though its ranges mark the two passes -- "never
    one pass of the whole window" where the job's own ranges number two.  The caller still asks that they hold the
    GPU's work (:func:`_hold_the_work`).  Asked of an inference job only: in training, evaluation is a phase beside
    the iterations (``validation_step`` after each ``backward``), whose own ranges read them."""
    phase = np.fromiter((nvtx.is_evaluation_range(n) for n in base_names), bool, len(base_names))
    return _repeated_outer(h, idx, user, base, top_only=True, only=phase, least=_PHASE_MIN_REPEATS)


def _turn_opening(h: HostEvents, idx: np.ndarray, user: np.ndarray, base: np.ndarray, best: int, sel: np.ndarray
                  ) -> tuple[int, np.ndarray]:
    """(base name, its ranges) of the top-level user range that opens each turn of a loop whose phase range (``best``,
    its ranges ``sel``: :func:`_twice_named_phase`) is not the turn's first: on the thread repeating the phase most,
    a range of another name as many times, its k-th starting before the k-th phase range and no earlier than the
    end of the one before -- the earliest such; the phase range itself where none opens before it.

    Why: a turn of ``data`` then ``eval_step`` placed by ``eval_step`` alone cuts every GPU step at the phase's first
    kernel: each step but the last holds the next turn's ``data`` work, the first turn's ``data`` lies in none, and the
    last step holds only its ``eval_step`` -- 2 turns of 488.6 ms read as 488.6 and 236.9 ms (h37-probe45w,
    ``--forms12`` walk seed 98050).  Three turns or more are read from the most repeated top-level range, where a
    tie goes to the one that starts first (:func:`_most_repeated`): the turn's opening; two turns are read alike."""
    line = int(np.bincount(h.line[sel].astype(np.int64)).argmax())
    phase = sel[h.line[sel] == line]
    phase = phase[np.argsort(h.start[phase], kind="stable")]
    ps = h.start[phase].astype(np.int64)
    after = np.r_[np.iinfo(np.int64).min, h.end[phase][:-1].astype(np.int64)]
    top = idx[user]
    top = top[_top_level(h, top)]
    here = top[(h.line[top] == line) & (base[h.name[top]] != best)]
    opening, earliest = best, int(ps[0])
    for b in np.unique(base[h.name[here]]):
        mine = np.sort(h.start[here[base[h.name[here]] == b]].astype(np.int64))
        if mine.size == ps.size and bool(((mine >= after) & (mine < ps)).all()) and int(mine[0]) < earliest:
            opening, earliest = int(b), int(mine[0])
    return (best, sel) if opening == best else (opening, top[base[h.name[top]] == opening])


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
