"""One host's report: its metrics as headline cards (graded by the rule that owns each), tables, step rows
and per-GPU summaries, with the findings the rules made of them."""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from tb_gpu_advisor import devices, frameworks, rules
from tb_gpu_advisor.common.fmt import pct as _pct
from tb_gpu_advisor.common.fmt import ms as fmt_ms
from tb_gpu_advisor.common.fmt import plural
from tb_gpu_advisor.common.jsonout import json_float
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.metrics.context import PS_PER_MS
from tb_gpu_advisor.metrics.flops import SOURCE_WORDS
from tb_gpu_advisor.metrics.job import calls_before_note, med_count
from tb_gpu_advisor.metrics.job import med as median
from tb_gpu_advisor.metrics.types import BREAKDOWN_CATEGORIES, HostMetrics, KernelDurations, StepTable
from tb_gpu_advisor.job.kind import NO_GPU_STEP
from tb_gpu_advisor.job.phase import NOT_TIMED, ONE_PASS, TEAR_DOWN, shown_phase, untimed_phase
from tb_gpu_advisor.model.callrows import call_columns
from tb_gpu_advisor.model.schema import KERNEL_WALL_US, TABLE_ROWS, WALL_US, Finding, GpuSummary, HostReport, Metric, Table
from tb_gpu_advisor.model.steprows import StepRowTable
from tb_gpu_advisor.model.damage import Damage, as_damage
from tb_gpu_advisor.model.trace import contradictions, unreadable
from tb_gpu_advisor.rules.base import DEVICE_SHARE_LABEL, Ctx
from tb_gpu_advisor.rules.headline import grade_card
from tb_gpu_advisor.report.verdict import DAMAGED_NO_GPU, host_loop_words, no_gpu_step, no_gpu_step_reason, no_promise_reason
from tb_gpu_advisor.rules.savings import achievable
from tb_gpu_advisor.steps.types import SOURCE_LABEL, UNMARKED_SOURCES

TOP_N = TABLE_ROWS


def headline_cards(m: HostMetrics, findings: list[Finding]) -> list[Metric]:
    """The guide's overview numbers as cards, graded with the host's findings (rules/headline.py)."""
    h = m.headline
    fw = frameworks.get(m.capture.framework)
    ctx = Ctx(m)
    step = ctx.step_noun  # the window the cards' shares are of: "share of the pass ..." on one pass (h37-words23)
    cards = [
        Metric("device_step_share", ctx.window_words(DEVICE_SHARE_LABEL), json_float(h.device_step_share), "share", _pct(h.device_step_share), "higher",
               meaning=f"share of the {step} the GPU spends executing kernels (guide 1: maximize)",
               detail={"avg_step_ms": json_float(h.avg_step_ms), "device_compute_ms": _per_step_ms(m, m.breakdown.device_compute)}),
        _unrecorded_ops(m, _not_applicable(fw, m, Metric(
            "host_op_share", "Ops placed on host", json_float(h.host_op_share_by_count), "share",
            _pct(h.host_op_share_by_count), "lower", meaning=fw.label("host_op_meaning"),
            detail={"by_time": json_float(h.host_op_share_by_time), "host_ops": h.host_op_count,
                    "device_ops": h.device_op_count}))),
        Metric("sixteen_bit_share", "16-bit kernel time", json_float(h.sixteen_bit_time_share), "share", _sixteen_display(h), "higher",
               meaning="share of GPU kernel time of known precision in fp16 or bf16 kernels (guide: how many kernels use fp16); "
                       "kernels whose name gives no dtype (compiler fusions, Triton GEMMs) are left out and counted in detail",
               detail={"fp16_kernels": h.fp16_kernel_count, "bf16_kernels": h.bf16_kernel_count, "kernels": h.kernel_count,
                       "fp16_share": json_float(h.fp16_time_share), "bf16_share": json_float(h.bf16_time_share),
                       "tensor_core_share": json_float(h.tensor_core_time_share),
                       "unknown_precision_share": json_float(h.unknown_precision_share),
                       "eight_bit_share": json_float(h.eight_bit_time_share),
                       # only where the display says it: no known precision, some kernel time typed bytes alone
                       **({"integer_data_share": json_float(h.integer_data_share)} if _said_integer_data(h) else {})}),
        _unmeasured_launch(m, Metric("launch_wait_share", "Idle waiting for launch", json_float(h.launch_wait_share),
                                     "share", _pct(h.launch_wait_share), "lower",
                                     meaning=f"share of the {step} the GPU was idle waiting for the host to launch "
                                             "the next kernel",
                                     detail={"ms_per_step": _per_step_ms(m, m.breakdown.launch_wait)})),
        _not_applicable(fw, m, _held_input(m, fw, _unmeasured_input(m, Metric(
            "input_wait_share", "Waiting for input", json_float(h.input_wait_share), "share", _pct(h.input_wait_share),
            "lower", meaning=fw.label("input_wait_meaning", step=step), detail={"ms_per_step": _per_step_ms(m, m.breakdown.input_wait)})))),
        mfu_card(m),
    ]
    cards = [_in_vendor_words(m, _gpu_unrecorded(m, c)) for c in cards]
    active = any(g.active for g in m.gpus)
    return [grade_card(c, findings, active, rules.quiet_reason(rules.card_rule(c.id), m) if rules.card_rule(c.id) else "")
            for c in cards]


def _in_vendor_words(m: HostMetrics, card: Metric) -> Metric:
    """A card's meaning and its reason for no value in the words of the host's vendor (``_words``), as its findings
    say them: an Ascend NPU's snapshot, or one whose build is unnamed, read "no GPU kernels in kept steps" beside
    findings of "NPU 0" (h37-wild56m; session 55's h37-wild55v *Left* 2).  NVIDIA's words are the text's own."""
    card.meaning = _words(m, card.meaning)
    if isinstance(card.detail, dict) and isinstance(card.detail.get("not_available"), str):
        card.detail["not_available"] = _words(m, card.detail["not_available"])
    return card


def _per_step_ms(m: HostMetrics, ms_per_step: float) -> float | None:
    """A card's ms per step of a ledger part: null where the host times no step (``headline.avg_step_ms`` None: a
    window without GPU work, ``metrics.compute.gpu_step_timed``; a memory snapshot alone).  Why: such a host's ledger is
    empty, not measured at zero -- a 0.0 ms wait per step is a number of a step the window does not hold, beside the
    card's own null step (h37-walk13: input_only_rtx4090_unetr's input and launch cards)."""
    return json_float(ms_per_step) if m.headline.avg_step_ms is not None else None


def mfu_card(m: HostMetrics) -> Metric:
    """Model FLOPs utilisation: FLOPs per step over step time x the GPU's dense peak (metrics/flops.py), said of the
    host's window (``Ctx.per_step``, ``Ctx.step_noun``)."""
    f, ctx = m.flops, Ctx(m)
    detail = {"flops_per_step": json_float(f.flops_per_step, 0), "trace_flops_per_step": json_float(f.trace_flops_per_step, 0),
              "user_flops_per_step": json_float(f.user_flops_per_step, 0), "peak_flops": json_float(f.peak_flops, 0),
              "peak_source": f.peak_source, "dtype": f.dtype, "source": f.source, "tflops_per_s": json_float(f.tflops_per_s, 2),
              "hfu": json_float(f.hfu), "coverage": json_float(f.coverage), "memory_bandwidth": json_float(f.memory_bandwidth, 0),
              "bandwidth_source": f.bandwidth_source, "gemm_tflops_per_s": json_float(f.gemm_tflops_per_s, 2),
              "below_roofline_share": json_float(f.below_roofline_share),
              "by_kind": {k: [json_float(v[0], 6), json_float(v[1], 2)] for k, v in f.by_kind.items()} or None,
              "non_gemm_ms_per_step": json_float(f.non_gemm_ms_per_step, 6), "peak_dtype": f.peak_dtype,
              "dtype_peak_flops": json_float(f.dtype_peak_flops, 0), "dtype_mfu": json_float(f.dtype_mfu),
              "vector_flops_per_step": json_float(f.vector_flops_per_step, 0),
              "vector_note": ctx.window_words(f.vector_note) if f.vector_note else None,
              "vector_peak_flops": json_float(f.vector_peak_flops, 0)}
    if f.mfu is None:
        why = ctx.window_words(f.note) if f.note else ("no peak FLOP/s is known for this GPU and precision" if f.flops_per_step else
                         f"the trace gives no FLOPs: give the model's FLOPs {_flops_per(ctx)}")
        detail["not_available"] = why
        # the setting that would give it: the tab points at its Settings, the CLI at its flag -- only where GPU work was
        # timed (``step_ms``): over no kernel no FLOPs setting gives an MFU (h37-ui11: "Set Model FLOPs" under
        # "no GPU kernels in kept steps" on a window with no GPU work and on a memory snapshot)
        if not f.flops_per_step and f.step_ms:
            detail["needs_setting"] = "model_flops"
        return Metric("mfu", "Model FLOPs utilisation", None, "share", "n/a", "higher", meaning=why,
                      detail={k: v for k, v in detail.items() if v is not None})
    how = SOURCE_WORDS.get(f.source or "", "")
    if ctx.one_step:  # what the FLOPs are of, as the text says them (``render.mfu_note``): "in the pass, per GPU"
        detail["flops_per"] = _flops_per(ctx)
    if f.note:  # what the number leaves out (GEMM shapes whose rates broke physics, loops without a trip count)
        detail["note"] = ctx.window_words(f.note)
    # the window: "FLOPs in the pass / (pass time x ..." on one pass (h37-words23)
    return Metric("mfu", "Model FLOPs utilisation", json_float(f.mfu), "share", _pct(f.mfu), "higher",
                  meaning=f"FLOPs {ctx.per_step} / ({ctx.step_noun} time x the GPU's dense {f.peak_dtype} peak)"
                          + (f"; {_pct(f.dtype_mfu)} of the {f.dtype} peak its GEMMs run in"
                             if f.dtype_mfu is not None and f.dtype != f.peak_dtype else "") + f"; {how}",
                  detail={k: v for k, v in detail.items() if v is not None})


def _flops_per(ctx: Ctx) -> str:
    """What the model's FLOPs the user gives are of: "per step and GPU"; "in the pass, per GPU" where the capture holds
    one step -- the FLOPs its one window ran, which may be several of the program's iterations (the capture note:
    "every per-step number is the pass's total"), not one step's (h37-onepass)."""
    return f"{ctx.per_step}, per GPU" if ctx.one_step else "per step and GPU"


def _roofline_table(m: HostMetrics) -> Table | None:
    """The top GEMM shapes against their roofline (the tab's roofline chart), per step and GPU."""
    top = m.flops.top
    if not top:
        return None
    return Table("GEMM shapes against their roofline",
                 ["op and shapes", "kind", "precision", "calls/step", "ms/step", "TFLOP/s", "FLOP/byte",
                  "roofline TFLOP/s", "of roofline", "bound"],
                 [[x.label, x.kind, x.precision, json_float(x.calls_per_step, 3), json_float(x.ms_per_step, 4),
                   json_float(x.tflops_per_s, 2), json_float(x.intensity, 2), json_float(x.attainable_tflops_per_s, 2),
                   json_float(x.roofline_share), x.bound] for x in top])


def _said_integer_data(h) -> bool:  # noqa: ANN001 - a Headline
    """The precision card has no known precision and some of its kernel time is integer byte data (the display says
    so: :func:`_no_arithmetic_dtype`)."""
    return h.sixteen_bit_time_share is None and (h.integer_data_share or 0.0) >= 0.005


def _no_arithmetic_dtype(unknown: float, integer_data: float | None) -> str:
    """The precision card where no kernel's arithmetic has a known dtype, saying what is known: kernels whose names
    type their bytes as 8-bit integers, with no GEMM or other arithmetic whose precision the card asks ("n/a: integer
    byte data only": a benchmark's set-up packing random bytes) -- "no dtype known" denied the type those names give
    (h37-onepass: wild/rocprof_mxfp4_setup_gfx950).  Never "8-bit" alone: that is the card's word for 8-bit
    arithmetic (fp8/int8 GEMMs), which these bytes are not (h37-int8share)."""
    if integer_data is None or integer_data < 0.005:
        return "n/a: no dtype known"
    if integer_data >= unknown - 0.005:
        return "n/a: integer byte data only"
    return f"n/a: {_pct(integer_data)} integer byte data, the rest no dtype known"


def _sixteen_display(h) -> str:
    """The 16-bit share; when some kernel time has no known precision, led by the share that has one ("16.0% known:
    100.0% 16-bit"), so a share of the known part never reads as one of the whole (was: "100.0% of known (84.0%
    unknown)", on a card whose value then wrapped to three lines)."""
    unk = h.unknown_precision_share
    if h.sixteen_bit_time_share is None:
        return _no_arithmetic_dtype(unk, h.integer_data_share) if unk else _pct(None)
    eight = h.eight_bit_time_share
    # the 8-bit part said beside the 16-bit one: an FP8 model read "16-bit kernel time 17.6%" as if the rest were fp32
    low = f", {_pct(eight)} 8-bit" if eight and eight >= 0.005 else ""
    if unk and unk >= 0.005:
        return f"{_pct(1.0 - unk)} known: {_pct(h.sixteen_bit_time_share)} 16-bit{low}"
    return f"{_pct(h.sixteen_bit_time_share)} 16-bit{low}" if low else _pct(h.sixteen_bit_time_share)


#: why the input card has no number where the host records nothing an input wait is read from (HostInput.measured)
INPUT_NOT_MEASURED = ("not measured: no event of the input pipeline (its next batch) was recorded and no step marker "
                      "bounds the host time before a step's first op, so nothing tells a wait for input apart")


#: why the launch card has no number where the capture recorded nothing of the host (``Headline.launch_wait_share``)
LAUNCH_NOT_MEASURED = ("not measured: the capture recorded the GPU's work and nothing of the host (no launch, no call), "
                       "so nothing tells a wait for a launch apart")


def _unmeasured_launch(m: HostMetrics, card: Metric) -> Metric:
    """The launch card where the GPU ran but its share is None: no host was recorded (a kernel trace alone,
    h37-review17; ``HostMetrics.host_recorded``, the one home of that fact) -- "n/a" and why, as the input card's
    (:func:`_unmeasured_input`)."""
    if m.host_recorded or not any(g.active for g in m.gpus):
        return card
    card.display = "n/a"
    card.meaning = LAUNCH_NOT_MEASURED
    card.detail = {"not_available": LAUNCH_NOT_MEASURED}
    return card


#: What went unrecorded on a host whose window's GPU side did (``Kind.no_gpu_step_key`` ``gpu_unrecorded``): the one
#: reason its cards and its framework's name give
_TRACING_OFF = "CUDA tracing was off"
#: Why a card has no number where the window's GPU side went unrecorded
GPU_NOT_RECORDED = f"not recorded: {_TRACING_OFF}, so no CUDA call, copy or kernel is here to measure"
#: The capture's framework name there (``capture.framework_name``, the tab's "capture of ..."): none is seen, and none
#: could be -- not the native program's "a GPU program with no ML framework" (h37-tracingoff3's *Left* 3)
FRAMEWORK_NOT_RECORDED = f"a program whose framework went unseen ({_TRACING_OFF}: no op or kernel names one)"


def _gpu_side_unrecorded(m: HostMetrics) -> bool:
    """Whether the host's window recorded nothing of its GPU side (CUDA tracing off): the cards' and the framework
    name's one test."""
    return m.job is not None and m.job.kind.no_gpu_step_key == "gpu_unrecorded"


def _framework_name(m: HostMetrics) -> str:
    """The capture's framework in words: the framework's own name, or :data:`FRAMEWORK_NOT_RECORDED` where the GPU
    side went unrecorded.  Why: the framework is ``native`` there because no framework's kernel or op was seen --
    but none could be: ``wild/tracing_off_nvtx_a10_train`` (``python benchmark.py``, 15 training iterations, -t
    nvtx alone) was called "a GPU program with no ML framework"."""
    if _gpu_side_unrecorded(m):
        return FRAMEWORK_NOT_RECORDED
    name = frameworks.get(m.capture.framework).name
    if m.capture.work_framework:  # a program of another framework under its profiler: the program's, then the profiler's
        return f"{frameworks.get(m.capture.work_framework).name} (recorded by {name}'s profiler)"
    return name


def _gpu_unrecorded(m: HostMetrics, card: Metric) -> Metric:
    """A card with no number on a host whose window's GPU side went unrecorded (``Kind.no_gpu_step_key``): "n/a" and
    that one reason, in place of the framework's or the measure's own.  Why: the framework's reason ("no ML framework
    in the capture: a GPU program's own code has no op placement to check") is the native program's, chosen because
    no framework's kernels were seen -- but none could be: ``wild/tracing_off_nvtx_a10_train`` times 15 training
    iterations of ``python benchmark.py`` recorded with -t nvtx alone (h37-tracingoff3)."""
    if not _gpu_side_unrecorded(m) or card.value is not None:
        return card
    card.display = "n/a"
    card.meaning = GPU_NOT_RECORDED
    kept = {k: v for k, v in (card.detail or {}).items() if k not in ("not_applicable", "not_graded", "not_available")}
    card.detail = {**kept, "not_available": GPU_NOT_RECORDED}  # the card's own (null) numbers stay
    return card


#: Why the op-placement card has nothing to show on a kernel trace alone (h37-words21)
OPS_NOT_RECORDED = ("not recorded: the capture recorded the GPU's work and nothing of the host (no op, no call), so "
                    "no op's placement is seen")


def _unrecorded_ops(m: HostMetrics, card: Metric) -> Metric:
    """The op-placement card where no host was recorded (``HostMetrics.host_recorded``): "n/a" and that reason, not
    the framework's account of how it places ops.  Why: a kernel trace alone may name its framework by the kernels of
    its own library (ATen's ``at::native::`` kernels: PyTorch), but what it says of op placement ("PyTorch places
    each op on the device of its tensors") is a claim about ops the capture holds none of (h37-words21:
    rocprof_aiter_mi355x, fsdp_mi350x_kernel_trace).  As the launch card's :func:`_unmeasured_launch`."""
    if m.host_recorded or not any(g.active for g in m.gpus):
        return card
    card.value = None
    card.display = "n/a"
    card.meaning = OPS_NOT_RECORDED
    card.detail = {"not_available": OPS_NOT_RECORDED}
    return card


def _unmeasured_input(m: HostMetrics, card: Metric) -> Metric:
    """The input card where nothing measured the input (an NVTX-only export: h37-review15, a Megatron form's "Waiting
    for input 0.0%" over no input event): no value, "n/a" and why -- an unmeasured wait is not a zero one."""
    if m.input.measured or not any(g.active for g in m.gpus):
        return card
    card.value = None
    card.display = "n/a"
    card.meaning = INPUT_NOT_MEASURED  # the tab's card says its reason in its meaning, as every n/a card's
    card.detail = {"not_available": INPUT_NOT_MEASURED}
    return card


def _held_input(m: HostMetrics, fw, card: Metric) -> Metric:
    """The input card where the program's Python frames hold the host time before each step's first op
    (``HostInput.frames``, issue #37 item 4): each in the detail (``held_by``), and where frames that fetch or prepare
    no batch hold at least 1% of the step -- time not counted as input -- the display says what holds it (xDiT's Flux
    pipeline: diffusers' ``_execution_device`` walking its offload hooks, 10.7 ms, not the prompt's tokenizer)."""
    src = m.input
    if not src.frames or card.value is None:
        return card
    card.detail = {**(card.detail or {}), "held_by": [{"frame": n, "ms_per_step": json_float(v), "input": inp}
                                                      for n, v, inp in src.frames]}
    step = sum(float(getattr(m.breakdown, c)) for c in BREAKDOWN_CATEGORIES)
    other = [(n, v) for n, v, inp in src.frames if not inp]
    if other and step > 0 and src.pre_op_ms_per_step >= 0.01 * step:
        name, v = other[0]
        card.display += (f"; not input: {fmt_ms(src.pre_op_ms_per_step)} of other host work before the first op "
                         f"(`{fw.frame_label(name)}` {fmt_ms(min(v, src.pre_op_ms_per_step))})")
    return card


def _not_applicable(fw, m: HostMetrics, card: Metric) -> Metric:
    """A card the framework has no meaning for: no value, "n/a" and the reason, never a red number.  Asked as the rules
    ask (``rules.evaluate``): the program's own input pipeline recorded gives the input card its meaning."""
    if fw.applies(card.id, m.input.own_pipeline):
        return card
    card.value = None
    card.display = "n/a"
    card.meaning = fw.not_applicable[card.id]
    card.detail = {"not_applicable": fw.not_applicable[card.id]}
    return card


def _words(m: HostMetrics, text: str) -> str:
    """``text`` in the words of the host's vendor (``rules.base.capture_vendor``): what the report says beside the
    findings speaks as they do."""
    return devices.vendor_called(rules.base.capture_vendor(m)).words(text)


def _unit_columns(m: HostMetrics) -> tuple[str, str, str]:
    """The matrix-unit columns in the GPU vendor's words: NVIDIA's ("tensor core", "TC eligible", "tensor core share"),
    AMD's ("matrix core", "matrix core eligible", "matrix core share": ``devices/amd.py`` ``WORDS``)."""
    unit = _words(m, "Tensor Core").lower()
    return unit, ("TC eligible" if unit == "tensor core" else f"{unit} eligible"), f"{unit} share"


def _on_matrix_units(k: Any) -> bool | None:
    """The kernel table's "tensor core" cell: yes when its name or its speed shows it; unknown (None), not "no", for a
    matmul kernel whose name gives neither a matrix-unit tile nor a dtype (an XLA Triton ``gemm_fusion_dot`` in a
    command buffer: no HLO op of its own, not fast enough to prove it; issue #36: "tensor core: no" for bf16 GEMMs on
    an H100)."""
    if k.tensor_core:
        return True
    return None if k.tc_eligible and k.precision in ("", "unknown") else False


def _kernel_table(m: HostMetrics, n: int = TOP_N) -> Table:
    unit, eligible, _ = _unit_columns(m)
    cols = ["kernel", "op", "op type", "count", "total us", "avg us", "min us", "max us", unit, eligible, "precision", "launch latency us", "GPUs",
            WALL_US]
    rows = [[k.name, k.op_name, k.op_type, k.count, json_float(k.total_us, 3), json_float(k.avg_us, 3), json_float(k.min_us, 3), json_float(k.max_us, 3), _on_matrix_units(k),
             k.tc_eligible, k.precision, json_float(k.launch_latency_avg_us, 3), ",".join(map(str, k.gpus)), json_float(k.wall_us, 3)]
            for k in m.kernels[:n]]
    return Table(_words(m, Ctx(m).window_words("Top GPU kernels ({kept}, all GPUs)")), cols, rows)


def _op_table(m: HostMetrics, n: int = TOP_N) -> Table:
    _, eligible, share = _unit_columns(m)
    cols = ["op", "type", "on device", "occurrences", "host ms", "kernels", "kernel us", eligible, share, "precision", "eager",
            KERNEL_WALL_US]
    rows = [[o.op_name, o.op_type, o.on_device, o.occurrences, json_float(o.host_self_ms), o.kernel_count, json_float(o.kernel_total_us, 3), o.tc_eligible,
             json_float(o.tensor_core_share), o.precision, o.is_eager, json_float(o.kernel_wall_us, 3)] for o in m.ops[:n]]
    return Table(_words(m, Ctx(m).window_words(frameworks.get(m.capture.framework).label("ops_table"))), cols, rows)


def kernel_class_summary(m: HostMetrics) -> list[dict[str, Any]]:
    """Every kept-step kernel by class (kernel_classes.kernel_class), largest time first: complete where the
    kernel table stops at its top rows, so a diff sees every class change.  Per step and GPU (the mean over the
    host's active GPUs): a sum over GPUs read "matmul/conv 165,058.5 us/step" in a 149.9 ms step (issue #36).  The time
    inside the kept steps (``KernelStat.in_steps_us``), not the calls' whole: a collective queued in the last kept step
    ran 1.37 ms past it, "collective 514.1 us/step in a 0.493 ms step" (h37-lawseeds).  And each instant of it once
    (``KernelStat.wall_us``): kernels on concurrent streams share the time they overlap, where their durations summed
    read "other 895,646.8 us/step in a 776.994 ms step" (h37-classsum33, five streams of one pass).  Beside it each
    class's ``kernel_us_per_step``: its kernels' own durations in the steps, summed -- GPU kernel time, which concurrent
    streams may take past the step, never printed against it: what moving a kernel from one class to another moves,
    whatever else runs beside it (the kernel-family tests' whole)."""
    acc: dict[str, list[float]] = {}
    seen = {(k.name, k.op_name) for k in m.kernels}
    # and the calls that started before a kept step and ran into it: their time inside the steps, as the ledger paints
    # it (``HostMetrics.kernels_ran_into``; h37-review21: two ranks' all-reduces run through the kept steps, 2.0 ms a
    # step of the ledger's collectives, and no collective class)
    for k in [*m.kernels, *m.kernels_ran_into]:
        c = devices.kernel_class(k.name, tensor_core=k.tensor_core, tc_eligible=k.tc_eligible, elementwise=k.elementwise,
                                  collective=k.collective, kind=frameworks.stated_kernel_kind(k.name, k.hlo_class))
        a = acc.setdefault(c, [0, 0.0, 0.0, 0.0])
        a[0] += 1 if k.count or (k.name, k.op_name) not in seen else 0  # a distinct kernel once
        a[1] += k.count
        a[2] += k.wall_us  # a part of the steps: their share of its kernel time, each microsecond once
        a[3] += k.step_us  # the kernels' own time in the steps, concurrent ones each counted: what a class holds
    rows = [{"class": c, "kernels": int(a[0]), "launches_per_step": json_float(m.per_step(a[1]), 3), "us_per_step": json_float(m.per_step(a[2]), 3),
             "kernel_us_per_step": json_float(m.per_step(a[3]), 3)}
            for c, a in acc.items()]
    return sorted(rows, key=lambda r: -(r["us_per_step"] or 0.0))


#: the column of the kernels' wait for Unified Memory pages migrated to the GPU under them
#: (``MemcpyStat.paging_in_kernels_ms_per_step``), where any kernel waited so
PAGE_WAIT_COLUMN = "kernel page wait ms/step"


def _memcpy_table(m: HostMetrics) -> Table:
    """The copies per direction.  "exposed ms/step" is the copy time no kernel ran beside, the ledger's copy category
    (``MemcpyStat.blocking_ms_per_step``); where kernels waited for pages migrated under them, that wait -- kernel
    time, not the copies' -- has a column of its own (:data:`PAGE_WAIT_COLUMN`), so neither number holds a slice of the
    other (h37-marks68: a managed-memory solver's H2D "exposed" 6.2 us was a capped slice of a 524 us kernel wait,
    where the ledger booked 0)."""
    paged = any(c.paging_in_kernels_ms_per_step > 0 for c in m.memcpy)
    cols = ["direction", "count/step", "bytes/step", "ms/step", "sync/step", "sync share", "recurring", "exposed ms/step",
            *([PAGE_WAIT_COLUMN] if paged else []), "top ops"]
    rows = [[c.direction, json_float(c.count_per_step, 2), json_float(c.bytes_per_step, 0), json_float(c.ms_per_step), json_float(c.sync_count_per_step, 2), json_float(c.sync_share),
             c.recurring, json_float(c.blocking_ms_per_step),
             *([json_float(c.paging_in_kernels_ms_per_step)] if paged else []), "; ".join(c.top_ops[:3])]
            for c in m.memcpy]
    return Table(Ctx(m).window_words("Memory copies {per_step}"), cols, rows)


def kernel_histogram(k: KernelDurations) -> dict[str, Any]:
    """The report's kernel duration histogram (JSON: open last edge as null, totals rounded)."""
    return {
        "edges_us": [e if math.isfinite(e) else None for e in k.edges_us], "counts": list(k.counts),
        "total_us": [json_float(t, 3) for t in k.total_us], "band_us": list(k.band_us),
        "below_band_count": k.below_band_count, "count": k.count,
    }


_BD_VALUES = operator.attrgetter(*BREAKDOWN_CATEGORIES)


def round6(values: np.ndarray) -> list[float | None]:
    """``[json_float(x, 6) for x in values.ravel()]`` -- Python's ``round(x, 6)``, None for NaN/inf -- vectorized
    (:func:`round6_array`)."""
    out = round6_array(values)
    vals = out.tolist()
    if np.isnan(out).any():
        vals = [None if math.isnan(v) else v for v in vals]
    return vals


def round6_array(values: np.ndarray) -> np.ndarray:
    """Python's ``round(x, 6)`` of every value of ``values``, raveled, as float64; NaN where ``x`` is NaN or infinite.

    ``round(x, 6)`` is the double nearest to N/10**6, N = x*10**6 rounded half-even from x's exact
    value; ``rint(x * 1e6) / 1e6`` is exactly that (the division is correctly rounded) unless the
    rounding error of ``x * 1e6`` (below |x * 1e6| * 2**-52) reaches the nearest half-integer, where
    rint could round the other way.  Those few values (and NaN, inf, |x * 1e6| >= 2**52) go
    through Python's ``round``: every result is bit-identical to it.
    """
    x = np.asarray(values, dtype=np.float64).ravel()
    y = x * 1e6
    out = np.rint(y) / 1e6
    with np.errstate(invalid="ignore"):
        tie_dist = np.abs(y - np.floor(y) - 0.5)
        exact = (np.abs(y) < 2.0 ** 52) & (tie_dist > np.abs(y) * 2.0 ** -52 + 1e-9)
    for i in np.flatnonzero(~exact).tolist():
        v = float(x[i])
        out[i] = round(v, 6) if math.isfinite(v) else math.nan
    return out


def _step_rows(detail) -> StepRowTable:
    """The report's step rows of ``steps_detail`` (a StepTable's columns, or StepMetrics rows): ``json_float(x, 6)``
    of every number (tens of thousands of rows: rounded at once, :func:`round6_array`), kept as columns
    (``model.steprows``).  A None becomes NaN in the float matrix, and so None again, as ``_f`` makes it."""
    cats = BREAKDOWN_CATEGORIES
    if isinstance(detail, StepTable):
        steps, gpus, mat = detail.columns()
    else:
        rows = list(detail)
        steps = np.array([r.step for r in rows], dtype=np.int64)
        gpus = [r.gpu for r in rows]
        mat = np.array([(r.start_ms, r.step_ms, *_BD_VALUES(r.breakdown)) for r in rows], dtype=np.float64)
    return StepRowTable(steps, gpus, round6_array(mat).reshape(len(gpus), 2 + len(cats)), cats)


def build_host_report(m: HostMetrics, findings: list[Finding], size: int,
                      damage: list[Damage | str] | None = None) -> HostReport:
    """The report of one host: its metrics as cards, tables and step rows, with the findings the rules made of them;
    ``damage``: the file's damage (``Trace.problems``, typed records: ``model.damage``), kept as records
    (``damage_records``) and, for readers of schema 1.6, as words (``damage``) with the words of its contradictions
    and of its records left unread apart (``contradictions``, ``unreadable``)."""
    records = [as_damage(d) for d in damage or []]
    for f in findings:
        f.host = f.host or m.host
    steps_rows = _step_rows(m.steps_detail)
    gpus = [GpuSummary(gpu=g.gpu, name=g.name, compute_capability=devices.arch_label(g.name, g.compute_capability), step_ms=json_float(g.step_ms, 6), busy_share=json_float(g.busy_share),
                       kernel_count=g.kernel_count, collective_calls_per_step=json_float(g.collective_calls_per_step),
                       launch_skew_ms=json_float(g.first_kernel_offset_ms), breakdown={k: json_float(v, 6) for k, v in g.breakdown.as_dict().items()},
                       rank=g.rank, collectives={c.type: [json_float(c.calls_per_step, 6), json_float(c.ms_per_step, 6),
                                             json_float(c.exposed_ms_per_step, 6), json_float(c.bytes_per_call),
                                             c.group_size, json_float(c.transfer_ms_per_step, 6),
                                             json_float(c.whole_transfer_ms_per_step, 6)] + ([c.calls_before] if c.calls_before or c.paced_ms_per_step else [])
                                             + ([json_float(c.paced_ms_per_step, 6), json_float(c.paced_calls_per_step, 6)]
                                                if c.paced_ms_per_step else [])
                                    for c in m.comm.per_gpu.get(g.gpu, [])},
                       calls={c.type: call_columns(((grp, st, nb, json_float(x, 6)) for grp, st, nb, x in c.calls),
                                                   m.steps.count, times=c.call_times or None)
                              for c in m.comm.per_gpu.get(g.gpu, []) if c.calls},
                       memory=gpu_memory_summary(m, g.gpu), host_calls_ms=json_float(g.host_calls_ms_per_step, 6),
                       longest_calls=[[k, i, json_float(x, 6), n, json_float(ps, 6)]
                                      for k, i, x, n, ps in m.multi_gpu.longest_calls.get(g.gpu, [])]
                       if g.gpu in m.multi_gpu.longest_calls else None,
                       kernel_ms=[[k, json_float(x, 6)] for k, x in m.multi_gpu.kernel_times[g.gpu]]
                       if g.gpu in m.multi_gpu.kernel_times else None,
                       collective_ranks={c.type: list(c.group_ranks) for c in m.comm.per_gpu.get(g.gpu, [])
                                         if c.group_ranks is not None} or None)
            for g in _shown_gpus(m)]
    cap = m.capture
    det = m.steps
    hr = HostReport(
        host=m.host, path=m.path, size_bytes=size,
        capture={"length_ms": json_float(cap.length_ms, 3), "window_start_ms": json_float(cap.window_start_ms, 3),
                 "steps_captured": cap.steps_captured, "steps_kept": cap.steps_kept,
                 "steady_state": cap.steady_state, "step_time_cv": json_float(cap.step_time_cv), "too_short": cap.too_short, "too_long": cap.too_long,
                 "num_events": cap.num_events, "gpu_thread_mode_private": cap.gpu_thread_mode_private, "note": cap.note,
                 "processes": m.multi_gpu.processes,
                 "framework": cap.framework, "framework_name": _framework_name(m),
                 # the framework that ran the work where another's profiler wrote the capture (its fixes' words)
                 **({"work_framework": cap.work_framework} if cap.work_framework else {}),
                 "vendor": _vendor(m),
                 "memory_headroom": json_float(m.memory.headroom_share), "notes": m.notes + _idle_gpus_note(m),
                 "applied": {k: _words(m, v) for k, v in m.applied.items()},
                 "time_base": cap.time_base, **({"allocator_settings": dict(m.memory.settings)} if m.memory.settings else {})},
        steps={"source": det.source, "source_label": det.label or SOURCE_LABEL.get(det.source), "count": det.count, "found": det.found, "note": det.note, "mapped_via": det.mapped_via,
               "confidence": det.confidence, "iteration_guess": det.iteration_guess,
               "dropped": [_dropped_row(d) for d in det.dropped]},
        job=_job(m),
        headline=headline_cards(m, findings),
        breakdown_ms={k: json_float(v, 6) for k, v in m.breakdown.as_dict().items()},
        step_rows=steps_rows, gpus=gpus, kernels=_kernel_table(m), ops=_op_table(m), memcpy=_memcpy_table(m),
        kernel_durations_us=kernel_histogram(m.kernel_durations), kernel_classes=kernel_class_summary(m), findings=findings,
        communication=_communication_table(m), expected_allreduce_ms=json_float(m.multi_gpu.expected_allreduce_ms, 6),
        roofline=_roofline_table(m), damage=[d.detail for d in records], contradictions=contradictions(records),
        unreadable=unreadable(records), damage_records=records,
    )
    # whether the window holds a step to promise is read off the host's own report (its steps, phase and ledger)
    hr.achievable = achievable(m.headline.avg_step_ms, m.breakdown.as_dict(), findings,
                               withheld=no_promise_reason([hr]), peak_floor_ms=m.flops.floor_ms_per_step)
    return hr


def _vendor(m: HostMetrics) -> str | None:
    """``capture.vendor``, whose words the tab's legend takes: the vendor of the GPUs that ran work; where none did,
    the one a memory snapshot's allocator frames name (``Memory.vendor``: ``c10::hip::`` for a ROCm build's), or the
    one whose runtime launched the kernels of a window that lost their records (``Kind.runtime_vendor``), else
    None (a CPU-only capture, an accelerator the Advisor does not analyse, a snapshot whose frames name no build) --
    the default vendor claimed for a capture with no GPU contradicted its own job line (h37-review4), while a ROCm
    snapshot's findings in AMD's words beside a legend in none contradicted each other (h37-snap22)."""
    return rules.base.capture_vendor(m)


def gpu_memory_summary(m: HostMetrics, gpu: int) -> dict[str, Any] | None:
    """``GpuSummary.memory``: one GPU's memory (``metrics/memory.py``), with the OOMs a snapshot recorded on it; None
    where the capture has no allocator events for it."""
    g = next((x for x in m.memory.gpus if x.gpu == gpu), None)
    ooms = [o for o in m.memory.ooms if o.gpu == gpu]
    if g is None and not ooms:
        return None
    out: dict[str, Any] = {}
    if g is not None:
        out = {"source": g.source, "baseline": g.baseline, "events": g.events,
               "peak_allocated_bytes": g.peak_allocated_bytes, "peak_reserved_bytes": g.peak_reserved_bytes,
               "capacity_bytes": g.capacity_bytes, "capacity_source": g.capacity_source,
               "peak_ms": json_float(g.peak_ms, 4), "peak_step": g.peak_step,
               "peak_step_offset_ms": json_float(g.peak_step_offset_ms, 4), "peak_step_share": json_float(g.peak_step_share),
               "peak_place": g.peak_place, "warmup_peak_bytes": g.warmup_peak_bytes,
               "warmup_peak_ms": json_float(g.warmup_peak_ms, 4), "warmup_peak_step": g.warmup_peak_step,
               "start_bytes": g.start_bytes, "gap_bytes": g.gap_bytes,
               "peak_reserved_in_use_bytes": g.peak_reserved_in_use_bytes,
               "reserved_changes_per_step": json_float(g.reserved_changes_per_step, 3),
               "breakdown": dict(g.breakdown), "top": [[h.name, h.category, h.bytes, h.count] for h in g.top],
               "step_peaks": [list(r) for r in g.step_peaks], "timeline": dict(g.timeline), "note": g.note,
               **({"held_by_lifetime_bytes": g.held_by_lifetime_bytes} if g.held_by_lifetime_bytes else {}),
               **({"outside_bytes": g.outside_bytes} if g.outside_bytes is not None else {})}
    if ooms:
        out["ooms"] = [{"requested_bytes": o.requested_bytes, "device_free_bytes": o.device_free_bytes,
                        "allocated_bytes": o.allocated_bytes, "reserved_bytes": o.reserved_bytes, "frames": o.frames,
                        "at_ms": json_float(o.at_ms, 4), "live": o.live, "by_category": o.by_category} for o in ooms]
    return out


def _shown_gpus(m: HostMetrics) -> list:
    """The GPUs that ran something in the capture (all of them when none did): a GPU the process could see but never
    used is no GPU of the job, and a row with a step time would say it ran.  A GPU known only by its memory (its work
    was not recorded) is shown too: its row has its memory and no time."""
    shown = [g for g in m.gpus if g.active or g.memory_only]
    return shown if any(g.active for g in shown) else list(m.gpus)


def _idle_gpus_note(m: HostMetrics) -> list[str]:
    idle = [g.gpu for g in m.gpus if not (g.active or g.memory_only)]
    if not idle or not any(g.active for g in m.gpus):
        return []
    return [f"{plural(len(idle), 'more GPU')} visible to the process ran nothing in the capture and "
            f"{'is' if len(idle) == 1 else 'are'} not listed "
            f"(GPU {', '.join(map(str, idle[:8]))}{'…' if len(idle) > 8 else ''})"]


def _job(m: HostMetrics) -> dict:
    """The report's ``job`` block: the job stage's answer, how sure the steps are, and the line that says it."""
    if m.job is None:
        return {}
    out = {**m.job.as_dict(), "step_source": m.steps.source, "step_confidence": m.steps.confidence,
           "part_of_job": part_of_job(m), "capture_advice": capture_advice(m),
           **({"ranks_not_here": n} if (n := ranks_not_here(m)) else {}),
           # the job's world size where the file says it (Kineto's distributedInfo): the title counts the session's
           # ranks of it, never a size the file does not give
           **({"job_ranks": w} if (w := m.multi_gpu.job_ranks) else {})}
    if not no_gpu_step_reason(out):  # a window that times no GPU step has no pass to call one (``no_gpu_step``)
        # one pass with no one-time cost read shows no steady state: nothing in it repeats (``job.phase.shown_phase``)
        out["phase"], out["phase_evidence"] = shown_phase(m.job.phase, m.steps.found, m.steps.count)
    else:  # nor a steady state: "steady" is said of GPU steps timed (``job.phase.untimed_phase``)
        lengths = _host_loop_lengths(m, out)
        out["phase"], out["phase_evidence"] = untimed_phase(m.job.phase, lengths, _timed_by(m) if lengths else "")
    for k in ("kind_evidence", "phase_evidence"):  # the job stage writes NVIDIA's words, as the rules do
        if isinstance(out.get(k), str):
            out[k] = _words(m, out[k])
    # one step: found as one, the window read as (at most) one iteration, or the whole window analysed as one step --
    # which the capture's check says is one pass of the program (h37-review6: mi210_gpu_only's "training steps"
    # above "The capture holds one pass of the program")
    if why := no_gpu_step_reason(out):  # the tab's host line reads the server's answer, not a twin of its test
        out["no_gpu_step"] = why
        out.update(_host_loop(m, out))
    det = m.steps
    one = det.found == 1 or (det.count == 1 and (det.iteration_guess or det.source == "whole_capture"))
    # in the host's vendor's words as its evidence is (an Ascend NPU's snapshot: "no NPU step is timed")
    out["summary"] = _words(m, job_line(out, det.note, 1 if one else None))
    return out


def _host_loop(m: HostMetrics, job: dict) -> dict:
    """``host_loop``: the loop a window without GPU work marks (``kind`` ``no_gpu``; not its GPU side unrecorded, nor
    the loop's end, whose one mark holds the fetch that found the input exhausted: ``job.kind.NO_GPU_STEP``), timed
    on the host -- its kept marked steps and their mean length, ms -- where it marks one; {}
    else.  No GPU step is booked (no step rows, no ledger: ``metrics.compute.gpu_step_timed``), but the loop ran:
    ``h200_jobs/torch_cpu_only``'s 4 ``ProfilerStep`` marks of ~88 ms on the CPU were said only by the steps' note
    and the evidence, the job line naming no loop at all (h37-tidy29's *Left*)."""
    lengths = _host_loop_lengths(m, job)
    if not lengths:
        return {}
    loop = {"steps": len(lengths), "step_ms": json_float(sum(lengths) / len(lengths), 3)}
    if min(lengths) > 0 and max(lengths) > T("job.uneven_turns_ratio") * min(lengths):
        # turns the program made uneven (h37-cpuloop31's Left 3: 0-4 s sleeps read "5 marked steps of 2.00 s")
        loop.update(median_ms=json_float(float(np.median(lengths)), 3), min_ms=json_float(min(lengths), 3),
                    max_ms=json_float(max(lengths), 3))
    return {"host_loop": loop}


def _host_loop_lengths(m: HostMetrics, job: dict) -> list[float]:
    """The kept marked steps' lengths (ms) of the loop a window without GPU work marks, timed on the host; [] where
    it marks none, or its marks time none of the job's steps (the loop's end's one fetch) or its GPU side went
    unrecorded.  One answer for the ``host_loop`` row and the phase (``job.phase.untimed_phase``)."""
    det = m.steps
    if (job.get("kind") != "no_gpu" or any(job.get(key) for key in NO_GPU_STEP.values())
            or det.source in UNMARKED_SOURCES or not det.windows):
        return []
    return [w.duration_ms for w in det.windows]


def _timed_by(m: HostMetrics) -> str:
    """What marked the loop's CPU-timed steps, for the phase's evidence ("by a repeated NVTX range"): the step
    source's own label (``steps.types.SOURCE_LABEL``), the one the tab's host line says."""
    label = m.steps.label or SOURCE_LABEL.get(m.steps.source, "")
    return f"by {label}" if label else ""


def _dropped_row(d) -> dict:  # noqa: ANN001 - a steps.types.DroppedStep
    """A step left out of the averages: its number, why, and how long it lasted (``ms``, where it had a window): what
    a sentence saying it held some time is held to (h37-review13: "The 1 step holding them was left out" of 631.8 ms
    of one-time costs, beside a left-out step of 13.9 ms)."""
    row: dict = {"step": d.step, "reason": d.reason}
    if d.window is not None:
        row["ms"] = json_float((d.window[1] - d.window[0]) / PS_PER_MS, 3)
    return row


def capture_advice(m: HostMetrics) -> str:
    """How to record a better capture of this job: the framework's advice composed for the job the rules talk to
    (its loop, its ranks, a serving engine's routes, a cold start's schedule), the one text every fix of the report
    quotes -- the MCP server's capture advice and the tab show it, never a general text written for a training loop
    (h37-left43: cold_a100_alexnet's forward passes were advised `train_step(x, y)` by the MCP server beside fixes
    looping `model(batch)`).  A capture tool with its own way to put the window on the steady state (an Nsight
    window's ``--capture-range``, rocmProfileData's ``rpdTracerControl``: the format's ``steady`` window fix) is told
    that, as the findings' fixes tell it (``Ctx.steady_fix``): a torch.profiler schedule moves no Nsight window
    (h37-review12: nvllm_gb10_lost_tail's Nsight export was advised torch.profiler's schedule by the MCP server
    beside its findings' ``nsys profile --capture-range``)."""
    untraced = devices.vendor_of_backend(m.job.kind.untraced_backend) if m.job is not None else None
    if untraced is not None:  # a backend the profiler does not trace (Apple's MPS): its vendor's own recorder
        return untraced.trace_gpu_action().snippet or ""
    # a device whose work torch.profiler does not record, its vendor's own profiler (``OWN_PROFILER``: an Ascend
    # NPU's torch_npu.profiler): a snapshot of torch_npu's allocator was told `ProfilerActivity.CUDA` (h37-wild55v)
    vendor = devices.vendor_called(rules.base.capture_vendor(m))
    own_recorder = getattr(vendor, "OWN_PROFILER", None)
    if own_recorder is not None:
        return own_recorder().snippet or ""
    fw = rules.base.framework(m)
    if m.capture.capture_format in fw.capture_formats and fw.capture_snippet:  # an engine's own Nsight recipe
        return devices.vendor_code(vendor, fw.capture_snippet)
    own = rules.base.Ctx(m).window_fixes(m.capture.capture_format, "steady")
    # in the code of the capture's device, as every fix's (``Ctx.code``): an Intel GPU's window records
    # `ProfilerActivity.XPU`, and was told `ProfilerActivity.CUDA` (h37-wild55v)
    return devices.vendor_code(vendor, own[0].snippet if own and own[0].snippet else fw.capture_snippet)


def part_of_job(m: HostMetrics) -> str:
    """What part of a larger job the capture is, in words, where nothing else in the report says it: the file's ranks
    of a job its header (``distributedInfo.world_size``) makes larger, when its window ran no collective; "" else.

    Why: a DDP rank whose window held no AllReduce (a forward-only step, a window before the first bucket) shows no
    sign of the job but its header; read alone, it is a one-GPU program, and every fix that talks of ranks is lost."""
    mg = m.multi_gpu
    idle = m.job.idle_ranks if m.job is not None else ""  # ranks read here whose windows ran no GPU work: said once
    here = mg.processes  # 0: no GPU process (a CPU-only gloo rank), whose collectives no GPU counts: not said
    if _idle_part(m):  # every rank read here is idle: they are still part of the job (h37-probe44v)
        where = not_here_words(ranks_not_here(m), True)
        return (f"{plural(_idle_count(m), 'rank')} of a job of {mg.job_ranks} ranks ({mg.job_ranks_from}), none of "
                f"whose windows ran GPU work" + (f": {where}" if where else "") + f"; {idle}")
    if not here or not mg.job_ranks or mg.job_ranks <= here or mg.collective_calls_per_gpu_step:
        return idle
    ranks = sorted({g.rank for g in m.gpus if g.active and g.rank is not None})
    which = f"rank {ranks[0]}" if len(ranks) == 1 and here == 1 else plural(here, "rank")
    rest = _idle_count(m)  # the other ranks read here (h37-probe43w), not "not here"
    where = not_here_words(ranks_not_here(m), bool(rest))
    return (f"{which} of a job of {mg.job_ranks} ranks ({mg.job_ranks_from}), whose window ran no collective"
            + (f": {where}" if where else "") + (f"; {idle}" if idle else ""))


def ranks_not_here(m: HostMetrics) -> int:
    """How many of the job's ranks (``distributedInfo.world_size``) the host's file holds no trace of, where
    :func:`part_of_job` speaks (a window that ran no collective); 0 else.  The session may hold them as its other
    hosts (:func:`session_ranks_words`)."""
    mg = m.multi_gpu
    here = mg.processes
    if _idle_part(m):
        return mg.job_ranks - _idle_count(m)
    if not here or not mg.job_ranks or mg.job_ranks <= here or mg.collective_calls_per_gpu_step:
        return 0
    return max(mg.job_ranks - here - _idle_count(m), 0)


def _idle_count(m: HostMetrics) -> int:
    """How many ranks read with this host ran no GPU work (``Job.idle_rank_count``, beside its words)."""
    return m.job.idle_rank_count if m.job is not None else 0


def _idle_part(m: HostMetrics) -> bool:
    """The host's file holds ranks of a larger job (``distributedInfo.world_size``) and none of them ran GPU work:
    every rank read here is idle.  Why: a node whose 3 ranks' windows ended in start-up beside rank 0's loop on
    another node said its ranks but not that they were 3 of a job of 4, nor where the 4th was (h37-probe44v:
    ``write_mixed_window_run(start_up_ranks=3)``)."""
    mg = m.multi_gpu
    n = _idle_count(m)
    return not mg.processes and n > 0 and bool(mg.job_ranks) and mg.job_ranks > n


def not_here_words(missing: int, counted: bool) -> str:
    """The job line's words for ``missing`` ranks whose traces the file does not hold (``counted``: some other ranks
    are said beside them, so the missing ones are counted); "" for none.  One counted rank is "the other rank's
    trace", never "the other 1 rank' traces" (h37-probe44v)."""
    if missing <= 0:
        return ""
    if not counted:
        return "the other ranks' traces are not here"
    return "the other rank's trace is not here" if missing == 1 else f"the other {missing} ranks' traces are not here"


def session_ranks_words(job: dict, others: list[tuple[str, int]]) -> str:
    """``job``'s ``part_of_job`` as the session has it: the job's ranks the host's file lacks that the session's other
    hosts (``others``: each host's name and the ranks it holds, at least one a file) hold are said to be there, by
    name, and only the rest "not here"; the words unchanged where the session holds no other host.

    Why: a host read alone cannot see the session's other files: a two-node job's node0 said "the other ranks'
    traces are not here" of a run whose node1 host, rank 1, was the next host of the same report (h37-probe43w
    *Left* 2; the layout groups files into one session only when their ``distributedInfo`` says they are one job)."""
    said, missing = job.get("part_of_job") or "", int(job.get("ranks_not_here") or 0)
    old = not_here_words(missing, "'s window holds no GPU work" in said)
    if not others or not missing or not old or old not in said:
        return said
    held = min(sum(n for _, n in others), missing)
    hosts = f"this session's {'host' if len(others) == 1 else 'hosts'} {', '.join(name for name, _ in others)}"
    if held >= missing:
        there = ("the other rank's trace is " if missing == 1 else f"the other {missing} ranks' traces are ") + hosts
    else:
        there = (f"{held} of the other {missing} ranks' {'trace is' if held == 1 else 'traces are'} {hosts}; "
                 f"{'the last one' if missing - held == 1 else f'the other {missing - held}'} not here")
    return said.replace(old, there)


#: How each kind of work reads in the report's job line: (several steps, one step).
_KIND_WORDS = {"training": ("training steps", "a training step"),
               "inference": ("inference (forward passes)", "inference (a forward pass)"),
               "serving": ("a serving engine", "a serving engine"), "no_gpu": ("no GPU work", "no GPU work"),
               "unknown": ("GPU work of an unknown kind", "GPU work of an unknown kind")}


def kind_words(kind: str, steps_found: int | None = None) -> str:
    """A kind of work in the job line's words, its count agreeing with the steps the capture holds: one step found
    reads "a training step", not "training steps" (h37-left43: nvfuser_h200_first_call's "training steps" beside a
    window of at most one iteration)."""
    words = _KIND_WORDS.get(kind)
    if words is None:
        return kind
    return words[1] if steps_found == 1 else words[0]


def job_line(job: dict, step_words: str = "", steps_found: int | None = None) -> str:
    """One host's job in words: what the capture is, how sure, its phase and its steps' source (``step_words``: the
    steps' note, which says the source in words; the source's id is the JSON's, never the line's; ``steps_found``:
    how many steps the capture holds, which the kind's words agree with).

    GPU work of no known kind whose host events name the work (``host_kind``: its GPU records lost) reads as that
    work, said to be the host's reading: the fixes follow it, and the line does not call it unknown beside them
    (h37-left43: gpu_events_stripped's "GPU work of an unknown kind" above a training loop's fixes)."""
    if not job:
        return ""
    kind = kind_words(job.get("kind") or "", steps_found)
    if job.get("collectives_only") and job.get("collectives_backend"):  # a CPU backend's: no GPU work, no op
        kind = f"no GPU work: {job['collectives_backend']}'s collectives alone, on the CPU, none of the job's ops or steps"
    elif job.get("collectives_only"):  # a filter of a fuller trace: its GPU work is the job's collectives, no steps
        kind = "the GPUs' collectives alone, filtered from a fuller trace: none of the job's steps in it"
    elif job.get("marks_no_job_step") and job.get("kind") != "no_gpu":  # its GPU work is queued work of earlier steps
        kind = f"{kind_words(job['kind'], 1)}, its GPU work queued before the window: none of the job's steps in it"
    elif job.get("gpu_unrecorded") and job.get("kind") != "no_gpu":  # the ranges name the work, the GPU's went unseen
        kind = f"{kind_words(job['kind'])}, their GPU work not recorded"
    elif job.get("copies_only"):  # copies are GPU work: the window holds no kernel, not no GPU work (h37-probe43w)
        kind = "GPU copies only, no kernel"
    elif job.get("damaged") and job.get("kind") == "no_gpu":  # the rest of the file unread: no claim of the window
        kind = DAMAGED_NO_GPU
    elif job.get("kind") == "unknown" and job.get("host_kind"):
        kind = f"{kind_words(job['host_kind'], steps_found)}, as the host's events name the work"
    if job.get("engine"):
        kind += f" ({job['engine']})"
    bits = [f"Job: {kind} [{job.get('kind_confidence', '?')} confidence: {job.get('kind_evidence', '')}]"]
    if job.get("phase") == ONE_PASS:  # no one-time cost read, and no repeat to show a steady state
        bits.append(f"phase {ONE_PASS}: no one-time cost read, but nothing repeats, so the steady state is not shown")
    elif job.get("phase") == NOT_TIMED:  # no GPU step timed: no steady state claimed
        bits.append(f"phase {NOT_TIMED}: no one-time cost read, but no GPU step is timed to show a steady state")
    elif job.get("phase") == "steady" and no_gpu_step(job):  # the loop's CPU-timed turns repeat (``untimed_phase``)
        bits.append("phase steady: no GPU step is timed, but the loop's steps, timed on the CPU, repeat")
    elif job.get("phase") == TEAR_DOWN:  # the exit's one-time costs, after the loop: no warm-up (``window_phase``)
        bits.append(f"phase {TEAR_DOWN} ({_pct(job.get('one_time_share') or 0, 0)} of the window in the exit's release "
                    "calls, after the loop)")
    elif job.get("phase") and job["phase"] != "steady":
        bits.append(f"phase {job['phase']} ({_pct(job.get('one_time_share') or 0, 0)} of the window in one-time costs)")
    if job.get("version"):
        bits.append(f"written by {job['version']}")
    if no_gpu_step(job):  # the title says it: no step to time -- but a loop the host marks ran, and took its time
        if loop := host_loop_words(job):
            bits.append(f"its loop{'' if job.get('copies_only') else ' on the CPU'}: {loop}, no GPU step")
    elif job.get("step_confidence") and job["step_confidence"] != "high":
        source = step_words.split(";", 1)[0] if step_words else "the trace"
        bits.append(f"steps: {source} ({job['step_confidence']} confidence)")
    if job.get("part_of_job"):
        bits.append(job["part_of_job"])
    for module, n in (job.get("steps_per_call") or {}).items():
        bits.append(f"each call of {module} runs {n} training steps (a lax.scan / fori_loop over steps): a 'step' "
                    f"below is one call, {n} training steps")
    return "; ".join(bits) + "."


def _communication_table(m: HostMetrics) -> Table | None:
    """Collectives per step by type (``metrics.comm``), of the median GPU: the statistic of the session's table
    (median rank), so one job's collective time reads the same on both (issue #36: AllReduce 1.32 ms in the session's
    table, 1.03 ms -- a mean over GPUs one of which waits least -- in the host's); None without collectives.  The
    median over the GPUs that run the type, as the session's is over the ranks that run it (``JobView.summary``):
    a GPU that runs none of it is no sample of its time (h37-lawseeds: a Broadcast two of four GPUs ran in the kept
    steps read 0.138 ms here, the zeros of the other two in the median, and 0.277 ms in the session's table)."""
    c = m.comm
    if not c.by_type:
        return None
    active = [g.gpu for g in m.gpus if g.active]
    per = {g: {x.type: x for x in c.per_gpu.get(g, [])} for g in active}

    def med(t: str, attr: str, mean: float, of=median) -> float:  # noqa: ANN001 - med or med_count
        vals = [float(getattr(per[g][t], attr) or 0.0) for g in active if t in per[g]]
        return of(vals) if len(active) > 1 and vals else mean

    rows = []
    for t in c.by_type:
        ms_, ex = med(t.type, "ms_per_step", t.ms_per_step), med(t.type, "exposed_ms_per_step", t.exposed_ms_per_step)
        rows.append([t.type, json_float(med(t.type, "calls_per_step", t.calls_per_step, med_count), 6), json_float(ms_, 6),
                     json_float(ex, 6), json_float(t.bytes_per_call), json_float(ex / ms_ if ms_ else None),
                     ", ".join(t.process_groups) or None])
    # (the transfer time is the job's, across every host: the ranks table and comm_exposed's evidence show it)
    per = Ctx(m).per_step  # "in the step" where the host kept one: the title says what its numbers are
    title = f"Collectives {per} (median GPU)" if len(active) > 1 else f"Collectives {per}" + \
        (" and GPU" if per == "per step" else "")
    title += calls_before_note({t.type: t.calls_before for t in c.by_type}, len(active), step=Ctx(m).step_noun)
    return Table(title, ["collective", "calls", "ms", "exposed ms", "bytes per call", "exposed share",
                         "process groups"], rows)


__all__ = ["build_host_report", "headline_cards", "kernel_histogram", "kernel_class_summary", "round6", "json_float",
           "gpu_memory_summary"]
