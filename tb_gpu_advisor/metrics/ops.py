"""TF op placement (host vs device), eager ops, host-only ops, loss scaling."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor import devices, frameworks
from tb_gpu_advisor.metrics.context import PS_PER_MS, PS_PER_US, Context
from tb_gpu_advisor.metrics.kernels import shared_in_steps
from tb_gpu_advisor.metrics.types import EagerOps, HostOps, LossScaling, OpStat
from tb_gpu_advisor.model.columns import coverage, union_intervals, unique_inverse

_LOSS = re.compile(r"loss_?scal", re.I)
_DYN = re.compile(r"cond|is_?finite|IsFinite|All:|Switch|Merge|StatelessIf|:If\b|while|update", re.I)


@dataclass
class KeptOps:
    """The host TF op events inside kept steps, shared by :func:`placement` and :func:`op_stats`."""

    mask: np.ndarray  # bool per host event
    dur: np.ndarray  # float64 ps of those events, in event order


def kept_ops(ctx: Context) -> KeptOps:
    """Mask and durations of the kept op events (computed with at most two event-sized temporaries alive)."""
    h = ctx.h
    m = ctx.host_op & (ctx.host_step >= 0)
    dur = h.end[m]
    dur -= h.start[m]
    return KeptOps(m, dur.astype(np.float64))


def placement(ctx: Context, kept: KeptOps | None = None) -> dict:
    """Kept TF ops on device vs on the host, by count and by host time; ops that only run on the host
    (``Framework.host_only_op_type``: tf.data iterators, ``RemoteCall``, collectives) are no placement to judge, on
    either side."""
    kept = kept if kept is not None else kept_ops(ctx)
    host_only = ctx.fw.host_only_op_type
    placeable = ~ctx.h.name_mask(lambda n: host_only(frameworks.op_type(n)))[kept.mask]
    on_dev = ctx.op_on_device[kept.mask][placeable]
    dur = kept.dur[placeable]
    n = int(on_dev.size)
    dev_count = int(np.count_nonzero(on_dev))
    host_dur = float(dur[~on_dev].sum())
    tot = float(dur.sum())
    return dict(
        device_count=dev_count, host_count=n - dev_count,
        share_by_count=((n - dev_count) / n) if n else None,
        share_by_time=(host_dur / tot) if tot > 0 else None,
        host_ms=host_dur / PS_PER_MS,
    )


def op_stats(ctx: Context, top_n: int = 50, kept: KeptOps | None = None) -> list[OpStat]:
    """Per op name: host occurrences/time and kernel totals (kernels linked by correlation or grouping)."""
    h = ctx.h
    kept = kept if kept is not None else kept_ops(ctx)
    m = kept.mask
    acc: dict[str, dict] = {}
    if m.any():
        # per name id: bincount over the whole (small, dense) name range, then the names that occur; each bin
        # sums its events in event order, as a bincount over np.unique's inverse would
        nm = h.name[m]
        n_names = len(h.names)
        cnt = np.bincount(nm, minlength=n_names)
        u = np.flatnonzero(cnt)
        dur = np.bincount(nm, weights=kept.dur, minlength=n_names)[u]
        dev = np.bincount(nm[ctx.op_on_device[m]], minlength=n_names)[u]
        eag = np.bincount(nm[h.is_eager[m] == 1], minlength=n_names)[u]
        del nm
        cnt = cnt[u]
        # the columns as Python lists once (not a numpy scalar per name and column: thousands of op names)
        for k, c_j, d_j, dev_j, eag_j in zip(u.tolist(), cnt.tolist(), dur.tolist(), dev.tolist(), eag.tolist()):
            full = h.names[k]
            acc[full] = dict(occ=c_j, host=d_j / PS_PER_MS, dev=dev_j > 0, eager=eag_j > 0, kc=0, kt=0.0, tc=0.0, prec={})
    del m, kept
    for g in ctx.gpus:
        d = g.d
        km = (g.step >= 0) & ((d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)) & (d.op_idx >= 0)
        if not km.any():
            continue
        dur = (d.end[km] - d.start[km]).astype(np.float64) / PS_PER_US
        u, inv = unique_inverse(d.op_idx[km])
        cnt = np.bincount(inv)
        tot = np.bincount(inv, weights=dur)
        tct = np.bincount(inv, weights=dur * g.tc[km])
        wall = np.bincount(inv, weights=shared_in_steps(g)[km], minlength=u.size)  # each microsecond once
        # an op whose kernels an eager call launched (un-jitted jnp: one compiled program per call) ran eagerly, as
        # the eager-execution finding counts it (issue #27 item 7: the table said no op was eager beside it)
        eag = np.bincount(inv[g.eager[km]], minlength=u.size) > 0 if g.eager is not None else None  # counted, not summed
        u_list = u.tolist()
        eag_list = eag.tolist() if eag is not None else [False] * len(u_list)
        for k, e_j, c_j, t_j, tc_j, w_j in zip(u_list, eag_list, cnt.tolist(), tot.tolist(), tct.tolist(), wall.tolist()):
            r = acc.setdefault(d.op_text[k], dict(occ=0, host=0.0, dev=True, eager=False, kc=0, kt=0.0, tc=0.0, prec={}))
            r["dev"] = True
            if e_j:
                r["eager"] = True
            r["kc"] += c_j; r["kt"] += t_j; r["tc"] += tc_j
            r["kw"] = r.get("kw", 0.0) + w_j
        pu = g.name_prec[km]
        for p in np.flatnonzero(np.bincount(pu)).tolist():  # the precision codes present (small non-negative ints)
            sel = pu == p
            pt = np.bincount(inv[sel], weights=dur[sel], minlength=u.size)
            pt_list = pt.tolist()
            for j in np.flatnonzero(pt).tolist():
                r = acc[d.op_text[u_list[j]]]
                r["prec"][p] = r["prec"].get(p, 0.0) + pt_list[j]
    _host_records(ctx, acc)
    out = []
    for full, r in acc.items():
        typ = frameworks.op_type(full)
        prec = max(r["prec"].items(), key=lambda kv: kv[1])[0] if r["prec"] else None
        out.append(OpStat(
            op_name=frameworks.op_name(full), op_type=typ, on_device=bool(r["dev"]), occurrences=r["occ"], host_self_ms=r["host"],
            kernel_count=r["kc"], kernel_total_us=r["kt"], tc_eligible=frameworks.tc_eligible_type(typ),
            tensor_core_share=(r["tc"] / r["kt"]) if r["kt"] > 0 else None, precision=devices.PRECISIONS[prec] if prec is not None else "",
            is_eager=bool(r["eager"]), kernel_wall_us=r.get("kw", 0.0),
        ))
    out.sort(key=lambda o: -(o.kernel_total_us / 1000.0 + (o.host_self_ms or 0.0)))
    return out[:top_n] if top_n else out


def _host_records(ctx: Context, acc: dict[str, dict]) -> None:
    """Occurrences and host time of the ops known from their kernels only, from the host events of the same name in
    kept steps (a PyTorch ``aten::mm`` CPU op launches the ``aten::mm`` kernels; the framework's host-op predicate is
    TensorFlow's alone).  An op no host event names (an XLA HLO op, run inside a compiled program) has no host
    record: its occurrences and host time are unknown (None), not 0 (issue #36: every row of PyTorch, JAX and Nsight
    op tables read "occurrences 0, host ms 0")."""
    missing = [full for full, r in acc.items() if r["occ"] == 0]
    if not missing:
        return
    h = ctx.h
    ids = {n: i for i, n in enumerate(h.names)}
    want = {ids[name]: full for full in missing if (name := frameworks.op_name(full)) in ids}
    if want and len(h):
        m = (ctx.host_step >= 0) & np.isin(h.name, np.fromiter(want, dtype=np.int64, count=len(want)))
        nm = h.name[m]
        dur = (h.end[m] - h.start[m]).astype(np.float64)
        cnt = np.bincount(nm, minlength=len(h.names))
        tot = np.bincount(nm, weights=dur, minlength=len(h.names))
        for k, full in want.items():
            if cnt[k]:
                acc[full]["occ"], acc[full]["host"] = int(cnt[k]), float(tot[k]) / PS_PER_MS
    for full in missing:
        if acc[full]["occ"] == 0:
            acc[full]["occ"], acc[full]["host"] = None, None


def host_ops(ctx: Context, ops: list[OpStat], place: dict) -> HostOps:
    """Host-placed ops per kept step and rank (``Context.per_step``): their count, and their host time -- a sum of
    each op's own duration, not a union: two replicas' ops on two threads, or two processes' in one export, are each
    rank's (v100_bert's two replicas read "849 TF ops per step ... taking 2.31 ms" where each ran 424.5 in 1.15 ms)."""
    top = sorted([o for o in ops if not o.on_device and not ctx.fw.host_only_op_type(o.op_type)],
                 key=lambda o: -(o.host_self_ms or 0.0))[:10]
    return HostOps(count_per_step=ctx.per_step(place["host_count"]), time_ms_per_step=ctx.per_step(place["host_ms"]),
                   share_by_count=place["share_by_count"], share_by_time=place["share_by_time"], top=top)


def eager(ctx: Context) -> EagerOps:
    h = ctx.h
    m = (ctx.host_step >= 0) & ctx.eager_ops
    top: list[str] = []
    if m.any():
        u, c = np.unique(h.name[m], return_counts=True)
        top = [h.names[int(u[i])] for i in np.argsort(-c)[:10]]
    # the host's time in eager ops, each instant once: an eager op nested in another, or running on a second thread,
    # is not more of the step (issue #36: corpus_tf/eager read "3.56 ms of host time in each 1.85 ms step")
    s, e = union_intervals(h.start[m].astype(np.int64, copy=False), h.end[m].astype(np.int64, copy=False))
    # each op once (``Context.eager_ops_counted``), one rank's per step as every count (``Context.per_step``); the time
    # the host's union of the ops and their calls, each instant once
    counted = int(np.count_nonzero(m & ctx.eager_ops_counted))
    eager_ps = float((e - s).sum())
    side, share = _eager_op_share(ctx, m, eager_ps) if counted else ("host", 0.0)
    return EagerOps(count=counted, per_step=ctx.per_step(counted),
                    time_ms_per_step=ctx.per_step(eager_ps / PS_PER_MS, shared=False), top=top,
                    op_share=share, op_side=side)


def _eager_op_share(ctx: Context, eager: np.ndarray, eager_ps: float) -> tuple[str, float]:
    """(side, share): the eager ops' share of the op time on the host (the union of the kept steps' ops and dispatch
    calls) or on the device (the kept steps' device work that ops launched), whichever is larger.

    Why op time and not the step: the stock overview's eager check (``kEagerReportThresholdInPercent``, 10%) asks how
    much of the program runs outside a compiled graph -- the guide's "pure eager mode" -- and that is a share of the
    ops' time.  Of the step it mixes in whatever else the step holds: an un-jitted JAX loop of 17 one-kernel calls a
    step beside 28 ms of untraced host work read 2% eager, every op of it eager (walk seed 42889).  What compiling
    saves is the saving's, which bounds the severity (``severity.*_min_saving``)."""
    h = ctx.h
    ops = ctx.host_op | ctx.dispatch_calls | eager
    if ctx.trace.pipeline_ops is not None:
        # the stock measure's op time holds every TF op the host ran, tf.data's own functions' among them (they are
        # input work, not the step's host-placed ops): without them a Colab Keras batch whose only other ops were the
        # TensorBoard callback's eager summary ops read 84% eager (h37-huntxla63, a K80 session)
        ops = ops.copy()
        ops[ctx.trace.pipeline_ops] = True
    ops &= ctx.host_step >= 0
    s, e = union_intervals(h.start[ops].astype(np.int64, copy=False), h.end[ops].astype(np.int64, copy=False))
    total = float((e - s).sum())
    host = min(1.0, eager_ps / total) if total > 0 else 0.0
    dev_all = dev_eager = 0.0
    for g in ctx.active:
        if g.eager is None:
            continue
        sel = (g.step >= 0) & (g.launch >= 0)
        dur = (g.d.end[sel] - g.d.start[sel]).astype(np.float64)
        dev_all += float(dur.sum())
        dev_eager += float(dur[g.eager[sel]].sum())
    device = dev_eager / dev_all if dev_all > 0 else 0.0
    return ("device", device) if device > host else ("host", host)


def loss_scaling(ctx: Context) -> LossScaling:
    h = ctx.h
    m = h.name_mask(lambda n: bool(_LOSS.search(n))) & (ctx.host_step >= 0) if len(h) else np.zeros(0, bool)
    if not m.any():
        return LossScaling(False, False, 0.0, 0.0, None, [])
    names = sorted({h.names[int(i)] for i in np.unique(h.name[m])})
    dynamic = any(_DYN.search(x) for x in names)
    ls, le = union_intervals(h.start[m], h.end[m])
    # GPU-idle part: loss-scaling time not covered by any activity of the active GPUs (averaged)
    idle = []
    for g in ctx.active:
        us, ue = g.d.busy()
        pts = np.unique(np.concatenate([ls, le, np.clip(us, ls.min(), le.max()), np.clip(ue, ls.min(), le.max())]))
        if pts.size < 2:
            continue
        mid = (pts[:-1] + pts[1:]) / 2.0
        seg = np.diff(pts).astype(float)
        sel = coverage(mid, ls, le) & ~coverage(mid, us, ue)
        idle.append(float(seg[sel].sum()) / PS_PER_MS)
    # the ops one rank's per step (``Context.per_step``); their time the host's union; the idle the mean active GPU's
    return LossScaling(True, dynamic, ctx.per_step(int(m.sum())), ctx.per_step(float((le - ls).sum()) / PS_PER_MS, shared=False),
                       ctx.per_step(sum(idle) / len(idle), shared=False) if idle else None, names[:20],
                       op_count=int(m.sum()))
