"""Q&A: a graph captured again in the steady run -- a recurring cost, not warm-up.

A captured graph (CUDA / HIP graphs; PyTorch's ``torch.compile`` with ``mode="reduce-overhead"`` or
``"max-autotune"``) is recorded once and replayed after: its capture is a one-time cost (``job.phase``).  A program
that records it again after it has replayed it pays the recording -- the framework's warm-up run, the capture, the
instantiation and the host code around them -- in its steady run: each new input shape, or (PyTorch's CUDAGraph
Trees) forward calls run with autograd on and no backward, whose pending backward keeps each call from starting a new
iteration.  The job stage keeps such recaptures out of the one-time costs (``job.phase.recaptures``), so the steps
holding them are analysed; this finding says what they cost and why.

Metric: the time per kept step the steps holding a recapture run over the median of the steps that replay
(``HostMetrics.recaptures``), of the step.  Saving: that time (the host work it is, on the GPU's idle).  Severity:
``graph_recaptured.warning`` / ``graph_recaptured.critical`` of the step.
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules.base import Ctx, finding, grade, ms, pct, rule, saving, share_metric

ID = "graph_recaptured"


@rule(ID, "Q&A", "The graph is captured again in the steady run, not replayed",
      thresholds=("graph_recaptured.warning", "graph_recaptured.critical"), waits=("host_compute",))
def check(m: HostMetrics) -> list[Finding]:
    r = m.recaptures
    ctx = Ctx(m)
    if r is None or not ctx.step_ms:
        return []
    held, kept, extra, capture_ms = r
    share = extra / ctx.step_ms
    sev = grade(share, "graph_recaptured.warning", "graph_recaptured.critical")
    if sev is None:
        return []
    per = extra * kept / held
    text = (f"{held} of the {kept} steps analysed capture their graph again after the program had already replayed "
            f"it (graph launches with no capture between them came first): each such step runs {ms(per)} over the "
            f"steps that replay it (of the {held} steps' {ms(per * held)}, {ms(capture_ms)} inside the captures "
            f"themselves, the rest the framework's recording around them: its eager run, the instantiation, its Python), {ms(extra)} per step averaged over all {kept} ({pct(share)} of the step). "
            f"A capture met again after the replays began is no warm-up: {ctx.fw.label('recapture_cause')}.")
    if m.job is not None and m.job.autograd_forwards:  # the trace shows a forward recorded for a backward never run
        text += (f" This capture shows a pending backward: {m.job.autograd_forwards:,} "
                 f"{ctx.fw.label('autograd_forward')} and no backward in the window.")
    return [finding(
        ctx, ID, sev, text,
        metric=share_metric("recapture_share", "Step time recording graphs again", share, "graph_recaptured.warning",
                            severity=sev, detail={"steps_recapturing": held, "steps": kept,
                                                  "recapture_ms_per_step": extra, "capture_ms": capture_ms}),
        saving=saving(ctx, extra, "every call replays the graph it recorded, as the steps without a recapture do",
                      [("host", "host_work", extra)]),
        actions=ctx.fw.fix(ID),
    )]
