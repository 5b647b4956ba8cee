"""What the input wait is made of (issue #37 item 4): the input pipeline's own time, and the host time before each
step's first op that is not the pipeline's, named apart.

Where the capture records its input pipeline (PyTorch's DataLoader ``__next__``, TF's ``IteratorGetNext``), the
input wait is that pipeline's time alone; other host time before the step's first op (Python before the first
op, a logger) is reported here and not counted as input.  Where it records none, the host time before the first
op stands in for an untraced loader, as ``context._input_spans`` counts it -- if anything reaches the GPU from the
host (a host-to-device copy): a capture with none has no input to wait for, and that time is named apart too.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.metrics.context import HOST_INPUT_BIT, PS_PER_MS, Context
from tb_gpu_advisor.metrics.types import HostInput


def host_input(ctx: Context) -> HostInput:
    """Where this host's input wait comes from, and the host time before the first op that is not input."""
    n = ctx.steps.count
    if not n:
        return HostInput()
    pipeline = bool((ctx.host_step[ctx.role_rows(HOST_INPUT_BIT)] >= 0).any()) if len(ctx.h) else False
    pre = ctx.pre_op_spans
    pre_ms = float((pre[1] - pre[0]).astype(np.float64).sum()) / PS_PER_MS / n if pre is not None else 0.0
    untraced = ctx.input_spans is not None and bool(ctx.input_spans[0].size)
    source = "pipeline" if pipeline else ("before_first_op" if untraced else "")
    return HostInput(source=source, pre_op_ms_per_step=pre_ms)
