"""Source 12, ``gpu_busy_clusters``: the GPU's bursts as steps, unless they cannot be iterations:
a training job's bursts that mostly hold no backward, bursts of copies alone (joined to the iteration they feed),
bursts holding one-time costs whose work never runs again, or bursts that share no compute on a mostly idle GPU --
then the window is one pass, with the reason.

Why: the last reading before the whole capture; every refusal is a law of iterations (each runs kernels and, when
training, a backward), so a guess that breaks one is no step.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.fmt import pct, plural
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.job import Job
from tb_gpu_advisor.job.structure import layer_range_families
from tb_gpu_advisor.model.trace import DeviceEvents, Trace
from tb_gpu_advisor.steps.burst_table import BurstTable
from tb_gpu_advisor.steps.bursts import _busy_clusters, copies_alone_repeat, copy_bursts_repeat
from tb_gpu_advisor.steps.reading import _Reading
from tb_gpu_advisor.steps.recurring import recurring_note, recurring_turns
from tb_gpu_advisor.steps.types import PS_PER_MS


def _bursts_holding_backward(job: Job | None, t: BurstTable) -> tuple[int, int] | None:
    """(bursts holding a gradient kernel, bursts) of a training job's GPU bursts (``starts``), where fewer than half
    hold one and at least one does; else None.

    Why: every training iteration runs a backward pass, so GPU bursts that are iterations each hold one.  Where most
    bursts hold no gradient kernel (``devices.gradient_kernel_one``) they are parts of iterations -- the host's
    pauses inside one eager step -- and the window holds no more iterations than the bursts that do (casio's TF 1.15
    NeRF: 85 bursts, 2 with a ``ReluGradHalfKernelVector``, read as 83 steps of 3.88 ms).  Where no kernel is named
    as a gradient's, names say nothing either way.  Two bursts are enough: one with a backward and one without are at
    most one iteration, cut at a host pause between its forward and its backward (PyProf's LM, one iteration between
    ``profiler.start()`` and ``stop()`` in nvprof's database: a forward burst of 0.3 ms, then the backward and update,
    read as 2 "steps" of 33.7 and 41.4 ms while the whole window is the one iteration; h37-wild56x)."""
    if job is None or job.kind.kind != "training" or t.size < 2:
        return None
    grad = np.fromiter((devices.gradient_kernel_one(n) for n in t.names), bool, len(t.names))
    n = int(t.holding(grad[t.name]).sum())
    # a range k >= 2 times an iteration holds the backward in 1/k of its windows: half of them at most -- exactly half
    # for a model of 2 layers (h37-randjobs5: Megatron's 2-layer ranges, 30 "steps" of 15 iterations)
    return (n, t.size) if 0 < n and 2 * n <= t.size else None


def _one_off_bursts(job: Job | None, t: BurstTable) -> str | None:
    """Why the GPU's bursts are no iterations of one loop, in words (the whole capture's note), where the bursts
    holding the capture's one-time costs (``job.phase``: module loading, library start-up) run kernel work that no
    other burst runs again -- most of their kernel time in kernels no later burst runs, and more of it than every
    other burst's kernel time together; else None.

    Why: a burst holding one-time costs is left out as a warm-up iteration only where the steps left repeat its work.
    A program traced from its start that runs its work once (a script's one ``torch.matmul`` of a 2 GB input, then
    the ``print`` of its result in a dozen small bursts) has no warm-up iteration: dropping the bursts that hold the
    start-up dropped the program's only GEMM and its upload, and averaged the ``print``'s 3.7 ms of small kernels as
    its "steady state".  Its window is one pass.

    Kernels and collectives alike are the work judged (``BurstTable.work``), and a window whose every burst holds
    one-time costs is judged by :func:`_start_up_alone`: NCCL's demo on 4 V100s (``wild/nccl_setup_v100x4_nvprof``) set up four
    communicators in 40 bursts of fills and small uploads, then ran its 24 collectives once -- read as 35 "steps" of
    its set-up while its one compute was collectives no kernel count saw; the same program with plain kernels holds
    its start-up's uploads in every burst (hunt70b)."""
    if job is None or t.size < 3 or not job.phase.start.size:
        return None
    starts, ends = t.starts, t.ends
    cold = np.zeros(starts.size, bool)
    k = np.searchsorted(starts, job.phase.start, side="right") - 1
    inside = (k >= 0) & (job.phase.start < ends[np.clip(k, 0, None)])
    cold[k[inside]] = True
    ahead = ~inside & (k + 1 < starts.size)  # a cost in the idle before a burst (a first launch loading its code) is
    cold[k[ahead] + 1] = True  # that burst's: the work it launches waits for it
    if not cold.any():
        return None
    kern = np.flatnonzero(t.work & (t.burst >= 0))  # kernels and collectives alike: the program's compute
    name = t.per_gpu_name()[kern]  # each GPU's kernels judged by that GPU's other bursts
    in_cold = cold[t.burst[kern]]
    repeated = np.isin(name, name[~in_cold])
    dur = t.time[kern]
    once, again = float(dur[in_cold & ~repeated].sum()), float(dur[in_cold & repeated].sum())
    steady = float(dur[~in_cold].sum())
    if cold.all():  # the start-up alone: no burst without one-time costs to compare with
        return _start_up_alone(t, kern)
    if once <= 0.0 or once <= again or once <= steady:
        return None
    return (f"no step markers found; the GPU's bursts are no iterations: the {plural(int(cold.sum()), 'burst')} "
            f"holding the start-up's one-time costs run {once / PS_PER_MS:,.1f} ms of kernels no later burst runs "
            f"again (more than all the other bursts' kernels), so none is a warm-up iteration of a loop: the program "
            f"ran its work once, and the whole capture is analysed as one pass; per-step numbers are capture totals")


def _start_up_alone(t: BurstTable, kern: np.ndarray) -> str | None:
    """Why the GPU's bursts are no iterations, in words, where every burst holds one-time costs and all the kernel work
    (``kern``: its rows) runs in one burst -- the others copies and fills alone; else None.

    Why: a loop whose every iteration loads new code (each pass's own kernel a first launch) holds one-time costs in
    every burst too, but repeats its body's kernels in each (``tests.support.burst_loops.COLD_BURST_GAPS``); a
    start-up whose set-up rounds upload and fill (each burst's copies the start-up's, ``job.phase`` says) and whose
    work then runs in one burst repeats none: its fill bursts, alike by name, are no loop of copies (hunt70b)."""
    bursts = np.unique(t.burst[kern])
    if bursts.size != 1:
        return None
    return (f"no step markers found; the GPU's bursts are no iterations: each of the {t.size} bursts holds the "
            f"start-up's one-time costs, and all their kernels run in one of them, the others copies and fills "
            f"alone: the program's set-up, then its work run once, not a loop; the whole capture is analysed as one "
            f"pass; per-step numbers are capture totals")


def _kernel_time_once_again(t: BurstTable) -> tuple[float, float]:
    """(ps of kernel time in kernels that run in one burst only, ps in kernels that run in two bursts or more) over
    the bursts' kernels; kernels by name, each GPU's apart.  An autotuner's own kernels (``devices.
    autotune_kernel_one``: XLA's ``redzone_checker`` around each candidate algorithm) are a first call's however many
    bursts its search spreads over: they run once per shape, never in a loop's iterations (h37-wild57n)."""
    kern = t.work & (t.burst >= 0)
    if not kern.any():
        return 0.0, 0.0
    name = t.per_gpu_name()
    pairs = np.unique(np.stack([name[kern], t.burst[kern]]), axis=1)
    names, runs = np.unique(pairs[0], return_counts=True)
    tuning = np.fromiter((devices.autotune_kernel_one(n) for n in t.names), bool, len(t.names))
    repeated = np.isin(name[kern], names[runs > 1]) & ~tuning[t.name[kern]]
    dur = t.time[kern]
    return float(dur[~repeated].sum()), float(dur[repeated].sum())


def _unlike_bursts(active: list[DeviceEvents], t: BurstTable) -> str | None:
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
    if t.size < 2:
        return None
    starts, ends = t.starts, t.ends
    span = float(ends[-1] - starts[0])
    busy = 0.0
    for d in active:
        us, ue = d.busy()
        busy += float((ue - us).sum())
    if span <= 0.0 or busy >= T("steps.idle_bursts_share") * span:
        return None
    once, again = _kernel_time_once_again(t)
    if once <= again:
        return None
    return (f"no step markers found; the GPU's {starts.size} bursts are no iterations: the GPU works "
            f"{busy / PS_PER_MS:,.3f} ms of their {span / PS_PER_MS:,.1f} ms ({pct(busy / span, 2)}), and "
            f"{once / PS_PER_MS:,.3f} ms of their {(once + again) / PS_PER_MS:,.3f} ms of kernels run in one burst "
            f"only: a loop's iterations repeat their kernels, so the window is one pass of a program -- a first call, "
            f"its start-up or compile on the host between the bursts -- not its steady state; the whole capture is "
            f"analysed as one pass; per-step numbers are capture totals")


def _layers_across_bursts(trace: Trace, active: list[DeviceEvents], launches: list[np.ndarray],
                          t: BurstTable) -> str | None:
    """Why the GPU's bursts are no iterations, in words (the whole capture's note), where the ranges a framework opens
    per layer (one family of names told apart by their module path's layer index: ``frameworks.nvtx.layer_family``)
    run their layers in different bursts -- each layer's ranges in one burst (or across the gap of two), two bursts or
    more holding them,
    more layers than bursts, none run again in a later burst; else None.

    Why: a loop's iterations each run every layer, so where each burst runs other layers than the next, the bursts
    are pieces of one pass cut by the host's pauses inside it, not iterations.  One FSDP rank of the shared 2xH100
    export (``fsdp_mfu_after``, its peer's CUDA side unrecorded: h37-nvtx62) paused 1.3-6.6 ms between its layers --
    the host in its own Python between ops, in ``aten::linear``'s cuBLAS set-up -- and its 300 ms slice of one
    forward (``FSDP::pre_forward (blocks.8...)`` to ``blocks.22``, each once) read as 4 "steps" of 135, 35, 7 and
    121 ms; read with its peer's GPU busy in those gaps it was one pass.  A name with a loop's counter is no layer's
    (``train_step 3``: each step's range in its own burst is what steps are), nor a range of the steps' own."""
    rg = trace.ranges
    if rg is None or t.size < 2 or not rg.idx.size:
        return None
    h = trace.h
    family = layer_range_families(trace)
    if not family:
        return None
    li, lb = [], []  # each burst's work's launch record, with its burst
    for d, la in zip(active, launches):
        ok = np.flatnonzero(la >= 0)
        b = np.searchsorted(t.starts, d.start[ok], "right") - 1
        inside = (b >= 0) & (d.start[ok] <= t.ends[np.maximum(b, 0)])
        li.append(la[ok[inside]].astype(np.int64))
        lb.append(b[inside])
    at, burst = np.concatenate(li), np.concatenate(lb)
    ranged = rg.idx[np.isin(h.name[rg.idx], list(family))]
    spans: dict[int, list[tuple[int, int]]] = {}  # a layer's name -> per range of it, the bursts its launches ran in
    for ln in np.unique(h.line[at]).tolist():
        on = h.line[at] == ln
        order = np.argsort(h.start[at[on]], kind="stable")
        when, b = h.start[at[on]][order], np.r_[burst[on][order], 0]  # (a sentinel: reduceat's end index)
        rr = ranged[h.line[ranged] == ln]
        lo, hi = np.searchsorted(when, h.start[rr], "left"), np.searchsorted(when, h.end[rr], "right")
        has = hi > lo
        if not has.any():
            continue
        edges = np.column_stack([lo[has], hi[has]]).ravel()
        first, last = np.minimum.reduceat(b, edges)[::2], np.maximum.reduceat(b, edges)[::2]
        for nid, a, z in zip(h.name[rr[has]].tolist(), first.tolist(), last.tolist()):
            spans.setdefault(int(nid), []).append((int(a), int(z)))
    for f in dict.fromkeys(family.values()):
        layers = [sorted(v) for nid, v in spans.items() if family[nid] == f]
        touched = {b for v in layers for a, z in v for b in range(a, z + 1)}
        # a layer run again in a later burst (two of its ranges in disjoint bursts) is a loop's: the bursts may be its
        # iterations
        again = any(z < a2 for v in layers for (_, z), (a2, _) in zip(v, v[1:]))
        if len(layers) >= 3 and not again and 2 <= len(touched) < len(layers):
            return (f"no step markers found; the GPU's {t.size} bursts are no iterations: the {len(layers)} layers of "
                    f"`{f}` launch their work in {len(touched)} of them, none again in a later burst, "
                    f"where a loop's iterations each run every layer -- the bursts are pieces of one pass, cut by "
                    f"the host's pauses inside it; the whole capture is analysed as one pass; per-step numbers are "
                    f"capture totals")
    return None


def _body_in_few_bursts(t: BurstTable) -> str | None:
    """Why the GPU's bursts are no iterations, in words (the whole capture's note), where no kernel or copy (by name)
    runs in ``steps.body_bursts_share`` of the inner bursts (all but the window's first and last, which the window may
    cut) or more; else None.  Only with three inner bursts or more.

    Why: ``_bursts_repeat`` takes the bursts for steps where any work runs in two of them, but an iteration is the
    loop's body, and the body runs in every iteration: bursts that are iterations share some of their work with nearly
    all the others.  A loop whose iterations the host pauses inside (each new kernel's first launch loading its
    module, a read-back's sync) and whose later iterations run back to back is cut into bursts that are neither: a
    Swin block's test loop on an RTX A4000 -- 16 iterations, each an upload, a ``grid_sampler`` and a forward --
    made 85 bursts of 1 to 250 events (the busiest kernel in 35 of the 83 inner ones), read as 74 "steps" of
    10.9 ms where the warm iterations took ~14 ms."""
    if t.size - 2 < 3:
        return None
    inner = (t.burst >= 1) & (t.burst <= t.size - 2)
    widest = int(t.bursts_per_name(inner).max()) if inner.any() else 0
    inner_n = t.size - 2
    if widest >= T("steps.body_bursts_share") * inner_n:
        return None
    return (f"no step markers found; the GPU's {t.size} bursts are no iterations: a loop's body runs in every "
            f"iteration, but no kernel or copy runs in more than {widest} of the {inner_n} inner bursts (the window's "
            f"first and last set aside), so the bursts are pieces of iterations -- cut by the host's pauses, or "
            f"several run back to back -- not iterations; the whole capture is analysed as one pass; per-step numbers "
            f"are capture totals")


def _outside_loop_copy_bursts(t: BurstTable) -> tuple[int, int]:
    """(leading, trailing): how many of the GPU's first bursts are the program's set-up before its loop, and how many
    of its last its work after the loop -- bursts that run no kernel (copies or fills alone), before the first burst of
    kernels or after the last, where two bursts of kernels or more run and every burst between the first and the last
    of them runs kernels; (0, 0) elsewhere.

    Why: every iteration of a loop runs the loop's kernels, so a burst of copies alone is no iteration; where the
    bursts of kernels each run their kernels (and their own uploads) and no copy-only burst recurs between them, the
    copies before the first of them are made once, before the loop -- a model's weights or a table uploaded, then the
    loop (h37-probe44m, as ``_setup_copy_bursts``: randjobs ``--forms5`` seed 75020, a rocprof job of 2 steps each
    uploading 48 MiB with its kernels, after a 64 MiB set-up upload the staging of the first step's copy set apart by
    5 ms: read as 3 GPU-burst "steps", the first the set-up upload alone) -- and the copies after the last of them
    once, after it: the results read back, a checkpoint downloaded.  A training job's too (h37-probe45m): joined to the
    iteration beside them (:func:`_join_copy_bursts`), a Kineto loop of 4 iterations 5.12 ms apart read its first step
    as 10.13 ms (a 16 MB set-up upload 5 ms before it) and its last as 5.76 ms (a 16 MB read-back after it).  Copy-only
    bursts that recur between the kernel bursts are the iterations' own inputs or read-backs
    (:func:`_join_copy_bursts`, ``copy_bursts_repeat``) and stay."""
    if t.size < 3:
        return 0, 0
    kernels = np.flatnonzero(t.holding(t.work))
    if kernels.size < 2 or kernels[-1] - kernels[0] + 1 != kernels.size:
        return 0, 0
    return int(kernels[0]), int(t.size - 1 - kernels[-1])


def _inside(cl: tuple[np.ndarray, np.ndarray], outside: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The bursts ``cl`` (starts, ends) without the ``outside`` (leading, trailing) ones."""
    lead, trail = outside
    return cl[0][lead:cl[0].size - trail], cl[1][lead:cl[1].size - trail]


def _outside_words(lead: int, trail: int) -> str:
    """The steps' note's words for the copy-only bursts left out before and after the loop ("" where none)."""
    said = []
    if lead:
        said.append(f"{'the first burst' if lead == 1 else f'the first {lead} bursts'} of copies alone before the "
                    f"first burst of kernels left out: the program's set-up before its loop")
    if trail:
        said.append(f"{'the last burst' if trail == 1 else f'the last {trail} bursts'} of copies alone after the "
                    f"last burst of kernels left out: the program's work after its loop (its results read back)")
    return "".join(f"; {w} (each iteration runs kernels)" for w in said)


def _join_copy_bursts(job: Job | None, t: BurstTable) -> tuple[tuple[np.ndarray, np.ndarray], int]:
    """((starts, ends), bursts joined) of the GPU's bursts with each burst that holds no kernel (copies or memsets
    alone) joined to the next burst, the last such to the one before it -- a training job's wherever some burst holds
    kernels, any other job's where only one does --; the bursts unchanged elsewhere.

    Why: every training iteration runs kernels (its forward, backward and update), so a burst of copies alone is no
    iteration but part of one: the batch's upload before its compute (a ViT's 154 MB pageable copy, then 14 ms of the
    host's own code, then 585 kernels: one iteration read as two "steps" of 58 ms, the copy's name -- a direction
    and memory kinds, the same for the labels' 2 kB -- taken for repeated work), or the results' read-back after it.
    Any loop runs its body's kernels in every iteration too, so where all of a window's kernels run in one burst the
    window holds one iteration at most, whatever the job: a native DGEMM program's one pass (ntua-el20062/
    gemm_spmm_a100 ``gemm_tiled_20000``: A uploaded by a ``cudaMemcpy`` of 3.2 GB, cuBLAS's 19.7 ms start-up, then
    B's 3.2 GB upload, one 990 ms DGEMM and the read-back) read as two "steps" because its two uploads share a
    copy's name (h37-asyncslow32).  Where other jobs run kernels in several bursts their copies' bursts stay apart: a
    program that is no training loop may run a phase of copies alone (``wild/mordred_rtx6000_hashjoin``'s 128 uploads
    before its queries)."""
    starts, ends = t.starts, t.ends
    if job is None or starts.size < 2:
        return (starts, ends), 0
    held = t.holding(t.work)
    if held.all() or not held.any() or (job.kind.kind != "training" and int(held.sum()) > 1):
        return (starts, ends), 0
    if job.kind.kind != "training" and copy_bursts_repeat(t):
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


def _training(job: Job | None) -> bool:
    """Whether the job reads as training (a loop whose every iteration runs a forward, backward and update)."""
    return job is not None and job.kind.kind == "training"


def _whose(job: Job | None) -> str:
    """Whose GPU work the bursts are, in words: "a training job's" or "the program's"."""
    return "a training job's" if _training(job) else "the program's"


def _times_no_gpu_step(job: Job | None) -> bool:
    """Whether the job's reading says the window times no GPU step (``Kind.times_gpu_step``): no GPU work (``no_gpu``:
    no kernel launched -- start-up, an input pipeline's loop, a model on the CPU), or marks that time none (the loop's
    end; CUDA tracing off).

    Why: a GPU step is the GPU's work of one iteration, and without a kernel there is none; the bursts such a window
    holds are copies alone (the input-only DataLoader loop on an RTX 4090: 24 uploads in 3 bursts read as 3 "steps" of
    up to 5.6 s under a title that says "no step").  The job's reading is the one answer; the steps ask it.  (Named
    ``_no_gpu_work`` until h37-review29: h37-tidy29 widened it from ``no_gpu`` to every window that times no GPU step.)"""
    return job is not None and not job.kind.times_gpu_step


def _no_launch_ran(job: Job | None) -> bool:
    """Whether the job's reading says the runtime refused every launch the host made (``Kind.every_launch_refused``):
    no kernel ran, yet the host launched kernels.

    Why: the GPU's bursts of such a window are copies alone, and copy bursts are iterations only of a loop of copies
    alone (a bandwidth sweep, :func:`~.bursts.copy_bursts_repeat`) -- a program that launches kernels runs them in
    every iteration, so its copies' bursts cannot show one.  che30122/opensift's separable SIFT blur (an RTX 3080,
    ``conv_x`` then ``conv_y``, each launch refused with cudaErrorInvalidConfiguration) uploads, launches and reads
    back once per pass: its two rounds of copies, sharing their directions and sizes, were cut into 2 "steps" of
    9.04 ms (h37-huntn67)."""
    return job is not None and job.kind.every_launch_refused


def _burst_steps(r: _Reading, job: Job | None) -> None:
    """12. ``gpu_busy_clusters``: the GPU's bursts, apart by long idle gaps, as the steps -- unless a training job's
    bursts cannot each be an iteration (every iteration runs kernels and a backward): then the window is read as (at
    most) that many iterations, and the whole capture is one step, with the reason in ``whole_note``; none in a window
    that times no GPU step (:func:`_times_no_gpu_step`): the whole capture, one pass.  Any other job's copy bursts
    beside its one burst of kernels (:func:`_join_copy_bursts`) make the window one pass too -- said only where no
    other one-pass reading speaks first, and no guessed iteration: the program's numbers are exact for the window,
    as with bursts that share no work (a first call's one launch, ``wild/lazy_first_launch_t4``, keeps its reading:
    high confidence, critical)."""
    if _times_no_gpu_step(job):
        return
    if _no_launch_ran(job):
        r.whole_note = ("no step markers found; the runtime refused every kernel launch, so no kernel ran and the "
                        "GPU's bursts hold only the copies around the refused launches: a loop's iterations each run "
                        "its kernels, so no burst shows one; the whole capture is analysed as one pass; per-step "
                        "numbers are capture totals")
        return
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
    one_pass = None  # a program's copy bursts joined to its one burst of kernels: said unless another check speaks
    early = (0, 0)  # a training job's copy-only bursts outside its loop, left out before its own readings
    if cl is not None:
        bursts = cl[0].size
        if _training(job):  # ... which would join them to its first and last iterations, or count them as bursts
            early = _outside_loop_copy_bursts(BurstTable.of(r.active, *cl))  # without a backward
            cl = _inside(cl, early)
        whole, n = _join_copy_bursts(job, BurstTable.of(r.active, *cl))
        note = (f"{_whose(job)} GPU work runs in {bursts} bursts, {plural(n, 'burst')} of them copies alone (no "
                f"kernel): iterations of one loop run its kernels every time, so such a burst is part of one -- its "
                f"input's upload or its results' read-back -- and the window holds one iteration; the whole capture "
                f"is analysed as one pass; per-step numbers are capture totals")
        if whole[0].size >= 2:
            cl, joined = whole, n
        elif _training(job):  # the copies' bursts joined to the one burst of kernels: one iteration, a guess
            cl, r.whole_note, r.guessed = None, note, True
        else:
            one_pass = note
    t = BurstTable.of(r.active, *cl) if cl is not None else None  # the bursts' one table: every reading below asks it
    backward = _bursts_holding_backward(job, t) if t is not None else None
    if backward is not None:  # bursts that mostly run no backward are no iterations of a training job
        cl = None
        r.whole_note = (f"a training job's GPU work runs in {backward[1]} bursts, with a gradient kernel "
                        f"in only {plural(backward[0], 'burst')}: every iteration runs a "
                        f"backward, so a burst without one is no iteration and the window holds at most "
                        f"{plural(backward[0], 'iteration')}; the whole capture is analysed as one pass; "
                        f"per-step numbers are capture totals")
        r.guessed = backward[0] <= 1  # "at most one iteration": the window read as one, a guess
    once = _one_off_bursts(job, t) if cl is not None else None
    if once is not None:  # the work of the bursts holding one-time costs never runs again: no warm-up iterations
        cl = None
        r.whole_note = once
    unlike = _unlike_bursts(r.active, t) if cl is not None else None
    if unlike is not None and cl is not None:  # a GPU idle between bursts that share no compute: one pass
        r.whole_note, r.unlike = unlike, len(cl[0])
        cl = None
    layers = (_layers_across_bursts(r.trace, r.active, [la for d, la in zip(r.trace.devices, r.launched()) if len(d)],
                                    t) if cl is not None and t is not None else None)
    if layers is not None:  # the bursts run different layers of one pass: no iterations
        r.whole_note, cl = layers, None
    by_name = copies_alone_repeat(t) if cl is not None else None
    if by_name is not None and cl is not None:  # only copies' names repeat, beside kernels: one pass
        r.whole_note = (f"no step markers found; the GPU's {cl[0].size} bursts are no iterations: no kernel runs in two "
                        f"of them, and the only work they share is copies named by their direction and memory kinds "
                        f"({by_name}), no work of the program's own; the whole capture is analysed as one pass; "
                        f"per-step numbers are capture totals")
        cl = None
    scattered = _body_in_few_bursts(t) if cl is not None else None
    if scattered is not None:  # no work runs in most bursts: they are no iterations of one loop's body
        r.whole_note = scattered
        cl = None
        turns = recurring_turns(r.active)
        if turns is not None:  # ... but some of it runs once in every turn of the loop: those turns are iterations
            r.take_spans("recurring_events", recurring_note(turns, scattered), turns.start, turns.end, "device")
            return
    if cl is not None and one_pass is not None:  # one pass of a program, exact for the window: no guessed iteration
        r.whole_note, cl = one_pass, None
    if cl is None and not r.whole_note and job is not None and job.periodic is not None:
        # no bursts apart (the host's pause between iterations shorter than a burst gap), but the launches repeat with
        # the host's wait at each repeat and a backward in every one: a training job's iterations
        own = job.periodic
        r.own = own
        r.take_spans(own.source, own.note, own.start, own.end, "host_window")
        return
    if cl is None:
        return
    late = _outside_loop_copy_bursts(BurstTable.of(r.active, *cl))
    # the set-up's copies before the loop, the read-back after it: no iteration, no part of the first or last one
    cl = _inside(cl, late)  # (read last: a one-pass reading above counts the window's every burst)
    # in words any capture's user reads, as the whole capture's note
    note = ("no step markers found; steps inferred from clusters of GPU activity separated by long "
            "idle gaps, some of the same work running in several of them")
    if joined:
        note += (f"; {plural(joined, 'burst')} of copies alone joined to the iteration it feeds (or, "
                 f"last, the one it ends)")
    note += _outside_words(early[0] + late[0], early[1] + late[1])
    r.take_spans("gpu_busy_clusters", note, *cl, "device")
