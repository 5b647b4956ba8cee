"""§2 item 6: GPUs run the step one after another instead of concurrently.

Metric: ``multi_gpu.concurrency`` (overlap of the GPUs' busy windows; 1 =
fully parallel), never below the overlap the busy times force: GPUs busy
more than the step span (``multi_gpu.step_span_ms``: earliest to latest of
the GPUs' step windows) in total must overlap by the excess.  Saving: (sum of busy - max busy) × (1 - concurrency): the
serialised part of the work.  Never where every GPU is driven by a process of its own
(``multi_gpu.one_process_per_gpu``: the ranks of a DDP job), whose GPUs idle in turn only while a rank waits for
its peers -- and whose fix (one process per GPU) the job already has.
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules._multi import GPU_COLUMNS, active_gpus, gpu_table_rows, is_multi
from tb_gpu_advisor.rules.base import Ctx, finding, grade, ms, pct, rule, saving, step_windows, table, value_metric
from tb_gpu_advisor.rules.savings import idle_claims

ID = "sequential_gpus"


def concurrency(m) -> float | None:
    """``multi_gpu.concurrency``, raised to the pigeonhole bound: GPUs whose busy times add up to more than the
    step must overlap by at least the excess (guards against a mis-measured concurrency)."""
    c = m.multi_gpu.concurrency
    busy = [g.busy_ms_per_step for g in active_gpus(m) if g.busy_ms_per_step]
    # the wall span the GPUs' step windows cover (per-GPU windows may lie apart in time); older metrics: the step
    step = m.multi_gpu.step_span_ms or m.headline.avg_step_ms
    if c is None or len(busy) < 2 or not step:
        return c
    spread = sum(busy) - max(busy)
    bound = max(0.0, sum(busy) - step) / spread if spread > 0 else 1.0
    return max(c, min(1.0, bound))


def is_sequential(m) -> bool:
    """Whether this rule fires (launch_skew defers to it).  Never where each GPU has a process of its own (the ranks
    of a multi-process job): their GPUs idle in turn only while a rank waits for its peers, which the straggler and
    communication checks judge; the fix here (one process per GPU) is what such a job already does."""
    return (is_multi(m) and not m.multi_gpu.one_process_per_gpu
            and grade(concurrency(m), "sequential_gpus.warning", "sequential_gpus.critical") is not None)


@rule(ID, "§2 item 6", "GPUs run the step one after another",
      thresholds=("sequential_gpus.warning", "sequential_gpus.critical"))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    mg = m.multi_gpu
    conc = concurrency(m)
    if not is_sequential(m) or conc is None:
        return []
    sev = grade(conc, "sequential_gpus.warning", "sequential_gpus.critical")
    busy = [g.busy_ms_per_step for g in active_gpus(m) if g.busy_ms_per_step]
    serial = (sum(busy) - max(busy)) * (1.0 - conc) if busy else None
    claims = idle_claims(mg.peer_wait_ledger_ms)
    held = sum(v for _, _, v in claims)
    # what concurrency gives back of a GPU's step: its waits for the others inside it, as the ledger books them, never
    # more than the serialised work; none inside the steps (each GPU's steps lie apart in time) is wall time outside
    # every step, said in words and not counted as a saving of the step (issue #36: v100 bert claimed 14.9 ms of a
    # 20.6 ms step whose ledger holds 2.3 ms of host time)
    save = min(serial, held) if serial and held > 0 else None
    order = " → ".join(f"GPU{g}" for g in mg.first_gpu_order) or "n/a"
    span = mg.step_span_ms
    noun = ctx.step_noun  # "pass" where the capture is one unmarked pass (hunt70b: NCCL's demo on 4 V100s)
    outside = (f" Each GPU's {noun} lasts {ms(ctx.step_ms)}, but together they span {ms(span)}: running them "
               f"concurrently shortens the job's wall time, which no single GPU's {noun} shows."
               if save is None and span and ctx.step_ms and span > 1.5 * ctx.step_ms else "")
    return [finding(
        ctx, ID, sev,
        f"The {len(busy)} GPUs overlap only {pct(conc)} of their busy time (1 = fully parallel): they run "
        f"the {noun} in turn ({order}), which usually means a control dependency from one GPU to another.{outside}",
        metric=value_metric("gpu_concurrency", "GPU concurrency", conc, "share", pct(conc),
                            "sequential_gpus.warning", severity=sev, good_direction="higher"),
        saving=saving(ctx, save, f"the replicas run concurrently, so the {noun} takes the busiest GPU's time instead "
                                 f"of the sum", [(g, "sequential", v) for g, _, v in claims]),
        evidence=[table("Per GPU", GPU_COLUMNS, gpu_table_rows(m))],
        windows=step_windows(ctx, label="sequential GPUs", n=2),
        actions=ctx.fw.fix(ID), title=f"GPUs run the {noun} one after another",
    )]
