"""Steps from the period of the GPU work itself, where neither a marker nor a span names them.

A script that calls its model in a loop with no ``prof.step()`` and no ``record_function`` -- a ``generate()`` decode
loop, a benchmark of N forward calls -- still launches the same kernels in the same order on every call.  The launch
sequence (each GPU event's kernel, in the order its host launch ran) is then periodic, and its period is the step.

How, in numbers only:

* the period: anchored on a rare kernel in the middle of the sequence (one a step launches once or twice), each
  distance to another launch of it is a candidate; a candidate's periodic region is the longest run over which
  every launch equals the one a period later.  The step's period covers the most launches; its multiples cover as
  many, so the smallest of those wins.  A layer's period covers only one call's layers.
* the boundary: a loop reads what each call computed (the next token, a loss, a stop flag), so the host waits for
  the GPU between calls -- a stream or device sync -- and pauses (a blocking copy is not enough: offloaded weights
  are copied in before each layer); a model's layers never wait for each other.  Among
  the period's offsets, the one where the host waited (then the longest pause) is the boundary, and the period is a
  step only where the host waited at most of its boundaries and paused clearly longer than its typical gap between
  launches (``job.period_boundary_gap``).  Where every gap inside the period is a blocking copy (a native loop's
  synchronous ``cudaMemcpy`` at each launch), the gaps are the transfers' times and no pause can stand out: there
  the host's one wait per period, at the boundary and at no other offset, is the boundary.  So it is where the host is
  slower than its GPU (tiny inference calls, each read back): each sync finds the work done, the boundary's pause is
  only the loop's own turn, and the one wait per period marks it where that offset pauses longest.  A call that
  reads back more than once (mid-call and at its end) waits at a few fixed offsets of every repeat and at no other:
  that pattern of syncs and launches is the iteration's, its boundary the region's start where the host waited there
  (:func:`_read_points`).  A native loop that never syncs but reads its results back with blocking copies -- the
  copies from the device that recur with the period, each the same bytes every time, the host's only waits of the
  repeat -- ends each iteration after them (:func:`_read_backs`).  Repeated layers,
  and a loop that never reads its results back, give no steps here: in the launch sequence alone a layer called from
  Python looks like a model called from Python -- except where each repeat is itself a run of layers its own first
  and last kernels bound (:func:`_calls_of_layers`): calls of a layered model launched back to back.
* not for training (``job.detect_job`` asks only for other kinds): FSDP's all-gather rate limit makes the host wait
  before each layer's all-gather, so a training step's layers repeat with exactly the waits a loop's calls have.

Nothing reads what a kernel's name says: only which launches are equal.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.fmt import gb, ms, pct, plural
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.frameworks import engines, user_ranges
from tb_gpu_advisor.job.frame import apart, frame, process_times
from tb_gpu_advisor.job.phase import PS_PER_US
from tb_gpu_advisor.job.structure import SpanSteps
from tb_gpu_advisor.job.waits import Waits, managed_reads, process_waits, sync_waits
from tb_gpu_advisor.model.columns import innermost, lookup_mask, union_intervals, work_after_call
from tb_gpu_advisor.model.trace import PS_PER_MS, DeviceEvents, Trace, line_processes

#: Launches looked at (the first ones): the period shows within them, and a huge capture stays cheap.
MAX_LAUNCHES = 200_000
#: Launches compared one period apart around the middle before a candidate period is checked over the whole sequence.
_PROBE = 64
#: Share of a period's boundaries where the host waited for the GPU (a sync): a loop reads its
#: results (a token, a loss, a stop flag); a model's layers never wait for each other.
_WAITED = 0.8
#: Share of the time between a period's launches the host spends blocked in copies and syncs from which the gaps are
#: the transfers' own, not the host's: a native loop whose every launch is a synchronous copy (SC23's OpenMP heat).
_BLOCKED = 0.8
#: A period whose repeats are calls of a model: at least this many layers (a shorter period) filling at least this
#: share of each repeat (:func:`_calls_of_layers`).
_LAYERS = 3
_LAYERS_COVER = 0.8
#: Share of a period's launches of kernels it launches once per iteration or more, where the period holds several
#: iterations whose launch order alternates (:func:`_same_work`): iterations of one loop run the same work.
_ALIKE = 0.5
#: Share of the gaps at a period's read points below which the host spent them in its own work, not in the syncs
#: (:func:`_reads_find_work_done`): a host slower than its GPU, each read finding the work done.
_READ_BLOCKED = 0.5
#: Anchor kernels tried, and candidate periods per anchor.
_ANCHORS = 3
#: A sweep of launch configurations (:func:`_swept_blocks`): at least this many block sizes of one kernel over the
#: repeats, and its threads in all within this ratio (the same work cut into blocks of each size, a grid rounded up).
_SWEPT = 3
_SAME_WORK = 1.1
#: Launches a loop of one kernel may be read from by the host's waits alone (:func:`_waited_runs`): two iterations
#: of one launch each, a wait between -- fewer than the 8 a period is read from, each iteration ended by its sync.
_WAITED_LEAST = 2
#: Whole iterations a loop of one launch sequence is read from by the host's waits alone (:func:`_alike_runs`): two
#: calls, each waited on, are two iterations -- a walk's law reads two iterations as two steps or none, never one pass
#: of both (h37-probe45w, ``--forms13`` walk seed 98767).
_ALIKE_LEAST = 2
#: ... and where launches before the first run are the program's set-up (h37-probe45m: three runs): two runs after a
#: set-up are as likely a program's warm-up call and its timed one, the stretch between them no step's (randjobs
#: ``--forms5`` seed 30392: 2 rocpd calls 37.6 ms apart, the pause unrecorded, read as bursts with the gap between).
_ALIKE_AFTER_SET_UP = 3
_MAX_CANDIDATES = 512


def repeated_launches(trace: Trace, launches: list[np.ndarray], waits: Waits | None = None) -> SpanSteps | None:
    """The steps of a periodic launch sequence (host windows, ps), or None where the work does not repeat with a
    step's boundary.  ``waits``: the host's waits for the GPU (``job.waits.host_waits``: its syncs and polls; its sync
    calls alone where not given) -- a loop that polls after each call waits there as one that syncs does.  Several
    processes (ranks, each its own GPUs): the busiest GPU's process's reading, each process's own in ``per_line``
    (:func:`_each_process`)."""
    waits = waits if waits is not None else sync_waits(trace.h)
    steps = _one_sequence(trace, launches, waits)
    return _swept_blocks(trace, launches, _each_process(trace, launches, waits, steps)) if steps is not None else None


def _swept_blocks(trace: Trace, launches: list[np.ndarray], steps: SpanSteps) -> SpanSteps:
    """``steps`` with low confidence and the configurations named (``SpanSteps.sweep``) where its repeats are a sweep
    of launch configurations: some kernel the busiest GPU runs as often in every repeat takes at least
    :data:`_SWEPT` block sizes (threads a block) over the repeats -- each size once, or a few trials of each in a
    row -- while its threads in all, the work it was given, stay within :data:`_SAME_WORK` of each other; ``steps``
    unchanged elsewhere.

    Why: a benchmark that runs one kernel at 2x2, 4x4 ... 32x32 threads a block, each run its own allocations, uploads,
    launch and readback, repeats one launch sequence exactly, and the period read its runs as a loop's steady steps --
    kalfazed/tensorrt_starter's ``2.4-error-handler`` (an RTX 3080: 6 runs of ``MatmulKernel`` over the same 1,048,576
    threads, 1.17 to 9.24 ms) was "4 steps of 5.37 ms" whose times "vary by 62%", the window "not steady state"
    (h37-huntnsys63's Left).  A training loop's shapes change its grids with the batch (its threads in all with them),
    not one kernel's block over the same work: the same work cut into blocks of each size is a choice being compared,
    and the step's mean mixes the choices."""
    if steps.source != "repeated_launches" or steps.start.size < _SWEPT:
        return steps
    d = _busiest(trace, launches, 1)
    if d is None:
        return steps
    rec = launches[next(i for i, x in enumerate(trace.devices) if x is d)]
    idx, blocks, threads = d.launches()
    keep = (np.asarray(d.kind)[idx] == devices.KIND_KERNEL) & (rec[idx] >= 0)
    idx, blocks, threads = idx[keep], blocks[keep].astype(np.int64), threads[keep].astype(np.int64)
    at = trace.h.start[rec[idx]].astype(np.int64)
    starts, ends = np.asarray(steps.start, np.int64), np.asarray(steps.end, np.int64)
    k = np.searchsorted(starts, at, side="right") - 1
    inside = (k >= 0) & (at < ends[np.maximum(k, 0)])
    idx, blocks, threads, at, k = idx[inside], blocks[inside], threads[inside], at[inside], k[inside]
    names, n = np.asarray(d.name)[idx], starts.size
    dur = (np.asarray(d.end)[idx] - np.asarray(d.start)[idx]).astype(np.float64)
    for name in np.unique(names).tolist():
        mine = np.flatnonzero(names == name)
        mine = mine[np.lexsort((at[mine], k[mine]))]
        per = np.bincount(k[mine], minlength=n)
        if per.min() < 1 or per.min() != per.max():
            continue
        t = threads[mine].reshape(n, -1)
        work = (blocks[mine] * threads[mine]).reshape(n, -1)
        for j in range(t.shape[1]):
            col = t[:, j]
            if np.unique(col).size < _SWEPT or work[:, j].max() > _SAME_WORK * work[:, j].min():
                continue
            took = dur[mine].reshape(n, -1)[:, j]
            head, sep, tail = steps.note.partition(";")  # the sweep said in the reading's first clause, its headline
            return replace(steps, confidence="low", sweep=_sweep_words(d.names[name], col, took, int(work[:, j].min())),
                           note=f"{head}, {_sweep_note(d.names[name], col, int(work[:, j].min()))}{sep}{tail}")
    return steps


def _sweep_note(name: str, threads: np.ndarray, work: int) -> str:
    """The job line's words for a sweep of ``name``'s block sizes (``threads``: each repeat's threads a block)."""
    sizes = np.unique(threads)
    return (f"launching `{devices.short_kernel_name(name, 60)}` at {plural(sizes.size, 'block size')} "
            f"({int(sizes[0]):,} to {int(sizes[-1]):,} threads a block) over the same "
            f"{work:,} threads: a sweep of launch configurations, not one loop's steady turns -- the step time is "
            "their mean")


def _sweep_words(name: str, threads: np.ndarray, took_ps: np.ndarray, work: int) -> str:
    """Each block size of the sweep and its kernel time (the fastest run at that size), slowest first."""
    best: dict[int, float] = {}
    for t, ps in zip(threads.tolist(), took_ps.tolist()):
        best[int(t)] = min(best.get(int(t), ps), ps)
    ranked = sorted(best.items(), key=lambda kv: -kv[1])
    runs = ", ".join(f"{ms(v / PS_PER_MS)} at {t:,}" for t, v in ranked)
    return (f"`{devices.short_kernel_name(name, 60)}` over {work:,} threads took {runs} threads a block")


def _each_process(trace: Trace, launches: list[np.ndarray], waits: Waits, steps: SpanSteps) -> SpanSteps:
    """``steps`` (the busiest GPU's process's period) with ``per_line``: each process's own reading of its own
    launches and waits (:func:`_one_sequence`), keyed by the host line that launched most of them, where every process
    that launches reads as many steps; ``steps`` unchanged where one process launches, or they differ.

    Why: ranks running one loop a little apart each start step k at their own time; placed by the busiest rank's
    windows, a rank 3 ms behind launched each pass in that rank's window and ran it 3 ms past its end, so the steps
    "carried" 3 ms of spill and the last was cut 3 ms short and dropped: a 2-rank benchmark's 4 timed passes read as 3
    (h37-probe47f).  Each GPU's step k is where its own process's kth repeat runs (``steps.place._own_host_windows``)."""
    proc = line_processes(trace)
    if proc is None:
        return steps
    gpu_proc = {g: int(proc[ls[0]]) for g, ls in trace.gpu_host_lines.items() if len(ls)}
    mine = {gpu_proc.get(d.gpu, -1) for d, la in zip(trace.devices, launches) if la.size and bool((la >= 0).any())}
    if len(mine) < 2 or -1 in mine:
        return steps
    per: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for p in sorted(mine):
        own = [la if gpu_proc.get(d.gpu) == p else np.full(la.shape, -1, la.dtype)
               for d, la in zip(trace.devices, launches)]
        read = _one_sequence(trace, own, waits)
        if read is None or read.start.size != steps.start.size:
            return steps
        d = _busiest(trace, own, 1)
        la = next(x for dev, x in zip(trace.devices, own) if dev is d)
        lines = trace.h.line[la[la >= 0]].astype(np.int64)
        per[int(np.bincount(lines).argmax())] = (read.start.astype(np.int64), read.end.astype(np.int64))
    steps.per_line = per
    return steps


def _one_sequence(trace: Trace, launches: list[np.ndarray], waits: Waits) -> SpanSteps | None:
    """:func:`repeated_launches` of the busiest GPU's launch sequence, against its own process's waits."""
    busiest = _busiest(trace, launches, _WAITED_LEAST)
    if busiest is not None:  # the sequence read is the busiest GPU's: its process's own waits end its iterations
        waits = process_waits(trace, waits, busiest.gpu)
    seq = _sequence(trace, launches)
    if seq is None:  # too few launches for a period; a few launches of one kernel may still be split by the host's waits
        few = _sequence(trace, launches, least=_WAITED_LEAST)
        return None if few is None else _waited_runs(trace, launches, *few, waits)
    key, t_start, t_end = seq
    n = key.size
    found = _period(key)
    if found is None:  # no period of two kernels or more: a loop of one kernel over and over, ended by the host's waits
        # (or the program's own count of a loop whose turns differ: a solver's inner search run a varying number of times)
        return _program_counted(trace, key, t_start, t_end, waits,
                                _waited_runs(trace, launches, key, t_start, t_end, waits), launches)
    p, first, length = found  # the region: launches [first, first + length), length >= 2p
    if (length / n) < T("job.span_step_coverage"):
        return _program_counted(trace, key, t_start, t_end, waits, None, launches)
    frame = _frame(trace, t_start, p, first, length, busiest.gpu if busiest is not None else -1)
    steps = None if frame is None else _region_steps(trace, launches, key, t_start, t_end, p, frame[0],
                                                     frame[1] - frame[0], waits)
    if steps is None:  # no frame, or no step boundary inside it: the whole region's reading
        steps = _region_steps(trace, launches, key, t_start, t_end, p, first, length, waits)
        return _program_counted(trace, key, t_start, t_end, waits, steps, launches)
    lo, hi, label, end_ps = frame
    before, after = round((lo - first) / p), round((first + length - hi) / p)
    steps.note += (f"; the steps are the repeats inside the program's one range `{label}`, its frame, not its step: "
                   f"it holds {round((hi - lo) / p)} of the {round(length / p)} repeats, and {apart(before, after)}, "
                   f"read apart")
    return _to_frame_end(steps, end_ps)


def _program_counted(trace: Trace, key: np.ndarray, t_start: np.ndarray, t_end: np.ndarray, waits: Waits,
                     steps: SpanSteps | None, launches: list[np.ndarray] | None = None) -> SpanSteps | None:
    """``steps`` (the period's repeats, or None), or the turns of the program's own count where they differ: the
    program's output counts K iterations (``Trace.producer["program_counted_steps"]``), K launches each of two
    kernels or more interleave over the sequence -- one of each between two consecutive launches of the earliest,
    which opens each turn -- and the host waited for the GPU between most turns (after one turn's last launch of
    them, before the next's first).

    Why: a native solver's loop body runs once per iteration, and a branch some iterations take adds launches between
    them; where that branch falls every few turns alike, the launch sequence repeats exactly over several turns and its
    period is read as one step.  cestwc/balinski-and-gomory-cuda ``report8`` prints "Step 0" .. "Step 6" and runs its
    10-kernel body 7 times, each after a ``cudaDeviceSynchronize``, with a 4-launch search between turns 2-3 and 5-6:
    its 34-launch period (two turns, the search, a third) read as 2 steps (h37-nsys59).  A model's layers are no
    such turns: a program counts its calls, not its layers, so no layer's kernels launch exactly its count's times;
    where the period's waited-on repeats are a whole multiple of the count, each iteration is that many repeats
    (:func:`_counted_groups`)."""
    counted = trace.producer.get("program_counted_steps", "")
    n = int(counted) if counted.isdigit() else 0
    if n < _WAITED_LEAST or (steps is not None and steps.start.size == n):
        return steps
    ids, counts = np.unique(key, return_counts=True)
    at = {int(k): np.flatnonzero(key == k) for k in ids[counts == n].tolist()}
    if len(at) < 2:
        return _counted_groups(steps, n)
    anchor = min(at, key=lambda k: int(at[k][0]))
    opens = at[anchor]
    members = [k for k, idx in at.items() if k != anchor and (idx > opens).all()
               and (idx[:-1] < opens[1:]).all()]
    if not members:
        return _counted_groups(steps, n)
    # the host waited for the GPU between each turn's last launch of the body and the next turn's first: a sync, or
    # a read of what the GPU computed (:func:`_result_reads`; a read may itself be the turn's last launch)
    ends = np.max([at[k] for k in members], axis=0)
    reads = np.sort(np.concatenate([waits.start, _result_reads(trace, launches or [])]))
    waited = np.searchsorted(reads, t_start[opens[1:]]) > np.searchsorted(reads, t_start[ends[:-1]])
    if not waited.size or float(waited.mean()) < _WAITED:
        return steps
    last = int(ends[-1])
    start = t_start[opens]
    end = np.r_[start[1:], t_end[last]]
    coverage = (last + 1 - int(opens[0])) / key.size
    note = (f"the program's own count: its output counts {n} iterations, and the same "
            f"{plural(len(members) + 1, 'launch')} run once in each of {n} turns of its launches, the host waiting "
            "for the GPU between turns (a branch some turns take launches more between them"
            + (", so the launch sequence repeats exactly only every few turns)" if steps is not None else ")"))
    return _launch_steps(f"{n} counted iterations", start, end, coverage, "medium", note, "", True)


def _counted_groups(steps: SpanSteps | None, n: int) -> SpanSteps | None:
    """``steps`` (the period's repeats, each after the host waited for the GPU) in ``n`` runs of as many repeats each,
    where the program's output counts ``n`` iterations and the repeats are a whole multiple of it (two or more to an
    iteration); ``steps`` unchanged elsewhere.

    Why: a model whose every layer is read back (``.item()`` or a sync after each) repeats its layer with the waits a
    loop's calls have, so the launches alone read each layer as a step -- 21 "steps" of a 7-call loop of 3 layers
    (``write_counted_solver(layer=4)``, h37-nsys59's *Left* 2).  The program's own count says how many iterations ran;
    the launches cannot tell a layer from a call, the count can, where every iteration holds the same number of
    repeats."""
    if steps is None or not steps.waited or n < _WAITED_LEAST or steps.start.size <= n or steps.start.size % n:
        return steps
    k = steps.start.size // n
    note = (f"the program's own count: its output counts {n} iterations, and the launch sequence's "
            f"{steps.start.size} repeats, each after the host waited for the GPU, run {k} to an iteration (a model's "
            f"layers or an inner loop, each read back): each iteration is {k} repeats")
    return replace(steps, name=f"{n} counted iterations", start=np.asarray(steps.start, np.int64)[::k],
                   end=np.asarray(steps.end, np.int64)[k - 1::k], note=note)


def _result_reads(trace: Trace, launches: list[np.ndarray]) -> np.ndarray:
    """Start (ps, host clock, unsorted) of each read the busiest GPU's host made of what that GPU computed without a
    sync call: a copy to the host whose call returned only once the copy had ended (``cudaMemcpyFromSymbol``,
    ``cudaMemcpy`` DtoH: the call waited for the work queued before it), and each touch of managed memory the GPU
    last held (``job.waits.managed_reads``: a page migration to the host, which no call records).

    Why: a loop reads its stop flag between turns; read only from its sync calls, a solver that reads its flag with a
    blocking copy (cestwc ``report16``: 2,453 ``cudaMemcpyFromSymbol``, no sync) or a plain load of managed memory
    (``report7``: no call at all between turns) never waited, and its counted turns were one pass (h37-nsys60)."""
    d = _busiest(trace, launches, _WAITED_LEAST)
    if d is None:
        return np.zeros(0, np.int64)
    rec, idx = _launched(trace, launches, d)
    back = idx[np.asarray(d.kind)[idx] == devices.KIND_D2H]
    _, late = _clock_slack(trace, rec, d)
    blocked = _returned_after(trace.h.end[rec[back]].astype(np.int64), np.asarray(d.end, np.int64)[back], late)
    return np.concatenate([trace.h.start[rec[back[blocked]]].astype(np.int64), managed_reads(trace, d.gpu)])


def _to_frame_end(steps: SpanSteps, end_ps: int) -> SpanSteps:
    """``steps`` (the repeats inside the program's frame) with the last running to the frame's end (``end_ps``, host
    clock) where that is later and leaves it no longer than the longest step before it.

    Why: each repeat runs to the next one's first launch, so it holds the host's tail of its iteration (the sync's
    return, the timing loop's own work); the last has no next launch, and ended at its own last launch it lacked that
    tail.  The range the program closes after its last timed pass records where that iteration ends: a benchmark's 4
    passes of 20.23 ms inside ``resnet50_inference`` read their last 20.02 ms on one rank (its launch to its work's
    end), 20.23 on each of two ranks (each GPU's own windows, ``steps.place._last_device_end``), h37-probe47g.  No
    longer than a step: a range that holds work after the loop (a summary's kernels) stretches no iteration past
    one."""
    start, end = steps.start.astype(np.int64), steps.end.astype(np.int64)
    if start.size < 2 or end_ps <= int(end[-1]) or end_ps - int(start[-1]) > int((end[:-1] - start[:-1]).max()):
        return steps
    end = end.copy()
    end[-1] = end_ps
    steps.end = end
    return steps


def training_iterations(trace: Trace, launches: list[np.ndarray], training_event: Callable[[str], bool],
                        waits: Waits | None = None) -> SpanSteps | None:
    """The repeats of a training job's periodic launch sequence (:func:`repeated_launches`), where each is a whole
    iteration: the host waited for the GPU at the period's boundaries (a training loop reads its loss, its gradients'
    norm or its scaler's overflow flag) and every repeat but at most one (a window's cut edge) launches backward work
    -- a kernel only a backward
    runs (``devices.gradient_kernel_one``) or a host event the framework names training's (``training_event``:
    autograd's backward nodes, the optimizer's step).  None elsewhere.

    Why: a training job's iterations run a backward each, a layer's repeat does not.  :func:`repeated_launches` alone
    is no reading for training -- FSDP's all-gather rate limit makes the host wait before every layer, so a forward's
    layers repeat with the waits a loop's calls have -- but a period whose every repeat holds a backward is no layer
    of a forward.  A job that marks no iteration and names no update on the host (Megatron-LM's ``--profile``
    without ``--record-shapes``: its ``--nvtx-ranges`` name layers, its optimizer's kernels only) reads as its
    iterations there (h37-fwnvtx: 12 iterations of 5.85 ms, main one "pass" of the whole window)."""
    span = repeated_launches(trace, launches, waits)
    if span is None or span.start.size < 2 or not span.waited:
        return None
    h = trace.h
    starts = np.asarray(span.start, np.int64)
    held = np.zeros(starts.size, bool)

    def mark(t: np.ndarray) -> None:
        k = np.searchsorted(starts, t, side="right") - 1
        ok = (k >= 0) & (t <= np.asarray(span.end, np.int64)[np.maximum(k, 0)])
        held[k[ok]] = True

    for d, la in zip(trace.devices, launches):
        if not len(d) or la is None or la.size != len(d):
            continue
        grad = np.fromiter((devices.gradient_kernel_one(n) for n in d.names), bool, len(d.names))[d.name] & (la >= 0)
        mark(h.start[la[grad]].astype(np.int64))
    if len(h):
        mark(h.start[h.name_mask(training_event)].astype(np.int64))
    return span if int(held.sum()) >= starts.size - 1 and held.any() else None


def device_iterations(trace: Trace, launches: list[np.ndarray]) -> SpanSteps | None:
    """The iterations of a training job whose capture recorded its GPU work and no launch of it (a kernel trace alone:
    ``rocprofv3 --kernel-trace``): the busiest stream's kernel sequence, in the order the GPU ran it, is periodic
    (:func:`_period`), every repeat runs a backward (``devices.gradient_kernel_one``), and each iteration starts at
    the kernel before which the GPU idled longest, as a median over the repeats, at the same place of every repeat.
    The windows are the GPU's (ps): from one boundary kernel's start to the next's, the last boundary's to its repeat's
    own work's end where the periodic region holds that repeat whole (it ran in the capture as the others did: a
    50-iteration run read 49 without it), the work before the first boundary (a cut iteration) in none.  The busiest
    stream is read first, the next ones where it runs no such period (a short capture's set-up fills and copies may
    outnumber its few iterations' kernels).  None where any launch was recorded (the host's own sequence and waits
    say more: :func:`training_iterations`), or where no such period covers ``job.span_step_coverage`` of a stream's
    kernels.

    Why: with no host events, a training loop's iterations show only in what the GPU ran.  Its GPU bursts are no
    reading of them: one stream runs each iteration's work in the same order, but the iterations of a communication-
    bound job run back to back (the collectives fill the host's pauses) while the set-up before them runs hundreds of
    tiny bursts -- an MI350X FSDP run's rocprofv3 kernel trace (TraceLens' ``908_results.json``): 50 iterations of
    ~39 ms in 10 bursts among 620, read as one 15.1 s pass (survey h37-survey36).  A stream's period is the order of
    the program's launches, which the GPU keeps per stream; where it idles within a repeat is where the host paused."""
    if not trace.devices or any(la.size and bool((la >= 0).any()) for la in launches):
        return None
    dev = max(trace.devices, key=len)
    if len(dev) < 8:
        return None
    stream = np.asarray(dev.stream).astype(np.int64)
    counts = np.bincount(stream)
    # the busiest stream first; the next where it runs no training period (a short capture's set-up -- parameter
    # init's thousands of fills and copies -- may outnumber the few iterations after it on a stream of its own)
    for sid in np.argsort(-counts, kind="stable")[:_STREAMS_TRIED]:
        if counts[sid] < 8:
            break
        found = _stream_iterations(dev, stream, int(sid))
        if found is not None:
            return found
    return None


#: the streams of a GPU :func:`device_iterations` reads, busiest first
_STREAMS_TRIED = 8


def _two_repeats_tile(key: np.ndarray, p: int, first: int, length: int) -> bool:
    """Whether a period seen only twice tiles its stream's work (``key``: the stream's kernels in run order; the
    periodic region ``length`` kernels from ``first``): what lies outside the region is at most a window's cut ends --
    fewer than ``p`` kernels, each a kernel the repeat runs.

    Why: two repeats of the same kernel sequence, each running a backward, are two iterations where they are the
    stream's work; but within one iteration the backward of two alike layers repeats twice as well, and that
    iteration's forward and update lie outside the repeats: kernels no repeat runs.  Of three repeats or more the
    region itself is the evidence (a capture's iterations outnumber its cut ends); of two, only what lies outside it
    can tell a loop from one iteration's layers (h37-rocsteps)."""
    outside = np.r_[key[:first], key[first + length:]]
    return outside.size < p and bool(np.isin(outside, key[first:first + p]).all())


def _stream_iterations(dev, stream: np.ndarray, sid: int) -> SpanSteps | None:  # noqa: ANN001 - DeviceEvents
    """:func:`device_iterations` on the kernels of stream ``sid`` of ``dev``."""
    on = np.flatnonzero(stream == sid)[:MAX_LAUNCHES]  # ``dev`` is sorted by start: the stream's run order
    key = np.asarray(dev.name)[on].astype(np.int64)
    found = _period(key)
    if found is None:
        return None
    p, first, length = found
    if length / key.size < T("job.span_step_coverage"):
        return None
    reps = length // p
    grad_names = np.fromiter((devices.gradient_kernel_one(n) for n in dev.names), bool, len(dev.names))
    grad = grad_names[key[first:first + reps * p]].reshape(reps, p)
    if reps < 2 or reps == 2 and not _two_repeats_tile(key, p, first, length) or not grad.any(axis=1).all():
        return None  # a period a repeat of which runs no backward is no training iteration (a layer's, a forward's)
    start = np.asarray(dev.start, np.int64)
    end_before = np.maximum.accumulate(np.asarray(dev.end, np.int64))  # the GPU's work done by each event's start
    idle = np.empty(start.size, np.int64)
    idle[0] = 0
    idle[1:] = start[1:] - end_before[:-1]
    at = on[first:first + reps * p].reshape(reps, p)  # device index of each repeat's kernel at each place
    gaps = np.median(idle[at], axis=0)
    off = int(np.argmax(gaps))
    bounds = start[at[:, off]]
    # the last boundary's iteration ends at its own work's end where the periodic region holds it whole (its repeat's
    # kernels from the boundary on, all p of them): it ran in the capture, as every other did
    last = first + (reps - 1) * p + off
    if last + p <= first + length:
        bounds = np.r_[bounds, int(np.asarray(dev.end, np.int64)[on[last:last + p]].max())]
    if bounds.size < 3:
        return None
    word = next((devices.gradient_word(dev.names[int(k)]) for k in key[first:first + p][grad[0]]), "")
    label = dev.stream_names[sid] if sid < len(dev.stream_names) else str(sid)
    note = (f"the capture recorded the GPU's work and no launch: the kernel sequence of stream `{label}` repeats "
            f"every {p} kernels, {reps} times, each repeat running a backward" + (f" (`{word}`)" if word else "") +
            f"; each iteration starts at the kernel the GPU idled longest before ({ms(max(float(gaps[off]), 0.0) / 1e9)} "
            f"median) at the same place of every repeat, a cut iteration at the repeats' ends read apart")
    if reps == 2:  # one recurrence: its boundary is one pair of idles, not a median over many
        note += ("; only two repeats: each iteration's start is where the GPU idled longest in two iterations, "
                 "a guess a longer capture confirms")
    return SpanSteps(name=label, source="device_period", start=bounds[:-1].copy(), end=bounds[1:].copy(),
                     coverage=float(length / key.size), confidence="medium" if reps > 2 else "low", note=note)


def _region_steps(trace: Trace, launches: list[np.ndarray], key: np.ndarray, t_start: np.ndarray, t_end: np.ndarray,
                  p: int, first: int, length: int, host: Waits) -> SpanSteps | None:
    """The steps of the periodic region of ``length`` launches from ``first`` (period ``p``), or None where its
    repeats do not end as a step does (the host's wait, the calls of a layered model, the program's own loop)."""
    n = key.size
    gaps = np.diff(t_start)  # gaps[i]: before launch i + 1
    region_gaps = gaps[first:first + length - 1]
    waits = host.start  # the host's waits (a sync call's start, a poll's first query's), sorted
    best, offset = (-1.0, -1.0), 0
    waited_at, pause_at = np.zeros(p), np.zeros(p)
    for o in range(p):
        idx = np.arange(first + o, first + length, p)
        idx = idx[idx > first]
        if not idx.size:  # (a region of two repeats has one boundary: h37-randjobs6)
            continue
        lo, hi = t_start[idx - 1], t_start[idx]
        waited = float(np.mean(np.searchsorted(waits, hi) > np.searchsorted(waits, lo, side="right")))
        waited_at[o], pause_at[o] = waited, float(np.median(gaps[idx - 1]))
        score = (waited, pause_at[o])
        if score > best:
            best, offset = score, o
    own_at = _copies_own_waits(trace, launches, t_start, p, first, length, host)
    reads = _read_points(waited_at, own_at)
    opens = _opens_at_wait(waited_at)  # asked once: the reads' boundary and the host-bound one's alike
    if reads and opens:  # the loop's first call begins where its launches begin repeating
        best, offset = (float(waited_at[0]), float(pause_at[0])), 0
    waited, pause = best
    # the typical gap between launches inside a step: the boundaries' own pauses left out, which in a short
    # period (two kernels a step) are half the gaps and would make their median a pause
    inner = np.ones(region_gaps.size, dtype=bool)
    bounds = np.arange(offset - 1, region_gaps.size, p)  # region_gaps[i] lies before launch first + i + 1
    inner[bounds[bounds >= 0]] = False
    typical = float(np.median(region_gaps[inner] if inner.any() else region_gaps)) if region_gaps.size else 0.0
    paused = pause >= T("job.period_boundary_gap") * max(typical, 1.0)
    blocked = 0.0 if paused else _blocked_share(trace, t_start[first:first + length][:-1][inner],
                                                  t_start[first:first + length][1:][inner])
    # where the host sits blocked through the gaps inside the period (every launch a blocking copy), the gaps are the
    # transfers' times and no pause can stand out: the loop's one wait per period, at its boundary alone, marks it
    only_here = float(np.delete(waited_at, offset).max(initial=0.0)) <= 1.0 - _WAITED
    alone = blocked >= _BLOCKED and only_here
    # a host slower than its GPU finds each call's work done when it reads the result: the sync returns at once and
    # the boundary's pause is only the loop's own turn, no multiple of a launch's gap -- there the one wait per
    # period, at the boundary that pauses longest, marks it (h37-tinyiter)
    # (``only_here`` with ``opens`` puts the boundary at offset 0: a wait before most repeats' first launch anywhere
    # else would be a second wait in the period)
    hostbound = not paused and only_here and (_turns_longest(pause_at, offset) or opens)
    # a loop that reads back at a few fixed points of each call: its boundary, one of them, pauses longer than any
    # launch without a read (h37-twosync); the host slower than its GPU, or the boundary the one where the launches
    # begin repeating (:func:`_reads_bound_calls`)
    several = (not paused and reads and
               (opens or float(pause_at[offset]) > float(pause_at[waited_at < _WAITED].max(initial=0.0))) and
               _reads_bound_calls(trace, t_start, waited_at, first, length, p, opens))
    layered = _calls_of_layers(key, first, length, p)
    marked = waited >= _WAITED and (paused or alone or hostbound or several)
    if not marked and not layered:  # the host waits every few repeats, at one offset: those repeats are one iteration
        q = _wait_period(t_start, waits, p, first, length)
        steps = _region_steps(trace, launches, key, t_start, t_end, q, first, length, host) if q else None
        if steps is not None and steps.waited:
            return steps
    own = not marked and not layered and _own_loop(trace, launches, key, first, length, p, t_start)
    fed = None if (marked or layered or own) else _fed_calls(trace, launches, key, first, length, p, t_start)
    read = None if (marked or layered or own or fed is not None) else \
        _read_backs(trace, launches, key, first, length, p, t_start, t_end, host)
    if not (marked or layered or own or fed is not None or read is not None):
        return None
    if fed is not None:  # each repeat starts where its input is uploaded
        offset = fed
    if read is not None:  # each repeat ends with its read-back: the next starts at the launch after it
        offset = read.offset
    # a loop whose iterations alternate their launch order (a directionally split solver sweeps x then y, then y then
    # x) repeats its sequence only every few iterations; the host's wait ends each of them alike
    alike = _iterations_per_period(p, offset, waited_at, pause_at, typical, key[first:first + p]) if marked and paused else 1
    # an own loop waits nowhere: its host's boundary pause alone ends each iteration, of whatever length
    cuts = _own_cuts(p, offset, pause_at, typical, key[first:first + p]) if own and paused else np.arange(0, p, p // alike)
    whole, p = p, int(np.diff(np.r_[cuts, p]).max())
    alike = cuts.size
    # every boundary in the region starts an iteration: the last one too, though fewer than a period of launches may
    # follow it (a boundary inside the iteration leaves the last iteration's rest after it, its head before the first)
    starts = _cut_starts(first, length, offset, whole, cuts)
    tail = first + length - int(starts[-1]) if starts.size else 0
    if starts.size:  # the last iteration's own launch count, which in an own loop's uneven iterations is its own
        at = (int(starts[-1]) - first - offset) % whole
        p = int(np.diff(np.r_[cuts, whole])[np.searchsorted(cuts, at)])
    floor = _boundary_floor(typical, pause_at, offset)
    body = np.intersect1d(key[first:first + p], _kernel_names(trace))  # the kernels a repeat runs
    runs_on = _runs_on(key, t_start, waits, first + length, floor, body)
    if not (marked or layered) and _runs_on(key[::-1], -t_start[::-1], -waits[::-1], n - first, floor, body):
        return None  # the repeats are all the evidence, and the iteration before them runs other launches than theirs
    partial = tail < p or runs_on
    if starts.size - partial < 2:
        return None
    start = t_start[starts]
    end = np.r_[start[1:], t_end[first + length - 1]]
    coverage = (first + length - int(starts[0])) / n
    why = (f"{ms(pause / 1e9)} typical pause, against {ms(typical / 1e9)} between launches" if paused else
           f"a sync at each boundary and nowhere else in the period, the host blocked in copies through "
           f"{pct(blocked, 0)} of the gaps between its launches, so that no pause can stand out" if alone else
           _reads_words(waited_at, own_at, pause, typical, opens) if several else
           _hostbound_words(pause, typical, _turns_longest(pause_at, offset)))
    each = (f"each after the host waited for the GPU ({why})" if marked else
            f"each a run of {layered} repeated layers between the call's own first and last kernels (a model's calls, "
            f"launched back to back)" if layered else
            "each launched by the program's own calls, no framework op around them, and no other kernel in the "
            "window: the iterations of its loop" if own else
            "each fed by its own upload from the host (a host-to-device copy at the same point of every repeat) and "
            "no other kernel in the window: a loop's calls on new inputs, "
            + ("each reading its result back (a device-to-host copy every repeat)"
               if _reads_back(trace, launches, key[first:first + p]) else "launched without reading a result back")
            if fed is not None else read.words)
    what = (f"{starts.size} repeats of the same {_launch_words(trace, launches, key[first:first + p])}" if alike == 1 else
            f"{starts.size} iterations of {_sizes_words(cuts, whole)} kernels, their launch order alternating (the "
            f"same {whole}-kernel sequence repeats every {alike} iterations)")
    note = (f"the GPU work's own period: {what} ({pct(coverage, 0)} of the launches), {each}; no step markers or "
            f"step spans in the capture")
    cut = (_runs_on_words(p) if runs_on else
           _partial_words(tail, f"the period's {p}", "the last boundary where the launches stop repeating", partial))
    return _launch_steps(f"{p}-launch period", start, end, coverage, "medium", note, cut, marked or read is not None)


def _runs_on(key: np.ndarray, t_start: np.ndarray, waits: np.ndarray, at: int, floor: float,
             period: np.ndarray) -> bool:
    """Whether the iteration the periodic region ends in runs on past it: the launch ``at`` (the first after the
    region; ``key`` / ``t_start`` the launch sequence, ``waits`` the host's waits' starts, all sorted) is of a kernel
    the period launches (``period``: the kernels one repeat runs; copies are a loop's inputs and results) and follows
    the region's last launch with no boundary between -- no wait of the host's, and a gap shorter than ``floor`` (the
    pause a boundary of the period makes).  Read
    backwards (keys, negated times and waits reversed, ``at`` counted from the end) it asks the region's first launch.

    Why: a period must tile the launches it claims -- its repeats cover the loop but for the window's cut ends.  A cut
    end matches the repeat a period away, so it lies inside the region; the launch just outside does not, and where it
    carries on the same iteration's work, that iteration runs other launches than the period's: a native loop whose
    iterations launch a GEMM and 2, 3, then 4 elementwise kernels repeats ``GEMM + 3`` once, its last iteration's first
    four launches matching the one before -- read as "2 repeats of the same 4-kernel sequence", one kept step of three
    iterations (h37-probe47s)."""
    if at <= 0 or at >= key.size or not np.isin(key[at], period):
        return False
    lo, hi = t_start[at - 1], t_start[at]
    waited = int(np.searchsorted(waits, hi)) > int(np.searchsorted(waits, lo, side="right"))
    return not waited and float(hi - lo) < floor


def _runs_on_words(p: int) -> str:
    """The last repeat's drop reason where its iteration runs on past the period (:func:`_runs_on`)."""
    return (f"partial: its iteration runs on past the period's {p} launches, with no boundary before the next launch "
            f"of the period's kernels: the loop's last iteration launches other work than the repeats")


def _launch_words(trace: Trace, launches: list[np.ndarray], repeat: np.ndarray) -> str:
    """``6-kernel launch sequence`` where one repeat (``repeat``: its launches' name ids on the busiest GPU) launches
    kernels only; ``launch sequence of 1 kernel and 1 copy`` where it also launches copies or fills.

    Why: the period is read from every event the host launched on the GPU, copies and fills too, so a loop that uploads
    its input and runs one kernel repeats a sequence of two launches, one of them no kernel: "the same 2-kernel launch
    sequence" said a copy was a kernel (gpu-mode's lecture-1 loop `torch.square(torch.randn(n, n).cuda())`, survey
    h37-survey73)."""
    dev = _busiest(trace, launches, 1)
    if dev is None or not repeat.size:
        return f"{repeat.size}-kernel launch sequence"
    names = np.asarray(dev.name).astype(np.int64)
    ids, at = np.unique(names, return_index=True)
    kind = np.asarray(dev.kind)[at[np.minimum(np.searchsorted(ids, repeat), ids.size - 1)]]
    kernels = int(((kind == devices.KIND_KERNEL) | (kind == devices.KIND_COLLECTIVE)).sum())
    if kernels == repeat.size:
        return f"{repeat.size}-kernel launch sequence"
    fills = int((kind == devices.KIND_MEMSET).sum())
    copies = repeat.size - kernels - fills
    parts = [plural(kernels, "kernel"), plural(copies, "copy", "copies"), plural(fills, "fill")]
    said = [w for w, k in zip(parts, (kernels, copies, fills)) if k]
    return f"launch sequence of {', '.join(said[:-1])} and {said[-1]}" if len(said) > 1 else \
        f"launch sequence of {said[0]}"


def _waited_runs(trace: Trace, launches: list[np.ndarray], key: np.ndarray, t_start: np.ndarray, t_end: np.ndarray,
                 waits: Waits) -> SpanSteps | None:
    """The iterations of a loop too short for a period (:func:`_period`), read from the host's waits for the GPU: of
    one kernel launched over and over (:func:`_one_kernel_runs`), else of one launch sequence launched alike between
    every two waits (:func:`_alike_runs`); None where neither reads."""
    one = _one_kernel_runs(trace, launches, key, t_start, t_end, waits)
    return one if one is not None else _alike_runs(trace, launches, key, t_start, t_end, waits)


def _waited_end(ws: np.ndarray, we: np.ndarray, t_start: np.ndarray, t_end: np.ndarray, hi: int) -> int:
    """Where the last iteration, its launches ending at launch ``hi`` (exclusive), ends: its last launch's return, or
    the return of the host's wait after it where that wait comes before the next launch (its work done)."""
    end = int(t_end[hi - 1])
    after = int(np.searchsorted(ws, t_start[hi - 1], side="right"))
    if after < ws.size and (hi == t_start.size or ws[after] < t_start[hi]):
        end = max(end, int(we[after]))
    return end


def _one_kernel_runs(trace: Trace, launches: list[np.ndarray], key: np.ndarray, t_start: np.ndarray,
                     t_end: np.ndarray, waits: Waits) -> SpanSteps | None:
    """The iterations of a loop that launches one kernel over and over, the host waiting for the GPU after each
    iteration's launches: the runs of launches between its waits, where they are all alike; None else.

    Why: the launch sequence alone has no period to read there (:func:`_period` reads none from one kernel repeated:
    a layer's kernel and a loop's look alike), so a benchmark timing one GEMM with a sync after each call, or a native
    loop launching one kernel a few times then ``hipDeviceSynchronize``, read as one pass of the whole window
    (h37-randjobs5: 9 rocprof/rocpd loops of 3-15 iterations, 0 steps).  Only the host's waits tell its iterations
    (a model's layers never wait for each other), so: one run of one kernel holding most launches
    (``job.span_step_coverage``), the host waiting inside it, and the runs between its waits all of one length --
    every one between two waits (at least :data:`_WAITED` of them where there are several), those at the run's edges
    no longer (a window may cut them).  The steps are the whole runs between waits and a last one cut by the window,
    at low confidence: the waits alone mark them, and they must hold most of the GPU's time too (a program's one
    20 s GEMM before 8 synced bursts of 4 small kernels is one pass, not 8 steps of 8 us).  Two iterations are two steps where the one wait splits the run
    in halves; one wait anywhere else, or none, is no reading."""
    n = key.size
    if n < 2:
        return None
    edges = np.flatnonzero(np.diff(key)) + 1
    lo_all, hi_all = np.r_[0, edges], np.r_[edges, n]
    k = int(np.argmax(hi_all - lo_all))
    lo, hi = int(lo_all[k]), int(hi_all[k])
    if hi - lo < 2 or (hi - lo) / n < T("job.span_step_coverage"):
        return None
    cut = _sync_cuts(waits, t_start, lo, hi)
    if not cut.size:
        return None
    sizes = np.diff(np.r_[lo, cut, hi])
    inner = sizes[1:-1]
    if inner.size:
        q = int(np.median(inner))
        if float(np.mean(inner == q)) < _WAITED:
            return None
    elif sizes[0] == sizes[1]:
        q = int(sizes[0])
    else:
        return None
    if sizes[0] > q or sizes[-1] > q:
        return None
    starts = cut if sizes[0] < q else np.r_[lo, cut]
    each = f"{plural(q, 'launch', 'launches')} of one kernel"
    why = "the launches alone repeat no longer sequence"
    return _runs_steps(trace, launches, t_start, t_end, starts, hi, q, int(sizes[-1]), each, why, waits)


def _sync_cuts(waits: Waits, t_start: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """The launches of ``[lo + 1, hi)`` (indices of the launch sequence whose calls start at ``t_start``, ps) before
    which the host waited for the GPU: a wait (a sync, a poll) lies between the launch before and each."""
    ws = waits.start
    idx = np.arange(lo + 1, hi)
    return idx[np.searchsorted(ws, t_start[idx]) > np.searchsorted(ws, t_start[idx - 1], side="right")]


def _runs_steps(trace: Trace, launches: list[np.ndarray], t_start: np.ndarray, t_end: np.ndarray, starts: np.ndarray,
                hi: int, q: int, last: int, each: str, why: str, waits: Waits, set_up: str = "") -> SpanSteps | None:
    """The steps of runs between the host's waits (:func:`_one_kernel_runs`, :func:`_alike_runs`): one from each of
    ``starts`` (launch indices) to the next, the last to launch ``hi``'s (exclusive) end -- partial where it holds
    ``last`` launches, fewer than a run's ``q`` -- where two whole runs or more are found and they hold most of the
    GPU's kernel time; ``each`` says a run in words, ``why`` why the waits alone mark them, ``set_up`` what was left
    out before them."""
    n = t_start.size
    partial = last < q
    if starts.size - partial < 2:
        return None
    ws, we = waits.start, waits.end
    start = t_start[starts]
    # the last iteration ends where the host's wait after its launches returns (its work done), not at its last launch
    end = np.r_[start[1:], _waited_end(ws, we, t_start, t_end, hi)]
    coverage = (hi - int(starts[0])) / n
    if _time_share(trace, launches, int(starts[0]), hi) < T("job.span_step_coverage"):
        return None  # most of the GPU's time lies outside the runs (a program's one long GEMM before a small loop)
    note = (f"the host's waits for the GPU: {starts.size} runs of {each} ({pct(coverage, 0)} of the launches), "
            f"each ended by a sync and no other wait between its launches; {why}, so only the waits mark the "
            f"iterations{set_up}; no step markers or step spans in the capture")
    tail = _partial_words(last, f"the runs' {q}", "the last wait", partial)
    return _launch_steps(f"{q}-launch run between waits", start, end, coverage, "low", note, tail, True)


def _alike_runs(trace: Trace, launches: list[np.ndarray], key: np.ndarray, t_start: np.ndarray, t_end: np.ndarray,
                waits: Waits) -> SpanSteps | None:
    """The iterations of a short loop whose every iteration launches one sequence -- its batch's upload, then its
    kernels -- the host waiting for the GPU after each: the runs of launches between the host's waits, where every
    run between two waits launches the same sequence (its launches' names, in order); None else.

    The first run may hold the program's set-up before its first iteration's sequence (a model's weights uploaded
    once, then the loop), or the end of an iteration the window cut; the last run may hold the start of one it cut
    (a partial iteration), or the program's work after its loop (a read-back of its results after the last wait):
    neither is an iteration.  The steps are the sequences from the first whole one on, at low confidence (the waits
    alone mark them), at least :data:`_ALIKE_LEAST` whole, holding most of the launches and of the GPU's kernel time
    (``job.span_step_coverage``).

    Why: :func:`_period` reads a period from 8 launches or more, and :func:`_one_kernel_runs` only a loop of one
    kernel; a native loop of three iterations, each a ``hipMemcpy`` of its batch and a GEMM, then
    ``hipDeviceSynchronize``, after a 64 MiB upload of its weights, launches 7 -- and its bursts, 0.8 ms apart, are
    too close for the GPU's idle to cut: the window read as one pass, "nor repeating GPU activity" (h37-probe45m,
    randjobs ``--forms5`` seed 92463); a loop of 2 calls of a small model, each ending in ``.tolist()`` and
    ``.item()`` (6 launches), likewise (h37-probe45w, ``--forms13`` seed 98767).  The host's waits cut it exactly as
    they cut one kernel's loop -- a model's layers never wait for each other.  Where the program's one range holds one
    run of them, that run is the pass a benchmark times after its warm-ups (``steps.framed._framed_pass``), not a
    loop's iteration: no reading here."""
    n = key.size
    cut = _sync_cuts(waits, t_start, 0, n)
    if cut.size + 1 < _ALIKE_LEAST:
        return None
    bounds = np.r_[0, cut, n]
    runs = [tuple(key[a:b].tolist()) for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]
    unit, q = runs[1], len(runs[1])
    if any(r != unit for r in runs[1:-1]):
        return None
    first, last = runs[0], runs[-1]
    starts = list(bounds[1:-2].tolist())  # each run between two waits; the first and the last read below
    before = int(bounds[1]) - q if first[-q:] == unit and len(first) >= q else None  # the set-up's launches before it
    if before is not None:
        starts.insert(0, before)
    if last[:q] == unit:  # a whole iteration, then what the program launched after its loop
        starts.append(int(bounds[-2]))
        hi, partial = int(bounds[-2]) + q, False
    elif last == unit[:len(last)]:  # the window cut the last iteration
        starts.append(int(bounds[-2]))
        hi, partial = n, True
    else:  # the program's own work after the loop's last wait
        hi, partial = int(bounds[-2]), False
    starts = [s for s in starts if s < hi]
    if len(starts) - partial < (_ALIKE_LEAST if not before else _ALIKE_AFTER_SET_UP):
        return None  # two calls after set-up may be its warm-up call and its timed one, a pause between: no loop read
    if (hi - starts[0]) / n < T("job.span_step_coverage"):
        return None  # most of the launches lie outside the runs: no loop's iterations
    at = np.asarray(starts, np.int64)
    framed = frame(trace, t_start[at], least=1)
    if framed is not None and framed.end - framed.first == 1:
        return None  # the program's one range around one run: the pass a benchmark times after its warm-ups (framed)
    set_up = (f"; the {plural(int(before), 'launch', 'launches')} before the first, the program's set-up, left out"
              if before else "")
    return _runs_steps(trace, launches, t_start, t_end, at, hi, q, n - int(at[-1]) if partial else q,
                       f"the same {_launch_words(trace, launches, np.asarray(unit, np.int64))}",
                       "too few launches to read a period from", waits, set_up)


def _reads_words(waited_at: np.ndarray, own_at: np.ndarray, pause: float, typical: float, opens: bool) -> str:
    """The note's words for a period read from its reads (:func:`_read_points`): how many syncs, how many of them
    copies' own waits (``own_at``, :func:`_copies_own_waits`), and what marks the boundary among them -- its pause
    where it is longer than the typical gap between launches (ps), else where the repeats open (``opens``), else its
    pause against the launches without a read.

    Why: the boundary chosen where the repeats open needs no pause, and a note saying the host paused longer there
    than between launches, beside two numbers saying the reverse, contradicted itself (h37-copysync: seed 6141's
    102 us at the boundary against 139 us between launches)."""
    synced = waited_at >= _WAITED
    own = int((synced & (own_at >= _WAITED)).sum())
    copies = ("" if not own else " (one of them a copy's own wait for its transfer)" if own == 1 else
              f" ({own} of them the copies' own waits for their transfers)")
    at = f"{ms(pause / 1e9)} at the boundary, {ms(typical / 1e9)} between launches"
    where = (f"the host pauses there ({ms(pause / 1e9)} at the boundary) longer than between launches "
             f"({ms(typical / 1e9)})" if pause > typical else
             f"the launches begin repeating at one of them, the loop's first call starting after its read ({at})"
             if opens else f"the host pauses at the boundary longer than at any launch without a read ({at})")
    return (f"{int(synced.sum())} syncs at the same points of every repeat and at no other{copies}: the reads a call "
            f"makes repeat with it, and {where}")


def _hostbound_words(pause: float, typical: float, longest: bool) -> str:
    """The note's words for a period whose one wait per repeat marks its boundary, the host slower than its GPU:
    there the period's longest pause (``longest``, :func:`_turns_longest`), else where the repeats open
    (:func:`_opens_at_wait`) -- pause and typical gap between launches in ps.

    Why: a boundary read where the repeats open is no longest pause (h37-usercopies13's seed 21671: 47 us there, 120 us
    between launches); the note says what marked it (h37-copysync)."""
    at = f"{ms(pause / 1e9)} against {ms(typical / 1e9)} between launches"
    where = (f"and there the period's longest pause ({at})" if longest else
             f"where the launches begin repeating, the loop's first call starting after its read ({at})")
    return (f"a sync at each boundary and nowhere else in the period, {where}: the host is slower than the GPU, so "
            f"each sync finds the work done and the pause is the loop's own turn")


def _partial_words(n: int, of: str, after: str, partial: bool) -> str:
    """A launch-read loop's last iteration the window cut, in words ("" where it is whole): one sentence for every
    reading from the launches, so the steps' ``dropped`` reasons read alike whichever boundary cut it."""
    if not partial:
        return ""
    return (f"partial: its last {plural(n, 'launch', 'launches')} of {of}, after {after}: the rest of the loop's last "
            f"iteration")


def _launch_steps(name: str, start: np.ndarray, end: np.ndarray, coverage: float, confidence: str, note: str,
                  partial_last: str, waited: bool) -> SpanSteps:
    """The steps a reading of the launches alone gives (source ``repeated_launches``), their bounds as int64."""
    return SpanSteps(name=name, source="repeated_launches", start=start.astype(np.int64), end=end.astype(np.int64),
                     coverage=coverage, confidence=confidence, note=note, partial_last=partial_last, waited=waited)


def _turns_longest(pause_at: np.ndarray, offset: int) -> bool:
    """Whether the host's typical pause at the boundary ``offset`` is longer than at every other offset of the period.

    Why: where the host outruns nothing (it is slower than its GPU), the wait at a loop's boundary costs the sync's
    own call and the loop's turn -- a few launches' worth, not ``job.period_boundary_gap`` times one -- yet still
    more than any gap between two launches of one call, which holds no sync and no turn of the loop."""
    others = np.delete(pause_at, offset)
    return bool(others.size) and float(pause_at[offset]) > float(others.max())


def _opens_at_wait(waited_at: np.ndarray) -> bool:
    """Whether the periodic region opens at a wait: the host waited for the GPU before the first launch of most
    repeats (``waited_at[0]``, the share of offset 0's instances with a sync), so the loop's first call begins where
    its launches begin repeating, after its read.  One test for both readings that take that wait for the boundary:
    a host-bound loop's one wait per period (``only_here``) and a loop's several reads (:func:`_read_points`).

    Why: where the host is slower than its GPU, :func:`_turns_longest` asks the boundary to pause longer than any gap
    inside a call -- but a call whose Python between ops outlasts the loop's turn, or whose pageable upload blocks the
    host inside the copy call, holds longer gaps than the turn: 9 calls of 2 layers, 106 us of Python after each op,
    their one ``.item()`` each followed by a 3.5 us turn, two ``non_blocking`` pageable uploads before it, read as one
    5.3 ms pass (h37-usercopies13, ``--forms13`` walk seed 21671).  The read's position needs no pause to say it where
    the repeats open there.  Asked once (h37-opens2): the reads' reading asked it inline as well, the same test
    twice."""
    return waited_at.size > 0 and float(waited_at[0]) >= _WAITED


def _read_points(waited_at: np.ndarray, own_at: np.ndarray) -> bool:
    """Whether the host waits for the GPU at a few fixed offsets of the period (``waited_at``: the share of each
    offset's instances with a sync) -- two or more, each at most of its instances, no more than half the offsets (not
    counting, where some read remains, those whose waits are copies' own, ``own_at``: :func:`_copies_own_waits`), the
    others at few: one iteration that reads back more than once.

    Why: a loop's call may read a value back mid-call (a router's counts, a ``.item()`` on a norm) as well as its
    result at its end.  Where the host is no slower at the boundary than at that read (its Python turn short), no
    pause stands out against the launches' gaps, and the reading that asked for one wait per period (the boundary's
    alone) read no step: a loop of 12 such calls was one pass (h37-twosync).  The waits still repeat with the launch
    sequence, at the same points of every repeat: the pattern of syncs and launches is the iteration's.  Which of the
    reads is the boundary the pauses cannot always say (a GPU-bound loop waits longest where more work was queued):
    the loop's first call begins where its launches begin repeating, so the region's own start is the boundary where
    the host waited there; else the read after which it pauses longest, longer than at any launch without one.  Where
    the host waits after most launches, the waits are every launch's (a blocking copy's), no call's reads -- but a
    wait that is a copy's own (the host blocked until the transfer it just launched ended) is no read of the call's,
    and counts for no offset: a call of 2 kernels, ``.tolist()``, ``torch.tensor(pylist, device="cuda")``, a pageable
    upload, then ``.item()`` waits at 3 of its 5 launches, two of them its copies' own, and was one pass
    (h37-copysync, ``--forms13`` walk seed 6141).  Where every wait is a copy's own, nothing tells a read from a copy:
    the count is theirs."""
    synced = waited_at >= _WAITED
    reads = synced & (own_at < _WAITED)
    held = int(reads.sum()) if reads.any() else int(synced.sum())
    return 2 <= int(synced.sum()) and held <= synced.size // 2 and \
        float(waited_at[~synced].max(initial=0.0)) <= 1.0 - _WAITED


def _copies_own_waits(trace: Trace, launches: list[np.ndarray], t_start: np.ndarray, p: int, first: int,
                      length: int, waits: Waits) -> np.ndarray:
    """Per offset of the period (``p`` launches, the region of ``length`` from ``first``), the share of its instances
    where every sync between the launch before it and that launch is the earlier launch's copy's own wait
    (:func:`_own_waits`), and there is one: the host waited there only for a transfer it had just launched.

    Why: such a wait is the copy's, made where the copy is, whatever the call does with the bytes; a read that ends a
    call waits on the work queued before it -- or, where the host is slower than its GPU, finds it done, after a copy
    that ended first (a pageable upload blocking inside its own call) -- and is the call's.  A gap that holds a
    copy's own wait and then another sync (a loop's ``.tolist()`` then its ``.item()`` at the end of each call) holds
    a read of the call's: counted the copy's, every wait of the period was a copy's own, and 18 calls read as one
    pass (h37-probe45w, ``--forms13`` walk seed 97237)."""
    own = np.zeros(p)
    d = _busiest(trace, launches)
    if d is None:
        return own
    rec, idx = _launched(trace, launches, d)
    if idx.size != t_start.size or length < 2:
        return own
    sync, ss, se = waits.idx, waits.start, waits.end
    inside = (ss > t_start[first]) & (ss < t_start[first + length - 1])
    sync, ss, se = sync[inside], ss[inside], se[inside]
    gap = np.searchsorted(t_start, ss) - 1  # each wait's gap: after launch ``gap``, before the next launch
    at = t_start[gap + 1] > ss
    sync, ss, se, gap = sync[at], ss[at], se[at], gap[at]
    if not sync.size:
        return own
    mine = _own_waits(trace, rec[idx], np.asarray(d.kind)[idx], np.asarray(d.end, np.int64)[idx], (sync, ss, se), gap,
                      _clock_slack(trace, rec, d)[1])
    per_gap = np.bincount(gap, minlength=t_start.size)
    owned = (per_gap > 0) & (np.bincount(gap, weights=mine, minlength=t_start.size) == per_gap)
    for o in range(p):
        i = np.arange(first + o, first + length, p)
        i = i[i > first]
        if i.size:
            own[o] = float(np.mean(owned[i - 1]))
    return own


def _own_waits(trace: Trace, calls: np.ndarray, kind: np.ndarray, work_end: np.ndarray,
               waited: tuple[np.ndarray, np.ndarray, np.ndarray], gap: np.ndarray, late: int) -> np.ndarray:
    """Per wait (``waited``: host indices -- the sync call, a poll's query that said done -- starts and ends, each after the launch ``gap`` of the sequence whose launch calls, kinds and
    work's ends are ``calls``, ``kind``, ``work_end``): whether it is that launch's copy's own wait -- the launch is a
    copy (not a kernel), and the framework op that launched it made the sync too (``aten::copy_``'s
    ``cudaStreamSynchronize`` after its ``cudaMemcpyAsync``: ``torch.tensor(pylist, device="cuda")``, ``.tolist()``),
    or the sync starts before the copy ends and returns no earlier than its end (the host blocked until its own
    transfer ended; the GPU's clock perhaps reading ``late``, ps: :func:`_clock_slack`).

    Why the op: a copy of a few bytes ends before its own op's sync starts (the host slower than the transfer), so the
    sync's times alone read it as the call's read -- an upload of 170 B then its sync was one of three "reads" a call
    made (h37-probe45w, seed 97237).  The times remain for what records no op (a native ``cudaMemcpy`` loop)."""
    copy = (kind[gap] != devices.KIND_KERNEL) & (kind[gap] != devices.KIND_COLLECTIVE)
    sync, ss, se = waited
    mine = copy & (ss < work_end[gap]) & _returned_after(se, work_end[gap], late)
    ask = np.flatnonzero(copy & ~mine)  # the ops asked only where the times leave it open
    op_sync, op_call = _ops_around(trace, sync[ask]), _ops_around(trace, calls[gap[ask]])
    mine[ask] = (op_sync >= 0) & (op_sync == op_call)
    return mine


def _ops_around(trace: Trace, at: np.ndarray) -> np.ndarray:
    """Per host event of ``at`` (indices): the innermost framework op around its start on its own thread (a host event
    neither a runtime or library call nor a range of the program's own, as :func:`_op_share` reads one), -1 none."""
    h = trace.h
    out = np.full(at.shape, -1, np.int64)
    if not at.size:
        return out
    own = np.zeros(len(h.names), dtype=bool)
    own[np.unique(h.name[user_ranges.marked_ranges(trace.ranges)])] = True
    op = lookup_mask(~(h.per_name(_runtime_or_library) | own), h.name)
    for line in np.unique(h.line[at]):
        ops = np.flatnonzero(op & (h.line == line))
        if not ops.size:
            continue
        here = np.flatnonzero(h.line[at] == line)
        inner = innermost(h.start[ops].astype(np.int64, copy=False), h.end[ops].astype(np.int64, copy=False),
                          h.start[at[here]].astype(np.int64, copy=False))
        out[here] = np.where(inner >= 0, ops[np.maximum(inner, 0)], -1)
    return out


def _reads_find_work_done(trace: Trace, t_start: np.ndarray, waited_at: np.ndarray, first: int, length: int,
                          p: int) -> bool:
    """Whether the host spends most of the gaps at the period's read points (``waited_at`` >= :data:`_WAITED`) in its
    own work, not blocked in the syncs: each read finds the GPU's work done, as a host slower than its GPU's does.

    Why: there the pauses are the loop's own turns, alike at every read, and no pause stands out -- the case the reads'
    pattern is read for.  Where the syncs hold most of those gaps, the host waits on long GPU work and its pauses say
    where it waited, not where a loop turns: a one-shot program run three times (a set-up kernel, the host's 40 ms, a
    110 ms run, each synced, its copies around them: ``synthetic.nsysexport.write_phased_pass``) turns between its
    copies, where no sync is, and is read by its bursts."""
    at = np.flatnonzero(waited_at >= _WAITED)
    idx = (first + at[:, None] + p * np.arange(1, length // p + 1)[None, :]).ravel()
    idx = idx[idx < first + length]
    return bool(idx.size) and _blocked_share(trace, t_start[idx - 1], t_start[idx]) < _READ_BLOCKED


def _reads_bound_calls(trace: Trace, t_start: np.ndarray, waited_at: np.ndarray, first: int, length: int, p: int,
                       opens: bool) -> bool:
    """Whether a period's reads (``waited_at``: a few fixed offsets, :func:`_read_points`) end the calls of a loop:
    each finds the work done (:func:`_reads_find_work_done`), or the periodic region opens at one of them (``opens``:
    the host waited before the first launch of every repeat), so the boundary is where the launches begin repeating.

    Why: the reads' pauses pick the boundary only where the host is slower than its GPU; where the GPU is slower, each
    read waits on the work queued before it, and the syncs hold the gaps -- as a one-shot program run three times
    waits on its long phases, turning between its copies, where no sync is.  A GPU-bound loop whose calls read back
    several times (``torch.tensor(list, device="cuda")``, ``.tolist()``, ``.item()`` after each forward) waits the
    same way, yet its repeats open at a read: the wait before each call's first launch is the loop's own, and the
    boundary needs no pause to say it (h37-randjobs13's seed 430: 9 calls with four reads each, one pass read).  The
    one-shot program's repeats open at its upload, after no sync."""
    return opens or _reads_find_work_done(trace, t_start, waited_at, first, length, p)


def _wait_period(t_start: np.ndarray, waits: np.ndarray, p: int, first: int, length: int) -> int:
    """The number of launches between the host's waits for the GPU (``waits``: sync calls' starts) inside the periodic
    region of ``length`` launches from ``first``, where it is a multiple of the period ``p`` at least twice over and
    most waits are that far apart; 0 else.

    Why: the shortest repeat of the launch sequence is no iteration where the host reads the GPU's results only every
    few repeats: a native loop launching the same layer's kernels four times, then ``hipDeviceSynchronize``, repeats
    every 2 kernels and waits every 8 (h37-randjobs5, a rocpd capture of 8 such iterations: read as 32 "iterations"
    of 0.13 ms of the program's own loop, the waits ignored).  A model's layers never wait for each other; a loop's
    iterations do, at one offset each time -- the reading :func:`_region_steps` makes of that multiple.  One wait is
    two iterations where it splits the region in two halves of several repeats each (h37-randjobs6: a rocprof loop of
    2 iterations of 12 launches, the same 4 kernels three times each, read as 6 "iterations" of the program's own
    loop, though the host waited only once, halfway)."""
    if not waits.size:
        return 0
    idx = np.arange(first + 1, first + length)
    hit = np.searchsorted(waits, t_start[idx]) > np.searchsorted(waits, t_start[idx - 1], side="right")
    w = idx[hit]
    if w.size == 1:  # one wait: two iterations where it splits the region in halves, each several repeats
        q = length // 2
        return q if length % 2 == 0 and int(w[0]) == first + q and q > p and q % p == 0 else 0
    if w.size < 2:
        return 0
    d = np.diff(w)
    q = int(np.median(d))
    ok = q > p and q % p == 0 and length >= 2 * q and float(np.mean(d == q)) >= _WAITED
    return q if ok else 0


def _frame(trace: Trace, t_start: np.ndarray, p: int, first: int, length: int, gpu: int
           ) -> tuple[int, int, str, int] | None:
    """(first launch, end launch, name, the range's end ps) of the periodic region's launches (those of GPU ``gpu``'s process) inside the
    job's frame (:func:`job.frame.frame`; that process's ranges, :func:`job.frame.process_times`) holding at least two
    repeats of it but not all.

    Why: ``resnet50_inference`` around 5 passes, each ended by a sync, after warm-up passes of the same kernels
    launched back to back and synchronized once.  Over the whole region the host waits at only some boundaries, so no
    step is read; inside the frame every repeat ends in the host's wait.  Where the whole region reads as steps too
    (fewer warm-ups: the waits at most boundaries), the frame still says which repeats the program times, and the
    warm-ups would be steps of their own.  A range around one repeat each is read before this (the repeated span)."""
    times = t_start[first:first + length]
    found = frame(trace, times, 2 * p, own=process_times(trace, times, gpu))
    return None if found is None else (first + found.first, first + found.end, found.name, found.end_ps)


def _iterations_per_period(p: int, offset: int, waited_at: np.ndarray, pause_at: np.ndarray, typical: float,
                           period: np.ndarray, own: bool = False) -> int:
    """How many iterations one period of ``p`` launches holds, where the host ended each alike: the most ``m`` dividing
    ``p`` for which every ``p / m``-th offset from the boundary ``offset`` is one too -- the host waited for the GPU at
    most of its instances and paused as a boundary does (``job.period_boundary_gap`` times the ``typical`` gap between
    launches, and at least half the boundary's own pause).  Why: a loop reads each iteration's result before the next
    (CloverLeaf's time-step control), so every such wait ends one; the sequence itself may repeat only every few
    iterations (an x-then-y sweep, then y-then-x), and taking the sequence's period for the step made each "step" two
    of the program's iterations.  1 where only the boundary is such an offset.

    The parts must run the same kernels (``period``: one repeat's launch keys), whatever their order: iterations of
    one loop do the same work, where a call that reads a value back halfway (a router's counts) runs other kernels
    before the read than after it -- its halves are no iterations (h37-twosync).

    In the program's own loop (``own``: :func:`_own_loop`, no sync anywhere) the boundary itself is marked by no wait,
    only by the host's pause there (its untraced code between iterations, the GPU idle through it); a pause alike at
    an offset inside the period ends an iteration as surely, so there the pause alone counts.  Why: a queued loop whose
    iterations alternate (a GEMM and 2 kernels, then a GEMM and 3) repeats its sequence every two iterations, and the
    period read one "step" of two iterations (6.22 ms of 3.07 + 3.15; h37-probe47s *Left* 1)."""
    floor = _boundary_floor(typical, pause_at, offset)

    def ends(o: int) -> bool:
        return (own or waited_at[o] >= _WAITED) and pause_at[o] >= floor

    for m in range(p // 2, 1, -1):
        if p % m == 0 and all(ends((offset + j * (p // m)) % p) for j in range(1, m)) and \
                _same_work(period, m):
            return m
    return 1



def _boundary_floor(typical: float, pause_at: np.ndarray, offset: int) -> float:
    """The least host pause that marks a boundary of the period: ``job.period_boundary_gap`` times the ``typical`` gap
    between launches, and at least half the pause at the period's own boundary (``pause_at[offset]``) -- the one bar
    the period's inner cuts (:func:`_own_cuts`, :func:`_iterations_per_period`) and its run-on end
    (:func:`_runs_on`) are read against."""
    return max(T("job.period_boundary_gap") * max(typical, 1.0), 0.5 * pause_at[offset])

def _own_cuts(p: int, offset: int, pause_at: np.ndarray, typical: float, period: np.ndarray) -> np.ndarray:
    """Where, from the boundary ``offset``, each iteration of one repeat of the program's own loop starts (launch
    offsets, ascending, the first 0): at every offset the host paused as a boundary does (``job.period_boundary_gap``
    times the ``typical`` gap between launches, and at least half the boundary's own pause), where the parts could be
    iterations of one loop (:func:`_same_work`); ``[0]`` else.

    Why: an own loop (:func:`_own_loop`: no op, no sync) marks its boundary by no wait, only by the host's pause there
    (its untraced code between iterations, the GPU idle through it); a pause alike inside the period ends an
    iteration as surely.  A queued loop whose iterations alternate (a GEMM and 2 kernels, then a GEMM and 3) repeats its
    sequence every two iterations -- of 3 and 4 launches, no equal parts -- and the period read one "step" of two
    iterations (6.22 ms of 3.07 + 3.15; h37-probe47s *Left* 1): the pauses tile the loop finer, each a GPU burst."""
    floor = _boundary_floor(typical, pause_at, offset)
    cuts = np.array([j for j in range(p) if j == 0 or pause_at[(offset + j) % p] >= floor], np.int64)
    return cuts if cuts.size > 1 and _same_work(period, int(cuts.size)) else cuts[:1]


def _sizes_words(cuts: np.ndarray, whole: int) -> str:
    """The launch counts of one repeat's iterations (``cuts``: their offsets in a ``whole``-launch repeat), in
    words: "4" where all alike, "3 and 4" else."""
    sizes = np.unique(np.diff(np.r_[cuts, whole]))
    return " and ".join(str(int(n)) for n in sizes)


def _cut_starts(first: int, length: int, offset: int, whole: int, cuts: np.ndarray) -> np.ndarray:
    """The launch indices in the region (``length`` launches from ``first``, period ``whole``, its boundary at
    ``offset``) where an iteration starts: each repeat's ``cuts`` from its boundary, those before the first boundary
    too (the region's head is the iteration before it), ascending."""
    at = np.unique((offset + cuts) % whole)
    reps = np.arange(0, length + whole, whole)
    starts = (first + reps[:, None] + at[None, :]).ravel()
    return np.sort(starts[starts < first + length])


def _same_work(period: np.ndarray, m: int) -> bool:
    """Whether the launches of one repeat (``period``: its launch keys) could be ``m`` iterations of one loop: most of
    them (:data:`_ALIKE`) are of kernels the repeat launches at least ``m`` times, as each iteration runs them.  Read
    whatever the order and wherever the boundary falls: CloverLeaf's alternating sweeps (a sweep's first and second
    passes run variants of some kernels) keep 96% of their launches so; a call of distinct kernels read back halfway
    keeps none."""
    _, counts = np.unique(period, return_counts=True)
    return float(counts[counts >= m].sum()) >= _ALIKE * period.size


def _calls_of_layers(key: np.ndarray, first: int, length: int, p: int) -> int:
    """The number of layers in each repeat where the period's repeats are calls of a model made of layers; 0 else.

    Why: a benchmark that calls its model back to back (a warm-up call, then N timed calls, with no sync between
    them: zx3xyy/assignment2-systems, issue #37) gives the waits nothing to mark, and GPU bursts then cut its start-up
    into dozens of "steps".  Yet its launch sequence still tells a call from a layer: each repeat is itself a run of a
    shorter repeat -- the layers, :data:`_LAYERS` or more of them filling :data:`_LAYERS_COVER` of it -- that stops
    at every repeat's edge (the embedding before the first layer, the head after the last).  A layer's own repeats
    hold no such run, and layers launched back to back across calls with nothing between them (an encoder called in
    a loop) make one run over the whole sequence: no call to see there, as before."""
    sub = _period(key[first:first + p])
    if sub is None:
        return 0
    q, _, run = sub
    if run < _LAYERS_COVER * p or run < _LAYERS * q:
        return 0
    eq = key[:-q] == key[q:]
    # the layers' run is broken inside every repeat: the call's own kernels at its edges
    for a in range(first, first + length - p + 1, p):
        if eq[a:min(a + p, eq.size)].all():
            return 0
    return run // q


def _own_loop(trace: Trace, launches: list[np.ndarray], key: np.ndarray, first: int, length: int, p: int,
              t_start: np.ndarray) -> bool:
    """Whether the period's repeats are the iterations of the program's own loop, with no sync between them.

    Why: a native GPU-bound loop (a simulator's time steps: two kernels an iteration, 1,201 iterations launched back to
    back, michaelmichaeln/Parallel-Sheet-Simulator, issue #37) never waits for its results, so no boundary is marked,
    and GPU bursts cut it anywhere.  What tells its repeats from a model's layers, which also repeat with nothing
    between them: (1) the program launched them itself -- no framework op encloses the launches (a layer is a
    framework op's kernels: ``aten::_transformer_encoder_layer_fwd`` sixty times over); (2) the repeats are all the
    GPU computes -- no kernel outside the periodic region that the period does not launch (a model's call has its own
    first and last kernels around its layers: an embedding, a head).  Copies outside it are the loop's inputs and
    results; a repeat that copies (3) is left to the waits, as before: a layer whose offloaded weights are copied in
    before it repeats so too."""
    if np.setdiff1d(key[first:first + p], _kernel_names(trace)).size or _other_kernels(trace, key, first, length, p):
        return False
    return _op_share(trace, t_start[first:first + length]) < 1.0 - _WAITED


def _fed_calls(trace: Trace, launches: list[np.ndarray], key: np.ndarray, first: int, length: int, p: int,
               t_start: np.ndarray) -> int | None:
    """The offset in the period of the upload that starts each repeat, where the repeats are calls of a model on new
    inputs; None else.

    Why: a loop that never reads a result back (an ``emit_nvtx`` inference loop: each batch uploaded, the model run,
    nothing synced) gives the waits nothing to mark, and its framework's ops around every launch make it no native
    loop of its own (:func:`_own_loop`); where the model has fewer than :data:`_LAYERS` layers no run of layers shows a
    call either, so the window read as one pass (h37-fwnvtx2: 12 iterations of a 1-layer model, one "pass" of 7 ms).
    Its repeats still differ from a model's layers by what feeds them: a call computes on an input the host uploads
    for it, a layer on the previous layer's output, already on the GPU.  So: one copy from the host to the device in
    each period, at the same offset (every repeat takes one input), and the repeats all the GPU computes -- no kernel
    outside the periodic region that the period does not launch (a model's call has its own first and last kernels,
    an embedding and a head, around its layers).  A layer whose offloaded weights are uploaded before it also copies
    once a repeat, so the upload must be the program's own call: launched inside a framework op (``.to()``: the
    framework records its ops, so it would record a layer's too) and inside no library's range (a wrapper's hooks,
    ``FSDP::pre_forward``, upload offloaded weights there).  Where the capture records no op (a native loop, its
    copies blocking at every gap) nothing tells an input from a layer's weights: no reading, as before.  A period
    inside one call of the model is refused after (``job.within_one_call``)."""
    d = _busiest(trace, launches)
    if d is None:
        return None
    upload = np.zeros(len(d.names), bool)  # per name: the reader booked its events as copies to the device (their
    upload[np.asarray(d.name)[np.asarray(d.kind) == devices.KIND_H2D]] = True  # kind, not what the name says)
    period = key[first:first + p]
    at = np.flatnonzero(upload[period])
    if at.size != 1:
        return None
    # the uploads' launches (the repeats' own, at that offset): each inside a framework op, none in a library's range
    up = t_start[np.arange(first + int(at[0]), first + length, p)]
    if _op_share(trace, up) < _WAITED or _in_library_range(trace, up):
        return None
    if _other_kernels(trace, key, first, length, p):
        return None
    return int(at[0])


def _other_kernels(trace: Trace, key: np.ndarray, first: int, length: int, p: int) -> bool:
    """Whether the GPU computes anything outside the periodic region (``length`` launches from ``first``, period
    ``p``) that the period does not launch: a kernel of a call's own around its layers (an embedding, a head), where
    the repeats of a loop are all the work (copies outside are its inputs and results)."""
    outside = np.unique(np.r_[key[:first], key[first + length:]])
    return bool(np.setdiff1d(np.intersect1d(outside, _kernel_names(trace)), key[first:first + p]).size)


@dataclass(frozen=True)
class _ReadBack:
    """Where a native loop's blocking read-backs end each repeat (:func:`_read_backs`): the offset in the period of
    the launch after them, and the note's words for them."""

    offset: int
    words: str


def _read_backs(trace: Trace, launches: list[np.ndarray], key: np.ndarray, first: int, length: int, p: int,
                t_start: np.ndarray, t_end: np.ndarray, waits: Waits) -> _ReadBack | None:
    """The boundary of a native loop's iterations where each ends by reading its results back with blocking copies
    and the host waits for the GPU nowhere else; None else.

    Why: a HIP or CUDA program that runs the same kernels each iteration and reads the result back with a blocking
    ``hipMemcpy`` / ``cudaMemcpy``, never calling a sync, gave the waits nothing to mark, and its copies made it no
    loop of its own (:func:`_own_loop`): one pass (h37-hipread).  A blocking copy alone marks no boundary -- a layer
    whose swapped weights are copied in and out blocks the host at every copy, and nothing says which copy ends a
    repeat.  What the capture itself says of a loop's reads: (1) the copies from the device to the host recur with
    the period, each at its own offset with the same number of bytes every time (one result buffer each: a loss and
    an accuracy, a result and a flag; a model's layers copy tensors of their own sizes) -- the iteration is the
    repeat of that set of reads, not of one read (h37-readbacks2: a loop reading back two results was one pass);
    (2) each read's call returned only once its copy had ended, every time (the host waited for the result);
    (3) every other launch of the period returned before its own work ended, at most of its instances (the kernels
    queued, no copy in blocking the host: the reads are the host's only waits); (4) the program's own loop, as
    :func:`_own_loop` reads it: no framework op around the launches, no kernel outside the region the period does not
    launch, and no sync inside the region.  (2) and (3) compare the host's clock with the GPU's, each within how far
    the capture shows the two may disagree (:func:`_clock_slack`)."""
    d = _busiest(trace, launches)
    if d is None:
        return None
    rec, idx = _launched(trace, launches, d)
    if idx.size != key.size or length < 2 * p:
        return None
    at = np.flatnonzero(np.asarray(d.kind)[idx[first:first + p]] == devices.KIND_D2H)
    if not 0 < at.size < p:
        return None
    ev = idx[first:first + length]
    offsets = np.arange(length) % p
    nbytes = np.asarray(d.mem_bytes)[ev]
    if any(np.unique(nbytes[offsets == o]).size != 1 for o in at):
        return None
    early, late = _clock_slack(trace, rec, d)
    work_end = np.asarray(d.end, np.int64)[ev]
    calls_end = t_end[first:first + length]
    read = np.isin(offsets, at)
    if not _returned_after(calls_end[read], work_end[read], late).all():  # the host waited for each read's copy
        return None
    # another launch's call that returned only after its work ended waited: a copy's within the clocks' slack (a copy
    # in that holds the host -- a layer's swapped weights -- is a second wait whichever way the clocks disagree), a
    # kernel's beyond it (its launch returns once queued; the GPU's clock perhaps reading early)
    copy = np.asarray(d.kind)[ev] != devices.KIND_KERNEL
    waited = np.where(copy, _returned_after(calls_end, work_end, late), calls_end >= work_end + early)
    if max(float(waited[offsets == o].mean()) for o in np.setdiff1d(np.arange(p), at)) > 1.0 - _WAITED:
        return None
    h = trace.h
    syncs = waits.start
    synced = bool(((syncs >= t_start[first]) & (syncs <= t_end[first + length - 1])).any())
    if synced or _other_kernels(trace, key, first, length, p) or \
            _op_share(trace, t_start[first:first + length]) >= 1.0 - _WAITED or _engine_named(trace):
        return None
    return _ReadBack(_after_reads(at, p, first, length, t_start, t_end),
                     _read_words([h.names[int(h.name[rec[i]])] for i in ev[at]], [int(b) for b in nbytes[at]]))


def _after_reads(at: np.ndarray, p: int, first: int, length: int, t_start: np.ndarray, t_end: np.ndarray) -> int:
    """The offset in the period of the launch that starts each iteration, given its reads' offsets ``at``: the launch
    after a read that no read follows.

    Why: reads made together (a loss, then an accuracy) end one iteration after the last of them.  Where the reads
    lie apart (a flag read mid-iteration, the result at its end), the loop's first iteration begins where its
    launches begin repeating: the region's start, where a read ends the period; else the launch the host turns to
    longest after its read (the loop's own turn, against the code between two calls)."""
    after = [(o + 1) % p for o in at.tolist() if (o + 1) % p not in set(at.tolist())]
    if len(after) == 1 or 0 in after:
        return after[0] if len(after) == 1 else 0

    def turn(o: int) -> float:
        i = np.arange(first + o, first + length, p)
        i = i[i > first]
        return float(np.median(t_start[i] - t_end[i - 1])) if i.size else 0.0

    return max(after, key=turn)


def _read_words(calls: list[str], nbytes: list[int]) -> str:
    """The note's words for a loop's reads (``calls``: each read's call as the capture spells it, ``nbytes`` its
    size, -1 unknown), one read as h37-hipread wrote it, several in one sentence."""
    tail = ("launched by the program's own calls with no framework op around them and no other kernel in the "
            "window: the iterations of its loop")
    if len(calls) == 1:
        size = f"the same {gb(nbytes[0])}" if nbytes[0] >= 0 else "a copy"
        return (f"each ended by the host's blocking read of its result (`{calls[0]}`: {size} from the device at the "
                f"same point of every repeat, the repeat's only launch whose call returned once its work was done), "
                + tail)
    reads = ", ".join(f"`{c}` of {gb(b)}" if b >= 0 else f"`{c}`" for c, b in zip(calls, nbytes))
    return (f"each ended by the host's {len(calls)} blocking reads of its results ({reads} from the device, each the "
            f"same bytes at the same point of every repeat, the repeat's only launches whose calls returned once "
            f"their work was done), " + tail)


def _returned_after(call_end: np.ndarray, work_end: np.ndarray, late: int) -> np.ndarray:
    """Whether each call (its return ``call_end``, ps, host clock) returned only once its copy had ended (``work_end``,
    the GPU's clock, perhaps reading ``late`` ps behind the host's: :func:`_clock_slack`): the host waited for it.
    The one test of a blocking copy's call: a result read (:func:`_result_reads`), a read-back loop's reads, a copy's
    own sync (:func:`_own_waits`)."""
    return call_end >= work_end - late


def _clock_slack(trace: Trace, rec: np.ndarray, d: DeviceEvents) -> tuple[int, int]:
    """(early, late), ps: how far GPU ``d``'s clock may read ahead of the host's and behind it, as the capture itself
    shows (``rec``: each event's launch, -1 for none), each at most ``capture.clock_skew_us``.

    Why: a read that waits for its copy returns a few microseconds after the copy ends, so a GPU clock reading a few
    microseconds late puts the copy's end after the call's return, and the host's one wait a repeat read as none:
    the loop was one pass (h37-readbacks2).  No work starts before the call that launched it, so a start recorded
    before its call is the GPU's clock reading early by at least that lead, and the GPU's clock reads late by no
    more than the shortest distance from a call's start to its work's start.  Both bounds are what the capture proves,
    never more than the disagreement at which the capture-quality check says the clocks disagree."""
    after = work_after_call(trace.h.start, rec, d.start)
    if not after.size:
        return 0, 0
    lag = int(after.min())
    cap = int(T("capture.clock_skew_us") * PS_PER_US)
    return min(max(-lag, 0), cap), min(max(lag, 0), cap)


def _engine_named(trace: Trace) -> bool:
    """Whether the capture's NVTX ranges name a serving engine (by their names, ``engines.names_engine``, read once
    per name of the trace through ``HostEvents.per_name``; or by their domain: TensorRT-LLM's ``_forward_step`` in its
    ``TensorRT-LLM`` domain): its launches are the engine's loop, not a native program's own.

    Why: a 2-rank TensorRT-LLM executor reading its sampled tokens back once an iteration holds the one read-back a
    native loop's iterations end with, and no framework op (the engine writes ranges, not ops) -- its iterations were
    said to be "the program's own calls with no framework op around them" where its own ranges name them
    (``steps.top_ranges._engine_range_steps``; h37-hipread merged beside h37-nsyslast's walk seed 221).  Each reading
    of a period asks again (a frame, the whole region, the host's wait period): the range names are read once."""
    r = trace.ranges
    if r is None or not r.idx.size:
        return False
    h = trace.h
    if h.per_name(engines.names_engine)[h.name[r.idx]].any():
        return True
    domains = [r.domains[int(d)] for d in np.unique(r.domain) if 0 <= int(d) < len(r.domains)]
    return engines.find([], [], domains=domains) is not None


def _launched(trace: Trace, launches: list[np.ndarray], d: DeviceEvents) -> tuple[np.ndarray, np.ndarray]:
    """(the launch of each event of ``d``, the indices of its launched events in host launch order): the order of
    :func:`_sequence`, its ties by the GPU's start."""
    rec = launches[next(i for i, x in enumerate(trace.devices) if x is d)]
    ok = np.flatnonzero(rec >= 0)
    order = np.lexsort((np.asarray(d.start)[ok], trace.h.start[rec[ok]]))[:MAX_LAUNCHES]
    return rec, ok[order]


def _kernel_names(trace: Trace) -> np.ndarray:
    """The device name ids of kernels, on any GPU."""
    out = [np.unique(np.asarray(d.name)[d.kind == devices.KIND_KERNEL]) for d in trace.devices if len(d)]
    return np.unique(np.concatenate(out)) if out else np.zeros(0, np.int64)


def _op_share(trace: Trace, t: np.ndarray) -> float:
    """Share of the launch calls starting at ``t`` (ps) that a framework op encloses: a host event that is neither a
    runtime or library call nor a range of the program's own (a user's NVTX range is its code, not a framework's)."""
    h = trace.h
    own = np.zeros(len(h.names), dtype=bool)
    own[np.unique(h.name[user_ranges.marked_ranges(trace.ranges)])] = True
    per = h.per_name(_runtime_or_library)
    op = lookup_mask(~(per | own), h.name)
    if not op.any() or not t.size:
        return 0.0
    s, e = union_intervals(h.start[op].astype(np.int64, copy=False), h.end[op].astype(np.int64, copy=False))
    k = np.searchsorted(s, t, side="right") - 1
    inside = (k >= 0) & (t < e[np.maximum(k, 0)])
    return float(inside.mean())


def _in_library_range(trace: Trace, t: np.ndarray) -> bool:
    """Whether any of the launches at ``t`` (ps) lies inside a range a library opens around its own work
    (``frameworks.user_ranges.library_range_mask``: a data-parallel wrapper's hooks, NCCL's calls)."""
    r = trace.ranges
    if r is None or not r.idx.size or not t.size:
        return False
    lib = r.idx[user_ranges.library_range_mask(trace.h, r)]
    if not lib.size:
        return False
    h = trace.h
    s, e = union_intervals(h.start[lib].astype(np.int64, copy=False), h.end[lib].astype(np.int64, copy=False))
    k = np.searchsorted(s, t, side="right") - 1
    return bool(((k >= 0) & (t < e[np.maximum(k, 0)])).any())


#: A library's own calls (cuDNN, cuBLAS, NCCL and their HIP peers): never a framework op around a launch.
_LIBRARY = re.compile(r"^(nccl|rccl|cudnn|cublas|cufft|curand|cusparse|cusolver|miopen|rocblas|hipblas)", re.I)


def _runtime_or_library(name: str) -> bool:
    """A runtime, driver or library call (module level, so ``per_name`` remembers it)."""
    return devices.is_runtime_call(name) or _LIBRARY.match(name) is not None


def _blocked_share(trace: Trace, lo: np.ndarray, hi: np.ndarray) -> float:
    """Share of the gaps ``[lo, hi)`` (ps) the host spent inside blocking runtime calls (``devices.is_blocking_call``:
    syncs and copies, whose time is the GPU's or the transfer's, not the host's own)."""
    total = float(np.sum(hi - lo))
    h = trace.h
    mask = h.name_mask(devices.is_blocking_call)
    if total <= 0 or not mask.any():
        return 0.0
    bs, be = union_intervals(h.start[mask].astype(np.int64, copy=False), h.end[mask].astype(np.int64, copy=False))
    cum = np.r_[0, np.cumsum(be - bs)]

    def before(x: np.ndarray) -> np.ndarray:  # blocked time before each x
        k = np.searchsorted(bs, x, side="right")
        return cum[k] - np.where(k > 0, np.maximum(be[np.maximum(k - 1, 0)] - x, 0), 0)

    return float(np.sum(before(hi) - before(lo))) / total


def _time_share(trace: Trace, launches: list[np.ndarray], lo: int, hi: int) -> float:
    """Share of the busiest GPU's kernel time (:func:`_sequence`'s GPU) in its launches ``[lo, hi)`` of the launch
    sequence's order (copies left out: a loop's inputs uploaded before it are no pass of work)."""
    d = _busiest(trace, launches, 1)
    if d is None:
        return 0.0
    rec = launches[next(i for i, x in enumerate(trace.devices) if x is d)]
    ok = rec >= 0
    order = np.lexsort((np.asarray(d.start)[ok], trace.h.start[rec[ok]]))[:MAX_LAUNCHES]
    kernel = (np.asarray(d.kind)[ok] == devices.KIND_KERNEL) | (np.asarray(d.kind)[ok] == devices.KIND_COLLECTIVE)
    dur = np.where(kernel, np.asarray(d.end)[ok] - np.asarray(d.start)[ok], 0).astype(np.float64)[order]
    total = float(dur.sum())
    return float(dur[lo:hi].sum()) / total if total > 0 else 0.0


def _sequence(trace: Trace, launches: list[np.ndarray], least: int = 8
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The busiest GPU's launched events in host launch order: (kernel name id, launch start, launch end), ps."""
    h = trace.h
    best = _busiest(trace, launches, least)
    if best is None:
        return None
    rec, idx = _launched(trace, launches, best)
    r = rec[idx]
    return np.asarray(best.name)[idx].astype(np.int64), h.start[r].astype(np.int64, copy=False), \
        h.end[r].astype(np.int64, copy=False)


def _reads_back(trace: Trace, launches: list[np.ndarray], period: np.ndarray) -> bool:
    """Whether one period of the busiest GPU's launch sequence (``period``: its name keys) holds a copy to the host.

    Why: :func:`_fed_calls` finds repeats by their one upload and asks nothing of the rest, so a loop that uploads a
    batch and reads it back each turn (a ``jax.device_put`` / ``np.asarray`` staging loop, h37-probe43e) was said to be
    "launched without reading a result back" beside its 8 device-to-host copies."""
    d = _busiest(trace, launches)
    if d is None:
        return False
    back = np.zeros(len(d.names), bool)
    back[np.asarray(d.name)[np.asarray(d.kind) == devices.KIND_D2H]] = True
    return bool(back[period].any())


def _busiest(trace: Trace, launches: list[np.ndarray], least: int = 8):  # noqa: ANN202 - a device table
    """The GPU whose events the host launched most (at least ``least``, 8 for a period): the one whose launch sequence
    is read."""
    best, most = None, 0
    for d, rec in zip(trace.devices, launches):
        k = int((rec >= 0).sum())
        if k >= least and k > most:
            best, most = d, k
    return best


def _period(key: np.ndarray) -> tuple[int, int, int] | None:
    """(period, first launch of the periodic region, its length) of the longest periodic region, the smallest period
    among equals; None where nothing repeats twice."""
    n = key.size
    mid = key[n // 3: 2 * n // 3]
    if mid.size < 2:
        return None
    ids, counts = np.unique(key, return_counts=True)
    in_mid = np.unique(mid)
    cnt = counts[np.searchsorted(ids, in_mid)]
    keep = cnt >= 2
    rare = in_mid[keep][np.argsort(cnt[keep], kind="stable")][:_ANCHORS].tolist()
    cands: set[int] = set()
    for k in rare:
        pos = np.flatnonzero(key == k)
        i0 = int(pos[np.searchsorted(pos, n // 3)]) if np.searchsorted(pos, n // 3) < pos.size else int(pos[-1])
        d = np.abs(pos - i0)
        cands.update(int(x) for x in np.sort(d[(d > 0) & (d <= n // 2)])[:_MAX_CANDIDATES])
    best: tuple[int, int, int] | None = None
    c = n // 2
    other = np.flatnonzero(key[c:] != key[c])
    same_run = int(other[0]) if other.size else n - c  # launches of one kernel from the middle on
    for p in sorted(cands):
        if p <= same_run:
            continue  # a period of one kernel over and over: no step
        if best is not None and p % best[0] == 0 and best[2] == n:
            continue  # a multiple of a period covering every launch covers no more than it (one of a layer's runs
            # no further than the layer's: the iteration of 6 layers of 5 + 24 + 1 kernels is 55, 11 of them)
        if not _probe(key, c, p):
            continue  # the middle does not repeat with this period: no need to look at the whole sequence
        run_start, run_len = _longest_run(key[:-p] == key[p:])
        length = run_len + p
        if run_len < p or np.unique(key[run_start:run_start + p]).size < 2:
            continue  # no second repeat, or one kernel over and over: no step
        if best is None or length > best[2]:
            best = (p, run_start, length)
    return best


def _probe(key: np.ndarray, c: int, p: int) -> bool:
    """Whether the launches after the middle repeat ``p`` later or ``p`` earlier: one period's launches (at most
    :data:`_PROBE`), so that a short capture whose periodic region ends soon after its middle (the results copied
    back) still passes to the full check.

    Either way, not the later one alone where it fits: of a short loop's three repeats the middle's next period
    reaches the result's read-back after the last one, while its previous period is the first repeat (a native
    rocprof loop of 3 iterations read as one pass, h37-rocsteps)."""
    m = min(_PROBE, p, key.size - c)
    later = c + p + m <= key.size and bool(np.array_equal(key[c:c + m], key[c + p:c + p + m]))
    return later or c - p >= 0 and bool(np.array_equal(key[c - p:c - p + m], key[c:c + m]))


def _longest_run(eq: np.ndarray) -> tuple[int, int]:
    """(start, length) of the longest run of True."""
    if not eq.any():
        return 0, 0
    edges = np.flatnonzero(np.diff(np.r_[0, eq.astype(np.int8), 0]))
    starts, ends = edges[::2], edges[1::2]
    k = int(np.argmax(ends - starts))
    return int(starts[k]), int(ends[k] - starts[k])
