"""Shared fusion arithmetic (§1.3): which element-wise chains a fusing compiler would turn into one kernel, and
what that saves.  Used by ``xla_not_used`` (no compiler in the capture) and ``eager_execution`` (ops dispatched
one by one where compiling the step also fuses them, as ``jax.jit`` does)."""

from __future__ import annotations

from dataclasses import dataclass

from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.metrics.types import ElementwiseChain, HostMetrics
from tb_gpu_advisor.rules.base import Ctx, short, table

#: How a fused chain's saving is estimated, in words (the saving's assumption); ``{elsewhere}``: who else may need a
#: chain's intermediate results.
ASSUMPTION = ("a chain of element-wise kernels fused into one takes about as long as its longest kernel (the fused "
              "kernel still moves the largest operand once); an upper bound when the chain's intermediate results are "
              "also needed elsewhere ({elsewhere}).  The launch gaps inside the chains are the launch-bound finding's "
              "time, not counted here")


def assumption(m: HostMetrics) -> str:
    """:data:`ASSUMPTION` for this job: a forward-only job (inference, serving) saves nothing for a backward pass."""
    forward_only = m.job is not None and m.job.kind.kind in ("inference", "serving")
    return ASSUMPTION.format(elsewhere="by another op" if forward_only else "by another op, or saved for a backward pass")


@dataclass
class ChainSaving:
    chains: list[ElementwiseChain]
    kernel_ms: float  # per step per GPU: the chains' kernel time
    gap_ms: float  # per step per GPU: GPU idle between their kernels (launch wait: owned by launch_bound)
    fused_ms: float  # per step per GPU: kernel time a fused chain no longer spends (kernel_ms - longest kernels)


def fusible_chains(m: HostMetrics) -> list[ElementwiseChain]:
    """Recurring chains of at least ``xla.min_chain_length`` element-wise kernels."""
    return [c for c in m.fusion.chains if c.length >= T("xla.min_chain_length") and c.occurrences > 0]


def chain_saving(m: HostMetrics, ctx: Ctx) -> ChainSaving | None:
    """Per step and GPU (chain time is summed over GPUs and steps), None without chains or steps."""
    chains = fusible_chains(m)
    if not chains or not ctx.steps:
        return None
    kern = m.per_step(sum(c.total_ms for c in chains))
    return ChainSaving(chains=chains, kernel_ms=kern, gap_ms=m.per_step(sum(c.gap_ms for c in chains)),
                       fused_ms=max(0.0, kern - m.per_step(sum(c.longest_ms for c in chains))))


def chain_table(cs: ChainSaving, ctx: Ctx, m: HostMetrics) -> object:
    """Evidence: the most frequent chains, with their kernels, occurrences, time and what fusing saves."""
    top = sorted(cs.chains, key=lambda c: -(c.occurrences * c.length))[:10]
    rows = [[" → ".join(short(x, 30) for x in c.names[:6]) + (" …" if len(c.names) > 6 else ""), c.length,
             c.occurrences, round(m.per_step(c.occurrences), 2), c.total_ms, c.gap_ms, max(0.0, c.total_ms - c.longest_ms)]
            for c in top]
    return table("Most frequent fusible kernel chains", ["chain", "kernels", "occurrences", "per step per GPU",
                                                         "kernel ms", "gap ms", "fusing saves kernel ms"], rows)
