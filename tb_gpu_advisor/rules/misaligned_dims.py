"""§1.2.3 low-precision GEMM/conv kernels that miss Tensor Cores: dimensions not multiples of 16 bytes.

Metric: time of 16-bit TC-eligible kernels that do NOT use Tensor Cores, as
a share of 16-bit TC-eligible time.  Tensor Core kernels need dims that are
multiples of 16 bytes: 8 elements of fp16/bf16, 16 of fp8/int8
(``devices.tc_align_elements``); a 16-bit GEMM on a non-Tensor-Core kernel is the
guide's "fell back to an inefficient implementation" case -- unless its recorded dims are all aligned
(``_kernels.dims_aligned``): then the library chose it for shapes the matrix units take, and padding is no fix
(``tensor_core_unused`` names that cause).  The words name the
dtypes the cited kernels ran, each with its own multiple.  When a kernel
row carries shapes (``dims`` / ``shape``) the offending dims are listed.
Saving: that time × (1 - 1/speedup).
"""

from __future__ import annotations

import re

from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules._kernels import (align_elements, alignment_multiple, alignment_words, dims_aligned, kernel_mix,
                                           pad_line, per_step_ms, tensor_core_gpus)
from tb_gpu_advisor.rules.base import (Ctx, T, action, finding, grade, ms, n_of, pct, rule, saving, share_metric,
                                       short, table)

ID = "misaligned_dims"


@rule(ID, "§1.2.3", "16-bit matmul/conv dims are not multiples of 16 bytes: Tensor Cores unused",
      thresholds=("misaligned_dims.warning", "misaligned_dims.critical", "misaligned.tc_speedup"))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    yes, _ = tensor_core_gpus(m)
    k = kernel_mix(m)
    sixteen_eligible = k.eligible_no_tc_16_us + sum(s.step_us for s in k.eligible_rows
                                                   if s.tensor_core and s.precision in ("fp16", "bf16", "int8", "fp8"))
    # a kernel whose recorded dims are all aligned fell back for another cause (``dims_aligned``): not this rule's
    odd = [s for s in k.no_tc_16 if not dims_aligned(s)]
    if not yes or sixteen_eligible <= 0 or not odd:
        return []
    odd_us = sum(s.step_us for s in odd)
    share = odd_us / sixteen_eligible
    sev = grade(share, "misaligned_dims.warning", "misaligned_dims.critical")
    if sev is None:
        return []
    t_ms = per_step_ms(m, odd_us)
    sp = T("misaligned.tc_speedup")
    rows = []
    for s in sorted(odd, key=lambda s: -s.total_us)[:10]:
        dims = getattr(s, "dims", None) or getattr(s, "shape", None) or ""
        rows.append([short(s.name), s.op_name or "-", s.op_type, s.precision, s.count, s.total_us / 1000.0, _odd_dims(dims, s.precision)])
    rule_words = alignment_words(odd)
    mult = alignment_multiple(odd)
    return [finding(
        ctx, ID, sev,
        f"{pct(share)} of 16-bit MatMul/Conv time ({ms(t_ms)} {ctx.per_step}, {n_of(len(odd), 'kernel')}) runs on "
        f"non-Tensor-Core kernels: {rule_words} for Tensor Cores.",
        metric=share_metric("misaligned_16bit_share", "16-bit GEMM/conv time without Tensor Cores", share,
                            "misaligned_dims.warning", severity=sev),
        saving=saving(ctx, t_ms * (1 - 1 / sp), f"the dims padded to multiples of {mult} so these kernels run {sp:g}x faster "
                                               f"on Tensor Cores", [("compute", "tc_eligible_16bit_kernels", t_ms)]),
        evidence=[table("16-bit TC-eligible kernels not using Tensor Cores ({kept}, all GPUs)",
                        ["kernel", "op", "op type", "precision", "count", "total ms", "dims not multiple of the dtype's alignment"], rows)],
        actions=[
            action(f"Pad the layer sizes (units, channels, vocabulary, sequence/batch dims): {rule_words}; "
                   f"{ctx.vendor.TERMS['conv_padding']}.",
                   f"{pad_line('units', mult)}      # Dense/Embedding/attention sizes\n{pad_line('vocab_size', mult)}"),
            action(f"Check the kernel stats: the op should map to {ctx.vendor.TERMS['tc_kernel_names']}."),
        ],
    )]


def _odd_dims(dims, precision: str) -> str:
    mult = align_elements(precision)
    nums = [int(x) for x in re.findall(r"\d+", str(dims))] if dims else []
    odd = sorted({n for n in nums if n > 1 and n % mult})
    return ", ".join(map(str, odd)) if odd else ("" if not dims else "none found")
