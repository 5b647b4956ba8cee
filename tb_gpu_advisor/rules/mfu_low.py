"""§1.2.3 Low MFU because the GEMMs themselves run far below their roofline.

A low MFU has many causes, and the guide's other checks own most of them (input waits, launch gaps, fp32 math,
exposed communication).  This check fires only for the one they cannot see: the matmul/conv/attention kernels run,
but far below what their shapes allow.  Each GEMM shape's roofline is min(peak of its precision, arithmetic
intensity x memory bandwidth) (``metrics/flops.py``); GEMM time at under ``flops.low_roofline_share`` of it is the
metric.  It fires only where MFU is under ``mfu_low.mfu`` and GEMMs take at least ``mfu_low.min_gemm_share`` of the
step, so a run held back by something else is left to that check.

Saving: each slow GEMM shape brought up to ``flops.low_roofline_share`` of its roofline (a conservative target:
well-shaped cuBLAS/cuDNN GEMMs reach 60-80%), i.e. its time x (1 - its share / that level).
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.flops import ROOF_TIME
from tb_gpu_advisor.metrics.types import GemmRoofline, HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules.base import Ctx, T, action, finding, grade, ms, pct, rule, saving, share_metric, table

ID = "mfu_low"

_SHAPES = action(
    "Give the matrix units bigger, aligned GEMMs: a larger per-GPU batch (or micro-batch), the small matmuls of "
    "one layer fused into one (the Q, K and V projections as one GEMM; experts batched into one grouped GEMM), "
    "and hidden, head and vocabulary sizes padded to multiples of 64.",
    "vocab_size = ((vocab_size + 63) // 64) * 64   # likewise hidden sizes and head dims")
#: Where the slow shapes are convolutions: a matmul's padding words ("hidden, head and vocabulary sizes") are no
#: convolution's; its library picks among implicit-GEMM, Winograd and direct kernels per shape and layout
#: (h37-huntk66: an MI300X's 1x1 128 -> 512 convolution at 0.1% of its roofline on MIOpen's Winograd kernels was told to
#: pad its vocabulary).
_CONV_SHAPES = action(
    "Give the convolution library bigger convolutions and room to choose: a larger per-GPU batch (or micro-batch), "
    "channel counts that are multiples of 64 where they are small or odd, and the layout its fastest kernels read.")
_AUTOTUNE = action("Check which kernel the library picked for the slowest shapes: a skinny or odd shape can fall "
                   "onto a kernel tuned for another size.")


def _fixes(ctx: Ctx, slow: list[GemmRoofline], slow_ms: float) -> list:
    """The matmul's fixes, or a convolution's where convolutions hold most of the slow shapes' time (their layout and
    the library's search, ``mfu_low:conv``)."""
    conv_ms = sum(x.ms_per_step for x in slow if x.kind == "conv")
    if slow_ms > 0 and conv_ms * 2 > slow_ms:
        return [_CONV_SHAPES, *ctx.fw.extra(f"{ID}:conv"), _AUTOTUNE]
    return [_SHAPES, *ctx.fw.extra(ID), _AUTOTUNE]


def _slow(f) -> list[GemmRoofline]:  # noqa: ANN001 - metrics.types.Flops
    """The GEMM shapes under ``flops.low_roofline_share`` of their roofline: the matrix units' rows alone, as MFU
    and ``below_roofline_share`` count them -- a depthwise row's time is no GEMM time (h37-flops68: its 180 us were
    "GEMM time" beside a card that leaves its FLOPs out)."""
    low = T("flops.low_roofline_share")
    return [x for x in f.top if x.on_matrix_units and x.roofline_share is not None and x.roofline_share < low]


def quiet(m: HostMetrics) -> str | None:
    """Why a low MFU card has no finding: the GEMMs reach their roofline, so the time goes elsewhere.  The step is
    named as every rule names it (``Ctx.step_noun``): "the rest of the pass" on a capture read whole, which marks no
    step (h37-words22: part_forward_a100's card read "GEMMs take 2.5% of the step" beside findings of "the pass")."""
    f = m.flops
    if f.mfu is None:
        return None
    noun = Ctx(m).step_noun
    if f.below_roofline_share is not None and grade(f.below_roofline_share, "mfu_low.warning") is None:
        slower = _slower_dtype(f)
        if slower:
            return slower
        return (f"the GEMMs reach their roofline ({pct(1 - f.below_roofline_share)} of GEMM time at >= "
                f"{pct(T('flops.low_roofline_share'))} of it): the {noun}'s other time holds MFU down, and the other "
                "checks weigh it")
    if f.gemm_ms_per_step is not None and f.step_ms and f.gemm_ms_per_step / f.step_ms < T("mfu_low.min_gemm_share"):
        return f"GEMMs take {pct(f.gemm_ms_per_step / f.step_ms)} of the {noun}: the rest of the {noun} holds MFU down"
    return None


def _slower_dtype(f) -> str | None:  # noqa: ANN001 - metrics.types.Flops
    """Why an MFU whose GEMMs reach their roofline is low, when that roofline is a slower dtype's: the GEMMs run in a
    precision whose peak is a fraction of the one MFU is measured against (fp32 GEMMs on an H100 under its bf16 peak).
    Then the dtype holds MFU down -- the mixed-precision checks' fix -- not "the step's other time" (issue #36:
    torch_fp32, GEMMs 96% of compute)."""
    if not (f.dtype and f.peak_dtype and f.dtype != f.peak_dtype and f.dtype_peak_flops and f.peak_flops):
        return None
    ratio = f.peak_flops / f.dtype_peak_flops
    if ratio < 1.5:
        return None
    # the dtype is what holds MFU down only where the step reaches its own peak as a healthy step reaches MFU's: under
    # that, even the dtype's own peak leaves MFU low, and the step's other time holds it down (h37-review13:
    # tiny_block_h100_infer's host-bound step at 2.7% of the tf32 peak read "the tf32 math holds MFU down" beside a
    # mixed-precision note saving ~0 ms; dlrm_a100_alltoall's 22.9% beside a 16-bit card whose GEMMs are 5.6% of the
    # kernel time, "under the 10.0% at which precision limits the step")
    if f.dtype_mfu is None or f.dtype_mfu < T("mfu_low.mfu"):
        return None
    at = f" ({pct(f.dtype_mfu)} of the {f.dtype} peak)" if f.dtype_mfu is not None else ""
    return (f"the GEMMs reach their {f.dtype} roofline{at}, and the {f.dtype} peak is {ratio:.0f}x under the "
            f"{f.peak_dtype} peak MFU is measured against: the {f.dtype} math holds MFU down (the mixed-precision "
            "checks weigh it)")


@rule(ID, "§1.2.3", "GEMMs run far below their roofline: MFU is low",
      thresholds=("mfu_low.warning", "mfu_low.critical", "mfu_low.mfu", "mfu_low.min_gemm_share",
                  "flops.low_roofline_share", "flops.min_coverage"), quiet=quiet, card="mfu")
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    f = m.flops
    if f.mfu is None or f.below_roofline_share is None or not ctx.step_ms or f.gemm_ms_per_step is None:
        return []
    if f.mfu > T("mfu_low.mfu") or f.gemm_ms_per_step / ctx.step_ms < T("mfu_low.min_gemm_share"):
        return []
    sev = grade(f.below_roofline_share, "mfu_low.warning", "mfu_low.critical")
    slow = _slow(f)
    if sev is None or not slow:
        return []
    low = T("flops.low_roofline_share")
    # the shapes' time is per GPU already; no shape beats its roofline, so the claim stays within their time above
    # their floor (the ``own-floor`` law reads it from the detail, h37-pool37)
    above = sum(x.above_floor_ms_per_step for x in slow)
    save = min(above, sum(x.ms_per_step * (1 - x.roofline_share / low) for x in slow))
    slow_ms = sum(x.ms_per_step for x in slow)
    names = "; ".join(f"{x.label} at {pct(x.roofline_share)}" for x in slow[:3])
    return [finding(
        ctx, ID, sev,
        f"MFU {pct(f.mfu)}: {pct(f.below_roofline_share)} of GEMM time runs at under {pct(low)} of its roofline "
        f"({ctx.part_of_step(slow_ms)}) -- the shapes are small or odd for the matrix units: "
        f"{names}." + _other_kernels(f, ctx.step_ms, ctx.per_step),
        metric=share_metric("gemm_below_roofline_share", "GEMM time far below its roofline", f.below_roofline_share,
                            "mfu_low.warning", severity=sev,
                            detail={"mfu": f.mfu, "flops_per_step": f.flops_per_step, "peak_flops": f.peak_flops,
                                    "above_floor_ms_per_step": above}),
        saving=saving(ctx, save, f"each slow GEMM shape reaches {pct(low)} of its roofline (well-shaped GEMMs reach "
                                 f"60-80%)", [("compute", "gemm_kernels", slow_ms)]),
        evidence=[table(f"GEMM shapes against their roofline (host-wide {ctx.per_step}; {ROOF_TIME})",
                        ["op and shapes", "precision", "calls/step", "ms/step", "TFLOP/s", "FLOP/byte",
                         "roofline TFLOP/s", "of roofline", "bound"],
                        [[x.label, x.precision, x.calls_per_step, x.ms_per_step, x.tflops_per_s, x.intensity,
                          x.attainable_tflops_per_s, x.roofline_share, x.bound] for x in f.top
                         if x.on_matrix_units])],
        actions=_fixes(ctx, slow, slow_ms),
    )]


def _other_kernels(f, step_ms: float, per: str = "per step") -> str:  # noqa: ANN001 - metrics.types.Flops
    """The other kernels the GEMM ops launched (autocast's casts, bias adds), named as what they are: GEMM time and
    rates above are the GEMM kernels' alone."""
    o = f.non_gemm_ms_per_step
    if not o or o < 0.02 * step_ms:
        return ""
    return (f" The same ops also launch {ms(o)} {per} of other kernels (dtype casts, bias adds, copies): "
            f"memory-bound work, not GEMM time, and not counted in these rates.")
