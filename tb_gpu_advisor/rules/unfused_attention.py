"""§1.2.3 Fusing ops: attention computed op by op (a matmul, a softmax and a matmul) instead of one fused kernel.

Metric: the recurring runs of matmul -> softmax (with the scale, mask, dropout and copy kernels beside it) ->
matmul on one stream (``metrics/attention.py``): the softmax's family by its kernel's name, the matmuls on each
side of it, the run recurring at least ``unfused_attention.min_per_step`` times a step per GPU (once a layer; a
classifier head's matmul -> softmax runs once a step and is no finding).  In training each layer runs twice, its
forward and its backward (matmul -> softmax backward -> matmul): the layers are the forward's runs, and both runs'
kernels are saved, since a fused backward too keeps the scores and their gradient on chip.  Saving: the kernel time between the two
matmuls -- the softmax and its element-wise kernels, each reading and writing the whole score matrix, which a fused
attention kernel does not run -- plus, where the trace records the first matmul's shapes and the GPU's bandwidth is
known, the score matrix written and read back once each at peak bandwidth (capped at the matmuls' time): a lower
bound, never more than the runs' own time.  Severity by the saving's share of the step (``unfused_attention.*``).
The fix is the framework's fused attention (PyTorch ``F.scaled_dot_product_attention`` / Hugging Face
``attn_implementation="sdpa"``, JAX ``jax.nn.dot_product_attention``, Keras ``MultiHeadAttention`` with
``flash_attention``), which picks the GPU's own fused kernel; where the trace names the module class that ran it, the framework's fix
for that class (``rule:<class>``), since a model's own attention may have no switch to the fused op.
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules.base import Ctx, T, finding, grade, ms, n_of, pct, rule, saving, share_metric, short, table

ID = "unfused_attention"

#: What the saving assumes, in words.
_ASSUMPTION = ("a fused attention kernel runs none of the kernels between the two matmuls (the softmax, scale, "
               "mask, dropout and copies, each of which reads and writes the whole score matrix) and takes no longer "
               "than the two matmuls")
_ROUND_TRIP = ("; and its matmuls no longer write the score matrix to memory and read it back: its bytes (the first "
               "matmul's result, from the trace's shapes) twice at the GPU's peak memory bandwidth, at most the "
               "matmuls' own time.  A lower bound: the kernels' own time above peak bandwidth is not counted")
_NO_ROUND_TRIP = ("; a lower bound, since it also no longer writes the score matrix to memory and reads it back in "
                  "the matmuls (the trace records no shapes, or no bandwidth, to size it)")


@rule(ID, "§1.2.3", "Attention computed op by op: matmul, softmax, matmul instead of one fused kernel",
      thresholds=("unfused_attention.min_per_step", "unfused_attention.max_between", "unfused_attention.info",
                  "unfused_attention.warning", "unfused_attention.critical"))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    a = m.unfused_attention
    if not a.occurrences or not a.patterns or ctx.step_ms is None or not ctx.steps:
        return []
    per_step = m.per_step(float(a.occurrences))
    backward = m.per_step(float(a.backward_occurrences))
    layers = max(per_step - backward, backward)  # a layer runs once forward and, training, once backward
    if layers < T("unfused_attention.min_per_step"):
        return []
    between = m.per_step(a.between_ms)
    matmul = m.per_step(a.matmul_ms)
    trip = min(m.per_step(a.round_trip_ms), matmul)
    assumption = _ASSUMPTION + (_ROUND_TRIP if trip > 0 else _NO_ROUND_TRIP)
    sv = saving(ctx, between + trip, assumption,
                [("compute", "non_matmul_kernels", between), ("compute", "gemm_kernels", trip)],
                paced=False)  # the fused kernel removes these kernels' launches with them
    share = ctx.share(sv.ms_per_step if sv is not None else None) or 0.0
    sev = (grade(share, "unfused_attention.warning", "unfused_attention.critical")
           or ("info" if share >= T("unfused_attention.info") else None))
    if sev is None:
        return []
    run_share = ctx.share(between + matmul) or 0.0
    top = a.patterns[0]
    others = len(top.between) - 1
    beside = f", with {n_of(others, 'element-wise kernel')}," if others > 0 else ""
    shapes = f" (the first matmul: {top.shapes})" if top.shapes else ""
    score = (f"; writing the score matrix and reading it back costs at least {ms(trip)} more at the GPU's peak memory "
             f"bandwidth" if trip > 0 else "")
    text = (f"Attention runs op by op {_how_often(per_step, backward, ctx.per_step)}: a matmul writes the score "
            f"matrix{' (in the backward, its gradient)' if backward else ''} to memory, {short(top.softmax)}{beside} "
            f"reads and writes it, and a second matmul reads it back{shapes}. These runs "
            f"take {ms(between + matmul)} of the {ms(ctx.step_ms)} {ctx.unit if ctx.one_step else 'step'}, "
            f"{ms(between)} of it in the kernels between the matmuls, which a fused attention kernel does not run"
            f"{score}: fused, attention saves at least {ms(sv.ms_per_step)} ({pct(share)})"
            f"{_BOTH_WAYS if backward else ''}.")
    rows = [[short(p.first, 40), " → ".join(short(x, 30) for x in p.between), short(p.second, 40), p.occurrences,
             round(p.matmul_ms, 3), round(p.between_ms, 3), p.shapes or "-",
             round(p.score_bytes / p.occurrences / 2**20, 1) if p.score_bytes else "-"] for p in a.patterns]
    return [finding(
        ctx, ID, sev, text,
        metric=share_metric("unfused_attention_saving_share", "{Step} share of the kernels fused attention does not run",
                            share, "unfused_attention.warning", severity=sev,
                            detail={"runs_per_step": per_step, "layers_per_step": layers,
                                    "backward_runs_per_step": backward, "between_ms_per_step": between,
                                    "matmul_ms_per_step": matmul, "score_round_trip_ms_per_step": trip,
                                    "run_share": run_share}),
        saving=sv,
        evidence=[table("Attention computed op by op ({kept}, all GPUs)",
                        ["first matmul", "kernels between", "second matmul", "runs", "matmul ms", "between ms",
                         "shapes (first matmul)", "score matrix MiB"], rows)],
        actions=ctx.fw.fix(f"{ID}:{top.module}" if top.module else ID, module=top.module),
    )]


#: What a training step's saving holds: the backward's runs too.
_BOTH_WAYS = ("; the backward's runs are in it, since a fused attention's backward also recomputes the scores on "
              "chip and never writes them, or their gradient, to memory")


def _how_often(runs: float, backward: float, per_step: str) -> str:
    """How often attention runs op by op: a count of runs where the step runs forward only; where it trains, the
    layers once with both passes named (each layer's attention runs once forward and once backward)."""
    if not backward:
        return f"{runs:.3g} times {per_step}"
    forward = runs - backward
    if forward and abs(forward - backward) < 0.5:
        return f"in {forward:.3g} layers {per_step}, forward and backward ({runs:.3g} runs)"
    return f"{runs:.3g} times {per_step}: {forward:.3g} forward and {backward:.3g} backward"
