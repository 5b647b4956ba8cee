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
    rows = ctx.role_rows(HOST_INPUT_BIT) if len(ctx.h) else np.zeros(0, dtype=np.int64)
    rows = rows[ctx.host_step[rows] >= 0]
    pre = ctx.pre_op_spans
    pre_ms = float((pre[1] - pre[0]).astype(np.float64).sum()) / PS_PER_MS / n if pre is not None else 0.0
    untraced = ctx.input_spans is not None and bool(ctx.input_spans[0].size)
    source = "pipeline" if rows.size else ("before_first_op" if untraced else "")
    return HostInput(source=source, pre_op_ms_per_step=pre_ms, parallel=_parallel(ctx, rows))


def _parallel(ctx: Context, rows: np.ndarray) -> bool:
    """Every input event of the kept steps (``rows``) is of a pipeline that already makes batches in parallel: the
    fix for its wait is faster workers, not workers (a loop whose loader switches mode mid-capture is not)."""
    if not rows.size:
        return False
    names = ctx.h.names
    return all(ctx.fw.parallel_input(names[int(i)]) for i in np.unique(ctx.h.name[rows]))
