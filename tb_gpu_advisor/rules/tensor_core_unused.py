"""§1.2.3 Tensor Cores: Tensor-Core-eligible ops (MatMul, Conv, ...) whose kernels do not use them.

Metric: time of TC-eligible kernels that do not use Tensor Cores, as a share
of device compute time, on GPUs with Tensor Cores (compute capability
>= 7.0).  The cause is named: 32-bit kernels need mixed precision (see
``mixed_precision_off``), 16-bit ones fell back to a non-Tensor-Core kernel,
usually because of dims not multiples of 16 bytes (``misaligned_dims``).  A program's
own kernel named for the Tensor Cores (``gemm_tensorcore``, ``wmma_*``) is
counted by neither rule and named as left out: only its instructions could
say (``devices.matrix_unit_unknown_one``).
Saving: 32-bit part × (1 - 1/mixed_precision.speedup) + 16-bit part ×
(1 - 1/misaligned.tc_speedup).
"""

from __future__ import annotations

import re

from tb_gpu_advisor import devices
from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules._kernels import (alignment_multiple, alignment_words, compute_capability, dims_aligned,
                                           fp16_reason, fp32_cuda_core_speedup, gemm_speedup, kernel_mix, pad_line,
                                           per_step_ms, sixteen_bit_dtype, tensor_core_gpus)
from tb_gpu_advisor.rules.base import (Ctx, T, action, finding, grade, ms, n_of, pct, rule, saving, share_metric,
                                       short, table)

ID = "tensor_core_unused"


@rule(ID, "§1.2.3", "Matmul/conv kernels do not use Tensor Cores",
      thresholds=("tensor_core_unused.warning", "tensor_core_unused.critical",
                  "mixed_precision.speedup", "mixed_precision.speedup_sm80", "misaligned.tc_speedup"))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    yes, _no = tensor_core_gpus(m)
    k = kernel_mix(m)
    if not yes or k.compute_us <= 0 or not (k.no_tc_32 or k.no_tc_16):
        return []
    unused_us = k.eligible_no_tc_32_us + k.eligible_no_tc_16_us
    share = unused_us / k.compute_us
    sev = grade(share, "tensor_core_unused.warning", "tensor_core_unused.critical")
    if sev is None:
        return []
    t32 = per_step_ms(m, k.eligible_no_tc_32_us)
    t16 = per_step_ms(m, k.eligible_no_tc_16_us)
    t_ms = t32 + t16
    sp, sp16 = fp32_cuda_core_speedup(m), T("misaligned.tc_speedup")
    roof = gemm_speedup(m, "fp32")  # from the GPU's peaks and the GEMMs' rooflines where known (issue #20)
    sp = roof[0] if roof else sp
    bad = k.no_tc_32 + k.no_tc_16
    rows = [[short(s.name), s.op_name or "-", s.op_type, s.precision, s.count, s.total_us / 1000.0, s.avg_us]
            for s in sorted(bad, key=lambda s: -s.total_us)[:10]]
    # the GPUs the capture names and whose Tensor Cores are known: a bare "GPU:0" of an export without its device
    # table is not said to have any (h37-review8: "do not use the Tensor Cores of GPU:0, GPU:1")
    named = sorted({devices.said_name(g.name) for g in yes if g.name and devices.has_matrix_units(g.name, compute_capability(g))})
    whose = (f"the Tensor Cores of {', '.join(named)}" if named
             else "Tensor Cores (the capture does not say which GPU this is, nor whether it has them)")
    dtype = sixteen_bit_dtype(m)
    # the units' name as the vendor's users write it, asked (an AMD report read "Tensor-Core-eligible", which no
    # vendor's words rewrite; h37-vendor64)
    unit = ctx.vendor.TERMS["matrix_unit"].replace(" ", "-")
    chosen = _library_choice(k.no_tc_16, t16)
    if t32 >= t16:
        cause = f"they run in 32-bit: enable mixed precision ({dtype}) so they can use Tensor Cores"
    elif chosen:
        cause = (f"they are 16-bit with aligned dims (their ops' recorded sizes are multiples of "
                 f"{alignment_multiple(k.no_tc_16)}), yet {chosen} chose non-{unit} kernels for them: padding would "
                 f"change nothing")
    else:
        cause = (f"they are 16-bit but fell back to non-{unit} kernels, usually dims not aligned: "
                 f"{alignment_words(k.no_tc_16)}")
    # the 16-bit kernels' own dtypes; fp32 ones move to 16-bit first (8 elements of fp16/bf16 are 16 bytes)
    mult = alignment_multiple(k.no_tc_16)
    need = (alignment_words(k.no_tc_16) if k.no_tc_16
            else f"multiples of {mult} elements once they run in 16-bit ({dtype}): {devices.TC_ALIGN_BYTES} bytes")
    pad = action(f"Keep GEMM/conv dimensions (batch, units, channels, vocabulary) aligned so Tensor Core kernels are "
                 f"picked: {need}.", pad_line("units", mult))
    ampere = any(devices.has_tf32(g.name, compute_capability(g)) for g in yes)
    # fixes in the order they apply to this run: the one-line TF32 switch first for fp32 GEMMs on Ampere and newer,
    # padding first for 16-bit fallbacks, convolution layouts only where there are convolutions
    tf32 = ctx.fw.extra(f"{ID}:tf32") if ampere and t32 >= t16 else []
    conv = ctx.fw.extra(f"{ID}:conv") if _has_convolutions(m) else []
    main = ctx.fw.fix(f"{ID}:{dtype}", gpu_fp16=fp16_reason(m, ctx.vendor.TERMS))
    search = ctx.fw.extra(f"{ID}:search") if chosen and _has_convolutions(m) else []
    acts = (tf32 + main + conv + [pad] if t32 >= t16 else search + main + conv if chosen
            else [pad] + main + conv)
    return [finding(
        ctx, ID, sev,
        f"{pct(share)} of device compute time ({ms(t_ms)} {ctx.per_step}, {n_of(len(bad), 'kernel')}) is in "
        f"{unit}-eligible MatMul/Conv kernels that do not use {whose}: {cause}."
        + _unknown_note(k.tc_unknown),
        metric=share_metric("tc_eligible_unused_share", "TC-eligible time without Tensor Cores", share,
                            "tensor_core_unused.warning", severity=sev,
                            detail={"eligible_share": k.eligible_us / k.compute_us,
                                    "unused_32bit_ms_per_step": t32, "unused_16bit_ms_per_step": t16,
                                    "eligible_tc_share": (k.eligible_tc_us / k.eligible_us) if k.eligible_us else None}),
        saving=saving(ctx, t32 * (1 - 1 / sp) + t16 * (1 - 1 / sp16),
                      f"those kernels run {sp:.3g}x faster on Tensor Cores in 16 bit"
                      + (f" ({sp16:g}x for the 16-bit ones on {unit} kernels)" if t16 > 0 and chosen
                         else f" ({sp16:g}x for the 16-bit ones once aligned)" if t16 > 0 else "")
                      + (f"; {roof[1]}" if roof else ""),
                      [("compute", "tc_eligible_kernels", t32 * (1 - 1 / sp)),
                       ("compute", "tc_eligible_16bit_kernels", t16 * (1 - 1 / sp16))]),
        evidence=[table("TC-eligible kernels not using Tensor Cores ({kept}, all GPUs)", ["kernel", "op", "op type", "precision", "count",
                                                                      "total ms", "avg us"], rows)],
        actions=acts,
    )]


def _library_choice(rows: list, t16_ms: float) -> str:
    """Who chose the 16-bit kernels off the matrix units where most of their time has recorded dims all aligned
    (``_kernels.dims_aligned``): the convolution library for convolutions, the GEMM library for matmuls; "" where
    alignment may be the cause.  Why: a fallback with aligned dims is the library's choice, not the shapes' fault, and
    its fix is the library's search, never padding (h37-huntk66: an MI300X's MIOpen Winograd kernels for 512->128 and
    3x3 convolutions were told to pad channels of 64-2048)."""
    total = sum(s.step_us for s in rows)
    aligned = [s for s in rows if dims_aligned(s)]
    if t16_ms <= 0 or not total or sum(s.step_us for s in aligned) * 2 <= total:
        return ""
    convs = sum(s.step_us for s in aligned if _CONV.search(s.op_type or "") or _CONV.search(s.name[:200]))
    return "cuDNN" if convs * 2 > sum(s.step_us for s in aligned) else "the GEMM library"


def _unknown_note(rows: list) -> str:
    """What the finding leaves out: the program's own kernels named for the Tensor Cores, whose name is no proof
    either way (``devices.matrix_unit_claimed_one``), and compiled matmuls whose name gives no dtype
    (``frameworks.matrix_unit_unknown_one``: Triton's ``tl.dot`` kernels, Inductor's templates)."""
    claimed = [s for s in rows if devices.matrix_unit_claimed_one(s.name)]
    untyped = [s for s in rows if not devices.matrix_unit_claimed_one(s.name)]
    out = ""
    if claimed:
        out += (f" Not counted: {n_of(len(claimed), 'kernel')} named for the Tensor Cores ({_top(claimed)}), the "
                f"program's own: a name does not say which instructions a kernel runs.")
    if untyped:  # a compiler's matmul (Triton's tl.dot) whose name gives no dtype: 16-bit dots use the matrix units
        out += (f" Not counted: {n_of(len(untyped), 'compiled matmul kernel')} whose name gives no dtype "
                f"({_top(untyped)}): in 16 bits or fewer they run on the matrix units, in fp32 they may not.")
    return out


def _top(rows: list) -> str:
    return ", ".join(f"`{devices.short_kernel_name(s.name, 40)}`" for s in sorted(rows, key=lambda s: -s.total_us)[:3])


_CONV = re.compile(r"conv|fprop|dgrad|wgrad", re.I)


def _has_convolutions(m: HostMetrics) -> bool:
    """The run has convolution kernels (by their op or their cuDNN / MIOpen name): layout fixes apply to it."""
    return any(_CONV.search(s.op_type or "") or _CONV.search(s.name[:200]) for s in m.kernels if s.tc_eligible)
