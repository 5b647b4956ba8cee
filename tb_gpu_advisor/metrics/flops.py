"""How fast could it be: FLOPs per step, model FLOPs utilisation, and each top GEMM against its roofline.

FLOPs come from the trace's own shapes (``Trace.flop_ops``: PyTorch ``record_shapes`` or XLA's HLO), or from the
user (``--model-flops-per-step`` or the tab's setting, handed in as ``Context.options``).  MFU is FLOPs per step
over (step time x the GPU's dense peak in the precision that dominates GEMM time) -- the convention of PaLM and of
every MFU table since.  Where the user gives model FLOPs and the trace gives executed FLOPs, both are reported: MFU
from the model's, HFU from the trace's.

A roofline per GEMM shape: arithmetic intensity = FLOPs / bytes of its operands and result (each moved once), the
attainable rate min(peak, intensity x memory bandwidth), and the share of it the kernels reach.  PyTorch ops find
their kernels through the launches they enclose; XLA instructions through the ``hlo_op`` their kernels carry
(which a command buffer hides: then only the module's total is known).

FLOPs that miss work are worse than none: where the ops with known FLOPs launch under ``flops.min_coverage`` of
the matmul/conv kernel time (convolutions recorded without strides, Triton GEMM templates of a compiled model), MFU
is not given, and the note says why.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tb_gpu_advisor.common.fmt import ms as fmt_ms, pct, plural
from tb_gpu_advisor import devices, frameworks
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.frameworks import xla
from tb_gpu_advisor.job.phase import captured_calls
from tb_gpu_advisor.metrics.context import PS_PER_MS, Context, Encloser, caller_across_lines
from tb_gpu_advisor.metrics.types import Flops, GemmRoofline
from tb_gpu_advisor.model.trace import FLOP_KINDS, MATRIX_FLOP_KINDS, NO_FLOP_OPS_NOTE, FlopOps
from tb_gpu_advisor.steps.types import unmarked_pass

#: Top GEMM shapes given a roofline.
TOP_N = 10
#: Where ``Flops.flops_per_step`` comes from, in words (the MFU card's meaning and note).  No window in them: the
#: card's meaning and note say what the FLOPs are of ("FLOPs in the pass / ..."), and "the model FLOPs per step
#: given as a setting" beside them named steps a one-pass capture does not hold (h37-onestepjax).
SOURCE_WORDS = {"trace shapes": "FLOPs from the traced ops' shapes", "hlo": "FLOPs from the compiled XLA programs",
                "user": "the model FLOPs given as a setting"}



#: what a roofline table's ms are: each shape's own kernel time, concurrent kernels each counted -- a rate is FLOPs
#: over the time its kernels ran, so it is not the kernel classes' time, each microsecond once (h37-coldshare34).  The
#: report's roofline table and mfu_low's evidence table both say it (h37-floor35), after the window they are of ("per
#: step", "in the pass"): a one-pass title read "(host-wide in the pass; ms/step: ...)" (walk seed 42751 of --forms13).
ROOF_TIME = "ms: each shape's own kernel time, concurrent kernels each counted"
#: Why no MFU where the capture's HLO holds no matmul or convolution in any module: the FLOPs MFU counts are those
#: of matrix units' work, and the program has none (element-wise, reduction and data-movement kernels only).
_NO_MATMUL = ("the capture's HLO holds no matmul or convolution in any module: the program does no work MFU counts "
              "(its kernels are element-wise, reductions and copies), so MFU does not apply")

def flops(ctx: Context, step_ms: float | None) -> Flops:
    """The FLOPs, MFU and rooflines of one host over its kept steps (per GPU: the host's share of one GPU)."""
    fo = ctx.trace.flop_ops
    user = ctx.options.model_flops  # the user's (--model-flops-per-step, the tab's setting), handed in
    active = ctx.active
    n = ctx.steps.count
    if not active or not n or not step_ms:
        # "{kept}": the window's words, filled where the card is said (``report.build.mfu_card``): "in the pass"
        return Flops(note="no GPU kernels in {kept}", user_flops_per_step=user)
    info = active[0].d.info
    rows = _row_kernels(ctx, fo) if fo is not None else None
    coverage = _coverage(ctx, rows)
    matrix = np.isin(fo.kind, MATRIX_FLOP_KINDS) if fo is not None else None
    runs = _xla_runs(ctx, fo)
    total, counted = _in_steps(ctx, fo, matrix, runs) if fo is not None else (None, None)
    traced = ctx.per_step(total) if total is not None else None
    vector = ctx.per_step(_in_steps(ctx, fo, ~matrix, runs)[0]) if fo is not None and not matrix.all() else None
    dtype = _dtype(ctx, fo, rows)
    own = devices.peak_flops(info.name, info.compute_capability, dtype, sm_count=info.sm_count,
                             clock_hz=info.clock_hz, memory_bytes=info.memory_bytes) if dtype is not None else None
    peak, peak_dtype = _mfu_peak(info, dtype, own)
    bw = devices.memory_bandwidth(info.name, info.compute_capability, measured=info.memory_bandwidth,
                                  sm_count=info.sm_count, clock_hz=info.clock_hz, memory_bytes=info.memory_bytes)
    out = Flops(step_ms=step_ms, user_flops_per_step=user, dtype=devices.PRECISIONS[dtype] if dtype is not None else None,
                peak_flops=peak.value if peak else None, peak_source=peak.source if peak else None,
                memory_bandwidth=bw.value if bw else None, bandwidth_source=bw.source if bw else None,
                coverage=coverage, note=ctx.trace.flops_note)
    usable = traced is not None and traced > 0 and (coverage is None or coverage >= T("flops.min_coverage"))
    if fo is not None and fo.source == "hlo" and not traced:
        # a program with no matmul or convolution at all (a tridiagonal solver's element-wise loops: survey
        # h37-survey32) has no model FLOPs to count: said as that, not as module events the capture lacks
        out.note = (_NO_MATMUL if not len(fo) else
                    "the capture's HLO gives each module's FLOPs, but no execution of a module with matmul work was "
                    "found in {kept} (no `<module>:XLA GPU module` host event)")  # "{kept}": as "no GPU kernels in"
    if traced is not None and not usable and coverage is not None:
        out.note = (f"the ops whose shapes give FLOPs launch {pct(coverage, 0)} of the matmul/conv kernel time "
                    f"(under {pct(T('flops.min_coverage'), 0)}): " + (ctx.trace.flops_note or _MISSING_WHY))
    if fo is None and ctx.trace.flops_note in (None, NO_FLOP_OPS_NOTE):
        # no op recorded matmul shapes: where matmul kernels ran anyway (replayed from a graph), say so -- "no matmul
        # op" beside a kernel table of GEMMs reads as no matmul work (h37-mfugraph)
        out.note = _unshaped_matmuls(ctx) or out.note
    if fo is not None and not traced:
        out.note = _captured_only(ctx, fo) or out.note
    out.trace_flops_per_step = traced if usable else None
    if usable and counted:  # a program's executions read from its kernels, not its records: what that assumed
        out.note = f"{out.note}; {counted}" if out.note else counted
    if fo is not None and not matrix.all():  # depthwise work: the peak its rows are rated against (``_unit_peak``)
        out.vector_peak_flops = _vector_peak(info, _vector_dtype(fo, ~matrix))[0]
    if vector and (usable or not traced):  # where the FLOPs miss matrix work they say nothing of the rest either
        out.vector_flops_per_step = vector
        out.vector_note = _vector_words(vector, bool(user))
    out.flops_per_step, out.source = (user, "user") if user else (out.trace_flops_per_step, fo.source if usable else None)
    if out.flops_per_step:
        out.tflops_per_s = out.flops_per_step / (step_ms / 1e3) / 1e12
    out.peak_dtype = devices.PRECISIONS[peak_dtype] if peak_dtype is not None else None
    if out.flops_per_step and peak:
        out.mfu = out.flops_per_step / (step_ms / 1e3) / peak.value
        if user and out.trace_flops_per_step:
            out.hfu = out.trace_flops_per_step / (step_ms / 1e3) / peak.value
    if out.flops_per_step and own:  # beside it, against the peak of the dtype the GEMMs run in
        out.dtype_peak_flops = own.value
        out.dtype_mfu = out.flops_per_step / (step_ms / 1e3) / own.value
    if rows is not None:
        _rooflines(ctx, fo, rows, out)
    return out


def _vector_dtype(fo: FlopOps, rows: np.ndarray) -> int:
    """The type most of the vector units' FLOPs (``rows``) are in (fp32 where none): the card's ``vector_peak_flops``
    is that type's vector peak (:func:`_vector_peak`), the roof the depthwise rows were rated against -- a 16-bit
    one's own where published (an A100's 78 TFLOP/s fp16, not its fp32 19.5), fp32's, a floor of it, elsewhere."""
    by: dict[int, float] = defaultdict(float)
    for p, f in zip(fo.precision[rows].tolist(), fo.flops[rows].tolist()):
        by[p] += f
    return max(by, key=by.get) if by else devices.P_FP32


def _vector_words(vector: float, user: bool) -> str:
    """What MFU leaves out where the trace holds depthwise convolutions: their FLOPs, and why.  ``user``: MFU is of the
    model FLOPs the user gave, which may hold them -- said so, since the trace cannot tell."""
    said = (f"{vector / 1e9:,.3g} GFLOP {{per_step}} of depthwise convolutions run on the vector units: "
            "they are not in the FLOPs MFU counts over the matrix units' peak")
    return said + ("; the model FLOPs given as a setting may count them" if user else "")


def _unshaped_matmuls(ctx: Context) -> str | None:
    """Why no FLOPs where matmul/attention kernels ran in the kept steps but no op recorded their shapes, None where
    no such kernel ran (then no matmul op and no matmul kernel: the trace's own note stands).

    A graph replay is one launch on the host: its kernels have no op of their own, so nothing records their shapes
    (``DeviceEvents.graph_id``).  No bound is given: MFU's FLOPs are of matmul work, and kernel names do not say
    every kernel that does it (a library's batched GEMM named for its dtypes alone), so the matmul kernels' time
    bounds no FLOP count, and the GPU's busy time bounds it too loosely to read as an estimate."""
    n = 0
    dur = graph = 0.0
    for g in ctx.active:
        d = g.d
        m = (d.kind == devices.KIND_KERNEL) & (g.step >= 0) & gemm_events(d, ctx)
        if not m.any():
            continue
        t = (d.end[m] - d.start[m]).astype(np.float64)
        n += int(m.sum())
        dur += float(t.sum())
        if d.graph_id is not None and len(d.graph_id):
            graph += float(t[d.graph_id[m] >= 0].sum())
    if not n:
        return None
    calls = ctx.per_step(n)
    ms = ctx.per_step(dur, unit=PS_PER_MS)
    whole = abs(calls - round(calls)) < 1e-9
    ran = ((f"{plural(round(calls), 'matmul/conv kernel')} ran" if whole else
            f"{_tenths(calls)} matmul/conv kernels ran on average") +
           f" {_per_step_words(ctx)} ({fmt_ms(ms)}) but no op recorded their shapes, so their FLOPs are unknown")
    if graph >= 0.5 * dur:
        words = devices.vendor(ctx.active[0].d.info.name).TERMS["graphs"]
        ran += (f": {pct(graph / dur, 0)} of their time ran in replays of {words}, and a replay is one launch on the host, "
                "with no op per kernel to record shapes")
    return ran


def _per_step_words(ctx: Context) -> str:
    """What a count of the kept steps is per: "per step and GPU"; "in the pass" (per GPU where several share it) where
    the one step kept is the pass an unmarked capture was read as (``steps.types.UNMARKED_SOURCES``) -- the capture
    marks no step, so "per step" spoke of steps it does not hold (h37-words20: rocprof_aiter_mi355x's "3 matmul/conv
    kernels ran per step and GPU" in its one pass)."""
    if unmarked_pass(ctx.steps.count, ctx.steps.detection.source):
        return "in the pass" + (" per GPU" if ctx.ranks > 1 else "")
    return "per step and GPU"


def _tenths(k: float) -> str:
    """A mean count as every count per step is printed, to a tenth ("0.9", never "0.877": a count is no measurement
    of three digits); one too small for a tenth to its first digit ("0.04")."""
    return f"{k:,.1f}" if round(k, 1) else f"{k:.1g}"


_MISSING_WHY = ("other matmul/conv kernels are launched by ops the trace gives no shapes for (a compiled model's "
                "Triton GEMMs, convolutions recorded without strides before PyTorch 1.10)")


# ---------------------------------------------------------------------------------------------- kernels per row

@dataclass
class _RowKernels:
    """Per active GPU: the FLOP row of each device event (-1 none), and which events are matmul/conv kernels."""

    row: dict[int, np.ndarray] = field(default_factory=dict)
    gemm: dict[int, np.ndarray] = field(default_factory=dict)


def _row_kernels(ctx: Context, fo: FlopOps) -> _RowKernels:
    """Each kernel's FLOP row: PyTorch through the host op enclosing its launch, XLA through its HLO op."""
    out = _RowKernels()
    h = ctx.h
    enc = row_of_host = None
    if fo.source == "trace shapes":
        mask = np.zeros(len(h), bool)
        mask[fo.host_idx] = True
        enc = Encloser(h, mask)
        row_of_host = np.full(len(h), -1, np.int64)
        row_of_host[fo.host_idx] = np.arange(len(fo))
    by_op = {f"{m}/{o}": i for i, (m, o) in enumerate(zip(fo.module, fo.op_name))} if fo.module else {}
    for g in ctx.active:
        d = g.d
        kern = (d.kind == devices.KIND_KERNEL) & (g.step >= 0)
        out.gemm[d.gpu] = kern & gemm_events(d, ctx)
        row = np.full(len(d), -1, np.int64)
        if enc is not None:
            idx = np.flatnonzero(kern & (g.launch >= 0))
            host = enc.find(g.launch[idx].astype(np.int64, copy=False))
            ok = host >= 0
            row[idx[ok]] = row_of_host[host[ok]]
        elif by_op:
            per_text = np.array([by_op.get(xla.module_op(t), -1) for t in d.op_text] or [-1], np.int64)
            has = kern & (d.op_idx >= 0)
            row[has] = per_text[d.op_idx[has]]
        out.row[d.gpu] = row
    return out


def gemm_names(names: list[str]) -> np.ndarray:
    """Bool per name: a matmul/conv/attention kernel by its library's naming (any vendor)."""
    return (frameworks.gemm_kernel(names) | devices.tensor_core(names)) & ~frameworks.not_gemm_kernel(names)


def gemm_events(d, ctx: Context | None = None) -> np.ndarray:  # noqa: ANN001 - DeviceEvents
    """Bool per event: a matmul/conv/attention kernel by its library's naming (any vendor).

    With ``ctx`` the answer is made once per GPU (read-only, kept in ``ctx.memo`` with the name column it was made
    from) and each distinct name is classified once per analysis: the breakdown's critical time and the FLOP count
    both ask it for every GPU, and the 8 GPUs of a capture share most of their kernel names (a few regex searches
    each)."""
    if not len(d):
        return np.zeros(0, bool)
    if ctx is None:
        return gemm_names(d.names)[d.name]
    key = ("gemm_events", d.gpu)
    got = ctx.memo.get(key)
    if got is not None and got[0] is d.name and got[1] is d.names:
        return got[2]
    out = ctx.by_name(gemm_names, d.names)[d.name]
    out.flags.writeable = False
    ctx.memo[key] = (d.name, d.names, out)
    return out


def _coverage(ctx: Context, rows: _RowKernels | None) -> float | None:
    """The share of matmul/conv kernel time in kept steps launched by rows with known FLOPs (PyTorch only: an XLA
    module's FLOPs are the whole program's, whatever its kernels are called); None where it does not apply."""
    if rows is None or ctx.trace.flop_ops.source != "trace shapes":
        return None
    total = known = 0.0
    for g in ctx.active:
        d, m = g.d, rows.gemm[g.d.gpu]
        dur = (d.end - d.start).astype(np.float64)
        total += float(dur[m].sum())
        known += float(dur[m & (rows.row[d.gpu] >= 0)].sum())
    return known / total if total else None


# ---------------------------------------------------------------------------------------------- per step

def _in_steps(ctx: Context, fo: FlopOps, rows: np.ndarray,
              runs: tuple[dict[str, int], str | None] | None) -> tuple[float, str | None]:
    """FLOPs of the kept steps of the ``rows`` picked (bool per row: the matrix units' kinds, or the vector units'),
    host-wide (``Context.per_step`` makes them one GPU's per step): each op call once in the step its host event
    starts in (PyTorch); each module's FLOPs times its executions in kept steps (XLA: ``runs``, :func:`_xla_runs`).
    With them, what the count assumed where a program's executions were not read from their records (None
    elsewhere)."""
    if fo.source == "trace shapes":
        st = ctx.host_step[fo.host_idx]
        # an op called while its thread captures a graph launches nothing: its kernels are recorded, not run (SGLang's
        # start-up capture of its decode graph: 484 GFLOP of captured GEMMs read as the step's work, h37-survey50)
        return float(fo.flops[rows & (st >= 0) & ~captured_calls(ctx.h, fo.host_idx)].sum()), None
    reps = fo.repeats if fo.repeats is not None else np.ones(len(fo))
    execs, note = runs if runs is not None else ({}, None)
    branch = fo.branch if fo.branch is not None else np.zeros(len(fo), bool)
    per_module: dict[str, float] = defaultdict(float)
    for m, f, r in zip(fo.module, np.where(rows & ~branch, fo.flops, 0.0).tolist(), reps.tolist()):
        per_module[m] += f * r
    total = sum(f * execs.get(m, 0) for m, f in per_module.items())
    if not (rows & branch).any():
        return total, note
    ran, bound = _branch_runs(ctx, fo, rows & branch, reps, execs)
    total += float((fo.flops * ran).sum())
    return total, "; ".join(x for x in (note, bound) if x) or None


def _branch_runs(ctx: Context, fo: FlopOps, sel: np.ndarray, reps: np.ndarray,
                 execs: dict[str, int]) -> tuple[np.ndarray, str | None]:
    """Runs in kept steps of the rows ``sel`` -- instructions inside a ``conditional``'s branch (``FlopOps.branch``)
    --, 0 for the other rows; and what was assumed where the kernels could not say (None: nothing).

    A branch's instruction runs only in the executions that take the branch: its runs are its kernels' in kept steps
    (each run of an XLA instruction launches its kernel), at most the module's executions times its repeats (the
    HLO's count, as if every execution took it: a library call that launches two kernels a run is not counted
    twice).  Where no kernel of the module names any of its FLOP rows' instructions (kernels without ``hlo_op``, or
    all named after a command buffer), nothing says which branch ran: every branch is counted as run, and the note
    says the FLOPs are an upper bound.

    Why: a ``lax.cond`` whose branches each hold a matmul was counted as both matmuls every execution -- the FLOPs of
    the branch not taken added to MFU (h37-xla69)."""
    ran = np.zeros(len(fo), np.float64)
    kernels = _kept_op_kernels(ctx)
    # modules whose kernels name their FLOP rows' instructions: XLA's command buffers (CUDA graphs) name every kernel
    # after the buffer (real-h100-jax: `command_buffer_1`), and say nothing of which branch ran
    seen = {m for m, op in zip(fo.module, fo.op_name) if kernels.get(f"{m}/{op}")}
    blind: set[str] = set()
    for i in np.flatnonzero(sel).tolist():
        m = fo.module[i]
        most = execs.get(m, 0) * float(reps[i])
        if m in seen:
            ran[i] = min(most, kernels.get(f"{m}/{fo.op_name[i]}", 0))
        else:
            ran[i] = most
            blind.add(m)
    if not blind:
        return ran, None
    shown = sorted(blind)
    return ran, (f"the FLOPs of {', '.join(f'`{n}`' for n in shown[:3])}{' ...' if len(shown) > 3 else ''}'s "
                 f"{ctx.fw.label('flops:conditional')} count every branch as run, an upper bound: no kernel names its "
                 "HLO instruction, so which branch ran is not recorded")


def _kept_op_kernels(ctx: Context) -> dict[str, int]:
    """Kernels in kept steps of each XLA instruction, over every GPU, by ``<module>/<op>`` (``xla.module_op`` of
    their op text; a split name's by its program, ``jit_dot(79)/dot.1``).  One home for :func:`_branch_runs` and
    :func:`_least_launched`."""
    counts: dict[str, int] = defaultdict(int)
    for g in ctx.gpus:
        d = g.d
        kern = (d.kind == devices.KIND_KERNEL) & (g.step >= 0) & (d.op_idx >= 0)
        if not kern.any():
            continue
        ids, n = np.unique(d.op_idx[kern], return_counts=True)
        for i, c in zip(ids.tolist(), n.tolist()):
            key = xla.module_op(d.op_text[i])
            if key:
                counts[key] += c
    return counts


def _xla_runs(ctx: Context, fo: FlopOps | None) -> tuple[dict[str, int], str | None] | None:
    """Executions in kept steps of each XLA module of ``fo`` -- and of each program of a name read program by program
    (:func:`_program_executions`) --, with what the count assumed (None: nothing); None where the FLOPs are per op
    call (no ``fo``, or PyTorch's shapes).  Why once: the matrix units' and the vector units' FLOPs count the same
    executions, and each reading ties every kernel to its execution (:func:`_work_steps`)."""
    if fo is None or fo.source == "trace shapes":
        return None
    events = _execution_events(ctx)
    execs = _module_executions(ctx, events)
    programs = frozenset(m for m in set(fo.module) if m not in execs and xla.program_of(m) is not None)
    if not programs:
        return execs, None
    counts, note = _program_executions(ctx, programs, events)
    execs.update(counts)
    return execs, note


def _program_executions(ctx: Context, programs: frozenset[str],
                        events: tuple[np.ndarray, np.ndarray]) -> tuple[dict[str, int], str | None]:
    """Executions in kept steps of each compiled program of a module name read program by program (``jit_dot(79)``:
    ``formats.xplane.adapter.split_modules``), and what was assumed where they could not be read (None: nothing).

    From the executions' own records: each ``<module>:XLA GPU module`` host event is one execution; it names the
    module, not the program, so its program is the one its kernels name (their op text, from their ``program_id``),
    found through the launch records it holds (:func:`_executed_programs`).  Why not the kernels' counts alone: an
    instruction runs as often as the program's control flow says -- a ``lax.cond`` branch in some executions, a
    ``while`` body many times in each -- so the instruction launched least undercounts a program with a branch and
    overcounts one whose every kernel is in a loop.  Where some execution of a name is tied to no one program (no
    launch record it holds: records lost, a capture without them), that name's programs fall back to their least
    launched instruction (:func:`_least_launched`), and the note says so.  ``events``: :func:`_execution_events`."""
    idx, step = events
    modules = {xla.program_of(p)[0] for p in programs}
    names = ctx.h.names
    module = [names[int(i)][: -len(xla.GPU_MODULE_SUFFIX)] for i in ctx.h.name[idx].tolist()]
    own = np.fromiter((m in modules for m in module), bool, count=len(module))
    module = [m for m, o in zip(module, own.tolist()) if o]
    ran = _executed_programs(ctx, idx[own], modules)
    counts: dict[str, int] = defaultdict(int)
    untied = modules - set(module)  # a name with no execution record: no record to read
    for m, s, p in zip(module, step[own].tolist(), ran):
        if s < 0:
            continue
        if p is None:
            untied.add(m)
        else:
            counts[p] += 1
    fall = frozenset(p for p in programs if xla.program_of(p)[0] in untied)
    out = {p: counts[p] for p in programs - fall}
    if not fall:
        return out, None
    out.update(_least_launched(ctx, fall))
    shown = sorted(untied)
    return out, (f"the executions of {', '.join(f'`{n}`' for n in shown[:3])}{' ...' if len(shown) > 3 else ''}'s "
                 "programs are counted from their kernels (each program's least launched instruction): no host "
                 "execution record ties each execution to its program, so a program whose instructions run a varying "
                 "number of times (a branch, a loop) may be miscounted")


def _executed_programs(ctx: Context, idx: np.ndarray, modules: set[str]) -> list[str | None]:
    """Per module host event ``idx``: the program its kernels name (op text ``jit_dot(79)/...``, a program of one of
    ``modules``), None where they name none or several.  A kernel is its launch record's, and the record the
    execution's that holds it on its own line (``Encloser``: CUDA's launches) or, on a line of runtime calls alone,
    the execution running when it began (``context.caller_across_lines``: ROCm's HIP calls).  Array work over the
    kernels (:func:`_one_program`): a long capture holds millions."""
    if not len(idx):
        return []
    find = _execution_finder(ctx, idx, across_lines=True)
    codes: dict[str, int] = {}
    held: list[np.ndarray] = []
    named: list[np.ndarray] = []
    for g in ctx.gpus:
        d = g.d
        code = np.array([codes.setdefault(p, len(codes)) if (p := _kernel_program(t, modules)) else -1
                         for t in d.op_text] or [-1], np.int64)
        sel = np.flatnonzero((g.launch >= 0) & (d.op_idx >= 0))
        sel = sel[code[d.op_idx[sel]] >= 0]
        if not sel.size:
            continue
        k = find(g.launch[sel].astype(np.int64, copy=False))
        ok = k >= 0
        held.append(k[ok])
        named.append(code[d.op_idx[sel[ok]]])
    return _one_program(len(idx), held, named, list(codes))


def _one_program(n: int, held: list[np.ndarray], named: list[np.ndarray], programs: list[str]) -> list[str | None]:
    """Per execution of ``n``: the one program its kernels name (``held``: each kernel's execution, ``named``: its
    program's index into ``programs``), None where they name none or several."""
    out: list[str | None] = [None] * n
    if not held or not programs:
        return out
    width = len(programs)
    pairs = np.unique(np.concatenate(held) * width + np.concatenate(named))  # each (execution, program) once
    ex, first, count = np.unique(pairs // width, return_index=True, return_counts=True)
    one = count == 1
    for e, c in zip(ex[one].tolist(), (pairs[first[one]] % width).tolist()):
        out[e] = programs[c]
    return out


def _execution_finder(ctx: Context, idx: np.ndarray, across_lines: bool) -> Callable[[np.ndarray], np.ndarray]:
    """Per launch record: the position in ``idx`` (module host events) of the execution that holds it on its own line
    (``Encloser``), -1 for none; with ``across_lines``, on a line of runtime calls alone, the one running when it
    began (``context.caller_across_lines``: ROCm's HIP calls).  One home for :func:`_work_steps` and
    :func:`_executed_programs`, which tie kernels to executions alike."""
    mask = np.zeros(len(ctx.h), bool)
    mask[idx] = True
    enc = Encloser(ctx.h, mask)
    pos = np.full(len(ctx.h), -1, np.int64)
    pos[idx] = np.arange(len(idx))

    def find(launch: np.ndarray) -> np.ndarray:
        host = enc.find(launch).astype(np.int64)
        if across_lines:
            lost = host < 0
            if lost.any():
                host[lost] = caller_across_lines(ctx.h, mask, launch[lost])
        return np.where(host >= 0, pos[np.maximum(host, 0)], -1)
    return find


def _kernel_program(op_text: str, modules: set[str]) -> str:
    """The program an XLA kernel's op text names (``jit_dot(79)/dot.1:dot`` -> ``jit_dot(79)``) where it is a
    program of one of ``modules``; "" elsewhere."""
    key = xla.module_op(op_text).partition("/")[0]
    named = xla.program_of(key)
    return key if named is not None and named[0] in modules else ""


def _least_launched(ctx: Context, programs: frozenset[str]) -> dict[str, int]:
    """Executions in kept steps of each program of ``programs`` read from its kernels alone: the kept kernels of its
    least launched instruction, over every GPU -- every execution launches each instruction it runs at least once
    (a split-K GEMM's two kernels, one instruction, never undercount them).  The fallback of
    :func:`_program_executions` where no execution record names the program."""
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    for key, c in _kept_op_kernels(ctx).items():
        module, _, op = key.partition("/")
        if module in programs:
            counts[module][op] = c
    return {k: min(ops.values()) for k, ops in counts.items()}


def _captured_only(ctx: Context, fo: FlopOps) -> str | None:
    """Why no FLOPs where the kept steps' shaped ops were all called inside a graph capture, None elsewhere: their
    FLOPs are in the trace, but no kernel of theirs ran -- "the trace gives no FLOPs" beside 145 captured GEMMs would
    deny what the trace shows (h37-survey50)."""
    if fo.source != "trace shapes":
        return None
    inside = (ctx.host_step[fo.host_idx] >= 0) & captured_calls(ctx.h, fo.host_idx)
    if not inside.any():
        return None
    words = devices.vendor(ctx.active[0].d.info.name).TERMS["graphs"]
    return (f"the {plural(int(inside.sum()), 'matmul/conv op')} whose shapes give FLOPs "
            f"({float(fo.flops[inside].sum()) / 1e9:,.0f} GFLOP) were called while {words} were captured: their "
            "kernels were recorded into the graph, not run, so no model work ran to measure")


def _module_executions(ctx: Context, events: tuple[np.ndarray, np.ndarray]) -> dict[str, int]:
    """Executions of each XLA module in kept steps: its ``<module>:XLA GPU module`` host events (one per execution
    and GPU), each in the kept step its host event starts in -- or, where the steps are the GPU's own windows
    (``StepDetection.mapped_via`` "device"), in the one its work ran in (:func:`_work_steps`; the host start where
    no kernel of its launches is recorded on its line).

    Why by its work there: a step read from the GPU's time (the one pass of an unmarked capture starts at its first
    GPU work, ``steps.drop``) opens after the host began the launch that made that work -- keyed by its host start,
    the pass's only execution lay outside it, and MFU read "no execution ... found (no `<module>:XLA GPU module`
    host event)" beside the event (walk seed 52430, ``--xplane``).  Why not where the program marks its steps: its
    marker encloses the call and says its step, while the kernels of a step's last call run past the marker's end
    (real-h100-jax input_bound: 8 of 18 executions' first kernels in the next step's window, the last one's after
    every kept step -- 17 counted in 18 steps)."""
    h = ctx.h
    idx, step = events  # :func:`_execution_events`
    names, counts = np.unique(h.name[idx[step >= 0]], return_counts=True)
    return {h.names[int(i)][: -len(xla.GPU_MODULE_SUFFIX)]: int(c) for i, c in zip(names, counts)}


def _execution_events(ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    """Every ``<module>:XLA GPU module`` host event (one per execution and GPU) and the kept step it counts in (-1
    none), as :func:`_module_executions` places them."""
    idx = np.flatnonzero(ctx.h.name_mask(lambda n: n.endswith(xla.GPU_MODULE_SUFFIX)))
    ran = (_work_steps(ctx, idx) if ctx.steps.detection.mapped_via == "device"
           else np.full(len(idx), _NO_WORK, np.int64))
    return idx, np.where(ran != _NO_WORK, ran, ctx.host_step[idx].astype(np.int64))


#: :func:`_work_steps`' mark of a module event none of whose launches' device events the trace ties to it
_NO_WORK = -2


def _work_steps(ctx: Context, idx: np.ndarray) -> np.ndarray:
    """Per module host event ``idx``: the kept step (-1 none) its first kernel started in, of those whose launch
    record it encloses on its own line (``Encloser``); :data:`_NO_WORK` where none is (launches on a runtime line
    of their own, as ROCm's are; records lost).  Kernels alone: the FLOPs are theirs, and a module's input copy or
    memset runs at once where its kernels queue behind the last execution's (a GPU running a step behind its host:
    the copy in step 0's lead-in, the kernels in step 1)."""
    out = np.full(len(idx), _NO_WORK, np.int64)
    first = np.full(len(idx), np.iinfo(np.int64).max, np.int64)
    if not len(idx):
        return out
    find = _execution_finder(ctx, idx, across_lines=False)
    for g in ctx.gpus:
        sel = np.flatnonzero((g.launch >= 0) & (g.d.kind == devices.KIND_KERNEL))
        k = find(g.launch[sel].astype(np.int64, copy=False))
        ok = k >= 0
        if not ok.any():
            continue
        p, ev = k[ok], sel[ok]
        start = g.d.start[ev].astype(np.int64)
        order = np.lexsort((start, p))
        up, at = np.unique(p[order], return_index=True)
        e0, s0 = ev[order][at], start[order][at]
        earlier = s0 < first[up]
        first[up[earlier]] = s0[earlier]
        out[up[earlier]] = g.step[e0[earlier]]
    return out


# ---------------------------------------------------------------------------------------------- precision

#: The dtypes training runs its matmuls in on the matrix units: MFU is over the best dense peak among them (PaLM's
#: convention), so an fp32 run is not "73.9% MFU" beside a 6x faster bf16 run at 64%.
_TRAINING_DTYPES = (devices.P_BF16, devices.P_FP16)


def _mfu_peak(info, dtype: int | None, own):  # noqa: ANN001, ANN202 - DeviceInfo, Peak
    """(peak, its dtype) MFU is over: the GPU's best dense 16-bit peak, or the run's own dtype's when that is higher
    (fp8, int8); the run's own where the GPU has no 16-bit figure."""
    best, which = None, None
    for p in _TRAINING_DTYPES:
        pk = devices.peak_flops(info.name, info.compute_capability, p, sm_count=info.sm_count, clock_hz=info.clock_hz,
                                memory_bytes=info.memory_bytes)
        if pk is not None and (best is None or pk.value > best.value):
            best, which = pk, p
    if own is not None and (best is None or own.value > best.value):
        return own, dtype
    return best, which


def _dtype(ctx: Context, fo: FlopOps | None, rows: _RowKernels | None) -> int | None:
    """The precision MFU's peak is of: the one that runs most matmul/conv kernel time, by the kernels' names (an
    fp32 matmul on TF32 Tensor Cores is TF32); else the one of most FLOPs, by the ops' inputs."""
    time: dict[int, float] = defaultdict(float)
    for g in ctx.active:
        m = rows.gemm[g.d.gpu] if rows is not None else ((g.step >= 0) & gemm_events(g.d, ctx))
        dur = (g.d.end[m] - g.d.start[m]).astype(np.float64)
        for p, t in zip(*_sum_by(g.name_prec[m], dur)):
            time[p] += t
    known = {p: t for p, t in time.items() if p not in (devices.P_UNKNOWN, devices.P_OTHER)}
    if known and sum(known.values()) >= 0.5 * sum(time.values()):
        return max(known, key=known.get)
    if fo is not None and len(fo):
        by = defaultdict(float)
        for p, f in zip(fo.precision.tolist(), fo.flops.tolist()):
            by[p] += f
        best = max(by, key=by.get)
        return best if best != devices.P_UNKNOWN else None
    return None


def _sum_by(keys: np.ndarray, vals: np.ndarray) -> tuple[list[int], list[float]]:
    if not keys.size:
        return [], []
    u, inv = np.unique(keys, return_inverse=True)
    return u.tolist(), np.bincount(inv.reshape(-1), weights=vals).tolist()


# ---------------------------------------------------------------------------------------------- rooflines

def _rooflines(ctx: Context, fo: FlopOps, rows: _RowKernels, out: Flops) -> None:
    """The top GEMM shapes by kernel time, each against its roofline; the share of GEMM time far below its roofline.

    Per step and GPU, like the rest of :class:`Flops`: every GPU's calls and kernel time over the active GPUs (a
    sum over 4 GPUs printed "5.94 ms/step" in a 3.74 ms step, issue #36); a shape's achieved rate is its calls'
    FLOPs over their time, the same whatever the GPU count."""
    n = ctx.steps.count
    info = ctx.active[0].d.info
    acc: dict[str, dict] = {}
    for g in ctx.active:
        d, row = g.d, rows.row[g.d.gpu]
        has = np.flatnonzero(row >= 0)
        if not has.size:
            continue
        dur = (d.end[has] - d.start[has]).astype(np.float64) / PS_PER_MS
        gemm = rows.gemm[d.gpu][has]
        fewer = ctx.by_name(devices.fewer_multiplies, d.names)[d.name[has]]
        for r, t, p, gm, fw in zip(row[has].tolist(), dur.tolist(), g.name_prec[has].tolist(), gemm.tolist(),
                                   fewer.tolist()):
            a = acc.setdefault(fo.label[r], {"ms": 0.0, "gemm_ms": 0.0, "rows": set(), "prec": defaultdict(float),
                                             "gemm_prec": defaultdict(float), "row": r, "kernels": 0, "gemm_kernels": 0,
                                             "fewer": False})
            a["fewer"] = a["fewer"] or fw
            a["ms"] += t
            a["rows"].add(r)
            a["prec"][p] += t
            a["kernels"] += 1
            if gm:
                a["gemm_kernels"] += 1
                a["gemm_ms"] += t
                a["gemm_prec"][p] += t
    if not acc:
        return
    # work by kernel, not by op: under autocast an ``aten::linear`` also launches its casts and bias add; where the
    # op launched GEMM kernels (by their library's naming), its time and precision are theirs alone, and the rest is
    # named as what it is (``Flops.non_gemm_ms_per_step``).  An op whose kernels no library names (a Triton template)
    # keeps all of its kernels' time.
    other = sum(a["ms"] - a["gemm_ms"] for a in acc.values() if a["gemm_kernels"])
    out.non_gemm_ms_per_step = ctx.per_step(other) if n else None
    for a in acc.values():
        if a["gemm_kernels"]:
            a["ms"], a["prec"] = a["gemm_ms"], a["gemm_prec"]
    step_of_row = ctx.host_step[fo.host_idx] if fo.source == "trace shapes" else None
    items = []
    floors: dict[str, float] = {}
    for lab, a in acc.items():
        r = a["row"]
        if step_of_row is not None:  # PyTorch: each row is one call
            calls = sum(1 for x in a["rows"] if step_of_row[x] >= 0)
        else:  # XLA: each execution of the instruction launches its GEMM kernel once
            calls = a["gemm_kernels"] or a["kernels"]
        prec = _kernel_precision(a["prec"], int(fo.precision[r]))
        peak, exact = _unit_peak(info, int(fo.kind[r]), prec)
        # a Winograd or FFT convolution multiplies less than its op's direct FLOPs (``devices.fewer_multiplies_one``):
        # its units' peak bounds those FLOPs' rate from below only, so only the bytes' roof is known
        exact = exact and not a["fewer"]
        items.append(_roofline(lab, int(fo.kind[r]), prec, ctx.per_step(calls), float(fo.flops[r]), float(fo.bytes[r]),
                               ctx.per_step(a["ms"]), peak, out.memory_bandwidth, exact))
        # a peak known only as a floor of the units' (16-bit work on vector units of unpublished rate, a Winograd
        # convolution's direct FLOPs) gives no least time for FLOPs: the bytes' alone is the floor
        floor = _floor_ms(ctx.per_step(calls), float(fo.flops[r]) if exact else 0.0, float(fo.bytes[r]), peak,
                          out.memory_bandwidth)
        if floor is not None:
            floors[lab] = min(floor, ctx.per_step(a["ms"]))
    # physics: no kernel beats its GPU's peak -- a shape that does has kernels missing from its time (launched by
    # another op, or on another GPU), so its rate says nothing and it is left out, with the reason
    impossible = [x for x in items if x.tflops_per_s and x.attainable_tflops_per_s and x.bound == "compute"
                  and x.tflops_per_s > T("flops.max_peak_share") * x.attainable_tflops_per_s]
    if impossible:
        items = [x for x in items if x not in impossible]
        why = (f"{plural(len(impossible), 'GEMM shape')} would run above the GPU's peak ({impossible[0].label}: "
               f"{impossible[0].tflops_per_s:.0f} TFLOP/s): their kernels are not all attributed to them, so they are "
               "left out of the rooflines")
        out.note = f"{out.note}; {why}" if out.note else why
    kept = {x.label for x in items}
    out.floor_ms_per_step = sum(v for lab, v in floors.items() if lab in kept) if floors else None
    _mark_above_floor(ctx, fo, rows, acc, {lab: v for lab, v in floors.items() if lab in kept})
    items.sort(key=lambda x: -x.ms_per_step)
    out.top = items[:TOP_N]
    for kind in dict.fromkeys(x.kind for x in items):
        mine = [x for x in items if x.kind == kind]
        t = sum(x.ms_per_step for x in mine)
        if t > 0:
            out.by_kind[kind] = [t, sum(x.flops_per_call * x.calls_per_step for x in mine) / (t / 1e3) / 1e12]
    # the GEMM figures are the matrix units' work, as MFU's FLOPs are: a depthwise row stands in ``by_kind`` alone
    items = [x for x in items if x.on_matrix_units]
    total = sum(x.ms_per_step for x in items)
    if not total:
        return
    low = T("flops.low_roofline_share")
    out.gemm_ms_per_step = total
    out.gemm_tflops_per_s = sum(x.flops_per_call * x.calls_per_step for x in items) / (total / 1e3) / 1e12
    rated = [x for x in items if x.roofline_share is not None]
    if rated:
        out.below_roofline_share = sum(x.ms_per_step for x in rated if x.roofline_share < low) / \
            sum(x.ms_per_step for x in rated)


def _vector_peak(info, prec: int = devices.P_FP32) -> tuple[float | None, bool]:  # noqa: ANN001 - DeviceInfo
    """(the vector units' peak of the host's GPU for ``prec``, whether it is that peak or only a floor of it), the one
    :func:`_unit_peak` rates depthwise rows against: fp32's (``devices.vector_peak_flops``); a 16-bit type's where its
    generation's rate is published (``devices.vector_peak_16``), else fp32's as a floor (no vector unit runs 16 bits
    slower); (None, False) for any other type or where nothing is known."""
    kw = dict(sm_count=info.sm_count, clock_hz=info.clock_hz, memory_bytes=info.memory_bytes)
    if prec not in _VECTOR_FLOOR_TYPES:
        return None, False
    if prec != devices.P_FP32:
        own = devices.vector_peak_16(info.name, info.compute_capability, prec, **kw)
        if own is not None:
            return own.value, True
    peak = devices.vector_peak_flops(info.name, info.compute_capability, **kw)
    return (peak.value if peak else None), prec == devices.P_FP32


def _unit_peak(info, kind: int, prec: int) -> tuple[float | None, bool]:  # noqa: ANN001 - DeviceInfo
    """(peak FLOP/s of the units a row's work runs on, whether it is that peak or only a floor of it).  The matrix
    units' kinds: the dense peak of the row's precision.  Work on the vector units (a depthwise convolution): their
    peak in its type (:func:`_vector_peak`: 16-bit rates where the vendor publishes them, else fp32's as a floor);
    for any other type (fp64's vector rate is below fp32's) no peak is known.  Why: a depthwise row read against its
    dtype's Tensor Core peak was compared with units it never uses; physics (no kernel beats its peak) holds only
    against its own units' (h37-flops68)."""
    kw = dict(sm_count=info.sm_count, clock_hz=info.clock_hz, memory_bytes=info.memory_bytes)
    if kind in MATRIX_FLOP_KINDS:
        peak = devices.peak_flops(info.name, info.compute_capability, prec, **kw)
        return (peak.value if peak else None), True
    return _vector_peak(info, prec)


#: The types whose vector rate the vector units' fp32 peak is (fp32) or bounds from below (16 bits)
_VECTOR_FLOOR_TYPES = (devices.P_FP32, devices.P_FP16, devices.P_BF16)


def _mark_above_floor(ctx: Context, fo: FlopOps, rows: _RowKernels, acc: dict[str, dict],
                      floors: dict[str, float]) -> None:
    """Set each active GPU's ``GpuCtx.above_floor``: per kernel, the share of its shape's kernel time above the
    shape's floor at the GPU's peaks (1.0 where no floor is known).

    Why: a fix that speeds kernels up takes at most their time above that floor -- small_grid claimed 1.18 ms of
    "filling the SMs" of GEMVs already reading their weights at 97% of the memory bandwidth (decode_near_peak_and_chain,
    h37-pool36).  Of a shape whose op launched GEMM kernels only those carry the floor (its time is theirs alone)."""
    if not floors:
        return
    share = np.ones(len(fo.label), dtype=np.float64)
    gemm_only = np.zeros(len(fo.label), dtype=bool)
    for lab, floor in floors.items():
        a = acc[lab]
        t = ctx.per_step(a["ms"])
        r = np.fromiter(a["rows"], dtype=np.int64)
        share[r] = max(0.0, t - floor) / t if t > 0 else 1.0
        gemm_only[r] = bool(a["gemm_kernels"])
    for g in ctx.active:
        row = rows.row[g.d.gpu]
        has = row >= 0
        out = np.ones(row.shape[0], dtype=np.float64)
        rr = row[has]
        out[has] = np.where(gemm_only[rr] & ~rows.gemm[g.d.gpu][has], 1.0, share[rr])
        g.above_floor = out


def _floor_ms(calls: float, flops_call: float, bytes_call: float, peak: float | None, bw: float | None) -> float | None:
    """The least ms per step a shape's calls take at the GPU's peaks: its FLOPs at the peak FLOP/s, its operands' and
    result's bytes at the memory bandwidth, whichever takes longer (the roofline's own time); None without a peak --
    on a GPU whose peak is unknown nothing is said of its limits."""
    if not peak or calls <= 0:
        return None
    secs = flops_call / peak
    if bw and bytes_call > 0:
        secs = max(secs, bytes_call / bw)
    return calls * secs * 1e3


def _kernel_precision(by_time: dict[int, float], inputs: int) -> int:
    """The precision its kernels' names say (most time), else its inputs' dtype."""
    known = {p: t for p, t in by_time.items() if p not in (devices.P_UNKNOWN, devices.P_OTHER)}
    return max(known, key=known.get) if known else inputs


def _roofline(label: str, kind: int, prec: int, calls: float, flops_call: float, bytes_call: float, ms_step: float,
              peak: float | None, bw: float | None, exact: bool = True) -> GemmRoofline:
    """One GEMM shape against min(peak, intensity x bandwidth).  ``exact`` False: ``peak`` is only a floor of its
    units' peak (:func:`_unit_peak`), so the roof is known only where the bandwidth's is under it (memory-bound)."""
    secs = ms_step / 1e3
    achieved = flops_call * calls / secs if secs > 0 and calls > 0 else None
    intensity = flops_call / bytes_call if bytes_call > 0 else None
    attainable = bound = None
    if peak and intensity and bw:
        if exact or intensity * bw < peak:
            attainable = min(peak, intensity * bw)
            bound = "compute" if peak <= intensity * bw else "memory"
    elif peak and exact:
        attainable, bound = peak, "compute"
    share = achieved / attainable if achieved and attainable else None
    return GemmRoofline(label=label, kind=FLOP_KINDS[kind], precision=devices.PRECISIONS[prec], calls_per_step=calls,
                        flops_per_call=flops_call, ms_per_step=ms_step,
                        tflops_per_s=achieved / 1e12 if achieved else None, intensity=intensity,
                        attainable_tflops_per_s=attainable / 1e12 if attainable else None, roofline_share=share,
                        bound=bound)
