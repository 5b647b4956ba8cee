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

A training step runs each layer's attention twice: the forward's matmul -> softmax -> matmul, and the backward's
matmul (the probabilities' gradient) -> softmax backward -> matmul (the scores' gradient).  A run is the backward's
where its softmax kernel is the softmax's gradient (``devices.softmax_backward_one``), so the layers are counted
once, not twice (h37-review18's "2L times a step"); both runs are time a fused forward and backward do not spend.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor import devices, frameworks
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.metrics.context import PS_PER_MS, Context, Encloser, distinct_ids
from tb_gpu_advisor.metrics.types import AttentionPattern, UnfusedAttention

_OTHER, _GEMM, _SOFTMAX, _EW, _SOFTMAX_BWD = 0, 1, 2, 3, 4


def unfused_attention(ctx: Context, top_n: int = 6) -> UnfusedAttention:
    """Every matmul -> softmax -> matmul run on one stream inside a kept step, all GPUs (see the module)."""
    most = int(T("unfused_attention.max_between"))
    found: dict[tuple, list] = {}  # (first, softmax, second, between, backward) -> [occurrences, matmul ps, between
    # ps, firsts]
    for gi, g in enumerate(ctx.gpus):
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
        role[soft & ctx.by_name(devices.softmax_backward, d.names)[d.name[idx]]] = _SOFTMAX_BWD
        stream = d.stream[idx]
        for s in distinct_ids(stream[soft]):
            on = stream == s
            _runs_on_stream(g, gi, idx[on], role[on], most, found)
    if not found:
        return UnfusedAttention()
    shapes = _ScoreMatrix(ctx)
    pats = []
    for key, (n, mm_ps, bw_ps, firsts) in found.items():
        first, sm, second, between, backward = key
        label, score_bytes, bw = shapes.of(firsts)
        pats.append(AttentionPattern(first=first, softmax=sm, second=second, between=list(between), occurrences=n,
                                     matmul_ms=mm_ps / PS_PER_MS, between_ms=bw_ps / PS_PER_MS, shapes=label,
                                     score_bytes=score_bytes, bandwidth=bw, backward=backward,
                                     module=_module_of(ctx, *firsts[0])))
    pats.sort(key=lambda p: -(p.matmul_ms + p.between_ms))
    return UnfusedAttention(occurrences=sum(p.occurrences for p in pats), matmul_ms=sum(p.matmul_ms for p in pats),
                            between_ms=sum(p.between_ms for p in pats),
                            round_trip_ms=sum(p.round_trip_ms for p in pats),
                            backward_occurrences=sum(p.occurrences for p in pats if p.backward), patterns=pats[:top_n])


def _runs_on_stream(g, gi: int, sel: np.ndarray, role: np.ndarray, most: int, found: dict) -> None:  # noqa: ANN001 - GpuCtx
    """Add each softmax of one stream's kernels ``sel`` (by start) that sits between two matmuls of its step."""
    d = g.d
    step = g.step[sel]
    # each kernel's time inside the kept steps: a run's matmul and between times are parts of the step (its saving)
    start, end = d.start[sel].astype(np.int64), g.ends_in_steps(sel)
    used = np.zeros(sel.size, bool)  # a matmul is one run's, never two runs'
    for p in np.flatnonzero((role == _SOFTMAX) | (role == _SOFTMAX_BWD)).tolist():
        a = _matmul_near(role, step, p, -1, most)
        b = _matmul_near(role, step, p, +1, most)
        if a < 0 or b < 0 or used[a] or used[b]:
            continue
        used[a] = used[b] = True
        names = [devices.short_kernel_name(d.names[int(d.name[sel[k]])], 60) for k in range(a, b + 1)]
        key = (names[0], names[p - a], names[-1], tuple(names[1:-1]), bool(role[p] == _SOFTMAX_BWD))
        mm = int(end[a] - start[a]) + int(end[b] - start[b])
        bw = int((end[a + 1:b] - start[a + 1:b]).sum())
        v = found.setdefault(key, [0, 0, 0, []])
        v[0] += 1
        v[1] += mm
        v[2] += bw
        v[3].append((gi, int(sel[a])))


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


def _module_of(ctx: Context, gi: int, ev: int) -> str:
    """The class of the innermost module whose call launched device event ``ev`` of GPU ``gi`` (PyTorch
    ``with_modules``' ``nn.Module: T5Attention_0`` span around the launch, on the launching thread), "" where the
    trace records none.  Why: the fix is the model's own -- Hugging Face's T5 attention has no SDPA switch to turn
    on, and the report must not promise one (the run's framework names the class: ``Framework.module_class``, and
    words the fix per class)."""
    sp, g = ctx.trace.spans, ctx.gpus[gi]
    if sp is None or not len(sp) or g.launch is None or int(g.launch[ev]) < 0:
        return ""
    at = int(g.launch[ev])
    t, line = int(ctx.h.start[at]), int(ctx.h.line[at])
    on = np.flatnonzero((sp.line == line) & (sp.start <= t) & (sp.end >= t))
    names = ctx.h.names
    mods = [(int(sp.start[i]), c) for i in on.tolist() if (c := ctx.fw.module_class(names[int(sp.name[i])]))]
    return max(mods)[1] if mods else ""


class _ScoreMatrix:
    """The score matrix each run's first matmul writes, where the trace records its op's shapes (PyTorch's ``Input
    Dims``: the ``flop_ops`` row of the op enclosing the kernel's launch): its result's bytes (``FlopOps.out_bytes``),
    and the GPU's peak memory bandwidth (``devices.memory_bandwidth``)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        fo = ctx.trace.flop_ops
        self.fo = fo if fo is not None and fo.source == "trace shapes" and fo.out_bytes is not None and len(ctx.h) else None
        if self.fo is not None:
            mask = np.zeros(len(ctx.h), bool)
            mask[self.fo.host_idx] = True
            self.enc = Encloser(ctx.h, mask)
            self.row_of_host = {int(h): r for r, h in enumerate(self.fo.host_idx.tolist())}

    def of(self, firsts: list[tuple[int, int]]) -> tuple[str, float, float]:
        """(the first op's label, the score matrices' bytes over every run, the bandwidth, bytes/s) of the runs whose
        first matmuls are the device events ``firsts`` ((GPU position, event)); ("", 0, 0) where any run's op has no
        shapes or its GPU's bandwidth is unknown: a part of the runs is no measure of them all."""
        if self.fo is None:
            return "", 0.0, 0.0
        label, total, bws = "", 0.0, set()
        for gi in sorted({gi for gi, _ in firsts}):
            g = self.ctx.gpus[gi]
            ev = np.array([e for k, e in firsts if k == gi], np.int64)
            launch = g.launch[ev].astype(np.int64, copy=False) if g.launch is not None else np.full(ev.size, -1)
            host = self.enc.find(launch[launch >= 0]) if (launch >= 0).all() else None
            if host is None or (host < 0).any():
                return label, 0.0, 0.0
            rows = [self.row_of_host.get(int(h), -1) for h in host.tolist()]
            if min(rows) < 0:
                return label, 0.0, 0.0
            label = label or self.fo.label[rows[0]]
            total += float(self.fo.out_bytes[rows].sum())
            info = g.d.info
            peak = devices.memory_bandwidth(info.name, info.compute_capability, measured=info.memory_bandwidth,
                                            sm_count=info.sm_count, clock_hz=info.clock_hz,
                                            memory_bytes=info.memory_bytes)
            if peak is None:
                return label, 0.0, 0.0
            bws.add(peak.value)
        return label, total, min(bws) if bws else 0.0
