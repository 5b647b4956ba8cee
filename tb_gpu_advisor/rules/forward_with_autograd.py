"""Q&A: forward passes run with autograd on, and no backward ever runs -- ``torch.inference_mode()``.

A forward run with grad mode on and parameters that require grad builds autograd's graph and keeps every tensor its
backward would read; where the window holds no backward and no optimizer step, that work and memory serve nothing.
The memory snapshot side says so from the bytes a forward keeps (``rules._memory.graph_kept``); a Kineto trace says it
only where the framework records a call made solely with autograd on (``Framework.autograd_forward_event``: PyTorch's
``CompiledFunction``, AOTAutograd's compiled forward as an ``autograd.Function``) -- an eager forward records nothing
that tells grad mode on from ``no_grad``, so it is never told.  The job stage counts such calls in a window of
forward passes with no training event (``job.Job.autograd_forwards``).

No metric of time, no saving: what autograd costs per call is not in the trace (its bookkeeping runs inside the
calls, the kept tensors show in no memory event of their own).  Severity: info.
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules.base import Ctx, finding, rule

ID = "forward_with_autograd"


@rule(ID, "Q&A", "Forward passes run with autograd on, and no backward runs")
def check(m: HostMetrics) -> list[Finding]:
    job = m.job
    n = job.autograd_forwards if job is not None else 0
    if not n:
        return []
    ctx = Ctx(m)
    text = (f"The capture holds {n:,} {ctx.fw.label('autograd_forward')} and no backward pass or optimizer step: "
            f"each forward built autograd's graph and kept the tensors a backward would read, for a backward that "
            f"never ran in the window. Run forward-only calls without autograd; what that saves per call (host time, "
            f"memory held) the trace does not measure.")
    return [finding(ctx, ID, "info", text, actions=ctx.fw.fix(ID))]
