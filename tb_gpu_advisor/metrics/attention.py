"""Attention computed op by op: a matmul, a softmax and a matmul back to back on one stream, recurring in a step.

Eager attention (``softmax(Q @ K^T * scale + mask) @ V`` written as three ops) runs a batched matmul that writes the
``[batch x heads, N_q, N_k]`` score matrix to memory, a softmax kernel that reads it and writes the probabilities
(after element-wise kernels for the scale, the mask's add, dropout, a layout copy), and a second matmul that reads
them.  A fused attention kernel (FlashAttention, cuDNN's, ``F.scaled_dot_product_attention``'s backends) keeps each
tile of the scores on chip: it runs none of the kernels between the two matmuls and never writes the matrix.

Evidence, not names alone: the softmax kernel's family (``devices.softmax_one``: ATen's, cuDNN's, MIOpen's, a
compiler's fusion named for it; never log-softmax), a matmul kernel (``devices.gemm_kernel_one``) on each side of
it on the same stream in the same step with at most ``unfused_attention.max_between`` element-wise kernels
(``frameworks.elementwise_one``) between each and the softmax -- a router's softmax followed by a top-k, or a
classifier head's softmax followed by the loss, is no such run -- and the run recurring
(``unfused_attention.min_per_step``, judged by the rule): a model's attention runs once a layer.  Where the trace
records the first matmul's shapes (PyTorch's ``Input Dims``), its op and shapes are kept as the pattern's evidence.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices, frameworks
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.metrics.context import PS_PER_MS, Context, distinct_ids, enclosing
from tb_gpu_advisor.metrics.types import AttentionPattern, UnfusedAttention

_OTHER, _GEMM, _SOFTMAX, _EW = 0, 1, 2, 3


def unfused_attention(ctx: Context, top_n: int = 6) -> UnfusedAttention:
    """Every matmul -> softmax -> matmul run on one stream inside a kept step, all GPUs (see the module)."""
    most = int(T("unfused_attention.max_between"))
    found: dict[tuple, list] = {}  # (first, softmax, second, between) -> [occurrences, matmul ps, between ps, an event]
    for g in ctx.gpus:
        d = g.d
        m, _dur = g.kernels_in_steps()
        if not m.any():
            continue
        sm_name = ctx.by_name(devices.softmax, d.names)
        idx = np.flatnonzero(m)
        soft = sm_name[d.name[idx]]
        if not soft.any():
            continue
        role = np.full(idx.size, _OTHER, np.int8)
        role[ctx.by_name(frameworks.elementwise, d.names)[d.name[idx]]] = _EW
        role[ctx.by_name(devices.gemm_kernel, d.names)[d.name[idx]]] = _GEMM
        role[soft] = _SOFTMAX
        stream = d.stream[idx]
        for s in distinct_ids(stream[soft]):
            sel = idx[stream == s]
            _runs_on_stream(g, sel, role[stream == s], most, found)
    top = sorted(found.items(), key=lambda kv: -(kv[1][1] + kv[1][2]))
    pats = []
    for key, (n, mm_ps, bw_ps, where) in top[:top_n]:
        first, sm, second, between = key
        pats.append(AttentionPattern(first=first, softmax=sm, second=second, between=list(between), occurrences=n,
                                     matmul_ms=mm_ps / PS_PER_MS, between_ms=bw_ps / PS_PER_MS,
                                     shapes=_shapes(ctx, *where)))
    return UnfusedAttention(occurrences=sum(v[0] for v in found.values()),
                            matmul_ms=sum(v[1] for v in found.values()) / PS_PER_MS,
                            between_ms=sum(v[2] for v in found.values()) / PS_PER_MS, patterns=pats)


def _runs_on_stream(g, sel: np.ndarray, role: np.ndarray, most: int, found: dict) -> None:  # noqa: ANN001 - GpuCtx
    """Add each softmax of one stream's kernels ``sel`` (by start) that sits between two matmuls of its step."""
    d = g.d
    step = g.step[sel]
    start, end = d.start[sel], d.end[sel]
    used = np.zeros(sel.size, bool)  # a matmul is one run's, never two runs'
    for p in np.flatnonzero(role == _SOFTMAX).tolist():
        a = _matmul_near(role, step, p, -1, most)
        b = _matmul_near(role, step, p, +1, most)
        if a < 0 or b < 0 or used[a] or used[b]:
            continue
        used[a] = used[b] = True
        names = [devices.short_kernel_name(d.names[int(d.name[sel[k]])], 60) for k in range(a, b + 1)]
        key = (names[0], names[p - a], names[-1], tuple(names[1:-1]))
        mm = int(end[a] - start[a]) + int(end[b] - start[b])
        bw = int((end[a + 1:b] - start[a + 1:b]).sum())
        v = found.setdefault(key, [0, 0, 0, (g, int(sel[a]))])
        v[0] += 1
        v[1] += mm
        v[2] += bw


def _matmul_near(role: np.ndarray, step: np.ndarray, p: int, way: int, most: int) -> int:
    """The matmul before (``way`` -1) or after (+1) position ``p`` with only element-wise kernels, at most ``most``,
    between, in ``p``'s step; -1 where there is none."""
    j, seen = p + way, 0
    while 0 <= j < role.size and step[j] == step[p]:
        if role[j] == _GEMM:
            return j
        if role[j] != _EW or seen >= most:
            return -1
        seen += 1
        j += way
    return -1


def _shapes(ctx: Context, g, event: int) -> str:  # noqa: ANN001 - GpuCtx
    """The op and shapes of the matmul that launched device event ``event`` (the trace's ``Input Dims``: the
    ``flop_ops`` row of the op enclosing its launch), "" where the trace records none."""
    fo = ctx.trace.flop_ops
    if fo is None or fo.source != "trace shapes" or g.launch is None or not len(ctx.h):
        return ""
    launch = int(g.launch[event])
    if launch < 0:
        return ""
    mask = np.zeros(len(ctx.h), bool)
    mask[fo.host_idx] = True
    op = int(enclosing(ctx.h, mask, np.array([launch], np.int64))[0])
    if op < 0:
        return ""
    rows = np.flatnonzero(fo.host_idx == op)
    return fo.label[int(rows[0])] if rows.size else ""
