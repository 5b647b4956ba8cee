"""§1.3 Mixed precision that pays for its casts: kernels that only convert dtypes take a large share of the step.

Under autocast every fp32 weight is cast to the 16-bit dtype again on each call (``aten::linear`` launches the cast
before its GEMM), and a model that keeps some layers in fp32 converts activations back and forth.  The casts are
memory-bound copies: on an eager forward pass they can take longer than the GEMMs they feed, and no GEMM-time or
precision number shows them.  Kernels count as casts by the framework's naming of its dtype conversions
(``Framework.cast_kernels``: PyTorch's ``bfloat16_copy_kernel``, XLA's ``convert`` fusions) or the op that launched
them (``Framework.cast_ops``: ``aten::_to_copy``, TF ``Cast``), but never where the kernel's HLO shows math beside
its converts (an XLA fusion is named after its root: a bf16 sine computed in f32 is a ``loop_convert_fusion``).
Saving: the cast time, an upper bound (weights kept in the 16-bit dtype, activations staying in it between ops); the
assumption says so.
"""

from __future__ import annotations

import re

from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules._kernels import fp16_reason, per_step_ms, sixteen_bit_dtype
from tb_gpu_advisor.rules.base import Ctx, count, finding, ms, of_window, pct, rule, saving, share_metric, short, table

ID = "dtype_casts"
#: the title, of the window the casts' share is of: "of the step" registered (docs, MCP), the host's own window in a
#: finding ("of the pass" on a capture read as one pass, ``Ctx.window_words``; h37-words24)
_TITLE = "Dtype casts take a large share of the {step}"


def cast_rows(m: HostMetrics, ctx: Ctx) -> list:
    """The kernel rows that only convert dtypes, by the framework's naming or the op that launched them -- unless
    the kernel's own program (XLA's HLO, ``KernelStat.hlo_cast``) shows it computes: a fusion is named after its
    last instruction, and bf16 math done in f32 ends in a convert (``loop_convert_fusion`` of a sine)."""
    rx = re.compile("|".join(ctx.fw.cast_kernels)) if ctx.fw.cast_kernels else None
    ops = set(ctx.fw.cast_ops)
    return [s for s in m.kernels if not s.collective and not s.tensor_core and s.hlo_cast is not False
            and ((rx is not None and rx.search(s.name)) or (s.op_type in ops))]


@rule(ID, "§1.3", of_window(_TITLE),
      thresholds=("dtype_casts.warning", "dtype_casts.critical"))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    if ctx.step_ms is None:
        return []
    rows = cast_rows(m, ctx)
    cast_ms = per_step_ms(m, sum(s.step_us for s in rows))  # a part of the step: the casts' time inside it
    graded = ctx.graded(cast_ms, "dtype_casts.warning", "dtype_casts.critical")
    if graded is None:
        return []
    share, sev = graded
    top = sorted(rows, key=lambda s: -s.total_us)[:10]
    gemm = m.flops.gemm_ms_per_step
    than = f", against {ms(gemm)} of GEMM kernels" if gemm else ""
    return [finding(
        ctx, ID, sev,
        f"Kernels that only convert dtypes take {ctx.part_of_step(cast_ms)} ({pct(share)}{than}): "
        f"{count(sum(s.count for s in rows))} casts in the kept steps, memory-bound copies that no GEMM or "
        f"precision number shows -- {ctx.fw.label('cast_cause')}.",
        title=ctx.window_words(_TITLE),
        metric=share_metric("cast_share", "{Step} time in dtype casts", share, "dtype_casts.warning", severity=sev,
                            detail={"cast_ms_per_step": cast_ms, "gemm_ms_per_step": gemm}),
        saving=saving(ctx, cast_ms, "no cast is left: the weights are kept in the 16-bit dtype and activations stay "
                                    "in it between ops (an upper bound)", [("compute", "non_matmul_kernels", cast_ms)],
                      paced=False),  # a cast that is gone takes its launch with it
        evidence=[table("Dtype casts ({kept}, all GPUs)", ["kernel", "op", "count", "total ms", "avg us"],
                        [[short(s.name), s.op_name or "-", s.count, s.total_us / 1000.0, s.avg_us] for s in top])],
        actions=ctx.fw.fix(f"{ID}:{sixteen_bit_dtype(m)}", gpu_fp16=fp16_reason(m, ctx.vendor.TERMS)),  # the 16-bit dtype this GPU runs (never bf16 on a V100)
    )]
