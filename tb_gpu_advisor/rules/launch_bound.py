"""§1.2.2 Small GPU kernels and host kernel-launch delay.

Metric: ``headline.launch_wait_share`` -- the share of the step the GPU is
idle waiting for the host to launch the next kernel (stock overview
"kernel launch" column; 0.0 there for GPU captures, so measured here).
Evidence is the guide's own shape: kernels shorter than the 20-40 us
launch latency, with counts, totals and average durations ("126,224 Mul,
2.77 s, ~21.9 us each").  Saving: the launch wait minus what the same
kernels would still cost at ~1 us each in a fused graph.
"""

from __future__ import annotations

from . import _jax
from .base import (Ctx, T, action, count, finding, for_framework, grade, kernels_per_step, ms, pct, rule, saving, share_metric,
                   short, step_windows, table)

ID = "launch_bound"
_BIGGER_KERNELS = action("Make each kernel do more work: concatenate small tensors, vectorize loops over scalars, "
                         "or raise the batch size.")


@rule(ID, "§1.2.2", "Launch-bound: many small kernels, the GPU waits for the host to launch them",
      thresholds=("launch_bound.warning", "launch_bound.critical", "launch.small_kernel_us", "launch.fused_us_per_kernel"))
def check(m) -> list:
    ctx = Ctx(m)
    share = ctx.step_share(m.headline.launch_wait_share, m.breakdown.launch_wait)
    sev = grade(share, "launch_bound.warning", "launch_bound.critical")
    if sev is None:
        return []
    wait_ms = share * ctx.step_ms if ctx.step_ms else None
    sk = m.small_kernels
    kps = kernels_per_step(m, ctx) or 0.0
    small_ps = sk.per_step or 0.0
    residual = small_ps * T("launch.fused_us_per_kernel") / 1000.0
    save_ms = max(0.0, (wait_ms or 0.0) - residual)

    top = sk.top[:10]
    rows = [[short(o.name), o.op_type, o.count, o.total_ms, o.avg_us] for o in top]
    example = ""
    if top:
        o = top[0]
        example = (f" Top offender: {count(o.count)} × {o.op_type or short(o.name, 40)} taking {ms(o.total_ms)} in total, "
                   f"~{o.avg_us:.1f} us each — about the 20–40 us launch latency itself.")
    small_share = sk.share_of_kernels
    return [finding(
        ctx, ID, sev,
        f"The GPU is idle waiting for kernel launches {pct(share)} of each {ms(ctx.step_ms)} step ({ms(wait_ms)}; stock "
        f"'kernel launch' level >=3% moderate / >=15% high); {count(round(small_ps))} of {count(round(kps))} kernels per "
        f"step ({pct(small_share)}) run shorter than {sk.threshold_us:.0f} us.{example}",
        metric=share_metric("launch_wait_share", "Idle waiting for kernel launch", share, "launch_bound.warning",
                            severity=sev, detail={"launch_wait_ms": wait_ms, "kernels_per_step": kps,
                                                  "small_kernels_per_step": small_ps,
                                                  "small_kernel_share": small_share,
                                                  "small_kernel_threshold_us": sk.threshold_us}),
        saving=saving(ctx, save_ms, f"launch wait reduced to the {T('launch.fused_us_per_kernel'):g} us/kernel of a "
                                    f"fused graph ({count(round(small_ps))} small kernels per step)"),
        evidence=[table(f"Kernels shorter than {sk.threshold_us:.0f} us (launch latency 20–40 us), by total time",
                        ["kernel", "op type", "count", "total ms", "avg us"], rows)],
        windows=step_windows(ctx, key=lambda s: s.breakdown.launch_wait, label="launch wait"),
        actions=[_BIGGER_KERNELS] + for_framework(m, [
            action("Make sure the step runs as a graph, not op by op in eager mode.",
                   "@tf.function\ndef train_step(x, y):\n    ..."),
            action("Fuse the small ops with XLA.",
                   "@tf.function(jit_compile=True)\ndef train_step(x, y):\n    ...\n"
                   "# Keras: model.compile(..., jit_compile=True)"),
        ], [
            action("jit the whole training step (forward, backward and optimizer update) as one function, so XLA "
                   "fuses across it; many small jitted functions or un-jitted jnp calls each launch their own kernels.",
                   "@jax.jit\ndef train_step(state, batch):\n    ...  # grads, optimizer update, metrics: all inside"),
            _jax.SCAN_STEPS,
        ]),
    )]
